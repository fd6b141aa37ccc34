/* rocke tests — algo direct's depthwise kernel (conv_depthwise.c) on the CPU
 * emulator against the double reference: every vec (1, 2, 4, 8) by every
 * dw_pix (1, 2, 4, 8) on sm_90 and gfx942 in bf16 and f16, each at its own
 * small odd geometry (3x3 at stride 1 and 2, symmetric and asymmetric
 * padding, dilation 2, 5x5, a one-row input, Q tails, C = 8, 24, 40, channel
 * vectors per block with and without a channel tail); 3-D; the chain; one
 * binary on both of its row paths (the sliding window at stride and dilation
 * 1, the per-tap loads elsewhere); filters taller than one LDS chunk; the
 * small-group kernel beside it (groups 4, and depthwise with the knobs off);
 * the heuristic's picks and the bad-input messages. Fresh random data; the
 * seed is printed (ROCKE_SEED=N replays). */
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

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t seed;
static unsigned runs;

static void make(const char *fam, const rk_target *t, const uint64_t *ext, uint32_t rank, const char *knobs,
                 rk_instance *in, rk_shape *sh) {
    rk_family_id f;
    assert_int_equal(rk_family_parse(fam, &f), RK_OK);
    rk_instance_default(f, in);
    uint64_t locked = 0;
    if (problem_knobs_set(in, knobs, &locked)) fail_msg("%s: %s", knobs, rk_error_message());
    assert_int_equal(rk_shape_default(f, sh), RK_OK);
    assert_int_equal(rk_shape_update(f, sh, NULL, ext, rank, false), RK_OK);
    assert_int_equal(rk_instance_tune(in, t, sh, locked), RK_OK);
}

/* Verify kernel k (built from `in`) on the emulator at `sh`. */
static void verify(const rk_target *t, rk_kernel *k, const rk_instance *in, const rk_shape *sh, const char *what) {
    char name[256];
    assert_int_equal(rk_instance_name(in, name, sizeof name), RK_OK);
    if (rk_instance_check_shape(in, sh)) fail_msg("%s %s [%s]: %s", t->name, name, what, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, in, sh, s), RK_OK);
    rk_problem_diff c;
    if (problem_emu_verify(t, k, &p, sh, &c)) fail_msg("%s %s: launch: %s", t->name, name, rk_error_message());
    if (c.bad || !c.total)
        fail_msg("%s %s [%s] seed %llu: %llu/%llu bad, %s", t->name, name, what, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    rk_problem_free(&p);
}

/* Build for `knobs` at ext, run, check; returns the instance when out != NULL. */
static void run_case(const char *fam, const char *target, const uint64_t *ext, uint32_t rank, const char *knobs,
                     rk_instance *out) {
    const rk_target *t = rk_target_find(target);
    rk_instance in;
    rk_shape sh;
    make(fam, t, ext, rank, knobs, &in, &sh);
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s [%s]: %s", target, knobs, rk_error_message());
    verify(t, k, &in, &sh, knobs);
    rk_kernel_free(k);
    if (out) *out = in;
}

/* Depthwise geometries: N, H, W, R, S (C = K = groups from the sweep) and the geometry knobs. */
static const struct { uint64_t n, h, w, r, s; const char *geo; } geos[] = {
    {2, 7, 9, 3, 3, "pad=1x1x1x1"},                          /* Q 9: tails for pix 2, 4, 8 */
    {1, 9, 11, 3, 3, "stride=2x2 pad=1x2x0x1"},              /* stride 2, asymmetric padding */
    {1, 7, 13, 3, 3, "dilation=2x2 pad=2x2x2x2"},
    {1, 6, 11, 5, 5, "pad=2x2x2x2"},                         /* 5x5 */
    {2, 1, 17, 1, 3, "pad=0x0x1x1"},                         /* one input row */
    {1, 5, 10, 3, 3, "pad=0x1x2x0"},                         /* asymmetric, even W */
    {1, 6, 12, 3, 2, "stride=1x3 dilation=1x2 pad=1x1x2x1"}, /* per-tap loads with pix */
};

/* vec x pix on both targets and both input types, the geometry and C rotating. */
static void test_sweep(void **state) {
    (void)state;
    const char *targets[] = {"sm_90", "gfx942"}, *dts[] = {"bf16", "f16"};
    const uint32_t vecs[] = {1, 2, 4, 8}, pixs[] = {1, 2, 4, 8}, chans[] = {8, 24, 40};
    const char *cvs[] = {"1", "2", "4", "32"};
    unsigned i = 0;
    for (size_t ti = 0; ti < COUNT(targets); ti++)
        for (size_t di = 0; di < COUNT(dts); di++)
            for (size_t vi = 0; vi < COUNT(vecs); vi++)
                for (size_t pi = 0; pi < COUNT(pixs); pi++, i++) {
                    size_t g = (i * 3 + ti) % COUNT(geos);
                    uint64_t c = chans[(i + vi) % COUNT(chans)];
                    const uint64_t ext[7] = {geos[g].n, c, geos[g].h, geos[g].w, c, geos[g].r, geos[g].s};
                    char knobs[256];
                    snprintf(knobs, sizeof knobs, "algo=direct groups=%llu dtype=%s out_dtype=%s vec_a=%u dw_pix=%u "
                             "dw_cvecs=%s %s", (unsigned long long)c, dts[di], dts[di], vecs[vi], pixs[pi],
                             cvs[(i / 2) % COUNT(cvs)], geos[g].geo);
                    run_case("conv", targets[ti], ext, 7, knobs, NULL);
                }
}

/* 3-D (sliding window along W, then strided), the chain, f32 out. */
static void test_3d_and_chain(void **state) {
    (void)state;
    const uint64_t v3[9] = {1, 16, 5, 6, 7, 16, 3, 3, 3}, v3b[9] = {2, 8, 4, 5, 9, 8, 2, 3, 5};
    run_case("conv3d", "sm_90a", v3, 9, "groups=16 dw_pix=4 pad=1x1x1x1x1x1", NULL);
    run_case("conv3d", "gfx942", v3b, 9, "groups=8 dtype=f16 out_dtype=f16 vec_a=4 dw_pix=8 stride=2x1x2 "
             "pad=1x0x1x1x2x0 dilation=1x2x1", NULL);
    const uint64_t dw[7] = {2, 40, 5, 9, 40, 3, 3};
    run_case("conv", "sm_90a", dw, 7, "groups=40 dtype=bf16 out_dtype=bf16 fuse=bias,relu dw_cvecs=4", NULL);
    run_case("conv", "gfx942", dw, 7, "groups=40 dtype=bf16 out_dtype=f32 fuse=add dw_pix=2 stride=2x1", NULL);
}

/* One binary at both row paths and at a filter taller than one LDS chunk
 * (32 taps: 7x7 is two chunks of four and three rows, 1x33 is refused). */
static void test_one_binary(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90");
    const uint64_t ext[7] = {1, 16, 7, 11, 16, 3, 3};
    rk_instance in;
    rk_shape sh;
    make("conv", t, ext, 7, "groups=16 dw_pix=4 vec_a=8 dw_cvecs=2", &in, &sh);
    char first[256], name[256];
    assert_int_equal(rk_instance_name(&in, first, sizeof first), RK_OK);
    rk_kernel *k = NULL;
    assert_int_equal(rk_instance_build(&in, t, &k), RK_OK);
    const char *knobs[] = {"stride=1x1", "stride=2x2", "dilation=1x2 pad=1x1x2x2", "stride=1x2 pad=0x0x0x0",
                           "pad=3x3x3x3"};
    const uint64_t exts[][7] = {{1, 16, 7, 11, 16, 3, 3}, {1, 16, 7, 11, 16, 3, 3}, {1, 16, 7, 11, 16, 3, 3},
                                {2, 16, 9, 13, 16, 3, 5}, {1, 16, 8, 9, 16, 7, 7}};
    for (size_t i = 0; i < COUNT(knobs); i++) {
        rk_instance g = in;
        uint64_t locked = 0;
        assert_int_equal(problem_knobs_set(&g, knobs[i], &locked), RK_OK);
        assert_int_equal(rk_instance_name(&g, name, sizeof name), RK_OK);
        assert_string_equal(name, first);
        rk_shape s2 = sh;
        assert_int_equal(rk_shape_update(RK_FAMILY_CONV, &s2, NULL, exts[i], 7, false), RK_OK);
        verify(t, k, &g, &s2, knobs[i]);
    }
    rk_kernel_free(k);
}

/* The small-group kernel: groups of 4 channels, a channel multiplier, and a
 * depthwise problem with the depthwise knobs off. */
static void test_small_groups(void **state) {
    (void)state;
    const uint64_t grp[7] = {2, 16, 5, 7, 16, 3, 3}, mult[7] = {1, 6, 7, 5, 18, 3, 2}, dw[7] = {1, 24, 5, 7, 24, 3, 3};
    rk_instance in;
    run_case("conv", "sm_90", grp, 7, "groups=4 pad=1x0x0x1 dtype=bf16 out_dtype=bf16", &in);
    assert_int_equal(in.u.conv.algo, RK_CONV_DIRECT);
    assert_int_equal(in.u.conv.dw_pix, 0);
    run_case("conv", "gfx942", grp, 7, "groups=4 stride=2x2 dtype=f16 out_dtype=f16", NULL);
    run_case("conv", "sm_90", mult, 7, "groups=6 stride=1x2", NULL);
    run_case("conv", "gfx942", dw, 7, "groups=24 dw_pix=off dw_cvecs=off vec_a=8", NULL);
}

/* The heuristic: the depthwise kernel for depthwise problems, its knobs in the name. */
static void test_heuristic(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    rk_instance in;
    rk_shape sh;
    const uint64_t big[7] = {32, 512, 28, 28, 512, 3, 3};
    make("conv", t, big, 7, "groups=512", &in, &sh);
    assert_int_equal(in.u.conv.algo, RK_CONV_DIRECT);
    assert_int_equal(in.u.conv.g.vec_a, 8);
    assert_int_equal(in.u.conv.dw_pix, 3);     /* 4 pixels: Q 28 has no tail */
    assert_int_equal(in.u.conv.dw_cvecs, 6);   /* 32 vectors: 256 channels a block */
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    if (!strstr(name, "_aldirect_") || !strstr(name, "_px4_cv32")) fail_msg("name %s", name);
    const uint64_t odd[7] = {1, 24, 9, 7, 24, 3, 3};
    make("conv", t, odd, 7, "groups=24", &in, &sh);
    assert_int_equal(in.u.conv.dw_cvecs, 1);   /* 3 vectors of 8: no power of two above 1 divides them */
    assert_int_equal(in.u.conv.dw_pix, 1);     /* too few threads for more */
    const uint64_t grp[7] = {1, 16, 9, 7, 16, 3, 3};
    make("conv", t, grp, 7, "groups=4", &in, &sh);
    assert_int_equal(in.u.conv.algo, RK_CONV_DIRECT);
    assert_int_equal(in.u.conv.dw_pix, 0);
    assert_int_equal(in.u.conv.dw_cvecs, 0);
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    if (strstr(name, "_px") || strstr(name, "_cv")) fail_msg("small-group name %s", name);
    make("conv", t, grp, 7, "groups=1", &in, &sh);
    assert_int_equal(in.u.conv.algo, RK_CONV_IGEMM);
    assert_int_equal(in.u.conv.dw_pix, 0);
}

static void test_bad_input(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90");
    const struct { const char *knobs; uint64_t ext[7]; const char *msg; } rows[] = {
        {"algo=direct groups=4 vec_a=1 dw_pix=2 dw_cvecs=4", {1, 16, 5, 5, 16, 3, 3},
         "depthwise kernel (dw_pix 2) needs C/groups = K/groups = 1"},
        {"algo=direct groups=12 vec_a=8 dw_pix=2 dw_cvecs=4", {1, 12, 5, 5, 12, 3, 3}, "K a multiple of vec_a = 8"},
        {"algo=direct groups=8 vec_a=8 dw_pix=2 dw_cvecs=4 pad=0x0x16x16", {1, 8, 5, 40, 8, 1, 33},
         "filter width S = 33"},
    };
    for (size_t i = 0; i < COUNT(rows); i++) {
        rk_instance in;
        rk_shape sh;
        rk_instance_default(RK_FAMILY_CONV, &in);
        in.u.conv.g.wave = 32;
        uint64_t locked = 0;
        assert_int_equal(problem_knobs_set(&in, rows[i].knobs, &locked), RK_OK);
        rk_shape_default(RK_FAMILY_CONV, &sh);
        assert_int_equal(rk_shape_update(RK_FAMILY_CONV, &sh, NULL, rows[i].ext, 7, false), RK_OK);
        if (rk_instance_validate(&in, t)) fail_msg("row %zu: %s", i, rk_error_message());
        if (rk_instance_check_shape(&in, &sh) == RK_OK) fail_msg("row %zu (%s) was accepted", i, rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("row %zu: message '%s' lacks '%s'", i, rk_error_message(), rows[i].msg);
    }
    const struct { const char *knobs, *msg; } specs[] = {
        {"algo=igemm dw_pix=4 dw_cvecs=4", "with algo igemm leave them off"},
        {"algo=direct dw_pix=4", "'dw_pix' = 4 and 'dw_cvecs' = off go together"},
        {"algo=direct dw_cvecs=8", "'dw_pix' = off and 'dw_cvecs' = 8 go together"},
        {"dw_pix=3", "must be one of off|1|2|4|8"},
        {"dw_cvecs=128", "must be one of off|1|2|4|8|16|32|64"},
    };
    for (size_t i = 0; i < COUNT(specs); i++) {
        rk_instance in;
        rk_instance_default(RK_FAMILY_CONV, &in);
        in.u.conv.g.wave = 32;
        uint64_t locked = 0;
        rk_status st = problem_knobs_set(&in, specs[i].knobs, &locked);
        if (!st) st = rk_instance_validate(&in, t);
        if (st == RK_OK) fail_msg("spec %zu (%s) was accepted", i, specs[i].knobs);
        if (!strstr(rk_error_message(), specs[i].msg))
            fail_msg("spec %zu: message '%s' lacks '%s'", i, rk_error_message(), specs[i].msg);
    }
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_conv_depthwise_emu: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep),        cmocka_unit_test(test_3d_and_chain), cmocka_unit_test(test_one_binary),
        cmocka_unit_test(test_small_groups), cmocka_unit_test(test_heuristic),    cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
