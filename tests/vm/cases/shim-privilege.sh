# SPDX-License-Identifier: GPL-2.0
# Only CAP_SYS_ADMIN changes state; anyone reads status, over both the
# device and netlink.
. /cases/lib.sh

run insmod /lib/standin/580.159.04/nvidia.ko
run insmod /lib/p2p-shim/p2p-shim.ko
chmod 755 /bin/p2pctl
out=$(p2ps-raw -u 1000 status) || fail "unprivileged status: $out"
out=$(su_run() { p2ps-raw -u 1000 "$@"; }; su_run enable)
expect_match "unprivileged enable refused" "$out" 'rc=EPERM'
expect_match "nothing armed" "$(p2pctl status)" 'state: +disabled'
run p2pctl enable
expect_match "unprivileged disable refused" "$(p2ps-raw -u 1000 disable)" 'rc=EPERM'
expect_match "still armed" "$(p2pctl status)" 'state: +armed'
run p2pctl disable

# Bus and DMA addresses (BAR1, a pair's BAR1 DMA base) only for root:
# netlink dumps leave them out for others, and events for everyone.
G='AD102@0000:01:00.0,vram=24G,bar1=0x4000000000/32G;AD102@0000:02:00.0,vram=24G,bar1=0x6000000000/32G'
run rmmod nvidia
run p2pctl enable
run insmod /lib/standin/580.159.04/nvidia.ko gpus="$G"
out=$(nvflow create 0 1) || fail "create: $out"
p2pctl monitor --json >mon.out 2>&1 &
mpid=$!
# Subscribed: a generic netlink socket (protocol 16) with a multicast group.
wait_match "awk '\$2 == 16 && \$4 != \"00000000\"' /proc/net/netlink | wc -l" '^ *[1-9]'
out2=$(nvflow create 0 1) || fail "create 2: $out2"
run nvflow destroy "$(kv object "$out2")" >/dev/null
root=$(p2pctl status --json)
user=$(p2ps-raw -u 1000 exec p2pctl status --json) || fail "unprivileged status: $user"
echo "$user"
expect_match "root sees the DMA base" "$root" '"dma_base": *[1-9][0-9]*'
expect_match "root sees BAR1's address" "$root" '"bar1_addr": *[1-9][0-9]*'
expect_match "others: no DMA base" "$user" '"dma_base": *null'
expect_match "others: no BAR1 address" "$user" '"bar1_addr": *null'
expect_match "others: the rest is there" "$user" '"bar1_size": *[1-9]'
kill $mpid 2>/dev/null
expect_match "events seen" "$(cat mon.out)" 'mapping'
expect_no_match "events carry no DMA base" "$(cat mon.out)" 'dma_base'
run nvflow destroy "$(kv object "$out")" >/dev/null
run p2pctl disable
run rmmod nvidia
