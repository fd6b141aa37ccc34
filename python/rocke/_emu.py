"""Running prepared family kernels on the CPU emulator, on numpy arrays
registered in place with rk_emu_register (no copies). Layer: python bindings."""
import ctypes
from ctypes import c_uint32, c_uint64, c_void_p

from ._lib import RockeError, b, check, error_text, lib
from .compile import find_target

_EMUS = {}
# rk_scalar -> element bytes of a tensor map (the integer, float and fp8 / bf8 types)
_ELEM_BYTES = {3: 1, 4: 2, 5: 4, 6: 8, 7: 2, 8: 2, 9: 4, 10: 8, 11: 1, 12: 1, 13: 1, 14: 1}
lib.rk_emu_tensormap_encode_nd.restype = ctypes.c_int
lib.rk_emu_tensormap_encode_nd.argtypes = [c_uint64, c_uint32, c_uint32, ctypes.POINTER(c_uint64),
                                           ctypes.POINTER(c_uint64), ctypes.POINTER(c_uint32),
                                           ctypes.POINTER(c_uint32), c_uint32, c_void_p]


def emulator(target):
    """One rk_emu per target for the life of the process."""
    emu = _EMUS.get(target)
    if emu is None:
        emu = lib.rk_emu_new(find_target(target), None)
        if not emu:
            raise RockeError("emulator for %s: %s" % (target, error_text()))
        _EMUS[target] = emu
    return emu


def parse_device(device):
    """'emu' (the default target) or 'emu:<target>' -> target name."""
    if device in (None, "emu"):
        return ctypes.cast(lib.rk_target_default(), ctypes.POINTER(ctypes.c_char_p))[0].decode()
    if isinstance(device, str) and device.startswith("emu:"):
        find_target(device[4:])
        return device[4:]
    raise RockeError("numpy arrays run on the emulator: device must be 'emu' or 'emu:<target>', got %r "
                     "(CUDA tensors come from torch, CuPy or JAX)" % (device,))


class EmuLauncher:
    """A built kernel plus its packed argument slots: launch(arrays, scalars)."""

    def __init__(self, target, kernel, params, grid, block):
        self.emu = emulator(target)
        self.kernel = kernel                      # keeps the rk_kernel alive
        self.what = "emulator launch of " + kernel.name
        self.grid = (c_uint32 * 3)(*grid)
        self.block = (c_uint32 * 3)(*block)
        self.slots = []
        self.args = (c_void_p * max(len(params), 1))()
        for i, (ctype, _) in enumerate(params):
            slot = ctype()
            self.slots.append(slot)
            self.args[i] = ctypes.cast(ctypes.pointer(slot), c_void_p)
        self.ptr_index = [i for i, (ctype, _) in enumerate(params) if ctype is c_uint64]
        self.names = [n for _, n in params]

    def launch(self, buffers, scalars, maps=None):
        """buffers: one (address, bytes) per pointer parameter in order;
        scalars: {index: value}; maps: {index of a tensormap parameter: its
        rk_problem_tmap_nd}, encoded over the buffer's emulator address."""
        emu, regs = self.emu, []
        addr = c_uint64()
        try:
            for i, (ptr, nbytes) in zip(self.ptr_index, buffers):
                check(lib.rk_emu_register(emu, ptr, nbytes, b(self.names[i]), ctypes.byref(addr)),
                      "emulator: parameter " + self.names[i])
                regs.append(addr.value)
                self.slots[i].value = addr.value
            for i, v in scalars.items():
                self.slots[i].value = v
            for i, t in (maps or {}).items():
                check(lib.rk_emu_tensormap_encode_nd(self.slots[t.buf].value, _ELEM_BYTES[t.elem], t.rank, t.dims,
                                                     t.strides_bytes, t.box, t.elem_strides, t.swizzle_bytes,
                                                     self.slots[i]), "emulator: tensor map " + self.names[i])
            check(lib.rk_emu_launch(emu, self.kernel._k, self.grid, self.block, 0, self.args),
                  self.what)
        finally:
            for a in regs:
                lib.rk_emu_release(emu, a)


_SCALAR_CTYPES = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
                  "i64": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double}


def launch_kernel(kernel, grid, block, args, device=None):
    """Run an authored kernel on the emulator: args in parameter order, numpy
    arrays for pointers (written in place), Python numbers for scalars."""
    target = parse_device(device)
    params = kernel.params
    if len(args) != len(params):
        raise RockeError("launch %s: %d arguments for %d parameters (%s)" % (
            kernel.name, len(args), len(params), ", ".join(n for n, _ in params)))
    kernel.finish()
    slots, buffers, scalars = [], [], {}
    for i, ((name, t), a) in enumerate(zip(params, args)):
        tn = t.name
        if tn.startswith("ptr<"):
            if not (hasattr(a, "ctypes") and hasattr(a, "nbytes")):
                raise RockeError("launch %s: parameter %s is %s: pass a numpy array" % (kernel.name, name, tn))
            if not a.flags["C_CONTIGUOUS"]:
                raise RockeError("launch %s: array for %s is not C-contiguous" % (kernel.name, name))
            slots.append((c_uint64, name))
            buffers.append((a.ctypes.data, a.nbytes))
        elif tn in _SCALAR_CTYPES:
            slots.append((_SCALAR_CTYPES[tn], name))
            scalars[i] = a
        else:
            raise RockeError("launch %s: parameter %s of type %s cannot be passed from Python" % (
                kernel.name, name, tn))
    pad = lambda v: tuple(v) + (1,) * (3 - len(v))       # noqa: E731
    g = pad(grid if isinstance(grid, (tuple, list)) else (grid,))
    bl = pad(block if isinstance(block, (tuple, list)) else (block,))
    EmuLauncher(target, kernel, slots, g, bl).launch(buffers, scalars)
