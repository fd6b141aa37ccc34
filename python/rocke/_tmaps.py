"""The tensor maps (NVIDIA TMA) a kernel's signature asks for, described by
the library (rk_problem_tensormap) for the call's own shape, scalar values
(strides, leading dimensions) and buffer extents; one place for every family
(gemm 16-bit and fp8, attention, conv). Every map comes as the N-D description
(rk_problem_tensormap_nd: rank 2 for the matrix maps, rank 4 with traversal
strides for conv's pixel boxes). The launcher encodes each map over its
buffer's address: cuTensorMapEncodeTiled on CUDA (rocke/_cuda.py), the
emulator's encoder on numpy (rocke/_emu.py). Layer: python bindings."""
import ctypes
from ctypes import POINTER, c_int, c_uint32, c_uint64

from . import _shape_api
from ._lib import check, lib


class RkProblemTmapNd(ctypes.Structure):
    """rk_problem_tmap_nd: every array innermost first (dims[rank],
    strides_bytes[rank - 1], box[rank], elem_strides[rank])."""
    _fields_ = [("buf", c_uint32), ("elem", c_int), ("rank", c_uint32), ("dims", c_uint64 * 5),
                ("strides_bytes", c_uint64 * 4), ("box", c_uint32 * 5), ("elem_strides", c_uint32 * 5),
                ("swizzle_bytes", c_uint32)]


lib.rk_problem_tensormap_nd.restype = c_int
lib.rk_problem_tensormap_nd.argtypes = [POINTER(_shape_api.RkProblem), c_uint32, POINTER(RkProblemTmapNd)]


def has_maps(p):
    return any(role == "tensormap" for _, _, _, role, _ in p.sig)


def tensor_maps(p, values=None, extents=None):
    """{signature index: RkProblemTmapNd} of p's tensormap parameters, None when
    it has none. values {scalar name: value} overrides the problem's own
    scalars (a view's strides: attention's maps follow them); extents
    {pointer name: elements from the first to one past the last} the
    buffer sizes (a view over a larger tensor). Asked of the library once per
    distinct (values, extents) of p and kept on p; a view TMA cannot follow
    raises the library's error naming the stride and the rule."""
    if not has_maps(p):
        return None
    mapped = {layout for _, _, _, role, layout in p.sig if role == "tensormap"}   # the buffers maps view
    values = values or {}
    extents = {n: e for n, e in (extents or {}).items() if n in mapped}
    key = (tuple(sorted(values.items())), tuple(sorted(extents.items())))
    cache = p.__dict__.setdefault("tmap_cache", {})
    maps = cache.get(key)
    if maps is None:
        prob = _shape_api.Problem(p.inst._buf, p.inst.family, p.dims, 1)
        try:
            for i, (name, ptr, _, role, _) in enumerate(p.sig):
                if ptr and name in extents:
                    prob.p.buf[i].count = extents[name]
                elif not ptr and role != "tensormap" and name in values and _shape_api.ND:
                    prob.p.scalar[i] = values[name]
            maps = {}
            for i, (_, _, _, role, _) in enumerate(p.sig):
                if role == "tensormap":
                    t = RkProblemTmapNd()
                    check(lib.rk_problem_tensormap_nd(ctypes.byref(prob.p), i, ctypes.byref(t)),
                          "tensor map %s of %s" % (p.sig[i][0], p.inst.name))
                    maps[i] = t
        finally:
            prob.free()
        cache[key] = maps
    return maps
