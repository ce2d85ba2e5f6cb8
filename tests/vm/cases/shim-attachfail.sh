# SPDX-License-Identifier: GPL-2.0
# Review F10: an attach that fails after the GPU read its registry
# (gpuPostConstruct failing: gpumgrAttach_error_and_exit calls
# osDpcDetachGpu(pGpu) and frees the OBJGPU; the stand-in's
# fail_post_construct).  The GPU read p2p-shim's ForceP2P and was marked
# forced, holding the module: the failed attach must drop that, and the
# next attach of the instance starts clean.
. /cases/lib.sh
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
P=/sys/module/nvidia/parameters/fail_post_construct

refs() { cat /sys/module/p2p_shim/refcnt; }

for v in 565.57.01 580.159.04; do
	echo "== $v"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	expect_eq "$v two forced GPUs" "$(refs)" 2
	echo 1 >$P
	out=$(nvflow reinit 0)
	echo "$out"
	expect_eq "$v attach failed" "$(kv status_name "$out")" NV_ERR_GENERIC
	expect_eq "$v the failed GPU holds nothing" "$(refs)" 1
	out=$(nvflow reinit 0)
	expect_eq "$v attached again" "$(kv status_name "$out")" NV_OK
	expect_eq "$v forced again, once" "$(refs)" 2
	expect_eq "$v caps" "$(kv connectivity "$(nvflow caps 0 1)")" pcie_bar1
	run rmmod nvidia
	expect_eq "$v nvidia gone: nothing held" "$(refs)" 0
	run p2pctl disable
	run rmmod p2p_shim
done
