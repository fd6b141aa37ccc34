"""rocke.ops.gemm with fp8 inputs (uint8 arrays tagged e4m3 / e5m2) on the
emulator's sm_90a, without scales, with tensor and per-128-block scales,
against a reference in double over the decoded bytes; bad input raises a
RockeError naming the problem."""
import unittest

import numpy as np

import rocke
from rocke import ops


def fp8_decode(b, fmt):
    """OCP e4m3fn (bias 7, 3 mantissa bits) or e5m2 (bias 15, 2 bits) bytes -> float64."""
    b = b.astype(np.int64)
    mbits, bias = (3, 7) if fmt == "e4m3" else (2, 15)
    e, m = (b >> mbits) & ((1 << (7 - mbits)) - 1), b & ((1 << mbits) - 1)
    mag = np.where(e == 0, m / 2.0 ** mbits * 2.0 ** (1 - bias), (1 + m / 2.0 ** mbits) * 2.0 ** (e - bias))
    return np.where(b >> 7, -mag, mag)


def fp8_bytes(shape, fmt):
    """Random finite bytes of magnitude at most 8 (no NaN or inf)."""
    b = np.random.randint(0, 256, size=shape).astype(np.uint8)
    b[np.abs(fp8_decode(b, fmt)) > 8] = 0
    return b


class GemmFp8(unittest.TestCase):
    def check(self, got, ref, a, b):
        bound = 1e-5 * (np.abs(a) @ np.abs(b)) + 1e-6
        self.assertEqual(got.dtype, np.float32)
        self.assertTrue(np.all(np.abs(got.astype(np.float64) - ref) <= bound),
                        "max diff %g" % np.abs(got - ref).max())

    def test_scales(self):
        M, N, K = 33, 40, 256
        for fmt, scale in (("e4m3", "none"), ("e5m2", "tensor"), ("e4m3", "block")):
            a8, w8 = fp8_bytes((M, K), fmt), fp8_bytes((N, K), fmt)       # b = w.T, read in place
            a, b = fp8_decode(a8, fmt), fp8_decode(w8, fmt).T
            kw = {}
            if scale == "tensor":
                kw = dict(a_scale=0.75, b_scale=np.array([1.25], np.float32))
                ref, sa, sb = 0.75 * 1.25 * (a @ b), None, None
            elif scale == "block":
                sa = np.random.uniform(0.25, 2, (M, 2)).astype(np.float32)
                sb = np.random.uniform(0.25, 2, (1, 2)).astype(np.float32)
                kw = dict(a_scale=sa, b_scale=sb)
                ref = sum((a[:, kb * 128:(kb + 1) * 128] * sa[:, kb:kb + 1].astype(np.float64))
                          @ (b[kb * 128:(kb + 1) * 128] * sb[0, kb]) for kb in range(2))
            else:
                ref = a @ b
            c = ops.gemm(a8, w8.T, a_dtype=fmt, b_dtype=fmt, scale=scale, **kw)
            self.check(c, ref, a * 2, b * 2)

    def test_bad_input(self):
        a8 = np.zeros((16, 64), np.uint8)
        with self.assertRaisesRegex(rocke.RockeError, "a is u8 with a_dtype=None: fp8 operands are uint8 arrays tagged"):
            ops.gemm(a8, a8.T, b_dtype="e4m3")
        with self.assertRaisesRegex(rocke.RockeError, "mixed fp8 formats"):
            ops.gemm(a8, a8.T, a_dtype="e4m3", b_dtype="e5m2")
        with self.assertRaisesRegex(rocke.RockeError, "scale needs a_scale"):
            ops.gemm(a8, a8.T, a_dtype="e4m3", b_dtype="e4m3", scale="tensor")
        with self.assertRaisesRegex(rocke.RockeError, "a_scale must be float32 .16, 1."):
            ops.gemm(a8, a8.T, a_dtype="e4m3", b_dtype="e4m3", scale="block", a_scale=np.ones((16, 2), np.float32),
                     b_scale=np.ones((1, 1), np.float32))
        with self.assertRaisesRegex(rocke.RockeError, "scale = 'row' .legal: none, tensor, block."):
            ops.gemm(a8, a8.T, a_dtype="e4m3", b_dtype="e4m3", scale="row")
        with self.assertRaisesRegex(rocke.RockeError, "K must be a multiple of 16 .got K = 40"):
            b8 = np.zeros((16, 40), np.uint8)
            ops.gemm(b8, b8.T, a_dtype="e4m3", b_dtype="e4m3")


if __name__ == "__main__":
    unittest.main()
