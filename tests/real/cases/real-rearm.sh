# SPDX-License-Identifier: GPL-2.0
# nvidia removed while armed and loaded again: disarmed, waiting, and
# armed again on its return (its arrival is before its init has run);
# twice.  For a refused driver: waiting, then refused on arrival.
. /cases/real.lib

nvidia_load
shim_load
p2pctl enable
if [ "$EXPECT" = arm ]; then
	expect_armed "armed" armed
	for round in 1 2; do
		run rmmod nvidia
		expect_nothing_installed "round $round: nvidia gone" waiting
		klog_mark
		nvidia_load
		wait_state armed
		expect_armed "round $round: re-armed on nvidia's return" armed
	done
	run p2pctl disable
else
	run rmmod nvidia
	run p2pctl enable
	expect_nothing_installed "waiting" waiting
	klog_mark
	nvidia_load
	wait_state disabled
	expect_refusal "refused on arrival" "$(klog_since)"
	expect_nothing_installed "refused on arrival" disabled
fi
run rmmod p2p_shim
run rmmod nvidia
