# SPDX-License-Identifier: GPL-2.0
# Benchmark, in the VM (QEMU TCG: absolute times are those of an emulated
# CPU; compare ratios): how long arming the whole gen-B profile takes, and
# what a redirected call costs against a direct call of the same body.
. /cases/lib.sh
N=20000

run insmod /lib/standin/580.159.04/nvidia.ko
run insmod /lib/p2p-shim/p2p-shim.ko

# The profile's size, from the module itself (docs state it from rules/profile.c).
run p2pctl enable >/dev/null
hooks=$(p2pctl status --json | tr -d ' \n' | sed -n 's/.*"hooks_installed":\([0-9]*\).*/\1/p')
profile=$(p2pctl status --json | tr -d ' \n' | sed -n 's/.*"profile":"\([^"]*\)".*/\1/p')
run p2pctl disable >/dev/null
echo "## arming (resolve, verify, install) and disarming, $profile: $hooks hooks"
armbench 50 || fail armbench
armbench 50 1 || fail "armbench dry"

percall() { echo "$(kv $1 "$2") $N" | awk '{ printf "%.1f", $1 / $2 }'; }
echo "## $N calls each, ns per call"
out=$(nvflow bench 0 1 $N)
echo "stock:  direct _GH100 $(percall direct_ns "$out")  stub IsSupported $(percall hal_issupported_ns "$out")  stub Has $(percall hal_has_ns "$out")"
run p2pctl enable >/dev/null
out=$(nvflow bench 0 1 $N)
echo "armed:  direct _GH100 $(percall direct_ns "$out")  redirected via wrapper (IsSupported) $(percall hal_issupported_ns "$out")  redirected (Has) $(percall hal_has_ns "$out")"
run p2pctl disable >/dev/null
run p2pctl enable --dry-run >/dev/null
out=$(nvflow bench 0 1 $N)
echo "dry:    direct _GH100 $(percall direct_ns "$out")  counted stub (IsSupported) $(percall hal_issupported_ns "$out")  counted stub (Has) $(percall hal_has_ns "$out")"
run p2pctl disable >/dev/null
