/* rocke — the attention kernel on Hopper (path = wgmma, sm_90a; the
 * FlashAttention-3 data path): block (x, y, z) takes query rows
 * [x*block_m, +block_m) of query head y of batch z, one consumer warpgroup
 * per 64 rows.
 *   Q          one TMA load (D / 64 boxes of block_m rows under the
 *              128-byte swizzle) on its own mbarrier;
 *   KV ring    key block j's K and V tiles (D / 64 boxes of block_n rows
 *              each) into stage fill % stages, completing on the stage's
 *              mbarrier (expect-tx of both tiles); the prologue issues
 *              `stages` fills, the block refills a stage once every
 *              warpgroup is done with it;
 *   step       S = Q K^T by tile.wgmma (both K-major from descriptors), the
 *              shared scale / mask / online softmax on the accumulator's
 *              lane map (rows across the 4 lanes of a quad), P rounded to
 *              16 bits as register A fragments (rk_tile_wgmma_acc_to_a), and
 *              O += P V by tile.wgmma_rs with V [keys, D] an N-major B (the
 *              transpose bit);
 *   epilogue   the shared one: O = o / l, LSE.
 * schedule = plain: every warpgroup consumes; thread 0 loads Q, issues the
 * first `stages` fills and refills a stage after the block barrier that
 * follows its last read. schedule = ws: warpgroup 0 is a producer
 * (setmaxnreg.dec 24) whose thread 0 loads Q and streams every fill once
 * the stage's "empty" mbarrier says its previous contents are read; the
 * consumers (setmaxnreg.inc 240) release a stage by lane 0 of each warp
 * arriving on it (4 arrivals per consumer warpgroup); no block barrier in
 * the loop. schedule = overlap: ws, and the consumers issue S of block j
 * with P V of block j - 1 and run block j's softmax while that P V is in
 * flight (consume_overlap).
 * Each map has a token per row (map_coords): bhsd rows (b * H + h) * S + s;
 * bshd rows b * S + s and varlen rows cu_seqlens[b] + s, with head h's D at
 * column h * sh. A box that runs past the sequence reads the next head's,
 * batch's or sequence's rows, which the key mask (keys) or the row test of
 * the stores (queries) discards; TMA zero-fills past the tensor. Layer:
 * kernels. */
#include <math.h>

#include "attention_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

typedef struct hk {
    rk_kernel *k;
    const kn_attn_hplan *hp;
    const rk_attention_spec *s;
    const char *dt;                /* "f16" or "bf16" */
    rk_value qmap, kmap, vmap;
    rk_value sQ, sK, sV;
    rk_tile_tma_ring qring, ring;
    rk_value krow0;                /* K / V map row of the sequence's first key */
    bool head_cols;                /* bshd, varlen: a head's D starts at map column h * sh */
    rk_value qx0, kx0, vx0;        /* (head_cols) the block's head's first column in Q, K, V */
} hk;

/* Map column of box c of a head starting at column x0 (head_cols), else c * 64. */
static rk_value box_x(const hk *h, rk_value x0, uint32_t c) {
    rk_value x = c32(h->k, c * KN_AH_BOX);
    return h->head_cols ? rk_build_add(h->k, x0, x) : x;
}

/* The block's map coordinates (the maps: kn_attn_hopper_tensormap_view).
 * bhsd: rows (b * H + h) * S + s, D at column 0; bshd: rows b * S + s,
 * varlen: rows cu_seqlens[b] + s, both with head h's D at column h * sh.
 * Sets krow0 and the heads' columns; returns Q's row of query m0. */
static rk_value map_coords(hk *h, const kn_attn_ctx *g, const rk_value *p, const kn_attn_sig *ix,
                           const kn_attn_block *blk) {
    rk_kernel *k = h->k;
    int lay = h->s->layout;   /* rk_attn_layout */
    h->head_cols = lay != RK_ATTN_BHSD;
    rk_value qr, kr;
    if (lay == RK_ATTN_BHSD) {
        rk_value bq = rk_build_mul(k, blk->b, p[ix->Hq]);
        rk_value bqh = rk_build_add(k, bq, blk->h);
        qr = rk_build_mul(k, bqh, p[ix->Sq]);
        rk_value bk = rk_build_mul(k, blk->b, p[ix->Hkv]);
        rk_value bkh = rk_build_add(k, bk, blk->hk);
        kr = rk_build_mul(k, bkh, p[ix->Skv]);
    } else if (lay == RK_ATTN_BSHD) {
        qr = rk_build_mul(k, blk->b, p[ix->Sq]);
        kr = rk_build_mul(k, blk->b, p[ix->Skv]);
    } else {
        qr = blk->qstart;
        kr = blk->kstart;
    }
    h->krow0 = kr;
    if (h->head_cols) {
        /* head strides are i64 arguments; the map's columns (one token row) are below 2^31 */
        const rk_value heads[3] = {blk->h, blk->hk, blk->hk};
        rk_value *x0[3] = {&h->qx0, &h->kx0, &h->vx0};
        for (int t = 0; t < 3; t++) {
            rk_value sh = rk_build_trunc(k, p[ix->stride[t][1]], RK_T_I32);
            *x0[t] = rk_build_mul(k, heads[t], sh);
        }
    }
    return rk_build_add(k, qr, g->m0);
}

/* Thread 0: key block j (i32) into stage fill % stages (fill i32). */
static void fill(hk *h, rk_value j, rk_value fillno) {
    rk_kernel *k = h->k;
    const kn_attn_plan *pl = &h->hp->pl;
    rk_value S = c32(k, pl->stages);
    rk_value st = rk_build_umod(k, fillno, S);
    rk_value kv = c32(k, h->hp->kv_elems);
    rk_value base = rk_build_mul(k, st, kv);
    rk_value bn = c32(k, pl->bn);
    rk_value jr = rk_build_mul(k, j, bn);
    rk_value y = rk_build_add(k, h->krow0, jr);
    rk_tile_tma_ring_expect(k, &h->ring, st);
    for (uint32_t c = 0; c < h->hp->chunks; c++) {
        rk_value off = c32(k, c * pl->bn * KN_AH_BOX);
        rk_value e = rk_build_add(k, base, off);
        rk_value xk = box_x(h, h->kx0, c);
        rk_tile_tma_box(k, &h->ring, h->kmap, h->sK, e, st, xk, y);
        rk_value xv = box_x(h, h->vx0, c);
        rk_tile_tma_box(k, &h->ring, h->vmap, h->sV, e, st, xv, y);
    }
}

/* if (tid == 0 && fill < count) fill(lo + fill) */
static void fill_if(hk *h, rk_value tid, rk_value lo, rk_value fillno, rk_value count) {
    rk_kernel *k = h->k;
    rk_value zero = c32(k, 0);
    rk_value t0 = rk_build_cmp(k, "eq", tid, zero);
    rk_value live = rk_build_cmp(k, "lt", fillno, count);
    rk_value go = rk_build_and(k, t0, live);
    rk_if_begin(k, go);
    rk_value j = rk_build_add(k, lo, fillno);
    fill(h, j, fillno);
    rk_if_end(k, NULL, 0);
}

/* The m64nNk16 accumulator v as n / 8 pieces of the m64n8k16 atom (4 f32 each) and back. */
void kn_attn_hopper_split(rk_kernel *k, rk_value v, uint32_t pieces, rk_value *out) {
    for (uint32_t i = 0; i < pieces; i++) {
        int32_t mask[4] = {(int32_t)(4 * i), (int32_t)(4 * i + 1), (int32_t)(4 * i + 2), (int32_t)(4 * i + 3)};
        out[i] = rk_build_vshuffle(k, v, v, mask, 4);
    }
}
rk_value kn_attn_hopper_join(rk_kernel *k, const rk_value *pieces, uint32_t n) {
    rk_value v = pieces[0];
    for (uint32_t i = 1; i < n; i++) v = rk_build_vconcat(k, v, pieces[i]);
    return v;
}

rk_value kn_attn_hopper_qk(rk_kernel *k, const kn_attn_plan *pl, const char *dt, rk_value sq, rk_value qbase,
                           rk_value sk, rk_value kbase) {
    rk_type acc_t = rk_type_vec(k, RK_T_F32, pl->bn / 2);
    rk_value acc = rk_build_constant_vec(k, acc_t, 0.0);
    rk_build_wgmma_fence(k);
    for (uint32_t kk = 0; kk < pl->d / 16; kk++) {
        uint32_t c = kk / 4, r = kk % 4;
        rk_value qo = c32(k, c * pl->bm * KN_AH_BOX + 16 * r), ko = c32(k, c * pl->bn * KN_AH_BOX + 16 * r);
        rk_value qe = rk_build_add(k, qbase, qo);
        rk_value ke = rk_build_add(k, kbase, ko);
        rk_value da = rk_tile_wgmma_desc_k128(k, sq, qe);
        rk_value db = rk_tile_wgmma_desc_k128(k, sk, ke);
        const rk_wgmma_opts o = {.scale_d = {kk == 0, false}};   /* the first slice starts from zero */
        acc = rk_build_wgmma_ex(k, dt, acc, da, db, pl->bn, kk ? NULL : &o);
    }
    rk_build_wgmma_commit_group(k);
    return acc;
}

rk_value kn_attn_hopper_pv(rk_kernel *k, const kn_attn_plan *pl, const char *dt, rk_value sv, rk_value vbase,
                           const rk_value *pf, rk_value o) {
    rk_build_wgmma_fence(k);
    const rk_wgmma_rs_opts opt = {.trans_b = RK_SOME(true)};
    for (uint32_t q = 0; q < pl->bn / 16; q++) {
        rk_value vo = c32(k, q * 16 * KN_AH_BOX);
        rk_value ve = rk_build_add(k, vbase, vo);
        rk_value dv = rk_tile_wgmma_desc_mn128(k, sv, ve, pl->bn * RK_TILE_WGMMA_ROW_BYTES);
        o = rk_build_wgmma_rs_ex(k, dt, o, pf[q], dv, pl->d, &opt);
    }
    rk_build_wgmma_commit_group(k);
    return o;
}

/* S = Q K^T of stage st for warpgroup wg: D / 16 chained wgmmas, K-major
 * slices 16 elements (32 bytes) apart inside the swizzled rows. */
static rk_value scores(hk *h, rk_value st, rk_value wg, bool wait) {
    rk_kernel *k = h->k;
    const kn_attn_plan *pl = &h->hp->pl;
    rk_value kv = c32(k, h->hp->kv_elems), wrows = c32(k, 64 * KN_AH_BOX);
    rk_value kbase = rk_build_mul(k, st, kv);
    rk_value qbase = rk_build_mul(k, wg, wrows);
    rk_value acc = kn_attn_hopper_qk(k, pl, h->dt, h->sQ, qbase, h->sK, kbase);
    if (!wait) return acc;   /* in flight: a later tile.wgmma_wait_group hands it on */
    rk_value done;
    rk_build_wgmma_wait_group(k, 0, &acc, 1, &done);
    return done;
}

/* O += P V of stage st: block_n / 16 wgmma_rs, V's k16 slices 16 key rows
 * (1024 elements) apart, its 64-column boxes block_n * 128 bytes apart. */
static rk_value pv(hk *h, rk_value st, const rk_value *pf, rk_value o, bool wait) {
    rk_kernel *k = h->k;
    const kn_attn_plan *pl = &h->hp->pl;
    rk_value kv = c32(k, h->hp->kv_elems);
    rk_value vbase = rk_build_mul(k, st, kv);
    o = kn_attn_hopper_pv(k, pl, h->dt, h->sV, vbase, pf, o);
    if (!wait) return o;
    rk_value done;
    rk_build_wgmma_wait_group(k, 0, &o, 1, &done);
    return done;
}

/* Thread `who` (i32): the Q boxes on the Q barrier. */
static void load_q(hk *h, rk_value who, rk_value qrow0) {
    rk_kernel *k = h->k;
    const kn_attn_plan *pl = &h->hp->pl;
    rk_value zero = c32(k, 0);
    rk_value t0 = rk_build_cmp(k, "eq", who, zero);
    rk_if_begin(k, t0);
    rk_tile_tma_ring_expect(k, &h->qring, zero);
    for (uint32_t c = 0; c < h->hp->chunks; c++) {
        rk_value e = c32(k, c * pl->bm * KN_AH_BOX);
        rk_value x = box_x(h, h->qx0, c);
        rk_tile_tma_box(k, &h->qring, h->qmap, h->sQ, e, zero, x, qrow0);
    }
    rk_if_end(k, NULL, 0);
}

/* schedule = ws, the producer warpgroup: its thread 0 loads Q, then streams
 * every key block once its stage is free (the consumers' releases). */
static void producer(hk *h, rk_value twg, rk_value qrow0, rk_value lo, rk_value count) {
    rk_kernel *k = h->k;
    rk_build_setmaxnreg(k, "dec", KN_AH_PRODUCER_REGS);
    load_q(h, twg, qrow0);
    rk_value zero = c32(k, 0), one = c32(k, 1);
    rk_value t0 = rk_build_cmp(k, "eq", twg, zero);
    rk_if_begin(k, t0);
    rk_value f = rk_for_begin(k, zero, count, one, "fill", 0, NULL, NULL, NULL);
    rk_tile_tma_ring_wait_free(k, &h->ring, f);
    rk_value j = rk_build_add(k, lo, f);
    fill(h, j, f);
    rk_for_end(k, NULL, 0, NULL);
    rk_if_end(k, NULL, 0);
}

/* ws: lane 0 of each consumer warp arrives on the empty barrier of fill `f`'s stage. */
static void release(hk *h, rk_value tid, rk_value f) {
    rk_kernel *k = h->k;
    rk_value c31 = c32(k, 31), zero = c32(k, 0);
    rk_value lane = rk_build_and(k, tid, c31);
    rk_value l0 = rk_build_cmp(k, "eq", lane, zero);
    rk_if_begin(k, l0);
    rk_tile_tma_ring_release(k, &h->ring, f);
    rk_if_end(k, NULL, 0);
}

/* schedule = pingpong: consumer warpgroup c waits on named barrier
 * KN_AH_TURN_BAR0 + c before it issues its products and arrives on the next
 * warpgroup's (round robin) once they are issued, so the warpgroups issue in
 * turn and each one's softmax runs while the next one's products occupy the
 * tensor cores. Count 256: the 128 threads that wait and the 128 that arrive.
 * Barrier ids are immediates, so each warpgroup takes its own branch (the
 * index is uniform across a warpgroup). */
enum { KN_AH_TURN_BAR0 = 4, KN_AH_TURN_COUNT = 256 };

static void turn_wait(hk *h, rk_value wg) {
    rk_kernel *k = h->k;
    if (!h->hp->pingpong) return;
    for (uint32_t c = 0; c < h->hp->wgs; c++) {
        rk_value cv = c32(k, c);
        rk_value mine = rk_build_cmp(k, "eq", wg, cv);
        rk_if_begin(k, mine);
        rk_build_named_barrier(k, KN_AH_TURN_BAR0 + c, KN_AH_TURN_COUNT);
        rk_if_end(k, NULL, 0);
    }
}

/* Hand the turn on: warpgroup c arrives on c + 1's barrier. `last` (the
 * final turn): the last warpgroup does not, so no arrival outlives the block. */
static void turn_pass(hk *h, rk_value wg, bool last) {
    rk_kernel *k = h->k;
    uint32_t n = h->hp->wgs;
    if (!h->hp->pingpong) return;
    for (uint32_t c = 0; c < n - (last ? 1 : 0); c++) {
        rk_value cv = c32(k, c);
        rk_value mine = rk_build_cmp(k, "eq", wg, cv);
        rk_if_begin(k, mine);
        rk_build_named_barrier_arrive(k, KN_AH_TURN_BAR0 + (c + 1) % n, KN_AH_TURN_COUNT);
        rk_if_end(k, NULL, 0);
    }
}

/* The first turn goes to warpgroup 0: the last one arrives on its barrier
 * (when the block has key blocks at all; every consumer sees the same count). */
static void turn_open(hk *h, rk_value wg, rk_value nonempty) {
    rk_kernel *k = h->k;
    if (!h->hp->pingpong) return;
    rk_value lastwg = c32(k, h->hp->wgs - 1);
    rk_value is_last = rk_build_cmp(k, "eq", wg, lastwg);
    rk_value go = rk_build_and(k, is_last, nonempty);
    rk_if_begin(k, go);
    rk_build_named_barrier_arrive(k, KN_AH_TURN_BAR0, KN_AH_TURN_COUNT);
    rk_if_end(k, NULL, 0);
}

/* O (the whole accumulator) times the rows' alpha. The folded softmax
 * skips the multiplies in a warp whose rows all kept their maximum (alpha =
 * 1 on every lane: a ballot), as they mostly do once the first key blocks
 * have set the maxima; each warp holds 16 rows of the m64 accumulator, so
 * the test is the warp's. The shared softmax (exact_softmax) always
 * multiplies. */
static rk_value rescale_o(hk *h, rk_value o, const rk_value *alpha) {
    rk_kernel *k = h->k;
    const kn_attn_plan *pl = &h->hp->pl;
    rk_value op[32];
    if (h->s->exact_softmax) {
        kn_attn_hopper_split(k, o, pl->on, op);
        kn_attn_rescale(k, pl, alpha, op);
        return kn_attn_hopper_join(k, op, pl->on);
    }
    rk_value f1 = rk_const_f32(k, 1.0f), moved = rk_const_bool(k, false);
    for (uint32_t r = 0; r < pl->rows.nrows; r++) {
        rk_value ne = rk_build_fcmp(k, "une", alpha[r], f1);
        moved = rk_build_or(k, moved, ne);
    }
    rk_value votes = rk_build_wave_ballot(k, moved);
    rk_value z64 = rk_const_i64(k, 0);
    rk_value any = rk_build_cmp(k, "ne", votes, z64);
    rk_type o_t = rk_value_type(k, o);
    rk_value res;
    rk_if_else_begin(k, any, 1, &o_t, &res);
    {
        kn_attn_hopper_split(k, o, pl->on, op);
        kn_attn_rescale(k, pl, alpha, op);
        rk_value scaled = kn_attn_hopper_join(k, op, pl->on);
        rk_else(k, &scaled, 1);
    }
    rk_if_end(k, &o, 1);
    return res;
}

/* schedule = overlap and pingpong (the consumers; FlashAttention-3's
 * intra-warpgroup pipelining): block 0's S and softmax first; then per
 * block j >= 1 issue S_j, rescale O by the previous softmax's alpha while
 * S_j runs, issue O += P_{j-1} V_{j-1}, take S_j back with wait_group 1 (P V
 * still in flight) and run its mask and softmax, then wait for O and
 * release stage j - 1; after the loop the last rescale and P V. O is not
 * touched between the issue of P V and its wait, so nothing but the next
 * issue waits on it (alpha rides along in the loop instead). pingpong adds
 * the turns around each issue. Returns m, l, O as consume() does. */
static void consume_overlap(hk *h, kn_attn_ctx *g, rk_value tid, rk_value wg, rk_value lo, rk_value count,
                            rk_value *res) {
    rk_kernel *k = h->k;
    const kn_attn_plan *pl = &h->hp->pl;
    rk_value zero = c32(k, 0), one = c32(k, 1), Sv = c32(k, pl->stages);
    rk_tile_tma_ring_wait(k, &h->qring, zero);
    /* carried: m, l, alpha per row group, O, the P fragments */
    uint32_t nr = pl->rows.nrows, nq = pl->bn / 16, io = 3 * nr, ip = io + 1, nc = ip + nq;
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f), f1 = rk_const_f32(k, 1.0f);
    rk_type f_t = rk_type_vec(k, (rk_type){h->s->dtype}, 8), o_t = rk_type_vec(k, RK_T_F32, pl->d / 2);
    rk_value pzero = rk_build_constant_vec(k, f_t, 0.0), ozero = rk_build_constant_vec(k, o_t, 0.0);
    enum { CMAX = 3 * RK_TILE_ACC_MAX_SLOTS + 12 };
    rk_type types[CMAX];
    rk_value init[CMAX], cur[CMAX], y[CMAX];
    RK_ASSERT(nc <= CMAX, "attention: the overlap loop's carries fit");
    for (uint32_t r = 0; r < io; r++) types[r] = RK_T_F32, init[r] = r < nr ? ninf : r < 2 * nr ? fz : f1;
    types[io] = o_t, init[io] = ozero;
    for (uint32_t q = 0; q < nq; q++) types[ip + q] = f_t, init[ip + q] = pzero;
    rk_value nonempty = rk_build_cmp(k, "gt", count, zero), pro[CMAX];
    turn_open(h, wg, nonempty);
    /* block 0 (when there is one): S, softmax, P; O is still zero, alpha stays 1 */
    rk_if_else_begin(k, nonempty, nc, types, pro);
    {
        rk_tile_tma_ring_wait(k, &h->ring, zero);
        turn_wait(h, wg);
        rk_value s_fly = scores(h, zero, wg, false);
        turn_pass(h, wg, false);
        rk_value sacc, alpha[RK_TILE_ACC_MAX_SLOTS];
        rk_build_wgmma_wait_group(k, 0, &s_fly, 1, &sacc);
        for (uint32_t x = 0; x < nc; x++) y[x] = init[x];
        kn_attn_hopper_probs(g, lo, sacc, y, y + nr, y + ip, alpha);
        rk_else(k, y, nc);
    }
    rk_if_end(k, init, nc);
    rk_value it = rk_for_begin(k, one, count, one, "kv", nc, pro, NULL, cur);
    {
        rk_value j = rk_build_add(k, lo, it);
        rk_value prev = rk_build_sub(k, it, one);
        rk_value st = rk_build_umod(k, it, Sv);
        rk_value sp = rk_build_umod(k, prev, Sv);
        rk_tile_tma_ring_wait(k, &h->ring, it);
        turn_wait(h, wg);
        rk_value s_fly = scores(h, st, wg, false);
        rk_value o_in = rescale_o(h, cur[io], cur + 2 * nr);   /* to block j - 1's row maxima, under S_j */
        rk_value o_fly = pv(h, sp, cur + ip, o_in, false);
        turn_pass(h, wg, false);
        rk_value sacc;
        rk_build_wgmma_wait_group(k, 1, &s_fly, 1, &sacc);   /* S_j back; P V of block j - 1 still in flight */
        for (uint32_t x = 0; x < 2 * nr; x++) y[x] = cur[x];
        kn_attn_hopper_probs(g, j, sacc, y, y + nr, y + ip, y + 2 * nr);
        rk_build_wgmma_wait_group(k, 0, &o_fly, 1, &y[io]);
        release(h, tid, prev);   /* block j - 1's stage has been read by S and P V */
        rk_for_end(k, y, nc, cur);
    }
    /* the last block's rescale and P V */
    rk_value fin;
    rk_if_else_begin(k, nonempty, 1, &o_t, &fin);
    {
        rk_value last = rk_build_sub(k, count, one);
        rk_value st = rk_build_umod(k, last, Sv);
        rk_value op[32];
        kn_attn_hopper_split(k, cur[io], pl->on, op);
        kn_attn_rescale(k, pl, cur + 2 * nr, op);
        rk_value o_in = kn_attn_hopper_join(k, op, pl->on);
        turn_wait(h, wg);
        rk_value o_fly = pv(h, st, cur + ip, o_in, false);
        turn_pass(h, wg, true);
        rk_value o;
        rk_build_wgmma_wait_group(k, 0, &o_fly, 1, &o);
        rk_else(k, &o, 1);
    }
    rk_if_end(k, &cur[io], 1);
    for (uint32_t x = 0; x < 2 * nr; x++) res[x] = cur[x];
    res[2 * nr] = fin;
}

/* The consumers' KV loop: per key block wait for its stage, S, softmax,
 * P V; then the stage is released (ws: lane 0 of each warp on its empty
 * barrier) or refilled (plain: a block barrier, then thread 0). Returns the
 * final m, l (res[0 .. 2 nr)) and O (res[2 nr]). */
static void consume(hk *h, kn_attn_ctx *g, rk_value tid, rk_value wg, rk_value lo, rk_value count, rk_value *res) {
    rk_kernel *k = h->k;
    const kn_attn_plan *pl = &h->hp->pl;
    rk_value zero = c32(k, 0), one = c32(k, 1);
    rk_tile_tma_ring_wait(k, &h->qring, zero);
    /* loop-carried: m and l per row group, then O (the whole m64nDk16 accumulator) */
    uint32_t nr = pl->rows.nrows;
    rk_value init[2 * RK_TILE_ACC_MAX_SLOTS + 1], cur[2 * RK_TILE_ACC_MAX_SLOTS + 1];
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    for (uint32_t r = 0; r < nr; r++) init[r] = ninf, init[nr + r] = fz;
    rk_type o_t = rk_type_vec(k, RK_T_F32, pl->d / 2);
    init[2 * nr] = rk_build_constant_vec(k, o_t, 0.0);
    rk_value it = rk_for_begin(k, zero, count, one, "kv", 2 * nr + 1, init, NULL, cur);
    rk_value m[RK_TILE_ACC_MAX_SLOTS], l[RK_TILE_ACC_MAX_SLOTS];
    for (uint32_t r = 0; r < nr; r++) m[r] = cur[r], l[r] = cur[nr + r];
    rk_value j = rk_build_add(k, lo, it);
    rk_tile_tma_ring_wait(k, &h->ring, it);
    rk_value Sv = c32(k, pl->stages);
    rk_value st = rk_build_umod(k, it, Sv);
    rk_value sacc = scores(h, st, wg, true);
    rk_value pf[KN_AH_PF_MAX], alpha[RK_TILE_ACC_MAX_SLOTS], op[32];
    kn_attn_hopper_probs(g, j, sacc, m, l, pf, alpha);
    kn_attn_hopper_split(k, cur[2 * nr], pl->on, op);
    kn_attn_rescale(k, pl, alpha, op);
    rk_value o = kn_attn_hopper_join(k, op, pl->on);
    o = pv(h, st, pf, o, true);
    if (h->hp->ws) {
        release(h, tid, it);
    } else {
        rk_build_sync(k);   /* every warpgroup is done with stage st: refill it */
        rk_value ahead = c32(k, pl->stages);
        rk_value nxt = rk_build_add(k, it, ahead);
        fill_if(h, tid, lo, nxt, count);
    }
    rk_value y[2 * RK_TILE_ACC_MAX_SLOTS + 1];
    for (uint32_t r = 0; r < nr; r++) y[r] = m[r], y[nr + r] = l[r];
    y[2 * nr] = o;
    rk_for_end(k, y, 2 * nr + 1, res);
}

void kn_attn_hopper_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_attention_spec *s = &in->u.attn;
    kn_attn_hplan hp;
    rk_status pst = kn_attn_hopper_plan(s, t, &hp);
    RK_ASSERT(pst == RK_OK, "attention: building a wgmma instance that does not validate");
    const kn_attn_plan *pl = &hp.pl;
    kn_attn_sig ix;
    kn_attn_sig_of(s, &ix);
    hk h = {.k = k, .hp = &hp, .s = s, .dt = s->dtype == RK_S_BF16 ? "bf16" : "f16"};
    h.qmap = p[ix.qmap], h.kmap = p[ix.kmap], h.vmap = p[ix.vmap];
    kn_attn_ctx g = {.k = k, .pl = pl, .s = s};
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c7 = c32(k, 7), c127 = c32(k, 127);
    rk_value wgi = rk_build_lshr(k, tid, c7);    /* warpgroup; ws: 0 is the producer */
    rk_value wg = wgi;
    if (hp.ws) {
        rk_value one = c32(k, 1);
        wg = rk_build_sub(k, wgi, one);          /* the consumer's index (the producer's is unused) */
    }
    g.w.lane = rk_build_and(k, tid, c127);       /* the thread inside its warpgroup: the accumulator map's lane */
    /* shared memory and barriers (with their block barrier) before any branch */
    rk_smem_alloc_opts al = {.align = RK_SOME(1024)};
    uint32_t nkv = pl->stages * hp.kv_elems;
    h.sQ = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &hp.q_elems, 1, &al);
    h.sK = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &nkv, 1, &al);
    h.sV = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &nkv, 1, &al);
    rk_tile_tma_ring_init(k, &h.qring, 1, hp.q_elems * 2);
    rk_tile_tma_ring_init_pair(k, &h.ring, pl->stages, 2 * hp.kv_elems * 2, hp.ws ? 4 * hp.wgs : 0);
    kn_attn_block blk;
    kn_attn_begin(&g, p, &ix, &blk);
    rk_value w64 = c32(k, 64);
    rk_value wrow = rk_build_mul(k, wg, w64);
    g.row0 = rk_build_add(k, g.m0, wrow);
    g.wrow = wrow;
    rk_value qrow0 = map_coords(&h, &g, p, &ix, &blk);
    rk_value lo, hi;
    kn_attn_kv_range(&g, &lo, &hi);
    rk_value count = rk_build_sub(k, hi, lo);
    rk_value res[2 * RK_TILE_ACC_MAX_SLOTS + 1];
    uint32_t nr = pl->rows.nrows;
    if (hp.ws) {
        rk_value zero = c32(k, 0);
        rk_value prod = rk_build_cmp(k, "eq", wgi, zero);
        rk_if_else_begin(k, prod, 0, NULL, NULL);
        producer(&h, g.w.lane, qrow0, lo, count);
        rk_else(k, NULL, 0);
        rk_build_setmaxnreg(k, "inc", hp.regs);
    } else {
        load_q(&h, tid, qrow0);
        for (uint32_t i = 0; i < pl->stages; i++) {
            rk_value ci = c32(k, i);
            fill_if(&h, tid, lo, ci, count);
        }
    }
    if (hp.overlap) consume_overlap(&h, &g, tid, wg, lo, count, res);
    else consume(&h, &g, tid, wg, lo, count, res);
    rk_value op[32];
    kn_attn_hopper_split(k, res[2 * nr], pl->on, op);
    kn_attn_finish(&g, p, &ix, &blk, res, res + nr, op);
    if (hp.ws) rk_if_end(k, NULL, 0);
    rk_if_end(k, NULL, 0);   /* kn_attn_begin's branch */
}
