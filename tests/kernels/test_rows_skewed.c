/* rocke tests — LayerNorm and RMSNorm gamma/beta at odd row lengths: under
 * x's split they are aligned on one row in vec, so their chunks are
 * assembled from aligned vectors by a shuffle picked by the row's skew
 * (rk_tile_row_load_skewed): every skew 0..vec-1 occurs over the rows of an
 * odd N. The emulator fails a misaligned vector access; results match the
 * double reference; the kernels hold the shuffles (the path is built).
 * C = 1, 3, 31, 127, 2047, 4099, odd row counts, bases 0, 1 and 3 elements
 * in, every dtype, cached, looped and split-row paths. ROCKE_SEED=N replays. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/ir.h"
#include "rocke/kernels.h"
#include "../support/problem_emu.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static uint64_t seed;
static unsigned runs;

/* Build fam for M x N (knobs locked, the rest tuned), run it with every
 * tensor `off` elements past an aligned address, check. */
static void run_offset(const char *fam, const char *target, uint64_t M, uint64_t N, const char *knobs, uint32_t off) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance in;
    rk_shape sh;
    const uint64_t ext[2] = {M, N};
    if (problem_tuned(fam, t, ext, 2, knobs, &in, &sh)) fail_msg("%s %s: %s", fam, knobs, rk_error_message());
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", target, name, rk_error_message());
    char *ir = rk_print(k);
    assert_non_null(ir);
    /* the skewed path exists wherever a row can start inside a vector */
    bool shuffles = strstr(ir, "vector.shuffle") != NULL;
    uint32_t vec = strstr(name, "_v8_") ? 8 : strstr(name, "_v4_") ? 4 : strstr(name, "_v2_") ? 2 : 1;
    if (vec > 1 && N % vec && !shuffles) fail_msg("%s %s: no skewed gamma/beta loads at N = %llu", target, name,
                                                  (unsigned long long)N);
    free(ir);
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    if (problem_emu_launch_offset(t, k, &p, &sh, off))
        fail_msg("%s %s %llux%llu offset %u: %s", target, name, (unsigned long long)M, (unsigned long long)N, off,
                 rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad)
        fail_msg("%s %s %llux%llu offset %u seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target, name,
                 (unsigned long long)M, (unsigned long long)N, off, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff, c.first_bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static const char *const targets[] = {"gfx942", "sm_90"};
static const char *const fams[] = {"layernorm", "rmsnorm"};
static const char *const dtypes[] = {"bf16", "f16", "f32"};

static void each(uint64_t M, uint64_t N, const char *knobs) {
    const uint32_t offs[] = {0, 1, 3};
    for (size_t f = 0; f < COUNT(fams); f++)
        for (size_t t = 0; t < COUNT(targets); t++)
            for (size_t d = 0; d < COUNT(dtypes); d++)
                for (size_t o = 0; o < COUNT(offs); o++) {
                    char kn[256];
                    snprintf(kn, sizeof kn, "dtype=%s split=true %s", dtypes[d], knobs);
                    run_offset(fams[f], targets[t], M, N, kn, offs[o]);
                }
}

/* Cached rows, the heuristic's geometry: short, medium and long odd rows
 * (9 rows: every shift of a bf16 row occurs). */
static void test_cached_odd(void **state) {
    (void)state;
    const uint64_t ns[] = {1, 3, 31, 127, 2047};
    for (size_t i = 0; i < COUNT(ns); i++) each(9, ns[i], "");
    each(3, 4099, "residual=true save_stats=true");
}

/* Looped rows (two passes) and one row over several blocks. */
static void test_looped_odd(void **state) {
    (void)state;
    each(9, 127, "chunks=0 block_size=32 unroll=2");
    each(2, 4099, "slices=3 block_size=64 unroll=1 residual=true");
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_rows_skewed: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_odd),
        cmocka_unit_test(test_looped_odd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
