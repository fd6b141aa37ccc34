/* rocke — the chips rocke compiles for, as data. Family fields are shared
 * through RK_CDNA_COMMON / RK_HOPPER_COMMON; facts are from the AMD CDNA ISA
 * guides, LLVM's AMDGPU/NVPTX backends and the CUDA programming guide.
 * Layer: target. */
#include <pthread.h>
#include <stdio.h>

#include "rocke/target.h"
#include "../base/base_int.h"

#define RK_CDNA_COMMON                                                          \
    .vendor = RK_VENDOR_AMD, .wave_size = 64, .max_workgroup = 1024,            \
    .triple = "amdgcn-amd-amdhsa", .llvm_features = "",                         \
    .buffer_word3 = 0x00027000u, .vmcnt_bits = 6, .simds_per_cu = 4,            \
    .waves_per_simd = 8, .vgprs_per_simd = 512, .agprs_per_simd = 256,          \
    .vgpr_granule = 8, .unified_vgpr_agpr = true, .max_sgprs = 102

static const rk_target gfx90a = {
    RK_CDNA_COMMON, .name = "gfx90a", .family = "CDNA2", .compute_units = 110, .cpu = "gfx90a",
    .features = RK_FEAT_AMD | RK_FEAT_GFX9,
    .lds_bytes = 65536, .lds_per_cu = 65536, .fp8 = RK_S_NONE, .bf8 = RK_S_NONE,
};
static const rk_target gfx942 = {
    RK_CDNA_COMMON, .name = "gfx942", .family = "CDNA3", .compute_units = 304, .cpu = "gfx942",
    .features = RK_FEAT_AMD | RK_FEAT_GFX9 | RK_FEAT_GFX940 | RK_FEAT_XF32,
    .lds_bytes = 65536, .lds_per_cu = 65536,
    .fp8 = RK_S_FP8E4M3FNUZ, .bf8 = RK_S_BF8E5M2FNUZ,
};
static const rk_target gfx950 = {
    RK_CDNA_COMMON, .name = "gfx950", .family = "CDNA4", .compute_units = 256, .cpu = "gfx950",
    .features = RK_FEAT_AMD | RK_FEAT_GFX9 | RK_FEAT_GFX940 | RK_FEAT_GFX950,
    .lds_bytes = 163840, .lds_per_cu = 163840,
    .fp8 = RK_S_FP8E4M3, .bf8 = RK_S_BF8E5M2,
};

#define RK_NV_COMMON                                                             \
    .vendor = RK_VENDOR_NVIDIA, .wave_size = 32, .max_workgroup = 1024,          \
    .triple = "nvptx64-nvidia-cuda",                                             \
    .fp8 = RK_S_FP8E4M3, .bf8 = RK_S_BF8E5M2, .regs_per_sm = 65536,              \
    .max_regs_per_thread = 255, .max_threads_per_sm = 2048

static const rk_target sm_80 = {
    RK_NV_COMMON, .name = "sm_80", .family = "Ampere", .compute_units = 108, .cpu = "sm_80", .sm_version = 80,
    .llvm_features = "+ptx80",
    .features = RK_FEAT_NV | RK_FEAT_SM80,
    .lds_bytes = 166912, .lds_per_cu = 167936, .max_blocks_per_sm = 32,
};
static const rk_target sm_90 = {
    RK_NV_COMMON, .name = "sm_90", .family = "Hopper", .compute_units = 132, .cpu = "sm_90", .sm_version = 90,
    .llvm_features = "+ptx84",   /* PTX 8.4: mma.sync m16n8k32 e4m3 / e5m2 */
    .features = RK_FEAT_NV | RK_FEAT_SM80 | RK_FEAT_SM90,
    .lds_bytes = 232448, .lds_per_cu = 233472, .max_blocks_per_sm = 32,
};
static const rk_target sm_90a = {
    RK_NV_COMMON, .name = "sm_90a", .family = "Hopper", .compute_units = 132, .cpu = "sm_90a", .sm_version = 90,
    .llvm_features = "+ptx84",
    .features = RK_FEAT_NV | RK_FEAT_SM80 | RK_FEAT_SM90 | RK_FEAT_SM90A,
    .lds_bytes = 232448, .lds_per_cu = 233472, .max_blocks_per_sm = 32,
};

static const rk_target *const targets[] = {&gfx90a, &gfx942, &gfx950, &sm_80, &sm_90, &sm_90a, NULL};

const rk_target *const *rk_targets(void) { return targets; }
const rk_target *rk_target_default(void) { return &gfx950; }

/* Built once (pthread_once): concurrent callers must not write the buffer
 * another thread is reading, even with the same bytes. */
static char target_names[256];
static pthread_once_t target_names_once = PTHREAD_ONCE_INIT;

static void fill_target_names(void) {
    size_t off = 0;
    for (const rk_target *const *t = targets; *t; t++)
        off += (size_t)snprintf(target_names + off, sizeof target_names - off, "%s%s%s", off ? ", " : "",
                                (*t)->name, *t == rk_target_default() ? " (default)" : "");
}

const char *rk_target_names(void) {
    pthread_once(&target_names_once, fill_target_names);
    return target_names;
}

const rk_target *rk_target_find(const char *name) {
    for (const rk_target *const *t = targets; name && *t; t++)
        if (strcmp((*t)->name, name) == 0) return *t;
    rk_fail(RK_ERR_INVALID, "unknown target '%s' (legal: %s)", name ? name : "(null)", rk_target_names());
    return NULL;
}
