/* rocke sweep — measure a family's knob space over shapes: `rocke sweep
 * FAMILY ...` runs a sweep, `rocke sweep report DIR` summarises one, `rocke
 * sweep merge DIR` joins Slurm shards. The options shared with `rocke tune`
 * live here. docs/sweep.md. Layer: tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep_int.h"

void sw_opts_table(sw_opts *o, cli_opt *opts, uint32_t max) {
    const cli_opt t[] = {
        {.name = "--out", .alias = 'o', .kind = CLI_PATH, .dst = &o->out, .meta = "DIR", .required = true,
         .help = "the sweep folder: results.jsonl, results.csv, sweep.json (created)"},
        {.name = "--target", .kind = CLI_TARGET, .dst = &o->t, .meta = "T", .help = "the target to build for"},
        {.name = "--shapes", .kind = CLI_STRING, .dst = &o->shapes_text, .meta = "S;S...",
         .help = "the shapes, ';' between them: 4096,4096;1024,50257 (named M=8,N=100 too)"},
        {.name = "--shapes-file", .kind = CLI_PATH, .dst = &o->shapes_file, .meta = "FILE",
         .help = "the shapes, one a line ('#' comments)"},
        {.name = "--knob", .kind = CLI_REPEATED, .dst = &o->knobs, .meta = "NAME[=V,...]",
         .help = "a knob to sweep over the values given, or over all its legal values\n"
                 "(one value: fixed); knobs not named are chosen by the heuristic per shape"},
        {.name = "--op", .kind = CLI_STRING, .dst = &o->op, .meta = "OP", .help = "the family's op (elementwise, reduce)"},
        {.name = "--dtype", .kind = CLI_STRING, .dst = &o->dtype, .meta = "T", .help = "the family's dtype knob (rocke build FAMILY --help lists its values)"},
        {.name = "--jobs", .alias = 'j', .kind = CLI_U32, .dst = &o->jobs, .meta = "N", .ranged = true, .lo = 1,
         .hi = SW_MAX_WORKERS, .help = "compile processes (default: the CPUs online)"},
        {.name = "--devices", .kind = CLI_STRING, .dst = &o->devices, .meta = "D",
         .help = "where configs run: auto (the first GPU, else the emulator), all (one worker\n"
                 "per GPU), emu, emu:N (N emulator workers), 0,1 (those GPUs); default auto"},
        {.name = "--shard", .kind = CLI_STRING, .dst = &o->shard_text, .meta = "I/N",
         .help = "run only shard I of N (every N-th item after pruning): a Slurm task"},
        {.name = "--slurm", .kind = CLI_FLAG, .dst = &o->slurm,
         .help = "write DIR/sweep.sbatch (a job array, one task per shard) and submit it"},
        {.name = "--shards", .kind = CLI_U32, .dst = &o->shards, .meta = "N", .ranged = true, .lo = 1, .hi = 1000,
         .help = "--slurm: the tasks of the array (default 4)"},
        {.name = "--partition", .kind = CLI_STRING, .dst = &o->partition, .meta = "P", .help = "--slurm: the partition"},
        {.name = "--gpus-per-task", .kind = CLI_U32, .dst = &o->gpus_per_task, .meta = "N", .ranged = true, .lo = 0,
         .hi = 64, .help = "--slurm: GPUs each task asks for (default 1; 0 for emulator shards)"},
        {.name = "--wait", .kind = CLI_FLAG, .dst = &o->wait,
         .help = "--slurm: wait for the array to finish, then merge the shards"},
        {.name = "--warmup", .kind = CLI_U32, .dst = &o->warmup, .meta = "N",
         .help = "untimed launches before timing (default 5; 1 on the emulator)"},
        {.name = "--iters", .kind = CLI_U32, .dst = &o->iters, .meta = "N",
         .help = "timed launches (default 20; 1 on the emulator)"},
        {.name = "--stable", .kind = CLI_DOUBLE, .dst = &o->stable, .meta = "R", .ranged = true, .dlo = 0, .dhi = 1,
         .help = "stop timing once a round of --min-iters runs moves the median of all runs\n"
                 "by at most R (0.01: 1%); --iters is then the most (default 0: --iters runs)"},
        {.name = "--min-iters", .kind = CLI_U32, .dst = &o->min_iters, .meta = "N", .ranged = true, .lo = 1,
         .hi = 1u << 20, .help = "with --stable: the runs of a round, so the fewest timed (default 10)"},
        {.name = "--seed", .kind = CLI_U64, .dst = &o->seed, .meta = "S", .help = "input seed (shape i uses S + i)"},
        {.name = "--build-only", .kind = CLI_FLAG, .dst = &o->build_only,
         .help = "compile every kernel into DIR/kernels and stop: the same command on a\n"
                 "machine without LLVM (a GPU box) then only runs them"},
        {.name = "--with-heuristic", .kind = CLI_FLAG, .dst = &o->heuristic,
         .help = "also run the heuristic's own choice at each shape (key heuristic@SHAPE;\n"
                 "rocke tune always does)"},
        {.name = "--quiet", .alias = 'q', .kind = CLI_FLAG, .dst = &o->quiet, .help = "no progress output"},
    };
    uint32_t n = RK_COUNTOF(t) < max ? (uint32_t)RK_COUNTOF(t) : max - 1;
    memcpy(opts, t, n * sizeof *opts);
    opts[n] = (cli_opt){0};
}

static const char about[] =
    "Sweep FAMILY's knobs over shapes for target T: enumerate the space (--knob subsets), prune it\n"
    "with the family's own checks before compiling (counted per rule), compile in parallel, run each\n"
    "config on the devices (verified against the host reference once, then timed) and write\n"
    "DIR/results.jsonl (a record per config x shape), DIR/results.csv and DIR/sweep.json. A sweep\n"
    "that was stopped resumes from DIR/results.jsonl. Sub-commands: `rocke sweep report DIR`,\n"
    "`rocke sweep merge DIR`. Exit 0 ok, 1 when a config failed or on errors, 2 on misuse.";

int sw_parse(const char *cmd, const char *about_text, int argc, char **argv, sw_opts *o, cli_opt *opts,
             uint32_t max, const char *out_help, const cli_opt *extra) {
    o->cmd = cmd;
    o->t = rk_target_default();
    o->seed = 1;
    o->gpus_per_task = 1;
    o->argc = argc;
    o->argv = argv;
    const char *family = NULL;
    sw_opts_table(o, opts, max);
    if (out_help) opts[0].help = out_help, opts[0].meta = "FILE";
    uint32_t nopt = 0;
    while (opts[nopt].name) nopt++;
    for (; extra && extra->name && nopt + 1 < max; extra++) opts[nopt++] = *extra;
    opts[nopt] = (cli_opt){0};
    cli_cmd c = {.name = cmd, .args = "FAMILY", .about = about_text, .opts = opts, .pos = &family, .min_pos = 1,
                 .max_pos = 1};
    int prc = cli_parse(&c, argc, argv, 1);
    if (prc >= 0) return prc;
    if (rk_family_parse(family, &o->fam)) return cli_misuse(&c, "%s", rk_error_message());
    if (!o->shapes_text == !o->shapes_file)
        return cli_misuse(&c, "give the shapes once: --shapes M,N[;M,N...] or --shapes-file FILE");
    if (!o->devices) o->devices = "auto";
    if (!o->jobs) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o->jobs = n < 1 ? 1 : n > SW_MAX_WORKERS ? SW_MAX_WORKERS : (uint32_t)n;
    }
    if (!o->shards) o->shards = 4;
    if (o->shard_text) {
        char *end;
        unsigned long i = strtoul(o->shard_text, &end, 10), n = *end == '/' ? strtoul(end + 1, &end, 10) : 0;
        if (*end || !n || i >= n || n > 100000)
            return cli_misuse(&c, "--shard '%s' must be I/N with 0 <= I < N (e.g. 0/4)", o->shard_text);
        o->shard_i = (uint32_t)i;
        o->shard_n = (uint32_t)n;
    }
    if (o->slurm && o->shard_text) return cli_misuse(&c, "--slurm makes the shards itself: drop --shard");
    if (!o->slurm && (o->partition || o->wait || cli_given(&c, "--shards") || cli_given(&c, "--gpus-per-task")))
        return cli_misuse(&c, "--partition, --shards, --gpus-per-task and --wait go with --slurm");
    return -1;
}

int cmd_sweep(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "report")) return sw_report(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "merge")) return sw_merge(argc, argv);
    sw_opts o = {0};
    cli_opt opts[40];
    int prc = sw_parse("sweep", about, argc, argv, &o, opts, RK_COUNTOF(opts), NULL, NULL);
    if (prc >= 0) return prc;
    return sw_sweep(&o);
}
