# SPDX-License-Identifier: GPL-2.0
# Gen A on chips whose BAR1 P2P HAL slots are the driver's own _GH100
# bodies (GB20x from 570: g_kern_bus_nvoc.c), not stubs: the driver creates
# their BAR1 pairs without passing through p2p-shim's wrappers.  UVM
# external mappings of the peer's memory (PEER in these drivers) must still
# come out SYS_NONCOH at the peer's BAR1 DMA base + offset, volatile, like
# the stub chips' in shim-a-flow.  The native pair must not hold the module
# (its teardown does not go through our hooks): disable works while it
# lives.  Its GPUs carry p2p-shim's ForceP2P, so disable leaves the residual
# guard, which gives the pair the stock answer: a new UVM mapping of the
# peer is refused (NOT_SUPPORTED) rather than built with the stock PEER
# aperture, which on these drivers reads the mapping GPU's own memory.
. /cases/lib.sh
G='GB203@0000:01:00.0,vram=16G,bar1=0x4000000000/32G;GB203@0000:02:00.0,vram=16G,bar1=0x6000000000/32G'

for v in 570.148.08 575.64.05; do
	echo "== $v"
	klog_mark
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	st=$(nvflow state)
	expect_eq "$v GPU0 static BAR1" "$(kv gpu0.static_bar1 "$st")" 1
	expect_eq "$v GPU1 static BAR1" "$(kv gpu1.static_bar1 "$st")" 1

	out=$(nvflow caps 0 1)
	expect_eq "$v caps" "$(kv connectivity "$out")" pcie_bar1
	out=$(nvflow create 0 1) || fail "$v create: $out"
	expect_eq "$v object type" "$(kv type "$out")" pcie_bar1
	obj=$(kv object "$out")
	base=$(( 0x6000000000 + $(kv gpu1.static_bar1_offset "$(nvflow state)") ))
	# The stub wrappers never ran: the pair is the driver's own.
	expect_match "$v no stub create" "$(p2pctl status)" \
		'kbusCreateP2PMappingForBar1P2P_[0-9a-f]{6} +redirect +installed +0 '

	maps=
	for spec in "0x0 0x1000" "0x200000 0x200000" "0x40000000 0x1000"; do
		set -- $spec
		out=$(nvflow map "$obj" $1 $2 uvm) || fail "$v uvm map $spec: $out"
		maps="$maps $(kv mapping "$out")"
		expect_eq "$v uvm aperture @$1/$2" "$(kv aperture "$out")" SYS_NONCOH
		expect_eq "$v uvm field @$1/$2" "$(kv field "$out")" sys
		expect_eq "$v pte sys address @$1/$2" "$(kv pte_addr_sys "$out")" "$(printf 0x%x $((base + $1)))"
		expect_eq "$v pte volatile @$1/$2" "$(kv pte_volatile "$out")" 1
	done

	# Native pairs do not hold the module: disable works, and then the
	# driver builds its stock PTE again.
	run p2pctl disable
	expect_match "$v residual" "$(p2pctl status)" 'state: +residual'
	out=$(nvflow map "$obj" 0x1000 0x1000 uvm 2>&1)
	expect_eq "$v uvm map after disable refused" "$(kv status "$out")" 0x56
	expect_eq "$v no PEER PTE after disable" "$(kv aperture "$out")" ""
	for m in $maps; do run nvflow unmap "$m" >/dev/null; done
	run nvflow destroy "$obj" >/dev/null
	run rmmod nvidia
	run rmmod p2p_shim
	log=$(klog_since)
	expect_no_match "$v no left-over mappings" "$log" 'left-over'
done
