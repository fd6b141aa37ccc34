/* rocke — the split-row path of the row families: a row over `slices` blocks
 * (adjacent in launch order), partial statistics through a Work buffer, a per-row arrival
 * counter, the last block merging the slices in slice order. Layer: kernels. */
#include "kern_int.h"

/* Work's layout: R f32 per row, "R,M" (slot-major): slot j of row m is
 * Work[j * M + m]; slots 0 .. S*nstat-1 the slices' statistics, then the
 * arrival counter, then (families with an output pass) the merged
 * statistics. Sync (those families): S + 2 i32 per row, "S+2,M": the
 * merged-statistics flag, the waiters' done count, one claim per slice. */
#define WD(n) #n ",M"
static const char *const work_dims[36] = {
    NULL,   NULL,   WD(2),  WD(3),  WD(4),  WD(5),  WD(6),  WD(7),  WD(8),  WD(9),  WD(10), WD(11),
    WD(12), WD(13), WD(14), WD(15), WD(16), WD(17), WD(18), WD(19), WD(20), WD(21), WD(22), WD(23),
    WD(24), WD(25), WD(26), WD(27), WD(28), WD(29), WD(30), WD(31), WD(32), WD(33), WD(34), WD(35),
};
enum { SY_FLAG = 0, SY_DONE = 1, SY_CLAIM = 2 };
/* claim values: 0 open, 1 the slice's own block writes it, 2 it gave up
 * waiting, 3 the last block took it */
enum { CL_OPEN = 0, CL_OWN = 1, CL_GAVE_UP = 2, CL_LAST = 3 };
/* A waiting block checks the flag KN_SPIN^2 times before it leaves its
 * slice to the last block; the last block waits up to KN_SPIN^3 checks for
 * the waiters to finish with their claims (they are running: they arrived). */
#define KN_SPIN 32u

void kn_slices_signature(rk_ksig *s, const rk_row_knobs *k, uint32_t nstat, bool spread) {
    uint32_t r = k->slices * nstat + 1 + (spread ? nstat : 0);
    if (k->slices < 2) return;
    RK_ASSERT(r < RK_COUNTOF(work_dims), "kn_slices_signature: slices x stats out of range");
    kn_sig_add(s, "Work", true, RK_S_F32, RK_KP_WORK, work_dims[r]);
    if (spread) kn_sig_add(s, "Sync", true, RK_S_I32, RK_KP_WORK, work_dims[k->slices + 2]);
}

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* ceil(a / b), a >= 0, b > 0 (i32) */
static rk_value cdiv(rk_kernel *k, rk_value a, rk_value b) {
    rk_value one = c32(k, 1);
    rk_value ab = rk_build_add(k, a, b);
    rk_value ab1 = rk_build_sub(k, ab, one);
    return rk_build_udiv(k, ab1, b);
}

/* The block's place in launch order, x + y*M (grid x: the M rows, y: the
 * slices). GPUs start blocks in about that order, so numbering the (row,
 * slice) pairs by it starts the slices of a row together and they wait on
 * each other briefly; (x, y) taking slice y of row x would start every
 * row's slice 0 before any slice 1, and with more rows than fit on the
 * device at once every waiter would give up. */
static rk_value launch_index(rk_kernel *k, rk_value M) {
    rk_value bx = rk_build_block_id(k, 0);
    rk_value by = rk_build_block_id(k, 1);
    rk_value yM = rk_build_mul(k, by, M);
    return rk_build_add(k, yM, bx);
}

void kn_slices_rows(rk_kernel *k, const rk_row_knobs *kn, rk_tile_rows *g, rk_value M) {
    if (kn->slices < 2) return;
    rk_value lin = launch_index(k, M);
    rk_value S = c32(k, kn->slices);
    g->row = rk_build_udiv(k, lin, S);
    g->active = rk_build_cmp(k, "lt", g->row, M);
}

kn_slices kn_slices_begin(rk_kernel *k, const rk_row_knobs *kn, uint32_t nstat, rk_value work, rk_value sync,
                          const rk_tile_rows *g, rk_value M, rk_value len, uint32_t stride) {
    kn_slices sl = {.n = kn->slices, .nstat = nstat, .work = work, .sync = sync, .row = g->row, .M = M,
                    .tid = g->tid, .len = len};
    /* per = ceil(ceil(len / S) / stride) * stride: whole loop steps per slice */
    rk_value S = c32(k, kn->slices), st = c32(k, stride);
    rk_value each = cdiv(k, len, S);
    rk_value steps = cdiv(k, each, st);
    rk_value per = rk_build_mul(k, steps, st);
    sl.per = per;
    /* the slice: launch index - row * S (kn_slices_rows) */
    rk_value lin = launch_index(k, M);
    rk_value rS = rk_build_mul(k, g->row, S);
    rk_value sid = rk_build_sub(k, lin, rS);
    sl.sid = sid;
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
    rk_value sid = sl->sid;
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

/* ---- the output pass spread over the row's blocks --------------------------------------- */
static rk_value merged_at(rk_kernel *k, const kn_slices *sl, uint32_t j) {
    rk_value jv = c32(k, (int64_t)sl->n * sl->nstat + 1 + j);
    return slot_at(k, sl, jv);
}

static rk_value sync_at(rk_kernel *k, const kn_slices *sl, rk_value j) { return slot_at(k, sl, j); }

static rk_value atomic_i32(rk_kernel *k, const kn_slices *sl, const char *kind, rk_value at, int32_t v) {
    rk_value c = c32(k, v);
    return rk_build_global_atomic(k, kind, sl->sync, at, c);
}

/* One thread: check the Sync slot `at` until it is not below `want`, at most
 * KN_SPIN^levels times; i1: it was seen. Nested loops whose bodies skip once
 * it is seen, so a satisfied wait costs a few idle iterations. */
static rk_value spin_until(rk_kernel *k, const kn_slices *sl, rk_value at, int32_t want, uint32_t levels) {
    rk_type bt = RK_T_I1;
    rk_value no = rk_const_bool(k, false), zero = c32(k, 0), one = c32(k, 1), n = c32(k, KN_SPIN);
    rk_value seen, cur, res;
    rk_for_begin(k, zero, n, one, NULL, 1, &no, NULL, &cur);
    rk_value todo = rk_build_xor(k, cur, rk_const_bool(k, true));
    rk_if_else_begin(k, todo, 1, &bt, &seen);
    if (levels > 1) {
        res = spin_until(k, sl, at, want, levels - 1);
    } else {
        rk_value v = atomic_i32(k, sl, "or", at, 0);
        rk_value w = c32(k, want);
        res = rk_build_cmp(k, "ge", v, w);
    }
    rk_else(k, &res, 1);
    res = cur;
    rk_if_end(k, &res, 1);
    rk_for_end(k, &seen, 1, &res);
    return res;
}

kn_spread kn_slices_merge(rk_kernel *k, const kn_slices *sl, rk_value last, rk_tile_combine_fn fn, rk_tile_red op,
                          rk_value *stats) {
    RK_ASSERT(sl->nstat <= RK_TILE_MAX_TUPLE, "kn_slices_merge: too many statistics");
    kn_spread sp = {.last = last};
    uint32_t nb = sl->n + 1;
    sp.lds = rk_build_smem_alloc(k, RK_T_I32, &nb, 1);
    rk_type types[RK_TILE_MAX_TUPLE + 1];
    rk_value out[RK_TILE_MAX_TUPLE + 1], y[RK_TILE_MAX_TUPLE + 1];
    for (uint32_t j = 0; j < sl->nstat; j++) types[j] = RK_T_F32;
    types[sl->nstat] = RK_T_I1;
    rk_value zero = c32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", sl->tid, zero);
    rk_if_else_begin(k, last, sl->nstat + 1, types, out);
    /* the last block: merge in slice order, publish the merge, raise the flag */
    kn_slices_gather(k, sl, fn, op, y);
    rk_if_begin(k, first);
    for (uint32_t j = 0; j < sl->nstat; j++) {
        rk_value at = merged_at(k, sl, j);
        rk_store_global(k, sl->work, at, y[j]);
    }
    rk_build_fence(k, "device");
    rk_value fl = c32(k, SY_FLAG);
    rk_value flag_at = sync_at(k, sl, fl);
    atomic_i32(k, sl, "xchg", flag_at, 1);
    rk_if_end(k, NULL, 0);
    y[sl->nstat] = rk_const_bool(k, true);
    rk_else(k, y, sl->nstat + 1);
    /* a waiting block: wait for the flag (bounded), then claim its slice */
    rk_if_begin(k, first);
    rk_value fl2 = c32(k, SY_FLAG);
    rk_value fat = sync_at(k, sl, fl2);
    rk_value seen = spin_until(k, sl, fat, 1, 2);
    rk_value own = c32(k, CL_OWN), gave = c32(k, CL_GAVE_UP), open = c32(k, CL_OPEN);
    rk_value want = rk_build_select(k, seen, own, gave);
    rk_value sid = sl->sid;
    rk_value cbase = c32(k, SY_CLAIM);
    rk_value cj = rk_build_add(k, cbase, sid);
    rk_value cat = sync_at(k, sl, cj);
    rk_value old = rk_build_global_atomic_cas(k, sl->sync, cat, open, want);
    rk_value got = rk_build_cmp(k, "eq", old, open);
    rk_value mine = rk_build_and(k, seen, got);
    rk_value mine32 = rk_build_zext(k, mine, RK_T_I32);
    rk_store_smem(k, sp.lds, &zero, mine32);
    rk_build_fence(k, "device");
    rk_value dn = c32(k, SY_DONE);
    rk_value dat = sync_at(k, sl, dn);
    atomic_i32(k, sl, "add", dat, 1);
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_value m32 = rk_load_smem(k, sp.lds, &zero, 1);
    rk_value m = rk_build_cmp(k, "ne", m32, zero);
    /* acquire: the merged statistics the flag published */
    rk_build_fence(k, "device");
    rk_value z[RK_TILE_MAX_TUPLE];
    rk_if_else_begin(k, m, sl->nstat, types, z);
    for (uint32_t j = 0; j < sl->nstat; j++) {
        rk_value at = merged_at(k, sl, j);
        y[j] = rk_load_global(k, sl->work, at, 1);
    }
    rk_else(k, y, sl->nstat);
    for (uint32_t j = 0; j < sl->nstat; j++) y[j] = stats[j];
    rk_if_end(k, y, sl->nstat);
    for (uint32_t j = 0; j < sl->nstat; j++) y[j] = z[j];
    y[sl->nstat] = m;
    rk_if_end(k, y, sl->nstat + 1);
    for (uint32_t j = 0; j < sl->nstat; j++) stats[j] = out[j];
    sp.mine = out[sl->nstat];
    return sp;
}

void kn_slices_pass_begin(rk_kernel *k, kn_spread *sp, const kn_slices *sl, rk_value *from, rk_value *to) {
    /* the last block: every slice (its own first); a waiter: its own if it claimed it */
    rk_value all = c32(k, sl->n), one = c32(k, 1), zero = c32(k, 0);
    rk_value mine = rk_build_select(k, sp->mine, one, zero);
    rk_value count = rk_build_select(k, sp->last, all, mine);
    rk_value t = rk_for_begin(k, zero, count, one, NULL, 0, NULL, NULL, NULL);
    rk_value sid = sl->sid;
    rk_value jt = rk_build_add(k, sid, t);
    rk_value wrap = rk_build_sub(k, jt, all);
    rk_value over = rk_build_cmp(k, "ge", jt, all);
    rk_value j = rk_build_select(k, over, wrap, jt);
    /* another slice: take it unless its own block claimed it (one CAS, broadcast) */
    rk_value first = rk_build_cmp(k, "eq", sl->tid, zero);
    rk_value other = rk_build_cmp(k, "ne", t, zero);
    rk_value ask = rk_build_and(k, first, other);
    rk_if_begin(k, ask);
    rk_value cbase = c32(k, SY_CLAIM);
    rk_value cj = rk_build_add(k, cbase, j);
    rk_value cat = sync_at(k, sl, cj);
    rk_value open = c32(k, CL_OPEN), took = c32(k, CL_LAST);
    rk_value old = rk_build_global_atomic_cas(k, sl->sync, cat, open, took);
    rk_value slot = rk_build_add(k, t, one);
    rk_store_smem(k, sp->lds, &slot, old);
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_value slot2 = rk_build_add(k, t, one);
    rk_value seen = rk_load_smem(k, sp->lds, &slot2, 1);
    rk_value by_own = rk_build_cmp(k, "eq", seen, c32(k, CL_OWN));
    rk_value theirs = rk_build_and(k, other, by_own);
    rk_value go = rk_build_xor(k, theirs, rk_const_bool(k, true));
    rk_if_begin(k, go);
    *from = rk_build_mul(k, j, sl->per);
    rk_value end = rk_build_add(k, *from, sl->per);
    *to = rk_build_smin(k, end, sl->len);
}

void kn_slices_pass_end(rk_kernel *k) {
    rk_if_end(k, NULL, 0);
    rk_for_end(k, NULL, 0, NULL);
}

void kn_slices_finish(rk_kernel *k, const kn_slices *sl) {
    rk_value zero = c32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", sl->tid, zero);
    rk_if_begin(k, first);
    /* the waiters are done with their claims: reset Sync for the next launch */
    rk_value dn = c32(k, SY_DONE);
    rk_value dat = sync_at(k, sl, dn);
    spin_until(k, sl, dat, (int32_t)sl->n - 1, 3);
    for (uint32_t j = 0; j < sl->n + 2; j++) {
        rk_value jc = c32(k, j);
        rk_value at = sync_at(k, sl, jc);
        atomic_i32(k, sl, "xchg", at, 0);
    }
    rk_if_end(k, NULL, 0);
}
