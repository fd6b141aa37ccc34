/* rocke — the AMD occupancy model (no GPU needed). Per SIMD: waves limited
 * by the VGPR file (gfx90a+: one unified VGPR+AGPR pool, allocated in
 * granules), by the SGPR file and by the hardware maximum; per CU:
 * workgroups limited by those waves (x SIMDs / waves per workgroup), by LDS
 * and by the 16 workgroup (barrier) slots. Formulas and sources: docs/compile.md. Layer: analysis. */
#include "rocke/analysis.h"
#include "../base/base_int.h"

/* LDS is allocated in 128-dword (512-byte) blocks on GCN/CDNA (LLVM
 * AMDGPUAsmPrinter::getSIProgramInfo, "LDSAlignShift = 9"). */
#define LDS_GRANULE 512u
/* Workgroups per CU a multi-wave workgroup can have: barrier slots (LLVM
 * AMDGPUBaseInfo getMaxWorkGroupsPerCU, MaxBarriers = 16 on gfx9). */
#define WG_SLOTS 16u
/* AGPRs start at the arch VGPR count rounded to 4 (ACCUM_OFFSET is in
 * 4-register units: COMPUTE_PGM_RSRC3.ACCUM_OFFSET = offset / 4 - 1). */
#define ACCUM_GRANULE 4u

static const char *const names[] = {"waves", "wg-slots", "VGPR", "AGPR", "SGPR", "LDS"};

const char *rk_occ_limit_name(rk_occ_limit l) { return (unsigned)l < RK_COUNTOF(names) ? names[l] : "?"; }

static uint32_t round_up(uint32_t v, uint32_t g) { return g ? (v + g - 1) / g * g : v; }
static uint32_t min_u(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* SGPR-limited waves per SIMD on gfx8/gfx9 (800 SGPRs per SIMD): LLVM
 * AMDGPUBaseInfo getOccupancyWithNumSGPRs. */
static uint32_t waves_by_sgpr(uint32_t sgprs) {
    return sgprs <= 80 ? 10 : sgprs <= 88 ? 9 : sgprs <= 100 ? 8 : 7;
}

/* Registers one wave holds in the unified file: arch VGPRs rounded to the
 * accumulator offset granule, plus AGPRs, rounded to the allocation granule.
 * Without the arch count the metadata's .vgpr_count is that sum already. */
static uint32_t unified_regs(const rk_kernel_resources *r) {
    if (r->arch_vgpr_count && r->agpr_count) return round_up(r->arch_vgpr_count, ACCUM_GRANULE) + r->agpr_count;
    if (r->arch_vgpr_count) return r->arch_vgpr_count;
    return r->vgpr_count;
}

rk_status rk_occupancy_compute(const rk_target *t, const rk_kernel_resources *r, uint32_t wg_size,
                               rk_occupancy *out) {
    memset(out, 0, sizeof *out);
    if (!t || !r) return rk_fail(RK_ERR_INVALID, "rk_occupancy_compute: NULL target or resources");
    if (t->vendor != RK_VENDOR_AMD || !t->simds_per_cu || !t->vgprs_per_simd)
        return rk_fail(RK_ERR_UNSUPPORTED, "the occupancy model covers AMD targets, not %s", t->name);
    uint32_t wave = r->wavefront_size ? r->wavefront_size : t->wave_size;
    uint32_t wg = wg_size ? wg_size : r->max_flat_workgroup_size ? r->max_flat_workgroup_size : 256;
    uint32_t simds = t->simds_per_cu, max_w = t->waves_per_simd;
    out->waves_per_wg = (wg + wave - 1) / wave;
    out->max_waves_per_simd = max_w;

    /* registers: waves per SIMD */
    uint32_t g = t->vgpr_granule ? t->vgpr_granule : 8;
    if (t->unified_vgpr_agpr) {
        out->vgpr_alloc = round_up(unified_regs(r) ? unified_regs(r) : 1, g);
        out->waves_by_vgpr = min_u(max_w, t->vgprs_per_simd / out->vgpr_alloc);
        out->waves_by_agpr = max_w;
    } else {
        out->vgpr_alloc = round_up(r->vgpr_count ? r->vgpr_count : 1, g);
        out->waves_by_vgpr = min_u(max_w, t->vgprs_per_simd / out->vgpr_alloc);
        out->waves_by_agpr = r->agpr_count && t->agprs_per_simd
                                 ? min_u(max_w, t->agprs_per_simd / round_up(r->agpr_count, g)) : max_w;
    }
    out->waves_by_sgpr = min_u(max_w, waves_by_sgpr(r->sgpr_count));

    /* workgroups per CU: a CU holds (waves per SIMD x SIMDs) waves, and a
     * workgroup takes waves_per_wg of them (its waves may sit on any SIMD) */
    uint32_t n = out->waves_per_wg;
    struct { rk_occ_limit l; uint32_t wgs; } lim[6] = {
        {RK_OCC_WAVES, max_w * simds / n},
        {RK_OCC_WG_SLOTS, n > 1 ? WG_SLOTS : UINT32_MAX}, /* single-wave groups use no barrier */
        {RK_OCC_VGPR, out->waves_by_vgpr * simds / n},
        {RK_OCC_AGPR, out->waves_by_agpr * simds / n},
        {RK_OCC_SGPR, out->waves_by_sgpr * simds / n},
        {RK_OCC_LDS, UINT32_MAX},
    };
    if (r->lds_bytes) {
        out->lds_alloc = round_up(r->lds_bytes, LDS_GRANULE);
        lim[5].wgs = t->lds_per_cu / out->lds_alloc;
    }
    out->wgs_by_waves = lim[0].wgs;
    out->wgs_by_slots = lim[1].wgs;
    out->wgs_by_lds = lim[5].wgs;
    out->limited_by = RK_OCC_WAVES;
    out->wgs_per_cu = lim[0].wgs;
    for (int i = 1; i < 6; i++)
        if (lim[i].wgs < out->wgs_per_cu) {
            out->wgs_per_cu = lim[i].wgs;
            out->limited_by = lim[i].l;
        }
    out->waves_per_cu = out->wgs_per_cu * out->waves_per_wg;
    out->waves_per_simd = (out->waves_per_cu + simds - 1) / simds;
    return RK_OK;
}
