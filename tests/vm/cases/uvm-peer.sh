# SPDX-License-Identifier: GPL-2.0
# UVM managed-memory peer mappings of a BAR1 pair (issue 14, docs/uvm.md).
# 550-580: RM reports a BAR1 pair to UVM as a PCIe pair with peer ids
# 0xffffffff; UVM keeps them as NvU8 0xff and builds VIDEO-aperture PTEs
# (the accessing GPU's own VRAM) and PEERMEM copies with peer id 7.  With
# p2p-shim armed, the UVM peer hooks must make them SYS (coherent) at the
# peer's BAR1 DMA base + offset, in PTEs (make_pte_turing), physical CE
# copies (ce_aperture) and the virtual-mode identity mapping.  590 (where
# UVM knows BAR1 pairs) is unchanged by p2p-shim on Hopper and GB20x.
. /cases/lib.sh
A='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'

hex() { printf 0x%x "$1"; }

# check_pairs V: GPU0's and GPU1's pages seen from the other GPU
check_pairs() {
	v=$1
	st=$(nvflow state)
	base01=$(( 0x6000000000 + $(kv gpu1.static_bar1_offset "$st") ))	# GPU0 -> GPU1
	base10=$(( 0x4000000000 + $(kv gpu0.static_bar1_offset "$st") ))	# GPU1 -> GPU0
	for spec in "0 1 0x200000 $base01" "0 1 0x7fe00000 $base01" "1 0 0x1000 $base10"; do
		set -- $spec
		out=$(uvm map $1 $2 $3) || fail "$v map $1 $2 $3"
		echo "$out" | tr '\n' ' '; echo
		expect_eq "$v map $1<-$2 @$3 pte aperture (SYSTEM_COHERENT)" "$(kv pte_aperture "$out")" 2
		expect_eq "$v map $1<-$2 @$3 pte sys address" "$(kv pte_addr_sys "$out")" "$(hex $(($4 + $3)))"
		expect_eq "$v map $1<-$2 @$3 atomics disabled" "$(kv pte_atomic_disable "$out")" 1
		expect_eq "$v map $1<-$2 @$3 uvm aperture (SYS)" "$(kv aperture "$out")" 9
		out=$(uvm copy $1 $2 $3) || fail "$v copy $1 $2 $3"
		expect_eq "$v copy $1<-$2 @$3 physical" "$(kv virtual "$out")" 0
		expect_eq "$v copy $1<-$2 @$3 ce target (COHERENT_SYSMEM)" "$(kv ce_target "$out")" 1
		expect_eq "$v copy $1<-$2 @$3 ce address" "$(kv ce_address "$out")" "$(hex $(($4 + $3)))"
	done
}

for v in 550.163.01 565.57.01 570.148.08 575.64.05 580.159.04; do
	echo "== $v AD102 pair"
	klog_mark
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$A"
	expect_eq "$v caps" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	run insmod /lib/standin/$v/nvidia-uvm.ko
	expect_eq "$v register 0" "$(kv status "$(uvm register 0)")" 0x0
	expect_eq "$v register 1" "$(kv status "$(uvm register 1)")" 0x0
	out=$(uvm enable 0 1)
	echo "$out" | tr '\n' ' '; echo
	expect_eq "$v enable peer access" "$(kv status "$out")" 0x0
	expect_eq "$v link" "$(kv link "$out")" pcie
	check_pairs $v
	st=$(p2pctl status)
	echo "$st"
	expect_match "$v UVM peer hooks armed" "$st" 'uvm peers: +armed'
	expect_match "$v peer address hook fired" "$st" 'peer_phys_address +return +installed +[1-9]'
	expect_eq "$v disable peer access" "$(kv status "$(uvm disable 0 1)")" 0x0
	run rmmod nvidia-uvm

	echo "== $v virtual copy mode (identity mapping)"
	run insmod /lib/standin/$v/nvidia-uvm.ko uvm_peer_copy=virt
	run uvm register 0 >/dev/null
	run uvm register 1 >/dev/null
	expect_eq "$v virt enable" "$(kv status "$(uvm enable 0 1)")" 0x0
	out=$(uvm copy 0 1 0x5000)
	echo "$out" | tr '\n' ' '; echo
	expect_eq "$v virt copy" "$(kv virtual "$out")" 1
	expect_eq "$v identity pte aperture" "$(kv identity_pte_aperture "$out")" 2
	expect_eq "$v identity pte address" "$(kv identity_pte_addr_sys "$out")" "$(hex $((base01 + 0x5000)))"
	run rmmod nvidia-uvm
	st=$(p2pctl status)
	expect_match "$v UVM hooks gone with nvidia-uvm" "$st" 'uvm peers: +waiting for nvidia-uvm'
	# nvidia first: gen 0's static BAR1 (ours) holds the ledger until then.
	run rmmod nvidia
	run p2pctl disable
	run rmmod p2p_shim
	log=$(klog_since)
	expect_no_match "$v no left-over mappings" "$log" 'left-over'
done

# GB20x from 570: the driver creates the pair with its own _GH100 slot,
# not through p2p-shim's wrapper (A5 observes it): UVM's PTEs of such a
# pair need the same tags.
N='GB203@0000:01:00.0,vram=16G,bar1=0x4000000000/32G;GB203@0000:02:00.0,vram=16G,bar1=0x6000000000/32G'
for v in 570.148.08 575.64.05 580.159.04; do
	echo "== $v GB203 pair (the driver's own BAR1 slots)"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$N"
	expect_eq "$v GB203 caps" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	run insmod /lib/standin/$v/nvidia-uvm.ko
	run uvm register 0 >/dev/null
	run uvm register 1 >/dev/null
	expect_eq "$v GB203 enable peer access" "$(kv status "$(uvm enable 0 1)")" 0x0
	base=$(( 0x6000000000 + $(kv gpu1.static_bar1_offset "$(nvflow state)") ))
	out=$(uvm map 0 1 0x200000) || fail "$v GB203 map"
	echo "$out" | tr '\n' ' '; echo
	expect_eq "$v GB203 pte aperture (SYSTEM_COHERENT)" "$(kv pte_aperture "$out")" 2
	expect_eq "$v GB203 pte sys address" "$(kv pte_addr_sys "$out")" "$(hex $((base + 0x200000)))"
	# nvidia-uvm holds tags only our hooks convert: no disable meanwhile.
	expect_refused "$v GB203: disable refused while nvidia-uvm holds the pair's tags" \
		'busy: live BAR1 peer mappings: ' p2pctl disable
	expect_eq "$v GB203 disable peer access" "$(kv status "$(uvm disable 0 1)")" 0x0
	run rmmod nvidia-uvm
	run p2pctl disable
	run rmmod nvidia
	run rmmod p2p_shim
done

echo "== 580.159.04: nvidia-uvm loaded before p2pctl enable"
run insmod /lib/p2p-shim/p2p-shim.ko
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$A" NVreg_RegistryDwords="RMPcieP2PType=1;ForceP2P=0x211"
run insmod /lib/standin/580.159.04/nvidia-uvm.ko
run p2pctl enable
expect_match "late enable arms UVM peer hooks" "$(p2pctl status)" 'uvm peers: +armed'
run uvm register 0 >/dev/null
run uvm register 1 >/dev/null
expect_eq "late enable: enable peer access" "$(kv status "$(uvm enable 0 1)")" 0x0
check_pairs "580 late"
expect_refused "disable refused while UVM peers hold the pair" \
	'busy: live BAR1 peer mappings: ' p2pctl disable
run rmmod nvidia-uvm
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim

# A dry run counts: the set's hooks are counting probes and no tag is
# handed out, so nvidia-uvm's PTEs stay stock.
echo "== 580.159.04 dry run"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 dry_run=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$A" NVreg_RegistryDwords="RMPcieP2PType=1;ForceP2P=0x211"
run insmod /lib/standin/580.159.04/nvidia-uvm.ko
st=$(p2pctl status)
expect_match "dry run: set counting" "$st" 'uvm peers: +dry run \(4 counting hooks\)'
run uvm register 0 >/dev/null
run uvm register 1 >/dev/null
out=$(uvm enable 0 1)
echo "$out" | tr '\n' ' '; echo
expect_eq "dry run: enable peer access" "$(kv status "$out")" 0x0
expect_eq "dry run: link" "$(kv link "$out")" pcie
expect_no_match "dry run: no tag handed out" "$out" 'peer_ids=0x[89a-f][0-9a-f]'
# The stock driver's answer for this registry (ForceP2P, no BAR1 P2P of
# its own): a mailbox pair, peer id 0 both ways, PEER PTEs.
expect_eq "dry run: stock peer ids" "$(kv peer_ids "$out")" 0x0,0x0
out=$(uvm map 0 1 0x200000)
echo "$out" | tr '\n' ' '; echo
expect_eq "dry run: stock peer id (untagged)" "$(kv aperture "$out")" 0
expect_eq "dry run: stock PEER PTE" "$(kv pte_aperture "$out")" 1

expect_eq "dry run: disable peer access" "$(kv status "$(uvm disable 0 1)")" 0x0
expect_match "dry run: caps hook counted" "$(p2pctl status)" 'nvidia:nvUvmInterfaceGetP2PCaps +count +installed +[1-9]'

run rmmod nvidia-uvm
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim

# An nvidia-uvm whose copy-address function has the phys-address function
# inlined: hooking it would miss physical-mode copies, so the set must not
# arm at all (not even the tagging hook), status must say so and the
# rest of p2p-shim stays armed.
echo "== fault-uvminline (570.148.08, uvm_gpu_peer_phys_address inlined into the copy path)"
klog_mark
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/fault-uvminline/nvidia.ko gpus="$A"
run insmod /lib/standin/fault-uvminline/nvidia-uvm.ko
st=$(p2pctl status)
echo "$st"
expect_match "uvminline: profile still armed" "$st" 'state: +armed'
expect_match "uvminline: status says the UVM set is not armed, and why" "$st" \
	'uvm peers: +NOT armed: .*uvm_gpu_peer_copy_address does not call uvm_gpu_peer_phys_address.*NOT fixed'
expect_match "uvminline: no tagging hook installed" "$st" 'nvidia:nvUvmInterfaceGetP2PCaps +return +idle'
expect_match "uvminline: kernel log says so" "$(klog_since)" 'UVM peer set uvm-gpu NOT armed'
expect_match "uvminline: JSON says so" "$(p2pctl status --json)" '"uvm_peers": "NOT armed'
run uvm register 0 >/dev/null
run uvm register 1 >/dev/null
expect_eq "uvminline: enable peer access" "$(kv status "$(uvm enable 0 1)")" 0x0
out=$(uvm map 0 1 0x200000)
expect_eq "uvminline: stock peer id (untagged)" "$(kv aperture "$out")" 255
expect_eq "uvminline: stock VIDEO PTE" "$(kv pte_aperture "$out")" 0
run rmmod nvidia-uvm
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim

# 590: UVM knows BAR1 pairs (PCIE_BAR1, static-link peers found at
# registration, SYS or SYS_NON_COHERENT at the DMA base): nothing to fix on
# Hopper (stock or with p2p-shim) and GB20x (with p2p-shim: stock GeForce
# drivers give it no PCIe P2P at all).
H='GH100@0000:01:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:02:00.0,vram=80G,bar1=0x22000000000/128G'
B='GB202@0000:01:00.0,vram=32G,bar1=0x4000000000/64G;GB202@0000:02:00.0,vram=32G,bar1=0x6000000000/64G'
for spec in "stock H 3 2" "shim H 3 2" "shim B 2 1"; do
	set -- $spec
	mode=$1 pte_ap=$3 ce=$4
	case $2 in H) g=$H b1=0x22000000000 ;; *) g=$B b1=0x6000000000 ;; esac
	echo "== 590.44.01 $2 pair, $mode"
	[ $mode = shim ] && run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/590.44.01/nvidia.ko gpus="$g" NVreg_RegistryDwords="RMPcieP2PType=1"
	run insmod /lib/standin/590.44.01/nvidia-uvm.ko
	if [ $mode = shim ]; then
		st=$(p2pctl status)
		expect_match "590 $2: the uvm-bar1 hook" "$st" 'uvm peers: +armed \(1 hooks\)'
	fi
	run uvm register 0 >/dev/null
	run uvm register 1 >/dev/null
	expect_eq "590 $2 $mode: ioctl 29 refused for a static-link pair" \
		"$(kv status "$(uvm enable 0 1)")" 0x26
	base=$(( b1 + $(kv gpu1.static_bar1_offset "$(nvflow state)") ))
	out=$(uvm map 0 1 0x200000)
	echo "$out" | tr '\n' ' '; echo
	expect_eq "590 $2 $mode pte aperture" "$(kv pte_aperture "$out")" "$pte_ap"
	expect_eq "590 $2 $mode pte address" "$(kv pte_addr_sys "$out")" "$(hex $((base + 0x200000)))"
	out=$(uvm copy 0 1 0x200000)
	expect_eq "590 $2 $mode ce target" "$(kv ce_target "$out")" "$ce"
	expect_eq "590 $2 $mode ce address" "$(kv ce_address "$out")" "$(hex $((base + 0x200000)))"
	run rmmod nvidia-uvm
	[ $mode = shim ] && run p2pctl disable
	run rmmod nvidia
	[ $mode = shim ] && run rmmod p2p_shim
done

# 590 with an Ada pair under p2p-shim: stock 590 would give it
# SYS_NON_COHERENT (no PCIe atomics before Blackwell), which make_pte_turing
# cannot encode (VIDEO at the owner's offset); the uvm-bar1 hook makes
# nvidia-uvm pick SYS, with the BAR1 base nvidia-uvm adds itself.
echo "== 590.44.01 AD102 pair under p2p-shim"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/590.44.01/nvidia.ko gpus="$A"
run insmod /lib/standin/590.44.01/nvidia-uvm.ko
expect_match "590 Ada: the uvm-bar1 hook" "$(p2pctl status)" 'uvm peers: +armed \(1 hooks\)'
run uvm register 0 >/dev/null
run uvm register 1 >/dev/null
st=$(nvflow state)
base01=$(( 0x6000000000 + $(kv gpu1.static_bar1_offset "$st") ))
base10=$(( 0x4000000000 + $(kv gpu0.static_bar1_offset "$st") ))
for spec in "0 1 0x200000 $base01" "1 0 0x3000 $base10"; do
	set -- $spec
	out=$(uvm map $1 $2 $3)
	echo "$out" | tr '\n' ' '; echo
	expect_eq "590 Ada $1<-$2: SYS from nvidia-uvm" "$(kv aperture "$out")" 9
	expect_eq "590 Ada $1<-$2: pte aperture (SYSTEM_COHERENT)" "$(kv pte_aperture "$out")" 2
	expect_eq "590 Ada $1<-$2: pte address" "$(kv pte_addr_sys "$out")" "$(hex $(($4 + $3)))"
	expect_eq "590 Ada $1<-$2: atomics disabled" "$(kv pte_atomic_disable "$out")" 1
	out=$(uvm copy $1 $2 $3)
	expect_eq "590 Ada $1<-$2: ce target" "$(kv ce_target "$out")" 1
	expect_eq "590 Ada $1<-$2: ce address" "$(kv ce_address "$out")" "$(hex $(($4 + $3)))"
done
expect_match "590 Ada: kernel log" "$(dmesg | tail -n 30)" 'coherent system aperture \(SYS\)'
run rmmod nvidia-uvm
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim
