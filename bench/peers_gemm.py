#!/usr/bin/env python3
"""Same-run peer for rocke's GEMM on a CUDA GPU: torch.matmul (cuBLAS) at the
given shapes, checked against an fp32 reference before it is timed. Prints
one JSON object per line: {"shape": [M, N, K], "layout", "dtype", "impl",
"ms", "tflops"}. Usage: peers_gemm.py SHAPES_FILE (lines "M N K layout dtype").
dtype e4m3 times torch._scaled_mm instead (both operands e4m3, A row-major, B
column-major, per-tensor scales 1, bf16 out; layout rc)."""
import json
import sys

import torch
from triton.testing import do_bench


def operands(M, N, K, layout, dt):
    a = torch.empty(M, K, device="cuda", dtype=dt).uniform_(-1, 1) if layout[0] == "r" else \
        torch.empty(K, M, device="cuda", dtype=dt).uniform_(-1, 1).t()
    b = torch.empty(K, N, device="cuda", dtype=dt).uniform_(-1, 1) if layout[1] == "r" else \
        torch.empty(N, K, device="cuda", dtype=dt).uniform_(-1, 1).t()
    return a, b


def scaled_mm(M, N, K, dts):
    fp8 = {"e4m3": torch.float8_e4m3fn}[dts]
    a = torch.empty(M, K, device="cuda").uniform_(-1, 1).to(fp8)
    b = torch.empty(N, K, device="cuda").uniform_(-1, 1).to(fp8).t()
    one = torch.ones((), device="cuda")
    run = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    ref = a.float() @ b.float()
    err = ((run().float() - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()
    ms = do_bench(run, warmup=25, rep=200)
    return {"shape": [M, N, K], "layout": "rc", "dtype": dts, "impl": "torch._scaled_mm", "ms": ms,
            "tflops": 2.0 * M * N * K / ms / 1e9, "rel_err": err}


def main():
    for line in open(sys.argv[1]):
        if not line.strip() or line.startswith("#"):
            continue
        M, N, K, layout, dts = line.split()
        M, N, K = int(M), int(N), int(K)
        if dts == "e4m3":
            print(json.dumps(scaled_mm(M, N, K, dts)), flush=True)
            continue
        dt = {"f16": torch.float16, "bf16": torch.bfloat16}[dts]
        a, b = operands(M, N, K, layout, dt)
        ref = a.float() @ b.float()
        got = torch.matmul(a, b).float()
        err = ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()
        # big shapes run at the card's power limit: the same window as rocke's timing
        ms = do_bench(lambda: torch.matmul(a, b), warmup=25, rep=200)
        print(json.dumps({"shape": [M, N, K], "layout": layout, "dtype": dts, "impl": "torch.matmul",
                          "ms": ms, "tflops": 2.0 * M * N * K / ms / 1e9, "rel_err": err}), flush=True)


if __name__ == "__main__":
    main()
