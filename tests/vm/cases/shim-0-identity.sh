# SPDX-License-Identifier: GPL-2.0
# Gen 0 (550.163.01) changes only BAR1 peer mappings: local vidmem and
# sysmem PTEs of an AD102 pair are byte-identical with and without the
# shim; so are a GH100 NVLink pair's objects and PEER PTEs with
# registry_defaults=0.  With the defaults, RMForceP2PType=2 turns NVLink
# P2P off in these drivers (p2p_caps.c), as docs/hooks.md warns: the
# NVLink pair then gets Hopper's native BAR1 P2P, and no stub hook fires.
. /cases/lib.sh
H='GH100@0000:01:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:02:00.0,vram=80G,bar1=0x22000000000/128G'
v=550.163.01

ptes_local() {
	for spec in "0x0 0x1000" "0x200000 0x200000" "0x40000000 0x1000"; do
		o=$(nvflow local 0 $spec) || exit 1
		echo "$o" | grep -E '^(aperture|field|addr|pte)='
		o=$(nvflow sysmem 1 0x12345000 0x1000) || exit 1
		echo "$o" | grep -E '^(aperture|field|addr|pte)='
	done
	return 0
}
ptes_nvlink() {
	o=$(nvflow caps 0 1) || exit 1
	echo "$o" | grep -E '^(connectivity|p2p)='
	o=$(nvflow create 0 1) || exit 1
	echo "$o" | grep -E '^(type|peer_id|status)='
	for spec in "0x0 0x1000" "0x200000 0x200000"; do
		o=$(nvflow map 0 $spec uvm) || exit 1
		echo "$o" | grep -E '^(aperture|field|addr|pte|peer)='
		o=$(nvflow map 0 $spec rm) || exit 1
		echo "$o" | grep -E '^(aperture|field|addr|pte|peer)='
	done
	return 0
}

run insmod /lib/standin/$v/nvidia.ko
stock_local=$(ptes_local) || fail "stock_local: a command of ptes_local failed"
run rmmod nvidia
run insmod /lib/standin/$v/nvidia.ko gpus="$H" nvlink=0-1
stock_nvlink=$(ptes_nvlink) || fail "stock_nvlink: a command of ptes_nvlink failed"
run rmmod nvidia

run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/$v/nvidia.ko
shim_local=$(ptes_local) || fail "shim_local: a command of ptes_local failed"
run rmmod nvidia
run insmod /lib/standin/$v/nvidia.ko gpus="$H" nvlink=0-1
defaults_nvlink=$(ptes_nvlink) || fail "defaults_nvlink: a command of ptes_nvlink failed"
echo "$defaults_nvlink"
expect_match "defaults: NVLink off, Hopper BAR1 P2P" "$defaults_nvlink" 'type=pcie_bar1'
hits=$(p2pctl status --json | tr -d ' \n' | grep -o '"target":"[a-zA-Z0-9]*_[0-9a-f]\{6\}"[^}]*"hits":[0-9]*' | grep -o '"hits":[0-9]*' | sort -u)
expect_eq "no stub hook fired on Hopper" "$hits" '"hits":0'
run rmmod nvidia
run rmmod p2p_shim

run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_defaults=0
run insmod /lib/standin/$v/nvidia.ko gpus="$H" nvlink=0-1
shim_nvlink=$(ptes_nvlink) || fail "shim_nvlink: a command of ptes_nvlink failed"
echo "$shim_nvlink"
expect_match "NVLink peers use PEER" "$shim_nvlink" 'aperture=PEER'
expect_match "NVLink object" "$shim_nvlink" 'type=nvlink'
run rmmod nvidia
run rmmod p2p_shim

# Every field of every call, on both sides (each call prints each field
# its grep keeps once): two empty dumps would be equal too.
expect_lines "stock local/sysmem PTE dump" "$stock_local" 24
expect_lines "local/sysmem PTE dump with the shim" "$shim_local" 24
[ "$stock_local" = "$shim_local" ] || fail "local/sysmem PTEs differ"
echo "ok: local and sysmem PTEs identical"
expect_lines "stock NVLink dump" "$stock_nvlink" 25
expect_lines "NVLink dump with the shim" "$shim_nvlink" 25
[ "$stock_nvlink" = "$shim_nvlink" ] || fail "NVLink peer PTEs differ"
echo "ok: NVLink caps, objects and peer PTEs identical"
