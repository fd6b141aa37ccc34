/* rocke sweep — one item's work: the build job (compile through the shared
 * cache, registers and spills from the code object or ptxas -v) and the run
 * job on a worker's device (the shape's inputs, one launch checked against
 * the shape's reference, timed launches, a device copy of the same bytes as
 * the yardstick). Layer: tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "rocke/analysis.h"
#include "rocke/compile.h"
#include "rocke/runtime.h"
#include "compile/compile_int.h"
#include "sweep_int.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int num_before(const char *text, const char *word) {
    const char *w = strstr(text, word);
    if (!w) return -1;
    const char *p = w;
    while (p > text && p[-1] == ' ') p--;
    while (p > text && p[-1] >= '0' && p[-1] <= '9') p--;
    return atoi(p);
}

/* NVIDIA: `ptxas -v` on the PTX: "Used N registers", "N bytes spill stores". */
static void ptxas_resources(const rk_target *t, const rk_artifact *a, int32_t *regs, int32_t *spills) {
    static const char *const names[] = {"ptxas", NULL}, *const dirs[] = {"/usr/local/cuda/bin", NULL};
    char tool[RK_PATH_MAX], dir[RK_PATH_MAX], ptx[RK_PATH_MAX + 16], arch[48];
    rk_buf tried;
    rk_buf_init(&tried);
    cc_found f = cc_find_tool("ROCKE_PTXAS", names, dirs, tool, &tried);
    rk_buf_free(&tried);
    if (f != CC_FOUND || cc_tmpdir(dir)) return;
    snprintf(ptx, sizeof ptx, "%s/k.ptx", dir);
    snprintf(arch, sizeof arch, "-arch=%s", t->name);
    if (!cc_write_file(ptx, a->binary, a->binary_size)) {
        const char *argv[] = {tool, arch, "-v", ptx, "-o", "/dev/null", NULL};
        cc_proc p;
        if (!cc_run(argv, &p) && p.exit_code == 0) {
            const char *text = p.err.len ? rk_buf_cstr(&p.err) : rk_buf_cstr(&p.out);
            *regs = num_before(text, "registers");
            *spills = num_before(text, "bytes spill stores");
        }
        cc_proc_free(&p);
    }
    cc_tmpdir_remove(dir);
}

static rk_json *read_json(const char *path) {
    char *text = NULL;
    size_t n = 0;
    if (rk_read_file(path, &text, &n)) return NULL;
    rk_json *j = rk_json_parse(text, n);
    rk_free(text, n + 1);
    return j;
}

/* The kernel's build record kdir/NAME.build.json and its code object, when both are there. */
static rk_json *prebuilt(const char *kdir, const char *kernel) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s.build.json", kdir, kernel);
    rk_json *j = read_json(path);
    const rk_json *bin = rk_json_get(j, "binary");
    if (bin && bin->kind == RK_JSON_STRING) snprintf(path, sizeof path, "%s/%s", kdir, bin->str);
    if (!bin || bin->kind != RK_JSON_STRING || access(path, R_OK)) {
        rk_json_free(j);
        return NULL;
    }
    return j;
}

/* Compile k, write the artifact and its build record; NULL with the message on failure. */
static rk_json *compile_kernel_into(const rk_kernel *k, const rk_target *t, const char *kdir, double t0) {
    rk_artifact *a = NULL;
    rk_compile_options co;
    int32_t regs = -1, spills = -1;
    rk_status st = rk_compile_options_default(t, &co);
    if (!st) st = rk_compile(k, t, &co, &a);
    rk_json *j = NULL;
    char bin[300], path[4400];
    if (!st) {
        /* the code object alone (the cubin over the PTX): what a GPU worker loads */
        const char *ext = a->kind == RK_BINARY_HSACO ? "hsaco" : a->cubin ? "cubin" : "ptx";
        snprintf(bin, sizeof bin, "%s.%s", rk_kernel_name(k), ext);
        snprintf(path, sizeof path, "%s/%s", kdir, bin);
        st = a->cubin ? rk_write_file_atomic(path, a->cubin, a->cubin_size)
                      : rk_write_file_atomic(path, a->binary, a->binary_size);
    }
    if (!st) {
        if (a->kind == RK_BINARY_HSACO) {
            rk_hsaco_info info;
            if (!rk_analyze_hsaco(a->binary, a->binary_size, t, &info) && info.nkernels) {
                regs = (int32_t)info.kernels[0].vgpr_count;
                spills = (int32_t)(info.kernels[0].vgpr_spill_count + info.kernels[0].sgpr_spill_count);
            }
        } else {
            ptxas_resources(t, a, &regs, &spills);
        }
        j = rk_json_object();
        rk_json_set(j, "registers", rk_json_int(regs));
        rk_json_set(j, "spills", rk_json_int(spills));
        rk_json_set(j, "build_ms", rk_json_num(now_ms() - t0));
        rk_json_set(j, "binary", rk_json_str(bin));
        rk_json_set(j, "toolchain", rk_json_str(a->toolchain));
        char *text = rk_json_write(j, true);
        snprintf(path, sizeof path, "%s/%s.build.json", kdir, rk_kernel_name(k));
        /* the record last: its presence says the code object is complete */
        if (!text || rk_write_file_atomic(path, text, strlen(text))) {
            rk_json_free(j);
            j = NULL;
        }
        rk_string_free(text);
    }
    rk_artifact_free(a);
    return j;
}

static rk_json *compile_into(const rk_instance *in, const rk_target *t, const char *kdir, double t0) {
    rk_kernel *k = NULL;
    rk_json *j = rk_instance_build(in, t, &k) ? NULL : compile_kernel_into(k, t, kdir, t0);
    rk_kernel_free(k);
    return j;
}

bool sw_build_checker(const rk_target *t, const char *kdir, rk_scalar type) {
    char name[64];
    sw_compare_name(type, name, sizeof name);
    rk_json *j = prebuilt(kdir, name);
    if (!j) {
        rk_kernel *k = sw_compare_kernel(type, t);
        j = k ? compile_kernel_into(k, t, kdir, now_ms()) : NULL;
        rk_kernel_free(k);
    }
    rk_json_free(j);
    return j != NULL;
}

void sw_build_job(const sw_space *sp, const rk_target *t, const char *kdir, uint32_t item, rk_buf *line) {
    const sw_item *it = &sp->items[item];
    rk_json *j = prebuilt(kdir, it->kernel);
    bool again = j != NULL;
    if (!j) j = compile_into(&it->in, t, kdir, now_ms());
    rk_json *out = rk_json_object();
    rk_json_set(out, "ok", rk_json_bool(j != NULL));
    rk_json_set(out, "registers", rk_json_int(j ? (int64_t)sw_num(j, "registers", -1) : -1));
    rk_json_set(out, "spills", rk_json_int(j ? (int64_t)sw_num(j, "spills", -1) : -1));
    rk_json_set(out, "build_ms", rk_json_num(j ? sw_num(j, "build_ms", 0) : 0));
    rk_json_set(out, "prebuilt", rk_json_bool(again));
    rk_json_set(out, "error", rk_json_str(j ? "" : rk_error_message()));
    char *text = rk_json_write(out, false);
    rk_buf_puts(line, text ? text : "{}");
    rk_string_free(text);
    rk_json_free(out);
    rk_json_free(j);
}

rk_json *sw_record_new(const sw_space *sp, const sw_opts *o, const sw_item *it) {
    rk_json *r = rk_json_object(), *cfg = rk_json_object(), *shape = rk_json_object(), *knobs = rk_json_object();
    char v[256], txt[128];
    rk_json_set(r, "key", rk_json_str(it->key));
    rk_json_set(r, "heuristic", rk_json_bool(it->config == sp->nconfigs || !sp->nknobs));
    for (uint32_t k = 0, c = it->config; k < sp->nknobs && it->config < sp->nconfigs; k++) {
        const sw_knob *sk = &sp->knob[k];
        rk_json_set(cfg, sk->kb->name, rk_json_str(sk->vals[c % sk->nvals]));
        c /= sk->nvals;
    }
    rk_json_set(r, "config", cfg);
    uint32_t nd, nk;
    const rk_dim_decl *dims = rk_family_dims(o->fam, &nd);
    const rk_shape *s = &sp->shape[it->shape];
    for (uint32_t d = 0; d < nd && d < s->rank; d++) rk_json_set(shape, dims[d].name, rk_json_int((int64_t)s->dim[d]));
    rk_json_set(r, "shape", shape);
    rk_shape_format(o->fam, s, false, txt, sizeof txt);
    rk_json_set(r, "shape_text", rk_json_str(txt));
    rk_json_set(r, "family", rk_json_str(rk_family_name(o->fam)));
    rk_json_set(r, "target", rk_json_str(o->t->name));
    rk_json_set(r, "kernel", rk_json_str(it->kernel));
    const rk_knob *kb = rk_family_knobs(o->fam, &nk);
    for (uint32_t k = 0; k < nk; k++)
        if (!rk_instance_get(&it->in, kb[k].name, v, sizeof v)) rk_json_set(knobs, kb[k].name, rk_json_str(v));
    rk_json_set(r, "knobs", knobs);
    const sw_build *b = &sp->builds[it->build];
    rk_json_set(r, "registers", rk_json_int(b->registers));
    rk_json_set(r, "spills", rk_json_int(b->spills));
    rk_json_set(r, "build_ms", rk_json_num(b->build_ms));
    double bytes, flops;
    rk_instance_cost(&it->in, s, &bytes, &flops);
    rk_json_set(r, "bytes", rk_json_num(bytes));
    rk_json_set(r, "flops", rk_json_num(flops));
    return r;
}

/* ---- the run worker ------------------------------------------------------------ */
typedef struct run_ctx {
    rk_device *dev;
    char device[160], driver[160];
    double copy_gbps[SW_MAX_SHAPES];   /* per shape, measured once */
    sw_problem prob;                   /* the inputs and reference of the shape in hand */
    sw_devprob dprob;                  /* the same on the device, restaged for each config */
    sw_checker chk[RK_S__COUNT];       /* the device check's kernels, by output type, loaded when first needed */
    bool chk_off;                      /* the device check disagreed with the host's: host checks only */
    sw_timer timer;                    /* the timing's stream and events */
    uint32_t pre_item;                 /* the item whose problem was filled while the device opened */
    double pre_ms;
    const char *fault;                 /* $ROCKE_SWEEP_FAULT: the key whose checked launch is skipped */
} run_ctx;

/* The device's own target, or an older NVIDIA one of the same major
 * architecture (the loader prefers the cubin: binary-compatible within a
 * major version); sm_90a code runs on sm_90a alone. */
static bool device_runs(const char *dev, const char *built) {
    if (!dev || !*dev) return false;
    if (!strcmp(dev, built)) return true;
    if (strncmp(dev, "sm_", 3) || strncmp(built, "sm_", 3) || strchr(built, 'a')) return false;
    int b = atoi(built + 3), d = atoi(dev + 3);
    return b / 10 == d / 10 && b <= d;
}

typedef struct prefetch {
    run_ctx *c;
    const sw_opts *o;
    const sw_item *it;
    const rk_shape *s;
} prefetch;

static void *prefetch_main(void *arg) {
    prefetch *f = arg;
    bool reused;
    const sw_item *it = f->it;
    /* a failure leaves no problem held: the item's job fills it again and reports why */
    (void)sw_problem_get(&f->c->prob, &it->in, f->s, it->shape, f->o->seed + it->shape, &reused, &f->c->pre_ms);
    return NULL;
}

void *sw_run_open(const sw_opts *o, const sw_space *sp, const char *device, uint32_t first, char *err, size_t n) {
    run_ctx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->pre_item = UINT32_MAX;
    /* the first item's host inputs and reference while the driver starts (both take a few hundred ms) */
    prefetch f = {.c = c, .o = o, .it = first < sp->nitems ? &sp->items[first] : NULL,
                  .s = first < sp->nitems ? &sp->shape[sp->items[first].shape] : NULL};
    pthread_t th;
    bool threaded = f.it && !pthread_create(&th, NULL, prefetch_main, &f);
    rk_device_opts d = {.which = device, .quiet = true, .emu_target = o->t->name};
    rk_status st = rk_device_open_opts(&d, &c->dev);
    if (st) snprintf(err, n, "%s", rk_error_message());
    if (threaded) pthread_join(th, NULL);
    if (threaded && c->prob.have) c->pre_item = first;
    if (st) {
        sw_problem_free(&c->prob);
        free(c);
        return NULL;
    }
    const char *dt = rk_device_target(c->dev);
    if (rk_device_kind_of(c->dev) != RK_DEVICE_EMU && !device_runs(dt, o->t->name)) {
        snprintf(err, n, "device %s runs target %s, the sweep builds for %s (--target %s)", rk_device_name(c->dev),
                 dt && *dt ? dt : "unknown", o->t->name, dt && *dt ? dt : "T");
        rk_device_close(c->dev);
        sw_problem_free(&c->prob);
        free(c);
        return NULL;
    }
    const rk_device_info *info = rk_device_info_of(c->dev);
    snprintf(c->device, sizeof c->device, "%s", rk_device_name(c->dev));
    snprintf(c->driver, sizeof c->driver, "%s", info && info->driver ? info->driver : "");
    c->fault = getenv("ROCKE_SWEEP_FAULT");
    return c;
}

void sw_run_close(void *ctx) {
    run_ctx *c = ctx;
    sw_dev_free(c->dev, &c->dprob);
    sw_timer_free(&c->timer);
    for (uint32_t t = 0; t < RK_S__COUNT; t++) {
        if (c->chk[t].mod) rk_module_unload(c->chk[t].mod);
        rk_kernel_free(c->chk[t].k);
    }
    sw_problem_free(&c->prob);
    rk_device_close(c->dev);
    free(c);
}

typedef struct launch_ud {
    rk_function *fn;
    uint32_t grid[3], block[3];
    void **args;
    rk_device *dev;
    rk_devptr src, dst;
    size_t n;
} launch_ud;

static rk_status launch_kernel(void *ud, rk_stream *s) {
    launch_ud *l = ud;
    return rk_launch(l->fn, l->grid, l->block, 0, s, l->args);
}

static rk_status launch_copy(void *ud, rk_stream *s) {
    launch_ud *l = ud;
    return rk_mem_copy_dtod(l->dev, l->dst, l->src, l->n, s);
}

/* The copy yardstick: a device-to-device copy moving the kernel's bytes (read + write). */
static double copy_gbps(run_ctx *c, const rk_time_opts *to, double bytes) {
    launch_ud l = {.dev = c->dev, .n = (size_t)(bytes / 2) < 4096 ? 4096 : (size_t)(bytes / 2)};
    rk_time_result tr;
    double g = 0;
    if (!rk_mem_alloc(c->dev, l.n, &l.src) && !rk_mem_alloc(c->dev, l.n, &l.dst) &&
        !rk_time_launches(c->dev, launch_copy, &l, to, &tr) && tr.median_ms > 0)
        g = 2.0 * (double)l.n / 1e6 / tr.median_ms;
    rk_mem_free(c->dev, l.src);
    rk_mem_free(c->dev, l.dst);
    return g;
}

typedef struct run_args {
    rk_devptr d[RK_KSIG_MAX];
    rk_scalar_value sv[RK_KSIG_MAX];
    unsigned char maps[RK_KSIG_MAX][RK_TENSORMAP_BYTES];
    void *args[RK_KSIG_MAX];
} run_args;

/* The held device buffers, scalars and tensor maps into args. */
static rk_status stage_args(rk_device *dev, const rk_problem *p, const sw_devprob *dp, run_args *b) {
    static const rk_tensormap_swizzle swz[] = {RK_TENSORMAP_SWIZZLE_NONE, RK_TENSORMAP_SWIZZLE_32B,
                                               RK_TENSORMAP_SWIZZLE_64B, RK_TENSORMAP_SWIZZLE_128B};
    for (uint32_t i = 0; i < p->sig.n; i++) {
        const rk_kparam *kp = &p->sig.p[i];
        if (kp->ptr) {
            b->d[i] = dp->d[i];
            b->args[i] = &b->d[i];
        } else if (kp->role != RK_KP_TENSORMAP) {
            rk_status st = rk_problem_scalar(p, i, &b->sv[i]);
            if (st) return st;
            b->args[i] = &b->sv[i];
        }
    }
    for (uint32_t i = 0; i < p->sig.n; i++) {   /* maps last: they need their buffer's address */
        rk_problem_tmap_nd m;
        if (p->sig.p[i].role != RK_KP_TENSORMAP) continue;
        rk_status st = rk_problem_tensormap_nd(p, i, &m);
        uint32_t sw = m.swizzle_bytes >= 128 ? 3 : m.swizzle_bytes / 32;
        if (!st && m.rank == 2)
            st = rk_tensormap_encode_2d(dev, b->d[m.buf], m.elem, m.dims[1], m.dims[0], m.strides_bytes[0], m.box[1],
                                        m.box[0], swz[sw > 3 ? 3 : sw], b->maps[i]);
        else if (!st)
            st = rk_tensormap_encode_nd(dev, b->d[m.buf], m.elem, m.rank, m.dims, m.strides_bytes, m.box,
                                        m.elem_strides, swz[sw > 3 ? 3 : sw], b->maps[i]);
        if (st) return st;
        b->args[i] = b->maps[i];
    }
    return RK_OK;
}

/* The emulator runs the kernel built here; a GPU the build phase's code object. */
static rk_status load_module(run_ctx *c, const sw_opts *o, const rk_kernel *k, rk_module **mod) {
    rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = k, .target = o->t->name};
    if (rk_device_kind_of(c->dev) == RK_DEVICE_EMU) return rk_module_load_image(c->dev, &img, mod);
    char kdir[4200], path[4400];
    snprintf(kdir, sizeof kdir, "%s/kernels", o->out);
    rk_json *j = prebuilt(kdir, rk_kernel_name(k));
    if (!j) return rk_fail(RK_ERR_NOT_FOUND, "%s/%s.build.json: no code object (the build phase did not finish)",
                           kdir, rk_kernel_name(k));
    const char *bin = sw_str(j, "binary"), *ext = strrchr(bin, '.');
    snprintf(path, sizeof path, "%s/%s", kdir, bin);
    char *data = NULL;
    size_t n = 0;
    rk_status st = rk_read_file(path, &data, &n);
    img.kind = !ext ? RK_IMAGE_NONE : !strcmp(ext, ".hsaco") ? RK_IMAGE_HSACO : !strcmp(ext, ".cubin") ? RK_IMAGE_CUBIN
                                                                                                     : RK_IMAGE_PTX;
    img.data = data;
    img.size = n;   /* the kernel stays for the signature and the dynamic LDS pool */
    if (!st) st = rk_module_load_image(c->dev, &img, mod);
    if (data) rk_free(data, n + 1);
    rk_json_free(j);
    return st;
}

/* The compare kernels of the problem's output types, loaded once per worker
 * (built here for the emulator, the build phase's code object on a GPU); one
 * that does not load leaves its outputs to the host check. */
static void load_checkers(run_ctx *c, const sw_opts *o, const rk_problem *p) {
    for (uint32_t i = 0; i < p->sig.n; i++) {
        rk_scalar t = p->sig.p[i].type;
        sw_checker *h = &c->chk[t];
        if (!p->sig.p[i].ptr || h->tried || !sw_compare_supported(t)) continue;
        h->tried = true;
        h->k = sw_compare_kernel(t, o->t);
        h->ok = h->k && !load_module(c, o, h->k, &h->mod) && !rk_module_function(h->mod, rk_kernel_name(h->k), &h->fn);
    }
}

static double since(double *t) {
    double now = now_ms(), d = now - *t;
    *t = now;
    return d;
}

bool sw_run_job(void *ctx, const sw_opts *o, const sw_space *sp, uint32_t w, uint32_t item, rk_buf *line) {
    run_ctx *c = ctx;
    const sw_item *it = &sp->items[item];
    const rk_shape *s = &sp->shape[it->shape];
    bool emu = rk_device_kind_of(c->dev) == RK_DEVICE_EMU;
    /* the timer runs at least one warm-up; on the emulator one of each is plenty */
    rk_time_opts to = {.warmup = o->warmup ? o->warmup : emu ? 1 : 5, .iters = o->iters ? o->iters : emu ? 1 : 20};
    rk_kernel *k = NULL;
    rk_module *mod = NULL;
    rk_function *fn = NULL;
    run_args *b = calloc(1, sizeof *b);
    rk_problem_diff diff = {0}, ddiff = {0};
    sw_times tr = {0};
    sw_timing tim = {.warmup = to.warmup, .iters = to.iters, .min_iters = o->min_iters ? o->min_iters : 10,
                     .stable = o->stable};
    /* every config of a shape gets the same inputs (seed + shape), so one reference serves them all */
    uint64_t seed = o->seed + it->shape;
    bool reused = false, fresh = false, dev_ran = false, host = false, have_p = false;
    double t = now_ms(), t_job = t, prep_ms = 0, load_ms = 0, stage_ms = 0, check_ms = 0, time_ms = 0;
    rk_status st = b ? rk_instance_build(&it->in, o->t, &k) : RK_ERR_NOMEM;
    if (!st) st = load_module(c, o, k, &mod);
    if (!st) st = rk_module_function(mod, it->kernel, &fn);
    load_ms = since(&t);
    bool ahead = !st && c->pre_item == item;   /* filled while the device opened: before this job's wall began */
    if (ahead) prep_ms = c->pre_ms;
    else if (!st) st = sw_problem_get(&c->prob, &it->in, s, it->shape, seed, &reused, &prep_ms);
    c->pre_item = UINT32_MAX;
    have_p = !st;
    since(&t);
    if (!st) load_checkers(c, o, &c->prob.p);
    if (!st) st = sw_dev_stage(c->dev, &c->dprob, &c->prob, &fresh);
    if (!st) st = stage_args(c->dev, &c->prob.p, &c->dprob, b);
    stage_ms = since(&t);
    launch_ud l = {.fn = fn, .args = b ? b->args : NULL};
    if (!st) rk_instance_grid(&it->in, s, l.grid, l.block);
    /* fault injection for tests: this item's outputs stay as staged (zeros), as a kernel writing nothing */
    bool skip = c->fault && !strcmp(c->fault, it->key);
    if (!st && !skip) st = launch_kernel(&l, NULL);
    if (!st) st = rk_device_synchronize(c->dev);
    since(&t);
    /* the device check; the host's where it cannot run, where it finds a
     * mismatch (the message names the element) and for a shape's first
     * config on this worker, which so checks the check */
    if (!st && !c->chk_off) st = sw_dev_check(c->dev, &c->dprob, &c->prob.p, c->chk, &ddiff, &dev_ran);
    host = !st && (!dev_ran || fresh || ddiff.bad);
    if (host && !(st = sw_dev_fetch(c->dev, &c->dprob, &c->prob.p)))
        st = rk_problem_check_ref(&c->prob.p, &c->prob.ref, &diff);
    if (!st && !host) diff = ddiff;
    if (!st && host && dev_ran && !ddiff.bad && diff.bad) {
        /* the device passed what the host did not: this worker checks on the host from now on */
        c->chk_off = true;
        fprintf(stderr, "\nrocke %s: the device check passed %s, the host check did not (%s): host checks only\n",
                o->cmd, it->key, diff.first_bad);
    }
    check_ms = since(&t);
    if (!st) st = sw_time(&c->timer, c->dev, launch_kernel, &l, &tim, &tr);
    time_ms = since(&t);
    rk_json *r = sw_record_new(sp, o, it);
    rk_json_set(r, "status", rk_json_str(st ? "failed" : diff.bad ? "wrong" : "ok"));
    rk_json_set(r, "error", rk_json_str(st ? rk_error_message() : diff.bad ? diff.first_bad : ""));
    rk_json_set(r, "verified", rk_json_bool(!st && !diff.bad));
    if (!st) {
        double bytes, flops, ms = tr.median_ms > 0 ? tr.median_ms : 1e-9;
        rk_instance_cost(&it->in, s, &bytes, &flops);
        if (c->copy_gbps[it->shape] <= 0) c->copy_gbps[it->shape] = copy_gbps(c, &to, bytes);
        double gbps = bytes / 1e6 / ms;
        rk_json_set(r, "max_abs_diff", rk_json_num(diff.max_abs_diff));
        rk_json_set(r, "ms", rk_json_num(ms));
        rk_json_set(r, "min_ms", rk_json_num(tr.min_ms));
        rk_json_set(r, "tflops", rk_json_num(flops / 1e9 / ms));
        rk_json_set(r, "gbps", rk_json_num(gbps));
        rk_json_set(r, "copy_gbps", rk_json_num(c->copy_gbps[it->shape]));
        rk_json_set(r, "of_copy", rk_json_num(c->copy_gbps[it->shape] > 0 ? gbps / c->copy_gbps[it->shape] : 0));
        rk_json_set(r, "clock", rk_json_str(rk_clock_name(emu ? RK_CLOCK_HOST_EMULATOR : RK_CLOCK_GPU_EVENTS)));
        /* what the timing was: its launches and the sum of the timed runs */
        rk_json_set(r, "warmup", rk_json_int(to.warmup));
        rk_json_set(r, "iters", rk_json_int(tr.samples));
        rk_json_set(r, "launches", rk_json_int(1 + (int64_t)to.warmup + tr.samples));
        rk_json_set(r, "timed_ms", rk_json_num(tr.sum_ms));
        if (o->stable > 0) {   /* --stable: the rounds it took, and whether the median settled */
            rk_json_set(r, "rounds", rk_json_int(tr.rounds));
            rk_json_set(r, "settled", rk_json_bool(tr.settled));
        }
    }
    /* the host side of verifying: inputs + reference (or re-aiming the held ones), then the comparison */
    rk_json_set(r, "reference", rk_json_str(reused ? "reused" : have_p ? "computed" : "none"));
    rk_json_set(r, "check", rk_json_str(st ? "none" : !host ? "device" : dev_ran ? "both" : "host"));
    rk_json_set(r, "inputs_ms", rk_json_num(prep_ms));
    rk_json_set(r, "inputs_ahead", rk_json_bool(ahead));   /* inputs_ms then lies outside job_ms */
    rk_json_set(r, "check_ms", rk_json_num(check_ms));
    /* where the rest of the item's wall time went */
    rk_json_set(r, "load_ms", rk_json_num(load_ms));
    rk_json_set(r, "stage_ms", rk_json_num(stage_ms));
    rk_json_set(r, "time_ms", rk_json_num(time_ms));
    rk_json_set(r, "device", rk_json_str(c->device));
    rk_json_set(r, "driver", rk_json_str(c->driver));
    rk_json_set(r, "worker", rk_json_int(w));
    rk_json_set(r, "seed", rk_json_int((int64_t)seed));
    rk_json_set(r, "job_ms", rk_json_num(now_ms() - t_job));
    /* when, in seconds since the sweep began (the monotonic clock is the parent's too) */
    rk_json_set(r, "start_s", rk_json_num(t_job / 1e3 - o->t0));
    rk_json_set(r, "end_s", rk_json_num(now_ms() / 1e3 - o->t0));
    char *text = rk_json_write(r, false);
    rk_buf_puts(line, text ? text : "{}");
    rk_string_free(text);
    rk_json_free(r);
    free(b);
    if (mod) rk_module_unload(mod);
    rk_kernel_free(k);
    /* a device that failed (lost, reset) runs nothing more: the others go on */
    return st != RK_ERR_DEVICE;
}
