# SPDX-License-Identifier: GPL-2.0
# Harness self-test: a case whose script fails must be reported FAIL.
echo "failing on purpose"
exit 3
