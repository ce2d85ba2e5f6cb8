# SPDX-License-Identifier: GPL-2.0
# Helpers for the lifecycle cases (docs/lifecycle.md; tests/vm/cases-life
# and tests/real/cases/real-life-*.sh), on top of /cases/lib.sh.  A case
# names the cells it drives in a line "# cells: CELL ...", and each cell
# reads as: setup, `cell CELL`, the event, `expect STATE KPROBES REFCNT
# [CONNECTIVITY]`.  `life_done` at the end fails the case if a declared
# cell was not driven, or a driven one not declared.

# The state: "not-loaded" without the module, else status --json's key.
life_state() {
	if [ ! -d /sys/module/p2p_shim ]; then
		echo not-loaded
		return
	fi
	p2pctl status --json 2>/dev/null | sed -n 's/^ *"state": *"\([^"]*\)".*/\1/p' | head -n 1
}

# Probes on nvidia in the kernel's list, one per address (a return hook's
# guard kprobe shares its kretprobe's), less the real-driver loader's own
# (os_is_nvswitch_present) and LIFE_KPROBES_IGNORE (a symbol+ prefix).
# Lines: "ADDRESS  TYPE  SYMBOL+OFFSET  MODULE [FLAGS]".
life_kprobes() {
	awk -v ign="${LIFE_KPROBES_IGNORE:-}" '$4 == "nvidia" &&
		$3 !~ /^os_is_nvswitch_present\+/ && (ign == "" || index($3, ign "+") != 1) { print $1 }' \
		/sys/kernel/debug/kprobes/list | sort -u | wc -l
}

# The module's reference count, "-" when it is not loaded.
life_refcnt() {
	if [ -r /sys/module/p2p_shim/refcnt ]; then cat /sys/module/p2p_shim/refcnt; else echo -; fi
}

# A cell's expectations do not stop the case: a mismatch is printed and
# counted against the cell, and life_done fails the case, naming every
# cell that failed.  Setup steps (`run`) still stop it at once.
life_bad=/tmp/life-bad.$$
: >"$life_bad"
life_eq() {	# WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		echo "ok: $1 = '$3'"
	else
		echo "FAIL: $1: got '$2', want '$3'"
		echo "${life_cur:-setup} $1: got '$2', want '$3'" >>"$life_bad"
	fi
}

expect_state() { life_eq "$1: state" "$(life_state)" "$2"; }
expect_kprobes() { life_eq "$1: kprobes on nvidia" "$(life_kprobes)" "$2"; }
expect_refcnt() { life_eq "$1: refcnt" "$(life_refcnt)" "$2"; }

# expect_caps WHAT CONNECTIVITY: the caps answer for GPUs 0 and 1, never
# the mailbox offer (pcie with reads OK) that GeForce chips cannot serve.
# pcie_bar1: reads OK; unknown: reads refused (the driver's own
# GPU_NOT_SUPPORTED or the caps guard's NOT_SUPPORTED).
expect_caps() {
	out=$(nvflow caps 0 1)
	c=$(kv connectivity "$out")
	r=$(kv read "$out")
	[ "$c" = pcie ] && [ "$r" = OK ] && life_eq "$1: never the mailbox offer" "pcie/OK" "not pcie/OK"
	life_eq "$1: caps connectivity" "$c" "$2"
	case $2 in
	pcie_bar1) life_eq "$1: caps read" "$r" OK ;;
	*) case $r in
	   NOT_SUPPORTED | GPU_NOT_SUPPORTED) life_eq "$1: caps read refused" "$r" "$r" ;;
	   *) life_eq "$1: caps read refused" "$r" "NOT_SUPPORTED or GPU_NOT_SUPPORTED" ;;
	   esac ;;
	esac
}

life_cells=/tmp/life-cells.$$
: >"$life_cells"
life_cur=

# cell CELL: the cell the next expectations are about; it must be one the
# case declares.
cell() {
	grep -Eq "^# cells:(.* )?$1( |\$)" "$0" || fail "cell $1: not in the case's '# cells:' lines"
	life_cur=$1
	echo "== cell $1"
	echo "$1" >>"$life_cells"
}

# expect STATE KPROBES REFCNT [CONNECTIVITY]: the current cell's outcome.
expect() {
	[ -n "$life_cur" ] || fail "expect before any cell"
	expect_state "$life_cur" "$1"
	expect_kprobes "$life_cur" "$2"
	expect_refcnt "$life_cur" "$3"
	[ -z "${4:-}" ] || expect_caps "$life_cur" "$4"
}

# refused WHAT REGEX CMD...: CMD must fail with output matching REGEX.
refused() {
	what=$1 re=$2
	shift 2
	if out=$("$@" 2>&1); then
		life_eq "$what: '$*'" "succeeded: $out" "refused"
		return
	fi
	echo "$out" | sed 's/^/    /'
	if printf "%s" "$out" | tr "\n" " " | grep -Eq -- "$re"; then
		echo "ok: $what: refused ~ /$re/"
	else
		life_eq "$what: message" "$out" "/$re/"
	fi
}

# Wait up to 5 s for the state to become STATE (a work item, an arrival).
life_wait() {
	i=0
	while [ $i -lt 50 ] && [ "$(life_state)" != "$1" ]; do
		usleep 100000
		i=$((i + 1))
	done
}

life_done() {
	want=$(sed -n 's/^# cells://p' "$0" | tr -s ' \t' '\n\n' | sed '/^$/d' | sort -u)
	got=$(sort -u "$life_cells")
	rm -f "$life_cells"
	missing=$(echo "$want" | grep -vxF "$got")
	[ -z "$missing" ] || fail "declared, not driven: $(echo $missing)"
	echo "ok: $(echo "$want" | wc -l) cells driven"
	if [ -s "$life_bad" ]; then
		echo "cells that failed:"
		sed 's/^/  /' "$life_bad"
		bad=$(cut -d' ' -f1 "$life_bad" | sort -u)
		rm -f "$life_bad"
		fail "$(echo "$bad" | grep -cxF "$want") of $(echo "$want" | wc -l) cells failed: $(echo $bad)"
	fi
	rm -f "$life_bad"
}
