/* rocke tests — the convolution families on the CPU emulator: forward,
 * dgrad and wgrad against the double direct convolution at small odd
 * geometries (odd H, W, C, K; stride 2 and 3; dilation 2; padding wider than
 * the filter's half, asymmetric; groups 2 and depthwise; 3-D; 1x1 as a plain
 * GEMM; split-K wgrad; the direct depthwise / small-group kernel) on sm_90a,
 * sm_80 and gfx942; sm_90a's wgmma kernels and the path heuristic; the three kernels
 * checked against each other through the adjoint identity <conv(X, W), dY>
 * = <X, dgrad(dY, W)> = <W, wgrad(dY, X)>, which needs no reference; one
 * binary run at several geometries; and bad input with its message. Fresh
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
#include "../src/base/fp.h"
#include "../support/problem_emu.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t seed;
static unsigned runs;

/* Instance of fam tuned for ext with `knobs` (geometry included). */
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

/* Build, run on the emulator, check every output element; the problem is
 * left to the caller when keep is non-NULL. */
static void run_case(const char *fam, const char *target, const uint64_t *ext, uint32_t rank, const char *knobs,
                     rk_problem *keep) {
    const rk_target *t = rk_target_find(target);
    rk_instance in;
    rk_shape sh;
    make(fam, t, ext, rank, knobs, &in, &sh);
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    if (rk_instance_check_shape(&in, &sh)) fail_msg("%s %s %s: %s", target, name, knobs, rk_error_message());
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    rk_problem_diff c;
    if (problem_emu_verify(t, k, &p, &sh, &c)) fail_msg("%s %s: launch: %s", target, name, rk_error_message());
    if (c.bad || !c.total)
        fail_msg("%s %s [%s] seed %llu: %llu/%llu bad, %s", target, name, knobs, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    rk_kernel_free(k);
    if (keep) *keep = p;
    else rk_problem_free(&p);
}

static const char *const dirs[] = {"fwd", "dgrad", "wgrad"};

/* Odd geometries, each direction, NVIDIA and AMD. */
static void test_geometries(void **state) {
    (void)state;
    const struct { uint64_t ext[7]; const char *geo; } cases[] = {
        {{2, 5, 7, 9, 3, 3, 3}, "stride=2x2 pad=1x1x1x1"},
        {{1, 3, 11, 10, 5, 3, 3}, "stride=3x2 pad=2x0x3x1 dilation=2x1"},
        {{2, 6, 9, 7, 10, 3, 2}, "groups=2 stride=1x3 pad=3x3x0x2 dilation=1x2"},
        {{3, 5, 6, 5, 7, 1, 1}, "pad=0x0x0x0"},
    };
    const char *targets[] = {"sm_90a", "gfx942"};
    for (size_t t = 0; t < 2; t++)
        for (size_t c = 0; c < COUNT(cases); c++)
            for (size_t d = 0; d < 3; d++) {
                char knobs[160];
                snprintf(knobs, sizeof knobs, "direction=%s %s dtype=%s out_dtype=%s", dirs[d], cases[c].geo,
                         (c + d) % 2 ? "bf16" : "f16", d == 2 ? "f32" : (c % 2 ? "bf16" : "f16"));
                run_case("conv", targets[t], cases[c].ext, 7, knobs, NULL);
            }
}

/* Vector gathers (C a multiple of 8), depthwise, split-K wgrad, a chain,
 * 3-D, sm_80. */
static void test_paths(void **state) {
    (void)state;
    const uint64_t wide[7] = {2, 16, 7, 5, 24, 3, 3}, dw[7] = {2, 8, 5, 7, 8, 3, 3};
    run_case("conv", "sm_90a", wide, 7, "direction=fwd stride=2x1 pad=1x2x1x0 fuse=bias,relu path=mma", NULL);
    run_case("conv", "gfx942", wide, 7, "direction=fwd groups=2 fuse=add out_dtype=f32", NULL);
    run_case("conv", "sm_80", wide, 7, "direction=wgrad stride=2x2 split_k=3", NULL);
    run_case("conv", "gfx942", wide, 7, "direction=wgrad dilation=2x2 pad=2x2x2x2 split_k=2 dtype=bf16", NULL);
    run_case("conv", "sm_80", wide, 7, "direction=dgrad stride=3x2 pad=1x1x1x1", NULL);
    for (size_t d = 0; d < 3; d++) {
        char knobs[96];
        snprintf(knobs, sizeof knobs, "direction=%s algo=igemm groups=8 stride=2x1", dirs[d]);
        run_case("conv", d % 2 ? "gfx942" : "sm_90a", dw, 7, knobs, NULL);
    }
    const uint64_t v3[9] = {2, 3, 4, 5, 6, 5, 3, 3, 2};
    run_case("conv3d", "sm_90a", v3, 9, "direction=fwd stride=2x1x2 pad=1x1x1x0x0x1 dilation=1x2x1", NULL);
    run_case("conv3d", "gfx942", v3, 9, "direction=dgrad stride=2x1x2 pad=1x1x1x0x0x1", NULL);
    run_case("conv3d", "sm_90a", v3, 9, "direction=wgrad stride=1x2x1 pad=1x1x1x1x1x1 split_k=2", NULL);
}

/* sm_90a's wgmma kernels (fwd, wgrad, dgrad): channel vectors of 8, 4, 2
 * and single channels (cp.async 16 / 8 / 4 bytes, element copies) gathered
 * into the swizzled stages; K tails (tile N 64 over 40 or 41 channels), M
 * and N tails, K loops longer than the stage ring, stride, asymmetric
 * padding, dilation, groups, a chain, 1x1 as a plain GEMM, 3-D; wgrad's
 * split-K reduction over whole and edge tiles. */
static void test_wgmma(void **state) {
    (void)state;
    const struct { uint64_t ext[7]; const char *knobs; } cases[] = {
        {{2, 32, 9, 11, 40, 3, 3}, "stride=2x2 pad=1x1x2x2 dilation=2x2"},   /* 5 K tiles, 4 stages */
        {{1, 16, 7, 13, 41, 3, 3}, "pad=2x1x0x3 fuse=bias,relu dtype=bf16 out_dtype=bf16"},
        {{2, 12, 5, 7, 24, 3, 2}, "stride=1x2 pad=2x2x1x1 out_dtype=f32"},   /* vec 4 */
        {{1, 6, 11, 9, 16, 3, 3}, "stride=3x1 dilation=1x2 dtype=bf16"},      /* vec 2 */
        {{2, 5, 6, 9, 19, 3, 3}, "path=wgmma vec_a=1 vec_b=1 fuse=add"},     /* element gathers */
        {{1, 16, 9, 7, 36, 3, 3}, "groups=2 stride=2x2"},                    /* K/g = 18 */
        {{3, 24, 7, 6, 40, 1, 1}, "pad=0x0x0x0 fuse=bias"},                   /* gemm1x1 */
        /* wgrad: dY^T copied, im2col(X) gathered in 64-column boxes, split over N*P*Q */
        {{2, 16, 9, 7, 64, 3, 3}, "direction=wgrad path=wgmma split_k=3"},               /* whole and edge tiles */
        {{2, 16, 17, 19, 24, 3, 3}, "direction=wgrad path=wgmma split_k=5 stride=2x2 pad=1x2x0x1 dilation=2x2"},
        {{3, 6, 13, 11, 40, 3, 2}, "direction=wgrad path=wgmma out_dtype=f32 tile=128x128x64 warps=8x1 split_k=2"},
        {{2, 16, 9, 11, 36, 3, 3}, "direction=wgrad path=wgmma groups=2 dtype=bf16 out_dtype=bf16"},   /* one split */
        {{2, 5, 9, 9, 10, 3, 3}, "direction=wgrad path=wgmma vec_a=2 vec_b=1 split_k=4"},
        {{4, 24, 8, 8, 40, 1, 1}, "direction=wgrad path=wgmma pad=0x0x0x0 split_k=6"},   /* gemm1x1 */
        /* more than 16 splits, odd (the pair loop's tail) and not dividing the 18 K tiles; then more
         * splits than K tiles (empty splits add zeros) at stride 2, dilation 2 */
        {{1, 8, 37, 31, 64, 3, 3}, "direction=wgrad path=wgmma split_k=17 pad=1x1x1x1"},
        {{2, 8, 29, 27, 64, 3, 3}, "direction=wgrad path=wgmma split_k=22 stride=2x2 pad=1x1x1x1 dilation=2x1"},
        /* dgrad: the transposed im2col of dY as A, W's (tap, k) rows in 64-column boxes */
        {{2, 64, 9, 11, 24, 3, 3}, "direction=dgrad path=wgmma stride=2x2 pad=1x2x0x1 dilation=2x2"},
        {{3, 40, 13, 11, 8, 3, 2}, "direction=dgrad path=wgmma stride=3x2 out_dtype=f32"},
        {{2, 36, 15, 13, 16, 3, 3}, "direction=dgrad path=wgmma groups=2 dtype=bf16"},   /* C/g = 18 */
        {{2, 10, 9, 9, 5, 3, 3}, "direction=dgrad path=wgmma vec_a=1 vec_b=2"},
        {{2, 130, 7, 6, 16, 3, 3}, "direction=dgrad path=wgmma stride=2x2"},           /* N tail */
        {{4, 40, 8, 8, 24, 1, 1}, "direction=dgrad path=wgmma pad=0x0x0x0"},           /* gemm1x1 */
    };
    for (size_t c = 0; c < COUNT(cases); c++) {
        rk_instance in;
        rk_shape sh;
        make("conv", rk_target_find("sm_90a"), cases[c].ext, 7, cases[c].knobs, &in, &sh);
        if (in.u.conv.g.path != RK_GEMM_PATH_WGMMA) fail_msg("case %zu: the heuristic kept path=mma", c);
        run_case("conv", "sm_90a", cases[c].ext, 7, cases[c].knobs, NULL);
    }
    const uint64_t v3[9] = {2, 8, 4, 5, 6, 16, 3, 3, 2};
    run_case("conv3d", "sm_90a", v3, 9, "direction=fwd stride=2x1x2 pad=1x1x1x0x0x1 dilation=1x2x1", NULL);
    run_case("conv3d", "sm_90a", v3, 9, "direction=wgrad stride=1x2x1 pad=1x1x1x1x1x1 split_k=2", NULL);
    /* wgrad's split at the benchmark's 3x3 shapes: the blocks fill every SM (two per SM at tile M 64) without
     * spilling a few into a second round, i.e. tiles x splits in (want - tiles, want] */
    {
        const struct { uint64_t ext[7]; const char *knobs; uint32_t split; } rows[] = {
            {{8, 64, 56, 56, 64, 3, 3}, "direction=wgrad dtype=bf16", 29},                       /* 9 tiles */
            {{32, 256, 14, 14, 256, 3, 3}, "direction=wgrad dtype=bf16", 3},                     /* 36 tiles */
            {{16, 128, 28, 28, 128, 3, 3}, "direction=wgrad dtype=bf16 stride=2x2", 7},          /* 18 tiles */
        };
        const rk_target *t = rk_target_find("sm_90a");
        for (size_t i = 0; i < COUNT(rows); i++) {
            rk_instance in;
            rk_shape sh;
            make("conv", t, rows[i].ext, 7, rows[i].knobs, &in, &sh);
            const rk_gemm_spec *g = &in.u.conv.g;
            uint64_t n = rows[i].ext[1] * rows[i].ext[5] * rows[i].ext[6];
            uint64_t tiles = (rows[i].ext[4] + g->tile[0] - 1) / g->tile[0] * ((n + g->tile[1] - 1) / g->tile[1]);
            uint64_t want = (uint64_t)t->compute_units * (g->tile[0] == 64 ? 2 : 1);
            if (g->path != RK_GEMM_PATH_WGMMA || g->split_k != rows[i].split || tiles * g->split_k > want ||
                tiles * g->split_k + tiles <= want)
                fail_msg("wgrad row %zu: %llu tiles x %u splits (want %u)", i, (unsigned long long)tiles, g->split_k,
                         rows[i].split);
        }
    }
    /* wgrad's path: wgmma only where C/groups is a multiple of its tile N;
     * the H200's measured pairs (conv.c, tune_path). path=wgmma still gives wgmma. */
    {
        const struct { uint64_t ext[7]; int path; } picks[] = {
            {{7, 72, 17, 19, 136, 3, 3}, RK_GEMM_PATH_MMA},  {{4, 96, 31, 31, 200, 3, 3}, RK_GEMM_PATH_MMA},
            {{8, 192, 28, 28, 256, 3, 3}, RK_GEMM_PATH_WGMMA}, {{16, 384, 14, 14, 256, 3, 3}, RK_GEMM_PATH_WGMMA},
            {{8, 320, 15, 15, 136, 3, 3}, RK_GEMM_PATH_WGMMA}, {{8, 192, 14, 14, 192, 3, 3}, RK_GEMM_PATH_WGMMA},
            {{5, 48, 13, 11, 40, 3, 3}, RK_GEMM_PATH_MMA},   {{8, 64, 56, 56, 64, 3, 3}, RK_GEMM_PATH_WGMMA},
        };
        for (size_t i = 0; i < COUNT(picks); i++) {
            rk_instance in;
            rk_shape sh;
            make("conv", rk_target_find("sm_90a"), picks[i].ext, 7, "direction=wgrad dtype=bf16", &in, &sh);
            if (in.u.conv.g.path != picks[i].path) fail_msg("wgrad pick %zu: path %d", i, (int)in.u.conv.g.path);
            /* on wgmma, tile N divides C/groups (C192, C320: 64, not 128); tile M 64 where M = K is
             * an odd multiple of 64 (K192), 128 at K136 and K256 */
            if (in.u.conv.g.path == RK_GEMM_PATH_WGMMA && picks[i].ext[4] >= 128 &&
                in.u.conv.g.tile[0] != (picks[i].ext[4] % 128 == 64 ? 64u : 128u))
                fail_msg("wgrad pick %zu: tile M %u at K = %llu", i, in.u.conv.g.tile[0],
                         (unsigned long long)picks[i].ext[4]);
            if (in.u.conv.g.path == RK_GEMM_PATH_WGMMA && picks[i].ext[1] % in.u.conv.g.tile[1])
                fail_msg("wgrad pick %zu: tile N %u over C = %llu", i, in.u.conv.g.tile[1],
                         (unsigned long long)picks[i].ext[1]);
            make("conv", rk_target_find("sm_90a"), picks[i].ext, 7, "direction=wgrad dtype=bf16 path=wgmma", &in, &sh);
            assert_int_equal(in.u.conv.g.path, RK_GEMM_PATH_WGMMA);
        }
    }
    /* where wgmma does not apply, or is not asked for, the heuristic keeps mma */
    const uint64_t wide[7] = {2, 16, 7, 5, 24, 3, 3}, odd[7] = {1, 5, 7, 5, 8, 3, 3};
    const uint64_t full[7] = {2, 64, 7, 5, 64, 3, 3};   /* wgrad M = 64, N = 576: whole wgmma tiles */
    const struct { const char *target, *knobs; const uint64_t *ext; int path; } keep[] = {
        {"sm_90a", "direction=wgrad", full, RK_GEMM_PATH_WGMMA}, {"sm_90a", "direction=wgrad", wide, RK_GEMM_PATH_MMA}, {"sm_90a", "direction=dgrad", wide, RK_GEMM_PATH_WGMMA},
        {"sm_80", "", wide, RK_GEMM_PATH_MMA},                 {"sm_90a", "path=mma", wide, RK_GEMM_PATH_MMA},
        {"sm_90a", "", odd, RK_GEMM_PATH_MMA},                 {"sm_90a", "path=auto", wide, RK_GEMM_PATH_WGMMA},
    };
    for (size_t i = 0; i < COUNT(keep); i++) {
        rk_instance in;
        rk_shape sh;
        make("conv", rk_target_find(keep[i].target), keep[i].ext, 7, keep[i].knobs, &in, &sh);
        char name[256];
        assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
        const char *tag = keep[i].path == RK_GEMM_PATH_WGMMA ? "_pwgmma" : "_pmma";
        if (in.u.conv.g.path != keep[i].path || !strstr(name, tag))
            fail_msg("%s [%s]: got %s, wanted %s", keep[i].target, keep[i].knobs, name, tag);
    }
}

/* Element i of a host buffer in device format, as a double. */
static double elem(const rk_host_buf *b, uint64_t i) {
    const uint16_t *h = b->data;
    switch (b->param->type) {
    case RK_S_F16: return rk_f16_to_f32(h[i]);
    case RK_S_BF16: return rk_bf16_to_f32(h[i]);
    default: return ((const float *)b->data)[i];
    }
}

static double dot(const rk_host_buf *a, const rk_host_buf *b, double *mag) {
    double s = 0;
    for (uint64_t i = 0; i < a->count; i++) {
        double v = elem(a, i) * elem(b, i);
        s += v;
        *mag += fabs(v);
    }
    return s;
}

static rk_host_buf *buf(rk_problem *p, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, name)) return &p->buf[i];
    fail_msg("no buffer %s", name);
    return NULL;
}

/* The direct kernel (the heuristic's pick for few channels per group):
 * depthwise with channel vectors, channel multipliers, small groups, a
 * chain, 3-D. */
static void test_direct(void **state) {
    (void)state;
    const uint64_t dw[7] = {2, 24, 7, 9, 24, 3, 3}, mult[7] = {1, 6, 9, 7, 18, 3, 2}, grp[7] = {2, 12, 5, 7, 20, 3, 3};
    run_case("conv", "sm_90a", dw, 7, "groups=24 stride=2x1 pad=2x1x1x0", NULL);
    run_case("conv", "gfx942", dw, 7, "groups=24 dilation=2x2 pad=3x3x2x2 dtype=bf16 out_dtype=f32", NULL);
    run_case("conv", "sm_80", mult, 7, "groups=6 stride=3x2 fuse=bias,relu", NULL);
    run_case("conv", "gfx942", grp, 7, "groups=4 pad=1x0x0x1", NULL);
    const uint64_t v3[9] = {1, 8, 3, 6, 5, 8, 3, 3, 3};
    run_case("conv3d", "sm_90a", v3, 9, "groups=8 stride=1x2x2 pad=1x1x1x1x0x1", NULL);
    /* the heuristic's choice is in the kernel name */
    const rk_target *t = rk_target_find("sm_90a");
    rk_instance in;
    rk_shape sh;
    make("conv", t, dw, 7, "groups=24", &in, &sh);
    assert_int_equal(in.u.conv.algo, RK_CONV_DIRECT);
    assert_int_equal(in.u.conv.g.vec_a, 8);
    make("conv", t, dw, 7, "groups=1", &in, &sh);
    assert_int_equal(in.u.conv.algo, RK_CONV_IGEMM);
    const uint64_t one[7] = {1, 8, 5, 5, 8, 1, 1};
    make("conv", t, one, 7, "pad=0x0x0x0", &in, &sh);
    assert_int_equal(in.u.conv.algo, RK_CONV_GEMM1X1);
}

/* The three directions are adjoint: with X, W, dY shared, the three inner
 * products agree (f32 outputs). */
static void adjoint(const uint64_t ext[7], const char *const knobs_of[3]) {
    const char *geo = "groups=2 stride=2x3 pad=2x1x1x2 dilation=1x2 out_dtype=f32";
    const rk_target *t = rk_target_find("sm_90a");
    rk_problem p[3];
    for (size_t d = 0; d < 3; d++) {
        char knobs[160];
        snprintf(knobs, sizeof knobs, "direction=%s %s %s", dirs[d], geo, knobs_of[d]);
        rk_instance in;
        rk_shape sh;
        make("conv", t, ext, 7, knobs, &in, &sh);
        assert_int_equal(rk_problem_init(&p[d], &in, &sh, seed ^ (d + 77)), RK_OK);
    }
    /* share the inputs: fwd's X and W, dgrad's dY */
    rk_host_buf *X = buf(&p[0], "X"), *W = buf(&p[0], "Wt"), *dY = buf(&p[1], "dY");
    memcpy(buf(&p[2], "X")->data, X->data, X->bytes);
    memcpy(buf(&p[1], "Wt")->data, W->data, W->bytes);
    memcpy(buf(&p[2], "dY")->data, dY->data, dY->bytes);
    for (size_t d = 0; d < 3; d++) {
        rk_kernel *k = NULL;
        assert_int_equal(rk_instance_build(&p[d].inst, t, &k), RK_OK);
        if (problem_emu_launch(t, k, &p[d], &p[d].shape)) fail_msg("%s: %s", dirs[d], rk_error_message());
        rk_kernel_free(k);
    }
    double mag = 0;
    double s0 = dot(buf(&p[0], "Y"), dY, &mag);
    double s1 = dot(X, buf(&p[1], "dX"), &mag);
    double s2 = dot(W, buf(&p[2], "dW"), &mag);
    double tol = 1e-5 * mag + 1e-9;
    if (fabs(s0 - s1) > tol || fabs(s0 - s2) > tol || mag == 0)
        fail_msg("<Y,dY> = %.9g, <X,dX> = %.9g, <W,dW> = %.9g (tol %.3g)", s0, s1, s2, tol);
    for (size_t d = 0; d < 3; d++) rk_problem_free(&p[d]);
}

/* The three kernels on mma.sync; the forward on wgmma (element gathers,
 * K/g = 2) against them; all three on wgmma (C/g = 4). */
static void test_adjoint(void **state) {
    (void)state;
    const uint64_t odd[7] = {2, 6, 9, 8, 4, 3, 3}, even[7] = {2, 8, 9, 8, 4, 3, 3};
    const char *const mma[3] = {"path=mma", "path=mma", "path=mma"};
    const char *const fwd[3] = {"path=wgmma", "path=mma", "path=mma"};
    const char *const all[3] = {"path=wgmma", "path=wgmma", "path=wgmma"};
    adjoint(odd, mma);
    adjoint(odd, fwd);
    adjoint(even, all);
}

/* One binary, several geometries: the geometry knobs are not in the name. */
static void test_runtime_geometry(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("gfx942");
    const uint64_t ext[7] = {1, 4, 9, 7, 6, 3, 3};
    rk_instance in;
    rk_shape sh;
    make("conv", t, ext, 7, "vec_a=1 vec_b=1", &in, &sh);
    char first[256], name[256];
    assert_int_equal(rk_instance_name(&in, first, sizeof first), RK_OK);
    rk_kernel *k = NULL;
    assert_int_equal(rk_instance_build(&in, t, &k), RK_OK);
    const char *geos[] = {"stride=2x2", "stride=3x1 pad=0x2x1x1 dilation=2x1", "groups=2 pad=0x0x0x0",
                          "pad=4x3x2x5 dilation=2x3"};
    for (size_t i = 0; i < COUNT(geos); i++) {
        rk_instance g = in;
        uint64_t locked = 0;
        assert_int_equal(problem_knobs_set(&g, geos[i], &locked), RK_OK);
        assert_int_equal(rk_instance_name(&g, name, sizeof name), RK_OK);
        assert_string_equal(name, first);
        rk_problem p;
        assert_int_equal(rk_problem_init(&p, &g, &sh, seed + i), RK_OK);
        rk_problem_diff c;
        assert_int_equal(problem_emu_verify(t, k, &p, &sh, &c), RK_OK);
        if (c.bad) fail_msg("%s: %llu bad, %s", geos[i], (unsigned long long)c.bad, c.first_bad);
        rk_problem_free(&p);
    }
    rk_kernel_free(k);
}

static void test_bad_input(void **state) {
    (void)state;
    const struct { const char *knobs; uint64_t ext[7]; const char *msg; } rows[] = {
        {"pad=0x0x0x0 dilation=4x1", {1, 4, 5, 5, 4, 3, 3}, "the output is empty along h"},
        {"groups=3", {1, 4, 5, 5, 6, 3, 3}, "must both be multiples of groups = 3"},
        {"vec_a=8", {1, 12, 5, 5, 4, 3, 3}, "C / groups (X is read in vectors of channels) = 12 is not a multiple "
                                            "of vec_a = 8: build with --vec-a 4"},
        {"algo=gemm1x1", {1, 8, 5, 5, 8, 3, 3}, "this problem needs algo igemm"},
        {"direction=dgrad vec_a=1 vec_b=8", {1, 4, 5, 5, 8, 3, 3}, "C / groups (W is read in vectors of channels) = 4"},
        {"direction=dgrad vec_a=4 vec_b=1", {1, 4, 5, 5, 6, 3, 3}, "K / groups (dY is read in vectors of channels) = 6 "
                                                               "is not a multiple of vec_a = 4: build with --vec-a 2"},
        {"algo=direct groups=2 vec_a=1", {1, 40, 5, 5, 40, 3, 3}, "algo direct serves 1..16 channels per group"},
        {"algo=direct groups=4 vec_a=4", {1, 8, 5, 5, 8, 3, 3}, "needs a depthwise problem"},
        {"path=wgmma tile=64x64x64 warps=4x1 groups=2", {1, 8, 5, 5, 6, 3, 3}, "groups > 1 needs K / groups even"},
        {"direction=dgrad path=wgmma tile=64x64x64 warps=4x1 groups=2 vec_a=1 vec_b=1", {1, 6, 5, 5, 8, 3, 3},
         "groups > 1 needs C / groups even"},
    };
    const rk_target *t = rk_target_find("sm_90a");
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
        {"direction=dgrad fuse=relu", "applies to the forward output only"},
        {"split_k=2", "splits the wgrad reduction only"},
        {"direction=wgrad path=mma split_k=17", "path=mma splits wgrad at most 16 ways"},
        {"direction=wgrad split_k=33", "split_k"},
        {"stride=0x1", "'stride' and 'dilation' must be >= 1"},
        {"groups=0", "'groups' must be >= 1"},
        {"fuse=bias_row", "bias_row is not offered"},
        {"direction=sideways", "must be one of fwd|dgrad|wgrad"},
        {"direction=wgrad algo=direct", "algo direct computes direction wgrad on the depthwise kernel only"},
        {"path=wgmma algo=direct", "runs the implicit GEMM"},
        {"direction=dgrad path=wgmma tile=64x32x64 warps=4x1", "tile N 64, 128, 192 or 256"},
        {"path=wgmma tile=128x64x32 warps=8x1", "tile K 64"},
        {"path=wgmma tile=128x64x64 warps=2x2", "runs 8x1 warps"},
        {"path=auto", "auto is the heuristic's choice"},
        {"path=fast", "must be one of mma|wgmma|auto"},
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
    rk_instance in;
    rk_instance_default(RK_FAMILY_CONV, &in);
    in.u.conv.g.wave = 32;
    uint64_t locked = 0;
    assert_int_equal(problem_knobs_set(&in, "path=wgmma tile=64x64x64 warps=4x1", &locked), RK_OK);
    assert_int_not_equal(rk_instance_validate(&in, rk_target_find("sm_80")), RK_OK);
    if (!strstr(rk_error_message(), "needs sm_90a")) fail_msg("sm_80 wgmma: '%s'", rk_error_message());
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_conv_emu: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed, (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometries), cmocka_unit_test(test_paths), cmocka_unit_test(test_wgmma),
        cmocka_unit_test(test_direct),
        cmocka_unit_test(test_adjoint),
        cmocka_unit_test(test_runtime_geometry), cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
