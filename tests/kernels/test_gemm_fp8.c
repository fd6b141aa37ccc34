/* rocke tests — the fp8 GEMM (dtype e4m3 / e5m2, sm_90a path=wgmma, wgmma
 * m64nNk32 from 128-byte rows of 128 K) on the CPU emulator against the
 * double reference over the decoded inputs: no scales, per-tensor scales
 * and per-128 block scales (DeepSeek-style promotion), M, N and K tails,
 * every schedule, every output type, a fused chain; both promotion
 * schedules of block scales (the same bits); a misplaced scale (planted
 * after the launch) must fail the check; the refusals; the PTX.
 * Fresh random data; the seed is printed (ROCKE_SEED=N replays). Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocke/compile.h"
#include "rocke/kernels.h"
#include "../support/gemm_cases.h"
#include "../support/problem_emu.h"

static uint64_t seed;
static unsigned runs;

/* knobs for M x N x K on sm_90a (must take path=wgmma), run and checked;
 * *p stays for the caller (rk_problem_free). */
static void run_kept(uint64_t M, uint64_t N, uint64_t K, const char *knobs, rk_problem *p, rk_problem_diff *c) {
    rk_instance in;
    char name[256];
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    if (gemm_emu_case(M, N, K, knobs, s, &in, p, c, name, sizeof name)) fail_msg("%s: %s", knobs, rk_error_message());
    if (in.u.gemm.path != RK_GEMM_PATH_WGMMA) fail_msg("%s: not on path=wgmma", name);
    if (c->bad)
        fail_msg("%s %llux%llux%llu seed %llu: %llu/%llu bad, %s", name, (unsigned long long)M,
                 (unsigned long long)N, (unsigned long long)K, (unsigned long long)s, (unsigned long long)c->bad,
                 (unsigned long long)c->total, c->first_bad);
}

static void run_case(uint64_t M, uint64_t N, uint64_t K, const char *knobs) {
    rk_problem p;
    rk_problem_diff c;
    run_kept(M, N, K, knobs, &p, &c);
    rk_problem_free(&p);
}

/* Both formats, the three scale modes, tails in M and N, K with and
 * without a partial 128-K block. */
static void test_scales(void **state) {
    (void)state;
    run_case(72, 136, 256, "dtype=e4m3 scale=none");
    run_case(72, 136, 256, "dtype=e4m3 scale=tensor");
    run_case(72, 136, 256, "dtype=e4m3 scale=block");
    run_case(65, 100, 384, "dtype=e5m2 scale=tensor out_dtype=f32");
    run_case(65, 100, 384, "dtype=e5m2 scale=block out_dtype=f16");
    run_case(65, 100, 208, "dtype=e4m3 scale=block out_dtype=f32");   /* the last block holds 80 of 128 K */
    run_case(1, 8, 16, "dtype=e4m3 scale=block");
}

/* Tiles of one and two consumer warpgroups, N up to 256 (tensor) and 128
 * (block), every schedule, deep rings, a fused chain after the scales. */
static void test_schedules(void **state) {
    (void)state;
    run_case(130, 200, 400, "dtype=e4m3 scale=tensor tile=128x256x128 warps=8x1 stages=3");
    run_case(130, 136, 272, "dtype=e4m3 scale=block tile=128x128x128 warps=8x1 stages=2");
    run_case(70, 130, 512, "dtype=e5m2 scale=block tile=64x128x128 warps=4x1 stages=4 schedule=ws");
    run_case(200, 72, 384, "dtype=e4m3 scale=block tile=64x64x128 warps=4x1 schedule=persistent blocks=3");
    run_case(200, 72, 384, "dtype=e4m3 scale=tensor tile=64x64x128 warps=4x1 schedule=pingpong blocks=2");
    run_case(72, 136, 256, "dtype=e4m3 scale=block schedule=pingpong blocks=2");
    run_case(72, 100, 256, "dtype=e4m3 scale=tensor fuse=bias,relu out_dtype=bf16");
}

/* promote=overlap (the default: two block accumulator sets, wait_group 1)
 * on every schedule at odd M and N, K = 128 k + a tail with odd and even
 * block counts (the pair loop's two endings), a tile N that does not
 * divide 128 (per-column-group Sb), both formats. */
static void test_promote_overlap(void **state) {
    (void)state;
    run_case(130, 136, 400, "dtype=e4m3 scale=block tile=128x128x128 warps=8x1 stages=3");        /* 4 blocks */
    run_case(70, 72, 272, "dtype=e5m2 scale=block tile=64x64x128 warps=4x1 stages=2");           /* 3 blocks */
    run_case(70, 130, 144, "dtype=e4m3 scale=block tile=64x128x128 warps=4x1 schedule=ws");      /* 2 blocks */
    run_case(200, 72, 528, "dtype=e5m2 scale=block tile=64x64x128 warps=4x1 schedule=persistent blocks=3");
    run_case(200, 136, 400, "dtype=e4m3 scale=block tile=64x128x128 warps=4x1 schedule=pingpong blocks=2");
    run_case(70, 200, 272, "dtype=e4m3 scale=block tile=64x96x128 warps=4x1 stages=4");          /* Sb per 8 columns */
}

/* C of a run, as bytes. */
static const rk_host_buf *c_of(const rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, "C")) return &p->buf[i];
    fail_msg("no buffer C");
    return NULL;
}

/* The two promotion schedules add the same blocks in the same order: the
 * same inputs give the same bits. */
static void test_promote_bits(void **state) {
    (void)state;
    static const struct { uint64_t M, N, K; const char *knobs; } rows[] = {
        {130, 136, 400, "dtype=e4m3 scale=block tile=128x128x128 warps=8x1 out_dtype=f32"},
        {200, 72, 528, "dtype=e5m2 scale=block tile=64x64x128 warps=4x1 schedule=persistent blocks=3 out_dtype=f32"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        rk_problem p[2];
        rk_problem_diff c[2];
        char knobs[256];
        uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
        for (int serial = 0; serial < 2; serial++) {
            rk_instance in;
            char name[256];
            snprintf(knobs, sizeof knobs, "%s promote=%s", rows[i].knobs, serial ? "serial" : "overlap");
            if (gemm_emu_case(rows[i].M, rows[i].N, rows[i].K, knobs, s, &in, &p[serial], &c[serial], name, sizeof name))
                fail_msg("%s: %s", knobs, rk_error_message());
            if (c[serial].bad) fail_msg("%s seed %llu: %llu bad, %s", name, (unsigned long long)s,
                                        (unsigned long long)c[serial].bad, c[serial].first_bad);
        }
        const rk_host_buf *a = c_of(&p[0]), *b = c_of(&p[1]);
        assert_int_equal(a->bytes, b->bytes);
        if (memcmp(a->data, b->data, a->bytes)) fail_msg("%s: overlap and serial differ (seed %llu)", knobs,
                                                         (unsigned long long)s);
        rk_problem_free(&p[0]);
        rk_problem_free(&p[1]);
    }
}

/* Overwrite Sa (or Sb) of a finished run by a permutation of its 128-K
 * blocks (as if the kernel had read block kb + 1 for kb): the check must
 * then find bad elements, so it is sensitive to the scales' indexing. */
static void plant(const char *buf, uint64_t rows, uint64_t K, rk_problem *p) {
    uint64_t kb = (K + 127) / 128;
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (strcmp(p->sig.p[i].name, buf)) continue;
        float *v = p->buf[i].data;
        assert_int_equal(p->buf[i].count, rows * kb);
        for (uint64_t r = 0; r < rows; r++) {
            float first = v[r * kb];
            for (uint64_t j = 0; j + 1 < kb; j++) v[r * kb + j] = v[r * kb + j + 1];
            v[r * kb + kb - 1] = first;
        }
        return;
    }
    fail_msg("no buffer %s", buf);
}

static void test_planted_scale_error(void **state) {
    (void)state;
    for (int which = 0; which < 2; which++) {
        rk_problem p;
        rk_problem_diff c;
        run_kept(72, 136, 384, "dtype=e4m3 scale=block", &p, &c);
        plant(which ? "Sb" : "Sa", which ? 2 : 72, 384, &p);
        assert_int_equal(rk_problem_check(&p, &c), RK_OK);
        /* caught at all is what matters: how many elements move depends on how far apart the seed's random
         * scales happen to be (one seed left 81% of them inside the tolerance) */
        bool caught = c.bad > 0;
        unsigned long long good = c.total - c.bad, total = c.total;
        rk_problem_free(&p);
        if (!caught) fail_msg("a permuted %s left all %llu of %llu elements good", which ? "Sb" : "Sa", good, total);
    }
}

static void test_bad_specs(void **state) {
    (void)state;
    const uint64_t sh3[3] = {256, 256, 256};
    const struct { const char *target, *knobs, *msg; } rows[] = {
        {"sm_90a", "dtype=e4m3 layout=rr path=wgmma", "path=wgmma takes layout rc"},
        {"sm_90a", "dtype=e4m3 path=wgmma tile=64x64x64 warps=4x1", "tile K 128"},
        {"sm_90a", "dtype=e4m3 scale=block path=wgmma tile=64x256x128 warps=4x1", "at most 128"},
        {"sm_90a", "dtype=e4m3 scale=block promote=serial path=wgmma tile=64x256x128 warps=4x1", "at most 128"},
        {"sm_90a", "dtype=e4m3 scale=tensor promote=serial path=wgmma", "needs scale=block"},
        {"sm_90", "dtype=e4m3 scale=block promote=serial", "is for path=wgmma"},
        {"sm_90a", "dtype=bf16 scale=tensor path=wgmma", "is for fp8 inputs"},
        {"sm_90a", "dtype=bf16 scale=tensor path=mma", "path=mma takes scale=none"},
        {"sm_90a", "dtype=e4m3 path=wgmma vec_a=4", "TMA only"},
        {"sm_80", "dtype=e5m2", "needs sm_89+"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const rk_target *t = rk_target_find(rows[i].target);
        rk_instance in;
        rk_shape sh;
        if (problem_tuned("gemm", t, sh3, 3, rows[i].knobs, &in, &sh)) fail_msg("%s: %s", rows[i].knobs, rk_error_message());
        if (rk_instance_validate(&in, t) == RK_OK) fail_msg("%s %s: accepted", rows[i].target, rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("%s: message '%s' lacks '%s'", rows[i].knobs, rk_error_message(), rows[i].msg);
    }
    /* K bytes must keep TMA's 16-byte rows */
    rk_instance in;
    rk_shape sh;
    const uint64_t oddk[3] = {256, 256, 200};
    assert_int_equal(problem_tuned("gemm", rk_target_find("sm_90a"), oddk, 3, "dtype=e4m3", &in, &sh), RK_OK);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_ERR_INVALID);
    if (!strstr(rk_error_message(), "multiple of 16") || !strstr(rk_error_message(), "208"))
        fail_msg("%s", rk_error_message());
    /* fp8 names and defaults: out bf16, the scale tag only when set */
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    assert_non_null(strstr(name, "_e4m3_obf16_"));
    assert_null(strstr(name, "_fs"));
}

/* The PTX: m64nNk32 wgmma without transpose immediates; ptxas (where
 * installed) assembles it. */
/* The sm_90a artifact of a 4096^3 GEMM with these knobs; NULL (after a SKIP
 * message) where this build cannot emit PTX. */
static rk_artifact *ptx_4096(const char *knobs) {
    const uint64_t big[3] = {4096, 4096, 4096};
    rk_instance in;
    rk_artifact *a = NULL;
    rk_status st = gemm_ptx("sm_90a", big, knobs, &in, &a);
    if (st == RK_ERR_UNSUPPORTED) {
        print_message("SKIP PTX: %s\n", rk_error_message());
        return NULL;
    }
    if (st) fail_msg("%s: %s", knobs, rk_error_message());
    return a;
}

static void check_ptx(const char *knobs, const char *mma) {
    rk_artifact *a = ptx_4096(knobs);
    if (!a) return;
    const char *ptx = (const char *)a->binary;
    if (!strstr(ptx, mma)) fail_msg("%s: the PTX lacks '%s'", knobs, mma);
    assert_non_null(strstr(ptx, "cp.async.bulk.tensor.2d"));
    if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0 || getenv("ROCKE_PTXAS")) assert_non_null(a->cubin);
    rk_artifact_free(a);
}

static void test_ptx(void **state) {
    (void)state;
    check_ptx("dtype=e4m3 scale=tensor", "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3");
    check_ptx("dtype=e5m2 scale=block", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2");
}

/* The promotion schedules in the PTX: overlap retires a block with
 * wait_group 1 (the next block's group stays in flight) on every schedule;
 * serial only ever waits for all (wait_group 0). */
static void test_ptx_promote(void **state) {
    (void)state;
    static const char *const scheds[] = {"plain", "ws", "persistent", "pingpong"};
    for (int serial = 0; serial < 2; serial++)
        for (size_t i = 0; i < 4; i++) {
            char knobs[128];
            snprintf(knobs, sizeof knobs, "dtype=e4m3 scale=block schedule=%s promote=%s", scheds[i],
                     serial ? "serial" : "overlap");
            rk_artifact *a = ptx_4096(knobs);
            if (!a) return;
            bool one = strstr((const char *)a->binary, "wgmma.wait_group.sync.aligned 1;") != NULL;
            rk_artifact_free(a);
            if (one == (bool)serial) fail_msg("%s: wait_group 1 %s", knobs, one ? "present" : "missing");
        }
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    fprintf(stderr, "test_gemm_fp8: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
            (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scales),          cmocka_unit_test(test_schedules),
        cmocka_unit_test(test_promote_overlap), cmocka_unit_test(test_promote_bits),
        cmocka_unit_test(test_planted_scale_error), cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_ptx),             cmocka_unit_test(test_ptx_promote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
