# SPDX-License-Identifier: GPL-2.0
# NVIDIA's host rule for BAR1 P2P (p2p_caps.c, _p2pCapsGetHostSystemStatus-
# OverPcieBar1): peer reads, and with them BAR1 P2P, only below a common
# PCIe switch or with an AMD CPU or a Sapphire Rapids Xeon.  Every
# ForceP2P skips the check, so the caps guard makes it (Correctness III,
# item 5).  The VM's CPU is AMD (TCG's "max"); the fault build's
# fault_cpu_no_reads makes the module take it for one the rule refuses,
# as an Intel Core host.  qemu-args put two endpoints below one PCIe
# switch (TI XIO3130: upstream 104c:8232, downstream 104c:8233) and others
# below root ports only; the stand-in's GPUs take their addresses.  The
# driver counts only the switches of its allow-list (pcie_switch_ref.h:
# PLX, PMC, BR03/BR04, one Mellanox), which QEMU's is not: the test build's
# fault_any_switch stands for one of those.
. /cases/lib.sh

# Endpoints below a downstream port of the switch, and the IOH ones.
below_switch=
for d in /sys/bus/pci/devices/*; do
	p=$(dirname "$(readlink -f "$d")")
	[ "$(cat "$p/vendor" 2>/dev/null):$(cat "$p/device" 2>/dev/null)" = 0x104c:0x8233 ] &&
		below_switch="$below_switch $(basename "$d")"
done
set -- $below_switch
[ $# -ge 2 ] || fail "topology: fewer than two endpoints below the switch (qemu-args): '$below_switch'"
S0=$1 S1=$2
echo "below one switch: $S0 $S1"
G="AD102@$S0,bar1=0x4000000000/32G;AD102@$S1,bar1=0x4800000000/32G"
G="$G;AD102@0000:41:00.0,bar1=0x5000000000/32G;AD102@0000:42:00.0,bar1=0x5800000000/32G"
P=/sys/module/p2p_shim/parameters

echo "== a switch the driver does not know (QEMU's XIO3130) is no common switch"
run insmod /lib/p2p-shim/faults/p2p-shim.ko enable=1 fault_cpu_no_reads=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "unknown switch: stock answer" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim

echo "== one switch the driver knows (fault_any_switch: QEMU has none such)"
run insmod /lib/p2p-shim/faults/p2p-shim.ko enable=1 fault_cpu_no_reads=1 fault_any_switch=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
klog_mark
expect_eq "one switch: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
out=$(nvflow caps 2 3)
expect_eq "no common switch: stock answer" "$(kv connectivity "$out")" unknown
expect_eq "no common switch: no reads" "$(kv read "$out")" NOT_SUPPORTED
expect_eq "across: stock answer" "$(kv connectivity "$(nvflow caps 0 2)")" unknown
expect_match "says why" "$(klog_since)" 'no common PCIe switch and a CPU that NVIDIA.s rule gives no BAR1 peer reads'
echo "== the user's opt-in: peer_reads=1"
echo 1 >$P/peer_reads
expect_eq "opt-in: BAR1 P2P" "$(kv connectivity "$(nvflow caps 2 3)")" pcie_bar1
expect_match "status: the user's opt-in" "$(p2pctl status)" 'peer reads: +allowed for every pair \(peer_reads=1'
echo 0 >$P/peer_reads
# p2pctl reads the CPU itself (the module's test knob is not the CPU).
expect_match "status: the VM's CPU (AMD) passes" "$(p2pctl status)" 'peer reads: +allowed \(AMD family'
echo "== a CPU the rule passes (the VM's own)"
echo 0 >$P/fault_cpu_no_reads
expect_eq "AMD: BAR1 P2P" "$(kv connectivity "$(nvflow caps 2 3)")" pcie_bar1
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
