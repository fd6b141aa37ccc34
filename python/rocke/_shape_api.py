"""Every librocke call that takes a problem shape, in one place.

The kernels API describes problems as [M, N] (rows, row length; elementwise:
N elements): tune, check_shape, grid, cost, the host problems and the
parameter sizes of a signature. When that API moves to N-dimensional named
shapes, this file is the one to adapt; the rest of the package passes a
Shape (the tensor's dims) and never unpacks it. Layer: python bindings.
"""
import ctypes
from ctypes import POINTER, c_bool, c_char, c_char_p, c_double, c_float, c_int, c_size_t, c_uint32, c_uint64, c_void_p

from ._lib import RockeError, check, lib

KSIG_MAX = 12           # RK_KSIG_MAX (kernels.h)
ELEMENTWISE = "elementwise"
TRANSPOSE = "transpose"


class RkKparam(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("ptr", c_bool), ("type", c_int), ("role", c_int), ("size", c_int)]


class RkKsig(ctypes.Structure):
    _fields_ = [("n", c_uint32), ("p", RkKparam * KSIG_MAX)]


ROLE = {0: "in", 1: "out", 2: "scalar"}
_SIZE = {0: "none", 1: "N", 2: "MN", 3: "M"}      # rk_kparam_size


def _sizeof_instance():
    """sizeof(rk_instance), measured: rk_instance_default memsets the whole struct."""
    buf = (ctypes.c_uint8 * 1024)(*([0xA5] * 1024))
    check(lib.rk_instance_default(0, buf), "rk_instance_default")
    last = max(i for i in range(1024) if buf[i] != 0xA5)
    return (last + 4) // 4 * 4


INSTANCE_BYTES = _sizeof_instance()


class RkHostBuf(ctypes.Structure):
    _fields_ = [("param", c_void_p), ("count", c_uint64), ("bytes", c_size_t), ("data", c_void_p)]


class RkProblem(ctypes.Structure):
    _fields_ = [("inst", c_uint32 * (INSTANCE_BYTES // 4)), ("M", c_uint64), ("N", c_uint64),
                ("seed", c_uint64), ("eps", c_float), ("sig", RkKsig), ("buf", RkHostBuf * KSIG_MAX)]


class RkProblemDiff(ctypes.Structure):
    _fields_ = [("max_abs_diff", c_double), ("bad", c_uint64), ("total", c_uint64),
                ("first_bad", c_char * 160)]


for _name, _res, _args in (
        ("rk_instance_tune", c_int, [c_void_p, c_void_p, c_uint64, c_uint64, c_uint64]),
        ("rk_instance_check_shape", c_int, [c_void_p, c_uint64, c_uint64]),
        ("rk_instance_grid", None, [c_void_p, c_uint64, c_uint64, POINTER(c_uint32), POINTER(c_uint32)]),
        ("rk_instance_cost", None, [c_void_p, c_uint64, c_uint64, POINTER(c_double), POINTER(c_double)]),
        ("rk_instance_signature", c_int, [c_void_p, POINTER(RkKsig)]),
        ("rk_problem_init", c_int, [POINTER(RkProblem), c_void_p, c_uint64, c_uint64, c_uint64]),
        ("rk_problem_free", None, [POINTER(RkProblem)]),
        ("rk_problem_scalar", c_double, [POINTER(RkProblem), POINTER(RkKparam)]),
        ("rk_problem_check", c_int, [POINTER(RkProblem), POINTER(RkProblemDiff)])):
    getattr(lib, _name).restype = _res
    getattr(lib, _name).argtypes = _args


def rows_cols(family, dims):
    """The library's [M, N] for a tensor of `dims` (row-major, last dim the row)."""
    dims = tuple(int(d) for d in dims)
    if not dims or any(d <= 0 for d in dims):
        raise RockeError("%s: shape %s must have at least one dimension, each positive" % (family, dims))
    n = dims[-1]
    m = 1
    for d in dims[:-1]:
        m *= d
    if family == ELEMENTWISE:
        return 1, m * n
    if family == TRANSPOSE and len(dims) != 2:
        raise RockeError("transpose: needs a 2-D tensor, got shape %s" % (dims,))
    return m, n


def tune(inst_buf, target, family, dims, locked):
    m, n = rows_cols(family, dims)
    check(lib.rk_instance_tune(inst_buf, target, m, n, locked), "tune")


def check_shape(inst_buf, family, dims):
    m, n = rows_cols(family, dims)
    check(lib.rk_instance_check_shape(inst_buf, m, n), "shape %s" % (tuple(dims),))


def grid(inst_buf, family, dims):
    m, n = rows_cols(family, dims)
    g, blk = (c_uint32 * 3)(), (c_uint32 * 3)()
    lib.rk_instance_grid(inst_buf, m, n, g, blk)
    return tuple(g), tuple(blk)


def cost(inst_buf, family, dims):
    m, n = rows_cols(family, dims)
    by, fl = c_double(), c_double()
    lib.rk_instance_cost(inst_buf, m, n, ctypes.byref(by), ctypes.byref(fl))
    return by.value, fl.value


def signature(inst_buf):
    """[(name, is_ptr, scalar type id, role, size rule)] of the instance's kernel."""
    s = RkKsig()
    check(lib.rk_instance_signature(inst_buf, ctypes.byref(s)), "signature")
    return [(p.name.decode(), bool(p.ptr), p.type, ROLE[p.role], _SIZE.get(p.size, "none"))
            for p in s.p[:s.n]]


def param_count(size_rule, family, dims):
    """Elements a pointer parameter addresses for this shape."""
    m, n = rows_cols(family, dims)
    return {"none": 0, "N": n, "MN": m * n, "M": m}[size_rule]


def scalar_value(name, family, dims, eps):
    """Value of a scalar kernel parameter (the shape's M or N, or eps)."""
    m, n = rows_cols(family, dims)
    if name == "M":
        return m
    if name == "N":
        return n
    if name == "eps":
        return eps
    raise RockeError("%s: no value for scalar parameter '%s'" % (family, name))


class Problem:
    """rk_problem: random inputs from a seed, double references, the check."""

    def __init__(self, inst_buf, family, dims, seed):
        self.p = RkProblem()
        m, n = rows_cols(family, dims)
        self.rows, self.cols = m, n
        check(lib.rk_problem_init(ctypes.byref(self.p), inst_buf, m, n, seed), "problem")
        if (self.p.M, self.p.N, self.p.seed) != (m, n, seed):
            lib.rk_problem_free(ctypes.byref(self.p))
            raise RockeError("rocke: rk_problem layout differs from this package's (rebuild the package "
                             "against this librocke)")
        self.sig = self.p.sig

    def scalar(self, i):
        return lib.rk_problem_scalar(ctypes.byref(self.p), ctypes.byref(self.p.sig.p[i]))

    def buffer(self, i):
        h = self.p.buf[i]
        return h.data, h.bytes

    def check(self):
        d = RkProblemDiff()
        check(lib.rk_problem_check(ctypes.byref(self.p), ctypes.byref(d)), "verify")
        return d.max_abs_diff, d.bad, d.total, d.first_bad.decode()

    def free(self):
        if self.p is not None:
            lib.rk_problem_free(ctypes.byref(self.p))
            self.p = None

    def __del__(self):
        self.free()
