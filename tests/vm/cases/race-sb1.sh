# SPDX-License-Identifier: GPL-2.0
# A forced static-BAR1 decision in flight during disable (issue 21 item 6;
# lifecycle spec: disable while a GPU is between the forced
# kbusIsStaticBar1Supported answer and the return of its
# kbusEnableStaticBar1Mapping -> EBUSY "GPU N is initialising (static BAR1
# being forced): try again", stays armed).  An RTX 5090 pair on 580: the
# driver's rule says no, p2p-shim forces it (docs/cards.md).  GPU 0's
# re-initialisation is parked between the forced decision and the enable.
. /cases/lib.sh

G='GB202@0000:01:00.0,vram=32607M,fb=32G,bar1=0x4000000000/32G;GB202@0000:02:00.0,vram=32607M,fb=32G,bar1=0x4800000000/32G'
gpu_row() { echo "$1" | grep -E "^$2 +(on|off|forced|failed|unknown) "; }

trap release_and_unload EXIT

run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
st=$(p2pctl status)
expect_match "GPU 0 forced at load" "$(gpu_row "$st" 0)" '^0 +forced '

echo "== GPU 0 re-initialises; parked after the forced decision"
park_reinit sb1 0
klog_mark
out=$(p2pctl disable 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || fail "disable went through with a forced decision in flight: $out"
expect_eq "refused: busy (exit 1)" "$rc" 1
expect_match "refused: GPU 0 initialising" "$out" 'GPUs? (0|0x0*1) .*initialising'
expect_no_match "not blamed on peer mappings (there are none)" "$out" 'live BAR1 peer mappings|stop the processes'
expect_match "still armed" "$(p2pctl status)" 'state: +armed'
# What holds p2p-shim, and until when, is in status too (issue 41, item 4).
expect_match "status: GPU 0's forcing holds p2p-shim" "$(p2pctl status)" \
	'until its enable returns \(or the GPU detaches\) p2p-shim is held'
expect_match "refusal: a forcing whose enable never comes ends with the GPU" "$out" \
	'once the GPU detaches'

echo "== release: GPU 0 initialises with static BAR1"
unpark sb1
out=$(cat reinit.out)
expect_eq "GPU 0 initialised" "$(kv status "$out")" 0x0
expect_eq "GPU 0 static BAR1" "$(kv static_bar1 "$out")" 1
st=$(p2pctl status)
echo "$st"
expect_match "GPU 0 forced again" "$(gpu_row "$st" 0)" '^0 +forced '
expect_eq "BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1

echo "== disable now works: residual (the GPUs carry ForceP2P)"
run p2pctl disable
st=$(p2pctl status)
echo "$st"
expect_match "residual" "$st" 'state: +residual'
expect_eq "stock answer in residual" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
wait_match "p2pctl status" 'state: +disabled'
expect_match "disabled once the GPUs re-initialised" "$(p2pctl status)" 'state: +disabled'
run rmmod nvidia
run rmmod p2p_shim

# A decision in flight holds the module (issue: Correctness III, item 3),
# whether or not a GPU carries a ForceP2P: here none does (the user's
# RMPcieP2PType=1 makes the P2P type BAR1, no ForceP2P is supplied), so
# only the decision itself can refuse rmmod.
echo "== rmmod while a forced decision is in flight, no GPU forced (580)"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_defaults=0
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G" NVreg_RegistryDwords="RMPcieP2PType=1"
st=$(p2pctl status)
expect_match "GPU 0 forced at load" "$(gpu_row "$st" 0)" '^0 +forced '
park_reinit sb1 0
expect_refused "rmmod refused mid-decision" "$RMMOD_BUSY" rmmod p2p_shim
unpark sb1
expect_eq "GPU 0 initialised" "$(kv status "$(cat reinit.out)")" 0x0
expect_eq "GPU 0 static BAR1" "$(kv static_bar1 "$(cat reinit.out)")" 1
run p2pctl disable
run rmmod p2p_shim
run rmmod nvidia

# Gen 0: static BAR1 is set up through the hooks; the wrapped "capable:
# yes" is followed by the enable, which a disable in between would send to
# the stub (NOT_SUPPORTED: BAR1 initialisation fails).  GPU 1 has a small
# BAR1, so no static BAR1 of it holds the ledger (that alone refuses a
# disable on gen 0).
G0='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0xe0000000/256M'
echo "== gen 0: disable and rmmod between 'capable: yes' and the enable (550)"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/550.163.01/nvidia.ko gpus="$G0"
park_reinit sb1 0
expect_refused "disable refused mid-decision" 'GPUs? (0|0x0*1) .*initialising' p2pctl disable
expect_match "still armed" "$(p2pctl status)" 'state: +armed'
expect_refused "rmmod refused mid-decision" "$RMMOD_BUSY" rmmod p2p_shim
unpark sb1
expect_eq "gen 0: GPU 0 initialised" "$(kv status "$(cat reinit.out)")" 0x0
expect_eq "gen 0: GPU 0 static BAR1" "$(kv static_bar1 "$(cat reinit.out)")" 1
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim
