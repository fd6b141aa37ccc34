/* rocke — double-precision host references of the fused serving ops
 * (add_rmsnorm_quant, rope, topk_softmax, permute), independent of the
 * kernels; in-out buffers are read from their saved initial contents.
 * Tolerances: docs/kernels.md ("Fused ops"). Layer: kernels. */
#include <math.h>

#include "kern_int.h"

static double ulp_tol(rk_scalar out, double want, double atol, double rtol) {
    return atol + rtol * fabs(want) + kn_ulp(out, want);
}

/* ---- add + rmsnorm + per-row quantization ------------------------------------------ */
void kn_add_rmsnorm_quant_reference(const rk_problem *p, double **want, double **tol) {
    const uint64_t M = rk_problem_dim(p, "M"), N = rk_problem_dim(p, "N");
    const rk_add_rmsnorm_quant_spec *s = &p->inst.u.arq;
    rk_host_buf X = kn_input(p, "X"), R = kn_input(p, "R"), G = kn_input(p, "Gamma");
    int h = kn_buf_index(p, "R"), q = kn_buf_index(p, "Q"), sc = kn_buf_index(p, "Scale");
    rk_scalar qt = p->sig.p[q].type;
    double qmax = qt == RK_S_I8 ? 127 : qt == RK_S_FP8E4M3FNUZ ? 240 : 448;
    double *y = rk_malloc(N * sizeof *y);
    RK_ASSERT(y, "kn_add_rmsnorm_quant_reference: out of memory");
    for (uint64_t r = 0; r < M; r++) {
        const uint64_t o = r * N;
        double sq = 0, amax = 0;
        for (uint64_t j = 0; j < N; j++) {
            /* h as the device forms it: an f32 add, one rounding to dtype */
            double hv = kn_round(s->dtype, (double)((float)kn_get(&X, o + j) + (float)kn_get(&R, o + j)));
            want[h][o + j] = hv;
            tol[h][o + j] = 0;
            y[j] = hv;
            sq += hv * hv;
        }
        double rstd = 1.0 / sqrt(sq / (double)N + kn_scalar(p, "eps"));
        for (uint64_t j = 0; j < N; j++) {
            y[j] *= rstd * kn_get(&G, j);
            amax = fmax(amax, fabs(y[j]));
        }
        double scale = amax / qmax;
        want[sc][r] = scale;
        tol[sc][r] = ulp_tol(RK_S_F32, scale, 0, 1e-5);
        for (uint64_t j = 0; j < N; j++) {
            /* rounded to the quantized type by the check; one step of it for
             * the f32-against-double difference at a rounding boundary */
            double v = amax > 0 ? y[j] / scale : 0.0;
            want[q][o + j] = v;
            tol[q][o + j] = kn_ulp(qt, v) * (1 + 1e-6);
        }
    }
    rk_free(y, N * sizeof *y);
}

/* ---- rotary embedding ------------------------------------------------------------------ */
static void rope_tensor(const rk_problem *p, const char *name, uint64_t heads, double **want, double **tol) {
    const rk_rope_spec *s = &p->inst.u.rope;
    const uint64_t T = rk_problem_dim(p, "tokens"), D = rk_problem_dim(p, "head_dim"),
                   RH = rk_problem_dim(p, "rot_half");
    rk_host_buf X = kn_input(p, name), Pos = kn_input(p, "Pos"), C = kn_input(p, "Cos"), S = kn_input(p, "Sin");
    int o = kn_buf_index(p, name);
    for (uint64_t t = 0; t < T; t++) {
        uint64_t pos = (uint64_t)kn_get(&Pos, t);
        for (uint64_t h = 0; h < heads; h++) {
            const uint64_t base = (t * heads + h) * D;
            for (uint64_t j = 0; j < D; j++) {        /* past the rotated part: unchanged */
                want[o][base + j] = kn_get(&X, base + j);
                tol[o][base + j] = 0;
            }
            for (uint64_t i = 0; i < RH; i++) {
                uint64_t ia = s->style == RK_ROPE_NEOX ? i : 2 * i, ib = s->style == RK_ROPE_NEOX ? i + RH : 2 * i + 1;
                double a = kn_get(&X, base + ia), b = kn_get(&X, base + ib);
                double c = kn_get(&C, pos * RH + i), sn = kn_get(&S, pos * RH + i);
                double ya = a * c - b * sn, yb = b * c + a * sn;
                /* f32 products and sum: a few f32 ulps of the terms */
                double mag = 4e-7 * (fabs(a) + fabs(b));
                want[o][base + ia] = ya;
                tol[o][base + ia] = ulp_tol(s->dtype, ya, mag, 0);
                want[o][base + ib] = yb;
                tol[o][base + ib] = ulp_tol(s->dtype, yb, mag, 0);
            }
        }
    }
}

void kn_rope_reference(const rk_problem *p, double **want, double **tol) {
    rope_tensor(p, "Q", rk_problem_dim(p, "q_heads"), want, tol);
    rope_tensor(p, "K", rk_problem_dim(p, "kv_heads"), want, tol);
}

/* ---- top-k softmax ------------------------------------------------------------------------ */
void kn_topk_softmax_reference(const rk_problem *p, double **want, double **tol) {
    const uint64_t T = rk_problem_dim(p, "tokens"), E = rk_problem_dim(p, "experts"), K = rk_problem_dim(p, "k");
    rk_host_buf X = kn_input(p, "X");
    int w = kn_buf_index(p, "Weights"), ids = kn_buf_index(p, "Ids");
    for (uint64_t t = 0; t < T; t++) {
        const uint64_t o = t * E;
        double mx = -INFINITY, sum = 0, top = 0;
        for (uint64_t j = 0; j < E; j++) mx = fmax(mx, kn_get(&X, o + j));
        for (uint64_t j = 0; j < E; j++) sum += exp(kn_get(&X, o + j) - mx);
        uint64_t pick[8];
        for (uint64_t r = 0; r < K; r++) {
            /* the largest not yet chosen; equal values: the lowest id (strict >) */
            uint64_t best = E;
            for (uint64_t j = 0; j < E; j++) {
                bool taken = false;
                for (uint64_t q = 0; q < r; q++) taken |= pick[q] == j;
                if (!taken && (best == E || kn_get(&X, o + j) > kn_get(&X, o + best))) best = j;
            }
            pick[r] = best;
            top += exp(kn_get(&X, o + best) - mx) / sum;
        }
        double norm = p->inst.u.topk.renormalize ? top : 1.0;
        for (uint64_t r = 0; r < K; r++) {
            double wv = exp(kn_get(&X, o + pick[r]) - mx) / sum / norm;
            want[w][t * K + r] = wv;
            tol[w][t * K + r] = ulp_tol(RK_S_F32, wv, 1e-7, 1e-5);
            want[ids][t * K + r] = (double)pick[r];
            tol[ids][t * K + r] = 0;
        }
    }
}

/* ---- permute (batched transpose) -------------------------------------------------------------- */
void kn_permute_reference(const rk_problem *p, double **want, double **tol) {
    const uint64_t B = rk_problem_dim(p, "B"), M = rk_problem_dim(p, "M"), N = rk_problem_dim(p, "N");
    rk_host_buf X = kn_input(p, "X");
    int y = kn_buf_index(p, "Y");
    for (uint64_t b = 0; b < B; b++)
        for (uint64_t i = 0; i < M; i++)
            for (uint64_t j = 0; j < N; j++) {
                want[y][(b * N + j) * M + i] = kn_get(&X, (b * M + i) * N + j);
                tol[y][(b * N + j) * M + i] = 0;
            }
}
