/* rocke bench — emulator throughput on two kernels: a 256x256x256 f16 GEMM
 * (one thread per output, a K loop with an f32 accumulator) and a
 * 4096x1024 row softmax (one workgroup of 256 per row, LDS tree reductions
 * with barriers). Each runs on 1 and 2 host threads (checks on, then off),
 * is verified against a host reference and reports seconds and emulated
 * lane-ops per second. Usage: bench_emu [TARGET] [RUNS]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rocke/rocke.h"
#include "base/fp.h"

enum { M = 256, N = 256, K = 256, ROWS = 4096, COLS = 1024, BLOCK = 256 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static rk_kernel *gemm_kernel(void) {
    rk_kernel *k = rk_kernel_new("gemm_f16");
    rk_type ph = rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value A = rk_add_param(k, "A", ph, NULL), B = rk_add_param(k, "B", ph, NULL), C = rk_add_param(k, "C", pf, NULL);
    rk_value Kv = rk_add_param(k, "K", RK_T_I32, NULL), Nv = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value tx = rk_build_thread_id(k, 0), ty = rk_build_thread_id(k, 1);
    rk_value bx = rk_build_block_id(k, 0), by = rk_build_block_id(k, 1);
    rk_value c16 = rk_const_i32(k, 16);
    rk_value col = rk_build_add(k, rk_build_mul(k, bx, c16), tx), row = rk_build_add(k, rk_build_mul(k, by, c16), ty);
    rk_value zero = rk_const_i32(k, 0), one = rk_const_i32(k, 1), fz = rk_const_f32(k, 0.0f);
    rk_value acc, res;
    rk_value kk = rk_for_begin(k, zero, Kv, one, "kk", 1, &fz, NULL, &acc);
    rk_value ai = rk_build_add(k, rk_build_mul(k, row, Kv), kk), bi = rk_build_add(k, rk_build_mul(k, kk, Nv), col);
    rk_value a = rk_build_cast_to_f32(k, rk_load_global(k, A, ai, 1));
    rk_value b = rk_build_cast_to_f32(k, rk_load_global(k, B, bi, 1));
    rk_value na = rk_build_fma(k, a, b, acc);
    rk_for_end(k, &na, 1, &res);
    rk_store_global(k, C, rk_build_add(k, rk_build_mul(k, row, Nv), col), res);
    rk_build_return(k);
    return rk_kernel_finish(k) == RK_OK ? k : NULL;
}

/* One reduction step over LDS: red[tid] = op(red[tid], red[tid + stride]) for
 * the 8 halvings from 128, a barrier after each. */
static rk_value tree(rk_kernel *k, rk_value red, rk_value tid, bool is_max, const char *iv) {
    rk_value zero = rk_const_i32(k, 0), eight = rk_const_i32(k, 8), one = rk_const_i32(k, 1), c128 = rk_const_i32(k, 128);
    rk_value s = rk_for_begin(k, zero, eight, one, iv, 0, NULL, NULL, NULL);
    rk_value stride = rk_build_lshr(k, c128, s);
    rk_value act = rk_build_cmp(k, "lt", tid, stride);
    rk_if_begin(k, act);
    rk_value j = rk_build_add(k, tid, stride);
    rk_value x = rk_load_smem(k, red, &tid, 1), y = rk_load_smem(k, red, &j, 1);
    rk_value r = is_max ? rk_build_fmax(k, x, y) : rk_build_fadd(k, x, y);
    rk_store_smem(k, red, &tid, r);
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_for_end(k, NULL, 0, NULL);
    return rk_load_smem(k, red, &zero, 1);
}

static rk_kernel *softmax_kernel(void) {
    rk_kernel *k = rk_kernel_new("softmax_rows");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value X = rk_add_param(k, "X", pf, NULL), Y = rk_add_param(k, "Y", pf, NULL);
    rk_value cols = rk_add_param(k, "cols", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0), row = rk_build_block_id(k, 0);
    rk_value base = rk_build_mul(k, row, cols), step = rk_const_i32(k, BLOCK);
    uint32_t d = BLOCK;
    rk_value rmax = rk_build_smem_alloc(k, RK_T_F32, &d, 1), rsum = rk_build_smem_alloc(k, RK_T_F32, &d, 1);
    rk_value ninf = rk_const_f32(k, -INFINITY), fz = rk_const_f32(k, 0.0f);
    rk_value m, mres;
    rk_value j = rk_for_begin(k, tid, cols, step, "j", 1, &ninf, NULL, &m);
    rk_value x = rk_load_global(k, X, rk_build_add(k, base, j), 1);
    rk_value nm = rk_build_fmax(k, m, x);
    rk_for_end(k, &nm, 1, &mres);
    rk_store_smem(k, rmax, &tid, mres);
    rk_build_sync(k);
    rk_value gmax = tree(k, rmax, tid, true, "s1");
    rk_value s, sres;
    rk_value j2 = rk_for_begin(k, tid, cols, step, "j2", 1, &fz, NULL, &s);
    rk_value x2 = rk_load_global(k, X, rk_build_add(k, base, j2), 1);
    rk_value e2 = rk_build_exp(k, rk_build_fsub(k, x2, gmax));
    rk_value ns = rk_build_fadd(k, s, e2);
    rk_for_end(k, &ns, 1, &sres);
    rk_store_smem(k, rsum, &tid, sres);
    rk_build_sync(k);
    rk_value gsum = tree(k, rsum, tid, false, "s2");
    rk_value inv = rk_build_rcp(k, gsum);
    rk_value j3 = rk_for_begin(k, tid, cols, step, "j3", 0, NULL, NULL, NULL);
    rk_value idx = rk_build_add(k, base, j3);
    rk_value x3 = rk_load_global(k, X, idx, 1);
    rk_value y = rk_build_fmul(k, rk_build_exp(k, rk_build_fsub(k, x3, gmax)), inv);
    rk_store_global(k, Y, idx, y);
    rk_for_end(k, NULL, 0, NULL);
    rk_build_return(k);
    return rk_kernel_finish(k) == RK_OK ? k : NULL;
}

typedef struct result { double secs, lane_ops; } result;

static result run(const rk_target *t, const rk_kernel *k, uint32_t threads, bool checks, const uint32_t g[3],
                  const uint32_t b[3], void **host, const size_t *bytes, uint32_t nbuf, void **scalars, uint32_t nsc,
                  int runs) {
    rk_emu_options o = rk_emu_options_default();
    o.threads = threads;
    o.check_races = o.check_barriers = o.check_async = checks;
    rk_emu *e = rk_emu_new(t, &o);
    uint64_t addr[4];
    void *args[8];
    for (uint32_t i = 0; i < nbuf; i++) {
        rk_emu_register(e, host[i], bytes[i], NULL, &addr[i]);
        args[i] = &addr[i];
    }
    for (uint32_t i = 0; i < nsc; i++) args[nbuf + i] = scalars[i];
    result best = {1e30, 0};
    for (int r = 0; r < runs; r++) {
        rk_emu_stats_reset(e);
        double t0 = now();
        rk_status st = rk_emu_launch(e, k, g, b, 0, args);
        double dt = now() - t0;
        if (st) { fprintf(stderr, "bench_emu: %s\n", rk_error_message()); exit(1); }
        rk_emu_stats s;
        rk_emu_stats_get(e, &s);
        if (dt < best.secs) best = (result){dt, (double)s.lane_ops};
    }
    rk_emu_free(e);
    return best;
}

int main(int argc, char **argv) {
    const rk_target *t = rk_target_find(argc > 1 ? argv[1] : "gfx950");
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    if (!t || runs < 1) { fprintf(stderr, "usage: bench_emu [TARGET] [RUNS]\n%s\n", rk_error_message()); return 2; }
    rk_kernel *gk = gemm_kernel(), *sk = softmax_kernel();
    if (!gk || !sk) { fprintf(stderr, "bench_emu: %s\n", rk_error_message()); return 1; }

    uint16_t *A = malloc(sizeof(uint16_t) * M * K), *B = malloc(sizeof(uint16_t) * K * N);
    float *C = malloc(sizeof(float) * M * N);
    srand(7);
    for (int i = 0; i < M * K; i++) A[i] = rk_f32_to_f16((float)((double)rand() / RAND_MAX - 0.5));
    for (int i = 0; i < K * N; i++) B[i] = rk_f32_to_f16((float)((double)rand() / RAND_MAX - 0.5));
    float *X = malloc(sizeof(float) * ROWS * COLS), *Y = malloc(sizeof(float) * ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; i++) X[i] = 8.0f * ((float)((double)rand() / RAND_MAX - 0.5));

    printf("target %s, best of %d runs\n", t->name, runs);
    printf("%-34s %8s %14s\n", "kernel (host threads, checks)", "seconds", "lane-ops/s");
    int32_t kk = K, nn = N, cols = COLS;
    for (int th = 1; th <= 2; th++)
        for (int ck = 1; ck >= 0; ck--) {
            const uint32_t gg[3] = {N / 16, M / 16, 1}, gb[3] = {16, 16, 1};
            void *gh[] = {A, B, C}, *gs[] = {&kk, &nn};
            const size_t gbytes[] = {sizeof(uint16_t) * M * K, sizeof(uint16_t) * K * N, sizeof(float) * M * N};
            result r = run(t, gk, (uint32_t)th, ck, gg, gb, gh, gbytes, 3, gs, 2, runs);
            printf("gemm f16 256^3 (%d, %-3s)             %8.3f %14.3g\n", th, ck ? "on" : "off", r.secs, r.lane_ops / r.secs);
            const uint32_t sg[3] = {ROWS, 1, 1}, sb[3] = {BLOCK, 1, 1};
            void *sh[] = {X, Y}, *ss[] = {&cols};
            const size_t sbytes[] = {sizeof(float) * ROWS * COLS, sizeof(float) * ROWS * COLS};
            r = run(t, sk, (uint32_t)th, ck, sg, sb, sh, sbytes, 2, ss, 1, runs);
            printf("softmax 4096x1024 (%d, %-3s)          %8.3f %14.3g\n", th, ck ? "on" : "off", r.secs, r.lane_ops / r.secs);
        }
    /* verify the last results against host references */
    double gerr = 0, serr = 0;
    for (int i = 0; i < M; i += 37)
        for (int j = 0; j < N; j += 29) {
            double acc = 0;
            for (int q = 0; q < K; q++) acc += (double)rk_f16_to_f32(A[i * K + q]) * rk_f16_to_f32(B[q * N + j]);
            gerr = fmax(gerr, fabs(acc - C[i * N + j]));
        }
    for (int r = 0; r < ROWS; r += 97) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < COLS; c++) mx = fmax(mx, X[r * COLS + c]);
        for (int c = 0; c < COLS; c++) sum += exp(X[r * COLS + c] - mx);
        for (int c = 0; c < COLS; c++) serr = fmax(serr, fabs(exp(X[r * COLS + c] - mx) / sum - Y[r * COLS + c]));
    }
    printf("max abs error vs host: gemm %.3g, softmax %.3g\n", gerr, serr);
    int bad = gerr > 1e-3 || serr > 1e-6;
    free(A); free(B); free(C); free(X); free(Y);
    rk_kernel_free(gk);
    rk_kernel_free(sk);
    return bad;
}
