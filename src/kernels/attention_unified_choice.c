/* rocke — unified attention's choices per batch: the row variants a build
 * writes (block_m 64 and 16) and the run-time pick among them from the
 * query lengths, and the split count with the blocks and workspace it
 * launches. Layer: kernels. */
#include <stdio.h>
#include <stdlib.h>

#include "attention_unified_int.h"

enum { DB, DHQ, DHKV, DSQ, DSKV, DD };   /* the family's dimensions (attention.c) */

#define SMALL_ROWS 16u   /* the decode-heavy variant: one warp (wave) of one atom's rows */
/* A key step's K/V copy costs what this many rows of products do. Measured on the H200 (session 6,
 * bench/RESULTS.md): the 16-row block was slower on every batch (256 decodes 1.148 against 1.095 ms,
 * the mixed batch 2.69 against 1.73, 8 long decodes 0.396 against 0.280), so the copy costs a whole
 * 64-row block's products and the 16-row variant wins only where it needs fewer key steps. */
#define COPY_ROWS 64.0

/* The key split's price and gain (measured on the H200, session 10, bench/RESULTS.md): the body that
 * splits a decode's keys across the warps slows its kernel's full blocks (one 8192-token prefill 2.37 ->
 * 2.55 ms: x 1.075) and speeds its decode blocks (256 decodes 1.096 -> 1.055 ms: x 0.963; fitted to the
 * mixed batch, 1.73 -> 1.62 ms with a third of its row units in full blocks: x 0.87; taken between). */
#define KSPLIT_FULL_COST 1.075
#define KSPLIT_DECODE_COST 0.92
/* A full block's key step on the wgmma body (path = wgmma) against mma.sync: the unified mma.sync body's
 * prefill rows ran at about 220 TFLOP/s on the H200 (session 9), prefill's wgmma plain schedule at 400
 * (session 5, D 64); this body is plain too, with cp.async fills, so about 360 is assumed. A model, not a
 * measurement: the bench rows `-mma` against the default set it. The key split's factors apply on top. */
#define WGMMA_FULL_COST 0.6

uint32_t kn_attn_unified_variants(const rk_instance *in, const rk_target *t, uint64_t locked, rk_instance *general,
                                  rk_variant *out, uint32_t max) {
    const rk_attention_spec *a = &in->u.attn;
    if (!t || !max || (locked >> KN_AK_BM & 1) || (locked >> KN_AK_WARPS & 1) || a->block_m <= SMALL_ROWS) return 0;
    uint32_t n = 0;
    rk_instance v = *in;
    v.u.attn.block_m = SMALL_ROWS;
    v.u.attn.warps = 1;
    /* 16 rows are one warp's: no block of the variant is a full one, so no wgmma body */
    if (v.u.attn.path == RK_ATTN_PF_WGMMA) v.u.attn.path = RK_ATTN_PF_MMA;
    /* re-tune only the key tiles (block_n, stages) unless they were given */
    uint64_t keep = ~(((uint64_t)1 << KN_AK_BN) | ((uint64_t)1 << KN_AK_STAGES)) | locked;
    rk_shape s;
    if (rk_shape_default(in->family, &s)) return 0;
    s.dim[DD] = a->head_dim;
    kn_attn_unified_tune(&v, t, &s, keep);
    if (kn_attn_unified_validate(&v.u.attn, t)) return 0;
    /* any batch: rocke run picks the variant per batch (rk_attention_unified_pick), not by this range */
    out[n] = (rk_variant){.inst = v, .ndims = 1, .dim = {"B"}, .lo = {1}, .hi = {65535}};
    snprintf(out[n].tag, sizeof out[n].tag, "rows%u", SMALL_ROWS);
    n++;
    /* in's rows without the key-split body, for batches of few decodes; 2 stages unless given
     * (the 8192-token prefill: 2.37 ms against 2.47 on 3) */
    if (n < max && !(locked >> KN_AK_WHOLE & 1) && kn_attn_unified_key_splits(a, t)) {
        v = *in;
        v.u.attn.whole_keys = true;
        if (!(locked >> KN_AK_STAGES & 1) && v.u.attn.stages > 2) v.u.attn.stages = 2;
        if (!kn_attn_unified_validate(&v.u.attn, t)) {
            out[n] = (rk_variant){.inst = v, .ndims = 1, .dim = {"B"}, .lo = {1}, .hi = {65535}};
            snprintf(out[n].tag, sizeof out[n].tag, "whole");
            n++;
        }
    }
    *general = *in;
    return n;
}

/* Row units of the batch for candidate c: each query block's keys (up to
 * its last row's diagonal) times max(block_m, COPY_ROWS), scaled by what
 * the key split costs (a decode's block: rows within one warp's share). */
static double rows_cost(const uint64_t *lq, const uint64_t *lk, uint32_t n, uint32_t G,
                        const rk_attention_unified_candidate *c) {
    uint64_t bq = c->block_m / G, warp_rows = c->block_m / (c->warps ? c->warps : 1);
    double rows = c->block_m > COPY_ROWS ? c->block_m : COPY_ROWS, full = 0, dec = 0;
    for (uint32_t b = 0; b < n; b++) {
        uint64_t off = lk[b] - lq[b];
        for (uint64_t q0 = 0; q0 < lq[b]; q0 += bq) {
            uint64_t tokens = q0 + bq < lq[b] ? bq : lq[b] - q0;
            double keys = (double)(off + q0 + tokens);
            if (tokens * G <= warp_rows) dec += keys;
            else full += keys;
        }
    }
    if (c->wgmma_full) full *= WGMMA_FULL_COST;
    if (c->key_split) return rows * (full * KSPLIT_FULL_COST + dec * KSPLIT_DECODE_COST);
    return rows * (full + dec);
}

uint32_t rk_attention_unified_pick(const uint64_t *lq, const uint64_t *lk, uint32_t n, uint32_t G,
                                   const rk_attention_unified_candidate *c, uint32_t nc, double *cost) {
    uint32_t best = 0;
    double least = 0;
    bool any = false;
    for (uint32_t i = 0; i < nc; i++) {
        bool fits = G && c[i].block_m >= G;
        double u = fits ? rows_cost(lq, lk, n, G, &c[i]) : 0;
        if (cost) cost[i] = u;
        if (!fits) continue;
        if (!any || u < least) best = i, least = u;
        any = true;
    }
    return best;
}

typedef struct batch_of {
    uint64_t n, Hq, Hkv, Sq, D;
    const uint64_t *lq, *lk;
    int64_t left;
} batch_of;

/* Blocks that read keys with `splits` (each query block takes keys /
 * KN_ATTN_SPLIT_KEYS of them, 1..splits: the kernel's rule, split_range);
 * *qblocks: the non-empty (query block, KV head) pairs. */
static uint64_t blocks_at(const batch_of *d, const rk_attention_spec *a, uint32_t splits, uint64_t *qblocks) {
    uint64_t G = d->Hq / d->Hkv, bq = a->block_m / G, bn = a->block_n, blocks = 0, qb = 0;
    for (uint64_t b = 0; b < d->n; b++) {
        uint64_t q = d->lq[b], off = d->lk[b] - q;
        for (uint64_t q0 = 0; q0 < q; q0 += bq) {
            uint64_t d0 = off + q0, kend = d0 + (q0 + bq < q ? bq : q - q0);
            uint64_t lo = d->left >= 0 && (int64_t)d0 > d->left ? (d0 - (uint64_t)d->left) / bn : 0;
            uint64_t keys = ((kend + bn - 1) / bn - lo) * bn, nb = keys / KN_ATTN_SPLIT_KEYS;
            blocks += nb < 1 ? 1 : nb > splits ? splits : nb;
            qb++;
        }
    }
    *qblocks = qb * d->Hkv;
    return blocks * d->Hkv;
}

/* Work_o and Work_ml over total_q x Hq x splits, Arrivals over total_q x Hkv (f32). */
static uint64_t work_at(const batch_of *d, uint32_t splits) {
    return splits < 2 ? 0 : 4 * (d->Sq * d->Hq * splits * (d->D + 2) + d->Sq * d->Hkv);
}

/* 2-D while the query blocks x KV heads already give every compute unit a
 * block; else splits double while the blocks stay under two per compute
 * unit, the doubling adds blocks (some query block still has 256 keys a
 * split) and the workspace stays within the limit. */
rk_status rk_attention_unified_launch_for(const rk_instance *in, const rk_target *t, const uint64_t *lq,
                                          const uint64_t *lk, uint32_t n, uint64_t Hq, uint64_t Hkv,
                                          int64_t window_left, uint64_t work_limit, rk_attention_unified_launch *out) {
    if (in->family != RK_FAMILY_ATTENTION || in->u.attn.mode != RK_ATTN_UNIFIED)
        return rk_fail(RK_ERR_INVALID, "the split-KV choice is for attention instances built with --mode unified");
    if (!Hkv || Hq % Hkv || Hq / Hkv > in->u.attn.block_m)
        return rk_fail(RK_ERR_INVALID, "attention unified: Hq = %llu over Hkv = %llu does not fit block_m = %u",
                       (unsigned long long)Hq, (unsigned long long)Hkv, in->u.attn.block_m);
    const rk_attention_spec *a = &in->u.attn;
    uint64_t Sq = 0;
    for (uint32_t b = 0; b < n; b++) {
        if (lq[b] > lk[b])
            return rk_fail(RK_ERR_INVALID, "attention unified: sequence %u has %llu new queries over %llu keys "
                           "(q_len <= kv_len)", b, (unsigned long long)lq[b], (unsigned long long)lk[b]);
        Sq += lq[b];
    }
    batch_of d = {n, Hq, Hkv, Sq, a->head_dim, lq, lk, a->mask == RK_ATTN_MASK_WINDOW ? window_left : -1};
    uint64_t limit = work_limit ? work_limit : RK_ATTN_UNIFIED_WORK_LIMIT, cu = t->compute_units ? t->compute_units : 1;
    uint64_t qblocks, blocks = blocks_at(&d, a, 1, &qblocks), more, unused;
    uint32_t s = 1;
    while (s * 2 <= a->kv_splits && qblocks < cu && blocks < 2 * cu && work_at(&d, s * 2) <= limit &&
           (more = blocks_at(&d, a, s * 2, &unused)) > blocks) {
        s *= 2;
        blocks = more;
    }
    *out = (rk_attention_unified_launch){.splits = s, .query_blocks = qblocks, .blocks = blocks,
                                         .work_bytes = work_at(&d, s)};
    return RK_OK;
}

rk_status rk_problem_attention_unified_launch(rk_problem *p, const rk_target *t, uint64_t work_limit,
                                              rk_attention_unified_launch *out) {
    if (p->inst.family != RK_FAMILY_ATTENTION || p->inst.u.attn.mode != RK_ATTN_UNIFIED)
        return rk_fail(RK_ERR_INVALID, "the split-KV choice is for attention instances built with --mode unified");
    uint64_t B = rk_problem_dim(p, "B");
    const rk_host_buf *qs = kn_buf(p, "query_start"), *lens = kn_buf(p, "kv_lens");
    uint64_t *lq = malloc((B ? 2 * B : 2) * sizeof *lq);
    if (!lq) return rk_fail(RK_ERR_NOMEM, "attention unified: out of memory for the batch's lengths");
    uint64_t *lk = lq + B;
    for (uint64_t b = 0; b < B; b++) {
        double q0 = kn_get(qs, b), q1 = kn_get(qs, b + 1), kv = kn_get(lens, b);
        lq[b] = q1 > q0 ? (uint64_t)(q1 - q0) : 0;
        lk[b] = kv > 0 ? (uint64_t)kv : 0;
        if (lk[b] < lq[b]) lk[b] = lq[b];   /* rk_problem_check_inputs names this sequence */
    }
    int64_t left = p->inst.u.attn.mask == RK_ATTN_MASK_WINDOW ? (int64_t)kn_scalar(p, "window_left") : -1;
    rk_status st = rk_attention_unified_launch_for(&p->inst, t, lq, lk, (uint32_t)B, rk_problem_dim(p, "Hq"),
                                                   rk_problem_dim(p, "Hkv"), left, work_limit, out);
    free(lq);
    if (st || p->inst.u.attn.kv_splits == 1) return st;
    return rk_problem_set_scalar(p, "num_splits", out->splits);
}

rk_status rk_problem_attention_splits(rk_problem *p, const rk_target *t, uint32_t *splits) {
    if (p->inst.family == RK_FAMILY_ATTENTION && p->inst.u.attn.mode == RK_ATTN_DECODE)
        return kn_attn_decode_splits(p, t, splits);
    rk_attention_unified_launch l;
    rk_status st = rk_problem_attention_unified_launch(p, t, 0, &l);
    if (!st) *splits = l.splits;
    return st;
}

bool rk_attention_unified_key_splits(const rk_instance *in, const rk_target *t) {
    return in->family == RK_FAMILY_ATTENTION && in->u.attn.mode == RK_ATTN_UNIFIED && t &&
           kn_attn_unified_key_splits(&in->u.attn, t);
}
