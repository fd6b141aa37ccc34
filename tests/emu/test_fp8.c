/* rocke tests — 8-bit float formats (src/base/fp8.c) against an independent
 * reference that decodes from the format parameters and encodes by nearest
 * search over every code; and the emulator's fast f16/bf16 converters
 * against the double-based ones in base/fp.h. Layer: tests. */
#include "emu_test.h"
#include "emu/emu_int.h"

typedef struct fmtp { int ebits, mbits, bias; bool fnuz, ocp_e4m3; } fmtp;
static const fmtp P[] = {
    [RK_FP8_E4M3] = {4, 3, 7, false, true},
    [RK_FP8_E5M2] = {5, 2, 15, false, false},
    [RK_FP8_E4M3_FNUZ] = {4, 3, 8, true, false},
    [RK_FP8_E5M2_FNUZ] = {5, 2, 16, true, false},
};

/* Reference decode: NaN -> NAN, inf -> INFINITY, else the exact value. */
static double ref_decode(uint8_t c, rk_fp8_format f) {
    const fmtp *p = &P[f];
    int s = c >> 7, e = (c >> p->mbits) & ((1 << p->ebits) - 1), m = c & ((1 << p->mbits) - 1);
    int emax = (1 << p->ebits) - 1;
    if (p->fnuz && c == 0x80) return NAN;
    if (p->ocp_e4m3 && e == emax && m == (1 << p->mbits) - 1) return NAN;
    if (!p->fnuz && !p->ocp_e4m3 && e == emax) return m ? NAN : (s ? -INFINITY : INFINITY);
    double v = e ? ldexp(1.0 + (double)m / (1 << p->mbits), e - p->bias) : ldexp((double)m / (1 << p->mbits), 1 - p->bias);
    return s ? -v : v;
}

static bool finite_code(uint8_t c, rk_fp8_format f) { return isfinite(ref_decode(c, f)); }

/* Reference encode: nearest finite code on x's side (ties to the even code),
 * saturating; NaN and zero per the documented rule. */
static uint8_t ref_encode(double x, rk_fp8_format f) {
    const fmtp *p = &P[f];
    if (isnan(x)) return p->fnuz ? 0x80 : (uint8_t)((signbit(x) ? 0x80 : 0) | (p->ocp_e4m3 ? 0x7f : 0x7e));
    bool neg = signbit(x);
    double mx = 0;
    for (int c = 0; c < 128; c++)
        if (finite_code((uint8_t)c, f) && ref_decode((uint8_t)c, f) > mx) mx = ref_decode((uint8_t)c, f);
    if (fabs(x) >= mx) x = neg ? -mx : mx;         /* saturate (and +-inf) */
    int best = -1;
    double bd = INFINITY;
    for (int c = 0; c < 256; c++) {
        if (!finite_code((uint8_t)c, f)) continue;
        double v = ref_decode((uint8_t)c, f);
        if (v != 0.0 && (v < 0) != neg) continue;
        if (v == 0.0 && (signbit(v) != 0) != neg && !p->fnuz) continue;
        double d = fabs(v - x);
        if (d < bd || (d == bd && !(c & 1))) { bd = d; best = c; }
    }
    return (uint8_t)best;
}

static void t_decode_all(void **st) {
    (void)st;
    for (int f = 0; f < 4; f++)
        for (int c = 0; c < 256; c++) {
            double r = ref_decode((uint8_t)c, (rk_fp8_format)f);
            float g = rk_fp8_to_f32((uint8_t)c, (rk_fp8_format)f);
            if (isnan(r)) assert_true(isnan(g));
            else assert_true((double)g == r && !signbit(g) == !signbit(r));
        }
    assert_true(rk_fp8_max(RK_FP8_E4M3) == 448.0f && rk_fp8_max(RK_FP8_E5M2) == 57344.0f);
    assert_true(rk_fp8_max(RK_FP8_E4M3_FNUZ) == 240.0f && rk_fp8_max(RK_FP8_E5M2_FNUZ) == 57344.0f);
}

static void check_enc(double x, rk_fp8_format f) {
    uint8_t want = ref_encode(x, f), got = rk_f64_to_fp8(x, f);
    if (want != got) printf("format %d: %.17g -> 0x%02x, reference 0x%02x\n", f, x, got, want);
    assert_int_equal(got, want);
}

/* Every grid point, every midpoint (a tie) and the doubles next to it, zeros,
 * infinities, NaN, far beyond max and far below the smallest subnormal. */
static void t_encode_grid(void **st) {
    (void)st;
    for (int f = 0; f < 4; f++) {
        double v[256];
        int n = 0;
        for (int c = 0; c < 128; c++)
            if (finite_code((uint8_t)c, (rk_fp8_format)f)) v[n++] = ref_decode((uint8_t)c, (rk_fp8_format)f);
        for (int i = 0; i < n; i++) {
            for (int s = -1; s <= 1; s += 2) {
                check_enc(s * v[i], (rk_fp8_format)f);
                if (i + 1 < n) {
                    double mid = (v[i] + v[i + 1]) / 2;
                    check_enc(s * mid, (rk_fp8_format)f);
                    check_enc(s * nextafter(mid, 0), (rk_fp8_format)f);
                    check_enc(s * nextafter(mid, INFINITY), (rk_fp8_format)f);
                }
            }
        }
        double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e30, -1e30, 1e-30, -1e-30,
                             500.0, -500.0, 464.0, 65536.0, 61440.0, 245.0, 248.0, -248.0, 1e-45};
        for (size_t i = 0; i < sizeof specials / sizeof *specials; i++) check_enc(specials[i], (rk_fp8_format)f);
        for (int i = 0; i < 20000; i++) {
            double x = ldexp((double)et_unit(), (int)(et_rand() % 40) - 24);
            check_enc(x, (rk_fp8_format)f);
            assert_int_equal(rk_f32_to_fp8((float)x, (rk_fp8_format)f), rk_f64_to_fp8((double)(float)x, (rk_fp8_format)f));
        }
    }
}

/* The saturation and NaN rules spelled out. */
static void t_encode_rules(void **st) {
    (void)st;
    assert_int_equal(rk_f32_to_fp8(1e9f, RK_FP8_E4M3), 0x7e);
    assert_int_equal(rk_f32_to_fp8(-INFINITY, RK_FP8_E4M3), 0xfe);
    assert_int_equal(rk_f32_to_fp8(INFINITY, RK_FP8_E5M2), 0x7b);      /* satfinite: not inf */
    assert_int_equal(rk_f32_to_fp8(1e9f, RK_FP8_E4M3_FNUZ), 0x7f);
    assert_int_equal(rk_f32_to_fp8(-1e9f, RK_FP8_E5M2_FNUZ), 0xff);
    assert_int_equal(rk_f32_to_fp8(NAN, RK_FP8_E4M3), 0x7f);
    assert_int_equal(rk_f32_to_fp8(NAN, RK_FP8_E5M2), 0x7e);
    assert_int_equal(rk_f32_to_fp8(NAN, RK_FP8_E4M3_FNUZ), 0x80);
    assert_int_equal(rk_f32_to_fp8(-NAN, RK_FP8_E4M3), 0xff);
    assert_int_equal(rk_f64_to_fp8_nan(-NAN, RK_FP8_E4M3, RK_FP8_NAN_CANONICAL), 0x7f);   /* PTX, seen on an H200 */
    assert_int_equal(rk_f64_to_fp8_nan(-NAN, RK_FP8_E5M2, RK_FP8_NAN_CANONICAL), 0x7f);
    assert_int_equal(rk_f64_to_fp8_nan(-NAN, RK_FP8_E5M2_FNUZ, RK_FP8_NAN_CANONICAL), 0x80);
    assert_int_equal(rk_f64_to_fp8_nan(500.0, RK_FP8_E4M3, RK_FP8_NAN_CANONICAL), 0x7e);
    assert_int_equal(rk_f32_to_fp8(-0.0f, RK_FP8_E4M3), 0x80);
    assert_int_equal(rk_f32_to_fp8(-0.0f, RK_FP8_E4M3_FNUZ), 0x00);     /* no -0 in FNUZ */
    assert_int_equal(rk_f32_to_fp8(-1e-30f, RK_FP8_E5M2_FNUZ), 0x00);
    assert_int_equal(rk_f32_to_fp8(-1e-30f, RK_FP8_E5M2), 0x80);
    assert_int_equal(rk_f32_to_fp8(1.0f, RK_FP8_E4M3), 0x38);
    assert_int_equal(rk_f32_to_fp8(1.0f, RK_FP8_E4M3_FNUZ), 0x40);       /* bias 8: twice the OCP code's value */
    assert_true(rk_fp8_to_f32(0x38, RK_FP8_E4M3_FNUZ) == 0.5f);
}

/* The emulator's f16/bf16 converters against base/fp.h on every 16-bit
 * value, the midpoints between neighbours (ties) and one float ulp around
 * them, and random bit patterns. */
static void t_half_converters(void **st) {
    (void)st;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = rk_f16_to_f32((uint16_t)h), b = rk_bf16_to_f32((uint16_t)h);
        assert_true(et_same_f32(emu_h2f((uint16_t)h), f));
        assert_true(et_same_f32(emu_b2f((uint16_t)h), b));
        if (!isfinite(f)) continue;
        float nf = rk_f16_to_f32((uint16_t)(h + 1));
        float cand[] = {f, nextafterf(f, INFINITY), nextafterf(f, -INFINITY), f + (nf - f) / 2};
        for (int c = 0; c < 4; c++) {
            float x = cand[c];
            float xs[] = {x, nextafterf(x, INFINITY), nextafterf(x, -INFINITY)};
            for (int j = 0; j < 3; j++) {
                assert_int_equal(emu_f2h(xs[j]), rk_f32_to_f16(xs[j]));
                assert_int_equal(emu_f2b(xs[j]), rk_f32_to_bf16(xs[j]));
            }
        }
    }
    for (int i = 0; i < 1000000; i++) {
        float x = rk_bits_f32((uint32_t)et_rand());
        assert_int_equal(emu_f2h(x), rk_f32_to_f16(x));
        assert_int_equal(emu_f2b(x), rk_f32_to_bf16(x));
    }
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_decode_all),
        cmocka_unit_test(t_encode_grid),
        cmocka_unit_test(t_encode_rules),
        cmocka_unit_test(t_half_converters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
