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


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
    print("rocke", rocke.__version__, "library", rocke.lib_path)
