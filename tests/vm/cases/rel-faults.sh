# SPDX-License-Identifier: GPL-2.0
# vm-tags: every-kernel
# Reliability under faults.  Each fault ends in a clear error or a clean
# transition, and a consistent state, asserted:
#   - nvidia removed and re-inserted while armed (10 rounds);
#   - nvidia removed during object churn (with and without unload_destroys),
#     and while a process holds the stand-in's debugfs file open;
#   - p2p-shim removal with a live mapping (refused, nothing changes);
#   - enable/disable racing a background insmod/rmmod nvidia loop;
#   - every fail_gh100 body, fault-nosym and fault-stub.
# "Consistent": the ledger (P2PS_IOC_STATUS live) is non-zero exactly when
# the stand-in holds BAR1 refcounts or IOVA mappings made through the
# hooks; disabled means no hook and no kprobe; both modules unload at the end.
. /cases/lib.sh
G='AD102@0000:01:00.0;AD102@0000:02:00.0;AD102@0000:03:00.0;AD102@0000:04:00.0'
NV=/lib/standin/580.159.04/nvidia.ko
raw() { p2ps-raw status | sed -n 's/^state=/state=/p'; }
nkprobes() { wc -l </sys/kernel/debug/kprobes/list; }
standin_busy() {
	nvflow state | grep -Eq 'bar1_peer_refcount\.[0-9]+=[1-9]|iova_mappings=[1-9]' && echo 1 || echo 0
}
ledger_busy() { raw | grep -q ' live=0 ' && echo 0 || echo 1; }
consistent() {	# WHAT: the ledger and the stand-in agree
	expect_eq "$1: ledger busy == stand-in busy" "$(ledger_busy)" "$(standin_busy)"
}
rmmod_retry() {	# rmmod M, retrying while it is busy (a process has it open)
	n=0
	until rmmod "$1" 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 200 ] || fail "rmmod $1 refused 200 times"
		usleep 20000
	done
	busy_retries=$((busy_retries + n))
}
busy_retries=0
t0=$(date +%s)

run insmod /lib/p2p-shim/p2p-shim.ko
run p2pctl enable
echo "== 1. nvidia out and back while armed, 10 rounds"
run insmod $NV gpus="$G"
for i in 1 2 3 4 5 6 7 8 9 10; do
	run rmmod nvidia
	expect_match "round $i: waiting" "$(raw)" '^state=1 .*hooks=0 live=0 .*driver= '
	[ "$(nkprobes)" = 0 ] || fail "round $i: kprobes left while nvidia is away"
	run insmod $NV gpus="$G"
	expect_match "round $i: re-armed" "$(raw)" '^state=2 .*hooks=20 live=0'
done >rounds.out
grep -c '^ok:' rounds.out | sed 's/^/checks passed: /'

echo "== 2. nvidia out during churn"
churn() {	# A B: prints how many objects and mappings it made
	made=0 mapped=0
	while [ ! -e stop ]; do
		out=$(nvflow create "$1" "$2" 2>/dev/null); obj=$(kv object "$out")
		[ -n "$obj" ] || { usleep 50000; continue; }
		made=$((made + 1))
		m=$(kv mapping "$(nvflow map "$obj" 0 0x200000 rm 2>/dev/null)")
		[ -n "$m" ] && mapped=$((mapped + 1))
		usleep $((RANDOM % 100000))
		[ -n "$m" ] && nvflow unmap "$m" >/dev/null 2>&1
		nvflow destroy "$obj" >/dev/null 2>&1
	done
	echo "churn $1-$2: objects=$made mapped=$mapped"
}
for ud in 1 0 1 0; do
	rm -f stop
	churn 0 1 >churn01.out & c1=$!
	churn 2 3 >churn23.out & c2=$!
	sleep 2
	klog_mark
	rmmod_retry nvidia
	touch stop
	wait $c1 $c2
	cat churn01.out churn23.out
	record "churn, unload_destroys=$ud: $(cat churn01.out churn23.out | tr '\n' ' ')"
	# The unload met live objects and mappings: churn made some.
	expect_match "unload_destroys=$ud: churn 0-1 made objects and mappings" "$(cat churn01.out)" 'objects=[1-9][0-9]* mapped=[1-9]'
	expect_match "unload_destroys=$ud: churn 2-3 made objects and mappings" "$(cat churn23.out)" 'objects=[1-9][0-9]* mapped=[1-9]'
	log=$(klog_since)
	echo "$log" | grep -E 'left with|left-over|disarmed' | sed 's/^/    /'
	expect_match "unload_destroys=$ud: waiting, ledger empty" "$(raw)" '^state=1 .*hooks=0 live=0'
	[ "$(nkprobes)" = 0 ] || fail "kprobes left after nvidia left"
	run insmod $NV gpus="$G" unload_destroys=$ud
	expect_match "re-armed" "$(raw)" '^state=2 .*hooks=20 live=0'
	consistent "after re-insert"
done
record "rmmod nvidia refused (busy) and retried $busy_retries times during churn"

echo "== 2b. a process holds the stand-in's debugfs file open"
exec 3</sys/kernel/debug/nvidia-standin/ctl
if rmmod nvidia 2>rmmod.err; then
	echo "rmmod nvidia succeeded with ctl open (debugfs revokes the file)"
	exec 3<&-
	run insmod $NV gpus="$G"
else
	echo "rmmod nvidia refused with ctl open: $(cat rmmod.err)"
	exec 3<&-
	expect_match "still armed" "$(raw)" '^state=2 .*hooks=20'
fi
consistent "after the open-file unload attempt"

echo "== 3. p2p-shim removal with a live mapping"
out=$(nvflow create 0 1) || fail "create: $out"
obj=$(kv object "$out")
m=$(kv mapping "$(nvflow map "$obj" 0 0x200000 rm)")
before=$(raw)
expect_refused "rmmod p2p_shim refused" "$RMMOD_BUSY" rmmod p2p_shim
expect_eq "nothing changed" "$(raw)" "$before"
expect_refused "disable with a live mapping names the pair" 'busy: live BAR1 peer mappings: GPU0-GPU1 \(1\)' \
	p2pctl disable
consistent "live mapping"
run nvflow unmap "$m" >/dev/null
run nvflow destroy "$obj" >/dev/null
consistent "after teardown"
run p2pctl disable
# The GPUs attached while armed carry our ForceP2P: the caps guard stays,
# and holds the module, until they re-initialise.
expect_refused "rmmod p2p_shim refused while GPUs carry our ForceP2P" "$RMMOD_BUSY" rmmod p2p_shim
for g in 0 1 2 3; do run nvflow reinit $g >/dev/null; done
sleep 1
run rmmod p2p_shim
run insmod /lib/p2p-shim/p2p-shim.ko

echo "== 4. enable/disable racing insmod/rmmod nvidia"
run rmmod nvidia
# The racer runs 30 rounds, and on until its rmmod has both gone through
# and been refused (at most 300): how often an rmmod lands while the shim
# holds nvidia depends on the kernel and the host's load (5.10 under TCG:
# 1 to 5 refusals in 30 rounds; it saw none once in CI).
(
	i=0 ok=0 busy=0
	while [ $i -lt 30 ] || { [ $((ok * busy)) -eq 0 ] && [ $i -lt 300 ]; }; do
		insmod $NV gpus='AD102@0000:01:00.0;AD102@0000:02:00.0' 2>/dev/null
		usleep $((RANDOM % 50000))
		if rmmod nvidia 2>/dev/null; then ok=$((ok + 1)); else busy=$((busy + 1)); fi
		i=$((i + 1))
	done
	echo "racer: $i insmod/rmmod rounds, rmmod ok=$ok refused=$busy"
) >racer.out 2>&1 &
racer=$!
race_rc=0 cycles=0
: >race.out
while kill -0 $racer 2>/dev/null; do
	p2ps-soak -r cycle 10 >>race.out 2>&1 || race_rc=1
	cycles=$((cycles + 10))
done
wait $racer
grep FAIL race.out
armed=$(sed -n 's/.* armed=\([0-9]*\).*/\1/p' race.out | awk '{ s += $1 } END { print s + 0 }')
echo "racing: $cycles enable/disable cycles, armed in $armed of them"
cat racer.out
expect_eq "racing cycles" "$race_rc" 0
# The race is only one if both sides happened: some cycles armed (nvidia
# was there), some did not, and the racer's rmmod both won and lost.
[ "$armed" -ge 1 ] || fail "racing: no cycle armed (nvidia never there while enabling)"
[ "$armed" -lt "$cycles" ] || fail "racing: every cycle armed (nvidia never away)"
expect_match "racing: rmmod nvidia both went through and was refused" "$(cat racer.out)" 'rmmod ok=[1-9][0-9]* refused=[1-9]'
record "racing: $cycles enable/disable cycles, armed in $armed; $(cat racer.out)"
grep -q '^nvidia ' /proc/modules && rmmod_retry nvidia
run p2pctl disable
expect_match "disabled at rest" "$(raw)" '^state=0 .*hooks=0 live=0 .*driver= '
expect_eq "no kprobes" "$(nkprobes)" 0
run insmod $NV gpus="$G"
run p2pctl enable
expect_match "arms normally afterwards" "$(raw)" '^state=2 .*hooks=20 live=0'
run p2pctl disable
run rmmod nvidia

echo "== 5. every fail_gh100 body"
# What each failing body must lead to, from the stand-in's driver code
# (tests/standin/nv-kernel.c), not from a run: the statuses of create,
# map (with its aperture), unmap and destroy ("-": not reached), and
# whether the driver keeps a BAR1 mapping afterwards (1: its error path
# does not undo it, and the ledger must say so too).
#   - the create bodies (ForBar1P2P, the HAL's CreateP2PMapping) fail
#     with 0xffff (the injected NV_ERR_GENERIC) and nothing is mapped;
#   - GetBar1P2PDmaInfo fails after the BAR1 mapping was made: create
#     returns 0xffff and the driver keeps the mapping;
#   - IsPcieBar1P2PMappingSupported failing makes the pair unsupported:
#     create returns NV_ERR_NOT_SUPPORTED (0x56);
#   - HasPcieBar1P2PMapping failing makes the driver think there is no
#     BAR1 mapping: the peer is mapped through PEER (NVLink-style) PTEs;
#   - the remove bodies fail on destroy (0xffff) and the mapping stays;
#   - dmaAllocBar1P2PMapping fails the map (0xffff, no aperture).
expect_fault() {	# BODY: the expected "create:... map:... unmap:... destroy:..." and busy
	case $1 in
	kbusCreateP2PMappingForBar1P2P_GH100) echo "create:0xffff|0" ;;
	kbusRemoveP2PMappingForBar1P2P_GH100) echo "create:0x0 map:0x0/SYS_NONCOH unmap:0x0 destroy:0xffff|1" ;;
	kbusGetBar1P2PDmaInfo_GH100) echo "create:0xffff|1" ;;
	kbusHasPcieBar1P2PMapping_GH100) echo "create:0x0 map:0x0/PEER unmap:0x0 destroy:0x0|0" ;;
	kbusIsPcieBar1P2PMappingSupported_GH100) echo "create:0x56|0" ;;
	kbusCreateP2PMapping_GH100) echo "create:0xffff|0" ;;
	kbusRemoveP2PMapping_GH100) echo "create:0x0 map:0x0/SYS_NONCOH unmap:0x0 destroy:0xffff|1" ;;
	dmaAllocBar1P2PMapping_GH100) echo "create:0x0 map:0xffff/ destroy:0x0|0" ;;
	esac
}
for f in kbusCreateP2PMappingForBar1P2P_GH100 kbusRemoveP2PMappingForBar1P2P_GH100 \
	 kbusGetBar1P2PDmaInfo_GH100 kbusHasPcieBar1P2PMapping_GH100 \
	 kbusIsPcieBar1P2PMappingSupported_GH100 kbusCreateP2PMapping_GH100 \
	 kbusRemoveP2PMapping_GH100 dmaAllocBar1P2PMapping_GH100; do
	want=$(expect_fault $f)
	run p2pctl enable
	run insmod $NV gpus="$G" fail_gh100=$f
	res=
	out=$(nvflow create 0 1 2>&1); rc=$?
	obj=$(kv object "$out")
	res="create:$(kv status "$out")"
	if [ -n "$obj" ]; then
		out=$(nvflow map "$obj" 0 0x200000 rm 2>&1)
		m=$(kv mapping "$out")
		res="$res map:$(kv status "$out")/$(kv aperture "$out")"
		consistent "$f: mapped"
		if [ -n "$m" ]; then
			out=$(nvflow unmap "$m" 2>&1)
			res="$res unmap:$(kv status "$out")"
		fi
		out=$(nvflow destroy "$obj" 2>&1)
		res="$res destroy:$(kv status "$out")"
	fi
	echo "$f: $res"
	expect_eq "$f: results" "$res" "${want%|*}"
	expect_eq "$f: the driver keeps a BAR1 mapping" "$(standin_busy)" "${want#*|}"
	consistent "$f: after teardown"

	if [ "$(ledger_busy)" = 1 ]; then
		# The driver kept a mapping it could not remove: disable must refuse.
		expect_refused "$f: disable refused while the driver holds a mapping" \
			'busy: live BAR1 peer mappings: GPU0-GPU1 \(1\)' p2pctl disable
		run rmmod nvidia
		expect_match "$f: nvidia gone, ledger dropped" "$(raw)" ' live=0 '
		run p2pctl disable
	else
		run p2pctl disable
		run rmmod nvidia
	fi
	expect_match "$f: disabled" "$(raw)" '^state=0 .*hooks=0 live=0'
done

echo "== 6. fault-nosym and fault-stub"
for f in "fault-nosym kbusGetBar1P2PDmaInfo ENOENT" \
	 "fault-stub kbusIsPcieBar1P2PMappingSupported_d69453 EILSEQ"; do
	set -- $f
	run insmod /lib/standin/$1/nvidia.ko
	out=$(p2ps-raw enable 2>&1)
	echo "$out"
	expect_match "$1: refused with $3, naming the target" "$out" "rc=$3 state=0 target=$2"
	expect_match "$1: disabled, no hook" "$(raw)" '^state=0 .*hooks=0 live=0'
	expect_eq "$1: no kprobes" "$(nkprobes)" 0
	# And when the driver arrives while waiting.
	run rmmod nvidia
	run p2pctl enable
	klog_mark
	run insmod /lib/standin/$1/nvidia.ko
	expect_match "$1: refused on arrival" "$(klog_since)" "enable refused on nvidia's arrival: $2"
	expect_match "$1: disabled after arrival" "$(raw)" '^state=0 .*hooks=0 live=0'
	expect_eq "$1: no kprobes" "$(nkprobes)" 0
	run rmmod nvidia
done
run rmmod p2p_shim
echo "rel-faults: done in $(( $(date +%s) - t0 )) s"
