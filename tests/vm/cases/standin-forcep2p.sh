# SPDX-License-Identifier: GPL-2.0
# Stand-in driver, AD102 pair with registry keys only (no shim):
# ForceP2P=0x11 turns the PCIe caps OK, but the object is a mailbox one on
# hardware without a mailbox, and BAR1 P2P still fails on the stubs.
. /cases/lib.sh

for v in 575.64.05 580.159.04 595.45.04; do
	echo "== $v ForceP2P=0x11"
	run insmod /lib/standin/$v/nvidia.ko NVreg_RegistryDwords="ForceP2P=0x11"
	st=$(nvflow state)
	expect_eq "$v p2p_override" "$(kv gpu0.p2p_override "$st")" 0x11
	out=$(nvflow caps 0 1)
	expect_eq "$v read" "$(kv read "$out")" OK
	expect_eq "$v write" "$(kv write "$out")" OK
	expect_eq "$v atomics disabled by 0x11" "$(kv atomics "$out")" NOT_SUPPORTED
	expect_eq "$v connectivity" "$(kv connectivity "$out")" pcie
	out=$(nvflow create 0 1) || fail "$v create: $out"
	expect_eq "$v type" "$(kv type "$out")" pcie
	expect_eq "$v mailbox broken" "$(kv mailbox_broken "$out")" 1
	out=$(nvflow map 0 0x1000 0x1000 rm) || fail "$v map: $out"
	expect_eq "$v map aperture" "$(kv aperture "$out")" PEER
	expect_eq "$v map mailbox_broken" "$(kv mailbox_broken "$out")" 1
	expect_eq "$v map pte" "$(kv pte "$out")" 0x000000000000010b
	run nvflow unmap "$(kv mapping "$out")" >/dev/null
	run nvflow destroy 0 >/dev/null
	out=$(nvflow create 0 1 --type pcie_bar1); rc=$?
	expect_eq "$v forced bar1 rc" "$rc" 1
	expect_eq "$v forced bar1" "$(kv status_name "$out")" NV_ERR_NOT_SUPPORTED
	run rmmod nvidia

	echo "== $v ForceP2P=0x11;RMPcieP2PType=1: the BAR1 HAL stub says no"
	run insmod /lib/standin/$v/nvidia.ko NVreg_RegistryDwords="ForceP2P=0x11;RMPcieP2PType=1"
	expect_eq "$v static bar1" "$(kv gpu0.static_bar1 "$(nvflow state)")" \
		"$(case $v in 575*) echo 0 ;; *) echo 1 ;; esac)"
	expect_eq "$v connectivity" "$(kv connectivity "$(nvflow caps 0 1)")" pcie
	run rmmod nvidia
done

echo "== 565: ForceP2P=0x11;RMForceP2PType=2 reports BAR1 (override before the HAL check)"
run insmod /lib/standin/565.57.01/nvidia.ko NVreg_RegistryDwords="ForceP2P=0x11;RMForceP2PType=2"
st=$(nvflow state)
expect_eq "565 static bar1 (ONLY_GPU)" "$(kv gpu0.static_bar1 "$st")" 1
out=$(nvflow caps 0 1)
expect_eq "565 connectivity" "$(kv connectivity "$out")" pcie_bar1
out=$(nvflow create 0 1); rc=$?
expect_eq "565 create rc" "$rc" 1
expect_eq "565 create (GP100 has no BAR1 branch)" "$(kv status "$out")" 0x56
klog_mark
run rmmod nvidia
