/* rocke — staging a 16-bit matrix whose row stride breaks TMA's 16-byte rule
 * into a copy with the stride rounded up to 8 elements, pad zero: a grid-wide
 * copy that runs near bandwidth because each unit is two aligned 16-byte
 * loads, a register shift and one aligned 16-byte store (tile_shift.c); only
 * units at row tails and at the buffer's ends go element by element.
 * Layer: tile. */
#include "rocke/tile_mma.h"

static rk_value c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

/* The unit at element e of src, element by element: piece j is src[e + j]
 * while c + j < cols, else zero (i64 e; i32 c, cols). */
static rk_value unit_by_pieces(rk_kernel *k, rk_value src, rk_value e, rk_value c, rk_value cols, rk_type et) {
    rk_value zero_e = rk_const_float(k, et, 0.0), z64 = rk_const_i64(k, 0);
    rk_value piece[8];
    for (int j = 0; j < 8; j++) {
        rk_value cj = c32(k, j), j64 = rk_const_i64(k, j);
        rk_value col = rk_build_add(k, c, cj);
        rk_value in = rk_build_cmp(k, "lt", col, cols);
        rk_value at = rk_build_add(k, e, j64);
        rk_value safe = rk_build_select(k, in, at, z64);   /* a piece past the row reads element 0 */
        rk_value v = rk_load_global(k, src, safe, 1);
        piece[j] = rk_build_select(k, in, v, zero_e);
    }
    return rk_build_vpack(k, piece, 8);
}

void rk_tile_pad_copy(rk_kernel *k, rk_value src, rk_value dst, rk_value rows, rk_value cols, rk_value ld, rk_value ldp,
                      rk_value gtid, rk_value nthreads) {
    rk_type et = rk_type_elem(k, rk_value_type(k, src));
    rk_type vt = rk_type_vec(k, et, 8);
    rk_value one = c32(k, 1), three = c32(k, 3);
    rk_value upr = rk_build_lshr(k, ldp, three);               /* units per row */
    rk_value units = rk_build_mul(k, rows, upr);
    /* the source buffer's extent: (rows - 1) * ld + cols elements */
    rk_value r1 = rk_build_sub(k, rows, one);
    rk_value r1w = rk_build_sext(k, r1, RK_T_I64), ldw = rk_build_sext(k, ld, RK_T_I64);
    rk_value colsw = rk_build_sext(k, cols, RK_T_I64);
    rk_value span = rk_build_mul(k, r1w, ldw);
    rk_value total = rk_build_add(k, span, colsw);
    rk_value u = rk_for_begin(k, gtid, units, nthreads, NULL, 0, NULL, NULL, NULL);
    rk_value r = rk_build_div(k, u, upr);
    rk_value ur = rk_build_mod(k, u, upr);
    rk_value c = rk_build_shl(k, ur, three);
    rk_value rw = rk_build_sext(k, r, RK_T_I64), cw = rk_build_sext(k, c, RK_T_I64);
    rk_value row0 = rk_build_mul(k, rw, ldw);
    rk_value e = rk_build_add(k, row0, cw);
    rk_value eight = c32(k, 8);
    rk_value cend = rk_build_add(k, c, eight);
    rk_value whole = rk_build_cmp(k, "le", cend, cols);
    rk_value window = rk_tile_shifted_window_ok(k, src, e, total);
    rk_value fast = rk_build_and(k, whole, window);
    rk_value unit;
    rk_if_else_begin(k, fast, 1, &vt, &unit);
    rk_value shifted = rk_tile_load_unit_shifted(k, src, e);
    rk_else(k, &shifted, 1);
    rk_value pieces = unit_by_pieces(k, src, e, c, cols, et);
    rk_if_end(k, &pieces, 1);
    rk_value ldpw = rk_build_sext(k, ldp, RK_T_I64);
    rk_value drow = rk_build_mul(k, rw, ldpw);
    rk_value d = rk_build_add(k, drow, cw);
    rk_store_global(k, dst, d, unit);
    rk_for_end(k, NULL, 0, NULL);
}
