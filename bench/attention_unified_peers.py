# Peers of rocke's unified attention on the device (bench/attention_unified_h200.sh runs this):
# for every batch of bench/attention_unified_shapes.txt (lengths from OUT/NAME.lengths, Q:K pairs)
# a paged bf16 cache with a random page permutation, then
#   1. torch SDPA per sequence on the gathered cache (the gather timed with it, and without:
#      SDPA alone over pre-gathered K/V), bottom-right causal (causal_lower_right), GQA;
#   2. FlexAttention (torch.compile'd flex_attention) over the whole physical cache with a paged
#      block mask: query token t of sequence b sees cache slot s iff s holds key j of b and
#      j <= kv_len - q_len + i (built once with create_block_mask, not timed).
# Each result is checked against an fp32 reference on up to 4 sequences. One JSON line per figure:
# {"name", "impl", "ms", "tflops", "gbps"} (useful pairs, KV bytes read once per KV head).
# Run: python3 bench/attention_unified_peers.py bench/attention_unified_shapes.txt OUT
import json, random, sys, warnings

import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore")
dev = "cuda"
bf = torch.bfloat16


def emit(d):
    print(json.dumps(d), flush=True)


def bench(fn, iters=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def batch(path):
    return [tuple(int(x) for x in p.split(":")) for p in open(path).read().strip().split(",")]


def run(name, Hq, Hkv, D, P, pairs):
    rng = random.Random(25)
    B = len(pairs)
    maxp = max((k + P - 1) // P for _, k in pairs)
    pages = B * maxp
    perm = list(range(pages))
    rng.shuffle(perm)
    table = torch.tensor(perm, dtype=torch.int64, device=dev).view(B, maxp)
    kc = torch.randn(pages, P, Hkv, D, device=dev, dtype=bf)
    vc = torch.randn(pages, P, Hkv, D, device=dev, dtype=bf)
    total = sum(q for q, _ in pairs)
    q = torch.randn(total, Hq, D, device=dev, dtype=bf)
    starts = [0]
    for ql, _ in pairs:
        starts.append(starts[-1] + ql)
    scale = D ** -0.5
    G = Hq // Hkv
    pairs_useful = sum(sum(k - ql + i + 1 for i in range(ql)) for ql, k in pairs)
    flops = 4.0 * Hq * D * pairs_useful
    kv_bytes = 2.0 * sum(k for _, k in pairs) * Hkv * D * 2
    try:
        from torch.nn.attention.bias import causal_lower_right
    except Exception:
        causal_lower_right = None

    def gathered(b):
        ql, kl = pairs[b]
        n = (kl + P - 1) // P
        k = kc[table[b, :n]].reshape(n * P, Hkv, D)[:kl]
        v = vc[table[b, :n]].reshape(n * P, Hkv, D)[:kl]
        return k, v

    def sdpa_one(b, k, v):
        ql, kl = pairs[b]
        qs = q[starts[b]:starts[b + 1]].transpose(0, 1).unsqueeze(0)
        kk = k.transpose(0, 1).unsqueeze(0).repeat_interleave(G, 1)
        vv = v.transpose(0, 1).unsqueeze(0).repeat_interleave(G, 1)
        if ql == 1:
            return F.scaled_dot_product_attention(qs, kk, vv, scale=scale)
        mask = causal_lower_right(ql, kl) if causal_lower_right else None
        if mask is None:
            i = torch.arange(ql, device=dev)[:, None]
            j = torch.arange(kl, device=dev)[None, :]
            mask = j <= kl - ql + i
        return F.scaled_dot_product_attention(qs, kk, vv, attn_mask=mask, scale=scale)

    pre = [gathered(b) for b in range(B)]

    def ref(b):
        ql, kl = pairs[b]
        k, v = pre[b]
        qs = q[starts[b]:starts[b + 1]].float().transpose(0, 1)
        kk = k.float().transpose(0, 1).repeat_interleave(G, 0)
        vv = v.float().transpose(0, 1).repeat_interleave(G, 0)
        s = qs @ kk.transpose(1, 2) * scale
        i = torch.arange(ql, device=dev)[:, None]
        j = torch.arange(kl, device=dev)[None, :]
        s = s.masked_fill(~(j <= kl - ql + i), float("-inf"))
        return torch.softmax(s, -1) @ vv

    check = sorted(set([0, B - 1] + [rng.randrange(B) for _ in range(2)]))

    def maxrel(out_of):
        worst = 0.0
        for b in check:
            r = ref(b)
            o = out_of(b).float()
            worst = max(worst, float((o - r).abs().max() / r.abs().max().clamp_min(1e-6)))
        return worst

    def report(impl, ms, err):
        emit({"name": name, "impl": impl, "ms": ms, "tflops": flops / ms / 1e9, "gbps": kv_bytes / ms / 1e6,
              "maxrel": err})

    try:
        err = maxrel(lambda b: sdpa_one(b, *pre[b])[0])   # [Hq, ql, D], as ref() and the flex output
        report("sdpa per sequence + gather", bench(lambda: [sdpa_one(b, *gathered(b)) for b in range(B)]), err)
        report("sdpa per sequence (gathered)", bench(lambda: [sdpa_one(b, *pre[b]) for b in range(B)]), err)
    except Exception as e:
        emit({"name": name, "impl": "sdpa per sequence", "error": f"{type(e).__name__}: {e}"[:300]})

    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        slots = pages * P
        slot_seq = torch.full((slots,), -1, dtype=torch.int64, device=dev)
        slot_pos = torch.full((slots,), -1, dtype=torch.int64, device=dev)
        for b, (ql, kl) in enumerate(pairs):
            pos = torch.arange(kl, device=dev)
            slot = table[b, pos // P] * P + pos % P
            slot_seq[slot] = b
            slot_pos[slot] = pos
        q_seq = torch.cat([torch.full((ql,), b, dtype=torch.int64, device=dev) for b, (ql, _) in enumerate(pairs)])
        q_pos = torch.cat([torch.arange(kl - ql, kl, device=dev) for ql, kl in pairs])

        def paged(b, h, qi, ki):
            return (slot_seq[ki] == q_seq[qi]) & (slot_pos[ki] <= q_pos[qi]) & (slot_pos[ki] >= 0)

        bm = create_block_mask(paged, 1, None, total, slots, device=dev, BLOCK_SIZE=128)
        fa = torch.compile(flex_attention)
        qf = q.transpose(0, 1).unsqueeze(0)
        kf = kc.reshape(slots, Hkv, D).transpose(0, 1).unsqueeze(0)
        vf = vc.reshape(slots, Hkv, D).transpose(0, 1).unsqueeze(0)
        out = fa(qf, kf, vf, block_mask=bm, scale=scale, enable_gqa=True)
        err = maxrel(lambda b: out[0, :, starts[b]:starts[b + 1]])
        report("flex paged block mask", bench(lambda: fa(qf, kf, vf, block_mask=bm, scale=scale, enable_gqa=True)),
               err)
    except Exception as e:
        emit({"name": name, "impl": "flex paged block mask", "error": f"{type(e).__name__}: {e}"[:300]})


def main():
    shapes, out = sys.argv[1], sys.argv[2]
    emit({"name": "gpu", "device": torch.cuda.get_device_name(), "torch": torch.__version__})
    for line in open(shapes):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if len(f) > 6:
            continue   # a knob variant of an earlier row: the same batch, the same peers
        name, Hq, Hkv, D, P = f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4])
        run(name, Hq, Hkv, D, P, batch(f"{out}/{name}.lengths"))
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
