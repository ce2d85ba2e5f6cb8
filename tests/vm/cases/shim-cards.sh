# SPDX-License-Identifier: GPL-2.0
# The cards people own (issue 15), on 570, 575, 580 and 595 stand-ins with
# the per-version static BAR1 rules (docs/cards.md, docs/standin.md):
#   0, 1  RTX 5090 (GB202): BAR1 32768 MiB, client FB 32607 MiB, FB 32768 MiB
#   2     RTX 5090 driving the boot display (32 MiB console in BAR1)
#   3     RTX 4090 (AD102, 24 GiB, BAR1 32 GiB) driving the boot display
#   4     RTX 4090
#   5     RTX 4090 D modded to 48 GiB, BAR1 32 GiB
#   6     RTX 3090 (GA102, 24 GiB, BAR1 32 GiB)
#   7     a 24 GiB card with a 256 MiB BAR (no Resizable BAR)
# Shim armed before the GPUs initialise.  Every GPU initialises; a pair
# gets BAR1 P2P where it works (a 5090 pair: static BAR1 forced by
# p2p-shim), the stock answer where it cannot (and for two generations,
# a 5090 with a 4090 or a 4090 with a 3090: rules/gpurule.c, whose PCI
# IDs the stand-in's functions carry, docs/standin.md); every pair reported
# pcie_bar1 creates and maps (RM and UVM) at the peer's static BAR1, so none
# is reported OK that fails to map or maps the wrong memory.  570-575 force
# only where the profile feeds the UVM fix from native-slot pairs (GB20x
# has the driver's own BAR1 slots there: issue 13 item 4); without it the
# 5090 gets the stock answer and status says why.  Every version here
# forces: gen-a1 (570) and gen-a2 (575) carry A5, which feeds that fix
# (docs/hooks.md), gen-b (580, 595) forces always; decided here, never from
# the module's status.  p2pctl status shows each GPU's static BAR1.
# The user's keys win: static_bar1=0, RMForceStaticBar1, RMPcieP2PType=0 and
# an RMBar1ApertureSizeMB below the BAR each leave the 5090s unforced.
. /cases/lib.sh

G='GB202@0000:01:00.0,vram=32607M,fb=32G,bar1=0x4000000000/32G'
G="$G;GB202@0000:02:00.0,vram=32607M,fb=32G,bar1=0x4800000000/32G"
G="$G;GB202@0000:03:00.0,vram=32607M,fb=32G,console=32M,bar1=0x5000000000/32G"
G="$G;AD102@0000:04:00.0,vram=24G,console=32M,bar1=0x5800000000/32G"
G="$G;AD102@0000:05:00.0,vram=24G,bar1=0x6000000000/32G"
G="$G;AD102@0000:06:00.0,vram=48G,bar1=0x6800000000/32G"
G="$G;GA102@0000:07:00.0,vram=24G,bar1=0x7000000000/32G"
G="$G;AD102@0000:08:00.0,vram=24G,bar1=0xf0000000/256M"
BAR1_1=0x4800000000 BAR1_4=0x6000000000 BAR1_6=0x7000000000

# want VERSION A B: what pair A-B must get (the 5090s' static BAR1 forced;
# 0-4 and 4-6 are of two generations)
want() {
	case "$2-$3" in
	0-1) echo pcie_bar1 ;;
	3-4) case $1 in 57*) echo unknown ;; *) echo pcie_bar1 ;; esac ;;
	*) echo unknown ;;
	esac
}

# gpu_row STATUS N: GPU N's row of p2pctl status's GPU table
gpu_row() { echo "$1" | grep -E "^$2 +(on|off|forced|failed|unknown) "; }

for v in 570.148.08 575.64.05 580.159.04 595.45.04; do
	echo "== $v"
	klog_mark
	run insmod /lib/p2p-shim/p2p-shim.ko
	run p2pctl enable
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	state=$(nvflow state)
	for g in 0 1 2 3 4 5 6 7; do
		expect_eq "$v GPU$g initialised" "$(kv gpu$g.init "$state")" ok
	done

	for pair in 0-1 0-2 3-4 4-5 4-6 0-4 6-7 2-3; do
		a=${pair%-*} b=${pair#*-}
		klog_mark
		out=$(nvflow caps $a $b)
		conn=$(kv connectivity "$out")
		expect_eq "$v $pair caps" "$conn" "$(want $v $a $b)"
		if [ "$conn" = pcie_bar1 ]; then
			expect_eq "$v $pair read" "$(kv read "$out")" OK
			out=$(nvflow create $a $b) || fail "$v $pair reported OK, create failed: $out"
			expect_eq "$v $pair object" "$(kv type "$out")" pcie_bar1
			obj=$(kv object "$out")
			eval base=\$BAR1_$b
			off=$(kv gpu$b.static_bar1_offset "$state")
			out=$(nvflow map "$obj" 0x200000 0x200000 rm) || fail "$v $pair map: $out"
			expect_eq "$v $pair rm aperture" "$(kv aperture "$out")" SYS_NONCOH
			expect_eq "$v $pair rm addr" "$(kv addr "$out")" \
				"$(printf 0x%x $((base + off + 0x200000)))"
			run nvflow unmap "$(kv mapping "$out")" >/dev/null
			out=$(nvflow map "$obj" 0x400000 0x200000 uvm) || fail "$v $pair uvm map: $out"
			expect_eq "$v $pair uvm field" "$(kv field "$out")" sys
			expect_eq "$v $pair uvm addr" "$(kv addr "$out")" \
				"$(printf 0x%x $((base + off + 0x400000)))"
			run nvflow unmap "$(kv mapping "$out")" >/dev/null
			run nvflow destroy "$obj" >/dev/null
		else
			expect_eq "$v $pair read" "$(kv read "$out")" NOT_SUPPORTED
			expect_eq "$v $pair write" "$(kv write "$out")" NOT_SUPPORTED
		fi
		case $pair in
		0-4|4-6) expect_match "$v $pair: why" "$(klog_since)" 'of different generations, no P2P' ;;
		esac
	done

	st=$(p2pctl status)
	echo "$st"
	expect_match "$v 5090: forced" "$(gpu_row "$st" 0)" '^0 +forced +usable +32768 MiB +32607 MiB +0 MiB +forced by p2p-shim'
	expect_match "$v 4090: the driver's" "$(gpu_row "$st" 4)" '^4 +on +usable +32768 MiB .*the driver.s rule'
	expect_match "$v 4090D: too small" "$(gpu_row "$st" 5)" '^5 +off +no .*cannot hold the client FB 49152 MiB'
	expect_match "$v 256M: too small" "$(gpu_row "$st" 7)" '^7 +off +no +256 MiB .*smaller than any such GPU.s memory'
	case $v in
	57*)
		expect_match "$v 5090 display: console" "$(gpu_row "$st" 2)" '^2 +off +no .*console'
		expect_match "$v 4090 display: unaligned" "$(gpu_row "$st" 3)" '^3 +on +no +32768 MiB +24576 MiB +32 MiB .*not 512 MiB aligned'
		;;
	*)
		expect_match "$v 5090 display: no room" "$(gpu_row "$st" 2)" '^2 +off +no .*cannot hold the client FB 32607 MiB at 512 MiB'
		expect_match "$v 4090 display: at 512 MiB" "$(gpu_row "$st" 3)" '^3 +on +usable +32768 MiB +24576 MiB +512 MiB'
		;;
	esac
	js=$(p2pctl status --json | tr -d '\n')
	expect_match "$v json: GPU0 forced" "$js" \
		'"instance": *0, *"static_bar1": *"forced", *"forced_by_shim": *true, *"p2p_usable": *true'
	expect_match "$v json: GPU5 off" "$js" '"instance": *5, *"static_bar1": *"off", *"forced_by_shim": *false, *"p2p_usable": *false'

	run p2pctl disable
	run rmmod nvidia
	run rmmod p2p_shim
done

echo "== static_bar1=0: the 5090 pair gets the stock answer (580)"
run insmod /lib/p2p-shim/p2p-shim.ko static_bar1=0
run p2pctl enable
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "no force: 0-1" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
expect_eq "no force: 3-4, the driver's own" "$(kv connectivity "$(nvflow caps 3 4)")" pcie_bar1
expect_match "no force: why" "$(gpu_row "$(p2pctl status)" 0)" '^0 +off +no .*static_bar1=0'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim

echo "== 575 without p2p-shim's registry defaults: its default DISABLE says no"
# The user sets the BAR1 P2P type but not RMForceStaticBar1: a 4090 has
# room to spare, so it is not forced, and status names the key (it said
# "vGPU host or confidential computing?", which 575 does not check).
run insmod /lib/p2p-shim/p2p-shim.ko registry_defaults=0
run p2pctl enable
run insmod /lib/standin/575.64.05/nvidia.ko gpus="$G" NVreg_RegistryDwords="RMPcieP2PType=1"
st=$(p2pctl status)
expect_match "575 defaults off: 4090 not forced" "$(gpu_row "$st" 4)" \
	'^4 +off +no .*575 leaves static BAR1 off unless RMForceStaticBar1 is set.*room to spare: not forced'
expect_no_match "575 defaults off: no vGPU guess" "$st" 'vGPU host'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim

echo "== the user's RMForceStaticBar1 wins (580: 0 on every GPU)"
run insmod /lib/p2p-shim/p2p-shim.ko
run p2pctl enable
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G" NVreg_RegistryDwords="RMForceStaticBar1=0"
expect_eq "user key: 0-1" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
expect_match "user key: why" "$(gpu_row "$(p2pctl status)" 0)" '^0 +off +no .*set by the user'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim

echo "== the user's RMPcieP2PType=0 (mailbox P2P type): not forced (580)"
run insmod /lib/p2p-shim/p2p-shim.ko
run p2pctl enable
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G" NVreg_RegistryDwords="RMPcieP2PType=0"
expect_eq "mailbox: 0-1" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
expect_match "mailbox: why" "$(gpu_row "$(p2pctl status)" 0)" '^0 +off +no .*P2P mailbox is reserved'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim

echo "== the user's RMBar1ApertureSizeMB below the BAR: not forced (580)"
# The driver's rules use the smaller aperture (kbusDetermineBar1ApertureLength,
# read in kbusStatePreInitLocked, before the decision).  32660 MiB holds a
# 5090's 32607 MiB with 52 MiB to spare, less than the 64 MiB that dynamic
# BAR1 mappings need, which the PCI BAR's size would not show: forced, it
# maps and leaves USERD and doorbells short.  A 4090's 24 GiB still fits:
# the driver's own rule keeps it on.
run insmod /lib/p2p-shim/p2p-shim.ko
run p2pctl enable
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G" NVreg_RegistryDwords="RMBar1ApertureSizeMB=32660"
state=$(nvflow state)
for g in 0 1 4; do
	expect_eq "aperture: GPU$g initialised" "$(kv gpu$g.init "$state")" ok
done
expect_eq "aperture: 5090 BAR1 shrunk" "$(kv gpu0.bar1_aperture "$state")" "$(printf 0x%x $((32660 << 20)))"
expect_eq "aperture: 0-1" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
st=$(p2pctl status)
expect_match "aperture: why" "$(gpu_row "$st" 0)" '^0 +off +no .*RMBar1ApertureSizeMB'
expect_match "aperture: 4090 the driver's" "$(gpu_row "$st" 4)" '^4 +on +usable .*the driver.s rule'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
