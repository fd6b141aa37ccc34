"""Loads librocke and declares the C functions the package calls (ctypes).

The library is looked for next to this file, then in $ROCKE_LIB_DIR, then on
the system's library path. Layer: python bindings (over the public C API).
"""
import ctypes
import ctypes.util
import os
import sys
from ctypes import (POINTER, c_bool, c_char_p, c_double, c_int, c_int64, c_size_t,
                    c_uint32, c_uint64, c_void_p)

_NAMES = ("librocke.so", "librocke.so.0")


class RockeError(Exception):
    """A failure reported by librocke; the text is the library's diagnostic."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class RkType(ctypes.Structure):
    _fields_ = [("id", c_uint32)]


class RkValue(ctypes.Structure):
    _fields_ = [("id", c_uint32)]


class RkParamAbi(ctypes.Structure):
    """rk_param_abi (ir.h)."""
    _fields_ = [("noalias", c_bool), ("readonly", c_bool), ("writeonly", c_bool),
                ("no_nocapture", c_bool), ("nonnull", c_bool), ("align", c_uint32),
                ("dereferenceable", c_uint64), ("tensormap", c_bool)]


class RkStageTimes(ctypes.Structure):
    _fields_ = [(n, c_double) for n in
                ("build", "passes", "lower", "compile", "link", "total", "fork")]


class RkStageEntry(ctypes.Structure):
    """rk_stage_entry (compile.h)."""
    _fields_ = [("name", ctypes.c_char * 24), ("ms", c_double)]


class RkArtifact(ctypes.Structure):
    """rk_artifact (compile.h)."""
    _fields_ = [("kernel_name", c_char_p), ("ir_text", c_char_p), ("llvm_ir", c_char_p),
                ("kind", c_int), ("binary", c_void_p), ("binary_size", c_size_t),
                ("cubin", c_void_p), ("cubin_size", c_size_t), ("isa", c_char_p),
                ("target", c_char_p), ("toolchain", ctypes.c_char * 160), ("flavor", c_int),
                ("ms", RkStageTimes), ("cache_hit", c_bool), ("cache_key", ctypes.c_char * 33),
                ("dyn_smem_min", c_uint32), ("nstages", c_uint32), ("stages", RkStageEntry * 40),
                ("recompile_note", ctypes.c_char * 128)]


class RkKnob(ctypes.Structure):
    """rk_knob (kernels.h)."""
    _fields_ = [("name", c_char_p), ("tag", c_char_p), ("kind", c_int), ("offset", c_size_t),
                ("names", POINTER(c_char_p)), ("legal", POINTER(c_uint32)), ("perf", c_bool),
                ("help", c_char_p), ("count", c_uint32)]


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    for n in _NAMES:
        yield os.path.join(here, n)
    env = os.environ.get("ROCKE_LIB_DIR")
    if env:
        for n in _NAMES:
            yield os.path.join(env, n)
    found = ctypes.util.find_library("rocke")
    if found:
        yield found
    yield "librocke.so"   # the dynamic loader's own search (LD_LIBRARY_PATH, ldconfig)


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path + " (absent)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("rocke: cannot load librocke.so; tried: " + "; ".join(tried) +
                      ". Build it (make build gives build/librocke.so) and set ROCKE_LIB_DIR "
                      "to its folder, or install it on the library path.")


lib, lib_path = _load()

# name: (restype, argtypes)
_P = c_void_p
_SIGS = {
    "rk_error_message": (c_char_p, []),
    "rk_status_name": (c_char_p, [c_int]),
    "rk_clear_error": (None, []),
    "rk_string_free": (None, [_P]),
    # op table
    "rk_op_table_size": (c_uint32, []),
    "rk_op_query_str": (c_char_p, [c_uint32, c_char_p]),
    "rk_op_query_int": (c_bool, [c_uint32, c_char_p, POINTER(c_int64)]),
    # kernels and types
    "rk_kernel_new": (_P, [c_char_p]),
    "rk_kernel_free": (None, [_P]),
    "rk_kernel_name": (c_char_p, [_P]),
    "rk_kernel_finish": (c_int, [_P]),
    "rk_kernel_nparams": (c_uint32, [_P]),
    "rk_kernel_cooperative": (c_bool, [_P]),
    "rk_scalar_bits": (c_uint32, [c_int]),
    "rk_kernel_param": (_P, [_P, c_uint32]),
    "rk_builder_status": (c_int, [_P]),
    "rk_builder_error": (c_char_p, [_P]),
    "rk_kernel_set_attr_int": (None, [_P, c_char_p, c_int64]),
    "rk_kernel_set_attr_str": (None, [_P, c_char_p, c_char_p]),
    "rk_kernel_set_attr_pair": (None, [_P, c_char_p, c_int64, c_int64]),
    "rk_set_loc": (None, [_P, c_char_p]),
    "rk_type_parse": (RkType, [_P, c_char_p]),
    "rk_type_name": (c_char_p, [_P, RkType]),
    "rk_type_kind_of": (c_int, [_P, RkType]),
    "rk_type_elem": (RkType, [_P, RkType]),
    "rk_type_count": (c_uint32, [_P, RkType]),
    "rk_type_vec": (RkType, [_P, RkType, c_uint32]),
    "rk_value_type": (RkType, [_P, RkValue]),
    "rk_value_set_hint": (None, [_P, RkValue, c_char_p]),
    "rk_add_param": (RkValue, [_P, c_char_p, RkType, POINTER(RkParamAbi)]),
    "rk_emit": (_P, [_P, c_int, POINTER(RkValue), c_uint32, POINTER(RkType), c_uint32]),
    "rk_op_set_int": (None, [_P, _P, c_char_p, c_int64]),
    "rk_op_set_float": (None, [_P, _P, c_char_p, c_double]),
    "rk_op_set_str": (None, [_P, _P, c_char_p, c_char_p]),
    "rk_op_set_bool": (None, [_P, _P, c_char_p, c_bool]),
    "rk_op_set_type": (None, [_P, _P, c_char_p, RkType]),
    "rk_op_set_int_list": (None, [_P, _P, c_char_p, POINTER(c_int64), c_uint32]),
    "rk_op_check": (c_bool, [_P, _P]),
    "rk_op_result": (RkValue, [_P]),
    "rk_for_begin": (RkValue, [_P, RkValue, RkValue, RkValue, c_char_p, c_uint32,
                               POINTER(RkValue), POINTER(c_char_p), POINTER(RkValue)]),
    "rk_for_end": (None, [_P, POINTER(RkValue), c_uint32, POINTER(RkValue)]),
    "rk_for_set_unroll": (None, [_P, c_bool]),
    "rk_if_begin": (None, [_P, RkValue]),
    "rk_if_else_begin": (None, [_P, RkValue, c_uint32, POINTER(RkType), POINTER(RkValue)]),
    "rk_else": (None, [_P, POINTER(RkValue), c_uint32]),
    "rk_if_end": (None, [_P, POINTER(RkValue), c_uint32]),
    "rk_build_return": (None, [_P]),
    "rk_serialize": (_P, [_P]),
    "rk_print": (_P, [_P]),
    "rk_parse": (c_int, [c_char_p, c_size_t, POINTER(_P)]),
    "rk_optimize": (c_int, [_P, c_uint32, _P]),
    # targets, compile
    "rk_target_find": (_P, [c_char_p]),
    "rk_target_default": (_P, []),
    "rk_target_names": (c_char_p, []),
    "rk_target_verify": (c_int, [_P, _P, _P]),
    "rk_compile": (c_int, [_P, _P, _P, POINTER(POINTER(RkArtifact))]),
    "rk_artifact_free": (None, [POINTER(RkArtifact)]),
    "rk_artifact_write": (c_int, [POINTER(RkArtifact), c_char_p]),
    # families
    "rk_family_name": (c_char_p, [c_int]),
    "rk_family_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "rk_family_knobs": (POINTER(RkKnob), [c_int, POINTER(c_uint32)]),
    "rk_knob_legal_text": (None, [POINTER(RkKnob), c_char_p, c_size_t]),
    "rk_instance_default": (c_int, [c_int, _P]),
    "rk_instance_set": (c_int, [_P, c_char_p, c_char_p, POINTER(c_uint32)]),
    "rk_instance_get": (c_int, [_P, c_char_p, c_char_p, c_size_t]),
    "rk_instance_validate": (c_int, [_P, _P]),
    "rk_instance_name": (c_int, [_P, c_char_p, c_size_t]),
    "rk_instance_build": (c_int, [_P, _P, POINTER(_P)]),
    # emulator
    "rk_emu_new": (_P, [_P, _P]),
    "rk_emu_free": (None, [_P]),
    "rk_emu_register": (c_int, [_P, _P, c_size_t, c_char_p, POINTER(c_uint64)]),
    "rk_emu_release": (c_int, [_P, c_uint64]),
    "rk_emu_launch": (c_int, [_P, _P, POINTER(c_uint32), POINTER(c_uint32), c_uint32, POINTER(_P)]),
    # manifests and the device runtime (python -m rocke run)
    "rk_device_open_opts": (c_int, [_P, POINTER(_P)]),
    "rk_device_close": (None, [_P]),
    "rk_device_kind_of": (c_int, [_P]),
    "rk_device_kind_name": (c_char_p, [c_int]),
    "rk_device_name": (c_char_p, [_P]),
    "rk_device_target": (c_char_p, [_P]),
    "rk_device_synchronize": (c_int, [_P]),
    "rk_mem_alloc": (c_int, [_P, c_size_t, POINTER(c_uint64)]),
    "rk_mem_free": (c_int, [_P, c_uint64]),
    "rk_mem_copy_htod": (c_int, [_P, c_uint64, _P, c_size_t]),
    "rk_mem_copy_dtoh": (c_int, [_P, _P, c_uint64, c_size_t]),
    "rk_module_load_image": (c_int, [_P, _P, POINTER(_P)]),
    "rk_module_unload": (None, [_P]),
    "rk_module_function": (c_int, [_P, c_char_p, POINTER(_P)]),
    "rk_launch": (c_int, [_P, POINTER(c_uint32), POINTER(c_uint32), c_uint32, _P, POINTER(_P)]),
    "rk_time_launches": (c_int, [_P, _P, _P, _P, _P]),
    "rk_manifest_read": (c_int, [c_char_p, _P]),
    "rk_manifest_check_binary": (c_int, [_P, c_char_p]),
    "rk_manifest_check": (c_int, [_P, c_char_p, _P, _P]),
    # struct sizes, to check the ctypes mirrors below and in the other modules
    "rk_kernels_struct_size": (c_size_t, [c_char_p]),
    "rk_compile_struct_size": (c_size_t, [c_char_p]),
    "rk_manifest_struct_size": (c_size_t, []),
}

for _name, (_res, _args) in _SIGS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args


# The library prints nothing itself: its warnings, notes and dumps come here
# (rk_set_log_callback) and go to stderr as the rocke CLI prints them.
_LOG_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)
_LOG_NOTE, _LOG_DUMP = 1, 3


def _log_to_stderr(ud, level, msg):
    text = msg.decode(errors="replace")
    if level == _LOG_DUMP:
        sys.stderr.write(text)
    elif level == _LOG_NOTE:
        sys.stderr.write("rocke: %s\n" % text)
    else:
        sys.stderr.write("rocke: %s: %s\n" % (lib.rk_log_level_name(level).decode(), text))


_log_callback = _LOG_FN(_log_to_stderr)   # kept alive for the life of the library
lib.rk_log_level_name.restype = c_char_p
lib.rk_log_level_name.argtypes = [c_int]
lib.rk_set_log_callback.restype = None
lib.rk_set_log_callback.argtypes = [_LOG_FN, c_void_p]
lib.rk_set_log_callback(_log_callback, None)


def check_layout(cls, c_name, size):
    """Refuse to run with a ctypes mirror whose size differs from the C struct's:
    passing it to the library would write past it."""
    if ctypes.sizeof(cls) != size:
        raise RockeError("rocke: the package's %s is %d bytes but librocke's is %d (%s): rebuild the "
                         "package against this librocke" % (c_name, ctypes.sizeof(cls), size, lib_path))


check_layout(RkArtifact, "rk_artifact", lib.rk_compile_struct_size(b"rk_artifact"))
check_layout(RkKnob, "rk_knob", lib.rk_kernels_struct_size(b"rk_knob"))


def error_text():
    msg = lib.rk_error_message()
    return msg.decode() if msg else ""


def check(status, what=None):
    """Raise RockeError with the library's message unless status is RK_OK."""
    if status != 0:
        name = lib.rk_status_name(status).decode()
        msg = error_text() or name
        raise RockeError("%s%s" % (what + ": " if what else "", msg), name)


def take_string(ptr):
    """Copy a library-allocated string and free it (rk_string_free)."""
    if not ptr:
        raise RockeError(error_text() or "out of memory")
    try:
        return ctypes.string_at(ptr).decode()
    finally:
        lib.rk_string_free(ptr)


def b(s):
    return s.encode() if isinstance(s, str) else s
