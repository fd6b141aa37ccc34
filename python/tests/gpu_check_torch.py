"""GPU check for the Python package (run on a CUDA machine with torch):
every op against torch on CUDA tensors (f16, bf16, f32; odd shapes), the bad
inputs (CPU tensor, float64, non-contiguous, two devices), launches on the
current stream without a sync, the custom ops inside torch.compile without
graph breaks, and a small block compiled with rocke.torch_backend against
eager. Prints PASS/FAIL per check; exit 1 on any failure.
usage: ROCKE_LIB_DIR=build PYTHONPATH=python python3 python/tests/gpu_check_torch.py"""
import sys
import traceback

import torch

import rocke
from rocke import ops

F = torch.nn.functional
DT = (torch.float16, torch.bfloat16, torch.float32)
TOL = {torch.float16: 5e-3, torch.bfloat16: 3e-2, torch.float32: 2e-5}
results = []


def check(name):
    def deco(f):
        try:
            f()
            results.append((name, "PASS", ""))
        except Exception as e:     # report and go on
            results.append((name, "FAIL", "%s: %s" % (type(e).__name__, e)))
            traceback.print_exc()
        return f
    return deco


def close(got, ref, dt, scale=1.0):
    torch.testing.assert_close(got.float(), ref.float(), rtol=TOL[dt] * scale, atol=TOL[dt] * scale)


def rnd(*shape, dt=torch.float32):
    return torch.randn(*shape, device="cuda", dtype=dt)


@check("softmax")
def _():
    for dt in DT:
        x = rnd(37, 1000, dt=dt)
        close(ops.softmax(x), torch.softmax(x.float(), -1), dt)


@check("rms_norm / layer_norm (+ residual)")
def _():
    for dt in DT:
        x, r, w, b = rnd(19, 4099, dt=dt), rnd(19, 4099, dt=dt), rnd(4099, dt=dt), rnd(4099, dt=dt)
        close(ops.rms_norm(x, w, 1e-6), F.rms_norm(x.float(), (4099,), w.float(), 1e-6), dt, 4)
        close(ops.layer_norm(x, w, b, 1e-5), F.layer_norm(x.float(), (4099,), w.float(), b.float(), 1e-5), dt, 4)
        y, h = ops.rms_norm(x, w, 1e-6, residual=r)
        close(h, x + r, dt)


@check("elementwise, reduce, transpose")
def _():
    for dt in DT:
        a, b = rnd(3, 70001, dt=dt), rnd(3, 70001, dt=dt)
        close(ops.add(a, b), a.float() + b.float(), dt)
        close(ops.mul(a, b), a.float() * b.float(), dt)
        close(ops.relu(a), torch.relu(a.float()), dt)
        close(ops.silu(a), F.silu(a.float()), dt, 4)
        close(ops.reduce(a, "sum"), a.float().sum(-1), dt, 50)
        close(ops.reduce(a, "max"), a.float().amax(-1), dt)
        t = rnd(333, 517, dt=dt)
        torch.testing.assert_close(ops.transpose(t), t.t().contiguous(), rtol=0, atol=0)


@check("bad inputs raise RockeError naming the problem")
def _():
    cases = [(lambda: ops.softmax(torch.randn(4, 8)), "CPU tensor"),
             (lambda: ops.softmax(rnd(4, 8).double()), "not served"),
             (lambda: ops.softmax(rnd(8, 4).t()), "strides"),
             (lambda: ops.add(rnd(8), rnd(8, dt=torch.float16)), "dtypes")]
    if torch.cuda.device_count() > 1:
        cases.append((lambda: ops.add(rnd(8), torch.randn(8, device="cuda:1")), "two devices"))
    for f, text in cases:
        try:
            f()
        except rocke.RockeError as e:
            assert text in str(e), (text, str(e))
        else:
            raise AssertionError("no error for " + text)


@check("current stream, no sync")
def _():
    s = torch.cuda.Stream()
    x = rnd(64, 4096)
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        y = ops.softmax(x)
        assert not s.query() or True        # queued on s (may already be done)
    s.synchronize()
    close(y, torch.softmax(x, -1), torch.float32)


@check("custom ops in torch.compile without graph breaks")
def _():
    rocke._torch.register_custom_ops()

    def f(x, w):
        return torch.ops.rocke.rms_norm(torch.ops.rocke.softmax(x), w, 1e-6) * 2
    x, w = rnd(8, 256), rnd(256)
    exp = torch._dynamo.explain(f)(x, w)
    assert exp.graph_break_count == 0, exp.break_reasons
    close(torch.compile(f)(x, w), f(x, w), torch.float32)


@check("torch.compile(backend=rocke.torch_backend) matches eager")
def _():
    class Block(torch.nn.Module):
        def __init__(self, d):
            super().__init__()
            self.norm = torch.nn.RMSNorm(d, eps=1e-6)
            self.qkv = torch.nn.Linear(d, 3 * d)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.SiLU(), torch.nn.Linear(4 * d, d))
            self.ln = torch.nn.LayerNorm(d)

        def forward(self, x):
            q, k, v = self.qkv(self.norm(x)).chunk(3, -1)
            att = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1) @ v
            h = x + att
            return h + self.mlp(self.ln(h))
    m = Block(256).cuda().half()
    x = rnd(2, 64, 256, dt=torch.float16)
    with torch.no_grad():
        close(torch.compile(m, backend=rocke.torch_backend)(x), m(x), torch.float16, 10)


@check("per-call host overhead (cached), next to torch")
def _():
    import time
    x = rnd(1, 32, dt=torch.float16)
    for f in (lambda: ops.softmax(x), lambda: torch.softmax(x, -1)):
        for _ in range(100):
            f()
        t = time.perf_counter()
        for _ in range(5000):
            f()
        print("  %.2f us per call" % ((time.perf_counter() - t) / 5000 * 1e6))
    torch.cuda.synchronize()


print("torch", torch.__version__, "device", torch.cuda.get_device_name(), "library", rocke.lib_path)
for name, st, note in results:
    print("%-4s %s%s" % (st, name, "  -- " + note if note else ""))
sys.exit(1 if any(st != "PASS" for _, st, _ in results) else 0)
