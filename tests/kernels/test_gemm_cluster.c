/* rocke tests — the GEMM Hopper path with cluster=2 (pairs of blocks; where
 * a pair's tiles share B, each block loads half of it by a multicast TMA into
 * both), on the CPU emulator against the double reference: K-major and
 * N-major B, pairs that share B and pairs that straddle two B tiles (an odd
 * count of M tiles), a grid rounded up to whole pairs (the last block past
 * every tile), K tails, the TMA-store epilogue staged in the B stages; the
 * refusals; the PTX's multicast and cluster barriers. Fresh random data; the
 * seed is printed (ROCKE_SEED=N replays). Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rocke/compile.h"
#include "rocke/kernels.h"
#include "../support/gemm_cases.h"
#include "../support/problem_emu.h"

static uint64_t seed;
static unsigned runs;

static void run_case(uint64_t M, uint64_t N, uint64_t K, const char *knobs) {
    rk_instance in;
    rk_problem p;
    rk_problem_diff c;
    char name[256];
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    if (gemm_emu_case(M, N, K, knobs, s, &in, &p, &c, name, sizeof name)) fail_msg("%s: %s", knobs, rk_error_message());
    assert_int_equal(in.u.gemm.cluster, 2);
    if (c.bad)
        fail_msg("%s %llux%llux%llu seed %llu: %llu/%llu bad, %s", name, (unsigned long long)M, (unsigned long long)N,
                 (unsigned long long)K, (unsigned long long)s, (unsigned long long)c.bad,
                 (unsigned long long)c.total, c.first_bad);
    rk_problem_free(&p);
}

static void test_pairs(void **state) {
    (void)state;
    /* 3 x 3 tiles of 64 x 128 in grouped-M order: pairs (0,1) share B, (2,3) straddle two B tiles, the tenth block
     * is past every tile; K 200 ends in a tail */
    run_case(150, 300, 200, "path=wgmma cluster=2 dtype=bf16 tile=64x128x64 warps=4x1 stages=2");
    run_case(150, 296, 200, "path=wgmma cluster=2 layout=rr dtype=f16 tile=64x128x64 warps=4x1 stages=3");
    run_case(136, 264, 72, "path=wgmma cluster=2 layout=cc dtype=bf16 out_dtype=f32 tile=64x128x64 warps=4x1 "
                           "stages=2 epilogue=tma");
    /* the heuristic's tile with C staged in the B stages, four of them */
    run_case(250, 264, 136, "path=wgmma cluster=2 dtype=bf16 tile=128x256x64 warps=8x1 stages=4 epilogue=tma");
}

/* The warp-specialized schedules: every consumer warp releases a stage to both blocks of its pair. */
static void test_pairs_ws(void **state) {
    (void)state;
    /* one tile a block: 3 x 3 tiles, pairs sharing B and straddling, the tenth block past every tile */
    run_case(150, 300, 200, "path=wgmma schedule=ws cluster=2 dtype=bf16 tile=64x128x64 warps=4x1 stages=2");
    /* K of one tile (fewer K tiles than stages: a stage's previous fill is in the same round) */
    run_case(136, 264, 40, "path=wgmma schedule=ws cluster=2 layout=rr dtype=f16 tile=128x128x64 warps=8x1 "
                           "stages=3 epilogue=tma");
    /* persistent over 4 blocks: 3 x 3 = 9 tiles, so block 0 walks 3 rounds and its partner 2 (the last round
     * unshared, its releases doubled at home); 4 x 3 = 12 tiles across group boundaries (group_m 2) */
    run_case(150, 300, 136, "path=wgmma schedule=persistent blocks=4 cluster=2 dtype=bf16 tile=64x128x64 "
                            "warps=4x1 stages=3");
    run_case(256, 296, 72, "path=wgmma schedule=persistent blocks=4 cluster=2 group_m=2 layout=cc dtype=bf16 "
                           "tile=64x128x64 warps=4x1 stages=2 epilogue=tma");
    run_case(250, 264, 200, "path=wgmma schedule=persistent blocks=2 cluster=2 dtype=bf16 tile=128x256x64 "
                            "warps=8x1 stages=3 epilogue=tma");
    /* pingpong: consumers on alternate tiles, one warpgroup's warps release each stage */
    run_case(200, 300, 136, "path=wgmma schedule=pingpong blocks=4 cluster=2 dtype=bf16 tile=64x128x64 warps=4x1 "
                            "stages=3");
}

static void test_bad_specs(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    const uint64_t sh3[3] = {512, 512, 512};
    const struct { const char *family, *knobs, *msg; } rows[] = {
        {"gemm", "path=mma cluster=2", "legal here cluster=0"},
        {"gemm", "path=wgmma schedule=persistent blocks=3 cluster=2", "'blocks' must be even"},
        {"gemm", "path=wgmma schedule=persistent blocks=132 cluster=2 pad=ab", "not offered with pad"},
        {"gemm", "path=wgmma cluster=2 vec_a=4", "both operands must arrive by TMA"},
        {"gemm", "path=wgmma cluster=2 layout=rr tile=64x64x64 warps=4x1", "tile N must be 128 or 256"},
        {"gemm", "path=wgmma cluster=2 dtype=e4m3 scale=block", "not offered with scale=block"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        rk_instance in;
        rk_shape sh;
        assert_int_equal(problem_tuned(rows[i].family, t, sh3, 3, rows[i].knobs, &in, &sh), RK_OK);
        if (rk_instance_validate(&in, t) == RK_OK) fail_msg("%s: accepted", rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("%s: message '%s' lacks '%s'", rows[i].knobs, rk_error_message(), rows[i].msg);
    }
}

static void test_ptx(void **state) {
    (void)state;
    const uint64_t big[3] = {4096, 4096, 4096};
    rk_instance in;
    rk_artifact *a = NULL;
    rk_status st = gemm_ptx("sm_90a", big, "path=wgmma cluster=2", &in, &a);
    if (st == RK_ERR_UNSUPPORTED) {
        print_message("SKIP PTX: %s\n", rk_error_message());
        return;
    }
    if (st) fail_msg("%s", rk_error_message());
    const char *ptx = (const char *)a->binary;
    assert_non_null(strstr(ptx, ".multicast::cluster"));
    assert_non_null(strstr(ptx, "barrier.cluster.arrive"));
    assert_non_null(strstr(ptx, "barrier.cluster.wait"));
    assert_non_null(strstr(ptx, "fence.mbarrier_init"));
    rk_artifact_free(a);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    fprintf(stderr, "test_gemm_cluster: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
            (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairs), cmocka_unit_test(test_pairs_ws), cmocka_unit_test(test_bad_specs), cmocka_unit_test(test_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
