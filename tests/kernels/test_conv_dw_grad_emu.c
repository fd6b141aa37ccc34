/* rocke tests — the depthwise dgrad and wgrad kernels of algo direct
 * (conv_depthwise.c with direction dgrad, conv_depthwise_wgrad.c) on the
 * CPU emulator against the double reference: odd sizes (N 2, C 37, 13x11),
 * 3x3 and 5x5, stride 1, 2 and 3, padding 0, 1, 2 and asymmetric, dilation
 * 2, N 1, channel tails (C not a multiple of the channels a block holds),
 * vec 1, 2, 4, 8 by dw_pix 1, 2, 4, 8, f16, bf16 and f32 in, f16, bf16 and
 * f32 out, on sm_90, sm_80, sm_90a, gfx942 and gfx950; 3-D; wgrad split 1..5
 * (the last-arriving block's sum), each launched twice with equal bits; wgrad
 * at C 7 and 13 (odd H, W; pad 0 / 1, stride 2, dilation 2; every dtype);
 * one dgrad binary at every row path; the
 * heuristic's picks on every target and the bad-input messages. Fresh
 * random data; the seed is printed (ROCKE_SEED=N replays). */
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
    if (problem_tuned(fam, t, ext, rank, knobs, in, sh)) fail_msg("%s [%s]: %s", t->name, knobs, rk_error_message());
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

/* Build for `knobs` at ext, check that the direct kernel took it, run, verify. */
static void run_case(const char *fam, const char *target, const uint64_t *ext, uint32_t rank, const char *knobs) {
    const rk_target *t = rk_target_find(target);
    rk_instance in;
    rk_shape sh;
    make(fam, t, ext, rank, knobs, &in, &sh);
    if (in.u.conv.algo != RK_CONV_DIRECT || !in.u.conv.dw_pix) fail_msg("%s [%s]: not the depthwise kernel", target, knobs);
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s [%s]: %s", target, knobs, rk_error_message());
    verify(t, k, &in, &sh, knobs);
    rk_kernel_free(k);
}

/* Geometries: N, H, W, R, S (C = K = groups from the sweep) and the geometry knobs. */
static const struct { uint64_t n, h, w, r, s; const char *geo; } geos[] = {
    {2, 13, 11, 3, 3, "pad=1x1x1x1"},
    {2, 13, 11, 3, 3, "stride=2x2 pad=0x0x0x0"},                 /* dX rows and columns no dY pixel reaches */
    {1, 13, 11, 3, 3, "stride=2x2 pad=2x2x2x2"},
    {2, 13, 11, 3, 3, "dilation=2x2 pad=2x2x2x2"},
    {1, 13, 11, 5, 5, "pad=2x2x2x2"},                            /* 5x5: the window over 5 taps */
    {2, 12, 13, 5, 5, "stride=2x2 pad=2x2x1x2"},                 /* 5x5 strided, asymmetric */
    {1, 9, 14, 3, 3, "stride=3x2 dilation=2x1 pad=1x2x0x1"},     /* stride 3, dilation along H only */
    {1, 7, 12, 3, 2, "stride=1x3 dilation=1x2 pad=1x1x2x1"},     /* dilation along W at stride 3 */
};

/* vec x pix on four targets, both directions, the geometry, C and the output type rotating. */
static void test_sweep(void **state) {
    (void)state;
    const char *targets[] = {"sm_90", "gfx942", "sm_80", "gfx950"}, *dirs[] = {"dgrad", "wgrad"};
    const char *dts[][2] = {{"bf16", "bf16"}, {"f16", "f16"}, {"bf16", "f32"}, {"f16", "f32"}, {"f32", "f32"}};
    const uint32_t vecs[] = {1, 2, 4, 8}, pixs[] = {1, 2, 4, 8};
    const uint64_t chans[] = {40, 24, 56};   /* 5, 3, 7 vectors of 8: tails for 2 and 4 vectors a block */
    const char *cvs[] = {"1", "2", "4", "32"};
    unsigned i = 0;
    for (size_t di = 0; di < COUNT(dirs); di++)
        for (size_t vi = 0; vi < COUNT(vecs); vi++)
            for (size_t pi = 0; pi < COUNT(pixs); pi++, i++) {
                uint32_t pix = pixs[pi];
                if (di == 1 && pix * vecs[vi] > 32) pix = 32 / vecs[vi];   /* wgrad: at most 32 accumulators */
                size_t g = (i * 3 + di) % COUNT(geos), ti = (i + vi) % COUNT(targets);
                uint64_t c = vecs[vi] == 1 && i % 2 ? 37 : chans[(i + pi) % COUNT(chans)];
                const uint64_t ext[7] = {geos[g].n, c, geos[g].h, geos[g].w, c, geos[g].r, geos[g].s};
                char knobs[256];
                snprintf(knobs, sizeof knobs, "direction=%s algo=direct groups=%llu dtype=%s out_dtype=%s vec_a=%u "
                         "dw_pix=%u dw_cvecs=%s %s", dirs[di], (unsigned long long)c, dts[i % 5][0], dts[i % 5][1],
                         vecs[vi], pix, cvs[(i / 2) % COUNT(cvs)], geos[g].geo);
                run_case("conv", targets[ti], ext, 7, knobs);
            }
}

/* The odd problem through the heuristic (N2 C37 13x11: vec 1), both directions, every geometry. */
static void test_heuristic_odd(void **state) {
    (void)state;
    const char *targets[] = {"sm_90a", "gfx942"};
    for (size_t g = 0; g < COUNT(geos); g++)
        for (int d = 0; d < 2; d++) {
            const uint64_t ext[7] = {geos[g].n, 37, geos[g].h, geos[g].w, 37, geos[g].r, geos[g].s};
            char knobs[160];
            snprintf(knobs, sizeof knobs, "direction=%s groups=37 %s", d ? "wgrad" : "dgrad", geos[g].geo);
            run_case("conv", targets[(g + (size_t)d) % 2], ext, 7, knobs);
        }
}

/* wgrad at few channels (C 7 and 13: vec 1, most of a block's channel vectors empty), odd H and W,
 * padding 0 and 1, stride 2, dilation 2, every dtype, one split and three, through the heuristic's
 * vector and explicit knobs (8 taps a thread: a 3x3 filter in two chunks, the second with 7 empty taps). */
static void test_wgrad_few_channels(void **state) {
    (void)state;
    const char *dts[][2] = {{"bf16", "bf16"}, {"f16", "f16"}, {"f32", "f32"}, {"bf16", "f32"}};
    const char *geo[] = {"pad=0x0x0x0", "pad=1x1x1x1", "stride=2x2 pad=1x1x1x1", "stride=2x2 pad=0x0x0x0",
                         "dilation=2x2 pad=1x1x1x1"};
    const uint64_t chans[] = {7, 13};
    unsigned i = 0;
    for (size_t ci = 0; ci < COUNT(chans); ci++)
        for (size_t gi = 0; gi < COUNT(geo); gi++, i++) {
            uint64_t c = chans[ci];
            const uint64_t ext[7] = {1 + i % 2, c, 9, 7, c, 3, 3};
            char knobs[256];
            snprintf(knobs, sizeof knobs, "direction=wgrad groups=%llu dtype=%s out_dtype=%s split_k=%u %s %s",
                     (unsigned long long)c, dts[i % 4][0], dts[i % 4][1], i % 2 ? 3u : 1u,
                     i % 3 ? "" : "algo=direct vec_a=1 dw_pix=8 dw_cvecs=4", geo[gi]);
            run_case("conv", i % 2 ? "gfx942" : "sm_90a", ext, 7, knobs);
        }
}

/* 3-D, both directions (the d axis strided and dilated). */
static void test_3d(void **state) {
    (void)state;
    const uint64_t v3[9] = {1, 16, 5, 6, 7, 16, 3, 3, 3}, v3b[9] = {2, 8, 4, 5, 9, 8, 2, 3, 5};
    run_case("conv3d", "sm_90a", v3, 9, "direction=dgrad groups=16 pad=1x1x1x1x1x1");
    run_case("conv3d", "gfx942", v3b, 9, "direction=dgrad groups=8 dtype=f16 out_dtype=f16 vec_a=4 dw_pix=2 "
             "stride=2x1x2 pad=1x0x1x1x2x0 dilation=1x2x1");
    run_case("conv3d", "sm_90a", v3, 9, "direction=wgrad groups=16 split_k=3 pad=1x1x1x1x1x1");
    run_case("conv3d", "gfx942", v3b, 9, "direction=wgrad groups=8 dtype=f16 out_dtype=f32 vec_a=4 dw_pix=4 "
             "split_k=2 stride=2x1x2 pad=1x0x1x1x2x0 dilation=1x2x1");
}

/* Launch k twice on one problem (Work kept, dW cleared between); both outputs
 * verified, their bits equal: the counters were reset for the second launch
 * and the sum's order is fixed. */
static void twice(const rk_target *t, rk_kernel *k, const rk_instance *in, const rk_shape *sh) {
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, in, sh, seed ^ 0x5bd1e995ull), RK_OK);
    size_t out = 2;   /* dW */
    void *first = NULL;
    for (int l = 0; l < 2; l++) {
        rk_problem_diff c;
        if (problem_emu_verify(t, k, &p, sh, &c)) fail_msg("launch %d: %s", l, rk_error_message());
        if (c.bad || !c.total) fail_msg("launch %d: %llu/%llu bad, %s", l, (unsigned long long)c.bad,
                                        (unsigned long long)c.total, c.first_bad);
        if (!l) {
            first = malloc(p.buf[out].bytes);
            memcpy(first, p.buf[out].data, p.buf[out].bytes);
            memset(p.buf[out].data, 0, p.buf[out].bytes);   /* the second launch must write dW again */
        } else if (memcmp(first, p.buf[out].data, p.buf[out].bytes)) {
            fail_msg("dW differs between two launches");
        }
    }
    free(first);
    rk_problem_free(&p);
}

/* wgrad split 1..5 over one problem (splits with empty tails: 2*7*6 = 84 pixels over 64 lanes). */
static void test_wgrad_splits(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90");
    const uint64_t ext[7] = {2, 40, 13, 11, 40, 3, 3};
    for (uint32_t sk = 1; sk <= 5; sk++) {
        char knobs[160];
        snprintf(knobs, sizeof knobs, "direction=wgrad groups=40 stride=2x2 vec_a=8 dw_pix=4 dw_cvecs=4 split_k=%u "
                 "out_dtype=f32", sk);
        rk_instance in;
        rk_shape sh;
        make("conv", t, ext, 7, knobs, &in, &sh);
        assert_int_equal(in.u.conv.g.split_k, sk);
        rk_kernel *k = NULL;
        if (rk_instance_build(&in, t, &k)) fail_msg("%s: %s", knobs, rk_error_message());
        twice(t, k, &in, &sh);
        rk_kernel_free(k);
    }
}

/* One dgrad binary on every row path: the window (and NVIDIA's 3-tap row) at stride 1, the gather at
 * stride 2 and 3 and at dilation 2, a 5x5 and a 7x7 filter (two LDS chunks). */
static void test_one_binary(void **state) {
    (void)state;
    const char *targets[] = {"sm_90", "gfx942"};
    for (size_t ti = 0; ti < COUNT(targets); ti++) {
        const rk_target *t = rk_target_find(targets[ti]);
        const uint64_t ext[7] = {1, 16, 9, 11, 16, 3, 3};
        rk_instance in;
        rk_shape sh;
        make("conv", t, ext, 7, "direction=dgrad groups=16 dw_pix=4 vec_a=8 dw_cvecs=2", &in, &sh);
        rk_kernel *k = NULL;
        assert_int_equal(rk_instance_build(&in, t, &k), RK_OK);
        const char *knobs[] = {"stride=1x1", "stride=2x2", "stride=3x3 pad=0x1x2x0", "dilation=2x2 pad=2x2x2x2",
                               "stride=1x2 dilation=1x2", "pad=2x2x2x2", "pad=3x3x3x3 stride=2x1"};
        const uint64_t exts[][7] = {{1, 16, 9, 11, 16, 3, 3}, {2, 16, 9, 11, 16, 3, 3}, {1, 16, 10, 13, 16, 3, 3},
                                    {1, 16, 9, 11, 16, 3, 3}, {1, 16, 9, 11, 16, 3, 3}, {1, 16, 9, 12, 16, 5, 5},
                                    {1, 16, 9, 10, 16, 7, 7}};
        for (size_t i = 0; i < COUNT(knobs); i++) {
            rk_instance g = in;
            uint64_t locked = 0;
            assert_int_equal(problem_knobs_set(&g, knobs[i], &locked), RK_OK);
            rk_shape s2 = sh;
            assert_int_equal(rk_shape_update(RK_FAMILY_CONV, &s2, NULL, exts[i], 7, false), RK_OK);
            verify(t, k, &g, &s2, knobs[i]);
        }
        rk_kernel_free(k);
    }
}

/* The heuristic: the direct kernels for depthwise dgrad / wgrad on every target, the implicit GEMM
 * for other problems. */
static void test_heuristic(void **state) {
    (void)state;
    const char *targets[] = {"gfx942", "gfx950", "sm_80", "sm_90", "sm_90a"};
    const uint64_t big[7] = {32, 512, 28, 28, 512, 3, 3}, s2[7] = {32, 144, 56, 56, 144, 3, 3};
    for (size_t ti = 0; ti < COUNT(targets); ti++) {
        const rk_target *t = rk_target_find(targets[ti]);
        rk_instance in;
        rk_shape sh;
        make("conv", t, big, 7, "direction=dgrad groups=512", &in, &sh);
        assert_int_equal(in.u.conv.algo, RK_CONV_DIRECT);
        assert_int_equal(in.u.conv.g.vec_a, 8);
        assert_int_equal(in.u.conv.dw_pix, 3);     /* 4 pixels: W 28 has no tail */
        assert_int_equal(in.u.conv.dw_cvecs, 6);   /* 32 vectors */
        make("conv", t, s2, 7, "direction=dgrad groups=144 stride=2x2", &in, &sh);
        assert_int_equal(in.u.conv.algo, RK_CONV_DIRECT);
        assert_int_equal(in.u.conv.dw_cvecs, 2);   /* 18 vectors of 8: 2 a block */
        make("conv", t, big, 7, "direction=wgrad groups=512", &in, &sh);
        assert_int_equal(in.u.conv.algo, RK_CONV_DIRECT);
        assert_int_equal(in.u.conv.g.vec_a, 8);
        assert_int_equal(in.u.conv.dw_pix, 3);     /* 4 taps a thread, 3 chunks of 3x3 */
        /* channel blocks x 3 chunks x splits: about 4 blocks a compute unit (at least 3: the splits
         * keep 16 pixels a lane) */
        uint64_t cv = 1u << (in.u.conv.dw_cvecs - 1), blocks = (64 + cv - 1) / cv * 3 * in.u.conv.g.split_k;
        if (blocks < 3ull * t->compute_units || in.u.conv.g.split_k > 32 || in.u.conv.g.split_k < 2)
            fail_msg("%s: wgrad %llu blocks (split %u, %llu vectors a block) for %u units", t->name,
                     (unsigned long long)blocks, in.u.conv.g.split_k, (unsigned long long)cv, t->compute_units);
        char name[256];
        assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
        if (!strstr(name, "_dwgrad_aldirect_") || !strstr(name, "_px4_")) fail_msg("name %s", name);
        /* not depthwise: the implicit GEMM; dgrad with rows wider than the stage: too */
        const uint64_t grp[7] = {2, 16, 9, 7, 16, 3, 3}, wide[7] = {1, 8, 5, 40, 8, 1, 33};
        make("conv", t, grp, 7, "direction=dgrad groups=4", &in, &sh);
        assert_int_equal(in.u.conv.algo, RK_CONV_IGEMM);
        make("conv", t, grp, 7, "direction=wgrad groups=4", &in, &sh);
        assert_int_equal(in.u.conv.algo, RK_CONV_IGEMM);
        make("conv", t, wide, 7, "direction=dgrad groups=8 pad=0x0x16x16", &in, &sh);
        assert_int_equal(in.u.conv.algo, RK_CONV_IGEMM);
        make("conv", t, wide, 7, "direction=wgrad groups=8 pad=0x0x16x16", &in, &sh);
        assert_int_equal(in.u.conv.algo, RK_CONV_DIRECT);
    }
}

static void test_bad_input(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90");
    const struct { const char *knobs, *msg; } specs[] = {
        {"direction=dgrad algo=direct", "algo direct computes direction dgrad on the depthwise kernel only"},
        {"direction=wgrad algo=direct vec_a=8 dw_pix=8 dw_cvecs=4", "holds 64 f32 accumulators per thread, at most 32"},
        {"direction=dgrad algo=direct vec_a=8 dw_pix=4 dw_cvecs=4 path=wgmma", "knob 'path' must be mma"},
        {"direction=dgrad algo=direct vec_a=8 dw_pix=4 dw_cvecs=4 split_k=2", "splits the wgrad reduction only"},
        {"direction=wgrad algo=direct vec_a=8 dw_pix=4 dw_cvecs=4 fuse=relu", "applies to the forward output only"},
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
    const struct { const char *knobs; uint64_t ext[7]; const char *msg; } rows[] = {
        {"direction=dgrad algo=direct groups=4 vec_a=1 dw_pix=2 dw_cvecs=4", {1, 16, 5, 5, 16, 3, 3},
         "needs C/groups = K/groups = 1"},
        {"direction=wgrad algo=direct groups=12 vec_a=8 dw_pix=2 dw_cvecs=4", {1, 12, 5, 5, 12, 3, 3},
         "K a multiple of vec_a = 8"},
        {"direction=dgrad algo=direct groups=8 vec_a=8 dw_pix=2 dw_cvecs=4 pad=0x0x16x16", {1, 8, 5, 40, 8, 1, 33},
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
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_conv_dw_grad_emu: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep),      cmocka_unit_test(test_heuristic_odd), cmocka_unit_test(test_3d),
        cmocka_unit_test(test_wgrad_few_channels),
        cmocka_unit_test(test_wgrad_splits), cmocka_unit_test(test_one_binary), cmocka_unit_test(test_heuristic),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
