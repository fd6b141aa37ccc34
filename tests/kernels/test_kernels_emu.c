/* rocke tests — every kernel family x dtype x target (gfx942, gfx950,
 * sm_90) run on the CPU emulator against the double host reference at odd
 * sizes: rows not a multiple of the vector width, one row, one column, rows
 * long enough for the looped (two-pass) paths, fused residual and stats.
 * Fresh random data each run; the seed is printed (ROCKE_SEED=N replays). */
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

static const char *const targets[] = {"gfx942", "gfx950", "sm_90"};
static const char *const dtypes[] = {"f16", "bf16", "f32"};
static uint64_t seed;
static unsigned runs;

/* Build `fam` for target with knobs "k=v ..." tuned for M x N, run it on the
 * emulator and check every output. */
static void run_case(const char *fam, const char *target, uint64_t M, uint64_t N, const char *knobs) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_family_id f;
    assert_int_equal(rk_family_parse(fam, &f), RK_OK);
    rk_instance in;
    rk_instance_default(f, &in);
    uint64_t locked = 0;
    if (problem_knobs_set(&in, knobs, &locked)) fail_msg("%s: %s", knobs, rk_error_message());
    /* M x N positionally: elementwise (one dimension) takes M*N elements */
    const uint64_t ext[2] = {M, N};
    rk_shape sh;
    assert_int_equal(rk_shape_default(f, &sh), RK_OK);
    assert_int_equal(rk_shape_update(f, &sh, NULL, ext, 2, false), RK_OK);
    assert_int_equal(rk_instance_tune(&in, t, &sh, locked), RK_OK);
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    if (rk_instance_check_shape(&in, &sh)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    if (problem_emu_launch(t, k, &p, &sh))
        fail_msg("%s %s %llux%llu: launch: %s", target, name, (unsigned long long)M, (unsigned long long)N,
                 rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad)
        fail_msg("%s %s %llux%llu seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target, name,
                 (unsigned long long)M, (unsigned long long)N, (unsigned long long)s, (unsigned long long)c.bad,
                 (unsigned long long)c.total, c.max_abs_diff, c.first_bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static void each(const char *fam, uint64_t M, uint64_t N, const char *knobs) {
    for (size_t t = 0; t < 3; t++)
        for (size_t d = 0; d < 3; d++) {
            char kn[256];
            snprintf(kn, sizeof kn, "dtype=%s %s", dtypes[d], knobs);
            run_case(fam, targets[t], M, N, kn);
        }
}

static void test_elementwise(void **state) {
    (void)state;
    static const char *const ops[] = {"add", "sub", "mul", "div", "max", "min", "copy", "neg", "abs",
                                      "relu", "silu", "gelu_tanh", "exp2"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        char kn[64];
        snprintf(kn, sizeof kn, "op=%s", ops[i]);
        each("elementwise", 1, 1, kn);
        each("elementwise", 1, 1001, kn);          /* not a multiple of any vector width */
    }
    each("elementwise", 1, 70001, "op=add block_size=64");   /* several grid-stride tiles, tail */
    each("elementwise", 1, 333, "op=gelu_tanh out_dtype=f32");
    each("elementwise", 1, 333, "op=copy out_dtype=bf16");
    each("elementwise", 1, 5000, "op=mul tail=masked unroll=2 vec=2");
    each("elementwise", 1, 5000, "op=sub tail=buffer");
}

static void test_reduce(void **state) {
    (void)state;
    static const char *const ops[] = {"sum", "max", "mean"};
    for (size_t i = 0; i < 3; i++) {
        char kn[64];
        snprintf(kn, sizeof kn, "op=%s", ops[i]);
        each("reduce", 1, 1, kn);
        each("reduce", 7, 1001, kn);
        strcat(kn, " chunks=0 unroll=2");
        each("reduce", 3, 4099, kn);                /* looped */
    }
    each("reduce", 5, 300, "op=sum out_dtype=f32");
    each("reduce", 600, 3, "op=mean");              /* many rows per block */
}

static void test_softmax(void **state) {
    (void)state;
    each("softmax", 1, 1, "");
    each("softmax", 1, 7, "");
    each("softmax", 3, 1001, "");
    each("softmax", 300, 5, "");
    each("softmax", 2, 3001, "chunks=0 unroll=2");  /* online two-pass */
    each("softmax", 1, 70001, "");                  /* longer than any cached row: the heuristic loops */
    each("softmax", 2, 777, "out_dtype=f32 tail=masked");
    each("softmax", 2, 20000, "");                  /* cached, 1024 threads a row: shuffle-folded partials */
    each("softmax", 3, 1001, "vec=1");              /* scalar chunks: the negated second conversion */
    each("softmax", 2, 99, "block_size=64 rows_per_block=1 chunks=4 min_blocks_per_sm=2");  /* empty chunks */
    /* exps kept in f32 (the NVIDIA pick up to 16 elements a thread) and recomputed, on every target */
    each("softmax", 3, 1001, "keep_exps=true");
    each("softmax", 3, 1001, "keep_exps=false");
    each("softmax", 300, 5, "keep_exps=true");                   /* rows narrower than a wave */
    each("softmax", 2, 20000, "keep_exps=true");                 /* 1024 threads: rescaled partials */
    each("softmax", 3, 1001, "vec=1 keep_exps=true");
    each("softmax", 2, 99, "block_size=64 rows_per_block=1 chunks=4 keep_exps=true");  /* all-padding threads */
    each("softmax", 5, 2001, "block_size=512 rows_per_block=1 chunks=1 keep_exps=true");
}

static void test_norms(void **state) {
    (void)state;
    const char *fams[] = {"layernorm", "rmsnorm"};
    for (int f = 0; f < 2; f++) {
        each(fams[f], 1, 1, "");
        each(fams[f], 3, 1001, "residual=true save_stats=true");
        each(fams[f], 2, 3001, "chunks=0 residual=true save_stats=true unroll=2");
        each(fams[f], 200, 9, "");
        each(fams[f], 2, 515, "out_dtype=f32 vec=2 tail=masked");
        each(fams[f], 2, 20001, "residual=true save_stats=true");   /* cached, 1024 threads, tails */
        each(fams[f], 3, 1001, "vec=1 residual=true");
        each(fams[f], 2, 99, "block_size=64 rows_per_block=1 chunks=4 save_stats=true");  /* empty chunks */
    }
}

/* Split views (a peeled head per row, issue 15): odd row lengths whose rows
 * start at every element modulo the vector width, one row, a vocabulary-size
 * row (looped), cached rows whose shifted row would not fit (those rows fall
 * back unshifted: the capacity is N rounded up to vec) and the split forced
 * on at a multiple of vec. */
static void test_split_rows(void **state) {
    (void)state;
    const char *fams[] = {"reduce", "softmax", "layernorm", "rmsnorm"};
    const char *extra[] = {"op=sum", "", "residual=true save_stats=true", "residual=true save_stats=true"};
    for (int f = 0; f < 4; f++) {
        char kn[160];
        each(fams[f], 4, 3, extra[f]);
        each(fams[f], 9, 63, extra[f]);
        each(fams[f], 2, 4097, extra[f]);
        each(fams[f], 1, 50257, extra[f]);
        /* capacity 1024 elements (128 x 8 f16, 256 x 4 f32): rows shifted by 2 or more overflow it */
        for (size_t t = 0; t < 3; t++)
            for (size_t d = 0; d < 3; d++) {
                bool wide = d == 2;
                snprintf(kn, sizeof kn, "dtype=%s %s block_size=%d rows_per_block=1 chunks=1 split=true", dtypes[d],
                         extra[f], wide ? 256 : 128);
                run_case(fams[f], targets[t], 8, 1023, kn);
            }
        snprintf(kn, sizeof kn, "%s chunks=0 unroll=2 split=true", extra[f]);
        each(fams[f], 3, 64, kn);
    }
}

static void test_transpose(void **state) {
    (void)state;
    each("transpose", 1, 1, "");
    each("transpose", 3, 5, "");
    each("transpose", 65, 130, "");
    each("transpose", 70, 33, "tile_m=32 tile_n=16 block_size=64 lds_pad=0");
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("test_kernels_emu: seed = %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise), cmocka_unit_test(test_reduce), cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_norms),       cmocka_unit_test(test_transpose), cmocka_unit_test(test_split_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
