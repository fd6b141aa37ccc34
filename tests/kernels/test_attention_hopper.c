/* rocke tests — attention path=wgmma (sm_90a: TMA + wgmma, P in registers)
 * on the CPU emulator against the double host reference: odd Sq / Skv tails
 * (1, 45, 70, 130, 333), causal with Sq != Skv both ways, a window, GQA 4/2
 * and MQA, D = 64, 128 and 256, LSE, every schedule (plain, ws, overlap,
 * pingpong), one, two and three consumer warpgroups, block_n 176, 2 and 3 stages, several key blocks, the overlapped
 * schedule (blocks with no visible key among them); a tensor map
 * planted with the wrong swizzle or box must fail; the heuristic's choice;
 * and the specs the path refuses, each with its message. Fresh random data;
 * the seed is printed (ROCKE_SEED=N replays). */
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
static double scale_given;   /* nonzero: the softmax scale run_wg passes (else the problem's 1/sqrt(D)) */

/* A planted fault in one tensor map: `map` (0 none, else the signature
 * entry's name) encoded with `swizzle` bytes and `box_rows` rows instead. */
typedef struct plant { const char *map; uint32_t swizzle, box_rows; } plant;

/* Build for sm_90a with the knobs at B,Hq,Hkv,Sq,Skv,D (the rest tuned),
 * check the instance is path=wgmma, launch (window bounds wl, wr when
 * given), check O and LSE; returns the launch status and the bad count. */
static rk_status run_wg(const uint64_t ext[6], const char *knobs, const int *window, const plant *pt, uint64_t *bad) {
    const rk_target *t = rk_target_find("sm_90a");
    rk_instance in;
    rk_shape sh;
    rk_kernel *k;
    char name[256];
    if (problem_emu_build(RK_FAMILY_ATTENTION, t, ext, 6, knobs, &in, &sh, &k, name, sizeof name))
        fail_msg("%s (%s): %s", name, knobs, rk_error_message());
    if (in.u.attn.path != RK_ATTN_PF_WGMMA) fail_msg("%s: not path=wgmma", name);
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    if (scale_given != 0) assert_int_equal(rk_problem_set_scalar(&p, "scale", scale_given), RK_OK);
    if (window) {
        assert_int_equal(rk_problem_set_scalar(&p, "window_left", window[0]), RK_OK);
        assert_int_equal(rk_problem_set_scalar(&p, "window_right", window[1]), RK_OK);
    }
    rk_emu *emu = rk_emu_new(t, NULL);
    static problem_emu_args pa;
    if (problem_emu_args_make(emu, &p, &pa)) fail_msg("%s: arguments: %s", name, rk_error_message());
    for (uint32_t i = 0; pt && i < p.sig.n; i++) {
        if (p.sig.p[i].role != RK_KP_TENSORMAP || strcmp(p.sig.p[i].name, pt->map)) continue;
        rk_problem_tmap m;
        assert_int_equal(rk_problem_tensormap(&p, i, &m), RK_OK);
        assert_int_equal(rk_emu_tensormap_encode_2d(pa.addr[m.buf], 2, m.rows, m.cols, m.row_stride_bytes,
                                                    pt->box_rows ? pt->box_rows : m.box_rows, m.box_cols,
                                                    pt->swizzle, pa.maps[i]), RK_OK);
    }
    uint32_t grid[3], block[3];
    rk_instance_grid(&in, &sh, grid, block);
    /* 128 threads per 64 query rows, and the producer warpgroup on ws */
    assert_int_equal(block[0], 2 * in.u.attn.block_m + (in.u.attn.schedule != RK_ATTN_SCHED_PLAIN ? 128 : 0));
    rk_status st = rk_emu_launch(emu, k, grid, block, 0, pa.args);
    *bad = 0;
    if (!st) {
        rk_problem_diff c;
        assert_int_equal(rk_problem_check(&p, &c), RK_OK);
        assert_true(c.total > 0);
        *bad = c.bad;
        if (c.bad && !pt)
            fail_msg("%s shape %llu,%llu,%llu,%llu,%llu,%llu seed %llu: %llu/%llu bad, %s", name,
                     (unsigned long long)ext[0], (unsigned long long)ext[1], (unsigned long long)ext[2],
                     (unsigned long long)ext[3], (unsigned long long)ext[4], (unsigned long long)ext[5],
                     (unsigned long long)s, (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    } else if (!pt) {
        fail_msg("%s: launch: %s", name, rk_error_message());
    }
    rk_emu_free(emu);
    rk_problem_free(&p);
    rk_kernel_free(k);
    return st;
}

static void ok(const uint64_t ext[6], const char *knobs, const int *window) {
    uint64_t bad;
    assert_int_equal(run_wg(ext, knobs, window, NULL, &bad), RK_OK);
}

static void test_tails(void **state) {
    (void)state;
    const uint64_t one[6] = {1, 4, 1, 1, 45, 64}, gqa[6] = {1, 4, 2, 45, 70, 128}, many[6] = {1, 2, 2, 70, 333, 64};
    ok(one, "dtype=bf16 path=wgmma", NULL);
    ok(gqa, "dtype=f16 lse=true path=wgmma schedule=plain", NULL);
    /* six key blocks through 3 stages, one warpgroup, 64-key steps */
    ok(many, "dtype=bf16 path=wgmma block_m=64 warps=4 block_n=64 stages=3", NULL);
    /* overlap: S of block j under P V of block j - 1; one key block, and six through 2 and 3 stages */
    ok(one, "dtype=f16 path=wgmma schedule=overlap", NULL);
    ok(many, "dtype=f16 lse=true path=wgmma schedule=overlap block_n=64", NULL);
    ok(gqa, "dtype=bf16 path=wgmma schedule=overlap block_n=32 stages=3", NULL);
    const uint64_t d256[6] = {1, 1, 1, 20, 45, 256};
    ok(d256, "dtype=bf16 lse=true path=wgmma", NULL);
}

static void test_masks(void **state) {
    (void)state;
    /* causal with Sq > Skv (fully masked rows) and Sq < Skv, bottom-right aligned */
    const uint64_t tall[6] = {1, 2, 1, 130, 70, 64}, wide[6] = {2, 4, 2, 70, 130, 128};
    ok(tall, "dtype=bf16 mask=causal lse=true path=wgmma", NULL);
    ok(tall, "dtype=f16 mask=causal lse=true path=wgmma schedule=overlap block_n=32", NULL);   /* blocks with no key */
    ok(wide, "dtype=f16 mask=causal path=wgmma block_n=32 schedule=plain", NULL);
    const uint64_t w[6] = {1, 2, 2, 130, 200, 64};
    const int finite[2] = {30, 5}, open_left[2] = {-1, 7};
    ok(w, "dtype=bf16 mask=window lse=true path=wgmma block_n=32", finite);
    ok(w, "dtype=f16 mask=window path=wgmma block_m=64 warps=4", open_left);
    ok(w, "dtype=bf16 mask=window path=wgmma schedule=overlap", finite);
}

/* schedule = pingpong (the consumer warpgroups take turns on named barriers
 * around overlap's issues) and FlashAttention-3's tiles: three consumer
 * warpgroups (block_m 192) at D 64, 176-key steps at D 128. The emulator
 * runs the barriers with their counts: a turn handed on wrongly deadlocks. */
static void test_pingpong(void **state) {
    (void)state;
    const uint64_t gqa[6] = {1, 4, 2, 45, 70, 128}, many[6] = {1, 2, 2, 70, 333, 64};
    ok(gqa, "dtype=bf16 lse=true path=wgmma schedule=pingpong block_n=32 stages=3", NULL);
    ok(many, "dtype=f16 path=wgmma schedule=pingpong block_n=64", NULL);
    const uint64_t tall[6] = {1, 2, 1, 130, 70, 64}, wide[6] = {2, 4, 2, 70, 130, 128};
    ok(tall, "dtype=f16 mask=causal lse=true path=wgmma schedule=pingpong block_n=32", NULL);   /* blocks with no key */
    ok(wide, "dtype=bf16 mask=causal path=wgmma schedule=pingpong block_n=64", NULL);
    /* three consumer warpgroups, a query tail inside the last one */
    const uint64_t d64[6] = {1, 2, 1, 200, 150, 64};
    ok(d64, "dtype=bf16 lse=true path=wgmma schedule=pingpong block_m=192 warps=12", NULL);
    ok(d64, "dtype=f16 mask=causal path=wgmma schedule=ws block_m=192 warps=12 block_n=64", NULL);
    /* 176 keys a step: 11 k16 slices of P V, a key tail in the third block */
    const uint64_t d128[6] = {1, 1, 1, 70, 400, 128};
    ok(d128, "dtype=bf16 path=wgmma schedule=pingpong block_n=176", NULL);
    /* schedule=ws at 176 keys: its loop's P fragments (11) once overran an 8-entry array, which
     * broke the build with LSE ("a value used outside its region") */
    ok(d128, "dtype=f16 lse=true path=wgmma schedule=ws block_n=176", NULL);
    const uint64_t d256[6] = {1, 1, 1, 20, 45, 256};
    ok(d256, "dtype=f16 lse=true path=wgmma schedule=pingpong block_n=32", NULL);
}

/* The folded softmax (the default: max of the raw scores, one FMA and
 * ex2.approx.ftz per score) at odd tails, every mask and schedule above;
 * here the scale's sign: a negative scale flips which raw score is the row's
 * maximum, so the block-uniform branch must take the shared softmax (the
 * folded one would exponentiate positive arguments and overflow), and a large
 * one sharpens P towards one-hot. exact_softmax builds the shared softmax
 * alone. */
static void test_softmax(void **state) {
    (void)state;
    const uint64_t gqa[6] = {1, 4, 2, 17, 130, 128}, many[6] = {1, 2, 2, 130, 333, 64};
    const int finite[2] = {40, 3};
    const double scales[] = {-0.3, 2.5};
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
        scale_given = scales[i];
        ok(gqa, "dtype=bf16 lse=true path=wgmma schedule=pingpong block_n=64", NULL);
        ok(many, "dtype=f16 mask=causal path=wgmma schedule=plain block_n=64", NULL);
        ok(many, "dtype=bf16 mask=window lse=true path=wgmma schedule=overlap", finite);
    }
    scale_given = 0;
    ok(gqa, "dtype=bf16 lse=true path=wgmma schedule=pingpong exact_softmax=true", NULL);
    ok(many, "dtype=f16 mask=causal path=wgmma schedule=ws block_n=32 exact_softmax=true", NULL);
}

/* A tensor map without the swizzle lands the tiles where the descriptors do
 * not look (wrong results); a K box of fewer rows brings fewer bytes than the
 * stage's expect-tx (the phase never completes: the emulator reports it). */
static void test_planted(void **state) {
    (void)state;
    const uint64_t e[6] = {1, 2, 2, 45, 100, 64};
    uint64_t bad = 0;
    const plant sw = {"V_map", 0, 0};   /* no swizzle: the descriptors expect the 128-byte one */
    assert_int_equal(run_wg(e, "dtype=bf16 path=wgmma", NULL, &sw, &bad), RK_OK);
    assert_true(bad > 0);
    const plant box = {"K_map", 128, 64};
    rk_status st = run_wg(e, "dtype=bf16 path=wgmma block_n=128", NULL, &box, &bad);
    assert_int_not_equal(st, RK_OK);
    assert_non_null(strstr(rk_error_message(), "mbarrier"));
}

static void shape_refused(const rk_instance *in, const rk_shape *sh) {
    assert_int_equal(rk_instance_check_shape(in, sh), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "B * Hq * Sq and B * Hkv * Skv must be below 2^31"));
}

static void tuned(const char *target, const uint64_t ext[6], const char *knobs, rk_instance *in) {
    rk_shape sh;
    if (problem_tuned("attention", rk_target_find(target), ext, 6, knobs, in, &sh))
        fail_msg("%s %s: %s", target, knobs, rk_error_message());
}

static void test_heuristic(void **state) {
    (void)state;
    const uint64_t e[6] = {4, 32, 32, 4096, 4096, 128};
    rk_instance in;
    tuned("sm_90a", e, "dtype=bf16", &in);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_WGMMA);
    assert_int_equal(in.u.attn.schedule, RK_ATTN_SCHED_PINGPONG);   /* measured: bench/RESULTS.md, session 6 */
    assert_int_equal(in.u.attn.stages, 3);
    assert_int_equal(in.u.attn.block_m, 128);
    assert_int_equal(in.u.attn.block_n, 128);
    assert_int_equal(in.u.attn.warps, 8);
    assert_false(in.u.attn.exact_softmax);   /* the folded softmax */
    const uint64_t d64[6] = {8, 16, 16, 2048, 2048, 64};
    tuned("sm_90a", d64, "dtype=bf16", &in);
    assert_int_equal(in.u.attn.schedule, RK_ATTN_SCHED_PLAIN);
    assert_true(in.u.attn.exact_softmax);    /* 128 registers: two blocks per SM */
    tuned("sm_90a", d64, "dtype=bf16 exact_softmax=false", &in);
    assert_false(in.u.attn.exact_softmax);
    assert_int_equal(in.u.attn.block_m, 128);
    /* causal D 64: one consumer warpgroup a block (session 16); pingpong asked for keeps two */
    tuned("sm_90a", d64, "dtype=bf16 mask=causal", &in);
    assert_int_equal(in.u.attn.block_m, 64);
    assert_int_equal(in.u.attn.warps, 4);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_WGMMA);
    tuned("sm_90a", d64, "dtype=bf16 mask=causal schedule=pingpong", &in);
    assert_int_equal(in.u.attn.block_m, 128);
    tuned("sm_90a", e, "dtype=bf16 mask=causal", &in);
    assert_int_equal(in.u.attn.block_m, 128);
    /* bshd and varlen take it too (test_attention_hopper_layouts.c); sm_80 and sm_90 (no wgmma), an explicit
     * atom: the mma kernel */
    tuned("sm_90a", e, "dtype=bf16 layout=bshd", &in);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_WGMMA);
    tuned("sm_90", e, "dtype=bf16", &in);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_MMA);
    tuned("sm_80", e, "dtype=f16", &in);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_MMA);
    tuned("sm_90a", e, "dtype=bf16 atom=mma_m16n8k16_f32_bf16", &in);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_MMA);
    tuned("sm_90a", e, "dtype=bf16 path=mma", &in);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_MMA);
    assert_int_equal(in.u.attn.schedule, RK_ATTN_SCHED_PLAIN);
    const uint64_t d256[6] = {1, 8, 8, 2048, 2048, 256};
    tuned("sm_90a", d256, "dtype=bf16 mask=causal", &in);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_WGMMA);
    assert_int_equal(in.u.attn.block_n, 64);
}

/* Specs path=wgmma cannot serve: refused before any IR, naming why. */
static void test_refusals(void **state) {
    (void)state;
    static const struct { const char *target, *knobs, *msg; } rows[] = {
        {"sm_90", "path=wgmma", "needs sm_90a"},
        {"sm_90a", "path=wgmma block_m=32", "'block_m' = 32, legal 64, 128"},
        {"sm_90a", "path=wgmma block_m=64 warps=8", "'warps' = 8, with block_m 64 it is 4"},
        {"sm_90a", "path=wgmma block_n=16 stages=1", "'stages' = 1"},
        {"sm_90a", "path=wgmma head_dim=256 block_n=128", "at most 208"},
        {"sm_90a", "path=mma schedule=ws", "'schedule' = ws belongs to path=wgmma"},
        {"sm_90", "path=mma block_n=176", "176 keys and 12 warps are path=wgmma tiles"},
        {"sm_90a", "path=mma schedule=pingpong", "'schedule' = pingpong belongs to path=wgmma"},
        {"sm_90a", "path=mma exact_softmax=true", "'exact_softmax' belongs to path=wgmma"},
        {"sm_90a", "path=wgmma schedule=pingpong block_m=64 warps=4", "schedule=pingpong takes turns"},
        {"sm_90a", "path=wgmma head_dim=256 block_n=176", "head_dim 256 and block_n 176"},
        {"sm_90a", "path=wgmma schedule=pingpong block_m=192 warps=12 block_n=176", "block_m 192"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const uint64_t e[6] = {1, 2, 2, 64, 64, strstr(rows[i].knobs, "256") ? 256 : 64};
        rk_instance in;
        rk_shape sh;
        rk_status st = problem_tuned("attention", rk_target_find(rows[i].target), e, 6, rows[i].knobs, &in, &sh);
        if (!st) st = rk_instance_validate(&in, rk_target_find(rows[i].target));
        if (st == RK_OK) fail_msg("%s %s: accepted", rows[i].target, rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("%s %s: '%s' lacks '%s'", rows[i].target, rows[i].knobs, rk_error_message(), rows[i].msg);
        if (!strstr(rk_error_message(), "path=mma") && strstr(rows[i].knobs, "wgmma"))
            fail_msg("%s: '%s' does not name path=mma", rows[i].knobs, rk_error_message());
    }
    /* TMA coordinates are i32: 2^31 rows of Q are refused at the shape */
    rk_instance in;
    rk_shape sh;
    const uint64_t big[6] = {64, 128, 8, 1u << 18, 1024, 128};
    assert_int_equal(problem_tuned("attention", rk_target_find("sm_90a"), big, 6, "path=wgmma", &in, &sh), RK_OK);
    shape_refused(&in, &sh);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("seed %llu (ROCKE_SEED=%llu to replay)\n", (unsigned long long)seed, (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tails),
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_pingpong),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_planted),
        cmocka_unit_test(test_heuristic),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
