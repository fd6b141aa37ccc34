/* rocke — the forward convolution on Hopper (path = wgmma, sm_90a): the
 * implicit GEMM (M = N*O*P*Q, N = K/g, K = T*R*S*C/g) on the GEMM's Hopper
 * plain schedule (gemm_hopper.c), both operands filled by the block's
 * threads into the 128-byte-swizzled stages that wgmma reads: A = im2col(X)
 * by rk_tile_im2col_issue over a copy whose LDS layout is that swizzle
 * (cp.async of vec_a channels, 16, 8 or 4 bytes, zero-filled in the padding
 * and past the tails; 2-byte loads and stores for vec_a 1), B = the weight
 * rows [K/g, T*R*S*C/g] by the GEMM's own copy (kn_gemm_hopper_copy). Rules,
 * heuristic and the builder. Layer: kernels. */
#include "conv_int.h"
#include "gemm_hopper.h"

/* Above this many copy passes the pixel state of every pass is recomputed
 * per fill instead of held across the K loop (its registers). */
enum { HOLD_ROWS_MAX_PASSES = 8 };

static bool is_wgmma(const rk_conv_spec *c) { return c->g.path == RK_GEMM_PATH_WGMMA; }

rk_status kn_conv_hopper_check(const rk_instance *in, const rk_target *t, const char *fam) {
    const rk_conv_spec *c = &in->u.conv;
    if (!is_wgmma(c)) return RK_OK;
    if (c->direction != RK_CONV_FWD)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'path' = wgmma serves direction fwd (dgrad and wgrad take path=mma)",
                       fam);
    if (c->algo == RK_CONV_DIRECT)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'path' = wgmma runs the implicit GEMM (algo igemm or gemm1x1; algo "
                       "direct has no matrix unit: path=mma)", fam);
    rk_gemm_spec s = kn_conv_gemm_spec(in);
    kn_gemm_plan pl;
    rk_status st = kn_gemm_hopper_plan(&s, t, false, &pl);
    if (st) {
        const char *m = rk_error_message();
        if (!strncmp(m, "gemm: ", 6)) m += 6;   /* the GEMM plan's rules, told as this family's */
        return rk_fail(st, "%s: %s", fam, m);
    }
    rk_lds_layout lds;
    rk_tile_copy cp;
    st = rk_lds_layout_hw_swizzle(pl.bm, KN_WG_BK, 2, 128, &lds);
    if (!st) st = rk_tile_copy_make(pl.bm, KN_WG_BK, s.vec_a, pl.threads, s.dtype, &lds, s.vec_a > 1, &cp);
    if (st) return rk_fail(st, "%s: path=wgmma's gather of X: %s", fam, rk_error_message());
    return RK_OK;
}

rk_status kn_conv_hopper_check_shape(const rk_instance *in, const kn_conv_geo *g, const char *fam) {
    if (!is_wgmma(&in->u.conv) || g->groups == 1 || g->kg % 2 == 0) return RK_OK;
    return rk_fail(RK_ERR_INVALID, "%s: path=wgmma stores pairs of output channels, so groups > 1 needs K / groups "
                   "even; here K = %llu, groups = %llu: use --path mma", fam, (unsigned long long)g->k,
                   (unsigned long long)g->groups);
}

void kn_conv_hopper_tune(rk_conv_spec *c, const rk_target *t, uint64_t M, uint64_t N, uint64_t K, uint64_t groups,
                         bool tile_free, bool stages_free) {
    rk_gemm_spec *s = &c->g;
    s->schedule = RK_GEMM_SCHED_PLAIN, s->blocks = 0, s->split_k = 1, s->atom = 0;
    if (tile_free) {
        /* the largest tile that gives every SM a block, tile N no wider than the channels need */
        static const uint32_t cand[][2] = {{128, 256}, {128, 128}, {128, 64}, {64, 256}, {64, 128}, {64, 64}};
        uint64_t nmax = (N + 63) / 64 * 64;
        size_t pick = RK_COUNTOF(cand) - 1;
        for (size_t i = 0; i < RK_COUNTOF(cand); i++) {
            if (cand[i][1] > nmax && cand[i][1] > 64) continue;
            uint64_t blocks = (M + cand[i][0] - 1) / cand[i][0] * ((N + cand[i][1] - 1) / cand[i][1]) * groups;
            if (blocks >= t->compute_units) { pick = i; break; }
        }
        s->tile[0] = cand[pick][0], s->tile[1] = cand[pick][1], s->tile[2] = KN_WG_BK;
    }
    s->warps[0] = s->tile[0] / 16, s->warps[1] = 1;
    if (stages_free) {
        /* deep enough to hide the gathers' latency, inside the shared memory */
        uint32_t st = K > 2 * KN_WG_BK ? 4 : 2;
        while (st > 2 && (uint64_t)st * ((s->tile[0] + s->tile[1]) * KN_WG_BK * 2 + 16) > t->lds_bytes) st--;
        s->stages = st;
    }
}

/* ---- the kernel --------------------------------------------------------------------------- */
typedef struct conv_fill {
    rk_tile_im2col v;        /* fwd igemm: the im2col view of X */
    rk_tile_copy cp;         /* A's tile into the swizzled stage */
    bool gather, hold;       /* im2col (else A's plain copy); pixel state held across the loop */
    rk_tile_copy_lanes l;
    rk_tile_im2col_rows rows;
} conv_fill;

static void fill_a(kn_hk *h, void *ud, int operand, rk_value tid, rk_value base, rk_value kx, rk_value mn0) {
    conv_fill *f = ud;
    if (!f->gather) {
        kn_gemm_hopper_copy(h, operand, tid, base, kx, mn0);
        return;
    }
    if (!f->hold) {
        rk_tile_copy_lanes_init(h->k, &f->cp, tid, &f->l);
        rk_tile_im2col_rows_init(h->k, &f->cp, &f->l, &f->v, mn0, &f->rows);
    }
    rk_tile_im2col_issue(h->k, &f->cp, &f->l, &f->v, &f->rows, kx, h->sA, base);
}

static void fill_b(kn_hk *h, void *ud, int operand, rk_value tid, rk_value base, rk_value kx, rk_value mn0) {
    (void)ud;
    kn_gemm_hopper_copy(h, operand, tid, base, kx, mn0);
}

void kn_conv_hopper_build(rk_kernel *k, const rk_instance *in, const rk_target *t, const kn_gemm_io *io,
                          const rk_tile_im2col *view, const rk_value *epi, uint32_t nepi) {
    rk_gemm_spec s = kn_conv_gemm_spec(in);
    /* the values the GEMM's signature would hold: A, B, C, M, N, K, lda, ldb, ldc, the chain's operands */
    rk_value p[9 + RK_EPI_MAX_PARAMS];
    rk_value gp[9] = {io->A, io->B, io->C, io->M, io->N, io->K, io->lda, io->ldb, io->ldc};
    memcpy(p, gp, sizeof gp);
    for (uint32_t i = 0; i < nepi; i++) p[9 + i] = epi[i];
    conv_fill f = {.gather = view != NULL};
    if (view) f.v = *view;
    struct kn_hk_fill fills[2] = {{fill_a, &f}, {fill_b, NULL}};
    kn_hk h;
    kn_gemm_hopper_begin_ex(&h, &s, t, k, p, fills, 0);
    rk_lds_layout lds;
    rk_status st = rk_lds_layout_hw_swizzle(h.pl.bm, KN_WG_BK, 2, 128, &lds);
    if (!st) st = rk_tile_copy_make(h.pl.bm, KN_WG_BK, s.vec_a, h.pl.threads, s.dtype, &lds, s.vec_a > 1, &f.cp);
    RK_ASSERT(st == RK_OK, "conv: the wgmma gather of a validated instance");
    f.hold = f.cp.passes <= HOLD_ROWS_MAX_PASSES;
    if (f.gather && f.hold) {
        /* the block's pixels do not move along K: decompose them once, ahead of the fills (their
         * values must dominate the loop; the main loop finds the same origin again) */
        rk_value pid = rk_build_block_id(k, 0);
        kn_gemm_hopper_origin(&h, pid);
        rk_value tid = rk_build_thread_id(k, 0);
        rk_tile_copy_lanes_init(k, &f.cp, tid, &f.l);
        rk_tile_im2col_rows_init(k, &f.cp, &f.l, &f.v, h.m0, &f.rows);
    }
    kn_gemm_hopper_run_plain(&h);
}
