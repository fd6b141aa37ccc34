/* rocke — the emulator as a device: memory is rk_emu buffers, a module is
 * kernel IR (parsed text or a built kernel), a launch is rk_emu_launch.
 * Streams run their work at once (in order, on the calling thread), events
 * read the host clock, and a graph is the list of work a capturing stream
 * recorded, replayed in order. Layer: runtime. */
#include <pthread.h>
#include <stdio.h>

#include "runtime_int.h"
#include "rocke/emu.h"

/* The emulator runs one launch at a time and its buffer table is not
 * shared-safe: every call into it holds the lock, so a device may be used
 * from several threads like a GPU. */
typedef struct emu_dev { rk_emu *emu; pthread_mutex_t lock; } emu_dev;

/* One piece of recorded work (graph capture). */
typedef enum { EW_LAUNCH, EW_MEMSET, EW_COPY } ew_kind;
typedef struct emu_work {
    struct emu_work *next;
    ew_kind kind;
    rk_function *fn;
    uint32_t grid[3], block[3], dyn_smem;
    uint8_t *argbytes;         /* copies of the parameter values */
    size_t argbytes_n;
    void **params;
    uint32_t nparams;
    rk_devptr dst, src;
    size_t n;
    uint8_t byte;
} emu_work;
typedef struct emu_list { emu_work *head, **tail; } emu_list;

static rk_emu *E(const rk_device *d) { return ((emu_dev *)d->impl)->emu; }
static void lock(const rk_device *d) { pthread_mutex_lock(&((emu_dev *)d->impl)->lock); }
static void unlock(const rk_device *d) { pthread_mutex_unlock(&((emu_dev *)d->impl)->lock); }

/* ---- device and memory ------------------------------------------------------------- */
static void em_close(rk_device *d) {
    emu_dev *e = d->impl;
    if (!e) return;
    rk_emu_free(e->emu);
    pthread_mutex_destroy(&e->lock);
    rk_free(e, sizeof *e);
    d->impl = NULL;
}

static rk_status em_nop(rk_device *d) {
    (void)d;
    return RK_OK;
}

static rk_status em_alloc(rk_device *d, size_t n, rk_devptr *out) {
    uint64_t a = 0;
    lock(d);
    rk_status s = rk_emu_alloc(E(d), n, &a);
    unlock(d);
    *out = a;
    return s;
}
static rk_status em_free(rk_device *d, rk_devptr p) {
    lock(d);
    rk_status s = rk_emu_release(E(d), p);
    unlock(d);
    return s;
}
static rk_status em_name(rk_device *d, rk_devptr p, const char *name) {
    lock(d);
    rk_status s = rk_emu_set_name(E(d), p, name);
    unlock(d);
    return s;
}

/* Host view of [p, p+n) inside one emulator buffer. */
static rk_status span(rk_device *d, rk_devptr p, size_t n, const char *what, uint8_t **host) {
    size_t avail = 0;
    lock(d);
    *host = rk_emu_host(E(d), p, &avail);
    unlock(d);
    if (!*host)
        return rk_fail(RK_ERR_INVALID, "%s: 0x%llx is not in any buffer allocated on the emulator", what,
                       (unsigned long long)p);
    if (avail < n)
        return rk_fail(RK_ERR_INVALID, "%s of %zu bytes at 0x%llx runs %zu bytes past the end of its buffer", what, n,
                       (unsigned long long)p, n - avail);
    return RK_OK;
}

static rk_status em_htod(rk_device *d, rk_devptr dst, const void *src, size_t n) {
    uint8_t *h;
    rk_status s = span(d, dst, n, "host-to-device copy", &h);
    if (s == RK_OK) memcpy(h, src, n);
    return s;
}
static rk_status em_dtoh(rk_device *d, void *dst, rk_devptr src, size_t n) {
    uint8_t *h;
    rk_status s = span(d, src, n, "device-to-host copy", &h);
    if (s == RK_OK) memcpy(dst, h, n);
    return s;
}

static rk_status do_copy(rk_device *d, rk_devptr dst, rk_devptr src, size_t n) {
    uint8_t *hd, *hs;
    rk_status s = span(d, dst, n, "device-to-device copy (destination)", &hd);
    if (s == RK_OK) s = span(d, src, n, "device-to-device copy (source)", &hs);
    if (s == RK_OK) memmove(hd, hs, n);
    return s;
}
static rk_status do_memset(rk_device *d, rk_devptr dst, uint8_t b, size_t n) {
    uint8_t *h;
    rk_status s = span(d, dst, n, "memset", &h);
    if (s == RK_OK) memset(h, b, n);
    return s;
}

/* Append to a capturing stream's list; the caller fills the entry. */
static emu_work *record(rk_stream *s, ew_kind kind) {
    emu_list *l = s->capture;
    emu_work *w = rk_calloc(1, sizeof *w);
    if (!w) return NULL;
    w->kind = kind;
    *l->tail = w;
    l->tail = &w->next;
    return w;
}

static rk_status em_dtod(rk_device *d, rk_devptr dst, rk_devptr src, size_t n, rk_stream *s) {
    if (s && s->capturing) {
        emu_work *w = record(s, EW_COPY);
        if (!w) return rk_fail(RK_ERR_NOMEM, "out of memory capturing a copy");
        w->dst = dst, w->src = src, w->n = n;
        return RK_OK;
    }
    return do_copy(d, dst, src, n);
}
static rk_status em_memset(rk_device *d, rk_devptr dst, uint8_t b, size_t n, rk_stream *s) {
    if (s && s->capturing) {
        emu_work *w = record(s, EW_MEMSET);
        if (!w) return rk_fail(RK_ERR_NOMEM, "out of memory capturing a memset");
        w->dst = dst, w->byte = b, w->n = n;
        return RK_OK;
    }
    return do_memset(d, dst, b, n);
}

/* ---- modules and launches ----------------------------------------------------------------- */
static rk_status em_module_load(rk_module *m, const rk_module_image *img) {
    (void)img;
    /* module.c has parsed IR text into m->kernel already */
    if (!m->kernel) return rk_fail(RK_ERR_INVALID, "the emulator needs kernel IR, and the image holds none");
    const char *kt = rk_attrs_str(rk_kernel_attrs(m->kernel), "target");
    if (kt && strcmp(kt, m->dev->target) != 0)
        return rk_fail(RK_ERR_INVALID, "kernel '%s' was built for %s but this emulator runs %s (open the device as "
                       "'emu:%s')", rk_kernel_name(m->kernel), kt, m->dev->target, kt);
    m->handle = (void *)m->kernel;
    return RK_OK;
}
static void em_module_unload(rk_module *m) { m->handle = NULL; }

static rk_status em_function(rk_function *f) {
    const rk_kernel *k = f->mod->kernel;
    if (strcmp(rk_kernel_name(k), f->name) != 0)
        return rk_fail(RK_ERR_NOT_FOUND, "the module has no kernel named '%s'", f->name);
    f->handle = (void *)k;
    f->max_threads = (uint32_t)rk_kernel_max_workgroup_size(k);
    return RK_OK;
}

static rk_status run_launch(rk_function *f, const uint32_t g[3], const uint32_t b[3], uint32_t dyn, void **args) {
    rk_device *d = f->mod->dev;
    lock(d);
    rk_status s = rk_emu_launch(E(d), (const rk_kernel *)f->handle, g, b, dyn, (void *const *)args);
    unlock(d);
    if (s != RK_OK)
        return rt_fail_prefix(s, "kernel '%s' (grid %ux%ux%u, block %ux%ux%u) on the emulator (%s)", f->name, g[0],
                              g[1], g[2], b[0], b[1], b[2], d->target);
    return RK_OK;
}

/* Bytes of parameter i's value: a tensormap parameter takes its 128-byte map. */
static size_t param_bytes(const rk_kernel *k, uint32_t i) {
    const rk_param *p = rk_kernel_param(k, i);
    if (rk_attrs_bool(&p->attrs, "tensormap", false)) return RK_TENSORMAP_BYTES;
    return (rk_type_bits(k, p->type) + 7) / 8;
}

/* Copy the parameter values so the graph can replay after args are gone. */
static rk_status capture_launch(rk_stream *s, rk_function *f, const uint32_t g[3], const uint32_t b[3],
                                uint32_t dyn, void **args) {
    const rk_kernel *k = f->handle;
    uint32_t n = rk_kernel_nparams(k);
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) total += (param_bytes(k, i) + 15) & ~(size_t)15;
    emu_work *w = record(s, EW_LAUNCH);
    if (!w) return rk_fail(RK_ERR_NOMEM, "out of memory capturing a launch");
    w->fn = f;
    memcpy(w->grid, g, sizeof w->grid);
    memcpy(w->block, b, sizeof w->block);
    w->dyn_smem = dyn;
    w->nparams = n;
    w->argbytes_n = total ? total : 1;
    w->argbytes = rk_calloc(1, w->argbytes_n);
    w->params = rk_calloc(n ? n : 1, sizeof *w->params);
    if (!w->argbytes || !w->params) return rk_fail(RK_ERR_NOMEM, "out of memory capturing a launch");
    size_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t sz = param_bytes(k, i);
        if (!args || !args[i]) return rk_fail(RK_ERR_INVALID, "kernel '%s': argument #%u is NULL", f->name, i + 1);
        memcpy(w->argbytes + off, args[i], sz);
        w->params[i] = w->argbytes + off;
        off += (sz + 15) & ~(size_t)15;
    }
    return RK_OK;
}

static rk_status em_launch(rk_function *f, const uint32_t g[3], const uint32_t b[3], uint32_t dyn, rk_stream *s,
                           void **args) {
    if (s && s->capturing) return capture_launch(s, f, g, b, dyn, args);
    return run_launch(f, g, b, dyn, args);
}

/* ---- streams and events ------------------------------------------------------------------------ */
static rk_status em_stream_create(rk_stream *s) {
    s->handle = s;
    return RK_OK;
}
static void em_stream_destroy(rk_stream *s) { s->handle = NULL; }
static rk_status em_stream_sync(rk_device *d, rk_stream *s) {
    (void)d;
    (void)s;
    return RK_OK;
}

static rk_status em_event_create(rk_event *e) {
    e->handle = e;
    return RK_OK;
}
static void em_event_destroy(rk_event *e) { e->handle = NULL; }
static rk_status em_event_record(rk_event *e, rk_stream *s) {
    if (s && s->capturing) return rk_fail(RK_ERR_UNSUPPORTED, "recording an event into a graph capture");
    e->host_ms = rt_host_ms();
    return RK_OK;
}
static rk_status em_event_sync(rk_event *e) {
    (void)e;
    return RK_OK;
}
static rk_status em_event_query(rk_event *e, bool *done) {
    (void)e;
    *done = true;
    return RK_OK;
}
static rk_status em_event_elapsed(rk_event *a, rk_event *b, double *ms) {
    *ms = b->host_ms - a->host_ms;
    return RK_OK;
}

/* ---- graphs ---------------------------------------------------------------------------------------- */
static void free_list(emu_work *w) {
    while (w) {
        emu_work *next = w->next;
        rk_free(w->argbytes, w->argbytes_n);
        rk_free(w->params, (w->nparams ? w->nparams : 1) * sizeof *w->params);
        rk_free(w, sizeof *w);
        w = next;
    }
}

static rk_status em_capture_begin(rk_stream *s) {
    emu_list *l = rk_calloc(1, sizeof *l);
    if (!l) return rk_fail(RK_ERR_NOMEM, "out of memory starting a capture");
    l->tail = &l->head;
    s->capture = l;
    return RK_OK;
}
static rk_status em_capture_end(rk_stream *s, rk_graph *g) {
    emu_list *l = s->capture;
    g->graph = l->head;
    s->capture = NULL;
    rk_free(l, sizeof *l);
    return RK_OK;
}
static rk_status em_graph_launch(rk_graph *g, rk_stream *s) {
    (void)s;
    for (emu_work *w = g->graph; w; w = w->next) {
        rk_status st = RK_OK;
        switch (w->kind) {
        case EW_LAUNCH: st = run_launch(w->fn, w->grid, w->block, w->dyn_smem, w->params); break;
        case EW_MEMSET: st = do_memset(g->dev, w->dst, w->byte, w->n); break;
        case EW_COPY: st = do_copy(g->dev, w->dst, w->src, w->n); break;
        }
        if (st != RK_OK) return rt_fail_prefix(st, "replaying a graph");
    }
    return RK_OK;
}
static void em_graph_destroy(rk_graph *g) {
    free_list(g->graph);
    g->graph = NULL;
}

/* The emulator's own 128-byte map (rk_emu_tensormap_encode_2d); tensormap.c
 * checked t against the driver's rules already. */
static rk_status em_tensormap_encode(rk_device *d, const rt_tmap2d *t, void *out) {
    (void)d;
    static const uint32_t span[] = {0, 32, 64, 128};
    if (t->rank) {
        uint64_t st[4];
        for (uint32_t i = 1; i < t->rank; i++) st[i - 1] = t->stride[i];
        return rk_emu_tensormap_encode_nd(t->base, t->elem_bytes, t->rank, t->dim, st, t->box, t->estr,
                                          span[t->swizzle], out);
    }
    return rk_emu_tensormap_encode_2d(t->base, t->elem_bytes, t->rows, t->cols, t->row_stride, t->box_rows, t->box_cols,
                                      span[t->swizzle], out);
}

static const rt_backend emu_backend = {
    .kind = RK_DEVICE_EMU, .close = em_close, .synchronize = em_nop,
    .mem_alloc = em_alloc, .mem_free = em_free, .htod = em_htod, .dtoh = em_dtoh, .dtod = em_dtod,
    .memset = em_memset, .mem_name = em_name, .module_load = em_module_load, .module_unload = em_module_unload,
    .function = em_function, .launch = em_launch, .stream_create = em_stream_create,
    .stream_destroy = em_stream_destroy, .stream_sync = em_stream_sync, .event_create = em_event_create,
    .event_destroy = em_event_destroy, .event_record = em_event_record, .event_sync = em_event_sync,
    .event_query = em_event_query, .event_elapsed = em_event_elapsed, .capture_begin = em_capture_begin,
    .capture_end = em_capture_end, .graph_launch = em_graph_launch, .graph_destroy = em_graph_destroy,
    .tensormap_encode = em_tensormap_encode,
};

rk_status rt_emu_open(rk_device *d, const rk_target *t, const rk_emu_options *opt) {
    d->info = (rk_device_info){0};
    emu_dev *e = rk_calloc(1, sizeof *e);
    if (!e) return rk_fail(RK_ERR_NOMEM, "out of memory opening the emulator");
    if (pthread_mutex_init(&e->lock, NULL) != 0) {
        rk_free(e, sizeof *e);
        return rk_fail(RK_ERR_DEVICE, "cannot create the emulator's lock");
    }
    if (!(e->emu = rk_emu_new(t, opt))) {
        pthread_mutex_destroy(&e->lock);
        rk_free(e, sizeof *e);
        return rt_fail_prefix(RK_ERR_DEVICE, "starting the emulator for %s", t->name);
    }
    rk_device_info *in = &d->info;
    in->kind = RK_DEVICE_EMU;
    in->sm_count = 1;
    in->warp_size = t->wave_size;
    in->max_threads_per_block = t->max_workgroup;
    in->smem_per_block = in->smem_per_block_optin = t->lds_bytes;
    in->smem_per_sm = t->lds_per_cu;
    snprintf(d->name, sizeof d->name, "rocke CPU emulator (%s)", t->name);
    snprintf(d->arch, sizeof d->arch, "%s", t->name);
    snprintf(d->target, sizeof d->target, "%s", t->name);
    snprintf(d->driver, sizeof d->driver, "rocke %s emulator (timing on the host clock)", RK_VERSION_STRING);
    d->impl = e;
    d->be = &emu_backend;
    return RK_OK;
}
