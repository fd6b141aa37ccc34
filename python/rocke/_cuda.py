"""A small CUDA driver shim (libcuda through ctypes) that loads rocke's
compiled kernels and launches them on a caller's stream — torch's current
stream — without a synchronisation. librocke's runtime has no way to adopt a
foreign stream, so the GPU path of rocke.ops launches here. Both use the
device's primary context, the one torch uses. Layer: python bindings."""
import ctypes
from ctypes import POINTER, byref, c_char_p, c_int, c_uint, c_void_p

from ._lib import RockeError

_FUNC_ATTR_MAX_DYN_SMEM = 8       # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
_cu = None


def _driver():
    global _cu
    if _cu is None:
        try:
            cu = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise RockeError("rocke: the CUDA driver (libcuda.so.1) cannot be loaded: %s" % e)
        for name, args in (("cuInit", [c_uint]), ("cuDeviceGet", [POINTER(c_int), c_int]),
                           ("cuDevicePrimaryCtxRetain", [POINTER(c_void_p), c_int]),
                           ("cuCtxGetCurrent", [POINTER(c_void_p)]), ("cuCtxSetCurrent", [c_void_p]),
                           ("cuModuleLoadData", [POINTER(c_void_p), c_void_p]),
                           ("cuModuleGetFunction", [POINTER(c_void_p), c_void_p, c_char_p]),
                           ("cuFuncSetAttribute", [c_void_p, c_int, c_int]),
                           ("cuLaunchKernel", [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                                               c_void_p, POINTER(c_void_p), POINTER(c_void_p)]),
                           ("cuGetErrorString", [c_int, POINTER(c_char_p)])):
            f = getattr(cu, name)
            f.restype, f.argtypes = c_int, args
        _cu = cu
        _call(cu.cuInit(0), "cuInit")
    return _cu


def _call(rc, what):
    if rc != 0:
        s = c_char_p()
        _cu.cuGetErrorString(rc, byref(s))
        raise RockeError("CUDA %s failed: %s (error %d)" % (what, (s.value or b"?").decode(), rc))


def use_primary_context(index):
    """Make device `index`'s primary context current on this thread."""
    cu = _driver()
    dev, ctx = c_int(), c_void_p()
    _call(cu.cuDeviceGet(byref(dev), index), "cuDeviceGet(%d)" % index)
    _call(cu.cuDevicePrimaryCtxRetain(byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    cur = c_void_p()
    cu.cuCtxGetCurrent(byref(cur))
    if cur.value != ctx.value:
        _call(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


class Function:
    """One kernel loaded from PTX or a cubin; launch(stream, params)."""

    def __init__(self, image, name, dyn_smem):
        cu = _driver()
        self._image = ctypes.create_string_buffer(image, len(image) + 1)   # PTX needs the NUL
        self.module, self.fn = c_void_p(), c_void_p()
        _call(cu.cuModuleLoadData(byref(self.module), self._image), "cuModuleLoadData(%s)" % name)
        _call(cu.cuModuleGetFunction(byref(self.fn), self.module, name.encode()), "cuModuleGetFunction")
        self.dyn_smem = dyn_smem
        if dyn_smem > 48 * 1024:
            _call(cu.cuFuncSetAttribute(self.fn, _FUNC_ATTR_MAX_DYN_SMEM, dyn_smem), "cuFuncSetAttribute")
        self._launch = cu.cuLaunchKernel

    def launch(self, grid, block, stream, params):
        rc = self._launch(self.fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], self.dyn_smem,
                          stream, params, None)
        if rc != 0:
            _call(rc, "cuLaunchKernel")


# CU_TENSOR_MAP_DATA_TYPE_* by rk_scalar: i16 u16, i32, i64, f16, f32, f64, bf16; bytes (i8, fp8) are UINT8
_TMAP_TYPE = {4: 1, 5: 3, 6: 5, 7: 6, 8: 9, 9: 7, 10: 8}
_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}          # CU_TENSOR_MAP_SWIZZLE_*


def tensormap_encode_2d(base, t, out):
    """A CUtensorMap (128 bytes) into out for a rocke rk_problem_tmap t over the
    device address base, as librocke's CUDA runtime encodes it (no
    interleave, no L2 promotion, zero fill)."""
    cu = _driver()
    f = cu.cuTensorMapEncodeTiled
    if f.argtypes is None:
        u64p, u32p = POINTER(ctypes.c_uint64), POINTER(ctypes.c_uint32)
        f.restype = c_int
        f.argtypes = [c_void_p, c_int, c_uint, c_void_p, u64p, u64p, u32p, u32p, c_int, c_int, c_int, c_int]
    scratch = ctypes.create_string_buffer(128 + 64)          # the driver wants a 64-byte aligned map
    aligned = (ctypes.addressof(scratch) + 63) // 64 * 64
    dims = (ctypes.c_uint64 * 2)(t.cols, t.rows)
    strides = (ctypes.c_uint64 * 1)(t.row_stride_bytes)
    box = (ctypes.c_uint32 * 2)(t.box_cols, t.box_rows)
    ones = (ctypes.c_uint32 * 2)(1, 1)
    _call(f(aligned, _TMAP_TYPE.get(t.elem, 0), 2, base, dims, strides, box, ones, 0, _SWIZZLE[t.swizzle_bytes], 0, 0),
          "cuTensorMapEncodeTiled")
    ctypes.memmove(out, aligned, 128)
