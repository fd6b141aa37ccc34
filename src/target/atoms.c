/* rocke — the matrix-atom catalog: MFMA (CDNA, wave64), mma.sync (NVIDIA,
 * warp32) and wgmma (NVIDIA, warpgroup of 128) with their lane maps, plus a
 * host reference that applies the maps. Lane maps follow the AMD
 * matrix-instruction layouts and the PTX ISA fragment tables. Layer: target. */
#include <math.h>
#include <stdlib.h>

#include "rocke/target.h"
#include "../base/base_int.h"

/* ---- MFMA maps (wave64): l = lane, s = slot ------------------------------- */
#define MAP(name, R, C, B) \
    static void name(uint32_t l, uint32_t s, uint32_t *r, uint32_t *c, uint32_t *b) { \
        (void)l; (void)s; *r = (R); *c = (C); *b = (B); }

/* A (row, k) and B (k, col) for atoms whose per-lane K values are one run */
MAP(a16_k4, l % 16, 4 * (l / 16) + s, 0)
MAP(b16_k4, 4 * (l / 16) + s, l % 16, 0)
MAP(a16_k8, l % 16, 8 * (l / 16) + s, 0)
MAP(b16_k8, 8 * (l / 16) + s, l % 16, 0)
MAP(a16_k2, l % 16, 2 * (l / 16) + s, 0)
MAP(b16_k2, 2 * (l / 16) + s, l % 16, 0)
MAP(a16_k1, l % 16, l / 16, 0)
MAP(b16_k1, l / 16, l % 16, 0)
MAP(a32_k4, l % 32, 4 * (l / 32) + s, 0)
MAP(b32_k4, 4 * (l / 32) + s, l % 32, 0)
MAP(a32_k8, l % 32, 8 * (l / 32) + s, 0)
MAP(b32_k8, 8 * (l / 32) + s, l % 32, 0)
MAP(a32_k2, l % 32, 2 * (l / 32) + s, 0)
MAP(b32_k2, 2 * (l / 32) + s, l % 32, 0)
MAP(a32_k1, l % 32, l / 32, 0)
MAP(b32_k1, l / 32, l % 32, 0)
/* gfx950 16x16x128 f8f6f4, 8-bit formats: 32 K values per lane, one run,
 * which is also the lane's MX scale block (32 values share one scale) */
MAP(a16_k32, l % 16, 32 * (l / 16) + s, 0)
MAP(b16_k32, 32 * (l / 16) + s, l % 16, 0)
/* accumulators: 16x16 holds 4 consecutive rows per lane; 32x32 holds four
 * groups of 4 rows, 8 rows apart */
MAP(c16, 4 * (l / 16) + s, l % 16, 0)
MAP(c32, 8 * (s / 4) + 4 * (l / 32) + s % 4, l % 32, 0)
/* 4x4x4, 16 blocks: lane l works on block l/4 */
MAP(a4_b16, l % 4, s, l / 4)
MAP(b4_b16, s, l % 4, l / 4)
MAP(c4_b16, s, l % 4, l / 4)

/* ---- mma.sync maps (warp32): g = lane/4, t = lane%4 ------------------------ */
MAP(nv_a_k16, (l >> 2) + 8 * ((s >> 1) & 1), 2 * (l & 3) + (s & 1) + 8 * (s >> 2), 0)
MAP(nv_b_k16, 2 * (l & 3) + (s & 1) + 8 * (s >> 1), l >> 2, 0)
MAP(nv_a_k8, (l >> 2) + 8 * (s >> 1), 2 * (l & 3) + (s & 1), 0)
MAP(nv_b_k8, 2 * (l & 3) + (s & 1), l >> 2, 0)
MAP(nv_a_tf32, (l >> 2) + 8 * (s & 1), (l & 3) + 4 * (s >> 1), 0)
MAP(nv_b_tf32, (l & 3) + 4 * s, l >> 2, 0)
MAP(nv_c, (l >> 2) + 8 * (s >> 1), 2 * (l & 3) + (s & 1), 0)
/* wgmma m64n8k16 (warpgroup, 128 lanes): warp w = l/32 holds rows 16w..16w+15
 * of A (register fragment) and D in the mma.sync layouts above; B (16 x 8,
 * read from shared memory by the instruction) is one element per lane:
 * k = l % 16, n = l / 16 (the lowering stages it) */
MAP(wg_a_k16, 16 * (l >> 5) + ((l & 31) >> 2) + 8 * ((s >> 1) & 1), 2 * (l & 3) + (s & 1) + 8 * (s >> 2), 0)
MAP(wg_b_n8, l & 15, l >> 4, 0)
MAP(wg_c, 16 * (l >> 5) + ((l & 31) >> 2) + 8 * (s >> 1), 2 * (l & 3) + (s & 1), 0)
#undef MAP

#define CDNA RK_FEAT_AMD | RK_FEAT_GFX9
#define ATOM(id, feat, M, N, K, B, lanes, ae, be, ce, al, bl, cl, am, bm, cm) \
    static const rk_mma_atom atom_##id = {#id, feat, M, N, K, B, lanes, ae, be, ce, al, bl, cl, am, bm, cm};

ATOM(mfma_f32_4x4x4_f16,     CDNA, 4, 4, 4, 16, 64, RK_S_F16, RK_S_F16, RK_S_F32, 4, 4, 4, a4_b16, b4_b16, c4_b16)
ATOM(mfma_f32_16x16x4_f32,   CDNA, 16, 16, 4, 1, 64, RK_S_F32, RK_S_F32, RK_S_F32, 1, 1, 4, a16_k1, b16_k1, c16)
ATOM(mfma_f32_32x32x2_f32,   CDNA, 32, 32, 2, 1, 64, RK_S_F32, RK_S_F32, RK_S_F32, 1, 1, 16, a32_k1, b32_k1, c32)
ATOM(mfma_f32_16x16x8_xf32,  CDNA | RK_FEAT_XF32, 16, 16, 8, 1, 64, RK_S_F32, RK_S_F32, RK_S_F32, 2, 2, 4, a16_k2, b16_k2, c16)
ATOM(mfma_f32_32x32x4_xf32,  CDNA | RK_FEAT_XF32, 32, 32, 4, 1, 64, RK_S_F32, RK_S_F32, RK_S_F32, 2, 2, 16, a32_k2, b32_k2, c32)
ATOM(mfma_f32_16x16x16_f16,  CDNA, 16, 16, 16, 1, 64, RK_S_F16, RK_S_F16, RK_S_F32, 4, 4, 4, a16_k4, b16_k4, c16)
ATOM(mfma_f32_32x32x8_f16,   CDNA, 32, 32, 8, 1, 64, RK_S_F16, RK_S_F16, RK_S_F32, 4, 4, 16, a32_k4, b32_k4, c32)
ATOM(mfma_f32_16x16x32_f16,  CDNA | RK_FEAT_GFX950, 16, 16, 32, 1, 64, RK_S_F16, RK_S_F16, RK_S_F32, 8, 8, 4, a16_k8, b16_k8, c16)
ATOM(mfma_f32_32x32x16_f16,  CDNA | RK_FEAT_GFX950, 32, 32, 16, 1, 64, RK_S_F16, RK_S_F16, RK_S_F32, 8, 8, 16, a32_k8, b32_k8, c32)
ATOM(mfma_f32_16x16x16_bf16, CDNA, 16, 16, 16, 1, 64, RK_S_BF16, RK_S_BF16, RK_S_F32, 4, 4, 4, a16_k4, b16_k4, c16)
ATOM(mfma_f32_32x32x8_bf16,  CDNA, 32, 32, 8, 1, 64, RK_S_BF16, RK_S_BF16, RK_S_F32, 4, 4, 16, a32_k4, b32_k4, c32)
ATOM(mfma_f32_16x16x32_bf16, CDNA | RK_FEAT_GFX950, 16, 16, 32, 1, 64, RK_S_BF16, RK_S_BF16, RK_S_F32, 8, 8, 4, a16_k8, b16_k8, c16)
ATOM(mfma_f32_32x32x16_bf16, CDNA | RK_FEAT_GFX950, 32, 32, 16, 1, 64, RK_S_BF16, RK_S_BF16, RK_S_F32, 8, 8, 16, a32_k8, b32_k8, c32)
/* fp8/bf8: the IR element is the target's native encoding (FNUZ on gfx942,
 * OCP on gfx950); the catalog names the OCP type and the check maps it. */
ATOM(mfma_f32_16x16x32_fp8,  CDNA | RK_FEAT_GFX940, 16, 16, 32, 1, 64, RK_S_FP8E4M3, RK_S_FP8E4M3, RK_S_F32, 8, 8, 4, a16_k8, b16_k8, c16)
ATOM(mfma_f32_16x16x32_bf8,  CDNA | RK_FEAT_GFX940, 16, 16, 32, 1, 64, RK_S_BF8E5M2, RK_S_BF8E5M2, RK_S_F32, 8, 8, 4, a16_k8, b16_k8, c16)
ATOM(mfma_f32_32x32x16_fp8,  CDNA | RK_FEAT_GFX940, 32, 32, 16, 1, 64, RK_S_FP8E4M3, RK_S_FP8E4M3, RK_S_F32, 8, 8, 16, a32_k8, b32_k8, c32)
ATOM(mfma_f32_32x32x16_bf8,  CDNA | RK_FEAT_GFX940, 32, 32, 16, 1, 64, RK_S_BF8E5M2, RK_S_BF8E5M2, RK_S_F32, 8, 8, 16, a32_k8, b32_k8, c32)
/* NVIDIA mma.sync (sm_80+): fragments as the IR carries them (vec<f16x8> ...) */
ATOM(mma_m16n8k16_f32_f16,   RK_FEAT_NV | RK_FEAT_SM80, 16, 8, 16, 1, 32, RK_S_F16, RK_S_F16, RK_S_F32, 8, 4, 4, nv_a_k16, nv_b_k16, nv_c)
ATOM(mma_m16n8k16_f32_bf16,  RK_FEAT_NV | RK_FEAT_SM80, 16, 8, 16, 1, 32, RK_S_BF16, RK_S_BF16, RK_S_F32, 8, 4, 4, nv_a_k16, nv_b_k16, nv_c)
ATOM(mma_m16n8k8_f32_f16,    RK_FEAT_NV | RK_FEAT_SM80, 16, 8, 8, 1, 32, RK_S_F16, RK_S_F16, RK_S_F32, 4, 2, 4, nv_a_k8, nv_b_k8, nv_c)
ATOM(mma_m16n8k8_f32_bf16,   RK_FEAT_NV | RK_FEAT_SM80, 16, 8, 8, 1, 32, RK_S_BF16, RK_S_BF16, RK_S_F32, 4, 2, 4, nv_a_k8, nv_b_k8, nv_c)
ATOM(mma_m16n8k8_f32_tf32,   RK_FEAT_NV | RK_FEAT_SM80, 16, 8, 8, 1, 32, RK_S_F32, RK_S_F32, RK_S_F32, 4, 2, 4, nv_a_tf32, nv_b_tf32, nv_c)
/* NVIDIA wgmma (sm_90a), one warpgroup: register A, B staged through shared memory */
ATOM(wgmma_m64n8k16_f32_f16,  RK_FEAT_NV | RK_FEAT_SM90A, 64, 8, 16, 1, 128, RK_S_F16, RK_S_F16, RK_S_F32, 8, 1, 4, wg_a_k16, wg_b_n8, wg_c)
ATOM(wgmma_m64n8k16_f32_bf16, RK_FEAT_NV | RK_FEAT_SM90A, 64, 8, 16, 1, 128, RK_S_BF16, RK_S_BF16, RK_S_F32, 8, 1, 4, wg_a_k16, wg_b_n8, wg_c)
/* gfx950 16x16x128 f8f6f4 (v_mfma_[scale_]f32_16x16x128_f8f6f4), 8-bit formats
 * only: rocke has no fp6/fp4 IR types. The unscaled atom is fp8 (OCP e4m3)
 * on both sides; the scaled one takes fp8 or bf8 per operand plus the E8M0
 * scales (target.h). Lane maps and what is unverified: docs/lowering.md §7.3. */
_Static_assert(RK_S__COUNT <= 32, "ab_formats holds one bit per scalar type");
#define F8F6F4 (1u << RK_S_FP8E4M3) | (1u << RK_S_BF8E5M2)
static const rk_mma_atom atom_mfma_f32_16x16x128_fp8 = {
    "mfma_f32_16x16x128_fp8", CDNA | RK_FEAT_GFX950, 16, 16, 128, 1, 64, RK_S_FP8E4M3, RK_S_FP8E4M3, RK_S_F32,
    32, 32, 4, a16_k32, b16_k32, c16, 0, false};
static const rk_mma_atom atom_mfma_scale_f32_16x16x128_f8f6f4 = {
    "mfma_scale_f32_16x16x128_f8f6f4", CDNA | RK_FEAT_GFX950, 16, 16, 128, 1, 64, RK_S_FP8E4M3, RK_S_FP8E4M3,
    RK_S_F32, 32, 32, 4, a16_k32, b16_k32, c16, F8F6F4, true};
#undef F8F6F4
#undef ATOM

static const rk_mma_atom *const atoms[] = {
    &atom_mfma_f32_4x4x4_f16,    &atom_mfma_f32_16x16x4_f32,   &atom_mfma_f32_32x32x2_f32,
    &atom_mfma_f32_16x16x8_xf32, &atom_mfma_f32_32x32x4_xf32,  &atom_mfma_f32_16x16x16_f16,
    &atom_mfma_f32_32x32x8_f16,  &atom_mfma_f32_16x16x32_f16,  &atom_mfma_f32_32x32x16_f16,
    &atom_mfma_f32_16x16x16_bf16, &atom_mfma_f32_32x32x8_bf16, &atom_mfma_f32_16x16x32_bf16,
    &atom_mfma_f32_32x32x16_bf16, &atom_mfma_f32_16x16x32_fp8, &atom_mfma_f32_16x16x32_bf8,
    &atom_mfma_f32_32x32x16_fp8, &atom_mfma_f32_32x32x16_bf8,  &atom_mfma_f32_16x16x128_fp8,
    &atom_mfma_scale_f32_16x16x128_f8f6f4,                     &atom_mma_m16n8k16_f32_f16,
    &atom_mma_m16n8k16_f32_bf16, &atom_mma_m16n8k8_f32_f16,    &atom_mma_m16n8k8_f32_bf16,
    &atom_mma_m16n8k8_f32_tf32,  &atom_wgmma_m64n8k16_f32_f16, &atom_wgmma_m64n8k16_f32_bf16,
    NULL,
};

const rk_mma_atom *const *rk_mma_atoms(void) { return atoms; }

const rk_mma_atom *rk_mma_atom_find(const char *op_id) {
    for (const rk_mma_atom *const *a = atoms; op_id && *a; a++)
        if (strcmp((*a)->op_id, op_id) == 0) return *a;
    return NULL;
}

bool rk_target_has_atom(const rk_target *t, const rk_mma_atom *a) {
    /* a warpgroup atom (128 lanes) runs on four warps of 32 */
    return (t->features & a->feat) == a->feat &&
           (a->lanes == t->wave_size || (a->lanes == 128 && t->wave_size == 32));
}

double rk_e8m0_value(uint8_t e) { return e == 255 ? NAN : ldexp(1.0, (int)e - 127); }

void rk_mma_atom_reference(const rk_mma_atom *a, const double *A, const double *B, const double *C, double *D) {
    rk_mma_atom_reference_scaled(a, A, B, C, NULL, 0, NULL, 0, D);
}

/* The scale factor lane l applies to its A or B elements (1 when unscaled). */
static double lane_scale(const uint32_t *words, unsigned opsel, uint32_t l) {
    return words ? rk_e8m0_value((uint8_t)(words[l] >> (8 * (opsel & 3u)))) : 1.0;
}

/* Rebuild full A (batch x m x k), B (batch x k x n), C from the lane
 * fragments (each element times its lane's scale, exact in double), multiply
 * in double, and scatter D back through the C map. */
void rk_mma_atom_reference_scaled(const rk_mma_atom *a, const double *A, const double *B, const double *C,
                                  const uint32_t *a_scale, unsigned opsel_a, const uint32_t *b_scale,
                                  unsigned opsel_b, double *D) {
    uint32_t M = a->m, N = a->n, K = a->k, nb = a->batch;
    double *fa = calloc((size_t)nb * M * K, sizeof *fa);
    double *fb = calloc((size_t)nb * K * N, sizeof *fb);
    double *fc = calloc((size_t)nb * M * N, sizeof *fc);
    RK_ASSERT(fa && fb && fc, "out of memory in the atom reference");
    uint32_t r, c, b;
    for (uint32_t l = 0; l < a->lanes; l++) {
        for (uint32_t s = 0; s < a->a_len; s++) {
            a->a_map(l, s, &r, &c, &b);
            fa[((size_t)b * M + r) * K + c] = A[l * a->a_len + s] * lane_scale(a_scale, opsel_a, l);
        }
        for (uint32_t s = 0; s < a->b_len; s++) {
            a->b_map(l, s, &r, &c, &b);
            fb[((size_t)b * K + r) * N + c] = B[l * a->b_len + s] * lane_scale(b_scale, opsel_b, l);
        }
        for (uint32_t s = 0; s < a->c_len; s++) {
            a->c_map(l, s, &r, &c, &b);
            fc[((size_t)b * M + r) * N + c] = C[l * a->c_len + s];
        }
    }
    for (uint32_t l = 0; l < a->lanes; l++)
        for (uint32_t s = 0; s < a->c_len; s++) {
            a->c_map(l, s, &r, &c, &b);
            double acc = fc[((size_t)b * M + r) * N + c];
            for (uint32_t kk = 0; kk < K; kk++)
                acc += fa[((size_t)b * M + r) * K + kk] * fb[((size_t)b * K + kk) * N + c];
            D[l * a->c_len + s] = acc;
        }
    free(fa);
    free(fb);
    free(fc);
}
