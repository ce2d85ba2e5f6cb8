# SPDX-License-Identifier: GPL-2.0
# `make check-lockdep` (Correctness III item 4): the lockdep kernel's own
# proof that it watched.  Every other case of the suite ran on this kernel
# before this boot, each failing on a lockdep report in its console; this
# one shows lockdep was there and is still on (a report turns it off), and
# runs a flow with an nlmon tap up, so that the netlink events the hooks
# cause pass through a device's transmit path (which warns when reached
# from NMI context).
. /cases/lib.sh
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'

[ -e /proc/lockdep_stats ] || fail "no /proc/lockdep_stats: not the lockdep kernel"
expect_match "lockdep on at the start" "$(cat /proc/lockdep_stats)" 'debug_locks: +1'

run ip link add nlmon0 type nlmon
run ip link set nlmon0 up
for v in 550.163.01 570.148.08 580.159.04 595.45.04; do
	echo "== $v"
	run insmod /lib/p2p-shim/p2p-shim.ko enable=1
	p2pctl monitor >/tmp/monitor.out 2>&1 &
	mon=$!
	run insmod /lib/standin/$v/nvidia.ko gpus="$G"
	expect_match "$v armed" "$(p2pctl status)" 'armed'
	out=$(nvflow create 0 1) || fail "$v create: $out"
	obj=$(kv object "$out")
	out=$(nvflow map "$obj" 0x0 0x200000 rm) || fail "$v map: $out"
	run nvflow unmap "$(kv mapping "$out")"
	run nvflow destroy "$obj"
	run rmmod nvidia
	run p2pctl disable
	kill $mon
	wait $mon 2>/dev/null
	run rmmod p2p_shim
done
run ip link del nlmon0
stats=$(cat /proc/lockdep_stats)
echo "$stats" | grep -E 'debug_locks|dependency chains|lock-classes'
expect_match "lockdep still on (no report turned it off)" "$stats" 'debug_locks: +1'
