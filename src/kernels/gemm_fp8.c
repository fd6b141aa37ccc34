/* rocke — fp8 (e4m3 / e5m2) on the GEMM mma path (mma.sync m16n8k32 on
 * sm_89+, MFMA fp8/bf8 on gfx942 (FNUZ) and gfx950 (OCP)), every layout: the rules, the
 * heuristic's choices, the per-tensor scale applied before the epilogue
 * chain and the per-128-K block promotion of the main loop, with the scale
 * layouts of the Hopper path (one reference serves both). Layer: kernels. */
#include "gemm_hopper.h"

static rk_value c32(rk_kernel *k, int64_t v) { return rk_const_i32(k, (int32_t)v); }

static bool is_e5m2(rk_scalar s) { return s == RK_S_BF8E5M2 || s == RK_S_BF8E5M2FNUZ; }

rk_scalar kn_gemm_fp8_native(const rk_target *t, rk_scalar dtype) {
    if (dtype == RK_S_FP8E4M3 || dtype == RK_S_FP8E4M3FNUZ) return t->fp8 != RK_S_NONE ? t->fp8 : dtype;
    if (is_e5m2(dtype)) return t->bf8 != RK_S_NONE ? t->bf8 : dtype;
    return dtype;
}

const rk_mma_atom *kn_gemm_fp8_atom(const rk_target *t, rk_scalar dtype) {
    static const rk_atom_id e4m3[] = {RK_ATOM_MMA_M16N8K32_F32_E4M3, RK_ATOM_MFMA_F32_32X32X16_FP8};
    static const rk_atom_id e5m2[] = {RK_ATOM_MMA_M16N8K32_F32_E5M2, RK_ATOM_MFMA_F32_32X32X16_BF8};
    return kn_first_atom(t, is_e5m2(dtype) ? e5m2 : e4m3, 2);
}

rk_status kn_gemm_fp8_check(const rk_gemm_spec *s, const rk_target *t, bool batched) {
    if ((unsigned)s->scale >= RK_GEMM_SCALE__COUNT)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'scale' out of range (legal: none, tensor, block)");
    if ((unsigned)s->promote >= RK_GEMM_PROMOTE__COUNT)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'promote' out of range (legal: overlap, serial)");
    if (s->promote != RK_GEMM_PROMOTE_OVERLAP)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'promote' = serial is for path=wgmma with scale=block (mma.sync "
                       "and MFMA finish each block before it is promoted); leave it at its default");
    if (!kn_gemm_hopper_f8(s)) {
        if (s->scale != RK_GEMM_SCALE_NONE)
            return rk_fail(RK_ERR_INVALID, "gemm: knob 'scale' is for fp8 inputs (dtype e4m3 or e5m2); dtype %s on "
                           "path=mma takes scale=none", kn_dtype_name(s->dtype));
        return RK_OK;
    }
    const char *dt = kn_dtype_name(s->dtype);
    if (batched)
        return rk_fail(RK_ERR_INVALID, "batched_gemm: dtype %s is offered for single problems only (the gemm family)",
                       dt);
    if (!kn_gemm_fp8_atom(t, s->dtype))
        return rk_fail(RK_ERR_INVALID, "gemm: dtype %s: %s has no fp8 matrix atom (%s); targets that serve fp8: "
                       "gfx942 (FNUZ), gfx950 (OCP) through MFMA, sm_90 and sm_90a (OCP) through mma.sync m16n8k32 "
                       "(sm_90a also wgmma)", dt, t->name,
                       t->vendor == RK_VENDOR_AMD ? "MFMA takes fp8 from CDNA3" : "mma.sync e4m3/e5m2 needs sm_89+");
    rk_scalar native = kn_gemm_fp8_native(t, s->dtype);
    bool fnuz = native == RK_S_FP8E4M3FNUZ || native == RK_S_BF8E5M2FNUZ;
    if (native != s->dtype)
        return rk_fail(RK_ERR_INVALID, "gemm: dtype %s on %s: its matrix unit multiplies %s 8-bit floats, so use "
                       "dtype %s (the heuristic maps the format to the target's own)", dt, t->name,
                       fnuz ? "FNUZ" : "OCP", kn_dtype_name(native));
    if (s->epilogue == RK_GEMM_EPI_CSHUFFLE)
        return rk_fail(RK_ERR_INVALID, "gemm: epilogue=cshuffle stages f32 C in pairs of the 16-bit operand type; "
                       "dtype %s takes epilogue=direct", dt);
    if (s->scale != RK_GEMM_SCALE_NONE && s->split_k > 1 && s->split_reduce == RK_GEMM_SPLIT_ATOMIC)
        return rk_fail(RK_ERR_INVALID, "gemm: split_reduce=atomic adds unscaled partials into C; fp8 with scales takes "
                       "split_reduce=workspace");
    if (s->scale == RK_GEMM_SCALE_BLOCK && (s->tile[2] != 128 || 128 % s->tile[1]))
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'tile' = %ux%ux%u with scale=block: every K tile must be one "
                       "128-K scale block and every block tile lie in one 128-column block of B's scales: tile K "
                       "128, tile N 8, 16, 32, 64 or 128", s->tile[0], s->tile[1], s->tile[2]);
    return RK_OK;
}

void kn_gemm_fp8_signature(const rk_gemm_spec *s, rk_ksig *sg) {
    if (s->scale == RK_GEMM_SCALE_TENSOR) {
        kn_sig_add(sg, "Sa", true, RK_S_F32, RK_KP_IN, "1");
        kn_sig_add(sg, "Sb", true, RK_S_F32, RK_KP_IN, "1");
    } else if (s->scale == RK_GEMM_SCALE_BLOCK) {
        kn_sig_add(sg, "Sa", true, RK_S_F32, RK_KP_IN, "M,K/128");
        kn_sig_add(sg, "Sb", true, RK_S_F32, RK_KP_IN, "N/128,K/128");
    }
}

/* Widest vector (<= 16 one-byte elements, 16 bytes) dividing an extent. */
static uint32_t vec16_for(uint64_t extent) {
    uint32_t v = 16;
    while (v > 1 && extent % v) v /= 2;
    return v;
}

void kn_gemm_fp8_tune(rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K, uint64_t locked) {
    s->dtype = kn_gemm_fp8_native(t, s->dtype);
    bool a_row = s->layout == RK_GEMM_RR || s->layout == RK_GEMM_RC;
    bool b_row = s->layout == RK_GEMM_RR || s->layout == RK_GEMM_CR;
    if (!(locked >> KN_GK_VA & 1)) s->vec_a = vec16_for(a_row ? K : M);   /* along each operand's contiguous extent */
    if (!(locked >> KN_GK_VB & 1)) s->vec_b = vec16_for(b_row ? N : K);
    if (!(locked >> KN_GK_EPI & 1)) s->epilogue = RK_GEMM_EPI_DIRECT;
    if (locked >> KN_GK_TILE & 1) return;
    /* 64 (none, tensor) or 128 (block) bytes of K per row, as 16-bit GEMMs take 32 or 64 elements */
    s->tile[2] = s->scale == RK_GEMM_SCALE_BLOCK ? 128 : 64;
    if (s->scale == RK_GEMM_SCALE_BLOCK && 128 % s->tile[1]) s->tile[1] = 128;
    /* 32-lane warps take 64 x 32 warp tiles (ptxas for sm_90 at 4096^3: 2x2 warps of 64 x 64 use 254
     * registers and spill, 2x4 use 191 without spills; block scales hold two accumulator sets) */
    if (t->wave_size == 32 && !(locked >> KN_GK_WARPS & 1) && s->tile[0] == 128 && s->tile[1] == 128 &&
        s->warps[0] * s->warps[1] == 4)
        s->warps[0] = 2, s->warps[1] = 4;
    /* halve tile N until the stages fit the LDS */
    kn_gemm_plan p;
    while (s->tile[1] > 32 && kn_gemm_plan_make(s, t, false, &p) != RK_OK) s->tile[1] /= 2;
}

/* Sa[0] * Sb[0] (f32). */
static rk_value tensor_scale(rk_kernel *k, const kn_gemm_io *io) {
    rk_value z = c32(k, 0);
    rk_value a = rk_load_global(k, io->sa, z, 1);
    rk_value b = rk_load_global(k, io->sb, z, 1);
    return rk_build_fmul(k, a, b);
}

void kn_gemm_fp8_tensor(rk_kernel *k, const kn_gemm_plan *pl, const kn_gemm_io *io, const rk_value *acc,
                        rk_value *out) {
    rk_value ts = tensor_scale(k, io);
    rk_value f[64];
    uint32_t n = pl->atom->c_len;
    RK_ASSERT(n <= RK_COUNTOF(f), "accumulator fragment longer than 64");
    for (uint32_t i = 0; i < n; i++) f[i] = ts;
    rk_value sc = rk_build_vpack(k, f, n);
    for (uint32_t i = 0; i < pl->mi * pl->ni; i++) out[i] = rk_build_vmul(k, acc[i], sc);
}

void kn_gemm_fp8_promote(rk_kernel *k, const kn_gemm_plan *pl, const kn_gemm_io *io, rk_value kb, rk_value kblocks,
                         const rk_value *blk, rk_value *acc) {
    const rk_mma_atom *a = pl->atom;
    rk_value one = c32(k, 1), c7 = c32(k, 7);
    rk_value mlast = rk_build_sub(k, io->M, one);
    /* the whole block tile lies in 128-column block n0 / 128 of B's scales */
    rk_value nb = rk_build_lshr(k, io->n0, c7);
    rk_value nbr = rk_build_mul(k, nb, kblocks);
    rk_value sbat = rk_build_add(k, nbr, kb);
    rk_value sb = rk_load_global(k, io->sb, sbat, 1);
    rk_value wtm = c32(k, pl->wtm);
    rk_value wm0 = rk_build_mul(k, io->w.wm, wtm);
    rk_value rb = rk_build_add(k, io->m0, wm0);
    rk_value zero = c32(k, 0);
    for (uint32_t i = 0; i < pl->mi; i++) {
        /* one Sa load per distinct row of the atom's C slots (rows past M read row M - 1: masked later) */
        rk_value f[64];
        uint32_t row_of[64];
        for (uint32_t sl = 0; sl < a->c_len; sl++) {
            row_of[sl] = rk_lane_map_eval(a->c_map, 0, sl).row;   /* the slot's row term (lane terms are 0) */
            uint32_t first = 0;
            while (row_of[first] != row_of[sl]) first++;
            if (first < sl) {
                f[sl] = f[first];
                continue;
            }
            rk_value row, col;
            kn_gemm_acc_coord(k, pl, io->w.lane, rb, zero, i, 0, sl, &row, &col);
            rk_value rc = rk_build_smin(k, row, mlast);
            rk_value rr = rk_build_mul(k, rc, kblocks);
            rk_value at = rk_build_add(k, rr, kb);
            rk_value sa = rk_load_global(k, io->sa, at, 1);
            f[sl] = rk_build_fmul(k, sa, sb);
        }
        rk_value sc = rk_build_vpack(k, f, a->c_len);
        for (uint32_t j = 0; j < pl->ni; j++) {
            uint32_t x = i * pl->ni + j;
            acc[x] = rk_build_vfma(k, blk[x], sc, acc[x]);   /* one f32 rounding per promoted element */
        }
    }
}
