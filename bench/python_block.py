"""A small transformer block (RMSNorm + causal attention + SiLU MLP, pre-norm
residuals) on an NVIDIA GPU: eager vs torch.compile (inductor) vs
torch.compile(backend=rocke.torch_backend), tokens/s and the max abs error
of each against eager, plus how many ops the rocke backend replaced.
usage: PYTHONPATH=python ROCKE_LIB_DIR=build python3 bench/python_block.py
         [--d 1024] [--heads 8] [--seq 512] [--batch 8] [--dtype bf16] [--iters 20]
       python3 bench/python_block.py --calls    (the block's rocke.ops calls as
         python -m rocke warm --list lines; needs neither torch nor a GPU)"""
import argparse
import sys
import time

DTYPES = ("bf16", "f16")


def options(argv):
    ap = argparse.ArgumentParser(prog="bench/python_block.py")
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--dtype", choices=DTYPES, default="bf16")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--calls", action="store_true", help="print the warm list lines and exit")
    a = ap.parse_args(argv)
    if a.d % a.heads:
        ap.error("--d %d is not a multiple of --heads %d" % (a.d, a.heads))
    return a


def calls(a):
    """The rocke.ops calls the rocke backend makes for this block (both
    RMSNorms share one kernel; the attention is q, k, v [B, H, S, D/H], views
    of the qkv projection's [B, S, 3, H, D/H] rows, which sm_90a's kernel
    reads in place as layout bshd; each linear is x [B*S, K] @ W[N, K]^T)."""
    t, B, S, D, H = a.dtype, a.batch, a.seq, a.d, a.heads
    qkv = "%s[%d,%d,%d,%d]/[%d,%d,%d,1]" % (t, B, H, S, D // H, S * 3 * D, D // H, 3 * D)
    packed = "%s[%d,%d,%d,%d]" % (t, B, H, S, D // H)          # should inductor hand over dense copies
    lines = ["rms_norm %s[%d,%d,%d] %s[%d] 1e-6" % (t, B, S, D, t, D),
             "attention %s %s %s causal=True" % (qkv, qkv, qkv),
             "attention %s %s %s causal=True" % (packed, packed, packed)]
    for k, n in ((D, 3 * D), (D, D), (D, 4 * D), (4 * D, D)):
        lines.append("matmul %s[%d,%d] %s[%d,%d].T" % (t, B * S, k, t, n, k))
    return lines


def run(a):
    import torch
    import rocke
    from rocke import _torch as rk_torch
    F = torch.nn.functional
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[a.dtype]

    class Block(torch.nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.norm1 = torch.nn.RMSNorm(d, eps=1e-6)
            self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
            self.proj = torch.nn.Linear(d, d, bias=False)
            self.norm2 = torch.nn.RMSNorm(d, eps=1e-6)
            self.up = torch.nn.Linear(d, 4 * d, bias=False)
            self.down = torch.nn.Linear(4 * d, d, bias=False)

        def forward(self, x):
            B, S, D = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(B, S, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(att.transpose(1, 2).reshape(B, S, D))
            return x + self.down(F.silu(self.up(self.norm2(x))))

    torch.manual_seed(0)
    m = Block(a.d, a.heads).cuda().to(dt).eval()
    x = torch.randn(a.batch, a.seq, a.d, device="cuda", dtype=dt)
    tokens = a.batch * a.seq

    def timed(f):
        for _ in range(3):                     # compiles, autotunes, loads kernels
            y = f(x)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(a.iters):
            f(x)
        end.record()
        torch.cuda.synchronize()
        return y, start.elapsed_time(end) / a.iters          # ms per forward

    print("block: d=%d heads=%d seq=%d batch=%d %s, %d tokens per forward; torch %s on %s"
          % (a.d, a.heads, a.seq, a.batch, a.dtype, tokens, torch.__version__, torch.cuda.get_device_name()))
    rows = []
    with torch.no_grad():
        ref, ms = timed(m)
        rows.append(("eager", ms, 0.0))
        torch._dynamo.reset()
        y, ms = timed(torch.compile(m))
        rows.append(("inductor", ms, (y.float() - ref.float()).abs().max().item()))
        torch._dynamo.reset()
        rk_torch.rewrite_log.clear()
        y, ms = timed(torch.compile(m, backend=rocke.torch_backend))
        rows.append(("rocke backend", ms, (y.float() - ref.float()).abs().max().item()))
    for name, ms, err in rows:
        print("block %-14s %8.3f ms  %10.0f tokens/s  max |err| vs eager %.4g" % (name, ms, tokens / ms * 1e3, err))
    print("block rocke backend: %s ops replaced (%s); %.2fx inductor's tokens/s"
          % (sum(sum(r.values()) for r in rk_torch.rewrite_log),
             ", ".join("%s %d" % kv for r in rk_torch.rewrite_log for kv in sorted(r.items())) or "none",
             rows[1][1] / rows[2][1]))
    rk_torch.print_fallbacks()


def main(argv):
    a = options(argv)
    if a.calls:
        print("\n".join(calls(a)))
        return 0
    t = time.perf_counter()
    run(a)
    print("block: %.1f s" % (time.perf_counter() - t))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
