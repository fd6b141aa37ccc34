/* rocke — the split-row path of the row families: a row over `slices` blocks
 * (grid y), partial statistics through a Work buffer, a per-row arrival
 * counter, the last block merging the slices in slice order. Layer: kernels. */
#include "kern_int.h"

/* Work's layout: R = slices * nstat + 1 f32 per row, "R,M" (slot-major);
 * slot j of row m is Work[j * M + m], the counter is slot R - 1. */
#define WD(n) #n ",M"
static const char *const work_dims[34] = {
    NULL,   NULL,   WD(2),  WD(3),  WD(4),  WD(5),  WD(6),  WD(7),  WD(8),  WD(9),  WD(10), WD(11),
    WD(12), WD(13), WD(14), WD(15), WD(16), WD(17), WD(18), WD(19), WD(20), WD(21), WD(22), WD(23),
    WD(24), WD(25), WD(26), WD(27), WD(28), WD(29), WD(30), WD(31), WD(32), WD(33),
};

void kn_slices_signature(rk_ksig *s, const rk_row_knobs *k, uint32_t nstat) {
    uint32_t r = k->slices * nstat + 1;
    if (k->slices < 2) return;
    RK_ASSERT(r < RK_COUNTOF(work_dims), "kn_slices_signature: slices x stats out of range");
    kn_sig_add(s, "Work", true, RK_S_F32, RK_KP_WORK, work_dims[r]);
}

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* ceil(a / b), a >= 0, b > 0 (i32) */
static rk_value cdiv(rk_kernel *k, rk_value a, rk_value b) {
    rk_value one = c32(k, 1);
    rk_value ab = rk_build_add(k, a, b);
    rk_value ab1 = rk_build_sub(k, ab, one);
    return rk_build_udiv(k, ab1, b);
}

kn_slices kn_slices_begin(rk_kernel *k, const rk_row_knobs *kn, uint32_t nstat, rk_value work, const rk_tile_rows *g,
                          rk_value M, rk_value len, uint32_t stride) {
    kn_slices sl = {.n = kn->slices, .nstat = nstat, .work = work, .row = g->row, .M = M, .tid = g->tid};
    /* per = ceil(ceil(len / S) / stride) * stride: whole loop steps per slice */
    rk_value S = c32(k, kn->slices), st = c32(k, stride);
    rk_value each = cdiv(k, len, S);
    rk_value steps = cdiv(k, each, st);
    rk_value per = rk_build_mul(k, steps, st);
    rk_value sid = rk_build_block_id(k, 1);
    sl.lo = rk_build_mul(k, sid, per);
    rk_value end = rk_build_add(k, sl.lo, per);
    sl.hi = rk_build_smin(k, end, len);
    return sl;
}

/* i64 index of slot j of this row. */
static rk_value slot_at(rk_kernel *k, const kn_slices *sl, rk_value j) {
    rk_value j64 = rk_build_sext(k, j, RK_T_I64);
    rk_value m64 = rk_build_sext(k, sl->M, RK_T_I64);
    rk_value jm = rk_build_mul(k, j64, m64);
    rk_value r64 = rk_build_sext(k, sl->row, RK_T_I64);
    return rk_build_add(k, jm, r64);
}

static rk_value counter_at(rk_kernel *k, const kn_slices *sl) {
    rk_value last = c32(k, (int64_t)sl->n * sl->nstat);
    return slot_at(k, sl, last);
}

rk_value kn_slices_publish(rk_kernel *k, const kn_slices *sl, const rk_value *stats) {
    rk_value zero = c32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", sl->tid, zero);
    rk_value sid = rk_build_block_id(k, 1);
    rk_value nstat = c32(k, sl->nstat);
    rk_value base = rk_build_mul(k, sid, nstat);
    rk_if_begin(k, first);
    for (uint32_t j = 0; j < sl->nstat; j++) {
        rk_value jc = j ? c32(k, j) : base;
        rk_value jv = j ? rk_build_add(k, base, jc) : base;
        rk_value at = slot_at(k, sl, jv);
        rk_store_global(k, sl->work, at, stats[j]);
    }
    rk_if_end(k, NULL, 0);
    rk_value at = counter_at(k, sl);
    return rk_tile_arrive_last(k, sl->tid, sl->work, at, sl->n);
}

void kn_slices_gather(rk_kernel *k, const kn_slices *sl, rk_tile_combine_fn fn, rk_tile_red op, rk_value *stats) {
    RK_ASSERT(sl->nstat <= RK_TILE_MAX_TUPLE, "kn_slices_gather: too many statistics");
    rk_value acc[RK_TILE_MAX_TUPLE], cur[RK_TILE_MAX_TUPLE], out[RK_TILE_MAX_TUPLE];
    for (uint32_t s = 0; s < sl->n; s++) {
        for (uint32_t j = 0; j < sl->nstat; j++) {
            rk_value jv = c32(k, (int64_t)s * sl->nstat + j);
            rk_value at = slot_at(k, sl, jv);
            cur[j] = rk_load_global(k, sl->work, at, 1);
        }
        if (!s) {
            for (uint32_t j = 0; j < sl->nstat; j++) acc[j] = cur[j];
            continue;
        }
        if (fn) {
            fn(k, acc, cur, out, NULL);
            for (uint32_t j = 0; j < sl->nstat; j++) acc[j] = out[j];
        } else {
            for (uint32_t j = 0; j < sl->nstat; j++) acc[j] = rk_tile_combine(k, op, acc[j], cur[j]);
        }
    }
    for (uint32_t j = 0; j < sl->nstat; j++) stats[j] = acc[j];
    /* every slice has arrived: reset the row's counter for the next launch */
    rk_value zero = c32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", sl->tid, zero);
    rk_if_begin(k, first);
    rk_value at = counter_at(k, sl);
    rk_value zf = rk_const_f32(k, 0.0f);
    rk_store_global(k, sl->work, at, zf);
    rk_if_end(k, NULL, 0);
}
