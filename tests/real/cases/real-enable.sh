# SPDX-License-Identifier: GPL-2.0
# p2pctl enable with nvidia live: armed with every hook installed (or
# refused with the reason and nothing installed), status and status
# --json agree, disable removes everything, enable again; arming time.
. /cases/real.lib

nvidia_load
shim_load
klog_mark
out=$(p2pctl enable 2>&1); rc=$?
echo "$out"
if [ "$EXPECT" = arm ]; then
	expect_eq "enable exit status" $rc 0
	expect_armed "enable" armed
	st=$(p2pctl status); echo "$st"
	expect_match "status: state" "$st" 'state: +armed'
	expect_match "status: profile" "$st" "$EXPECT_PROFILE"
	expect_match "status: hooks" "$st" "$EXPECT_HOOKS installed"
	p2pctl status --json | jsoncheck state driver_version profile hooks mappings ||
		fail "status --json is not the documented JSON"
	expect_match "kernel log" "$(klog_since)" "armed profile $EXPECT_PROFILE for nvidia $REAL_VERSION \\($EXPECT_HOOKS hooks\\)"
	run p2pctl disable
	expect_nothing_installed "after disable" disabled
	run p2pctl enable
	expect_armed "enable again" armed
	run p2pctl disable
	echo "== arming time (resolve, check, install $EXPECT_HOOKS hooks; TCG)"
	bench=$(armbench 5) || fail "armbench: $bench"
	echo "$bench"
	echo "arming: $(echo "$bench" | sed -n 's/^enable  *n=[0-9]* //p')"
	expect_nothing_installed "after armbench" disabled
else
	expect_eq "enable exit status" $rc 1
	expect_refusal "p2pctl enable" "$out"
	expect_nothing_installed "after the refusal" disabled
	st=$(p2pctl status); echo "$st"
	expect_match "status: state" "$st" 'state: +disabled'
	p2pctl status --json | jsoncheck state driver_version profile hooks mappings ||
		fail "status --json is not the documented JSON"
	expect_refusal "kernel log" "$(klog_since)"
	run p2pctl disable
	expect_nothing_installed "after disable" disabled
fi
run rmmod p2p_shim
run rmmod nvidia
