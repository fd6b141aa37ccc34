/* rocke bench — compile latency per stage (verify+passes, lower, compile,
 * link) for a small kernel and a ~5,000-op kernel: libLLVM in a worker
 * process (posix_spawn'ed once, then reused), libLLVM in process, and
 * opt + llc as processes; plus cache-hit latency and the first (cold)
 * compile of the process. The AMD link step follows ROCKE_LINKER (auto:
 * the in-process linker; lld: ld.lld as a process); the toolchain column
 * names the one that ran. Median and best of RUNS.
 * Usage: [ROCKE_LINKER=auto|internal|lld] bench_compile [TARGET] [RUNS]. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"

/* out[tid] = in[tid] + in[tid + N]: the smallest useful kernel. */
static rk_kernel *build_small(void) {
    rk_kernel *k = rk_kernel_new("small");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value in = rk_add_param(k, "in", pf, NULL);
    rk_value out = rk_add_param(k, "out", pf, NULL);
    rk_value n = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value bid = rk_build_block_id(k, 0);
    rk_value i = rk_build_add(k, rk_build_mul(k, bid, rk_const_i32(k, 256)), tid);
    rk_value x = rk_load_global(k, in, i, 1);
    rk_value y = rk_load_global(k, in, rk_build_add(k, i, n), 1);
    rk_store_global(k, out, i, rk_build_fadd(k, x, y));
    if (rk_kernel_finish(k) != RK_OK) return NULL;
    return k;
}

/* Straight-line code of about `ops` ops: index math, loads, FMAs, compares
 * and selects feeding one accumulator. */
static rk_kernel *build_large(uint64_t ops) {
    rk_kernel *k = rk_kernel_new("large");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value in = rk_add_param(k, "in", pf, NULL);
    rk_value out = rk_add_param(k, "out", pf, NULL);
    rk_value n = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value acc = rk_const_f32(k, 0.0f);
    rk_value s = rk_const_f32(k, 0.75f);
    for (uint64_t i = 0; rk_kernel_op_count(k) < ops; i++) {
        rk_value off = rk_const_i32(k, (int32_t)(i * 64 % 65536));
        rk_value j = rk_build_add(k, tid, off);
        rk_value x = rk_load_global(k, in, j, 1);
        rk_value y = rk_build_fma(k, x, s, acc);
        rk_value ok = rk_build_cmp(k, "lt", j, n);
        acc = rk_build_select(k, ok, y, acc);
    }
    rk_store_global(k, out, tid, acc);
    if (rk_kernel_finish(k) != RK_OK) return NULL;
    return k;
}

typedef struct stats { double v[64]; int n; } stats;

static double median(stats *s) {
    for (int i = 1; i < s->n; i++)
        for (int j = i; j > 0 && s->v[j] < s->v[j - 1]; j--) {
            double t = s->v[j];
            s->v[j] = s->v[j - 1];
            s->v[j - 1] = t;
        }
    return s->n ? s->v[s->n / 2] : 0;
}
static double best(const stats *s) {
    double b = s->n ? s->v[0] : 0;
    for (int i = 1; i < s->n; i++) if (s->v[i] < b) b = s->v[i];
    return b;
}

typedef struct row { stats passes, lower, compile, link, fork, total; } row;

static void add(row *r, const rk_artifact *a) {
    r->passes.v[r->passes.n++] = a->ms.passes;
    r->lower.v[r->lower.n++] = a->ms.lower;
    r->compile.v[r->compile.n++] = a->ms.compile;
    r->link.v[r->link.n++] = a->ms.link;
    r->fork.v[r->fork.n++] = a->ms.fork;
    r->total.v[r->total.n++] = a->ms.total;
}

static int run(const char *label, rk_kernel *k, const rk_target *t, rk_toolchain tc, bool inprocess, bool cache,
               int runs, const char *cache_dir) {
    rk_compile_options o;
    if (rk_compile_options_default(t, &o) != RK_OK) return 1;
    o.toolchain = tc;
    o.inprocess = inprocess;
    o.cache = cache;
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s", cache_dir);
    row r;
    memset(&r, 0, sizeof r);
    char tcname[160] = "";
    if (runs > 64) runs = 64;
    for (int i = 0; i < runs + (cache ? 1 : 0); i++) {
        rk_artifact *a = NULL;
        if (rk_compile(k, t, &o, &a) != RK_OK) {
            fprintf(stderr, "bench_compile: %s: %s\n", label, rk_error_message());
            return 1;
        }
        if (!cache || i > 0) add(&r, a); /* with the cache, the first run fills it */
        snprintf(tcname, sizeof tcname, "%s", a->toolchain);
        rk_artifact_free(a);
    }
    printf("| %-28s | %-44s | %8.3f | %8.3f | %9.3f | %8.3f | %8.3f | %9.3f (%.3f) |\n", label, tcname,
           median(&r.passes), median(&r.lower), median(&r.compile), median(&r.link), median(&r.fork),
           median(&r.total), best(&r.total));
    return 0;
}

extern char **environ;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* How long starting and reaping a trivial process takes right now: the
 * floor under every external-tool stage, and a gauge of machine load. */
static void spawn_baseline(int runs) {
    stats s = {.n = 0};
    char *argv[] = {"/bin/true", NULL};
    for (int i = 0; i < runs && i < 64; i++) {
        double t0 = now_ms();
        pid_t pid;
        int st;
        if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0) return;
        waitpid(pid, &st, 0);
        s.v[s.n++] = now_ms() - t0;
    }
    printf("process spawn baseline (/bin/true): median %.3f ms, best %.3f ms\n", median(&s), best(&s));
}

int main(int argc, char **argv) {
    const char *tname = argc > 1 ? argv[1] : "gfx942";
    int runs = argc > 2 ? atoi(argv[2]) : 15;
    const rk_target *t = rk_target_find(tname);
    if (!t || runs < 1) {
        fprintf(stderr, "usage: bench_compile [TARGET] [RUNS]\n%s\n", t ? "" : rk_error_message());
        return 2;
    }
    rk_kernel *small = build_small(), *large = build_large(5000);
    if (!small || !large) {
        fprintf(stderr, "bench_compile: build failed: %s\n", rk_error_message());
        return 1;
    }
    char cache_dir[] = "/tmp/rocke-bench-cache-XXXXXX";
    if (!mkdtemp(cache_dir)) return 1;
    printf("target %s, %d runs; small kernel %llu ops, large kernel %llu ops\n\n", t->name, runs,
           (unsigned long long)rk_kernel_op_count(small), (unsigned long long)rk_kernel_op_count(large));

    spawn_baseline(runs);

    /* the first compile of the process: dlopen libLLVM and target setup */
    rk_compile_options o;
    rk_compile_options_default(t, &o);
    o.cache = false;
    o.toolchain = RK_TOOLCHAIN_LLVM;
    o.inprocess = true;
    rk_artifact *a = NULL;
    if (rk_compile(small, t, &o, &a) != RK_OK) {
        fprintf(stderr, "bench_compile: %s\n", rk_error_message());
        return 1;
    }
    printf("first compile in this process (loads libLLVM): total %.3f ms (compile %.3f, link %.3f)\n\n",
           a->ms.total, a->ms.compile, a->ms.link);
    rk_artifact_free(a);

    printf("| kernel / mode                | toolchain                                    | passes   | lower    "
           "| compile   | link     | fork     | total median (best) |\n"
           "|---|---|---|---|---|---|---|---|\n");
    int rc = 0;
    rc |= run("small, in-process", small, t, RK_TOOLCHAIN_LLVM, true, false, runs, cache_dir);
    rc |= run("small, worker process", small, t, RK_TOOLCHAIN_LLVM, false, false, runs, cache_dir);
    rc |= run("small, tools", small, t, RK_TOOLCHAIN_TOOLS, false, false, runs > 5 ? 5 : runs, cache_dir);
    rc |= run("small, cache hit", small, t, RK_TOOLCHAIN_LLVM, true, true, runs, cache_dir);
    rc |= run("large, in-process", large, t, RK_TOOLCHAIN_LLVM, true, false, runs > 5 ? 5 : runs, cache_dir);
    rc |= run("large, worker process", large, t, RK_TOOLCHAIN_LLVM, false, false, runs > 5 ? 5 : runs, cache_dir);
    rc |= run("large, tools", large, t, RK_TOOLCHAIN_TOOLS, false, false, runs > 3 ? 3 : runs, cache_dir);
    rc |= run("large, cache hit", large, t, RK_TOOLCHAIN_LLVM, true, true, runs, cache_dir);
    /* cache hits for LLVM IR input: key hash + one file read, no verify/lower */
    rk_kernel *ks[2] = {small, large};
    for (int i = 0; i < 2 && rc == 0; i++) {
        o.cache = true;
        snprintf(o.cache_dir, sizeof o.cache_dir, "%s", cache_dir);
        if (rk_compile(ks[i], t, &o, &a) != RK_OK) return 1;
        char *ll = a->llvm_ir;
        a->llvm_ir = NULL;
        rk_artifact_free(a);
        stats hit = {.n = 0};
        for (int r = 0; r < runs && r < 64; r++) {
            rk_artifact *h = NULL;
            if (rk_compile_llvm_ir(ll, rk_kernel_name(ks[i]), t, &o, &h) != RK_OK || !h->cache_hit) rc = 1;
            else hit.v[hit.n++] = h->ms.total;
            rk_artifact_free(h);
        }
        printf("| %-28s | %-44s | %8s | %8s | %9s | %8s | %8s | %9.3f (%.3f) |\n",
               i ? "large .ll, cache hit" : "small .ll, cache hit", "(rk_compile_llvm_ir)", "-", "-", "-", "-", "-",
               median(&hit), best(&hit));
        rk_string_free(ll);
    }
    rk_kernel_free(small);
    rk_kernel_free(large);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
    if (system(cmd) != 0) rc = 1;
    return rc;
}
