#!/usr/bin/env python3
"""Same-run peer for rocke's attention on a CUDA GPU: torch's
scaled_dot_product_attention (bf16, or dtype=f16 in column 9) at the
shapes of a shapes file (bench/attention_shapes.txt), checked against an fp32 reference on one batch
(varlen: one sequence) before it is timed. Layout bhsd: [B, H, S, D] tensors;
layout=bshd rows: the q.transpose(1, 2) views of [B, S, H, D] tensors, as
rocke reads them; layout=varlen rows (lengths=L1/L2/..., self-attention):
packed [total, H, D] rows through the flash varlen kernel
(aten._flash_attention_forward, GQA native), else nested jagged tensors
(K, V repeated to Hq), else one SDPA call per sequence. Prints one JSON
object per line: {"name", "shape": [B, Hq, Hkv, Sq, Skv, D], "mask",
"layout", "impl", "ms", "tflops", "rel_err"}; TFLOP/s count 4 * Hq * D per
visible (query, key) pair of every sequence, as rocke's Perf line does.
Usage: peers_attention.py SHAPES_FILE."""
import itertools
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


def varlen_runner(lens, Hq, Hkv, D, causal):
    """(impl, run, check): the fastest varlen form this torch offers over packed rows of `lens`."""
    total, Smax = sum(lens), max(lens)
    q = torch.randn(total, Hq, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(total, Hkv, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(total, Hkv, D, device="cuda", dtype=torch.bfloat16)
    cu = torch.tensor([0] + list(itertools.accumulate(lens)), device="cuda", dtype=torch.int32)

    def check(out):   # the longest sequence against an fp32 reference
        b = lens.index(Smax)
        a, e = int(cu[b]), int(cu[b + 1])
        g = Hq // Hkv
        ref = F.scaled_dot_product_attention(q[a:e].float().transpose(0, 1),
                                             k[a:e].float().repeat_interleave(g, 1).transpose(0, 1),
                                             v[a:e].float().repeat_interleave(g, 1).transpose(0, 1),
                                             is_causal=causal).transpose(0, 1)
        got = out[a:e].float()
        return ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()

    try:
        def flash():
            return torch.ops.aten._flash_attention_forward(q, k, v, cu, cu, Smax, Smax, 0.0, causal, False)[0]
        flash()
        return "torch.flash_varlen", flash, check
    except Exception:   # the op's signature moves between torch releases
        pass
    g = Hq // Hkv
    try:
        kr, vr = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
        nq, nk, nv = (torch.nested.nested_tensor_from_jagged(t, cu.long()).transpose(1, 2) for t in (q, kr, vr))

        def nested():
            return F.scaled_dot_product_attention(nq, nk, nv, is_causal=causal).transpose(1, 2).values()
        nested()
        return "torch.sdpa_nested", nested, check
    except Exception:
        pass
    views = [(q[a:e].transpose(0, 1)[None], k[a:e].transpose(0, 1)[None], v[a:e].transpose(0, 1)[None])
             for a, e in zip(cu[:-1].tolist(), cu[1:].tolist())]

    def per_seq():
        outs = [F.scaled_dot_product_attention(a, b, c, is_causal=causal, enable_gqa=Hq != Hkv) for a, b, c in views]
        return torch.cat([o[0].transpose(0, 1) for o in outs])
    return "torch.sdpa_per_sequence", per_seq, check


def main():
    done = {}   # rows that differ only in rocke's knobs (column 9) share one measurement
    for line in open(sys.argv[1]):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split()
        name, B, Hq, Hkv, Sq, Skv, D, mask = cols[:8]
        knobs = dict(kv.split("=", 1) for kv in cols[8].split(",")) if len(cols) > 8 else {}
        layout = knobs.get("layout", "bhsd")
        dt = {"bf16": torch.bfloat16, "f16": torch.float16}[knobs.get("dtype", "bf16")]
        B, Hq, Hkv, Sq, Skv, D = map(int, (B, Hq, Hkv, Sq, Skv, D))
        key = (B, Hq, Hkv, Sq, Skv, D, mask, layout, knobs.get("lengths"), dt)
        if key in done:
            print(json.dumps(dict(done[key], name=name)), flush=True)
            continue
        causal = mask == "causal"
        if layout == "varlen":
            lens = [int(x) for x in knobs["lengths"].split("/")]
            impl, run, check = varlen_runner(lens, Hq, Hkv, D, causal)
            err = check(run())
            ms = do_bench(run, warmup=25, rep=200)
            flops = 4.0 * Hq * D * sum(visible_pairs(n, n, mask) for n in lens)
            done[key] = {"name": name, "shape": [B, Hq, Hkv, Sq, Skv, D], "mask": mask, "layout": layout,
                         "impl": impl, "ms": ms, "tflops": flops / ms / 1e9, "rel_err": err}
            print(json.dumps(done[key]), flush=True)
            continue
        if layout == "bshd":   # the strided views rocke reads: [B, S, H, D] memory
            q = torch.randn(B, Sq, Hq, D, device="cuda", dtype=dt).transpose(1, 2)
            k = torch.randn(B, Skv, Hkv, D, device="cuda", dtype=dt).transpose(1, 2)
            v = torch.randn(B, Skv, Hkv, D, device="cuda", dtype=dt).transpose(1, 2)
        else:
            q = torch.randn(B, Hq, Sq, D, device="cuda", dtype=dt)
            k = torch.randn(B, Hkv, Skv, D, device="cuda", dtype=dt)
            v = torch.randn(B, Hkv, Skv, D, device="cuda", dtype=dt)
        gqa = Hq != Hkv
        # causal with Sq != Skv: bottom-right aligned, as rocke's (is_causal is top-left)
        lower_right = causal and Sq != Skv
        if lower_right:
            from torch.nn.attention.bias import causal_lower_right
            bias = causal_lower_right(Sq, Skv)

        def run():
            if lower_right:
                return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, enable_gqa=gqa)
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

        got = run()[:1].float()
        kr = k[:1].float().repeat_interleave(Hq // Hkv, dim=1)
        vr = v[:1].float().repeat_interleave(Hq // Hkv, dim=1)
        if lower_right:
            ref = F.scaled_dot_product_attention(q[:1].float(), kr, vr, attn_mask=bias)
        else:
            ref = F.scaled_dot_product_attention(q[:1].float(), kr, vr, is_causal=causal)
        err = ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()
        ms = do_bench(run, warmup=25, rep=200)
        flops = 4.0 * B * Hq * visible_pairs(Sq, Skv, mask) * D
        done[key] = {"name": name, "shape": [B, Hq, Hkv, Sq, Skv, D], "mask": mask, "layout": layout, "impl": "torch.sdpa",
                     "ms": ms, "tflops": flops / ms / 1e9, "rel_err": err}
        print(json.dumps(done[key]), flush=True)


if __name__ == "__main__":
    main()
