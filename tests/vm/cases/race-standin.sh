# SPDX-License-Identifier: GPL-2.0
# The machinery the race-* cases stand on (issue 28): the VM has two CPUs
# and full preemption; the stand-in's hold points park calls, and its
# locks behave as RM's do: the P2P caps control takes the RM API lock
# shared and every GPU lock, so a parked caps lets a shared reader through
# but holds a second caps (GPU locks) and an allocation (API lock,
# exclusive) until it is released; a forgotten hold goes by itself after
# hold_timeout with a log line, not a WARN.
. /cases/lib.sh

cleanup() { nvflow release all 2>/dev/null; wait; }
trap cleanup EXIT

expect_eq "two CPUs" "$(nproc)" 2
if [ -r /sys/kernel/debug/sched/preempt ]; then
	expect_match "full preemption" "$(cat /sys/kernel/debug/sched/preempt)" '\(full\)'
else
	echo "no dynamic preemption on $(uname -r)"
fi

run insmod /lib/standin/580.159.04/nvidia.ko hold_timeout=6
expect_match "hold points listed" "$(nvflow held)" '^attach armed=0 parked=0 total=0 cpus= caps .*create .*pte .*sb1 '
expect_fail "unknown point refused" nvflow hold nowhere

echo "== caps parked: API lock shared, GPU locks held"
run nvflow hold caps
nvflow caps 0 1 >caps1.out 2>&1 &
c1=$!
run nvflow wait-held caps 1 10
nvflow state >state.out 2>&1 &
sp=$!
i=0
while [ $i -lt 20 ] && kill -0 $sp 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
kill -0 $sp 2>/dev/null && fail "a shared reader (state) blocked behind a parked caps"
wait $sp || fail "state: $(cat state.out)"
nvflow caps 1 0 >caps2.out 2>&1 &
c2=$!
nvflow create 0 1 --type pcie >create.out 2>&1 &
cr=$!
sleep 1
expect_eq "second caps waits for the GPU locks, not parked" \
	"$(nvflow held caps | sed -n 's/.* parked=\([0-9]*\) .*/\1/p')" 1
kill -0 $c2 2>/dev/null || fail "second caps ran past the GPU locks: $(cat caps2.out)"
kill -0 $cr 2>/dev/null || fail "create ran past the API lock: $(cat create.out)"
run nvflow release caps
wait $c1 || fail "caps 0 1: $(cat caps1.out)"
wait $c2 || fail "caps 1 0: $(cat caps2.out)"
wait $cr
expect_eq "the caps answered" "$(kv connectivity "$(cat caps1.out)")" unknown
expect_match "the create ran after" "$(cat create.out)" 'status='
obj=$(kv object "$(cat create.out)")
[ -z "$obj" ] || run nvflow destroy "$obj" >/dev/null

echo "== a forgotten hold goes by itself"
klog_mark
run nvflow hold attach
t0=$(date +%s)
out=$(nvflow reinit 0) || fail "reinit 0: $out"
t1=$(date +%s)
echo "reinit took $((t1 - t0)) s"
[ $((t1 - t0)) -ge 5 ] || fail "reinit was not parked ($((t1 - t0)) s)"
expect_match "released by itself, logged" "$(klog_since)" 'hold point attach released by itself after 6 s'
expect_match "no longer armed" "$(nvflow held attach)" 'armed=0 parked=0 total=1'
expect_eq "GPU 0 initialised" "$(kv status "$out")" 0x0
run rmmod nvidia
