# SPDX-License-Identifier: GPL-2.0
# GPUs with native P2P behave exactly as without the shim: a GH100 NVLink
# pair, and a GH100 PCIe pair (with registry_defaults=0, see docs/hooks.md),
# give byte-identical caps, objects and PTEs, and no stub hook fires.
. /cases/lib.sh
NV='GH100@0000:01:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:02:00.0,vram=80G,bar1=0x22000000000/128G'

flow() {
	nvflow caps 0 1
	nvflow create 0 1 && {
		nvflow map 0 0x200000 0x200000 rm
		nvflow map 0 0x40000000 0x200000 uvm
		nvflow unmap 0
		nvflow unmap 1
		nvflow destroy 0
	}
	nvflow local 0 0x200000 0x200000
	nvflow sysmem 1 0x12345000 0x1000
}

for v in 580.159.04 595.45.04; do
	for setup in "nvlink=0-1|" "|registry_defaults=0"; do
		nvparam=${setup%%|*} shimparam=${setup#*|}
		echo "== $v $nvparam $shimparam"
		run insmod /lib/standin/$v/nvidia.ko gpus="$NV" $nvparam
		stock=$(flow 2>&1)
		run rmmod nvidia

		run insmod /lib/p2p-shim/p2p-shim.ko enable=1 $shimparam
		run insmod /lib/standin/$v/nvidia.ko gpus="$NV" $nvparam
		expect_match "$v armed" "$(p2pctl status)" 'state: +armed'
		shim=$(flow 2>&1)
		echo "$shim"
		[ "$stock" = "$shim" ] || fail "$v $setup: results differ with the shim:
$(echo "$stock" >/tmp/a; echo "$shim" >/tmp/b; diff /tmp/a /tmp/b)"
		echo "ok: $v $setup identical with and without the shim"
		hits=$(p2pctl status --json | tr -d ' \n' | grep -o '"target":"[a-zA-Z0-9]*_[0-9a-f]\{6\}"[^}]*"hits":[0-9]*' | grep -o '"hits":[0-9]*' | sort -u)
		expect_eq "$v no stub hook fired" "$hits" '"hits":0'
		run rmmod nvidia
		run rmmod p2p_shim
	done
done
