/* rocke — kernel-argument packing. Each argument sits at the next offset
 * aligned to its own size (ptr 8, i64/f64 8, i32/f32 4, i16/f16/bf16 2,
 * i8/i1 1; a 128-byte tensor map at a multiple of 64), padding is zero, the
 * block ends at the last argument (no trailing round-up), little-endian.
 * params[i] points into the block: the kernelParams form. Layer: runtime. */
#include <stdio.h>

#include "runtime_int.h"
#include "../base/fp.h"

typedef struct sig_arg { const char *name; rk_arg_type type; uint32_t off; } sig_arg;
struct rk_argsig {
    uint32_t n, size;
    size_t bytes;              /* of this allocation */
    sig_arg a[];               /* then the names */
};

static const struct { const char *name; uint32_t size, align; } arg_types[RK_ARG__COUNT] = {
    [RK_ARG_PTR] = {"ptr", 8, 8}, [RK_ARG_I64] = {"i64", 8, 8}, [RK_ARG_I32] = {"i32", 4, 4},
    [RK_ARG_I16] = {"i16", 2, 2}, [RK_ARG_I8] = {"i8", 1, 1},   [RK_ARG_I1] = {"i1", 1, 1},
    [RK_ARG_F64] = {"f64", 8, 8}, [RK_ARG_F32] = {"f32", 4, 4}, [RK_ARG_F16] = {"f16", 2, 2},
    [RK_ARG_BF16] = {"bf16", 2, 2},
    /* CUtensorMap is declared 64-byte aligned; PTX: .param .align 64 .b8 [128] */
    [RK_ARG_TENSORMAP] = {"tensormap", RK_TENSORMAP_BYTES, RK_TENSORMAP_ALIGN},
};
#define LEGAL_TYPES "ptr<...>, i64, i32, i16, i8, i1, f64, f32, f16, bf16, tensormap"
enum { BLOCK_ALIGN = RK_TENSORMAP_ALIGN };

const char *rk_arg_type_name(rk_arg_type t) { return (unsigned)t < RK_ARG__COUNT ? arg_types[t].name : "?"; }
uint32_t rk_arg_type_size(rk_arg_type t) { return (unsigned)t < RK_ARG__COUNT ? arg_types[t].size : 0; }
uint32_t rk_arg_type_align(rk_arg_type t) { return (unsigned)t < RK_ARG__COUNT ? arg_types[t].align : 0; }

rk_status rk_arg_type_parse(const char *text, rk_arg_type *out) {
    if (!text || !out) return rk_fail(RK_ERR_INVALID, "rk_arg_type_parse: NULL text or out");
    size_t n = strlen(text);
    if (n > 5 && !strncmp(text, "ptr<", 4) && text[n - 1] == '>') {
        *out = RK_ARG_PTR;
        return RK_OK;
    }
    for (int t = 0; t < RK_ARG__COUNT; t++)
        if (t != RK_ARG_PTR && !strcmp(text, arg_types[t].name)) {
            *out = (rk_arg_type)t;
            return RK_OK;
        }
    return rk_fail(RK_ERR_INVALID, "type '%s' cannot be a kernel argument (legal: " LEGAL_TYPES ")", text);
}

/* ---- signatures ---------------------------------------------------------------- */
static rk_status sig_build(const char *const *names, const rk_arg_type *types, uint32_t n, rk_argsig **out) {
    size_t strings = 0;
    for (uint32_t i = 0; i < n; i++) strings += strlen(names[i]) + 1;
    size_t bytes = sizeof(rk_argsig) + (size_t)n * sizeof(sig_arg) + strings;
    rk_argsig *s = rk_calloc(1, bytes);
    if (!s) return rk_fail(RK_ERR_NOMEM, "out of memory building an argument signature");
    s->n = n;
    s->bytes = bytes;
    char *pool = (char *)&s->a[n];
    uint32_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t sz = arg_types[types[i]].size, al = arg_types[types[i]].align;
        off = (off + al - 1) / al * al;
        size_t len = strlen(names[i]) + 1;
        memcpy(pool, names[i], len);
        s->a[i] = (sig_arg){pool, types[i], off};
        pool += len;
        off += sz;
    }
    s->size = off;
    *out = s;
    return RK_OK;
}

static rk_status check_names(const char *const *names, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (!names[i] || !*names[i]) return rk_fail(RK_ERR_INVALID, "argument #%u has no name", i + 1);
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(names[i], names[j]))
                return rk_fail(RK_ERR_INVALID, "argument name '%s' appears twice (#%u and #%u)", names[i], j + 1, i + 1);
    }
    return RK_OK;
}

rk_status rk_argsig_new(const char *const *names, const char *const *types, uint32_t n, rk_argsig **out) {
    if (!out || (n && (!names || !types))) return rk_fail(RK_ERR_INVALID, "rk_argsig_new: NULL names, types or out");
    *out = NULL;
    rk_status s = check_names(names, n);
    if (s != RK_OK) return s;
    rk_arg_type stack[64], *ts = n <= 64 ? stack : rk_malloc(n * sizeof *ts);
    if (!ts) return rk_fail(RK_ERR_NOMEM, "out of memory building an argument signature");
    for (uint32_t i = 0; i < n && s == RK_OK; i++)
        if ((s = rk_arg_type_parse(types[i], &ts[i])) != RK_OK)
            rt_fail_prefix(s, "argument '%s' (#%u)", names[i], i + 1);
    if (s == RK_OK) s = sig_build(names, ts, n, out);
    if (ts != stack) rk_free(ts, n * sizeof *ts);
    return s;
}

rk_status rk_argsig_from_kernel(const rk_kernel *k, rk_argsig **out) {
    if (!k || !out) return rk_fail(RK_ERR_INVALID, "rk_argsig_from_kernel: NULL kernel or out");
    *out = NULL;
    uint32_t n = rk_kernel_nparams(k);
    const char **names = rk_malloc((n ? n : 1) * sizeof *names);
    rk_arg_type *ts = rk_malloc((n ? n : 1) * sizeof *ts);
    rk_status s = names && ts ? RK_OK : rk_fail(RK_ERR_NOMEM, "out of memory building an argument signature");
    for (uint32_t i = 0; i < n && s == RK_OK; i++) {
        const rk_param *p = rk_kernel_param(k, i);
        names[i] = p->name;
        rk_type t = p->type;
        /* NVIDIA: the parameter holds a CUtensorMap by value, not a pointer */
        if (rk_attrs_bool(&p->attrs, "tensormap", false)) ts[i] = RK_ARG_TENSORMAP;
        else if (rk_type_kind_of(k, t) == RK_TK_PTR) ts[i] = RK_ARG_PTR;
        else if ((s = rk_arg_type_parse(rk_type_name(k, t), &ts[i])) != RK_OK)
            rt_fail_prefix(s, "kernel '%s' parameter '%s' (#%u)", rk_kernel_name(k), p->name, i + 1);
    }
    if (s == RK_OK) s = sig_build(names, ts, n, out);
    rk_free(names, (n ? n : 1) * sizeof *names);
    rk_free(ts, (n ? n : 1) * sizeof *ts);
    return s;
}

void rk_argsig_free(rk_argsig *s) {
    if (s) rk_free(s, s->bytes);
}

rk_argsig *rt_argsig_copy(const rk_argsig *s) {
    if (!s) return NULL;
    rk_argsig *c = rk_malloc(s->bytes);
    if (!c) return NULL;
    memcpy(c, s, s->bytes);
    /* names point into the copied pool */
    const char *old_pool = (const char *)&s->a[s->n];
    char *new_pool = (char *)&c->a[c->n];
    for (uint32_t i = 0; i < c->n; i++) c->a[i].name = new_pool + (s->a[i].name - old_pool);
    return c;
}

uint32_t rk_argsig_count(const rk_argsig *s) { return s ? s->n : 0; }
const char *rk_argsig_name(const rk_argsig *s, uint32_t i) { return s && i < s->n ? s->a[i].name : NULL; }
rk_arg_type rk_argsig_type(const rk_argsig *s, uint32_t i) { return s && i < s->n ? s->a[i].type : RK_ARG__COUNT; }
uint32_t rk_argsig_offset(const rk_argsig *s, uint32_t i) { return s && i < s->n ? s->a[i].off : 0; }
uint32_t rk_argsig_size(const rk_argsig *s) { return s ? s->size : 0; }

int rk_argsig_find(const rk_argsig *s, const char *name) {
    for (uint32_t i = 0; s && name && i < s->n; i++)
        if (!strcmp(s->a[i].name, name)) return (int)i;
    return -1;
}

/* ---- packing -------------------------------------------------------------------- */
void rk_argpack_init(rk_argpack *p) { memset(p, 0, sizeof *p); }

void rk_argpack_free(rk_argpack *p) {
    if (!p) return;
    if (p->block) rk_free(p->block, (size_t)p->cap + BLOCK_ALIGN);
    rk_free(p->params, p->params_cap * sizeof *p->params);
    rk_argpack_init(p);
}

static rk_status reserve(rk_argpack *p, uint32_t size, uint32_t n) {
    if (size > p->cap || !p->block) {
        /* `bytes` starts at a 64-byte boundary inside the block (malloc
         * promises 16), so offsets aligned in the signature are aligned in
         * memory, a tensor map's 64 included; the old values are not kept */
        uint32_t cap = (size + 15u) & ~15u;
        void *b = rk_malloc((size_t)cap + BLOCK_ALIGN);
        if (!b) return rk_fail(RK_ERR_NOMEM, "out of memory packing kernel arguments");
        if (p->block) rk_free(p->block, (size_t)p->cap + BLOCK_ALIGN);
        p->block = b;
        p->bytes = (uint8_t *)b + (BLOCK_ALIGN - (uintptr_t)b % BLOCK_ALIGN) % BLOCK_ALIGN;
        p->cap = cap;
    }
    if (n > p->params_cap) {
        void **q = rk_realloc(p->params, p->params_cap * sizeof *q, n * sizeof *q);
        if (!q) return rk_fail(RK_ERR_NOMEM, "out of memory packing kernel arguments");
        p->params = q;
        p->params_cap = n;
    }
    return RK_OK;
}

static void put_le(uint8_t *dst, uint64_t v, uint32_t size) {
    for (uint32_t i = 0; i < size; i++) dst[i] = (uint8_t)(v >> (8 * i));
}

static const char *names_of(const rk_argsig *s, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < s->n && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s %s", i ? ", " : "", rk_arg_type_name(s->a[i].type),
                                s->a[i].name);
    return s->n ? buf : "no arguments";
}

/* The integer range a type accepts: signed or unsigned reading of its bits. */
static bool int_fits(rk_arg_type t, int64_t v) {
    switch (t) {
    case RK_ARG_I32: return v >= INT32_MIN && v <= (int64_t)UINT32_MAX;
    case RK_ARG_I16: return v >= INT16_MIN && v <= (int64_t)UINT16_MAX;
    case RK_ARG_I8: return v >= INT8_MIN && v <= (int64_t)UINT8_MAX;
    case RK_ARG_I1: return v == 0 || v == 1;
    case RK_ARG_I64:
    case RK_ARG_PTR:
    case RK_ARG_F64:
    case RK_ARG_F32:
    case RK_ARG_F16:
    case RK_ARG_BF16:
    case RK_ARG_TENSORMAP:
    case RK_ARG__COUNT: return true;
    }
    return true;
}

static void write_value(uint8_t *dst, const rk_arg *a) {
    uint32_t size = arg_types[a->type].size;
    switch (a->type) {
    case RK_ARG_PTR: put_le(dst, a->v.p, size); break;
    case RK_ARG_I64:
    case RK_ARG_I32:
    case RK_ARG_I16:
    case RK_ARG_I8:
    case RK_ARG_I1: put_le(dst, (uint64_t)a->v.i, size); break;
    case RK_ARG_F64: put_le(dst, rk_f64_bits(a->v.f), size); break;
    case RK_ARG_F32: put_le(dst, rk_f32_bits((float)a->v.f), size); break;
    case RK_ARG_F16: put_le(dst, rk_f64_to_f16(a->v.f), size); break;
    case RK_ARG_BF16: put_le(dst, rk_f64_to_bf16(a->v.f), size); break;
    case RK_ARG_TENSORMAP: memcpy(dst, a->v.tmap, size); break;
    case RK_ARG__COUNT: break;
    }
}

/* Tensor maps and device pointers are easy to confuse: say which is which. */
static const char *mismatch_hint(rk_arg_type want, rk_arg_type got) {
    if (want == RK_ARG_TENSORMAP)
        return " (a tensormap parameter takes the 128-byte CUtensorMap by value: rk_arg_tensormap(desc), the "
               "descriptor from rk_tensormap_encode_2d)";
    if (got == RK_ARG_TENSORMAP) return " (a tensor map goes only to a parameter marked tensormap)";
    return "";
}

rk_status rk_args_pack(const rk_argsig *s, const rk_arg *args, uint32_t n, rk_argpack *p) {
    if (!s || !p || (n && !args)) return rk_fail(RK_ERR_INVALID, "rk_args_pack: NULL signature, args or pack");
    char legal[1024];
    rk_status st = reserve(p, s->size ? s->size : 1, s->n ? s->n : 1);
    if (st != RK_OK) return st;
    memset(p->bytes, 0, p->cap);
    uint8_t stack[64] = {0}, *given = s->n <= 64 ? stack : rk_calloc(s->n, 1);
    if (!given) return rk_fail(RK_ERR_NOMEM, "out of memory packing kernel arguments");
    uint32_t pos = 0;
    for (uint32_t i = 0; i < n && st == RK_OK; i++) {
        const rk_arg *a = &args[i];
        int idx;
        if (a->name) {
            idx = rk_argsig_find(s, a->name);
            if (idx < 0) {
                st = rk_fail(RK_ERR_INVALID, "no kernel argument named '%s'; the kernel takes: %s", a->name,
                             names_of(s, legal, sizeof legal));
                break;
            }
        } else if (pos >= s->n) {
            st = rk_fail(RK_ERR_INVALID, "too many arguments: value #%u has no parameter; the kernel takes %u (%s)",
                         i + 1, s->n, names_of(s, legal, sizeof legal));
            break;
        } else {
            idx = (int)pos++;
        }
        const sig_arg *sa = &s->a[idx];
        if (given[idx]) {
            st = rk_fail(RK_ERR_INVALID, "argument '%s' (#%d) is given twice", sa->name, idx + 1);
        } else if ((unsigned)a->type >= RK_ARG__COUNT || a->type != sa->type) {
            st = rk_fail(RK_ERR_INVALID, "argument '%s' (#%d of %u) is %s in the kernel signature, but the value "
                         "given is %s%s", sa->name, idx + 1, s->n, rk_arg_type_name(sa->type), rk_arg_type_name(a->type),
                         mismatch_hint(sa->type, a->type));
        } else if (a->type == RK_ARG_TENSORMAP && !a->v.tmap) {
            st = rk_fail(RK_ERR_INVALID, "argument '%s' (#%d): the tensor map is NULL (pass the 128-byte descriptor "
                         "from rk_tensormap_encode_2d)", sa->name, idx + 1);
        } else if (!int_fits(a->type, a->v.i)) {
            st = rk_fail(RK_ERR_INVALID, "argument '%s' (#%d): %lld does not fit %s", sa->name, idx + 1,
                         (long long)a->v.i, rk_arg_type_name(a->type));
        } else {
            given[idx] = 1;
            write_value(p->bytes + sa->off, a);
        }
    }
    for (uint32_t i = 0; i < s->n && st == RK_OK; i++)
        if (!given[i])
            st = rk_fail(RK_ERR_INVALID, "missing kernel argument '%s' (#%u of %u, %s); the kernel takes: %s",
                         s->a[i].name, i + 1, s->n, rk_arg_type_name(s->a[i].type), names_of(s, legal, sizeof legal));
    if (given != stack) rk_free(given, s->n);
    if (st != RK_OK) return st;
    p->size = s->size;
    p->n = s->n;
    for (uint32_t i = 0; i < s->n; i++) p->params[i] = p->bytes + s->a[i].off;
    return RK_OK;
}
