# SPDX-License-Identifier: GPL-2.0
# The lifecycle's cells that need no GPU (docs/lifecycle.md), on NVIDIA's
# real nvidia.ko and nvidia-uvm.ko loaded GPU-less: every load order, the
# user's events in every state, nvidia and nvidia-uvm coming and going.
# Each cell asserts the state, the kprobes on nvidia (the runner's hook
# count, plus the UVM peer set's hook in nvidia) and the reference count
# (0: without GPUs nothing is forced and nothing mapped).
# cells: not-loaded.enable not-loaded.dry-run not-loaded.disable not-loaded.rmmod
# cells: not-loaded.nv-in not-loaded.uvm-in not-loaded.uvm-out not-loaded.nv-out
# cells: not-loaded.load:plain not-loaded.load:enable-present not-loaded.load:dry-run
# cells: not-loaded.load:enable-absent
# cells: disabled.load disabled.disable disabled.uvm-in disabled.uvm-out
# cells: disabled.dry-run:present disabled.enable:present disabled.rmmod disabled.nv-in
# cells: disabled.nv-out disabled.dry-run:absent disabled.enable:absent
# cells: dry-run.load dry-run.dry-run dry-run.enable dry-run.uvm-in dry-run.uvm-out
# cells: dry-run.disable dry-run.rmmod dry-run.nv-out
# cells: armed.load armed.enable armed.dry-run armed.rmmod:plain armed.uvm-in armed.uvm-out
# cells: armed.disable:plain armed.nv-out:plain
# cells: waiting.load waiting.enable waiting.dry-run waiting.nv-in:dry-run waiting.nv-in:arm
# cells: waiting.disable waiting.rmmod
. /cases/real.lib
. /cases/life.sh

[ "$EXPECT" = arm ] || fail "nvidia $REAL_VERSION is refused: the lifecycle needs a driver a profile serves"
H=$EXPECT_HOOKS
U=1	# the UVM peer set's hook in nvidia (nvUvmInterfaceGetP2PCaps)
[ "$EXPECT_UVM_SET" = none ] && U=0
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
nvidia_load
expect not-loaded 0 -
cell not-loaded.uvm-in
run insmod $UVM
expect not-loaded 0 -
cell not-loaded.uvm-out
run rmmod nvidia_uvm
expect not-loaded 0 -

echo "### disabled, nvidia up"
cell not-loaded.load:plain
run insmod $SHIM
expect disabled 0 0
cell disabled.load
refused "second load" 'exists' insmod $SHIM
expect disabled 0 0
cell disabled.disable
run p2pctl disable
expect disabled 0 0
cell disabled.uvm-in
run insmod $UVM
expect disabled 0 0
cell disabled.uvm-out
run rmmod nvidia_uvm
expect disabled 0 0

echo "### dry run"
cell disabled.dry-run:present
run p2pctl enable --dry-run
expect dry-run $H 0
cell dry-run.load
refused "second load" 'exists' insmod $SHIM
expect dry-run $H 0
cell dry-run.dry-run
run p2pctl enable --dry-run
expect dry-run $H 0
cell dry-run.enable
refused "enable over a dry run" 'already armed for a dry run; disable first' p2pctl enable
expect dry-run $H 0
cell dry-run.uvm-in
run insmod $UVM
expect dry-run $((H + U)) 0
cell dry-run.uvm-out
run rmmod nvidia_uvm
expect dry-run $H 0
cell dry-run.disable
run p2pctl disable
expect disabled 0 0

echo "### armed"
cell disabled.enable:present
run p2pctl enable
expect armed $H 0
cell armed.load
refused "second load" 'exists' insmod $SHIM
expect armed $H 0
cell armed.enable
run p2pctl enable
expect armed $H 0
cell armed.dry-run
refused "dry run over armed" 'already armed; disable first' p2pctl enable --dry-run
expect armed $H 0
cell armed.uvm-in
run insmod $UVM
expect armed $((H + U)) 0
cell armed.uvm-out
run rmmod nvidia_uvm
expect armed $H 0
cell armed.disable:plain
run p2pctl disable
expect disabled 0 0
run p2pctl enable
cell armed.rmmod:plain
run rmmod p2p_shim
expect not-loaded 0 -
expect_match "nvidia stays" "$(cat /proc/driver/nvidia/version)" "$REAL_VERSION"

echo "### loaded with enable=1 while nvidia is up"
cell not-loaded.load:enable-present
run insmod $SHIM enable=1
expect armed $H 0
cell armed.nv-out:plain
run rmmod nvidia
expect waiting 0 0
cell waiting.disable
run p2pctl disable
expect disabled 0 0
nvidia_load
run rmmod p2p_shim
cell not-loaded.load:dry-run
run insmod $SHIM enable=1 dry_run=1
expect dry-run $H 0
cell dry-run.rmmod
run rmmod p2p_shim
expect not-loaded 0 -
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
cell waiting.nv-in:dry-run
nvidia_load
life_wait dry-run
expect dry-run $H 0
cell dry-run.nv-out
run rmmod nvidia
expect waiting 0 0
cell waiting.enable
run p2pctl enable
expect waiting 0 0
cell waiting.nv-in:arm
nvidia_load
life_wait armed
expect armed $H 0
run p2pctl disable
cell disabled.nv-out
run rmmod nvidia
expect disabled 0 0
cell disabled.nv-in
nvidia_load
expect disabled 0 0
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
run rmmod p2p_shim
expect not-loaded 0 -
life_done
