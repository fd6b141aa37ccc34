/* rocke — host problems for verification: buffers in device format sized
 * from the signature, inputs filled from a seed (splitmix64; ranges chosen
 * per family so results stay in range and divisors away from 0), and one
 * problem re-aimed at another instance of the same math (rk_problem_retarget).
 * The comparison with the reference: problem_check.c. Layer: kernels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kern_int.h"
#include "../base/fp.h"
#include "../base/fp8.h"

/* ---- element access ------------------------------------------------------------------ */
static rk_fp8_format fp8_format(rk_scalar t) {
    return t == RK_S_FP8E4M3FNUZ ? RK_FP8_E4M3_FNUZ : t == RK_S_BF8E5M2 ? RK_FP8_E5M2
         : t == RK_S_BF8E5M2FNUZ ? RK_FP8_E5M2_FNUZ : RK_FP8_E4M3;
}

/* int8 as the device's saturating conversion: rint (half even), clamp. */
static double round_i8(double v) {
    double r = nearbyint(v);
    return isnan(r) ? 0.0 : r < -128 ? -128 : r > 127 ? 127 : r;
}

double kn_get(const rk_host_buf *b, uint64_t i) {
    switch (b->param->type) {
    case RK_S_F16: return rk_f16_to_f32(((const uint16_t *)b->data)[i]);
    case RK_S_BF16: return rk_bf16_to_f32(((const uint16_t *)b->data)[i]);
    case RK_S_F32: return ((const float *)b->data)[i];
    case RK_S_I32: return ((const int32_t *)b->data)[i];
    case RK_S_I64: return (double)((const int64_t *)b->data)[i];
    case RK_S_I8: return ((const int8_t *)b->data)[i];
    case RK_S_FP8E4M3: case RK_S_FP8E4M3FNUZ: case RK_S_BF8E5M2: case RK_S_BF8E5M2FNUZ:
        return rk_fp8_to_f32(((const uint8_t *)b->data)[i], fp8_format(b->param->type));
    default: rk_bug("kn_get: buffer type is not f16, bf16, f32, i32, i64, i8, fp8 e4m3 or e5m2");
    }
}

void kn_set(rk_host_buf *b, uint64_t i, double v) {
    switch (b->param->type) {
    case RK_S_F16: ((uint16_t *)b->data)[i] = rk_f64_to_f16(v); return;
    case RK_S_BF16: ((uint16_t *)b->data)[i] = rk_f64_to_bf16(v); return;
    case RK_S_F32: ((float *)b->data)[i] = (float)v; return;
    case RK_S_I32: ((int32_t *)b->data)[i] = (int32_t)floor(v); return;   /* random indices: [lo, hi) */
    case RK_S_I64: ((int64_t *)b->data)[i] = (int64_t)floor(v); return;
    case RK_S_I8: ((int8_t *)b->data)[i] = (int8_t)round_i8(v); return;
    case RK_S_FP8E4M3: case RK_S_FP8E4M3FNUZ: case RK_S_BF8E5M2: case RK_S_BF8E5M2FNUZ:
        ((uint8_t *)b->data)[i] = rk_f64_to_fp8(v, fp8_format(b->param->type));
        return;
    default: rk_bug("kn_set: buffer type is not f16, bf16, f32, i32, i64, i8, fp8 e4m3 or e5m2");
    }
}

double kn_round(rk_scalar t, double v) {
    switch (t) {
    case RK_S_F16: return rk_f16_to_f32(rk_f64_to_f16(v));
    case RK_S_BF16: return rk_bf16_to_f32(rk_f64_to_bf16(v));
    case RK_S_F32: return (double)(float)v;
    case RK_S_I8: return round_i8(v);
    case RK_S_FP8E4M3: case RK_S_FP8E4M3FNUZ: case RK_S_BF8E5M2: case RK_S_BF8E5M2FNUZ:
        return rk_fp8_to_f32(rk_f64_to_fp8(v, fp8_format(t)), fp8_format(t));
    default: return v;
    }
}

double kn_ulp(rk_scalar t, double v) {
    int mant, emin;
    switch (t) {
    case RK_S_F16: mant = 10; emin = -14; break;
    case RK_S_BF16: mant = 7; emin = -126; break;
    case RK_S_F32: mant = 23; emin = -126; break;
    case RK_S_FP8E4M3: mant = 3; emin = -6; break;
    case RK_S_FP8E4M3FNUZ: mant = 3; emin = -7; break;
    case RK_S_BF8E5M2: mant = 2; emin = -14; break;
    case RK_S_BF8E5M2FNUZ: mant = 2; emin = -15; break;
    case RK_S_I8: return 1;
    default: return 0;
    }
    if (!isfinite(v)) return 0;
    int e;
    frexp(fabs(v), &e);            /* |v| = f * 2^e, f in [0.5, 1) */
    e -= 1;
    if (e < emin) e = emin;
    return ldexp(1.0, e - mant);
}

int kn_buf_index(const rk_problem *p, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, name)) return (int)i;
    return -1;
}

double kn_scalar(const rk_problem *p, const char *name) {
    int i = kn_buf_index(p, name);
    return i >= 0 && !p->sig.p[i].ptr ? p->scalar[i] : 0.0;
}

const rk_host_buf *kn_buf(const rk_problem *p, const char *name) {
    int i = kn_buf_index(p, name);
    return i >= 0 && p->sig.p[i].ptr ? &p->buf[i] : NULL;
}

/* An in-out buffer holds its initial contents right after its `bytes`
 * (one allocation of twice the size), kept for the reference. */
static size_t alloc_bytes(const rk_host_buf *b) {
    size_t n = b->bytes ? b->bytes : 1;
    return b->param && b->param->role == RK_KP_INOUT ? 2 * n : n;
}

rk_host_buf kn_input(const rk_problem *p, const char *name) {
    const rk_host_buf *b = kn_buf(p, name);
    RK_ASSERT(b, "kn_input: no such buffer");
    rk_host_buf in = *b;
    if (b->param->role == RK_KP_INOUT) in.data = (char *)b->data + (b->bytes ? b->bytes : 1);
    return in;
}

/* ---- random inputs --------------------------------------------------------------------- */
uint64_t kn_splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double uniform(uint64_t *s) { return (double)(kn_splitmix(s) >> 11) * 0x1.0p-53; }

/* Element j of a buffer is draw j of a splitmix stream that starts at rng:
 * the stream's state after j steps is rng + j * SPLITMIX_STEP, so chunks
 * fill in parallel and the values equal a sequential fill's. */
#define SPLITMIX_STEP 0x9e3779b97f4a7c15ull
#define FILL_GRAIN ((uint64_t)1 << 18)
typedef struct fill_job {
    rk_host_buf *b;
    uint64_t rng;
    double lo, hi, away;
} fill_job;

static void fill_chunk(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    (void)chunk;
    const fill_job *f = ctx;
    uint64_t rng = f->rng + lo * SPLITMIX_STEP;
    for (uint64_t j = lo; j < hi; j++) {
        double v = f->lo + (f->hi - f->lo) * uniform(&rng);
        if (f->away > 0 && fabs(v) < f->away) v = v < 0 ? -f->away - fabs(v) : f->away + v;
        if (v == 0.0) v = 0.25;           /* no signed zeros: max/min/relu stay bit-exact */
        kn_set(f->b, j, v);
    }
}

/* Elements a pointer parameter addresses: the product of its layout's
 * dimensions. Fails naming a layout dimension the family does not have. */
static rk_status layout_count(const kn_family *fam, const rk_instance *in, const rk_shape *s, const rk_kparam *kp,
                              uint64_t *out) {
    uint64_t n = 1;
    for (const char *d = kp->dims ? kp->dims : ""; *d;) {
        size_t len = strcspn(d, ",");
        uint64_t e = 0;
        if (d[0] >= '1' && d[0] <= '9' && strspn(d, "0123456789") == len) e = strtoull(d, NULL, 10);   /* a count */
        /* "B+1": one more than a dimension (offset arrays such as cu_seqlens) */
        size_t nlen = len > 2 && !strncmp(d + len - 2, "+1", 2) ? len - 2 : len;
        /* "Skv/16": a dimension divided by a count, rounded up (pages of a paged cache) */
        const char *slash = memchr(d, '/', len);
        uint64_t per = slash ? strtoull(slash + 1, NULL, 10) : 1;
        if (slash) nlen = (size_t)(slash - d);
        for (uint32_t i = 0; i < fam->ndims && per; i++)
            if (strlen(fam->dims[i].name) == nlen && !strncmp(fam->dims[i].name, d, nlen))
                e = slash ? (s->dim[i] + per - 1) / per : s->dim[i] + (nlen != len);
        if (!e && fam->extent) e = fam->extent(in, s, d, len);
        if (!e)
            return rk_fail(RK_ERR_INVALID, "%s: parameter %s has layout '%s' but the family has no dimension '%.*s'",
                           fam->name, kp->name, kp->dims, (int)len, d);
        if (n > UINT64_MAX / e) return rk_fail(RK_ERR_INVALID, "%s: parameter %s is too large", fam->name, kp->name);
        n *= e;
        d += len + (d[len] == ',');
    }
    *out = n;
    return RK_OK;
}

static const rk_scalar_decl *scalar_decl(const kn_family *fam, const char *name) {
    for (uint32_t i = 0; i < fam->nscalars; i++)
        if (!strcmp(fam->scalars[i].name, name)) return &fam->scalars[i];
    return NULL;
}

/* "M (i32, dimension M), eps (f32, given, default 1e-05)" */
static void scalar_list(const kn_family *fam, bool given_only, char *buf, size_t n) {
    static const char *const src[] = {"dimension", "derived", "given"};
    size_t off = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < fam->nscalars && off < n; i++) {
        const rk_scalar_decl *d = &fam->scalars[i];
        if (given_only && d->src != RK_SC_GIVEN) continue;
        off += (size_t)snprintf(buf + off, n - off, "%s%s (%s, %s)", off ? ", " : "", d->name,
                                rk_scalar_name(d->type), src[d->src]);
    }
    if (!buf[0]) snprintf(buf, n, "none");
}

static double scalar_value(const kn_family *fam, const rk_instance *in, const rk_shape *s, const rk_scalar_decl *d) {
    switch (d->src) {
    case RK_SC_DIM: return (double)kn_dim(fam, s, d->dim);
    case RK_SC_DERIVED: return d->derive(in, s);
    case RK_SC_GIVEN: return d->def;
    }
    return 0;
}

static rk_status fill_inputs(rk_problem *p, const kn_family *fam) {
    uint64_t rng = p->seed;
    for (uint32_t i = 0; i < p->sig.n; i++) {
        const rk_kparam *kp = &p->sig.p[i];
        rk_host_buf *b = &p->buf[i];
        b->param = kp;
        if (kp->role == RK_KP_TENSORMAP) continue;   /* encoded by the launcher (rk_problem_tensormap) */
        if (!kp->ptr) {
            const rk_scalar_decl *d = scalar_decl(fam, kp->name);
            if (!d) {
                char legal[512];
                scalar_list(fam, false, legal, sizeof legal);
                return rk_fail(RK_ERR_INVALID, "%s: kernel parameter '%s' is not a scalar the family declares "
                               "(declared: %s)", fam->name, kp->name, legal);
            }
            if (d->type != kp->type)
                return rk_fail(RK_ERR_INVALID, "%s: scalar '%s' is declared %s but the kernel takes %s", fam->name,
                               kp->name, rk_scalar_name(d->type), rk_scalar_name(kp->type));
            p->scalar[i] = scalar_value(fam, &p->inst, &p->shape, d);
            continue;
        }
        rk_status st = layout_count(fam, &p->inst, &p->shape, kp, &b->count);
        if (st) return st;
        b->bytes = (size_t)b->count * rk_tile_elem_bytes(kp->type);
        b->data = rk_calloc(alloc_bytes(b), 1);
        if (!b->data) return rk_fail(RK_ERR_NOMEM, "out of memory for %s (%zu bytes)", kp->name, b->bytes);
        if (kp->role != RK_KP_IN && kp->role != RK_KP_INOUT) continue;
        fill_job f = {.b = b, .rng = rng, .lo = -4.0, .hi = 4.0};
        if (fam->input_range) fam->input_range(&p->inst, kp, &f.lo, &f.hi, &f.away);
        rk_par_for(b->count, FILL_GRAIN, fill_chunk, &f);
        rng += b->count * SPLITMIX_STEP;   /* where one sequential stream over the buffers would be */
    }
    return RK_OK;
}

rk_status rk_problem_init(rk_problem *p, const rk_instance *in, const rk_shape *s, uint64_t seed) {
    memset(p, 0, sizeof *p);
    rk_status st = rk_instance_check_shape(in, s);
    if (st) return st;
    const kn_family *fam = kn_family_of(in->family);
    p->inst = *in;
    p->shape = *s;
    p->seed = seed;
    rk_instance_signature(in, &p->sig);
    if ((st = fill_inputs(p, fam))) {
        rk_problem_free(p);
        return st;
    }
    if (fam->fix_inputs) fam->fix_inputs(p);
    for (uint32_t i = 0; i < p->sig.n; i++)   /* the initial contents of in-out buffers, for the reference */
        if (p->sig.p[i].ptr && p->sig.p[i].role == RK_KP_INOUT)
            memcpy((char *)p->buf[i].data + alloc_bytes(&p->buf[i]) / 2, p->buf[i].data, p->buf[i].bytes);
    return RK_OK;
}

rk_status rk_problem_groups_shape(const rk_instance *in, const rk_gemm_group *g, uint32_t n, rk_shape *out) {
    const kn_family *fam = kn_family_find(in->family);
    if (!fam) return rk_fail(RK_ERR_INVALID, "rk_problem_groups_shape: family id %d is not registered", (int)in->family);
    if (!fam->group_shape)
        return rk_fail(RK_ERR_INVALID, "%s: the problem is a shape, not a group list (grouped_gemm takes --groups)",
                       fam->name);
    return fam->group_shape(in, g, n, out);
}

rk_status rk_problem_init_groups(rk_problem *p, const rk_instance *in, const rk_gemm_group *g, uint32_t n,
                                 uint64_t seed) {
    memset(p, 0, sizeof *p);
    rk_shape s;
    rk_status st = rk_problem_groups_shape(in, g, n, &s);
    if (!st) st = rk_problem_init(p, in, &s, seed);
    if (!st) kn_family_of(in->family)->group_fill(p, g);   /* the list's table over the default one */
    return st;
}

void rk_problem_free(rk_problem *p) {
    for (uint32_t i = 0; i < RK_KSIG_MAX; i++)
        if (p->buf[i].data) rk_free(p->buf[i].data, alloc_bytes(&p->buf[i]));
    memset(p->buf, 0, sizeof p->buf);
}

rk_status rk_problem_set_scalar(rk_problem *p, const char *name, double value) {
    const kn_family *fam = kn_family_of(p->inst.family);
    const rk_scalar_decl *d = name ? scalar_decl(fam, name) : NULL;
    if (!d || d->src != RK_SC_GIVEN) {
        char legal[512];
        scalar_list(fam, true, legal, sizeof legal);
        return rk_fail(RK_ERR_INVALID, "%s: '%s' is not a scalar to give%s (given scalars: %s)", fam->name,
                       name ? name : "", d ? ": it follows from the shape" : "", legal);
    }
    if (!isfinite(value)) return rk_fail(RK_ERR_INVALID, "%s: scalar %s must be finite", fam->name, name);
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!p->sig.p[i].ptr && !strcmp(p->sig.p[i].name, name)) p->scalar[i] = value;
    return RK_OK;
}

rk_status rk_problem_scalar(const rk_problem *p, uint32_t i, rk_scalar_value *out) {
    if (i >= p->sig.n || p->sig.p[i].ptr)
        return rk_fail(RK_ERR_INVALID, "rk_problem_scalar: entry %u is not a scalar parameter", i);
    double v = p->scalar[i];
    memset(out, 0, sizeof *out);
    switch (p->sig.p[i].type) {
    case RK_S_I32:
        if (v < INT32_MIN || v > INT32_MAX)
            return rk_fail(RK_ERR_INVALID, "scalar %s = %.17g does not fit i32", p->sig.p[i].name, v);
        out->i32 = (int32_t)v;
        return RK_OK;
    case RK_S_I64: out->i64 = (int64_t)v; return RK_OK;
    case RK_S_F32: out->f32 = (float)v; return RK_OK;
    default: return rk_fail(RK_ERR_INVALID, "scalar %s has type %s (legal: i32, i64, f32)", p->sig.p[i].name,
                            rk_scalar_name(p->sig.p[i].type));
    }
}

rk_status rk_problem_tensormap(const rk_problem *p, uint32_t i, rk_problem_tmap *out) {
    memset(out, 0, sizeof *out);
    const kn_family *fam = kn_family_of(p->inst.family);
    if (i >= p->sig.n || p->sig.p[i].role != RK_KP_TENSORMAP || !fam->tensormap_box)
        return rk_fail(RK_ERR_INVALID, "rk_problem_tensormap: entry %u is not a tensormap parameter", i);
    const rk_kparam *kp = &p->sig.p[i];
    rk_problem_tmap_nd nd;
    if (fam->tensormap_nd && fam->tensormap_nd(p, kp, &nd))
        return rk_fail(RK_ERR_INVALID, "rk_problem_tensormap: entry %u (%s) is a %u-D map: rk_problem_tensormap_nd "
                       "describes it", i, kp->name, nd.rank);
    int b = kn_buf_index(p, kp->dims ? kp->dims : "");
    RK_ASSERT(b >= 0 && p->sig.p[b].ptr, "a tensormap entry names a pointer parameter of its signature");
    const char *lay = p->sig.p[b].dims;
    const char *inner = strrchr(lay, ',');
    uint64_t total = p->buf[b].count;
    out->buf = (uint32_t)b;
    out->elem = p->sig.p[b].type;
    out->cols = rk_problem_dim(p, inner ? inner + 1 : lay);
    out->rows = out->cols ? total / out->cols : 0;
    out->row_stride_bytes = out->cols * rk_tile_elem_bytes(out->elem);
    fam->tensormap_box(&p->inst, kp, &out->box_rows, &out->box_cols, &out->swizzle_bytes);
    return fam->tensormap_view ? fam->tensormap_view(p, kp, out) : RK_OK;
}

rk_status rk_problem_tensormap_nd(const rk_problem *p, uint32_t i, rk_problem_tmap_nd *out) {
    memset(out, 0, sizeof *out);
    const kn_family *fam = kn_family_of(p->inst.family);
    if (i >= p->sig.n || p->sig.p[i].role != RK_KP_TENSORMAP || !fam->tensormap_box)
        return rk_fail(RK_ERR_INVALID, "rk_problem_tensormap_nd: entry %u is not a tensormap parameter", i);
    if (fam->tensormap_nd && fam->tensormap_nd(p, &p->sig.p[i], out)) return RK_OK;
    rk_problem_tmap t;
    rk_status st = rk_problem_tensormap(p, i, &t);
    if (st) return st;
    *out = (rk_problem_tmap_nd){.buf = t.buf, .elem = t.elem, .rank = 2, .dims = {t.cols, t.rows},
                                .strides_bytes = {t.row_stride_bytes}, .box = {t.box_cols, t.box_rows},
                                .elem_strides = {1, 1}, .swizzle_bytes = t.swizzle_bytes};
    return RK_OK;
}

rk_status rk_problem_check_inputs(const rk_problem *p) {
    const kn_family *fam = kn_family_of(p->inst.family);
    return fam->check_inputs ? fam->check_inputs(p) : RK_OK;
}

void rk_problem_cost(const rk_problem *p, double *bytes, double *flops) {
    const kn_family *fam = kn_family_of(p->inst.family);
    if (fam->problem_cost) fam->problem_cost(p, bytes, flops);
    else rk_instance_cost(&p->inst, &p->shape, bytes, flops);
}

uint64_t rk_problem_dim(const rk_problem *p, const char *name) {
    int i = rk_family_dim_index(p->inst.family, name);
    if (i >= 0) return p->shape.dim[i];
    const kn_family *fam = kn_family_of(p->inst.family);
    return fam->extent ? fam->extent(&p->inst, &p->shape, name, strlen(name)) : 0;
}

/* ---- one problem for several instances ------------------------------------------------ */
static bool same_text(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* The first way instance `in` would fill another problem than p holds: "" when none. */
static void problem_difference(const rk_problem *p, const rk_instance *in, const kn_family *fam, char *why, size_t n) {
    why[0] = 0;
    if (in->family != p->inst.family) { snprintf(why, n, "another family"); return; }
    if (!fam->shared_problem) { snprintf(why, n, "%s fills a problem per instance", fam->name); return; }
    for (uint32_t k = 0; k < fam->nknobs; k++) {
        char a[128], b[128];
        if (fam->knobs[k].perf) continue;
        rk_instance_get(&p->inst, fam->knobs[k].name, a, sizeof a);
        rk_instance_get(in, fam->knobs[k].name, b, sizeof b);
        if (strcmp(a, b)) { snprintf(why, n, "knob %s is %.40s, the problem's %.40s", fam->knobs[k].name, b, a); return; }
    }
    rk_ksig sig;
    rk_instance_signature(in, &sig);
    bool same = sig.n == p->sig.n;
    for (uint32_t i = 0; same && i < sig.n; i++) {
        const rk_kparam *x = &sig.p[i], *y = &p->sig.p[i];
        same = same_text(x->name, y->name) && x->ptr == y->ptr && x->type == y->type && x->role == y->role &&
               same_text(x->dims, y->dims);
    }
    if (!same) { snprintf(why, n, "another kernel signature"); return; }
    for (uint32_t i = 0; i < sig.n; i++) {
        const rk_kparam *kp = &sig.p[i];
        if (!kp->ptr && kp->role != RK_KP_TENSORMAP) {
            const rk_scalar_decl *d = scalar_decl(fam, kp->name);
            if (d && d->src != RK_SC_GIVEN && scalar_value(fam, in, &p->shape, d) != p->scalar[i]) {
                snprintf(why, n, "scalar %s differs", kp->name);
                return;
            }
        }
        if (!kp->ptr || (kp->role != RK_KP_IN && kp->role != RK_KP_INOUT) || !fam->input_range) continue;
        double lo[2] = {-4.0, -4.0}, hi[2] = {4.0, 4.0}, away[2] = {0, 0};
        fam->input_range(&p->inst, kp, &lo[0], &hi[0], &away[0]);
        fam->input_range(in, kp, &lo[1], &hi[1], &away[1]);
        if (lo[0] != lo[1] || hi[0] != hi[1] || away[0] != away[1]) {
            snprintf(why, n, "input %s has another range", kp->name);
            return;
        }
    }
}

rk_status rk_problem_reaim(rk_problem *p, const rk_instance *in) {
    const kn_family *fam = kn_family_find(in->family);
    if (!fam) return rk_fail(RK_ERR_INVALID, "rk_problem_retarget: family id %d is not registered", (int)in->family);
    rk_status st = rk_instance_check_shape(in, &p->shape);
    if (st) return st;
    char why[200];
    problem_difference(p, in, fam, why, sizeof why);
    if (why[0]) return rk_fail(RK_ERR_INVALID, "rk_problem_retarget: the instance needs its own inputs (%s)", why);
    p->inst = *in;
    return RK_OK;
}

rk_status rk_problem_retarget(rk_problem *p, const rk_instance *in) {
    rk_status st = rk_problem_reaim(p, in);
    if (st) return st;
    for (uint32_t i = 0; i < p->sig.n; i++) {   /* the outputs as rk_problem_init leaves them */
        rk_host_buf *b = &p->buf[i];
        rk_kparam_role role = p->sig.p[i].role;
        if (!p->sig.p[i].ptr || !b->data || role == RK_KP_IN) continue;
        if (role == RK_KP_INOUT) memcpy(b->data, (char *)b->data + alloc_bytes(b) / 2, b->bytes);
        else memset(b->data, 0, b->bytes);
    }
    return RK_OK;
}
