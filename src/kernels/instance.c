/* rocke — the generic instance API: the family registry, knob tables (set,
 * get, legal values), validation, deterministic names, tuning, grids and
 * costs for N-dimensional shapes, and building with the ABI. Layer: kernels. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "kern_int.h"

/* Built-in families first; kn_family_register appends. A slot is written
 * before the count that publishes it (release/acquire). */
static const kn_family *families[RK_FAMILY_MAX] = {
    [RK_FAMILY_ELEMENTWISE] = &kn_elementwise, [RK_FAMILY_REDUCE] = &kn_reduce,
    [RK_FAMILY_SOFTMAX] = &kn_softmax,         [RK_FAMILY_LAYERNORM] = &kn_layernorm,
    [RK_FAMILY_RMSNORM] = &kn_rmsnorm,         [RK_FAMILY_TRANSPOSE] = &kn_transpose,
    [RK_FAMILY_GEMM] = &kn_gemm,               [RK_FAMILY_BATCHED_GEMM] = &kn_batched_gemm,
    [RK_FAMILY_ADD_RMSNORM_QUANT] = &kn_add_rmsnorm_quant, [RK_FAMILY_ROPE] = &kn_rope,
    [RK_FAMILY_TOPK_SOFTMAX] = &kn_topk_softmax, [RK_FAMILY_PERMUTE] = &kn_permute,
    [RK_FAMILY_GROUPED_GEMM] = &kn_grouped_gemm, [RK_FAMILY_CONV] = &kn_conv, [RK_FAMILY_CONV3D] = &kn_conv3d, [RK_FAMILY_ATTENTION] = &kn_attention,
    [RK_FAMILY_KV_APPEND] = &kn_kv_append,
};
static _Atomic uint32_t nfamilies = RK_FAMILY__COUNT;
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t rk_family_count(void) { return atomic_load_explicit(&nfamilies, memory_order_acquire); }

const kn_family *kn_family_find(rk_family_id f) {
    return (unsigned)f < rk_family_count() ? families[f] : NULL;
}

const kn_family *kn_family_of(rk_family_id f) {
    const kn_family *fam = kn_family_find(f);
    RK_ASSERT(fam, "kn_family_of: family out of range");
    return fam;
}

const char *rk_family_name(rk_family_id f) {
    const kn_family *fam = kn_family_find(f);
    return fam ? fam->name : "?";
}

static void family_list(char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    for (uint32_t f = 0; f < rk_family_count() && off < n; f++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s", f ? ", " : "", families[f]->name);
}

static bool dim_known(const kn_family *f, const char *name) {
    for (uint32_t i = 0; i < f->ndims; i++)
        if (!strcmp(f->dims[i].name, name)) return true;
    return false;
}

/* The table's own consistency: what every generic path relies on. */
static rk_status check_table(const kn_family *f) {
    if (!f->name || !*f->name) return rk_fail(RK_ERR_INVALID, "kn_family_register: a family needs a name");
    if (!f->defaults || !f->validate || !f->signature || !f->geometry || !f->build || !f->cost || !f->reference)
        return rk_fail(RK_ERR_INVALID, "family %s: defaults, validate, signature, geometry, build, cost and reference "
                       "are required", f->name);
    if (!f->group_shape != !f->group_fill)
        return rk_fail(RK_ERR_INVALID, "family %s: group_shape and group_fill come together", f->name);
    if (f->nknobs > 64) return rk_fail(RK_ERR_INVALID, "family %s: at most 64 knobs, got %u", f->name, f->nknobs);
    if (!f->dims || f->ndims == 0 || f->ndims > RK_SHAPE_MAX_DIMS)
        return rk_fail(RK_ERR_INVALID, "family %s: 1 to %u dimensions, got %u", f->name, RK_SHAPE_MAX_DIMS, f->ndims);
    for (uint32_t i = 0; i < f->ndims; i++) {
        if (!f->dims[i].name || !*f->dims[i].name || f->dims[i].def == 0)
            return rk_fail(RK_ERR_INVALID, "family %s: dimension %u needs a name and a default >= 1", f->name, i);
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(f->dims[i].name, f->dims[j].name))
                return rk_fail(RK_ERR_INVALID, "family %s: dimension %s declared twice", f->name, f->dims[i].name);
    }
    for (uint32_t i = 0; i < f->nscalars; i++) {
        const rk_scalar_decl *d = &f->scalars[i];
        bool typed = d->type == RK_S_I32 || d->type == RK_S_I64 || d->type == RK_S_F32;
        bool sourced = d->src == RK_SC_GIVEN || (d->src == RK_SC_DERIVED && d->derive) ||
                       (d->src == RK_SC_DIM && d->dim && dim_known(f, d->dim));
        if (!d->name || !typed || !sourced)
            return rk_fail(RK_ERR_INVALID, "family %s: scalar %s needs a type (i32, i64, f32) and a source (a "
                           "dimension of the family, a derive function or a given default)", f->name,
                           d->name ? d->name : "(unnamed)");
    }
    return RK_OK;
}

rk_status kn_family_register(const kn_family *f, rk_family_id *out) {
    if (!f || !out) return rk_fail(RK_ERR_INVALID, "kn_family_register: no family or id");
    rk_status st = check_table(f);
    if (st) return st;
    pthread_mutex_lock(&register_lock);
    uint32_t n = rk_family_count();
    for (uint32_t i = 0; i < n && !st; i++)
        if (!strcmp(families[i]->name, f->name))
            st = rk_fail(RK_ERR_INVALID, "kn_family_register: family %s exists", f->name);
    if (!st && n >= RK_FAMILY_MAX)
        st = rk_fail(RK_ERR_INVALID, "kn_family_register: at most %d families", RK_FAMILY_MAX);
    if (!st) {
        families[n] = f;
        atomic_store_explicit(&nfamilies, n + 1, memory_order_release);
        *out = (rk_family_id)n;
    }
    pthread_mutex_unlock(&register_lock);
    return st;
}

rk_status rk_family_parse(const char *name, rk_family_id *out) {
    for (uint32_t f = 0; f < rk_family_count(); f++)
        if (name && strcmp(name, families[f]->name) == 0) { *out = (rk_family_id)f; return RK_OK; }
    char list[512];
    family_list(list, sizeof list);
    return rk_fail(RK_ERR_INVALID, "unknown kernel family '%s' (legal: %s)", name ? name : "(null)", list);
}

const rk_knob *rk_family_knobs(rk_family_id f, uint32_t *n) {
    const kn_family *fam = kn_family_of(f);
    if (n) *n = fam->nknobs;
    return fam->knobs;
}

/* ---- knob values ---------------------------------------------------------------- */
/* Every element type a dtype knob can name: the spelling the knob prints first, then the other
 * spellings it reads. The one table behind parsing, printing and every legal list. */
typedef struct dtype_spelling { rk_scalar s; const char *name, *alias[2]; } dtype_spelling;
static const dtype_spelling dtype_spellings[] = {
    {RK_S_F16, "f16", {"fp16", "half"}},       {RK_S_BF16, "bf16", {NULL, NULL}},
    {RK_S_F32, "f32", {"fp32", "float"}},      {RK_S_FP8E4M3, "e4m3", {"fp8e4m3", NULL}},
    {RK_S_BF8E5M2, "e5m2", {"bf8e5m2", NULL}}, {RK_S_FP8E4M3FNUZ, "e4m3fnuz", {"fp8e4m3fnuz", NULL}},
    {RK_S_BF8E5M2FNUZ, "e5m2fnuz", {"bf8e5m2fnuz", NULL}},
};
enum { NDTYPES = sizeof dtype_spellings / sizeof dtype_spellings[0] };

const uint32_t kn_dtypes_float[] = {RK_S_F16, RK_S_BF16, RK_S_F32, 0};
const uint32_t kn_dtypes_half[] = {RK_S_F16, RK_S_BF16, 0};
const uint32_t kn_dtypes_mma[] = {RK_S_F16, RK_S_BF16, RK_S_FP8E4M3, RK_S_BF8E5M2, RK_S_FP8E4M3FNUZ,
                                  RK_S_BF8E5M2FNUZ, 0};

bool kn_dtype_ok(rk_scalar s) { return s == RK_S_F16 || s == RK_S_BF16 || s == RK_S_F32; }
static bool dtype_f8(rk_scalar s) {
    return s == RK_S_FP8E4M3 || s == RK_S_BF8E5M2 || s == RK_S_FP8E4M3FNUZ || s == RK_S_BF8E5M2FNUZ;
}
const char *kn_dtype_name(rk_scalar s) {
    for (uint32_t i = 0; i < NDTYPES; i++)
        if (dtype_spellings[i].s == s) return dtype_spellings[i].name;
    return "?";
}

/* The knob's legal types (0-terminated): its own list, else f16, bf16, f32. */
static const uint32_t *dtype_list(const rk_knob *kb) { return kb->legal ? kb->legal : kn_dtypes_float; }

/* Does target t have 8-bit float s (t NULL: any target)? gfx942 multiplies the FNUZ
 * encodings, gfx950 and NVIDIA the OCP ones (the catalog's fp8 / bf8). */
static bool dtype_on_target(rk_scalar s, const rk_target *t) {
    return !t || !dtype_f8(s) || s == t->fp8 || s == t->bf8;
}

static bool dtype_legal(const rk_knob *kb, rk_scalar s, const rk_target *t) {
    return kn_dtype_in(dtype_list(kb), s) && dtype_on_target(s, t);
}

bool kn_dtype_in(const uint32_t *list, rk_scalar s) {
    for (const uint32_t *l = list; *l; l++)
        if (*l == (uint32_t)s) return true;
    return false;
}

const char *kn_dtype_list_text(const uint32_t *list, char *buf, size_t len) {
    size_t off = 0;
    buf[0] = 0;
    for (const uint32_t *l = list; *l && off < len; l++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "|" : "", kn_dtype_name((rk_scalar)*l));
    return buf;
}

const char *kn_knob_legal(const rk_knob *kb, uint32_t n, const char *name, char *buf, size_t len) {
    snprintf(buf, len, "?");
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(kb[i].name, name)) rk_knob_legal_text(&kb[i], buf, len);
    return buf;
}

bool rk_knob_has_fp8(const rk_knob *kb) {
    if (kb->kind != RK_KNOB_DTYPE) return false;
    for (const uint32_t *l = dtype_list(kb); *l; l++)
        if (dtype_f8((rk_scalar)*l)) return true;
    return false;
}

void rk_knob_fp8_note(char *buf, size_t n) {
    /* "gfx942: e4m3fnuz, e5m2fnuz; gfx950, sm_80, ...: e4m3, e5m2", grouped by encoding */
    const rk_target *const *ts = rk_targets();
    size_t off = 0;
    buf[0] = 0;
    for (uint32_t i = 0; ts[i] && off < n; i++) {
        if (ts[i]->fp8 == RK_S_NONE) continue;
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++) seen = ts[j]->fp8 == ts[i]->fp8 && ts[j]->bf8 == ts[i]->bf8;
        if (seen) continue;
        off += (size_t)snprintf(buf + off, n - off, "%s", off ? "; " : "");
        for (uint32_t j = i, k = 0; ts[j] && off < n; j++)
            if (ts[j]->fp8 == ts[i]->fp8 && ts[j]->bf8 == ts[i]->bf8)
                off += (size_t)snprintf(buf + off, n - off, "%s%s", k++ ? ", " : "", ts[j]->name);
        if (off < n)
            off += (size_t)snprintf(buf + off, n - off, ": %s, %s", kn_dtype_name(ts[i]->fp8), kn_dtype_name(ts[i]->bf8));
    }
}

static void *field(rk_instance *in, const rk_knob *kb) { return (char *)in + kb->offset; }
static const void *cfield(const rk_instance *in, const rk_knob *kb) { return (const char *)in + kb->offset; }

static uint32_t enum_count(const rk_knob *kb) {
    uint32_t n = 0;
    while (kb->names[n]) n++;
    return n;
}

void rk_knob_legal_text(const rk_knob *kb, char *buf, size_t n) { rk_knob_legal_text_for(kb, NULL, buf, n); }

void rk_knob_legal_text_for(const rk_knob *kb, const rk_target *t, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    switch (kb->kind) {
    case RK_KNOB_U32:
        if (!kb->legal) { snprintf(buf, n, "an integer in 0..4294967295"); return; }
        for (uint32_t i = 0; (i == 0 || kb->legal[i]) && off < n; i++)
            off += (size_t)snprintf(buf + off, n - off, "%s%u", i ? "|" : "", kb->legal[i]);
        return;
    case RK_KNOB_BOOL: snprintf(buf, n, "true|false"); return;
    case RK_KNOB_DTYPE:
        for (const uint32_t *l = dtype_list(kb); *l && off < n; l++)
            if (dtype_on_target((rk_scalar)*l, t))
                off += (size_t)snprintf(buf + off, n - off, "%s%s", off ? "|" : "", kn_dtype_name((rk_scalar)*l));
        return;
    case RK_KNOB_ENUM:
        for (uint32_t i = 0; kb->names[i] && off < n; i++)
            off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? "|" : "", kb->names[i]);
        return;
    case RK_KNOB_TUPLE: {
        char one[160];
        rk_knob single = *kb;
        single.kind = RK_KNOB_U32;
        rk_knob_legal_text(&single, one, sizeof one);
        snprintf(buf, n, "%u values joined by 'x', each %s%s", kb->count, kb->legal ? "one of " : "", one);
        return;
    }
    case RK_KNOB_EPILOGUE:
        snprintf(buf, n, "a comma list of bias, bias_row, scale, clamp(LO:HI), relu, gelu, silu, sigmoid, tanh, "
                 "add, mul (or none)");
        return;
    }
}

static bool u32_legal(const rk_knob *kb, uint32_t v) {
    if (!kb->legal) return true;
    for (uint32_t i = 0; i == 0 || kb->legal[i]; i++)
        if (kb->legal[i] == v) return true;
    return false;
}

/* "block-size" and "block_size" name the same knob. */
static bool knob_is(const char *name, const char *want) {
    for (; *name && *want; name++, want++) {
        char a = *name == '-' ? '_' : *name;
        if (a != *want) return false;
    }
    return !*name && !*want;
}

static const rk_knob *find_knob(const kn_family *fam, const char *name, uint32_t *index) {
    for (uint32_t i = 0; i < fam->nknobs; i++)
        if (knob_is(name, fam->knobs[i].name)) {
            if (index) *index = i;
            return &fam->knobs[i];
        }
    return NULL;
}

static rk_status unknown_knob(const kn_family *fam, const char *name) {
    char list[512];
    size_t off = 0;
    list[0] = 0;
    for (uint32_t i = 0; i < fam->nknobs && off < sizeof list; i++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", fam->knobs[i].name);
    return rk_fail(RK_ERR_INVALID, "unknown knob '%s' for family %s (legal: %s)", name, fam->name, list);
}

static rk_status bad_value(const kn_family *fam, const rk_knob *kb, const char *value) {
    char legal[1024];
    rk_knob_legal_text(kb, legal, sizeof legal);
    /* "one of" only before a list of values, not before a range */
    bool list = kb->kind != RK_KNOB_TUPLE && kb->kind != RK_KNOB_EPILOGUE && (kb->kind != RK_KNOB_U32 || kb->legal);
    return rk_fail(RK_ERR_INVALID, "%s: knob '%s' must be %s%s (got '%s')", fam->name, kb->name, list ? "one of " : "",
                   legal, value);
}

/* An 8-bit float of the other encoding than target t's (t has 8-bit floats): name t's own. */
static rk_status foreign_fp8(const kn_family *fam, const rk_knob *kb, rk_scalar v, const rk_target *t) {
    char legal[256];
    rk_knob_legal_text_for(kb, t, legal, sizeof legal);
    bool e5m2 = v == RK_S_BF8E5M2 || v == RK_S_BF8E5M2FNUZ;
    return rk_fail(RK_ERR_INVALID, "%s: knob '%s' = %s is not an 8-bit float of %s: use %s %s (%s's %s encoding; "
                   "legal on %s: %s)", fam->name, kb->name, kn_dtype_name(v), t->name, kb->name,
                   kn_dtype_name(e5m2 ? t->bf8 : t->fp8), t->name, t->fp8 == RK_S_FP8E4M3FNUZ ? "FNUZ" : "OCP",
                   t->name, legal);
}

/* A spelling of one of the knob's legal types. */
static bool parse_dtype(const rk_knob *kb, const char *s, rk_scalar *out) {
    for (uint32_t i = 0; i < NDTYPES; i++) {
        const dtype_spelling *d = &dtype_spellings[i];
        bool named = !strcmp(s, d->name) || (d->alias[0] && !strcmp(s, d->alias[0])) ||
                     (d->alias[1] && !strcmp(s, d->alias[1]));
        if (named && dtype_legal(kb, d->s, NULL)) { *out = d->s; return true; }
    }
    return false;
}

/* A knob's integer: decimal digits only, at most UINT32_MAX. strtoul alone would take a sign,
 * leading blanks and (with base 0) hex; a knob value is none of those. */
static bool parse_u32_text(const char *p, const char **end, uint32_t *out) {
    uint64_t v = 0;
    const char *q = p;
    for (; *q >= '0' && *q <= '9'; q++) {
        v = v * 10 + (uint64_t)(*q - '0');
        if (v > UINT32_MAX) return false;
    }
    if (q == p) return false;
    *end = q;
    *out = (uint32_t)v;
    return true;
}

rk_status rk_instance_set(rk_instance *in, const char *knob, const char *value, uint32_t *index) {
    const kn_family *fam = kn_family_of(in->family);
    const rk_knob *kb = find_knob(fam, knob ? knob : "", index);
    if (!kb) return unknown_knob(fam, knob ? knob : "");
    if (!value) value = "";
    switch (kb->kind) {
    case RK_KNOB_U32: {
        const char *end;
        uint32_t v;
        if (!parse_u32_text(value, &end, &v) || *end || !u32_legal(kb, v)) return bad_value(fam, kb, value);
        *(uint32_t *)field(in, kb) = v;
        return RK_OK;
    }
    case RK_KNOB_BOOL:
        if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "yes") || !*value)
            *(bool *)field(in, kb) = true;
        else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "no"))
            *(bool *)field(in, kb) = false;
        else
            return bad_value(fam, kb, value);
        return RK_OK;
    case RK_KNOB_DTYPE: {
        rk_scalar s;
        if (!parse_dtype(kb, value, &s)) return bad_value(fam, kb, value);
        rk_scalar *dst = (rk_scalar *)field(in, kb);
        /* out_dtype follows dtype until it is set to something else (bf16 for 8-bit inputs) */
        const rk_knob *out = !strcmp(kb->name, "dtype") ? find_knob(fam, "out_dtype", NULL) : NULL;
        if (out && *(rk_scalar *)field(in, out) == *dst) *(rk_scalar *)field(in, out) = dtype_f8(s) ? RK_S_BF16 : s;
        *dst = s;
        return RK_OK;
    }
    case RK_KNOB_ENUM:
        for (uint32_t i = 0; kb->names[i]; i++)
            if (!strcmp(value, kb->names[i])) { *(int *)field(in, kb) = (int)i; return RK_OK; }
        return bad_value(fam, kb, value);
    case RK_KNOB_TUPLE: {
        uint32_t v[8] = {0};
        const char *p = value;
        RK_ASSERT(kb->count >= 1 && kb->count <= 8, "tuple knob of 1..8 values");
        for (uint32_t i = 0; i < kb->count; i++) {
            const char *end;
            uint32_t x;
            if (!parse_u32_text(p, &end, &x) || !u32_legal(kb, x)) return bad_value(fam, kb, value);
            v[i] = x;
            if (i + 1 < kb->count) {
                if (*end != 'x') return bad_value(fam, kb, value);
                p = end + 1;
            } else if (*end) {
                return bad_value(fam, kb, value);
            }
        }
        memcpy(field(in, kb), v, kb->count * sizeof v[0]);
        return RK_OK;
    }
    case RK_KNOB_EPILOGUE:
        return rk_epi_parse(value, (rk_epi_chain *)field(in, kb));
    }
    return RK_OK;
}

static void knob_text(const rk_instance *in, const rk_knob *kb, char *buf, size_t n) {
    switch (kb->kind) {
    case RK_KNOB_U32: snprintf(buf, n, "%u", *(const uint32_t *)cfield(in, kb)); return;
    case RK_KNOB_BOOL: snprintf(buf, n, "%s", *(const bool *)cfield(in, kb) ? "true" : "false"); return;
    case RK_KNOB_DTYPE: snprintf(buf, n, "%s", kn_dtype_name(*(const rk_scalar *)cfield(in, kb))); return;
    case RK_KNOB_ENUM: {
        int v = *(const int *)cfield(in, kb);
        snprintf(buf, n, "%s", v >= 0 && (uint32_t)v < enum_count(kb) ? kb->names[v] : "?");
        return;
    }
    case RK_KNOB_TUPLE: {
        const uint32_t *v = cfield(in, kb);
        size_t off = 0;
        buf[0] = 0;
        for (uint32_t i = 0; i < kb->count && off < n; i++)
            off += (size_t)snprintf(buf + off, n - off, "%s%u", i ? "x" : "", v[i]);
        return;
    }
    case RK_KNOB_EPILOGUE: rk_epi_format(cfield(in, kb), buf, n); return;
    }
}

rk_status rk_instance_get(const rk_instance *in, const char *knob, char *buf, size_t n) {
    const kn_family *fam = kn_family_of(in->family);
    const rk_knob *kb = find_knob(fam, knob ? knob : "", NULL);
    if (!kb) return unknown_knob(fam, knob ? knob : "");
    knob_text(in, kb, buf, n);
    return RK_OK;
}

rk_status rk_instance_default(rk_family_id f, rk_instance *out) {
    const kn_family *fam = kn_family_find(f);
    if (!fam) return rk_fail(RK_ERR_INVALID, "unknown kernel family %d", (int)f);
    memset(out, 0, sizeof *out);
    out->family = f;
    fam->defaults(out);
    return RK_OK;
}

/* The family's heuristic alone; rk_instance_tune adds the tuning database (tuning.c). */
rk_status kn_instance_heuristic(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked) {
    if (!t) return rk_fail(RK_ERR_INVALID, "rk_instance_tune: no target");
    const kn_family *fam = kn_family_find(in->family);
    if (!fam) return rk_fail(RK_ERR_INVALID, "unknown kernel family %d", (int)in->family);
    rk_status st = kn_shape_check(fam, s);
    if (st) return st;
    if (fam->tune) fam->tune(in, t, s, locked);
    return RK_OK;
}

rk_status rk_instance_tune(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked) {
    return rk_instance_tune_db(in, t, s, locked, NULL, NULL, NULL, 0);
}

rk_status rk_instance_validate(const rk_instance *in, const rk_target *t) {
    const kn_family *fam = kn_family_find(in->family);
    if (!fam) return rk_fail(RK_ERR_INVALID, "unknown kernel family %d", (int)in->family);
    if (!t) return rk_fail(RK_ERR_INVALID, "no target given (legal: %s)", rk_target_names());
    for (uint32_t i = 0; i < fam->nknobs; i++) {
        const rk_knob *kb = &fam->knobs[i];
        char txt[256];
        knob_text(in, kb, txt, sizeof txt);
        bool ok = true;
        switch (kb->kind) {
        case RK_KNOB_U32: ok = u32_legal(kb, *(const uint32_t *)cfield(in, kb)); break;
        case RK_KNOB_BOOL: break;
        case RK_KNOB_DTYPE: {
            rk_scalar v = *(const rk_scalar *)cfield(in, kb);
            ok = dtype_legal(kb, v, NULL);
            /* a target without 8-bit floats: the family says which targets serve them (gemm: by atom) */
            if (ok && t->fp8 != RK_S_NONE && !dtype_legal(kb, v, t)) return foreign_fp8(fam, kb, v, t);
            break;
        }
        case RK_KNOB_ENUM: {
            int v = *(const int *)cfield(in, kb);
            ok = v >= 0 && (uint32_t)v < enum_count(kb);
            break;
        }
        case RK_KNOB_TUPLE:
            for (uint32_t e = 0; e < kb->count; e++) ok = ok && u32_legal(kb, ((const uint32_t *)cfield(in, kb))[e]);
            break;
        case RK_KNOB_EPILOGUE: ok = ((const rk_epi_chain *)cfield(in, kb))->n <= RK_EPI_MAX_STEPS; break;
        }
        if (!ok) return bad_value(fam, kb, txt);
    }
    return fam->validate(in, t);
}

rk_status rk_instance_default_shape(const rk_instance *in, rk_shape *out) {
    rk_status st = rk_shape_default(in->family, out);
    const kn_family *fam = kn_family_find(in->family);
    if (!st && fam->default_shape) fam->default_shape(in, out);
    return st;
}

rk_status rk_instance_check_shape(const rk_instance *in, const rk_shape *s) {
    const kn_family *fam = kn_family_find(in->family);
    if (!fam) return rk_fail(RK_ERR_INVALID, "unknown kernel family %d", (int)in->family);
    rk_status st = kn_shape_check(fam, s);
    if (st || !fam->check_shape) return st;
    return fam->check_shape(in, s);
}

rk_status rk_instance_name(const rk_instance *in, char *buf, size_t n) {
    const kn_family *fam = kn_family_of(in->family);
    size_t off = (size_t)snprintf(buf, n, "rk_%s", fam->name);
    for (uint32_t i = 0; i < fam->nknobs && off < n; i++) {
        const rk_knob *kb = &fam->knobs[i];
        if (!kb->tag) continue;   /* a run-time knob (conv geometry): passed as a scalar, same code */
        if (kb->kind == RK_KNOB_BOOL) {
            if (*(const bool *)cfield(in, kb)) off += (size_t)snprintf(buf + off, n - off, "_%s", kb->tag);
            continue;
        }
        if (kb->kind == RK_KNOB_EPILOGUE) {
            /* its own letters-digits-underscores tag, nothing when empty */
            char tag[256];
            rk_epi_tag(cfield(in, kb), tag, sizeof tag);
            off += (size_t)snprintf(buf + off, n - off, "%s", tag);
            continue;
        }
        if (kb->kind == RK_KNOB_ENUM && kb->count == 1 && *(const int *)cfield(in, kb) == 0) continue;
        if (kb->kind == RK_KNOB_U32 && kb->count == 1 && *(const uint32_t *)cfield(in, kb) == 0) continue;
        char txt[64];
        knob_text(in, kb, txt, sizeof txt);
        off += (size_t)snprintf(buf + off, n - off, "_%s%s", kb->tag, txt);
    }
    if (off >= n) return rk_fail(RK_ERR_INVALID, "kernel name longer than %zu bytes", n);
    return RK_OK;
}

void rk_instance_kind(const rk_instance *in, char *buf, size_t n) {
    const rk_knob *kb = NULL;
    const kn_family *fam = kn_family_of(in->family);
    for (uint32_t i = 0; i < fam->nknobs; i++)
        if (fam->knobs[i].kind == RK_KNOB_DTYPE) { kb = &fam->knobs[i]; break; }
    snprintf(buf, n, "%s_%s", fam->name, kb ? kn_dtype_name(*(const rk_scalar *)cfield(in, kb)) : "any");
}

const char *rk_instance_note(const rk_instance *in, const rk_target *t) {
    const kn_family *fam = kn_family_find(in->family);
    const char *n = fam && fam->note && t ? fam->note(in, t) : NULL;
    return n ? n : "";
}

rk_status rk_instance_signature(const rk_instance *in, rk_ksig *out) {
    memset(out, 0, sizeof *out);
    kn_family_of(in->family)->signature(in, out);
    return RK_OK;
}

void kn_sig_add(rk_ksig *s, const char *name, bool ptr, rk_scalar type, rk_kparam_role role, const char *dims) {
    RK_ASSERT(s->n < RK_KSIG_MAX, "kn_sig_add: too many parameters");
    s->p[s->n++] = (rk_kparam){name, ptr, type, role, dims};
}

/* A shape the family hooks may read: checked, or (a caller's bug) the defaults. */
static rk_shape usable(const kn_family *fam, const rk_instance *in, const rk_shape *s) {
    rk_shape d;
    if (s && kn_shape_check(fam, s) == RK_OK) return *s;
    rk_shape_default(in->family, &d);
    return d;
}

void rk_instance_geometry(const rk_instance *in, rk_launch_geom *out) {
    memset(out, 0, sizeof *out);
    out->block[0] = out->block[1] = out->block[2] = 1;
    kn_family_of(in->family)->geometry(in, out);
}

void rk_instance_grid(const rk_instance *in, const rk_shape *s, uint32_t grid[3], uint32_t block[3]) {
    const kn_family *fam = kn_family_of(in->family);
    rk_shape sh = usable(fam, in, s);
    rk_launch_geom g;
    rk_instance_geometry(in, &g);
    /* the family's own program over its own rank: malformed is a bug */
    RK_ASSERT(rk_launch_geom_eval(&g, sh.dim, sh.rank, grid, block) == RK_OK, "family geometry program");
}

void rk_instance_cost(const rk_instance *in, const rk_shape *s, double *bytes, double *flops) {
    *bytes = *flops = 0;
    const kn_family *fam = kn_family_of(in->family);
    rk_shape sh = usable(fam, in, s);
    fam->cost(in, &sh, bytes, flops);
}

rk_status rk_instance_build(const rk_instance *in, const rk_target *t, rk_kernel **out) {
    *out = NULL;
    rk_status st = rk_instance_validate(in, t);
    if (st) return st;
    char name[256];
    if ((st = rk_instance_name(in, name, sizeof name))) return st;
    rk_ksig sig;
    rk_instance_signature(in, &sig);
    const kn_family *f = kn_family_of(in->family);
    rk_kernel *k = rk_kernel_new(name);
    if (!k) return rk_fail(RK_ERR_NOMEM, "out of memory creating kernel %s", name);
    rk_value params[RK_KSIG_MAX];
    for (uint32_t i = 0; i < sig.n; i++) {
        const rk_kparam *p = &sig.p[i];
        rk_param_abi abi = {0};
        rk_type ty = (rk_type){p->type};
        if (p->role == RK_KP_TENSORMAP) {
            abi.tensormap = true;
            ty = rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT);
        } else if (p->ptr) {
            ty = rk_type_ptr(k, ty, RK_AS_GLOBAL);
            abi.noalias = true;
            abi.readonly = p->role == RK_KP_IN;
            abi.writeonly = p->role == RK_KP_OUT;
            abi.align = f->param_align ? f->param_align(in, p) : 16;
        }
        params[i] = rk_add_param(k, p->name, ty, p->ptr || abi.tensormap ? &abi : NULL);
    }
    /* the block does not depend on the shape */
    uint32_t grid[3], block[3];
    rk_instance_grid(in, NULL, grid, block);
    rk_kernel_set_attr_int(k, "max_workgroup_size", block[0]);
    f->build(in, t, k, params);
    rk_build_return(k);
    st = rk_kernel_finish(k);
    if (st) {
        rk_fail(st, "building %s: %s", name, rk_builder_error(k));
        rk_kernel_free(k);
        return st;
    }
    *out = k;
    return RK_OK;
}

size_t rk_kernels_struct_size(const char *name) {
    static const struct { const char *name; size_t size; } sizes[] = {
        {"rk_instance", sizeof(rk_instance)}, {"rk_problem", sizeof(rk_problem)}, {"rk_ksig", sizeof(rk_ksig)},
        {"rk_kparam", sizeof(rk_kparam)},     {"rk_knob", sizeof(rk_knob)},       {"rk_shape", sizeof(rk_shape)},
        {"rk_dim_decl", sizeof(rk_dim_decl)}, {"rk_host_buf", sizeof(rk_host_buf)},
        {"rk_problem_diff", sizeof(rk_problem_diff)},
    };
    for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, name) == 0) return sizes[i].size;
    return 0;
}
