/* rocke — shape variants of a row kernel built without a shape: one kernel
 * per shape class (split long rows, short, medium and wide cached rows) and
 * a looped kernel for every other shape, each with the ranges it serves, so
 * one manifest dispatches well across shapes (docs/kernels.md). Layer:
 * kernels. */
#include <string.h>

#include "kern_int.h"

static rk_row_knobs *row_knobs(rk_instance *in) {
    switch (in->family) {
    case RK_FAMILY_REDUCE: return &in->u.reduce.k;
    case RK_FAMILY_SOFTMAX: return &in->u.softmax.k;
    case RK_FAMILY_LAYERNORM: case RK_FAMILY_RMSNORM: return &in->u.norm.k;
    default: return NULL;
    }
}

static bool is_locked(const rk_instance *in, uint64_t locked, const char *knob) {
    uint32_t n;
    const rk_knob *kb = rk_family_knobs(in->family, &n);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(kb[i].name, knob)) return (locked >> i) & 1u;
    return false;
}

/* in with `knob` set to value and locked, unless the caller locked it. */
static void lock(rk_instance *in, uint64_t *locked, const char *knob, const char *value) {
    uint32_t ix;
    if (is_locked(in, *locked, knob)) return;
    if (rk_instance_set(in, knob, value, &ix) == RK_OK) *locked |= 1ull << ix;
}

static bool tuned(const rk_instance *in, const rk_target *t, uint64_t locked, uint64_t M, uint64_t N,
                  rk_instance *out) {
    rk_shape s;
    const uint64_t ext[2] = {M, N};
    *out = *in;
    if (rk_shape_default(in->family, &s) || rk_shape_update(in->family, &s, NULL, ext, 2, false)) return false;
    if (rk_instance_tune(out, t, &s, locked) || rk_instance_validate(out, t)) return false;
    return true;
}

uint32_t rk_instance_variants(const rk_instance *in, const rk_target *t, uint64_t locked, rk_instance *general,
                              rk_variant *out, uint32_t max) {
    rk_instance base = *in;
    if (!row_knobs(&base) || !t) return 0;
    uint64_t lk = locked;
    /* every variant takes any row length and any base */
    lock(&base, &lk, "split", "true");
    uint32_t n = 0;
    /* few long rows: split over blocks (rows fewer than compute units) */
    rk_instance v;
    uint64_t units = t->compute_units ? t->compute_units : 1;
    if (n < max && tuned(&base, t, lk, 1, 262144, &v) && row_knobs(&v)->slices > 1) {
        out[n] = (rk_variant){.tag = "split", .inst = v, .ndims = 2, .dim = {"M", "N"}, .lo = {1, 16384},
                              .hi = {units - 1, INT32_MAX}};
        n++;
    }
    /* cached rows of growing width: each serves the widths up to its capacity */
    static const struct { const char *tag; uint64_t N; } cached[] = {{"short", 64}, {"medium", 1024}, {"wide", 8192}};
    uint64_t from = 1;
    for (size_t i = 0; i < RK_COUNTOF(cached) && n < max; i++) {
        uint64_t l2 = lk;
        rk_instance one = base;
        lock(&one, &l2, "slices", "1");
        if (!tuned(&one, t, l2, 65536, cached[i].N, &v)) continue;
        uint64_t cap = kn_row_cap(row_knobs(&v));
        if (!cap || cap < from) continue;
        out[n] = (rk_variant){.tag = cached[i].tag, .inst = v, .ndims = 1, .dim = {"N"}, .lo = {from}, .hi = {cap}};
        n++;
        from = cap + 1;
    }
    /* the rest: looped rows, one kernel for any shape */
    if (general) {
        uint64_t l3 = lk;
        rk_instance any = base;
        lock(&any, &l3, "chunks", "0");
        lock(&any, &l3, "slices", "1");
        if (!tuned(&any, t, l3, 4096, 65536, general)) *general = any;
    }
    return n;
}
