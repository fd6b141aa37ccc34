/* rocke gpu-check — run every device self-check (src/runtime/selftest*.c) on
 * the chosen device in one go and print a table: device, driver, and per
 * check PASS/FAIL/SKIP/ERROR with its errors and median time. Exit 1 when a
 * check fails or errors. Layer: tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rocke/rocke.h"
#include "cli.h"

int cmd_gpu_check(int argc, char **argv);

static void usage(FILE *f) {
    fprintf(f,
            "usage: rocke gpu-check [--device D] [--only NAME,...] [--seed N] [--no-time] [--warmup N] [--iters N]\n"
            "                       [--small] [--artifacts DIR]\n"
            "       rocke gpu-check --emit DIR [--target T] [--only NAME,...]\n"
            "       rocke gpu-check --list\n\n"
            "Builds each self-check kernel, runs it on the device on fresh random inputs (outputs poisoned\n"
            "first), compares with a host reference (integers bit for bit, floats by relative L2 error) and\n"
            "times it with device events. Prints one table; exits 1 if any check fails.\n\n"
            "  --device D   auto (default, or $ROCKE_DEVICE), cuda, cuda:<i>, hip, hip:<i>, emu, emu:<target>;\n"
            "               the emulator runs sm_90a unless a target is named\n"
            "  --only L     comma-separated check names (see --list)\n"
            "  --seed N     input seed (default: from the clock; printed)\n"
            "  --no-time    skip timing\n"
            "  --small      the emulator's (small) problem sizes on a GPU too\n"
            "  --warmup N, --iters N   timing runs (default 10/50 on a GPU, 1/3 on the emulator)\n"
            "  --artifacts DIR   on a GPU, load DIR/<kernel>.cubin|.ptx|.hsaco instead of compiling\n"
            "  --emit DIR   compile every check kernel for --target (default sm_90a) into DIR and stop:\n"
            "               for a GPU machine without LLVM, carry DIR there and pass --artifacts DIR\n");
}

static void list(void) {
    for (uint32_t i = 0; i < rk_check_count(); i++) printf("%-18s %s\n", rk_check_name(i), rk_check_desc(i));
}

/* Does the comma-separated list name check `name`? */
static bool selected(const char *only, const char *name) {
    if (!only) return true;
    size_t n = strlen(name);
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, name, n)) return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static bool check_only(const char *only) {
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), p);
        if (rk_check_find(name) < 0) {
            fprintf(stderr, "rocke gpu-check: unknown check '%s'; the checks are:", name);
            for (uint32_t i = 0; i < rk_check_count(); i++) fprintf(stderr, " %s", rk_check_name(i));
            fprintf(stderr, "\n");
            return false;
        }
        p += len + (p[len] == ',');
    }
    return true;
}

static void print_header(const rk_device *d, unsigned long long seed) {
    const rk_device_info *in = rk_device_info_of(d);
    printf("rocke gpu-check: %s (%s %s, target %s), %s", in->name, rk_device_kind_name(in->kind), in->arch,
           in->target[0] ? in->target : "none", in->driver);
    if (in->kind != RK_DEVICE_EMU) printf(", %u SMs, %.1f GiB", in->sm_count, (double)in->total_mem / (1u << 30));
    printf(", seed %llu\n", seed);
    printf("%-18s %-6s %12s %10s %7s %11s %7s  %s\n", "check", "result", "max_abs_err", "rel_err", "tol",
           "median_ms", "spread", "size / note");
}

static void print_row(const char *name, const rk_check_result *r) {
    char tol[16], ms[16], spread[16];
    if (r->tol == 0) snprintf(tol, sizeof tol, "exact");
    else snprintf(tol, sizeof tol, "%.0e", r->tol);
    if (r->median_ms > 0) {
        snprintf(ms, sizeof ms, "%.4f%s", r->median_ms, r->clock == RK_CLOCK_HOST_EMULATOR ? "*" : "");
        snprintf(spread, sizeof spread, "%.1f%%", 100 * r->spread);
    } else {
        snprintf(ms, sizeof ms, "-");
        snprintf(spread, sizeof spread, "-");
    }
    bool ran = r->status == RK_CHECK_PASS || r->status == RK_CHECK_FAIL;
    if (ran)
        printf("%-18s %-6s %12.3g %10.3g %7s %11s %7s  %s%s%s\n", name, rk_check_status_name(r->status),
               r->max_abs_err, r->rel_err, tol, ms, spread, r->size, r->note[0] ? "; " : "", r->note);
    else
        printf("%-18s %-6s %12s %10s %7s %11s %7s  %s\n", name, rk_check_status_name(r->status), "-", "-", "-", "-",
               "-", r->note);
    if (r->status == RK_CHECK_FAIL) printf("%-18s        %llu of %llu elements wrong\n", "",
                                          (unsigned long long)r->bad, (unsigned long long)r->total);
}

/* --emit: compile each selected check for target into dir; no device. */
static int emit(const char *target, const char *dir, const char *only) {
    unsigned bad = 0;
    printf("rocke gpu-check: compiling the checks for %s into %s\n", target, dir);
    for (uint32_t i = 0; i < rk_check_count(); i++) {
        if (!selected(only, rk_check_name(i))) continue;
        rk_check_result r;
        if (rk_check_emit(target, i, dir, &r) != RK_OK) return cli_fail("gpu-check");
        printf("%-18s %-6s %s\n", rk_check_name(i),
               r.status == RK_CHECK_PASS ? "OK" : rk_check_status_name(r.status), r.note);
        bad += r.status == RK_CHECK_ERROR;
    }
    return bad ? 1 : 0;
}

int cmd_gpu_check(int argc, char **argv) {
    const char *which = NULL, *only = NULL, *emit_dir = NULL, *target = "sm_90a", *artifacts = NULL;
    unsigned long long seed = 0, warmup = 0, iters = 0;
    bool time_it = true, small = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_is_help(a)) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--list")) {
            list();
            return 0;
        } else if (!strcmp(a, "--no-time")) {
            time_it = false;
        } else if (!strcmp(a, "--small")) {
            small = true;
        } else if (!strcmp(a, "--device") || !strcmp(a, "--only") || !strcmp(a, "--seed") ||
                   !strcmp(a, "--warmup") || !strcmp(a, "--iters") || !strcmp(a, "--emit") ||
                   !strcmp(a, "--target") || !strcmp(a, "--artifacts")) {
            if (!v) {
                fprintf(stderr, "rocke gpu-check: %s needs a value (see rocke gpu-check --help)\n", a);
                return 2;
            }
            i++;
            if (!strcmp(a, "--device")) which = v;
            else if (!strcmp(a, "--only")) only = v;
            else if (!strcmp(a, "--emit")) emit_dir = v;
            else if (!strcmp(a, "--target")) target = v;
            else if (!strcmp(a, "--artifacts")) artifacts = v;
            else if (!cli_parse_u64("gpu-check", a, v, !strcmp(a, "--seed") ? &seed : !strcmp(a, "--warmup") ? &warmup
                                                                                                              : &iters))
                return 2;
        } else {
            fprintf(stderr, "rocke gpu-check: unexpected argument '%s' (see rocke gpu-check --help)\n", a);
            return 2;
        }
    }
    if (only && !check_only(only)) return 2;
    if (emit_dir) {
        if (!rk_target_find(target)) return cli_fail("gpu-check");
        return emit(target, emit_dir, only);
    }
    if (!seed) seed = (unsigned long long)time(NULL);
    rk_device *d = NULL;
    rk_device_opts o = {.which = which, .emu_target = "sm_90a"};
    if (rk_device_open_opts(&o, &d) != RK_OK) return cli_fail("gpu-check");
    print_header(d, seed);
    unsigned counts[4] = {0};
    for (uint32_t i = 0; i < rk_check_count(); i++) {
        if (!selected(only, rk_check_name(i))) continue;
        rk_check_opts co = {.seed = seed + i, .time = time_it, .warmup = (uint32_t)warmup, .iters = (uint32_t)iters,
                            .artifacts = artifacts, .small = small};
        rk_check_result r;
        if (rk_check_run(d, i, &co, &r) != RK_OK) {
            rk_device_close(d);
            return cli_fail("gpu-check");
        }
        print_row(rk_check_name(i), &r);
        fflush(stdout);
        counts[r.status]++;
    }
    printf("summary: %u PASS, %u FAIL, %u SKIP, %u ERROR%s\n", counts[RK_CHECK_PASS], counts[RK_CHECK_FAIL],
           counts[RK_CHECK_SKIP], counts[RK_CHECK_ERROR],
           rk_device_kind_of(d) == RK_DEVICE_EMU && time_it ? " (* = emulator time on the host clock)" : "");
    rk_device_close(d);
    return counts[RK_CHECK_FAIL] || counts[RK_CHECK_ERROR] ? 1 : 0;
}
