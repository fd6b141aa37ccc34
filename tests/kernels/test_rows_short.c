/* rocke tests — very short rows (C <= 64): the heuristic packs several rows
 * into a wave (one vector per lane, butterflies of the row's width) and the
 * results match the double reference for softmax, layernorm, rmsnorm and
 * reduce at C = 1, 3, 17, 64 on a wave64 and a warp32 target, tuned and
 * with forced geometries, aligned and offset bases. ROCKE_SEED=N replays. */
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

#define COUNT(a) (sizeof(a) / sizeof *(a))

static uint64_t seed;
static unsigned runs;

static uint32_t knob_u32(const rk_instance *in, const char *name) {
    char v[32];
    assert_int_equal(rk_instance_get(in, name, v, sizeof v), RK_OK);
    return (uint32_t)strtoul(v, NULL, 10);
}

/* Tune fam for M x C (knobs locked), check the row geometry when `packed`
 * (rows narrower than a wave), run with every tensor `off` elements into
 * its buffer, compare with the reference. */
static void run_short(const char *fam, const char *target, uint64_t M, uint64_t C, const char *knobs, bool packed,
                      uint32_t off) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance in;
    rk_shape sh;
    const uint64_t ext[2] = {M, C};
    if (problem_tuned(fam, t, ext, 2, knobs, &in, &sh)) fail_msg("%s %s: %s", fam, knobs, rk_error_message());
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    uint32_t tpr = knob_u32(&in, "block_size") / knob_u32(&in, "rows_per_block"), vec = knob_u32(&in, "vec");
    /* one vector per lane: the row (with its head) in tpr lanes, no lane idle */
    char split[8];
    assert_int_equal(rk_instance_get(&in, "split", split, sizeof split), RK_OK);
    uint64_t span = C + (strcmp(split, "true") == 0 ? vec - 1 : 0), lanes = (span + vec - 1) / vec;
    /* a span (stage=span: rows read from LDS) packs rows as well: tpr lanes
     * of ceil(C / tpr) elements each */
    char stage[16] = "direct";
    if (rk_instance_get(&in, "stage", stage, sizeof stage) != RK_OK) strcpy(stage, "direct");
    bool staged = !strcmp(stage, "span");
    uint32_t per = (uint32_t)((C + tpr - 1) / tpr);
    if (packed && staged && (tpr >= t->wave_size || knob_u32(&in, "chunks") != per))
        fail_msg("%s %s: C=%llu spans %u threads per row (wave %u)", target, name, (unsigned long long)C, tpr,
                 t->wave_size);
    if (packed && !staged &&
        (tpr >= t->wave_size || tpr < lanes || tpr >= 2 * lanes || knob_u32(&in, "chunks") != 1))
        fail_msg("%s %s: C=%llu packs %u threads per row (wave %u)", target, name, (unsigned long long)C, tpr,
                 t->wave_size);
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    rk_status st = off ? problem_emu_launch_offset(t, k, &p, &sh, off) : problem_emu_launch(t, k, &p, &sh);
    if (st)
        fail_msg("%s %s %llux%llu: %s", target, name, (unsigned long long)M, (unsigned long long)C,
                 rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad)
        fail_msg("%s %s %llux%llu offset %u seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target, name,
                 (unsigned long long)M, (unsigned long long)C, off, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff, c.first_bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static const char *const targets[] = {"gfx942", "sm_90"};
static const char *const fams[] = {"softmax", "layernorm", "rmsnorm", "reduce", "reduce"};
static const char *const extra[] = {"", "residual=true save_stats=true", "residual=true save_stats=true", "op=sum",
                                    "op=max"};
static const uint64_t widths[] = {1, 3, 17, 64};

static void each(uint64_t M, const char *dtype, const char *knobs, bool packed, uint32_t off) {
    for (size_t f = 0; f < COUNT(fams); f++)
        for (size_t t = 0; t < COUNT(targets); t++)
            for (size_t w = 0; w < COUNT(widths); w++) {
                char kn[256];
                snprintf(kn, sizeof kn, "dtype=%s %s %s", dtype, extra[f], knobs);
                run_short(fams[f], targets[t], M, widths[w], kn, packed, off);
            }
}

/* The heuristic's geometry: several rows per wave, one vector per lane. */
static void test_tuned_packs_rows(void **state) {
    (void)state;
    each(301, "bf16", "", true, 0);
    each(37, "f16", "", true, 0);
    each(5, "f32", "", true, 0);
    each(1, "bf16", "", true, 0);
}

/* Forced geometries: 4 and 16 lanes per row, two chunks, rows past M in the
 * last block; split views off and on. */
static void test_forced_geometry(void **state) {
    (void)state;
    each(45, "bf16", "block_size=64 rows_per_block=16 chunks=2 split=false", false, 0);
    each(45, "f16", "block_size=64 rows_per_block=16 chunks=2 split=true", false, 0);
    each(19, "f32", "block_size=64 rows_per_block=4 chunks=1 vec=4", false, 0);
}

/* Short rows of tensors that start inside a vector. */
static void test_offset_bases(void **state) {
    (void)state;
    each(33, "bf16", "split=true", true, 3);
    each(9, "f32", "split=true", false, 1);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_rows_short: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tuned_packs_rows),
        cmocka_unit_test(test_forced_geometry),
        cmocka_unit_test(test_offset_bases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
