/* rocke tests — every op of the table through its typed builder: each row's
 * rk_build_<fn> exists (a table of them, made from ops.def, fails to
 * compile otherwise), a switch without default builds a minimal valid use of
 * every opcode (a new row fails to compile until it has a case), the op
 * lands exactly once, and the verifier accepts the kernel for a target that
 * has the op's features. Then the sticky-error contract. Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ir/ir_int.h"
#include "support/op_samples.h"

/* ---- every row names a builder that exists ------------------------------------------------- */
typedef void (*any_fn)(void);
#define BUILDER_FOR(fn) (any_fn)rk_##fn
#define BUILDER(fn) (any_fn)rk_build_##fn
/* regions open with rk_<fn>; scf.yield is the closing calls' part */
#define RK_OP(E, name, fn, nin, nout, nreg, rule, ...) [RK_OP_##E] = PICK_##rule(fn),
#define PICK_R_FOR(fn) BUILDER_FOR(fn)
#define PICK_R_IF(fn) BUILDER_FOR(fn)
#define PICK_R_YIELD(fn) (any_fn)rk_for_end
#define PICK_R_SAME BUILDER
#define PICK_R_SIG BUILDER
#define PICK_R_CMP BUILDER
#define PICK_R_SELECT BUILDER
#define PICK_R_CONST BUILDER
#define PICK_R_CONST_VEC BUILDER
#define PICK_R_WIDEN BUILDER
#define PICK_R_NARROW BUILDER
#define PICK_R_BITCAST BUILDER
#define PICK_R_VREDUCE BUILDER
#define PICK_R_VCMP BUILDER
#define PICK_R_VSELECT BUILDER
#define PICK_R_VEXTRACT BUILDER
#define PICK_R_VINSERT BUILDER
#define PICK_R_VSPLAT BUILDER
#define PICK_R_VPACK BUILDER
#define PICK_R_VCONCAT BUILDER
#define PICK_R_VSHUFFLE BUILDER
#define PICK_R_GLOAD BUILDER
#define PICK_R_GSTORE BUILDER
#define PICK_R_PTR_ADD BUILDER
#define PICK_R_COOP_STORE BUILDER
#define PICK_R_SMEM_ALLOC BUILDER
#define PICK_R_SMEM_LOAD BUILDER
#define PICK_R_SMEM_STORE BUILDER
#define PICK_R_SMEM_STORE_DIST BUILDER
#define PICK_R_LDS_ATOMIC BUILDER
#define PICK_R_BLOAD BUILDER
#define PICK_R_BSTORE BUILDER
#define PICK_R_ASYNC_LDS BUILDER
#define PICK_R_ASYNC_COPY BUILDER
#define PICK_R_GATOMIC BUILDER
#define PICK_R_MMA BUILDER
#define PICK_R_ASM BUILDER
static const any_fn builders[RK_OP__COUNT] = {
#include "rocke/ops.def"
};

static void test_every_row_has_a_builder(void **state) {
    (void)state;
    for (int c = 1; c < RK_OP__COUNT; c++)
        if (!builders[c]) fail_msg("%s has no builder", rk_opcode_name((rk_opcode)c));
    /* the rule list above covers every rule */
    static const char *const rules[] = {
#define R(r) #r,
        RK_RULES(R)
#undef R
    };
    assert_int_equal(RK_COUNTOF(rules), RK_RULE__COUNT);
}

/* ---- one use of every op --------------------------------------------------------------------- */
typedef struct fx {
    rk_kernel *k;
    rk_value i1, i8, i16, i32, j32, i64, j64, f16, bf16, f32, g32, f64, fp8, bf8, zero;
    rk_value pf16, pbf16, pf32, pi32, pi8, tmap;
    rk_value v2f16, v2bf16, v2f32, v4f16, v4bf16, v4f32, w4f32, v16f32, v4i32, w4i32, v4i8, v4fp8, v4bf8, v4i1;
    rk_value s_f32, s_f16, s_i32, s_i8, s_f16x2d, s_bars, s_tile;
    rk_value rsrc;
} fx;

static rk_value param(fx *x, const char *name, rk_type t) { return rk_add_param(x->k, name, t, NULL); }
static rk_value gptr(fx *x, const char *name, rk_type e) {
    return param(x, name, rk_type_ptr(x->k, e, RK_AS_GLOBAL));
}
static rk_type vt(fx *x, rk_type e, uint32_t n) { return rk_type_vec(x->k, e, n); }
static rk_value vload(fx *x, rk_value p, uint32_t n) { return rk_load_global(x->k, p, x->zero, n); }
static rk_value alloc(fx *x, rk_type e, uint32_t d0, uint32_t d1) {
    const uint32_t dims[] = {d0, d1};
    const rk_smem_alloc_opts o = {.align = RK_SOME(128)};
    return rk_build_smem_alloc_ex(x->k, e, dims, d1 ? 2 : 1, &o);
}

static fx fixture(rk_opcode code) {
    char name[96];
    snprintf(name, sizeof name, "use_%s", rk_op_info_of(code)->fn);
    fx x = {.k = rk_kernel_new(name)};
    rk_kernel *k = x.k;
    x.i1 = param(&x, "i1", RK_T_I1);
    x.i8 = param(&x, "i8", RK_T_I8);
    x.i16 = param(&x, "i16", RK_T_I16);
    x.i32 = param(&x, "i32", RK_T_I32);
    x.j32 = param(&x, "j32", RK_T_I32);
    x.i64 = param(&x, "i64", RK_T_I64);
    x.j64 = param(&x, "j64", RK_T_I64);
    x.f16 = param(&x, "f16", RK_T_F16);
    x.bf16 = param(&x, "bf16", RK_T_BF16);
    x.f32 = param(&x, "f32", RK_T_F32);
    x.g32 = param(&x, "g32", RK_T_F32);
    x.f64 = param(&x, "f64", RK_T_F64);
    x.pf16 = gptr(&x, "pf16", RK_T_F16);
    x.pbf16 = gptr(&x, "pbf16", RK_T_BF16);
    x.pf32 = gptr(&x, "pf32", RK_T_F32);
    x.pi32 = gptr(&x, "pi32", RK_T_I32);
    x.pi8 = gptr(&x, "pi8", RK_T_I8);
    rk_value pfp8 = gptr(&x, "pfp8", RK_T_FP8E4M3), pbf8 = gptr(&x, "pbf8", RK_T_BF8E5M2);
    const rk_param_abi tm = {.tensormap = true};
    x.tmap = rk_add_param(k, "tmap", rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), &tm);
    x.zero = rk_const_i32(k, 0);
    x.fp8 = vload(&x, pfp8, 1);
    x.bf8 = vload(&x, pbf8, 1);
    x.v2f16 = vload(&x, x.pf16, 2);
    x.v2bf16 = vload(&x, x.pbf16, 2);
    x.v2f32 = vload(&x, x.pf32, 2);
    x.v4f16 = vload(&x, x.pf16, 4);
    x.v4bf16 = vload(&x, x.pbf16, 4);
    x.v4f32 = vload(&x, x.pf32, 4);
    x.w4f32 = vload(&x, x.pf32, 4);
    x.v16f32 = vload(&x, x.pf32, 16);
    x.v4i32 = vload(&x, x.pi32, 4);
    x.w4i32 = vload(&x, x.pi32, 4);
    x.v4i8 = vload(&x, x.pi8, 4);
    x.v4fp8 = vload(&x, pfp8, 4);
    x.v4bf8 = vload(&x, pbf8, 4);
    x.v4i1 = rk_build_vcmp(k, "lt", x.v4i32, x.w4i32);
    x.s_f32 = alloc(&x, RK_T_F32, 256, 0);
    x.s_f16 = alloc(&x, RK_T_F16, 256, 0);
    x.s_i32 = alloc(&x, RK_T_I32, 256, 0);
    x.s_i8 = alloc(&x, RK_T_I8, 256, 0);
    x.s_f16x2d = alloc(&x, RK_T_F16, 64, 4);
    x.s_bars = alloc(&x, RK_T_I64, 2, 0);
    x.s_tile = alloc(&x, RK_T_F32, 2048, 0);
    x.rsrc = rk_build_buffer_rsrc(k, x.pf32, x.i32);
    return x;
}

/* Build one use of `code` in x's kernel; returns a result (poison for ops
 * without one). */
static rk_value use(fx *x, rk_opcode code) {
    rk_kernel *k = x->k;
    rk_value r = {0}, out[2];
    const rk_value *z = &x->zero;
    switch (code) {
    case RK_OP_INVALID: case RK_OP__COUNT: break;
    case RK_OP_CONSTANT: r = rk_build_constant(k, RK_T_I32, 7); break;
    case RK_OP_CONSTANT_VEC: r = rk_build_constant_vec(k, vt(x, RK_T_F32, 4), 0.5); break;
    case RK_OP_ADD: r = rk_build_add(k, x->i32, x->j32); break;
    case RK_OP_SUB: r = rk_build_sub(k, x->i32, x->j32); break;
    case RK_OP_MUL: r = rk_build_mul(k, x->i32, x->j32); break;
    case RK_OP_DIV: r = rk_build_div(k, x->i32, x->j32); break;
    case RK_OP_MOD: r = rk_build_mod(k, x->i32, x->j32); break;
    case RK_OP_UDIV: r = rk_build_udiv(k, x->i32, x->j32); break;
    case RK_OP_UMOD: r = rk_build_umod(k, x->i32, x->j32); break;
    case RK_OP_AND: r = rk_build_and(k, x->i32, x->j32); break;
    case RK_OP_OR: r = rk_build_or(k, x->i32, x->j32); break;
    case RK_OP_XOR: r = rk_build_xor(k, x->i32, x->j32); break;
    case RK_OP_NOT: r = rk_build_not(k, x->i32); break;
    case RK_OP_SHL: r = rk_build_shl(k, x->i32, x->j32); break;
    case RK_OP_LSHR: r = rk_build_lshr(k, x->i32, x->j32); break;
    case RK_OP_ASHR: r = rk_build_ashr(k, x->i32, x->j32); break;
    case RK_OP_SMAX: r = rk_build_smax(k, x->i32, x->j32); break;
    case RK_OP_SMIN: r = rk_build_smin(k, x->i32, x->j32); break;
    case RK_OP_UMAX: r = rk_build_umax(k, x->i32, x->j32); break;
    case RK_OP_UMIN: r = rk_build_umin(k, x->i32, x->j32); break;
    case RK_OP_UMUL_HI_I32: r = rk_build_umul_hi_i32(k, x->i32, x->j32); break;
    case RK_OP_CMP: r = rk_build_cmp(k, "ult", x->i32, x->j32); break;
    case RK_OP_SELECT: r = rk_build_select(k, x->i1, x->f32, x->g32); break;
    case RK_OP_ZEXT: r = rk_build_zext(k, x->i32, RK_T_I64); break;
    case RK_OP_SEXT: r = rk_build_sext(k, x->i8, RK_T_I32); break;
    case RK_OP_TRUNC: r = rk_build_trunc(k, x->i64, RK_T_I16); break;
    case RK_OP_BITCAST: r = rk_build_bitcast(k, x->f32, RK_T_I32); break;
    case RK_OP_FADD: r = rk_build_fadd(k, x->f32, x->g32); break;
    case RK_OP_FSUB: r = rk_build_fsub(k, x->f32, x->g32); break;
    case RK_OP_FMUL: r = rk_build_fmul(k, x->f32, x->g32); break;
    case RK_OP_FDIV: r = rk_build_fdiv(k, x->f32, x->g32); break;
    case RK_OP_FNEG: r = rk_build_fneg(k, x->f16); break;
    case RK_OP_FABS: r = rk_build_fabs(k, x->f64); break;
    case RK_OP_FMA: r = rk_build_fma(k, x->f32, x->g32, x->f32); break;
    case RK_OP_FMAX: r = rk_build_fmax(k, x->f32, x->g32); break;
    case RK_OP_FMIN: r = rk_build_fmin(k, x->f32, x->g32); break;
    case RK_OP_FMAX3: r = rk_build_fmax3(k, x->f32, x->g32, x->f32); break;
    case RK_OP_FMIN3: r = rk_build_fmin3(k, x->f32, x->g32, x->f32); break;
    case RK_OP_FCMP: r = rk_build_fcmp(k, "une", x->f32, x->g32); break;
    case RK_OP_SITOFP: r = rk_build_sitofp(k, x->i32, RK_T_F32); break;
    case RK_OP_UITOFP: r = rk_build_uitofp(k, x->i64, RK_T_F64); break;
    case RK_OP_FPTOSI: r = rk_build_fptosi(k, x->f32, RK_T_I32); break;
    case RK_OP_FPTOUI: r = rk_build_fptoui(k, x->f32, RK_T_I64); break;
    case RK_OP_FPEXT: r = rk_build_fpext(k, x->f32, RK_T_F64); break;
    case RK_OP_FPTRUNC: r = rk_build_fptrunc(k, x->f64, RK_T_F32); break;
    case RK_OP_EXP2: r = rk_build_exp2(k, x->f32); break;
    case RK_OP_EXP2_FAST: r = rk_build_exp2_fast(k, x->f32); break;
    case RK_OP_EXP: r = rk_build_exp(k, x->f32); break;
    case RK_OP_LOG2: r = rk_build_log2(k, x->f32); break;
    case RK_OP_LOG: r = rk_build_log(k, x->f32); break;
    case RK_OP_SQRT: r = rk_build_sqrt(k, x->f32); break;
    case RK_OP_RSQRT: r = rk_build_rsqrt(k, x->f32); break;
    case RK_OP_RCP: r = rk_build_rcp(k, x->f32); break;
    case RK_OP_RCP_FAST: r = rk_build_rcp_fast(k, x->f32); break;
    case RK_OP_TANH: r = rk_build_tanh(k, x->f32); break;
    case RK_OP_SIN: r = rk_build_sin(k, x->f32); break;
    case RK_OP_COS: r = rk_build_cos(k, x->f32); break;
    case RK_OP_CAST_TO_F32: r = rk_build_cast_to_f32(k, x->bf16); break;
    case RK_OP_CAST_F32_TO: r = rk_build_cast_f32_to(k, x->f32, RK_T_F16); break;
    case RK_OP_TRUNC_F32_TO_F16: r = rk_build_trunc_f32_to_f16(k, x->f32); break;
    case RK_OP_TRUNC_F32_TO_BF16: r = rk_build_trunc_f32_to_bf16(k, x->f32); break;
    case RK_OP_SITOFP_F32: r = rk_build_sitofp_f32(k, x->i32); break;
    case RK_OP_RINT_F32: r = rk_build_rint_f32(k, x->f32); break;
    case RK_OP_CVT_FP8_TO_F32: r = rk_build_cvt_fp8_to_f32(k, x->fp8); break;
    case RK_OP_CVT_BF8_TO_F32: r = rk_build_cvt_bf8_to_f32(k, x->bf8); break;
    case RK_OP_CVT_F32_TO_FP8: r = rk_build_cvt_f32_to_fp8(k, x->f32, RK_T_FP8E4M3); break;
    case RK_OP_CVT_F32_TO_BF8: r = rk_build_cvt_f32_to_bf8(k, x->f32, RK_T_BF8E5M2); break;
    case RK_OP_CVT_PK_F32_FP8X4: r = rk_build_cvt_pk_f32_fp8x4(k, x->v4fp8); break;
    case RK_OP_CVT_PK_F32_BF8X4: r = rk_build_cvt_pk_f32_bf8x4(k, x->v4bf8); break;
    case RK_OP_CVT_PK_FP8_F32X4: r = rk_build_cvt_pk_fp8_f32x4(k, x->v4f32, vt(x, RK_T_FP8E4M3, 4)); break;
    case RK_OP_CVT_PK_BF8_F32X4: r = rk_build_cvt_pk_bf8_f32x4(k, x->v4f32, vt(x, RK_T_BF8E5M2, 4)); break;
    case RK_OP_CVT_PK_I8_F32X4: r = rk_build_cvt_pk_i8_f32x4(k, x->v4f32); break;
    case RK_OP_CVT_F32_TO_I8_SAT: r = rk_build_cvt_f32_to_i8_sat(k, x->f32); break;
    case RK_OP_CVT_SCALEF32_PK_F32_FP8: r = rk_build_cvt_scalef32_pk_f32_fp8(k, x->v4fp8, x->f32); break;
    case RK_OP_CVT_SCALEF32_PK_F32_BF8: r = rk_build_cvt_scalef32_pk_f32_bf8(k, x->v4bf8, x->f32); break;
    case RK_OP_CVT_SCALEF32_PK_FP8_F32:
        r = rk_build_cvt_scalef32_pk_fp8_f32(k, x->v4f32, x->f32, vt(x, RK_T_FP8E4M3, 4));
        break;
    case RK_OP_CVT_SCALEF32_PK_BF8_F32:
        r = rk_build_cvt_scalef32_pk_bf8_f32(k, x->v4f32, x->f32, vt(x, RK_T_BF8E5M2, 4));
        break;
    case RK_OP_VADD: r = rk_build_vadd(k, x->v4f32, x->w4f32); break;
    case RK_OP_VSUB: r = rk_build_vsub(k, x->v4i32, x->w4i32); break;
    case RK_OP_VMUL: r = rk_build_vmul(k, x->v4f32, x->w4f32); break;
    case RK_OP_VDIV: r = rk_build_vdiv(k, x->v4f32, x->w4f32); break;
    case RK_OP_VAND: r = rk_build_vand(k, x->v4i32, x->w4i32); break;
    case RK_OP_VOR: r = rk_build_vor(k, x->v4i32, x->w4i32); break;
    case RK_OP_VXOR: r = rk_build_vxor(k, x->v4i32, x->w4i32); break;
    case RK_OP_VSHL: r = rk_build_vshl(k, x->v4i32, x->w4i32); break;
    case RK_OP_VLSHR: r = rk_build_vlshr(k, x->v4i32, x->w4i32); break;
    case RK_OP_VSMAX: r = rk_build_vsmax(k, x->v4i32, x->w4i32); break;
    case RK_OP_VSMIN: r = rk_build_vsmin(k, x->v4i32, x->w4i32); break;
    case RK_OP_VMAX: r = rk_build_vmax(k, x->v4f32, x->w4f32); break;
    case RK_OP_VMIN: r = rk_build_vmin(k, x->v4f32, x->w4f32); break;
    case RK_OP_VFMA: r = rk_build_vfma(k, x->v4f32, x->w4f32, x->v4f32); break;
    case RK_OP_VFNEG: r = rk_build_vfneg(k, x->v4f16); break;
    case RK_OP_VSUM: r = rk_build_vsum(k, x->v4f32); break;
    case RK_OP_VREDUCE_MAX: r = rk_build_vreduce_max(k, x->v4f32); break;
    case RK_OP_VREDUCE_MIN: r = rk_build_vreduce_min(k, x->v4f32); break;
    case RK_OP_VCMP: r = rk_build_vcmp(k, "ge", x->v4i32, x->w4i32); break;
    case RK_OP_VFCMP: r = rk_build_vfcmp(k, "olt", x->v4f32, x->w4f32); break;
    case RK_OP_VSELECT: r = rk_build_vselect(k, x->v4i1, x->v4f32, x->w4f32); break;
    case RK_OP_VTRUNC: r = rk_build_vtrunc(k, x->v4i32, vt(x, RK_T_I16, 4)); break;
    case RK_OP_VSEXT: r = rk_build_vsext(k, x->v4i8, vt(x, RK_T_I32, 4)); break;
    case RK_OP_VZEXT: r = rk_build_vzext(k, x->v4i8, vt(x, RK_T_I32, 4)); break;
    case RK_OP_VCAST_TO_F32: r = rk_build_vcast_to_f32(k, x->v4f16, vt(x, RK_T_F32, 4)); break;
    case RK_OP_VTRUNC_F32_TO: r = rk_build_vtrunc_f32_to(k, x->v4f32, vt(x, RK_T_BF16, 4)); break;
    case RK_OP_VTRUNC_F32_TO_F16: r = rk_build_vtrunc_f32_to_f16(k, x->v4f32, vt(x, RK_T_F16, 4)); break;
    case RK_OP_VBITCAST: r = rk_build_vbitcast(k, x->v4f16, vt(x, RK_T_I32, 2)); break;
    case RK_OP_VEXTRACT: r = rk_build_vextract(k, x->v4f32, 3); break;
    case RK_OP_VINSERT: r = rk_build_vinsert(k, x->v4f32, x->f32, 1); break;
    case RK_OP_VSPLAT: r = rk_build_vsplat(k, x->f16, 8); break;
    case RK_OP_VPACK: {
        const rk_value e[] = {x->f32, x->g32, x->f32};
        r = rk_build_vpack(k, e, 3);
        break;
    }
    case RK_OP_VCONCAT: r = rk_build_vconcat(k, x->v2f32, x->v4f32); break;
    case RK_OP_VSHUFFLE: {
        static const int32_t m[] = {0, 5, 2, 7, 1};
        r = rk_build_vshuffle(k, x->v4f32, x->w4f32, m, 5);
        break;
    }
    case RK_OP_THREAD_ID: r = rk_build_thread_id(k, 1); break;
    case RK_OP_BLOCK_ID: r = rk_build_block_id(k, 2); break;
    case RK_OP_BLOCK_DIM: r = rk_build_block_dim(k, 0); break;
    case RK_OP_GRID_DIM: r = rk_build_grid_dim(k, 1); break;
    case RK_OP_LANE_ID: r = rk_build_lane_id(k); break;
    case RK_OP_GLOBAL_LOAD: r = rk_build_global_load(k, x->pf16, x->i32); break;
    case RK_OP_GLOBAL_LOAD_TYPED: r = rk_build_global_load_typed(k, x->pf32, x->i64); break;
    case RK_OP_GLOBAL_LOAD_VN: r = rk_build_global_load_vn(k, x->pf16, x->i32, 8); break;
    case RK_OP_GLOBAL_STORE: rk_build_global_store(k, x->pf16, x->i32, x->f16); break;
    case RK_OP_GLOBAL_STORE_TYPED: rk_build_global_store_typed(k, x->pi32, x->i32, x->j32); break;
    case RK_OP_GLOBAL_STORE_VN: rk_build_global_store_vn(k, x->pf32, x->i32, x->v4f32); break;
    case RK_OP_GLOBAL_PTR_ADD: r = rk_build_global_ptr_add(k, x->pf32, x->i64); break;
    case RK_OP_PTR_TO_INT: r = rk_build_ptrtoint(k, x->pf32); break;
    case RK_OP_COOP_GLOBAL_STORE: rk_build_cooperative_global_store(k, x->pf32, x->v4i32, x->v4f32); break;
    case RK_OP_SMEM_ALLOC: {
        const uint32_t dims[] = {16, 33};
        r = rk_build_smem_alloc(k, RK_T_BF16, dims, 2);
        break;
    }
    case RK_OP_SMEM_LOAD: r = rk_build_smem_load(k, x->s_f32, z); break;
    case RK_OP_SMEM_LOAD_VN: r = rk_build_smem_load_vn(k, x->s_f16, z, 8); break;
    case RK_OP_SMEM_LOAD_V4: r = rk_build_smem_load_v4(k, x->s_f16x2d, x->i32, x->zero); break;
    case RK_OP_SMEM_LOAD_VN_F32: r = rk_build_smem_load_vn_f32(k, x->s_f32, z, 4); break;
    case RK_OP_SMEM_STORE: rk_build_smem_store(k, x->s_i32, z, x->i32); break;
    case RK_OP_SMEM_STORE_VN: rk_build_smem_store_vn(k, x->s_f16, z, x->v4f16); break;
    case RK_OP_SMEM_STORE_VN_F32: rk_build_smem_store_vn_f32(k, x->s_f32, z, x->v4f32); break;
    case RK_OP_SMEM_STORE_DISTRIBUTED: rk_build_smem_store_distributed(k, x->s_f32, x->v4f32); break;
    case RK_OP_SMEM_ADDR_OF: r = rk_build_smem_addr_of(k, x->s_f32); break;
    case RK_OP_SMEM_PTR_ADD: r = rk_build_smem_ptr_add(k, x->i64, x->j64); break;
    case RK_OP_LDS_ATOMIC_ADD: r = rk_build_lds_atomic_add(k, x->s_i32, z, x->i32); break;
    case RK_OP_BUFFER_RSRC: r = rk_build_buffer_rsrc(k, x->pf16, x->i64); break;
    case RK_OP_BUFFER_LOAD: r = rk_build_buffer_load(k, x->rsrc, x->i32, x->zero, RK_T_I8); break;
    case RK_OP_BUFFER_LOAD_F16: r = rk_build_buffer_load_f16(k, x->rsrc, x->i32, x->zero); break;
    case RK_OP_BUFFER_LOAD_BF16: r = rk_build_buffer_load_bf16(k, x->rsrc, x->i32, x->zero); break;
    case RK_OP_BUFFER_LOAD_VN: r = rk_build_buffer_load_vn(k, x->rsrc, x->i32, x->zero, 3, RK_T_F32); break;
    case RK_OP_BUFFER_LOAD_VN_F16: r = rk_build_buffer_load_vn_f16(k, x->rsrc, x->i32, x->zero, 4); break;
    case RK_OP_BUFFER_LOAD_VN_BF16: r = rk_build_buffer_load_vn_bf16(k, x->rsrc, x->i32, x->zero, 1); break;
    case RK_OP_BUFFER_STORE: rk_build_buffer_store(k, x->rsrc, x->i32, x->zero, x->f32, RK_T_F32); break;
    case RK_OP_BUFFER_STORE_F16: rk_build_buffer_store_f16(k, x->rsrc, x->i32, x->zero, x->f16); break;
    case RK_OP_BUFFER_STORE_BF16: rk_build_buffer_store_bf16(k, x->rsrc, x->i32, x->zero, x->bf16); break;
    case RK_OP_BUFFER_STORE_F32: rk_build_buffer_store_f32(k, x->rsrc, x->i32, x->zero, x->g32); break;
    case RK_OP_BUFFER_STORE_VN: rk_build_buffer_store_vn(k, x->rsrc, x->i32, x->zero, x->v4i32, 4, RK_T_I32); break;
    case RK_OP_BUFFER_STORE_VN_F16: rk_build_buffer_store_vn_f16(k, x->rsrc, x->i32, x->zero, x->v2f16, 1); break;
    case RK_OP_BUFFER_STORE_VN_BF16: rk_build_buffer_store_vn_bf16(k, x->rsrc, x->i32, x->zero, x->v4bf16, 2); break;
    case RK_OP_BUFFER_STORE_VN_F32: rk_build_buffer_store_vn_f32(k, x->rsrc, x->i32, x->zero, x->v2f32, 2); break;
    case RK_OP_ASYNC_BUFFER_LOAD_LDS: rk_build_async_buffer_load_lds(k, x->rsrc, x->s_f32, x->i32, x->zero, 1); break;
    case RK_OP_ASYNC_BUFFER_LOAD_LDS_ADDR: {
        const rk_async_buffer_load_lds_addr_opts o = {.dwords = RK_SOME(4)};
        rk_build_async_buffer_load_lds_addr_ex(k, x->rsrc, x->i64, x->i32, x->zero, &o);
        break;
    }
    case RK_OP_GLOBAL_LOAD_LDS: rk_build_global_load_lds(k, x->pf32, x->i32, x->i64, 4); break;
    case RK_OP_ASYNC_COPY: rk_build_async_copy(k, x->pf32, x->i32, x->s_f32, x->j32, x->i1, 8); break;
    case RK_OP_ASYNC_COMMIT_GROUP: rk_build_async_commit_group(k); break;
    case RK_OP_ASYNC_WAIT_GROUP: rk_build_async_wait_group(k, 1); break;
    case RK_OP_DS_READ_TR16_B64: r = rk_build_ds_read_tr16_b64(k, x->s_f16, z); break;
    case RK_OP_DS_READ_TR16_B128: r = rk_build_ds_read_tr16_b128(k, x->s_f16, z); break;
    case RK_OP_DS_READ_TR_B8: r = rk_build_ds_read_tr_b8(k, x->s_i8, z); break;
    case RK_OP_LDMATRIX: {
        const rk_ldmatrix_opts o = {.trans = RK_SOME(true)};
        r = rk_build_ldmatrix_ex(k, x->s_f16, z, vt(x, RK_T_I32, 2), 2, &o);
        break;
    }
    case RK_OP_READFIRSTLANE: r = rk_build_readfirstlane(k, x->i64); break;
    case RK_OP_READLANE: r = rk_build_readlane(k, x->f32, x->zero); break;
    case RK_OP_WRITELANE: r = rk_build_writelane(k, x->i32, x->zero, x->j32); break;
    case RK_OP_PIN_SGPR: r = rk_build_pin_sgpr(k, x->i32); break;
    case RK_OP_WAVE_BALLOT: r = rk_build_wave_ballot(k, x->i1); break;
    case RK_OP_WAVE_ALL: r = rk_build_wave_all(k, x->i1); break;
    case RK_OP_WAVE_ANY: r = rk_build_wave_any(k, x->i32); break;
    case RK_OP_SHUFFLE: {
        const rk_shuffle_opts o = {.width = RK_SOME(16)};
        r = rk_build_shuffle_ex(k, "down", x->f32, x->i32, &o);
        break;
    }
    case RK_OP_DS_BPERMUTE: r = rk_build_ds_bpermute(k, x->i32, x->j32); break;
    case RK_OP_DS_BPERMUTE_B64: r = rk_build_ds_bpermute_b64(k, x->i32, x->i64); break;
    case RK_OP_DS_SWIZZLE_XOR: r = rk_build_ds_swizzle_xor(k, x->i32, 3); break;
    case RK_OP_DS_SWIZZLE: r = rk_build_ds_swizzle(k, x->i32, 0x041f); break;
    case RK_OP_MOV_DPP: {
        const rk_mov_dpp_opts o = {.row_shr = RK_SOME(2), .bound_ctrl = RK_SOME(true)};
        r = rk_build_mov_dpp_ex(k, x->i32, &o);
        break;
    }
    case RK_OP_DPP_XOR: r = rk_build_dpp_xor(k, x->i32, 5); break;
    case RK_OP_QUAD_PERM: r = rk_build_quad_perm(k, x->i32, 0x1b); break;
    case RK_OP_MOV_DPP8: r = rk_build_mov_dpp8(k, x->f32, 0xfac688); break;
    case RK_OP_WAVE_REDUCE: r = rk_build_wave_reduce(k, "umax", x->i32); break;
    case RK_OP_PERMLANE16: r = rk_build_permlane16(k, x->i32, x->j32, x->i32, x->j32); break;
    case RK_OP_PERMLANEX16: r = rk_build_permlanex16(k, x->i32); break;
    case RK_OP_PERMLANE64: r = rk_build_permlane64(k, x->i32); break;
    case RK_OP_PERMLANE32_SWAP:
        rk_build_permlane32_swap(k, x->i32, x->j32, out);
        r = out[1];
        break;
    case RK_OP_PERM_B32: r = rk_build_perm_b32(k, x->i32, x->j32, x->i32); break;
    case RK_OP_BYTE_PERM: r = rk_build_byte_perm(k, x->i32, x->j32, 0x05040100); break;
    case RK_OP_ALIGNBYTE: r = rk_build_alignbyte(k, x->i32, x->j32, x->i32); break;
    case RK_OP_S_WQM: r = rk_build_s_wqm(k, x->i64); break;
    case RK_OP_EXEC_AND_SAVEEXEC: r = rk_build_exec_and_saveexec(k, x->i64); break;
    case RK_OP_EXEC_OR_SAVEEXEC: r = rk_build_exec_or_saveexec(k, x->i64); break;
    case RK_OP_EXEC_XOR: r = rk_build_exec_xor(k, x->i64); break;
    case RK_OP_EXEC_OR: rk_build_exec_or(k, x->i64); break;
    case RK_OP_SYNC: rk_build_sync(k); break;
    case RK_OP_SYNC_LDS_ONLY: rk_build_sync_lds_only(k); break;
    case RK_OP_S_BARRIER_BARE: rk_build_s_barrier_bare(k); break;
    case RK_OP_SYNC_HALF_BLOCK: rk_build_sync_half_block(k, x->zero); break;
    case RK_OP_NAMED_BARRIER: rk_build_named_barrier(k, 3, 128); break;
    case RK_OP_NAMED_BARRIER_ARRIVE: rk_build_named_barrier_arrive(k, 4, 256); break;
    case RK_OP_FENCE: rk_build_fence(k, "device"); break;
    case RK_OP_S_WAITCNT: rk_build_s_waitcnt(k, 0, 3, -1); break;
    case RK_OP_S_WAIT_ASYNCCNT: rk_build_s_wait_asynccnt(k, 2); break;
    case RK_OP_SCHED_BARRIER: rk_build_sched_barrier(k, 0); break;
    case RK_OP_SCHED_GROUP_BARRIER: rk_build_sched_group_barrier(k, 8, 1, 0); break;
    case RK_OP_IGLP_OPT: rk_build_iglp_opt(k, 1); break;
    case RK_OP_S_SETPRIO: rk_build_s_setprio(k, 3); break;
    case RK_OP_GLOBAL_ATOMIC_ADD: r = rk_build_global_atomic_add(k, x->pi32, x->i32, x->j32); break;
    case RK_OP_GLOBAL_ATOMIC_ADD_F32: r = rk_build_global_atomic_add_f32(k, x->pf32, x->i32, x->f32); break;
    case RK_OP_GLOBAL_ATOMIC_ADD_PK_BF16:
        r = rk_build_global_atomic_add_pk_bf16(k, x->pbf16, x->i32, x->v2bf16);
        break;
    case RK_OP_GLOBAL_ATOMIC_ADD_PK_F16: r = rk_build_global_atomic_add_pk_f16(k, x->pf16, x->i32, x->v2f16); break;
    case RK_OP_GLOBAL_ATOMIC: {
        const rk_global_atomic_opts o = {.ordering = "acq_rel", .scope = "device"};
        r = rk_build_global_atomic_ex(k, "umax", x->pi32, x->i32, x->j32, &o);
        break;
    }
    case RK_OP_GLOBAL_ATOMIC_CAS: r = rk_build_global_atomic_cas(k, x->pi32, x->i32, x->i32, x->j32); break;
    case RK_OP_GLOBAL_WAIT: rk_build_global_wait(k, "uge", x->pi32, x->i32, x->j32); break;
    case RK_OP_MMA: r = rk_build_mma(k, "mfma_f32_16x16x16_f16", x->v4f16, x->v4f16, x->v4f32); break;
    case RK_OP_REGISTER_P_FROM_QK_C: r = rk_build_register_p_from_qk_c(k, x->v16f32, vt(x, RK_T_F16, 8)); break;
    case RK_OP_INLINE_ASM: {
        rk_type t = RK_T_I32;
        rk_op *op = rk_build_inline_asm(k, "v_mov_b32 $0, $1", "=v,v", &x->i32, 1, &t, 1, false);
        r = rk_op_result(op);
        break;
    }
    case RK_OP_FOR: {
        rk_value hi = rk_const_i32(k, 4), one = rk_const_i32(k, 1);
        rk_for_begin(k, x->zero, hi, one, NULL, 0, NULL, NULL, NULL);
        rk_for_end(k, NULL, 0, NULL);
        break;
    }
    case RK_OP_YIELD: {
        rk_value hi = rk_const_i32(k, 4), one = rk_const_i32(k, 1), acc;
        rk_value iv = rk_for_begin(k, x->zero, hi, one, "i", 1, &x->j32, NULL, &acc);
        rk_value next = rk_build_add(k, acc, iv);
        rk_for_end(k, &next, 1, &r);
        break;
    }
    case RK_OP_IF:
        rk_if_begin(k, x->i1);
        rk_if_end(k, NULL, 0);
        break;
    case RK_OP_IF_ELSE: {
        rk_type t = RK_T_F32;
        rk_if_else_begin(k, x->i1, 1, &t, &r);
        rk_else(k, &x->f32, 1);
        rk_if_end(k, &x->g32, 1);
        break;
    }
    case RK_OP_RETURN: rk_build_return(k); break;
    case RK_OP_WGMMA_DESC: r = rk_build_wgmma_desc(k, x->s_f16, x->zero, 128, 256); break;
    case RK_OP_WGMMA: {
        const rk_wgmma_opts o = {.trans_b = RK_SOME(true), .scale_d = RK_SOME(false)};
        r = rk_build_wgmma_ex(k, "bf16", x->v4f32, x->i64, x->j64, 8, &o);
        break;
    }
    case RK_OP_WGMMA_RS: {
        const rk_value e[8] = {x->bf16, x->bf16, x->bf16, x->bf16, x->bf16, x->bf16, x->bf16, x->bf16};
        rk_value a8 = rk_build_vpack(k, e, 8);
        const rk_wgmma_rs_opts o = {.trans_b = RK_SOME(true)};
        r = rk_build_wgmma_rs_ex(k, "bf16", x->v4f32, a8, x->i64, 8, &o);
        break;
    }
    case RK_OP_WGMMA_FENCE: rk_build_wgmma_fence(k); break;
    case RK_OP_WGMMA_COMMIT_GROUP: rk_build_wgmma_commit_group(k); break;
    case RK_OP_WGMMA_WAIT_GROUP: {
        const rk_value acc[] = {x->v4f32, x->w4f32};
        rk_build_wgmma_wait_group(k, 1, acc, 2, out);
        r = out[1];
        break;
    }
    case RK_OP_FENCE_PROXY_ASYNC: rk_build_fence_proxy_async(k); break;
    case RK_OP_MBARRIER_INIT: rk_build_mbarrier_init(k, x->s_bars, x->zero, x->i32); break;
    case RK_OP_MBARRIER_ARRIVE: rk_build_mbarrier_arrive(k, x->s_bars, x->zero); break;
    case RK_OP_MBARRIER_ARRIVE_EXPECT_TX: rk_build_mbarrier_arrive_expect_tx(k, x->s_bars, x->zero, x->i32); break;
    case RK_OP_MBARRIER_WAIT: rk_build_mbarrier_wait(k, x->s_bars, x->zero, x->j32); break;
    case RK_OP_TMA_LOAD_2D:
        rk_build_tma_load_2d(k, x->tmap, x->s_tile, x->zero, x->s_bars, x->zero, x->i32, x->j32);
        break;
    case RK_OP_TMA_LOAD_4D:
        rk_build_tma_load_4d(k, x->tmap, x->s_tile, x->zero, x->s_bars, x->zero, x->i32, x->j32, x->zero, x->zero);
        break;
    case RK_OP_SETMAXNREG: rk_build_setmaxnreg(k, "dec", 40); break;
    case RK_OP_TMA_STORE_2D: rk_build_tma_store_2d(k, x->tmap, x->s_tile, x->zero, x->i32, x->j32); break;
    case RK_OP_BULK_COMMIT_GROUP: rk_build_bulk_commit_group(k); break;
    case RK_OP_BULK_WAIT_GROUP: rk_build_bulk_wait_group(k, 1); break;
    case RK_OP_CLUSTER_ID: r = rk_build_cluster_id(k, "y"); break;
    case RK_OP_CLUSTER_DIM: r = rk_build_cluster_dim(k, "x"); break;
    case RK_OP_CLUSTER_RANK: r = rk_build_cluster_rank(k); break;
    case RK_OP_CLUSTER_ARRIVE: {
        const rk_cluster_arrive_opts o = {.relaxed = RK_SOME(true)};
        rk_build_cluster_arrive_ex(k, &o);
        break;
    }
    case RK_OP_CLUSTER_WAIT: rk_build_cluster_wait(k); break;
    case RK_OP_FENCE_MBARRIER_INIT: rk_build_fence_mbarrier_init(k); break;
    case RK_OP_MBARRIER_ARRIVE_CLUSTER: rk_build_mbarrier_arrive_cluster(k, x->s_bars, x->zero, x->i32); break;
    case RK_OP_TMA_LOAD_2D_MULTICAST:
        rk_build_tma_load_2d_multicast(k, x->tmap, x->s_tile, x->zero, x->s_bars, x->zero, x->i32, x->j32, x->i32);
        break;
    }
    return r;
}

/* Targets by features; an op is checked on the first that has all of its. */
static const rk_verify_target targets[] = {
    {"gfx950", RK_FEAT_AMD | RK_FEAT_GFX9 | RK_FEAT_GFX940 | RK_FEAT_GFX950, 64, RK_S_FP8E4M3, RK_S_BF8E5M2, NULL,
     NULL},
    {"gfx1201", RK_FEAT_AMD | RK_FEAT_GFX10P | RK_FEAT_GFX11P, 32, RK_S_FP8E4M3, RK_S_BF8E5M2, NULL, NULL},
    {"sm_90a", RK_FEAT_NV | RK_FEAT_SM80 | RK_FEAT_SM90 | RK_FEAT_SM90A, 32, RK_S_FP8E4M3, RK_S_BF8E5M2, NULL, NULL},
};

static void test_every_op_through_its_builder(void **state) {
    (void)state;
    for (int c = 1; c < RK_OP__COUNT; c++) {
        const rk_op_info *info = rk_op_info_of((rk_opcode)c);
        const rk_verify_target *t = NULL;
        for (size_t i = 0; i < RK_COUNTOF(targets) && !t; i++)
            if (!(info->feat & ~targets[i].features)) t = &targets[i];
        if (!t) fail_msg("%s: no test target has its features (%s)", info->name, rk_feature_name(info->feat));
        fx x = fixture((rk_opcode)c);
        uint32_t before = op_sample_count(x.k, (rk_opcode)c);
        rk_value r = use(&x, (rk_opcode)c);
        if (rk_kernel_finish(x.k) != RK_OK) fail_msg("%s: %s", info->name, rk_builder_error(x.k));
        if (op_sample_count(x.k, (rk_opcode)c) != before + 1) fail_msg("%s: the builder did not add one op", info->name);
        /* an op with a fixed number of results gives back its first */
        if (!RK_COUNT_IS_MIN(info->nout) && RK_COUNT_N(info->nout) > 0) {
            if (!rk_value_ok(r)) fail_msg("%s: no result from the builder", info->name);
            assert_int_equal(rk_value_def(x.k, r)->code, c);
        }
        rk_diags d;
        rk_diags_init(&d);
        if (rk_verify(x.k, t, &d) != RK_OK) {
            char *text = rk_diags_text(&d);
            fail_msg("%s on %s:\n%s", info->name, t->name, text);
        }
        rk_diags_free(&d);
        rk_kernel_free(x.k);
    }
}

/* ---- the sticky-error contract --------------------------------------------------------------- */
/* The first failure is kept with the op and the reason; later calls add
 * nothing and return poison. */
static void expect_failure(fx *x, const char *op_name, const char *reason) {
    const char *msg = rk_builder_error(x->k);
    if (!strstr(msg, op_name) || !strstr(msg, reason))
        fail_msg("expected '%s' ... '%s', got '%s'", op_name, reason, msg);
    assert_int_not_equal(rk_builder_status(x->k), RK_OK);
    uint64_t n = rk_kernel_op_count(x->k);
    rk_value v = rk_build_add(x->k, x->i32, x->j32);
    assert_false(rk_value_ok(v));
    rk_build_sync(x->k);
    assert_int_equal(rk_kernel_op_count(x->k), n);
    assert_string_equal(rk_builder_error(x->k), msg);          /* still the first */
    assert_int_not_equal(rk_kernel_finish(x->k), RK_OK);
    rk_kernel_free(x->k);
}

static void test_bad_operands(void **state) {
    (void)state;
    fx x = fixture(RK_OP_WGMMA);
    rk_value r = rk_build_wgmma(x.k, "f16", x.i32, x.i64, x.j64, 8);   /* the accumulator is a vector */
    assert_false(rk_value_ok(r));
    expect_failure(&x, "tile.wgmma", "operand 0");

    x = fixture(RK_OP_WGMMA_RS);   /* an f16 fragment under dtype = bf16 */
    const rk_value e[8] = {x.f16, x.f16, x.f16, x.f16, x.f16, x.f16, x.f16, x.f16};
    rk_value a8 = rk_build_vpack(x.k, e, 8);
    r = rk_build_wgmma_rs(x.k, "bf16", x.v4f32, a8, x.i64, 8);
    assert_false(rk_value_ok(r));
    expect_failure(&x, "tile.wgmma_rs", "dtype = bf16 needs a vec<bf16 x 8> A fragment, got vec<f16x8>");

    x = fixture(RK_OP_WGMMA_RS);   /* 16 accumulators are n = 32, not 8 */
    rk_value a4 = rk_build_vpack(x.k, e, 8);
    r = rk_build_wgmma_rs(x.k, "f16", x.v16f32, a4, x.i64, 8);
    assert_false(rk_value_ok(r));
    expect_failure(&x, "tile.wgmma_rs", "n = 8 needs vec<f32x4> accumulators");

    x = fixture(RK_OP_SMEM_LOAD);
    r = rk_build_smem_load(x.k, x.i32, &x.zero);
    assert_false(rk_value_ok(r));
    expect_failure(&x, "tile.smem_load", "operand 0 must be an LDS allocation (smem<...>), got i32");

    x = fixture(RK_OP_SMEM_STORE);
    rk_build_smem_store(x.k, x.s_f16x2d, NULL, x.f16);
    expect_failure(&x, "tile.smem_store", "2 indices needed for smem<f16, [64x4]>, got NULL");

    x = fixture(RK_OP_ADD);
    r = rk_build_add(x.k, x.i32, (rk_value){0});
    expect_failure(&x, "arith.add", "operand 1 is not a value");

    x = fixture(RK_OP_MBARRIER_WAIT);
    rk_build_mbarrier_wait(x.k, x.s_bars, x.zero, x.f32);
    expect_failure(&x, "tile.mbarrier_wait", "operand 2");
}

static void test_bad_attributes(void **state) {
    (void)state;
    fx x = fixture(RK_OP_FENCE);
    rk_build_fence(x.k, "galaxy");
    expect_failure(&x, "gpu.fence", "attribute 'scope' = galaxy is not one of: block, device, system");

    x = fixture(RK_OP_CMP);
    rk_value r = rk_build_cmp(x.k, NULL, x.i32, x.j32);
    assert_false(rk_value_ok(r));
    expect_failure(&x, "arith.cmp", "attribute 'pred' needs a string, got NULL (one of: lt, le, gt, ge, eq, ne, ult, ule, ugt, uge)");

    x = fixture(RK_OP_DS_SWIZZLE_XOR);
    rk_build_ds_swizzle_xor(x.k, x.i32, 40);
    expect_failure(&x, "tile.ds_swizzle_xor", "xor_mask");

    x = fixture(RK_OP_WGMMA);
    rk_build_wgmma(x.k, "f8", x.v4f32, x.i64, x.j64, 8);
    expect_failure(&x, "tile.wgmma", "attribute 'dtype' = f8 is not one of: f16, bf16");

    x = fixture(RK_OP_ZEXT);
    rk_build_zext(x.k, x.i32, RK_T_NONE);
    expect_failure(&x, "arith.zext", "result");

    x = fixture(RK_OP_BUFFER_LOAD);
    rk_build_buffer_load(x.k, x.rsrc, x.i32, x.zero, RK_T_NONE);
    expect_failure(&x, "tile.buffer_load", "attribute 'elem_type' needs a type, got none");

    x = fixture(RK_OP_SMEM_LOAD_VN);
    rk_build_smem_load_vn(x.k, x.s_f32, &x.zero, 0);           /* no vec<f32x0> */
    expect_failure(&x, "tile.smem_load_vN", "a vector of 0 lanes (legal: 1 to 4096)");

    x = fixture(RK_OP_SHUFFLE);
    const rk_shuffle_opts o = {.width = RK_SOME(3)};
    rk_build_shuffle_ex(x.k, "xor", x.i32, x.j32, &o);
    expect_failure(&x, "tile.shuffle", "width");
}

/* An option is written only when set; required attributes always are. */
static void test_options(void **state) {
    (void)state;
    fx x = fixture(RK_OP_WGMMA);
    rk_value a = rk_build_wgmma(x.k, "bf16", x.v4f32, x.i64, x.j64, 8);
    const rk_wgmma_opts o = {.trans_a = RK_SOME(true), .scale_d = RK_SOME(false)};
    rk_value b = rk_build_wgmma_ex(x.k, "f16", x.v4f32, x.i64, x.j64, 8, &o);
    if (!rk_value_ok(a) || !rk_value_ok(b)) fail_msg("%s", rk_builder_error(x.k));
    const rk_attrs *aa = &rk_value_def(x.k, a)->attrs, *ba = &rk_value_def(x.k, b)->attrs;
    assert_int_equal(aa->n, 2);
    assert_string_equal(rk_attrs_str(aa, "dtype"), "bf16");
    assert_null(rk_attrs_get(aa, "trans_a"));
    assert_int_equal(ba->n, 4);
    assert_true(rk_attrs_bool(ba, "trans_a", false));
    assert_false(rk_attrs_bool(ba, "scale_d", true));
    assert_null(rk_attrs_get(ba, "trans_b"));
    int64_t n = 0;
    assert_true(rk_attrs_int(ba, "n", &n));
    assert_int_equal(n, 8);
    /* LDS ops set rank from the allocation; conversions set target from the type */
    rk_value l = rk_build_smem_load_v4(x.k, x.s_f16x2d, x.i32, x.zero);
    assert_string_equal(rk_type_name(x.k, rk_value_type(x.k, l)), "vec<f16x4>");
    rk_value tr = rk_build_ds_read_tr16_b64(x.k, x.s_f16, &x.zero);
    assert_string_equal(rk_type_name(x.k, rk_value_type(x.k, tr)), "vec<f16x4>");
    assert_true(rk_attrs_int(&rk_value_def(x.k, tr)->attrs, "rank", &n));
    assert_int_equal(n, 1);
    rk_value t = rk_build_vtrunc(x.k, x.v4i32, vt(&x, RK_T_I8, 4));
    assert_string_equal(rk_attrs_str(&rk_value_def(x.k, t)->attrs, "target"), "vec<i8x4>");
    rk_value bl = rk_build_buffer_load_vn(x.k, x.rsrc, x.i32, x.zero, 2, RK_T_BF16);
    assert_string_equal(rk_type_name(x.k, rk_value_type(x.k, bl)), "vec<bf16x4>");
    assert_int_equal(rk_kernel_finish(x.k), RK_OK);
    rk_kernel_free(x.k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_has_a_builder),
        cmocka_unit_test(test_every_op_through_its_builder),
        cmocka_unit_test(test_bad_operands),
        cmocka_unit_test(test_bad_attributes),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
