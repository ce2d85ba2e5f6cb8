# SPDX-License-Identifier: GPL-2.0
# The lifecycle's failure cells on the stand-in 580.159.04: a disable while
# a GPU initialises with static BAR1 being forced (an RTX 5090 pair, held
# there at the stand-in's hold point sb1), and armings that fail: part-way
# (fault-nokprobe: the kernel refuses a probe on gen-b's last hook, after
# 18 went in) from disabled, waiting and at load, and from residual at a
# stub's check (someone else's kprobe on it: p2ptest_kprobe.ko) and
# part-way (p2p-shim's fault build, fault_install), where the residual set
# must stay untouched (docs/lifecycle.md).
# cells: armed.disable:initialising disabled.enable:attaching disabled.arm-fail waiting.arm-fail not-loaded.arm-fail
# cells: residual.arm-fail
. /cases/lib.sh
. /cases/life.sh

V=580.159.04
NV=/lib/standin/$V/nvidia.ko
FAULT=/lib/standin/fault-nokprobe/nvidia.ko
SHIM=/lib/p2p-shim/p2p-shim.ko
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
G5='GB202@0000:01:00.0,vram=32607M,fb=32G,bar1=0x4000000000/32G;GB202@0000:02:00.0,vram=32607M,fb=32G,bar1=0x4800000000/32G'
H=20	# gen-b's hooks
R=6	# its residual set
LATE=kbusRemoveP2PMappingForBar1P2P_GH100

echo "== an RTX 5090 pair: static BAR1 forced by p2p-shim"
run insmod $SHIM enable=1
run insmod $NV gpus="$G5"
life_wait armed
expect_state "5090 pair" armed
expect_refcnt "5090 pair" 2
expect_caps "5090 pair" pcie_bar1
expect_match "GPU0 forced" "$(p2pctl status)" '0 +forced +usable'
cell armed.disable:initialising
park_reinit sb1 0	# GPU0 parked in kbusInitBar1, after the decision
refused "disable while GPU0 initialises" 'initialising \(a static BAR1 decision in flight\)' p2pctl disable
expect_state "$life_cur" armed
expect_kprobes "$life_cur" $H
unpark sb1
expect armed $H 2 pcie_bar1
run p2pctl disable
expect_state "forced: residual" residual
run rmmod nvidia
life_wait disabled

echo "== enable while a GPU is attaching (held in kbusInitBar1)"
run insmod $NV gpus="$G"
cell disabled.enable:attaching
park_reinit sb1 0
run p2pctl enable
unpark sb1
# GPU0's attach began before the hooks: not tracked, no ForceP2P, stale.
expect armed $H 0 unknown
expect_match "GPU0 named stale" "$(p2pctl status)" 'GPU0.*re-initialise'
run nvflow reinit 0 >/dev/null
expect_refcnt "GPU0 re-initialised under the hooks" 1
run p2pctl disable
expect_state "GPU0 forced: residual" residual
run rmmod nvidia
life_wait disabled

echo "== fault-nokprobe: the kernel refuses a probe on $LATE"
run insmod $FAULT gpus="$G"
cell disabled.arm-fail
refused "enable" "$LATE.*cannot install the probe" p2pctl enable
expect disabled 0 0 unknown
st=$(p2pctl status)
echo "$st" | grep -E "$LATE|state"
cell waiting.arm-fail
run rmmod nvidia
run p2pctl enable
expect_state "enabled" waiting
klog_mark
run insmod $FAULT gpus="$G"
life_wait disabled
expect disabled 0 0 unknown
expect_match "refused on arrival" "$(klog_since)" "enable refused on nvidia's arrival: $LATE: cannot install the probe"
cell not-loaded.arm-fail
run rmmod p2p_shim
klog_mark
run insmod $SHIM enable=1
expect disabled 0 0 unknown
expect_match "refused at load" "$(klog_since)" "enable refused by uid 0: $LATE: cannot install the probe"
run rmmod nvidia

echo "== from residual: the new set fails at a stub's check, and part-way"
# p2p-shim's fault build (kmod/faults.c): fault_install=N fails the Nth probe.
run rmmod p2p_shim
run insmod /lib/p2p-shim/faults/p2p-shim.ko
run insmod $NV gpus="$G"
run p2pctl enable
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
run p2pctl disable
expect_state "residual" residual
expect_refcnt "residual" 2
cell residual.arm-fail
STUB=kbusHasPcieBar1P2PMapping_d69453
run insmod /lib/p2p-shim/p2ptest_kprobe.ko symbol=$STUB
LIFE_KPROBES_IGNORE=$STUB
refused "enable from residual" "$STUB" p2pctl enable
# Untouched: the residual set, the references, the stock answer.
expect residual $R 2 unknown
run rmmod p2ptest_kprobe
LIFE_KPROBES_IGNORE=
echo 10 >/sys/module/p2p_shim/parameters/fault_install
refused "enable from residual, the 11th probe refused" 'cannot install the probe' p2pctl enable
echo -1 >/sys/module/p2p_shim/parameters/fault_install
expect residual $R 2 unknown
run p2pctl enable
expect_state "enable from residual afterwards" armed
expect_caps "enable from residual afterwards" pcie_bar1
run p2pctl disable
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
life_wait disabled
expect_state "cleaned up" disabled
run rmmod nvidia
run rmmod p2p_shim
life_done
