/* rocke tests — base utilities: arenas, the text buffer (out of memory
 * through rk_set_allocator included), error messages, Python-style double
 * repr against a table of CPython outputs, and the 16-bit float conversions
 * against independent double-based references over every bit pattern. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "base/base_int.h"
#include "base/fp.h"

/* ---- allocation hook with a failure switch --------------------------------------------- */
static long fail_after = -1;          /* allocations allowed before failing; -1 = never */
static long live_blocks;
static void *hook(void *ud, void *p, size_t osize, size_t nsize) {
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        if (p) live_blocks--;
        free(p);
        return NULL;
    }
    if (fail_after == 0) return NULL;
    if (fail_after > 0) fail_after--;
    void *q = realloc(p, nsize);
    if (q && !p) live_blocks++;
    return q;
}

/* ---- arena ----------------------------------------------------------------------------------- */
static void test_arena(void **state) {
    (void)state;
    rk_arena a;
    rk_arena_init(&a);
    char *prev = NULL;
    for (int i = 1; i < 5000; i++) {
        char *p = rk_arena_alloc(&a, (size_t)(i % 97));
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        memset(p, 0xab, (size_t)(i % 97));
        assert_true(p != prev);
        prev = p;
    }
    char *big = rk_arena_alloc(&a, 1 << 20);                 /* larger than a chunk */
    assert_non_null(big);
    memset(big, 1, 1 << 20);
    unsigned char *z = rk_arena_zalloc(&a, 100);
    for (int i = 0; i < 100; i++) assert_int_equal(z[i], 0);
    assert_string_equal(rk_arena_strdup(&a, "hello"), "hello");
    assert_string_equal(rk_arena_strndup(&a, "hello", 3), "hel");
    assert_string_equal(rk_arena_printf(&a, "%d-%s-%.1f", 42, "x", 1.5), "42-x-1.5");
    uint32_t cap = 0, *arr = NULL;
    for (uint32_t n = 1; n <= 1000; n++) {
        arr = rk_arena_grow(&a, arr, sizeof *arr, &cap, n);
        assert_non_null(arr);
        assert_true(cap >= n);
        arr[n - 1] = n * 7;
    }
    for (uint32_t n = 0; n < 1000; n++) assert_int_equal(arr[n], (n + 1) * 7);
    assert_true(a.total >= (1 << 20));
    rk_arena_free(&a);
    assert_null(a.head);
    assert_int_equal(a.total, 0);

    /* out of memory: NULL, never a crash */
    rk_set_allocator(hook, NULL);
    fail_after = 0;
    rk_arena_init(&a);
    assert_null(rk_arena_alloc(&a, 8));
    assert_null(rk_arena_strdup(&a, "x"));
    fail_after = -1;
    assert_non_null(rk_arena_alloc(&a, 8));
    rk_arena_free(&a);
    rk_set_allocator(NULL, NULL);
    assert_int_equal(live_blocks, 0);
}

/* ---- text buffer ----------------------------------------------------------------------------- */
static void test_buf(void **state) {
    (void)state;
    rk_buf b;
    rk_buf_init(&b);
    assert_string_equal(rk_buf_cstr(&b), "");
    rk_buf_putc(&b, 'a');
    rk_buf_puts(&b, "bc");
    rk_buf_putn(&b, "defgh", 2);
    rk_buf_printf(&b, "[%d|%s]", -12, "z");
    rk_buf_put_i64(&b, INT64_MIN);
    rk_buf_putc(&b, ' ');
    rk_buf_put_u64(&b, UINT64_MAX);
    rk_buf_putc(&b, ' ');
    rk_buf_put_i64(&b, 0);
    assert_string_equal(rk_buf_cstr(&b), "abcde[-12|z]-9223372036854775808 18446744073709551615 0");
    char longs[1000];
    memset(longs, 'q', sizeof longs - 1);
    longs[sizeof longs - 1] = '\0';
    rk_buf_reset(&b);
    rk_buf_printf(&b, "<%s>", longs);                         /* longer than the small buffer */
    assert_int_equal(b.len, 1001);
    assert_int_equal(rk_buf_cstr(&b)[1000], '>');
    char *t = rk_buf_take(&b);
    assert_int_equal(strlen(t), 1001);
    assert_null(b.data);
    rk_free(t, strlen(t) + 1);
    rk_buf_free(&b);

    /* out of memory is sticky; take gives NULL; nothing leaks */
    rk_set_allocator(hook, NULL);
    for (long n = 0; n < 6; n++) {
        fail_after = n;
        rk_buf_init(&b);
        for (int i = 0; i < 200; i++) rk_buf_printf(&b, "%s", "0123456789");
        bool oom = b.oom;
        if (oom) {
            assert_string_equal(rk_buf_cstr(&b), "");
            rk_buf_puts(&b, "more");
            assert_true(b.oom);
            assert_null(rk_buf_take(&b));
        } else {
            char *s = rk_buf_take(&b);
            if (s) {
                assert_int_equal(strlen(s), 2000);
                rk_free(s, strlen(s) + 1);
            }
        }
        rk_buf_free(&b);
        fail_after = -1;
    }
    rk_set_allocator(NULL, NULL);
    assert_int_equal(live_blocks, 0);
}

static void test_alloc_and_errors(void **state) {
    (void)state;
    assert_null(rk_calloc(SIZE_MAX / 2, 4));                 /* overflow is refused */
    char *d = rk_strdup("copy");
    assert_string_equal(d, "copy");
    rk_free(d, 5);
    assert_int_equal(rk_fail(RK_ERR_PARSE, "line %d: %s", 3, "bad"), RK_ERR_PARSE);
    assert_string_equal(rk_error_message(), "line 3: bad");
    rk_clear_error();
    assert_string_equal(rk_error_message(), "");
    assert_string_equal(rk_status_name(RK_OK), "ok");
    assert_string_equal(rk_status_name(RK_ERR_NOMEM), "out of memory");
    assert_string_equal(rk_status_name((rk_status)99), "unknown");
    /* files: atomic write, read back */
    char path[] = "/tmp/rocke_test_base_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(rk_write_file_atomic(path, "abc\n", 4), RK_OK);
    char *text;
    size_t n;
    assert_int_equal(rk_read_file(path, &text, &n), RK_OK);
    assert_int_equal(n, 4);
    assert_string_equal(text, "abc\n");
    rk_free(text, n + 1);
    remove(path);
    assert_int_equal(rk_read_file("/nonexistent/dir/file", &text, &n), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "/nonexistent/dir/file"));
}

/* ---- double repr: CPython's repr() of each value --------------------------------------- */
static const struct { double v; const char *repr; } reprs[] = {
    {0x0.0p+0, "0.0"},
    {-0x0.0p+0, "-0.0"},
    {0x1.0000000000000p+0, "1.0"},
    {-0x1.0000000000000p+0, "-1.0"},
    {0x1.999999999999ap-4, "0.1"},
    {0x1.0000000000000p-1, "0.5"},
    {0x1.8000000000000p+0, "1.5"},
    {0x1.0000000000000p+1, "2.0"},
    {0x1.4000000000000p+3, "10.0"},
    {0x1.9000000000000p+6, "100.0"},
    {0x1.c6bf526340000p+49, "1000000000000000.0"},
    {0x1.1c37937e08000p+53, "1e+16"},
    {0x1.6345785d8a000p+56, "1e+17"},
    {0x1.5eddb25e04800p+53, "1.2345e+16"},
    {0x1.b69b4ba630f35p+56, "1.2345678901234568e+17"},
    {0x1.a36e2eb1c432dp-14, "0.0001"},
    {0x1.4f8b588e368f1p-17, "1e-05"},
    {0x1.02c9dedbc309dp-13, "0.0001234"},
    {0x1.f75104d551d69p-17, "1.5e-05"},
    {0x1.921fb54442d18p+1, "3.141592653589793"},
    {0x1.5bf0a8b145769p+1, "2.718281828459045"},
    {0x1.5555555555555p-2, "0.3333333333333333"},
    {0x1.5555555555555p-1, "0.6666666666666666"},
    {0x1.3333333333333p-2, "0.3"},
    {0x1.3333333333334p-2, "0.30000000000000004"},
    {0x1.0f0cf064dd592p+73, "1e+22"},
    {0x1.52d02c7e14af6p+76, "1e+23"},
    {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
    {0x0.0000000000001p-1022, "5e-324"},
    {0x1.0000000000000p-1022, "2.2250738585072014e-308"},
    {0x1.edd2f1a9fbe77p+6, "123.456"},
    {-0x1.01f31f46ed246p-13, "-0.000123"},
    {0x1.ffc0000000000p+15, "65504.0"},
    {0x1.ad7f29abcaf48p-24, "1e-07"},
    {0x1.2d68700000000p+20, "1234567.0"},
    {0x1.56a95319d63e1p+63, "1.2345678901234567e+19"},
    {0x1.0000000000000p+63, "9.223372036854776e+18"},
    {0x1.7e43c8800759cp+996, "1e+300"},
    {0x1.fe185ca57c517p+78, "6.02214076e+23"},
    {0x1.0000000000001p+0, "1.0000000000000002"},
    {0x1.9200000000000p+6, "100.5"},
    {0x0.00000000007e8p-1022, "1e-320"},
    {0x1.1c37937e07fffp+53, "9999999999999998.0"},
    {0x1.0624dd2f1a9fcp-10, "0.001"},
    {0x1.4f8b588e368f1p-17, "1e-05"},
    {0x1.3a92a30553262p-12, "0.00030000000000000003"},
    {0x1.d6f3454000000p+26, "123456789.0"},
    {0x1.ad7f29abcaf48p-26, "2.5e-08"},
    {-0x1.74de452e6b438p+811, "-1.989032661366619e+244"},
    {0x1.3270e269e0d37p+594, "7.761117632285041e+178"},
    {0x1.c7fd0a6a3a450p-826, "3.980498358697587e-249"},
    {-0x1.f0824128b2f33p+292, "-1.5432835417340557e+88"},
    {0x1.8e811892f902bp-638, "1.3647584518757569e-192"},
    {-0x1.1985d5d9dc9f8p-684, "-1.3701135617873088e-206"},
    {-0x1.25d940ed90475p+655, "-1.7160537630466207e+197"},
    {0x1.675cc81e74ef5p-144, "6.294675241195386e-44"},
    {0x1.0a35a099950d8p-671, "1.0613447212142254e-202"},
    {0x1.d549b6f03675ap+689, "4.708325160387546e+207"},
    {0x1.c172411e20b8fp-38, "6.387016158513563e-12"},
    {-0x1.16ece1738f7d9p-814, "-9.973130378568733e-246"},
    {0x1.1ddb66cad4a26p-781, "8.779753225680271e-236"},
    {-0x1.192cfd3ac94afp-755, "-5.795503248498993e-228"},
    {-0x1.c105d1fb17c23p+809, "-5.988180159386011e+243"},
    {-0x1.0b33839263059p-488, "-1.306052388527796e-147"},
    {-0x1.f48f1a09f76b5p-684, "-2.436117699484841e-206"},
    {0x1.630f1f29d0da9p-770, "2.233386999150174e-232"},
    {-0x1.60af593bd04cfp-673, "-3.51527970626667e-203"},
    {0x1.1e29c658cda14p-820, "1.5987381841032883e-247"},
    {0x1.dc414e99a29e4p+9, "952.51021118584"},
    {-0x1.222fe40000000p+3, "-9.06834602355957"},
    {0x1.6677eceea5980p+9, "716.936918097359"},
    {-0x1.0d4cd40000000p+2, "-4.2078142166137695"},
    {-0x1.63beb2db6a0d4p+9, "-711.4898332851249"},
    {-0x1.e939d60000000p+2, "-7.644155025482178"},
    {-0x1.7f094e59ef88ep+8, "-383.03635179613127"},
    {0x1.94a44a0000000p+2, "6.3225274085998535"},
    {-0x1.3f460bf71e37bp+9, "-638.547240152125"},
    {0x1.a1caf80000000p+0, "1.6320033073425293"},
    {0x1.15d3b232f7becp+8, "277.826937852368"},
    {-0x1.46a98c0000000p+1, "-2.552049160003662"},
    {0x1.7df4aa701c5b0p+6, "95.48893141911572"},
    {-0x1.17d0a80000000p+3, "-8.744220733642578"},
    {-0x1.b86619b99fb18p+9, "-880.7976600675347"},
    {-0x1.785f720000000p+2, "-5.880825519561768"},
    {0x1.68ccc948ee184p+8, "360.79994636357173"},
    {-0x1.72ba360000000p+0, "-1.4481538534164429"},
    {-0x1.73b4a615997b2p+8, "-371.705659246417"},
    {0x1.b613a60000000p+0, "1.7112373113632202"},
};

static void test_double_repr(void **state) {
    (void)state;
    char out[32];
    for (size_t i = 0; i < RK_COUNTOF(reprs); i++) {
        int n = rk_fmt_double_repr(out, reprs[i].v);
        if (strcmp(out, reprs[i].repr)) fail_msg("repr(%a): got %s, want %s", reprs[i].v, out, reprs[i].repr);
        assert_int_equal(n, (int)strlen(out));
    }
    rk_fmt_double_repr(out, INFINITY);
    assert_string_equal(out, "inf");
    rk_fmt_double_repr(out, -INFINITY);
    assert_string_equal(out, "-inf");
    rk_fmt_double_repr(out, NAN);
    assert_string_equal(out, "nan");
    /* round trip on random bit patterns */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        double d = rk_bits_f64(x);
        if (!isfinite(d)) continue;
        rk_fmt_double_repr(out, d);
        assert_true(strtod(out, NULL) == d);
    }
}

/* ---- 16-bit floats ------------------------------------------------------------------------------ */
/* Reference decoders: the formats' definitions evaluated in double. */
static double ref_decode(uint32_t h, int ebits, int mbits) {
    uint32_t emax = (1u << ebits) - 1, bias = emax >> 1;
    uint32_t s = h >> (ebits + mbits), e = (h >> mbits) & emax, m = h & ((1u << mbits) - 1);
    double v;
    if (e == emax) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)m, 1 - (int)bias - mbits);
    else v = ldexp((double)((1u << mbits) + m), (int)e - (int)bias - mbits);
    return s ? -v : v;
}

/* Every positive finite value of the format in order, plus the value one
 * step past the largest (the infinity pattern), for nearest-even search. */
typedef struct fmt { int ebits, mbits; uint32_t ninf; double *val; uint32_t n; } fmt;
static void fmt_init(fmt *f, int ebits, int mbits) {
    f->ebits = ebits;
    f->mbits = mbits;
    f->ninf = ((1u << ebits) - 1) << mbits;
    f->n = f->ninf + 1;
    f->val = malloc(f->n * sizeof *f->val);
    for (uint32_t i = 0; i < f->ninf; i++) f->val[i] = ref_decode(i, ebits, mbits);
    /* the next value after the largest finite one, were the exponent range unbounded */
    f->val[f->ninf] = ldexp(1.0, (int)((1u << ebits) - 1 - ((1u << ebits) - 1) / 2));
}

/* The nearest value's pattern; ties go to the even pattern; past the top: inf. */
static uint32_t ref_encode(const fmt *f, double x) {
    uint32_t sign = signbit(x) ? 1u << (f->ebits + f->mbits) : 0;
    if (isnan(x)) return 0xffffffffu;
    double a = fabs(x);
    if (a >= f->val[f->ninf]) return sign | f->ninf;
    uint32_t lo = 0, hi = f->ninf;                    /* val[lo] <= a < val[hi] */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (f->val[mid] <= a) lo = mid; else hi = mid;
    }
    double dl = a - f->val[lo], dh = f->val[hi] - a;
    uint32_t pick = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
    return sign | pick;
}

static bool is_nan_bits(uint32_t h, const fmt *f) {
    return ((h >> f->mbits) & ((1u << f->ebits) - 1)) == (1u << f->ebits) - 1 && (h & ((1u << f->mbits) - 1));
}

static void check_encode(const fmt *f, double x, bool from_f32) {
    uint32_t want = ref_encode(f, x), got;
    bool half = f->mbits == 10;
    if (from_f32) got = half ? rk_f32_to_f16((float)x) : rk_f32_to_bf16((float)x);
    else got = half ? rk_f64_to_f16(x) : rk_f64_to_bf16(x);
    if (want == 0xffffffffu) {
        assert_true(is_nan_bits(got, f));
        assert_true(got & (1u << (f->mbits - 1)));            /* quiet */
        return;
    }
    if (got != want) fail_msg("%s(%a) = 0x%04x, want 0x%04x", half ? "f16" : "bf16", x, got, want);
}

static void sweep(const fmt *f) {
    uint32_t top = f->ninf;
    for (uint32_t i = 0; i <= top; i++) {
        for (int s = 0; s < 2; s++) {
            double v = s ? -f->val[i] : f->val[i];
            check_encode(f, v, true);
            check_encode(f, v, false);
            if (i == top) continue;
            /* the midpoint to the next value: a tie, decided by evenness */
            double mid = (f->val[i] + f->val[i + 1]) / 2;
            double m = s ? -mid : mid;
            check_encode(f, m, true);
            check_encode(f, m, false);
            /* just off the midpoint, in float and in double precision */
            check_encode(f, nextafterf((float)m, INFINITY), true);
            check_encode(f, nextafterf((float)m, -INFINITY), true);
            check_encode(f, nextafter(m, INFINITY), false);
            check_encode(f, nextafter(m, -INFINITY), false);
        }
    }
}

static void test_f16(void **state) {
    (void)state;
    fmt f;
    fmt_init(&f, 5, 10);
    assert_true(f.val[f.ninf - 1] == 65504.0);
    /* decode every pattern */
    for (uint32_t h = 0; h < 65536; h++) {
        double want = ref_decode(h, 5, 10);
        float got = rk_f16_to_f32((uint16_t)h);
        if (isnan(want)) {
            assert_true(isnan(got));
            assert_int_equal(signbit(got) != 0, (h >> 15) != 0);
            assert_int_equal((rk_f32_bits(got) >> 13) & 0x3ff, h & 0x3ff);   /* payload kept */
            assert_true(is_nan_bits(rk_f32_to_f16(got), &f));
        } else {
            if ((double)got != want || !signbit(got) != !signbit(want)) fail_msg("f16 0x%04x -> %a, want %a", h, (double)got, want);
            assert_int_equal(rk_f32_to_f16(got), h);                         /* exact round trip */
        }
    }
    sweep(&f);
    /* named edges */
    assert_int_equal(rk_f32_to_f16(65519.99f), 0x7bff);
    assert_int_equal(rk_f32_to_f16(65520.0f), 0x7c00);                      /* tie to even = overflow */
    assert_int_equal(rk_f32_to_f16(1e10f), 0x7c00);
    assert_int_equal(rk_f32_to_f16(-1e10f), 0xfc00);
    assert_int_equal(rk_f32_to_f16(0x1p-24f), 0x0001);                      /* smallest subnormal */
    assert_int_equal(rk_f32_to_f16(0x1p-25f), 0x0000);                      /* tie to even: 0 */
    assert_int_equal(rk_f32_to_f16(0x1.8p-25f), 0x0001);
    assert_int_equal(rk_f32_to_f16(0x1.8p-24f), 0x0002);                    /* 1.5 ulp: tie to even */
    assert_int_equal(rk_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(rk_f32_to_f16(0x1.ffcp-15f), 0x0400);                  /* rounds up into the normals */
    assert_int_equal(rk_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);               /* tie to even */
    assert_int_equal(rk_f32_to_f16(1.0f + 0x3p-11f), 0x3c02);
    /* double rounding avoided: just above a tie, below float precision */
    assert_int_equal(rk_f64_to_f16(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
    assert_int_equal(rk_f32_to_f16((float)(1.0 + 0x1p-11 + 0x1p-40)), 0x3c00);
    /* random floats */
    uint32_t x = 2463534242u;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        float v = rk_bits_f32(x);
        check_encode(&f, v, true);
    }
    free(f.val);
}

static void test_bf16(void **state) {
    (void)state;
    fmt f;
    fmt_init(&f, 8, 7);
    for (uint32_t h = 0; h < 65536; h++) {
        double want = ref_decode(h, 8, 7);
        float got = rk_bf16_to_f32((uint16_t)h);
        if (isnan(want)) {
            assert_true(isnan(got));
            assert_true(is_nan_bits(rk_f32_to_bf16(got), &f));
        } else {
            if ((double)got != want || !signbit(got) != !signbit(want)) fail_msg("bf16 0x%04x -> %a, want %a", h, (double)got, want);
            assert_int_equal(rk_f32_to_bf16(got), h);
        }
    }
    sweep(&f);
    assert_int_equal(rk_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(rk_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);                /* tie to even */
    assert_int_equal(rk_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);
    assert_int_equal(rk_f32_to_bf16(0x1.ffp127f), 0x7f80);                   /* overflow */
    assert_int_equal(rk_f32_to_bf16(0x1p-133f), 0x0001);                     /* subnormal */
    assert_int_equal(rk_f64_to_bf16(1.0 + 0x1p-8 + 0x1p-50), 0x3f81);
    assert_int_equal(rk_f32_to_bf16(rk_bits_f32(0x7fc00001u)) & 0x7fc0, 0x7fc0);
    assert_int_equal(rk_f32_to_bf16(rk_bits_f32(0xff800001u)) >> 15, 1);    /* signalling NaN, sign kept */
    uint32_t x = 2463534242u;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        check_encode(&f, rk_bits_f32(x), true);
    }
    free(f.val);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_alloc_and_errors),
        cmocka_unit_test(test_double_repr),
        cmocka_unit_test(test_f16),
        cmocka_unit_test(test_bf16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
