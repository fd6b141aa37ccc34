/* rocke — tile helpers: realigned views. A per-column tensor (gamma, beta)
 * read at the offsets of a split row view sits at another alignment than
 * that row whenever the row length is not a multiple of vec; rather than
 * reading it element by element, each chunk is the window of two aligned
 * vectors of its own split view that starts at the run-time shift between
 * the two views (a barrel shifter: one select of two static shuffles per
 * bit of the shift). Layer: tile. */
#include "row_int.h"

rk_tile_row rk_tile_row_view_realigned(rk_kernel *k, rk_value ptr, rk_scalar elem, rk_value len, uint32_t vec,
                                       rk_tail_mode tail, const rk_tile_row *like) {
    rk_value zero = rk_const_i32(k, 0), yes = rk_const_bool(k, true);
    rk_tile_row r = rk_tile_row_view_split(k, ptr, elem, zero, zero, len, yes, vec, tail, NULL, 0);
    if (vec < 2) return r;
    /* x's offset off is element off - like.lo of the tensor, element
     * off - like.lo + r.lo of this view: off + delta */
    rk_value delta = rk_build_sub(k, r.lo, like->lo);
    r.realign = true;
    r.wnd = rk_build_and(k, delta, rk_const_i32(k, (int32_t)vec - 1));
    r.adjust = rk_build_sub(k, delta, r.wnd);
    r.vec_ok = yes;
    return r;
}

/* Elements [t, t + vec) of a || b, t in [0, vec) at run time: the largest
 * step first, each stage keeping the elements the smaller ones may still
 * need (vec + s - 1 after the step of s). */
static rk_value window(rk_kernel *k, rk_value a, rk_value b, rk_value t, uint32_t vec) {
    int32_t lo[32], hi[32];
    for (uint32_t i = 0; i < 2 * vec; i++) lo[i] = (int32_t)i;
    rk_value cur = rk_build_vshuffle(k, a, b, lo, 2 * vec);
    for (uint32_t s = vec / 2; s >= 1; s /= 2) {
        uint32_t w = vec + s - 1;
        for (uint32_t i = 0; i < w; i++) hi[i] = (int32_t)(i + s);
        rk_value up = rk_build_vshuffle(k, cur, cur, hi, w);
        rk_value keep = rk_build_vshuffle(k, cur, cur, lo, w);
        rk_value bit = rk_build_and(k, t, rk_const_i32(k, (int32_t)s));
        rk_value take = rk_build_cmp(k, "ne", bit, rk_const_i32(k, 0));
        cur = rk_build_select(k, take, up, keep);
    }
    return cur;
}

void rk_tile_row_load_realigned(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, double fill,
                                rk_value *out) {
    rk_tile_row own = *r;
    own.realign = false;
    for (uint32_t c = 0; c < n; c++) {
        rk_value ab[2], v[2];
        ab[0] = rk_build_add(k, offs[c], r->adjust);
        ab[1] = rk_build_add(k, ab[0], rk_const_i32(k, (int32_t)r->vec));
        rk_tile_row_load(k, &own, ab, 2, fill, v);
        out[c] = window(k, v[0], v[1], r->wnd, r->vec);
    }
}
