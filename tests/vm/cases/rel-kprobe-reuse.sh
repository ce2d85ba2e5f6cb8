# SPDX-License-Identifier: GPL-2.0
# vm-tags: every-kernel
# No probe of ours is ever jump-optimised, so nvidia can leave right after
# a disable and come back at the same addresses: enable; disable; rmmod
# nvidia; insmod nvidia; enable, six rounds, each one asserting that the
# kernel's kprobe list shows no [OPTIMIZED] probe on nvidia while armed.
# On IBT kernels (6.12, 7.x) a kretprobe sits after ENDBR and the kernel
# would optimise it; disable then leaves its unoptimisation to a worker,
# and if nvidia unloads first the kernel keeps a dead probe at that address:
# the next enable WARNs in register_kprobe and fails with -EINVAL for the
# rest of the boot (docs/kernels.md).  On 6.1 the list is checked all the
# same.
. /cases/lib.sh
G='AD102@0000:01:00.0;AD102@0000:02:00.0'
NV=/lib/standin/580.159.04/nvidia.ko
list=/sys/kernel/debug/kprobes/list
[ -r $list ] || fail "$list missing"
# Lines are "ADDR  TYPE  SYMBOL+OFF  MODULE [FLAGS]".
on_nv='[[:space:]]nvidia([[:space:]]|$)'
opt_nv='[[:space:]]nvidia[[:space:]].*\[OPTIMIZED\]'


# Positive control: the rounds below must be able to see an optimised
# probe.  A tracing kprobe inside vfs_read (past its first instruction,
# where an optimisable one fits; tracing refuses nvidia's functions, which
# are notrace) must show up [OPTIMIZED] in the same list, read the same
# way, within the same 2 s; else the check below could never fail on this
# kernel.
tr=/sys/kernel/tracing
[ -w $tr/kprobe_events ] || fail "$tr/kprobe_events missing"
control= off=
for off in $(seq 1 64); do
	echo "p:p2ptest/control vfs_read+$off" >>$tr/kprobe_events 2>/dev/null ||
		continue	# not an instruction boundary
	echo 1 >$tr/events/p2ptest/control/enable || fail "control: cannot enable vfs_read+$off"
	t=0
	while [ $t -lt 20 ] && ! grep -Eq "[[:space:]]vfs_read\+0x[0-9a-f]+[[:space:]].*\[OPTIMIZED\]" $list; do
		usleep 100000
		t=$((t + 1))
	done
	control=$(grep -E "[[:space:]]vfs_read\+0x[0-9a-f]+[[:space:]].*\[OPTIMIZED\]" $list)
	echo 0 >$tr/events/p2ptest/control/enable
	echo "-:p2ptest/control" >>$tr/kprobe_events
	[ -z "$control" ] || break
done
[ -n "$control" ] || fail "control: no kprobe in vfs_read was optimised within 2 s on $(uname -r): the check cannot see one"
echo "ok: control: optimised within $((t * 100)) ms: $control"
record "control: vfs_read+$off optimised within $((t * 100)) ms"
# The kernel unoptimises and frees it in a worker: wait for the list to empty.
t=0
while [ $t -lt 50 ] && [ -n "$(cat $list)" ]; do usleep 100000; t=$((t + 1)); done
expect_eq "control: kprobe gone" "$(cat $list)" ""

optimised=0 leftover=0
run insmod /lib/p2p-shim/p2p-shim.ko
run insmod $NV gpus="$G"

for i in 1 2 3 4 5 6; do
	run p2pctl enable
	n=$(grep -Ec "$on_nv" $list)
	[ "$n" -gt 0 ] || fail "round $i: armed, but no probe on nvidia listed"
	# The kernel optimises a few jiffies after registration, once an
	# RCU-tasks grace period has passed: give it time to.
	t=0
	while [ $t -lt 20 ] && ! grep -Eq "$opt_nv" $list; do
		usleep 100000
		t=$((t + 1))
	done
	[ $i = 1 ] && cat $list
	opt=$(grep -E "$opt_nv" $list)
	if [ -n "$opt" ]; then
		# Go on: the next rounds show what it leads to.
		echo "$opt"
		echo "BAD: round $i: $(echo "$opt" | wc -l) jump-optimised probes on nvidia"
		optimised=$((optimised + 1))
	else
		echo "ok: round $i: $n probes on nvidia, none optimised after 2 s"
	fi
	run p2pctl disable
	# At once: nothing may be left for a worker to do at nvidia's addresses.
	run rmmod nvidia
	# A probe the kernel still held for a worker stays listed, [GONE].
	left=$(cat $list)
	if [ -n "$left" ]; then
		echo "$left"
		echo "BAD: round $i: kprobes left after nvidia went"
		leftover=$((leftover + 1))
	fi
	run insmod $NV gpus="$G"
done
[ $optimised = 0 ] || fail "jump-optimised probes on nvidia in $optimised rounds"
[ $leftover = 0 ] || fail "kprobes left after nvidia went in $leftover rounds"
record "6 rounds: $optimised with optimised probes on nvidia, $leftover with kprobes left"
run p2pctl enable
expect_match "armed after the last round" "$(p2pctl status)" 'state: +armed'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
