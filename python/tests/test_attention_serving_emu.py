"""rocke.ops' attention family on numpy arrays through the emulator: varlen
prefill with LSE and windows, paged / contiguous / fp8 decode, unified
attention with every option, kv_append with rope and fp8 caches; each
against a reference in double on fresh random inputs of odd sizes; bad
input raises a RockeError naming the problem."""
import unittest

import numpy as np

import rocke
from rocke import ops


def rnd(*shape):
    return np.random.randn(*shape).astype(np.float16)


def e4m3_decode(b, fnuz):
    """e4m3 bytes -> float64 (OCP e4m3fn: bias 7; FNUZ: bias 8)."""
    b = b.astype(np.int64)
    sign = np.where(b >> 7, -1.0, 1.0)
    e, m = (b >> 3) & 15, b & 7
    bias = 8 if fnuz else 7
    mag = np.where(e == 0, m / 8.0 * 2.0 ** (1 - bias), (1 + m / 8.0) * 2.0 ** (e - bias))
    return np.where(fnuz & (b == 0x80), 0.0, sign * mag)


def e4m3_bytes(shape, fnuz):
    """Random e4m3 bytes without NaN (nor FNUZ's negative zero)."""
    b = np.random.randint(0, 256, size=shape).astype(np.uint8)
    nan = (b == 0x80) if fnuz else ((b & 0x7F) == 0x7F)
    b[nan] = 0
    return b


def ref_rows(q, k, v, scale, off, causal=True, left=-1, right=-1, softcap=None, sink=None, slope=None):
    """softmax over visible keys for query rows q [S, D] against k, v [L, D],
    query i at key position i + off; (O, LSE) in double, O = 0 for a row that
    sees nothing (LSE = the sink or -inf)."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    s = scale * q @ k.T
    if softcap is not None:
        s = softcap * np.tanh(s / softcap)
    i = np.arange(q.shape[0])[:, None] + off
    j = np.arange(k.shape[0])[None, :]
    if slope is not None:
        s = s + slope * (j - i)
    vis = np.ones(s.shape, bool)
    if causal:
        vis &= j <= i
    if right >= 0:
        vis &= j <= i + right
    if left >= 0:
        vis &= j >= i - left
    s = np.where(vis, s, -np.inf)
    m = s.max(1, keepdims=True) if s.shape[1] else np.full((s.shape[0], 1), -np.inf)
    if sink is not None:
        m = np.maximum(m, sink)
    mf = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - mf)
    den = p.sum(1, keepdims=True) + (np.exp(sink - mf) if sink is not None else 0.0)
    o = np.where(den > 0, p @ v / np.where(den > 0, den, 1), 0.0)
    lse = np.where(den[:, 0] > 0, np.log(np.where(den[:, 0] > 0, den[:, 0], 1)) + mf[:, 0], -np.inf)
    return o, lse


class Attention(unittest.TestCase):
    def close(self, got, ref, tol=6e-3):
        self.assertEqual(got.shape, ref.shape)
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol)

    def close_lse(self, got, ref):
        fin = np.isfinite(ref)
        np.testing.assert_array_equal(np.isfinite(got), fin)
        np.testing.assert_allclose(got[fin], ref[fin], rtol=1e-3, atol=1e-3)

    def test_varlen_causal_lse(self):
        lq, lk = np.array([5, 1, 9, 0]), np.array([7, 3, 9, 2])
        Hq, Hkv, D = 4, 2, 64
        cq = np.concatenate([[0], np.cumsum(lq)]).astype(np.int32)
        ck = np.concatenate([[0], np.cumsum(lk)]).astype(np.int32)
        q, k, v = rnd(cq[-1], Hq, D), rnd(ck[-1], Hkv, D), rnd(ck[-1], Hkv, D)
        o, lse = ops.attention(q, k, v, causal=True, lse=True, cu_seqlens_q=cq, cu_seqlens_k=ck,
                               device="emu:sm_90")
        self.assertEqual(lse.dtype, np.float32)
        ro, rl = np.zeros(o.shape), np.zeros(lse.shape)
        for b in range(len(lq)):
            for h in range(Hq):
                qs, ks = slice(cq[b], cq[b + 1]), slice(ck[b], ck[b + 1])
                ro[qs, h], rl[qs, h] = ref_rows(q[qs, h], k[ks, h // 2], v[ks, h // 2], D ** -0.5, lk[b] - lq[b])
        self.close(o, ro)
        self.close_lse(lse, rl)

    def test_dense_window_scale_gqa(self):
        B, Hq, Hkv, Sq, Skv, D = 1, 3, 1, 13, 21, 64
        q, k, v = rnd(B, Hq, Sq, D), rnd(B, Hkv, Skv, D), rnd(B, Hkv, Skv, D)
        o, lse = ops.attention(q, k, v, window=(5, 2), scale=0.2, lse=True, device="emu:gfx942")
        for h in range(Hq):
            ro, rl = ref_rows(q[0, h], k[0, 0], v[0, 0], 0.2, Skv - Sq, causal=False, left=5, right=2)
            self.close(o[0, h], ro)
            self.close_lse(lse[0, h], rl)

    def test_prefill_bad_input(self):
        q = rnd(6, 2, 64)
        cu = np.array([0, 6], np.int32)
        with self.assertRaisesRegex(rocke.RockeError, "cu_seqlens_k must be int32"):
            ops.attention(q, q, q, cu_seqlens_q=cu, cu_seqlens_k=cu.astype(np.int64), device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "must start at 0, not decrease"):
            ops.attention(q, q, q, cu_seqlens_q=np.array([0, 7], np.int32), cu_seqlens_k=cu, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "causal=True with window right bound 3"):
            ops.attention(rnd(1, 2, 8, 64), rnd(1, 2, 8, 64), rnd(1, 2, 8, 64), causal=True, window=(4, 3))


class Decode(unittest.TestCase):
    def paged(self, B, Sq, Hq, Hkv, D, P, lens, kv=None):
        nblk = max((max(lens) + P - 1) // P, 1) + 1                 # one spare column
        pages = B * nblk + 3
        if kv:
            kc, vc = e4m3_bytes((pages, P, Hkv, D), kv == "fp8fnuz"), e4m3_bytes((pages, P, Hkv, D), kv == "fp8fnuz")
        else:
            kc, vc = rnd(pages, P, Hkv, D), rnd(pages, P, Hkv, D)
        bt = np.random.permutation(pages)[:B * nblk].reshape(B, nblk).astype(np.int32)
        return rnd(B, Sq, Hq, D), kc, vc, bt, np.array(lens, np.int32)

    def ref(self, q, kc, vc, bt, lens, P, scale, ks=None, vs=None, kv=None, window=None):
        B, Sq, Hq, D = q.shape
        Hkv = kc.shape[2] if bt is not None else kc.shape[1]
        dec = (lambda x: e4m3_decode(x, kv == "fp8fnuz")) if kv else (lambda x: x.astype(np.float64))
        out = np.zeros(q.shape)
        for b in range(B):
            L = int(lens[b])
            rows = [bt[b, t // P] * P + t % P for t in range(L)] if bt is not None else None
            for h in range(Hq):
                g = h // (Hq // Hkv)
                if rows is not None:
                    kk = dec(kc.reshape(-1, Hkv, D)[rows, g])
                    vv = dec(vc.reshape(-1, Hkv, D)[rows, g])
                else:
                    kk, vv = dec(kc[b, g, :L]), dec(vc[b, g, :L])
                if ks is not None:
                    kk, vv = kk * ks[g], vv * vs[g]
                left, right = window if window else (-1, 0)
                out[b, :, h] = ref_rows(q[b, :, h], kk, vv, scale, L - Sq, causal=True, left=left, right=right)[0]
        return out

    def test_paged_gqa_odd_lengths(self):
        P = 16
        q, kc, vc, bt, lens = self.paged(3, 2, 4, 2, 64, P, [17, 2, 33])
        o = ops.attention_decode(q, kc, vc, bt, lens, device="emu:sm_90")
        self.assertEqual(o.shape, q.shape)
        Decode.close(self, o, self.ref(q, kc, vc, bt, lens, P, 64 ** -0.5))

    def test_contiguous_window(self):
        B, Hq, Hkv, CTX, D = 2, 2, 2, 21, 64
        q = rnd(B, 1, Hq, D)
        kc, vc = rnd(B, Hkv, CTX, D), rnd(B, Hkv, CTX, D)
        lens = np.array([21, 7], np.int32)
        o = ops.attention_decode(q, kc, vc, None, lens, window=(6, 0), scale=0.3, device="emu:gfx942")
        Decode.close(self, o, self.ref(q, kc, vc, None, lens, 0, 0.3, window=(6, 0)))

    def test_fp8_caches(self):
        P = 16
        for target, kv in (("emu:sm_90", "fp8"), ("emu:gfx942", "fp8fnuz")):
            q, kc, vc, bt, lens = self.paged(2, 1, 4, 1, 64, P, [19, 5], kv)
            ks, vs = np.random.uniform(0.02, 0.1, 1).astype(np.float32), np.float32(0.05)
            o = ops.attention_decode(q, kc, vc, bt, lens, kv_dtype=kv, k_scale=ks, v_scale=float(vs), device=target)
            r = self.ref(q, kc, vc, bt, lens, P, 64 ** -0.5, ks, [float(vs)], kv)
            Decode.close(self, o, r, tol=1e-2 * max(1.0, np.abs(r).max()))

    def close(self, got, ref, tol=6e-3):
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol)

    def test_decode_bad_input(self):
        P = 16
        q, kc, vc, bt, lens = self.paged(2, 1, 4, 2, 64, P, [20, 3])
        with self.assertRaisesRegex(rocke.RockeError, "block table is too short"):
            ops.attention_decode(q, kc, vc, bt[:, :1], lens, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "points outside the cache"):
            bad = bt.copy()
            bad[0, 1] = kc.shape[0] + 4
            ops.attention_decode(q, kc, vc, bad, lens, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "context_lens has dtype i64 .legal: i32"):
            ops.attention_decode(q, kc, vc, bt, lens.astype(np.int64), device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "q has dtype f32 .legal: f16, bf16"):
            ops.attention_decode(q.astype(np.float32), kc, vc, bt, lens, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "k_cache's last dimension .D. must be contiguous"):
            ops.attention_decode(q, kc.transpose(0, 1, 3, 2), vc, bt, lens, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "must both be .pages, page_size, Hkv, D = 64."):
            ops.attention_decode(q, kc, vc[:, :, :1].copy(), bt, lens, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "fp8 caches need k_scale"):
            ops.attention_decode(q, np.zeros(kc.shape, np.uint8), np.zeros(kc.shape, np.uint8), bt, lens,
                                 kv_dtype="fp8", device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "page_size = 32 but the caches hold 16"):
            ops.attention_decode(q, kc, vc, bt, lens, page_size=32, device="emu")


class Unified(unittest.TestCase):
    def batch(self, seqs, Hq, Hkv, D, P):
        B = len(seqs)
        nblk = max((k + P - 1) // P for _, k in seqs)
        pages = B * nblk + 2
        qs = np.concatenate([[0], np.cumsum([q for q, _ in seqs])]).astype(np.int32)
        bt = np.random.permutation(pages)[:B * nblk].reshape(B, nblk).astype(np.int32)
        kl = np.array([k for _, k in seqs], np.int32)
        return rnd(qs[-1], Hq, D), rnd(pages, P, Hkv, D), rnd(pages, P, Hkv, D), bt, qs, kl

    def ref(self, q, kc, vc, bt, qs, kl, P, scale, **opt):
        Hq, D = q.shape[1], q.shape[2]
        Hkv = kc.shape[2]
        o, lse = np.zeros(q.shape), np.zeros(q.shape[:2])
        sinks, slopes, window = opt.pop("sinks", None), opt.pop("alibi", None), opt.pop("window", -1)
        for b in range(len(kl)):
            rows = [bt[b, t // P] * P + t % P for t in range(kl[b])]
            nq = qs[b + 1] - qs[b]
            for h in range(Hq):
                g = h // (Hq // Hkv)
                kk, vv = kc.reshape(-1, Hkv, D)[rows, g], vc.reshape(-1, Hkv, D)[rows, g]
                sl = slice(qs[b], qs[b + 1])
                o[sl, h], lse[sl, h] = ref_rows(
                    q[sl, h], kk, vv, scale, kl[b] - nq, left=window,
                    sink=None if sinks is None else float(sinks[h]),
                    slope=None if slopes is None else float(slopes[h]), **opt)
        return o, lse

    def test_mixed_batch(self):
        P = 16
        q, kc, vc, bt, qs, kl = self.batch([(17, 40), (1, 33), (2, 2), (3, 16)], 4, 2, 64, P)
        o = ops.unified_attention(q, kc, vc, bt, qs, kl, device="emu:sm_90a")
        Decode.close(self, o, self.ref(q, kc, vc, bt, qs, kl, P, 64 ** -0.5)[0])

    def test_every_option_split(self):
        P = 16
        q, kc, vc, bt, qs, kl = self.batch([(5, 21), (1, 37), (2, 3)], 4, 1, 64, P)
        sinks = np.random.randn(4).astype(np.float32)
        slopes = np.random.uniform(0.01, 0.2, 4).astype(np.float32)
        for splits in (1, 2):
            o, lse = ops.unified_attention(q, kc, vc, bt, qs, kl, scale=0.15, window=9, softcap=3.0, sinks=sinks,
                                           alibi_slopes=slopes, lse=True, kv_splits=2, num_splits=splits,
                                           device="emu:gfx942")
            ro, rl = self.ref(q, kc, vc, bt, qs, kl, P, 0.15, softcap=3.0, sinks=sinks, alibi=slopes, window=9)
            Decode.close(self, o, ro)
            Attention.close_lse(self, lse, rl)

    def test_unified_bad_input(self):
        P = 16
        q, kc, vc, bt, qs, kl = self.batch([(3, 20), (1, 5)], 4, 2, 64, P)
        with self.assertRaisesRegex(rocke.RockeError, "sequence 0: kv_lens.b. = 40 does not fit .*too short"):
            ops.unified_attention(q, kc, vc, bt, qs, np.array([40, 5], np.int32), device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "sequence 1 has 1 queries but kv_lens.1. = 0"):
            ops.unified_attention(q, kc, vc, bt, qs, np.array([20, 0], np.int32), device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "query_start must start at 0"):
            ops.unified_attention(q, kc, vc, bt, np.array([0, 3, 3], np.int32), kl, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "sinks has 3 entries for Hq = 4"):
            ops.unified_attention(q, kc, vc, bt, qs, kl, sinks=np.zeros(3, np.float32), device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "num_splits = 9 must be in 1..2"):
            ops.unified_attention(q, kc, vc, bt, qs, kl, kv_splits=2, num_splits=9, device="emu")


class KvAppend(unittest.TestCase):
    def setup(self, T, Hkv, D, pages, P, dt=np.float16):
        k, v = rnd(T, Hkv, D).astype(dt), rnd(T, Hkv, D).astype(dt)
        slots = np.random.permutation(pages * P)[:T].astype(np.int64)
        slots[T // 2] = -1                                          # a padding token
        return k, v, slots

    def test_rope_neox(self):
        T, Hq, Hkv, D, pages, P = 7, 4, 2, 64, 3, 16
        k, v, slots = self.setup(T, Hkv, D, pages, P)
        kc, vc = rnd(pages, P, Hkv, D), rnd(pages, P, Hkv, D)
        kc0, vc0 = kc.copy(), vc.copy()
        q = rnd(T, Hq, D)
        q0 = q.copy()
        pos = np.random.randint(0, 50, T).astype(np.int32)
        ang = np.arange(50)[:, None] * (10000.0 ** (-np.arange(D // 2) / (D // 2)))[None, :]
        cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
        ops.kv_append(k, v, kc, vc, slots, rope="neox", q=q, positions=pos, cos=cos, sin=sin, device="emu:sm_90")

        def rot(x, p):
            x = x.astype(np.float64)
            a, b_ = x[..., :D // 2], x[..., D // 2:]
            c, s = cos[p].astype(np.float64), sin[p].astype(np.float64)
            return np.concatenate([a * c - b_ * s, b_ * c + a * s], -1)
        ref_kc, ref_vc = kc0.astype(np.float64).reshape(-1, Hkv, D), vc0.astype(np.float64).reshape(-1, Hkv, D)
        for t in range(T):
            if slots[t] >= 0:
                ref_kc[slots[t]] = rot(k[t], pos[t])
                ref_vc[slots[t]] = v[t]
        np.testing.assert_allclose(kc.reshape(-1, Hkv, D), ref_kc, rtol=2e-3, atol=2e-3)
        np.testing.assert_array_equal(vc.reshape(-1, Hkv, D), ref_vc.astype(np.float16))
        np.testing.assert_allclose(q, np.stack([rot(q0[t], pos[t]) for t in range(T)]), rtol=2e-3, atol=2e-3)

    def test_fp8_cache(self):
        T, Hkv, D, pages, P = 5, 3, 64, 2, 16
        k, v, slots = self.setup(T, Hkv, D, pages, P)
        kc, vc = np.zeros((pages, P, Hkv, D), np.uint8), np.zeros((pages, P, Hkv, D), np.uint8)
        ks = np.random.uniform(0.01, 0.05, Hkv).astype(np.float32)
        ops.kv_append(k, v, kc, vc, slots, kv_dtype="fp8", k_scale=ks, v_scale=0.02, device="emu:sm_90")
        for t in range(T):
            if slots[t] < 0:
                continue
            got_k = e4m3_decode(kc.reshape(-1, Hkv, D)[slots[t]], False)
            got_v = e4m3_decode(vc.reshape(-1, Hkv, D)[slots[t]], False)
            want_k = k[t].astype(np.float64) / ks[:, None]
            np.testing.assert_allclose(got_k, want_k, rtol=2 ** -4, atol=2 ** -9)
            np.testing.assert_allclose(got_v, v[t].astype(np.float64) / np.float32(0.02),
                                       rtol=2 ** -4, atol=2 ** -9)
        self.assertEqual(int(np.count_nonzero(kc.reshape(-1, Hkv * D).any(1))), T - 1)

    def test_kv_append_bad_input(self):
        k, v, slots = self.setup(4, 2, 64, 2, 16)
        kc, vc = rnd(2, 16, 2, 64), rnd(2, 16, 2, 64)
        with self.assertRaisesRegex(rocke.RockeError, "slot_mapping.1. = 99 is outside the cache's 32 slots"):
            s = slots.copy()
            s[1] = 99
            ops.kv_append(k, v, kc, vc, s, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "slot_mapping has dtype i32 .legal: i64"):
            ops.kv_append(k, v, kc, vc, slots.astype(np.int32), device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "rope = 'yarn' .legal: none, neox, gptj"):
            ops.kv_append(k, v, kc, vc, slots, rope="yarn", device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "q is required"):
            ops.kv_append(k, v, kc, vc, slots, rope="gptj", device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "k_cache must be C-contiguous"):
            big = rnd(2, 16, 2, 128)
            ops.kv_append(k, v, big[..., :64], vc, slots, device="emu")


if __name__ == "__main__":
    unittest.main()
