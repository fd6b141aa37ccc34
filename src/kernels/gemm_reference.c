/* rocke — the GEMM reference in double: C = epilogue(sum_k A*B) from the
 * inputs as the device holds them, with a tolerance per element from the
 * f32 accumulation bound (K * 2^-24 * sum |a*b|, through the epilogue's
 * slope), the epilogue's f32 math and one ulp of the output type. Past
 * 2^30 multiply-adds per batch the check samples rows (the first, the last
 * and evenly spaced ones, every column): other elements get an infinite
 * tolerance, which still fails a NaN. Layer: kernels. */
#include <math.h>

#include "gemm_hopper.h"

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

/* fp8 inputs: sum_kb Sa[m, kb] * Sb[n / 128, kb] * sum over the 128-K block
 * kb of a*b (scale=block), Sa[0] * Sb[0] * sum a*b (tensor) or the plain sum
 * (none), in double from the decoded inputs. Tolerance: the f32 bound on the
 * scaled magnitudes, plus 2^-14 of a block's magnitude per 128-K block, an
 * allowance for the tensor core's fp8 accumulation (kept shorter than f32 on
 * Hopper; the bound is not yet checked on an H200). */
static void ref_fp8_one(const rk_gemm_spec *s, const kn_gemm_refmat *a, const kn_gemm_refmat *b,
                        const rk_host_buf *sa, const rk_host_buf *sb, uint64_t m, uint64_t n, uint64_t K,
                        const double *ops, double *want, double *tol) {
    uint64_t kblocks = (K + 127) / 128;
    double acc = 0, mag = 0, short_acc = 0;
    for (uint64_t kb = 0; kb < kblocks; kb++) {
        double part = 0, pmag = 0;
        for (uint64_t kk = kb * 128; kk < K && kk < kb * 128 + 128; kk++) {
            double av = kn_get(a->buf, a->off + (a->row ? m * a->ld + kk : kk * a->ld + m));
            double bv = kn_get(b->buf, b->off + (b->row ? kk * b->ld + n : n * b->ld + kk));
            part += av * bv;
            pmag += fabs(av * bv);
        }
        double f = s->scale == RK_GEMM_SCALE_BLOCK  ? kn_get(sa, m * kblocks + kb) * kn_get(sb, n / 128 * kblocks + kb)
                 : s->scale == RK_GEMM_SCALE_TENSOR ? kn_get(sa, 0) * kn_get(sb, 0) : 1.0;
        acc += f * part;
        mag += fabs(f) * pmag;
        short_acc += 0x1p-14 * fabs(f) * pmag;
    }
    double err = mag * (double)K * 0x1p-24 + short_acc + 0x1p-22 * fabs(acc);
    for (uint32_t i = 0; i < s->fuse.n; i++) err = err * slope(&s->fuse.s[i], ops[i]);
    double w = rk_epi_ref(&s->fuse, acc, ops);
    *want = w;
    *tol = 2 * err + (s->fuse.n ? 1e-5 * fabs(w) + 1e-6 : 0) + kn_ulp(s->out_dtype, w);
}

void kn_gemm_ref_chain_of(const rk_problem *p, kn_gemm_ref_chain *out) {
    const rk_gemm_spec *s = &p->inst.u.gemm;
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t np = rk_epi_params(&s->fuse, s->out_dtype, ps);
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < np; i++) {
        if (ps[i].ptr) out->buf[ps[i].step] = kn_buf(p, ps[i].name);
        else if (ps[i].type == RK_S_F32) out->val[ps[i].step] = (double)(float)kn_scalar(p, ps[i].name);
        else out->ldd[ps[i].step] = kn_scalar(p, ps[i].name);   /* 0 where the signature has none */
    }
}

void kn_gemm_ref_operands(const rk_gemm_spec *s, const kn_gemm_ref_chain *ch, uint64_t col_at, uint64_t row_at,
                          const uint64_t *d_at, double *ops) {
    for (uint32_t i = 0; i < s->fuse.n; i++) {
        switch (s->fuse.s[i].kind) {
        case RK_EPI_BIAS: ops[i] = kn_get(ch->buf[i], col_at); break;
        case RK_EPI_BIAS_ROW: ops[i] = kn_get(ch->buf[i], row_at); break;
        case RK_EPI_SCALE: ops[i] = ch->val[i]; break;
        case RK_EPI_ADD: case RK_EPI_MUL: ops[i] = kn_get(ch->buf[i], d_at[i]); break;
        case RK_EPI_CLAMP: case RK_EPI_ACT: case RK_EPI__COUNT: ops[i] = 0; break;
        }
    }
}

/* The checked rows (every row, or the sample) in parallel: each writes only its own elements. */
typedef struct gemm_ref_rows {
    const rk_gemm_spec *s;
    const kn_gemm_ref_chain *ch;
    const rk_host_buf *A, *B, *sa, *sb;   /* sa, sb: fp8 scales, NULL without */
    double *want, *tol;
    uint64_t M, N, K, rows, lda, ldb, ldc;
    bool ar, br, f8;
} gemm_ref_rows;

static void gemm_ref_row(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi) {
    (void)chunk;
    const gemm_ref_rows *j = ctx;
    const rk_gemm_spec *s = j->s;
    for (uint64_t x = lo; x < hi; x++) {
        uint64_t b = x / j->rows, r = x % j->rows, M = j->M, N = j->N, K = j->K;
        uint64_t m = j->rows == M ? r : (j->rows == 1 ? 0 : r * (M - 1) / (j->rows - 1));
        kn_gemm_refmat am = {j->A, b * M * K, j->lda, j->ar}, bm = {j->B, b * K * N, j->ldb, j->br};
        for (uint64_t n = 0; n < N; n++) {
            double ops[RK_EPI_MAX_STEPS];
            uint64_t d_at[RK_EPI_MAX_STEPS];
            for (uint32_t i = 0; i < s->fuse.n; i++) d_at[i] = m * (uint64_t)j->ch->ldd[i] + n;
            kn_gemm_ref_operands(s, j->ch, n, m, d_at, ops);
            uint64_t at = b * M * N + m * j->ldc + n;
            if (j->f8) ref_fp8_one(s, &am, &bm, j->sa, j->sb, m, n, K, ops, &j->want[at], &j->tol[at]);
            else kn_gemm_ref_one(s, &am, &bm, m, n, K, ops, &j->want[at], &j->tol[at]);
        }
    }
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
    kn_gemm_ref_chain ch;
    kn_gemm_ref_chain_of(p, &ch);
    bool f8 = kn_gemm_hopper_f8(s);
    const rk_host_buf *sa = s->scale ? kn_buf(p, "Sa") : NULL, *sb = s->scale ? kn_buf(p, "Sb") : NULL;
    uint64_t work = N * K, rows = M;
    if (M * work > (1ull << 30)) rows = (1ull << 30) / work < 16 ? 16 : (1ull << 30) / work;
    if (rows > M) rows = M;
    for (uint64_t b = 0; b < batch; b++)
        for (uint64_t n = 0; n < N; n++)
            for (uint64_t m = 0; m < M; m++) {
                want[c][b * M * N + m * ldc + n] = 0;
                tol[c][b * M * N + m * ldc + n] = INFINITY;
            }
    gemm_ref_rows j = {.s = s, .ch = &ch, .A = A, .B = B, .sa = sa, .sb = sb, .want = want[c], .tol = tol[c],
                       .M = M, .N = N, .K = K, .rows = rows, .lda = lda, .ldb = ldb, .ldc = ldc, .ar = ar, .br = br,
                       .f8 = f8};
    rk_par_for(batch * rows, 1, gemm_ref_row, &j);
}
