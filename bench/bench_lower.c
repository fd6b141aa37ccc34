/* rocke bench — lowering throughput: rk_lower_llvm (verify + lower + module
 * assembly) on kernels of ~5,000 and ~100,000 ops for gfx942, best of RUNS;
 * also the verifier alone, so the lowering's own share is visible. The mix
 * is kernel-like: loops with carries, index math, global and buffer loads,
 * LDS stores/loads with barriers, shuffles, an MFMA chain, if/else with
 * results. Usage: bench_lower [RUNS] [TARGET]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rocke/rocke.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static rk_kernel *build(uint64_t target_ops) {
    rk_kernel *k = rk_kernel_new("bench_lower");
    const rk_param_abi ro = {.noalias = true, .readonly = true};
    rk_value A = rk_add_param(k, "A", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), &ro);
    rk_value H = rk_add_param(k, "H", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), &ro);
    rk_value B = rk_add_param(k, "B", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c0 = rk_const_i32(k, 0), c1 = rk_const_i32(k, 1), c4 = rk_const_i32(k, 4), c255 = rk_const_i32(k, 255);
    rk_value nb = rk_const_i32(k, 1 << 20);
    rk_value rsrc = rk_build_buffer_rsrc(k, A, nb);
    uint32_t dims[] = {256};
    rk_value lds = rk_build_smem_alloc(k, RK_T_F32, dims, 1);
    rk_value scale = rk_const_f32(k, 0.5f);
    rk_type v4 = rk_type_vec(k, RK_T_F32, 4);
    rk_value acc = rk_const_f32(k, 0.0f), macc = rk_build_constant_vec(k, v4, 0.0);
    rk_value lane = rk_build_lane_id(k);
    uint64_t have = rk_kernel_op_count(k), per_block = 0;
    while (have < target_ops) {
        rk_value inits[2] = {acc, macc}, carry[2], out[2];
        rk_value iv = rk_for_begin(k, c0, N, c4, NULL, 2, inits, NULL, carry);
        rk_value a = carry[0], m = carry[1];
        for (int i = 0; i < 4; i++) {
            rk_value off = rk_const_i32(k, i * 64);
            rk_value j0 = rk_build_add(k, iv, off);
            rk_value j = rk_build_add(k, j0, tid);
            rk_value x = rk_load_global(k, A, j, 1);
            rk_value y = rk_build_fmul(k, x, scale);
            rk_value in = rk_build_cmp(k, "lt", j, N);
            rk_value z = rk_build_fma(k, y, scale, a);
            a = rk_build_select(k, in, z, a);
            rk_value bo = rk_build_shl(k, j, c4);
            rk_value bx = rk_load_buffer(k, rsrc, bo, c0, RK_T_F32, 1);
            rk_value li = rk_build_and(k, j, c255);
            const rk_value idx[] = {li};
            rk_store_smem(k, lds, idx, bx);
            rk_build_sync(k);
            rk_value lx = rk_load_smem(k, lds, idx, 1);
            rk_value sh = rk_build_shuffle(k, "xor", lx, c1);
            a = rk_build_fadd(k, a, sh);
            rk_store_global(k, B, j, y);
        }
        rk_value ha = rk_load_global(k, H, lane, 4);
        m = rk_build_mma(k, "mfma_f32_16x16x16_f16", ha, ha, m);
        rk_value c = rk_build_cmp(k, "gt", iv, c1);
        rk_type ft = RK_T_F32;
        rk_value r;
        rk_if_else_begin(k, c, 1, &ft, &r);
        rk_value t1 = rk_build_fadd(k, a, carry[0]);
        rk_else(k, &t1, 1);
        rk_if_end(k, &a, 1);
        rk_value ys[2] = {r, m};
        rk_for_end(k, ys, 2, out);
        acc = out[0];
        macc = out[1];
        if (!per_block) per_block = rk_kernel_op_count(k) - have;   /* every block is alike */
        have += per_block;
    }
    rk_store_global(k, B, tid, acc);
    rk_store_global(k, B, lane, macc);
    if (rk_kernel_finish(k) != RK_OK) {
        fprintf(stderr, "bench_lower: build failed: %s\n", rk_error_message());
        exit(1);
    }
    return k;
}

static void bench(uint64_t want, int runs, const rk_target *t) {
    rk_kernel *k = build(want);
    uint64_t ops = rk_kernel_op_count(k);
    double best = 1e9, best_verify = 1e9;
    size_t bytes = 0;
    for (int r = 0; r < runs; r++) {
        char *ll = NULL;
        double t0 = now();
        if (rk_lower_llvm(k, t, RK_LLVM22, &ll) != RK_OK) {
            fprintf(stderr, "bench_lower: %s\n", rk_error_message());
            exit(1);
        }
        double t1 = now();
        rk_diags d;
        rk_diags_init(&d);
        rk_target_verify(k, t, &d);
        double t2 = now();
        rk_diags_free(&d);
        if (t1 - t0 < best) best = t1 - t0;
        if (t2 - t1 < best_verify) best_verify = t2 - t1;
        bytes = strlen(ll);
        rk_string_free(ll);
    }
    double lower_only = best - best_verify;
    printf("%8llu ops  rk_lower_llvm %8.2f ms  %6.2f M ops/s  %6.1f MB/s of .ll  "
           "(verify %6.2f ms; lowering alone %6.2f M ops/s)\n",
           (unsigned long long)ops, best * 1e3, (double)ops / best * 1e-6, (double)bytes / best * 1e-6,
           best_verify * 1e3, lower_only > 0 ? (double)ops / lower_only * 1e-6 : 0.0);
    rk_kernel_free(k);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    const rk_target *t = rk_target_find(argc > 2 ? argv[2] : "gfx942");
    if (runs < 1 || !t) {
        fprintf(stderr, "usage: bench_lower [RUNS >= 1] [TARGET]\n%s\n", t ? "" : rk_error_message());
        return 2;
    }
    printf("bench_lower: %s, llvm22, best of %d\n", t->name, runs);
    bench(5000, runs, t);
    bench(100000, runs, t);
    return 0;
}
