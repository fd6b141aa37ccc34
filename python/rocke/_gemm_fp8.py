"""rocke.ops.gemm: C = a @ b through the gemm family, 16-bit inputs (as
matmul) or fp8 (e4m3 / e5m2 bytes, tensor or per-128-block scales; sm_90a's
wgmma kernel, which reads both operands through TMA maps). numpy arrays run
on the emulator, CUDA torch tensors on the GPU. Layer: python bindings."""
from . import ops
from ._attention import kit_for
from ._lib import RockeError

_FP8 = ("e4m3", "e5m2")
_SCALES = ("none", "tensor", "block")


def _scale_array(kit, s, name, shape, like):
    if s is None:
        raise RockeError("rocke.ops.gemm: scale needs %s (float32 %s)" % (name, list(shape)))
    if isinstance(s, (int, float)) and shape == (1,):
        s = kit.full((1,), float(s), like)
    if tuple(s.shape) != shape or kit.dtype(s) != "f32":
        raise RockeError("rocke.ops.gemm: %s must be float32 %s, got %s %s"
                         % (name, list(shape), kit.dtype(s), tuple(s.shape)))
    return kit.contiguous(s)


def gemm(a, b, *, a_dtype=None, b_dtype=None, scale="none", a_scale=None, b_scale=None, out_dtype=None,
         device=None, **knobs):
    """C = a @ b, a [M, K], b [K, N]. 16-bit inputs go to matmul. fp8: a and b
    hold e4m3 or e5m2 bytes (numpy uint8 arrays tagged by a_dtype / b_dtype;
    torch float8 tensors), both the same format, K a multiple of 16; b is read
    as [N, K] rows (b = w.T of a row-major w [N, K] runs in place, as
    torch._scaled_mm takes it). scale='tensor': a_scale, b_scale one float32
    each; 'block': a_scale [M, ceil(K/128)], b_scale [ceil(N/128),
    ceil(K/128)]. Accumulates in f32; C is out_dtype (numpy: float32 by
    default, 'f16' or 'bf16' with ml_dtypes; torch: bf16). Runs on sm_90a
    (device 'emu' means 'emu:sm_90a' here)."""
    if a_dtype is None and b_dtype is None and ops._is_numpy(a):
        if scale != "none":
            raise RockeError("rocke.ops.gemm: scale=%r is for fp8 inputs (a_dtype='e4m3' or 'e5m2')" % scale)
        return ops.matmul(a, b, device=device, out_dtype=out_dtype, **knobs)
    if device in (None, "emu") and ops._is_numpy(a):
        device = "emu:sm_90a"
    kit = kit_for("gemm", [a, b, a_scale, b_scale], device)
    if not kit.emu:
        if kit.dtype(a) in ("f16", "bf16") and a_dtype is None and b_dtype is None:
            if scale != "none":
                raise RockeError("rocke.ops.gemm: scale=%r is for fp8 inputs" % scale)
            return ops.matmul(a, b, device=device, out_dtype=out_dtype, **knobs)
        if kit.cc != 90:
            raise RockeError("rocke.ops.gemm: fp8 runs sm_90a's wgmma kernel: this device has compute capability "
                             "%d.%d" % divmod(kit.cc, 10))
        kit.target = "sm_90a"                # the arch-specific target of a 9.0 device
    fmt = []
    for x, name, tag in ((a, "a", a_dtype), (b, "b", b_dtype)):
        dt = kit.dtype(x)
        if dt == "u8" and tag in _FP8:
            fmt.append(tag)
        elif dt in _FP8 and tag in (None, dt):
            fmt.append(dt)
        else:
            raise RockeError("rocke.ops.gemm: %s is %s with %s_dtype=%r: fp8 operands are uint8 arrays tagged "
                             "%s_dtype='e4m3' or 'e5m2' (or torch float8 tensors)" % (name, dt, name, tag, name))
        if len(x.shape) != 2:
            raise RockeError("rocke.ops.gemm: %s must be 2-D, got shape %s" % (name, tuple(x.shape)))
    if fmt[0] != fmt[1]:
        raise RockeError("rocke.ops.gemm: a is %s and b is %s: mixed fp8 formats are not served" % tuple(fmt))
    if a.shape[1] != b.shape[0]:
        raise RockeError("rocke.ops.gemm: needs [M, K] @ [K, N], got %s @ %s" % (tuple(a.shape), tuple(b.shape)))
    if scale not in _SCALES:
        raise RockeError("rocke.ops.gemm: scale = %r (legal: %s)" % (scale, ", ".join(_SCALES)))
    M, K = a.shape
    N = b.shape[1]
    a_rows, b_rows = kit.contiguous(a), kit.contiguous(kit.transpose(b))       # A [M, K], B [N, K], packed
    out = out_dtype or ("f32" if kit.emu else "bf16")
    knobs = dict(knobs, dtype=fmt[0], out_dtype=out, layout="rc", path="wgmma", scale=scale)
    p = ops._prepare("gemm", knobs, (M, N, K), kit.target)
    c = kit.empty((M, N), out, a)
    arrays = {"A": a_rows, "B": b_rows, "C": c}
    if scale == "tensor":
        arrays["Sa"] = _scale_array(kit, a_scale, "a_scale", (1,), a)
        arrays["Sb"] = _scale_array(kit, b_scale, "b_scale", (1,), a)
    elif scale == "block":
        kb = (K + 127) // 128
        arrays["Sa"] = _scale_array(kit, a_scale, "a_scale", (M, kb), a)
        arrays["Sb"] = _scale_array(kit, b_scale, "b_scale", ((N + 127) // 128, kb), a)
    elif a_scale is not None or b_scale is not None:
        raise RockeError("rocke.ops.gemm: a_scale / b_scale need scale='tensor' or 'block'")
    values = {"M": M, "N": N, "K": K, "lda": K, "ldb": K, "ldc": N}
    kit.launch("gemm", p, ops._kernel_for, arrays, values, {"M": M, "N": N, "K": K})
    return c
