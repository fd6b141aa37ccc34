/* rocke tests — `rocke run --check-emu`: the device's outputs against a
 * second emulator run, element by element. With the test-only fault
 * (ROCKE_TEST_EMU_FAULT) planted in the device under test, the check must
 * fail naming the planted element by its indices, both values and the count;
 * without it, it must pass. Fresh random shapes and fault positions each
 * run (printed on failure). scripts/gpu-check-emu.sh (make gpu-check) skips
 * without a GPU and passes every family emulator against emulator. Runs the
 * built binary. */
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

#include "support/cli_run.h"

#define ROCKE ROCKE_BINARY_DIR "/rocke"

static char dir[64];

static void sh_ok(const char *cmd) {
    rk_test_run r = rk_test_sh(dir, cmd);
    if (r.rc != 0) fail_msg("%s: exit %d\nstdout: %s\nstderr: %s", cmd, r.rc, r.out, r.err);
    rk_test_run_free(&r);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rocke-check-emu-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    sh_ok(ROCKE " build softmax --target sm_90a --ir-only -o sm > /dev/null");
    sh_ok(ROCKE " build elementwise --target gfx942 --ir-only -o ew > /dev/null");
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static rk_test_run run(const char *fault, const char *args) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s%s%s " ROCKE " run %s --device emu --check-emu", fault ? "ROCKE_TEST_EMU_FAULT='" : "",
             fault ? fault : "", fault ? "'" : "", args);
    return rk_test_sh(dir, cmd);
}

/* softmax is inexact (exp2): the planted flip is far outside its bound;
 * the element is named by row and column. */
static void test_fault_named_by_indices(void **state) {
    (void)state;
    for (int trial = 0; trial < 2; trial++) {
        unsigned rows = 2 + (unsigned)rand() % 7, cols = 65 + 2 * ((unsigned)rand() % 150);
        unsigned idx = (unsigned)rand() % (rows * cols);
        char args[128], fault[32], want[160];
        snprintf(args, sizeof args, "sm/manifest.json --shape %u,%u --seed %d", rows, cols, rand());
        snprintf(fault, sizeof fault, "Y:%u", idx);
        rk_test_run r = run(fault, args);
        snprintf(want, sizeof want, "check-emu Y: first difference at Y[%u,%u]: device ", idx / cols, idx % cols);
        char count[64];
        snprintf(count, sizeof count, "; 1 of %u elements differ", rows * cols);
        if (r.rc != 1 || !strstr(r.out, want) || !strstr(r.out, count) || !strstr(r.out, "check-emu: FAIL") ||
            !strstr(r.out, "math.exp2 (approximate on the device)"))
            fail_msg("%s %s: exit %d, want 1 and '%s'\nstdout: %s\nstderr: %s", fault, args, r.rc, want, r.out, r.err);
        rk_test_run_free(&r);
        r = run(NULL, args);
        if (r.rc != 0 || !strstr(r.out, "check-emu: PASS") || strstr(r.out, "first difference"))
            fail_msg("%s without a fault: exit %d\nstdout: %s\nstderr: %s", args, r.rc, r.out, r.err);
        rk_test_run_free(&r);
    }
}

/* elementwise add is exact: bit for bit, on a wave64 target, odd sizes. */
static void test_exact_family(void **state) {
    (void)state;
    unsigned n = 1 + 2 * ((unsigned)rand() % 3000), idx = (unsigned)rand() % n;
    char args[128], fault[32], want[96];
    snprintf(args, sizeof args, "ew/manifest.json --shape %u --seed %d", n, rand());
    snprintf(fault, sizeof fault, "C:%u", idx);
    rk_test_run r = run(fault, args);
    snprintf(want, sizeof want, "first difference at C[%u]: device ", idx);
    if (r.rc != 1 || !strstr(r.out, want) || !strstr(r.out, "(bit-exact expected); 1 of") ||
        !strstr(r.out, "check-emu: bit-exact expected"))
        fail_msg("%s %s: exit %d\nstdout: %s\nstderr: %s", fault, args, r.rc, r.out, r.err);
    rk_test_run_free(&r);
    r = run(NULL, args);
    if (r.rc != 0 || !strstr(r.out, "check-emu C: ") || !strstr(r.out, " elements agree (max |diff| 0)"))
        fail_msg("%s: exit %d\nstdout: %s\nstderr: %s", args, r.rc, r.out, r.err);
    rk_test_run_free(&r);
}

/* A fault that cannot apply is an error naming it, never a silent pass. */
static void test_bad_fault(void **state) {
    (void)state;
    static const struct { const char *fault, *msg; } rows[] = {
        {"Q:3", "kernel 'rk_elementwise_add_f16"},   /* ... has no parameter Q */
        {"C:999999", "element 999999 is past the 100 elements of C"},
        {"C", "test fault 'C' is not PARAM:INDEX"},
        {"C:x", "test fault 'C:x' is not PARAM:INDEX"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        rk_test_run r = run(rows[i].fault, "ew/manifest.json --shape 100");
        if (r.rc != 1 || !strstr(r.err, rows[i].msg))
            fail_msg("fault '%s': exit %d, want 1 and '%s'\nstderr: %s", rows[i].fault, r.rc, rows[i].msg, r.err);
        rk_test_run_free(&r);
    }
}

#define SCRIPT ROCKE_SOURCE_DIR "/scripts/gpu-check-emu.sh " ROCKE_BINARY_DIR
#define NO_GPU "ROCKE_CUDA_LIB=/nonexistent/libcuda.so.1 ROCKE_HIP_LIB=/nonexistent/libamdhip64.so "

static void test_gpu_check_script(void **state) {
    (void)state;
    rk_test_run r = rk_test_sh(dir, NO_GPU "ROCKE_DEVICE= " SCRIPT);
    if (r.rc != 0 || !strstr(r.out, "gpu-check-emu: no GPU found (CUDA or HIP): skipping"))
        fail_msg("no GPU: exit %d\nstdout: %s\nstderr: %s", r.rc, r.out, r.err);
    rk_test_run_free(&r);
    /* every family of `rocke build --list`, emulator against emulator */
    r = rk_test_sh(dir, ROCKE " build --list | grep -c '^[a-z]'");
    unsigned families = (unsigned)atoi(r.out);
    rk_test_run_free(&r);
    r = rk_test_sh(dir, NO_GPU "GPU_CHECK_EMU_DEVICE=emu " SCRIPT);
    if (r.rc != 0 || rk_test_count(r.out, ": PASS check-emu: ") != families || families < 13 ||
        !strstr(r.out, "gpu-check-emu: every family agrees"))
        fail_msg("emu: exit %d, want %u PASS lines\nstdout: %s\nstderr: %s", r.rc, families, r.out, r.err);
    rk_test_run_free(&r);
}

int main(void) {
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    printf("seed %u\n", seed);
    srand(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_named_by_indices),
        cmocka_unit_test(test_exact_family),
        cmocka_unit_test(test_bad_fault),
        cmocka_unit_test(test_gpu_check_script),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
