"""sm_90a's TMA + wgmma kernels through rocke.ops on the emulator
("emu:sm_90a" runs TMA and wgmma exactly): matmul / gemm and attention
(dense bhsd, a bshd view, varlen) pick the wgmma kernels and pass the tensor
maps the package describes for the call's views; operands TMA cannot read
(a padded pitch, heads whose rows do not abut) keep the mma.sync kernel.
Small odd shapes against double references."""
import unittest

import numpy as np

from rocke import RockeError, ops

EMU = "emu:sm_90a"


def rnd(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float16)


def attention_ref(q, k, v, causal, scale):
    """q [B, Hq, Sq, D], k, v [B, Hkv, Skv, D] in double; causal bottom-right."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    B, Hq, Sq, _ = q.shape
    Hkv, Skv = k.shape[1], k.shape[2]
    o = np.zeros(q.shape)
    for b in range(B):
        for h in range(Hq):
            s = q[b, h] @ k[b, h // (Hq // Hkv)].T * scale
            if causal:
                s = np.where(np.arange(Skv)[None, :] <= np.arange(Sq)[:, None] + Skv - Sq, s, -np.inf)
            e = np.exp(s - s.max(-1, keepdims=True))
            o[b, h] = (e / e.sum(-1, keepdims=True)) @ v[b, h // (Hq // Hkv)]
    return o


class HopperMatmul(unittest.TestCase):
    def check(self, a, b, want_path, **knobs):
        c = ops.matmul(a, b, device=EMU, out_dtype="f32", **knobs)
        name, target = ops.kernel_used("matmul")
        self.assertEqual(target, "sm_90a")
        self.assertIn("_p%s_" % want_path, name)
        a, b = a.astype(np.float64), b.astype(np.float64)
        bound = 2e-3 * (np.abs(a) @ np.abs(b)) + 1e-3
        self.assertTrue(np.all(np.abs(c - a @ b) <= bound), "max diff %g (%s)" % (np.abs(c - a @ b).max(), name))
        return name

    def test_packed_operands_run_wgmma(self):
        M, N, K = 200, 136, 200                                 # row extents multiples of 8: both through TMA
        a = rnd((M, K), 1)
        self.check(a, rnd((K, N), 2), "wgmma")                  # rr
        self.check(a, rnd((N, K), 3).T, "wgmma")                # rc: w.T read in place
        self.check(rnd((K, M), 4).T, rnd((K, N), 5), "wgmma")   # cr: an M-major A
        self.check(rnd((37, 72), 6), rnd((72, 40), 7), "wgmma", path="wgmma")   # one partial tile each way

    def test_odd_k_through_the_padded_cooperative_kernel(self):
        # an odd K: both operands staged into padded copies (work buffers K8 wide) behind a grid barrier
        # of a cooperative kernel; forced here (the heuristic takes it only when tiles fill the SMs)
        knobs = dict(path="wgmma", schedule="persistent", blocks=3, pad="ab", tile="64x64x64", warps="4x1", stages=2,
                     vec_a=8, vec_b=8)
        for seed, (M, N, K) in enumerate(((129, 70, 101), (67, 45, 37))):
            name = self.check(rnd((M, K), 20 + seed), rnd((N, K), 30 + seed).T, "wgmma", **knobs)
            self.assertIn("_pdab", name)

    def test_padded_pitch_keeps_mma(self):
        M, N, K = 200, 136, 200
        big = rnd((M, K + 8), 8)                                # rows 208 apart: not the packed map
        self.check(big[:, :K], rnd((K, N), 9), "mma")
        with self.assertRaisesRegex(RockeError, "packed"):
            ops.matmul(big[:, :K], rnd((K, N), 9), device=EMU, path="wgmma")

    def test_row_extent_off_16_bytes(self):
        # K = 204: A's K-major rows are 408 bytes, not a multiple of 16: A arrives by cp.async (vec_a 4),
        # B (N = 136) still through its TMA map
        name = self.check(rnd((200, 204), 10), rnd((204, 136), 11), "wgmma")
        self.assertIn("_va4_", name)


class HopperAttention(unittest.TestCase):
    def run_case(self, q, k, v, causal, want_path, want_layout=None):
        o = ops.attention(q, k, v, causal=causal, device=EMU)
        name, target = ops.kernel_used("attention")
        self.assertEqual(target, "sm_90a")
        self.assertIn("_pt%s" % want_path, name)
        if want_layout:
            self.assertIn("_l%s_" % want_layout, name)
        ref = attention_ref(np.asarray(q), np.asarray(k), np.asarray(v), causal, 1 / np.sqrt(q.shape[-1]))
        self.assertLess(np.abs(o.astype(np.float64) - ref).max(), 4e-3, name)

    def test_dense_bhsd(self):
        self.run_case(rnd((1, 2, 70, 64), 10), rnd((1, 1, 45, 64), 11), rnd((1, 1, 45, 64), 12), False,
                      "wgmma", "bhsd")
        self.run_case(rnd((2, 2, 33, 64), 13), rnd((2, 2, 33, 64), 14), rnd((2, 2, 33, 64), 15), True,
                      "wgmma", "bhsd")

    def test_bshd_view(self):
        # [B, S, H, D] memory seen as [B, H, S, D] (q.transpose(1, 2)): one TMA map of B * S token rows
        q = rnd((2, 29, 2, 64), 16).transpose(0, 2, 1, 3)
        k = rnd((2, 41, 1, 64), 17).transpose(0, 2, 1, 3)
        v = rnd((2, 41, 1, 64), 18).transpose(0, 2, 1, 3)
        self.run_case(q, k, v, True, "wgmma", "bshd")

    def test_heads_apart_keep_mma(self):
        # rows 68 elements (136 bytes) apart: no TMA map can follow them
        # a slice of the sequence: heads 48 rows apart hold 40, so no one TMA map of token rows serves it
        q = rnd((1, 2, 48, 64), 19)[:, :, :40]
        k = rnd((1, 2, 48, 64), 20)[:, :, :40]
        self.run_case(q, k, k, False, "mma")

    def test_varlen(self):
        cu_q, cu_k = np.array([0, 37, 38, 90], np.int32), np.array([0, 50, 59, 111], np.int32)
        q, k, v = rnd((90, 2, 64), 21), rnd((111, 1, 64), 22), rnd((111, 1, 64), 23)
        o = ops.attention(q, k, v, causal=True, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, device=EMU)
        name, target = ops.kernel_used("attention")
        self.assertEqual(target, "sm_90a")
        self.assertIn("_ptwgmma", name)
        for b in range(3):
            qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
            ref = attention_ref(q[qs].transpose(1, 0, 2)[None], k[ks].transpose(1, 0, 2)[None],
                                v[ks].transpose(1, 0, 2)[None], True, 1 / 8.0)[0].transpose(1, 0, 2)
            self.assertLess(np.abs(o[qs].astype(np.float64) - ref).max(), 4e-3, "sequence %d" % b)

    def test_path_mma_is_kept(self):
        q = rnd((1, 1, 20, 64), 24)
        ops.attention(q, q, q, device=EMU, path="mma")
        self.assertIn("_ptmma", ops.kernel_used("attention")[0])


if __name__ == "__main__":
    unittest.main()
