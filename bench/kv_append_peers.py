#!/usr/bin/env python3
"""Same-run peers for rocke's kv_append on a CUDA GPU: the card's copy
bandwidth (a 2 GiB device-to-device clone) and torch: index_copy_ of K and V
[T, Hkv, D] into caches viewed as [PAGES * PAGE_SIZE, Hkv, D] at a random
permutation of slots; with rope the NeoX / GPT-J rotation of Q and K in eager
torch first; fp8 rows divide by a per-head scale and cast to float8_e4m3fn.
Every token has a slot here, so bytes are those of all T tokens (rocke's
Perf line counts only the tokens it writes). Prints one JSON object per line:
{"name", "impl", "ms", "gbps"}. Usage: kv_append_peers.py SHAPES_FILE."""
import json
import sys

import torch
from triton.testing import do_bench

from attention_decode_peers import copy_bandwidth   # the same 2 GiB clone


def rotate(x, cos, sin, style):
    """x [T, H, D], cos/sin [T, D/2]: the rotation over the whole head."""
    c, s = cos[:, None, :], sin[:, None, :]
    if style == "neox":
        a, b = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((a * c - b * s, b * c + a * s), dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * c - b * s, b * c + a * s), dim=-1).flatten(-2)


def peer(name, T, Hq, Hkv, D, pages, psize, rope, kv):
    dt = torch.bfloat16
    slots = pages * psize
    cdt = torch.float8_e4m3fn if kv == "fp8" else dt
    k = torch.empty(T, Hkv, D, device="cuda", dtype=dt).uniform_(-1, 1)
    v = torch.empty_like(k).uniform_(-1, 1)
    q = torch.empty(T, Hq, D, device="cuda", dtype=dt).uniform_(-1, 1)
    kc = torch.zeros(slots, Hkv, D, device="cuda", dtype=cdt)
    vc = torch.zeros_like(kc)
    idx = torch.randperm(slots, device="cuda")[:T]
    pos = torch.randint(0, slots, (T,), device="cuda")
    ang = torch.rand(slots, D // 2, device="cuda") * 6.28
    cos_c, sin_c = ang.cos(), ang.sin()
    ks = torch.rand(Hkv, 1, device="cuda") * 0.05 + 0.05
    vs = torch.rand(Hkv, 1, device="cuda") * 0.05 + 0.05

    def step():
        kk = k
        if rope != "none":
            cos, sin = cos_c[pos], sin_c[pos]
            q.copy_(rotate(q.float(), cos, sin, rope).to(dt))
            kk = rotate(k.float(), cos, sin, rope)
        if kv == "fp8":
            kc.index_copy_(0, idx, (kk.float() / ks).to(cdt))
            vc.index_copy_(0, idx, (v.float() / vs).to(cdt))
        else:
            kc.index_copy_(0, idx, kk.to(dt))
            vc.index_copy_(0, idx, v)

    step()
    want = (k.float() / ks).to(cdt).float() if kv == "fp8" and rope == "none" else None
    if want is not None:
        assert torch.equal(kc[idx].float(), want), name
    elif rope == "none":
        assert torch.equal(kc[idx], k), name
    ms = do_bench(step, warmup=25, rep=200)
    eb, cb = 2, (1 if kv == "fp8" else 2)
    nbytes = T * Hkv * D * 2 * (eb + cb) + T * 8
    if rope != "none":
        nbytes += T * Hq * D * 2 * eb + T * 4 + T * D * 4
    return {"name": name, "impl": "torch.index_copy_" + ("+rope" if rope != "none" else ""), "ms": ms,
            "gbps": nbytes / ms / 1e6}


def main():
    print(json.dumps(copy_bandwidth()), flush=True)
    for line in open(sys.argv[1]):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        name, (T, Hq, Hkv, D, pages, psize), rope, kv = f[0], map(int, f[1:7]), f[7], f[8]
        print(json.dumps(peer(name, T, Hq, Hkv, D, pages, psize, rope, kv)), flush=True)


if __name__ == "__main__":
    main()
