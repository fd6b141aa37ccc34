/* rocke tests — lowered code that is plain LLVM arithmetic is executed: the
 * kernel is retargeted to the host and run under lli-22.
 *   - the software 8-bit float conversions gfx90a gets (no fp8 hardware):
 *     every decoded byte and every encoded float against an independent
 *     reference (decode by the format's formula in double; encode as the
 *     nearest representable value by exhaustive search, ties to the even
 *     code, saturating). Inputs: all 256 codes, every representable value,
 *     midpoints and their neighbours, specials, random floats (printed seed).
 *   - the math.tanh expansion (v_rcp replaced by an exact division) against
 *     tanh in double.
 * Skips when lli-22 is absent. Layer: tests. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "lower/llc_util.h"

typedef struct fmt {
    rk_scalar s;
    const char *name;
    int m, bias;
    bool fnuz, ieee;     /* ieee: OCP e5m2 (inf and NaN in the top exponent) */
    uint8_t maxcode, nan;
} fmt;

static const fmt fmts[] = {
    {RK_S_FP8E4M3, "e4m3", 3, 7, false, false, 0x7E, 0x7F},
    {RK_S_BF8E5M2, "e5m2", 2, 15, false, true, 0x7B, 0x7E},
    {RK_S_FP8E4M3FNUZ, "e4m3fnuz", 3, 8, true, false, 0x7F, 0x80},
    {RK_S_BF8E5M2FNUZ, "e5m2fnuz", 2, 16, true, false, 0x7F, 0x80},
};

/* ---- the reference ---------------------------------------------------------------------- */
static double ref_decode(const fmt *f, unsigned c) {
    unsigned x = c & 0x7F, e = x >> f->m, m = x & ((1u << f->m) - 1);
    double s = (c & 0x80) ? -1.0 : 1.0;
    if (f->fnuz && c == 0x80) return NAN;
    if (!f->fnuz && !f->ieee && x == 0x7F) return NAN;
    if (f->ieee && e == 31) return m ? NAN : s * INFINITY;
    if (e == 0) return s * ldexp((double)m, 1 - f->bias - f->m);
    return s * ldexp(1.0 + ldexp((double)m, -f->m), (int)e - f->bias);
}

static unsigned ref_encode(const fmt *f, float xf) {
    double x = xf;
    if (isnan(x)) return f->fnuz ? 0x80 : (signbit(x) ? 0x80u : 0u) | f->nan;
    unsigned sign = signbit(x) ? 0x80 : 0, best = 0;
    double a = fabs(x), max = ref_decode(f, f->maxcode);
    if (a >= max) best = f->maxcode;
    else {
        double bd = INFINITY;
        for (unsigned c = 0; c <= f->maxcode; c++) {
            double d = fabs(ref_decode(f, c) - a);
            if (d < bd || (d == bd && !(c & 1))) { bd = d; best = c; }
        }
    }
    if (f->fnuz && best == 0) return 0;
    return best | sign;
}

/* ---- the kernel under test ----------------------------------------------------------------- */
static rk_kernel *conv_kernel(const fmt *f) {
    rk_kernel *k = rk_kernel_new("conv");
    rk_type ft = (rk_type){f->s};
    rk_value in8 = rk_add_param(k, "in8", rk_type_ptr(k, ft, RK_AS_GLOBAL), NULL);
    rk_value outf = rk_add_param(k, "outf", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value inf = rk_add_param(k, "inf", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value out8 = rk_add_param(k, "out8", rk_type_ptr(k, ft, RK_AS_GLOBAL), NULL);
    rk_value n1 = rk_add_param(k, "n1", RK_T_I32, NULL), n2 = rk_add_param(k, "n2", RK_T_I32, NULL);
    rk_value z = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
    bool bf = f->m == 2;
    rk_value i = rk_for_begin(k, z, n1, one, "i", 0, NULL, NULL, NULL);
    rk_value b = rk_load_global(k, in8, i, 1);
    rk_value d = rk_emit_convert(k, bf ? RK_OP_CVT_BF8_TO_F32 : RK_OP_CVT_FP8_TO_F32, b, RK_T_F32);
    rk_store_global(k, outf, i, d);
    rk_for_end(k, NULL, 0, NULL);
    rk_value j = rk_for_begin(k, z, n2, one, "j", 0, NULL, NULL, NULL);
    rk_value x = rk_load_global(k, inf, j, 1);
    rk_value e = rk_emit_convert(k, bf ? RK_OP_CVT_F32_TO_BF8 : RK_OP_CVT_F32_TO_FP8, x, ft);
    rk_store_global(k, out8, j, e);
    rk_for_end(k, NULL, 0, NULL);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

/* The gfx90a text as a host module: no target lines, plain calling
 * convention, flat pointers, plus a main that runs it and prints results. */
/* Copy the kernel's text for the host into out; returns the length. The
 * hardware reciprocal becomes an exact division (@host_rcp). */
static size_t host_kernel(char *out, const char *ll) {
    size_t len = 0;
    for (const char *p = ll; *p;) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) + 1 : strlen(p);
        if (!strncmp(p, "target ", 7) || !strncmp(p, "attributes #0", 13) ||
            !strncmp(p, "declare float @llvm.amdgcn.rcp.f32", 34)) {
            p += l;
            continue;
        }
        for (size_t i = 0; i < l;) {
            if (!strncmp(p + i, "amdgpu_kernel ", 14)) i += 14;
            else if (!strncmp(p + i, " addrspace(1)", 13)) i += 13;
            else if (!strncmp(p + i, " #0 {", 5)) { memcpy(out + len, " {", 2); len += 2; i += 5; }
            else if (!strncmp(p + i, "@llvm.amdgcn.rcp.f32", 20)) { memcpy(out + len, "@host_rcp", 9); len += 9; i += 20; }
            else out[len++] = p[i++];
        }
        p += l;
    }
    len += (size_t)sprintf(out + len, "define float @host_rcp(float %%x) {\n  %%r = fdiv float 1.0, %%x\n  ret float %%r\n}\n");
    return len;
}

static char *host_module(const char *ll, const float *xs, size_t n) {
    size_t cap = strlen(ll) + n * 40 + 8192;
    char *out = malloc(cap);
    size_t len = host_kernel(out, ll);
    len += (size_t)sprintf(out + len, "@in8 = global [256 x i8] [");
    for (int c = 0; c < 256; c++) len += (size_t)sprintf(out + len, "%si8 %d", c ? ", " : "", c);
    len += (size_t)sprintf(out + len, "]\n@outf = global [256 x float] zeroinitializer\n@inf = global [%zu x i32] [", n);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &xs[i], 4);
        len += (size_t)sprintf(out + len, "%si32 %u", i ? ", " : "", u);
    }
    len += (size_t)sprintf(out + len,
        "]\n@out8 = global [%zu x i8] zeroinitializer\n"
        "@fmt = private constant [4 x i8] c\"%%x\\0A\\00\"\n"
        "declare i32 @printf(ptr, ...)\n"
        "define i32 @main() {\n"
        "entry:\n"
        "  call void @conv(ptr @in8, ptr @outf, ptr @inf, ptr @out8, i32 256, i32 %zu)\n"
        "  br label %%a\n"
        "a:\n"
        "  %%i = phi i32 [ 0, %%entry ], [ %%i2, %%a ]\n"
        "  %%pa = getelementptr i32, ptr @outf, i32 %%i\n"
        "  %%va = load i32, ptr %%pa\n"
        "  call i32 (ptr, ...) @printf(ptr @fmt, i32 %%va)\n"
        "  %%i2 = add i32 %%i, 1\n"
        "  %%ca = icmp slt i32 %%i2, 256\n"
        "  br i1 %%ca, label %%a, label %%b\n"
        "b:\n"
        "  %%j = phi i32 [ 0, %%a ], [ %%j2, %%b ]\n"
        "  %%pb = getelementptr i8, ptr @out8, i32 %%j\n"
        "  %%vb = load i8, ptr %%pb\n"
        "  %%wb = zext i8 %%vb to i32\n"
        "  call i32 (ptr, ...) @printf(ptr @fmt, i32 %%wb)\n"
        "  %%j2 = add i32 %%j, 1\n"
        "  %%cb = icmp slt i32 %%j2, %zu\n"
        "  br i1 %%cb, label %%b, label %%c\n"
        "c:\n"
        "  ret i32 0\n"
        "}\n", n, n, n);
    return out;
}

static const char *lli_path(void) {
    static char path[512];
    const char *p = getenv("PATH");
    while (p && *p) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(path, sizeof path, "%.*s/lli-22", (int)n, p);
        if (n && access(path, X_OK) == 0) return path;
        p = e ? e + 1 : NULL;
    }
    return NULL;
}

static float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static size_t inputs(const fmt *f, float *xs, unsigned seed) {
    size_t n = 0;
    for (unsigned c = 0; c < 256; c++) {
        double v = ref_decode(f, c);
        xs[n++] = (float)v;
        if (isfinite(v) && (c & 0x7F) < f->maxcode) {
            double w = ref_decode(f, c + 1), mid = (v + w) / 2;   /* ties, and just off them */
            xs[n++] = (float)mid;
            xs[n++] = nextafterf((float)mid, INFINITY);
            xs[n++] = nextafterf((float)mid, -INFINITY);
        }
    }
    double max = ref_decode(f, f->maxcode);
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, (float)(max * 1.0001), (float)(max * 1.1),
                              (float)(-max * 3), 1e30f, -1e-30f, 1e-45f, f_of(0x00800000)};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) xs[n++] = specials[i];
    srand(seed);
    for (int i = 0; i < 2000; i++) {
        double m = (double)rand() / RAND_MAX * 2 - 1;
        int e = rand() % (f->bias + 12) - f->bias - f->m - 2;
        xs[n++] = (float)ldexp(m, e);
    }
    return n;
}

static void test_software_fp8_executes(void **state) {
    (void)state;
    const char *lli = lli_path();
    if (!lli) { fprintf(stderr, "SKIP: lli-22 not found on PATH\n"); skip(); }
    unsigned seed = (unsigned)time(NULL);
    printf("seed %u\n", seed);
    static float xs[4096];
    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
        const fmt *f = &fmts[fi];
        rk_kernel *k = conv_kernel(f);
        char *ll = NULL;
        if (rk_lower_llvm(k, rk_target_find("gfx90a"), RK_LLVM22, &ll) != RK_OK) fail_msg("%s", rk_error_message());
        assert_null(strstr(ll, "llvm.amdgcn.cvt"));   /* software path, no fp8 intrinsic */
        size_t n = inputs(f, xs, seed + (unsigned)fi);
        char *mod = host_module(ll, xs, n), path[600], cmd[1400];
        llc_tmp(path, sizeof path, f->name);
        strcat(path, ".ll");
        FILE *w = fopen(path, "w");
        assert_non_null(w);
        fputs(mod, w);
        fclose(w);
        snprintf(cmd, sizeof cmd, "'%s' '%s' 2>&1", lli, path);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        int bad = 0;
        char line[256];
        for (size_t i = 0; i < 256 + n; i++) {
            if (!fgets(line, sizeof line, p)) fail_msg("%s: lli stopped after %zu of %zu results", f->name, i, 256 + n);
            unsigned long got = strtoul(line, NULL, 16);
            if (i < 256) {
                double want = ref_decode(f, (unsigned)i);
                float gf = f_of((uint32_t)got);
                bool ok = isnan(want) ? isnan(gf) : (gf == (float)want && !signbit(gf) == !signbit(want));
                if (!ok && bad++ < 10)
                    fprintf(stderr, "%s decode 0x%02zx: got %a, want %a\n", f->name, i, (double)gf, want);
            } else {
                float x = xs[i - 256];
                unsigned want = ref_encode(f, x);
                if (got != want && bad++ < 10)
                    fprintf(stderr, "%s encode %a: got 0x%02lx, want 0x%02x\n", f->name, (double)x, got, want);
            }
        }
        pclose(p);
        remove(path);
        printf("%s: 256 codes decoded, %zu floats encoded, %d wrong\n", f->name, n, bad);
        assert_int_equal(bad, 0);
        free(mod);
        rk_string_free(ll);
        rk_kernel_free(k);
    }
}

/* ---- math.tanh ---------------------------------------------------------------------------------- */
static void test_tanh_executes(void **state) {
    (void)state;
    const char *lli = lli_path();
    if (!lli) { fprintf(stderr, "SKIP: lli-22 not found on PATH\n"); skip(); }
    unsigned seed = (unsigned)time(NULL);
    printf("seed %u\n", seed);
    srand(seed);
    static float xs[6000];
    size_t n = 0;
    const float fixed[] = {0.0f, -0.0f, 0.625f, nextafterf(0.625f, 0), nextafterf(0.625f, 1), -0.625f, 1e-30f, 1e-45f,
                           1.0f, -1.0f, 9.0f, 20.0f, 44.0f, 100.0f, 1e30f, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) xs[n++] = fixed[i];
    while (n < 3000) xs[n++] = (float)(((double)rand() / RAND_MAX * 2 - 1) * 12);
    while (n < 6000) xs[n++] = (float)ldexp((double)rand() / RAND_MAX * 2 - 1, -(rand() % 30));

    rk_kernel *k = rk_kernel_new("tanhk");
    rk_value X = rk_add_param(k, "X", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value Y = rk_add_param(k, "Y", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value z = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
    rk_value i = rk_for_begin(k, z, N, one, "i", 0, NULL, NULL, NULL);
    rk_value x = rk_load_global(k, X, i, 1);
    rk_value t = rk_build_tanh(k, x);
    rk_store_global(k, Y, i, t);
    rk_for_end(k, NULL, 0, NULL);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = NULL;
    if (rk_lower_llvm(k, rk_target_find("gfx942"), RK_LLVM22, &ll) != RK_OK) fail_msg("%s", rk_error_message());
    char *mod = malloc(strlen(ll) + n * 20 + 4096);
    size_t len = host_kernel(mod, ll);
    len += (size_t)sprintf(mod + len, "@X = global [%zu x i32] [", n);
    for (size_t j = 0; j < n; j++) {
        uint32_t u;
        memcpy(&u, &xs[j], 4);
        len += (size_t)sprintf(mod + len, "%si32 %u", j ? ", " : "", u);
    }
    sprintf(mod + len,
            "]\n@Y = global [%zu x i32] zeroinitializer\n"
            "@fmt = private constant [4 x i8] c\"%%x\\0A\\00\"\n"
            "declare i32 @printf(ptr, ...)\n"
            "define i32 @main() {\n"
            "entry:\n"
            "  call void @tanhk(ptr @X, ptr @Y, i32 %zu)\n"
            "  br label %%a\n"
            "a:\n"
            "  %%i = phi i32 [ 0, %%entry ], [ %%i2, %%a ]\n"
            "  %%p = getelementptr i32, ptr @Y, i32 %%i\n"
            "  %%v = load i32, ptr %%p\n"
            "  call i32 (ptr, ...) @printf(ptr @fmt, i32 %%v)\n"
            "  %%i2 = add i32 %%i, 1\n"
            "  %%c = icmp slt i32 %%i2, %zu\n"
            "  br i1 %%c, label %%a, label %%b\n"
            "b:\n"
            "  ret i32 0\n"
            "}\n", n, n, n);
    char path[600], cmd[1400], line[64];
    llc_tmp(path, sizeof path, "tanh");
    strcat(path, ".ll");
    FILE *w = fopen(path, "w");
    assert_non_null(w);
    fputs(mod, w);
    fclose(w);
    snprintf(cmd, sizeof cmd, "'%s' '%s' 2>&1", lli, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    double worst = 0;
    int bad = 0;
    for (size_t j = 0; j < n; j++) {
        if (!fgets(line, sizeof line, p)) fail_msg("lli stopped after %zu of %zu results", j, n);
        float got = f_of((uint32_t)strtoul(line, NULL, 16));
        double want = tanh((double)xs[j]);
        bool ok;
        if (isnan(want)) ok = isnan(got);
        else if (want == 0) ok = got == 0 && !signbit(got) == !signbit(want);
        else {
            double rel = fabs(got - want) / fabs(want);
            if (rel > worst) worst = rel;
            ok = rel <= 0x1p-21;   /* 4 ulp of f32 */
        }
        if (!ok && bad++ < 10) fprintf(stderr, "tanh(%a): got %a, want %a\n", (double)xs[j], (double)got, want);
    }
    pclose(p);
    remove(path);
    printf("tanh: %zu inputs, worst relative error %.3g, %d wrong\n", n, worst, bad);
    assert_int_equal(bad, 0);
    free(mod);
    rk_string_free(ll);
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_software_fp8_executes),
        cmocka_unit_test(test_tanh_executes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
