#!/usr/bin/env python3
"""Table of rocke's small-op kernels next to same-run peers: reads the peers'
JSON lines and rocke run's output (== op shape markers, PerfJSON lines) and
prints a markdown table with GB/s and the ratio to the run's copy bandwidth."""
import json
import re
import sys


def main(peers_path, rocke_path):
    peers = {}
    for line in open(peers_path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            peers[(r["op"], r["shape"], r["impl"])] = r["gbps"]
    rocke, verify, cur = {}, {}, None
    for line in open(rocke_path):
        m = re.match(r"== (\S+) (\d+(?:,\d+)+)", line)
        if m:
            cur = (m.group(1), m.group(2).replace(",", "x"))
        elif line.startswith("PerfJSON:") and cur:
            rocke[cur] = json.loads(line[len("PerfJSON:"):])
        elif line.startswith("verify") and cur:
            verify[cur] = line.strip()
        elif line.startswith("FAILED") and cur:
            verify[cur] = verify.get(cur, "") + " FAILED"
    print("| op | shape | rocke GB/s | torch GB/s | triton GB/s | copy GB/s | rocke/copy | rocke ms | verify |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (op, shape), r in sorted(rocke.items()):
        copy = peers.get(("copy", shape, "torch"))
        base = op.split("-")[0]          # variants: softmax-looped -> softmax
        t = peers.get((base, shape, "torch"))
        tr = peers.get((base, shape, "triton"))
        fmt = lambda v: f"{v:.0f}" if v else "-"
        ratio = f"{100 * r['gbps'] / copy:.1f}%" if copy else "-"
        print(f"| {op} | {shape} | {r['gbps']:.0f} | {fmt(t)} | {fmt(tr)} | {fmt(copy)} | {ratio} | "
              f"{r['ms']:.4f} | {verify.get((op, shape), '-')} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
