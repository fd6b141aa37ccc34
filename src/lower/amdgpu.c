/* rocke — the AMDGPU vendor: its data (datalayout per LLVM flavor, address
 * spaces, syncscopes), kernel attributes, the per-op switch over every
 * vendor op, and the small families that need no file of their own:
 * work-item ids, math, barriers, waits, fences and scheduling hints.
 * Buffers/async copies are in amdgpu_mem.c, cross-lane in amdgpu_lane.c,
 * matrix atoms and fp8 conversions in amdgpu_mma.c. Layer: lower. */
#include <stdio.h>

#include "amdgpu_int.h"

/* ---- data --------------------------------------------------------------------------------- */
/* The AMDGPU datalayout per flavor. LLVM 21 widened the buffer-resource
 * pointer description (p8 gained an index width), LLVM 23 added the ELF
 * mangling field; the text must match the reading LLVM. */
static const char *const datalayouts[] = {
    [RK_LLVM20] = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-"
                  "p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-"
                  "v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9",
    [RK_LLVM22] = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-"
                  "p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-"
                  "v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9",
    [RK_LLVM23] = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-"
                  "p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-"
                  "v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9",
};
_Static_assert(RK_COUNTOF(datalayouts) == RK_LLVM23 + 1, "one datalayout per flavor");

static const char *datalayout(rk_llvm_flavor f) { return datalayouts[f]; }

/* ---- kernel attributes ----------------------------------------------------------------------- */
static const char *const sched_strategies[] = {"max-ilp", "max-memory-clause", "iterative-ilp", "iterative-minreg",
                                               "iterative-maxocc"};

/* An int or a two-int list attribute as "lo,hi"; NULL when absent. */
static bool int_pair(const rk_attr_val *v, int64_t *lo, int64_t *hi) {
    if (v->kind == RK_AK_INT) { *lo = *hi = v->u.i; return true; }
    if (v->kind == RK_AK_LIST && v->n == 2 && v->u.list[0].kind == RK_AK_INT && v->u.list[1].kind == RK_AK_INT) {
        *lo = v->u.list[0].u.i;
        *hi = v->u.list[1].u.i;
        return true;
    }
    return false;
}

static bool check_kernel(lw_ctx *cx) {
    const rk_attrs *a = rk_kernel_attrs(cx->k);
    const rk_attr_val *v;
    int64_t lo, hi;
    if ((v = rk_attrs_get(a, "max_workgroup_size")) &&
        (v->kind != RK_AK_INT || v->u.i < 1 || v->u.i > (int64_t)cx->t->max_workgroup))
        return lw_error(cx, NULL, RK_ERR_INVALID, "kernel attribute max_workgroup_size must be an integer in [1, %u] on %s",
                        cx->t->max_workgroup, cx->t->name);
    if ((v = rk_attrs_get(a, "waves_per_eu")) &&
        (!int_pair(v, &lo, &hi) || lo < 1 || lo > hi || hi > (int64_t)cx->t->waves_per_simd))
        return lw_error(cx, NULL, RK_ERR_INVALID,
                        "kernel attribute waves_per_eu must be w or [lo, hi] with 1 <= lo <= hi <= %u on %s",
                        cx->t->waves_per_simd, cx->t->name);
    if ((v = rk_attrs_get(a, "agpr_alloc"))) {
        bool ok = int_pair(v, &lo, &hi) && lo >= 0 && lo <= hi && hi <= 512;
        if (v->kind == RK_AK_STR) {
            unsigned x, y;
            char tail;
            ok = sscanf(v->u.s, "%u,%u%c", &x, &y, &tail) == 2 && x <= y && y <= 512;
        }
        if (!ok)
            return lw_error(cx, NULL, RK_ERR_INVALID,
                            "kernel attribute agpr_alloc must be n, [min, max] or \"min,max\" with 0 <= min <= max <= 512");
    }
    if ((v = rk_attrs_get(a, "scheduler_strategy"))) {
        bool ok = false;
        for (size_t i = 0; v->kind == RK_AK_STR && i < RK_COUNTOF(sched_strategies); i++)
            ok = ok || strcmp(v->u.s, sched_strategies[i]) == 0;
        if (!ok)
            return lw_error(cx, NULL, RK_ERR_INVALID,
                            "kernel attribute scheduler_strategy must be one of: max-ilp, max-memory-clause, "
                            "iterative-ilp, iterative-minreg, iterative-maxocc");
    }
    return true;
}

static void fn_attrs(lw_ctx *cx, rk_buf *out) {
    const rk_attrs *a = rk_kernel_attrs(cx->k);
    const rk_attr_val *v;
    int64_t lo, hi;
    /* The minimum is 1, not 64 as upstream writes even for wave32: a block
     * smaller than a wave (say 32 threads on wave64) is a legal launch, and
     * LLVM may assume the minimum holds. */
    rk_buf_printf(out, "\"amdgpu-flat-work-group-size\"=\"1,%lld\"", (long long)rk_kernel_max_workgroup_size(cx->k));
    if ((v = rk_attrs_get(a, "waves_per_eu")) && int_pair(v, &lo, &hi))
        rk_buf_printf(out, " \"amdgpu-waves-per-eu\"=\"%lld,%lld\"", (long long)lo, (long long)hi);
    if ((v = rk_attrs_get(a, "agpr_alloc"))) {
        if (v->kind == RK_AK_STR) rk_buf_printf(out, " \"amdgpu-agpr-alloc\"=\"%s\"", v->u.s);
        else if (int_pair(v, &lo, &hi))
            rk_buf_printf(out, " \"amdgpu-agpr-alloc\"=\"%lld,%lld\"", (long long)lo, (long long)hi);
    }
    if ((v = rk_attrs_get(a, "scheduler_strategy")) && v->kind == RK_AK_STR)
        rk_buf_printf(out, " \"amdgpu-sched-strategy\"=\"%s\"", v->u.s);
    rk_buf_puts(out, " \"uniform-work-group-size\"=\"true\" norecurse nounwind");
}

/* Without these, atomicrmw fadd on global memory becomes a CAS loop: the
 * markers promise the memory is ordinary device memory (not fine-grained
 * host memory), not remote, and that denormal handling may follow the
 * hardware atomic. */
static void fp_atomic_md(lw_ctx *cx, rk_buf *line) {
    const char *e = lw_md(cx, LW_MD_EMPTY);
    rk_buf_printf(line, ", !amdgpu.no.fine.grained.memory %s, !amdgpu.no.remote.memory %s, !amdgpu.ignore.denormal.mode %s",
                  e, e, e);
}

/* ---- work-item identity ----------------------------------------------------------------------- */
static const char *axis_of(const rk_op *op) { return lw_attr_str(op, "axis", "x"); }
static int axis_index(const rk_op *op) { return axis_of(op)[0] - 'x'; }

static void id_call(lw_ctx *cx, const rk_op *op, uint32_t order, const char *what) {
    const char *ax = axis_of(op);
    if (!lw_seen(cx, order, (uint32_t)axis_index(op), 0))
        lw_declare(cx, order, lw_printf(cx, "declare i32 @llvm.amdgcn.%s.id.%s()", what, ax));
    lw_ins(cx, "%v = call i32 @llvm.amdgcn.%s.id.%s()", op->out[0], what, ax);
}

/* The HSA dispatch packet holds workgroup_size_{x,y,z} as i16 at bytes
 * 4/6/8 and grid_size_{x,y,z} (in work-items) as i32 at 12/16/20. */
static const char *dispatch_field(lw_ctx *cx, unsigned off, const char *ty, unsigned align) {
    const char *dp = lw_tmp(cx, "dispatch"), *p = lw_tmp(cx, "gep"), *v = lw_tmp(cx, "packet");
    lw_declare(cx, AMD_D_DISPATCH_PTR, "declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()");
    lw_ins(cx, "%s = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()", dp);
    lw_ins(cx, "%s = getelementptr inbounds i8, ptr addrspace(4) %s, i64 %u", p, dp, off);
    lw_ins(cx, "%s = load %s, ptr addrspace(4) %s, align %u, !invariant.load %s", v, ty, p, align,
           lw_md(cx, LW_MD_EMPTY));
    return v;
}

static void block_dim(lw_ctx *cx, const rk_op *op) {
    const char *w = dispatch_field(cx, 4u + 2u * (unsigned)axis_index(op), "i16", 2);
    lw_ins(cx, "%v = zext i16 %s to i32", op->out[0], w);
}

/* blocks in the grid = ceil(grid_size / workgroup_size), without overflow */
static void grid_dim(lw_ctx *cx, const rk_op *op) {
    unsigned ax = (unsigned)axis_index(op);
    const char *g = dispatch_field(cx, 12u + 4u * ax, "i32", 4), *w16 = dispatch_field(cx, 4u + 2u * ax, "i16", 2);
    const char *w = lw_tmp(cx, "wg"), *q = lw_tmp(cx, "q"), *r = lw_tmp(cx, "r"), *nz = lw_tmp(cx, "nz"),
               *up = lw_tmp(cx, "up");
    lw_ins(cx, "%s = zext i16 %s to i32", w, w16);
    lw_ins(cx, "%s = udiv i32 %s, %s", q, g, w);
    lw_ins(cx, "%s = urem i32 %s, %s", r, g, w);
    lw_ins(cx, "%s = icmp ne i32 %s, 0", nz, r);
    lw_ins(cx, "%s = zext i1 %s to i32", up, nz);
    lw_ins(cx, "%v = add nuw i32 %s, %s", op->out[0], q, up);
}

/* ---- math -------------------------------------------------------------------------------------- */
static void math1(lw_ctx *cx, const rk_op *op, uint32_t order, const char *name) {
    if (!lw_seen(cx, order, op->code, 0)) lw_declare(cx, order, lw_printf(cx, "declare float @llvm.%s.f32(float)", name));
    lw_ins(cx, "%v = call float @llvm.%s.f32(%V)", op->out[0], name, op->in[0]);
}

/* tanh(x) = sign(x) * t(|x|): for |x| < 0.625 an odd polynomial
 * |x| + |x|^3 P(x^2) (least-squares fit in relative error, about 1 ulp),
 * else 1 - 2 / (2^(2 log2(e) |x|) + 1) with the hardware reciprocal. NaN
 * takes the second branch and stays NaN; +-inf gives +-1. */
static void tanh_f32(lw_ctx *cx, const rk_op *op) {
    static const double c[5] = {-0.3333328664302826, 0.13331513106822968, -0.05374465882778168,
                                0.020653124898672104, -0.0057189627550542355};
    const rk_type f = RK_T_F32;
    const char *bits = lw_tmp(cx, "tanh.bits"), *sign = lw_tmp(cx, "tanh.sign"), *absb = lw_tmp(cx, "tanh.absb");
    const char *ax = lw_tmp(cx, "tanh.ax"), *t2 = lw_tmp(cx, "tanh.t2"), *x3 = lw_tmp(cx, "tanh.x3");
    lw_declare(cx, AMD_D_MATH, "declare float @llvm.fmuladd.f32(float, float, float)");
    lw_declare(cx, AMD_D_MATH, "declare float @llvm.exp2.f32(float)");
    lw_declare(cx, AMD_D_AMDGCN_MATH, "declare float @llvm.amdgcn.rcp.f32(float)");
    lw_ins(cx, "%s = bitcast %V to i32", bits, op->in[0]);
    lw_ins(cx, "%s = and i32 %s, -2147483648", sign, bits);
    lw_ins(cx, "%s = and i32 %s, 2147483647", absb, bits);
    lw_ins(cx, "%s = bitcast i32 %s to float", ax, absb);
    lw_ins(cx, "%s = fmul float %s, %s", t2, ax, ax);
    const char *p = lw_float_lit(cx, f, c[4]);
    for (int i = 3; i >= 0; i--) {
        const char *n = lw_tmp(cx, "tanh.p");
        lw_ins(cx, "%s = call float @llvm.fmuladd.f32(float %s, float %s, float %s)", n, p, t2, lw_float_lit(cx, f, c[i]));
        p = n;
    }
    const char *small = lw_tmp(cx, "tanh.small"), *e = lw_tmp(cx, "tanh.e"), *ex = lw_tmp(cx, "tanh.exp"),
               *d = lw_tmp(cx, "tanh.d"), *rc = lw_tmp(cx, "tanh.rcp"), *big = lw_tmp(cx, "tanh.big"),
               *lt = lw_tmp(cx, "tanh.lt"), *mag = lw_tmp(cx, "tanh.mag"), *mb = lw_tmp(cx, "tanh.mb"),
               *sb = lw_tmp(cx, "tanh.sb");
    lw_ins(cx, "%s = fmul float %s, %s", x3, ax, t2);
    lw_ins(cx, "%s = call float @llvm.fmuladd.f32(float %s, float %s, float %s)", small, x3, p, ax);
    lw_ins(cx, "%s = fmul float %s, %s", e, ax, lw_float_lit(cx, f, 2.0 * 1.4426950408889634));
    lw_ins(cx, "%s = call float @llvm.exp2.f32(float %s)", ex, e);
    lw_ins(cx, "%s = fadd float %s, %s", d, ex, lw_float_lit(cx, f, 1.0));
    lw_ins(cx, "%s = call float @llvm.amdgcn.rcp.f32(float %s)", rc, d);
    lw_ins(cx, "%s = call float @llvm.fmuladd.f32(float %s, float %s, float %s)", big, lw_float_lit(cx, f, -2.0), rc,
           lw_float_lit(cx, f, 1.0));
    lw_ins(cx, "%s = fcmp olt float %s, %s", lt, ax, lw_float_lit(cx, f, 0.625));
    lw_ins(cx, "%s = select i1 %s, float %s, float %s", mag, lt, small, big);
    lw_ins(cx, "%s = bitcast float %s to i32", mb, mag);
    lw_ins(cx, "%s = or i32 %s, %s", sb, mb, sign);
    lw_ins(cx, "%v = bitcast i32 %s to float", op->out[0], sb);
}

/* ---- barriers, waits, hints ------------------------------------------------------------------------ */
static void waitcnt(lw_ctx *cx, int vm, int lgkm, int exp) {
    lw_declare(cx, AMD_D_S_WAITCNT, "declare void @llvm.amdgcn.s.waitcnt(i32)");
    lw_ins(cx, "call void @llvm.amdgcn.s.waitcnt(i32 %u)", rk_waitcnt_encode(cx->t, vm, lgkm, exp));
}

static void barrier(lw_ctx *cx) {
    lw_declare(cx, AMD_D_S_BARRIER, "declare void @llvm.amdgcn.s.barrier()");
    lw_ins(cx, "call void @llvm.amdgcn.s.barrier()");
}

/* The drain + s_barrier the hardware needs, wrapped in workgroup fences so
 * LLVM itself never moves LDS or global accesses across the barrier (the
 * intrinsics are memory-free to LLVM). At workgroup scope the fences cost
 * no extra wait in the default (non-tgsplit) mode: sync_lds_only still
 * leaves VMEM in flight. */
static void sync(lw_ctx *cx, int vm) {
    lw_ins(cx, "fence syncscope(\"workgroup\") release");
    waitcnt(cx, vm, 0, -1);
    barrier(cx);
    lw_ins(cx, "fence syncscope(\"workgroup\") acquire");
}

static void sync_half_block(lw_ctx *cx, const rk_op *op) {
    const char *c = lw_tmp(cx, "hb.cond"), *T = lw_label(cx, "hb_then"), *J = lw_label(cx, "hb_join");
    lw_ins(cx, "%s = icmp ne %V, 0", c, op->in[0]);
    lw_condbr(cx, c, T, J);
    lw_block(cx, T);
    barrier(cx);
    lw_br(cx, J);
    lw_block(cx, J);
}

static void fence(lw_ctx *cx, const rk_op *op) {
    /* seq_cst orders both ways: the op promises acquire and release */
    lw_ins(cx, "fence%s seq_cst", lw_syncscope(cx, lw_attr_str(op, "scope", NULL), LW_SCOPE_SYSTEM));
}

static void hint(lw_ctx *cx, uint32_t order, const char *decl, const char *call, const rk_op *op, const char *k1,
                 const char *k2, const char *k3) {
    lw_declare(cx, order, decl);
    if (k3) lw_ins(cx, call, lw_attr_int(op, k1, 0), lw_attr_int(op, k2, 0), lw_attr_int(op, k3, 0));
    else lw_ins(cx, call, lw_attr_int(op, k1, 0));
}

/* ---- the switch ----------------------------------------------------------------------------------------- */
static void lower_op(lw_ctx *cx, const rk_op *op) {
    switch (op->code) {
    case RK_OP_EXP2: math1(cx, op, AMD_D_MATH, "exp2"); break;
    case RK_OP_EXP2_FAST: math1(cx, op, AMD_D_AMDGCN_MATH, "amdgcn.exp2"); break;
    case RK_OP_EXP: math1(cx, op, AMD_D_MATH, "exp"); break;
    case RK_OP_LOG2: math1(cx, op, AMD_D_MATH, "log2"); break;
    case RK_OP_LOG: math1(cx, op, AMD_D_MATH, "log"); break;
    case RK_OP_SQRT: math1(cx, op, AMD_D_MATH, "sqrt"); break;
    case RK_OP_SIN: math1(cx, op, AMD_D_MATH, "sin"); break;
    case RK_OP_COS: math1(cx, op, AMD_D_MATH, "cos"); break;
    case RK_OP_RSQRT: math1(cx, op, AMD_D_AMDGCN_MATH, "amdgcn.rsq"); break;
    case RK_OP_RCP_FAST: math1(cx, op, AMD_D_AMDGCN_MATH, "amdgcn.rcp"); break;
    case RK_OP_RCP:   /* IEEE division, not the approximate v_rcp */
        lw_ins(cx, "%v = fdiv float %s, %v", op->out[0], lw_float_lit(cx, RK_T_F32, 1.0), op->in[0]);
        break;
    case RK_OP_TANH: tanh_f32(cx, op); break;
    case RK_OP_CVT_FP8_TO_F32: case RK_OP_CVT_BF8_TO_F32: case RK_OP_CVT_F32_TO_FP8: case RK_OP_CVT_F32_TO_BF8:
    case RK_OP_CVT_PK_F32_FP8X4: case RK_OP_CVT_PK_F32_BF8X4: case RK_OP_CVT_PK_FP8_F32X4:
    case RK_OP_CVT_PK_BF8_F32X4: case RK_OP_CVT_SCALEF32_PK_F32_FP8: case RK_OP_CVT_SCALEF32_PK_F32_BF8:
    case RK_OP_CVT_SCALEF32_PK_FP8_F32: case RK_OP_CVT_SCALEF32_PK_BF8_F32:
        lw_amd_cvt(cx, op);
        break;
    case RK_OP_THREAD_ID: id_call(cx, op, AMD_D_WORKITEM_ID, "workitem"); break;
    case RK_OP_BLOCK_ID: id_call(cx, op, AMD_D_WORKGROUP_ID, "workgroup"); break;
    case RK_OP_BLOCK_DIM: block_dim(cx, op); break;
    case RK_OP_GRID_DIM: grid_dim(cx, op); break;
    case RK_OP_LANE_ID: lw_amd_lane_id(cx, lw_val(cx, op->out[0])); break;
    case RK_OP_BUFFER_RSRC: lw_amd_buffer_rsrc(cx, op); break;
    case RK_OP_BUFFER_LOAD: case RK_OP_BUFFER_LOAD_F16: case RK_OP_BUFFER_LOAD_BF16: case RK_OP_BUFFER_LOAD_VN:
    case RK_OP_BUFFER_LOAD_VN_F16: case RK_OP_BUFFER_LOAD_VN_BF16:
        lw_amd_buffer_load(cx, op);
        break;
    case RK_OP_BUFFER_STORE: case RK_OP_BUFFER_STORE_F16: case RK_OP_BUFFER_STORE_BF16: case RK_OP_BUFFER_STORE_F32:
    case RK_OP_BUFFER_STORE_VN: case RK_OP_BUFFER_STORE_VN_F16: case RK_OP_BUFFER_STORE_VN_BF16:
    case RK_OP_BUFFER_STORE_VN_F32:
        lw_amd_buffer_store(cx, op);
        break;
    case RK_OP_ASYNC_BUFFER_LOAD_LDS: case RK_OP_ASYNC_BUFFER_LOAD_LDS_ADDR: lw_amd_async_buffer_lds(cx, op); break;
    case RK_OP_GLOBAL_LOAD_LDS: lw_amd_global_load_lds(cx, op); break;
    case RK_OP_ASYNC_COPY: lw_amd_async_copy(cx, op); break;
    case RK_OP_ASYNC_COMMIT_GROUP: case RK_OP_ASYNC_WAIT_GROUP:
        break;   /* tile.async_copy completes synchronously here: groups need no code */
    case RK_OP_DS_READ_TR16_B64: case RK_OP_DS_READ_TR16_B128: case RK_OP_DS_READ_TR_B8: lw_amd_ds_read_tr(cx, op); break;
    case RK_OP_READFIRSTLANE: case RK_OP_READLANE: case RK_OP_WRITELANE: case RK_OP_PIN_SGPR: case RK_OP_WAVE_BALLOT:
    case RK_OP_WAVE_ALL: case RK_OP_WAVE_ANY: case RK_OP_SHUFFLE: case RK_OP_DS_BPERMUTE: case RK_OP_DS_BPERMUTE_B64:
    case RK_OP_DS_SWIZZLE_XOR: case RK_OP_DS_SWIZZLE: case RK_OP_MOV_DPP: case RK_OP_DPP_XOR: case RK_OP_QUAD_PERM:
    case RK_OP_MOV_DPP8: case RK_OP_WAVE_REDUCE: case RK_OP_PERMLANE16: case RK_OP_PERMLANEX16: case RK_OP_PERMLANE64:
    case RK_OP_PERMLANE32_SWAP: case RK_OP_PERM_B32: case RK_OP_BYTE_PERM: case RK_OP_ALIGNBYTE: case RK_OP_S_WQM:
    case RK_OP_EXEC_AND_SAVEEXEC: case RK_OP_EXEC_OR_SAVEEXEC: case RK_OP_EXEC_XOR: case RK_OP_EXEC_OR:
        lw_amd_lane(cx, op);
        break;
    case RK_OP_SYNC: sync(cx, 0); break;
    case RK_OP_SYNC_LDS_ONLY: sync(cx, -1); break;
    case RK_OP_S_BARRIER_BARE: barrier(cx); break;
    case RK_OP_SYNC_HALF_BLOCK: sync_half_block(cx, op); break;
    case RK_OP_FENCE: fence(cx, op); break;
    case RK_OP_S_WAITCNT:
        waitcnt(cx, (int)lw_attr_int(op, "vmcnt", -1), (int)lw_attr_int(op, "lgkmcnt", -1),
                (int)lw_attr_int(op, "expcnt", -1));
        break;
    case RK_OP_S_WAIT_ASYNCCNT:
        break;   /* no ASYNC counter before gfx1250; the DMA forms here complete at vmcnt */
    case RK_OP_SCHED_BARRIER:
        hint(cx, AMD_D_SCHED_BARRIER, "declare void @llvm.amdgcn.sched.barrier(i32)",
             "call void @llvm.amdgcn.sched.barrier(i32 %l)", op, "mask", NULL, NULL);
        break;
    case RK_OP_SCHED_GROUP_BARRIER:
        hint(cx, AMD_D_SCHED_GROUP_BARRIER, "declare void @llvm.amdgcn.sched.group.barrier(i32, i32, i32)",
             "call void @llvm.amdgcn.sched.group.barrier(i32 %l, i32 %l, i32 %l)", op, "mask", "count", "group");
        break;
    case RK_OP_IGLP_OPT:
        hint(cx, AMD_D_IGLP_OPT, "declare void @llvm.amdgcn.iglp.opt(i32)", "call void @llvm.amdgcn.iglp.opt(i32 %l)",
             op, "level", NULL, NULL);
        break;
    case RK_OP_S_SETPRIO:
        hint(cx, AMD_D_S_SETPRIO, "declare void @llvm.amdgcn.s.setprio(i16)", "call void @llvm.amdgcn.s.setprio(i16 %l)",
             op, "level", NULL, NULL);
        break;
    case RK_OP_MMA: lw_amd_mma(cx, op); break;
    case RK_OP_GLOBAL_WAIT: lw_global_wait_llvm(cx, op); break;
    case RK_OP_LDMATRIX: case RK_OP_NAMED_BARRIER: case RK_OP_NAMED_BARRIER_ARRIVE: case RK_OP_WGMMA_DESC: case RK_OP_WGMMA: case RK_OP_WGMMA_FENCE:
    case RK_OP_WGMMA_COMMIT_GROUP: case RK_OP_WGMMA_WAIT_GROUP: case RK_OP_FENCE_PROXY_ASYNC: case RK_OP_MBARRIER_INIT:
    case RK_OP_MBARRIER_ARRIVE: case RK_OP_MBARRIER_ARRIVE_EXPECT_TX: case RK_OP_MBARRIER_WAIT: case RK_OP_TMA_LOAD_2D:
    case RK_OP_SETMAXNREG: case RK_OP_TMA_STORE_2D: case RK_OP_BULK_COMMIT_GROUP: case RK_OP_BULK_WAIT_GROUP:
    case RK_OP_WGMMA_RS: case RK_OP_CLUSTER_ID: case RK_OP_CLUSTER_DIM: case RK_OP_CLUSTER_RANK:
    case RK_OP_CLUSTER_ARRIVE: case RK_OP_CLUSTER_WAIT: case RK_OP_FENCE_MBARRIER_INIT: case RK_OP_MBARRIER_ARRIVE_CLUSTER:
    case RK_OP_TMA_LOAD_2D_MULTICAST: case RK_OP_TMA_LOAD_4D:
        rk_bug("an NVIDIA-only op reached the AMDGPU lowering (rk_target_verify rejects it)");
    LW_CORE_OPS_CASES
    case RK_OP_INVALID: case RK_OP__COUNT:
        rk_bug("the AMDGPU switch got an op the core lowers");
    }
}

const lw_vendor lw_amdgpu = {
    .name = "amdgpu",
    .kernel_cc = "amdgpu_kernel",
    .datalayout = datalayout,
    .as_num = {[RK_AS_GLOBAL] = 1, [RK_AS_CONSTANT] = 4, [RK_AS_LDS] = 3, [RK_AS_PRIVATE] = 5, [RK_AS_FLAT] = 0},
    .rsrc_type = "ptr addrspace(8)",
    .scope = {[LW_SCOPE_BLOCK] = "workgroup", [LW_SCOPE_DEVICE] = "agent", [LW_SCOPE_SYSTEM] = ""},
    .check_kernel = check_kernel,
    .fn_attrs = fn_attrs,
    .module_tail = NULL,
    .fp_atomic_md = fp_atomic_md,
    .lower_op = lower_op,
};
