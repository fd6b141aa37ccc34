/* rocke compile — a ckdsl.ir v1 kernel (or an LLVM IR .ll file) to
 * DIR/NAME.ll plus DIR/NAME.hsaco (AMD) or DIR/NAME.ptx and DIR/NAME.cubin
 * (NVIDIA), printing the stage timings. Exit 0 ok, 1 on errors, 2 on misuse.
 * Layer: tools. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"
#include "base/base_int.h"
#include "cli.h"

int cmd_compile(int argc, char **argv);

static const char usage_text[] =
    "usage: rocke compile FILE -o DIR [--target T] [--toolchain auto|comgr|llvm|tools]\n"
    "                     [--flavor llvm20|llvm22|llvm23] [--no-cache] [--dump=llir,isa,ptx]\n"
    "                     [-O N] [--passes] [--kernel NAME] [--inprocess]\n"
    "\n"
    "Compile FILE (ckdsl.ir v1, or LLVM IR when it ends in .ll; '-' reads ckdsl.ir from\n"
    "standard input) for target T (default: the default target of `rocke targets`) and\n"
    "write DIR/NAME.ll and DIR/NAME.hsaco, or for NVIDIA DIR/NAME.ptx and, when ptxas is\n"
    "found, DIR/NAME.cubin. Every file is complete or absent.\n"
    "\n"
    "  -o DIR          output folder (created if missing; its parent must exist)\n"
    "  --target T      gfx90a, gfx942, gfx950, sm_80, sm_90, sm_90a\n"
    "  --toolchain     auto (comgr, then libLLVM, then tools), comgr, llvm, tools\n"
    "                  (default: $ROCKE_TOOLCHAIN or auto)\n"
    "  --flavor F      LLVM IR flavor (default: $ROCKE_LLVM_FLAVOR, else the toolchain's LLVM)\n"
    "  --no-cache      do not read or write the compile cache ($ROCKE_CACHE=0)\n"
    "  --dump=STAGES   print stages to standard error: llir, isa (AMD), ptx (NVIDIA)\n"
    "  -O N            optimization level 0..3 (default 3)\n"
    "  --passes        fold/CSE/DCE the kernel before lowering\n"
    "  --kernel NAME   the kernel of a .ll file (default: its only kernel)\n"
    "  --inprocess     run libLLVM in this process, not in a worker (an LLVM crash ends rocke)\n"
    "\n"
    "Environment: ROCKE_TOOLCHAIN, ROCKE_LLVM_FLAVOR, ROCKE_CACHE, ROCKE_CACHE_DIR,\n"
    "ROCKE_COMGR_LIB, ROCKE_LLVM_LIB, ROCKE_LLC, ROCKE_OPT, ROCKE_LLD, ROCKE_PTXAS,\n"
    "ROCKE_LINKER (auto|internal|lld: the HSACO linker), ROCKE_COMPILE_INPROCESS,\n"
    "ROCKE_DEBUG (docs/compile.md).\n";

static int misuse(const char *msg, const char *arg) {
    fprintf(stderr, "rocke compile: %s%s%s (see rocke compile --help)\n", msg, arg ? " " : "", arg ? arg : "");
    return 2;
}

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

/* Fail before compiling when DIR cannot be written or created. */
static bool dir_usable(const char *dir) {
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "rocke compile: the output path '%s' exists and is not a folder\n", dir);
            return false;
        }
        if (access(dir, W_OK | X_OK) != 0) {
            fprintf(stderr, "rocke compile: the output folder '%s' is not writable: %s\n", dir, strerror(errno));
            return false;
        }
        return true;
    }
    char parent[RK_PATH_MAX];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    if (slash == parent) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(parent, sizeof parent, ".");
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode) || access(parent, W_OK | X_OK) != 0) {
        fprintf(stderr, "rocke compile: cannot create the output folder '%s': %s\n", dir,
                errno ? strerror(errno) : "parent is not a writable folder");
        return false;
    }
    return true;
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

int cmd_compile(int argc, char **argv) {
    const char *file = NULL, *dir = NULL, *target = NULL, *kernel = NULL;
    const char *toolchain = NULL, *flavor = NULL, *dumps = NULL, *olevel = NULL;
    bool no_cache = false, passes = false, inprocess = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "-o")           ? &dir
                            : !strcmp(a, "--target")    ? &target
                            : !strcmp(a, "--toolchain") ? &toolchain
                            : !strcmp(a, "--flavor")    ? &flavor
                            : !strcmp(a, "--kernel")    ? &kernel
                            : !strcmp(a, "-O")          ? &olevel
                            : !strcmp(a, "--dump")      ? &dumps
                                                        : NULL;
        if (cli_is_help(a)) {
            fputs(usage_text, stdout);
            return 0;
        } else if (slot) {
            if (i + 1 >= argc) return misuse("missing value after", a);
            *slot = argv[++i];
        } else if (!strncmp(a, "--dump=", 7)) dumps = a + 7;
        else if (!strncmp(a, "--target=", 9)) target = a + 9;
        else if (!strncmp(a, "--toolchain=", 12)) toolchain = a + 12;
        else if (!strncmp(a, "--flavor=", 9)) flavor = a + 9;
        else if (!strncmp(a, "-O", 2) && a[2]) olevel = a + 2;
        else if (!strcmp(a, "--no-cache")) no_cache = true;
        else if (!strcmp(a, "--passes")) passes = true;
        else if (!strcmp(a, "--inprocess")) inprocess = true;
        else if (a[0] == '-' && a[1]) return misuse("unknown option", a);
        else if (file) return misuse("more than one input file:", a);
        else file = a;
    }
    if (!file) return misuse("no input file", NULL);
    if (!dir) return misuse("no output folder (-o DIR)", NULL);
    const rk_target *t = target ? rk_target_find(target) : rk_target_default();
    if (!t) {
        fprintf(stderr, "rocke compile: %s\n", rk_error_message());
        return 2;
    }
    rk_compile_options o;
    if (rk_compile_options_default(t, &o) != RK_OK) return cli_fail("compile");
    unsigned long long lvl = 0;
    if (olevel && (!cli_parse_u64("compile", "-O", olevel, &lvl) || lvl > 3)) {
        if (lvl > 3) fprintf(stderr, "rocke compile: -O %s is out of range (legal: 0..3)\n", olevel);
        return 2;
    }
    if (olevel) o.opt_level = (uint32_t)lvl;
    if (toolchain && rk_toolchain_parse(toolchain, &o.toolchain) != RK_OK) return cli_fail("compile") + 1;
    if (flavor) {
        if (rk_llvm_flavor_parse(flavor, &o.flavor) != RK_OK) return cli_fail("compile") + 1;
        o.flavor_set = true;
    }
    if (dumps && rk_dump_parse(dumps, &o.dump) != RK_OK) return cli_fail("compile") + 1;
    if (no_cache) o.cache = false;
    o.run_passes = passes;
    if (inprocess) o.inprocess = true;
    if (!dir_usable(dir)) return 1;

    char *text;
    size_t n;
    if (rk_read_file(file, &text, &n) != RK_OK) return cli_fail("compile");
    rk_artifact *a = NULL;
    rk_status s;
    if (ends_with(file, ".ll")) {
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
        if (s != RK_OK) {
            fprintf(stderr, "rocke compile: %s:%s\n", file, rk_error_message());
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
    rk_artifact_free(a);
    return 0;
}
