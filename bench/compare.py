#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Markdown comparison of `p2pctl bench --json` runs with parsed cuda-samples
runs (bench/parse_sample.py): per cell, the median over runs of each tool
(ours: median over runs of each run's median), the range over runs, ratio.
usage: compare.py sample.json ours1.json [ours2.json ...]"""
import json
import statistics
import sys

ORDER = [
    ("uni_p2p_off", "Unidirectional P2P=Disabled bandwidth", "GB/s"),
    ("uni_p2p_on", "Unidirectional P2P=Enabled bandwidth", "GB/s"),
    ("bi_p2p_off", "Bidirectional P2P=Disabled bandwidth", "GB/s"),
    ("bi_p2p_on", "Bidirectional P2P=Enabled bandwidth", "GB/s"),
    ("lat_gpu_p2p_off", "P2P=Disabled latency, GPU", "us"),
    ("lat_gpu_p2p_on", "P2P=Enabled latency, GPU", "us"),
    ("lat_cpu_p2p_off", "P2P=Disabled latency, CPU", "us"),
    ("lat_cpu_p2p_on", "P2P=Enabled latency, CPU", "us"),
]


def main():
    sample = json.load(open(sys.argv[1]))["runs"]
    ours = [json.load(open(f)) for f in sys.argv[2:]]
    n = len(ours[0]["devices"])
    checks = []
    for key, title, unit in ORDER:
        print("### %s (%s)\n" % (title, unit))
        print("| cell | sample (median of %d) | sample range | p2pctl (median of %d) | p2pctl range | ratio | p2pctl method |"
              % (len(sample), len(ours)))
        print("|---|---|---|---|---|---|---|")
        for i in range(n):
            for j in range(n):
                s = [r["matrices"][key][i][j] for r in sample]
                o = [r["matrices"][key]["median"][i][j] for r in ours]
                meth = sorted({r["matrices"][key]["method"][i][j] for r in ours})
                sm, om = statistics.median(s), statistics.median(o)
                ratio = om / sm
                print("| %d->%d | %.2f | %.2f..%.2f | %.2f | %.2f..%.2f | %.3f | %s |"
                      % (i, j, sm, min(s), max(s), om, min(o), max(o), ratio, ",".join(meth)))
                if unit == "GB/s":
                    checks.append(("bandwidth %s %d->%d >= 0.98x" % (key, i, j), ratio >= 0.98,
                                   "%.3fx" % ratio))
                if key == "lat_gpu_p2p_on" and i != j:
                    checks.append(("P2P latency %d->%d <= sample + 0.1 us" % (i, j), om <= sm + 0.1,
                                   "%+.3f us" % (om - sm)))
        print()
    sw = [r["wall_s"] for r in sample]
    ow = [r["wall_s"] for r in ours]
    print("In-process wall (p2pctl's own wall_s; the sample has none): %s s\n"
          % ", ".join("%.3f" % w for w in ow))
    print("### Targets\n")
    print("| target | met | value |")
    print("|---|---|---|")
    for name, ok, val in checks:
        print("| %s | %s | %s |" % (name, "yes" if ok else "**no**", val))
    print("\n(sample process wall times: %s s)" % ", ".join("%.3f" % w for w in sw))


if __name__ == "__main__":
    main()
