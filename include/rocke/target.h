/* rocke — the target catalog: chips as data (wave size, LDS, address spaces,
 * LLVM triple/datalayout inputs, matrix atoms with lane maps, encodings) and
 * target-aware verification. Layer: target (uses ir). */
#ifndef ROCKE_TARGET_H
#define ROCKE_TARGET_H

#include "rocke/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_vendor { RK_VENDOR_AMD, RK_VENDOR_NVIDIA } rk_vendor;

/* Lane maps: which matrix coordinate slot `slot` of lane `lane` holds.
 * A: (row, k); B: (k, col); C/D: (row, col). `batch` is the block index for
 * batched atoms (4x4x4), else 0. */
typedef void (*rk_lane_map)(uint32_t lane, uint32_t slot, uint32_t *r, uint32_t *c, uint32_t *batch);

/* One matrix-multiply atom: D = A*B + C over one wave/warp (or warpgroup). */
typedef struct rk_mma_atom {
    const char *op_id;          /* tile.mma op_id, e.g. "mfma_f32_16x16x16_f16" */
    uint32_t feat;              /* RK_FEAT_* the target needs */
    uint16_t m, n, k;           /* per block */
    uint16_t batch;             /* independent blocks per instruction (1, or 16 for 4x4x4) */
    uint16_t lanes;             /* threads taking part: 64 (wave64), 32 (warp), 128 (warpgroup) */
    rk_scalar a_elem, b_elem;   /* input element types as the IR carries them */
    rk_scalar c_elem;           /* accumulator element type */
    uint16_t a_len, b_len, c_len; /* elements per lane (1 = scalar operand) */
    rk_lane_map a_map, b_map, c_map;
    /* 0, or the element types A and B may each take, one bit per rk_scalar
     * (1u << RK_S_...): the format is chosen per operand from its IR type
     * (gfx950 f8f6f4: fp8 e4m3 or bf8 e5m2); a_elem/b_elem name the first */
    uint32_t ab_formats;
    /* Block-scaled (MX) atom: two more operands a_scale, b_scale (i32 per
     * lane); attributes opsel_a/opsel_b (0..3, default 0) pick the E8M0 byte
     * e of each lane's word, and every A (B) element that lane holds is
     * multiplied by 2^(e-127) (e = 255: NaN). Takes 5 operands, else 3. */
    bool scaled;
} rk_mma_atom;

/* The E8M0 scale factor of a byte: 2^(e-127); e = 255 is NaN (OCP MX). Byte 0
 * is 2^-127, not zero. */
double rk_e8m0_value(uint8_t e);

typedef struct rk_target {
    const char *name;            /* "gfx942", "sm_90a" */
    const char *family;          /* "CDNA3", "Hopper" */
    rk_vendor vendor;
    uint32_t features;           /* RK_FEAT_* */
    uint32_t wave_size;
    uint32_t lds_bytes;          /* LDS / shared memory per workgroup (max) */
    uint32_t lds_per_cu;         /* per CU / SM, for occupancy */
    uint32_t max_workgroup;      /* threads */
    const char *triple;          /* LLVM triple */
    const char *cpu;             /* LLVM CPU name */
    const char *llvm_features;   /* LLVM target features ("" or "+ptx80") */
    rk_scalar fp8, bf8;          /* native 8-bit float encodings */
    /* AMD */
    uint32_t buffer_word3;       /* buffer descriptor dword 3 */
    uint32_t vmcnt_bits;         /* width of the vmcnt counter */
    uint32_t simds_per_cu, waves_per_simd, vgprs_per_simd, agprs_per_simd, vgpr_granule;
    bool unified_vgpr_agpr;      /* one VGPR+AGPR pool per wave (gfx90a+) */
    uint32_t max_sgprs;
    /* NVIDIA */
    uint32_t sm_version;         /* 80, 90 */
    uint32_t regs_per_sm, max_regs_per_thread, max_threads_per_sm, max_blocks_per_sm;
} rk_target;

/* All targets, NULL-terminated, in a fixed order. */
const rk_target *const *rk_targets(void);
/* Look up a target by name; NULL with a message listing the legal names. */
const rk_target *rk_target_find(const char *name);
const rk_target *rk_target_default(void);           /* gfx950 */
/* "gfx90a, gfx942, gfx950 (default), sm_80, sm_90, sm_90a" */
const char *rk_target_names(void);

/* Matrix atoms. */
const rk_mma_atom *rk_mma_atom_find(const char *op_id);
const rk_mma_atom *const *rk_mma_atoms(void);       /* NULL-terminated */
bool rk_target_has_atom(const rk_target *t, const rk_mma_atom *a);
/* Host reference for one atom: D = A*B + C with inputs given per lane in the
 * atom's fragment layout (as doubles) — used by tests and the emulator. */
void rk_mma_atom_reference(const rk_mma_atom *a, const double *A, const double *B, const double *C,
                           double *D);
/* The same for a scaled atom: a_scale/b_scale hold each lane's i32 scale
 * word, opsel_a/opsel_b (0..3) pick its byte; each A (B) element is scaled by
 * the E8M0 value of the lane holding it. Also valid for an unscaled atom
 * when both scale arrays are NULL (plain rk_mma_atom_reference). */
void rk_mma_atom_reference_scaled(const rk_mma_atom *a, const double *A, const double *B, const double *C,
                                  const uint32_t *a_scale, unsigned opsel_a, const uint32_t *b_scale,
                                  unsigned opsel_b, double *D);

/* The verifier with this target's legality rules (features, atoms, fp8
 * dialect). */
rk_status rk_target_verify(const rk_kernel *k, const rk_target *t, rk_diags *out);
void rk_target_verify_info(const rk_target *t, rk_verify_target *out);

/* AMD s_waitcnt immediate for this target: -1 = don't wait; values clamp to
 * the field maximum (never wrap). */
uint32_t rk_waitcnt_encode(const rk_target *t, int vmcnt, int lgkmcnt, int expcnt);

#ifdef __cplusplus
}
#endif
#endif
