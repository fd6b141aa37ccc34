/* rocke tests — sm_90a's forward convolution with X read as TMA boxes of
 * output pixels (load=tma, algo igemm: src/kernels/conv_box.c) on the CPU
 * emulator, which runs the 4-D TMA boxes (traversal strides, zero fill),
 * the mbarriers and wgmma exactly: small odd geometries against the double
 * direct convolution (odd H and W, P and Q not multiples of the box, padding
 * 0, 1 and asymmetric, stride 2 and 3, dilation 2, N > 1, C 8 / 24 / 72 — one
 * and two channel blocks with a tail —, K not a multiple of the tile), every
 * schedule, the tile shapes, explicit boxes, chains and output types; one
 * binary at other geometries; the heuristic's choice and where it keeps the
 * threads-copy kernels; the 4-D maps the problem describes; bad input with
 * its message. Fresh random data; the seed is printed (ROCKE_SEED=N
 * replays). */
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

static void tuned(const char *target, const uint64_t ext[7], const char *knobs, rk_instance *in, rk_shape *sh,
                  char *name, size_t n) {
    if (problem_tuned("conv", rk_target_find(target), ext, 7, knobs, in, sh))
        fail_msg("%s [%s]: %s", target, knobs, rk_error_message());
    assert_int_equal(rk_instance_name(in, name, n), RK_OK);
}

/* Build in on sm_90a, run it on the emulator, check every output element. */
static void verify(const rk_instance *in, const rk_shape *sh, const char *name, const char *knobs) {
    const rk_target *t = rk_target_find("sm_90a");
    rk_kernel *k = NULL;
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    if (problem_emu_prepare(t, in, sh, s, &k, &p)) fail_msg("%s: %s", name, rk_error_message());
    rk_problem_diff c;
    if (problem_emu_verify(t, k, &p, sh, &c)) fail_msg("%s: launch: %s", name, rk_error_message());
    if (c.bad || !c.total)
        fail_msg("%s [%s] seed %llu: %llu/%llu bad, %s", name, knobs, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    rk_kernel_free(k);
    rk_problem_free(&p);
}

static void run_case(const uint64_t ext[7], const char *knobs) {
    rk_instance in;
    rk_shape sh;
    char name[256];
    /* load=tma: these small C (24, 72) the heuristic gives the copy kernel (the box kernel's channel padding) */
    char asked[512];
    snprintf(asked, sizeof asked, "load=tma %s", knobs);
    tuned("sm_90a", ext, asked, &in, &sh, name, sizeof name);
    if (!strstr(name, "_ldtma") || !strstr(name, "_bq") || !strstr(name, "_aligemm"))
        fail_msg("[%s]: %s is not the pixel-box kernel", knobs, name);
    verify(&in, &sh, name, knobs);
}

static void test_box_kernels(void **state) {
    (void)state;
    const struct { uint64_t ext[7]; const char *knobs; } cases[] = {
        /* N, C, H, W, K, R, S */
        {{2, 24, 9, 11, 40, 3, 3}, "pad=1x1x1x1"},                                   /* P, Q 9 x 11 */
        {{3, 8, 13, 11, 19, 3, 3}, "pad=0x0x0x0"},                                   /* C 8, K 19 */
        {{2, 24, 13, 11, 40, 3, 3}, "stride=2x2 pad=1x1x1x1"},
        {{2, 24, 15, 13, 24, 3, 3}, "stride=3x2 pad=1x2x0x1"},                       /* asymmetric */
        {{2, 24, 13, 11, 40, 3, 3}, "dilation=2x2 pad=2x2x2x2"},
        {{2, 24, 12, 13, 40, 3, 2}, "stride=2x1 dilation=1x2 pad=0x1x2x0"},
        {{2, 72, 9, 7, 136, 3, 3}, "pad=1x1x1x1"},                                   /* 2 channel blocks, K 136 */
        {{1, 72, 7, 9, 136, 3, 3}, "stride=2x2 pad=1x1x1x1 tile=128x128x64 warps=8x1"},
        {{2, 24, 9, 11, 72, 3, 3}, "pad=1x1x1x1 schedule=persistent blocks=3"},      /* tiles walked */
        {{2, 24, 9, 11, 40, 3, 3}, "pad=1x1x1x1 schedule=plain stages=2"},
        {{2, 24, 9, 11, 40, 3, 3}, "pad=1x1x1x1 tile=64x64x64 warps=4x1 schedule=pingpong blocks=2"},
        {{2, 24, 7, 9, 264, 3, 3}, "pad=1x1x1x1 tile=128x256x64 warps=8x1 stages=2"},
        {{3, 24, 9, 11, 40, 3, 3}, "pad=1x1x1x1 box_p=1 box_q=64"},                  /* one row a box */
        {{3, 24, 9, 11, 40, 3, 3}, "pad=1x1x1x1 box_p=4 box_q=2"},                   /* 8 images a box */
        {{2, 24, 9, 11, 40, 3, 3}, "pad=1x1x1x1 fuse=bias,relu dtype=bf16 out_dtype=bf16"},
        {{2, 24, 9, 11, 40, 3, 3}, "pad=1x1x1x1 fuse=add out_dtype=f32"},
        {{2, 24, 9, 11, 40, 5, 5}, "pad=2x2x2x2 fuse=scale,bias,gelu"},
    };
    for (size_t c = 0; c < COUNT(cases); c++) run_case(cases[c].ext, cases[c].knobs);
}

/* One binary serves every geometry: the kernel built at stride 1 runs at stride 2, dilation 2 and other
 * padding (the maps' traversal strides and box sides are the launch's). */
static void test_one_binary(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    const uint64_t ext[7] = {2, 24, 13, 11, 40, 3, 3};
    rk_instance in;
    rk_shape sh;
    char name[256];
    tuned("sm_90a", ext, "load=tma pad=1x1x1x1", &in, &sh, name, sizeof name);
    rk_kernel *k = NULL;
    assert_int_equal(rk_instance_build(&in, t, &k), RK_OK);
    const struct { uint32_t st, dil, pad; } geo[] = {{1, 1, 1}, {2, 1, 1}, {1, 2, 2}, {2, 2, 0}};
    for (size_t i = 0; i < COUNT(geo); i++) {
        rk_instance g = in;
        g.u.conv.stride[1] = g.u.conv.stride[2] = geo[i].st;
        g.u.conv.dilation[1] = g.u.conv.dilation[2] = geo[i].dil;
        for (int j = 2; j < 6; j++) g.u.conv.pad[j] = geo[i].pad;
        rk_problem p;
        assert_int_equal(rk_problem_init(&p, &g, &sh, seed + i), RK_OK);
        rk_problem_diff c;
        if (problem_emu_verify(t, k, &p, &sh, &c)) fail_msg("geometry %zu: %s", i, rk_error_message());
        if (c.bad || !c.total) fail_msg("geometry %zu: %llu bad, %s", i, (unsigned long long)c.bad, c.first_bad);
        rk_problem_free(&p);
    }
    rk_kernel_free(k);
}

/* The heuristic: the pixel-box kernel for ungrouped 2-D forward problems whose C keeps TMA's 16-byte
 * rule on sm_90a, unless its padding wastes more than 1/8 of the MACs the threads-copy kernel does; the
 * threads-copy kernels elsewhere (read from the kernel name). */
static void test_heuristic(void **state) {
    (void)state;
    const struct { const char *target; uint64_t ext[7]; const char *knobs; bool box; const char *tag; } rows[] = {
        {"sm_90a", {32, 256, 14, 14, 256, 3, 3}, "pad=1x1x1x1", true, "_t128x128x64"},
        {"sm_90a", {8, 64, 56, 56, 64, 3, 3}, "pad=1x1x1x1", true, "_bq8"},
        {"sm_90a", {16, 128, 28, 28, 128, 3, 3}, "stride=2x2 pad=1x1x1x1", true, "_sc"},
        /* the box kernel's padding (C = 72 as two 64-channel blocks, boxes over 17x19): the copy kernel */
        {"sm_90a", {7, 72, 17, 19, 136, 3, 3}, "pad=1x1x1x1", false, "_pwgmma"},
        {"sm_90a", {8, 72, 14, 14, 64, 3, 3}, "pad=1x1x1x1", false, "_pwgmma"},           /* C padding alone */
        {"sm_90a", {7, 72, 17, 19, 136, 3, 3}, "pad=1x1x1x1 load=tma", true, "_ldtma"},   /* asked for */
        {"sm_90a", {8, 60, 14, 14, 64, 3, 3}, "pad=1x1x1x1", false, "_pwgmma"},              /* C % 8 */
        {"sm_90a", {8, 64, 14, 14, 64, 3, 3}, "pad=1x1x1x1 groups=2", false, "_pwgmma"},
        {"sm_90a", {8, 64, 40, 40, 64, 3, 3}, "stride=9x9 pad=1x1x1x1", false, "_pwgmma"},   /* stride > 8 */
        {"sm_90a", {8, 64, 14, 14, 64, 3, 3}, "pad=1x1x1x1 load=copy", false, "_pwgmma"},
        {"sm_90a", {8, 64, 14, 14, 64, 3, 3}, "pad=1x1x1x1 vec_a=4", false, "_pwgmma"},
        {"sm_90a", {8, 64, 14, 14, 64, 3, 3}, "pad=1x1x1x1 path=mma", false, "_pmma"},
        {"sm_90a", {8, 64, 14, 14, 64, 3, 3}, "pad=1x1x1x1 direction=dgrad", false, "_pwgmma"},
        {"sm_90a", {8, 64, 14, 14, 64, 3, 3}, "pad=1x1x1x1 direction=wgrad", false, "_pwgmma"},
        {"sm_90", {8, 64, 14, 14, 64, 3, 3}, "pad=1x1x1x1", false, "_pmma"},
    };
    for (size_t i = 0; i < COUNT(rows); i++) {
        rk_instance in;
        rk_shape sh;
        char name[256];
        tuned(rows[i].target, rows[i].ext, rows[i].knobs, &in, &sh, name, sizeof name);
        bool box = strstr(name, "_ldtma") && strstr(name, "_bq");
        if (box != rows[i].box || !strstr(name, rows[i].tag))
            fail_msg("row %zu [%s]: %s (want %s, %s)", i, rows[i].knobs, name, rows[i].box ? "the box kernel" : "not",
                     rows[i].tag);
        assert_int_equal(rk_instance_validate(&in, rk_target_find(rows[i].target)), RK_OK);
        assert_int_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    }
}

/* The maps: X as (C, W, H, N) with the box's pixels at the convolution's stride, W as (C, S, R, K) with
 * one tap of tile N filters; the 2-D description refuses them. */
static void test_maps(void **state) {
    (void)state;
    const uint64_t ext[7] = {3, 24, 13, 11, 40, 3, 2};
    rk_instance in;
    rk_shape sh;
    char name[256];
    tuned("sm_90a", ext, "load=tma stride=2x3 pad=1x1x0x1 box_p=4 box_q=8 tile=64x64x64 warps=4x1", &in, &sh, name,
          sizeof name);
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, &sh, seed), RK_OK);
    int seen = 0;
    for (uint32_t i = 0; i < p.sig.n; i++) {
        if (p.sig.p[i].role != RK_KP_TENSORMAP) continue;
        rk_problem_tmap_nd m;
        assert_int_equal(rk_problem_tensormap_nd(&p, i, &m), RK_OK);
        assert_int_equal(m.rank, 4);
        assert_int_equal(m.swizzle_bytes, 128);
        assert_int_equal(m.dims[0], 24);
        assert_int_equal(m.strides_bytes[0], 48);
        assert_int_equal(m.box[0], 64);
        if (!strcmp(p.sig.p[i].name, "X_map")) {
            assert_int_equal(m.dims[1], 11), assert_int_equal(m.dims[2], 13), assert_int_equal(m.dims[3], 3);
            assert_int_equal(m.strides_bytes[1], 48 * 11), assert_int_equal(m.strides_bytes[2], 48 * 11 * 13);
            assert_int_equal(m.box[1], 8 * 3), assert_int_equal(m.box[2], 4 * 2), assert_int_equal(m.box[3], 2);
            assert_int_equal(m.elem_strides[1], 3), assert_int_equal(m.elem_strides[2], 2);
            seen |= 1;
        } else {
            assert_string_equal(p.sig.p[i].name, "Wt_map");
            assert_int_equal(m.dims[1], 2), assert_int_equal(m.dims[2], 3), assert_int_equal(m.dims[3], 40);
            assert_int_equal(m.box[1], 1), assert_int_equal(m.box[2], 1), assert_int_equal(m.box[3], 64);
            seen |= 2;
        }
        rk_problem_tmap t2;
        assert_int_equal(rk_problem_tensormap(&p, i, &t2), RK_ERR_INVALID);
        assert_non_null(strstr(rk_error_message(), "rk_problem_tensormap_nd"));
    }
    assert_int_equal(seen, 3);
    rk_problem_free(&p);
    /* the emulator's N-D encoder names the rule a map breaks */
    uint8_t map[128];
    const uint64_t dims[4] = {24, 11, 13, 3}, str[3] = {48, 528, 6864}, bad_str[3] = {40, 528, 6864};
    const uint32_t box[4] = {64, 24, 8, 2}, es[4] = {1, 3, 2, 1}, es9[4] = {1, 9, 1, 1}, es0[4] = {2, 1, 1, 1};
    assert_int_equal(rk_emu_tensormap_encode_nd(0x1000, 2, 4, dims, str, box, es, 128, map), RK_OK);
    assert_int_equal(rk_emu_tensormap_encode_nd(0x1000, 2, 4, dims, bad_str, box, es, 128, map), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "multiple of 16"));
    assert_int_equal(rk_emu_tensormap_encode_nd(0x1000, 2, 4, dims, str, box, es9, 128, map), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "1..8"));
    assert_int_equal(rk_emu_tensormap_encode_nd(0x1000, 2, 4, dims, str, box, es0, 128, map), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "innermost"));
}

static void test_bad_input(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    /* knobs the pixel-box kernel refuses (validation) */
    const struct { const char *knobs, *msg; } specs[] = {
        {"algo=igemm path=wgmma tile=128x64x64 warps=8x1 load=tma box_p=16 box_q=16", "divides tile M = 128"},
        {"algo=igemm path=wgmma tile=64x64x64 warps=4x1 load=tma box_p=8", "needs knobs 'box_p' and 'box_q'"},
        {"algo=igemm path=wgmma tile=64x64x64 warps=4x1 load=tma box_p=8 box_q=8 direction=dgrad",
         "direction dgrad takes load=copy"},
        {"algo=igemm path=wgmma tile=64x64x64 warps=4x1 load=tma box_p=8 box_q=8 epilogue=tma",
         "'epilogue' must be direct"},
        {"algo=igemm path=wgmma tile=64x64x64 warps=4x1 load=tma box_p=8 box_q=8 vec_a=4", "vec_a and vec_b must be 8"},
        {"algo=igemm path=wgmma tile=64x64x64 warps=4x1 box_p=8 box_q=8", "with load=copy leave them unset"},
        {"algo=gemm1x1 path=wgmma tile=64x64x64 warps=4x1 load=tma box_p=8 box_q=8", "with algo gemm1x1 leave"},
        {"box_p=3", "box_p"},
    };
    for (size_t i = 0; i < COUNT(specs); i++) {
        rk_instance in;
        rk_instance_default(RK_FAMILY_CONV, &in);
        in.u.conv.g.wave = 32;
        in.u.conv.g.vec_a = in.u.conv.g.vec_b = 8;
        uint64_t locked = 0;
        rk_status st = problem_knobs_set(&in, specs[i].knobs, &locked);
        if (!st) st = rk_instance_validate(&in, t);
        if (st == RK_OK) fail_msg("spec %zu (%s) was accepted", i, specs[i].knobs);
        if (!strstr(rk_error_message(), specs[i].msg))
            fail_msg("spec %zu: message '%s' lacks '%s'", i, rk_error_message(), specs[i].msg);
    }
    /* problems the explicit kernel cannot read (shape checks) */
    const struct { uint64_t ext[7]; const char *knobs, *msg; } rows[] = {
        {{2, 12, 9, 9, 16, 3, 3}, "load=tma", "C = 12 must be a multiple of 8"},
        {{2, 64, 9, 9, 64, 3, 3}, "load=tma groups=2", "groups must be 1"},
        {{2, 16, 40, 40, 16, 3, 3}, "load=tma stride=9x9", "stride 1..8"},
        {{1, 16, 9, 600, 16, 3, 3}, "load=tma stride=4x4 box_p=1 box_q=128 tile=128x64x64 warps=8x1",
         "box_q x stride_w"},
    };
    for (size_t i = 0; i < COUNT(rows); i++) {
        rk_instance in;
        rk_shape sh;
        rk_status st = problem_tuned("conv", t, rows[i].ext, 7, rows[i].knobs, &in, &sh);
        if (!st) st = rk_instance_validate(&in, t);
        if (!st) st = rk_instance_check_shape(&in, &sh);
        if (st == RK_OK) fail_msg("row %zu (%s) was accepted", i, rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("row %zu: message '%s' lacks '%s'", i, rk_error_message(), rows[i].msg);
    }
    /* conv3d: the box kernel is 2-D only */
    rk_instance in;
    rk_instance_default(RK_FAMILY_CONV3D, &in);
    in.u.conv.g.wave = 32;
    in.u.conv.g.vec_a = in.u.conv.g.vec_b = 8;
    uint64_t locked = 0;
    assert_int_equal(problem_knobs_set(&in, "algo=igemm path=wgmma tile=64x64x64 warps=4x1 load=tma box_p=8 box_q=8",
                                       &locked), RK_OK);
    assert_int_equal(rk_instance_validate(&in, t), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "conv3d takes load=copy"));
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_conv_box: ROCKE_SEED=%llu\n", (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_kernels), cmocka_unit_test(test_one_binary), cmocka_unit_test(test_heuristic),
        cmocka_unit_test(test_maps), cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
