/* rocke tests — transpose and permute at any shape: 1 x N, M x 1, primes,
 * a vocabulary-wide row, tensors starting 1 and 3 elements into their
 * buffers, on a wave64 and a warp32 target against the exact reference.
 * Odd shapes take the split tile (aligned vectors, partial vectors only at
 * the ends of each tile row; the emulator fails a misaligned vector access).
 * Both tile orders (m_fast) at shapes of several tiles each way.
 * ROCKE_SEED=N replays. */
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
static const char *const targets[] = {"gfx942", "sm_90"};
static const char *const dtypes[] = {"bf16", "f32", "f16"};

/* Tune fam for the extents (knobs locked), check the split pick, run with
 * every tensor `off` elements into its buffer, compare exactly. */
static void run_shape(const char *fam, const char *target, const uint64_t *ext, uint32_t rank, const char *knobs,
                      uint32_t off) {
    const rk_target *t = rk_target_find(target);
    rk_instance in;
    rk_shape sh;
    if (problem_tuned(fam, t, ext, rank, knobs, &in, &sh)) fail_msg("%s %s: %s", fam, knobs, rk_error_message());
    char name[256], split[8], vec[8];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    assert_int_equal(rk_instance_get(&in, "split", split, sizeof split), RK_OK);
    assert_int_equal(rk_instance_get(&in, "vec", vec, sizeof vec), RK_OK);
    uint64_t v = strtoull(vec, NULL, 10), rows = ext[rank - 2], cols = ext[rank - 1];
    bool want_split = rows % v || cols % v;
    if (!strstr(knobs, "split=") && want_split != (strcmp(split, "true") == 0))
        fail_msg("%s %s: split=%s for %llux%llu", target, name, split, (unsigned long long)rows,
                 (unsigned long long)cols);
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    rk_status st = off ? problem_emu_launch_offset(t, k, &p, &sh, off) : problem_emu_launch(t, k, &p, &sh);
    if (st) fail_msg("%s %s %llux%llu offset %u: %s", target, name, (unsigned long long)rows,
                     (unsigned long long)cols, off, rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad)
        fail_msg("%s %s %llux%llu offset %u seed %llu: bad=%llu/%llu, first %s", target, name,
                 (unsigned long long)rows, (unsigned long long)cols, off, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static void each2(uint64_t M, uint64_t N, const char *knobs, uint32_t off) {
    const uint64_t ext[2] = {M, N};
    for (size_t t = 0; t < COUNT(targets); t++)
        for (size_t d = 0; d < COUNT(dtypes); d++) {
            char kn[128];
            snprintf(kn, sizeof kn, "dtype=%s %s", dtypes[d], knobs);
            run_shape("transpose", targets[t], ext, 2, kn, off);
        }
}

/* Degenerate and prime shapes: one row, one column, primes both ways. */
static void test_odd_shapes(void **state) {
    (void)state;
    each2(1, 1, "", 0);
    each2(1, 1001, "", 0);
    each2(997, 1, "", 0);
    each2(97, 131, "", 0);
    each2(67, 64, "", 0);      /* only Y rows odd */
    each2(64, 67, "", 0);      /* only X rows odd */
    each2(128, 64, "", 0);     /* aligned: the plain tile */
}

/* A vocabulary-wide row (151936 = 2^7 x 1187, so Y rows are odd) and a
 * few rows of it. */
static void test_wide_rows(void **state) {
    (void)state;
    const uint64_t ext[2] = {3, 151936};
    for (size_t t = 0; t < COUNT(targets); t++) run_shape("transpose", targets[t], ext, 2, "dtype=bf16", 0);
    const uint64_t ext2[2] = {5, 50257};
    for (size_t t = 0; t < COUNT(targets); t++) run_shape("transpose", targets[t], ext2, 2, "dtype=f32", 0);
}

/* Tensors 1 and 3 elements into their buffers, odd and even shapes (split
 * forced where the shape alone would not need it), other tile knobs. */
static void test_offset_bases(void **state) {
    (void)state;
    each2(61, 83, "", 1);
    each2(64, 128, "split=true", 3);
    each2(33, 70, "tile_m=32 tile_n=128 block_size=128 lds_pad=0", 3);
    each2(40, 45, "tile_m=16 tile_n=16 block_size=32 vec=4", 1);
}

/* Tile order: the heuristic walks down M when a Y row (M elements) is not
 * whole 32-byte sectors; both orders at shapes of several tiles each way,
 * split and plain tiles, edge tiles, offsets. */
static void test_tile_order(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    struct { uint64_t M, N; const char *dt; bool mf; } picks[] = {
        {1000, 32000, "bf16", true}, {4097, 4097, "bf16", true}, {1000, 151936, "f16", true},
        {1000, 32000, "f32", false}, {16384, 2047, "bf16", false}, {4096, 4096, "bf16", false},
        {40, 4096, "bf16", false},   /* one tile down M: the order does not matter */
    };
    for (size_t i = 0; i < COUNT(picks); i++) {
        rk_instance in;
        rk_shape sh;
        const uint64_t ext[2] = {picks[i].M, picks[i].N};
        char kn[32], v[8];
        snprintf(kn, sizeof kn, "dtype=%s", picks[i].dt);
        if (problem_tuned("transpose", t, ext, 2, kn, &in, &sh)) fail_msg("%s", rk_error_message());
        assert_int_equal(rk_instance_get(&in, "m_fast", v, sizeof v), RK_OK);
        if (!strcmp(v, "true") != picks[i].mf)
            fail_msg("transpose %s %llux%llu: m_fast=%s", picks[i].dt, (unsigned long long)picks[i].M,
                     (unsigned long long)picks[i].N, v);
    }
    each2(200, 150, "m_fast=true", 0);
    each2(200, 150, "m_fast=false", 1);
    each2(131, 197, "m_fast=true", 3);
    each2(136, 192, "m_fast=true split=false", 0);
    each2(72, 333, "m_fast=true tile_m=32 tile_n=128 block_size=128", 1);
}

/* permute [B, M, N] -> [B, N, M]: odd matrices, one-row matrices, offsets. */
static void test_permute_shapes(void **state) {
    (void)state;
    const uint64_t shapes[][3] = {{3, 17, 33}, {2, 1, 100}, {4, 63, 1}, {2, 64, 64}, {5, 29, 71}};
    for (size_t i = 0; i < COUNT(shapes); i++)
        for (size_t t = 0; t < COUNT(targets); t++)
            for (size_t d = 0; d < COUNT(dtypes); d++) {
                char kn[64];
                snprintf(kn, sizeof kn, "dtype=%s", dtypes[d]);
                run_shape("permute", targets[t], shapes[i], 3, kn, i == 0 || i == 4 ? 3 : 0);
            }
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_transpose_shapes: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd_shapes),
        cmocka_unit_test(test_wide_rows),
        cmocka_unit_test(test_offset_bases),
        cmocka_unit_test(test_tile_order),
        cmocka_unit_test(test_permute_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
