# SPDX-License-Identifier: GPL-2.0
# Correctness III item 6: GPUs of two generations get no P2P from
# p2p-shim (rules/gpurule.c, the caps guard).  From 580 the driver gives a
# BAR1 peer mapping of an RTX 50xx's memory a coherent aperture and PCIe
# atomics whatever GPU maps it, which an Ada GPU is never set up to send.
# The stand-in's AD102s are RTX 4090s (10de:2684, docs/standin.md); the
# fault build's fault_pci_id makes them other boards without changing the
# chip the stand-in models (an RTX 4090, 10de:2684; an RTX 5090,
# 10de:2b85; an RTX 4080, 10de:2704).
. /cases/lib.sh
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
G="$G;AD102@0000:03:00.0,vram=24G,bar1=0x8000000000/32G"

for v in 580.159.04 595.45.04; do
	echo "== $v: a 4090, a 5090 and a 4080"
	run insmod /lib/p2p-shim/faults/p2p-shim.ko enable=1 fault_pci_id=0x10de2684,0x10de2b85,0x10de2704
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	klog_mark
	out=$(nvflow caps 0 1)
	expect_eq "$v mixed: stock answer" "$(kv connectivity "$out")" unknown
	expect_eq "$v mixed: no reads" "$(kv read "$out")" NOT_SUPPORTED
	expect_eq "$v mixed, the other way" "$(kv connectivity "$(nvflow caps 1 0)")" unknown
	expect_match "$v says why" "$(klog_since)" 'GPUs 0x3: of different generations, no P2P'
	out=$(nvflow create 0 1) && fail "$v mixed: create made a mapping: $out"
	expect_eq "$v one generation: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 2)")" pcie_bar1
	run rmmod nvidia
	run p2pctl disable
	run rmmod p2p_shim
done

# Review F2: a GPU the module never saw (initialised before arming) beside
# a forced one: nothing says they are of one generation, so no P2P until
# it re-initialises under the hooks; then its ID is known.  The log names
# the GPU and what to do, as `p2pctl status` does.
for v in 580.159.04; do
	echo "== $v: GPUs initialised before arming"
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	run insmod /lib/p2p-shim/faults/p2p-shim.ko enable=1 fault_pci_id=0x10de2684,0x10de2b85,0x10de2704
	run nvflow reinit 0
	klog_mark
	expect_eq "$v seen + unseen: stock answer" "$(kv connectivity "$(nvflow caps 0 2)")" unknown
	expect_match "$v says why" "$(klog_since)" \
		'GPUs 0x5: GPU2 initialised before p2p-shim armed; re-initialise it'
	expect_match "$v status names it" "$(p2pctl status)" \
		'stale GPUs: +GPU2: initialised before arming; re-initialise'
	run nvflow reinit 2
	expect_eq "$v both seen, one generation: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 2)")" pcie_bar1
	run rmmod nvidia
	run p2pctl disable
	run rmmod p2p_shim
done
