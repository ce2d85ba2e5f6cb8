# SPDX-License-Identifier: GPL-2.0
# Helpers for VM case scripts: source /cases/lib.sh.  Every helper that
# checks something prints what it saw and fails the case (exit 1) on a
# mismatch, so a case script reads as a list of expectations.

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	echo "ok: $1 = '$3'"
}

# expect_match WHAT TEXT REGEX
expect_match() {
	printf "%s" "$2" | tr "\n" " " | grep -Eq -- "$3" || fail "$1: '$2' does not match /$3/"
	echo "ok: $1 ~ /$3/"
}

# expect_no_match WHAT TEXT REGEX
expect_no_match() {
	if printf "%s" "$2" | tr "\n" " " | grep -Eq -- "$3"; then fail "$1: '$2' matches /$3/"; fi
	echo "ok: $1 !~ /$3/"
}

# expect_line WHAT TEXT REGEX: some line of TEXT matches REGEX (where
# expect_match would let a match span lines, e.g. a table's header).
expect_line() {
	printf "%s\n" "$2" | grep -Eq -- "$3" || fail "$1: no line of '$2' matches /$3/"
	echo "ok: $1: a line ~ /$3/"
}

# expect_refused WHAT REGEX CMD...: CMD must exit non-zero, and its output
# (stdout and stderr together) must match REGEX: the reason, not any failure.
expect_refused() {
	what=$1 re=$2
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	[ $rc -ne 0 ] || fail "$what: '$*' succeeded: $out"
	printf "%s" "$out" | tr "\n" " " | grep -Eq -- "$re" ||
		fail "$what: '$*' exited $rc, but its output '$out' does not match /$re/"
	echo "ok: $what: '$*' refused (exit $rc): $(printf "%s" "$out" | head -n 1)"
}

# What busybox rmmod says when the module is in use (delete_module: EAGAIN
# under O_NONBLOCK, EBUSY otherwise).
RMMOD_BUSY='in use|Resource temporarily unavailable|Device or resource busy'

# expect_fail WHAT CMD...: CMD must exit non-zero.  Any failure passes:
# for a refusal use expect_refused, which checks the reason too.
expect_fail() {
	what=$1
	shift
	if "$@"; then fail "$what: '$*' succeeded"; fi
	echo "ok: $what: '$*' failed as expected"
}

# expect_lines WHAT TEXT N: TEXT has N non-empty lines (a dump that was
# not empty by accident, e.g. before comparing two of them).
expect_lines() {
	n=$(printf "%s\n" "$2" | grep -c .)
	[ "$n" = "$3" ] || fail "$1: $n lines, want $3: '$2'"
	echo "ok: $1: $3 lines"
}

# run CMD...: CMD must exit zero.
run() {
	"$@" || fail "'$*' exited $?"
}

# guarded WHAT A B: the caps guard gave GPUs A and B the stock "no P2P"
# (the answer p2p-shim writes; the driver's own refusals differ).
guarded() {
	out=$(nvflow caps "$2" "$3")
	expect_eq "$1: connectivity" "$(kv connectivity "$out")" unknown
	expect_eq "$1: read" "$(kv read "$out")" NOT_SUPPORTED
	expect_eq "$1: write" "$(kv write "$out")" NOT_SUPPORTED
}

# Kernel log lines written since the last call of klog_mark.
klog_mark() { dmesg -c >/dev/null; }
klog_since() { dmesg; }

module_loaded() { grep -q "^$1 " /proc/modules; }

# wait_match CMD REGEX: run the shell command CMD every 0.1 s until its
# output matches REGEX, for at most 10 s.  For what a work item finishes
# after the call that queued it has returned: a busy host can stall a vCPU
# for over a second.  It checks nothing itself; the checks after it do.
wait_match() {
	local w=0

	while [ $w -lt 100 ] && ! eval "$1" 2>/dev/null | grep -Eq "$2"; do
		usleep 100000
		w=$((w + 1))
	done
}

# kv KEY TEXT: the value of the first "KEY=value" line of TEXT (nvflow output).
kv() { echo "$2" | sed -n "s/^$1=//p" | head -n 1; }

# record TEXT: a line the harness keeps in its verdict even when the case
# passes (tests/vm/run prints it under "PASS <case>"): the seeds and counts
# of a reliability case, so that make check's log says what it ran.
record() { echo "record: $*"; }

# The reliability cases' scale: tests/vm/run -x SCALE, else the per-case
# limit (tests/vm/run -t SECONDS) over tests/vm/run's default of 240 s.
# make check runs 1x, with fixed seeds (reproducible); a bigger run (-t
# 480: 2x, ...) does more work, with fresh seeds.
case_scale() {
	l=$(sed -n 's/.*p2ptest\.scale=\([0-9]*\).*/\1/p' /proc/cmdline)
	[ -z "$l" ] || { echo "$l"; return; }
	l=$(sed -n 's/.*p2ptest\.case_timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
	l=$(( ${l:-240} / 240 ))
	[ "$l" -ge 1 ] || l=1
	echo "$l"
}
scale=$(case_scale)
# seed FIXED: FIXED at 1x, else a fresh random one.
seed() { if [ "$scale" -eq 1 ]; then echo "$1"; else echo 0x$(head -c 8 /dev/urandom | xxd -p); fi; }

# fuzz PROGRAM ARGS...: run a fuzzer (p2ps-fuzz, p2ps-nlfuzz), print its
# output, fail the case if it fails, and record its seed and counts.
fuzz() {
	fo=$("$@" 2>&1)
	frc=$?
	echo "$fo"
	record "$1 $(echo "$fo" | sed -n 's/^\(seed=[^ ]* count=[^ ]* uid=[^ ]*\).*/\1/p') $(echo "$fo" | sed -n 's/^total=\([0-9]*\) .* failures=\([0-9]*\)$/done=\1 failures=\2/p') args: ${*#"$1"}"
	[ $frc -eq 0 ] || fail "'$*' exited $frc"
}

# uvm VERB ARG...: one command to the stand-in nvidia-uvm's control file;
# prints its answer, fails if the write is refused.
UVM_CTL=/sys/kernel/debug/nvidia-uvm-standin/ctl
uvm() {
	exec 3<>$UVM_CTL
	if ! printf '%s' "$*" >&3; then
		exec 3>&-
		return 1
	fi
	cat <&3
	exec 3>&-
}

# kprobes_on MODULE: how many kprobes sit in MODULE (nvidia, nvidia_uvm).
# The list's lines are "ADDRESS  TYPE  SYMBOL+OFFSET  MODULE [FLAGS]": the
# module is a bare field, not "[module]" as in /proc/kallsyms.
kprobes_on() {
	awk -v m="$1" '$4 == m' /sys/kernel/debug/kprobes/list 2>/dev/null | wc -l
}

# park_reinit POINT GPU: re-initialise GPU in the background and wait until
# it is parked at the stand-in's hold POINT (docs/standin.md); the case
# then acts while it is there.  unpark POINT lets it go and fails the case
# if the re-initialisation failed; its output is in reinit.out.
park_reinit() {
	run nvflow hold "$1"
	nvflow reinit "$2" >reinit.out 2>&1 &
	parked_pid=$!
	parked_gpu=$2
	run nvflow wait-held "$1" 1 30
}
unpark() {
	run nvflow release "$1"
	wait "$parked_pid" || fail "reinit $parked_gpu failed: $(cat reinit.out)"
}

# For cases that park calls at the stand-in's hold points (trap it on EXIT):
# nothing left parked, nothing left loaded for the next case.
release_and_unload() {
	nvflow release all 2>/dev/null
	wait
	for m in nvidia_uvm nvidia; do module_loaded $m && rmmod $m 2>/dev/null; done
	module_loaded p2p_shim && p2pctl disable >/dev/null 2>&1 && rmmod p2p_shim 2>/dev/null
	true
}
