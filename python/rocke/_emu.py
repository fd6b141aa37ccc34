"""Running prepared family kernels on the CPU emulator, on numpy arrays
registered in place with rk_emu_register (no copies). Layer: python bindings."""
import ctypes
from ctypes import c_uint32, c_uint64, c_void_p

from ._lib import RockeError, b, check, error_text, lib
from .compile import find_target

_EMUS = {}


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

    def launch(self, buffers, scalars):
        """buffers: one (address, bytes) per pointer parameter in order;
        scalars: {index: value}."""
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
            check(lib.rk_emu_launch(emu, self.kernel._k, self.grid, self.block, 0, self.args),
                  "emulator launch of " + self.kernel.name)
        finally:
            for a in regs:
                lib.rk_emu_release(emu, a)
