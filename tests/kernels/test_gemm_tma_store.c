/* rocke tests — the GEMM Hopper path's TMA-store epilogue (epilogue=tma):
 * C staged per consumer warpgroup in shared memory and stored by TMA
 * boxes, on the CPU emulator against the double reference: every schedule
 * (persistent walks reuse the staging tiles), M and N tails clipped by the
 * box, every output type, fused chains, fp8 scales; the refusals; the PTX.
 * Fresh random data; the seed is printed (ROCKE_SEED=N replays). Layer: tests. */
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
    assert_int_equal(in.u.gemm.epilogue, RK_GEMM_EPI_TMA);
    if (c.bad)
        fail_msg("%s %llux%llux%llu seed %llu: %llu/%llu bad, %s", name, (unsigned long long)M, (unsigned long long)N,
                 (unsigned long long)K, (unsigned long long)s, (unsigned long long)c.bad,
                 (unsigned long long)c.total, c.first_bad);
    rk_problem_free(&p);
}

static void test_schedules(void **state) {
    (void)state;
    run_case(67, 72, 136, "path=wgmma epilogue=tma dtype=bf16 tile=64x64x64 warps=4x1 stages=2");
    /* tile N of 96 bytes: plain staging rows; of 384 bytes in f32: three swizzled 128-byte boxes */
    run_case(67, 88, 72, "path=wgmma epilogue=tma dtype=bf16 tile=64x48x64 warps=4x1 stages=2");
    run_case(67, 200, 72, "path=wgmma epilogue=tma dtype=bf16 out_dtype=f32 tile=64x96x64 warps=4x1 stages=2");
    /* schedule=plain with out_dtype = dtype stages C in the B stages: 4 stages of 128 x 256 fit */
    run_case(130, 264, 200, "path=wgmma epilogue=tma dtype=bf16 tile=128x256x64 warps=8x1 stages=4");
    run_case(130, 136, 72, "path=wgmma epilogue=tma dtype=f16 out_dtype=f32 tile=128x128x64 warps=8x1 stages=2");
    run_case(70, 200, 128, "path=wgmma epilogue=tma dtype=bf16 out_dtype=f16 schedule=ws tile=64x256x64 warps=4x1 "
                           "stages=2");
    /* five tiles on two blocks: each consumer's staging tile is rewritten after its store read it */
    run_case(200, 136, 96, "path=wgmma epilogue=tma dtype=f16 schedule=persistent blocks=2 tile=64x64x64 "
                           "warps=4x1 stages=3");
    run_case(200, 136, 96, "path=wgmma epilogue=tma dtype=bf16 schedule=pingpong blocks=2 tile=64x64x64 warps=4x1");
}

static void test_chains_and_fp8(void **state) {
    (void)state;
    run_case(72, 136, 200, "path=wgmma epilogue=tma dtype=bf16 fuse=bias,gelu tile=64x64x64 warps=4x1");
    run_case(65, 104, 256, "path=wgmma epilogue=tma dtype=e4m3 scale=tensor fuse=bias_row,relu");
    run_case(130, 136, 384, "path=wgmma epilogue=tma dtype=e5m2 scale=block schedule=persistent blocks=3 "
                            "tile=128x64x128 warps=8x1 stages=2");
}

static void test_bad_specs(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    const uint64_t sh3[3] = {256, 256, 256};
    const struct { const char *knobs, *msg; } rows[] = {
        {"path=mma epilogue=tma", "path=mma takes direct or cshuffle"},
        {"path=wgmma epilogue=tma dtype=bf16 schedule=ws tile=128x256x64 warps=8x1 stages=4",
         "epilogue=tma stages C there too"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        rk_instance in;
        rk_shape sh;
        assert_int_equal(problem_tuned("gemm", t, sh3, 3, rows[i].knobs, &in, &sh), RK_OK);
        if (rk_instance_validate(&in, t) == RK_OK) fail_msg("%s: accepted", rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("%s: message '%s' lacks '%s'", rows[i].knobs, rk_error_message(), rows[i].msg);
    }
    /* C's rows must keep TMA's 16 bytes */
    rk_instance in;
    rk_shape sh;
    const uint64_t oddn[3] = {256, 250, 256};
    assert_int_equal(problem_tuned("gemm", t, oddn, 3, "path=wgmma epilogue=tma dtype=bf16", &in, &sh), RK_OK);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_ERR_INVALID);
    if (!strstr(rk_error_message(), "N a multiple of 8")) fail_msg("%s", rk_error_message());
    /* asked for at the default tile (schedule=plain), C is staged in the B stages and the ring keeps 4 stages;
     * beside a producer (ws) it drops to 3 so C's 64 KiB of staging fits */
    const uint64_t big[3] = {4096, 4096, 4096};
    assert_int_equal(problem_tuned("gemm", t, big, 3, "epilogue=tma dtype=bf16", &in, &sh), RK_OK);
    assert_int_equal(in.u.gemm.path, RK_GEMM_PATH_WGMMA);
    assert_int_equal(in.u.gemm.schedule, RK_GEMM_SCHED_PLAIN);
    assert_int_equal(in.u.gemm.stages, 4);
    assert_int_equal(rk_instance_validate(&in, t), RK_OK);
    assert_int_equal(problem_tuned("gemm", t, big, 3, "epilogue=tma dtype=bf16 schedule=ws", &in, &sh), RK_OK);
    assert_int_equal(in.u.gemm.stages, 3);
    assert_int_equal(rk_instance_validate(&in, t), RK_OK);
    /* the heuristic keeps the direct stores (the measured ones) unless tma is asked for */
    assert_int_equal(problem_tuned("gemm", t, sh3, 3, "dtype=bf16", &in, &sh), RK_OK);
    assert_int_equal(in.u.gemm.epilogue, RK_GEMM_EPI_DIRECT);
}

static void test_ptx(void **state) {
    (void)state;
    const uint64_t big[3] = {4096, 4096, 4096};
    rk_instance in;
    rk_artifact *a = NULL;
    rk_status st = gemm_ptx("sm_90a", big, "path=wgmma epilogue=tma stages=3 schedule=persistent", &in, &a);
    if (st == RK_ERR_UNSUPPORTED) {
        print_message("SKIP PTX: %s\n", rk_error_message());
        return;
    }
    if (st) fail_msg("%s", rk_error_message());
    const char *ptx = (const char *)a->binary;
    assert_non_null(strstr(ptx, "cp.async.bulk.tensor.2d.global.shared::cta"));
    assert_non_null(strstr(ptx, "cp.async.bulk.commit_group"));
    assert_non_null(strstr(ptx, "cp.async.bulk.wait_group.read"));
    rk_artifact_free(a);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    fprintf(stderr, "test_gemm_tma_store: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
            (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedules), cmocka_unit_test(test_chains_and_fp8), cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
