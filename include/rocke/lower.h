/* rocke — lowering kernel IR to LLVM IR text for a target (AMDGPU gfx90a,
 * gfx942, gfx950; NVPTX sm_80, sm_90, sm_90a) in one of the LLVM "flavors"
 * the emitted text must match.
 * Layer: lower (uses ir, target). */
#ifndef ROCKE_LOWER_H
#define ROCKE_LOWER_H

#include "rocke/ir.h"
#include "rocke/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which LLVM the text is written for. The flavors differ in the AMDGPU
 * datalayout (buffer-pointer field), the make.buffer.rsrc signature, the
 * fp8 MFMA operand types and a few declarations; a declaration shaped for
 * the wrong LLVM is a hard error there, so the flavor must match the
 * compiler that will read the text.
 *   llvm20  ROCm 7.0/7.1 (LLVM <= 20)
 *   llvm22  ROCm 7.2, Debian llvm-22 (LLVM 21-22) — the default
 *   llvm23  ROCm 7.13+ (LLVM >= 23) */
typedef enum rk_llvm_flavor { RK_LLVM20, RK_LLVM22, RK_LLVM23 } rk_llvm_flavor;

#define RK_LLVM_FLAVOR_DEFAULT RK_LLVM22

/* "llvm20", "llvm22", "llvm23" ("?" for an out-of-range value). */
const char *rk_llvm_flavor_name(rk_llvm_flavor f);
/* "llvm20, llvm22 (default), llvm23" */
const char *rk_llvm_flavor_names(void);
/* Parse a flavor name; unknown names fail with RK_ERR_INVALID and a message
 * listing the legal ones. */
rk_status rk_llvm_flavor_parse(const char *name, rk_llvm_flavor *out);
/* The flavor to use: the explicit name when not NULL, else the
 * ROCKE_LLVM_FLAVOR environment variable when set and non-empty, else
 * RK_LLVM22. A bad name (from either source) fails with a message naming
 * where it came from and the legal names. */
rk_status rk_llvm_flavor_resolve(const char *explicit_or_NULL, rk_llvm_flavor *out);

/* Lower kernel k to one LLVM module for target t. The kernel is verified
 * against the target first (rk_target_verify); illegal IR is refused with
 * the diagnostics in the message (RK_ERR_VERIFY), so LLVM never sees an op or
 * intrinsic it would abort on. Legal IR the target cannot express (e.g. a
 * 16-byte async LDS load before gfx950) fails with RK_ERR_UNSUPPORTED.
 * On success *out_ll holds the text, byte-identical for identical input;
 * free it with rk_string_free. */
rk_status rk_lower_llvm(const rk_kernel *k, const rk_target *t, rk_llvm_flavor f, char **out_ll);

/* What the launch of a lowered kernel has to know. */
typedef struct rk_lower_info {
    uint32_t lds_pool_bytes;   /* the LDS pool (every live tile.smem_alloc, packed; a 16-byte multiple); 0 = none */
    uint32_t lds_pool_align;   /* its alignment (16 ... 1024); 0 when there is no pool */
    /* Dynamic shared memory every launch must pass: the pool when the vendor
     * declares it external (NVIDIA: a pool over 48 KiB, which ptxas refuses
     * as static shared data, starts at offset 0 of the dynamic window), else
     * 0. The runtime adds it to what a launch asks for (docs/runtime.md). */
    uint32_t dyn_smem_min;
} rk_lower_info;

/* rk_lower_llvm that also fills *info (may be NULL). */
rk_status rk_lower_llvm_ex(const rk_kernel *k, const rk_target *t, rk_llvm_flavor f, char **out_ll,
                           rk_lower_info *info);
/* The same facts without lowering the body: the kernel is verified against t
 * and its LDS pool laid out exactly as rk_lower_llvm lays it out. */
rk_status rk_lower_query(const rk_kernel *k, const rk_target *t, rk_lower_info *info);
/* rk_lower_query's dyn_smem_min: the dynamic shared memory bytes every launch
 * of k built for t needs (0 for AMD targets and pools of at most 48 KiB). */
rk_status rk_lower_dyn_smem_bytes(const rk_kernel *k, const rk_target *t, uint32_t *out);

#ifdef __cplusplus
}
#endif
#endif
