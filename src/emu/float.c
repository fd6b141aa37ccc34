/* rocke — emulator handlers for floating point: IEEE f32/f64 in C float and
 * double; f16 and bf16 computed in f32 and rounded to nearest even (for
 * + - * / and sqrt of two 11- or 8-bit-significand inputs, f32's 24 bits are
 * >= 2p+2, so the double rounding is innocuous and the result is the correctly
 * rounded one); fma of 16-bit types in double (exact product, sum rounded
 * to odd) then one rounding. Math functions use the C library (see docs/emulator.md for how
 * hardware approximations differ). Layer: emu. */
#include <math.h>

#include "emu_int.h"

#define RESTRICT restrict

/* ---- f32 / f64 --------------------------------------------------------------------- */
#define FBIN(name, T, expr)                                                             \
    static int name(emu_wave *w, const emu_ins *in) {                                   \
        T *RESTRICT d = REF(in->d);                                                     \
        const T *RESTRICT a = REF(in->a), *RESTRICT b = REF(in->b);                     \
        for (uint32_t i = 0, n = in->n; i < n; i++) { T x = a[i], y = b[i]; d[i] = (expr); } \
        return EMU_NEXT;                                                                \
    }
#define FUN(name, T, expr)                                                              \
    static int name(emu_wave *w, const emu_ins *in) {                                   \
        T *RESTRICT d = REF(in->d);                                                     \
        const T *RESTRICT a = REF(in->a);                                               \
        for (uint32_t i = 0, n = in->n; i < n; i++) { T x = a[i]; d[i] = (expr); }      \
        return EMU_NEXT;                                                                \
    }
#define FTER(name, T, expr)                                                             \
    static int name(emu_wave *w, const emu_ins *in) {                                   \
        T *RESTRICT d = REF(in->d);                                                     \
        const T *RESTRICT a = REF(in->a), *RESTRICT b = REF(in->b), *RESTRICT c = REF(in->c); \
        for (uint32_t i = 0, n = in->n; i < n; i++) { T x = a[i], y = b[i], z = c[i]; d[i] = (expr); } \
        return EMU_NEXT;                                                                \
    }

/* maxnum/minnum: a NaN operand loses; -0 orders below +0 (IEEE 754-2019
 * maximumNumber, and what AMD's v_max_f32 and PTX max.f32 give). */
static inline double maxnum(double x, double y) {
    if (isnan(x)) return y;
    if (isnan(y)) return x;
    if (x == y) return signbit(x) ? y : x;
    return x > y ? x : y;
}
static inline double minnum(double x, double y) {
    if (isnan(x)) return y;
    if (isnan(y)) return x;
    if (x == y) return signbit(x) ? x : y;
    return x < y ? x : y;
}

#define F_OPS(S, T, FMA)                                      \
    FBIN(fadd_##S, T, x + y)                                  \
    FBIN(fsub_##S, T, x - y)                                  \
    FBIN(fmul_##S, T, x * y)                                  \
    FBIN(fdiv_##S, T, x / y)                                  \
    FUN(fneg_##S, T, -x)                                      \
    FUN(fabs_##S, T, (T)fabs((double)x))                      \
    FTER(fma_##S, T, FMA(x, y, z))                            \
    FBIN(fmax_##S, T, (T)maxnum(x, y))                        \
    FBIN(fmin_##S, T, (T)minnum(x, y))                        \
    FTER(fmax3_##S, T, (T)maxnum(x, maxnum(y, z)))            \
    FTER(fmin3_##S, T, (T)minnum(x, minnum(y, z)))
F_OPS(f32, float, fmaf)
F_OPS(f64, double, fma)

/* ---- f16 / bf16 through f32 ------------------------------------------------------------ */
#define HBIN(name, D, E, expr)                                                          \
    static int name(emu_wave *w, const emu_ins *in) {                                   \
        uint16_t *RESTRICT d = REF(in->d);                                              \
        const uint16_t *RESTRICT a = REF(in->a), *RESTRICT b = REF(in->b);              \
        for (uint32_t i = 0, n = in->n; i < n; i++) { float x = D(a[i]), y = D(b[i]); d[i] = E(expr); } \
        return EMU_NEXT;                                                                \
    }
#define HTER(name, D, E, expr)                                                          \
    static int name(emu_wave *w, const emu_ins *in) {                                   \
        uint16_t *RESTRICT d = REF(in->d);                                              \
        const uint16_t *RESTRICT a = REF(in->a), *RESTRICT b = REF(in->b), *RESTRICT c = REF(in->c); \
        for (uint32_t i = 0, n = in->n; i < n; i++) {                                   \
            float x = D(a[i]), y = D(b[i]), z = D(c[i]);                                 \
            d[i] = E(expr);                                                             \
        }                                                                               \
        return EMU_NEXT;                                                                \
    }
#define SIGN(name, expr)                                                                \
    static int name(emu_wave *w, const emu_ins *in) {                                   \
        uint16_t *RESTRICT d = REF(in->d);                                              \
        const uint16_t *RESTRICT a = REF(in->a);                                        \
        for (uint32_t i = 0, n = in->n; i < n; i++) d[i] = (uint16_t)(expr);            \
        return EMU_NEXT;                                                                \
    }
static inline float fmaxf_(float x, float y) { return (float)maxnum(x, y); }
static inline float fminf_(float x, float y) { return (float)minnum(x, y); }
/* The 16-bit fma: the product of two <= 11-bit significands is exact in
 * double; the sum is rounded to odd in double (TwoSum, then the odd
 * neighbour when inexact), which keeps a later rounding to <= 51 bits
 * correct, so one rounding to the 16-bit type gives the fused result. */
static inline double add_round_odd(double a, double b) {
    double s = a + b;
    if (!isfinite(s)) return s;
    double bb = s - a, err = (a - (s - bb)) + (b - bb);
    if (err != 0.0 && !(rk_f64_bits(s) & 1u)) s = nextafter(s, err > 0 ? INFINITY : -INFINITY);
    return s;
}
static inline uint16_t fma_h(float x, float y, float z) { return rk_f64_to_f16(add_round_odd((double)x * y, z)); }
static inline uint16_t fma_b(float x, float y, float z) { return rk_f64_to_bf16(add_round_odd((double)x * y, z)); }
#define ID16(v) (v)

#define H_OPS(S, D, E, FMA)                                   \
    HBIN(fadd_##S, D, E, x + y)                               \
    HBIN(fsub_##S, D, E, x - y)                               \
    HBIN(fmul_##S, D, E, x * y)                               \
    HBIN(fdiv_##S, D, E, x / y)                               \
    SIGN(fneg_##S, a[i] ^ 0x8000u)                            \
    SIGN(fabs_##S, a[i] & 0x7fffu)                            \
    HTER(fma_##S, D, ID16, FMA(x, y, z))                      \
    HBIN(fmax_##S, D, E, fmaxf_(x, y))                        \
    HBIN(fmin_##S, D, E, fminf_(x, y))                        \
    HTER(fmax3_##S, D, E, fmaxf_(x, fmaxf_(y, z)))            \
    HTER(fmin3_##S, D, E, fminf_(x, fminf_(y, z)))
H_OPS(f16, emu_h2f, emu_f2h, fma_h)
H_OPS(bf16, emu_b2f, emu_f2b, fma_b)

/* ---- math (f32) --------------------------------------------------------------------------- */
/* rsqrt: 1/sqrt(x) in double, rounded once. */
FUN(m_exp2, float, exp2f(x))
FUN(m_exp, float, expf(x))
FUN(m_log2, float, log2f(x))
FUN(m_log, float, logf(x))
FUN(m_sqrt, float, sqrtf(x))
FUN(m_rsqrt, float, (float)(1.0 / sqrt((double)x)))
FUN(m_rcp, float, 1.0f / x)
FUN(m_tanh, float, tanhf(x))
FUN(m_sin, float, sinf(x))
FUN(m_cos, float, cosf(x))

#define FROW(E, f) [RK_OP_##E] = {f##_f16, f##_bf16, f##_f32, f##_f64}
static const emu_fn float_table[RK_OP__COUNT][4] = {
    FROW(FADD, fadd), FROW(FSUB, fsub), FROW(FMUL, fmul), FROW(FDIV, fdiv), FROW(FNEG, fneg),
    FROW(FABS, fabs), FROW(FMA, fma), FROW(FMAX, fmax), FROW(FMIN, fmin), FROW(FMAX3, fmax3),
    FROW(FMIN3, fmin3), FROW(VADD, fadd), FROW(VSUB, fsub), FROW(VMUL, fmul), FROW(VDIV, fdiv),
    FROW(VFMA, fma), FROW(VFNEG, fneg),
    [RK_OP_EXP2] = {NULL, NULL, m_exp2, NULL}, [RK_OP_EXP2_FAST] = {NULL, NULL, m_exp2, NULL},
    [RK_OP_EXP] = {NULL, NULL, m_exp, NULL}, [RK_OP_LOG2] = {NULL, NULL, m_log2, NULL},
    [RK_OP_LOG] = {NULL, NULL, m_log, NULL}, [RK_OP_SQRT] = {NULL, NULL, m_sqrt, NULL},
    [RK_OP_RSQRT] = {NULL, NULL, m_rsqrt, NULL}, [RK_OP_RCP] = {NULL, NULL, m_rcp, NULL},
    [RK_OP_RCP_FAST] = {NULL, NULL, m_rcp, NULL}, [RK_OP_TANH] = {NULL, NULL, m_tanh, NULL},
    [RK_OP_SIN] = {NULL, NULL, m_sin, NULL}, [RK_OP_COS] = {NULL, NULL, m_cos, NULL},
};
#undef FROW

emu_fn emu_float_fn(rk_opcode code, rk_scalar s) {
    int col = s == RK_S_F16 ? 0 : s == RK_S_BF16 ? 1 : s == RK_S_F32 ? 2 : s == RK_S_F64 ? 3 : -1;
    return col < 0 ? NULL : float_table[code][col];
}

/* ---- fcmp: every element read as double (exact for all four types) ---------------------- */
static inline double fld(rk_scalar s, const void *p, uint32_t i) {
    switch (s) {
    case RK_S_F16: return emu_h2f(((const uint16_t *)p)[i]);
    case RK_S_BF16: return emu_b2f(((const uint16_t *)p)[i]);
    case RK_S_F32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}
#define FCMP(name, expr)                                                               \
    static int name(emu_wave *w, const emu_ins *in) {                                  \
        uint8_t *d = REF(in->d);                                                       \
        const void *a = REF(in->a), *b = REF(in->b);                                   \
        for (uint32_t i = 0, n = in->n; i < n; i++) {                                  \
            double x = fld(in->sa, a, i), y = fld(in->sa, b, i);                       \
            bool u = isnan(x) || isnan(y);                                             \
            d[i] = (uint8_t)(expr);                                                    \
        }                                                                              \
        return EMU_NEXT;                                                               \
    }
FCMP(f_olt, !u && x < y)
FCMP(f_ole, !u && x <= y)
FCMP(f_ogt, !u && x > y)
FCMP(f_oge, !u && x >= y)
FCMP(f_oeq, !u && x == y)
FCMP(f_one, !u && x != y)
FCMP(f_ord, !u)
FCMP(f_uno, u)
FCMP(f_ult, u || x < y)
FCMP(f_ule, u || x <= y)
FCMP(f_ugt, u || x > y)
FCMP(f_uge, u || x >= y)
FCMP(f_ueq, u || x == y)
FCMP(f_une, u || x != y)

static const struct { const char *name; emu_fn fn; } fpreds[] = {
    {"olt", f_olt}, {"ole", f_ole}, {"ogt", f_ogt}, {"oge", f_oge}, {"oeq", f_oeq},
    {"one", f_one}, {"ord", f_ord}, {"uno", f_uno}, {"ult", f_ult}, {"ule", f_ule},
    {"ugt", f_ugt}, {"uge", f_uge}, {"ueq", f_ueq}, {"une", f_une},
};

emu_fn emu_fcmp_fn(const char *pred) {
    for (size_t i = 0; pred && i < RK_COUNTOF(fpreds); i++)
        if (strcmp(pred, fpreds[i].name) == 0) return fpreds[i].fn;
    return NULL;
}
