/* rocke — the ckdsl.ir v1 parser (reference §6): the line grammar into a new
 * kernel, names scoped by regions; syntax and names only (types are
 * rk_verify's job), and no input can crash it. Layer: ir. */
#include <stdio.h>
#include <stdlib.h>

#include "text_int.h"

/* Names follow regions: a value dies when the region defining it closes, so
 * sibling loops may both use %k0 (the builder allows it; rk_verify objects).
 * Results of a region op stay pending until its last region ends. */
enum { N_VISIBLE = 1, N_PENDING, N_DEAD };

/* The binding of a value's name: where it was defined and whether it can be
 * used now (indexed by value id, parallel to the kernel's value table). */
typedef struct vbind { uint32_t line; uint8_t state; } vbind;

typedef struct frame {
    rk_region *r;
    rk_op *last;              /* last op of this region: a region line attaches to it */
    rk_op *pending;           /* region op whose results appear when its regions end */
    uint32_t scope_mark;      /* scope stack height when the region opened */
    uint32_t line;
    /* loop variables of `last` when it is an scf.for (names without '%') */
    const char **arg_names;
    rk_type *arg_types;
    uint32_t nargs;
} frame;

typedef struct result { const char *at; uint32_t n; rk_type t; } result;

typedef struct parser {
    ir_lex lx;
    const char *next, *end;   /* next line; end of input */
    bool in_section;          /* inside a "# >>>" ... "# <<<" block */
    rk_kernel *k;
    vbind *vb;
    uint32_t vb_cap;
    /* name -> latest value id: open addressing on hash << 32 | id (0 = empty),
     * fronted by bynum, the latest value whose name ends in that number
     * (builder names are hint + counter, so it is dense and cache-friendly) */
    uint64_t *slots;
    uint32_t slots_cap, slots_used;
    uint32_t *bynum;
    uint32_t bynum_cap, bynum_limit;
    uint32_t *scope;          /* ids of the values defined in the open regions */
    uint32_t nscope, scope_cap;
    rk_value *in;
    uint32_t in_cap;
    result *res;
    uint32_t res_cap;
    frame frames[IR_MAX_REGION_DEPTH + 1];
    uint32_t depth;
    uint16_t opcache[256];    /* op names seen, by hash of the spelling */
} parser;

#define ERR(P, at, ...) ir_lex_error(&(P)->lx, (at), __VA_ARGS__)
#define FOUND(P, at, fb) ir_lex_found(&(P)->lx, (at), (fb))

/* ---- growable scratch ------------------------------------------------------- */
static bool grow(parser *P, void **arr, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap) return true;
    uint32_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 4) return ir_lex_oom(&P->lx);
        ncap *= 2;
    }
    void *n = rk_realloc(*arr, *cap * elem, (size_t)ncap * elem);
    if (!n) return ir_lex_oom(&P->lx);
    *arr = n;
    *cap = ncap;
    return true;
}
#define GROW(P, arr, cap, need) grow((P), (void **)&(arr), &(cap), (need), sizeof *(arr))

/* ---- the name table -------------------------------------------------------------- */
static uint32_t hash_name(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 16777619u; }
    return h;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* The number a name ends in (at most 8 digits), or UINT32_MAX. */
static uint32_t num_of(const char *s, size_t n) {
    uint32_t v = 0, scale = 1;
    size_t d = n;
    for (; d > 0 && n - d < 8 && is_digit(s[d - 1]); d--, scale *= 10) v += (uint32_t)(s[d - 1] - '0') * scale;
    if (d == n || (d > 0 && is_digit(s[d - 1]))) return UINT32_MAX;   /* none, or more than 8 */
    return v;
}

/* Is value id's name exactly [s, s+n)? (Names are short: a loop beats a
 * call to strncmp.) */
static bool name_is(const parser *P, uint32_t id, const char *s, size_t n) {
    const char *h = P->k->vals[id].hint;
    for (size_t i = 0; i < n; i++)
        if (h[i] != s[i]) return false;     /* also stops at h's NUL: s holds none */
    return h[n] == '\0';
}

/* Slot for name [s, s+n): holds it, or is the empty slot where it would go. */
static uint64_t *slot_of(parser *P, const char *s, size_t n, uint32_t h) {
    uint32_t mask = P->slots_cap - 1, j = h & mask;
    for (;;) {
        uint64_t e = P->slots[j];
        if (!e || ((uint32_t)(e >> 32) == h && name_is(P, (uint32_t)e, s, n))) return &P->slots[j];
        j = (j + 1) & mask;
    }
}

/* The latest value named [s, s+n) (0 when none); its vbind says if usable. */
static uint32_t find(parser *P, const char *s, size_t n) {
    uint32_t num = num_of(s, n);
    if (num < P->bynum_limit) {
        /* bind records every number below the limit here, so an empty entry
         * means no name ending in num exists: a new name skips the hash */
        uint32_t id = num < P->bynum_cap ? P->bynum[num] : 0;
        if (!id) return 0;
        if (name_is(P, id, s, n)) return id;
    }
    if (!P->slots_cap) return 0;
    return (uint32_t)*slot_of(P, s, n, hash_name(s, n));
}

static bool rehash_to(parser *P, uint32_t cap) {
    uint64_t *s = rk_malloc((size_t)cap * sizeof *s);
    if (!s) return ir_lex_oom(&P->lx);
    rk_advise_huge(s, (size_t)cap * sizeof *s);   /* before the first touch: see presize */
    memset(s, 0, (size_t)cap * sizeof *s);
    for (uint32_t i = 0; i < P->slots_cap; i++) {
        uint64_t e = P->slots[i];
        if (!e) continue;
        uint32_t j = (uint32_t)(e >> 32) & (cap - 1);
        while (s[j]) j = (j + 1) & (cap - 1);
        s[j] = e;
    }
    rk_free(P->slots, P->slots_cap * sizeof *P->slots);
    P->slots = s;
    P->slots_cap = cap;
    return true;
}

/* Size the tables once from the input (every value takes at least a short
 * line of text), so big kernels skip the doubling copies. */
static bool presize(parser *P) {
    size_t len = (size_t)(P->end - P->next), lines = 0;
    for (const char *p = P->next; (p = memchr(p, '\n', (size_t)(P->end - p))); p++) lines++;
    size_t est = lines < len / 16 ? lines : len / 16;
    /* names ending in larger numbers skip the number index (bounds memory) */
    P->bynum_limit = (uint32_t)(len / 8 < (1u << 24) ? len / 8 : (1u << 24)) + 1024;
    if (est < 256) return true;
    if (est > (1u << 24)) est = 1u << 24;
    /* the tables are filled from scratch; on a VM the page faults of their
     * first touch are the largest cost of parsing, so big ones ask for huge
     * pages before they are touched (ir_vals_reserve, rehash_to) */
    if (!ir_vals_reserve(P->k, est + 1)) return ir_lex_oom(&P->lx);
    uint32_t cap = 256;
    while (cap < 2 * est) cap *= 2;
    if (!GROW(P, P->vb, P->vb_cap, (uint32_t)est + 1) || !GROW(P, P->scope, P->scope_cap, (uint32_t)est) ||
        !GROW(P, P->bynum, P->bynum_cap, (uint32_t)est + 1) || !rehash_to(P, cap))
        return false;
    memset(P->bynum, 0, P->bynum_cap * sizeof *P->bynum);
    return true;
}

/* Bind the value's name (n bytes, ending in number num) in the current scope;
 * a dead binding of the same name is replaced. */
static bool bind(parser *P, rk_value v, size_t n, uint32_t num, uint8_t state) {
    const char *s = P->k->vals[v.id].hint;
    if (!GROW(P, P->vb, P->vb_cap, v.id + 1) || !GROW(P, P->scope, P->scope_cap, P->nscope + 1)) return false;
    P->vb[v.id] = (vbind){P->lx.lineno, state};
    P->scope[P->nscope++] = v.id;
    if ((P->slots_used + 1) * 2 > P->slots_cap && !rehash_to(P, P->slots_cap ? P->slots_cap * 2 : 256))
        return false;
    uint32_t h = hash_name(s, n);
    uint64_t *slot = slot_of(P, s, n, h);
    if (!*slot) P->slots_used++;
    *slot = (uint64_t)h << 32 | v.id;
    if (num < P->bynum_limit) {
        if (num >= P->bynum_cap) {
            uint32_t old = P->bynum_cap;
            if (!GROW(P, P->bynum, P->bynum_cap, num + 1)) return false;
            memset(P->bynum + old, 0, (P->bynum_cap - old) * sizeof *P->bynum);
        }
        P->bynum[num] = v.id;
    }
    return true;
}

/* A name may be (re)defined unless a live value holds it. */
static bool check_free(parser *P, const char *at, const char *s, size_t n) {
    uint32_t id = find(P, s, n);
    if (id && P->vb[id].state != N_DEAD)
        return ERR(P, at, "%%%.*s is already defined (line %u)", (int)(n > 64 ? 64 : n), s, P->vb[id].line);
    return true;
}

/* A new value named [name, name+n), bound in the current scope. Names ending
 * in a number keep the builder's counter ahead of them, so ops added later
 * never reuse a parsed name. */
static rk_value define(parser *P, const char *name, size_t n, rk_type t, rk_value_kind kind, uint8_t state) {
    char *s = rk_arena_strndup(&P->k->arena, name, n);
    if (!s) return ir_lex_oom(&P->lx), (rk_value){0};
    rk_value v = ir_new_value(P->k, t, kind, s, false);
    if (!rk_value_ok(v)) return ir_lex_oom(&P->lx), (rk_value){0};
    uint32_t num = num_of(s, n);
    if (num != UINT32_MAX && num > P->k->counter) P->k->counter = num;
    return bind(P, v, n, num, state) ? v : (rk_value){0};
}

/* ---- lines -------------------------------------------------------------------------- */
static bool starts(const char *p, const char *e, const char *lit) {
    size_t n = strlen(lit);
    return (size_t)(e - p) >= n && memcmp(p, lit, n) == 0;
}

/* Advance to the next line that holds IR: skips blank lines, '#' comment
 * lines and "# >>> name" ... "# <<<" sections of golden files. */
static bool next_line(parser *P) {
    ir_lex *lx = &P->lx;
    while (P->next < P->end) {
        const char *s = P->next, *nl = memchr(s, '\n', (size_t)(P->end - s));
        const char *e = nl ? nl : P->end;
        P->next = nl ? nl + 1 : P->end;
        lx->lineno++;
        if (e > s && e[-1] == '\r') e--;
        lx->line = lx->p = s;
        lx->eol = e;
        ir_lex_ws(lx);
        if (lx->p < e && *lx->p == '#') {
            if (starts(lx->p, e, "# >>>")) P->in_section = true;
            else if (starts(lx->p, e, "# <<<")) P->in_section = false;
            continue;
        }
        if (P->in_section || lx->p == e) continue;
        const char *nul = memchr(s, '\0', (size_t)(e - s));
        if (nul) return ERR(P, nul, "NUL byte in the input");
        return true;
    }
    return false;
}

static bool eof_error(parser *P, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static bool eof_error(parser *P, const char *fmt, ...) {
    ir_lex *lx = &P->lx;
    if (lx->failed) return false;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!lx->lineno) lx->line = lx->eol = P->end;
    return ERR(P, lx->eol, "unexpected end of input: expected %s", what);
}

/* Read "WORD" and require it to be `lit`; describes the line otherwise. */
static bool keyword(parser *P, const char *lit, const char *form) {
    const char *at = P->lx.p, *s;
    size_t n;
    char fb[48];
    ir_lex_word(&P->lx, &s, &n);
    if (n == strlen(lit) && memcmp(s, lit, n) == 0) return true;
    return ERR(P, at, "expected %s, found %s", form, FOUND(P, at, fb));
}

static bool header(parser *P) {
    ir_lex *lx = &P->lx;
    const char *at = lx->p, *v;
    size_t n;
    char fb[48];
    if (!starts(at, lx->eol, "ckdsl.ir") || (at + 8 < lx->eol && at[8] != ' ' && at[8] != '\t'))
        return ERR(P, at, "expected the header 'ckdsl.ir v1', found %s", FOUND(P, at, fb));
    lx->p = at + 8;
    ir_lex_ws(lx);
    const char *vat = lx->p;
    ir_lex_word(lx, &v, &n);
    if (!n) return ERR(P, vat, "expected a version after 'ckdsl.ir', found %s", FOUND(P, vat, fb));
    if (n != 2 || memcmp(v, "v1", 2) != 0)
        return ERR(P, vat, "unsupported ckdsl.ir version '%.*s' (this reader understands v1)", (int)(n > 32 ? 32 : n), v);
    return ir_lex_end(lx, "the header");
}

static bool kernel_line(parser *P) {
    ir_lex *lx = &P->lx;
    const char *s;
    size_t n;
    char fb[48];
    if (!keyword(P, "kernel", "'kernel @NAME {'") || !ir_lex_expect(lx, '@', "before the kernel name")) return false;
    const char *at = lx->p;
    ir_lex_word(lx, &s, &n);
    if (!n) return ERR(P, at, "expected the kernel name after '@', found %s", FOUND(P, at, fb));
    char *name = rk_malloc(n + 1);
    if (!name) return ir_lex_oom(lx);
    memcpy(name, s, n);
    name[n] = '\0';
    P->k = lx->k = rk_kernel_new(name);
    rk_free(name, n + 1);
    if (!P->k) {
        if (s[0] >= '0' && s[0] <= '9')
            return ERR(P, at, "kernel name '%.*s' must not start with a digit", (int)(n > 64 ? 64 : n), s);
        return ir_lex_oom(lx);
    }
    return ir_lex_expect(lx, '{', "after the kernel name") && ir_lex_end(lx, "'kernel @NAME {'") && presize(P);
}

static bool param_line(parser *P) {
    ir_lex *lx = &P->lx;
    rk_kernel *k = P->k;
    const char *at = lx->p, *s;
    size_t n;
    char fb[48];
    lx->p++;                                    /* '%' */
    ir_lex_word(lx, &s, &n);
    if (!n) return ERR(P, lx->p, "expected a parameter name after '%%', found %s", FOUND(P, lx->p, fb));
    if (!check_free(P, at, s, n) || !ir_lex_expect(lx, ':', "after the parameter name")) return false;
    ir_lex_ws(lx);
    const char *tat = lx->p;
    rk_type t;
    if (!ir_lex_type(lx, &t)) return false;
    rk_type_kind tk = rk_type_kind_of(k, t);
    if (tk != RK_TK_SCALAR && tk != RK_TK_PTR)
        return ERR(P, tat, "parameter %%%.*s has type %s; parameters are scalars or pointers",
                   (int)(n > 64 ? 64 : n), s, rk_type_name(k, t));
    rk_param *ps = rk_arena_grow(&k->arena, k->params, sizeof *ps, &k->params_cap, k->nparams + 1);
    if (!ps) return ir_lex_oom(lx);
    k->params = ps;
    rk_param *p = &k->params[k->nparams];
    memset(p, 0, sizeof *p);
    p->type = t;
    p->value = define(P, s, n, t, RK_VK_PARAM, N_VISIBLE);
    if (!rk_value_ok(p->value)) return false;
    p->name = k->vals[p->value.id].hint;
    k->vals[p->value.id].index = k->nparams++;
    ir_lex_ws(lx);
    if (lx->p < lx->eol && *lx->p == '{' && !ir_lex_attr_map(lx, &p->attrs, NULL, 0)) return false;
    return ir_lex_end(lx, "the parameter");
}

static bool params_block(parser *P) {
    ir_lex *lx = &P->lx;
    char fb[48];
    if (!keyword(P, "params", "'params {'") || !ir_lex_expect(lx, '{', "after 'params'") ||
        !ir_lex_end(lx, "'params {'"))
        return false;
    for (;;) {
        if (!next_line(P)) return eof_error(P, "a parameter '%%name : TYPE' or '}' closing params");
        if (*lx->p == '}') { lx->p++; return ir_lex_end(lx, "'}'"); }
        if (*lx->p != '%')
            return ERR(P, lx->p, "expected a parameter '%%name : TYPE' or '}', found %s", FOUND(P, lx->p, fb));
        if (!param_line(P)) return false;
    }
}

/* ---- regions ------------------------------------------------------------------------- */
static const char *label_of(parser *P, const char *s, size_t n) {
    static const char *const common[] = {"entry", "body", "then", "else"};
    for (size_t i = 0; i < RK_COUNTOF(common); i++)
        if (strlen(common[i]) == n && memcmp(common[i], s, n) == 0) return common[i];
    char *l = rk_arena_strndup(&P->k->arena, s, n);
    if (!l) ir_lex_oom(&P->lx);
    return l;
}

static bool push_frame(parser *P, rk_region *r, const char *at) {
    if (P->depth > IR_MAX_REGION_DEPTH)
        return ERR(P, at, "regions nest deeper than %d levels", IR_MAX_REGION_DEPTH);
    P->frames[P->depth++] = (frame){.r = r, .scope_mark = P->nscope, .line = P->lx.lineno};
    return true;
}

/* The results of a region op become usable once its last region has ended. */
static void flush_pending(parser *P, frame *f) {
    rk_op *op = f->pending;
    f->pending = NULL;
    if (!op) return;
    for (uint32_t i = 0; i < op->nout; i++) P->vb[op->out[i].id].state = N_VISIBLE;
}

static void close_region(parser *P) {
    frame *f = &P->frames[P->depth - 1];
    flush_pending(P, f);
    for (uint32_t i = P->nscope; i-- > f->scope_mark;) P->vb[P->scope[i]].state = N_DEAD;
    P->nscope = f->scope_mark;
    P->depth--;
}

static bool enter_for_body(parser *P, frame *parent, rk_op *op, rk_region *r, const char *at) {
    r->nargs = parent->nargs;
    r->args = rk_arena_alloc(&P->k->arena, (r->nargs ? r->nargs : 1) * sizeof *r->args);
    if (!r->args) return ir_lex_oom(&P->lx);
    for (uint32_t i = 0; i < r->nargs; i++) {
        const char *s = parent->arg_names[i];
        size_t n = strlen(s);
        uint32_t id = find(P, s, n);
        if (id && P->vb[id].state != N_DEAD)
            return ERR(P, at, "scf.for at line %u: loop variable %%%s is already defined (line %u)",
                       op->line, s, P->vb[id].line);
        r->args[i] = define(P, s, n, parent->arg_types[i], RK_VK_REGION_ARG, N_VISIBLE);
        if (!rk_value_ok(r->args[i])) return false;
        P->k->vals[r->args[i].id].def = op;
        P->k->vals[r->args[i].id].index = i;
    }
    return true;
}

static bool region_line(parser *P, frame *f, const char *at) {
    ir_lex *lx = &P->lx;
    const char *s;
    size_t n;
    char fb[48];
    if (!ir_lex_expect(lx, '@', "before the region label")) return false;
    const char *lat = lx->p;
    ir_lex_word(lx, &s, &n);
    if (!n) return ERR(P, lat, "expected a region label after '@', found %s", FOUND(P, lat, fb));
    if (!ir_lex_expect(lx, '{', "after the region label") || !ir_lex_end(lx, "'region @LABEL {'")) return false;
    rk_op *op = f->last;
    if (!op)
        return ERR(P, at, "region @%.*s does not follow an op (a region belongs to the op line above it)",
                   (int)(n > 32 ? 32 : n), s);
    const rk_op_info *info = rk_op_info_of(op->code);
    if (op->nreg >= info->nreg) {
        if (!info->nreg) return ERR(P, at, "op '%s' (line %u) has no regions", info->name, op->line);
        return ERR(P, at, "op '%s' (line %u) takes %u region%s; this would be region %u", info->name, op->line,
                   info->nreg, info->nreg == 1 ? "" : "s", op->nreg + 1);
    }
    rk_region *r = &op->regions[op->nreg];
    if (!(r->label = label_of(P, s, n)) || !push_frame(P, r, at)) return false;
    op->nreg++;
    if (op->code == RK_OP_FOR && op->nreg == 1) return enter_for_body(P, f, op, r, at);
    return true;
}

/* ---- ops ---------------------------------------------------------------------------------- */
static uint32_t edit_distance(const char *a, size_t n, const char *b, uint32_t cap) {
    size_t m = strlen(b);
    uint32_t row[72];
    if (n > 64 || m > 64) return cap;
    for (size_t j = 0; j <= m; j++) row[j] = (uint32_t)j;
    for (size_t i = 1; i <= n; i++) {
        uint32_t diag = row[0], best = row[0] = (uint32_t)i;
        for (size_t j = 1; j <= m; j++) {
            uint32_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v) v = up + 1;
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best) best = v;
        }
        if (best >= cap) return cap;
    }
    return row[m];
}

static bool unknown_op(parser *P, const char *at, const char *s, size_t n) {
    const char *best = NULL;
    uint32_t bestd = n / 3 + 1 < 4 ? (uint32_t)n / 3 + 1 : 4;
    for (int c = 1; c < RK_OP__COUNT; c++) {
        uint32_t d = edit_distance(s, n, ir_op_table[c].name, bestd);
        if (d < bestd) { bestd = d; best = ir_op_table[c].name; }
    }
    if (best) return ERR(P, at, "unknown op '%.*s' (did you mean '%s'?)", (int)(n > 64 ? 64 : n), s, best);
    return ERR(P, at, "unknown op '%.*s'", (int)(n > 64 ? 64 : n), s);
}

static rk_opcode op_lookup(parser *P, const char *s, size_t n) {
    /* the cache key: the length and the last 8 characters (op names share
     * their dialect prefix); a collision only costs a full look-up */
    size_t tail = n > 8 ? n - 8 : 0;
    uint32_t h = (hash_name(s + tail, n - tail) ^ (uint32_t)n * 0x9e3779b1u) >> 24;
    rk_opcode c = (rk_opcode)P->opcache[h];
    const char *nm = ir_op_table[c].name;
    if (c && strncmp(nm, s, n) == 0 && nm[n] == '\0') return c;
    char nb[72];
    if (n >= sizeof nb) return RK_OP_INVALID;
    memcpy(nb, s, n);
    nb[n] = '\0';
    c = rk_opcode_from_name(nb);
    if (c) P->opcache[h] = (uint16_t)c;
    return c;
}

static bool lookup_operand(parser *P, const char *at, const char *s, size_t n, rk_value *out) {
    uint32_t id = find(P, s, n);
    int w = (int)(n > 64 ? 64 : n);
    if (!id) return ERR(P, at, "undefined value %%%.*s", w, s);
    if (P->vb[id].state == N_DEAD)
        return ERR(P, at, "%%%.*s is not visible here: it was defined at line %u inside a region that has ended",
                   w, s, P->vb[id].line);
    if (P->vb[id].state == N_PENDING)
        return ERR(P, at, "%%%.*s is a result of the op at line %u and cannot be used inside that op's regions",
                   w, s, P->vb[id].line);
    *out = (rk_value){id};
    return true;
}

static int attr_index(const rk_op *op, const char *key) {
    for (uint32_t i = 0; i < op->attrs.n; i++)
        if (strcmp(op->attrs.items[i].key, key) == 0) return (int)i;
    return -1;
}

/* "%name" in a string attribute: returns the name without '%' or NULL. */
static const char *var_name(const rk_attr_val *v) {
    if (v->kind != RK_AK_STR || v->u.s[0] != '%' || !ir_is_word(v->u.s + 1, strlen(v->u.s + 1))) return NULL;
    return v->u.s + 1;
}

static rk_type type_attr(parser *P, const rk_attr_val *v) {
    if (!v || v->kind != RK_AK_STR) return RK_T_NONE;
    return ir_lex_type_text(&P->lx, v->u.s, strlen(v->u.s));
}

/* scf.for declares its loop variable and carries in attributes (iv, iv_type,
 * iter_args); read them now so the body can define them when it opens. */
static bool for_args(parser *P, frame *f, rk_op *op, const uint32_t *cols, const char *name_at) {
    const char *L = P->lx.line;
    int iv = attr_index(op, "iv"), ity = attr_index(op, "iv_type"), ia = attr_index(op, "iter_args");
    if (iv < 0) return ERR(P, name_at, "scf.for needs attribute iv naming its loop variable (iv = s:\"%%k0\")");
    const rk_attr_val *iter = ia >= 0 ? &op->attrs.items[ia].val : NULL;
    if (iter && iter->kind != RK_AK_LIST)
        return ERR(P, L + cols[ia] - 1, "attribute iter_args must be a list of { name = s:\"%%NAME\", type = s:\"TYPE\" } maps");
    uint32_t n = 1 + (iter ? iter->n : 0);
    f->arg_names = rk_arena_alloc(&P->k->arena, n * sizeof *f->arg_names);
    f->arg_types = rk_arena_alloc(&P->k->arena, n * sizeof *f->arg_types);
    if (!f->arg_names || !f->arg_types) return ir_lex_oom(&P->lx);
    f->nargs = n;
    if (!(f->arg_names[0] = var_name(&op->attrs.items[iv].val)))
        return ERR(P, L + cols[iv] - 1, "attribute iv must name the loop variable as s:\"%%NAME\"");
    if (ity >= 0) {
        if (!rk_type_ok(f->arg_types[0] = type_attr(P, &op->attrs.items[ity].val)))
            return ERR(P, L + cols[ity] - 1, "attribute iv_type must be a type name such as s:\"i32\"");
    } else if (op->nin) {
        f->arg_types[0] = rk_value_type(P->k, op->in[0]);
    } else {
        return ERR(P, name_at, "scf.for needs attribute iv_type or a lower-bound operand to type its loop variable");
    }
    for (uint32_t i = 1; i < n; i++) {
        const rk_attr_val *m = &iter->u.list[i - 1];
        rk_attrs ma = {m->kind == RK_AK_MAP ? m->u.map : NULL, m->kind == RK_AK_MAP ? m->n : 0, 0};
        const rk_attr_val *nm = rk_attrs_get(&ma, "name");
        f->arg_names[i] = nm ? var_name(nm) : NULL;
        f->arg_types[i] = type_attr(P, rk_attrs_get(&ma, "type"));
        if (!f->arg_names[i] || !rk_type_ok(f->arg_types[i]))
            return ERR(P, L + cols[ia] - 1, "iter_args item %u must be { name = s:\"%%NAME\", type = s:\"TYPE\" } "
                       "with a valid type", i - 1);
    }
    return true;
}

static bool op_line(parser *P, frame *f) {
    ir_lex *lx = &P->lx;
    rk_kernel *k = P->k;
    const char *s;
    size_t n;
    char fb[48];
    flush_pending(P, f);
    uint32_t nres = 0, nin = 0;
    if (*lx->p == '%') {
        for (;;) {
            const char *at = lx->p++;
            ir_lex_word(lx, &s, &n);
            if (!n) return ERR(P, lx->p, "expected a result name after '%%', found %s", FOUND(P, lx->p, fb));
            if (!check_free(P, at, s, n)) return false;
            for (uint32_t i = 0; i < nres; i++)
                if (P->res[i].n == n && memcmp(P->res[i].at + 1, s, n) == 0)
                    return ERR(P, at, "%%%.*s is defined twice on this line", (int)(n > 64 ? 64 : n), s);
            if (!ir_lex_expect(lx, ':', "after the result name")) return false;
            rk_type t;
            if (!ir_lex_type(lx, &t) || !GROW(P, P->res, P->res_cap, nres + 1)) return false;
            P->res[nres++] = (result){at, (uint32_t)n, t};
            if (ir_lex_eat(lx, ',')) {
                ir_lex_ws(lx);
                if (lx->p < lx->eol && *lx->p == '%') continue;
                return ERR(P, lx->p, "expected another result '%%name : TYPE' after ',', found %s",
                           FOUND(P, lx->p, fb));
            }
            if (ir_lex_eat(lx, '=')) break;
            return ERR(P, lx->p, "expected ',' or '=' after result type, found %s", FOUND(P, lx->p, fb));
        }
        ir_lex_ws(lx);
    }
    const char *name_at = lx->p;
    ir_lex_word(lx, &s, &n);
    if (!n) return ERR(P, name_at, "expected an op name, found %s", FOUND(P, name_at, fb));
    rk_opcode code = op_lookup(P, s, n);
    if (code == RK_OP_INVALID) return unknown_op(P, name_at, s, n);
    if (!ir_lex_expect(lx, '(', "after the op name")) return false;
    if (!ir_lex_eat(lx, ')')) {
        for (;;) {
            ir_lex_ws(lx);
            const char *at = lx->p;
            if (at >= lx->eol || *at != '%')
                return ERR(P, at, "expected an operand '%%name', found %s", FOUND(P, at, fb));
            lx->p++;
            ir_lex_word(lx, &s, &n);
            if (!GROW(P, P->in, P->in_cap, nin + 1) || !lookup_operand(P, at, s, n, &P->in[nin])) return false;
            nin++;
            if (ir_lex_eat(lx, ',')) continue;
            if (ir_lex_eat(lx, ')')) break;
            return ERR(P, lx->p, "expected ',' or ')' after operand, found %s", FOUND(P, lx->p, fb));
        }
    }
    if (nin > UINT16_MAX || nres > UINT16_MAX) return ERR(P, name_at, "more than 65535 operands or results");
    rk_attrs attrs = {0};
    uint32_t *cols = NULL;
    const char *loc = NULL;
    ir_lex_ws(lx);
    /* key columns are kept only for scf.for, whose loop variables are read from attributes */
    if (lx->p < lx->eol && *lx->p == '{' && !ir_lex_attr_map(lx, &attrs, code == RK_OP_FOR ? &cols : NULL, 0))
        return false;
    ir_lex_ws(lx);
    if (lx->p < lx->eol && *lx->p == '@') {
        const char *at = lx->p++;
        ir_lex_word(lx, &s, &n);
        if (n != 3 || memcmp(s, "loc", 3) != 0)
            return ERR(P, at, "expected '@loc \"...\"' or end of line after the op, found %s", FOUND(P, at, fb));
        if (!ir_lex_string(lx, &loc)) return false;
    }
    if (!ir_lex_end(lx, "the op")) return false;

    const rk_op_info *info = rk_op_info_of(code);
    rk_op *op = ir_op_alloc(k, code, nin, nres, info->nreg);
    if (!op) return ir_lex_oom(lx);
    op->nreg = 0;                 /* grows as region lines attach */
    if (nin) memcpy(op->in, P->in, nin * sizeof *op->in);
    op->attrs = attrs;
    op->loc = loc;
    op->line = lx->lineno;
    for (uint32_t i = 0; i < nres; i++) {
        rk_type t = P->res[i].t;
        /* upstream spells the buffer resource type vec<i32x4> */
        if (code == RK_OP_BUFFER_RSRC && rk_type_count(k, t) == 4 && rk_type_kind_of(k, t) == RK_TK_VEC &&
            rk_type_eq(rk_type_elem(k, t), RK_T_I32))
            t = RK_T_RSRC;
        op->out[i] = define(P, P->res[i].at + 1, P->res[i].n, t, RK_VK_RESULT, info->nreg ? N_PENDING : N_VISIBLE);
        if (!rk_value_ok(op->out[i])) return false;
        k->vals[op->out[i].id].def = op;
        k->vals[op->out[i].id].index = i;
    }
    if (!ir_region_append(k, f->r, op)) return ir_lex_oom(lx);
    f->last = op;
    f->nargs = 0;
    if (info->nreg && nres) f->pending = op;
    if (code == RK_OP_FOR) return for_args(P, f, op, cols, name_at);
    return true;
}

static bool body_line(parser *P) {
    ir_lex *lx = &P->lx;
    frame *f = &P->frames[P->depth - 1];
    const char *at = lx->p, *s;
    size_t n;
    char fb[48];
    if (*at == '}') {
        lx->p++;
        if (!ir_lex_end(lx, "'}'")) return false;
        close_region(P);
        return true;
    }
    if (*at == '%') return op_line(P, f);
    ir_lex_word(lx, &s, &n);
    if (n == 6 && memcmp(s, "region", 6) == 0) return region_line(P, f, at);
    lx->p = at;
    if (n) return op_line(P, f);
    return ERR(P, at, "expected an op, 'region @LABEL {' or '}', found %s", FOUND(P, at, fb));
}

static bool parse_all(parser *P) {
    ir_lex *lx = &P->lx;
    if (!next_line(P)) return eof_error(P, "the header 'ckdsl.ir v1'");
    if (!header(P)) return false;
    if (!next_line(P)) return eof_error(P, "'kernel @NAME {'");
    if (!kernel_line(P)) return false;
    if (!next_line(P)) return eof_error(P, "'params {'");
    const char *at = lx->p, *s;
    size_t n;
    ir_lex_word(lx, &s, &n);
    lx->p = at;
    if (n == 5 && memcmp(s, "attrs", 5) == 0) {
        lx->p += 5;
        if (!ir_lex_attr_map(lx, &P->k->attrs, NULL, 0) || !ir_lex_end(lx, "the kernel attributes")) return false;
        if (!next_line(P)) return eof_error(P, "'params {'");
    }
    if (!params_block(P)) return false;
    if (!next_line(P)) return eof_error(P, "'region @entry {'");
    at = lx->p;
    if (!keyword(P, "region", "'region @entry {' (the kernel body)") ||
        !ir_lex_expect(lx, '@', "before the region label"))
        return false;
    const char *lat = lx->p;
    ir_lex_word(lx, &s, &n);
    if (n != 5 || memcmp(s, "entry", 5) != 0) {
        char fb[48];
        return ERR(P, lat, "expected the kernel body 'region @entry {', found %s", FOUND(P, lat, fb));
    }
    if (!ir_lex_expect(lx, '{', "after 'region @entry'") || !ir_lex_end(lx, "'region @entry {'") ||
        !push_frame(P, &P->k->body, at))
        return false;
    while (P->depth) {
        if (!next_line(P)) {
            const frame *f = &P->frames[P->depth - 1];
            return eof_error(P, "'}' closing region @%s opened at line %u", f->r->label, f->line);
        }
        if (!body_line(P)) return false;
    }
    if (!next_line(P)) return eof_error(P, "'}' closing kernel @%s", P->k->name);
    at = lx->p;
    if (*at != '}') {
        char fb[48];
        return ERR(P, at, "expected '}' closing kernel @%s, found %s", P->k->name, FOUND(P, at, fb));
    }
    lx->p++;
    if (!ir_lex_end(lx, "the kernel's closing '}'")) return false;
    if (next_line(P)) {
        char fb[48];
        return ERR(P, lx->p, "unexpected text after the end of kernel @%s: %s", P->k->name, FOUND(P, lx->p, fb));
    }
    return !lx->failed;
}

rk_status rk_parse(const char *text, size_t len, rk_kernel **out) {
    if (!out) return rk_fail(RK_ERR_INVALID, "rk_parse: out is NULL");
    *out = NULL;
    if (!text && len) return rk_fail(RK_ERR_INVALID, "rk_parse: text is NULL");
    parser *P = rk_calloc(1, sizeof *P);
    if (!P) return rk_fail(RK_ERR_NOMEM, "out of memory parsing IR");
    P->next = text ? text : "";
    P->end = P->next + len;
    bool ok = parse_all(P);
    if (ok && P->k->err != RK_OK) ok = ir_lex_oom(&P->lx);
    ir_lex_free(&P->lx);
    rk_free(P->vb, P->vb_cap * sizeof *P->vb);
    rk_free(P->bynum, P->bynum_cap * sizeof *P->bynum);
    rk_free(P->slots, P->slots_cap * sizeof *P->slots);
    rk_free(P->scope, P->scope_cap * sizeof *P->scope);
    rk_free(P->in, P->in_cap * sizeof *P->in);
    rk_free(P->res, P->res_cap * sizeof *P->res);
    rk_kernel *k = P->k;
    rk_status st = P->lx.status;
    char msg[sizeof P->lx.msg];
    memcpy(msg, P->lx.msg, sizeof msg);
    rk_free(P, sizeof *P);
    if (!ok) {
        rk_kernel_free(k);
        return rk_fail(st ? st : RK_ERR_PARSE, "%s", msg);
    }
    *out = k;
    return RK_OK;
}
