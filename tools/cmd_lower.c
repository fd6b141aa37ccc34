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
    cli_stages dmp = {0};
    cli_opt opts[3 + 3 + 1] = {
        {.name = "--target", .kind = CLI_TARGET, .dst = &t, .meta = "T", .help = "the target to lower for"},
        {.name = "--flavor", .kind = CLI_STRING, .dst = &flavor, .meta = "F",
         .help = "the LLVM that will read the text: llvm20, llvm22 (default), llvm23;\n"
                 "ROCKE_LLVM_FLAVOR sets it when the flag is absent"},
        {.name = "--out", .alias = 'o', .kind = CLI_PATH, .dst = &out, .meta = "OUT.ll",
         .help = "output file (default: standard output)"},
    };
    cli_stage_opts(&dmp, opts + 3);
    cli_cmd c = {.name = "lower", .args = "FILE.ir", .opts = opts, .pos = &file, .min_pos = 1, .max_pos = 1,
                 .about = "Parse FILE (ckdsl.ir v1, '-' reads standard input), verify it against the target and\n"
                          "write the LLVM IR module to standard output or OUT.ll (written whole or not at all).\n"
                          "Exit 0 on success, 1 on bad IR, an illegal kernel or I/O errors, 2 on misuse.",
                 .more = "--dump-after: lower runs the stages parse and lower (the others are compile's)."};
    int prc = cli_parse(&c, argc, argv, 1);
    if (prc >= 0) return prc;
    rk_compile_options dump = {.dump_after = 0};
    if ((prc = cli_stage_apply(&c, &dmp, &dump)) >= 0) return prc;
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
    double t0 = cli_now_ms();
    rk_status s = rk_parse(text, n, &k);
    double parse_ms = cli_now_ms() - t0;
    rk_free(text, n + 1);
    if (s != RK_OK) {
        fprintf(stderr, "%s:%s\n", shown, rk_error_message());
        return 1;
    }
    if (!cli_stage_parse_dump("lower", &dmp, dump.dump_after, k)) {
        rk_kernel_free(k);
        return 1;
    }
    char *ll = NULL;
    t0 = cli_now_ms();
    s = rk_lower_llvm(k, t, fl, &ll);
    double lower_ms = cli_now_ms() - t0;
    rk_kernel_free(k);
    if (s != RK_OK) {
        fprintf(stderr, "rocke lower: %s: %s\n", shown, rk_error_message());
        return 1;
    }
    int rc = 0;
    if ((dump.dump_after & RK_AFTER_LOWER) &&
        rk_dump_write(dump.dump_dir, RK_DUMP_ORDER_LOWER, "lower", "ll", ll, strlen(ll)))
        rc = cli_fail("lower");
    else if (out) {
        if (rk_write_file_atomic(out, ll, strlen(ll)) != RK_OK) rc = cli_fail("lower");
    } else {
        fputs(ll, stdout);   /* write errors: cli_close_streams */
    }
    if (!rc && dmp.time) {
        /* on standard error: standard output may be the LLVM IR */
        cli_stage_row(stderr, NULL, 0);
        cli_stage_row(stderr, "parse", parse_ms);
        cli_stage_row(stderr, "lower (verify + emit)", lower_ms);
        cli_stage_row(stderr, "total", parse_ms + lower_ms);
    }
    rk_string_free(ll);
    return rc;
}
