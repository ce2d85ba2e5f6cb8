#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/nccl_compare.py against the recorded runs of bench/results/nccl
(TAP, run by tests/unit/run): the goal verdict follows the numbers, bad input
is refused."""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.path.join(HERE, "results", "nccl")
NT = sorted(glob.glob(os.path.join(RES, "nt-*.txt")))
OURS = sorted(glob.glob(os.path.join(RES, "p2pctl-*.json")))


def compare(nt, ours):
    p = subprocess.run([sys.executable, os.path.join(HERE, "nccl_compare.py"), "--goal"] + nt +
                       ["--"] + ours, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def slowed(tmp, coll, size, factor):
    """The recorded p2pctl runs with one size's time multiplied by factor."""
    out = []
    for i, path in enumerate(OURS):
        with open(path) as f:
            j = json.load(f)
        for r in j["results"]:
            if r["collective"] == coll and r["bytes"] == size:
                r["time_us"] *= factor
        dst = os.path.join(tmp, "p%d.json" % i)
        with open(dst, "w") as f:
            json.dump(j, f)
        out.append(dst)
    return out


def row(text, coll, size):
    sect = text.split("### " + coll)[1]
    return next(line for line in sect.splitlines() if line.startswith("| %d |" % size))


def main():
    tests = []

    def case(name):
        def add(fn):
            tests.append((name, fn))
            return fn
        return add

    @case("recorded runs meet the goal at every size, both collectives")
    def _():
        rc, out = compare(NT, OURS)
        assert rc == 0, out
        assert "0 size(s) missed the goal" in out, out
        assert "### all_reduce: nccl-tests 12 processes, p2pctl 12" in out, out
        assert row(out, "all_reduce", 8).endswith("| met |")
        assert row(out, "all_gather", 268435456).endswith("| met |")

    @case("a small size 1.2x slower misses the time goal")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = compare(NT, slowed(tmp, "all_reduce", 4096, 1.2))
        assert rc == 1, out
        assert "time 1.2" in row(out, "all_reduce", 4096) and "**missed**" in row(out, "all_reduce", 4096)
        assert "1 size(s) missed the goal" in out, out

    @case("a large size 1.1x slower misses the busbw goal")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = compare(NT, slowed(tmp, "all_gather", 1 << 20, 1.1))
        assert rc == 1, out
        assert "busbw 0.9" in row(out, "all_gather", 1 << 20), out
        assert "**missed**" in row(out, "all_gather", 1 << 20), out

    @case("a p2pctl run that failed its data check is refused")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(OURS[0]) as f:
                j = json.load(f)
            j["result"] = "FAIL"
            with open(bad, "w") as f:
                json.dump(j, f)
            rc, out = compare(NT, OURS[1:] + [bad])
        assert rc != 0 and "did not pass" in out, out

    @case("a file without nccl-tests rows is refused")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            empty = os.path.join(tmp, "nt.txt")
            with open(empty, "w") as f:
                f.write("# nccl-tests version 2.19.6\n# Out of bounds values : 0 OK\n")
            rc, out = compare([empty], OURS)
        assert rc != 0 and "no nccl-tests rows" in out, out

    print("1..%d" % len(tests))
    failed = 0
    for i, (name, fn) in enumerate(tests, 1):
        try:
            fn()
            print("ok %d - %s" % (i, name))
        except AssertionError as e:
            failed += 1
            print("not ok %d - %s\n# %s" % (i, name, str(e).replace("\n", "\n# ")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
