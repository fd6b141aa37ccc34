/* rocke — code-object analysis: per-kernel resources from the AMDGPU
 * metadata note of an HSACO (code object v4/v5), an occupancy model per
 * target, and instruction counts from the disassembly. Layer: analysis
 * (uses compile, target). */
#ifndef ROCKE_ANALYSIS_H
#define ROCKE_ANALYSIS_H

#include "rocke/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which limit sets the occupancy (ties go to the earlier one). */
typedef enum rk_occ_limit {
    RK_OCC_WAVES,     /* the hardware's waves per SIMD */
    RK_OCC_WG_SLOTS,  /* workgroups per CU (barrier slots) */
    RK_OCC_VGPR,      /* the VGPR file (unified VGPR+AGPR pool on gfx90a+) */
    RK_OCC_AGPR,      /* the AGPR file (targets with a separate pool) */
    RK_OCC_SGPR,      /* the SGPR file */
    RK_OCC_LDS        /* LDS per CU */
} rk_occ_limit;
const char *rk_occ_limit_name(rk_occ_limit l); /* "waves", "wg-slots", "VGPR", ... */

typedef struct rk_occupancy {
    uint32_t waves_per_wg;     /* ceil(workgroup size / wave size) */
    uint32_t vgpr_alloc;       /* VGPRs (+AGPRs) a wave holds after granule rounding */
    uint32_t lds_alloc;        /* LDS bytes a workgroup holds after granule rounding */
    /* each limit, as waves per SIMD (registers) or workgroups per CU */
    uint32_t max_waves_per_simd, waves_by_vgpr, waves_by_agpr, waves_by_sgpr;
    uint32_t wgs_by_waves, wgs_by_slots, wgs_by_lds;
    /* the result */
    uint32_t wgs_per_cu;
    uint32_t waves_per_cu;
    uint32_t waves_per_simd;   /* ceil(waves_per_cu / SIMDs per CU): the busiest SIMD */
    rk_occ_limit limited_by;
} rk_occupancy;

/* One kernel's resources as the code object declares them. */
typedef struct rk_kernel_resources {
    char name[128];
    uint32_t vgpr_count;       /* .vgpr_count: on gfx90a+ the unified total
                                  (arch VGPRs rounded to 4, plus AGPRs, when AGPRs are used) */
    uint32_t arch_vgpr_count;  /* from the <name>.num_vgpr symbol; 0 if stripped */
    uint32_t agpr_count;       /* .agpr_count */
    uint32_t sgpr_count;       /* .sgpr_count (incl. VCC, flat scratch, XNACK) */
    uint32_t lds_bytes;        /* .group_segment_fixed_size (static LDS) */
    uint32_t scratch_bytes;    /* .private_segment_fixed_size (per lane) */
    uint32_t vgpr_spill_count, sgpr_spill_count;
    uint32_t kernarg_size;     /* .kernarg_segment_size */
    uint32_t wavefront_size;
    uint32_t max_flat_workgroup_size;
    bool uses_dynamic_stack;
    bool has_occupancy;        /* false when the target is unknown */
    rk_occupancy occ;
} rk_kernel_resources;

#define RK_HSACO_MAX_KERNELS 16

typedef struct rk_hsaco_info {
    char target[96];           /* amdhsa.target: "amdgcn-amd-amdhsa--gfx942" */
    char arch[32];             /* "gfx942" (feature suffixes dropped) */
    const rk_target *t;        /* the catalog target used for occupancy, or NULL */
    uint32_t nkernels;
    rk_kernel_resources kernels[RK_HSACO_MAX_KERNELS];
} rk_hsaco_info;

/* Read an HSACO image (ELF + NT_AMDGPU_METADATA msgpack note). The code
 * object's own target picks the occupancy model; t_or_NULL is used when the
 * object names no target rocke knows. */
rk_status rk_analyze_hsaco(const void *data, size_t n, const rk_target *t_or_NULL, rk_hsaco_info *out);

/* Occupancy of one kernel on target t (AMD). wg_size 0 = the kernel's
 * max_flat_workgroup_size. Formulas and sources: docs/compile.md. */
rk_status rk_occupancy_compute(const rk_target *t, const rk_kernel_resources *r, uint32_t wg_size,
                               rk_occupancy *out);

/* Instruction counts from `llvm-objdump -d` (found via ROCKE_OBJDUMP, then
 * LLVM_OBJDUMP, PATH llvm-objdump-22 / llvm-objdump, /usr/lib/llvm-22/bin). */
typedef struct rk_isa_stats {
    uint32_t instructions;
    uint32_t mfma;                               /* v_mfma* / v_smfmac* */
    uint32_t buffer_load, buffer_load_lds, buffer_store;
    uint32_t global_load, global_store;
    uint32_t scratch_load, scratch_store;        /* spills land here */
    uint32_t ds_read, ds_write;                  /* ds_read_* or ds_load_*, ds_write_* or ds_store_* */
    uint32_t s_waitcnt, s_barrier;
    uint32_t valu, salu;                         /* other v_* / s_* */
} rk_isa_stats;
/* listing_or_NULL receives the disassembly (free with rk_string_free). */
rk_status rk_analyze_isa(const void *hsaco, size_t n, rk_isa_stats *out, char **listing_or_NULL);
/* Count instructions in a disassembly listing (no tools involved); the
 * padding after each s_endpgm is not counted. */
void rk_isa_count(const char *listing, rk_isa_stats *out);

#ifdef __cplusplus
}
#endif
#endif
