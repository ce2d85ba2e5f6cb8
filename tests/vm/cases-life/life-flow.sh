# SPDX-License-Identifier: GPL-2.0
# The lifecycle on the stand-in 580.159.04 (gen-b: 20 hooks, residual set
# 6, the UVM peer set's hook in nvidia 1) with an AD102 pair: every state
# but residual by the user's events, GPUs re-initialising in each, load
# orders, nvidia and nvidia-uvm coming and going (docs/lifecycle.md).
# cells: not-loaded.enable not-loaded.dry-run not-loaded.disable not-loaded.rmmod
# cells: not-loaded.nv-in not-loaded.gpu-attach not-loaded.gpu-detach not-loaded.gpu-reinit
# cells: not-loaded.uvm-in not-loaded.uvm-out not-loaded.nv-out
# cells: not-loaded.load:plain not-loaded.load:enable-present not-loaded.load:dry-run
# cells: not-loaded.load:enable-absent
# cells: disabled.load disabled.disable disabled.gpu-reinit disabled.gpu-detach disabled.gpu-attach
# cells: disabled.uvm-in disabled.uvm-out disabled.dry-run:present disabled.enable:present
# cells: disabled.rmmod disabled.nv-in disabled.nv-out disabled.dry-run:absent disabled.enable:absent
# cells: dry-run.load dry-run.dry-run dry-run.enable dry-run.gpu-reinit dry-run.gpu-detach
# cells: dry-run.gpu-attach dry-run.uvm-in dry-run.uvm-out dry-run.disable dry-run.rmmod
# cells: dry-run.nv-out
# cells: armed.load armed.enable armed.dry-run armed.rmmod:plain armed.gpu-reinit
# cells: armed.gpu-detach armed.gpu-attach armed.uvm-in armed.uvm-out armed.nv-out:forced
# cells: armed.disable:plain
# cells: waiting.load waiting.enable waiting.dry-run waiting.nv-in:dry-run waiting.nv-in:arm
# cells: waiting.disable waiting.rmmod
. /cases/lib.sh
. /cases/life.sh

V=580.159.04
NV=/lib/standin/$V/nvidia.ko
UVM=/lib/standin/$V/nvidia-uvm.ko
SHIM=/lib/p2p-shim/p2p-shim.ko
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
H=20	# gen-b's hooks
NOTLOADED='not loaded.*modprobe p2p-shim'

echo "### nothing loaded"
cell not-loaded.enable
refused "enable" "$NOTLOADED" p2pctl enable
expect not-loaded 0 -
cell not-loaded.dry-run
refused "dry run" "$NOTLOADED" p2pctl enable --dry-run
expect not-loaded 0 -
cell not-loaded.disable
refused "disable" "$NOTLOADED" p2pctl disable
expect not-loaded 0 -
cell not-loaded.rmmod
refused "rmmod" 'No such file|not (currently )?loaded|unload' rmmod p2p_shim
expect not-loaded 0 -
cell not-loaded.nv-in
run insmod $NV gpus="$G"
expect not-loaded 0 -
cell not-loaded.gpu-attach
# nvidia's init attached both GPUs: stock, no P2P.
expect not-loaded 0 - unknown
cell not-loaded.gpu-reinit
run nvflow reinit 0 >/dev/null
expect not-loaded 0 - unknown
cell not-loaded.gpu-detach
run nvflow reinit 1 >/dev/null
expect not-loaded 0 - unknown
cell not-loaded.uvm-in
run insmod $UVM
expect not-loaded 0 -
cell not-loaded.uvm-out
run rmmod nvidia_uvm
expect not-loaded 0 -

echo "### disabled, nvidia up"
cell not-loaded.load:plain
klog_mark
run insmod $SHIM
expect disabled 0 0 unknown
expect_match "load logged" "$(klog_since)" 'p2p_shim: loaded'
cell disabled.load
refused "second load" 'exists|File exists' insmod $SHIM
expect disabled 0 0
cell disabled.disable
run p2pctl disable
expect disabled 0 0
cell disabled.gpu-reinit
run nvflow reinit 0 >/dev/null
expect disabled 0 0 unknown
cell disabled.gpu-detach
cell disabled.gpu-attach
run nvflow reinit 1 >/dev/null
expect disabled 0 0 unknown
cell disabled.uvm-in
run insmod $UVM
expect disabled 0 0
cell disabled.uvm-out
run rmmod nvidia_uvm
expect disabled 0 0

echo "### dry run"
cell disabled.dry-run:present
run p2pctl enable --dry-run
expect dry-run $H 0 unknown
cell dry-run.load
refused "second load" 'exists' insmod $SHIM
expect dry-run $H 0
cell dry-run.dry-run
run p2pctl enable --dry-run
expect dry-run $H 0
cell dry-run.enable
refused "enable over a dry run" 'already armed for a dry run; disable first' p2pctl enable
expect dry-run $H 0
cell dry-run.gpu-reinit
cell dry-run.gpu-detach
cell dry-run.gpu-attach
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
# Counted, never forced: no reference, the stock answer.
expect dry-run $H 0 unknown
cell dry-run.uvm-in
run insmod $UVM
expect dry-run $((H + 1)) 0
expect_match "uvm counting set" "$(p2pctl status)" 'uvm peers: +dry run'
cell dry-run.uvm-out
run rmmod nvidia_uvm
expect dry-run $H 0
cell dry-run.disable
run p2pctl disable
expect disabled 0 0 unknown

echo "### armed over GPUs initialised before it"
cell disabled.enable:present
klog_mark
run p2pctl enable
# GPUs attached before arming: stale, not forced, no reference.
expect armed $H 0 unknown
expect_match "says GPUs up already stay stock" "$(klog_since)" 'keep the stock P2P settings until re-initialised'
expect_match "both named stale (mask 0x3)" "$(p2pctl status --json)" '"stale_gpus": *3'
cell armed.load
refused "second load" 'exists' insmod $SHIM
expect armed $H 0
cell armed.enable
run p2pctl enable
expect armed $H 0
cell armed.dry-run
refused "dry run over armed" 'already armed; disable first' p2pctl enable --dry-run
expect armed $H 0
cell armed.rmmod:plain
# Armed with no forced GPU and no mapping: nothing holds the module.
run rmmod p2p_shim
expect not-loaded 0 - unknown
expect_match "nvidia stays" "$(cat /proc/driver/nvidia/version)" "$V"

echo "### loaded with enable=1 while nvidia is up"
cell not-loaded.load:enable-present
run insmod $SHIM enable=1
expect armed $H 0 unknown
cell armed.gpu-reinit
cell armed.gpu-detach
cell armed.gpu-attach
# Each GPU detaches (stale, no reference) and attaches under the hooks:
# forced, one reference each.
run nvflow reinit 0 >/dev/null
expect armed $H 1
run nvflow reinit 1 >/dev/null
expect armed $H 2 pcie_bar1
run nvflow reinit 1 >/dev/null
expect armed $H 2 pcie_bar1
cell armed.uvm-in
run insmod $UVM
expect armed $((H + 1)) 2 pcie_bar1
expect_match "uvm set armed" "$(p2pctl status)" 'uvm peers: +armed'
cell armed.uvm-out
run rmmod nvidia_uvm
expect armed $H 2 pcie_bar1
cell armed.nv-out:forced
# nvidia's exit detaches both forced GPUs (references dropped), then leaves.
run rmmod nvidia
expect waiting 0 0
cell waiting.disable
run p2pctl disable
expect disabled 0 0

echo "### dry run loaded with enable=1 dry_run=1"
run insmod $NV gpus="$G"
run rmmod p2p_shim
cell not-loaded.load:dry-run
run insmod $SHIM enable=1 dry_run=1
expect dry-run $H 0 unknown
cell dry-run.rmmod
# A dry run forces nothing: nothing holds the module.
run rmmod p2p_shim
expect not-loaded 0 - unknown
cell not-loaded.nv-out
run rmmod nvidia
expect not-loaded 0 -

echo "### p2p-shim first"
cell not-loaded.load:enable-absent
run insmod $SHIM enable=1
expect waiting 0 0
cell waiting.load
refused "second load" 'exists' insmod $SHIM
expect waiting 0 0
cell waiting.dry-run
run p2pctl enable --dry-run
expect waiting 0 0
expect_match "waits for a dry run" "$(p2pctl status)" 'state: +waiting \(dry run\)'
cell waiting.nv-in:dry-run
run insmod $NV gpus="$G"
life_wait dry-run
expect dry-run $H 0 unknown
cell dry-run.nv-out
run rmmod nvidia
expect waiting 0 0
expect_match "still a dry run" "$(p2pctl status)" 'state: +waiting \(dry run\)'
cell waiting.enable
run p2pctl enable
expect waiting 0 0
expect_no_match "no longer a dry run" "$(p2pctl status)" 'dry run'
cell waiting.nv-in:arm
klog_mark
run insmod $NV gpus="$G"
life_wait armed
# Armed at nvidia's arrival, before its init: both GPUs attach forced.
expect armed $H 2 pcie_bar1
expect_match "armed on arrival" "$(klog_since)" "on nvidia's arrival"
cell armed.disable:plain
# Not plain yet: re-initialise both GPUs without our ForceP2P (the user's
# own ForceP2P=0 wins over the default), so none is forced.
echo "ForceP2P=0" >/sys/kernel/debug/nvidia-standin/registry
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
expect armed $H 0
run p2pctl disable
expect disabled 0 0
cell disabled.nv-out
run rmmod nvidia
expect disabled 0 0
cell disabled.nv-in
run insmod $NV gpus="$G"
expect disabled 0 0 unknown
run rmmod nvidia
cell disabled.dry-run:absent
run p2pctl enable --dry-run
expect waiting 0 0
run p2pctl disable
cell disabled.enable:absent
run p2pctl enable
expect waiting 0 0
cell waiting.rmmod
run rmmod p2p_shim
expect not-loaded 0 -
cell disabled.rmmod
run insmod $SHIM
klog_mark
run rmmod p2p_shim
expect not-loaded 0 -
expect_match "unload logged" "$(klog_since)" 'p2p_shim: unloaded'
life_done
