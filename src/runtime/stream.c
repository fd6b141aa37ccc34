/* rocke — streams, events and graph capture: argument checks and object
 * lifetimes; the work itself is the backend's. Layer: runtime. */
#include "runtime_int.h"

/* ---- streams ---------------------------------------------------------------- */
rk_status rk_stream_create(rk_device *d, rk_stream **out) {
    if (!d || !out) return rk_fail(RK_ERR_INVALID, "rk_stream_create: NULL device or out");
    *out = NULL;
    rk_stream *s = rk_calloc(1, sizeof *s);
    if (!s) return rk_fail(RK_ERR_NOMEM, "out of memory creating a stream");
    rt_list_init(&s->link);
    s->dev = d;
    rk_status st = d->be->stream_create(s);
    if (st != RK_OK) {
        rk_free(s, sizeof *s);
        return st;
    }
    rt_list_add(&d->streams, &s->link);
    *out = s;
    return RK_OK;
}

void rk_stream_destroy(rk_stream *s) {
    if (!s) return;
    if (s->capturing) {
        /* end an abandoned capture so the driver releases it */
        rk_graph *g = NULL;
        if (rk_graph_capture_end(s, &g) == RK_OK) rk_graph_destroy(g);
    }
    s->dev->be->stream_destroy(s);
    rt_list_del(&s->link);
    rk_free(s, sizeof *s);
}

rk_status rk_stream_synchronize(rk_device *d, rk_stream *s) {
    if (!d) return rk_fail(RK_ERR_INVALID, "rk_stream_synchronize: device is NULL");
    if (s && s->dev != d) return rk_fail(RK_ERR_INVALID, "rk_stream_synchronize: the stream belongs to another device");
    if (s && s->capturing) return rk_fail(RK_ERR_INVALID, "rk_stream_synchronize: the stream is capturing a graph");
    return d->be->stream_sync(d, s);
}

/* ---- events ------------------------------------------------------------------ */
rk_status rk_event_create(rk_device *d, rk_event **out) {
    if (!d || !out) return rk_fail(RK_ERR_INVALID, "rk_event_create: NULL device or out");
    *out = NULL;
    rk_event *e = rk_calloc(1, sizeof *e);
    if (!e) return rk_fail(RK_ERR_NOMEM, "out of memory creating an event");
    rt_list_init(&e->link);
    e->dev = d;
    rk_status st = d->be->event_create(e);
    if (st != RK_OK) {
        rk_free(e, sizeof *e);
        return st;
    }
    rt_list_add(&d->events, &e->link);
    *out = e;
    return RK_OK;
}

void rk_event_destroy(rk_event *e) {
    if (!e) return;
    e->dev->be->event_destroy(e);
    rt_list_del(&e->link);
    rk_free(e, sizeof *e);
}

rk_status rk_event_record(rk_event *e, rk_stream *s) {
    if (!e) return rk_fail(RK_ERR_INVALID, "rk_event_record: event is NULL");
    if (s && s->dev != e->dev) return rk_fail(RK_ERR_INVALID, "rk_event_record: the stream belongs to another device");
    rk_status st = e->dev->be->event_record(e, s);
    if (st == RK_OK) e->recorded = true;
    return st;
}

static rk_status need_recorded(const rk_event *e, const char *who) {
    if (!e) return rk_fail(RK_ERR_INVALID, "%s: event is NULL", who);
    if (!e->recorded) return rk_fail(RK_ERR_INVALID, "%s: the event was never recorded", who);
    return RK_OK;
}

rk_status rk_event_synchronize(rk_event *e) {
    rk_status st = need_recorded(e, "rk_event_synchronize");
    return st != RK_OK ? st : e->dev->be->event_sync(e);
}

rk_status rk_event_query(rk_event *e, bool *done) {
    rk_status st = need_recorded(e, "rk_event_query");
    if (st != RK_OK) return st;
    if (!done) return rk_fail(RK_ERR_INVALID, "rk_event_query: done is NULL");
    return e->dev->be->event_query(e, done);
}

rk_status rk_event_elapsed_ms(rk_event *a, rk_event *b, double *ms) {
    rk_status st = need_recorded(a, "rk_event_elapsed_ms (start)");
    if (st == RK_OK) st = need_recorded(b, "rk_event_elapsed_ms (end)");
    if (st != RK_OK) return st;
    if (!ms) return rk_fail(RK_ERR_INVALID, "rk_event_elapsed_ms: ms is NULL");
    if (a->dev != b->dev) return rk_fail(RK_ERR_INVALID, "rk_event_elapsed_ms: the events belong to different devices");
    return a->dev->be->event_elapsed(a, b, ms);
}

/* ---- graphs --------------------------------------------------------------------- */
rk_status rk_graph_capture_begin(rk_stream *s) {
    if (!s) return rk_fail(RK_ERR_INVALID, "rk_graph_capture_begin: capture needs a stream from rk_stream_create, "
                           "not the default stream");
    if (s->capturing) return rk_fail(RK_ERR_INVALID, "rk_graph_capture_begin: the stream is already capturing");
    rk_status st = s->dev->be->capture_begin(s);
    if (st == RK_OK) s->capturing = true;
    return st;
}

rk_status rk_graph_capture_end(rk_stream *s, rk_graph **out) {
    if (!s || !out) return rk_fail(RK_ERR_INVALID, "rk_graph_capture_end: NULL stream or out");
    *out = NULL;
    if (!s->capturing) return rk_fail(RK_ERR_INVALID, "rk_graph_capture_end: the stream is not capturing");
    rk_graph *g = rk_calloc(1, sizeof *g);
    s->capturing = false;
    if (!g) {
        /* still end the capture so the stream is usable again */
        rk_graph tmp = {.dev = s->dev};
        if (s->dev->be->capture_end(s, &tmp) == RK_OK) s->dev->be->graph_destroy(&tmp);
        return rk_fail(RK_ERR_NOMEM, "out of memory ending a graph capture");
    }
    rt_list_init(&g->link);
    g->dev = s->dev;
    rk_status st = s->dev->be->capture_end(s, g);
    if (st != RK_OK) {
        rk_free(g, sizeof *g);
        return st;
    }
    rt_list_add(&s->dev->graphs, &g->link);
    *out = g;
    return RK_OK;
}

rk_status rk_graph_launch(rk_graph *g, rk_stream *s) {
    if (!g) return rk_fail(RK_ERR_INVALID, "rk_graph_launch: graph is NULL");
    if (s && s->dev != g->dev) return rk_fail(RK_ERR_INVALID, "rk_graph_launch: the stream belongs to another device");
    if (s && s->capturing) return rk_fail(RK_ERR_INVALID, "rk_graph_launch: the stream is capturing");
    return g->dev->be->graph_launch(g, s);
}

void rk_graph_destroy(rk_graph *g) {
    if (!g) return;
    g->dev->be->graph_destroy(g);
    rt_list_del(&g->link);
    rk_free(g, sizeof *g);
}
