# SPDX-License-Identifier: GPL-2.0
# Load order: nvidia first, then p2p-shim with enable=1: arms (or refuses)
# at once, from its own init, against the initialised driver.
. /cases/real.lib

nvidia_load
klog_mark
shim_load enable=1
log=$(klog_since); echo "$log" | grep p2p_shim
if [ "$EXPECT" = arm ]; then
	expect_armed "enable=1 after nvidia" armed
	run p2pctl disable
else
	expect_refusal "enable=1 after nvidia" "$log"
fi
expect_nothing_installed "disabled" disabled
run rmmod p2p_shim
run rmmod nvidia
