/* rocke — unified attention's full query blocks on Hopper (path = wgmma,
 * sm_90a): a block of more rows than one warp's (a prefill chunk's tokens x
 * the G heads of its KV head) runs its 64 rows as one warpgroup on wgmma,
 * where the decode blocks of the same launch keep the mma.sync body
 * (attention_unified_build.c).
 *   stages  Q [64 rows, D] and `stages` K and V tiles [block_n keys, D], each
 *           in D / 64 boxes of 64 columns under the 128-byte swizzle, the
 *           layout a TMA box would write; the pages are scattered, so no box
 *           reads them: every thread's cp.async chunks (16 bytes, e4m3 caches
 *           8 bytes converted) land at the box's swizzled places, each key's
 *           page found through the block table once per chunk row;
 *   ring    a cp.async group per key block, `stages - 1` ahead; a stage is
 *           read by wgmma after wait_group, a proxy fence (the generic
 *           proxy's writes made visible to the async proxy) and a barrier;
 *           the refill is issued while that block's S = Q K^T runs;
 *   step    S = Q K^T by wgmma m64n{bn}k16 from descriptors (SS; prefill's
 *           chain, kn_attn_hopper_qk), the unified scores (scale, softcap,
 *           ALiBi, the causal / window mask) and prefill's online softmax on
 *           the accumulator's lane map, P rounded to 16 bits as register A
 *           fragments and O += P V by wgmma_rs with V an N-major B
 *           (kn_attn_hopper_pv);
 *   output  the unified epilogue on the same lane map (O and LSE, or the
 *           split's partials and the merge).
 * Layer: kernels. */
#include <math.h>
#include <string.h>

#include "attention_hopper.h"
#include "attention_unified_kernel.h"

/* The body's tiles: prefill's Hopper plan of the block (64 rows, one
 * warpgroup, plain schedule) and the swizzled copies of a Q box and a K/V box. */
typedef struct wg_tiles {
    kn_attn_hplan hp;
    rk_tile_copy cq, ckv;
} wg_tiles;

static rk_status box_copy(uint32_t rows, rk_scalar dt, rk_tile_copy *out) {
    rk_lds_layout lds;
    rk_status st = rk_lds_layout_hw_swizzle(rows, KN_AH_BOX, 2, 128, &lds);
    return st ? st : rk_tile_copy_make(rows, KN_AH_BOX, 8, 128, dt, &lds, true, out);
}

static rk_status wg_plan(const rk_attention_spec *s, const rk_target *t, wg_tiles *out) {
    if (s->block_m != 64 || s->warps != 4)
        return rk_fail(RK_ERR_INVALID, "attention: mode = unified with path = wgmma runs a full query block as one "
                       "warpgroup: knobs 'block_m' = %u, 'warps' = %u, legal 64 and 4 (path=mma serves other tiles)",
                       s->block_m, s->warps);
    if (s->stages < 2)
        return rk_fail(RK_ERR_INVALID, "attention: mode = unified with path = wgmma keeps 2 or 3 K/V stages in "
                       "flight: knob 'stages' = %u (path=mma serves 1)", s->stages);
    rk_attention_spec w = *s;
    w.mode = RK_ATTN_PREFILL, w.path = RK_ATTN_PF_WGMMA, w.schedule = RK_ATTN_SCHED_PLAIN;
    w.mask = RK_ATTN_MASK_NONE, w.lse = false, w.layout = RK_ATTN_BHSD, w.kv_dtype = RK_ATTN_KV_SAME;
    rk_status st = kn_attn_hopper_plan(&w, t, &out->hp);
    if (st) {
        const char *m = rk_error_message();
        if (!strncmp(m, "attention: ", 11)) m += 11;
        return rk_fail(st, "attention: mode = unified's full blocks on %s", m);
    }
    if ((st = box_copy(64, s->dtype, &out->cq)) || (st = box_copy(s->block_n, s->dtype, &out->ckv)))
        return rk_fail(st, "attention: mode = unified with path = wgmma: the swizzled copies: %s",
                       rk_error_message());
    return RK_OK;
}

rk_status kn_attn_unified_wgmma_check(const rk_attention_spec *s, const rk_target *t, uint32_t *elems) {
    wg_tiles w;
    rk_status st = wg_plan(s, t, &w);
    if (st) return st;
    *elems = w.hp.q_elems + 2 * s->stages * w.hp.kv_elems;
    return RK_OK;
}

/* The body's state beside the block's (g: its copy on the wgmma lane map). */
typedef struct wg_body {
    kn_attn_ublock *g;
    const wg_tiles *w;
    const char *dt;
    rk_tile_copy_lanes lq, lkv;
} wg_body;

static rk_value c32w(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* Q's rows (token r / G, head hk * G + r % G) into the D / 64 swizzled boxes
 * from element 0; rows past the sequence become zeros. One async group. */
static void wg_gather_q(wg_body *b) {
    kn_attn_ublock *g = b->g;
    rk_kernel *k = g->k;
    const rk_tile_copy *c = &b->w->cq;
    uint32_t D = g->s->head_dim;
    rk_value zero = g->c0, zero64 = rk_const_i64(k, 0);
    for (uint32_t p = 0; p < c->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, c, p);
        rk_value in = rk_build_cmp(k, "lt", b->lq.row[p], g->nrows);
        rk_value row = rk_build_select(k, in, b->lq.row[p], zero);
        rk_value base = kn_attn_unified_row_at(g, row, D);
        rk_value c64 = i64(k, b->lq.col[p]);
        rk_value at = rk_build_add(k, base, c64);
        for (uint32_t x = 0; x < D / KN_AH_BOX; x++) {
            rk_value xo = rk_const_i64(k, x * KN_AH_BOX);
            rk_value ax = rk_build_add(k, at, xo);
            rk_value idx = rk_build_select(k, in, ax, zero64);
            rk_value bo = c32w(k, x * 64 * KN_AH_BOX);
            rk_value dst = rk_build_add(k, bo, b->lq.dst[p]);
            rk_tile_copy_chunk(k, c, g->p[g->ix->q], in, idx, g->smem, dst);
        }
        if (partial) rk_if_end(k, NULL, 0);
    }
    rk_build_async_commit_group(k);
}

/* First element of stage st's K tile (V follows it by one tile). */
static rk_value stage_k(wg_body *b, rk_value st) {
    rk_kernel *k = b->g->k;
    rk_value sz = c32w(k, 2 * b->w->hp.kv_elems), q = c32w(k, b->w->hp.q_elems);
    rk_value o = rk_build_mul(k, st, sz);
    return rk_build_add(k, q, o);
}

/* Key block j's K and V into stage st, one async group: a chunk row's key
 * looked up through the block table once for its D / 64 boxes; keys past
 * the sequence, and every key of a j past the split, land as zeros. */
static void wg_issue(wg_body *b, rk_value j, rk_value st) {
    kn_attn_ublock *g = b->g;
    rk_kernel *k = g->k;
    const rk_tile_copy *c = &b->w->ckv;
    uint32_t D = g->s->head_dim, bn = g->pl->bn;
    rk_value zero64 = rk_const_i64(k, 0);
    rk_value valid = rk_build_cmp(k, "lt", j, g->khi);
    rk_value bnv = c32w(k, bn);
    rk_value key0 = rk_build_mul(k, j, bnv);
    rk_value kbase = stage_k(b, st);
    rk_value kv = c32w(k, b->w->hp.kv_elems);
    rk_value vbase = rk_build_add(k, kbase, kv);
    kn_attn_upages pgs = kn_attn_unified_pages(g);
    for (uint32_t p = 0; p < c->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, c, p);
        rk_value key = rk_build_add(k, key0, b->lkv.row[p]);
        rk_value ok;
        rk_value at = kn_attn_unified_page_at(g, &pgs, key, b->lkv.col[p], valid, &ok);
        for (uint32_t x = 0; x < D / KN_AH_BOX; x++) {
            rk_value xo = rk_const_i64(k, x * KN_AH_BOX);
            rk_value ax = rk_build_add(k, at, xo);
            rk_value idx = rk_build_select(k, ok, ax, zero64);
            rk_value bo = c32w(k, x * bn * KN_AH_BOX);
            rk_value d0 = rk_build_add(k, bo, b->lkv.dst[p]);
            rk_value kd = rk_build_add(k, kbase, d0);
            rk_value vd = rk_build_add(k, vbase, d0);
            if (g->s->kv_dtype == RK_ATTN_KV_SAME) {
                rk_tile_copy_chunk(k, c, g->p[g->ix->kc], ok, idx, g->smem, kd);
                rk_tile_copy_chunk(k, c, g->p[g->ix->vc], ok, idx, g->smem, vd);
            } else {
                kn_attn_unified_fp8_chunk(g, c->vec, g->p[g->ix->kc], ok, idx, kd);
                kn_attn_unified_fp8_chunk(g, c->vec, g->p[g->ix->vc], ok, idx, vd);
            }
        }
        if (partial) rk_if_end(k, NULL, 0);
    }
    rk_build_async_commit_group(k);
}

/* The m64nNk16 accumulator as n / 8 pieces of the m64n8k16 atom (4 f32 each) and back. */
static void wg_split(rk_kernel *k, rk_value v, uint32_t pieces, rk_value *out) {
    for (uint32_t i = 0; i < pieces; i++) {
        int32_t mask[4] = {(int32_t)(4 * i), (int32_t)(4 * i + 1), (int32_t)(4 * i + 2), (int32_t)(4 * i + 3)};
        out[i] = rk_build_vshuffle(k, v, v, mask, 4);
    }
}
static rk_value wg_join(rk_kernel *k, const rk_value *pieces, uint32_t n) {
    rk_value v = pieces[0];
    for (uint32_t i = 1; i < n; i++) v = rk_build_vconcat(k, v, pieces[i]);
    return v;
}

/* Key block j in stage st, its S = Q K^T in flight (`fly`, issued from
 * kbase): S back, scores and mask, softmax (m, l, O updated), O += P V. */
static rk_value wg_step(wg_body *b, rk_value j, rk_value kbase, rk_value fly, rk_value *m, rk_value *l, rk_value o) {
    kn_attn_ublock *g = b->g;
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    rk_value kv = c32w(k, b->w->hp.kv_elems);
    rk_value vbase = rk_build_add(k, kbase, kv);
    rk_value sacc;
    rk_build_wgmma_wait_group(k, 0, &fly, 1, &sacc);
    rk_value sp[MAXV], op[MAXV], pp[MAXV];
    wg_split(k, sacc, pl->sn, sp);
    kn_attn_unified_scores(g, pl, j, NULL, sp);
    wg_split(k, o, pl->on, op);
    kn_attn_softmax_step(k, pl, sp, m, l, op, pp);
    rk_value pacc = wg_join(k, pp, pl->sn);
    rk_value pf[KN_AH_PF_MAX];
    rk_tile_wgmma_acc_to_a(k, pacc, pl->bn, g->s->dtype, pf);
    rk_value oin = wg_join(k, op, pl->on);
    rk_value ofly = kn_attn_hopper_pv(k, pl, b->dt, g->smem, vbase, pf, oin);
    rk_value out;
    rk_build_wgmma_wait_group(k, 0, &ofly, 1, &out);
    return out;
}

void kn_attn_unified_wgmma_body(kn_attn_ublock *gm, const rk_target *t) {
    wg_tiles w;
    rk_status pst = wg_plan(gm->s, t, &w);
    RK_ASSERT(pst == RK_OK, "attention unified: the wgmma body of a validated instance");
    const kn_attn_plan *pl = &w.hp.pl;
    RK_ASSERT(pl->mi == 1 && pl->rows.nrows <= RK_TILE_ACC_MAX_SLOTS && pl->on <= MAXV,
              "attention unified: the wgmma body's accumulator geometry");
    /* the block as the wgmma lane map sees it: 64 rows of one warpgroup, lane = thread */
    kn_attn_ublock gc = *gm, *g = &gc;
    rk_kernel *k = g->k;
    g->pl = pl;
    g->wg = true;
    g->w.lane = g->w.tid;
    g->rw = g->c0;
    g->nrows_st = g->nrows;
    g->fz = rk_const_f32(k, 0.0f);
    wg_body b = {.g = g, .w = &w, .dt = g->s->dtype == RK_S_BF16 ? "bf16" : "f16"};
    rk_tile_copy_lanes_init(k, &w.cq, g->w.tid, &b.lq);
    rk_tile_copy_lanes_init(k, &w.ckv, g->w.tid, &b.lkv);
    wg_gather_q(&b);
    kn_attn_unified_row_values(g);
    uint32_t S = pl->stages;
    for (uint32_t i = 0; i + 1 < S; i++) {
        rk_value ci = c32w(k, i);
        rk_value j = rk_build_add(k, g->klo, ci);
        wg_issue(&b, j, ci);
    }
    /* carried: m and l per row slot, then O (the whole m64nDk16 accumulator) */
    uint32_t nr = pl->rows.nrows;
    rk_value init[2 * RK_TILE_ACC_MAX_SLOTS + 1], cur[2 * RK_TILE_ACC_MAX_SLOTS + 1], fin[2 * RK_TILE_ACC_MAX_SLOTS + 1];
    rk_value ninf = rk_const_f32(k, -INFINITY);
    for (uint32_t r = 0; r < nr; r++) init[r] = ninf, init[nr + r] = g->fz;
    rk_type o_t = rk_type_vec(k, RK_T_F32, pl->d / 2);
    init[2 * nr] = rk_build_constant_vec(k, o_t, 0.0);
    rk_value count = rk_build_sub(k, g->khi, g->klo);
    rk_value it = rk_for_begin(k, g->c0, count, g->c1, "kvwg", 2 * nr + 1, init, NULL, cur);
    {
        rk_value m[RK_TILE_ACC_MAX_SLOTS], l[RK_TILE_ACC_MAX_SLOTS];
        for (uint32_t r = 0; r < nr; r++) m[r] = cur[r], l[r] = cur[nr + r];
        rk_value j = rk_build_add(k, g->klo, it);
        rk_value Sv = c32w(k, S), ahead = c32w(k, S - 1);
        rk_build_async_wait_group(k, S - 2);
        rk_build_fence_proxy_async(k);   /* this thread's copies, visible to wgmma's reads */
        rk_build_sync(k);                /* everyone's; and every read of the stage refilled next is done */
        /* S of this block first, then the refill of the stage the last step read (its P V was waited
         * for before the barrier), so the copies' address work runs under the product */
        rk_value cs = rk_build_umod(k, it, Sv);
        rk_value kbase = stage_k(&b, cs);
        rk_value fly = kn_attn_hopper_qk(k, pl, b.dt, g->smem, g->c0, g->smem, kbase);
        rk_value nt = rk_build_add(k, it, ahead);
        rk_value nj = rk_build_add(k, g->klo, nt);
        rk_value nst = rk_build_umod(k, nt, Sv);
        wg_issue(&b, nj, nst);
        rk_value o = wg_step(&b, j, kbase, fly, m, l, cur[2 * nr]);
        rk_value y[2 * RK_TILE_ACC_MAX_SLOTS + 1];
        for (uint32_t r = 0; r < nr; r++) y[r] = m[r], y[nr + r] = l[r];
        y[2 * nr] = o;
        rk_for_end(k, y, 2 * nr + 1, fin);
    }
    rk_build_async_wait_group(k, 0);
    rk_value res[3 * MAXV];
    for (uint32_t r = 0; r < 2 * nr; r++) res[r] = fin[r];
    wg_split(k, fin[2 * nr], pl->on, res + 2 * nr);
    kn_attn_unified_epilogue(g, res);
}
