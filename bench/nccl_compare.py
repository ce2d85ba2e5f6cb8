#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Markdown comparison of `p2pctl bench --nccl --json` runs with nccl-tests
runs (all_reduce_perf / all_gather_perf text output), one process per run.

Per size and collective: the median over processes of each tool's time
(nccl-tests' out-of-place column; p2pctl's median batch), the range over
processes, and the ratio against the goal: p2pctl's busbw at least 0.95x
nccl-tests' from 1 MiB, its time at most 1.1x below 1 MiB.

Why medians over processes: on the lent VMs the small-size time of a process
sits at one of two levels (about 14-16 or 19-22 us on the H200 pair) for the
whole process, in both tools, pinned to any CPU or not, so one process of each
compares a coin toss of levels (docs/bench.md).

usage: nccl_compare.py [--goal] nccl-tests.txt ... -- p2pctl.json ...
  --goal  exit 1 when a compared size misses the goal
"""
import json
import statistics
import sys

GOAL_BUSBW, GOAL_TIME, BIG = 0.95, 1.1, 1 << 20


def parse_nccl_tests(path):
    """{collective: {bytes: time_us}} of one nccl-tests output file."""
    coll, rows = None, {}
    with open(path) as f:
        for line in f:
            t = line.split()
            if line.startswith("# Collective test starting:"):
                coll = t[-1].replace("_perf", "")
            if len(t) >= 13 and t[0].isdigit() and t[5].replace(".", "", 1).isdigit():
                rows.setdefault(coll, {})[int(t[0])] = float(t[5])
    if not rows:
        raise SystemExit("%s: no nccl-tests rows" % path)
    return rows


def parse_p2pctl(path):
    with open(path) as f:
        j = json.load(f)
    if j.get("result") != "OK":
        raise SystemExit("%s: p2pctl bench --nccl did not pass (%s)" % (path, j.get("result")))
    rows = {}
    for r in j["results"]:
        rows.setdefault(r["collective"], {})[r["bytes"]] = r["time_us"]
    return rows


def gather(runs):
    """{collective: {bytes: [time_us per run]}}"""
    out = {}
    for run in runs:
        for coll, sizes in run.items():
            for size, us in sizes.items():
                out.setdefault(coll, {}).setdefault(size, []).append(us)
    return out


def main(argv):
    goal = "--goal" in argv
    argv = [a for a in argv if a != "--goal"]
    if "--" not in argv:
        raise SystemExit(__doc__)
    k = argv.index("--")
    nt = gather(parse_nccl_tests(p) for p in argv[:k])
    us = gather(parse_p2pctl(p) for p in argv[k + 1:])
    missed = 0
    for coll in sorted(set(nt) & set(us)):
        sizes = sorted(set(nt[coll]) & set(us[coll]))
        print("### %s: nccl-tests %d processes, p2pctl %d\n" %
              (coll, len(nt[coll][sizes[0]]), len(us[coll][sizes[0]])))
        print("| size (B) | nccl-tests us, median (range) | p2pctl us, median (range) | ratio | goal |")
        print("|---|---|---|---|---|")
        for s in sizes:
            a, b = nt[coll][s], us[coll][s]
            ma, mb = statistics.median(a), statistics.median(b)
            if s >= BIG:
                ratio, ok = "busbw %.3fx" % (ma / mb), ma / mb >= GOAL_BUSBW
            else:
                ratio, ok = "time %.2fx" % (mb / ma), mb / ma <= GOAL_TIME
            missed += not ok
            print("| %d | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %s | %s |" %
                  (s, ma, min(a), max(a), mb, min(b), max(b), ratio, "met" if ok else "**missed**"))
        print()
    print("%d size(s) missed the goal" % missed)
    return 1 if goal and missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
