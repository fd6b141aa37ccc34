/* rocke — AMDGPU lowering internals shared by amdgpu*.c: the fixed
 * declaration table order and the per-family entry points the op switch in
 * amdgpu.c calls. Layer: lower. */
#ifndef ROCKE_LOWER_AMDGPU_INT_H
#define ROCKE_LOWER_AMDGPU_INT_H

#include "lower_int.h"

/* The AMDGPU declaration table: declarations print in this order (ties by
 * text), whatever order the kernel uses them in. */
enum {
    AMD_D_WORKITEM_ID = LW_DECL_VENDOR, AMD_D_WORKGROUP_ID, AMD_D_DISPATCH_PTR, AMD_D_MBCNT_LO, AMD_D_MBCNT_HI,
    AMD_D_MATH, AMD_D_AMDGCN_MATH, AMD_D_CVT_FP8, AMD_D_CVT_SCALE,
    AMD_D_MAKE_RSRC, AMD_D_BUFFER_LOAD, AMD_D_BUFFER_STORE, AMD_D_BUFFER_LOAD_LDS, AMD_D_GLOBAL_LOAD_LDS,
    AMD_D_DS_READ_TR,
    AMD_D_READFIRSTLANE, AMD_D_READLANE, AMD_D_WRITELANE, AMD_D_BALLOT, AMD_D_DS_BPERMUTE, AMD_D_DS_SWIZZLE,
    AMD_D_UPDATE_DPP, AMD_D_MOV_DPP8, AMD_D_WAVE_REDUCE, AMD_D_PERMLANE, AMD_D_PERM, AMD_D_ALIGNBYTE, AMD_D_S_WQM,
    AMD_D_S_WAITCNT, AMD_D_S_BARRIER, AMD_D_SCHED_BARRIER, AMD_D_SCHED_GROUP_BARRIER, AMD_D_IGLP_OPT,
    AMD_D_S_SETPRIO, AMD_D_MFMA
};

/* amdgpu_mem.c: buffers, async LDS copies, transposing LDS reads */
void lw_amd_buffer_rsrc(lw_ctx *cx, const rk_op *op);
void lw_amd_buffer_load(lw_ctx *cx, const rk_op *op);
void lw_amd_buffer_store(lw_ctx *cx, const rk_op *op);
void lw_amd_async_buffer_lds(lw_ctx *cx, const rk_op *op);
void lw_amd_global_load_lds(lw_ctx *cx, const rk_op *op);
void lw_amd_async_copy(lw_ctx *cx, const rk_op *op);
void lw_amd_ds_read_tr(lw_ctx *cx, const rk_op *op);

/* amdgpu_lane.c: cross-lane data movement, votes, exec-mask assembly */
void lw_amd_lane(lw_ctx *cx, const rk_op *op);
/* %tmp = lane id within the wave (mbcnt), for shuffles */
const char *lw_amd_lane_id(lw_ctx *cx, const char *into);

/* amdgpu_mma.c: matrix atoms and 8-bit float conversions */
void lw_amd_mma(lw_ctx *cx, const rk_op *op);
void lw_amd_cvt(lw_ctx *cx, const rk_op *op);

#endif
