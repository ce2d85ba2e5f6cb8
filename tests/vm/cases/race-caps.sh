# SPDX-License-Identifier: GPL-2.0
# A caps query in flight while the caps guard changes hands (issue 28;
# lifecycle spec: a forced GeForce pair never gets the mailbox offer).
# The GPUs have 256 MiB BARs (no static BAR1): with p2p-shim's ForceP2P
# the driver itself would offer the mailbox path (connectivity pcie,
# read/write OK), and only the guard's return hook on p2pGetCapsStatus puts
# the stock answer back.  A query is parked inside p2pGetCapsStatus (its
# entry seen, its return still to come) while
#   - p2pctl disable takes the module from armed to residual, and
#   - p2pctl enable takes it from residual back to armed (the new set is
#     installed, then the residual set removed: a kretprobe unregistered
#     under a call would drop that call's return handler);
# each time the parked query must come back with the stock answer.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0xf0000000/256M;AD102@0000:02:00.0,vram=24G,bar1=0xe0000000/256M'

trap release_and_unload EXIT

stock() {	# stock WHAT OUTPUT: the stock "no P2P", never the mailbox offer
	echo "$1: $(echo "$2" | tr '\n' ' ')"
	expect_eq "$1: connectivity" "$(kv connectivity "$2")" unknown
	expect_eq "$1: read" "$(kv read "$2")" NOT_SUPPORTED
	expect_eq "$1: write" "$(kv write "$2")" NOT_SUPPORTED
}

run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
st=$(nvflow state)
expect_no_match "GPU 0 forced" "$(kv gpu0.p2p_override "$st")" '^0xffffffff$'
expect_no_match "GPU 1 forced" "$(kv gpu1.p2p_override "$st")" '^0xffffffff$'
stock "armed" "$(nvflow caps 0 1)"

# transition WHAT CMD...: park a caps query, run CMD beside it, release.
transition() {
	what=$1
	shift
	run nvflow hold caps
	nvflow caps 0 1 >caps.out 2>&1 &
	cp=$!
	run nvflow wait-held caps 1 30
	"$@" >cmd.out 2>&1 &
	cmd=$!
	sleep 1
	run nvflow release caps
	wait $cp || fail "$what: caps: $(cat caps.out)"
	wait $cmd || fail "$what: '$*': $(cat cmd.out)"
	cat cmd.out
	stock "$what: the parked query" "$(cat caps.out)"
	stock "$what: a new query" "$(nvflow caps 0 1)"
}

echo "== armed -> residual with a caps query in flight"
transition "disable" p2pctl disable
expect_match "residual" "$(p2pctl status)" 'state: +residual'

echo "== residual -> armed (hand-over) with a caps query in flight"
transition "enable" p2pctl enable
expect_match "armed" "$(p2pctl status)" 'state: +armed'

echo "== teardown"
run p2pctl disable
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
wait_match "p2pctl status" 'state: +disabled'
expect_match "disabled" "$(p2pctl status)" 'state: +disabled'
run rmmod nvidia
run rmmod p2p_shim
