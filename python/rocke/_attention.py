"""rocke.ops' attention family: prefill (dense or varlen, LSE, windows),
paged / contiguous decode and unified attention over numpy arrays (the
emulator) or CUDA torch tensors; each op checks its arrays, picks the
instance's knobs and launches by parameter name. Layer: python bindings."""
from . import ops
from ._lib import RockeError
from ._sig_launch import NumpyKit

_DIMS = ("B", "Hq", "Hkv", "Sq", "Skv", "D")
_HALF = ("f16", "bf16")
_FP8 = {"e4m3": "fp8", "e4m3fnuz": "fp8fnuz"}    # torch's float8 dtypes -> the kv_dtype knob


def kit_for(opname, arrays, device):
    """The numpy kit (emulator) or the torch kit (CUDA tensors) for the arrays."""
    given = [a for a in arrays if hasattr(a, "shape")]          # numbers (scales) take either path
    ops._check_same(opname, given)
    if ops._RECORDER is not None and ops._RECORDER.takes(given[0]):
        return ops._RECORDER.kit(opname, given)
    if ops._is_numpy(given[0]):
        return NumpyKit(device)
    from . import _torch
    return _torch.TorchKit(opname, given, device)


def check_array(kit, opname, x, name, ndim, dtypes, what):
    """x has ndim dimensions, a dtype among dtypes, D (the last) contiguous."""
    if x is None:
        raise RockeError("rocke.ops.%s: %s is required (%s)" % (opname, name, what))
    if len(x.shape) != ndim:
        raise RockeError("rocke.ops.%s: %s must be %s, got shape %s" % (opname, name, what, tuple(x.shape)))
    dt = kit.dtype(x)
    if dt not in dtypes:
        raise RockeError("rocke.ops.%s: %s has dtype %s (legal: %s)" % (opname, name, dt, ", ".join(dtypes)))
    st = kit.strides(x)
    if (st[-1] != 1 and x.shape[-1] > 1) or min(st) < 0:
        raise RockeError("rocke.ops.%s: %s's last dimension (D) must be contiguous, with non-negative strides "
                         "(got strides %s in elements)" % (opname, name, st))
    return dt


def _dense(kit, opname, x, name):
    """The kernel reads x as a packed row-major tensor: in-place buffers must be one."""
    if not kit.is_contiguous(x):
        raise RockeError("rocke.ops.%s: %s must be C-contiguous (it is read at fixed offsets and written in "
                         "place), got strides %s" % (opname, name, kit.strides(x)))
    return x


def _scale(scale, D):
    return float(scale) if scale is not None else 1.0 / float(D) ** 0.5


def _window_bounds(window, causal, opname):
    """(left, right) from window=L or (L, R); causal means right = 0."""
    if window is None:
        return None
    lr = (window, 0 if causal else -1) if isinstance(window, int) else tuple(window)
    if len(lr) != 2 or any(not isinstance(v, int) for v in lr):
        raise RockeError("rocke.ops.%s: window must be an int (left) or (left, right) ints, a negative bound "
                         "unbounded; got %r" % (opname, window))
    if causal and lr[1] != 0:
        raise RockeError("rocke.ops.%s: causal=True with window right bound %d: pass window=(%d, 0) or "
                         "causal=False" % (opname, lr[1], lr[0]))
    return lr


# ---- prefill ------------------------------------------------------------------------------------
def _seqlens(kit, opname, cu, name, B, total, given_max):
    """max(cu[b+1] - cu[b]); on numpy the offsets are checked first."""
    if cu is None or len(cu.shape) != 1 or cu.shape[0] != B + 1 or kit.dtype(cu) != "i32":
        raise RockeError("rocke.ops.%s: %s must be int32 [B + 1 = %d]" % (opname, name, B + 1))
    if given_max is not None and not kit.emu:
        return int(given_max)
    h = [int(c) for c in kit.host(cu)]
    if h[0] != 0 or any(b < a for a, b in zip(h, h[1:])) or h[-1] > total:
        raise RockeError("rocke.ops.%s: %s must start at 0, not decrease and end within the %d packed rows; "
                         "got %s" % (opname, name, total, h))
    return max(max(b - a for a, b in zip(h, h[1:])), 1)


def attention(q, k, v, *, causal=False, scale=None, lse=False, window=None, cu_seqlens_q=None,
              cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None, device=None, **knobs):
    """O = softmax(scale * q k^T + mask) v (forward). Dense: q [B, Hq, Sq, D],
    k and v [B, Hkv, Skv, D], any batch / head / sequence strides with D
    contiguous. Varlen (cu_seqlens_q and cu_seqlens_k, int32 [B + 1]): packed
    q [Tq, Hq, D], k and v [Tk, Hkv, D], sequence b owning rows cu[b] ..
    cu[b + 1]. Hq a multiple of Hkv (GQA, MQA). causal: bottom-right aligned;
    window=L or (L, R): keys i + off - L .. i + off + R (negative: unbounded).
    scale: 1/sqrt(D) by default. lse=True also returns LSE (float32, natural
    log; [B, Hq, Sq] or [Tq, Hq]). A row that sees no key gives O = 0."""
    kit = kit_for("attention", [q, k, v, cu_seqlens_q, cu_seqlens_k], device)
    varlen = cu_seqlens_q is not None or cu_seqlens_k is not None
    nd, what = (3, "[T, H, D] (varlen)") if varlen else (4, "[B, H, S, D]")
    dt = check_array(kit, "attention", q, "q", nd, _HALF, what)
    for x, name in ((k, "k"), (v, "v")):
        if check_array(kit, "attention", x, name, nd, _HALF, what) != dt:
            raise RockeError("rocke.ops.attention: dtypes %s and %s differ" % (dt, kit.dtype(x)))
    if tuple(k.shape) != tuple(v.shape) or k.shape[-1] != q.shape[-1] or (not varlen and k.shape[0] != q.shape[0]):
        raise RockeError("rocke.ops.attention: k and v must both be %s with q's D%s, got %s and %s"
                         % (what, "" if varlen else " and B", tuple(k.shape), tuple(v.shape)))
    qs, ks, vs = kit.strides(q), kit.strides(k), kit.strides(v)
    if varlen:
        Hq, D, Hkv = q.shape[1], q.shape[2], k.shape[1]
        B = (cu_seqlens_q.shape[0] if cu_seqlens_q is not None else 1) - 1
        Sq = _seqlens(kit, "attention", cu_seqlens_q, "cu_seqlens_q", B, q.shape[0], max_seqlen_q)
        Skv = _seqlens(kit, "attention", cu_seqlens_k, "cu_seqlens_k", B, k.shape[0], max_seqlen_k)
        o = kit.empty((q.shape[0], Hq, D), dt, q)
        strides = [(0, s[1], s[0]) for s in (qs, ks, vs)] + [(0, D, Hq * D)]
    else:
        B, Hq, Sq, D = q.shape
        Hkv, Skv = k.shape[1], k.shape[2]
        o = kit.empty((B, Hq, Sq, D), dt, q)
        strides = [s[:3] for s in (qs, ks, vs)] + [kit.strides(o)[:3]]
    if Hq % Hkv:
        raise RockeError("rocke.ops.attention: Hq = %d is not a multiple of Hkv = %d" % (Hq, Hkv))
    lr = _window_bounds(window, causal, "attention")
    knobs = dict(knobs, dtype=dt, head_dim=D, mask="window" if lr else "causal" if causal else "none",
                 lse=bool(lse), layout="varlen" if varlen else "bhsd")
    values = dict(zip(_DIMS, (B, Hq, Hkv, Sq, Skv)), scale=_scale(scale, D))
    for st, pre in zip(strides, "qkvo"):
        values[pre + "_sb"], values[pre + "_sh"], values[pre + "_ss"] = st
    if lr:
        values["window_left"], values["window_right"] = lr
    arrays = {"Q": q, "K": k, "V": v, "O": o, "cu_seqlens_q": cu_seqlens_q, "cu_seqlens_k": cu_seqlens_k}
    if lse:
        arrays["LSE"] = kit.empty((q.shape[0], Hq) if varlen else (B, Hq, Sq), "f32", q)
    dims = (B, Hq, Hkv, Sq, Skv, D)
    p = _prefill_kernel(kit, knobs, dims, values, arrays, (Hq, Hkv, Hkv), (Sq, Skv, Skv))
    kit.launch("attention", p, ops._kernel_for, arrays, values, dict(zip(_DIMS, dims)))
    return (o, arrays["LSE"]) if lse else o


def extent(kit, x):
    """Elements from x's first element to one past its last (non-negative strides)."""
    return sum((n - 1) * s for n, s in zip(x.shape, kit.strides(x))) + 1 if all(x.shape) else 0


def _hopper_layout(knobs, values, heads, seqs):
    """The layout knob under which sm_90a's TMA kernel reads these views
    (docs/attention.md, the tensor-map table), or None: varlen as is, dense
    bhsd when each tensor's heads and batches abut, bshd when its batches do
    and every head starts on 16 bytes inside one token row."""
    if knobs["layout"] == "varlen":
        return "varlen"
    D = knobs["head_dim"]
    bhsd = bshd = True
    for t, H, S in zip("qkv", heads, seqs):
        sb, sh, ss = (values[t + x] for x in ("_sb", "_sh", "_ss"))
        bhsd = bhsd and (H == 1 or sh == S * ss) and (values["B"] == 1 or sb == H * S * ss)
        bshd = bshd and (values["B"] == 1 or sb == S * ss) and sh % 8 == 0 and (H - 1) * sh + D <= ss
    return "bhsd" if bhsd else "bshd" if bshd else None


def _prefill_kernel(kit, knobs, dims, values, arrays, heads, seqs):
    """The prepared prefill kernel. A 9.0 device (and the emulator's sm_90a)
    runs sm_90a's TMA + wgmma kernel where its plan takes the knobs and the
    views (tensor maps described by the library; 593 TFLOP/s against
    mma.sync's 248 on the H200); anything else, and path=mma, runs the
    mma.sync kernel, which reads any strides in place."""
    hopper = kit.target == "sm_90a" or (not kit.emu and getattr(kit, "cc", None) == 90)
    if hopper and knobs.get("path", "auto") != "mma":
        aligned = all(x.data_ptr() % 16 == 0 for x in (arrays["Q"], arrays["K"], arrays["V"])
                      if hasattr(x, "data_ptr"))
        layout = _hopper_layout(knobs, values, heads, seqs) if aligned else None
        if layout is not None:
            from ._tmaps import has_maps, tensor_maps
            p = ops._prepare("attention", dict(knobs, layout=layout), dims, "sm_90a")
            if not has_maps(p):
                return p             # the plan refused the knobs: sm_90a's mma.sync kernel
            try:
                tensor_maps(p, values, {n: extent(kit, arrays[n]) for n in ("Q", "K", "V")})
                return p
            except RockeError:
                if knobs.get("path") == "wgmma":
                    raise
    if knobs.get("path") != "wgmma":          # an explicit wgmma elsewhere: the library's refusal names the target
        knobs = dict(knobs, path="mma")
    return ops._prepare("attention", knobs, dims, kit.target)


# ---- the paged KV cache, shared by decode and unified ---------------------------------------------
def _cache_dtype(kit, opname, k_cache, v_cache, dt, kv_dtype):
    """The kv_dtype knob from the caches' dtype: dt's (same), or e4m3 bytes
    (numpy uint8 with kv_dtype='fp8' / 'fp8fnuz'; torch's float8 dtypes)."""
    kd, vd = kit.dtype(k_cache), kit.dtype(v_cache)
    if kd != vd:
        raise RockeError("rocke.ops.%s: k_cache and v_cache dtypes %s and %s differ" % (opname, kd, vd))
    if kd == dt:
        if kv_dtype not in (None, "same"):
            raise RockeError("rocke.ops.%s: kv_dtype=%r but the caches are %s (fp8 caches are uint8 arrays or "
                             "torch float8 tensors)" % (opname, kv_dtype, kd))
        return "same"
    if kd in _FP8 and kv_dtype in (None, _FP8[kd]):
        return _FP8[kd]
    if kd == "u8" and kv_dtype in _FP8.values():
        return kv_dtype
    raise RockeError("rocke.ops.%s: the caches are %s: legal are q's dtype %s, or e4m3 bytes (uint8 with "
                     "kv_dtype='fp8' or 'fp8fnuz')" % (opname, kd, dt))


def _scales(kit, opname, kv, k_scale, v_scale, Hkv, like):
    """fp8 caches: per-KV-head float32 scales (a number is one scale for every head)."""
    if kv == "same":
        if k_scale is not None or v_scale is not None:
            raise RockeError("rocke.ops.%s: k_scale / v_scale are for fp8 caches only" % opname)
        return {}
    out = {}
    for s, name, pname in ((k_scale, "k_scale", "K_scale"), (v_scale, "v_scale", "V_scale")):
        if s is None:
            raise RockeError("rocke.ops.%s: fp8 caches need %s (float32 [Hkv = %d] or a number)" % (opname, name, Hkv))
        if isinstance(s, (int, float)):
            s = kit.full((Hkv,), float(s), like)
        if tuple(s.shape) != (Hkv,) or kit.dtype(s) != "f32":
            raise RockeError("rocke.ops.%s: %s must be float32 [Hkv = %d], got %s %s"
                             % (opname, name, Hkv, kit.dtype(s), tuple(s.shape)))
        out[pname] = s
    return out


def _check_pages(kit, opname, block_table, lens, P, pages, len_name):
    """numpy only (a torch check would synchronise): each sequence's length fits
    its block-table row, every page it uses lies inside the cache."""
    if not kit.emu:
        return
    bt, ln = kit.host(block_table), kit.host(lens)
    for b, n in enumerate(ln):
        n = int(n)
        if n < 0 or n > bt.shape[1] * P:
            raise RockeError("rocke.ops.%s: sequence %d: %s = %d does not fit its block-table row (%d pages of "
                             "%d tokens: the block table is too short)" % (opname, b, len_name, n, bt.shape[1], P))
        for j in range((n + P - 1) // P):
            if not 0 <= int(bt[b, j]) < pages:
                raise RockeError("rocke.ops.%s: sequence %d: block_table[%d][%d] = %d points outside the cache's "
                                 "%d pages" % (opname, b, b, j, int(bt[b, j]), pages))


def _paged_cache(kit, opname, q, k_cache, v_cache, block_table, dt, kv_dtype):
    """(kv_dtype knob, pages, P, Hkv, table columns) of paged caches [pages, P, Hkv, D]."""
    kv = _cache_dtype(kit, opname, k_cache, v_cache, dt, kv_dtype)
    cdt = (kit.dtype(k_cache),)
    for c, name in ((k_cache, "k_cache"), (v_cache, "v_cache")):
        check_array(kit, opname, c, name, 4, cdt, "[pages, page_size, Hkv, D]")
        _dense(kit, opname, c, name)
    if tuple(k_cache.shape) != tuple(v_cache.shape) or k_cache.shape[3] != q.shape[-1]:
        raise RockeError("rocke.ops.%s: k_cache and v_cache must both be [pages, page_size, Hkv, D = %d], got %s "
                         "and %s" % (opname, q.shape[-1], tuple(k_cache.shape), tuple(v_cache.shape)))
    check_array(kit, opname, block_table, "block_table", 2, ("i32",), "int32 [B, pages per sequence]")
    return kv, k_cache.shape[0], k_cache.shape[1], k_cache.shape[2]


# ---- decode ---------------------------------------------------------------------------------------
def attention_decode(q, k_cache, v_cache, block_table, context_lens, *, scale=None, page_size=None,
                     causal=True, window=None, k_scale=None, v_scale=None, kv_dtype=None, device=None, **knobs):
    """The decode step: q [B, Sq, Hq, D] (Sq = 1..8 new tokens, the last Sq of
    each context) over a KV cache of context_lens[b] keys (int32 [B]). Paged:
    k_cache, v_cache [pages, page_size, Hkv, D] with block_table int32 [B, n]
    (page ids); contiguous: block_table None and caches [B, Hkv, CTX, D]. fp8
    caches (uint8 with kv_dtype='fp8' / 'fp8fnuz', or torch float8) take
    float32 k_scale, v_scale [Hkv]. causal (bottom-right) by default; window=L
    or (L, R). Returns O [B, Sq, Hq, D] of q's dtype."""
    op = "attention_decode"
    kit = kit_for(op, [q, k_cache, v_cache, block_table, context_lens], device)
    dt = check_array(kit, op, q, "q", 4, _HALF, "[B, Sq, Hq, D]")
    B, Sq, Hq, D = q.shape
    check_array(kit, op, context_lens, "context_lens", 1, ("i32",), "int32 [B]")
    if context_lens.shape[0] != B:
        raise RockeError("rocke.ops.%s: context_lens has %d entries for B = %d" % (op, context_lens.shape[0], B))
    if block_table is None:
        if page_size not in (None, 0):
            raise RockeError("rocke.ops.%s: page_size = %r needs a block_table" % (op, page_size))
        kv = _cache_dtype(kit, op, k_cache, v_cache, dt, kv_dtype)
        for c, name in ((k_cache, "k_cache"), (v_cache, "v_cache")):
            check_array(kit, op, c, name, 4, (kit.dtype(k_cache),), "[B, Hkv, CTX, D] (contiguous cache)")
            _dense(kit, op, c, name)
        if tuple(k_cache.shape) != tuple(v_cache.shape) or k_cache.shape[0] != B or k_cache.shape[3] != D:
            raise RockeError("rocke.ops.%s: k_cache and v_cache must both be [B = %d, Hkv, CTX, D = %d], got %s "
                             "and %s" % (op, B, D, tuple(k_cache.shape), tuple(v_cache.shape)))
        P, Hkv, Skv = 0, k_cache.shape[1], k_cache.shape[2]
        if kit.emu and max(int(n) for n in kit.host(context_lens)) > Skv:
            raise RockeError("rocke.ops.%s: a context length exceeds the cache's %d tokens" % (op, Skv))
    else:
        kv, pages, P, Hkv = _paged_cache(kit, op, q, k_cache, v_cache, block_table, dt, kv_dtype)
        if page_size not in (None, P):
            raise RockeError("rocke.ops.%s: page_size = %r but the caches hold %d tokens per page"
                             % (op, page_size, P))
        if block_table.shape[0] != B:
            raise RockeError("rocke.ops.%s: block_table has %d rows for B = %d" % (op, block_table.shape[0], B))
        Skv = block_table.shape[1] * P
        _check_pages(kit, op, block_table, context_lens, P, pages, "context_lens[b]")
    if Hq % Hkv:
        raise RockeError("rocke.ops.%s: Hq = %d is not a multiple of Hkv = %d" % (op, Hq, Hkv))
    lr = _window_bounds(window, causal, op)
    knobs = dict(knobs, mode="decode", dtype=dt, head_dim=D, page_size=P, kv_dtype=kv,
                 mask="window" if lr else "causal" if causal else "none")
    o = kit.empty((B, Sq, Hq, D), dt, q)
    arrays = {"Q": kit.contiguous(q), "K_cache": k_cache, "V_cache": v_cache, "block_table": block_table,
              "context_lens": context_lens, "O": o}
    arrays.update(_scales(kit, op, kv, k_scale, v_scale, Hkv, q))
    values = dict(zip(_DIMS, (B, Hq, Hkv, Sq, Skv)), scale=_scale(scale, D))
    if lr:
        values["window_left"], values["window_right"] = lr
    dims = (B, Hq, Hkv, Sq, Skv, D)
    p = ops._prepare("attention", knobs, dims, kit.target)
    # every split the instance has (short sequences leave most of them empty)
    values["num_splits"] = int(p.inst.get("kv_splits"))
    kit.launch(op, p, ops._kernel_for, arrays, values, dict(zip(_DIMS, dims)))
    return o


# ---- unified ----------------------------------------------------------------------------------------
def _check_batch(kit, query_start, kv_lens, total):
    if not kit.emu:
        return
    qs, kl = [int(x) for x in kit.host(query_start)], [int(x) for x in kit.host(kv_lens)]
    if qs[0] != 0 or any(b < a for a, b in zip(qs, qs[1:])) or qs[-1] != total:
        raise RockeError("rocke.ops.unified_attention: query_start must start at 0, not decrease and end at "
                         "q's %d rows; got %s" % (total, qs))
    for b, n in enumerate(kl):
        if qs[b + 1] - qs[b] > n:
            raise RockeError("rocke.ops.unified_attention: sequence %d has %d queries but kv_lens[%d] = %d "
                             "(kv_lens counts the new tokens too)" % (b, qs[b + 1] - qs[b], b, n))


def unified_attention(q, k_cache, v_cache, block_table, query_start, kv_lens, *, scale=None, window=None,
                      softcap=None, sinks=None, alibi_slopes=None, lse=False, k_scale=None, v_scale=None,
                      kv_dtype=None, num_splits=None, device=None, **knobs):
    """One launch for a batch mixing prefill chunks and decodes over one paged
    cache: q [total_q, Hq, D] (sequence b's queries at rows query_start[b] ..
    query_start[b + 1], int32 [B + 1]), the last of its kv_lens[b] keys
    (int32 [B]); k_cache, v_cache [pages, page_size, Hkv, D], block_table
    int32 [B, n]. Causal per sequence; window=L keeps keys >= i_abs - L;
    softcap=c: scores c * tanh(s / c); sinks float32 [Hq] join each row's
    denominator; alibi_slopes float32 [Hq]; fp8 caches as attention_decode.
    Returns O [total_q, Hq, D] (and LSE float32 [total_q, Hq] with lse=True)."""
    op = "unified_attention"
    kit = kit_for(op, [q, k_cache, v_cache, block_table, query_start, kv_lens, sinks, alibi_slopes], device)
    dt = check_array(kit, op, q, "q", 3, _HALF, "[total_q, Hq, D]")
    T, Hq, D = q.shape
    kv, pages, P, Hkv = _paged_cache(kit, op, q, k_cache, v_cache, block_table, dt, kv_dtype)
    B = block_table.shape[0]
    check_array(kit, op, query_start, "query_start", 1, ("i32",), "int32 [B + 1]")
    check_array(kit, op, kv_lens, "kv_lens", 1, ("i32",), "int32 [B]")
    if query_start.shape[0] != B + 1 or kv_lens.shape[0] != B:
        raise RockeError("rocke.ops.%s: block_table has %d rows: query_start needs %d entries and kv_lens %d, "
                         "got %d and %d" % (op, B, B + 1, B, query_start.shape[0], kv_lens.shape[0]))
    if Hq % Hkv:
        raise RockeError("rocke.ops.%s: Hq = %d is not a multiple of Hkv = %d" % (op, Hq, Hkv))
    _check_batch(kit, query_start, kv_lens, T)
    _check_pages(kit, op, block_table, kv_lens, P, pages, "kv_lens[b]")
    if window is not None and not isinstance(window, int):
        raise RockeError("rocke.ops.%s: window is the left bound L (an int; keys >= i - L), got %r" % (op, window))
    knobs = dict(knobs, mode="unified", dtype=dt, head_dim=D, page_size=P, kv_dtype=kv, lse=bool(lse),
                 mask="window" if window is not None else "causal", sinks=sinks is not None,
                 alibi=alibi_slopes is not None, softcap=softcap is not None)
    Skv = block_table.shape[1] * P
    o = kit.empty((T, Hq, D), dt, q)
    arrays = {"Q": kit.contiguous(q), "K_cache": k_cache, "V_cache": v_cache, "block_table": block_table,
              "query_start": query_start, "kv_lens": kv_lens, "O": o}
    for x, name, pname in ((sinks, "sinks", "sinks"), (alibi_slopes, "alibi_slopes", "alibi_slopes")):
        if x is not None:
            check_array(kit, op, x, name, 1, ("f32",), "float32 [Hq]")
            if x.shape[0] != Hq:
                raise RockeError("rocke.ops.%s: %s has %d entries for Hq = %d" % (op, name, x.shape[0], Hq))
            arrays[pname] = x
    arrays.update(_scales(kit, op, kv, k_scale, v_scale, Hkv, q))
    if lse:
        arrays["LSE"] = kit.empty((T, Hq), "f32", q)
    values = dict(zip(_DIMS, (B, Hq, Hkv, T, Skv)), scale=_scale(scale, D))
    if softcap is not None:
        values["softcap"] = float(softcap)
    if window is not None:
        values["window_left"] = window
    dims = (B, Hq, Hkv, T, Skv, D)
    p = ops._prepare("attention", knobs, dims, kit.target)
    splits = int(p.inst.get("kv_splits"))
    if num_splits is not None and not (isinstance(num_splits, int) and 1 <= num_splits <= splits):
        raise RockeError("rocke.ops.%s: num_splits = %r must be in 1..%d (the instance's kv_splits)"
                         % (op, num_splits, splits))
    values["num_splits"] = num_splits or splits
    kit.launch(op, p, ops._kernel_for, arrays, values, dict(zip(_DIMS, dims)))
    return (o, arrays["LSE"]) if lse else o
