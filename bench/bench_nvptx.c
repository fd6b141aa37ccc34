/* rocke bench — the NVPTX lowering on an NVIDIA GPU (issue #5): correctness of
 * what unit tests cannot run (shuffles, divergent votes, buffer-view tails,
 * fp8 in hardware and in software, tile.wgmma on descriptors, TMA with
 * mbarriers, the f32 math sequences in ulp) and the bandwidth of the
 * elementwise kernels against cuMemcpyDtoD.
 *   bench_nvptx gen DIR   where LLVM is: build kernels with the rocke builder,
 *                         lower, opt-22 + llc-22 (+ ptxas -v) -> DIR/NAME.ptx
 *   bench_nvptx run DIR   on the GPU machine: load the PTX through the driver
 *                         API (dlopen'ed; TMA through the rocke runtime), run,
 *                         compare with host references
 * Exit status 1 when a check fails. Results: bench/RESULTS.md. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda.h>

#include "rocke/rocke.h"
#include "rocke/kernels.h"
#include "base/fp8.h"
#include "base/fp.h"

static const char *DIR;
static int fails;

/* ================================ gen ================================ */
static rk_value gid(rk_kernel *k) {
    rk_value t = rk_build_thread_id(k, 0), b = rk_build_block_id(k, 0), d = rk_build_block_dim(k, 0);
    return rk_build_add(k, rk_build_mul(k, b, d), t);
}
static rk_value pparam(rk_kernel *k, const char *n, rk_type e, bool ro) {
    rk_param_abi a = {.noalias = true, .readonly = ro};
    return rk_add_param(k, n, rk_type_ptr(k, e, RK_AS_GLOBAL), &a);
}

static void emit(rk_kernel *k, const char *target) {
    if (rk_kernel_finish(k) != RK_OK) { fprintf(stderr, "finish %s: %s\n", rk_kernel_name(k), rk_error_message()); exit(1); }
    char *ll = NULL;
    if (rk_lower_llvm(k, rk_target_find(target), RK_LLVM22, &ll) != RK_OK) {
        fprintf(stderr, "lower %s: %s\n", rk_kernel_name(k), rk_error_message());
        exit(1);
    }
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s/%s.ll", DIR, rk_kernel_name(k));
    FILE *f = fopen(path, "w");
    fputs(ll, f);
    fclose(f);
    rk_string_free(ll);
    snprintf(cmd, sizeof cmd,
             "opt-22 -mtriple=nvptx64-nvidia-cuda -mcpu=%s -mattr=+ptx80 -passes='default<O3>' %s/%s.ll -o %s/%s.bc && "
             "llc-22 -O3 -mtriple=nvptx64-nvidia-cuda -mcpu=%s -mattr=+ptx80 %s/%s.bc -o %s/%s.ptx && "
             "/usr/local/cuda/bin/ptxas -arch=%s -v %s/%s.ptx -o /dev/null 2>&1 | grep -E 'registers|spill' | sed 's/^/  %s: /'",
             target, DIR, rk_kernel_name(k), DIR, rk_kernel_name(k), target, DIR, rk_kernel_name(k), DIR,
             rk_kernel_name(k), target, DIR, rk_kernel_name(k), rk_kernel_name(k));
    if (system(cmd) != 0) { fprintf(stderr, "tools failed for %s\n", rk_kernel_name(k)); exit(1); }
    rk_kernel_free(k);
}

typedef rk_value (*unary_builder)(rk_kernel *k, rk_value a);

static void gen_math(unary_builder op, const char *name, const char *target) {
    char n[64];
    snprintf(n, sizeof n, "math_%s_%s", name, target);
    rk_kernel *k = rk_kernel_new(n);
    rk_value in = pparam(k, "in", RK_T_F32, true), out = pparam(k, "out", RK_T_F32, false);
    rk_value cnt = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value i = gid(k);
    rk_if_begin(k, rk_build_cmp(k, "lt", i, cnt));
    rk_value x = rk_load_global(k, in, i, 1);
    rk_value r = op(k, x);
    rk_store_global(k, out, i, r);
    rk_if_end(k, NULL, 0);
    emit(k, target);
}

/* fp8: dec (byte -> f32), enc (f32 -> byte), pk forms over 4 */
static void gen_fp8(bool e5m2, bool enc, bool pk, const char *target) {
    char n[64];
    snprintf(n, sizeof n, "fp8_%s_%s%s_%s", e5m2 ? "e5m2" : "e4m3", pk ? "pk" : "", enc ? "enc" : "dec", target);
    rk_kernel *k = rk_kernel_new(n);
    rk_type f8 = e5m2 ? RK_T_BF8E5M2 : RK_T_FP8E4M3;
    rk_value in = pparam(k, "in", enc ? RK_T_F32 : f8, true), out = pparam(k, "out", enc ? f8 : RK_T_F32, false);
    rk_value cnt = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value i = gid(k);
    rk_if_begin(k, rk_build_cmp(k, "lt", i, cnt));
    rk_value idx = pk ? rk_build_mul(k, i, rk_const_i32(k, 4)) : i;
    rk_value x = rk_load_global(k, in, idx, pk ? 4 : 1);
    rk_opcode code = enc ? (pk ? (e5m2 ? RK_OP_CVT_PK_BF8_F32X4 : RK_OP_CVT_PK_FP8_F32X4) : (e5m2 ? RK_OP_CVT_F32_TO_BF8 : RK_OP_CVT_F32_TO_FP8))
                         : (pk ? (e5m2 ? RK_OP_CVT_PK_F32_BF8X4 : RK_OP_CVT_PK_F32_FP8X4) : (e5m2 ? RK_OP_CVT_BF8_TO_F32 : RK_OP_CVT_FP8_TO_F32));
    rk_type rt = enc ? f8 : RK_T_F32;
    if (pk) rt = rk_type_vec(k, rt, 4);
    rk_store_global(k, out, idx, rk_emit_convert(k, code, x, rt));
    rk_if_end(k, NULL, 0);
    emit(k, target);
}

static void gen_buf(void) {
    rk_kernel *k = rk_kernel_new("buf");
    rk_value in = pparam(k, "in", RK_T_F32, true), out = pparam(k, "out", RK_T_F32, false);
    rk_value nb = rk_add_param(k, "nbytes", RK_T_I32, NULL), so = rk_add_param(k, "soff", RK_T_I32, NULL);
    rk_value cnt = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value i = gid(k);
    rk_if_begin(k, rk_build_cmp(k, "lt", i, cnt));
    rk_value vo = rk_build_mul(k, i, rk_const_i32(k, 16));
    rk_value v = rk_load_buffer(k, rk_build_buffer_rsrc(k, in, nb), vo, so, RK_T_F32, 4);
    rk_store_buffer(k, rk_build_buffer_rsrc(k, out, nb), vo, so, v);
    rk_if_end(k, NULL, 0);
    emit(k, "sm_90a");
}

static const char *const modes[] = {"idx", "xor", "up", "down"};
static void gen_shfl(int mode, int w) {
    char n[64];
    snprintf(n, sizeof n, "shfl_%s_%d", modes[mode], w);
    rk_kernel *k = rk_kernel_new(n);
    rk_value in = pparam(k, "in", RK_T_I32, true), bv = pparam(k, "bv", RK_T_I32, true), out = pparam(k, "out", RK_T_I32, false);
    rk_value i = gid(k);
    rk_value x = rk_load_global(k, in, i, 1), b = rk_load_global(k, bv, i, 1);
    const rk_shuffle_opts so = {.width = RK_SOME(w)};
    rk_value r = rk_build_shuffle_ex(k, modes[mode], x, b, &so);
    rk_store_global(k, out, i, r);
    emit(k, "sm_90a");
}

/* lanes with in&1 enter; there: ballot(in&2), all(in&2), any(in&2) */
static void gen_vote(void) {
    rk_kernel *k = rk_kernel_new("vote");
    rk_value in = pparam(k, "in", RK_T_I32, true), out = pparam(k, "out", RK_T_I32, false), o64 = pparam(k, "o64", RK_T_I64, false);
    rk_value i = gid(k), x = rk_load_global(k, in, i, 1);
    rk_value bit0 = rk_build_and(k, x, rk_const_i32(k, 1));
    rk_value c = rk_build_cmp(k, "ne", bit0, rk_const_i32(k, 0));
    rk_if_begin(k, c);
    rk_value p = rk_build_and(k, x, rk_const_i32(k, 2));
    rk_store_global(k, o64, i, rk_build_wave_ballot(k, p));
    rk_value a = rk_build_wave_all(k, p);
    rk_value y = rk_build_wave_any(k, p);
    rk_value two = rk_const_i32(k, 2);
    rk_value a2 = rk_build_mul(k, a, two);
    rk_value v = rk_build_add(k, a2, y);
    rk_store_global(k, out, i, v);
    rk_if_end(k, NULL, 0);
    emit(k, "sm_90a");
}

/* a op constant, one op each (operands in a fixed order) */
static rk_value lshr_c(rk_kernel *k, rk_value a, int32_t c) { rk_value cv = rk_const_i32(k, c); return rk_build_lshr(k, a, cv); }
static rk_value and_c(rk_kernel *k, rk_value a, int32_t c) { rk_value cv = rk_const_i32(k, c); return rk_build_and(k, a, cv); }
static rk_value mul_c(rk_kernel *k, rk_value a, int32_t c) { rk_value cv = rk_const_i32(k, c); return rk_build_mul(k, a, cv); }

/* Element offset of (r, c) in 8x8 core matrices of 16 bytes a row:
 * (r/8)*rstride + (c/8)*64 + (r%8)*8 + c%8. */
static rk_value core_offset(rk_kernel *k, rk_value r, rk_value c, int32_t rstride) {
    rk_value hr = mul_c(k, lshr_c(k, r, 3), rstride);
    rk_value hc = mul_c(k, lshr_c(k, c, 3), 64);
    rk_value hi = rk_build_add(k, hr, hc);
    rk_value lr = mul_c(k, and_c(k, r, 7), 8);
    rk_value lc = and_c(k, c, 7);
    rk_value lo = rk_build_add(k, lr, lc);
    return rk_build_add(k, hi, lo);
}

/* one warpgroup: D (64 x N) = A (64 x 64) * B (64 x N), no swizzle, K-major, four k16 steps */
static void gen_wgmma(int N, bool transb) {
    char n[64];
    snprintf(n, sizeof n, "wgmma_n%d%s", N, transb ? "_tb" : "");
    rk_kernel *k = rk_kernel_new(n);
    rk_kernel_set_attr_int(k, "max_workgroup_size", 128);
    rk_value A = pparam(k, "A", RK_T_F16, true), B = pparam(k, "B", RK_T_F16, true), D = pparam(k, "D", RK_T_F32, false);
    uint32_t na = 64 * 64, nbb = 64 * (uint32_t)N;
    const rk_smem_alloc_opts a128 = {.align = RK_SOME(128)};
    rk_value sa = rk_build_smem_alloc_ex(k, RK_T_F16, &na, 1, &a128);
    rk_value sb = rk_build_smem_alloc_ex(k, RK_T_F16, &nbb, 1, &a128);
    rk_value t = rk_build_thread_id(k, 0);
    /* A[m][kk] (row-major 64x64 in global) -> core (m/8, kk/8) at (m/8)*1024 + (kk/8)*128 + (m%8)*16 + (kk%8)*2 */
    rk_value na_c = rk_const_i32(k, (int32_t)na), step = rk_const_i32(k, 128);
    rk_value e = rk_for_begin(k, t, na_c, step, "e", 0, NULL, NULL, NULL);
    {
        rk_value m = rk_build_lshr(k, e, rk_const_i32(k, 6)), kk = rk_build_and(k, e, rk_const_i32(k, 63));
        rk_value o = core_offset(k, m, kk, 512);
        rk_store_smem(k, sa, &o, rk_load_global(k, A, e, 1));
    }
    rk_for_end(k, NULL, 0, NULL);
    /* B[kk][nn] (row-major 64xN in global). K-major (trans 0): core (nn/8, kk/8) at (nn/8)*1024 + (kk/8)*128 +
     * (nn%8)*16 + (kk%8)*2. N-major (trans 1): core (kk/8, nn/8) at (kk/8)*N*16 + (nn/8)*128 + (kk%8)*16 +
     * (nn%8)*2: 8 k-rows of 16 bytes of n. In both LBO is the step to the next 8 k and SBO to the next 8 n
     * (measured on an H200: the other assignment reads past the tile for N-major). */
    rk_value nbb_c = rk_const_i32(k, (int32_t)nbb);
    rk_value e2 = rk_for_begin(k, t, nbb_c, step, "e2", 0, NULL, NULL, NULL);
    {
        rk_value kk = rk_build_udiv(k, e2, rk_const_i32(k, N)), nn = rk_build_umod(k, e2, rk_const_i32(k, N));
        rk_value o = transb ? core_offset(k, kk, nn, N * 8) : core_offset(k, nn, kk, 512);
        rk_store_smem(k, sb, &o, rk_load_global(k, B, e2, 1));
    }
    rk_for_end(k, NULL, 0, NULL);
    rk_build_fence_proxy_async(k);
    rk_build_sync(k);
    rk_type acc_t = rk_type_vec(k, RK_T_F32, (uint32_t)N / 2);
    rk_value z0 = rk_const_i32(k, 0);
    rk_value da = rk_build_wgmma_desc(k, sa, z0, 128, 1024);
    rk_value db = rk_build_wgmma_desc(k, sb, z0, transb ? N * 16 : 128, transb ? 128 : 1024);
    rk_build_wgmma_fence(k);
    rk_value acc = rk_build_constant_vec(k, acc_t, 0.0);
    for (int s = 0; s < 4; s++) {
        /* k16 step: A +256 bytes (2 core matrices along K), B K-major +256, B N-major +2 k-blocks = 2*N*16 bytes */
        rk_value ka = rk_const_i64(k, 16 * s);
        rk_value oa = rk_build_add(k, da, ka);
        rk_value kb = rk_const_i64(k, transb ? 2 * N * s : 16 * s);
        rk_value ob = rk_build_add(k, db, kb);
        const rk_wgmma_opts wo = {.trans_b = {transb, true}, .scale_d = {s == 0, false}};
        acc = rk_build_wgmma_ex(k, "f16", acc, oa, ob, N, &wo);
    }
    rk_build_wgmma_commit_group(k);
    rk_value res;
    rk_build_wgmma_wait_group(k, 0, &acc, 1, &res);
    rk_value half_n = rk_const_i32(k, N / 2);
    rk_value base = rk_build_mul(k, t, half_n);
    for (int c = 0; c < N / 8; c++) {
        int32_t msk[4] = {4 * c, 4 * c + 1, 4 * c + 2, 4 * c + 3};
        rk_value part = N == 8 ? res : rk_build_vshuffle(k, res, res, msk, 4);
        rk_store_global(k, D, rk_build_add(k, base, rk_const_i32(k, 4 * c)), part);
    }
    emit(k, "sm_90a");
}

static void gen_tma(void) {
    rk_kernel *k = rk_kernel_new("tma");
    rk_kernel_set_attr_int(k, "max_workgroup_size", 128);
    rk_param_abi tm = {.tensormap = true};
    rk_value map = rk_add_param(k, "tmap", rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), &tm);
    rk_value out = pparam(k, "out", RK_T_F32, false);
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL), y = rk_add_param(k, "y", RK_T_I32, NULL);
    uint32_t nd = 32 * 64, nb = 1;
    const rk_smem_alloc_opts a128 = {.align = RK_SOME(128)};
    rk_value dst = rk_build_smem_alloc_ex(k, RK_T_F32, &nd, 1, &a128);
    rk_value bars = rk_build_smem_alloc(k, RK_T_I64, &nb, 1);
    rk_value t = rk_build_thread_id(k, 0), zero = rk_const_i32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", t, zero);
    rk_if_begin(k, first);
    rk_value one = rk_const_i32(k, 1);
    rk_build_mbarrier_init(k, bars, zero, one);
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_if_begin(k, first);
    rk_value tx = rk_const_i32(k, 8192);
    rk_build_mbarrier_arrive_expect_tx(k, bars, zero, tx);
    rk_build_tma_load_2d(k, map, dst, zero, bars, zero, x, y);
    rk_if_end(k, NULL, 0);
    rk_build_mbarrier_wait(k, bars, zero, zero);
    rk_value nd_c = rk_const_i32(k, (int32_t)nd), step = rk_const_i32(k, 128);
    rk_value e = rk_for_begin(k, t, nd_c, step, "e", 0, NULL, NULL, NULL);
    rk_store_global(k, out, e, rk_load_smem(k, dst, &e, 1));
    rk_for_end(k, NULL, 0, NULL);
    emit(k, "sm_90a");
}

static void gen_family(const char *name, const char *const *knobs) {
    rk_instance in;
    rk_instance_default(RK_FAMILY_ELEMENTWISE, &in);
    uint64_t locked = 0;
    for (; *knobs; knobs += 2) {
        uint32_t idx;
        rk_instance_set(&in, knobs[0], knobs[1], &idx);
        locked |= 1ull << idx;
    }
    const rk_target *t = rk_target_find("sm_90a");
    rk_shape sh = {.rank = 1, .dim = {1u << 28}};   /* elementwise: N */
    rk_instance_tune(&in, t, &sh, locked);
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k) != RK_OK) { fprintf(stderr, "%s\n", rk_error_message()); exit(1); }
    /* rename: the family name is long */
    char *text = rk_serialize(k);
    rk_kernel_free(k);
    char *p = strstr(text, "kernel @");
    char *e = strchr(p + 8, ' ');
    size_t nl = strlen(name), ol = (size_t)(e - (p + 8));
    char *t2 = malloc(strlen(text) + nl + 1);
    sprintf(t2, "%.*s%s%s", (int)(p + 8 - text), text, name, e);
    (void)ol;
    rk_kernel *k2 = NULL;
    if (rk_parse(t2, strlen(t2), &k2) != RK_OK) { fprintf(stderr, "%s\n", rk_error_message()); exit(1); }
    free(t2);
    rk_string_free(text);
    uint32_t g[3], b[3];
    rk_instance_grid(&in, &sh, g, b);
    printf("  %s: grid %u block %u for N=2^28\n", name, g[0], b[0]);
    emit(k2, "sm_90a");
}

static void gen(void) {
    static const struct { unary_builder op; const char *n; } math[] = {
        {rk_build_exp, "exp"}, {rk_build_log, "log"}, {rk_build_log2, "log2"}, {rk_build_sin, "sin"},
        {rk_build_cos, "cos"}, {rk_build_tanh, "tanh"}, {rk_build_exp2, "exp2"}, {rk_build_sqrt, "sqrt"},
        {rk_build_rsqrt, "rsqrt"}, {rk_build_rcp, "rcp"}, {rk_build_rcp_fast, "rcpf"}, {rk_build_exp2_fast, "exp2f"}};
    for (size_t i = 0; i < sizeof math / sizeof math[0]; i++) gen_math(math[i].op, math[i].n, "sm_90a");
    for (int t = 0; t < 2; t++)
        for (int e5 = 0; e5 < 2; e5++)
            for (int enc = 0; enc < 2; enc++)
                for (int pk = 0; pk < 2; pk++) gen_fp8(e5, enc, pk, t ? "sm_80" : "sm_90a");
    gen_buf();
    static const int widths[] = {2, 4, 8, 16, 32};
    for (int m = 0; m < 4; m++)
        for (int w = 0; w < 5; w++) gen_shfl(m, widths[w]);
    gen_vote();
    gen_wgmma(8, false);
    gen_wgmma(64, false);
    gen_wgmma(256, false);
    gen_wgmma(64, true);
    gen_tma();
    static const char *const add[] = {"op", "add", "dtype", "f32", "out_dtype", "f32", NULL};
    static const char *const cp[] = {"op", "copy", "dtype", "f32", "out_dtype", "f32", NULL};
    static const char *const addh[] = {"op", "add", "dtype", "f16", "out_dtype", "f16", NULL};
    gen_family("ew_add_f32", add);
    gen_family("ew_copy_f32", cp);
    gen_family("ew_add_f16", addh);
}

/* ================================ run ================================ */
/* the driver entry points, typed from cuda.h, resolved with dlsym */
#define CUF(X) X(cuInit) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuModuleLoadData) \
    X(cuModuleGetFunction) X(cuMemAlloc_v2) X(cuMemcpyHtoD_v2) X(cuMemcpyDtoH_v2) X(cuMemcpyDtoD_v2) \
    X(cuMemsetD8_v2) X(cuLaunchKernel) X(cuCtxSynchronize) X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) \
    X(cuEventElapsedTime_v2) X(cuGetErrorString)
#define DECL(n) static __typeof__(n) *p_##n;
CUF(DECL)
#define CALL(n, ...) p_##n(__VA_ARGS__)
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s_ = "?"; CALL(cuGetErrorString, r_, &s_); \
    printf("CUDA error %d (%s) at %s:%d: %s\n", r_, s_, __FILE__, __LINE__, #x); exit(2); } } while (0)

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { printf("missing %s\n", path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc((size_t)n + 1);
    if (fread(d, 1, (size_t)n, f) != (size_t)n) exit(2);
    d[n] = 0;
    fclose(f);
    return d;
}

static CUfunction fn(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.ptx", DIR, name);
    char *ptx = slurp(path);
    CUmodule m;
    CUresult r = CALL(cuModuleLoadData, &m, ptx);
    if (r) { const char *s = "?"; CALL(cuGetErrorString, r, &s); printf("load %s: %s\n", name, s); exit(2); }
    CUfunction f;
    CK(CALL(cuModuleGetFunction, &f, m, name));
    free(ptx);
    return f;
}
static CUdeviceptr dalloc(size_t n) { CUdeviceptr p; CK(CALL(cuMemAlloc_v2, &p, n)); return p; }
static void launch(CUfunction f, unsigned g, unsigned b, void **args) {
    CK(CALL(cuLaunchKernel, f, g, 1, 1, b, 1, 1, 0, (CUstream)0, args, (void **)0));
    CK(CALL(cuCtxSynchronize));
}

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static float frand_bits(void) {   /* random finite floats of every magnitude */
    uint32_t b;
    do b = (uint32_t)rnd(); while (((b >> 23) & 255) == 255);
    float f; memcpy(&f, &b, 4); return f;
}
static uint32_t fbits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static double ulp_err(float got, double want) {
    if (isnan(want)) return isnan(got) ? 0 : 1e30;
    if (isinf(want)) return got == (float)want ? 0 : 1e30;
    float wf = (float)want;
    if (isinf(wf)) return isinf(got) && signbit(got) == signbit(wf) ? 0 : fabs(got - want) / ldexp(1, 104);
    int e;
    frexp(wf == 0 ? 1e-45 : wf, &e);
    double ulp = ldexp(1.0, (e - 24 < -149 ? -149 : e - 24));
    return fabs((double)got - want) / ulp;
}

static void run_math(void) {
    static const struct { const char *n; double (*f)(double); double lo, hi; int mode; } m[] = {
        {"exp", exp, -100, 100, 0}, {"log", log, 0, 0, 1}, {"log2", log2, 0, 0, 1}, {"sin", sin, -1e4, 1e4, 0},
        {"cos", cos, -1e4, 1e4, 0}, {"tanh", tanh, -12, 12, 0}, {"exp2", exp2, -140, 130, 0}, {"sqrt", sqrt, 0, 0, 1},
        {"rsqrt", NULL, 0, 0, 1}, {"rcp", NULL, 0, 0, 2}, {"rcpf", NULL, 0, 0, 2}, {"exp2f", exp2, -120, 120, 0}};
    const int n = 1 << 20;
    float *x = malloc(n * 4), *y = malloc(n * 4);
    CUdeviceptr dx = dalloc(n * 4), dy = dalloc(n * 4);
    for (size_t t = 0; t < sizeof m / sizeof m[0]; t++) {
        for (int i = 0; i < n; i++) {
            float v;
            if (m[t].mode == 1) { v = fabsf(frand_bits()); }
            else if (m[t].mode == 2) { v = frand_bits(); }
            else v = (float)(m[t].lo + (m[t].hi - m[t].lo) * (double)(rnd() >> 11) / 9007199254740992.0);
            if (i % 7 == 0 && m[t].mode == 0) v = (float)((double)(rnd() >> 11) / 9007199254740992.0 * 2 - 1) * 1e-3f;
            x[i] = v;
        }
        /* specials */
        float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 1e-40f, -1e-40f, 1.0000001f, 0.99999994f, 88.7f, -87.0f, 3.14159265f};
        for (size_t i = 0; i < sizeof sp / 4; i++) x[i] = sp[i];
        char name[64];
        snprintf(name, sizeof name, "math_%s_sm_90a", m[t].n);
        CUfunction f = fn(name);
        CK(CALL(cuMemcpyHtoD_v2, dx, x, n * 4));
        int nn = n;
        void *a[] = {&dx, &dy, &nn};
        launch(f, n / 256, 256, a);
        CK(CALL(cuMemcpyDtoH_v2, y, dy, n * 4));
        double worst = 0, worst_x = 0;
        int bad_special = 0;
        for (int i = 0; i < n; i++) {
            double w;
            if (!strcmp(m[t].n, "rsqrt")) w = 1.0 / sqrt((double)x[i]);
            else if (!strcmp(m[t].n, "rcp") || !strcmp(m[t].n, "rcpf")) w = 1.0 / (double)x[i];
            else w = m[t].f((double)x[i]);
            if (!strcmp(m[t].n, "rcpf") || !strcmp(m[t].n, "exp2f")) {   /* ftz forms */
                if (fabs((double)x[i]) < 1.2e-38 || fabs(w) < 1.2e-38) continue;
            }
            double e = ulp_err(y[i], w);
            if (i < (int)(sizeof sp / 4)) {
                if (e > 4) { bad_special++; printf("    %s(%g) = %g, want %g\n", m[t].n, x[i], y[i], w); }
                continue;
            }
            if (e > worst) { worst = e; worst_x = x[i]; }
        }
        printf("math %-6s max %8.2f ulp (at x = %.9g)  specials wrong: %d\n", m[t].n, worst, worst_x, bad_special);
    }
    free(x); free(y);
}

static void run_fp8(const char *target) {
    int n = 1 << 16;
    float *xf = malloc(n * 16), *yf = malloc(n * 16);
    uint8_t *xb = malloc(n * 4), *yb = malloc(n * 4);
    CUdeviceptr d1 = dalloc(n * 16), d2 = dalloc(n * 16);
    for (int e5 = 0; e5 < 2; e5++) {
        rk_fp8_format fmt = e5 ? RK_FP8_E5M2 : RK_FP8_E4M3;
        for (int pk = 0; pk < 2; pk++) {
            /* decode: every byte */
            int cnt = pk ? 64 : 256;
            for (int i = 0; i < 256; i++) xb[i] = (uint8_t)i;
            char name[64];
            snprintf(name, sizeof name, "fp8_%s_%sdec_%s", e5 ? "e5m2" : "e4m3", pk ? "pk" : "", target);
            CK(CALL(cuMemcpyHtoD_v2, d1, xb, 256));
            void *a[] = {&d1, &d2, &cnt};
            launch(fn(name), 1, 256, a);
            CK(CALL(cuMemcpyDtoH_v2, yf, d2, 256 * 4));
            int bad = 0;
            for (int i = 0; i < 256; i++) {
                float w = rk_fp8_to_f32((uint8_t)i, fmt);
                if (isnan(w) ? !isnan(yf[i]) : fbits(w) != fbits(yf[i])) {
                    if (bad++ < 4) printf("    %s byte 0x%02x -> %g, want %g\n", name, i, yf[i], w);
                }
            }
            printf("fp8 %-22s %s (%d wrong)\n", name, bad ? "FAIL" : "ok", bad);
            if (bad) fails++;
            /* encode: random + edges */
            int m = pk ? n : 4 * n;
            for (int i = 0; i < 4 * n; i++) {
                int kind = (int)(rnd() % 4);
                float v = kind == 0 ? frand_bits() : kind == 1 ? (float)ldexp((double)(int)(rnd() % 4096) - 2048, (int)(rnd() % 40) - 30)
                                   : kind == 2 ? (float)((double)(int64_t)(rnd() >> 1) / 9.2233720368547758e18 * 600.0)
                                               : (float)ldexp(1.0 + (double)(rnd() % 64) / 128.0, (int)(rnd() % 40) - 24);
                xf[i] = v;
            }
            float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 448.0f, 464.0f, 480.0f, 1e9f, -1e9f, 57344.0f, 61440.0f, 65536.0f,
                          1.0f / 512, 1.0f / 1024, 1.5f / 1024, 1e-30f, 240.0f, 0.0009765625f * 3};
            for (size_t i = 0; i < sizeof sp / 4; i++) xf[i] = sp[i];
            snprintf(name, sizeof name, "fp8_%s_%senc_%s", e5 ? "e5m2" : "e4m3", pk ? "pk" : "", target);
            CK(CALL(cuMemcpyHtoD_v2, d1, xf, (size_t)4 * n * 4));
            void *b[] = {&d1, &d2, &m};
            launch(fn(name), (unsigned)((m + 255) / 256), 256, b);
            CK(CALL(cuMemcpyDtoH_v2, yb, d2, (size_t)4 * n));
            bad = 0;
            for (int i = 0; i < 4 * n; i++) {
                uint8_t w = rk_f32_to_fp8(xf[i], fmt);
                if (w != yb[i]) {
                    if (bad++ < 6) printf("    %s(%.9g [0x%08x]) = 0x%02x, want 0x%02x\n", name, xf[i], fbits(xf[i]), yb[i], w);
                }
            }
            printf("fp8 %-22s %s (%d of %d wrong)\n", name, bad ? "FAIL" : "ok", bad, 4 * n);
            if (bad) fails++;
        }
    }
    free(xf); free(yf); free(xb); free(yb);
}

static void run_buf(void) {
    int n = 4096;
    float *in = malloc(n * 16), *out = malloc(n * 16);
    CUdeviceptr din = dalloc(n * 16 + 64), dout = dalloc(n * 16 + 64);
    int bad = 0, cases = 0;
    for (int nbytes = n * 16 - 40; nbytes <= n * 16 - 28; nbytes += 4)
        for (int so = 0; so <= 16; so += 16) {
            for (int i = 0; i < n * 4; i++) in[i] = (float)(i + 1);
            CK(CALL(cuMemcpyHtoD_v2, din, in, n * 16));
            CK(CALL(cuMemsetD8_v2, dout, 0x7f, n * 16 + 64));
            void *a[] = {&din, &dout, &nbytes, &so, &n};
            launch(fn("buf"), n / 128, 128, a);
            CK(CALL(cuMemcpyDtoH_v2, out, dout, n * 16));
            for (int j = 0; j < n * 4; j++) {
                /* dword j of the out view is written (with in[j]) iff a thread covers it and it is in range */
                uint64_t off = (uint64_t)j * 4;
                uint32_t wb = off < (uint64_t)so || off + 4 > (uint64_t)nbytes ? 0x7f7f7f7fu : fbits(in[j]);
                if (fbits(out[j]) != wb) { if (bad++ < 5) printf("    buf nbytes %d soff %d dword %d: 0x%08x want 0x%08x\n", nbytes, so, j, fbits(out[j]), wb); }
            }
            cases++;
        }
    printf("buffer views: %d cases %s (%d wrong dwords)\n", cases, bad ? "FAIL" : "ok", bad);
    if (bad) fails++;
}

static void run_shfl(void) {
    static const int widths[] = {2, 4, 8, 16, 32};
    int n = 256, bad = 0;
    int32_t in[256], bv[256], out[256];
    CUdeviceptr d1 = dalloc(1024), d2 = dalloc(1024), d3 = dalloc(1024);
    for (int m = 0; m < 4; m++)
        for (int w = 0; w < 5; w++) {
            for (int i = 0; i < n; i++) { in[i] = (int32_t)rnd(); bv[i] = (int32_t)(rnd() % 40); }
            CK(CALL(cuMemcpyHtoD_v2, d1, in, 1024));
            CK(CALL(cuMemcpyHtoD_v2, d2, bv, 1024));
            char name[64];
            snprintf(name, sizeof name, "shfl_%s_%d", modes[m], widths[w]);
            void *a[] = {&d1, &d2, &d3};
            launch(fn(name), 1, 256, a);
            CK(CALL(cuMemcpyDtoH_v2, out, d3, 1024));
            for (int i = 0; i < n; i++) {
                uint32_t W = 32, l = (uint32_t)i % 32, base = (uint32_t)i - l, seg = W - (uint32_t)widths[w], lm = 31;
                uint32_t b = (uint32_t)bv[i] & lm, minl = l & seg, maxl = m == 2 ? minl : (minl | (lm & ~seg));
                int64_t j; bool ok;
                if (m == 0) { j = minl | (b & ~seg); ok = j <= maxl; }
                else if (m == 1) { j = l ^ b; ok = j <= maxl; }
                else if (m == 2) { j = (int64_t)l - b; ok = j >= (int64_t)maxl; }
                else { j = (int64_t)l + b; ok = j <= maxl; }
                int32_t want = in[base + (ok ? (uint32_t)j : l)];
                if (out[i] != want) { if (bad++ < 5) printf("    %s lane %d b %d: %d want %d\n", name, i, bv[i], out[i], want); }
            }
        }
    printf("shuffles (4 modes x 5 widths, b in [0,40)): %s (%d wrong)\n", bad ? "FAIL" : "ok", bad);
    if (bad) fails++;
}

static void run_vote(void) {
    int32_t in[256], out[256];
    int64_t o64[256];
    CUdeviceptr d1 = dalloc(1024), d2 = dalloc(1024), d3 = dalloc(2048);
    int bad = 0;
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < 256; i++) {
            in[i] = (int32_t)(rnd() & 3);
            if (rep % 4 == 1) in[i] |= 2;   /* all true */
            if (rep % 4 == 2) in[i] &= 1;   /* all false */
        }
        CK(CALL(cuMemcpyHtoD_v2, d1, in, 1024));
        CK(CALL(cuMemsetD8_v2, d2, 0xff, 1024));
        void *a[] = {&d1, &d2, &d3};
        launch(fn("vote"), 1, 256, a);
        CK(CALL(cuMemcpyDtoH_v2, out, d2, 1024));
        CK(CALL(cuMemcpyDtoH_v2, o64, d3, 2048));
        for (int w = 0; w < 8; w++) {
            uint64_t bal = 0; bool all = true, any = false, active = false;
            for (int l = 0; l < 32; l++) {
                int32_t v = in[w * 32 + l];
                if (!(v & 1)) continue;
                active = true;
                if (v & 2) { bal |= 1ull << l; any = true; } else all = false;
            }
            if (!active) continue;
            for (int l = 0; l < 32; l++) {
                int i = w * 32 + l;
                if (!(in[i] & 1)) { if (out[i] != -1) bad++; continue; }
                if ((uint64_t)o64[i] != bal || out[i] != (all ? 2 : 0) + (any ? 1 : 0)) {
                    if (bad++ < 5) printf("    vote warp %d lane %d: ballot %llx all/any %d want %llx %d\n", w, l,
                                          (unsigned long long)o64[i], out[i], (unsigned long long)bal, (all ? 2 : 0) + (any ? 1 : 0));
                }
            }
        }
    }
    printf("votes in divergent warps: %s (%d wrong)\n", bad ? "FAIL" : "ok", bad);
    if (bad) fails++;
}

static void run_wgmma(int N, bool tb) {
    char name[64];
    snprintf(name, sizeof name, "wgmma_n%d%s", N, tb ? "_tb" : "");
    uint16_t *A = malloc(64 * 64 * 2), *B = malloc(64 * (size_t)N * 2);
    float *D = malloc(64 * (size_t)N * 4);
    double *fa = malloc(64 * 64 * 8), *fb = malloc(64 * (size_t)N * 8);
    for (int i = 0; i < 64 * 64; i++) { fa[i] = (double)((int)(rnd() % 17) - 8) / 8; A[i] = rk_f64_to_f16(fa[i]); }
    for (int i = 0; i < 64 * N; i++) { fb[i] = (double)((int)(rnd() % 17) - 8) / 8; B[i] = rk_f64_to_f16(fb[i]); }
    CUdeviceptr dA = dalloc(64 * 64 * 2), dB = dalloc(64 * (size_t)N * 2), dD = dalloc(64 * (size_t)N * 4);
    CK(CALL(cuMemcpyHtoD_v2, dA, A, 64 * 64 * 2));
    CK(CALL(cuMemcpyHtoD_v2, dB, B, 64 * (size_t)N * 2));
    void *a[] = {&dA, &dB, &dD};
    launch(fn(name), 1, 128, a);
    CK(CALL(cuMemcpyDtoH_v2, D, dD, 64 * (size_t)N * 4));
    int bad = 0;
    for (int t = 0; t < 128; t++)
        for (int j = 0; j < N / 2; j++) {
            int w = t / 32, l = t % 32, blk = j / 4, q = j % 4;
            int row = 16 * w + l / 4 + 8 * (q / 2), col = 8 * blk + 2 * (l % 4) + (q % 2);
            double want = 0;
            for (int kk = 0; kk < 64; kk++) want += fa[row * 64 + kk] * fb[kk * N + col];
            float got = D[t * (N / 2) + j];
            if (got != (float)want) { if (bad++ < 5) printf("    %s D[%d][%d] = %g want %g\n", name, row, col, got, want); }
        }
    printf("tile.wgmma m64n%dk16 x4 (%s): %s (%d wrong)\n", N, tb ? "B N-major" : "B K-major", bad ? "FAIL" : "ok", bad);
    if (bad) fails++;
    free(A); free(B); free(D); free(fa); free(fb);
}

/* TMA through the runtime, as a user would: rk_tensormap_encode_2d builds the
 * map, the signature says `tensormap`, rk_arg_tensormap passes it by value,
 * rk_launch adds the kernel's LDS pool (the runtime shares the primary context
 * the rest of this file uses). */
#define RK(x) do { if ((x) != RK_OK) { printf("rocke error at %s:%d: %s\n", __FILE__, __LINE__, rk_error_message()); \
    exit(2); } } while (0)
static void run_tma(void) {
    const int H = 128, W = 256;
    float *T = malloc((size_t)H * W * 4), *out = malloc(2048 * 4);
    for (int i = 0; i < H * W; i++) T[i] = (float)i;
    rk_device *d = NULL;
    RK(rk_device_open("cuda", &d));
    rk_devptr dT, dO;
    RK(rk_mem_alloc(d, (size_t)H * W * 4, &dT));
    RK(rk_mem_alloc(d, 2048 * 4, &dO));
    RK(rk_mem_copy_htod(d, dT, T, (size_t)H * W * 4));
    uint8_t map[RK_TENSORMAP_BYTES];
    RK(rk_tensormap_encode_2d(d, dT, RK_S_F32, (uint64_t)H, (uint64_t)W, (uint64_t)W * 4, 32, 64,
                              RK_TENSORMAP_SWIZZLE_NONE, map));
    char path[512];
    snprintf(path, sizeof path, "%s/tma.ptx", DIR);
    char *ptx = slurp(path);
    rk_module_image img = {.kind = RK_IMAGE_PTX, .data = ptx, .size = strlen(ptx), .target = "sm_90a"};
    rk_module *m = NULL;
    rk_function *f = NULL;
    RK(rk_module_load_image(d, &img, &m));
    free(ptx);
    RK(rk_module_function(m, "tma", &f));
    const char *names[] = {"tmap", "out", "x", "y"}, *types[] = {"tensormap", "ptr<f32,global>", "i32", "i32"};
    rk_argsig *sig = NULL;
    RK(rk_argsig_new(names, types, 4, &sig));
    rk_argpack pack;
    rk_argpack_init(&pack);
    int bad = 0;
    int xs[] = {64, 224, 0}, ys[] = {32, 112, 0};
    const uint32_t grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
    for (int c = 0; c < 3; c++) {
        int x = xs[c], y = ys[c];
        const rk_arg a[] = {rk_arg_tensormap(map), rk_arg_ptr(dO), rk_arg_i32(x), rk_arg_i32(y)};
        RK(rk_args_pack(sig, a, 4, &pack));
        RK(rk_mem_memset(d, dO, 0xff, 2048 * 4, NULL));
        RK(rk_launch(f, grid, block, 0, NULL, pack.params));
        RK(rk_device_synchronize(d));
        RK(rk_mem_copy_dtoh(d, out, dO, 2048 * 4));
        for (int r = 0; r < 32; r++)
            for (int cc = 0; cc < 64; cc++) {
                float want = (y + r < H && x + cc < W) ? T[(y + r) * W + x + cc] : 0.0f;
                if (out[r * 64 + cc] != want) { if (bad++ < 5) printf("    tma (%d,%d) [%d][%d] = %g want %g\n", x, y, r, cc, out[r * 64 + cc], want); }
            }
    }
    printf("TMA 2-D box + mbarrier (incl. an out-of-bounds box), via rk_tensormap_encode_2d + rk_launch: %s (%d wrong)\n",
           bad ? "FAIL" : "ok", bad);
    if (bad) fails++;
    rk_argpack_free(&pack);
    rk_argsig_free(sig);
    rk_mem_free(d, dT);
    rk_mem_free(d, dO);
    rk_device_close(d);   /* unloads m; the primary context stays retained by run() */
    free(T);
    free(out);
}

static double time_kernel(CUfunction f, unsigned g, unsigned b, void **args, int iters) {
    CUevent e0, e1;
    CK(CALL(cuEventCreate, &e0, 0));
    CK(CALL(cuEventCreate, &e1, 0));
    for (int i = 0; i < 3; i++) CK(CALL(cuLaunchKernel, f, g, 1, 1, b, 1, 1, 0, (CUstream)0, args, (void **)0));
    CK(CALL(cuEventRecord, e0, (CUstream)0));
    for (int i = 0; i < iters; i++) CK(CALL(cuLaunchKernel, f, g, 1, 1, b, 1, 1, 0, (CUstream)0, args, (void **)0));
    CK(CALL(cuEventRecord, e1, (CUstream)0));
    CK(CALL(cuEventSynchronize, e1));
    float ms;
    CK(CALL(cuEventElapsedTime_v2, &ms, e0, e1));
    return ms / iters;
}

static void run_bw(void) {
    const size_t N = (size_t)1 << 28;
    CUdeviceptr a = dalloc(N * 4), b = dalloc(N * 4), c = dalloc(N * 4);
    CK(CALL(cuMemsetD8_v2, a, 0, N * 4));
    CK(CALL(cuMemsetD8_v2, b, 0, N * 4));
    CUevent e0, e1;
    CK(CALL(cuEventCreate, &e0, 0));
    CK(CALL(cuEventCreate, &e1, 0));
    for (int i = 0; i < 3; i++) CK(CALL(cuMemcpyDtoD_v2, c, a, N * 4));
    CK(CALL(cuEventRecord, e0, (CUstream)0));
    for (int i = 0; i < 20; i++) CK(CALL(cuMemcpyDtoD_v2, c, a, N * 4));
    CK(CALL(cuEventRecord, e1, (CUstream)0));
    CK(CALL(cuEventSynchronize, e1));
    float ms;
    CK(CALL(cuEventElapsedTime_v2, &ms, e0, e1));
    double copy_bw = 2.0 * N * 4 / (ms / 20 * 1e-3) / 1e12;
    printf("bandwidth: cuMemcpyDtoD %.3f TB/s (read+write, 1 GiB)\n", copy_bw);
    int n = (int)N;
    unsigned grid = (unsigned)(N / (256 * 4 * 4));
    void *args3[] = {&a, &b, &c, &n};
    double t = time_kernel(fn("ew_add_f32"), grid, 256, args3, 20);
    double bw = 3.0 * N * 4 / (t * 1e-3) / 1e12;
    printf("bandwidth: elementwise add f32 %.3f TB/s = %.1f%% of copy (%.3f ms)\n", bw, 100 * bw / copy_bw, t);
    void *args2[] = {&a, &c, &n};
    t = time_kernel(fn("ew_copy_f32"), grid, 256, args2, 20);
    bw = 2.0 * N * 4 / (t * 1e-3) / 1e12;
    printf("bandwidth: elementwise copy f32 %.3f TB/s = %.1f%% of copy (%.3f ms)\n", bw, 100 * bw / copy_bw, t);
    unsigned gridh = (unsigned)(N / (256 * 8 * 4));
    t = time_kernel(fn("ew_add_f16"), gridh, 256, args3, 20);
    bw = 3.0 * N * 2 / (t * 1e-3) / 1e12;
    printf("bandwidth: elementwise add f16 %.3f TB/s = %.1f%% of copy (%.3f ms)\n", bw, 100 * bw / copy_bw, t);
}

static void run(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) { printf("no libcuda: %s\n", dlerror()); exit(2); }
#define LOAD(n) { void *q_ = dlsym(h, #n); if (!q_) { printf("missing %s\n", #n); exit(2); } memcpy(&p_##n, &q_, sizeof q_); }
    CUF(LOAD)
    CK(CALL(cuInit, 0));
    CUdevice dev;
    CK(CALL(cuDeviceGet, &dev, 0));
    CUcontext ctx;
    CK(CALL(cuDevicePrimaryCtxRetain, &ctx, dev));
    CK(CALL(cuCtxSetCurrent, ctx));
    setvbuf(stdout, NULL, _IONBF, 0);
    run_shfl();
    run_vote();
    run_buf();
    run_fp8("sm_90a");
    run_fp8("sm_80");
    run_wgmma(8, false);
    run_wgmma(64, false);
    run_wgmma(256, false);
    run_tma();
    run_math();
    run_bw();
    run_wgmma(64, true);
    printf("nvcheck: %d failing groups\n", fails);
}

int main(int argc, char **argv) {
    if (argc != 3) return 1;
    DIR = argv[2];
    if (!strcmp(argv[1], "gen")) gen();
    else run();
    return fails ? 1 : 0;
}
