# SPDX-License-Identifier: GPL-2.0
# p2pctl enable --dry-run on the real driver: counting probes on every
# target (or the same refusal), a real enable refused meanwhile, disable.
. /cases/real.lib

nvidia_load
shim_load
out=$(p2pctl enable --dry-run 2>&1); rc=$?
echo "$out"
if [ "$EXPECT" = arm ]; then
	expect_eq "dry run exit status" $rc 0
	expect_armed "dry run" dry-run
	out=$(p2pctl enable 2>&1); rc=$?
	echo "$out"
	expect_eq "enable during a dry run: exit status" $rc 1
	expect_match "enable during a dry run" "$out" 'already armed for a dry run'
	expect_armed "dry run unchanged" dry-run
	run p2pctl disable
else
	expect_eq "dry run exit status" $rc 1
	expect_refusal "dry run" "$out"
fi
expect_nothing_installed "after the dry run" disabled
run rmmod p2p_shim
run rmmod nvidia
