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
 * threads promote, and a block's scales are loaded before the wait that
 * retires it (while its wgmmas still run), not after. A block's fresh
 * wgmmas write the registers its set held two blocks before (the first
 * step ignores their values): the sets never move between registers, so
 * no in-flight result is copied. promote=serial is session 5's loop: one set, each block
 * retired by wait_group 0 and its scales loaded before it is promoted. The
 * sum sees the blocks in the same order either way, so the results are
 * bit-identical. Layer: kernels. */
#include "gemm_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* Block kt's wgmmas into set `into` (its values dead), after the hook's
 * wait for its stage. */
static rk_value issue(kn_hk *h, const kn_hk_blocks *b, rk_value kt, rk_value into) {
    rk_value st = b->full(h, b->ud, kt);
    return kn_gemm_hopper_mma_fresh(h, st, b->arow, into);
}

/* Block kt (set blk) into acc: its scales loaded while its wgmmas still
 * run, wait_group `left` (1 while the next block's group stays in flight,
 * 0 at the end) retires it, its stage goes back, then the promotion;
 * *freed: the set, free again. */
static rk_value retire(kn_hk *h, const kn_hk_blocks *b, uint32_t left, rk_value kt, rk_value blk, rk_value acc,
                       rk_value *freed) {
    rk_value sc = kn_gemm_hopper_block_scales(h, b->rbase, b->twg, kt);
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
        rk_build_wgmma_wait_group(k, 0, &blk, 1, &d);
        b->retired(h, b->ud, kt);
        rk_value sc = kn_gemm_hopper_block_scales(h, b->rbase, b->twg, kt);
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
    rk_value a0 = issue(h, b, zero, set[0]);
    /* the pairs (1, 2), (3, 4), ...: kt from 1 below 1 + 2 * ((ktiles - 1) / 2) */
    rk_value tm1 = rk_build_sub(k, h->ktiles, one);
    rk_value pairs = rk_build_lshr(k, tm1, one);
    rk_value span = rk_build_mul(k, pairs, two);
    rk_value hi = rk_build_add(k, span, one);
    /* carried: the sum, set A (in flight), set B (free) */
    rk_value init[3] = {acc0, a0, set[1]}, it[3], res[3];
    rk_value kt = rk_for_begin(k, one, hi, two, "bkt", 3, init, NULL, it);
    {
        rk_value fa, fb;
        rk_value nb = issue(h, b, kt, it[2]);
        rk_value prev = rk_build_sub(k, kt, one);
        rk_value acc = retire(h, b, 1, prev, it[1], it[0], &fa);
        rk_value next = rk_build_add(k, kt, one);
        rk_value na = issue(h, b, next, fa);
        acc = retire(h, b, 1, kt, nb, acc, &fb);
        rk_value y[3] = {acc, na, fb};
        rk_for_end(k, y, 3, res);
    }
    /* ktiles even: block ktiles - 1 is left to issue into B; odd: A is the last */
    rk_value odd = rk_build_and(k, h->ktiles, one);
    rk_value even = rk_build_cmp(k, "eq", odd, zero);
    rk_type acc_t = rk_value_type(k, acc0);
    rk_value out;
    rk_if_else_begin(k, even, 1, &acc_t, &out);
    {
        rk_value fa, fb;
        rk_value nb = issue(h, b, tm1, res[2]);
        rk_value prev = rk_build_sub(k, tm1, one);
        rk_value acc = retire(h, b, 1, prev, res[1], res[0], &fa);
        acc = retire(h, b, 0, tm1, nb, acc, &fb);
        rk_else(k, &acc, 1);
    }
    {
        rk_value fa;
        rk_value acc = retire(h, b, 0, tm1, res[1], res[0], &fa);
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
