/* rocke — the GEMM Hopper path's main loop over one C tile's 128-K blocks
 * for scale=block, for any schedule's consumer warpgroup (its hooks wait
 * for a stage and hand it back). promote=overlap keeps two sets of block
 * accumulators, A and B, and runs the blocks in pairs:
 *   block 0 into A                                  (prologue)
 *   loop kt = 1, 3, ... while kt + 1 < ktiles:
 *     block kt into B; wait_group 1: A (block kt-1) retired, its stage
 *     handed back, A promoted while B's wgmmas run;
 *     block kt+1 into A; wait_group 1: B retired and promoted;
 *   the last one or two blocks the same way, ending with wait_group 0.
 * The tensor core always has the next block's wgmmas queued while the
 * threads promote, and a block's scales are loaded right after its wgmmas
 * are issued (carried to its promotion a loop step later), so their global
 * latency hides under two blocks' products instead of stalling the
 * promotion (pingpong, whose turn barriers hold more registers, loads them
 * just before the wait that retires the block instead: carried, they made
 * ptxas spill there). A block's fresh
 * wgmmas write the registers its set held two blocks before (the first
 * step ignores their values): the sets never move between registers, so
 * no in-flight result is copied. promote=serial is session 5's loop: one set, each block
 * retired by wait_group 0 (its scales loaded before that wait) and promoted. The
 * sum sees the blocks in the same order either way, so the results are
 * bit-identical. Layer: kernels. */
#include "gemm_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* Whether a block's scales are loaded when its wgmmas are issued (else before the wait that retires it). */
static bool early_scales(const kn_hk *h) { return h->s->schedule != RK_GEMM_SCHED_PINGPONG; }

/* Block kt's wgmmas into set `into` (its values dead), after the hook's
 * wait for its stage; then (early_scales) the loads of its scales into *sc,
 * else *sc is left invalid. */
static rk_value issue(kn_hk *h, const kn_hk_blocks *b, rk_value kt, rk_value into, rk_value *sc) {
    rk_value st = b->full(h, b->ud, kt);
    rk_value set = kn_gemm_hopper_mma_fresh(h, st, b->arow, into);
    *sc = early_scales(h) ? kn_gemm_hopper_block_scales(h, b->rbase, b->twg, kt) : (rk_value){0};
    return set;
}

/* Block kt (set blk, scales sc) into acc: wait_group `left` (1 while the
 * next block's group stays in flight, 0 at the end) retires it, its stage
 * goes back, then the promotion; *freed: the set, free again. */
static rk_value retire(kn_hk *h, const kn_hk_blocks *b, uint32_t left, rk_value kt, rk_value blk, rk_value sc,
                       rk_value acc, rk_value *freed) {
    if (!sc.id) sc = kn_gemm_hopper_block_scales(h, b->rbase, b->twg, kt);
    rk_build_wgmma_wait_group(h->k, left, &blk, 1, freed);
    b->retired(h, b->ud, kt);
    return kn_gemm_hopper_promote(h, sc, acc, *freed);
}

static rk_value run_serial(kn_hk *h, const kn_hk_blocks *b, rk_value acc0) {
    rk_kernel *k = h->k;
    rk_value zero = c32(k, 0), one = c32(k, 1), acc, res, d;
    rk_value kt = rk_for_begin(k, zero, h->ktiles, one, "bkt", 1, &acc0, NULL, &acc);
    {
        rk_value st = b->full(h, b->ud, kt);
        rk_value blk = kn_gemm_hopper_mma_fresh(h, st, b->arow, acc0);
        rk_value sc = kn_gemm_hopper_block_scales(h, b->rbase, b->twg, kt);
        rk_build_wgmma_wait_group(k, 0, &blk, 1, &d);
        b->retired(h, b->ud, kt);
        acc = kn_gemm_hopper_promote(h, sc, acc, d);
    }
    rk_for_end(k, &acc, 1, &res);
    return res;
}

static rk_value run_overlap(kn_hk *h, const kn_hk_blocks *b, rk_value acc0) {
    rk_kernel *k = h->k;
    rk_value zero = c32(k, 0), one = c32(k, 1), two = c32(k, 2);
    /* the sets' first values, handed through a wait (nothing is in flight): that puts the zeros in their
     * registers before the first wgmma's fence, which ptxas would otherwise repeat (C7519) */
    rk_value zeros[2] = {acc0, acc0}, set[2];
    rk_build_wgmma_wait_group(k, 0, zeros, 2, set);
    rk_value s0;
    rk_value a0 = issue(h, b, zero, set[0], &s0);
    /* the pairs (1, 2), (3, 4), ...: kt from 1 below 1 + 2 * ((ktiles - 1) / 2) */
    rk_value tm1 = rk_build_sub(k, h->ktiles, one);
    rk_value pairs = rk_build_lshr(k, tm1, one);
    rk_value span = rk_build_mul(k, pairs, two);
    rk_value hi = rk_build_add(k, span, one);
    /* carried: the sum, set A (in flight), set B (free), A's scales (early_scales) */
    uint32_t nc = s0.id ? 4 : 3;
    rk_value init[4] = {acc0, a0, set[1], s0}, it[4] = {{0}}, res[4] = {{0}};
    rk_value kt = rk_for_begin(k, one, hi, two, "bkt", nc, init, NULL, it);
    {
        rk_value fa, fb, sbk, sak;
        rk_value nb = issue(h, b, kt, it[2], &sbk);
        rk_value prev = rk_build_sub(k, kt, one);
        rk_value acc = retire(h, b, 1, prev, it[1], it[3], it[0], &fa);
        rk_value next = rk_build_add(k, kt, one);
        rk_value na = issue(h, b, next, fa, &sak);
        acc = retire(h, b, 1, kt, nb, sbk, acc, &fb);
        rk_value y[4] = {acc, na, fb, sak};
        rk_for_end(k, y, nc, res);
    }
    /* ktiles even: block ktiles - 1 is left to issue into B; odd: A is the last */
    rk_value odd = rk_build_and(k, h->ktiles, one);
    rk_value even = rk_build_cmp(k, "eq", odd, zero);
    rk_type acc_t = rk_value_type(k, acc0);
    rk_value out;
    rk_if_else_begin(k, even, 1, &acc_t, &out);
    {
        rk_value fa, fb, sbk;
        rk_value nb = issue(h, b, tm1, res[2], &sbk);
        rk_value prev = rk_build_sub(k, tm1, one);
        rk_value acc = retire(h, b, 1, prev, res[1], res[3], res[0], &fa);
        acc = retire(h, b, 0, tm1, nb, sbk, acc, &fb);
        rk_else(k, &acc, 1);
    }
    {
        rk_value fa;
        rk_value acc = retire(h, b, 0, tm1, res[1], res[3], res[0], &fa);
        rk_if_end(k, &acc, 1);
    }
    return out;
}

rk_value kn_gemm_hopper_run_blocks(kn_hk *h, const kn_hk_blocks *b) {
    RK_ASSERT(h->s->scale == RK_GEMM_SCALE_BLOCK, "gemm: the block-scale loop on a spec without scale=block");
    rk_type acc_t = rk_type_vec(h->k, RK_T_F32, h->pl.bn / 2);
    rk_value acc0 = rk_build_constant_vec(h->k, acc_t, 0.0);
    return h->s->promote == RK_GEMM_PROMOTE_SERIAL ? run_serial(h, b, acc0) : run_overlap(h, b, acc0);
}
