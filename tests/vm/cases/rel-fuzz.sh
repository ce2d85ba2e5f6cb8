# SPDX-License-Identifier: GPL-2.0
# vm-tags: long-boot every-kernel
# Reliability: random ioctls on /dev/p2p-shim (p2ps-fuzz), as root with
# nvidia absent (enable only goes to "waiting": fast), as root with nvidia
# present (a few real arm/disarm transitions), as uid 1000 and as root
# without CAP_SYS_ADMIN (state must not move).  Every errno must be one the
# command documents; the harness fails the case on any WARN/oops.  Scale
# and seeds: case_scale in lib.sh (make check: 1x, fixed seeds); each
# run's seed and counts are recorded in the verdict.
. /cases/lib.sh
G='AD102@0000:01:00.0;AD102@0000:02:00.0'
st() { p2ps-raw status | sed -n 's/^state=/state=/p'; }
t0=$(date +%s)

run insmod /lib/p2p-shim/p2p-shim.ko
echo "== root, nvidia absent"
fuzz p2ps-fuzz -s "$(seed 0x5eed0001)" -n $((200000 * scale)) -a 20
expect_match "disabled after root fuzz" "$(st)" '^state=0 .* hooks=0 live=0'

echo "== root, nvidia present (real arming)"
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
fuzz p2ps-fuzz -s "$(seed 0x5eed0002)" -n $((6000 * scale)) -a 5
expect_match "disabled after root fuzz" "$(st)" '^state=0 .* hooks=0 live=0'
expect_eq "no kprobes left" "$(wc -l </sys/kernel/debug/kprobes/list)" 0
run p2pctl enable
expect_match "arms cleanly afterwards" "$(st)" '^state=2 flags=0 hooks=20 live=0'

echo "== uid 1000, armed"
before=$(p2pctl status)
fuzz p2ps-fuzz -s "$(seed 0x5eed0003)" -n $((200000 * scale)) -u 1000
echo "== uid 0 without CAP_SYS_ADMIN, armed"
fuzz p2ps-fuzz -s "$(seed 0x5eed0004)" -n $((40000 * scale)) -D
expect_eq "p2pctl status unchanged" "$(p2pctl status)" "$before"

run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
expect_no_match "no kernel complaints" "$(dmesg | grep -E 'p2p[-_]shim' | grep -iE 'warn|bug|leak')" .
record "rel-fuzz: $((446000 * scale)) ioctls at ${scale}x in $(( $(date +%s) - t0 )) s"

