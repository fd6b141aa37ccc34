/* rocke CLI — the one option parser of every sub-command: a command's table
 * of cli_opt is parsed into its variables with uniform messages, and printed
 * as its --help. Layer: tools. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/rocke.h"
#include "cli.h"

/* A growable message: the legal-value lists can be long. */
typedef struct text {
    char b[2048];
    size_t n;
} text;

static void add(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void add(text *t, const char *fmt, ...) {
    if (t->n >= sizeof t->b - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->b + t->n, sizeof t->b - t->n, fmt, ap);
    va_end(ap);
    if (k > 0) t->n = t->n + (size_t)k < sizeof t->b ? t->n + (size_t)k : sizeof t->b - 1;
}

static int vmisuse(const cli_cmd *c, const char *fmt, va_list ap) {
    fprintf(stderr, "rocke %s: ", c->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see rocke %s --help)\n", c->name);
    return 2;
}

int cli_misuse(const cli_cmd *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmisuse(c, fmt, ap);
    va_end(ap);
    return 2;
}

/* Do the n bytes at arg spell name? ('-' and '_' are the same) */
static bool same_name(const char *arg, size_t n, const char *name) {
    size_t i = 0;
    for (; i < n && name[i]; i++) {
        char a = arg[i] == '_' ? '-' : arg[i], b = name[i] == '_' ? '-' : name[i];
        if (a != b) return false;
    }
    return i == n && !name[i];
}

/* The option argument a names, with its inline value (--x=V, -xV) or NULL. */
static cli_opt *find(const cli_cmd *c, const char *a, const char **inline_val) {
    *inline_val = NULL;
    if (a[0] != '-' || !a[1]) return NULL;
    if (a[1] == '-') {
        const char *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        for (cli_opt *o = c->opts; o && o->name; o++)
            if (same_name(a, n, o->name)) {
                if (eq) *inline_val = eq + 1;
                return o;
            }
        return NULL;
    }
    for (cli_opt *o = c->opts; o && o->name; o++)
        if (o->alias && o->alias == a[1]) {
            if (a[2] && o->kind == CLI_FLAG) return NULL;
            if (a[2]) *inline_val = a + 2;
            return o;
        }
    return NULL;
}

/* Would argument a be read as an option of c? (then it is no value) */
static bool is_option(const cli_cmd *c, const char *a) {
    const char *v;
    return cli_is_help(a) || !strcmp(a, "--") || find(c, a, &v) != NULL;
}

/* "-o/--out" or "--iters": how an option is named in messages and help. */
static void opt_label(const cli_opt *o, char *buf, size_t n) {
    if (o->alias) snprintf(buf, n, "-%c/%s", o->alias, o->name);
    else snprintf(buf, n, "%s", o->name);
}

static void list_options(const cli_cmd *c, text *t) {
    for (const cli_opt *o = c->opts; o && o->name; o++) {
        char l[64];
        opt_label(o, l, sizeof l);
        add(t, "%s, ", l);
    }
    add(t, "-h/--help");
}

/* "a, b, c" from "a|b|c". */
static void legal_list(const char *legal, text *t) {
    for (const char *p = legal; *p;) {
        size_t n = strcspn(p, "|");
        add(t, "%s%.*s", p == legal ? "" : ", ", (int)n, p);
        p += n + (p[n] == '|');
    }
}

/* The legal targets: the catalog with the default marked, then extra words. */
static void target_legal(const cli_opt *o, text *t) {
    const rk_target *d = o->def ? (o->def[0] ? rk_target_find(o->def) : NULL) : rk_target_default();
    int i = 0;
    for (const rk_target *const *tp = rk_targets(); *tp; tp++, i++)
        add(t, "%s%s%s", i ? ", " : "", (*tp)->name, *tp == d ? " (default)" : "");
    if (o->legal) {
        add(t, ", ");
        legal_list(o->legal, t);
    }
}

bool cli_list_has(const char *list, char sep, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, (char[2]){sep, 0});
        if (k == n && !strncmp(p, name, n)) return true;
        p += k + (p[k] == sep);
    }
    return false;
}

static bool in_legal(const char *legal, const char *v) { return cli_list_has(legal, '|', v); }

/* The integer range of an option, as [lo, hi] with lo's sign. */
static void int_range(const cli_opt *o, int64_t *lo, uint64_t *hi) {
    if (o->ranged) {
        *lo = o->lo;
        *hi = o->hi;
    } else if (o->kind == CLI_U32) {
        *lo = 0;
        *hi = UINT32_MAX;
    } else if (o->kind == CLI_U64) {
        *lo = 0;
        *hi = UINT64_MAX;
    } else {
        *lo = INT64_MIN;
        *hi = INT64_MAX;
    }
}

static void range_text(const cli_opt *o, text *t) {
    if (o->kind == CLI_DOUBLE) {
        add(t, "%.17g..%.17g", o->dlo, o->dhi);
        return;
    }
    int64_t lo;
    uint64_t hi;
    int_range(o, &lo, &hi);
    add(t, "%lld..%llu", (long long)lo, (unsigned long long)hi);
}

/* Decimal digits, an optional '-' first, into sign + magnitude; false when
 * malformed (a '+', a blank, hex, an exponent) or past 64 bits. One spelling
 * per number, as knob values (rk_instance_set) take. */
static bool parse_int(const char *v, bool *neg, uint64_t *mag, bool *overflow) {
    *neg = *v == '-';
    *overflow = false;
    const char *p = v + *neg;
    if (!*p) return false;
    uint64_t m = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        unsigned d = (unsigned)(*p - '0');
        if (m > (UINT64_MAX - d) / 10) *overflow = true;
        else m = m * 10 + d;
    }
    *mag = m;
    return true;
}

static int store_int(const cli_cmd *c, const cli_opt *o, const char *shown, const char *v) {
    bool neg, over;
    uint64_t mag = 0;
    int64_t lo;
    uint64_t hi;
    int_range(o, &lo, &hi);
    text r = {.n = 0};
    range_text(o, &r);
    if (!parse_int(v, &neg, &mag, &over))
        return cli_misuse(c, "%s '%s' is not a decimal integer (legal: %s)", shown, v, r.b);
    bool ok = !over && (neg ? (lo < 0 && mag <= (uint64_t)-(lo + 1) + 1) : mag <= hi);
    if (ok && !neg && lo > 0) ok = mag >= (uint64_t)lo;
    if (!ok) return cli_misuse(c, "%s '%s' is out of range (legal: %s)", shown, v, r.b);
    switch (o->kind) {
    case CLI_U32: *(uint32_t *)o->dst = (uint32_t)mag; break;
    case CLI_U64: *(uint64_t *)o->dst = mag; break;
    default: *(int64_t *)o->dst = neg ? (int64_t)(0 - mag) : (int64_t)mag; break;
    }
    return 0;
}

static int store_double(const cli_cmd *c, const cli_opt *o, const char *shown, const char *v) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    text r = {.n = 0};
    if (o->ranged) range_text(o, &r);
    if (end == v || *end || !isfinite(x))
        return cli_misuse(c, "%s '%s' is not a finite number%s%s%s", shown, v, r.n ? " (legal: " : "", r.b,
                          r.n ? ")" : "");
    if (o->ranged && (x < o->dlo || x > o->dhi))
        return cli_misuse(c, "%s '%s' is out of range (legal: %s)", shown, v, r.b);
    *(double *)o->dst = x;
    return 0;
}

/* Check and store value v of option o; 0 or the misuse exit code. */
static int store(const cli_cmd *c, cli_opt *o, const char *shown, const char *v) {
    if (o->kind == CLI_FLAG) {
        *(bool *)o->dst = true;
        return 0;
    }
    if (!*v) return cli_misuse(c, "%s needs a value (%s %s), got an empty one", shown, shown, o->meta);
    switch (o->kind) {
    case CLI_FLAG: return 0;
    case CLI_STRING:
        if (o->legal && !in_legal(o->legal, v)) {
            text t = {.n = 0};
            legal_list(o->legal, &t);
            return cli_misuse(c, "%s: unknown value '%s' (legal: %s)", shown, v, t.b);
        }
        *(const char **)o->dst = v;
        return 0;
    case CLI_PATH: *(const char **)o->dst = v; return 0;
    case CLI_U32:
    case CLI_U64:
    case CLI_I64: return store_int(c, o, shown, v);
    case CLI_DOUBLE: return store_double(c, o, shown, v);
    case CLI_TARGET: {
        const rk_target *t = o->legal && in_legal(o->legal, v) ? NULL : rk_target_find(v);
        if (!t && !(o->legal && in_legal(o->legal, v))) {
            text l = {.n = 0};
            target_legal(o, &l);
            return cli_misuse(c, "%s: unknown target '%s' (legal: %s)", shown, v, l.b);
        }
        *(const rk_target **)o->dst = t;
        return 0;
    }
    case CLI_REPEATED: {
        cli_list *l = o->dst;
        if (l->n == CLI_LIST_MAX) return cli_misuse(c, "%s given more than %d times", shown, CLI_LIST_MAX);
        l->v[l->n++] = v;
        return 0;
    }
    }
    return 0;
}

/* "-o" or "--grid": the shortest spelling of an option. */
static const char *short_name(const cli_opt *o, char buf[4]) {
    if (!o->alias) return o->name;
    snprintf(buf, 4, "-%c", o->alias);
    return buf;
}

/* "missing --block X[,Y[,Z]]: --grid and --block are required". */
static int missing_required(const cli_cmd *c, const cli_opt *first) {
    text t = {.n = 0};
    uint32_t n = 0, k = 0;
    char b[4];
    for (const cli_opt *o = c->opts; o->name; o++) n += o->required;
    for (const cli_opt *o = c->opts; o->name; o++)
        if (o->required) {
            add(&t, "%s%s", k == 0 ? "" : k + 1 == n ? " and " : ", ", short_name(o, b));
            k++;
        }
    return cli_misuse(c, "missing %s %s: %s %s required", short_name(first, b), first->meta, t.b,
                      n == 1 ? "is" : "are");
}

int cli_parse(cli_cmd *c, int argc, char **argv, int first) {
    uint32_t npos = 0;
    bool only_pos = false;
    for (cli_opt *o = c->opts; o && o->name; o++) o->seen = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || !a[1]) {
            if (npos == c->max_pos) {
                if (c->max_pos == 0) return cli_misuse(c, "unexpected argument '%s'", a);
                return cli_misuse(c, "unexpected argument '%s' (one %s only; got '%s' first)", a, c->args,
                                  c->pos[0]);
            }
            c->pos[npos++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_pos = true;
            continue;
        }
        if (cli_is_help(a)) {
            cli_help(c, stdout);
            return 0;
        }
        const char *v;
        cli_opt *o = find(c, a, &v);
        char shown[64];
        snprintf(shown, sizeof shown, "%.*s", (int)(a[1] == '-' ? strcspn(a, "=") : 2), a);
        if (!o) {
            text t = {.n = 0};
            list_options(c, &t);
            return cli_misuse(c, "unknown option '%s'; the options are: %s", shown, t.b);
        }
        if (o->kind == CLI_FLAG && v) return cli_misuse(c, "%s takes no value, got '%s'", shown, a);
        if (o->kind != CLI_FLAG && !v) {
            if ((i + 1 == argc || is_option(c, argv[i + 1])) && o->bare) v = o->bare;
            else if (i + 1 == argc || is_option(c, argv[i + 1]))
                return cli_misuse(c, "%s needs a value (%s %s)", shown, shown, o->meta);
            else v = argv[++i];
        }
        if (o->seen && o->kind != CLI_REPEATED) return cli_misuse(c, "%s given twice; give it once", shown);
        o->seen++;
        int rc = store(c, o, shown, v ? v : "");
        if (rc) return rc;
    }
    bool alone = false;
    for (cli_opt *o = c->opts; o && o->name; o++) alone |= o->alone && o->seen;
    if (alone) return -1;
    if (npos < c->min_pos) {
        fprintf(stderr, "rocke %s: missing %s (see rocke %s --help)\n", c->name, c->args, c->name);
        cli_help(c, NULL);
        return 2;
    }
    for (cli_opt *o = c->opts; o && o->name; o++)
        if (o->required && !o->seen) return missing_required(c, o);
    return -1;
}

bool cli_given(const cli_cmd *c, const char *name) {
    for (const cli_opt *o = c->opts; o && o->name; o++)
        if (!strcmp(o->name, name)) return o->seen > 0;
    return false;
}

/* ---- help -------------------------------------------------------------------- */

enum { HELP_COL = 26, WRAP = 100 };

static void synopsis(const cli_cmd *c, FILE *f) {
    char head[96];
    int col = snprintf(head, sizeof head, "usage: rocke %s", c->name), indent = col + 1;
    fputs(head, f);
    if (c->args && *c->args) col += fprintf(f, " %s", c->args);
    for (const cli_opt *o = c->opts; o && o->name; o++) {
        char item[160], name[48];
        if (o->alias) snprintf(name, sizeof name, "-%c", o->alias);
        else snprintf(name, sizeof name, "%s", o->name);
        const char *val = o->kind == CLI_FLAG ? "" : o->meta;
        if (o->required) snprintf(item, sizeof item, "%s %s", name, val);
        else snprintf(item, sizeof item, "[%s%s%s%s]", name, *val ? " " : "", val,
                      o->kind == CLI_REPEATED ? " ..." : "");
        if (col + 1 + (int)strlen(item) > WRAP) col = fprintf(f, "\n%*s", indent - 1, "") - 1;
        col += fprintf(f, " %s", item);
    }
    fputc('\n', f);
}

/* Lines separated by '\n', each starting at HELP_COL; col: where the cursor is. */
static void help_lines(FILE *f, const char *s, int col) {
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "\n");
        if (col >= HELP_COL) fprintf(f, "\n%*s", HELP_COL, "");
        else fprintf(f, "%*s", HELP_COL - col, "");
        fprintf(f, "%.*s", (int)n, p);
        col = HELP_COL;
        p += n + (p[n] == '\n');
    }
}

static void option_row(const cli_opt *o, FILE *f) {
    int col = 2;
    fputs("  ", f);
    if (o->alias) col += fprintf(f, "-%c, ", o->alias);
    col += fprintf(f, "%s", o->name);
    if (o->kind != CLI_FLAG) col += fprintf(f, " %s", o->meta);
    if (o->kind == CLI_REPEATED) col += fprintf(f, " ...");
    if (col >= HELP_COL - 1) col = HELP_COL; /* the help goes below a long name */
    help_lines(f, o->help ? o->help : "", col);
    text t = {.n = 0};
    if (o->kind == CLI_TARGET) {
        add(&t, "legal: ");
        target_legal(o, &t);
    } else if (o->kind == CLI_STRING && o->legal) {
        add(&t, "legal: ");
        legal_list(o->legal, &t);
    } else if (o->ranged) {
        add(&t, "range: ");
        range_text(o, &t);
    }
    if (o->def && *o->def && o->kind != CLI_TARGET) add(&t, "%sdefault: %s", t.n ? "; " : "", o->def);
    if (o->kind == CLI_REPEATED) add(&t, "%smay be repeated", t.n ? "; " : "");
    if (t.n) fprintf(f, "\n%*s(%s)", HELP_COL, "", t.b);
    fputc('\n', f);
}

void cli_help(const cli_cmd *c, FILE *f) {
    if (!f) { /* the usage line alone, on stderr (after a message) */
        synopsis(c, stderr);
        return;
    }
    synopsis(c, f);
    if (c->about && *c->about) fprintf(f, "\n%s\n", c->about);
    fputs("\noptions:\n", f);
    for (const cli_opt *o = c->opts; o && o->name; o++) option_row(o, f);
    fprintf(f, "  -h, --help%*sthis help\n", HELP_COL - 12, "");
    if (c->more && *c->more) fprintf(f, "\n%s", c->more);
}
