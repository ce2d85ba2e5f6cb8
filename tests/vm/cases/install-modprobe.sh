# SPDX-License-Identifier: GPL-2.0
# vm-tags: every-kernel
# From the layout `make install` makes (tests/vm/stage: DESTDIR=/install,
# PREFIX=/usr/local, the module in lib/modules/<kver>/extra with its
# modules.dep): the opt-in modprobe.d snippet makes a plain
# `modprobe p2p-shim` load the shim with enable=1, and the stand-in nvidia
# loaded afterwards is armed at once; the installed p2pctl says so.
# Then kmod's modprobe (busybox's ignores softdep) shows the softdep itself:
# `modprobe nvidia` loads p2p-shim first, armed, with the config that
# the installed `p2pctl config --write` writes.
. /cases/lib.sh

kver=$(uname -r)
inst=/install
p2pctl=$inst/usr/local/bin/p2pctl
standin=/lib/standin/580.159.04/nvidia.ko
conf=/etc/modprobe.d/p2p-shim.conf
kmod=/opt/kmod

# The install tree in place, and gone again after the case.
cleanup() {
	rm -rf "/lib/modules/$kver" /etc/modprobe.d
	return 0
}
trap cleanup EXIT
[ -e "/lib/modules/$kver" ] && fail "/lib/modules/$kver exists before the case"
mkdir -p /lib/modules /etc/modprobe.d
cp -a "$inst/lib/modules/$kver" /lib/modules/
# The module is compressed where the kernel says so (.ko.xz from 6.12).
expect_match "modules.dep" "$(cat /lib/modules/$kver/modules.dep)" '^extra/p2p-shim\.ko(\.xz|\.zst|\.gz)?:'
[ -x "$p2pctl" ] || fail "$p2pctl not installed"

# 1. busybox modprobe, the installed snippet (PREFIX/share/p2p-shim).
cp "$inst/usr/local/share/p2p-shim/modprobe.d/p2p-shim.conf" "$conf"
run modprobe p2p-shim
module_loaded p2p_shim || fail "modprobe p2p-shim: not loaded"
expect_eq "enable=1 from modprobe.d" "$(cat /sys/module/p2p_shim/parameters/enable)" Y
expect_match "status: waiting for nvidia" "$($p2pctl status)" 'state: +waiting'
run insmod "$standin"
st=$($p2pctl status)
echo "$st"
expect_match "status: armed by the stand-in's arrival" "$st" 'state: +armed'
expect_match "status --json" "$($p2pctl status --json)" '"state": *"armed"'
run $p2pctl disable
run rmmod nvidia
run modprobe -r p2p-shim
module_loaded p2p_shim && fail "modprobe -r p2p-shim: still loaded"

# 2. kmod's modprobe: the softdep, with the config p2pctl writes.
rm -f "$conf"
run $p2pctl config --write
grep -q '^softdep nvidia pre: p2p-shim$' "$conf" || fail "p2pctl config --write: $(cat "$conf")"
mkdir -p "/lib/modules/$kver/extra/standin"
cp "$standin" "/lib/modules/$kver/extra/standin/nvidia.ko"
run $kmod/depmod "$kver"
plan=$($kmod/modprobe --show-depends nvidia)
echo "$plan"
expect_match "plan: p2p-shim first, enable=1, then nvidia" "$plan" \
	'insmod /lib/modules/[^ ]*/extra/p2p-shim\.ko(\.xz|\.zst|\.gz)? +enable=1 .*insmod /lib/modules/[^ ]*/extra/standin/nvidia\.ko'
run $kmod/modprobe nvidia
module_loaded p2p_shim || fail "modprobe nvidia: p2p_shim not loaded first (softdep)"
module_loaded nvidia || fail "modprobe nvidia: nvidia not loaded"
expect_eq "enable=1 via softdep" "$(cat /sys/module/p2p_shim/parameters/enable)" Y
expect_match "status: armed" "$($p2pctl status)" 'state: +armed'
run $p2pctl disable
run $kmod/modprobe -r nvidia
module_loaded nvidia && fail "nvidia still loaded"
# kmod removes the softdep with nvidia, or else it is left to us.
module_loaded p2p_shim && run $kmod/modprobe -r p2p-shim
module_loaded p2p_shim && fail "p2p_shim still loaded"
echo "ok: installed layout loads, arms and unloads"
