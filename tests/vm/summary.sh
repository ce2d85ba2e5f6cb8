# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/vm/run-all and tests/vm/check-lockdep: the one place
# that adds up the logs of several VM runs.
#
# sum_logs LOG...: prints each log but its "N passed, N failed" line, a
# FAIL line for a log that has none (its run died before the end), then one
# "N passed, N failed" for all.  Returns 1 if anything failed.
sum_logs() {
	local log last f passed=0 failed=0
	for log in "$@"; do
		grep -Ev '^[0-9]+ passed, [0-9]+ failed$' "$log"
		last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
		if [ -z "$last" ]; then
			echo "FAIL $(basename "$log" .log): no summary"
			failed=$((failed + 1))
			continue
		fi
		passed=$((passed + ${last%% passed*}))
		f=${last#*, }
		failed=$((failed + ${f%% failed}))
	done
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# tagged TAG DIR: the cases of DIR (names without .sh) whose "# vm-tags:"
# line names TAG.  A case declares where it runs; no list elsewhere does.
#   long-boot    runs in run-all's second boot, beside the rest (long soak
#                and fuzz cases, shared out so both boots take as long)
#   every-kernel runs on every kernel of make check's matrix, not only on
#                the two that run every case (tests/check)
tagged() {
	grep -lE "^# vm-tags:.*\\b$1\\b" "$2"/*.sh 2>/dev/null |
		sed 's|.*/||; s/\.sh$//'
}
