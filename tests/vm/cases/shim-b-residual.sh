# SPDX-License-Identifier: GPL-2.0
# Disable while GPUs carry p2p-shim's ForceP2P.  They keep it until they
# re-initialise; with the stubs back and no guard, the pair would be
# offered the mailbox path (PCIE_PROPRIETARY, reads and writes OK), which
# GeForce chips lack.  So the caps guard stays (with the attach and detach
# hooks), rmmod is refused, a new enable takes over, and once every such
# GPU has re-initialised the rest goes by itself.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'

run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
expect_eq "armed: BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1

echo "== disable with both GPUs forced"
klog_mark
run p2pctl disable
expect_match "says the guard stays" "$(klog_since)" \
	"the caps guard stays for GPUs 0x3 \(they carry a ForceP2P that forces P2P, p2p-shim.s or the user.s\) until they re-initialise"
st=$(p2pctl status)
echo "$st"
expect_match "residual" "$st" 'state: +residual'
expect_match "guard installed" "$st" 'p2pGetCapsStatus +return +installed'
expect_match "stubs back" "$st" 'kbusIsPcieBar1P2PMappingSupported_d69453 +redirect +idle'
out=$(nvflow caps 0 1)
expect_eq "no mailbox offer: connectivity" "$(kv connectivity "$out")" unknown
expect_eq "no mailbox offer: read" "$(kv read "$out")" NOT_SUPPORTED
expect_refused "rmmod refused while the guard is needed" "$RMMOD_BUSY" rmmod p2p_shim
expect_refused "no dry run over forced GPUs" \
	"carry a ForceP2P that forces P2P .p2p-shim's or the user's.: a dry run would leave them without the caps guard" p2pctl enable --dry-run

echo "== enable again takes over"
run p2pctl enable
expect_eq "BAR1 P2P again" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
run p2pctl disable

echo "== the GPUs re-initialise: the rest goes"
run nvflow reinit 0 >/dev/null
expect_match "one left: guard still there" "$(p2pctl status)" 'p2pGetCapsStatus +return +installed'
klog_mark
run nvflow reinit 1 >/dev/null
wait_match klog_since 'caps guard removed'
expect_match "removed after the last" "$(klog_since)" 'caps guard removed'
expect_match "disabled by itself" "$(p2pctl status)" "state: +disabled"
expect_match "no hook" "$(p2pctl status)" 'hooks: +0 installed'
expect_eq "stock again" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
run rmmod nvidia
run rmmod p2p_shim

echo "== nvidia leaves while only the guard remains"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
run p2pctl disable
expect_match "guard kept" "$(p2pctl status)" 'p2pGetCapsStatus +return +installed'
run rmmod nvidia
expect_match "nothing left" "$(p2pctl status)" 'hooks: +0 installed'
run rmmod p2p_shim
