# SPDX-License-Identifier: GPL-2.0
# Load order: p2p-shim with enable=1 first (what `p2pctl config --write`
# sets up), then nvidia: armed on nvidia's arrival (or refused with the
# reason), and nvidia out and in again.
. /cases/real.lib

shim_load enable=1
expect_nothing_installed "before nvidia" waiting
klog_mark
nvidia_load
if [ "$EXPECT" = arm ]; then
	wait_state armed
	klog_since | grep p2p_shim
	expect_armed "armed on arrival" armed
	p2pctl status	# hits: what nvidia's own init called while armed
	run rmmod nvidia
	expect_nothing_installed "nvidia gone" waiting
	nvidia_load
	wait_state armed
	expect_armed "armed on the second arrival" armed
	run p2pctl disable
else
	wait_state disabled
	log=$(klog_since); echo "$log" | grep p2p_shim
	expect_refusal "refused on arrival" "$log"
	expect_nothing_installed "refused on arrival" disabled
fi
run rmmod p2p_shim
run rmmod nvidia
