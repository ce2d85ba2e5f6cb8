# SPDX-License-Identifier: GPL-2.0
# A ForceP2P the user set (not p2p-shim) forces P2P just the same: without
# static BAR1 the driver would offer such a pair the mailbox path GeForce
# chips lack (PCIE_PROPRIETARY, reads and writes OK, a mapping that
# corrupts).  Whatever set it, while armed the caps guard covers the GPU,
# the GPU holds the module, and a disable keeps the guard until it
# re-initialises.  registry_gpus= scopes p2p-shim's own keys to the GPUs it
# names, so a mixed host needs no ForceP2P in the driver's options (which
# would stay there, unguarded, without p2p-shim).
. /cases/lib.sh

# Two small-BAR AD102 (no static BAR1), two with BAR1 = 32 GiB.
SMALL='AD102@0000:01:00.0,vram=24G,bar1=0xf0000000/256M;AD102@0000:02:00.0,vram=24G,bar1=0xe0000000/256M'
BIG='AD102@0000:03:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:04:00.0,vram=24G,bar1=0x6000000000/32G'
# What `p2pctl config --registry` printed for 580 (per device, every GPU).
KEYS='ForceP2P=0x211;RMPcieP2PType=1'
PERDEV="pci=0000:01:00.0;$KEYS;pci=0000:02:00.0;$KEYS"

echo "== registry_defaults=0, the user's keys per device, small BARs"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_defaults=0
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$SMALL" NVreg_RegistryDwordsPerDevice="$PERDEV"
expect_eq "the user's ForceP2P reached the GPU" "$(kv gpu0.p2p_override "$(nvflow state)")" 0x211
guarded "armed, user's ForceP2P" 0 1
expect_refused "rmmod refused while a GPU carries a ForceP2P" "$RMMOD_BUSY" rmmod p2p_shim
klog_mark
run p2pctl disable
expect_match "disable keeps the guard" "$(p2pctl status)" 'state: +residual'
guarded "residual, user's ForceP2P" 0 1
expect_refused "rmmod refused in the residual state" "$RMMOD_BUSY" rmmod p2p_shim
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
# Re-initialised without p2p-shim's hooks: the stock driver with the user's
# key alone is what the user asked for; nothing of ours is left to guard it.
wait_match klog_since 'caps guard removed'
run rmmod nvidia
run rmmod p2p_shim

echo "== the user's global ForceP2P, set before p2p-shim was installed"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$SMALL" NVreg_RegistryDwords="ForceP2P=0x11"
guarded "armed, user's global ForceP2P=0x11" 0 1
expect_refused "rmmod refused" "$RMMOD_BUSY" rmmod p2p_shim
run rmmod nvidia
run rmmod p2p_shim

echo "== a ForceP2P that forces nothing (reads and writes left to the driver)"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_defaults=0
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$SMALL" NVreg_RegistryDwords="ForceP2P=0x222"
run rmmod nvidia
run rmmod p2p_shim

echo "== registry_gpus= names the GPUs p2p-shim's keys apply to"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_gpus=0000:03:00.0,04:00.0
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$SMALL;$BIG"
st=$(nvflow state)
expect_eq "GPU0 (not named): no ForceP2P" "$(kv gpu0.p2p_override "$st")" 0xffffffff
expect_eq "GPU2 (named): ForceP2P" "$(kv gpu2.p2p_override "$st")" 0x211
expect_eq "GPU3 (named, short form): ForceP2P" "$(kv gpu3.p2p_override "$st")" 0x211
expect_eq "2-3: BAR1 P2P" "$(kv connectivity "$(nvflow caps 2 3)")" pcie_bar1
out=$(nvflow caps 0 1)
expect_eq "0-1 (not named): the stock driver's own no" "$(kv read "$out")" GPU_NOT_SUPPORTED
expect_eq "0-1 (not named): connectivity" "$(kv connectivity "$out")" unknown
expect_match "status names the scope" "$(p2pctl status)" 'registry keys: +0000:03:00.0, 0000:04:00.0'
klog_mark
run p2pctl disable
run nvflow reinit 2 >/dev/null
run nvflow reinit 3 >/dev/null
wait_match klog_since 'caps guard removed'
run rmmod nvidia
run rmmod p2p_shim

echo "== registry_gpus= also says which GPUs' own ForceP2P is p2p-shim's to guard"
# The user named GPUs 2 and 3; GPUs 0 and 1 (a pro card's pair, say) keep
# the stock driver's answer to the user's own key, and hold nothing.
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_gpus=0000:03:00.0,0000:04:00.0
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$SMALL;$BIG" \
	NVreg_RegistryDwordsPerDevice="pci=0000:01:00.0;ForceP2P=0x11;pci=0000:02:00.0;ForceP2P=0x11"
expect_eq "0-1 (not named): the stock driver's answer to the user's key" \
	"$(kv connectivity "$(nvflow caps 0 1)")" pcie
expect_eq "2-3 (named): BAR1 P2P" "$(kv connectivity "$(nvflow caps 2 3)")" pcie_bar1
klog_mark
run p2pctl disable
run nvflow reinit 2 >/dev/null
run nvflow reinit 3 >/dev/null
wait_match klog_since 'caps guard removed'
run rmmod p2p_shim	# GPUs 0 and 1 hold nothing
run rmmod nvidia

echo "== registry_gpus= also says where static BAR1 is forced (an RTX 5090 pair, review F6)"
G5='GB202@0000:01:00.0,vram=32607M,fb=32G,bar1=0x4000000000/32G;GB202@0000:02:00.0,vram=32607M,fb=32G,bar1=0x4800000000/32G'
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_gpus=0000:01:00.0
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G5"
st=$(p2pctl status)
echo "$st" | grep -E '^ *[01] '
expect_match "GPU0 (named): forced" "$st" ' 0 +forced +usable'
expect_match "GPU1 (not named): left to the driver" "$st" 'not among registry_gpus='
expect_eq "GPU1: the driver's own answer, no static BAR1" "$(kv gpu1.static_bar1 "$(nvflow state)")" 0
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim

echo "== 550 (gen 0): registry_gpus= leaves GPU1 out, the user's own RMForceP2PType=2 on it"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_gpus=0000:01:00.0
G0='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
run insmod /lib/standin/550.163.01/nvidia.ko gpus="$G0" \
	NVreg_RegistryDwordsPerDevice="pci=0000:02:00.0;RMForceP2PType=2"
st=$(nvflow state)
expect_eq "GPU0 (named): static BAR1" "$(kv gpu0.static_bar1 "$st")" 1
expect_eq "GPU1 (not named): no static BAR1 through p2p-shim" "$(kv gpu1.static_bar1 "$st")" 0
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim

echo "== registry_gpus=, a GPU whose PCI address cannot be read: its own ForceP2P is guarded"
# Issue 41, item 4: the attach argument of GPU 1 carries no readable PCI
# address (the stand-in's attach_no_pci); p2p-shim cannot tell whether
# registry_gpus= names it, so it supplies it nothing but guards the
# user's own forcing ForceP2P on it (fail closed), and is held by it.
# The pair is otherwise one the guard lets through (32 GiB BARs: static
# BAR1; the user's keys on both), as the same load with the address shows
# first: only the missing ID refuses it.
USERS="pci=0000:01:00.0;$KEYS;pci=0000:02:00.0;$KEYS"
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_gpus=0000:01:00.0 registry_defaults=0
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G0" NVreg_RegistryDwordsPerDevice="$USERS"
expect_eq "with its address: BAR1 P2P" "$(kv connectivity "$(nvflow caps 1 0)")" pcie_bar1
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim
run insmod /lib/p2p-shim/p2p-shim.ko enable=1 registry_gpus=0000:01:00.0 registry_defaults=0
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G0" attach_no_pci=2 \
	NVreg_RegistryDwordsPerDevice="$USERS"
expect_eq "the user's ForceP2P reached GPU1" "$(kv gpu1.p2p_override "$(nvflow state)")" 0x211
klog_mark
guarded "GPU1 (address unknown), user's ForceP2P" 1 0
expect_match "the log says why: no ID" "$(klog_since)" \
	'GPUs 0x3: one has no NVIDIA PCI ID p2p-shim could read \(no address in its attach'
expect_refused "rmmod refused: GPU1 holds p2p-shim" "$RMMOD_BUSY" rmmod p2p_shim
run rmmod nvidia
run p2pctl disable
run rmmod p2p_shim

echo "== registry_gpus= with a bad address is refused at load"
expect_fail "bad address" insmod /lib/p2p-shim/p2p-shim.ko registry_gpus=0000:zz:00.0
expect_match "says why" "$(dmesg | tail -n 5)" "registry_gpus: '0000:zz:00.0' is not a PCI address"
module_loaded p2p_shim && fail "loaded with a bad registry_gpus"
echo done
