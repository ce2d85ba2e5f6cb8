# SPDX-License-Identifier: GPL-2.0
# Reliability: random ioctls on /dev/p2p-shim (p2ps-fuzz), as root with
# nvidia absent (enable only goes to "waiting": fast), as root with nvidia
# present (a few real arm/disarm transitions), as uid 1000 and as root
# without CAP_SYS_ADMIN (state must not move).  Every errno must be one the
# command documents; the harness fails the case on any WARN/oops.  Scale:
# the per-case limit (tests/vm/run -t SECONDS) / 120; make check runs 1x.
. /cases/lib.sh
limit=$(sed -n 's/.*p2ptest\.case_timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
scale=$(( ${limit:-120} / 120 ))
[ "$scale" -ge 1 ] || scale=1
# Fixed seeds at 1x (reproducible); a bigger run draws fresh ones.
seed() { if [ "$scale" -eq 1 ]; then echo "$1"; else echo 0x$(head -c 8 /dev/urandom | xxd -p); fi; }
G='AD102@0000:01:00.0;AD102@0000:02:00.0'
st() { p2ps-raw status | sed -n 's/^state=/state=/p'; }
t0=$(date +%s)

run insmod /lib/p2p-shim/p2p-shim.ko
echo "== root, nvidia absent"
run p2ps-fuzz -s "$(seed 0x5eed0001)" -n $((100000 * scale)) -a 20
expect_match "disabled after root fuzz" "$(st)" '^state=0 .* hooks=0 live=0'

echo "== root, nvidia present (real arming)"
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
run p2ps-fuzz -s "$(seed 0x5eed0002)" -n $((3000 * scale)) -a 5
expect_match "disabled after root fuzz" "$(st)" '^state=0 .* hooks=0 live=0'
expect_eq "no kprobes left" "$(wc -l </sys/kernel/debug/kprobes/list)" 0
run p2pctl enable
expect_match "arms cleanly afterwards" "$(st)" '^state=2 flags=0 hooks=19 live=0'

echo "== uid 1000, armed"
before=$(p2pctl status)
run p2ps-fuzz -s "$(seed 0x5eed0003)" -n $((100000 * scale)) -u 1000
echo "== uid 0 without CAP_SYS_ADMIN, armed"
run p2ps-fuzz -s "$(seed 0x5eed0004)" -n $((20000 * scale)) -D
expect_eq "p2pctl status unchanged" "$(p2pctl status)" "$before"

run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
expect_no_match "no kernel complaints" "$(dmesg | grep -E 'p2p[-_]shim' | grep -iE 'warn|bug|leak')" .
echo "rel-fuzz: $((100000 * scale + 3000 * scale + 100000 * scale + 20000 * scale)) ioctls in $(( $(date +%s) - t0 )) s"
