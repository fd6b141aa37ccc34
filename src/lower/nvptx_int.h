/* rocke — NVPTX lowering internals shared by nvptx*.c: the fixed declaration
 * table order, small helpers and the per-family entry points the op switch in
 * nvptx.c calls. Layer: lower. */
#ifndef ROCKE_LOWER_NVPTX_INT_H
#define ROCKE_LOWER_NVPTX_INT_H

#include "lower_int.h"

/* The NVPTX declaration table: declarations print in this order (ties by
 * text), whatever order the kernel uses them in. NV_D_STAGE is not a
 * declaration but the warpgroup atom's shared staging array. */
enum {
    NV_D_SREG = LW_DECL_VENDOR, NV_D_MATH, NV_D_NVVM_MATH, NV_D_CVT_F8, NV_D_MASKED, NV_D_CP_ASYNC,
    NV_D_LDMATRIX, NV_D_SHFL, NV_D_VOTE, NV_D_ACTIVEMASK, NV_D_CTTZ, NV_D_BARRIER, NV_D_MBAR,
    NV_D_MMA, NV_D_WGMMA, NV_D_STAGE
};

/* Named barriers 8..15 are the warpgroup atom's (one per warpgroup of a
 * block of up to 1024 threads); kernels keep to ids 1..7 for their own. */
enum { NV_ATOM_BARRIER0 = 8 };

/* nvptx.c: `%t = call i32 @llvm.nvvm.read.ptx.sreg.<name>()` into a fresh temp. */
const char *lw_nv_sreg(lw_ctx *cx, const char *name);
/* The linear thread index tid.x + ntid.x * (tid.y + ntid.y * tid.z). */
const char *lw_nv_linear_tid(lw_ctx *cx);
/* bar.sync id, count (count 0: every thread of the block). */
void lw_nv_barrier(lw_ctx *cx, const char *id, const char *count);

/* nvptx_math.c: f32 math without libdevice (exp, log, log2, sin, cos, tanh) */
void lw_nv_math(lw_ctx *cx, const rk_op *op);

/* nvptx_mem.c: buffer views, cp.async, ldmatrix, mbarriers, TMA */
void lw_nv_buffer_rsrc(lw_ctx *cx, const rk_op *op);
void lw_nv_buffer_load(lw_ctx *cx, const rk_op *op);
void lw_nv_buffer_store(lw_ctx *cx, const rk_op *op);
void lw_nv_async_copy(lw_ctx *cx, const rk_op *op);
void lw_nv_ldmatrix(lw_ctx *cx, const rk_op *op);
void lw_nv_hopper_mem(lw_ctx *cx, const rk_op *op);
/* memref.global_wait: a loop of inline ld.acquire.<scope>.global loads. */
void lw_nv_global_wait(lw_ctx *cx, const rk_op *op);
/* ptr addrspace(3) text of flat element `idx` (an IR value) of an allocation. */
const char *lw_nv_smem_elem(lw_ctx *cx, rk_value smem, rk_value idx);

/* nvptx_lane.c: shuffles, votes, readlane/readfirstlane */
void lw_nv_lane(lw_ctx *cx, const rk_op *op);

/* nvptx_mma.c: mma.sync atoms, the warpgroup atom, tile.wgmma and its
 * descriptor/fence/commit/wait ops, 8-bit float conversions */
void lw_nv_mma(lw_ctx *cx, const rk_op *op);
void lw_nv_wgmma(lw_ctx *cx, const rk_op *op);
void lw_nv_cvt(lw_ctx *cx, const rk_op *op);

#endif
