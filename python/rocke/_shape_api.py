"""Every librocke call that takes a problem shape, in one place.

Two generations of the kernels API are served, chosen by what the loaded
library exports: [M, N] problems (rows, row length; elementwise: N elements)
and N-dimensional rk_shape problems with named dimensions (rk_shape_default
present). tune, check_shape, grid, cost, the host problems and the pointer
sizes of a signature all go through here; the rest of the package passes the
tensor's dims and never unpacks them. Layer: python bindings.
"""
import ctypes
from ctypes import POINTER, c_bool, c_char, c_char_p, c_double, c_float, c_int, c_size_t, c_uint32, c_uint64, c_void_p

from ._lib import RockeError, check, check_layout, lib

KSIG_MAX = 32           # RK_KSIG_MAX (kernels.h)
ELEMENTWISE = "elementwise"
TRANSPOSE = "transpose"


ND = hasattr(lib, "rk_shape_default")      # the N-dimensional shape API
SHAPE_MAX_DIMS = 12                        # RK_SHAPE_MAX_DIMS


class RkShape(ctypes.Structure):
    _fields_ = [("rank", c_uint32), ("dim", c_uint64 * SHAPE_MAX_DIMS)]


class RkDimDecl(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("default", c_uint64), ("help", c_char_p)]


class RkKparam(ctypes.Structure):
    # [M, N] API: `size` is rk_kparam_size; N-d API: `dims` names the layout ("M,N")
    _fields_ = [("name", c_char_p), ("ptr", c_bool), ("type", c_int), ("role", c_int),
                ("dims", c_char_p) if ND else ("size", c_int)]


class RkKsig(ctypes.Structure):
    _fields_ = [("n", c_uint32), ("p", RkKparam * KSIG_MAX)]


ROLE = {0: "in", 1: "out", 2: "scalar", 3: "accum", 4: "work", 5: "tensormap", 6: "inout"}
_SIZE = {0: "", 1: "N", 2: "M,N", 3: "M"}      # rk_kparam_size as a layout


def _sizeof_instance():
    """sizeof(rk_instance): asked of the library when it says; older ones are
    measured (rk_instance_default memsets the whole struct)."""
    if hasattr(lib, "rk_kernels_struct_size"):
        return lib.rk_kernels_struct_size(b"rk_instance")
    buf = (ctypes.c_uint8 * 1024)(*([0xA5] * 1024))
    check(lib.rk_instance_default(0, buf), "rk_instance_default")
    last = max(i for i in range(1024) if buf[i] != 0xA5)
    return (last + 4) // 4 * 4


INSTANCE_BYTES = _sizeof_instance()


class RkHostBuf(ctypes.Structure):
    _fields_ = [("param", c_void_p), ("count", c_uint64), ("bytes", c_size_t), ("data", c_void_p)]


class RkProblem(ctypes.Structure):
    _fields_ = ([("inst", c_uint32 * (INSTANCE_BYTES // 4)), ("shape", RkShape), ("seed", c_uint64),
                 ("sig", RkKsig), ("buf", RkHostBuf * KSIG_MAX), ("scalar", c_double * KSIG_MAX)] if ND else
                [("inst", c_uint32 * (INSTANCE_BYTES // 4)), ("M", c_uint64), ("N", c_uint64),
                 ("seed", c_uint64), ("eps", c_float), ("sig", RkKsig), ("buf", RkHostBuf * KSIG_MAX)])


class RkProblemDiff(ctypes.Structure):
    _fields_ = [("max_abs_diff", c_double), ("bad", c_uint64), ("total", c_uint64),
                ("first_bad", c_char * 160)]


if ND:
    for _cls, _name in ((RkShape, "rk_shape"), (RkKparam, "rk_kparam"), (RkKsig, "rk_ksig"),
                        (RkHostBuf, "rk_host_buf"), (RkProblem, "rk_problem"), (RkProblemDiff, "rk_problem_diff"),
                        (RkDimDecl, "rk_dim_decl")):
        check_layout(_cls, _name, lib.rk_kernels_struct_size(_name.encode()))


_S = c_void_p if not ND else POINTER(RkShape)      # how a shape is passed
if ND:
    _DECLS = (("rk_instance_tune", c_int, [c_void_p, c_void_p, _S, c_uint64]),
              ("rk_instance_check_shape", c_int, [c_void_p, _S]),
              ("rk_instance_grid", None, [c_void_p, _S, POINTER(c_uint32), POINTER(c_uint32)]),
              ("rk_instance_cost", None, [c_void_p, _S, POINTER(c_double), POINTER(c_double)]),
              ("rk_problem_init", c_int, [POINTER(RkProblem), c_void_p, _S, c_uint64]),
              ("rk_shape_default", c_int, [c_int, POINTER(RkShape)]),
              ("rk_shape_update", c_int, [c_int, POINTER(RkShape), c_void_p, POINTER(c_uint64), c_uint32, c_bool]),
              ("rk_shape_format", None, [c_int, POINTER(RkShape), c_bool, c_char_p, c_size_t]),
              ("rk_family_dims", POINTER(RkDimDecl), [c_int, POINTER(c_uint32)]))
else:
    _DECLS = (("rk_instance_tune", c_int, [c_void_p, c_void_p, c_uint64, c_uint64, c_uint64]),
              ("rk_instance_check_shape", c_int, [c_void_p, c_uint64, c_uint64]),
              ("rk_instance_grid", None, [c_void_p, c_uint64, c_uint64, POINTER(c_uint32), POINTER(c_uint32)]),
              ("rk_instance_cost", None, [c_void_p, c_uint64, c_uint64, POINTER(c_double), POINTER(c_double)]),
              ("rk_problem_init", c_int, [POINTER(RkProblem), c_void_p, c_uint64, c_uint64, c_uint64]),
              ("rk_problem_scalar", c_double, [POINTER(RkProblem), POINTER(RkKparam)]))
for _name, _res, _args in _DECLS + (
        ("rk_instance_signature", c_int, [c_void_p, POINTER(RkKsig)]),
        ("rk_problem_free", None, [POINTER(RkProblem)]),
        ("rk_problem_check", c_int, [POINTER(RkProblem), POINTER(RkProblemDiff)])):
    getattr(lib, _name).restype = _res
    getattr(lib, _name).argtypes = _args


def _fid(family):
    f = c_int()
    check(lib.rk_family_parse(family.encode(), ctypes.byref(f)))
    return f.value


class _Shape:
    """A problem shape for the loaded API: .args (what tune/grid/... take after
    the instance) and .extents ({dimension name: extent})."""

    def __init__(self, family, dims):
        m, n = rows_cols(family, dims)
        if not ND:
            self.args, self.extents = (m, n), {"M": m, "N": n}
            self.text, self.list = "%d,%d" % (m, n), "%d, %d" % (m, n)
            return
        f = _fid(family)
        s = RkShape()
        check(lib.rk_shape_default(f, ctypes.byref(s)))
        vals = [m * n] if s.rank == 1 else [m, n] if s.rank == 2 else list(dims)
        arr = (c_uint64 * len(vals))(*vals)
        check(lib.rk_shape_update(f, ctypes.byref(s), None, arr, len(vals), True), "shape %s" % (tuple(dims),))
        nd = c_uint32()
        decl = lib.rk_family_dims(f, ctypes.byref(nd))
        self.shape = s
        self.args = (ctypes.byref(s),)
        self.extents = {decl[i].name.decode(): s.dim[i] for i in range(nd.value)}
        buf = ctypes.create_string_buffer(256)
        lib.rk_shape_format(f, ctypes.byref(s), True, buf, len(buf))
        self.text = buf.value.decode()
        lib.rk_shape_format(f, ctypes.byref(s), False, buf, len(buf))
        self.list = buf.value.decode()


def shape_text(family, dims):
    """The shape as `rocke run` prints it: (header text, PerfJSON list)."""
    sh = _Shape(family, dims)
    return sh.text, sh.list


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
    sh = _Shape(family, dims)
    check(lib.rk_instance_tune(inst_buf, target, *sh.args, locked), "tune")


def check_shape(inst_buf, family, dims):
    sh = _Shape(family, dims)
    check(lib.rk_instance_check_shape(inst_buf, *sh.args), "shape %s" % (tuple(dims),))


def grid(inst_buf, family, dims):
    sh = _Shape(family, dims)
    g, blk = (c_uint32 * 3)(), (c_uint32 * 3)()
    lib.rk_instance_grid(inst_buf, *sh.args, g, blk)
    return tuple(g), tuple(blk)


def cost(inst_buf, family, dims):
    sh = _Shape(family, dims)
    by, fl = c_double(), c_double()
    lib.rk_instance_cost(inst_buf, *sh.args, ctypes.byref(by), ctypes.byref(fl))
    return by.value, fl.value


def signature(inst_buf):
    """[(name, is_ptr, scalar type id, role, layout)] of the instance's kernel;
    layout names the dimensions a pointer spans ("M,N"), "" for scalars."""
    s = RkKsig()
    check(lib.rk_instance_signature(inst_buf, ctypes.byref(s)), "signature")
    lay = (lambda p: (p.dims or b"").decode()) if ND else (lambda p: _SIZE.get(p.size, ""))
    return [(p.name.decode(), bool(p.ptr), p.type, ROLE[p.role], lay(p)) for p in s.p[:s.n]]


def param_count(layout, family, dims):
    """Elements a pointer parameter of this layout addresses for the shape."""
    ext = _Shape(family, dims).extents
    count = 1
    for name in filter(None, layout.split(",")):
        count *= int(name) if name.isdigit() else ext[name]   # a literal extent: a workspace's slices
    return count


def scalar_value(name, family, dims, eps):
    """Value of a scalar kernel parameter: a dimension of the shape, or eps."""
    if name == "eps":
        return eps
    ext = _Shape(family, dims).extents
    if name in ext:
        return ext[name]
    raise RockeError("%s: no value for scalar parameter '%s' (dimensions: %s)" % (family, name, ", ".join(ext)))


class Problem:
    """rk_problem: random inputs from a seed, double references, the check."""

    def __init__(self, inst_buf, family, dims, seed):
        self.p = RkProblem()
        sh = _Shape(family, dims)
        check(lib.rk_problem_init(ctypes.byref(self.p), inst_buf, *sh.args, seed), "problem")
        if self.p.seed != seed:
            lib.rk_problem_free(ctypes.byref(self.p))
            raise RockeError("rocke: rk_problem layout differs from this package's (rebuild the package "
                             "against this librocke)")
        self.sig = self.p.sig

    def scalar(self, i):
        if ND:
            return self.p.scalar[i]
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
