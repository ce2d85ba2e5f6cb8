# SPDX-License-Identifier: GPL-2.0
# The caps guard and the GPU table, learnt from hooked calls only.
# - One GPU of a pair forced, its partner initialised before arming (a
#   display GPU, say), no static BAR1 on either (256 MiB BARs): ForceP2P
#   of the forced GPU would report mailbox P2P OK; the guard must put back
#   the stock answer whichever GPU of the pair is the forced one.
# - 50 last-close/first-open cycles (each a new OBJGPU): the guard still
#   fires for the small-BAR pair and BAR1 P2P still works for a pair with
#   static BAR1; status names only GPUs that really were initialised
#   before arming.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0xf0000000/256M;AD102@0000:02:00.0,vram=24G,bar1=0xe0000000/256M'
G="$G;AD102@0000:03:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:04:00.0,vram=24G,bar1=0x6000000000/32G"

run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
run insmod /lib/p2p-shim/p2p-shim.ko
run p2pctl enable

echo "== forced GPU1, GPU0 initialised before arming"
run nvflow reinit 1 >/dev/null
guarded "0-1, GPU1 forced" 0 1
expect_match "GPU0 named stale" "$(p2pctl status)" 'stale GPUs: +GPU0:'
expect_no_match "GPU1 not stale" "$(p2pctl status)" 'GPU1'

echo "== forced GPU0, GPU1 initialised before arming"
run rmmod nvidia
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
run nvflow reinit 0 >/dev/null
guarded "0-1, GPU0 forced" 0 1

echo "== 50 close/open cycles"
i=0
while [ $i -lt 50 ]; do
	for g in 0 1 2 3; do run nvflow reinit $g >/dev/null; done
	i=$((i + 1))
done
guarded "0-1 after 50 cycles" 0 1
expect_eq "2-3 after 50 cycles" "$(kv connectivity "$(nvflow caps 2 3)")" pcie_bar1
out=$(nvflow create 2 3) || fail "create 2-3: $out"
expect_eq "2-3 BAR1 P2P" "$(kv type "$out")" pcie_bar1
expect_no_match "nothing stale after re-initialisation" "$(p2pctl status)" 'stale'
run nvflow destroy "$(kv object "$out")" >/dev/null
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
