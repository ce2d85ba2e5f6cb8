# SPDX-License-Identifier: GPL-2.0
# A GPU that detaches takes everything p2p-shim keyed by its OBJGPU with it
# (issue 21, item 5).  The stand-in re-attaches a GPU in the memory of its
# last OBJGPU (as the allocator often does), and `reinit-unseen` tears its
# BAR1 pair down through a path no hook sees before the GPU detaches.
# Before the fix the ledger kept the dead pair: `mappings: 1` after the
# re-initialisation, disable refused for ever, and a new pair at the same
# address would have inherited the old one's BAR1 DMA bases.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
refcnt() { cat /sys/module/p2p_shim/refcnt; }

run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
out=$(nvflow create 0 1) || fail "create: $out"
obj=$(kv object "$out")
out=$(nvflow map "$obj" 0x1000 0x1000 rm) || fail "map: $out"
st=$(p2pctl status)
expect_match "pair and window in the ledger" "$st" 'mappings: +[12]'
expect_eq "forced GPUs and the ledger hold the module" "$(refcnt)" 3

echo "== GPU 0 re-initialises after an unseen teardown"
klog_mark
out=$(nvflow reinit-unseen 0) || fail "reinit-unseen: $out"
echo "$out"
expect_eq "re-attached" "$(kv status "$out")" 0x0
expect_eq "at the old OBJGPU's address" "$(kv same_address "$out")" 1
expect_match "the purge is logged" "$(klog_since)" 'detached while the ledger held a mapping'
st=$(p2pctl status)
expect_match "ledger empty" "$st" 'mappings: +0'
expect_eq "only the two forced GPUs hold the module" "$(refcnt)" 2

echo "== a new pair at the same address starts afresh"
expect_eq "BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
out=$(nvflow create 0 1) || fail "create again: $out"
obj=$(kv object "$out")
expect_match "one pair in the ledger" "$(p2pctl status)" 'mappings: +1'
run nvflow destroy "$obj" >/dev/null
expect_match "ledger empty again" "$(p2pctl status)" 'mappings: +0'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim

# A GPU attached before arming (Correctness III, item 2): p2p-shim cannot
# name it (no PCI ID from an attach it saw), so no BAR1 P2P is offered
# with it, the log and status say why, and RM's own create, which asks the
# caps, makes no pair (rules/gpurule.c: P2P is advertised only where it
# works).  Re-initialised under the hooks, it gets BAR1 P2P; its pair then
# goes at an unseen teardown like GPU 0's above.
echo "== a GPU attached before arming: the stock answer until it re-initialises"
# GPU 0 re-initialises under the hooks (the pair's first GPU decides the
# caps with p2p-shim's keys); GPU 1 keeps its attachment from before.
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
run insmod /lib/p2p-shim/p2p-shim.ko
run p2pctl enable
run nvflow reinit 0 >/dev/null
klog_mark
guarded "a GPU from before arming" 0 1
expect_match "the log names it" "$(klog_since)" \
	'GPUs 0x3: GPU1 initialised before p2p-shim armed; re-initialise it'
expect_match "status names it" "$(p2pctl status)" \
	'stale GPUs: +GPU1: initialised before arming; re-initialise'
out=$(nvflow create 0 1) && fail "create with a GPU from before arming: $out"
expect_match "nothing in the ledger" "$(p2pctl status)" 'mappings: +0'
echo "-- GPU 0 re-initialised with no readable PCI address: no NVIDIA ID in the pair"
# Before, a set with no NVIDIA ID at all passed as one generation.
echo 1 >/sys/module/nvidia/parameters/attach_no_pci
run nvflow reinit 0 >/dev/null
echo 0 >/sys/module/nvidia/parameters/attach_no_pci
klog_mark
guarded "GPU0 unplaced, GPU1 from before arming" 0 1
expect_match "the log names GPU1" "$(klog_since)" \
	'GPUs 0x3: GPU1 initialised before p2p-shim armed; re-initialise it'
run nvflow reinit 0 >/dev/null
echo "-- GPU 1 re-initialised"
run nvflow reinit 1 >/dev/null
expect_eq "BAR1 P2P once re-initialised" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
expect_no_match "no stale GPU left" "$(p2pctl status)" 'stale GPUs'
out=$(nvflow create 0 1) || fail "create: $out"
expect_match "the pair in the ledger" "$(p2pctl status)" 'mappings: +1'
klog_mark
out=$(nvflow reinit-unseen 1) || fail "reinit-unseen: $out"
expect_eq "re-attached at the old OBJGPU's address" "$(kv same_address "$out")" 1
expect_match "the purge is logged" "$(klog_since)" 'detached while the ledger held a mapping'
expect_match "ledger empty" "$(p2pctl status)" 'mappings: +0'
expect_eq "only the forced GPUs hold the module" "$(refcnt)" 2
out=$(nvflow create 0 1) || fail "create again: $out"
st=$(p2pctl status)
echo "$st"
expect_line "one reference, a fresh entry" "$st" '^0 +1 +pcie-bar1 +1 '
run nvflow destroy "$(kv object "$out")" >/dev/null
expect_match "ledger empty again" "$(p2pctl status)" 'mappings: +0'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim

echo "== unrecorded references go at the detach"
P=/sys/module/p2p_shim/parameters
run insmod /lib/p2p-shim/faults/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
echo 1 >$P/fault_ledger_nomem
out=$(nvflow create 0 1) || fail "create: $out"
echo 0 >$P/fault_ledger_nomem
expect_refused "disable refused: an unrecorded reference" '1 unrecorded' p2pctl disable
out=$(nvflow reinit-unseen 0) || fail "reinit-unseen: $out"
expect_match "nothing live" "$(p2pctl status)" 'mappings: +0'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
