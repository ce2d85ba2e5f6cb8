# SPDX-License-Identifier: GPL-2.0
# p2pctl end to end against the module: enable, status (text and JSON),
# monitor (text and JSON events for arming, mappings, refusal, disarming),
# disable, the documented exit codes, and report without the module and
# armed (the status, check and doctor it gathers, text and JSON).
. /cases/lib.sh

expect_refused "status without the module" 'status: .*(not loaded|No such file)' p2pctl status
p2pctl status >/dev/null 2>&1; expect_eq "exit code: module not loaded" $? 3
rep=$(p2pctl report --no-cuda --json) || fail "report without the module: exit $?"
echo "$rep" | jsoncheck "sections.status.note=p2p-shim not loaded" sections.doctor.output.summary ||
	fail "report without the module: $rep"
expect_match "report lists the missing status" "$rep" '"could_not_read": \[[^]]*"status: p2p-shim not loaded"'

run insmod /lib/standin/580.159.04/nvidia.ko
run insmod /lib/p2p-shim/p2p-shim.ko
timeout 30 p2pctl monitor --json --count 5 >/tmp/events.json 2>&1 &
mon_json=$!
timeout 30 p2pctl monitor --count 5 >/tmp/events.txt 2>&1 &
mon_txt=$!
# Both monitors subscribed: two generic netlink sockets (protocol 16) with
# a multicast group (/proc/net/netlink's Groups column holds groups 1-32).
wait_match "awk '\$2 == 16 && \$4 != \"00000000\"' /proc/net/netlink | wc -l" '^ *([2-9]|[1-9][0-9]+)$'

run p2pctl enable
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
run nvflow create 0 1 >/dev/null
out=$(p2pctl disable 2>&1); expect_eq "exit code: disable refused" $? 1
run nvflow destroy 0 >/dev/null
run p2pctl disable
wait $mon_json; expect_eq "json monitor exit" $? 0
wait $mon_txt; expect_eq "text monitor exit" $? 0

echo "--- events (text)"; cat /tmp/events.txt
echo "--- events (json)"; cat /tmp/events.json
ev=$(cat /tmp/events.txt)
expect_match "armed event" "$ev" 'armed.*gen-b.*580.159.04'
expect_match "mapping created" "$ev" 'mapping-created +gpus=0,1 refs=1'
expect_match "refusal" "$ev" 'refused .*disable: live BAR1 peer mappings: GPU0-GPU1'
expect_match "mapping removed" "$ev" 'mapping-removed'
expect_match "disarmed" "$ev" 'disarmed'
run jsoncheck --lines event </tmp/events.json

run p2pctl enable
st=$(p2pctl status --json)
echo "$st" | jsoncheck state driver_version profile hooks mappings || fail "status --json: $st"
expect_match "json state" "$st" '"state": *"armed"'
v=$(cat /sys/module/p2p_shim/version)
expect_match "module version" "$(p2pctl version)" "p2p-shim module: $v"
# report gathers each command as text and as JSON, armed.
rep=$(p2pctl report --no-cuda --json) || fail "report: exit $?"
echo "$rep" | jsoncheck sections.status.output.state=armed sections.status.exit_status=0 \
	sections.check.output.driver_version=580.159.04 sections.check.output.supported=true \
	sections.doctor.output.driver_version=580.159.04 || fail "report --json: $rep"
expect_no_match "report: status was read" "$rep" '"could_not_read": \[[^]]*"status:'
rep=$(p2pctl report --no-cuda)
expect_match "report: status text" "$rep" '== status: p2pctl status module: +[0-9.]+ state: +armed'
expect_match "report: check text" "$rep" '== check: p2pctl check .*580\.159\.04'
run p2pctl disable
