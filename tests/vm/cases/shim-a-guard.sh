# SPDX-License-Identifier: GPL-2.0
# Gen A1 (565, 570): the ForceP2P override is applied before the BAR1 HAL
# check, so a pair where one GPU has no static BAR1 (a 256 MiB BAR) would
# be reported PCIE_BAR1 read/write OK and then fail to map (CUDA error
# 205, NCCL hangs); so would loopback (one GPU), which the skipped HAL
# check also refuses.  The caps guard knows which GPUs got static BAR1 and
# gives such a pair the stock answer; pairs with it keep BAR1 P2P.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0xf0000000/256M'
G="$G;AD102@0000:03:00.0,vram=24G,bar1=0x6000000000/32G"

for v in 565.57.01 570.148.08; do
	echo "== $v"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	st=$(nvflow state)
	expect_eq "$v GPU0 static BAR1" "$(kv gpu0.static_bar1 "$st")" 1
	expect_eq "$v GPU1 no static BAR1" "$(kv gpu1.static_bar1 "$st")" 0
	for pair in "0 1" "1 2" "0 0"; do
		out=$(nvflow caps $pair)
		expect_eq "$v $pair connectivity" "$(kv connectivity "$out")" unknown
		expect_eq "$v $pair read" "$(kv read "$out")" NOT_SUPPORTED
		expect_eq "$v $pair write" "$(kv write "$out")" NOT_SUPPORTED
	done
	expect_eq "$v 0 2 BAR1 P2P" "$(kv connectivity "$(nvflow caps 0 2)")" pcie_bar1
	out=$(nvflow create 0 2) || fail "$v create 0 2: $out"
	expect_eq "$v 0 2 object" "$(kv type "$out")" pcie_bar1
	run nvflow destroy "$(kv object "$out")" >/dev/null
	run p2pctl disable
	run rmmod nvidia
	run rmmod p2p_shim
done
