/* rocke tests — tile.wgmma on the emulator against a host model: random
 * f16/bf16 A (64x16) and B (16xN) placed in LDS by this file's own reading
 * of the PTX ISA's canonical layouts (K-major and MN-major, no swizzle and
 * the 32/64/128-byte swizzles, padded strides), one wgmma per warpgroup,
 * every accumulator compared with a double-precision sum through the
 * m64nNk16 fragment map. Layer: tests. */
#include "hopper_test.h"

typedef struct layout {
    bool mn_major;
    uint32_t swz;              /* 0, 32, 64, 128 */
    uint32_t lbo, sbo;         /* bytes */
} layout;

/* The 16-byte chunk index inside each 128-byte line is XORed with the line
 * number modulo span/16 (address bits); identity without a swizzle. */
static uint32_t swizzled(uint32_t addr, uint32_t swz) {
    if (!swz) return addr;
    uint32_t chunks = swz / 16, line = addr / 128, chunk = (addr / 16) % 8;
    uint32_t flipped = (chunk & ~(chunks - 1)) | ((chunk ^ line) & (chunks - 1));
    return addr - chunk * 16 + flipped * 16;
}

/* Byte address of element (mn, k) of an operand stored at base. */
static uint32_t place(const layout *L, uint32_t base, uint32_t mn, uint32_t k) {
    uint32_t off;
    if (!L->mn_major && !L->swz) {
        /* 8x8 core matrices of 8 rows x 16 bytes, K-neighbours LBO apart, MN-neighbours SBO apart */
        off = (mn / 8) * L->sbo + (k / 8) * L->lbo + (mn % 8) * 16 + (k % 8) * 2;
    } else if (!L->mn_major) {
        /* one swz-byte line per MN row, eight lines per atom, atoms SBO apart */
        off = (mn / 8) * L->sbo + (mn % 8) * L->swz + k * 2;
    } else if (!L->swz) {
        /* core matrices of 8 k-lines x 8 MN elements, MN-neighbours SBO apart, K-neighbours LBO apart */
        off = (mn / 8) * L->sbo + (k / 8) * L->lbo + (k % 8) * 16 + (mn % 8) * 2;
    } else {
        /* atoms of 8 k-lines x swz/2 MN elements, MN-neighbours LBO apart, K-neighbours SBO apart */
        uint32_t per = L->swz / 2;
        off = (mn / per) * L->lbo + (k / 8) * L->sbo + (k % 8) * L->swz + (mn % per) * 2;
    }
    return swizzled(base + off, L->swz);
}

/* Strides for an operand with `rows` elements along MN (16 along K) and
 * the bytes it spans; pad adds unused space between groups. */
static uint32_t pick(layout *L, uint32_t rows, uint32_t pad) {
    uint32_t S = L->swz;
    if (!L->mn_major && !S) { L->lbo = 128; L->sbo = 256 + 16 * pad; return (rows / 8) * L->sbo; }
    if (!L->mn_major) { L->lbo = 16; L->sbo = 8 * S * (1 + pad); return (rows / 8) * L->sbo; }
    if (!S) { L->lbo = 128; L->sbo = 256 + 16 * pad; return (rows / 8) * L->sbo + 128; }
    uint32_t atoms = (rows + S / 2 - 1) / (S / 2);
    if (pad & 1) { L->sbo = 8 * S; L->lbo = 16 * S; return atoms * L->lbo; }
    L->lbo = 8 * S; L->sbo = atoms * 8 * S; return 2 * L->sbo;
}

static uint16_t enc(double v, bool bf) { return bf ? rk_f32_to_bf16((float)v) : rk_f32_to_f16((float)v); }
static double dec(uint16_t h, bool bf) { return bf ? rk_bf16_to_f32(h) : rk_f16_to_f32(h); }

/* One m64nNk16 on one warpgroup; acc0 seeds the accumulators (scale_d). */
static void one(uint32_t n, bool bf, layout la, layout lb, bool scale_d, uint32_t pad) {
    uint32_t a_bytes = pick(&la, 64, pad), b_off = (a_bytes + 1023) / 1024 * 1024;
    uint32_t b_bytes = pick(&lb, n, pad), total = (b_off + b_bytes + 15) / 16 * 16;
    uint16_t *img = malloc(total);
    uint8_t *used = calloc(total, 1);
    for (uint32_t i = 0; i < total / 2; i++) img[i] = enc(8 * et_unit(), bf);   /* garbage between the tiles */
    double A[64][16], *B = malloc(sizeof(double) * 16 * n);
    for (uint32_t m = 0; m < 64; m++)
        for (uint32_t k = 0; k < 16; k++) {
            uint16_t h = enc(et_unit(), bf);
            A[m][k] = dec(h, bf);
            uint32_t at = place(&la, 0, m, k);
            assert_true(at + 2 <= total && !used[at]);
            used[at] = 1;
            memcpy((uint8_t *)img + at, &h, 2);
        }
    for (uint32_t k = 0; k < 16; k++)
        for (uint32_t c = 0; c < n; c++) {
            uint16_t h = enc(et_unit(), bf);
            B[k * n + c] = dec(h, bf);
            uint32_t at = place(&lb, b_off, c, k);
            assert_true(at + 2 <= total && !used[at]);
            used[at] = 1;
            memcpy((uint8_t *)img + at, &h, 2);
        }
    uint32_t half = n / 2;
    float *acc0 = malloc(sizeof(float) * 128 * half), *out = malloc(sizeof(float) * 128 * half);
    for (uint32_t i = 0; i < 128 * half; i++) acc0[i] = et_unit();

    rk_kernel *k = rk_kernel_new("wgmma_model");
    rk_type el = bf ? RK_T_BF16 : RK_T_F16;
    rk_value Img = rk_add_param(k, "img", rk_type_ptr(k, el, RK_AS_GLOBAL), NULL);
    rk_value Acc = rk_add_param(k, "acc", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value Out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value s = ht_alloc(k, el, total / 2, 1024);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value lo = ht_c32(k, 0), hi = ht_c32(k, (int32_t)(total / 2)), step = ht_c32(k, 128);
    rk_value base = rk_for_begin(k, lo, hi, step, NULL, 0, NULL, NULL, NULL);
    rk_value i = rk_build_add(k, base, t);
    rk_value inb = rk_build_cmp(k, "lt", i, hi);
    rk_if_begin(k, inb);
    rk_value v = rk_load_global(k, Img, i, 1);
    rk_store_smem(k, s, &i, v);
    rk_if_end(k, NULL, 0);
    rk_for_end(k, NULL, 0, NULL);
    rk_build_fence_proxy_async(k);
    rk_build_sync(k);
    rk_value hv = ht_c32(k, (int32_t)half);
    rk_value t_half = rk_build_mul(k, t, hv);
    rk_value *el4 = malloc(sizeof(rk_value) * half);
    for (uint32_t e4 = 0; e4 < half; e4++) {
        rk_value ec = ht_c32(k, (int32_t)e4);
        rk_value at = rk_build_add(k, t_half, ec);
        el4[e4] = rk_load_global(k, Acc, at, 1);
    }
    rk_value a0 = rk_build_vpack(k, el4, half);
    free(el4);
    rk_build_wgmma_fence(k);
    rk_value da = ht_wgmma_desc(k, s, 0, la.lbo, la.sbo, la.swz);
    rk_value db = ht_wgmma_desc(k, s, (int32_t)(b_off / 2), lb.lbo, lb.sbo, lb.swz);
    rk_value d = ht_wgmma(k, a0, da, db, n, bf, la.mn_major, lb.mn_major, scale_d);
    rk_build_wgmma_commit_group(k);
    rk_value r = ht_wgmma_wait(k, d, 0);
    for (uint32_t e = 0; e < half; e++) {
        rk_value x = rk_build_vextract(k, r, e);
        rk_value ec = ht_c32(k, (int32_t)e);
        rk_value at = rk_build_add(k, t_half, ec);
        rk_store_global(k, Out, at, x);
    }
    rk_build_return(k);
    et_finish(k);

    rk_emu *e = et_emu("sm_90a", 1);
    uint64_t ai = et_buf(e, img, total, "img"), aa = et_buf(e, acc0, sizeof(float) * 128 * half, "acc"),
             ao = et_buf(e, out, sizeof(float) * 128 * half, "out");
    void *args[] = {&ai, &aa, &ao};
    rk_status st = et_launch(e, k, 1, 1, 1, 128, 1, 1, args);
    if (st) printf("n=%u %s A %s swz %u, B %s swz %u: %s\n", n, bf ? "bf16" : "f16", la.mn_major ? "M" : "K", la.swz,
                   lb.mn_major ? "N" : "K", lb.swz, rk_error_message());
    assert_int_equal(st, RK_OK);
    /* thread t = 32w + l, element i: row 16w + l/4 + 8((i/2)%2), column 8(i/4) + 2(l%4) + i%2 */
    for (uint32_t th = 0; th < 128; th++)
        for (uint32_t el2 = 0; el2 < half; el2++) {
            uint32_t w = th / 32, l = th % 32;
            uint32_t row = 16 * w + l / 4 + 8 * ((el2 / 2) % 2), col = 8 * (el2 / 4) + 2 * (l % 4) + el2 % 2;
            double want = scale_d ? acc0[th * half + el2] : 0.0;
            for (uint32_t kk = 0; kk < 16; kk++) want += A[row][kk] * B[kk * n + col];
            double got = out[th * half + el2];
            if (fabs(got - want) > 1e-5 * (1.0 + fabs(want)))
                printf("n=%u thread %u element %u (row %u col %u): %.9g, want %.9g\n", n, th, el2, row, col, got, want);
            assert_true(fabs(got - want) <= 1e-5 * (1.0 + fabs(want)));
        }
    rk_emu_free(e);
    rk_kernel_free(k);
    free(img), free(used), free(B), free(acc0), free(out);
}

static void t_every_layout(void **state) {
    (void)state;
    static const uint32_t swz[] = {0, 32, 64, 128};
    static const uint32_t ns[] = {8, 24, 40, 136, 56, 16, 88, 256};
    uint32_t run = 0;
    for (uint32_t sa = 0; sa < 4; sa++)
        for (uint32_t sb = 0; sb < 4; sb++)
            for (uint32_t major = 0; major < 4; major++) {
                if ((sa + sb + major) % 2) continue;   /* half of the 64 pairs: every swizzle and major-ness on each side */
                layout la = {.mn_major = major & 1, .swz = swz[sa]}, lb = {.mn_major = (major >> 1) & 1, .swz = swz[sb]};
                uint32_t n = ns[run % 8];
                one(n, run % 3 == 1, la, lb, run % 4 != 3, n > 64 ? 0 : (uint32_t)(et_rand() % 3));
                run++;
            }
}

/* every legal n once, K-major and 128-byte swizzled as a GEMM would use it */
static void t_every_n(void **state) {
    (void)state;
    for (uint32_t n = 8; n <= 256; n += 8) {
        layout la = {.swz = 128}, lb = {.mn_major = n % 16 == 8, .swz = n % 24 ? 128 : 64};
        one(n, n % 16 == 0, la, lb, true, 0);
    }
}

/* A zero-filled tile and one wgmma, with a planted bug: `early` reads the
 * result before the wait, `wait_n` leaves groups pending, `fence` false
 * skips wgmma_fence, `block` threads per block. */
static rk_status planted(bool early, int64_t wait_n, bool fence, uint32_t block) {
    rk_kernel *k = rk_kernel_new("wgmma_bug");
    rk_value Out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value s = ht_alloc(k, RK_T_F16, 1024 + 128, 1024);
    rk_value t = rk_build_thread_id(k, 0), zero = ht_c32(k, 0);
    rk_value z = rk_const_float(k, RK_T_F16, 0.0);
    for (int32_t j = 0; j < 9; j++) {
        rk_value jc = ht_c32(k, 128 * j);
        rk_value i = rk_build_add(k, t, jc);
        rk_value c1152 = ht_c32(k, 1152);
        rk_value inb = rk_build_cmp(k, "lt", i, c1152);
        rk_if_begin(k, inb);
        rk_store_smem(k, s, &i, z);
        rk_if_end(k, NULL, 0);
    }
    rk_build_sync(k);
    if (fence) rk_build_wgmma_fence(k);
    rk_value da = ht_wgmma_desc(k, s, 0, 128, 256, 0), db = ht_wgmma_desc(k, s, 1024, 128, 256, 0);
    rk_value acc = rk_build_constant_vec(k, rk_type_vec(k, RK_T_F32, 4), 0.0);
    rk_value d = ht_wgmma(k, acc, da, db, 8, false, false, false, true);
    if (early) {
        rk_value x = rk_build_vextract(k, d, 0);
        rk_store_global(k, Out, zero, x);
    }
    rk_build_wgmma_commit_group(k);
    rk_value r = ht_wgmma_wait(k, d, wait_n);
    rk_value x = rk_build_vextract(k, r, 1);
    rk_store_global(k, Out, t, x);
    rk_build_return(k);
    et_finish(k);
    float out[128];
    rk_emu *e = et_emu("sm_90a", 1);
    uint64_t ao = et_buf(e, out, sizeof out, "out");
    void *args[] = {&ao};
    rk_status st = et_launch(e, k, 1, 1, 1, block, 1, 1, args);
    rk_emu_free(e);
    rk_kernel_free(k);
    return st;
}

static void t_checks(void **state) {
    (void)state;
    assert_int_equal(planted(false, 0, true, 128), RK_OK);
    et_expect_error(planted(true, 0, true, 128), RK_ERR_DEVICE, "reads", "the in-flight result of op #",
                    "before a tile.wgmma_wait_group", NULL);
    et_expect_error(planted(false, 1, true, 128), RK_ERR_DEVICE, "tile.wgmma_wait_group {n = 1}", "still pending", NULL);
    et_expect_error(planted(false, 0, false, 128), RK_ERR_DEVICE, "no tile.wgmma_fence", "undefined", NULL);
    et_expect_error(planted(false, 0, true, 96), RK_ERR_DEVICE, "warpgroup of 4 warps", "block of 96 threads", NULL);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_every_layout),
        cmocka_unit_test(t_every_n),
        cmocka_unit_test(t_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
