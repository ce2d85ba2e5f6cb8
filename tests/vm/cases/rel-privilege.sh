# SPDX-License-Identifier: GPL-2.0
# vm-tags: long-boot
# Reliability: privilege.  The node is 0644 root:root; uid 1000 may open
# it read-only (not read-write) and read VERSION and STATUS; only
# CAP_SYS_ADMIN enables or disables (uid 1000 and uid 0 without
# CAP_SYS_ADMIN get EPERM, state unchanged); netlink GET_STATUS, both dumps
# and the events group are open to uid 1000; p2pctl status works as uid 1000.
. /cases/lib.sh
raw() { p2ps-raw status | sed -n 's/^state=/state=/p'; }
# only_eperm WHAT CLASS FUZZ_OUTPUT: the fuzzer's line for CLASS says that
# every one of its calls (at least one) failed with EPERM, nothing else.
only_eperm() {
	l=$(printf '%s\n' "$3" | grep -E "^$2 ")
	n=$(echo "$l" | sed -n "s/^$2 *\([0-9]*\) calls: EPERM=\([0-9]*\)\$/\1 \2/p")
	set -- "$1" "$2" $n
	[ -n "${3:-}" ] && [ "$3" -gt 0 ] && [ "$3" = "${4:-}" ] ||
		fail "$1: want every $2 call EPERM, got '$l'"
	echo "ok: $1: $3 $2 calls, all EPERM"
}

run insmod /lib/p2p-shim/p2p-shim.ko
run insmod /lib/standin/580.159.04/nvidia.ko
chmod 755 /bin/*
ls -l /dev/p2p-shim
expect_eq "char device, mode 0644, uid 0, gid 0" "$(stat -c '%F %a %u %g' /dev/p2p-shim)" \
	"character special file 644 0 0"

expect_refused "uid 1000 cannot open read-write" 'Permission denied' \
	p2ps-soak asuser 1000 sh -c 'exec 3<>/dev/p2p-shim'
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
	out=$(p2ps-fuzz -D -s 7 -n 2000) || fail "$s: p2ps-fuzz -D exited non-zero: $out"
	record "$s: p2ps-fuzz -D $(echo "$out" | sed -n 's/^\(seed=[^ ]* count=[^ ]*\).*/\1/p')"
	echo "$out" | grep -E '^(seed|enable|disable|total)'
	only_eperm "$s: no CAP_SYS_ADMIN, enable" enable "$out"
	only_eperm "$s: no CAP_SYS_ADMIN, disable" disable "$out"
	expect_eq "$s: state unchanged" "$(raw)" "$before"
	out=$(p2ps-nlfuzz -u 1000 query)
	echo "$out"
	expect_match "$s: uid 1000 netlink status, dumps, events" "$out" \
		'uid=1000 status=ok hooks_dump=[0-9]+ mappings_dump=0 events_join=ok'
	out=$(p2ps-soak asuser 1000 p2pctl status 2>&1) ||
		fail "$s: p2pctl status as uid 1000: $out"
	expect_match "$s: p2pctl status as uid 1000" "$out" "state: +$s"
	expect_refused "$s: p2pctl enable as uid 1000" 'enable: .*(Operation not permitted|CAP_SYS_ADMIN)' \
		p2ps-soak asuser 1000 p2pctl enable

	expect_eq "$s: state unchanged" "$(raw)" "$before"
done
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
