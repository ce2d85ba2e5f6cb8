# SPDX-License-Identifier: GPL-2.0
# Every way out while GPUs carry p2p-shim's ForceP2P (issue 21, items 1
# and 2).  Such GPUs keep the setting until they re-initialise; without the
# caps guard a GeForce pair of them is offered the mailbox path, whose
# copies report success and land nowhere.  So each forced GPU holds the
# module: rmmod is refused while armed or residual with forced GPUs, and
# every exit order a user can take ends in a clean unload.  Before the fix
# `rmmod p2p_shim` went through while armed and the pair got
# connectivity=pcie, read=OK (and the disarm queued the residual work on
# the freed module).
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
refcnt() { cat /sys/module/p2p_shim/refcnt; }
nv_probes() { grep -c '\[nvidia\]' /sys/kernel/debug/kprobes/list 2>/dev/null || true; }
never_mailbox() {	# WHAT: the pair is never offered the mailbox path
	out=$(nvflow caps 0 1)
	expect_no_match "$1: no mailbox offer" "$(kv connectivity "$out")" '^pcie$'
}
armed_forced() {
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
	expect_eq "armed: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	expect_eq "armed: one reference per forced GPU" "$(refcnt)" 2
}

echo "== rmmod while armed with forced GPUs: refused"
armed_forced
out=$(rmmod p2p_shim 2>&1) && fail "rmmod went through while GPUs carry ForceP2P"
expect_match "rmmod refused: in use" "$out" 'in use|Resource temporarily unavailable|busy'
expect_match "still armed" "$(p2pctl status)" 'state: +armed'
expect_eq "still BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1

echo "== order: nvidia first, then p2p-shim"
run rmmod nvidia
expect_eq "nvidia gone: no reference" "$(refcnt)" 0
expect_eq "nvidia gone: no probe on nvidia" "$(nv_probes)" 0
run rmmod p2p_shim

echo "== order: disable, re-initialise the GPUs, then unload"
armed_forced
run p2pctl disable
expect_match "residual" "$(p2pctl status)" 'state: +residual'
never_mailbox "residual"
expect_eq "residual: forced GPUs still hold it" "$(refcnt)" 2
expect_fail "rmmod refused in residual" rmmod p2p_shim
run nvflow reinit 0 >/dev/null
expect_eq "one GPU re-initialised: one reference" "$(refcnt)" 1
never_mailbox "one re-initialised"
run nvflow reinit 1 >/dev/null
sleep 1
expect_match "disabled by itself" "$(p2pctl status)" 'state: +disabled'
expect_eq "no reference left" "$(refcnt)" 0
expect_eq "no probe left" "$(nv_probes)" 0
expect_eq "stock answer" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
run rmmod p2p_shim
run rmmod nvidia

echo "== order: disable, unload nvidia, then p2p-shim; then enable again"
armed_forced
run p2pctl disable
run rmmod nvidia
expect_match "nvidia gone: disabled" "$(p2pctl status)" 'state: +disabled'
expect_eq "nvidia gone: no reference" "$(refcnt)" 0
run p2pctl enable
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "re-enabled: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
expect_eq "re-enabled: forced again" "$(refcnt)" 2
run rmmod nvidia
run rmmod p2p_shim

echo "== GPUs initialised before p2p-shim: not forced, rmmod allowed while armed"
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
expect_eq "late: stock answer" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
expect_eq "late: no reference" "$(refcnt)" 0
run rmmod p2p_shim
expect_eq "after rmmod: still stock" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
echo "== and re-enable after that rmmod: reinit gets forced"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
expect_eq "reinit under the shim: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
expect_eq "reinit under the shim: forced" "$(refcnt)" 2
run rmmod nvidia
run rmmod p2p_shim
