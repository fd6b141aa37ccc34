/* rocke lower — lower a ckdsl.ir v1 kernel to LLVM IR text for a target.
 * Exit 0 on success, 1 on bad IR / illegal kernel / I/O errors, 2 on misuse.
 * Layer: tools. */
#include <stdio.h>
#include <string.h>

#include "rocke/rocke.h"
#include "base/base_int.h"
#include "cli.h"

static const char usage_text[] =
    "usage: rocke lower FILE.ir [--target T] [--flavor F] [-o OUT.ll]\n"
    "\n"
    "Parse FILE (ckdsl.ir v1, '-' reads standard input), verify it against the target and\n"
    "write the LLVM IR module to standard output or OUT.ll (written atomically).\n"
    "\n"
    "  --target T   gfx90a, gfx942, gfx950 (default); NVIDIA targets are listed by\n"
    "               'rocke targets' and lower once the NVPTX lowering exists\n"
    "  --flavor F   the LLVM that will read the text: llvm20, llvm22 (default), llvm23;\n"
    "               ROCKE_LLVM_FLAVOR sets it when the flag is absent\n"
    "  -o OUT.ll    output file\n";

static int misuse(const char *what, const char *arg) {
    fprintf(stderr, "rocke lower: %s%s%s (see rocke lower --help)\n", what, arg ? " " : "", arg ? arg : "");
    return 2;
}

int cmd_lower(int argc, char **argv) {
    const char *file = NULL, *target = NULL, *flavor = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(usage_text, stdout);
            return 0;
        }
        const char **slot = !strcmp(a, "--target") ? &target : !strcmp(a, "--flavor") ? &flavor
                          : !strcmp(a, "-o") ? &out : NULL;
        if (slot) {
            if (i + 1 == argc) return misuse("missing value after", a);
            *slot = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            return misuse("unknown option", a);
        } else if (file) {
            return misuse("more than one input file:", a);
        } else {
            file = a;
        }
    }
    if (!file) return misuse("no input file", NULL);
    const rk_target *t = target ? rk_target_find(target) : rk_target_default();
    if (!t) {
        fprintf(stderr, "rocke lower: %s\n", rk_error_message());
        return 2;
    }
    rk_llvm_flavor fl;
    if (rk_llvm_flavor_resolve(flavor, &fl) != RK_OK) {
        fprintf(stderr, "rocke lower: %s\n", rk_error_message());
        return 2;
    }
    char *text;
    size_t n;
    if (rk_read_file(file, &text, &n) != RK_OK) return cli_fail("lower");
    const char *shown = strcmp(file, "-") ? file : "<stdin>";
    rk_kernel *k = NULL;
    rk_status s = rk_parse(text, n, &k);
    rk_free(text, n + 1);
    if (s != RK_OK) {
        fprintf(stderr, "%s:%s\n", shown, rk_error_message());
        return 1;
    }
    char *ll = NULL;
    s = rk_lower_llvm(k, t, fl, &ll);
    rk_kernel_free(k);
    if (s != RK_OK) {
        fprintf(stderr, "rocke lower: %s: %s\n", shown, rk_error_message());
        return 1;
    }
    int rc = 0;
    if (out) {
        if (rk_write_file_atomic(out, ll, strlen(ll)) != RK_OK) rc = cli_fail("lower");
    } else if (fputs(ll, stdout) == EOF || fflush(stdout) != 0) {
        fprintf(stderr, "rocke lower: cannot write standard output\n");
        rc = 1;
    }
    rk_string_free(ll);
    return rc;
}
