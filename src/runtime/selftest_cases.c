/* rocke — the self-check cases: vector add, LDS with barriers, warp shuffles,
 * a double-buffered async-copy (cp.async) pipeline, one matrix atom
 * (mma.sync / MFMA) and a warpgroup atom (wgmma). Integer cases are checked
 * bit for bit; the matrix cases use inputs whose products and sums are exact
 * in f32, so they are exact too. Sizes: "small" on the emulator, a few
 * hundred MB of traffic on a GPU. Layer: runtime. */
#include <stdio.h>

#include "selftest.h"

/* ---- builder helpers ------------------------------------------------------------------ */
static rk_value c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

/* blockIdx.x * blockDim.x + threadIdx.x, operands made in a fixed order */
static rk_value global_id(rk_kernel *k) {
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value bid = rk_build_block_id(k, 0);
    rk_value bdim = rk_build_block_dim(k, 0);
    rk_value base = rk_build_mul(k, bid, bdim);
    return rk_build_add(k, base, tid);
}

/* in[min(i, n-1)] where i < n, else 0: no lane reads out of bounds and all
 * lanes stay converged */
static rk_value load_or_zero(rk_kernel *k, rk_value in, rk_value i, rk_value n, rk_value inb) {
    rk_value one = c32(k, 1);
    rk_value last = rk_build_sub(k, n, one);
    rk_value idx = rk_build_smin(k, i, last);
    rk_value v = rk_load_global(k, in, idx, 1);
    rk_value zero = c32(k, 0);
    return rk_build_select(k, inb, v, zero);
}

static rk_kernel *finish(rk_kernel *k, uint32_t block) {
    rk_kernel_set_attr_int(k, "max_workgroup_size", block);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) {
        rk_kernel_free(k);
        return NULL;
    }
    return k;
}

static uint32_t ceil_div(size_t a, size_t b) { return (uint32_t)((a + b - 1) / b); }

static void geometry(st_problem *p, uint32_t grid, uint32_t block) {
    p->grid[0] = grid, p->grid[1] = p->grid[2] = 1;
    p->block[0] = block, p->block[1] = p->block[2] = 1;
}

static const char *any_target(const rk_target *t) {
    (void)t;
    return NULL;
}

/* ==== vector_add: C = A + B over n f32 ========================================================= */
static rk_status vadd_setup(st_problem *p) {
    size_t n = p->small ? 1037 : ((size_t)1 << 24) + 3;
    st_buf *a = rt_st_add_buf(p, "A", RK_S_F32, n, false), *b = a ? rt_st_add_buf(p, "B", RK_S_F32, n, false) : NULL;
    if (!b || !rt_st_add_buf(p, "C", RK_S_F32, n, true)) return RK_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        rt_st_set(a, i, rt_st_rand_unit(p));
        rt_st_set(b, i, rt_st_rand_unit(p));
    }
    rt_st_add_scalar(p, rk_arg_named("n", rk_arg_i32((int32_t)n)));
    geometry(p, ceil_div(n, 256), 256);
    p->tol = 0;   /* one f32 rounding of an exact sum: bit for bit */
    snprintf(p->size, sizeof p->size, "%zu f32", n);
    return RK_OK;
}

static rk_kernel *vadd_build(const st_problem *p) {
    (void)p;
    rk_kernel *k = rk_kernel_new("check_vector_add");
    if (!k) return NULL;
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value A = rk_add_param(k, "A", pf, NULL);
    rk_value B = rk_add_param(k, "B", pf, NULL);
    rk_value C = rk_add_param(k, "C", pf, NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value i = global_id(k);
    rk_value inb = rk_build_cmp(k, "lt", i, n);
    rk_if_begin(k, inb);
    rk_value a = rk_load_global(k, A, i, 1);
    rk_value b = rk_load_global(k, B, i, 1);
    rk_value s = rk_build_fadd(k, a, b);
    rk_store_global(k, C, i, s);
    rk_if_end(k, NULL, 0);
    return finish(k, 256);
}

static void vadd_reference(st_problem *p) {
    st_buf *a = rt_st_find(p, "A"), *b = rt_st_find(p, "B"), *c = rt_st_find(p, "C");
    for (size_t i = 0; i < c->count; i++) c->ref[i] = rt_st_get(a, i) + rt_st_get(b, i);
}

static const st_case vector_add = {"vector_add", "C = A + B, f32, one element per thread, tail guarded",
                                   any_target, vadd_setup, vadd_build, vadd_reference};

/* ==== lds_barrier: values exchanged through LDS across three barriers ============================ */
enum { LDS_B = 256 };

static rk_status lds_setup(st_problem *p) {
    size_t n = p->small ? 3 * LDS_B + 77 : ((size_t)1 << 22) + 77;
    st_buf *in = rt_st_add_buf(p, "in", RK_S_I32, n, false);
    if (!in || !rt_st_add_buf(p, "out", RK_S_I32, n, true)) return RK_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) rt_st_set(in, i, rt_st_rand_int(p, -1000, 1000));
    rt_st_add_scalar(p, rk_arg_named("n", rk_arg_i32((int32_t)n)));
    geometry(p, ceil_div(n, LDS_B), LDS_B);
    snprintf(p->size, sizeof p->size, "%zu i32", n);
    return RK_OK;
}

/* s[t] = v; sync; x = 3*s[B-1-t] + s[(t+1)%B]; sync; s[t] = x; sync; out = s[t^1] */
static rk_kernel *lds_build(const st_problem *p) {
    (void)p;
    rk_kernel *k = rk_kernel_new("check_lds_barrier");
    if (!k) return NULL;
    rk_type pi = rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL);
    rk_value in = rk_add_param(k, "in", pi, NULL);
    rk_value out = rk_add_param(k, "out", pi, NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    const uint32_t dims[] = {LDS_B};
    rk_value s = rk_build_smem_alloc(k, RK_T_I32, dims, 1);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value g = global_id(k);
    rk_value inb = rk_build_cmp(k, "lt", g, n);
    rk_value v = load_or_zero(k, in, g, n, inb);
    rk_store_smem(k, s, &t, v);
    rk_build_sync(k);
    rk_value last = c32(k, LDS_B - 1);
    rk_value rev = rk_build_sub(k, last, t);
    rk_value a = rk_load_smem(k, s, &rev, 1);
    rk_value one = c32(k, 1);
    rk_value t1 = rk_build_add(k, t, one);
    rk_value nb = rk_build_and(k, t1, last);
    rk_value b = rk_load_smem(k, s, &nb, 1);
    rk_value three = c32(k, 3);
    rk_value a3 = rk_build_mul(k, a, three);
    rk_value x = rk_build_add(k, a3, b);
    rk_build_sync(k);
    rk_store_smem(k, s, &t, x);
    rk_build_sync(k);
    rk_value tx = rk_build_xor(k, t, one);
    rk_value y = rk_load_smem(k, s, &tx, 1);
    rk_if_begin(k, inb);
    rk_store_global(k, out, g, y);
    rk_if_end(k, NULL, 0);
    return finish(k, LDS_B);
}

static void lds_reference(st_problem *p) {
    st_buf *in = rt_st_find(p, "in"), *out = rt_st_find(p, "out");
    size_t n = in->count;
    double v[LDS_B], x[LDS_B];
    for (size_t base = 0; base < n; base += LDS_B) {
        for (uint32_t t = 0; t < LDS_B; t++) v[t] = base + t < n ? rt_st_get(in, base + t) : 0;
        for (uint32_t t = 0; t < LDS_B; t++) x[t] = 3 * v[LDS_B - 1 - t] + v[(t + 1) % LDS_B];
        for (uint32_t t = 0; t < LDS_B && base + t < n; t++) out->ref[base + t] = x[t ^ 1];
    }
}

static const st_case lds_barrier = {"lds_barrier", "LDS exchange across three block barriers (reverse, neighbour, "
                                    "pair swap), i32", any_target, lds_setup, lds_build, lds_reference};

/* ==== shuffle_reduce: xor-butterfly warp sums and an idx rotation ================================= */
static rk_status shfl_setup(st_problem *p) {
    uint32_t W = p->target->wave_size;
    size_t n = p->small ? 1000 : ((size_t)1 << 22) + 5;
    st_buf *in = rt_st_add_buf(p, "in", RK_S_I32, n, false);
    if (!in || !rt_st_add_buf(p, "sums", RK_S_I32, ceil_div(n, W), true) || !rt_st_add_buf(p, "rot", RK_S_I32, n, true))
        return RK_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) rt_st_set(in, i, rt_st_rand_int(p, -100000, 100000));
    rt_st_add_scalar(p, rk_arg_named("n", rk_arg_i32((int32_t)n)));
    geometry(p, ceil_div(n, 256), 256);
    snprintf(p->size, sizeof p->size, "%zu i32, wave %u", n, W);
    return RK_OK;
}

static rk_kernel *shfl_build(const st_problem *p) {
    uint32_t W = p->target->wave_size, log2w = 0;
    while ((1u << log2w) < W) log2w++;
    rk_kernel *k = rk_kernel_new("check_shuffle_reduce");
    if (!k) return NULL;
    rk_type pi = rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL);
    rk_value in = rk_add_param(k, "in", pi, NULL);
    rk_value sums = rk_add_param(k, "sums", pi, NULL);
    rk_value rot = rk_add_param(k, "rot", pi, NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value g = global_id(k);
    rk_value inb = rk_build_cmp(k, "lt", g, n);
    rk_value v = load_or_zero(k, in, g, n, inb);
    rk_value lane = rk_build_lane_id(k);
    rk_value s = v;
    for (uint32_t off = W / 2; off; off /= 2) {
        rk_value m = c32(k, (int32_t)off);
        rk_value o = rk_build_shuffle(k, "xor", s, m);
        s = rk_build_add(k, s, o);
    }
    rk_value one = c32(k, 1);
    rk_value wm1 = c32(k, (int32_t)W - 1);
    rk_value l1 = rk_build_add(k, lane, one);
    rk_value src = rk_build_and(k, l1, wm1);
    rk_value r = rk_build_shuffle(k, "idx", v, src);
    rk_if_begin(k, inb);
    rk_store_global(k, rot, g, r);
    rk_if_end(k, NULL, 0);
    rk_value zero = c32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", lane, zero);
    rk_value write = rk_build_and(k, first, inb);
    rk_if_begin(k, write);
    rk_value sh = c32(k, (int32_t)log2w);
    rk_value warp = rk_build_lshr(k, g, sh);
    rk_store_global(k, sums, warp, s);
    rk_if_end(k, NULL, 0);
    return finish(k, 256);
}

static void shfl_reference(st_problem *p) {
    uint32_t W = p->target->wave_size;
    st_buf *in = rt_st_find(p, "in"), *sums = rt_st_find(p, "sums"), *rot = rt_st_find(p, "rot");
    size_t n = in->count;
    for (size_t w = 0; w < sums->count; w++) {
        double acc = 0;
        for (uint32_t j = 0; j < W; j++) acc += w * W + j < n ? rt_st_get(in, w * W + j) : 0;
        sums->ref[w] = acc;
        for (uint32_t j = 0; j < W && w * W + j < n; j++) {
            size_t src = w * W + (j + 1) % W;
            rot->ref[w * W + j] = src < n ? rt_st_get(in, src) : 0;
        }
    }
}

static const st_case shuffle_reduce = {"shuffle_reduce", "warp sum by xor shuffles, rotation by idx shuffle, i32",
                                       any_target, shfl_setup, shfl_build, shfl_reference};

/* ==== cp_async_pipeline: double-buffered async copies into LDS ===================================== */
enum { CP_B = 128, CP_CHUNK = CP_B * 4 };

static rk_status cp_setup(st_problem *p) {
    size_t rows = p->small ? 3 : 4 * 132, L = p->small ? 2 * CP_CHUNK + 36 : ((size_t)1 << 14) + 36;
    st_buf *in = rt_st_add_buf(p, "in", RK_S_I32, rows * L, false);
    if (!in || !rt_st_add_buf(p, "out", RK_S_I32, rows * CP_B, true)) return RK_ERR_NOMEM;
    for (size_t i = 0; i < rows * L; i++) rt_st_set(in, i, rt_st_rand_int(p, -1000, 1000));
    rt_st_add_scalar(p, rk_arg_named("L", rk_arg_i32((int32_t)L)));
    rt_st_add_scalar(p, rk_arg_named("nchunks", rk_arg_i32((int32_t)ceil_div(L, CP_CHUNK))));
    geometry(p, (uint32_t)rows, CP_B);
    snprintf(p->size, sizeof p->size, "%zu rows x %zu i32", rows, L);
    return RK_OK;
}

/* Thread t copies 16 bytes (4 elements) of chunk c into LDS slot c % 2;
 * beyond the row (or past the last chunk) the copy zero-fills. */
static void cp_issue(rk_kernel *k, rk_value in, rk_value s, rk_value rowbase, rk_value t4, rk_value L,
                     rk_value nchunks, rk_value c) {
    rk_value chunk = c32(k, CP_CHUNK);
    rk_value one = c32(k, 1);
    rk_value zero = c32(k, 0);
    rk_value off = rk_build_mul(k, c, chunk);
    rk_value e = rk_build_add(k, off, t4);
    rk_value in_row = rk_build_cmp(k, "lt", e, L);
    rk_value in_range = rk_build_cmp(k, "lt", c, nchunks);
    rk_value valid = rk_build_and(k, in_row, in_range);
    rk_value gidx = rk_build_add(k, rowbase, e);
    rk_value src = rk_build_select(k, valid, gidx, zero);
    rk_value slot = rk_build_and(k, c, one);
    rk_value sbase = rk_build_mul(k, slot, chunk);
    rk_value dst = rk_build_add(k, sbase, t4);
    rk_build_async_copy(k, in, src, s, dst, valid, 16);
}

static rk_kernel *cp_build(const st_problem *p) {
    (void)p;
    rk_kernel *k = rk_kernel_new("check_cp_async_pipeline");
    if (!k) return NULL;
    rk_type pi = rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL);
    rk_value in = rk_add_param(k, "in", pi, NULL);
    rk_value out = rk_add_param(k, "out", pi, NULL);
    rk_value L = rk_add_param(k, "L", RK_T_I32, NULL);
    rk_value nchunks = rk_add_param(k, "nchunks", RK_T_I32, NULL);
    const uint32_t dims[] = {2 * CP_CHUNK};
    rk_value s = rk_build_smem_alloc(k, RK_T_I32, dims, 1);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value r = rk_build_block_id(k, 0);
    rk_value rowbase = rk_build_mul(k, r, L);
    rk_value four = c32(k, 4);
    rk_value t4 = rk_build_mul(k, t, four);
    rk_value zero = c32(k, 0);
    cp_issue(k, in, s, rowbase, t4, L, nchunks, zero);
    rk_build_async_commit_group(k);
    rk_value one = c32(k, 1);
    rk_value acc;
    rk_value c = rk_for_begin(k, zero, nchunks, one, "c", 1, &zero, NULL, &acc);
    {
        rk_value next = rk_build_add(k, c, one);
        cp_issue(k, in, s, rowbase, t4, L, nchunks, next);
        rk_build_async_commit_group(k);
        rk_build_async_wait_group(k, 1);   /* chunk c landed (only c + 1 may be pending) */
        rk_build_sync(k);            /* ... for every thread's copies */
        rk_value slot = rk_build_and(k, c, one);
        rk_value chunk = c32(k, CP_CHUNK);
        rk_value base = rk_build_mul(k, slot, chunk);
        rk_value bt = rk_build_add(k, base, t);
        for (int j = 0; j < 4; j++) {
            rk_value off = c32(k, j * CP_B);
            rk_value idx = rk_build_add(k, bt, off);
            rk_value x = rk_load_smem(k, s, &idx, 1);
            acc = rk_build_add(k, acc, x);
        }
        rk_build_sync(k);            /* everyone has read slot c % 2 before it is refilled */
    }
    rk_value total;
    rk_for_end(k, &acc, 1, &total);
    rk_build_async_wait_group(k, 0);
    rk_value b = c32(k, CP_B);
    rk_value ob = rk_build_mul(k, r, b);
    rk_value oi = rk_build_add(k, ob, t);
    rk_store_global(k, out, oi, total);
    return finish(k, CP_B);
}

static void cp_reference(st_problem *p) {
    st_buf *in = rt_st_find(p, "in"), *out = rt_st_find(p, "out");
    size_t rows = out->count / CP_B, L = in->count / rows, nch = ceil_div(L, CP_CHUNK);
    for (size_t r = 0; r < rows; r++)
        for (uint32_t t = 0; t < CP_B; t++) {
            double acc = 0;
            for (size_t c = 0; c < nch; c++)
                for (uint32_t j = 0; j < 4; j++) {
                    size_t e = c * CP_CHUNK + t + j * CP_B;
                    if (e < L) acc += rt_st_get(in, r * L + e);
                }
            out->ref[r * CP_B + t] = acc;
        }
}

static const st_case cp_async_pipeline = {"cp_async_pipeline", "double-buffered async copies (cp.async groups) into "
                                          "LDS with zero-filled tails, i32", any_target, cp_setup, cp_build,
                                          cp_reference};

/* ==== matrix atoms: one tile per block, fragments laid out lane by lane ==============================
 * Each lane loads its A, B and C fragments from [tile][lane][slot] arrays,
 * runs the atom and stores D the same way; the host reference rebuilds the
 * matrices through the catalog's lane maps, so a lowering that disagrees with
 * the maps fails. Inputs are k/8 in [-2, 2] (A, B) and k/4 in [-8, 8] (C):
 * every product and partial sum is exact in f32. */
static const rk_mma_atom *mma_sync_atom(const rk_target *t) {
    const rk_mma_atom *a = rk_mma_atom_get(t->vendor == RK_VENDOR_NVIDIA ? RK_ATOM_MMA_M16N8K16_F32_F16
                                                                         : RK_ATOM_MFMA_F32_16X16X16_F16);
    return a && rk_target_has_atom(t, a) ? a : NULL;
}

static const rk_mma_atom *wgmma_atom(const rk_target *t) {
    for (const rk_mma_atom *const *a = rk_mma_atoms(); *a; a++)
        if ((*a)->unit == RK_ATOM_UNIT_WGMMA && (*a)->a_elem == RK_S_F16 && rk_target_has_atom(t, *a)) return *a;
    return NULL;
}

static const char *mma_unsupported(const rk_target *t) {
    return mma_sync_atom(t) ? NULL : "the target offers no f16 mma.sync / MFMA atom";
}

static const char *wgmma_unsupported(const rk_target *t) {
    if (!(t->features & RK_FEAT_SM90A)) return "wgmma needs sm_90a";
    return wgmma_atom(t) ? NULL : "no warpgroup (wgmma) atom in the target catalog yet (include/rocke/atoms.def)";
}

static rk_status mma_setup_with(st_problem *p, const rk_mma_atom *a) {
    p->atom = a;
    size_t tiles = p->small ? 3 : 4096, lanes = a->lanes;
    st_buf *A = rt_st_add_buf(p, "A", RK_S_F16, tiles * lanes * a->a_len, false);
    st_buf *B = A ? rt_st_add_buf(p, "B", RK_S_F16, tiles * lanes * a->b_len, false) : NULL;
    st_buf *C = B ? rt_st_add_buf(p, "C", RK_S_F32, tiles * lanes * a->c_len, false) : NULL;
    if (!C || !rt_st_add_buf(p, "D", RK_S_F32, tiles * lanes * a->c_len, true)) return RK_ERR_NOMEM;
    for (size_t i = 0; i < A->count; i++) rt_st_set(A, i, rt_st_rand_int(p, -16, 16) / 8.0);
    for (size_t i = 0; i < B->count; i++) rt_st_set(B, i, rt_st_rand_int(p, -16, 16) / 8.0);
    for (size_t i = 0; i < C->count; i++) rt_st_set(C, i, rt_st_rand_int(p, -32, 32) / 4.0);
    geometry(p, (uint32_t)tiles, (uint32_t)lanes);
    snprintf(p->size, sizeof p->size, "%zu tiles %ux%ux%u", tiles, a->m, a->n, a->k);
    return RK_OK;
}

static rk_status mma_setup(st_problem *p) { return mma_setup_with(p, mma_sync_atom(p->target)); }
static rk_status wgmma_setup(st_problem *p) { return mma_setup_with(p, wgmma_atom(p->target)); }

static rk_kernel *mma_build(const st_problem *p) {
    const rk_mma_atom *a = p->atom;
    rk_kernel *k = rk_kernel_new(a->lanes == 128 ? "check_wgmma_tile" : "check_mma_tile");
    if (!k) return NULL;
    rk_type ph = rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL);
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value A = rk_add_param(k, "A", ph, NULL);
    rk_value B = rk_add_param(k, "B", ph, NULL);
    rk_value C = rk_add_param(k, "C", pf, NULL);
    rk_value D = rk_add_param(k, "D", pf, NULL);
    rk_value lane = rk_build_thread_id(k, 0);
    rk_value tile = rk_build_block_id(k, 0);
    rk_value lanes = c32(k, a->lanes);
    rk_value tb = rk_build_mul(k, tile, lanes);
    rk_value slot = rk_build_add(k, tb, lane);
    rk_value alen = c32(k, a->a_len);
    rk_value ai = rk_build_mul(k, slot, alen);
    rk_value av = rk_load_global(k, A, ai, a->a_len);
    rk_value blen = c32(k, a->b_len);
    rk_value bi = rk_build_mul(k, slot, blen);
    rk_value bv = rk_load_global(k, B, bi, a->b_len);
    rk_value clen = c32(k, a->c_len);
    rk_value ci = rk_build_mul(k, slot, clen);
    rk_value cv = rk_load_global(k, C, ci, a->c_len);
    rk_value dv = rk_build_mma(k, a->op_id, av, bv, cv);
    rk_store_global(k, D, ci, dv);
    return finish(k, a->lanes);
}

static void mma_reference(st_problem *p) {
    const rk_mma_atom *a = p->atom;
    st_buf *A = rt_st_find(p, "A"), *B = rt_st_find(p, "B"), *C = rt_st_find(p, "C"), *D = rt_st_find(p, "D");
    size_t na = (size_t)a->lanes * a->a_len, nb = (size_t)a->lanes * a->b_len, nc = (size_t)a->lanes * a->c_len;
    size_t tiles = D->count / nc;
    double *fa = rk_malloc(na * sizeof *fa), *fb = rk_malloc(nb * sizeof *fb), *fc = rk_malloc(nc * sizeof *fc);
    RK_ASSERT(fa && fb && fc, "out of memory in the mma reference");
    for (size_t t = 0; t < tiles; t++) {
        for (size_t i = 0; i < na; i++) fa[i] = rt_st_get(A, t * na + i);
        for (size_t i = 0; i < nb; i++) fb[i] = rt_st_get(B, t * nb + i);
        for (size_t i = 0; i < nc; i++) fc[i] = rt_st_get(C, t * nc + i);
        rk_status st = rk_mma_atom_reference(a, fa, fb, fc, D->ref + t * nc);
        RK_ASSERT(st == RK_OK, "out of memory in the mma reference");
    }
    rk_free(fa, na * sizeof *fa);
    rk_free(fb, nb * sizeof *fb);
    rk_free(fc, nc * sizeof *fc);
}

static const st_case mma_tile = {"mma_tile", "one f16 matrix atom per warp (mma.sync m16n8k16 / MFMA 16x16x16), "
                                 "f32 accumulate", mma_unsupported, mma_setup, mma_build, mma_reference};
static const st_case wgmma_tile = {"wgmma_tile", "one f16 warpgroup atom (wgmma) per 128 threads, f32 accumulate",
                                   wgmma_unsupported, wgmma_setup, mma_build, mma_reference};

const st_case *const rt_st_cases[] = {&vector_add, &lds_barrier, &shuffle_reduce, &cp_async_pipeline,
                                   &mma_tile, &wgmma_tile, &rt_st_tma_wgmma, NULL};
