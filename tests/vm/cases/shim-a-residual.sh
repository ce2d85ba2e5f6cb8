# SPDX-License-Identifier: GPL-2.0
# Gen A1 (565, 570) in the residual state (issue 21, item 4).  ForceP2P
# makes these drivers report PCIE_BAR1 for a pair with static BAR1 on both
# GPUs before any BAR1 HAL check; with the routing hook gone nothing can
# create that mapping, so CUDA would see "can access peer" and then fail to
# enable it.  The residual guard gives every forced pair the stock answer.
# Before the fix it answered pcie_bar1 read OK.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'

for v in 565.57.01 570.148.08; do
	echo "== $v"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	st=$(nvflow state)
	expect_eq "$v GPU0 static BAR1" "$(kv gpu0.static_bar1 "$st")" 1
	expect_eq "$v GPU1 static BAR1" "$(kv gpu1.static_bar1 "$st")" 1
	expect_eq "$v armed: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	run p2pctl disable
	expect_match "$v residual" "$(p2pctl status)" 'state: +residual'
	out=$(nvflow caps 0 1)
	expect_eq "$v residual: stock connectivity" "$(kv connectivity "$out")" unknown
	expect_eq "$v residual: read" "$(kv read "$out")" NOT_SUPPORTED
	expect_eq "$v residual: write" "$(kv write "$out")" NOT_SUPPORTED
	out=$(nvflow create 0 1 --type pcie_bar1 2>&1)
	expect_match "$v residual: create answered" "$(kv status "$out")" '^0x[0-9a-f]+$'
	expect_no_match "$v residual: no BAR1 pair can be made" "$(kv status "$out")" '^0x0$'
	echo "== $v enable again: BAR1 P2P back"
	klog_mark
	run p2pctl enable
	# Both GPUs keep p2p-shim's ForceP2P across the hand-over (issue 41,
	# item 4): the log says so, not that they keep the stock settings.
	expect_match "$v re-armed: the log names the GPUs that keep ForceP2P" "$(klog_since)" \
		'GPUs 0x3 keep the ForceP2P they read while p2p-shim was armed before'
	expect_eq "$v re-armed: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	run rmmod nvidia
	run rmmod p2p_shim
done
