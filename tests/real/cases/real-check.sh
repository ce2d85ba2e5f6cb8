# SPDX-License-Identifier: GPL-2.0
# p2pctl check, offline, on the real module file and on the live driver's
# /proc/kallsyms: the verdict the runner's table expects, and for a
# supported driver every target ok.
. /cases/real.lib

# check_verdict WHAT OUT RC
check_verdict() {
	if [ "$EXPECT" = arm ]; then
		expect_eq "$1: exit status" "$3" 0
		expect_match "$1: supported" "$2" '"supported": *true'
		expect_eq "$1: profile" "$(jstr profile "$2")" "$EXPECT_PROFILE"
		n=$(echo "$2" | grep -c '"status": *"ok"')
		# The UVM peer set comes last ("uvm_set": {checked, ..., hooks}).
		# Where nvidia-uvm's symbols were not in the input (checked false;
		# they are checked below with it loaded) only its first target,
		# in nvidia, counts.
		uvm=$(echo "$2" | sed -n '/"uvm_set":/,$p')
		statuses=$(echo "$2" | sed '/"uvm_set":/,$d' | grep '"status":')
		if echo "$uvm" | grep -q '"checked": *true'; then
			statuses="$statuses
$(echo "$uvm" | grep '"status":')"
		else
			statuses="$statuses
$(echo "$uvm" | grep '"status":' | head -n 1)"
		fi
		bad=$(echo "$statuses" | grep '"status":' | grep -v '"status": *"ok"')
		expect_eq "$1: targets not ok" "$bad" ""
		[ "$n" -ge "$EXPECT_HOOKS" ] || fail "$1: $n targets ok, want at least $EXPECT_HOOKS"
		echo "ok: $1: $n targets ok"
	else
		expect_eq "$1: exit status" "$3" 1
		expect_match "$1: not supported" "$2" '"supported": *false'
		expect_match "$1: reason" "$2" "$EXPECT_REASON"
	fi
}

echo "== the module file"
out=$(p2pctl check --module $NV --json 2>&1); rc=$?
p2pctl check --module $NV
check_verdict "check --module" "$out" $rc

# With nvidia-uvm.ko, the UVM peer set as the module arms it (its copy-
# address call included): every target ok, the set arms.
if [ "$EXPECT" = arm ] && [ "$EXPECT_UVM_SET" != none ]; then
	echo "== the module files, with nvidia-uvm.ko: the UVM peer set $EXPECT_UVM_SET"
	out=$(p2pctl check --module $NV --uvm-module $UVM 2>&1); rc=$?
	echo "$out" | tail -n 2
	expect_eq "check --uvm-module: exit status" $rc 0
	expect_match "check --uvm-module: the set arms" "$out" \
		"UVM peer set $EXPECT_UVM_SET: arms with nvidia-uvm"
fi

if [ "$EXPECT" = refuse ]; then
	echo "== the module file, --force: $EXPECT_FORCE_PROFILE"
	out=$(p2pctl check --module $NV --force --json 2>&1); rc=$?
	if [ "$EXPECT_FORCE_PROFILE" = refuse ]; then
		expect_eq "check --force: exit status" $rc 1
		expect_match "check --force: not supported" "$out" '"supported": *false'
		expect_match "check --force: reason" "$out" "$EXPECT_FORCE_REASON"
	else
		expect_eq "check --force: exit status" $rc 0
		expect_eq "check --force: profile" "$(jstr profile "$out")" "$EXPECT_FORCE_PROFILE"
		bad=$(echo "$out" | grep '"status":' | grep -v '"status": *"ok"')
		expect_eq "check --force: targets not ok" "$bad" ""
	fi
fi

echo "== the live driver"
nvidia_load
out=$(p2pctl check --json 2>&1); rc=$?
p2pctl check
check_verdict "check (running driver)" "$out" $rc
out=$(p2pctl check --kallsyms /proc/kallsyms --driver-version "$REAL_VERSION" --json 2>&1); rc=$?
p2pctl check --kallsyms /proc/kallsyms --driver-version "$REAL_VERSION" | head -n 3
check_verdict "check --kallsyms /proc/kallsyms" "$out" $rc

# The UVM peer set, as the module arms it on nvidia-uvm's arrival: its
# nvidia-uvm targets from the live kallsyms' [nvidia_uvm] lines.
if [ "$EXPECT" = arm ] && [ "$EXPECT_UVM_SET" != none ]; then
	echo "== the live driver with nvidia-uvm: the UVM peer set $EXPECT_UVM_SET"
	# A set of one hook (590+: uvm-bar1) is nvidia's alone.
	if [ "$EXPECT_UVM_HOOKS" -gt 1 ]; then
		expect_match "without nvidia-uvm: not checked" "$(p2pctl check)" \
			"UVM peer set $EXPECT_UVM_SET: not checked"
	fi
	run insmod $UVM
	out=$(p2pctl check)
	echo "$out" | tail -n 2
	expect_match "with nvidia-uvm: the set arms" "$out" "UVM peer set $EXPECT_UVM_SET: arms with nvidia-uvm"
	run rmmod nvidia_uvm
fi
