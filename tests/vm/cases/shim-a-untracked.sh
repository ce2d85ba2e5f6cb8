# SPDX-License-Identifier: GPL-2.0
# Review F5: a GPU whose attach began before arming (parked in
# gpumgrAttachGpu before its registry reads while `p2pctl enable` arms) is
# not tracked: it gets none of p2p-shim's registry defaults, not only no
# ForceP2P.  On 565/570 RMForceP2PType=2 alone would turn its NVLink P2P
# off for nothing.  GPU1, attached with p2p-shim disabled, shows the stock
# values.
. /cases/lib.sh
G='GA102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;GA102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'

for v in 565.57.01 570.148.08; do
	echo "== $v"
	run insmod /lib/p2p-shim/p2p-shim.ko
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	park_reinit attach 0
	run p2pctl enable
	unpark attach
	st=$(nvflow state)
	expect_eq "$v untracked GPU0: stock RMForceP2PType" "$(kv gpu0.force_p2p_type "$st")" \
		"$(kv gpu1.force_p2p_type "$st")"
	expect_eq "$v untracked GPU0: stock ForceP2P" "$(kv gpu0.p2p_override "$st")" \
		"$(kv gpu1.p2p_override "$st")"
	nvflow caps 0 1 >/dev/null
	expect_match "$v GPU0 named stale once asked about" "$(p2pctl status)" 'GPU0.*re-initialise'
	echo "-- re-initialised under the hooks: p2p-shim's values"
	run nvflow reinit 0
	st=$(nvflow state)
	expect_eq "$v tracked GPU0: RMForceP2PType" "$(kv gpu0.force_p2p_type "$st")" 2
	run rmmod nvidia
	run p2pctl disable
	run rmmod p2p_shim
done
