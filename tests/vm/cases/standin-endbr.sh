# SPDX-License-Identifier: GPL-2.0
# What the kernel leaves of the stand-in's ENDBRs after loading it.  The
# stand-in's RM core is built like NVIDIA's (endbr64 at every function,
# tests/standin/Kbuild); on a kernel with CONFIG_X86_KERNEL_IBT, objtool
# --ibt over the linked nvidia.o lists the ENDBRs of functions that are only
# ever called directly, and the kernel poisons ("seals") those at load:
# 66 0f 1f 00 (6.12) or 0f 1f 40 d6 (7.x) instead of f3 0f 1e fa.
# gpumgrGetGpu is only called directly: sealed on such a kernel, intact
# elsewhere.  kbusCreateP2PMappingForBar1P2P_GH100 sits in an NVOC function
# table (address taken): it keeps its ENDBR everywhere.  The bytes are read
# through /proc/kcore (kpeek).
. /cases/lib.sh
run insmod /lib/standin/580.159.04/nvidia.ko gpus='AD102@0000:01:00.0'
direct=$(kpeek gpumgrGetGpu) || fail "kpeek gpumgrGetGpu"
table=$(kpeek kbusCreateP2PMappingForBar1P2P_GH100) || fail "kpeek kbusCreateP2PMappingForBar1P2P_GH100"
echo "gpumgrGetGpu:                        $direct"
echo "kbusCreateP2PMappingForBar1P2P_GH100: $table"
expect_match "the NVOC-table function keeps its ENDBR" "$table" ' f3 0f 1e fa$'
# CONFIG_X86_KERNEL_IBT, from the kernel's own symbols.
if grep -Eq ' (ibt_selftest|ibt_selftest_noendbr|__ibt_endbr_seal)$' /proc/kallsyms; then
	expect_match "IBT kernel: the directly called function is sealed" "$direct" \
		' (66 0f 1f 00|0f 1f 40 d6)$'
else
	expect_match "no IBT: the directly called function keeps its ENDBR" "$direct" ' f3 0f 1e fa$'
fi
grep -E ' (ibt_selftest|ibt_selftest_noendbr|__ibt_endbr_seal)$' /proc/kallsyms | sed 's/^/kallsyms: /'
run rmmod nvidia
