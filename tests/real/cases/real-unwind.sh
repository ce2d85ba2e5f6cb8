# SPDX-License-Identifier: GPL-2.0
# All or nothing on real code: /lib/real/nvidia-fault.ko is the real
# module with one HAL stub's body changed ($FAULT_TARGET), the rest as
# built.  Arming (enable; --force for a driver no profile serves) must
# fail naming that target, and leave nothing installed: no kprobe on
# nvidia in the kernel's list, nothing installed in our status.  Then the
# unchanged module arms (or is refused) as usual: no state left behind.
. /cases/real.lib

[ -n "$FAULT_TARGET" ] || fail "no fault build staged"
force=
[ "$EXPECT" = refuse ] && force=--force

echo "== p2pctl check sees it offline"
out=$(p2pctl check --module /lib/real/nvidia-fault.ko $force 2>&1); rc=$?
echo "$out" | grep -i "$FAULT_TARGET\|kbusIsPcieBar1P2PMappingSupported" | head -n 3
expect_eq "check exit status" $rc 1
expect_match "check names the stub" "$out" "kbusIsPcieBar1P2PMappingSupported"

echo "== arming fails on the live fault build"
run insmod /lib/real/p2ptest_gpuless.ko
load_deps
run insmod /lib/real/nvidia-fault.ko
shim_load
klog_mark
out=$(p2pctl enable $force 2>&1); rc=$?
echo "$out"
klog_since | grep p2p_shim
expect_eq "enable $force exit status" $rc 1
expect_match "the failing target is named" "$out" "kbusIsPcieBar1P2PMappingSupported"
expect_nothing_installed "after the failed arming" disabled
st=$(p2pctl status); echo "$st"
echo "--- /sys/kernel/debug/kprobes/list"
cat /sys/kernel/debug/kprobes/list
out=$(p2pctl enable --dry-run $force 2>&1); rc=$?
expect_eq "dry run $force exit status" $rc 1
expect_nothing_installed "after the failed dry run" disabled
run rmmod nvidia

echo "== the unchanged module afterwards"
nvidia_load
out=$(p2pctl enable 2>&1); rc=$?
echo "$out"
if [ "$EXPECT" = arm ]; then
	expect_eq "enable exit status" $rc 0
	expect_armed "armed" armed
	run p2pctl disable
else
	expect_eq "enable exit status" $rc 1
	expect_refusal "refused" "$out"
fi
expect_nothing_installed "disabled" disabled
run rmmod p2p_shim
run rmmod nvidia
