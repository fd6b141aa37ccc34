/* rocke — timing launches the way the device method asks: warm up, then time
 * every run between events on one stream (median, min, max, spread) and the
 * whole burst; optionally flush L2 before each run with a memset of twice its
 * size (kept outside the timed interval), or capture the runs once as a graph
 * and time its replays (for launch-bound kernels). On the emulator the events
 * read the host clock, and the result says so. Layer: runtime. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime_int.h"

const char *rk_clock_name(rk_clock c) {
    return c == RK_CLOCK_HOST_EMULATOR ? "host clock (emulator)" : "gpu events";
}

typedef struct timing {
    rk_device *dev;
    rk_stream *s, *own_stream;
    rk_event **ev;
    uint32_t nev, ev_cap;
    rk_devptr flush;
    size_t flush_bytes;
    rk_graph *graph;
    double *ms;
} timing;

static size_t flush_size(const rk_device *d) {
    const rk_device_info *in = &d->info;
    switch (in->kind) {
    case RK_DEVICE_EMU: return (size_t)1 << 20;   /* there is no cache: exercise the path only */
    case RK_DEVICE_HIP: {
        /* MI300-class chips put a 256 MiB last-level cache behind L2 */
        size_t l2 = 2 * in->l2_bytes;
        return l2 > ((size_t)512 << 20) ? l2 : (size_t)512 << 20;
    }
    case RK_DEVICE_CUDA: return in->l2_bytes ? 2 * in->l2_bytes : (size_t)256 << 20;
    }
    return (size_t)256 << 20;
}

static void cleanup(timing *t) {
    for (uint32_t i = 0; i < t->nev; i++) rk_event_destroy(t->ev[i]);
    rk_free(t->ev, t->ev_cap * sizeof *t->ev);
    rk_graph_destroy(t->graph);
    if (t->flush) rk_mem_free(t->dev, t->flush);
    rk_stream_destroy(t->own_stream);
}

static rk_status make_events(timing *t, uint32_t n) {
    t->ev = rk_calloc(n, sizeof *t->ev);
    if (!t->ev) return rk_fail(RK_ERR_NOMEM, "out of memory creating timing events");
    t->ev_cap = n;
    for (; t->nev < n; t->nev++) {
        rk_status s = rk_event_create(t->dev, &t->ev[t->nev]);
        if (s != RK_OK) return s;
    }
    return RK_OK;
}

static rk_status flush_l2(timing *t) {
    return t->flush ? rk_mem_memset(t->dev, t->flush, 0x5a, t->flush_bytes, t->s) : RK_OK;
}

/* Direct runs: without a flush the events form one chain e0 |run| e1 |run| e2 ...
 * so the burst is e0..eN; with one, each run has its own pair. */
static rk_status run_direct(timing *t, rk_work_fn fn, void *ud, uint32_t iters, double *burst) {
    bool pairs = t->flush != 0;
    rk_status s = make_events(t, pairs ? 2 * iters : iters + 1);
    if (s == RK_OK && !pairs) s = rk_event_record(t->ev[0], t->s);
    for (uint32_t i = 0; i < iters && s == RK_OK; i++) {
        rk_event *a = pairs ? t->ev[2 * i] : t->ev[i], *b = pairs ? t->ev[2 * i + 1] : t->ev[i + 1];
        if (pairs && (s = flush_l2(t)) == RK_OK) s = rk_event_record(a, t->s);
        if (s == RK_OK && (s = fn(ud, t->s)) != RK_OK) rt_fail_prefix(s, "timed run %u", i + 1);
        if (s == RK_OK) s = rk_event_record(b, t->s);
    }
    if (s == RK_OK) s = rk_stream_synchronize(t->dev, t->s);
    for (uint32_t i = 0; i < iters && s == RK_OK; i++)
        s = pairs ? rk_event_elapsed_ms(t->ev[2 * i], t->ev[2 * i + 1], &t->ms[i])
                  : rk_event_elapsed_ms(t->ev[i], t->ev[i + 1], &t->ms[i]);
    if (s == RK_OK && !pairs) {
        s = rk_event_elapsed_ms(t->ev[0], t->ev[iters], burst);
        *burst /= iters;
    }
    return s;
}

/* Graph runs: capture `iters` runs once, then time each replay. */
static rk_status run_graph(timing *t, rk_work_fn fn, void *ud, uint32_t iters, uint32_t replays, double *burst) {
    rk_status s = rk_graph_capture_begin(t->s);
    if (s != RK_OK) return s;
    for (uint32_t i = 0; i < iters && s == RK_OK; i++)
        if ((s = fn(ud, t->s)) != RK_OK) rt_fail_prefix(s, "captured run %u", i + 1);
    rk_status e = rk_graph_capture_end(t->s, &t->graph);
    if (s != RK_OK) return s;
    if (e != RK_OK) return e;
    /* one untimed replay: the first launch of a graph uploads it */
    if ((s = rk_graph_launch(t->graph, t->s)) != RK_OK || (s = rk_stream_synchronize(t->dev, t->s)) != RK_OK)
        return s;
    s = make_events(t, 2 * replays);
    for (uint32_t r = 0; r < replays && s == RK_OK; r++) {
        if ((s = flush_l2(t)) != RK_OK || (s = rk_event_record(t->ev[2 * r], t->s)) != RK_OK) break;
        if ((s = rk_graph_launch(t->graph, t->s)) == RK_OK) s = rk_event_record(t->ev[2 * r + 1], t->s);
    }
    if (s == RK_OK) s = rk_stream_synchronize(t->dev, t->s);
    for (uint32_t r = 0; r < replays && s == RK_OK; r++) {
        s = rk_event_elapsed_ms(t->ev[2 * r], t->ev[2 * r + 1], &t->ms[r]);
        t->ms[r] /= iters;
    }
    if (s == RK_OK && !t->flush) {
        s = rk_event_elapsed_ms(t->ev[0], t->ev[2 * replays - 1], burst);
        *burst /= (double)replays * iters;
    }
    return s;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts ms in place. */
static void summarise(double *v, uint32_t n, rk_time_result *r) {
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) sum += v[i];
    r->samples = n;
    r->min_ms = v[0];
    r->max_ms = v[n - 1];
    r->median_ms = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    r->mean_ms = sum / n;
    r->spread = r->median_ms > 0 ? (r->max_ms - r->min_ms) / r->median_ms : 0;
}

rk_status rk_time_launches(rk_device *dev, rk_work_fn fn, void *ud, const rk_time_opts *opts, rk_time_result *out) {
    if (!dev || !fn || !out) return rk_fail(RK_ERR_INVALID, "rk_time_launches: NULL device, work or result");
    *out = (rk_time_result){0};
    rk_time_opts o = opts ? *opts : (rk_time_opts){0};
    if (!o.warmup) o.warmup = 5;
    if (!o.iters) o.iters = 100;
    if (!o.replays) o.replays = 10;
    if (o.stream && o.stream->dev != dev)
        return rk_fail(RK_ERR_INVALID, "rk_time_launches: the stream belongs to another device");
    timing t = {.dev = dev, .s = o.stream};
    uint32_t samples = o.graph ? o.replays : o.iters;
    rk_status s = RK_OK;
    if (!(t.ms = rk_calloc(samples, sizeof *t.ms))) return rk_fail(RK_ERR_NOMEM, "out of memory for timings");
    /* capture needs a stream of its own, never the default one */
    if (!t.s && (s = rk_stream_create(dev, &t.own_stream)) == RK_OK) t.s = t.own_stream;
    if (s == RK_OK && o.flush_l2) {
        t.flush_bytes = flush_size(dev);
        if ((s = rk_mem_alloc(dev, t.flush_bytes, &t.flush)) != RK_OK)
            rt_fail_prefix(s, "allocating the %zu-byte L2 flush buffer", t.flush_bytes);
    }
    rk_no_fence_begin();
    for (uint32_t i = 0; i < o.warmup && s == RK_OK; i++)
        if ((s = fn(ud, t.s)) != RK_OK) rt_fail_prefix(s, "warm-up run %u", i + 1);
    if (s == RK_OK) s = rk_stream_synchronize(dev, t.s);
    double burst = 0;
    if (s == RK_OK)
        s = o.graph ? run_graph(&t, fn, ud, o.iters, o.replays, &burst) : run_direct(&t, fn, ud, o.iters, &burst);
    rk_no_fence_end();
    if (s == RK_OK) {
        summarise(t.ms, samples, out);
        out->clock = dev->info.kind == RK_DEVICE_EMU ? RK_CLOCK_HOST_EMULATOR : RK_CLOCK_GPU_EVENTS;
        out->runs_per_sample = o.graph ? o.iters : 1;
        out->burst_ms = t.flush ? out->mean_ms : burst;
        out->flushed = t.flush != 0;
        out->graph = o.graph;
    } else {
        /* leave the stream idle before its buffers go */
        rk_status keep = s;
        char msg[4096];
        snprintf(msg, sizeof msg, "%s", rk_error_message());
        rk_stream_synchronize(dev, t.s);
        rk_fail(keep, "%s", msg);
    }
    cleanup(&t);
    rk_free(t.ms, samples * sizeof *t.ms);
    return s;
}

/* ---- launcher closure ------------------------------------------------------------------------- */
typedef struct launcher_work {
    rk_launcher *l;
    rk_launch_config cfg;
    const rk_arg *args;
    uint32_t n;
} launcher_work;

static rk_status launcher_run(void *ud, rk_stream *s) {
    launcher_work *w = ud;
    w->cfg.stream = s;
    w->cfg.fence = false;
    return rk_launcher_call(w->l, &w->cfg, w->args, w->n);
}

rk_status rk_time_launcher(rk_launcher *l, const rk_launch_config *cfg, const rk_arg *args, uint32_t n,
                           const rk_time_opts *opts, rk_time_result *out) {
    if (!l || !cfg) return rk_fail(RK_ERR_INVALID, "rk_time_launcher: NULL launcher or config");
    launcher_work w = {l, *cfg, args, n};
    return rk_time_launches(rk_function_device(rk_launcher_function(l)), launcher_run, &w, opts, out);
}
