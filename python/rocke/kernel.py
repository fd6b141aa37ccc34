"""Authoring kernels from Python: rocke.Kernel mirrors the C builder one to one
(params with ABI flags, every op of the op table by name, structured if/for
with carried values). Ops go through the generic rk_emit entry point, so no C
builder function is named here. Layer: python bindings."""
import ctypes
import struct

from . import _optable
from ._lib import (RkParamAbi, RkType, RkValue, RockeError, b, error_text, lib,
                   take_string)

_KIND_VEC = 2      # rk_type_kind: RK_TK_VEC
_KIND_PTR = 3


class _RkOpHead(ctypes.Structure):
    """The leading fields of struct rk_op (ir.h): enough to read the results."""
    _fields_ = [("code", ctypes.c_int), ("nin", ctypes.c_uint16), ("nout", ctypes.c_uint16),
                ("nreg", ctypes.c_uint16), ("in_", ctypes.POINTER(RkValue)),
                ("out", ctypes.POINTER(RkValue))]


class _RkParamHead(ctypes.Structure):
    """The leading fields of rk_param (ir.h)."""
    _fields_ = [("name", ctypes.c_char_p), ("type", RkType)]


class Type:
    """A type of one kernel (scalars are the same in every kernel)."""
    __slots__ = ("kernel", "raw")

    def __init__(self, kernel, raw):
        self.kernel, self.raw = kernel, raw

    @property
    def name(self):
        return lib.rk_type_name(self.kernel._k, self.raw).decode()

    @property
    def elem(self):
        return Type(self.kernel, lib.rk_type_elem(self.kernel._k, self.raw))

    @property
    def count(self):
        return lib.rk_type_count(self.kernel._k, self.raw)

    @property
    def is_vec(self):
        return lib.rk_type_kind_of(self.kernel._k, self.raw) == _KIND_VEC

    def __eq__(self, other):
        return isinstance(other, Type) and other.raw.id == self.raw.id

    def __hash__(self):
        return self.raw.id

    def __repr__(self):
        return "rocke.Type(%s)" % self.name


class Value:
    """An SSA value (device-time: it never steers Python control flow)."""
    __slots__ = ("kernel", "raw")

    def __init__(self, kernel, raw):
        self.kernel, self.raw = kernel, raw

    @property
    def type(self):
        return Type(self.kernel, lib.rk_value_type(self.kernel._k, self.raw))

    def set_hint(self, hint):
        lib.rk_value_set_hint(self.kernel._k, self.raw, b(hint))
        return self

    def __bool__(self):
        raise TypeError("a rocke Value is a device-time value: use k.if_(cond) / k.select, not Python if")

    def __repr__(self):
        return "rocke.Value(%%%d: %s)" % (self.raw.id, self.type.name)


def _round_float(tname, v):
    """The literal as the type holds it (as the C builder rounds constants)."""
    if tname == "f32":
        return struct.unpack("<f", struct.pack("<f", v))[0]
    if tname == "f16":
        return struct.unpack("<e", struct.pack("<e", v))[0]
    if tname == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
        if (bits & 0x7F800000) != 0x7F800000:         # round to nearest even, not NaN/inf
            bits += 0x7FFF + ((bits >> 16) & 1)
        return struct.unpack("<f", struct.pack("<I", (bits >> 16 << 16) & 0xFFFFFFFF))[0]
    return float(v)


class _Namespace:
    """k.arith.add(...), k.memref.global_load_typed(...): ops by dialect."""

    def __init__(self, kernel, dialect):
        self._kernel, self._dialect = kernel, dialect

    def __getattr__(self, name):
        full = self._dialect + "." + name
        if full not in _optable.BY_NAME:
            raise AttributeError("op '%s' is not in the op table" % full)
        return lambda *a, **kw: self._kernel.op(full, *a, **kw)

    def __dir__(self):
        p = self._dialect + "."
        return [n[len(p):] for n in _optable.BY_NAME if n.startswith(p)]


_DIALECTS = sorted({op.name.split(".")[0] for op in _optable.OPS})


class Kernel:
    """rocke.Kernel("vadd"): a kernel under construction (rk_kernel)."""

    def __init__(self, name, _handle=None):
        if _handle is None:
            _handle = lib.rk_kernel_new(b(name))
            if not _handle:
                raise RockeError("rocke.Kernel(%r): %s" % (name, error_text()))
        self._k = _handle
        self._finished = False

    @classmethod
    def parse(cls, text):
        """A kernel from ckdsl.ir v1 text (not verified: compile/finish verify)."""
        out = ctypes.c_void_p()
        data = b(text)
        st = lib.rk_parse(data, len(data), ctypes.byref(out))
        if st != 0:
            raise RockeError("ckdsl.ir parse: " + error_text())
        k = cls(None, _handle=out.value)
        k._finished = True
        return k

    def __del__(self):
        if getattr(self, "_k", None):
            lib.rk_kernel_free(self._k)
            self._k = None

    # ---- state and errors ------------------------------------------------------
    @property
    def name(self):
        return lib.rk_kernel_name(self._k).decode()

    def _raise_if_failed(self):
        if lib.rk_builder_status(self._k) != 0:
            raise RockeError(lib.rk_builder_error(self._k).decode())

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _DIALECTS:
            return _Namespace(self, name)
        info = _optable.BY_FN.get(name)
        if info is None:
            raise AttributeError("rocke.Kernel has no attribute or op '%s'" % name)
        return lambda *a, **kw: self.op(info.name, *a, **kw)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_DIALECTS) | set(_optable.BY_FN))

    # ---- types -------------------------------------------------------------------
    def type(self, t):
        """A Type from a Type or a canonical name ("f32", "vec<f16x8>", "ptr<f32,global>")."""
        if isinstance(t, Type):
            return t
        raw = lib.rk_type_parse(self._k, b(t))
        if raw.id == 0:
            raise RockeError("type %r: %s" % (t, error_text()))
        return Type(self, raw)

    def vec(self, elem, n):
        raw = lib.rk_type_vec(self._k, self.type(elem).raw, n)
        if raw.id == 0:
            raise RockeError("vec<%s x %d>: %s" % (self.type(elem).name, n, error_text()))
        return Type(self, raw)

    # ---- parameters and kernel attributes ---------------------------------------
    @property
    def params(self):
        """[(name, Type)] in ABI order."""
        out = []
        for i in range(lib.rk_kernel_nparams(self._k)):
            head = ctypes.cast(lib.rk_kernel_param(self._k, i), ctypes.POINTER(_RkParamHead)).contents
            out.append((head.name.decode(), Type(self, RkType(head.type.id))))
        return out

    def param(self, name, type, noalias=False, readonly=False, writeonly=False, nocapture=True,
              nonnull=False, align=0, dereferenceable=0, tensormap=False):
        """rk_add_param with the ABI flags of rk_param_abi."""
        abi = RkParamAbi(noalias, readonly, writeonly, not nocapture, nonnull, align,
                         dereferenceable, tensormap)
        v = lib.rk_add_param(self._k, b(name), self.type(type).raw, ctypes.byref(abi))
        self._raise_if_failed()
        if v.id == 0:
            raise RockeError("param %r: %s" % (name, error_text()))
        return Value(self, v)

    def set_attr(self, key, value):
        """Kernel attribute: int, str or an (lo, hi) pair (max_workgroup_size, waves_per_eu ...)."""
        if isinstance(value, tuple):
            lib.rk_kernel_set_attr_pair(self._k, b(key), value[0], value[1])
        elif isinstance(value, int):
            lib.rk_kernel_set_attr_int(self._k, b(key), value)
        else:
            lib.rk_kernel_set_attr_str(self._k, b(key), b(value))
        self._raise_if_failed()

    def set_loc(self, loc):
        lib.rk_set_loc(self._k, b(loc) if loc else None)

    # ---- ops -----------------------------------------------------------------------
    def _result_types(self, info, ins, attrs):
        """Result types of an op whose caller gave none, by the op's type rule."""
        if info.nout == 0 and not info.nout_min:
            return []
        rule = info.rule
        t0 = ins[0].type if ins else None
        if rule in ("R_SAME", "R_PTR_ADD", "R_VINSERT") and t0 is not None:
            return [t0]
        if rule in ("R_VREDUCE", "R_VEXTRACT") and t0 is not None:
            return [t0.elem]
        if rule in ("R_SELECT", "R_VSELECT") and len(ins) > 1:
            return [ins[1].type]
        if rule == "R_CMP":
            return [self.type("i1")]
        if rule == "R_VCMP" and t0 is not None:
            return [self.vec("i1", t0.count)]
        if rule == "R_CONST" and "ity" in attrs:
            return [self.type(attrs["ity"])]
        if rule == "R_CONST_VEC" and "elem" in attrs and "vec" in attrs:
            return [self.vec(attrs["elem"], attrs["vec"])]
        if rule in ("R_VSPLAT",) and t0 is not None and "vec" in attrs:
            return [self.vec(t0, attrs["vec"])]
        if rule == "R_VPACK" and ins:
            return [self.vec(t0, len(ins))]
        if rule == "R_VCONCAT" and len(ins) == 2:
            return [self.vec(t0.elem, t0.count + ins[1].type.count)]
        if rule == "R_GLOAD" and t0 is not None:
            elem = self.type(attrs["elem_type"]) if "elem_type" in attrs else t0.elem
            vec = attrs.get("vec", 1)
            return [self.vec(elem, vec) if vec > 1 else elem]
        if rule in ("R_WIDEN", "R_NARROW", "R_BITCAST") and "target" in attrs:
            return [self.type(attrs["target"])]
        if rule == "R_SIG":
            res = info.sig.partition("->")[2].strip()
            if not res:
                return []
            if "|" not in res and "," not in res and lib.rk_type_parse(self._k, b(res)).id:
                return [self.type(res)]
        raise RockeError("%s: cannot infer the result type (rule %s, sig '%s'): pass result=TYPE"
                         % (info.name, rule, info.sig))

    def _set_attr(self, op, info, key, v):
        kb = b(key)
        kind = next((a.kind for a in _optable.ATTRS[info.name] if a.key == key), None)
        if isinstance(v, bool):
            lib.rk_op_set_bool(self._k, op, kb, v)
        elif isinstance(v, Type) or (kind == "t" and isinstance(v, str)):
            lib.rk_op_set_type(self._k, op, kb, self.type(v).raw)
        elif isinstance(v, int):
            lib.rk_op_set_int(self._k, op, kb, v)
        elif isinstance(v, float):
            lib.rk_op_set_float(self._k, op, kb, v)
        elif isinstance(v, str):
            lib.rk_op_set_str(self._k, op, kb, b(v))
        elif isinstance(v, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            arr = (ctypes.c_int64 * len(v))(*v)
            lib.rk_op_set_int_list(self._k, op, kb, arr, len(v))
        else:
            raise RockeError("%s: attribute %s=%r: expected bool, int, float, str, a type or a list of ints"
                             % (info.name, key, v))

    def op(self, name, *operands, result=None, **attrs):
        """Emit op `name` (wire name "arith.add" or builder name "add") with the
        operands and attributes given; returns its result (None when it has
        none, a tuple when several). result= gives the result type(s) when the
        op's rule cannot infer them."""
        info = _optable.find(name)
        ins = []
        for i, v in enumerate(operands):
            if not isinstance(v, Value):
                raise RockeError("%s: operand %d is %r, not a rocke Value (make constants with k.const)"
                                 % (info.name, i, v))
            if v.kernel is not self:
                raise RockeError("%s: operand %d belongs to kernel %s" % (info.name, i, v.kernel.name))
            ins.append(v)
        if result is None:
            outs = self._result_types(info, ins, attrs)
        else:
            outs = [self.type(t) for t in (result if isinstance(result, (list, tuple)) else [result])]
        in_arr = (RkValue * max(len(ins), 1))(*[v.raw for v in ins])
        out_arr = (RkType * max(len(outs), 1))(*[t.raw for t in outs])
        op = lib.rk_emit(self._k, info.code, in_arr, len(ins), out_arr, len(outs))
        if op:
            for key, v in attrs.items():
                self._set_attr(op, info, key, v)
            lib.rk_op_check(self._k, op)
        self._raise_if_failed()
        if not op:
            raise RockeError("%s: %s" % (info.name, error_text() or "the builder refused the op"))
        results = [Value(self, r) for r in self._op_results(op, len(outs))]
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def _op_results(self, op, n):
        view = ctypes.cast(op, ctypes.POINTER(_RkOpHead)).contents
        return [RkValue(view.out[i].id) for i in range(min(n, view.nout))]

    # ---- helpers over op() that mirror the C convenience builders -------------------
    def const(self, value, type="i32"):
        """arith.constant (ints and bools exact, floats rounded to the type)."""
        t = self.type(type)
        if isinstance(value, float) or t.name in ("f16", "bf16", "f32", "f64"):
            return self.op("arith.constant", result=t, value=_round_float(t.name, float(value)), ity=t)
        return self.op("arith.constant", result=t, value=int(value), ity=t)

    def load(self, ptr, idx, vec=1):
        """memref.global_load_typed (vec 1) or global_load_vN, aligned to the access."""
        et = ptr.type.elem
        bytes_ = (_BITS.get(et.name, 32) + 7) // 8
        if vec <= 1:
            return self.op("memref.global_load_typed", ptr, idx, elem_type=et, align=bytes_)
        return self.op("memref.global_load_vN", ptr, idx, elem_type=et, vec=vec, align=bytes_ * vec)

    def store(self, ptr, idx, val):
        vt = val.type
        et = vt.elem if vt.is_vec else vt
        n = vt.count if vt.is_vec else 1
        bytes_ = (_BITS.get(et.name, 32) + 7) // 8 * n
        if vt.is_vec:
            self.op("memref.global_store_vN", ptr, idx, val, elem_type=et, vec=n, align=bytes_)
        else:
            self.op("memref.global_store_typed", ptr, idx, val, elem_type=et, align=bytes_)

    # ---- structured control flow ---------------------------------------------------------
    def if_(self, cond, results=None):
        """with k.if_(cond) as br: ... [br.else_() ...] — results=[types] for an
        if/else that yields values (br.yield_(...) in each branch; br.results after)."""
        return _If(self, cond, results)

    def range(self, lo, hi, step=1, carry=(), iv_name=None, unroll=False):
        """for i in k.range(lo, hi): ...; with carry=[inits]:
        for i, carried in loop: loop.next(*new_values); loop.results after the loop."""
        return _Range(self, lo, hi, step, list(carry), iv_name, unroll)

    def return_(self):
        lib.rk_build_return(self._k)
        self._raise_if_failed()

    # ---- finishing, text, compile ----------------------------------------------------------
    def finish(self):
        """rk_kernel_finish: closes the body and verifies; raises with the diagnostic."""
        if not self._finished:
            st = lib.rk_kernel_finish(self._k)
            if st != 0:
                raise RockeError(lib.rk_builder_error(self._k).decode() or error_text())
            self._finished = True
        return self

    def ir(self):
        """ckdsl.ir v1 text (finishes the kernel first)."""
        self.finish()
        return take_string(lib.rk_serialize(self._k))

    def print(self):
        self.finish()
        return take_string(lib.rk_print(self._k))

    def _as_value(self, v, type="i32"):
        return v if isinstance(v, Value) else self.const(v, type)


_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32,
         "f64": 64, "fp8e4m3": 8, "bf8e5m2": 8, "fp8e4m3fnuz": 8, "bf8e5m2fnuz": 8}


def _raw_array(ctype, items):
    return (ctype * max(len(items), 1))(*items)


class _If:
    def __init__(self, k, cond, results):
        self.k, self.cond = k, cond
        self.types = [k.type(t) for t in results] if results else []
        self.results = ()
        self._yields = []
        self._in_else = False
        self._out = None

    def __enter__(self):
        k = self.k
        if self.types:
            self._out = _raw_array(RkValue, [RkValue() for _ in self.types])
            lib.rk_if_else_begin(k._k, self.cond.raw, len(self.types),
                                 _raw_array(RkType, [t.raw for t in self.types]), self._out)
        else:
            lib.rk_if_begin(k._k, self.cond.raw)
        k._raise_if_failed()
        return self

    def yield_(self, *values):
        self._yields = list(values)

    def _flush(self):
        ys = _raw_array(RkValue, [v.raw for v in self._yields])
        n = len(self._yields)
        self._yields = []
        return ys, n

    def else_(self):
        if self._in_else:
            raise RockeError("scf.if: else_() called twice")
        ys, n = self._flush()
        lib.rk_else(self.k._k, ys, n)
        self._in_else = True
        self.k._raise_if_failed()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            return False
        ys, n = self._flush()
        lib.rk_if_end(self.k._k, ys, n)
        self.k._raise_if_failed()
        if self.types:
            self.results = tuple(Value(self.k, RkValue(self._out[i].id)) for i in range(len(self.types)))
        return False


class _Range:
    def __init__(self, k, lo, hi, step, carry, iv_name, unroll):
        self.k = k
        self.lo, self.hi, self.step = k._as_value(lo), k._as_value(hi), k._as_value(step)
        self.carry, self.iv_name, self.unroll = carry, iv_name, unroll
        self.results = ()
        self._next = None

    def next(self, *values):
        """The carried values for the next iteration (one per carry)."""
        self._next = list(values)

    def __iter__(self):
        k, n = self.k, len(self.carry)
        inits = _raw_array(RkValue, [v.raw for v in self.carry])
        iters = _raw_array(RkValue, [RkValue() for _ in self.carry])
        iv = lib.rk_for_begin(k._k, self.lo.raw, self.hi.raw, self.step.raw,
                              b(self.iv_name) if self.iv_name else None, n, inits, None, iters)
        if self.unroll:
            lib.rk_for_set_unroll(k._k, True)
        k._raise_if_failed()
        ivv = Value(k, iv)
        if n:
            yield ivv, [Value(k, RkValue(iters[i].id)) for i in range(n)]
        else:
            yield ivv
        ys = self._next if self._next is not None else []
        if n and len(ys) != n:
            raise RockeError("scf.for: the loop carries %d value(s); call loop.next(...) with %d, got %d"
                             % (n, n, len(ys)))
        outs = _raw_array(RkValue, [RkValue() for _ in range(n)])
        lib.rk_for_end(k._k, _raw_array(RkValue, [v.raw for v in ys]), len(ys), outs if n else None)
        k._raise_if_failed()
        self.results = tuple(Value(k, RkValue(outs[i].id)) for i in range(n))
