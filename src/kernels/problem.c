/* rocke — host problems for verification: buffers in device format sized
 * from the signature, inputs filled from a seed (splitmix64; ranges chosen
 * per family so results stay in range and divisors away from 0), and the
 * comparison of outputs against the family's double reference. Layer: kernels. */
#include <math.h>
#include <stdio.h>

#include "kern_int.h"
#include "../base/fp.h"

/* ---- element access ------------------------------------------------------------------ */
double kn_get(const rk_host_buf *b, uint64_t i) {
    switch (b->param->type) {
    case RK_S_F16: return rk_f16_to_f32(((const uint16_t *)b->data)[i]);
    case RK_S_BF16: return rk_bf16_to_f32(((const uint16_t *)b->data)[i]);
    case RK_S_F32: return ((const float *)b->data)[i];
    default: rk_bug("kn_get: buffer type is not f16, bf16 or f32");
    }
}

void kn_set(rk_host_buf *b, uint64_t i, double v) {
    switch (b->param->type) {
    case RK_S_F16: ((uint16_t *)b->data)[i] = rk_f64_to_f16(v); return;
    case RK_S_BF16: ((uint16_t *)b->data)[i] = rk_f64_to_bf16(v); return;
    case RK_S_F32: ((float *)b->data)[i] = (float)v; return;
    default: rk_bug("kn_set: buffer type is not f16, bf16 or f32");
    }
}

double kn_round(rk_scalar t, double v) {
    switch (t) {
    case RK_S_F16: return rk_f16_to_f32(rk_f64_to_f16(v));
    case RK_S_BF16: return rk_bf16_to_f32(rk_f64_to_bf16(v));
    case RK_S_F32: return (double)(float)v;
    default: return v;
    }
}

double kn_ulp(rk_scalar t, double v) {
    int mant, emin;
    switch (t) {
    case RK_S_F16: mant = 10; emin = -14; break;
    case RK_S_BF16: mant = 7; emin = -126; break;
    case RK_S_F32: mant = 23; emin = -126; break;
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

const rk_host_buf *kn_buf(const rk_problem *p, const char *name) {
    int i = kn_buf_index(p, name);
    return i >= 0 && p->sig.p[i].ptr ? &p->buf[i] : NULL;
}

/* ---- random inputs --------------------------------------------------------------------- */
static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double uniform(uint64_t *s) { return (double)(splitmix(s) >> 11) * 0x1.0p-53; }

/* Input range [lo, hi); `away` > 0 keeps |v| >= away (divisors). */
static void input_range(const rk_problem *p, const rk_kparam *kp, double *lo, double *hi, double *away) {
    *lo = -4.0; *hi = 4.0; *away = 0;
    switch (p->inst.family) {
    case RK_FAMILY_ELEMENTWISE:
        if (p->inst.u.ew.op == RK_EW_EXP2) { *lo = -8; *hi = 8; }
        if (p->inst.u.ew.op == RK_EW_SILU || p->inst.u.ew.op == RK_EW_GELU_TANH) { *lo = -6; *hi = 6; }
        if (p->inst.u.ew.op == RK_EW_DIV && !strcmp(kp->name, "B")) *away = 0.5;
        return;
    case RK_FAMILY_REDUCE: *lo = -1; *hi = 1; return;
    case RK_FAMILY_SOFTMAX: *lo = -8; *hi = 8; return;
    case RK_FAMILY_LAYERNORM:
    case RK_FAMILY_RMSNORM:
        if (!strcmp(kp->name, "Gamma")) { *lo = 0.5; *hi = 1.5; }
        else if (!strcmp(kp->name, "Beta")) { *lo = -0.5; *hi = 0.5; }
        else if (!strcmp(kp->name, "R")) { *lo = -1; *hi = 1; }
        else { *lo = -1.5; *hi = 2.5; }   /* x: mean ~0.5 exercises the centring */
        return;
    case RK_FAMILY_TRANSPOSE:
    case RK_FAMILY__COUNT: return;
    }
}

rk_status rk_problem_init(rk_problem *p, const rk_instance *in, uint64_t M, uint64_t N, uint64_t seed) {
    memset(p, 0, sizeof *p);
    p->inst = *in;
    p->M = in->family == RK_FAMILY_ELEMENTWISE ? 1 : M;
    p->N = N;
    p->seed = seed;
    p->eps = 1e-5f;
    rk_instance_signature(in, &p->sig);
    uint64_t rng = seed;
    for (uint32_t i = 0; i < p->sig.n; i++) {
        const rk_kparam *kp = &p->sig.p[i];
        rk_host_buf *b = &p->buf[i];
        b->param = kp;
        if (!kp->ptr) continue;
        b->count = kp->size == RK_KS_N ? p->N : kp->size == RK_KS_M ? p->M : p->M * p->N;
        b->bytes = (size_t)b->count * rk_tile_elem_bytes(kp->type);
        b->data = rk_calloc(b->bytes ? b->bytes : 1, 1);
        if (!b->data) {
            rk_problem_free(p);
            return rk_fail(RK_ERR_NOMEM, "out of memory for %s (%zu bytes)", kp->name, b->bytes);
        }
        if (kp->role != RK_KP_IN) continue;
        double lo, hi, away;
        input_range(p, kp, &lo, &hi, &away);
        for (uint64_t j = 0; j < b->count; j++) {
            double v = lo + (hi - lo) * uniform(&rng);
            if (away > 0 && fabs(v) < away) v = v < 0 ? -away - fabs(v) : away + v;
            if (v == 0.0) v = 0.25;           /* no signed zeros: max/min/relu stay bit-exact */
            kn_set(b, j, v);
        }
    }
    return RK_OK;
}

void rk_problem_free(rk_problem *p) {
    for (uint32_t i = 0; i < RK_KSIG_MAX; i++)
        if (p->buf[i].data) rk_free(p->buf[i].data, p->buf[i].bytes ? p->buf[i].bytes : 1);
    memset(p->buf, 0, sizeof p->buf);
}

double rk_problem_scalar(const rk_problem *p, const rk_kparam *kp) {
    if (!strcmp(kp->name, "M")) return (double)p->M;
    if (!strcmp(kp->name, "N")) return (double)p->N;
    if (!strcmp(kp->name, "eps")) return (double)p->eps;
    return 0;
}

/* ---- checking -------------------------------------------------------------------------- */
static void where(const rk_problem *p, const rk_host_buf *b, uint64_t i, char *buf, size_t n) {
    uint64_t cols = b->param->size == RK_KS_MN ? (p->inst.family == RK_FAMILY_TRANSPOSE ? p->M : p->N) : 0;
    if (cols) snprintf(buf, n, "%s[%llu,%llu]", b->param->name, (unsigned long long)(i / cols),
                       (unsigned long long)(i % cols));
    else snprintf(buf, n, "%s[%llu]", b->param->name, (unsigned long long)i);
}

rk_status rk_problem_check(const rk_problem *p, rk_problem_diff *out) {
    memset(out, 0, sizeof *out);
    double *want[RK_KSIG_MAX] = {0}, *tol[RK_KSIG_MAX] = {0};
    rk_status st = RK_OK;
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (p->sig.p[i].role != RK_KP_OUT) continue;
        size_t n = (size_t)(p->buf[i].count ? p->buf[i].count : 1);
        want[i] = rk_calloc(n, sizeof(double));
        tol[i] = rk_calloc(n, sizeof(double));
        if (!want[i] || !tol[i]) { st = rk_fail(RK_ERR_NOMEM, "out of memory for the reference"); goto done; }
    }
    kn_family_of(p->inst.family)->reference(p, want, tol);
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (!want[i]) continue;
        const rk_host_buf *b = &p->buf[i];
        for (uint64_t j = 0; j < b->count; j++) {
            double got = kn_get(b, j), w = kn_round(b->param->type, want[i][j]);
            double diff = (got == w || (isnan(got) && isnan(w))) ? 0.0 : fabs(got - w);
            if (isnan(diff)) diff = INFINITY;
            if (diff > out->max_abs_diff) out->max_abs_diff = diff;
            out->total++;
            if (diff > tol[i][j]) {
                if (!out->bad) {
                    char at[64];
                    where(p, b, j, at, sizeof at);
                    snprintf(out->first_bad, sizeof out->first_bad, "%s: got %.9g want %.9g (tol %.3g)", at, got, w,
                             tol[i][j]);
                }
                out->bad++;
            }
        }
    }
done:
    for (uint32_t i = 0; i < RK_KSIG_MAX; i++) {
        size_t n = (size_t)(p->buf[i].count ? p->buf[i].count : 1);
        if (want[i]) rk_free(want[i], n * sizeof(double));
        if (tol[i]) rk_free(tol[i], n * sizeof(double));
    }
    return st;
}
