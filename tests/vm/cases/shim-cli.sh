# SPDX-License-Identifier: GPL-2.0
# p2pctl end to end against the module: enable, status (text and JSON),
# monitor (text and JSON events for arming, mappings, refusal, disarming),
# disable, and the documented exit codes.
. /cases/lib.sh

expect_refused "status without the module" 'status: .*(not loaded|No such file)' p2pctl status
p2pctl status >/dev/null 2>&1; expect_eq "exit code: module not loaded" $? 3

run insmod /lib/standin/580.159.04/nvidia.ko
run insmod /lib/p2p-shim/p2p-shim.ko
timeout 30 p2pctl monitor --json --count 5 >/tmp/events.json 2>&1 &
mon_json=$!
timeout 30 p2pctl monitor --count 5 >/tmp/events.txt 2>&1 &
mon_txt=$!
sleep 1

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
p2pctl version | grep -q 'p2p-shim module: 0.1.0' || fail "version: $(p2pctl version)"
run p2pctl disable
