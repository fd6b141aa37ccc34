/* rocke — the attention reference in double: for each (batch, query head,
 * query row) the visible keys' scores, their softmax and O, with a
 * tolerance per element from the 16-bit rounding of P (relative 2^-8 bf16,
 * 2^-11 f16, on the weighted values) plus the f32 accumulation and one ulp
 * of the output type; LSE with an absolute bound. Large problems are
 * checked on a sample of query rows. Layer: kernels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attention_int.h"

void kn_attn_visible(int mask, int64_t i, int64_t Sq, int64_t Skv, int64_t wl, int64_t wr, int64_t *lo,
                     int64_t *hi) {
    int64_t diag = i + Skv - Sq;
    *lo = 0;
    *hi = Skv;
    if (mask == RK_ATTN_MASK_CAUSAL) *hi = diag + 1 < Skv ? diag + 1 : Skv;
    if (mask == RK_ATTN_MASK_WINDOW) {
        if (wl >= 0 && diag - wl > 0) *lo = diag - wl;
        if (wr >= 0 && diag + wr + 1 < Skv) *hi = diag + wr + 1;
    }
    if (*hi < 0) *hi = 0;
}

/* Element (row, d) of a tensor view: batch b, head h, first row `start`. */
typedef struct view { const rk_host_buf *buf; uint64_t sb, sh, ss; } view;
static double at(const view *v, uint64_t b, uint64_t h, uint64_t row, uint64_t d) {
    return kn_get(v->buf, b * v->sb + h * v->sh + row * v->ss + d);
}
static view view_of(const rk_problem *p, const char *name, const char *t) {
    char n[16];
    view v = {kn_buf(p, name), 0, 0, 0};
    snprintf(n, sizeof n, "%s_sb", t);
    v.sb = (uint64_t)kn_scalar(p, n);
    snprintf(n, sizeof n, "%s_sh", t);
    v.sh = (uint64_t)kn_scalar(p, n);
    snprintf(n, sizeof n, "%s_ss", t);
    v.ss = (uint64_t)kn_scalar(p, n);
    return v;
}

/* One (batch, query head) pair per chunk, in parallel (rk_par_for): each writes only its own rows. */
typedef struct attn_ref {
    const rk_attention_spec *s;
    uint64_t Hq, Hkv, Sq, Skv, D, stride;
    const uint64_t *flat0;   /* per batch: the running row number of its first row */
    view q, kk, v, o;
    int io, il;
    const rk_host_buf *cuq, *cuk;
    double scale, prel;
    int64_t wl, wr;
    double **want, **tol;
} attn_ref;

static void attn_ref_pair(void *ctx, uint64_t chunk, uint64_t lo_pair, uint64_t hi_pair) {
    (void)chunk;
    const attn_ref *r = ctx;
    uint64_t D = r->D, Hq = r->Hq, Sq = r->Sq;
    int io = r->io, il = r->il;
    const view *o = &r->o;
    double *sc = malloc((2 * (r->Skv ? r->Skv : 1) + 2 * D) * sizeof *sc), *w = sc + (r->Skv ? r->Skv : 1),
           *acc = w + (r->Skv ? r->Skv : 1), *mag = acc + D;
    RK_ASSERT(sc, "attention reference: out of memory");
    for (uint64_t pair = lo_pair; pair < hi_pair; pair++) {
        uint64_t b = pair / Hq, h = pair % Hq, q0 = 0, k0 = 0, ql = Sq, kl = r->Skv;
        if (r->cuq) {
            q0 = (uint64_t)kn_get(r->cuq, b), ql = (uint64_t)kn_get(r->cuq, b + 1) - q0;
            k0 = (uint64_t)kn_get(r->cuk, b), kl = (uint64_t)kn_get(r->cuk, b + 1) - k0;
        }
        uint64_t hk = h / (Hq / r->Hkv), flat = r->flat0[b] + h * ql;
        for (uint64_t i = 0; i < ql; i++, flat++) {
            if (flat % r->stride) {
                for (uint64_t e = 0; e < D; e++) r->tol[io][b * o->sb + h * o->sh + (q0 + i) * o->ss + e] = INFINITY;
                if (il >= 0) r->tol[il][r->cuq ? (q0 + i) * Hq + h : (b * Hq + h) * Sq + i] = INFINITY;
                continue;
            }
            int64_t lo, hi;
            kn_attn_visible(r->s->mask, (int64_t)i, (int64_t)ql, (int64_t)kl, r->wl, r->wr, &lo, &hi);
            double mx = -INFINITY, sum = 0;
            for (int64_t j = lo; j < hi; j++) {
                double d = 0;
                for (uint64_t e = 0; e < D; e++) d += at(&r->q, b, h, q0 + i, e) * at(&r->kk, b, hk, k0 + j, e);
                sc[j] = d * r->scale;
                mx = sc[j] > mx ? sc[j] : mx;
            }
            for (int64_t j = lo; j < hi; j++) sum += exp(sc[j] - mx);
            for (uint64_t e = 0; e < D; e++) acc[e] = 0, mag[e] = 0;
            for (int64_t j = lo; j < hi; j++) {
                w[j] = exp(sc[j] - mx) / sum;
                for (uint64_t e = 0; e < D; e++) {
                    double x = at(&r->v, b, hk, k0 + j, e);
                    acc[e] += w[j] * x;
                    mag[e] += w[j] * fabs(x);
                }
            }
            for (uint64_t e = 0; e < D; e++) {
                uint64_t ix = b * o->sb + h * o->sh + (q0 + i) * o->ss + e;
                r->want[io][ix] = hi > lo ? acc[e] : 0;
                /* P rounded to 16 bits, f32 scores and sums, the output's ulp */
                r->tol[io][ix] = 2 * r->prel * mag[e] + 1e-5 * mag[e] + kn_ulp(r->s->dtype, acc[e]) + 1e-6;
            }
            if (il >= 0) {
                uint64_t ix = r->cuq ? (q0 + i) * Hq + h : (b * Hq + h) * Sq + i;
                r->want[il][ix] = hi > lo ? mx + log(sum) : -INFINITY;
                r->tol[il][ix] = hi > lo ? 1e-4 * (1 + fabs(mx)) : 0;
            }
        }
    }
    free(sc);
}

void kn_attn_reference(const rk_problem *p, double **want, double **tol) {
    const rk_attention_spec *s = &p->inst.u.attn;
    uint64_t B = rk_problem_dim(p, "B");
    attn_ref r = {.s = s, .Hq = rk_problem_dim(p, "Hq"), .Hkv = rk_problem_dim(p, "Hkv"), .Sq = rk_problem_dim(p, "Sq"),
                  .Skv = rk_problem_dim(p, "Skv"), .D = rk_problem_dim(p, "D"), .q = view_of(p, "Q", "q"),
                  .kk = view_of(p, "K", "k"), .v = view_of(p, "V", "v"), .o = view_of(p, "O", "o"),
                  .io = kn_buf_index(p, "O"), .il = kn_buf_index(p, "LSE"), .cuq = kn_buf(p, "cu_seqlens_q"),
                  .cuk = kn_buf(p, "cu_seqlens_k"), .scale = (double)(float)kn_scalar(p, "scale"),
                  .wl = (int64_t)kn_scalar(p, "window_left"), .wr = (int64_t)kn_scalar(p, "window_right"),
                  .prel = s->dtype == RK_S_BF16 ? 0x1p-8 : 0x1p-11, .want = want, .tol = tol};
    int io = r.io, il = r.il;
    /* untouched output elements (varlen rows past a sequence) stay 0 */
    for (uint64_t x = 0; x < p->buf[io].count; x++) want[io][x] = 0, tol[io][x] = 0;
    if (il >= 0)
        for (uint64_t x = 0; x < p->buf[il].count; x++) want[il][x] = 0, tol[il][x] = 0;
    /* past 2^30 multiply-adds the check takes every stride-th query row (odd, so the rows checked move
     * from head to head); the others get an infinite tolerance, which still fails a NaN */
    double work = (double)B * r.Hq * r.Sq * r.Skv * r.D;
    r.stride = work > 0x1p30 ? (uint64_t)ceil(work / 0x1p30) | 1 : 1;
    uint64_t *flat0 = malloc((B ? B : 1) * sizeof *flat0), flat = 0;
    RK_ASSERT(flat0, "attention reference: out of memory");
    for (uint64_t b = 0; b < B; b++) {
        flat0[b] = flat;
        flat += r.Hq * (r.cuq ? (uint64_t)kn_get(r.cuq, b + 1) - (uint64_t)kn_get(r.cuq, b) : r.Sq);
    }
    r.flat0 = flat0;
    rk_par_for(B * r.Hq, 1, attn_ref_pair, &r);
    free(flat0);
}
