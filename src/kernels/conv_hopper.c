/* rocke — the convolution on Hopper (path = wgmma, sm_90a), every
 * direction: the implicit GEMM on the GEMM's Hopper plain schedule
 * (gemm_hopper.c), both operands filled by the block's threads into the
 * 128-byte-swizzled stages that wgmma reads. The im2col views (fwd: X as
 * A, K-major; dgrad: dY as A, transposed; wgrad: X as B, N-major in
 * 64-column boxes) by rk_tile_im2col_issue over a copy whose LDS layout is
 * that swizzle (cp.async of channel vectors, 16, 8 or 4 bytes, zero-filled
 * in the padding and past the tails; 2-byte loads and stores for single
 * channels); dgrad's B (W's rows in (tap, k) order) by kn_conv_wrows_issue
 * into the same boxes; a plain operand (fwd: W rows; wgrad: dY, M-major)
 * by the GEMM's copy. wgrad splits N*P*Q over grid y and sums through Work
 * in split order. Rules, heuristic and the builder. Layer: kernels. */
#include "conv_int.h"
#include "gemm_hopper.h"

/* Above this many copy passes the pixel state of every pass is recomputed
 * per fill instead of held across the K loop (its registers). */
enum { HOLD_ROWS_MAX_PASSES = 8 };

static bool is_wgmma(const rk_conv_spec *c) { return c->g.path == RK_GEMM_PATH_WGMMA; }

/* Which operands are gathered (im2col or dgrad's W rows) rather than plain
 * matrices: fwd A, wgrad B, dgrad both; none for gemm1x1. */
static bool gathered(const rk_conv_spec *c, int op) {
    if (c->algo == RK_CONV_GEMM1X1) return false;
    return c->direction == RK_CONV_DGRAD || (op ? c->direction == RK_CONV_WGRAD : c->direction == RK_CONV_FWD);
}

/* The copy of one box of a gathered operand into a swizzled stage: A tile M
 * rows (K-major), B 64 K rows of one 64-column box (N-major). */
static rk_status gather_copy(const kn_gemm_plan *pl, const rk_gemm_spec *s, int op, rk_tile_copy *out) {
    uint32_t rows = op ? KN_WG_BK : pl->bm, vec = op ? s->vec_b : s->vec_a;
    rk_lds_layout lds;
    rk_status st = rk_lds_layout_hw_swizzle(rows, KN_WG_BK, 2, 128, &lds);
    return st ? st : rk_tile_copy_make(rows, KN_WG_BK, vec, pl->threads, s->dtype, &lds, vec > 1, out);
}

rk_status kn_conv_hopper_plan_check(const rk_instance *in, const rk_target *t, const char *fam, rk_gemm_spec *s,
                                    kn_gemm_plan *pl) {
    *s = kn_conv_gemm_spec(in);
    s->split_k = 1;   /* wgrad's split is conv_hopper.c's own, over the plan's K tiles */
    rk_status st = kn_gemm_hopper_plan(s, t, false, pl);
    if (st) {
        const char *m = rk_error_message();
        if (!strncmp(m, "gemm: ", 6)) m += 6;   /* the GEMM plan's rules, told as this family's */
        return rk_fail(st, "%s: %s", fam, m);
    }
    return RK_OK;
}

rk_status kn_conv_hopper_check(const rk_instance *in, const rk_target *t, const char *fam) {
    const rk_conv_spec *c = &in->u.conv;
    if (!is_wgmma(c)) return RK_OK;
    if (c->algo == RK_CONV_DIRECT)
        return rk_fail(RK_ERR_INVALID, "%s: knob 'path' = wgmma runs the implicit GEMM (algo igemm or gemm1x1; algo "
                       "direct has no matrix unit: path=mma)", fam);
    rk_gemm_spec s;
    kn_gemm_plan pl;
    rk_status st = kn_conv_hopper_plan_check(in, t, fam, &s, &pl);
    if (st) return st;
    for (int op = 0; op < 2; op++) {
        rk_tile_copy cp;
        if (gathered(c, op) && (st = gather_copy(&pl, &s, op, &cp)))
            return rk_fail(st, "%s: path=wgmma's gather of %s: %s", fam, op ? "B" : "A", rk_error_message());
    }
    return RK_OK;
}

rk_status kn_conv_hopper_check_shape(const rk_instance *in, const kn_conv_geo *g, const char *fam) {
    /* the output's channels of a group start at g * (its channels per group): pairs stay aligned
     * when that count is even (wgrad's rows are whole filters: ldc odd stores no pairs) */
    const rk_conv_spec *c = &in->u.conv;
    if (!is_wgmma(c) || g->groups == 1 || c->direction == RK_CONV_WGRAD) return RK_OK;
    bool fwd = c->direction == RK_CONV_FWD;
    uint64_t per = fwd ? g->kg : g->cg;
    if (per % 2 == 0) return RK_OK;
    return rk_fail(RK_ERR_INVALID, "%s: path=wgmma stores pairs of output channels, so groups > 1 needs %s / groups "
                   "even; here %s = %llu, groups = %llu: use --path mma", fam, fwd ? "K" : "C", fwd ? "K" : "C",
                   (unsigned long long)(fwd ? g->k : g->c), (unsigned long long)g->groups);
}

/* wgrad's split of N*P*Q: enough blocks for every SM, two per SM at tile M 64. There a block is
 * one warpgroup whose gathers' address arithmetic runs back to back with no other warp to hide its
 * latency (PTX of N8 C64 56^2 K64 3x3 at 64x64x64: ~340 instructions of copy per 64-deep K tile
 * for 4 wgmma); a second block per SM (64 KiB of stages, 96 registers: three fit) overlaps them.
 * At most a quarter of the K tiles per split and KN_CONV_WG_SPLIT_MAX: the last arriver's sum
 * reads one slice per split. */
static uint32_t wgrad_split(const rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K,
                            uint64_t groups) {
    uint64_t blocks = (M + s->tile[0] - 1) / s->tile[0] * ((N + s->tile[1] - 1) / s->tile[1]) * groups;
    uint64_t ktiles = (K + s->tile[2] - 1) / s->tile[2], want = (uint64_t)t->compute_units * (s->tile[0] == 64 ? 2 : 1);
    if (blocks >= want) return 1;
    uint64_t split = (want + blocks - 1) / blocks;
    if (split > ktiles / 4) split = ktiles / 4;
    if (split > KN_CONV_WG_SPLIT_MAX) split = KN_CONV_WG_SPLIT_MAX;
    /* Then no more splits than that, but the count whose busiest SM holds the fewest K tiles: blocks past
     * a whole multiple of `want` land a second block (or wave) on a few SMs, which then run twice the K
     * tiles (H200 session 12: N32 C256 14² took 4 splits, 144 blocks of 1 per SM, 2 waves of 25 K tiles,
     * where 3 give one wave of 33; N16 C128 28² stride 2 took 8, 144 blocks, where 7 give 126 blocks of
     * the same 7 K tiles). Ties keep the larger count (more blocks hide the gathers' latency). */
    uint64_t best = split, best_load = UINT64_MAX;
    for (uint64_t sk = split; sk >= 1; sk--) {
        uint64_t per_sm = (blocks * sk + want - 1) / want, load = per_sm * ((ktiles + sk - 1) / sk);
        if (load < best_load) best_load = load, best = sk;
    }
    split = best;
    return split < 2 ? 1 : (uint32_t)split;
}

void kn_conv_hopper_tune(rk_conv_spec *c, const rk_target *t, const kn_conv_geo *g, uint64_t M, uint64_t N,
                         uint64_t K, const kn_conv_hopper_free *free_knobs) {
    uint64_t groups = g->groups;
    bool tile_free = free_knobs->tile, stages_free = free_knobs->stages, split_free = free_knobs->split;
    rk_gemm_spec *s = &c->g;
    s->atom = 0;   /* schedule, blocks: tune_path's (load=tma's knobs) */
    bool wgrad = c->direction == RK_CONV_WGRAD;
    if (tile_free) {
        /* the largest tile that gives every SM a block (wgrad: counting the splits it may take),
         * tile M and N no wider than the problem needs; wgrad's split sums keep tile N <= 128, and
         * its tile N divides C/groups where 64 does (a B tile of one filter tap's channels: conv.c,
         * tune_path, has the H200's numbers) and its tile M is 64 where M is an odd multiple of 64
         * (H200, bf16 wgrad TFLOP/s, 64 / 128 rows: 194.7 / 118.9 at N8 C192 56² K192, 159.4 / 123.0
         * at N8 C320 28² K320, 128.9 / 84.6 at N8 C192 28² K192, 54.2 / 38.0 at N8 C192 14² K192;
         * but 67.9 / 78.7 at N16 C320 15² K136 and 57.8 / 65.2 at N8 K136: M = 136 keeps 128) */
        static const uint32_t cand[][2] = {{128, 256}, {128, 128}, {128, 64}, {64, 256}, {64, 128}, {64, 64}};
        uint64_t nmax = (N + 63) / 64 * 64, kq = (K + KN_WG_BK - 1) / KN_WG_BK / 4;
        uint64_t reach = wgrad && split_free ? (kq > 16 ? 16 : kq ? kq : 1) : 1;
        size_t pick = RK_COUNTOF(cand) - 1;
        for (size_t i = 0; i < RK_COUNTOF(cand); i++) {
            if ((cand[i][1] > nmax && cand[i][1] > 64) || (cand[i][0] > 64 && M <= 64)) continue;
            if (wgrad && cand[i][1] > 128) continue;
            if (wgrad && g->cg % 64 == 0 && g->cg % cand[i][1]) continue;
            if (wgrad && cand[i][0] == 128 && M % 128 == 64) continue;
            uint64_t blocks = (M + cand[i][0] - 1) / cand[i][0] * ((N + cand[i][1] - 1) / cand[i][1]) * groups;
            if (blocks * reach >= t->compute_units) { pick = i; break; }
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
    if (split_free) s->split_k = wgrad ? wgrad_split(s, t, M, N, K, groups) : 1;
}

/* ---- the kernel --------------------------------------------------------------------------- */
static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

typedef struct conv_fill {
    rk_tile_im2col v;              /* the im2col view (fwd: X as A; dgrad: dY as A, transposed; wgrad: X as B) */
    const kn_conv_wrows *wrows;    /* dgrad: B, W's rows in (tap, k) order */
    bool ga, gb;                   /* A / B gathered (else the GEMM's copy) */
    rk_tile_copy cpa, cpb;         /* A's tile, one 64-column box of B */
    bool hold;                     /* A's pixel state held across the loop */
    rk_tile_copy_lanes la, lb;
    rk_tile_im2col_rows ra, rb;
    rk_value kx0;                  /* wgrad split: this split's first K column (i32); invalid: none */
} conv_fill;

/* kn_hk's fill of both operands: a gathered one by rk_tile_im2col_issue
 * (or dgrad's W rows), a plain one by the GEMM's copy; K columns offset by
 * the split's start. */
static void fill(kn_hk *h, void *ud, int operand, rk_value tid, rk_value base, rk_value kx, rk_value mn0) {
    conv_fill *f = ud;
    rk_kernel *k = h->k;
    rk_value x = f->kx0.id ? rk_build_add(k, kx, f->kx0) : kx;
    if (!(operand ? f->gb : f->ga)) {
        kn_gemm_hopper_copy(h, operand, tid, base, x, mn0);
        return;
    }
    if (operand == 0) {
        /* A (K-major): rows are the block's pixels, columns (tap, channel) from K column x */
        if (!f->hold) {
            rk_tile_copy_lanes_init(k, &f->cpa, tid, &f->la);
            rk_tile_im2col_rows_init(k, &f->cpa, &f->la, &f->v, mn0, &f->ra);
        }
        rk_tile_im2col_issue(k, &f->cpa, &f->la, &f->v, &f->ra, x, h->sA, base);
        return;
    }
    /* B (N-major): tile N / 64 boxes of 64 K rows x 64 columns side by side; wgrad's rows are
     * pixels that move with K, the same for every box */
    rk_tile_copy_lanes_init(k, &f->cpb, tid, &f->lb);
    if (!f->wrows) rk_tile_im2col_rows_init(k, &f->cpb, &f->lb, &f->v, x, &f->rb);
    for (uint32_t j = 0; j < h->pl.bn / KN_WG_BK; j++) {
        rk_value dc = c32(k, j * KN_WG_BK), de = c32(k, j * KN_WG_BK * KN_WG_BK);
        rk_value c0 = rk_build_add(k, mn0, dc);
        rk_value e = rk_build_add(k, base, de);
        if (f->wrows) kn_conv_wrows_issue(k, f->wrows, &f->cpb, &f->lb, x, c0, h->sB, e);
        else rk_tile_im2col_issue(k, &f->cpb, &f->lb, &f->v, &f->rb, c0, h->sB, e);
    }
}

void kn_conv_hopper_build(rk_kernel *k, const rk_instance *in, const rk_target *t, const kn_conv_hopper_io *cio) {
    rk_gemm_spec s = kn_conv_gemm_spec(in);
    const kn_gemm_io *io = cio->io;
    /* the values the GEMM's signature would hold: A, B, C, M, N, K, lda, ldb, ldc, the chain's
     * operands, (load=tma) A's and B's tensor maps */
    rk_value p[9 + RK_EPI_MAX_PARAMS + 2];
    rk_value gp[9] = {io->A, io->B, io->C, io->M, io->N, io->K, io->lda, io->ldb, io->ldc};
    memcpy(p, gp, sizeof gp);
    for (uint32_t i = 0; i < cio->nepi; i++) p[9 + i] = cio->epi[i];
    if (cio->maps) p[9 + cio->nepi] = cio->maps[0], p[10 + cio->nepi] = cio->maps[1];
    const rk_conv_spec *cs = &in->u.conv;
    conv_fill f = {.ga = gathered(cs, 0), .gb = gathered(cs, 1), .wrows = cio->wrows};
    if (cio->view) f.v = *cio->view;
    /* with tensor maps TMA fills both operands (no fill hooks) */
    struct kn_hk_fill fills[2] = {{cio->maps ? NULL : fill, &f}, {cio->maps ? NULL : fill, &f}};
    kn_hk h;
    s.split_k = 1;   /* the Hopper plan reduces in one block; the split is this file's */
    kn_gemm_hopper_begin_ex(&h, &s, t, k, p, fills, 0);
    rk_gemm_spec sk = kn_conv_gemm_spec(in);   /* with the split */
    rk_status st = RK_OK;
    if (f.ga) st = gather_copy(&h.pl, &s, 0, &f.cpa);
    if (!st && f.gb) st = gather_copy(&h.pl, &s, 1, &f.cpb);
    RK_ASSERT(st == RK_OK, "conv: the wgmma gathers of a validated instance");
    f.hold = f.ga && f.cpa.passes <= HOLD_ROWS_MAX_PASSES;
    if (f.hold) {
        /* the block's pixels do not move along K: decompose them once, ahead of the fills (their
         * values must dominate the loop; the main loop finds the same origin again) */
        rk_value pid = rk_build_block_id(k, 0);
        kn_gemm_hopper_origin(&h, pid);
        rk_value tid = rk_build_thread_id(k, 0);
        rk_tile_copy_lanes_init(k, &f.cpa, tid, &f.la);
        rk_tile_im2col_rows_init(k, &f.cpa, &f.la, &f.v, h.m0, &f.ra);
    }
    if (sk.split_k > 1) {
        /* this split's K tiles: the loop runs over them, the fills add its first column */
        rk_value kbase, count;
        kn_gemm_split_range(k, &sk, h.ktiles, &kbase, &count);
        rk_value bk = c32(k, KN_WG_BK);
        f.kx0 = rk_build_mul(k, kbase, bk);
        if (cio->maps) h.kt0 = kbase;   /* the TMA boxes' K tiles */
        h.ktiles = count;
    }
    rk_value rbase, twg;
    rk_value d = kn_gemm_hopper_run_plain(&h, &rbase, &twg);
    if (sk.split_k > 1) kn_gemm_hopper_split_finish(&h, sk.split_k, cio->work, cio->groups, rbase, twg, d);
    else kn_gemm_hopper_epilogue(&h, rbase, twg, d);
}
