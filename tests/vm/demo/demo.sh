# SPDX-License-Identifier: GPL-2.0
# make demo: the whole p2p-shim flow, in a VM, against the stand-in driver
# with two simulated RTX 4090s (AD102, 24 GiB VRAM, 32 GiB BAR1).
. /cases/lib.sh
step() { printf '\n### %s\n' "$*"; }
sh_() { echo "# $*"; "$@"; }

step "What doctor says about a real host with two RTX 4090s (captured fixture)"
sh_ p2pctl doctor --root /fixtures/rtx4090-pair/root

step "Load the stock driver (stand-in, 580.159.04): no P2P between GeForce GPUs"
sh_ insmod /lib/standin/580.159.04/nvidia.ko
sh_ cat /proc/driver/nvidia/version
sh_ nvflow caps 0 1 | grep -E 'connectivity|read|write'
sh_ nvflow create 0 1 --type pcie_bar1 | grep -E 'type|status'

step "Load p2p-shim and enable it"
sh_ insmod /lib/p2p-shim/p2p-shim.ko
p2pctl monitor >/tmp/events 2>&1 &
mon=$!
sleep 1
sh_ p2pctl enable
sh_ p2pctl status

step "The GPUs were initialised before arming: re-initialise them"
sh_ nvflow reinit 0
sh_ nvflow reinit 1

step "P2P over PCIe BAR1"
sh_ nvflow caps 0 1 | grep -E 'connectivity|read|write'
out=$(nvflow create 0 1); echo "$out" | grep -E 'object|type|bar1_dma|status'
sh_ nvflow map 0 0x200000 0x200000 uvm | grep -E 'aperture|field|addr|pte='
sh_ nvflow map 0 0x200000 0x200000 rm | grep -E 'aperture|field|addr|pte='
sh_ p2pctl status

step "Disabling while the driver holds BAR1 mappings is refused"
sh_ p2pctl disable
sh_ rmmod p2p_shim

step "Tear down, disable, unload: no left-over mappings"
sh_ nvflow unmap 0 >/dev/null
sh_ nvflow unmap 1 >/dev/null
sh_ nvflow destroy 0 | grep status
sh_ p2pctl disable
sh_ rmmod nvidia
kill $mon 2>/dev/null
step "Events seen by p2pctl monitor"
cat /tmp/events
step "Kernel log"
dmesg | grep -E 'p2p_shim|NVRM' | sed 's/^\[[ 0-9.]*\] //'
