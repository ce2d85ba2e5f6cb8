# SPDX-License-Identifier: GPL-2.0
# vm-tags: every-kernel
# The control device without a driver: version and status for everyone,
# enable and disable for CAP_SYS_ADMIN only, every malformed request
# refused with its documented errno and nothing changed.
. /cases/lib.sh

run insmod /lib/p2p-shim/p2p-shim.ko
expect_eq "device mode" "$(stat -c %a /dev/p2p-shim)" 644

out=$(p2ps-raw version)
expect_match "version" "$out" 'abi=1 module=[0-9]+\.[0-9]+\.[0-9]+'
out=$(p2ps-raw status)
expect_match "status, disabled" "$out" 'state=0 .*live=0'

# Unprivileged: status yes, changes no, state untouched.
out=$(p2ps-raw -u 1000 status)
expect_match "unprivileged status" "$out" 'rc=0'
out=$(p2ps-raw -u 1000 enable)
expect_match "unprivileged enable" "$out" 'rc=EPERM'
out=$(p2ps-raw -u 1000 disable)
expect_match "unprivileged disable" "$out" 'rc=EPERM'
expect_match "still disabled" "$(p2ps-raw status)" 'state=0 '

# Malformed requests.
for c in version status enable disable; do
	expect_match "wrong size ($c)" "$(p2ps-raw badsize $c)" 'rc=EINVAL'
done
expect_match "unknown enable flag" "$(p2ps-raw badflags)" 'rc=EINVAL'
expect_match "non-zero pad" "$(p2ps-raw badpad)" 'rc=EINVAL'
expect_match "unknown command" "$(p2ps-raw badcmd)" 'rc=ENOTTY'
expect_match "NULL argument" "$(p2ps-raw nullarg)" 'rc=EFAULT'
expect_match "still disabled" "$(p2ps-raw status)" 'state=0 '

# No driver: enable waits for it; disable goes back.
klog_mark
expect_match "enable without nvidia" "$(p2ps-raw enable)" 'rc=0.*state=1'
expect_match "waiting" "$(p2ps-raw status)" 'state=1 '
expect_match "disable" "$(p2ps-raw disable)" 'rc=0'
expect_match "disabled" "$(p2ps-raw status)" 'state=0 '
log=$(klog_since)
echo "$log"
expect_match "log names the uid" "$log" 'enabled by uid 0: waiting for nvidia'
expect_match "log: disabled" "$log" 'disabled by uid 0'
run rmmod p2p_shim
