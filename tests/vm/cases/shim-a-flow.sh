# SPDX-License-Identifier: GPL-2.0
# vm-tags: every-kernel
# Gen A (565, 570, 575): an AD102 pair gets BAR1 P2P end to end, and UVM
# external mappings of the peer's memory (which these drivers encode with
# the PEER aperture) come out SYS_NONCOH, in the sysmem address field, at
# the peer's BAR1 DMA base + offset, for several offsets and page sizes,
# and volatile (uncached in the mapping GPU's L2, as the driver makes PEER
# mappings): the peer's memory must not be cached on the other GPU.
# A build whose aperture choice is inlined (fault-inline) keeps the stock
# PTE and status says so.
. /cases/lib.sh
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'

for v in 565.57.01 570.148.08 575.64.05; do
	echo "== $v"
	klog_mark
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	st=$(p2pctl status)
	case $v in 575*) want=gen-a2 ;; *) want=gen-a1 ;; esac
	expect_match "$v armed with $want" "$st" "state: +armed.*profile: +$want"

	out=$(nvflow caps 0 1)
	expect_eq "$v caps" "$(kv connectivity "$out")" pcie_bar1
	out=$(nvflow create 0 1) || fail "$v create: $out"
	expect_eq "$v object type" "$(kv type "$out")" pcie_bar1
	expect_eq "$v no mailbox" "$(kv mailbox_broken "$out")" 0
	obj=$(kv object "$out")
	base=$(( 0x6000000000 + $(kv gpu1.static_bar1_offset "$(nvflow state)") ))

	maps=
	for spec in "0x0 0x1000" "0x1000 0x1000" "0x200000 0x200000" "0x7fe00000 0x200000" "0x40000000 0x1000"; do
		set -- $spec
		out=$(nvflow map "$obj" $1 $2 uvm) || fail "$v uvm map $spec: $out"
		maps="$maps $(kv mapping "$out")"
		expect_eq "$v uvm aperture @$1/$2" "$(kv aperture "$out")" SYS_NONCOH
		expect_eq "$v uvm field @$1/$2" "$(kv field "$out")" sys
		expect_eq "$v uvm addr @$1/$2" "$(kv addr "$out")" "$(printf 0x%x $((base + $1)))"
		expect_eq "$v pte aperture bits @$1/$2" "$(kv pte_aperture "$out")" 3
		expect_eq "$v pte sys address @$1/$2" "$(kv pte_addr_sys "$out")" "$(printf 0x%x $((base + $1)))"
		expect_eq "$v pte volatile @$1/$2" "$(kv pte_volatile "$out")" 1
	done
	out=$(nvflow map "$obj" 0x200000 0x200000 rm) || fail "$v rm map: $out"
	expect_eq "$v rm aperture" "$(kv aperture "$out")" SYS_NONCOH
	maps="$maps $(kv mapping "$out")"

	expect_match "$v UVM hooks fired" "$(p2pctl status)" 'kgmmuEncodePhysAddrs_IMPL +arg +installed +[1-9]'
	for m in $maps; do run nvflow unmap "$m" >/dev/null; done
	run nvflow destroy "$obj" >/dev/null
	run p2pctl disable
	run rmmod nvidia
	run rmmod p2p_shim
	log=$(klog_since)
	expect_no_match "$v no left-over mappings" "$log" 'left-over'
done

echo "== fault-inline (570.148.08 with the aperture choice inlined in the PTE build)"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/fault-inline/nvidia.ko gpus="$G"
out=$(nvflow create 0 1) || fail "fault-inline create: $out"
obj=$(kv object "$out")
out=$(nvflow map "$obj" 0x1000 0x1000 uvm) || fail "fault-inline uvm map: $out"
expect_eq "fault-inline: stock aperture" "$(kv aperture "$out")" PEER
st=$(p2pctl status)
echo "$st"
expect_match "fault-inline: status names the bypass" "$st" \
	'nvGpuOpsBuildExternalAllocPtes .*1 call\(s\) left stock; the last: bypassed the aperture hook'
run nvflow unmap "$(kv mapping "$out")" >/dev/null
run nvflow destroy "$obj" >/dev/null
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
