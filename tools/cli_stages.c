/* rocke CLI — what compile, build and lower share to show what the compiler
 * did: the --dump-after/--dump-dir/--time-stages options, the stage table,
 * and the note when a kernel is compiled again because its cache key
 * changed. Layer: tools. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

void cli_stage_opts(cli_stages *d, cli_opt out[3]) {
    out[0] = (cli_opt){.name = "--dump-after", .kind = CLI_STRING, .dst = &d->after, .meta = "STAGES",
                       .help = "write the IR after these stages into --dump-dir, comma-separated:\n"
                               "parse, verify, fold, cse, dce (each round, with --passes),\n"
                               "lower (LLVM IR), codegen (ISA or PTX, + SASS when cuobjdump or\n"
                               "nvdisasm is found), all (default with --dump-dir)"};
    out[1] = (cli_opt){.name = "--dump-dir", .kind = CLI_PATH, .dst = &d->dir, .meta = "DIR",
                       .help = "the folder for the dump files, named NN-STAGE.EXT in pipeline order"};
    out[2] = (cli_opt){.name = "--time-stages", .kind = CLI_FLAG, .dst = &d->time,
                       .help = "print a table of every stage's time (parse, verify, each pass,\n"
                               "lower, LLVM opt, codegen, link)"};
}

int cli_stage_apply(const cli_cmd *c, const cli_stages *d, rk_compile_options *o) {
    if (d->after && !d->dir) return cli_misuse(c, "--dump-after needs --dump-dir DIR (where the files go)");
    if (!d->dir) return -1;
    uint32_t mask = RK_AFTER_ALL;
    if (d->after && rk_dump_after_parse(d->after, &mask)) return cli_misuse(c, "--dump-after: %s", rk_error_message());
    if (strlen(d->dir) >= sizeof o->dump_dir) return cli_misuse(c, "--dump-dir: the path is too long");
    struct stat st;
    if (!o && stat(d->dir, &st) == 0 && !S_ISDIR(st.st_mode)) {   /* a check only: nothing made yet */
        fprintf(stderr, "rocke %s: the output path '%s' exists and is not a folder\n", c->name, d->dir);
        return 2;
    }
    int rc = o ? cli_out_dir_make(c->name, d->dir) : 0;   /* one message either way */
    if (rc) return rc;
    if (o) {
        o->dump_after = mask;
        snprintf(o->dump_dir, sizeof o->dump_dir, "%s", d->dir);
    }
    return -1;
}

bool cli_stage_parse_dump(const char *cmd, const cli_stages *d, uint32_t mask, const rk_kernel *k) {
    if (!d->dir || !(mask & RK_AFTER_PARSE)) return true;
    char *text = rk_serialize(k);
    rk_status s = text ? rk_dump_write(d->dir, RK_DUMP_ORDER_PARSE, "parse", "ir", text, strlen(text))
                       : RK_ERR_NOMEM;
    rk_string_free(text);
    if (s) cli_fail(cmd);
    return s == RK_OK;
}

void cli_stage_row(FILE *f, const char *name, double ms) {
    if (name) fprintf(f, "  %-22s %10.3f\n", name, ms);
    else fprintf(f, "  %-22s %10s\n", "stage", "ms");
}

void cli_stage_table(const rk_artifact *a, const char *first, double first_ms) {
    cli_stage_row(stdout, NULL, 0);
    if (first) cli_stage_row(stdout, first, first_ms);
    for (uint32_t i = 0; i < a->nstages; i++) cli_stage_row(stdout, a->stages[i].name, a->stages[i].ms);
    /* the artifact's total holds the build time, not the parse */
    cli_stage_row(stdout, "total", a->ms.total + (first && strcmp(first, "build") ? first_ms : 0));
}

void cli_recompile_note(const char *cmd, const rk_artifact *a) {
    if (a->recompile_note[0])
        fprintf(stderr, "rocke %s: note: compiling %s again (now for %s): its cache key changed (%s)\n", cmd,
                a->kernel_name, a->target, a->recompile_note);
}
