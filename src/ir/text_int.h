/* rocke — internals shared by the text forms: the printer (print.c), the
 * ckdsl.ir v1 serializer (serialize.c), lexer and parser (lex.c, parse.c)
 * and the canonicalizer (canon.c). Layer: ir. */
#ifndef ROCKE_TEXT_INT_H
#define ROCKE_TEXT_INT_H

#include "ir_int.h"

/* ---- text.c: output helpers ------------------------------------------------ */
/* Appends for the emitters: inline, and without rk_buf's per-call NUL; the
 * text is terminated once by ir_buf_finish. OOM stays sticky in b->oom. */
static inline bool ir_room(rk_buf *b, size_t n) { return b->len + n + 1 <= b->cap || rk_buf_reserve(b, n); }
static inline void ir_put(rk_buf *b, const char *s, size_t n) {
    if (!ir_room(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
}
static inline void ir_puts(rk_buf *b, const char *s) { ir_put(b, s, strlen(s)); }
static inline void ir_putc(rk_buf *b, char c) {
    if (ir_room(b, 1)) b->data[b->len++] = c;
}
#define IR_PUT_LIT(b, lit) ir_put((b), (lit), sizeof(lit) - 1)
void ir_put_i64(rk_buf *b, int64_t v);
/* Terminate and hand over the text (NULL on OOM, buffer freed). */
char *ir_buf_finish(rk_buf *b);
/* "%name" of a value (hint + counter number, or the parsed name). */
void ir_put_value(rk_buf *b, const rk_kernel *k, rk_value v);
/* "..." escaping only \\ \" \n \t; every other byte is written as is. */
void ir_put_quoted(rk_buf *b, const char *s);
/* A key or name the parser reads bare: [A-Za-z0-9_.]+ */
bool ir_is_word(const char *s, size_t n);
extern const bool ir_word_chars[256];
static inline bool ir_word_char(unsigned char c) { return ir_word_chars[c]; }
/* Attributes sorted by key (code point order): order[] gets n pointers.
 * Returns a heap array when n is large (free with ir_sorted_free), else
 * fills `local` (RK_COUNTOF >= 16). NULL on OOM. */
const rk_attr **ir_sorted_attrs(const rk_attr *items, uint32_t n, const rk_attr **local, uint32_t nlocal);
void ir_sorted_free(const rk_attr **order, const rk_attr **local, uint32_t n);

/* ---- lex.c: the parser's cursor over one line ------------------------------ */
enum { IR_MAX_REGION_DEPTH = 64, IR_MAX_ATTR_DEPTH = 32 };

typedef struct ir_lex {
    const char *line, *eol;     /* current line without its \r\n */
    const char *p;              /* cursor */
    uint32_t lineno;            /* 1-based */
    rk_kernel *k;               /* strings and lists go to its arena */
    bool failed;
    rk_status status;           /* RK_ERR_PARSE or RK_ERR_NOMEM once failed */
    char msg[512];              /* "LINE:COL: message" */
    /* scratch stacks for attribute lists and maps being read (nesting
     * levels share them, each level owning the tail it pushed) */
    rk_attr_val *vals;
    uint32_t nvals, vals_cap;
    rk_attr *items;
    uint32_t *item_cols;        /* column of each item's key */
    uint32_t nitems, items_cap, cols_cap;
    /* recently parsed type names (text stays alive for the whole parse) */
    struct { const char *s; uint32_t n; rk_type t; } types[64];
    /* short keys and strings already copied to the arena: attribute maps
     * repeat the same few ("align", "elem_type", "f32"), so share them */
    struct { const char *s; uint32_t n; } strs[512];
} ir_lex;

void ir_lex_free(ir_lex *lx);
/* Record the first error, at `at` (a pointer into the current line). */
bool ir_lex_error(ir_lex *lx, const char *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
bool ir_lex_oom(ir_lex *lx);
/* Describe the token at `at` for "found ..." in messages (into buf). */
const char *ir_lex_found(const ir_lex *lx, const char *at, char buf[48]);
uint32_t ir_lex_col(const ir_lex *lx, const char *at);

void ir_lex_ws(ir_lex *lx);
/* Skip blanks; true (and consume) if the next byte is c. */
bool ir_lex_eat(ir_lex *lx, char c);
/* Skip blanks and require c; `ctx` completes "expected 'c' ctx, found ...". */
bool ir_lex_expect(ir_lex *lx, char c, const char *ctx);
bool ir_lex_at_eol(ir_lex *lx);
/* Require the end of the line after `what`. */
bool ir_lex_end(ir_lex *lx, const char *what);
/* A bare word [A-Za-z0-9_.]+ (may be empty: *n == 0). */
void ir_lex_word(ir_lex *lx, const char **s, size_t *n);
/* A "..." string, unescaped into the kernel arena. */
bool ir_lex_string(ir_lex *lx, const char **out);
/* A type name; used for results, params and type-valued attributes. */
bool ir_lex_type(ir_lex *lx, rk_type *out);
/* A tagged attribute value (b: i: f: s: l:[...]) or an untagged {...} map. */
bool ir_lex_attr_value(ir_lex *lx, rk_attr_val *out, uint32_t depth);
/* "{ key = value, ... }" into an rk_attrs (keys unique); cols (optional)
 * receives a parallel arena array with the column of each key. */
bool ir_lex_attr_map(ir_lex *lx, rk_attrs *out, uint32_t **cols, uint32_t depth);

/* Parse a complete type name held in the arena (attribute values such as
 * iv_type); RK_T_NONE with rk_error_message() set when malformed. */
rk_type ir_lex_type_text(ir_lex *lx, const char *s, size_t n);

#endif
