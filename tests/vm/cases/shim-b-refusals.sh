# SPDX-License-Identifier: GPL-2.0
# Enabling is refused, with the culprit named and nothing armed, for a
# driver version without a profile (unless forced), a missing target, a
# changed stub and two targets folded into one function (p2pctl check
# refusing each the same way); a failing _GH100 body fails cleanly with no ledger entry.
. /cases/lib.sh

# The kernel's own list of registered kprobes (register_kprobe's, which
# tracing's kprobe_events never shows): empty.
no_kprobes() {
	expect_eq "$1: kprobes registered" "$(wc -l </sys/kernel/debug/kprobes/list)" 0
}
nothing_armed() {
	st=$(p2pctl status)
	expect_match "$1: disabled" "$st" 'state: +disabled'
	expect_match "$1: no hook installed" "$st" 'hooks: +0 installed'
	no_kprobes "$1"
}

run insmod /lib/p2p-shim/p2p-shim.ko

echo "== unknown version"
run insmod /lib/standin/999.1/nvidia.ko
out=$(p2pctl enable 2>&1); rc=$?
echo "$out"
expect_eq "999.1 refused" "$rc" 1
expect_match "999.1 message" "$out" 'nvidia 999.1 has no profile \(supported: 550.x, 560.x, 565.x, 570.x, 575.x, 580.x, 590.x, 595.x\); force to try the newest'
nothing_armed 999.1
out=$(p2pctl enable --force) || fail "forced enable: $out"
expect_match "999.1 forced" "$(p2pctl status)" 'state: +armed.*profile: +gen-b'
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
out=$(nvflow create 0 1) || fail "999.1 forced create: $out"
expect_eq "999.1 forced: BAR1 P2P" "$(kv type "$out")" pcie_bar1
run nvflow destroy 0 >/dev/null
run p2pctl disable
run rmmod nvidia

# build, the target named, the status row that shows the failure, the reason
for f in "fault-nosym|kbusGetBar1P2PDmaInfo|kbusGetBar1P2PDmaInfo_395e98|reason: redirect destination kbusGetBar1P2PDmaInfo_GH100 not found" \
	 "fault-stub|kbusIsPcieBar1P2PMappingSupported_d69453|kbusIsPcieBar1P2PMappingSupported_d69453|reason: body is not 'xor %eax,%eax; ret': f3 0f 1e fa b8 01 00 00 00 c3" \
	 "fault-fold|kbusHasPcieBar1P2PMapping_d69453|kbusHasPcieBar1P2PMapping_d69453|reason: kbusIsPcieBar1P2PMappingSupported_d69453 and kbusHasPcieBar1P2PMapping_d69453 are one function \(identical code folded\)"; do
	IFS='|'
	set -- $f
	IFS=' 	
'
	echo "== $1"
	run insmod /lib/standin/$1/nvidia.ko
	expect_refused "$1 refused, naming the target and why" "target: $2 +$4" p2pctl enable
	nothing_armed "$1"
	st=$(p2pctl status)
	expect_match "$1 status shows the failure" "$st" "$3 +[a-z]+ +failed"
	# p2pctl check on the file runs the module's resolver (rules/resolve.c):
	# the same refusal
	expect_refused "$1: p2pctl check refuses it too" "NOT supported: .*${4#reason: }" \
		p2pctl check --module /lib/standin/$1/nvidia.ko
	run rmmod nvidia
done

# A function the shim calls without ENDBR (as objtool's sealing leaves a
# directly-called one): refused where the kernel has IBT, a warning where
# it has not (Debian's 5.10 and 6.1 are built without CONFIG_X86_KERNEL_IBT;
# 6.12 and later with it).
echo "== fault-endbr on $(uname -r)"
run insmod /lib/standin/fault-endbr/nvidia.ko
klog_mark
case $(uname -r) in
5.*|6.1.*)
	run p2pctl enable
	expect_match "fault-endbr: armed, with a warning" "$(klog_since)" \
		'kbusGetBar1P2PDmaInfo_GH100 does not start with endbr64 \(.*\): harmless on this kernel \(no IBT\)'
	run p2pctl disable
	;;
*)
	expect_refused "fault-endbr refused on an IBT kernel, naming the target and why" \
		'target: kbusGetBar1P2PDmaInfo_GH100 .*does not start with endbr64 \(.*\): only called directly inside nvidia' \
		p2pctl enable
	nothing_armed fault-endbr
	expect_match "fault-endbr status shows the failure" "$(p2pctl status)" \
		'kbusGetBar1P2PDmaInfo_395e98 +[a-z]+ +failed'
	;;
esac
run rmmod nvidia

echo "== failing _GH100 body"
run insmod /lib/standin/580.159.04/nvidia.ko fail_gh100=kbusCreateP2PMappingForBar1P2P_GH100
run p2pctl enable
run nvflow reinit 0 >/dev/null
run nvflow reinit 1 >/dev/null
expect_refused "create with a failing body: the driver's error passed through" 'status=0xffff' \
	nvflow create 0 1

expect_match "ledger empty" "$(p2pctl status)" 'mappings: +0'
run p2pctl disable
run rmmod nvidia
run rmmod p2p_shim
