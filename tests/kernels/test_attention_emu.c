/* rocke tests — the attention family on the CPU emulator against the double
 * host reference, on an NVIDIA target (sm_90a, mma.sync: P stays in
 * registers) and an AMD one (gfx942, MFMA: P through LDS), plus one case each
 * on sm_80 and gfx950: odd shapes (Sq = 1, 37, Skv = 45, Sq != Skv both
 * ways, so fully masked rows), MHA / GQA / MQA, every mask (window bounds
 * finite and unbounded), D = 64, 128 and 256, LSE, the bshd layout (a
 * q.transpose(1, 2) view through the stride arguments), varlen with random
 * lengths (one of them 1), several KV blocks through 1..3 stages; and a
 * table of bad specs and shapes, each with the message it must give. Fresh
 * random data; the seed is printed (ROCKE_SEED=N replays). */
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

#include "rocke/emu.h"
#include "rocke/kernels.h"
#include "../support/problem_emu.h"

static uint64_t seed;
static unsigned runs;

typedef struct given { const char *name; double v; } given;

/* explicit varlen lengths for the next run_case (n == 0: random) */
static const uint64_t *next_lq, *next_lk;
static uint32_t next_n;

/* Build attention for target with the knobs (the rest tuned for the
 * shape B,Hq,Hkv,Sq,Skv,D), run it with the given scalars and check O (and
 * LSE) element by element. */
static void run_case(const char *target, const uint64_t ext[6], const char *knobs, const given *g, uint32_t ng) {
    const rk_target *t = rk_target_find(target);
    rk_instance in;
    rk_shape sh;
    rk_kernel *k;
    char name[256];
    if (problem_emu_build(RK_FAMILY_ATTENTION, t, ext, 6, knobs, &in, &sh, &k, name, sizeof name))
        fail_msg("%s %s (%s): %s", target, name, knobs, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    for (uint32_t i = 0; i < ng; i++)
        if (rk_problem_set_scalar(&p, g[i].name, g[i].v)) fail_msg("%s: %s", name, rk_error_message());
    if (next_n && rk_problem_set_lengths(&p, next_lq, next_lk, next_n)) fail_msg("%s: %s", name, rk_error_message());
    next_n = 0;
    rk_problem_diff c;
    if (problem_emu_verify(t, k, &p, &sh, &c)) fail_msg("%s %s: launch: %s", target, name, rk_error_message());
    assert_true(c.total > 0);
    if (c.bad)
        fail_msg("%s %s shape %llu,%llu,%llu,%llu,%llu,%llu seed %llu: %llu/%llu bad, %s", target, name,
                 (unsigned long long)ext[0], (unsigned long long)ext[1], (unsigned long long)ext[2],
                 (unsigned long long)ext[3], (unsigned long long)ext[4], (unsigned long long)ext[5],
                 (unsigned long long)s, (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static const char *const targets[] = {"sm_90a", "gfx942"};

static void test_no_mask_odd_shapes(void **state) {
    (void)state;
    const uint64_t mqa[6] = {1, 4, 1, 1, 45, 64}, gqa[6] = {2, 4, 2, 37, 45, 128};
    for (int t = 0; t < 2; t++) {
        run_case(targets[t], mqa, "dtype=bf16", NULL, 0);
        run_case(targets[t], gqa, "dtype=f16 lse=true", NULL, 0);
    }
    /* D = 256: Q fragments read from LDS at every step on mma.sync, held on MFMA */
    const uint64_t d256[6] = {1, 2, 1, 20, 45, 256};
    for (int t = 0; t < 2; t++) run_case(targets[t], d256, "dtype=bf16 mask=causal lse=true", NULL, 0);
    const uint64_t d64[6] = {1, 2, 2, 37, 45, 64};
    run_case("sm_80", d64, "dtype=f16", NULL, 0);
    run_case("gfx950", d64, "dtype=bf16 lse=true", NULL, 0);
}

/* Sq > Skv leaves the first Sq - Skv rows with no key (O = 0, LSE = -inf);
 * Sq < Skv shifts the diagonal right. */
static void test_causal(void **state) {
    (void)state;
    const uint64_t tall[6] = {2, 4, 1, 45, 37, 64}, wide[6] = {1, 4, 4, 37, 45, 128};
    for (int t = 0; t < 2; t++) {
        run_case(targets[t], tall, "dtype=bf16 mask=causal lse=true block_m=32 warps=2 block_n=32", NULL, 0);
        run_case(targets[t], wide, "dtype=f16 mask=causal block_n=32", NULL, 0);
    }
    /* other atoms: MFMA 32x32 (rows over 32 lanes, P through LDS), mma.sync m16n8k8 (P in registers) */
    run_case("gfx942", tall, "dtype=bf16 mask=causal lse=true atom=mfma_f32_32x32x8_bf16", NULL, 0);
    run_case("sm_80", wide, "dtype=f16 mask=causal atom=mma_m16n8k8_f32_f16", NULL, 0);
}

static void test_window(void **state) {
    (void)state;
    const uint64_t sh[6] = {1, 4, 2, 37, 45, 64};
    const given both[] = {{"window_left", 5}, {"window_right", 3}}, left[] = {{"window_left", -1},
                                                                              {"window_right", 0}};
    const given right[] = {{"window_left", 2}, {"window_right", -1}};
    for (int t = 0; t < 2; t++) {
        run_case(targets[t], sh, "dtype=bf16 mask=window lse=true block_m=16 warps=1 block_n=16", both, 2);
        run_case(targets[t], sh, "dtype=f16 mask=window block_n=32", left, 2);
        run_case(targets[t], sh, "dtype=bf16 mask=window block_n=16", right, 2);
    }
}

/* [B, S, H, D] buffers: the kernel reads them through its stride arguments,
 * as a q.transpose(1, 2) view of [B, H, S, D] */
static void test_bshd_view(void **state) {
    (void)state;
    const uint64_t sh[6] = {2, 2, 1, 37, 45, 64};
    for (int t = 0; t < 2; t++) run_case(targets[t], sh, "dtype=bf16 layout=bshd mask=causal lse=true", NULL, 0);
}

static void test_varlen(void **state) {
    (void)state;
    const uint64_t sh[6] = {3, 4, 2, 37, 45, 64};
    /* given lengths: a sequence without keys (O = 0, LSE = -inf) and one of a single query */
    const uint64_t lq[3] = {20, 1, 37}, lk[3] = {0, 45, 17};
    for (int t = 0; t < 2; t++) {
        run_case(targets[t], sh, "dtype=bf16 layout=varlen mask=causal lse=true block_m=32 warps=2 block_n=32", NULL, 0);
        run_case(targets[t], sh, "dtype=f16 layout=varlen", NULL, 0);
        next_lq = lq, next_lk = lk, next_n = 3;
        const given w[] = {{"window_left", 3}, {"window_right", 1}};
        run_case(targets[t], sh, "dtype=bf16 layout=varlen mask=window lse=true block_n=16", w, 2);
    }
    /* lengths past the shape, or not one per sequence */
    rk_instance in;
    rk_instance_default(RK_FAMILY_ATTENTION, &in);
    rk_instance_set(&in, "layout", "varlen", NULL);
    rk_instance_set(&in, "head_dim", "64", NULL);
    rk_shape s6;
    rk_shape_default(RK_FAMILY_ATTENTION, &s6);
    rk_shape_update(RK_FAMILY_ATTENTION, &s6, NULL, sh, 6, false);
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, &s6, 3), RK_OK);
    const uint64_t longq[3] = {38, 1, 1};
    assert_int_equal(rk_problem_set_lengths(&p, longq, lk, 3), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "at most Sq = 37"));
    assert_int_equal(rk_problem_set_lengths(&p, lq, lk, 2), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "for B = 3"));
    assert_int_equal(rk_problem_set_window(&p, 1, 1), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "--mask window"));
    rk_problem_free(&p);
}

/* Five key blocks of 16 through one, two and three stages. */
static void test_stages(void **state) {
    (void)state;
    const uint64_t sh[6] = {1, 2, 1, 20, 70, 64};
    static const char *const st[] = {"block_n=16 stages=1", "block_n=16 stages=2 mask=causal",
                                     "block_n=16 stages=3 block_m=32 warps=2"};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 3; i++) run_case(targets[t], sh, st[i], NULL, 0);
}

static void test_bad_specs(void **state) {
    (void)state;
    const struct { const char *target, *knobs; uint64_t shape[6]; const char *msg; } rows[] = {
        {"sm_90a", "dtype=f32", {1, 1, 1, 16, 16, 128}, "knob 'dtype' must be one of f16|bf16"},
        {"sm_90a", "head_dim=96", {1, 1, 1, 16, 16, 128}, "must be one of 64|128|256"},
        {"sm_90a", "mask=alibi", {1, 1, 1, 16, 16, 128}, "must be one of none|causal|window"},
        {"sm_90a", "head_dim=64", {1, 1, 1, 16, 16, 128}, "serves head_dim = 64"},
        {"sm_90a", "", {1, 6, 4, 16, 16, 128}, "not a multiple of Hkv = 4"},
        {"sm_90a", "block_m=32 warps=4", {1, 1, 1, 16, 16, 128}, "a multiple of 64"},
        {"gfx942", "wave=32", {1, 1, 1, 16, 16, 128}, "64-lane waves"},
        {"sm_90a", "atom=mfma_f32_16x16x16_f16", {1, 1, 1, 16, 16, 128}, "not available on sm_90a"},
        {"sm_90a", "atom=wgmma_m64n8k16_f32_bf16", {1, 1, 1, 16, 16, 128}, "later slice"},
        {"sm_90a", "dtype=bf16 atom=mma_m16n8k16_f32_f16", {1, 1, 1, 16, 16, 128}, "does not multiply bf16"},
        {"gfx942", "wave=64 block_m=128 block_n=128 stages=3 warps=8", {1, 1, 1, 16, 16, 128}, "bytes of LDS"},
        {"sm_90a", "head_dim=256 block_m=128 warps=4", {1, 1, 1, 16, 16, 256}, "head_dim 64 or 128 on sm_90a"},
        {"sm_90a", "block_m=32 warps=1 block_n=128", {1, 1, 1, 16, 16, 64}, "registers of accumulators"},
        {"sm_90a", "stages=4", {1, 1, 1, 16, 16, 128}, "must be 1..3"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const rk_target *t = rk_target_find(rows[i].target);
        rk_instance in;
        rk_instance_default(RK_FAMILY_ATTENTION, &in);
        uint64_t locked = 0;
        rk_status st = problem_knobs_set(&in, rows[i].knobs, &locked);
        rk_shape sh;
        rk_shape_default(RK_FAMILY_ATTENTION, &sh);
        rk_shape_update(RK_FAMILY_ATTENTION, &sh, NULL, rows[i].shape, 6, false);
        if (!st) st = rk_instance_tune(&in, t, &sh, locked);
        if (!st) st = rk_instance_validate(&in, t);
        if (!st) st = rk_instance_check_shape(&in, &sh);
        if (!st) fail_msg("row %zu (%s): accepted", i, rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("row %zu (%s): message lacks '%s': %s", i, rows[i].knobs, rows[i].msg, rk_error_message());
    }
    /* the window bounds are arguments of window instances only (rocke run --window checks that) */
    for (int m = 0; m < 3; m++) {
        rk_instance in;
        rk_instance_default(RK_FAMILY_ATTENTION, &in);
        static const char *const masks[] = {"none", "causal", "window"};
        assert_int_equal(rk_instance_set(&in, "mask", masks[m], NULL), RK_OK);
        rk_ksig sg;
        assert_int_equal(rk_instance_signature(&in, &sg), RK_OK);
        bool has = false;
        for (uint32_t i = 0; i < sg.n; i++) has |= !strcmp(sg.p[i].name, "window_left");
        assert_int_equal(has, m == 2);
    }
}

/* The visible-pair count behind the Perf line: causal self-attention is
 * half the square plus the diagonal, bottom-right aligned otherwise. */
static void test_flop_count(void **state) {
    (void)state;
    rk_instance in;
    rk_instance_default(RK_FAMILY_ATTENTION, &in);
    const uint64_t ext[6] = {2, 3, 3, 100, 100, 64}, wide[6] = {1, 1, 1, 10, 30, 64};
    rk_shape sh;
    rk_shape_default(RK_FAMILY_ATTENTION, &sh);
    rk_shape_update(RK_FAMILY_ATTENTION, &sh, NULL, ext, 6, false);
    double bytes, flops;
    rk_instance_cost(&in, &sh, &bytes, &flops);
    assert_true(fabs(flops - 4.0 * 2 * 3 * 100 * 100 * 64) < 1);
    rk_instance_set(&in, "mask", "causal", NULL);
    rk_instance_cost(&in, &sh, &bytes, &flops);
    assert_true(fabs(flops - 4.0 * 2 * 3 * (100 * 101 / 2) * 64) < 1);
    rk_shape_update(RK_FAMILY_ATTENTION, &sh, NULL, wide, 6, false);
    rk_instance_cost(&in, &sh, &bytes, &flops);
    /* query i sees keys 0 .. i + 20 */
    double pairs = 0;
    for (int i = 0; i < 10; i++) pairs += i + 21;
    assert_true(fabs(flops - 4.0 * pairs * 64) < 1);
}

int main(void) {
    seed = (uint64_t)time(NULL);
    const char *env = getenv("ROCKE_SEED");
    if (env) seed = strtoull(env, NULL, 10);
    printf("seed %llu\n", (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_mask_odd_shapes), cmocka_unit_test(test_causal), cmocka_unit_test(test_window),
        cmocka_unit_test(test_bshd_view),          cmocka_unit_test(test_varlen), cmocka_unit_test(test_stages),
        cmocka_unit_test(test_bad_specs),          cmocka_unit_test(test_flop_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
