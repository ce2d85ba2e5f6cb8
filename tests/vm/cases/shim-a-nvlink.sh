# SPDX-License-Identifier: GPL-2.0
# NVLink-bridged GA102 pairs (RTX 3090 with a bridge) on gen-a1 (565, 570).
# RMForceP2PType other than DEFAULT/NVLink on the first GPU of a query
# makes the driver's NVLink caps check refuse before it looks at the links
# (p2p_caps.c _gpumgrGetP2PCapsStatusOverNvLink, every tag from 550 to 595),
# and 565/570 need that same per-GPU field at BAR1P2P for the BAR1 caps
# and, with the default RMForceStaticBar1, for static BAR1.  So with the
# shim's registry defaults an NVLink pair reports PCIe BAR1 (what README
# and doctor say), and no hook can choose per pair.  The remedy doctor
# gives: RMForceP2PType=0 per device for the NVLink GPUs, which the shim
# respects (the user's key wins): the bridged pair keeps NVLink, the
# PCIe-only pair keeps BAR1 P2P, and a mixed pair is refused cleanly (no
# static BAR1 on the unforced GPU: the caps guard, never the mailbox).
. /cases/lib.sh
G='GA102@0000:01:00.0;GA102@0000:02:00.0;GA102@0000:03:00.0;GA102@0000:04:00.0'
PERDEV='pci=0000:01:00.0;RMForceP2PType=0;pci=0000:02:00.0;RMForceP2PType=0'

for v in 565.57.01 570.148.08; do
	echo "== $v stock"
	run insmod /lib/standin/$v/nvidia.ko gpus="$G" nvlink=0-1
	expect_eq "$v stock 0-1" "$(kv connectivity "$(nvflow caps 0 1)")" nvlink
	expect_eq "$v stock 2-3" "$(kv p2p "$(nvflow caps 2 3)")" NO
	run rmmod nvidia

	echo "== $v shim defaults"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$G" nvlink=0-1
	expect_eq "$v defaults: forced type" "$(kv gpu0.force_p2p_type "$(nvflow state)")" 2
	expect_eq "$v defaults: 0-1 loses NVLink" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	expect_eq "$v defaults: 2-3" "$(kv connectivity "$(nvflow caps 2 3)")" pcie_bar1
	run rmmod nvidia

	echo "== $v shim, RMForceP2PType=0 for the NVLink GPUs"
	run insmod /lib/standin/$v/nvidia.ko gpus="$G" nvlink=0-1 \
		NVreg_RegistryDwordsPerDevice="$PERDEV"
	st=$(nvflow state)
	expect_eq "$v GPU0 type is the user's" "$(kv gpu0.force_p2p_type "$st")" 0
	expect_eq "$v GPU2 type is the shim's" "$(kv gpu2.force_p2p_type "$st")" 2
	expect_eq "$v GPU0 no static BAR1" "$(kv gpu0.static_bar1 "$st")" 0
	expect_eq "$v GPU2 static BAR1" "$(kv gpu2.static_bar1 "$st")" 1
	expect_eq "$v 0-1 keeps NVLink" "$(kv connectivity "$(nvflow caps 0 1)")" nvlink
	out=$(nvflow create 0 1) || fail "$v NVLink create: $out"
	expect_eq "$v NVLink object" "$(kv type "$out")" nvlink
	run nvflow destroy "$(kv object "$out")" >/dev/null
	expect_eq "$v 2-3 BAR1 P2P" "$(kv connectivity "$(nvflow caps 2 3)")" pcie_bar1
	for p in "0 2" "1 3" "2 1"; do
		out=$(nvflow caps $p)
		expect_eq "$v $p refused" "$(kv p2p "$out")" NO
		expect_eq "$v $p no mailbox" "$(kv connectivity "$out")" unknown
	done
	run p2pctl disable
	run rmmod nvidia
	run rmmod p2p_shim
done
