/* rocke tests — several workers sharing one queue (`--devices emu:4`,
 * emulator workers standing in for GPUs): the items spread over the
 * workers, none runs twice, and when one worker is killed mid-sweep its item
 * is run by another and the sweep still ends with every record. */
#include <setjmp.h>
#include <signal.h>
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

static int setup(void **state) {
    (void)state;
    if (access(SWEEP_ROCKE, X_OK) || !sweep_tmpdir(dir, "workers")) return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    sweep_rmdir(dir);
    return 0;
}

/* Every key once, every record ok; returns how many distinct workers ran them. */
static uint32_t check_records(const char *sub, uint32_t want) {
    uint32_t n, used = 0;
    rk_json **rec = sweep_records(dir, sub, &n);
    assert_int_equal(n, want);
    for (uint32_t i = 0; i < n; i++) {
        assert_string_equal(sweep_str(rec[i], "status"), "ok");
        int w = (int)sweep_num(rec[i], "worker");
        assert_true(w >= 0 && w < 4);
        used |= 1u << w;
        for (uint32_t j = 0; j < i; j++) assert_string_not_equal(sweep_str(rec[i], "key"), sweep_str(rec[j], "key"));
    }
    sweep_records_free(rec);
    return (uint32_t)__builtin_popcount(used);
}

static const char *const space = "--dtype f32 --shapes '24,3001;5,1999' --knob chunks=0 --knob block_size=64,128,256 "
                                 "--knob unroll=1,2,4";

static void test_items_spread_over_workers(void **state) {
    (void)state;
    rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " sweep softmax --target sm_90 %s --devices emu:4 -j 2 -o spread", space);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "on emu:4 (4 workers)"));
    rk_test_run_free(&r);
    assert_true(check_records("spread", 18) >= 2);
}

/* The pid of worker w once the run phase has started (DIR/workers.json). */
static pid_t worker_pid(const char *path, uint32_t w) {
    for (int i = 0; i < 10000; i++, usleep(1000)) {
        FILE *f = fopen(path, "r");
        if (!f) continue;
        char text[4096];
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = 0;
        rk_json *j = rk_json_parse(text, n);
        const rk_json *ws = rk_json_get(j, "workers");
        pid_t pid = ws && w < ws->n ? (pid_t)sweep_num(ws->items[w], "pid") : 0;
        rk_json_free(j);
        if (pid > 0) return pid;
    }
    return 0;
}

static void test_a_killed_worker_loses_nothing(void **state) {
    (void)state;
    rk_test_run r = sweep_sh(dir, "(exec " SWEEP_ROCKE " sweep softmax --target sm_90 %s --devices emu:4 -j 2 -o kill "
                             ">kill.out 2>kill.err) & echo $!", space);
    assert_int_equal(r.rc, 0);
    pid_t sweep = (pid_t)atoi(r.out);
    rk_test_run_free(&r);
    char path[128];
    snprintf(path, sizeof path, "%s/kill/workers.json", dir);
    pid_t victim = worker_pid(path, 1);
    assert_true(victim > 0);
    usleep(20000);   /* it holds an item by now */
    assert_int_equal(kill(victim, SIGKILL), 0);
    /* the sweep goes on and ends by itself */
    int i = 0;
    while (i++ < 20000 && !kill(sweep, 0)) usleep(1000);
    r = sweep_sh(dir, "cat kill.err; cat kill.out");
    char lost[96];
    snprintf(lost, sizeof lost, "worker 1 (emu, pid %d) killed by signal 9", (int)victim);
    if (!strstr(r.out, lost)) fprintf(stderr, "%s", r.out);
    assert_non_null(strstr(r.out, lost));
    assert_non_null(strstr(r.out, "18 records (0 not ok)"));
    rk_test_run_free(&r);
    check_records("kill", 18);
}

/* --devices all on a host with two (fake) GPUs: a worker per GPU, each bound
 * to its own; they load the code objects of DIR/kernels and launch them (the
 * fake driver runs only its own kernels, so each launch is refused: a failed
 * record naming the launch, and the sweep goes on). */
static void test_all_gpus_one_worker_each(void **state) {
    (void)state;
    const char *fake = ROCKE_BINARY_DIR "/fakes/libfake_cuda.so";
    if (access(fake, R_OK)) {
        fprintf(stderr, "test_sweep_workers: no fake CUDA driver built (no cuda.h): skipped\n");
        skip();
    }
    rk_test_run r = sweep_sh(dir, "ROCKE_DEVICE= ROCKE_CUDA_LIB=%s FAKE_CUDA_DEVICES=2 FAKE_CUDA_CC=90 " SWEEP_ROCKE
                             " sweep softmax --target sm_90 --dtype f16 --shapes '3,%u;2,%u' --knob vec=2,4 "
                             "--devices all -q -o gpus", fake, 65 + 2 * sweep_rand(40), 131 + 2 * sweep_rand(40));
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.out, "on all (2 workers)"));
    rk_test_run_free(&r);
    uint32_t n, seen = 0;
    rk_json **rec = sweep_records(dir, "gpus", &n);
    assert_true(n >= 3);
    for (uint32_t i = 0; i < n; i++) {
        int w = (int)sweep_num(rec[i], "worker");
        char want[32];
        snprintf(want, sizeof want, "Fake H200 #%d", w);
        assert_string_equal(sweep_str(rec[i], "device"), want);
        assert_string_equal(sweep_str(rec[i], "status"), "failed");
        assert_non_null(strstr(sweep_str(rec[i], "error"), "cuLaunchKernel"));
        seen |= 1u << w;
    }
    sweep_records_free(rec);
    assert_int_equal(seen, 3);   /* both GPUs ran items */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items_spread_over_workers),
        cmocka_unit_test(test_a_killed_worker_loses_nothing),
        cmocka_unit_test(test_all_gpus_one_worker_each),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
