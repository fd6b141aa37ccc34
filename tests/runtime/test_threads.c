/* rocke tests — two independent users in one process: threads that each
 * build a family kernel, lower it, compile it (where the toolchain exists)
 * and run it on their own emulator device at the same time, checked against
 * the double host reference; results equal a single-threaded run byte for
 * byte; the error message stays per thread; two threads compiling the same
 * kernel into one shared cache at once get identical binaries; warnings
 * from several threads reach the log callback once each. Built a second
 * time with -fsanitize=thread by `make test-tsan` (docs/embedding.md).
 * Layer: tests. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/kernels.h"

typedef struct job {
    /* in */
    const char *family, *target;
    const char *dims[3];
    uint64_t ext[3];
    uint32_t ndims;
    uint64_t seed;
    bool compile;
    const char *cache_dir;
    int id;
    /* out */
    char err[512];
    char *ll;
    uint8_t *bin;
    size_t nbin;
    uint64_t bad, total;
} job;

static bool have_toolchain;
static char tmp_root[64];

static void job_free(job *j) {
    rk_string_free(j->ll);
    free(j->bin);
    j->ll = NULL;
    j->bin = NULL;
}

#define FAIL(j, ...) do { snprintf((j)->err, sizeof (j)->err, __VA_ARGS__); goto out; } while (0)

/* Run the problem on this thread's own emulator device. */
static bool run_on_emu(job *j, const rk_instance *in, const rk_shape *sh, rk_kernel *k, const rk_target *t) {
    rk_device *d = NULL;
    rk_module *m = NULL;
    rk_problem p;
    bool have_p = false, ok = false;
    rk_devptr dp[RK_KSIG_MAX] = {0};
    rk_scalar_value sv[RK_KSIG_MAX];
    void *args[RK_KSIG_MAX];
    rk_device_opts o = {.which = "emu", .emu_target = t->name, .quiet = true};
    if (rk_device_open_opts(&o, &d)) FAIL(j, "open: %s", rk_error_message());
    rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = k, .target = t->name};
    rk_function *fn;
    if (rk_module_load_image(d, &img, &m) || rk_module_function(m, rk_kernel_name(k), &fn))
        FAIL(j, "load: %s", rk_error_message());
    if (rk_problem_init(&p, in, sh, j->seed)) FAIL(j, "problem: %s", rk_error_message());
    have_p = true;
    for (uint32_t i = 0; i < p.sig.n; i++) {
        if (p.sig.p[i].ptr) {
            if (rk_mem_alloc(d, p.buf[i].bytes, &dp[i]) || rk_mem_copy_htod(d, dp[i], p.buf[i].data, p.buf[i].bytes))
                FAIL(j, "upload: %s", rk_error_message());
            args[i] = &dp[i];
        } else {
            if (rk_problem_scalar(&p, i, &sv[i])) FAIL(j, "scalar: %s", rk_error_message());
            args[i] = &sv[i];
        }
    }
    uint32_t grid[3], block[3];
    rk_instance_grid(in, sh, grid, block);
    if (rk_launch(fn, grid, block, 0, NULL, args) || rk_device_synchronize(d)) FAIL(j, "launch: %s", rk_error_message());
    for (uint32_t i = 0; i < p.sig.n; i++)
        if (p.sig.p[i].ptr && p.sig.p[i].role != RK_KP_IN &&
            rk_mem_copy_dtoh(d, p.buf[i].data, dp[i], p.buf[i].bytes))
            FAIL(j, "download: %s", rk_error_message());
    rk_problem_diff c;
    if (rk_problem_check(&p, &c)) FAIL(j, "check: %s", rk_error_message());
    j->bad = c.bad;
    j->total = c.total;
    ok = true;
out:
    if (have_p) rk_problem_free(&p);
    if (m) rk_module_unload(m);
    if (d) {
        for (uint32_t i = 0; i < RK_KSIG_MAX; i++) rk_mem_free(d, dp[i]);
        rk_device_close(d);
    }
    return ok;
}

static void *run_job(void *arg) {
    job *j = arg;
    rk_kernel *k = NULL;
    rk_artifact *a = NULL;
    const rk_target *t = rk_target_find(j->target);
    rk_family_id f;
    rk_instance in;
    rk_shape sh;
    if (!t || rk_family_parse(j->family, &f) || rk_instance_default(f, &in) || rk_shape_default(f, &sh) ||
        rk_shape_update(f, &sh, j->dims, j->ext, j->ndims, false) || rk_instance_tune(&in, t, &sh, 0) ||
        rk_instance_build(&in, t, &k))
        FAIL(j, "build: %s", rk_error_message());
    if (rk_lower_llvm(k, t, RK_LLVM_FLAVOR_DEFAULT, &j->ll)) FAIL(j, "lower: %s", rk_error_message());
    if (j->compile) {
        rk_compile_options o;
        if (rk_compile_options_default(t, &o)) FAIL(j, "options: %s", rk_error_message());
        o.cache = true;
        snprintf(o.cache_dir, sizeof o.cache_dir, "%s", j->cache_dir);
        if (rk_compile(k, t, &o, &a)) FAIL(j, "compile: %s", rk_error_message());
        if (!(j->bin = malloc(a->binary_size ? a->binary_size : 1))) FAIL(j, "out of memory");
        memcpy(j->bin, a->binary, a->binary_size);
        j->nbin = a->binary_size;
    }
    if (!run_on_emu(j, &in, &sh, k, t)) goto out;
    /* the last error is this thread's own, whatever the others fail with */
    char bad[48];
    snprintf(bad, sizeof bad, "no-such-target-%d", j->id);
    if (rk_target_find(bad) || !strstr(rk_error_message(), bad)) FAIL(j, "error message: '%s'", rk_error_message());
out:
    rk_artifact_free(a);
    if (k) rk_kernel_free(k);
    return NULL;
}

static void run_all(job *jobs, int n) {
    pthread_t th[8];
    for (int i = 0; i < n; i++) assert_int_equal(pthread_create(&th[i], NULL, run_job, &jobs[i]), 0);
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) {
        if (jobs[i].err[0]) fail_msg("thread %d (%s on %s): %s", i, jobs[i].family, jobs[i].target, jobs[i].err);
        if (jobs[i].bad || !jobs[i].total)
            fail_msg("thread %d (%s on %s): %llu of %llu elements wrong", i, jobs[i].family, jobs[i].target,
                     (unsigned long long)jobs[i].bad, (unsigned long long)jobs[i].total);
    }
}

static uint64_t odd(uint64_t lo, uint64_t span) { return lo + 2 * ((uint64_t)rand() % span) + 1; }

static job softmax_job(const char *target, uint64_t rows, uint64_t cols) {
    return (job){.family = "softmax", .target = target, .dims = {"M", "N"}, .ext = {rows, cols}, .ndims = 2,
                 .seed = (uint64_t)rand(), .compile = have_toolchain, .cache_dir = tmp_root};
}
static job elementwise_job(const char *target, uint64_t n) {
    return (job){.family = "elementwise", .target = target, .dims = {"N"}, .ext = {n}, .ndims = 1,
                 .seed = (uint64_t)rand(), .compile = have_toolchain, .cache_dir = tmp_root};
}

/* Two users, different kernels and targets, at once; then the same jobs
 * one at a time must give the same LLVM IR and binaries. */
static void test_two_users(void **state) {
    (void)state;
    job jobs[2] = {softmax_job("sm_90a", odd(2, 4), odd(100, 100)), elementwise_job("gfx942", odd(1000, 2000))};
    jobs[0].id = 0;
    jobs[1].id = 1;
    run_all(jobs, 2);
    for (int i = 0; i < 2; i++) {
        job again = jobs[i];
        again.ll = NULL;
        again.bin = NULL;
        run_all(&again, 1);
        assert_string_equal(again.ll, jobs[i].ll);
        assert_int_equal(again.nbin, jobs[i].nbin);
        if (jobs[i].nbin) assert_memory_equal(again.bin, jobs[i].bin, jobs[i].nbin);
        job_free(&again);
        job_free(&jobs[i]);
    }
}

/* Two threads compile the same kernel into one empty cache folder at once
 * (and a third a different one): every binary is whole and identical. */
static void test_shared_cache(void **state) {
    (void)state;
    if (!have_toolchain) {
        printf("no toolchain: the shared-cache case only lowers and runs\n");
    }
    char dir[128];
    snprintf(dir, sizeof dir, "%s/shared-%d", tmp_root, rand());
    uint64_t rows = odd(2, 4), cols = odd(64, 200);
    job jobs[3] = {softmax_job("sm_90a", rows, cols), softmax_job("sm_90a", rows, cols),
                   elementwise_job("sm_90a", odd(100, 1000))};
    for (int i = 0; i < 3; i++) {
        jobs[i].cache_dir = dir;
        jobs[i].id = 10 + i;
    }
    run_all(jobs, 3);
    assert_string_equal(jobs[0].ll, jobs[1].ll);
    assert_int_equal(jobs[0].nbin, jobs[1].nbin);
    if (jobs[0].nbin) assert_memory_equal(jobs[0].bin, jobs[1].bin, jobs[0].nbin);
    for (int i = 0; i < 3; i++) job_free(&jobs[i]);
}

/* Warnings from several threads at once: each reaches the callback whole. */
static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned seen_warnings;
static void count_warning(void *ud, rk_log_level level, const char *msg) {
    (void)ud;
    if (level != RK_LOG_WARNING || !strstr(msg, "leaves no room for an entry's name")) return;
    pthread_mutex_lock(&seen_mu);
    seen_warnings++;
    pthread_mutex_unlock(&seen_mu);
}

static void test_log_from_threads(void **state) {
    (void)state;
    if (!have_toolchain) {
        printf("no toolchain: nothing is cached, so no cache warning to count\n");
        return;
    }
    /* a cache folder whose entries cannot be named within RK_PATH_MAX */
    static char longdir[RK_PATH_MAX];
    int n = snprintf(longdir, sizeof longdir, "%s/", tmp_root);
    memset(longdir + n, 'd', sizeof longdir - (size_t)n - 40);
    longdir[sizeof longdir - 40] = '\0';
    rk_set_log_callback(count_warning, NULL);
    seen_warnings = 0;
    job jobs[2] = {elementwise_job("sm_90", odd(10, 100)), elementwise_job("sm_80", odd(10, 100))};
    for (int i = 0; i < 2; i++) {
        jobs[i].cache_dir = longdir;
        jobs[i].id = 20 + i;
    }
    run_all(jobs, 2);
    rk_set_log_callback(NULL, NULL);
    assert_int_equal(seen_warnings, 2);
    for (int i = 0; i < 2; i++) job_free(&jobs[i]);
}

static int setup(void **state) {
    (void)state;
    snprintf(tmp_root, sizeof tmp_root, "/tmp/rocke-threads-XXXXXX");
    if (!mkdtemp(tmp_root)) return -1;
    /* compile only where a toolchain for NVIDIA and AMD exists */
    rk_kernel *k = rk_kernel_new("probe");
    rk_artifact *a = NULL;
    rk_compile_options o;
    const rk_target *ts[] = {rk_target_find("sm_90a"), rk_target_find("gfx942")};
    have_toolchain = true;
    for (int i = 0; i < 2 && have_toolchain; i++) {
        rk_compile_options_default(ts[i], &o);
        o.cache = false;
        have_toolchain = rk_kernel_finish(k) == RK_OK && rk_compile(k, ts[i], &o, &a) == RK_OK;
        rk_artifact_free(a);
        a = NULL;
    }
    if (!have_toolchain) printf("no LLVM toolchain (%s): lowering and the emulator only\n", rk_error_message());
    rk_kernel_free(k);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    printf("seed %u\n", seed);
    srand(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_users),
        cmocka_unit_test(test_shared_cache),
        cmocka_unit_test(test_log_from_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
