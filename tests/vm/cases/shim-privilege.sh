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
