/* rocke — the GEMM Hopper path's per-128-block fp8 scales (scale=block):
 * each 128-deep K tile is accumulated by wgmma into fresh f32 registers,
 * then promoted into the running sum as acc = fma(blk, Sa[row, kb] *
 * Sb[col / 128, kb], acc) in f32, which keeps the tensor core's short fp8
 * accumulation to 128 products. Layer: kernels. */
#include "gemm_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

/* Scale[min(i, last) * kblocks + kb]: rows (columns) past C read the last
 * one's scale, so no load leaves the buffer; those results are masked. */
static rk_value scale_at(rk_kernel *k, rk_value buf, rk_value i, rk_value last, rk_value kblocks, rk_value kb) {
    rk_value ic = rk_build_smin(k, i, last);
    rk_value r = rk_build_mul(k, ic, kblocks);
    rk_value at = rk_build_add(k, r, kb);
    return rk_load_global(k, buf, at, 1);
}

rk_value kn_gemm_hopper_promote(kn_hk *h, rk_value rbase, rk_value twg, rk_value kb, rk_value acc, rk_value blk) {
    rk_kernel *k = h->k;
    uint32_t half = h->pl.bn / 2;
    rk_value one = c32(k, 1), c7 = c32(k, 7), c127 = c32(k, 127);
    rk_value M = h->p[3], N = h->p[4];
    rk_value mlast = rk_build_sub(k, M, one);
    rk_value n127 = rk_build_add(k, N, c127);
    rk_value nblocks = rk_build_lshr(k, n127, c7);
    rk_value nlast = rk_build_sub(k, nblocks, one);
    /* thread twg holds two rows (element bit 1) and, per 8 columns, one pair (elements i / 4) */
    rk_value rs[2], cs[32];
    for (uint32_t r = 0; r < 2; r++) {
        rk_tile_frag_coord fc = rk_tile_wgmma_acc_coord(k, twg, 2 * r);
        rk_value row = rk_build_add(k, rbase, fc.row);
        rs[r] = scale_at(k, h->sa, row, mlast, h->ktiles, kb);
    }
    for (uint32_t g = 0; g < half / 4; g++) {
        rk_tile_frag_coord fc = rk_tile_wgmma_acc_coord(k, twg, 4 * g);
        rk_value col = rk_build_add(k, h->n0, fc.col);
        rk_value nb = rk_build_lshr(k, col, c7);
        cs[g] = scale_at(k, h->sb, nb, nlast, h->ktiles, kb);
    }
    rk_value f[128];
    for (uint32_t i = 0; i < half; i++) f[i] = rk_build_fmul(k, rs[(i >> 1) & 1], cs[i / 4]);
    rk_value sc = rk_build_vpack(k, f, half);
    return rk_build_vfma(k, blk, sc, acc);   /* one f32 rounding per promoted element */
}
