/* rocke — which vendor lowering serves a target. Adding a vendor is one
 * extern and one case here; the core does not change. Layer: lower. */
#include "lower_int.h"

extern const lw_vendor lw_amdgpu;
extern const lw_vendor lw_nvptx;

const lw_vendor *lw_vendor_for(const rk_target *t) {
    switch (t->vendor) {
    case RK_VENDOR_AMD: return &lw_amdgpu;
    case RK_VENDOR_NVIDIA: return &lw_nvptx;
    }
    return NULL;
}
