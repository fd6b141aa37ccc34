"""Kernel families through the text knob API (rk_instance_set/get,
rk_family_knobs): rocke.families.softmax(dtype="f16", block_size=256).
Layer: python bindings."""
import ctypes

from . import _shape_api
from ._lib import RockeError, b, check, error_text, lib
from .compile import find_target
from .kernel import Kernel

_SCALARS = {1: "i1", 2: "i4", 3: "i8", 4: "i16", 5: "i32", 6: "i64", 7: "f16", 8: "bf16", 9: "f32",
            10: "f64", 11: "fp8e4m3", 12: "bf8e5m2", 13: "fp8e4m3fnuz", 14: "bf8e5m2fnuz"}


def family_names():
    names, i = [], 0
    while True:
        n = lib.rk_family_name(i).decode()
        if n == "?":
            return names
        names.append(n)
        i += 1


def _family_id(name):
    f = ctypes.c_int()
    check(lib.rk_family_parse(b(name), ctypes.byref(f)))
    return f.value


def knobs(family):
    """[{name, legal, perf, help}] of a family's knobs, in the library's order."""
    n = ctypes.c_uint32()
    arr = lib.rk_family_knobs(_family_id(family), ctypes.byref(n))
    out = []
    buf = ctypes.create_string_buffer(512)
    for i in range(n.value):
        lib.rk_knob_legal_text(ctypes.byref(arr[i]), buf, len(buf))
        out.append({"name": arr[i].name.decode(), "legal": buf.value.decode(), "perf": bool(arr[i].perf),
                    "help": (arr[i].help or b"").decode()})
    return out


def _text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Instance:
    """One instance of a family (rk_instance), its knobs set by name."""

    def __init__(self, family, **knob_values):
        self.family = family
        self._fid = _family_id(family)
        self._buf = (ctypes.c_uint64 * ((_shape_api.INSTANCE_BYTES + 7) // 8))()
        check(lib.rk_instance_default(self._fid, self._buf))
        self._locked = 0
        for k, v in knob_values.items():
            self.set(k, v)

    def set(self, knob, value):
        """Set a knob from its text form; the error names the legal values."""
        idx = ctypes.c_uint32()
        st = lib.rk_instance_set(self._buf, b(knob), b(_text(value)), ctypes.byref(idx))
        if st != 0:
            raise RockeError("rocke.families.%s: %s" % (self.family, error_text()))
        self._locked |= 1 << idx.value
        return self

    def get(self, knob):
        buf = ctypes.create_string_buffer(128)
        check(lib.rk_instance_get(self._buf, b(knob), buf, len(buf)), "rocke.families.%s" % self.family)
        return buf.value.decode()

    @property
    def knobs(self):
        return {kb["name"]: self.get(kb["name"]) for kb in knobs(self.family)}

    @property
    def name(self):
        buf = ctypes.create_string_buffer(256)
        check(lib.rk_instance_name(self._buf, buf, len(buf)))
        return buf.value.decode()

    def copy(self):
        c = Instance.__new__(Instance)
        c.family, c._fid, c._locked = self.family, self._fid, self._locked
        c._buf = type(self._buf)()
        ctypes.memmove(c._buf, self._buf, ctypes.sizeof(self._buf))
        return c

    def validate(self, target):
        st = lib.rk_instance_validate(self._buf, find_target(target))
        if st != 0:
            raise RockeError("%s for %s: %s" % (self.name, target, error_text()))

    def tune(self, target, shape):
        """Let the heuristic choose the performance knobs not set explicitly."""
        _shape_api.tune(self._buf, find_target(target), self.family, shape, self._locked)
        return self

    def check_shape(self, shape):
        _shape_api.check_shape(self._buf, self.family, shape)

    def grid(self, shape):
        return _shape_api.grid(self._buf, self.family, shape)

    def cost(self, shape):
        """(bytes moved, flops) for a shape."""
        return _shape_api.cost(self._buf, self.family, shape)

    def signature(self):
        return [(n, ptr, _SCALARS.get(t, "?"), role, size)
                for n, ptr, t, role, size in _shape_api.signature(self._buf)]

    def build(self, target):
        """The kernel for a target (validated first) as a rocke.Kernel."""
        out = ctypes.c_void_p()
        st = lib.rk_instance_build(self._buf, find_target(target), ctypes.byref(out))
        if st != 0:
            raise RockeError("%s for %s: %s" % (self.name, target, error_text()))
        k = Kernel(None, _handle=out.value)
        k._finished = True
        return k

    def __repr__(self):
        return "rocke.families.%s(%s)" % (self.family, ", ".join("%s=%s" % kv for kv in self.knobs.items()))


def _maker(fam):
    def make(dtype=None, **knob_values):
        if dtype is not None:
            knob_values["dtype"] = dtype
        return Instance(fam, **knob_values)
    make.__name__ = fam
    make.__doc__ = "rocke.families.%s(dtype=..., **knobs) -> Instance" % fam
    return make


for _fam in family_names():
    globals()[_fam] = _maker(_fam)
