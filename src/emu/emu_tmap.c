/* rocke — the emulator's tensor maps: rk_emu_tensormap_encode_2d writes the
 * 128-byte value of a tensormap parameter and emu_tmap_decode reads it back
 * for tile.tma_load_2d, checking cuTensorMapEncodeTiled's rules. Layer: emu. */
#include <stdio.h>

#include "emu_int.h"

/* Layout v1, little-endian (the rest is zero):
 *   0 u32 magic "RKTM"   4 u8 version 1   5 u8 rank 2   6 u8 element bytes
 *   7 u8 swizzle (CUtensorMapSwizzle numbering: 0 none, 1 32B, 2 64B, 3 128B)
 *   8 u64 base   16 u64 dims[2] (innermost first)   32 u64 row stride (bytes)
 *  40 u32 box[2] (innermost first)   48 u32 element strides[2] (1)
 *  56 u8 interleave (0 none)   57 u8 out-of-bounds fill (0 zeros)
 * Layout v2 (rk_emu_tensormap_encode_nd, any rank 1..5), the same up to byte 57, then:
 *  16 u64 dims[5]   64 u64 strides of dimensions 1..4 (bytes)   96 u16 box[5]   106 u8 element strides[5] */
enum { TM_MAGIC = 0x4d544b52u, TM_VERSION = 1, TM_VERSION_ND = 2, TM_RANK_MAX = 5 };

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static uint32_t swizzle_code(uint32_t bytes) { return bytes == 32 ? 1 : bytes == 64 ? 2 : bytes == 128 ? 3 : 0; }
static uint32_t swizzle_span(uint32_t code) { return code ? 16u << code : 0; }

/* cuTensorMapEncodeTiled's rules for a 2-D map; false with the reason. */
static bool check(const emu_tmap *t, char *why, size_t n) {
    if (t->eb != 1 && t->eb != 2 && t->eb != 4 && t->eb != 8)
        return snprintf(why, n, "element size %u bytes is not 1, 2, 4 or 8", t->eb), false;
    if (!t->base || t->base % 16)
        return snprintf(why, n, "the base address 0x%llx must be a non-zero multiple of 16", (unsigned long long)t->base), false;
    if (!t->rows || !t->cols || t->rows > (1ull << 32) || t->cols > (1ull << 32))
        return snprintf(why, n, "a %llu x %llu tensor: each dimension must be in 1..2^32", (unsigned long long)t->rows,
                        (unsigned long long)t->cols), false;
    if (t->row_stride % 16 || t->row_stride >= (1ull << 40) || t->row_stride < t->cols * t->eb)
        return snprintf(why, n, "the row stride of %llu bytes must be a multiple of 16 below 2^40 and at least a row "
                        "(%llu bytes)", (unsigned long long)t->row_stride, (unsigned long long)(t->cols * t->eb)), false;
    if (!t->box_rows || !t->box_cols || t->box_rows > 256 || t->box_cols > 256)
        return snprintf(why, n, "a %u x %u box: each side must be in 1..256 elements", t->box_rows, t->box_cols), false;
    uint32_t row = t->box_cols * t->eb;
    if (row % 16) return snprintf(why, n, "a box row of %u bytes must be a multiple of 16", row), false;
    if (t->swizzle && row > t->swizzle)
        return snprintf(why, n, "a box row of %u bytes is wider than the %u-byte swizzle span", row, t->swizzle), false;
    return true;
}

/* The same rules for any rank (the 2-D fields mirror dimensions 0 and 1 when rank is 2). */
static bool check_nd(const emu_tmap *t, char *why, size_t n) {
    if (t->eb != 1 && t->eb != 2 && t->eb != 4 && t->eb != 8)
        return snprintf(why, n, "element size %u bytes is not 1, 2, 4 or 8", t->eb), false;
    if (!t->rank || t->rank > TM_RANK_MAX) return snprintf(why, n, "rank %u is not 1..5", t->rank), false;
    if (!t->base || t->base % 16)
        return snprintf(why, n, "the base address 0x%llx must be a non-zero multiple of 16", (unsigned long long)t->base), false;
    for (uint32_t i = 0; i < t->rank; i++) {
        if (!t->dim[i] || t->dim[i] > (1ull << 32))
            return snprintf(why, n, "dimension %u has %llu elements: each must be in 1..2^32", i,
                            (unsigned long long)t->dim[i]), false;
        if (i && (t->stride[i] % 16 || t->stride[i] >= (1ull << 40)))
            return snprintf(why, n, "the stride of dimension %u, %llu bytes, must be a multiple of 16 below 2^40", i,
                            (unsigned long long)t->stride[i]), false;
        if (!t->box[i] || t->box[i] > 256)
            return snprintf(why, n, "box side %u is %u elements: each must be in 1..256", i, t->box[i]), false;
        if (!t->estr[i] || t->estr[i] > 8)
            return snprintf(why, n, "the traversal stride of dimension %u is %u: each must be in 1..8", i, t->estr[i]),
                   false;
    }
    if (t->rank > 1 && t->stride[1] < t->dim[0] * t->eb)
        return snprintf(why, n, "the stride of dimension 1, %llu bytes, is shorter than a row (%llu bytes)",
                        (unsigned long long)t->stride[1], (unsigned long long)(t->dim[0] * t->eb)), false;
    if (t->estr[0] != 1)
        return snprintf(why, n, "a traversal stride of %u along the innermost dimension: only 1 is emulated", t->estr[0]),
               false;
    uint32_t row = t->box[0] * t->eb;
    if (row % 16) return snprintf(why, n, "a box row of %u bytes must be a multiple of 16", row), false;
    if (t->swizzle && row > t->swizzle)
        return snprintf(why, n, "a box row of %u bytes is wider than the %u-byte swizzle span", row, t->swizzle), false;
    return true;
}

rk_status rk_emu_tensormap_encode_nd(uint64_t base, uint32_t elem_bytes, uint32_t rank, const uint64_t *dims,
                                     const uint64_t *strides_bytes, const uint32_t *box, const uint32_t *elem_strides,
                                     uint32_t swizzle_bytes, void *out) {
    if (!out || !dims || !box || !elem_strides || (rank > 1 && !strides_bytes))
        return rk_fail(RK_ERR_INVALID, "rk_emu_tensormap_encode_nd: NULL argument");
    if (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128)
        return rk_fail(RK_ERR_INVALID, "rk_emu_tensormap_encode_nd: swizzle %u bytes is not 0, 32, 64 or 128",
                       swizzle_bytes);
    emu_tmap t = {.base = base, .eb = elem_bytes, .swizzle = swizzle_bytes, .rank = rank};
    for (uint32_t i = 0; i < rank && i < TM_RANK_MAX; i++) {
        t.dim[i] = dims[i], t.box[i] = box[i], t.estr[i] = elem_strides[i];
        t.stride[i] = i ? strides_bytes[i - 1] : elem_bytes;
    }
    char why[200];
    if (!check_nd(&t, why, sizeof why)) return rk_fail(RK_ERR_INVALID, "rk_emu_tensormap_encode_nd: %s", why);
    uint8_t m[128] = {0};
    put32(m, TM_MAGIC);
    m[4] = TM_VERSION_ND;
    m[5] = (uint8_t)rank;
    m[6] = (uint8_t)elem_bytes;
    m[7] = (uint8_t)swizzle_code(swizzle_bytes);
    put64(m + 8, base);
    for (uint32_t i = 0; i < rank; i++) {
        put64(m + 16 + 8 * i, t.dim[i]);
        if (i) put64(m + 64 + 8 * (i - 1), t.stride[i]);
        put16(m + 96 + 2 * i, (uint16_t)t.box[i]);
        m[106 + i] = (uint8_t)t.estr[i];
    }
    memcpy(out, m, sizeof m);
    return RK_OK;
}

rk_status rk_emu_tensormap_encode_2d(uint64_t base, uint32_t elem_bytes, uint64_t rows, uint64_t cols,
                                     uint64_t row_stride_bytes, uint32_t box_rows, uint32_t box_cols,
                                     uint32_t swizzle_bytes, void *out) {
    if (!out) return rk_fail(RK_ERR_INVALID, "rk_emu_tensormap_encode_2d: NULL output");
    if (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128)
        return rk_fail(RK_ERR_INVALID, "rk_emu_tensormap_encode_2d: swizzle %u bytes is not 0, 32, 64 or 128",
                       swizzle_bytes);
    emu_tmap t = {.base = base, .cols = cols, .rows = rows, .row_stride = row_stride_bytes, .box_cols = box_cols,
                  .box_rows = box_rows, .eb = elem_bytes, .swizzle = swizzle_bytes};
    char why[200];
    if (!check(&t, why, sizeof why)) return rk_fail(RK_ERR_INVALID, "rk_emu_tensormap_encode_2d: %s", why);
    uint8_t m[128] = {0};
    put32(m, TM_MAGIC);
    m[4] = TM_VERSION;
    m[5] = 2;
    m[6] = (uint8_t)elem_bytes;
    m[7] = (uint8_t)swizzle_code(swizzle_bytes);
    put64(m + 8, base);
    put64(m + 16, cols);
    put64(m + 24, rows);
    put64(m + 32, row_stride_bytes);
    put32(m + 40, box_cols);
    put32(m + 44, box_rows);
    put32(m + 48, 1);
    put32(m + 52, 1);
    memcpy(out, m, sizeof m);
    return RK_OK;
}

bool emu_tmap_decode(const void *map, emu_tmap *out, char *why, size_t n) {
    const uint8_t *m = map;
    if (get32(m) != TM_MAGIC)
        return snprintf(why, n, "the tensor map was not made for the emulator (rk_tensormap_encode_2d on an emulator "
                        "device, or rk_emu_tensormap_encode_2d; a CUDA driver's CUtensorMap is opaque)"), false;
    if (m[7] > 3) return snprintf(why, n, "tensor map swizzle code %u is not 0..3", m[7]), false;
    if (m[56] || m[57])
        return snprintf(why, n, "interleave %u / out-of-bounds fill %u: only none / zeros is emulated", m[56], m[57]),
               false;
    if (m[4] == TM_VERSION_ND) {
        *out = (emu_tmap){.base = get64(m + 8), .eb = m[6], .swizzle = swizzle_span(m[7]), .rank = m[5]};
        for (uint32_t i = 0; i < out->rank && i < TM_RANK_MAX; i++) {
            out->dim[i] = get64(m + 16 + 8 * i);
            out->stride[i] = i ? get64(m + 64 + 8 * (i - 1)) : out->eb;
            out->box[i] = get16(m + 96 + 2 * i);
            out->estr[i] = m[106 + i];
        }
        if (out->rank == 2) {   /* the 2-D fields, for the 2-D ops */
            out->cols = out->dim[0], out->rows = out->dim[1], out->row_stride = out->stride[1];
            out->box_cols = out->box[0], out->box_rows = out->box[1];
            if (out->estr[1] != 1)
                return snprintf(why, n, "element strides %u, %u: only 1 is emulated for a 2-D map", out->estr[0],
                                out->estr[1]), false;
        }
        return check_nd(out, why, n);
    }
    if (m[4] != TM_VERSION || m[5] != 2)
        return snprintf(why, n, "tensor map version %u rank %u: only version 1 rank 2 and version 2 exist", m[4], m[5]),
               false;
    if (get32(m + 48) != 1 || get32(m + 52) != 1)
        return snprintf(why, n, "element strides %u, %u: only 1 is emulated", get32(m + 48), get32(m + 52)), false;
    *out = (emu_tmap){.base = get64(m + 8), .cols = get64(m + 16), .rows = get64(m + 24), .row_stride = get64(m + 32),
                      .box_cols = get32(m + 40), .box_rows = get32(m + 44), .eb = m[6], .swizzle = swizzle_span(m[7]),
                      .rank = 2};
    out->dim[0] = out->cols, out->dim[1] = out->rows, out->stride[0] = out->eb, out->stride[1] = out->row_stride;
    out->box[0] = out->box_cols, out->box[1] = out->box_rows, out->estr[0] = out->estr[1] = 1;
    return check(out, why, n);
}
