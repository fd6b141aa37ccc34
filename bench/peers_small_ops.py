#!/usr/bin/env python3
"""Same-run peers for rocke's small-op kernels on a CUDA GPU: device copy
bandwidth, torch, and simple Triton kernels (softmax, rmsnorm, layernorm).
Prints one JSON object per line: {"op", "shape", "impl", "ms", "gbps", "dtype"}.
PEERS_DTYPES (default "bf16"; e.g. "bf16 f32") picks the dtypes of the row ops.
Bytes counted: every input read once plus every output written once."""
import json
import os
import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def _softmax_k(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, 0)
    e = tl.exp(x)
    tl.store(Y + row * N + cols, (e / tl.sum(e, 0)).to(Y.dtype.element_ty), mask=m)


@triton.jit
def _rmsnorm_k(X, G, Y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    r = tl.rsqrt(tl.sum(x * x, 0) / N + eps)
    g = tl.load(G + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (x * r * g).to(Y.dtype.element_ty), mask=m)


@triton.jit
def _layernorm_k(X, G, B, Y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(x, 0) / N
    d = tl.where(m, x - mean, 0.0)
    r = tl.rsqrt(tl.sum(d * d, 0) / N + eps)
    g = tl.load(G + cols, mask=m, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (d * r * g + b).to(Y.dtype.element_ty), mask=m)


def _warps(block):
    return 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4


def triton_softmax(x, y):
    M, N = x.shape
    B = triton.next_power_of_2(N)
    _softmax_k[(M,)](x, y, N, BLOCK=B, num_warps=_warps(B))


def triton_rmsnorm(x, g, y):
    M, N = x.shape
    B = triton.next_power_of_2(N)
    _rmsnorm_k[(M,)](x, g, y, N, 1e-6, BLOCK=B, num_warps=_warps(B))


def triton_layernorm(x, g, b, y):
    M, N = x.shape
    B = triton.next_power_of_2(N)
    _layernorm_k[(M,)](x, g, b, y, N, 1e-5, BLOCK=B, num_warps=_warps(B))


def bench(fn):
    return do_bench(fn, warmup=25, rep=100, return_mode="median")


# The fused ops at the shapes scripts/device-prepare.sh builds them (FUSED).
FUSED_SHAPES = {
    "add_rmsnorm_quant": [(32768, 4096), (4096, 8192), (4096, 5120)],
    "rope": [(4096, 32, 8, 128, 64, 8192)],
    "topk_softmax": [(16384, 128, 8), (16384, 64, 2), (4096, 256, 8)],
    "permute": [(16, 2048, 2048), (64, 1000, 257)],
}


def fused_cases(dt):
    """(op, shape, bytes, {impl: fn}) for each fused op, bytes as rocke's cost."""
    e = torch.empty((), dtype=dt).element_size()
    for M, N in FUSED_SHAPES["add_rmsnorm_quant"]:
        x = torch.randn(M, N, device="cuda", dtype=dt)
        r = torch.randn(M, N, device="cuda", dtype=dt)
        g = torch.randn(N, device="cuda", dtype=dt)

        def arq(x=x, r=r, g=g, N=N):
            r.add_(x)
            y = torch.nn.functional.rms_norm(r.float(), (N,), g.float(), 1e-6)
            scale = y.abs().amax(dim=-1, keepdim=True) / 448.0
            return (y / scale).to(torch.float8_e4m3fn), scale
        yield "add_rmsnorm_quant", (M, N), M * N * (3 * e + 1) + N * e + 4 * M, {"torch": arq}
    for T, HQ, HK, D, RH, P in FUSED_SHAPES["rope"]:
        q = torch.randn(T, HQ, D, device="cuda", dtype=dt)
        k = torch.randn(T, HK, D, device="cuda", dtype=dt)
        pos = torch.randint(0, P, (T,), device="cuda")
        cos = torch.randn(P, RH, device="cuda", dtype=torch.float32)
        sin = torch.randn(P, RH, device="cuda", dtype=torch.float32)

        def rope(q=q, k=k, pos=pos, cos=cos, sin=sin, RH=RH):
            c, s = cos[pos].unsqueeze(1), sin[pos].unsqueeze(1)
            for t in (q, k):
                a, b = t[..., :RH].float(), t[..., RH:2 * RH].float()
                t[..., :2 * RH] = torch.cat((a * c - b * s, b * c + a * s), dim=-1).to(t.dtype)
        nbytes = T * (HQ + HK) * 2 * RH * 2 * e + T * 4 + T * 2 * RH * 4
        yield "rope", (T, HQ, HK, D, RH, P), nbytes, {"torch": rope}
    for T, E, K in FUSED_SHAPES["topk_softmax"]:
        x = torch.randn(T, E, device="cuda", dtype=dt)

        def topk(x=x, K=K):
            w, ids = torch.topk(torch.softmax(x.float(), dim=-1), K, dim=-1)
            return w / w.sum(dim=-1, keepdim=True), ids.to(torch.int32)
        yield "topk_softmax", (T, E, K), T * E * e + T * K * 8, {"torch": topk}
    for B, M, N in FUSED_SHAPES["permute"]:
        x = torch.randn(B, M, N, device="cuda", dtype=dt)
        y = torch.empty(B, N, M, device="cuda", dtype=dt)
        yield "permute", (B, M, N), 2 * B * M * N * e, {"torch": lambda x=x, y=y: y.copy_(x.transpose(1, 2))}


def main():
    shapes = [(32768, 4096), (4096, 32768), (512, 4096),
              # issue 15's grid: odd rows, vocabulary sizes, few and many rows
              # (scripts/device-prepare.sh builds rocke's kernels for the same)
              (65536, 1000), (16384, 2047), (8192, 5000), (1024, 50257), (1000, 32000),
              (1000, 151936), (1, 262144), (4, 262144), (65536, 127), (1, 4097)]
    if len(sys.argv) > 1:
        shapes = [tuple(int(v) for v in s.split(",")) for s in sys.argv[1:]]
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    torch.manual_seed(0)
    for name in os.environ.get("PEERS_DTYPES", "bf16").split():
        dt = dtypes[name]
        for (M, N) in shapes:
            x = torch.randn(M, N, device="cuda", dtype=dt)
            r = torch.randn(M, N, device="cuda", dtype=dt)
            y = torch.empty_like(x)
            g = torch.randn(N, device="cuda", dtype=dt)
            b = torch.randn(N, device="cuda", dtype=dt)
            e = x.element_size()
            mn = M * N
            cases = {
                "copy": (2 * mn * e, {"torch": lambda: y.copy_(x)}),
                "add": (3 * mn * e, {"torch": lambda: torch.add(x, r, out=y)}),
                "sum": (mn * e + M * e, {"torch": lambda: torch.sum(x, dim=-1)}),
                "softmax": (2 * mn * e, {"torch": lambda: torch.softmax(x, dim=-1),
                                         "triton": lambda: triton_softmax(x, y)}),
                "rmsnorm": (2 * mn * e + N * e, {
                    "torch": lambda: torch.nn.functional.rms_norm(x, (N,), g, 1e-6),
                    "triton": lambda: triton_rmsnorm(x, g, y)}),
                "layernorm": (2 * mn * e + 2 * N * e, {
                    "torch": lambda: torch.nn.functional.layer_norm(x, (N,), g, b, 1e-5),
                    "triton": lambda: triton_layernorm(x, g, b, y)}),
                "transpose": (2 * mn * e, {"torch": lambda: y.view(N, M).copy_(x.t())}),
            }
            for op, (nbytes, impls) in cases.items():
                for impl, fn in impls.items():
                    if impl == "triton" and N > 65536:
                        continue
                    ms = bench(fn)
                    print(json.dumps({"op": op, "shape": f"{M}x{N}", "impl": impl, "ms": ms,
                                      "gbps": nbytes / ms / 1e6, "dtype": name}), flush=True)
    dt = torch.bfloat16
    for op, shape, nbytes, impls in fused_cases(dt):
        for impl, fn in impls.items():
            ms = bench(fn)
            print(json.dumps({"op": op, "shape": "x".join(str(v) for v in shape), "impl": impl, "ms": ms,
                              "gbps": nbytes / ms / 1e6}), flush=True)


if __name__ == "__main__":
    main()
