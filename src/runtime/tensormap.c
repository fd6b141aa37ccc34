/* rocke — tensor maps for NVIDIA TMA: rk_tensormap_encode_2d checks a 2-D
 * tiled description against the driver's documented rules (so a bad one is
 * refused with the rule it breaks, not a bare CUDA_ERROR_INVALID_VALUE) and
 * hands it to the backend (cuTensorMapEncodeTiled on CUDA). Layer: runtime. */
#include "runtime_int.h"

/* Bytes of an element TMA can move; 0 = not an element type for tensor maps. */
static uint32_t elem_bytes(rk_scalar s) {
    switch (s) {
    case RK_S_I8:
    case RK_S_FP8E4M3:
    case RK_S_BF8E5M2:
    case RK_S_FP8E4M3FNUZ:
    case RK_S_BF8E5M2FNUZ: return 1;
    case RK_S_I16:
    case RK_S_F16:
    case RK_S_BF16: return 2;
    case RK_S_I32:
    case RK_S_F32: return 4;
    case RK_S_I64:
    case RK_S_F64: return 8;
    case RK_S_NONE:
    case RK_S_I1:
    case RK_S_I4:
    case RK_S__COUNT: return 0;
    }
    return 0;
}

static uint32_t swizzle_span(rk_tensormap_swizzle s) {
    switch (s) {
    case RK_TENSORMAP_SWIZZLE_NONE: return 0;
    case RK_TENSORMAP_SWIZZLE_32B: return 32;
    case RK_TENSORMAP_SWIZZLE_64B: return 64;
    case RK_TENSORMAP_SWIZZLE_128B: return 128;
    }
    return 0;
}

#define BAD(...) rk_fail(RK_ERR_INVALID, "rk_tensormap_encode_2d: " __VA_ARGS__)

/* What every rank shares: an element type with a tensor-map form, a swizzle mode, a 16-byte aligned base;
 * fn names the caller in the message. */
static rk_status check_common(const rt_tmap2d *t, const char *fn) {
    if (!t->elem_bytes)
        return rk_fail(RK_ERR_INVALID, "%s: element type %s has no tensor-map form (legal: i8, fp8/bf8 kinds, i16, "
                       "f16, bf16, i32, f32, i64, f64)", fn,
                       (unsigned)t->elem < RK_S__COUNT ? rk_scalar_name(t->elem) : "?");
    if ((unsigned)t->swizzle > RK_TENSORMAP_SWIZZLE_128B)
        return rk_fail(RK_ERR_INVALID, "%s: swizzle %d is not one of NONE, 32B, 64B, 128B", fn, (int)t->swizzle);
    if (!t->base || t->base % 16)
        return rk_fail(RK_ERR_INVALID, "%s: the base address 0x%llx must be a non-zero multiple of 16", fn,
                       (unsigned long long)t->base);
    return RK_OK;
}

static rk_status check(const rt_tmap2d *t) {
    rk_status st = check_common(t, "rk_tensormap_encode_2d");
    if (st) return st;
    if (!t->rows || !t->cols || t->rows > (1ull << 32) || t->cols > (1ull << 32))
        return BAD("a %llu x %llu tensor: each dimension must be in 1..2^32", (unsigned long long)t->rows,
                   (unsigned long long)t->cols);
    uint64_t row_bytes = t->cols * t->elem_bytes;
    if (t->row_stride % 16 || t->row_stride >= (1ull << 40) || t->row_stride < row_bytes)
        return BAD("the row stride of %llu bytes must be a multiple of 16 below 2^40 and at least a row (%llu x %u "
                   "bytes = %llu)", (unsigned long long)t->row_stride, (unsigned long long)t->cols, t->elem_bytes,
                   (unsigned long long)row_bytes);
    if (!t->box_rows || !t->box_cols || t->box_rows > 256 || t->box_cols > 256)
        return BAD("a %u x %u box: each side must be in 1..256 elements", t->box_rows, t->box_cols);
    uint32_t box_bytes = t->box_cols * t->elem_bytes, span = swizzle_span(t->swizzle);
    if (box_bytes % 16)
        return BAD("a box row of %u x %u bytes = %u bytes must be a multiple of 16", t->box_cols, t->elem_bytes,
                   box_bytes);
    if (span && box_bytes > span)
        return BAD("a box row of %u bytes is wider than the %u-byte swizzle span", box_bytes, span);
    return RK_OK;
}

#undef BAD
#define BAD(...) rk_fail(RK_ERR_INVALID, "rk_tensormap_encode_nd: " __VA_ARGS__)

static rk_status check_nd(const rt_tmap2d *t) {
    rk_status st = check_common(t, "rk_tensormap_encode_nd");
    if (st) return st;
    if (!t->rank || t->rank > 5) return BAD("rank %u is not 1..5", t->rank);
    for (uint32_t i = 0; i < t->rank; i++) {
        if (!t->dim[i] || t->dim[i] > (1ull << 32))
            return BAD("dimension %u has %llu elements: each must be in 1..2^32", i, (unsigned long long)t->dim[i]);
        if (i && (t->stride[i] % 16 || t->stride[i] >= (1ull << 40)))
            return BAD("the stride of dimension %u, %llu bytes, must be a multiple of 16 below 2^40", i,
                       (unsigned long long)t->stride[i]);
        if (!t->box[i] || t->box[i] > 256) return BAD("box side %u is %u elements: each must be in 1..256", i, t->box[i]);
        if (!t->estr[i] || t->estr[i] > 8)
            return BAD("the traversal stride of dimension %u is %u: each must be in 1..8", i, t->estr[i]);
    }
    uint32_t box_bytes = t->box[0] * t->elem_bytes, span = swizzle_span(t->swizzle);
    if (box_bytes % 16) return BAD("a box row of %u bytes must be a multiple of 16", box_bytes);
    if (span && box_bytes > span) return BAD("a box row of %u bytes is wider than the %u-byte swizzle span", box_bytes, span);
    return RK_OK;
}

rk_status rk_tensormap_encode_nd(rk_device *d, rk_devptr base, rk_scalar elem, uint32_t rank, const uint64_t *dims,
                                 const uint64_t *strides_bytes, const uint32_t *box, const uint32_t *elem_strides,
                                 rk_tensormap_swizzle swizzle, void *out) {
    if (!d || !out || !dims || !box || !elem_strides || (rank > 1 && !strides_bytes))
        return BAD("NULL device, output or array");
    if (!d->be->tensormap_encode || (d->info.kind == RK_DEVICE_CUDA && d->info.cc_major < 9))
        return rk_fail(RK_ERR_UNSUPPORTED, "tensor maps (TMA) are not supported on this device (%s, %s %s): they "
                       "need a CUDA device of compute capability 9.0 or later", d->name,
                       rk_device_kind_name(d->info.kind), d->arch);
    rt_tmap2d t = {.base = base, .elem = elem, .elem_bytes = (unsigned)elem < RK_S__COUNT ? elem_bytes(elem) : 0,
                   .swizzle = swizzle, .rank = rank};
    for (uint32_t i = 0; i < rank && i < 5; i++) {
        t.dim[i] = dims[i], t.box[i] = box[i], t.estr[i] = elem_strides[i];
        t.stride[i] = i ? strides_bytes[i - 1] : 0;
    }
    rk_status s = check_nd(&t);
    return s != RK_OK ? s : d->be->tensormap_encode(d, &t, out);
}
#undef BAD
#define BAD(...) rk_fail(RK_ERR_INVALID, "rk_tensormap_encode_2d: " __VA_ARGS__)

rk_status rk_tensormap_encode_2d(rk_device *d, rk_devptr base, rk_scalar elem, uint64_t rows, uint64_t cols,
                                 uint64_t row_stride_bytes, uint32_t box_rows, uint32_t box_cols,
                                 rk_tensormap_swizzle swizzle, void *out) {
    if (!d || !out) return BAD("NULL device or output");
    if (!d->be->tensormap_encode || (d->info.kind == RK_DEVICE_CUDA && d->info.cc_major < 9))
        return rk_fail(RK_ERR_UNSUPPORTED, "tensor maps (TMA) are not supported on this device (%s, %s %s): they "
                       "need a CUDA device of compute capability 9.0 or later", d->name,
                       rk_device_kind_name(d->info.kind), d->arch);
    rt_tmap2d t = {.base = base, .elem = elem, .elem_bytes = (unsigned)elem < RK_S__COUNT ? elem_bytes(elem) : 0,
                   .rows = rows, .cols = cols, .row_stride = row_stride_bytes, .box_rows = box_rows,
                   .box_cols = box_cols, .swizzle = swizzle};
    rk_status s = check(&t);
    return s != RK_OK ? s : d->be->tensormap_encode(d, &t, out);
}
