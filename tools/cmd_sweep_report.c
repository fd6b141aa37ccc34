/* rocke sweep report — a sweep folder summarised: the best verified config
 * per shape as a table (stdout), SVG plots (a roofline of every achieved
 * point under the measured copy bandwidth; time against each of the knobs
 * that matter most) in DIR/plots/, and DIR/report.html holding the table and
 * the plots inline (no scripts, nothing fetched). Layer: tools. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_int.h"

enum { W = 640, H = 400, L = 70, R = 20, T = 40, B = 60, MAX_SHAPES = 64, MAX_VALS = 64 };
static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

static void esc(rk_buf *b, const char *s) {
    for (; *s; s++) {
        if (*s == '<') rk_buf_puts(b, "&lt;");
        else if (*s == '>') rk_buf_puts(b, "&gt;");
        else if (*s == '&') rk_buf_puts(b, "&amp;");
        else if (*s == '"') rk_buf_puts(b, "&quot;");
        else rk_buf_putc(b, *s);
    }
}

/* A log-log or categorical-linear frame. */
typedef struct frame { double x0, x1, y0, y1; bool logx, logy; } frame;
static double fx(const frame *f, double x) {
    double a = f->logx ? log10(x) : x, lo = f->logx ? log10(f->x0) : f->x0, hi = f->logx ? log10(f->x1) : f->x1;
    return L + (hi > lo ? (a - lo) / (hi - lo) : 0.5) * (W - L - R);
}
static double fy(const frame *f, double y) {
    double a = f->logy ? log10(y) : y, lo = f->logy ? log10(f->y0) : f->y0, hi = f->logy ? log10(f->y1) : f->y1;
    return H - B - (hi > lo ? (a - lo) / (hi - lo) : 0.5) * (H - T - B);
}

static void svg_open(rk_buf *b, const char *title, const char *xlabel, const char *ylabel) {
    rk_buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
                  W, H, W, H, W, H);
    rk_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", L, T,
                  W - L - R, H - T - B);
    rk_buf_printf(b, "<text x=\"%d\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">", W / 2);
    esc(b, title);
    rk_buf_printf(b, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (W + L - R) / 2, H - 15);
    esc(b, xlabel);
    rk_buf_printf(b, "</text>\n<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">",
                  (H + T - B) / 2);
    esc(b, ylabel);
    rk_buf_puts(b, "</text>\n");
}

/* Decade ticks of a log axis. */
static void log_ticks(rk_buf *b, const frame *f, bool xaxis) {
    double lo = xaxis ? f->x0 : f->y0, hi = xaxis ? f->x1 : f->y1;
    for (double p = pow(10, floor(log10(lo))); p <= hi * 1.0001; p *= 10) {
        if (p < lo * 0.9999) continue;
        if (xaxis)
            rk_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", fx(f, p), H - B + 16, p);
        else
            rk_buf_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 4, fy(f, p) + 4, p);
    }
}

static void widen(double *lo, double *hi) {
    if (!(*lo > 0)) *lo = 1e-6;
    if (*hi <= *lo) *hi = *lo * 10;
    *lo = pow(10, floor(log10(*lo)));
    *hi = pow(10, ceil(log10(*hi)));
    if (*hi <= *lo) *hi = *lo * 10;
}

static bool ok_record(const rk_json *x) {
    const rk_json *v = rk_json_get(x, "verified");
    return v && v->b && !strcmp(sw_str(x, "status"), "ok") && sw_num(x, "ms", 0) > 0;
}

static uint32_t shape_index(char shapes[][128], uint32_t ns, const rk_json *x) {
    for (uint32_t i = 0; i < ns; i++)
        if (!strcmp(shapes[i], sw_str(x, "shape_text"))) return i;
    return 0;
}

static void legend(rk_buf *b, char shapes[][128], uint32_t ns) {
    for (uint32_t s = 0; s < ns && s < 10; s++) {
        rk_buf_printf(b, "<circle cx=\"%d\" cy=\"%u\" r=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%u\">", W - R - 110,
                      T + 12 + 14 * s, colors[s % 10], W - R - 100, T + 16 + 14 * s);
        esc(b, shapes[s]);
        rk_buf_puts(b, "</text>\n");
    }
}

/* A verified record's roofline point: (flop/byte, GFLOP/s), or without flops (bytes, GB/s). */
static bool point_of(const rk_json *x, bool flops, double *px, double *py) {
    if (!ok_record(x)) return false;
    double bytes = sw_num(x, "bytes", 1), ms = sw_num(x, "ms", 1), fl = sw_num(x, "flops", 0);
    *px = flops ? fl / bytes : bytes;
    *py = flops ? fl / 1e6 / ms : sw_num(x, "gbps", 0);
    return *px > 0 && *py > 0;
}

/* Roofline: achieved GFLOP/s over arithmetic intensity, under the copy
 * bandwidth; families without flops plot GB/s over bytes moved. */
static void roofline(rk_buf *b, const sw_records *r, char shapes[][128], uint32_t ns, const rk_json **best) {
    bool flops = false;
    double copy = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        flops |= ok_record(r->r[i]) && sw_num(r->r[i], "flops", 0) > 0;
        if (sw_num(r->r[i], "copy_gbps", 0) > copy) copy = sw_num(r->r[i], "copy_gbps", 0);
    }
    frame f = {.x0 = INFINITY, .x1 = 0, .y0 = INFINITY, .y1 = 0, .logx = true, .logy = true};
    for (uint32_t i = 0; i < r->n; i++) {
        const rk_json *x = r->r[i];
        double px, py;
        if (!point_of(x, flops, &px, &py)) continue;
        f.x0 = fmin(f.x0, px), f.x1 = fmax(f.x1, px), f.y0 = fmin(f.y0, py), f.y1 = fmax(f.y1, py);
    }
    if (copy > 0) f.y1 = fmax(f.y1, flops ? copy * f.x1 : copy);
    widen(&f.y0, &f.y1);
    /* the roof enters from the bottom edge: the whole diagonal is in view */
    if (copy > 0 && flops) f.x0 = fmin(f.x0, f.y0 / copy);
    widen(&f.x0, &f.x1);
    svg_open(b, flops ? "Roofline: achieved points under the copy bandwidth" : "Bandwidth: achieved points under copy",
             flops ? "arithmetic intensity (flop/byte)" : "bytes moved",
             flops ? "GFLOP/s" : "GB/s");
    log_ticks(b, &f, true);
    log_ticks(b, &f, false);
    if (copy > 0) {
        /* y = copy * x (GB/s x flop/byte = GFLOP/s), clipped to the frame */
        double xa = f.x0, xb = f.x1, ya = flops ? copy * xa : copy, yb = flops ? copy * xb : copy;
        if (ya < f.y0) { xa = f.y0 / copy; ya = f.y0; }
        if (yb > f.y1) { xb = f.y1 / copy; yb = f.y1; }
        rk_buf_printf(b, "<line class=\"roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                      "stroke-width=\"2\" stroke-dasharray=\"6 3\"/>\n", fx(&f, xa), fy(&f, ya), fx(&f, xb), fy(&f, yb));
        rk_buf_printf(b, "<text x=\"%d\" y=\"%d\" fill=\"#666\">copy %.4g GB/s (the yardstick)</text>\n", L + 6, T + 14,
                      copy);
    }
    for (uint32_t i = 0; i < r->n; i++) {
        const rk_json *x = r->r[i];
        double px, py;
        if (!point_of(x, flops, &px, &py)) continue;
        uint32_t s = shape_index(shapes, ns, x);
        bool top = best[s] == x;
        rk_buf_printf(b, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" fill-opacity=\"%s\" "
                      "stroke=\"%s\"><title>", fx(&f, px), fy(&f, py), top ? 6 : 4, colors[s % 10],
                      top ? "1" : "0.45", top ? "black" : "none");
        esc(b, sw_str(x, "key"));
        rk_buf_puts(b, "</title></circle>\n");
    }
    legend(b, shapes, ns);
    rk_buf_puts(b, "</svg>\n");
}

typedef struct knob_effect { const char *name; double score; } knob_effect;
static int by_score(const void *a, const void *b) {
    double d = ((const knob_effect *)b)->score - ((const knob_effect *)a)->score;
    return d > 0 ? 1 : d < 0 ? -1 : strcmp(((const knob_effect *)a)->name, ((const knob_effect *)b)->name);
}

/* The values knob takes in the records (numbers sorted, else first seen). */
static uint32_t knob_values(const sw_records *r, const char *knob, const char **vals) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        const char *v = sw_str(rk_json_get(r->r[i], "config"), knob);
        uint32_t j = 0;
        while (j < n && strcmp(vals[j], v)) j++;
        if (j == n && n < MAX_VALS && *v) vals[n++] = v;
    }
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && atof(vals[j - 1]) > atof(vals[j]); j--) {
            const char *t = vals[j];
            vals[j] = vals[j - 1];
            vals[j - 1] = t;
        }
    return n;
}

/* best[s][v]: the fastest time at shape s with knob = value v (0: none). */
static void knob_best(const sw_records *r, const char *knob, const char **vals, uint32_t nv, char shapes[][128],
                      uint32_t ns, double best[][MAX_VALS]) {
    for (uint32_t s = 0; s < ns; s++)
        for (uint32_t v = 0; v < nv; v++) best[s][v] = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        const rk_json *x = r->r[i];
        if (!ok_record(x)) continue;
        const char *val = sw_str(rk_json_get(x, "config"), knob);
        uint32_t s = shape_index(shapes, ns, x), v = 0;
        while (v < nv && strcmp(vals[v], val)) v++;
        double ms = sw_num(x, "ms", 0);
        if (v < nv && (!best[s][v] || ms < best[s][v])) best[s][v] = ms;
    }
}

/* How much a knob matters: the mean over shapes of ln(slowest best / fastest best). */
static double knob_score(double best[][MAX_VALS], uint32_t nv, uint32_t ns) {
    double sum = 0;
    uint32_t n = 0;
    for (uint32_t s = 0; s < ns; s++) {
        double lo = INFINITY, hi = 0;
        for (uint32_t v = 0; v < nv; v++)
            if (best[s][v] > 0) lo = fmin(lo, best[s][v]), hi = fmax(hi, best[s][v]);
        if (hi > 0) { sum += log(hi / lo); n++; }
    }
    return n ? sum / n : 0;
}

static void knob_plot(rk_buf *b, const char *knob, const char **vals, uint32_t nv, char shapes[][128], uint32_t ns,
                      double best[][MAX_VALS]) {
    frame f = {.x0 = -0.5, .x1 = nv - 0.5, .y0 = INFINITY, .y1 = 0, .logy = true};
    for (uint32_t s = 0; s < ns; s++)
        for (uint32_t v = 0; v < nv; v++)
            if (best[s][v] > 0) f.y0 = fmin(f.y0, best[s][v]), f.y1 = fmax(f.y1, best[s][v]);
    widen(&f.y0, &f.y1);
    char title[160];
    snprintf(title, sizeof title, "time against %s (the best over the other knobs)", knob);
    svg_open(b, title, knob, "ms");
    log_ticks(b, &f, false);
    for (uint32_t v = 0; v < nv; v++) {
        rk_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", fx(&f, v), H - B + 16);
        esc(b, vals[v]);
        rk_buf_puts(b, "</text>\n");
    }
    for (uint32_t s = 0; s < ns; s++) {
        rk_buf_printf(b, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                      colors[s % 10]);
        for (uint32_t v = 0; v < nv; v++)
            if (best[s][v] > 0) rk_buf_printf(b, "%.1f,%.1f ", fx(&f, v), fy(&f, best[s][v]));
        rk_buf_puts(b, "\"/>\n");
        for (uint32_t v = 0; v < nv; v++)
            if (best[s][v] > 0)
                rk_buf_printf(b, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>%s=%s: "
                              "%.4g ms</title></circle>\n", fx(&f, v), fy(&f, best[s][v]), colors[s % 10], knob,
                              vals[v], best[s][v]);
    }
    legend(b, shapes, ns);
    rk_buf_puts(b, "</svg>\n");
}

static void table(rk_buf *txt, rk_buf *html, char shapes[][128], uint32_t ns, const rk_json **best,
                  const sw_records *r) {
    rk_buf_printf(txt, "%-16s %-10s %-10s %-10s %-8s %-5s %-7s %s\n", "shape", "ms", "GB/s", "of copy", "TFLOP/s",
                  "regs", "ok/all", "config  (kernel)");
    rk_buf_puts(html, "<table>\n<tr><th>shape</th><th>ms</th><th>GB/s</th><th>of copy</th><th>TFLOP/s</th>"
                      "<th>registers</th><th>ok / all</th><th>config</th><th>kernel</th></tr>\n");
    for (uint32_t s = 0; s < ns; s++) {
        uint32_t ok = 0, all = 0;
        for (uint32_t i = 0; i < r->n; i++)
            if (!strcmp(sw_str(r->r[i], "shape_text"), shapes[s])) { all++; ok += ok_record(r->r[i]); }
        const rk_json *x = best[s];
        char cfg[512] = "";
        const char *key = x ? sw_str(x, "key") : "";
        snprintf(cfg, sizeof cfg, "%.*s", (int)(strchr(key, '@') ? strchr(key, '@') - key : (long)strlen(key)), key);
        if (!x) {
            rk_buf_printf(txt, "%-16s no verified config (%u measured)\n", shapes[s], all);
            rk_buf_puts(html, "<tr><td>");
            esc(html, shapes[s]);
            rk_buf_printf(html, "</td><td colspan=\"8\">no verified config (%u measured)</td></tr>\n", all);
            continue;
        }
        char ok_all[32];
        snprintf(ok_all, sizeof ok_all, "%u/%u", ok, all);
        rk_buf_printf(txt, "%-16s %-10.4g %-10.4g %-10.3g %-8.3g %-5.0f %-7s %s  (%s)\n", shapes[s], sw_num(x, "ms", 0),
                      sw_num(x, "gbps", 0), sw_num(x, "of_copy", 0), sw_num(x, "tflops", 0),
                      sw_num(x, "registers", -1), ok_all, cfg, sw_str(x, "kernel"));
        rk_buf_puts(html, "<tr><td>");
        esc(html, shapes[s]);
        rk_buf_printf(html, "</td><td>%.4g</td><td>%.4g</td><td>%.3g</td><td>%.3g</td><td>%.0f</td><td>%s</td><td>",
                      sw_num(x, "ms", 0), sw_num(x, "gbps", 0), sw_num(x, "of_copy", 0), sw_num(x, "tflops", 0),
                      sw_num(x, "registers", -1), ok_all);
        esc(html, cfg);
        rk_buf_puts(html, "</td><td><code>");
        esc(html, sw_str(x, "kernel"));
        rk_buf_puts(html, "</code></td></tr>\n");
    }
    rk_buf_puts(html, "</table>\n");
}

static bool write_buf(const char *dir, const char *name, const rk_buf *b) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!b->oom && !rk_write_file_atomic(path, b->data ? b->data : "", b->len)) return true;
    fprintf(stderr, "rocke sweep report: %s\n", b->oom ? "out of memory" : rk_error_message());
    return false;
}

int sw_report(int argc, char **argv) {
    const char *dir = NULL;
    uint32_t top = 3;
    cli_opt opts[] = {
        {.name = "--top", .kind = CLI_U32, .dst = &top, .meta = "N", .ranged = true, .lo = 0, .hi = SW_MAX_KNOBS,
         .def = "3", .help = "plots of time against the N knobs that change it most"},
        {0},
    };
    cli_cmd c = {.name = "sweep report", .args = "DIR",
                 .about = "Print the best verified config per shape of the sweep in DIR, write SVG plots to\n"
                          "DIR/plots/ (roofline.svg, knob_NAME.svg) and DIR/report.html (self-contained).",
                 .opts = opts, .pos = &dir, .min_pos = 1, .max_pos = 1};
    int prc = cli_parse(&c, argc, argv, 2);
    if (prc >= 0) return prc;
    char path[4200];
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    sw_records r = {0};
    if (!sw_records_load("sweep report", path, &r)) return 1;
    if (!r.n) {
        fprintf(stderr, "rocke sweep report: %s holds no records (run rocke sweep ... -o %s first)\n", path, dir);
        sw_records_free(&r);
        return 1;
    }
    static char shapes[MAX_SHAPES][128];
    static double best_v[MAX_SHAPES][MAX_VALS];
    const rk_json *best[MAX_SHAPES];
    uint32_t ns = sw_best_per_shape(&r, best, shapes, MAX_SHAPES);
    rk_buf txt, html, svg;
    rk_buf_init(&txt);
    rk_buf_init(&html);
    rk_buf_init(&svg);
    const rk_json *first = r.r[0];
    rk_buf_puts(&html, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rocke sweep: ");
    esc(&html, sw_str(first, "family"));
    rk_buf_puts(&html, "</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
                       "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}svg{margin:1em 1em 0 0}"
                       "</style></head><body>\n<h1>rocke sweep: ");
    esc(&html, sw_str(first, "family"));
    rk_buf_puts(&html, " on ");
    esc(&html, sw_str(first, "target"));
    rk_buf_printf(&html, "</h1>\n<p>%u records, device ", r.n);
    esc(&html, sw_str(first, "device"));
    rk_buf_puts(&html, ". The best verified config per shape:</p>\n");
    table(&txt, &html, shapes, ns, best, &r);
    fputs(rk_buf_cstr(&txt), stdout);
    snprintf(path, sizeof path, "%s/plots", dir);
    bool ok = !cli_mkdirs(path);
    roofline(&svg, &r, shapes, ns, best);
    ok = ok && write_buf(path, "roofline.svg", &svg);
    rk_buf_puts(&html, "<h2>Roofline</h2>\n");
    rk_buf_putn(&html, svg.data, svg.len);
    /* the knobs that change the time most, each against time */
    knob_effect eff[SW_MAX_KNOBS];
    uint32_t ne = 0;
    const rk_json *cfg = rk_json_get(first, "config");
    static const char *vals[MAX_VALS];
    for (uint32_t k = 0; cfg && k < cfg->n && ne < SW_MAX_KNOBS; k++) {
        uint32_t nv = knob_values(&r, cfg->keys[k], vals);
        knob_best(&r, cfg->keys[k], vals, nv, shapes, ns, best_v);
        eff[ne++] = (knob_effect){cfg->keys[k], knob_score(best_v, nv, ns)};
    }
    qsort(eff, ne, sizeof eff[0], by_score);
    if (ne) rk_buf_puts(&html, "<h2>Time against the knobs that matter most</h2>\n");
    for (uint32_t k = 0; k < ne && k < top && ok; k++) {
        uint32_t nv = knob_values(&r, eff[k].name, vals);
        knob_best(&r, eff[k].name, vals, nv, shapes, ns, best_v);
        rk_buf_reset(&svg);
        knob_plot(&svg, eff[k].name, vals, nv, shapes, ns, best_v);
        char name[128];
        snprintf(name, sizeof name, "knob_%s.svg", eff[k].name);
        ok = write_buf(path, name, &svg);
        rk_buf_putn(&html, svg.data, svg.len);
        printf("knob %-18s effect %.3g (mean ln(slowest/fastest) over shapes)\n", eff[k].name, eff[k].score);
    }
    rk_buf_puts(&html, "</body></html>\n");
    ok = ok && write_buf(dir, "report.html", &html);
    if (ok) printf("rocke sweep report: %s/report.html, %s/roofline.svg\n", dir, path);
    rk_buf_free(&txt);
    rk_buf_free(&html);
    rk_buf_free(&svg);
    sw_records_free(&r);
    return ok ? 0 : 1;
}
