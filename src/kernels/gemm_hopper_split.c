/* rocke — split-K on the Hopper plain schedule (GEMM path=wgmma
 * split_k > 1, convolution wgrad's split of N*P*Q): every split reduces its
 * range of K tiles (grid y) and stores its f32 partial tile into its slice
 * of Work (split_k slices of G x M x N, then one f32 counter per (group,
 * tile)); the last split of a tile to arrive sums the slices in split order
 * (the result does not depend on arrival order), resets the counter for the
 * next launch and runs the epilogue. Whole and edge tiles alike issue all
 * of a step's loads before its adds: an edge tile summed element by element
 * waited out one L2 round trip per element and slice (H200, session 18:
 * 500x500x32768 at 8 splits 287.5 TFLOP/s against 129.7). Layer: kernels. */
#include <stdio.h>

#include "gemm_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }
static rk_value i64(rk_kernel *k, rk_value v) { return rk_build_sext(k, v, RK_T_I64); }

/* Index of (row, col) of group z in slice sl of Work. */
static rk_value work_at(rk_kernel *k, const kn_hk *h, rk_value groups, rk_value z, rk_value sl, rk_value row,
                        rk_value col) {
    rk_value sg = rk_build_mul(k, sl, groups);
    rk_value plane = rk_build_add(k, sg, z);
    rk_value p64 = i64(k, plane), m64 = i64(k, h->p[3]);
    rk_value pm = rk_build_mul(k, p64, m64);
    rk_value r64 = i64(k, row);
    rk_value pr = rk_build_add(k, pm, r64);
    rk_value n64 = i64(k, h->p[4]);
    rk_value rn = rk_build_mul(k, pr, n64);
    rk_value c64 = i64(k, col);
    return rk_build_add(k, rn, c64);
}

static rk_value counter_at(rk_kernel *k, const kn_hk *h, rk_value groups, uint32_t splits) {
    rk_value S = c32(k, splits), zero = c32(k, 0);
    rk_value base = work_at(k, h, groups, zero, S, zero, zero);
    rk_value tile = rk_build_block_id(k, 0), z = rk_build_block_id(k, 2);
    rk_value bm = c32(k, h->pl.bm), bn = c32(k, h->pl.bn), one = c32(k, 1);
    rk_value m1 = rk_build_add(k, h->p[3], bm), n1 = rk_build_add(k, h->p[4], bn);
    rk_value m2 = rk_build_sub(k, m1, one), n2 = rk_build_sub(k, n1, one);
    rk_value tm = rk_build_udiv(k, m2, bm), tn = rk_build_udiv(k, n2, bn);
    rk_value tiles = rk_build_mul(k, tm, tn);
    rk_value zt = rk_build_mul(k, z, tiles);
    rk_value id = rk_build_add(k, zt, tile);
    rk_value id64 = i64(k, id);
    return rk_build_add(k, base, id64);
}

/* Accumulator i of this thread: its row and column in C, and whether inside. */
static rk_value acc_slot(kn_hk *h, rk_value rbase, rk_value twg, uint32_t i, rk_value *row, rk_value *col) {
    rk_kernel *k = h->k;
    rk_tile_frag_coord fc = rk_tile_wgmma_acc_coord(k, twg, i);
    *row = rk_build_add(k, rbase, fc.row);
    *col = rk_build_add(k, h->n0, fc.col);
    rk_value rin = rk_build_cmp(k, "lt", *row, h->p[3]);
    rk_value cin = rk_build_cmp(k, "lt", *col, h->p[4]);
    return rk_build_and(k, rin, cin);
}

/* Where a whole tile is inside C, accumulator i lies 8 * ((i / 2) % 2) rows
 * and 8 * (i / 4) + i % 2 columns from accumulator 0 (the m64nN map of
 * rk_tile_wgmma_acc_coord): its Work index is one of two row bases plus a
 * constant, so no per-element address lives across the slice loop. */
typedef struct split_rows {
    rk_value z, groups, row0, col0;   /* accumulator 0's row and column */
    rk_value n8;                      /* 8 rows of Work (i64) */
    rk_value mlast, nlast;            /* C's last row and column: an edge tile's reads are clamped to them */
} split_rows;

static rk_value whole_at(rk_kernel *k, const kn_hk *h, const split_rows *r, rk_value sl, uint32_t i) {
    rk_value b = work_at(k, h, r->groups, r->z, sl, r->row0, r->col0);
    if ((i / 2) % 2) b = rk_build_add(k, b, r->n8);
    rk_value dc = rk_const_i64(k, 8 * (i / 4) + i % 2);
    return rk_build_add(k, b, dc);
}

/* The slices the last arriver reads per loop step: their loads are issued
 * before the adds (one L2 round trip per step instead of per slice and
 * element), the adds still in split order. */
enum { SLICES_PER_STEP = 2, TILE_N_MAX = 256 };

/* Work index of accumulator i in slice sl: from the two row bases where the
 * tile is whole; on an edge tile from its own (row, col), recomputed each
 * step (nothing per element lives across the loop), (0, 0) outside C (the
 * epilogue stores nothing there). */
static rk_value slice_at(kn_hk *h, const split_rows *r, rk_value rbase, rk_value twg, bool whole, rk_value sl,
                         uint32_t i) {
    rk_kernel *k = h->k;
    if (whole) return whole_at(k, h, r, sl, i);
    rk_value row, col;
    acc_slot(h, rbase, twg, i, &row, &col);
    rk_value rr = rk_build_umin(k, row, r->mlast);
    rk_value cc = rk_build_umin(k, col, r->nlast);
    return work_at(k, h, r->groups, r->z, sl, rr, cc);
}

/* sum + slices [step * lo, step * hi) of the tile, step at a time, added in
 * split order. */
static rk_value sum_slices(kn_hk *h, const split_rows *r, rk_value rbase, rk_value twg, bool whole, rk_value work,
                           rk_value lo, rk_value hi, uint32_t step, rk_value sum0) {
    rk_kernel *k = h->k;
    uint32_t n = h->pl.bn / 2;
    rk_value one = c32(k, 1), st = c32(k, step), sum;
    char ivn[16];
    snprintf(ivn, sizeof ivn, "s%c%u", whole ? 'k' : 'e', step);
    rk_value j = rk_for_begin(k, lo, hi, one, ivn, 1, &sum0, NULL, &sum);
    rk_value first = rk_build_mul(k, j, st);
    rk_value v[SLICES_PER_STEP][TILE_N_MAX / 2];
    for (uint32_t u = 0; u < step; u++) {
        rk_value du = c32(k, u);
        rk_value sl = rk_build_add(k, first, du);
        for (uint32_t i = 0; i < n; i++) {
            rk_value at = slice_at(h, r, rbase, twg, whole, sl, i);
            v[u][i] = rk_load_global(k, work, at, 1);
        }
    }
    for (uint32_t u = 0; u < step; u++)
        for (uint32_t i = 0; i < n; i++) {
            rk_value s0 = rk_build_vextract(k, sum, i);
            rk_value s1 = rk_build_fadd(k, s0, v[u][i]);
            sum = rk_build_vinsert(k, sum, s1, i);
        }
    rk_value out;
    rk_for_end(k, &sum, 1, &out);
    return out;
}

/* All S slices of the tile: pairs, then the odd one (the same additions in
 * the same order, 0 + slice 0 + slice 1 + ...). */
static rk_value sum_all(kn_hk *h, const split_rows *r, rk_value rbase, rk_value twg, bool whole, rk_value work,
                        rk_value S, rk_type vt) {
    rk_kernel *k = h->k;
    rk_value zero = c32(k, 0);
    rk_value sum0 = rk_build_constant_vec(k, vt, 0.0);
    /* an edge tile, or 128 accumulators a thread (tile N 256: two slices' loads spilled, 172 bytes at
     * 128x256): one slice a step */
    if (!whole || h->pl.bn / 2 > 64) return sum_slices(h, r, rbase, twg, whole, work, zero, S, 1, sum0);
    rk_value one = c32(k, 1), two = c32(k, 2);
    rk_value half = rk_build_lshr(k, S, one);
    rk_value even = rk_build_mul(k, half, two);
    rk_value pairs = sum_slices(h, r, rbase, twg, true, work, zero, half, SLICES_PER_STEP, sum0);
    return sum_slices(h, r, rbase, twg, true, work, even, S, 1, pairs);
}

void kn_gemm_hopper_split_finish(kn_hk *h, uint32_t splits, rk_value work, rk_value groups, rk_value rbase, rk_value twg,
                         rk_value d) {
    rk_kernel *k = h->k;
    uint32_t n = h->pl.bn / 2;
    rk_value sid = rk_build_block_id(k, 1), zero = c32(k, 0);
    rk_value S = rk_build_grid_dim(k, 1);   /* = splits, unknown to LLVM: the slice loops stay loops */
    split_rows r = {.z = rk_build_block_id(k, 2), .groups = groups};
    acc_slot(h, rbase, twg, 0, &r.row0, &r.col0);
    rk_value eight = rk_const_i64(k, 8), n64 = i64(k, h->p[4]);
    r.n8 = rk_build_mul(k, n64, eight);
    rk_value one = c32(k, 1);
    r.mlast = rk_build_sub(k, h->p[3], one);
    r.nlast = rk_build_sub(k, h->p[4], one);
    rk_value bm = c32(k, h->pl.bm), bn = c32(k, h->pl.bn);
    rk_value mend = rk_build_add(k, h->m0, bm), nend = rk_build_add(k, h->n0, bn);
    rk_value min_ = rk_build_cmp(k, "le", mend, h->p[3]), nin = rk_build_cmp(k, "le", nend, h->p[4]);
    rk_value whole = rk_build_and(k, min_, nin);
    rk_if_begin(k, whole);
    for (uint32_t i = 0; i < n; i++) {
        rk_value at = whole_at(k, h, &r, sid, i);
        rk_value x = rk_build_vextract(k, d, i);
        rk_store_global(k, work, at, x);
    }
    rk_else(k, NULL, 0);
    for (uint32_t i = 0; i < n; i++) {
        rk_value row, col;
        rk_value ok = acc_slot(h, rbase, twg, i, &row, &col);
        rk_value x = rk_build_vextract(k, d, i);
        rk_if_begin(k, ok);
        rk_value at = work_at(k, h, groups, r.z, sid, row, col);
        rk_store_global(k, work, at, x);
        rk_if_end(k, NULL, 0);
    }
    rk_if_end(k, NULL, 0);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value cat = counter_at(k, h, groups, splits);
    rk_value last = rk_tile_arrive_last(k, tid, work, cat, splits);
    rk_if_begin(k, last);
    {
        rk_type vt = rk_value_type(k, d);
        rk_value total;
        rk_if_else_begin(k, whole, 1, &vt, &total);
        {
            rk_value whole_sum = sum_all(h, &r, rbase, twg, true, work, S, vt);
            rk_else(k, &whole_sum, 1);
        }
        {
            rk_value edge_sum = sum_all(h, &r, rbase, twg, false, work, S, vt);
            rk_if_end(k, &edge_sum, 1);
        }
        rk_value first = rk_build_cmp(k, "eq", tid, zero);
        rk_if_begin(k, first);
        rk_value zf = rk_const_f32(k, 0.0f);
        rk_store_global(k, work, cat, zf);   /* every split has arrived: ready for the next launch */
        rk_if_end(k, NULL, 0);
        kn_gemm_hopper_epilogue(h, rbase, twg, total);
    }
    rk_if_end(k, NULL, 0);
}
