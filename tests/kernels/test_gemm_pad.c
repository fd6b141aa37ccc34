/* rocke tests — pad (path=wgmma, schedule=persistent) on the CPU emulator:
 * operands whose rows break TMA's 16-byte rule are staged by the kernel into
 * padded workspace copies, a grid barrier, then the persistent TMA/wgmma
 * main loop over maps of the copies. Odd shapes in every layout, f16 and
 * bf16 in, f16/bf16/f32 out, a grid of several blocks walking several tiles
 * each, every case launched twice over the same workspaces (the barrier's
 * words must be back at a zero count); against the double reference. The
 * refusals; the heuristic's pick. Fresh random data (ROCKE_SEED=N replays).
 * Layer: tests. */
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

static void instance_for(const uint64_t ext[3], const char *knobs, rk_instance *in, rk_shape *sh) {
    const rk_target *t = rk_target_find("sm_90a");
    rk_instance_default(RK_FAMILY_GEMM, in);
    uint64_t locked = 0;
    if (problem_knobs_set(in, knobs, &locked)) fail_msg("%s: %s", knobs, rk_error_message());
    assert_int_equal(rk_shape_default(RK_FAMILY_GEMM, sh), RK_OK);
    assert_int_equal(rk_shape_update(RK_FAMILY_GEMM, sh, NULL, ext, 3, false), RK_OK);
    assert_int_equal(rk_instance_tune(in, t, sh, locked), RK_OK);
}

static int sig_index(const rk_problem *p, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, name)) return (int)i;
    return -1;
}

static void run_pad(uint64_t M, uint64_t N, uint64_t K, const char *knobs) {
    const rk_target *t = rk_target_find("sm_90a");
    const uint64_t ext[3] = {M, N, K};
    rk_instance in;
    rk_shape sh;
    instance_for(ext, knobs, &in, &sh);
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    if (rk_instance_validate(&in, t)) fail_msg("%s: %s", name, rk_error_message());
    if (rk_instance_check_shape(&in, &sh)) fail_msg("%s: %s", name, rk_error_message());
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s: %s", name, rk_error_message());
    assert_true(rk_kernel_cooperative(k));
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    int sy = sig_index(&p, "Sync"), c = sig_index(&p, "C");
    assert_true(sy >= 0 && c >= 0);
    rk_emu *emu = rk_emu_new(t, NULL);
    static problem_emu_args pa;
    if (problem_emu_args_make(emu, &p, &pa)) fail_msg("%s: arguments: %s", name, rk_error_message());
    uint32_t grid[3], block[3];
    rk_instance_grid(&in, &sh, grid, block);
    assert_true(grid[0] > 1);
    for (int launch = 0; launch < 2; launch++) {
        memset(p.buf[c].data, 0, p.buf[c].bytes);   /* the second launch must write C again */
        if (rk_emu_launch(emu, k, grid, block, 0, pa.args))
            fail_msg("%s launch %d: %s", name, launch, rk_error_message());
        rk_problem_diff d;
        assert_int_equal(rk_problem_check(&p, &d), RK_OK);
        if (d.bad)
            fail_msg("%s %llux%llux%llu seed %llu launch %d: %llu/%llu bad, %s", name, (unsigned long long)M,
                     (unsigned long long)N, (unsigned long long)K, (unsigned long long)s, launch,
                     (unsigned long long)d.bad, (unsigned long long)d.total, d.first_bad);
        const int64_t *w = p.buf[sy].data;
        assert_int_equal(w[0], 0);               /* the count is back at 0 */
        assert_int_equal(w[1], launch + 1);      /* one barrier per launch */
    }
    rk_emu_free(emu);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

#define PAD "path=wgmma schedule=persistent blocks=3 vec_a=8 vec_b=8 tile=64x64x64 warps=4x1 stages=2 "

static void test_layouts(void **state) {
    (void)state;
    run_pad(67, 45, 37, PAD "layout=rc pad=ab dtype=bf16 out_dtype=f16");
    run_pad(129, 70, 101, PAD "layout=rc pad=ab dtype=f16 out_dtype=bf16");
    run_pad(129, 70, 101, PAD "layout=rr pad=ab dtype=bf16 out_dtype=f32");
    run_pad(67, 136, 37, PAD "layout=cr pad=a dtype=f16 out_dtype=f16");    /* A [K, M]: M odd; B [K, N]: N = 136 TMA */
    run_pad(67, 45, 37, PAD "layout=cc pad=ab dtype=bf16 out_dtype=bf16");
    run_pad(70, 45, 64, PAD "layout=rr pad=b dtype=f16 out_dtype=f32");      /* A [M, K = 64] TMA; B [K, N = 45] */
}

/* The heuristic: operands read 2 bytes at a time (an odd pitch) are staged
 * at every size from M = 65 (pad, persistent, one block per SM; a smaller M
 * keeps the skinny mma kernel unless the tiles fill the SMs); 4- and 8-byte reads
 * where the tiles fill the SMs, smaller problems keeping the threads'
 * copies; aligned operands need no pad. */
static void test_heuristic(void **state) {
    (void)state;
    static const struct { uint64_t m, n, k; const char *knobs, *want, *not; } rows[] = {
        {2047, 3001, 4093, "layout=rc dtype=bf16", "_pwgmma_scpersistent_pb132_pdab", NULL},
        {4093, 4091, 4099, "layout=rr dtype=f16", "_pwgmma_scpersistent_pb132_pdab", NULL},
        {4096, 4096, 4095, "layout=rc dtype=bf16", "_pwgmma_scpersistent_pb132_pdab", NULL},   /* A, B rows: K */
        {4096, 4095, 4096, "layout=rr dtype=bf16", "_pdb", NULL},             /* only B [K, N] breaks the rule */
        {67, 45, 37, "layout=rc dtype=bf16", "_pwgmma_scpersistent_pb132_pdab", NULL},
        {67, 45, 37, "layout=rc dtype=bf16 pad=none", "_pmma_", "_pd"},
        {67, 45, 38, "layout=rc dtype=bf16", "_va2_vb2_", "_pd"},             /* 4-byte reads, few tiles */
        {17, 4096, 4095, "layout=rc dtype=bf16", "_pmma_", "_pd"},            /* decode-like M: skinny mma */
        {2047, 3001, 4094, "layout=rc dtype=bf16", "_pdab", NULL},
        {2047, 3001, 4096, "layout=rc dtype=bf16", "_pwgmma_", "_pd"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const uint64_t ext[3] = {rows[i].m, rows[i].n, rows[i].k};
        rk_instance in;
        rk_shape sh;
        instance_for(ext, rows[i].knobs, &in, &sh);
        char name[256];
        assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
        if (!strstr(name, rows[i].want)) fail_msg("row %zu: %s lacks %s", i, name, rows[i].want);
        if (rows[i].not && strstr(name, rows[i].not))
            fail_msg("row %zu: %s has %s", i, name, rows[i].not);
        assert_int_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    }
}

/* Bad combinations name the rule and the legal choices. */
static void test_refusals(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    static const struct { const char *knobs, *frag; } rows[] = {
        {"path=wgmma schedule=plain pad=ab tile=64x64x64 warps=4x1", "runs on schedule=persistent only"},
        {"path=wgmma schedule=ws pad=a tile=64x64x64 warps=4x1", "legal: pad=none with ws"},
        {"path=wgmma schedule=persistent blocks=3 pad=a vec_a=4 tile=64x64x64 warps=4x1", "knob 'vec_a' must be 8"},
        {"path=wgmma schedule=persistent blocks=3 pad=b dtype=e4m3 tile=64x64x128 warps=4x1", "16-bit operands"},
        {"path=mma pad=ab", "legal here pad=none"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        rk_instance in;
        rk_instance_default(RK_FAMILY_GEMM, &in);
        uint64_t locked = 0;
        if (problem_knobs_set(&in, rows[i].knobs, &locked)) fail_msg("%s: %s", rows[i].knobs, rk_error_message());
        rk_status st = rk_instance_validate(&in, t);
        if (st == RK_OK || !strstr(rk_error_message(), rows[i].frag))
            fail_msg("row %zu: expected '%s', got %s", i, rows[i].frag, st ? rk_error_message() : "success");
    }
    /* an unpadded operand still keeps TMA's rule at run time */
    rk_instance in;
    rk_shape sh;
    const uint64_t ext[3] = {64, 64, 37};
    instance_for(ext, PAD "layout=rc pad=a", &in, &sh);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "reads B 8 elements at a time"));
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    printf("seed %llu (ROCKE_SEED=%llu to replay)\n", (unsigned long long)seed, (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_heuristic),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
