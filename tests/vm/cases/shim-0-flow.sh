# SPDX-License-Identifier: GPL-2.0
# Gen 0 (550.163.01, Debian 13's packaged open driver; 560.35.03): an AD102
# pair gets static BAR1 through the stub slots, BAR1 P2P end to end, and
# UVM peer PTEs SYS_NONCOH at the peer's BAR1 DMA base + offset.  Static
# BAR1 stays invisible outside the BAR1 P2P code: CPU mappings of video
# memory (contiguous or not) stay dynamic and compressed allocations keep
# their page size, where a Hopper with native static BAR1 (the control)
# fails the first and forces 2 MiB pages.  The static BAR1 is in the
# ledger (disable refused), torn down through the _GH100 body at
# re-initialisation, and a small-BAR pair reports no P2P, also with the
# residual guard after a disable.
. /cases/lib.sh
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
H='GH100@0000:01:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:02:00.0,vram=80G,bar1=0x22000000000/128G'
SMALL='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0xf0000000/256M'

v=550.163.01
echo "== $v stock"
run insmod /lib/standin/$v/nvidia.ko gpus="$G"
st=$(nvflow state)
expect_eq "stock no static BAR1" "$(kv gpu0.static_bar1 "$st")" 0
expect_eq "stock mailbox area" "$(kv gpu0.bar1_mailbox "$st")" 0x100000
expect_eq "stock caps" "$(kv p2p "$(nvflow caps 0 1)")" NO
run rmmod nvidia

echo "== $v control: GH100 with native static BAR1 (RMForceP2PType=2)"
run insmod /lib/standin/$v/nvidia.ko gpus="$H" NVreg_RegistryDwords="RMForceP2PType=2"
expect_eq "GH100 static BAR1" "$(kv gpu0.static_bar1 "$(nvflow state)")" 1
out=$(nvflow bar1map 0 0x200000 0x400000 noncontig)
expect_eq "GH100 non-contiguous BAR1 map fails" "$(kv status_name "$out")" NV_ERR_INVALID_ARGUMENT
out=$(nvflow bar1map 0 0x200000 0x400000 contig)
expect_eq "GH100 contiguous BAR1 map is static" "$(kv bar1_offset "$out")" 0x200000
expect_eq "GH100 compressed alloc: 2M pages" "$(kv page_size "$(nvflow alloc 0 0x200000 compressed)")" 0x200000
run rmmod nvidia

echo "== $v with the shim"
klog_mark
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/$v/nvidia.ko gpus="$G"
expect_match "armed with gen-0" "$(p2pctl status)" 'state: +armed.*profile: +gen-0'
st=$(nvflow state)
for g in 0 1; do
	expect_eq "GPU$g static BAR1" "$(kv gpu$g.static_bar1 "$st")" 1
	expect_eq "GPU$g static at BAR1 offset 0" "$(kv gpu$g.static_bar1_offset "$st")" 0x0
	expect_eq "GPU$g one BAR1 mapping (the static one)" "$(kv gpu$g.bar1_mappings "$st")" 1
	expect_eq "GPU$g no mailbox area" "$(kv gpu$g.bar1_mailbox "$st")" 0x0
done
expect_match "ledger shows static BAR1" "$(p2pctl status)" 'static-bar1'

out=$(nvflow caps 0 1)
expect_eq "caps" "$(kv connectivity "$out")" pcie_bar1
out=$(nvflow create 0 1) || fail "create: $out"
expect_eq "object type" "$(kv type "$out")" pcie_bar1
expect_eq "no mailbox" "$(kv mailbox_broken "$out")" 0
expect_eq "BAR1 DMA l2p = GPU1 BAR1" "$(kv bar1_dma_l2p "$out")" 0x6000000000
expect_eq "BAR1 DMA p2l = GPU0 BAR1" "$(kv bar1_dma_p2l "$out")" 0x4000000000
obj=$(kv object "$out")
base=$((0x6000000000))

maps=
for spec in "0x0 0x1000" "0x1000 0x1000" "0x200000 0x200000" "0x7fe00000 0x200000" "0x40000000 0x1000"; do
	set -- $spec
	out=$(nvflow map "$obj" $1 $2 uvm) || fail "uvm map $spec: $out"
	maps="$maps $(kv mapping "$out")"
	expect_eq "uvm aperture @$1/$2" "$(kv aperture "$out")" SYS_NONCOH
	expect_eq "uvm field @$1/$2" "$(kv field "$out")" sys
	expect_eq "uvm addr @$1/$2" "$(kv addr "$out")" "$(printf 0x%x $((base + $1)))"
	expect_eq "pte aperture bits @$1/$2" "$(kv pte_aperture "$out")" 3
	expect_eq "pte sys address @$1/$2" "$(kv pte_addr_sys "$out")" "$(printf 0x%x $((base + $1)))"
done
out=$(nvflow map "$obj" 0x200000 0x200000 rm) || fail "rm map: $out"
expect_eq "rm aperture" "$(kv aperture "$out")" SYS_NONCOH
expect_eq "rm window at the static offset" "$(kv bar1_offset "$out")" 0x200000
expect_eq "rm addr" "$(kv addr "$out")" "$(printf 0x%x $((base + 0x200000)))"
rmmap=$(kv mapping "$out")
expect_eq "window made no dynamic BAR1 mapping" "$(kv gpu1.bar1_mappings "$(nvflow state)")" 1

# Outside BAR1 P2P, static BAR1 is not there.
out=$(nvflow bar1map 0 0x200000 0x400000 noncontig)
expect_eq "non-contiguous BAR1 map works" "$(kv status_name "$out")" NV_OK
dyn1=$(kv bar1_offset "$out")
[ $((dyn1)) -ge $((24 << 30)) ] || fail "non-contiguous BAR1 map $dyn1 is not dynamic"
out=$(nvflow bar1map 0 0x0 0x200000 contig)
expect_eq "contiguous BAR1 map works" "$(kv status_name "$out")" NV_OK
dyn2=$(kv bar1_offset "$out")
[ $((dyn2)) -ge $((24 << 30)) ] || fail "contiguous BAR1 map $dyn2 is not dynamic"
expect_eq "two dynamic BAR1 mappings" "$(kv gpu0.bar1_mappings "$(nvflow state)")" 3
expect_eq "unmap 1" "$(kv status_name "$(nvflow bar1unmap 0 $dyn1 0x400000)")" NV_OK
expect_eq "unmap 2" "$(kv status_name "$(nvflow bar1unmap 0 $dyn2 0x200000)")" NV_OK
expect_eq "dynamic BAR1 mappings gone" "$(kv gpu0.bar1_mappings "$(nvflow state)")" 1
out=$(nvflow alloc 0 0x200000 compressed)
expect_eq "compressed alloc works" "$(kv status_name "$out")" NV_OK
expect_eq "compressed alloc keeps its page size" "$(kv page_size "$out")" 0x10000
expect_match "view hook fired" "$(p2pctl status)" 'kbusIsStaticBar1Enabled_IMPL +return +installed +[1-9]'

for m in $maps $rmmap; do run nvflow unmap "$m" >/dev/null; done
expect_eq "window unmap left the static mapping alone" "$(kv gpu1.bar1_mappings "$(nvflow state)")" 1
run nvflow destroy "$obj" >/dev/null

out=$(p2pctl disable 2>&1) && fail "disable with static BAR1 succeeded"
expect_match "disable names static BAR1" "$out" 'GPU0 static BAR1'

# Re-initialisation tears static BAR1 down through the _GH100 body.
out=$(nvflow reinit 0)
expect_eq "reinit" "$(kv status_name "$out")" NV_OK
expect_eq "reinit static again" "$(kv static_bar1 "$out")" 1
st=$(nvflow state)
expect_eq "no BAR1 mapping leaked at reinit" "$(kv gpu0.bar1_leaked_mappings "$st")" 0
expect_eq "one static mapping after reinit" "$(kv gpu0.bar1_mappings "$st")" 1

run rmmod nvidia
expect_match "waiting after nvidia left" "$(p2pctl status)" 'state: +waiting'
run p2pctl disable	# the ledger is empty: the static BAR1 entries went with nvidia
run rmmod p2p_shim
log=$(klog_since)
expect_no_match "no left-over mappings" "$log" 'left-over'
expect_no_match "no static BAR1 failure" "$log" 'Failed to create'

echo "== $v small BAR on one GPU: no P2P reported"
# Without the guard, 550's BAR1 caps say yes under ForceP2P before asking
# whether both GPUs have static BAR1, and the first object then fails.
run insmod /lib/standin/$v/nvidia.ko gpus="$SMALL" NVreg_RegistryDwords="ForceP2P=0x211;RMForceP2PType=2"
expect_eq "keys alone: BAR1 caps" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
expect_eq "keys alone: create fails" "$(kv status_name "$(nvflow create 0 1)")" NV_ERR_NOT_SUPPORTED
run rmmod nvidia
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/$v/nvidia.ko gpus="$SMALL"
st=$(nvflow state)
expect_eq "GPU1 (256M BAR1) no static BAR1" "$(kv gpu1.static_bar1 "$st")" 0
out=$(nvflow caps 0 1)
expect_eq "small BAR caps" "$(kv p2p "$out")" NO
expect_eq "small BAR connectivity" "$(kv connectivity "$out")" unknown
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim

echo "== $v residual guard: both BARs small, disable while the GPUs carry our ForceP2P"
TINY='AD102@0000:01:00.0,vram=24G,bar1=0xe0000000/256M;AD102@0000:02:00.0,vram=24G,bar1=0xf0000000/256M'
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/$v/nvidia.ko gpus="$TINY"
expect_eq "tiny BARs: no static BAR1" "$(kv gpu0.static_bar1 "$(nvflow state)")" 0
run p2pctl disable
st=$(p2pctl status)
expect_match "4-argument caps guard stays" "$st" 'p2pGetCapsStatus +return +installed'
expect_match "static BAR1 stubs back" "$st" 'kbusIsBar1P2PCapable_bf6dfa +redirect +idle'
out=$(nvflow caps 0 1)
expect_eq "residual: no BAR1 offer" "$(kv connectivity "$out")" unknown
expect_eq "residual: no P2P" "$(kv p2p "$out")" NO
run nvflow reinit 0 >/dev/null
klog_mark
run nvflow reinit 1 >/dev/null
wait_match klog_since 'caps guard removed'	# the rest goes in a work item
expect_match "guard removed after the last" "$(klog_since)" 'caps guard removed'
expect_match "GPUs re-initialised: nothing left" "$(p2pctl status)" 'hooks: +0 installed'
run rmmod nvidia
run rmmod p2p_shim

v=560.35.03
echo "== $v with the shim"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/$v/nvidia.ko gpus="$G"
expect_match "$v armed with gen-0" "$(p2pctl status)" 'state: +armed.*profile: +gen-0'
out=$(nvflow create 0 1) || fail "$v create: $out"
expect_eq "$v object type" "$(kv type "$out")" pcie_bar1
out=$(nvflow map "$(kv object "$out")" 0x200000 0x200000 uvm) || fail "$v uvm map: $out"
expect_eq "$v uvm addr" "$(kv addr "$out")" 0x6000200000
expect_eq "$v uvm aperture" "$(kv aperture "$out")" SYS_NONCOH
run nvflow unmap "$(kv mapping "$out")" >/dev/null
run nvflow destroy 0 >/dev/null
run rmmod nvidia
run rmmod p2p_shim
