"""rocke.ops: the shipped families as functions on arrays.

numpy arrays run on the CPU emulator (device="emu" or "emu:<target>") and
return numpy arrays; CUDA torch tensors (and CuPy / JAX arrays through
__cuda_array_interface__ / DLPack) run on the GPU on torch's current stream
(rocke/_torch.py). Kernels are tuned and built once per (family, knobs,
dtype, shape, device); the built kernel is shared by every shape that tunes to
the same instance (its shape class). Layer: python bindings."""
from ctypes import c_float, c_int32, c_uint64

from . import _shape_api
from ._lib import RockeError
from ._sig_launch import param_ctype, work_f32s
from .families import Instance

_NP_DTYPES = {"float16": "f16", "float32": "f32", "bfloat16": "bf16"}
_EW_UNARY = ("copy", "neg", "abs", "relu", "silu", "gelu_tanh", "exp2")
_EW_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "maximum": "max", "minimum": "min"}

_prepared = {}      # (family, knobs, dtype, dims, device) -> _Prepared
_used = {}          # op name -> (kernel name, target) of its last launch (kernel_used)
_built = {}         # (kernel name, target) -> rocke.Kernel: one per shape class
_RECORDER = None    # rocke._warm.Recorder while warming: calls compile for a GPU instead of running
_TORCH = None       # rocke._torch once it ran a call: its per-call fast path (a dict lookup per repeat)


class _Prepared:
    """What a call needs once shape and device are known."""

    def __init__(self, inst, target, dims, knobs=None):
        self.inst, self.target, self.dims = inst, target, dims
        self.knobs = dict(knobs or {})      # as the op asked (python -m rocke warm's "kernel" lines)
        self.sig = inst.signature()
        self.grid, self.block = inst.grid(dims)
        fam = inst.family
        try:
            self.counts = [_shape_api.param_count(size, fam, dims) for _, ptr, _, _, size in self.sig if ptr]
        except KeyError:   # a layout naming a derived extent (conv's P, Q, Cg): the family's own op sizes it
            self.counts = None
        self.scalar_values = {}
        self.eps_index = None
        self.missing = []       # scalars the shape does not give (a GEMM's leading dimensions): the caller's
        for i, (name, ptr, _, _, _) in enumerate(self.sig):
            if not ptr:
                if name == "eps":
                    self.eps_index = i
                else:
                    try:
                        self.scalar_values[i] = _shape_api.scalar_value(name, fam, dims, 0.0)
                    except RockeError:
                        self.missing.append(name)
        self.launcher = None
        self.used = (inst.name, target)


def _is_numpy(x):
    return type(x).__module__ == "numpy" and type(x).__name__ == "ndarray"


def _np_dtype(x, op):
    name = x.dtype.name
    if name not in _NP_DTYPES:
        raise RockeError("rocke.ops.%s: dtype %s is not served (legal: float16, float32, bfloat16 "
                         "(ml_dtypes))" % (op, name))
    return _NP_DTYPES[name]


def _knob_key(knobs):
    return tuple(sorted((k, str(v)) for k, v in knobs.items()))


def _prepare(family, knobs, dims, target):
    key = (family, _knob_key(knobs), dims, target)
    p = _prepared.get(key)
    if p is None:
        inst = Instance(family, **knobs)
        inst.tune(target, dims)
        inst.check_shape(dims)
        p = _Prepared(inst, target, dims, knobs)
        _prepared[key] = p
    return p


def _kernel_for(p):
    k = _built.get((p.inst.name, p.target))
    if k is None:
        k = p.inst.build(p.target)
        _built[(p.inst.name, p.target)] = k
    return k


# ---- the emulator path -----------------------------------------------------------------
def _run_emu(opname, family, knobs, inputs, out_shapes, device, eps=None):
    import numpy as np
    from . import _emu
    target = _emu.parse_device(device)
    arrs = [np.ascontiguousarray(a) for a in inputs]
    dims = arrs[0].shape
    p = _prepare(family, knobs, dims, target)
    if p.missing:
        raise RockeError("rocke.ops.%s: no value for scalar parameter(s) %s" % (opname, ", ".join(p.missing)))
    if p.launcher is None:
        params = [(c_uint64 if ptr else (c_int32 if t == "i32" else c_float), n) for n, ptr, t, _, _ in p.sig]
        p.launcher = _emu.EmuLauncher(target, _kernel_for(p), params, p.grid, p.block)
    outs = []
    bufs = []
    it_in, it_out = iter(arrs), iter(out_shapes)
    for (name, ptr, t, role, _), count in zip([s for s in p.sig if s[1]], p.counts):
        if role == "in":
            a = next(it_in)
        elif role == "work":   # a split row's partials: zeroed before the first launch (docs/kernels.md)
            a = np.zeros(count, dtype=np.float32)
        else:
            shape, dt = next(it_out)
            a = np.empty(shape, dtype=dt)
            outs.append(a)
        if a.size != count:
            raise RockeError("rocke.ops.%s: %s has %d elements, the kernel needs %d for shape %s"
                             % (opname, name, a.size, count, dims))
        bufs.append((a.ctypes.data, a.nbytes))
    scalars = dict(p.scalar_values)
    if p.eps_index is not None:
        scalars[p.eps_index] = float(eps)
    p.launcher.launch(bufs, scalars)
    _used[opname] = p.used
    return outs[0] if len(outs) == 1 else tuple(outs)


# ---- dispatch ---------------------------------------------------------------------------
def _check_same(opname, arrays):
    if _RECORDER is not None and all(_RECORDER.takes(a) for a in arrays):
        return                      # record mode: numpy arrays (values) and Specs (shapes) mix
    kinds = {_is_numpy(a) for a in arrays}
    if len(kinds) > 1:
        raise RockeError("rocke.ops.%s: mixes numpy arrays and device tensors" % opname)


def _run(opname, family, knobs, inputs, out_spec, device=None, eps=None):
    """out_spec(dims, dtype_name) -> [(shape, dtype)] for the outputs in signature order."""
    if _TORCH is not None and _RECORDER is None:
        r = _TORCH.fast(opname, knobs, inputs, device, eps)      # a repeated call on torch tensors
        if r is not None:
            return r
    _check_same(opname, inputs)
    x = inputs[0]
    if _RECORDER is not None and _RECORDER.takes(x):
        return _RECORDER.run_simple(opname, family, knobs, inputs, out_spec)
    if _is_numpy(x):
        import numpy as np
        dt = _np_dtype(x, opname)
        for a in inputs[1:]:
            if a.dtype != x.dtype:
                raise RockeError("rocke.ops.%s: inputs have dtypes %s and %s; they must match"
                                 % (opname, x.dtype.name, a.dtype.name))
        knobs = dict(knobs, dtype=dt)
        np_out = {"f16": np.float16, "f32": np.float32}.get(knobs.get("out_dtype", dt), x.dtype)
        return _run_emu(opname, family, knobs, inputs, out_spec(x.shape, np_out), device, eps)
    if not (type(x).__module__.startswith("torch") or hasattr(x, "__cuda_array_interface__")
            or hasattr(x, "__dlpack__")):
        raise RockeError("rocke.ops.%s: expected a numpy array (emulator) or a CUDA tensor (torch, CuPy, "
                         "JAX), got %s" % (opname, type(x).__name__))
    from . import _torch
    return _torch.run(opname, family, knobs, inputs, out_spec, device, eps)


def _same_shape(dims, dt):
    return [(dims, dt)]


def softmax(x, *, device=None, out_dtype=None, **knobs):
    """Softmax over the last dimension."""
    if out_dtype:
        knobs["out_dtype"] = out_dtype
    return _run("softmax", "softmax", knobs, [x], _same_shape, device)


def _norm(opname, family, x, params, eps, residual, device, knobs):
    if residual is not None:
        knobs = dict(knobs, residual=True)
        inputs = [x, residual] + params
        spec = lambda dims, dt: [(dims, dt), (dims, dt)]      # noqa: E731  Y, H
    else:
        inputs = [x] + params
        spec = _same_shape
    return _run(opname, family, knobs, inputs, spec, device, eps)


def rms_norm(x, weight, eps=1e-6, *, residual=None, device=None, **knobs):
    """y = x / sqrt(mean(x^2) + eps) * weight over the last dimension; with
    residual=r, h = x + r is normalised and (y, h) returned."""
    return _norm("rms_norm", "rmsnorm", x, [weight], eps, residual, device, knobs)


def layer_norm(x, weight, bias, eps=1e-5, *, residual=None, device=None, **knobs):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last dimension."""
    return _norm("layer_norm", "layernorm", x, [weight, bias], eps, residual, device, knobs)


def reduce(x, op="sum", *, device=None, out_dtype=None, **knobs):
    """sum, max or mean over the last dimension."""
    knobs = dict(knobs, op=op)
    if out_dtype:
        knobs["out_dtype"] = out_dtype
    return _run("reduce", "reduce", knobs, [x], lambda dims, dt: [(tuple(dims[:-1]) or (1,), dt)], device)


def transpose(x, *, device=None, **knobs):
    """A 2-D transpose (the result is a new contiguous array)."""
    return _run("transpose", "transpose", knobs, [x], lambda dims, dt: [((dims[1], dims[0]), dt)], device)


def elementwise(op, *xs, device=None, **knobs):
    """Any elementwise op of the family by its name (add sub mul div max min copy neg ...)."""
    if len(xs) > 1 and tuple(getattr(xs[0], "shape", ())) != tuple(getattr(xs[1], "shape", ())):
        raise RockeError("rocke.ops.%s: shapes %s and %s differ (no broadcasting)"
                         % (op, tuple(xs[0].shape), tuple(xs[1].shape)))
    return _run(op, "elementwise", dict(knobs, op=op), list(xs), _same_shape, device)


def _unary(name):
    def f(x, *, device=None, **knobs):
        return elementwise(name, x, device=device, **knobs)
    f.__name__ = name
    f.__doc__ = "Elementwise %s." % name
    return f


def _binary(name, op):
    def f(a, b, *, device=None, **knobs):
        return elementwise(op, a, b, device=device, **knobs)
    f.__name__ = name
    f.__doc__ = "Elementwise %s (same shapes)." % op
    return f


for _n in _EW_UNARY:
    globals()[_n] = _unary(_n)
for _n, _op in _EW_BINARY.items():
    globals()[_n] = _binary(_n, _op)


def kernel_used(opname):
    """(kernel name, target) of the last launch of rocke.ops.<opname> in this
    process (which family kernel and which target, e.g. sm_90a's wgmma GEMM
    on a 9.0 device), or None before any."""
    return _used.get(opname)


def cache_info():
    """Sizes of the in-memory caches: prepared shapes and built kernels (shape classes)."""
    return {"prepared": len(_prepared), "kernels": len(_built)}




# ---- GEMM ------------------------------------------------------------------------------------
def _operand_layout(x, name):
    """('r', ld) for a row-major 2-D array, ('c', ld) for a column-major one
    (a transposed view), in elements; None when neither dimension is contiguous."""
    isz = x.itemsize
    if x.strides[1] == isz and x.strides[0] % isz == 0 and x.strides[0] >= x.shape[1] * isz:
        return "r", x.strides[0] // isz
    if x.strides[0] == isz and x.strides[1] % isz == 0 and x.strides[1] >= x.shape[0] * isz:
        return "c", x.strides[1] // isz
    return None


def _widest_vec(*vals):
    v = 8
    while v > 1 and any(x % v for x in vals):
        v //= 2
    return v


def matmul(a, b, *, device=None, out_dtype=None, **knobs):
    """C = a @ b for 2-D arrays through the gemm family. numpy arrays run on the
    emulator: row-major arrays and transposed views (column-major) are read in
    place, padded pitches included; anything else is copied first. CUDA torch
    tensors (float16, bfloat16) run the same way on torch's current stream."""
    if _TORCH is not None and _RECORDER is None:
        c = _TORCH.fast_matmul(a, b, device, out_dtype, knobs)
        if c is not None:
            return c
    _check_same("matmul", [a, b])
    if not _is_numpy(a) or (_RECORDER is not None and _RECORDER.takes(a)):
        return _matmul_device(a, b, device, out_dtype, knobs)
    import numpy as np
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise RockeError("rocke.ops.matmul: needs [M, K] @ [K, N], got %s @ %s" % (a.shape, b.shape))
    if a.dtype != b.dtype:
        raise RockeError("rocke.ops.matmul: dtypes %s and %s differ" % (a.dtype.name, b.dtype.name))
    dt = _np_dtype(a, "matmul")
    if dt == "f32":
        raise RockeError("rocke.ops.matmul: float32 inputs are not served (legal: float16, bfloat16)")
    M, K = a.shape
    N = b.shape[1]
    ops, lds = [], []
    for x, name in ((a, "a"), (b, "b")):
        lay = _operand_layout(x, name)
        if lay is None or x.ctypes.data % 16:
            x = np.ascontiguousarray(x)            # neither dimension contiguous, or an unaligned base
            lay = ("r", x.shape[1])
        ops.append(x)
        lds.append(lay)
    (la, lda), (lb, ldb) = lds
    a_ext, b_ext = (K if la == "r" else M), (N if lb == "r" else K)
    out = out_dtype or dt
    knobs = dict(knobs, dtype=dt, out_dtype=out, layout=la + lb)
    knobs.setdefault("vec_a", _widest_vec(a_ext, lda, ops[0].ctypes.data // ops[0].itemsize))
    knobs.setdefault("vec_b", _widest_vec(b_ext, ldb, ops[1].ctypes.data // ops[1].itemsize))
    from . import _emu
    target, knobs = _gemm_target(_emu.parse_device(device), None, lda == a_ext and ldb == b_ext, knobs)
    p = _prepare("gemm", knobs, (M, N, K), target)
    np_out = {"f16": np.float16, "f32": np.float32}.get(out)
    if np_out is None:
        np_out = a.dtype                               # bfloat16 through ml_dtypes
    c = np.empty((M, N), dtype=np_out)
    if p.launcher is None:
        params = [(param_ctype(ptr, t, role), n) for n, ptr, t, role, _ in p.sig]
        p.launcher = _emu.EmuLauncher(target, _kernel_for(p), params, p.grid, p.block)
    # each operand's span: from its base to its last element
    def span(x, ld, lay):
        rows, cols = (x.shape if lay == "r" else (x.shape[1], x.shape[0]))
        return x.ctypes.data, ((rows - 1) * ld + cols) * x.itemsize
    # pointers in signature order: A, B, C, then any workspace (split-K's Work, the padded kernel's staged
    # copies and grid-barrier words), zeroed, sized as the CUDA path sizes them (work_f32s)
    named = {"A": span(ops[0], lda, la), "B": span(ops[1], ldb, lb), "C": (c.ctypes.data, c.nbytes)}
    works, bufs = [], []
    for name, ptr, scalar, role, dims in p.sig:
        if ptr and name not in named and role == "work":
            works.append(np.zeros(max(1, work_f32s(dims, scalar, {"M": M, "N": N, "K": K})), dtype=np.float32))
            named[name] = (works[-1].ctypes.data, works[-1].nbytes)
        if ptr and name in named:
            bufs.append(named[name])
    values = {"M": M, "N": N, "K": K, "lda": lda, "ldb": ldb, "ldc": N}
    scalars = {}
    for i, (name, ptr, _, role, _) in enumerate(p.sig):
        if not ptr and role != "tensormap":
            if name not in values:
                raise RockeError("rocke.ops.matmul: --fuse operands are not passed from Python yet (%s)" % name)
            scalars[i] = values[name]
    if len(bufs) != sum(1 for s in p.sig if s[1]):
        raise RockeError("rocke.ops.matmul: epilogue operands are not passed from Python yet")
    from ._tmaps import tensor_maps
    p.launcher.launch(bufs, scalars, tensor_maps(p, values))
    _used["matmul"] = p.used
    return c


def _gemm_target(target, cc, packed, knobs):
    """(target, knobs) of a 16-bit GEMM. A 9.0 device (cc 90) runs sm_90a's
    kernels when both operands are packed (TMA maps are described from the
    packed problem; 4096^3 bf16: wgmma 749 TFLOP/s, sm_90's mma.sync 390),
    else sm_90's. On an sm_90a target (the emulator's "emu:sm_90a"), a padded
    pitch keeps the mma.sync kernel (path=mma) unless the caller set path."""
    if cc == 90 and packed:
        return "sm_90a", knobs
    if target == "sm_90a" and not packed and knobs.get("path") == "wgmma":
        raise RockeError("rocke.ops.matmul: path=wgmma reads its operands through TMA maps of packed matrices: "
                         "a padded pitch needs path=mma (or a packed copy)")
    if target == "sm_90a" and not packed and "path" not in knobs:
        return target, dict(knobs, path="mma")
    return target, knobs


def _matmul_device(a, b, device, out_dtype, knobs):
    """matmul on CUDA torch tensors (or record mode's stand-ins): the numpy
    path's layout and vector choices from element strides, launched by
    parameter name through the tensors' kit."""
    from ._attention import kit_for
    kit = kit_for("matmul", [a, b], device)
    key = _TORCH.matmul_key(a, b, device, out_dtype, knobs) if _TORCH is not None and not kit.emu else None
    dt = kit.dtype(a)
    if kit.dtype(b) != dt:
        raise RockeError("rocke.ops.matmul: dtypes %s and %s differ" % (dt, kit.dtype(b)))
    if dt not in ("f16", "bf16"):
        raise RockeError("rocke.ops.matmul: dtype %s is not served (legal: float16, bfloat16)" % dt)
    if len(a.shape) != 2 or len(b.shape) != 2 or a.shape[1] != b.shape[0]:
        raise RockeError("rocke.ops.matmul: needs [M, K] @ [K, N], got %s @ %s" % (tuple(a.shape), tuple(b.shape)))
    M, K = a.shape
    N = b.shape[1]
    operands, lds, contig = [], [], []
    for x in (a, b):
        st, sh = kit.strides(x), tuple(x.shape)
        contig.append(False)
        if st[1] == 1 and st[0] >= sh[1]:
            lay = ("r", st[0])
        elif st[0] == 1 and st[1] >= sh[0]:
            lay = ("c", st[1])
        else:
            x = kit.contiguous(x)
            lay = ("r", sh[1])
            contig[-1] = True
        operands.append(x)
        lds.append(lay)
    (la, lda), (lb, ldb) = lds
    base = [x.data_ptr() // 2 if hasattr(x, "data_ptr") else 0 for x in operands]    # element alignment
    out = out_dtype or dt
    knobs = dict(knobs, dtype=dt, out_dtype=out, layout=la + lb)
    packed = lda == (K if la == "r" else M) and ldb == (N if lb == "r" else K)
    target, knobs = _gemm_target(kit.target, None if kit.emu else getattr(kit, "cc", None), packed, knobs)
    # packed sm_90a operands at 16-byte aligned bases are the problem the C heuristic plans for from
    # (M, N, K) alone: an odd K there takes the padded TMA kernel (2047x3001x4093: 298 TFLOP/s against
    # the vector-1 gathered kernel's 95), which locking the vectors to the pitch would rule out
    if not (target == "sm_90a" and packed and base[0] % 8 == 0 and base[1] % 8 == 0):
        knobs.setdefault("vec_a", _widest_vec(K if la == "r" else M, lda, base[0]))
        knobs.setdefault("vec_b", _widest_vec(N if lb == "r" else K, ldb, base[1]))
    p = _prepare("gemm", knobs, (M, N, K), target)
    c = kit.empty((M, N), out, a)
    arrays = {"A": operands[0], "B": operands[1], "C": c}
    values = {"M": M, "N": N, "K": K, "lda": lda, "ldb": ldb, "ldc": N}
    f = kit.launch("matmul", p, _kernel_for, arrays, values, {"M": M, "N": N, "K": K})
    if key is not None and f is not None:
        kit.remember(key, f, {"A": 0, "B": 1}, {"C": (0, (M, N))}, out, tuple(contig) if any(contig) else ())
    return c


# ---- convolution -------------------------------------------------------------------------------
def _pair(v, what):
    t = (v, v) if isinstance(v, int) else tuple(v)
    if len(t) != 2 or any(not isinstance(x, int) or x < 1 for x in t):
        raise RockeError("rocke.ops.conv2d: %s must be a positive int or two of them, got %r" % (what, v))
    return t


def conv2d(x, w, *, stride=1, padding=0, dilation=1, groups=1, device=None, **knobs):
    """Forward 2-D convolution through the conv family, channels-last: x
    [N, H, W, C], w [K, R, S, C / groups] -> y [N, P, Q, K] (f32 accumulation).
    padding: an int, (pad_h, pad_w) or (top, bottom, left, right). The
    heuristic picks implicit GEMM, the direct kernel (few channels per group)
    or a plain GEMM (1x1). numpy arrays run on the emulator (packed copies)."""
    _check_same("conv2d", [x, w])
    if not _is_numpy(x):
        raise RockeError("rocke.ops.conv2d: only numpy arrays (the emulator) are served so far")
    import numpy as np
    if x.ndim != 4 or w.ndim != 4:
        raise RockeError("rocke.ops.conv2d: needs x [N, H, W, C] and w [K, R, S, C/groups], got %s and %s"
                         % (x.shape, w.shape))
    if x.dtype != w.dtype:
        raise RockeError("rocke.ops.conv2d: dtypes %s and %s differ" % (x.dtype.name, w.dtype.name))
    dt = _np_dtype(x, "conv2d")
    if dt == "f32":
        raise RockeError("rocke.ops.conv2d: float32 inputs are not served (legal: float16, bfloat16)")
    N, H, W, C = x.shape
    K, R, S, Cg = w.shape
    if not isinstance(groups, int) or groups < 1 or C % groups or K % groups or Cg != C // groups:
        raise RockeError("rocke.ops.conv2d: groups = %r must divide C = %d and K = %d, with w's last "
                         "dimension C / groups (got %d)" % (groups, C, K, Cg))
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    pad = (padding,) * 4 if isinstance(padding, int) else tuple(padding)
    if len(pad) == 2:
        pad = (pad[0], pad[0], pad[1], pad[1])
    if len(pad) != 4 or any(not isinstance(p, int) or p < 0 for p in pad):
        raise RockeError("rocke.ops.conv2d: padding must be an int, (pad_h, pad_w) or (top, bottom, left, "
                         "right) of non-negative ints, got %r" % (padding,))
    P = (H + pad[0] + pad[1] - dh * (R - 1) - 1) // sh + 1
    Q = (W + pad[2] + pad[3] - dw * (S - 1) - 1) // sw + 1
    if P < 1 or Q < 1:
        raise RockeError("rocke.ops.conv2d: the output would be empty (P = %d, Q = %d)" % (P, Q))
    knobs = dict(knobs, dtype=dt, direction="fwd", stride="%dx%d" % (sh, sw), pad="x".join(map(str, pad)),
                 dilation="%dx%d" % (dh, dw), groups=groups)
    from . import _emu
    target = _emu.parse_device(device)
    p = _prepare("conv", knobs, (N, C, H, W, K, R, S), target)
    xs, ws = np.ascontiguousarray(x), np.ascontiguousarray(w)
    y = np.empty((N, P, Q, K), dtype=x.dtype)
    if p.launcher is None:
        params = [(param_ctype(ptr, t, role), n) for n, ptr, t, role, _ in p.sig]
        p.launcher = _emu.EmuLauncher(target, _kernel_for(p), params, p.grid, p.block)
    values = {"N": N, "C": C, "H": H, "W": W, "K": K, "R": R, "S": S, "P": P, "Q": Q, "stride_h": sh,
              "stride_w": sw, "pad_h": pad[0], "pad_w": pad[2], "dil_h": dh, "dil_w": dw, "groups": groups}
    scalars = {}
    for i, (name, ptr, _, role, _) in enumerate(p.sig):
        if ptr or role == "tensormap":
            continue
        if name not in values:
            raise RockeError("rocke.ops.conv2d: no value for scalar parameter %s" % name)
        scalars[i] = values[name]
    bufs = [(a.ctypes.data, a.nbytes) for a in (xs, ws, y)]
    if len(bufs) != sum(1 for s in p.sig if s[1]):
        raise RockeError("rocke.ops.conv2d: epilogue operands and split-K workspaces are not offered from "
                         "Python yet")
    from ._tmaps import tensor_maps
    p.launcher.launch(bufs, scalars, tensor_maps(p, values))
    _used["conv2d"] = p.used
    return y


# the attention family and the KV cache writer (their own files; they use this module's caches)
from ._attention import attention, attention_decode, unified_attention  # noqa: E402
from ._kv_append import kv_append  # noqa: E402
from ._gemm_fp8 import gemm  # noqa: E402
