/* rocke — the skinny-M GEMM configuration (M <= 64, decode): the product is a
 * stream of the weights B, so the block keeps tile_m at M rounded up to the
 * atom (16 rows of mma.sync or of the 16x16 MFMA atoms), spreads its warps
 * along N (1 x 4, each a 16..64 x 32 warp tile) and takes 64-deep K tiles,
 * so one stage of B is 128 x 64 x 2 B = 16 KiB against 2..8 KiB of A.
 * The split count (kn_gemm_tune_split) then gives every unit two blocks.
 * Bytes in flight: sm_90 keeps 3 stages ahead, 48 KiB of B per block, 96 KiB
 * per SM with two blocks, above the ~40 KiB per SM that 4.8 TB/s at ~1 us of
 * latency needs over 132 SMs; CDNA keeps 1 stage ahead (2 buffers) of 16 KiB,
 * with two to four blocks per CU by LDS (64 / 160 KiB). Layer: kernels. */
#include "gemm_int.h"

/* The 16x16 MFMA atom for dtype that the target has, the K-packed one first. */
static const rk_mma_atom *mfma16(const rk_target *t, rk_scalar dtype) {
    static const rk_atom_id f16[] = {RK_ATOM_MFMA_F32_16X16X32_F16, RK_ATOM_MFMA_F32_16X16X16_F16};
    static const rk_atom_id bf16[] = {RK_ATOM_MFMA_F32_16X16X32_BF16, RK_ATOM_MFMA_F32_16X16X16_BF16};
    static const rk_atom_id fp8[] = {RK_ATOM_MFMA_F32_16X16X32_FP8, RK_ATOM_MFMA_F32_16X16X32_FP8};
    static const rk_atom_id bf8[] = {RK_ATOM_MFMA_F32_16X16X32_BF8, RK_ATOM_MFMA_F32_16X16X32_BF8};
    bool e5m2 = dtype == RK_S_BF8E5M2 || dtype == RK_S_BF8E5M2FNUZ;
    const rk_atom_id *ids = dtype == RK_S_BF16 ? bf16 : dtype == RK_S_F16 ? f16 : e5m2 ? bf8 : fp8;
    for (size_t i = 0; i < 2; i++) {
        const rk_mma_atom *a = rk_mma_atom_get(ids[i]);
        if (a && rk_target_has_atom(t, a)) return a;
    }
    return NULL;
}

void kn_gemm_tune_skinny(rk_gemm_spec *s, const rk_target *t, uint64_t M, kn_gemm_locks locks) {
    bool amd = t->vendor == RK_VENDOR_AMD;
    rk_gemm_spec was = *s;
    if (!locks.atom && amd) {
        const rk_mma_atom *a = mfma16(t, s->dtype);
        if (a) s->atom = (int)a->id;
    }
    const rk_mma_atom *a = s->atom ? rk_mma_atom_get((rk_atom_id)s->atom) : kn_gemm_default_atom(t, s->dtype);
    if (!a) return;   /* validation names the problem */
    if (!locks.tile) {
        uint32_t tm = M <= 16 ? 16 : M <= 32 ? 32 : M <= 48 ? 48 : 64;
        tm = (tm + a->m - 1) / a->m * a->m;
        s->tile[0] = tm;
        s->tile[1] = 128;
        s->tile[2] = s->scale == RK_GEMM_SCALE_BLOCK ? 128 : 64;   /* fp8 block scales: one 128-K block a tile */
    }
    if (!locks.warps) {
        s->warps[0] = 1;
        s->warps[1] = 4;
    }
    if (!locks.stages) s->stages = amd ? 2 : 4;
    /* narrow vectors (odd extents) cap the copy: halve the K tile until the plan holds */
    kn_gemm_plan p;
    for (; s->tile[2] >= 16; s->tile[2] /= 2) {
        if (kn_gemm_plan_make(s, t, false, &p) == RK_OK) return;
        if (locks.tile) break;
    }
    *s = was;   /* no skinny plan: keep the general choice */
}
