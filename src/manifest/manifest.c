/* rocke — manifest v1: the strict reader (field by field, each error names
 * the field and what it must be; upstream manifests with `hsaco` and
 * "ptr<f16, global>" types are accepted), the writer (fixed field order,
 * atomic), and binary size/hash checks. Layer: manifest. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <xxhash.h>

#include "rocke/ir.h"
#include "rocke/manifest.h"
#include "../base/base_int.h"

void rk_manifest_init(rk_manifest *m) {
    memset(m, 0, sizeof *m);
    m->warmup_iters = 5;
    m->timed_iters = 100;
    m->is_binary = -1;
    snprintf(m->codegen_policy_key, sizeof m->codegen_policy_key, "default");
    snprintf(m->engine_version, sizeof m->engine_version, "%s", RK_VERSION_STRING);
    snprintf(m->engine_build_id, sizeof m->engine_build_id, "unknown");
}

bool rk_manifest_add_arg(rk_manifest *m, const char *name, const char *type, uint32_t size_bytes) {
    if (m->nargs >= RK_MANIFEST_MAX_ARGS) return false;
    rk_manifest_arg *a = &m->args[m->nargs++];
    snprintf(a->name, sizeof a->name, "%s", name);
    snprintf(a->type, sizeof a->type, "%s", type);
    a->size_bytes = size_bytes;
    return true;
}

bool rk_manifest_add_spec(rk_manifest *m, const char *key, const char *value) {
    if (m->nspec >= RK_MANIFEST_MAX_SPEC) return false;
    snprintf(m->spec[m->nspec].key, sizeof m->spec[0].key, "%s", key);
    snprintf(m->spec[m->nspec].value, sizeof m->spec[0].value, "%s", value);
    m->nspec++;
    return true;
}

const char *rk_manifest_spec(const rk_manifest *m, const char *key) {
    for (uint32_t i = 0; i < m->nspec; i++)
        if (!strcmp(m->spec[i].key, key)) return m->spec[i].value;
    return NULL;
}

void rk_manifest_hash(const void *data, size_t n, char out[40]) {
    snprintf(out, 40, "xxh3-64:%016llx", (unsigned long long)XXH3_64bits(data, n));
}

/* ---- reading ------------------------------------------------------------------------ */
static rk_status bad(const char *field, const char *what) {
    return rk_fail(RK_ERR_PARSE, "manifest field '%s' %s", field, what);
}

static rk_status get_str(const rk_json *root, const char *field, bool required, char *dst, size_t n) {
    const rk_json *v = rk_json_get(root, field);
    if (!v) return required ? bad(field, "is missing (a string is required)") : RK_OK;
    if (v->kind != RK_JSON_STRING) return bad(field, "must be a string");
    if (strlen(v->str) >= n) {
        char what[64];
        snprintf(what, sizeof what, "is longer than %zu bytes", n - 1);
        return bad(field, what);
    }
    memcpy(dst, v->str, strlen(v->str) + 1);
    return RK_OK;
}

static rk_status get_uint(const rk_json *root, const char *field, bool required, uint64_t max, uint64_t *dst) {
    const rk_json *v = rk_json_get(root, field);
    if (!v) return required ? bad(field, "is missing (an integer is required)") : RK_OK;
    if (v->kind != RK_JSON_NUMBER || !v->is_int || v->i < 0 || (uint64_t)v->i > max) {
        char what[96];
        snprintf(what, sizeof what, "must be an integer in 0..%llu", (unsigned long long)max);
        return bad(field, what);
    }
    *dst = (uint64_t)v->i;
    return RK_OK;
}

static rk_status get_u32(const rk_json *root, const char *field, bool required, uint32_t max, uint32_t *dst) {
    uint64_t v = *dst;
    rk_status st = get_uint(root, field, required, max, &v);
    *dst = (uint32_t)v;
    return st;
}

/* 0/1 or false/true */
static rk_status get_flag(const rk_json *root, const char *field, int *dst) {
    const rk_json *v = rk_json_get(root, field);
    if (!v) return RK_OK;
    if (v->kind == RK_JSON_BOOL) { *dst = v->b; return RK_OK; }
    if (v->kind == RK_JSON_NUMBER && v->is_int && (v->i == 0 || v->i == 1)) { *dst = (int)v->i; return RK_OK; }
    return bad(field, "must be true, false, 0 or 1");
}

/* [x, y, z], each 1..8, at most 8 blocks; absent: left 0, 0, 0 */
static rk_status get_cluster_dims(const rk_json *root, uint32_t d[3]) {
    const rk_json *v = rk_json_get(root, "cluster_dims");
    if (!v) return RK_OK;
    const char *want = "must be [x, y, z], each an integer in 1..8, at most 8 blocks in all";
    if (v->kind != RK_JSON_ARRAY || v->n != 3) return bad("cluster_dims", want);
    uint64_t prod = 1;
    for (uint32_t i = 0; i < 3; i++) {
        const rk_json *e = v->items[i];
        if (e->kind != RK_JSON_NUMBER || !e->is_int || e->i < 1 || e->i > 8) return bad("cluster_dims", want);
        d[i] = (uint32_t)e->i;
        prod *= d[i];
    }
    return prod > 8 ? bad("cluster_dims", want) : RK_OK;
}

/* A plain file name in the manifest's folder: no separators, not "." or "..". */
static rk_status check_file_name(const char *field, const char *s) {
    if (!s[0]) return RK_OK;
    if (strchr(s, '/') || strchr(s, '\\') || !strcmp(s, ".") || !strcmp(s, ".."))
        return bad(field, "must be a file name in the manifest's folder (no '/' or '..')");
    return RK_OK;
}

static const char *const scalar_types[] = {"i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64",
                                           "fp8e4m3", "fp8e4m3fnuz", "bf8e5m2", "bf8e5m2fnuz", NULL};

static uint32_t scalar_bytes(const char *s, size_t n) {
    for (int i = 0; scalar_types[i]; i++)
        if (strlen(scalar_types[i]) == n && !strncmp(s, scalar_types[i], n)) {
            if (strstr(scalar_types[i], "8e")) return 1;     /* the 8-bit float formats */
            uint32_t bits = (uint32_t)atoi(scalar_types[i] + (s[0] == 'b' ? 2 : 1));
            return bits < 8 ? 1 : bits / 8;
        }
    return 0;
}

/* "ptr<ELEM, SPACE>" (spaces optional), "tensormap" (a CUtensorMap by value)
 * or a scalar; returns its size or 0. */
static uint32_t arg_type_size(const char *t) {
    if (!strcmp(t, "tensormap")) return 128;
    if (strncmp(t, "ptr<", 4) != 0) return scalar_bytes(t, strlen(t));
    const char *p = t + 4;
    while (*p == ' ') p++;
    const char *e = p;
    while (*e && *e != ',' && *e != ' ' && *e != '>') e++;
    if (!scalar_bytes(p, (size_t)(e - p))) return 0;
    while (*e == ' ') e++;
    if (*e != ',') return 0;
    e++;
    while (*e == ' ') e++;
    if (!strncmp(e, "global", 6)) e += 6;
    else if (!strncmp(e, "constant", 8)) e += 8;
    else return 0;
    while (*e == ' ') e++;
    return e[0] == '>' && !e[1] ? 8 : 0;
}

static rk_status read_args(const rk_json *root, rk_manifest *m) {
    const rk_json *a = rk_json_get(root, "args_signature");
    if (!a) return bad("args_signature", "is missing (a list of {name, type, size_bytes} is required)");
    if (a->kind != RK_JSON_ARRAY) return bad("args_signature", "must be a list of {name, type, size_bytes}");
    if (a->n > RK_MANIFEST_MAX_ARGS) return bad("args_signature", "has more than 32 entries");
    m->nargs = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        const rk_json *e = a->items[i];
        char f[64];
        snprintf(f, sizeof f, "args_signature[%u]", i);
        if (e->kind != RK_JSON_OBJECT) return bad(f, "must be an object {name, type, size_bytes}");
        rk_manifest_arg *arg = &m->args[m->nargs++];
        snprintf(f, sizeof f, "args_signature[%u].name", i);
        rk_status st = get_str(e, "name", true, arg->name, sizeof arg->name);
        if (st) return bad(f, strstr(rk_error_message(), "must") ? "must be a string" : "is missing");
        if (!arg->name[0]) return bad(f, "must not be empty");
        snprintf(f, sizeof f, "args_signature[%u].type", i);
        if (get_str(e, "type", true, arg->type, sizeof arg->type)) return bad(f, "must be a type string");
        uint32_t sz = arg_type_size(arg->type);
        if (!sz) return bad(f, "must be 'ptr<T, global>', 'tensormap' or a scalar (i32, i64, f32, ...)");
        arg->size_bytes = sz;
        const rk_json *s = rk_json_get(e, "size_bytes");
        if (s && (s->kind != RK_JSON_NUMBER || !s->is_int || s->i != (int64_t)sz)) {
            char what[96];
            snprintf(what, sizeof what, "must be %u for type '%s'", sz, arg->type);
            snprintf(f, sizeof f, "args_signature[%u].size_bytes", i);
            return bad(f, what);
        }
    }
    return RK_OK;
}

static rk_status read_shape(const rk_json *root, const char *field, uint64_t *dst, uint32_t max, uint32_t *n) {
    const rk_json *v = rk_json_get(root, field);
    if (!v) return RK_OK;
    if (v->kind != RK_JSON_ARRAY || v->n == 0 || v->n > max) {
        char what[64];
        snprintf(what, sizeof what, "must be a list of 1 to %u positive integers", max);
        return bad(field, what);
    }
    for (uint32_t i = 0; i < v->n; i++) {
        const rk_json *e = v->items[i];
        if (e->kind != RK_JSON_NUMBER || !e->is_int || e->i <= 0) return bad(field, "must hold positive integers");
        dst[i] = (uint64_t)e->i;
    }
    if (n) *n = v->n;
    return RK_OK;
}

/* "default_shape_dims": one distinct name per default_shape entry. */
static rk_status read_shape_dims(const rk_json *root, rk_manifest *m) {
    static const char field[] = "default_shape_dims";
    const rk_json *v = rk_json_get(root, field);
    if (!v) return RK_OK;
    if (v->kind != RK_JSON_ARRAY || v->n != m->ndefault_shape) {
        char what[96];
        snprintf(what, sizeof what, "must list one dimension name per default_shape entry (%u)", m->ndefault_shape);
        return bad(field, what);
    }
    for (uint32_t i = 0; i < v->n; i++) {
        const rk_json *e = v->items[i];
        if (e->kind != RK_JSON_STRING || !e->str[0] || strlen(e->str) >= sizeof m->default_shape_dims[i])
            return bad(field, "must hold names of 1 to 23 characters");
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(m->default_shape_dims[j], e->str)) return bad(field, "must not name a dimension twice");
        snprintf(m->default_shape_dims[i], sizeof m->default_shape_dims[i], "%s", e->str);
    }
    return RK_OK;
}

static rk_status read_timing(const rk_json *root, rk_manifest *m) {
    const rk_json *t = rk_json_get(root, "timing_ms");
    if (!t) return RK_OK;
    if (t->kind != RK_JSON_OBJECT) return bad("timing_ms", "must be an object of stage -> milliseconds");
    struct { const char *k; double *d; } f[] = {
        {"build", &m->timing_ms.build}, {"passes", &m->timing_ms.passes}, {"lower", &m->timing_ms.lower},
        {"compile", &m->timing_ms.compile}, {"link", &m->timing_ms.link}, {"total", &m->timing_ms.total}};
    for (uint32_t i = 0; i < t->n; i++)
        if (t->items[i]->kind != RK_JSON_NUMBER) return bad("timing_ms", "must map stages to numbers");
    for (size_t i = 0; i < RK_COUNTOF(f); i++) {
        const rk_json *v = rk_json_get(t, f[i].k);
        if (v) *f[i].d = v->num;
    }
    return RK_OK;
}

static rk_status read_spec(const rk_json *root, rk_manifest *m) {
    const rk_json *s = rk_json_get(root, "spec");
    if (!s) return RK_OK;
    if (s->kind != RK_JSON_OBJECT) return bad("spec", "must be an object of knob -> value");
    if (s->n > RK_MANIFEST_MAX_SPEC) return bad("spec", "has more than 32 knobs");
    for (uint32_t i = 0; i < s->n; i++) {
        const rk_json *v = s->items[i];
        char val[sizeof m->spec[0].value];
        if (v->kind == RK_JSON_STRING) snprintf(val, sizeof val, "%s", v->str);
        else if (v->kind == RK_JSON_BOOL) snprintf(val, sizeof val, "%s", v->b ? "true" : "false");
        else if (v->kind == RK_JSON_NUMBER && v->is_int) snprintf(val, sizeof val, "%lld", (long long)v->i);
        else return bad("spec", "values must be strings, integers or booleans");
        if (strlen(s->keys[i]) >= sizeof m->spec[0].key || (v->kind == RK_JSON_STRING && strlen(v->str) >= sizeof m->spec[0].value))
            return bad("spec", "keys must be shorter than 32 bytes and values than 128");
        rk_manifest_add_spec(m, s->keys[i], val);
    }
    return RK_OK;
}

rk_status rk_manifest_dim_parse(const char *dim, char *base, size_t n, uint64_t *mod) {
    const char *pc = strchr(dim, '%');
    size_t len = pc ? (size_t)(pc - dim) : strlen(dim);
    *mod = 0;
    if (!len || len >= n) return rk_fail(RK_ERR_INVALID, "dimension '%s' needs a name of 1 to %zu bytes", dim, n - 1);
    memcpy(base, dim, len);
    base[len] = 0;
    if (!pc) return RK_OK;
    char *end = NULL;
    unsigned long long k = strtoull(pc + 1, &end, 10);
    if (!pc[1] || *end || k < 2 || k > 65536)
        return rk_fail(RK_ERR_INVALID, "dimension '%s': the modulus after '%%' must be an integer in 2..65536", dim);
    *mod = k;
    return RK_OK;
}

/* "variants": [{"manifest": FILE, "when": {DIM: [lo, hi], ...}}, ...]; DIM
 * "NAME" or "NAME%K" (rk_manifest_dim_parse) */
static rk_status read_variants(const rk_json *root, rk_manifest *m) {
    const rk_json *v = rk_json_get(root, "variants");
    if (!v) return RK_OK;
    if (v->kind != RK_JSON_ARRAY || v->n > RK_MANIFEST_MAX_VARIANTS)
        return bad("variants", "must be a list of at most 64 {manifest, when} objects");
    for (uint32_t i = 0; i < v->n; i++) {
        const rk_json *e = v->items[i];
        rk_manifest_variant *mv = &m->variants[i];
        char f[48];
        snprintf(f, sizeof f, "variants[%u].manifest", i);
        if (e->kind != RK_JSON_OBJECT || get_str(e, "manifest", true, mv->manifest, sizeof mv->manifest) ||
            !mv->manifest[0])
            return bad(f, "must be the file name of a manifest in this folder (under 64 bytes)");
        rk_status st = check_file_name(f, mv->manifest);
        if (st) return st;
        const rk_json *w = rk_json_get(e, "when");
        snprintf(f, sizeof f, "variants[%u].when", i);
        if (!w || w->kind != RK_JSON_OBJECT || !w->n || w->n > RK_MANIFEST_VARIANT_DIMS)
            return bad(f, "must map 1 to 4 dimension names to [lo, hi] ranges");
        for (uint32_t d = 0; d < w->n; d++) {
            const rk_json *r = w->items[d];
            bool ok = r->kind == RK_JSON_ARRAY && r->n == 2 && strlen(w->keys[d]) < sizeof mv->dim[0] &&
                      w->keys[d][0];
            for (uint32_t q = 0; ok && q < 2; q++)
                ok = r->items[q]->kind == RK_JSON_NUMBER && r->items[q]->is_int && r->items[q]->i >= 0;
            if (!ok || r->items[0]->i > r->items[1]->i)
                return bad(f, "must map dimension names (under 24 bytes) to [lo, hi], 0 <= lo <= hi integers");
            char base[24];
            uint64_t mod;
            if (rk_manifest_dim_parse(w->keys[d], base, sizeof base, &mod) ||
                (mod && (uint64_t)r->items[1]->i >= mod))
                return bad(f, "names a dimension as NAME or NAME%K (K in 2..65536, with hi < K for NAME%K)");
            snprintf(mv->dim[d], sizeof mv->dim[d], "%s", w->keys[d]);
            mv->lo[d] = (uint64_t)r->items[0]->i;
            mv->hi[d] = (uint64_t)r->items[1]->i;
        }
        mv->ndims = w->n;
    }
    m->nvariants = v->n;
    return RK_OK;
}

static rk_json *variants_json(const rk_manifest *m) {
    rk_json *arr = rk_json_array();
    for (uint32_t i = 0; arr && i < m->nvariants; i++) {
        const rk_manifest_variant *mv = &m->variants[i];
        rk_json *e = rk_json_object(), *w = rk_json_object();
        bool ok = e && w && rk_json_set(e, "manifest", rk_json_str(mv->manifest));
        for (uint32_t d = 0; ok && d < mv->ndims; d++) {
            const uint64_t r[2] = {mv->lo[d], mv->hi[d]};
            rk_json *l = rk_json_array();
            for (uint32_t q = 0; l && q < 2; q++)
                if (!rk_json_push(l, rk_json_int((int64_t)r[q]))) { rk_json_free(l); l = NULL; }
            ok = l && rk_json_set(w, mv->dim[d], l);
        }
        if (ok) ok = rk_json_set(e, "when", w);
        else rk_json_free(w);
        if (!ok || !rk_json_push(arr, e)) {
            if (!ok) rk_json_free(e);
            rk_json_free(arr);
            arr = NULL;
        }
    }
    return arr;
}

const rk_manifest_variant *rk_manifest_pick(const rk_manifest *m, const char *const *names, const uint64_t *ext,
                                            uint32_t n) {
    for (uint32_t i = 0; i < m->nvariants; i++) {
        const rk_manifest_variant *mv = &m->variants[i];
        bool all = true;
        for (uint32_t d = 0; all && d < mv->ndims; d++) {
            bool found = false;
            char base[24];
            uint64_t mod;
            if (rk_manifest_dim_parse(mv->dim[d], base, sizeof base, &mod)) {
                all = false;
                break;
            }
            for (uint32_t j = 0; j < n; j++)
                if (!strcmp(names[j], base)) {
                    uint64_t x = mod ? ext[j] % mod : ext[j];
                    found = true;
                    all = x >= mv->lo[d] && x <= mv->hi[d];
                }
            all = all && found;
        }
        if (all) return mv;
    }
    return NULL;
}

static rk_status check_type(const rk_json *root, const char *field, rk_json_kind kind, const char *what) {
    const rk_json *v = rk_json_get(root, field);
    return v && v->kind != kind ? bad(field, what) : RK_OK;
}

static rk_status read_root(const rk_json *root, rk_manifest *m) {
    rk_status st;
    char schema[64];
    if (root->kind != RK_JSON_OBJECT) return rk_fail(RK_ERR_PARSE, "manifest: the document is not a JSON object");
    if (!rk_json_get(root, "schema")) return bad("schema", "is missing (must be \"" RK_MANIFEST_SCHEMA "\")");
    st = get_str(root, "schema", true, schema, sizeof schema);
    if (st || strcmp(schema, RK_MANIFEST_SCHEMA))
        return bad("schema", "must be \"" RK_MANIFEST_SCHEMA "\"");
#define TRY(x) do { if ((st = (x))) return st; } while (0)
    TRY(get_str(root, "kind", true, m->kind, sizeof m->kind));
    TRY(get_str(root, "kernel_name", true, m->kernel_name, sizeof m->kernel_name));
    if (!m->kernel_name[0]) return bad("kernel_name", "must not be empty");
    bool upstream = !rk_json_get(root, "binary");
    TRY(get_str(root, upstream ? "hsaco" : "binary", false, m->binary, sizeof m->binary));
    if (!m->binary[0]) return bad("binary", "is missing (or upstream 'hsaco'): the code object's file name");
    TRY(check_file_name(upstream ? "hsaco" : "binary", m->binary));
    TRY(get_str(root, "binary_kind", false, m->binary_kind, sizeof m->binary_kind));
    if (!m->binary_kind[0]) {
        const char *dot = strrchr(m->binary, '.');
        snprintf(m->binary_kind, sizeof m->binary_kind, "%s",
                 dot && !strcmp(dot, ".ptx") ? "ptx" : dot && !strcmp(dot, ".cubin") ? "cubin" : "hsaco");
    }
    if (strcmp(m->binary_kind, "hsaco") && strcmp(m->binary_kind, "ptx") && strcmp(m->binary_kind, "cubin") &&
        strcmp(m->binary_kind, "ir"))
        return bad("binary_kind", "must be \"hsaco\", \"ptx\", \"cubin\" or \"ir\"");
    TRY(get_uint(root, rk_json_get(root, "binary_bytes") ? "binary_bytes" : "hsaco_bytes", false, UINT64_MAX >> 1,
                 &m->binary_bytes));
    TRY(get_str(root, "binary_hash", false, m->binary_hash, sizeof m->binary_hash));
    if (m->binary_hash[0] && (strncmp(m->binary_hash, "xxh3-64:", 8) || strlen(m->binary_hash) != 24 ||
                              strspn(m->binary_hash + 8, "0123456789abcdef") != 16))
        return bad("binary_hash", "must be \"xxh3-64:\" and 16 lowercase hex digits");
    TRY(get_str(root, "target", false, m->target, sizeof m->target));
    TRY(get_str(root, "ir", false, m->ir, sizeof m->ir));
    TRY(check_file_name("ir", m->ir));
    TRY(get_str(root, "llvm", false, m->llvm, sizeof m->llvm));
    TRY(check_file_name("llvm", m->llvm));
    /* one legal range in every message (0, 4096 and -1 alike): 1..1024 */
    const rk_json *tpb = rk_json_get(root, "threads_per_block");
    if (!tpb) return bad("threads_per_block", "is missing (an integer is required)");
    if (tpb->kind != RK_JSON_NUMBER || !tpb->is_int || tpb->i < 1 || tpb->i > 1024)
        return bad("threads_per_block", "must be an integer in 1..1024");
    m->threads_per_block = (uint32_t)tpb->i;
    TRY(get_u32(root, "dyn_smem_min", false, UINT32_MAX, &m->dyn_smem_min));
    TRY(get_cluster_dims(root, m->cluster_dims));
    TRY(read_args(root, m));
    int flag = 0;
    TRY(get_flag(root, "sig_has_bytes", &flag));
    m->sig_has_bytes = flag;
    flag = 0;
    TRY(get_flag(root, "cooperative", &flag));
    m->cooperative = flag;
    TRY(get_u32(root, "warmup_iters", false, 1000000, &m->warmup_iters));
    TRY(get_u32(root, "timed_iters", false, 1000000, &m->timed_iters));
    TRY(read_timing(root, m));
    TRY(get_str(root, "notes", false, m->notes, sizeof m->notes));
    TRY(get_str(root, "engine_version", false, m->engine_version, sizeof m->engine_version));
    TRY(get_str(root, "engine_build_id", false, m->engine_build_id, sizeof m->engine_build_id));
    TRY(get_str(root, "codegen_policy_key", false, m->codegen_policy_key, sizeof m->codegen_policy_key));
    TRY(check_type(root, "codegen_policy", RK_JSON_OBJECT, "must be an object"));
    TRY(check_type(root, "atoms", RK_JSON_ARRAY, "must be a list of atom names"));
    TRY(check_type(root, "ck_dependency", RK_JSON_BOOL, "must be true or false"));
    TRY(check_type(root, "ir_authored", RK_JSON_BOOL, "must be true or false"));
    TRY(get_str(root, "op", false, m->op, sizeof m->op));
    TRY(get_str(root, "dtype", false, m->dtype, sizeof m->dtype));
    TRY(read_shape(root, "default_shape", m->default_shape, RK_MANIFEST_MAX_DIMS, &m->ndefault_shape));
    TRY(read_shape_dims(root, m));
    TRY(get_uint(root, "elems_per_block", false, UINT32_MAX, &m->elems_per_block));
    TRY(get_flag(root, "is_binary", &m->is_binary));
    TRY(get_u32(root, "block_m", false, 65536, &m->block_m));
    TRY(get_u32(root, "block_n", false, 65536, &m->block_n));
    uint64_t g[3] = {0};
    uint32_t ng = 0;
    TRY(read_shape(root, "grid_explicit", g, 3, &ng));
    if (ng && ng != 3) return bad("grid_explicit", "must be a list of 3 positive integers");
    for (int i = 0; i < 3; i++) {
        if (g[i] > UINT32_MAX) return bad("grid_explicit", "must hold 32-bit values");
        m->grid_explicit[i] = (uint32_t)g[i];
    }
    const rk_json *eps = rk_json_get(root, "eps");
    if (eps && eps->kind != RK_JSON_NUMBER) return bad("eps", "must be a number");
    if (eps) { m->eps = eps->num; m->has_eps = true; }
    TRY(get_str(root, "family", false, m->family, sizeof m->family));
    TRY(read_spec(root, m));
    TRY(read_variants(root, m));
#undef TRY
    return RK_OK;
}

rk_status rk_manifest_parse(const char *text, size_t len, rk_manifest *out) {
    rk_manifest_init(out);
    rk_json *root = rk_json_parse(text, len);
    if (!root) return RK_ERR_PARSE;      /* the message says "json: line L, column C: ..." */
    rk_status st = read_root(root, out);
    rk_json_free(root);
    return st;
}

rk_status rk_manifest_read(const char *path, rk_manifest *out) {
    char *text;
    size_t n;
    rk_status st = rk_read_file(path, &text, &n);
    if (st) return st;
    st = rk_manifest_parse(text, n, out);
    if (st) rk_fail(st, "%s: %s", path, rk_error_message());
    rk_free(text, n + 1);
    return st;
}

/* ---- writing ------------------------------------------------------------------------ */
typedef struct jb { rk_json *o; bool ok; } jb;

static void put(jb *b, const char *key, rk_json *v) {
    if (b->ok && !rk_json_set(b->o, key, v)) b->ok = false;
    else if (!b->ok) rk_json_free(v);
}
static void put_str(jb *b, const char *key, const char *s) { put(b, key, rk_json_str(s)); }
static void put_int(jb *b, const char *key, int64_t v) { put(b, key, rk_json_int(v)); }

static rk_json *int_list(const uint64_t *v, uint32_t n) {
    rk_json *a = rk_json_array();
    for (uint32_t i = 0; a && i < n; i++)
        if (!rk_json_push(a, rk_json_int((int64_t)v[i]))) { rk_json_free(a); return NULL; }
    return a;
}

static rk_json *build_json(const rk_manifest *m) {
    jb b = {rk_json_object(), true};
    if (!b.o) return NULL;
    put_str(&b, "schema", RK_MANIFEST_SCHEMA);
    put_str(&b, "kind", m->kind);
    put_str(&b, "kernel_name", m->kernel_name);
    if (m->target[0]) put_str(&b, "target", m->target);
    put_str(&b, "binary", m->binary);
    put_str(&b, "binary_kind", m->binary_kind[0] ? m->binary_kind : "hsaco");
    put_int(&b, "binary_bytes", (int64_t)m->binary_bytes);
    if (m->binary_hash[0]) put_str(&b, "binary_hash", m->binary_hash);
    if (!m->binary_kind[0] || !strcmp(m->binary_kind, "hsaco")) {   /* upstream readers */
        put_str(&b, "hsaco", m->binary);
        put_int(&b, "hsaco_bytes", (int64_t)m->binary_bytes);
    }
    if (m->ir[0]) put_str(&b, "ir", m->ir);
    if (m->llvm[0]) put_str(&b, "llvm", m->llvm);
    put_int(&b, "threads_per_block", m->threads_per_block);
    if (m->dyn_smem_min) put_int(&b, "dyn_smem_min", m->dyn_smem_min);
    if ((uint64_t)m->cluster_dims[0] * m->cluster_dims[1] * m->cluster_dims[2] > 1) {
        const uint64_t cd[3] = {m->cluster_dims[0], m->cluster_dims[1], m->cluster_dims[2]};
        put(&b, "cluster_dims", int_list(cd, 3));
    }
    if (m->cooperative) put(&b, "cooperative", rk_json_bool(true));   /* written only when set */
    rk_json *args = rk_json_array();
    for (uint32_t i = 0; args && i < m->nargs; i++) {
        rk_json *e = rk_json_object();
        bool ok = e && rk_json_set(e, "name", rk_json_str(m->args[i].name)) &&
                  rk_json_set(e, "type", rk_json_str(m->args[i].type)) &&
                  rk_json_set(e, "size_bytes", rk_json_int(m->args[i].size_bytes));
        if (!ok || !rk_json_push(args, e)) {
            if (!ok) rk_json_free(e);
            rk_json_free(args);
            args = NULL;
        }
    }
    put(&b, "args_signature", args);
    put_int(&b, "sig_has_bytes", m->sig_has_bytes);
    put_int(&b, "warmup_iters", m->warmup_iters);
    put_int(&b, "timed_iters", m->timed_iters);
    rk_json *t = rk_json_object();
    if (t) {
        rk_json_set(t, "build", rk_json_num(m->timing_ms.build));
        rk_json_set(t, "passes", rk_json_num(m->timing_ms.passes));
        rk_json_set(t, "lower", rk_json_num(m->timing_ms.lower));
        rk_json_set(t, "compile", rk_json_num(m->timing_ms.compile));
        rk_json_set(t, "link", rk_json_num(m->timing_ms.link));
        rk_json_set(t, "total", rk_json_num(m->timing_ms.total));
    }
    put(&b, "timing_ms", t);
    put(&b, "atoms", rk_json_array());
    put_str(&b, "notes", m->notes);
    put(&b, "ck_dependency", rk_json_bool(false));
    put(&b, "ir_authored", rk_json_bool(true));
    put_str(&b, "engine_build_id", m->engine_build_id);
    put_str(&b, "engine_version", m->engine_version);
    rk_json *pol = rk_json_object();
    if (pol) rk_json_set(pol, "scheduler_strategy", rk_json_null());
    put(&b, "codegen_policy", pol);
    put_str(&b, "codegen_policy_key", m->codegen_policy_key[0] ? m->codegen_policy_key : "default");
    if (m->op[0]) put_str(&b, "op", m->op);
    if (m->dtype[0]) put_str(&b, "dtype", m->dtype);
    if (m->ndefault_shape) put(&b, "default_shape", int_list(m->default_shape, m->ndefault_shape));
    if (m->ndefault_shape && m->default_shape_dims[0][0]) {
        rk_json *names = rk_json_array();
        for (uint32_t i = 0; names && i < m->ndefault_shape; i++)
            if (!rk_json_push(names, rk_json_str(m->default_shape_dims[i]))) { rk_json_free(names); names = NULL; }
        put(&b, "default_shape_dims", names);
    }
    if (m->elems_per_block) put_int(&b, "elems_per_block", (int64_t)m->elems_per_block);
    if (m->is_binary >= 0) put_int(&b, "is_binary", m->is_binary);
    if (m->block_m) put_int(&b, "block_m", m->block_m);
    if (m->block_n) put_int(&b, "block_n", m->block_n);
    if (m->grid_explicit[0]) {
        uint64_t g[3] = {m->grid_explicit[0], m->grid_explicit[1], m->grid_explicit[2]};
        put(&b, "grid_explicit", int_list(g, 3));
    }
    if (m->has_eps) put(&b, "eps", rk_json_num(m->eps));
    if (m->family[0]) put_str(&b, "family", m->family);
    if (m->nspec) {
        rk_json *s = rk_json_object();
        for (uint32_t i = 0; s && i < m->nspec; i++)
            if (!rk_json_set(s, m->spec[i].key, rk_json_str(m->spec[i].value))) { rk_json_free(s); s = NULL; }
        put(&b, "spec", s);
    }
    if (m->nvariants) put(&b, "variants", variants_json(m));
    if (!b.ok) { rk_json_free(b.o); return NULL; }
    return b.o;
}

char *rk_manifest_text(const rk_manifest *m) {
    rk_json *j = build_json(m);
    if (!j) { rk_fail(RK_ERR_NOMEM, "manifest: out of memory"); return NULL; }
    char *s = rk_json_write(j, true);
    rk_json_free(j);
    return s;
}

rk_status rk_manifest_write(const rk_manifest *m, const char *dir) { return rk_manifest_write_as(m, dir, "manifest.json"); }

rk_status rk_manifest_write_as(const rk_manifest *m, const char *dir, const char *file) {
    rk_status st0 = check_file_name("file", file);
    if (st0) return st0;
    char *text = rk_manifest_text(m);
    if (!text) return rk_fail(RK_ERR_NOMEM, "manifest: %s", rk_error_message());
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    rk_status st = rk_write_file_atomic(path, text, strlen(text));
    rk_string_free(text);
    return st;
}

/* EF_AMDGPU_MACH of the AMD targets rocke builds for (LLVM BinaryFormat/ELF.h). */
static int amdgpu_mach(const char *target) {
    static const struct { const char *name; int mach; } t[] = {{"gfx90a", 0x3f}, {"gfx942", 0x4c}, {"gfx950", 0x4f}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(target, t[i].name)) return t[i].mach;
    return -1;
}

static bool is_ident_char(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '.';
}

/* Does `name` occur in the bytes as a whole symbol (not inside a longer one)? */
static bool holds_symbol(const uint8_t *d, size_t n, const char *name) {
    size_t k = strlen(name);
    for (size_t i = 0; k && i + k <= n; i++)
        if (d[i] == (uint8_t)name[0] && !memcmp(d + i, name, k) && (i == 0 || !is_ident_char(d[i - 1])) &&
            (i + k == n || !is_ident_char(d[i + k])))
            return true;
    return false;
}

/* The PTX ".target" architecture (first token after ".target "), "" when none. */
static void ptx_target(const uint8_t *d, size_t n, char out[32]) {
    out[0] = 0;
    static const char key[] = ".target";
    for (size_t i = 0; i + sizeof key <= n; i++) {
        if (memcmp(d + i, key, sizeof key - 1) || (d[i + sizeof key - 1] != ' ' && d[i + sizeof key - 1] != '\t'))
            continue;
        size_t j = i + sizeof key - 1, o = 0;
        while (j < n && (d[j] == ' ' || d[j] == '\t')) j++;
        while (j < n && o < 31 && is_ident_char(d[j])) out[o++] = (char)d[j++];
        out[o] = 0;
        return;
    }
}

/* binary_kind against the target's vendor, then the bytes against binary_kind
 * (an AMDGPU ELF for the target's processor, PTX text for the target, an
 * NVIDIA ELF, ckdsl.ir text), then the kernel symbol in them. */
static rk_status check_binary_form(const rk_manifest *m, const char *path, const uint8_t *d, size_t n) {
    const char *kind = m->binary_kind[0] ? m->binary_kind : "hsaco";
    const char *t = m->target;
    bool amd = !strncmp(t, "gfx", 3), nv = !strncmp(t, "sm_", 3);
    bool amd_kind = !strcmp(kind, "hsaco"), nv_kind = !strcmp(kind, "ptx") || !strcmp(kind, "cubin");
    if ((amd && nv_kind) || (nv && amd_kind))
        return rk_fail(RK_ERR_INVALID, "manifest field 'binary_kind' is '%s' but target %s (%s) runs %s", kind, t,
                       amd ? "AMD" : "NVIDIA", amd ? "hsaco or ir" : "ptx, cubin or ir");
    bool elf = n >= 52 && !memcmp(d, "\177ELF", 4);
    unsigned machine = elf ? (unsigned)(d[18] | d[19] << 8) : 0;
    if (amd_kind) {
        if (!elf || d[4] != 2 || machine != 224)
            return rk_fail(RK_ERR_INVALID, "binary '%s' is not an AMDGPU code object (a 64-bit ELF with e_machine "
                           "224) although the manifest's binary_kind is 'hsaco'", path);
        int want = amdgpu_mach(t), mach = n >= 64 ? d[48] : -1;   /* e_flags low byte: EF_AMDGPU_MACH */
        if (want >= 0 && mach != want)
            return rk_fail(RK_ERR_INVALID, "binary '%s' is code for processor 0x%02x (EF_AMDGPU_MACH) but the "
                           "manifest's target %s is 0x%02x", path, (unsigned)mach, t, (unsigned)want);
    } else if (!strcmp(kind, "cubin")) {
        if (!elf || machine != 190)
            return rk_fail(RK_ERR_INVALID, "binary '%s' is not a cubin (an ELF with e_machine 190, EM_CUDA) although "
                           "the manifest's binary_kind is 'cubin'", path);
    } else if (!strcmp(kind, "ptx")) {
        char pt[32];
        ptx_target(d, n, pt);
        if (elf || !pt[0])
            return rk_fail(RK_ERR_INVALID, "binary '%s' is not PTX text (no '.target' line) although the manifest's "
                           "binary_kind is 'ptx'", path);
        if (t[0] && strcmp(pt, t))
            return rk_fail(RK_ERR_INVALID, "binary '%s' is PTX for .target %s but the manifest's target is %s", path,
                           pt, t);
    } else if (n < 11 || memcmp(d, "ckdsl.ir v1", 11)) {   /* "ir" */
        return rk_fail(RK_ERR_INVALID, "binary '%s' is not ckdsl.ir text although the manifest's binary_kind is "
                       "'ir'", path);
    }
    if (m->kernel_name[0] && !holds_symbol(d, n, m->kernel_name))
        return rk_fail(RK_ERR_INVALID, "binary '%s' does not define kernel '%s' (the manifest's kernel_name)", path,
                       m->kernel_name);
    return RK_OK;
}

rk_status rk_manifest_check_binary(const rk_manifest *m, const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, m->binary);
    char *data;
    size_t n;
    rk_status st = rk_read_file(path, &data, &n);
    if (st) return rk_fail(st, "binary '%s' named by the manifest cannot be read: %s", path, rk_error_message());
    if (m->binary_bytes && n != m->binary_bytes)
        st = rk_fail(RK_ERR_INVALID, "binary '%s' does not match its manifest: it has %zu bytes, the manifest says %llu",
                     path, n, (unsigned long long)m->binary_bytes);
    char h[40];
    if (!st && m->binary_hash[0]) {
        rk_manifest_hash(data, n, h);
        if (strcmp(h, m->binary_hash))
            st = rk_fail(RK_ERR_INVALID, "binary '%s' does not match its manifest: hash %s, the manifest says %s",
                         path, h, m->binary_hash);
    }
    if (!st) st = check_binary_form(m, path, (const uint8_t *)data, n);
    rk_free(data, n + 1);
    return st;
}

/* cooperative lives in sig_has_bytes's padding: the layout bindings mirror is unchanged */
_Static_assert(offsetof(rk_manifest, warmup_iters) == offsetof(rk_manifest, sig_has_bytes) + 4,
               "rk_manifest.cooperative must not move warmup_iters");
size_t rk_manifest_struct_size(void) { return sizeof(rk_manifest); }
