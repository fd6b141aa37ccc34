/* rocke tests — tile.wgmma_rs (A from registers) and the accumulator ->
 * register-A helper on the emulator, against this file's own reading of the
 * PTX ISA's fragment maps: random f16/bf16 A fragments loaded per thread, B
 * in LDS K-major (core matrices) or N-major under the 128-byte swizzle, a
 * double-precision reference; then an accumulator turned into A fragments
 * and multiplied again (FlashAttention-3's P V). Layer: tests. */
#include "hopper_test.h"

#include "rocke/tile_hopper.h"

/* PTX: register A of m64nNk16 (.f16/.bf16), thread t, slot s (warp w = t / 32 holds rows 16w..) */
static uint32_t a_row(uint32_t t, uint32_t s) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((s >> 1) & 1); }
static uint32_t a_k(uint32_t t, uint32_t s) { return 2 * (t % 4) + (s & 1) + 8 * (s >> 2); }
/* PTX: the m64nNk16 f32 accumulator, thread t, element i */
static uint32_t d_row(uint32_t t, uint32_t i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i >> 1) & 1); }
static uint32_t d_col(uint32_t t, uint32_t i) { return 8 * (i / 4) + 2 * (t % 4) + (i & 1); }

static uint16_t enc(double v, bool bf) { return bf ? rk_f32_to_bf16((float)v) : rk_f32_to_f16((float)v); }
static double dec(uint16_t h, bool bf) { return bf ? rk_bf16_to_f32(h) : rk_f16_to_f32(h); }

/* Byte offset of B element (k, c) of a K x n tile: K-major core matrices
 * (8 columns x 16 bytes, LBO 128 to the next 8 k, SBO 16·K to the next 8
 * columns) or N-major under the 128-byte swizzle (a 128-byte line of 64
 * columns per k, 16-byte chunk XOR line % 8, SBO 1024 to the next 8 k,
 * boxes of 64 columns LBO = 128·K apart). The k16 block q starts 256 bytes
 * (K-major) or 2048 bytes (N-major) on. */
static uint32_t b_at(bool n_major, uint32_t K, uint32_t k, uint32_t c) {
    if (!n_major) return (c / 8) * 16 * K + (k / 8) * 128 + (c % 8) * 16 + (k % 8) * 2;
    uint32_t line = k % 8, off = (c % 64) * 2, chunk = (off / 16) ^ line;
    return (c / 64) * 128 * K + (k / 8) * 1024 + line * 128 + chunk * 16 + off % 16;
}
static uint32_t b_bytes(bool n_major, uint32_t K, uint32_t n) {
    return n_major ? (n + 63) / 64 * 128 * K : n / 8 * 16 * K;
}

typedef struct rs_case {
    uint32_t n;
    bool bf, n_major, scale_d;
    bool fence;          /* false: plant a missing tile.wgmma_fence */
    bool from_acc;       /* A from an accumulator through rk_tile_wgmma_acc_to_a (else loaded fragments) */
} rs_case;

/* Each of the 128 threads builds its A fragment (loaded, or the f32
 * accumulator image `x` [128][16] turned into A), B lands in LDS, one
 * wgmma_rs per k16 block (a chain over the accumulator's n16 / 16 blocks
 * when from_acc), the accumulators out. */
static rk_status run(const rs_case *rc, const uint16_t *Ag, const float *Xg, const uint16_t *Bimg, uint32_t bbytes,
                     const float *acc0, float *out, uint32_t kblocks) {
    uint32_t n = rc->n, half = n / 2;
    rk_kernel *k = rk_kernel_new("wgmma_rs_model");
    rk_type el = rc->bf ? RK_T_BF16 : RK_T_F16;
    rk_value Ap = rk_add_param(k, "a", rk_type_ptr(k, el, RK_AS_GLOBAL), NULL);
    rk_value Xp = rk_add_param(k, "x", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value Bp = rk_add_param(k, "b", rk_type_ptr(k, el, RK_AS_GLOBAL), NULL);
    rk_value Cp = rk_add_param(k, "acc", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value Op = rk_add_param(k, "out", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    uint32_t belems = bbytes / 2;
    rk_value s = ht_alloc(k, el, belems, 1024);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value lo = ht_c32(k, 0), hi = ht_c32(k, (int32_t)belems), step = ht_c32(k, 128);
    rk_value base = rk_for_begin(k, lo, hi, step, NULL, 0, NULL, NULL, NULL);
    rk_value i = rk_build_add(k, base, t);
    rk_value inb = rk_build_cmp(k, "lt", i, hi);
    rk_if_begin(k, inb);
    rk_value v = rk_load_global(k, Bp, i, 1);
    rk_store_smem(k, s, &i, v);
    rk_if_end(k, NULL, 0);
    rk_for_end(k, NULL, 0, NULL);
    rk_build_fence_proxy_async(k);
    rk_build_sync(k);
    rk_value frags[16];
    if (rc->from_acc) {
        rk_value c16 = ht_c32(k, (int32_t)(8 * kblocks));
        rk_value tx = rk_build_mul(k, t, c16);
        rk_value xe[64];
        for (uint32_t j = 0; j < 8 * kblocks; j++) {
            rk_value jc = ht_c32(k, (int32_t)j);
            rk_value at = rk_build_add(k, tx, jc);
            xe[j] = rk_load_global(k, Xp, at, 1);
        }
        rk_value xv = rk_build_vpack(k, xe, 8 * kblocks);
        rk_tile_wgmma_acc_to_a(k, xv, 16 * kblocks, rc->bf ? RK_S_BF16 : RK_S_F16, frags);
    } else {
        rk_value c8 = ht_c32(k, 8);
        rk_value t8 = rk_build_mul(k, t, c8);
        rk_value ae[8];
        for (uint32_t j = 0; j < 8; j++) {
            rk_value jc = ht_c32(k, (int32_t)j);
            rk_value at = rk_build_add(k, t8, jc);
            ae[j] = rk_load_global(k, Ap, at, 1);
        }
        frags[0] = rk_build_vpack(k, ae, 8);
    }
    rk_value hv = ht_c32(k, (int32_t)half);
    rk_value th = rk_build_mul(k, t, hv);
    rk_value ce[128];
    for (uint32_t j = 0; j < half; j++) {
        rk_value jc = ht_c32(k, (int32_t)j);
        rk_value at = rk_build_add(k, th, jc);
        ce[j] = rk_load_global(k, Cp, at, 1);
    }
    rk_value acc = rk_build_vpack(k, ce, half);
    if (rc->fence) rk_build_wgmma_fence(k);
    /* k16 block q of B starts 16 k-rows on: K-major 256 bytes (2 LBO), N-major 2 SBO groups */
    for (uint32_t q = 0; q < kblocks; q++) {
        int64_t lbo = rc->n_major ? 128 * 16 * kblocks : 128, sbo = rc->n_major ? 1024 : 256 * kblocks;
        uint32_t start = rc->n_major ? q * 2048 / 2 : q * 256 / 2;
        rk_value db = ht_wgmma_desc(k, s, (int32_t)start, lbo, sbo, rc->n_major ? 128 : 0);
        const rk_wgmma_rs_opts o = {.trans_b = RK_SOME(rc->n_major), .scale_d = RK_SOME(q > 0 || rc->scale_d)};
        acc = rk_build_wgmma_rs_ex(k, rc->bf ? "bf16" : "f16", acc, frags[q], db, n, &o);
    }
    rk_build_wgmma_commit_group(k);
    rk_value r = ht_wgmma_wait(k, acc, 0);
    for (uint32_t j = 0; j < half; j++) {
        rk_value x = rk_build_vextract(k, r, j);
        rk_value jc = ht_c32(k, (int32_t)j);
        rk_value at = rk_build_add(k, th, jc);
        rk_store_global(k, Op, at, x);
    }
    rk_build_return(k);
    et_finish(k);
    rk_emu *e = et_emu("sm_90a", 1);
    uint64_t aa = et_buf(e, (void *)Ag, 128 * 8 * 2, "a"), ax = et_buf(e, (void *)Xg, 128 * 64 * 4, "x"),
             ab = et_buf(e, (void *)Bimg, bbytes, "b"), ac = et_buf(e, (void *)acc0, 128 * half * 4, "acc"),
             ao = et_buf(e, out, 128 * half * 4, "out");
    void *args[] = {&aa, &ax, &ab, &ac, &ao};
    rk_status st = et_launch(e, k, 1, 1, 1, 128, 1, 1, args);
    rk_emu_free(e);
    rk_kernel_free(k);
    return st;
}

/* Random operands, one run, every accumulator against the double model.
 * from_acc: A (64 x 16·kblocks) is the rounded image of an f32 accumulator. */
static void check(const rs_case *rc, uint32_t kblocks) {
    uint32_t n = rc->n, half = n / 2, K = 16 * kblocks;
    uint32_t bbytes = b_bytes(rc->n_major, K, n);
    double *A = calloc(64 * K, sizeof(double)), *B = calloc(K * n, sizeof(double));
    uint16_t Ag[128 * 8], *Bimg = calloc(bbytes / 2 + 1, 2);
    float *Xg = calloc(128 * 64, sizeof(float)), *acc0 = malloc(128 * half * 4), *out = malloc(128 * half * 4);
    for (uint32_t t = 0; t < 128; t++)
        for (uint32_t sl = 0; sl < 8; sl++) {
            uint16_t h = enc(et_unit(), rc->bf);
            Ag[t * 8 + sl] = h;
            if (!rc->from_acc) A[a_row(t, sl) * K + a_k(t, sl)] = dec(h, rc->bf);
        }
    if (rc->from_acc)
        for (uint32_t t = 0; t < 128; t++)
            for (uint32_t i = 0; i < 8 * kblocks; i++) {
                float x = 4.0f * et_unit();
                Xg[t * 8 * kblocks + i] = x;
                A[d_row(t, i) * K + d_col(t, i)] = dec(enc(x, rc->bf), rc->bf);
            }
    uint8_t *used = calloc(bbytes, 1);
    for (uint32_t kk = 0; kk < K; kk++)
        for (uint32_t c = 0; c < n; c++) {
            uint16_t h = enc(et_unit(), rc->bf);
            B[kk * n + c] = dec(h, rc->bf);
            uint32_t at = b_at(rc->n_major, K, kk, c);
            assert_true(at + 2 <= bbytes && !used[at]);
            used[at] = 1;
            memcpy((uint8_t *)Bimg + at, &h, 2);
        }
    for (uint32_t i = 0; i < 128 * half; i++) acc0[i] = et_unit();
    rk_status st = run(rc, Ag, Xg, Bimg, bbytes, acc0, out, kblocks);
    if (st) printf("wgmma_rs n=%u %s: %s\n", n, rc->bf ? "bf16" : "f16", rk_error_message());
    assert_int_equal(st, RK_OK);
    for (uint32_t t = 0; t < 128; t++)
        for (uint32_t i = 0; i < half; i++) {
            uint32_t row = d_row(t, i), col = d_col(t, i);
            double want = rc->scale_d ? acc0[t * half + i] : 0.0;
            for (uint32_t kk = 0; kk < K; kk++) want += A[row * K + kk] * B[kk * n + col];
            double got = out[t * half + i];
            if (fabs(got - want) > 1e-5 * (1.0 + fabs(want)))
                printf("n=%u thread %u element %u (row %u col %u): %.9g, want %.9g\n", n, t, i, row, col, got, want);
            assert_true(fabs(got - want) <= 1e-5 * (1.0 + fabs(want)));
        }
    free(A), free(B), free(Bimg), free(Xg), free(acc0), free(out), free(used);
}

static void t_loaded_fragments(void **state) {
    (void)state;
    static const uint32_t ns[] = {8, 16, 24, 64, 72, 128, 256};
    for (uint32_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
        rs_case rc = {.n = ns[j], .bf = j % 2 == 0, .n_major = false, .scale_d = j % 3 != 2, .fence = true};
        check(&rc, 1);
        if (ns[j] % 64 == 0) {   /* N-major B (FlashAttention's V [keys, D]): whole 64-column boxes */
            rc.n_major = true;
            rc.bf = !rc.bf;
            check(&rc, 1);
        }
    }
}

/* P (an accumulator over 16·kb keys) -> A fragments -> P V over kb k16 blocks */
static void t_from_accumulator(void **state) {
    (void)state;
    rs_case rc = {.n = 64, .bf = true, .n_major = true, .scale_d = true, .fence = true, .from_acc = true};
    check(&rc, 1);
    rc = (rs_case){.n = 32, .bf = false, .n_major = false, .scale_d = false, .fence = true, .from_acc = true};
    check(&rc, 4);
    rc = (rs_case){.n = 16, .bf = true, .n_major = false, .scale_d = true, .fence = true, .from_acc = true};
    check(&rc, 2);
}

/* The host map against the PTX maps: slot s of fragment q is accumulator
 * element 8q + map[s], for every thread. */
static void t_map(void **state) {
    (void)state;
    for (int e = 0; e < 2; e++) {
        uint32_t map[8];
        assert_int_equal(rk_tile_wgmma_acc_to_a_map(e ? RK_S_BF16 : RK_S_F16, map), RK_OK);
        for (uint32_t q = 0; q < 4; q++)
            for (uint32_t t = 0; t < 128; t++)
                for (uint32_t s = 0; s < 8; s++) {
                    uint32_t i = 8 * q + map[s];
                    assert_int_equal(d_row(t, i), a_row(t, s));
                    assert_int_equal(d_col(t, i), 16 * q + a_k(t, s));
                }
    }
    uint32_t map[8];
    et_expect_error(rk_tile_wgmma_acc_to_a_map(RK_S_F32, map), RK_ERR_INVALID, "f16 or bf16", "f32", NULL);
}

static void t_missing_fence(void **state) {
    (void)state;
    rs_case rc = {.n = 8, .bf = false, .scale_d = true, .fence = false};
    uint16_t Ag[128 * 8] = {0}, Bimg[128] = {0};
    float X[1] = {0}, acc0[128 * 4] = {0}, out[128 * 4];
    et_expect_error(run(&rc, Ag, X, Bimg, sizeof Bimg, acc0, out, 1), RK_ERR_DEVICE, "tile.wgmma_rs",
                    "no tile.wgmma_fence", NULL);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_map),
        cmocka_unit_test(t_loaded_fragments),
        cmocka_unit_test(t_from_accumulator),
        cmocka_unit_test(t_missing_fence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
