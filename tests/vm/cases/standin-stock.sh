# SPDX-License-Identifier: GPL-2.0
# vm-tags: every-kernel
# Stand-in driver, stock behaviour of every emulated version with its
# default GPUs (two AD102, 24G VRAM, 32G BAR1): version reporting, no P2P,
# a forced BAR1 P2P object fails on the stubs, static BAR1 per generation.
. /cases/lib.sh

for v in 550.163.01 560.35.03 565.57.01 570.148.08 575.64.05 580.159.04 595.45.04 999.1; do
	echo "== $v"
	run insmod /lib/standin/$v/nvidia.ko
	expect_eq "$v modinfo version" "$(cat /sys/module/nvidia/version)" "$v"
	ver=$(head -n 1 /proc/driver/nvidia/version)
	expect_match "$v procfs version" "$ver" \
		"^NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  $v  Release Build  \(.*@.*\)"
	expect_match "$v gcc line" "$(sed -n 2p /proc/driver/nvidia/version)" '^GCC version:  [a-z]'

	out=$(nvflow caps 0 1); rc=$?
	expect_eq "$v caps rc" "$rc" 0
	expect_eq "$v caps p2p" "$(kv p2p "$out")" NO
	expect_eq "$v caps read" "$(kv read "$out")" GPU_NOT_SUPPORTED
	expect_eq "$v caps connectivity" "$(kv connectivity "$out")" unknown

	out=$(nvflow create 0 1); rc=$?
	expect_eq "$v create rc" "$rc" 1
	expect_eq "$v create status" "$(kv status_name "$out")" NV_ERR_NOT_SUPPORTED

	out=$(nvflow create 0 1 --type pcie_bar1); rc=$?
	expect_eq "$v forced bar1 rc" "$rc" 1
	expect_eq "$v forced bar1 status" "$(kv status "$out")" 0x56

	# Static BAR1: 550-570 only with RMForceP2PType=BAR1P2P, 575 off by
	# default, 580+ automatic when BAR1 holds VRAM.
	case $v in 58*|59*|999*) want=1 ;; *) want=0 ;; esac
	st=$(nvflow state)
	expect_eq "$v static_bar1" "$(kv gpu0.static_bar1 "$st")" "$want"
	expect_eq "$v chip" "$(kv gpu1.chip "$st")" AD102
	expect_eq "$v live objects" "$(kv gpu0.live_objects "$st")" 0
	run rmmod nvidia
done
