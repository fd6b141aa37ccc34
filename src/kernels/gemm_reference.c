/* rocke — the GEMM reference in double: C = epilogue(sum_k A*B) from the
 * inputs as the device holds them, with a tolerance per element from the
 * f32 accumulation bound (K * 2^-24 * sum |a*b|, through the epilogue's
 * slope), the epilogue's f32 math and one ulp of the output type. Past
 * 2^30 multiply-adds per batch the check samples rows (the first, the last
 * and evenly spaced ones, every column): other elements get an infinite
 * tolerance, which still fails a NaN. Layer: kernels. */
#include <math.h>

#include "gemm_int.h"

/* Largest |f'(x)| of a step, to carry the accumulation error through it. */
static double slope(const rk_epi_step *s, double operand) {
    switch (s->kind) {
    case RK_EPI_SCALE: case RK_EPI_MUL: return fabs(operand);
    case RK_EPI_ACT: return s->act == RK_ACT_SIGMOID ? 0.25 : 1.13;
    case RK_EPI_BIAS: case RK_EPI_BIAS_ROW: case RK_EPI_ADD: case RK_EPI_CLAMP: return 1.0;
    case RK_EPI__COUNT: break;
    }
    return 1.0;
}

void kn_gemm_ref_one(const rk_gemm_spec *s, const kn_gemm_refmat *a, const kn_gemm_refmat *b, uint64_t m,
                     uint64_t n, uint64_t K, const double *ops, double *want, double *tol) {
    double acc = 0, mag = 0;
    for (uint64_t kk = 0; kk < K; kk++) {
        double av = kn_get(a->buf, a->off + (a->row ? m * a->ld + kk : kk * a->ld + m));
        double bv = kn_get(b->buf, b->off + (b->row ? kk * b->ld + n : n * b->ld + kk));
        acc += av * bv;
        mag += fabs(av * bv);
    }
    double err = mag * (double)K * 0x1p-24 + 0x1p-24 * fabs(acc);
    for (uint32_t i = 0; i < s->fuse.n; i++) err = err * slope(&s->fuse.s[i], ops[i]);
    double w = rk_epi_ref(&s->fuse, acc, ops);
    *want = w;
    *tol = 2 * err + (s->fuse.n ? 1e-5 * fabs(w) + 1e-6 : 0) + kn_ulp(s->out_dtype, w);
}

void kn_gemm_reference(const rk_problem *p, double **want, double **tol) {
    const rk_gemm_spec *s = &p->inst.u.gemm;
    bool b4 = p->shape.rank == 4;
    uint64_t batch = b4 ? p->shape.dim[0] : 1, M = rk_problem_dim(p, "M"), N = rk_problem_dim(p, "N"),
             K = rk_problem_dim(p, "K");
    bool ar = s->layout == RK_GEMM_RR || s->layout == RK_GEMM_RC, br = s->layout == RK_GEMM_RR || s->layout == RK_GEMM_CR;
    uint64_t lda = (uint64_t)kn_scalar(p, "lda"), ldb = (uint64_t)kn_scalar(p, "ldb"), ldc = (uint64_t)kn_scalar(p, "ldc");
    const rk_host_buf *A = kn_buf(p, "A"), *B = kn_buf(p, "B");
    int c = kn_buf_index(p, "C");
    /* the chain's operands: buffers and scalars by the names rk_epi_params gives */
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t np = rk_epi_params(&s->fuse, s->out_dtype, ps);
    const rk_host_buf *opbuf[RK_EPI_MAX_STEPS] = {0};
    double opval[RK_EPI_MAX_STEPS] = {0}, ldd[RK_EPI_MAX_STEPS] = {0};
    for (uint32_t i = 0; i < np; i++) {
        if (ps[i].ptr) opbuf[ps[i].step] = kn_buf(p, ps[i].name);
        else if (ps[i].type == RK_S_F32) opval[ps[i].step] = (double)(float)kn_scalar(p, ps[i].name);
        else ldd[ps[i].step] = kn_scalar(p, ps[i].name);
    }
    uint64_t work = N * K, rows = M;
    if (M * work > (1ull << 30)) rows = (1ull << 30) / work < 16 ? 16 : (1ull << 30) / work;
    if (rows > M) rows = M;
    for (uint64_t b = 0; b < batch; b++)
        for (uint64_t n = 0; n < N; n++)
            for (uint64_t m = 0; m < M; m++) {
                want[c][b * M * N + m * ldc + n] = 0;
                tol[c][b * M * N + m * ldc + n] = INFINITY;
            }
    for (uint64_t b = 0; b < batch; b++)
        for (uint64_t r = 0; r < rows; r++)
            for (uint64_t n = 0; n < N; n++) {
                uint64_t m = rows == M ? r : (rows == 1 ? 0 : r * (M - 1) / (rows - 1));
                kn_gemm_refmat am = {A, b * M * K, lda, ar}, bm = {B, b * K * N, ldb, br};
                double ops[RK_EPI_MAX_STEPS];
                for (uint32_t i = 0; i < s->fuse.n; i++) {
                    const rk_epi_step *st = &s->fuse.s[i];
                    switch (st->kind) {
                    case RK_EPI_BIAS: ops[i] = kn_get(opbuf[i], n); break;
                    case RK_EPI_BIAS_ROW: ops[i] = kn_get(opbuf[i], m); break;
                    case RK_EPI_SCALE: ops[i] = opval[i]; break;
                    case RK_EPI_ADD: case RK_EPI_MUL: ops[i] = kn_get(opbuf[i], m * (uint64_t)ldd[i] + n); break;
                    case RK_EPI_CLAMP: case RK_EPI_ACT: case RK_EPI__COUNT: ops[i] = 0; break;
                    }
                }
                uint64_t at = b * M * N + m * ldc + n;
                kn_gemm_ref_one(s, &am, &bm, m, n, K, ops, &want[c][at], &tol[c][at]);
            }
}
