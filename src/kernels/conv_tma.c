/* rocke — 1x1 convolutions on sm_90a as the GEMM family's Hopper kernel
 * (load = tma): a 1x1 filter at stride 1 without padding makes channels-last
 * tensors plain matrices, fwd Y[NPQ, K] = X[NPQ, C] W[K, C]^T (layout rc)
 * and dgrad dX[NHW, C] = dY[NHW, K] W[K, C] (layout rr), so the kernel is
 * gemm_hopper*.c itself (TMA boxes into 128-byte-swizzled stages, mbarrier
 * rings, its schedules and epilogues) on tensor maps of the conv's buffers.
 * wgrad, dW[K, C] = dY^T[K, NPQ] X[NPQ, C] (layout cr), keeps conv_hopper.c's
 * kernel for its split of the long N*P*Q reduction, with both operands
 * arriving by TMA (schedule plain). Rules, heuristic, signature entries, map
 * boxes and the builder. Layer: kernels. */
#include "conv_int.h"
#include "gemm_hopper.h"

bool kn_conv_tma(const rk_instance *in) {
    const rk_conv_spec *c = &in->u.conv;
    return c->load == RK_CONV_LOAD_TMA && c->g.path == RK_GEMM_PATH_WGMMA && c->algo == RK_CONV_GEMM1X1 &&
           (unsigned)c->direction < RK_CONV__COUNT;
}

/* The GEMM operand (0 A, 1 B, 2 C) a conv buffer is, by direction. */
static int operand_of(const rk_instance *in, const char *buf) {
    static const char *const ops[RK_CONV__COUNT][3] = {{"X", "Wt", "Y"}, {"dY", "Wt", "dX"}, {"dY", "X", "dW"}};
    for (int i = 0; i < 3; i++)
        if (!strcmp(ops[in->u.conv.direction][i], buf)) return i;
    return -1;
}

/* The instance the GEMM family would build for it (the direction's layout). */
static rk_instance gemm_instance(const rk_instance *in) {
    rk_instance g;
    memset(&g, 0, sizeof g);
    g.family = RK_FAMILY_GEMM;
    g.u.gemm = kn_conv_gemm_spec(in);
    return g;
}

rk_status kn_conv_tma_check(const rk_instance *in, const rk_target *t, const char *fam) {
    const rk_conv_spec *c = &in->u.conv;
    if ((unsigned)c->load >= RK_CONV_LOAD__COUNT)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'load' out of range (legal: copy, tma)", fam);
    if (c->load == RK_CONV_LOAD_COPY) {
        /* the GEMM kernel's own knobs mean nothing to the copying kernels */
        if (c->g.schedule != RK_GEMM_SCHED_PLAIN || c->g.blocks || c->g.epilogue != RK_GEMM_EPI_DIRECT)
            return rk_fail(RK_ERR_INVALID, "%s: knobs 'schedule', 'blocks' and 'epilogue' choose how the GEMM "
                           "family's TMA kernel runs: they need load=tma (algo gemm1x1, fwd or dgrad, path=wgmma); "
                           "leave schedule=plain, blocks=0, epilogue=direct", fam);
        if (c->box_p || c->box_q)
            return rk_fail(RK_ERR_INVALID, "%s: knobs 'box_p' and 'box_q' shape the pixel-box kernel (load=tma, algo "
                           "igemm, fwd); with load=copy leave them unset", fam);
        return RK_OK;
    }
    if (!(t->features & RK_FEAT_SM90A))
        return rk_fail(RK_ERR_INVALID, "%s: knob 'load' = tma needs sm_90a (TMA and wgmma); %s takes load=copy",
                       fam, t->name);
    if (c->g.path != RK_GEMM_PATH_WGMMA)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'load' = tma is path=wgmma's (sm_90a TMA): build with path=wgmma, "
                       "or load=copy", fam);
    if ((c->box_p || c->box_q) && c->algo != RK_CONV_IGEMM)
        return rk_fail(RK_ERR_INVALID, "%s: knobs 'box_p' and 'box_q' shape the pixel-box kernel (algo igemm, fwd); "
                       "with algo %s leave them unset", fam, c->algo == RK_CONV_GEMM1X1 ? "gemm1x1" : "direct");
    if (c->algo == RK_CONV_IGEMM) return kn_conv_box_check(in, t, fam);   /* the pixel-box kernel */
    if (c->algo != RK_CONV_GEMM1X1)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'load' = tma reads X, W and Y as plain matrices (algo gemm1x1: a 1x1 "
                       "filter at stride 1, unpadded) or X as pixel boxes (algo igemm, fwd); algo direct uses no "
                       "matrix unit", fam);
    if (c->direction == RK_CONV_WGRAD && (c->g.schedule != RK_GEMM_SCHED_PLAIN || c->g.epilogue != RK_GEMM_EPI_DIRECT))
        return rk_fail(RK_ERR_INVALID, "%s: wgrad with load=tma runs its split-K sum on schedule=plain with "
                       "epilogue=direct (the other schedules and epilogues: fwd and dgrad)", fam);
    if (c->g.vec_a != KN_WG_TMA_VEC || c->g.vec_b != KN_WG_TMA_VEC)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'load' = tma reads both operands in TMA's 16-byte rows: vec_a and "
                       "vec_b must be 8 (got %u and %u; lower vecs take load=copy)", fam, c->g.vec_a, c->g.vec_b);
    if (c->g.epilogue == RK_GEMM_EPI_CSHUFFLE)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'epilogue' = cshuffle is path=mma's; load=tma stores Y direct or "
                       "through tma", fam);
    rk_gemm_spec s;
    kn_gemm_plan pl;
    return kn_conv_hopper_plan_check(in, t, fam, &s, &pl);
}

rk_status kn_conv_tma_check_shape(const rk_instance *in, const kn_conv_geo *g, const char *fam) {
    if (kn_conv_box(in)) return kn_conv_box_check_shape(in, g, fam);
    if (!kn_conv_tma(in)) return RK_OK;
    if (g->groups != 1)
        return rk_fail(RK_ERR_INVALID, "%s: load=tma maps whole tensors (one GEMM): groups must be 1, got %llu; "
                       "grouped 1x1 convolutions take load=copy", fam, (unsigned long long)g->groups);
    uint64_t M, N, K;
    kn_conv_gemm_extents(in, g, &M, &N, &K);
    rk_gemm_spec s = kn_conv_gemm_spec(in);
    rk_status st = kn_gemm_hopper_check_shape(&s, M, N, K);
    if (st) {
        const char *m = rk_error_message();
        if (!strncmp(m, "gemm: ", 6)) m += 6;
        return rk_fail(st, "%s: load=tma (C = %llu, K = %llu): %s", fam, (unsigned long long)g->c,
                       (unsigned long long)g->k, m);
    }
    return RK_OK;
}

bool kn_conv_tma_fits(const rk_instance *in, const kn_conv_geo *g) {
    const rk_conv_spec *c = &in->u.conv;
    if (c->algo != RK_CONV_GEMM1X1 || g->groups != 1) return false;
    if (c->g.vec_a != KN_WG_TMA_VEC || c->g.vec_b != KN_WG_TMA_VEC) return false;   /* lower: locked or the rows' */
    /* TMA's 16-byte row stride: C and K (2-byte elements) multiples of 8 */
    return g->c % KN_WG_TMA_VEC == 0 && g->k % KN_WG_TMA_VEC == 0;
}

void kn_conv_tma_tune(rk_conv_spec *c, const rk_target *t, uint64_t M, uint64_t N, uint64_t K,
                      const kn_conv_tma_free *fr) {
    rk_gemm_spec *s = &c->g;
    if (fr->vec_a) s->vec_a = KN_WG_TMA_VEC;
    if (fr->vec_b) s->vec_b = KN_WG_TMA_VEC;
    if (c->direction == RK_CONV_WGRAD) {
        /* conv_hopper.c's kernel: its tile, stages and split (kn_conv_hopper_tune), the plain schedule */
        if (fr->schedule) s->schedule = RK_GEMM_SCHED_PLAIN;
        if (fr->blocks) s->blocks = 0;
        if (fr->epilogue) s->epilogue = RK_GEMM_EPI_DIRECT;
        return;
    }
    if (fr->tile) {
        /* the largest tile that still gives every SM a block, no wider or taller than the problem needs
         * (dgrad's N is C: 64 channels fill a quarter of a 256-wide tile) */
        static const uint32_t cand[][2] = {{128, 256}, {128, 128}, {128, 64}, {64, 256}, {64, 128}, {64, 64}};
        uint64_t nmax = (N + 63) / 64 * 64;
        size_t pick = RK_COUNTOF(cand) - 1;
        for (size_t i = 0; i < RK_COUNTOF(cand); i++) {
            if ((cand[i][1] > nmax && cand[i][1] > 64) || (cand[i][0] > 64 && M <= 64)) continue;
            if ((M + cand[i][0] - 1) / cand[i][0] * ((N + cand[i][1] - 1) / cand[i][1]) >= t->compute_units) {
                pick = i;
                break;
            }
        }
        s->tile[0] = cand[pick][0], s->tile[1] = cand[pick][1], s->tile[2] = KN_WG_BK;
    }
    s->warps[0] = s->tile[0] / 16, s->warps[1] = 1;
    uint64_t tiles = (M + s->tile[0] - 1) / s->tile[0] * ((N + s->tile[1] - 1) / s->tile[1]);
    uint64_t ktiles = (K + KN_WG_BK - 1) / KN_WG_BK;
    /* Not measured yet (bench/conv_h200.sh times the schedules side by side): a 1x1 convolution's
     * reduction is short (C = 64: one K tile), so a tile's loads cannot hide behind its own loop and
     * the C stores dominate; a persistent grid whose producer fetches the next tile while the
     * consumers store this one overlaps them. Long reductions keep the GEMM's measured plain. */
    if (fr->schedule)
        s->schedule = ktiles <= 4 && tiles > t->compute_units ? RK_GEMM_SCHED_PERSISTENT : RK_GEMM_SCHED_PLAIN;
    if (fr->blocks) s->blocks = kn_gemm_hopper_walks(s) ? t->compute_units : 0;
    /* C through TMA stores where the GEMM measured them ahead (128 x 256, rows of 16-byte multiples) */
    if (fr->epilogue)
        s->epilogue = s->tile[0] == 128 && s->tile[1] == 256 && N * rk_tile_elem_bytes(s->out_dtype) % 16 == 0
                          ? RK_GEMM_EPI_TMA : RK_GEMM_EPI_DIRECT;
    if (fr->stages) {
        /* a ring deep enough to run ahead of the stores (persistent: across tiles), inside shared memory */
        uint32_t st = ktiles > 2 || kn_gemm_hopper_walks(s) ? 4 : 2;
        while (st > 2 && (uint64_t)st * ((s->tile[0] + s->tile[1]) * RK_TILE_WGMMA_ROW_BYTES + 16) +
                                 kn_gemm_hopper_cstage_bytes(s) > t->lds_bytes)
            st--;
        s->stages = st;
    }
}

void kn_conv_tma_signature(const rk_instance *in, rk_ksig *sg) {
    const rk_conv_spec *c = &in->u.conv;
    static const char *const maps[RK_CONV__COUNT][3][2] = {
        {{"X_map", "X"}, {"Wt_map", "Wt"}, {"Y_map", "Y"}},
        {{"dY_map", "dY"}, {"Wt_map", "Wt"}, {"dX_map", "dX"}},
        {{"dY_map", "dY"}, {"X_map", "X"}, {NULL, NULL}},
    };
    const char *const(*m)[2] = maps[c->direction];
    kn_sig_add(sg, m[0][0], false, c->g.dtype, RK_KP_TENSORMAP, m[0][1]);
    kn_sig_add(sg, m[1][0], false, c->g.dtype, RK_KP_TENSORMAP, m[1][1]);
    if (c->g.epilogue == RK_GEMM_EPI_TMA && m[2][0])
        kn_sig_add(sg, m[2][0], false, c->g.out_dtype, RK_KP_TENSORMAP, m[2][1]);
}

void kn_conv_tma_box(const rk_instance *in, const rk_kparam *kp, uint32_t *box_rows, uint32_t *box_cols,
                     uint32_t *swizzle_bytes) {
    /* the entry as the GEMM's A_map, B_map or C_map, by the buffer it maps */
    static const char *const gemm_maps[3] = {"A_map", "B_map", "C_map"};
    int op = operand_of(in, kp->dims ? kp->dims : "");
    RK_ASSERT(op >= 0, "conv: a tensor map over a buffer its direction does not have");
    rk_kparam q = *kp;
    q.name = gemm_maps[op];
    rk_instance g = gemm_instance(in);
    kn_gemm_hopper_tensormap_box(&g, &q, box_rows, box_cols, swizzle_bytes);
}

void kn_conv_tma_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_conv_spec *cs = &in->u.conv;
    uint32_t next;
    kn_conv_args a = kn_conv_args_of(in, p, &next);
    bool fwd = cs->direction == RK_CONV_FWD;
    /* the pixels: fwd's output, dgrad's input (the same extents at 1x1, stride 1, unpadded) */
    const rk_ix *ext = fwd ? a.out : a.in;
    rk_ix pix = rk_ix_mul(k, a.n, ext[0]);
    pix = rk_ix_mul(k, pix, ext[1]);
    pix = rk_ix_mul(k, pix, ext[2]);
    rk_value M = rk_ix_value(k, pix);
    rk_value C = rk_ix_value(k, a.c), K = rk_ix_value(k, a.k);
    rk_gemm_spec s = kn_conv_gemm_spec(in);
    rk_epi_param eps[RK_EPI_MAX_PARAMS];
    uint32_t ne = rk_epi_params(&s.fuse, s.out_dtype, eps);
    uint32_t nmaps = 2 + (s.epilogue == RK_GEMM_EPI_TMA);
    /* the GEMM's signature: A, B, C, M, N, K, lda, ldb, ldc, the chain's operands, the tensor maps
     * (fwd, rc: A = X [NPQ, C], B = W [K, C], C = Y [NPQ, K]; dgrad, rr: A = dY [NHW, K],
     * B = W [K, C], C = dX [NHW, C]) */
    rk_value gp[9 + RK_EPI_MAX_PARAMS + 3];
    rk_value head[9] = {p[0], p[1], p[2], M, fwd ? K : C, fwd ? C : K, fwd ? C : K, C, fwd ? K : C};
    memcpy(gp, head, sizeof head);
    for (uint32_t i = 0; i < ne + nmaps; i++) gp[9 + i] = p[next + i];
    rk_instance g = gemm_instance(in);
    kn_gemm_hopper_build(&g, t, k, gp);
}
