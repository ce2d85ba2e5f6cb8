# SPDX-License-Identifier: GPL-2.0
# Stand-in driver, no p2p-shim: BAR1 P2P windows (docs/windows.md section
# 13) made by calling dmaAllocBar1P2PMapping_GH100 directly (nvflow
# window), on GPUs without static BAR1.  The BAR1 page size follows
# kbusDetermineBar1Force64KBMapping: 64 KiB at a 256 MiB BAR, the
# allocation's page size at 32 GiB, RM64KBBAR1Mappings overrides both
# ways; the window memdesc keeps the allocation's page size either way
# (the forcing lands on a temporary sub-memdesc); BAR1 VA is first fit,
# at least 64 KiB aligned, rounded up to the page size, and never reaches
# the overfetch page; a window larger than the free BAR1 maps nothing;
# the driver's own free misses a dynamic window (it unmaps by the BAR1 bus
# address), and 1,000 cycles freed at the BAR1 offset leave the allocator
# as it was.  docs/standin.md, "BAR1 P2P windows", has the source lines.
. /cases/lib.sh
KO=/lib/standin/595.45.04/nvidia.ko
SMALL=0x6000000000 BIG=0x6800000000
G="GB202@0000:01:00.0,vram=32G,bar1=$SMALL/256M;GB202@0000:02:00.0,vram=32G,bar1=$BIG/32G"
NOSB1='RMForceStaticBar1=0'

hex() { printf '0x%x' "$(($1))"; }

# window A B OFFSET LENGTH PAGESIZE: prints the answer, fails on an error
window() {
	out=$(nvflow window "$@") || fail "window $*: $out"
	echo "$out"
}

echo "== the BAR1 page size per BAR"
run insmod $KO gpus="$G" NVreg_RegistryDwords="$NOSB1"
st=$(nvflow state)
expect_eq "256M BAR forces 64K" "$(kv gpu0.bar1_force64k "$st")" 1
expect_eq "32G BAR does not" "$(kv gpu1.bar1_force64k "$st")" 0
expect_eq "gpu0 no static BAR1" "$(kv gpu0.static_bar1 "$st")" 0
expect_eq "gpu1 no static BAR1" "$(kv gpu1.static_bar1 "$st")" 0

for owner in 0 1; do
	mapper=$((1 - owner))
	a=$(window $mapper $owner 0 0x10000 0x10000)
	b=$(window $mapper $owner 0x200000 0x200000 0x200000)
	offa=$(kv bar1_offset "$a") offb=$(kv bar1_offset "$b")
	expect_eq "gpu$owner: 64K window page" "$(kv page_size "$a")" 0x10000
	expect_eq "gpu$owner: 64K BAR1 page" "$(kv bar1_page_size "$a")" 0x10000
	expect_eq "gpu$owner: 2M window length" "$(kv length "$b")" 0x200000
	expect_eq "gpu$owner: the window memdesc keeps 2M pages" \
		"$(kv page_size "$b")" 0x200000
	expect_eq "gpu$owner: two BAR1 mappings" "$(kv bar1_mappings "$b")" 2
	if [ $owner = 0 ]; then
		base=$SMALL
		expect_eq "gpu0: 2M pages mapped at 64K in BAR1" \
			"$(kv bar1_page_size "$b")" 0x10000
		expect_eq "gpu0: first fit right after the 64K window" \
			"$offb" "$(hex "$offa + 0x10000")"
		expect_eq "gpu0: window 64K aligned" "$((offb % 0x10000))" 0
		[ $((offb % 0x200000)) -ne 0 ] ||
			fail "gpu0: 2M window at $offb is 2M aligned: the case proves nothing"
	else
		base=$BIG
		expect_eq "gpu1: 2M pages kept in BAR1" \
			"$(kv bar1_page_size "$b")" 0x200000
		expect_eq "gpu1: window 2M aligned" "$((offb % 0x200000))" 0
		expect_eq "gpu1: first fit at the next 2M" \
			"$offb" "$(hex "($offa + 0x10000 + 0x1fffff) & ~0x1fffff")"
		# 64 KiB of 2 MiB-page memory: 2 MiB of BAR1 VA, length as asked
		c=$(window 0 1 0x400000 0x10000 0x200000)
		expect_eq "gpu1: 64K of 2M pages: length as asked" \
			"$(kv length "$c")" 0x10000
		expect_eq "gpu1: 64K of 2M pages: 2M of BAR1" \
			"$(kv bar1_size "$c")" 0x200000
		expect_eq "gpu1: 64K of 2M pages: first fit after the 2M window" \
			"$(kv bar1_offset "$c")" "$(hex "$offb + 0x200000")"
		run nvflow winfree "$(kv window "$c")" >/dev/null
		run nvflow bar1unmap 1 "$(kv bar1_offset "$c")" 0x10000 >/dev/null
	fi
	expect_eq "gpu$owner: SYSMEM at the BAR1 bus address" \
		"$(kv bar1_addr "$b")" "$(hex "$base + $offb")"

	# The driver's own free unmaps by the bus address: the window stays.
	out=$(nvflow winfree "$(kv window "$b")") || fail "winfree: $out"
	expect_eq "gpu$owner: stock free misses the window" "$(kv bar1_mappings "$out")" 2
	out=$(nvflow bar1unmap $owner "$offb" 0x200000) || fail "bar1unmap: $out"
	# First fit: a new window takes the lowest hole, not the next VA
	d=$(window $mapper $owner 0x200000 0x10000 0x10000)
	expect_eq "gpu$owner: first fit into the hole after the 64K window" \
		"$(kv bar1_offset "$d")" "$(hex "$offa + 0x10000")"
	run nvflow winfree "$(kv window "$d")" >/dev/null
	run nvflow bar1unmap $owner "$(kv bar1_offset "$d")" 0x10000 >/dev/null
	run nvflow winfree "$(kv window "$a")" >/dev/null
	run nvflow bar1unmap $owner "$offa" 0x10000 >/dev/null
	expect_eq "gpu$owner: allocator empty" \
		"$(kv gpu$owner.bar1_mappings "$(nvflow state)")" 0
done

echo "== a window larger than the free BAR1 maps nothing"
w=$(window 1 0 0 0x1000000 0x200000)
out=$(nvflow window 1 0 0x1000000 0xff00000 0x200000)
expect_eq "too large refused" "$(kv status_name "$out")" NV_ERR_NO_MEMORY
expect_eq "nothing more mapped" "$(kv bar1_mappings "$out")" 1
expect_eq "no window id" "$(kv window "$out")" ""

echo "== the last 4 KiB of BAR1 (the overfetch page) is never mapped"
end=$(($(kv bar1_offset "$w") + 0x1000000))
rest=$((0x10000000 - end))
out=$(nvflow window 1 0 0x1000000 "$rest" 0x10000)
expect_eq "up to the BAR's end refused" "$(kv status_name "$out")" NV_ERR_NO_MEMORY
expect_eq "nothing mapped for it" "$(kv bar1_mappings "$out")" 1
last=$(window 1 0 0x1000000 "$((rest - 0x10000))" 0x10000)
expect_eq "64 KiB short of the end fits" "$(kv bar1_offset "$last")" "$(hex "$end")"
run nvflow winfree "$(kv window "$last")" >/dev/null
run nvflow bar1unmap 0 "$end" "$((rest - 0x10000))" >/dev/null
expect_eq "only the 16M window left" \
	"$(kv gpu0.bar1_mappings "$(nvflow state)")" 1

echo "== 1,000 cycles"
out=$(nvflow winsoak 1 0 0x200000 0x200000 1000) || fail "winsoak: $out"
echo "$out"
expect_eq "cycles" "$(kv cycles "$out")" 1000
expect_eq "always the same BAR1 range" "$(kv moved "$out")" 0
expect_eq "each left for the offset unmap" "$(kv already_free "$out")" 0
expect_eq "only the earlier window left" "$(kv bar1_mappings "$out")" 1
run rmmod nvidia

echo "== RM64KBBAR1Mappings: 0 everywhere, 1 for the 32G GPU"
run insmod $KO gpus="$G" NVreg_RegistryDwords="$NOSB1;RM64KBBAR1Mappings=0" \
	NVreg_RegistryDwordsPerDevice="pci=0000:02:00.0;RM64KBBAR1Mappings=1"
st=$(nvflow state)
expect_eq "256M BAR with the key at 0" "$(kv gpu0.bar1_force64k "$st")" 0
expect_eq "32G BAR with the key at 1" "$(kv gpu1.bar1_force64k "$st")" 1
run window 1 0 0 0x10000 0x10000 >/dev/null
b=$(window 1 0 0x200000 0x200000 0x200000)
expect_eq "gpu0: 2M pages kept" "$(kv bar1_page_size "$b")" 0x200000
expect_eq "gpu0: 2M aligned" "$(($(kv bar1_offset "$b") % 0x200000))" 0
run window 0 1 0 0x10000 0x10000 >/dev/null
b=$(window 0 1 0x200000 0x200000 0x200000)
expect_eq "gpu1: forced to 64K" "$(kv bar1_page_size "$b")" 0x10000
expect_eq "gpu1: so not 2M aligned" \
	"$(($(kv bar1_offset "$b") % 0x200000 != 0))" 1
run rmmod nvidia

echo "== with static BAR1 the window is the static range"
GH='GH100@0000:01:00.0,vram=80G,bar1=0x20000000000/128G;GH100@0000:02:00.0,vram=80G,bar1=0x22000000000/128G'
run insmod $KO gpus="$GH" NVreg_RegistryDwords="RMPcieP2PType=1"
st=$(nvflow state)
expect_eq "gpu1 static BAR1" "$(kv gpu1.static_bar1 "$st")" 1
b=$(window 0 1 0x200000 0x200000 0x200000)
expect_eq "static offset + offset" "$(kv bar1_offset "$b")" \
	"$(hex "$(kv gpu1.static_bar1_offset "$st") + 0x200000")"
expect_eq "no dynamic mapping" "$(kv bar1_mappings "$b")" 0
expect_eq "no dynamic BAR1 page" "$(kv bar1_page_size "$b")" ""
run nvflow winfree "$(kv window "$b")" >/dev/null
run rmmod nvidia
echo "standin-windows: ok"
