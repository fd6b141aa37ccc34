/* rocke — tile helpers: loads of a view that shares another view's split
 * but not its alignment (LayerNorm's gamma and beta under x's shift). Each
 * chunk is assembled from the two aligned vectors around it by a constant
 * shuffle, chosen by a branch tree on the view's skew (uniform per row), so
 * every access is a full-width aligned vector. Layer: tile. */
#include "rocke/tile.h"
#include "../base/base_int.h"

static rk_value ci(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

rk_value rk_tile_row_skew(rk_kernel *k, const rk_tile_row *r) {
    if (r->vec == 1) return ci(k, 0);
    uint32_t esize = rk_tile_elem_bytes(r->elem), lg = 0;
    while ((1u << lg) < esize) lg++;
    rk_value addr = rk_build_ptrtoint(k, r->base);
    rk_value lowmask = rk_const_i64(k, (int64_t)r->vec * esize - 1);
    rk_value low = rk_build_and(k, addr, lowmask);
    rk_value sh = rk_const_i64(k, lg);
    rk_value elems = rk_build_lshr(k, low, sh);
    return rk_build_trunc(k, elems, RK_T_I32);
}

/* Both aligned vectors of every chunk from first to last inside [lo, len):
 * [off - skew, off - skew + vec), and the next one unless skew is 0. */
rk_value rk_tile_row_skew_ok(rk_kernel *k, const rk_tile_row *r, rk_value skew, rk_value first, rk_value last) {
    rk_value start = rk_build_sub(k, first, skew);
    rk_value lo_ok = rk_build_cmp(k, "ge", start, r->lo);
    rk_value zero = ci(k, 0), vc = ci(k, (int32_t)r->vec);
    rk_value skewed = rk_build_cmp(k, "ne", skew, zero);
    rk_value extra = rk_build_select(k, skewed, vc, zero);
    rk_value from = rk_build_sub(k, last, skew);
    rk_value end1 = rk_build_add(k, from, vc);
    rk_value end = rk_build_add(k, end1, extra);
    rk_value hi_ok = rk_build_cmp(k, "le", end, r->len);
    return rk_build_and(k, lo_ok, hi_ok);
}

static rk_value aligned_vec(rk_kernel *k, const rk_tile_row *r, rk_value off) {
    if (r->tail == RK_TAIL_BUFFER) {
        /* the buffer view starts at the row's first element (lo) */
        rk_value rel = rk_build_sub(k, off, r->lo);
        rk_value voff = rk_build_mul(k, rel, ci(k, (int32_t)rk_tile_elem_bytes(r->elem)));
        rk_value soff = ci(k, 0);
        return rk_load_buffer(k, r->rsrc, voff, soff, (rk_type){r->elem}, r->vec);
    }
    return rk_load_global(k, r->base, off, r->vec);
}

/* The chunk at off for a skew known to be s: elements s .. s+vec-1 of the
 * two aligned vectors from off - s. */
static rk_value chunk_at_skew(rk_kernel *k, const rk_tile_row *r, rk_value off, uint32_t s) {
    rk_value a_off = s ? rk_build_sub(k, off, ci(k, (int32_t)s)) : off;
    rk_value a = aligned_vec(k, r, a_off);
    if (!s) return a;
    rk_value b_off = rk_build_add(k, a_off, ci(k, (int32_t)r->vec));
    rk_value b = aligned_vec(k, r, b_off);
    int32_t mask[16];
    for (uint32_t i = 0; i < r->vec; i++) mask[i] = (int32_t)(s + i);
    return rk_build_vshuffle(k, a, b, mask, r->vec);
}

/* The chunk at off for a skew in [lo, hi): halve the range until one value
 * is left (a tree per view: one for gamma and beta together made ptxas
 * hold all four vectors at once and spill, sm_90a at 32 registers). */
static rk_value chunk_tree(rk_kernel *k, const rk_tile_row *r, rk_value skew, rk_value off, uint32_t lo,
                           uint32_t hi) {
    if (hi - lo == 1) return chunk_at_skew(k, r, off, lo);
    uint32_t mid = (lo + hi) / 2;
    rk_type t = rk_type_vec(k, (rk_type){r->elem}, r->vec);
    rk_value out, v;
    rk_value below = rk_build_cmp(k, "lt", skew, ci(k, (int32_t)mid));
    rk_if_else_begin(k, below, 1, &t, &out);
    v = chunk_tree(k, r, skew, off, lo, mid);
    rk_else(k, &v, 1);
    v = chunk_tree(k, r, skew, off, mid, hi);
    rk_if_end(k, &v, 1);
    return out;
}

void rk_tile_row_load_skewed_whole(rk_kernel *k, const rk_tile_row *r, rk_value skew, const rk_value *offs,
                                   uint32_t n, rk_value *out) {
    if (r->vec == 1) {
        rk_tile_row_load_whole(k, r, offs, n, out);
        return;
    }
    for (uint32_t c = 0; c < n; c++) out[c] = chunk_tree(k, r, skew, offs[c], 0, r->vec);
}

void rk_tile_row_load_skewed(rk_kernel *k, const rk_tile_row *r, rk_value skew, const rk_value *offs, uint32_t n,
                             double fill, rk_value *out) {
    RK_ASSERT(n >= 1 && n <= RK_TILE_MAX_CHUNKS, "rk_tile_row_load_skewed: 1..RK_TILE_MAX_CHUNKS chunks");
    RK_ASSERT(r->shifted, "rk_tile_row_load_skewed: a split view");
    rk_type types[RK_TILE_MAX_CHUNKS];
    rk_value y[RK_TILE_MAX_CHUNKS];
    rk_type ct = r->vec > 1 ? rk_type_vec(k, (rk_type){r->elem}, r->vec) : (rk_type){r->elem};
    for (uint32_t c = 0; c < n; c++) types[c] = ct;
    rk_value ok = rk_tile_row_skew_ok(k, r, skew, offs[0], offs[n - 1]);
    rk_if_else_begin(k, ok, n, types, out);
    rk_tile_row_load_skewed_whole(k, r, skew, offs, n, y);
    rk_else(k, y, n);
    rk_tile_row_load(k, r, offs, n, fill, y);   /* the row's ends: chunk by chunk */
    rk_if_end(k, y, n);
}
