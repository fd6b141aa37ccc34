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

void kn_attn_reference(const rk_problem *p, double **want, double **tol) {
    const rk_attention_spec *s = &p->inst.u.attn;
    uint64_t B = rk_problem_dim(p, "B"), Hq = rk_problem_dim(p, "Hq"), Hkv = rk_problem_dim(p, "Hkv"),
             Sq = rk_problem_dim(p, "Sq"), Skv = rk_problem_dim(p, "Skv"), D = rk_problem_dim(p, "D");
    view q = view_of(p, "Q", "q"), kk = view_of(p, "K", "k"), v = view_of(p, "V", "v"), o = view_of(p, "O", "o");
    int io = kn_buf_index(p, "O"), il = kn_buf_index(p, "LSE");
    const rk_host_buf *cuq = kn_buf(p, "cu_seqlens_q"), *cuk = kn_buf(p, "cu_seqlens_k");
    double scale = (double)(float)kn_scalar(p, "scale");
    int64_t wl = (int64_t)kn_scalar(p, "window_left"), wr = (int64_t)kn_scalar(p, "window_right");
    double prel = s->dtype == RK_S_BF16 ? 0x1p-8 : 0x1p-11;
    /* untouched output elements (varlen rows past a sequence) stay 0 */
    for (uint64_t x = 0; x < p->buf[io].count; x++) want[io][x] = 0, tol[io][x] = 0;
    if (il >= 0)
        for (uint64_t x = 0; x < p->buf[il].count; x++) want[il][x] = 0, tol[il][x] = 0;
    /* past 2^30 multiply-adds the check takes every stride-th query row (odd, so the rows checked move
     * from head to head); the others get an infinite tolerance, which still fails a NaN */
    double work = (double)B * Hq * Sq * Skv * D;
    uint64_t stride = work > 0x1p30 ? (uint64_t)ceil(work / 0x1p30) | 1 : 1, flat = 0;
    double *sc = malloc(Skv * sizeof *sc);
    RK_ASSERT(sc, "attention reference: out of memory");
    for (uint64_t b = 0; b < B; b++) {
        uint64_t q0 = 0, k0 = 0, ql = Sq, kl = Skv;
        if (cuq) {
            q0 = (uint64_t)kn_get(cuq, b), ql = (uint64_t)kn_get(cuq, b + 1) - q0;
            k0 = (uint64_t)kn_get(cuk, b), kl = (uint64_t)kn_get(cuk, b + 1) - k0;
        }
        for (uint64_t h = 0; h < Hq; h++) {
            uint64_t hk = h / (Hq / Hkv);
            for (uint64_t i = 0; i < ql; i++, flat++) {
                if (flat % stride) {
                    for (uint64_t e = 0; e < D; e++) tol[io][b * o.sb + h * o.sh + (q0 + i) * o.ss + e] = INFINITY;
                    if (il >= 0) tol[il][cuq ? (q0 + i) * Hq + h : (b * Hq + h) * Sq + i] = INFINITY;
                    continue;
                }
                int64_t lo, hi;
                kn_attn_visible(s->mask, (int64_t)i, (int64_t)ql, (int64_t)kl, wl, wr, &lo, &hi);
                double mx = -INFINITY, sum = 0;
                for (int64_t j = lo; j < hi; j++) {
                    double d = 0;
                    for (uint64_t e = 0; e < D; e++) d += at(&q, b, h, q0 + i, e) * at(&kk, b, hk, k0 + j, e);
                    sc[j] = d * scale;
                    mx = sc[j] > mx ? sc[j] : mx;
                }
                for (int64_t j = lo; j < hi; j++) sum += exp(sc[j] - mx);
                for (uint64_t e = 0; e < D; e++) {
                    double acc = 0, mag = 0;
                    for (int64_t j = lo; j < hi; j++) {
                        double w = exp(sc[j] - mx) / sum, x = at(&v, b, hk, k0 + j, e);
                        acc += w * x;
                        mag += w * fabs(x);
                    }
                    uint64_t ix = b * o.sb + h * o.sh + (q0 + i) * o.ss + e;
                    want[io][ix] = hi > lo ? acc : 0;
                    /* P rounded to 16 bits, f32 scores and sums, the output's ulp */
                    tol[io][ix] = 2 * prel * mag + 1e-5 * mag + kn_ulp(s->dtype, acc) + 1e-6;
                }
                if (il >= 0) {
                    uint64_t ix = cuq ? (q0 + i) * Hq + h : (b * Hq + h) * Sq + i;
                    want[il][ix] = hi > lo ? mx + log(sum) : -INFINITY;
                    tol[il][ix] = hi > lo ? 1e-4 * (1 + fabs(mx)) : 0;
                }
            }
        }
    }
    free(sc);
}
