/* rocke — a small strict JSON reader/writer (RFC 8259): UTF-8 validation,
 * escapes with surrogate pairs, a nesting limit, finite numbers only, no
 * duplicate keys; the writer keeps insertion order and prints numbers so they
 * read back to the same double. Layer: manifest. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rocke/ir.h"
#include "rocke/manifest.h"
#include "../base/base_int.h"

/* ---- values ------------------------------------------------------------------ */
static rk_json *node(rk_json_kind kind) {
    rk_json *j = rk_calloc(1, sizeof *j);
    if (j) j->kind = kind;
    return j;
}

void rk_json_free(rk_json *j) {
    if (!j) return;
    for (uint32_t i = 0; i < j->n; i++) {
        rk_json_free(j->items[i]);
        if (j->keys) rk_free(j->keys[i], strlen(j->keys[i]) + 1);
    }
    if (j->items) rk_free(j->items, j->cap * sizeof *j->items);
    if (j->keys) rk_free(j->keys, j->cap * sizeof *j->keys);
    if (j->str) rk_free(j->str, strlen(j->str) + 1);
    rk_free(j, sizeof *j);
}

rk_json *rk_json_null(void) { return node(RK_JSON_NULL); }
rk_json *rk_json_bool(bool b) {
    rk_json *j = node(RK_JSON_BOOL);
    if (j) j->b = b;
    return j;
}
rk_json *rk_json_num(double v) {
    rk_json *j = node(RK_JSON_NUMBER);
    if (j) j->num = v;
    return j;
}
rk_json *rk_json_int(int64_t v) {
    rk_json *j = node(RK_JSON_NUMBER);
    if (j) { j->num = (double)v; j->i = v; j->is_int = true; }
    return j;
}
rk_json *rk_json_str(const char *s) {
    rk_json *j = node(RK_JSON_STRING);
    if (j && !(j->str = rk_strdup(s ? s : ""))) { rk_free(j, sizeof *j); return NULL; }
    return j;
}
rk_json *rk_json_array(void) { return node(RK_JSON_ARRAY); }
rk_json *rk_json_object(void) { return node(RK_JSON_OBJECT); }

static bool grow(rk_json *j) {
    if (j->n < j->cap) return true;
    uint32_t nc = j->cap ? j->cap * 2 : 4;
    bool obj = j->kind == RK_JSON_OBJECT;
    rk_json **items = rk_malloc(nc * sizeof *items);
    char **keys = obj ? rk_malloc(nc * sizeof *keys) : NULL;
    if (!items || (obj && !keys)) {
        rk_free(items, nc * sizeof *items);
        rk_free(keys, nc * sizeof *keys);
        return false;
    }
    if (j->n) memcpy(items, j->items, j->n * sizeof *items);
    if (obj && j->n) memcpy(keys, j->keys, j->n * sizeof *keys);
    rk_free(j->items, j->cap * sizeof *j->items);
    rk_free(j->keys, j->cap * sizeof *j->keys);
    j->items = items;
    j->keys = keys;
    j->cap = nc;
    return true;
}

bool rk_json_push(rk_json *arr, rk_json *v) {
    if (!arr || !v || arr->kind != RK_JSON_ARRAY || !grow(arr)) { rk_json_free(v); return false; }
    arr->items[arr->n++] = v;
    return true;
}

const rk_json *rk_json_get(const rk_json *j, const char *key) {
    if (!j || j->kind != RK_JSON_OBJECT) return NULL;
    for (uint32_t i = 0; i < j->n; i++)
        if (!strcmp(j->keys[i], key)) return j->items[i];
    return NULL;
}

bool rk_json_set(rk_json *obj, const char *key, rk_json *v) {
    if (!obj || !v || obj->kind != RK_JSON_OBJECT) { rk_json_free(v); return false; }
    for (uint32_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) {
            rk_json_free(obj->items[i]);
            obj->items[i] = v;
            return true;
        }
    char *k = rk_strdup(key);
    if (!k || !grow(obj)) {
        if (k) rk_free(k, strlen(k) + 1);
        rk_json_free(v);
        return false;
    }
    obj->keys[obj->n] = k;
    obj->items[obj->n++] = v;
    return true;
}

/* ---- parser ------------------------------------------------------------------------ */
typedef struct jp {
    const char *s;
    size_t len, pos;
    bool failed;
} jp;

static rk_json *fail_at(jp *p, const char *what) {
    if (p->failed) return NULL;
    p->failed = true;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < p->pos && i < p->len; i++) {
        if (p->s[i] == '\n') { line++; col = 1; }
        else col++;
    }
    rk_fail(RK_ERR_PARSE, "json: line %zu, column %zu: %s", line, col, what);
    return NULL;
}

static void skip_ws(jp *p) {
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static bool literal(jp *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return false;
    p->pos += n;
    return true;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool hex4(jp *p, uint32_t *out) {
    if (p->len - p->pos < 4) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p->s[p->pos + (size_t)i]);
        if (h < 0) return false;
        v = v << 4 | (uint32_t)h;
    }
    p->pos += 4;
    *out = v;
    return true;
}

static void put_utf8(rk_buf *b, uint32_t cp) {
    if (cp < 0x80) rk_buf_putc(b, (char)cp);
    else if (cp < 0x800) { rk_buf_putc(b, (char)(0xC0 | cp >> 6)); rk_buf_putc(b, (char)(0x80 | (cp & 0x3F))); }
    else if (cp < 0x10000) {
        rk_buf_putc(b, (char)(0xE0 | cp >> 12));
        rk_buf_putc(b, (char)(0x80 | (cp >> 6 & 0x3F)));
        rk_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        rk_buf_putc(b, (char)(0xF0 | cp >> 18));
        rk_buf_putc(b, (char)(0x80 | (cp >> 12 & 0x3F)));
        rk_buf_putc(b, (char)(0x80 | (cp >> 6 & 0x3F)));
        rk_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* Length of the valid UTF-8 sequence at s (0 = invalid): no overlongs, no
 * surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t avail) {
    unsigned char c = s[0];
    size_t n;
    uint32_t cp, min;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (avail < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* Parses a string at p->pos (on the opening quote) into a new heap string. */
static char *parse_string(jp *p) {
    rk_buf b;
    rk_buf_init(&b);
    p->pos++;
    for (;;) {
        if (p->pos >= p->len) { fail_at(p, "unterminated string"); goto bad; }
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') { p->pos++; break; }
        if (c < 0x20) { fail_at(p, "control character in string (escape it)"); goto bad; }
        if (c == '\\') {
            p->pos++;
            if (p->pos >= p->len) { fail_at(p, "unterminated escape"); goto bad; }
            char e = p->s[p->pos++];
            switch (e) {
            case '"': rk_buf_putc(&b, '"'); break;
            case '\\': rk_buf_putc(&b, '\\'); break;
            case '/': rk_buf_putc(&b, '/'); break;
            case 'b': rk_buf_putc(&b, '\b'); break;
            case 'f': rk_buf_putc(&b, '\f'); break;
            case 'n': rk_buf_putc(&b, '\n'); break;
            case 'r': rk_buf_putc(&b, '\r'); break;
            case 't': rk_buf_putc(&b, '\t'); break;
            case 'u': {
                uint32_t cp, lo;
                if (!hex4(p, &cp)) { fail_at(p, "\\u needs four hex digits"); goto bad; }
                if (cp >= 0xDC00 && cp <= 0xDFFF) { fail_at(p, "lone low surrogate in \\u escape"); goto bad; }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (!literal(p, "\\u") || !hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                        fail_at(p, "high surrogate not followed by a low surrogate \\u escape");
                        goto bad;
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                if (cp == 0) { fail_at(p, "\\u0000 is not allowed"); goto bad; }
                put_utf8(&b, cp);
                break;
            }
            default: p->pos--; fail_at(p, "unknown escape"); goto bad;
            }
            continue;
        }
        size_t n = utf8_len((const unsigned char *)p->s + p->pos, p->len - p->pos);
        if (!n) { fail_at(p, "invalid UTF-8 in string"); goto bad; }
        rk_buf_putn(&b, p->s + p->pos, n);
        p->pos += n;
    }
    char *s = rk_buf_take(&b);
    if (!s) { p->failed = true; rk_fail(RK_ERR_NOMEM, "json: out of memory"); }
    return s;
bad:
    rk_buf_free(&b);
    return NULL;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static rk_json *parse_number(jp *p) {
    size_t start = p->pos;
    bool integral = true;
    if (p->pos < p->len && p->s[p->pos] == '-') p->pos++;
    if (p->pos >= p->len || !is_digit(p->s[p->pos])) return fail_at(p, "malformed number");
    if (p->s[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->len && is_digit(p->s[p->pos])) return fail_at(p, "leading zero in number");
    } else {
        while (p->pos < p->len && is_digit(p->s[p->pos])) p->pos++;
    }
    if (p->pos < p->len && p->s[p->pos] == '.') {
        integral = false;
        p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos])) return fail_at(p, "digit expected after '.'");
        while (p->pos < p->len && is_digit(p->s[p->pos])) p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integral = false;
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos])) return fail_at(p, "digit expected in exponent");
        while (p->pos < p->len && is_digit(p->s[p->pos])) p->pos++;
    }
    char tmp[64];
    size_t n = p->pos - start;
    if (n >= sizeof tmp) { p->pos = start; return fail_at(p, "number longer than 63 characters"); }
    memcpy(tmp, p->s + start, n);
    tmp[n] = 0;
    errno = 0;
    double v = strtod(tmp, NULL);
    if (!isfinite(v)) { p->pos = start; return fail_at(p, "number out of range"); }
    rk_json *j = node(RK_JSON_NUMBER);
    if (!j) { p->failed = true; rk_fail(RK_ERR_NOMEM, "json: out of memory"); return NULL; }
    j->num = v;
    if (integral) {
        errno = 0;
        long long iv = strtoll(tmp, NULL, 10);
        if (errno == 0) { j->is_int = true; j->i = iv; }
    }
    return j;
}

static rk_json *parse_value(jp *p, int depth);

static rk_json *parse_container(jp *p, int depth, bool obj) {
    if (depth >= RK_JSON_MAX_DEPTH) return fail_at(p, "nesting deeper than 64 levels");
    rk_json *j = node(obj ? RK_JSON_OBJECT : RK_JSON_ARRAY);
    if (!j) { p->failed = true; rk_fail(RK_ERR_NOMEM, "json: out of memory"); return NULL; }
    p->pos++;
    skip_ws(p);
    char close = obj ? '}' : ']';
    if (p->pos < p->len && p->s[p->pos] == close) { p->pos++; return j; }
    for (;;) {
        skip_ws(p);
        char *key = NULL;
        if (obj) {
            if (p->pos >= p->len || p->s[p->pos] != '"') { fail_at(p, "object key (a string) expected"); goto bad; }
            size_t kpos = p->pos;
            if (!(key = parse_string(p))) goto bad;
            if (rk_json_get(j, key)) {
                p->pos = kpos;
                rk_free(key, strlen(key) + 1);
                fail_at(p, "duplicate object key");
                goto bad;
            }
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                rk_free(key, strlen(key) + 1);
                fail_at(p, "':' expected after object key");
                goto bad;
            }
            p->pos++;
        }
        rk_json *v = parse_value(p, depth + 1);
        if (!v || !grow(j)) {
            if (key) rk_free(key, strlen(key) + 1);
            if (v) { rk_json_free(v); p->failed = true; rk_fail(RK_ERR_NOMEM, "json: out of memory"); }
            goto bad;
        }
        if (obj) j->keys[j->n] = key;
        j->items[j->n++] = v;
        skip_ws(p);
        if (p->pos >= p->len) { fail_at(p, obj ? "unterminated object" : "unterminated array"); goto bad; }
        char c = p->s[p->pos++];
        if (c == close) return j;
        if (c != ',') { p->pos--; fail_at(p, obj ? "',' or '}' expected" : "',' or ']' expected"); goto bad; }
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == close) { fail_at(p, "trailing comma"); goto bad; }
    }
bad:
    rk_json_free(j);
    return NULL;
}

static rk_json *parse_value(jp *p, int depth) {
    skip_ws(p);
    if (p->pos >= p->len) return fail_at(p, "value expected, found end of input");
    char c = p->s[p->pos];
    switch (c) {
    case '{': return parse_container(p, depth, true);
    case '[': return parse_container(p, depth, false);
    case '"': {
        char *s = parse_string(p);
        if (!s) return NULL;
        rk_json *j = node(RK_JSON_STRING);
        if (!j) { rk_free(s, strlen(s) + 1); p->failed = true; rk_fail(RK_ERR_NOMEM, "json: out of memory"); return NULL; }
        j->str = s;
        return j;
    }
    case 't': if (literal(p, "true")) return rk_json_bool(true); break;
    case 'f': if (literal(p, "false")) return rk_json_bool(false); break;
    case 'n': if (literal(p, "null")) return rk_json_null(); break;
    default:
        if (c == '-' || is_digit(c)) return parse_number(p);
        break;
    }
    return fail_at(p, "value expected (object, array, string, number, true, false or null)");
}

rk_json *rk_json_parse(const char *text, size_t len) {
    jp p = {.s = text ? text : "", .len = text ? len : 0};
    rk_json *j = parse_value(&p, 0);
    if (!j) {
        if (!p.failed) rk_fail(RK_ERR_NOMEM, "json: out of memory");
        return NULL;
    }
    skip_ws(&p);
    if (p.pos != p.len) {
        fail_at(&p, "unexpected text after the value");
        rk_json_free(j);
        return NULL;
    }
    return j;
}

/* ---- writer ------------------------------------------------------------------------ */
static void write_str(rk_buf *b, const char *s) {
    rk_buf_putc(b, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': rk_buf_puts(b, "\\\""); break;
        case '\\': rk_buf_puts(b, "\\\\"); break;
        case '\n': rk_buf_puts(b, "\\n"); break;
        case '\r': rk_buf_puts(b, "\\r"); break;
        case '\t': rk_buf_puts(b, "\\t"); break;
        case '\b': rk_buf_puts(b, "\\b"); break;
        case '\f': rk_buf_puts(b, "\\f"); break;
        default:
            if (*c < 0x20) rk_buf_printf(b, "\\u%04x", *c);
            else rk_buf_putc(b, (char)*c);
        }
    }
    rk_buf_putc(b, '"');
}

static void indent(rk_buf *b, bool pretty, int depth) {
    if (!pretty) return;
    rk_buf_putc(b, '\n');
    for (int i = 0; i < depth; i++) rk_buf_puts(b, "  ");
}

static bool write_value(rk_buf *b, const rk_json *j, bool pretty, int depth) {
    switch (j->kind) {
    case RK_JSON_NULL: rk_buf_puts(b, "null"); return true;
    case RK_JSON_BOOL: rk_buf_puts(b, j->b ? "true" : "false"); return true;
    case RK_JSON_NUMBER: {
        if (j->is_int) { rk_buf_put_i64(b, j->i); return true; }
        if (!isfinite(j->num)) { rk_fail(RK_ERR_INVALID, "json: cannot write a non-finite number"); return false; }
        char t[32];
        rk_fmt_double_repr(t, j->num);
        rk_buf_puts(b, t);
        return true;
    }
    case RK_JSON_STRING: write_str(b, j->str); return true;
    case RK_JSON_ARRAY:
    case RK_JSON_OBJECT: {
        bool obj = j->kind == RK_JSON_OBJECT;
        rk_buf_putc(b, obj ? '{' : '[');
        for (uint32_t i = 0; i < j->n; i++) {
            if (i) rk_buf_putc(b, ',');
            if (!pretty && i) rk_buf_putc(b, ' ');
            indent(b, pretty, depth + 1);
            if (obj) {
                write_str(b, j->keys[i]);
                rk_buf_puts(b, ": ");
            }
            if (!write_value(b, j->items[i], pretty, depth + 1)) return false;
        }
        if (j->n) indent(b, pretty, depth);
        rk_buf_putc(b, obj ? '}' : ']');
        return true;
    }
    }
    return false;
}

char *rk_json_write(const rk_json *j, bool pretty) {
    rk_buf b;
    rk_buf_init(&b);
    if (!j || !write_value(&b, j, pretty, 0)) { rk_buf_free(&b); return NULL; }
    if (pretty) rk_buf_putc(&b, '\n');
    char *s = rk_buf_take(&b);
    if (!s) rk_fail(RK_ERR_NOMEM, "json: out of memory");
    return s;
}
