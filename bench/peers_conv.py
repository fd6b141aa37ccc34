#!/usr/bin/env python3
"""Same-run peer for rocke's convolutions on a CUDA GPU: torch (cuDNN),
channels_last bf16, forward (conv2d), data gradient (grad.conv2d_input) and
weight gradient (grad.conv2d_weight) at the shapes of bench/conv_shapes.txt.
Prints one JSON object per line: {"name", "dir", "impl", "ms", "tflops"}
with flops 2 N P Q K C R S / groups, and per shape the copy bandwidth of
X's and Y's bytes ("dir": "copy", "gbps"). Usage: peers_conv.py SHAPES_FILE."""
import json
import sys

import torch
from torch.nn import grad
from triton.testing import do_bench


def main():
    torch.backends.cudnn.benchmark = True
    for line in open(sys.argv[1]):
        if not line.strip() or line.startswith("#"):
            continue
        name, *v = line.split()
        n, c, h, w, k, r, s, st, pd, g = map(int, v)
        cl = torch.channels_last
        x = torch.empty(n, c, h, w, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1).to(memory_format=cl)
        wt = torch.empty(k, c // g, r, s, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1).to(memory_format=cl)
        y = torch.nn.functional.conv2d(x, wt, stride=st, padding=pd, groups=g)
        dy = torch.empty_like(y).uniform_(-1, 1).to(memory_format=cl)
        p, q = y.shape[2], y.shape[3]
        flops = 2.0 * n * p * q * k * (c // g) * r * s
        runs = {
            "fwd": lambda: torch.nn.functional.conv2d(x, wt, stride=st, padding=pd, groups=g),
            "dgrad": lambda: grad.conv2d_input(x.shape, wt, dy, stride=st, padding=pd, groups=g),
            "wgrad": lambda: grad.conv2d_weight(x, wt.shape, dy, stride=st, padding=pd, groups=g),
        }
        for d, fn in runs.items():
            ms = do_bench(fn, warmup=25, rep=200)
            print(json.dumps({"name": name, "dir": d, "impl": "torch/cuDNN channels_last", "ms": ms,
                              "tflops": flops / ms / 1e9}), flush=True)
        # the bandwidth ceiling a depthwise forward is held to: a copy of X and Y's bytes
        moved = x.numel() * 2 + y.numel() * 2
        src = torch.empty(moved // 2, device="cuda", dtype=torch.bfloat16)
        dst = torch.empty_like(src)
        ms = do_bench(lambda: dst.copy_(src), warmup=25, rep=200)
        print(json.dumps({"name": name, "dir": "copy", "impl": "torch copy_ (read + write)", "ms": ms,
                          "gbps": 2 * moved / ms / 1e6}), flush=True)


if __name__ == "__main__":
    main()
