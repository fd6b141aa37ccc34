/* rocke — lowering text primitives: the instruction formatter, operand and
 * type texts, literal rendering, temporaries and blocks, the declaration set
 * and metadata nodes, first-error recording. Everything here is vendor
 * neutral and allocation goes to the lowering's arena. Layer: lower. */
#include <math.h>
#include <stdio.h>

#include "lower_int.h"
#include "../base/fp.h"

/* ---- errors ------------------------------------------------------------------------- */
bool lw_error(lw_ctx *cx, const rk_op *op, rk_status s, const char *fmt, ...) {
    if (cx->err != RK_OK) return false;
    cx->err = s;
    int off = 0;
    if (op) {
        off = snprintf(cx->msg, sizeof cx->msg, "%s", rk_opcode_name(op->code));
        if (op->line && off >= 0 && (size_t)off < sizeof cx->msg)
            off += snprintf(cx->msg + off, sizeof cx->msg - (size_t)off, " (line %u)", op->line);
        else if (op->loc && off >= 0 && (size_t)off < sizeof cx->msg)
            off += snprintf(cx->msg + off, sizeof cx->msg - (size_t)off, " (at %s)", op->loc);
        if (off >= 0 && (size_t)off < sizeof cx->msg) off += snprintf(cx->msg + off, sizeof cx->msg - (size_t)off, ": ");
    }
    if (off < 0 || (size_t)off >= sizeof cx->msg) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cx->msg + off, sizeof cx->msg - (size_t)off, fmt, ap);
    va_end(ap);
    return false;
}

static void oom(lw_ctx *cx) { lw_error(cx, NULL, RK_ERR_NOMEM, "out of memory while lowering"); }

/* ---- small strings ---------------------------------------------------------------------- */
const char *lw_printf(lw_ctx *cx, const char *fmt, ...) {
    /* one formatting pass for the usual short strings, two for long ones */
    char small[256];
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    char *d = n < 0 ? NULL : rk_arena_alloc(&cx->arena, (size_t)n + 1);
    if (d && (size_t)n < sizeof small) memcpy(d, small, (size_t)n + 1);
    else if (d) vsnprintf(d, (size_t)n + 1, fmt, aq);
    va_end(aq);
    if (!d) { oom(cx); return ""; }
    return d;
}

bool lw_seen(lw_ctx *cx, uint32_t order, uint32_t variant, uint32_t key) {
    RK_ASSERT(variant < 4096, "lw_seen: variant out of range");
    uint64_t k = ((uint64_t)(order * 4096u + variant) << 32 | key) + 1;   /* 0 marks an empty slot */
    if ((cx->nseen + 1) * 2 > cx->seen_cap) {
        uint32_t ncap = cx->seen_cap ? cx->seen_cap * 2 : 64;
        uint64_t *n = rk_arena_zalloc(&cx->arena, ncap * sizeof *n);
        if (!n) { oom(cx); return true; }
        for (uint32_t i = 0; i < cx->seen_cap; i++) {
            if (!cx->seen[i]) continue;
            uint32_t j = (uint32_t)rk_hash_u64(cx->seen[i], 0) & (ncap - 1);
            while (n[j]) j = (j + 1) & (ncap - 1);
            n[j] = cx->seen[i];
        }
        cx->seen = n;
        cx->seen_cap = ncap;
    }
    uint32_t j = (uint32_t)rk_hash_u64(k, 0) & (cx->seen_cap - 1);
    for (; cx->seen[j]; j = (j + 1) & (cx->seen_cap - 1))
        if (cx->seen[j] == k) return true;
    cx->seen[j] = k;
    cx->nseen++;
    return false;
}

/* "<prefix><word>.<n>" without printf: temporaries are made for nearly every
 * op, so this path is kept cheap. */
static const char *numbered(lw_ctx *cx, const char *prefix, const char *word, uint32_t n) {
    char digits[12];
    int nd = 0;
    do { digits[nd++] = (char)('0' + n % 10); n /= 10; } while (n);
    size_t lp = strlen(prefix), lw = strlen(word);
    char *d = rk_arena_alloc(&cx->arena, lp + lw + 1 + (size_t)nd + 1);
    if (!d) { oom(cx); return "%oom"; }
    memcpy(d, prefix, lp);
    memcpy(d + lp, word, lw);
    char *p = d + lp + lw;
    *p++ = '.';
    while (nd) *p++ = digits[--nd];
    *p = '\0';
    return d;
}

const char *lw_tmp(lw_ctx *cx, const char *word) { return numbered(cx, "%", word, ++cx->ntmp); }
const char *lw_label(lw_ctx *cx, const char *word) { return numbered(cx, "", word, ++cx->nlabel); }

/* ---- types ------------------------------------------------------------------------------- */
static const char *scalar_ty(rk_scalar s) {
    switch (s) {
    case RK_S_I1: return "i1";
    case RK_S_I4: return "i4";
    case RK_S_I8: return "i8";
    case RK_S_I16: return "i16";
    case RK_S_I32: return "i32";
    case RK_S_I64: return "i64";
    case RK_S_F16: return "half";
    case RK_S_BF16: return "bfloat";
    case RK_S_F32: return "float";
    case RK_S_F64: return "double";
    /* 8-bit floats are storage: LLVM sees their bytes */
    case RK_S_FP8E4M3: case RK_S_BF8E5M2: case RK_S_FP8E4M3FNUZ: case RK_S_BF8E5M2FNUZ: return "i8";
    case RK_S_NONE: case RK_S__COUNT: break;
    }
    return NULL;
}

static const char *scalar_mangle(rk_scalar s) {
    switch (s) {
    case RK_S_F16: return "f16";
    case RK_S_BF16: return "bf16";
    case RK_S_F32: return "f32";
    case RK_S_F64: return "f64";
    case RK_S_I1: case RK_S_I4: case RK_S_I8: case RK_S_I16: case RK_S_I32: case RK_S_I64:
    case RK_S_FP8E4M3: case RK_S_BF8E5M2: case RK_S_FP8E4M3FNUZ: case RK_S_BF8E5M2FNUZ:
        return scalar_ty(s);
    case RK_S_NONE: case RK_S__COUNT: break;
    }
    return NULL;
}

static const char *make_ty(lw_ctx *cx, rk_type t) {
    const rk_kernel *k = cx->k;
    switch (rk_type_kind_of(k, t)) {
    case RK_TK_SCALAR: return scalar_ty(rk_type_scalar(t));
    case RK_TK_VEC: return lw_printf(cx, "<%u x %s>", rk_type_count(k, t), lw_ty(cx, rk_type_elem(k, t)));
    case RK_TK_PTR: {
        unsigned as = cx->vd->as_num[rk_type_space(k, t)];
        return as ? lw_printf(cx, "ptr addrspace(%u)", as) : "ptr";
    }
    case RK_TK_SMEM: return lw_printf(cx, "ptr addrspace(%u)", cx->vd->as_num[RK_AS_LDS]);
    case RK_TK_RSRC: return cx->vd->rsrc_type;
    case RK_TK_NONE: break;
    }
    return NULL;
}

const char *lw_ty(lw_ctx *cx, rk_type t) {
    if (t.id < cx->nttext && cx->ttext[t.id]) return cx->ttext[t.id];
    const char *s = make_ty(cx, t);
    RK_ASSERT(s != NULL, "lowering a value without an LLVM type (the verifier admits only typed values)");
    if (t.id < cx->nttext) cx->ttext[t.id] = s;
    return s;
}

const char *lw_vty(lw_ctx *cx, rk_value v) { return lw_ty(cx, rk_value_type(cx->k, v)); }

const char *lw_mangle(lw_ctx *cx, rk_type t) {
    const rk_kernel *k = cx->k;
    if (rk_type_kind_of(k, t) == RK_TK_VEC)
        return lw_printf(cx, "v%u%s", rk_type_count(k, t), scalar_mangle(rk_type_scalar(rk_type_elem(k, t))));
    const char *s = scalar_mangle(rk_type_scalar(t));
    RK_ASSERT(s != NULL, "mangling a non-scalar, non-vector type");
    return s;
}

bool lw_is_float(const lw_ctx *cx, rk_type t) {
    if (rk_type_kind_of(cx->k, t) == RK_TK_VEC) t = rk_type_elem(cx->k, t);
    return rk_scalar_is_float(rk_type_scalar(t));
}

uint32_t lw_bytes(const lw_ctx *cx, rk_type t) { return (rk_type_bits(cx->k, t) + 7) / 8; }

/* ---- literals ------------------------------------------------------------------------------ */
const char *lw_int_lit(lw_ctx *cx, rk_type t, int64_t v) {
    uint32_t bits = rk_scalar_bits(rk_type_scalar(t));
    if (bits == 1) return (v & 1) ? "true" : "false";
    if (bits && bits < 64) {
        /* wrap to the width, then print signed: i32 4294967295 reads as -1 */
        uint64_t m = (uint64_t)v & ((1ull << bits) - 1), sign = 1ull << (bits - 1);
        v = (m & sign) ? (int64_t)(m | ~((1ull << bits) - 1)) : (int64_t)m;
    }
    return lw_printf(cx, "%lld", (long long)v);
}

const char *lw_float_lit(lw_ctx *cx, rk_type t, double v) {
    switch (rk_type_scalar(t)) {
    case RK_S_F16: return lw_printf(cx, "0xH%04X", (unsigned)rk_f64_to_f16(v));
    case RK_S_BF16: return lw_printf(cx, "0xR%04X", (unsigned)rk_f64_to_bf16(v));
    case RK_S_F32: {
        /* LLVM writes float literals as the double holding the float's value */
        double w = (double)(float)v;
        return lw_printf(cx, "0x%016llX", (unsigned long long)rk_f64_bits(w));
    }
    default: return lw_printf(cx, "0x%016llX", (unsigned long long)rk_f64_bits(v));
    }
}

static const char *const_text(lw_ctx *cx, const rk_op *op) {
    rk_type t = rk_value_type(cx->k, op->out[0]);
    const rk_attr_val *v = rk_attrs_get(&op->attrs, "value");
    RK_ASSERT(v != NULL, "arith.constant without a value (verified)");
    double d = v->kind == RK_AK_INT ? (double)v->u.i : v->u.f;
    if (lw_is_float(cx, t)) return lw_float_lit(cx, t, d);
    return lw_int_lit(cx, t, v->kind == RK_AK_INT ? v->u.i : (int64_t)d);
}

static const char *const_vec_text(lw_ctx *cx, const rk_op *op) {
    rk_type t = rk_value_type(cx->k, op->out[0]), e = rk_type_elem(cx->k, t);
    const rk_attr_val *v = rk_attrs_get(&op->attrs, "fill");
    double d = !v ? 0.0 : v->kind == RK_AK_INT ? (double)v->u.i : v->u.f;
    bool is_f = lw_is_float(cx, e);
    if (d == 0.0 && !(is_f && signbit(d))) return "zeroinitializer";
    const char *lit = is_f ? lw_float_lit(cx, e, d) : lw_int_lit(cx, e, (int64_t)d);
    return lw_printf(cx, "splat (%s %s)", lw_ty(cx, e), lit);
}

bool lw_const_int(const lw_ctx *cx, rk_value v, int64_t *out) {
    const rk_op *d = rk_value_def(cx->k, v);
    if (!d || d->code != RK_OP_CONSTANT) return false;
    const rk_attr_val *a = rk_attrs_get(&d->attrs, "value");
    if (!a || a->kind != RK_AK_INT) return false;
    *out = a->u.i;
    return true;
}

/* ---- value names -------------------------------------------------------------------------- */
static bool all_digits(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

/* Would this IR name collide with a lowering temp (word.N), an unrolled
 * copy (name.uN) or the entry block? */
static bool looks_generated(const char *name) {
    if (strcmp(name, "entry") == 0) return true;
    const char *dot = strrchr(name, '.');
    if (!dot) return false;
    return all_digits(dot + 1) || (dot[1] == 'u' && all_digits(dot + 2));
}

static bool plain_ident(const char *s) {
    if (!*s || (*s >= '0' && *s <= '9')) return false;
    for (; *s; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return false;
    }
    return true;
}

/* "%" name ["$"] suffix, or %"name suffix" for names LLVM would misread. */
static const char *render_name(lw_ctx *cx, const char *hint, uint32_t num, const char *suffix) {
    char digits[12];
    int nd = 0;
    if (num != IR_NO_NUM) do { digits[nd++] = (char)('0' + num % 10); num /= 10; } while (num);
    size_t lh = strlen(hint), ls = strlen(suffix), n = lh + (size_t)nd;
    /* [%]["]name[$]suffix["]: the name is written at d + 2, then the prefix */
    char *d = rk_arena_alloc(&cx->arena, n + ls + 6);
    if (!d) { oom(cx); return "%oom"; }
    char *name = d + 2, *p = name + lh;
    memcpy(name, hint, lh);
    while (nd) *p++ = digits[--nd];
    *p = '\0';
    bool quote = !plain_ident(name);
    if (!quote && looks_generated(name)) *p++ = '$';
    memcpy(p, suffix, ls);
    p += ls;
    if (quote) *p++ = '"';
    *p = '\0';
    if (quote) { d[0] = '%'; d[1] = '"'; return d; }
    d[1] = '%';
    return d + 1;
}

static const char *make_val(lw_ctx *cx, rk_value v) {
    const ir_valinfo *vi = ir_val(cx->k, v);
    RK_ASSERT(vi != NULL, "lowering an undefined value (the verifier admits only defined values)");
    if (vi->kind == RK_VK_RESULT && vi->def) {
        if (vi->def->code == RK_OP_CONSTANT) return const_text(cx, vi->def);
        if (vi->def->code == RK_OP_CONSTANT_VEC) return const_vec_text(cx, vi->def);
        if (vi->def->code == RK_OP_SMEM_ALLOC) return lw_smem_base(cx, v);
    }
    /* parameters live outside every loop: never an unroll suffix */
    return render_name(cx, vi->hint, vi->num, vi->kind == RK_VK_PARAM ? "" : cx->suffix);
}

const char *lw_val(lw_ctx *cx, rk_value v) {
    if (v.id < cx->ntext && cx->vtext[v.id]) return cx->vtext[v.id];
    const char *s = make_val(cx, v);
    if (v.id < cx->ntext) cx->vtext[v.id] = s;
    return s;
}

void lw_set_val(lw_ctx *cx, rk_value v, const char *text) {
    if (v.id < cx->ntext) cx->vtext[v.id] = text;
}
void lw_forget_val(lw_ctx *cx, rk_value v) {
    if (v.id < cx->ntext) cx->vtext[v.id] = NULL;
}

/* ---- the formatter -------------------------------------------------------------------------- */
/* Appends without re-terminating after each piece (vfmt terminates once):
 * this is the innermost loop of the lowering. */
static inline void put(rk_buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap && !rk_buf_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
}
static inline void puts_(rk_buf *b, const char *s) { put(b, s, strlen(s)); }

static void put_i64(rk_buf *b, int64_t v) {
    char t[24];
    int i = 24;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { t[--i] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) t[--i] = '-';
    put(b, t + i, (size_t)(24 - i));
}

static void vfmt(lw_ctx *cx, rk_buf *b, const char *fmt, va_list ap) {
    const char *p = fmt;
    for (;;) {
        const char *q = p;
        while (*q && *q != '%') q++;
        put(b, p, (size_t)(q - p));
        if (!*q) break;
        switch (q[1]) {
        case 'v': puts_(b, lw_val(cx, va_arg(ap, rk_value))); break;
        case 'V': {
            rk_value v = va_arg(ap, rk_value);
            puts_(b, lw_vty(cx, v));
            put(b, " ", 1);
            puts_(b, lw_val(cx, v));
            break;
        }
        case 't': puts_(b, lw_vty(cx, va_arg(ap, rk_value))); break;
        case 'T': puts_(b, lw_ty(cx, va_arg(ap, rk_type))); break;
        case 's': puts_(b, va_arg(ap, const char *)); break;
        case 'd': put_i64(b, va_arg(ap, int)); break;
        case 'u': put_i64(b, va_arg(ap, unsigned)); break;
        case 'l':
            RK_ASSERT(q[2] != 'l' && q[2] != 'd' && q[2] != 'u', "lw_ins: %l takes an int64_t; write %l, not %ld/%lld");
            put_i64(b, va_arg(ap, int64_t));
            break;
        case '%': put(b, "%", 1); break;
        default: rk_bug("unknown lw_ins directive");
        }
        p = q + 2;
    }
    if (b->data) b->data[b->len] = '\0';
}

static void ensure_open(lw_ctx *cx) {
    /* code after a terminator (after cf.return) lands in a block nothing
     * branches to; LLVM accepts and deletes it */
    if (cx->terminated) lw_block(cx, lw_label(cx, "dead"));
}

void lw_ins(lw_ctx *cx, const char *fmt, ...) {
    ensure_open(cx);
    put(&cx->body, "  ", 2);
    va_list ap;
    va_start(ap, fmt);
    vfmt(cx, &cx->body, fmt, ap);
    va_end(ap);
    rk_buf_putc(&cx->body, '\n');
}

void lw_fmt(lw_ctx *cx, rk_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfmt(cx, b, fmt, ap);
    va_end(ap);
}

/* ---- blocks ------------------------------------------------------------------------------------ */
void lw_block(lw_ctx *cx, const char *label) {
    rk_buf_puts(&cx->body, label);
    rk_buf_putn(&cx->body, ":\n", 2);
    cx->block = label;
    cx->terminated = false;
}

void lw_br(lw_ctx *cx, const char *label) {
    lw_ins(cx, "br label %%%s", label);
    cx->terminated = true;
}

void lw_condbr(lw_ctx *cx, const char *cond, const char *if_true, const char *if_false) {
    lw_ins(cx, "br i1 %s, label %%%s, label %%%s", cond, if_true, if_false);
    cx->terminated = true;
}

const char *lw_cur_block(lw_ctx *cx) {
    ensure_open(cx);
    return cx->block;
}

/* ---- declarations and metadata ------------------------------------------------------------------ */
static bool rehash(lw_ctx *cx) {
    uint32_t ncap = cx->dhash_cap ? cx->dhash_cap * 2 : 64;
    uint32_t *n = rk_arena_zalloc(&cx->arena, ncap * sizeof *n);
    if (!n) return false;
    for (uint32_t i = 0; i < cx->ndecls; i++) {
        uint32_t j = (uint32_t)cx->decls[i].hash & (ncap - 1);
        while (n[j]) j = (j + 1) & (ncap - 1);
        n[j] = i + 1;
    }
    cx->dhash = n;
    cx->dhash_cap = ncap;
    return true;
}

void lw_declare(lw_ctx *cx, uint32_t order, const char *line) {
    if ((cx->ndecls + 1) * 2 > cx->dhash_cap && !rehash(cx)) { oom(cx); return; }
    uint64_t h = rk_hash_str(line);
    uint32_t mask = cx->dhash_cap - 1, j = (uint32_t)h & mask;
    for (; cx->dhash[j]; j = (j + 1) & mask) {
        const lw_decl *d = &cx->decls[cx->dhash[j] - 1];
        if (d->hash == h && strcmp(d->line, line) == 0) return;
    }
    lw_decl *ds = rk_arena_grow(&cx->arena, cx->decls, sizeof *ds, &cx->decls_cap, cx->ndecls + 1);
    if (!ds) { oom(cx); return; }
    cx->decls = ds;
    cx->decls[cx->ndecls++] = (lw_decl){order, line, h};
    cx->dhash[j] = cx->ndecls;
}

const char *lw_md(lw_ctx *cx, lw_md_node m) {
    static const char *const refs[LW_MD__COUNT] = {"!0", "!1"};
    cx->md_used[m] = true;
    return refs[m];
}

/* ---- attributes ------------------------------------------------------------------------------ */
int64_t lw_attr_int(const rk_op *op, const char *key, int64_t dflt) {
    int64_t v;
    return rk_attrs_int(&op->attrs, key, &v) ? v : dflt;
}
bool lw_attr_bool(const rk_op *op, const char *key, bool dflt) { return rk_attrs_bool(&op->attrs, key, dflt); }
const char *lw_attr_str(const rk_op *op, const char *key, const char *dflt) {
    const char *s = rk_attrs_str(&op->attrs, key);
    return s ? s : dflt;
}

const char *lw_syncscope(lw_ctx *cx, const char *scope, lw_scope dflt) {
    lw_scope s = dflt;
    if (scope && strcmp(scope, "block") == 0) s = LW_SCOPE_BLOCK;
    else if (scope && strcmp(scope, "device") == 0) s = LW_SCOPE_DEVICE;
    else if (scope && strcmp(scope, "system") == 0) s = LW_SCOPE_SYSTEM;
    const char *name = cx->vd->scope[s];
    return *name ? lw_printf(cx, " syncscope(\"%s\")", name) : "";
}
