/* rocke run — run a kernel built by `rocke build` from its manifest: fresh
 * random inputs, one launch, the check against the double host reference
 * (--verify), then timed launches. A GPU runs the manifest's code object, the
 * emulator the NAME.ir next to it; every manifest field is checked against
 * the spec and the binary first (rk_manifest_check), either way. Prints
 * `verify max_abs_diff=... bad=K/N`, `Perf: X ms, Y TFlops, Z GB/s` and one `PerfJSON: {...}` line; exit 1 when
 * verification fails or on errors, 2 on misuse. Layer: tools. */
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
    rk_device *dev;
    rk_module *mod;
    rk_kernel *kernel;
    char *dir, *file;
    size_t file_n;
    rk_devptr dptr[RK_KSIG_MAX];
    unsigned char maps[RK_KSIG_MAX][RK_TENSORMAP_BYTES];   /* tensormap entries, encoded on the device */
} run_state;

/* Encode the signature's tensor maps over the buffers already on the device
 * (rk_problem_tensormap gives each map's shape, box and swizzle). */
static bool encode_maps(run_state *r, void **args) {
    static const rk_tensormap_swizzle swz[] = {RK_TENSORMAP_SWIZZLE_NONE, RK_TENSORMAP_SWIZZLE_32B,
                                               RK_TENSORMAP_SWIZZLE_64B, RK_TENSORMAP_SWIZZLE_128B};
    for (uint32_t i = 0; i < r->p.sig.n; i++) {
        if (r->p.sig.p[i].role != RK_KP_TENSORMAP) continue;
        rk_problem_tmap t;
        if (rk_problem_tensormap(&r->p, i, &t)) return false;
        uint32_t sw = t.swizzle_bytes == 128 ? 3 : t.swizzle_bytes == 64 ? 2 : t.swizzle_bytes == 32 ? 1 : 0;
        if (rk_tensormap_encode_2d(r->dev, r->dptr[t.buf], t.elem, t.rows, t.cols, t.row_stride_bytes, t.box_rows,
                                   t.box_cols, swz[sw], r->maps[i]))
            return false;
        args[i] = r->maps[i];
    }
    return true;
}

static void cleanup(run_state *r) {
    if (r->dev)
        for (uint32_t i = 0; i < RK_KSIG_MAX; i++) rk_mem_free(r->dev, r->dptr[i]);
    if (r->mod) rk_module_unload(r->mod);
    if (r->dev) rk_device_close(r->dev);
    if (r->kernel) rk_kernel_free(r->kernel);
    if (r->have_p) rk_problem_free(&r->p);
    if (r->file) rk_free(r->file, r->file_n + 1);
    free(r->dir);
}

static int load_module(run_state *r) {
    rk_device_kind kind = rk_device_kind_of(r->dev);
    char path[4096];
    rk_module_image img = {.target = r->m.target[0] ? r->m.target : NULL};
    if (kind == RK_DEVICE_EMU) {
        if (!r->m.ir[0]) return fail("manifest %s names no 'ir' file: the emulator runs ckdsl.ir", r->m.kernel_name, "");
        snprintf(path, sizeof path, "%s/%s", r->dir, r->m.ir);
        if (rk_read_file(path, &r->file, &r->file_n)) return cli_fail("run");
        if (rk_parse(r->file, r->file_n, &r->kernel)) return fail("%s: %s", path, rk_error_message());
        if (strcmp(rk_kernel_name(r->kernel), r->m.kernel_name))
            return fail("%s does not hold kernel %s", path, r->m.kernel_name);
        img.kind = RK_IMAGE_IR;
        img.kernel = r->kernel;
    } else {
        const char *dt = rk_device_target(r->dev);
        if (!strcmp(r->m.binary_kind, "ir"))
            return fail("%s was built with --ir-only: it runs only on the emulator (--device emu)", r->m.kernel_name, "");
        if (!r->m.target[0] || !target_fits(r->m.target, dt ? dt : "", r->m.binary_kind)) {
            fprintf(stderr, "rocke run: manifest is for target %s but the device is %s (%s); rebuild with "
                    "--target %s\n", r->m.target[0] ? r->m.target : "(none)", rk_device_name(r->dev),
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
    }
    if (rk_module_load_image(r->dev, &img, &r->mod)) return cli_fail("run");
    return 0;
}

static const char about[] =
    "Run the kernel a `rocke build` manifest describes on fresh random inputs (seed S,\n"
    "default: from the clock; printed) for SHAPE (default: the manifest's default_shape).";

static const char output_text[] =
    "Output: verify max_abs_diff=... bad=K/N, Perf: X ms, Y TFlops, Z GB/s and one\n"
    "PerfJSON: {...} line (parse that one). Exit 1 when --verify finds a bad element or on\n"
    "errors, 2 on misuse.\n";

int cmd_run(int argc, char **argv) {
    const char *manifest = NULL, *device = NULL, *shape = NULL;   /* device NULL: $ROCKE_DEVICE, else auto */
    const char *groups_text = NULL, *lengths = NULL;
    bool verify = false;
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
        {.name = "--groups", .kind = CLI_STRING, .dst = &groups_text, .meta = "M,N,K;...",
         .help = "grouped_gemm: the problems, one M,N,K per group separated by ';'\n"
                 "(an extent may be 0; default: the manifest's shape as equal groups)"},
        {.name = "--page-size", .kind = CLI_U32, .dst = &page_size, .meta = "P",
         .help = "attention decode: the KV cache's tokens per page; must be the\n"
                 "instance's page_size (0: a contiguous cache)"},
        {.name = "--lengths", .kind = CLI_STRING, .dst = &lengths, .meta = "HOW",
         .help = "attention decode: the context lengths, random (default: the first at\n"
                 "CTX, the others in [1, CTX]), equal (all CTX) or a FILE of B integers"},
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
    /* the runtime creates its emulator with rk_emu_new(t, NULL), which reads these (rocke/emu.h) */
    char nb[32];
    if (cli_given(&cmd, "--max-steps")) {
        snprintf(nb, sizeof nb, "%llu", (unsigned long long)max_steps);
        setenv("ROCKE_EMU_MAX_STEPS", nb, 1);
    }
    if (cli_given(&cmd, "--timeout")) {
        snprintf(nb, sizeof nb, "%llu", (unsigned long long)timeout);
        setenv("ROCKE_EMU_TIMEOUT", nb, 1);
    }
    if (!cli_given(&cmd, "--seed")) seed = (uint64_t)time(NULL);

    run_state r = {0};
    int rc = 1;
    if (rk_manifest_read(manifest, &r.m)) return cli_fail("run");
    if (!(r.dir = dir_of(manifest))) return fail("out of memory%s%s", "", "");
    /* every field against the spec and the binary, whichever file runs */
    rk_shape sh;
    if (rk_manifest_check(&r.m, r.dir, &r.in, &sh)) { rc = cli_fail("run"); goto out; }
    const rk_target *t = rk_target_find(r.m.target);
    if (shape && !cli_shape_parse("run", r.in.family, shape, &sh)) { rc = 2; goto out; }
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
            rc = cli_fail("run");
            goto out;
        }
    }
    if (rk_instance_check_shape(&r.in, &sh)) { rc = cli_fail("run"); goto out; }
    char knob[32];
    if (cli_given(&cmd, "--page-size")) {
        if (rk_instance_get(&r.in, "page_size", knob, sizeof knob)) {
            fail("--page-size: %s has no paged cache (attention --mode decode has)%s", r.m.kernel_name, "");
            goto out;
        }
        if (strtoul(knob, NULL, 10) != page_size) {
            fprintf(stderr, "rocke run: --page-size %u, but %s serves page_size = %s only (rebuild with "
                    "--page-size %u)\n", page_size, r.m.kernel_name, knob, page_size);
            goto out;
        }
    }
    char shape_txt[256], shape_list[256];
    rk_shape_format(r.in.family, &sh, true, shape_txt, sizeof shape_txt);
    rk_shape_format(r.in.family, &sh, false, shape_list, sizeof shape_list);

    rk_device_opts dopt = {.which = device, .emu_target = t->name};
    if (rk_device_open_opts(&dopt, &r.dev)) { rc = cli_fail("run"); goto out; }
    bool emu = rk_device_kind_of(r.dev) == RK_DEVICE_EMU;
    if (!have_warmup) warmup = emu ? 0 : r.m.warmup_iters;
    if (!have_iters) iters = emu ? 1 : (r.m.timed_iters ? r.m.timed_iters : 100);
    if ((rc = load_module(&r))) goto out;
    rc = 1;
    rk_function *fn;
    if (rk_module_function(r.mod, r.m.kernel_name, &fn)) { rc = cli_fail("run"); goto out; }
    const char *dn = rk_device_name(r.dev);
    printf("rocke run: %s on %s%s%s%s shape %s seed %llu\n", r.m.kernel_name, dn,
           strstr(dn, t->name) ? "" : " (", strstr(dn, t->name) ? "" : t->name, strstr(dn, t->name) ? "" : ")",
           shape_txt, (unsigned long long)seed);

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
        if (rk_problem_set_scalar(&r.p, given[i].name, given[i].value)) { rc = cli_fail("run"); goto out; }
    if (lengths && rk_problem_set_lengths(&r.p, lengths)) { rc = cli_fail("run"); goto out; }
    if (rk_problem_check_inputs(&r.p)) { rc = cli_fail("run"); goto out; }
    rk_scalar_value sv[RK_KSIG_MAX];
    void *args[RK_KSIG_MAX];
    for (uint32_t i = 0; i < r.p.sig.n; i++) {
        const rk_kparam *kp = &r.p.sig.p[i];
        if (kp->ptr) {
            rk_host_buf *b = &r.p.buf[i];
            if (rk_mem_alloc(r.dev, b->bytes, &r.dptr[i]) || rk_mem_copy_htod(r.dev, r.dptr[i], b->data, b->bytes)) {
                rc = cli_fail("run");
                goto out;
            }
            args[i] = &r.dptr[i];
        } else if (kp->role != RK_KP_TENSORMAP) {
            if (rk_problem_scalar(&r.p, i, &sv[i])) { rc = cli_fail("run"); goto out; }
            args[i] = &sv[i];
        }
    }
    if (!encode_maps(&r, args)) { rc = cli_fail("run"); goto out; }
    launch_ud l = {.fn = fn, .args = args};
    rk_instance_grid(&r.in, &sh, l.grid, l.block);
    if (!rk_instance_get(&r.in, "kv_splits", knob, sizeof knob) && r.in.u.attn.mode == RK_ATTN_DECODE)
        printf("split-KV: %s splits per (sequence, KV head): grid %ux%ux%u blocks for %s's %u compute units\n", knob,
               l.grid[0], l.grid[1], l.grid[2], t->name, t->compute_units);
    if (launch_once(&l, NULL) || rk_device_synchronize(r.dev)) { rc = cli_fail("run"); goto out; }
    rk_problem_diff c = {0};
    if (verify) {
        for (uint32_t i = 0; i < r.p.sig.n; i++) {
            rk_kparam_role role = r.p.sig.p[i].role;
            if ((role == RK_KP_OUT || role == RK_KP_ACCUM || role == RK_KP_INOUT) &&
                rk_mem_copy_dtoh(r.dev, r.p.buf[i].data, r.dptr[i], r.p.buf[i].bytes)) {
                rc = cli_fail("run");
                goto out;
            }
        }
        if (rk_problem_check(&r.p, &c)) { rc = cli_fail("run"); goto out; }
        printf("verify max_abs_diff=%.8g bad=%llu/%llu\n", c.max_abs_diff, (unsigned long long)c.bad,
               (unsigned long long)c.total);
        if (c.bad) printf("verify: first bad element %s\n", c.first_bad);
    }
    rk_time_opts to = {.warmup = warmup, .iters = iters};
    rk_time_result tr;
    if (rk_time_launches(r.dev, launch_once, &l, &to, &tr)) { rc = cli_fail("run"); goto out; }
    double bytes, flops;
    rk_problem_cost(&r.p, &bytes, &flops);
    double ms = tr.median_ms > 0 ? tr.median_ms : 1e-9;
    double tflops = flops / 1e9 / ms, gbps = bytes / 1e6 / ms;
    printf("Perf: %.6g ms, %.6g TFlops, %.6g GB/s\n", ms, tflops, gbps);
    printf("PerfJSON: {\"ms\": %.6g, \"tflops\": %.6g, \"gbps\": %.6g, \"max_abs_diff\": %.8g, \"bad_count\": %llu, "
           "\"total\": %llu, \"min_ms\": %.6g, \"max_ms\": %.6g, \"kernel\": \"%s\", \"device\": \"%s\", "
           "\"target\": \"%s\", \"shape\": [%s], \"seed\": %llu, \"verified\": %s}\n",
           ms, tflops, gbps, c.max_abs_diff, (unsigned long long)c.bad, (unsigned long long)c.total, tr.min_ms,
           tr.max_ms, r.m.kernel_name, rk_device_kind_name(rk_device_kind_of(r.dev)), t->name,
           shape_list, (unsigned long long)seed, verify ? "true" : "false");
    rc = verify && c.bad ? 1 : 0;
out:
    cleanup(&r);
    return rc;
}
