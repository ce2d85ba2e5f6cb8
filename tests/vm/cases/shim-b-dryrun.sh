# SPDX-License-Identifier: GPL-2.0
# A dry run installs counting probes only: an AD102 pair behaves exactly as
# stock (no P2P, a forced BAR1 object fails on the stub), and every hook on
# the path counts its calls.
. /cases/lib.sh

flow() {
	nvflow caps 0 1
	nvflow create 0 1 --type pcie_bar1
	nvflow create 0 1
	nvflow state
}

run insmod /lib/standin/580.159.04/nvidia.ko
stock=$(flow 2>&1)
run rmmod nvidia

run insmod /lib/p2p-shim/p2p-shim.ko
out=$(p2pctl enable --dry-run) || fail "enable --dry-run: $out"
expect_match "dry run waits" "$(p2pctl status)" 'state: +waiting \(dry run\)'
run insmod /lib/standin/580.159.04/nvidia.ko
expect_match "armed on arrival, dry" "$(p2pctl status)" 'state: +dry-run'
dry=$(flow 2>&1)
[ "$stock" = "$dry" ] || fail "dry run changed the driver's behaviour"
echo "ok: dry run behaves exactly as stock"
expect_match "stub fails as stock" "$dry" 'status=0x56'

st=$(p2pctl status --json)
echo "$st"
j=$(echo "$st" | tr -d ' \n')
for t in kbusCreateP2PMapping_GP100 osReadRegistryDword p2pGetCapsStatus; do
	h=$(echo "$j" | grep -o "\"target\":\"$t\"[^}]*" | grep -o '"kind":"[a-z]*"\|"hits":[0-9]*' | tr '\n' ' ')
	expect_match "$t counted" "$h" '"kind":"count" "hits":[1-9]'
done
out=$(p2pctl enable 2>&1) && fail "switching a dry run to armed succeeded"
expect_match "must disable first" "$out" 'disable first'
run p2pctl disable
expect_match "disabled" "$(p2pctl status)" 'state: +disabled'
