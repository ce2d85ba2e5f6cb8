# SPDX-License-Identifier: GPL-2.0
# The stand-in's GPUs are PCI functions with their chips' IDs (issue 41,
# item 2): p2p-shim reads a GPU's vendor and device ID at the address its
# attach names, and the caps guard's generation rule (rules/gpurule.c)
# fails closed on a GPU it cannot name.  Before, QEMU had no function
# there, and a set with no NVIDIA ID passed as one generation.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
G="$G;GH100@0000:03:00.0,vram=80G,bar1=0x20000000000/128G"

trap release_and_unload EXIT

echo "== the stand-in's PCI functions"
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
for spec in "01 0x2684" "02 0x2684" "03 0x2331"; do
	set -- $spec
	d=/sys/bus/pci/devices/0000:$1:00.0
	expect_eq "$d vendor (NVIDIA)" "$(cat $d/vendor 2>&1)" 0x10de
	expect_eq "$d device" "$(cat $d/device 2>&1)" "$2"
done
run rmmod nvidia
[ -e /sys/bus/pci/devices/0000:01:00.0 ] && fail "a PCI function stayed after the stand-in's unload"
echo "ok: gone with the stand-in"

echo "== armed: two RTX 4090s (10de:2684) pass the generation rule"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "0-1: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim

echo "== caps asked right after an attach see the GPUs' IDs (issue 41, review item 1)"
# A CUDA process that starts as the GPUs attach asks the caps at once and
# keeps the answer for its life.  Before, a GPU's PCI facts were looked up
# in a work item after its attach, and until it ran the GPU had no PCI
# ID: the pair got the stock answer (with the lookup held 5 s by the fault
# knob fault_topo_delay_ms, this failed every time).  Now they are read at
# the attach itself, from the PCI functions p2p-shim gathered beforehand
# (kmod/pcifns.c): no window is left, so no sleep here either.
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "0-1 right after the attach: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
run nvflow reinit 1 >/dev/null
expect_eq "0-1 right after GPU1 re-attached: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim

echo "== a GPU whose function is not NVIDIA's fails closed"
klog_mark
run insmod /lib/p2p-shim/faults/p2p-shim.ko enable=1 fault_pci_id=0,0x80861234
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
out=$(nvflow caps 0 1)
expect_eq "0-1 with GPU1 not NVIDIA's: stock" "$(kv connectivity "$out")" unknown
expect_eq "0-1 with GPU1 not NVIDIA's: read" "$(kv read "$out")" NOT_SUPPORTED
expect_match "the log says why" "$(klog_since)" 'GPUs 0x3: one has no NVIDIA PCI ID'
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim

echo "== an attachment keeps nothing of the one before (review F4)"
# GPU1 (at 0000:02:00.0: an RTX 4090) re-attaches with no readable PCI
# address: the old attachment's ID must not stay with the new one, which
# is of unknown identity, so its pairs get the stock answer at once; the
# next attach with its address gives it back.  (Before, the ID came from a
# work item after the attach, and a result held for an attachment gone
# meanwhile could land in the next one; now each attach reads its own.)
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "0-1 before: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
echo 2 >/sys/module/nvidia/parameters/attach_no_pci
run nvflow reinit 1 >/dev/null
echo 0 >/sys/module/nvidia/parameters/attach_no_pci
klog_mark
guarded "0-1, GPU1 re-attached with no PCI address" 0 1
expect_match "the log says why" "$(klog_since)" 'GPUs 0x3: one has no NVIDIA PCI ID p2p-shim could read \(no address in its attach'
run nvflow reinit 1 >/dev/null
expect_eq "0-1, GPU1 re-attached at its address: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim
