/* rocke sweep — results: DIR/results.jsonl (one record a line, appended as
 * each item ends, read back to resume: a line that is not a record is
 * skipped with a warning naming it), DIR/results.csv, the sweep manifest
 * DIR/sweep.json and `rocke sweep merge` of Slurm shards. Layer: tools. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sweep_int.h"

double sw_num(const rk_json *j, const char *key, double def) {
    const rk_json *v = rk_json_get(j, key);
    return v && v->kind == RK_JSON_NUMBER ? v->num : def;
}

const char *sw_str(const rk_json *j, const char *key) {
    const rk_json *v = rk_json_get(j, key);
    return v && v->kind == RK_JSON_STRING ? v->str : "";
}

static bool push(sw_records *r, rk_json *j) {
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? 2 * r->cap : 64;
        rk_json **nr = realloc(r->r, cap * sizeof *nr);
        if (!nr) { rk_json_free(j); return false; }
        r->r = nr;
        r->cap = cap;
    }
    r->r[r->n++] = j;
    return true;
}

void sw_records_free(sw_records *r) {
    for (uint32_t i = 0; i < r->n; i++) rk_json_free(r->r[i]);
    free(r->r);
    *r = (sw_records){0};
}

const rk_json *sw_records_find(const sw_records *r, const char *key) {
    for (uint32_t i = r->n; i-- > 0;)
        if (!strcmp(sw_str(r->r[i], "key"), key)) return r->r[i];
    return NULL;
}

bool sw_records_load(const char *cmd, const char *path, sw_records *out) {
    char *text = NULL;
    size_t n = 0;
    if (access(path, F_OK)) return true;   /* a new sweep */
    if (rk_read_file(path, &text, &n)) {
        fprintf(stderr, "rocke %s: %s\n", cmd, rk_error_message());
        return false;
    }
    uint32_t line = 0;
    bool ok = true;
    for (char *p = text; ok && p < text + n;) {
        char *nl = memchr(p, '\n', (size_t)(text + n - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(text + n - p);
        line++;
        if (len) {
            rk_json *j = rk_json_parse(p, len);
            if (!j || j->kind != RK_JSON_OBJECT || !*sw_str(j, "key") || !*sw_str(j, "status")) {
                fprintf(stderr, "rocke %s: warning: %s:%u: not a sweep record (%s), skipped\n", cmd, path, line,
                        j ? "no key or status" : rk_error_message());
                rk_json_free(j);
                out->skipped++;
            } else {
                ok = push(out, j);
            }
        }
        p += len + 1;
    }
    rk_free(text, n + 1);
    return ok;
}

static bool lines_of(const sw_records *r, rk_buf *b) {
    for (uint32_t i = 0; i < r->n; i++) {
        char *text = rk_json_write(r->r[i], false);
        if (!text) return false;
        rk_buf_printf(b, "%s\n", text);
        rk_string_free(text);
    }
    return !b->oom;
}

bool sw_records_rewrite(const char *cmd, const char *path, const sw_records *r) {
    rk_buf b;
    rk_buf_init(&b);
    bool ok = lines_of(r, &b) && !rk_write_file_atomic(path, b.data ? b.data : "", b.len);
    if (!ok) fprintf(stderr, "rocke %s: cannot write %s: %s\n", cmd, path, rk_error_message());
    rk_buf_free(&b);
    return ok;
}

bool sw_append_line(const char *cmd, const char *path, const char *line) {
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    size_t n = strlen(line);
    char *buf = malloc(n + 1);
    bool ok = fd >= 0 && buf;
    if (ok) {
        memcpy(buf, line, n);
        buf[n] = '\n';
        ok = write(fd, buf, n + 1) == (ssize_t)(n + 1);   /* one write: a whole line or (killed) a torn tail */
    }
    if (!ok) fprintf(stderr, "rocke %s: cannot append to %s: %s\n", cmd, path, strerror(errno));
    free(buf);
    if (fd >= 0) close(fd);
    return ok;
}

static void csv_field(rk_buf *b, const char *s) {
    if (!strpbrk(s, ",\"\n")) { rk_buf_puts(b, s); return; }
    rk_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"') rk_buf_putc(b, '"');
        rk_buf_putc(b, *s);
    }
    rk_buf_putc(b, '"');
}

bool sw_write_csv(const char *cmd, const char *dir, const sw_records *r) {
    /* the config columns: every swept knob, in the order first seen */
    const char *cols[SW_MAX_KNOBS];
    uint32_t nc = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        const rk_json *c = rk_json_get(r->r[i], "config");
        for (uint32_t k = 0; c && k < c->n; k++) {
            uint32_t j = 0;
            while (j < nc && strcmp(cols[j], c->keys[k])) j++;
            if (j == nc && nc < SW_MAX_KNOBS) cols[nc++] = c->keys[k];
        }
    }
    static const char *const num[] = {"registers", "spills", "ms", "tflops", "gbps", "copy_gbps", "of_copy",
                                      "build_ms"};
    rk_buf b;
    rk_buf_init(&b);
    rk_buf_puts(&b, "key,kernel,shape");
    for (uint32_t j = 0; j < nc; j++) rk_buf_printf(&b, ",%s", cols[j]);
    rk_buf_puts(&b, ",status,verified");
    for (uint32_t j = 0; j < RK_COUNTOF(num); j++) rk_buf_printf(&b, ",%s", num[j]);
    rk_buf_puts(&b, ",device,worker,error\n");
    for (uint32_t i = 0; i < r->n; i++) {
        const rk_json *x = r->r[i], *c = rk_json_get(x, "config"), *v = rk_json_get(x, "verified");
        csv_field(&b, sw_str(x, "key"));
        rk_buf_putc(&b, ',');
        csv_field(&b, sw_str(x, "kernel"));
        rk_buf_putc(&b, ',');
        csv_field(&b, sw_str(x, "shape_text"));
        for (uint32_t j = 0; j < nc; j++) {
            rk_buf_putc(&b, ',');
            csv_field(&b, sw_str(c, cols[j]));
        }
        rk_buf_printf(&b, ",%s,%s", sw_str(x, "status"), v && v->b ? "true" : "false");
        for (uint32_t j = 0; j < RK_COUNTOF(num); j++) {
            const rk_json *nv = rk_json_get(x, num[j]);
            if (nv && nv->kind == RK_JSON_NUMBER) rk_buf_printf(&b, ",%.6g", nv->num);
            else rk_buf_putc(&b, ',');
        }
        rk_buf_putc(&b, ',');
        csv_field(&b, sw_str(x, "device"));
        rk_buf_printf(&b, ",%.0f,", sw_num(x, "worker", -1));
        csv_field(&b, sw_str(x, "error"));
        rk_buf_putc(&b, '\n');
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    bool ok = !b.oom && !rk_write_file_atomic(path, b.data, b.len);
    if (!ok) fprintf(stderr, "rocke %s: %s\n", cmd, b.oom ? "out of memory" : rk_error_message());
    rk_buf_free(&b);
    return ok;
}

static rk_json *summary(const sw_records *r) {
    uint32_t ok = 0, wrong = 0, failed = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        const char *s = sw_str(r->r[i], "status");
        ok += !strcmp(s, "ok");
        wrong += !strcmp(s, "wrong");
        failed += strcmp(s, "ok") && strcmp(s, "wrong");
    }
    rk_json *j = rk_json_object();
    rk_json_set(j, "records", rk_json_int(r->n));
    rk_json_set(j, "ok", rk_json_int(ok));
    rk_json_set(j, "wrong", rk_json_int(wrong));
    rk_json_set(j, "failed", rk_json_int(failed));
    return j;
}

static bool write_json(const char *cmd, const char *dir, const char *name, const rk_json *j) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = rk_json_write(j, true);
    bool ok = text && !rk_write_file_atomic(path, text, strlen(text));
    if (!ok) fprintf(stderr, "rocke %s: %s\n", cmd, rk_error_message());
    rk_string_free(text);
    return ok;
}

bool sw_write_manifest(const sw_opts *o, const sw_space *sp, const sw_records *r, const char *devices) {
    rk_json *m = rk_json_object(), *argv = rk_json_array(), *fixed = rk_json_object(), *knobs = rk_json_object();
    rk_json *shapes = rk_json_array(), *pruned = rk_json_object(), *rules = rk_json_array();
    char date[32], v[256];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    rk_json_set(m, "format", rk_json_str("rocke.sweep/v1"));
    rk_json_set(m, "family", rk_json_str(rk_family_name(o->fam)));
    rk_json_set(m, "target", rk_json_str(o->t->name));
    rk_json_set(m, "rocke_version", rk_json_str(RK_VERSION_STRING));
    rk_json_set(m, "date", rk_json_str(date));
    for (int i = 0; i < o->argc; i++) rk_json_push(argv, rk_json_str(o->argv[i]));
    rk_json_set(m, "command", argv);
    rk_json_set(m, "devices", rk_json_str(devices));
    rk_json_set(m, "jobs", rk_json_int(o->jobs));
    if (o->t0 > 0) {   /* where this run's wall time went: before the build phase, in it, in the run phase */
        rk_json *ph = rk_json_object();
        rk_json_set(ph, "setup", rk_json_num(o->setup_s));
        rk_json_set(ph, "build", rk_json_num(o->build_s));
        rk_json_set(ph, "run", rk_json_num(o->run_s));
        rk_json_set(m, "seconds", ph);
    }
    if (o->shard_n) {
        snprintf(v, sizeof v, "%u/%u", o->shard_i, o->shard_n);
        rk_json_set(m, "shard", rk_json_str(v));
    }
    uint32_t nk;
    const rk_knob *kb = rk_family_knobs(o->fam, &nk);
    for (uint32_t k = 0; k < nk; k++) {
        bool swept = false;
        for (uint32_t s = 0; s < sp->nknobs; s++) swept |= sp->knob[s].index == k;
        if (!swept && (sp->locked >> k & 1u) && !rk_instance_get(&sp->base, kb[k].name, v, sizeof v))
            rk_json_set(fixed, kb[k].name, rk_json_str(v));
    }
    rk_json_set(m, "fixed", fixed);
    for (uint32_t s = 0; s < sp->nknobs; s++) {
        rk_json *vals = rk_json_array();
        for (uint32_t i = 0; i < sp->knob[s].nvals; i++) rk_json_push(vals, rk_json_str(sp->knob[s].vals[i]));
        rk_json_set(knobs, sp->knob[s].kb->name, vals);
    }
    rk_json_set(m, "knobs", knobs);
    for (uint32_t s = 0; s < sp->nshapes; s++) {
        rk_shape_format(o->fam, &sp->shape[s], false, v, sizeof v);
        rk_json_push(shapes, rk_json_str(v));
    }
    rk_json_set(m, "shapes", shapes);
    rk_json_set(m, "configs", rk_json_int(sp->nconfigs));
    rk_json_set(m, "items", rk_json_int(sp->nitems));
    rk_json_set(m, "kernels", rk_json_int(sp->nbuilds));
    rk_json_set(pruned, "total", rk_json_int(sp->pruned));
    for (uint32_t i = 0; i < sp->nrules; i++) {
        rk_json *x = rk_json_object();
        rk_json_set(x, "rule", rk_json_str(sp->rule[i].name));
        rk_json_set(x, "count", rk_json_int(sp->rule[i].count));
        rk_json_set(x, "example", rk_json_str(sp->rule[i].example));
        rk_json_push(rules, x);
    }
    rk_json_set(pruned, "rules", rules);
    rk_json_set(m, "pruned", pruned);
    rk_json_set(m, "results", summary(r));
    bool ok = write_json(o->cmd, o->out, "sweep.json", m);
    rk_json_free(m);
    return ok;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* `rocke sweep merge DIR`: every DIR/shards/NAME/results.jsonl, a key kept once. */
int sw_merge(int argc, char **argv) {
    const char *dir = NULL;
    cli_opt opts[] = {{0}};
    cli_cmd c = {.name = "sweep merge", .args = "DIR",
                 .about = "Merge the shards of a Slurm sweep, DIR/shards/*/results.jsonl, into DIR/results.jsonl,\n"
                          "DIR/results.csv and DIR/sweep.json (a record per key, the first shard's kept).",
                 .opts = opts, .pos = &dir, .min_pos = 1, .max_pos = 1};
    int prc = cli_parse(&c, argc, argv, 2);
    if (prc >= 0) return prc;
    return sw_merge_dir(dir);
}

int sw_merge_dir(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/shards", dir);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "rocke sweep merge: cannot open %s: %s (a --slurm sweep writes its shards there)\n", path,
                strerror(errno));
        return 1;
    }
    char *names[4096];
    uint32_t nn = 0;
    for (struct dirent *e; (e = readdir(d)) && nn < RK_COUNTOF(names);)
        if (e->d_name[0] != '.') names[nn++] = strdup(e->d_name);
    closedir(d);
    qsort(names, nn, sizeof names[0], cmp_names);
    sw_records all = {0}, merged = {0};
    rk_json *man = NULL;
    bool ok = true;
    uint32_t shards = 0;
    double items = 0;   /* each shard's items: together the space after pruning */
    for (uint32_t i = 0; i < nn && ok; i++) {
        snprintf(path, sizeof path, "%s/shards/%s/results.jsonl", dir, names[i]);
        if (access(path, F_OK)) continue;
        shards++;
        ok = sw_records_load("sweep merge", path, &all);
        char *text = NULL;
        size_t n = 0;
        snprintf(path, sizeof path, "%s/shards/%s/sweep.json", dir, names[i]);
        rk_json *sm = rk_read_file(path, &text, &n) ? NULL : rk_json_parse(text, n);
        if (text) rk_free(text, n + 1);
        items += sw_num(sm, "items", 0);
        if (!man) man = sm;
        else rk_json_free(sm);
    }
    for (uint32_t i = 0; i < nn; i++) free(names[i]);
    for (uint32_t i = 0; ok && i < all.n; i++) {
        if (sw_records_find(&merged, sw_str(all.r[i], "key"))) continue;
        ok = push(&merged, all.r[i]);
        all.r[i] = NULL;
    }
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    if (ok && !shards) {
        fprintf(stderr, "rocke sweep merge: no shard in %s/shards has a results.jsonl yet\n", dir);
        ok = false;
    }
    ok = ok && sw_records_rewrite("sweep merge", path, &merged);
    ok = ok && sw_write_csv("sweep merge", dir, &merged);
    if (ok && man) {
        rk_json_set(man, "shard", rk_json_null());
        rk_json_set(man, "shards", rk_json_int(shards));
        rk_json_set(man, "items", rk_json_int((int64_t)items));
        rk_json_set(man, "results", summary(&merged));
        ok = write_json("sweep merge", dir, "sweep.json", man);
    }
    if (ok) printf("rocke sweep merge: %u records from %u shards -> %s\n", merged.n, shards, path);
    rk_json_free(man);
    for (uint32_t i = 0; i < all.n; i++) rk_json_free(all.r[i]);
    free(all.r);
    sw_records_free(&merged);
    return ok ? 0 : 1;
}

uint32_t sw_best_per_shape(const sw_records *r, const rk_json **best, char shapes[][128], uint32_t max) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        const rk_json *x = r->r[i], *v = rk_json_get(x, "verified");
        const char *s = sw_str(x, "shape_text");
        uint32_t j = 0;
        while (j < n && strcmp(shapes[j], s)) j++;
        if (j == n) {
            if (n == max) continue;
            snprintf(shapes[n], 128, "%s", s);
            best[n++] = NULL;
        }
        if (!v || !v->b || strcmp(sw_str(x, "status"), "ok")) continue;
        if (!best[j] || sw_num(x, "ms", 1e30) < sw_num(best[j], "ms", 1e30)) best[j] = x;
    }
    return n;
}
