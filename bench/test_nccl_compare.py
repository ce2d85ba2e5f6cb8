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


def edited_json(tmp, edit):
    with open(OURS[0]) as f:
        j = json.load(f)
    edit(j)
    dst = os.path.join(tmp, "edited.json")
    with open(dst, "w") as f:
        json.dump(j, f)
    return dst


def edited_text(tmp, edit):
    with open(NT[0]) as f:
        t = f.read()
    dst = os.path.join(tmp, "edited.txt")
    with open(dst, "w") as f:
        f.write(edit(t))
    return dst


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

    @case("recorded runs: no size missed; all-reduce's smallest not decided at 12 processes")
    def _():
        rc, out = compare(NT, OURS)
        assert rc == 0, out
        assert "40 size(s) met the goal, 0 missed, 10 not decided" in out, out
        assert "### all_reduce: nccl-tests 12 processes, p2pctl 12" in out, out
        assert row(out, "all_reduce", 8).endswith("| not decided |")
        assert row(out, "all_gather", 268435456).endswith("| met |")
        assert "(not compared: 8, 16 B, which nccl-tests prints as size 0)" in out, out

    @case("a small size 1.4x slower misses the time goal")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = compare(NT, slowed(tmp, "all_reduce", 4096, 1.4))
        assert rc == 1, out
        assert "time 1.4" in row(out, "all_reduce", 4096) and "**missed**" in row(out, "all_reduce", 4096)
        assert ", 1 missed," in out, out

    @case("a large size 1.1x slower misses the busbw goal")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = compare(NT, slowed(tmp, "all_gather", 16 << 20, 1.1))
        assert rc == 1, out
        assert "busbw 0.9" in row(out, "all_gather", 16 << 20), out
        assert "**missed**" in row(out, "all_gather", 16 << 20), out

    @case("one process of each decides nothing, however far apart")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = compare(NT[:1] + [p for p in NT if "all_reduce" in p][:1],
                              slowed(tmp, "all_reduce", 4096, 3.0)[:1])
        assert rc == 0, out
        assert row(out, "all_reduce", 4096).endswith("| not decided |"), out
        assert ", 0 missed," in out, out

    @case("a p2pctl run that failed its data check is refused")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = compare(NT, OURS[1:] + [edited_json(tmp, lambda j: j.update(result="FAIL"))])
        assert rc == 2 and "did not pass" in out, out

    @case("programs on different NCCL versions are refused")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = compare(NT, OURS[1:] + [edited_json(tmp, lambda j: j.update(nccl_version=22703))])
        assert rc == 2 and "different NCCL versions" in out, out

    @case("a file without nccl-tests rows is refused")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = compare([edited_text(tmp, lambda t: "# nccl-tests version 2.19.6\n")], OURS)
        assert rc == 2 and "no nccl-tests rows" in out, out

    @case("rows without their collective's header are refused, not compared as nothing")
    def _():
        with tempfile.TemporaryDirectory() as tmp:
            nt = edited_text(tmp, lambda t: t.replace("# Collective test starting", "# starting"))
            rc, out = compare([nt], OURS)
        assert rc == 2 and "rows before" in out, out

    @case("a collective only one program ran is refused")
    def _():
        rc, out = compare([p for p in NT if "all_reduce" in p], OURS)
        assert rc == 2 and "collectives differ" in out, out

    @case("an nccl-tests run with wrong values is refused")
    def _():
        def wrong(t):
            lines = t.splitlines(True)
            i = next(k for k, line in enumerate(lines) if line.split()[:1] == ["1024"])
            f = lines[i].split()
            f[8] = "3"
            lines[i] = " ".join(f) + "\n"
            return "".join(lines)
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = compare(NT[1:] + [edited_text(tmp, wrong)], OURS)
        assert rc == 2 and "3 wrong values at 1024 bytes" in out, out

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
