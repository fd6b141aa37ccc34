/* rocke tests — the fused serving ops (add_rmsnorm_quant, rope,
 * topk_softmax, permute) on the CPU emulator against their double host
 * references, at odd sizes on a wave64 (gfx942 / gfx950) and a warp32
 * (sm_90) target; in-place outputs checked against the saved inputs; the
 * bad-input errors. Fresh seed per run, printed (ROCKE_SEED=N replays). */
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

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t seed;
static unsigned runs;

/* Set knobs "k=v ..." on a default instance of fam; *locked gets their bits. */
static rk_instance with_knobs(const char *fam, const char *knobs, uint64_t *locked) {
    rk_family_id f;
    assert_int_equal(rk_family_parse(fam, &f), RK_OK);
    rk_instance in;
    rk_instance_default(f, &in);
    if (problem_knobs_set(&in, knobs, locked)) fail_msg("%s: %s", knobs, rk_error_message());
    return in;
}

static rk_shape shape_of(rk_family_id f, const uint64_t *ext, uint32_t n) {
    rk_shape sh;
    assert_int_equal(rk_shape_default(f, &sh), RK_OK);
    if (rk_shape_update(f, &sh, NULL, ext, n, false)) fail_msg("shape: %s", rk_error_message());
    return sh;
}

/* Tune fam for target and the shape, build, run on the emulator, check. */
static void run_case(const char *fam, const char *target, const uint64_t *ext, uint32_t n, const char *knobs) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    uint64_t locked;
    rk_instance in = with_knobs(fam, knobs, &locked);
    rk_shape sh = shape_of(in.family, ext, n);
    assert_int_equal(rk_instance_tune(&in, t, &sh, locked), RK_OK);
    char name[256], shp[128];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    rk_shape_format(in.family, &sh, true, shp, sizeof shp);
    if (rk_instance_check_shape(&in, &sh)) fail_msg("%s %s %s: %s", target, name, shp, rk_error_message());
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    if (problem_emu_launch(t, k, &p, &sh)) fail_msg("%s %s %s: launch: %s", target, name, shp, rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad)
        fail_msg("%s %s %s seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target, name, shp,
                 (unsigned long long)s, (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff,
                 c.first_bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static void add_rmsnorm_quant(void **state) {
    (void)state;
    /* (rows, row length): one element, a tail of every width, a row past one
     * loop step, rows of a multi-row block */
    static const uint64_t shapes[][2] = {{1, 1}, {3, 77}, {2, 1001}, {17, 64}, {1, 4099}};
    static const char *const fp8[] = {"gfx942", "gfx950", "sm_90"};
    for (size_t i = 0; i < COUNT(shapes); i++) {
        run_case("add_rmsnorm_quant", fp8[i % 3], shapes[i], 2, "dtype=bf16");
        run_case("add_rmsnorm_quant", i % 2 ? "sm_90" : "gfx942", shapes[i], 2, "dtype=f16 qtype=int8");
    }
    static const uint64_t f32[2] = {5, 333};
    run_case("add_rmsnorm_quant", "gfx950", f32, 2, "dtype=f32 qtype=fp8e4m3");
    run_case("add_rmsnorm_quant", "sm_90", f32, 2, "dtype=f32 vec=1 unroll=1");
    /* the other tail mode on each vendor */
    run_case("add_rmsnorm_quant", "gfx942", shapes[2], 2, "dtype=bf16 tail=masked");
    run_case("add_rmsnorm_quant", "sm_90", shapes[2], 2, "dtype=bf16 tail=buffer block_size=64");
    /* the looped path (chunks=0: three passes) beside the cached picks above */
    for (size_t i = 0; i < COUNT(shapes); i++)
        run_case("add_rmsnorm_quant", fp8[(i + 1) % 3], shapes[i], 2, "dtype=bf16 chunks=0");
    run_case("add_rmsnorm_quant", "sm_90", f32, 2, "dtype=f32 qtype=int8 chunks=0");
}

/* One cached add_rmsnorm_quant kernel (tuned for 4096 x 4097: 5 chunks a
 * thread on sm_90, 128 threads) run at other shapes: whole chunks past the
 * row's end in the middle of a thread's, rows shorter than the row's
 * threads, one element, an all-zero row's scale (rows past M unused). */
static void add_rmsnorm_quant_cached_lengths(void **state) {
    (void)state;
    static const struct { const char *target, *knobs; } cfgs[] = {
        {"sm_90", "dtype=bf16"}, {"gfx942", "dtype=f16 qtype=int8"}, {"sm_90", "dtype=f32 qtype=fp8e4m3"},
        {"gfx942", "dtype=bf16 tail=masked"},
    };
    static const uint64_t shapes[][2] = {{2, 4097}, {3, 4000}, {2, 2600}, {4, 513}, {5, 100}, {3, 1}};
    for (size_t ic = 0; ic < COUNT(cfgs); ic++) {
        const rk_target *t = rk_target_find(cfgs[ic].target);
        uint64_t locked;
        rk_instance in = with_knobs("add_rmsnorm_quant", cfgs[ic].knobs, &locked);
        rk_shape sh = shape_of(in.family, (const uint64_t[]){4096, 4097}, 2);
        assert_int_equal(rk_instance_tune(&in, t, &sh, locked), RK_OK);
        assert_true(in.u.arq.k.chunks > 0);
        char name[256];
        assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
        rk_kernel *k = NULL;
        if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", t->name, name, rk_error_message());
        for (size_t i = 0; i < COUNT(shapes); i++) {
            rk_shape s2 = shape_of(in.family, shapes[i], 2);
            assert_int_equal(rk_instance_check_shape(&in, &s2), RK_OK);
            rk_problem p;
            uint64_t sd = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
            assert_int_equal(rk_problem_init(&p, &in, &s2, sd), RK_OK);
            if (problem_emu_launch(t, k, &p, &s2)) fail_msg("%s %s: launch: %s", t->name, name, rk_error_message());
            rk_problem_diff c;
            assert_int_equal(rk_problem_check(&p, &c), RK_OK);
            if (c.bad)
                fail_msg("%s %s %llux%llu seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", t->name, name,
                         (unsigned long long)shapes[i][0], (unsigned long long)shapes[i][1],
                         (unsigned long long)sd, (unsigned long long)c.bad, (unsigned long long)c.total,
                         c.max_abs_diff, c.first_bad);
            rk_problem_free(&p);
        }
        /* past the capacity: refused, naming chunks=0 */
        rk_shape big = shape_of(in.family, (const uint64_t[]){2, 65536}, 2);
        assert_int_equal(rk_instance_check_shape(&in, &big), RK_ERR_INVALID);
        assert_non_null(strstr(rk_error_message(), "chunks=0"));
        rk_kernel_free(k);
    }
}

static void rope(void **state) {
    (void)state;
    /* tokens, q_heads, kv_heads, head_dim, rot_half, max_pos */
    static const uint64_t shapes[][6] = {
        {3, 5, 2, 96, 24, 40}, {1, 1, 1, 2, 1, 1}, {7, 3, 1, 64, 32, 9}, {2, 4, 4, 80, 20, 100},
    };
    static const char *const styles[] = {"neox", "gptj"};
    static const char *const dtypes[] = {"f16", "bf16", "f32"};
    for (size_t i = 0; i < COUNT(shapes); i++)
        for (size_t st = 0; st < 2; st++) {
            char kn[128];
            snprintf(kn, sizeof kn, "dtype=%s style=%s", dtypes[(i + st) % 3], styles[st]);
            run_case("rope", (i + st) % 2 ? "sm_90" : "gfx942", shapes[i], 6, kn);
        }
    static const uint64_t odd[6] = {3, 2, 3, 30, 15, 11};   /* rot_half odd: one pair per thread */
    run_case("rope", "gfx950", odd, 6, "dtype=bf16 cache_dtype=bf16 style=neox");
    run_case("rope", "sm_90", odd, 6, "dtype=f16 cache_dtype=f16 style=gptj");
}

static void topk_softmax(void **state) {
    (void)state;
    /* tokens, experts, k: bf16 logits tie often (lower id first) */
    static const uint64_t shapes[][3] = {{37, 129, 8}, {1, 1, 1}, {5, 8, 3}, {70, 64, 2}, {3, 300, 5}};
    static const char *const dtypes[] = {"bf16", "f16", "f32"};
    for (size_t i = 0; i < COUNT(shapes); i++) {
        char kn[96];
        snprintf(kn, sizeof kn, "dtype=%s renormalize=%s", dtypes[i % 3], i % 2 ? "false" : "true");
        run_case("topk_softmax", "gfx942", shapes[i], 3, kn);
        run_case("topk_softmax", "sm_90", shapes[i], 3, kn);
    }
    run_case("topk_softmax", "gfx950", shapes[0], 3, "dtype=bf16 threads_per_row=1");
    run_case("topk_softmax", "sm_90", shapes[4], 3, "dtype=bf16 threads_per_row=32 block_size=32");
    /* the row read again by every pass (chunks=0) beside the cached picks above */
    for (size_t i = 0; i < COUNT(shapes); i++) {
        char kn[96];
        snprintf(kn, sizeof kn, "dtype=%s renormalize=%s chunks=0", dtypes[(i + 1) % 3], i % 2 ? "true" : "false");
        run_case("topk_softmax", i % 2 ? "gfx942" : "sm_90", shapes[i], 3, kn);
    }
    /* the knob past the heuristic's 16: 32 logits a lane */
    run_case("topk_softmax", "sm_90", shapes[4], 3, "dtype=f32 threads_per_row=16 chunks=32 block_size=64");
}

/* One cached topk_softmax kernel (256 experts: 32 lanes x 8 on sm_90, 64 x 4
 * on gfx942) at fewer experts and k (lanes whose logits all lie past the
 * row), and its refusal of rows past its capacity. */
static void topk_softmax_cached_lengths(void **state) {
    (void)state;
    static const uint64_t shapes[][3] = {{9, 256, 8}, {4, 200, 8}, {7, 33, 4}, {3, 5, 5}, {2, 1, 1}};
    static const char *const targets[] = {"sm_90", "gfx942"};
    for (size_t it = 0; it < COUNT(targets); it++) {
        const rk_target *t = rk_target_find(targets[it]);
        uint64_t locked;
        rk_instance in = with_knobs("topk_softmax", it ? "dtype=f16" : "dtype=bf16", &locked);
        rk_shape sh = shape_of(in.family, shapes[0], 3);
        assert_int_equal(rk_instance_tune(&in, t, &sh, locked), RK_OK);
        assert_int_equal(in.u.topk.chunks * in.u.topk.threads_per_row, 256);
        rk_kernel *k = NULL;
        char name[256];
        assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
        if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", t->name, name, rk_error_message());
        for (size_t i = 0; i < COUNT(shapes); i++) {
            rk_shape s2 = shape_of(in.family, shapes[i], 3);
            assert_int_equal(rk_instance_check_shape(&in, &s2), RK_OK);
            rk_problem p;
            uint64_t sd = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
            assert_int_equal(rk_problem_init(&p, &in, &s2, sd), RK_OK);
            if (problem_emu_launch(t, k, &p, &s2)) fail_msg("%s %s: launch: %s", t->name, name, rk_error_message());
            rk_problem_diff c;
            assert_int_equal(rk_problem_check(&p, &c), RK_OK);
            if (c.bad)
                fail_msg("%s %s %llux%llu k %llu seed %llu: bad=%llu/%llu, first %s", t->name, name,
                         (unsigned long long)shapes[i][0], (unsigned long long)shapes[i][1],
                         (unsigned long long)shapes[i][2], (unsigned long long)sd, (unsigned long long)c.bad,
                         (unsigned long long)c.total, c.first_bad);
            rk_problem_free(&p);
        }
        rk_shape big = shape_of(in.family, (const uint64_t[]){2, 257, 2}, 3);
        assert_int_equal(rk_instance_check_shape(&in, &big), RK_ERR_INVALID);
        assert_non_null(strstr(rk_error_message(), "chunks=0"));
        rk_kernel_free(k);
    }
}

static void permute(void **state) {
    (void)state;
    static const uint64_t shapes[][3] = {{3, 67, 131}, {1, 1, 1}, {2, 64, 64}, {5, 9, 70}};
    static const char *const dtypes[] = {"f16", "bf16", "f32"};
    for (size_t i = 0; i < COUNT(shapes); i++) {
        char kn[64];
        snprintf(kn, sizeof kn, "dtype=%s", dtypes[i % 3]);
        run_case("permute", "gfx942", shapes[i], 3, kn);
        run_case("permute", "sm_90", shapes[i], 3, kn);
    }
    run_case("permute", "gfx950", shapes[0], 3, "dtype=bf16 tile_m=32 tile_n=16 lds_pad=0 block_size=64");
}

/* In place: Q rows past rot_dim keep their input; the rotated part changes. */
static void rope_in_place(void **state) {
    (void)state;
    uint64_t locked;
    rk_instance in = with_knobs("rope", "dtype=f32", &locked);
    static const uint64_t ext[6] = {2, 1, 1, 8, 2, 4};
    rk_shape sh = shape_of(in.family, ext, 6);
    const rk_target *t = rk_target_find("sm_90");
    assert_int_equal(rk_instance_tune(&in, t, &sh, locked), RK_OK);
    rk_kernel *k;
    assert_int_equal(rk_instance_build(&in, t, &k), RK_OK);
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, &sh, seed), RK_OK);
    float before[16];
    memcpy(before, p.buf[0].data, sizeof before);
    assert_int_equal(problem_emu_launch(t, k, &p, &sh), RK_OK);
    const float *q = p.buf[0].data;
    for (int tok = 0; tok < 2; tok++)
        for (int j = 0; j < 8; j++) {
            bool rotated = j < 4;
            if (rotated) assert_true(q[tok * 8 + j] != before[tok * 8 + j]);
            else assert_true(q[tok * 8 + j] == before[tok * 8 + j]);
        }
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    assert_int_equal(c.bad, 0);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

/* Bad knobs and shapes: each message names the knob or dimension. */
static void bad_inputs(void **state) {
    (void)state;
    static const struct { const char *fam, *target, *knobs; uint64_t ext[6]; uint32_t n; const char *frag; } rows[] = {
        {"add_rmsnorm_quant", "gfx942", "qtype=fp8e4m3", {4, 64}, 2, "knob 'qtype' fp8e4m3 is not a native fp8 of gfx942"},
        {"add_rmsnorm_quant", "gfx90a", "qtype=fp8e4m3fnuz", {4, 64}, 2, "int8 (no native fp8)"},
        {"add_rmsnorm_quant", "sm_90", "dtype=f32 vec=8", {4, 64}, 2, "knob 'vec' must be at most 4"},
        {"rope", "sm_90", "pairs=4", {2, 2, 2, 64, 6, 8}, 6, "dimension rot_half (6) must be a multiple of knob 'pairs'"},
        {"rope", "sm_90", "pairs=1", {2, 2, 2, 8, 5, 8}, 6, "rot_half (5) must be at most head_dim / 2"},
        {"rope", "sm_90", "pairs=8 dtype=f32", {2, 2, 2, 64, 16, 8}, 6, "knob 'pairs' = 8"},
        {"rope", "gfx942", "style=gptj pairs=2", {2, 2, 2, 10, 4, 8}, 6, "head_dim (10) must be a multiple of 4"},
        {"topk_softmax", "sm_90", "threads_per_row=1", {4, 16, 9}, 3, "dimension k must be 1..8"},
        {"topk_softmax", "sm_90", "threads_per_row=64", {4, 16, 2}, 3, "knob 'threads_per_row' must be at most"},
        {"topk_softmax", "gfx942", "wave=32", {4, 16, 2}, 3, "knob 'wave' must be 64"},
        {"permute", "sm_90", "block_size=1024 tile_m=16 tile_n=16", {1, 8, 8}, 3, "knob 'block_size' must divide"},
        {"permute", "sm_90", "dtype=f32 vec=8", {1, 8, 8}, 3, "knob 'vec' must be at most 4"},
    };
    for (size_t i = 0; i < COUNT(rows); i++) {
        uint64_t locked;
        rk_instance in = with_knobs(rows[i].fam, rows[i].knobs, &locked);
        rk_shape sh = shape_of(in.family, rows[i].ext, rows[i].n);
        const rk_target *t = rk_target_find(rows[i].target);
        assert_non_null(t);
        assert_int_equal(rk_instance_tune(&in, t, &sh, locked), RK_OK);
        rk_status st = rk_instance_validate(&in, t);
        if (!st) st = rk_instance_check_shape(&in, &sh);
        if (st == RK_OK || !strstr(rk_error_message(), rows[i].frag))
            fail_msg("row %zu: expected '%s', got %s", i, rows[i].frag, st ? rk_error_message() : "accepted");
    }
}

/* The heuristic: the target's native fp8, vectors as wide as the shape keeps aligned. */
static void heuristics(void **state) {
    (void)state;
    uint64_t locked;
    rk_instance in = with_knobs("add_rmsnorm_quant", "dtype=bf16", &locked);
    rk_shape sh = shape_of(in.family, (const uint64_t[]){4096, 4096}, 2);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("gfx942"), &sh, locked), RK_OK);
    assert_int_equal(in.u.arq.qtype, RK_QUANT_FP8E4M3FNUZ);
    assert_int_equal(in.u.arq.k.vec, 8);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &sh, locked), RK_OK);
    assert_int_equal(in.u.arq.qtype, RK_QUANT_FP8E4M3);
    assert_int_equal(in.u.arq.k.wave, 32);
    /* h cached as the norms' rows: 4096 bf16 = 256 threads x 2 vectors; 8192
     * 512 x 2; rows past a block's registers loop (three passes) */
    assert_int_equal(in.u.arq.k.chunks, 2);
    assert_int_equal(in.u.arq.k.block_size, 256);
    sh = shape_of(in.family, (const uint64_t[]){4096, 8192}, 2);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &sh, locked), RK_OK);
    assert_int_equal(in.u.arq.k.chunks, 2);
    assert_int_equal(in.u.arq.k.block_size, 512);
    sh = shape_of(in.family, (const uint64_t[]){4096, 32768}, 2);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &sh, locked), RK_OK);
    assert_int_equal(in.u.arq.k.chunks, 4);
    /* 1024 threads x 5 chunks would spill at 64 registers: looped */
    sh = shape_of(in.family, (const uint64_t[]){4096, 40000}, 2);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &sh, locked), RK_OK);
    assert_int_equal(in.u.arq.k.chunks, 0);
    sh = shape_of(in.family, (const uint64_t[]){64, 150000}, 2);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &sh, locked), RK_OK);
    assert_int_equal(in.u.arq.k.chunks, 0);
    in = with_knobs("rope", "dtype=bf16", &locked);
    sh = shape_of(in.family, (const uint64_t[]){64, 8, 8, 128, 64, 4096}, 6);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &sh, locked), RK_OK);
    assert_int_equal(in.u.rope.pairs, 4);     /* f32 cache: 16 bytes */
    sh = shape_of(in.family, (const uint64_t[]){64, 8, 8, 96, 6, 4096}, 6);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &sh, locked), RK_OK);
    assert_int_equal(in.u.rope.pairs, 2);
    in = with_knobs("topk_softmax", "", &locked);
    sh = shape_of(in.family, (const uint64_t[]){4096, 256, 8}, 3);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &sh, locked), RK_OK);
    assert_int_equal(in.u.topk.threads_per_row, 32);
    assert_int_equal(in.u.topk.chunks, 8);      /* 256 logits over 32 lanes, held */
    sh = shape_of(in.family, (const uint64_t[]){4096, 1024, 8}, 3);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &sh, locked), RK_OK);
    assert_int_equal(in.u.topk.chunks, 0);      /* 32 a lane: read per pass */
    sh = shape_of(in.family, (const uint64_t[]){4096, 256, 8}, 3);
    double bytes, flops;
    rk_instance_cost(&in, &sh, &bytes, &flops);
    assert_true(bytes == 4096.0 * 256 * 4 + 4096.0 * 8 * 8);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_fused_ops: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_rmsnorm_quant), cmocka_unit_test(add_rmsnorm_quant_cached_lengths), cmocka_unit_test(rope), cmocka_unit_test(topk_softmax),
        cmocka_unit_test(topk_softmax_cached_lengths),
        cmocka_unit_test(permute), cmocka_unit_test(rope_in_place), cmocka_unit_test(bad_inputs),
        cmocka_unit_test(heuristics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
