"""rocke.ops.kv_append: new tokens' K and V into paged caches (in place), with
rope on the way and e4m3 caches with per-head scales; numpy arrays on the
emulator, CUDA torch tensors on the GPU. Layer: python bindings."""
from . import ops
from ._attention import _cache_dtype, _dense, _scales, check_array, kit_for
from ._lib import RockeError

_DIMS = ("T", "Hq", "Hkv", "D", "pages", "page_size")
_ROPES = ("none", "neox", "gptj")


def _check_slots(kit, slot_mapping, slots):
    if not kit.emu:
        return
    for t, s in enumerate(kit.host(slot_mapping)):
        if int(s) >= slots:
            raise RockeError("rocke.ops.kv_append: slot_mapping[%d] = %d is outside the cache's %d slots (pages x "
                             "page_size; a negative slot skips the token)" % (t, int(s), slots))


def _check_rope(kit, q, positions, cos, sin, T, D, dt):
    check_array(kit, "kv_append", q, "q", 3, (dt,), "[T, Hq, D] (rotated in place)")
    _dense(kit, "kv_append", q, "q")
    if q.shape[0] != T or q.shape[2] != D:
        raise RockeError("rocke.ops.kv_append: q must be [T = %d, Hq, D = %d], got %s" % (T, D, tuple(q.shape)))
    check_array(kit, "kv_append", positions, "positions", 1, ("i32",), "int32 [T]")
    if positions.shape[0] != T:
        raise RockeError("rocke.ops.kv_append: positions has %d entries for T = %d" % (positions.shape[0], T))
    for x, name in ((cos, "cos"), (sin, "sin")):
        check_array(kit, "kv_append", x, name, 2, ("f32",), "float32 [positions, D / 2]")
        _dense(kit, "kv_append", x, name)
        if x.shape[1] != D // 2:
            raise RockeError("rocke.ops.kv_append: %s must be [positions, D / 2 = %d], got %s"
                             % (name, D // 2, tuple(x.shape)))
    rows = min(cos.shape[0], sin.shape[0])
    if kit.emu and T and max(int(p) for p in kit.host(positions)) >= rows:
        raise RockeError("rocke.ops.kv_append: a position reaches past the cos / sin caches' %d rows" % rows)


def kv_append(k, v, k_cache, v_cache, slot_mapping, *, rope="none", q=None, positions=None, cos=None, sin=None,
              k_scale=None, v_scale=None, kv_dtype=None, device=None, **knobs):
    """Writes token t's k[t], v[t] ([T, Hkv, D]) into k_cache, v_cache [pages,
    page_size, Hkv, D] at slot slot_mapping[t] (int64 [T], page * page_size +
    offset; negative: skipped). rope='neox' | 'gptj' rotates K on the way and q
    [T, Hq, D] in place by cos, sin (float32 [rows, D / 2]) at positions (int32
    [T]). fp8 caches (uint8 with kv_dtype='fp8' / 'fp8fnuz', or torch float8)
    store x / scale with float32 k_scale, v_scale [Hkv]. Returns None: the
    caches (and q) are updated in place."""
    op = "kv_append"
    if rope not in _ROPES:
        raise RockeError("rocke.ops.kv_append: rope = %r (legal: %s)" % (rope, ", ".join(_ROPES)))
    kit = kit_for(op, [k, v, k_cache, v_cache, slot_mapping, q, positions, cos, sin], device)
    dt = check_array(kit, op, k, "k", 3, ("f16", "bf16", "f32"), "[T, Hkv, D]")
    if check_array(kit, op, v, "v", 3, (dt,), "[T, Hkv, D]") and tuple(v.shape) != tuple(k.shape):
        raise RockeError("rocke.ops.kv_append: k and v shapes %s and %s differ" % (tuple(k.shape), tuple(v.shape)))
    T, Hkv, D = k.shape
    kv = _cache_dtype(kit, op, k_cache, v_cache, dt, kv_dtype)
    for c, name in ((k_cache, "k_cache"), (v_cache, "v_cache")):
        check_array(kit, op, c, name, 4, (kit.dtype(k_cache),), "[pages, page_size, Hkv, D]")
        _dense(kit, op, c, name)
    if tuple(k_cache.shape) != tuple(v_cache.shape) or tuple(k_cache.shape[2:]) != (Hkv, D):
        raise RockeError("rocke.ops.kv_append: k_cache and v_cache must both be [pages, page_size, Hkv = %d, D = %d], "
                         "got %s and %s" % (Hkv, D, tuple(k_cache.shape), tuple(v_cache.shape)))
    pages, P = k_cache.shape[0], k_cache.shape[1]
    check_array(kit, op, slot_mapping, "slot_mapping", 1, ("i64",), "int64 [T]")
    if slot_mapping.shape[0] != T:
        raise RockeError("rocke.ops.kv_append: slot_mapping has %d entries for T = %d" % (slot_mapping.shape[0], T))
    _check_slots(kit, slot_mapping, pages * P)
    arrays = {"K": kit.contiguous(k), "V": kit.contiguous(v), "Kc": k_cache, "Vc": v_cache,
              "slot_mapping": slot_mapping}
    Hq = Hkv
    if rope != "none":
        _check_rope(kit, q, positions, cos, sin, T, D, dt)
        Hq = q.shape[1]
        arrays.update(Q=q, Pos=positions, Cos=cos, Sin=sin)
    elif q is not None or positions is not None:
        raise RockeError("rocke.ops.kv_append: q and positions are for rope='neox' or 'gptj'")
    arrays.update({n.lower(): a for n, a in _scales(kit, op, kv, k_scale, v_scale, Hkv, k).items()})
    dims = (T, Hq, Hkv, D, pages, P)
    p = ops._prepare("kv_append", dict(knobs, dtype=dt, rope=rope, kv_dtype=kv), dims, kit.target)
    kit.launch(op, p, ops._kernel_for, arrays, dict(zip(_DIMS[:4], dims[:4])), dict(zip(_DIMS, dims)))
