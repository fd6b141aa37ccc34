/* rocke tests — kv_append on the emulator against the double reference:
 * odd token counts, random distinct slots with negatives (skipped tokens),
 * page sizes 16 and 128, D 64 and 128, Hq / Hkv 1 and 4, rope none / neox /
 * gptj, bf16/f16/f32 and e4m3 caches, NVIDIA and AMD targets; an
 * out-of-range slot caught by the input check and by the emulator; bad
 * knobs and shapes; the vector heuristic. Fresh seed, ROCKE_SEED=N replays. */
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

static const int64_t *slots_of(const rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, "slot_mapping")) return p->buf[i].data;
    fail_msg("no slot_mapping");
    return NULL;
}

/* ext = (T, Hq, Hkv, D, pages, page_size); the case is tuned, built, run and checked. */
static void run_case(const char *target, const uint64_t ext[6], const char *knobs) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance in;
    rk_shape sh;
    rk_kernel *k;
    char name[256];
    if (problem_emu_build(RK_FAMILY_KV_APPEND, t, ext, 6, knobs, &in, &sh, &k, name, sizeof name))
        fail_msg("%s %s: %s", target, knobs, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    assert_int_equal(rk_problem_check_inputs(&p), RK_OK);
    /* the draw: distinct slots inside the cache or negative */
    const int64_t *slot = slots_of(&p);
    uint64_t cap = ext[4] * ext[5];
    for (uint64_t i = 0; i < ext[0]; i++) {
        assert_true(slot[i] < (int64_t)cap);
        for (uint64_t j = 0; j < i; j++) assert_true(slot[i] < 0 || slot[i] != slot[j]);
    }
    rk_problem_diff c;
    if (problem_emu_verify(t, k, &p, &sh, &c)) fail_msg("%s %s: launch: %s", target, name, rk_error_message());
    if (c.bad)
        fail_msg("%s %s seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target, name, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff, c.first_bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static void copy_only(void **state) {
    (void)state;
    run_case("sm_90", (const uint64_t[]){7, 4, 4, 64, 3, 16}, "dtype=bf16");
    run_case("gfx942", (const uint64_t[]){13, 1, 1, 128, 1, 128}, "dtype=f16");
    run_case("gfx950", (const uint64_t[]){5, 4, 1, 64, 2, 16}, "dtype=f32");
    run_case("sm_90", (const uint64_t[]){9, 1, 4, 128, 2, 16}, "dtype=bf16 vec=2 block_size=64");
}

static void with_rope(void **state) {
    (void)state;
    run_case("sm_90", (const uint64_t[]){7, 4, 4, 64, 3, 16}, "rope=neox");
    run_case("gfx942", (const uint64_t[]){11, 4, 1, 128, 1, 128}, "rope=gptj");
    run_case("gfx942", (const uint64_t[]){5, 1, 1, 64, 2, 16}, "rope=neox dtype=f16");
    run_case("sm_90", (const uint64_t[]){3, 4, 4, 128, 1, 16}, "rope=gptj dtype=f32");
}

static void fp8_caches(void **state) {
    (void)state;
    run_case("sm_90", (const uint64_t[]){9, 4, 4, 128, 1, 16}, "kv_dtype=fp8");
    run_case("gfx942", (const uint64_t[]){7, 4, 1, 64, 1, 128}, "kv_dtype=fp8fnuz rope=neox");
    run_case("gfx950", (const uint64_t[]){5, 1, 4, 64, 2, 16}, "kv_dtype=fp8 rope=gptj");
    run_case("sm_90", (const uint64_t[]){15, 4, 1, 128, 1, 128}, "kv_dtype=fp8 rope=neox dtype=f16");
}

/* A slot past the cache: rk_problem_check_inputs names the token, and the
 * emulator stops at the store instead of writing past the cache. */
static void bad_slot(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90");
    rk_instance in;
    rk_shape sh;
    rk_kernel *k;
    char name[256];
    assert_int_equal(problem_emu_build(RK_FAMILY_KV_APPEND, t, (const uint64_t[]){5, 1, 1, 64, 2, 16}, 6, "",
                                       &in, &sh, &k, name, sizeof name), RK_OK);
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, &sh, seed), RK_OK);
    int64_t *slot = (int64_t *)slots_of(&p);
    slot[3] = 32 + 4096;   /* 2 pages of 16 slots */
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    assert_non_null(strstr(rk_error_message(), "token 3"));
    assert_non_null(strstr(rk_error_message(), "32 slots"));
    assert_int_not_equal(problem_emu_launch(t, k, &p, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "out-of-bounds global"));
    slot[3] = 32;   /* one past the end */
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    slot[3] = -7;   /* negative: skipped, legal */
    assert_int_equal(rk_problem_check_inputs(&p), RK_OK);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static void expect_fail(const char *target, const uint64_t ext[6], const char *knobs, const char *msg) {
    rk_instance in;
    rk_shape sh;
    rk_kernel *k = NULL;
    char name[256];
    assert_int_not_equal(problem_emu_build(RK_FAMILY_KV_APPEND, rk_target_find(target), ext, 6, knobs, &in, &sh,
                                           &k, name, sizeof name), RK_OK);
    if (!strstr(rk_error_message(), msg)) fail_msg("%s: got '%s', want '%s'", knobs, rk_error_message(), msg);
}

static void bad_specs(void **state) {
    (void)state;
    const uint64_t ok[6] = {4, 2, 2, 64, 2, 16};
    expect_fail("gfx942", ok, "kv_dtype=fp8", "legal on gfx942: same, fp8fnuz");
    expect_fail("sm_90", ok, "kv_dtype=fp8fnuz", "legal on sm_90: same, fp8");
    expect_fail("gfx90a", ok, "kv_dtype=fp8", "legal on gfx90a: same");
    expect_fail("sm_90", ok, "dtype=f32 vec=8", "knob 'vec' = 8");
    expect_fail("sm_90", ok, "rope=gptj vec=8", "at most 4");
    expect_fail("sm_90", (const uint64_t[]){4, 2, 2, 36, 2, 16}, "vec=8", "D (36) must be a multiple of 8");
    expect_fail("sm_90", (const uint64_t[]){4, 2, 2, 36, 2, 16}, "rope=neox vec=4", "D (36) must be a multiple of 8");
}

static void heuristic(void **state) {
    (void)state;
    rk_instance in;
    rk_shape sh;
    const rk_target *t = rk_target_find("sm_90");
    assert_int_equal(problem_tuned("kv_append", t, (const uint64_t[]){64, 8, 8, 128, 64, 16}, 6, "", &in, &sh),
                     RK_OK);
    assert_int_equal(in.u.kva.vec, 8);   /* 16 bytes of bf16 */
    assert_int_equal(problem_tuned("kv_append", t, (const uint64_t[]){64, 8, 8, 128, 64, 16}, 6, "rope=neox", &in,
                                   &sh), RK_OK);
    assert_int_equal(in.u.kva.vec, 4);   /* 4 f32 of cos */
    assert_int_equal(problem_tuned("kv_append", t, (const uint64_t[]){64, 8, 8, 36, 64, 16}, 6, "dtype=f32", &in,
                                   &sh), RK_OK);
    assert_int_equal(in.u.kva.vec, 4);
    assert_int_equal(problem_tuned("kv_append", t, (const uint64_t[]){64, 8, 8, 36, 64, 16}, 6, "rope=gptj", &in,
                                   &sh), RK_OK);
    assert_int_equal(in.u.kva.vec, 2);   /* 36 = 2 x 18: pairs of 2 keep heads aligned */
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("test_kv_append: seed = %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_only), cmocka_unit_test(with_rope), cmocka_unit_test(fp8_caches),
        cmocka_unit_test(bad_slot),  cmocka_unit_test(bad_specs), cmocka_unit_test(heuristic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
