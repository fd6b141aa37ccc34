/* rocke ir — check, print or canonicalize ckdsl.ir v1 files ("-" = stdin).
 * Exit 0 clean, 1 on bad IR or I/O errors, 2 on misuse. Layer: tools. */
#include <stdio.h>
#include <string.h>

#include "rocke/rocke.h"
#include "base/base_int.h"
#include "cli.h"

int cmd_ir(int argc, char **argv);

static const char usage_text[] =
    "usage: rocke ir <command> FILE     (FILE '-' reads standard input)\n"
    "\n"
    "commands:\n"
    "  check FILE [--target T]   parse and verify; report FILE:LINE: error: ... and exit 1 on errors\n"
    "  print FILE                MLIR-style human dump of the kernel\n"
    "  canon FILE                canonical ckdsl.ir v1: ids renumbered %0, %1, ... and @loc dropped\n"
    "\n"
    "rocke ir <command> --help describes one command.\n";

static const struct { const char *name, *about; } subs[] = {
    {"check",
     "Parse FILE as ckdsl.ir v1 and run the verifier (structure, scopes and types; with\n"
     "--target also the target's legality rules: features, matrix atoms, fp8 encodings).\n"
     "Diagnostics go to standard error as FILE:LINE: error: MESSAGE. Exit 0 when there is\n"
     "no error (warnings allowed), 1 otherwise."},
    {"print", "Parse FILE and write its MLIR-style human dump to standard output (not parsed back)."},
    {"canon",
     "Parse FILE and write its canonical form: ids renumbered %0, %1, ... in definition\n"
     "order, @loc dropped, attributes sorted. Equal canonical texts mean the same kernel."},
};

/* Parse errors read "LINE:COL: message": print them as FILE:LINE:COL: error: message. */
static int report_parse_error(const char *shown) {
    const char *m = rk_error_message(), *p = m;
    while (*p >= '0' && *p <= '9') p++;
    if (p > m && *p == ':' && p[1] >= '0' && p[1] <= '9') {
        p++;
        while (*p >= '0' && *p <= '9') p++;
        if (*p == ':' && p[1] == ' ') {
            fprintf(stderr, "%s:%.*s: error: %s\n", shown, (int)(p - m), m, p + 2);
            return 1;
        }
    }
    fprintf(stderr, "%s: error: %s\n", shown, m);
    return 1;
}

static int run(const char *sub, const char *file, const rk_target *t) {
    const char *shown = strcmp(file, "-") ? file : "<stdin>";
    char *text;
    size_t n;
    if (rk_read_file(file, &text, &n) != RK_OK) {
        fprintf(stderr, "rocke ir %s: %s\n", sub, rk_error_message());
        return 1;
    }
    int rc = 0;
    if (!strcmp(sub, "canon")) {
        char *out;
        if (rk_canonicalize(text, n, &out) != RK_OK) rc = report_parse_error(shown);
        else { fputs(out, stdout); rk_string_free(out); }
        rk_free(text, n + 1);
        return rc;
    }
    rk_kernel *k;
    rk_status st = rk_parse(text, n, &k);
    rk_free(text, n + 1);
    if (st != RK_OK) return report_parse_error(shown);
    if (!strcmp(sub, "print")) {
        char *out = rk_print(k);
        if (out) { fputs(out, stdout); fputc('\n', stdout); rk_string_free(out); }
        else rc = cli_fail("ir print");
    } else {
        rk_diags d;
        rk_diags_init(&d);
        st = t ? rk_target_verify(k, t, &d) : rk_verify(k, NULL, &d);
        rk_diags_print(&d, stderr, shown);
        if (st == RK_ERR_NOMEM) rc = cli_fail("ir check");
        else rc = d.nerrors ? 1 : 0;
        rk_diags_free(&d);
    }
    rk_kernel_free(k);
    return rc;
}

int cmd_ir(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    if (cli_is_help(argv[1])) {
        fputs(usage_text, stdout);
        return 0;
    }
    const char *sub = argv[1], *about = NULL;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(sub, subs[i].name)) about = subs[i].about;
    if (!about) {
        fprintf(stderr, "rocke ir: unknown command '%s' (legal: check, print, canon; see rocke ir --help)\n", sub);
        return 2;
    }
    const char *file = NULL;
    const rk_target *t = NULL;
    char name[16];
    snprintf(name, sizeof name, "ir %s", sub);
    cli_opt check_opts[] = {
        {.name = "--target", .kind = CLI_TARGET, .dst = &t, .meta = "T", .def = "",
         .help = "also check the target's rules (default: none)"},
        {0},
    };
    cli_opt no_opts[] = {{0}};
    cli_cmd c = {.name = name, .args = "FILE", .about = about, .opts = strcmp(sub, "check") ? no_opts : check_opts,
                 .pos = &file, .min_pos = 1, .max_pos = 1,
                 .more = "FILE '-' reads standard input. Exit 0 clean, 1 on bad IR or I/O errors, 2 on misuse.\n"};
    int rc = cli_parse(&c, argc, argv, 2);
    if (rc >= 0) return rc;
    return run(sub, file, t);
}
