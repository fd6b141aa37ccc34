"""rocke.ops on numpy arrays through the emulator, each against a numpy
reference computed in double on fresh random inputs of odd sizes; bad input
gets a RockeError naming the problem."""
import random
import unittest

import numpy as np

import rocke
from rocke import ops

TOL = {np.float32: 2e-5, np.float16: 4e-3}


def rnd(shape, dt):
    return np.random.randn(*shape).astype(dt)


def odd_shape():
    return (random.randint(2, 9), random.choice([1, 7, 33, 130, 515]))


class Ops(unittest.TestCase):
    def close(self, got, ref, dt, scale=1.0):
        ref = np.asarray(ref, np.float64)
        self.assertEqual(got.shape, ref.shape)
        self.assertEqual(got.dtype, np.dtype(dt))
        tol = TOL[dt] * scale
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol)

    def test_softmax(self):
        for dt in (np.float32, np.float16):
            x = rnd(odd_shape(), dt)
            d = x.astype(np.float64)
            e = np.exp(d - d.max(-1, keepdims=True))
            self.close(ops.softmax(x, device="emu"), e / e.sum(-1, keepdims=True), dt)

    def test_softmax_three_dims_and_nvidia_target(self):
        x = rnd((2, 3, 45), np.float32)
        d = x.astype(np.float64)
        e = np.exp(d - d.max(-1, keepdims=True))
        self.close(ops.softmax(x, device="emu:sm_90"), e / e.sum(-1, keepdims=True), np.float32)

    def test_long_rows_split_over_blocks(self):
        # few rows of 70001 elements: the kernel splits each row over blocks and merges the
        # partials through its Work buffer, which the op allocates (zeroed)
        x = rnd((3, 70001), np.float32)
        d = x.astype(np.float64)
        self.close(ops.reduce(x, "sum", device="emu:sm_90"), d.sum(-1), np.float32, 50)
        e = np.exp(d - d.max(-1, keepdims=True))
        self.close(ops.softmax(x, device="emu:sm_90"), e / e.sum(-1, keepdims=True), np.float32)

    def test_rms_norm(self):
        for dt in (np.float32, np.float16):
            m, n = odd_shape()
            x, w = rnd((m, n), dt), rnd((n,), dt)
            d = x.astype(np.float64)
            ref = d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-6) * w
            self.close(ops.rms_norm(x, w, 1e-6), ref, dt, 2)

    def test_rms_norm_residual(self):
        m, n = odd_shape()
        x, r, w = rnd((m, n), np.float32), rnd((m, n), np.float32), rnd((n,), np.float32)
        y, h = ops.rms_norm(x, w, 1e-5, residual=r)
        hd = (x + r).astype(np.float64)
        self.close(h, hd, np.float32)
        self.close(y, hd / np.sqrt((hd * hd).mean(-1, keepdims=True) + 1e-5) * w, np.float32, 2)

    def test_layer_norm(self):
        for dt in (np.float32, np.float16):
            m, n = odd_shape()
            n = max(n, 2)
            x, w, b = rnd((m, n), dt), rnd((n,), dt), rnd((n,), dt)
            d = x.astype(np.float64)
            mu, var = d.mean(-1, keepdims=True), d.var(-1, keepdims=True)
            self.close(ops.layer_norm(x, w, b, 1e-5), (d - mu) / np.sqrt(var + 1e-5) * w + b, dt, 2)

    def test_elementwise(self):
        n = random.randint(100, 3000)
        a, b = rnd((n,), np.float32), rnd((n,), np.float32)
        ad, bd = a.astype(np.float64), b.astype(np.float64)
        self.close(ops.add(a, b), ad + bd, np.float32)
        self.close(ops.sub(a, b), ad - bd, np.float32)
        self.close(ops.mul(a, b), ad * bd, np.float32)
        self.close(ops.maximum(a, b), np.maximum(ad, bd), np.float32)
        self.close(ops.minimum(a, b), np.minimum(ad, bd), np.float32)
        self.close(ops.div(a, b + 3.0), ad / (b + 3.0).astype(np.float64), np.float32)
        self.close(ops.relu(a), np.maximum(ad, 0), np.float32)
        self.close(ops.neg(a), -ad, np.float32)
        self.close(ops.abs(a), np.abs(ad), np.float32)
        self.close(ops.silu(a), ad / (1 + np.exp(-ad)), np.float32, 5)
        self.close(ops.exp2(a), np.exp2(ad), np.float32, 5)
        g = 0.5 * ad * (1 + np.tanh(np.sqrt(2 / np.pi) * (ad + 0.044715 * ad ** 3)))
        self.close(ops.gelu_tanh(a), g, np.float32, 10)
        h = rnd((3, 77), np.float16)
        self.close(ops.copy(h), h, np.float16)

    def test_reduce(self):
        m, n = odd_shape()
        x = rnd((m, n), np.float32)
        d = x.astype(np.float64)
        self.close(ops.reduce(x, "sum"), d.sum(-1), np.float32, 10)
        self.close(ops.reduce(x, "max"), d.max(-1), np.float32)
        self.close(ops.reduce(x, "mean"), d.mean(-1), np.float32, 10)

    def test_transpose(self):
        for dt in (np.float32, np.float16):
            x = rnd((random.randint(3, 70), random.randint(3, 90)), dt)
            np.testing.assert_array_equal(ops.transpose(x), x.T)

    def test_matmul(self):
        # odd sizes, row-major arrays, transposed views and a padded pitch, both vendors
        for target in ("emu:sm_90a", "emu:gfx942"):
            M, N, K = random.randint(1, 40), random.randint(1, 40), random.randint(1, 70)
            a = np.random.uniform(-1, 1, (M, K)).astype(np.float16)
            b = np.random.uniform(-1, 1, (K, N)).astype(np.float16)
            ref = a.astype(np.float64) @ b.astype(np.float64)
            for aa, bb in ((a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b))):
                self.close(ops.matmul(aa, bb, device=target, out_dtype="f32"), ref, np.float32, scale=10)
            big = np.zeros((M, K + 24), np.float16)
            big[:, :K] = a
            self.close(ops.matmul(big[:, :K], b, device=target), ref, np.float16)

    def test_matmul_bad_input(self):
        a = np.zeros((4, 5), np.float16)
        with self.assertRaisesRegex(rocke.RockeError, r"needs \[M, K\] @ \[K, N\]"):
            ops.matmul(a, np.zeros((4, 5), np.float16), device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "float32 inputs are not served"):
            ops.matmul(np.zeros((4, 5), np.float32), np.zeros((5, 3), np.float32), device="emu")

    def test_attention(self):
        # odd lengths both ways, GQA, causal (bottom-right), k and v as transposed [B, S, H, D] views
        def ref(q, k, v, causal):
            q, k, v = (x.astype(np.float64) for x in (q, k, v))
            B, Hq, Sq, D = q.shape
            Skv, g = k.shape[2], Hq // k.shape[1]
            o = np.zeros(q.shape)
            for b in range(B):
                for h in range(Hq):
                    s = q[b, h] @ k[b, h // g].T / np.sqrt(D)
                    if causal:
                        s = np.where(np.arange(Skv)[None, :] <= np.arange(Sq)[:, None] + Skv - Sq, s, -np.inf)
                    m = s.max(-1, keepdims=True)
                    e = np.exp(s - np.where(np.isfinite(m), m, 0))
                    l = e.sum(-1, keepdims=True)
                    o[b, h] = np.where(l > 0, (e @ v[b, h // g]) / np.where(l > 0, l, 1), 0)
            return o
        cases = (("emu:sm_90a", 64, False), ("emu:gfx942", 64, True), ("emu:sm_90a", 128, True))
        for target, D, causal in cases:
            Sq, Skv = random.choice([(37, 45), (20, 17), (1, 33)])
            q = rnd((1, 4, Sq, D), np.float16)
            k = rnd((1, Skv, 2, D), np.float16).transpose(0, 2, 1, 3)
            v = rnd((1, Skv, 2, D), np.float16).transpose(0, 2, 1, 3)
            self.close(ops.attention(q, k, v, causal=causal, device=target), ref(q, k, v, causal), np.float16)

    def test_attention_bad_input(self):
        q, kv = np.zeros((1, 3, 8, 64), np.float16), np.zeros((1, 2, 8, 64), np.float16)
        with self.assertRaisesRegex(rocke.RockeError, "Hq = 3 is not a multiple of Hkv = 2"):
            ops.attention(q, kv, kv, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "last dimension .D. must be contiguous"):
            ops.attention(np.zeros((1, 2, 64, 8), np.float16).transpose(0, 1, 3, 2), kv, kv, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "q has dtype f32 .legal: f16, bf16."):
            f = np.zeros((1, 2, 8, 64), np.float32)
            ops.attention(f, f, f, device="emu")

    def test_conv2d(self):
        # implicit GEMM (stride 2, asymmetric padding, groups 2), depthwise with dilation 2 (the direct
        # kernel), 1x1 (a plain GEMM); against a direct convolution in double
        def ref(x, w, st, pad, dil, g):
            x, w = x.astype(np.float64), w.astype(np.float64)
            N, H, W, C = x.shape
            K, R, S, Cg = w.shape
            P = (H + pad[0] + pad[1] - dil[0] * (R - 1) - 1) // st[0] + 1
            Q = (W + pad[2] + pad[3] - dil[1] * (S - 1) - 1) // st[1] + 1
            xp = np.zeros((N, H + pad[0] + pad[1], W + pad[2] + pad[3], C))
            xp[:, pad[0]:pad[0] + H, pad[2]:pad[2] + W, :] = x
            y = np.zeros((N, P, Q, K))
            for k in range(K):
                c0 = k // (K // g) * Cg
                for r in range(R):
                    for s in range(S):
                        win = xp[:, r * dil[0]:r * dil[0] + st[0] * (P - 1) + 1:st[0],
                                 s * dil[1]:s * dil[1] + st[1] * (Q - 1) + 1:st[1], c0:c0 + Cg]
                        y[..., k] += win @ w[k, r, s]
            return y
        cases = (("emu:sm_90a", (2, 9, 7, 6), (10, 3, 3), (2, 2), (1, 2, 0, 1), (1, 1), 2),
                 ("emu:gfx942", (1, 11, 8, 8), (8, 3, 3), (1, 1), (1, 1, 1, 1), (2, 2), 8),
                 ("emu:sm_90a", (2, 5, 6, 16), (24, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1))
        for target, xs, ws, st, pad, dil, g in cases:
            x = rnd(xs, np.float16)
            w = rnd((ws[0], ws[1], ws[2], xs[3] // g), np.float16)
            y = ops.conv2d(x, w, stride=st, padding=pad, dilation=dil, groups=g, device=target)
            r = ref(x, w, st, pad, dil, g)
            self.close(y, r, np.float16, scale=np.abs(r).max())
        # 1x1 on sm_90a (N*H*W = 105, a tile's tail): the GEMM's TMA kernel, whose tensor maps the
        # package makes, the persistent schedule, and the threads' copies (load=copy)
        x, w = rnd((3, 5, 7, 24), np.float16), rnd((40, 1, 1, 24), np.float16)
        r = ref(x, w, (1, 1), (0, 0, 0, 0), (1, 1), 1)
        for knobs in ({}, {"schedule": "persistent", "blocks": 2}, {"load": "copy"}):
            y = ops.conv2d(x, w, device="emu:sm_90a", **knobs)
            self.close(y, r, np.float16, scale=np.abs(r).max())
        names = [name for name, _ in ops._built]
        self.assertTrue(any("_ldtma" in n for n in names), names)
        self.assertTrue(any("_ldtma_scpersistent_pb2" in n for n in names), names)
        # 3x3 on sm_90a with C a multiple of 8: the pixel-box forward, X and W through rank-4 tensor maps
        # (the conv stride as the traversal stride), an odd output extent and a padded edge; asked for with
        # load=tma (at C = 16 the heuristic takes the copy kernel: the box kernel pads C to 64 channels)
        x, w = rnd((2, 9, 11, 16), np.float16), rnd((24, 3, 3, 16), np.float16)
        for st, pad in (((1, 1), (1, 1, 1, 1)), ((2, 2), (1, 0, 2, 1))):
            y = ops.conv2d(x, w, stride=st, padding=pad, device="emu:sm_90a", load="tma")
            r = ref(x, w, st, pad, (1, 1), 1)
            self.close(y, r, np.float16, scale=np.abs(r).max())
        names = [name for name, _ in ops._built]
        self.assertTrue(any("_ldtma" in n and "_bp" in n for n in names), names)

    def test_conv2d_bad_input(self):
        x, w = np.zeros((1, 5, 5, 6), np.float16), np.zeros((4, 3, 3, 3), np.float16)
        with self.assertRaisesRegex(rocke.RockeError, "groups = 4 must divide C = 6"):
            ops.conv2d(x, w, groups=4, device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "output would be empty"):
            ops.conv2d(x, np.zeros((4, 7, 7, 6), np.float16), device="emu")
        with self.assertRaisesRegex(rocke.RockeError, "stride must be a positive int"):
            ops.conv2d(x, np.zeros((4, 3, 3, 6), np.float16), stride=0, device="emu")

    def test_kernel_cache_by_shape_class(self):
        before = ops.cache_info()
        x = rnd((4, 64), np.float32)
        ops.softmax(x)
        ops.softmax(rnd((5, 64), np.float32))
        after = ops.cache_info()
        self.assertEqual(after["prepared"] - before["prepared"], 2)
        self.assertLessEqual(after["kernels"] - before["kernels"], 1)   # one shape class
        ops.softmax(x)
        self.assertEqual(ops.cache_info(), after)


class BadInput(unittest.TestCase):
    def test_dtype_not_served(self):
        with self.assertRaisesRegex(rocke.RockeError, "dtype int32 is not served.*float16"):
            ops.softmax(np.zeros((2, 8), np.int32))

    def test_mismatched_dtypes_and_shapes(self):
        with self.assertRaisesRegex(rocke.RockeError, "dtypes float32 and float16"):
            ops.add(np.zeros(8, np.float32), np.zeros(8, np.float16))
        with self.assertRaisesRegex(rocke.RockeError, "no broadcasting"):
            ops.add(np.zeros(8, np.float32), np.zeros(9, np.float32))

    def test_wrong_device_and_rank(self):
        with self.assertRaisesRegex(rocke.RockeError, "device must be 'emu'"):
            ops.softmax(np.zeros((2, 8), np.float32), device="cuda")
        with self.assertRaisesRegex(rocke.RockeError, "gfx123"):
            ops.softmax(np.zeros((2, 8), np.float32), device="emu:gfx123")
        with self.assertRaisesRegex(rocke.RockeError, "2-D"):
            ops.transpose(np.zeros((2, 3, 4), np.float32))

    def test_bad_knob(self):
        with self.assertRaisesRegex(rocke.RockeError, "block_size"):
            ops.softmax(np.zeros((2, 8), np.float32), block_size=3)


if __name__ == "__main__":
    unittest.main()
