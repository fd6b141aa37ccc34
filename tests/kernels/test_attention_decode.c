/* rocke tests — attention decode (mode = decode) on the emulator against
 * the double reference over the gathered cache: random page permutations,
 * context lengths 1, page_size - 1, page_size + 1 and mixed, GQA ratios 1
 * and 4, Sq 1 and 3, split and unsplit, paged and contiguous caches, the
 * masks, fp8 (e4m3) caches, NVIDIA and AMD targets; the atom path at 16,
 * 24, 32 and 64 rows and its choice; the out-of-range page id caught by
 * the input check and by the emulator, the bad specs and shapes, the split
 * heuristic. Fresh random data; ROCKE_SEED=N replays. */
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

/* The decode instance for shape (B, Hq, Hkv, Sq, CTX, D) on target, knobs locked. */
static void decode_instance(const char *target, const uint64_t ext[6], const char *knobs, rk_instance *in,
                            rk_shape *sh) {
    rk_family_id f;
    assert_int_equal(rk_family_parse("attention", &f), RK_OK);
    rk_instance_default(f, in);
    char all[256];
    snprintf(all, sizeof all, "mode=decode %s", knobs);
    uint64_t locked;
    if (problem_knobs_set(in, all, &locked)) fail_msg("%s: %s", all, rk_error_message());
    assert_int_equal(rk_shape_default(f, sh), RK_OK);
    assert_int_equal(rk_shape_update(f, sh, NULL, ext, 6, false), RK_OK);
    if (rk_instance_tune(in, rk_target_find(target), sh, locked)) fail_msg("%s: %s", all, rk_error_message());
}

static int32_t *lens_of(rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, "context_lens")) return p->buf[i].data;
    fail_msg("no context_lens");
    return NULL;
}

/* A second launch over a cleared O gives the same bytes (the merge order
 * does not depend on arrival order; Arrivals were reset). */
static void relaunch_same(rk_problem *p, const rk_target *t, rk_kernel *k, const rk_shape *sh, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (strcmp(p->sig.p[i].name, "O")) continue;
        void *first = malloc(p->buf[i].bytes);
        memcpy(first, p->buf[i].data, p->buf[i].bytes);
        memset(p->buf[i].data, 0, p->buf[i].bytes);
        if (problem_emu_launch(t, k, p, sh)) fail_msg("%s: relaunch: %s", name, rk_error_message());
        if (memcmp(first, p->buf[i].data, p->buf[i].bytes)) fail_msg("%s: O differs on the second launch", name);
        free(first);
    }
}

/* num_splits of the next runs (0: the instance's kv_splits, the default) */
static uint32_t run_splits;

/* Build, fill (lens: NULL keeps the random lengths), run, verify; the
 * reference must also reject O with one element moved. */
static void run_case(const char *target, const uint64_t ext[6], const char *knobs, const int32_t *lens) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance in;
    rk_shape sh;
    decode_instance(target, ext, knobs, &in, &sh);
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    rk_kernel *k;
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    if (problem_emu_prepare(t, &in, &sh, s, &k, &p)) fail_msg("%s %s: %s", target, name, rk_error_message());
    if (lens) memcpy(lens_of(&p), lens, ext[0] * sizeof *lens);
    if (run_splits && rk_problem_set_scalar(&p, "num_splits", run_splits)) fail_msg("%s", rk_error_message());
    if (rk_problem_check_inputs(&p)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem_diff c;
    if (problem_emu_verify(t, k, &p, &sh, &c)) fail_msg("%s %s: launch: %s", target, name, rk_error_message());
    if (c.bad)
        fail_msg("%s %s seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target, name, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff, c.first_bad);
    if (in.u.attn.kv_splits > 1) relaunch_same(&p, t, k, &sh, name);
    /* the check is not blind: the largest output scaled by 4 or 1/4 (bf16)
     * or by about 1 +- 1/4 (f16: a high mantissa bit) is caught */
    int io = -1;
    for (uint32_t i = 0; i < p.sig.n; i++)
        if (!strcmp(p.sig.p[i].name, "O")) io = (int)i;
    uint16_t *o = p.buf[io].data;
    uint64_t big = 0;
    for (uint64_t x = 1; x < p.buf[io].count; x++)
        if ((o[x] & 0x7fff) > (o[big] & 0x7fff)) big = x;   /* 16-bit magnitudes order as their bits */
    o[big] ^= 0x0100;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad != 1) fail_msg("%s %s: a corrupted O gave bad=%llu", target, name, (unsigned long long)c.bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static const char *const targets[] = {"sm_90", "gfx942"};

/* Page size 16: lengths 1, 15, 17 and the maximum, GQA 1 and 4, Sq 1 and 3,
 * one split and four (the short sequences leave splits empty). */
static void test_paged_lengths(void **state) {
    (void)state;
    const int32_t lens[4] = {1, 15, 17, 70};
    for (int t = 0; t < 2; t++) {
        run_case(targets[t], (const uint64_t[]){4, 2, 2, 1, 70, 64}, "page_size=16 kv_splits=1", lens);
        run_case(targets[t], (const uint64_t[]){4, 8, 2, 3, 70, 64}, "page_size=16 kv_splits=4", lens);
    }
}

/* Random lengths (mixed), other page sizes, head dims and dtypes. */
static void test_paged_mixed(void **state) {
    (void)state;
    run_case("sm_80", (const uint64_t[]){3, 4, 1, 1, 150, 128}, "page_size=32 kv_splits=2 dtype=f16", NULL);
    run_case("gfx950", (const uint64_t[]){2, 4, 4, 3, 140, 128}, "page_size=64 kv_splits=2", NULL);
    run_case("sm_90", (const uint64_t[]){2, 2, 1, 2, 130, 256}, "page_size=128 kv_splits=1", NULL);
}

/* e4m3 caches with per-KV-head scales: OCP on NVIDIA and gfx950, FNUZ on
 * gfx942 (the other dialect is refused there). */
static void test_fp8(void **state) {
    (void)state;
    const int32_t lens[3] = {1, 31, 33};
    run_case("sm_90", (const uint64_t[]){3, 8, 2, 1, 33, 128}, "kv_dtype=fp8 page_size=16 kv_splits=2", lens);
    run_case("gfx942", (const uint64_t[]){3, 4, 1, 3, 60, 64}, "kv_dtype=fp8fnuz page_size=32 mask=causal", NULL);
    run_case("gfx950", (const uint64_t[]){2, 2, 2, 1, 40, 64}, "kv_dtype=fp8 page_size=0 dtype=f16", NULL);
    rk_instance in;
    rk_shape sh;
    decode_instance("gfx942", (const uint64_t[]){2, 2, 2, 1, 40, 64}, "kv_dtype=fp8", &in, &sh);
    assert_int_not_equal(rk_instance_validate(&in, rk_target_find("gfx942")), RK_OK);
    assert_non_null(strstr(rk_error_message(), "fp8fnuz"));
    in.u.attn.mode = RK_ATTN_PREFILL;
    assert_int_not_equal(rk_instance_validate(&in, rk_target_find("gfx942")), RK_OK);
    assert_non_null(strstr(rk_error_message(), "decode only"));
}

/* Causal across the Sq tokens and a sliding window, paged and contiguous. */
static void test_masks(void **state) {
    (void)state;
    const int32_t lens[3] = {2, 33, 90};
    run_case("sm_90", (const uint64_t[]){3, 8, 2, 3, 90, 64}, "page_size=16 mask=causal kv_splits=2", lens);
    run_case("gfx942", (const uint64_t[]){3, 4, 1, 2, 90, 64}, "page_size=0 mask=causal kv_splits=1", lens);
    run_case("sm_90", (const uint64_t[]){3, 4, 4, 2, 90, 128}, "page_size=0 mask=window kv_splits=2", NULL);
    run_case("gfx942", (const uint64_t[]){2, 8, 2, 1, 200, 64}, "page_size=32 mask=window kv_splits=4", NULL);
}

/* The atom path (rows as the atom's M, padded and masked): 16, 24, 32 and
 * 64 rows, paged and contiguous, split and unsplit, mma.sync and MFMA, fp8
 * caches; the lanes forced at 16 rows. */
static void test_atom_rows(void **state) {
    (void)state;
    const int32_t lens[3] = {1, 15, 70};
    run_case("sm_90a", (const uint64_t[]){3, 16, 1, 1, 70, 64}, "page_size=16 kv_splits=1 kv_path=atom", lens);
    run_case("sm_80", (const uint64_t[]){2, 24, 3, 3, 90, 128}, "page_size=0 kv_splits=2 mask=causal", NULL);
    run_case("gfx942", (const uint64_t[]){2, 32, 2, 2, 100, 64}, "page_size=32 kv_splits=4", NULL);
    run_case("sm_90a", (const uint64_t[]){2, 64, 1, 1, 80, 64}, "page_size=16 kv_splits=2 mask=window", NULL);
    run_case("gfx942", (const uint64_t[]){2, 16, 1, 4, 70, 128}, "page_size=0 dtype=f16 mask=causal", NULL);
    run_case("gfx950", (const uint64_t[]){2, 8, 1, 2, 90, 64}, "page_size=32 kv_splits=2", NULL);
    run_case("sm_90", (const uint64_t[]){3, 8, 2, 3, 70, 64}, "page_size=16 kv_path=valu", lens);
    /* fp8 caches converted into the 16-bit stages */
    run_case("sm_90a", (const uint64_t[]){3, 16, 1, 1, 70, 64}, "page_size=16 kv_dtype=fp8 kv_splits=2", lens);
    run_case("gfx942", (const uint64_t[]){2, 32, 1, 1, 70, 128}, "page_size=32 kv_dtype=fp8fnuz mask=causal", NULL);
    run_case("sm_80", (const uint64_t[]){2, 24, 3, 3, 50, 64}, "page_size=0 kv_dtype=fp8 dtype=f16", NULL);
}

static int path_for(const char *target, const uint64_t ext[6], const char *knobs) {
    rk_instance in;
    rk_shape sh;
    decode_instance(target, ext, knobs, &in, &sh);
    assert_int_equal(rk_instance_validate(&in, rk_target_find(target)), RK_OK);
    return in.u.attn.kv_path;
}

/* Atoms from 16 rows on where they serve the instance (NVIDIA, 16-bit caches: from 4 rows); refusals
 * name the way out. */
static void test_atom_choice(void **state) {
    (void)state;
    assert_int_equal(path_for("sm_90", (const uint64_t[]){2, 16, 1, 1, 64, 128}, "page_size=16"), RK_ATTN_PATH_ATOM);
    assert_int_equal(path_for("sm_90", (const uint64_t[]){2, 8, 1, 1, 64, 128}, "page_size=16"), RK_ATTN_PATH_ATOM);
    assert_int_equal(path_for("sm_90", (const uint64_t[]){2, 2, 1, 1, 64, 128}, "page_size=16"), RK_ATTN_PATH_VALU);
    assert_int_equal(path_for("gfx942", (const uint64_t[]){2, 8, 1, 1, 64, 128}, "page_size=32"), RK_ATTN_PATH_VALU);
    /* gfx950's 16x16x32 atom steps 32 keys: 16-token pages stay on the lanes */
    assert_int_equal(path_for("gfx950", (const uint64_t[]){2, 16, 1, 1, 64, 128}, "page_size=16"), RK_ATTN_PATH_VALU);
    assert_int_equal(path_for("gfx950", (const uint64_t[]){2, 16, 1, 1, 64, 128}, "page_size=32"), RK_ATTN_PATH_ATOM);
    assert_int_equal(path_for("sm_90", (const uint64_t[]){2, 8, 2, 1, 64, 64}, "kv_dtype=fp8"), RK_ATTN_PATH_VALU);
    const rk_target *t = rk_target_find("sm_90");
    rk_instance in;
    rk_shape sh;
    decode_instance("sm_90", (const uint64_t[]){2, 32, 1, 1, 64, 64}, "page_size=16 kv_path=valu", &in, &sh);
    assert_int_not_equal(rk_instance_validate(&in, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "kv_path = atom"));
    decode_instance("gfx950", (const uint64_t[]){2, 16, 1, 1, 64, 64}, "page_size=16 kv_path=atom", &in, &sh);
    assert_int_not_equal(rk_instance_validate(&in, rk_target_find("gfx950")), RK_OK);
    assert_non_null(strstr(rk_error_message(), "page_size 32"));
    decode_instance("sm_90", (const uint64_t[]){2, 128, 1, 1, 64, 64}, "", &in, &sh);
    assert_int_not_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "64 rows per KV head"));
}

/* A block table entry outside the cache: rk_problem_check_inputs names the
 * sequence, and the emulator stops at the read instead of reading it. */
static void test_bad_page(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90");
    rk_instance in;
    rk_shape sh;
    decode_instance("sm_90", (const uint64_t[]){3, 2, 1, 1, 40, 64}, "page_size=16 kv_splits=1", &in, &sh);
    rk_kernel *k;
    rk_problem p;
    assert_int_equal(problem_emu_prepare(t, &in, &sh, seed, &k, &p), RK_OK);
    int32_t *lens = lens_of(&p);
    lens[0] = lens[1] = lens[2] = 40;
    assert_int_equal(rk_problem_check_inputs(&p), RK_OK);
    int32_t *bt = NULL;
    for (uint32_t i = 0; i < p.sig.n; i++)
        if (!strcmp(p.sig.p[i].name, "block_table")) bt = p.buf[i].data;
    assert_non_null(bt);
    bt[1 * 3 + 2] = 9 + 4096;   /* 3 pages per sequence, 9 in the cache */
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    assert_non_null(strstr(rk_error_message(), "sequence 1"));
    assert_non_null(strstr(rk_error_message(), "block_table[1][2]"));
    assert_int_not_equal(problem_emu_launch(t, k, &p, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "out-of-bounds global read"));
    bt[1 * 3 + 2] = 0;
    lens[2] = 49;   /* 3 pages hold 48 keys */
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    assert_non_null(strstr(rk_error_message(), "sequence 2"));
    assert_int_not_equal(rk_problem_set_context_lengths(&p, "/nonexistent/lengths"), RK_OK);
    assert_int_equal(rk_problem_set_context_lengths(&p, "equal"), RK_OK);
    assert_int_equal(lens[2], 40);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

/* Bad specs and shapes get messages naming the rule. */
static void test_bad_input(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90");
    rk_instance in;
    rk_shape sh;
    decode_instance("sm_90", (const uint64_t[]){2, 8, 1, 9, 64, 64}, "page_size=16", &in, &sh);
    assert_int_not_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "Sq = 1..8"));
    decode_instance("sm_90", (const uint64_t[]){2, 32, 1, 1, 64, 64}, "page_size=16 kv_rows=16", &in, &sh);
    assert_int_not_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "kv_rows"));
    decode_instance("sm_90", (const uint64_t[]){2, 6, 4, 1, 64, 64}, "page_size=16", &in, &sh);
    assert_int_not_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "multiple of Hkv"));
    decode_instance("sm_90", (const uint64_t[]){2, 4, 1, 1, 64, 64}, "page_size=16 lse=true", &in, &sh);
    assert_int_not_equal(rk_instance_validate(&in, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "prefill only"));
    decode_instance("sm_90", (const uint64_t[]){2, 4, 1, 1, 64, 64}, "page_size=16", &in, &sh);
    in.u.attn.dtype = RK_S_F32;   /* past the knob's list (rk_instance_set refuses it): validate does too */
    assert_int_not_equal(rk_instance_validate(&in, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "knob 'dtype' must be one of f16|bf16"));
    assert_int_not_equal(rk_instance_set(&in, "page_size", "24", NULL), RK_OK);
    assert_non_null(strstr(rk_error_message(), "128"));
    assert_int_not_equal(rk_instance_set(&in, "kv_splits", "3", NULL), RK_OK);
    assert_int_not_equal(rk_instance_set(&in, "mode", "verify", NULL), RK_OK);
    assert_non_null(strstr(rk_error_message(), "decode"));
}

/* The K/V ring (stages 2..4) on both paths and the direct loads (stages =
 * 1): a stage of two pages, of part of a page, of four fp8 pages; contexts
 * of 1 key and not a whole number of stages; a split shorter than a stage
 * (CTX 70 in 4 splits: [64, 70)); AMD's plain copies behind the same ring. */
static void test_ring_stages(void **state) {
    (void)state;
    const int32_t lens4[4] = {1, 31, 33, 70}, lens3[3] = {1, 17, 70};
    run_case("sm_90", (const uint64_t[]){4, 4, 1, 1, 70, 128}, "page_size=16 stages=2 kv_splits=1", lens4);
    run_case("sm_90", (const uint64_t[]){4, 4, 1, 1, 70, 128}, "page_size=16 stages=4 kv_splits=4", lens4);
    run_case("sm_90", (const uint64_t[]){4, 4, 1, 1, 70, 128}, "page_size=16 stages=1 kv_splits=2", lens4);
    run_case("sm_90", (const uint64_t[]){3, 4, 2, 2, 300, 64}, "page_size=128 stages=3 kv_splits=1",
             (const int32_t[]){300, 129, 1});
    run_case("sm_80", (const uint64_t[]){2, 2, 1, 2, 90, 256}, "page_size=32 stages=2 mask=causal", NULL);
    run_case("sm_90", (const uint64_t[]){3, 8, 2, 1, 100, 128}, "page_size=16 stages=3 kv_dtype=fp8 kv_splits=2",
             (const int32_t[]){100, 65, 1});
    run_case("sm_90", (const uint64_t[]){2, 4, 4, 2, 150, 128}, "page_size=0 stages=4 mask=window kv_splits=2", NULL);
    run_case("gfx942", (const uint64_t[]){3, 4, 1, 1, 70, 64}, "page_size=16 stages=2", lens3);
    run_case("sm_90a", (const uint64_t[]){3, 16, 1, 1, 70, 128}, "page_size=16 stages=2 kv_path=atom", lens3);
    run_case("sm_80", (const uint64_t[]){3, 32, 1, 1, 90, 64}, "page_size=32 stages=4 kv_splits=2", lens3);
    /* D 256 with 16-row atoms: Q's fragments re-read from LDS at each step */
    run_case("sm_90a", (const uint64_t[]){2, 16, 1, 1, 40, 256}, "page_size=16 stages=2 kv_path=atom", NULL);
    run_case("gfx942", (const uint64_t[]){3, 16, 1, 1, 70, 64}, "page_size=16 stages=2 kv_path=atom", lens3);
}

/* The heuristic's stages (3 with cp.async, 1 on AMD) and the refusals. */
static void test_ring_choice(void **state) {
    (void)state;
    rk_instance in;
    rk_shape sh;
    decode_instance("sm_90", (const uint64_t[]){2, 4, 1, 1, 64, 128}, "page_size=16", &in, &sh);
    assert_int_equal(in.u.attn.stages, 3);
    decode_instance("sm_90a", (const uint64_t[]){2, 16, 1, 1, 64, 128}, "page_size=16", &in, &sh);
    assert_int_equal(in.u.attn.stages, 3);
    assert_int_equal(in.u.attn.kv_path, RK_ATTN_PATH_ATOM);
    decode_instance("gfx942", (const uint64_t[]){2, 4, 1, 1, 64, 128}, "page_size=16", &in, &sh);
    assert_int_equal(in.u.attn.stages, 1);
    decode_instance("sm_90", (const uint64_t[]){2, 16, 1, 1, 64, 128}, "page_size=16 kv_path=valu", &in, &sh);
    assert_int_equal(in.u.attn.stages, 1);   /* 16 rows on the lanes: no ring */
    const rk_target *amd = rk_target_find("gfx942");
    decode_instance("gfx942", (const uint64_t[]){2, 16, 1, 1, 64, 128}, "page_size=16 kv_path=atom stages=4", &in, &sh);
    assert_int_not_equal(rk_instance_validate(&in, amd), RK_OK);
    assert_non_null(strstr(rk_error_message(), "stages = 4"));
    assert_non_null(strstr(rk_error_message(), "fewer stages"));
    decode_instance("gfx942", (const uint64_t[]){2, 4, 1, 1, 64, 128}, "page_size=16 stages=4", &in, &sh);
    assert_int_not_equal(rk_instance_validate(&in, amd), RK_OK);   /* 4 x 16 KB and the merge: over 64 KB */
    assert_non_null(strstr(rk_error_message(), "fewer stages"));
    decode_instance("gfx942", (const uint64_t[]){2, 4, 1, 1, 64, 128}, "page_size=16 stages=3", &in, &sh);
    assert_int_equal(rk_instance_validate(&in, amd), RK_OK);
    assert_int_not_equal(rk_instance_set(&in, "stages", "5", NULL), RK_OK);
    assert_non_null(strstr(rk_error_message(), "4"));
}

static uint32_t splits_for(const char *target, const uint64_t ext[6]) {
    rk_instance in;
    rk_shape sh;
    decode_instance(target, ext, "", &in, &sh);
    assert_int_equal(rk_instance_validate(&in, rk_target_find(target)), RK_OK);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    return in.u.attn.kv_splits;
}

/* A run may use fewer splits than the instance has (blocks past them leave
 * at once, the merge reads only theirs), 3 of 4 too; the choice per batch:
 * a lone long sequence among short ones takes every split, a batch of
 * equal ones fewer, short ones none. */
static void test_run_splits(void **state) {
    (void)state;
    const int32_t lens[4] = {70, 3, 45, 66};
    for (uint32_t n = 1; n <= 3; n++) {
        run_splits = n;
        run_case(n == 2 ? "gfx942" : "sm_90", (const uint64_t[]){4, 8, 2, 2, 70, 64}, "page_size=16 kv_splits=4",
                 lens);
    }
    run_splits = 0;
    const rk_target *t = rk_target_find("sm_90");
    rk_instance in;
    rk_shape sh;
    decode_instance("sm_90", (const uint64_t[]){64, 32, 8, 1, 32768, 128}, "page_size=16", &in, &sh);
    assert_true(in.u.attn.kv_splits >= 4);
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, &sh, seed), RK_OK);
    int32_t *l = lens_of(&p);
    uint32_t equal, mixed;
    for (int b = 0; b < 64; b++) l[b] = 32768;
    assert_int_equal(rk_problem_attention_splits(&p, t, &equal), RK_OK);
    for (int b = 1; b < 64; b++) l[b] = 100;
    assert_int_equal(rk_problem_attention_splits(&p, t, &mixed), RK_OK);
    assert_true(equal >= 1 && equal < mixed);
    assert_int_equal(mixed, in.u.attn.kv_splits);
    rk_problem_free(&p);
    decode_instance("sm_90", (const uint64_t[]){256, 32, 8, 1, 512, 128}, "page_size=16", &in, &sh);
    assert_int_equal(rk_problem_init(&p, &in, &sh, seed), RK_OK);
    assert_int_equal(rk_problem_attention_splits(&p, t, &equal), RK_OK);
    assert_int_equal(equal, 1);
    rk_problem_free(&p);
}

/* One long sequence spreads over the GPU, 256 short ones stay one block
 * per (sequence, KV head); the rows follow (Hq / Hkv) * Sq. */
static void test_heuristic(void **state) {
    (void)state;
    for (int t = 0; t < 2; t++) {
        uint32_t one = splits_for(targets[t], (const uint64_t[]){1, 32, 8, 1, 32768, 128});
        uint32_t many = splits_for(targets[t], (const uint64_t[]){256, 32, 8, 1, 512, 128});
        const rk_target *tg = rk_target_find(targets[t]);
        assert_true(8ull * one >= tg->compute_units);
        assert_true(many <= 2);   /* the most a run may use; a batch of them takes 1 (test_run_splits) */
        assert_int_equal(splits_for(targets[t], (const uint64_t[]){1, 32, 8, 1, 300, 128}), 1);
    }
    rk_instance in;
    rk_shape sh;
    decode_instance("sm_90", (const uint64_t[]){2, 32, 8, 3, 512, 128}, "", &in, &sh);
    assert_int_equal(in.u.attn.kv_rows, 16);
    decode_instance("sm_90", (const uint64_t[]){2, 32, 8, 6, 512, 128}, "", &in, &sh);
    assert_int_equal(in.u.attn.kv_rows, 32);
    decode_instance("sm_90", (const uint64_t[]){2, 32, 32, 1, 512, 128}, "", &in, &sh);
    assert_int_equal(in.u.attn.kv_rows, 1);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("test_attention_decode: seed = %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paged_lengths), cmocka_unit_test(test_paged_mixed), cmocka_unit_test(test_fp8),
        cmocka_unit_test(test_masks),         cmocka_unit_test(test_atom_rows),   cmocka_unit_test(test_atom_choice),
        cmocka_unit_test(test_bad_page),      cmocka_unit_test(test_bad_input),   cmocka_unit_test(test_heuristic), cmocka_unit_test(test_run_splits),
        cmocka_unit_test(test_ring_stages),   cmocka_unit_test(test_ring_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
