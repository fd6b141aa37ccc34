#!/usr/bin/env python3
"""One markdown row per kernel of `rocke analyze --json` (stdin); argv: family target shape."""
import json
import sys

name, target, shape = sys.argv[1:4]
for k in json.load(sys.stdin)["kernels"]:
    o = k["occupancy"]
    cells = [name, target, shape.replace(",", "x"), "`%s`" % k["name"], k["vgpr"], k["agpr"], k["sgpr"],
             k["lds_bytes"], "%s/%s" % (k["vgpr_spill"], k["sgpr_spill"]), o["waves_per_simd"], o["wgs_per_cu"],
             o["limited_by"]]
    print("| " + " | ".join(str(c) for c in cells) + " |")
