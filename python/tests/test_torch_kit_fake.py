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
from rocke import _cuda, _torch, ops

STREAM = 0x5EED
CURRENT = {"stream": STREAM}          # the stand-in's current stream (a test may switch it)


class Device:
    def __init__(self, index):
        self.index = index

    def __eq__(self, other):
        return isinstance(other, Device) and other.index == self.index

    def __hash__(self):
        return hash(("cuda", self.index))

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

    def zero_(self):
        self.a[...] = 0
        return self


Tensor.__module__ = "torch"           # what rocke.ops dispatches the simple families on


def fake_torch():
    t = types.ModuleType("torch")
    t.Tensor = Tensor
    for name, dt in (("float16", np.float16), ("float32", np.float32), ("bfloat16", np.float64),
                     ("uint8", np.uint8), ("int32", np.int32), ("int64", np.int64)):
        setattr(t, name, np.dtype(dt))
    t.empty = lambda shape, dtype, device: Tensor(np.empty(shape, dtype))
    t.zeros = lambda n, dtype, device: Tensor(np.zeros(n, dtype))
    t.full = lambda shape, v, dtype, device: Tensor(np.full(shape, v, dtype))
    t.empty_like = fake_empty_like
    t.version = types.SimpleNamespace(hip=None)
    t.cuda = types.SimpleNamespace(get_device_capability=lambda i: (9, 0), current_device=lambda: 0,
                                   current_stream=lambda dev: types.SimpleNamespace(cuda_stream=CURRENT["stream"]))
    return t


class Recorder:
    """A stand-in rocke._cuda.Function: its launches go through the real
    _cuda.PackedLaunch to FakeDriver, which records them."""
    launches = []
    by_handle = {}

    def __init__(self, image, name, dyn, cooperative=False):
        self.name = name
        self.cooperative, self.dyn_smem = cooperative, dyn
        self.fn = ctypes.c_void_p(0x1000 + len(Recorder.by_handle))
        Recorder.by_handle[self.fn.value] = name

    def packed(self, grid, block, params):
        return _cuda.PackedLaunch(self, grid, block, params)


class FakeDriver:
    """The driver calls of the cached path, on ctypes objects as the packed
    calls pass them: launches recorded (kernel, grid, stream, argument
    addresses), memsets done on the host memory behind the stand-in tensors."""

    def __init__(self):
        self.memsets = []

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        Recorder.launches.append((Recorder.by_handle[fn.value], (gx.value, gy.value, gz.value), stream.value or 0,
                                  [params[i] for i in range(len(params))]))
        return 0

    def cuLaunchKernelEx(self, cfg, fn, params, extra):
        c = cfg._obj
        Recorder.launches.append((Recorder.by_handle[fn.value], (c.gridDimX, c.gridDimY, c.gridDimZ),
                                  c.hStream or 0, [params[i] for i in range(len(params))]))
        return 0

    def cuMemsetD32Async(self, dst, value, count, stream):
        ctypes.memset(dst.value, 0, count.value * 4)
        self.memsets.append((dst.value, value.value, count.value, stream.value or 0))
        return 0


def fake_empty_like(x):
    return Tensor(np.empty_like(x.a))


class TorchKitFake(unittest.TestCase):
    def setUp(self):
        self.saved = (sys.modules.get("torch"), _torch._cuda.Function, _torch._cuda.use_primary_context,
                      _torch.rk_compile, _cuda._cu)
        self.driver = _cuda._cu = FakeDriver()
        sys.modules["torch"] = fake_torch()
        _torch._cuda.Function = Recorder
        _torch._cuda.use_primary_context = lambda i: None
        _torch.rk_compile = lambda k, target: types.SimpleNamespace(cubin=b"", binary=b"", kernel_name=k.name,
                                                                    dyn_smem_min=0)
        Recorder.launches.clear()
        CURRENT["stream"] = STREAM
        self.encoded = []
        self.saved_encoder = _torch._cuda._encoder

        def encode(addr, dtype, rank, base, dims, strides, box, ones, inter, swizzle, l2, fill):
            self.encoded.append({"addr": addr, "base": base, "cols": dims[0], "rows": dims[1],
                                 "stride": strides[0], "box": (box[0], box[1]), "swizzle": swizzle})
            ctypes.memmove(addr, ctypes.c_uint64(base).value.to_bytes(8, "little"), 8)
            return 0
        _torch._cuda._encoder = lambda: encode

    def tearDown(self):
        _torch._cuda._encoder = self.saved_encoder
        torch, _torch._cuda.Function, _torch._cuda.use_primary_context, _torch.rk_compile, _cuda._cu = self.saved
        if torch is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = torch

    def args(self):
        """The last launch's arguments decoded by its instance's signature: {name: value}."""
        name, grid, stream, params = Recorder.launches[-1]
        self.assertEqual(stream, STREAM)
        p = next(p for p in reversed(list(ops._prepared.values())) if p.inst.name == name)
        self.assertEqual(ops.kernel_used(self.op)[0] if getattr(self, "op", None) else name, name)
        ctypes_of = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "f32": ctypes.c_float}
        out = {}
        for (n, ptr, t, role, _), addr in zip(p.sig, params):
            ct = ctypes.c_uint64 if ptr or role == "tensormap" else ctypes_of[t]   # a map: the base encoded
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

    def test_fast_path_new_tensors_and_shapes(self):
        """A repeated call takes the cached path: its launch gets the new
        tensors' addresses, a new output and the current stream; a changed
        shape or dtype prepares its own kernel."""
        x1, x2 = (Tensor(np.zeros((7, 300), np.float16)) for _ in range(2))
        w = Tensor(np.zeros(300, np.float16))
        y1 = ops.rms_norm(x1, w, 1e-5)
        a1, _, p = self.args()
        self.assertEqual((a1["X"], a1["Y"]), (x1.data_ptr(), y1.data_ptr()))
        self.assertAlmostEqual(a1["eps"], 1e-5)
        n_fast = len(_torch._fast)
        CURRENT["stream"] = 0xC0FFEE
        y2 = ops.rms_norm(x2, w, 2e-5)
        self.assertEqual(len(_torch._fast), n_fast)               # no new entry: the cached path ran
        self.assertIsNot(y2, y1)
        name, grid, stream, _ = Recorder.launches[-1]
        self.assertEqual(stream, 0xC0FFEE)
        CURRENT["stream"] = STREAM
        params = Recorder.launches[-1][3]
        got = {n: ctypes.cast(addr, ctypes.POINTER(ctypes.c_uint64 if ptr else ctypes.c_float))[0]
               for (n, ptr, _, _, _), addr in zip(p.sig, params)}
        self.assertEqual((got["X"], got["Gamma"], got["Y"]), (x2.data_ptr(), w.data_ptr(), y2.data_ptr()))
        self.assertAlmostEqual(got["eps"], 2e-5)
        x3 = Tensor(np.zeros((5, 1000), np.float16))
        ops.rms_norm(x3, Tensor(np.zeros(1000, np.float16)), 1e-5)
        a3, grid3, p3 = self.args()
        self.assertEqual((a3["X"], grid3), (x3.data_ptr(), p3.grid))
        self.assertEqual(p3.dims, (5, 1000))
        # a split-K matmul (a work buffer): the repeat passes its own zeroed buffer and the new tensors
        a, w = Tensor(np.zeros((256, 256), np.float16)), Tensor(np.zeros((256, 256), np.float16))
        ops.matmul(a, w.t())
        self.assertIn("Work", [n for n, *_ in self.args()[2].sig])
        n_fast = len(_torch._fast)
        a2 = Tensor(np.ones((256, 256), np.float16))
        c2 = ops.matmul(a2, w.t())
        self.assertEqual(len(_torch._fast), n_fast)
        g, _, _ = self.args()
        self.assertEqual((g["A"], g["B"], g["C"]), (a2.data_ptr(), w.data_ptr(), c2.data_ptr()))
        self.assertNotIn(g["Work"], (0, a2.data_ptr(), w.data_ptr(), c2.data_ptr()))
        # the repeat's work buffer is kept per stream and zeroed again before each launch
        wi = [s[0] for s in self.args()[2].sig].index("Work")
        work = np.ctypeslib.as_array(ctypes.cast(g["Work"], ctypes.POINTER(ctypes.c_float)), (1,))
        work[0] = 7.0                                     # what a split-K kernel leaves behind
        ops.matmul(a2, w.t())
        self.assertEqual(self.args()[0]["Work"], g["Work"])
        self.assertEqual(work[0], 0.0)
        CURRENT["stream"] = 0xBEEF                        # another stream: its own buffer
        ops.matmul(a2, w.t())
        CURRENT["stream"] = STREAM
        _, _, stream, params = Recorder.launches[-1]
        other = ctypes.cast(params[wi], ctypes.POINTER(ctypes.c_uint64))[0]
        self.assertEqual(stream, 0xBEEF)
        self.assertNotIn(other, (0, g["Work"]))
        with self.assertRaisesRegex(rocke.RockeError, "strides"):     # a view the first call would refuse
            ops.rms_norm(Tensor(np.zeros((7, 600), np.float16)[:, ::2]), w, 1e-5)

    def test_matmul_sm90a_tensor_maps(self):
        """Packed operands on a 9.0 device run sm_90a's wgmma kernel with A's and
        B's maps encoded over the tensors (again for new tensors on the cached
        path); a padded pitch runs sm_90's kernel, without maps."""
        M, N, K = 512, 512, 512
        a, w = Tensor(np.zeros((M, K), np.float16)), Tensor(np.zeros((N, K), np.float16))
        c = ops.matmul(a, w.t())
        name, target = ops.kernel_used("matmul")
        self.assertEqual(target, "sm_90a")
        self.assertIn("_pwgmma_", name)
        args, _, p = self.args()
        self.assertEqual((args["A"], args["B"], args["C"]), (a.data_ptr(), w.data_ptr(), c.data_ptr()))
        self.assertEqual((args["A_map"], args["B_map"]), (a.data_ptr(), w.data_ptr()))
        by_base = {e["base"]: e for e in self.encoded}
        self.assertEqual((by_base[a.data_ptr()]["cols"], by_base[a.data_ptr()]["rows"]), (K, M))
        self.assertEqual(by_base[a.data_ptr()]["stride"], K * 2)
        a2, w2 = Tensor(np.zeros((M, K), np.float16)), Tensor(np.zeros((N, K), np.float16))
        n = len(self.encoded)
        c2 = ops.matmul(a2, w2.t())
        args, _, _ = self.args()
        self.assertEqual((args["A"], args["B"], args["C"]), (a2.data_ptr(), w2.data_ptr(), c2.data_ptr()))
        self.assertEqual((args["A_map"], args["B_map"]), (a2.data_ptr(), w2.data_ptr()))
        self.assertEqual(len(self.encoded), n + 2)
        padded = Tensor(np.zeros((M, K + 8), np.float16)[:, :K])
        ops.matmul(padded, w.t())
        self.assertEqual(ops.kernel_used("matmul")[1], "sm_90")
        self.assertEqual(len(self.encoded), n + 2)

    def test_attention_sm90a_maps(self):
        """Dense attention on a 9.0 device: sm_90a's wgmma kernel, Q / K / V maps
        over the tensors; a bshd view gets the bshd kernel."""
        q = Tensor(np.zeros((2, 4, 300, 128), np.float16))
        k = Tensor(np.zeros((2, 2, 300, 128), np.float16))
        ops.attention(q, k, k, causal=True)
        name, target = ops.kernel_used("attention")
        self.assertEqual((target, "_ptwgmma" in name, "_lbhsd_" in name), ("sm_90a", True, True))
        args, _, _ = self.args()
        self.assertEqual((args["Q_map"], args["K_map"], args["V_map"]), (q.data_ptr(), k.data_ptr(), k.data_ptr()))
        e = next(e for e in self.encoded if e["base"] == q.data_ptr())
        self.assertEqual((e["rows"], e["cols"], e["stride"]), (2 * 4 * 300, 128, 256))
        qv = Tensor(np.zeros((2, 300, 4, 128), np.float16).transpose(0, 2, 1, 3))
        kv = Tensor(np.zeros((2, 300, 2, 128), np.float16).transpose(0, 2, 1, 3))
        ops.attention(qv, k, k)                               # q bshd, k bhsd: no one layout, mma.sync
        self.assertIn("_ptmma", ops.kernel_used("attention")[0])
        ops.attention(qv, kv, kv)
        self.assertIn("_lbshd_", ops.kernel_used("attention")[0])
        e = [e for e in self.encoded if e["base"] == qv.data_ptr()][-1]
        self.assertEqual((e["rows"], e["cols"], e["stride"]), (2 * 300, 4 * 128, 4 * 128 * 2))

    def test_refusals(self):
        x = Tensor(np.zeros((1, 2, 8, 64), np.float16))
        with self.assertRaisesRegex(rocke.RockeError, "argument 1 is a CPU tensor"):
            ops.attention(x, Tensor(x.a, cuda=False), x)
        with self.assertRaisesRegex(rocke.RockeError, "tensors on two devices .cuda:0 and cuda:1."):
            ops.attention(x, Tensor(x.a, index=1), x)
        with self.assertRaisesRegex(rocke.RockeError, "mixes numpy arrays and device tensors"):
            ops.kv_append(Tensor(np.zeros((2, 2, 64), np.float16)), Tensor(np.zeros((2, 2, 64), np.float16)),
                          np.zeros((1, 16, 2, 64), np.float16), None, None)


class Meta:
    """An FX node's example value: dims and dtype only."""

    def __init__(self, nd, dtype):
        self.nd, self.dtype = nd, dtype

    def dim(self):
        return self.nd


class Node:
    def __init__(self, op, target, args=(), kwargs=None, meta=None):
        self.op, self.target, self.args, self.kwargs = op, target, tuple(args), dict(kwargs or {})
        self.meta = {"example_value": meta} if meta is not None else {}
        self.users = []

    def replace_all_uses_with(self, new):
        self.replaced_by = new
        for n in self.graph.nodes if hasattr(self, "graph") else ():
            n.args = tuple(new if a is self else a for a in n.args)


class Graph:
    """The part of torch.fx.Graph the rewrite uses."""

    def __init__(self, nodes):
        self.nodes, self.inserted, self.erased, self.linted = list(nodes), [], [], False
        for n in self.nodes:
            n.graph = self

    def inserting_before(self, node):
        import contextlib
        return contextlib.nullcontext()

    def call_function(self, target, args):
        n = Node("call_function", target, args)
        n.graph = self
        self.inserted.append(n)
        return n

    def erase_node(self, node):
        self.erased.append(node)

    def lint(self):
        self.linted = True


class BackendRewrite(unittest.TestCase):
    """rocke.torch_backend's graph rewrite on a stand-in FX graph: which calls
    become torch.ops.rocke.* and with which arguments, and which stay."""

    def setUp(self):
        self.saved = sys.modules.get("torch")
        t = fake_torch()
        fns = {n: (lambda *a, **k: None) for n in ("softmax", "layer_norm", "rms_norm",
                                                 "scaled_dot_product_attention", "linear", "mm", "matmul")}
        for n in fns:
            fns[n].__name__ = n
        t.softmax, t.mm, t.matmul, t.layer_norm, t.rms_norm = (fns[n] for n in ("softmax", "mm", "matmul",
                                                                              "layer_norm", "rms_norm"))
        F = types.SimpleNamespace(softmax=lambda *a, **k: None, layer_norm=lambda *a, **k: None,
                                  rms_norm=fns["rms_norm"], linear=fns["linear"],
                                  scaled_dot_product_attention=fns["scaled_dot_product_attention"])
        t.nn = types.SimpleNamespace(functional=F)
        t.ops = types.SimpleNamespace(rocke=types.SimpleNamespace(
            **{n: "rocke::" + n for n in ("softmax", "rms_norm", "layer_norm", "attention", "matmul", "linear")}))
        sys.modules["torch"] = t
        self.t = t

    def tearDown(self):
        if self.saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved

    def test_rewrite(self):
        import operator
        t, F = self.t, self.t.nn.functional
        h = t.float16
        x3, q, w2, w1, x2 = (Node("placeholder", n, meta=m) for n, m in (
            ("x3", Meta(3, h)), ("q", Meta(4, h)), ("w2", Meta(2, h)), ("w1", Meta(1, h)), ("x2", Meta(2, h))))
        f32 = Node("placeholder", "f", meta=Meta(2, t.float32))
        nodes = [
            Node("call_function", F.scaled_dot_product_attention, (q, q, q), {"is_causal": True}),   # -> attention
            Node("call_function", F.scaled_dot_product_attention, (q, q, q, w2)),                    # a mask: stays
            Node("call_function", F.scaled_dot_product_attention, (q, q, q), {"dropout_p": 0.1}),    # dropout: stays
            Node("call_function", F.linear, (x3, w2)),                                               # -> linear
            Node("call_function", F.linear, (x3, w2, w1)),                                           # a bias: stays
            Node("call_function", operator.matmul, (x2, w2)),                                        # -> matmul
            Node("call_function", t.matmul, (x3, w2)),                                               # 3-D: stays
            Node("call_function", t.mm, (f32, f32)),                                                 # f32: stays
            Node("call_function", t.rms_norm, (x3, (256,), w1, 1e-6)),                               # -> rms_norm
            Node("call_method", "softmax", (x3, -1), meta=Meta(3, h)),                               # -> softmax
        ]
        norm = Node("call_function", t.rms_norm, (x3, (256,), w1, 1e-6), meta=Meta(3, h))           # -> rms_norm
        nodes += [norm, Node("call_function", F.linear, (norm, w2))]      # -> linear over the rocke rms_norm
        gm = types.SimpleNamespace(graph=Graph([x3, q, w2, w1, x2, f32] + nodes), recompile=lambda: None)
        done = _torch._rewrite(gm)
        self.assertEqual(done, {"attention": 1, "linear": 2, "matmul": 1, "rms_norm": 2, "softmax": 1})
        self.assertEqual(gm.graph.erased, [nodes[0], nodes[3], nodes[5], nodes[8], nodes[9], nodes[10], nodes[11]])
        new_norm = gm.graph.inserted[-2]
        self.assertEqual(gm.graph.inserted[-1].args, (new_norm, w2))
        got = {}
        for n in gm.graph.inserted:
            got.setdefault(n.target, n.args)          # the first replacement of each op
        self.assertEqual(got["rocke::attention"], (q, q, q, True, -1.0))
        self.assertEqual(got["rocke::linear"], (x3, w2))
        self.assertEqual(got["rocke::matmul"], (x2, w2))
        self.assertEqual(got["rocke::rms_norm"], (x3, w1, 1e-6))
        self.assertEqual(got["rocke::softmax"], (x3,))
        self.assertTrue(gm.graph.linted)


if __name__ == "__main__":
    unittest.main()
