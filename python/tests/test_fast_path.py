"""The cached CUDA path (rocke/_torch.py _FastCall) end to end without a GPU:
the stand-in torch of test_torch_kit_fake (numpy-backed "CUDA" tensors) and a
stand-in driver that runs every launch on the emulator with exactly the
arguments the packed launch hands the driver (pointers are the tensors' host
addresses). A cache hit builds nothing (rocke._torch.counters, key builds
counted); every change the call key stands for (a shape, a dtype, strides, an
operand's alignment, the device), every per-call value (new data at a new
address, eps, the stream) and another entry's scalars in a shared plan give
results equal to references computed in double, and the checked path runs
exactly when the key changed.
With a C compiler, the packed launch is also checked at the C boundary
against stub_driver.py's libcuda (the values the driver receives)."""
import ctypes
import sys
import types
import unittest

import numpy as np

import rocke
import stub_driver
import test_torch_kit_fake as fake
from rocke import _cuda, _emu, _torch, ops
from rocke._sig_launch import param_ctype

_roots = []                 # every numpy buffer behind a stand-in tensor: the "device memory"


def _root(a):
    while a.base is not None and isinstance(a.base, np.ndarray):
        a = a.base
    return a


class T(fake.Tensor):
    """A stand-in CUDA tensor whose buffer the emulating driver can find."""

    def __init__(self, a, index=0, cuda=True):
        fake.Tensor.__init__(self, a, index, cuda)
        _roots.append(_root(a))

    def t(self):
        return T(self.a.T, self.device.index)

    def contiguous(self):
        return self if self.is_contiguous() else T(np.ascontiguousarray(self.a), self.device.index)


T.__module__ = "torch"


def span_from(addr):
    """Bytes from addr to the end of the stand-in buffer that holds it."""
    for r in _roots:
        start = r.ctypes.data
        if start <= addr < start + r.nbytes:
            return start + r.nbytes - addr
    raise AssertionError("address %#x is in no stand-in tensor" % addr)


def fake_torch():
    t = fake.fake_torch()
    t.Tensor = T
    t.empty = lambda shape, dtype, device: T(np.empty(shape, dtype), device.index)
    t.zeros = lambda n, dtype, device: T(np.zeros(n, dtype), device.index)
    t.empty_like = lambda x: T(np.empty_like(x.a), x.device.index)
    return t


class Function:
    """A stand-in _cuda.Function: a handle naming the kernel; launches go
    through the real _cuda.PackedLaunch to EmuDriver."""
    kernels = {}

    def __init__(self, image, name, dyn, cooperative=False):
        self.cooperative, self.dyn_smem = cooperative, dyn
        self.fn = ctypes.c_void_p(0x2000 + len(Function.kernels))
        Function.kernels[self.fn.value] = name

    def packed(self, grid, block, params):
        return _cuda.PackedLaunch(self, grid, block, params)


class EmuDriver:
    """cuLaunchKernelEx / cuLaunchKernel on the emulator: the argument array
    decoded by the kernel's signature, each pointer registered with the bytes
    left in its stand-in buffer; cuMemsetD32Async fills host memory."""

    def __init__(self):
        self.launches = []       # (kernel name, stream)
        self.memsets = []        # (address, words, stream)

    def cuLaunchKernelEx(self, cfg, fn, params, extra):
        c = cfg._obj
        self.run(fn.value, (c.gridDimX, c.gridDimY, c.gridDimZ), (c.blockDimX, c.blockDimY, c.blockDimZ),
                 c.hStream or 0, params)
        return 0

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        self.run(fn.value, (gx.value, gy.value, gz.value), (bx.value, by.value, bz.value), stream.value or 0,
                 params)
        return 0

    def cuMemsetD32Async(self, dst, value, count, stream):
        words = (ctypes.c_uint32 * count.value).from_address(dst.value)
        for i in range(count.value):
            words[i] = value.value
        self.memsets.append((dst.value, count.value, stream.value or 0))
        return 0

    def run(self, handle, grid, block, stream, params):
        name = Function.kernels[handle]
        p = next(p for p in ops._prepared.values() if p.inst.name == name)
        kernel = ops._built[(name, p.target)]
        types_ = [param_ctype(ptr, t, role) for _, ptr, t, role, _ in p.sig]
        launcher = _emu.EmuLauncher(p.target, kernel, [(ct, s[0]) for ct, s in zip(types_, p.sig)], grid, block)
        bufs, scalars = [], {}
        for i, ((_, ptr, _, role, _), ct) in enumerate(zip(p.sig, types_)):
            assert role != "tensormap", "these tests keep to kernels without tensor maps"
            value = ctypes.cast(params[i], ctypes.POINTER(ct))[0]
            if ptr:
                bufs.append((value, span_from(value)))
            else:
                scalars[i] = value
        launcher.launch(bufs, scalars)
        self.launches.append((name, stream))


def rnd(shape, dt, pitch=None):
    """Fresh random values; pitch: a wider row in memory (a padded leading dimension)."""
    if pitch is None:
        return np.random.randn(*shape).astype(dt)
    return np.random.randn(shape[0], pitch).astype(dt)[:, :shape[1]]


def softmax_ref(x):
    d = x.astype(np.float64)
    e = np.exp(d - d.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def rms_ref(x, w, eps):
    d = x.astype(np.float64)
    return d / np.sqrt((d * d).mean(-1, keepdims=True) + eps) * w.astype(np.float64)


class FastPath(unittest.TestCase):
    def setUp(self):
        self.saved = (sys.modules.get("torch"), _torch._cuda.Function, _torch._cuda.use_primary_context,
                      _torch.rk_compile, _cuda._cu, _torch._call_key)
        sys.modules["torch"] = fake_torch()
        _torch._cuda.Function = Function
        _torch._cuda.use_primary_context = lambda i: None
        _torch.rk_compile = lambda k, target: types.SimpleNamespace(cubin=b"", binary=b"", kernel_name=k.name,
                                                                    dyn_smem_min=0)
        self.driver = _cuda._cu = EmuDriver()
        fake.CURRENT["stream"] = fake.STREAM
        self.keys = [0]
        key_of = _torch._call_key

        def counted(*a):
            self.keys[0] += 1
            return key_of(*a)
        _torch._call_key = counted
        for cache in (_torch._fast, _torch._plans, _torch._functions):
            cache.clear()
        np.random.seed(19)

    def tearDown(self):
        (torch, _torch._cuda.Function, _torch._cuda.use_primary_context, _torch.rk_compile, _cuda._cu,
         _torch._call_key) = self.saved
        if torch is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = torch
        for cache in (_torch._fast, _torch._plans, _torch._functions):
            cache.clear()
        _roots.clear()

    def close(self, got, ref, tol):
        self.assertEqual(got.shape, ref.shape)
        np.testing.assert_allclose(got.a.astype(np.float64), ref, rtol=tol, atol=tol)

    def counts(self):
        c = dict(_torch.counters)
        c["key builds"] = self.keys[0]
        c["entries kept"] = len(_torch._fast)
        c["launches"] = len(self.driver.launches)
        return c

    def delta(self, before, **expected):
        """Assert the counters moved by exactly `expected` (every other one by 0)."""
        now = self.counts()
        moved = {k: now[k] - before[k] for k in now if now[k] != before[k]}
        self.assertEqual(moved, expected)

    def test_hit_builds_nothing(self):
        """Repeats on new tensors: one key build (the lookup) and one launch
        each; no checked call, plan, packed launch, entry or allocation beyond
        the output — and each result right for its own input."""
        x = T(rnd((7, 300), np.float16))
        self.close(ops.softmax(x), softmax_ref(x.a), 4e-3)
        f = list(_torch._fast.values())[-1]
        self.assertNotIn("for ", f.source)              # the repeat is written out, no loop over slots
        c = self.counts()
        for _ in range(3):
            x = T(rnd((7, 300), np.float16))
            self.close(ops.softmax(x), softmax_ref(x.a), 4e-3)
        self.delta(c, **{"key builds": 3, "launches": 3})
        x = T(rnd((5, 300), np.float16))                # a miss: the lookup's key, then the checked path's
        c = self.counts()
        self.close(ops.softmax(x), softmax_ref(x.a), 4e-3)
        self.delta(c, **{"key builds": 2, "launches": 1, "checked": 1, "keys": 1, "entries": 1, "entries kept": 1,
                         "packs": 1, "plans": 1, "scalar_writes": 1})

    def test_outputs_of_a_subclass_input(self):
        """An output shaped as its input comes from empty_like only for a plain
        tensor; a subclass's call (its own entry: the type is in the key)
        allocates with empty, so the result is a plain tensor either way."""
        class Sub(T):
            pass
        Sub.__module__ = "torch"
        x = T(rnd((3, 40), np.float32))
        ops.softmax(x)
        self.assertIn("empty_like(inputs[0])", list(_torch._fast.values())[-1].source)
        s = Sub(rnd((3, 40), np.float32))
        y = ops.softmax(s)
        self.assertIs(type(y), T)
        self.close(y, softmax_ref(s.a), 2e-5)
        self.assertIn("empty(shapes[0]", list(_torch._fast.values())[-1].source)
        self.assertEqual(len(_torch._fast), 2)

    def test_changes_the_key_stands_for(self):
        """Shape, dtype, strides, device and stream: each takes the checked path
        (or, for the stream, the hit with the new stream) and computes right."""
        w = T(rnd((300,), np.float16))
        x = T(rnd((7, 300), np.float16))
        self.close(ops.rms_norm(x, w, 0.25), rms_ref(x.a, w.a, 0.25), 8e-3)      # the checked call's eps
        self.assertEqual(self.driver.launches[-1][1], fake.STREAM)                  # and its stream
        c = self.counts()
        x2 = T(rnd((7, 300), np.float16))
        self.close(ops.rms_norm(x2, w, 0.5), rms_ref(x2.a, w.a, 0.5), 8e-3)        # eps is written per call
        self.delta(c, **{"key builds": 1, "launches": 1})
        for x3, w3 in ((T(rnd((4, 300), np.float16)), w),                      # shape
                       (T(rnd((7, 300), np.float32)), T(rnd((300,), np.float32))),   # dtype
                       (T(rnd((7, 300), np.float16), index=1), T(w.a, index=1))):    # device
            c = self.counts()
            self.close(ops.rms_norm(x3, w3, 1e-5), rms_ref(x3.a, w3.a, 1e-5), 8e-3)
            self.assertEqual(self.counts()["checked"], c["checked"] + 1)
        c = self.counts()
        with self.assertRaisesRegex(rocke.RockeError, "strides"):                   # strides: refused, not stale
            ops.rms_norm(T(rnd((7, 600), np.float16)[:, ::2]), w, 1e-5)
        self.assertEqual(self.counts()["launches"], c["launches"])
        fake.CURRENT["stream"] = 0x7F00DEADBEE0                                     # stream: the hit, on it
        c = self.counts()
        x4 = T(rnd((7, 300), np.float16))
        self.close(ops.rms_norm(x4, w, 1e-5), rms_ref(x4.a, w.a, 1e-5), 8e-3)
        self.delta(c, **{"key builds": 1, "launches": 1})
        self.assertEqual(self.driver.launches[-1][1], 0x7F00DEADBEE0)

    def test_shared_plan_scalars(self):
        """Two cached matmuls of one plan (same shape, knobs and kernel; A's
        pitch differs, so lda does): alternating hits each launch with their
        own leading dimension."""
        M, N, K = 33, 40, 48
        w = T(rnd((N, K), np.float16, pitch=K + 8))                    # b = w.t(): column-major, padded
        calls = []
        for pitch in (K + 8, K + 16):
            a = T(rnd((M, K), np.float16, pitch=pitch))
            calls.append((pitch, a))
            ref = a.a.astype(np.float64) @ w.a.T.astype(np.float64)
            self.close(ops.matmul(a, w.t()), ref, 3e-2)
        self.assertEqual(len(_torch._plans), 1)
        c = self.counts()
        for pitch, _ in calls * 2:
            a = T(rnd((M, K), np.float16, pitch=pitch))
            ref = a.a.astype(np.float64) @ w.a.T.astype(np.float64)
            self.close(ops.matmul(a, w.t()), ref, 3e-2)
        self.delta(c, **{"key builds": 4, "launches": 4, "scalar_writes": 4})

    def test_alignment_and_layout(self):
        """matmul's key holds each operand's address modulo 16 and its strides:
        an operand 2 bytes off, or row-major instead of transposed, is a new
        entry with its own kernel, and right."""
        M, N, K = 17, 24, 40
        a = T(rnd((M, K), np.float16, pitch=K + 8))
        w = T(rnd((N, K), np.float16, pitch=K + 8))
        ref = lambda a, b: a.astype(np.float64) @ b.astype(np.float64)      # noqa: E731
        self.close(ops.matmul(a, w.t()), ref(a.a, w.a.T), 3e-2)
        off = np.zeros(M * (K + 8) + 8, np.float16)[1:1 + M * (K + 8)].reshape(M, K + 8)[:, :K]
        off[...] = rnd((M, K), np.float16)
        a2 = T(off)
        self.assertNotEqual(a2.data_ptr() % 16, a.data_ptr() % 16)
        c = self.counts()
        self.close(ops.matmul(a2, w.t()), ref(a2.a, w.a.T), 3e-2)
        self.assertEqual(self.counts()["checked"], c["checked"] + 1)
        b = T(rnd((K, N), np.float16, pitch=N + 8))                          # row-major B
        c = self.counts()
        self.close(ops.matmul(a, b), ref(a.a, b.a), 3e-2)
        self.assertEqual(self.counts()["checked"], c["checked"] + 1)

    def test_work_buffer_refilled(self):
        """Split-K's work buffer is kept per stream and re-zeroed by a driver
        memset before each hit: garbage left in it changes nothing; another
        stream gets its own buffer."""
        M, N, K = 20, 24, 64
        w = T(rnd((N, K), np.float16, pitch=K + 8))
        a = T(rnd((M, K), np.float16, pitch=K + 8))
        ref = lambda a: a.astype(np.float64) @ w.a.T.astype(np.float64)      # noqa: E731
        self.close(ops.matmul(a, w.t(), split_k=2), ref(a.a), 3e-2)
        c = self.counts()
        a = T(rnd((M, K), np.float16, pitch=K + 8))
        self.close(ops.matmul(a, w.t(), split_k=2), ref(a.a), 3e-2)
        f = list(_torch._fast.values())[-1]
        (work,), _ = f.work_bufs[fake.STREAM]
        # the first hit also writes its scalars: the checked call's own entry wrote them last
        self.delta(c, **{"key builds": 1, "launches": 1, "work_allocs": 1, "work_fills": 1, "scalar_writes": 1})
        self.assertEqual(self.driver.memsets[-1], (work.data_ptr(), work.a.size, fake.STREAM))
        work.a[...] = 12345.0                       # what a kernel that failed half way could leave
        c = self.counts()
        a = T(rnd((M, K), np.float16, pitch=K + 8))
        self.close(ops.matmul(a, w.t(), split_k=2), ref(a.a), 3e-2)
        self.delta(c, **{"key builds": 1, "launches": 1, "work_fills": 1})
        fake.CURRENT["stream"] = 0xBEEF
        self.close(ops.matmul(a, w.t(), split_k=2), ref(a.a), 3e-2)
        self.assertEqual(set(f.work_bufs), {fake.STREAM, 0xBEEF})
        self.assertNotEqual(f.work_bufs[0xBEEF][0][0].data_ptr(), work.data_ptr())
        self.assertEqual(self.driver.memsets[-1][2], 0xBEEF)


@unittest.skipIf(stub_driver.compiler() is None, "no C compiler for the stub driver")
class PackedLaunchAtTheDriver(unittest.TestCase):
    """What the packed launch hands a C libcuda (stub_driver.py): the
    function handle, grid, block, shared memory, a 64-bit stream and the
    argument array, through cuLaunchKernelEx with no attribute, or through
    cuLaunchKernel on a driver without it; the packed memset."""

    def setUp(self):
        self.lib = stub_driver.load()
        self.saved = _cuda._cu
        _cuda.bind(self.lib)

    def tearDown(self):
        _cuda._cu = self.saved

    def check(self, cu, via_ex):
        _cuda._cu = cu
        fn = _cuda.Function(b"stub image", "k", 1024)
        slots = (ctypes.c_uint64 * 2)(0x1234, 0x5678)
        params = (ctypes.c_void_p * 2)(ctypes.addressof(slots), ctypes.addressof(slots) + 8)
        lp = fn.packed((7, 3, 1), (128, 1, 1), params)
        self.assertEqual(lp.cfg is not None, via_ex)
        before = stub_driver.last_launch(self.lib).launches
        lp.launch(0x7F00DEADBEE0)
        got = stub_driver.last_launch(self.lib)
        self.assertEqual(got.launches, before + 1)
        self.assertEqual((got.fn, tuple(got.grid), tuple(got.block), got.smem, got.stream, got.params, got.extra),
                         (0xF00, (7, 3, 1), (128, 1, 1), 1024, 0x7F00DEADBEE0, ctypes.addressof(params), 0))
        if via_ex:
            self.assertEqual(stub_driver.last_num_attrs(self.lib), 0)

    def test_launch_ex(self):
        self.check(self.lib, True)

    def test_cooperative(self):
        fn = _cuda.Function(b"stub image", "k", 0, cooperative=True)
        lp = fn.packed((132, 1, 1), (256, 1, 1), (ctypes.c_void_p * 1)())
        lp.launch(0x7F00DEADBEE0)
        got = stub_driver.last_launch(self.lib)
        self.assertEqual((tuple(got.grid), got.stream, stub_driver.last_num_attrs(self.lib)),
                         ((132, 1, 1), 0x7F00DEADBEE0, 1))
        attr = lp.cfg.attrs[0]
        self.assertEqual((attr.id, ctypes.c_int.from_buffer(attr.value).value), (2, 1))

    def test_launch_without_ex(self):
        lib = self.lib

        class NoEx:                       # a driver older than CUDA 12
            def __getattr__(self, name):
                if name == "cuLaunchKernelEx":
                    raise AttributeError(name)
                return getattr(lib, name)
        self.check(NoEx(), False)

    def test_memset(self):
        buf = (ctypes.c_uint32 * 5)(*range(1, 6))
        stub_driver.memset_writes(self.lib, True)
        try:
            _cuda.PackedMemset(ctypes.addressof(buf), 4, 0x7F00DEADBEE0)()
        finally:
            stub_driver.memset_writes(self.lib, False)
        m = stub_driver.last_memset(self.lib)
        self.assertEqual((m.dst, m.value, m.count, m.stream), (ctypes.addressof(buf), 0, 4, 0x7F00DEADBEE0))
        self.assertEqual(list(buf), [0, 0, 0, 0, 5])


if __name__ == "__main__":
    unittest.main()
