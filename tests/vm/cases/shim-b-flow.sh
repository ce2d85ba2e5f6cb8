# SPDX-License-Identifier: GPL-2.0
# vm-tags: every-kernel
# Gen B (580, 595), shim loaded first and enabled, nvidia arrives: an AD102
# pair gets BAR1 P2P end to end (caps, object, RM and UVM PTEs at the
# peer's BAR1, teardown), the ledger holds disable and rmmod off while a
# mapping is live, and nvidia unloads with no left-over mappings.
. /cases/lib.sh
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'

for v in 580.159.04 595.45.04; do
	echo "== $v"
	klog_mark
	run insmod /lib/p2p-shim/p2p-shim.ko
	out=$(p2pctl enable) || fail "enable without nvidia: $out"
	expect_match "$v waiting" "$(p2pctl status)" 'waiting'
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	st=$(p2pctl status)
	echo "$st"
	expect_match "$v armed on arrival" "$st" 'armed'

	out=$(nvflow caps 0 1)
	expect_eq "$v caps" "$(kv connectivity "$out")" pcie_bar1
	expect_eq "$v read" "$(kv read "$out")" OK
	expect_eq "$v write" "$(kv write "$out")" OK

	out=$(nvflow create 0 1) || fail "$v create: $out"
	expect_eq "$v object type" "$(kv type "$out")" pcie_bar1
	expect_eq "$v no mailbox" "$(kv mailbox_broken "$out")" 0
	obj=$(kv object "$out")

	# Peer PTEs point at GPU1's BAR1 (0x6000000000) where its static
	# mapping of VRAM starts, plus the offset.
	base=$(( 0x6000000000 + $(kv gpu1.static_bar1_offset "$(nvflow state)") ))
	for off in 0x0 0x200000 0x7fe00000; do
		out=$(nvflow map "$obj" $off 0x200000 uvm) || fail "$v uvm map: $out"
		maps="$maps $(kv mapping "$out")"
		expect_eq "$v uvm aperture @$off" "$(kv aperture "$out")" SYS_NONCOH
		expect_eq "$v uvm field @$off" "$(kv field "$out")" sys
		expect_eq "$v uvm addr @$off" "$(kv addr "$out")" "$(printf 0x%x $((base + off)))"
	done
	out=$(nvflow map "$obj" 0x200000 0x200000 rm) || fail "$v rm map: $out"
	expect_eq "$v rm aperture" "$(kv aperture "$out")" SYS_NONCOH
	maps="$maps $(kv mapping "$out")"

	st=$(p2pctl status)
	echo "$st"
	# The ledger's rows (not its header): the pair's BAR1 mapping at
	# GPU1's DMA base, and GPU0's window onto GPU1.
	expect_line "$v ledger: the pair's BAR1 mapping" "$st" \
		"^0 +1 +pcie-bar1 +1 +$(printf 0x%x "$base") "
	expect_line "$v ledger: the BAR1 window" "$st" '^0 +1 +bar1-window +1 '

	# Live mappings: disable and rmmod refused, nothing changes.
	expect_refused "$v disable busy" 'busy: live BAR1 peer mappings: GPU0-GPU1 \(1\)' p2pctl disable
	expect_refused "$v rmmod busy" "$RMMOD_BUSY" rmmod p2p_shim
	expect_match "$v still armed" "$(p2pctl status)" 'armed'

	for m in $maps; do run nvflow unmap "$m" >/dev/null; done
	maps=
	run nvflow destroy "$obj" >/dev/null
	st=$(nvflow state)
	expect_match "$v refcounts back to 0" "$st" 'gpu0.iova_mappings=0'
	run p2pctl disable
	run rmmod nvidia
	run rmmod p2p_shim
	log=$(klog_since)
	echo "$log"
	expect_no_match "$v no left-over mappings" "$log" 'left-over'
	expect_match "$v armed log" "$log" "armed profile gen-b for nvidia $v"
done
