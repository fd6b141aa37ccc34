/* rocke sweep — the sweep itself: the space, resume from results.jsonl, the
 * build phase (--jobs compile processes sharing the compile cache), the run
 * phase (one worker per device, one queue), progress, the outputs.
 * Layer: tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rocke/runtime.h"
#include "sweep_int.h"

typedef struct sweep {
    sw_opts *o;
    sw_space sp;
    sw_records done;               /* records of an earlier, interrupted run */
    char results[4096], kdir[4096];
    uint32_t nbuild, built, nrun, ran, failed;
    bool tty;
    double t0;
    char names[SW_MAX_WORKERS][32];
} sweep;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(void *ud) {
    sweep *s = ud;
    if (s->o->quiet || !s->tty) return;
    uint32_t doneish = s->built + s->ran, all = s->nbuild + s->nrun;
    double el = now_s() - s->t0, eta = doneish ? el * (all - doneish) / doneish : 0;
    char bar[31];
    uint32_t fill = all ? 30 * doneish / all : 30;
    for (uint32_t i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    fprintf(stderr, "\r[%s] built %u/%u  run %u/%u  failed %u  ETA %.0fs ", bar, s->built, s->nbuild, s->ran, s->nrun,
            s->failed, eta);
    fflush(stderr);
}

static void plain(sweep *s, const char *fmt, const char *a, const char *b, const char *c) {
    if (s->o->quiet || s->tty) return;
    printf("rocke %s: ", s->o->cmd);
    printf(fmt, a, b, c);
    putchar('\n');
    fflush(stdout);
}

/* ---- build phase --------------------------------------------------------------- */
static void *build_open(void *ud, uint32_t w, uint32_t first, char *err, size_t n) {
    (void)w; (void)first; (void)err; (void)n;
    return ud;
}
static bool build_job(void *ud, void *ctx, uint32_t w, uint32_t item, rk_buf *line) {
    (void)ctx; (void)w;
    sweep *s = ud;
    sw_build_job(&s->sp, s->o->t, s->kdir, item, line);
    return true;
}
static void no_close(void *ud, void *ctx) { (void)ud; (void)ctx; }

static void build_done(void *ud, uint32_t item, uint32_t w, const char *line) {
    (void)w;
    sweep *s = ud;
    sw_build *b = &s->sp.builds[s->sp.items[item].build];
    rk_json *j = rk_json_parse(line, strlen(line));
    const rk_json *ok = rk_json_get(j, "ok");
    b->done = true;
    b->ok = ok && ok->b;
    b->registers = (int32_t)sw_num(j, "registers", -1);
    b->spills = (int32_t)sw_num(j, "spills", -1);
    b->build_ms = sw_num(j, "build_ms", 0);
    snprintf(b->error, sizeof b->error, "%s", j ? sw_str(j, "error") : "the build worker's answer is not JSON");
    rk_json_free(j);
    s->built++;
    plain(s, "built %s%s%s", s->sp.items[item].kernel, b->ok ? "" : ": ", b->ok ? "" : b->error);
}

static void failed_record(sweep *s, uint32_t item, const char *why) {
    rk_json *r = sw_record_new(&s->sp, s->o, &s->sp.items[item]);
    rk_json_set(r, "status", rk_json_str("failed"));
    rk_json_set(r, "error", rk_json_str(why));
    rk_json_set(r, "verified", rk_json_bool(false));
    char *text = rk_json_write(r, false);
    if (text) sw_append_line(s->o->cmd, s->results, text);
    rk_string_free(text);
    rk_json_free(r);
    s->failed++;
}

static void build_lost(void *ud, uint32_t item, const char *why) {
    sweep *s = ud;
    sw_build *b = &s->sp.builds[s->sp.items[item].build];
    b->done = true;
    snprintf(b->error, sizeof b->error, "build: %s", why);
    s->built++;
}

/* The device check's kernels, one per output type of the kernels built (a
 * GPU run loads them from DIR/kernels; the emulator builds them itself). */
static void build_checkers(sweep *s, const uint32_t *builds, uint32_t nb) {
    bool want[RK_S__COUNT] = {false};
    for (uint32_t i = 0; i < nb; i++) {
        rk_ksig sig;
        if (rk_instance_signature(&s->sp.items[builds[i]].in, &sig)) continue;
        for (uint32_t p = 0; p < sig.n; p++) {
            rk_kparam_role r = sig.p[p].role;
            if (sig.p[p].ptr && (r == RK_KP_OUT || r == RK_KP_ACCUM || r == RK_KP_INOUT)) want[sig.p[p].type] = true;
        }
    }
    for (uint32_t t = 0; t < RK_S__COUNT; t++) {
        char name[64];
        if (!want[t] || !sw_compare_supported((rk_scalar)t)) continue;
        sw_compare_name((rk_scalar)t, name, sizeof name);
        bool ok = sw_build_checker(s->o->t, s->kdir, (rk_scalar)t);
        plain(s, "built %s%s%s", name, ok ? "" : ": ", ok ? "" : "failed (those outputs are checked on the host)");
    }
}

/* ---- run phase ----------------------------------------------------------------- */
static void *run_open(void *ud, uint32_t w, uint32_t first, char *err, size_t n) {
    sweep *s = ud;
    return sw_run_open(s->o, &s->sp, s->names[w], first, err, n);
}
static bool run_job(void *ud, void *ctx, uint32_t w, uint32_t item, rk_buf *line) {
    sweep *s = ud;
    return sw_run_job(ctx, s->o, &s->sp, w, item, line);
}
static void run_close(void *ud, void *ctx) { (void)ud; sw_run_close(ctx); }

static void run_done(void *ud, uint32_t item, uint32_t w, const char *line) {
    (void)w;
    sweep *s = ud;
    rk_json *j = rk_json_parse(line, strlen(line));
    const char *st = j ? sw_str(j, "status") : "failed";
    if (!j) failed_record(s, item, "the run worker's answer is not JSON");
    else sw_append_line(s->o->cmd, s->results, line);
    s->ran++;
    if (strcmp(st, "ok")) s->failed += j != NULL;
    char ms[64];
    snprintf(ms, sizeof ms, "%s %.4g ms", st, j ? sw_num(j, "ms", 0) : 0);
    plain(s, "ran %s at %s: %s", s->sp.items[item].kernel, s->sp.items[item].key, ms);
    rk_json_free(j);
}

static void run_lost(void *ud, uint32_t item, const char *why) {
    sweep *s = ud;
    failed_record(s, item, why);
    s->ran++;
}

/* ---- devices -------------------------------------------------------------------- */
/* GPUs of one kind, counted in a child process (a driver initialised before
 * fork() is unusable in the workers). *kind: "cuda" or "hip". */
static uint32_t count_gpus(const char **kind) {
    static const char *const kinds[] = {"cuda", "hip"};
    for (uint32_t k = 0; k < 2; k++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) _exit((int)sw_gpu_count(kinds[k]));
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) continue;
        if (WEXITSTATUS(status)) { *kind = kinds[k]; return (uint32_t)WEXITSTATUS(status); }
    }
    return 0;
}

static bool parse_devices(sweep *s, sw_pool *p) {
    const char *d = s->o->devices;
    uint32_t n = 0;
    if (!strcmp(d, "auto") || !strcmp(d, "emu")) {
        snprintf(s->names[n++], sizeof s->names[0], "%s", d);
    } else if (!strncmp(d, "emu:", 4)) {
        char *end;
        unsigned long k = strtoul(d + 4, &end, 10);
        if (*end || !k || k > SW_MAX_WORKERS) goto bad;
        while (n < k) snprintf(s->names[n++], sizeof s->names[0], "emu");
    } else {
        const char *kind = "cuda";
        uint32_t gpus = count_gpus(&kind);
        if (!strcmp(d, "all")) {
            if (!gpus) {
                fprintf(stderr, "rocke %s: --devices all: no GPU found (CUDA and HIP tried); use --devices emu or "
                        "emu:N for the emulator\n", s->o->cmd);
                return false;
            }
            while (n < gpus) { snprintf(s->names[n], sizeof s->names[0], "%s:%u", kind, n); n++; }
        } else {
            unsigned long idx[SW_MAX_WORKERS];
            for (const char *c = d; *c;) {   /* the whole list first, then whether the GPUs exist */
                char *stop;
                unsigned long i = strtoul(c, &stop, 10);
                if (stop == c || (*stop && *stop != ',') || n == SW_MAX_WORKERS) goto bad;
                idx[n++] = i;
                c = *stop ? stop + 1 : stop;
            }
            for (uint32_t w = 0; w < n; w++) {
                if (idx[w] >= gpus) {
                    if (gpus) fprintf(stderr, "rocke %s: --devices: GPU %lu does not exist (legal: 0..%u)\n",
                                      s->o->cmd, idx[w], gpus - 1);
                    else fprintf(stderr, "rocke %s: --devices: GPU %lu: no GPU found (CUDA and HIP tried); use "
                                 "--devices emu or emu:N for the emulator\n", s->o->cmd, idx[w]);
                    return false;
                }
                snprintf(s->names[w], sizeof s->names[0], "%s:%lu", kind, idx[w]);
            }
        }
    }
    p->nworkers = n;
    for (uint32_t w = 0; w < n; w++) p->name[w] = s->names[w];
    return true;
bad:
    fprintf(stderr, "rocke %s: --devices '%s' (legal: auto, all, emu, emu:N with N 1..%d, or GPU indices 0,1,...)\n",
            s->o->cmd, d, SW_MAX_WORKERS);
    return false;
}

/* The run queue in shape order (items of a shape in their own order): each
 * worker then takes a shape's configs one after another and fills its
 * inputs and reference once per shape (cmd_sweep_problem.c). */
static bool by_shape(const sw_space *sp, uint32_t *todo, uint32_t n) {
    uint32_t *sorted = malloc((n + 1) * sizeof *sorted), start[SW_MAX_SHAPES + 1] = {0};
    if (!sorted) return false;
    for (uint32_t i = 0; i < n; i++) start[sp->items[todo[i]].shape + 1]++;
    for (uint32_t k = 0; k < SW_MAX_SHAPES; k++) start[k + 1] += start[k];
    for (uint32_t i = 0; i < n; i++) sorted[start[sp->items[todo[i]].shape]++] = todo[i];
    memcpy(todo, sorted, n * sizeof *todo);
    free(sorted);
    return true;
}

static void print_pruning(const sweep *s) {
    const sw_space *sp = &s->sp;
    printf("rocke %s: %s for %s: %u configs x %u shapes; %u pruned before compiling%s\n", s->o->cmd,
           rk_family_name(s->o->fam), s->o->t->name, sp->nconfigs, sp->nshapes, sp->pruned, sp->nrules ? ":" : "");
    for (uint32_t r = 0; r < sp->nrules; r++)
        printf("  pruned %4u by %-22s e.g. %s\n", sp->rule[r].count, sp->rule[r].name, sp->rule[r].example);
}

int sw_sweep(sw_opts *o) {
    /* a sweep measures the heuristic and the swept knobs, never a tuning database */
    unsetenv("ROCKE_TUNING");
    o->t0 = now_s();
    sweep *s = calloc(1, sizeof *s);
    if (!s) return 1;
    s->o = o;
    int rc = 1;
    if (!sw_space_make(o, &s->sp)) { rc = s->sp.pruned ? 1 : 2; goto out; }
    if (o->slurm) { rc = sw_slurm_submit(o, s->sp.nitems); goto out; }
    sw_pool run = {.ud = s, .open = run_open, .job = run_job, .close = run_close, .done = run_done,
                   .lost = run_lost, .tick = progress};
    if (!parse_devices(s, &run)) { rc = 2; goto out; }
    int made = cli_out_dir_make(o->cmd, o->out);   /* 2: a file stands where the folder goes */
    if (made) { rc = made; goto out; }
    snprintf(s->results, sizeof s->results, "%s/results.jsonl", o->out);
    snprintf(s->kdir, sizeof s->kdir, "%s/kernels", o->out);
    if (cli_mkdirs(s->kdir)) {
        fprintf(stderr, "rocke %s: cannot create %s\n", o->cmd, s->kdir);
        goto out;
    }
    if (!sw_records_load(o->cmd, s->results, &s->done)) goto out;
    /* the skipped lines go (warned once): what follows appends to whole records */
    if (s->done.skipped && !sw_records_rewrite(o->cmd, s->results, &s->done)) goto out;
    print_pruning(s);
    uint32_t *todo = calloc(s->sp.nitems + 1, sizeof *todo), *builds = calloc(s->sp.nbuilds + 1, sizeof *builds);
    bool *queued = calloc(s->sp.nbuilds + 1, 1);
    uint32_t ntodo = 0, nb = 0;
    for (uint32_t i = 0; todo && builds && queued && i < s->sp.nitems; i++) {
        if (sw_records_find(&s->done, s->sp.items[i].key)) continue;
        todo[ntodo++] = i;
        int bi = s->sp.items[i].build;
        if (!queued[bi]) builds[nb++] = s->sp.builds[bi].item;   /* each kernel compiled once */
        queued[bi] = true;
    }
    free(queued);
    printf("rocke %s: %u items (%u kernels)%s%u to run on %s (%u worker%s), %u compile job%s\n", o->cmd,
           s->sp.nitems, s->sp.nbuilds, s->done.n ? ", resuming: " : ", ", ntodo, o->devices, run.nworkers,
           run.nworkers == 1 ? "" : "s", o->jobs, o->jobs == 1 ? "" : "s");
    if (s->done.n)
        printf("rocke %s: %u records already in %s\n", o->cmd, s->done.n, s->results);
    fflush(stdout);
    s->tty = isatty(2) && !o->quiet;
    s->t0 = now_s();
    s->nbuild = nb;
    s->nrun = ntodo;   /* items whose kernel fails to build count as run (and failed) */
    /* kernels an earlier --build-only left are read here, not in forked jobs
     * (a GPU run of a prepared sweep then starts at once) */
    uint32_t nfork = 0, *forked = calloc(nb + 1, sizeof *forked);
    for (uint32_t i = 0; forked && i < nb; i++) {
        char rec[4400];
        snprintf(rec, sizeof rec, "%s/%s.build.json", s->kdir, s->sp.items[builds[i]].kernel);
        if (access(rec, R_OK)) { forked[nfork++] = builds[i]; continue; }
        rk_buf line;
        rk_buf_init(&line);
        sw_build_job(&s->sp, o->t, s->kdir, builds[i], &line);
        build_done(s, builds[i], 0, line.len ? rk_buf_cstr(&line) : "");
        rk_buf_free(&line);
    }
    sw_pool bp = {.nworkers = o->jobs < nfork ? o->jobs : nfork, .ud = s, .open = build_open, .job = build_job,
                  .close = no_close, .done = build_done, .lost = build_lost, .tick = progress};
    for (uint32_t w = 0; w < bp.nworkers; w++) bp.name[w] = "compile";
    o->setup_s = s->t0 - o->t0;
    bool ok = todo && builds && forked && sw_pool_run(&bp, forked, nfork, o->cmd);
    free(forked);
    if (ok && (o->build_only || strncmp(o->devices, "emu", 3))) build_checkers(s, builds, nb);
    o->build_s = now_s() - s->t0;
    if (ok && o->build_only) {
        uint32_t bad = 0;
        for (uint32_t i = 0; i < nb; i++) bad += !s->sp.builds[s->sp.items[builds[i]].build].ok;
        printf("rocke %s: %u kernels in %s (%u failed); the same command without --build-only measures them\n",
               o->cmd, nb, s->kdir, bad);
        rc = bad ? 1 : 0;
        free(todo);
        free(builds);
        goto out;
    }
    /* items whose kernel did not build are failed records; the others run */
    uint32_t nrun = 0;
    for (uint32_t i = 0; ok && i < ntodo; i++) {
        const sw_build *b = &s->sp.builds[s->sp.items[todo[i]].build];
        if (b->ok) todo[nrun++] = todo[i];
        else {
            char why[600];
            snprintf(why, sizeof why, "build: %s", b->error);
            failed_record(s, todo[i], why);
            s->ran++;
        }
    }
    if (ok && !by_shape(&s->sp, todo, nrun)) { fprintf(stderr, "rocke %s: out of memory\n", o->cmd); ok = false; }
    char pids[4200];
    snprintf(pids, sizeof pids, "%s/workers.json", o->out);
    run.pid_file = pids;
    double run0 = now_s();
    ok = ok && sw_pool_run(&run, todo, nrun, o->cmd);
    o->run_s = now_s() - run0;
    if (s->tty) fputc('\n', stderr);
    free(todo);
    free(builds);
    sw_records all = {0};
    ok = ok && sw_records_load(o->cmd, s->results, &all) && sw_write_csv(o->cmd, o->out, &all) &&
         sw_write_manifest(o, &s->sp, &all, o->devices);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < all.n; i++) bad += strcmp(sw_str(all.r[i], "status"), "ok") != 0;
    if (ok)
        printf("rocke %s: %u records (%u not ok) -> %s, %s/results.csv, %s/sweep.json (%.1f s)\n", o->cmd, all.n, bad,
               s->results, o->out, o->out, now_s() - s->t0);
    sw_records_free(&all);
    rc = !ok || bad ? 1 : 0;
out:
    sw_records_free(&s->done);
    sw_space_free(&s->sp);
    free(s);
    return rc;
}
