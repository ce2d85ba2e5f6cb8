# SPDX-License-Identifier: GPL-2.0
# p2pctl enable --force on the real driver.  With a profile of its own,
# --force changes nothing: that profile arms.  With none, the newest
# profile is tried on the real code and arms, or is refused, as the table
# says; disable then leaves nothing, and nvidia unloads and loads cleanly.
. /cases/real.lib

nvidia_load
shim_load
klog_mark
out=$(p2pctl enable --force 2>&1); rc=$?
echo "$out"
klog_since | grep p2p_shim
if [ "$EXPECT_FORCE_PROFILE" = refuse ]; then
	expect_eq "enable --force exit status" $rc 1
	expect_match "enable --force refused" "$out" "$EXPECT_FORCE_REASON"
	expect_nothing_installed "after the refused --force" disabled
else
	expect_eq "enable --force exit status" $rc 0
	expect_armed "enable --force" armed "$EXPECT_FORCE_PROFILE" "$EXPECT_FORCE_HOOKS"
	expect_match "status --json flags" "$(status_json)" '"force"'
	run p2pctl disable
fi
expect_nothing_installed "after disable" disabled
run rmmod p2p_shim
run rmmod nvidia
expect_eq "kprobes on nvidia after unload" "$(kprobes_on_nvidia)" 0
