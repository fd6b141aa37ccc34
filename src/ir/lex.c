/* rocke — the ckdsl.ir v1 lexer: words, strings, types and tagged attribute
 * values on one line, errors as LINE:COL: expected X, found Y. Layer: ir. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "text_int.h"

void ir_lex_free(ir_lex *lx) {
    rk_free(lx->vals, lx->vals_cap * sizeof *lx->vals);
    rk_free(lx->items, lx->items_cap * sizeof *lx->items);
    rk_free(lx->item_cols, lx->cols_cap * sizeof *lx->item_cols);
    lx->vals = NULL;
    lx->items = NULL;
    lx->item_cols = NULL;
    lx->nvals = lx->vals_cap = lx->nitems = lx->items_cap = lx->cols_cap = 0;
}

uint32_t ir_lex_col(const ir_lex *lx, const char *at) {
    if (!at || at < lx->line || at > lx->eol) at = lx->eol;
    return (uint32_t)(at - lx->line) + 1;
}

bool ir_lex_error(ir_lex *lx, const char *at, const char *fmt, ...) {
    if (lx->failed) return false;
    lx->failed = true;
    lx->status = RK_ERR_PARSE;
    int n = snprintf(lx->msg, sizeof lx->msg, "%u:%u: ", lx->lineno ? lx->lineno : 1, ir_lex_col(lx, at));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lx->msg + n, sizeof lx->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

bool ir_lex_oom(ir_lex *lx) {
    if (lx->failed) return false;
    lx->failed = true;
    lx->status = RK_ERR_NOMEM;
    snprintf(lx->msg, sizeof lx->msg, "%u: out of memory while parsing", lx->lineno);
    return false;
}

const char *ir_lex_found(const ir_lex *lx, const char *at, char buf[48]) {
    if (at >= lx->eol) return "end of line";
    unsigned char c = (unsigned char)*at;
    if (c == ' ') return "a space";
    if (c == '\t') return "a tab";
    size_t n = 0;
    if (c == '%' || c == '@' || ir_word_char(c)) {
        n = 1;
        while (at + n < lx->eol && ir_word_char((unsigned char)at[n])) n++;
    } else if (c == '"') {
        n = 1;
        while (at + n < lx->eol && at[n] != '"') n++;
        if (at + n < lx->eol) n++;
    } else if (c < 0x20 || c >= 0x7f) {
        snprintf(buf, 48, "byte 0x%02x", c);
        return buf;
    } else {
        n = 1;
    }
    for (size_t i = 0; i < n; i++)   /* keep the message printable */
        if ((unsigned char)at[i] < 0x20 || (unsigned char)at[i] == 0x7f) { n = i; break; }
    if (n > 32) snprintf(buf, 48, "'%.32s...'", at);
    else snprintf(buf, 48, "'%.*s'", (int)n, at);
    return buf;
}

void ir_lex_ws(ir_lex *lx) {
    while (lx->p < lx->eol && (*lx->p == ' ' || *lx->p == '\t')) lx->p++;
}

bool ir_lex_eat(ir_lex *lx, char c) {
    ir_lex_ws(lx);
    if (lx->p < lx->eol && *lx->p == c) { lx->p++; return true; }
    return false;
}

bool ir_lex_expect(ir_lex *lx, char c, const char *ctx) {
    if (ir_lex_eat(lx, c)) return true;
    char fb[48];
    return ir_lex_error(lx, lx->p, "expected '%c' %s, found %s", c, ctx, ir_lex_found(lx, lx->p, fb));
}

bool ir_lex_at_eol(ir_lex *lx) {
    ir_lex_ws(lx);
    return lx->p >= lx->eol;
}

bool ir_lex_end(ir_lex *lx, const char *what) {
    if (ir_lex_at_eol(lx)) return true;
    char fb[48];
    return ir_lex_error(lx, lx->p, "expected end of line after %s, found %s", what, ir_lex_found(lx, lx->p, fb));
}

void ir_lex_word(ir_lex *lx, const char **s, size_t *n) {
    const char *p = lx->p;
    while (p < lx->eol && ir_word_char((unsigned char)*p)) p++;
    *s = lx->p;
    *n = (size_t)(p - lx->p);
    lx->p = p;
}

/* ---- strings -------------------------------------------------------------- */
static uint32_t span_hash(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 16777619u; }
    return h;
}

/* An arena copy of [s, s+n), shared with earlier equal short strings. */
static const char *intern(ir_lex *lx, const char *s, size_t n) {
    uint32_t slot = n < 32 ? span_hash(s, n) & 511 : 0;
    if (n < 32 && lx->strs[slot].s && lx->strs[slot].n == n && memcmp(lx->strs[slot].s, s, n) == 0)
        return lx->strs[slot].s;
    char *d = rk_arena_strndup(&lx->k->arena, s, n);
    if (d && n < 32) {
        lx->strs[slot].s = d;
        lx->strs[slot].n = (uint32_t)n;
    }
    return d;
}

bool ir_lex_string(ir_lex *lx, const char **out) {
    ir_lex_ws(lx);
    const char *q0 = lx->p;
    char fb[48];
    if (q0 >= lx->eol || *q0 != '"')
        return ir_lex_error(lx, q0, "expected a string \"...\", found %s", ir_lex_found(lx, q0, fb));
    const char *p = q0 + 1;
    size_t nesc = 0;
    for (;; p++) {
        if (p >= lx->eol)
            return ir_lex_error(lx, q0, "unterminated string (no closing '\"' on this line)");
        if (*p == '"') break;
        if (*p != '\\') continue;
        if (p + 1 >= lx->eol)
            return ir_lex_error(lx, q0, "unterminated string (no closing '\"' on this line)");
        char e = p[1];
        if (e != '\\' && e != '"' && e != 'n' && e != 't') {
            if ((unsigned char)e < 0x20 || (unsigned char)e >= 0x7f)
                return ir_lex_error(lx, p, "unknown escape '\\' + byte 0x%02x in string "
                                    "(only \\\\, \\\", \\n and \\t are defined)", (unsigned char)e);
            return ir_lex_error(lx, p, "unknown escape '\\%c' in string (only \\\\, \\\", \\n and \\t are defined)", e);
        }
        nesc++;
        p++;
    }
    size_t raw = (size_t)(p - q0 - 1);
    if (!nesc) {
        if (!(*out = intern(lx, q0 + 1, raw))) return ir_lex_oom(lx);
        lx->p = p + 1;
        return true;
    }
    char *s = rk_arena_alloc(&lx->k->arena, raw - nesc + 1);
    if (!s) return ir_lex_oom(lx);
    {
        char *d = s;
        for (const char *r = q0 + 1; r < p; r++) {
            if (*r != '\\') { *d++ = *r; continue; }
            r++;
            *d++ = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r;
        }
        *d = '\0';
    }
    lx->p = p + 1;
    *out = s;
    return true;
}

/* ---- types ------------------------------------------------------------------ */

rk_type ir_lex_type_text(ir_lex *lx, const char *s, size_t n) {
    uint32_t slot = span_hash(s, n) & 63;
    if (lx->types[slot].s && lx->types[slot].n == n && memcmp(lx->types[slot].s, s, n) == 0)
        return lx->types[slot].t;
    /* bound the nesting before the recursive type parser sees the text */
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<' && ++depth > 4) {
            rk_fail(RK_ERR_PARSE, "type nests deeper than 4 levels");
            return RK_T_NONE;
        }
        if (s[i] == '>') depth--;
    }
    size_t used = 0;
    rk_type t = ir_type_parse_n(lx->k, s, n, &used);
    if (rk_type_ok(t) && used != n) {
        rk_fail(RK_ERR_PARSE, "unexpected text after the type");
        return RK_T_NONE;
    }
    if (rk_type_ok(t)) {
        lx->types[slot].s = s;
        lx->types[slot].n = (uint32_t)n;
        lx->types[slot].t = t;
    }
    return t;
}

bool ir_lex_type(ir_lex *lx, rk_type *out) {
    ir_lex_ws(lx);
    const char *s = lx->p, *p = s;
    char fb[48];
    while (p < lx->eol && ir_word_char((unsigned char)*p)) p++;
    if (p < lx->eol && *p == '<') {
        int depth = 0;
        for (; p < lx->eol; p++) {
            if (*p == '<') depth++;
            else if (*p == '>' && --depth == 0) break;
        }
        if (p >= lx->eol) return ir_lex_error(lx, s, "unterminated type (missing '>')");
        p++;
    }
    if (p == s) return ir_lex_error(lx, s, "expected a type, found %s", ir_lex_found(lx, s, fb));
    size_t n = (size_t)(p - s);
    rk_type t = ir_lex_type_text(lx, s, n);
    if (!rk_type_ok(t)) {
        if (lx->k->err == RK_ERR_NOMEM) return ir_lex_oom(lx);
        const char *why = rk_error_message();
        if (!strncmp(why, "malformed type", 14)) return ir_lex_error(lx, s, "%s", why);
        return ir_lex_error(lx, s, "bad type '%.*s': %s", (int)(n > 64 ? 64 : n), s, why);
    }
    lx->p = p;
    *out = t;
    return true;
}

/* ---- numbers -------------------------------------------------------------------- */
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool lex_int(ir_lex *lx, int64_t *out) {
    const char *s = lx->p, *p = s;
    char fb[48];
    bool neg = p < lx->eol && *p == '-';
    if (neg) p++;
    if (p >= lx->eol || !is_digit(*p))
        return ir_lex_error(lx, p, "expected digits after 'i:', found %s", ir_lex_found(lx, p, fb));
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; p < lx->eol && is_digit(*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (lim - d) / 10) return ir_lex_error(lx, s, "integer literal out of range for a 64-bit attribute");
        v = v * 10 + d;
    }
    if (p < lx->eol && ir_word_char((unsigned char)*p))
        return ir_lex_error(lx, s, "malformed integer literal %s", ir_lex_found(lx, s, fb));
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    lx->p = p;
    return true;
}

static bool word_is(const char *s, const char *e, const char *lit) {
    size_t n = strlen(lit);
    return (size_t)(e - s) >= n && memcmp(s, lit, n) == 0 && (s + n == e || !ir_word_char((unsigned char)s[n]));
}

/* Python repr floats: [-]D[.D][e(+|-)D], nan, inf, -inf. */
static bool lex_float(ir_lex *lx, double *out) {
    const char *s = lx->p, *p = s, *e = lx->eol;
    char fb[48];
    if (word_is(p, e, "nan")) { *out = NAN; lx->p = p + 3; return true; }
    if (word_is(p, e, "inf")) { *out = INFINITY; lx->p = p + 3; return true; }
    if (word_is(p, e, "-inf")) { *out = -INFINITY; lx->p = p + 4; return true; }
    if (p < e && *p == '-') p++;
    if (p >= e || !is_digit(*p))
        return ir_lex_error(lx, p, "expected a number, nan or inf after 'f:', found %s", ir_lex_found(lx, p, fb));
    while (p < e && is_digit(*p)) p++;
    if (p < e && *p == '.') {
        p++;
        if (p >= e || !is_digit(*p)) return ir_lex_error(lx, s, "malformed float literal (digits must follow '.')");
        while (p < e && is_digit(*p)) p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || !is_digit(*p)) return ir_lex_error(lx, s, "malformed float literal (digits must follow 'e')");
        while (p < e && is_digit(*p)) p++;
    }
    if (p < e && ir_word_char((unsigned char)*p))
        return ir_lex_error(lx, s, "malformed float literal %s", ir_lex_found(lx, s, fb));
    char buf[128];
    size_t n = (size_t)(p - s);
    if (n >= sizeof buf) return ir_lex_error(lx, s, "float literal longer than %zu characters", sizeof buf - 1);
    memcpy(buf, s, n);   /* the text is not NUL-terminated: strtod needs a copy */
    buf[n] = '\0';
    *out = strtod(buf, NULL);
    lx->p = p;
    return true;
}

/* ---- lists and maps ----------------------------------------------------------------- */
static bool push_val(ir_lex *lx, const rk_attr_val *v) {
    if (lx->nvals == lx->vals_cap) {
        uint32_t ncap = lx->vals_cap ? lx->vals_cap * 2 : 64;
        rk_attr_val *n = rk_realloc(lx->vals, lx->vals_cap * sizeof *n, ncap * sizeof *n);
        if (!n) return ir_lex_oom(lx);
        lx->vals = n;
        lx->vals_cap = ncap;
    }
    lx->vals[lx->nvals++] = *v;
    return true;
}

static bool push_item(ir_lex *lx, const char *key, const rk_attr_val *v, uint32_t col) {
    if (lx->nitems == lx->cols_cap) {
        uint32_t ncap = lx->cols_cap ? lx->cols_cap * 2 : 64;
        uint32_t *c = rk_realloc(lx->item_cols, lx->cols_cap * sizeof *c, ncap * sizeof *c);
        if (!c) return ir_lex_oom(lx);
        lx->item_cols = c;
        lx->cols_cap = ncap;
    }
    if (lx->nitems == lx->items_cap) {
        uint32_t ncap = lx->items_cap ? lx->items_cap * 2 : 64;
        rk_attr *n = rk_realloc(lx->items, lx->items_cap * sizeof *n, ncap * sizeof *n);
        if (!n) return ir_lex_oom(lx);
        lx->items = n;
        lx->items_cap = ncap;
    }
    lx->items[lx->nitems] = (rk_attr){key, *v};
    lx->item_cols[lx->nitems++] = col;
    return true;
}

static bool lex_list(ir_lex *lx, rk_attr_val *out, uint32_t depth) {
    uint32_t base = lx->nvals;
    char fb[48];
    if (!ir_lex_eat(lx, ']')) {
        for (;;) {
            rk_attr_val v;
            if (!ir_lex_attr_value(lx, &v, depth + 1) || !push_val(lx, &v)) return false;
            if (ir_lex_eat(lx, ',')) continue;
            if (ir_lex_eat(lx, ']')) break;
            return ir_lex_error(lx, lx->p, "expected ',' or ']' after list item, found %s",
                                ir_lex_found(lx, lx->p, fb));
        }
    }
    uint32_t n = lx->nvals - base;
    rk_attr_val *items = rk_arena_alloc(&lx->k->arena, (n ? n : 1) * sizeof *items);
    if (!items) return ir_lex_oom(lx);
    if (n) memcpy(items, lx->vals + base, n * sizeof *items);
    lx->nvals = base;
    *out = (rk_attr_val){.kind = RK_AK_LIST, .n = n, .u.list = items};
    return true;
}

bool ir_lex_attr_value(ir_lex *lx, rk_attr_val *v, uint32_t depth) {
    ir_lex_ws(lx);
    const char *at = lx->p, *e = lx->eol;
    char fb[48];
    if (depth > IR_MAX_ATTR_DEPTH)
        return ir_lex_error(lx, at, "attribute values nest deeper than %d levels", IR_MAX_ATTR_DEPTH);
    if (at < e && *at == '{') {
        rk_attrs m;
        if (!ir_lex_attr_map(lx, &m, NULL, depth + 1)) return false;
        *v = (rk_attr_val){.kind = RK_AK_MAP, .n = m.n, .u.map = m.items};
        return true;
    }
    memset(v, 0, sizeof *v);
    if (e - at >= 2 && at[1] == ':') {
        lx->p = at + 2;
        switch (*at) {
        case 'b':
            v->kind = RK_AK_BOOL;
            if (word_is(lx->p, e, "true")) { v->u.b = true; lx->p += 4; return true; }
            if (word_is(lx->p, e, "false")) { v->u.b = false; lx->p += 5; return true; }
            return ir_lex_error(lx, lx->p, "expected true or false after 'b:', found %s",
                                ir_lex_found(lx, lx->p, fb));
        case 'i': v->kind = RK_AK_INT; return lex_int(lx, &v->u.i);
        case 'f': v->kind = RK_AK_FLOAT; return lex_float(lx, &v->u.f);
        case 's':
            v->kind = RK_AK_STR;
            if (lx->p >= e || *lx->p != '"')
                return ir_lex_error(lx, lx->p, "expected '\"' after 's:', found %s", ir_lex_found(lx, lx->p, fb));
            return ir_lex_string(lx, &v->u.s);
        case 'l':
            if (lx->p >= e || *lx->p != '[')
                return ir_lex_error(lx, lx->p, "expected '[' after 'l:', found %s", ir_lex_found(lx, lx->p, fb));
            lx->p++;
            return lex_list(lx, v, depth);
        default: break;
        }
        lx->p = at;
    }
    return ir_lex_error(lx, at, "expected a tagged value (b:, i:, f:, s:\"...\", l:[...]) or a {...} map, "
                        "found %s", ir_lex_found(lx, at, fb));
}

static int cmp_item(const void *a, const void *b) {
    return strcmp((*(const rk_attr *const *)a)->key, (*(const rk_attr *const *)b)->key);
}

/* Report a key that appears twice among items[base..]; sorts a scratch copy
 * when the map is large so huge inputs stay O(n log n). */
static bool check_dups(ir_lex *lx, uint32_t base, uint32_t n) {
    if (n < 2) return true;
    const rk_attr *it = lx->items + base;
    const char *dup = NULL;
    uint32_t col = 0;
    if (n <= 16) {
        for (uint32_t j = 1; j < n && !dup; j++)
            for (uint32_t i = 0; i < j; i++)
                if (strcmp(it[i].key, it[j].key) == 0) { dup = it[j].key; col = lx->item_cols[base + j]; break; }
    } else {
        const rk_attr **o = rk_malloc(n * sizeof *o);
        if (!o) return ir_lex_oom(lx);
        for (uint32_t i = 0; i < n; i++) o[i] = &it[i];
        qsort(o, n, sizeof *o, cmp_item);
        for (uint32_t i = 1; i < n && !dup; i++) {
            if (strcmp(o[i - 1]->key, o[i]->key)) continue;
            uint32_t c0 = lx->item_cols[base + (uint32_t)(o[i - 1] - it)];
            uint32_t c1 = lx->item_cols[base + (uint32_t)(o[i] - it)];
            dup = o[i]->key;
            col = c0 > c1 ? c0 : c1;
        }
        rk_free(o, n * sizeof *o);
    }
    if (!dup) return true;
    return ir_lex_error(lx, lx->line + col - 1, "duplicate attribute '%.40s'", dup);
}

bool ir_lex_attr_map(ir_lex *lx, rk_attrs *out, uint32_t **cols, uint32_t depth) {
    char fb[48];
    if (!ir_lex_expect(lx, '{', "to open an attribute map")) return false;
    uint32_t base = lx->nitems;
    if (!ir_lex_eat(lx, '}')) {
        for (;;) {
            ir_lex_ws(lx);
            const char *at = lx->p, *key;
            if (at < lx->eol && *at == '"') {
                if (!ir_lex_string(lx, &key)) return false;
            } else {
                size_t n;
                ir_lex_word(lx, &key, &n);
                if (!n)
                    return ir_lex_error(lx, at, "expected an attribute name, found %s", ir_lex_found(lx, at, fb));
                if (!(key = intern(lx, key, n))) return ir_lex_oom(lx);
            }
            if (!ir_lex_eat(lx, '='))
                return ir_lex_error(lx, lx->p, "expected '=' after attribute name '%.40s', found %s", key,
                                    ir_lex_found(lx, lx->p, fb));
            rk_attr_val v;
            if (!ir_lex_attr_value(lx, &v, depth) || !push_item(lx, key, &v, ir_lex_col(lx, at))) return false;
            if (ir_lex_eat(lx, ',')) continue;
            if (ir_lex_eat(lx, '}')) break;
            return ir_lex_error(lx, lx->p, "expected ',' or '}' after attribute '%.40s', found %s", key,
                                ir_lex_found(lx, lx->p, fb));
        }
    }
    uint32_t n = lx->nitems - base;
    if (!check_dups(lx, base, n)) return false;
    rk_attr *items = rk_arena_alloc(&lx->k->arena, (n ? n : 1) * sizeof *items);
    if (!items) return ir_lex_oom(lx);
    if (n) memcpy(items, lx->items + base, n * sizeof *items);
    if (cols) {
        *cols = rk_arena_alloc(&lx->k->arena, (n ? n : 1) * sizeof **cols);
        if (!*cols) return ir_lex_oom(lx);
        if (n) memcpy(*cols, lx->item_cols + base, n * sizeof **cols);
    }
    lx->nitems = base;
    *out = (rk_attrs){items, n, n};
    return true;
}
