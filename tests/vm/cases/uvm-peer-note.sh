# SPDX-License-Identifier: GPL-2.0
# The UVM peer set hands a thread's BAR1 create note only to a caps query
# about the same pair (issue 41, item 3).  On 550-575 RM's UVM caps carry
# no BAR1 bases, so nothing else tells the note's pair from the queried
# one; before the fix a thread's last note (up to 10 s old) went to any
# later BAR1-like caps query on that thread.
#
# 570.148.08: GPUs 0 and 1 (AD102, registry_gpus=) are p2p-shim's forced
# BAR1 pair; GPUs 2 and 3 (GH100, outside registry_gpus=) are a stock
# BAR1 pair made by the driver's own _GH100 slot (RMForceP2PType=2, the
# user's), which nvidia-uvm sees as PCIe with no peer ids and which the
# UVM peer set must leave alone.  One thread (this shell: the control
# files are written by its builtins) creates the 0-1 pair through RM, then
# peers 2 and 3 in nvidia-uvm: their PTEs must stay stock, not point at
# GPU 1's BAR1.
. /cases/lib.sh

v=570.148.08
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
G="$G;GH100@0000:03:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:04:00.0,vram=80G,bar1=0x22000000000/128G"
CTL=/sys/kernel/debug/nvidia-standin/ctl

trap release_and_unload EXIT

# ctl CMD: one command to the stand-in nvidia's control file, from this shell.
ctl() {
	exec 4<>$CTL
	printf '%s' "$*" >&4 || { exec 4>&-; return 1; }
	cat <&4
	exec 4>&-
}

klog_mark
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_gpus=0000:01:00.0,0000:02:00.0
run insmod /lib/standin/$v/nvidia.ko gpus="$G" NVreg_RegistryDwords="RMForceP2PType=2"
run insmod /lib/standin/$v/nvidia-uvm.ko
expect_eq "0-1 caps (p2p-shim's pair)" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
expect_eq "2-3 caps (the driver's own pair)" "$(kv connectivity "$(nvflow caps 2 3)")" pcie_bar1
for g in 2 3; do
	uvm register $g >reg.out || fail "register $g"
	expect_eq "register $g" "$(kv status "$(cat reg.out)")" 0x0
done

echo "== this shell creates the 0-1 pair through RM, then peers 2 and 3 in nvidia-uvm"
ctl create 0 1 >create.out || fail "create 0 1: $(cat create.out)"
cat create.out
expect_eq "create 0 1" "$(kv type "$(cat create.out)")" pcie_bar1
uvm enable 2 3 >enable.out || fail "enable 2 3"
cat enable.out | tr '\n' ' '; echo
expect_eq "enable 2 3" "$(kv status "$(cat enable.out)")" 0x0
out=$(uvm map 2 3 0x200000) || fail "map 2 3"
echo "$out" | tr '\n' ' '; echo
# Stock 570 for a BAR1 pair: no SYS aperture (uvm-peer.sh, standin-gh100.sh).
expect_no_match "2<-3 PTE not redirected (SYSTEM_COHERENT)" "$(kv pte_aperture "$out")" '^2$'
expect_no_match "2<-3 UVM aperture not SYS" "$(kv aperture "$out")" '^9$'
log=$(klog_since)
expect_no_match "no 0-1 tags handed to the 2-3 query" "$log" 'nvidia-uvm peers GPU0-GPU1'

echo "== teardown"
expect_eq "disable 2 3" "$(kv status "$(uvm disable 2 3)")" 0x0
run rmmod nvidia-uvm
run nvflow destroy "$(kv object "$(cat create.out)")" >/dev/null
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim
