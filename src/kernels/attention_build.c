/* rocke — the attention kernel (forward, FlashAttention-2 shape): block
 * (x, y, z) takes query rows [x*block_m, +block_m) of query head y of batch
 * z; its warps own block_m / warps rows each.
 *   Q          the tile to LDS once, then every Q fragment into registers
 *              (or, when they do not fit beside O, read at every step);
 *   KV loop    over the key blocks the mask leaves visible (causal and
 *              window bounds skip whole blocks): K and V tiles through
 *              `stages` LDS buffers (cp.async groups from 2 on), S = Q K^T
 *              atom by atom, scaled by scale * log2(e), masked only in
 *              blocks that cross the diagonal, the window or the key tail;
 *              online softmax in f32 (row max across the lanes the
 *              accumulator spreads a row over, exp2, rescale O and the
 *              lane's partial row sum); P to 16 bits as the A operand of
 *              O += P V (rk_tile_acc_to_a), V fragments read transposed;
 *   epilogue   the row sums reduced across lanes, O = acc / l stored for
 *              the rows inside the sequence, LSE = m ln2 + ln l; fully
 *              masked rows give O = 0 and LSE = -inf.
 * Layer: kernels. */
#include <math.h>

#include "attention_int.h"

#define MAXV 256   /* accumulators / fragments of one kind per thread */

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

typedef kn_attn_ctx ak;

/* i64 element offset b * sb + h * sh + start * ss of a tensor's view. */
static rk_value view_off(rk_kernel *k, rk_value b, rk_value sb, rk_value h, rk_value sh, rk_value start,
                         rk_value ss) {
    rk_value b64 = rk_build_sext(k, b, RK_T_I64);
    rk_value h64 = rk_build_sext(k, h, RK_T_I64);
    rk_value s64 = rk_build_sext(k, start, RK_T_I64);
    rk_value ss64 = rk_build_sext(k, ss, RK_T_I64);
    rk_value x = rk_build_mul(k, b64, sb);
    rk_value y = rk_build_mul(k, h64, sh);
    rk_value z = rk_build_mul(k, s64, ss64);
    rk_value xy = rk_build_add(k, x, y);
    return rk_build_add(k, xy, z);
}

static rk_value move(rk_kernel *k, rk_value ptr, rk_value elems, rk_scalar e) {
    rk_value eb = rk_const_i64(k, rk_tile_elem_bytes(e));
    rk_value bytes = rk_build_mul(k, elems, eb);
    return rk_build_global_ptr_add(k, ptr, bytes);
}

/* Copy key block j (i32) into stage st (i32): K and V, one async group. */
static void issue(ak *g, rk_value j, rk_value st) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    rk_value bn = c32(k, pl->bn), zero = c32(k, 0);
    rk_value r0 = rk_build_mul(k, j, bn);
    rk_value size = c32(k, pl->kv_stage);
    rk_value base = rk_build_mul(k, st, size);
    rk_value vb = c32(k, pl->v_base);
    rk_value vbase = rk_build_add(k, base, vb);
    rk_tile_copy_issue(k, &pl->cpk, &g->lk, &g->gk, r0, zero, g->smem, base);
    rk_tile_copy_issue(k, &pl->cpv, &g->lv, &g->gv, r0, zero, g->smem, vbase);
    rk_build_async_commit_group(k);
}

/* Query row and key of accumulator slot t of atom (i, jn) for this lane. */
static void slot_coord(ak *g, rk_value key0, uint32_t i, uint32_t jn, uint32_t t, rk_value *row, rk_value *key) {
    rk_kernel *k = g->k;
    const rk_mma_atom *a = g->pl->atom;
    rk_tile_frag_coord fc = rk_tile_atom_coord(k, a->id, RK_FRAG_C, g->w.lane, t);
    rk_value ro = c32(k, i * a->m), co = c32(k, jn * a->n);
    rk_value r = rk_build_add(k, g->row0, ro);
    *row = rk_build_add(k, r, fc.row);
    rk_value c = rk_build_add(k, key0, co);
    *key = rk_build_add(k, c, fc.col);
}

/* i1: key is visible to query row (the mask's band and the key tail). */
static rk_value visible(ak *g, rk_value row, rk_value key) {
    rk_kernel *k = g->k;
    rk_value ok = rk_build_cmp(k, "lt", key, g->klen);
    if (g->s->mask == RK_ATTN_MASK_NONE) return ok;
    rk_value diag = rk_build_add(k, row, g->off);
    if (g->s->mask == RK_ATTN_MASK_CAUSAL) {
        rk_value c = rk_build_cmp(k, "le", key, diag);
        return rk_build_and(k, ok, c);
    }
    rk_value zero = c32(k, 0);
    rk_value lo = rk_build_sub(k, diag, g->wl);
    rk_value lin = rk_build_cmp(k, "ge", key, lo);
    rk_value lneg = rk_build_cmp(k, "lt", g->wl, zero);
    rk_value l_ok = rk_build_or(k, lin, lneg);
    rk_value hi = rk_build_add(k, diag, g->wr);
    rk_value hin = rk_build_cmp(k, "le", key, hi);
    rk_value rneg = rk_build_cmp(k, "lt", g->wr, zero);
    rk_value r_ok = rk_build_or(k, hin, rneg);
    rk_value both = rk_build_and(k, l_ok, r_ok);
    return rk_build_and(k, ok, both);
}

/* The scores with every invisible element at -inf. */
static void apply_mask(ak *g, rk_value key0, const rk_value *s, rk_value *out) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    const rk_mma_atom *a = pl->atom;
    rk_value ninf = rk_const_f32(k, -INFINITY);
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t jn = 0; jn < pl->sn; jn++) {
            rk_value e[RK_TILE_ACC_MAX_SLOTS];
            rk_value v = s[i * pl->sn + jn];
            for (uint32_t t = 0; t < a->c_len; t++) {
                rk_value row, key;
                slot_coord(g, key0, i, jn, t, &row, &key);
                rk_value ok = visible(g, row, key);
                rk_value x = rk_build_vextract(k, v, t);
                e[t] = rk_build_select(k, ok, x, ninf);
            }
            out[i * pl->sn + jn] = rk_build_vpack(k, e, a->c_len);
        }
}

/* i1 (block uniform): key block j holds a key some row of the block may not see. */
static rk_value needs_mask(ak *g, rk_value j) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    rk_value bn = c32(k, pl->bn), one = c32(k, 1), zero = c32(k, 0);
    rk_value first = rk_build_mul(k, j, bn);
    rk_value endk = rk_build_add(k, first, bn);
    rk_value last = rk_build_sub(k, endk, one);
    rk_value tail = rk_build_cmp(k, "gt", endk, g->klen);
    if (g->s->mask == RK_ATTN_MASK_NONE) return tail;
    /* the first row sees the fewest keys on the right, the block's last row on the left */
    rk_value d0 = rk_build_add(k, g->m0, g->off);
    rk_value bm1 = c32(k, pl->bm - 1);
    rk_value mlast = rk_build_add(k, g->m0, bm1);
    rk_value d1 = rk_build_add(k, mlast, g->off);
    rk_value need = tail;
    if (g->s->mask == RK_ATTN_MASK_CAUSAL) {
        rk_value right = rk_build_cmp(k, "gt", last, d0);
        return rk_build_or(k, need, right);
    }
    rk_value rlim = rk_build_add(k, d0, g->wr);
    rk_value rcut = rk_build_cmp(k, "gt", last, rlim);
    rk_value rpos = rk_build_cmp(k, "ge", g->wr, zero);
    rk_value right = rk_build_and(k, rcut, rpos);
    rk_value llim = rk_build_sub(k, d1, g->wl);
    rk_value lcut = rk_build_cmp(k, "lt", first, llim);
    rk_value lpos = rk_build_cmp(k, "ge", g->wl, zero);
    rk_value left = rk_build_and(k, lcut, lpos);
    rk_value either = rk_build_or(k, right, left);
    return rk_build_or(k, need, either);
}

/* The running softmax state of one warp: m and l per (atom row i, row
 * group r), O accumulators per (i, atom along D). */
typedef struct state {
    rk_value m[MAXV], l[MAXV], o[MAXV];
} state;

/* vec of the per-row values x[i * nrows + r] spread over atom i's slots */
static rk_value slots_of(rk_kernel *k, const kn_attn_plan *pl, const rk_value *x, uint32_t i) {
    rk_value e[RK_TILE_ACC_MAX_SLOTS];
    for (uint32_t t = 0; t < pl->atom->c_len; t++) e[t] = x[i * pl->rows.nrows + pl->rows.row_of_slot[t]];
    return rk_build_vpack(k, e, pl->atom->c_len);
}
static rk_value per_slot(ak *g, const rk_value *x, uint32_t i) { return slots_of(g->k, g->pl, x, i); }

/* Q fragment (atom row i, K step kk) of the warp whose first row is wrow, from the Q tile in LDS. */
static rk_value q_frag_at(rk_kernel *k, const kn_attn_plan *pl, rk_value smem, rk_value lane, rk_value wrow,
                          uint32_t i, uint32_t kk) {
    const rk_mma_atom *a = pl->atom;
    rk_value ro = c32(k, i * a->m), k0 = c32(k, kk * a->k), qb = c32(k, pl->q_base);
    rk_value mn = rk_build_add(k, wrow, ro);
    return rk_tile_frag_load(k, a, &pl->opq, smem, qb, lane, mn, k0);
}
static rk_value q_frag(ak *g, uint32_t i, uint32_t kk) {
    return q_frag_at(g->k, g->pl, g->smem, g->w.lane, g->wrow, i, kk);
}

static rk_value exp2_one(rk_kernel *k, rk_value x, void *ud) {
    (void)ud;
    return rk_build_exp2(k, x);
}

/* The online softmax over one key block's masked scores s[i * sn + jn]
 * (scaled by log2(e)): per row the max across the lanes of the row, the
 * rescale alpha of O (o[i * on + dn]) and of the lane's partial row sum l,
 * and P = exp2(s - m) into pv; m, l and o are updated in place. The prefill
 * step and decode's atom path share it. */
static void softmax_core(rk_kernel *k, const kn_attn_plan *pl, const rk_value *masked, rk_value *m, rk_value *l,
                         rk_value *o, rk_value *pv, rk_value *alpha_out) {
    const rk_mma_atom *a = pl->atom;
    rk_value msub[MAXV], alpha[MAXV];   /* per row: what the exps subtract, the rescale of O and l */
    uint32_t nr = pl->rows.nrows;
    rk_value zero = rk_const_f32(k, 0.0f), ninf = rk_const_f32(k, -INFINITY);
    for (uint32_t i = 0; i < pl->mi; i++)
        for (uint32_t r = 0; r < nr; r++) {
            rk_value mx = ninf;
            for (uint32_t jn = 0; jn < pl->sn; jn++)
                for (uint32_t t = 0; t < a->c_len; t++) {
                    if (pl->rows.row_of_slot[t] != r) continue;
                    rk_value x = rk_build_vextract(k, masked[i * pl->sn + jn], t);
                    mx = rk_build_fmax(k, mx, x);
                }
            mx = rk_tile_acc_row_reduce(k, &pl->rows, RK_RED_MAX, mx);
            uint32_t x = i * nr + r;
            rk_value mnew = rk_build_fmax(k, m[x], mx);
            rk_value dead = rk_build_fcmp(k, "oeq", mnew, ninf);
            rk_value muse = rk_build_select(k, dead, zero, mnew);   /* a row with nothing visible yet */
            rk_value dm = rk_build_fsub(k, m[x], muse);
            alpha[x] = rk_build_exp2(k, dm);
            m[x] = mnew;
            msub[x] = muse;
        }
    for (uint32_t i = 0; i < pl->mi; i++) {
        rk_value sub = slots_of(k, pl, msub, i);
        rk_value rs[RK_TILE_ACC_MAX_SLOTS] = {0};
        for (uint32_t jn = 0; jn < pl->sn; jn++) {
            rk_value d = rk_tile_sub(k, masked[i * pl->sn + jn], sub);
            rk_value e = rk_tile_map(k, d, exp2_one, NULL);
            pv[i * pl->sn + jn] = e;
            for (uint32_t t = 0; t < a->c_len; t++) {
                rk_value x = rk_build_vextract(k, e, t);
                uint32_t r = pl->rows.row_of_slot[t];
                rs[r] = jn == 0 && pl->rows.row_slot0[r] == t ? x : rk_build_fadd(k, rs[r], x);
            }
        }
        for (uint32_t r = 0; r < nr; r++) {
            uint32_t x = i * nr + r;
            l[x] = rk_tile_fma(k, alpha[x], l[x], rs[r]);
        }
        if (!o) continue;
        rk_value av = slots_of(k, pl, alpha, i);
        for (uint32_t dn = 0; dn < pl->on; dn++) o[i * pl->on + dn] = rk_tile_mul(k, o[i * pl->on + dn], av);
    }
    for (uint32_t x = 0; alpha_out && x < pl->mi * nr; x++) alpha_out[x] = alpha[x];
}

void kn_attn_softmax_step(rk_kernel *k, const kn_attn_plan *pl, const rk_value *masked, rk_value *m, rk_value *l,
                          rk_value *o, rk_value *pv) {
    softmax_core(k, pl, masked, m, l, o, pv, NULL);
}

void kn_attn_softmax_rows(rk_kernel *k, const kn_attn_plan *pl, const rk_value *masked, rk_value *m, rk_value *l,
                          rk_value *pv, rk_value *alpha) {
    softmax_core(k, pl, masked, m, l, NULL, pv, alpha);
}

void kn_attn_rescale(rk_kernel *k, const kn_attn_plan *pl, const rk_value *alpha, rk_value *o) {
    for (uint32_t i = 0; i < pl->mi; i++) {
        rk_value av = slots_of(k, pl, alpha, i);
        for (uint32_t dn = 0; dn < pl->on; dn++) o[i * pl->on + dn] = rk_tile_mul(k, o[i * pl->on + dn], av);
    }
}

void kn_attn_scale_mask(kn_attn_ctx *g, rk_value j, rk_value *s, rk_value *masked) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    uint32_t ns = pl->mi * pl->sn;
    /* log2(e) folded into the scale: p = exp2(s * scale * log2e - m) */
    for (uint32_t x = 0; x < ns; x++) {
        rk_value sc = rk_tile_bcast(k, g->scale_l2, s[x]);
        s[x] = rk_tile_mul(k, s[x], sc);
    }
    kn_attn_mask_scores(g, j, s, masked);
}

/* The mask alone (no scale): s[x] where visible, -inf elsewhere, behind the
 * same block-uniform test as kn_attn_scale_mask. path=wgmma's folded
 * softmax (attention_hopper_softmax.c) masks the raw scores and applies the
 * scale inside its exp2 argument. */
void kn_attn_mask_scores(kn_attn_ctx *g, rk_value j, const rk_value *s, rk_value *masked) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    uint32_t ns = pl->mi * pl->sn;
    rk_value bn = c32(k, pl->bn);
    rk_value key0 = rk_build_mul(k, j, bn);
    rk_value need = needs_mask(g, j);
    rk_type vt = rk_value_type(k, s[0]);
    rk_type types[MAXV];
    for (uint32_t x = 0; x < ns; x++) types[x] = vt;
    rk_if_else_begin(k, need, ns, types, masked);
    {
        rk_value mv[MAXV];
        apply_mask(g, key0, s, mv);
        rk_else(k, mv, ns);
    }
    rk_if_end(k, s, ns);
}

/* S = Q K^T of one stage (K at kbase) into s[i * sn + jn]: Q fragments from
 * qf (q_in_regs) or read from the Q tile at each K step for the warp whose
 * first row in the block is wrow. Prefill and the unified mode share it. */
void kn_attn_qk(rk_kernel *k, const kn_attn_plan *pl, rk_value smem, rk_value lane, rk_value wrow, rk_value kbase,
                const rk_value *qf, rk_value *s) {
    kn_attn_qk_keys(k, pl, smem, lane, wrow, kbase, NULL, qf, s);
}

void kn_attn_qk_keys(rk_kernel *k, const kn_attn_plan *pl, rk_value smem, rk_value lane, rk_value wrow,
                     rk_value kbase, const rk_value *key_off, const rk_value *qf, rk_value *s) {
    const rk_mma_atom *a = pl->atom;
    uint32_t ns = pl->mi * pl->sn;
    for (uint32_t x = 0; x < ns; x++) s[x] = rk_tile_acc_zero(k, a);
    for (uint32_t kk = 0; kk < pl->dk; kk++) {
        rk_value k0 = c32(k, kk * a->k), qk[MAXV];
        for (uint32_t i = 0; i < pl->mi; i++)
            qk[i] = pl->q_in_regs ? qf[i * pl->dk + kk] : q_frag_at(k, pl, smem, lane, wrow, i, kk);
        for (uint32_t jn = 0; jn < pl->sn; jn++) {
            rk_value n0 = c32(k, jn * a->n);
            if (key_off) n0 = rk_build_add(k, *key_off, n0);
            rk_value kf = rk_tile_frag_load(k, a, &pl->opk, smem, kbase, lane, n0, k0);
            for (uint32_t i = 0; i < pl->mi; i++)
                s[i * pl->sn + jn] = rk_build_mma(k, a->op_id, qk[i], kf, s[i * pl->sn + jn]);
        }
    }
}

/* P (pv, the softmax's exp2 values) to A fragments (registers, or the
 * warp's LDS scratch at p_base + wm * p_warp), then O += P V (V at vbase). */
void kn_attn_pv(rk_kernel *k, const kn_attn_plan *pl, rk_value smem, rk_value lane, rk_value wm, rk_value vbase,
                rk_scalar dtype, const rk_value *pv, rk_value *o) {
    kn_attn_pv_keys(k, pl, smem, lane, wm, vbase, NULL, dtype, pv, o);
}

void kn_attn_pv_keys(rk_kernel *k, const kn_attn_plan *pl, rk_value smem, rk_value lane, rk_value wm, rk_value vbase,
                     const rk_value *key_off, rk_scalar dtype, const rk_value *pv, rk_value *o) {
    const rk_mma_atom *a = pl->atom;
    rk_value pf[MAXV];
    rk_tile_acc_scratch sc = {0};
    if (!pl->p_in_regs) {
        rk_value pw = c32(k, pl->p_warp), pb = c32(k, pl->p_base);
        rk_value wo = rk_build_mul(k, wm, pw);
        sc = (rk_tile_acc_scratch){smem, rk_build_add(k, pb, wo), pl->lp};
    }
    rk_tile_acc_to_a(k, a, a, pl->wtm, pl->bn, pv, dtype, lane, pl->p_in_regs ? NULL : &sc, pf);
    for (uint32_t kk = 0; kk < pl->pk; kk++) {
        rk_value k0 = c32(k, kk * a->k);
        if (key_off) k0 = rk_build_add(k, *key_off, k0);
        for (uint32_t dn = 0; dn < pl->on; dn++) {
            rk_value n0 = c32(k, dn * a->n);
            rk_value vf = rk_tile_frag_load(k, a, &pl->opv, smem, vbase, lane, n0, k0);
            for (uint32_t i = 0; i < pl->mi; i++)
                o[i * pl->on + dn] = rk_build_mma(k, a->op_id, pf[i * pl->pk + kk], vf, o[i * pl->on + dn]);
        }
    }
}

/* One key block in stage `stage` (i32): S, mask, online softmax, O += P V. */
static void step(ak *g, rk_value j, rk_value stage, const rk_value *qf, state *st) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    rk_value size = c32(k, pl->kv_stage);
    rk_value kbase = rk_build_mul(k, stage, size);
    rk_value vb = c32(k, pl->v_base);
    rk_value vbase = rk_build_add(k, kbase, vb);
    rk_value s[MAXV];
    kn_attn_qk(k, pl, g->smem, g->w.lane, g->wrow, kbase, qf, s);
    rk_value masked[MAXV];
    kn_attn_scale_mask(g, j, s, masked);
    rk_value pv[MAXV];
    kn_attn_softmax_step(k, pl, masked, st->m, st->l, st->o, pv);
    kn_attn_pv(k, pl, g->smem, g->w.lane, g->w.wm, vbase, g->s->dtype, pv, st->o);
}

/* First and end key blocks (i32, block uniform) the block's rows can see. */
static void block_range(ak *g, rk_value nblk, rk_value *lo, rk_value *hi) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    rk_value zero = c32(k, 0), one = c32(k, 1), bn = c32(k, pl->bn), bn1 = c32(k, pl->bn - 1);
    *lo = zero;
    *hi = nblk;
    if (g->s->mask == RK_ATTN_MASK_NONE) return;
    /* the block's last row inside the sequence sees the most keys on the right */
    rk_value bm = c32(k, pl->bm);
    rk_value mend = rk_build_add(k, g->m0, bm);
    rk_value rend = rk_build_smin(k, mend, g->qlen);
    rk_value rlast = rk_build_sub(k, rend, one);
    rk_value dlast = rk_build_add(k, rlast, g->off);
    rk_value right = dlast;   /* causal: the last visible key */
    if (g->s->mask == RK_ATTN_MASK_WINDOW) {
        rk_value big = c32(k, INT32_MAX / 2);
        rk_value rneg = rk_build_cmp(k, "lt", g->wr, zero);
        rk_value wr = rk_build_select(k, rneg, big, g->wr);
        right = rk_build_add(k, dlast, wr);
        /* the first row sees the fewest keys on the left */
        rk_value d0 = rk_build_add(k, g->m0, g->off);
        rk_value first = rk_build_sub(k, d0, g->wl);
        rk_value fpos = rk_build_smax(k, first, zero);
        rk_value lneg = rk_build_cmp(k, "lt", g->wl, zero);
        rk_value lo_key = rk_build_select(k, lneg, zero, fpos);
        *lo = rk_build_udiv(k, lo_key, bn);
    }
    rk_value keys = rk_build_add(k, right, one);
    rk_value kpos = rk_build_smax(k, keys, zero);
    rk_value up = rk_build_add(k, kpos, bn1);
    rk_value blocks = rk_build_udiv(k, up, bn);
    rk_value h = rk_build_smin(k, blocks, nblk);
    *hi = rk_build_smax(k, h, *lo);
}

void kn_attn_kv_range(kn_attn_ctx *g, rk_value *lo, rk_value *hi) {
    rk_kernel *k = g->k;
    rk_value bn1 = c32(k, g->pl->bn - 1), bnv = c32(k, g->pl->bn);
    rk_value kup = rk_build_add(k, g->klen, bn1);
    rk_value nblk = rk_build_udiv(k, kup, bnv);
    block_range(g, nblk, lo, hi);
}

/* O = acc / l (0 where l = 0) for the rows inside the sequence; LSE by the
 * first lane of each row. */
static void epilogue(ak *g, state *st, rk_value O, rk_value oss, rk_value lse, rk_value lse_base, rk_value lse_step) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    const rk_mma_atom *a = pl->atom;
    uint32_t nr = pl->rows.nrows, run = rk_tile_acc_col_run(a);
    rk_value zero = rk_const_f32(k, 0.0f), one = rk_const_f32(k, 1.0f), ninf = rk_const_f32(k, -INFINITY);
    rk_value inv[MAXV], lnl[MAXV];
    for (uint32_t x = 0; x < pl->mi * nr; x++) {
        rk_value l = rk_tile_acc_row_reduce(k, &pl->rows, RK_RED_SUM, st->l[x]);
        rk_value pos = rk_build_fcmp(k, "ogt", l, zero);
        rk_value safe = rk_build_select(k, pos, l, one);
        rk_value r = rk_build_fdiv(k, one, safe);
        inv[x] = rk_build_select(k, pos, r, zero);
        if (!g->s->lse) continue;
        rk_value ln = rk_build_log(k, safe);
        rk_value ln2 = rk_const_f32(k, (float)M_LN2);
        rk_value v = rk_build_fma(k, st->m[x], ln2, ln);
        lnl[x] = rk_build_select(k, pos, v, ninf);
    }
    rk_value ss64 = rk_build_sext(k, oss, RK_T_I64);
    rk_value zi = c32(k, 0);
    for (uint32_t i = 0; i < pl->mi; i++) {
        rk_value iv = per_slot(g, inv, i);
        for (uint32_t dn = 0; dn < pl->on; dn++) {
            rk_value o = rk_tile_mul(k, st->o[i * pl->on + dn], iv);
            rk_value ov = rk_tile_from_f32(k, o, g->s->dtype);
            for (uint32_t t = 0; t < a->c_len; t += run) {
                rk_value row, col;
                rk_value d0 = c32(k, dn * a->n);
                slot_coord(g, zi, i, 0, t, &row, &col);
                col = rk_build_add(k, col, d0);
                rk_value in = rk_build_cmp(k, "lt", row, g->qlen);
                rk_if_begin(k, in);
                rk_value r64 = rk_build_sext(k, row, RK_T_I64);
                rk_value c64 = rk_build_sext(k, col, RK_T_I64);
                rk_value ro = rk_build_mul(k, r64, ss64);
                rk_value at = rk_build_add(k, ro, c64);
                rk_value x;
                if (run == 2) {
                    int32_t mask[2] = {(int32_t)t, (int32_t)t + 1};
                    x = rk_build_vshuffle(k, ov, ov, mask, 2);
                } else {
                    x = rk_build_vextract(k, ov, t);
                }
                rk_store_global(k, O, at, x);
                rk_if_end(k, NULL, 0);
            }
        }
        if (!g->s->lse) continue;
        /* the row's lane with every butterfly bit clear writes it */
        uint32_t bits = 0;
        for (uint32_t b = 0; b < pl->rows.nmasks; b++) bits |= pl->rows.xor_mask[b];
        rk_value bv = c32(k, bits);
        rk_value lb = rk_build_and(k, g->w.lane, bv);
        rk_value leader = rk_build_cmp(k, "eq", lb, zi);
        for (uint32_t r = 0; r < nr; r++) {
            rk_value row, col;
            slot_coord(g, zi, i, 0, pl->rows.row_slot0[r], &row, &col);
            rk_value in = rk_build_cmp(k, "lt", row, g->qlen);
            rk_value w = rk_build_and(k, in, leader);
            rk_if_begin(k, w);
            rk_value r64 = rk_build_sext(k, row, RK_T_I64);
            rk_value ro = rk_build_mul(k, r64, lse_step);
            rk_value at = rk_build_add(k, lse_base, ro);
            rk_store_global(k, lse, at, lnl[i * nr + r]);
            rk_if_end(k, NULL, 0);
        }
    }
}

void kn_attn_begin(kn_attn_ctx *g, const rk_value *p, const kn_attn_sig *ixp, kn_attn_block *blk) {
    rk_kernel *k = g->k;
    const rk_attention_spec *s = g->s;
    const kn_attn_sig ix = *ixp;
    rk_value qb = rk_build_block_id(k, 0), h = rk_build_block_id(k, 1), b = rk_build_block_id(k, 2);
    rk_value group = rk_build_udiv(k, p[ix.Hq], p[ix.Hkv]);
    rk_value hk = rk_build_udiv(k, h, group);
    rk_value qstart = c32(k, 0), kstart = c32(k, 0);
    g->qlen = p[ix.Sq];
    g->klen = p[ix.Skv];
    if (s->layout == RK_ATTN_VARLEN) {
        rk_value one = c32(k, 1);
        rk_value b1 = rk_build_add(k, b, one);
        qstart = rk_load_global(k, p[ix.cuq], b, 1);
        rk_value qend = rk_load_global(k, p[ix.cuq], b1, 1);
        g->qlen = rk_build_sub(k, qend, qstart);
        kstart = rk_load_global(k, p[ix.cuk], b, 1);
        rk_value kend = rk_load_global(k, p[ix.cuk], b1, 1);
        g->klen = rk_build_sub(k, kend, kstart);
    }
    g->off = rk_build_sub(k, g->klen, g->qlen);
    if (s->mask == RK_ATTN_MASK_WINDOW) {
        g->wl = p[ix.wl];
        g->wr = p[ix.wr];
    }
    rk_value l2e = rk_const_f32(k, (float)M_LOG2E);
    g->scale_l2 = rk_build_fmul(k, p[ix.scale], l2e);
    rk_value bm = c32(k, g->pl->bm);
    g->m0 = rk_build_mul(k, qb, bm);
    /* varlen: blocks past this sequence's queries have nothing to do (block uniform) */
    rk_value live = rk_build_cmp(k, "lt", g->m0, g->qlen);
    rk_if_begin(k, live);
    const int *qs = ix.stride[0], *ks = ix.stride[1], *vs = ix.stride[2], *os = ix.stride[3];
    rk_value qoff = view_off(k, b, p[qs[0]], h, p[qs[1]], qstart, p[qs[2]]);
    rk_value koff = view_off(k, b, p[ks[0]], hk, p[ks[1]], kstart, p[ks[2]]);
    rk_value voff = view_off(k, b, p[vs[0]], hk, p[vs[1]], kstart, p[vs[2]]);
    rk_value ooff = view_off(k, b, p[os[0]], h, p[os[1]], qstart, p[os[2]]);
    *blk = (kn_attn_block){.b = b, .h = h, .hk = hk, .qstart = qstart, .kstart = kstart};
    blk->Q = move(k, p[ix.q], qoff, s->dtype);
    blk->K = move(k, p[ix.k], koff, s->dtype);
    blk->V = move(k, p[ix.v], voff, s->dtype);
    blk->O = move(k, p[ix.o], ooff, s->dtype);
}

void kn_attn_finish(kn_attn_ctx *g, const rk_value *p, const kn_attn_sig *ixp, const kn_attn_block *blk,
                    const rk_value *m, const rk_value *l, const rk_value *o) {
    rk_kernel *k = g->k;
    const rk_attention_spec *s = g->s;
    const kn_attn_plan *pl = g->pl;
    const kn_attn_sig ix = *ixp;
    rk_value b = blk->b, h = blk->h, qstart = blk->qstart;
    state fin;
    uint32_t nm = pl->mi * pl->rows.nrows, no = pl->mi * pl->on;
    for (uint32_t x = 0; x < nm; x++) fin.m[x] = m[x], fin.l[x] = l[x];
    for (uint32_t x = 0; x < no; x++) fin.o[x] = o[x];
    rk_value lse = ix.lse >= 0 ? p[ix.lse] : (rk_value){0}, lbase = rk_const_i64(k, 0), lstep = rk_const_i64(k, 1);
    if (ix.lse >= 0) {
        /* padded: [B, Hq, Sq]; varlen: [total, Hq] */
        rk_value b64 = rk_build_sext(k, b, RK_T_I64);
        rk_value h64 = rk_build_sext(k, h, RK_T_I64);
        rk_value hq64 = rk_build_sext(k, p[ix.Hq], RK_T_I64);
        if (s->layout == RK_ATTN_VARLEN) {
            rk_value q64 = rk_build_sext(k, qstart, RK_T_I64);
            rk_value qh = rk_build_mul(k, q64, hq64);
            lbase = rk_build_add(k, qh, h64);
            lstep = hq64;
        } else {
            rk_value sq64 = rk_build_sext(k, p[ix.Sq], RK_T_I64);
            rk_value bh = rk_build_mul(k, b64, hq64);
            rk_value bhh = rk_build_add(k, bh, h64);
            lbase = rk_build_mul(k, bhh, sq64);
        }
    }
    epilogue(g, &fin, blk->O, p[ix.stride[3][2]], lse, lbase, lstep);
}

void kn_attn_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_attention_spec *s = &in->u.attn;
    kn_attn_plan pl;
    rk_status pst = kn_attn_plan_make(s, t, &pl);
    RK_ASSERT(pst == RK_OK, "attention: building an instance that does not validate");
    kn_attn_sig ix;
    kn_attn_sig_of(s, &ix);
    ak g = {.k = k, .pl = &pl, .s = s};
    pst = rk_tile_warps_begin(k, pl.wave, pl.warps, 1, 1, &g.w);
    RK_ASSERT(pst == RK_OK, "attention: warp grid of a validated plan");
    kn_attn_block blk;
    kn_attn_begin(&g, p, &ix, &blk);
    rk_value wtm = c32(k, pl.wtm);
    rk_value wrow = rk_build_mul(k, g.w.wm, wtm);
    g.row0 = rk_build_add(k, g.m0, wrow);
    g.wrow = wrow;
    rk_value Q = blk.Q;
    const int *qs = ix.stride[0], *ks = ix.stride[1], *vs = ix.stride[2];
    rk_value dv = c32(k, pl.d);
    g.gk = (rk_tile_gview){blk.K, p[ks[2]], g.klen, dv};
    g.gv = (rk_tile_gview){blk.V, p[vs[2]], g.klen, dv};
    rk_tile_gview gq = {Q, p[qs[2]], g.qlen, dv};


    rk_smem_alloc_opts al = {.align = RK_SOME(128)};
    g.smem = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &pl.lds_elems, 1, &al);
    /* Q: into LDS (sharing the K/V stages), then every fragment into registers */
    rk_tile_copy_lanes lq;
    rk_tile_copy_lanes_init(k, &pl.cpq, g.w.tid, &lq);
    rk_value zero = c32(k, 0);
    rk_value qbase = c32(k, pl.q_base);
    rk_tile_copy_issue(k, &pl.cpq, &lq, &gq, g.m0, zero, g.smem, qbase);
    rk_build_async_commit_group(k);
    rk_build_async_wait_group(k, 0);
    rk_build_sync(k);
    rk_value qf[MAXV];
    const rk_mma_atom *a = pl.atom;
    if (pl.q_in_regs) {
        for (uint32_t i = 0; i < pl.mi; i++)
            for (uint32_t kk = 0; kk < pl.dk; kk++) qf[i * pl.dk + kk] = q_frag(&g, i, kk);
        rk_build_sync(k);   /* the K/V stages overwrite Q */
    }

    rk_tile_copy_lanes_init(k, &pl.cpk, g.w.tid, &g.lk);
    rk_tile_copy_lanes_init(k, &pl.cpv, g.w.tid, &g.lv);
    rk_value lo, hi;
    kn_attn_kv_range(&g, &lo, &hi);
    rk_value count = rk_build_sub(k, hi, lo);
    uint32_t S = pl.stages;
    for (uint32_t i = 0; i + 1 < S; i++) {
        rk_value ci = c32(k, i);
        rk_value j = rk_build_add(k, lo, ci);
        issue(&g, j, ci);
    }
    /* loop-carried: m, l per row group, then the O accumulators */
    uint32_t nm = pl.mi * pl.rows.nrows, no = pl.mi * pl.on, nc = 2 * nm + no;
    RK_ASSERT(nc <= 3 * MAXV, "attention: loop carries fit");
    rk_value init[3 * MAXV], cur[3 * MAXV], res[3 * MAXV];
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    for (uint32_t x = 0; x < nm; x++) {
        init[x] = ninf;
        init[nm + x] = fz;
    }
    for (uint32_t x = 0; x < no; x++) init[2 * nm + x] = rk_tile_acc_zero(k, a);
    rk_value step1 = c32(k, 1);
    rk_value it = rk_for_begin(k, zero, count, step1, "kv", nc, init, NULL, cur);
    {
        state st;
        for (uint32_t x = 0; x < nm; x++) {
            st.m[x] = cur[x];
            st.l[x] = cur[nm + x];
        }
        for (uint32_t x = 0; x < no; x++) st.o[x] = cur[2 * nm + x];
        rk_value Sv = c32(k, S);
        rk_value j = rk_build_add(k, lo, it);
        if (S > 1) {
            rk_build_async_wait_group(k, S - 2);
            rk_build_sync(k);
            rk_value ahead = c32(k, S - 1);
            rk_value nt = rk_build_add(k, it, ahead);
            rk_value nj = rk_build_add(k, lo, nt);
            rk_value nst = rk_build_umod(k, nt, Sv);
            issue(&g, nj, nst);
            rk_value cs = rk_build_umod(k, it, Sv);
            step(&g, j, cs, qf, &st);
        } else {
            rk_build_sync(k);
            issue(&g, j, zero);
            rk_build_async_wait_group(k, 0);
            rk_build_sync(k);
            step(&g, j, zero, qf, &st);
        }
        rk_value y[3 * MAXV];
        for (uint32_t x = 0; x < nm; x++) {
            y[x] = st.m[x];
            y[nm + x] = st.l[x];
        }
        for (uint32_t x = 0; x < no; x++) y[2 * nm + x] = st.o[x];
        rk_for_end(k, y, nc, res);
    }
    rk_build_async_wait_group(k, 0);
    state fin;
    for (uint32_t x = 0; x < nm; x++) {
        fin.m[x] = res[x];
        fin.l[x] = res[nm + x];
    }
    for (uint32_t x = 0; x < no; x++) fin.o[x] = res[2 * nm + x];
    kn_attn_finish(&g, p, &ix, &blk, fin.m, fin.l, fin.o);
    rk_if_end(k, NULL, 0);
}
