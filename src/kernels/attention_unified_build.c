/* rocke — the unified attention kernel: one launch for a batch of
 * sequences, each with q_len new query tokens at the end of its kv_len keys
 * in a paged cache. Block (x, KV head hk, split) serves BQ = block_m / G
 * tokens of one sequence times the G = Hq / Hkv query heads of hk (row r =
 * token r / G, head hk * G + r % G), so each page is read once per block.
 *   sequence  a binary search over the query starts on the device: sequence
 *             b's blocks start at floor(query_start[b] / BQ) + b (no host
 *             prefix, no extra buffer; a sequence ends with at most one
 *             empty block, which returns at once);
 *   Q         gathered row by row (the rows of one KV head are not one
 *             stride apart) into the LDS tile, then into A fragments;
 *   KV loop   over the key blocks of this split of [window start, last
 *             row's diagonal]: K and V pieces of block_n keys (inside one
 *             page, through the block table) into `stages` LDS buffers
 *             (cp.async groups from 2 on), S = Q K^T on the atoms, softcap
 *             and ALiBi on the scores, the causal / window mask, the online
 *             softmax shared with prefill, O += P V;
 *   output    one split: O = acc / l (the sink joining l), LSE; several: the
 *             split's (acc, m, l) to Work and the last of the query
 *             block's nb splits (by its keys, at most num_splits) to arrive
 *             merges the nb partials in split order (bits independent of
 *             which block finished last).
 * With path = wgmma (sm_90a) a block of more rows than one warp's runs the
 * wgmma body of attention_unified_wgmma.c instead (a block-uniform branch
 * around the whole body); the decode blocks run the body here.
 * Layer: kernels. */
#include <math.h>

#include "attention_unified_kernel.h"

#define SEARCH_STEPS 17u   /* binary search over B + 1 <= 65536 query starts */


typedef kn_attn_ublock ub;

/* Block row (i32) of accumulator / fragment slot t of atom row i for this lane. */
static rk_value slot_row(ub *g, uint32_t i, rk_frag f, uint32_t t, rk_value *col) {
    rk_kernel *k = g->k;
    const rk_mma_atom *a = g->pl->atom;
    rk_tile_frag_coord fc = rk_tile_atom_coord(k, a->id, f, g->w.lane, t);
    rk_value wt = c32(k, g->pl->wtm);
    rk_value r0 = rk_build_mul(k, g->rw, wt);
    rk_value io = c32(k, i * a->m);
    rk_value r1 = rk_build_add(k, r0, io);
    if (col) *col = fc.col;
    return rk_build_add(k, r1, fc.row);
}

/* i64 element of block row r (column 0) in a [total_q, Hq, per] tensor
 * (per: i64): ((tok0 + r / G) * Hq + hk * G + r % G) * per. */
static rk_value row_at_v(ub *g, rk_value r, rk_value per) {
    rk_kernel *k = g->k;
    rk_value t = rk_build_udiv(k, r, g->G);
    rk_value h = rk_build_umod(k, r, g->G);
    rk_value tok = rk_build_add(k, g->tok0, t);
    rk_value tq = rk_build_mul(k, tok, g->p[g->ix->Hq]);
    rk_value h0 = rk_build_mul(k, g->hk, g->G);
    rk_value hh = rk_build_add(k, h0, h);
    rk_value x = rk_build_add(k, tq, hh);
    rk_value x64 = i64(k, x);
    return rk_build_mul(k, x64, per);
}

static rk_value row_at(ub *g, rk_value r, uint32_t per) {
    rk_value pv = rk_const_i64(g->k, per);
    return row_at_v(g, r, pv);
}

/* Query head (i32) of block row r. */
static rk_value row_head(ub *g, rk_value r) {
    rk_kernel *k = g->k;
    rk_value h = rk_build_umod(k, r, g->G);
    rk_value h0 = rk_build_mul(k, g->hk, g->G);
    return rk_build_add(k, h0, h);
}

/* The block's sequence: the largest b with floor(query_start[b] / BQ) + b <= x. */
static rk_value find_sequence(ub *g, rk_value x) {
    rk_kernel *k = g->k;
    rk_value qs = g->p[g->ix->qstart];
    rk_value zero = c32(k, 0), one = c32(k, 1), steps = c32(k, SEARCH_STEPS);
    rk_value init[2] = {zero, g->p[g->ix->B]}, cur[2], res[2];
    rk_for_begin(k, zero, steps, one, "search", 2, init, NULL, cur);
    {
        rk_value sum = rk_build_add(k, cur[0], cur[1]);
        rk_value two = c32(k, 2);
        rk_value mid = rk_build_udiv(k, sum, two);
        rk_value st = rk_load_global(k, qs, mid, 1);
        rk_value sb = rk_build_udiv(k, st, g->bq);
        rk_value start = rk_build_add(k, sb, mid);
        rk_value le = rk_build_cmp(k, "le", start, x);
        rk_value y[2];
        y[0] = rk_build_select(k, le, mid, cur[0]);
        y[1] = rk_build_select(k, le, cur[1], mid);
        rk_for_end(k, y, 2, res);
    }
    return res[0];
}

/* Q rows into the LDS tile along the Q copy's chunks (async where the
 * copy is): each chunk's row gathered from its (token, head); rows past the
 * sequence become zeros. */
static void gather_q(ub *g, rk_value stage) {
    rk_kernel *k = g->k;
    const rk_tile_copy *c = &g->pl->cpq;
    rk_tile_copy_lanes l;
    rk_tile_copy_lanes_init(k, c, g->w.tid, &l);
    rk_value zero = c32(k, 0), zero64 = rk_const_i64(k, 0);
    for (uint32_t p = 0; p < c->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, c, p);
        rk_value in = rk_build_cmp(k, "lt", l.row[p], g->nrows);
        rk_value row = rk_build_select(k, in, l.row[p], zero);
        rk_value base = row_at(g, row, g->s->head_dim);
        rk_value c64 = i64(k, l.col[p]);
        rk_value at = rk_build_add(k, base, c64);
        rk_value idx = rk_build_select(k, in, at, zero64);
        rk_value dst = rk_build_add(k, stage, l.dst[p]);
        rk_tile_copy_chunk(k, c, g->p[g->ix->q], in, idx, g->smem, dst);
        if (partial) rk_if_end(k, NULL, 0);
    }
    rk_build_async_commit_group(k);
    rk_build_async_wait_group(k, 0);
}

/* An e4m3 chunk of n keys' elements into the dtype stage: loaded (8 bytes
 * for the 16-byte chunks of the 16-bit stage), converted exactly (e4m3
 * fits f16 and bf16), zeros where !ok; the scales stay on S and 1 / l. */
static void fp8_chunk(ub *g, uint32_t n, rk_value ptr, rk_value ok, rk_value idx, rk_value dst) {
    rk_kernel *k = g->k;
    rk_value v = rk_load_global(k, ptr, idx, n);
    rk_value f = kn_dec_fp8_to_f32(k, v, n);
    rk_value fz = rk_tile_f32s(k, 0.0f, n);
    rk_value fs = rk_build_select(k, ok, f, fz);
    rk_value h = rk_tile_from_f32(k, fs, g->s->dtype);
    rk_store_smem(k, g->smem, &dst, h);
}

kn_attn_upages kn_attn_unified_pages(kn_attn_ublock *g) {
    rk_kernel *k = g->k;
    kn_attn_upages pg;
    pg.trow = rk_build_mul(k, g->b, g->maxp);
    pg.ks64 = i64(k, g->kstride);
    pg.P64 = rk_const_i64(k, g->s->page_size);
    rk_value hk64 = i64(k, g->hk), D64 = rk_const_i64(k, g->s->head_dim);
    pg.head = rk_build_mul(k, hk64, D64);
    pg.Pv = c32(k, g->s->page_size);
    return pg;
}

rk_value kn_attn_unified_page_at(kn_attn_ublock *g, const kn_attn_upages *pg, rk_value key, rk_value col,
                                 rk_value valid, rk_value *ok) {
    rk_kernel *k = g->k;
    rk_value zero = c32(k, 0);
    rk_value in = rk_build_cmp(k, "lt", key, g->kvlen);
    *ok = rk_build_and(k, in, valid);
    rk_value kc = rk_build_select(k, *ok, key, zero);
    rk_value page = rk_build_udiv(k, kc, pg->Pv);
    rk_value inner = rk_build_umod(k, kc, pg->Pv);
    rk_value ti = rk_build_add(k, pg->trow, page);
    rk_value id = rk_load_global(k, g->p[g->ix->bt], ti, 1);
    rk_value id64 = i64(k, id);
    rk_value in64 = i64(k, inner);
    rk_value slot = rk_build_mul(k, id64, pg->P64);
    rk_value sl = rk_build_add(k, slot, in64);
    rk_value ro = rk_build_mul(k, sl, pg->ks64);
    rk_value rh = rk_build_add(k, ro, pg->head);
    rk_value c64 = i64(k, col);
    return rk_build_add(k, rh, c64);
}

/* Key block j's K and V into stage st, one async group: each chunk's key
 * looked up through the block table (block_n keys may span pages); keys
 * past the sequence, and every key of a j past the split, read nothing and
 * land as zeros. */
static void issue(ub *g, rk_value j, rk_value st) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    const rk_tile_copy *ck = &pl->cpk, *cv = &pl->cpv;
    RK_ASSERT(ck->passes == cv->passes && ck->rows == cv->rows && ck->cols == cv->cols && ck->vec == cv->vec,
              "attention unified: K and V copies of one geometry");
    rk_value zero64 = rk_const_i64(k, 0);
    rk_value valid = rk_build_cmp(k, "lt", j, g->khi);
    rk_value bn = c32(k, pl->bn);
    rk_value key0 = rk_build_mul(k, j, bn);
    rk_value size = c32(k, pl->kv_stage);
    rk_value kbase = rk_build_mul(k, st, size);
    rk_value vb = c32(k, pl->v_base);
    rk_value vbase = rk_build_add(k, kbase, vb);
    kn_attn_upages pgs = kn_attn_unified_pages(g);
    for (uint32_t p = 0; p < ck->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, ck, p);
        rk_value key = rk_build_add(k, key0, g->lk.row[p]);
        rk_value ok;
        rk_value at = kn_attn_unified_page_at(g, &pgs, key, g->lk.col[p], valid, &ok);
        rk_value idx = rk_build_select(k, ok, at, zero64);
        rk_value kd = rk_build_add(k, kbase, g->lk.dst[p]);
        rk_value vd = rk_build_add(k, vbase, g->lv.dst[p]);
        if (g->s->kv_dtype == RK_ATTN_KV_SAME) {
            rk_tile_copy_chunk(k, ck, g->p[g->ix->kc], ok, idx, g->smem, kd);
            rk_tile_copy_chunk(k, cv, g->p[g->ix->vc], ok, idx, g->smem, vd);
        } else {
            fp8_chunk(g, ck->vec, g->p[g->ix->kc], ok, idx, kd);
            fp8_chunk(g, cv->vec, g->p[g->ix->vc], ok, idx, vd);
        }
        if (partial) rk_if_end(k, NULL, 0);
    }
    rk_build_async_commit_group(k);
}

/* Key of slot t of atom (i, jn) of key block key0. */
static rk_value slot_key(ub *g, rk_value key0, uint32_t jn, uint32_t t) {
    rk_kernel *k = g->k;
    rk_value co = c32(k, jn * g->pl->atom->n);
    rk_value c0 = rk_build_add(k, key0, co);
    return rk_build_add(k, c0, g->ccol[t]);
}

/* -inf where slot t of atom row i does not see `key`: past its diagonal,
 * before its window, or a row past the sequence. */
static rk_value mask_one(ub *g, uint32_t i, uint32_t t, rk_value key, rk_value x) {
    rk_kernel *k = g->k;
    rk_value zero = c32(k, 0), ninf = rk_const_f32(k, -INFINITY);
    rk_value le = rk_build_cmp(k, "le", key, g->rdiag[i][t]);
    rk_value vis = rk_build_and(k, le, g->rok[i][t]);
    if (g->s->mask == RK_ATTN_MASK_WINDOW) {
        rk_value lo = rk_build_sub(k, g->rdiag[i][t], g->wl);
        rk_value ge = rk_build_cmp(k, "ge", key, lo);
        rk_value lneg = rk_build_cmp(k, "lt", g->wl, zero);
        rk_value lok = rk_build_or(k, ge, lneg);
        vis = rk_build_and(k, vis, lok);
    }
    return rk_build_select(k, vis, x, ninf);
}

/* i1, block uniform: key block key0 is not wholly visible to every row of
 * the block (it crosses the first row's diagonal or the last row's window
 * start); rows past the sequence are never stored and need no mask. */
static rk_value needs_mask(ub *g, rk_value key0) {
    rk_kernel *k = g->k;
    rk_value bn1 = c32(k, g->pl->bn - 1), zero = c32(k, 0);
    rk_value last = rk_build_add(k, key0, bn1);
    rk_value need = rk_build_cmp(k, "gt", last, g->d0);
    if (g->s->mask != RK_ATTN_MASK_WINDOW) return need;
    rk_value lo = rk_build_sub(k, g->dlast, g->wl);
    rk_value before = rk_build_cmp(k, "lt", key0, lo);
    rk_value bounded = rk_build_cmp(k, "ge", g->wl, zero);
    rk_value cut = rk_build_and(k, before, bounded);
    return rk_build_or(k, need, cut);
}

/* Scores of key block j (pl's keys from *koff in it; NULL: from 0) into
 * the exp2 domain: scale, softcap (cap * tanh(x / cap)), ALiBi (slope *
 * (key - query position)); then, only in a block the mask cuts, -inf where
 * the key is not visible. */
static void scores(ub *g, const kn_attn_plan *pl, rk_value j, const rk_value *koff, rk_value *s) {
    rk_kernel *k = g->k;
    const rk_mma_atom *a = pl->atom;
    rk_value bn = c32(k, g->pl->bn);
    rk_value kblk = rk_build_mul(k, j, bn);
    rk_value key0 = koff ? rk_build_add(k, kblk, *koff) : kblk;
    uint32_t ns = pl->mi * pl->sn;
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t jn = 0; jn < pl->sn; jn++) {
            rk_value v = s[i * pl->sn + jn];
            rk_value sc = rk_tile_bcast(k, g->scale_l2, v);
            v = rk_tile_mul(k, v, sc);
            if (!g->s->softcap && !g->s->alibi) {
                s[i * pl->sn + jn] = v;
                continue;
            }
            rk_value e[RK_TILE_ACC_MAX_SLOTS];
            for (uint32_t t = 0; t < a->c_len; t++) {
                rk_value x = rk_build_vextract(k, v, t);
                if (g->s->softcap) {
                    /* x is scale * s here: cap * tanh(x / cap), times log2(e) */
                    rk_value xr = rk_build_fmul(k, x, g->rcap);
                    rk_value th = rk_build_tanh(k, xr);
                    x = rk_build_fmul(k, th, g->cap_l2);
                }
                if (g->s->alibi) {
                    rk_value key = slot_key(g, key0, jn, t);
                    rk_value dist = rk_build_sub(k, key, g->rdiag[i][t]);
                    rk_value df = rk_build_sitofp(k, dist, RK_T_F32);
                    x = rk_build_fma(k, g->rslope[i][t], df, x);
                }
                e[t] = x;
            }
            s[i * pl->sn + jn] = rk_build_vpack(k, e, a->c_len);
        }
    rk_value need = needs_mask(g, kblk);
    rk_type vt = rk_value_type(k, s[0]);
    rk_type types[MAXV];
    for (uint32_t x = 0; x < ns; x++) types[x] = vt;
    rk_value masked[MAXV];
    rk_if_else_begin(k, need, ns, types, masked);
    {
        rk_value mv[MAXV];
        for (uint32_t i = 0; i < pl->mi; i++)
            for (uint32_t jn = 0; jn < pl->sn; jn++) {
                rk_value e[RK_TILE_ACC_MAX_SLOTS];
                for (uint32_t t = 0; t < a->c_len; t++) {
                    rk_value x = rk_build_vextract(k, s[i * pl->sn + jn], t);
                    rk_value key = slot_key(g, key0, jn, t);
                    e[t] = mask_one(g, i, t, key, x);
                }
                mv[i * pl->sn + jn] = rk_build_vpack(k, e, a->c_len);
            }
        rk_else(k, mv, ns);
    }
    rk_if_end(k, s, ns);
    for (uint32_t x = 0; x < ns; x++) s[x] = masked[x];
}

/* One key block in stage `stage` (pl's keys of it from *koff; NULL: the
 * whole block): S, scores, online softmax, O += P V. */
static void compute(ub *g, const kn_attn_plan *pl, rk_value j, rk_value stage, rk_value wrow, const rk_value *koff,
                    const rk_value *qf, rk_value *m, rk_value *l, rk_value *o) {
    rk_kernel *k = g->k;
    rk_value size = c32(k, g->pl->kv_stage);
    rk_value kbase = rk_build_mul(k, stage, size);
    rk_value vb = c32(k, g->pl->v_base);
    rk_value vbase = rk_build_add(k, kbase, vb);
    rk_value s[MAXV], pv[MAXV];
    kn_attn_qk_keys(k, pl, g->smem, g->w.lane, wrow, kbase, koff, qf, s);
    scores(g, pl, j, koff, s);
    kn_attn_softmax_step(k, pl, s, m, l, o, pv);
    kn_attn_pv_keys(k, pl, g->smem, g->w.lane, g->w.wm, vbase, koff, g->s->dtype, pv, o);
}

/* The loop's carries (m, l, O of this warp) as one list and back. */
static uint32_t carry_pack(const ub *g, const rk_value *m, const rk_value *l, const rk_value *o, rk_value *out) {
    const kn_attn_plan *pl = g->pl;
    uint32_t nm = pl->mi * pl->rows.nrows, no = pl->mi * pl->on;
    for (uint32_t y = 0; y < nm; y++) {
        out[y] = m[y];
        out[nm + y] = l[y];
    }
    for (uint32_t y = 0; y < no; y++) out[2 * nm + y] = o[y];
    return 2 * nm + no;
}
static void carry_unpack(const ub *g, const rk_value *in, rk_value *m, rk_value *l, rk_value *o) {
    const kn_attn_plan *pl = g->pl;
    uint32_t nm = pl->mi * pl->rows.nrows, no = pl->mi * pl->on;
    for (uint32_t y = 0; y < nm; y++) {
        m[y] = in[y];
        l[y] = in[nm + y];
    }
    for (uint32_t y = 0; y < no; y++) o[y] = in[2 * nm + y];
}

/* compute, skipped by a warp whose rows all lie past the sequence (a
 * decode's block fills G of its rows). */
static void live_step(ub *g, rk_value j, rk_value stage, const rk_value *qf, rk_value *m, rk_value *l, rk_value *o) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    rk_value wt = c32(k, pl->wtm);
    rk_value wrow = rk_build_mul(k, g->w.wm, wt);
    rk_value old[3 * MAXV], now[3 * MAXV], res[3 * MAXV];
    rk_type types[3 * MAXV];
    uint32_t nc = carry_pack(g, m, l, o, old);
    for (uint32_t y = 0; y < nc; y++) types[y] = rk_value_type(k, old[y]);
    rk_value live = rk_build_cmp(k, "lt", wrow, g->nrows);
    rk_if_else_begin(k, live, nc, types, res);
    {
        rk_value m2[MAXV], l2[MAXV], o2[MAXV];
        carry_unpack(g, old, m2, l2, o2);
        compute(g, pl, j, stage, wrow, NULL, qf, m2, l2, o2);
        carry_pack(g, m2, l2, o2, now);
        rk_else(k, now, nc);
    }
    rk_if_end(k, old, nc);
    carry_unpack(g, res, m, l, o);
}

/* One key block for this warp. With P through LDS (MFMA) the block
 * synchronises inside compute, so every warp runs it. With P in registers a
 * warp whose rows lie past the sequence skips it; and in a key-split block
 * (`keysplit`: every row in warp 0's, a decode) each warp takes warp 0's
 * rows against its bn / warps keys of the block, so all warps share the
 * products that warp 0 alone would run (the states meet after the loop). */
static void step(ub *g, bool keysplit, rk_value j, rk_value stage, const rk_value *qf, rk_value *m, rk_value *l,
                 rk_value *o) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    if (keysplit) {
        rk_value share = c32(k, g->pks.bn), zero = c32(k, 0);
        rk_value koff = rk_build_mul(k, g->w.wm, share);
        compute(g, &g->pks, j, stage, zero, &koff, qf, m, l, o);
        return;
    }
    if (!pl->p_in_regs) {
        rk_value wt = c32(k, pl->wtm);
        rk_value wrow = rk_build_mul(k, g->w.wm, wt);
        compute(g, pl, j, stage, wrow, NULL, qf, m, l, o);
        return;
    }
    live_step(g, j, stage, qf, m, l, o);
}

/* The key blocks of this split: [first visible, last row's diagonal] of
 * the block cut into nb equal shares, nb = its keys / KN_ATTN_SPLIT_KEYS
 * within 1..num_splits (a short sequence of a mixed batch does not split:
 * no partials, no merge; splits past nb return at once). */
static void split_range(ub *g) {
    rk_kernel *k = g->k;
    rk_value zero = c32(k, 0), one = c32(k, 1), bn = c32(k, g->pl->bn), bn1 = c32(k, g->pl->bn - 1);
    rk_value left = rk_build_sub(k, g->qlen, g->q0);
    rk_value tokens = rk_build_smin(k, left, g->bq);
    rk_value d0 = rk_build_add(k, g->off, g->q0);
    rk_value kend = rk_build_add(k, d0, tokens);   /* the last row's diagonal + 1 */
    g->d0 = d0;
    g->dlast = rk_build_sub(k, kend, one);
    rk_value up = rk_build_add(k, kend, bn1);
    rk_value bhi = rk_build_udiv(k, up, bn);
    rk_value blo = zero;
    if (g->s->mask == RK_ATTN_MASK_WINDOW) {
        rk_value first = rk_build_sub(k, d0, g->wl);
        rk_value fpos = rk_build_smax(k, first, zero);
        rk_value lneg = rk_build_cmp(k, "lt", g->wl, zero);
        rk_value lo_key = rk_build_select(k, lneg, zero, fpos);
        blo = rk_build_udiv(k, lo_key, bn);
    }
    rk_value n = rk_build_sub(k, bhi, blo);
    g->nb = one;
    if (g->s->kv_splits > 1) {
        rk_value keys = rk_build_mul(k, n, bn);
        rk_value sk = c32(k, KN_ATTN_SPLIT_KEYS);
        rk_value want = rk_build_udiv(k, keys, sk);
        rk_value cap = rk_build_smin(k, want, g->nsplit);
        g->nb = rk_build_smax(k, cap, one);
    }
    rk_value S1 = rk_build_sub(k, g->nb, one);
    rk_value nu = rk_build_add(k, n, S1);
    rk_value per = rk_build_udiv(k, nu, g->nb);
    rk_value so = rk_build_mul(k, g->split, per);
    rk_value lo = rk_build_add(k, blo, so);
    rk_value hi0 = rk_build_add(k, lo, per);
    rk_value hi1 = rk_build_smin(k, hi0, bhi);
    g->klo = lo;
    g->khi = rk_build_smax(k, hi1, lo);
}

/* The sink of query head h joins a row's (m, l): m* = max(m, sink log2 e),
 * l = l exp2(m - m*) + exp2(sink log2 e - m*); *alpha = exp2(m - m*) rescales O. */
static void join_sink(ub *g, rk_value h, rk_value *m, rk_value *l, rk_value *alpha) {
    rk_kernel *k = g->k;
    rk_value sv = rk_load_global(k, g->p[g->ix->sinks], h, 1);
    rk_value l2e = rk_const_f32(k, (float)M_LOG2E);
    rk_value s2 = rk_build_fmul(k, sv, l2e);
    rk_value mx = rk_build_fmax(k, *m, s2);
    rk_value dm = rk_build_fsub(k, *m, mx);
    *alpha = rk_build_exp2(k, dm);
    rk_value ds = rk_build_fsub(k, s2, mx);
    rk_value ws = rk_build_exp2(k, ds);
    *l = rk_build_fma(k, *l, *alpha, ws);
    *m = mx;
}

/* Per-row values of the epilogue from the loop's (m, l): l summed across
 * the row's lanes, the sink joined (m = max(m, sink), l rescaled + its
 * weight), and the row's rescale of O. */
typedef struct rowfin { rk_value m, l, alpha; } rowfin;
static rowfin finish_row(ub *g, uint32_t i, uint32_t r, rk_value m, rk_value lpart, bool sink) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    rowfin f;
    f.m = m;
    f.l = rk_tile_acc_row_reduce(k, &pl->rows, RK_RED_SUM, lpart);
    f.alpha = rk_const_f32(k, 1.0f);
    if (!sink || !g->s->sinks) return f;
    rk_value row = slot_row(g, i, RK_FRAG_C, pl->rows.row_slot0[r], NULL);
    rk_value zero = c32(k, 0);
    rk_value in = rk_build_cmp(k, "lt", row, g->nrows);
    rk_value rc = rk_build_select(k, in, row, zero);
    rk_value h = row_head(g, rc);
    join_sink(g, h, &f.m, &f.l, &f.alpha);
    return f;
}

/* Each slot's element(s) of accumulator `v` (atom row i, N atom dn) to
 * dst[row_at(row, per) + split * D + column] for the rows inside the sequence. */
static void store_acc(ub *g, uint32_t i, uint32_t dn, rk_value v, rk_value dst, rk_value extra, rk_value per) {
    rk_kernel *k = g->k;
    const rk_mma_atom *a = g->pl->atom;
    uint32_t run = rk_tile_acc_col_run(a);
    for (uint32_t t = 0; t < a->c_len; t += run) {
        rk_value col;
        rk_value row = slot_row(g, i, RK_FRAG_C, t, &col);
        rk_value d0 = c32(k, dn * a->n);
        rk_value cc = rk_build_add(k, col, d0);
        rk_value in = rk_build_cmp(k, "lt", row, g->nrows_st);
        rk_if_begin(k, in);
        rk_value base = row_at_v(g, row, per);
        rk_value b2 = rk_build_add(k, base, extra);
        rk_value c64 = i64(k, cc);
        rk_value at = rk_build_add(k, b2, c64);
        rk_value x;
        if (run == 2) {
            int32_t mask[2] = {(int32_t)t, (int32_t)t + 1};
            x = rk_build_vshuffle(k, v, v, mask, 2);
        } else {
            x = rk_build_vextract(k, v, t);
        }
        rk_store_global(k, dst, at, x);
        rk_if_end(k, NULL, 0);
    }
}

/* The row-leader lanes (every butterfly bit clear) of rows inside the sequence. */
static rk_value row_leader(ub *g, uint32_t i, uint32_t r, rk_value *row) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    uint32_t bits = 0;
    for (uint32_t b = 0; b < pl->rows.nmasks; b++) bits |= pl->rows.xor_mask[b];
    rk_value bv = c32(k, bits), zero = c32(k, 0);
    rk_value lb = rk_build_and(k, g->w.lane, bv);
    rk_value leader = rk_build_cmp(k, "eq", lb, zero);
    *row = slot_row(g, i, RK_FRAG_C, pl->rows.row_slot0[r], NULL);
    rk_value in = rk_build_cmp(k, "lt", *row, g->nrows_st);
    return rk_build_and(k, in, leader);
}

/* LSE = m ln 2 + ln l (-inf where l = 0) at [token, head]. */
static void store_lse(ub *g, rk_value row, rk_value m, rk_value l) {
    rk_kernel *k = g->k;
    rk_value zero = rk_const_f32(k, 0.0f), one = rk_const_f32(k, 1.0f), ninf = rk_const_f32(k, -INFINITY);
    rk_value pos = rk_build_fcmp(k, "ogt", l, zero);
    rk_value safe = rk_build_select(k, pos, l, one);
    rk_value ln = rk_build_log(k, safe);
    rk_value ln2 = rk_const_f32(k, (float)M_LN2);
    rk_value v = rk_build_fma(k, m, ln2, ln);
    rk_value x = rk_build_select(k, pos, v, ninf);
    rk_value at = row_at(g, row, 1);
    rk_store_global(k, g->p[g->ix->lse], at, x);
}

/* 1 / l, 0 where l = 0. */
static rk_value inv_of(rk_kernel *k, rk_value l) {
    rk_value zero = rk_const_f32(k, 0.0f), one = rk_const_f32(k, 1.0f);
    rk_value pos = rk_build_fcmp(k, "ogt", l, zero);
    rk_value safe = rk_build_select(k, pos, l, one);
    rk_value r = rk_build_fdiv(k, one, safe);
    return rk_build_select(k, pos, r, zero);
}

/* One split: O = acc * alpha / l and LSE straight from the registers. */
static void write_output(ub *g, const rk_value *m, const rk_value *l, const rk_value *o) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    uint32_t nr = pl->rows.nrows;
    rk_value zero64 = rk_const_i64(k, 0), dper = rk_const_i64(k, g->s->head_dim);
    for (uint32_t i = 0; i < pl->mi; i++) {
        rk_value scl[MAXV / 4];
        rowfin f[RK_TILE_ACC_MAX_SLOTS];
        for (uint32_t r = 0; r < nr; r++) {
            f[r] = finish_row(g, i, r, m[i * nr + r], l[i * nr + r], true);
            rk_value iv = inv_of(k, f[r].l);
            rk_value ia = rk_build_fmul(k, iv, f[r].alpha);
            scl[r] = rk_build_fmul(k, ia, g->vscale);
        }
        rk_value e[RK_TILE_ACC_MAX_SLOTS];
        for (uint32_t t = 0; t < pl->atom->c_len; t++) e[t] = scl[pl->rows.row_of_slot[t]];
        rk_value sv = rk_build_vpack(k, e, pl->atom->c_len);
        for (uint32_t dn = 0; dn < pl->on; dn++) {
            rk_value ov = rk_tile_mul(k, o[i * pl->on + dn], sv);
            rk_value oh = rk_tile_from_f32(k, ov, g->s->dtype);
            store_acc(g, i, dn, oh, g->p[g->ix->o], zero64, dper);
        }
        if (!g->s->lse) continue;
        for (uint32_t r = 0; r < nr; r++) {
            rk_value row;
            rk_value w = row_leader(g, i, r, &row);
            rk_if_begin(k, w);
            store_lse(g, row, f[r].m, f[r].l);
            rk_if_end(k, NULL, 0);
        }
    }
}

/* Several splits: the split's (acc, m, l) to Work_o [token, head, split, D]
 * and Work_ml [token, head, split, 2], split strides of the run's
 * num_splits (the workspace a run touches grows with the splits it uses). */
static void write_partial(ub *g, const rk_value *m, const rk_value *l, const rk_value *o) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    uint32_t nr = pl->rows.nrows, D = g->s->head_dim;
    rk_value sp64 = i64(k, g->split);
    rk_value D64 = rk_const_i64(k, D), two = rk_const_i64(k, 2), one = rk_const_i64(k, 1);
    rk_value oextra = rk_build_mul(k, sp64, D64);
    rk_value mextra = rk_build_mul(k, sp64, two);
    rk_value ns64 = i64(k, g->nsplit);
    rk_value operrow = rk_build_mul(k, ns64, D64), mperrow = rk_build_mul(k, ns64, two);
    for (uint32_t i = 0; i < pl->mi; i++) {
        for (uint32_t dn = 0; dn < pl->on; dn++) store_acc(g, i, dn, o[i * pl->on + dn], g->p[g->ix->work_o], oextra, operrow);
        for (uint32_t r = 0; r < nr; r++) {
            rowfin f = finish_row(g, i, r, m[i * nr + r], l[i * nr + r], false);
            rk_value row;
            rk_value w = row_leader(g, i, r, &row);
            rk_if_begin(k, w);
            rk_value base = row_at_v(g, row, mperrow);
            rk_value mi = rk_build_add(k, base, mextra);
            rk_value li = rk_build_add(k, mi, one);
            rk_store_global(k, g->p[g->ix->work_ml], mi, f.m);
            rk_store_global(k, g->p[g->ix->work_ml], li, f.l);
            rk_if_end(k, NULL, 0);
        }
    }
}

/* The last block to arrive: every (row, 4 columns) item of the block merges
 * splits 0 .. nb-1 (this block's share count) in order (m* = running max, weights exp2(m - m*)),
 * joins the sink, writes O and LSE. */
static void merge_splits(ub *g) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    uint32_t D = g->s->head_dim, vec = 4, per_row = D / vec;
    uint32_t items = pl->bm * per_row, rounds = (items + pl->threads - 1) / pl->threads;
    rk_value zero = c32(k, 0), one = c32(k, 1), fz = rk_const_f32(k, 0.0f), ninf = rk_const_f32(k, -INFINITY);
    rk_value f1 = rk_const_f32(k, 1.0f);
    rk_value rn = c32(k, rounds), thr = c32(k, pl->threads), prv = c32(k, per_row), vv = c32(k, vec);
    rk_value n = rk_for_begin(k, zero, rn, one, g->wg ? "itemwg" : "item", 0, NULL, NULL, NULL);
    {
        rk_value nb = rk_build_mul(k, n, thr);
        rk_value x = rk_build_add(k, nb, g->w.tid);
        rk_value row = rk_build_udiv(k, x, prv);
        rk_value cc = rk_build_umod(k, x, prv);
        rk_value in = rk_build_cmp(k, "lt", row, g->nrows);
        rk_if_begin(k, in);
        rk_value ns64 = i64(k, g->nsplit), Dw = rk_const_i64(k, D), two2 = rk_const_i64(k, 2);
        rk_value operrow = rk_build_mul(k, ns64, Dw), mperrow = rk_build_mul(k, ns64, two2);
        rk_value ob = row_at_v(g, row, operrow), mb = row_at_v(g, row, mperrow);
        rk_value cv = rk_build_mul(k, cc, vv);
        rk_value c64 = i64(k, cv);
        rk_value ob2 = rk_build_add(k, ob, c64);
        rk_value azero = rk_tile_f32s(k, 0.0f, vec);
        rk_value init[3] = {ninf, fz, azero}, cur[3], res[3];
        rk_value sp = rk_for_begin(k, zero, g->nb, one, g->wg ? "splitwg" : "split", 3, init, NULL, cur);
        {
            rk_value sp64 = i64(k, sp);
            rk_value D64 = rk_const_i64(k, D), two = rk_const_i64(k, 2), o64 = rk_const_i64(k, 1);
            rk_value so = rk_build_mul(k, sp64, D64);
            rk_value oi = rk_build_add(k, ob2, so);
            rk_value acc = rk_load_global(k, g->p[g->ix->work_o], oi, vec);
            rk_value sm = rk_build_mul(k, sp64, two);
            rk_value mi = rk_build_add(k, mb, sm);
            rk_value li = rk_build_add(k, mi, o64);
            rk_value ms = rk_load_global(k, g->p[g->ix->work_ml], mi, 1);
            rk_value ls = rk_load_global(k, g->p[g->ix->work_ml], li, 1);
            rk_value mx = rk_build_fmax(k, cur[0], ms);
            rk_value dead = rk_build_fcmp(k, "oeq", mx, ninf);
            rk_value muse = rk_build_select(k, dead, fz, mx);
            rk_value da = rk_build_fsub(k, cur[0], muse);
            rk_value wa = rk_build_exp2(k, da);
            rk_value db = rk_build_fsub(k, ms, muse);
            rk_value wb = rk_build_exp2(k, db);
            rk_value lb = rk_build_fmul(k, wb, ls);
            rk_value y[3];
            y[0] = mx;
            y[1] = rk_build_fma(k, wa, cur[1], lb);
            rk_value wav = rk_tile_bcast(k, wa, acc);
            rk_value wbv = rk_tile_bcast(k, wb, acc);
            rk_value ab = rk_tile_mul(k, wbv, acc);
            y[2] = rk_tile_fma(k, wav, cur[2], ab);
            rk_for_end(k, y, 3, res);
        }
        rk_value m = res[0], l = res[1], alpha = f1;
        if (g->s->sinks) {
            rk_value h = row_head(g, row);
            join_sink(g, h, &m, &l, &alpha);
        }
        rk_value iv = inv_of(k, l);
        rk_value ia = rk_build_fmul(k, iv, alpha);
        rk_value sc = rk_build_fmul(k, ia, g->vscale);
        rk_value sv = rk_tile_bcast(k, sc, res[2]);
        rk_value ov = rk_tile_mul(k, res[2], sv);
        rk_value oh = rk_tile_from_f32(k, ov, g->s->dtype);
        rk_value obase = row_at(g, row, D);
        rk_value oat = rk_build_add(k, obase, c64);
        rk_store_global(k, g->p[g->ix->o], oat, oh);
        if (g->s->lse) {
            rk_value first = rk_build_cmp(k, "eq", cc, zero);
            rk_if_begin(k, first);
            store_lse(g, row, m, l);
            rk_if_end(k, NULL, 0);
        }
        rk_if_end(k, NULL, 0);
        rk_for_end(k, NULL, 0, NULL);
    }
}

/* The key split's per-warp plan: bn / warps keys of each key block, when
 * P stays in registers, the share is whole atoms of both products, and the
 * warps' states fit the K/V stages for their merge (16-byte items of
 * 4-slot accumulators). */
#define KSPLIT_ITEM 8u   /* dtype elements of one 16-byte merge item */
static uint32_t merge_items(const kn_attn_plan *pl) {
    uint32_t nm = pl->mi * pl->rows.nrows;
    return pl->mi * pl->on + (2 * nm + 3) / 4;
}
static bool key_split_plan(const rk_attention_spec *s, const kn_attn_plan *pl, kn_attn_plan *out) {
    const rk_mma_atom *a = pl->atom;
    if (!pl->p_in_regs || pl->warps < 2 || a->c_len != 4 || rk_scalar_bits(s->dtype) != 16) return false;
    uint32_t share = pl->bn / pl->warps;
    if (pl->bn % pl->warps || share % a->k || share % a->n) return false;
    uint64_t need = (uint64_t)(pl->warps - 1) * merge_items(pl) * pl->wave * KSPLIT_ITEM;
    if (need > (uint64_t)pl->stages * pl->kv_stage) return false;
    *out = *pl;
    out->bn = share, out->sn = share / a->n, out->pk = share / a->k;
    return rk_tile_acc_to_a_check(a, a, out->wtm, out->bn) == RK_OK;
}

bool kn_attn_unified_key_splits(const rk_attention_spec *s, const rk_target *t) {
    kn_attn_plan pl, pks;
    return !s->whole_keys && kn_attn_unified_plan(s, t, &pl) == RK_OK && key_split_plan(s, &pl, &pks);
}

/* vec of per-row values x[i * nrows + r] over atom row i's C slots. */
static rk_value row_slots(ub *g, const rk_value *x, uint32_t i) {
    const kn_attn_plan *pl = g->pl;
    rk_value e[RK_TILE_ACC_MAX_SLOTS];
    for (uint32_t t = 0; t < pl->atom->c_len; t++) e[t] = x[i * pl->rows.nrows + pl->rows.row_of_slot[t]];
    return rk_build_vpack(g->k, e, pl->atom->c_len);
}

/* A key-split block's warp states meet: warps 1.. write (m, l, O) to the
 * K/V stages lane by lane (the warps share one lane -> (row, column) map,
 * so a lane's slots are the same rows in every warp), then each warp folds
 * them into its own in warp order: m* = max, weights exp2(m - m*) on l and
 * O (0 for a state that saw no key). Only warp 0's result is stored. */
static void merge_warps(ub *g, rk_value *res) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    uint32_t nm = pl->mi * pl->rows.nrows, no = pl->mi * pl->on, items = merge_items(pl);
    rk_type f4 = rk_type_vec(k, RK_T_F32, 4), h8 = rk_type_vec(k, (rk_type){g->s->dtype}, KSPLIT_ITEM);
    rk_value zero = c32(k, 0), one = c32(k, 1), fz = rk_const_f32(k, 0.0f), ninf = rk_const_f32(k, -INFINITY);
    rk_value lanes8 = c32(k, pl->wave * KSPLIT_ITEM), eight = c32(k, KSPLIT_ITEM);
    rk_value lane8 = rk_build_mul(k, g->w.lane, eight);
    uint32_t nc = 2 * nm + no;
    rk_type types[3 * MAXV];
    for (uint32_t y = 0; y < nc; y++) types[y] = rk_value_type(k, res[y]);
    rk_value out[3 * MAXV];
    rk_if_else_begin(k, g->dec, nc, types, out);
    {
        rk_build_sync(k);   /* every warp is past its last read of the stages */
        rk_value other = rk_build_cmp(k, "ne", g->w.wm, zero);
        rk_if_begin(k, other);
        {
            rk_value w1 = rk_build_sub(k, g->w.wm, one);
            rk_value iv = c32(k, items);
            rk_value wi = rk_build_mul(k, w1, iv);
            for (uint32_t q = 0; q < items; q++) {
                rk_value v;
                if (q < no) {
                    v = res[2 * nm + q];
                } else {
                    rk_value e[4];
                    for (uint32_t c = 0; c < 4; c++) {
                        uint32_t y = 4 * (q - no) + c;
                        e[c] = y < 2 * nm ? res[y] : fz;
                    }
                    v = rk_build_vpack(k, e, 4);
                }
                rk_value qv = c32(k, q);
                rk_value slot = rk_build_add(k, wi, qv);
                rk_value sb = rk_build_mul(k, slot, lanes8);
                rk_value at = rk_build_add(k, sb, lane8);
                rk_value h = rk_build_vbitcast(k, v, h8);
                rk_store_smem(k, g->smem, &at, h);
            }
        }
        rk_if_end(k, NULL, 0);
        rk_build_sync(k);
        rk_value m[MAXV], l[MAXV], o[MAXV];
        carry_unpack(g, res, m, l, o);
        for (uint32_t w = 1; w < pl->warps; w++) {
            rk_value got[3 * MAXV + 4];
            for (uint32_t q = 0; q < items; q++) {
                rk_value slot = c32(k, (w - 1) * items + q);
                rk_value sb = rk_build_mul(k, slot, lanes8);
                rk_value at = rk_build_add(k, sb, lane8);
                rk_value h = rk_load_smem(k, g->smem, &at, KSPLIT_ITEM);
                rk_value v = rk_build_vbitcast(k, h, f4);
                if (q < no) {
                    got[2 * nm + q] = v;
                    continue;
                }
                for (uint32_t c = 0; c < 4; c++) {
                    uint32_t y = 4 * (q - no) + c;
                    if (y < 2 * nm) got[y] = rk_build_vextract(k, v, c);
                }
            }
            rk_value wa[MAXV], wb[MAXV];
            for (uint32_t y = 0; y < nm; y++) {
                rk_value mx = rk_build_fmax(k, m[y], got[y]);
                rk_value dead = rk_build_fcmp(k, "oeq", mx, ninf);
                rk_value muse = rk_build_select(k, dead, fz, mx);
                rk_value da = rk_build_fsub(k, m[y], muse);
                rk_value db = rk_build_fsub(k, got[y], muse);
                wa[y] = rk_build_exp2(k, da);
                wb[y] = rk_build_exp2(k, db);
                rk_value lb = rk_build_fmul(k, wb[y], got[nm + y]);
                l[y] = rk_build_fma(k, wa[y], l[y], lb);
                m[y] = mx;
            }
            for (uint32_t i = 0; i < pl->mi; i++) {
                rk_value av = row_slots(g, wa, i), bv = row_slots(g, wb, i);
                for (uint32_t dn = 0; dn < pl->on; dn++) {
                    uint32_t y = i * pl->on + dn;
                    rk_value ob = rk_tile_mul(k, got[2 * nm + y], bv);
                    o[y] = rk_tile_fma(k, o[y], av, ob);
                }
            }
        }
        rk_value merged[3 * MAXV];
        carry_pack(g, m, l, o, merged);
        rk_else(k, merged, nc);
    }
    rk_if_end(k, res, nc);
    for (uint32_t y = 0; y < nc; y++) res[y] = out[y];
}

/* Per (atom row, C slot): inside the sequence, the query's key position
 * (the causal diagonal) and the ALiBi slope; per C slot: its column. */
static void row_values(ub *g) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    rk_value zero = c32(k, 0);
    rk_value d0 = rk_build_add(k, g->off, g->q0);
    rk_value l2e = rk_const_f32(k, (float)M_LOG2E);
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t t = 0; t < pl->atom->c_len; t++) {
            rk_value col;
            rk_value row = slot_row(g, i, RK_FRAG_C, t, &col);
            g->ccol[t] = col;
            g->rok[i][t] = rk_build_cmp(k, "lt", row, g->nrows);
            rk_value tok = rk_build_udiv(k, row, g->G);
            g->rdiag[i][t] = rk_build_add(k, d0, tok);
            if (!g->s->alibi) continue;
            rk_value rc = rk_build_select(k, g->rok[i][t], row, zero);
            rk_value h = row_head(g, rc);
            rk_value sl = rk_load_global(k, g->p[g->ix->slopes], h, 1);
            g->rslope[i][t] = rk_build_fmul(k, sl, l2e);
        }
}

/* The loop over this split's key blocks (the first stages - 1 already
 * issued): wait, refill the ring, step; the warp's (m, l, O) into res. */
static void kv_loop(ub *g, bool keysplit, const rk_value *qf, rk_value *res) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    const rk_mma_atom *a = pl->atom;
    uint32_t S = pl->stages;
    rk_value zero = c32(k, 0), one = c32(k, 1);
    rk_value count = rk_build_sub(k, g->khi, g->klo);
    uint32_t nm = pl->mi * pl->rows.nrows, no = pl->mi * pl->on, nc = 2 * nm + no;
    RK_ASSERT(nc <= 3 * MAXV, "attention unified: loop carries fit");
    rk_value init[3 * MAXV], cur[3 * MAXV];
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    for (uint32_t y = 0; y < nm; y++) {
        init[y] = ninf;
        init[nm + y] = fz;
    }
    for (uint32_t y = 0; y < no; y++) init[2 * nm + y] = rk_tile_acc_zero(k, a);
    rk_value it = rk_for_begin(k, zero, count, one, keysplit ? "kvsplit" : "kv", nc, init, NULL, cur);
    {
        rk_value m[MAXV], l[MAXV], o[MAXV];
        for (uint32_t y = 0; y < nm; y++) {
            m[y] = cur[y];
            l[y] = cur[nm + y];
        }
        for (uint32_t y = 0; y < no; y++) o[y] = cur[2 * nm + y];
        rk_value j = rk_build_add(k, g->klo, it);
        if (S > 1) {
            rk_value Sv = c32(k, S), ahead = c32(k, S - 1);
            rk_build_async_wait_group(k, S - 2);
            rk_build_sync(k);
            rk_value nt = rk_build_add(k, it, ahead);
            rk_value nj = rk_build_add(k, g->klo, nt);
            rk_value nst = rk_build_umod(k, nt, Sv);
            issue(g, nj, nst);
            rk_value cs = rk_build_umod(k, it, Sv);
            step(g, keysplit, j, cs, qf, m, l, o);
        } else {
            rk_build_sync(k);
            issue(g, j, zero);
            rk_build_async_wait_group(k, 0);
            rk_build_sync(k);
            step(g, keysplit, j, zero, qf, m, l, o);
        }
        rk_value yv[3 * MAXV];
        for (uint32_t y = 0; y < nm; y++) {
            yv[y] = m[y];
            yv[nm + y] = l[y];
        }
        for (uint32_t y = 0; y < no; y++) yv[2 * nm + y] = o[y];
        rk_for_end(k, yv, nc, res);
    }
}

/* The mma.sync / MFMA body: Q gathered (into fragments where they fit),
 * the ring's prologue, the KV loop (a decode's key split beside the rows'
 * own loop, or only the key split where the full blocks run on wgmma:
 * dec_only), the warps' merge, the epilogue. */
static void mma_body(ub *g, bool dec_only) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    rk_value zero = g->c0;
    rk_value qbase = c32(k, pl->q_base);
    gather_q(g, qbase);
    rk_build_sync(k);
    const rk_mma_atom *a = pl->atom;
    rk_value qf[MAXV];
    if (pl->q_in_regs) {
        rk_value wt = c32(k, pl->wtm);
        rk_value wrow = rk_build_mul(k, g->rw, wt);
        for (uint32_t i = 0; i < pl->mi; i++)
            for (uint32_t kk = 0; kk < pl->dk; kk++) {
                rk_value ro = c32(k, i * a->m), k0 = c32(k, kk * a->k);
                rk_value mn = rk_build_add(k, wrow, ro);
                qf[i * pl->dk + kk] = rk_tile_frag_load(k, a, &pl->opq, g->smem, qbase, g->w.lane, mn, k0);
            }
        rk_build_sync(k);   /* the K/V stages overwrite Q */
    }
    row_values(g);

    rk_tile_copy_lanes_init(k, &pl->cpk, g->w.tid, &g->lk);
    rk_tile_copy_lanes_init(k, &pl->cpv, g->w.tid, &g->lv);
    g->fz = rk_const_f32(k, 0.0f);
    uint32_t S = pl->stages;
    for (uint32_t i = 0; i + 1 < S; i++) {
        rk_value ci = c32(k, i);
        rk_value j = rk_build_add(k, g->klo, ci);
        issue(g, j, ci);
    }
    uint32_t nm = pl->mi * pl->rows.nrows, no = pl->mi * pl->on, nc = 2 * nm + no;
    rk_value res[3 * MAXV];
    if (g->ksplit && dec_only) {
        kv_loop(g, true, qf, res);
    } else if (g->ksplit) {
        /* one loop per kind of block, so each loop body holds only its own products */
        rk_type types[3 * MAXV], acc = rk_type_vec(k, RK_T_F32, a->c_len);
        for (uint32_t y = 0; y < nc; y++) types[y] = y < 2 * nm ? RK_T_F32 : acc;
        rk_value r1[3 * MAXV], r2[3 * MAXV];
        rk_if_else_begin(k, g->dec, nc, types, res);
        kv_loop(g, true, qf, r1);
        rk_else(k, r1, nc);
        kv_loop(g, false, qf, r2);
        rk_if_end(k, r2, nc);
    } else {
        kv_loop(g, false, qf, res);
    }
    rk_build_async_wait_group(k, 0);
    if (g->ksplit) {
        merge_warps(g, res);
        rk_value other = rk_build_cmp(k, "ne", g->w.wm, zero);
        rk_value mute = rk_build_and(k, g->dec, other);
        g->nrows_st = rk_build_select(k, mute, zero, g->nrows);
    }
    kn_attn_unified_epilogue(g, res);
}

void kn_attn_unified_epilogue(ub *g, rk_value *res) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    const kn_attn_usig *ix = g->ix;
    const rk_value *p = g->p;
    rk_value zero = g->c0, one = g->c1, fz = g->fz;
    uint32_t nm = pl->mi * pl->rows.nrows;
    rk_value *mf = res, *lf = res + nm, *of = res + 2 * nm;
    if (g->s->kv_splits == 1) {
        write_output(g, mf, lf, of);
    } else {
        /* nb = 1: split 0 is the only live block of its query block */
        rk_value single = rk_build_cmp(k, "eq", g->nb, one);
        rk_if_else_begin(k, single, 0, NULL, NULL);
        write_output(g, mf, lf, of);
        rk_else(k, NULL, 0);
        {
            write_partial(g, mf, lf, of);
            rk_value tq = rk_build_mul(k, g->tok0, p[ix->Hkv]);
            rk_value cnt = rk_build_add(k, tq, g->hk);
            rk_value last = rk_tile_arrive_last_n(k, g->w.tid, p[ix->arrivals], cnt, g->nb);
            rk_if_begin(k, last);
            merge_splits(g);
            /* every split has arrived: the counter back to 0 for the next launch */
            rk_value t0 = rk_build_cmp(k, "eq", g->w.tid, zero);
            rk_if_begin(k, t0);
            rk_store_global(k, p[ix->arrivals], cnt, fz);
            rk_if_end(k, NULL, 0);
            rk_if_end(k, NULL, 0);
        }
        rk_if_end(k, NULL, 0);
    }
}

void kn_attn_unified_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_attention_spec *s = &in->u.attn;
    kn_attn_plan pl;
    rk_status pst = kn_attn_unified_plan(s, t, &pl);
    RK_ASSERT(pst == RK_OK, "attention unified: building an instance that does not validate");
    RK_ASSERT(pl.mi <= MAXMI, "attention unified: atoms per warp of a validated plan");
    kn_attn_usig ix;
    kn_attn_unified_sig_of(s, &ix);
    ub g = {.k = k, .s = s, .pl = &pl, .ix = &ix, .p = p};
    pst = rk_tile_warps_begin(k, pl.wave, pl.warps, 1, 1, &g.w);
    RK_ASSERT(pst == RK_OK, "attention unified: warp grid of a validated plan");
    rk_value zero = c32(k, 0), one = c32(k, 1);
    g.c0 = zero, g.c1 = one;
    rk_value x = rk_build_block_id(k, 0);
    g.hk = rk_build_block_id(k, 1);
    if (s->reverse_order) {
        /* linear id L = y X + x taken as (query block X - 1 - L / Hkv, KV head L % Hkv): the heads of one
         * query block run together and the batch's last blocks (a prefill-first batch's decodes) first */
        rk_value X = rk_build_grid_dim(k, 0), Y = rk_build_grid_dim(k, 1);
        rk_value row = rk_build_mul(k, g.hk, X);
        rk_value L = rk_build_add(k, row, x);
        rk_value qb = rk_build_udiv(k, L, Y);
        rk_value back = rk_build_mul(k, qb, Y);
        g.hk = rk_build_sub(k, L, back);
        rk_value last = rk_build_sub(k, X, one);
        x = rk_build_sub(k, last, qb);
    }
    g.split = rk_build_block_id(k, 2);
    g.nsplit = s->kv_splits > 1 ? p[ix.nsplit] : one;
    g.G = rk_build_udiv(k, p[ix.Hq], p[ix.Hkv]);
    rk_value bm = c32(k, pl.bm);
    g.bq = rk_build_udiv(k, bm, g.G);
    g.b = find_sequence(&g, x);
    rk_value b1 = rk_build_add(k, g.b, one);
    rk_value qs = rk_load_global(k, p[ix.qstart], g.b, 1);
    rk_value qe = rk_load_global(k, p[ix.qstart], b1, 1);
    g.qlen = rk_build_sub(k, qe, qs);
    g.kvlen = rk_load_global(k, p[ix.kvlens], g.b, 1);
    g.off = rk_build_sub(k, g.kvlen, g.qlen);
    rk_value sb = rk_build_udiv(k, qs, g.bq);
    rk_value start = rk_build_add(k, sb, g.b);
    rk_value local = rk_build_sub(k, x, start);
    g.q0 = rk_build_mul(k, local, g.bq);
    g.tok0 = rk_build_add(k, qs, g.q0);
    rk_value left = rk_build_sub(k, g.qlen, g.q0);
    rk_value tokens = rk_build_smin(k, left, g.bq);
    rk_value tpos = rk_build_smax(k, tokens, zero);
    g.nrows = rk_build_mul(k, tpos, g.G);
    g.nrows_st = g.nrows;
    g.rw = g.w.wm;
    g.ksplit = !s->whole_keys && key_split_plan(s, &pl, &g.pks);
    if (g.ksplit) {
        rk_value wt = c32(k, pl.wtm);
        g.dec = rk_build_cmp(k, "le", g.nrows, wt);
        g.rw = rk_build_select(k, g.dec, zero, g.w.wm);
    }
    rk_value P1 = c32(k, s->page_size - 1), Pv = c32(k, s->page_size);
    rk_value up = rk_build_add(k, p[ix.Skv], P1);
    g.maxp = rk_build_udiv(k, up, Pv);
    rk_value Dv = c32(k, s->head_dim);
    g.kstride = rk_build_mul(k, p[ix.Hkv], Dv);
    if (ix.wl >= 0) g.wl = p[ix.wl];
    rk_value l2e = rk_const_f32(k, (float)M_LOG2E);
    g.scale_l2 = rk_build_fmul(k, p[ix.scale], l2e);
    if (ix.cap >= 0) {
        rk_value f1 = rk_const_f32(k, 1.0f);
        g.scale_l2 = p[ix.scale];   /* the cap applies in natural units */
        g.rcap = rk_build_fdiv(k, f1, p[ix.cap]);
        g.cap_l2 = rk_build_fmul(k, p[ix.cap], l2e);
    }
    g.vscale = rk_const_f32(k, 1.0f);
    if (ix.kscale >= 0) {
        /* (q . ks k) = ks (q . k): K's scale rides on S's multiplier, V's on 1 / l */
        rk_value ks = rk_load_global(k, p[ix.kscale], g.hk, 1);
        g.scale_l2 = rk_build_fmul(k, g.scale_l2, ks);
        g.vscale = rk_load_global(k, p[ix.vscale], g.hk, 1);
    }
    split_range(&g);
    /* a block past its sequence's queries (the one spare block), or a split
     * past its query block's share count, has nothing to do */
    rk_value has_q = rk_build_cmp(k, "lt", g.q0, g.qlen);
    rk_value has_s = rk_build_cmp(k, "lt", g.split, g.nb);
    rk_value live = rk_build_and(k, has_q, has_s);
    rk_if_begin(k, live);

    /* the wgmma body's 128-byte-swizzled boxes repeat every 1024 bytes */
    rk_smem_alloc_opts al = {.align = RK_SOME(s->path == RK_ATTN_PF_WGMMA ? 1024 : 128)};
    g.smem = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &pl.lds_elems, 1, &al);
    if (s->path != RK_ATTN_PF_WGMMA) {
        mma_body(&g, false);
    } else {
        /* block uniform: a block of more rows than one warp's takes the wgmma body */
        rk_value wt = c32(k, pl.wtm);
        rk_value full = rk_build_cmp(k, "gt", g.nrows, wt);
        rk_if_else_begin(k, full, 0, NULL, NULL);
        kn_attn_unified_wgmma_body(&g, t);
        rk_else(k, NULL, 0);
        mma_body(&g, true);
        rk_if_end(k, NULL, 0);
    }
    rk_if_end(k, NULL, 0);
}

void kn_attn_unified_row_values(ub *g) { row_values(g); }
void kn_attn_unified_scores(ub *g, const kn_attn_plan *pl, rk_value j, const rk_value *koff, rk_value *s) {
    scores(g, pl, j, koff, s);
}
void kn_attn_unified_fp8_chunk(ub *g, uint32_t n, rk_value ptr, rk_value ok, rk_value idx, rk_value dst) {
    fp8_chunk(g, n, ptr, ok, idx, dst);
}
rk_value kn_attn_unified_row_at(ub *g, rk_value r, uint32_t per) { return row_at(g, r, per); }
