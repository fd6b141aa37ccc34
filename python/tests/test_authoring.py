"""rocke.Kernel against the C library: the op list equals ops.def's rows, the
Python-built vector_add serializes to the golden text, parse/ir round trips,
control flow with carried values runs right on the emulator, and builder
errors surface as RockeError with the C diagnostic."""
import os
import random
import re
import unittest

import numpy as np

import rocke
from rocke import _optable

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def _read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def _ops_def_rows():
    """(name, fn, attrs) per row, read from the header text independently."""
    text = _read("include", "rocke", "ops.def")
    rows = []
    for m in re.finditer(r'^RK_OP\(\s*\w+,\s*"([^"]+)",\s*(\w+),(.*?)\)\s*(?:/\*.*)?$', text, re.M):
        attrs = re.findall(r'"([^"]*)"', m.group(3))[-1]
        rows.append((m.group(1), m.group(2), attrs))
    return rows


def vector_add():
    k = rocke.Kernel("vector_add")
    k.set_attr("max_workgroup_size", 256)
    A = k.param("A", "ptr<f32,global>", noalias=True, readonly=True, nonnull=True, align=16)
    B = k.param("B", "ptr<f32,global>", noalias=True, readonly=True, nonnull=True, align=16)
    C = k.param("C", "ptr<f32,global>", noalias=True, writeonly=True, align=16, dereferenceable=4096)
    N = k.param("N", "i32")
    tid = k.thread_id(axis="x")
    bid = k.gpu.block_id(axis="x")
    bdim = k.op("gpu.block_dim", axis="x")
    i = k.add(k.mul(bid, bdim), tid)
    with k.if_(k.cmp(i, N, pred="lt")):
        a = k.load(A, i)
        b = k.load(B, i)
        k.store(C, i, k.fadd(a, b))
    k.return_()
    return k


class OpTable(unittest.TestCase):
    def test_every_row_of_ops_def_in_order(self):
        rows = _ops_def_rows()
        self.assertGreater(len(rows), 100)
        self.assertEqual([(o.name, o.fn, o.attrs) for o in _optable.OPS], rows)
        self.assertEqual(rocke.op_names(), [r[0] for r in rows])

    def test_row_fields(self):
        add = _optable.find("arith.add")
        self.assertEqual((add.nin, add.nout, add.rule, add.sig), (2, 1, "R_SAME", "int"))
        loop = _optable.find("scf.for")
        self.assertTrue(loop.nin_min)
        self.assertEqual(loop.nreg, 1)
        cmp_spec = _optable.ATTRS["arith.cmp"][0]
        self.assertEqual(cmp_spec.key, "pred")
        self.assertIn("ult", cmp_spec.choices)

    def test_bad_code_and_field_name_the_legal_choices(self):
        from rocke._lib import lib
        self.assertIsNone(lib.rk_op_query_str(0, b"name"))
        self.assertIn("legal: 1..", rocke._lib.error_text())
        self.assertIsNone(lib.rk_op_query_str(1, b"colour"))
        self.assertIn("legal: name, fn", rocke._lib.error_text())


class Builder(unittest.TestCase):
    def test_vector_add_matches_golden_text(self):
        gold = _read("tests", "golden", "vector_add.ir")
        self.assertEqual(vector_add().ir(), rocke.parse(gold).ir())

    def test_parse_ir_round_trip(self):
        text = vector_add().ir()
        self.assertEqual(rocke.parse(text).ir(), text)

    def test_vector_add_runs_on_emulator(self):
        n = random.randint(300, 1000)
        a = np.random.randn(n).astype(np.float32)
        b = np.random.randn(n).astype(np.float32)
        c = np.zeros(1024, np.float32)
        rocke.launch(vector_add(), (n + 255) // 256, 256, a, b, c, n)
        np.testing.assert_array_equal(c[:n], (a.astype(np.float64) + b).astype(np.float32))
        self.assertFalse(c[n:].any())

    def test_loop_carry_and_if_results(self):
        k = rocke.Kernel("rowsum_clamp")
        X = k.param("X", "ptr<f32,global>", readonly=True)
        Y = k.param("Y", "ptr<f32,global>", writeonly=True)
        M, N, lim = k.param("M", "i32"), k.param("N", "i32"), k.param("lim", "f32")
        row = k.add(k.mul(k.block_id(axis="x"), k.block_dim(axis="x")), k.thread_id(axis="x"))
        with k.if_(k.cmp(row, M, pred="lt")):
            base = k.mul(row, N)
            loop = k.range(0, N, 1, carry=[k.const(0.0, "f32")])
            for j, (acc,) in loop:
                loop.next(k.fadd(acc, k.load(X, k.add(base, j))))
            total, = loop.results
            with k.if_(k.fcmp(total, lim, pred="ogt"), results=["f32"]) as br:
                br.yield_(lim)
                br.else_()
                br.yield_(total)
            k.store(Y, row, br.results[0])
        k.return_()
        self.assertIn("scf.for", k.ir())
        m, n = random.randint(20, 90), random.randint(3, 40)
        x = np.random.randn(m, n).astype(np.float32)
        y = np.zeros(m, np.float32)
        rocke.launch(k, (m + 63) // 64, 64, x, y, m, n, 1.5)
        ref = np.minimum(x.astype(np.float64).sum(1), 1.5)
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)

    def test_constants_are_rounded_like_the_c_builder(self):
        k = rocke.Kernel("c")
        k.const(0.1, "f16")
        k.const(0.1, "bf16")
        k.const(7, "i64")
        text = k.ir()
        self.assertIn("f:0.0999755859375", text)
        self.assertIn("f:0.10009765625", text)
        self.assertIn("value = i:7", text)


class Errors(unittest.TestCase):
    def test_type_error_carries_the_c_diagnostic(self):
        k = rocke.Kernel("bad")
        x, n = k.param("x", "f32"), k.param("n", "i32")
        with self.assertRaisesRegex(rocke.RockeError, "arith.add.*not int"):
            k.add(x, n)

    def test_bad_enum_attribute(self):
        k = rocke.Kernel("bad")
        n = k.param("n", "i32")
        with self.assertRaisesRegex(rocke.RockeError, "pred"):
            k.cmp(n, n, pred="sometimes")

    def test_unknown_op_type_and_uninferable_result(self):
        k = rocke.Kernel("bad")
        x = k.param("x", "f16")
        with self.assertRaisesRegex(rocke.RockeError, "unknown op 'arith.frobnicate'"):
            k.op("arith.frobnicate", x)
        with self.assertRaisesRegex(rocke.RockeError, "type 'f17'"):
            k.type("f17")
        with self.assertRaisesRegex(rocke.RockeError, "pass result=TYPE"):
            k.fpext(x)

    def test_explicit_result_type(self):
        k = rocke.Kernel("ok")
        self.assertEqual(k.fpext(k.param("h", "f16"), result="f32").type.name, "f32")

    def test_device_value_in_python_if(self):
        k = rocke.Kernel("bad")
        with self.assertRaisesRegex(TypeError, "device-time"):
            bool(k.param("n", "i32"))

    def test_missing_loop_next(self):
        k = rocke.Kernel("bad")
        n = k.param("n", "i32")
        loop = k.range(0, n, carry=[k.const(0)])
        with self.assertRaisesRegex(rocke.RockeError, "loop.next"):
            for _i, _c in loop:
                pass

    def test_launch_argument_count(self):
        with self.assertRaisesRegex(rocke.RockeError, "4 parameters"):
            rocke.launch(vector_add(), 1, 64, np.zeros(4, np.float32))


if __name__ == "__main__":
    unittest.main()
