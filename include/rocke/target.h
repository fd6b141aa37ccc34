/* rocke — the target catalog: chips as data (wave size, LDS, address spaces,
 * LLVM triple/datalayout inputs, matrix atoms with lane maps as data,
 * encodings) and target-aware verification. Layer: target (uses ir). */
#ifndef ROCKE_TARGET_H
#define ROCKE_TARGET_H

#include "rocke/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_vendor { RK_VENDOR_AMD, RK_VENDOR_NVIDIA } rk_vendor;

/* ---- lane maps as data ------------------------------------------------------------------------------- */
/* Which matrix coordinate slot `slot` of lane `lane` holds: A (row, k), B
 * (k, col), C/D (row, col), and the block for batched atoms (4x4x4), else 0.
 * Each coordinate is a sum of terms ((x >> shift) & mask) * stride over x =
 * the lane or the slot; unused terms are all zero. The maps are rows of
 * include/rocke/atoms.def. */
typedef enum rk_lane_src { RK_LANE_SRC_LANE, RK_LANE_SRC_SLOT } rk_lane_src;
typedef enum rk_lane_axis { RK_LANE_ROW, RK_LANE_COL, RK_LANE_BATCH, RK_LANE__AXES } rk_lane_axis;
typedef struct rk_lane_term {
    uint8_t src;                /* rk_lane_src */
    uint8_t shift;
    uint16_t mask, stride;
} rk_lane_term;
#define RK_LANE_MAX_TERMS 4
typedef struct rk_lane_map {
    const char *name;                                   /* "A16_K4" */
    rk_lane_term coord[RK_LANE__AXES][RK_LANE_MAX_TERMS];  /* by rk_lane_axis */
} rk_lane_map;
typedef struct rk_lane_coord { uint32_t row, col, batch; } rk_lane_coord;
/* The one evaluator of a lane map: the emulator, the host reference and the
 * tests use it; rk_tile_atom_coord emits the same sums as IR. */
rk_lane_coord rk_lane_map_eval(const rk_lane_map *m, uint32_t lane, uint32_t slot);

/* ---- matrix atoms: the catalog include/rocke/atoms.def, indexed by id ---------------------------------- */
typedef enum rk_atom_id {
    RK_ATOM_NONE = 0,
#define RK_ATOM(id, ...) RK_ATOM_##id,
#include "rocke/atoms.def"
    RK_ATOM__COUNT
} rk_atom_id;

/* The matrix unit an atom runs on. */
typedef enum rk_atom_unit {
    RK_ATOM_UNIT_MFMA,          /* AMD CDNA, wave64: llvm.amdgcn.mfma.* */
    RK_ATOM_UNIT_MMA_SYNC,      /* NVIDIA sm_80+, warp32: llvm.nvvm.mma.* */
    RK_ATOM_UNIT_WGMMA          /* NVIDIA sm_90a, warpgroup of 128: wgmma.mma_async (B staged in shared memory) */
} rk_atom_unit;

/* How A and B reach the instruction (their register packing). */
typedef enum rk_atom_pack {
    RK_ATOM_PACK_AS_IS,         /* as the IR carries them (half, bfloat, float vectors or float) */
    RK_ATOM_PACK_I16X4,         /* bitcast to <4 x i16> (the .1k bf16 MFMAs) */
    RK_ATOM_PACK_B64,           /* 8 x 8-bit as one 64-bit register: i64 (LLVM >= 21) or <2 x i32> (LLVM 20) */
    RK_ATOM_PACK_I32X8,         /* 32 x 8-bit as <8 x i32>, through the 9-operand mfma.scale intrinsic */
    RK_ATOM_PACK_HALF2,         /* <2 x half> pairs, slots 2r and 2r+1 in register r (mma.sync f16) */
    RK_ATOM_PACK_I32            /* 32-bit words, slots in order (mma.sync bf16/tf32, wgmma A) */
} rk_atom_pack;

/* The fragments of an atom: A, B and C (D has C's layout). */
typedef enum rk_frag { RK_FRAG_A, RK_FRAG_B, RK_FRAG_C } rk_frag;

/* A bit of rk_mma_atom.ab_formats: one bit per rk_scalar. */
#define RK_ATOM_FORMAT(s) (1u << RK_S_##s)

/* One matrix-multiply atom: D = A*B + C over one wave/warp (or warpgroup). */
typedef struct rk_mma_atom {
    rk_atom_id id;
    const char *op_id;          /* the wire name (tile.mma op_id), e.g. "mfma_f32_16x16x16_f16" */
    rk_atom_unit unit;
    uint32_t feat;              /* RK_FEAT_* the target needs */
    uint16_t m, n, k;           /* per block */
    uint16_t batch;             /* independent blocks per instruction (1, or 16 for 4x4x4) */
    uint16_t lanes;             /* threads taking part: 64 (wave64), 32 (warp), 128 (warpgroup) */
    rk_scalar a_elem, b_elem;   /* input element types as the IR carries them */
    rk_scalar c_elem;           /* accumulator element type */
    uint16_t a_len, b_len, c_len; /* elements per lane (1 = scalar operand) */
    const rk_lane_map *a_map, *b_map, *c_map;
    rk_atom_pack pack;
    /* tf32/xf32: the unit keeps 10 mantissa bits of each f32 input and
     * drops the rest (seen on an H200 for mma.sync .tf32) */
    bool tf32;
    /* Block-scaled (MX) atom: two more operands a_scale, b_scale (i32 per
     * lane); attributes opsel_a/opsel_b (0..3, default 0) pick the E8M0 byte
     * e of each lane's word, and every A (B) element that lane holds is
     * multiplied by 2^(e-127) (e = 255: NaN). Takes 5 operands, else 3. */
    bool scaled;
    /* 0, or the element types A and B may each take (RK_ATOM_FORMAT bits):
     * the format is chosen per operand from its IR type (gfx950 f8f6f4: fp8
     * e4m3 or bf8 e5m2); a_elem/b_elem name the first */
    uint32_t ab_formats;
    const char *instr;          /* the instruction's spelling for the lowering (atoms.def) */
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
    uint32_t compute_units;      /* CUs / SMs of the reference part (MI300X 304, MI355X 256, A100 108,
                                  * H100/H200 132): what heuristics size grids against */
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

/* Matrix atoms. The IR names an atom by its op_id string: look it up once
 * (NULL when unknown), then use the atom or its id. */
const rk_mma_atom *rk_mma_atom_find(const char *op_id);
const rk_mma_atom *rk_mma_atom_get(rk_atom_id id);  /* NULL for RK_ATOM_NONE or out of range */
const rk_mma_atom *const *rk_mma_atoms(void);       /* NULL-terminated, in id order */
/* The lane map and the elements per lane of fragment f. */
const rk_lane_map *rk_mma_atom_map(const rk_mma_atom *a, rk_frag f);
uint32_t rk_mma_atom_len(const rk_mma_atom *a, rk_frag f);
bool rk_target_has_atom(const rk_target *t, const rk_mma_atom *a);
/* Host reference for one atom: D = A*B + C with inputs given per lane in the
 * atom's fragment layout (as doubles) — used by tests and the emulator.
 * RK_ERR_NOMEM when its scratch cannot be allocated (through the hook). */
rk_status rk_mma_atom_reference(const rk_mma_atom *a, const double *A, const double *B, const double *C,
                           double *D);
/* The same for a scaled atom: a_scale/b_scale hold each lane's i32 scale
 * word, opsel_a/opsel_b (0..3) pick its byte; each A (B) element is scaled by
 * the E8M0 value of the lane holding it. Also valid for an unscaled atom
 * when both scale arrays are NULL (plain rk_mma_atom_reference). */
rk_status rk_mma_atom_reference_scaled(const rk_mma_atom *a, const double *A, const double *B, const double *C,
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
