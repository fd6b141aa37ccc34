/* rocke — the type system: fixed scalar ids, per-kernel interning of vector,
 * pointer and LDS-allocation types by canonical name, parsing of type names
 * and matching against the op table's type classes. Layer: ir. */
#include <stdio.h>
#include <stdlib.h>

#include "ir_int.h"

const ir_scalar_info ir_scalars[RK_S__COUNT] = {
    [RK_S_NONE] = {"<none>", 0},
    [RK_S_I1] = {"i1", 1},     [RK_S_I4] = {"i4", 4},       [RK_S_I8] = {"i8", 8},
    [RK_S_I16] = {"i16", 16},  [RK_S_I32] = {"i32", 32},    [RK_S_I64] = {"i64", 64},
    [RK_S_F16] = {"f16", 16},  [RK_S_BF16] = {"bf16", 16},  [RK_S_F32] = {"f32", 32},
    [RK_S_F64] = {"f64", 64},
    [RK_S_FP8E4M3] = {"fp8e4m3", 8},         [RK_S_BF8E5M2] = {"bf8e5m2", 8},
    [RK_S_FP8E4M3FNUZ] = {"fp8e4m3fnuz", 8}, [RK_S_BF8E5M2FNUZ] = {"bf8e5m2fnuz", 8},
};

static const char *const space_names[RK_AS__COUNT] = {
    [RK_AS_GLOBAL] = "global", [RK_AS_CONSTANT] = "constant", [RK_AS_LDS] = "lds",
    [RK_AS_PRIVATE] = "private", [RK_AS_FLAT] = "flat",
};

const char *rk_scalar_name(rk_scalar s) {
    return (unsigned)s < RK_S__COUNT ? ir_scalars[s].name : "<none>";
}
uint32_t rk_scalar_bits(rk_scalar s) { return (unsigned)s < RK_S__COUNT ? ir_scalars[s].bits : 0; }
bool rk_scalar_is_int(rk_scalar s) { return s >= RK_S_I1 && s <= RK_S_I64; }
bool rk_scalar_is_float(rk_scalar s) { return s >= RK_S_F16 && s <= RK_S_F64; }
bool rk_scalar_is_f8(rk_scalar s) { return s >= RK_S_FP8E4M3 && s <= RK_S_BF8E5M2FNUZ; }
const char *rk_addrspace_name(rk_addrspace as) {
    return (unsigned)as < RK_AS__COUNT ? space_names[as] : "<none>";
}

rk_type rk_scalar_from_name(const char *name) {
    for (int s = 1; s < RK_S__COUNT; s++)
        if (strcmp(ir_scalars[s].name, name) == 0) return (rk_type){(uint32_t)s};
    return RK_T_NONE;
}

static rk_type scalar_from_span(const char *s, size_t n) {
    for (int i = 1; i < RK_S__COUNT; i++)
        if (strlen(ir_scalars[i].name) == n && memcmp(ir_scalars[i].name, s, n) == 0)
            return (rk_type){(uint32_t)i};
    return RK_T_NONE;
}

/* ---- interning --------------------------------------------------------------- */
static bool rehash(rk_kernel *k, uint32_t cap) {
    uint32_t *h = rk_calloc(cap, sizeof *h);
    if (!h) return false;
    for (uint32_t i = 0; i < k->ntypes; i++) {
        uint32_t j = (uint32_t)k->types[i].hash & (cap - 1);
        while (h[j]) j = (j + 1) & (cap - 1);
        h[j] = i + RK_TYPE_FIRST_COMPOSITE;
    }
    rk_free(k->type_hash, k->type_hash_cap * sizeof *h);
    k->type_hash = h;
    k->type_hash_cap = cap;
    return true;
}

/* Find or add the composite type described by `proto` (name set, not yet owned). */
static rk_type intern(rk_kernel *k, ir_typeinfo *proto) {
    proto->hash = rk_hash_str(proto->name);
    if (k->type_hash_cap) {
        uint32_t j = (uint32_t)proto->hash & (k->type_hash_cap - 1);
        while (k->type_hash[j]) {
            const ir_typeinfo *t = &k->types[k->type_hash[j] - RK_TYPE_FIRST_COMPOSITE];
            if (t->hash == proto->hash && strcmp(t->name, proto->name) == 0)
                return (rk_type){k->type_hash[j]};
            j = (j + 1) & (k->type_hash_cap - 1);
        }
    }
    if ((k->ntypes + 1) * 2 > k->type_hash_cap && !rehash(k, k->type_hash_cap ? k->type_hash_cap * 2 : 64))
        goto oom;
    if (k->ntypes == k->types_cap) {
        uint32_t ncap = k->types_cap ? k->types_cap * 2 : 16;
        ir_typeinfo *n = rk_realloc(k->types, k->types_cap * sizeof *n, ncap * sizeof *n);
        if (!n) goto oom;
        k->types = n;
        k->types_cap = ncap;
    }
    proto->name = rk_arena_strdup(&k->arena, proto->name);
    if (!proto->name) goto oom;
    if (proto->rank) {
        uint32_t *d = rk_arena_alloc(&k->arena, proto->rank * sizeof *d);
        if (!d) goto oom;
        memcpy(d, proto->dims, proto->rank * sizeof *d);
        proto->dims = d;
    }
    k->types[k->ntypes] = *proto;
    uint32_t id = k->ntypes++ + RK_TYPE_FIRST_COMPOSITE;
    uint32_t j = (uint32_t)proto->hash & (k->type_hash_cap - 1);
    while (k->type_hash[j]) j = (j + 1) & (k->type_hash_cap - 1);
    k->type_hash[j] = id;
    return (rk_type){id};
oom:
    rk_fail(RK_ERR_NOMEM, "out of memory interning type %s", proto->name);
    if (k->err == RK_OK) ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory interning a type");
    return RK_T_NONE;
}

/* The structural memo (rk_kernel.type_memo_*): vec and ptr types keyed by
 * kind, element and lanes or space, so asking again for a type the kernel
 * has costs no formatting and no hashing of its name. Keys are never 0. */
static uint32_t memo_slot(uint64_t key) { return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 58); }
static rk_type memo_get(const rk_kernel *k, uint64_t key) {
    uint32_t i = memo_slot(key);
    return k->type_memo_key[i] == key ? (rk_type){k->type_memo_id[i]} : RK_T_NONE;
}
static rk_type memo_put(rk_kernel *k, uint64_t key, rk_type t) {
    if (rk_type_ok(t)) {
        uint32_t i = memo_slot(key);
        k->type_memo_key[i] = key;
        k->type_memo_id[i] = t.id;
    }
    return t;
}

rk_type rk_type_vec(rk_kernel *k, rk_type elem, uint32_t n) {
    rk_scalar s = rk_type_scalar(elem);
    if (s == RK_S_NONE || n == 0 || n > 4096) {
        rk_fail(RK_ERR_INVALID, "vector type needs a scalar element and 1..4096 lanes (got %s x %u)",
                rk_type_name(k, elem), n);
        return RK_T_NONE;
    }
    uint64_t key = (1ull << 62) | (uint64_t)s << 16 | n;
    rk_type hit = memo_get(k, key);
    if (rk_type_ok(hit)) return hit;
    char name[48];
    snprintf(name, sizeof name, "vec<%sx%u>", ir_scalars[s].name, n);
    ir_typeinfo t = {.kind = RK_TK_VEC, .elem = elem, .count = n, .bits = n * ir_scalars[s].bits, .name = name};
    return memo_put(k, key, intern(k, &t));
}

rk_type rk_type_ptr(rk_kernel *k, rk_type pointee, rk_addrspace as) {
    rk_type_kind pk = rk_type_kind_of(k, pointee);
    if ((pk != RK_TK_SCALAR && pk != RK_TK_VEC) || (unsigned)as >= RK_AS__COUNT) {
        rk_fail(RK_ERR_INVALID, "pointer type needs a scalar or vector pointee and an address space");
        return RK_T_NONE;
    }
    uint64_t key = (2ull << 62) | (uint64_t)pointee.id << 8 | (uint64_t)as;
    rk_type hit = memo_get(k, key);
    if (rk_type_ok(hit)) return hit;
    char name[96];
    snprintf(name, sizeof name, "ptr<%s,%s>", rk_type_name(k, pointee), space_names[as]);
    ir_typeinfo t = {.kind = RK_TK_PTR, .elem = pointee, .space = as, .bits = 64, .name = name};
    return memo_put(k, key, intern(k, &t));
}

rk_type rk_type_smem(rk_kernel *k, rk_type elem, const uint32_t *dims, uint32_t rank) {
    rk_scalar s = rk_type_scalar(elem);
    if (s == RK_S_NONE || rank == 0 || rank > 8) {
        rk_fail(RK_ERR_INVALID, "LDS allocation needs a scalar element and 1..8 dimensions");
        return RK_T_NONE;
    }
    char name[256];
    int off = snprintf(name, sizeof name, "smem<%s, [", ir_scalars[s].name);
    uint64_t elems = 1;
    for (uint32_t i = 0; i < rank; i++) {
        if (dims[i] == 0) {
            rk_fail(RK_ERR_INVALID, "LDS allocation dimension %u is 0", i);
            return RK_T_NONE;
        }
        elems *= dims[i];
        off += snprintf(name + off, sizeof name - (size_t)off, "%s%u", i ? "x" : "", dims[i]);
    }
    snprintf(name + off, sizeof name - (size_t)off, "]>");
    if (elems * ir_scalars[s].bits > (uint64_t)UINT32_MAX) {
        rk_fail(RK_ERR_INVALID, "LDS allocation %s is too large", name);
        return RK_T_NONE;
    }
    ir_typeinfo t = {.kind = RK_TK_SMEM, .elem = elem, .rank = rank, .dims = (uint32_t *)dims,
                     .space = RK_AS_LDS, .bits = (uint32_t)(elems * ir_scalars[s].bits), .name = name};
    return intern(k, &t);
}

/* ---- queries --------------------------------------------------------------------- */
const char *rk_type_name(const rk_kernel *k, rk_type t) {
    if (t.id > 0 && t.id < RK_S__COUNT) return ir_scalars[t.id].name;
    if (t.id == RK_TYPE_RSRC_ID) return "rsrc";
    const ir_typeinfo *ti = k ? ir_type(k, t) : NULL;
    return ti ? ti->name : "<none>";
}

rk_type_kind rk_type_kind_of(const rk_kernel *k, rk_type t) {
    if (t.id > 0 && t.id < RK_S__COUNT) return RK_TK_SCALAR;
    if (t.id == RK_TYPE_RSRC_ID) return RK_TK_RSRC;
    const ir_typeinfo *ti = ir_type(k, t);
    return ti ? ti->kind : RK_TK_NONE;
}

rk_type rk_type_elem(const rk_kernel *k, rk_type t) {
    const ir_typeinfo *ti = ir_type(k, t);
    return ti ? ti->elem : RK_T_NONE;
}
uint32_t rk_type_count(const rk_kernel *k, rk_type t) {
    const ir_typeinfo *ti = ir_type(k, t);
    return ti && ti->kind == RK_TK_VEC ? ti->count : 1;
}
rk_addrspace rk_type_space(const rk_kernel *k, rk_type t) {
    const ir_typeinfo *ti = ir_type(k, t);
    return ti ? ti->space : RK_AS_GLOBAL;
}
uint32_t rk_type_rank(const rk_kernel *k, rk_type t) {
    const ir_typeinfo *ti = ir_type(k, t);
    return ti ? ti->rank : 0;
}
const uint32_t *rk_type_dims(const rk_kernel *k, rk_type t) {
    const ir_typeinfo *ti = ir_type(k, t);
    return ti ? ti->dims : NULL;
}
uint32_t rk_type_bits(const rk_kernel *k, rk_type t) {
    if (t.id > 0 && t.id < RK_S__COUNT) return ir_scalars[t.id].bits;
    if (t.id == RK_TYPE_RSRC_ID) return 128;
    const ir_typeinfo *ti = ir_type(k, t);
    return ti ? ti->bits : 0;
}

bool ir_type_is_int(const rk_kernel *k, rk_type t) {
    (void)k;
    return rk_scalar_is_int(rk_type_scalar(t));
}
bool ir_type_is_float(const rk_kernel *k, rk_type t) {
    (void)k;
    return rk_scalar_is_float(rk_type_scalar(t));
}

/* ---- parsing -------------------------------------------------------------------- */
static const char *skip_ws(const char *s, const char *e) {
    while (s < e && *s == ' ') s++;
    return s;
}

static bool parse_u32(const char **s, const char *e, uint32_t *out) {
    uint64_t v = 0;
    const char *p = *s;
    if (p >= e || *p < '0' || *p > '9') return false;
    while (p < e && *p >= '0' && *p <= '9') {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX) return false;
        p++;
    }
    *s = p;
    *out = (uint32_t)v;
    return true;
}

rk_type ir_type_parse_n(rk_kernel *k, const char *text, size_t n, size_t *used) {
    const char *s = text, *e = text + n;
    if (used) *used = 0;
    /* a scalar or rsrc: the longest identifier */
    const char *p = s;
    while (p < e && ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))) p++;
    size_t idn = (size_t)(p - s);
    if (p < e && *p == '<') {
        if (idn == 3 && memcmp(s, "vec", 3) == 0) {
            const char *q = skip_ws(p + 1, e), *q0 = q;
            while (q < e && *q != '>') q++;
            if (q >= e) goto bad;
            /* elem and count split at the last 'x' */
            const char *x = q;
            while (x > q0 && x[-1] != 'x') x--;
            if (x <= q0 + 1) goto bad;
            const char *ee = x - 1;
            while (ee > q0 && ee[-1] == ' ') ee--;
            rk_type el = scalar_from_span(q0, (size_t)(ee - q0));
            const char *c = skip_ws(x, q);
            uint32_t cnt;
            if (rk_type_scalar(el) == RK_S_NONE || !parse_u32(&c, q, &cnt) || skip_ws(c, q) != q) goto bad;
            rk_type t = rk_type_vec(k, el, cnt);
            if (used) *used = (size_t)(q + 1 - text);
            return t;
        }
        if (idn == 3 && memcmp(s, "ptr", 3) == 0) {
            size_t u;
            const char *q = skip_ws(p + 1, e);
            rk_type pt = ir_type_parse_n(k, q, (size_t)(e - q), &u);
            if (!rk_type_ok(pt)) goto bad;
            q = skip_ws(q + u, e);
            if (q >= e || *q != ',') goto bad;
            q = skip_ws(q + 1, e);
            const char *sp = q;
            while (q < e && *q >= 'a' && *q <= 'z') q++;
            size_t sl = (size_t)(q - sp);
            int as = -1;
            for (int i = 0; i < RK_AS__COUNT; i++)
                if (strlen(space_names[i]) == sl && memcmp(space_names[i], sp, sl) == 0) as = i;
            if (sl == 6 && memcmp(sp, "shared", 6) == 0) as = RK_AS_LDS;
            q = skip_ws(q, e);
            if (as < 0 || q >= e || *q != '>') goto bad;
            rk_type t = rk_type_ptr(k, pt, (rk_addrspace)as);
            if (used) *used = (size_t)(q + 1 - text);
            return t;
        }
        if (idn == 4 && memcmp(s, "smem", 4) == 0) {
            const char *q = skip_ws(p + 1, e), *q0 = q;
            while (q < e && ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9'))) q++;
            rk_type el = scalar_from_span(q0, (size_t)(q - q0));
            q = skip_ws(q, e);
            if (rk_type_scalar(el) == RK_S_NONE || q >= e || *q != ',') goto bad;
            q = skip_ws(q + 1, e);
            if (q >= e || *q != '[') goto bad;
            q++;
            uint32_t dims[8], rank = 0;
            for (;;) {
                q = skip_ws(q, e);
                if (rank == 8 || !parse_u32(&q, e, &dims[rank])) goto bad;
                rank++;
                q = skip_ws(q, e);
                if (q < e && *q == 'x') { q++; continue; }
                break;
            }
            if (q >= e || *q != ']') goto bad;
            q = skip_ws(q + 1, e);
            if (q >= e || *q != '>') goto bad;
            rk_type t = rk_type_smem(k, el, dims, rank);
            if (used) *used = (size_t)(q + 1 - text);
            return t;
        }
        goto bad;
    }
    if (idn == 4 && memcmp(s, "rsrc", 4) == 0) {
        if (used) *used = 4;
        return RK_T_RSRC;
    }
    rk_type t = scalar_from_span(s, idn);
    if (rk_type_ok(t)) {
        if (used) *used = idn;
        return t;
    }
bad:
    rk_fail(RK_ERR_PARSE, "malformed type '%.*s' (expected a scalar such as i32 or f16, "
            "vec<ELEMxN>, ptr<TYPE,SPACE>, smem<ELEM, [D0xD1]> or rsrc)", (int)(n > 60 ? 60 : n), text);
    return RK_T_NONE;
}

rk_type rk_type_parse(rk_kernel *k, const char *text) {
    size_t n = strlen(text), used;
    rk_type t = ir_type_parse_n(k, text, n, &used);
    if (rk_type_ok(t) && used != n) {
        rk_fail(RK_ERR_PARSE, "trailing text after type in '%s'", text);
        return RK_T_NONE;
    }
    return t;
}

/* ---- class matching (the op table's sig column) ---------------------------------- */
static bool span_is(const char *s, size_t n, const char *lit) {
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static bool match_one(const rk_kernel *k, rk_type t, const char *p, size_t n) {
    while (n && *p == ' ') { p++; n--; }
    while (n && p[n - 1] == ' ') n--;
    rk_scalar s = rk_type_scalar(t);
    rk_type_kind kind = rk_type_kind_of(k, t);
    if (n >= 5 && memcmp(p, "vec<", 4) == 0 && p[n - 1] == '>') {
        if (kind != RK_TK_VEC) return false;
        const char *in = p + 4, *ie = p + n - 1;
        const char *x = ie;                  /* split at the last 'x' */
        while (x > in && x[-1] != 'x') x--;
        if (x <= in) return false;
        const char *cnt = x;
        while (cnt < ie && *cnt == ' ') cnt++;
        if (!(cnt < ie && *cnt == '*')) {
            uint32_t c = 0;
            for (; cnt < ie && *cnt >= '0' && *cnt <= '9'; cnt++) c = c * 10 + (uint32_t)(*cnt - '0');
            if (c != rk_type_count(k, t)) return false;
        }
        return ir_type_matches(k, rk_type_elem(k, t), in, (size_t)(x - 1 - in));
    }
    if (span_is(p, n, "any")) return kind != RK_TK_NONE;
    if (span_is(p, n, "int")) return rk_scalar_is_int(s) && s != RK_S_I4;
    if (span_is(p, n, "sint")) return rk_scalar_is_int(s) && s != RK_S_I1 && s != RK_S_I4;
    if (span_is(p, n, "float")) return rk_scalar_is_float(s);
    if (span_is(p, n, "num")) return (rk_scalar_is_int(s) && s != RK_S_I4) || rk_scalar_is_float(s);
    if (span_is(p, n, "fp8")) return s == RK_S_FP8E4M3 || s == RK_S_FP8E4M3FNUZ;
    if (span_is(p, n, "bf8")) return s == RK_S_BF8E5M2 || s == RK_S_BF8E5M2FNUZ;
    if (span_is(p, n, "f8")) return rk_scalar_is_f8(s);
    if (span_is(p, n, "vec")) return kind == RK_TK_VEC;
    if (span_is(p, n, "ptr")) return kind == RK_TK_PTR;
    if (span_is(p, n, "gptr"))
        return kind == RK_TK_PTR && (rk_type_space(k, t) == RK_AS_GLOBAL || rk_type_space(k, t) == RK_AS_CONSTANT);
    if (span_is(p, n, "smem")) return kind == RK_TK_SMEM;
    if (span_is(p, n, "rsrc")) return kind == RK_TK_RSRC;
    return span_is(p, n, rk_type_name(k, t));
}

bool ir_type_matches(const rk_kernel *k, rk_type t, const char *pat, size_t n) {
    const char *alt = pat, *e = pat + n;
    int depth = 0;
    for (const char *p = pat; p <= e; p++) {
        if (p < e && *p == '<') depth++;
        else if (p < e && *p == '>') depth--;
        else if (p == e || (*p == '|' && depth == 0)) {
            if (match_one(k, t, alt, (size_t)(p - alt))) return true;
            alt = p + 1;
        }
    }
    return false;
}
