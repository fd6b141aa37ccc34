/* rocke — the attention decode kernel: block (split, KV head hk, sequence b)
 * serves all (Hq / Hkv) * Sq query rows of hk, so each key and value is
 * read once per KV head. A key is `lanes` lanes wide (one 16-byte load of D
 * each); the block's `slots` = threads / lanes keys are in flight together.
 *   range     the split's keys: [lo, len) of the sequence (lo: the window's
 *             first visible key) cut into kv_splits whole-page pieces;
 *   KV loop   stages = 1: page by page (the page id read once per page from
 *             the block table; contiguous caches step in 64-key pieces);
 *             stages 2..4: through the cp.async ring of
 *             attention_decode_ring.c. Each slot takes keys slot, slot +
 *             slots, ... of the page (stage): every row's
 *             dot product in f32 (lane partials, a butterfly over the key's
 *             lanes), masked to -inf, online softmax per row in the slot,
 *             up to 4 keys per update (one max and one rescale for them);
 *   merge     the slots of a warp by xor butterflies, then the warps'
 *             (m, l, O) through LDS, in warp order;
 *   output    one split: O = acc / l; several: the partial (acc, m, l) to
 *             Work, and the last split to arrive (rk_tile_arrive_last) merges
 *             them in split order and writes O, so the bits do not depend on
 *             the order the blocks ran in. Rows that see no key give O = 0.
 * fp8 caches (e4m3) are converted four bytes at a time; K's per-head scale
 * multiplies Q once, V's the final 1 / l.
 * This file is the VALU path (kv_path = valu: each row's scores are dot
 * products on the lanes) and the merge and output both paths share; the
 * atom path is attention_decode_atom.c. Layer: kernels. */
#include <math.h>

#include "attention_decode_int.h"

#define CONTIG_PIECE 64u   /* keys per loop step of a contiguous cache */



typedef kn_dec_state state;

/* i1: key j is visible to row r (the mask; rows past (Hq / Hkv) * Sq see nothing). */
rk_value kn_dec_visible(dk *g, rk_value row_ok, rk_value diag, rk_value j, rk_value valid) {
    rk_kernel *k = g->k;
    rk_value ok = rk_build_and(k, valid, row_ok);
    if (g->s->mask == RK_ATTN_MASK_CAUSAL) {
        rk_value c = rk_build_cmp(k, "le", j, diag);
        return rk_build_and(k, ok, c);
    }
    if (g->s->mask != RK_ATTN_MASK_WINDOW) return ok;
    rk_value zero = c32(k, 0);
    rk_value lo = rk_build_sub(k, diag, g->wl);
    rk_value lin = rk_build_cmp(k, "ge", j, lo);
    rk_value lneg = rk_build_cmp(k, "lt", g->wl, zero);
    rk_value l_ok = rk_build_or(k, lin, lneg);
    rk_value hi = rk_build_add(k, diag, g->wr);
    rk_value hin = rk_build_cmp(k, "le", j, hi);
    rk_value rneg = rk_build_cmp(k, "lt", g->wr, zero);
    rk_value r_ok = rk_build_or(k, hin, rneg);
    rk_value both = rk_build_and(k, l_ok, r_ok);
    return rk_build_and(k, ok, both);
}

/* vec<fp8 x 4n> -> vec<f32 x 4n>, four bytes at a time. */
rk_value kn_dec_fp8_to_f32(rk_kernel *k, rk_value v, uint32_t n) {
    rk_value out = {0};
    for (uint32_t x = 0; x < n; x += 4) {
        int32_t mask[4] = {(int32_t)x, (int32_t)x + 1, (int32_t)x + 2, (int32_t)x + 3};
        rk_value part = rk_build_vshuffle(k, v, v, mask, 4);
        rk_value f = rk_build_cvt_pk_f32_fp8x4(k, part);
        out = x ? rk_build_vconcat(k, out, f) : f;
    }
    return out;
}

/* A lane's slice of a key or value (vec cache elements) in f32. */
rk_value kn_dec_to_f32(dk *g, rk_value v) {
    rk_kernel *k = g->k;
    return g->s->kv_dtype == RK_ATTN_KV_SAME ? rk_tile_to_f32(k, v) : kn_dec_fp8_to_f32(k, v, g->g.vec);
}

#define CHUNK KN_DEC_CHUNK

/* n <= CHUNK keys of this slot: key x at element at[x] (i64) of both caches,
 * position j[x], valid[x] when inside the split (a clamped key is loaded
 * otherwise and masked). All loads first, then the update. */
static void keys_step(dk *g, uint32_t n, const rk_value *at, const rk_value *j, const rk_value *valid, state *st) {
    rk_kernel *k = g->k;
    rk_value kf[CHUNK], vf[CHUNK];
    for (uint32_t x = 0; x < n; x++) {
        rk_value kv = rk_load_global(k, g->K, at[x], g->g.vec);
        rk_value vv = rk_load_global(k, g->V, at[x], g->g.vec);
        kf[x] = kn_dec_to_f32(g, kv);
        vf[x] = kn_dec_to_f32(g, vv);
    }
    kn_dec_keys_update(g, n, kf, vf, j, valid, st);
}

/* This lane's part of a dot product: one multiply and vec - 1 fused
 * multiply-adds in element order (the loop is bound by issued instructions:
 * a product vector and its sum would take 2 vec - 1). */
static rk_value lane_dot(dk *g, rk_value q, rk_value kf) {
    rk_kernel *k = g->k;
    rk_value q0 = rk_build_vextract(k, q, 0);
    rk_value k0 = rk_build_vextract(k, kf, 0);
    rk_value acc = rk_build_fmul(k, q0, k0);
    for (uint32_t e = 1; e < g->g.vec; e++) {
        rk_value qe = rk_build_vextract(k, q, e);
        rk_value ke = rk_build_vextract(k, kf, e);
        acc = rk_build_fma(k, qe, ke, acc);
    }
    return acc;
}

/* Per row the n scores of keys kf[x] (f32 slices), one max, one rescale of
 * (l, acc) and the n exp2 weights of vf[x]. */
void kn_dec_keys_update(dk *g, uint32_t n, const rk_value *kf, const rk_value *vf, const rk_value *j,
                        const rk_value *valid, state *st) {
    rk_kernel *k = g->k;
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    for (uint32_t r = 0; r < g->R; r++) {
        rk_value sc[CHUNK], mnew = st->m[r];
        for (uint32_t x = 0; x < n; x++) {
            rk_value part = lane_dot(g, g->q[r], kf[x]);
            rk_value dot = rk_tile_wave_reduce(k, RK_RED_SUM, part, g->g.lanes);
            rk_value vis = kn_dec_visible(g, g->row_ok[r], g->diag[r], j[x], valid[x]);
            sc[x] = rk_build_select(k, vis, dot, ninf);
            mnew = rk_build_fmax(k, mnew, sc[x]);
        }
        rk_value dead = rk_build_fcmp(k, "oeq", mnew, ninf);
        rk_value muse = rk_build_select(k, dead, fz, mnew);   /* nothing visible yet: keep exp2 finite */
        rk_value dm = rk_build_fsub(k, st->m[r], muse);
        rk_value alpha = rk_build_exp2(k, dm);
        rk_value av = rk_tile_bcast(k, alpha, st->acc[r]);
        rk_value l = rk_build_fmul(k, st->l[r], alpha);
        rk_value acc = rk_tile_mul(k, st->acc[r], av);
        for (uint32_t x = 0; x < n; x++) {
            rk_value ds = rk_build_fsub(k, sc[x], muse);
            rk_value p = rk_build_exp2(k, ds);
            l = rk_build_fadd(k, l, p);
            rk_value pv = rk_tile_bcast(k, p, vf[x]);
            acc = rk_tile_fma(k, pv, vf[x], acc);
        }
        st->m[r] = mnew;
        st->l[r] = l;
        st->acc[r] = acc;
    }
}

/* The page of piece `pg` of this sequence (i32): the block table's entry
 * (paged) or pg itself (contiguous rows). */
rk_value kn_dec_page_id(dk *g, rk_value pg) {
    rk_kernel *k = g->k;
    if (!g->s->page_size) return pg;
    /* block_table[b, pg]; max_pages = ceil(Skv / P) per row */
    rk_value P1 = c32(k, g->piece - 1), Pv = c32(k, g->piece);
    rk_value up = rk_build_add(k, g->Skv, P1);
    rk_value maxp = rk_build_udiv(k, up, Pv);
    rk_value row = rk_build_mul(k, g->b, maxp);
    rk_value ix = rk_build_add(k, row, pg);
    return rk_load_global(k, g->bt, ix, 1);
}

/* First element (i64) of head hk in page `id` (kn_dec_page_id). */
rk_value kn_dec_page_first(dk *g, rk_value id) {
    rk_kernel *k = g->k;
    rk_value D = rk_const_i64(k, g->s->head_dim);
    if (g->s->page_size) {
        rk_value id64 = i64(k, id);
        rk_value pkeys = rk_const_i64(k, g->piece);
        rk_value pstride = rk_build_mul(k, g->kstride, pkeys);
        rk_value pb = rk_build_mul(k, id64, pstride);
        rk_value hk64 = i64(k, g->hk);
        rk_value ho = rk_build_mul(k, hk64, D);
        return rk_build_add(k, pb, ho);
    }
    /* [B, Hkv, Skv, D]: ((b * Hkv + hk) * Skv + id * piece) * D */
    rk_value bh = rk_build_mul(k, g->b, g->Hkv);
    rk_value bhk = rk_build_add(k, bh, g->hk);
    rk_value bhk64 = i64(k, bhk);
    rk_value skv64 = i64(k, g->Skv);
    rk_value rows = rk_build_mul(k, bhk64, skv64);
    rk_value pcv = c32(k, g->piece);
    rk_value first = rk_build_mul(k, id, pcv);
    rk_value f64 = i64(k, first);
    rk_value r = rk_build_add(k, rows, f64);
    return rk_build_mul(k, r, D);
}

rk_value kn_dec_piece_first(dk *g, rk_value pg) {
    rk_value id = kn_dec_page_id(g, pg);
    return kn_dec_page_first(g, id);
}

/* piece_first plus this lane's offset within the key. */
static rk_value piece_base(dk *g, rk_value pg) {
    rk_kernel *k = g->k;
    rk_value base = kn_dec_piece_first(g, pg);
    rk_value cv = c32(k, g->g.vec);
    rk_value lane_off = rk_build_mul(k, g->c, cv);
    rk_value lane64 = i64(k, lane_off);
    return rk_build_add(k, base, lane64);
}

/* The keys of piece pg inside [t0, t1): each slot's keys slot + n * slots. */
static void piece_step(dk *g, rk_value pg, rk_value t1, state *st) {
    rk_kernel *k = g->k;
    rk_value base = piece_base(g, pg);
    rk_value pcv = c32(k, g->piece), zero = c32(k, 0);
    rk_value first = rk_build_mul(k, pg, pcv);
    uint32_t per = (g->piece + g->g.slots - 1) / g->g.slots;
    for (uint32_t n0 = 0; n0 < per; n0 += CHUNK) {
        uint32_t n = per - n0 < CHUNK ? per - n0 : CHUNK;
        rk_value at[CHUNK], j[CHUNK], valid[CHUNK];
        for (uint32_t x = 0; x < n; x++) {
            rk_value nv = c32(k, (n0 + x) * g->g.slots);
            rk_value t = rk_build_add(k, g->slot, nv);
            j[x] = rk_build_add(k, first, t);
            rk_value in_piece = rk_build_cmp(k, "lt", t, pcv);
            rk_value in_split = rk_build_cmp(k, "lt", j[x], t1);
            valid[x] = rk_build_and(k, in_piece, in_split);
            /* an invalid key reads the piece's first (inside the split) and is masked */
            rk_value tc = rk_build_select(k, valid[x], t, zero);
            rk_value t64 = i64(k, tc);
            rk_value off = rk_build_mul(k, t64, g->kstride);
            at[x] = rk_build_add(k, base, off);
        }
        keys_step(g, n, at, j, valid, st);
    }
}

/* The split's keys [t0, t1) (i32, block uniform), whole pieces (at least
 * four) apart from the sequence's end; empty when t0 >= t1. */
void kn_dec_split_range(dk *g, rk_value *t0, rk_value *t1) {
    rk_kernel *k = g->k;
    rk_value zero = c32(k, 0), pcv = c32(k, g->piece);
    rk_value lo = zero;
    if (g->s->mask == RK_ATTN_MASK_WINDOW) {
        /* the first query row's window starts earliest: len - Sq - left */
        rk_value d0 = rk_build_sub(k, g->len, g->Sq);
        rk_value first = rk_build_sub(k, d0, g->wl);
        rk_value fpos = rk_build_smax(k, first, zero);
        rk_value lneg = rk_build_cmp(k, "lt", g->wl, zero);
        rk_value key = rk_build_select(k, lneg, zero, fpos);
        rk_value pc = rk_build_udiv(k, key, pcv);
        lo = rk_build_mul(k, pc, pcv);
    }
    rk_value span0 = rk_build_sub(k, g->len, lo);
    rk_value span = rk_build_smax(k, span0, zero);
    rk_value one = c32(k, 1), P1 = c32(k, g->piece - 1);
    rk_value S1 = rk_build_sub(k, g->nsplit, one);
    rk_value su = rk_build_add(k, span, S1);
    rk_value per_keys = rk_build_udiv(k, su, g->nsplit);
    rk_value pu = rk_build_add(k, per_keys, P1);
    rk_value per_pc = rk_build_udiv(k, pu, pcv);
    /* at least 4 pieces a split: a short sequence of a mixed batch takes
     * few splits (the others stay empty) instead of many tiny partials */
    rk_value min_pc = c32(k, 4);
    rk_value per_pc4 = rk_build_smax(k, per_pc, min_pc);
    rk_value per = rk_build_mul(k, per_pc4, pcv);
    rk_value off = rk_build_mul(k, g->split, per);
    *t0 = rk_build_add(k, lo, off);
    rk_value end = rk_build_add(k, *t0, per);
    rk_value e = rk_build_smin(k, end, g->len);
    *t1 = rk_build_smax(k, e, *t0);
}

/* Merge n states (m, l, acc) read by `get` in index order: m* = max m_i,
 * w_i = exp2(m_i - m*), l = sum w_i l_i, acc = sum w_i acc_i (a dead state
 * has m = -inf, l = 0, acc = 0 and weight 0). */
typedef void (*get_fn)(dk *g, uint32_t i, rk_value *m, rk_value *l, rk_value *acc, void *ud);
static void merge(dk *g, uint32_t n, get_fn get, void *ud, rk_value *m_out, rk_value *l_out, rk_value *acc_out) {
    rk_kernel *k = g->k;
    rk_value ms[64], ls[64], as[64];
    RK_ASSERT(n <= 64, "attention decode: merge of at most 64 states");
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    rk_value mx = ninf;
    for (uint32_t i = 0; i < n; i++) {
        get(g, i, &ms[i], &ls[i], &as[i], ud);
        mx = rk_build_fmax(k, mx, ms[i]);
    }
    rk_value dead = rk_build_fcmp(k, "oeq", mx, ninf);
    rk_value muse = rk_build_select(k, dead, fz, mx);
    rk_value l = fz, acc = rk_tile_f32s(k, 0.0f, g->g.vec);
    for (uint32_t i = 0; i < n; i++) {
        rk_value d = rk_build_fsub(k, ms[i], muse);
        rk_value w = rk_build_exp2(k, d);
        l = rk_build_fma(k, w, ls[i], l);
        rk_value wv = rk_tile_bcast(k, w, acc);
        acc = rk_tile_fma(k, wv, as[i], acc);
    }
    *m_out = mx;
    *l_out = l;
    *acc_out = acc;
}

/* LDS: [warp][row][D] partial O, then [warp][row][2] (m, l). */
typedef struct item { rk_value smem, r, cc; uint32_t nst; } item;
static void get_slot(dk *g, uint32_t i, rk_value *m, rk_value *l, rk_value *acc, void *ud) {
    rk_kernel *k = g->k;
    const item *it = ud;
    uint32_t D = g->s->head_dim;
    rk_value ro = c32(k, i * g->R);
    rk_value sr = rk_build_add(k, ro, it->r);
    rk_value Dv = c32(k, D), vv = c32(k, g->g.vec);
    rk_value a0 = rk_build_mul(k, sr, Dv);
    rk_value co = rk_build_mul(k, it->cc, vv);
    rk_value ai = rk_build_add(k, a0, co);
    *acc = rk_load_smem(k, it->smem, &ai, g->g.vec);
    rk_value sb = c32(k, it->nst * g->R * D), two = c32(k, 2), one = c32(k, 1);
    rk_value s2 = rk_build_mul(k, sr, two);
    rk_value mi = rk_build_add(k, sb, s2);
    rk_value li = rk_build_add(k, mi, one);
    *m = rk_load_smem(k, it->smem, &mi, 1);
    *l = rk_load_smem(k, it->smem, &li, 1);
}

/* Work index (i64) of row (hq, i), split sp, times `per` elements. */
static rk_value work_at(dk *g, rk_value hq, rk_value qi, rk_value sp, uint32_t per) {
    rk_kernel *k = g->k;
    rk_value bh = rk_build_mul(k, g->b, g->Hq);
    rk_value bhh = rk_build_add(k, bh, hq);
    rk_value row = rk_build_mul(k, bhh, g->Sq);
    rk_value rq = rk_build_add(k, row, qi);
    rk_value rq64 = i64(k, rq);
    rk_value S = rk_const_i64(k, g->s->kv_splits);
    rk_value rs = rk_build_mul(k, rq64, S);
    rk_value sp64 = i64(k, sp);
    rk_value x = rk_build_add(k, rs, sp64);
    rk_value pv = rk_const_i64(k, per);
    return rk_build_mul(k, x, pv);
}

typedef struct witem { rk_value wo, wml, hq, qi, cc; } witem;
static void get_split(dk *g, uint32_t i, rk_value *m, rk_value *l, rk_value *acc, void *ud) {
    rk_kernel *k = g->k;
    const witem *it = ud;
    /* a split past the run's num_splits wrote nothing: it reads the last split's slots (cached) and is dead */
    rk_value iv = c32(k, i), one32 = c32(k, 1);
    rk_value used = rk_build_cmp(k, "lt", iv, g->nsplit);
    rk_value lastsp = rk_build_sub(k, g->nsplit, one32);
    rk_value sp = rk_build_select(k, used, iv, lastsp);
    rk_value ob = work_at(g, it->hq, it->qi, sp, g->s->head_dim);
    rk_value vv = c32(k, g->g.vec);
    rk_value co = rk_build_mul(k, it->cc, vv);
    rk_value co64 = i64(k, co);
    rk_value oi = rk_build_add(k, ob, co64);
    *acc = rk_load_global(k, it->wo, oi, g->g.vec);
    rk_value mb = work_at(g, it->hq, it->qi, sp, 2);
    rk_value one = rk_const_i64(k, 1);
    rk_value lb = rk_build_add(k, mb, one);
    rk_value m0 = rk_load_global(k, it->wml, mb, 1);
    rk_value l0 = rk_load_global(k, it->wml, lb, 1);
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    rk_value azero = rk_tile_f32s(k, 0.0f, g->g.vec);
    *m = rk_build_select(k, used, m0, ninf);
    *l = rk_build_select(k, used, l0, fz);
    *acc = rk_build_select(k, used, *acc, azero);
}

/* i64 element (b, i, hq, cc * vec) of Q or O ([B, Sq, Hq, D]). */
rk_value kn_dec_qo_at(dk *g, rk_value hq, rk_value qi, rk_value cc) {
    rk_kernel *k = g->k;
    rk_value bs = rk_build_mul(k, g->b, g->Sq);
    rk_value bsi = rk_build_add(k, bs, qi);
    rk_value row = rk_build_mul(k, bsi, g->Hq);
    rk_value rh = rk_build_add(k, row, hq);
    rk_value rh64 = i64(k, rh);
    rk_value D = rk_const_i64(k, g->s->head_dim);
    rk_value base = rk_build_mul(k, rh64, D);
    rk_value vv = c32(k, g->g.vec);
    rk_value co = rk_build_mul(k, cc, vv);
    rk_value co64 = i64(k, co);
    return rk_build_add(k, base, co64);
}

/* O[b, i, hq, cc * vec ..] = acc / l (0 where l = 0). */
static void store_o(dk *g, rk_value O, rk_value hq, rk_value qi, rk_value cc, rk_value l, rk_value acc) {
    rk_kernel *k = g->k;
    rk_value fz = rk_const_f32(k, 0.0f), f1 = rk_const_f32(k, 1.0f);
    rk_value pos = rk_build_fcmp(k, "ogt", l, fz);
    rk_value safe = rk_build_select(k, pos, l, f1);
    rk_value r = rk_build_fdiv(k, f1, safe);
    rk_value rv = rk_build_fmul(k, r, g->vscale);
    rk_value inv = rk_build_select(k, pos, rv, fz);
    rk_value iv = rk_tile_bcast(k, inv, acc);
    rk_value o = rk_tile_mul(k, acc, iv);
    rk_value ov = rk_tile_from_f32(k, o, g->s->dtype);
    rk_value at = kn_dec_qo_at(g, hq, qi, cc);
    rk_store_global(k, O, at, ov);
}

/* Row r's query head and token (clamped to row 0's for rows past the group). */
void kn_dec_row_of(dk *g, rk_value r, rk_value *hq, rk_value *qi, rk_value *ok) {
    rk_kernel *k = g->k;
    rk_value rows = rk_build_mul(k, g->group, g->Sq);
    *ok = rk_build_cmp(k, "lt", r, rows);
    rk_value zero = c32(k, 0);
    rk_value rc = rk_build_select(k, *ok, r, zero);
    rk_value gi = rk_build_udiv(k, rc, g->Sq);
    *qi = rk_build_umod(k, rc, g->Sq);
    rk_value h0 = rk_build_mul(k, g->hk, g->group);
    *hq = rk_build_add(k, h0, gi);
}

/* The key slots of one warp merged by xor butterflies over the slot bits
 * of the lane id (masks lanes .. wave / 2): afterwards the warp's first
 * slot holds the warp's state. */
static void warp_merge(dk *g, uint32_t wave, rk_value *m, rk_value *l, rk_value *acc) {
    rk_kernel *k = g->k;
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    for (uint32_t x = g->g.lanes; x < wave; x *= 2) {
        rk_value xv = c32(k, x);
        for (uint32_t r = 0; r < g->R; r++) {
            rk_value om = rk_build_shuffle(k, "xor", m[r], xv);
            rk_value ol = rk_build_shuffle(k, "xor", l[r], xv);
            rk_value e[16];
            for (uint32_t v = 0; v < g->g.vec; v++) {
                rk_value a = rk_build_vextract(k, acc[r], v);
                e[v] = rk_build_shuffle(k, "xor", a, xv);
            }
            rk_value oacc = rk_build_vpack(k, e, g->g.vec);
            rk_value mx = rk_build_fmax(k, m[r], om);
            rk_value dead = rk_build_fcmp(k, "oeq", mx, ninf);
            rk_value muse = rk_build_select(k, dead, fz, mx);
            rk_value da = rk_build_fsub(k, m[r], muse);
            rk_value wa = rk_build_exp2(k, da);
            rk_value db = rk_build_fsub(k, om, muse);
            rk_value wb = rk_build_exp2(k, db);
            rk_value lb = rk_build_fmul(k, wb, ol);
            l[r] = rk_build_fma(k, wa, l[r], lb);
            rk_value wav = rk_tile_bcast(k, wa, acc[r]);
            rk_value wbv = rk_tile_bcast(k, wb, acc[r]);
            rk_value ab = rk_tile_mul(k, wbv, oacc);
            acc[r] = rk_tile_fma(k, wav, acc[r], ab);
            m[r] = mx;
        }
    }
}

/* The KV loop straight from global memory (stages = 1): page by page, the
 * keys' loads of a page issued before its math. */
static void direct_loop(dk *g, rk_value t0, rk_value t1, state *st) {
    rk_kernel *k = g->k;
    rk_value pcv = c32(k, g->piece), P1 = c32(k, g->piece - 1);
    rk_value pfirst = rk_build_udiv(k, t0, pcv);
    rk_value tu = rk_build_add(k, t1, P1);
    rk_value pend = rk_build_udiv(k, tu, pcv);
    uint32_t R = g->R, nc = 3 * R;
    rk_value init[3 * MAXR], cur[3 * MAXR], res[3 * MAXR];
    kn_dec_state_pack(st, R, init);
    rk_value one = c32(k, 1);
    rk_value pg = rk_for_begin(k, pfirst, pend, one, "page", nc, init, NULL, cur);
    {
        state in;
        kn_dec_state_unpack(cur, R, &in);
        piece_step(g, pg, t1, &in);
        rk_value y[3 * MAXR];
        kn_dec_state_pack(&in, R, y);
        rk_for_end(k, y, nc, res);
    }
    kn_dec_state_unpack(res, R, st);
}

void kn_attn_decode_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_attention_spec *s = &in->u.attn;
    kn_attn_dsig ix;
    kn_attn_decode_sig_of(s, &ix);
    dk g = {.k = k, .s = s, .g = kn_attn_decode_geom(s, t), .R = s->kv_rows};
    g.piece = s->page_size ? s->page_size : CONTIG_PIECE;
    RK_ASSERT(g.R <= MAXR, "attention decode: kv_rows of a validated instance");
    g.tid = rk_build_thread_id(k, 0);
    rk_value lanes = c32(k, g.g.lanes);
    g.slot = rk_build_udiv(k, g.tid, lanes);
    g.c = rk_build_umod(k, g.tid, lanes);
    g.hk = rk_build_block_id(k, 1);
    g.b = rk_build_block_id(k, 2);
    g.split = rk_build_block_id(k, 0);
    g.nsplit = ix.nsplit >= 0 ? p[ix.nsplit] : c32(k, 1);
    g.Sq = p[ix.Sq];
    g.Hq = p[ix.Hq];
    g.Skv = p[ix.Skv];
    g.Hkv = p[ix.Hkv];
    g.group = rk_build_udiv(k, p[ix.Hq], p[ix.Hkv]);
    g.len = rk_load_global(k, p[ix.lens], g.b, 1);
    g.K = p[ix.kc];
    g.V = p[ix.vc];
    g.bt = ix.bt >= 0 ? p[ix.bt] : (rk_value){0};
    rk_value D64 = rk_const_i64(k, s->head_dim);
    if (s->page_size) {
        rk_value hkv64 = i64(k, p[ix.Hkv]);
        g.kstride = rk_build_mul(k, hkv64, D64);
    } else {
        g.kstride = D64;
    }
    if (s->mask == RK_ATTN_MASK_WINDOW) {
        g.wl = p[ix.wl];
        g.wr = p[ix.wr];
    }
    /* rows: (query head, token) pairs; the key diagonal len - Sq + i */
    rk_value l2e = rk_const_f32(k, (float)M_LOG2E);
    rk_value scale_l2 = rk_build_fmul(k, p[ix.scale], l2e);
    g.vscale = rk_const_f32(k, 1.0f);
    if (ix.kscale >= 0) {
        /* dot(q, ks * k) = ks * dot(q, k): K's scale rides on Q */
        rk_value ks = rk_load_global(k, p[ix.kscale], g.hk, 1);
        scale_l2 = rk_build_fmul(k, scale_l2, ks);
        g.vscale = rk_load_global(k, p[ix.vscale], g.hk, 1);
    }
    /* blocks past the run's num_splits (kv_splits is the most a run may use) leave at once */
    rk_value live = rk_build_cmp(k, "lt", g.split, g.nsplit);
    rk_if_begin(k, live);
    if (kn_attn_decode_atoms(s)) {
        kn_dec_atom_build(&g, t, p, &ix, scale_l2);
        rk_if_end(k, NULL, 0);
        return;
    }
    rk_value off = rk_build_sub(k, g.len, g.Sq);
    rk_value vv = c32(k, g.g.vec);
    rk_value lane_off = rk_build_mul(k, g.c, vv);
    for (uint32_t r = 0; r < g.R; r++) {
        rk_value rv = c32(k, r);
        kn_dec_row_of(&g, rv, &g.hq[r], &g.qi[r], &g.row_ok[r]);
        g.diag[r] = rk_build_add(k, off, g.qi[r]);
        rk_value at = kn_dec_qo_at(&g, g.hq[r], g.qi[r], g.c);
        rk_value qv = rk_load_global(k, p[ix.q], at, g.g.vec);
        rk_value qf = rk_tile_to_f32(k, qv);
        rk_value sv = rk_tile_bcast(k, scale_l2, qf);
        g.q[r] = rk_tile_mul(k, qf, sv);
    }

    /* the KV loop over this split's pieces, (m, l, acc) per row carried */
    rk_value t0, t1;
    kn_dec_split_range(&g, &t0, &t1);
    uint32_t R = g.R;
    state st;
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    rk_value azero = rk_tile_f32s(k, 0.0f, g.g.vec);
    for (uint32_t r = 0; r < R; r++) {
        st.m[r] = ninf;
        st.l[r] = fz;
        st.acc[r] = azero;
    }
    if (kn_dec_ring_on(s))
        kn_dec_ring_loop(&g, t0, t1, &st);
    else
        direct_loop(&g, t0, t1, &st);
    rk_value one = c32(k, 1);

    /* the slots of a warp merged in registers, then each warp's state into
     * LDS (its first slot; lane 0 of the key writes m and l) */
    rk_value *mf = st.m, *lf = st.l, *af = st.acc;
    warp_merge(&g, t->wave_size, mf, lf, af);
    uint32_t D = s->head_dim, lds_elems = g.g.lds_bytes / 4;
    rk_value smem = rk_build_smem_alloc(k, RK_T_F32, &lds_elems, 1);
    rk_value zero = c32(k, 0), two = c32(k, 2), Dv = c32(k, D);
    rk_value wv = c32(k, t->wave_size);
    rk_value warp = rk_build_udiv(k, g.tid, wv);
    rk_value in_warp = rk_build_umod(k, g.tid, wv);
    rk_value first_slot = rk_build_cmp(k, "lt", in_warp, lanes);
    rk_value lead0 = rk_build_cmp(k, "eq", g.c, zero);
    rk_value lead = rk_build_and(k, lead0, first_slot);
    rk_value Rv = c32(k, R);
    rk_value srow0 = rk_build_mul(k, warp, Rv);
    for (uint32_t r = 0; r < R; r++) {
        rk_value rv = c32(k, r);
        rk_value sr = rk_build_add(k, srow0, rv);
        rk_value a0 = rk_build_mul(k, sr, Dv);
        rk_value ai = rk_build_add(k, a0, lane_off);
        rk_if_begin(k, first_slot);
        rk_store_smem(k, smem, &ai, af[r]);
        rk_if_end(k, NULL, 0);
        rk_if_begin(k, lead);
        rk_value sb = c32(k, g.g.warps * R * D);
        rk_value s2 = rk_build_mul(k, sr, two);
        rk_value mi = rk_build_add(k, sb, s2);
        rk_value li = rk_build_add(k, mi, one);
        rk_store_smem(k, smem, &mi, mf[r]);
        rk_store_smem(k, smem, &li, lf[r]);
        rk_if_end(k, NULL, 0);
    }
    rk_build_sync(k);
    kn_dec_finish(&g, p, &ix, smem, g.g.warps);
    rk_if_end(k, NULL, 0);
}

/* After the block's nst states ([state][row][D] partial O, then
 * [state][row][2] (m, l), f32 in smem) are stored and synchronized: items
 * (row, lane slice) merge them, then O or the split's partial; with
 * splits, the last split to arrive merges the partials. */
void kn_dec_finish(dk *gp, const rk_value *p, const kn_attn_dsig *ixp, rk_value smem, uint32_t nst) {
    dk g = *gp;
    kn_attn_dsig ix = *ixp;
    rk_kernel *k = g.k;
    const rk_attention_spec *s = g.s;
    uint32_t R = g.R, D = s->head_dim;
    rk_value zero = c32(k, 0), fz = rk_const_f32(k, 0.0f);
    rk_value lanes = c32(k, g.g.lanes), vv = c32(k, g.g.vec);
    uint32_t items = R * g.g.lanes, rounds = (items + KN_DECODE_THREADS - 1) / KN_DECODE_THREADS;
    bool split = s->kv_splits > 1;
    rk_value O = p[ix.o];
    rk_value it_r[MAXR * 32 / KN_DECODE_THREADS + 1], it_cc[MAXR * 32 / KN_DECODE_THREADS + 1];
    rk_value it_ok[MAXR * 32 / KN_DECODE_THREADS + 1];
    rk_value split_id = g.split;
    for (uint32_t n = 0; n < rounds; n++) {
        rk_value nb = c32(k, n * KN_DECODE_THREADS);
        rk_value x = rk_build_add(k, g.tid, nb);
        rk_value iv = c32(k, items);
        rk_value in_items = rk_build_cmp(k, "lt", x, iv);
        rk_value xc = rk_build_select(k, in_items, x, zero);
        it_r[n] = rk_build_udiv(k, xc, lanes);
        it_cc[n] = rk_build_umod(k, xc, lanes);
        item si = {smem, it_r[n], it_cc[n], nst};
        rk_value m, l, acc;
        merge(&g, nst, get_slot, &si, &m, &l, &acc);
        rk_value hq, qi, rok;
        kn_dec_row_of(&g, it_r[n], &hq, &qi, &rok);
        it_ok[n] = rk_build_and(k, in_items, rok);
        rk_if_begin(k, it_ok[n]);
        if (!split) {
            store_o(&g, O, hq, qi, it_cc[n], l, acc);
        } else {
            rk_value ob = work_at(&g, hq, qi, split_id, D);
            rk_value co = rk_build_mul(k, it_cc[n], vv);
            rk_value co64 = i64(k, co);
            rk_value oi = rk_build_add(k, ob, co64);
            rk_store_global(k, p[ix.work_o], oi, acc);
            rk_value first = rk_build_cmp(k, "eq", it_cc[n], zero);
            rk_if_begin(k, first);
            rk_value mb = work_at(&g, hq, qi, split_id, 2);
            rk_value one64 = rk_const_i64(k, 1);
            rk_value lb = rk_build_add(k, mb, one64);
            rk_store_global(k, p[ix.work_ml], mb, m);
            rk_store_global(k, p[ix.work_ml], lb, l);
            rk_if_end(k, NULL, 0);
        }
        rk_if_end(k, NULL, 0);
    }
    if (!split) return;

    /* the last split of (b, hk) to arrive merges the partials in split order */
    rk_value bh = rk_build_mul(k, g.b, g.Hkv);
    rk_value cnt = rk_build_add(k, bh, g.hk);
    rk_value last = rk_tile_arrive_last_n(k, g.tid, p[ix.arrivals], cnt, g.nsplit);
    rk_if_begin(k, last);
    for (uint32_t n = 0; n < rounds; n++) {
        rk_value hq, qi, rok;
        kn_dec_row_of(&g, it_r[n], &hq, &qi, &rok);
        rk_if_begin(k, it_ok[n]);
        witem wi = {p[ix.work_o], p[ix.work_ml], hq, qi, it_cc[n]};
        rk_value m, l, acc;
        merge(&g, s->kv_splits, get_split, &wi, &m, &l, &acc);
        store_o(&g, O, hq, qi, it_cc[n], l, acc);
        rk_if_end(k, NULL, 0);
    }
    /* every split has arrived: the counter back to 0 for the next launch */
    rk_value t0th = rk_build_cmp(k, "eq", g.tid, zero);
    rk_if_begin(k, t0th);
    rk_store_global(k, p[ix.arrivals], cnt, fz);
    rk_if_end(k, NULL, 0);
    rk_if_end(k, NULL, 0);
}
