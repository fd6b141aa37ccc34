#!/usr/bin/env python3
"""Same-run peer for rocke's attention on a CUDA GPU: torch's
scaled_dot_product_attention (bf16, [B, H, S, D]) at the shapes of
bench/attention_shapes.txt, checked against an fp32 reference on one batch
before it is timed. Prints one JSON object per line: {"name", "shape":
[B, Hq, Hkv, Sq, Skv, D], "mask", "impl", "ms", "tflops", "rel_err"}; TFLOP/s
count 4 * B * Hq * D per visible (query, key) pair, as rocke's Perf line does.
Usage: peers_attention.py SHAPES_FILE."""
import json
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench


def visible_pairs(Sq, Skv, mask):
    if mask == "none":
        return Sq * Skv
    # causal, bottom-right aligned: query i sees keys 0 .. i + Skv - Sq
    return sum(max(0, min(Skv, i + Skv - Sq + 1)) for i in range(Sq))


def main():
    done = {}   # rows that differ only in rocke's knobs (column 9) share one measurement
    for line in open(sys.argv[1]):
        if not line.strip() or line.startswith("#"):
            continue
        name, B, Hq, Hkv, Sq, Skv, D, mask = line.split()[:8]
        B, Hq, Hkv, Sq, Skv, D = map(int, (B, Hq, Hkv, Sq, Skv, D))
        key = (B, Hq, Hkv, Sq, Skv, D, mask)
        if key in done:
            print(json.dumps(dict(done[key], name=name)), flush=True)
            continue
        q = torch.randn(B, Hq, Sq, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(B, Hkv, Skv, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(B, Hkv, Skv, D, device="cuda", dtype=torch.bfloat16)
        causal = mask == "causal"
        gqa = Hq != Hkv

        def run():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

        got = run()[:1].float()
        kr = k[:1].float().repeat_interleave(Hq // Hkv, dim=1)
        vr = v[:1].float().repeat_interleave(Hq // Hkv, dim=1)
        ref = F.scaled_dot_product_attention(q[:1].float(), kr, vr, is_causal=causal)
        err = ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()
        ms = do_bench(run, warmup=25, rep=200)
        flops = 4.0 * B * Hq * visible_pairs(Sq, Skv, mask) * D
        done[key] = {"name": name, "shape": [B, Hq, Hkv, Sq, Skv, D], "mask": mask, "impl": "torch.sdpa",
                     "ms": ms, "tflops": flops / ms / 1e9, "rel_err": err}
        print(json.dumps(done[key]), flush=True)


if __name__ == "__main__":
    main()
