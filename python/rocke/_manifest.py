"""rk_manifest (manifest.h) as a ctypes structure, read with
rk_manifest_read. Layer: python bindings."""
import ctypes
import json
from ctypes import c_bool, c_char, c_double, c_int, c_uint32, c_uint64

from ._lib import RockeError, b, check, check_layout, lib


class _Arg(ctypes.Structure):
    _fields_ = [("name", c_char * 64), ("type", c_char * 48), ("size_bytes", c_uint32)]


class _Timing(ctypes.Structure):
    _fields_ = [(n, c_double) for n in ("build", "passes", "lower", "compile", "link", "total")]


class _Spec(ctypes.Structure):
    _fields_ = [("key", c_char * 32), ("value", c_char * 128)]


MAX_DIMS = 12          # RK_MANIFEST_MAX_DIMS
VARIANT_DIMS = 4       # RK_MANIFEST_VARIANT_DIMS


class _Variant(ctypes.Structure):
    _fields_ = [("manifest", c_char * 64), ("ndims", c_uint32), ("dim", (c_char * 24) * VARIANT_DIMS),
                ("lo", c_uint64 * VARIANT_DIMS), ("hi", c_uint64 * VARIANT_DIMS)]


class RkManifest(ctypes.Structure):
    _fields_ = [("kind", c_char * 64), ("kernel_name", c_char * 256), ("binary", c_char * 300),
                ("binary_kind", c_char * 16), ("binary_bytes", c_uint64), ("binary_hash", c_char * 40),
                ("target", c_char * 32), ("ir", c_char * 300), ("llvm", c_char * 300),
                ("threads_per_block", c_uint32), ("dyn_smem_min", c_uint32), ("cluster_dims", c_uint32 * 3),
                ("args", _Arg * 32),
                ("nargs", c_uint32), ("sig_has_bytes", c_bool), ("warmup_iters", c_uint32),
                ("timed_iters", c_uint32), ("timing_ms", _Timing), ("notes", c_char * 256),
                ("engine_version", c_char * 32), ("engine_build_id", c_char * 64),
                ("codegen_policy_key", c_char * 64), ("op", c_char * 32), ("dtype", c_char * 16),
                ("default_shape", c_uint64 * MAX_DIMS), ("ndefault_shape", c_uint32),
                ("default_shape_dims", (c_char * 24) * MAX_DIMS), ("elems_per_block", c_uint64),
                ("is_binary", c_int), ("block_m", c_uint32), ("block_n", c_uint32),
                ("grid_explicit", c_uint32 * 3), ("eps", c_double), ("has_eps", c_bool),
                ("family", c_char * 32), ("spec", _Spec * 32), ("nspec", c_uint32),
                ("variants", _Variant * 64), ("nvariants", c_uint32)]


check_layout(RkManifest, "rk_manifest", lib.rk_manifest_struct_size())


def read(path):
    m = RkManifest()
    check(lib.rk_manifest_read(b(path), ctypes.byref(m)))
    with open(path, encoding="utf-8") as f:     # the library has read it strictly already
        j = json.load(f)
    if j.get("kernel_name") != m.kernel_name.decode() or len(j.get("spec", {})) != m.nspec:
        raise RockeError("rocke: rk_manifest layout differs from this package's (rebuild the package "
                         "against this librocke)")
    return m


def pick_variant(m, names, shape):
    """The variant manifest file serving shape (names[i] has extent shape[i]),
    the first whose every range holds (rk_manifest_pick), or None."""
    ext = dict(zip(names, shape))
    for v in m.variants[:m.nvariants]:
        ok = True
        for d in range(v.ndims):
            # "N" (the extent) or "N%8" (the extent mod 8), as rk_manifest_dim_parse
            base, _, mod = v.dim[d].value.decode().partition("%")
            x = ext.get(base)
            if x is not None and mod:
                x %= int(mod)
            ok = ok and x is not None and v.lo[d] <= x <= v.hi[d]
        if ok:
            return v.manifest.decode()
    return None
