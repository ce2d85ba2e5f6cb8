#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Markdown comparison of `p2pctl bench --nccl --json` runs with nccl-tests
runs (all_reduce_perf / all_gather_perf text output), one process per run.

Per size and collective, out of place and in place ("all_reduce in place"):
each program's time over its processes (nccl-tests' out-of-place and in-place
columns; p2pctl's rows with "in_place" false and true), as median and range, and the
ratio of the means with a 90% bootstrap interval, against the goal: p2pctl's
busbw at least 0.95x nccl-tests' from 1 MiB, its time at most 1.1x below.
A size is "met" when the whole interval is inside the goal, "missed" when it
is wholly outside, "not decided" otherwise (and always below 8 processes of
each, where the interval means little): more processes would decide it.

Why over processes, and why an interval: on the lent VMs the small-size time
of a process sits at one of two levels (about 12-14 or 17-20 us on the H200
pair), mostly for the whole process, in both programs, pinned or not (see
docs/bench.md), so one process of each compares a coin toss of levels, and
the mean of a few still moves with how many fell on each level.

Refused (exit 2): a file without rows, an nccl-tests run with wrong results,
a p2pctl run that did not pass, programs that used different NCCL versions,
a collective or a size that only one program has, nothing to compare.

usage: nccl_compare.py [--goal] nccl-tests.txt ... -- p2pctl.json ...
  --goal  exit 1 when a size missed the goal
"""
import json
import random
import statistics
import sys

GOAL_BUSBW, GOAL_TIME, BIG = 0.95, 1.1, 1 << 20
BOOT = 2000
MIN_RUNS = 8    # fewer processes than this decide nothing: a bootstrap of 1 is exact


def refuse(msg):
    print("nccl_compare: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_nccl_tests(path):
    """({collective: {bytes: time_us}}, NCCL version) of one nccl-tests output."""
    coll, rows, version = None, {}, None
    with open(path) as f:
        for line in f:
            t = line.split()
            if line.startswith("# nccl-tests version"):
                version = next((int(w.split("=")[1]) for w in t if w.startswith("nccl-library=")),
                               None)
            if line.startswith("# Collective test starting:"):
                coll = t[-1].replace("_perf", "")
            if len(t) >= 13 and t[0].isdigit() and t[5].replace(".", "", 1).isdigit():
                if coll is None:
                    refuse("%s: rows before a '# Collective test starting:' line" % path)
                if t[8] != "0":
                    refuse("%s: nccl-tests found %s wrong values at %s bytes" % (path, t[8], t[0]))
                # all-gather's smallest sizes print as 0 (NaN, below): not compared
                rows.setdefault(coll, {})[int(t[0])] = float(t[5]) if int(t[0]) else float("nan")
                if len(t) >= 13 and t[9].replace(".", "", 1).isdigit():
                    if t[12] != "0":
                        refuse("%s: nccl-tests found %s wrong values in place at %s bytes" %
                               (path, t[12], t[0]))
                    rows.setdefault(coll + " in place", {})[int(t[0])] = \
                        float(t[9]) if int(t[0]) else float("nan")
    if not rows:
        refuse("%s: no nccl-tests rows" % path)
    return rows, version


def parse_p2pctl(path):
    with open(path) as f:
        j = json.load(f)
    if j.get("result") != "OK":
        refuse("%s: p2pctl bench --nccl did not pass (%s)" % (path, j.get("result")))
    rows = {}
    for r in j["results"]:
        coll = r["collective"] + (" in place" if r.get("in_place") else "")
        rows.setdefault(coll, {})[r["bytes"]] = r["time_us"]
    return rows, j.get("nccl_version")


def gather(runs):
    """{collective: {bytes: [time_us per run]}} and the set of NCCL versions."""
    out, versions = {}, set()
    for run, version in runs:
        versions.add(version)
        for coll, sizes in run.items():
            for size, us in sizes.items():
                out.setdefault(coll, {}).setdefault(size, []).append(us)
    return out, versions


def interval(a, b, rng):
    """90% bootstrap interval of mean(b) / mean(a)."""
    r = sorted(statistics.fmean(rng.choices(b, k=len(b))) /
               statistics.fmean(rng.choices(a, k=len(a))) for _ in range(BOOT))
    return r[int(0.05 * BOOT)], r[int(0.95 * BOOT) - 1]


def main(argv):
    goal = "--goal" in argv
    argv = [a for a in argv if a != "--goal"]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    k = argv.index("--")
    if not argv[:k] or not argv[k + 1:]:
        refuse("needs nccl-tests outputs before -- and p2pctl JSON after it")
    nt, ntv = gather(parse_nccl_tests(p) for p in argv[:k])
    us, usv = gather(parse_p2pctl(p) for p in argv[k + 1:])
    if None not in ntv | usv and ntv != usv:
        refuse("different NCCL versions: nccl-tests %s, p2pctl %s" % (sorted(ntv), sorted(usv)))
    if None in ntv | usv:
        print("(an NCCL version was not reported: not checked that both used one)\n")
    # p2pctl runs from before its in-place rows: compare out of place only
    for c in [c for c in nt if c.endswith(" in place") and c not in us]:
        del nt[c]
        print("(%s: no p2pctl rows, not compared)\n" % c)
    if set(nt) != set(us):
        refuse("collectives differ: nccl-tests %s, p2pctl %s" % (sorted(nt), sorted(us)))
    rng = random.Random(1)
    tally = {"met": 0, "missed": 0, "not decided": 0}
    for coll in sorted(nt):
        zero = nt[coll].pop(0, None) is not None
        skipped = sorted(x for x in set(us[coll]) - set(nt[coll]) if zero and x < min(nt[coll]))
        for x in skipped:
            del us[coll][x]
        if set(nt[coll]) != set(us[coll]):
            refuse("%s: sizes differ (only nccl-tests: %s; only p2pctl: %s)" %
                   (coll, sorted(set(nt[coll]) - set(us[coll])), sorted(set(us[coll]) - set(nt[coll]))))
        sizes = sorted(nt[coll])
        print("### %s: nccl-tests %d processes, p2pctl %d\n" %
              (coll, min(len(v) for v in nt[coll].values()), min(len(v) for v in us[coll].values())))
        print("| size (B) | nccl-tests us, median (range) | p2pctl us, median (range) "
              "| ratio of means (90% interval) | goal |")
        print("|---|---|---|---|---|")
        for s in sizes:
            a, b = nt[coll][s], us[coll][s]
            lo, hi = interval(a, b, rng)
            t = statistics.fmean(b) / statistics.fmean(a)
            if s >= BIG:   # busbw ratio: the inverse of the time ratio
                ratio = "busbw %.3fx (%.3f-%.3f)" % (1 / t, 1 / hi, 1 / lo)
                v = "met" if 1 / hi >= GOAL_BUSBW else "missed" if 1 / lo < GOAL_BUSBW else "not decided"
            else:
                ratio = "time %.2fx (%.2f-%.2f)" % (t, lo, hi)
                v = "met" if hi <= GOAL_TIME else "missed" if lo > GOAL_TIME else "not decided"
            if min(len(a), len(b)) < MIN_RUNS:
                v = "not decided"
            tally[v] += 1
            print("| %d | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %s | %s |" %
                  (s, statistics.median(a), min(a), max(a), statistics.median(b), min(b), max(b),
                   ratio, "**missed**" if v == "missed" else v))
        if skipped:
            print("\n(not compared: %s B, which nccl-tests prints as size 0)" %
                  ", ".join(str(x) for x in skipped))
        print()
    print("%d size(s) met the goal, %d missed, %d not decided" %
          (tally["met"], tally["missed"], tally["not decided"]))
    return 1 if goal and tally["missed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
