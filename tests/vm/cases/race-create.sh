# SPDX-License-Identifier: GPL-2.0
# Disable and rmmod during a redirected create (issues 28, 21): a BAR1
# P2P object's creation is parked inside kbusCreateP2PMappingForBar1P2P_GH100
# (where p2p-shim sent the stub slot), half done: the pair's IOVA mapping
# made, the refcounts not yet taken.  Then:
#   - rmmod p2p_shim is refused (the forced GPUs hold module references);
#   - p2pctl disable does not go through: it is refused (a mapping in
#     flight), or waits and is then refused for the live mapping;
# and after the release the mapping exists, the ledger has it, and it
# tears down.  The harness fails the case on any WARN or oops.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'

trap release_and_unload EXIT

run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "armed: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
# refcount: a pair's BAR1 P2P refcount (the state omits a zero one)
refcount() { kv gpu0.bar1_peer_refcount.1 "$(nvflow state)"; }
expect_eq "no BAR1 refcount yet" "$(refcount)" ""

echo "== create parked mid-call"
run nvflow hold create
nvflow create 0 1 >create.out 2>&1 &
cpid=$!
run nvflow wait-held create 1 30
klog_mark

echo "== rmmod p2p_shim while the create is parked"
out=$(rmmod p2p_shim 2>&1) && fail "rmmod p2p_shim went through during a create: $out"
echo "$out"
expect_match "rmmod refused: in use" "$out" 'in use|unavailable|busy'
module_loaded p2p_shim || fail "p2p_shim gone"

echo "== disable while the create is parked"
p2pctl disable >disable.out 2>&1 &
dpid=$!
# Refused at once, or waiting for the call: either way, not through.
i=0
while [ $i -lt 20 ] && kill -0 $dpid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
if kill -0 $dpid 2>/dev/null; then
	echo "disable waits for the create in flight"
else
	wait $dpid && fail "disable went through during a create: $(cat disable.out)"
	dpid=
	cat disable.out
	expect_match "disable refused: busy" "$(cat disable.out)" 'busy|in flight|initialising|mapping'
fi
expect_eq "create still parked" "$(nvflow held create | sed -n 's/.* parked=\([0-9]*\) .*/\1/p')" 1

echo "== release"
run nvflow release create
wait $cpid || fail "create failed: $(cat create.out)"
out=$(cat create.out)
echo "$out" | tr '\n' ' '; echo
expect_eq "object is BAR1 P2P" "$(kv type "$out")" pcie_bar1
expect_eq "created" "$(kv status "$out")" 0x0
obj=$(kv object "$out")
if [ -n "$dpid" ]; then
	wait $dpid && fail "disable went through after waiting for the create: $(cat disable.out)"
	cat disable.out
	expect_match "disable then refused for the live mapping" "$(cat disable.out)" 'busy|mapping'
fi
st=$(p2pctl status)
echo "$st"
expect_match "still armed" "$st" 'state: +armed'
expect_match "the ledger has the mapping" "$st" 'mappings: +1'
expect_eq "BAR1 refcount taken" "$(refcount)" 1
log=$(klog_since)
expect_no_match "no left-over or unknown mapping" "$log" 'left-over|unknown mapping|not in the ledger'

echo "== teardown"
out=$(nvflow destroy "$obj") || fail "destroy: $out"
expect_eq "refcount back" "$(refcount)" ""
expect_match "ledger empty" "$(p2pctl status)" 'mappings: +0'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
