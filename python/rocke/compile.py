"""Targets and compiling a kernel to an artifact (rk_compile): LLVM IR, the
code object (HSACO / PTX / cubin), per-stage times, the cache key.
Layer: python bindings."""
import ctypes
import os

from ._lib import RkArtifact, RockeError, b, check, error_text, lib


def targets():
    """Target names, the default first marked: ['gfx90a', ..., 'sm_90a']."""
    return [t.strip().replace(" (default)", "") for t in lib.rk_target_names().decode().split(",")]


def default_target():
    return ctypes.cast(lib.rk_target_default(), ctypes.POINTER(ctypes.c_char_p))[0].decode()


def find_target(name):
    """The rk_target pointer for a name; raises naming the legal targets."""
    t = lib.rk_target_find(b(name))
    if not t:
        raise RockeError(error_text())
    return t


class Artifact:
    """A compiled kernel (rk_artifact): read-only fields plus write(dir)."""

    def __init__(self, ptr):
        self._a = ptr

    def __del__(self):
        if getattr(self, "_a", None):
            lib.rk_artifact_free(self._a)
            self._a = None

    @property
    def _s(self):
        return self._a.contents

    kernel_name = property(lambda self: self._s.kernel_name.decode())
    target = property(lambda self: self._s.target.decode())
    ir_text = property(lambda self: (self._s.ir_text or b"").decode())
    llvm_ir = property(lambda self: (self._s.llvm_ir or b"").decode())
    toolchain = property(lambda self: self._s.toolchain.decode())
    cache_hit = property(lambda self: bool(self._s.cache_hit))
    cache_key = property(lambda self: self._s.cache_key.decode())
    dyn_smem_min = property(lambda self: self._s.dyn_smem_min)

    @property
    def kind(self):
        return ("hsaco", "ptx")[self._s.kind]

    @property
    def binary(self):
        return ctypes.string_at(self._s.binary, self._s.binary_size) if self._s.binary else b""

    @property
    def cubin(self):
        return ctypes.string_at(self._s.cubin, self._s.cubin_size) if self._s.cubin else None

    @property
    def times_ms(self):
        ms = self._s.ms
        return {f: getattr(ms, f) for f, _ in ms._fields_}

    def write(self, directory):
        """DIR/NAME.ll and the binary (rk_artifact_write), atomically."""
        os.makedirs(directory, exist_ok=True)
        check(lib.rk_artifact_write(self._a, b(directory)), "write artifact")

    def __repr__(self):
        return "rocke.Artifact(%s for %s, %s, %d bytes)" % (self.kernel_name, self.target, self.kind,
                                                           self._s.binary_size)


def compile(kernel, target=None):
    """rocke.compile(k, "gfx950") -> Artifact (verified, lowered, compiled; cached on disk)."""
    t = find_target(target) if target else lib.rk_target_default()
    kernel.finish()
    out = ctypes.POINTER(RkArtifact)()
    check(lib.rk_compile(kernel._k, t, None, ctypes.byref(out)), "compile %s" % kernel.name)
    return Artifact(out)
