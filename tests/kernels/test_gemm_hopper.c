/* rocke tests — the GEMM Hopper path (path=wgmma, sm_90a) on the CPU
 * emulator against the double host reference: M, N and K tails (TMA boxes
 * zero-fill), one and two consumer warpgroups, N from 48 to 256, 2..6
 * stages, both input types, every output type, every layout (MN-major
 * operands through wgmma's transpose bits), fused epilogue chains; the
 * heuristic's dispatch between wgmma and mma; the refusals (target, layout,
 * tile, warps, stages, a K breaking TMA's 16-byte stride); and the emitted
 * PTX (wgmma, TMA, mbarriers), assembled by ptxas where it is installed.
 * Fresh random data; the seed is printed (ROCKE_SEED=N replays). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocke/compile.h"
#include "rocke/emu.h"
#include "rocke/kernels.h"
#include "../support/gemm_cases.h"
#include "../support/problem_emu.h"

static uint64_t seed;
static unsigned runs;

/* An instance of gemm for target and shape: knobs ("k=v k=v") locked, the
 * rest tuned. */
static void instance_for(const char *target, const uint64_t ext[3], const char *knobs, rk_instance *in,
                         rk_shape *sh) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance_default(RK_FAMILY_GEMM, in);
    uint64_t locked = 0;
    if (problem_knobs_set(in, knobs, &locked)) fail_msg("%s: %s", knobs, rk_error_message());
    assert_int_equal(rk_shape_default(RK_FAMILY_GEMM, sh), RK_OK);
    assert_int_equal(rk_shape_update(RK_FAMILY_GEMM, sh, NULL, ext, 3, false), RK_OK);
    assert_int_equal(rk_instance_tune(in, t, sh, locked), RK_OK);
}

static bool is_wgmma(const rk_instance *in) {
    char name[256];
    assert_int_equal(rk_instance_name(in, name, sizeof name), RK_OK);
    return strstr(name, "_pwgmma") != NULL;
}

/* Build on sm_90a (the path must be wgmma), run on the emulator, check
 * every element of C. */
static void run_case(uint64_t M, uint64_t N, uint64_t K, const char *knobs) {
    const rk_target *t = rk_target_find("sm_90a");
    const uint64_t ext[3] = {M, N, K};
    rk_instance in;
    rk_shape sh;
    instance_for("sm_90a", ext, knobs, &in, &sh);
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    if (!is_wgmma(&in)) fail_msg("%s: the heuristic did not take path=wgmma", name);
    if (rk_instance_check_shape(&in, &sh)) fail_msg("%s: %s", name, rk_error_message());
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s: %s", name, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    if (strstr(knobs, "scale")) assert_int_equal(rk_problem_set_scalar(&p, "alpha", 1.5), RK_OK);
    rk_emu *emu = rk_emu_new(t, NULL);
    static problem_emu_args pa;
    if (problem_emu_args_make(emu, &p, &pa)) fail_msg("%s: arguments: %s", name, rk_error_message());
    uint32_t grid[3], block[3];
    rk_instance_grid(&in, &sh, grid, block);
    /* a consumer warpgroup per 64 rows, and a producer one on ws / persistent */
    uint32_t want = in.u.gemm.schedule == RK_GEMM_SCHED_PINGPONG ? 384
                                                                  : in.u.gemm.tile[0] * 2 + (in.u.gemm.schedule ? 128 : 0);
    assert_int_equal(block[0], want);
    if (rk_emu_launch(emu, k, grid, block, 0, pa.args)) fail_msg("%s: launch: %s", name, rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad) fail_msg("%s %llux%llux%llu seed %llu: %llu/%llu bad, %s", name, (unsigned long long)M,
                        (unsigned long long)N, (unsigned long long)K, (unsigned long long)s,
                        (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    rk_emu_free(emu);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

/* Tails in every dimension, both input types, every output type, one and
 * two warpgroups, several N and ring depths. */
static void test_tails(void **state) {
    (void)state;
    run_case(1, 1, 8, "dtype=f16 out_dtype=f32 tile=64x64x64 warps=4x1 split_k=1");
    run_case(67, 45, 136, "dtype=bf16 out_dtype=bf16 tile=64x48x64 warps=4x1 stages=2 schedule=plain");
    run_case(130, 97, 72, "dtype=f16 out_dtype=f16 tile=128x64x64 warps=8x1 stages=3 schedule=plain");
    run_case(70, 130, 200, "dtype=bf16 out_dtype=f32 tile=64x128x64 warps=4x1 stages=6 group_m=2");
    run_case(129, 300, 64, "dtype=f16 out_dtype=bf16 tile=128x256x64 warps=8x1 stages=2");
    run_case(40, 72, 520, "dtype=f16 out_dtype=f32 split_k=1");   /* the heuristic's own tile and stages */
}

/* MN-major A (cr, cc) and B (rr, cr): the layout decides which extents
 * must keep 16-byte rows (cr leaves K free, so K tails need not be a
 * multiple of 8). */
static void test_layouts(void **state) {
    (void)state;
    run_case(67, 136, 200, "layout=rr dtype=f16 out_dtype=f32 tile=64x128x64 warps=4x1 stages=3");
    run_case(72, 200, 75, "layout=cr dtype=bf16 out_dtype=bf16 tile=128x64x64 warps=8x1 stages=2");
    run_case(136, 45, 88, "layout=cc dtype=f16 out_dtype=f16 tile=128x48x64 warps=8x1 stages=4");
    run_case(72, 264, 130, "layout=cr dtype=f16 out_dtype=f32 tile=64x256x64 warps=4x1 stages=2");
    run_case(80, 88, 72, "layout=cc fuse=bias,relu dtype=bf16 out_dtype=f32 split_k=1");   /* the heuristic's */
}

/* Operands whose rows TMA cannot read (vec_a / vec_b below 8, tuned from
 * the shape): the threads store them into the swizzled stages wgmma's
 * descriptors read. Every layout, odd K, M or N, vectors of 1, 2 and 4
 * elements, one operand copied beside a TMA one and both copied. */
static void test_copied(void **state) {
    (void)state;
    /* 2-byte reads keep mma unless wgmma is asked for (measured: docs/gemm.md) */
    run_case(67, 45, 131, "path=wgmma layout=rc dtype=f16 out_dtype=f32 tile=64x48x64 warps=4x1 stages=2");   /* 1, 1 */
    run_case(70, 133, 90, "path=wgmma layout=rr dtype=bf16 out_dtype=f32 tile=64x128x64 warps=4x1 stages=3");   /* 2, 1 */
    run_case(68, 200, 75, "layout=cr dtype=bf16 out_dtype=bf16 tile=128x64x64 warps=8x1 stages=2");  /* 4, TMA */
    run_case(130, 45, 84, "layout=cc dtype=f16 out_dtype=f16 tile=128x48x64 warps=8x1 stages=4");    /* 2, 4 */
    run_case(72, 64, 140, "layout=rc dtype=f16 out_dtype=f32 tile=64x64x64 warps=4x1 vec_b=2");   /* TMA, 2 */
    run_case(45, 37, 203, "path=wgmma fuse=bias,relu dtype=bf16 out_dtype=f32 split_k=1");   /* the heuristic's tile */
}

/* The persistent walk: several tiles per block (the fill counter and the
 * stages' phases run on across tiles), a grid larger than the tile count
 * (clamped), two consumers, an MN-major layout, a fused chain. */
static void test_schedules(void **state) {
    (void)state;
    run_case(200, 136, 200, "schedule=persistent blocks=3 tile=64x64x64 warps=4x1 stages=2");
    run_case(136, 296, 136, "schedule=persistent blocks=2 tile=128x128x64 warps=8x1 stages=3 layout=cr dtype=bf16");
    run_case(70, 70, 72, "schedule=persistent blocks=16 tile=64x64x64 warps=4x1 fuse=bias,relu out_dtype=f32");
    run_case(97, 72, 264, "schedule=ws tile=128x96x64 warps=8x1 stages=3 fuse=scale out_dtype=bf16");
    /* pingpong: 6 tiles a block (3 per consumer); then blocks with 2 tiles and with 1 (consumer 1 idle) */
    run_case(200, 136, 200, "schedule=pingpong blocks=2 tile=64x64x64 warps=4x1 stages=2");
    run_case(136, 200, 72, "schedule=pingpong blocks=4 tile=64x128x64 warps=4x1 stages=3 layout=rr dtype=bf16");
}

static void test_epilogues(void **state) {
    (void)state;
    run_case(67, 72, 80, "fuse=bias,gelu out_dtype=f32 tile=64x64x64 warps=4x1");
    run_case(90, 50, 48, "fuse=scale,add,relu dtype=bf16 tile=128x48x64 warps=8x1 stages=2");
    run_case(33, 66, 96, "fuse=bias_row,silu,mul out_dtype=bf16 tile=64x128x64 warps=4x1 stages=3 split_k=1");
}

/* The heuristic takes wgmma where TMA and wgmma can read the operands and
 * mma elsewhere; an explicit path wins. */
static void test_dispatch(void **state) {
    (void)state;
    const uint64_t big[3] = {4096, 4096, 4096}, oddk[3] = {4096, 4096, 4095};
    rk_instance in;
    rk_shape sh;
    instance_for("sm_90a", big, "", &in, &sh);
    assert_true(is_wgmma(&in));
    assert_int_equal(in.u.gemm.tile[2], 64);
    /* the default schedule is the plain one (the one measured on the H200): a block per tile */
    assert_int_equal(in.u.gemm.schedule, RK_GEMM_SCHED_PLAIN);
    assert_int_equal(in.u.gemm.blocks, 0);
    uint32_t g[3], b[3];
    rk_instance_grid(&in, &sh, g, b);
    assert_int_equal(g[0], 4096 / in.u.gemm.tile[0] * (4096 / in.u.gemm.tile[1]));
    /* 512 tiles on 132 SMs, persistent: one block per SM, a producer warpgroup more */
    instance_for("sm_90a", big, "schedule=persistent", &in, &sh);
    assert_int_equal(in.u.gemm.blocks, 132);
    rk_instance_grid(&in, &sh, g, b);
    assert_int_equal(g[0], 132);
    assert_int_equal(b[0], 384);
    const uint64_t few[3] = {512, 512, 1024};   /* 8 tiles of 128x256 ... or more of a smaller tile, < 132 */
    instance_for("sm_90a", few, "schedule=ws", &in, &sh);
    assert_int_equal(in.u.gemm.schedule, RK_GEMM_SCHED_WS);
    assert_int_equal(in.u.gemm.blocks, 0);
    instance_for("sm_90a", big, "path=wgmma schedule=persistent", &in, &sh);   /* path locked: blocks still tuned */
    assert_int_equal(in.u.gemm.blocks, 132);
    instance_for("sm_90a", big, "schedule=pingpong", &in, &sh);   /* a tile of 64 rows, one per consumer */
    assert_true(is_wgmma(&in));
    assert_int_equal(in.u.gemm.tile[0], 64);
    assert_int_equal(in.u.gemm.blocks, 132);
    rk_instance_grid(&in, &sh, g, b);
    assert_int_equal(b[0], 384);
    instance_for("sm_90a", big, "dtype=bf16 out_dtype=f32", &in, &sh);
    assert_true(is_wgmma(&in));
    /* K * 2 bytes is not even a multiple of 4: rows TMA cannot read. Tiles that fill the SMs: A and B
     * staged into padded copies (pad=ab, persistent, TMA over the copies; test_gemm_pad.c); with pad
     * locked to none the gathered mma.sync kernel (it beats wgmma with copied operands on the H200),
     * or with wgmma asked for too, A and B copied by the threads */
    instance_for("sm_90a", oddk, "", &in, &sh);
    assert_true(is_wgmma(&in));
    assert_int_equal(in.u.gemm.pad, RK_GEMM_PAD_AB);
    assert_int_equal(in.u.gemm.schedule, RK_GEMM_SCHED_PERSISTENT);
    assert_int_equal(in.u.gemm.vec_a, 8);
    instance_for("sm_90a", oddk, "pad=none", &in, &sh);
    assert_false(is_wgmma(&in));
    instance_for("sm_90a", oddk, "path=wgmma pad=none", &in, &sh);
    assert_true(is_wgmma(&in));
    assert_int_equal(in.u.gemm.vec_a, 1);
    assert_int_equal(in.u.gemm.vec_b, 1);
    instance_for("sm_90a", oddk, "layout=cr", &in, &sh);   /* cr's rows run along M and N: TMA reads both */
    assert_int_equal(in.u.gemm.vec_a, 8);
    assert_int_equal(in.u.gemm.vec_b, 8);
    const uint64_t unal[3] = {2047, 3001, 4093};
    instance_for("sm_90a", unal, "pad=none", &in, &sh);
    assert_false(is_wgmma(&in));
    instance_for("sm_90a", unal, "path=wgmma pad=none", &in, &sh);
    assert_true(is_wgmma(&in));
    assert_int_equal(in.u.gemm.schedule, RK_GEMM_SCHED_PLAIN);
    instance_for("sm_90a", oddk, "schedule=persistent", &in, &sh);   /* the copies run on schedule=plain only */
    assert_false(is_wgmma(&in));
    for (int l = 0; l < 3; l++) {   /* every layout takes wgmma where its rows keep 16 bytes */
        static const char *const lays[] = {"layout=rr", "layout=cr", "layout=cc"};
        instance_for("sm_90a", big, lays[l], &in, &sh);
        assert_true(is_wgmma(&in));
    }
    const uint64_t oddm[3] = {4095, 4096, 4096}, oddn[3] = {4096, 4095, 4096};
    instance_for("sm_90a", oddm, "layout=cc", &in, &sh);   /* A's rows run along M: A staged */
    assert_true(is_wgmma(&in));
    assert_int_equal(in.u.gemm.pad, RK_GEMM_PAD_A);
    instance_for("sm_90a", oddm, "layout=cc pad=none", &in, &sh);   /* 2-byte reads, mma */
    assert_false(is_wgmma(&in));
    instance_for("sm_90a", oddm, "layout=cc path=wgmma pad=none", &in, &sh);   /* asked for: A copied */
    assert_true(is_wgmma(&in));
    assert_int_equal(in.u.gemm.vec_a, 1);
    instance_for("sm_90a", oddm, "layout=rr", &in, &sh);   /* rr reads A along K: TMA */
    assert_true(is_wgmma(&in));
    instance_for("sm_90a", oddn, "layout=rr path=wgmma pad=none", &in, &sh);   /* B's rows run along N: B copied */
    assert_true(is_wgmma(&in));
    assert_int_equal(in.u.gemm.vec_b, 1);
    instance_for("sm_90a", oddk, "layout=cr", &in, &sh);   /* neither runs along K */
    assert_true(is_wgmma(&in));
    instance_for("sm_90a", big, "path=mma", &in, &sh);
    assert_false(is_wgmma(&in));
    instance_for("sm_90a", big, "tile=128x128x32", &in, &sh);   /* a tile only mma takes */
    assert_false(is_wgmma(&in));
    instance_for("sm_80", big, "", &in, &sh);
    assert_false(is_wgmma(&in));
    instance_for("gfx950", big, "wave=64", &in, &sh);
    assert_false(is_wgmma(&in));
    /* the signature ends with the two maps (direct stores), or three with the TMA-store epilogue the
     * heuristic picks at 128x256 tiles */
    instance_for("sm_90a", big, "fuse=bias epilogue=direct", &in, &sh);
    rk_ksig sig;
    assert_int_equal(rk_instance_signature(&in, &sig), RK_OK);
    assert_string_equal(sig.p[sig.n - 2].name, "A_map");
    assert_int_equal(sig.p[sig.n - 1].role, RK_KP_TENSORMAP);
    assert_string_equal(sig.p[sig.n - 1].dims, "B");
    instance_for("sm_90a", big, "fuse=bias", &in, &sh);
    assert_int_equal(in.u.gemm.epilogue, RK_GEMM_EPI_TMA);
    assert_int_equal(rk_instance_signature(&in, &sig), RK_OK);
    assert_string_equal(sig.p[sig.n - 1].name, "C_map");
}

/* The heuristic's tile, split and schedule on sm_90a at shapes measured on the H200 (bench/RESULTS.md,
 * session 16; gemm_hopper_plan.c gives the figures). */
static void test_tile_model(void **state) {
    (void)state;
    static const struct {
        uint64_t m, n, k;
        const char *knobs;
        uint32_t tm, tn, split;
        int sched;   /* rk_gemm_schedule */
        uint32_t stages;
    } rows[] = {
        {4096, 4096, 4096, "", 128, 256, 1, RK_GEMM_SCHED_PLAIN, 4},
        {1536, 1536, 1536, "", 128, 256, 1, RK_GEMM_SCHED_PLAIN, 4},     /* one partial wave, not two */
        {3072, 3072, 3072, "", 128, 256, 1, RK_GEMM_SCHED_PLAIN, 4},
        {768, 1536, 12288, "", 64, 128, 1, RK_GEMM_SCHED_PLAIN, 4},      /* two 64 x 128 blocks an SM */
        {1024, 1024, 4096, "", 64, 128, 1, RK_GEMM_SCHED_PLAIN, 4},      /* splits 2048 deep lose */
        {1024, 1024, 16384, "", 64, 128, 2, RK_GEMM_SCHED_PLAIN, 4},
        {128, 8192, 8192, "", 64, 128, 1, RK_GEMM_SCHED_PLAIN, 6},       /* half a wave: 8192 deep or none */
        {512, 512, 32768, "", 64, 128, 8, RK_GEMM_SCHED_PLAIN, 4},
        {256, 256, 65536, "", 64, 128, 16, RK_GEMM_SCHED_PLAIN, 4},      /* at most 16 */
        {256, 256, 65536, "layout=rr dtype=f16", 64, 128, 16, RK_GEMM_SCHED_PLAIN, 4},
        {1024, 1024, 16384, "schedule=ws", 64, 128, 1, RK_GEMM_SCHED_WS, 4},   /* the split needs plain */
        {16384, 16384, 256, "", 128, 256, 1, RK_GEMM_SCHED_PERSISTENT, 3},     /* short K, many waves (C beside 3) */
        {8192, 8192, 1024, "", 128, 256, 1, RK_GEMM_SCHED_PERSISTENT, 3},
        {8192, 8192, 2048, "", 128, 256, 1, RK_GEMM_SCHED_PLAIN, 4},
        /* a deeper ring where one block an SM streams its operands */
        {8192, 128, 8192, "", 64, 128, 1, RK_GEMM_SCHED_PLAIN, 6},
        {256, 4096, 4096, "", 64, 128, 1, RK_GEMM_SCHED_PLAIN, 6},
        {200, 3000, 5000, "", 64, 128, 1, RK_GEMM_SCHED_PLAIN, 4},      /* 96 tiles: a quarter of the SMs idle */
        {1000, 1000, 1000, "dtype=f16", 64, 128, 1, RK_GEMM_SCHED_PLAIN, 4},   /* reuses its operands */
        {128, 8192, 8192, "stages=3", 64, 128, 1, RK_GEMM_SCHED_PLAIN, 3},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const uint64_t ext[3] = {rows[i].m, rows[i].n, rows[i].k};
        rk_instance in;
        rk_shape sh;
        instance_for("sm_90a", ext, rows[i].knobs, &in, &sh);
        const rk_gemm_spec *g = &in.u.gemm;
        if (!is_wgmma(&in) || g->tile[0] != rows[i].tm || g->tile[1] != rows[i].tn || g->split_k != rows[i].split ||
            g->schedule != rows[i].sched || g->stages != rows[i].stages)
            fail_msg("%llux%llux%llu %s: tile %ux%u split %u schedule %d stages %u, want %ux%u split %u schedule %d "
                     "stages %u",
                     (unsigned long long)rows[i].m, (unsigned long long)rows[i].n, (unsigned long long)rows[i].k,
                     rows[i].knobs, g->tile[0], g->tile[1], g->split_k, (int)g->schedule, g->stages, rows[i].tm,
                     rows[i].tn, rows[i].split, (int)rows[i].sched, rows[i].stages);
        assert_int_equal(rk_instance_validate(&in, rk_target_find("sm_90a")), RK_OK);
        if (g->split_k > 1) assert_int_equal(g->epilogue, RK_GEMM_EPI_DIRECT);
        if (g->schedule == RK_GEMM_SCHED_PERSISTENT) assert_int_equal(g->blocks, 132);
    }
    /* what the wgmma split cannot take keeps the mma tuning's choice: atomic reduction, fp8 (no split) */
    const uint64_t deep[3] = {256, 256, 65536};
    rk_instance in;
    rk_shape sh;
    instance_for("sm_90a", deep, "split_reduce=atomic out_dtype=f32", &in, &sh);
    assert_false(is_wgmma(&in) && in.u.gemm.split_k > 1);
    instance_for("sm_90a", deep, "dtype=e4m3 out_dtype=bf16", &in, &sh);
    assert_true(is_wgmma(&in));
    assert_int_equal(in.u.gemm.split_k, 1);
    /* M <= 64 keeps its measured picks: no wgmma split */
    const uint64_t skinny[3] = {64, 256, 65536};
    instance_for("sm_90a", skinny, "", &in, &sh);
    assert_false(is_wgmma(&in) && in.u.gemm.split_k > 1);
}

static void test_bad_specs(void **state) {
    (void)state;
    const uint64_t sh3[3] = {256, 256, 256};
    const struct { const char *target, *knobs, *msg; } rows[] = {
        {"sm_80", "path=wgmma", "needs sm_90a"},
        {"sm_90a", "path=wgmma layout=rr tile=64x48x64 warps=4x1", "tile N 64, 128, 192 or 256"},
        {"sm_90a", "path=wgmma tile=64x64x32 warps=4x1", "tile K 64"},
        {"sm_90a", "path=wgmma tile=256x64x64 warps=8x1", "tile M 64"},
        {"sm_90a", "path=wgmma tile=64x64x64 warps=2x2", "runs 4x1 warps"},
        {"sm_90a", "path=wgmma tile=64x64x64 warps=4x1 stages=1", "2..6 TMA stages"},
        {"sm_90a", "path=wgmma tile=64x64x64 warps=4x1 vec_a=4 schedule=ws", "schedule=plain only"},
        {"sm_90a", "path=wgmma tile=128x256x64 warps=8x1 stages=6", "bytes of shared memory"},
        {"sm_90a", "path=wgmma atom=mma_m16n8k16_f32_f16", "leave atom=auto"},
        {"sm_90a", "path=wgmma schedule=persistent blocks=0", "needs knob 'blocks'"},
        {"sm_90a", "path=wgmma schedule=ws blocks=3", "is for schedule=persistent"},
        {"sm_90a", "path=mma schedule=ws", "are for path=wgmma"},
        {"sm_90a", "path=wgmma schedule=pingpong blocks=8 tile=128x128x64 warps=8x1", "tile M must be 64"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const rk_target *t = rk_target_find(rows[i].target);
        rk_instance in;
        rk_shape sh;
        instance_for(rows[i].target, sh3, rows[i].knobs, &in, &sh);
        if (rk_instance_validate(&in, t) == RK_OK) fail_msg("%s %s: accepted", rows[i].target, rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("%s: message '%s' lacks '%s'", rows[i].knobs, rk_error_message(), rows[i].msg);
    }
    /* a shape whose rows break TMA's 16-byte stride rule */
    rk_instance in;
    rk_shape sh;
    instance_for("sm_90a", sh3, "path=wgmma", &in, &sh);
    const uint64_t bad[3] = {256, 256, 100};
    assert_int_equal(rk_shape_update(RK_FAMILY_GEMM, &sh, NULL, bad, 3, false), RK_OK);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_ERR_INVALID);
    if (!strstr(rk_error_message(), "16-byte rows")) fail_msg("%s", rk_error_message());
    assert_non_null(strstr(rk_error_message(), "lower 'vec_a'"));
    instance_for("sm_90a", sh3, "path=wgmma layout=rr", &in, &sh);
    const uint64_t badn[3] = {256, 100, 256};
    assert_int_equal(rk_shape_update(RK_FAMILY_GEMM, &sh, NULL, badn, 3, false), RK_OK);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_ERR_INVALID);
    if (!strstr(rk_error_message(), "reads B") || !strstr(rk_error_message(), "along N = 100"))
        fail_msg("%s", rk_error_message());
}

/* The PTX holds the Hopper instructions, the transpose immediates of the
 * layout (trans-a, trans-b after the scale and negate immediates); ptxas
 * (where installed) assembles it. */
static void check_ptx(const char *knobs, const char *trans) {
    const uint64_t big[3] = {4096, 4096, 4096};
    rk_instance in;
    rk_artifact *a = NULL;
    rk_status st = gemm_ptx("sm_90a", big, knobs, &in, &a);
    if (st == RK_ERR_UNSUPPORTED) {   /* no LLVM here: the kernel must at least verify for the target */
        print_message("SKIP PTX: %s\n", rk_error_message());
        return;
    }
    if (st) fail_msg("%s: %s", knobs, rk_error_message());
    const char *ptx = (const char *)a->binary;
    char mma[96];
    snprintf(mma, sizeof mma, "wgmma.mma_async.sync.aligned.m64n%uk16.f32.bf16.bf16", in.u.gemm.tile[1]);
    assert_non_null(strstr(ptx, mma));
    if (!strstr(ptx, trans)) fail_msg("%s: the PTX lacks the immediates '%s'", knobs, trans);
    assert_non_null(strstr(ptx, "cp.async.bulk.tensor.2d"));
    assert_non_null(strstr(ptx, "mbarrier.try_wait.parity"));
    assert_non_null(strstr(ptx, "wgmma.fence.sync.aligned"));
    assert_non_null(strstr(ptx, "wgmma.commit_group.sync.aligned"));
    assert_non_null(strstr(ptx, "wgmma.wait_group.sync.aligned"));
    if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0 || getenv("ROCKE_PTXAS")) assert_non_null(a->cubin);
    else print_message("SKIP cubin: no ptxas\n");
    rk_artifact_free(a);
}

static void test_ptx(void **state) {
    (void)state;
    check_ptx("dtype=bf16", "p, 1, 1, 0, 0;");
    check_ptx("dtype=bf16 layout=rr", "p, 1, 1, 0, 1;");
    check_ptx("dtype=bf16 layout=cr", "p, 1, 1, 1, 1;");
    check_ptx("dtype=bf16 layout=cc", "p, 1, 1, 1, 0;");
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    fprintf(stderr, "test_gemm_hopper: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
            (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tails),    cmocka_unit_test(test_layouts), cmocka_unit_test(test_copied),
        cmocka_unit_test(test_schedules),
        cmocka_unit_test(test_epilogues),
        cmocka_unit_test(test_dispatch),  cmocka_unit_test(test_tile_model),
        cmocka_unit_test(test_bad_specs), cmocka_unit_test(test_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
