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

static void list(void) {
    for (uint32_t i = 0; i < rk_check_count(); i++) printf("%-18s %s\n", rk_check_name(i), rk_check_desc(i));
}

/* Does the comma-separated list name check `name`? */
static bool selected(const char *only, const char *name) { return !only || cli_list_has(only, ',', name); }

/* Every name of the --only list is a check; empty names are refused, so
 * --only '' and --only ,,, fail alike. */
static bool check_only(const cli_cmd *c, const char *only) {
    char names[1024];
    size_t off = 0;
    for (uint32_t i = 0; i < rk_check_count() && off < sizeof names; i++)
        off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "", rk_check_name(i));
    for (const char *p = only;; p++) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            cli_misuse(c, "--only '%s' has an empty check name; give NAME[,NAME...] (the checks: %s)", only, names);
            return false;
        }
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), p);
        if (len > 63 || rk_check_find(name) < 0) {
            cli_misuse(c, "--only: unknown check '%.*s' (the checks: %s)", (int)len, p, names);
            return false;
        }
        p += len;
        if (!*p) return true;
    }
}

static void print_header(const rk_device *d, uint64_t seed) {
    const rk_device_info *in = rk_device_info_of(d);
    printf("rocke gpu-check: %s (%s %s, target %s), %s", in->name, rk_device_kind_name(in->kind), in->arch,
           in->target[0] ? in->target : "none", in->driver);
    if (in->kind != RK_DEVICE_EMU) printf(", %u SMs, %.1f GiB", in->sm_count, (double)in->total_mem / (1u << 30));
    printf(", seed %llu\n", (unsigned long long)seed);
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

/* --emit: compile each selected check for target into dir; no device. The
 * table goes to standard output, each error to standard error. */
static int emit(const rk_target *t, const char *dir, const char *only) {
    unsigned bad = 0;
    if (!cli_out_dir_usable("gpu-check", dir)) return 1;
    printf("rocke gpu-check: compiling the checks for %s into %s\n", t->name, dir);
    for (uint32_t i = 0; i < rk_check_count(); i++) {
        if (!selected(only, rk_check_name(i))) continue;
        rk_check_result r;
        if (rk_check_emit(t->name, i, dir, &r) != RK_OK) return cli_fail("gpu-check");
        if (r.status == RK_CHECK_ERROR) {
            fflush(stdout);
            fprintf(stderr, "rocke gpu-check: %s: %s\n", rk_check_name(i), r.note);
            bad++;
        } else {
            printf("%-18s %-6s %s\n", rk_check_name(i), r.status == RK_CHECK_PASS ? "OK" : rk_check_status_name(r.status),
                   r.note);
        }
    }
    return bad ? 1 : 0;
}

int cmd_gpu_check(int argc, char **argv) {
    const char *which = NULL, *only = NULL, *emit_dir = NULL, *artifacts = NULL;
    const rk_target *target = rk_target_find("sm_90a");
    uint64_t seed = 0;
    uint32_t warmup = 0, iters = 0;
    bool no_time = false, small = false, want_list = false, probe = false;
    cli_opt opts[] = {
        {.name = "--device", .kind = CLI_STRING, .dst = &which, .meta = "D",
         .help = "auto (default, or $ROCKE_DEVICE), cuda, cuda:<i>, hip, hip:<i>, emu, emu:<target>;\n"
                 "the emulator runs sm_90a unless a target is named"},
        {.name = "--only", .kind = CLI_STRING, .dst = &only, .meta = "NAME,...",
         .help = "comma-separated check names (see --list)"},
        {.name = "--seed", .kind = CLI_U64, .dst = &seed, .meta = "N", .help = "input seed (default: from the clock; printed)"},
        {.name = "--no-time", .kind = CLI_FLAG, .dst = &no_time, .help = "skip timing"},
        {.name = "--warmup", .kind = CLI_U32, .dst = &warmup, .meta = "N",
         .help = "untimed runs (default 10 on a GPU, 1 on the emulator)"},
        {.name = "--iters", .kind = CLI_U32, .dst = &iters, .meta = "N",
         .help = "timed runs (default 50 on a GPU, 3 on the emulator)"},
        {.name = "--small", .kind = CLI_FLAG, .dst = &small, .help = "the emulator's (small) problem sizes on a GPU too"},
        {.name = "--artifacts", .kind = CLI_PATH, .dst = &artifacts, .meta = "DIR",
         .help = "on a GPU, load DIR/<kernel>.cubin|.ptx|.hsaco instead of compiling"},
        {.name = "--emit", .kind = CLI_PATH, .dst = &emit_dir, .meta = "DIR",
         .help = "compile every check kernel for --target into DIR and stop: for a GPU\n"
                 "machine without LLVM, carry DIR there and pass --artifacts DIR"},
        {.name = "--target", .kind = CLI_TARGET, .dst = &target, .meta = "T", .def = "sm_90a",
         .help = "the target of --emit"},
        {.name = "--list", .kind = CLI_FLAG, .dst = &want_list, .alone = true, .help = "list the checks and stop"},
        {.name = "--probe", .kind = CLI_FLAG, .dst = &probe,
         .help = "print the device the checks would run on as 'KIND TARGET' (emu sm_90a,\n"
                 "cuda sm_90a) and stop; for scripts (scripts/gpu-check-emu.sh)"},
        {0},
    };
    cli_cmd c = {.name = "gpu-check", .args = "", .opts = opts,
                 .about = "Builds each self-check kernel, runs it on the device on fresh random inputs (outputs\n"
                          "poisoned first), compares with a host reference (integers bit for bit, floats by\n"
                          "relative L2 error) and times it with device events. Prints one table; exits 1 if any\n"
                          "check fails."};
    int prc = cli_parse(&c, argc, argv, 1);
    if (prc >= 0) return prc;
    bool time_it = !no_time;
    if (want_list) {
        list();
        return 0;
    }
    if (only && !check_only(&c, only)) return 2;
    if (cli_given(&c, "--target") && !emit_dir) return cli_misuse(&c, "--target goes with --emit DIR");
    if (emit_dir) return emit(target, emit_dir, only);
    if (!seed) seed = (uint64_t)time(NULL);
    rk_device *d = NULL;
    rk_device_opts o = {.which = which, .emu_target = "sm_90a"};
    o.quiet = probe;
    if (rk_device_open_opts(&o, &d) != RK_OK) return cli_fail("gpu-check");
    if (probe) {
        const char *dt = rk_device_target(d);
        printf("%s %s\n", rk_device_kind_name(rk_device_kind_of(d)), dt && *dt ? dt : "none");
        rk_device_close(d);
        return 0;
    }
    print_header(d, seed);
    unsigned counts[4] = {0};
    for (uint32_t i = 0; i < rk_check_count(); i++) {
        if (!selected(only, rk_check_name(i))) continue;
        rk_check_opts co = {.seed = seed + i, .time = time_it, .warmup = warmup, .iters = iters,
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
