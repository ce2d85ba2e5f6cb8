# SPDX-License-Identifier: GPL-2.0
# Harness self-test: a case that passes.
true
