/* rocke tests — the span stage of the row kernels (stage=span: softmax,
 * layernorm, rmsnorm, reduce): a block's rows staged through LDS as one span with
 * aligned 16-byte accesses. Odd
 * row lengths (1 .. 4097), one row and a prime number of rows, 1, 2 and 4
 * rows a block, every dtype, tensors 1 and 3 elements into their buffers
 * (the emulator fails a misaligned vector access), on a wave32 and a
 * wave64 target, against the double reference; a kernel run at shapes
 * other than its own; the heuristic's picks; bad knobs. ROCKE_SEED=N
 * replays. */
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

/* Run k (built from in) at M x N with every tensor `off` elements past an
 * aligned address, check against the reference. */
static void run_at(const rk_target *t, const rk_instance *in, rk_kernel *k, const char *name, uint64_t M, uint64_t N,
                   uint32_t off) {
    rk_shape sh;
    const uint64_t ext[2] = {M, N};
    assert_int_equal(rk_shape_default(in->family, &sh), RK_OK);
    assert_int_equal(rk_shape_update(in->family, &sh, NULL, ext, 2, false), RK_OK);
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    if (rk_problem_init(&p, in, &sh, s)) fail_msg("%s %llux%llu: %s", name, (unsigned long long)M,
                                                  (unsigned long long)N, rk_error_message());
    if (problem_emu_launch_offset(t, k, &p, &sh, off))
        fail_msg("%s %s %llux%llu offset %u: %s", t->name, name, (unsigned long long)M, (unsigned long long)N, off,
                 rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad)
        fail_msg("%s %s %llux%llu offset %u seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", t->name, name,
                 (unsigned long long)M, (unsigned long long)N, off, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff, c.first_bad);
    rk_problem_free(&p);
}

/* fam with stage=span and `knobs` locked, tuned at M x N; rows_per_block R
 * halves while the spans do not fit the target's LDS (the validator's
 * refusal, checked by test_bad_knobs). Returns the R used. */
static uint32_t build_span(const char *fam, const rk_target *t, uint64_t M, uint64_t N, const char *knobs, uint32_t R,
                           rk_instance *in, rk_kernel **k, char *name, size_t n) {
    for (;; R /= 2) {
        char kn[256];
        rk_shape sh;
        const uint64_t ext[2] = {M, N};
        snprintf(kn, sizeof kn, "stage=span rows_per_block=%u %s", R, knobs);
        rk_status st = problem_tuned(fam, t, ext, 2, kn, in, &sh);
        if (!st) st = rk_instance_validate(in, t);
        if (!st) st = rk_instance_check_shape(in, &sh);
        if (st && R > 1 && strstr(rk_error_message(), "bytes of LDS")) continue;
        if (st) fail_msg("%s %s %s at %llux%llu: %s", t->name, fam, kn, (unsigned long long)M, (unsigned long long)N,
                         rk_error_message());
        assert_int_equal(rk_instance_name(in, name, n), RK_OK);
        assert_non_null(strstr(name, "_sgspan"));
        if (rk_instance_build(in, t, k)) fail_msg("%s %s: %s", t->name, name, rk_error_message());
        return R;
    }
}

static const char *const targets[] = {"sm_90", "gfx942"};
static const char *const dtypes[] = {"bf16", "f16", "f32"};

/* Every odd length on both targets in every dtype; rows a block, row
 * count and offset rotate so each length meets each of them. */
static void each_length(const char *fam, const char *extra) {
    const uint64_t Ns[] = {1, 3, 17, 127, 2047, 4097};
    const uint64_t Ms[] = {1, 7};
    const uint32_t Rs[] = {1, 2, 4}, offs[] = {1, 3};
    for (size_t it = 0; it < COUNT(targets); it++) {
        const rk_target *t = rk_target_find(targets[it]);
        assert_non_null(t);
        for (size_t in_ = 0; in_ < COUNT(Ns); in_++)
            for (size_t id = 0; id < COUNT(dtypes); id++) {
                size_t r = in_ + id + it;
                char kn[160], name[256];
                snprintf(kn, sizeof kn, "dtype=%s %s", dtypes[id], extra);
                rk_instance in;
                rk_kernel *k = NULL;
                uint64_t M = Ms[r % 2];
                build_span(fam, t, M, Ns[in_], kn, Rs[r % 3], &in, &k, name, sizeof name);
                run_at(t, &in, k, name, M, Ns[in_], offs[(r / 2) % 2]);
                rk_kernel_free(k);
            }
    }
}

static void test_softmax_lengths(void **state) {
    (void)state;
    each_length("softmax", "");
}

static void test_layernorm_lengths(void **state) {
    (void)state;
    each_length("layernorm", "");
}

static void test_rmsnorm_lengths(void **state) {
    (void)state;
    each_length("rmsnorm", "");
}

static void test_reduce_lengths(void **state) {
    (void)state;
    each_length("reduce", "op=sum");
    /* max and mean at a few lengths */
    const char *const ops[] = {"op=max", "op=mean"};
    const uint64_t Ns[] = {3, 2047};
    for (size_t o = 0; o < COUNT(ops); o++)
        for (size_t it = 0; it < COUNT(targets); it++)
            for (size_t i = 0; i < COUNT(Ns); i++) {
                const rk_target *t = rk_target_find(targets[it]);
                rk_instance in;
                rk_kernel *k = NULL;
                char name[256], kn[64];
                snprintf(kn, sizeof kn, "dtype=%s %s", dtypes[(o + i) % 3], ops[o]);
                build_span("reduce", t, 7, Ns[i], kn, 2, &in, &k, name, sizeof name);
                run_at(t, &in, k, name, 7, Ns[i], 3);
                rk_kernel_free(k);
            }
}

/* The fused residual (h through its own span) and the statistics. */
static void test_norms_residual(void **state) {
    (void)state;
    const char *const fams[] = {"layernorm", "rmsnorm"};
    const uint64_t shapes[][2] = {{7, 127}, {1, 2047}, {13, 3}};
    for (size_t f = 0; f < COUNT(fams); f++)
        for (size_t it = 0; it < COUNT(targets); it++)
            for (size_t i = 0; i < COUNT(shapes); i++) {
                const rk_target *t = rk_target_find(targets[it]);
                rk_instance in;
                rk_kernel *k = NULL;
                char name[256], kn[128];
                snprintf(kn, sizeof kn, "dtype=%s residual=true save_stats=true", dtypes[(i + it) % 3]);
                build_span(fams[f], t, shapes[i][0], shapes[i][1], kn, (uint32_t)(1u << i), &in, &k, name, sizeof name);
                run_at(t, &in, k, name, shapes[i][0], shapes[i][1], (uint32_t)(1 + 2 * (i % 2)));
                rk_kernel_free(k);
            }
}

/* A mixed output type: the output's span has its own vectors and head. */
static void test_softmax_out_dtype(void **state) {
    (void)state;
    for (size_t it = 0; it < COUNT(targets); it++) {
        const rk_target *t = rk_target_find(targets[it]);
        rk_instance in;
        rk_kernel *k = NULL;
        char name[256];
        build_span("softmax", t, 5, 333, "dtype=bf16 out_dtype=f32", 2, &in, &k, name, sizeof name);
        run_at(t, &in, k, name, 5, 333, 3);
        rk_kernel_free(k);
        build_span("layernorm", t, 3, 1001, "dtype=f32 out_dtype=bf16", 1, &in, &k, name, sizeof name);
        run_at(t, &in, k, name, 3, 1001, 1);
        rk_kernel_free(k);
    }
}

/* Built for one shape, run at others: shorter rows, a multiple of vec,
 * rows up to the kernel's capacity, more and fewer rows. */
static void test_other_shapes(void **state) {
    (void)state;
    for (size_t it = 0; it < COUNT(targets); it++) {
        const rk_target *t = rk_target_find(targets[it]);
        rk_instance in;
        rk_kernel *k = NULL;
        char name[256];
        uint32_t R = build_span("softmax", t, 64, 127, "dtype=bf16", 4, &in, &k, name, sizeof name);
        assert_int_equal(R, 4);
        const uint64_t shapes[][2] = {{9, 100}, {3, 64}, {13, 128}, {1, 5}, {11, 127}};
        for (size_t i = 0; i < COUNT(shapes); i++) run_at(t, &in, k, name, shapes[i][0], shapes[i][1], (uint32_t)i % 4);
        /* past the capacity: refused, naming it */
        rk_shape sh;
        const uint64_t ext[2] = {4, 4097};
        assert_int_equal(rk_shape_default(in.family, &sh), RK_OK);
        assert_int_equal(rk_shape_update(in.family, &sh, NULL, ext, 2, false), RK_OK);
        assert_int_not_equal(rk_instance_check_shape(&in, &sh), RK_OK);
        assert_non_null(strstr(rk_error_message(), "capacity"));
        rk_kernel_free(k);
    }
}

/* The heuristic's name at M x N for fam on target. */
static void pick(const char *fam, const char *target, uint64_t M, uint64_t N, const char *knobs, char *name,
                 size_t n) {
    const rk_target *t = rk_target_find(target);
    rk_instance in;
    rk_shape sh;
    const uint64_t ext[2] = {M, N};
    if (problem_tuned(fam, t, ext, 2, knobs, &in, &sh) || rk_instance_validate(&in, t))
        fail_msg("%s %s: %s", fam, knobs, rk_error_message());
    assert_int_equal(rk_instance_name(&in, name, n), RK_OK);
}

static void test_heuristic(void **state) {
    (void)state;
    char name[256];
    /* odd rows that fit: span; rows of a multiple of vec keep their names */
    /* span up to each family's KN_SPAN_MAX_N_*, as measured on the H200 */
    pick("softmax", "sm_90a", 16384, 2047, "dtype=bf16", name, sizeof name);
    assert_null(strstr(name, "_sgspan"));
    pick("reduce", "sm_90a", 16384, 2047, "dtype=bf16 op=sum", name, sizeof name);
    assert_null(strstr(name, "_sgspan"));
    pick("softmax", "sm_90a", 16384, 1023, "dtype=bf16", name, sizeof name);
    assert_null(strstr(name, "_sgspan"));
    pick("softmax", "sm_90a", 16384, 511, "dtype=bf16", name, sizeof name);
    assert_non_null(strstr(name, "_sgspan"));
    /* the norms' NVIDIA limits (KN_SPAN_MAX_N_*_NV): odd rows of two full chunks take four instead */
    pick("rmsnorm", "sm_90a", 65536, 601, "dtype=bf16", name, sizeof name);
    assert_non_null(strstr(name, "_sgspan"));
    pick("rmsnorm", "sm_90a", 65536, 767, "dtype=bf16", name, sizeof name);
    assert_null(strstr(name, "_sgspan"));
    assert_non_null(strstr(name, "_r8_k4_"));
    pick("rmsnorm", "gfx942", 65536, 701, "dtype=f16", name, sizeof name);   /* AMD keeps its limit */
    assert_non_null(strstr(name, "_sgspan"));
    pick("rmsnorm", "sm_90a", 65536, 1001, "dtype=bf16", name, sizeof name);
    assert_null(strstr(name, "_sgspan"));
    pick("reduce", "sm_90a", 65536, 255, "dtype=bf16 op=sum", name, sizeof name);
    assert_null(strstr(name, "_sgspan"));
    pick("layernorm", "sm_90a", 65536, 767, "dtype=bf16", name, sizeof name);
    assert_non_null(strstr(name, "_sgspan"));
    pick("layernorm", "sm_90a", 65536, 1001, "dtype=bf16", name, sizeof name);
    assert_null(strstr(name, "_sgspan"));
    assert_non_null(strstr(name, "_r8_k4_"));
    pick("layernorm", "gfx950", 65536, 1001, "dtype=bf16", name, sizeof name);
    assert_non_null(strstr(name, "_sgspan"));
    pick("softmax", "sm_90a", 65536, 127, "dtype=bf16", name, sizeof name);
    assert_non_null(strstr(name, "_sgspan"));
    pick("softmax", "sm_90a", 32768, 4096, "dtype=bf16", name, sizeof name);
    assert_null(strstr(name, "_sg"));
    /* a vocabulary row does not fit a block's LDS: direct */
    pick("softmax", "sm_90a", 1000, 151936, "dtype=bf16", name, sizeof name);
    assert_null(strstr(name, "_sg"));
    /* gfx942's 64 KiB LDS: a quarter of it per block */
    pick("softmax", "gfx942", 4096, 4097, "dtype=f16", name, sizeof name);
    assert_null(strstr(name, "_sg"));
    pick("softmax", "gfx942", 4096, 2047, "dtype=f16", name, sizeof name);
    assert_null(strstr(name, "_sg"));
    pick("softmax", "gfx942", 65536, 127, "dtype=f16", name, sizeof name);
    assert_non_null(strstr(name, "_sgspan"));
    /* locked direct: the split views as before */
    pick("layernorm", "sm_90a", 16384, 2047, "dtype=bf16", name, sizeof name);
    assert_null(strstr(name, "_sgspan"));
    pick("rmsnorm", "sm_90a", 65536, 127, "dtype=bf16 residual=true", name, sizeof name);
    assert_non_null(strstr(name, "_sgspan"));
    pick("reduce", "sm_90a", 65536, 127, "dtype=bf16 op=sum", name, sizeof name);
    assert_non_null(strstr(name, "_sgspan"));
    pick("rmsnorm", "sm_90a", 1000, 151936, "dtype=bf16", name, sizeof name);
    assert_null(strstr(name, "_sg"));
    pick("softmax", "sm_90a", 16384, 2047, "dtype=bf16 stage=direct", name, sizeof name);
    assert_null(strstr(name, "_sg"));
    assert_non_null(strstr(name, "_sp_"));
}

/* Bad knob combinations name the knob and what is legal. */
static void test_bad_knobs(void **state) {
    (void)state;
    const struct { const char *knobs, *want; } rows[] = {
        {"stage=span chunks=0", "chunks > 0"},
        {"stage=span slices=2", "slices=1"},
        {"stage=span keep_exps=true", "keep_exps"},
        {"stage=span rows_per_block=16 block_size=1024 chunks=32", "bytes of LDS"},
    };
    const rk_target *t = rk_target_find("sm_90");
    for (size_t i = 0; i < COUNT(rows); i++) {
        rk_instance in;
        rk_shape sh;
        const uint64_t ext[2] = {64, 2047};
        char kn[160];
        snprintf(kn, sizeof kn, "dtype=bf16 %s", rows[i].knobs);
        rk_status st = problem_tuned("softmax", t, ext, 2, kn, &in, &sh);
        if (!st) st = rk_instance_validate(&in, t);
        if (!st) fail_msg("%s: accepted", kn);
        if (!strstr(rk_error_message(), rows[i].want)) fail_msg("%s: '%s' lacks '%s'", kn, rk_error_message(), rows[i].want);
    }
    rk_instance in;
    assert_int_equal(rk_instance_default(RK_FAMILY_SOFTMAX, &in), RK_OK);
    uint32_t ix;
    assert_int_not_equal(rk_instance_set(&in, "stage", "lds", &ix), RK_OK);
    assert_non_null(strstr(rk_error_message(), "span"));
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_rows_span: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_lengths),
        cmocka_unit_test(test_layernorm_lengths),
        cmocka_unit_test(test_rmsnorm_lengths),
        cmocka_unit_test(test_norms_residual),
        cmocka_unit_test(test_reduce_lengths),
        cmocka_unit_test(test_softmax_out_dtype),
        cmocka_unit_test(test_other_shapes),
        cmocka_unit_test(test_heuristic),
        cmocka_unit_test(test_bad_knobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
