/* rocke sweep --slurm — the sweep as a Slurm job array: DIR/sweep.sbatch
 * runs task i as `rocke sweep ... --shard i/n -o DIR/shards/i`, submitted
 * with sbatch; `rocke sweep merge DIR` (or --wait) joins the shards.
 * Layer: tools. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/compile_int.h"
#include "sweep_int.h"

/* 'text' for sh, single quotes closed around embedded ones. */
static void quote(rk_buf *b, const char *s) {
    rk_buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'') rk_buf_puts(b, "'\\''");
        else rk_buf_putc(b, *s);
    }
    rk_buf_putc(b, '\'');
}

/* Options of the submitting command that the tasks must not see, and
 * whether each takes a value. */
static int dropped(const char *a) {
    static const struct { const char *name; int value; } d[] = {
        {"--slurm", 0}, {"--wait", 0}, {"--shards", 1}, {"--partition", 1}, {"--gpus-per-task", 1},
        {"--gpus_per_task", 1}, {"--out", 1}, {"-o", 1}};
    for (size_t i = 0; i < RK_COUNTOF(d); i++) {
        size_t n = strlen(d[i].name);
        if (!strcmp(a, d[i].name)) return 1 + d[i].value;              /* the option, and its value next */
        if (!strncmp(a, d[i].name, n) && a[n] == '=') return 1;       /* --out=DIR */
        if (!strcmp(d[i].name, "-o") && !strncmp(a, "-o", 2) && a[2]) return 1;   /* -oDIR */
    }
    return 0;
}

int sw_slurm_submit(const sw_opts *o, uint32_t nitems) {
    uint32_t n = o->shards < nitems ? o->shards : nitems ? nitems : 1;
    char out[PATH_MAX], cwd[PATH_MAX], exe[PATH_MAX], shards[PATH_MAX + 16], script[PATH_MAX + 16];
    snprintf(shards, sizeof shards, "%s/shards", o->out);
    if (cli_mkdirs(shards) || !realpath(o->out, out) || !getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "rocke %s: cannot create %s\n", o->cmd, shards);
        return 1;
    }
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) snprintf(exe, sizeof exe, "%s", o->argv[0]);
    else exe[len] = 0;
    rk_buf b;
    rk_buf_init(&b);
    rk_buf_printf(&b, "#!/bin/sh\n# rocke sweep as a Slurm job array: task i runs shard i of %u.\n", n);
    rk_buf_printf(&b, "#SBATCH --job-name=rocke-sweep\n#SBATCH --array=0-%u\n#SBATCH --ntasks=1\n", n - 1);
    rk_buf_puts(&b, "#SBATCH --output=");
    rk_buf_printf(&b, "%s/shards/slurm-%%a.out\n#SBATCH --chdir=%s\n", out, cwd);
    if (o->partition) rk_buf_printf(&b, "#SBATCH --partition=%s\n", o->partition);
    if (o->gpus_per_task) rk_buf_printf(&b, "#SBATCH --gpus-per-task=%u\n", o->gpus_per_task);
    rk_buf_puts(&b, "exec ");
    quote(&b, exe);
    rk_buf_printf(&b, " %s", o->cmd);
    for (int i = 1; i < o->argc; i++) {
        int d = dropped(o->argv[i]);
        if (d) { i += d - 1; continue; }
        rk_buf_putc(&b, ' ');
        quote(&b, o->argv[i]);
    }
    rk_buf_printf(&b, " --shard \"$SLURM_ARRAY_TASK_ID/%u\" -o ", n);
    quote(&b, out);
    rk_buf_puts(&b, "/shards/\"$SLURM_ARRAY_TASK_ID\"\n");
    snprintf(script, sizeof script, "%s/sweep.sbatch", out);
    if (b.oom || rk_write_file_atomic(script, b.data, b.len)) {
        fprintf(stderr, "rocke %s: %s\n", o->cmd, b.oom ? "out of memory" : rk_error_message());
        rk_buf_free(&b);
        return 1;
    }
    rk_buf_free(&b);
    static const char *const names[] = {"sbatch", NULL}, *const dirs[] = {"/usr/bin", "/usr/local/bin", NULL};
    char sbatch[RK_PATH_MAX];
    rk_buf tried;
    rk_buf_init(&tried);
    cc_found f = cc_find_tool("ROCKE_SBATCH", names, dirs, sbatch, &tried);
    if (f != CC_FOUND) {
        fprintf(stderr, "rocke %s: wrote %s, but sbatch was not found (tried %s); submit it with sbatch yourself\n",
                o->cmd, script, rk_buf_cstr(&tried));
        rk_buf_free(&tried);
        return 1;
    }
    rk_buf_free(&tried);
    const char *argv[] = {sbatch, "--parsable", o->wait ? "--wait" : script, o->wait ? script : NULL, NULL};
    printf("rocke %s: %u items in %u shards: submitting %s%s\n", o->cmd, nitems, n, script,
           o->wait ? " (waiting for the array to finish)" : "");
    fflush(stdout);
    cc_proc p;
    if (cc_run(argv, &p)) {
        fprintf(stderr, "rocke %s: %s\n", o->cmd, rk_error_message());
        return 1;
    }
    const char *job = rk_buf_cstr(&p.out);
    int rc = 0;
    if (p.exit_code && !(o->wait && *job)) {
        fprintf(stderr, "rocke %s: sbatch failed (exit %d): %s", o->cmd, p.exit_code, rk_buf_cstr(&p.err));
        rc = 1;
    } else {
        printf("rocke %s: Slurm job %.*s%s; shards in %s/shards\n", o->cmd, (int)strcspn(job, "\n;"), job,
               o->wait ? " finished" : " submitted", out);
        if (!o->wait) printf("rocke %s: when it ends: rocke sweep merge %s\n", o->cmd, o->out);
        if (p.exit_code) fprintf(stderr, "rocke %s: a task of the array failed (sbatch exit %d): see %s/shards\n",
                                 o->cmd, p.exit_code, out);
    }
    int task_failed = p.exit_code != 0;
    cc_proc_free(&p);
    fflush(stdout);
    if (!rc && o->wait) rc = sw_merge_dir(o->out) || task_failed ? 1 : 0;
    return rc;
}
