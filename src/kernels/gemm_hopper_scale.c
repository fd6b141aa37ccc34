/* rocke — the GEMM Hopper path's per-128-block fp8 scales (scale=block):
 * each 128-deep K tile is accumulated by wgmma into fresh f32 registers,
 * then promoted into the running sum as acc = fma(blk, Sa[row, kb] *
 * Sb[col / 128, kb], acc) in f32, which keeps the tensor core's short fp8
 * accumulation to 128 products. The scales of a block are loaded as one
 * small vector (kn_gemm_hopper_block_scales) apart from the promotion, so
 * a schedule can load them while the block's wgmmas run. Layer: kernels. */
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

/* Sb values a thread needs per block: one where tile N divides 128 (a tile
 * then lies inside one 128-column block of B's scales), else one per group
 * of 8 columns its fragment touches. */
static uint32_t sb_count(const kn_hk *h) { return 128 % h->pl.bn == 0 ? 1 : h->pl.bn / 8; }

rk_value kn_gemm_hopper_block_scales(kn_hk *h, rk_value rbase, rk_value twg, rk_value kb) {
    rk_kernel *k = h->k;
    uint32_t ncs = sb_count(h);
    rk_value one = c32(k, 1), c7 = c32(k, 7), c127 = c32(k, 127);
    rk_value M = h->p[3], N = h->p[4];
    rk_value mlast = rk_build_sub(k, M, one);
    rk_value n127 = rk_build_add(k, N, c127);
    rk_value nblocks = rk_build_lshr(k, n127, c7);
    rk_value nlast = rk_build_sub(k, nblocks, one);
    /* thread twg holds two rows (element bit 1) and, per 8 columns, one pair (elements 4g .. 4g + 3) */
    rk_value f[2 + 16];
    for (uint32_t r = 0; r < 2; r++) {
        rk_tile_frag_coord fc = rk_tile_wgmma_acc_coord(k, twg, 2 * r);
        rk_value row = rk_build_add(k, rbase, fc.row);
        f[r] = scale_at(k, h->sa, row, mlast, h->ktiles, kb);
    }
    for (uint32_t g = 0; g < ncs; g++) {
        rk_tile_frag_coord fc = rk_tile_wgmma_acc_coord(k, twg, 4 * g);
        rk_value col = rk_build_add(k, h->n0, fc.col);
        rk_value nb = rk_build_lshr(k, col, c7);
        f[2 + g] = scale_at(k, h->sb, nb, nlast, h->ktiles, kb);
    }
    return rk_build_vpack(k, f, 2 + ncs);
}

rk_value kn_gemm_hopper_promote(kn_hk *h, rk_value scales, rk_value acc, rk_value blk) {
    rk_kernel *k = h->k;
    uint32_t half = h->pl.bn / 2, ncs = sb_count(h);
    rk_value prod[2][16];   /* Sa of row r times Sb of column group g, each rounded to f32 once */
    for (uint32_t r = 0; r < 2; r++) {
        rk_value sa = rk_build_vextract(k, scales, r);
        for (uint32_t g = 0; g < ncs; g++) {
            rk_value sb = rk_build_vextract(k, scales, 2 + g);
            prod[r][g] = rk_build_fmul(k, sa, sb);
        }
    }
    rk_value f[128];
    for (uint32_t i = 0; i < half; i++) f[i] = prod[(i >> 1) & 1][ncs == 1 ? 0 : i / 4];
    rk_value sc = rk_build_vpack(k, f, half);
    return rk_build_vfma(k, blk, sc, acc);   /* one f32 rounding per promoted element */
}
