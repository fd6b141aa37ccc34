/* rocke tests — attention decode (mode = decode) on the emulator, the atom
 * path and the cp.async ring: rows as the atom's M (16, 24, 32, 64; padded
 * and masked), paged and contiguous, split and unsplit, mma.sync and MFMA,
 * fp8 caches; the ring's stages 1..4 and D 256; the heuristic's choices and
 * the refusals. Fresh random data; ROCKE_SEED=N replays. Layer: tests. */
#include <time.h>

#include "../support/decode_cases.h"

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

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("test_attention_decode_atoms: seed = %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atom_rows),   cmocka_unit_test(test_atom_choice),
        cmocka_unit_test(test_ring_stages), cmocka_unit_test(test_ring_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
