"""Families through the knob text API (set/get, legal-value errors, tuning,
building, compiling) and `python -m rocke run --verify` against the C tool's
`rocke run` on the same manifest and seed."""
import os
import random
import subprocess
import sys
import tempfile
import unittest

import rocke

ROCKE_BIN = os.environ.get("ROCKE_BIN", "")


class Families(unittest.TestCase):
    def test_every_family_is_exposed(self):
        names = rocke.families.family_names()
        for f in ("elementwise", "reduce", "softmax", "layernorm", "rmsnorm", "transpose"):
            self.assertIn(f, names)
            self.assertTrue(callable(getattr(rocke.families, f)))

    def test_knobs_set_get_and_name(self):
        s = rocke.families.softmax(dtype="bf16", block_size=128, keep_exps=True)
        self.assertEqual((s.get("dtype"), s.get("block_size"), s.get("keep_exps")), ("bf16", "128", "true"))
        self.assertIn("bf16", s.name)
        self.assertIn("b128", s.name)
        legal = {k["name"]: k["legal"] for k in rocke.families.knobs("softmax")}
        self.assertEqual(legal["dtype"], "f16|bf16|f32")

    def test_bad_knob_names_legal_values(self):
        with self.assertRaisesRegex(rocke.RockeError, "f16\\|bf16\\|f32"):
            rocke.families.rmsnorm(dtype="f8")
        with self.assertRaisesRegex(rocke.RockeError, "rocke.families.softmax"):
            rocke.families.softmax(colour="red")

    def test_tune_keeps_locked_knobs(self):
        s = rocke.families.softmax(dtype="f16", block_size=512)
        s.tune("sm_90", (64, random.randint(100, 4000)))
        self.assertEqual(s.get("block_size"), "512")
        self.assertEqual(s.get("wave"), "32")

    def test_build_and_compile(self):
        s = rocke.families.layernorm(dtype="f16").tune("gfx950", (8, 1024))
        k = s.build("gfx950")
        self.assertEqual(k.name, s.name)
        self.assertIn("kernel @" + s.name, k.ir())
        art = rocke.compile(k, "gfx950")
        self.assertEqual(art.kernel_name, s.name)
        self.assertEqual(art.kind, "hsaco")
        self.assertEqual(art.binary[:4], b"\x7fELF")
        self.assertIn(s.name, art.llvm_ir)
        with tempfile.TemporaryDirectory() as d:
            art.write(d)
            self.assertTrue(os.path.exists(os.path.join(d, s.name + ".hsaco")))

    def test_compile_rejects_unknown_target(self):
        with self.assertRaisesRegex(rocke.RockeError, "gfx950"):
            rocke.compile(rocke.families.softmax().build("gfx950"), "gfx9000")


@unittest.skipUnless(os.path.exists(ROCKE_BIN), "ROCKE_BIN (the rocke command) not set")
class RunCommand(unittest.TestCase):
    def run_both(self, family_args, shape, seed):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([ROCKE_BIN, "build"] + family_args + ["--target", "sm_90", "-o", d], check=True,
                           stdout=subprocess.DEVNULL)
            args = [os.path.join(d, "manifest.json"), "--shape", shape, "--verify", "--seed", str(seed),
                    "--device", "emu"]
            c = subprocess.run([ROCKE_BIN, "run"] + args, capture_output=True, text=True)
            py = subprocess.run([sys.executable, "-m", "rocke", "run"] + args, capture_output=True, text=True)
        return c, py

    def test_same_lines_as_the_c_tool(self):
        seed = random.randint(1, 1 << 30)
        for fam in (["rmsnorm", "--dtype", "f16"], ["transpose", "--dtype", "f32"]):
            c, py = self.run_both(fam, "%d,%d" % (random.randint(2, 9), random.randint(33, 300)), seed)
            self.assertEqual(c.returncode, 0, c.stderr)
            self.assertEqual(py.returncode, 0, py.stderr)
            pick = lambda out: [l for l in out.splitlines() if l.startswith(("rocke run:", "verify"))]  # noqa: E731
            self.assertEqual(pick(py.stdout), pick(c.stdout))
            self.assertIn("bad=0/", py.stdout)
            self.assertIn('"verified": true', py.stdout)

    def test_shape_variants_picked_alike(self):
        # built without --shape: both tools take the same shape variant (the kernel name on the first line)
        seed = random.randint(1, 1 << 30)
        for shape in ("1,20000", "5,%d" % random.randint(1, 64), "3,%d" % random.randint(300, 2000)):
            c, py = self.run_both(["softmax", "--dtype", "bf16"], shape, seed)
            self.assertEqual(c.returncode, 0, c.stderr)
            self.assertEqual(py.returncode, 0, py.stderr)
            first = lambda out: [l for l in out.splitlines() if l.startswith("rocke run:")][0]  # noqa: E731
            self.assertEqual(first(py.stdout), first(c.stdout))
            self.assertIn("bad=0/", py.stdout)

    def test_bad_manifest_and_shape(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "manifest.json")
            with open(bad, "w") as f:
                f.write("{")
            py = subprocess.run([sys.executable, "-m", "rocke", "run", bad], capture_output=True, text=True)
            self.assertEqual(py.returncode, 2)   # refused input, as the C tool
            self.assertIn("json", py.stderr)
            subprocess.run([ROCKE_BIN, "build", "softmax", "-o", d], check=True, stdout=subprocess.DEVNULL)
            py = subprocess.run([sys.executable, "-m", "rocke", "run", bad, "--shape", "0,4"],
                                capture_output=True, text=True)
            self.assertEqual(py.returncode, 2)
            self.assertIn("--shape expects", py.stderr)
            # a manifest whose op contradicts its spec is refused as by the C tool
            with open(bad) as f:
                text = f.read()
            edited = text.replace('"op": "softmax"', '"op": "reduce"', 1)
            self.assertNotEqual(edited, text)
            with open(bad, "w") as f:
                f.write(edited)
            py = subprocess.run([sys.executable, "-m", "rocke", "run", bad], capture_output=True, text=True)
            self.assertEqual(py.returncode, 2)
            self.assertIn("manifest field 'op' is 'reduce' but its spec implies 'softmax'", py.stderr)
            c = subprocess.run([ROCKE_BIN, "run", bad], capture_output=True, text=True)
            self.assertEqual(c.returncode, 2, c.stderr)


if __name__ == "__main__":
    unittest.main()
