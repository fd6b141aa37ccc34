/* rocke tests — the GEMM families on the CPU emulator against the double
 * host reference: every target (gfx942, gfx950, sm_80, sm_90a) x layout x
 * input type at odd shapes (1x1x1, 17x33x65, 129x257x31: K not a multiple of
 * the vector width, so the scalar copy path) and at aligned ones (async
 * copies, several stages), every output type, fused epilogue chains,
 * batched problems; leading dimensions larger than the matrix (a harness
 * of its own with a matmul written here); and a table of bad specs, each
 * with the message it must give. Fresh random data; the seed is printed
 * (ROCKE_SEED=N replays). */
#include <math.h>
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
#include "../src/base/fp.h"
#include "../support/problem_emu.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static uint64_t seed;
static unsigned runs;

static void set_knobs(rk_instance *in, const char *knobs, uint64_t *locked) {
    uint64_t more;
    if (problem_knobs_set(in, knobs, &more)) fail_msg("%s: %s", knobs, rk_error_message());
    *locked |= more;
}

/* A kernel with a workspace must leave it ready for the next launch and
 * give the same bits again: launch once more over a cleared C, compare. */
static void relaunch_same(rk_problem *p, const rk_target *t, rk_kernel *k, const rk_shape *sh, const char *name) {
    int c = -1;
    bool work = false;
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (p->sig.p[i].role == RK_KP_WORK) work = true;
        if (!strcmp(p->sig.p[i].name, "C")) c = (int)i;
    }
    if (!work) return;
    rk_host_buf *C = &p->buf[c];
    void *first = malloc(C->bytes);
    memcpy(first, C->data, C->bytes);
    memset(C->data, 0, C->bytes);
    if (problem_emu_launch(t, k, p, sh)) fail_msg("%s: relaunch: %s", name, rk_error_message());
    if (memcmp(first, C->data, C->bytes)) fail_msg("%s: the second launch gave other bits", name);
    free(first);
}

/* Build fam for target with knobs tuned for the shape, run it on the
 * emulator and check every output element. */
static void run_case(const char *fam, const char *target, const uint64_t *ext, uint32_t rank, const char *knobs) {
    const rk_target *t = rk_target_find(target);
    rk_family_id f;
    assert_int_equal(rk_family_parse(fam, &f), RK_OK);
    rk_instance in;
    rk_instance_default(f, &in);
    uint64_t locked = 0;
    set_knobs(&in, knobs, &locked);
    rk_shape sh;
    assert_int_equal(rk_shape_default(f, &sh), RK_OK);
    assert_int_equal(rk_shape_update(f, &sh, NULL, ext, rank, false), RK_OK);
    assert_int_equal(rk_instance_tune(&in, t, &sh, locked), RK_OK);
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    if (rk_instance_check_shape(&in, &sh)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    assert_int_equal(rk_problem_init(&p, &in, &sh, s), RK_OK);
    if (strstr(knobs, "scale")) assert_int_equal(rk_problem_set_scalar(&p, "alpha", -0.75), RK_OK);
    if (problem_emu_launch(t, k, &p, &sh)) fail_msg("%s %s: launch: %s", target, name, rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad) fail_msg("%s %s seed %llu: %llu/%llu bad, %s", target, name, (unsigned long long)s,
                        (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    relaunch_same(&p, t, k, &sh, name);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static const char *const targets[] = {"gfx942", "gfx950", "sm_80", "sm_90a"};
static const char *const layouts[] = {"rr", "rc", "cr", "cc"};

static void test_odd_shapes(void **state) {
    (void)state;
    const uint64_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {129, 257, 31}};
    const char *outs[] = {"f16", "bf16", "f32"};
    int n = 0;
    for (size_t t = 0; t < 4; t++)
        for (size_t l = 0; l < 4; l++)
            for (int d = 0; d < 2; d++)
                for (size_t s = 0; s < 3; s++) {
                    char knobs[128];
                    snprintf(knobs, sizeof knobs, "layout=%s dtype=%s out_dtype=%s", layouts[l], d ? "bf16" : "f16",
                             outs[n++ % 3]);
                    run_case("gemm", targets[t], shapes[s], 3, knobs);
                }
}

/* Shapes whose contiguous extents take 8-element vectors: async copies, and
 * explicit tiles, warp grids, stage counts and vector widths. */
static void test_aligned_pipelines(void **state) {
    (void)state;
    const uint64_t sh[3] = {136, 200, 104};
    for (size_t t = 0; t < 4; t++)
        for (size_t l = 0; l < 4; l++) {
            char knobs[128];
            snprintf(knobs, sizeof knobs, "layout=%s dtype=%s", layouts[l], l % 2 ? "bf16" : "f16");
            run_case("gemm", targets[t], sh, 3, knobs);
        }
    const uint64_t big[3] = {192, 160, 96};
    run_case("gemm", "sm_90a", big, 3, "tile=128x128x32 warps=2x2 stages=4 layout=rc");
    run_case("gemm", "sm_90a", big, 3, "tile=64x64x32 warps=2x2 stages=3 layout=rr vec_a=4 vec_b=2");
    run_case("gemm", "sm_90a", big, 3, "tile=64x128x64 warps=1x4 stages=2 layout=cc group_m=2");
    run_case("gemm", "sm_80", big, 3, "tile=32x64x32 warps=2x2 stages=1 layout=cr");
    run_case("gemm", "sm_90a", big, 3, "tile=64x64x32 warps=2x2 stages=5 layout=rc atom=mma_m16n8k8_f32_f16");
    run_case("gemm", "gfx942", big, 3, "tile=64x64x32 warps=2x2 stages=2 atom=mfma_f32_16x16x16_f16");
    run_case("gemm", "gfx950", big, 3, "tile=128x64x64 warps=2x1 stages=3 atom=mfma_f32_16x16x32_bf16 dtype=bf16");
    run_case("gemm", "gfx942", big, 3, "tile=64x64x32 warps=1x1 stages=1 layout=cc");
}

/* An odd K (or M / N along a column-major operand): 16-byte LDS chunks
 * gathered from 2-byte reads, held in registers across the math when
 * pipelined; many K tiles so both the unchecked inner tiles and the checked
 * last one run, with stage counts 1..4 and M, N tails. */
static void test_gathered_pipelines(void **state) {
    (void)state;
    const uint64_t sh[3] = {45, 38, 203}, colmajor[3] = {33, 71, 96};
    const char *stages[] = {"1", "2", "3", "4"};
    for (size_t t = 0; t < 4; t++)
        for (size_t l = 0; l < 4; l++) {
            char knobs[160];
            snprintf(knobs, sizeof knobs, "layout=%s dtype=%s tile=32x32x32 warps=1x2 stages=%s", layouts[l],
                     l % 2 ? "bf16" : "f16", stages[(t + l) % 4]);
            run_case("gemm", targets[t], sh, 3, knobs);
        }
    run_case("gemm", "sm_90a", colmajor, 3, "layout=cc tile=32x64x32 warps=2x2 stages=3");
    run_case("gemm", "gfx942", colmajor, 3, "layout=cr tile=32x32x32 warps=1x1 stages=2");
    const uint64_t b[4] = {3, 19, 23, 101};
    run_case("batched_gemm", "sm_80", b, 4, "layout=rc stages=3");
}

/* Gathered 16-bit chunks read as two aligned 16-byte loads and a shift
 * (tile_shift.c) wherever the aligned window lies in the matrix, piece by
 * piece elsewhere: matrices smaller than one window, the first and last
 * units of a matrix, every row shift 0..7 (odd and even K), on the mma.sync
 * gathered copy and on the wgmma kernel's copied operands. */
static void test_shifted_units(void **state) {
    (void)state;
    const uint64_t shapes[][3] = {{1, 1, 3}, {2, 3, 5}, {3, 5, 23}, {9, 7, 77}, {17, 40, 131}, {8, 8, 4093}};
    for (size_t i = 0; i < COUNT(shapes); i++) {
        run_case("gemm", "sm_90a", shapes[i], 3, "layout=rc dtype=bf16 path=mma tile=32x32x32 warps=1x2 stages=3");
        run_case("gemm", "sm_80", shapes[i], 3, "layout=rr dtype=f16 tile=32x32x32 warps=1x2 stages=1");
        run_case("gemm", "sm_90a", shapes[i], 3, "layout=rc dtype=f16 path=wgmma schedule=plain tile=64x64x64");
    }
    const uint64_t cm[3] = {37, 29, 64};   /* column-major A: the shift runs along M */
    run_case("gemm", "sm_90a", cm, 3, "layout=cc dtype=bf16 path=wgmma schedule=plain tile=64x64x64");
}

static void test_epilogues(void **state) {
    (void)state;
    const uint64_t sh[3] = {67, 72, 40};
    const char *chains[] = {"bias", "bias,gelu", "bias_row,silu", "scale,add,relu", "mul,clamp(-0.5:0.75)",
                            "bias,add,scale,tanh", "sigmoid,bias_row,mul"};
    for (size_t c = 0; c < sizeof chains / sizeof chains[0]; c++)
        for (size_t t = 0; t < 4; t += 3) {
            char knobs[160];
            snprintf(knobs, sizeof knobs, "fuse=%s layout=%s out_dtype=%s", chains[c], layouts[c % 4],
                     c % 2 ? "f32" : "bf16");
            run_case("gemm", targets[t], sh, 3, knobs);
        }
}

static void test_batched(void **state) {
    (void)state;
    const uint64_t a[4] = {3, 33, 40, 24}, b[4] = {2, 17, 9, 65};
    for (size_t t = 0; t < 4; t++) {
        run_case("batched_gemm", targets[t], a, 4, "layout=rc");
        run_case("batched_gemm", targets[t], b, 4, "layout=cr dtype=bf16 out_dtype=f32 fuse=bias,relu");
    }
}

/* ---- split-K and the skinny-M path ------------------------------------------------------------ */
static void test_split_k(void **state) {
    (void)state;
    /* 17x33x65: the skinny tile takes 2 K tiles, so split 3 leaves one split empty */
    const uint64_t odd[3] = {17, 33, 65}, deep[3] = {129, 57, 300}, mid[3] = {45, 70, 200};
    for (size_t t = 0; t < 4; t++) {
        for (size_t l = 0; l < 4; l++) {
            char knobs[160];
            snprintf(knobs, sizeof knobs, "split_k=3 layout=%s dtype=%s", layouts[l], l % 2 ? "bf16" : "f16");
            run_case("gemm", targets[t], odd, 3, knobs);
        }
        run_case("gemm", targets[t], deep, 3, "split_k=4 fuse=bias,gelu out_dtype=bf16 layout=rr");
        run_case("gemm", targets[t], mid, 3, "split_k=5 split_reduce=atomic out_dtype=f32 layout=cc");
    }
    const uint64_t b[4] = {2, 33, 40, 130};
    run_case("batched_gemm", "sm_90a", b, 4, "split_k=3 fuse=bias_row,relu layout=cr");
    run_case("batched_gemm", "gfx950", b, 4, "split_k=2 split_reduce=atomic out_dtype=f32");
    run_case("gemm", "sm_80", deep, 3, "split_k=16 tile=32x32x16 warps=1x1 stages=3");
    /* more batches than elements of one C (one tile each): the tiles' counters stay inside Work */
    const uint64_t many[4] = {20, 2, 3, 64};
    run_case("batched_gemm", "sm_80", many, 4, "split_k=2 layout=rr");
}

static void test_skinny(void **state) {
    (void)state;
    for (size_t t = 0; t < 4; t++) {
        const rk_target *tg = rk_target_find(targets[t]);
        const uint64_t ms[] = {1, 16, 40, 64, 65};
        for (size_t i = 0; i < 5; i++) {
            rk_instance in;
            rk_instance_default(RK_FAMILY_GEMM, &in);
            rk_shape sh;
            uint64_t ext[3] = {ms[i], 8192, 8192};
            rk_shape_default(RK_FAMILY_GEMM, &sh);
            rk_shape_update(RK_FAMILY_GEMM, &sh, NULL, ext, 3, false);
            assert_int_equal(rk_instance_tune(&in, tg, &sh, 0), RK_OK);
            assert_int_equal(rk_instance_validate(&in, tg), RK_OK);
            const rk_gemm_spec *g = &in.u.gemm;
            uint64_t units = (8192 + g->tile[1] - 1) / g->tile[1] * g->split_k;
            units *= (ms[i] + g->tile[0] - 1) / g->tile[0];
            if (ms[i] > 64) {
                /* not a decode shape: on wgmma the tile of least modelled time (one wave of 64 x 128 tiles on
                 * 128 of 132 SMs beats two of 64 x 64); else the general choice, split until every unit has
                 * a block */
                if (g->path == RK_GEMM_PATH_WGMMA) {
                    assert_int_equal(g->tile[0], 64);
                    assert_int_equal(g->tile[1], 128);
                    assert_int_equal(g->split_k, 1);
                    assert_true(units * 8 >= tg->compute_units * 7);
                } else {
                    assert_true(units >= tg->compute_units);
                }
                continue;
            }
            /* sm_90a from M = 17: wgmma's 64-row tiles, K whole (128 of them at N 8192) */
            bool wg = (tg->features & RK_FEAT_SM90A) && ms[i] > 16;
            assert_int_equal(g->path, wg ? RK_GEMM_PATH_WGMMA : RK_GEMM_PATH_MMA);
            if (wg) {
                assert_int_equal(g->tile[0], 64);
                assert_int_equal(g->split_k, 1);
                continue;
            }
            /* the rows rounded to 16, warps along N, every unit twice busy */
            assert_int_equal(g->tile[0], ms[i] <= 16 ? 16 : (ms[i] + 15) / 16 * 16);
            assert_int_equal(g->warps[0], 1);
            assert_int_equal(g->warps[1], 4);
            if (units < 2ull * tg->compute_units) fail_msg("%s M=%llu: %llu blocks", targets[t],
                                                           (unsigned long long)ms[i], (unsigned long long)units);
        }
        const uint64_t small[3] = {5, 136, 520}, odd[3] = {3, 41, 97};
        run_case("gemm", targets[t], small, 3, "layout=rc");
        run_case("gemm", targets[t], odd, 3, "layout=rr dtype=bf16 fuse=bias,silu");
    }
}

/* ---- the weight-streaming path (path=stream) ------------------------------------------------- */
/* The tuned spec of gemm M x N x K on target (knobs locked). */
static rk_gemm_spec tuned_spec(const char *target, uint64_t M, uint64_t N, uint64_t K, const char *knobs) {
    const rk_target *t = rk_target_find(target);
    rk_instance in;
    rk_instance_default(RK_FAMILY_GEMM, &in);
    uint64_t locked = 0;
    set_knobs(&in, knobs, &locked);
    rk_shape sh;
    uint64_t ext[3] = {M, N, K};
    rk_shape_default(RK_FAMILY_GEMM, &sh);
    rk_shape_update(RK_FAMILY_GEMM, &sh, NULL, ext, 3, false);
    assert_int_equal(rk_instance_tune(&in, t, &sh, locked), RK_OK);
    if (rk_instance_validate(&in, t)) fail_msg("%s %s: %s", target, knobs, rk_error_message());
    return in.u.gemm;
}

/* The heuristic's choice (decode shapes in layout rc on NVIDIA, nothing
 * else), then runs: M and N tails, every 16-row count, one and several K
 * tiles, a K tail inside the last tile, split-K both ways, chains, bf16 and
 * f16 in, every output type, batches, explicit warps and chunk counts. */
static void test_stream(void **state) {
    (void)state;
    const char *nv[] = {"sm_80", "sm_90a"};
    for (int i = 0; i < 2; i++) {
        const uint64_t ms[] = {1, 16, 17, 40, 64};
        for (size_t j = 0; j < 5; j++) {
            /* the heuristic keeps the skinny mma kernel up to M = 16 and, on sm_90a, wgmma's 64-row
             * tiles above it (both measured on the H200, sessions 6 and 8); path=stream gets its own tiles */
            rk_gemm_path want = i == 1 && ms[j] > 16 ? RK_GEMM_PATH_WGMMA : RK_GEMM_PATH_MMA;
            assert_int_equal(tuned_spec(nv[i], ms[j], 8192, 8192, "").path, want);
            rk_gemm_spec g = tuned_spec(nv[i], ms[j], 8192, 8192, "path=stream");
            assert_int_equal(g.path, RK_GEMM_PATH_STREAM);
            assert_int_equal(g.tile[0], (ms[j] + 15) / 16 * 16);
            assert_true(g.split_k > 1 && g.stages == 1 && g.warps[0] == 1);
        }
        assert_int_equal(tuned_spec(nv[i], 65, 8192, 8192, "").path != RK_GEMM_PATH_STREAM, true);
        assert_int_equal(tuned_spec(nv[i], 16, 8192, 8191, "").path, RK_GEMM_PATH_MMA);   /* odd K: gathered */
        assert_int_equal(tuned_spec(nv[i], 16, 8192, 8192, "layout=rr").path, RK_GEMM_PATH_MMA);
        assert_int_equal(tuned_spec(nv[i], 16, 8192, 8192, "path=mma").path, RK_GEMM_PATH_MMA);
    }
    assert_int_equal(tuned_spec("gfx950", 16, 8192, 8192, "").path, RK_GEMM_PATH_MMA);
    const struct { const char *target; uint64_t m, n, k; const char *knobs; } rows[] = {
        {"sm_80", 1, 1, 8, "path=stream"},
        {"sm_90a", 17, 33, 72, "path=stream dtype=bf16 out_dtype=f32"},
        {"sm_90a", 5, 136, 520, "path=stream"},
        {"sm_80", 40, 100, 264, "path=stream dtype=bf16 out_dtype=bf16"},
        {"sm_90a", 64, 37, 1000, "path=stream split_k=3 fuse=bias,gelu"},
        {"sm_80", 13, 77, 136, "path=stream dtype=bf16 split_k=2 split_reduce=atomic out_dtype=f32"},
        {"sm_90a", 29, 71, 328, "path=stream tile=32x64x96 warps=1x2 split_k=4 fuse=bias_row,silu"},
        {"sm_80", 3, 131, 200, "path=stream tile=16x16x256 warps=1x2"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const uint64_t ext[3] = {rows[r].m, rows[r].n, rows[r].k};
        run_case("gemm", rows[r].target, ext, 3, rows[r].knobs);
    }
    const uint64_t b[4] = {3, 9, 41, 96};
    run_case("batched_gemm", "sm_90a", b, 4, "path=stream fuse=bias");
}

/* ---- leading dimensions larger than the matrix ------------------------------------------------ */
static void test_leading_dims(void **state) {
    (void)state;
    const char *tg[] = {"sm_90a", "gfx942", "sm_80"};
    for (int ti = 0; ti < 3; ti++)
        for (int l = 0; l < 4; l++) {
            if (ti == 2 && l != RK_GEMM_RC) continue;   /* sm_80: path=stream (layout rc) */
            const rk_target *t = rk_target_find(tg[ti]);
            rk_instance in;
            rk_instance_default(RK_FAMILY_GEMM, &in);
            uint64_t locked = 0;
            char knobs[64];
            snprintf(knobs, sizeof knobs, "layout=%s out_dtype=f32 path=%s", layouts[l],
                     ti == 2 ? "stream" : "mma");   /* pitches are lda/ldb */
            set_knobs(&in, knobs, &locked);
            const uint32_t M = 45, N = 38, K = 56;
            rk_shape sh;
            uint64_t ext[3] = {M, N, K};
            rk_shape_default(RK_FAMILY_GEMM, &sh);
            rk_shape_update(RK_FAMILY_GEMM, &sh, NULL, ext, 3, false);
            assert_int_equal(rk_instance_tune(&in, t, &sh, locked), RK_OK);
            /* padded pitches, multiples of the vector width the heuristic chose */
            bool ar = l < 2, br = l % 2 == 0;
            uint32_t lda = (ar ? K : M) + 16, ldb = (br ? N : K) + 24, ldc = N + 3;
            rk_kernel *k = NULL;
            if (rk_instance_build(&in, t, &k)) fail_msg("%s", rk_error_message());
            size_t na = (size_t)lda * (ar ? M : K), nb = (size_t)ldb * (br ? K : N), nc = (size_t)ldc * M;
            uint16_t *A = malloc(na * 2), *B = malloc(nb * 2);
            float *C = malloc(nc * 4);
            for (size_t i = 0; i < na; i++) A[i] = rk_f32_to_f16((float)((int)(i * 7 % 17) - 8) / 8);
            for (size_t i = 0; i < nb; i++) B[i] = rk_f32_to_f16((float)((int)(i * 5 % 13) - 6) / 4);
            for (size_t i = 0; i < nc; i++) C[i] = 1234.5f;
            rk_emu *e = rk_emu_new(t, NULL);
            uint64_t ad[3];
            assert_int_equal(rk_emu_register(e, A, na * 2, "A", &ad[0]), RK_OK);
            assert_int_equal(rk_emu_register(e, B, nb * 2, "B", &ad[1]), RK_OK);
            assert_int_equal(rk_emu_register(e, C, nc * 4, "C", &ad[2]), RK_OK);
            int32_t sc[6] = {(int32_t)M, (int32_t)N, (int32_t)K, (int32_t)lda, (int32_t)ldb, (int32_t)ldc};
            void *args[9] = {&ad[0], &ad[1], &ad[2], &sc[0], &sc[1], &sc[2], &sc[3], &sc[4], &sc[5]};
            uint32_t g[3], b[3];
            rk_instance_grid(&in, &sh, g, b);
            if (rk_emu_launch(e, k, g, b, 0, args)) fail_msg("%s", rk_error_message());
            for (uint32_t m = 0; m < M; m++)
                for (uint32_t n = 0; n < ldc; n++) {
                    if (n >= N) {   /* the pitch's padding stays untouched */
                        assert_true(C[m * ldc + n] == 1234.5f);
                        continue;
                    }
                    double want = 0;
                    for (uint32_t kk = 0; kk < K; kk++) {
                        double av = rk_f16_to_f32(A[ar ? m * lda + kk : kk * lda + m]);
                        double bv = rk_f16_to_f32(B[br ? kk * ldb + n : n * ldb + kk]);
                        want += av * bv;
                    }
                    if (fabs(C[m * ldc + n] - want) > 1e-4)
                        fail_msg("%s %s C[%u,%u] = %g want %g", tg[ti], layouts[l], m, n, C[m * ldc + n], want);
                }
            rk_emu_free(e);
            rk_kernel_free(k);
            free(A); free(B); free(C);
        }
}

/* ---- bad specs -------------------------------------------------------------------------------- */
/* ---- the C-shuffle epilogue and the XCD remap ----------------------------------------------- */
/* Every target and layout at tails (M, N not tile multiples, odd N so the
 * vector stores fall back), each output type, a chain; then explicit tiles
 * whose chunk count is not a multiple of the threads, and the remap. */
static void test_cshuffle(void **state) {
    (void)state;
    const uint64_t shapes[][3] = {{37, 45, 40}, {70, 136, 24}};
    const char *outs[] = {"f16", "bf16", "f32"};
    int n = 0;
    for (size_t t = 0; t < 4; t++)
        for (size_t l = 0; l < 4; l++) {
            char knobs[160];
            snprintf(knobs, sizeof knobs, "epilogue=cshuffle layout=%s dtype=%s out_dtype=%s%s", layouts[l],
                     l % 2 ? "bf16" : "f16", outs[n % 3], n % 4 == 1 ? " fuse=bias,scale,gelu" : "");
            run_case("gemm", targets[t], shapes[n++ % 2], 3, knobs);
        }
    const uint64_t odd[3] = {50, 77, 32}, b[4] = {2, 33, 40, 24};
    run_case("gemm", "gfx942", odd, 3, "epilogue=cshuffle tile=64x96x32 warps=2x1 stages=1 fuse=bias_row,add,relu");
    run_case("gemm", "sm_80", odd, 3, "epilogue=cshuffle tile=48x32x32 warps=1x1 out_dtype=f32 fuse=mul,tanh");
    run_case("gemm", "sm_90a", odd, 3, "epilogue=cshuffle split_k=2 fuse=bias");
    run_case("batched_gemm", "gfx950", b, 4, "epilogue=cshuffle layout=cr out_dtype=bf16 fuse=bias,silu");
    run_case("batched_gemm", "sm_80", b, 4, "epilogue=cshuffle layout=rr");
    const uint64_t many[3] = {300, 260, 32};
    run_case("gemm", "gfx942", many, 3, "xcd=8 tile=32x32x32 warps=1x1 group_m=4");
    run_case("gemm", "gfx950", many, 3, "xcd=4 tile=32x32x32 warps=1x1 group_m=1 epilogue=cshuffle");
    run_case("batched_gemm", "gfx942", b, 4, "xcd=2 group_m=2 tile=16x16x32 warps=1x1");
}

static void test_bad_specs(void **state) {
    (void)state;
    const struct { const char *target, *knobs, *msg; } rows[] = {
        {"sm_90a", "tile=100x128x32", "must be 3 values joined by 'x', each one of 8|16|32"},
        {"sm_90a", "tile=96x128x32 warps=4x2", "tile M a multiple of 64"},
        {"sm_90a", "tile=128x128x24", "(got '128x128x24')"},
        {"gfx942", "stages=5 wave=64", "bytes of LDS"},
        {"sm_90a", "tile=256x256x64 warps=1x1", "accumulators"},
        {"sm_90a", "tile=128x128x128 stages=6", "bytes of LDS"},
        {"sm_90a", "warps=8x8", "threads"},
        {"sm_90a", "atom=mfma_f32_16x16x16_f16", "not available on sm_90a"},
        {"sm_90a", "atom=wgmma_m64n8k16_f32_f16", "warpgroup atom"},
        {"sm_90a", "dtype=bf16 atom=mma_m16n8k16_f32_f16", "does not multiply bf16"},
        {"sm_90a", "dtype=f32", "knob 'dtype' must be one of f16|bf16|"},
        {"gfx942", "wave=32", "64-lane waves"},
        {"sm_90a", "vec_a=3", "must be one of 1|2|4|8"},
        {"sm_90a", "fuse=bias,bias,bias,bias,bias", "at most 4 bias"},
        {"sm_90a", "fuse=bias,wobble", "unknown step 'wobble'"},
        {"sm_90a", "layout=rx", "must be one of rr|rc|cr|cc"},
        {"sm_90a", "split_k=17", "split_k"},
        {"sm_90a", "split_reduce=tree", "must be one of workspace|atomic"},
        {"gfx950", "wave=64 split_k=2 split_reduce=atomic", "out_dtype must be f32 (got f16)"},
        {"sm_90a", "split_k=2 split_reduce=atomic out_dtype=f32 fuse=relu", "cannot apply --fuse"},
        {"sm_90a", "epilogue=shuffle", "must be one of direct|cshuffle"},
        {"sm_90a", "xcd=8", "AMD dies"},
        {"gfx942", "wave=64 xcd=3", "must be one of 0|1|2|4|8|16"},
        {"sm_90a", "path=wgmma layout=rc epilogue=cshuffle xcd=0", "cshuffle is for path=mma"},
        {"gfx942", "wave=64 tile=256x256x32 warps=4x4 stages=1 epilogue=cshuffle", "stages the 256x256 tile as f32"},
        {"gfx950", "wave=64 path=stream stages=1", "takes path=mma"},
        {"sm_90a", "path=stream stages=1 layout=rr", "layout rc"},
        {"sm_90a", "path=stream stages=1 layout=rc vec_a=4", "vec_a and vec_b must be 8"},
        {"sm_90a", "path=stream stages=3 layout=rc", "stages must be 1"},
        {"sm_90a", "path=stream stages=1 layout=rc warps=2x2", "warps must be 1xW"},
        {"sm_90a", "path=stream stages=1 layout=rc tile=16x128x48 warps=1x4", "32-K chunks"},
        {"sm_90a", "path=stream stages=1 layout=rc tile=64x256x256 warps=1x4", "registers of loads"},
        {"sm_90a", "path=stream stages=1 layout=rc tile=16x128x64 warps=1x4 epilogue=cshuffle", "epilogue must be direct"},
        {"sm_90a", "path=stream stages=1 layout=rc tile=128x128x64 warps=1x4", "tile M 16, 32, 48 or 64"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const rk_target *t = rk_target_find(rows[i].target);
        rk_instance in;
        rk_instance_default(RK_FAMILY_GEMM, &in);
        in.u.gemm.wave = t->wave_size;
        rk_status st = RK_OK;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", rows[i].knobs);
        for (char *tok = strtok(buf, " "); tok && !st; tok = strtok(NULL, " ")) {
            char *eq = strchr(tok, '=');
            *eq = 0;
            st = rk_instance_set(&in, tok, eq + 1, NULL);
        }
        if (!st) st = rk_instance_validate(&in, t);
        if (st == RK_OK) fail_msg("row %zu (%s) was accepted", i, rows[i].knobs);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("row %zu (%s): message '%s' lacks '%s'", i, rows[i].knobs, rk_error_message(), rows[i].msg);
    }
    /* a shape the vectors cannot read */
    rk_instance in;
    rk_instance_default(RK_FAMILY_GEMM, &in);
    rk_shape sh;
    uint64_t ext[3] = {64, 64, 60};
    rk_shape_default(RK_FAMILY_GEMM, &sh);
    rk_shape_update(RK_FAMILY_GEMM, &sh, NULL, ext, 3, false);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "K = 60 is not a multiple of vec_a = 8"));
    assert_non_null(strstr(rk_error_message(), "--vec-a 4"));
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_gemm_emu: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed, (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd_shapes),   cmocka_unit_test(test_aligned_pipelines),
        cmocka_unit_test(test_gathered_pipelines), cmocka_unit_test(test_shifted_units),
        cmocka_unit_test(test_epilogues),    cmocka_unit_test(test_batched),
        cmocka_unit_test(test_leading_dims), cmocka_unit_test(test_split_k),
        cmocka_unit_test(test_skinny),       cmocka_unit_test(test_stream),
        cmocka_unit_test(test_cshuffle),
        cmocka_unit_test(test_bad_specs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
