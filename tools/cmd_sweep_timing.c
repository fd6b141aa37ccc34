/* rocke sweep — an item's timed launches, as rk_time_launches times them
 * (warm-ups, a sync, then every run between events on one stream: e0 |run|
 * e1 |run| e2 ...), on a stream and events the worker makes once and keeps
 * for every item (creating and destroying ~200 events an item is host time
 * no kernel runs in). With --stable R the runs come in rounds of
 * --min-iters and stop once a round moves the median of all runs by at most
 * R, or at --iters: a stable kernel stops early, a noisy one runs them all;
 * the record says how many ran. Layer: tools. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_int.h"

void sw_timer_free(sw_timer *t) {
    for (uint32_t i = 0; i < t->nev; i++) rk_event_destroy(t->ev[i]);
    free(t->ev);
    free(t->ms);
    free(t->sorted);
    rk_stream_destroy(t->s);
    memset(t, 0, sizeof *t);
}

/* Room for n runs: n + 1 events, n times. */
static rk_status reserve(sw_timer *t, rk_device *dev, uint32_t n) {
    if (!t->s) {
        rk_status st = rk_stream_create(dev, &t->s);
        if (st) return st;
    }
    if (n + 1 > t->nev) {
        rk_event **ev = realloc(t->ev, (n + 1) * sizeof *ev);
        double *ms = realloc(t->ms, n * sizeof *ms), *so = ms ? realloc(t->sorted, n * sizeof *so) : NULL;
        if (ev) t->ev = ev;
        if (ms) t->ms = ms;
        if (so) t->sorted = so;
        if (!ev || !ms || !so) return rk_fail(RK_ERR_NOMEM, "out of memory for %u timed runs", n);
        for (; t->nev < n + 1; t->nev++) {
            rk_status st = rk_event_create(dev, &t->ev[t->nev]);
            if (st) return st;
        }
    }
    return RK_OK;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(sw_timer *t, uint32_t n) {
    memcpy(t->sorted, t->ms, n * sizeof *t->ms);
    qsort(t->sorted, n, sizeof *t->sorted, cmp_double);
    return n % 2 ? t->sorted[n / 2] : 0.5 * (t->sorted[n / 2 - 1] + t->sorted[n / 2]);
}

rk_status sw_time(sw_timer *t, rk_device *dev, rk_work_fn fn, void *ud, const sw_timing *o, sw_times *out) {
    memset(out, 0, sizeof *out);
    uint32_t max = o->iters ? o->iters : 1, round = o->stable > 0 && o->min_iters ? o->min_iters : max;
    if (round > max) round = max;
    rk_status st = reserve(t, dev, max);
    for (uint32_t i = 0; i < o->warmup && !st; i++) st = fn(ud, t->s);
    if (!st) st = rk_stream_synchronize(dev, t->s);
    uint32_t n = 0;
    double prev = 0, med = 0;
    while (!st && n < max) {
        uint32_t k = max - n < round ? max - n : round;
        st = rk_event_record(t->ev[0], t->s);
        for (uint32_t i = 0; i < k && !st; i++) {
            st = fn(ud, t->s);
            if (!st) st = rk_event_record(t->ev[i + 1], t->s);
        }
        if (!st) st = rk_stream_synchronize(dev, t->s);
        for (uint32_t i = 0; i < k && !st; i++) st = rk_event_elapsed_ms(t->ev[i], t->ev[i + 1], &t->ms[n + i]);
        if (st) break;
        n += k;
        out->rounds++;
        med = median_of(t, n);
        /* settled: another round left the median where it was */
        if (o->stable > 0 && out->rounds > 1 && fabs(med - prev) <= o->stable * prev) {
            out->settled = true;
            break;
        }
        prev = med;
    }
    if (st) {
        rk_stream_synchronize(dev, t->s);   /* leave the stream idle: the buffers are the caller's */
        return st;
    }
    out->samples = n;
    out->median_ms = med;
    out->min_ms = t->sorted[0];
    for (uint32_t i = 0; i < n; i++) out->sum_ms += t->ms[i];
    out->mean_ms = out->sum_ms / n;
    return RK_OK;
}
