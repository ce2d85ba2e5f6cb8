# SPDX-License-Identifier: GPL-2.0
# The stand-in's NVOC stubs, read back from module text, are byte for byte
# the real driver's (endbr64; mov $0x56,%eax; ret / xor %eax,%eax; ret /
# ret); the fault-stub build differs where it should.  550 and 560 have
# the static BAR1 stubs too, and their own suffix (bf6dfa) for NV_FALSE.
. /cases/lib.sh

NS='f3 0f 1e fa b8 56 00 00 00 c3'
FALSE='f3 0f 1e fa 31 c0 c3'
RET='f3 0f 1e fa c3'
stub() { echo "$1" | sed -n "s/^$2 //p"; }

for v in 550.163.01 560.35.03 565.57.01 575.64.05 580.159.04 595.45.04 fault-stub; do
	case $v in 55*|56[0-4]*) F=bf6dfa ;; *) F=d69453 ;; esac
	echo "== $v"
	run insmod /lib/standin/$v/nvidia.ko
	s=$(nvflow stubs)
	echo "$s"
	expect_eq "$v CreateBar1" "$(stub "$s" kbusCreateP2PMappingForBar1P2P_395e98)" "$NS"
	expect_eq "$v RemoveBar1" "$(stub "$s" kbusRemoveP2PMappingForBar1P2P_395e98)" "$NS"
	expect_eq "$v GetDmaInfo" "$(stub "$s" kbusGetBar1P2PDmaInfo_395e98)" "$NS"
	expect_eq "$v Has" "$(stub "$s" kbusHasPcieBar1P2PMapping_$F)" "$FALSE"
	if [ $v = fault-stub ]; then
		expect_eq "$v IsSupported (altered)" \
			"$(stub "$s" kbusIsPcieBar1P2PMappingSupported_d69453)" \
			'f3 0f 1e fa b8 01 00 00 00 c3'
	else
		expect_eq "$v IsSupported" \
			"$(stub "$s" kbusIsPcieBar1P2PMappingSupported_$F)" "$FALSE"
	fi
	case $v in
	550*|560*)
		expect_eq "$v IsBar1P2PCapable" "$(stub "$s" kbusIsBar1P2PCapable_bf6dfa)" "$FALSE"
		expect_eq "$v EnableStatic" "$(stub "$s" kbusEnableStaticBar1Mapping_395e98)" "$NS"
		expect_eq "$v DisableStatic" "$(stub "$s" kbusDisableStaticBar1Mapping_d44104)" "$RET"
		expect_eq "$v GetStaticFbAperture" "$(stub "$s" kbusGetStaticFbAperture_395e98)" "$NS"
		expect_eq "$v UpdateStaticBar1VAMapping" "$(stub "$s" kbusUpdateStaticBar1VAMapping_395e98)" "$NS"
		expect_eq "$v dmaAlloc" "$(stub "$s" dmaAllocBar1P2PMapping_46f6a7)" "$NS"
		expect_eq "$v dmaFree" "$(stub "$s" dmaFreeBar1P2PMapping_b3696a)" "$RET" ;;
	565*|575*)
		expect_no_match "$v no EnableStatic HAL" "$s" kbusEnableStaticBar1Mapping
		expect_eq "$v dmaAlloc" "$(stub "$s" dmaAllocBar1P2PMapping_46f6a7)" "$NS"
		expect_eq "$v dmaFree" "$(stub "$s" dmaFreeBar1P2PMapping_b3696a)" "$RET" ;;
	595*)
		expect_eq "$v EnableStatic" "$(stub "$s" kbusEnableStaticBar1Mapping_395e98)" "$NS"
		expect_eq "$v dmaAlloc" "$(stub "$s" dmaAllocBar1P2PMapping_395e98)" "$NS"
		expect_eq "$v dmaFree" "$(stub "$s" dmaFreeBar1P2PMapping_d44104)" "$RET" ;;
	*)
		expect_eq "$v EnableStatic" "$(stub "$s" kbusEnableStaticBar1Mapping_395e98)" "$NS"
		expect_eq "$v dmaAlloc" "$(stub "$s" dmaAllocBar1P2PMapping_46f6a7)" "$NS"
		expect_eq "$v dmaFree" "$(stub "$s" dmaFreeBar1P2PMapping_b3696a)" "$RET" ;;
	esac
	run rmmod nvidia
done
