/* rocke tests — row kernels over tensors that start inside a vector (a
 * sub-tensor 1 or 3 elements into its allocation): split views read the
 * row's start address, so the vector bodies stay aligned (the emulator
 * fails a misaligned vector access) and the results match the double
 * reference. Softmax, layernorm, rmsnorm and reduce on a wave64 and a
 * warp32 target; cached, looped and split-row paths. ROCKE_SEED=N replays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/kernels.h"
#include "../support/problem_emu.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static uint64_t seed;
static unsigned runs;

static void same_offset(const rk_problem *p, uint32_t *offs, void *ud) {
    for (uint32_t i = 0; i < p->sig.n; i++) offs[i] = *(const uint32_t *)ud;
}

/* Build fam for M x N (knobs locked, the rest tuned), run it with every
 * tensor `off` elements past an aligned address, check. */
static void run_offset(const char *fam, const char *target, uint64_t M, uint64_t N, const char *knobs, uint32_t off) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    rk_problem_diff c;
    char name[256];
    if (problem_emu_offsets_case(fam, t, M, N, knobs, s, same_offset, &off, 16, &c, name, sizeof name))
        fail_msg("%s %s %llux%llu offset %u: %s", target, name, (unsigned long long)M, (unsigned long long)N, off,
                 rk_error_message());
    if (c.bad)
        fail_msg("%s %s %llux%llu offset %u seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target, name,
                 (unsigned long long)M, (unsigned long long)N, off, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff, c.first_bad);
}

static const char *const targets[] = {"gfx942", "sm_90"};
static const char *const fams[] = {"softmax", "layernorm", "rmsnorm", "reduce"};
static const char *const extra[] = {"", "residual=true save_stats=true", "residual=true save_stats=true", "op=sum"};

static void each(uint64_t M, uint64_t N, const char *dtype, const char *knobs) {
    const uint32_t offs[] = {1, 3};
    for (size_t f = 0; f < COUNT(fams); f++)
        for (size_t t = 0; t < COUNT(targets); t++)
            for (size_t o = 0; o < COUNT(offs); o++) {
                char kn[256];
                snprintf(kn, sizeof kn, "dtype=%s split=true %s %s", dtype, extra[f], knobs);
                run_offset(fams[f], targets[t], M, N, kn, offs[o]);
            }
}

/* Rows of a multiple of vec (only the base is off) and odd rows, cached. */
static void test_cached_rows(void **state) {
    (void)state;
    each(5, 512, "bf16", "");
    each(3, 1001, "f16", "");
    each(4, 333, "f32", "");
}

/* Looped rows: the unrolled body, and a short unroll with a tail. */
static void test_looped_rows(void **state) {
    (void)state;
    each(3, 2048, "bf16", "chunks=0 block_size=64");
    each(2, 1999, "f16", "chunks=0 block_size=32 unroll=2");
}

/* One row over several blocks. */
static void test_split_rows(void **state) {
    (void)state;
    each(2, 4097, "bf16", "slices=3 block_size=64 unroll=1");
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_rows_unaligned: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_rows),
        cmocka_unit_test(test_looped_rows),
        cmocka_unit_test(test_split_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
