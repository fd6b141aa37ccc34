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
