#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# p2pctl bench --nccl beside nccl-tests' all_reduce_perf and all_gather_perf,
# N processes of each, interleaved (nccl-tests first in odd rounds, p2pctl first
# in even ones), timed alike (one warm-up, one batch of 20 per size: nccl-tests'
# defaults, p2pctl's --warmup 1 --batches 1), then bench/nccl_compare.py over
# all of them. Read-only: it runs collectives, nothing else.
#
# usage: nccl-vs-tests.sh OUTDIR N P2PCTL NCCL_TESTS_DIR [LIBNCCL_DIR]
#   LIBNCCL_DIR: the libnccl.so.2 both use (first in nccl-tests' library path,
#   P2PCTL_LIBNCCL for p2pctl); without it each finds its own, and the
#   comparison refuses runs of different NCCL versions.
#   MAXB=1M in the environment stops at 1 MiB (default 256M).
# Set NCCL_NVLS_ENABLE=0 on NVLink machines.
set -u
[ $# -ge 4 ] || { sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
out=$1 n=$2 p2pctl=$3 nt=$4 lib=${5:-} maxb=${MAXB:-256M}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" || exit 1
[ -z "$lib" ] || export P2PCTL_LIBNCCL=$lib/libnccl.so.2

ntrun() {	# $1 collective, $2 round
	LD_LIBRARY_PATH=$lib${lib:+:}${LD_LIBRARY_PATH:-} "$nt/$1_perf" -b 8 -e "$maxb" -f 2 -g 2 \
		> "$out/nt-$1-$2.txt" 2>&1 || { echo "$1_perf failed (round $2)"; return 1; }
}
p2prun() {
	"$p2pctl" bench --nccl --gpus 0,1 --max-bytes "$maxb" --warmup 1 --batches 1 --json \
		> "$out/p2pctl-$1.json" 2> "$out/p2pctl-$1.err" ||
		{ echo "p2pctl bench --nccl failed (round $1)"; return 1; }
}

for ((i = 1; i <= n; i++)); do
	if ((i % 2)); then
		ntrun all_reduce $i && ntrun all_gather $i && p2prun $i || exit 1
	else
		p2prun $i && ntrun all_reduce $i && ntrun all_gather $i || exit 1
	fi
	echo "round $i of $n done"
done
python3 "$here/nccl_compare.py" "$out"/nt-*.txt -- "$out"/p2pctl-*.json
