# SPDX-License-Identifier: GPL-2.0
# Gen A changes only BAR1 peer mappings: local vidmem and sysmem PTEs of an
# AD102 pair, and NVLink peer PTEs of a GH100 pair, are byte-identical with
# and without the shim.  And a version without a profile (545) is refused
# with the supported ranges named and the reason.
# On 565/570 the shim's RMForceP2PType=2 turns NVLink off (shim-a-nvlink):
# there the NVLink GPUs get the documented opt-out, RMForceP2PType=0.
. /cases/lib.sh
H='GH100@0000:01:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:02:00.0,vram=80G,bar1=0x22000000000/128G'

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
	o=$(nvflow create 0 1) || exit 1
	echo "$o" | grep -E '^(type|status)='
	for spec in "0x0 0x1000" "0x200000 0x200000"; do
		o=$(nvflow map 0 $spec uvm) || exit 1
		echo "$o" | grep -E '^(aperture|field|addr|pte)='
	done
	return 0
}

for v in 565.57.01 570.148.08 575.64.05; do
	case $v in 575*) R= ;; *) R='RMForceP2PType=0' ;; esac
	run insmod /lib/standin/$v/nvidia.ko
	stock_local=$(ptes_local) || fail "stock_local: a command of ptes_local failed"
	run rmmod nvidia
	run insmod /lib/standin/$v/nvidia.ko gpus="$H" nvlink=0-1 NVreg_RegistryDwords="$R"
	stock_nvlink=$(ptes_nvlink) || fail "stock_nvlink: a command of ptes_nvlink failed"
	run rmmod nvidia

	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko
	shim_local=$(ptes_local) || fail "shim_local: a command of ptes_local failed"
	run rmmod nvidia
	run insmod /lib/standin/$v/nvidia.ko gpus="$H" nvlink=0-1 NVreg_RegistryDwords="$R"
	shim_nvlink=$(ptes_nvlink) || fail "shim_nvlink: a command of ptes_nvlink failed"
	echo "$shim_nvlink"
	expect_match "$v NVLink peers use PEER" "$shim_nvlink" 'aperture=PEER'
	run rmmod nvidia
	run rmmod p2p_shim

	# Every field of every call, on both sides (each call prints each field
	# its grep keeps once): two empty dumps would be equal too.
	expect_lines "$v stock local/sysmem PTE dump" "$stock_local" 24
	expect_lines "$v local/sysmem PTE dump with the shim" "$shim_local" 24
	[ "$stock_local" = "$shim_local" ] || fail "$v local/sysmem PTEs differ"
	echo "ok: $v local and sysmem PTEs identical"
	expect_lines "$v stock NVLink dump" "$stock_nvlink" 10
	expect_lines "$v NVLink dump with the shim" "$shim_nvlink" 10
	[ "$stock_nvlink" = "$shim_nvlink" ] || fail "$v NVLink peer PTEs differ"
	echo "ok: $v NVLink peer PTEs identical"
done

run insmod /lib/p2p-shim/p2p-shim.ko
v=545.29.06
run insmod /lib/standin/$v/nvidia.ko
out=$(p2pctl enable 2>&1) && fail "$v enabled"
echo "$out"
expect_match "$v names the supported ranges" "$out" 'supported: 550.x, 560.x, 565.x, 570.x, 575.x, 580.x, 590.x, 595.x'
expect_match "$v says why" "$out" 'before 550.x'
expect_match "$v nothing armed" "$(p2pctl status)" 'state: +disabled'
run rmmod nvidia
