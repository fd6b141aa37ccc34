"""Per-call host overhead of rocke.ops (cached) from Python to the launch:
emulator path on numpy (always); on a GPU the CUDA path next to the torch op
with a breakdown of where a cached call's time goes; without a GPU the CUDA
path's host work with the launch stubbed at the driver (stub_driver.py: the
ctypes calls are made, the driver does nothing), on real torch's CPU tensors
when torch is installed, else on the stand-in torch of test_torch_kit_fake.
Prints one line per measurement.
usage: python3 tests/bench_overhead.py [calls]"""
import sys
import time
import types

import numpy as np

import rocke
from rocke import _cuda, _torch, ops
from rocke._lib import lib


def per_call_us(f, n, rounds=5, clock=time.perf_counter):
    """The best of rounds of n calls, in us per call."""
    f()
    best = float("inf")
    for _ in range(rounds):
        t = clock()
        for _ in range(n):
            f()
        best = min(best, (clock() - t) / n * 1e6)
    return best


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
        stubbed_host_path(n, None)
        return
    if not torch.cuda.is_available():
        stubbed_host_path(n, torch)
        return
    on_gpu(torch, n)


def entry(op):
    """The cached entry (_FastCall) of op's last kept call."""
    return [f for k, f in _torch._fast.items() if k[0] == op][-1]


def on_gpu(torch, n):
    t = torch.randn(1, 32, device="cuda", dtype=torch.float16)
    w = torch.randn(32, device="cuda", dtype=torch.float16)
    rows = [("softmax 1x32 f16", lambda: ops.softmax(t), "torch.softmax", lambda: torch.softmax(t, -1)),
            ("rms_norm 1x32 f16", lambda: ops.rms_norm(t, w, 1e-6), "F.rms_norm",
             lambda: torch.nn.functional.rms_norm(t, (32,), w, 1e-6))]
    a, wm = (torch.randn(256, 256, device="cuda", dtype=torch.float16) for _ in range(2))
    rows.append(("matmul 256^3 f16 (a @ w.t(), split-K)", lambda: ops.matmul(a, wm.t()), "torch.mm",
                 lambda: torch.mm(a, wm.t())))
    for name, f, tname, tf in rows:
        rk = per_call_us(f, n)
        th = per_call_us(tf, n)
        torch.cuda.synchronize()
        c0 = dict(_torch.counters)
        a0 = torch.cuda.memory_stats().get("allocation.all.allocated", 0)
        for _ in range(100):
            f()
        torch.cuda.synchronize()
        per = {k: (_torch.counters[k] - c0[k]) / 100 for k in c0}
        allocs = (torch.cuda.memory_stats().get("allocation.all.allocated", 0) - a0) / 100
        print("cuda %-38s %.1f us per rocke.ops call, %.1f us per %s call (launch only, no sync); per rocke call: "
              "%.0f checked calls, %.0f caching-allocator allocations, %.0f work fills"
              % (name, rk, th, tname, per["checked"], allocs, per["work_fills"]))
    breakdown(torch, t, n)


def breakdown(torch, t, n):
    """Where a cached softmax call's host time goes on this machine: the parts
    timed alone (the key and its lookup, the output's allocation, the current
    stream, the packed driver launch of the same kernel), the rest is Python
    between them."""
    y = ops.softmax(t)           # keeps the output the timed raw launches write alive
    f = entry("softmax")
    lp = f.launch
    raw = torch._C._cuda_getCurrentRawStream
    x_slot, y_slot = f.ins[0][0], f.out_slots[0][0]

    def point():                 # the slots at t and y: what the timed raw launches read and write
        x_slot.value = t.data_ptr()
        y_slot.value = y.data_ptr()
    parts = [("key + lookup", lambda: _torch._fast.get(_torch._call_key("softmax", {}, None, [t]))),
             ("torch.empty_like", lambda: torch.empty_like(t)),
             ("current stream", lambda: raw(0)),
             ("2 data_ptr + slot writes", point),
             ("packed launch", lambda: lp.call(*lp.args))]
    total = per_call_us(lambda: ops.softmax(t), n)
    point()
    got = [(name, per_call_us(g, n)) for name, g in parts]
    torch.cuda.synchronize()
    rest = total - sum(us for _, us in got)
    print("cuda softmax 1x32 breakdown: %.1f us per call = %s + %.2f the rest (Python between them)"
          % (total, " + ".join("%.2f (%s)" % (us, name) for name, us in got), rest))


def stubbed_host_path(n, torch):
    """The CUDA path's host work on this CPU without a GPU: the calls' keys,
    allocations and argument writes as on a GPU, the launch and the memsets
    made through ctypes into the stub driver. With real torch (CPU tensors
    taken for CUDA ones: is_cuda patched, device index 0, stream 0) the
    allocations are torch's CPU allocator's; with the stand-in torch its
    tensors' addresses and strides are computed once and outputs come from a
    pool, so what is timed is rocke's own path. On a GPU machine torch's CUDA
    allocator and the driver's launch come on top."""
    import stub_driver
    cu = stub_driver.load()
    if cu is None:
        print("cuda host path: no C compiler for the stub driver, skipped")
        return
    saved = (sys.modules.get("torch"), _cuda._cu, _torch._cuda.use_primary_context, _torch.rk_compile)
    undo = []
    allocs = [0]
    if torch is None:
        what = "stand-in torch"
        T, ft, allocs = stand_in_torch()
        sys.modules["torch"] = ft
        make = lambda shape: T(np.zeros(shape, np.float16))      # noqa: E731
    else:
        what = "torch %s CPU tensors" % torch.__version__
        undo = pose_as_cuda(torch)
        make = lambda shape: torch.zeros(shape, dtype=torch.float16)      # noqa: E731
    _cuda.bind(cu)
    _torch._cuda.use_primary_context = lambda i: None
    _torch.rk_compile = lambda k, target: types.SimpleNamespace(cubin=b"", binary=b"stub", kernel_name=k.name,
                                                                dyn_smem_min=0)
    try:
        x, w = make((1, 32)), make((32,))
        a, bt = make((256, 256)), make((256, 256)).t()
        for name, f in (("softmax 1x32", lambda: ops.softmax(x)), ("rms_norm 1x32", lambda: ops.rms_norm(x, w)),
                        ("matmul 256^3 (split-K)", lambda: ops.matmul(a, bt))):
            # CPU time: the 2-core CI box is shared, and the wall clock counts other processes' time
            best = per_call_us(f, n, rounds=15, clock=time.process_time)
            c0, a0 = dict(_torch.counters), allocs[0]
            f()
            per = {k: _torch.counters[k] - c0[k] for k in c0}
            alloc = ", %d torch allocations" % (allocs[0] - a0) if torch is None else ""
            print("cuda host path (%s, launch stubbed at the driver) %-22s %.2f us per call (CPU time); per call: "
                  "%d checked calls%s, %d work fills (driver memsets)" % (what, name, best, per["checked"], alloc,
                                                                        per["work_fills"]))
    finally:
        for obj, attr, value in reversed(undo):
            if value is _MISSING:
                delattr(obj, attr)
            else:
                setattr(obj, attr, value)
        torch_mod, _cuda._cu, _torch._cuda.use_primary_context, _torch.rk_compile = saved
        if torch_mod is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = torch_mod
        _torch._fast.clear()
        _torch._plans.clear()
        _torch._functions.clear()


_MISSING = object()


def pose_as_cuda(torch):
    """Make CPU tensors pass the CUDA path's checks (device index 0, stream 0);
    returns what to restore: [(object, attribute, old value or _MISSING)]."""
    undo = []

    def put(obj, attr, value):
        undo.append((obj, attr, obj.__dict__.get(attr, _MISSING) if isinstance(obj, type) else
                     getattr(obj, attr, _MISSING)))
        setattr(obj, attr, value)
    put(torch.Tensor, "is_cuda", property(lambda self: True))
    put(torch.cuda, "current_device", lambda: 0)
    put(torch.cuda, "get_device_capability", lambda i=0: (9, 0))
    put(torch._C, "_cuda_getCurrentRawStream", lambda i: 0)
    return undo


def stand_in_torch():
    """The stand-in torch of test_torch_kit_fake with tensors whose addresses
    and strides are computed once and outputs from a pool (allocations counted)."""
    import test_torch_kit_fake as fake

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
    T.__module__ = "torch"
    pool, allocs = {}, [0]

    def empty(shape, dtype, device):
        allocs[0] += 1
        key = (tuple(shape) if not isinstance(shape, int) else (shape,), dtype)
        if key not in pool:
            pool[key] = T(np.zeros(key[0], dtype))
        return pool[key]
    ft = fake.fake_torch()
    ft.Tensor, ft.empty, ft.zeros = T, empty, empty
    ft.empty_like = lambda x: empty(x.shape, x.dtype, None)
    return T, ft, allocs


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
    print("rocke", rocke.__version__, "library", rocke.lib_path)
