# SPDX-License-Identifier: GPL-2.0
# Stand-in driver flows: local and sysmem PTEs, re-initialisation with a new
# registry, fault injection, static BAR1 limits, Blackwell, usage errors.
. /cases/lib.sh
R=/sys/kernel/debug/nvidia-standin/registry
KO=/lib/standin/580.159.04/nvidia.ko

run insmod $KO
out=$(nvflow local 0 0x200000 0x200000)
expect_eq "local aperture" "$(kv aperture "$out")" VIDEO
expect_eq "local field" "$(kv field "$out")" vid
expect_eq "local pte (ver2)" "$(kv pte "$out")" 0x0000000000020001
out=$(nvflow sysmem 1 0x12345000 0x1000)
expect_eq "sysmem aperture" "$(kv aperture "$out")" SYS_COH
expect_eq "sysmem pte (ver2)" "$(kv pte "$out")" 0x0000000001234505
expect_refused "unaligned offset refused" 'error=Invalid argument' nvflow local 0 0x1000 0x10000
expect_eq "unaligned offset: usage exit" "$(nvflow local 0 0x1000 0x10000 >/dev/null 2>&1; echo $?)" 2
expect_eq "bad command exit" "$(nvflow frobnicate >/dev/null 2>&1; echo $?)" 2
expect_eq "bad object exit" "$(nvflow destroy 7 >/dev/null 2>&1; echo $?)" 2
expect_eq "bad gpu exit" "$(nvflow caps 0 5 >/dev/null 2>&1; echo $?)" 2

# Re-initialisation reads the registry again.
echo "ForceP2P=0x11;RMForceStaticBar1=0" >$R
out=$(nvflow reinit 0) || fail "reinit: $out"
st=$(nvflow state)
expect_eq "reinit static bar1 off" "$(kv gpu0.static_bar1 "$st")" 0
expect_eq "reinit override" "$(kv gpu0.p2p_override "$st")" 0x11
expect_eq "gpu1 untouched" "$(kv gpu1.p2p_override "$st")" 0xffffffff
run nvflow reinit 1 >/dev/null
out=$(nvflow create 0 1) || fail "create: $out"
out=$(nvflow reinit 0); rc=$?
expect_eq "reinit refused with live object" "$rc" 1
expect_eq "reinit status" "$(kv status_name "$out")" NV_ERR_STATE_IN_USE
run nvflow destroy 0 >/dev/null
echo "" >$R
run nvflow reinit 0 >/dev/null
expect_eq "static bar1 back" "$(kv gpu0.static_bar1 "$(nvflow state)")" 1
run rmmod nvidia

# RMForceStaticBar1=1 with a BAR1 smaller than VRAM fails GPU init (580).
run insmod $KO gpus="AD102@0000:01:00.0,vram=48G,bar1=0x4000000000/32G;AD102@0000:02:00.0" \
	NVreg_RegistryDwords="RMForceStaticBar1=1"
st=$(nvflow state)
expect_eq "48G/32G init fails" "$(kv gpu0.init "$st")" failed
expect_eq "48G/32G status" "$(kv gpu0.init_status "$st")" 0x3e
expect_eq "24G/32G init ok" "$(kv gpu1.init "$st")" ok
run rmmod nvidia
run insmod $KO gpus="AD102@0000:01:00.0,vram=24G,bar1=0xf0000000/256M;AD102@0000:02:00.0"
expect_eq "256M BAR1: no static" "$(kv gpu0.static_bar1 "$(nvflow state)")" 0
run rmmod nvidia

# Fault injection in a _GH100 body.
G='GH100@0000:01:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:02:00.0,vram=80G,bar1=0x22000000000/128G'
run insmod $KO gpus="$G" NVreg_RegistryDwords="RMPcieP2PType=1" \
	fail_gh100=kbusCreateP2PMappingForBar1P2P_GH100
out=$(nvflow create 0 1); rc=$?
expect_eq "fault rc" "$rc" 1
expect_eq "fault status" "$(kv status "$out")" 0xffff
expect_eq "fault leaves no iova" "$(kv gpu0.iova_mappings "$(nvflow state)")" 0
run rmmod nvidia

# Blackwell: GB100 BAR1 peers get SYS_COH from UVM; GB202 (GeForce) no P2P.
B='GB100@0000:01:00.0,vram=96G,bar1=0x20000000000/128G;GB100@0000:02:00.0,vram=96G,bar1=0x22000000000/128G'
run insmod $KO gpus="$B" NVreg_RegistryDwords="RMPcieP2PType=1"
run nvflow create 0 1 >/dev/null
out=$(nvflow map 0 0 0x10000 uvm) || fail "gb100 uvm: $out"
expect_eq "GB100 uvm aperture" "$(kv aperture "$out")" SYS_COH
run rmmod nvidia
run insmod $KO gpus="GB202@0000:01:00.0,vram=32G,bar1=0x4000000000/64G;GB202@0000:02:00.0,vram=32G,bar1=0x5000000000/64G" \
	NVreg_RegistryDwords="RMPcieP2PType=1"
expect_eq "GB202 stock caps" "$(kv p2p "$(nvflow caps 0 1)")" NO
run rmmod nvidia
run insmod /lib/standin/565.57.01/nvidia.ko gpus="GB202@0000:01:00.0;AD102@0000:02:00.0"
expect_eq "565 does not know GB202" "$(kv gpus "$(nvflow state)")" 1
run rmmod nvidia
