/* rocke sweep — what the sweep files share: the options, the knob space and
 * its items (config x shape), the worker pool, the records. docs/sweep.md.
 * Layer: tools. */
#ifndef ROCKE_SWEEP_INT_H
#define ROCKE_SWEEP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "rocke/kernels.h"
#include "rocke/manifest.h"
#include "rocke/runtime.h"
#include "rocke/target.h"
#include "base/base_int.h"
#include "cli.h"

enum { SW_MAX_KNOBS = 16, SW_MAX_VALUES = 64, SW_MAX_SHAPES = 256, SW_MAX_RULES = 32, SW_MAX_WORKERS = 64,
       SW_MAX_ITEMS = 100000 };

/* ---- options (cmd_sweep.c) ------------------------------------------------------ */
typedef struct sw_opts {
    const char *cmd;              /* "sweep" or "tune": messages read "rocke <cmd>: ..." */
    rk_family_id fam;
    const rk_target *t;
    const char *shapes_text, *shapes_file, *op, *dtype, *devices, *out, *shard_text, *partition;
    cli_list knobs;               /* --knob NAME[=v1,v2,...] */
    uint32_t jobs, warmup, iters, shards, gpus_per_task;
    uint32_t shard_i, shard_n;    /* --shard i/n (n = 0: none) */
    uint64_t seed;
    double stable;                /* --stable: timing stops once a round moves the median by at most this */
    uint32_t min_iters;           /* --min-iters: a round's runs */
    bool slurm, wait, quiet;
    bool build_only;              /* compile into DIR/kernels and stop (a machine without LLVM runs them) */
    bool heuristic;               /* add the heuristic's own choice per shape as a config (key heuristic@SHAPE) */
    double t0;                    /* CLOCK_MONOTONIC seconds when the sweep began (0: not one) */
    double setup_s, build_s, run_s;   /* its phases, for the manifest */
    int argc;                     /* the command line, for the Slurm tasks and the manifest */
    char **argv;
} sw_opts;
/* The shared option table of `rocke sweep` and `rocke tune` (ends in {0}). */
void sw_opts_table(sw_opts *o, cli_opt *opts, uint32_t max);

/* FAMILY, then the shared options (cmd_sweep.c) plus `extra` (may be NULL);
 * out_help (may be NULL) describes -o. -1: go on, else the exit code. */
int sw_parse(const char *cmd, const char *about_text, int argc, char **argv, sw_opts *o, cli_opt *opts,
             uint32_t max, const char *out_help, const cli_opt *extra);

/* ---- the space (cmd_sweep_space.c) ---------------------------------------------- */
typedef struct sw_knob {
    const rk_knob *kb;
    uint32_t index;               /* in the family's knob table */
    uint32_t nvals;
    char vals[SW_MAX_VALUES][64];
} sw_knob;

typedef struct sw_item {          /* one config at one shape */
    uint32_t config, shape;
    rk_instance in;               /* the swept knobs set, the others the heuristic's */
    char kernel[256];
    char key[512];                /* "block_size=64,vec=4@4,100": what resume and merge match */
    int build;                    /* index into sw_space.builds */
} sw_item;

typedef struct sw_build {         /* one distinct kernel, compiled once */
    uint32_t item;                /* the first item that needs it */
    bool done, ok;
    int32_t registers, spills;    /* -1: unknown */
    double build_ms;
    char error[512];
} sw_build;

typedef struct sw_rule {          /* a static pruning rule and what it removed */
    char name[64];
    uint32_t count;
    char example[320];
} sw_rule;

typedef struct sw_space {
    rk_instance base;             /* --op, --dtype and one-value knobs */
    uint64_t locked;              /* the swept and fixed knobs */
    sw_knob knob[SW_MAX_KNOBS];
    uint32_t nknobs, nconfigs, nshapes, nitems, nbuilds, nrules, pruned;   /* config nconfigs: the heuristic's */
    rk_shape shape[SW_MAX_SHAPES];
    sw_item *items;
    sw_build *builds;
    sw_rule rule[SW_MAX_RULES];
} sw_space;

/* Parse the knobs, shapes and fixed choices; enumerate and prune. Prints
 * the error (naming the legal knobs, values or the rules that pruned
 * everything) and returns false. */
bool sw_space_make(const sw_opts *o, sw_space *sp);
void sw_space_free(sw_space *sp);
/* "block_size=64,vec=4" ("heuristic" when nothing is swept). */
void sw_config_text(const sw_space *sp, const sw_item *it, char *buf, size_t n);

/* ---- the worker pool (cmd_sweep_pool.c) ----------------------------------------- */
/* Workers are forked processes, each handed one item at a time through a
 * pipe; each answers with one line. A worker that dies loses its item, which
 * goes back to the queue once; lost twice, it is reported as failed. */
typedef struct sw_pool {
    uint32_t nworkers;
    const char *name[SW_MAX_WORKERS];       /* for messages: "emu", "cuda:1" */
    void *ud;
    /* in the worker: open (NULL + message: the worker gives up; `first`: the
     * item it runs first), one item, close */
    void *(*open)(void *ud, uint32_t w, uint32_t first, char *err, size_t n);
    /* false: the worker stops after this line (its device failed) */
    bool (*job)(void *ud, void *ctx, uint32_t w, uint32_t item, rk_buf *line);
    void (*close)(void *ud, void *ctx);
    /* in the parent */
    void (*done)(void *ud, uint32_t item, uint32_t w, const char *line);
    void (*lost)(void *ud, uint32_t item, const char *why);   /* lost twice, or no worker left */
    void (*tick)(void *ud);
    int32_t pid[SW_MAX_WORKERS];            /* filled by sw_pool_run */
    const char *pid_file;                   /* when set: the workers' pids as JSON, for tests and tools */
} sw_pool;
/* Run items[0..n) through the pool. False when no worker could start. */
bool sw_pool_run(sw_pool *p, const uint32_t *items, uint32_t n, const char *cmd);

/* ---- jobs (cmd_sweep_job.c) ----------------------------------------------------- */
/* Build item's kernel (compile cache shared by every process) into kdir
 * (NAME.ll, the code object, NAME.build.json), read its registers and
 * spills; one JSON line {"ok", "registers", "spills", "build_ms", "error"}.
 * A kernel kdir already holds is not compiled again. */
void sw_build_job(const sw_space *sp, const rk_target *t, const char *kdir, uint32_t item, rk_buf *line);
/* The device check's kernel for outputs of type t into kdir (a code object
 * kdir already holds is kept); false when it does not build (the run then
 * checks those outputs on the host). */
bool sw_build_checker(const rk_target *t, const char *kdir, rk_scalar type);
/* A run worker: its device, bound at open; item `first`'s inputs and
 * reference are filled on another thread while the device opens. */
void *sw_run_open(const sw_opts *o, const sw_space *sp, const char *device, uint32_t first, char *err, size_t n);
/* Runs item's kernel: the emulator builds it in process, a GPU loads the
 * code object the build phase left in DIR/kernels. */
void sw_run_close(void *ctx);
bool sw_run_job(void *ctx, const sw_opts *o, const sw_space *sp, uint32_t w, uint32_t item, rk_buf *line);
/* The record fields every record has (key, config, shape, kernel, knobs, build). */
rk_json *sw_record_new(const sw_space *sp, const sw_opts *o, const sw_item *it);

/* ---- the run worker's problem (cmd_sweep_problem.c) ---------------------------- */
typedef struct sw_problem {
    bool have;
    uint32_t shape;               /* index into sw_space.shape */
    uint64_t seed;
    uint64_t gen;                 /* fills so far: what a device copy of it matches */
    rk_problem p;                 /* the inputs, staged for each config */
    rk_problem_ref ref;           /* computed once from them */
    uint32_t computed;            /* references this worker computed */
} sw_problem;
/* The problem of an item: the held one when it is of the same shape and
 * seed and rk_problem_reaim takes the instance (*reused; its host outputs
 * are left as they are: the device copy is restaged, cmd_sweep_device.c),
 * else a fresh fill and its reference. *ms: the host time this took. */
rk_status sw_problem_get(sw_problem *c, const rk_instance *in, const rk_shape *s, uint32_t shape, uint64_t seed,
                         bool *reused, double *ms);
void sw_problem_free(sw_problem *c);

/* ---- an item's timed launches (cmd_sweep_timing.c) -------------------------------- */
typedef struct sw_timer {         /* a worker's stream and events, kept for every item */
    rk_stream *s;
    rk_event **ev;
    uint32_t nev;
    double *ms, *sorted;
} sw_timer;
typedef struct sw_timing {
    uint32_t warmup, iters;       /* iters: the runs, or with stable > 0 the most */
    uint32_t min_iters;           /* with stable > 0: a round's runs */
    double stable;
} sw_timing;
typedef struct sw_times {
    double median_ms, min_ms, mean_ms, sum_ms;   /* over the timed runs */
    uint32_t samples, rounds;
    bool settled;                 /* stable > 0 and a round left the median within it */
} sw_times;
rk_status sw_time(sw_timer *t, rk_device *dev, rk_work_fn fn, void *ud, const sw_timing *o, sw_times *out);
void sw_timer_free(sw_timer *t);

/* ---- the device check's kernel (cmd_sweep_compare.c) ---------------------------- */
/* n at most SW_COMPARE_MAX_N: an i32 index that strides past n stays positive */
enum { SW_COMPARE_BLOCK = 256, SW_COMPARE_MAX_N = (1 << 30) };
bool sw_compare_supported(rk_scalar t);                  /* f32, f16, bf16 */
void sw_compare_name(rk_scalar t, char *buf, size_t n);  /* "rk_sweep_compare_bf16" */
/* The tolerance the kernel reads for a host tolerance: a float a little under it. */
float sw_compare_tol(double tol);
/* got, want (the reference rounded to t), tol (f32), res (i32[3]: bad count,
 * first bad index, largest difference's f32 bits; the caller sets 0,
 * INT32_MAX, 0), n (<= SW_COMPARE_MAX_N). NULL with the message on failure. */
rk_kernel *sw_compare_kernel(rk_scalar t, const rk_target *tg);
void sw_compare_grid(uint64_t n, uint32_t grid[3], uint32_t block[3]);

/* ---- the run worker's problem on its device (cmd_sweep_device.c) ------------------ */
typedef struct sw_checker {       /* a compare kernel loaded on the worker's device */
    bool tried, ok;
    rk_kernel *k;
    rk_module *mod;
    rk_function *fn;
} sw_checker;
typedef struct sw_devprob {
    bool have;
    uint64_t gen;                 /* the sw_problem fill it holds */
    rk_devptr d[RK_KSIG_MAX];     /* the problem's buffers */
    rk_devptr init[RK_KSIG_MAX];  /* in-out buffers' first contents */
    rk_devptr want[RK_KSIG_MAX], tol[RK_KSIG_MAX];   /* outputs checked on the device: the reference */
    rk_devptr res;
} sw_devprob;
/* The held problem on the device: uploaded with the reference for the
 * device check when c is a new fill (*fresh), else restaged there (outputs,
 * accumulators and workspaces zeroed, in-out buffers restored). */
rk_status sw_dev_stage(rk_device *dev, sw_devprob *d, const sw_problem *c, bool *fresh);
/* Every output compared on the device (chk by scalar type); *ran false (out
 * untouched) when an output has no device check (its type, a compare kernel
 * that did not load, over SW_COMPARE_MAX_N elements). */
rk_status sw_dev_check(rk_device *dev, const sw_devprob *d, const rk_problem *p, sw_checker *chk,
                       rk_problem_diff *out, bool *ran);
/* The outputs into the host problem's buffers, for the host check. */
rk_status sw_dev_fetch(rk_device *dev, const sw_devprob *d, rk_problem *p);
void sw_dev_free(rk_device *dev, sw_devprob *d);

/* ---- results (cmd_sweep_results.c) ---------------------------------------------- */
typedef struct sw_records {
    uint32_t n, cap, skipped;     /* skipped: lines that were not records */
    rk_json **r;
} sw_records;
/* Read DIR/results.jsonl (absent: none); a line that is not a record is
 * skipped with a warning naming file and line. */
bool sw_records_load(const char *cmd, const char *path, sw_records *out);
void sw_records_free(sw_records *r);
/* Write the records as the whole file (atomically). */
bool sw_records_rewrite(const char *cmd, const char *path, const sw_records *r);
const rk_json *sw_records_find(const sw_records *r, const char *key);
/* Append one record line to a results file. */
bool sw_append_line(const char *cmd, const char *path, const char *line);
/* DIR/results.csv from the records. */
bool sw_write_csv(const char *cmd, const char *dir, const sw_records *r);
/* `rocke sweep merge DIR`: DIR/shards/NAME/results.jsonl into DIR/results.jsonl. */
int sw_merge(int argc, char **argv);
int sw_merge_dir(const char *dir);   /* the same for a folder; exit status */
double sw_num(const rk_json *j, const char *key, double def);
const char *sw_str(const rk_json *j, const char *key);
/* The best verified record of each shape, in the order shapes first occur
 * (best[i] NULL where none was verified); at most max shapes. */
uint32_t sw_best_per_shape(const sw_records *r, const rk_json **best, char shapes[][128], uint32_t max);
/* The sweep manifest DIR/sweep.json. */
bool sw_write_manifest(const sw_opts *o, const sw_space *sp, const sw_records *r, const char *devices);

/* The GPUs the "cuda" or "hip" driver counts (0: none, or no driver); in a
 * child process only (cmd_sweep_gpus.c). */
uint32_t sw_gpu_count(const char *kind);

/* ---- the sweep (cmd_sweep_run.c), report, Slurm ---------------------------------- */
/* Run the sweep of o into o->out; exit status (0 ok, 1 failures, 2 misuse). */
int sw_sweep(sw_opts *o);
int sw_report(int argc, char **argv);
/* Write DIR/sweep.sbatch and submit it (--slurm). */
int sw_slurm_submit(const sw_opts *o, uint32_t nitems);

#endif
