# SPDX-License-Identifier: GPL-2.0
# p2p-shim unloaded first, while armed: every probe goes, nvidia stays
# live and unloads cleanly afterwards.
. /cases/real.lib

nvidia_load
shim_load
p2pctl enable
[ "$EXPECT" = arm ] && expect_armed "armed" armed
klog_mark
run rmmod p2p_shim
expect_eq "kprobes on nvidia after rmmod p2p_shim" "$(kprobes_on_nvidia)" 0
expect_match "nvidia still live" "$(cat /proc/driver/nvidia/version)" "${REAL_BUILT:-$REAL_VERSION}"
run insmod $UVM
run rmmod nvidia_uvm
run rmmod nvidia
