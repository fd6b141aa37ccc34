"""python -m rocke warm: a script of two ops (fresh random shapes) warmed into
a temporary cache; then, in a process with toolchain none (a machine
without LLVM), the same ops run on the emulator against a numpy reference,
their GPU-path compiles are served from the cache, and an op that was not
warmed fails naming the kernel and the warm command, and leaves its warm
line in $ROCKE_WARM_MISSES; that line, warmed as a list, then serves it.
bench/python_h200.sh's CPU side: prepare (a one-line list and a small
block) and run --dry-run, which finds every kernel with compiling off."""
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = """
import sys
import numpy as np
from rocke import ops
rows, cols = int(sys.argv[1]), int(sys.argv[2])
x = np.random.randn(rows, cols).astype(np.float16)
w = np.random.randn(cols).astype(np.float32)
y = ops.softmax(x)
z = ops.rms_norm(x.astype(np.float32), w, 1e-6)
"""

# run in the no-LLVM process: emulator results, then the GPU path's compiles in record mode
CHECK = """
import sys
import numpy as np
import rocke
from rocke import _warm, ops
rows, cols = int(sys.argv[1]), int(sys.argv[2])
x = np.random.randn(rows, cols).astype(np.float16)
w = np.random.randn(cols).astype(np.float32)
d = x.astype(np.float64)
e = np.exp(d - d.max(-1, keepdims=True))
np.testing.assert_allclose(ops.softmax(x, device="emu:sm_90").astype(np.float64), e / e.sum(-1, keepdims=True),
                           rtol=4e-3, atol=4e-3)
ref = d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-6) * w
np.testing.assert_allclose(ops.rms_norm(x.astype(np.float32), w, 1e-6, device="emu:sm_90"), ref, rtol=1e-4,
                           atol=1e-4)
with _warm.recording("sm_90a") as r:
    ops.softmax(x)
    ops.rms_norm(x.astype(np.float32), w, 1e-6)
    assert len(r.kernels) == 2 and all(k["hit"] for k in r.kernels.values()), r.kernels
    try:
        ops.softmax(x.astype(np.float32))          # another dtype: another kernel, never warmed
    except rocke.RockeError as err:
        print("MISS", err)
    else:
        raise AssertionError("an un-warmed kernel was served")
print("OK", sorted(k["name"] for k in r.kernels.values()))
"""


class WarmCache(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rocke-warm-")
        self.cache = os.path.join(self.tmp.name, "cache")
        self.shape = [str(random.randint(2, 40)), str(random.choice([33, 130, 515, 1000]))]

    def tearDown(self):
        self.tmp.cleanup()

    def py(self, args, **env):
        e = dict(os.environ, **env)
        return subprocess.run([sys.executable] + args, capture_output=True, text=True, env=e, timeout=600)

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def test_warm_then_serve_without_llvm(self):
        script = self.write("two_ops.py", SCRIPT)
        r = self.py(["-m", "rocke", "warm", "--target", "sm_90a", "--cache", self.cache, "--script", script]
                    + self.shape)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warm: 2 kernels (2 compiled, 0 already in the cache)", r.stdout)
        ship = os.path.join(self.cache, "v1", "ship")
        self.assertEqual(sum(len(f) for _, _, f in os.walk(ship)), 2)
        leftovers = [n for _, _, f in os.walk(self.cache) for n in f if ".tmp." in n]
        self.assertEqual(leftovers, [])
        # a machine without LLVM: --check compiles nothing and finds both
        r = self.py(["-m", "rocke", "warm", "--target", "sm_90a", "--cache", self.cache, "--check", "--script",
                     script] + self.shape)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warm: 2 kernels (0 compiled, 2 already in the cache)", r.stdout)
        misses = os.path.join(self.tmp.name, "misses.calls")
        check = self.write("check.py", CHECK)
        r = self.py([check] + self.shape, ROCKE_TOOLCHAIN="none", ROCKE_CACHE_DIR=self.cache,
                    ROCKE_WARM_MISSES=misses)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("OK", r.stdout)
        miss = [ln for ln in r.stdout.splitlines() if ln.startswith("MISS")][0]
        for part in ("rk_softmax_f32", "for sm_90 is not in the cache", self.cache, "python -m rocke warm",
                     "warm line: kernel softmax %sx%s sm_90 dtype=f32" % tuple(self.shape)):
            self.assertIn(part, miss)
        # the miss's line, warmed as a list, serves it next time
        with open(misses) as f:
            self.assertEqual(f.read().strip(), "kernel softmax %sx%s sm_90 dtype=f32" % tuple(self.shape))
        r = self.py(["-m", "rocke", "warm", "--target", "sm_90a", "--cache", self.cache, "--list", misses])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warm: 1 kernels (1 compiled", r.stdout)
        r = self.py([check] + self.shape, ROCKE_TOOLCHAIN="none", ROCKE_CACHE_DIR=self.cache)
        self.assertNotIn("MISS", r.stdout)
        self.assertIn("an un-warmed kernel was served", r.stderr)

    def test_list_lines_and_errors(self):
        calls = self.write("calls.txt", """\
            # stand-ins of the GPU path's tensors
            layer_norm f16[3,77] f16[77] f16[77] 1e-5
            add bf16[5,9] bf16[5,9]
            attention f16[1,4,33,64] f16[1,2,33,64] f16[1,2,33,64] causal=True
            # [B, S, H, D] memory as [B, H, S, D] views (element strides): sm_90a's bshd kernel on a 9.0 device
            attention f16[1,4,33,64]/[8448,64,256,1] f16[1,2,33,64]/[4224,64,128,1] f16[1,2,33,64]/[4224,64,128,1]
            matmul f16[40,64] f16[64,48]
            matmul f16[40,64]/[72,1] f16[64,48]
            """)
        r = self.py(["-m", "rocke", "warm", "--target", "sm_90a", "--cache", self.cache, "--list", calls])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warm: 6 kernels (6 compiled", r.stdout)
        self.assertRegex(r.stdout, r"rk_attention_f16_d64_mcausal_lbhsd\S+_ptwgmma\S* +sm_90a")
        self.assertRegex(r.stdout, r"rk_attention_f16_d64_mnone_lbshd\S+_ptwgmma\S* +sm_90a")
        self.assertRegex(r.stdout, r"rk_gemm_lrr_f16\S+ +sm_90a")          # packed: sm_90a's kernels
        self.assertRegex(r.stdout, r"rk_gemm_lrr_f16\S+ +sm_90 ")          # a padded pitch: sm_90's
        for line, text in (("softmax f64[3,4]", "dtype 'f64'"), ("nope f16[3]", "'nope' is not a rocke.ops function"),
                           ("softmax f16[3,4] f16[", "neither an array"),
                           ("softmax f16[3,4]/[4]", "gives 1 strides for 2 dimensions"),
                           ("kernel softmax 3xq sm_90", "are not D0xD1x")):
            bad = self.write("bad.txt", "# first\n" + line + "\n")
            r = self.py(["-m", "rocke", "warm", "--target", "sm_90a", "--cache", self.cache, "--list", bad])
            self.assertEqual(r.returncode, 1, line)
            self.assertIn("bad.txt:2:", r.stderr)
            self.assertIn(text, r.stderr)
        r = self.py(["-m", "rocke", "warm", "--target", "gfx942", "--cache", self.cache, "--list", calls])
        self.assertEqual(r.returncode, 1)
        self.assertIn("legal: sm_80, sm_90, sm_90a", r.stderr)
        r = self.py(["-m", "rocke", "warm", "--target", "sm_90a", "--cache", self.cache])
        self.assertEqual(r.returncode, 2)
        self.assertIn("give --script FILE or --list FILE", r.stderr)

    def test_bench_h200_prepare_and_dry_run(self):
        root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
        calls = self.write("small.calls", "softmax f16[%s,%s]\n" % tuple(self.shape))
        block = "--d 256 --heads 2 --seq %d --batch 2" % random.choice([64, 96])
        env = dict(os.environ, PYTHON=sys.executable, ROCKE_H200_CALLS=calls, BLOCK_ARGS=block,
                   OUT=os.path.join(self.tmp.name, "out"))
        d = os.path.join(self.tmp.name, "carry")
        sh = lambda *a: subprocess.run(["sh", "bench/python_h200.sh"] + list(a), cwd=root, env=env,  # noqa: E731
                                       capture_output=True, text=True, timeout=600)
        r = sh("prepare", "--dir", d)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        import re
        n = re.search(r"warm: (\d+) kernels \((\d+) compiled, 0 already in the cache\)", r.stdout)
        self.assertIsNotNone(n, r.stdout)
        self.assertEqual(n.group(1), n.group(2))
        self.assertGreaterEqual(int(n.group(1)), 4)          # softmax, rms_norm, attention, matmuls
        self.assertRegex(r.stdout, r"carried: librocke.so and its libraries \d+ KiB \+ cache \d+ KiB .* MiB \(limit 64 MiB\)")
        self.assertTrue(os.path.isfile(os.path.join(d, "lib", "librocke.so")))
        self.assertTrue(any(n.startswith("libxxhash") for n in os.listdir(os.path.join(d, "lib"))))
        r = sh("run", "--dir", d, "--dry-run")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("warm: %s kernels (0 compiled, %s already in the cache)" % (n.group(1), n.group(1)), r.stdout)
        self.assertIn("dry run: would run", r.stdout)
        env["BLOCK_ARGS"] = block + " --dtype f16"          # another block: its kernels are not warm
        r = sh("run", "--dir", d, "--dry-run")
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr, "warm line: kernel rmsnorm 2x[0-9]+x256 sm_90 dtype=f16")
        r = sh("nonsense")
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage", r.stdout)


if __name__ == "__main__":
    unittest.main()
