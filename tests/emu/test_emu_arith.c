/* rocke tests — per-op conformance of the emulator's arithmetic against
 * host references written here: integer ops with wrap, every compare
 * predicate, division and shifts (and the faults they raise), IEEE floats in
 * all four types with NaN, +-inf, -0 and subnormals (16-bit references
 * computed in long double and rounded by this file's own rounding), math
 * functions, and every conversion. Odd element counts leave partial waves.
 * Layer: tests. */
#include <float.h>

#include "emu_test.h"

enum { N = 333 };

/* ---- element access --------------------------------------------------------------------- */
static uint32_t bytes_of(rk_scalar s) { return rk_scalar_bits(s) <= 8 ? 1 : rk_scalar_bits(s) / 8; }
static void put(void *buf, rk_scalar s, int i, uint64_t bits) { memcpy((uint8_t *)buf + (size_t)i * bytes_of(s), &bits, bytes_of(s)); }
static uint64_t get(const void *buf, rk_scalar s, int i) {
    uint64_t v = 0;
    memcpy(&v, (const uint8_t *)buf + (size_t)i * bytes_of(s), bytes_of(s));
    return v;
}
static int64_t sx(uint64_t v, int bits) { return bits == 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits); }
static uint64_t msk(int bits) { return bits == 64 ? ~0ull : (1ull << bits) - 1; }

/* Run op over n-element inputs of their scalar types; out gets the results. */
static rk_status run(const char *target, rk_opcode code, const rk_scalar *ins, uint32_t nin, rk_scalar outs,
                     void **in_bufs, void *out_buf, et_attr_fn attrs, void *ud) {
    rk_kernel *k = rk_kernel_new("op");
    rk_type it[4];
    size_t ib[4];
    for (uint32_t j = 0; j < nin; j++) {
        it[j] = (rk_type){ins[j]};
        ib[j] = (size_t)N * bytes_of(ins[j]);
    }
    et_op_kernel(code, it, nin, (rk_type){outs}, attrs, ud, k);
    rk_emu *e = et_emu(target, 2);
    rk_status st = et_run_op(e, k, in_bufs, ib, nin, out_buf, (size_t)N * bytes_of(outs), N);
    rk_emu_free(e);
    rk_kernel_free(k);
    return st;
}

static void set_pred(rk_kernel *k, rk_op *op, void *ud) { rk_op_set_str(k, op, "pred", ud); }

/* ---- integers ------------------------------------------------------------------------------ */
static const rk_scalar INTS[] = {RK_S_I8, RK_S_I16, RK_S_I32, RK_S_I64};

static void int_inputs(int bits, uint64_t *a, uint64_t *b) {
    int64_t mx = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1, mn = -mx - 1;
    const int64_t edge[] = {0, 1, -1, 2, -2, 3, mx, mn, mx - 1, mn + 1, 0x55, -0x56, 7};
    int ne = (int)(sizeof edge / sizeof *edge);
    for (int i = 0; i < N; i++) {
        a[i] = (uint64_t)(i < ne * ne ? edge[i % ne] : (int64_t)et_rand()) & msk(bits);
        b[i] = (uint64_t)(i < ne * ne ? edge[i / ne] : (int64_t)et_rand()) & msk(bits);
    }
}

static uint64_t ref_int(rk_opcode c, int bits, uint64_t a, uint64_t b) {
    int64_t x = sx(a, bits), y = sx(b, bits);
    uint64_t r = 0;
    switch (c) {
    case RK_OP_ADD: r = a + b; break;
    case RK_OP_SUB: r = a - b; break;
    case RK_OP_MUL: r = a * b; break;
    case RK_OP_AND: r = a & b; break;
    case RK_OP_OR: r = a | b; break;
    case RK_OP_XOR: r = a ^ b; break;
    case RK_OP_SMAX: r = (uint64_t)(x > y ? x : y); break;
    case RK_OP_SMIN: r = (uint64_t)(x < y ? x : y); break;
    case RK_OP_UMAX: r = a > b ? a : b; break;
    case RK_OP_UMIN: r = a < b ? a : b; break;
    case RK_OP_DIV: r = (uint64_t)(x / y); break;
    case RK_OP_MOD: r = (uint64_t)(x % y); break;
    case RK_OP_UDIV: r = a / b; break;
    case RK_OP_UMOD: r = a % b; break;
    case RK_OP_SHL: r = a << b; break;
    case RK_OP_LSHR: r = a >> b; break;
    case RK_OP_ASHR: r = (uint64_t)(x < 0 ? ~(~x >> b) : x >> b); break;
    default: fail();
    }
    return r & msk(bits);
}

static void t_int_binary(void **state) {
    (void)state;
    static const rk_opcode ops[] = {RK_OP_ADD, RK_OP_SUB, RK_OP_MUL, RK_OP_AND, RK_OP_OR, RK_OP_XOR, RK_OP_SMAX,
                                    RK_OP_SMIN, RK_OP_UMAX, RK_OP_UMIN, RK_OP_DIV, RK_OP_MOD, RK_OP_UDIV,
                                    RK_OP_UMOD, RK_OP_SHL, RK_OP_LSHR, RK_OP_ASHR};
    uint64_t a[N], b[N];
    uint8_t ia[N * 8], ib[N * 8], out[N * 8];
    for (size_t t = 0; t < 4; t++) {
        rk_scalar s = INTS[t];
        int bits = (int)rk_scalar_bits(s);
        for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
            rk_opcode c = ops[o];
            int_inputs(bits, a, b);
            for (int i = 0; i < N; i++) {
                bool div = c == RK_OP_DIV || c == RK_OP_MOD || c == RK_OP_UDIV || c == RK_OP_UMOD;
                if (div && b[i] == 0) b[i] = 1;
                if (div && sx(b[i], bits) == -1 && sx(a[i], bits) == sx(1ull << (bits - 1), bits)) b[i] = 2;
                if (c == RK_OP_SHL || c == RK_OP_LSHR || c == RK_OP_ASHR) b[i] %= (uint64_t)bits;
                put(ia, s, i, a[i]);
                put(ib, s, i, b[i]);
            }
            void *ins[] = {ia, ib};
            const rk_scalar ts[] = {s, s};
            rk_status st = run(t % 2 ? "sm_90" : "gfx950", c, ts, 2, s, ins, out, NULL, NULL);
            if (st) printf("%s %s: %s\n", rk_opcode_name(c), rk_scalar_name(s), rk_error_message());
            assert_int_equal(st, RK_OK);
            for (int i = 0; i < N; i++) {
                uint64_t want = ref_int(c, bits, a[i], b[i]), got = get(out, s, i);
                if (want != got)
                    printf("%s.%s(0x%llx, 0x%llx) = 0x%llx, want 0x%llx\n", rk_opcode_name(c), rk_scalar_name(s),
                           (unsigned long long)a[i], (unsigned long long)b[i], (unsigned long long)got,
                           (unsigned long long)want);
                assert_true(want == got);
            }
        }
    }
}

static void t_int_compare_not(void **state) {
    (void)state;
    static const char *const preds[] = {"lt", "le", "gt", "ge", "eq", "ne", "ult", "ule", "ugt", "uge"};
    uint64_t a[N], b[N];
    uint8_t ia[N * 8], ib[N * 8], out[N * 8];
    for (size_t t = 0; t < 4; t++) {
        rk_scalar s = INTS[t];
        int bits = (int)rk_scalar_bits(s);
        int_inputs(bits, a, b);
        for (int i = 0; i < N; i++) { put(ia, s, i, a[i]); put(ib, s, i, b[i]); }
        void *ins[] = {ia, ib};
        const rk_scalar ts[] = {s, s};
        for (int p = 0; p < 10; p++) {
            assert_int_equal(run("gfx942", RK_OP_CMP, ts, 2, RK_S_I1, ins, out, set_pred, (void *)preds[p]), RK_OK);
            for (int i = 0; i < N; i++) {
                int64_t x = sx(a[i], bits), y = sx(b[i], bits);
                bool r[] = {x < y, x <= y, x > y, x >= y, a[i] == b[i], a[i] != b[i], a[i] < b[i], a[i] <= b[i],
                            a[i] > b[i], a[i] >= b[i]};
                assert_int_equal(out[i], r[p]);
            }
        }
        assert_int_equal(run("gfx942", RK_OP_NOT, ts, 1, s, ins, out, NULL, NULL), RK_OK);
        for (int i = 0; i < N; i++) assert_true(get(out, s, i) == (~a[i] & msk(bits)));
    }
    /* i1 compares: true is -1 when signed */
    uint8_t x[N], y[N], o[N];
    for (int i = 0; i < N; i++) { x[i] = (uint8_t)(i & 1); y[i] = (uint8_t)((i >> 1) & 1); }
    void *ins[] = {x, y};
    const rk_scalar t1[] = {RK_S_I1, RK_S_I1};
    assert_int_equal(run("gfx950", RK_OP_CMP, t1, 2, RK_S_I1, ins, o, set_pred, "lt"), RK_OK);
    for (int i = 0; i < N; i++) assert_int_equal(o[i], (x[i] ? -1 : 0) < (y[i] ? -1 : 0));
    assert_int_equal(run("gfx950", RK_OP_ADD, t1, 2, RK_S_I1, ins, o, NULL, NULL), RK_OK);
    for (int i = 0; i < N; i++) assert_int_equal(o[i], (x[i] + y[i]) & 1);
}

/* Faults name the op, the lane and the values. */
static void t_int_faults(void **state) {
    (void)state;
    int32_t a[N], b[N], out[N];
    for (int i = 0; i < N; i++) { a[i] = i; b[i] = 1; }
    void *ins[] = {a, b};
    const rk_scalar ts[] = {RK_S_I32, RK_S_I32};
    b[200] = 0;
    et_expect_error(run("gfx950", RK_OP_DIV, ts, 2, RK_S_I32, ins, out, NULL, NULL), RK_ERR_DEVICE,
                    "division by zero", "'arith.div'", "workgroup (1,0,0)", "lane 8 ", "thread (72,0,0)", NULL);
    b[200] = -1;
    a[200] = INT32_MIN;
    et_expect_error(run("sm_80", RK_OP_MOD, ts, 2, RK_S_I32, ins, out, NULL, NULL), RK_ERR_DEVICE,
                    "signed division overflow", NULL);
    b[200] = 32;
    et_expect_error(run("gfx942", RK_OP_SHL, ts, 2, RK_S_I32, ins, out, NULL, NULL), RK_ERR_DEVICE,
                    "shift amount 32 is not below the width 32", NULL);
    b[200] = -1;
    et_expect_error(run("gfx942", RK_OP_LSHR, ts, 2, RK_S_I32, ins, out, NULL, NULL), RK_ERR_DEVICE,
                    "shift amount 4294967295", NULL);
    /* lanes beyond n (inactive) may hold anything: no fault */
    for (int i = 0; i < N; i++) b[i] = 1;
    assert_int_equal(run("gfx942", RK_OP_UDIV, ts, 2, RK_S_I32, ins, out, NULL, NULL), RK_OK);
}

/* ---- floats ----------------------------------------------------------------------------------- */
static const rk_scalar FLOATS[] = {RK_S_F16, RK_S_BF16, RK_S_F32, RK_S_F64};

/* This file's own rounding of an exact long double to a 16-bit format (RNE,
 * subnormals, overflow to inf), independent of base/fp.c. */
static uint16_t round16(long double v, int ebits, int mbits) {
    int bias = (1 << (ebits - 1)) - 1, emax = (1 << ebits) - 1;
    uint16_t sign = signbit(v) ? (uint16_t)(1u << (ebits + mbits)) : 0;
    if (isnan(v)) return (uint16_t)(sign | (emax << mbits) | (1u << (mbits - 1)));
    long double a = fabsl(v);
    if (isinf(a)) return (uint16_t)(sign | (emax << mbits));
    if (a == 0) return sign;
    int e;
    frexpl(a, &e);
    int exp = e - 1 < 1 - bias ? 1 - bias : e - 1;
    long double q = nearbyintl(ldexpl(a, mbits - exp));     /* RNE in the default mode */
    long long m = (long long)q;
    if (m >= (2ll << mbits)) { m >>= 1; exp++; }
    int biased = m >= (1ll << mbits) ? exp + bias : 0;
    if (biased >= emax) return (uint16_t)(sign | (emax << mbits));
    return (uint16_t)(sign | (biased << mbits) | (m & ((1 << mbits) - 1)));
}
static long double dec(rk_scalar s, uint64_t b) {
    switch (s) {
    case RK_S_F16: return rk_f16_to_f32((uint16_t)b);
    case RK_S_BF16: return rk_bf16_to_f32((uint16_t)b);
    case RK_S_F32: return rk_bits_f32((uint32_t)b);
    default: return rk_bits_f64(b);
    }
}
static uint64_t enc(rk_scalar s, long double v) {
    switch (s) {
    case RK_S_F16: return round16(v, 5, 10);
    case RK_S_BF16: return round16(v, 8, 7);
    case RK_S_F32: return rk_f32_bits((float)v);
    default: return rk_f64_bits((double)v);
    }
}
static bool same(rk_scalar s, uint64_t a, uint64_t b) {
    long double x = dec(s, a), y = dec(s, b);
    return (isnan(x) && isnan(y)) || a == b;
}

/* Edge values and random ones (scale limits the exponent range). */
static void float_inputs(rk_scalar s, uint64_t *v, int scale, int salt) {
    long double mx = s == RK_S_F16 ? 65504.0L : s == RK_S_BF16 ? 3.3895313892515355e38L : s == RK_S_F32 ? FLT_MAX : DBL_MAX;
    long double mnorm = s == RK_S_F16 ? 0x1p-14L : s == RK_S_BF16 || s == RK_S_F32 ? 0x1p-126L : 0x1p-1022L;
    long double msub = s == RK_S_F16 ? 0x1p-24L : s == RK_S_BF16 ? 0x1p-133L : s == RK_S_F32 ? 0x1p-149L : 0x1p-1074L;
    const long double edge[] = {0.0L, -0.0L, 1.0L, -1.0L, INFINITY, -INFINITY, NAN, mx, -mx, mnorm, msub, -msub,
                                1.5L, 0.1L, -3.0L, 2.0L};
    int ne = (int)(sizeof edge / sizeof *edge);
    for (int i = 0; i < N; i++) {
        int j = (i * 7 + salt) % N;
        long double x = j < ne * ne ? edge[salt ? j / ne : j % ne]
                                    : ldexpl((long double)et_unit(), (int)(et_rand() % (2 * (unsigned)scale + 1)) - scale);
        v[i] = enc(s, x);
    }
}

static long double maxnum(long double x, long double y, bool mx) {
    if (isnan(x)) return y;
    if (isnan(y)) return x;
    if (x == y) return (signbit(x) != 0) == mx ? y : x;
    return mx ? (x > y ? x : y) : (x < y ? x : y);
}

static void t_float_ops(void **state) {
    (void)state;
    static const rk_opcode bin[] = {RK_OP_FADD, RK_OP_FSUB, RK_OP_FMUL, RK_OP_FDIV, RK_OP_FMAX, RK_OP_FMIN};
    static const rk_opcode un[] = {RK_OP_FNEG, RK_OP_FABS};
    static const rk_opcode ter[] = {RK_OP_FMA, RK_OP_FMAX3, RK_OP_FMIN3};
    uint64_t a[N], b[N], c[N];
    uint8_t ia[N * 8], ib[N * 8], ic[N * 8], out[N * 8];
    for (int t = 0; t < 4; t++) {
        rk_scalar s = FLOATS[t];
        const rk_scalar ts[] = {s, s, s};
        for (size_t o = 0; o < 6 + 2 + 3; o++) {
            rk_opcode op = o < 6 ? bin[o] : o < 8 ? un[o - 6] : ter[o - 8];
            uint32_t nin = o < 6 ? 2 : o < 8 ? 1 : 3;
            /* fma: keep exponents small so the long double reference is exact */
            int scale = op == RK_OP_FMA ? 6 : 30;
            float_inputs(s, a, scale, 0);
            float_inputs(s, b, scale, 1);
            float_inputs(s, c, scale, 3);
            for (int i = 0; i < N; i++) { put(ia, s, i, a[i]); put(ib, s, i, b[i]); put(ic, s, i, c[i]); }
            void *ins[] = {ia, ib, ic};
            rk_status st = run(t % 2 ? "gfx90a" : "sm_90a", op, ts, nin, s, ins, out, NULL, NULL);
            if (st) printf("%s %s: %s\n", rk_opcode_name(op), rk_scalar_name(s), rk_error_message());
            assert_int_equal(st, RK_OK);
            for (int i = 0; i < N; i++) {
                long double x = dec(s, a[i]), y = dec(s, b[i]), z = dec(s, c[i]), r = 0;
                switch (op) {
                case RK_OP_FADD: r = s == RK_S_F64 ? (long double)((double)x + (double)y) : x + y; break;
                case RK_OP_FSUB: r = s == RK_S_F64 ? (long double)((double)x - (double)y) : x - y; break;
                case RK_OP_FMUL: r = s == RK_S_F64 ? (long double)((double)x * (double)y) : x * y; break;
                case RK_OP_FDIV: r = s == RK_S_F64 ? (long double)((double)x / (double)y) : x / y; break;
                case RK_OP_FMAX: r = maxnum(x, y, true); break;
                case RK_OP_FMIN: r = maxnum(x, y, false); break;
                case RK_OP_FNEG: r = -x; break;
                case RK_OP_FABS: r = fabsl(x); break;
                case RK_OP_FMA:
                    r = s == RK_S_F64 ? (long double)fma((double)x, (double)y, (double)z)
                      : s == RK_S_F32 ? (long double)fmaf((float)x, (float)y, (float)z) : x * y + z;
                    break;
                case RK_OP_FMAX3: r = maxnum(x, maxnum(y, z, true), true); break;
                default: r = maxnum(x, maxnum(y, z, false), false); break;
                }
                uint64_t want = enc(s, r), got = get(out, s, i);
                if (op == RK_OP_FNEG || op == RK_OP_FABS)   /* sign-bit ops keep NaN payloads */
                    want = op == RK_OP_FNEG ? a[i] ^ (1ull << (rk_scalar_bits(s) - 1)) : a[i] & msk((int)rk_scalar_bits(s) - 1);
                if (!same(s, want, got))
                    printf("%s.%s(%Lg, %Lg, %Lg) = 0x%llx, want 0x%llx\n", rk_opcode_name(op), rk_scalar_name(s), x, y,
                           z, (unsigned long long)got, (unsigned long long)want);
                assert_true(same(s, want, got));
            }
        }
    }
}

static void t_float_compare(void **state) {
    (void)state;
    static const char *const preds[] = {"olt", "ole", "ogt", "oge", "oeq", "one", "ord",
                                        "uno", "ult", "ule", "ugt", "uge", "ueq", "une"};
    uint64_t a[N], b[N];
    uint8_t ia[N * 8], ib[N * 8], out[N];
    for (int t = 0; t < 4; t++) {
        rk_scalar s = FLOATS[t];
        float_inputs(s, a, 3, 0);
        float_inputs(s, b, 3, 1);
        for (int i = 0; i < N; i++) { put(ia, s, i, a[i]); put(ib, s, i, b[i]); }
        void *ins[] = {ia, ib};
        const rk_scalar ts[] = {s, s};
        for (int p = 0; p < 14; p++) {
            assert_int_equal(run("gfx950", RK_OP_FCMP, ts, 2, RK_S_I1, ins, out, set_pred, (void *)preds[p]), RK_OK);
            for (int i = 0; i < N; i++) {
                long double x = dec(s, a[i]), y = dec(s, b[i]);
                bool u = isnan(x) || isnan(y);
                bool r[] = {!u && x < y, !u && x <= y, !u && x > y, !u && x >= y, !u && x == y, !u && x != y, !u,
                            u, u || x < y, u || x <= y, u || x > y, u || x >= y, u || x == y, u || x != y};
                assert_int_equal(out[i], r[p]);
            }
        }
    }
}

/* Math functions are the C library's (docs/emulator.md): bit-identical. */
static void t_math(void **state) {
    (void)state;
    static const rk_opcode ops[] = {RK_OP_EXP2, RK_OP_EXP2_FAST, RK_OP_EXP, RK_OP_LOG2, RK_OP_LOG, RK_OP_SQRT,
                                    RK_OP_RSQRT, RK_OP_RCP, RK_OP_RCP_FAST, RK_OP_TANH, RK_OP_SIN, RK_OP_COS};
    float a[N], out[N];
    const float edge[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 128.0f, -150.0f, 0.5f, 1e-40f, 100.0f};
    for (int i = 0; i < N; i++) a[i] = i < 12 ? edge[i] : 20.0f * et_unit();
    void *ins[] = {a};
    const rk_scalar ts[] = {RK_S_F32};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        assert_int_equal(run("gfx942", ops[o], ts, 1, RK_S_F32, ins, out, NULL, NULL), RK_OK);
        for (int i = 0; i < N; i++) {
            float x = a[i], w;
            switch (ops[o]) {
            case RK_OP_EXP2: case RK_OP_EXP2_FAST: w = exp2f(x); break;
            case RK_OP_EXP: w = expf(x); break;
            case RK_OP_LOG2: w = log2f(x); break;
            case RK_OP_LOG: w = logf(x); break;
            case RK_OP_SQRT: w = sqrtf(x); break;
            case RK_OP_RSQRT: w = (float)(1.0 / sqrt((double)x)); break;
            case RK_OP_RCP: case RK_OP_RCP_FAST: w = 1.0f / x; break;
            case RK_OP_TANH: w = tanhf(x); break;
            case RK_OP_SIN: w = sinf(x); break;
            default: w = cosf(x); break;
            }
            assert_true(et_same_f32(out[i], w));
        }
    }
}

/* ---- conversions ------------------------------------------------------------------------------ */
static void set_target(rk_kernel *k, rk_op *op, void *ud) {
    (void)ud;
    if (op && rk_attrs_get(&op->attrs, "target") == NULL && (op->code == RK_OP_CAST_F32_TO))
        rk_op_set_type(k, op, "target", rk_value_type(k, op->out[0]));
}

static void t_int_float_conversions(void **state) {
    (void)state;
    uint8_t in[N * 8], out[N * 8];
    for (int ti = 0; ti < 4; ti++)
        for (int tf = 0; tf < 4; tf++) {
            rk_scalar si = INTS[ti], sf = FLOATS[tf];
            int bits = (int)rk_scalar_bits(si);
            uint64_t a[N], b[N];
            int_inputs(bits, a, b);
            for (int i = 0; i < N; i++) put(in, si, i, a[i]);
            void *ins[] = {in};
            for (int u = 0; u < 2; u++) {
                rk_opcode op = u ? RK_OP_UITOFP : RK_OP_SITOFP;
                rk_status st = run("gfx950", op, &si, 1, sf, ins, out, NULL, NULL);
                if (st) printf("%s %s->%s: %s\n", rk_opcode_name(op), rk_scalar_name(si), rk_scalar_name(sf), rk_error_message());
                assert_int_equal(st, RK_OK);
                for (int i = 0; i < N; i++) {
                    long double x = u ? (long double)a[i] : (long double)sx(a[i], bits);   /* exact: 64-bit significand */
                    assert_true(same(sf, enc(sf, x), get(out, sf, i)));
                }
            }
            /* float -> int: truncation of in-range values */
            uint64_t f[N];
            for (int i = 0; i < N; i++) {
                int lb = bits > 24 && sf != RK_S_F64 ? 20 : bits - 2;
                long double lim = ldexpl(1.0L, sf == RK_S_F16 && lb > 14 ? 14 : lb);
                long double x = (long double)et_unit() * lim;
                f[i] = enc(sf, x);
                put(in, sf, i, f[i]);
            }
            assert_int_equal(run("sm_80", RK_OP_FPTOSI, &sf, 1, si, ins, out, NULL, NULL), RK_OK);
            for (int i = 0; i < N; i++) assert_true(sx(get(out, si, i), bits) == (int64_t)truncl(dec(sf, f[i])));
        }
    /* out of range and NaN are faults, named with the value */
    float fa[N];
    int32_t ia[N];
    for (int i = 0; i < N; i++) fa[i] = (float)i;
    fa[77] = 3e9f;
    void *ins[] = {fa};
    rk_scalar f32 = RK_S_F32;
    et_expect_error(run("gfx950", RK_OP_FPTOSI, &f32, 1, RK_S_I32, ins, ia, NULL, NULL), RK_ERR_DEVICE,
                    "fptosi of 3000000000 does not fit in i32", NULL);
    fa[77] = -1.0f;
    et_expect_error(run("gfx950", RK_OP_FPTOUI, &f32, 1, RK_S_I32, ins, ia, NULL, NULL), RK_ERR_DEVICE,
                    "fptoui of -1", NULL);
    fa[77] = -0.75f;       /* truncates to 0: fine */
    assert_int_equal(run("gfx950", RK_OP_FPTOUI, &f32, 1, RK_S_I32, ins, ia, NULL, NULL), RK_OK);
    assert_int_equal(ia[77], 0);
}

static void t_float_float_conversions(void **state) {
    (void)state;
    uint8_t in[N * 8], out[N * 8];
    uint64_t a[N];
    /* fpext / fptrunc between every pair of widths */
    for (int s = 0; s < 4; s++)
        for (int d = 0; d < 4; d++) {
            rk_scalar ss = FLOATS[s], sd = FLOATS[d];
            uint32_t bs = rk_scalar_bits(ss), bd = rk_scalar_bits(sd);
            if (bs == bd) continue;
            float_inputs(ss, a, 30, 2);
            for (int i = 0; i < N; i++) put(in, ss, i, a[i]);
            void *ins[] = {in};
            assert_int_equal(run("gfx942", bd > bs ? RK_OP_FPEXT : RK_OP_FPTRUNC, &ss, 1, sd, ins, out, NULL, NULL),
                             RK_OK);
            for (int i = 0; i < N; i++) assert_true(same(sd, enc(sd, dec(ss, a[i])), get(out, sd, i)));
        }
    /* the upstream-named conversions and rint */
    float f[N];
    const float edge[] = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 65520.0f, 65519.0f, 1e-8f, -0.0f, NAN, INFINITY, 3.0e38f};
    for (int i = 0; i < N; i++) f[i] = i < 12 ? edge[i] : ldexpf(et_unit(), (int)(et_rand() % 40) - 20);
    void *ins[] = {f};
    rk_scalar f32 = RK_S_F32;
    uint16_t h[N];
    float r[N];
    assert_int_equal(run("sm_90", RK_OP_TRUNC_F32_TO_F16, &f32, 1, RK_S_F16, ins, h, NULL, NULL), RK_OK);
    for (int i = 0; i < N; i++) assert_int_equal(h[i], round16(f[i], 5, 10));
    assert_int_equal(run("sm_90", RK_OP_TRUNC_F32_TO_BF16, &f32, 1, RK_S_BF16, ins, h, NULL, NULL), RK_OK);
    for (int i = 0; i < N; i++) assert_true(same(RK_S_BF16, h[i], round16(f[i], 8, 7)));
    assert_int_equal(run("sm_90", RK_OP_CAST_F32_TO, &f32, 1, RK_S_BF16, ins, h, set_target, NULL), RK_OK);
    for (int i = 0; i < N; i++) assert_true(same(RK_S_BF16, h[i], round16(f[i], 8, 7)));
    assert_int_equal(run("sm_90", RK_OP_RINT_F32, &f32, 1, RK_S_F32, ins, r, NULL, NULL), RK_OK);
    for (int i = 0; i < N; i++) assert_true(et_same_f32(r[i], nearbyintf(f[i])));
    for (int i = 0; i < N; i++) h[i] = (uint16_t)et_rand();
    void *hin[] = {h};
    rk_scalar f16 = RK_S_F16;
    assert_int_equal(run("gfx90a", RK_OP_CAST_TO_F32, &f16, 1, RK_S_F32, hin, r, NULL, NULL), RK_OK);
    for (int i = 0; i < N; i++) assert_true(et_same_f32(r[i], rk_f16_to_f32(h[i])));
    int32_t iv[N];
    for (int i = 0; i < N; i++) iv[i] = (int32_t)et_rand();
    void *iin[] = {iv};
    rk_scalar i32 = RK_S_I32;
    assert_int_equal(run("gfx90a", RK_OP_SITOFP_F32, &i32, 1, RK_S_F32, iin, r, NULL, NULL), RK_OK);
    for (int i = 0; i < N; i++) assert_true(r[i] == (float)iv[i]);
}

static void t_int_int_conversions(void **state) {
    (void)state;
    uint8_t in[N * 8], out[N * 8];
    uint64_t a[N], b[N];
    for (int s = 0; s < 4; s++)
        for (int d = 0; d < 4; d++) {
            if (s == d) continue;
            rk_scalar ss = INTS[s], sd = INTS[d];
            int bs = (int)rk_scalar_bits(ss), bd = (int)rk_scalar_bits(sd);
            int_inputs(bs, a, b);
            for (int i = 0; i < N; i++) put(in, ss, i, a[i]);
            void *ins[] = {in};
            for (int sign = 0; sign < 2; sign++) {
                rk_opcode op = bd < bs ? RK_OP_TRUNC : sign ? RK_OP_SEXT : RK_OP_ZEXT;
                if (bd < bs && sign) continue;
                assert_int_equal(run("gfx950", op, &ss, 1, sd, ins, out, NULL, NULL), RK_OK);
                for (int i = 0; i < N; i++) {
                    uint64_t want = (sign ? (uint64_t)sx(a[i], bs) : a[i]) & msk(bd);
                    assert_true(get(out, sd, i) == want);
                }
            }
        }
    /* i1 sign-extends to all ones */
    uint8_t one[N];
    int32_t r[N];
    for (int i = 0; i < N; i++) one[i] = (uint8_t)(i & 1);
    void *ins[] = {one};
    rk_scalar i1 = RK_S_I1;
    assert_int_equal(run("sm_90", RK_OP_SEXT, &i1, 1, RK_S_I32, ins, r, NULL, NULL), RK_OK);
    for (int i = 0; i < N; i++) assert_int_equal(r[i], (i & 1) ? -1 : 0);
}

/* fp8/bf8 in the target's dialect, and the saturating f32 -> i8. */
static void t_fp8_conversions(void **state) {
    (void)state;
    float f[N], r[N];
    uint8_t q[N];
    for (int i = 0; i < N; i++) f[i] = ldexpf(et_unit(), (int)(et_rand() % 30) - 12);
    f[0] = NAN; f[1] = INFINITY; f[2] = -1e6f; f[3] = -0.0f; f[4] = 1e-9f;
    const struct { const char *t; rk_scalar fp8, bf8; } dialects[] = {
        {"gfx942", RK_S_FP8E4M3FNUZ, RK_S_BF8E5M2FNUZ}, {"gfx950", RK_S_FP8E4M3, RK_S_BF8E5M2}, {"sm_90", RK_S_FP8E4M3, RK_S_BF8E5M2}};
    rk_scalar f32 = RK_S_F32;
    for (int d = 0; d < 3; d++)
        for (int w = 0; w < 2; w++) {
            rk_scalar s = w ? dialects[d].bf8 : dialects[d].fp8;
            rk_fp8_format fm = s == RK_S_FP8E4M3 ? RK_FP8_E4M3 : s == RK_S_BF8E5M2 ? RK_FP8_E5M2
                             : s == RK_S_FP8E4M3FNUZ ? RK_FP8_E4M3_FNUZ : RK_FP8_E5M2_FNUZ;
            void *ins[] = {f};
            assert_int_equal(run(dialects[d].t, w ? RK_OP_CVT_F32_TO_BF8 : RK_OP_CVT_F32_TO_FP8, &f32, 1, s, ins, q,
                                 NULL, NULL), RK_OK);
            rk_fp8_nan style = d == 2 ? RK_FP8_NAN_CANONICAL : RK_FP8_NAN_SIGNED;   /* NVIDIA: 0x7f */
            for (int i = 0; i < N; i++) assert_int_equal(q[i], rk_f64_to_fp8_nan(f[i], fm, style));
            void *qin[] = {q};
            assert_int_equal(run(dialects[d].t, w ? RK_OP_CVT_BF8_TO_F32 : RK_OP_CVT_FP8_TO_F32, &s, 1, RK_S_F32, qin, r,
                                 NULL, NULL), RK_OK);
            for (int i = 0; i < N; i++) assert_true(et_same_f32(r[i], rk_fp8_to_f32(q[i], fm)));
        }
    int8_t i8[N];
    const float e2[] = {127.5f, 126.5f, -128.5f, -129.0f, 1e10f, -1e10f, NAN, 0.5f, 1.5f, -0.5f};
    for (int i = 0; i < 10; i++) f[i] = e2[i];
    void *ins[] = {f};
    assert_int_equal(run("gfx950", RK_OP_CVT_F32_TO_I8_SAT, &f32, 1, RK_S_I8, ins, i8, NULL, NULL), RK_OK);
    for (int i = 0; i < N; i++) {
        float x = nearbyintf(f[i]);
        int want = isnan(f[i]) ? 0 : x > 127 ? 127 : x < -128 ? -128 : (int)x;
        assert_int_equal(i8[i], want);
    }
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_int_binary),
        cmocka_unit_test(t_int_compare_not),
        cmocka_unit_test(t_int_faults),
        cmocka_unit_test(t_float_ops),
        cmocka_unit_test(t_float_compare),
        cmocka_unit_test(t_math),
        cmocka_unit_test(t_int_float_conversions),
        cmocka_unit_test(t_float_float_conversions),
        cmocka_unit_test(t_int_int_conversions),
        cmocka_unit_test(t_fp8_conversions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
