/* rocke — eight 2-byte elements at any element address, read as two
 * aligned 16-byte loads and a shift in registers. A 16-bit matrix whose row
 * stride is odd (an odd K) starts every row at a different offset inside a
 * 16-byte granule, so a plain vector load of a row's unit would be
 * misaligned; reading the unit element by element costs eight loads. Here
 * the unit at absolute element address e, shift s = e mod 8, is the words
 * of the aligned pair [e - s, e - s + 16) from word s / 2 on, each word
 * moved by 16 bits when s is odd. Layer: tile. */
#include "rocke/tile_mma.h"

static rk_value c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

/* The unit's element shift inside its granule: ((address / 2) + idx) mod 8 (i64). */
static rk_value unit_shift(rk_kernel *k, rk_value ptr, rk_value idx) {
    rk_value addr = rk_build_ptrtoint(k, ptr);
    rk_value one = rk_const_i64(k, 1), seven = rk_const_i64(k, 7);
    rk_value el = rk_build_lshr(k, addr, one);
    rk_value e = rk_build_add(k, el, idx);
    return rk_build_and(k, e, seven);
}

rk_value rk_tile_shifted_window_ok(rk_kernel *k, rk_value ptr, rk_value idx, rk_value total) {
    rk_value s = unit_shift(k, ptr, idx);
    rk_value lo = rk_build_sub(k, idx, s);
    rk_value z = rk_const_i64(k, 0), c16 = rk_const_i64(k, 16);
    rk_value lo_in = rk_build_cmp(k, "ge", lo, z);
    rk_value end = rk_build_add(k, lo, c16);
    rk_value hi_in = rk_build_cmp(k, "le", end, total);
    rk_value aligned = rk_build_cmp(k, "eq", s, z);   /* one granule: the second load repeats the first */
    rk_value hi_ok = rk_build_or(k, hi_in, aligned);
    return rk_build_and(k, lo_in, hi_ok);
}

void rk_tile_load_unit_pair(rk_kernel *k, rk_value ptr, rk_value idx, rk_value *v0, rk_value *v1, rk_value *shift) {
    rk_value s = unit_shift(k, ptr, idx);
    rk_value lo = rk_build_sub(k, idx, s);
    rk_value z = rk_const_i64(k, 0), c8 = rk_const_i64(k, 8);
    rk_value aligned = rk_build_cmp(k, "eq", s, z);
    rk_value next = rk_build_add(k, lo, c8);
    rk_value hi = rk_build_select(k, aligned, lo, next);
    *v0 = rk_load_global(k, ptr, lo, 8);
    *v1 = rk_load_global(k, ptr, hi, 8);
    *shift = rk_build_trunc(k, s, RK_T_I32);
}

rk_value rk_tile_unit_shift(rk_kernel *k, rk_value v0, rk_value v1, rk_value s32) {
    rk_type et = rk_value_type(k, v0);
    rk_type wt = rk_type_vec(k, RK_T_I32, 4);
    rk_value w0 = rk_build_vbitcast(k, v0, wt);
    rk_value w1 = rk_build_vbitcast(k, v1, wt);
    rk_value w[8];
    for (int i = 0; i < 4; i++) w[i] = rk_build_vextract(k, w0, i);
    for (int i = 0; i < 4; i++) w[4 + i] = rk_build_vextract(k, w1, i);
    /* word q = s / 2 on: two select levels on q's bits, shared by the five picks (j + q <= 7) */
    rk_value one = c32(k, 1), two = c32(k, 2), zero = c32(k, 0);
    rk_value q = rk_build_lshr(k, s32, one);
    rk_value q1 = rk_build_and(k, q, one);
    rk_value q2 = rk_build_and(k, q, two);
    rk_value b1 = rk_build_cmp(k, "ne", q1, zero);
    rk_value b2 = rk_build_cmp(k, "ne", q2, zero);
    rk_value pick[5];
    for (int j = 0; j < 5; j++) {
        rk_value t0 = rk_build_select(k, b1, w[j + 1], w[j]);
        rk_value t1 = rk_build_select(k, b1, w[j + 3], w[j + 2]);
        pick[j] = rk_build_select(k, b2, t1, t0);
    }
    rk_value odd_bit = rk_build_and(k, s32, one);
    rk_value odd = rk_build_cmp(k, "ne", odd_bit, zero);
    rk_value c16 = c32(k, 16);
    rk_value out[4];
    for (int j = 0; j < 4; j++) {
        rk_value lo16 = rk_build_lshr(k, pick[j], c16);
        rk_value hi16 = rk_build_shl(k, pick[j + 1], c16);
        rk_value joined = rk_build_or(k, lo16, hi16);
        out[j] = rk_build_select(k, odd, joined, pick[j]);
    }
    rk_value u = rk_build_vpack(k, out, 4);
    return rk_build_vbitcast(k, u, et);
}

rk_value rk_tile_load_unit_shifted(rk_kernel *k, rk_value ptr, rk_value idx) {
    rk_value v0, v1, s;
    rk_tile_load_unit_pair(k, ptr, idx, &v0, &v1, &s);
    return rk_tile_unit_shift(k, v0, v1, s);
}
