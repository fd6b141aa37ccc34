/* rocke tests — the AMD lowering means what the emulator means (ops.def,
 * docs/lowering.md): one IR kernel (a loop over n elements, so one host
 * thread runs it) is lowered for the chip, retargeted to the host and run
 * under lli-22, with each AMD intrinsic it calls replaced by a host model of
 * the hardware written here; its bytes must equal an independent reference
 * and the emulator's result for the same kernel.
 *   - fp8/bf8 encodes on gfx942 (FNUZ) and gfx950 (OCP), scalar, packed and
 *     scaled: the model converts without the clamp bit (overflow gives NaN,
 *     or inf in OCP e5m2), so saturation has to come from the lowering;
 *   - cvt_pk_i8_f32x4 / cvt_f32_to_i8_sat (plain LLVM, no model): rint half
 *     even, clamp, NaN -> 0, element i -> byte i;
 *   - buffer loads/stores: the model range-checks each raw.ptr.buffer
 *     intrinsic as the hardware does (ubyte per byte, ushort per element,
 *     dword forms per dword), so the lowering's choice of intrinsic must
 *     give the IR's granules (per byte for 1-byte scalars ...).
 * Plus text checks for what cannot run on the host (ds_read_tr16_b128 as two
 * tr16_b64 reads, async_copy's aligned accesses) and llc-22 acceptance.
 * Skips what needs lli-22 / llc-22 when they are absent. Layer: tests. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "base/fp.h"
#include "lower/llc_util.h"
#include "support/f8_ref.h"

static unsigned seed_state;
static uint32_t rnd(void) {
    seed_state = seed_state * 1103515245u + 12345u;
    return seed_state >> 8;
}
static float unit(void) { return (float)rnd() / (float)(1u << 24) * 2.0f - 1.0f; }

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

/* ---- a growing text buffer ---------------------------------------------------------------------- */
typedef struct tbuf { char *s; size_t n, cap; } tbuf;
static void tput(tbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list aq;
    va_copy(aq, ap);
    int need = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (b->n + (size_t)need + 1 > b->cap) {
        b->cap = (b->n + (size_t)need + 1) * 2;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
    vsnprintf(b->s + b->n, (size_t)need + 1, fmt, ap);
    b->n += (size_t)need;
    va_end(ap);
}

/* ---- kernels: for i < n: out[i] = op(in0[i], ...) (vectors at i * count) ------------------------- */
static uint32_t cnt(rk_kernel *k, rk_type t) { return rk_type_kind_of(k, t) == RK_TK_VEC ? rk_type_count(k, t) : 1; }
static rk_type el(rk_kernel *k, rk_type t) { return rk_type_kind_of(k, t) == RK_TK_VEC ? rk_type_elem(k, t) : t; }

static rk_kernel *loop_kernel(rk_opcode code, const rk_type *in_t, uint32_t nin, rk_type out_t, rk_kernel *k) {
    rk_value p[4], in[4];
    char name[16];
    for (uint32_t j = 0; j < nin; j++) {
        snprintf(name, sizeof name, "in%u", j);
        p[j] = rk_add_param(k, name, rk_type_ptr(k, el(k, in_t[j]), RK_AS_GLOBAL), NULL);
    }
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, el(k, out_t), RK_AS_GLOBAL), NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value z = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
    rk_value i = rk_for_begin(k, z, n, one, "i", 0, NULL, NULL, NULL);
    for (uint32_t j = 0; j < nin; j++) {
        uint32_t c = cnt(k, in_t[j]);
        in[j] = rk_load_global(k, p[j], c > 1 ? rk_build_mul(k, i, rk_const_i32(k, (int32_t)c)) : i, c);
    }
    /* generic over the opcode the table row names (one harness for many ops): raw emission, then the
     * table's own check; typed builders take no opcode */
    rk_op *op = rk_emit(k, code, in, nin, &out_t, 1);
    rk_op_check(k, op);
    uint32_t oc = cnt(k, out_t);
    rk_store_global(k, out, oc > 1 ? rk_build_mul(k, i, rk_const_i32(k, (int32_t)oc)) : i, rk_op_result(op));
    rk_for_end(k, NULL, 0, NULL);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) fail_msg("%s", rk_error_message());
    return k;
}

/* ---- running: the same kernel on the emulator and, lowered, under lli ----------------------------- */
/* A kernel argument: a buffer (printed back when `out`) or one i32 per call. */
typedef struct harg {
    const void *data;
    size_t bytes;
    bool out;
    const int32_t *ivals;       /* non-NULL: an i32 scalar */
} harg;

static bool line_has(const char *p, size_t len, const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(p + i, needle, n)) return true;
    return false;
}

/* Copy the lowered text as a host module: no target lines, no attribute
 * group, flat pointers, plain calling convention; `map` renames the
 * intrinsics the models replace (pairs, NULL-ended) and drops their
 * declarations. */
static void host_text(tbuf *b, const char *ll, const char *const *map) {
    for (const char *p = ll; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) + 1 : strlen(p);
        bool drop = !strncmp(p, "target ", 7) || !strncmp(p, "attributes #0", 13);
        for (const char *const *m = map; !drop && *m; m += 2)
            if (!strncmp(p, "declare ", 8) && line_has(p, len, m[0])) drop = true;
        if (!drop) {
            for (size_t i = 0; i < len;) {
                const char *const *m;
                for (m = map; *m; m += 2)
                    if (!strncmp(p + i, m[0], strlen(m[0]))) break;
                if (*m) { tput(b, "%s", m[1]); i += strlen(m[0]); }
                else if (!strncmp(p + i, "amdgpu_kernel ", 14)) i += 14;
                else if (!strncmp(p + i, " addrspace(1)", 13)) i += 13;
                else if (!strncmp(p + i, " #0 {", 5)) { tput(b, " {"); i += 5; }
                else tput(b, "%c", p[i++]);
            }
        }
        p += len;
    }
}

/* Lower k for target, add the models and a main that makes `calls` calls
 * (resetting the out buffers first) and prints every out buffer as one hex
 * line per call; run lli and parse the lines into got (out buffers of each
 * call, in order). Returns false when lli is absent. */
static bool run_lli(const rk_kernel *k, const char *target, const char *models, const char *const *map,
                    const harg *a, uint32_t na, uint32_t calls, uint8_t *got) {
    const char *lli = lli_path();
    if (!lli) return false;
    char *ll = NULL;
    if (rk_lower_llvm(k, rk_target_find(target), RK_LLVM22, &ll) != RK_OK) fail_msg("%s", rk_error_message());
    tbuf b = {0};
    host_text(&b, ll, map);
    tput(&b, "%s\n", models);
    for (uint32_t j = 0; j < na; j++) {
        if (a[j].ivals) continue;
        for (int copy = 0; copy < (a[j].out ? 2 : 1); copy++) {
            tput(&b, "@a%u%s = global [%zu x i8] c\"", j, copy ? "init" : "", a[j].bytes);
            for (size_t i = 0; i < a[j].bytes; i++) tput(&b, "\\%02X", ((const uint8_t *)a[j].data)[i]);
            tput(&b, "\", align 16\n");
        }
    }
    tput(&b, "@fmt.b = private constant [5 x i8] c\"%%02x\\00\"\n@fmt.nl = private constant [2 x i8] c\"\\0A\\00\"\n"
             "declare i32 @printf(ptr, ...)\ndeclare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)\n"
             "define internal void @dump(ptr %%p, i64 %%n) {\nentry:\n  br label %%l\nl:\n"
             "  %%i = phi i64 [ 0, %%entry ], [ %%i2, %%l ]\n  %%q = getelementptr i8, ptr %%p, i64 %%i\n"
             "  %%v = load i8, ptr %%q\n  %%w = zext i8 %%v to i32\n"
             "  call i32 (ptr, ...) @printf(ptr @fmt.b, i32 %%w)\n  %%i2 = add i64 %%i, 1\n"
             "  %%c = icmp ult i64 %%i2, %%n\n  br i1 %%c, label %%l, label %%d\nd:\n"
             "  call i32 (ptr, ...) @printf(ptr @fmt.nl)\n  ret void\n}\n"
             "define i32 @main() {\nentry:\n");
    for (uint32_t c = 0; c < calls; c++) {
        for (uint32_t j = 0; j < na; j++)
            if (a[j].out)
                tput(&b, "  call void @llvm.memcpy.p0.p0.i64(ptr @a%u, ptr @a%uinit, i64 %zu, i1 false)\n", j, j,
                     a[j].bytes);
        if (strstr(models, "@rs_cnt")) tput(&b, "  store i32 0, ptr @rs_cnt\n");
        tput(&b, "  call void @%s(", rk_kernel_name(k));
        for (uint32_t j = 0; j < na; j++) {
            if (a[j].ivals) tput(&b, "%si32 %d", j ? ", " : "", a[j].ivals[c]);
            else tput(&b, "%sptr @a%u", j ? ", " : "", j);
        }
        tput(&b, ")\n");
        for (uint32_t j = 0; j < na; j++)
            if (a[j].out) tput(&b, "  call void @dump(ptr @a%u, i64 %zu)\n", j, a[j].bytes);
    }
    tput(&b, "  ret i32 0\n}\n");
    char path[600], cmd[1400];
    llc_tmp(path, sizeof path, "agree");
    strcat(path, ".ll");
    FILE *w = fopen(path, "w");
    assert_non_null(w);
    fputs(b.s, w);
    fclose(w);
    snprintf(cmd, sizeof cmd, "'%s' '%s' 2>&1", lli, path);
    FILE *pp = popen(cmd, "r");
    assert_non_null(pp);
    size_t line_cap = 1 << 16;
    char *line = malloc(line_cap);
    size_t pos = 0;
    for (uint32_t c = 0; c < calls; c++)
        for (uint32_t j = 0; j < na; j++) {
            if (!a[j].out) continue;
            if (!fgets(line, (int)line_cap, pp)) {
                fprintf(stderr, "lli produced too little; module kept at %s\n", path);
                fail();
            }
            if (strlen(line) != 2 * a[j].bytes + 1) {
                fprintf(stderr, "lli: %.300s (module kept at %s)\n", line, path);
                fail();
            }
            for (size_t i = 0; i < a[j].bytes; i++) {
                unsigned v;
                sscanf(line + 2 * i, "%2x", &v);
                got[pos++] = (uint8_t)v;
            }
        }
    pclose(pp);
    remove(path);
    free(line);
    free(b.s);
    rk_string_free(ll);
    return true;
}

/* The same calls on the emulator (one thread: the kernel loops itself). */
static void run_emu(const rk_kernel *k, const char *target, const harg *a, uint32_t na, uint32_t calls, uint8_t *got) {
    rk_emu *e = rk_emu_new(rk_target_find(target), NULL);
    assert_non_null(e);
    void *bufs[8] = {0}, *args[8];
    uint64_t addr[8];
    int32_t iv[8];
    size_t pos = 0;
    for (uint32_t j = 0; j < na; j++) {
        if (a[j].ivals) { args[j] = &iv[j]; continue; }
        bufs[j] = malloc(a[j].bytes);
        memcpy(bufs[j], a[j].data, a[j].bytes);
        assert_int_equal(rk_emu_register(e, bufs[j], a[j].bytes, NULL, &addr[j]), RK_OK);
        args[j] = &addr[j];
    }
    for (uint32_t c = 0; c < calls; c++) {
        for (uint32_t j = 0; j < na; j++) {
            if (a[j].ivals) iv[j] = a[j].ivals[c];
            else if (a[j].out) memcpy(bufs[j], a[j].data, a[j].bytes);
        }
        const uint32_t g[3] = {1, 1, 1};
        rk_status st = rk_emu_launch(e, k, g, g, 0, args);
        if (st) fail_msg("emulator: %s", rk_error_message());
        for (uint32_t j = 0; j < na; j++)
            if (a[j].out) { memcpy(got + pos, bufs[j], a[j].bytes); pos += a[j].bytes; }
    }
    rk_emu_free(e);
    for (uint32_t j = 0; j < na; j++)
        if (!a[j].ivals) free(bufs[j]);
}

/* ---- 8-bit floats ---------------------------------------------------------------------------------- */
/* The hardware without its clamp bit: the same nearest-even search over
 * the codes plus the next binade's value; landing there (or beyond) is an
 * overflow: NaN (S.1111.111 OCP e4m3, 0x80 FNUZ) or inf (S.11111.00 OCP
 * e5m2). @hw_enc_<tag>(double) -> code. */
static void model_enc(tbuf *b, const tf8 *f) {
    unsigned K = f->maxcode + 2;
    tput(b, "@tab_%s = private constant [%u x double] [", f->tag, K);
    for (unsigned c = 0; c < K; c++) tput(b, "%sdouble 0x%016llX", c ? ", " : "", (unsigned long long)rk_f64_bits(tf8_val(f, c)));
    tput(b, "]\n");
    const char *nan = f->fnuz ? "  %nc = or i32 0, 128\n" : f->e5ocp ? "  %nc = or i32 %sign, 126\n" : "  %nc = or i32 %sign, 127\n";
    const char *ovf = f->fnuz ? "  %oc = or i32 0, 128\n" : f->e5ocp ? "  %oc = or i32 %sign, 124\n" : "  %oc = or i32 %sign, 127\n";
    tput(b,
         "define internal i32 @hw_enc_%s(double %%y) {\nentry:\n"
         "  %%bits = bitcast double %%y to i64\n  %%neg = icmp slt i64 %%bits, 0\n"
         "  %%sign = select i1 %%neg, i32 128, i32 0\n  %%a = call double @llvm.fabs.f64(double %%y)\n"
         "  %%isnan = fcmp uno double %%y, 0.0\n  br i1 %%isnan, label %%nan, label %%loop\n"
         "nan:\n%s  ret i32 %%nc\n"
         "loop:\n  %%c = phi i32 [ 0, %%entry ], [ %%c1, %%loop ]\n  %%best = phi i32 [ 0, %%entry ], [ %%best1, %%loop ]\n"
         "  %%bd = phi double [ 0x7FF0000000000000, %%entry ], [ %%bd1, %%loop ]\n"
         "  %%p = getelementptr [%u x double], ptr @tab_%s, i32 0, i32 %%c\n  %%v = load double, ptr %%p\n"
         "  %%df = fsub double %%v, %%a\n  %%d = call double @llvm.fabs.f64(double %%df)\n"
         "  %%lt = fcmp olt double %%d, %%bd\n  %%eq = fcmp oeq double %%d, %%bd\n  %%odd = and i32 %%c, 1\n"
         "  %%even = icmp eq i32 %%odd, 0\n  %%tie = and i1 %%eq, %%even\n  %%take = or i1 %%lt, %%tie\n"
         "  %%best1 = select i1 %%take, i32 %%c, i32 %%best\n  %%bd1 = select i1 %%take, double %%d, double %%bd\n"
         "  %%c1 = add i32 %%c, 1\n  %%more = icmp slt i32 %%c1, %u\n  br i1 %%more, label %%loop, label %%done\n"
         "done:\n  %%big = fcmp oge double %%a, 0x%016llX\n  %%b2 = select i1 %%big, i32 %u, i32 %%best1\n"
         "  %%ov = icmp eq i32 %%b2, %u\n  br i1 %%ov, label %%over, label %%fin\n"
         "over:\n%s  ret i32 %%oc\n"
         "fin:\n  %%z = icmp eq i32 %%b2, 0\n  %%r = or i32 %%sign, %%b2\n  %%r2 = select i1 %%z, i32 %s, i32 %%r\n"
         "  ret i32 %%r2\n}\n",
         f->tag, nan, K, f->tag, K, (unsigned long long)rk_f64_bits(tf8_val(f, K - 1)), K - 1, K - 1, ovf,
         f->fnuz ? "0" : "%r");
}

/* v_cvt_pk_{fp8,bf8}_f32 (a, b, old, word_sel) and the gfx950 scaled form,
 * in the dialect `f`; `name` is fp8 or bf8. */
static void model_cvt(tbuf *b, const tf8 *f, const char *name, bool scaled) {
    tput(b, "define internal %s @hw_cvt_%spk_%s_f32(%sfloat %%a, float %%b, %s i1 %%hi) {\nentry:\n",
         scaled ? "<2 x i16>" : "i32", scaled ? "scalef32_" : "", name, scaled ? "<2 x i16> %old16, " : "",
         scaled ? "float %s," : "i32 %old,");
    tput(b, "  %%ad = fpext float %%a to double\n  %%bd = fpext float %%b to double\n");
    if (scaled) {
        /* x / 2^(e-127) exactly in double; e = 255: NaN with x's sign */
        tput(b, "  %%old = bitcast <2 x i16> %%old16 to i32\n  %%sb = bitcast float %%s to i32\n  %%se = lshr i32 %%sb, 23\n"
                "  %%e = and i32 %%se, 255\n  %%isn = icmp eq i32 %%e, 255\n  %%k = sub i32 1150, %%e\n"
                "  %%k64 = zext i32 %%k to i64\n  %%pb = shl i64 %%k64, 52\n  %%p = bitcast i64 %%pb to double\n"
                "  %%as = fmul double %%ad, %%p\n  %%bs = fmul double %%bd, %%p\n"
                "  %%an = call double @llvm.copysign.f64(double 0x7FF8000000000000, double %%ad)\n"
                "  %%bn = call double @llvm.copysign.f64(double 0x7FF8000000000000, double %%bd)\n"
                "  %%ya = select i1 %%isn, double %%an, double %%as\n  %%yb = select i1 %%isn, double %%bn, double %%bs\n");
    } else {
        tput(b, "  %%ya = fmul double %%ad, 1.0\n  %%yb = fmul double %%bd, 1.0\n");
    }
    tput(b,
         "  %%ca = call i32 @hw_enc_%s(double %%ya)\n  %%cb = call i32 @hw_enc_%s(double %%yb)\n"
         "  %%cbs = shl i32 %%cb, 8\n  %%w = or i32 %%ca, %%cbs\n  %%wh = shl i32 %%w, 16\n"
         "  %%klo = and i32 %%old, 65535\n  %%khi = and i32 %%old, -65536\n  %%rhi = or i32 %%klo, %%wh\n"
         "  %%rlo = or i32 %%khi, %%w\n  %%r = select i1 %%hi, i32 %%rhi, i32 %%rlo\n",
         f->tag, f->tag);
    if (scaled) tput(b, "  %%rv = bitcast i32 %%r to <2 x i16>\n  ret <2 x i16> %%rv\n}\n");
    else tput(b, "  ret i32 %%r\n}\n");
}

enum { NF = 1200 };

static void f8_inputs(const tf8 *f, float *x) {
    double max = tf8_val(f, f->maxcode), next = tf8_val(f, f->maxcode + 1), below = tf8_val(f, f->maxcode - 1);
    const double fixed[] = {max, -max, (max + next) / 2, -(max + next) / 2, next, -next, (max + below) / 2, 2 * max,
                            -3 * max, 1e30, -1e30, INFINITY, -INFINITY, NAN, -NAN, 0.0, -0.0, 1e-30, -1e-30};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) x[n++] = (float)fixed[i];
    for (int i = 0; i < 6; i++) {
        x[n++] = nextafterf((float)fixed[i], INFINITY);
        x[n++] = nextafterf((float)fixed[i], -INFINITY);
    }
    for (unsigned c = 0; c <= f->maxcode && n < NF - 200; c++) x[n++] = (float)tf8_val(f, c);   /* the grid itself */
    while (n < NF) x[n++] = ldexpf(unit(), (int)(rnd() % 40) - 24 + (f->m == 2 ? 8 : 0));
}

/* One encode op on `target` (dialect pair fp8/bf8 of the chip) through lli
 * and the emulator; scaled ops also take one scale per 4 elements. */
static void check_encode(const char *target, const tf8 *fp8, const tf8 *bf8, rk_opcode code, bool packed, bool scaled) {
    bool bf = code == RK_OP_CVT_F32_TO_BF8 || code == RK_OP_CVT_PK_BF8_F32X4 || code == RK_OP_CVT_SCALEF32_PK_BF8_F32;
    const tf8 *f = bf ? bf8 : fp8;
    static float x[NF], sc[NF / 4];
    static uint8_t got[NF], emu[NF];
    uint8_t zero[NF] = {0};
    f8_inputs(f, x);
    const int exps[] = {127, 0, 1, 100, 130, 160, 247, 254, 255};
    for (int i = 0; i < NF / 4; i++) sc[i] = rk_bits_f32((uint32_t)exps[i % 9] << 23 | (rnd() & 0x7fffff));
    rk_kernel *k = rk_kernel_new("enc");
    rk_type v4 = rk_type_vec(k, RK_T_F32, 4), ot = packed ? rk_type_vec(k, (rk_type){f->s}, 4) : (rk_type){f->s};
    rk_type it[2] = {packed ? v4 : RK_T_F32, RK_T_F32};
    loop_kernel(code, it, scaled ? 2 : 1, ot, k);
    int32_t n = packed ? NF / 4 : NF;
    harg a[4] = {{x, sizeof x, false, NULL}};
    uint32_t na = 1;
    if (scaled) a[na++] = (harg){sc, sizeof sc, false, NULL};
    a[na++] = (harg){zero, sizeof zero, true, NULL};
    a[na++] = (harg){NULL, 0, false, &n};
    tbuf m = {0};
    tput(&m, "declare double @llvm.fabs.f64(double)\ndeclare double @llvm.copysign.f64(double, double)\n");
    model_enc(&m, fp8);
    model_enc(&m, bf8);
    model_cvt(&m, fp8, "fp8", false);
    model_cvt(&m, bf8, "bf8", false);
    model_cvt(&m, fp8, "fp8", true);
    model_cvt(&m, bf8, "bf8", true);
    /* the model alone does not saturate: twice max is an overflow code */
    tput(&m, "define i32 @probe() {\n  %%c = call i32 @hw_enc_%s(double 0x%016llX)\n  ret i32 %%c\n}\n", f->tag,
         (unsigned long long)rk_f64_bits(2 * tf8_val(f, f->maxcode)));
    static const char *const map[] = {"@llvm.amdgcn.cvt.pk.fp8.f32(", "@hw_cvt_pk_fp8_f32(",
                                      "@llvm.amdgcn.cvt.pk.bf8.f32(", "@hw_cvt_pk_bf8_f32(",
                                      "@llvm.amdgcn.cvt.scalef32.pk.fp8.f32(", "@hw_cvt_scalef32_pk_fp8_f32(",
                                      "@llvm.amdgcn.cvt.scalef32.pk.bf8.f32(", "@hw_cvt_scalef32_pk_bf8_f32(", NULL};
    if (!run_lli(k, target, m.s, map, a, na, 1, got)) {
        fprintf(stderr, "SKIP: lli-22 not found on PATH\n");
        free(m.s);
        rk_kernel_free(k);
        skip();
    }
    run_emu(k, target, a, na, 1, emu);
    int bad = 0;
    for (int i = 0; i < NF; i++) {
        double y = x[i];
        if (scaled) {
            int e = (int)(rk_f32_bits(sc[i / 4]) >> 23);
            y = e == 255 ? copysign(NAN, y) : ldexp(y, 127 - e);
        }
        uint8_t want = tf8_encode(f, y);
        if ((got[i] != want || emu[i] != want) && bad++ < 8)
            fprintf(stderr, "%s %s: %a -> lowered 0x%02x, emulator 0x%02x, want 0x%02x\n", target, rk_opcode_name(code),
                    y, got[i], emu[i], want);
    }
    printf("%s %s (%s): %d encodes, %d wrong\n", target, rk_opcode_name(code), f->tag, NF, bad);
    assert_int_equal(bad, 0);
    free(m.s);
    rk_kernel_free(k);
}

static void t_fp8_encodes_saturate(void **state) {
    (void)state;
    const tf8 *ocp8 = &TF8[0], *ocp5 = &TF8[1], *fnuz8 = &TF8[2], *fnuz5 = &TF8[3];
    const rk_opcode scalar[] = {RK_OP_CVT_F32_TO_FP8, RK_OP_CVT_F32_TO_BF8}, pk[] = {RK_OP_CVT_PK_FP8_F32X4, RK_OP_CVT_PK_BF8_F32X4};
    for (int i = 0; i < 2; i++) {
        check_encode("gfx942", fnuz8, fnuz5, scalar[i], false, false);
        check_encode("gfx942", fnuz8, fnuz5, pk[i], true, false);
        check_encode("gfx950", ocp8, ocp5, scalar[i], false, false);
        check_encode("gfx950", ocp8, ocp5, pk[i], true, false);
    }
    check_encode("gfx950", ocp8, ocp5, RK_OP_CVT_SCALEF32_PK_FP8_F32, true, true);
    check_encode("gfx950", ocp8, ocp5, RK_OP_CVT_SCALEF32_PK_BF8_F32, true, true);
}

/* The models really overflow to NaN/inf: without the lowering's clamp the
 * agreement above could not hold. */
static void t_fp8_model_overflows(void **state) {
    (void)state;
    const char *lli = lli_path();
    if (!lli) { fprintf(stderr, "SKIP: lli-22 not found on PATH\n"); skip(); }
    for (size_t fi = 0; fi < sizeof TF8 / sizeof *TF8; fi++) {
        const tf8 *f = &TF8[fi];
        tbuf m = {0};
        tput(&m, "declare double @llvm.fabs.f64(double)\ndeclare i32 @printf(ptr, ...)\n"
                 "@fmt = private constant [4 x i8] c\"%%x\\0A\\00\"\n");
        model_enc(&m, f);
        double max = tf8_val(f, f->maxcode), tie = (max + tf8_val(f, f->maxcode + 1)) / 2;
        const double probes[] = {max, 2 * max, INFINITY, -INFINITY, tie};
        tput(&m, "define i32 @main() {\n");
        for (int i = 0; i < 5; i++)
            tput(&m, "  %%c%d = call i32 @hw_enc_%s(double 0x%016llX)\n  call i32 (ptr, ...) @printf(ptr @fmt, i32 %%c%d)\n", i,
                 f->tag, (unsigned long long)rk_f64_bits(probes[i]), i);
        tput(&m, "  ret i32 0\n}\n");
        char path[600], cmd[1400], line[64];
        llc_tmp(path, sizeof path, "model");
        strcat(path, ".ll");
        FILE *w = fopen(path, "w");
        fputs(m.s, w);
        fclose(w);
        snprintf(cmd, sizeof cmd, "'%s' '%s' 2>&1", lli, path);
        FILE *p = popen(cmd, "r");
        unsigned c[5];
        for (int i = 0; i < 5; i++) {
            assert_non_null(fgets(line, sizeof line, p));
            c[i] = (unsigned)strtoul(line, NULL, 16);
        }
        pclose(p);
        remove(path);
        unsigned ovf = f->fnuz ? 0x80 : f->e5ocp ? 0x7c : 0x7f;
        assert_int_equal(c[0], f->maxcode);
        assert_int_equal(c[1], ovf);
        assert_int_equal(c[2], ovf);
        assert_int_equal(c[3], f->fnuz ? 0x80 : 0x80 | ovf);
        /* the tie with the next binade: even code wins — max's code is odd on
         * FNUZ e4m3 and both e5m2 (overflow), even on OCP e4m3 (stays max) */
        assert_int_equal(c[4], (f->maxcode & 1) ? ovf : f->maxcode);
        free(m.s);
    }
}

/* ---- f32 -> i8 -------------------------------------------------------------------------------------- */
static int8_t i8_ref(float x) {
    if (isnan(x)) return 0;
    double r = nearbyint((double)x);
    return (int8_t)(r > 127 ? 127 : r < -128 ? -128 : r);
}

static void t_i8_byte_order(void **state) {
    (void)state;
    enum { N8 = 600 };
    static float x[N8];
    static int8_t got[N8], emu[N8];
    int8_t zero[N8] = {0};
    const float fixed[] = {1, 2, 3, 4, 0.5f, 1.5f, 2.5f, -2.5f, 127.5f, 126.5f, -128.5f, -127.5f, NAN, INFINITY, -INFINITY,
                           1e10f, -0.0f, -0.5f, 200, -200};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) x[n++] = fixed[i];
    while (n < N8) x[n++] = unit() * 300.0f;
    for (int packed = 0; packed < 2; packed++) {
        rk_kernel *k = rk_kernel_new("toi8");
        rk_type it = packed ? rk_type_vec(k, RK_T_F32, 4) : RK_T_F32, ot = packed ? rk_type_vec(k, RK_T_I8, 4) : RK_T_I8;
        loop_kernel(packed ? RK_OP_CVT_PK_I8_F32X4 : RK_OP_CVT_F32_TO_I8_SAT, &it, 1, ot, k);
        int32_t cnt_ = packed ? N8 / 4 : N8;
        harg a[] = {{x, sizeof x, false, NULL}, {zero, sizeof zero, true, NULL}, {NULL, 0, false, &cnt_}};
        static const char *const none[] = {NULL};
        if (!run_lli(k, "gfx942", "", none, a, 3, 1, (uint8_t *)got)) {
            fprintf(stderr, "SKIP: lli-22 not found on PATH\n");
            rk_kernel_free(k);
            skip();
        }
        run_emu(k, "gfx942", a, 3, 1, (uint8_t *)emu);
        for (int i = 0; i < N8; i++) {
            if (got[i] != i8_ref(x[i]) || emu[i] != i8_ref(x[i]))
                fprintf(stderr, "%s byte %d from %a: lowered %d, emulator %d, want %d\n", packed ? "pk" : "scalar", i,
                        (double)x[i], got[i], emu[i], i8_ref(x[i]));
            assert_int_equal(got[i], i8_ref(x[i]));
            assert_int_equal(emu[i], i8_ref(x[i]));
        }
        assert_int_equal(got[0], 1);    /* (1, 2, 3, 4) -> bytes 01 02 03 04 */
        assert_int_equal(got[3], 4);
        rk_kernel_free(k);
    }
}

/* ---- buffers ------------------------------------------------------------------------------------------ */
/* The hardware's range check per intrinsic: the ubyte form per byte, ushort
 * per element, the dword forms per dword (o + 4 <= num_records). A rsrc is
 * an index into a table of (base, num_records) made by @hw_make_rsrc. */
static void model_buffers(tbuf *b) {
    tput(b, "@rs_base = internal global [16 x ptr] zeroinitializer\n@rs_n = internal global [16 x i64] zeroinitializer\n"
            "@rs_cnt = internal global i32 0\n"
            "define internal ptr addrspace(8) @hw_make_rsrc(ptr %%p, i16 %%stride, i64 %%n, i32 %%w3) {\n"
            "  %%c0 = load i32, ptr @rs_cnt\n  %%c = and i32 %%c0, 15\n  %%c1 = add i32 %%c0, 1\n  store i32 %%c1, ptr @rs_cnt\n"
            "  %%pb = getelementptr [16 x ptr], ptr @rs_base, i32 0, i32 %%c\n  store ptr %%p, ptr %%pb\n"
            "  %%pn = getelementptr [16 x i64], ptr @rs_n, i32 0, i32 %%c\n  %%n32 = and i64 %%n, 4294967295\n"
            "  store i64 %%n32, ptr %%pn\n  %%r = inttoptr i32 %%c to ptr addrspace(8)\n  ret ptr addrspace(8) %%r\n}\n"
            "define internal void @hw_bxfer(ptr addrspace(8) %%r, i32 %%vo, i32 %%so, ptr %%val, i32 %%bytes, i32 %%g, i1 %%isst) {\n"
            "entry:\n  %%id = ptrtoint ptr addrspace(8) %%r to i32\n"
            "  %%pb = getelementptr [16 x ptr], ptr @rs_base, i32 0, i32 %%id\n  %%base = load ptr, ptr %%pb\n"
            "  %%pn = getelementptr [16 x i64], ptr @rs_n, i32 0, i32 %%id\n  %%n = load i64, ptr %%pn\n"
            "  %%vo64 = zext i32 %%vo to i64\n  %%so64 = zext i32 %%so to i64\n  %%off = add i64 %%vo64, %%so64\n"
            "  %%g64 = zext i32 %%g to i64\n  br label %%loop\n"
            "loop:\n  %%k = phi i32 [ 0, %%entry ], [ %%k1, %%next ]\n  %%k64 = zext i32 %%k to i64\n"
            "  %%km = urem i32 %%k, %%g\n  %%gk = sub i32 %%k, %%km\n  %%gk64 = zext i32 %%gk to i64\n"
            "  %%e1 = add i64 %%off, %%gk64\n  %%e2 = add i64 %%e1, %%g64\n  %%in = icmp ule i64 %%e2, %%n\n"
            "  %%bo = add i64 %%off, %%k64\n  %%mem = getelementptr i8, ptr %%base, i64 %%bo\n"
            "  %%vp = getelementptr i8, ptr %%val, i64 %%k64\n  br i1 %%isst, label %%st, label %%ld\n"
            "ld:\n  br i1 %%in, label %%ldin, label %%ldout\n"
            "ldin:\n  %%b = load i8, ptr %%mem\n  store i8 %%b, ptr %%vp\n  br label %%next\n"
            "ldout:\n  store i8 0, ptr %%vp\n  br label %%next\n"
            "st:\n  br i1 %%in, label %%stin, label %%next\n"
            "stin:\n  %%b2 = load i8, ptr %%vp\n  store i8 %%b2, ptr %%mem\n  br label %%next\n"
            "next:\n  %%k1 = add i32 %%k, 1\n  %%more = icmp ult i32 %%k1, %%bytes\n  br i1 %%more, label %%loop, label %%done\n"
            "done:\n  ret void\n}\n");
    static const struct { const char *m, *ty; unsigned bytes; } W[] = {
        {"i8", "i8", 1}, {"i16", "i16", 2}, {"i32", "i32", 4}, {"v2i32", "<2 x i32>", 8}, {"v3i32", "<3 x i32>", 12},
        {"v4i32", "<4 x i32>", 16}};
    for (size_t i = 0; i < sizeof W / sizeof *W; i++) {
        unsigned g = W[i].bytes < 4 ? W[i].bytes : 4;
        tput(b, "define internal %s @hw_buffer_load_%s(ptr addrspace(8) %%r, i32 %%vo, i32 %%so, i32 %%aux) {\n"
                "  %%t = alloca %s, align 16\n"
                "  call void @hw_bxfer(ptr addrspace(8) %%r, i32 %%vo, i32 %%so, ptr %%t, i32 %u, i32 %u, i1 false)\n"
                "  %%v = load %s, ptr %%t\n  ret %s %%v\n}\n",
             W[i].ty, W[i].m, W[i].ty, W[i].bytes, g, W[i].ty, W[i].ty);
        tput(b, "define internal void @hw_buffer_store_%s(%s %%v, ptr addrspace(8) %%r, i32 %%vo, i32 %%so, i32 %%aux) {\n"
                "  %%t = alloca %s, align 16\n  store %s %%v, ptr %%t\n"
                "  call void @hw_bxfer(ptr addrspace(8) %%r, i32 %%vo, i32 %%so, ptr %%t, i32 %u, i32 %u, i1 true)\n"
                "  ret void\n}\n",
             W[i].m, W[i].ty, W[i].ty, W[i].ty, W[i].bytes, g);
    }
}

typedef struct bcase {
    const char *what;
    rk_opcode load;          /* BUFFER_LOAD[_F16|_VN|_VN_F16]; the store is the matching form */
    rk_scalar elem;
    uint32_t count, bytes;
    uint32_t granule;        /* ops.def */
    const char *intrinsic;   /* what the lowering must call */
} bcase;

static const bcase BCASES[] = {
    {"i8 scalar", RK_OP_BUFFER_LOAD, RK_S_I8, 1, 1, 1, "i8"},
    {"fp8 scalar", RK_OP_BUFFER_LOAD, RK_S_FP8E4M3FNUZ, 1, 1, 1, "i8"},
    {"i16 scalar", RK_OP_BUFFER_LOAD, RK_S_I16, 1, 2, 2, "i16"},
    {"buffer_load_f16", RK_OP_BUFFER_LOAD_F16, RK_S_F16, 1, 2, 2, "i16"},
    {"f32 scalar", RK_OP_BUFFER_LOAD, RK_S_F32, 1, 4, 4, "i32"},
    {"i64 scalar", RK_OP_BUFFER_LOAD, RK_S_I64, 1, 8, 4, "v2i32"},
    {"vec<i8x4>", RK_OP_BUFFER_LOAD_VN, RK_S_I8, 4, 4, 4, "i32"},
    {"vec<i8x8>", RK_OP_BUFFER_LOAD_VN, RK_S_I8, 8, 8, 4, "v2i32"},
    {"vec<i8x16>", RK_OP_BUFFER_LOAD_VN, RK_S_I8, 16, 16, 4, "v4i32"},
    {"vec<f16x4> (vN_f16)", RK_OP_BUFFER_LOAD_VN_F16, RK_S_F16, 4, 8, 4, "v2i32"},
    {"vec<f32x3>", RK_OP_BUFFER_LOAD_VN, RK_S_F32, 3, 12, 4, "v3i32"},
};

static rk_opcode store_of(rk_opcode load) {
    switch (load) {
    case RK_OP_BUFFER_LOAD_F16: return RK_OP_BUFFER_STORE_F16;
    case RK_OP_BUFFER_LOAD_VN: return RK_OP_BUFFER_STORE_VN;
    case RK_OP_BUFFER_LOAD_VN_F16: return RK_OP_BUFFER_STORE_VN_F16;
    default: return RK_OP_BUFFER_STORE;
    }
}

/* (B, O, nrec, lanes): for t < lanes, at byte offset t * bytes: a load reads
 * the view [B, B + nrec) into O[t]; a store writes B[t] through the view
 * [O, O + nrec). */
static rk_kernel *buffer_kernel(const bcase *c, bool store, size_t id) {
    char name[32];
    snprintf(name, sizeof name, "%s%zu", store ? "bstore" : "bload", id);
    rk_kernel *k = rk_kernel_new(name);
    rk_type e = (rk_type){c->elem};
    rk_type vt = c->count > 1 ? rk_type_vec(k, e, c->count) : e;
    rk_value B = rk_add_param(k, "B", rk_type_ptr(k, e, RK_AS_GLOBAL), NULL);
    rk_value O = rk_add_param(k, "O", rk_type_ptr(k, e, RK_AS_GLOBAL), NULL);
    rk_value nrec = rk_add_param(k, "nrec", RK_T_I32, NULL), lanes = rk_add_param(k, "lanes", RK_T_I32, NULL);
    rk_value z = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
    rk_value r = rk_build_buffer_rsrc(k, store ? O : B, nrec);
    rk_value t = rk_for_begin(k, z, lanes, one, "t", 0, NULL, NULL, NULL);
    rk_value voff = rk_build_mul(k, t, rk_const_i32(k, (int32_t)c->bytes));
    rk_value ti = c->count > 1 ? rk_build_mul(k, t, rk_const_i32(k, (int32_t)c->count)) : t;
    rk_op *op;
    if (store) {
        rk_value in[4] = {r, voff, z, rk_load_global(k, B, ti, c->count)};
        op = rk_emit(k, store_of(c->load), in, 4, NULL, 0);
    } else {
        rk_value in[3] = {r, voff, z};
        op = rk_emit(k, c->load, in, 3, &vt, 1);
    }
    if (c->load == RK_OP_BUFFER_LOAD || c->load == RK_OP_BUFFER_LOAD_VN) rk_op_set_type(k, op, "elem_type", e);
    if (c->count > 1) rk_op_set_int(k, op, "dwords", c->bytes / 4);
    rk_op_check(k, op);
    if (!store) rk_store_global(k, O, ti, rk_op_result(op));
    rk_for_end(k, NULL, 0, NULL);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) fail_msg("%s", rk_error_message());
    return k;
}

/* The lowering calls the intrinsic whose hardware granule is the IR's, and
 * the sweep of num_records across 4 accesses agrees byte for byte. */
static void t_buffer_granules(void **state) {
    (void)state;
    enum { LANES = 4, AREA = 64, MAXCALLS = 4 * 16 + 1 };
    static uint8_t B[AREA], O[AREA], got[MAXCALLS * AREA], emu[MAXCALLS * AREA];
    for (int i = 0; i < AREA; i++) B[i] = (uint8_t)((i * 7 + 1) | 1);
    memset(O, 0xee, sizeof O);
    bool have_lli = lli_path() != NULL, have_llc = llc_path() != NULL;
    const char *targets[] = {"gfx942", "gfx90a", "gfx950"};
    llc_merge merged[3] = {{0}};
    for (size_t ci = 0; ci < sizeof BCASES / sizeof *BCASES; ci++) {
        const bcase *c = &BCASES[ci];
        for (int store = 0; store < 2; store++) {
            rk_kernel *k = buffer_kernel(c, store, ci);
            char want_call[96];
            snprintf(want_call, sizeof want_call, "@llvm.amdgcn.raw.ptr.buffer.%s.%s(", store ? "store" : "load", c->intrinsic);
            /* an FNUZ fp8 element type is legal on gfx942 only */
            for (int ti = 0; ti < (c->elem == RK_S_FP8E4M3FNUZ ? 1 : 3); ti++) {
                char *ll = NULL;
                if (rk_lower_llvm(k, rk_target_find(targets[ti]), RK_LLVM22, &ll) != RK_OK) fail_msg("%s", rk_error_message());
                if (!strstr(ll, want_call)) fail_msg("%s %s on %s: no call to %s", c->what, store ? "store" : "load",
                                                      targets[ti], want_call);
                llc_merge_add(&merged[ti], ll);
                rk_string_free(ll);
            }
            if (!have_lli) { rk_kernel_free(k); continue; }
            int32_t nrecs[MAXCALLS], lanes[MAXCALLS];
            uint32_t calls = 0;
            for (uint32_t n = 0; n <= LANES * c->bytes; n++, calls++) {
                nrecs[calls] = (int32_t)n;
                lanes[calls] = LANES;
            }
            harg a[] = {{B, AREA, false, NULL}, {O, AREA, true, NULL}, {NULL, 0, false, nrecs}, {NULL, 0, false, lanes}};
            static const char *const map[] = {
                "@llvm.amdgcn.make.buffer.rsrc.p8.p1(", "@hw_make_rsrc(",
                "@llvm.amdgcn.raw.ptr.buffer.load.i8(", "@hw_buffer_load_i8(",
                "@llvm.amdgcn.raw.ptr.buffer.load.i16(", "@hw_buffer_load_i16(",
                "@llvm.amdgcn.raw.ptr.buffer.load.i32(", "@hw_buffer_load_i32(",
                "@llvm.amdgcn.raw.ptr.buffer.load.v2i32(", "@hw_buffer_load_v2i32(",
                "@llvm.amdgcn.raw.ptr.buffer.load.v3i32(", "@hw_buffer_load_v3i32(",
                "@llvm.amdgcn.raw.ptr.buffer.load.v4i32(", "@hw_buffer_load_v4i32(",
                "@llvm.amdgcn.raw.ptr.buffer.store.i8(", "@hw_buffer_store_i8(",
                "@llvm.amdgcn.raw.ptr.buffer.store.i16(", "@hw_buffer_store_i16(",
                "@llvm.amdgcn.raw.ptr.buffer.store.i32(", "@hw_buffer_store_i32(",
                "@llvm.amdgcn.raw.ptr.buffer.store.v2i32(", "@hw_buffer_store_v2i32(",
                "@llvm.amdgcn.raw.ptr.buffer.store.v3i32(", "@hw_buffer_store_v3i32(",
                "@llvm.amdgcn.raw.ptr.buffer.store.v4i32(", "@hw_buffer_store_v4i32(", NULL};
            tbuf m = {0};
            model_buffers(&m);
            assert_true(run_lli(k, "gfx942", m.s, map, a, 4, calls, got));
            run_emu(k, "gfx942", a, 4, calls, emu);
            for (uint32_t cl = 0; cl < calls; cl++) {
                uint32_t nrec = (uint32_t)nrecs[cl];
                uint8_t want[AREA];
                memcpy(want, O, AREA);
                for (uint32_t t = 0; t < LANES; t++)
                    for (uint32_t g = 0; g < c->bytes; g += c->granule) {
                        uint32_t off = t * c->bytes;
                        bool in = off + g + c->granule <= nrec;
                        for (uint32_t q = g; q < g + c->granule; q++) {
                            if (store) { if (in) want[off + q] = B[off + q]; }
                            else want[off + q] = in ? B[off + q] : 0;
                        }
                    }
                const uint8_t *gl = got + (size_t)cl * AREA, *ge = emu + (size_t)cl * AREA;
                for (int i = 0; i < AREA; i++)
                    if (gl[i] != want[i] || ge[i] != want[i])
                        fail_msg("%s %s, num_records %u: byte %d lowered 0x%02x, emulator 0x%02x, want 0x%02x", c->what,
                                 store ? "store" : "load", nrec, i, gl[i], ge[i], want[i]);
            }
            free(m.s);
            rk_kernel_free(k);
        }
    }
    for (int ti = 0; ti < 3; ti++) {
        if (have_llc) {
            char *text = llc_merge_text(&merged[ti]), *log = NULL;
            if (llc_compile(text, "amdgcn-amd-amdhsa", targets[ti], &log))
                fail_msg("llc-22 refused the buffer kernels on %s:\n%s", targets[ti], log ? log : "");
            free(log);
            free(text);
        }
        llc_merge_free(&merged[ti]);
    }
}

/* ---- what cannot run on the host ------------------------------------------------------------------------- */
/* tr16_b128 = tr16_b64 at the lane's address and at +8 bytes, in that order;
 * async_copy loads and stores `bytes` at alignment `bytes`. */
static void t_text_definitions(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("defs");
    rk_value S = rk_add_param(k, "S", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    rk_value O = rk_add_param(k, "O", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    uint32_t d = 1024;
    rk_value sm = rk_build_smem_alloc(k, RK_T_F16, &d, 1);
    rk_value t = rk_build_thread_id(k, 0), t8 = rk_build_mul(k, t, rk_const_i32(k, 8));
    rk_build_async_copy(k, S, t8, sm, t8, rk_const_bool(k, true), 16);
    rk_build_async_commit_group(k);
    rk_build_async_wait_group(k, 0);
    rk_build_sync(k);
    rk_value tr = rk_build_ds_read_tr16_b128(k, sm, &t8);
    rk_store_global(k, O, t8, tr);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = NULL;
    if (rk_lower_llvm(k, rk_target_find("gfx950"), RK_LLVM22, &ll) != RK_OK) fail_msg("%s", rk_error_message());
    const char *c1 = strstr(ll, "call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) ");
    assert_non_null(c1);
    const char *c2 = strstr(c1 + 1, "call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) ");
    assert_non_null(c2);
    assert_null(strstr(strchr(c2, '\n'), "@llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr"));   /* exactly two */
    /* the second read's address is the first's + 8 bytes */
    char a1[64], a2[64], lo[64], hi[64];
    assert_int_equal(sscanf(c1, "call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %63[^)]", a1), 1);
    assert_int_equal(sscanf(c2, "call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %63[^)]", a2), 1);
    char want[400];
    snprintf(want, sizeof want, "%s = getelementptr inbounds i8, ptr addrspace(3) %s, i32 8", a2, a1);
    if (!strstr(ll, want)) fail_msg("no '%s' in:\n%s", want, ll);
    /* concatenated low read first */
    const char *e1 = c1;
    while (e1 > ll && e1[-1] != '\n') e1--;
    assert_int_equal(sscanf(e1, " %63s =", lo), 1);
    const char *e2 = c2;
    while (e2 > ll && e2[-1] != '\n') e2--;
    assert_int_equal(sscanf(e2, " %63s =", hi), 1);
    snprintf(want, sizeof want, "shufflevector <4 x i16> %s, <4 x i16> %s, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, "
                                "i32 5, i32 6, i32 7>", lo, hi);
    if (!strstr(ll, want)) fail_msg("no '%s' in:\n%s", want, ll);
    /* async_copy: a 16-byte load and store at align 16 */
    assert_non_null(strstr(ll, "load <8 x half>, ptr addrspace(1) "));
    assert_non_null(strstr(ll, ", align 16\n"));
    assert_non_null(strstr(ll, "store <8 x half> "));
    rk_string_free(ll);
    rk_kernel_free(k);
}

int main(void) {
    seed_state = (unsigned)time(NULL);
    printf("seed %u\n", seed_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_fp8_model_overflows),
        cmocka_unit_test(t_fp8_encodes_saturate),
        cmocka_unit_test(t_i8_byte_order),
        cmocka_unit_test(t_buffer_granules),
        cmocka_unit_test(t_text_definitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
