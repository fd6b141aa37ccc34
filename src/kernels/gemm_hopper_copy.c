/* rocke — the GEMM Hopper path's fill of one operand stage by the block's
 * threads, for an operand whose row stride TMA cannot read (not a multiple
 * of 16 bytes): cp.async of vec_a / vec_b elements (4 or 8 bytes), or for
 * vec 1 a gathered 16-byte unit (eight 2-byte loads from one address, one
 * shared-memory store), to the places the 128-byte-swizzled TMA box would
 * have put them. Layer: kernels. */
#include "gemm_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

bool kn_gemm_hopper_copied(const rk_gemm_spec *s, int operand) {
    return (operand ? s->vec_b : s->vec_a) < KN_WG_TMA_VEC;
}

/* The stage element of (outer row o, inner column i) of an operand tile: the
 * inner extent runs in boxes of 64 columns (one box when K-major), each box
 * `rows` rows of 128 bytes whose 16-byte units are permuted by unit ^ (row % 8). */
static rk_value swizzled(rk_kernel *k, rk_value o, rk_value i, uint32_t rows) {
    rk_value c6 = c32(k, 6), c63 = c32(k, 63), c3 = c32(k, 3), c7 = c32(k, 7);
    rk_value box = rk_build_lshr(k, i, c6);
    rk_value col = rk_build_and(k, i, c63);
    rk_value boxsz = c32(k, rows * KN_WG_BK);
    rk_value e0 = rk_build_mul(k, box, boxsz);
    rk_value rowsz = c32(k, KN_WG_BK);
    rk_value er = rk_build_mul(k, o, rowsz);
    rk_value unit = rk_build_lshr(k, col, c3);
    rk_value phase = rk_build_and(k, o, c7);
    rk_value su = rk_build_xor(k, unit, phase);
    rk_value sc = rk_build_shl(k, su, c3);
    rk_value lo = rk_build_and(k, col, c7);
    rk_value a = rk_build_add(k, e0, er);
    rk_value b = rk_build_add(k, sc, lo);
    return rk_build_add(k, a, b);
}

void kn_gemm_hopper_copy(kn_hk *h, int operand, rk_value tid, rk_value base, rk_value kx, rk_value mn0) {
    rk_kernel *k = h->k;
    const rk_gemm_spec *s = h->s;
    bool kmaj = operand ? h->kb : h->ka;
    uint32_t ext = operand ? h->pl.bn : h->pl.bm, vec = operand ? s->vec_b : s->vec_a;
    /* global rows run along the outer index, columns along the inner one */
    uint32_t rows = kmaj ? ext : KN_WG_BK, cols = kmaj ? KN_WG_BK : ext;
    rk_value ptr = h->p[operand], ld = h->p[6 + operand];
    rk_value K = h->p[5], MN = h->p[3 + operand];
    rk_value o_lim = kmaj ? MN : K, i_lim = kmaj ? K : MN;
    rk_value o0 = kmaj ? mn0 : kx, i0 = kmaj ? kx : mn0;
    /* vec 1: 16-byte units (a swizzle unit holds 8 consecutive elements) gathered from 2-byte reads */
    uint32_t unit = vec > 1 ? vec : 8;
    uint32_t per_row = cols / unit, chunks = rows * per_row, threads = h->pl.bm * 2;
    rk_value lo = c32(k, 0);
    rk_value hi = c32(k, (chunks + threads - 1) / threads), step = c32(k, 1);
    char ivn[16];
    snprintf(ivn, sizeof ivn, "cp%u", h->copies++);
    /* the tile's inner extent wholly inside the matrix (every K tile but the last when K-major): a
     * gathered unit's pieces then need no checks of their own */
    rk_value colsv = c32(k, cols);
    rk_value iend = rk_build_add(k, i0, colsv);
    rk_value inside = rk_build_cmp(k, "le", iend, i_lim);
    rk_value it = rk_for_begin(k, lo, hi, step, ivn, 0, NULL, NULL, NULL);
    {
        rk_value T = c32(k, threads), nch = c32(k, chunks), pr = c32(k, per_row), v = c32(k, unit);
        rk_value off = rk_build_mul(k, it, T);
        rk_value c = rk_build_add(k, off, tid);
        rk_value live = rk_build_cmp(k, "lt", c, nch);
        rk_if_begin(k, live);
        {
            rk_value o = rk_build_udiv(k, c, pr);
            rk_value iv = rk_build_umod(k, c, pr);
            rk_value i = rk_build_mul(k, iv, v);
            rk_value go = rk_build_add(k, o0, o);
            rk_value gi = rk_build_add(k, i0, i);
            rk_value oin = rk_build_cmp(k, "lt", go, o_lim);
            rk_value iin = rk_build_cmp(k, "lt", gi, i_lim);   /* i_lim is a multiple of vec: whole vectors */
            rk_value ok = rk_build_and(k, oin, iin);
            rk_value at = kn_gemm_c_index(k, go, gi, ld);
            rk_value z64 = rk_const_i64(k, 0);
            rk_value safe = rk_build_select(k, ok, at, z64);   /* element 0 stands in for a vector outside */
            rk_value sw = swizzled(k, o, i, rows);
            rk_value e = rk_build_add(k, base, sw);
            rk_value smem = operand ? h->sB : h->sA;
            if (vec > 1) {
                rk_build_async_copy(k, ptr, safe, smem, e, ok, (int64_t)vec * 2);   /* zero-filled where !ok */
            } else {
                rk_value zero = rk_const_float(k, (rk_type){s->dtype}, 0.0);
                rk_value x[8];
                rk_if_begin(k, inside);
                {
                    /* two aligned 16-byte loads and a shift where the unit's granules lie in the matrix
                     * (all but its first and last units); else eight 2-byte loads, where a row outside
                     * reads the matrix's first row (its inner extent holds the unit) */
                    rk_value o64 = rk_build_sext(k, o_lim, RK_T_I64);
                    rk_value ld64 = rk_build_sext(k, ld, RK_T_I64);
                    rk_value i64 = rk_build_sext(k, i_lim, RK_T_I64);
                    rk_value one = rk_const_i64(k, 1);
                    rk_value last = rk_build_sub(k, o64, one);
                    rk_value body = rk_build_mul(k, last, ld64);
                    rk_value total = rk_build_add(k, body, i64);
                    rk_value win = rk_tile_shifted_window_ok(k, ptr, at, total);
                    rk_value fast = rk_build_and(k, oin, win);
                    rk_type ut = rk_type_vec(k, (rk_type){s->dtype}, 8);
                    rk_value u;
                    rk_if_else_begin(k, fast, 1, &ut, &u);
                    rk_value sh = rk_tile_load_unit_shifted(k, ptr, at);
                    rk_else(k, &sh, 1);
                    rk_value base_at = rk_build_select(k, oin, at, z64);
                    for (uint32_t j = 0; j < 8; j++) {
                        rk_value oj = rk_const_i64(k, j);
                        rk_value aj = rk_build_add(k, base_at, oj);
                        x[j] = rk_load_global(k, ptr, aj, 1);
                    }
                    rk_value pieces = rk_build_vpack(k, x, 8);
                    rk_if_end(k, &pieces, 1);
                    rk_value uz = rk_build_constant_vec(k, ut, 0.0);
                    rk_value y = rk_build_select(k, oin, u, uz);
                    rk_store_smem(k, smem, &e, y);
                }
                rk_else(k, NULL, 0);
                {
                    for (uint32_t j = 0; j < 8; j++) {
                        rk_value cj = c32(k, j);
                        rk_value gj = rk_build_add(k, gi, cj);
                        rk_value jin = rk_build_cmp(k, "lt", gj, i_lim);
                        rk_value okj = rk_build_and(k, oin, jin);
                        rk_value oj = rk_const_i64(k, j);
                        rk_value aj = rk_build_add(k, at, oj);
                        rk_value sj = rk_build_select(k, okj, aj, z64);
                        rk_value xj = rk_load_global(k, ptr, sj, 1);
                        x[j] = rk_build_select(k, okj, xj, zero);
                    }
                    rk_value u = rk_build_vpack(k, x, 8);
                    rk_store_smem(k, smem, &e, u);
                }
                rk_if_end(k, NULL, 0);
            }
        }
        rk_if_end(k, NULL, 0);
    }
    rk_for_end(k, NULL, 0, NULL);
}
