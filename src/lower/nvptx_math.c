/* rocke — f32 math on NVPTX. LLVM's NVPTX backend selects exp2 (ex2.approx)
 * and sqrt (sqrt.rn) but has no libcall for exp, log, log2, sin, cos or tanh,
 * and rocke links no libdevice, so those are written out here:
 *   exp   2^(x log2 e) with the product's rounding error carried separately
 *         (an fma split) and folded back in: about 2 ulp
 *   log2, log  x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s),
 *         s = (m-1)/(m+1) by an IEEE division, odd series to s^11: about
 *         2 ulp, relative accuracy kept near x = 1; subnormals rescaled
 *   sin, cos  quadrant q = rint(x 2/pi), three-part Cody-Waite reduction with
 *         fma, Taylor polynomials on [-pi/4, pi/4]: about 2 ulp while
 *         |x| < 2^17, degrading beyond
 *   tanh  the same split as the AMDGPU lowering: an odd polynomial below
 *         |x| = 0.625, 1 - 2/(2^(2 log2e |x|) + 1) above
 * rsqrt, rcp_fast, exp2_fast are the hardware approximations (rsqrt.approx,
 * rcp.approx.ftz, ex2.approx.ftz); rcp is IEEE (rcp.rn). Layer: lower. */
#include <math.h>
#include <stdio.h>

#include "nvptx_int.h"

static const char *F(lw_ctx *cx, double v) { return lw_float_lit(cx, RK_T_F32, v); }

/* "%t = <text>" into a fresh temp named word */
static const char *emit(lw_ctx *cx, const char *word, const char *fmt, const char *a, const char *b, const char *c) {
    const char *t = lw_tmp(cx, word);
    rk_buf *s = &cx->scratch;
    rk_buf_reset(s);
    rk_buf_printf(s, fmt, a, b, c);
    lw_ins(cx, "%s = %s", t, rk_buf_cstr(s));
    return t;
}
static const char *fma3(lw_ctx *cx, const char *a, const char *b, const char *c) {
    lw_declare(cx, NV_D_MATH, "declare float @llvm.fma.f32(float, float, float)");
    return emit(cx, "m", "call float @llvm.fma.f32(float %s, float %s, float %s)", a, b, c);
}
static const char *mulf(lw_ctx *cx, const char *a, const char *b) { return emit(cx, "m", "fmul float %s, %s", a, b, ""); }
static const char *call1(lw_ctx *cx, uint32_t order, const char *name, const char *a) {
    lw_declare(cx, order, lw_printf(cx, "declare float @llvm.%s(float)", name));
    return emit(cx, "m", "call float @llvm.%s(float %s)", name, a, "");
}
static const char *sel(lw_ctx *cx, const char *c, const char *a, const char *b) {
    return emit(cx, "m", "select i1 %s, float %s, float %s", c, a, b);
}

/* Horner: c[n-1] t^(n-1) + ... + c[0] */
static const char *horner(lw_ctx *cx, const double *c, int n, const char *t) {
    const char *p = F(cx, c[n - 1]);
    for (int i = n - 2; i >= 0; i--) p = fma3(cx, p, t, F(cx, c[i]));
    return p;
}

/* ---- exp --------------------------------------------------------------------------------------- */
static void exp_f32(lw_ctx *cx, const char *into, const char *x) {
    static const double L2E = 1.4426950216293335, L2E_TAIL = 1.925963033500011e-08, LN2 = 0.6931471824645996;
    const char *hi = mulf(cx, x, F(cx, L2E));
    const char *nhi = emit(cx, "m", "fneg float %s", hi, "", "");
    const char *lo = fma3(cx, x, F(cx, L2E), nhi);
    lo = fma3(cx, x, F(cx, L2E_TAIL), lo);
    const char *e = call1(cx, NV_D_MATH, "exp2.f32", hi);
    const char *c = mulf(cx, lo, F(cx, LN2));
    const char *r = fma3(cx, e, c, e);
    /* inf/NaN in hi or an overflowed 2^hi: the correction would make NaN */
    const char *ah = call1(cx, NV_D_MATH, "fabs.f32", hi);
    const char *fh = emit(cx, "m", "fcmp olt float %s, %s", ah, F(cx, INFINITY), "");
    const char *fe = emit(cx, "m", "fcmp olt float %s, %s", e, F(cx, INFINITY), "");
    const char *ok = emit(cx, "m", "and i1 %s, %s", fh, fe, "");
    lw_ins(cx, "%s = select i1 %s, float %s, float %s", into, ok, r, e);
}

/* ---- log2 / log -------------------------------------------------------------------------------- */
static void log_f32(lw_ctx *cx, const char *into, const char *x, bool natural) {
    static const double series[] = {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11};
    const char *den = emit(cx, "m", "fcmp olt float %s, %s", x, F(cx, 0x1p-126), "");
    const char *xs = mulf(cx, x, F(cx, 0x1p23));
    const char *xn = sel(cx, den, xs, x);
    const char *bits = emit(cx, "m", "bitcast float %s to i32", xn, "", "");
    const char *eb = emit(cx, "m", "lshr i32 %s, 23", bits, "", "");
    const char *mant = emit(cx, "m", "and i32 %s, 8388607", bits, "", "");
    const char *mb = emit(cx, "m", "or i32 %s, 1065353216", mant, "", "");          /* m in [1, 2) */
    const char *big = emit(cx, "m", "icmp ugt i32 %s, 1068827891", mb, "", "");     /* m > sqrt(2) */
    const char *half = emit(cx, "m", "select i1 %s, i32 8388608, i32 0", big, "", "");
    const char *mb2 = emit(cx, "m", "sub i32 %s, %s", mb, half, "");
    const char *bias = emit(cx, "m", "select i1 %s, i32 -150, i32 -127", den, "", "");
    const char *e0 = emit(cx, "m", "add i32 %s, %s", eb, bias, "");
    const char *one = emit(cx, "m", "zext i1 %s to i32", big, "", "");
    const char *e1 = emit(cx, "m", "add i32 %s, %s", e0, one, "");
    const char *ef = emit(cx, "m", "sitofp i32 %s to float", e1, "", "");
    const char *m = emit(cx, "m", "bitcast i32 %s to float", mb2, "", "");
    const char *num = emit(cx, "m", "fsub float %s, %s", m, F(cx, 1.0), "");      /* exact (Sterbenz) */
    const char *dd = emit(cx, "m", "fadd float %s, %s", m, F(cx, 1.0), "");
    const char *s = emit(cx, "m", "fdiv float %s, %s", num, dd, "");
    const char *s2 = mulf(cx, s, s);
    const char *p = horner(cx, series, 5, s2);
    const char *twos = emit(cx, "m", "fadd float %s, %s", s, s, "");
    const char *s3 = mulf(cx, s, s2);
    const char *lnm = fma3(cx, s3, p, twos);                                       /* ln m */
    const char *r;
    if (natural) {
        static const double LN2_HI = 0.693145751953125, LN2_LO = 1.428606765330187e-06;
        const char *t = fma3(cx, ef, F(cx, LN2_LO), lnm);
        r = fma3(cx, ef, F(cx, LN2_HI), t);
    } else {
        r = fma3(cx, lnm, F(cx, 1.4426950216293335), ef);
    }
    /* +inf -> +inf; +-0 -> -inf; negative or NaN -> NaN */
    const char *pos = emit(cx, "m", "fcmp ogt float %s, %s", x, F(cx, 0.0), "");
    const char *inf = emit(cx, "m", "fcmp oeq float %s, %s", x, F(cx, INFINITY), "");
    const char *zero = emit(cx, "m", "fcmp oeq float %s, %s", x, F(cx, 0.0), "");
    const char *r1 = sel(cx, inf, F(cx, INFINITY), r);
    const char *sp = sel(cx, zero, F(cx, -INFINITY), "0x7FF8000000000000");
    lw_ins(cx, "%s = select i1 %s, float %s, float %s", into, pos, r1, sp);
}

/* ---- sin / cos ---------------------------------------------------------------------------------- */
static void sincos_f32(lw_ctx *cx, const char *into, const char *x, bool cosine) {
    static const double PIO2_HI = 1.5707963705062866, PIO2_MID = -4.371138828673793e-08,
                        PIO2_LO = -1.7151245100058819e-15, TWO_OVER_PI = 0.6366197466850281;
    static const double s_c[] = {-1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880};
    static const double c_c[] = {-1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800};
    const char *xq = mulf(cx, x, F(cx, TWO_OVER_PI));
    const char *q = call1(cx, NV_D_MATH, "rint.f32", xq);
    const char *nq = emit(cx, "m", "fneg float %s", q, "", "");
    const char *r = fma3(cx, nq, F(cx, PIO2_HI), x);
    r = fma3(cx, nq, F(cx, PIO2_MID), r);
    r = fma3(cx, nq, F(cx, PIO2_LO), r);
    lw_declare(cx, NV_D_MATH, "declare i32 @llvm.fptosi.sat.i32.f32(float)");
    const char *qi = emit(cx, "m", "call i32 @llvm.fptosi.sat.i32.f32(float %s)", q, "", "");
    if (cosine) qi = emit(cx, "m", "add i32 %s, 1", qi, "", "");
    const char *r2 = mulf(cx, r, r);
    const char *r3 = mulf(cx, r, r2);
    const char *ps = horner(cx, s_c, 4, r2);
    const char *sp = fma3(cx, r3, ps, r);                                           /* sin r */
    const char *pc = horner(cx, c_c, 5, r2);
    const char *cp = fma3(cx, r2, pc, F(cx, 1.0));                                  /* cos r */
    const char *odd = emit(cx, "m", "trunc i32 %s to i1", qi, "", "");
    const char *q2 = emit(cx, "m", "and i32 %s, 2", qi, "", "");
    const char *neg = emit(cx, "m", "icmp ne i32 %s, 0", q2, "", "");
    const char *v = sel(cx, odd, cp, sp);
    const char *nv = emit(cx, "m", "fneg float %s", v, "", "");
    lw_ins(cx, "%s = select i1 %s, float %s, float %s", into, neg, nv, v);
}

/* ---- tanh ----------------------------------------------------------------------------------------- */
static void tanh_f32(lw_ctx *cx, const char *into, const char *x) {
    /* the AMDGPU lowering's least-squares fit of (tanh(t) - t) / t^3 in t^2 */
    static const double c[5] = {-0.3333328664302826, 0.13331513106822968, -0.05374465882778168,
                                0.020653124898672104, -0.0057189627550542355};
    const char *bits = emit(cx, "m", "bitcast float %s to i32", x, "", "");
    const char *sign = emit(cx, "m", "and i32 %s, -2147483648", bits, "", "");
    const char *absb = emit(cx, "m", "and i32 %s, 2147483647", bits, "", "");
    const char *ax = emit(cx, "m", "bitcast i32 %s to float", absb, "", "");
    const char *t2 = mulf(cx, ax, ax);
    const char *x3 = mulf(cx, ax, t2);
    const char *p = horner(cx, c, 5, t2);
    const char *small = fma3(cx, x3, p, ax);
    const char *arg = mulf(cx, ax, F(cx, 2.0 * 1.4426950408889634));
    const char *ex = call1(cx, NV_D_MATH, "exp2.f32", arg);
    const char *d = emit(cx, "m", "fadd float %s, %s", ex, F(cx, 1.0), "");
    const char *rc = call1(cx, NV_D_NVVM_MATH, "nvvm.rcp.approx.ftz.f", d);
    const char *big = fma3(cx, F(cx, -2.0), rc, F(cx, 1.0));
    const char *lt = emit(cx, "m", "fcmp olt float %s, %s", ax, F(cx, 0.625), "");
    const char *pick = sel(cx, lt, small, big);
    const char *mag = emit(cx, "m", "bitcast float %s to i32", pick, "", "");
    const char *sb = emit(cx, "m", "or i32 %s, %s", mag, sign, "");
    lw_ins(cx, "%s = bitcast i32 %s to float", into, sb);
}

/* ---- the family --------------------------------------------------------------------------------------- */
static void hw1(lw_ctx *cx, const rk_op *op, uint32_t order, const char *name) {
    lw_declare(cx, order, lw_printf(cx, "declare float @llvm.%s(float)", name));
    lw_ins(cx, "%v = call float @llvm.%s(%V)", op->out[0], name, op->in[0]);
}

static void exp2_op(lw_ctx *cx, const rk_op *op) { hw1(cx, op, NV_D_MATH, "exp2.f32"); }
static void exp2_fast(lw_ctx *cx, const rk_op *op) { hw1(cx, op, NV_D_NVVM_MATH, "nvvm.ex2.approx.ftz.f"); }
static void sqrt_op(lw_ctx *cx, const rk_op *op) { hw1(cx, op, NV_D_MATH, "sqrt.f32"); }
static void rsqrt(lw_ctx *cx, const rk_op *op) { hw1(cx, op, NV_D_NVVM_MATH, "nvvm.rsqrt.approx.f"); }
static void rcp_fast(lw_ctx *cx, const rk_op *op) { hw1(cx, op, NV_D_NVVM_MATH, "nvvm.rcp.approx.ftz.f"); }
static void rcp(lw_ctx *cx, const rk_op *op) {
    lw_ins(cx, "%v = fdiv float %s, %v", op->out[0], F(cx, 1.0), op->in[0]);
}
static void exp_op(lw_ctx *cx, const rk_op *op) { exp_f32(cx, lw_val(cx, op->out[0]), lw_val(cx, op->in[0])); }
static void log2_op(lw_ctx *cx, const rk_op *op) { log_f32(cx, lw_val(cx, op->out[0]), lw_val(cx, op->in[0]), false); }
static void log_op(lw_ctx *cx, const rk_op *op) { log_f32(cx, lw_val(cx, op->out[0]), lw_val(cx, op->in[0]), true); }
static void sin_op(lw_ctx *cx, const rk_op *op) { sincos_f32(cx, lw_val(cx, op->out[0]), lw_val(cx, op->in[0]), false); }
static void cos_op(lw_ctx *cx, const rk_op *op) { sincos_f32(cx, lw_val(cx, op->out[0]), lw_val(cx, op->in[0]), true); }
static void tanh_op(lw_ctx *cx, const rk_op *op) { tanh_f32(cx, lw_val(cx, op->out[0]), lw_val(cx, op->in[0])); }

/* The family's handlers by opcode (nvptx.c's switch routes exactly these here). */
typedef void (*math_fn)(lw_ctx *cx, const rk_op *op);
static const math_fn math_fns[RK_OP__COUNT] = {
    [RK_OP_EXP2] = exp2_op, [RK_OP_EXP2_FAST] = exp2_fast, [RK_OP_SQRT] = sqrt_op, [RK_OP_RSQRT] = rsqrt,
    [RK_OP_RCP_FAST] = rcp_fast, [RK_OP_RCP] = rcp, [RK_OP_EXP] = exp_op, [RK_OP_LOG2] = log2_op,
    [RK_OP_LOG] = log_op, [RK_OP_SIN] = sin_op, [RK_OP_COS] = cos_op, [RK_OP_TANH] = tanh_op,
};

void lw_nv_math(lw_ctx *cx, const rk_op *op) {
    RK_ASSERT(op->code > RK_OP_INVALID && op->code < RK_OP__COUNT && math_fns[op->code],
              "lw_nv_math called for an op outside the math family");
    math_fns[op->code](cx, op);
}
