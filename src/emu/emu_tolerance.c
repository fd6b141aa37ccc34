/* rocke — how closely a GPU must agree with the emulator on a kernel (from
 * its ops) and the element-by-element comparison of a device's output with
 * the emulator's, for rocke run --check-emu. Layer: emu. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "emu_int.h"

typedef enum agree {
    AG_EXACT,    /* integer, move, memory, control or IEEE-rounded: the emulator computes the same bits */
    AG_APPROX,   /* a hardware approximation or a GPU math routine (about 2 ulp, docs/lowering.md) */
    AG_ORDER,    /* the device sums in an order (or precision) of its own: matrix units, float atomics */
    AG_FLOAT_ATOMIC   /* an atomic that is AG_ORDER when its element type is a float */
} agree;

/* Every op, no default: a new op must say how it agrees. */
static agree op_agreement(rk_opcode c) {
    switch (c) {
    case RK_OP_EXP2: case RK_OP_EXP2_FAST: case RK_OP_EXP: case RK_OP_LOG2: case RK_OP_LOG: case RK_OP_RSQRT:
    case RK_OP_RCP_FAST: case RK_OP_TANH: case RK_OP_SIN: case RK_OP_COS:
        return AG_APPROX;
    case RK_OP_MMA: case RK_OP_WGMMA: case RK_OP_WGMMA_RS: case RK_OP_REGISTER_P_FROM_QK_C:
        return AG_ORDER;
    case RK_OP_LDS_ATOMIC_ADD: case RK_OP_GLOBAL_ATOMIC_ADD: case RK_OP_GLOBAL_ATOMIC_ADD_F32:
    case RK_OP_GLOBAL_ATOMIC_ADD_PK_BF16: case RK_OP_GLOBAL_ATOMIC_ADD_PK_F16: case RK_OP_GLOBAL_ATOMIC:
        return AG_FLOAT_ATOMIC;
    /* IEEE arithmetic (fdiv, sqrt and rcp are correctly rounded in both lowerings), conversions with one
     * rounding, integer ops, data movement, memory, control flow, barriers */
    case RK_OP_INVALID: case RK_OP_CONSTANT: case RK_OP_CONSTANT_VEC: case RK_OP_ADD: case RK_OP_SUB: case RK_OP_MUL:
    case RK_OP_DIV: case RK_OP_MOD: case RK_OP_UDIV: case RK_OP_UMOD: case RK_OP_AND: case RK_OP_OR: case RK_OP_XOR:
    case RK_OP_NOT: case RK_OP_SHL: case RK_OP_LSHR: case RK_OP_ASHR: case RK_OP_SMAX: case RK_OP_SMIN:
    case RK_OP_UMAX: case RK_OP_UMIN: case RK_OP_UMUL_HI_I32: case RK_OP_CMP: case RK_OP_SELECT: case RK_OP_ZEXT:
    case RK_OP_SEXT: case RK_OP_TRUNC: case RK_OP_BITCAST: case RK_OP_FADD: case RK_OP_FSUB: case RK_OP_FMUL:
    case RK_OP_FDIV: case RK_OP_FNEG: case RK_OP_FABS: case RK_OP_FMA: case RK_OP_FMAX: case RK_OP_FMIN:
    case RK_OP_FMAX3: case RK_OP_FMIN3: case RK_OP_FCMP: case RK_OP_SITOFP: case RK_OP_UITOFP: case RK_OP_FPTOSI:
    case RK_OP_FPTOUI: case RK_OP_FPEXT: case RK_OP_FPTRUNC: case RK_OP_SQRT: case RK_OP_RCP:
    case RK_OP_CAST_TO_F32: case RK_OP_CAST_F32_TO: case RK_OP_TRUNC_F32_TO_F16: case RK_OP_TRUNC_F32_TO_BF16:
    case RK_OP_SITOFP_F32: case RK_OP_RINT_F32: case RK_OP_CVT_FP8_TO_F32: case RK_OP_CVT_BF8_TO_F32:
    case RK_OP_CVT_F32_TO_FP8: case RK_OP_CVT_F32_TO_BF8: case RK_OP_CVT_PK_F32_FP8X4: case RK_OP_CVT_PK_F32_BF8X4:
    case RK_OP_CVT_PK_FP8_F32X4: case RK_OP_CVT_PK_BF8_F32X4: case RK_OP_CVT_PK_I8_F32X4:
    case RK_OP_CVT_F32_TO_I8_SAT: case RK_OP_CVT_SCALEF32_PK_F32_FP8: case RK_OP_CVT_SCALEF32_PK_F32_BF8:
    case RK_OP_CVT_SCALEF32_PK_FP8_F32: case RK_OP_CVT_SCALEF32_PK_BF8_F32: case RK_OP_VADD: case RK_OP_VSUB:
    case RK_OP_VMUL: case RK_OP_VDIV: case RK_OP_VAND: case RK_OP_VOR: case RK_OP_VXOR: case RK_OP_VSHL:
    case RK_OP_VLSHR: case RK_OP_VSMAX: case RK_OP_VSMIN: case RK_OP_VMAX: case RK_OP_VMIN: case RK_OP_VFMA:
    case RK_OP_VFNEG: case RK_OP_VSUM: case RK_OP_VREDUCE_MAX: case RK_OP_VREDUCE_MIN: case RK_OP_VCMP:
    case RK_OP_VFCMP: case RK_OP_VSELECT: case RK_OP_VTRUNC: case RK_OP_VSEXT: case RK_OP_VZEXT:
    case RK_OP_VCAST_TO_F32: case RK_OP_VTRUNC_F32_TO: case RK_OP_VTRUNC_F32_TO_F16: case RK_OP_VBITCAST:
    case RK_OP_VEXTRACT: case RK_OP_VINSERT: case RK_OP_VSPLAT: case RK_OP_VPACK: case RK_OP_VCONCAT:
    case RK_OP_VSHUFFLE: case RK_OP_THREAD_ID: case RK_OP_BLOCK_ID: case RK_OP_BLOCK_DIM: case RK_OP_GRID_DIM:
    case RK_OP_CLUSTER_ID: case RK_OP_CLUSTER_DIM: case RK_OP_CLUSTER_RANK: case RK_OP_CLUSTER_ARRIVE:
    case RK_OP_CLUSTER_WAIT: case RK_OP_FENCE_MBARRIER_INIT: case RK_OP_MBARRIER_ARRIVE_CLUSTER:
    case RK_OP_TMA_LOAD_2D_MULTICAST: case RK_OP_TMA_LOAD_4D:
    case RK_OP_LANE_ID: case RK_OP_GLOBAL_LOAD: case RK_OP_GLOBAL_LOAD_TYPED: case RK_OP_GLOBAL_STORE:
    case RK_OP_GLOBAL_STORE_TYPED: case RK_OP_GLOBAL_PTR_ADD: case RK_OP_PTR_TO_INT: case RK_OP_COOP_GLOBAL_STORE:
    case RK_OP_SMEM_ALLOC:
    case RK_OP_SMEM_LOAD: case RK_OP_SMEM_LOAD_V4: case RK_OP_SMEM_STORE: case RK_OP_SMEM_STORE_DISTRIBUTED:
    case RK_OP_SMEM_ADDR_OF: case RK_OP_SMEM_PTR_ADD: case RK_OP_BUFFER_RSRC: case RK_OP_BUFFER_LOAD:
    case RK_OP_BUFFER_LOAD_F16: case RK_OP_BUFFER_LOAD_BF16: case RK_OP_BUFFER_STORE: case RK_OP_BUFFER_STORE_F16:
    case RK_OP_BUFFER_STORE_BF16: case RK_OP_BUFFER_STORE_F32: case RK_OP_ASYNC_BUFFER_LOAD_LDS:
    case RK_OP_ASYNC_BUFFER_LOAD_LDS_ADDR: case RK_OP_GLOBAL_LOAD_LDS: case RK_OP_ASYNC_COPY:
    case RK_OP_ASYNC_COMMIT_GROUP: case RK_OP_ASYNC_WAIT_GROUP: case RK_OP_DS_READ_TR16_B64:
    case RK_OP_DS_READ_TR16_B128: case RK_OP_DS_READ_TR_B8: case RK_OP_LDMATRIX: case RK_OP_READFIRSTLANE:
    case RK_OP_READLANE: case RK_OP_WRITELANE: case RK_OP_PIN_SGPR: case RK_OP_WAVE_BALLOT: case RK_OP_WAVE_ALL:
    case RK_OP_WAVE_ANY: case RK_OP_SHUFFLE: case RK_OP_DS_BPERMUTE: case RK_OP_DS_BPERMUTE_B64:
    case RK_OP_DS_SWIZZLE_XOR: case RK_OP_DS_SWIZZLE: case RK_OP_MOV_DPP: case RK_OP_DPP_XOR: case RK_OP_QUAD_PERM:
    case RK_OP_MOV_DPP8: case RK_OP_WAVE_REDUCE: case RK_OP_PERMLANE16: case RK_OP_PERMLANEX16:
    case RK_OP_PERMLANE64: case RK_OP_PERMLANE32_SWAP: case RK_OP_PERM_B32: case RK_OP_BYTE_PERM:
    case RK_OP_ALIGNBYTE: case RK_OP_S_WQM: case RK_OP_EXEC_AND_SAVEEXEC: case RK_OP_EXEC_OR_SAVEEXEC:
    case RK_OP_EXEC_XOR: case RK_OP_EXEC_OR: case RK_OP_SYNC: case RK_OP_SYNC_LDS_ONLY: case RK_OP_S_BARRIER_BARE:
    case RK_OP_SYNC_HALF_BLOCK: case RK_OP_NAMED_BARRIER: case RK_OP_NAMED_BARRIER_ARRIVE: case RK_OP_FENCE: case RK_OP_S_WAITCNT:
    case RK_OP_S_WAIT_ASYNCCNT: case RK_OP_SCHED_BARRIER: case RK_OP_SCHED_GROUP_BARRIER: case RK_OP_IGLP_OPT:
    case RK_OP_S_SETPRIO: case RK_OP_GLOBAL_ATOMIC_CAS: case RK_OP_GLOBAL_WAIT: case RK_OP_INLINE_ASM: case RK_OP_FOR: case RK_OP_IF:
    case RK_OP_IF_ELSE: case RK_OP_YIELD: case RK_OP_RETURN: case RK_OP_WGMMA_DESC: case RK_OP_WGMMA_FENCE:
    case RK_OP_WGMMA_COMMIT_GROUP: case RK_OP_WGMMA_WAIT_GROUP: case RK_OP_FENCE_PROXY_ASYNC:
    case RK_OP_MBARRIER_INIT: case RK_OP_MBARRIER_ARRIVE: case RK_OP_MBARRIER_ARRIVE_EXPECT_TX:
    case RK_OP_MBARRIER_WAIT: case RK_OP_TMA_LOAD_2D: case RK_OP_TMA_STORE_2D: case RK_OP_BULK_COMMIT_GROUP: case RK_OP_BULK_WAIT_GROUP:
    case RK_OP_SETMAXNREG: case RK_OP_GLOBAL_LOAD_VN: case RK_OP_GLOBAL_STORE_VN:
    case RK_OP_SMEM_LOAD_VN: case RK_OP_SMEM_LOAD_VN_F32: case RK_OP_SMEM_STORE_VN: case RK_OP_SMEM_STORE_VN_F32:
    case RK_OP_BUFFER_LOAD_VN: case RK_OP_BUFFER_LOAD_VN_F16: case RK_OP_BUFFER_LOAD_VN_BF16:
    case RK_OP_BUFFER_STORE_VN: case RK_OP_BUFFER_STORE_VN_F16: case RK_OP_BUFFER_STORE_VN_BF16:
    case RK_OP_BUFFER_STORE_VN_F32: case RK_OP__COUNT:
        return AG_EXACT;
    }
    return AG_EXACT;
}

typedef struct scan {
    const rk_kernel *k;
    bool seen[RK_OP__COUNT];
    uint32_t napprox, norder;
} scan;

/* An atomic's data is its last operand; a float one adds in arrival order. */
static bool float_atomic(const rk_kernel *k, const rk_op *op) {
    if (op->code == RK_OP_GLOBAL_ATOMIC_ADD_PK_BF16 || op->code == RK_OP_GLOBAL_ATOMIC_ADD_PK_F16 ||
        op->code == RK_OP_GLOBAL_ATOMIC_ADD_F32)
        return true;
    rk_type t = rk_value_type(k, op->in[op->nin - 1]);
    rk_type e = rk_type_elem(k, t);
    return rk_scalar_is_float(rk_type_scalar(e.id ? e : t));
}

static void walk(scan *s, const rk_region *r) {
    for (uint32_t i = 0; i < r->nops; i++) {
        const rk_op *op = r->ops[i];
        agree a = op_agreement(op->code);
        if (a == AG_FLOAT_ATOMIC) a = op->nin && float_atomic(s->k, op) ? AG_ORDER : AG_EXACT;
        if (a != AG_EXACT && !s->seen[op->code]) {
            s->seen[op->code] = true;
            if (a == AG_APPROX) s->napprox++;
            else s->norder++;
        }
        for (uint32_t j = 0; j < op->nreg; j++) walk(s, &op->regions[j]);
    }
}

rk_status rk_emu_tolerance_of(const rk_kernel *k, uint64_t reduce_len, rk_emu_tolerance *out) {
    if (!k || !out) return rk_fail(RK_ERR_INVALID, "rk_emu_tolerance_of: kernel and out must not be NULL");
    scan s = {.k = k};
    walk(&s, rk_kernel_body(k));
    memset(out, 0, sizeof *out);
    out->exact = !s.napprox && !s.norder;
    /* about 2 ulp each, then a sum and a division (softmax) or a product and an add (norms) before the output */
    out->approx_ulps = 8 * s.napprox;
    if (s.norder) out->order_ulps = (uint32_t)(reduce_len ? (reduce_len < 1u << 20 ? reduce_len : 1u << 20) : 64);
    if (out->exact) {
        snprintf(out->why, sizeof out->why, "exact: integer, IEEE-rounded and data-movement ops only");
        return RK_OK;
    }
    size_t off = 0;
    for (int c = 0; c < RK_OP__COUNT && off < sizeof out->why; c++)
        if (s.seen[c])
            off += (size_t)snprintf(out->why + off, sizeof out->why - off, "%s%s (%s)", off ? ", " : "",
                                    rk_opcode_name((rk_opcode)c),
                                    op_agreement((rk_opcode)c) == AG_APPROX ? "approximate on the device"
                                                                            : "summed in the device's order");
    return RK_OK;
}

/* ---- comparing ---------------------------------------------------------------------------------------- */
static double load(rk_scalar e, const uint8_t *p, uint64_t i) {
    switch (e) {
    case RK_S_I1: case RK_S_I8: return (double)(int8_t)p[i];
    case RK_S_I4: return (double)p[i];
    case RK_S_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case RK_S_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case RK_S_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case RK_S_F16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return rk_f16_to_f32(v); }
    case RK_S_BF16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return rk_bf16_to_f32(v); }
    case RK_S_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
    case RK_S_F64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
    case RK_S_FP8E4M3: return rk_fp8_to_f32(p[i], RK_FP8_E4M3);
    case RK_S_BF8E5M2: return rk_fp8_to_f32(p[i], RK_FP8_E5M2);
    case RK_S_FP8E4M3FNUZ: return rk_fp8_to_f32(p[i], RK_FP8_E4M3_FNUZ);
    case RK_S_BF8E5M2FNUZ: return rk_fp8_to_f32(p[i], RK_FP8_E5M2_FNUZ);
    case RK_S_NONE: case RK_S__COUNT: break;
    }
    return 0;
}

/* The distance between x and the next representable value away from zero
 * in a format with `mant` stored mantissa bits. */
static double ulp_at(double x, int mant) {
    int e;
    frexp(fabs(x), &e);
    return ldexp(1.0, e - 1 - mant);
}

static int mant_bits(rk_scalar e) {
    switch (e) {
    case RK_S_F16: return 10;
    case RK_S_BF16: return 7;
    case RK_S_F32: return 23;
    case RK_S_F64: return 52;
    case RK_S_FP8E4M3: case RK_S_FP8E4M3FNUZ: return 3;
    case RK_S_BF8E5M2: case RK_S_BF8E5M2FNUZ: return 2;
    case RK_S_NONE: case RK_S_I1: case RK_S_I4: case RK_S_I8: case RK_S_I16: case RK_S_I32: case RK_S_I64:
    case RK_S__COUNT: break;
    }
    return -1;   /* an integer */
}

rk_status rk_emu_compare(const rk_emu_tolerance *tol, rk_scalar elem, const void *dev, const void *emu, uint64_t n,
                         rk_emu_diff *out) {
    if (!tol || !out || (n && (!dev || !emu)))
        return rk_fail(RK_ERR_INVALID, "rk_emu_compare: tolerance, buffers and out must not be NULL");
    uint32_t bits = rk_scalar_bits(elem);
    if (elem == RK_S_NONE || elem >= RK_S__COUNT || !bits)
        return rk_fail(RK_ERR_INVALID, "rk_emu_compare: %d is not an element type", (int)elem);
    memset(out, 0, sizeof *out);
    out->total = n;
    const uint8_t *a = dev, *b = emu;
    size_t esz = bits < 8 ? 1 : bits / 8;
    int mant = mant_bits(elem);
    double scale = 0;   /* the tensor's largest |emulator value| */
    if (!tol->exact)
        for (uint64_t i = 0; i < n; i++) {
            double v = fabs(load(elem, b, i));
            if (v > scale && isfinite(v)) scale = v;
        }
    double wide = (tol->approx_ulps + tol->order_ulps) * ulp_at(scale, elem == RK_S_F64 ? 52 : 23) + FLT_MIN;
    for (uint64_t i = 0; i < n; i++) {
        double x = load(elem, a, i), y = load(elem, b, i);
        bool same_bits = !memcmp(a + i * esz, b + i * esz, esz);
        double d = fabs(x - y), bound = 0;
        bool ok = same_bits || (isnan(x) && isnan(y));
        if (!ok && !tol->exact) {
            if (mant < 0) bound = 1;
            else bound = wide + (mant < 23 ? ulp_at(fmax(fabs(x), fabs(y)), mant) : 0);
            ok = d <= bound;
        }
        if (!isnan(d) && d > out->max_abs_diff) out->max_abs_diff = d;
        if (ok) continue;
        if (!out->count++) {
            out->first = i;
            out->got = x;
            out->want = y;
            out->bound = bound;
        }
    }
    return RK_OK;
}
