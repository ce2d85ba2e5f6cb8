# SPDX-License-Identifier: GPL-2.0
# vm-tags: every-kernel
# p2p-shim loads and unloads cleanly on its own, and says so in the log.
. /cases/lib.sh

klog_mark
run insmod /lib/p2p-shim/p2p-shim.ko
module_loaded p2p_shim || fail "p2p_shim not in /proc/modules"
run rmmod p2p_shim
module_loaded p2p_shim && fail "p2p_shim still loaded"
log=$(klog_since)
echo "$log"
expect_match "load log line" "$log" 'p2p_shim: loaded'
expect_match "unload log line" "$log" 'p2p_shim: unloaded'
