# SPDX-License-Identifier: GPL-2.0
# Enable during a GPU's attach (issue 28; lifecycle spec: "a GPU whose
# attach began before the hooks were installed is not tracked, gets no
# ForceP2P, and is reported stale").  GPU 1's re-initialisation is parked
# inside gpumgrAttachGpu, after its entry and before the registry reads;
# p2pctl enable arms meanwhile; the attach then reads the registry with
# the hooks in.  GPU 1 must not be forced (its ForceP2P stays the
# driver's), must be named stale, and the pair must get the stock answer,
# never the mailbox offer (connectivity pcie, read/write OK).  The GPUs
# have 256 MiB BARs (no static BAR1), so GPU 0's ForceP2P alone would make
# the driver offer the mailbox path: the caps guard must see the pair.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0xf0000000/256M;AD102@0000:02:00.0,vram=24G,bar1=0xe0000000/256M'

trap release_and_unload EXIT

run insmod /lib/p2p-shim/p2p-shim.ko
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"

echo "== GPU 1 attaches; the shim arms in the middle"
park_reinit attach 1
run p2pctl enable
expect_match "armed" "$(p2pctl status)" 'state: +armed'
unpark attach
expect_eq "GPU 1 initialised" "$(kv status "$(cat reinit.out)")" 0x0

echo "== GPU 0 attaches under the hooks"
run nvflow reinit 0 >/dev/null
st=$(nvflow state)
expect_match "GPU 0 forced (ForceP2P from p2p-shim)" "$(kv gpu0.p2p_override "$st")" '^0x[0-9a-f]+$'
expect_no_match "GPU 0 forced: not the driver's default" "$(kv gpu0.p2p_override "$st")" '^0xffffffff$'
expect_eq "GPU 1 not forced: the driver's default" "$(kv gpu1.p2p_override "$st")" 0xffffffff
for pair in "0 1" "1 0"; do
	out=$(nvflow caps $pair)
	echo "caps $pair: $(echo "$out" | tr '\n' ' ')"
	expect_eq "caps $pair: stock connectivity" "$(kv connectivity "$out")" unknown
	expect_eq "caps $pair: no read (never the mailbox offer)" "$(kv read "$out")" NOT_SUPPORTED
	expect_eq "caps $pair: no write" "$(kv write "$out")" NOT_SUPPORTED
done
# Named stale once the driver has asked about it (the caps above).
ps=$(p2pctl status)
echo "$ps"
expect_match "GPU 1 named stale" "$ps" 'stale GPUs: +GPU1'
expect_no_match "GPU 0 not stale" "$ps" 'stale GPUs: .*GPU0'

echo "== GPU 1 re-initialised under the hooks: forced, not stale"
run nvflow reinit 1 >/dev/null
expect_no_match "GPU 1 forced now" "$(kv gpu1.p2p_override "$(nvflow state)")" '^0xffffffff$'
expect_eq "still the stock answer (no static BAR1)" "$(kv connectivity "$(nvflow caps 0 1)")" unknown
expect_no_match "nothing stale" "$(p2pctl status)" 'stale'

echo "== teardown"
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
