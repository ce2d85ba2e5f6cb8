# SPDX-License-Identifier: GPL-2.0
# vm-tags: every-kernel
# Load orders and driver churn: nvidia first, then the shim (GPUs already
# initialised are named stale, once the driver asks about them, until
# re-initialised: the shim never asks the driver); nvidia removed while
# armed (disarms cleanly) and back (re-arms); nvidia removed with live
# mappings that its own unload tears down through the hooks.
. /cases/lib.sh

echo "== nvidia first"
run insmod /lib/standin/580.159.04/nvidia.ko
run insmod /lib/p2p-shim/p2p-shim.ko
klog_mark
run p2pctl enable
expect_match "says GPUs up already keep stock settings" "$(klog_since)" \
	'GPUs initialised before arming keep the stock P2P settings until re-initialised'
expect_eq "no P2P before reinit" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
st=$(p2pctl status)
echo "$st"
expect_match "stale GPUs named" "$st" 'GPU0, GPU1.*re-initialise'
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
expect_no_match "no stale GPU after reinit" "$(p2pctl status)" 're-initialise'
expect_eq "P2P after reinit" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1

echo "== nvidia leaves while armed, and comes back"
klog_mark
run rmmod nvidia
expect_match "waiting again" "$(p2pctl status)" 'state: +waiting'
run insmod /lib/standin/580.159.04/nvidia.ko
expect_match "re-armed" "$(p2pctl status)" 'state: +armed'
expect_eq "P2P at once" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
log=$(klog_since)
echo "$log"
expect_match "left" "$log" 'nvidia left: disarmed'
expect_match "re-armed on arrival" "$log" "armed profile gen-b for nvidia 580.159.04 \(20 hooks\) on nvidia's arrival"

echo "== nvidia leaves with live mappings, tearing them down itself"
run rmmod nvidia
run insmod /lib/standin/580.159.04/nvidia.ko unload_destroys=1
out=$(nvflow create 0 1) || fail "create: $out"
expect_match "ledger has it" "$(p2pctl status)" 'mappings: +1'
klog_mark
run rmmod nvidia
log=$(klog_since)
echo "$log"
expect_no_match "torn down through the hooks" "$log" 'left-over|left with'
expect_match "ledger empty" "$(p2pctl status)" 'mappings: +0'
run p2pctl disable
run rmmod p2p_shim
