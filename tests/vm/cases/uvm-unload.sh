# SPDX-License-Identifier: GPL-2.0
# Unloading p2p-shim with nvidia-uvm's object armed (the one arming path
# of nvidia's and nvidia-uvm's hooks), in each order a user can, and
# arming again after each.  shim-unload covers the same orders without
# nvidia-uvm; here its hooks must go with the profile, with nvidia-uvm, or
# with the shim, and never be left behind.
. /cases/lib.sh
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
refcnt() { cat /sys/module/p2p_shim/refcnt; }
uvm_probes() { kprobes_on nvidia_uvm; }
nv_probes() { kprobes_on nvidia; }

for v in 565.57.01 580.159.04; do
	echo "== $v: armed, GPUs forced, nvidia-uvm's hooks armed: rmmod refused"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	run insmod /lib/standin/$v/nvidia-uvm.ko
	expect_match "$v uvm set armed" "$(p2pctl status)" 'uvm peers: +armed'
	[ "$(uvm_probes)" -gt 0 ] || fail "$v: no probe on nvidia_uvm while armed"
	expect_refused "$v rmmod while GPUs carry ForceP2P" "$RMMOD_BUSY" rmmod p2p_shim
	expect_match "$v still armed" "$(p2pctl status)" 'state: +armed'

	echo "== $v: order: nvidia-uvm, nvidia, then p2p-shim"
	run rmmod nvidia-uvm
	expect_eq "$v nvidia-uvm gone: its probes gone" "$(uvm_probes)" 0
	expect_match "$v waiting for nvidia-uvm" "$(p2pctl status)" 'uvm peers: +waiting for nvidia-uvm'
	run rmmod nvidia
	expect_eq "$v nvidia gone: no reference" "$(refcnt)" 0
	run rmmod p2p_shim

	echo "== $v: order: disable with nvidia-uvm loaded (residual), then the drivers, then p2p-shim"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	run insmod /lib/standin/$v/nvidia-uvm.ko
	expect_match "$v re-armed: uvm set armed" "$(p2pctl status)" 'uvm peers: +armed'
	run p2pctl disable
	expect_match "$v residual" "$(p2pctl status)" 'state: +residual'
	expect_eq "$v residual: nvidia-uvm's probes gone with the profile" "$(uvm_probes)" 0
	expect_refused "$v rmmod refused in residual" "$RMMOD_BUSY" rmmod p2p_shim
	run rmmod nvidia-uvm
	run rmmod nvidia
	expect_match "$v nvidia gone: disabled" "$(p2pctl status)" 'state: +disabled'
	expect_eq "$v no reference" "$(refcnt)" 0

	echo "== $v: enable again with the drivers loaded first (GPUs not forced); rmmod while armed"
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	run insmod /lib/standin/$v/nvidia-uvm.ko
	run p2pctl enable
	expect_match "$v late enable: uvm set armed" "$(p2pctl status)" 'uvm peers: +armed'
	[ "$(uvm_probes)" -gt 0 ] || fail "$v: no probe on nvidia_uvm after the late enable"
	expect_eq "$v late enable: no reference" "$(refcnt)" 0
	run rmmod p2p_shim
	expect_eq "$v after rmmod: no probe on nvidia_uvm" "$(uvm_probes)" 0
	expect_eq "$v after rmmod: no probe on nvidia" "$(nv_probes)" 0

	echo "== $v: and arm again after that rmmod, nvidia-uvm still loaded"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	expect_match "$v re-insmod: uvm set armed" "$(p2pctl status)" 'uvm peers: +armed'
	[ "$(uvm_probes)" -gt 0 ] || fail "$v: no probe on nvidia_uvm after re-insmod"
	run rmmod nvidia-uvm
	expect_eq "$v nvidia-uvm gone: its probes gone" "$(uvm_probes)" 0
	run insmod /lib/standin/$v/nvidia-uvm.ko
	expect_match "$v nvidia-uvm back: uvm set armed again" "$(p2pctl status)" 'uvm peers: +armed'
	run rmmod nvidia-uvm
	run rmmod nvidia
	run p2pctl disable
	run rmmod p2p_shim
done
