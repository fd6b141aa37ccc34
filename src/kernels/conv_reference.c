/* rocke — the convolution reference: a direct convolution in double over
 * the inputs as the device holds them (forward, data gradient, weight
 * gradient; groups, stride, asymmetric padding, dilation, 2-D and 3-D),
 * with the GEMM's tolerance per element (the f32 accumulation bound over
 * the terms summed, the chain's slope, one ulp of the output type).
 * Layer: kernels. */
#include <math.h>

#include "conv_int.h"

typedef struct ref {
    const rk_problem *p;
    kn_conv_geo g;
    const rk_host_buf *x, *w, *y;      /* inputs: whichever two the direction reads */
} ref;

static uint64_t xat(const kn_conv_geo *g, uint64_t n, const uint64_t *pos, uint64_t c) {
    return (((n * g->in[0] + pos[0]) * g->in[1] + pos[1]) * g->in[2] + pos[2]) * g->c + c;
}
static uint64_t yat(const kn_conv_geo *g, uint64_t n, const uint64_t *pos, uint64_t k) {
    return (((n * g->out[0] + pos[0]) * g->out[1] + pos[1]) * g->out[2] + pos[2]) * g->k + k;
}
static uint64_t wat(const kn_conv_geo *g, uint64_t k, const uint64_t *tap, uint64_t c) {
    return (((k * g->filt[0] + tap[0]) * g->filt[1] + tap[1]) * g->filt[2] + tap[2]) * g->cg + c;
}

/* The input position of output position `o` under tap `t` (false: padding). */
static bool in_pos(const kn_conv_geo *g, const uint64_t *o, const uint64_t *t, uint64_t *x) {
    for (int i = 0; i < 3; i++) {
        int64_t v = (int64_t)(o[i] * g->stride[i] + t[i] * g->dil[i]) - (int64_t)g->pad0[i];
        if (v < 0 || v >= (int64_t)g->in[i]) return false;
        x[i] = (uint64_t)v;
    }
    return true;
}

/* Odometer over a 3-D box: false once every position was visited. */
static bool next3(uint64_t *v, const uint64_t *ext) {
    for (int i = 2; i >= 0; i--) {
        if (++v[i] < ext[i]) return true;
        v[i] = 0;
    }
    return false;
}

static void finish(const rk_gemm_spec *s, double acc, double mag, uint64_t terms, const double *ops, double *want,
                   double *tol) {
    double err = mag * (double)terms * 0x1p-24 + 0x1p-24 * fabs(acc);
    for (uint32_t i = 0; i < s->fuse.n; i++) {
        const rk_epi_step *st = &s->fuse.s[i];
        double sl = st->kind == RK_EPI_SCALE || st->kind == RK_EPI_MUL ? fabs(ops[i])
                    : st->kind == RK_EPI_ACT ? 1.13 : 1.0;
        err *= sl;
    }
    double w = rk_epi_ref(&s->fuse, acc, ops);
    *want = w;
    *tol = 2 * err + (s->fuse.n ? 1e-5 * fabs(w) + 1e-6 : 0) + kn_ulp(s->out_dtype, w);
}

static void forward(const ref *r, double *want, double *tol, uint64_t lo, uint64_t hi) {
    const kn_conv_geo *g = &r->g;
    const rk_gemm_spec *s = &r->p->inst.u.conv.g;
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t np = rk_epi_params(&s->fuse, s->out_dtype, ps);
    const rk_host_buf *opbuf[RK_EPI_MAX_STEPS] = {0};
    double opval[RK_EPI_MAX_STEPS] = {0};
    for (uint32_t i = 0; i < np; i++) {
        if (ps[i].ptr) opbuf[ps[i].step] = kn_buf(r->p, ps[i].name);
        else if (ps[i].type == RK_S_F32) opval[ps[i].step] = (double)(float)kn_scalar(r->p, ps[i].name);
    }
    uint64_t taps = g->filt[0] * g->filt[1] * g->filt[2];
    for (uint64_t n = lo; n < hi; n++) {
        uint64_t o[3] = {0, 0, 0};
        do {
            for (uint64_t k = 0; k < g->k; k++) {
                uint64_t grp = k / g->kg, t[3] = {0, 0, 0}, x[3];
                double acc = 0, mag = 0;
                do {
                    if (!in_pos(g, o, t, x)) continue;
                    for (uint64_t c = 0; c < g->cg; c++) {
                        double v = kn_get(r->x, xat(g, n, x, grp * g->cg + c)) * kn_get(r->w, wat(g, k, t, c));
                        acc += v;
                        mag += fabs(v);
                    }
                } while (next3(t, g->filt));
                uint64_t at = yat(g, n, o, k);
                double ops[RK_EPI_MAX_STEPS] = {0};
                for (uint32_t i = 0; i < s->fuse.n; i++) {
                    rk_epi_kind kd = s->fuse.s[i].kind;
                    if (kd == RK_EPI_BIAS) ops[i] = kn_get(opbuf[i], k);
                    else if (kd == RK_EPI_ADD || kd == RK_EPI_MUL) ops[i] = kn_get(opbuf[i], at);
                    else if (kd == RK_EPI_SCALE) ops[i] = opval[i];
                }
                finish(s, acc, mag, taps * g->cg, ops, &want[at], &tol[at]);
            }
        } while (next3(o, g->out));
    }
}

static void data_grad(const ref *r, double *want, double *tol, uint64_t lo, uint64_t hi) {
    const kn_conv_geo *g = &r->g;
    const rk_gemm_spec *s = &r->p->inst.u.conv.g;
    uint64_t terms = g->kg * g->filt[0] * g->filt[1] * g->filt[2];
    for (uint64_t n = lo; n < hi; n++) {
        uint64_t x[3] = {0, 0, 0};
        do {
            for (uint64_t c = 0; c < g->c; c++) {
                uint64_t grp = c / g->cg, t[3] = {0, 0, 0}, o[3];
                double acc = 0, mag = 0;
                do {
                    bool hit = true;
                    for (int i = 0; i < 3 && hit; i++) {
                        int64_t num = (int64_t)(x[i] + g->pad0[i]) - (int64_t)(t[i] * g->dil[i]);
                        hit = num >= 0 && num % (int64_t)g->stride[i] == 0 &&
                              num / (int64_t)g->stride[i] < (int64_t)g->out[i];
                        if (hit) o[i] = (uint64_t)num / g->stride[i];
                    }
                    if (!hit) continue;
                    for (uint64_t kk = 0; kk < g->kg; kk++) {
                        uint64_t k = grp * g->kg + kk;
                        double v = kn_get(r->y, yat(g, n, o, k)) * kn_get(r->w, wat(g, k, t, c - grp * g->cg));
                        acc += v;
                        mag += fabs(v);
                    }
                } while (next3(t, g->filt));
                uint64_t at = xat(g, n, x, c);
                finish(s, acc, mag, terms, NULL, &want[at], &tol[at]);
            }
        } while (next3(x, g->in));
    }
}

static void weight_grad(const ref *r, double *want, double *tol, uint64_t lo, uint64_t hi) {
    const kn_conv_geo *g = &r->g;
    const rk_gemm_spec *s = &r->p->inst.u.conv.g;
    uint64_t terms = g->n * g->out[0] * g->out[1] * g->out[2];
    for (uint64_t k = lo; k < hi; k++) {
        uint64_t grp = k / g->kg, t[3] = {0, 0, 0};
        do {
            for (uint64_t c = 0; c < g->cg; c++) {
                double acc = 0, mag = 0;
                for (uint64_t n = 0; n < g->n; n++) {
                    uint64_t o[3] = {0, 0, 0}, x[3];
                    do {
                        if (!in_pos(g, o, t, x)) continue;
                        double v = kn_get(r->y, yat(g, n, o, k)) * kn_get(r->x, xat(g, n, x, grp * g->cg + c));
                        acc += v;
                        mag += fabs(v);
                    } while (next3(o, g->out));
                }
                uint64_t at = wat(g, k, t, c);
                finish(s, acc, mag, terms, NULL, &want[at], &tol[at]);
            }
        } while (next3(t, g->filt));
    }
}

/* The images (forward, data gradient) or output channels (weight gradient) in parallel
 * (rk_par_for): each writes only its own outputs. */
typedef struct conv_ref_job {
    const ref *r;
    double *want, *tol;
    void (*fn)(const ref *r, double *want, double *tol, uint64_t lo, uint64_t hi);
} conv_ref_job;

static void conv_ref_chunk(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    (void)chunk;
    const conv_ref_job *j = ctx;
    j->fn(j->r, j->want, j->tol, lo, hi);
}

static void run_par(const ref *r, double *want, double *tol, uint64_t n,
                    void (*fn)(const ref *, double *, double *, uint64_t, uint64_t)) {
    conv_ref_job j = {r, want, tol, fn};
    rk_par_for(n, 1, conv_ref_chunk, &j);
}

void kn_conv_reference(const rk_problem *p, double **want, double **tol) {
    ref r = {.p = p};
    kn_conv_geo_of(&p->inst, &p->shape, &r.g);
    r.x = kn_buf(p, "X");
    r.w = kn_buf(p, "Wt");
    r.y = kn_buf(p, "dY");
    switch ((rk_conv_dir)p->inst.u.conv.direction) {
    case RK_CONV_FWD: {
        int o = kn_buf_index(p, "Y");
        run_par(&r, want[o], tol[o], r.g.n, forward);
        return;
    }
    case RK_CONV_DGRAD: {
        int o = kn_buf_index(p, "dX");
        run_par(&r, want[o], tol[o], r.g.n, data_grad);
        return;
    }
    case RK_CONV_WGRAD:
    case RK_CONV__COUNT: {
        int o = kn_buf_index(p, "dW");
        run_par(&r, want[o], tol[o], r.g.k, weight_grad);
        return;
    }
    }
}
