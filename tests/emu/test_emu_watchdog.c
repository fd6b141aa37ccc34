/* rocke tests — the emulator's watchdog and overflow check (issue 20 item
 * 11): a step limit per wave and a launch timeout stop a runaway kernel and
 * name the op and loop it was in; signed overflow of the nsw ops is an error
 * when asked for and wraps by default. Layer: tests (emu). */
#include "emu_test.h"

/* out[tid] = sum of k for k in [0, n) (i64), one wave. */
static rk_kernel *sum_kernel(void) {
    rk_kernel *k = rk_kernel_new("spin");
    rk_value out = et_ptr_param(k, "out", RK_T_I64);
    rk_value n = rk_add_param(k, "n", RK_T_I64, NULL);
    rk_value z = rk_const_i64(k, 0), one = rk_const_i64(k, 1);
    rk_value acc, res;
    rk_set_loc(k, "spin.c:4");
    rk_value iv = rk_for_begin(k, z, n, one, "i", 1, &z, NULL, &acc);
    rk_set_loc(k, "spin.c:5");
    rk_value nx = rk_build_add(k, acc, iv);
    rk_for_end(k, &nx, 1, &res);
    rk_value t = rk_build_thread_id(k, 0);
    rk_store_global(k, out, t, res);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static rk_emu *emu_with(uint64_t max_steps, double timeout_s, bool overflow) {
    rk_emu_options o = rk_emu_options_default();
    o.threads = 1;
    o.max_steps = max_steps;
    o.timeout_s = timeout_s;
    o.check_overflow = overflow;
    rk_emu *e = rk_emu_new(rk_target_find("gfx942"), &o);
    assert_non_null(e);
    return e;
}

/* A loop to INT64_MAX stops at the step limit, naming the loop and the op;
 * the limit is exact: a launch that needs S instructions runs with
 * max_steps = S and stops with S - 1. */
static void t_step_limit(void **state) {
    (void)state;
    rk_kernel *k = sum_kernel();
    int64_t out[64];
    rk_emu *e = emu_with(0, 0, false);
    uint64_t d = et_buf(e, out, sizeof out, "out");
    int64_t n = 1 + (int64_t)(et_rand() % 500);
    void *args[] = {&d, &n};
    rk_emu_stats s0, s1;
    rk_emu_stats_get(e, &s0);
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    rk_emu_stats_get(e, &s1);
    for (int i = 0; i < 64; i++) assert_int_equal(out[i], n * (n - 1) / 2);
    uint64_t steps = s1.instructions - s0.instructions;       /* one wave */
    rk_emu_free(e);

    e = emu_with(steps, 0, false);
    d = et_buf(e, out, sizeof out, "out");
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    rk_emu_free(e);
    e = emu_with(steps - 1, 0, false);
    d = et_buf(e, out, sizeof out, "out");
    char what[64];
    snprintf(what, sizeof what, "executed %llu instructions", (unsigned long long)(steps - 1));
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, what, "step limit", NULL);

    n = INT64_MAX;
    /* the wave stops in the loop: at its head or latch, or in its body (then the loop is named too) */
    et_expect_error(et_launch(e, k, 4, 1, 1, 128, 1, 1, args), RK_ERR_DEVICE, "the step limit (max_steps",
                    "op #2 'scf.for' @\"spin.c:4\"", "workgroup (0,0,0) wave 0", NULL);
    rk_emu_free(e);
    /* of three consecutive limits deep in the loop, one stops in its body (add, yield): the loop is named too */
    int in_body = 0;
    for (uint64_t lim = 300; lim < 303; lim++) {
        e = emu_with(lim, 0, false);
        d = et_buf(e, out, sizeof out, "out");
        assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE);
        in_body += strstr(rk_error_message(), "inside the loop op #2 'scf.for' @\"spin.c:4\"; at op #") != NULL &&
                   strstr(rk_error_message(), "@\"spin.c:5\"") != NULL;
        rk_emu_free(e);
    }
    assert_true(in_body >= 1);
    rk_kernel_free(k);
}

/* With no step limit the timeout stops it, on every host thread. */
static void t_timeout(void **state) {
    (void)state;
    rk_kernel *k = sum_kernel();
    int64_t out[64];
    rk_emu_options o = rk_emu_options_default();
    o.threads = 2;
    o.max_steps = 0;
    o.timeout_s = 0.2;
    rk_emu *e = rk_emu_new(rk_target_find("sm_90"), &o);
    assert_non_null(e);
    uint64_t d = et_buf(e, out, sizeof out, "out");
    int64_t n = INT64_MAX;
    void *args[] = {&d, &n};
    rk_emu_stats s;
    et_expect_error(et_launch(e, k, 8, 1, 1, 32, 1, 1, args), RK_ERR_DEVICE, "ran past its timeout of 0.2 s",
                    "op #2 'scf.for' @\"spin.c:4\"", NULL);
    rk_emu_stats_get(e, &s);
    assert_true(s.seconds < 10.0);
    rk_emu_free(e);
    o.timeout_s = -1;
    assert_null(rk_emu_new(rk_target_find("sm_90"), &o));
    assert_non_null(strstr(rk_error_message(), "timeout_s"));
    rk_kernel_free(k);
}

/* rk_emu_new(t, NULL) takes the limits from the environment (rocke run). */
static void t_environment(void **state) {
    (void)state;
    rk_kernel *k = sum_kernel();
    int64_t out[64];
    setenv("ROCKE_EMU_MAX_STEPS", "200", 1);
    rk_emu *e = rk_emu_new(rk_target_find("gfx950"), NULL);
    assert_non_null(e);
    uint64_t d = et_buf(e, out, sizeof out, "out");
    int64_t n = 1000;
    void *args[] = {&d, &n};
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, "executed 200 instructions", NULL);
    rk_emu_free(e);
    setenv("ROCKE_EMU_MAX_STEPS", "lots", 1);
    assert_null(rk_emu_new(rk_target_find("gfx950"), NULL));
    assert_non_null(strstr(rk_error_message(), "ROCKE_EMU_MAX_STEPS='lots'"));
    unsetenv("ROCKE_EMU_MAX_STEPS");
    setenv("ROCKE_EMU_TIMEOUT", "-3", 1);
    assert_null(rk_emu_new(rk_target_find("gfx950"), NULL));
    assert_non_null(strstr(rk_error_message(), "ROCKE_EMU_TIMEOUT='-3'"));
    unsetenv("ROCKE_EMU_TIMEOUT");
    e = rk_emu_new(rk_target_find("gfx950"), NULL);       /* defaults again: the loop finishes */
    d = et_buf(e, out, sizeof out, "out");
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    assert_int_equal(out[7], 1000 * 999 / 2);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* ---- nsw overflow ----------------------------------------------------------------------- */
/* out[i] = a[i] OP b[i] over n elements of type t. */
static rk_kernel *binop_kernel(int which, rk_type t) {
    rk_kernel *k = rk_kernel_new("nsw");
    rk_value a = et_ptr_param(k, "a", t), b = et_ptr_param(k, "b", t), out = et_ptr_param(k, "out", t);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value i = et_gid(k);
    rk_value ok = rk_build_cmp(k, "lt", i, n);
    rk_if_begin(k, ok);
    rk_value x = rk_load_global(k, a, i, 1);
    rk_value y = rk_load_global(k, b, i, 1);
    rk_value r = which == 0 ? rk_build_add(k, x, y) : which == 1 ? rk_build_sub(k, x, y) : rk_build_mul(k, x, y);
    rk_store_global(k, out, i, r);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    return k;
}

/* The exact result in 128 bits, its wrapped value and whether it fits. */
static bool exact(int which, int64_t x, int64_t y, uint32_t bits, int64_t *wrapped) {
    __int128 r = which == 0 ? (__int128)x + y : which == 1 ? (__int128)x - y : (__int128)x * y;
    __int128 lo = -((__int128)1 << (bits - 1)), hi = ((__int128)1 << (bits - 1)) - 1;
    unsigned __int128 m = bits == 64 ? ~(unsigned __int128)0 >> 64 : (((unsigned __int128)1 << bits) - 1);
    unsigned __int128 u = (unsigned __int128)r & m;
    *wrapped = (int64_t)(u << (64 - bits)) >> (64 - bits);    /* sign-extend */
    return r >= lo && r <= hi;
}

/* The first n results (es bytes each, bw bits) sign-extended equal want. */
static void expect_results(const uint8_t *o, uint32_t es, uint32_t bw, const int64_t *want, int n) {
    for (int i = 0; i < n; i++) {
        int64_t got = 0;
        memcpy(&got, o + (size_t)i * es, es);
        got = (int64_t)((uint64_t)got << (64 - bw)) >> (64 - bw);
        assert_int_equal(got, want[i]);
    }
}

static void t_nsw_overflow(void **state) {
    (void)state;
    static const char *const sym[] = {" + ", " - ", " * "};
    const rk_type types[] = {RK_T_I8, RK_T_I16, RK_T_I32, RK_T_I64};
    const uint32_t bits[] = {8, 16, 32, 64};
    enum { N = 200 };
    for (int which = 0; which < 3; which++)
        for (int ti = 0; ti < 4; ti++) {
            rk_kernel *k = binop_kernel(which, types[ti]);
            uint32_t bw = bits[ti], es = bw / 8;
            uint8_t a[N * 8], b[N * 8], o[N * 8];
            int64_t xa[N], xb[N], want[N];
            int first_bad = -1;
            for (int i = 0; i < N; i++) {
                /* small operands mostly, a few near the range ends */
                uint64_t r = et_rand();
                int sh = (r & 3) == 0 ? 0 : (int)bw / 2 + 1;
                xa[i] = (int64_t)(et_rand() << (64 - bw)) >> (64 - bw) >> sh;
                xb[i] = (int64_t)(et_rand() << (64 - bw)) >> (64 - bw) >> sh;
                if (!exact(which, xa[i], xb[i], bw, &want[i]) && first_bad < 0) first_bad = i;
                memcpy(a + (size_t)i * es, &xa[i], es);            /* little-endian low bytes */
                memcpy(b + (size_t)i * es, &xb[i], es);
            }
            assert_true(first_bad >= 0);                             /* the sweep reaches an overflow */
            int32_t n = N;
            rk_emu *e = emu_with(RK_EMU_DEFAULT_MAX_STEPS, 0, false);
            uint64_t da = et_buf(e, a, (size_t)N * es, "a"), db = et_buf(e, b, (size_t)N * es, "b");
            uint64_t dout = et_buf(e, o, (size_t)N * es, "out");
            void *args[] = {&da, &db, &dout, &n};
            /* default: two's complement wrap, as the host computes it */
            assert_int_equal(et_launch(e, k, (N + 63) / 64, 1, 1, 64, 1, 1, args), RK_OK);
            expect_results(o, es, bw, want, N);
            rk_emu_free(e);
            /* asked for: the first overflowing element is reported with its operands */
            e = emu_with(RK_EMU_DEFAULT_MAX_STEPS, 0, true);
            da = et_buf(e, a, (size_t)N * es, "a");
            db = et_buf(e, b, (size_t)N * es, "b");
            dout = et_buf(e, o, (size_t)N * es, "out");
            char ops[96], lane[48], width[16];
            snprintf(ops, sizeof ops, "%lld%s%lld does not fit", (long long)xa[first_bad], sym[which], (long long)xb[first_bad]);
            snprintf(lane, sizeof lane, "workgroup (%d,0,0) wave 0 lane %d ", first_bad / 64, first_bad % 64);
            snprintf(width, sizeof width, "fit i%u", bw);
            et_expect_error(et_launch(e, k, (N + 63) / 64, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE,
                            "signed overflow of an nsw op", ops, width, lane, NULL);
            /* the same kernel without the overflowing elements runs, with the same results */
            n = first_bad;
            if (n > 0) {
                assert_int_equal(et_launch(e, k, ((uint32_t)n + 63) / 64, 1, 1, 64, 1, 1, args), RK_OK);
                expect_results(o, es, bw, want, n);
            }
            rk_emu_free(e);
            rk_kernel_free(k);
        }
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_step_limit),
        cmocka_unit_test(t_timeout),
        cmocka_unit_test(t_environment),
        cmocka_unit_test(t_nsw_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
