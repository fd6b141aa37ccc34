/* rocke tests — activations and the fused epilogue chain: parsing, names
 * and parameters; every activation on the emulator against libm in double
 * (with inf and NaN); chains over an odd [M, N] output with bias, bias per
 * row, scale, clamp, activation, add and multiply tensors (f16, bf16 and f32
 * operands), applied to scalars and to 4-column vectors, against formulas
 * written here, on a wave64 and a warp32 target. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/tile.h"
#include "rocke/tile_epilogue.h"
#include "../src/base/fp.h"

static const char *const targets[] = {"gfx942", "sm_90"};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static double urand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* ---- text ------------------------------------------------------------------------------ */
static void test_parse_format(void **state) {
    (void)state;
    rk_epi_chain c;
    assert_int_equal(rk_epi_parse("bias,gelu,clamp(-1.5:2),add,scale,mul,bias_row,silu", &c), RK_OK);
    assert_int_equal(c.n, 8);
    assert_int_equal(c.s[1].kind, RK_EPI_ACT);
    assert_int_equal(c.s[1].act, RK_ACT_GELU_TANH);
    assert_true(c.s[2].lo == -1.5f && c.s[2].hi == 2.0f);
    char buf[256], again[256];
    rk_epi_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "bias,gelu,clamp(-1.5:2),add,scale,mul,bias_row,silu");
    rk_epi_chain c2;
    assert_int_equal(rk_epi_parse(buf, &c2), RK_OK);
    rk_epi_format(&c2, again, sizeof again);
    assert_string_equal(buf, again);
    rk_epi_tag(&c, buf, sizeof buf);
    assert_string_equal(buf, "_fbias_gelu_clampm1p5_2_add_scale_mul_bias_row_silu");
    for (const char *p = buf; *p; p++) assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_');
    assert_int_equal(rk_epi_parse("", &c), RK_OK);
    assert_int_equal(c.n, 0);
    assert_int_equal(rk_epi_parse("none", &c), RK_OK);
    assert_int_equal(c.n, 0);
    rk_epi_tag(&c, buf, sizeof buf);
    assert_string_equal(buf, "");

    assert_int_equal(rk_epi_parse("bias,gleu", &c), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "'gleu'"));
    assert_non_null(strstr(rk_error_message(), "sigmoid"));
    assert_int_equal(c.n, 0);
    assert_int_equal(rk_epi_parse("bias,,relu", &c), RK_ERR_INVALID);
    assert_int_equal(rk_epi_parse("clamp(2:1)", &c), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "LO <= HI"));
    assert_int_equal(rk_epi_parse("clamp(1)", &c), RK_ERR_INVALID);
    assert_int_equal(rk_epi_parse("clamp(nan:1)", &c), RK_ERR_INVALID);
    assert_int_equal(rk_epi_parse("relu,relu,relu,relu,relu,relu,relu,relu,relu", &c), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "at most 8"));

    assert_int_equal(rk_epi_parse("bias,add,scale,mul,bias,relu", &c), RK_OK);
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t n = rk_epi_params(&c, RK_S_BF16, ps);
    const char *want[] = {"Bias", "D0", "ldd0", "alpha", "D1", "ldd1", "Bias1"};
    assert_int_equal(n, 7);
    for (uint32_t i = 0; i < n; i++) assert_string_equal(ps[i].name, want[i]);
    assert_true(ps[0].ptr && ps[0].type == RK_S_BF16);
    assert_true(!ps[2].ptr && ps[2].type == RK_S_I32);
    assert_true(!ps[3].ptr && ps[3].type == RK_S_F32);
}

/* ---- activations ------------------------------------------------------------------------- */
static double act_want(rk_act a, double x) {
    switch (a) {
    case RK_ACT_RELU: return isnan(x) ? x : (x > 0 ? x : 0);
    case RK_ACT_SIGMOID: return 1 / (1 + exp(-x));
    case RK_ACT_SILU: return isinf(x) && x < 0 ? NAN : x / (1 + exp(-x));
    case RK_ACT_GELU_TANH: {
        if (isinf(x)) return x > 0 ? x : NAN;
        double u = sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
        return 0.5 * x * (1 + tanh(u));
    }
    case RK_ACT_TANH: return tanh(x);
    case RK_ACT__COUNT: break;
    }
    return 0;
}

static void test_activations(void **state) {
    (void)state;
    enum { NX = 200 };
    float xs[NX];
    for (int i = 0; i < NX - 6; i++) xs[i] = (float)(-12.0 + 24.0 * urand());
    xs[NX - 6] = INFINITY;
    xs[NX - 5] = -INFINITY;
    xs[NX - 4] = NAN;
    xs[NX - 3] = 0.0f;
    xs[NX - 2] = -0.0f;
    xs[NX - 1] = 90.0f;
    for (int ti = 0; ti < 2; ti++) {
        const rk_target *t = rk_target_find(targets[ti]);
        for (int a = 0; a < RK_ACT__COUNT; a++) {
            rk_kernel *k = rk_kernel_new("act");
            rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
            rk_value in = rk_add_param(k, "In", pf, NULL);
            rk_value out = rk_add_param(k, "Out", pf, NULL);
            rk_value bid = rk_build_block_id(k, 0);
            rk_value bdim = rk_build_block_dim(k, 0);
            rk_value tid = rk_build_thread_id(k, 0);
            rk_value b0 = rk_build_mul(k, bid, bdim);
            rk_value gid = rk_build_add(k, b0, tid);
            rk_value n = rk_const_i32(k, NX);
            rk_value ok = rk_build_cmp(k, "lt", gid, n);
            rk_if_begin(k, ok);
            rk_value x = rk_load_global(k, in, gid, 1);
            rk_value y = rk_tile_act(k, (rk_act)a, x);
            rk_store_global(k, out, gid, y);
            rk_if_end(k, NULL, 0);
            rk_build_return(k);
            assert_int_equal(rk_kernel_finish(k), RK_OK);
            float got[NX];
            rk_emu *e = rk_emu_new(t, NULL);
            uint64_t ai, ao;
            assert_int_equal(rk_emu_register(e, xs, sizeof xs, "In", &ai), RK_OK);
            assert_int_equal(rk_emu_register(e, got, sizeof got, "Out", &ao), RK_OK);
            void *args[] = {&ai, &ao};
            uint32_t g[3] = {(NX + 63) / 64, 1, 1}, b[3] = {64, 1, 1};
            if (rk_emu_launch(e, k, g, b, 0, args)) fail_msg("%s", rk_error_message());
            rk_emu_free(e);
            rk_kernel_free(k);
            for (int i = 0; i < NX; i++) {
                double w = act_want((rk_act)a, xs[i]);
                double r = rk_act_ref((rk_act)a, xs[i]);
                if (isnan(w)) {
                    if (!isnan(got[i])) fail_msg("%s(%g) = %g, want NaN", rk_act_name((rk_act)a), xs[i], got[i]);
                    continue;
                }
                double tol = 2e-6 * fmax(1.0, fabs(w));
                if (isinf(w) ? got[i] != w : !(fabs(got[i] - w) <= tol))
                    fail_msg("%s %s(%.9g) = %.9g, want %.9g", t->name, rk_act_name((rk_act)a), xs[i], got[i], w);
                if (!isinf(w) && !(fabs(r - w) <= 1e-12 * fmax(1.0, fabs(w))))
                    fail_msg("rk_act_ref %s(%g) = %g, want %g", rk_act_name((rk_act)a), xs[i], r, w);
            }
        }
    }
}

/* ---- chains over an [M, N] output ----------------------------------------------------------- */
enum { M = 5, N = 37, LDD = 41 };

static uint16_t to16(rk_scalar s, double v) { return s == RK_S_F16 ? rk_f64_to_f16(v) : rk_f64_to_bf16(v); }
static double from16(rk_scalar s, uint16_t h) { return s == RK_S_F16 ? rk_f16_to_f32(h) : rk_bf16_to_f32(h); }

typedef struct operand {
    void *data;       /* device bytes */
    double *val;      /* values as the device reads them */
    size_t count;
} operand;

static operand make_operand(rk_scalar s, size_t count) {
    operand o = {calloc(count, 4), calloc(count, sizeof(double)), count};
    for (size_t i = 0; i < count; i++) {
        double v = -2 + 4 * urand();
        if (s == RK_S_F32) {
            ((float *)o.data)[i] = (float)v;
            o.val[i] = (float)v;
        } else {
            uint16_t h = to16(s, v);
            ((uint16_t *)o.data)[i] = h;
            o.val[i] = from16(s, h);
        }
    }
    return o;
}

/* The chain "bias, bias_row, scale, clamp(-3:2.5), gelu, add, mul, silu"
 * written out step by step. */
static double chain_want(double x, int r, int c, const operand *bias, const operand *brow, double alpha,
                         const operand *d0, const operand *d1) {
    x += bias->val[c];
    x += brow->val[r];
    x *= alpha;
    x = fmin(fmax(x, -3.0), 2.5);
    x = 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    x += d0->val[(size_t)r * LDD + c];
    x *= d1->val[(size_t)r * LDD + c];
    return x / (1 + exp(-x));
}

static void run_chain(const rk_target *t, rk_scalar ot, uint32_t vec) {
    rk_epi_chain c;
    assert_int_equal(rk_epi_parse("bias,bias_row,scale,clamp(-3:2.5),gelu,add,mul,silu", &c), RK_OK);
    rk_kernel *k = rk_kernel_new("epi");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value in = rk_add_param(k, "X", pf, NULL);
    rk_value out = rk_add_param(k, "Y", pf, NULL);
    rk_epi_args ea;
    rk_tile_epi_add_params(k, &c, ot, &ea);
    /* thread -> (row, first column); vec columns each, the last chunk of a
     * row may be partial: then element by element */
    uint32_t cpr = (N + vec - 1) / vec;
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value cprv = rk_const_i32(k, (int32_t)cpr);
    rk_value row = rk_build_div(k, tid, cprv);
    rk_value chunk = rk_build_mod(k, tid, cprv);
    rk_value vv = rk_const_i32(k, (int32_t)vec);
    rk_value col = rk_build_mul(k, chunk, vv);
    rk_value mv = rk_const_i32(k, M);
    rk_value live = rk_build_cmp(k, "lt", row, mv);
    rk_value nv = rk_const_i32(k, N);
    rk_value rowoff = rk_build_mul(k, row, nv);
    rk_value base = rk_build_add(k, rowoff, col);
    rk_value last = rk_const_i32(k, (int32_t)(N - vec));
    rk_value whole0 = rk_build_cmp(k, "le", col, last);
    rk_value whole = rk_build_and(k, whole0, live);
    rk_if_begin(k, whole);
    {
        /* a whole vector: one apply on vec<f32 x vec> */
        rk_value e[8];
        for (uint32_t i = 0; i < vec; i++) {
            rk_value off = rk_const_i32(k, (int32_t)i);
            rk_value at = rk_build_add(k, base, off);
            e[i] = rk_load_global(k, in, at, 1);
        }
        rk_value x = vec == 1 ? e[0] : rk_build_vpack(k, e, vec);
        rk_value y = rk_tile_epi_apply(k, &ea, x, row, col, whole);
        for (uint32_t i = 0; i < vec; i++) {
            rk_value yi = vec == 1 ? y : rk_build_vextract(k, y, i);
            rk_value off = rk_const_i32(k, (int32_t)i);
            rk_value at = rk_build_add(k, base, off);
            rk_store_global(k, out, at, yi);
        }
    }
    rk_else(k, NULL, 0);
    {
        /* the tail: scalars, each with its own validity */
        for (uint32_t i = 0; i < vec; i++) {
            rk_value off = rk_const_i32(k, (int32_t)i);
            rk_value ci = rk_build_add(k, col, off);
            rk_value in_row = rk_build_cmp(k, "lt", ci, nv);
            rk_value ok = rk_build_and(k, in_row, live);
            rk_value at = rk_build_add(k, base, off);
            rk_value zero = rk_const_i32(k, 0);
            rk_value safe = rk_build_select(k, ok, at, zero);
            rk_value x = rk_load_global(k, in, safe, 1);
            rk_value y = rk_tile_epi_apply(k, &ea, x, row, ci, ok);
            rk_if_begin(k, ok);
            rk_store_global(k, out, at, y);
            rk_if_end(k, NULL, 0);
        }
    }
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    if (rk_kernel_finish(k)) fail_msg("%s", rk_builder_error(k));

    float X[M * N], Y[M * N];
    for (int i = 0; i < M * N; i++) {
        X[i] = (float)(-3 + 6 * urand());
        Y[i] = -777.0f;
    }
    operand bias = make_operand(ot, N), brow = make_operand(ot, M);
    operand d0 = make_operand(ot, (size_t)M * LDD), d1 = make_operand(ot, (size_t)M * LDD);
    float alpha = 0.75f;
    int32_t ldd = LDD;
    rk_emu *e = rk_emu_new(t, NULL);
    size_t eb = ot == RK_S_F32 ? 4 : 2;
    uint64_t ax, ay, ab, ar, a0, a1;
    assert_int_equal(rk_emu_register(e, X, sizeof X, "X", &ax), RK_OK);
    assert_int_equal(rk_emu_register(e, Y, sizeof Y, "Y", &ay), RK_OK);
    assert_int_equal(rk_emu_register(e, bias.data, N * eb, "Bias", &ab), RK_OK);
    assert_int_equal(rk_emu_register(e, brow.data, M * eb, "BiasRow", &ar), RK_OK);
    assert_int_equal(rk_emu_register(e, d0.data, (size_t)M * LDD * eb, "D0", &a0), RK_OK);
    assert_int_equal(rk_emu_register(e, d1.data, (size_t)M * LDD * eb, "D1", &a1), RK_OK);
    void *args[] = {&ax, &ay, &ab, &ar, &alpha, &a0, &ldd, &a1, &ldd};
    uint32_t threads = M * cpr;
    uint32_t g[3] = {1, 1, 1}, b[3] = {(threads + 31) / 32 * 32, 1, 1};
    if (rk_emu_launch(e, k, g, b, 0, args)) fail_msg("%s: %s", t->name, rk_error_message());
    rk_emu_free(e);
    rk_kernel_free(k);
    double ops[8];
    for (int r = 0; r < M; r++)
        for (int cc = 0; cc < N; cc++) {
            double w = chain_want(X[r * N + cc], r, cc, &bias, &brow, alpha, &d0, &d1);
            double got = Y[r * N + cc];
            if (!(fabs(got - w) <= 1e-5 * fmax(1.0, fabs(w))))
                fail_msg("%s %s vec %u: Y[%d,%d] = %.9g, want %.9g", t->name, rk_scalar_name(ot), vec, r, cc, got, w);
            /* the library's host model agrees with the formulas */
            double opv[8] = {bias.val[cc], brow.val[r], alpha, 0, 0, d0.val[(size_t)r * LDD + cc],
                             d1.val[(size_t)r * LDD + cc], 0};
            memcpy(ops, opv, sizeof ops);
            double m = rk_epi_ref(&c, X[r * N + cc], ops);
            if (!(fabs(m - w) <= 1e-12 * fmax(1.0, fabs(w)))) fail_msg("rk_epi_ref %g want %g", m, w);
        }
    operand all[] = {bias, brow, d0, d1};
    for (size_t i = 0; i < 4; i++) {
        free(all[i].data);
        free(all[i].val);
    }
}

static void test_chains(void **state) {
    (void)state;
    const rk_scalar ots[] = {RK_S_F32, RK_S_F16, RK_S_BF16};
    for (int ti = 0; ti < 2; ti++)
        for (int o = 0; o < 3; o++) {
            run_chain(rk_target_find(targets[ti]), ots[o], 1);
            run_chain(rk_target_find(targets[ti]), ots[o], 4);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_format),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_chains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
