# SPDX-License-Identifier: GPL-2.0
# The UVM peer set (docs/uvm.md) on the real nvidia-uvm.ko: with p2p-shim
# armed, nvidia-uvm's arrival arms the set the runner's table names (its
# hook in nvidia and the rest in nvidia_uvm, every one installed, resolved
# and checked on the real code), its departure removes it, and enable with
# nvidia-uvm already loaded arms it too.  590+ (uvm-bar1) have only the
# hook in nvidia.
. /cases/real.lib

# Addresses with a probe in MODULE (cf. kprobes_on_nvidia).
kprobes_on() {
	awk -v m="$1" '$4 == m && $3 !~ /^os_is_nvswitch_present\+/ { print $1 }' \
		/sys/kernel/debug/kprobes/list | sort -u | wc -l
}

if [ "$EXPECT" != arm ]; then
	echo "nvidia $REAL_VERSION is refused: no UVM peer set to check"
	exit 0
fi
nvidia_load
shim_load enable=1
wait_state armed
expect_armed "nvidia alone" armed
st=$(p2pctl status)
if [ "$EXPECT_UVM_SET" = none ]; then
	expect_match "no set for $REAL_VERSION" "$st" 'uvm peers: +none needed'
else
	expect_match "set waits for nvidia-uvm" "$st" 'uvm peers: +waiting for nvidia-uvm'
fi

klog_mark
run insmod $UVM
st=$(p2pctl status)
echo "$st"
total=$((EXPECT_HOOKS + EXPECT_UVM_HOOKS))
if [ "$EXPECT_UVM_SET" = none ]; then
	expect_match "still no set" "$st" 'uvm peers: +none needed'
	expect_armed "nvidia-uvm loaded" armed
	expect_eq "kprobes on nvidia_uvm" "$(kprobes_on nvidia_uvm)" 0
else
	expect_match "set armed on nvidia-uvm's arrival" "$st" "uvm peers: +armed \\($EXPECT_UVM_HOOKS hooks\\)"
	expect_match "kernel log" "$(klog_since)" "UVM peer set $EXPECT_UVM_SET armed for nvidia-uvm"
	js=$(status_json)
	expect_eq "hooks_installed" "$(jnum hooks_installed "$js")" "$total"
	expect_eq "hooks in state installed" "$(echo "$js" | grep -c '"state": *"installed"')" "$total"
	expect_eq "kprobes on nvidia (profile + caps hook)" "$(kprobes_on nvidia)" $((EXPECT_HOOKS + 1))
	expect_eq "kprobes on nvidia_uvm" "$(kprobes_on nvidia_uvm)" $((EXPECT_UVM_HOOKS - 1))
	expect_match "caps hook row" "$st" 'nvidia:nvUvmInterfaceGetP2PCaps +return +installed'
	case $EXPECT_UVM_SET in
	uvm-pmm) fn=uvm_pmm_gpu_peer_phys_address ;;
	uvm-gpu) fn=uvm_gpu_peer_phys_address ;;
	*) fn= ;;	# uvm-bar1 (590+): the caps hook only
	esac
	if [ -n "$fn" ]; then
		expect_match "address hook row" "$st" "nvidia_uvm:$fn +return +installed"
		expect_match "make_pte_turing row" "$st" 'nvidia_uvm:make_pte_turing +arg +installed'
		expect_match "make_pte_hopper row" "$st" 'nvidia_uvm:make_pte_hopper +arg +installed'
	fi
	[ "$EXPECT_UVM_SET" = uvm-pmm ] &&
		expect_match "copy hook row" "$st" 'nvidia_uvm:uvm_pmm_gpu_peer_copy_address +return +installed'
fi

klog_mark
run rmmod nvidia_uvm
expect_armed "nvidia-uvm gone" armed
expect_eq "no kprobes left on nvidia_uvm" "$(kprobes_on nvidia_uvm)" 0
if [ "$EXPECT_UVM_SET" != none ]; then
	expect_match "set waits again" "$(p2pctl status)" 'uvm peers: +waiting for nvidia-uvm'
	expect_match "kernel log" "$(klog_since)" "nvidia-uvm left: UVM peer set $EXPECT_UVM_SET removed"
fi

echo "== nvidia-uvm loaded before enable"
run p2pctl disable
expect_nothing_installed "after disable" disabled
run insmod $UVM
run p2pctl enable
if [ "$EXPECT_UVM_SET" != none ]; then
	expect_match "set armed at enable" "$(p2pctl status)" "uvm peers: +armed \\($EXPECT_UVM_HOOKS hooks\\)"
	expect_eq "hooks_installed" "$(jnum hooks_installed "$(status_json)")" "$total"
fi
run p2pctl disable
expect_nothing_installed "after disable" disabled
expect_eq "no kprobes on nvidia_uvm" "$(kprobes_on nvidia_uvm)" 0
real_reset
