# SPDX-License-Identifier: GPL-2.0
# Stand-in driver: unloading with a live BAR1 P2P object prints the real
# driver's "left-over mappings in IOVAS" error once per GPU; without one,
# or when unload tears objects down through the RM, nothing.
. /cases/lib.sh
G='GH100@0000:01:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:02:00.0,vram=80G,bar1=0x22000000000/128G;GH100@0000:03:00.0,vram=80G,bar1=0x24000000000/128G'
KO=/lib/standin/580.159.04/nvidia.ko

run insmod $KO gpus="$G" NVreg_RegistryDwords="RMPcieP2PType=1"
run nvflow create 0 1 >/dev/null
klog_mark
run rmmod nvidia
log=$(klog_since)
echo "$log"
expect_match "gpu0 warning" "$log" 'NVRM: iovaspaceDestruct_IMPL: 1 left-over mappings in IOVAS 0x100'
expect_match "gpu1 warning" "$log" 'NVRM: iovaspaceDestruct_IMPL: 1 left-over mappings in IOVAS 0x200'
expect_no_match "gpu2 had none" "$log" 'IOVAS 0x300'
expect_eq "one line per GPU" "$(echo "$log" | grep -c left-over)" 2

run insmod $KO gpus="$G" NVreg_RegistryDwords="RMPcieP2PType=1"
run nvflow create 0 1 >/dev/null
run nvflow destroy 0 >/dev/null
klog_mark
run rmmod nvidia
expect_no_match "no warning after destroy" "$(klog_since)" 'left-over'

run insmod $KO gpus="$G" NVreg_RegistryDwords="RMPcieP2PType=1" unload_destroys=1
run nvflow create 0 1 >/dev/null
klog_mark
run rmmod nvidia
expect_no_match "no warning when unload destroys" "$(klog_since)" 'left-over'

run insmod $KO
klog_mark
run rmmod nvidia
expect_no_match "no warning without objects" "$(klog_since)" 'left-over'
