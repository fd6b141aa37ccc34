"""Launching a prepared family kernel by parameter name: the caller names its
arrays and scalar values, work buffers are zeroed here; the numpy kit runs
on the emulator. Shared by the attention, serving and fp8 GEMM ops. Layer:
python bindings."""
from ctypes import c_float, c_int32, c_int64, c_uint8, c_uint64

from ._lib import RockeError, lib

_EMU_CTYPES = {"i32": c_int32, "i64": c_int64}


TENSORMAP_BYTES = 128


def param_ctype(ptr, t, role="scalar"):
    if ptr:
        return c_uint64
    if role == "tensormap":
        return c_uint8 * TENSORMAP_BYTES
    return _EMU_CTYPES.get(t, c_float)


def layout_count(layout, ext):
    """Elements of a signature layout ("B,Skv/16,16,Hkv,D", "B+1", "1"):
    each entry a number, a dimension, NAME/N (ceil), NAME+N or NAME8 (NAME
    rounded up to a multiple of 8)."""
    count = 1
    for term in filter(None, layout.split(",")):
        if "/" in term:
            name, div = term.split("/")
            n = (_term(name, ext) + int(div) - 1) // int(div)
        elif "+" in term:
            name, add = term.split("+")
            n = _term(name, ext) + int(add)
        else:
            n = _term(term, ext)
        count *= n
    return count


def _term(name, ext):
    if name.isdigit():
        return int(name)
    if name not in ext and name.endswith("8") and name[:-1] in ext:
        return (ext[name[:-1]] + 7) // 8 * 8      # the GEMM's staged copies: K8 = K rounded up to 8
    if name not in ext:
        raise RockeError("rocke: layout entry %s names no dimension (dimensions: %s)" % (name, ", ".join(ext)))
    return ext[name]


def strided_span(x):
    """(address, bytes) from x's first element to its last (non-negative strides)."""
    last = sum((n - 1) * s for n, s in zip(x.shape, x.strides))
    return x.ctypes.data, last + x.itemsize


class NumpyKit:
    """numpy arrays on the emulator: what an op needs of its arrays (the torch
    kit in _torch.py has the same methods)."""
    emu = True
    _NAMES = {"float16": "f16", "float32": "f32", "bfloat16": "bf16", "uint8": "u8", "int32": "i32",
              "int64": "i64"}

    def __init__(self, device):
        from . import _emu
        self.target = _emu.parse_device(device)

    def dtype(self, x):
        return self._NAMES.get(x.dtype.name, x.dtype.name)

    def strides(self, x):
        """Strides in elements."""
        return tuple(s // x.itemsize for s in x.strides)

    def contiguous(self, x):
        import numpy as np
        return np.ascontiguousarray(x)

    def transpose(self, x):
        return x.T

    def is_contiguous(self, x):
        return x.flags["C_CONTIGUOUS"]

    def host(self, x):
        import numpy as np
        return np.asarray(x)

    def empty(self, shape, dt, like):
        import numpy as np
        if dt == "bf16":
            try:
                import ml_dtypes
            except ImportError:
                raise RockeError("rocke.ops: a bfloat16 result needs ml_dtypes for numpy (or ask for f16 / f32)")
            return np.empty(shape, dtype=ml_dtypes.bfloat16)
        return np.empty(shape, dtype={"f32": np.float32, "f16": np.float16}.get(dt, like.dtype))

    def full(self, shape, value, like):
        import numpy as np
        return np.full(shape, value, np.float32)

    def launch(self, opname, p, kernel_for, arrays, values, ext):
        """Run p's kernel: arrays {pointer name: array}, values {scalar name:
        number}; work buffers (role work) are zeroed f32 arrays sized by their
        layout over ext {dimension: extent}."""
        import numpy as np
        from . import _emu
        if p.launcher is None:
            params = [(param_ctype(ptr, t, role), n) for n, ptr, t, role, _ in p.sig]
            p.launcher = _emu.EmuLauncher(self.target, kernel_for(p), params, p.grid, p.block)
        from ._tmaps import has_maps, tensor_maps
        args = _pointer_args(opname, p, arrays, ext, lambda n: np.zeros(n, np.float32))   # alive until the launch returns
        spans = [strided_span(a) for a in args]
        maps = None
        if has_maps(p):          # described for these views: extents in elements of each buffer
            names = [name for name, ptr, _, _, _ in p.sig if ptr]
            maps = tensor_maps(p, values, {n: nb // a.itemsize for n, a, (_, nb) in zip(names, args, spans)})
        p.launcher.launch(spans, _scalar_args(opname, p, values), maps)
        from . import ops
        ops._used[opname] = p.used


def work_f32s(layout, scalar, ext):
    """f32 elements of a zeroed work buffer: its layout's elements, each as
    many 32-bit words as its type holds (the grid barrier's i64 words: 2)."""
    bits = int(scalar[1:]) if isinstance(scalar, str) and scalar[1:].isdigit() else \
        lib.rk_scalar_bits(scalar) if isinstance(scalar, int) else 32
    return layout_count(layout, ext) * max(1, (bits + 31) // 32)


def _pointer_args(opname, p, arrays, ext, zeros):
    out = []
    for name, ptr, scalar, role, layout in p.sig:
        if not ptr:
            continue
        a = arrays.get(name)
        if a is None:
            if role != "work":
                raise RockeError("rocke.ops.%s: no array for parameter %s of %s" % (opname, name, p.inst.name))
            a = zeros(work_f32s(layout, scalar, ext))
        out.append(a)
    return out


def _scalar_args(opname, p, values):
    scalars = {}
    for i, (name, ptr, _, role, _) in enumerate(p.sig):
        if ptr or role == "tensormap":
            continue
        if name not in values:
            raise RockeError("rocke.ops.%s: no value for scalar parameter %s of %s" % (opname, name, p.inst.name))
        scalars[i] = values[name]
    return scalars
