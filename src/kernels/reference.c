/* rocke — host references in double for every family, independent of the
 * kernels: want[] per output element and tol[] (absolute) per element.
 * Linear ops are computed the way the device rounds (f32 math, one RNE
 * rounding) so they compare bit-exactly; transcendental and reduction results
 * get atol + rtol*|ref| + 1 ulp of the output type (docs/kernels.md).
 * Rows (elementwise: blocks of elements) are independent, so each runs in
 * parallel (rk_par_for) and writes only its own entries: the same bits at
 * any thread count. Layer: kernels. */
#include <math.h>

#include "kern_int.h"

/* About this many elements per parallel chunk: big enough to amortise a
 * chunk, small enough to spread a few long rows over the threads. */
#define REF_GRAIN_ELEMS ((uint64_t)1 << 16)
static uint64_t row_grain(uint64_t row_len) {
    return row_len >= REF_GRAIN_ELEMS ? 1 : REF_GRAIN_ELEMS / (row_len ? row_len : 1);
}

typedef struct ref_job {
    const rk_problem *p;
    double **want, **tol;
    uint64_t M, N;
} ref_job;

/* One job over the rows of an M x N problem. */
static void by_rows(const rk_problem *p, double **want, double **tol, rk_par_fn fn) {
    ref_job j = {.p = p, .want = want, .tol = tol, .M = rk_problem_dim(p, "M"), .N = rk_problem_dim(p, "N")};
    rk_par_for(j.M, row_grain(j.N), fn, &j);
}

static double ulp_tol(rk_scalar out, double want, double atol, double rtol) {
    return atol + rtol * fabs(want) + kn_ulp(out, want);
}

/* ---- elementwise ---------------------------------------------------------------- */
static double ew_exact(rk_ew_op op, double da, double db, bool *exact) {
    float a = (float)da, b = (float)db;
    *exact = true;
    switch (op) {
    case RK_EW_ADD: return (double)(a + b);
    case RK_EW_SUB: return (double)(a - b);
    case RK_EW_MUL: return (double)(a * b);
    case RK_EW_DIV: return (double)(a / b);
    case RK_EW_MAX: return (double)fmaxf(a, b);
    case RK_EW_MIN: return (double)fminf(a, b);
    case RK_EW_COPY: return da;
    case RK_EW_NEG: return -da;
    case RK_EW_ABS: return fabs(da);
    case RK_EW_RELU: return isnan(da) ? da : (da > 0 ? da : 0.0);   /* NaN stays NaN, as in torch */
    case RK_EW_SILU: *exact = false; return rk_act_ref(RK_ACT_SILU, da);
    case RK_EW_GELU_TANH: *exact = false; return rk_act_ref(RK_ACT_GELU_TANH, da);
    case RK_EW_EXP2: *exact = false; return exp2(da);
    case RK_EW__COUNT: break;
    }
    return 0;
}

static void ew_chunk(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    (void)chunk;
    const ref_job *job = ctx;
    const rk_problem *p = job->p;
    const rk_elementwise_spec *s = &p->inst.u.ew;
    const rk_host_buf *A = kn_buf(p, "A"), *B = kn_buf(p, "B");
    int c = kn_buf_index(p, "C");
    for (uint64_t i = lo; i < hi; i++) {
        bool exact;
        double w = ew_exact(s->op, kn_get(A, i), B ? kn_get(B, i) : 0.0, &exact);
        job->want[c][i] = w;
        job->tol[c][i] = exact ? 0.0 : ulp_tol(s->out_dtype, w, 1e-6, 2e-4);
    }
}

void kn_elementwise_reference(const rk_problem *p, double **want, double **tol) {
    ref_job j = {.p = p, .want = want, .tol = tol, .N = rk_problem_dim(p, "N")};
    rk_par_for(j.N, REF_GRAIN_ELEMS, ew_chunk, &j);
}

/* ---- reduce -------------------------------------------------------------------------- */
static void reduce_rows(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    (void)chunk;
    const ref_job *job = ctx;
    const rk_problem *p = job->p;
    const uint64_t N = job->N;
    double **want = job->want, **tol = job->tol;
    const rk_reduce_spec *s = &p->inst.u.reduce;
    const rk_host_buf *X = kn_buf(p, "X");
    int y = kn_buf_index(p, "Y");
    for (uint64_t r = lo; r < hi; r++) {
        double sum = 0, mag = 0, mx = -INFINITY;
        for (uint64_t j = 0; j < N; j++) {
            double x = kn_get(X, r * N + j);
            sum += x;
            mag += fabs(x);
            if (x > mx) mx = x;
        }
        double w = s->op == RK_REDUCE_MAX ? mx : s->op == RK_REDUCE_MEAN ? sum / (double)N : sum;
        double scale = s->op == RK_REDUCE_MEAN ? mag / (double)N : mag;
        want[y][r] = w;
        tol[y][r] = s->op == RK_REDUCE_MAX ? 0.0 : ulp_tol(s->out_dtype, w, 1e-5 * scale + 1e-7, 0);
    }
}

void kn_reduce_reference(const rk_problem *p, double **want, double **tol) { by_rows(p, want, tol, reduce_rows); }

/* ---- softmax --------------------------------------------------------------------------- */
static void softmax_rows(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    (void)chunk;
    const ref_job *job = ctx;
    const rk_problem *p = job->p;
    const uint64_t N = job->N;
    double **want = job->want, **tol = job->tol;
    const rk_softmax_spec *s = &p->inst.u.softmax;
    const rk_host_buf *X = kn_buf(p, "X");
    int y = kn_buf_index(p, "Y");
    for (uint64_t r = lo; r < hi; r++) {
        const uint64_t o = r * N;
        double mx = -INFINITY, sum = 0;
        for (uint64_t j = 0; j < N; j++) mx = fmax(mx, kn_get(X, o + j));
        for (uint64_t j = 0; j < N; j++) sum += exp(kn_get(X, o + j) - mx);
        for (uint64_t j = 0; j < N; j++) {
            double w = exp(kn_get(X, o + j) - mx) / sum;
            want[y][o + j] = w;
            tol[y][o + j] = ulp_tol(s->out_dtype, w, 1e-7, 1e-4);
        }
    }
}

void kn_softmax_reference(const rk_problem *p, double **want, double **tol) { by_rows(p, want, tol, softmax_rows); }

/* ---- layernorm / rmsnorm ------------------------------------------------------------------- */
static void norm_rows(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    (void)chunk;
    const ref_job *job = ctx;
    const rk_problem *p = job->p;
    const uint64_t N = job->N;
    double **want = job->want, **tol = job->tol;
    const rk_norm_spec *s = &p->inst.u.norm;
    const rk_host_buf *X = kn_buf(p, "X"), *R = kn_buf(p, "R"), *G = kn_buf(p, "Gamma"), *Bt = kn_buf(p, "Beta");
    int y = kn_buf_index(p, "Y"), h = kn_buf_index(p, "H"), mean_i = kn_buf_index(p, "Mean"),
        rstd_i = kn_buf_index(p, "Rstd");
    double *hv = rk_malloc(N * sizeof *hv);
    RK_ASSERT(hv, "kn_norm_reference: out of memory");
    for (uint64_t r = lo; r < hi; r++) {
        const uint64_t o = r * N;
        double sum = 0, sq = 0;
        for (uint64_t j = 0; j < N; j++) {
            double x = kn_get(X, o + j);
            if (R) x = kn_round(s->dtype, (double)((float)x + (float)kn_get(R, o + j)));
            hv[j] = x;
            sum += x;
            if (h >= 0) { want[h][o + j] = x; tol[h][o + j] = 0; }
        }
        double mean = s->rms ? 0.0 : sum / (double)N;
        for (uint64_t j = 0; j < N; j++) sq += (hv[j] - mean) * (hv[j] - mean);
        double rstd = 1.0 / sqrt(sq / (double)N + kn_scalar(p, "eps"));
        for (uint64_t j = 0; j < N; j++) {
            double w = (hv[j] - mean) * rstd * kn_get(G, j) + (Bt ? kn_get(Bt, j) : 0.0);
            want[y][o + j] = w;
            tol[y][o + j] = ulp_tol(s->out_dtype, w, 1e-4, 1e-4);
        }
        if (mean_i >= 0) { want[mean_i][r] = mean; tol[mean_i][r] = ulp_tol(RK_S_F32, mean, 1e-5, 1e-4); }
        if (rstd_i >= 0) { want[rstd_i][r] = rstd; tol[rstd_i][r] = ulp_tol(RK_S_F32, rstd, 1e-5, 1e-4); }
    }
    rk_free(hv, N * sizeof *hv);
}

void kn_norm_reference(const rk_problem *p, double **want, double **tol) { by_rows(p, want, tol, norm_rows); }

/* ---- transpose ------------------------------------------------------------------------------ */
static void transpose_rows(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    (void)chunk;
    const ref_job *job = ctx;
    const uint64_t M = job->M, N = job->N;
    const rk_host_buf *X = kn_buf(job->p, "X");
    int y = kn_buf_index(job->p, "Y");
    for (uint64_t i = lo; i < hi; i++)
        for (uint64_t j = 0; j < N; j++) {
            job->want[y][j * M + i] = kn_get(X, i * N + j);
            job->tol[y][j * M + i] = 0;
        }
}

void kn_transpose_reference(const rk_problem *p, double **want, double **tol) {
    by_rows(p, want, tol, transpose_rows);
}
