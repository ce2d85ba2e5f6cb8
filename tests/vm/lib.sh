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

# expect_fail WHAT CMD...: CMD must exit non-zero.
expect_fail() {
	what=$1
	shift
	if "$@"; then fail "$what: '$*' succeeded"; fi
	echo "ok: $what: '$*' failed as expected"
}

# run CMD...: CMD must exit zero.
run() {
	"$@" || fail "'$*' exited $?"
}

# Kernel log lines written since the last call of klog_mark.
klog_mark() { dmesg -c >/dev/null; }
klog_since() { dmesg; }

module_loaded() { grep -q "^$1 " /proc/modules; }

# kv KEY TEXT: the value of the first "KEY=value" line of TEXT (nvflow output).
kv() { echo "$2" | sed -n "s/^$1=//p" | head -n 1; }
