/* rocke lower — lower a ckdsl.ir v1 kernel to LLVM IR text for a target.
 * Exit 0 on success, 1 on bad IR / illegal kernel / I/O errors, 2 on misuse.
 * Layer: tools. */
#include <stdio.h>
#include <string.h>

#include "rocke/rocke.h"
#include "base/base_int.h"
#include "cli.h"

int cmd_lower(int argc, char **argv) {
    const char *file = NULL, *flavor = NULL, *out = NULL;
    const rk_target *t = rk_target_default();
    cli_opt opts[] = {
        {.name = "--target", .kind = CLI_TARGET, .dst = &t, .meta = "T", .help = "the target to lower for"},
        {.name = "--flavor", .kind = CLI_STRING, .dst = &flavor, .meta = "F",
         .help = "the LLVM that will read the text: llvm20, llvm22 (default), llvm23;\n"
                 "ROCKE_LLVM_FLAVOR sets it when the flag is absent"},
        {.name = "--out", .alias = 'o', .kind = CLI_PATH, .dst = &out, .meta = "OUT.ll",
         .help = "output file (default: standard output)"},
        {0},
    };
    cli_cmd c = {.name = "lower", .args = "FILE.ir", .opts = opts, .pos = &file, .min_pos = 1, .max_pos = 1,
                 .about = "Parse FILE (ckdsl.ir v1, '-' reads standard input), verify it against the target and\n"
                          "write the LLVM IR module to standard output or OUT.ll (written whole or not at all).\n"
                          "Exit 0 on success, 1 on bad IR, an illegal kernel or I/O errors, 2 on misuse."};
    int prc = cli_parse(&c, argc, argv, 1);
    if (prc >= 0) return prc;
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
    } else {
        fputs(ll, stdout);   /* write errors: cli_close_streams */
    }
    rk_string_free(ll);
    return rc;
}
