#!/usr/bin/env python3
"""Same-run peers for rocke's attention decode on a CUDA GPU: the card's copy
bandwidth (a 2 GiB device-to-device clone) and torch SDPA on the gathered
*contiguous* cache [B, Hkv, CTX, D] (GQA through enable_gqa; mixed lengths
through a key-padding mask, so SDPA reads the padded cache). SDPA is checked
against an fp32 reference before it is timed. Prints one JSON object per line:
{"name", "impl", "ms", "gbps" (KV bytes of the actual lengths per second),
"tflops"}. Usage: attention_decode_peers.py SHAPES_FILE LENGTHS_DIR."""
import json
import os
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench


def copy_bandwidth():
    n = 1 << 30   # bf16 elements: 2 GiB
    x = torch.empty(n, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    y = torch.empty_like(x)
    ms = do_bench(lambda: y.copy_(x), warmup=25, rep=200)
    return {"name": "copy", "impl": "torch.copy_", "ms": ms, "gbps": 2 * x.numel() * 2 / ms / 1e6}


def lengths_of(name, kind, B, ctx, ldir):
    if kind == "equal":
        return [ctx] * B
    with open(os.path.join(ldir, name + ".lengths")) as f:
        return [int(v) for v in f.read().split()]


def sdpa(name, B, Hq, Hkv, Sq, ctx, D, lens):
    dt = torch.bfloat16
    q = torch.empty(B, Hq, Sq, D, device="cuda", dtype=dt).uniform_(-1, 1)
    k = torch.empty(B, Hkv, ctx, D, device="cuda", dtype=dt).uniform_(-1, 1)
    v = torch.empty(B, Hkv, ctx, D, device="cuda", dtype=dt).uniform_(-1, 1)
    L = torch.tensor(lens, device="cuda")
    keys = torch.arange(ctx, device="cuda")
    # key j visible to query i of sequence b: j < len_b and j <= len_b - Sq + i (causal, bottom right)
    qi = torch.arange(Sq, device="cuda")
    mask = (keys[None, None, :] < L[:, None, None]) & \
           (keys[None, None, :] <= (L[:, None, None] - Sq + qi[None, :, None]))
    mask = mask[:, None]   # [B, 1, Sq, ctx]
    run = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    g = Hq // Hkv
    ref = F.scaled_dot_product_attention(q.float(), k.float().repeat_interleave(g, 1),
                                         v.float().repeat_interleave(g, 1), attn_mask=mask)
    err = (run().float() - ref).abs().max().item()
    ms = do_bench(run, warmup=25, rep=200)
    total = sum(lens)
    return {"name": name, "impl": "torch.sdpa(contiguous)", "ms": ms,
            "gbps": 2 * total * Hkv * D * 2 / ms / 1e6, "tflops": 4.0 * Hq * Sq * D * total / ms / 1e9,
            "max_abs_err": err}


def main():
    print(json.dumps(copy_bandwidth()), flush=True)
    done = {}   # rows that pin rocke knobs share their shape's SDPA run (page size and knobs do not matter to it)
    for line in open(sys.argv[1]):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        name, (B, Hq, Hkv, Sq, ctx, D, _page), kind = f[0], map(int, f[1:8]), f[8]
        lens = lengths_of(name, kind, B, ctx, sys.argv[2])
        key = (B, Hq, Hkv, Sq, ctx, D, tuple(lens))
        if key in done:
            print(json.dumps(dict(done[key], name=name, same_as=done[key]["name"])), flush=True)
            continue
        try:
            r = sdpa(name, B, Hq, Hkv, Sq, ctx, D, lens)
        except RuntimeError as e:   # out of memory for the padded mask or cache: say so, go on
            r = {"name": name, "impl": "torch.sdpa(contiguous)", "error": str(e)[:200]}
        done[key] = r
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
