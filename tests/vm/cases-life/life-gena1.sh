# SPDX-License-Identifier: GPL-2.0
# The residual cells on the stand-in 570.148.08 (gen-a1: 23 hooks, residual
# set 6), where the driver applies ForceP2P before its BAR1 check: a forced
# pair with static BAR1 on both GPUs is reported PCIE_BAR1 by the driver
# itself, so in residual (no routing, no wrappers) only the guard keeps
# the stock answer (docs/lifecycle.md).
# cells: armed.disable:forced residual.gpu-reinit:not-last residual.enable
# cells: residual.gpu-reinit:last armed.rmmod:forced residual.rmmod
. /cases/lib.sh
. /cases/life.sh

V=570.148.08
SHIM=/lib/p2p-shim/p2p-shim.ko
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
H=23	# gen-a1's hooks
R=6	# its residual set
INUSE='in use|Resource temporarily unavailable|busy'

run insmod $SHIM enable=1
run insmod /lib/standin/$V/nvidia.ko gpus="$G"
life_wait armed
expect_state "armed" armed
expect_caps "armed" pcie_bar1
nvflow state | grep -E 'static_bar1=|force_p2p'
cell armed.rmmod:forced
refused "rmmod with forced GPUs" "$INUSE" rmmod p2p_shim
expect armed $H 2 pcie_bar1
cell armed.disable:forced
run p2pctl disable
expect residual $R 2 unknown
cell residual.rmmod
refused "rmmod in residual" "$INUSE" rmmod p2p_shim
expect residual $R 2 unknown
cell residual.gpu-reinit:not-last
run nvflow reinit 0 >/dev/null
expect residual $R 1 unknown
cell residual.enable
run p2pctl enable
# GPU0 came back without our ForceP2P while in residual: it stays stock
# until its next re-initialisation; GPU1 is still forced.
expect armed $H 1
run nvflow reinit 0 >/dev/null
expect armed $H 2 pcie_bar1
run p2pctl disable
cell residual.gpu-reinit:last
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
life_wait disabled
expect disabled 0 0 unknown
run rmmod nvidia
run rmmod p2p_shim
life_done
