# SPDX-License-Identifier: GPL-2.0
# Removing the UVM peer set while nvidia-uvm builds PTEs on two CPUs
# (issue 28).  Two managed-memory mappings, one pinned to each CPU, are
# parked inside uvm_gpu_peer_phys_address (whose return the set hooks),
# under nvidia-uvm's own VA space lock and no RM lock.  Every way to remove
# the set is then closed until they finish: rmmod nvidia_uvm is refused
# (its calls are in flight), p2pctl disable is refused (the pair's P2P
# object, made by nvidia-uvm's peer access, is a live BAR1 mapping), and
# disabling peer access waits for the VA space.  After the release both
# builds carry the set's PTE (SYS at the peer's BAR1 base), nothing WARNs,
# and the set then goes with the mapping: disable works, later builds are
# refused for want of peer access, rmmod nvidia_uvm works.
. /cases/lib.sh

G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'

trap release_and_unload EXIT

[ "$(nproc)" -ge 2 ] || fail "needs 2 CPUs, the VM has $(nproc)"

run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
run insmod /lib/standin/580.159.04/nvidia-uvm.ko
expect_eq "register 0" "$(kv status "$(uvm register 0)")" 0x0
expect_eq "register 1" "$(kv status "$(uvm register 1)")" 0x0
expect_eq "peer access" "$(kv status "$(uvm enable 0 1)")" 0x0
expect_match "UVM peer set armed" "$(p2pctl status)" 'uvm peers: +armed'
st=$(nvflow state)
base01=$(( 0x6000000000 + $(kv gpu1.static_bar1_offset "$st") ))
base10=$(( 0x4000000000 + $(kv gpu0.static_bar1_offset "$st") ))
out=$(uvm map 0 1 0x200000)
expect_eq "before: the set's SYS PTE" "$(kv pte_aperture "$out")" 2

echo "== two PTE builds parked, on CPU 0 and CPU 1"
run nvflow hold pte
taskset -c 0 sh -c "exec 3<>$UVM_CTL; printf 'map 0 1 0x200000' >&3 && cat <&3" >map0.out 2>&1 &
p0=$!
taskset -c 1 sh -c "exec 3<>$UVM_CTL; printf 'map 1 0 0x1000' >&3 && cat <&3" >map1.out 2>&1 &
p1=$!
line=$(nvflow wait-held pte 2 30) || fail "the two builds did not park: $(nvflow held pte)"
echo "$line"
expect_match "parked on both CPUs" "$line" 'cpus=0,1$'

echo "== rmmod nvidia_uvm while they are parked: refused"
out=$(rmmod nvidia_uvm 2>&1) && fail "rmmod nvidia_uvm went through with builds in flight"
echo "$out"
module_loaded nvidia_uvm || fail "nvidia_uvm gone"

echo "== disable while they are parked: refused, the set stays"
out=$(p2pctl disable 2>&1) && fail "disable went through with PTE builds in flight: $out"
echo "$out"
expect_match "refused for the UVM pair's mapping" "$out" 'busy.*GPU0-GPU1'
expect_match "UVM peer set still armed" "$(p2pctl status)" 'uvm peers: +armed'

echo "== peer access disabled meanwhile: waits for the VA space"
uvm disable 0 1 >peer-disable.out 2>&1 &
pd=$!
sleep 1
kill -0 $pd 2>/dev/null || fail "peer access went away under the builds: $(cat peer-disable.out)"

echo "== release"
run nvflow release pte
wait $p0 || fail "map 0 1: $(cat map0.out)"
wait $p1 || fail "map 1 0: $(cat map1.out)"
for spec in "0 $base01 0x200000" "1 $base10 0x1000"; do
	set -- $spec
	out=$(cat map$1.out)
	echo "map from GPU $1: $(echo "$out" | tr '\n' ' ')"
	expect_eq "map $1 finished" "$(kv status "$out")" 0x0
	expect_eq "map $1: the set's SYS PTE" "$(kv pte_aperture "$out")" 2
	expect_eq "map $1: at the peer's BAR1 base" "$(kv pte_addr_sys "$out")" \
		"$(printf 0x%x $(($2 + $3)))"
done
wait $pd || fail "peer disable: $(cat peer-disable.out)"
expect_eq "peer access disabled" "$(kv status "$(cat peer-disable.out)")" 0x0
expect_match "its mapping gone" "$(p2pctl status)" 'mappings: +0'

echo "== now the set goes"
run p2pctl disable
st=$(p2pctl status)
echo "$st"
expect_match "residual: the GPUs carry ForceP2P" "$st" 'state: +residual'
expect_no_match "UVM peer set gone" "$st" 'uvm peers: +armed|peer_phys_address|make_pte'
expect_eq "no peer access: no build" "$(kv status "$(uvm map 0 1 0x200000)")" 0x26
run rmmod nvidia_uvm

echo "== teardown"
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
sleep 1
run rmmod nvidia
run rmmod p2p_shim
