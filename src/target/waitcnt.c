/* rocke — AMD s_waitcnt immediates. gfx9 layout (gfx90a/942/950): vmcnt low
 * 4 bits in [3:0] and high 2 bits in [15:14], expcnt in [6:4], lgkmcnt in
 * [11:8]. -1 means "don't wait" (field maximum); larger requests clamp to the
 * maximum, never wrap (wrapping 16 to 0 would turn a partial wait into a
 * full drain). Layer: target. */
#include "rocke/target.h"
#include "../base/base_int.h"

static uint32_t clamp_field(int v, uint32_t max) {
    return (v < 0 || (uint32_t)v > max) ? max : (uint32_t)v;
}

uint32_t rk_waitcnt_encode(const rk_target *t, int vmcnt, int lgkmcnt, int expcnt) {
    RK_ASSERT(t->vendor == RK_VENDOR_AMD && (t->features & RK_FEAT_GFX9), "s_waitcnt encoding is for gfx9 targets");
    uint32_t vm_max = (1u << t->vmcnt_bits) - 1u;
    RK_ASSERT(vm_max <= 63, "gfx9 vmcnt field holds 6 bits");
    uint32_t vm = clamp_field(vmcnt, vm_max), lgkm = clamp_field(lgkmcnt, 15), exp = clamp_field(expcnt, 7);
    return (vm & 0xfu) | ((vm >> 4) << 14) | (exp << 4) | (lgkm << 8);
}
