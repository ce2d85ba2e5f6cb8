# SPDX-License-Identifier: GPL-2.0
# Reliability: privilege.  The node is 0644 root:root; uid 1000 may open
# it read-only (not read-write) and read VERSION and STATUS; only
# CAP_SYS_ADMIN enables or disables (uid 1000 and uid 0 without
# CAP_SYS_ADMIN get EPERM, state unchanged); netlink GET_STATUS, both dumps
# and the events group are open to uid 1000; p2pctl status works as uid 1000.
. /cases/lib.sh
raw() { p2ps-raw status | sed -n 's/^state=/state=/p'; }

run insmod /lib/p2p-shim/p2p-shim.ko
run insmod /lib/standin/580.159.04/nvidia.ko
chmod 755 /bin/*
ls -l /dev/p2p-shim
expect_eq "char device, mode 0644, uid 0, gid 0" "$(stat -c '%F %a %u %g' /dev/p2p-shim)" \
	"character special file 644 0 0"

expect_fail "uid 1000 cannot open read-write" p2ps-soak asuser 1000 sh -c 'exec 3<>/dev/p2p-shim'
run p2ps-soak asuser 1000 sh -c 'exec 3</dev/p2p-shim'
expect_match "uid 1000 version" "$(p2ps-raw -u 1000 version)" 'rc=0 abi=1'
expect_match "uid 1000 status" "$(p2ps-raw -u 1000 status)" 'rc=0 state=0'

for s in disabled armed; do
	[ $s = armed ] && run p2pctl enable
	before=$(raw)
	expect_match "$s: uid 1000 enable EPERM" "$(p2ps-raw -u 1000 enable)" 'rc=EPERM'
	expect_match "$s: uid 1000 dry-run enable EPERM" "$(p2ps-raw -u 1000 enable 1)" 'rc=EPERM'
	expect_match "$s: uid 1000 disable EPERM" "$(p2ps-raw -u 1000 disable)" 'rc=EPERM'
	expect_eq "$s: state unchanged" "$(raw)" "$before"
	# uid 0 without CAP_SYS_ADMIN: every enable/disable is EPERM (fuzzer's -D).
	out=$(p2ps-fuzz -D -s 7 -n 2000)
	echo "$out" | grep -E '^(enable|disable) '
	expect_match "$s: no CAP_SYS_ADMIN, enable only EPERM" "$out" 'enable +[0-9]+ calls: EPERM=[0-9]+ '
	expect_match "$s: no CAP_SYS_ADMIN, disable only EPERM" "$out" 'disable +[0-9]+ calls: EPERM=[0-9]+ '
	expect_eq "$s: state unchanged" "$(raw)" "$before"
	out=$(p2ps-nlfuzz -u 1000 query)
	echo "$out"
	expect_match "$s: uid 1000 netlink status, dumps, events" "$out" \
		'uid=1000 status=ok hooks_dump=[0-9]+ mappings_dump=0 events_join=ok'
	out=$(p2ps-soak asuser 1000 p2pctl status 2>&1) ||
		fail "$s: p2pctl status as uid 1000: $out"
	expect_match "$s: p2pctl status as uid 1000" "$out" "state: +$s"
	expect_fail "$s: p2pctl enable as uid 1000" p2ps-soak asuser 1000 p2pctl enable
	expect_eq "$s: state unchanged" "$(raw)" "$before"
done
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
