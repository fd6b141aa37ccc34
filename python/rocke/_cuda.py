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


_SIGNATURES = (("cuInit", [c_uint]), ("cuDeviceGet", [POINTER(c_int), c_int]),
               ("cuDevicePrimaryCtxRetain", [POINTER(c_void_p), c_int]),
               ("cuCtxGetCurrent", [POINTER(c_void_p)]), ("cuCtxSetCurrent", [c_void_p]),
               ("cuModuleLoadData", [POINTER(c_void_p), c_void_p]),
               ("cuModuleGetFunction", [POINTER(c_void_p), c_void_p, c_char_p]),
               ("cuFuncSetAttribute", [c_void_p, c_int, c_int]),
               ("cuLaunchKernel", [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                                   c_void_p, POINTER(c_void_p), POINTER(c_void_p)]),
               ("cuGetErrorString", [c_int, POINTER(c_char_p)]))


def _driver():
    if _cu is None:
        try:
            cu = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise RockeError("rocke: the CUDA driver (libcuda.so.1) cannot be loaded: %s" % e)
        bind(cu)
    return _cu


def bind(cu):
    """Use cu (a ctypes.CDLL of libcuda, or of a library with its entry
    points: the host-overhead bench's stub driver) for every driver call."""
    global _cu
    for name, args in _SIGNATURES:
        f = getattr(cu, name)
        f.restype, f.argtypes = c_int, args
    _cu = cu
    _call(cu.cuInit(0), "cuInit")
    return cu


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


_LAUNCH_ATTR_COOPERATIVE = 2     # CU_LAUNCH_ATTRIBUTE_COOPERATIVE


class LaunchAttribute(ctypes.Structure):
    """CUlaunchAttribute: an id, padding, and a 64-byte value union (cooperative: an int)."""
    _fields_ = [("id", c_int), ("pad", ctypes.c_ubyte * 4), ("value", ctypes.c_ubyte * 64)]


class LaunchConfig(ctypes.Structure):
    """CUlaunchConfig (cuda.h, CUDA 12)."""
    _fields_ = [("gridDimX", c_uint), ("gridDimY", c_uint), ("gridDimZ", c_uint), ("blockDimX", c_uint),
                ("blockDimY", c_uint), ("blockDimZ", c_uint), ("sharedMemBytes", c_uint), ("hStream", c_void_p),
                ("attrs", POINTER(LaunchAttribute)), ("numAttrs", c_uint)]


def cooperative_of(manifest):
    """A manifest's (dict) `cooperative` field: absent means false; anything
    but a JSON boolean is an error naming the field."""
    v = manifest.get("cooperative", False)
    if not isinstance(v, bool):
        raise RockeError("manifest %s: \"cooperative\" must be true or false, got %r"
                         % (manifest.get("kernel_name", "?"), v))
    return v


def cooperative_config(grid, block, smem, stream, attr):
    """The CUlaunchConfig of a cooperative launch (every block resident at
    once: CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 1) with its attribute in attr."""
    attr.id = _LAUNCH_ATTR_COOPERATIVE
    ctypes.memset(ctypes.addressof(attr) + LaunchAttribute.value.offset, 0, 64)
    c_int.from_address(ctypes.addressof(attr) + LaunchAttribute.value.offset).value = 1
    return LaunchConfig(grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream,
                        ctypes.pointer(attr), 1)


class Function:
    """One kernel loaded from PTX or a cubin; launch(grid, block, stream,
    params). cooperative (the manifest's field): launched through
    cuLaunchKernelEx with the cooperative attribute, so the driver refuses a
    grid whose blocks cannot all be resident instead of letting it hang."""

    def __init__(self, image, name, dyn_smem, cooperative=False):
        cu = _driver()
        self._image = ctypes.create_string_buffer(image, len(image) + 1)   # PTX needs the NUL
        self.module, self.fn = c_void_p(), c_void_p()
        _call(cu.cuModuleLoadData(byref(self.module), self._image), "cuModuleLoadData(%s)" % name)
        _call(cu.cuModuleGetFunction(byref(self.fn), self.module, name.encode()), "cuModuleGetFunction")
        self.dyn_smem = dyn_smem
        if dyn_smem > 48 * 1024:
            _call(cu.cuFuncSetAttribute(self.fn, _FUNC_ATTR_MAX_DYN_SMEM, dyn_smem), "cuFuncSetAttribute")
        self.cooperative = bool(cooperative)
        if self.cooperative:
            self._launch_ex = _launch_ex(cu)
            self._attr = LaunchAttribute()
        self._launch = cu.cuLaunchKernel

    def launch(self, grid, block, stream, params):
        if self.cooperative:
            cfg = cooperative_config(grid, block, self.dyn_smem, stream, self._attr)
            rc = self._launch_ex(byref(cfg), self.fn, params, None)
            if rc != 0:
                _call(rc, "cuLaunchKernelEx (cooperative, grid %s)" % (tuple(grid),))
            return
        rc = self._launch(self.fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], self.dyn_smem,
                          stream, params, None)
        if rc != 0:
            _call(rc, "cuLaunchKernel")

    def packed(self, grid, block, params):
        """A PackedLaunch of this kernel over the argument array params."""
        return PackedLaunch(self, grid, block, params)


def _raw(cu, name):
    """A second handle on a driver entry point, without argtypes: called with
    ctypes objects built once, it skips the per-argument conversion that a
    typed call pays (cuLaunchKernel on the 2-core CI box: 2.5 us typed with
    Python ints, 0.45 untyped with packed arguments). A Python stand-in
    driver (tests) is used as it is."""
    if isinstance(cu, ctypes.CDLL):
        f = cu[name]                   # indexing makes a new function object; cu.NAME stays typed
        f.restype = c_int
        return f
    return getattr(cu, name)


class PackedLaunch:
    """One kernel's launch packed once for a fixed grid, block, shared memory
    and argument array (rocke/_cuda.py Args' params) as ctypes objects; only
    the stream changes between calls. Through cuLaunchKernelEx where the
    driver has it (CUDA 12+): a CUlaunchConfig with no attribute (or the
    cooperative one) and 4 arguments to convert instead of cuLaunchKernel's 11
    (0.2 us against 0.45 of host time per call on the CI box), else
    cuLaunchKernel. A launch is `cfg.hStream = s` (or `stream.value = s` on
    the fallback), then `rc = call(*args)` and `failed(rc)` when rc is not 0
    — the cached path of rocke.ops does exactly that, inline."""
    __slots__ = ("call", "args", "stream", "cfg", "attr", "what")

    def __init__(self, fn, grid, block, params):
        cu = _driver()
        grid, block = tuple(grid), tuple(block)
        if fn.cooperative or getattr(cu, "cuLaunchKernelEx", None) is not None:
            if fn.cooperative:
                self.attr = LaunchAttribute()           # the config points at it: one per packed launch
                self.cfg = cooperative_config(grid, block, fn.dyn_smem, None, self.attr)
                self.what = "cuLaunchKernelEx (cooperative, grid %s)" % (grid,)
            else:
                self.attr = None
                self.cfg = LaunchConfig(*grid, *block, fn.dyn_smem, None, None, 0)
                self.what = "cuLaunchKernelEx (grid %s, block %s)" % (grid, block)
            self.stream = None
            self.call = _raw(cu, "cuLaunchKernelEx")
            self.args = (byref(self.cfg), fn.fn, params, None)
        else:
            self.attr = self.cfg = None
            self.stream = c_void_p(0)
            self.call = _raw(cu, "cuLaunchKernel")
            self.args = (fn.fn,) + tuple(c_uint(v) for v in grid + block + (fn.dyn_smem,)) + \
                (self.stream, params, None)
            self.what = "cuLaunchKernel"

    def launch(self, stream):
        if self.cfg is None:
            self.stream.value = stream
        else:
            self.cfg.hStream = stream
        rc = self.call(*self.args)
        if rc:
            self.failed(rc)

    def failed(self, rc):
        _call(rc, self.what)


class PackedMemset:
    """cuMemsetD32Async(address, 0, words, stream) packed once: the cached
    path's work buffers are re-zeroed through the driver (one ctypes call)
    rather than a torch fill (a dispatched kernel launch)."""
    __slots__ = ("call", "args")

    def __init__(self, address, words, stream):
        self.call = _raw(_driver(), "cuMemsetD32Async")
        self.args = (ctypes.c_uint64(address), c_uint(0), ctypes.c_size_t(words), c_void_p(stream))

    def __call__(self):
        rc = self.call(*self.args)
        if rc:
            _call(rc, "cuMemsetD32Async")


def load_manifest(path):
    """The Function of a `rocke build` output (DIR/manifest.json): its
    binary (PTX or cubin, the file the manifest names), kernel name, dynamic
    shared memory and `cooperative` flag; launch it on any stream (torch's
    current one) with the signature's parameters."""
    import json
    import os
    with open(path, encoding="utf-8") as f:
        m = json.load(f)
    for field in ("kernel_name", "binary"):
        if not isinstance(m.get(field), str):
            raise RockeError("manifest %s: \"%s\" is missing (a rocke build manifest names its kernel and binary)"
                             % (path, field))
    with open(os.path.join(os.path.dirname(path) or ".", m["binary"]), "rb") as f:
        image = f.read()
    return Function(image, m["kernel_name"], int(m.get("dyn_smem_min", 0)), cooperative_of(m))


def _launch_ex(cu):
    f = getattr(cu, "cuLaunchKernelEx", None)
    if f is None:
        raise RockeError("rocke: this CUDA driver has no cuLaunchKernelEx (CUDA 12 or later), which a cooperative "
                         "kernel needs")
    if getattr(f, "argtypes", ()) is None:          # a ctypes function not yet typed
        f.restype, f.argtypes = c_int, [POINTER(LaunchConfig), c_void_p, POINTER(c_void_p), POINTER(c_void_p)]
    return f


# CU_TENSOR_MAP_DATA_TYPE_* by rk_scalar: i16 u16, i32, i64, f16, f32, f64, bf16; bytes (i8, fp8) are UINT8
_TMAP_TYPE = {4: 1, 5: 3, 6: 5, 7: 6, 8: 9, 9: 7, 10: 8}
_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}          # CU_TENSOR_MAP_SWIZZLE_*
_U64P, _U32P = POINTER(ctypes.c_uint64), POINTER(ctypes.c_uint32)


def _encoder():
    f = _driver().cuTensorMapEncodeTiled
    if f.argtypes is None:
        f.restype = c_int
        f.argtypes = [c_void_p, c_int, c_uint, c_void_p, _U64P, _U64P, _U32P, _U32P, c_int, c_int, c_int, c_int]
    return f


class TensorMap:
    """A CUtensorMap slot (128 bytes, 64-byte aligned) for a rocke
    rk_problem_tmap_nd t (any rank), encoded as librocke's CUDA runtime
    encodes it (no interleave, no L2 promotion, zero fill); encode(base)
    re-encodes only when the buffer's address changed."""

    def __init__(self, t, address):
        self.address, self.base, self.buf, self.rank = address, None, t.buf, t.rank
        self.dtype, self.swizzle = _TMAP_TYPE.get(t.elem, 0), _SWIZZLE[t.swizzle_bytes]
        n = t.rank
        self.dims = (ctypes.c_uint64 * n)(*t.dims[:n])
        self.strides = (ctypes.c_uint64 * max(n - 1, 1))(*t.strides_bytes[:max(n - 1, 1)])
        self.box = (ctypes.c_uint32 * n)(*t.box[:n])
        self.elem_strides = (ctypes.c_uint32 * n)(*t.elem_strides[:n])

    def encode(self, base):
        if base != self.base:
            _call(_encoder()(self.address, self.dtype, self.rank, base, self.dims, self.strides, self.box,
                             self.elem_strides, 0, self.swizzle, 0, 0), "cuTensorMapEncodeTiled")
            self.base = base


class Args:
    """The packed parameters of one kernel signature, kept between launches
    (cuLaunchKernel copies them at the call): one slot per parameter (ctypes
    types in order; tensor maps 64-byte aligned so they are encoded in place)
    and the void* array the launch takes."""

    def __init__(self, ctypes_list):
        offs, off = [], 0
        for ct in ctypes_list:
            align = 64 if ctypes.sizeof(ct) == 128 else ctypes.alignment(ct)
            off = (off + align - 1) // align * align
            offs.append(off)
            off += ctypes.sizeof(ct)
        self._buf = ctypes.create_string_buffer(off + 64)
        base = (ctypes.addressof(self._buf) + 63) // 64 * 64
        self.slots = [ct.from_address(base + o) for ct, o in zip(ctypes_list, offs)]
        self.addresses = [base + o for o in offs]
        self.params = (c_void_p * max(len(offs), 1))(*self.addresses)
