/* rocke — the Hopper self-check: per block, TMA brings a 64x64 f16 tile of
 * A and one of B^T (128-byte swizzle, boxes crossing the tensors' edges, so
 * zeros fill the rest) into shared memory, completing on an mbarrier; four
 * chained wgmma m64n64k16 read them through swizzled K-major descriptors;
 * the f32 tile goes to C. Integer inputs keep every sum exact, so C is
 * compared bit for bit with a host product written without the emulator.
 * Layer: runtime. */
#include <stdio.h>

#include "selftest.h"

enum { HT_K = 56, HT_N = 48, HT_TILE = 64, HT_A_STRIDE = 128 /* bytes: rows padded */ };

static uint64_t ht_rows(const st_problem *p) { return (uint64_t)p->grid[0] * HT_TILE - 14; }   /* last tile crosses */

static const char *ht_unsupported(const rk_target *t) {
    return (t->features & RK_FEAT_SM90A) ? NULL : "TMA with wgmma needs sm_90a";
}

static rk_status ht_setup(st_problem *p) {
    uint32_t tiles = p->small ? 2 : 2048;
    p->grid[0] = tiles, p->grid[1] = p->grid[2] = 1;
    p->block[0] = 128, p->block[1] = p->block[2] = 1;
    uint64_t M = ht_rows(p);
    st_buf *a = rt_st_add_buf(p, "A", RK_S_F16, (size_t)M * (HT_A_STRIDE / 2), false);
    st_buf *b = a ? rt_st_add_buf(p, "Bt", RK_S_F16, (size_t)HT_N * HT_K, false) : NULL;
    if (!b || !rt_st_add_buf(p, "C", RK_S_F32, (size_t)tiles * HT_TILE * HT_TILE, true)) return RK_ERR_NOMEM;
    /* small integers: products and sums are exact in f32, padding holds values TMA must not read */
    for (size_t i = 0; i < a->count; i++) rt_st_set(a, i, rt_st_rand_int(p, -3, 3));
    for (size_t i = 0; i < b->count; i++) rt_st_set(b, i, rt_st_rand_int(p, -3, 3));
    p->tmaps[0] = (st_tmap){"amap", "A", M, HT_K, HT_A_STRIDE, HT_TILE, HT_TILE, RK_TENSORMAP_SWIZZLE_128B};
    p->tmaps[1] = (st_tmap){"bmap", "Bt", HT_N, HT_K, HT_K * 2, HT_TILE, HT_TILE, RK_TENSORMAP_SWIZZLE_128B};
    p->ntmaps = 2;
    p->tol = 0;
    snprintf(p->size, sizeof p->size, "%llux%ux%u f16", (unsigned long long)M, HT_N, HT_K);
    return RK_OK;
}

static rk_value c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

static rk_value aligned(rk_kernel *k, rk_type e, uint32_t n, int64_t align) {
    rk_value a = rk_build_smem_alloc(k, e, &n, 1);
    rk_op *op = rk_value_def(k, a);
    if (op) rk_op_set_int(k, op, "align", align);
    return a;
}

static void op0(rk_kernel *k, rk_opcode code, const rk_value *in, uint32_t nin) {
    rk_op *op = rk_emit(k, code, in, nin, NULL, 0);
    if (op) rk_op_check(k, op);
}

static void thread0(rk_kernel *k) {
    rk_value t = rk_build_thread_id(k, 0);
    rk_value zero = c32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", t, zero);
    rk_if_begin(k, first);
}

static rk_value desc(rk_kernel *k, rk_value s, int32_t idx) {
    rk_type i64 = RK_T_I64;
    rk_value in[2] = {s, c32(k, idx)};
    rk_op *op = rk_emit(k, RK_OP_WGMMA_DESC, in, 2, &i64, 1);
    if (!op) return in[1];
    rk_op_set_int(k, op, "lbo", 16);          /* unused by swizzled K-major layouts */
    rk_op_set_int(k, op, "sbo", 1024);        /* 8 rows of 128 bytes */
    rk_op_set_int(k, op, "swizzle", 128);
    rk_op_check(k, op);
    return rk_op_result(op);
}

static rk_kernel *ht_build(const st_problem *p) {
    (void)p;
    rk_kernel *k = rk_kernel_new("check_tma_wgmma");
    if (!k) return NULL;
    rk_param_abi tm = {.tensormap = true};
    rk_type mp = rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT);
    rk_value amap = rk_add_param(k, "amap", mp, &tm);
    rk_value bmap = rk_add_param(k, "bmap", mp, &tm);
    rk_value C = rk_add_param(k, "C", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value sA = aligned(k, RK_T_F16, HT_TILE * HT_TILE, 1024), sB = aligned(k, RK_T_F16, HT_TILE * HT_TILE, 1024);
    rk_value bars = aligned(k, RK_T_I64, 1, 16);
    rk_value zero = c32(k, 0), one = c32(k, 1);
    thread0(k);
    rk_value init[3] = {bars, zero, one};
    op0(k, RK_OP_MBARRIER_INIT, init, 3);
    rk_build_fence_proxy_async(k);
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_value bid = rk_build_block_id(k, 0);
    rk_value c64 = c32(k, HT_TILE);
    rk_value y0 = rk_build_mul(k, bid, c64);
    thread0(k);
    rk_value tx = c32(k, 2 * HT_TILE * HT_TILE * 2);
    rk_value ex[3] = {bars, zero, tx};
    op0(k, RK_OP_MBARRIER_ARRIVE_EXPECT_TX, ex, 3);
    rk_value la[7] = {amap, sA, zero, bars, zero, zero, y0};
    op0(k, RK_OP_TMA_LOAD_2D, la, 7);
    rk_value lb[7] = {bmap, sB, zero, bars, zero, zero, zero};
    op0(k, RK_OP_TMA_LOAD_2D, lb, 7);
    rk_if_end(k, NULL, 0);
    rk_value wt[3] = {bars, zero, zero};
    op0(k, RK_OP_MBARRIER_WAIT, wt, 3);
    rk_build_wgmma_fence(k);
    rk_type acc_t = rk_type_vec(k, RK_T_F32, HT_TILE / 2);
    rk_value acc = rk_build_constant_vec(k, acc_t, 0.0);
    for (int32_t kk = 0; kk < HT_TILE / 16; kk++) {
        rk_value da = desc(k, sA, 16 * kk);   /* the next 16 k: 32 bytes on, inside the swizzled rows */
        rk_value db = desc(k, sB, 16 * kk);
        rk_value in[3] = {acc, da, db};
        rk_op *op = rk_emit(k, RK_OP_WGMMA, in, 3, &acc_t, 1);
        if (!op) break;
        rk_op_set_int(k, op, "n", HT_TILE);
        rk_op_set_str(k, op, "dtype", "f16");
        rk_op_check(k, op);
        acc = rk_op_result(op);
    }
    rk_build_wgmma_commit_group(k);
    rk_op *w = rk_emit(k, RK_OP_WGMMA_WAIT_GROUP, &acc, 1, &acc_t, 1);
    if (w) {
        rk_op_set_int(k, w, "n", 0);
        rk_op_check(k, w);
    }
    rk_value d = w ? rk_op_result(w) : acc;
    /* thread 32w + l holds rows 16w + l/4 (+8), columns 2(l%4) (+1, +8j) */
    rk_value t = rk_build_thread_id(k, 0);
    rk_value c5 = c32(k, 5), c31 = c32(k, 31), c2 = c32(k, 2), c3 = c32(k, 3), c16 = c32(k, 16);
    rk_value wv = rk_build_lshr(k, t, c5), lv = rk_build_and(k, t, c31);
    rk_value w16 = rk_build_mul(k, wv, c16), l4 = rk_build_lshr(k, lv, c2);
    rk_value rloc = rk_build_add(k, w16, l4);
    rk_value row = rk_build_add(k, y0, rloc);
    rk_value rowoff = rk_build_mul(k, row, c64);
    rk_value lq = rk_build_and(k, lv, c3);
    rk_value col0 = rk_build_mul(k, lq, c2);
    rk_value base = rk_build_add(k, rowoff, col0);
    for (uint32_t i = 0; i < HT_TILE / 2; i++) {
        int32_t off = (int32_t)(8 * ((i >> 1) & 1) * HT_TILE + 8 * (i >> 2) + (i & 1));
        rk_value oc = c32(k, off);
        rk_value at = rk_build_add(k, base, oc);
        rk_value x = rk_build_vextract(k, d, i);
        rk_store_global(k, C, at, x);
    }
    rk_kernel_set_attr_int(k, "max_workgroup_size", 128);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) {
        rk_kernel_free(k);
        return NULL;
    }
    return k;
}

/* C[r][c] = sum over k < K of A[r][k] * Bt[c][k] inside the tensors, 0 outside */
static void ht_reference(st_problem *p) {
    st_buf *a = rt_st_find(p, "A"), *b = rt_st_find(p, "Bt"), *c = rt_st_find(p, "C");
    uint64_t M = ht_rows(p);
    for (size_t r = 0; r < (size_t)p->grid[0] * HT_TILE; r++)
        for (size_t col = 0; col < HT_TILE; col++) {
            double s = 0;
            if (r < M && col < HT_N)
                for (size_t kk = 0; kk < HT_K; kk++)
                    s += rt_st_get(a, r * (HT_A_STRIDE / 2) + kk) * rt_st_get(b, col * HT_K + kk);
            c->ref[r * HT_TILE + col] = s;
        }
}

const st_case rt_st_tma_wgmma = {"tma_wgmma", "TMA (128-byte swizzle, boxes over the edges) into an mbarrier, then "
                                 "wgmma m64n64k16 from swizzled shared memory, f32 accumulate",
                                 ht_unsupported, ht_setup, ht_build, ht_reference};
