"""The GPU path of rocke.ops: CUDA torch tensors (CuPy and JAX arrays through
__cuda_array_interface__ / DLPack, as zero-copy torch views), kernels compiled
once per (family, knobs, dtype, shape, device) and launched on torch's current
stream without a sync; the ops as torch.library custom ops with fake-tensor
implementations; torch_backend for torch.compile. torch is imported only here,
only when used. Layer: python bindings."""
import sys

from . import _cuda, ops
from ._lib import RockeError, lib
from .compile import compile as rk_compile, targets

_functions = {}      # (kernel name, target, device index) -> _cuda.Function
_used = ops._used


def _torch():
    try:
        import torch
    except ImportError as e:
        raise RockeError("rocke.ops: this input needs torch (import failed: %s); numpy arrays run on the "
                         "emulator" % e)
    return torch


def _as_tensor(torch, x, opname):
    if isinstance(x, torch.Tensor):
        return x, None
    if hasattr(x, "__cuda_array_interface__"):
        return torch.as_tensor(x, device="cuda"), "cai"
    if hasattr(x, "__dlpack__"):
        return torch.from_dlpack(x), "dlpack"
    raise RockeError("rocke.ops.%s: expected a numpy array (emulator) or a CUDA tensor (torch, CuPy, JAX), "
                     "got %s" % (opname, type(x).__name__))


def target_for_cc(cc, where="this device"):
    """The target the GPU path compiles most families for on a device of
    compute capability cc (major * 10 + minor): the newest portable sm_NN not
    above it (an H200, 9.0: sm_90; the wgmma kernels ask for sm_90a)."""
    sm = [t for t in targets() if t.startswith("sm_") and t[3:].isdigit() and int(t[3:]) <= cc]
    if not sm:
        raise RockeError("rocke.ops: %s (compute capability %d.%d) is older than every rocke target (%s)"
                         % (where, cc // 10, cc % 10, ", ".join(targets())))
    return max(sm, key=lambda t: int(t[3:]))


_device_targets = {}  # device index -> target_for_cc of its compute capability
_device_cc = {}       # device index -> compute capability (major * 10 + minor)


def _target_for(torch, index):
    t = _device_targets.get(index)
    if t is None:
        t = _device_targets[index] = _target_for_device(torch, index)
    return t


def _target_for_device(torch, index):
    if getattr(torch.version, "hip", None):
        raise RockeError("rocke.ops: ROCm torch tensors are not served yet (CUDA only)")
    major, minor = torch.cuda.get_device_capability(index)
    return target_for_cc(major * 10 + minor, "device cuda:%d" % index)


def _compile_for(p, kernel_for=None):
    """The code object of a prepared call for its target (rk_compile, through
    the on-disk cache). On a machine without LLVM the cache must hold it; the
    error then also names the warm line for this kernel, and with
    ROCKE_WARM_MISSES=FILE the line is appended to FILE."""
    try:
        return rk_compile((kernel_for or ops._kernel_for)(p), p.target)
    except RockeError as e:
        from . import _warm
        raise _warm.missed(p, e)


def _load(index, art, cooperative=False):
    """A cuda Function for the artifact: the cubin, else (or when the driver
    refuses the cubin, e.g. one from a newer ptxas) the PTX, which it JITs.
    cooperative: the kernel's IR attribute (a grid barrier inside: every
    block resident, launched through cuLaunchKernelEx)."""
    _cuda.use_primary_context(index)
    if art.cubin:
        try:
            return _cuda.Function(art.cubin, art.kernel_name, art.dyn_smem_min, cooperative)
        except RockeError as e:
            cubin_error = e
            try:
                return _cuda.Function(art.binary, art.kernel_name, art.dyn_smem_min, cooperative)
            except RockeError as e2:
                raise RockeError("%s (the PTX fallback failed too: %s)" % (cubin_error, e2))
    return _cuda.Function(art.binary, art.kernel_name, art.dyn_smem_min, cooperative)


_DTYPES = None


def _dtype_name(torch, t, opname):
    global _DTYPES
    if _DTYPES is None:
        _DTYPES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}
    if t.dtype not in _DTYPES:
        raise RockeError("rocke.ops.%s: dtype %s is not served (legal: torch.float16, torch.bfloat16, "
                         "torch.float32)" % (opname, t.dtype))
    return _DTYPES[t.dtype]


class _Plan:
    """A loaded kernel with its packed argument buffer (rocke/_cuda.py Args)
    for one prepared shape on one device, kept between calls: a call writes
    its pointers and scalars into the slots, encodes its tensor maps in place
    (only when a buffer moved) and launches."""

    def __init__(self, p, fn):
        from ._sig_launch import param_ctype
        self.p, self.fn, self.grid, self.block = p, fn, p.grid, p.block
        args = _cuda.Args([param_ctype(ptr, t, role) for _, ptr, t, role, _ in p.sig])
        self.args, self.slots, self.params = args, args.slots, args.params
        self.ptr_index = [i for i, (_, ptr, _, _, _) in enumerate(p.sig) if ptr]
        self.has_maps = any(role == "tensormap" for _, _, _, role, _ in p.sig)
        self.maps = {}         # bytes of an rk_problem_tmap_nd -> [(signature index, _cuda.TensorMap)]
        self.encoded = {}      # signature index -> (TensorMap, base) now in the slot
        self.owner = None      # the _FastCall whose scalars the slots hold
        self._launch = None    # its _cuda.PackedLaunch, made once (packed())
        counters["plans"] += 1

    def packed(self):
        """The plan's launch packed once (every entry of the plan shares it: only the stream differs)."""
        if self._launch is None:
            self._launch = self.fn.packed(self.grid, self.block, self.params)
            counters["packs"] += 1
        return self._launch

    def tensor_maps(self, tmaps):
        """[(index, TensorMap)] for {index: rk_problem_tmap_nd} over this plan's slots."""
        key = b"".join(bytes(t) for _, t in sorted(tmaps.items()))
        maps = self.maps.get(key)
        if maps is None:
            maps = self.maps[key] = [(i, _cuda.TensorMap(t, self.args.addresses[i])) for i, t in sorted(tmaps.items())]
        return maps

    def encode(self, maps):
        slots, encoded = self.slots, self.encoded
        for i, tm in maps:
            base = slots[tm.buf].value
            if encoded.get(i) != (tm, base):
                tm.encode(base)
                encoded[i] = (tm, base)
                counters["map_encodes"] += 1


_plans = {}          # (_Prepared, device index) -> _Plan


def _plan(p, index, kernel_for=None):
    pl = _plans.get((p, index))
    if pl is None:
        fkey = (p.inst.name, p.target, index)
        fn = _functions.get(fkey)
        if fn is None:
            kern = (kernel_for or ops._kernel_for)(p)
            coop = bool(lib.rk_kernel_cooperative(kern._k))
            fn = _functions[fkey] = _load(index, _compile_for(p, lambda _p: kern), coop)
        pl = _plans[(p, index)] = _Plan(p, fn)
    return pl


def _stream_of(torch):
    """index -> the device's current raw stream: torch's C accessor where it has one (a tenth of
    torch.cuda.current_stream's cost), else current_stream(index).cuda_stream."""
    raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda index: torch.cuda.current_stream(index).cuda_stream


def _extent(t):
    """Elements from a tensor's first element to one past its last (non-negative strides)."""
    return sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1 if all(t.shape) else 0


# ---- the per-call fast path: one dict lookup per repeated call ------------------------------------
_fast = {}           # call key -> _FastCall
_hit_code = {}       # source of a _FastCall's written repeat -> its code object
_WORK_STREAMS = 4    # streams per _FastCall whose work buffers are kept
# What the checked path builds, counted where it builds it: checked calls, call keys built there, plans
# (argument buffers), packed launches, cached entries, work buffer allocations. A cache hit leaves those
# as they were (test_fast_path.py checks it) and counts only work buffer fills (one driver memset each),
# scalar rewrites (when another entry wrote the plan's slots since) and tensor map encodings (a moved buffer).
counters = dict.fromkeys(("checked", "keys", "plans", "packs", "entries", "work_allocs", "work_fills",
                          "scalar_writes", "map_encodes"), 0)


def _call_key(opname, knobs, device, ts):
    """A repeated call's key: the op, its knobs and device argument, and each
    input's type, shape, dtype, strides and device (strides and device stand
    for the checks the first call made); None when an input is no tensor. A
    knob that cannot be hashed makes the lookup raise TypeError (no fast path).
    One flat tuple (fewer objects to build and hash than a tuple per tensor),
    written out for one input, the most common call."""
    try:
        if len(ts) == 1:
            t = ts[0]
            return (opname, tuple(knobs.items()) if knobs else (), device,
                    type(t), t.shape, t.dtype, t.stride(), t.device)
        key = [opname, tuple(knobs.items()) if knobs else (), device]
        for t in ts:
            key += (type(t), t.shape, t.dtype, t.stride(), t.device)
    except AttributeError:
        return None
    return tuple(key)


def _remember(key, f):
    if key is not None:
        try:
            _fast[key] = f
        except TypeError:            # an unhashable knob: every call takes the checked path
            return
        f.hit = f._hit()
        counters["entries"] += 1


class _FastCall:
    """What a repeat of a call needs, all built by the checked call: the plan,
    its launch packed once (_cuda.PackedLaunch), the pointer slots split by
    where each value comes from (input j, new output j, a work buffer of n
    32-bit words), the scalars the call wrote, the outputs' shapes and dtype,
    and its tensor maps. A repeat (hit: written for the entry when it is
    kept) writes only what changes per call: the pointers, eps, the stream;
    the scalars again only when another entry used the plan's slots since
    (plan.owner)."""

    def __init__(self, opname, torch, plan, device, index, recipe, scalars, outs, out_dtype, maps, eps_slot,
                 contig=(), like=()):
        self.op, self.used = opname, plan.p.used
        self.torch, self.empty, self.stream = torch, torch.empty, _stream_of(torch)
        self.f32 = torch.float32
        self.plan = plan
        self.device, self.index, self.recipe, self.scalars = device, index, recipe, scalars
        self.outs, self.out_dtype, self.maps, self.eps_slot, self.contig = outs, out_dtype, maps, eps_slot, contig
        self.like = like         # output j is shaped and typed as input 0: torch.empty_like(input 0)
        self.ins = [(slot, j) for slot, kind, j in recipe if kind == 0]
        self.out_slots = [(slot, j) for slot, kind, j in recipe if kind == 1]
        self.work_slots = [(slot, n) for slot, kind, n in recipe if kind == 2]
        self.launch = plan.packed()
        self.work_bufs = {}      # stream -> ([work tensors], [their packed memsets])
        self.hit = None          # the written repeat, made when the entry is kept (_remember)

    def __call__(self, inputs, eps=None):
        """The checked call's launch, step for step what the written repeat
        (_hit) does, without writing one (most checked calls of the
        attention and serving ops are not kept); returns the list of outputs."""
        if self.contig:
            inputs = [x.contiguous() if c else x for x, c in zip(inputs, self.contig)]
        like = getattr(self.torch, "empty_like", None)
        outs = [like(inputs[0]) if j in self.like and like is not None else
                self.empty(s, dtype=self.out_dtype, device=self.device) for j, s in enumerate(self.outs)]
        stream = self.stream(self.index)
        for slot, j in self.ins:
            slot.value = inputs[j].data_ptr()
        for slot, j in self.out_slots:
            slot.value = outs[j].data_ptr()
        if self.work_slots:
            self._works(stream)
        if self.plan.owner is not self:
            self._own()
        if self.eps_slot is not None:
            self.eps_slot.value = float(eps)
        if self.maps:
            self.plan.encode(self.maps)
        self.launch.launch(stream)
        _used[self.op] = self.used
        return outs

    def _hit(self):
        """The repeat as a function written for this entry from source (as
        collections.namedtuple makes its classes): only the steps this call
        has, loops over its slots unrolled, every object it touches bound
        once as a name, so a repeat makes no attribute lookups and tests
        nothing it cannot need (0.25 us of the 2-core CI box's 2 us for a
        closure that loops and branches). The source is built from this
        entry's slot counts alone, kept in self.source; the function returns
        the op's result (one tensor, or a tuple)."""
        lp = self.launch
        empty_like = getattr(self.torch, "empty_like", None)
        env = {"self": self, "plan": self.plan, "used": _used, "op": self.op, "kernel": self.used,
               "stream_of": self.stream, "index": self.index, "contig": self.contig, "empty": self.empty,
               "empty_like": empty_like, "dt": self.out_dtype, "dev": self.device, "shapes": tuple(self.outs),
               "works": self._works, "eps_slot": self.eps_slot, "maps": self.maps, "call": lp.call,
               "args": lp.args, "stream_slot": lp.stream, "cfg": lp.cfg, "failed": lp.failed}
        src = ["def hit(inputs, eps=None):"]
        if self.contig:
            src.append("    inputs = [x.contiguous() if c else x for x, c in zip(inputs, contig)]")
        for j in range(len(self.outs)):
            src.append("    o%d = empty_like(inputs[0])" % j if j in self.like and empty_like is not None else
                       "    o%d = empty(shapes[%d], dtype=dt, device=dev)" % (j, j))
        src.append("    stream = stream_of(index)")
        for k, (slot, j) in enumerate(self.ins):
            env["in%d" % k] = slot
            src.append("    in%d.value = inputs[%d].data_ptr()" % (k, j))
        for k, (slot, j) in enumerate(self.out_slots):
            env["out%d" % k] = slot
            src.append("    out%d.value = o%d.data_ptr()" % (k, j))
        if self.work_slots:
            src.append("    works(stream)")
        src.append("    if plan.owner is not self:")
        src.append("        self._own()")
        if self.eps_slot is not None:
            src.append("    eps_slot.value = float(eps)")
        if self.maps:
            src.append("    plan.encode(maps)")
        src.append("    cfg.hStream = stream" if lp.cfg is not None else "    stream_slot.value = stream")
        src += ["    rc = call(*args)", "    if rc:", "        failed(rc)", "    used[op] = kernel"]
        outs = ["o%d" % j for j in range(len(self.outs))]
        src.append("    return " + (outs[0] if len(outs) == 1 else "(%s)" % "".join(o + ", " for o in outs)))
        self.source = "\n".join(src) + "\n"
        code = _hit_code.get(self.source)
        if code is None:             # a few distinct sources in a process: compile each once
            code = _hit_code[self.source] = compile(self.source, "<rocke cached call>", "exec")
        exec(code, env)
        return env["hit"]

    def _own(self):
        """Write this entry's scalars into the plan's slots (another entry of the plan wrote its own since)."""
        for slot, v in self.scalars:
            slot.value = v
        self.plan.owner = self
        counters["scalar_writes"] += 1

    def _works(self, stream):
        """Point the work slots at this call's work buffers on stream, zeroed
        again: allocated once per stream and kept (at most _WORK_STREAMS
        streams, the least recently used dropped), so a repeat pays one
        driver memset per buffer (packed once), not an allocation nor a torch
        fill. Safe because the memset and the kernel are queued on the one
        stream after the previous call's kernel that used them."""
        per = self.work_bufs
        bufs = per.pop(stream, None)
        if bufs is None:
            ts = [self.empty(n, dtype=self.f32, device=self.device) for _, n in self.work_slots]
            bufs = (ts, [_cuda.PackedMemset(t.data_ptr(), n, stream) for t, (_, n) in zip(ts, self.work_slots)])
            counters["work_allocs"] += len(ts)
            if len(per) >= _WORK_STREAMS:
                del per[next(iter(per))]
        per[stream] = bufs                 # most recently used last
        for (slot, _), m in zip(self.work_slots, bufs[1]):
            m()
            slot.value = m.args[0].value
        counters["work_fills"] += len(bufs[1])


def fast(opname, knobs, inputs, device, eps):
    """A repeated call of the one-tensor-in families on torch tensors, else None."""
    try:
        f = _fast.get(_call_key(opname, knobs, device, inputs))
    except TypeError:                  # an unhashable knob
        return None
    return f.hit(inputs, eps) if f is not None else None


def _prepare(torch, opname, family, knobs, x, index):
    target = _target_for(torch, index)
    p = ops._prepare(family, knobs, tuple(x.shape), target)
    return _plan(p, index)


def run(opname, family, knobs, inputs, out_spec, device, eps):
    torch = _torch()
    ts, kinds = [], []
    for x in inputs:
        t, kind = _as_tensor(torch, x, opname)
        ts.append(t)
        kinds.append(kind)
    x = ts[0]
    for i, t in enumerate(ts):
        if not t.is_cuda:
            raise RockeError("rocke.ops.%s: input %d is a CPU tensor: rocke runs torch tensors on CUDA "
                             "(move it with .cuda(), or pass a numpy array to run on the emulator)" % (opname, i))
        if t.device != x.device:
            raise RockeError("rocke.ops.%s: inputs are on two devices (%s and %s)" % (opname, x.device, t.device))
        if t.dtype != x.dtype:
            raise RockeError("rocke.ops.%s: inputs have dtypes %s and %s; they must match"
                             % (opname, x.dtype, t.dtype))
        if not t.is_contiguous():
            raise RockeError("rocke.ops.%s: input %d has strides %s for shape %s: the kernel needs dense "
                             "row-major rows (call .contiguous())" % (opname, i, tuple(t.stride()), tuple(t.shape)))
    if device not in (None, "cuda", str(x.device)) and device != x.device:
        raise RockeError("rocke.ops.%s: device=%r but the tensors are on %s" % (opname, device, x.device))
    counters["checked"] += 1
    key = _call_key(opname, knobs, device, ts) if not any(kinds) else None
    counters["keys"] += key is not None
    knobs = dict(knobs, dtype=_dtype_name(torch, x, opname))
    index = x.device.index if x.device.index is not None else torch.cuda.current_device()
    plan = _prepare(torch, opname, family, knobs, x, index)
    p = plan.p
    out_dtype = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[
        knobs.get("out_dtype", knobs["dtype"])]
    shapes = [shape for shape, _ in out_spec(tuple(x.shape), out_dtype)]
    recipe, n_in, n_out = [], 0, 0
    for i, role, count in zip(plan.ptr_index, [r for _, ptr, _, r, _ in p.sig if ptr], p.counts or [None] * 99):
        if role == "work":        # split rows' partials: zeroed per call, alive until the launch is queued
            recipe.append((plan.slots[i], 2, count))
        elif role == "in":
            recipe.append((plan.slots[i], 0, n_in))
            n_in += 1
        else:
            recipe.append((plan.slots[i], 1, n_out))
            n_out += 1
    scalars = [(plan.slots[i], v) for i, v in p.scalar_values.items()]
    eps_slot = plan.slots[p.eps_index] if p.eps_index is not None else None
    # outputs shaped and typed as x come from empty_like(x) (cheaper to call than empty); only for a plain
    # torch.Tensor input, whose empty_like is a plain dense tensor (a subclass's could be its own kind)
    like = tuple(j for j, s in enumerate(shapes) if s == tuple(x.shape) and out_dtype == x.dtype
                 and type(x) is torch.Tensor)
    f = _FastCall(opname, torch, plan, x.device, index, recipe, scalars, shapes, out_dtype, None, eps_slot,
                  like=like)
    outs = f(ts, eps)
    if key is not None:
        _remember(key, f)
        ops._TORCH = sys.modules[__name__]
    if kinds[0] == "cai":
        import cupy
        outs = [cupy.asarray(o) for o in outs]
    elif kinds[0] == "dlpack":
        mod = type(inputs[0]).__module__.split(".")[0]
        if mod in ("jax", "jaxlib"):
            import jax.dlpack
            outs = [jax.dlpack.from_dlpack(o) for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)


def matmul_key(a, b, device, out_dtype, knobs):
    """matmul's call key: _call_key's plus each operand's address modulo 16
    (the vector width and TMA depend on it)."""
    k = _call_key("matmul", knobs, (device, out_dtype), (a, b))
    try:
        return k and k + (a.data_ptr() % 16, b.data_ptr() % 16)
    except AttributeError:
        return None


def fast_matmul(a, b, device, out_dtype, knobs):
    try:
        f = _fast.get(matmul_key(a, b, device, out_dtype, knobs))
    except TypeError:
        return None
    return f.hit((a, b)) if f is not None else None


# ---- the attention, serving and fp8 GEMM ops: a kit with the numpy kit's methods ------------------
class TorchKit:
    """CUDA torch tensors for the ops launched by parameter name (rocke/_attention.py,
    _kv_append.py, _gemm_fp8.py): dtype names, element strides, allocation, and
    the launch on torch's current stream. Host-side checks of offsets and page
    ids are left out here (they would synchronise); the shape checks stay."""
    emu = False

    def __init__(self, opname, arrays, device):
        torch = self.torch = _torch()
        ops._TORCH = sys.modules[__name__]
        x = arrays[0]
        for i, t in enumerate(arrays):
            if not isinstance(t, torch.Tensor):
                raise RockeError("rocke.ops.%s: argument %d is %s: this op takes torch tensors (torch.as_tensor "
                                 "views CuPy and JAX arrays)" % (opname, i, type(t).__name__))
            if not t.is_cuda:
                raise RockeError("rocke.ops.%s: argument %d is a CPU tensor: rocke runs torch tensors on CUDA (move "
                                 "it with .cuda(), or pass numpy arrays to run on the emulator)" % (opname, i))
            if t.device != x.device:
                raise RockeError("rocke.ops.%s: tensors on two devices (%s and %s)" % (opname, x.device, t.device))
        if device not in (None, "cuda", str(x.device)) and device != x.device:
            raise RockeError("rocke.ops.%s: device=%r but the tensors are on %s" % (opname, device, x.device))
        self.device = x.device
        self.index = x.device.index if x.device.index is not None else torch.cuda.current_device()
        self.target = _target_for(torch, self.index)
        self.cc = _device_cc.get(self.index)
        if self.cc is None:
            major, minor = torch.cuda.get_device_capability(self.index)
            self.cc = _device_cc[self.index] = major * 10 + minor
        self.names = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.uint8: "u8",
                      torch.int32: "i32", torch.int64: "i64"}
        for attr, name in (("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2"), ("float8_e4m3fnuz", "e4m3fnuz")):
            if hasattr(torch, attr):
                self.names[getattr(torch, attr)] = name
        self.types = {v: k for k, v in self.names.items()}

    def dtype(self, x):
        return self.names.get(x.dtype, str(x.dtype))

    def strides(self, x):
        return tuple(x.stride())

    def contiguous(self, x):
        return x.contiguous()

    def is_contiguous(self, x):
        return x.is_contiguous()

    def transpose(self, x):
        return x.t()

    def host(self, x):
        return x.cpu().numpy()                    # a synchronisation: only where the op asks for it

    def empty(self, shape, dt, like):
        return self.torch.empty(shape, dtype=self.types[dt], device=self.device)

    def full(self, shape, value, like):
        return self.torch.full(shape, value, dtype=self.torch.float32, device=self.device)

    def launch(self, opname, p, kernel_for, arrays, values, ext):
        """p's kernel on the current stream: pointers by parameter name, work
        buffers zeroed, tensor maps described for these views
        (rocke/_tmaps.py) and encoded over their addresses. Returns the
        _FastCall that repeats it (matmul keeps it for its fast path)."""
        from ._sig_launch import _pointer_args, _scalar_args, work_f32s
        from ._tmaps import tensor_maps
        torch = self.torch
        counters["checked"] += 1
        plan = _plan(p, self.index, kernel_for)
        zeros = lambda n: torch.zeros(n, dtype=torch.float32, device=self.device)      # noqa: E731
        ptrs = _pointer_args(opname, p, arrays, ext, zeros)                             # alive until launched
        scalars = _scalar_args(opname, p, values)
        maps = None
        if plan.has_maps:
            names = [p.sig[i][0] for i in plan.ptr_index]
            maps = plan.tensor_maps(tensor_maps(p, values, {n: _extent(a) for n, a in zip(names, ptrs)}))
        recipe = [(plan.slots[i], 0, j) for j, i in enumerate(plan.ptr_index)]
        f = _FastCall(opname, torch, plan, self.device, self.index, recipe,
                      [(plan.slots[i], v) for i, v in scalars.items()], (), None, maps, None)
        f(ptrs)
        f.names = [p.sig[i][0] for i in plan.ptr_index]
        # zeroed by _pointer_args, in f32 elements
        f.works = {j: work_f32s(p.sig[i][4], p.sig[i][2], ext)
                   for j, i in enumerate(plan.ptr_index) if p.sig[i][3] == "work" and p.sig[i][0] not in arrays}
        return f

    def remember(self, key, f, inputs, outputs, out_dtype, contig):
        """Keep launch f for repeats of a call: inputs {pointer name: argument
        index}, outputs {pointer name: (index, shape)}, work buffers as f
        zeroed them; a signature with any other pointer (epilogue operands)
        is not kept."""
        if key is None:
            return
        counters["keys"] += 1
        plan = f.plan
        recipe, shapes = [], [None] * len(outputs)
        for j, ((slot, _, _), name) in enumerate(zip(f.recipe, f.names)):
            if j in f.works:
                recipe.append((slot, 2, f.works[j]))          # a work buffer, zeroed per call
            elif name in inputs:
                recipe.append((slot, 0, inputs[name]))
            elif name in outputs:
                j, shapes[j] = outputs[name]
                recipe.append((slot, 1, j))
            else:
                return
        _remember(key, _FastCall(f.op, self.torch, plan, self.device, self.index, recipe, f.scalars, shapes,
                                 self.types[out_dtype], f.maps, None, contig))


# ---- torch.library custom ops and the torch.compile backend ---------------------------------
_registered = False
fallbacks = {}       # custom op name -> [calls that fell back to torch, the first reason]
rewrite_log = []     # per torch_backend call: {replaced op: count}


def print_fallbacks(file=None):
    """One line per custom op that handed calls back to torch, with the first reason."""
    import sys
    for name, (n, why) in sorted(fallbacks.items()):
        print("rocke: torch.ops.rocke.%s fell back to torch %d times; first reason: %s" % (name, n, why),
              file=file or sys.stdout)


def register_custom_ops():
    """torch.ops.rocke.softmax / rms_norm / layer_norm with fake implementations
    (shapes only), so torch.compile traces them without graph breaks. Inputs
    rocke cannot serve fall back to the aten op."""
    global _registered
    if _registered:
        return
    torch = _torch()
    from torch import Tensor

    def _or_aten(f, fallback, name):
        def impl(*a):
            try:
                return f(*a)
            except RockeError as e:
                fb = fallbacks.setdefault(name, [0, str(e)])
                fb[0] += 1
                return fallback(*a).contiguous()     # the fake implementations promise dense outputs
        return impl

    @torch.library.custom_op("rocke::softmax", mutates_args=())
    def softmax(x: Tensor) -> Tensor:
        return _or_aten(ops.softmax, lambda t: torch.softmax(t, -1), "softmax")(x)

    @softmax.register_fake
    def _(x):
        return torch.empty_like(x)

    @torch.library.custom_op("rocke::rms_norm", mutates_args=())
    def rms_norm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
        return _or_aten(ops.rms_norm, lambda t, w, e: torch.nn.functional.rms_norm(t, (t.shape[-1],), w, e),
                        "rms_norm")(x, weight, eps)

    @rms_norm.register_fake
    def _(x, weight, eps):
        return torch.empty_like(x)

    @torch.library.custom_op("rocke::layer_norm", mutates_args=())
    def layer_norm(x: Tensor, weight: Tensor, bias: Tensor, eps: float) -> Tensor:
        return _or_aten(ops.layer_norm, lambda t, w, b, e: torch.nn.functional.layer_norm(
            t, (t.shape[-1],), w, b, e), "layer_norm")(x, weight, bias, eps)

    @layer_norm.register_fake
    def _(x, weight, bias, eps):
        return torch.empty_like(x)

    def _attention(q, k, v, causal, scale):
        if causal and q.shape[-2] != k.shape[-2]:
            # torch's is_causal is top-left aligned, rocke's bottom-right: the same only for square scores
            raise RockeError("causal attention with %d queries over %d keys" % (q.shape[-2], k.shape[-2]))
        return ops.attention(q, k, v, causal=causal, scale=None if scale <= 0 else scale)

    def _sdpa(q, k, v, causal, scale):
        return torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=causal, scale=None if scale <= 0 else scale, enable_gqa=k.shape[1] != q.shape[1])

    @torch.library.custom_op("rocke::attention", mutates_args=())
    def attention(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: float) -> Tensor:
        """q [B, Hq, S, D], k, v [B, Hkv, S, D]; scale <= 0 means 1/sqrt(D)."""
        return _or_aten(_attention, _sdpa, "attention")(q, k, v, causal, scale)

    @attention.register_fake
    def _(q, k, v, causal, scale):
        return q.new_empty(q.shape)

    @torch.library.custom_op("rocke::matmul", mutates_args=())
    def matmul(a: Tensor, b: Tensor) -> Tensor:
        """a [M, K] @ b [K, N], float16 / bfloat16, row- or column-major operands read in place."""
        return _or_aten(ops.matmul, torch.mm, "matmul")(a, b)

    @matmul.register_fake
    def _(a, b):
        return a.new_empty((a.shape[0], b.shape[1]))

    def _linear(x, w):
        return ops.matmul(x.reshape(-1, x.shape[-1]), w.t()).view(*x.shape[:-1], w.shape[0])

    @torch.library.custom_op("rocke::linear", mutates_args=())
    def linear(x: Tensor, weight: Tensor) -> Tensor:
        """x [..., K] @ weight [N, K]^T (torch.nn.functional.linear without a bias)."""
        return _or_aten(_linear, torch.nn.functional.linear, "linear")(x, weight)

    @linear.register_fake
    def _(x, weight):
        return x.new_empty((*x.shape[:-1], weight.shape[0]))

    _registered = True


def _last_dim(node, dim):
    meta = node.args[0].meta.get("example_value") if hasattr(node.args[0], "meta") else None
    nd = meta.dim() if meta is not None else None
    return dim == -1 or (nd is not None and dim == nd - 1)


def _example(node):
    return node.meta.get("example_value") if hasattr(node, "meta") else None


def _example_dim(node):
    meta = _example(node)
    return meta.dim() if hasattr(meta, "dim") else None


def _half_2d(torch, *nodes):
    """Every node's example value is a 2-D float16 / bfloat16 tensor."""
    metas = [_example(n) for n in nodes]
    return all(hasattr(m, "dim") and m.dim() == 2 and m.dtype in (torch.float16, torch.bfloat16) for m in metas)


def _arg(args, kw, i, name, default):
    return kw[name] if name in kw else args[i] if len(args) > i else default


def _rewrite(gm):
    """Replace softmax / layer_norm / rms_norm over the last dim, plain
    scaled_dot_product_attention (no mask, no dropout, no enable_gqa), 2-D
    16-bit mm / matmul / @, and linear without a bias (16-bit 2-D weight) with
    rocke's custom ops; returns {op: count}."""
    import operator
    torch = _torch()
    F = torch.nn.functional
    matmuls = (torch.mm, torch.matmul, operator.matmul)
    done = {}
    layer_norms = tuple(f for f in (F.layer_norm, getattr(torch, "layer_norm", None)) if f is not None)
    rms_norms = tuple(f for f in (getattr(F, "rms_norm", None), getattr(torch, "rms_norm", None)) if f is not None)

    def replace(node, op, new_args):
        with gm.graph.inserting_before(node):
            new = gm.graph.call_function(getattr(torch.ops.rocke, op), new_args)
        new.meta.update(node.meta)       # the example value: a later rule (linear's rank test) reads its users' args
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
        done[op] = done.get(op, 0) + 1

    for node in list(gm.graph.nodes):
        tgt, args, kw = node.target, node.args, node.kwargs
        fn = node.op == "call_function"
        if fn and tgt in (torch.softmax, F.softmax) or (node.op == "call_method" and tgt == "softmax"):
            dim = kw.get("dim", args[1] if len(args) > 1 else None)
            if dim is not None and kw.get("dtype") is None and _last_dim(node, dim):
                replace(node, "softmax", (args[0],))
        elif fn and tgt is F.scaled_dot_product_attention and len(args) >= 3:
            mask, drop = _arg(args, kw, 3, "attn_mask", None), _arg(args, kw, 4, "dropout_p", 0.0)
            causal, scale = _arg(args, kw, 5, "is_causal", False), _arg(args, kw, 6, "scale", None)
            if (mask is None and drop == 0.0 and isinstance(causal, bool) and not kw.get("enable_gqa", False)
                    and (scale is None or isinstance(scale, (int, float))) and _example_dim(args[0]) in (None, 4)):
                replace(node, "attention", (args[0], args[1], args[2], causal,
                                            float(scale) if scale is not None else -1.0))
        elif fn and tgt in matmuls and len(args) == 2 and not kw and _half_2d(torch, *args):
            replace(node, "matmul", (args[0], args[1]))
        elif (fn and tgt is F.linear and len(args) >= 2 and _arg(args, kw, 2, "bias", None) is None
              and _half_2d(torch, args[1]) and _example_dim(args[0]) not in (None, 0, 1)):
            replace(node, "linear", (args[0], args[1]))
        elif fn and tgt in layer_norms:
            a = list(args) + [None] * (5 - len(args))
            x, shape, w, bias = a[0], kw.get("normalized_shape", a[1]), kw.get("weight", a[2]), kw.get("bias", a[3])
            eps = kw.get("eps", a[4] if a[4] is not None else 1e-5)
            if w is not None and bias is not None and isinstance(shape, (tuple, list)) and len(shape) == 1:
                replace(node, "layer_norm", (x, w, bias, float(eps)))
        elif fn and tgt in rms_norms:
            a = list(args) + [None] * (4 - len(args))
            x, shape, w, eps = a[0], kw.get("normalized_shape", a[1]), kw.get("weight", a[2]), kw.get("eps", a[3])
            if w is not None and eps is not None and isinstance(shape, (tuple, list)) and len(shape) == 1:
                replace(node, "rms_norm", (x, w, float(eps)))
    if done:
        gm.graph.lint()
        gm.recompile()
    return done


def torch_backend(gm, example_inputs):
    """torch.compile(model, backend=rocke.torch_backend): rocke's kernels for
    the ops it has, inductor for the rest."""
    register_custom_ops()
    rewrite_log.append(_rewrite(gm))
    from torch._inductor.compile_fx import compile_fx
    return compile_fx(gm, example_inputs)
