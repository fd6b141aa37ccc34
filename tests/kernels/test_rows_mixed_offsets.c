/* rocke tests — row kernels whose tensors sit at different alignments: x at
 * one offset from a vector boundary, y at the same or another, gamma and
 * beta at others (so gamma's alignment under x's split differs from row to
 * row), and every tensor ending exactly at its buffer's end (a read past a
 * tensor is an out-of-bounds access the emulator fails; the bytes before
 * each tensor are 0xff, NaN, so a neighbour's element that leaks into a
 * result fails the check). Rows of 1 to 1501 elements (below, at and past
 * one vector), first, interior and last rows; cached, looped and split
 * rows; bf16, f16, f32; a warp32 (masked tails) and a wave64 (buffer
 * views) target. ROCKE_SEED=N replays. */
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

/* Elements before each tensor: x and its row-shaped peers (r, y, h) at
 * `row_off` (y at `y_off`), gamma at `g_off`, beta 3 further on. */
typedef struct offsets {
    uint32_t row_off, y_off, g_off;
} offsets;

static uint32_t offset_of(const char *name, const offsets *o) {
    if (!strcmp(name, "Gamma")) return o->g_off;
    if (!strcmp(name, "Beta")) return (o->g_off + 3) % 8;
    if (!strcmp(name, "Y")) return o->y_off;
    if (!strcmp(name, "X") || !strcmp(name, "R") || !strcmp(name, "H")) return o->row_off;
    return 0;
}

static void offsets_of(const rk_problem *p, uint32_t *offs, void *ud) {
    for (uint32_t i = 0; i < p->sig.n; i++) offs[i] = offset_of(p->sig.p[i].name, ud);
}

static void run(const char *fam, const char *target, uint64_t M, uint64_t N, const char *knobs, const offsets *o) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    rk_problem_diff c;
    char name[256];
    if (problem_emu_offsets_case(fam, t, M, N, knobs, s, offsets_of, (void *)o, 0, &c, name, sizeof name))
        fail_msg("%s %s %llux%llu offsets x%u y%u g%u: %s", target, name, (unsigned long long)M,
                 (unsigned long long)N, o->row_off, o->y_off, o->g_off, rk_error_message());
    if (c.bad)
        fail_msg("%s %s %llux%llu offsets x%u y%u g%u seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target,
                 name, (unsigned long long)M, (unsigned long long)N, o->row_off, o->y_off, o->g_off,
                 (unsigned long long)s, (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff,
                 c.first_bad);
}

static const char *const targets[] = {"sm_90", "gfx942"};

/* Every gamma offset against two x offsets, one y off x's alignment. */
static const offsets grid[] = {
    {0, 0, 0}, {0, 0, 1}, {0, 0, 5}, {3, 3, 0}, {3, 3, 2}, {3, 3, 7}, {3, 4, 6}, {5, 5, 3},
};

static void norms(uint64_t M, uint64_t N, const char *dtype, const char *knobs) {
    static const char *const fams[] = {"layernorm", "rmsnorm", "layernorm"};
    static const char *const extra[] = {"", "residual=true", "residual=true save_stats=true"};
    for (size_t f = 0; f < COUNT(fams); f++)
        for (size_t t = 0; t < COUNT(targets); t++)
            for (size_t g = 0; g < COUNT(grid); g++) {
                char kn[256];
                snprintf(kn, sizeof kn, "dtype=%s split=true %s %s", dtype, extra[f], knobs);
                run(fams[f], targets[t], M, N, kn, &grid[g]);
            }
}

/* Softmax and reduce have no per-column tensor: x's offsets only. */
static void rows(uint64_t M, uint64_t N, const char *dtype, const char *knobs) {
    static const char *const fams[] = {"softmax", "reduce"};
    static const char *const extra[] = {"", "op=sum"};
    static const offsets xo[] = {{0, 0, 0}, {1, 1, 0}, {6, 6, 0}, {2, 5, 0}};
    for (size_t f = 0; f < COUNT(fams); f++)
        for (size_t t = 0; t < COUNT(targets); t++)
            for (size_t o = 0; o < COUNT(xo); o++) {
                char kn[256];
                snprintf(kn, sizeof kn, "dtype=%s split=true %s %s", dtype, extra[f], knobs);
                run(fams[f], targets[t], M, N, kn, &xo[o]);
            }
}

/* Rows shorter than a vector (stride < vec: no whole-vector heads), one
 * past it, and a long odd row; five rows: first, interior, last. */
static void test_cached(void **state) {   /* direct: the heuristic stages odd rows through LDS here */
    (void)state;
    const uint64_t lens[] = {1, 3, 9, 13, 1001};
    for (size_t i = 0; i < COUNT(lens); i++) {
        norms(5, lens[i], "bf16", "stage=direct");
        rows(5, lens[i], "bf16", "stage=direct");
    }
    norms(4, 37, "f16", "stage=direct");
    norms(3, 7, "f32", "stage=direct");
    rows(6, 333, "f32", "stage=direct");
}

static void test_looped(void **state) {
    (void)state;
    norms(3, 203, "bf16", "chunks=0 block_size=32 unroll=2");
    rows(3, 203, "bf16", "chunks=0 block_size=32 unroll=2");
}

static void test_split(void **state) {
    (void)state;
    norms(2, 1501, "bf16", "slices=3 block_size=64 unroll=1");
    rows(2, 1501, "bf16", "slices=3 block_size=64 unroll=1");
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_rows_mixed_offsets: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached),
        cmocka_unit_test(test_looped),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
