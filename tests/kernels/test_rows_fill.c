/* rocke tests — filled cached rows: the heuristic gives a row whose vectors
 * are a few more than a power of two fewer threads and more chunks (4097
 * bf16: 128 threads x 5 chunks, one row a block, not 512 x 2), and the
 * masked chunks wholly past a row's end load the fill and store nothing.
 * The picks over a grid of row lengths keep their chunk slots at least 3/4
 * full (fuller still where half the threads are within 5 chunks: 5000), the
 * power-of-two rows' picks stay as they were; softmax, layernorm, rmsnorm and reduce at those picks (and one
 * kernel run at shorter rows, where whole middle chunks lie past the end)
 * match the double reference in bf16, f16 and f32, with tensors 0, 1 and 3
 * elements into their buffers, on sm_90 and gfx942 (buffer and masked
 * tails). ROCKE_SEED=N replays. */
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

static bool knob_is(const rk_instance *in, const char *name, const char *want) {
    char v[32];
    return rk_instance_get(in, name, v, sizeof v) == RK_OK && !strcmp(v, want);
}

static void tune(const char *fam, const rk_target *t, uint64_t M, uint64_t N, const char *knobs, rk_instance *in) {
    rk_shape sh;
    const uint64_t ext[2] = {M, N};
    if (problem_tuned(fam, t, ext, 2, knobs, in, &sh) || rk_instance_validate(in, t))
        fail_msg("%s %s %s at %llux%llu: %s", t->name, fam, knobs, (unsigned long long)M, (unsigned long long)N,
                 rk_error_message());
}

/* Run k (built from in) at M x N, every tensor `off` elements into its
 * buffer, against the reference. */
static void run_at(const rk_target *t, const rk_instance *in, rk_kernel *k, const char *name, uint64_t M, uint64_t N,
                   uint32_t off) {
    rk_shape sh;
    const uint64_t ext[2] = {M, N};
    assert_int_equal(rk_shape_default(in->family, &sh), RK_OK);
    assert_int_equal(rk_shape_update(in->family, &sh, NULL, ext, 2, false), RK_OK);
    if (rk_instance_check_shape(in, &sh)) fail_msg("%s %s at N=%llu: %s", t->name, name, (unsigned long long)N,
                                                   rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    if (rk_problem_init(&p, in, &sh, s))
        fail_msg("%s %llux%llu: %s", name, (unsigned long long)M, (unsigned long long)N, rk_error_message());
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

/* The heuristic's geometry at the measured shapes (bf16, sm_90a). */
static void test_fill_picks(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    assert_non_null(t);
    struct { const char *fam, *knobs; uint64_t N; uint32_t block, rows, chunks; } want[] = {
        {"softmax", "", 4097, 128, 1, 5},
        {"rmsnorm", "", 4097, 128, 1, 5},
        {"layernorm", "stage=direct", 4097, 128, 1, 5},
        {"softmax", "", 2047, 128, 2, 5},
        {"rmsnorm", "", 3001, 128, 1, 3},
        /* full slots: unchanged */
        {"softmax", "", 4096, 256, 1, 2},
        {"layernorm", "", 1000, 256, 4, 2},
        {"rmsnorm", "", 32768, 1024, 1, 4},
        /* 3/4 full, but half the threads are fuller within 5 chunks:
         * 5000 = 625 vectors, 256 x 3 (81 %) -> 128 x 5 (98 %); 10000 =
         * 1250, 512 x 3 -> 256 x 5 */
        {"softmax", "", 5000, 128, 1, 5},
        {"rmsnorm", "", 5000, 128, 1, 5},
        {"layernorm", "stage=direct", 5000, 128, 1, 5},
        {"softmax", "", 10000, 256, 1, 5},
        /* 3001 (376 vectors) is 98 % full at 128 x 3 already */
        {"softmax", "", 3001, 128, 1, 3},
        /* powers of two fill their slots: the picks before the rule, kept */
        {"softmax", "", 256, 256, 8, 1},
        {"rmsnorm", "", 512, 256, 8, 2},
        {"layernorm", "stage=direct", 1024, 256, 4, 2},
        {"softmax", "", 2048, 256, 2, 2},
        {"layernorm", "stage=direct", 8192, 512, 1, 2},
        {"softmax", "", 16384, 1024, 1, 2},
        {"rmsnorm", "", 65536, 1024, 1, 8},
        /* reduce keeps its 8 chunks: already 4/5 full */
        {"reduce", "op=sum", 4097, 256, 2, 5},
        /* odd rows of two full chunks: the norms take half the threads and four (split_wide), softmax not */
        {"layernorm", "", 1001, 256, 8, 4},
        {"rmsnorm", "", 1537, 256, 4, 4},
        {"layernorm", "", 1999, 256, 4, 4},
        {"rmsnorm", "", 767, 256, 8, 4},
        {"softmax", "", 1537, 256, 2, 2},
        {"layernorm", "stage=direct", 767, 256, 8, 4},
    };
    for (size_t i = 0; i < COUNT(want); i++) {
        rk_instance in;
        char kn[96];
        snprintf(kn, sizeof kn, "dtype=bf16 %s", want[i].knobs);
        tune(want[i].fam, t, 4096, want[i].N, kn, &in);
        uint32_t b = knob_u32(&in, "block_size"), r = knob_u32(&in, "rows_per_block"), c = knob_u32(&in, "chunks");
        if (b != want[i].block || r != want[i].rows || c != want[i].chunks)
            fail_msg("%s N=%llu: block %u rows %u chunks %u, want %u / %u / %u", want[i].fam,
                     (unsigned long long)want[i].N, b, r, c, want[i].block, want[i].rows, want[i].chunks);
    }
}

/* Few rows keep the device's threads (NVIDIA): a halving that would leave
 * M x tpr under half of the resident threads (132 x 2048 / 2 on sm_90a)
 * stops. 1000 x 3001 stays 256 x 2 (measured 1808 GB/s against 1610 for
 * 128 x 3 on the H200); 4096 rows still fill (128 x 3); AMD is unchanged. */
static void test_fill_few_rows(void **state) {
    (void)state;
    struct { const char *target, *fam, *knobs; uint64_t M, N; uint32_t block, rows, chunks; } want[] = {
        {"sm_90a", "softmax", "", 1000, 3001, 256, 1, 2},
        {"sm_90a", "rmsnorm", "", 1000, 3001, 256, 1, 2},
        {"sm_90a", "layernorm", "stage=direct", 1000, 3001, 256, 1, 2},
        {"sm_90a", "softmax", "", 4096, 3001, 128, 1, 3},
        /* 4097: 512 x 2 -> 256 x 3 (256 000 threads), not on to 128 x 5 */
        {"sm_90a", "softmax", "", 1000, 4097, 256, 1, 3},
        {"sm_90a", "softmax", "", 2112, 4097, 128, 1, 5},
        /* exactly half the resident threads at 128 a row: the halving is taken */
        {"sm_90a", "rmsnorm", "", 1056, 3001, 128, 1, 3},
        {"sm_90a", "rmsnorm", "", 1055, 3001, 256, 1, 2},
        {"gfx942", "softmax", "", 1000, 3001, 256, 2, 3},
    };
    for (size_t i = 0; i < COUNT(want); i++) {
        const rk_target *t = rk_target_find(want[i].target);
        rk_instance in;
        char kn[96];
        snprintf(kn, sizeof kn, "dtype=bf16 %s", want[i].knobs);
        tune(want[i].fam, t, want[i].M, want[i].N, kn, &in);
        uint32_t b = knob_u32(&in, "block_size"), r = knob_u32(&in, "rows_per_block"), c = knob_u32(&in, "chunks");
        if (b != want[i].block || r != want[i].rows || c != want[i].chunks)
            fail_msg("%s %s %llux%llu: block %u rows %u chunks %u, want %u / %u / %u", want[i].target, want[i].fam,
                     (unsigned long long)want[i].M, (unsigned long long)want[i].N, b, r, c, want[i].block,
                     want[i].rows, want[i].chunks);
    }
}

/* Over odd, prime and aligned lengths: every direct cached pick holds its
 * row, and a row over two waves either fills 3/4 of its chunk slots or
 * would need more than 5 chunks at half the threads. */
static void test_fill_rule(void **state) {
    (void)state;
    const char *const targets[] = {"sm_90a", "gfx942"};
    const char *const fams[] = {"softmax", "layernorm", "rmsnorm"};
    const char *const dtypes[] = {"bf16", "f32"};
    const uint64_t Ns[] = {129, 257, 300, 513, 1000, 1031, 2047, 2053, 2600, 3001, 4097, 5000, 6007, 8193, 10007,
                           12289, 16411, 20011, 32771};
    for (size_t it = 0; it < COUNT(targets); it++)
        for (size_t f = 0; f < COUNT(fams); f++)
            for (size_t d = 0; d < COUNT(dtypes); d++)
                for (size_t n = 0; n < COUNT(Ns); n++) {
                    const rk_target *t = rk_target_find(targets[it]);
                    rk_instance in;
                    char kn[64];
                    snprintf(kn, sizeof kn, "dtype=%s stage=direct", dtypes[d]);
                    tune(fams[f], t, 65536, Ns[n], kn, &in);
                    uint32_t c = knob_u32(&in, "chunks"), vec = knob_u32(&in, "vec");
                    if (!c || knob_u32(&in, "slices") > 1) continue;
                    uint32_t tpr = knob_u32(&in, "block_size") / knob_u32(&in, "rows_per_block");
                    uint64_t span = Ns[n] + (knob_is(&in, "split", "true") ? vec - 1 : 0);
                    uint64_t nvec = (span + vec - 1) / vec;
                    if ((uint64_t)tpr * c < nvec)
                        fail_msg("%s %s %s N=%llu: %u x %u chunks < %llu vectors", t->name, fams[f], dtypes[d],
                                 (unsigned long long)Ns[n], tpr, c, (unsigned long long)nvec);
                    bool full = 4 * nvec >= 3ull * c * tpr;
                    bool too_many = (nvec + tpr / 2 - 1) / (tpr / 2) > 5;
                    /* half the threads would fill the slots better within 5 chunks */
                    uint64_t half = (nvec + tpr / 2 - 1) / (tpr / 2);
                    if (tpr > 2 * t->wave_size && tpr < 1024 && half <= 5 && half < 2ull * c)
                        fail_msg("%s %s %s N=%llu: %u threads x %u chunks for %llu vectors (half the threads "
                                 "would be fuller)", t->name, fams[f], dtypes[d], (unsigned long long)Ns[n], tpr, c,
                                 (unsigned long long)nvec);
                    if (tpr > 2 * t->wave_size && tpr < 1024 && !full && !too_many)
                        fail_msg("%s %s %s N=%llu: %u threads x %u chunks for %llu vectors (under 3/4 full)",
                                 t->name, fams[f], dtypes[d], (unsigned long long)Ns[n], tpr, c,
                                 (unsigned long long)nvec);
                }
}

static const char *const fams[] = {"softmax", "layernorm", "rmsnorm", "reduce", "reduce"};
static const char *const extra[] = {"", "stage=direct residual=true save_stats=true",
                                    "residual=true save_stats=true", "op=sum", "op=max"};
static const char *const dtypes[] = {"bf16", "f16", "f32"};

/* target, extra knobs: gfx942 runs its buffer tails and the masked ones */
/* tensors this many elements past a 16-byte boundary */
static const uint32_t offs[] = {1, 0, 3};

static const char *const configs[][2] = {{"sm_90", ""}, {"gfx942", ""}, {"gfx942", "tail=masked"}};

/* The heuristic's filled picks at odd lengths (and the norms' four chunks
 * at 1537 on sm_90), few rows (the last block's rows past M included),
 * every dtype and base. */
static void test_fill_rows_emu(void **state) {
    (void)state;
    const uint64_t shapes[][2] = {{3, 4097}, {5, 2047}, {2, 3001}, {9, 1537}};
    for (size_t ic = 0; ic < COUNT(configs); ic++)
        for (size_t f = 0; f < COUNT(fams); f++)
            for (size_t d = 0; d < COUNT(dtypes); d++)
                for (size_t s = 0; s < COUNT(shapes); s++) {
                    const rk_target *t = rk_target_find(configs[ic][0]);
                    rk_instance in;
                    char kn[160], name[256];
                    snprintf(kn, sizeof kn, "dtype=%s %s %s", dtypes[d], extra[f], configs[ic][1]);
                    /* tuned for many rows (the filled geometry), run at few */
                    tune(fams[f], t, 65536, shapes[s][1], kn, &in);
                    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
                    rk_kernel *k = NULL;
                    if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", t->name, name, rk_error_message());
                    run_at(t, &in, k, name, shapes[s][0], shapes[s][1], offs[(s + d + ic) % COUNT(offs)]);
                    rk_kernel_free(k);
                }
}

/* One filled kernel (4097: 5 chunks a thread) run at shorter rows: whole
 * chunks past the end in the middle of a thread's chunks, rows shorter
 * than the row's threads, one element. */
static void test_fill_other_lengths(void **state) {
    (void)state;
    const uint64_t shapes[][2] = {{2, 4000}, {3, 2600}, {4, 513}, {5, 100}, {3, 1}};
    for (size_t ic = 0; ic < COUNT(configs); ic++)
        for (size_t f = 0; f < COUNT(fams); f++) {
            const rk_target *t = rk_target_find(configs[ic][0]);
            const char *dt = dtypes[(ic + f) % COUNT(dtypes)];
            rk_instance in;
            char kn[160], name[256];
            snprintf(kn, sizeof kn, "dtype=%s split=true %s %s", dt, extra[f], configs[ic][1]);
            tune(fams[f], t, 65536, 4097, kn, &in);
            assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
            rk_kernel *k = NULL;
            if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", t->name, name, rk_error_message());
            for (size_t s = 0; s < COUNT(shapes); s++)
                run_at(t, &in, k, name, shapes[s][0], shapes[s][1], offs[s % COUNT(offs)]);
            rk_kernel_free(k);
        }
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_rows_fill: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_picks),
        cmocka_unit_test(test_fill_few_rows),
        cmocka_unit_test(test_fill_rule),
        cmocka_unit_test(test_fill_rows_emu),
        cmocka_unit_test(test_fill_other_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
