# SPDX-License-Identifier: GPL-2.0
# Every way out while GPUs carry p2p-shim's ForceP2P (issue 21, items 1
# and 2).  Such GPUs keep the setting until they re-initialise; without the
# caps guard a GeForce pair of them is offered the mailbox path, whose
# copies report success and land nowhere.  So each forced GPU holds the
# module: rmmod is refused while armed or residual with forced GPUs, and
# every exit order a user can take ends in a clean unload.  Before the fix
# `rmmod p2p_shim` went through while armed and the pair got
# connectivity=pcie, read=OK (and the disarm queued the residual work on
# the freed module).  Each generation: gen-0 (550), gen-a1 (570), gen-b
# (580).  On gen 0 the static BAR1 that p2p-shim's hooks set up is in the
# ledger too (one more reference; disable refused while it lives), so the
# way out there is unloading nvidia.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
refcnt() { cat /sys/module/p2p_shim/refcnt; }
nv_probes() { kprobes_on nvidia; }
never_mailbox() {	# WHAT: the pair is never offered the mailbox path
	out=$(nvflow caps 0 1)
	expect_no_match "$1: no mailbox offer" "$(kv connectivity "$out")" '^pcie$'
}
armed_forced() {
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	expect_eq "armed: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	expect_eq "armed: one reference per forced GPU (+1 for the ledger on gen 0)" "$(refcnt)" \
		$((2 + ledger))
}

for v in 550.163.01 570.148.08 580.159.04; do
	ledger=0
	[ "$v" = 550.163.01 ] && ledger=1
	echo "== $v: rmmod while armed with forced GPUs: refused"
	armed_forced
	expect_refused "rmmod while GPUs carry ForceP2P" "$RMMOD_BUSY" rmmod p2p_shim
	expect_match "still armed" "$(p2pctl status)" 'state: +armed'
	expect_eq "still BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1

	echo "== $v: order: nvidia first, then p2p-shim"
	run rmmod nvidia
	expect_eq "nvidia gone: no reference" "$(refcnt)" 0
	expect_eq "nvidia gone: no probe on nvidia" "$(nv_probes)" 0
	run rmmod p2p_shim

	if [ "$ledger" = 1 ]; then
		echo "== $v: disable refused while the hooks' static BAR1 lives; nvidia first"
		armed_forced
		out=$(p2pctl disable 2>&1) && fail "disable went through with static BAR1 entries"
		expect_match "refusal names static BAR1" "$out" 'GPU0 static BAR1'
		expect_refused "rmmod refused" "$RMMOD_BUSY" rmmod p2p_shim
		never_mailbox "after the refusals"
		run rmmod nvidia
		expect_eq "nvidia gone: no reference" "$(refcnt)" 0
		run rmmod p2p_shim
		continue
	fi

	echo "== $v: order: disable, re-initialise the GPUs, then unload"
	armed_forced
	run p2pctl disable
	expect_match "residual" "$(p2pctl status)" 'state: +residual'
	never_mailbox "residual"
	expect_eq "residual: forced GPUs still hold it" "$(refcnt)" 2
	expect_refused "rmmod refused in residual" "$RMMOD_BUSY" rmmod p2p_shim
	run nvflow reinit 0 >/dev/null
	expect_eq "one GPU re-initialised: one reference" "$(refcnt)" 1
	never_mailbox "one re-initialised"
	run nvflow reinit 1 >/dev/null
	wait_match "p2pctl status" 'state: +disabled'
	expect_match "disabled by itself" "$(p2pctl status)" 'state: +disabled'
	expect_eq "no reference left" "$(refcnt)" 0
	expect_eq "no probe left" "$(nv_probes)" 0
	expect_eq "stock answer" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
	run rmmod p2p_shim
	run rmmod nvidia

	echo "== $v: order: disable, unload nvidia, then p2p-shim; then enable again"
	armed_forced
	run p2pctl disable
	run rmmod nvidia
	expect_match "nvidia gone: disabled" "$(p2pctl status)" 'state: +disabled'
	expect_eq "nvidia gone: no reference" "$(refcnt)" 0
	run p2pctl enable
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	expect_eq "re-enabled: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	expect_eq "re-enabled: forced again" "$(refcnt)" 2
	run rmmod nvidia
	run rmmod p2p_shim

	echo "== $v: GPUs initialised before p2p-shim: not forced, rmmod allowed while armed"
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	expect_eq "late: stock answer" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
	expect_eq "late: no reference" "$(refcnt)" 0
	run rmmod p2p_shim
	expect_eq "after rmmod: still stock" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
	echo "== $v: and re-enable after that rmmod: reinit gets forced"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run nvflow reinit 0 >/dev/null
	run nvflow reinit 1 >/dev/null
	expect_eq "reinit under the shim: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	expect_eq "reinit under the shim: forced" "$(refcnt)" 2
	run rmmod nvidia
	run rmmod p2p_shim
done
