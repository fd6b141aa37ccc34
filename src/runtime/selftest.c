/* rocke — the self-check runner behind `rocke gpu-check`: for one case, set
 * up a problem on fresh random inputs, build and verify the kernel, compile
 * it for the device's target (the emulator takes the IR), poison the
 * outputs, launch, compare with the host reference and optionally time it.
 * Every failure becomes a result with a note, never an abort. Layer: runtime. */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "selftest.h"
#include "rocke/compile.h"
#include "../base/fp.h"

const char *rk_check_status_name(rk_check_status s) {
    switch (s) {
    case RK_CHECK_PASS: return "PASS";
    case RK_CHECK_FAIL: return "FAIL";
    case RK_CHECK_SKIP: return "SKIP";
    case RK_CHECK_ERROR: return "ERROR";
    }
    return "?";
}

uint32_t rk_check_count(void) {
    uint32_t n = 0;
    while (rt_st_cases[n]) n++;
    return n;
}
const char *rk_check_name(uint32_t i) { return i < rk_check_count() ? rt_st_cases[i]->name : NULL; }
const char *rk_check_desc(uint32_t i) { return i < rk_check_count() ? rt_st_cases[i]->desc : NULL; }
int rk_check_find(const char *name) {
    for (uint32_t i = 0; name && rt_st_cases[i]; i++)
        if (!strcmp(rt_st_cases[i]->name, name)) return (int)i;
    return -1;
}

/* ---- helpers for cases ---------------------------------------------------------------- */
static size_t elem_bytes(rk_scalar e) { return rk_scalar_bits(e) / 8; }

st_buf *rt_st_add_buf(st_problem *p, const char *name, rk_scalar elem, size_t count, bool output) {
    RK_ASSERT(p->nbufs < ST_MAX_BUFS, "too many buffers in a self-check");
    RK_ASSERT(elem == RK_S_I32 || elem == RK_S_F32 || elem == RK_S_F16, "self-check buffers are i32, f32 or f16");
    st_buf *b = &p->bufs[p->nbufs];
    *b = (st_buf){.name = name, .elem = elem, .count = count, .output = output};
    b->host = rk_calloc(count ? count : 1, elem_bytes(elem));
    if (output) b->ref = rk_calloc(count ? count : 1, sizeof *b->ref);
    if (!b->host || (output && !b->ref)) {
        rk_free(b->host, 0);
        rk_free(b->ref, 0);
        rk_fail(RK_ERR_NOMEM, "out of memory for self-check buffer '%s' (%zu elements)", name, count);
        return NULL;
    }
    p->nbufs++;
    return b;
}

void rt_st_add_scalar(st_problem *p, rk_arg named) {
    RK_ASSERT(p->nscalars < ST_MAX_SCALARS && named.name, "self-check scalars are named, at most 6");
    p->scalars[p->nscalars++] = named;
}

st_buf *rt_st_find(st_problem *p, const char *name) {
    for (uint32_t i = 0; i < p->nbufs; i++)
        if (!strcmp(p->bufs[i].name, name)) return &p->bufs[i];
    rk_bug("self-check buffer not found");
}

uint64_t rt_st_rand(st_problem *p) {
    uint64_t x = p->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    p->rng = x;
    return x * 0x2545f4914f6cdd1dull;
}
int32_t rt_st_rand_int(st_problem *p, int32_t lo, int32_t hi) {
    return lo + (int32_t)(rt_st_rand(p) % (uint64_t)((int64_t)hi - lo + 1));
}
double rt_st_rand_unit(st_problem *p) { return (double)(rt_st_rand(p) >> 11) * 0x1p-52 - 1.0; }

double rt_st_get(const st_buf *b, size_t i) {
    switch (b->elem) {
    case RK_S_I32: return ((const int32_t *)b->host)[i];
    case RK_S_F32: return ((const float *)b->host)[i];
    case RK_S_F16: return rk_f16_to_f32(((const uint16_t *)b->host)[i]);
    default: rk_bug("self-check element type");
    }
}

/* v rounded to b's element type, as a double */
static double rounded(rk_scalar e, double v) {
    switch (e) {
    case RK_S_I32: return (double)(int32_t)(int64_t)v;
    case RK_S_F32: return (float)v;
    case RK_S_F16: return rk_f16_to_f32(rk_f64_to_f16(v));
    default: rk_bug("self-check element type");
    }
}

void rt_st_set(st_buf *b, size_t i, double v) {
    switch (b->elem) {
    case RK_S_I32: ((int32_t *)b->host)[i] = (int32_t)(int64_t)v; break;
    case RK_S_F32: ((float *)b->host)[i] = (float)v; break;
    case RK_S_F16: ((uint16_t *)b->host)[i] = rk_f64_to_f16(v); break;
    default: rk_bug("self-check element type");
    }
}

/* ---- the runner ------------------------------------------------------------------------------ */
typedef struct run {
    rk_device *dev;
    const st_case *c;
    st_problem p;
    rk_kernel *k;
    rk_artifact *art;
    rk_launcher *l;
    rk_devptr dptr[ST_MAX_BUFS];
    rk_arg args[ST_MAX_BUFS + ST_MAX_SCALARS + ST_MAX_TMAPS];
    _Alignas(RK_TENSORMAP_ALIGN) uint8_t maps[ST_MAX_TMAPS][RK_TENSORMAP_BYTES];
    uint32_t nargs;
    rk_check_result *res;
} run;

/* Record an ERROR (or status s) whose note is "<what>: <current message>". */
static void note_error(run *r, rk_check_status s, const char *what) {
    char msg[sizeof r->res->note];
    snprintf(msg, sizeof msg, "%s", rk_error_message());
    r->res->status = s;
    size_t n = (size_t)snprintf(r->res->note, sizeof r->res->note, "%s: ", what);
    if (n < sizeof r->res->note) /* the message is cut to what is left */
        snprintf(r->res->note + n, sizeof r->res->note - n, "%.*s", (int)(sizeof r->res->note - n - 1), msg);
}

static const rk_target *device_target(const rk_device *d) {
    for (const rk_target *const *t = rk_targets(); *t; t++)
        if (!strcmp((*t)->name, d->target)) return *t;
    return NULL;
}

/* Build and verify the case's kernel into r->k. */
static bool build(run *r) {
    r->k = r->c->build(&r->p);
    if (!r->k) {
        note_error(r, RK_CHECK_ERROR, "building the kernel");
        return false;
    }
    rk_diags diags;
    rk_diags_init(&diags);
    rk_target_verify(r->k, r->p.target, &diags);
    if (diags.nerrors) {
        char *text = rk_diags_text(&diags);
        r->res->status = RK_CHECK_ERROR;
        snprintf(r->res->note, sizeof r->res->note, "the verifier rejects the kernel for %s: %s",
                 r->p.target->name, text ? text : "(out of memory)");
        rk_string_free(text);
        rk_diags_free(&diags);
        return false;
    }
    rk_diags_free(&diags);
    return true;
}

/* A binary written by rk_check_emit: DIR/<kernel>.cubin or .ptx (CUDA), .hsaco (HIP). */
static rk_status load_from(run *r, const char *dir) {
    static const struct { rk_device_kind dev; rk_image_kind kind; const char *ext; } files[] = {
        {RK_DEVICE_CUDA, RK_IMAGE_CUBIN, "cubin"}, {RK_DEVICE_CUDA, RK_IMAGE_PTX, "ptx"},
        {RK_DEVICE_HIP, RK_IMAGE_HSACO, "hsaco"},
    };
    char path[1024];
    rk_buf tried;
    rk_buf_init(&tried);
    for (size_t i = 0; i < RK_COUNTOF(files); i++) {
        if (files[i].dev != r->dev->info.kind) continue;
        snprintf(path, sizeof path, "%s/%s.%s", dir, rk_kernel_name(r->k), files[i].ext);
        char *data = NULL;
        size_t n = 0;
        if (rk_read_file(path, &data, &n) != RK_OK) {
            rk_buf_printf(&tried, "%s%s", tried.len ? ", " : "", path);
            continue;
        }
        rk_buf_free(&tried);
        /* the kernel built here gives the launch its dynamic LDS pool, if any */
        rk_module_image img = {.kind = files[i].kind, .data = data, .size = n, .kernel = r->k};
        rk_argsig *sig = NULL;
        rk_status s = rk_launcher_new_image(r->dev, &img, rk_kernel_name(r->k), &r->l);
        rk_free(data, n + 1);
        if (s == RK_OK && (s = rk_argsig_from_kernel(r->k, &sig)) == RK_OK) s = rk_launcher_set_signature(r->l, sig);
        rk_argsig_free(sig);
        return s != RK_OK ? rt_fail_prefix(s, "%s", path) : RK_OK;
    }
    rk_status s = rk_fail(RK_ERR_NOT_FOUND, "no binary for %s (tried %s; write them with rocke gpu-check --emit)",
                          rk_device_kind_name(r->dev->info.kind),
                          tried.len ? rk_buf_cstr(&tried) : "nothing for this device kind");
    rk_buf_free(&tried);
    return s;
}

static bool build_and_load(run *r, const char *artifacts) {
    if (!build(r)) return false;
    rk_status s;
    if (artifacts && r->dev->info.kind != RK_DEVICE_EMU) {
        s = load_from(r, artifacts);
    } else if (r->dev->info.kind == RK_DEVICE_EMU) {
        rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = r->k, .target = r->p.target->name};
        s = rk_launcher_new_image(r->dev, &img, NULL, &r->l);
    } else {
        if ((s = rk_compile(r->k, r->p.target, NULL, &r->art)) != RK_OK) {
            note_error(r, RK_CHECK_ERROR, "compiling");
            return false;
        }
        s = rk_launcher_new(r->dev, r->art, &r->l);
    }
    if (s != RK_OK) note_error(r, RK_CHECK_ERROR, "loading");
    return s == RK_OK;
}

static bool upload(run *r) {
    for (uint32_t i = 0; i < r->p.nbufs; i++) {
        st_buf *b = &r->p.bufs[i];
        size_t n = b->count * elem_bytes(b->elem);
        rk_status s = rk_mem_alloc(r->dev, n, &r->dptr[i]);
        if (s == RK_OK) s = rk_mem_name(r->dev, r->dptr[i], b->name);
        /* outputs are poisoned so that an element nobody wrote is seen */
        if (s == RK_OK) s = b->output ? rk_mem_memset(r->dev, r->dptr[i], 0xa5, n, NULL)
                                      : rk_mem_copy_htod(r->dev, r->dptr[i], b->host, n);
        if (s != RK_OK) {
            note_error(r, RK_CHECK_ERROR, b->name);
            return false;
        }
        bool mapped = false;   /* a buffer a tensor map describes reaches the kernel only through the map */
        for (uint32_t j = 0; j < r->p.ntmaps; j++) mapped |= !strcmp(r->p.tmaps[j].buf, b->name);
        if (!mapped) r->args[r->nargs++] = rk_arg_named(b->name, rk_arg_ptr(r->dptr[i]));
    }
    for (uint32_t i = 0; i < r->p.nscalars; i++) r->args[r->nargs++] = r->p.scalars[i];
    for (uint32_t i = 0; i < r->p.ntmaps; i++) {
        const st_tmap *t = &r->p.tmaps[i];
        uint32_t b = 0;
        while (b < r->p.nbufs && strcmp(r->p.bufs[b].name, t->buf)) b++;
        RK_ASSERT(b < r->p.nbufs, "a case's tensor map names a buffer it did not add");
        if (rk_tensormap_encode_2d(r->dev, r->dptr[b], r->p.bufs[b].elem, t->rows, t->cols, t->row_stride, t->box_rows,
                                   t->box_cols, t->swizzle, r->maps[i]) != RK_OK) {
            note_error(r, RK_CHECK_ERROR, t->param);
            return false;
        }
        r->args[r->nargs++] = rk_arg_named(t->param, rk_arg_tensormap(r->maps[i]));
    }
    return true;
}

static void compare(run *r) {
    rk_check_result *res = r->res;
    double num = 0, den = 0;
    bool first = true;
    for (uint32_t i = 0; i < r->p.nbufs; i++) {
        st_buf *b = &r->p.bufs[i];
        if (!b->output) continue;
        for (size_t j = 0; j < b->count; j++) {
            double out = rt_st_get(b, j), ref = b->ref[j], want = rounded(b->elem, ref);
            bool bad = isnan(out) || isinf(out) || (r->p.tol == 0 && out != want);
            double err = fabs(out - ref);
            num += isnan(err) ? INFINITY : err * err;
            den += ref * ref;
            if (!(err <= res->max_abs_err)) res->max_abs_err = err;
            res->total++;
            if (bad) {
                res->bad++;
                if (first)
                    snprintf(res->note, sizeof res->note, "first mismatch %s[%zu] = %.9g, want %.9g", b->name, j, out,
                             want);
                first = false;
            }
        }
    }
    res->rel_err = den > 0 ? sqrt(num / den) : num > 0 ? INFINITY : 0;
    bool ok = res->bad == 0 && (r->p.tol == 0 || res->rel_err <= r->p.tol);
    res->status = ok ? RK_CHECK_PASS : RK_CHECK_FAIL;
    if (!ok && first)
        snprintf(res->note, sizeof res->note, "relative error %.3g over the tolerance %.3g", res->rel_err, r->p.tol);
}

static void time_it(run *r, const rk_check_opts *o, const rk_launch_config *cfg) {
    bool emu = r->dev->info.kind == RK_DEVICE_EMU;
    rk_time_opts to = {.warmup = o->warmup ? o->warmup : emu ? 1 : 10, .iters = o->iters ? o->iters : emu ? 3 : 50};
    rk_time_result t;
    if (rk_time_launcher(r->l, cfg, r->args, r->nargs, &to, &t) != RK_OK) {
        note_error(r, RK_CHECK_ERROR, "timing");
        return;
    }
    r->res->median_ms = t.median_ms;
    r->res->spread = t.spread;
    r->res->clock = t.clock;
}

static void cleanup(run *r) {
    for (uint32_t i = 0; i < r->p.nbufs; i++) {
        if (r->dptr[i]) rk_mem_free(r->dev, r->dptr[i]);
        rk_free(r->p.bufs[i].host, 0);
        rk_free(r->p.bufs[i].ref, 0);
    }
    rk_launcher_free(r->l);
    rk_artifact_free(r->art);
    rk_kernel_free(r->k);
}

rk_status rk_check_run(rk_device *dev, uint32_t i, const rk_check_opts *opts, rk_check_result *out) {
    if (!dev || !out || i >= rk_check_count())
        return rk_fail(RK_ERR_INVALID, "rk_check_run: no device, result or check %u", i);
    rk_check_opts o = opts ? *opts : (rk_check_opts){0};
    if (!o.seed) o.seed = ((uint64_t)time(NULL) * 2654435761u) ^ ((uint64_t)i << 32);
    return rt_check_run_case(dev, rt_st_cases[i], &o, out);
}

rk_status rt_check_run_case(rk_device *dev, const st_case *c, const rk_check_opts *opts, rk_check_result *out) {
    if (!dev || !c || !out) return rk_fail(RK_ERR_INVALID, "rt_check_run_case: no device, case or result");
    rk_check_opts o = opts ? *opts : (rk_check_opts){0};
    *out = (rk_check_result){.status = RK_CHECK_ERROR};
    out->seed = o.seed ? o.seed : (uint64_t)time(NULL);
    run r = {.dev = dev, .c = c, .res = out};
    r.p.target = device_target(dev);
    r.p.small = o.small || dev->info.kind == RK_DEVICE_EMU;
    r.p.rng = out->seed | 1;
    if (!r.p.target) {
        out->status = RK_CHECK_SKIP;
        snprintf(out->note, sizeof out->note, "no rocke target for this device (%s)", dev->arch);
        return RK_OK;
    }
    const char *why = r.c->unsupported ? r.c->unsupported(r.p.target) : NULL;
    if (why) {
        out->status = RK_CHECK_SKIP;
        snprintf(out->note, sizeof out->note, "%s", why);
        return RK_OK;
    }
    if (r.c->setup(&r.p) != RK_OK) {
        note_error(&r, RK_CHECK_ERROR, "setting up");
    } else if (dev->info.kind == RK_DEVICE_EMU && r.p.atom && r.p.atom->lanes != r.p.target->wave_size) {
        out->status = RK_CHECK_SKIP;
        snprintf(out->note, sizeof out->note, "the emulator runs one warp at a time; warpgroup (wgmma) atom %s needs "
                 "an sm_90a GPU", r.p.atom->op_id);
    } else if (build_and_load(&r, o.artifacts) && upload(&r)) {
        rk_launch_config cfg = {.dyn_smem = r.p.dyn_smem, .fence = true};
        memcpy(cfg.grid, r.p.grid, sizeof cfg.grid);
        memcpy(cfg.block, r.p.block, sizeof cfg.block);
        if (rk_launcher_call(r.l, &cfg, r.args, r.nargs) != RK_OK) {
            note_error(&r, RK_CHECK_ERROR, "launching");
        } else {
            rk_status s = RK_OK;
            for (uint32_t b = 0; b < r.p.nbufs && s == RK_OK; b++)
                if (r.p.bufs[b].output)
                    s = rk_mem_copy_dtoh(dev, r.p.bufs[b].host, r.dptr[b],
                                         r.p.bufs[b].count * elem_bytes(r.p.bufs[b].elem));
            if (s != RK_OK) {
                note_error(&r, RK_CHECK_ERROR, "reading the results");
            } else {
                r.c->reference(&r.p);
                compare(&r);
                if (out->status == RK_CHECK_PASS && o.time) time_it(&r, &o, &cfg);
            }
        }
    }
    out->tol = r.p.tol;
    snprintf(out->size, sizeof out->size, "%s", r.p.size);
    if (r.p.atom && !out->note[0]) snprintf(out->note, sizeof out->note, "atom %s", r.p.atom->op_id);
    cleanup(&r);
    return RK_OK;
}

rk_status rk_check_emit(const char *target, uint32_t i, const char *dir, rk_check_result *out) {
    if (!target || !dir || !out || i >= rk_check_count())
        return rk_fail(RK_ERR_INVALID, "rk_check_emit: no target, folder, result or check %u", i);
    *out = (rk_check_result){.status = RK_CHECK_ERROR};
    const rk_target *t = rk_target_find(target);
    if (!t) return RK_ERR_INVALID;
    /* kernels do not depend on the problem size: set up the small one */
    run r = {.c = rt_st_cases[i], .res = out};
    r.p.target = t;
    r.p.small = true;
    r.p.rng = 1;
    const char *why = r.c->unsupported ? r.c->unsupported(t) : NULL;
    if (why) {
        out->status = RK_CHECK_SKIP;
        snprintf(out->note, sizeof out->note, "%s", why);
    } else if (r.c->setup(&r.p) != RK_OK) {
        note_error(&r, RK_CHECK_ERROR, "setting up");
    } else if (build(&r)) {
        if (rk_compile(r.k, t, NULL, &r.art) != RK_OK) note_error(&r, RK_CHECK_ERROR, "compiling");
        else if (rk_artifact_write(r.art, dir) != RK_OK) note_error(&r, RK_CHECK_ERROR, "writing");
        else {
            out->status = RK_CHECK_PASS;
            snprintf(out->note, sizeof out->note, "wrote %s/%s.{ll,%s%s}", dir, r.art->kernel_name,
                     r.art->kind == RK_BINARY_HSACO ? "hsaco" : "ptx", r.art->cubin ? ",cubin" : "");
        }
    }
    cleanup(&r);
    return RK_OK;
}
