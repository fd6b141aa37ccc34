/* rocke CLI — what the sub-commands share: the option parser (cli_opts.c),
 * the shape and scalar parsers (cli_shape.c), messages and outputs (cli.c).
 * Layer: tools. */
#ifndef ROCKE_CLI_H
#define ROCKE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rocke/compile.h"
#include "rocke/kernels.h"

/* Every sub-command's entry point. */
#define CMD(name, help) int cmd_##name(int argc, char **argv);
#include "commands.def"

/* ---- cli_opts.c: the one option parser --------------------------------------
 * Each command declares its options as a table of cli_opt ending in {0} and
 * calls cli_parse once. Spellings: --name VALUE, --name=VALUE, -x VALUE, -xVALUE
 * (short alias); '-' and '_' are the same in names (--block-size, --block_size);
 * "--" ends the options; -h/--help prints the help made from the table to
 * standard output. Every option but a CLI_REPEATED one may be given once. */
typedef enum cli_kind {
    CLI_FLAG,     /* bool: no value */
    CLI_STRING,   /* const char *, non-empty; .legal "a|b|c" restricts it */
    CLI_U32,      /* uint32_t; .ranged: [.lo, .hi], else the type's full range */
    CLI_U64,      /* uint64_t */
    CLI_I64,      /* int64_t */
    CLI_DOUBLE,   /* double, finite; .ranged: [.dlo, .dhi] */
    CLI_TARGET,   /* const rk_target *: a name of the catalog, or a word of .legal (stores NULL) */
    CLI_PATH,     /* const char *, a file or folder name */
    CLI_REPEATED, /* cli_list: each occurrence's text, in order */
} cli_kind;

#define CLI_LIST_MAX 64
typedef struct cli_list {
    const char *v[CLI_LIST_MAX];
    uint32_t n;
} cli_list;

typedef struct cli_opt {
    const char *name;    /* "--iters"; NULL ends the table */
    char alias;          /* 'o' for -o; 0: none */
    cli_kind kind;
    void *dst;           /* bool, const char *, uint32_t, uint64_t, int64_t, double, const rk_target *, cli_list */
    const char *meta;    /* the value in help and messages: "N", "DIR" */
    const char *help;    /* lines separated by '\n' */
    const char *legal;   /* CLI_STRING: the legal values; CLI_TARGET: extra words ("device") */
    const char *def;     /* default shown in help; CLI_TARGET: the target marked "(default)" ("" none, NULL the
                          * catalog's default) */
    bool ranged, required;
    bool alone;          /* a flag that waives the required options (--list) */
    int64_t lo;          /* integer range when ranged */
    uint64_t hi;
    double dlo, dhi;     /* CLI_DOUBLE range when ranged */
    const char *bare;    /* CLI_STRING: the value when given without one (a boolean knob's "true"); NULL: none */
    uint32_t seen;       /* set by cli_parse: how often it was given */
} cli_opt;

typedef struct cli_cmd {
    const char *name;    /* "run", "ir check": messages read "rocke <name>: ..." */
    const char *args;    /* the positional arguments in the synopsis: "FILE.ir" ("" none) */
    const char *about;   /* text after the usage line */
    const char *more;    /* text after the options (NULL: none) */
    cli_opt *opts;
    const char **pos;    /* receives the positional arguments */
    uint32_t min_pos, max_pos;
} cli_cmd;

/* Parse argv[first .. argc). Returns -1 to go on, else the exit code to return
 * at once: 0 after --help, 2 on misuse (the message is printed). */
int cli_parse(cli_cmd *c, int argc, char **argv, int first);
void cli_help(const cli_cmd *c, FILE *f);
/* "rocke <name>: MESSAGE (see rocke <name> --help)" on stderr; returns 2. */
int cli_misuse(const cli_cmd *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Does the sep-separated list ("a|b", "x,y") hold name? */
bool cli_list_has(const char *list, char sep, const char *name);
/* Was option `name` given? (false for a name not in the table) */
bool cli_given(const cli_cmd *c, const char *name);

/* ---- cli.c ------------------------------------------------------------------- */
/* True when arg is -h or --help. */
bool cli_is_help(const char *arg);
/* Report a failed library call: "rocke <cmd>: <rk_error_message()>". Returns 1. */
int cli_fail(const char *cmd);
/* The same for a refusal of the input (a knob value, a shape, a manifest): returns 2. */
int cli_refuse(const char *cmd);
/* An output folder: an existing writable folder, or one that can be created
 * (its parent exists and is writable). Prints why not; false then. */
bool cli_out_dir_usable(const char *cmd, const char *dir);
/* An output folder made with its parents (build, aot -o; the dump folder): 0, or the exit
 * code with one message: 2 when a file stands where a folder is wanted (bad input), 1 when
 * the system refuses (permissions, a full disk). */
int cli_out_dir_make(const char *cmd, const char *dir);
/* mkdir -p: dir and its missing parents (0 or -1 with errno). */
int cli_mkdirs(const char *dir);
/* The end of every command: flush and close standard output and error; a
 * failed write anywhere before (ferror) or now turns rc 0 into 1 with one
 * message on stderr. Returns the exit status. */
int cli_close_streams(const char *cmd, int rc);

/* ---- cli_shape.c ------------------------------------------------------------- */
/* --shape TEXT for family f, "4096,4096" or "M=4096,N=4096" (named: only those
 * dimensions change), applied to *s (which holds the default or the
 * manifest's shape). Prints the error; false on failure. */
bool cli_shape_parse(const char *cmd, rk_family_id f, const char *text, rk_shape *s);
/* A decimal count at p: digits only (no sign, blank, hex or exponent), at most
 * UINT64_MAX; *end is set past it. False when p holds no digit or it overflows. */
bool cli_decimal(const char *p, const char **end, uint64_t *v);
/* --arg NAME=NUMBER: a given scalar (eps). */
typedef struct cli_arg { char name[32]; double value; } cli_arg;
bool cli_arg_parse(const char *cmd, const char *text, cli_arg *out);
/* Every NAME=VALUE text of `list` (the values of option `opt`) names a
 * different NAME; else prints "OPT NAME given twice ('...' and '...')". */
bool cli_names_unique(const char *cmd, const char *opt, const cli_list *list);
/* --stride / --pad / --dilation / --groups VALUES: set the run-time knob
 * `knob` of *in from 1, count / 2 (one per axis, pad only) or count values
 * separated by ',' or 'x' (count: the knob's tuple length). Prints the
 * error (a family without that knob, a wrong count); false on failure. */
bool cli_geometry_set(const char *cmd, rk_instance *in, const char *knob, const char *text);

/* ---- cli_family.c: build and aot -------------------------------------------- */
/* A family's knobs as options: --NAME VALUE, checked by rk_instance_set. */
enum { CLI_MAX_KNOBS = 48 };
typedef struct cli_knobs {
    char name[CLI_MAX_KNOBS][40], help[CLI_MAX_KNOBS][1280];   /* help, the whole legal list, the fp8 note */
    const char *value[CLI_MAX_KNOBS];
    uint32_t n;
} cli_knobs;
/* Fill opts[0 .. n] (n knobs, then {0}) for family fam. */
void cli_add_knobs(rk_family_id fam, cli_knobs *ko, cli_opt *opts);
/* Set the knobs given on in; *locked gets their bits (for rk_instance_tune). 0, or 2 with
 * the message printed (a refused value: the knob and its legal values named). */
int cli_apply_knobs(const char *cmd, const cli_knobs *ko, rk_instance *in, uint64_t *locked);
/* After tuning for t: a dtype knob given as one 8-bit float encoding and mapped to t's own
 * (e4m3 on gfx942 is e4m3fnuz) gets a note on stderr naming both. */
void cli_note_retyped(const char *cmd, const cli_knobs *ko, const rk_instance *in, const rk_target *t);
/* "expected a kernel family first (legal: ...)"; returns 2. */
int cli_family_missing(const cli_cmd *c);
double cli_now_ms(void);   /* monotonic clock */


/* ---- cli_stages.c: compile, build and lower ---------------------------------- */
typedef struct cli_stages {
    const char *after, *dir;   /* --dump-after STAGES, --dump-dir DIR */
    bool time;                 /* --time-stages */
} cli_stages;
/* The three options, into out[0..2], writing into d. */
void cli_stage_opts(cli_stages *d, cli_opt out[3]);
/* Check them and fill o's dump fields; creates the folder (o NULL: checks only, makes nothing).
 * -1 to go on, else the exit code (2 misuse or a file where the folder should be,
 * 1 a folder the system refuses). */
int cli_stage_apply(const cli_cmd *c, const cli_stages *d, rk_compile_options *o);
/* 00-parse.ir of a kernel the command read, when mask asks for it; false
 * (message printed) when it cannot be written. */
bool cli_stage_parse_dump(const char *cmd, const cli_stages *d, uint32_t mask, const rk_kernel *k);
/* The stage table on stdout: `first` (parse or build, NULL none), then the
 * artifact's stages and the total. */
void cli_stage_table(const rk_artifact *a, const char *first, double first_ms);
/* One row ("  NAME  MS"); name NULL: the heading. */
void cli_stage_row(FILE *f, const char *name, double ms);
/* "rocke CMD: note: compiling K again (now for T): its cache key changed (...)" on stderr. */
void cli_recompile_note(const char *cmd, const rk_artifact *a);

#endif
