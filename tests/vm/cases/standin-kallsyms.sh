# SPDX-License-Identifier: GPL-2.0
# The stand-in's RM functions are local text symbols of [nvidia] in
# /proc/kallsyms, as in the real driver; 580 and 550 have no
# _kp2pCapsGetStatusOverPcieBar1 (inlined) and the fault-nosym build no
# kbusGetBar1P2PDmaInfo_GH100; no RM function has an ftrace site.
. /cases/lib.sh

# The type letter of an [nvidia] symbol, empty when there is none, from
# the snapshot $ks that syms took after the last insmod (reading all of
# /proc/kallsyms per symbol is slow under TCG).
syms() { grep '\[nvidia\]' /proc/kallsyms; }
symtype() { echo "$ks" | awk -v f="$1" '$3 == f && $4 == "[nvidia]" { print $2 }'; }

run insmod /lib/standin/580.159.04/nvidia.ko
ks=$(syms)
for f in kbusCreateP2PMapping_GP100 kbusCreateP2PMapping_GH100 \
	kbusRemoveP2PMapping_GP100 kbusRemoveP2PMapping_GH100 \
	kbusCreateP2PMappingForBar1P2P_GH100 kbusCreateP2PMappingForBar1P2P_395e98 \
	kbusRemoveP2PMappingForBar1P2P_GH100 kbusRemoveP2PMappingForBar1P2P_395e98 \
	kbusGetBar1P2PDmaInfo_GH100 kbusGetBar1P2PDmaInfo_395e98 \
	kbusHasPcieBar1P2PMapping_GH100 kbusHasPcieBar1P2PMapping_d69453 \
	kbusIsPcieBar1P2PMappingSupported_GH100 kbusIsPcieBar1P2PMappingSupported_d69453 \
	kbusEnableStaticBar1Mapping_TU102 kbusEnableStaticBar1Mapping_395e98 \
	dmaAllocBar1P2PMapping_GH100 dmaAllocBar1P2PMapping_46f6a7 \
	dmaFreeBar1P2PMapping_GH100 dmaFreeBar1P2PMapping_b3696a \
	kbusCreateP2PMappingForMailbox_GM200 kbusCreateP2PMappingForNvlink_GP100 \
	osReadRegistryDword p2pGetCapsStatus gpumgrAttachGpu gpumgrDetachGpu \
	gmmuFmtPtePhysAddrFld nvGpuOpsGetExternalAllocAperture \
	nvGpuOpsBuildExternalAllocPtes p2papiConstruct_IMPL \
	_kp2pCapsCheckStatusOverridesForPcie iovaspaceDestruct_IMPL; do
	expect_eq "$f" "$(symtype $f)" t
done
expect_no_match "580 inlines _kp2pCapsGetStatusOverPcieBar1" "$ks" '_kp2pCapsGetStatusOverPcieBar1'
expect_eq "no global RM symbols" "$(echo "$ks" | grep -cE ' T (kbus|dma|p2p|gmmu|nvGpuOps|os)')" 0
if [ -r /sys/kernel/tracing/available_filter_functions ]; then
	ff=$(grep -E '\[nvidia\]' /sys/kernel/tracing/available_filter_functions)
	expect_match "Kbuild layer is traceable" "$ff" 'nv_ctl_write'
	expect_no_match "RM core has no ftrace sites" "$ff" '^(kbus|dma|p2p|gmmu|nvGpuOps|os)'
fi
run rmmod nvidia

run insmod /lib/standin/575.64.05/nvidia.ko
ks=$(syms)
expect_eq "575 keeps _kp2pCapsGetStatusOverPcieBar1" "$(symtype _kp2pCapsGetStatusOverPcieBar1)" t
expect_no_match "575 has no EnableStatic stub" "$ks" 'kbusEnableStaticBar1Mapping_395e98'
run rmmod nvidia

# 550: the static BAR1 slots and what gen-0 hooks besides; as in Debian's
# 550.163.01 binary, _kp2pCapsGetStatusOverPcieBar1 is inlined.
run insmod /lib/standin/550.163.01/nvidia.ko
ks=$(syms)
for f in kbusIsBar1P2PCapable_bf6dfa kbusIsBar1P2PCapable_GH100 \
	kbusEnableStaticBar1Mapping_395e98 kbusEnableStaticBar1Mapping_GH100 \
	kbusDisableStaticBar1Mapping_d44104 kbusDisableStaticBar1Mapping_GH100 \
	kbusGetStaticFbAperture_395e98 kbusGetStaticFbAperture_GH100 \
	kbusIsStaticBar1Enabled_IMPL _kbusMapAperture_GM107 kbusUnmapFbAperture_GM107 \
	kbusHasPcieBar1P2PMapping_bf6dfa kbusIsPcieBar1P2PMappingSupported_bf6dfa \
	kgmmuEncodePhysAddrs_IMPL nvGpuOpsGetExternalAllocAperture; do
	expect_eq "550 $f" "$(symtype $f)" t
done
expect_eq "550 inlines _kp2pCapsGetStatusOverPcieBar1" "$(symtype _kp2pCapsGetStatusOverPcieBar1)" ""
expect_eq "550 has no TU102 static BAR1" "$(symtype kbusEnableStaticBar1Mapping_TU102)" ""
run rmmod nvidia

run insmod /lib/standin/fault-nosym/nvidia.ko
ks=$(syms)
expect_eq "fault-nosym lacks the symbol" "$(symtype kbusGetBar1P2PDmaInfo_GH100)" ""
expect_eq "fault-nosym has a clone name" "$(symtype kbusGetBar1P2PDmaInfo_GH100.isra.0)" t
expect_eq "fault-nosym keeps the stub" "$(symtype kbusGetBar1P2PDmaInfo_395e98)" t
run rmmod nvidia
