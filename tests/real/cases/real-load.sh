# SPDX-License-Identifier: GPL-2.0
# The real nvidia.ko in a machine without a GPU: without the loader its
# init ends "No NVIDIA GPU found"; with it nvidia loads, stays, takes
# nvidia-uvm, unloads and loads again (the loader's probe follows it).
. /cases/real.lib

echo "== without the GPU-less loader"
load_deps
klog_mark
expect_refused "insmod nvidia without the loader" 'No such device' insmod $NV
log=$(klog_since)
echo "$log" | grep -E 'NVRM' | head -n 5
expect_match "nvidia says why" "$log" 'NVRM: No NVIDIA GPU found'
module_loaded nvidia && fail "nvidia stayed loaded"

echo "== with it"
klog_mark
nvidia_load
log=$(klog_since)
echo "$log" | grep -E 'p2ptest_gpuless|NVRM' | head -n 5
expect_match "the loader forced os_is_nvswitch_present" "$log" 'os_is_nvswitch_present now returns 1'
expect_no_match "no GPU probed" "$log" 'No NVIDIA GPU found'
run insmod $UVM
module_loaded nvidia_uvm || fail "nvidia_uvm not loaded"
run rmmod nvidia_uvm
klog_mark
run rmmod nvidia
expect_match "the loader's probe went with nvidia" "$(klog_since)" 'probe on nvidia:os_is_nvswitch_present removed \([1-9][0-9]* forced calls\)'

echo "== and again"
nvidia_load
run rmmod nvidia
run rmmod p2ptest_gpuless
