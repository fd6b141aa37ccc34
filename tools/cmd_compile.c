/* rocke compile — a ckdsl.ir v1 kernel (or an LLVM IR .ll file) to
 * DIR/NAME.ll plus DIR/NAME.hsaco (AMD) or DIR/NAME.ptx and DIR/NAME.cubin
 * (NVIDIA), printing the stage timings. Exit 0 ok, 1 on errors, 2 on misuse.
 * Layer: tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"
#include "base/base_int.h"
#include "cli.h"

int cmd_compile(int argc, char **argv);

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* The only kernel a .ll file defines (amdgpu_kernel or ptx_kernel). */
static bool find_kernel(const char *ll, char *out, size_t n) {
    int found = 0;
    for (const char *p = ll; (p = strstr(p, "define ")); p += 7) {
        const char *eol = strchr(p, '\n');
        const char *cc = strstr(p, "amdgpu_kernel");
        if (!cc || (eol && cc > eol)) cc = strstr(p, "ptx_kernel");
        if (!cc || (eol && cc > eol)) continue;
        const char *at = strchr(cc, '@');
        if (!at || (eol && at > eol)) continue;
        size_t len = strcspn(at + 1, "( \t");
        if (++found == 1) snprintf(out, n, "%.*s", (int)len, at + 1);
    }
    return found == 1;
}

static void print_result(const rk_artifact *a, const char *dir) {
    bool amd = a->kind == RK_BINARY_HSACO;
    printf("wrote %s/%s.ll, %s/%s.%s (%zu bytes)", dir, a->kernel_name, dir, a->kernel_name, amd ? "hsaco" : "ptx",
           a->binary_size);
    if (a->cubin) printf(", %s/%s.cubin (%zu bytes)", dir, a->kernel_name, a->cubin_size);
    printf("\n%s for %s, %s, LLVM flavor %s%s\n", a->kernel_name, a->target, a->toolchain,
           rk_llvm_flavor_name(a->flavor), a->cache_hit ? ", cache hit" : "");
    printf("ms: passes %.3f  lower %.3f  compile %.3f  link %.3f  total %.3f", a->ms.passes, a->ms.lower,
           a->ms.compile, a->ms.link, a->ms.total);
    if (a->ms.fork > 0) printf("  (worker IPC %.3f)", a->ms.fork);
    printf("\n");
}

static const char about[] =
    "Compile FILE (ckdsl.ir v1, or LLVM IR when it ends in .ll; '-' reads ckdsl.ir from\n"
    "standard input) for target T and write DIR/NAME.ll and DIR/NAME.hsaco, or for NVIDIA\n"
    "DIR/NAME.ptx and, when ptxas is found, DIR/NAME.cubin. Every file is complete or absent.\n"
    "Exit 0 ok, 1 on errors, 2 on misuse.";

static const char environment[] =
    "Environment: ROCKE_TOOLCHAIN, ROCKE_LLVM_FLAVOR, ROCKE_CACHE, ROCKE_CACHE_DIR,\n"
    "ROCKE_COMGR_LIB, ROCKE_LLVM_LIB, ROCKE_LLC, ROCKE_OPT, ROCKE_LLD, ROCKE_PTXAS,\n"
    "ROCKE_LINKER (auto|internal|lld: the HSACO linker), ROCKE_COMPILE_INPROCESS,\n"
    "ROCKE_DEBUG (docs/compile.md).\n";

int cmd_compile(int argc, char **argv) {
    const char *file = NULL, *dir = NULL, *kernel = NULL, *toolchain = NULL, *flavor = NULL, *dumps = NULL;
    const rk_target *t = rk_target_default();
    uint32_t lvl = 3;
    bool no_cache = false, passes = false, inprocess = false;
    cli_stages dmp = {0};
    enum { BASE_OPTS = 10 };
    cli_opt opts[BASE_OPTS + 3 + 1] = {
        {.name = "--out", .alias = 'o', .kind = CLI_PATH, .dst = &dir, .meta = "DIR", .required = true,
         .help = "output folder (created if missing; its parent must exist)"},
        {.name = "--target", .kind = CLI_TARGET, .dst = &t, .meta = "T", .help = "the target to compile for"},
        {.name = "--toolchain", .kind = CLI_STRING, .dst = &toolchain, .meta = "auto|comgr|llvm|tools|none",
         .help = "auto (comgr, then libLLVM, then tools), comgr, llvm, tools, none\n(cache only); default: $ROCKE_TOOLCHAIN or auto"},
        {.name = "--flavor", .kind = CLI_STRING, .dst = &flavor, .meta = "F",
         .help = "LLVM IR flavor llvm20, llvm22, llvm23\n(default: $ROCKE_LLVM_FLAVOR, else the toolchain's LLVM)"},
        {.name = "--no-cache", .kind = CLI_FLAG, .dst = &no_cache,
         .help = "do not read or write the compile cache ($ROCKE_CACHE=0)"},
        {.name = "--dump", .kind = CLI_STRING, .dst = &dumps, .meta = "STAGES",
         .help = "print stages to standard error: llir, isa (AMD), ptx (NVIDIA),\ncomma-separated"},
        {.name = "--opt-level", .alias = 'O', .kind = CLI_U32, .dst = &lvl, .meta = "N", .ranged = true, .lo = 0,
         .hi = 3, .def = "3", .help = "optimization level"},
        {.name = "--passes", .kind = CLI_FLAG, .dst = &passes, .help = "fold/CSE/DCE the kernel before lowering"},
        {.name = "--kernel", .kind = CLI_STRING, .dst = &kernel, .meta = "NAME",
         .help = "the kernel of a .ll file (default: its only kernel)"},
        {.name = "--inprocess", .kind = CLI_FLAG, .dst = &inprocess,
         .help = "run libLLVM in this process, not in a worker (an LLVM crash ends rocke)"},
    };
    cli_stage_opts(&dmp, opts + BASE_OPTS);
    cli_cmd c = {.name = "compile", .args = "FILE", .about = about, .more = environment, .opts = opts,
                 .pos = &file, .min_pos = 1, .max_pos = 1};
    int prc = cli_parse(&c, argc, argv, 1);
    if (prc >= 0) return prc;
    rk_compile_options o;
    if (rk_compile_options_default(t, &o) != RK_OK) return cli_fail("compile");
    o.opt_level = lvl;
    if (toolchain && rk_toolchain_parse(toolchain, &o.toolchain) != RK_OK) return cli_fail("compile") + 1;
    if (flavor) {
        if (rk_llvm_flavor_parse(flavor, &o.flavor) != RK_OK) return cli_fail("compile") + 1;
        o.flavor_set = true;
    }
    if (dumps && rk_dump_parse(dumps, &o.dump) != RK_OK) return cli_fail("compile") + 1;
    if (no_cache) o.cache = false;
    o.run_passes = passes;
    if (inprocess) o.inprocess = true;
    if ((prc = cli_stage_apply(&c, &dmp, &o)) >= 0) return prc;
    if (!cli_out_dir_usable("compile", dir)) return 1;

    char *text;
    size_t n;
    if (rk_read_file(file, &text, &n) != RK_OK) return cli_fail("compile");
    rk_artifact *a = NULL;
    rk_status s;
    bool ll = ends_with(file, ".ll");
    double t0 = cli_now_ms(), parse_ms = 0;
    if (ll) {
        char name[256];
        if (!kernel && !find_kernel(text, name, sizeof name)) {
            fprintf(stderr, "rocke compile: %s: cannot tell the kernel (none or several amdgpu_kernel/ptx_kernel "
                            "definitions); pass --kernel NAME\n", file);
            rk_free(text, n + 1);
            return 1;
        }
        s = rk_compile_llvm_ir(text, kernel ? kernel : name, t, &o, &a);
    } else {
        rk_kernel *k = NULL;
        s = rk_parse(text, n, &k);
        parse_ms = cli_now_ms() - t0;
        if (s != RK_OK) {
            fprintf(stderr, "rocke compile: %s:%s\n", file, rk_error_message());
            rk_free(text, n + 1);
            return 1;
        }
        if (!cli_stage_parse_dump("compile", &dmp, o.dump_after, k)) {
            rk_kernel_free(k);
            rk_free(text, n + 1);
            return 1;
        }
        s = rk_compile(k, t, &o, &a);
        rk_kernel_free(k);
    }
    rk_free(text, n + 1);
    if (s == RK_OK) s = rk_artifact_write(a, dir);
    if (s != RK_OK) {
        rk_artifact_free(a);
        return cli_fail("compile");
    }
    print_result(a, dir);
    if (dmp.time) cli_stage_table(a, ll ? NULL : "parse", parse_ms);
    cli_recompile_note("compile", a);
    rk_artifact_free(a);
    return 0;
}
