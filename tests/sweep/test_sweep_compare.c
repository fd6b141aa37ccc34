/* rocke tests — the sweep's device check (tools/cmd_sweep_compare.c) on the
 * emulator against the host check's rule computed here in double: random
 * references at odd sizes with elements inside the tolerance, far outside
 * it, NaN and infinities; the bad count, the first bad index and the largest
 * difference agree with the host's, for f32, f16 and bf16, waves of 32 and
 * 64, a grid that strides and one that covers n at once. Where the host
 * passes an element at exactly its tolerance the device may refuse it
 * (then the sweep asks the host), never the other way round. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../tools/cmd_sweep_compare.c"
#include "base/fp.h"
#include "support/sweep_fixture.h"

typedef struct host_verdict {
    uint32_t bad, first;
    double max;
} host_verdict;

static double rounded(rk_scalar t, double v) {
    return t == RK_S_F32 ? (double)(float)v : t == RK_S_F16 ? rk_f16_to_f32(rk_f64_to_f16(v))
                                                            : rk_bf16_to_f32(rk_f64_to_bf16(v));
}

static void put(rk_scalar t, void *buf, uint32_t i, double v) {
    if (t == RK_S_F32) ((float *)buf)[i] = (float)v;
    else ((uint16_t *)buf)[i] = t == RK_S_F16 ? rk_f64_to_f16(v) : rk_f64_to_bf16(v);
}

static double rnd(void) { return (double)sweep_rand(1u << 30) / (double)(1u << 30); }

/* The check on the device: got and the reference uploaded, the kernel run
 * over `blocks` blocks (0: the sweep's grid), res read back. */
static void device_check(rk_device *dev, const rk_target *tg, rk_scalar t, const void *got, const double *want,
                         const double *tol, uint32_t n, uint32_t blocks, int32_t res[3]) {
    size_t eb = t == RK_S_F32 ? 4 : 2;
    void *w = malloc(n * eb);
    float *tf = malloc(n * sizeof *tf);
    assert_non_null(w);
    assert_non_null(tf);
    for (uint32_t i = 0; i < n; i++) {
        put(t, w, i, want[i]);
        tf[i] = sw_compare_tol(tol[i]);
        assert_true((double)tf[i] <= tol[i]);   /* never looser than the host's */
    }
    rk_kernel *k = sw_compare_kernel(t, tg);
    assert_non_null(k);
    rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = k, .target = tg->name};
    rk_module *mod = NULL;
    rk_function *fn = NULL;
    assert_int_equal(rk_module_load_image(dev, &img, &mod), RK_OK);
    assert_int_equal(rk_module_function(mod, rk_kernel_name(k), &fn), RK_OK);
    rk_devptr dg, dw, dt, dr;
    assert_int_equal(rk_mem_alloc(dev, n * eb, &dg), RK_OK);
    assert_int_equal(rk_mem_alloc(dev, n * eb, &dw), RK_OK);
    assert_int_equal(rk_mem_alloc(dev, n * sizeof(float), &dt), RK_OK);
    assert_int_equal(rk_mem_alloc(dev, 12, &dr), RK_OK);
    res[0] = 0, res[1] = INT32_MAX, res[2] = 0;
    assert_int_equal(rk_mem_copy_htod(dev, dg, got, n * eb), RK_OK);
    assert_int_equal(rk_mem_copy_htod(dev, dw, w, n * eb), RK_OK);
    assert_int_equal(rk_mem_copy_htod(dev, dt, tf, n * sizeof(float)), RK_OK);
    assert_int_equal(rk_mem_copy_htod(dev, dr, res, 12), RK_OK);
    uint32_t grid[3], block[3];
    sw_compare_grid(n, grid, block);
    if (blocks) grid[0] = blocks;
    int32_t nn = (int32_t)n;
    void *args[] = {&dg, &dw, &dt, &dr, &nn};
    rk_status st = rk_launch(fn, grid, block, 0, NULL, args);
    if (st) fprintf(stderr, "%s\n", rk_error_message());
    assert_int_equal(st, RK_OK);
    assert_int_equal(rk_mem_copy_dtoh(dev, res, dr, 12), RK_OK);
    rk_mem_free(dev, dg);
    rk_mem_free(dev, dw);
    rk_mem_free(dev, dt);
    rk_mem_free(dev, dr);
    rk_module_unload(mod);
    rk_kernel_free(k);
    free(w);
    free(tf);
}

/* The host check's rule (src/kernels/problem_check.c), written out here. */
static host_verdict host_check(rk_scalar t, const double *got, const double *want, const double *tol, uint32_t n) {
    host_verdict v = {0, UINT32_MAX, 0};
    for (uint32_t i = 0; i < n; i++) {
        double g = got[i], w = rounded(t, want[i]);
        double d = (g == w || (isnan(g) && isnan(w))) ? 0.0 : fabs(g - w);
        if (isnan(d)) d = INFINITY;
        if (d > v.max) v.max = d;
        if (d > tol[i] && !v.bad++) v.first = i;
    }
    return v;
}

static void one_case(rk_device *dev, const rk_target *tg, rk_scalar t, uint32_t n, uint32_t blocks, uint32_t nbad) {
    double *want = calloc(n, sizeof *want), *tol = calloc(n, sizeof *tol), *gotd = calloc(n, sizeof *gotd);
    void *got = calloc(n, 4);
    assert_true(want && tol && gotd && got);
    for (uint32_t i = 0; i < n; i++) {
        want[i] = (rnd() - 0.5) * 8.0;
        tol[i] = 1e-2 * (0.5 + rnd());
        /* most within half the tolerance: never near the boundary */
        double g = rounded(t, want[i]) + (rnd() - 0.5) * tol[i] * 0.9;
        put(t, got, i, g);
    }
    /* NaN both sides passes; NaN or infinity on one side does not */
    uint32_t pn = sweep_rand(n);
    want[pn] = NAN;
    put(t, got, pn, NAN);
    for (uint32_t b = 0; b < nbad; b++) {
        uint32_t j = sweep_rand(n);
        if (j == pn) continue;
        int kind = (int)sweep_rand(4);
        double g = kind == 0 ? NAN : kind == 1 ? INFINITY : rounded(t, want[j]) + (kind == 2 ? 3 : -5) * tol[j];
        put(t, got, j, g);
    }
    for (uint32_t i = 0; i < n; i++) {
        gotd[i] = t == RK_S_F32 ? ((float *)got)[i] : t == RK_S_F16 ? rk_f16_to_f32(((uint16_t *)got)[i])
                                                                    : rk_bf16_to_f32(((uint16_t *)got)[i]);
        /* rounding to the type moved some differences: none may sit at its tolerance (the boundary test's case) */
        double d = fabs(gotd[i] - rounded(t, want[i]));
        if (fabs(d - tol[i]) < 1e-3 * tol[i]) tol[i] *= 1.01;
    }
    host_verdict h = host_check(t, gotd, want, tol, n);
    int32_t res[3];
    device_check(dev, tg, t, got, want, tol, n, blocks, res);
    float mx;
    memcpy(&mx, &res[2], sizeof mx);
    if ((uint32_t)res[0] != h.bad || (h.bad && (uint32_t)res[1] != h.first))
        fprintf(stderr, "%s n %u: device %d bad (first %d), host %u (first %u)\n", rk_scalar_name(t), n, res[0],
                res[1], h.bad, h.first);
    assert_int_equal(res[0], (int32_t)h.bad);
    if (h.bad) assert_int_equal(res[1], (int32_t)h.first);
    else assert_int_equal(res[1], INT32_MAX);
    if (isinf(h.max)) assert_true(isinf(mx));
    else assert_true(fabs(mx - h.max) <= 1e-6 * h.max);
    free(want);
    free(tol);
    free(gotd);
    free(got);
}

static void test_agrees_with_the_host(void **state) {
    (void)state;
    static const char *const targets[] = {"sm_90", "gfx942"};   /* waves of 32 and 64 */
    static const rk_scalar types[] = {RK_S_F32, RK_S_F16, RK_S_BF16};
    for (uint32_t ti = 0; ti < 2; ti++) {
        const rk_target *tg = rk_target_find(targets[ti]);
        assert_non_null(tg);
        char which[32];
        snprintf(which, sizeof which, "emu:%s", targets[ti]);
        rk_device *dev = NULL;
        assert_int_equal(rk_device_open(which, &dev), RK_OK);
        for (uint32_t k = 0; k < 3; k++) {
            uint32_t n = 1001 + 2 * sweep_rand(1500);
            one_case(dev, tg, types[k], n, 0, 0);                       /* all pass */
            one_case(dev, tg, types[k], n, 0, 1 + sweep_rand(6));       /* a few fail */
            one_case(dev, tg, types[k], n + 256, 1 + sweep_rand(2), 3); /* 1-2 blocks stride over n */
        }
        rk_device_close(dev);
    }
}

/* At exactly its tolerance the host passes an element: the device may
 * refuse it (the sweep then asks the host) but passes nothing the host
 * refuses, one float step over the tolerance included. */
static void test_conservative_at_the_boundary(void **state) {
    (void)state;
    const rk_target *tg = rk_target_find("sm_90");
    rk_device *dev = NULL;
    assert_int_equal(rk_device_open("emu:sm_90", &dev), RK_OK);
    enum { N = 700 };
    double want[N], tol[N], gotd[N];
    float got[N];
    for (uint32_t i = 0; i < N; i++) {
        want[i] = (double)(float)((rnd() - 0.5) * 4.0);
        float g = (float)(want[i] + 0.01 * (0.5 + rnd()));
        gotd[i] = g;
        got[i] = g;
        double d = fabs(gotd[i] - want[i]);
        /* half at exactly the difference (host: pass), half just under it (host: fail) */
        tol[i] = i % 2 ? d : d * (1.0 - 1e-12);
    }
    host_verdict h = host_check(RK_S_F32, gotd, want, tol, N);
    assert_int_equal(h.bad, N / 2);
    int32_t res[3];
    device_check(dev, tg, RK_S_F32, got, want, tol, N, 0, res);
    assert_true(res[0] >= (int32_t)h.bad);   /* every host failure, maybe more */
    assert_int_equal(res[1], 0);
    rk_device_close(dev);
}

int main(void) {
    sweep_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agrees_with_the_host),
        cmocka_unit_test(test_conservative_at_the_boundary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
