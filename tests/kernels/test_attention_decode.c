/* rocke tests — attention decode (mode = decode) on the emulator against
 * the double reference over the gathered cache: random page permutations,
 * context lengths 1, page_size - 1, page_size + 1 and mixed, GQA ratios 1
 * and 4, Sq 1 and 3, split and unsplit, paged and contiguous caches, the
 * masks, fp8 (e4m3) caches, NVIDIA and AMD targets (the atom path and the
 * cp.async ring: test_attention_decode_atoms.c); the out-of-range page id caught by
 * the input check and by the emulator, the bad specs and shapes, the split
 * heuristic. Fresh random data; ROCKE_SEED=N replays. */
#include <time.h>

#include "../support/decode_cases.h"

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
    /* the heuristic's most splits at one long context (the instance alone: no cache is allocated) */
    decode_instance("sm_90", (const uint64_t[]){64, 32, 8, 1, 32768, 128}, "page_size=16", &in, &sh);
    assert_true(in.u.attn.kv_splits >= 4);
    /* the run's choice from the lengths: a lone long context splits further than 16 equal ones (the choice
     * reads the lengths, B, Hkv and the page size; D 64 keeps the cache small) */
    decode_instance("sm_90", (const uint64_t[]){16, 8, 8, 1, 4096, 64}, "page_size=16 kv_splits=16", &in, &sh);
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, &sh, seed), RK_OK);
    int32_t *l = lens_of(&p);
    uint32_t equal, mixed;
    for (int b = 0; b < 16; b++) l[b] = 4096;
    assert_int_equal(rk_problem_attention_splits(&p, t, &equal), RK_OK);
    for (int b = 1; b < 16; b++) l[b] = 100;
    assert_int_equal(rk_problem_attention_splits(&p, t, &mixed), RK_OK);
    assert_true(equal >= 1 && equal < mixed);
    assert_true(mixed >= 4 && mixed <= in.u.attn.kv_splits);
    rk_problem_free(&p);
    decode_instance("sm_90", (const uint64_t[]){256, 8, 8, 1, 512, 64}, "page_size=16", &in, &sh);
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
        cmocka_unit_test(test_masks),         cmocka_unit_test(test_bad_page),    cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_heuristic),     cmocka_unit_test(test_run_splits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
