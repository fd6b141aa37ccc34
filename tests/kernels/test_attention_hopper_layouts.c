/* rocke tests — attention path=wgmma (sm_90a, TMA + wgmma) over layouts
 * bshd and varlen on the CPU emulator against the double host reference:
 * bshd views with padded token rows (a q.transpose(1, 2) view of a wider
 * projection, the padding NaN), varlen with odd lengths (1, 17, 130, 333, an
 * empty sequence), causal and window, GQA and MQA, D 64 and 128, LSE, every
 * schedule; a map encoded with the packed row stride over padded rows must
 * be caught; strides TMA cannot follow refused naming the stride; the
 * heuristic's path. Fresh random data; the seed is printed (ROCKE_SEED=N
 * replays). */
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

/* One run's problem: rows padded by `pad` elements, varlen lengths (n of
 * them, 0: random), window bounds (when given). */
typedef struct setup {
    uint32_t pad;
    const uint64_t *lq, *lk;
    uint32_t n;
    const int *window;
} setup;

static void prepare(const uint64_t ext[6], const char *knobs, const char *path, const setup *su, rk_instance *in,
                    rk_shape *sh, rk_kernel **k, rk_problem *p) {
    const rk_target *t = rk_target_find("sm_90a");
    char name[256];
    if (problem_emu_build(RK_FAMILY_ATTENTION, t, ext, 6, knobs, in, sh, k, name, sizeof name))
        fail_msg("%s (%s): %s", name, knobs, rk_error_message());
    if (in->u.attn.path != (strcmp(path, "wgmma") ? RK_ATTN_PF_MMA : RK_ATTN_PF_WGMMA))
        fail_msg("%s (%s): not path=%s", name, knobs, path);
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(p, in, sh, s), RK_OK);
    if (su && su->pad && rk_problem_set_row_padding(p, su->pad)) fail_msg("%s: %s", name, rk_error_message());
    if (su && su->n && rk_problem_set_lengths(p, su->lq, su->lk, su->n)) fail_msg("%s: %s", name, rk_error_message());
    if (su && su->window && rk_problem_set_window(p, su->window[0], su->window[1]))
        fail_msg("%s: %s", name, rk_error_message());
}

/* Build for sm_90a (the kernel must be `path`), run and check O and LSE. */
static void ok_path(const uint64_t ext[6], const char *knobs, const char *path, const setup *su) {
    rk_instance in;
    rk_shape sh;
    rk_kernel *k;
    rk_problem p;
    prepare(ext, knobs, path, su, &in, &sh, &k, &p);
    rk_problem_diff c;
    if (problem_emu_verify(rk_target_find("sm_90a"), k, &p, &sh, &c)) fail_msg("%s: launch: %s", knobs, rk_error_message());
    assert_true(c.total > 0);
    if (c.bad)
        fail_msg("%s shape %llu,%llu,%llu,%llu,%llu,%llu pad %u seed %llu: %llu/%llu bad, %s", knobs,
                 (unsigned long long)ext[0], (unsigned long long)ext[1], (unsigned long long)ext[2],
                 (unsigned long long)ext[3], (unsigned long long)ext[4], (unsigned long long)ext[5],
                 su ? su->pad : 0, (unsigned long long)p.seed, (unsigned long long)c.bad,
                 (unsigned long long)c.total, c.first_bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}
static void ok(const uint64_t ext[6], const char *knobs, const setup *su) { ok_path(ext, knobs, "wgmma", su); }

static void test_bshd(void **state) {
    (void)state;
    /* a q.transpose(1, 2) view: token rows of H * D + 24 elements, the padding NaN; GQA 4/2, causal, LSE */
    const uint64_t gqa[6] = {2, 4, 2, 45, 70, 64}, d128[6] = {2, 2, 2, 130, 75, 128}, mqa[6] = {3, 3, 1, 17, 33, 64};
    const setup p24 = {.pad = 24}, p8 = {.pad = 8};
    ok(gqa, "dtype=bf16 layout=bshd mask=causal lse=true", &p24);
    /* D 128, Sq > Skv, a window; two 64-key stages of one warpgroup under ws */
    const int win[2] = {30, 5};
    const setup p8w = {.pad = 8, .window = win};
    ok(d128, "dtype=f16 layout=bshd mask=window lse=true block_m=64 warps=4 block_n=64", &p8w);
    /* packed rows, MQA, schedule plain and overlap */
    ok(mqa, "dtype=bf16 layout=bshd schedule=plain", NULL);
    ok(mqa, "dtype=f16 layout=bshd mask=causal schedule=overlap block_n=32", &p8);
    /* the mma kernel reads the same padded view through its stride arguments */
    ok_path(gqa, "dtype=bf16 layout=bshd mask=causal path=mma", "mma", &p24);
}

static void test_varlen(void **state) {
    (void)state;
    /* odd lengths: a single query, 17, 130 and 333 over keys of other lengths (causal: rows without keys) */
    const uint64_t sh[6] = {4, 4, 2, 333, 200, 64};
    const uint64_t lq[4] = {1, 17, 130, 333}, lk[4] = {200, 17, 199, 130};
    const setup odd = {.lq = lq, .lk = lk, .n = 4};
    ok(sh, "dtype=bf16 layout=varlen mask=causal lse=true", &odd);
    /* D 128, a window, an empty key sequence and one query over 45 keys, padded rows */
    const uint64_t sh128[6] = {3, 2, 1, 70, 45, 128};
    const uint64_t lq3[3] = {20, 1, 70}, lk3[3] = {0, 45, 17};
    const int win[2] = {3, 1};
    const setup w = {.lq = lq3, .lk = lk3, .n = 3, .window = win, .pad = 8};
    ok(sh128, "dtype=f16 layout=varlen mask=window lse=true block_n=32", &w);
    /* random lengths, no mask, plain and overlap */
    const uint64_t rnd[6] = {3, 4, 4, 37, 45, 64};
    ok(rnd, "dtype=f16 layout=varlen schedule=plain", NULL);
    ok(rnd, "dtype=bf16 layout=varlen mask=causal schedule=overlap block_n=32", NULL);
}

/* The V map encoded with the packed row stride over padded rows reads the
 * wrong tokens: the check must see it. */
static void test_planted(void **state) {
    (void)state;
    const uint64_t e[6] = {2, 2, 1, 45, 40, 64};
    const setup p16 = {.pad = 16};
    rk_instance in;
    rk_shape sh;
    rk_kernel *k;
    rk_problem p;
    prepare(e, "dtype=bf16 layout=bshd", "wgmma", &p16, &in, &sh, &k, &p);
    const rk_target *t = rk_target_find("sm_90a");
    rk_emu *emu = rk_emu_new(t, NULL);
    static problem_emu_args pa;
    assert_int_equal(problem_emu_args_make(emu, &p, &pa), RK_OK);
    for (uint32_t i = 0; i < p.sig.n; i++) {
        if (p.sig.p[i].role != RK_KP_TENSORMAP || strcmp(p.sig.p[i].name, "V_map")) continue;
        rk_problem_tmap m;
        assert_int_equal(rk_problem_tensormap(&p, i, &m), RK_OK);
        assert_int_equal(m.row_stride_bytes, 2 * (1 * 64 + 16));   /* Hkv * D + pad elements */
        assert_int_equal(rk_emu_tensormap_encode_2d(pa.addr[m.buf], 2, m.rows, m.cols, m.row_stride_bytes - 32,
                                                    m.box_rows, m.box_cols, m.swizzle_bytes, pa.maps[i]), RK_OK);
    }
    uint32_t grid[3], block[3];
    rk_instance_grid(&in, &sh, grid, block);
    assert_int_equal(rk_emu_launch(emu, k, grid, block, 0, pa.args), RK_OK);
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    assert_true(c.bad > 0);
    rk_emu_free(emu);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

/* Scalar `name` of p moved by delta (a stride the test breaks). */
static void add_stride(rk_problem *p, const char *name, double delta) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!p->sig.p[i].ptr && !strcmp(p->sig.p[i].name, name)) p->scalar[i] += delta;
}

/* The message of the first map that refuses p's strides (fails if every map takes them). */
static const char *map_refusal(const rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (p->sig.p[i].role != RK_KP_TENSORMAP) continue;
        rk_problem_tmap m;
        if (rk_problem_tensormap(p, i, &m) != RK_OK) return rk_error_message();
    }
    fail_msg("every map took the strides");
    return NULL;
}

static void refused(const char *knobs, uint32_t pad, const char *stride, double delta, const char *msg) {
    const uint64_t e[6] = {2, 4, 2, 33, 40, 64};
    rk_instance in;
    rk_shape sh;
    rk_kernel *k;
    rk_problem p;
    const setup su = {.pad = pad};
    prepare(e, knobs, "wgmma", &su, &in, &sh, &k, &p);
    if (stride) add_stride(&p, stride, delta);
    const char *m = map_refusal(&p);
    if (!strstr(m, msg)) fail_msg("%s pad %u %s: '%s' lacks '%s'", knobs, pad, stride ? stride : "", m, msg);
    if (!strstr(m, "path=wgmma")) fail_msg("'%s' does not name path=wgmma", m);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static void test_bad_strides(void **state) {
    (void)state;
    /* rows of 4 * 64 + 4 elements: 520 bytes, not a multiple of 16 */
    refused("dtype=bf16 layout=bshd", 4, NULL, 0, "must be a positive multiple of 16 bytes (8 elements)");
    refused("dtype=bf16 layout=varlen", 2, NULL, 0, "q_ss = 258 elements (516 bytes)");
    /* batches that do not abut (a padded batch stride), a head stride off the 16-byte grid, heads wider than a row */
    refused("dtype=bf16 layout=bshd", 8, "k_sb", 8, "k_sb = 5448 must be S * k_ss = 5440");
    refused("dtype=f16 layout=bshd", 0, "q_sh", 4, "head stride q_sh = 68 elements must be a multiple of 16 bytes");
    refused("dtype=f16 layout=varlen", 0, "v_sh", 64, "do not fit one token row");
    /* bhsd: heads' rows that do not follow each other */
    refused("dtype=bf16", 8, "q_sh", 72, "q_sh = 2448 must be S * q_ss = 2376");
    /* row padding is for prefill attention */
    rk_problem p;
    memset(&p, 0, sizeof p);
    rk_instance_default(RK_FAMILY_ATTENTION, &p.inst);
    p.inst.u.attn.mode = RK_ATTN_DECODE;
    assert_int_equal(rk_problem_set_row_padding(&p, 8), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "mode prefill"));
}

static void tuned(const uint64_t ext[6], const char *knobs, rk_instance *in) {
    rk_shape sh;
    if (problem_tuned("attention", rk_target_find("sm_90a"), ext, 6, knobs, in, &sh))
        fail_msg("%s: %s", knobs, rk_error_message());
}

static void test_heuristic(void **state) {
    (void)state;
    const uint64_t e[6] = {4, 32, 8, 4096, 4096, 128}, d64[6] = {8, 16, 16, 2048, 2048, 64};
    rk_instance in;
    static const char *const layouts[] = {"dtype=bf16 layout=bshd", "dtype=bf16 layout=varlen mask=causal"};
    for (int i = 0; i < 2; i++) {
        tuned(e, layouts[i], &in);
        assert_int_equal(in.u.attn.path, RK_ATTN_PF_WGMMA);
        assert_int_equal(in.u.attn.schedule, RK_ATTN_SCHED_PINGPONG);
        assert_int_equal(in.u.attn.block_m, 128);
        tuned(d64, layouts[i], &in);
        assert_int_equal(in.u.attn.path, RK_ATTN_PF_WGMMA);
        assert_int_equal(in.u.attn.schedule, RK_ATTN_SCHED_PLAIN);
    }
    /* the shape limit of the maps' i32 rows is B * S for these layouts (B * H * S for bhsd) */
    const uint64_t wide[6] = {256, 1, 1, 1u << 23, 64, 64};
    rk_shape sh;
    assert_int_equal(problem_tuned("attention", rk_target_find("sm_90a"), wide, 6, "layout=bshd", &in, &sh), RK_OK);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_WGMMA);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "B * Sq and B * Skv must be below 2^31"));
    /* 2^31 rows as bhsd (B * Hq * Sq), 2^24 as bshd */
    const uint64_t fits[6] = {64, 128, 8, 1u << 18, 1024, 128};
    assert_int_equal(problem_tuned("attention", rk_target_find("sm_90a"), fits, 6, "layout=bshd", &in, &sh), RK_OK);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_OK);
}

/* The Perf line of a varlen problem counts every sequence's own visible pairs, not the maxima's. */
static void test_varlen_cost(void **state) {
    (void)state;
    const uint64_t e[6] = {3, 4, 2, 100, 90, 64}, lq[3] = {100, 1, 7}, lk[3] = {90, 5, 0};
    rk_instance in;
    rk_shape sh;
    assert_int_equal(problem_tuned("attention", rk_target_find("sm_90a"), e, 6, "layout=varlen mask=causal", &in, &sh),
                     RK_OK);
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, &sh, 1), RK_OK);
    assert_int_equal(rk_problem_set_lengths(&p, lq, lk, 3), RK_OK);
    double bytes, flops;
    rk_problem_cost(&p, &bytes, &flops);
    /* causal, bottom-right: 100 queries over 90 keys see 90 * 91 / 2 pairs, 1 over 5 sees 5, 7 over none 0 */
    assert_true(fabs(flops - 4.0 * 4 * (90 * 91 / 2 + 5) * 64) < 1);
    assert_true(fabs(bytes - 64 * 2 * (2 * 4 * 108 + 2 * 2 * 95)) < 1);
    rk_problem_free(&p);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("seed %llu (ROCKE_SEED=%llu to replay)\n", (unsigned long long)seed, (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bshd),        cmocka_unit_test(test_varlen),   cmocka_unit_test(test_planted),
        cmocka_unit_test(test_bad_strides), cmocka_unit_test(test_heuristic), cmocka_unit_test(test_varlen_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
