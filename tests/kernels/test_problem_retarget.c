/* rocke tests — one problem for several instances (what a sweep's configs of
 * one shape share): the reference computed once (rk_problem_reference)
 * against a softmax computed here in double, the same bits at one thread
 * and at several; rk_problem_check_ref equal to rk_problem_check; a problem
 * re-aimed at another config (rk_problem_retarget) keeps its inputs and
 * zeroes its outputs (rk_problem_reaim leaves them), and is refused, naming why, for an instance with
 * other math (out_dtype, a reduce op), a shape it cannot take, a family that
 * fills per instance, and a reference of another shape. ROCKE_SEED=N replays. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rocke/kernels.h"
#include "rocke/target.h"

static uint64_t seed;

static int setup(void **state) {
    (void)state;
    const char *e = getenv("ROCKE_SEED");
    seed = e && *e ? strtoull(e, NULL, 10) : (uint64_t)time(NULL);
    fprintf(stderr, "test_problem_retarget: ROCKE_SEED=%llu\n", (unsigned long long)seed);
    srand((unsigned)seed);
    return 0;
}

/* fam with the given knobs ("a=1,b=2"), tuned for s (the given knobs locked). */
static void instance(const char *fam, const char *knobs, const rk_shape *s, rk_instance *in) {
    rk_family_id f;
    assert_int_equal(rk_family_parse(fam, &f), RK_OK);
    assert_int_equal(rk_instance_default(f, in), RK_OK);
    uint64_t locked = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", knobs);
    for (char *kv = strtok(buf, ","); kv; kv = strtok(NULL, ",")) {
        char *eq = strchr(kv, '=');
        uint32_t ix;
        *eq = 0;
        if (rk_instance_set(in, kv, eq + 1, &ix)) fail_msg("%s: %s", kv, rk_error_message());
        locked |= 1ull << ix;
    }
    if (rk_instance_tune(in, rk_target_find("sm_90"), s, locked)) fail_msg("%s %s: %s", fam, knobs, rk_error_message());
}

static int out_index(const rk_problem *p, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, name)) return (int)i;
    fail_msg("no parameter %s", name);
    return -1;
}

static double f32_at(const rk_host_buf *b, uint64_t i) { return ((const float *)b->data)[i]; }

static void test_reference_once_against_host_softmax(void **state) {
    (void)state;
    /* more rows than one parallel chunk holds, an odd row length */
    rk_shape s = {.rank = 2, .dim = {700 + (uint64_t)(rand() % 200), 201 + 2 * (uint64_t)(rand() % 100)}};
    rk_instance in;
    instance("softmax", "dtype=f32,out_dtype=f32,block_size=64,chunks=0", &s, &in);
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, &s, seed), RK_OK);
    rk_problem_ref r1, r4;
    setenv("ROCKE_HOST_THREADS", "1", 1);
    assert_int_equal(rk_problem_reference(&p, &r1), RK_OK);
    setenv("ROCKE_HOST_THREADS", "4", 1);
    assert_int_equal(rk_problem_reference(&p, &r4), RK_OK);
    unsetenv("ROCKE_HOST_THREADS");
    int x = out_index(&p, "X"), y = out_index(&p, "Y");
    const uint64_t M = s.dim[0], N = s.dim[1];
    assert_null(r1.want[x]);
    assert_int_equal(r1.count[y], M * N);
    assert_memory_equal(r1.want[y], r4.want[y], M * N * sizeof(double));
    assert_memory_equal(r1.tol[y], r4.tol[y], M * N * sizeof(double));
    for (uint64_t row = 0; row < M; row++) {
        double mx = -INFINITY, sum = 0;
        for (uint64_t j = 0; j < N; j++) mx = fmax(mx, f32_at(&p.buf[x], row * N + j));
        for (uint64_t j = 0; j < N; j++) sum += exp(f32_at(&p.buf[x], row * N + j) - mx);
        for (uint64_t j = 0; j < N; j++) {
            double w = exp(f32_at(&p.buf[x], row * N + j) - mx) / sum, got = r4.want[y][row * N + j];
            if (fabs(got - w) > 1e-13 * w) fail_msg("Y[%llu,%llu]: %.17g, want %.17g", (unsigned long long)row,
                                                    (unsigned long long)j, got, w);
            assert_true(r4.tol[y][row * N + j] > 0);
        }
    }
    /* outputs as a kernel would write them: the reference rounded to f32, two of them off */
    float *out = p.buf[y].data;
    for (uint64_t i = 0; i < M * N; i++) out[i] = (float)r4.want[y][i];
    uint64_t bad1 = (uint64_t)rand() % (M * N), bad2 = (bad1 + 1 + (uint64_t)rand() % (M * N - 1)) % (M * N);
    out[bad1] += 0.25f;
    out[bad2] = -out[bad2] - 0.5f;
    rk_problem_diff a, b;
    assert_int_equal(rk_problem_check_ref(&p, &r4, &a), RK_OK);
    assert_int_equal(rk_problem_check(&p, &b), RK_OK);
    assert_int_equal(a.bad, 2);
    assert_int_equal(a.total, M * N);
    assert_int_equal(b.bad, a.bad);
    assert_string_equal(a.first_bad, b.first_bad);
    assert_true(a.max_abs_diff == b.max_abs_diff && a.max_abs_diff >= 0.25);
    char at[64];
    uint64_t first = bad1 < bad2 ? bad1 : bad2;
    snprintf(at, sizeof at, "Y[%llu,%llu]: got ", (unsigned long long)(first / N), (unsigned long long)(first % N));
    assert_non_null(strstr(a.first_bad, at));
    rk_problem_ref_free(&r1);
    rk_problem_ref_free(&r4);
    rk_problem_free(&p);
}

static void test_retarget_keeps_inputs_zeroes_outputs(void **state) {
    (void)state;
    rk_shape s = {.rank = 2, .dim = {3 + (uint64_t)(rand() % 9), 101 + 2 * (uint64_t)(rand() % 200)}};
    rk_instance a, b;
    instance("softmax", "dtype=f32,out_dtype=f32,block_size=64,vec=2,chunks=0", &s, &a);
    instance("softmax", "dtype=f32,out_dtype=f32,block_size=128,vec=4,chunks=0,unroll=2", &s, &b);
    rk_problem p, fresh;
    assert_int_equal(rk_problem_init(&p, &a, &s, seed), RK_OK);
    assert_int_equal(rk_problem_init(&fresh, &b, &s, seed), RK_OK);   /* what b alone would fill */
    int x = out_index(&p, "X"), y = out_index(&p, "Y");
    memset(p.buf[y].data, 0x5a, p.buf[y].bytes);   /* a run's outputs */
    assert_int_equal(rk_problem_retarget(&p, &b), RK_OK);
    assert_memory_equal(&p.inst, &b, sizeof b);
    assert_memory_equal(p.buf[x].data, fresh.buf[x].data, p.buf[x].bytes);
    assert_memory_equal(p.buf[y].data, fresh.buf[y].data, p.buf[y].bytes);   /* zeros */
    /* rk_problem_reaim: the same aim, the buffers left to the caller */
    memset(p.buf[y].data, 0x5a, p.buf[y].bytes);
    assert_int_equal(rk_problem_reaim(&p, &a), RK_OK);
    assert_memory_equal(&p.inst, &a, sizeof a);
    assert_memory_equal(p.buf[x].data, fresh.buf[x].data, p.buf[x].bytes);
    for (size_t i = 0; i < p.buf[y].bytes; i++) assert_int_equal(((unsigned char *)p.buf[y].data)[i], 0x5a);
    assert_int_equal(rk_problem_reaim(&p, &b), RK_OK);
    rk_problem_ref ra, rb;
    assert_int_equal(rk_problem_reference(&p, &ra), RK_OK);
    assert_int_equal(rk_problem_reference(&fresh, &rb), RK_OK);
    assert_memory_equal(ra.want[y], rb.want[y], p.buf[y].count * sizeof(double));
    rk_problem_ref_free(&ra);
    rk_problem_ref_free(&rb);
    rk_problem_free(&fresh);
    rk_problem_free(&p);
}

typedef struct refusal { const char *fam, *held, *other, *msg; } refusal;

static void test_retarget_refusals(void **state) {
    (void)state;
    static const refusal cases[] = {
        {"softmax", "dtype=f32,out_dtype=f32,chunks=0", "dtype=f32,out_dtype=f16,chunks=0",
         "(knob out_dtype is f16, the problem's f32)"},
        {"reduce", "dtype=f32,out_dtype=f32,op=sum", "dtype=f32,out_dtype=f32,op=max",
         "(knob op is max, the problem's sum)"},
        {"layernorm", "dtype=f32,out_dtype=f32,chunks=0", "dtype=f32,out_dtype=f32,chunks=0,residual=true",
         "(knob residual is true, the problem's false)"},
        {"softmax", "dtype=f32,out_dtype=f32,chunks=0", "dtype=f32,out_dtype=f32,chunks=1,vec=1,block_size=32",
         "row capacity"},
        {"gemm", "dtype=f16", "dtype=f16", "gemm fills a problem per instance"},   /* even the same instance */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const refusal *r = &cases[c];
        bool gemm = !strcmp(r->fam, "gemm");
        rk_shape s = gemm ? (rk_shape){.rank = 3, .dim = {64, 64, 64}} : (rk_shape){.rank = 2, .dim = {4, 301}};
        rk_instance held, other;
        instance(r->fam, r->held, &s, &held);
        instance(r->fam, r->other, &s, &other);
        rk_problem p;
        assert_int_equal(rk_problem_init(&p, &held, &s, seed), RK_OK);
        for (int reaim = 0; reaim < 2; reaim++) {   /* rk_problem_reaim refuses the same */
            rk_status st = reaim ? rk_problem_reaim(&p, &other) : rk_problem_retarget(&p, &other);
            if (st == RK_OK || !strstr(rk_error_message(), r->msg))
                fail_msg("%s %s -> %s: status %d, '%s' (want '%s')", r->fam, r->held, r->other, (int)st,
                         rk_error_message(), r->msg);
            assert_memory_equal(&p.inst, &held, sizeof held);   /* unchanged */
        }
        rk_problem_free(&p);
    }
}

static void test_reference_of_another_shape(void **state) {
    (void)state;
    rk_shape s1 = {.rank = 2, .dim = {4, 301}}, s2 = {.rank = 2, .dim = {4, 303}};
    rk_instance in;
    instance("softmax", "dtype=f32,out_dtype=f32,chunks=0", &s1, &in);
    rk_problem p1, p2;
    assert_int_equal(rk_problem_init(&p1, &in, &s1, seed), RK_OK);
    assert_int_equal(rk_problem_init(&p2, &in, &s2, seed), RK_OK);
    rk_problem_ref r;
    assert_int_equal(rk_problem_reference(&p1, &r), RK_OK);
    rk_problem_diff d;
    assert_int_equal(rk_problem_check_ref(&p2, &r, &d), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "the reference is not of this problem (entry 1 Y: 1212 elements, "
                                                "the reference 1204)"));
    rk_problem_ref_free(&r);
    rk_problem_free(&p1);
    rk_problem_free(&p2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_once_against_host_softmax),
        cmocka_unit_test(test_retarget_keeps_inputs_zeroes_outputs),
        cmocka_unit_test(test_retarget_refusals),
        cmocka_unit_test(test_reference_of_another_shape),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
