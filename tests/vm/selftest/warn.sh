# SPDX-License-Identifier: GPL-2.0
# Harness self-test: a case that exits 0 but makes the kernel WARN must be
# reported FAIL.
insmod /lib/p2p-shim/p2ptest_warn.ko
exit 0
