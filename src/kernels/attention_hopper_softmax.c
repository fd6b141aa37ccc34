/* rocke — path = wgmma's softmax of one key block (FlashAttention-3's
 * instruction diet). The shared softmax (attention_build.c) scales every
 * score, masks, takes the max of the scaled scores and subtracts it before
 * exp2: a multiply, a max, a subtract and exp2 per score, and LLVM's exp2 is
 * ex2.approx.f32 with IEEE denormals, which ptxas wraps in a compare and two
 * predicated multiplies. The folded softmax masks the raw scores, takes the
 * row max of those (a tree, so the 32 maxima of a row are 5 deep, not 32),
 * and computes p = 2^(s * c - m) with c = scale * log2(e) by one FMA and
 * ex2.approx.ftz: a max, an FMA, the exp and the row sum's add per score.
 * max(c * s) = c * max(s) only for c > 0, so a block-uniform branch on the
 * scale keeps the shared softmax for c <= 0 (and exact_softmax keeps it
 * always). Flushing exps below 2^-126 to zero moves P by less than bf16's
 * or f16's rounding does. Layer: kernels. */
#include <math.h>

#include "attention_hopper.h"

/* Row groups of a lane in the m64nNk16 accumulator (2: rows l/4 and l/4 + 8). */
enum { KN_AH_ROWS_MAX = 4 };

/* Pairwise reduction of v[0 .. n) by fmax or fadd: depth log2(n). */
static rk_value tree(rk_kernel *k, rk_value *v, uint32_t n, bool max) {
    while (n > 1) {
        uint32_t h = n / 2;
        for (uint32_t i = 0; i < h; i++)
            v[i] = max ? rk_build_fmax(k, v[i], v[i + h]) : rk_build_fadd(k, v[i], v[i + h]);
        if (n % 2) v[h] = v[n - 1];
        n = h + n % 2;
    }
    return v[0];
}

static rk_value exp2_fast(rk_kernel *k, rk_value x, void *ud) {
    (void)ud;
    return rk_build_exp2_fast(k, x);
}

/* The folded softmax (c = g->scale_l2 > 0): raw scores sp (sn pieces of 4),
 * m in the scaled log2 domain as the shared softmax keeps it. */
static void folded(kn_attn_ctx *g, rk_value j, const rk_value *sp, rk_value *m, rk_value *l, rk_value *pp,
                   rk_value *alpha) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    const rk_mma_atom *a = pl->atom;
    uint32_t nr = pl->rows.nrows, sn = pl->sn;
    rk_value masked[KN_AH_BN_MAX / 8];
    kn_attn_mask_scores(g, j, sp, masked);
    rk_value c = g->scale_l2, zero = rk_const_f32(k, 0.0f), ninf = rk_const_f32(k, -INFINITY);
    rk_value nsub[RK_TILE_ACC_MAX_SLOTS];   /* per row: minus what the exps subtract */
    for (uint32_t r = 0; r < nr; r++) {
        rk_value v[KN_AH_BN_MAX];
        uint32_t n = 0;
        for (uint32_t jn = 0; jn < sn; jn++)
            for (uint32_t t = 0; t < a->c_len; t++)
                if (pl->rows.row_of_slot[t] == r) v[n++] = rk_build_vextract(k, masked[jn], t);
        rk_value mx = tree(k, v, n, true);
        mx = rk_tile_acc_row_reduce(k, &pl->rows, RK_RED_MAX, mx);
        rk_value cmx = rk_build_fmul(k, mx, c);   /* -inf stays -inf: c > 0 */
        rk_value mnew = rk_build_fmax(k, m[r], cmx);
        rk_value dead = rk_build_fcmp(k, "oeq", mnew, ninf);
        rk_value muse = rk_build_select(k, dead, zero, mnew);   /* a row with nothing visible yet */
        rk_value dm = rk_build_fsub(k, m[r], muse);
        alpha[r] = rk_build_exp2_fast(k, dm);
        m[r] = mnew;
        nsub[r] = rk_build_fsub(k, zero, muse);
    }
    rk_value cv = rk_tile_bcast(k, c, masked[0]);
    rk_value nv[RK_TILE_ACC_MAX_SLOTS];
    for (uint32_t t = 0; t < a->c_len; t++) nv[t] = nsub[pl->rows.row_of_slot[t]];
    rk_value subv = rk_build_vpack(k, nv, a->c_len);
    rk_value sums[KN_AH_ROWS_MAX][KN_AH_BN_MAX];
    uint32_t ns[KN_AH_ROWS_MAX] = {0};
    for (uint32_t jn = 0; jn < sn; jn++) {
        rk_value arg = rk_tile_fma(k, masked[jn], cv, subv);
        pp[jn] = rk_tile_map(k, arg, exp2_fast, NULL);
        for (uint32_t t = 0; t < a->c_len; t++) {
            uint32_t r = pl->rows.row_of_slot[t];
            sums[r][ns[r]++] = rk_build_vextract(k, pp[jn], t);
        }
    }
    for (uint32_t r = 0; r < nr; r++) {
        rk_value rs = tree(k, sums[r], ns[r], false);
        l[r] = rk_tile_fma(k, alpha[r], l[r], rs);
    }
}

void kn_attn_hopper_probs(kn_attn_ctx *g, rk_value j, rk_value sacc, rk_value *m, rk_value *l, rk_value *pf,
                          rk_value *alpha) {
    rk_kernel *k = g->k;
    const kn_attn_plan *pl = g->pl;
    uint32_t nr = pl->rows.nrows, nq = pl->bn / 16, sn = pl->sn;
    RK_ASSERT(pl->mi == 1 && nr <= KN_AH_ROWS_MAX, "attention: one 64-row atom per warpgroup");
    rk_value sp[KN_AH_BN_MAX / 8], pp[KN_AH_BN_MAX / 8];
    kn_attn_hopper_split(k, sacc, sn, sp);
    if (g->s->exact_softmax) {
        rk_value masked[KN_AH_BN_MAX / 8];
        kn_attn_scale_mask(g, j, sp, masked);
        kn_attn_softmax_rows(k, pl, masked, m, l, pp, alpha);
        rk_value pacc = kn_attn_hopper_join(k, pp, sn);
        rk_tile_wgmma_acc_to_a(k, pacc, pl->bn, g->s->dtype, pf);
        return;
    }
    /* yields: m, l, alpha per row, the P fragments */
    enum { NY = 3 * RK_TILE_ACC_MAX_SLOTS + KN_AH_PF_MAX };
    rk_type types[NY];
    rk_value y[NY], res[NY];
    uint32_t ny = 3 * nr + nq;
    for (uint32_t r = 0; r < nr; r++) types[r] = types[nr + r] = types[2 * nr + r] = RK_T_F32;
    for (uint32_t q = 0; q < nq; q++) types[3 * nr + q] = rk_type_vec(k, (rk_type){g->s->dtype}, 8);
    rk_value zero = rk_const_f32(k, 0.0f);
    rk_value pos = rk_build_fcmp(k, "ogt", g->scale_l2, zero);
    rk_if_else_begin(k, pos, ny, types, res);
    {
        for (uint32_t r = 0; r < nr; r++) y[r] = m[r], y[nr + r] = l[r];
        folded(g, j, sp, y, y + nr, pp, y + 2 * nr);
        rk_value pacc = kn_attn_hopper_join(k, pp, sn);
        rk_tile_wgmma_acc_to_a(k, pacc, pl->bn, g->s->dtype, y + 3 * nr);
        rk_else(k, y, ny);
    }
    {
        rk_value masked[KN_AH_BN_MAX / 8];
        for (uint32_t r = 0; r < nr; r++) y[r] = m[r], y[nr + r] = l[r];
        kn_attn_scale_mask(g, j, sp, masked);
        kn_attn_softmax_rows(k, pl, masked, y, y + nr, pp, y + 2 * nr);
        rk_value pacc = kn_attn_hopper_join(k, pp, sn);
        rk_tile_wgmma_acc_to_a(k, pacc, pl->bn, g->s->dtype, y + 3 * nr);
        rk_if_end(k, y, ny);
    }
    for (uint32_t r = 0; r < nr; r++) m[r] = res[r], l[r] = res[nr + r], alpha[r] = res[2 * nr + r];
    for (uint32_t q = 0; q < nq; q++) pf[q] = res[3 * nr + q];
}
