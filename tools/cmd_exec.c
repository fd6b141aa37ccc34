/* rocke exec — run a ckdsl.ir v1 kernel on the emulator with buffers made
 * from the command line, and print buffers afterwards. Exit 0 on success, 1
 * when the kernel or its IR fails, 2 on misuse. Layer: tools. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/rocke.h"
#include "base/base_int.h"
#include "base/fp.h"
#include "base/fp8.h"
#include "cli.h"

static const char about[] =
    "Runs the kernel in FILE.ir ('-' = standard input) on the CPU emulator with buffers made\n"
    "from the command line, and prints buffers afterwards. Exit 0 on success, 1 when the\n"
    "kernel or its IR fails, 2 on misuse.";

static const char arg_help[] =
    "one per kernel parameter. A pointer takes a buffer:\n"
    "  zeros:DTYPE:N   N zeroed elements\n"
    "  iota:DTYPE:N    0, 1, 2, ...\n"
    "  rand:DTYPE:N[:SEED]  uniform in [-1, 1) for floats, in [-8, 8) for ints\n"
    "  file:PATH       the file's bytes (raw little-endian elements)\n"
    "DTYPE is the pointee type (i8 i16 i32 i64 f16 bf16 f32 f64 fp8e4m3 bf8e5m2\n"
    "fp8e4m3fnuz bf8e5m2fnuz); a buffer holds at most 16 GiB. A scalar parameter\n"
    "takes a number";

typedef struct arg {
    const char *name, *value;
    bool used;
} arg;

typedef struct buf {
    uint64_t addr;
    rk_scalar s;
    size_t n;
} buf;

static int misuse(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static int misuse(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rocke exec: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see rocke exec --help)\n");
    va_end(ap);
    return 2;
}

/* "X[,Y[,Z]]" with every part >= 1. */
static bool parse_dims(const char *flag, const char *text, uint32_t d[3]) {
    const char *s = text;
    d[0] = d[1] = d[2] = 1;
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || end == s || v == 0 || v > 0x7fffffffu || *s == '-') goto bad;
        d[i] = (uint32_t)v;
        if (!*end) return true;
        if (*end != ',' || i == 2) goto bad;
        s = end + 1;
    }
bad:
    misuse("%s expects X[,Y[,Z]]: 1 to 3 integers from 1 to 2147483647, got '%s'", flag, text);
    return false;
}

/* The largest buffer exec makes from zeros/iota/rand. */
#define BUFFER_LIMIT (1ull << 34)

static uint32_t sbytes(rk_scalar s) { return rk_scalar_bits(s) / 8; }

static rk_fp8_format fp8_of(rk_scalar s) {
    return s == RK_S_FP8E4M3 ? RK_FP8_E4M3 : s == RK_S_BF8E5M2 ? RK_FP8_E5M2
         : s == RK_S_FP8E4M3FNUZ ? RK_FP8_E4M3_FNUZ : RK_FP8_E5M2_FNUZ;
}

/* Store value v (a float or an integer) as element i of type s. */
static void put(uint8_t *p, rk_scalar s, size_t i, double v, int64_t iv) {
    uint8_t *q = p + i * sbytes(s);
    uint16_t h;
    float f;
    switch (s) {
    case RK_S_F16: h = rk_f64_to_f16(v); memcpy(q, &h, 2); break;
    case RK_S_BF16: h = rk_f64_to_bf16(v); memcpy(q, &h, 2); break;
    case RK_S_F32: f = (float)v; memcpy(q, &f, 4); break;
    case RK_S_F64: memcpy(q, &v, 8); break;
    case RK_S_FP8E4M3: case RK_S_BF8E5M2: case RK_S_FP8E4M3FNUZ: case RK_S_BF8E5M2FNUZ:
        *q = rk_f64_to_fp8(v, fp8_of(s));
        break;
    default: memcpy(q, &iv, sbytes(s)); break;
    }
}

static const char *dtypes = "i8, i16, i32, i64, f16, bf16, f32, f64, fp8e4m3, bf8e5m2, fp8e4m3fnuz, bf8e5m2fnuz";

static uint64_t rng_next(uint64_t *st) {
    *st ^= *st << 13;
    *st ^= *st >> 7;
    *st ^= *st << 17;
    return *st;
}

/* Make the buffer for pointer parameter p from spec; 0 on success. */
static int make_buffer(rk_emu *e, const rk_kernel *k, const rk_param *p, const char *spec, buf *out) {
    rk_scalar want = rk_type_scalar(rk_type_elem(k, p->type));
    if (rk_scalar_bits(want) < 8)
        return misuse("parameter %%%s points to %s; the emulator cannot hold sub-byte buffers", p->name,
                      rk_scalar_name(want));
    if (!strncmp(spec, "file:", 5)) {
        char *data;
        size_t n;
        if (rk_read_regular_file(spec + 5, &data, &n) != RK_OK) {
            fprintf(stderr, "rocke exec: --arg %s: %s\n", p->name, rk_error_message());
            return 1;
        }
        if (n % sbytes(want)) {
            rk_free(data, n + 1);
            return misuse("--arg %s: %s holds %zu bytes, not a whole number of %s elements", p->name, spec + 5, n,
                          rk_scalar_name(want));
        }
        if (rk_emu_alloc(e, n, &out->addr) != RK_OK) { rk_free(data, n + 1); return cli_fail("exec"); }
        memcpy(rk_emu_host(e, out->addr, NULL), data, n);
        rk_free(data, n + 1);
        out->s = want;
        out->n = n / sbytes(want);
        return 0;
    }
    char kind[8], dt[32];
    const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || (size_t)(c1 - spec) >= sizeof kind || (size_t)(c2 - c1 - 1) >= sizeof dt)
        return misuse("--arg %s=%s: parameter %%%s is %s; give zeros:DTYPE:N, iota:DTYPE:N, rand:DTYPE:N[:SEED] "
                      "or file:PATH", p->name, spec, p->name, rk_type_name(k, p->type));
    memcpy(kind, spec, (size_t)(c1 - spec));
    kind[c1 - spec] = 0;
    memcpy(dt, c1 + 1, (size_t)(c2 - c1 - 1));
    dt[c2 - c1 - 1] = 0;
    if (strcmp(kind, "zeros") && strcmp(kind, "iota") && strcmp(kind, "rand"))
        return misuse("--arg %s: unknown buffer kind '%s' (legal: zeros, iota, rand, file)", p->name, kind);
    rk_scalar s = rk_type_scalar(rk_scalar_from_name(dt));
    if (s == RK_S_NONE || rk_scalar_bits(s) < 8) return misuse("--arg %s: unknown dtype '%s' (legal: %s)", p->name, dt, dtypes);
    if (s != want)
        return misuse("--arg %s: dtype %s does not match the parameter's type %s", p->name, dt, rk_type_name(k, p->type));
    char *end;
    errno = 0;
    unsigned long long n = strtoull(c2 + 1, &end, 10);
    uint64_t seed = 1;
    if (!errno && *end == ':' && !strcmp(kind, "rand")) {
        seed = strtoull(end + 1, &end, 0);
        if (!seed) seed = 1;
    }
    if (errno || end == c2 + 1 || *end || c2[1] == '-' || n == 0)
        return misuse("--arg %s: element count in '%s' must be a positive integer", p->name, spec);
    if (n > BUFFER_LIMIT / sbytes(s))
        return misuse("--arg %s: %llu %s elements exceed the buffer size limit of 16 GiB (%llu elements)", p->name,
                      n, rk_scalar_name(s), (unsigned long long)(BUFFER_LIMIT / sbytes(s)));
    if (rk_emu_alloc(e, (size_t)n * sbytes(s), &out->addr) != RK_OK) return cli_fail("exec");
    uint8_t *h = rk_emu_host(e, out->addr, NULL);
    bool fl = rk_scalar_is_float(s) || rk_scalar_is_f8(s);
    for (size_t i = 0; kind[0] != 'z' && i < n; i++) {
        if (kind[0] == 'i') put(h, s, i, (double)i, (int64_t)i);
        else {
            uint64_t r = rng_next(&seed);
            double v = (double)(r >> 11) * 0x1p-53 * 2.0 - 1.0;
            put(h, s, i, fl ? v : 0.0, (int64_t)(r % 16) - 8);
        }
    }
    out->s = s;
    out->n = (size_t)n;
    return 0;
}

/* A scalar parameter's bytes from a number. */
static int make_scalar(const rk_kernel *k, const rk_param *p, const char *v, uint8_t bytes[16]) {
    rk_scalar s = rk_type_scalar(p->type);
    if (rk_type_kind_of(k, p->type) != RK_TK_SCALAR || (rk_scalar_bits(s) < 8 && s != RK_S_I1))
        return misuse("parameter %%%s has type %s, which exec cannot pass", p->name, rk_type_name(k, p->type));
    char *end;
    errno = 0;
    if (rk_scalar_is_int(s)) {
        long long x = strtoll(v, &end, 0);
        uint32_t b = rk_scalar_bits(s);
        long long lo = b >= 64 ? INT64_MIN : -(1ll << (b - 1)), hi = b >= 64 ? INT64_MAX : (1ll << b) - 1;
        if (s == RK_S_I1) lo = 0, hi = 1;
        if (errno || end == v || *end || x < lo || x > hi)
            return misuse("--arg %s=%s: parameter %%%s is %s; give an integer in [%lld, %lld]", p->name, v, p->name,
                          rk_scalar_name(s), lo, hi);
        memset(bytes, 0, 16);
        memcpy(bytes, &x, s == RK_S_I1 ? 1 : b / 8);
        return 0;
    }
    double x = strtod(v, &end);
    if (errno == EINVAL || end == v || *end)
        return misuse("--arg %s=%s: parameter %%%s is %s; give a number", p->name, v, p->name, rk_scalar_name(s));
    memset(bytes, 0, 16);
    put(bytes, s, 0, x, 0);
    return 0;
}

static void print_buf(rk_emu *e, const buf *b, size_t count) {
    const uint8_t *h = rk_emu_host(e, b->addr, NULL);
    for (size_t i = 0; i < count && i < b->n && !ferror(stdout); i++) {
        const uint8_t *q = h + i * sbytes(b->s);
        int64_t iv = 0;
        uint16_t hv;
        float f;
        double d;
        switch (b->s) {
        case RK_S_F16: memcpy(&hv, q, 2); printf("%.9g\n", (double)rk_f16_to_f32(hv)); break;
        case RK_S_BF16: memcpy(&hv, q, 2); printf("%.9g\n", (double)rk_bf16_to_f32(hv)); break;
        case RK_S_F32: memcpy(&f, q, 4); printf("%.9g\n", (double)f); break;
        case RK_S_F64: memcpy(&d, q, 8); printf("%.17g\n", d); break;
        case RK_S_FP8E4M3: case RK_S_BF8E5M2: case RK_S_FP8E4M3FNUZ: case RK_S_BF8E5M2FNUZ:
            printf("%.9g\n", (double)rk_fp8_to_f32(*q, fp8_of(b->s)));
            break;
        case RK_S_I8: printf("%d\n", (int8_t)*q); break;
        case RK_S_I16: { int16_t x; memcpy(&x, q, 2); printf("%d\n", x); break; }
        case RK_S_I32: { int32_t x; memcpy(&x, q, 4); printf("%d\n", x); break; }
        default: memcpy(&iv, q, 8); printf("%lld\n", (long long)iv); break;
        }
    }
}

typedef struct opts {
    const char *file, *device, *grid_text, *block_text;
    const rk_target *target;
    uint32_t grid[3], block[3];
    bool no_check;
    uint32_t threads, dyn_lds;
    uint64_t max_steps, timeout;   /* the emulator's watchdog (rk_emu_options) */
    bool check_overflow, have_max_steps;
    cli_list arg_text, prints;
    arg args[CLI_LIST_MAX];
    uint32_t nargs;
} opts;

static int parse_opts(int argc, char **argv, opts *o) {
    cli_opt table[] = {
        {.name = "--grid", .kind = CLI_STRING, .dst = &o->grid_text, .meta = "X[,Y[,Z]]", .required = true,
         .help = "workgroups, 1 to 3 dimensions"},
        {.name = "--block", .kind = CLI_STRING, .dst = &o->block_text, .meta = "X[,Y[,Z]]", .required = true,
         .help = "threads per workgroup, 1 to 3 dimensions"},
        {.name = "--target", .kind = CLI_TARGET, .dst = &o->target, .meta = "T", .def = "",
         .help = "the target whose wave size and rules apply (default: the kernel's\n"
                 "'target' attribute, else the default target)"},
        {.name = "--arg", .kind = CLI_REPEATED, .dst = &o->arg_text, .meta = "NAME=VALUE", .help = arg_help},
        {.name = "--print", .kind = CLI_REPEATED, .dst = &o->prints, .meta = "NAME[:N]",
         .help = "after the run, write buffer NAME's first N values (all by default), one\n"
                 "per line; floats with %.9g, 16- and 8-bit floats converted to float"},
        {.name = "--device", .kind = CLI_STRING, .dst = &o->device, .meta = "emu",
         .help = "the device (only the emulator for now)"},
        {.name = "--no-check", .kind = CLI_FLAG, .dst = &o->no_check,
         .help = "skip the LDS race, barrier and async-wait checks (bounds stay checked)"},
        {.name = "--threads", .kind = CLI_U32, .dst = &o->threads, .meta = "N",
         .help = "host threads running workgroups (default: one per CPU)"},
        {.name = "--dynamic-lds", .kind = CLI_U32, .dst = &o->dyn_lds, .meta = "BYTES",
         .help = "bytes of dynamic LDS per workgroup"},
        {.name = "--max-steps", .kind = CLI_U64, .dst = &o->max_steps, .meta = "N",
         .help = "instructions one wave may run before it is stopped as a runaway\n"
                 "(default 100000000; 0 = no limit)"},
        {.name = "--timeout", .kind = CLI_U64, .dst = &o->timeout, .meta = "S",
         .help = "seconds the launch may run (default: no limit)"},
        {.name = "--check-overflow", .kind = CLI_FLAG, .dst = &o->check_overflow,
         .help = "signed overflow of arith.add/sub/mul (nsw) is an error"},
        {0},
    };
    cli_cmd c = {.name = "exec", .args = "FILE.ir", .about = about, .opts = table, .pos = &o->file, .min_pos = 1,
                 .max_pos = 1};
    int rc = cli_parse(&c, argc, argv, 1);
    if (rc >= 0) return rc == 0 ? -1 : rc;
    o->have_max_steps = cli_given(&c, "--max-steps");
    if (!parse_dims("--grid", o->grid_text, o->grid) || !parse_dims("--block", o->block_text, o->block)) return 2;
    if (o->device && strcmp(o->device, "emu"))
        return misuse("--device '%s' is not available: exec runs kernels on the emulator only for now (--device emu)",
                      o->device);
    if (!cli_names_unique("exec", "--arg", &o->arg_text)) return 2;
    for (uint32_t i = 0; i < o->arg_text.n; i++) {
        const char *v = o->arg_text.v[i], *eq = strchr(v, '=');
        if (!eq || eq == v) return misuse("--arg expects NAME=VALUE, got '%s'", v);
        o->args[o->nargs++] = (arg){v, eq + 1, false};
    }
    return 0;
}

/* The argument for parameter name, or NULL. */
static arg *find_arg(opts *o, const char *name) {
    for (uint32_t i = 0; i < o->nargs; i++) {
        size_t n = (size_t)(strchr(o->args[i].name, '=') - o->args[i].name);
        if (strlen(name) == n && !strncmp(o->args[i].name, name, n)) return &o->args[i];
    }
    return NULL;
}

static int exec_kernel(opts *o, rk_kernel *k) {
    const char *tn = rk_attrs_str(rk_kernel_attrs(k), "target");
    const rk_target *t = o->target ? o->target : tn ? rk_target_find(tn) : rk_target_default();
    if (!t) return misuse("the kernel's 'target' attribute: %s", rk_error_message());
    rk_emu_options eo = rk_emu_options_default();
    eo.threads = o->threads;
    if (o->no_check) eo.check_races = eo.check_barriers = eo.check_async = false;
    if (o->have_max_steps) eo.max_steps = o->max_steps;   /* the emulator's watchdog */
    eo.timeout_s = (double)o->timeout;
    eo.check_overflow = o->check_overflow;
    rk_emu *e = rk_emu_new(t, &eo);
    if (!e) return cli_fail("exec");
    uint32_t np = rk_kernel_nparams(k);
    buf *bufs = calloc(np ? np : 1, sizeof *bufs);
    uint8_t (*vals)[16] = calloc(np ? np : 1, 16);
    void **args = calloc(np ? np : 1, sizeof *args);
    int rc = bufs && vals && args ? 0 : 1;
    for (uint32_t i = 0; rc == 0 && i < np; i++) {
        const rk_param *p = rk_kernel_param(k, i);
        arg *a = find_arg(o, p->name);
        if (!a) {
            rc = misuse("missing --arg %s=... for parameter %%%s (%s)", p->name, p->name, rk_type_name(k, p->type));
            break;
        }
        a->used = true;
        if (rk_type_kind_of(k, p->type) == RK_TK_PTR) {
            rc = make_buffer(e, k, p, a->value, &bufs[i]);
            if (rc == 0) rk_emu_set_name(e, bufs[i].addr, p->name);
            args[i] = &bufs[i].addr;
        } else {
            rc = make_scalar(k, p, a->value, vals[i]);
            args[i] = vals[i];
        }
    }
    for (uint32_t i = 0; rc == 0 && i < o->nargs; i++)
        if (!o->args[i].used) {
            char names[512] = "";
            size_t off = 0;
            for (uint32_t j = 0; j < np && off < sizeof names; j++)
                off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", j ? ", " : "", rk_kernel_param(k, j)->name);
            rc = misuse("--arg %.*s: kernel '%s' has no such parameter (parameters: %s)",
                        (int)(strchr(o->args[i].name, '=') - o->args[i].name), o->args[i].name, rk_kernel_name(k),
                        np ? names : "none");
        }
    /* --print names must be pointer parameters; check before running */
    size_t counts[CLI_LIST_MAX];
    uint32_t which[CLI_LIST_MAX];
    for (uint32_t i = 0; rc == 0 && i < o->prints.n; i++) {
        const char *spec = o->prints.v[i], *colon = strchr(spec, ':');
        size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
        counts[i] = SIZE_MAX;
        if (colon) {
            char *end;
            errno = 0;
            unsigned long long c = strtoull(colon + 1, &end, 10);
            if (errno || end == colon + 1 || *end || colon[1] == '-') {
                rc = misuse("--print %s: COUNT must be a non-negative integer", spec);
                break;
            }
            counts[i] = (size_t)c;
        }
        which[i] = UINT32_MAX;
        for (uint32_t j = 0; j < np; j++)
            if (strlen(rk_kernel_param(k, j)->name) == nl && !strncmp(rk_kernel_param(k, j)->name, spec, nl) &&
                rk_type_kind_of(k, rk_kernel_param(k, j)->type) == RK_TK_PTR)
                which[i] = j;
        if (which[i] == UINT32_MAX) rc = misuse("--print %.*s: no pointer parameter has that name", (int)nl, spec);
    }
    if (rc == 0) {
        rk_status st = rk_emu_launch(e, k, o->grid, o->block, o->dyn_lds, args);
        if (st != RK_OK) {
            fprintf(stderr, "rocke exec: %s\n", rk_error_message());
            rc = 1;
        }
    }
    for (uint32_t i = 0; rc == 0 && i < o->prints.n; i++) print_buf(e, &bufs[which[i]], counts[i]);
    free(bufs);
    free(vals);
    free(args);
    rk_emu_free(e);
    return rc;
}

int cmd_exec(int argc, char **argv) {
    opts o = {0};
    int rc = parse_opts(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    char *text;
    size_t n;
    if (rk_read_file(o.file, &text, &n) != RK_OK) {
        fprintf(stderr, "rocke exec: %s\n", rk_error_message());
        return 1;
    }
    rk_kernel *k = NULL;
    rk_status st = rk_parse(text, n, &k);
    rk_free(text, n + 1);
    if (st != RK_OK) {
        fprintf(stderr, "%s:%s\n", strcmp(o.file, "-") ? o.file : "<stdin>", rk_error_message());
        return 1;
    }
    rc = exec_kernel(&o, k);
    rk_kernel_free(k);
    return rc;
}
