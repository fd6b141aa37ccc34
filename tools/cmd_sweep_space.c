/* rocke sweep — the knob space: --knob subsets (or every legal value) read
 * against the family's knob table, the shapes, the configs in mixed radix,
 * each pruned before any compile by the family's own checks (validation,
 * shape check), counted per rule. Layer: tools. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_int.h"

static bool same_name(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;
        if (x != y) return false;
    }
    return *a == *b;
}

static int say(const sw_opts *o, const char *msg) {
    fprintf(stderr, "rocke %s: %s\n", o->cmd, msg);
    return 0;
}

static void knob_names(rk_family_id f, char *buf, size_t n) {
    uint32_t nk;
    const rk_knob *kb = rk_family_knobs(f, &nk);
    size_t off = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < nk && off < n; i++) off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "", kb[i].name);
}

/* One --knob NAME[=v1,v2,...]: every value checked by rk_instance_set. */
static bool parse_knob(const sw_opts *o, sw_space *sp, const char *text) {
    char name[64], msg[3200];
    const char *eq = strchr(text, '=');
    size_t nl = eq ? (size_t)(eq - text) : strlen(text);
    snprintf(name, sizeof name, "%.*s", (int)(nl < 63 ? nl : 63), text);
    uint32_t nk;
    const rk_knob *kb = rk_family_knobs(o->fam, &nk);
    uint32_t k = 0;
    while (k < nk && !same_name(kb[k].name, name)) k++;
    if (k == nk) {
        char legal[1024];
        knob_names(o->fam, legal, sizeof legal);
        snprintf(msg, sizeof msg, "--knob: unknown knob '%s' for %s (legal: %s)", name, rk_family_name(o->fam), legal);
        return say(o, msg);
    }
    for (uint32_t i = 0; i < sp->nknobs; i++)
        if (sp->knob[i].index == k) {
            snprintf(msg, sizeof msg, "--knob %s given twice; give its values once (--knob %s=v1,v2)", kb[k].name,
                     kb[k].name);
            return say(o, msg);
        }
    if (sp->nknobs == SW_MAX_KNOBS) {
        snprintf(msg, sizeof msg, "at most %d knobs may be swept", SW_MAX_KNOBS);
        return say(o, msg);
    }
    char list[2048];
    if (eq) snprintf(list, sizeof list, "%s", eq + 1);
    else {
        /* every legal value; a knob without a closed list needs them given */
        if (kb[k].kind == RK_KNOB_EPILOGUE || kb[k].kind == RK_KNOB_TUPLE ||
            (kb[k].kind == RK_KNOB_U32 && !kb[k].legal)) {
            snprintf(msg, sizeof msg, "--knob %s has no closed list of values: give them (--knob %s=v1,v2)",
                     kb[k].name, kb[k].name);
            return say(o, msg);
        }
        rk_knob_legal_text(&kb[k], list, sizeof list);
        for (char *c = list; *c; c++)
            if (*c == '|') *c = ',';
    }
    /* an epilogue chain is itself comma-separated: one value */
    bool one = kb[k].kind == RK_KNOB_EPILOGUE;
    sw_knob *sk = &sp->knob[sp->nknobs];
    sk->kb = &kb[k];
    sk->index = k;
    sk->nvals = 0;
    for (char *v = list; v;) {
        char *comma = one ? NULL : strchr(v, ',');
        if (comma) *comma = 0;
        if (!*v) {
            snprintf(msg, sizeof msg, "--knob %s: an empty value in '%s'", kb[k].name, text);
            return say(o, msg);
        }
        rk_instance probe = sp->base;
        if (rk_instance_set(&probe, kb[k].name, v, NULL)) {
            snprintf(msg, sizeof msg, "--knob %s: %s", kb[k].name, rk_error_message());
            return say(o, msg);
        }
        for (uint32_t j = 0; j < sk->nvals; j++)
            if (!strcmp(sk->vals[j], v)) {
                snprintf(msg, sizeof msg, "--knob %s: value '%.64s' given twice", kb[k].name, v);
                return say(o, msg);
            }
        if (sk->nvals == SW_MAX_VALUES || strlen(v) >= sizeof sk->vals[0]) {
            snprintf(msg, sizeof msg, "--knob %s: at most %d values of at most 63 characters", kb[k].name,
                     SW_MAX_VALUES);
            return say(o, msg);
        }
        memcpy(sk->vals[sk->nvals++], v, strlen(v) + 1);   /* fits: checked above */
        v = comma ? comma + 1 : NULL;
    }
    sp->nknobs++;
    return true;
}

static bool add_shape(const sw_opts *o, sw_space *sp, const char *text, const char *where) {
    while (isspace((unsigned char)*text)) text++;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (size_t n = strlen(buf); n && isspace((unsigned char)buf[n - 1]); n--) buf[n - 1] = 0;
    if (!buf[0] || buf[0] == '#') return true;
    if (sp->nshapes == SW_MAX_SHAPES) {
        char msg[128];
        snprintf(msg, sizeof msg, "at most %d shapes", SW_MAX_SHAPES);
        return say(o, msg);
    }
    rk_shape *s = &sp->shape[sp->nshapes];
    rk_shape_default(o->fam, s);
    if (!cli_shape_parse(o->cmd, o->fam, buf, s)) {
        if (where) fprintf(stderr, "rocke %s: (in %s)\n", o->cmd, where);
        return false;
    }
    sp->nshapes++;
    return true;
}

static bool parse_shapes(const sw_opts *o, sw_space *sp) {
    char *text = NULL;
    size_t n = 0;
    if (o->shapes_file) {
        if (rk_read_file(o->shapes_file, &text, &n)) {
            char msg[600];
            snprintf(msg, sizeof msg, "--shapes-file: %s", rk_error_message());
            return say(o, msg);
        }
    } else {
        text = rk_strdup(o->shapes_text);
        n = text ? strlen(text) : 0;
    }
    if (!text) return say(o, "out of memory");
    bool ok = true;
    uint32_t line = 1;
    for (char *p = text; ok && p;) {
        char *end = strpbrk(p, ";\n");
        char sep = end ? *end : 0;
        if (end) *end = 0;
        char where[512];
        snprintf(where, sizeof where, "%s line %u", o->shapes_file ? o->shapes_file : "", line);
        ok = add_shape(o, sp, p, o->shapes_file ? where : NULL);
        if (sep == '\n') line++;
        p = end ? end + 1 : NULL;
    }
    rk_free(text, n + 1);
    if (ok && !sp->nshapes) return say(o, "no shapes: give --shapes M,N[;M,N...] or a --shapes-file with one a line");
    return ok;
}

/* The rule a check's message names: the knob(s) it quotes, else the kind of limit. */
static void rule_of(const char *msg, bool shape_stage, char *name, size_t n) {
    const char *k = strstr(msg, "knob");
    const char *q1 = k ? strchr(k, '\'') : NULL, *e1 = q1 ? strchr(q1 + 1, '\'') : NULL;
    if (q1 && e1) {
        bool two = !strncmp(k, "knobs", 5);
        const char *q2 = two ? strchr(e1 + 1, '\'') : NULL, *e2 = q2 ? strchr(q2 + 1, '\'') : NULL;
        if (q2 && e2)
            snprintf(name, n, "knobs %.*s x %.*s", (int)(e1 - q1 - 1), q1 + 1, (int)(e2 - q2 - 1), q2 + 1);
        else snprintf(name, n, "knob %.*s", (int)(e1 - q1 - 1), q1 + 1);
    } else if (strstr(msg, "capacity")) snprintf(name, n, "row capacity");
    else if (strstr(msg, "multiple of")) snprintf(name, n, "divisibility");
    else if (strstr(msg, "LDS") || strstr(msg, "shared memory")) snprintf(name, n, "LDS");
    else if (strstr(msg, "register")) snprintf(name, n, "registers");
    else snprintf(name, n, "%s", shape_stage ? "shape" : "validation");
}

static void count_rule(sw_space *sp, const char *msg, bool shape_stage) {
    char name[64];
    rule_of(msg, shape_stage, name, sizeof name);
    uint32_t r = 0;
    while (r < sp->nrules && strcmp(sp->rule[r].name, name)) r++;
    if (r == sp->nrules) {
        if (r == SW_MAX_RULES) r--;   /* the last slot collects the rest */
        else sp->nrules++;
        snprintf(sp->rule[r].name, sizeof sp->rule[r].name, "%s", name);
        snprintf(sp->rule[r].example, sizeof sp->rule[r].example, "%s", msg);
    }
    sp->rule[r].count++;
    sp->pruned++;
}

void sw_config_text(const sw_space *sp, const sw_item *it, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    if (!sp->nknobs || it->config == sp->nconfigs) {
        snprintf(buf, n, "heuristic");
        return;
    }
    for (uint32_t k = 0, c = it->config; k < sp->nknobs && off < n; k++) {
        const sw_knob *sk = &sp->knob[k];
        off += (size_t)snprintf(buf + off, n - off, "%s%s=%s", k ? "," : "", sk->kb->name, sk->vals[c % sk->nvals]);
        c /= sk->nvals;
    }
}

/* Kernel name -> build index (open addressing over a power-of-two table). */
typedef struct name_map { uint32_t cap; int32_t *slot; } name_map;
static uint64_t fnv(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int find_build(sw_space *sp, name_map *m, uint32_t item) {
    const char *name = sp->items[item].kernel;
    for (uint64_t h = fnv(name);; h++) {
        int32_t *s = &m->slot[h & (m->cap - 1)];
        if (*s < 0) {
            *s = (int32_t)sp->nbuilds;
            sp->builds[sp->nbuilds] = (sw_build){.item = item, .registers = -1, .spills = -1};
            return (int)sp->nbuilds++;
        }
        if (!strcmp(sp->items[sp->builds[*s].item].kernel, name)) return *s;
    }
}

/* Item (config c, shape s): the swept values set, the rest by the heuristic,
 * then the family's checks. False when a rule prunes it. */
static bool make_item(const sw_opts *o, sw_space *sp, uint32_t c, uint32_t s, sw_item *it) {
    *it = (sw_item){.config = c, .shape = s, .in = sp->base, .build = -1};
    uint64_t locked = sp->locked;
    if (c == sp->nconfigs)   /* the heuristic's choice: the swept knobs are its to pick */
        for (uint32_t k = 0; k < sp->nknobs; k++) locked &= ~(1ull << sp->knob[k].index);
    for (uint32_t k = 0, cc = c; k < sp->nknobs && c < sp->nconfigs; k++) {
        const sw_knob *sk = &sp->knob[k];
        if (rk_instance_set(&it->in, sk->kb->name, sk->vals[cc % sk->nvals], NULL)) {
            count_rule(sp, rk_error_message(), false);
            return false;
        }
        cc /= sk->nvals;
    }
    if (rk_instance_tune_db(&it->in, o->t, &sp->shape[s], locked, NULL, NULL, NULL, 0) ||
        rk_instance_validate(&it->in, o->t)) {
        count_rule(sp, rk_error_message(), false);
        return false;
    }
    if (rk_instance_check_shape(&it->in, &sp->shape[s])) {
        count_rule(sp, rk_error_message(), true);
        return false;
    }
    rk_instance_name(&it->in, it->kernel, sizeof it->kernel);
    char cfg[400], shape[100];
    sw_config_text(sp, it, cfg, sizeof cfg);
    rk_shape_format(o->fam, &sp->shape[s], false, shape, sizeof shape);
    snprintf(it->key, sizeof it->key, "%s@%s", cfg, shape);
    return true;
}

static bool report_empty(const sw_opts *o, const sw_space *sp) {
    fprintf(stderr, "rocke %s: the space is empty after pruning: all %u configs x %u shapes were pruned before "
            "compiling:\n", o->cmd, sp->nconfigs, sp->nshapes);
    for (uint32_t r = 0; r < sp->nrules; r++)
        fprintf(stderr, "  %-24s %u (e.g. %s)\n", sp->rule[r].name, sp->rule[r].count, sp->rule[r].example);
    return false;
}

bool sw_space_make(const sw_opts *o, sw_space *sp) {
    memset(sp, 0, sizeof *sp);
    rk_instance_default(o->fam, &sp->base);
    const char *fixed[2][2] = {{"op", o->op}, {"dtype", o->dtype}};
    for (uint32_t i = 0; i < 2; i++) {
        if (!fixed[i][1]) continue;
        uint32_t ix;
        if (rk_instance_set(&sp->base, fixed[i][0], fixed[i][1], &ix)) {
            char msg[1024];
            snprintf(msg, sizeof msg, "--%s: %s", fixed[i][0], rk_error_message());
            return say(o, msg);
        }
        sp->locked |= 1ull << ix;
    }
    for (uint32_t i = 0; i < o->knobs.n; i++)
        if (!parse_knob(o, sp, o->knobs.v[i])) return false;
    /* a knob with one value is fixed, not swept (it stays out of the config text) */
    for (uint32_t k = 0; k < sp->nknobs;) {
        sp->locked |= 1ull << sp->knob[k].index;
        if (sp->knob[k].nvals > 1) { k++; continue; }
        rk_instance_set(&sp->base, sp->knob[k].kb->name, sp->knob[k].vals[0], NULL);
        memmove(&sp->knob[k], &sp->knob[k + 1], (sp->nknobs - k - 1) * sizeof sp->knob[0]);
        sp->nknobs--;
    }
    if (!parse_shapes(o, sp)) return false;
    uint64_t configs = 1;
    for (uint32_t k = 0; k < sp->nknobs; k++) configs *= sp->knob[k].nvals;
    if (configs * sp->nshapes > SW_MAX_ITEMS) {
        char msg[256];
        snprintf(msg, sizeof msg, "the space holds %llu configs x %u shapes; at most %d: sweep fewer values",
                 (unsigned long long)configs, sp->nshapes, SW_MAX_ITEMS);
        return say(o, msg);
    }
    sp->nconfigs = (uint32_t)configs;
    bool heur = o->heuristic && sp->nknobs;   /* with nothing swept, config 0 is the heuristic's */
    uint32_t total = (sp->nconfigs + heur) * sp->nshapes;
    name_map m = {.cap = 1};
    while (m.cap < 2 * total) m.cap <<= 1;
    sp->items = calloc(total, sizeof *sp->items);
    sp->builds = calloc(total, sizeof *sp->builds);
    m.slot = malloc(m.cap * sizeof *m.slot);
    if (!sp->items || !sp->builds || !m.slot) {
        free(m.slot);
        return say(o, "out of memory");
    }
    memset(m.slot, 0xff, m.cap * sizeof *m.slot);
    uint32_t kept = 0;
    for (uint32_t c = 0; c < sp->nconfigs + heur; c++)
        for (uint32_t s = 0; s < sp->nshapes; s++) {
            sw_item *it = &sp->items[sp->nitems];
            if (!make_item(o, sp, c, s, it)) continue;
            /* a shard keeps every n-th item that survived pruning */
            if (o->shard_n && kept++ % o->shard_n != o->shard_i) continue;
            it->build = find_build(sp, &m, sp->nitems);
            sp->nitems++;
        }
    free(m.slot);
    if (!sp->nitems && !kept) return report_empty(o, sp);
    return true;
}

void sw_space_free(sw_space *sp) {
    free(sp->items);
    free(sp->builds);
    sp->items = NULL;
    sp->builds = NULL;
}
