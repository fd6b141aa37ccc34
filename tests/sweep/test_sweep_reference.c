/* rocke tests — a sweep verifies every config of a shape against one
 * reference (issue 23: at big shapes the host reference per config cost more
 * than the kernels): with one worker, each shape's records are consecutive,
 * the first computes the inputs and the reference, the others reuse them;
 * a config whose checked launch is skipped (ROCKE_SWEEP_FAULT, the outputs
 * stay zero) is still reported wrong, and the next config is verified
 * again; configs with other math (a reduce op) get their own reference;
 * several workers compute at most one reference per shape each; a shape's
 * first config is checked on the host and the device, the others on the
 * device (a mismatch there goes to the host, whose message names the
 * element); the records say where each item's time went, and with --stable
 * how many rounds the timing took. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/sweep_fixture.h"

static char dir[64];
static uint64_t rows[2], cols[2];
static char shapes[160], shape_text[2][64];

static int setup(void **state) {
    (void)state;
    if (access(SWEEP_ROCKE, X_OK) || !sweep_tmpdir(dir, "reference")) return -1;
    for (int s = 0; s < 2; s++) {   /* fresh odd shapes */
        rows[s] = 2 + sweep_rand(3);
        cols[s] = 61 + 2 * sweep_rand(120) + 300 * (uint64_t)s;
        snprintf(shape_text[s], sizeof shape_text[s], "%llu,%llu", (unsigned long long)rows[s],
                 (unsigned long long)cols[s]);
    }
    snprintf(shapes, sizeof shapes, "'%s;%s'", shape_text[0], shape_text[1]);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    sweep_rmdir(dir);
    return 0;
}

static int shape_of(const rk_json *r) {
    for (int s = 0; s < 2; s++)
        if (!strcmp(sweep_str(r, "shape_text"), shape_text[s])) return s;
    fail_msg("record at shape %s", sweep_str(r, "shape_text"));
    return -1;
}

/* One worker: per shape, the first record computed the reference, the rest reused it. */
static void check_one_worker(rk_json **rec, uint32_t n, uint32_t per_shape, const char *wrong_key) {
    assert_int_equal(n, 2 * per_shape);
    uint32_t computed[2] = {0}, reused[2] = {0};
    int prev = -1;
    for (uint32_t i = 0; i < n; i++) {
        int s = shape_of(rec[i]);
        const char *ref = sweep_str(rec[i], "reference");
        bool first = s != prev;
        assert_true(prev <= s);   /* the run queue is in shape order */
        prev = s;
        assert_string_equal(ref, first ? "computed" : "reused");
        computed[s] += first;
        reused[s] += !first;
        assert_int_equal((int)sweep_num(rec[i], "seed"), 5 + s);   /* --seed 5: shape s uses 5 + s */
        bool bad = wrong_key && !strcmp(sweep_str(rec[i], "key"), wrong_key);
        assert_string_equal(sweep_str(rec[i], "status"), bad ? "wrong" : "ok");
        /* the first config of a shape checked on the host and the device, the
         * others on the device alone; one the device refuses goes to the host too */
        assert_string_equal(sweep_str(rec[i], "check"), first || bad ? "both" : "device");
        assert_int_equal(rk_json_get(rec[i], "verified")->b, !bad);
        if (bad) assert_non_null(strstr(sweep_str(rec[i], "error"), "Y[0,0]: got 0 want "));
    }
    for (int s = 0; s < 2; s++) {
        assert_int_equal(computed[s], 1);
        assert_int_equal(reused[s], per_shape - 1);
    }
}

static const char *const space = "--dtype f32 --knob chunks=0 --knob block_size=32,64 --knob unroll=1,2 --seed 5";

static void test_one_reference_per_shape(void **state) {
    (void)state;
    rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " sweep softmax --target sm_90 --shapes %s %s --devices emu -j 2 -o one",
                             shapes, space);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    rk_test_run_free(&r);
    uint32_t n;
    rk_json **rec = sweep_records(dir, "one", &n);
    check_one_worker(rec, n, 4, NULL);
    sweep_records_free(rec);
}

/* A kernel that writes nothing, at a config that reuses the reference and at
 * the one that computed it: both wrong, their neighbours verified. */
static void test_a_wrong_config_is_still_caught(void **state) {
    (void)state;
    for (int first = 0; first < 2; first++) {
        char key[128], sub[16];
        /* items in mixed radix, block_size fastest: the first item of shape 1 is block_size=32,unroll=1 */
        snprintf(key, sizeof key, "%s@%s", first ? "block_size=32,unroll=1" : "block_size=64,unroll=1",
                 shape_text[1]);
        snprintf(sub, sizeof sub, "fault%d", first);
        rk_test_run r = sweep_sh(dir, "ROCKE_SWEEP_FAULT='%s' " SWEEP_ROCKE " sweep softmax --target sm_90 "
                                 "--shapes %s %s --devices emu -j 2 -o %s", key, shapes, space, sub);
        assert_int_equal(r.rc, 1);
        assert_non_null(strstr(r.out, "8 records (1 not ok)"));
        rk_test_run_free(&r);
        uint32_t n;
        rk_json **rec = sweep_records(dir, sub, &n);
        check_one_worker(rec, n, 4, key);
        sweep_records_free(rec);
    }
}

/* reduce sum and max at one shape: the same inputs, another reference. Items
 * (block_size fastest): sum 64, sum 128, max 64, max 128. */
static void test_other_math_gets_its_own_reference(void **state) {
    (void)state;
    rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " sweep reduce --target sm_90 --dtype f32 --shapes %s "
                             "--knob block_size=64,128 --knob op=sum,max --devices emu -j 2 -o ops", shape_text[0]);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    rk_test_run_free(&r);
    uint32_t n;
    rk_json **rec = sweep_records(dir, "ops", &n);
    assert_int_equal(n, 4);
    static const char *const want[] = {"computed", "reused", "computed", "reused"};
    for (uint32_t i = 0; i < n; i++) {
        assert_string_equal(sweep_str(rec[i], "status"), "ok");
        assert_string_equal(sweep_str(rec[i], "reference"), want[i]);
        const rk_json *cfg = rk_json_get(rec[i], "config");
        assert_string_equal(sweep_str(cfg, "op"), i < 2 ? "sum" : "max");
    }
    sweep_records_free(rec);
}

/* Three workers over two shapes: each worker computes a shape's reference at
 * most once, and every record is verified. */
static void test_workers_each_hold_one(void **state) {
    (void)state;
    rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " sweep softmax --target sm_90 --shapes %s %s --knob vec=1,2 "
                             "--devices emu:3 -j 2 -o many", shapes, space);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    rk_test_run_free(&r);
    uint32_t n, computed[3][2] = {{0}}, total = 0;
    rk_json **rec = sweep_records(dir, "many", &n);
    assert_int_equal(n, 16);
    for (uint32_t i = 0; i < n; i++) {
        int w = (int)sweep_num(rec[i], "worker"), s = shape_of(rec[i]);
        assert_true(w >= 0 && w < 3);
        assert_string_equal(sweep_str(rec[i], "status"), "ok");
        bool c = !strcmp(sweep_str(rec[i], "reference"), "computed");
        computed[w][s] += c;
        total += c;
    }
    for (int w = 0; w < 3; w++)
        for (int s = 0; s < 2; s++) assert_true(computed[w][s] <= 1);
    assert_true(total >= 2 && total <= 6);
    sweep_records_free(rec);
}

/* Where an item's time went, in its record: the timing's launches and the
 * sum of its timed runs, and the phases of the worker's job. */
static void test_records_carry_the_timing(void **state) {
    (void)state;
    rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " sweep softmax --target sm_90 --shapes %s %s --warmup 2 --iters 3 "
                             "--devices emu -j 2 -o timing", shapes, space);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    rk_test_run_free(&r);
    uint32_t n;
    rk_json **rec = sweep_records(dir, "timing", &n);
    assert_int_equal(n, 8);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal((int)sweep_num(rec[i], "warmup"), 2);
        assert_int_equal((int)sweep_num(rec[i], "iters"), 3);
        assert_int_equal((int)sweep_num(rec[i], "launches"), 6);   /* the checked one, 2 warm-up, 3 timed */
        double timed = sweep_num(rec[i], "timed_ms"), ms = sweep_num(rec[i], "ms"), min = sweep_num(rec[i], "min_ms");
        /* three runs: at least three times the fastest, the median among them */
        assert_true(timed >= 3 * min * (1 - 1e-9) && ms >= min);
        double parts = 0;
        static const char *const phase[] = {"inputs_ms", "load_ms", "stage_ms", "check_ms", "time_ms"};
        /* the first item's inputs may be filled while the device opens, before its job's wall begins */
        bool ahead = rk_json_get(rec[i], "inputs_ahead")->b;
        for (int p = 0; p < 5; p++) {
            double v = sweep_num(rec[i], phase[p]);
            assert_true(v >= 0);
            if (p || !ahead) parts += v;
        }
        assert_true(sweep_num(rec[i], "time_ms") >= timed);   /* the timing's wall holds its runs */
        assert_true(sweep_num(rec[i], "job_ms") >= parts);
    }
    sweep_records_free(rec);
    /* --stable: rounds of --min-iters until the median settles, at most --iters */
    r = sweep_sh(dir, SWEEP_ROCKE " sweep softmax --target sm_90 --shapes %s %s --warmup 1 --iters 12 --stable 0.2 "
                 "--min-iters 3 --devices emu -j 2 -o stable", shapes, space);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    rk_test_run_free(&r);
    rec = sweep_records(dir, "stable", &n);
    assert_int_equal(n, 8);
    for (uint32_t i = 0; i < n; i++) {
        int iters = (int)sweep_num(rec[i], "iters"), rounds = (int)sweep_num(rec[i], "rounds");
        bool settled = rk_json_get(rec[i], "settled")->b;
        assert_int_equal(iters, 3 * rounds);
        assert_true(iters >= 3 && iters <= 12);
        if (settled) assert_true(rounds >= 2);   /* a round is compared with the one before */
        else assert_int_equal(iters, 12);         /* never settled: all of them */
        assert_int_equal((int)sweep_num(rec[i], "launches"), 2 + iters);
    }
    sweep_records_free(rec);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_carry_the_timing),
        cmocka_unit_test(test_one_reference_per_shape),
        cmocka_unit_test(test_a_wrong_config_is_still_caught),
        cmocka_unit_test(test_other_math_gets_its_own_reference),
        cmocka_unit_test(test_workers_each_hold_one),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
