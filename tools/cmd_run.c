/* rocke run — run a kernel built by `rocke build` from its manifest: fresh
 * random inputs, one launch, the check against the double host reference
 * (--verify), then timed launches. A GPU runs the manifest's code object, the
 * emulator the NAME.ir next to it; every manifest field is checked against
 * the spec and the binary first (rk_manifest_check), either way. Prints
 * `verify max_abs_diff=... bad=K/N`, `Perf: X ms, Y TFlops, Z GB/s` and one `PerfJSON: {...}` line; exit 1 when
 * verification fails or on errors, 2 on misuse and bad input (a manifest, shape or value refused). --check-emu runs the same
 * inputs on the emulator too and compares (run_check_emu.c). Layer: tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rocke/rocke.h"
#include "rocke/kernels.h"
#include "rocke/manifest.h"
#include "rocke/runtime.h"
#include "base/base_int.h"
#include "cli.h"
#include "run_side.h"

static double host_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "rocke run: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 1;
}

/* Can code built for target `built` run on a device whose target is `dev`? */
static bool target_fits(const char *built, const char *dev, const char *kind) {
    if (!strcmp(built, dev)) return true;
    if (!strncmp(built, "sm_", 3) && !strncmp(dev, "sm_", 3)) {
        int b = atoi(built + 3), d = atoi(dev + 3);
        /* PTX JITs forward; a cubin needs the same major architecture */
        return !strcmp(kind, "ptx") ? b <= d : b / 10 == d / 10 && b <= d;
    }
    return false;
}

typedef struct launch_ud {
    rk_function *fn;
    uint32_t grid[3], block[3];
    void **args;
} launch_ud;

/* TEST ONLY: a planted miscompile for --check-emu's test (rk_emu_options.test_fault) */
#define TEST_FAULT_ENV "ROCKE_TEST_EMU_FAULT"

static rk_status launch_once(void *ud, rk_stream *s) {
    launch_ud *l = ud;
    return rk_launch(l->fn, l->grid, l->block, 0, s, l->args);
}

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    char *d = malloc(n + 1);
    if (!d) return NULL;
    if (slash) memcpy(d, path, n);
    else d[0] = '.';
    d[n] = 0;
    return d;
}

typedef struct run_state {
    rk_manifest m;
    rk_instance in;
    rk_problem p;
    bool have_p;
    run_side dev;            /* the device under test */
    rk_kernel *kernel;       /* the manifest's IR (the emulator, --check-emu) */
    char *dir, *file, *ir_text;
    size_t file_n, ir_n;
    void *init[RK_KSIG_MAX];     /* --check-emu: the host buffers before any launch */
    void *dev_out[RK_KSIG_MAX];  /* --check-emu: the device's outputs after one launch */
} run_state;

static void cleanup(run_state *r) {
    run_side_free(&r->dev);
    if (r->kernel) rk_kernel_free(r->kernel);
    for (uint32_t i = 0; i < RK_KSIG_MAX; i++) {
        free(r->init[i]);
        free(r->dev_out[i]);
    }
    if (r->have_p) rk_problem_free(&r->p);
    if (r->file) rk_free(r->file, r->file_n + 1);
    if (r->ir_text) rk_free(r->ir_text, r->ir_n + 1);
    free(r->dir);
}

/* Parse DIR/<ir> into r->kernel (the emulator runs it; --check-emu too). */
static int load_ir(run_state *r) {
    char path[4096];
    if (!r->m.ir[0]) return fail("manifest %s names no 'ir' file: the emulator runs ckdsl.ir", r->m.kernel_name, "");
    snprintf(path, sizeof path, "%s/%s", r->dir, r->m.ir);
    if (rk_read_file(path, &r->ir_text, &r->ir_n)) return cli_fail("run");
    if (rk_parse(r->ir_text, r->ir_n, &r->kernel)) return fail("%s: %s", path, rk_error_message());
    if (strcmp(rk_kernel_name(r->kernel), r->m.kernel_name))
        return fail("%s does not hold kernel %s", path, r->m.kernel_name);
    return 0;
}

static int load_module(run_state *r) {
    rk_device_kind kind = rk_device_kind_of(r->dev.dev);
    char path[4096];
    rk_module_image img = {.target = r->m.target[0] ? r->m.target : NULL};
    if (kind == RK_DEVICE_EMU) {
        if (!r->kernel) return fail("manifest %s names no 'ir' file: the emulator runs ckdsl.ir", r->m.kernel_name, "");
        img.kind = RK_IMAGE_IR;
        img.kernel = r->kernel;
    } else {
        const char *dt = rk_device_target(r->dev.dev);
        if (!strcmp(r->m.binary_kind, "ir"))
            return fail("%s was built with --ir-only: it runs only on the emulator (--device emu)", r->m.kernel_name, "");
        if (!r->m.target[0] || !target_fits(r->m.target, dt ? dt : "", r->m.binary_kind)) {
            fprintf(stderr, "rocke run: manifest is for target %s but the device is %s (%s); rebuild with "
                    "--target %s\n", r->m.target[0] ? r->m.target : "(none)", rk_device_name(r->dev.dev),
                    dt && *dt ? dt : "unknown target", dt && *dt ? dt : "device");
            return 1;
        }
        snprintf(path, sizeof path, "%s/%s", r->dir, r->m.binary);
        if (rk_read_file(path, &r->file, &r->file_n)) return cli_fail("run");
        img.kind = !strcmp(r->m.binary_kind, "hsaco") ? RK_IMAGE_HSACO
                   : !strcmp(r->m.binary_kind, "cubin") ? RK_IMAGE_CUBIN : RK_IMAGE_PTX;
        img.data = r->file;
        img.size = r->file_n;
        img.dyn_smem_min = r->m.dyn_smem_min;   /* an NVIDIA LDS pool over 48 KiB */
        memcpy(img.cluster_dims, r->m.cluster_dims, sizeof img.cluster_dims);   /* 0, 0, 0: none */
    }
    if (rk_module_load_image(r->dev.dev, &img, &r->dev.mod)) return cli_fail("run");
    return 0;
}

/* A manifest with shape variants: the variant serving shape sh replaces it
 * (read and checked like any manifest; the shape stays sh). */
static rk_status pick_variant(run_state *r, const rk_shape *sh) {
    uint32_t nd;
    const rk_dim_decl *dims = rk_family_dims(r->in.family, &nd);
    const char *names[RK_SHAPE_MAX_DIMS];
    for (uint32_t i = 0; i < nd && i < RK_SHAPE_MAX_DIMS; i++) names[i] = dims[i].name;
    const rk_manifest_variant *v = rk_manifest_pick(&r->m, names, sh->dim, sh->rank);
    if (!v) return RK_OK;
    char path[4096], file[sizeof v->manifest];
    snprintf(file, sizeof file, "%s", v->manifest);
    snprintf(path, sizeof path, "%s/%s", r->dir, file);
    rk_status st = rk_manifest_read(path, &r->m);
    if (st) return st;
    rk_shape unused;
    st = rk_manifest_check(&r->m, r->dir, &r->in, &unused);
    if (st) return rk_fail(st, "variant %s: %s", file, rk_error_message());
    return r->m.nvariants ? rk_fail(RK_ERR_INVALID, "variant %s lists variants itself", file) : RK_OK;
}

static const char about[] =
    "Run the kernel a `rocke build` manifest describes on fresh random inputs (seed S,\n"
    "default: from the clock; printed) for SHAPE (default: the manifest's default_shape).";

static const char output_text[] =
    "Output: verify max_abs_diff=... bad=K/N, Perf: X ms, Y TFlops, Z GB/s and one\n"
    "PerfJSON: {...} line (parse that one); with --check-emu, check-emu lines naming the\n"
    "first differing element of each output. Exit 1 when --verify finds a bad element,\n"
    "--check-emu a difference, or on errors (no device, a failed launch), 2 on misuse and\n"
    "bad input (an unreadable or inconsistent manifest, a shape, length or value refused).\n";

/* One window side: an optional '-', then decimal digits, below 2^63. */
static bool window_side(const char *p, const char **end, long long *v) {
    bool neg = *p == '-';
    uint64_t m;
    if (!cli_decimal(p + neg, end, &m) || m > (uint64_t)INT64_MAX) return false;
    *v = neg ? -(long long)m : (long long)m;
    return true;
}

/* --window L,R (unified: L alone, R = 0) */
static bool set_window(rk_problem *p, const char *text, bool left_alone) {
    const char *end = text;
    long long l = 0, r = 0;
    bool ok = window_side(text, &end, &l) && (*end == ',' || (left_alone && !*end));
    if (ok && *end) ok = window_side(end + 1, &end, &r) && *end == 0;
    if (!ok) {
        fprintf(stderr, "rocke run: --window '%s': expected %s (negative: unbounded)\n", text,
                left_alone ? "L (keys before the diagonal)" : "two integers L,R");
        return false;
    }
    if (rk_problem_set_window(p, l, r)) {
        fprintf(stderr, "rocke run: --window: %s\n", rk_error_message());
        return false;
    }
    return true;
}

/* The num_splits scalar the problem holds (given with --arg). */
static double given_splits(const rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, "num_splits")) return p->scalar[i];
    return 1;
}

/* --lengths LQ[:LK],... (LK defaults to LQ) */
static bool set_lengths(rk_problem *p, const char *text) {
    static uint64_t lq[65536], lk[65536];
    uint32_t n = 0;
    for (const char *c = text;; c++) {
        const char *end = c;
        bool ok = n < 65536 && cli_decimal(c, &end, &lq[n]);
        if (ok) lk[n] = lq[n];
        if (ok && *end == ':') ok = cli_decimal(end + 1, &end, &lk[n]);
        if (!ok || (*end && (*end != ',' || !end[1]))) {   /* a trailing ',' names no sequence */
            fprintf(stderr, "rocke run: --lengths '%s': expected LQ[:LK] per sequence (decimal counts), separated "
                    "by ','%s\n", text, n >= 65536 ? "; at most 65536 sequences" : "");
            return false;
        }
        n++;
        if (!*end) break;
        c = end;
    }
    if (rk_problem_set_lengths(p, lq, lk, n)) {
        fprintf(stderr, "rocke run: --lengths: %s\n", rk_error_message());
        return false;
    }
    return true;
}

int cmd_run(int argc, char **argv) {
    const char *manifest = NULL, *device = NULL, *shape = NULL;   /* device NULL: $ROCKE_DEVICE, else auto */
    const char *groups_text = NULL, *stride = NULL, *pad = NULL, *dilation = NULL;
    const char *window_text = NULL, *lengths_text = NULL;
    bool verify = false, check_emu = false;
    cli_list given_text = {.n = 0};
    uint32_t warmup = 0, iters = 0, page_size = 0;
    uint64_t seed = 0, max_steps = 0, timeout = 0;
    cli_opt opts[] = {
        {.name = "--shape", .kind = CLI_STRING, .dst = &shape, .meta = "SHAPE",
         .help = "the family's dimensions, positional 4096,4096 or named M=4096,N=4096\n"
                 "(named: the others keep the manifest's); elementwise has one, N, and\n"
                 "takes 4096,4096 as their product"},
        {.name = "--arg", .kind = CLI_REPEATED, .dst = &given_text, .meta = "NAME=VALUE",
         .help = "a given scalar parameter (layernorm/rmsnorm: eps; default: the manifest's)"},
        {.name = "--verify", .kind = CLI_FLAG, .dst = &verify,
         .help = "compare every output with a host reference computed in double"},
        {.name = "--groups", .kind = CLI_STRING, .dst = &groups_text, .meta = "M,N,K;...|G",
         .help = "grouped_gemm: the problems, one M,N,K per group separated by ';'\n"
                 "(an extent may be 0; default: the manifest's shape as equal groups);\n"
                 "conv, conv3d: the group count G (C and K multiples of it)"},
        {.name = "--stride", .kind = CLI_STRING, .dst = &stride, .meta = "S[,S..]",
         .help = "conv, conv3d: the stride, one value or one per axis (run time:\n"
                 "the same binary; default: the manifest's)"},
        {.name = "--pad", .kind = CLI_STRING, .dst = &pad, .meta = "P[,P..]",
         .help = "conv, conv3d: padding: one value, one per axis, or before,after\n"
                 "per axis (H0,H1,W0,W1)"},
        {.name = "--dilation", .kind = CLI_STRING, .dst = &dilation, .meta = "D[,D..]",
         .help = "conv, conv3d: the dilation, one value or one per axis"},
        {.name = "--window", .kind = CLI_STRING, .dst = &window_text, .meta = "L,R",
         .help = "attention built with --mask window: keys visible before and after the\n"
                 "diagonal (negative: unbounded; default: the manifest's); --mode\n"
                 "unified takes L alone"},
        {.name = "--lengths", .kind = CLI_STRING, .dst = &lengths_text, .meta = "L",
         .help = "attention, varlen prefill: LQ[:LK],... each sequence's query (and key)\n"
                 "length, B of them, at most the shape's Sq (Skv); default: random.\n"
                 "attention unified: Q:K,... each sequence's new query tokens and KV length\n"
                 "(including them), or random:N (a mixed batch of N from the seed); they\n"
                 "set B, Sq (the total) and Skv (the longest): --shape Hq,Hkv,D\n"
                 "attention decode: the context lengths, random (default: the first at\n"
                 "CTX, the others in [1, CTX]), equal (all CTX) or a FILE of B integers"},
        {.name = "--page-size", .kind = CLI_U32, .dst = &page_size, .meta = "P",
         .help = "attention decode and unified: the KV cache's tokens per page; must be the\n"
                 "instance's page_size (0: a contiguous cache)"},
        {.name = "--device", .kind = CLI_STRING, .dst = &device, .meta = "D",
         .help = "auto (first GPU, else the emulator; default), emu, cuda, hip\n"
                 "(cuda:1, hip:0 pick a GPU). The emulator runs DIR/NAME.ir for\n"
                 "the manifest's target; a GPU runs the code object, which must\n"
                 "match the manifest's size and hash and suit the device."},
        {.name = "--warmup", .kind = CLI_U32, .dst = &warmup, .meta = "N",
         .help = "untimed launches (default: the manifest's warmup_iters; 0 on emu)"},
        {.name = "--iters", .kind = CLI_U32, .dst = &iters, .meta = "N", .ranged = true, .lo = 1, .hi = UINT32_MAX,
         .help = "timed launches (default: the manifest's timed_iters; 1 on emu)"},
        {.name = "--seed", .kind = CLI_U64, .dst = &seed, .meta = "S", .help = "the input seed"},
        {.name = "--max-steps", .kind = CLI_U64, .dst = &max_steps, .meta = "N",
         .help = "emulator: instructions one wave may run before it is stopped as a\n"
                 "runaway (default 100000000; 0 = no limit)"},
        {.name = "--timeout", .kind = CLI_U64, .dst = &timeout, .meta = "S",
         .help = "emulator: seconds a launch may run (default: no limit)"},
        {.name = "--check-emu", .kind = CLI_FLAG, .dst = &check_emu,
         .help = "run the same inputs on the emulator (DIR/NAME.ir for the manifest's\n"
                 "target) and compare each output element by element: bit for bit\n"
                 "where the kernel's ops are exact, within a ULP bound otherwise"},
        {0},
    };
    cli_cmd cmd = {.name = "run", .args = "DIR/manifest.json", .about = about, .more = output_text, .opts = opts,
                 .pos = &manifest, .min_pos = 1, .max_pos = 1};
    int prc = cli_parse(&cmd, argc, argv, 1);
    if (prc >= 0) return prc;
    cli_arg given[CLI_LIST_MAX];
    uint32_t ngiven = given_text.n;
    if (!cli_names_unique("run", "--arg", &given_text)) return 2;
    for (uint32_t i = 0; i < ngiven; i++)
        if (!cli_arg_parse("run", given_text.v[i], &given[i])) return 2;
    bool have_warmup = cli_given(&cmd, "--warmup"), have_iters = cli_given(&cmd, "--iters");
    /* the emulator's options: defaults, the environment, then the flags */
    rk_emu_options eo = rk_emu_options_default(), ref_eo;
    if (rk_emu_options_from_env(&eo)) return cli_fail("run");
    if (cli_given(&cmd, "--max-steps")) eo.max_steps = max_steps;
    if (cli_given(&cmd, "--timeout")) eo.timeout_s = (double)timeout;
    ref_eo = eo;
    /* TEST ONLY: the planted fault goes to the first emulator opened: the
     * device under test with --device emu, else the --check-emu reference */
    const char *fault = getenv(TEST_FAULT_ENV);
    if (fault && *fault) eo.test_fault = fault;
    if (!cli_given(&cmd, "--seed")) seed = (uint64_t)time(NULL);

    run_state r = {0};
    run_batch batch = {0};
    int rc = 1;
    /* a manifest, shape or value refused is bad input (exit 2); the work failing is 1 */
    if (rk_manifest_read(manifest, &r.m)) return cli_refuse("run");
    if (!(r.dir = dir_of(manifest))) return fail("out of memory%s%s", "", "");
    /* every field against the spec and the binary, whichever file runs */
    rk_shape sh;
    char probe[64];
    if (rk_manifest_check(&r.m, r.dir, &r.in, &sh)) { rc = cli_refuse("run"); goto out; }
    const rk_target *t = rk_target_find(r.m.target);
    /* attention --mode unified: the batch (--lengths) sets B, Sq (total queries) and Skv (the longest) */
    bool unified = r.in.family == RK_FAMILY_ATTENTION && r.in.u.attn.mode == RK_ATTN_UNIFIED;
    if (unified && lengths_text) {
        bool short_shape = shape && run_batch_short_shape(shape);
        if (!run_batch_parse(lengths_text, seed, r.in.u.attn.page_size, &batch)) { rc = 2; goto out; }
        if (shape && !short_shape && !cli_shape_parse("run", r.in.family, shape, &sh)) { rc = 2; goto out; }
        if (!run_batch_shape(&batch, short_shape ? shape : NULL, &sh, &sh)) { rc = 2; goto out; }
        shape = NULL;
    } else if (unified && shape && run_batch_short_shape(shape)) {
        fail("--shape %s: the Hq,Hkv,D form needs --lengths Q1:K1,... or random:N (the batch)%s", shape, "");
        rc = 2;
        goto out;
    }
    if (shape && !cli_shape_parse("run", r.in.family, shape, &sh)) { rc = 2; goto out; }
    /* run-time geometry knobs (conv): they change the problem, not the code */
    bool conv_groups = groups_text && rk_instance_get(&r.in, "groups", probe, sizeof probe) == RK_OK;
    const char *geo_text[] = {stride, pad, dilation, conv_groups ? groups_text : NULL};
    static const char *const geo_knob[] = {"stride", "pad", "dilation", "groups"};
    for (int i = 0; i < 4; i++)
        if (geo_text[i] && !cli_geometry_set("run", &r.in, geo_knob[i], geo_text[i])) { rc = 2; goto out; }
    if (conv_groups) groups_text = NULL;
    static rk_gemm_group groups[RK_GEMM_GROUPS_MAX];
    uint32_t ngroups = 0;
    if (groups_text) {
        if (shape) {
            fail("%s and %s both give the problem: pass one", "--groups", "--shape");
            rc = 2;
            goto out;
        }
        if (rk_gemm_groups_parse(groups_text, groups, RK_GEMM_GROUPS_MAX, &ngroups) ||
            rk_problem_groups_shape(&r.in, groups, ngroups, &sh)) {
            rc = cli_refuse("run");
            goto out;
        }
    }
    char rows_line[512] = "";
    if (unified && run_batch_pick_rows(r.dir, &r.m, &batch, &sh, rows_line, sizeof rows_line)) {
        rc = cli_refuse("run");
        goto out;
    }
    rk_shape variant_shape;
    if (*rows_line && rk_manifest_check(&r.m, r.dir, &r.in, &variant_shape)) { rc = cli_refuse("run"); goto out; }
    if (!unified && pick_variant(&r, &sh)) { rc = cli_refuse("run"); goto out; }
    if (rk_instance_check_shape(&r.in, &sh)) { rc = cli_refuse("run"); goto out; }
    char knob[32];
    if (cli_given(&cmd, "--page-size")) {
        if (rk_instance_get(&r.in, "page_size", knob, sizeof knob)) {
            fail("--page-size: %s has no paged cache (attention --mode decode has)%s", r.m.kernel_name, "");
            rc = 2;
            goto out;
        }
        if (strtoul(knob, NULL, 10) != page_size) {
            fprintf(stderr, "rocke run: --page-size %u, but %s serves page_size = %s only (rebuild with "
                    "--page-size %u)\n", page_size, r.m.kernel_name, knob, page_size);
            rc = 2;
            goto out;
        }
    }
    char shape_txt[256], shape_list[256];
    rk_shape_format(r.in.family, &sh, true, shape_txt, sizeof shape_txt);
    rk_shape_format(r.in.family, &sh, false, shape_list, sizeof shape_list);

    rk_device_opts dopt = {.which = device, .emu_target = t->name, .emu_options = &eo};
    rk_status dst = rk_device_open_opts(&dopt, &r.dev.dev);
    if (dst) {   /* a --device name refused is bad input; no device to open, a failure */
        rc = dst == RK_ERR_INVALID ? cli_refuse("run") : cli_fail("run");
        goto out;
    }
    bool emu = rk_device_kind_of(r.dev.dev) == RK_DEVICE_EMU;
    if (!emu) ref_eo.test_fault = eo.test_fault;
    /* emulator against emulator: the reference runs its workgroups on one
     * host thread, so the check also shows results do not depend on that */
    else ref_eo.threads = 1;
    if (!have_warmup) warmup = emu ? 0 : r.m.warmup_iters;
    if (!have_iters) iters = emu ? 1 : (r.m.timed_iters ? r.m.timed_iters : 100);
    if ((emu || check_emu) && (rc = load_ir(&r))) goto out;
    if ((rc = load_module(&r))) goto out;
    rc = 1;
    if (rk_module_function(r.dev.mod, r.m.kernel_name, &r.dev.fn)) { rc = cli_fail("run"); goto out; }
    /* a code object loaded without its IR learns it from the manifest */
    if (r.m.cooperative && rk_function_set_cooperative(r.dev.fn, true)) { rc = cli_fail("run"); goto out; }
    const char *dn = rk_device_name(r.dev.dev);
    printf("rocke run: %s on %s%s%s%s shape %s seed %llu\n", r.m.kernel_name, dn,
           strstr(dn, t->name) ? "" : " (", strstr(dn, t->name) ? "" : t->name, strstr(dn, t->name) ? "" : ")",
           shape_txt, (unsigned long long)seed);

    {
        /* the run-time knobs (conv geometry) this run uses */
        uint32_t nk;
        const rk_knob *kb = rk_family_knobs(r.in.family, &nk);
        bool any = false;
        for (uint32_t i = 0; i < nk; i++) {
            if (kb[i].tag || rk_instance_get(&r.in, kb[i].name, probe, sizeof probe)) continue;
            printf("%s%s=%s", any ? " " : "rocke run: geometry ", kb[i].name, probe);
            any = true;
        }
        if (any) printf("\n");
    }
    double t_inputs = host_seconds();
    rk_status pst = ngroups ? rk_problem_init_groups(&r.p, &r.in, groups, ngroups, seed)
                            : rk_problem_init(&r.p, &r.in, &sh, seed);
    if (pst) { rc = cli_fail("run"); goto out; }
    r.have_p = true;
    if (r.m.has_eps && rk_problem_set_scalar(&r.p, "eps", r.m.eps)) {
        rk_fail(RK_ERR_INVALID, "manifest field 'eps': %s", rk_error_message());
        rc = cli_fail("run");
        goto out;
    }
    for (uint32_t i = 0; i < ngiven; i++)
        if (rk_problem_set_scalar(&r.p, given[i].name, given[i].value)) { rc = cli_refuse("run"); goto out; }
    if (window_text && !set_window(&r.p, window_text, unified)) { rc = 2; goto out; }
    bool decode = r.in.family == RK_FAMILY_ATTENTION && r.in.u.attn.mode == RK_ATTN_DECODE;
    /* --lengths: an attention prefill's query/key lengths (varlen; others say so), else per-sequence
     * context lengths (decode; other families refuse) */
    bool varlen = r.in.family == RK_FAMILY_ATTENTION && !decode;
    if (batch.n && rk_problem_set_lengths(&r.p, batch.lq, batch.lk, batch.n)) { rc = cli_refuse("run"); goto out; }
    if (lengths_text && varlen && !unified && !set_lengths(&r.p, lengths_text)) { rc = 2; goto out; }
    if (lengths_text && !varlen && rk_problem_set_context_lengths(&r.p, lengths_text)) { rc = cli_refuse("run"); goto out; }
    bool splits_given = false;
    for (uint32_t i = 0; i < ngiven; i++) splits_given |= !strcmp(given[i].name, "num_splits");
    /* unified: the split count (or the given one) and the blocks and workspace it launches */
    rk_attention_unified_launch ul = {.splits = 1};
    double given_n = given_splits(&r.p);
    if (unified && rk_problem_attention_unified_launch(&r.p, t, 0, &ul)) { rc = cli_fail("run"); goto out; }
    if (unified && splits_given && rk_problem_set_scalar(&r.p, "num_splits", given_n)) { rc = cli_refuse("run"); goto out; }
    uint32_t splits = unified && splits_given ? (uint32_t)given_n : ul.splits;
    if (decode && !splits_given && rk_problem_attention_splits(&r.p, t, &splits)) { rc = cli_fail("run"); goto out; }
    if (decode && splits_given) splits = (uint32_t)given_n;
    if (rk_problem_check_inputs(&r.p)) { rc = cli_refuse("run"); goto out; }
    void *init[RK_KSIG_MAX] = {0};
    for (uint32_t i = 0; i < r.p.sig.n; i++) {
        const rk_host_buf *b = &r.p.buf[i];
        init[i] = b->data;
        if (!check_emu || !r.p.sig.p[i].ptr) continue;
        /* the reference run starts from the same bytes, INOUT buffers included */
        if (!(r.init[i] = malloc(b->bytes ? b->bytes : 1)) || !(r.dev_out[i] = malloc(b->bytes ? b->bytes : 1))) {
            rc = fail("out of memory%s%s", "", "");
            goto out;
        }
        memcpy(r.init[i], b->data, b->bytes);
        init[i] = r.init[i];
    }
    t_inputs = host_seconds() - t_inputs;
    double t_upload = host_seconds();
    if (!run_side_upload(&r.dev, &r.p, init)) { rc = cli_fail("run"); goto out; }
    t_upload = host_seconds() - t_upload;
    launch_ud l = {.fn = r.dev.fn, .args = r.dev.args};
    rk_instance_grid(&r.in, &sh, l.grid, l.block);
    if (decode && !rk_instance_get(&r.in, "kv_splits", knob, sizeof knob)) {
        /* the blocks past the batch's splits would return at once */
        l.grid[0] = splits;
        printf("split-KV: %u of %s splits per (sequence, KV head) for this batch: grid %ux%ux%u blocks for %s's %u "
               "compute units\n", splits, knob, l.grid[0], l.grid[1], l.grid[2], t->name, t->compute_units);
    }
    if (unified) {
        /* one split: the blocks past split 0 would return at once */
        if (splits == 1) l.grid[2] = 1;
        if (*rows_line) printf("%s\n", rows_line);
        printf("unified: %s path, %u split%s per (query block, KV head): grid %ux%ux%u blocks for %s's %u compute "
               "units\n", splits == 1 ? "2-D" : "split-KV", splits, splits == 1 ? "" : "s", l.grid[0], l.grid[1],
               l.grid[2], t->name, t->compute_units);
        uint64_t cu = t->compute_units ? t->compute_units : 1;
        if (!splits_given)
            printf("unified: %llu query blocks x KV heads, %llu blocks read keys (%.2f per compute unit); split-KV "
                   "workspace %llu bytes\n", (unsigned long long)ul.query_blocks, (unsigned long long)ul.blocks,
                   (double)ul.blocks / (double)cu, (unsigned long long)ul.work_bytes);
    }
    if (launch_once(&l, NULL) || rk_device_synchronize(r.dev.dev)) { rc = cli_fail("run"); goto out; }
    int check_rc = 0;
    if (check_emu) {
        for (uint32_t i = 0; i < r.p.sig.n; i++)
            if (run_side_is_output(&r.p.sig.p[i]) &&
                rk_mem_copy_dtoh(r.dev.dev, r.dev_out[i], r.dev.dptr[i], r.p.buf[i].bytes)) {
                rc = cli_fail("run");
                goto out;
            }
        check_rc = run_check_emu(&r.p, r.kernel, t->name, &ref_eo, l.grid, l.block, r.init, r.dev_out);
    }
    rk_problem_diff c = {0};
    if (verify) {
        for (uint32_t i = 0; i < r.p.sig.n; i++) {
            if (run_side_is_output(&r.p.sig.p[i]) &&
                rk_mem_copy_dtoh(r.dev.dev, r.p.buf[i].data, r.dev.dptr[i], r.p.buf[i].bytes)) {
                rc = cli_fail("run");
                goto out;
            }
        }
        double t_check = host_seconds();
        if (rk_problem_check(&r.p, &c)) { rc = cli_fail("run"); goto out; }
        t_check = host_seconds() - t_check;
        /* big problems: where the host's time went, so a slow run is not mistaken for a slow kernel */
        if (t_inputs + t_upload + t_check >= 1.0)
            printf("host: inputs %.2f s, upload %.2f s, reference and check %.2f s\n", t_inputs, t_upload, t_check);
        printf("verify max_abs_diff=%.8g bad=%llu/%llu\n", c.max_abs_diff, (unsigned long long)c.bad,
               (unsigned long long)c.total);
        if (c.bad) printf("verify: first bad element %s\n", c.first_bad);
    }
    rk_time_opts to = {.warmup = warmup, .iters = iters};
    rk_time_result tr;
    if (rk_time_launches(r.dev.dev, launch_once, &l, &to, &tr)) { rc = cli_fail("run"); goto out; }
    double bytes, flops;
    rk_problem_cost(&r.p, &bytes, &flops);
    double ms = tr.median_ms > 0 ? tr.median_ms : 1e-9;
    double tflops = flops / 1e9 / ms, gbps = bytes / 1e6 / ms;
    printf("Perf: %.6g ms, %.6g TFlops, %.6g GB/s\n", ms, tflops, gbps);
    printf("PerfJSON: {\"ms\": %.6g, \"tflops\": %.6g, \"gbps\": %.6g, \"max_abs_diff\": %.8g, \"bad_count\": %llu, "
           "\"total\": %llu, \"min_ms\": %.6g, \"max_ms\": %.6g, \"kernel\": \"%s\", \"device\": \"%s\", "
           "\"target\": \"%s\", \"shape\": [%s], \"seed\": %llu, \"verified\": %s}\n",
           ms, tflops, gbps, c.max_abs_diff, (unsigned long long)c.bad, (unsigned long long)c.total, tr.min_ms,
           tr.max_ms, r.m.kernel_name, rk_device_kind_name(rk_device_kind_of(r.dev.dev)), t->name,
           shape_list, (unsigned long long)seed, verify ? "true" : "false");
    rc = (verify && c.bad) || check_rc ? 1 : 0;
out:
    run_batch_free(&batch);
    cleanup(&r);
    return rc;
}
