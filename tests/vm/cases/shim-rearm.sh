# SPDX-License-Identifier: GPL-2.0
# Leaving and re-entering the armed state from the residual state with
# failures on the way (issue 21, items 3 and 8), with p2p-shim's fault
# build (kmod/faults.c).
#  - Re-enable installs the new hook set beside the residual one and hands
#    over; an arming that fails part-way leaves the residual set as it
#    was.  Before the fix the guard was removed first: the failed re-arm
#    left forced GPUs with no guard (the pair got connectivity=pcie, read OK).
#  - Disable whose hook removal cannot allocate its batch still keeps the
#    residual set.  Before the fix the one-at-a-time fallback removed it.
#  - A profile action no policy owns fails the load, naming the profile
#    and the hook.  Before the check at init the module loaded and the
#    hole showed only when an enable armed that profile.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
P=/sys/module/p2p_shim/parameters
refcnt() { cat /sys/module/p2p_shim/refcnt; }
guard() { grep -c 'p2pGetCapsStatus' /sys/kernel/debug/kprobes/list || true; }

echo "== a broken table fails the load"
# 7: P2PS_ACT_CAPS_GUARD (include/p2p-shim/profile.h): no policy owns it.
expect_fail "load with an unowned action" insmod /lib/p2p-shim/faults/p2p-shim.ko fault_unowned_action=7
expect_match "the load names the profile and the hook" "$(dmesg | grep 'p2p_shim: profile' | tail -n 1)" \
	'profile gen-[a-z0-9]+, object nvidia: hook [A-Za-z0-9_]+ \(action 7\) has no policy'
expect_eq "not loaded" "$(test -d /sys/module/p2p_shim && echo loaded)" ""

run insmod /lib/p2p-shim/faults/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "armed: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1

echo "== disable when removal cannot allocate: the residual set stays"
echo 1 >$P/fault_remove_nomem
run p2pctl disable
echo 0 >$P/fault_remove_nomem
st=$(p2pctl status)
expect_match "residual" "$st" 'state: +residual'
expect_match "guard installed" "$st" 'p2pGetCapsStatus +return +installed'
expect_match "stubs back" "$st" 'kbusIsPcieBar1P2PMappingSupported_d69453 +redirect +idle'
out=$(nvflow caps 0 1)
expect_eq "no mailbox offer: connectivity" "$(kv connectivity "$out")" unknown
expect_eq "no mailbox offer: read" "$(kv read "$out")" NOT_SUPPORTED

echo "== re-enable from residual fails part-way: residual set untouched"
for i in 0 5 12; do
	echo $i >$P/fault_install
	out=$(p2pctl enable 2>&1) && fail "enable with fault_install=$i succeeded"
	echo "$out"
	expect_match "enable $i refused with a reason" "$out" 'cannot install the probe'
	st=$(p2pctl status)
	expect_match "after failed enable $i: residual" "$st" 'state: +residual'
	expect_eq "after failed enable $i: one guard probe pair" "$(guard)" 2
	out=$(nvflow caps 0 1)
	expect_eq "after failed enable $i: no mailbox offer" "$(kv connectivity "$out")" unknown
	expect_eq "after failed enable $i: read" "$(kv read "$out")" NOT_SUPPORTED
	expect_eq "after failed enable $i: references" "$(refcnt)" 2
	expect_refused "after failed enable $i: rmmod refused" "$RMMOD_BUSY" rmmod p2p_shim
done
echo -1 >$P/fault_install

echo "== re-enable works after the failures; the GPU table was kept"
run p2pctl enable
expect_match "armed" "$(p2pctl status)" 'state: +armed'
expect_eq "BAR1 P2P again" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
expect_eq "guard: one probe pair" "$(guard)" 2

echo "== a wrapper its policy left unbound: arming refused, not armed around it"
# Outside review of issue 35 (review-35.md #2): the call would have gone
# straight to the driver's body, with no ledger entry.
run rmmod nvidia
run p2pctl disable
echo 1 >$P/fault_unbound_wrapper
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
out=$(p2pctl enable 2>&1) && fail "enable with unbound wrappers succeeded: $out"
echo "$out"
expect_match "refused, naming the wrapper" "$out" 'wrapper was not bound'
echo 0 >$P/fault_unbound_wrapper
expect_match "disabled" "$(p2pctl status)" 'state: +disabled'
expect_eq "no probe on nvidia" "$(kprobes_on nvidia)" 0
expect_eq "no reference" "$(refcnt)" 0
# The GPUs attached without hooks: armed before nvidia comes back.
run rmmod nvidia
run p2pctl enable
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "re-enabled: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1

echo "== a fresh arming that fails part-way installs nothing"
run rmmod nvidia
run p2pctl disable
echo 3 >$P/fault_install
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_fail "enable with a failing hook" p2pctl enable
echo -1 >$P/fault_install
expect_match "disabled" "$(p2pctl status)" 'state: +disabled'
expect_eq "no probe on nvidia" "$(kprobes_on nvidia)" 0
expect_eq "no reference" "$(refcnt)" 0
run rmmod nvidia
run rmmod p2p_shim
