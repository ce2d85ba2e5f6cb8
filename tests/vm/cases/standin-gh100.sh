# SPDX-License-Identifier: GPL-2.0
# Stand-in driver, a GH100 pair (80G VRAM, 128G BAR1): BAR1 P2P where each
# version gives it (with its registry keys), the UVM aperture per
# generation, native NVLink where nvlink= says so.
. /cases/lib.sh
G='GH100@0000:01:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:02:00.0,vram=80G,bar1=0x22000000000/128G'

# version, registry that asks for BAR1 P2P, expected UVM aperture
for spec in "565.57.01 RMForceP2PType=2 PEER" \
	    "570.148.08 RMForceP2PType=2 PEER" \
	    "575.64.05 RMPcieP2PType=1;RMForceStaticBar1=2 PEER" \
	    "580.159.04 RMPcieP2PType=1 SYS_NONCOH" \
	    "595.45.04 RMPcieP2PType=1 SYS_NONCOH"; do
	set -- $spec
	v=$1 reg=$2 uvm=$3
	echo "== $v stock: PCIe mailbox P2P (datacenter GPU)"
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	out=$(nvflow caps 0 1)
	expect_eq "$v stock connectivity" "$(kv connectivity "$out")" pcie
	out=$(nvflow create 0 1) || fail "$v stock create: $out"
	expect_eq "$v stock type" "$(kv type "$out")" pcie
	expect_eq "$v mailbox works on Hopper" "$(kv mailbox_broken "$out")" 0
	run nvflow destroy 0 >/dev/null
	# A forced BAR1 object needs static BAR1 on both GPUs: off by default
	# before 580; 595 also wants RMPcieP2PType=1 on Hopper.
	out=$(nvflow create 0 1 --type pcie_bar1)
	case $v in 580*) want=0x0 ;; *) want=0x56 ;; esac
	expect_eq "$v stock forced bar1" "$(kv status "$out")" "$want"
	[ "$want" = 0x0 ] && run nvflow destroy "$(kv object "$out")" >/dev/null
	run rmmod nvidia

	echo "== $v with $reg: BAR1 P2P"
	run insmod /lib/standin/$v/nvidia.ko gpus="$G" NVreg_RegistryDwords="$reg"
	out=$(nvflow caps 0 1)
	expect_eq "$v caps connectivity" "$(kv connectivity "$out")" pcie_bar1
	out=$(nvflow create 0 1) || fail "$v create: $out"
	expect_eq "$v type" "$(kv type "$out")" pcie_bar1
	expect_eq "$v l2p dma" "$(kv bar1_dma_l2p "$out")" 0x22000000000
	st=$(nvflow state)
	expect_eq "$v refcount 0->1" "$(kv gpu0.bar1_peer_refcount.1 "$st")" 1
	expect_eq "$v iova gpu0" "$(kv gpu0.iova_mappings "$st")" 1
	expect_eq "$v iova gpu1" "$(kv gpu1.iova_mappings "$st")" 1
	out=$(nvflow map 0 0x200000 0x200000 rm) || fail "$v rm map: $out"
	expect_eq "$v rm aperture" "$(kv aperture "$out")" SYS_NONCOH
	expect_eq "$v rm field" "$(kv field "$out")" sys
	expect_eq "$v rm addr" "$(kv addr "$out")" 0x22000200000
	expect_eq "$v rm pte" "$(kv pte "$out")" 0x000002200020000f
	m_rm=$(kv mapping "$out")
	out=$(nvflow map 0 0x200000 0x200000 uvm) || fail "$v uvm map: $out"
	expect_eq "$v uvm aperture" "$(kv aperture "$out")" "$uvm"
	m_uvm=$(kv mapping "$out")
	run nvflow unmap "$m_rm" >/dev/null
	run nvflow unmap "$m_uvm" >/dev/null
	run nvflow destroy 0 >/dev/null
	st=$(nvflow state)
	expect_eq "$v iova after destroy" "$(kv gpu0.iova_mappings "$st")" 0
	expect_eq "$v refcount after destroy" "$(kv gpu0.bar1_peer_refcount.1 "$st")" ""
	run rmmod nvidia
done

echo "== 595: RMPcieP2PType=2 (AUTO) no longer enough on Hopper"
run insmod /lib/standin/595.45.04/nvidia.ko gpus="$G" NVreg_RegistryDwords="RMPcieP2PType=2"
expect_eq "595 auto connectivity" "$(kv connectivity "$(nvflow caps 0 1)")" pcie
run rmmod nvidia
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G" NVreg_RegistryDwords="RMPcieP2PType=2"
expect_eq "580 auto connectivity" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
run rmmod nvidia

echo "== NVLink"
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G" nvlink=0-1 NVreg_RegistryDwords="RMPcieP2PType=1"
out=$(nvflow caps 0 1)
expect_eq "nvlink connectivity" "$(kv connectivity "$out")" nvlink
expect_eq "nvlink atomics" "$(kv atomics "$out")" OK
out=$(nvflow create 0 1) || fail "nvlink create: $out"
expect_eq "nvlink type" "$(kv type "$out")" nvlink
out=$(nvflow map 0 0x10000 0x10000 rm) || fail "nvlink map: $out"
expect_eq "nvlink aperture" "$(kv aperture "$out")" PEER
expect_eq "nvlink field" "$(kv field "$out")" peer
expect_eq "nvlink peer" "$(kv peer "$out")" 0
out=$(nvflow map 0 0x10000 0x10000 uvm) || fail "nvlink uvm map: $out"
expect_eq "nvlink uvm aperture" "$(kv aperture "$out")" PEER
expect_eq "nvlink no iova" "$(kv gpu0.iova_mappings "$(nvflow state)")" 0
run rmmod nvidia
