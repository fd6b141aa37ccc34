/* rocke tests — how a device must agree with the emulator: the rule read
 * from a kernel's ops (rk_emu_tolerance_of: exact, approximate math, sums in
 * the device's order) and the element comparison (rk_emu_compare) against
 * bounds computed here from the documented formula, on fresh random data.
 * Layer: tests. */
#include <float.h>

#include "emu_test.h"

static rk_kernel *kernel_of(int what) {
    rk_kernel *k = rk_kernel_new("tol");
    assert_non_null(k);
    rk_value a = rk_add_param(k, "a", RK_T_F32, NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value pf = rk_add_param(k, "pf", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value pi = rk_add_param(k, "pi", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value s = rk_build_fadd(k, a, a);
    rk_value m = rk_build_add(k, n, n);
    (void)s, (void)m;
    if (what == 1) {
        rk_value e = rk_build_exp2_fast(k, a);
        rk_value t = rk_build_tanh(k, e);
        (void)t;
    }
    if (what == 2) (void)rk_build_global_atomic_add(k, pf, n, a);
    if (what == 3) (void)rk_build_global_atomic_add(k, pi, n, n);
    et_finish(k);
    return k;
}

static void test_rule_from_ops(void **state) {
    (void)state;
    rk_emu_tolerance t;
    rk_kernel *k = kernel_of(0);
    assert_int_equal(rk_emu_tolerance_of(k, 0, &t), RK_OK);
    assert_true(t.exact);
    assert_int_equal(t.approx_ulps + t.order_ulps, 0);
    rk_kernel_free(k);

    k = kernel_of(1);   /* two approximate op kinds: 8 ulp each */
    assert_int_equal(rk_emu_tolerance_of(k, 0, &t), RK_OK);
    assert_false(t.exact);
    assert_int_equal(t.approx_ulps, 16);
    assert_int_equal(t.order_ulps, 0);
    assert_non_null(strstr(t.why, "math.exp2_fast (approximate on the device)"));
    assert_non_null(strstr(t.why, "math.tanh"));
    rk_kernel_free(k);

    uint64_t K = 1 + et_rand() % 5000;
    k = kernel_of(2);   /* a float atomic: one ulp per term of the reordered sum */
    assert_int_equal(rk_emu_tolerance_of(k, K, &t), RK_OK);
    assert_false(t.exact);
    assert_int_equal(t.order_ulps, K);
    assert_non_null(strstr(t.why, "memref.global_atomic_add (summed in the device's order)"));
    assert_int_equal(rk_emu_tolerance_of(k, 0, &t), RK_OK);
    assert_int_equal(t.order_ulps, 64);
    rk_kernel_free(k);

    k = kernel_of(3);   /* an integer atomic is exact in any order */
    assert_int_equal(rk_emu_tolerance_of(k, K, &t), RK_OK);
    assert_true(t.exact);
    rk_kernel_free(k);
    assert_int_equal(rk_emu_tolerance_of(NULL, 0, &t), RK_ERR_INVALID);
}

static double ulp_f32(double x) {
    int e;
    frexp(fabs(x), &e);
    return ldexp(1.0, e - 24);
}

static void test_exact_compare(void **state) {
    (void)state;
    uint64_t n = 1 + et_rand() % 3000, at = et_rand() % n;
    float *a = malloc(n * 4), *b = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++) a[i] = b[i] = et_unit();
    a[at] = nextafterf(a[at], 2.0f);   /* one ulp */
    rk_emu_tolerance exact = {.exact = true};
    rk_emu_diff d;
    assert_int_equal(rk_emu_compare(&exact, RK_S_F32, a, b, n, &d), RK_OK);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.first, at);
    assert_true(d.got == a[at] && d.want == b[at] && d.bound == 0);
    assert_int_equal(d.total, n);
    /* two NaNs agree whatever their payloads; -0 and +0 are different bits */
    a[at] = rk_bits_f32(0x7fc00001u);
    b[at] = rk_bits_f32(0xffc00000u);
    assert_int_equal(rk_emu_compare(&exact, RK_S_F32, a, b, n, &d), RK_OK);
    assert_int_equal(d.count, 0);
    a[at] = -0.0f;
    b[at] = 0.0f;
    assert_int_equal(rk_emu_compare(&exact, RK_S_F32, a, b, n, &d), RK_OK);
    assert_int_equal(d.count, 1);
    free(a);
    free(b);
}

static void test_ulp_bound(void **state) {
    (void)state;
    uint64_t n = 2 + et_rand() % 3000, at = et_rand() % n, big = (at + 1) % n;
    float *a = malloc(n * 4), *b = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++) a[i] = b[i] = 0.5f * et_unit();
    a[big] = b[big] = -1.75f;   /* the tensor's largest magnitude */
    uint32_t ulps = 1 + (uint32_t)(et_rand() % 40);
    rk_emu_tolerance tol = {.approx_ulps = ulps};
    double bound = ulps * ulp_f32(1.75) + FLT_MIN;
    rk_emu_diff d;
    a[at] = (float)(b[at] + 0.9 * bound);
    assert_int_equal(rk_emu_compare(&tol, RK_S_F32, a, b, n, &d), RK_OK);
    assert_int_equal(d.count, 0);
    a[at] = (float)(b[at] - 1.1 * bound - ulp_f32(b[at]));
    assert_int_equal(rk_emu_compare(&tol, RK_S_F32, a, b, n, &d), RK_OK);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.first, at);
    assert_true(fabs(d.bound - bound) <= 1e-3 * bound);
    free(a);
    free(b);

    /* bf16: one bf16 ulp at the element on top (the rounding may go either way) */
    uint16_t x[3] = {rk_f32_to_bf16(1.0f), rk_f32_to_bf16(-0.375f), rk_f32_to_bf16(0.25f)}, y[3];
    memcpy(y, x, sizeof x);
    y[1] = (uint16_t)(x[1] + 1);
    rk_emu_tolerance none = {.approx_ulps = 0, .order_ulps = 1};
    assert_int_equal(rk_emu_compare(&none, RK_S_BF16, y, x, 3, &d), RK_OK);
    assert_int_equal(d.count, 0);
    y[1] = (uint16_t)(x[1] + 2);
    assert_int_equal(rk_emu_compare(&none, RK_S_BF16, y, x, 3, &d), RK_OK);
    assert_int_equal(d.count, 1);
    rk_emu_tolerance exact = {.exact = true};
    y[1] = (uint16_t)(x[1] + 1);
    assert_int_equal(rk_emu_compare(&exact, RK_S_BF16, y, x, 3, &d), RK_OK);
    assert_int_equal(d.count, 1);

    /* integers of an inexact kernel: a rounding boundary, at most 1 apart */
    int8_t p[4] = {3, -7, 0, 127}, q[4] = {4, -7, -1, 127};
    assert_int_equal(rk_emu_compare(&none, RK_S_I8, q, p, 4, &d), RK_OK);
    assert_int_equal(d.count, 0);
    q[1] = -9;
    assert_int_equal(rk_emu_compare(&none, RK_S_I8, q, p, 4, &d), RK_OK);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.first, 1);
    assert_int_equal(rk_emu_compare(&none, RK_S_NONE, q, p, 4, &d), RK_ERR_INVALID);
}

/* The test-only fault: the named element, the top mantissa bit. */
static void test_fault_option(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("touch");
    rk_value y = rk_add_param(k, "Y", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    (void)y;
    et_finish(k);
    rk_emu_options o = rk_emu_options_default();
    o.test_fault = "Y:5";
    rk_emu *e = rk_emu_new(rk_target_find("sm_90"), &o);
    assert_non_null(e);
    float buf[8];
    for (int i = 0; i < 8; i++) buf[i] = 1.0f + (float)i;
    uint64_t a = et_buf(e, buf, sizeof buf, "Y");
    void *args[] = {&a};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 32, 1, 1, args), RK_OK);
    for (int i = 0; i < 8; i++)
        assert_true(rk_f32_bits(buf[i]) == (rk_f32_bits(1.0f + (float)i) ^ (i == 5 ? 1u << 22 : 0u)));
    rk_emu_free(e);
    o.test_fault = "Y:-1";
    assert_null(rk_emu_new(rk_target_find("sm_90"), &o));
    assert_non_null(strstr(rk_error_message(), "is not PARAM:INDEX"));
    rk_kernel_free(k);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_from_ops),
        cmocka_unit_test(test_exact_compare),
        cmocka_unit_test(test_ulp_bound),
        cmocka_unit_test(test_fault_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
