# SPDX-License-Identifier: GPL-2.0
# The lifecycle on the stand-in 580.159.04 with an AD102 pair armed from
# the start (both GPUs forced, one module reference each): mappings,
# rmmod refused, the residual state and every event in it, nvidia leaving
# with mappings and from residual, a version with no profile
# (docs/lifecycle.md).
# cells: armed.map armed.rmmod:mappings armed.disable:mappings armed.unmap armed.rmmod:forced
# cells: armed.disable:forced residual.load residual.disable residual.dry-run residual.rmmod
# cells: residual.uvm-in residual.uvm-out residual.enable
# cells: residual.gpu-reinit:not-last residual.gpu-attach residual.gpu-detach:not-last
# cells: residual.gpu-reinit:last residual.gpu-detach:last
# cells: residual.nv-out armed.nv-out:plain armed.nv-out:mappings waiting.nv-in:refused
. /cases/lib.sh
. /cases/life.sh

V=580.159.04
NV=/lib/standin/$V/nvidia.ko
UVM=/lib/standin/$V/nvidia-uvm.ko
SHIM=/lib/p2p-shim/p2p-shim.ko
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
H=20	# gen-b's hooks
R=6	# its residual set
INUSE='in use|Resource temporarily unavailable|busy'

run insmod $SHIM enable=1
run insmod $NV gpus="$G"
life_wait armed
echo "== armed, both GPUs forced"
expect_state "start" armed
expect_refcnt "start" 2

cell armed.map
out=$(nvflow create 0 1) || fail "create: $out"
obj=$(kv object "$out")
m=$(kv mapping "$(nvflow map "$obj" 0 0x200000 rm)")
[ -n "$m" ] || fail "no mapping"
expect armed $H 3 pcie_bar1
# The ledger: the pair and its BAR1 window; one reference while it holds any.
expect_match "ledger" "$(p2pctl status --json)" '"live_mappings": *2'
cell armed.rmmod:mappings
refused "rmmod with a mapping" "$INUSE" rmmod p2p_shim
expect armed $H 3 pcie_bar1
cell armed.disable:mappings
refused "disable with a mapping" 'live BAR1 peer mappings: GPU0-GPU1' p2pctl disable
expect armed $H 3 pcie_bar1
cell armed.unmap
run nvflow unmap "$m" >/dev/null
run nvflow destroy "$obj" >/dev/null
expect armed $H 2 pcie_bar1
cell armed.rmmod:forced
refused "rmmod with forced GPUs" "$INUSE" rmmod p2p_shim
expect armed $H 2 pcie_bar1

cell armed.disable:forced
klog_mark
run p2pctl disable
expect residual $R 2 unknown
expect_match "says the guard stays" "$(klog_since)" \
	"the caps guard stays for GPUs 0x3 \\(they carry a ForceP2P that forces P2P"
cell residual.load
refused "second load" 'exists' insmod $SHIM
expect residual $R 2 unknown
cell residual.disable
run p2pctl disable
expect residual $R 2 unknown
cell residual.dry-run
refused "dry run from residual" "GPUs 0x3 carry a ForceP2P.*re-initialise them first" \
	p2pctl enable --dry-run
expect residual $R 2 unknown
cell residual.rmmod
refused "rmmod in residual" "$INUSE" rmmod p2p_shim
expect residual $R 2 unknown
cell residual.uvm-in
run insmod $UVM
expect residual $R 2 unknown
cell residual.uvm-out
run rmmod nvidia_uvm
expect residual $R 2 unknown

cell residual.enable
run p2pctl enable
# The new set took over; the residual set is gone; the GPUs stay forced.
expect armed $H 2 pcie_bar1
run p2pctl disable
expect_state "residual again" residual

cell residual.gpu-reinit:not-last
cell residual.gpu-detach:not-last
cell residual.gpu-attach
# GPU0 detaches (reference dropped) and attaches without our ForceP2P;
# GPU1 still carries it: the guard stays.
run nvflow reinit 0 >/dev/null
expect residual $R 1 unknown
cell residual.gpu-reinit:last
cell residual.gpu-detach:last
klog_mark
run nvflow reinit 1 >/dev/null
life_wait disabled
expect disabled 0 0 unknown
expect_match "says the guard went" "$(klog_since)" 'caps guard removed'

echo "== nvidia leaves from residual"
run p2pctl enable
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
expect_refcnt "re-armed, forced again" 2
run p2pctl disable
expect_state "residual" residual
cell residual.nv-out
run rmmod nvidia
life_wait disabled
expect disabled 0 0

echo "== nvidia leaves while armed"
run p2pctl enable
expect_state "waiting" waiting
run insmod $NV gpus="$G" unload_destroys=0
life_wait armed
cell armed.nv-out:mappings
out=$(nvflow create 0 1) || fail "create: $out"
obj=$(kv object "$out")
run nvflow map "$obj" 0 0x200000 rm >/dev/null
expect armed $H 3 pcie_bar1
klog_mark
run rmmod nvidia
expect waiting 0 0
# The GPUs detach in nvidia's exit: the ledger forgets their mappings.
expect_match "ledger dropped" "$(klog_since)" \
	'GPU 0 detached while the ledger held a mapping of it \(torn down unseen\): forgotten'
cell armed.nv-out:plain
run insmod $NV gpus="$G"
life_wait armed
# Re-initialise both GPUs with the user's own ForceP2P: none is forced.
echo "ForceP2P=0" >/sys/kernel/debug/nvidia-standin/registry
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
expect armed $H 0
run rmmod nvidia
expect waiting 0 0

cell waiting.nv-in:refused
klog_mark
run insmod /lib/standin/545.29.06/nvidia.ko gpus="$G"
life_wait disabled
expect disabled 0 0 unknown
expect_match "refused on arrival" "$(klog_since)" "enable refused on nvidia's arrival: nvidia 545.29.06 has no profile"
run rmmod nvidia
run rmmod p2p_shim
life_done
