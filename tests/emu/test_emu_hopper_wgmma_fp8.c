/* rocke tests — tile.wgmma with the OCP fp8 types (e4m3, e5m2: m64nNk32,
 * K-major) on the emulator against a host model: random codes for A
 * (64x32) and B (32xN) placed in LDS by this file's reading of the PTX
 * ISA's K-major layouts for 1-byte elements (core matrices of 8 rows x 16
 * bytes, or one swizzled line per row with the 32/64/128-byte swizzles),
 * one wgmma per warpgroup, every accumulator compared with a double sum of
 * the exactly decoded values; the verifier's refusal of transposes. Layer: tests. */
#include "hopper_test.h"

#include "../support/f8_ref.h"

/* Byte address of element (mn, k) of a K-major 8-bit operand at base:
 * no swizzle, 8x16-byte core matrices (K-neighbours LBO = 128 apart, 8-row
 * groups SBO = 256); swizzled, one swz-byte line per row, 8-row atoms 8 *
 * swz apart, then the swizzle of the address bits. */
static uint32_t place(uint32_t swz, uint32_t base, uint32_t mn, uint32_t k) {
    if (!swz) return base + (mn / 8) * 256 + (k / 16) * 128 + (mn % 8) * 16 + k % 16;
    uint32_t a = base + (mn / 8) * 8 * swz + (mn % 8) * swz + k;
    uint32_t chunks = swz / 16, line = a / 128, chunk = (a / 16) % 8;
    uint32_t flipped = (chunk & ~(chunks - 1)) | ((chunk ^ line) & (chunks - 1));
    return a - chunk * 16 + flipped * 16;
}

/* A random finite code of the format (no NaN or inf), and its exact value. */
static uint8_t code(const tf8 *f) {
    for (;;) {
        uint8_t c = (uint8_t)(et_rand() >> 56);
        if ((c & 0x7fu) <= f->maxcode) return c;
    }
}
static double decode(const tf8 *f, uint8_t c) { return (c & 0x80u ? -1.0 : 1.0) * tf8_val(f, c & 0x7fu); }

static void one(uint32_t n, bool e5, uint32_t swz) {
    const tf8 *f = &TF8[e5 ? 1 : 0];
    uint32_t a_bytes = swz ? 8 * 8 * swz : 8 * 256;
    uint32_t b_off = (a_bytes + 1023) / 1024 * 1024, b_bytes = swz ? n / 8 * 8 * swz : n / 8 * 256;
    uint32_t total = (b_off + b_bytes + 127) / 128 * 128;
    uint8_t *img = malloc(total);
    for (uint32_t i = 0; i < total; i++) img[i] = code(f);
    double A[64][32], *B = malloc(sizeof(double) * 32 * n);
    for (uint32_t m = 0; m < 64; m++)
        for (uint32_t kk = 0; kk < 32; kk++) {
            uint32_t at = place(swz, 0, m, kk);
            A[m][kk] = decode(f, img[at]);
        }
    for (uint32_t kk = 0; kk < 32; kk++)
        for (uint32_t c = 0; c < n; c++) B[kk * n + c] = decode(f, img[place(swz, b_off, c, kk)]);
    uint32_t half = n / 2;
    float *out = malloc(sizeof(float) * 128 * half);

    rk_kernel *k = rk_kernel_new("wgmma_fp8_model");
    rk_type el = e5 ? RK_T_BF8E5M2 : RK_T_FP8E4M3;
    rk_value Img = rk_add_param(k, "img", rk_type_ptr(k, el, RK_AS_GLOBAL), NULL);
    rk_value Out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value s = ht_alloc(k, el, total, 1024);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value lo = ht_c32(k, 0), hi = ht_c32(k, (int32_t)total), step = ht_c32(k, 128);
    rk_value base = rk_for_begin(k, lo, hi, step, NULL, 0, NULL, NULL, NULL);
    rk_value i = rk_build_add(k, base, t);
    rk_value v = rk_load_global(k, Img, i, 1);   /* total is a multiple of 128: every i is inside */
    rk_store_smem(k, s, &i, v);
    rk_for_end(k, NULL, 0, NULL);
    rk_build_fence_proxy_async(k);
    rk_build_sync(k);
    rk_type acc_t = rk_type_vec(k, RK_T_F32, half);
    rk_value a0 = rk_build_constant_vec(k, acc_t, 0.0);
    rk_build_wgmma_fence(k);
    rk_value da = ht_wgmma_desc(k, s, 0, swz ? 16 : 128, swz ? 8 * swz : 256, swz);
    rk_value db = ht_wgmma_desc(k, s, (int32_t)b_off, swz ? 16 : 128, swz ? 8 * swz : 256, swz);
    const rk_wgmma_opts o = {.scale_d = {true, false}};
    rk_value d = rk_build_wgmma_ex(k, e5 ? "e5m2" : "e4m3", a0, da, db, n, &o);
    rk_build_wgmma_commit_group(k);
    rk_value r = ht_wgmma_wait(k, d, 0);
    rk_value hv = ht_c32(k, (int32_t)half);
    rk_value t_half = rk_build_mul(k, t, hv);
    for (uint32_t e = 0; e < half; e++) {
        rk_value x = rk_build_vextract(k, r, e);
        rk_value ec = ht_c32(k, (int32_t)e);
        rk_value at = rk_build_add(k, t_half, ec);
        rk_store_global(k, Out, at, x);
    }
    rk_build_return(k);
    et_finish(k);

    rk_emu *em = et_emu("sm_90a", 1);
    uint64_t ai = et_buf(em, img, total, "img"), ao = et_buf(em, out, sizeof(float) * 128 * half, "out");
    void *args[] = {&ai, &ao};
    rk_status st = et_launch(em, k, 1, 1, 1, 128, 1, 1, args);
    if (st) printf("n=%u %s swz %u: %s\n", n, e5 ? "e5m2" : "e4m3", swz, rk_error_message());
    assert_int_equal(st, RK_OK);
    for (uint32_t th = 0; th < 128; th++)
        for (uint32_t e = 0; e < half; e++) {
            uint32_t w = th / 32, l = th % 32;
            uint32_t row = 16 * w + l / 4 + 8 * ((e / 2) % 2), col = 8 * (e / 4) + 2 * (l % 4) + e % 2;
            double want = 0, mag = 0;
            for (uint32_t kk = 0; kk < 32; kk++) {
                want += A[row][kk] * B[kk * n + col];
                mag += fabs(A[row][kk] * B[kk * n + col]);
            }
            double got = out[th * half + e];
            if (fabs(got - want) > 32 * 0x1p-24 * mag + 1e-30)
                fail_msg("n=%u %s swz %u thread %u element %u: %.9g, want %.9g", n, e5 ? "e5m2" : "e4m3", swz, th, e,
                         got, want);
        }
    rk_emu_free(em);
    rk_kernel_free(k);
    free(img), free(B), free(out);
}

static void t_formats_and_swizzles(void **state) {
    (void)state;
    static const uint32_t swz[] = {0, 32, 64, 128};
    static const uint32_t ns[] = {8, 40, 256, 136};
    for (int e5 = 0; e5 < 2; e5++)
        for (uint32_t i = 0; i < 4; i++) one(ns[(i + (uint32_t)e5) % 4], e5, swz[i]);
}

/* 8-bit wgmma has no transpose: the verifier names the legal types. */
static void t_no_transpose(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("wgmma_fp8_trans");
    rk_value s = ht_alloc(k, RK_T_FP8E4M3, 4096, 1024);
    rk_type acc_t = rk_type_vec(k, RK_T_F32, 4);
    rk_value a0 = rk_build_constant_vec(k, acc_t, 0.0);
    rk_value db = ht_wgmma_desc(k, s, 0, 16, 256, 32);
    rk_build_wgmma_fence(k);
    const rk_wgmma_opts o = {.trans_b = {true, true}};
    rk_value d = rk_build_wgmma_ex(k, "e4m3", a0, db, db, 8, &o);
    rk_build_wgmma_commit_group(k);
    rk_value r = ht_wgmma_wait(k, d, 0);
    (void)r;
    rk_build_return(k);
    assert_int_not_equal(rk_kernel_finish(k), RK_OK);
    if (!strstr(rk_error_message(), "no transpose for 8-bit types")) fail_msg("%s", rk_error_message());
    rk_kernel_free(k);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_formats_and_swizzles),
        cmocka_unit_test(t_no_transpose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
