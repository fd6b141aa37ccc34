/* rocke tests — sm_90a's 1x1 convolutions with TMA operands (load=tma,
 * src/kernels/conv_tma.c) on the CPU emulator: fwd and dgrad (the GEMM
 * family's kernel) and wgrad (split-K) against the double direct
 * convolution at small odd geometries (N*H*W with tails, C and K multiples
 * of 8 but not of 64, several K tiles), with epilogue chains, every
 * schedule, TMA stores, the tile shapes and conv3d's 1x1x1; the heuristic's
 * choice and where it keeps the copying kernel (TMA's 16-byte rows, groups,
 * targets without TMA), seen in the kernel name; the tensor maps the
 * problem makes; bad input with its message. Fresh random data; the seed is
 * printed (ROCKE_SEED=N replays). */
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

/* The conv instance tuned on `target` for ext (N, C, H, W, K, 1, 1; no
 * padding) with `knobs` locked, and its name. */
static void tuned(const char *target, const uint64_t ext[7], const char *knobs, rk_instance *in, rk_shape *sh,
                  char *name, size_t n) {
    char all[256];
    snprintf(all, sizeof all, "pad=0x0x0x0 %s", knobs);
    if (problem_tuned("conv", rk_target_find(target), ext, 7, all, in, sh))
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

/* The conv kernel tuned for ext with knobs, verified; its name must hold `tag`. */
static void run_case(const uint64_t ext[7], const char *knobs, const char *tag) {
    rk_instance in;
    rk_shape sh;
    char name[256];
    tuned("sm_90a", ext, knobs, &in, &sh, name, sizeof name);
    if (!strstr(name, tag)) fail_msg("[%s]: %s lacks %s", knobs, name, tag);
    verify(&in, &sh, name, knobs);
}

/* The same for conv3d's 1x1x1 (ext: N, C, D, H, W, K, 1, 1, 1), on TMA. */
static void run_case3d(const uint64_t ext[9], const char *knobs) {
    char all[256];
    snprintf(all, sizeof all, "pad=0x0x0x0x0x0 %s", knobs);
    rk_instance in;
    rk_shape sh;
    if (problem_tuned("conv3d", rk_target_find("sm_90a"), ext, 9, all, &in, &sh))
        fail_msg("conv3d [%s]: %s", knobs, rk_error_message());
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    if (!strstr(name, "_ldtma")) fail_msg("conv3d [%s]: %s", knobs, name);
    verify(&in, &sh, name, knobs);
}

/* fwd and dgrad through TMA: tails of M (N*H*W not a multiple of the tile),
 * of N and K (C, K multiples of 8, not of 64), K loops longer than the ring,
 * the chain (fwd), f32 / bf16 outputs, each schedule and epilogue=tma. */
static void test_tma_kernels(void **state) {
    (void)state;
    const struct { uint64_t ext[7]; const char *knobs; } cases[] = {
        {{3, 24, 7, 5, 40, 1, 1}, ""},                                                 /* M 105, one K tile */
        {{1, 40, 9, 11, 72, 1, 1}, "fuse=bias,relu dtype=bf16 out_dtype=bf16"},
        {{2, 136, 5, 7, 24, 1, 1}, "fuse=add out_dtype=f32"},                          /* 3 K tiles, 2 stages */
        {{2, 200, 3, 7, 16, 1, 1}, "stages=3 fuse=scale,bias,gelu"},                   /* 4 K tiles, 3 stages */
        {{3, 24, 5, 5, 136, 1, 1}, "tile=128x128x64 warps=8x1 epilogue=tma fuse=bias,silu,mul"},
        {{2, 72, 7, 9, 40, 1, 1}, "schedule=ws"},
        {{3, 24, 9, 7, 72, 1, 1}, "schedule=persistent blocks=3 fuse=bias"},          /* tiles walked */
        {{2, 16, 9, 11, 24, 1, 1}, "schedule=pingpong blocks=2 epilogue=tma"},
        {{2, 24, 7, 7, 264, 1, 1}, "tile=128x256x64 warps=8x1 epilogue=tma schedule=persistent blocks=2"},
        {{3, 40, 5, 7, 24, 1, 1}, "direction=dgrad"},
        {{1, 72, 9, 11, 136, 1, 1}, "direction=dgrad out_dtype=f32 dtype=bf16"},       /* 3 K tiles (K) */
        {{2, 24, 7, 5, 40, 1, 1}, "direction=dgrad schedule=persistent blocks=2 epilogue=tma"},
        {{2, 136, 5, 9, 8, 1, 1}, "direction=dgrad schedule=ws tile=64x128x64 warps=4x1"},
        /* wgrad: conv_hopper.c's split of N*P*Q over TMA operands (dY^T M-major, X N-major); splits
         * that do not divide the 11 K tiles, more splits than a split's share, whole and edge tiles */
        {{3, 24, 7, 5, 40, 1, 1}, "direction=wgrad load=tma split_k=1"},
        {{2, 72, 17, 19, 136, 1, 1}, "direction=wgrad load=tma split_k=3"},
        {{2, 72, 17, 19, 136, 1, 1}, "direction=wgrad load=tma split_k=4 tile=128x128x64 warps=8x1 out_dtype=f32"},
        {{1, 24, 9, 11, 40, 1, 1}, "direction=wgrad load=tma split_k=5 dtype=bf16 out_dtype=bf16"},
    };
    for (size_t c = 0; c < COUNT(cases); c++) run_case(cases[c].ext, cases[c].knobs, "_ldtma");
    /* conv3d's 1x1x1: X [N, D, H, W, C] as the same [pixels, C] matrix */
    const uint64_t v3[9] = {2, 24, 3, 5, 7, 40, 1, 1, 1};
    run_case3d(v3, "fuse=bias,relu");
    run_case3d(v3, "direction=dgrad schedule=persistent blocks=2");
    /* the same problems on the copying kernels (load=copy) stay right */
    run_case(cases[0].ext, "load=copy", "_pwgmma");
    run_case(cases[9].ext, "direction=dgrad load=copy", "_pwgmma");
    run_case(cases[14].ext, "direction=wgrad path=wgmma split_k=3 load=copy", "_pwgmma");
}

/* The heuristic: load=tma for ungrouped 1x1 fwd / dgrad on sm_90a whose C and
 * K keep TMA's 16-byte rows, with the GEMM's knobs; the copying kernel or
 * mma.sync elsewhere (the name says which). */
static void test_heuristic(void **state) {
    (void)state;
    const uint64_t big[7] = {32, 64, 56, 56, 256, 1, 1}, odd_c[7] = {2, 20, 7, 5, 40, 1, 1};
    const uint64_t odd_k[7] = {2, 24, 7, 5, 36, 1, 1}, small[7] = {3, 24, 7, 5, 40, 1, 1};
    const struct { const char *target; const uint64_t *ext; const char *knobs; bool tma; } rows[] = {
        {"sm_90a", big, "dtype=bf16", true},
        {"sm_90a", big, "direction=dgrad dtype=bf16", true},
        {"sm_90a", small, "", true},
        {"sm_90a", small, "path=wgmma", true},
        {"sm_90a", odd_c, "", false},                      /* C*2 = 40 bytes: not a 16-byte multiple */
        {"sm_90a", odd_k, "direction=dgrad", false},       /* dY's rows: K*2 = 72 bytes */
        {"sm_90a", small, "groups=2", false},
        {"sm_90a", small, "direction=wgrad", false},   /* wgrad keeps copy (measured faster) */
        {"sm_90a", small, "direction=wgrad load=tma", true},
        {"sm_90a", big, "direction=wgrad dtype=bf16", false},
        {"sm_90a", small, "load=copy", false},
        {"sm_90a", small, "vec_a=4", false},
        {"sm_90a", small, "path=mma", false},
        {"sm_80", small, "", false},
        {"sm_90", small, "", false},
    };
    for (size_t i = 0; i < COUNT(rows); i++) {
        rk_instance in;
        rk_shape sh;
        char name[256];
        tuned(rows[i].target, rows[i].ext, rows[i].knobs, &in, &sh, name, sizeof name);
        if (!!strstr(name, "_ldtma") != rows[i].tma)
            fail_msg("row %zu %s [%s]: %s", i, rows[i].target, rows[i].knobs, name);
        if (rk_instance_validate(&in, rk_target_find(rows[i].target)) || rk_instance_check_shape(&in, &sh))
            fail_msg("row %zu %s: %s", i, name, rk_error_message());
    }
    /* N32 C64 56x56 K256: the GEMM's 128x256 tile, TMA stores, and (one K tile per output tile) the
     * persistent schedule over every SM */
    rk_instance in;
    rk_shape sh;
    char name[256];
    tuned("sm_90a", big, "dtype=bf16", &in, &sh, name, sizeof name);
    const rk_gemm_spec *g = &in.u.conv.g;
    if (g->tile[0] != 128 || g->tile[1] != 256 || g->epilogue != RK_GEMM_EPI_TMA ||
        g->schedule != RK_GEMM_SCHED_PERSISTENT || g->blocks != rk_target_find("sm_90a")->compute_units)
        fail_msg("N32 C64 56x56 K256: %s", name);
    /* a tuned copy kernel names none of the TMA kernel's knobs */
    tuned("sm_90a", odd_c, "", &in, &sh, name, sizeof name);
    if (strstr(name, "_sc") || strstr(name, "_pb") || strstr(name, "_ep")) fail_msg("copy kernel: %s", name);
}

/* The maps the problem makes: X, W and Y as [pixels, channels] matrices in
 * the GEMM's boxes and swizzle; the signature's entries after every other. */
static void test_maps(void **state) {
    (void)state;
    const uint64_t ext[7] = {3, 24, 7, 5, 40, 1, 1};
    const struct { const char *knobs; const char *names[3]; uint64_t rows[3], cols[3]; uint32_t box[3][2]; } rows[] = {
        {"tile=128x128x64 warps=8x1 epilogue=tma", {"X_map", "Wt_map", "Y_map"}, {105, 40, 105}, {24, 24, 40},
         {{128, 64}, {128, 64}, {64, 64}}},   /* Y: 128-byte swizzled boxes of 64 columns */
        {"direction=dgrad", {"dY_map", "Wt_map", NULL}, {105, 40, 0}, {40, 24, 0}, {{64, 64}, {64, 64}, {0, 0}}},
        {"direction=wgrad load=tma split_k=2", {"dY_map", "X_map", NULL}, {105, 105, 0}, {40, 24, 0},
         {{64, 64}, {64, 64}, {0, 0}}},
    };
    for (size_t r = 0; r < COUNT(rows); r++) {
        rk_instance in;
        rk_shape sh;
        char name[256];
        tuned("sm_90a", ext, rows[r].knobs, &in, &sh, name, sizeof name);
        rk_problem p;
        assert_int_equal(rk_problem_init(&p, &in, &sh, 1), RK_OK);
        uint32_t seen = 0;
        for (uint32_t i = 0; i < p.sig.n; i++) {
            if (p.sig.p[i].role != RK_KP_TENSORMAP) {
                if (seen) fail_msg("%s: entry %s after a tensor map", name, p.sig.p[i].name);
                continue;
            }
            rk_problem_tmap m;
            assert_int_equal(rk_problem_tensormap(&p, i, &m), RK_OK);
            assert_true(seen < 3 && rows[r].names[seen]);
            assert_string_equal(p.sig.p[i].name, rows[r].names[seen]);
            if (m.rows != rows[r].rows[seen] || m.cols != rows[r].cols[seen] ||
                m.box_rows != rows[r].box[seen][0] || m.box_cols != rows[r].box[seen][1] ||
                m.row_stride_bytes != m.cols * 2)
                fail_msg("%s %s: %llux%llu box %ux%u", name, p.sig.p[i].name, (unsigned long long)m.rows,
                         (unsigned long long)m.cols, m.box_rows, m.box_cols);
            seen++;
        }
        assert_int_equal(seen, rows[r].names[2] ? 3 : 2);
        rk_problem_free(&p);
    }
}

/* load=tma where it cannot apply, and the GEMM's knobs without it: each
 * refused with a message naming the rule. */
static void test_bad_input(void **state) {
    (void)state;
    const struct { const char *target, *knobs; uint64_t ext[7]; const char *msg; } rows[] = {
        {"sm_90a", "load=tma", {2, 20, 7, 5, 40, 1, 1}, "rows run along K = 20, not a multiple of 8"},
        {"sm_90a", "load=tma direction=dgrad", {2, 24, 7, 5, 36, 1, 1}, "rows run along K = 36"},
        {"sm_90a", "load=tma groups=2", {2, 24, 7, 5, 40, 1, 1}, "groups must be 1, got 2"},
        {"sm_90a", "load=tma epilogue=tma tile=64x64x64 warps=4x1", {2, 24, 7, 5, 36, 1, 1},
         "epilogue=tma stores C with TMA"},
    };
    for (size_t i = 0; i < COUNT(rows); i++) {
        const rk_target *t = rk_target_find(rows[i].target);
        rk_instance in;
        rk_shape sh;
        char all[256];
        snprintf(all, sizeof all, "pad=0x0x0x0 %s", rows[i].knobs);
        rk_status st = problem_tuned("conv", t, rows[i].ext, 7, all, &in, &sh);
        if (!st) st = rk_instance_validate(&in, t);
        if (!st) st = rk_instance_check_shape(&in, &sh);
        if (st == RK_OK) fail_msg("row %zu (%s) was accepted", i, rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("row %zu: message '%s' lacks '%s'", i, rk_error_message(), rows[i].msg);
    }
    const struct { const char *target, *knobs, *msg; } specs[] = {
        {"sm_90a", "algo=gemm1x1 path=mma load=tma", "load' = tma is path=wgmma's"},
        {"sm_80", "algo=gemm1x1 path=mma load=tma", "load' = tma needs sm_90a"},
        {"sm_90a", "algo=igemm path=wgmma tile=64x64x64 warps=4x1 load=tma", "needs knobs 'box_p' and 'box_q'"},
        {"sm_90a", "algo=gemm1x1 direction=wgrad path=wgmma tile=64x64x64 warps=4x1 load=tma schedule=ws",
         "runs its split-K sum on schedule=plain"},
        {"sm_90a", "algo=gemm1x1 path=wgmma tile=64x64x64 warps=4x1 load=tma vec_a=4", "vec_b must be 8"},
        {"sm_90a", "algo=gemm1x1 path=wgmma tile=64x64x64 warps=4x1 schedule=ws", "they need load=tma"},
        {"sm_90a", "algo=gemm1x1 path=mma epilogue=tma", "they need load=tma"},
        {"sm_90a", "algo=gemm1x1 path=wgmma tile=64x64x64 warps=4x1 load=tma schedule=persistent",
         "needs knob 'blocks'"},
        {"sm_90a", "algo=gemm1x1 path=wgmma tile=128x64x64 warps=8x1 load=tma schedule=pingpong blocks=4",
         "tile M must be 64"},
        {"sm_90a", "algo=gemm1x1 path=wgmma tile=64x64x64 warps=4x1 load=tma epilogue=cshuffle",
         "epilogue' = cshuffle is path=mma's"},
        {"sm_90a", "load=fast", "must be one of copy|tma"},
    };
    for (size_t i = 0; i < COUNT(specs); i++) {
        const rk_target *t = rk_target_find(specs[i].target);
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
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_conv_tma: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed, (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tma_kernels), cmocka_unit_test(test_heuristic), cmocka_unit_test(test_maps),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
