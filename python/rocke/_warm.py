"""Warming the compile cache for a GPU machine without LLVM (python -m rocke
warm): rocke.ops calls run in record mode, where numpy arrays and Spec
stand-ins take the GPU path's decisions (dtype, knobs, shape class, the
target the GPU picks) and each kernel is compiled into the on-disk cache
instead of being launched. On the GPU machine the same calls find their
binaries through the cache's ship index (docs/compile.md §6b).
Layer: python bindings."""
import ast
import contextlib
import os
import re

from . import ops
from ._lib import RockeError
from .compile import compile as rk_compile, find_target

_ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "u8": 1, "i32": 4, "i64": 8, "e4m3": 1, "e5m2": 1, "e4m3fnuz": 1}
_NP_NAMES = {"float16": "f16", "float32": "f32", "bfloat16": "bf16", "uint8": "u8", "int32": "i32",
             "int64": "i64"}


def _packed(shape):
    st, n = [], 1
    for d in reversed(shape):
        st.append(n)
        n *= d
    return tuple(reversed(st))


class Spec:
    """A stand-in CUDA tensor for record mode: a dtype name (f16, bf16, f32,
    u8, i32, i64, e4m3, e5m2, e4m3fnuz), a shape and element strides; no data."""
    is_cuda = True
    device = "cuda:0"

    def __init__(self, dtype, shape, strides=None):
        if dtype not in _ITEMSIZE:
            raise RockeError("rocke.warm: dtype %r (legal: %s)" % (dtype, ", ".join(_ITEMSIZE)))
        self.dtype, self.shape = dtype, tuple(int(d) for d in shape)
        self._strides = tuple(strides) if strides is not None else _packed(self.shape)

    ndim = property(lambda self: len(self.shape))

    def stride(self):
        return self._strides

    def is_contiguous(self):
        return all(d == 1 or s == p for d, s, p in zip(self.shape, self._strides, _packed(self.shape)))

    def contiguous(self):
        return self if self.is_contiguous() else Spec(self.dtype, self.shape)

    def t(self):
        return Spec(self.dtype, self.shape[::-1], self._strides[::-1])

    T = property(t)

    def __repr__(self):
        s = "%s[%s]" % (self.dtype, ",".join(map(str, self.shape)))
        return s if self.is_contiguous() else s + "(strides %s)" % (self._strides,)


def _dtype(x):
    return x.dtype if isinstance(x, Spec) else _NP_NAMES.get(x.dtype.name, x.dtype.name)


class RecordKit:
    """The torch kit's methods (rocke/_torch.py TorchKit) over numpy arrays and
    Specs, for the attention, serving and fp8 GEMM ops: the same GPU-side
    decisions, and launch compiles instead."""
    emu = False

    def __init__(self, recorder, opname, arrays):
        for i, a in enumerate(arrays):
            if not recorder.takes(a):
                raise RockeError("rocke.ops.%s: argument %d is %s: record mode takes numpy arrays or rocke.warm.Spec "
                                 "stand-ins" % (opname, i, type(a).__name__))
        self.rec, self.cc, self.target = recorder, recorder.cc, recorder.generic_target

    def dtype(self, x):
        return _dtype(x)

    def strides(self, x):
        return x.stride() if isinstance(x, Spec) else tuple(s // x.itemsize for s in x.strides)

    def contiguous(self, x):
        if isinstance(x, Spec):
            return x.contiguous()
        import numpy as np
        return np.ascontiguousarray(x)

    def is_contiguous(self, x):
        return x.is_contiguous() if isinstance(x, Spec) else x.flags["C_CONTIGUOUS"]

    def transpose(self, x):
        return x.t() if isinstance(x, Spec) else x.T

    def host(self, x):
        if isinstance(x, Spec):
            raise RockeError("rocke.warm: the op reads the values of %r, which a Spec does not have: pass a numpy "
                             "array with the values (or the op's max_seqlen_* arguments)" % (x,))
        import numpy as np
        return np.asarray(x)

    def empty(self, shape, dt, like):
        return Spec(dt, shape)

    def full(self, shape, value, like):
        return Spec("f32", shape)

    def launch(self, opname, p, kernel_for, arrays, values, ext):
        self.rec.compile(p, kernel_for)
        ops._used[opname] = p.used


def key_line(p):
    """The `kernel` line of a list file that compiles p's kernel again."""
    from .families import _text
    knobs = " ".join("%s=%s" % (k, _text(v)) for k, v in sorted(p.knobs.items()))
    return "kernel %s %s %s %s" % (p.inst.family, "x".join(map(str, p.dims)), p.target, knobs)


def missed(p, err):
    """A compile failure of p's kernel, with its warm line (and that line
    appended to $ROCKE_WARM_MISSES when set)."""
    line = key_line(p)
    path = os.environ.get("ROCKE_WARM_MISSES")
    if path:
        try:
            with open(path, "a") as f:
                f.write(line + "\n")
        except OSError:
            pass
    return RockeError("%s [warm line: %s]" % (err, line), getattr(err, "status", None))


class Recorder:
    """Record mode: every rocke.ops call on numpy arrays or Specs compiles the
    kernel a GPU of compute capability cc would run and notes it."""

    def __init__(self, target):
        find_target(target)
        if not target.startswith("sm_"):
            raise RockeError("rocke.warm: --target %s: the GPU path runs CUDA devices (legal: sm_80, sm_90, sm_90a)"
                             % target)
        from ._torch import target_for_cc
        self.target = target
        self.cc = int("".join(c for c in target[3:] if c.isdigit()))
        self.generic_target = target_for_cc(self.cc, "target %s" % target)
        self.kernels = {}          # (kernel name, target) -> {"line", "hit", "ms"}

    def takes(self, x):
        return isinstance(x, Spec) or ops._is_numpy(x)

    def kit(self, opname, arrays):
        return RecordKit(self, opname, arrays)

    def compile(self, p, kernel_for=None):
        key = (p.inst.name, p.target)
        if key in self.kernels:
            return
        try:
            art = rk_compile((kernel_for or ops._kernel_for)(p), p.target)
        except RockeError as e:
            raise missed(p, e)
        self.kernels[key] = {"line": key_line(p), "hit": art.cache_hit, "ms": art.times_ms["total"],
                             "name": art.kernel_name, "target": p.target}

    def run_simple(self, opname, family, knobs, inputs, out_spec):
        """rocke/_torch.py run()'s decisions for the one-tensor-in families."""
        x = inputs[0]
        dt = _dtype(x)
        for a in inputs[1:]:
            if _dtype(a) != dt:
                raise RockeError("rocke.ops.%s: inputs have dtypes %s and %s; they must match" % (opname, dt, _dtype(a)))
        if dt not in ("f16", "bf16", "f32"):
            raise RockeError("rocke.ops.%s: dtype %s is not served (legal: f16, bf16, f32)" % (opname, dt))
        knobs = dict(knobs, dtype=dt)
        p = ops._prepare(family, knobs, tuple(x.shape), self.generic_target)
        self.compile(p)
        ops._used[opname] = p.used
        out_dt = knobs.get("out_dtype", dt)
        outs = [Spec(out_dt, shape) for shape, _ in out_spec(tuple(x.shape), out_dt)]
        return outs[0] if len(outs) == 1 else tuple(outs)


@contextlib.contextmanager
def recording(target):
    """with recording("sm_90a") as r: rocke.ops calls compile; r.kernels lists them."""
    if ops._RECORDER is not None:
        raise RockeError("rocke.warm: already recording")
    r = Recorder(target)
    ops._RECORDER = r
    try:
        yield r
    finally:
        ops._RECORDER = None


# ---- list files -------------------------------------------------------------------------------
_SPEC = re.compile(r"^([a-z0-9]+)\[([0-9,]*)\](?:/\[([0-9,]*)\])?(\.T)?$")
_VALUES = re.compile(r"^(i32|i64|f32)\{([-0-9.e,]*)\}$")


def parse_value(tok):
    """f16[37,1000] (a Spec), f16[64,32].T (its transpose), f16[300,520]/[528,1]
    (a view: element strides), i32{0,37,138} (a
    numpy array with those values: offsets an op reads), else a Python literal."""
    m = _SPEC.match(tok)
    if m:
        shape = [int(d) for d in m.group(2).split(",") if d]
        strides = [int(d) for d in m.group(3).split(",") if d] if m.group(3) is not None else None
        if strides is not None and len(strides) != len(shape):
            raise RockeError("rocke.warm: %r gives %d strides for %d dimensions" % (tok, len(strides), len(shape)))
        s = Spec(m.group(1), shape, strides)
        return s.t() if m.group(4) else s
    m = _VALUES.match(tok)
    if m:
        import numpy as np
        return np.array([float(v) for v in m.group(2).split(",") if v],
                        {"i32": np.int32, "i64": np.int64, "f32": np.float32}[m.group(1)])
    try:
        return ast.literal_eval(tok)
    except (ValueError, SyntaxError):
        raise RockeError("rocke.warm: %r is neither an array (DTYPE[d0,d1,...], optionally /[s0,s1,...] strides "
                         "and .T), nor values "
                         "(i32{0,5,9}), nor a Python literal" % tok)


def run_line(rec, line):
    """One list line: `OP ARG ... NAME=VALUE ...` calls rocke.ops.OP on Specs;
    `kernel FAMILY D0xD1x.. TARGET KNOB=VALUE ...` compiles that instance."""
    toks = line.split()
    if toks[0] == "kernel":
        if len(toks) < 4:
            raise RockeError("rocke.warm: a kernel line is `kernel FAMILY D0xD1x... TARGET KNOB=VALUE ...`")
        try:
            dims = tuple(int(d) for d in toks[2].split("x"))
        except ValueError:
            raise RockeError("rocke.warm: dimensions %r are not D0xD1x..." % toks[2])
        knobs = dict(t.split("=", 1) for t in toks[4:])
        find_target(toks[3])
        rec.compile(ops._prepare(toks[1], knobs, dims, toks[3]))
        return
    fn = getattr(ops, toks[0], None)
    if toks[0].startswith("_") or not callable(fn):
        raise RockeError("rocke.warm: %r is not a rocke.ops function" % toks[0])
    args, kwargs = [], {}
    for t in toks[1:]:
        name, eq, val = t.partition("=")
        if eq and name.isidentifier():
            kwargs[name] = parse_value(val)
        else:
            args.append(parse_value(t))
    fn(*args, **kwargs)


def run_list(rec, path):
    """Every line of a list file ('#' starts a comment); errors name the line."""
    with open(path) as f:
        lines = f.readlines()
    for no, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if line:
            try:
                run_line(rec, line)
            except RockeError as e:
                raise RockeError("%s:%d: %s" % (path, no, e))
