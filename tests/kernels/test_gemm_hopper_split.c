/* rocke tests — split-K on the GEMM Hopper path (path=wgmma split_k > 1,
 * sm_90a) on the CPU emulator against the double host reference: each
 * split reduces its K tiles, the last split of a tile sums the f32 slices
 * in split order and runs the epilogue. M, N and K tails, a split left
 * without K tiles, both input types, every output type, MN-major operands,
 * a fused chain; every case launched twice on the same Work (the tile
 * counters reset for the next launch) with C cleared between; the rules
 * named when a spec cannot split. ROCKE_SEED=N replays. */
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

/* C's parameter, cleared (to NaN bytes) before the second launch. */
static uint32_t c_index(const rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, "C")) return i;
    fail_msg("no C parameter");
    return 0;
}

static void run_case(uint64_t M, uint64_t N, uint64_t K, const char *knobs) {
    const rk_target *t = rk_target_find("sm_90a");
    const uint64_t ext[3] = {M, N, K};
    rk_instance in;
    rk_shape sh;
    rk_kernel *k = NULL;
    char kn[256], name[256];
    snprintf(kn, sizeof kn, "path=wgmma %s", knobs);
    if (problem_emu_build(RK_FAMILY_GEMM, t, ext, 3, kn, &in, &sh, &k, name, sizeof name))
        fail_msg("%s: %s", name, rk_error_message());
    if (!strstr(name, "_pwgmma") || in.u.gemm.split_k < 2) fail_msg("%s: not a wgmma split", name);
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    rk_emu *emu = rk_emu_new(t, NULL);
    static problem_emu_args pa;
    if (problem_emu_args_make(emu, &p, &pa)) fail_msg("%s: arguments: %s", name, rk_error_message());
    uint32_t grid[3], block[3];
    rk_instance_grid(&in, &sh, grid, block);
    assert_int_equal(grid[1], in.u.gemm.split_k);
    uint32_t ci = c_index(&p);
    for (int launch = 0; launch < 2; launch++) {
        memset(p.buf[ci].data, 0xff, p.buf[ci].bytes);
        if (rk_emu_launch(emu, k, grid, block, 0, pa.args)) fail_msg("%s: launch: %s", name, rk_error_message());
        rk_problem_diff c;
        assert_int_equal(rk_problem_check(&p, &c), RK_OK);
        if (c.bad)
            fail_msg("%s %llux%llux%llu launch %d seed %llu: %llu/%llu bad, %s", name, (unsigned long long)M,
                     (unsigned long long)N, (unsigned long long)K, launch, (unsigned long long)s,
                     (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    }
    rk_emu_free(emu);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

/* Tails everywhere; 3 splits of 16 K tiles (6, 6, 4); 5 splits of 3 tiles
 * (the last two empty); an edge tile and whole tiles in one grid. */
static void test_tails(void **state) {
    (void)state;
    run_case(130, 70, 1000, "dtype=bf16 out_dtype=bf16 split_k=3 tile=64x64x64 warps=4x1");
    run_case(67, 45, 136, "dtype=f16 out_dtype=f32 split_k=5 tile=64x48x64 warps=4x1 stages=2");
    run_case(128, 256, 512, "dtype=bf16 out_dtype=f32 split_k=2 tile=128x128x64 warps=8x1 stages=3");
    run_case(1, 8, 4104, "dtype=f16 out_dtype=f16 split_k=7");   /* the heuristic's tile */
}

/* MN-major operands and a fused chain after the sum. */
static void test_layouts_and_chain(void **state) {
    (void)state;
    run_case(96, 136, 392, "layout=cc dtype=bf16 out_dtype=bf16 split_k=4 tile=64x64x64 warps=4x1");
    run_case(70, 64, 328, "layout=rr dtype=f16 out_dtype=f32 split_k=3 tile=64x64x64 warps=4x1");
    run_case(65, 72, 256, "fuse=bias,relu dtype=bf16 out_dtype=bf16 split_k=2 tile=64x96x64 warps=4x1");
}

/* The last arriver sums an edge tile as it sums a whole one: one loop over
 * the slices with every element's load in its body, not a loop per
 * accumulator (64 at 64x128: one L2 round trip per element and slice,
 * 500x500x32768 at 8 splits ran 129.7 TFLOP/s on the H200 against 287.5).
 * The kernel's loops: the K loop, the whole tile's pairs and odd slice, the
 * edge tile's slices. */
static void test_edge_sum_is_one_loop(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    const uint64_t ext[3] = {200, 3000, 5000};
    rk_instance in;
    rk_shape sh;
    rk_kernel *k = NULL;
    char name[256];
    if (problem_emu_build(RK_FAMILY_GEMM, t, ext, 3, "path=wgmma split_k=2", &in, &sh, &k, name, sizeof name))
        fail_msg("%s: %s", name, rk_error_message());
    char *text = rk_serialize(k);
    assert_non_null(text);
    unsigned loops = 0;
    for (const char *p = text; (p = strstr(p, "= scf.for (")); p++) loops++;
    if (loops != 4) fail_msg("%s: %u loops, want 4 (K, the whole tile's two, the edge tile's one)", name, loops);
    rk_string_free(text);
    rk_kernel_free(k);
}

/* What the split needs, named. */
static void test_rules(void **state) {
    (void)state;
    const uint64_t sh3[3] = {256, 256, 1024};
    const struct { const char *knobs, *msg; } rows[] = {
        {"split_k=2 split_reduce=atomic out_dtype=f32", "split_reduce=workspace"},
        {"split_k=2 schedule=ws", "schedule=plain"},
        {"split_k=2 epilogue=tma tile=128x256x64 warps=8x1", "epilogue=direct"},
        {"split_k=2 vec_a=4", "both operands read by TMA"},
    };
    const rk_target *t = rk_target_find("sm_90a");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        rk_instance in;
        rk_shape sh;
        char kn[256];
        snprintf(kn, sizeof kn, "path=wgmma %s", rows[i].knobs);
        if (problem_tuned("gemm", t, sh3, 3, kn, &in, &sh)) fail_msg("%s: %s", kn, rk_error_message());
        if (rk_instance_validate(&in, t) == RK_OK) fail_msg("%s: accepted", rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg) || !strstr(rk_error_message(), "split_k"))
            fail_msg("%s: message '%s' lacks '%s'", rows[i].knobs, rk_error_message(), rows[i].msg);
    }
    /* the heuristic keeps wgmma's whole-K reduction unless a split is asked for */
    rk_instance in;
    rk_shape sh;
    assert_int_equal(problem_tuned("gemm", t, sh3, 3, "path=wgmma", &in, &sh), RK_OK);
    assert_int_equal(in.u.gemm.split_k, 1);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    fprintf(stderr, "test_gemm_hopper_split: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
            (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tails),
        cmocka_unit_test(test_layouts_and_chain),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_edge_sum_is_one_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
