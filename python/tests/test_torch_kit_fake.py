"""The torch path of the attention / serving ops without torch or a GPU: a
stand-in torch module of numpy-backed CUDA-looking tensors and a recording
launcher check that each kernel argument is the right tensor's address or
the right shape value, that the launch goes to the current stream, and that
CPU tensors, tensors on two devices and mixed kinds are refused by name."""
import ctypes
import sys
import types
import unittest

import numpy as np

import rocke
from rocke import _torch, ops

STREAM = 0x5EED


class Device:
    def __init__(self, index):
        self.index = index

    def __eq__(self, other):
        return isinstance(other, Device) and other.index == self.index

    def __str__(self):
        return "cuda:%d" % self.index


class Tensor:
    """numpy-backed; dtypes are numpy dtypes (the stand-in torch's float16 ... are too)."""

    def __init__(self, a, index=0, cuda=True):
        self.a, self.device, self.is_cuda = a, Device(index), cuda

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)

    def stride(self):
        return tuple(s // self.a.itemsize for s in self.a.strides)

    def data_ptr(self):
        return self.a.ctypes.data

    def is_contiguous(self):
        return self.a.flags["C_CONTIGUOUS"]

    def contiguous(self):
        return self if self.is_contiguous() else Tensor(np.ascontiguousarray(self.a))

    def t(self):
        return Tensor(self.a.T)


def fake_torch():
    t = types.ModuleType("torch")
    t.Tensor = Tensor
    for name, dt in (("float16", np.float16), ("float32", np.float32), ("bfloat16", np.float64),
                     ("uint8", np.uint8), ("int32", np.int32), ("int64", np.int64)):
        setattr(t, name, np.dtype(dt))
    t.empty = lambda shape, dtype, device: Tensor(np.empty(shape, dtype))
    t.zeros = lambda n, dtype, device: Tensor(np.zeros(n, dtype))
    t.full = lambda shape, v, dtype, device: Tensor(np.full(shape, v, dtype))
    t.version = types.SimpleNamespace(hip=None)
    t.cuda = types.SimpleNamespace(get_device_capability=lambda i: (9, 0), current_device=lambda: 0,
                                   current_stream=lambda dev: types.SimpleNamespace(cuda_stream=STREAM))
    return t


class Recorder:
    launches = []

    def __init__(self, image, name, dyn):
        self.name = name

    def launch(self, grid, block, stream, params):
        Recorder.launches.append((self.name, tuple(grid), stream, [params[i] for i in range(len(params))]))


class TorchKitFake(unittest.TestCase):
    def setUp(self):
        self.saved = (sys.modules.get("torch"), _torch._cuda.Function, _torch._cuda.use_primary_context,
                      _torch.rk_compile)
        sys.modules["torch"] = fake_torch()
        _torch._cuda.Function = Recorder
        _torch._cuda.use_primary_context = lambda i: None
        _torch.rk_compile = lambda k, target: types.SimpleNamespace(cubin=b"", binary=b"", kernel_name=k.name,
                                                                    dyn_smem_min=0)
        Recorder.launches.clear()

    def tearDown(self):
        torch, _torch._cuda.Function, _torch._cuda.use_primary_context, _torch.rk_compile = self.saved
        if torch is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = torch

    def args(self):
        """The last launch's arguments decoded by its instance's signature: {name: value}."""
        name, grid, stream, params = Recorder.launches[-1]
        self.assertEqual(stream, STREAM)
        p = next(p for p in reversed(list(ops._prepared.values())) if p.inst.name == name)
        ctypes_of = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "f32": ctypes.c_float}
        out = {}
        for (n, ptr, t, role, _), addr in zip(p.sig, params):
            ct = ctypes.c_uint64 if ptr else ctypes_of[t]
            out[n] = ctypes.cast(addr, ctypes.POINTER(ct))[0]
        return out, grid, p

    def test_unified_arguments(self):
        Hq, Hkv, D, P = 4, 2, 64, 16
        q = Tensor(np.zeros((9, Hq, D), np.float16))
        kc, vc = Tensor(np.zeros((7, P, Hkv, D), np.float16)), Tensor(np.zeros((7, P, Hkv, D), np.float16))
        bt = Tensor(np.zeros((2, 3), np.int32))
        qs, kl = Tensor(np.array([0, 8, 9], np.int32)), Tensor(np.array([40, 3], np.int32))
        o = ops.unified_attention(q, kc, vc, bt, qs, kl, scale=0.25, softcap=5.0, kv_splits=2, num_splits=2)
        self.assertIsInstance(o, Tensor)
        self.assertEqual(o.shape, (9, Hq, D))
        a, grid, p = self.args()
        self.assertEqual(grid, p.grid)
        for name, t in (("Q", q), ("K_cache", kc), ("V_cache", vc), ("block_table", bt), ("query_start", qs),
                        ("kv_lens", kl), ("O", o)):
            self.assertEqual(a[name], t.data_ptr(), name)
        self.assertEqual([a[n] for n in ("B", "Hq", "Hkv", "Sq", "Skv", "num_splits")], [2, Hq, Hkv, 9, 3 * P, 2])
        self.assertAlmostEqual(a["scale"], 0.25)
        self.assertAlmostEqual(a["softcap"], 5.0)
        self.assertNotIn(a["Work_o"], (0, o.data_ptr()))

    def test_varlen_strides_and_decode(self):
        q = Tensor(np.zeros((2, 11, 4, 64), np.float16).transpose(0, 2, 1, 3))         # a [B, S, H, D] view
        k = Tensor(np.zeros((2, 2, 13, 64), np.float16))
        ops.attention(q, k, k, causal=True)
        a, _, _ = self.args()
        self.assertEqual((a["q_sb"], a["q_sh"], a["q_ss"]), (11 * 4 * 64, 64, 4 * 64))
        self.assertEqual((a["k_sb"], a["k_sh"], a["k_ss"], a["Sq"], a["Skv"]), (2 * 13 * 64, 13 * 64, 64, 11, 13))
        qd = Tensor(np.zeros((3, 1, 4, 64), np.float16))
        kc = Tensor(np.zeros((5, 16, 2, 64), np.float16))
        bt, cl = Tensor(np.zeros((3, 2), np.int32)), Tensor(np.array([1, 2, 3], np.int32))
        ops.attention_decode(qd, kc, kc, bt, cl)
        a, _, _ = self.args()
        self.assertEqual((a["block_table"], a["context_lens"], a["Skv"]), (bt.data_ptr(), cl.data_ptr(), 32))

    def test_matmul_layouts(self):
        a = Tensor(np.zeros((77, 130), np.float16))
        w = Tensor(np.zeros((33, 130), np.float16))              # b = w.t(): column-major, read in place
        c = ops.matmul(a, w.t())
        self.assertEqual(c.shape, (77, 33))
        args, grid, p = self.args()
        self.assertEqual((args["A"], args["B"], args["C"]), (a.data_ptr(), w.data_ptr(), c.data_ptr()))
        self.assertEqual([args[n] for n in ("M", "N", "K", "lda", "ldb", "ldc")], [77, 33, 130, 130, 130, 33])
        self.assertEqual(p.inst.get("layout"), "rc")
        b = Tensor(np.zeros((260, 33), np.float16)[::2])           # rows two apart: a padded pitch
        ops.gemm(a, b)
        args, _, p = self.args()
        self.assertEqual((args["B"], args["ldb"], p.inst.get("layout")), (b.data_ptr(), 66, "rr"))
        with self.assertRaisesRegex(rocke.RockeError, "float32 is not served|dtype f32 is not served"):
            ops.matmul(Tensor(np.zeros((4, 4), np.float32)), Tensor(np.zeros((4, 4), np.float32)))
        with self.assertRaisesRegex(rocke.RockeError, r"needs \[M, K\] @ \[K, N\]"):
            ops.matmul(a, a)

    def test_refusals(self):
        x = Tensor(np.zeros((1, 2, 8, 64), np.float16))
        with self.assertRaisesRegex(rocke.RockeError, "argument 1 is a CPU tensor"):
            ops.attention(x, Tensor(x.a, cuda=False), x)
        with self.assertRaisesRegex(rocke.RockeError, "tensors on two devices .cuda:0 and cuda:1."):
            ops.attention(x, Tensor(x.a, index=1), x)
        with self.assertRaisesRegex(rocke.RockeError, "mixes numpy arrays and device tensors"):
            ops.kv_append(Tensor(np.zeros((2, 2, 64), np.float16)), Tensor(np.zeros((2, 2, 64), np.float16)),
                          np.zeros((1, 16, 2, 64), np.float16), None, None)


if __name__ == "__main__":
    unittest.main()
