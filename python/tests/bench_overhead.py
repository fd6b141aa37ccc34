"""Per-call host overhead of rocke.ops (cached) from Python to the launch:
emulator path on numpy (always), and the CUDA path on torch next to the torch
op when torch and a GPU are present. Prints one line per measurement.
usage: python3 tests/bench_overhead.py [calls]"""
import sys
import time

import numpy as np

import rocke
from rocke import ops
from rocke._lib import lib


def per_call_us(f, n):
    f()
    t = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t) / n * 1e6


def main(n):
    x = np.random.randn(1, 32).astype(np.float32)
    full = per_call_us(lambda: ops.softmax(x), n)
    # the same calls with rk_emu_launch replaced by a stub that returns RK_OK:
    # what is left is the host work from the Python call to the launch
    from rocke import _emu

    class _StubLib:
        rk_emu_launch = staticmethod(lambda *a: 0)

        def __getattr__(self, name):
            return getattr(lib, name)
    _emu.lib = _StubLib()
    try:
        host = per_call_us(lambda: ops.softmax(x), n)
    finally:
        _emu.lib = lib
    print("emulator softmax 1x32 f32: %.1f us per rocke.ops call, of which %.1f us host overhead (Python "
          "call to launch, cached: dispatch, output allocation, buffer registration) and the rest the "
          "emulated kernel" % (full, host))
    try:
        import torch
    except ImportError:
        stand_in_cuda(n)
        print("cuda: torch not installed, skipped")
        return
    if not torch.cuda.is_available():
        print("cuda: no GPU, skipped")
        return
    t = torch.randn(1, 32, device="cuda", dtype=torch.float16)
    rk = per_call_us(lambda: ops.softmax(t), n)
    th = per_call_us(lambda: torch.softmax(t, -1), n)
    torch.cuda.synchronize()
    print("cuda softmax 1x32 f16: %.1f us per rocke.ops call, %.1f us per torch.softmax call (launch only, "
          "no sync)" % (rk, th))
    # a split-K matmul: its repeat re-zeroes a kept work buffer (no allocation beyond the output)
    a, w = (torch.randn(256, 256, device="cuda", dtype=torch.float16) for _ in range(2))
    rk = per_call_us(lambda: ops.matmul(a, w.t()), n)
    th = per_call_us(lambda: torch.mm(a, w.t()), n)
    torch.cuda.synchronize()
    print("cuda matmul 256^3 f16 (a @ w.t()): %.1f us per rocke.ops call, %.1f us per torch.mm call (launch "
          "only, no sync)" % (rk, th))


def stand_in_cuda(n):
    """The CUDA path's host work on this CPU without torch or a GPU: the
    stand-in torch of test_torch_kit_fake (its tensors' addresses and
    strides computed once, outputs from a pool, so what is timed is rocke's
    own path) and a launch that returns at once; real torch adds its own
    allocation and attribute costs, the driver its launch."""
    import types
    import test_torch_kit_fake as fake
    from rocke import _torch

    class T(fake.Tensor):
        def __init__(self, a):
            fake.Tensor.__init__(self, a)
            self._p, self._s = a.ctypes.data, tuple(s // a.itemsize for s in a.strides)

        def data_ptr(self):
            return self._p

        def stride(self):
            return self._s

        def t(self):
            return T(self.a.T)

        def zero_(self):             # on the GPU an asynchronous fill: counted, not done
            fills[0] += 1
            return self
    T.__module__ = "torch"
    pool, allocs, fills = {}, [0], [0]

    def empty(shape, dtype, device):
        allocs[0] += 1
        key = (tuple(shape) if not isinstance(shape, int) else (shape,), dtype)
        if key not in pool:
            pool[key] = T(np.zeros(key[0], dtype))
        return pool[key]
    ft = fake.fake_torch()
    ft.Tensor, ft.empty, ft.zeros = T, empty, empty
    saved = sys.modules.get("torch"), _torch._cuda.Function, _torch._cuda.use_primary_context, _torch._cuda._encoder
    sys.modules["torch"] = ft
    _torch._cuda.Function = lambda image, name, dyn, *a: types.SimpleNamespace(launch=lambda *a: None)
    _torch._cuda.use_primary_context = lambda i: None
    _torch._cuda._encoder = lambda: (lambda *a: 0)
    try:
        x, w = T(np.zeros((64, 4096), np.float16)), T(np.zeros(4096, np.float16))
        a, bt = T(np.zeros((256, 256), np.float16)), T(np.zeros((256, 256), np.float16)).t()
        for name, f in (("softmax 64x4096", lambda: ops.softmax(x)), ("rms_norm 64x4096", lambda: ops.rms_norm(x, w)),
                        ("matmul 256^3 (sm_90a)", lambda: ops.matmul(a, bt))):
            best = min(per_call_us(f, n) for _ in range(5))
            allocs[0] = fills[0] = 0
            f()
            # each allocation is a caching-allocator call in real torch (about 1-2 us on the H200's host)
            print("cuda host path (stand-in torch, launch stubbed) %-22s %.1f us per call, %d torch allocations, "
                  "%d fills" % (name, best, allocs[0], fills[0]))
    finally:
        torch, _torch._cuda.Function, _torch._cuda.use_primary_context, _torch._cuda._encoder = saved
        if torch is None:
            del sys.modules["torch"]


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
    print("rocke", rocke.__version__, "library", rocke.lib_path)
