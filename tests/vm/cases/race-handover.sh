# SPDX-License-Identifier: GPL-2.0
# A call that stays inside the driver while its hook set goes (issue 41,
# item 1).  Unregistering a kretprobe drops the return handler of the calls
# still inside the function; the caps guard and the GPU table's attach and
# detach bookkeeping are such handlers.  Before the fix a hook set's
# removal waited 10 s for those calls, then unregistered anyway.
#
# The GPUs have 256 MiB BARs (no static BAR1): with p2p-shim's ForceP2P
# the driver itself offers the mailbox path (connectivity pcie, read/write
# OK), and only the caps guard's return handler puts the stock answer back.
#   1. residual -> armed (the hand-over) with a caps query of the residual
#      set parked longer than 10 s: the parked query must come back stock
#      (before the fix: the mailbox offer), and the enable waits for it.
#   2. rmmod p2p_shim while a caps query is parked inside (armed, no GPU
#      forced, so nothing else holds the module): rmmod waits for the call,
#      and afterwards p2p-shim loads, arms and re-registers its probes at
#      the same addresses cleanly.
#   3. a call that never comes back (its task died in the driver): the
#      rmmod waiting for it is killed; the wait ends, the given-up call is
#      named in the log, and p2p-shim loads and arms again.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0xf0000000/256M;AD102@0000:02:00.0,vram=24G,bar1=0xe0000000/256M'
# Longer than the 10 s the removal used to wait before dropping the call.
PARK=13

trap release_and_unload EXIT

stock() {	# stock WHAT OUTPUT: the stock "no P2P", never the mailbox offer
	echo "$1: $(echo "$2" | tr '\n' ' ')"
	expect_eq "$1: connectivity" "$(kv connectivity "$2")" unknown
	expect_eq "$1: read" "$(kv read "$2")" NOT_SUPPORTED
	expect_eq "$1: write" "$(kv write "$2")" NOT_SUPPORTED
}

# parked CMD...: park a caps query, run CMD beside it for $PARK s, release
# the query; $waited says whether CMD was still running when it was
# released (it must wait for the call), caps.out has the query's answer.
parked() {
	run nvflow hold caps
	nvflow caps 0 1 >caps.out 2>&1 &
	cp=$!
	run nvflow wait-held caps 1 30
	"$@" >cmd.out 2>&1 &
	cmd=$!
	sleep $PARK
	waited=no
	kill -0 $cmd 2>/dev/null && waited=yes
	run nvflow release caps
	wait $cp || fail "caps: $(cat caps.out)"
	wait $cmd || fail "'$*': $(cat cmd.out)"
	cat cmd.out
}

echo "== 1. residual -> armed while a caps query of the residual set is inside for $PARK s"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
stock "armed" "$(nvflow caps 0 1)"
run p2pctl disable
expect_match "residual" "$(p2pctl status)" 'state: +residual'
parked p2pctl enable
stock "the query parked across the hand-over" "$(cat caps.out)"
expect_eq "the hand-over waited for the residual set's call" "$waited" yes
expect_match "armed" "$(p2pctl status)" 'state: +armed'
stock "a new query" "$(nvflow caps 0 1)"
run p2pctl disable
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
wait_match "p2pctl status" 'state: +disabled'
expect_match "disabled" "$(p2pctl status)" 'state: +disabled'
run rmmod nvidia
run rmmod p2p_shim

echo "== 2. rmmod p2p_shim while a caps query is inside for $PARK s"
run insmod /lib/p2p-shim/p2p-shim.ko
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
run p2pctl enable
expect_match "armed" "$(p2pctl status)" 'state: +armed'
parked rmmod p2p_shim
# Neither GPU carries a ForceP2P (they attached before p2p-shim armed):
# the driver's own "no P2P", whatever the guard does.
expect_eq "the query parked across rmmod: connectivity" "$(kv connectivity "$(cat caps.out)")" unknown
expect_eq "rmmod waited for the call its caps hook took" "$waited" yes
expect_fail "p2p_shim unloaded" module_loaded p2p_shim
echo "== and after, enable again"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
expect_match "armed again" "$(p2pctl status)" 'state: +armed'
n=$(kprobes_on nvidia)
[ "$n" -gt 0 ] || fail "no probe in nvidia after re-arming"
echo "ok: $n probes in nvidia"
expect_eq "a query after re-arming: connectivity" "$(kv connectivity "$(nvflow caps 0 1)")" unknown

echo "== 3. a call that does not come back: the waiting rmmod can be killed"
# A call whose task dies inside the driver never runs its return handler;
# the wait must not hold the lifecycle's lock (status, enable, rmmod) until
# a reboot.  Killing the waiting rmmod gives the call up, and says so.
expect_match "armed" "$(p2pctl status)" 'state: +armed'
run nvflow hold caps
nvflow caps 0 1 >caps.out 2>&1 &
cp=$!
run nvflow wait-held caps 1 30
klog_mark
rmmod p2p_shim >cmd.out 2>&1 &
cmd=$!
sleep 3
kill -0 $cmd 2>/dev/null || fail "rmmod did not wait for the parked call: $(cat cmd.out)"
kill -9 $cmd
# Bounded: a killed wait ends within its next 10 ms sleep; 10 s for TCG.
for i in $(seq 100); do kill -0 $cmd 2>/dev/null || break; sleep 0.1; done
kill -0 $cmd 2>/dev/null && fail "rmmod still waiting 10 s after SIGKILL"
wait $cmd 2>/dev/null
expect_match "the given-up call is named" "$(klog_since)" 'lose their return handler: the waiting task was killed'
expect_fail "p2p_shim unloaded" module_loaded p2p_shim
run nvflow release caps
wait $cp || fail "caps: $(cat caps.out)"
echo "== and after, enable again"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
expect_match "armed again" "$(p2pctl status)" 'state: +armed'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
