#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Parse cuda-samples p2pBandwidthLatencyTest text output (one or more runs,
each optionally followed by a bare wall-time line, as bench/results/sample.txt
holds) into JSON shaped like `p2pctl bench --json` matrices."""
import json
import re
import sys

TITLES = {
    "Unidirectional P2P=Disabled Bandwidth Matrix": "uni_p2p_off",
    "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix": "uni_p2p_on",
    "Bidirectional P2P=Disabled Bandwidth Matrix": "bi_p2p_off",
    "Bidirectional P2P=Enabled Bandwidth Matrix": "bi_p2p_on",
    "P2P=Disabled Latency Matrix": "lat_p2p_off",
    "P2P=Enabled Latency (P2P Writes) Matrix": "lat_p2p_on",
}


def parse_run(lines):
    out, key, sub, rows = {}, None, None, []

    def flush():
        if key and rows:
            name = key if not sub else key.replace("lat_", "lat_%s_" % sub)
            out[name] = rows[:]

    for line in lines:
        t = line.strip()
        if not t:
            continue
        m = next((v for k, v in TITLES.items() if t.startswith(k)), None)
        if m:
            flush()
            key, sub, rows = m, None, []
            continue
        if key and re.match(r"^(D\\D|GPU|CPU)\s", t):
            flush()
            rows = []
            sub = {"GPU": "gpu", "CPU": "cpu"}.get(t.split()[0])
            continue
        if key and re.match(r"^\d+\s+[\d.]+", t):
            rows.append([float(x) for x in t.split()[1:]])
            continue
        if key and rows:
            flush()
            key, rows = None, []
    flush()
    return out


def main():
    text = open(sys.argv[1]).read()
    runs = []
    for chunk in re.split(r"^== sample \d+\n", text, flags=re.M):
        if "P2P Connectivity Matrix" not in chunk:
            continue
        lines = chunk.splitlines()
        wall = None
        for line in reversed(lines):
            if re.match(r"^\d+\.\d+$", line.strip()):
                wall = float(line)
                break
        runs.append({"wall_s": wall, "matrices": parse_run(lines)})
    json.dump({"tool": "cuda-samples p2pBandwidthLatencyTest", "runs": runs}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
