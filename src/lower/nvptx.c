/* rocke — the NVPTX vendor (sm_80, sm_90, sm_90a): its data (datalayout per
 * LLVM flavor, address spaces, the buffer-view type, syncscopes), kernel
 * attributes and tensor-map parameters, the per-op switch over every vendor
 * op, and the small families: work-item ids, barriers and fences. Buffers,
 * cp.async, ldmatrix, mbarriers and TMA are in nvptx_mem.c, cross-lane ops in
 * nvptx_lane.c, matrix atoms, wgmma and fp8 in nvptx_mma.c, math in
 * nvptx_math.c. Layer: lower. */
#include <stdio.h>

#include "nvptx_int.h"

/* ---- data --------------------------------------------------------------------------------- */
/* LLVM 21 added the tensor-memory address space (p6) and LLVM 22 i256 to the
 * NVPTX layout; NVPTX does not reject an older string, but the text keeps to
 * what the reading LLVM itself writes. */
static const char *const datalayouts[] = {
    [RK_LLVM20] = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64",
    [RK_LLVM22] = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64",
    [RK_LLVM23] = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64",
};
_Static_assert(RK_COUNTOF(datalayouts) == RK_LLVM23 + 1, "one datalayout per flavor");

static const char *datalayout(rk_llvm_flavor f) { return datalayouts[f]; }

/* Static shared memory above 48 KiB is refused by ptxas; larger pools are
 * dynamic shared memory the launch sizes. */
enum { NV_STATIC_SMEM_MAX = 48 * 1024 };

/* ---- kernel attributes and parameters ----------------------------------------------------------- */
static bool is_tensormap(const rk_param *p) { return rk_attrs_bool(&p->attrs, "tensormap", false); }

/* A tensor map is a byval parameter (LLVM type `ptr`, not the pointer its
 * IR type names): only the TMA ops may read it (operand 0). */
typedef struct tm_use { const rk_kernel *k; const rk_op *bad; } tm_use;
static bool tm_scan(void *ud, rk_op *op, uint32_t depth) {
    (void)depth;
    tm_use *u = ud;
    for (uint32_t i = 0; i < op->nin && !u->bad; i++) {
        if ((op->code == RK_OP_TMA_LOAD_2D || op->code == RK_OP_TMA_LOAD_2D_MULTICAST || op->code == RK_OP_TMA_STORE_2D ||
             op->code == RK_OP_TMA_LOAD_4D) &&
            i == 0)
            continue;
        if (rk_value_kind_of(u->k, op->in[i]) != RK_VK_PARAM) continue;
        for (uint32_t p = 0; p < rk_kernel_nparams(u->k); p++) {
            const rk_param *pr = rk_kernel_param(u->k, p);
            if (rk_value_eq(pr->value, op->in[i]) && is_tensormap(pr)) u->bad = op;
        }
    }
    return !u->bad;
}

static bool check_kernel(lw_ctx *cx) {
    const rk_attrs *a = rk_kernel_attrs(cx->k);
    const rk_attr_val *v;
    if (strchr(rk_kernel_name(cx->k), '.'))
        return lw_error(cx, NULL, RK_ERR_INVALID, "kernel name '%s' contains '.', which PTX identifiers cannot; "
                        "use letters, digits and '_'", rk_kernel_name(cx->k));
    static const char *const amd_only[] = {"waves_per_eu", "agpr_alloc", "scheduler_strategy"};
    for (size_t i = 0; i < RK_COUNTOF(amd_only); i++)
        if (rk_attrs_get(a, amd_only[i]))
            return lw_error(cx, NULL, RK_ERR_INVALID,
                            "kernel attribute %s is an AMDGPU attribute; %s reads max_workgroup_size and "
                            "min_blocks_per_sm", amd_only[i], cx->t->name);
    if ((v = rk_attrs_get(a, "max_workgroup_size")) &&
        (v->kind != RK_AK_INT || v->u.i < 1 || v->u.i > (int64_t)cx->t->max_workgroup))
        return lw_error(cx, NULL, RK_ERR_INVALID, "kernel attribute max_workgroup_size must be an integer in [1, %u] on %s",
                        cx->t->max_workgroup, cx->t->name);
    if ((v = rk_attrs_get(a, "min_blocks_per_sm")) &&
        (v->kind != RK_AK_INT || v->u.i < 1 || v->u.i > (int64_t)cx->t->max_blocks_per_sm))
        return lw_error(cx, NULL, RK_ERR_INVALID, "kernel attribute min_blocks_per_sm must be an integer in [1, %u] on %s",
                        cx->t->max_blocks_per_sm, cx->t->name);
    bool any = false;
    for (uint32_t i = 0; i < rk_kernel_nparams(cx->k); i++) {
        const rk_param *p = rk_kernel_param(cx->k, i);
        if (!is_tensormap(p)) continue;
        any = true;
        if (rk_type_kind_of(cx->k, p->type) != RK_TK_PTR)
            return lw_error(cx, NULL, RK_ERR_INVALID, "parameter '%s' is marked tensormap but is %s; a tensor map is a "
                            "ptr<i8,constant> parameter", p->name, rk_type_name(cx->k, p->type));
    }
    tm_use u = {cx->k, NULL};
    if (any) ir_walk(rk_kernel_body(cx->k), tm_scan, &u, 0);
    if (u.bad)
        return lw_error(cx, u.bad, RK_ERR_INVALID, "a tensormap parameter is an opaque CUtensorMap: only "
                        "tile.tma_load_2d, tile.tma_load_2d_multicast, tile.tma_load_4d and tile.tma_store_2d (operand 0) may use it");
    return true;
}

static void fn_attrs(lw_ctx *cx, rk_buf *out) {
    int64_t minb = 0;
    rk_buf_printf(out, "\"nvvm.maxntid\"=\"%lld\"", (long long)rk_kernel_max_workgroup_size(cx->k));
    if (rk_attrs_int(rk_kernel_attrs(cx->k), "min_blocks_per_sm", &minb))
        rk_buf_printf(out, " \"nvvm.minctasm\"=\"%lld\"", (long long)minb);
    uint32_t cl[3];
    if (rk_kernel_cluster_dims(cx->k, cl) && cl[0] * cl[1] * cl[2] > 1)   /* .reqnctapercluster x, y, z */
        rk_buf_printf(out, " \"nvvm.cluster_dim\"=\"%u,%u,%u\"", cl[0], cl[1], cl[2]);
    rk_buf_puts(out, " norecurse nounwind");
}

/* A CUtensorMap travels by value in the parameter space; as a grid constant
 * its address is the parameter's own (cvta.param), which TMA reads. */
static const char *param_type(lw_ctx *cx, const rk_param *p) {
    (void)cx;
    return is_tensormap(p) ? "ptr byval([128 x i8]) align 64 \"nvvm.grid_constant\"" : NULL;
}

/* ---- work-item identity -------------------------------------------------------------------------- */
static const char *sreg_call(lw_ctx *cx, const char *into, const char *name) {
    lw_declare(cx, NV_D_SREG, lw_printf(cx, "declare i32 @llvm.nvvm.read.ptx.sreg.%s()", name));
    lw_ins(cx, "%s = call i32 @llvm.nvvm.read.ptx.sreg.%s()", into, name);
    return into;
}

const char *lw_nv_sreg(lw_ctx *cx, const char *name) { return sreg_call(cx, lw_tmp(cx, "sreg"), name); }

static void id_op(lw_ctx *cx, const rk_op *op, const char *reg) {
    sreg_call(cx, lw_val(cx, op->out[0]), lw_printf(cx, "%s.%s", reg, lw_attr_str(op, "axis", "x")));
}

const char *lw_nv_linear_tid(lw_ctx *cx) {
    const char *x = lw_nv_sreg(cx, "tid.x"), *y = lw_nv_sreg(cx, "tid.y"), *z = lw_nv_sreg(cx, "tid.z");
    const char *nx = lw_nv_sreg(cx, "ntid.x"), *ny = lw_nv_sreg(cx, "ntid.y");
    const char *a = lw_tmp(cx, "lin"), *b = lw_tmp(cx, "lin"), *c = lw_tmp(cx, "lin"), *d = lw_tmp(cx, "lin");
    lw_ins(cx, "%s = mul nuw nsw i32 %s, %s", a, ny, z);
    lw_ins(cx, "%s = add nuw nsw i32 %s, %s", b, a, y);
    lw_ins(cx, "%s = mul nuw nsw i32 %s, %s", c, nx, b);
    lw_ins(cx, "%s = add nuw nsw i32 %s, %s", d, c, x);
    return d;
}

/* ---- barriers and fences ---------------------------------------------------------------------------- */
/* bar.sync (aligned: every thread of a warp reaches the same barrier, as the
 * IR's convergence rules require). LLVM 20 spells the same instructions
 * barrier0 / barrier.sync.cnt. */
void lw_nv_barrier(lw_ctx *cx, const char *id, const char *count) {
    bool old = cx->flavor == RK_LLVM20;
    if (!count) {
        if (old) {
            lw_declare(cx, NV_D_BARRIER, "declare void @llvm.nvvm.barrier0()");
            lw_ins(cx, "call void @llvm.nvvm.barrier0()");
            return;
        }
        lw_declare(cx, NV_D_BARRIER, "declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)");
        lw_ins(cx, "call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 %s)", id);
        return;
    }
    const char *name = old ? "barrier.sync.cnt" : "barrier.cta.sync.aligned.count";
    lw_declare(cx, NV_D_BARRIER, lw_printf(cx, "declare void @llvm.nvvm.%s(i32, i32)", name));
    lw_ins(cx, "call void @llvm.nvvm.%s(i32 %s, i32 %s)", name, id, count);
}

static void named_barrier(lw_ctx *cx, const rk_op *op) {
    lw_nv_barrier(cx, lw_printf(cx, "%lld", (long long)lw_attr_int(op, "id", 1)),
                  lw_printf(cx, "%lld", (long long)lw_attr_int(op, "count", 32)));
}

/* bar.arrive id, count: this warp counts toward the barrier's completion
 * and runs on (the producer side of a named-barrier hand-off). LLVM 20 has
 * no intrinsic for it: the instruction itself. */
static void named_barrier_arrive(lw_ctx *cx, const rk_op *op) {
    const char *id = lw_printf(cx, "%lld", (long long)lw_attr_int(op, "id", 1));
    const char *count = lw_printf(cx, "%lld", (long long)lw_attr_int(op, "count", 32));
    if (cx->flavor == RK_LLVM20) {
        lw_ins(cx, "call void asm sideeffect \"bar.arrive $0, $1;\", \"r,r,~{memory}\"(i32 %s, i32 %s)", id, count);
        return;
    }
    lw_declare(cx, NV_D_BARRIER, "declare void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32, i32)");
    lw_ins(cx, "call void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32 %s, i32 %s)", id, count);
}

static void fence(lw_ctx *cx, const rk_op *op) {
    /* seq_cst: fence.sc.{cta,gpu,sys}, ordering both ways as the op promises */
    lw_ins(cx, "fence%s seq_cst", lw_syncscope(cx, lw_attr_str(op, "scope", NULL), LW_SCOPE_SYSTEM));
}

/* barrier.cluster.arrive is .release and barrier.cluster.wait .acquire by
 * default; relaxed drops the arrive's ordering (an arrive that only says
 * "this block has started"). Not .aligned: a warp may arrive divergently. */
static void cluster_barrier(lw_ctx *cx, const rk_op *op) {
    const char *name = op->code == RK_OP_CLUSTER_WAIT ? "wait" : lw_attr_bool(op, "relaxed", false) ? "arrive.relaxed" : "arrive";
    lw_declare(cx, NV_D_BARRIER, lw_printf(cx, "declare void @llvm.nvvm.barrier.cluster.%s()", name));
    lw_ins(cx, "call void @llvm.nvvm.barrier.cluster.%s()", name);
}

/* ---- the switch ----------------------------------------------------------------------------------------- */
static void lower_op(lw_ctx *cx, const rk_op *op) {
    switch (op->code) {
    case RK_OP_EXP2: case RK_OP_EXP2_FAST: case RK_OP_EXP: case RK_OP_LOG2: case RK_OP_LOG: case RK_OP_SQRT:
    case RK_OP_RSQRT: case RK_OP_RCP: case RK_OP_RCP_FAST: case RK_OP_TANH: case RK_OP_SIN: case RK_OP_COS:
        lw_nv_math(cx, op);
        break;
    case RK_OP_CVT_FP8_TO_F32: case RK_OP_CVT_BF8_TO_F32: case RK_OP_CVT_F32_TO_FP8: case RK_OP_CVT_F32_TO_BF8:
    case RK_OP_CVT_PK_F32_FP8X4: case RK_OP_CVT_PK_F32_BF8X4: case RK_OP_CVT_PK_FP8_F32X4: case RK_OP_CVT_PK_BF8_F32X4:
        lw_nv_cvt(cx, op);
        break;
    case RK_OP_THREAD_ID: id_op(cx, op, "tid"); break;
    case RK_OP_BLOCK_ID: id_op(cx, op, "ctaid"); break;
    case RK_OP_BLOCK_DIM: id_op(cx, op, "ntid"); break;
    case RK_OP_GRID_DIM: id_op(cx, op, "nctaid"); break;
    case RK_OP_LANE_ID: sreg_call(cx, lw_val(cx, op->out[0]), "laneid"); break;
    case RK_OP_BUFFER_RSRC: lw_nv_buffer_rsrc(cx, op); break;
    case RK_OP_BUFFER_LOAD: case RK_OP_BUFFER_LOAD_F16: case RK_OP_BUFFER_LOAD_BF16: case RK_OP_BUFFER_LOAD_VN:
    case RK_OP_BUFFER_LOAD_VN_F16: case RK_OP_BUFFER_LOAD_VN_BF16:
        lw_nv_buffer_load(cx, op);
        break;
    case RK_OP_BUFFER_STORE: case RK_OP_BUFFER_STORE_F16: case RK_OP_BUFFER_STORE_BF16: case RK_OP_BUFFER_STORE_F32:
    case RK_OP_BUFFER_STORE_VN: case RK_OP_BUFFER_STORE_VN_F16: case RK_OP_BUFFER_STORE_VN_BF16:
    case RK_OP_BUFFER_STORE_VN_F32:
        lw_nv_buffer_store(cx, op);
        break;
    case RK_OP_ASYNC_COPY: case RK_OP_ASYNC_COMMIT_GROUP: case RK_OP_ASYNC_WAIT_GROUP: lw_nv_async_copy(cx, op); break;
    case RK_OP_LDMATRIX: lw_nv_ldmatrix(cx, op); break;
    case RK_OP_READFIRSTLANE: case RK_OP_READLANE: case RK_OP_WAVE_BALLOT: case RK_OP_WAVE_ALL: case RK_OP_WAVE_ANY:
    case RK_OP_SHUFFLE:
        lw_nv_lane(cx, op);
        break;
    /* bar.sync orders shared and global memory among the block's threads:
     * the three flavours of block barrier are one instruction here */
    case RK_OP_SYNC: case RK_OP_SYNC_LDS_ONLY: case RK_OP_S_BARRIER_BARE: lw_nv_barrier(cx, "0", NULL); break;
    case RK_OP_NAMED_BARRIER: named_barrier(cx, op); break;
    case RK_OP_NAMED_BARRIER_ARRIVE: named_barrier_arrive(cx, op); break;
    case RK_OP_FENCE: fence(cx, op); break;
    case RK_OP_MMA: lw_nv_mma(cx, op); break;
    case RK_OP_WGMMA_DESC: case RK_OP_WGMMA: case RK_OP_WGMMA_FENCE: case RK_OP_WGMMA_COMMIT_GROUP:
    case RK_OP_WGMMA_WAIT_GROUP: case RK_OP_SETMAXNREG: case RK_OP_WGMMA_RS:
        lw_nv_wgmma(cx, op);
        break;
    case RK_OP_FENCE_PROXY_ASYNC: case RK_OP_MBARRIER_INIT: case RK_OP_MBARRIER_ARRIVE: case RK_OP_MBARRIER_ARRIVE_EXPECT_TX:
    case RK_OP_MBARRIER_WAIT: case RK_OP_TMA_LOAD_2D: case RK_OP_TMA_STORE_2D: case RK_OP_BULK_COMMIT_GROUP:
    case RK_OP_BULK_WAIT_GROUP: case RK_OP_FENCE_MBARRIER_INIT: case RK_OP_MBARRIER_ARRIVE_CLUSTER:
    case RK_OP_TMA_LOAD_2D_MULTICAST: case RK_OP_TMA_LOAD_4D:
        lw_nv_hopper_mem(cx, op);
        break;
    case RK_OP_GLOBAL_WAIT: lw_nv_global_wait(cx, op); break;
    case RK_OP_CLUSTER_ID: id_op(cx, op, "clusterid"); break;
    case RK_OP_CLUSTER_DIM: id_op(cx, op, "cluster.nctaid"); break;
    case RK_OP_CLUSTER_RANK: sreg_call(cx, lw_val(cx, op->out[0]), "cluster.ctarank"); break;
    case RK_OP_CLUSTER_ARRIVE: case RK_OP_CLUSTER_WAIT: cluster_barrier(cx, op); break;
    case RK_OP_CVT_SCALEF32_PK_F32_FP8: case RK_OP_CVT_SCALEF32_PK_F32_BF8: case RK_OP_CVT_SCALEF32_PK_FP8_F32:
    case RK_OP_CVT_SCALEF32_PK_BF8_F32: case RK_OP_ASYNC_BUFFER_LOAD_LDS: case RK_OP_ASYNC_BUFFER_LOAD_LDS_ADDR:
    case RK_OP_GLOBAL_LOAD_LDS: case RK_OP_DS_READ_TR16_B64: case RK_OP_DS_READ_TR16_B128: case RK_OP_DS_READ_TR_B8:
    case RK_OP_WRITELANE: case RK_OP_PIN_SGPR: case RK_OP_DS_BPERMUTE: case RK_OP_DS_BPERMUTE_B64:
    case RK_OP_DS_SWIZZLE_XOR: case RK_OP_DS_SWIZZLE: case RK_OP_MOV_DPP: case RK_OP_DPP_XOR: case RK_OP_QUAD_PERM:
    case RK_OP_MOV_DPP8: case RK_OP_WAVE_REDUCE: case RK_OP_PERMLANE16: case RK_OP_PERMLANEX16: case RK_OP_PERMLANE64:
    case RK_OP_PERMLANE32_SWAP: case RK_OP_PERM_B32: case RK_OP_BYTE_PERM: case RK_OP_ALIGNBYTE: case RK_OP_S_WQM:
    case RK_OP_EXEC_AND_SAVEEXEC: case RK_OP_EXEC_OR_SAVEEXEC: case RK_OP_EXEC_XOR: case RK_OP_EXEC_OR:
    case RK_OP_SYNC_HALF_BLOCK: case RK_OP_S_WAITCNT: case RK_OP_S_WAIT_ASYNCCNT: case RK_OP_SCHED_BARRIER:
    case RK_OP_SCHED_GROUP_BARRIER: case RK_OP_IGLP_OPT: case RK_OP_S_SETPRIO:
        rk_bug("an AMDGPU-only op reached the NVPTX lowering (rk_target_verify rejects it)");
    LW_CORE_OPS_CASES
    case RK_OP_INVALID: case RK_OP__COUNT:
        rk_bug("the NVPTX switch got an op the core lowers");
    }
}

const lw_vendor lw_nvptx = {
    .name = "nvptx",
    .kernel_cc = "ptx_kernel",
    .datalayout = datalayout,
    /* constant pointers are global memory read through the same path (a
     * readonly noalias parameter still becomes ld.global.nc) */
    .as_num = {[RK_AS_GLOBAL] = 1, [RK_AS_CONSTANT] = 1, [RK_AS_LDS] = 3, [RK_AS_PRIVATE] = 5, [RK_AS_FLAT] = 0},
    /* a buffer view: base pointer and its size in bytes (low 32 bits) */
    .rsrc_type = "{ ptr addrspace(1), i32 }",
    .scope = {[LW_SCOPE_BLOCK] = "block", [LW_SCOPE_DEVICE] = "device", [LW_SCOPE_SYSTEM] = ""},
    .check_kernel = check_kernel,
    .fn_attrs = fn_attrs,
    .module_tail = NULL,
    .fp_atomic_md = NULL,
    .lower_op = lower_op,
    .param_type = param_type,
    .static_lds_max = NV_STATIC_SMEM_MAX,
};
