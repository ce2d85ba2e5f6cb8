# SPDX-License-Identifier: GPL-2.0
# Booted on q35 with two PCIe expander host bridges, each with QEMU's Intel
# X58 IOH root ports (ioh3420, device 0x3420) and an endpoint below each
# (qemu-args): two Intel I/O hubs, as on a dual-socket X58-Broadwell-EP host.
# The stand-in's GPUs take those endpoints' addresses.  The driver refuses
# PCIe P2P between GPUs below two such hubs (IOH_TOPOLOGY_NOT_SUPPORTED,
# p2p_caps.c), but ForceP2P returns before that check: the caps guard must
# give such a pair the stock answer, and leave pairs below one hub (or not
# below an IOH root port at all) to the BAR1 rules.  570 and 580.
. /cases/lib.sh

# root_of BDF: the bus of the root port above it, and its device id
root_of() {
	d=$(readlink -f /sys/bus/pci/devices/$1)
	rp=$(basename "$(dirname "$d")")
	echo "$rp $(cat "$(dirname "$d")/device")"
}
for bdf in 0000:41:00.0 0000:42:00.0 0000:81:00.0; do
	[ -e /sys/bus/pci/devices/$bdf ] || fail "topology: no $bdf (qemu-args)"
	echo "$bdf below $(root_of $bdf)"
done
expect_match "41 below an IOH root port" "$(root_of 0000:41:00.0)" '^0000:40:.* 0x3420$'
expect_match "81 below another hub" "$(root_of 0000:81:00.0)" '^0000:80:.* 0x3420$'

G='AD102@0000:41:00.0,bar1=0x4000000000/32G;AD102@0000:42:00.0,bar1=0x4800000000/32G'
G="$G;AD102@0000:81:00.0,bar1=0x5000000000/32G;AD102@0000:05:00.0,bar1=0x5800000000/32G"

for v in 570.148.08 580.159.04; do
	echo "== $v"
	klog_mark
	run insmod /lib/p2p-shim/p2p-shim.ko
	run p2pctl enable
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	out=$(nvflow caps 0 1)
	expect_eq "$v one hub: 0-1" "$(kv connectivity "$out")" pcie_bar1
	out=$(nvflow create 0 1) || fail "$v create 0-1: $out"
	expect_eq "$v one hub: 0-1 object" "$(kv type "$out")" pcie_bar1
	run nvflow destroy "$(kv object "$out")" >/dev/null

	for pair in "0 2" "2 1"; do
		out=$(nvflow caps $pair)
		expect_eq "$v two hubs: $pair" "$(kv connectivity "$out")" unknown
		expect_eq "$v two hubs: $pair read" "$(kv read "$out")" NOT_SUPPORTED
		expect_eq "$v two hubs: $pair write" "$(kv write "$out")" NOT_SUPPORTED
	done
	expect_match "$v logged" "$(klog_since)" 'below two Intel I/O hubs'
	# GPU3's address has no device: no hub known, the driver's check
	# would skip it too.
	expect_eq "$v no hub: 2-3" "$(kv connectivity "$(nvflow caps 2 3)")" pcie_bar1
	run p2pctl disable
	run rmmod nvidia
	run rmmod p2p_shim
done
