/* rocke — batched transpose (permute 0,2,1): X[B, M, N] -> Y[B, N, M]. The
 * transpose family's tile scheme with the batch folded into the row index:
 * matrix b of X is rows b*M .. b*M+M-1 of an [B*M, N] tensor and of Y rows
 * b*N .. of [B*N, M], so each block moves one tile_m x tile_n tile of one
 * matrix through a padded LDS tile with vector loads and stores and masked
 * edges. Layer: kernels. */
#include "kern_int.h"

static const rk_knob knobs[] = {
    KN_DTYPE("dtype", "", u.transpose.dtype, "element type"),
    KN_U32("tile_m", "tm", u.transpose.tile_m, kn_legal_tile, true, "tile rows (of each X matrix)"),
    KN_U32("tile_n", "tn", u.transpose.tile_n, kn_legal_tile, true, "tile columns (of each X matrix)"),
    KN_U32("vec", "v", u.transpose.vec, kn_legal_vec, true, "elements per vector access (<= 16 bytes)"),
    KN_U32("block_size", "b", u.transpose.block_size, kn_legal_block, true, "threads per block"),
    KN_U32("lds_pad", "p", u.transpose.lds_pad, kn_legal_pad, true, "LDS row padding in elements"),
    KN_PBOOL("split", "sp", u.transpose.split, "split sub-row views: aligned vectors at any M, N and base"),
};
enum { K_DT, K_TM, K_TN, K_VEC, K_BLOCK, K_PAD, K_SPLIT };

static const rk_dim_decl dims[] = {
    {"B", 16, "matrices (batch)"},
    {"M", 1024, "rows of each X matrix"},
    {"N", 1024, "columns of each X matrix"},
};
static const rk_scalar_decl scalars[] = {
    {"B", RK_S_I32, RK_SC_DIM, "B", NULL, 0, "matrices"},
    {"M", RK_S_I32, RK_SC_DIM, "M", NULL, 0, "rows of each X matrix"},
    {"N", RK_S_I32, RK_SC_DIM, "N", NULL, 0, "columns of each X matrix"},
};

static void defaults(rk_instance *in) {
    in->u.transpose = (rk_transpose_spec){.dtype = RK_S_BF16, .tile_m = 64, .tile_n = 64, .vec = 8,
                                          .block_size = 256, .lds_pad = 4, .split = false};
}

/* 64x64 tiles of 16-byte vectors; narrow matrices get narrower tiles so
 * fewer lanes idle at the edges. */
static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    (void)t;
    rk_transpose_spec *s = &in->u.transpose;
    uint32_t e = rk_tile_elem_bytes(s->dtype);
    if (!(locked >> K_VEC & 1)) s->vec = 16 / e;
    if (!(locked >> K_TM & 1)) s->tile_m = sh->dim[1] <= 32 && s->vec <= 4 ? 32 : 64;
    if (!(locked >> K_TN & 1)) s->tile_n = sh->dim[2] <= 32 && s->vec <= 4 ? 32 : 64;
    if (!(locked >> K_PAD & 1)) s->lds_pad = 4;
    if (!(locked >> K_BLOCK & 1)) {
        uint32_t b = 256;
        while (b > 64 && (s->tile_m * s->tile_n / s->vec) % b) b /= 2;
        s->block_size = b;
    }
    if (!(locked >> K_SPLIT & 1)) s->split = sh->dim[1] % s->vec || sh->dim[2] % s->vec;
}

/* The transpose family's checks (the same spec), and at most 16 vectors
 * per thread (the build keeps them all in flight). */
static rk_status validate(const rk_instance *in, const rk_target *t) {
    rk_status st = kn_transpose.validate(in, t);
    if (st) return st;
    const rk_transpose_spec *s = &in->u.transpose;
    uint32_t per_thread = s->tile_m * s->tile_n / s->vec / s->block_size;
    if (per_thread > 16)
        return rk_fail(RK_ERR_INVALID, "knob 'block_size' must be at least tile_m*tile_n/vec/16 = %u (at most 16 "
                       "vectors per thread), got %u", s->tile_m * s->tile_n / s->vec / 16, s->block_size);
    return RK_OK;
}

static uint64_t tiles_of(const rk_transpose_spec *s, const rk_shape *sh) {
    return ((sh->dim[1] + s->tile_m - 1) / s->tile_m) * ((sh->dim[2] + s->tile_n - 1) / s->tile_n);
}

static rk_status check_shape(const rk_instance *in, const rk_shape *sh) {
    const uint64_t B = sh->dim[0], M = sh->dim[1], N = sh->dim[2];
    if (B * M > INT32_MAX || B * N > INT32_MAX || B * tiles_of(&in->u.transpose, sh) > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "permute: B x M, B x N and the tile count must be < 2^31, got B=%llu M=%llu "
                       "N=%llu", (unsigned long long)B, (unsigned long long)M, (unsigned long long)N);
    return RK_OK;
}

static void signature(const rk_instance *in, rk_ksig *s) {
    kn_sig_add(s, "X", true, in->u.transpose.dtype, RK_KP_IN, "B,M,N");
    kn_sig_add(s, "Y", true, in->u.transpose.dtype, RK_KP_OUT, "B,N,M");
    for (uint32_t i = 0; i < RK_COUNTOF(scalars); i++) kn_sig_add(s, scalars[i].name, false, RK_S_I32, RK_KP_SCALAR, NULL);
}

/* B * tiles_of: B * ceil(M / tile_m) * ceil(N / tile_n) */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_transpose_spec *s = &in->u.transpose;
    kn_geom_dim(g, 0);
    kn_geom_cdiv_dim(g, 1, s->tile_m);
    kn_geom_cdiv_dim(g, 2, s->tile_n);
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_axis(g);
    g->block[0] = s->block_size;
}

static void cost(const rk_instance *in, const rk_shape *s, double *bytes, double *flops) {
    *bytes = 2.0 * (double)s->dim[0] * (double)s->dim[1] * (double)s->dim[2] *
             rk_tile_elem_bytes(in->u.transpose.dtype);
    *flops = 0;
}

static uint32_t shift_of(uint32_t x) {
    uint32_t n = 0;
    while ((1u << n) < x) n++;
    return n;
}

/* Where a block's tile lies: matrix b, first row and column of X. */
static kn_tile_at locate(rk_kernel *k, const rk_transpose_spec *s, rk_value M, rk_value N) {
    kn_tile_at tp;
    rk_value bid = rk_build_block_id(k, 0);
    rk_value tn1 = kn_i32(k, (int32_t)s->tile_n - 1), tm1 = kn_i32(k, (int32_t)s->tile_m - 1);
    rk_value sn = kn_i32(k, (int32_t)shift_of(s->tile_n)), sm = kn_i32(k, (int32_t)shift_of(s->tile_m));
    rk_value ntn = rk_build_lshr(k, rk_build_add(k, N, tn1), sn);
    rk_value ntm = rk_build_lshr(k, rk_build_add(k, M, tm1), sm);
    rk_value per_matrix = rk_build_mul(k, ntm, ntn);
    rk_value b = rk_build_udiv(k, bid, per_matrix);
    rk_value in_b = rk_build_sub(k, bid, rk_build_mul(k, b, per_matrix));
    rk_value tm = rk_build_udiv(k, in_b, ntn);
    rk_value tn = rk_build_sub(k, in_b, rk_build_mul(k, tm, ntn));
    tp.row0 = rk_build_mul(k, tm, kn_i32(k, (int32_t)s->tile_m));
    tp.col0 = rk_build_mul(k, tn, kn_i32(k, (int32_t)s->tile_n));
    tp.xbase = rk_build_mul(k, b, M);
    tp.ybase = rk_build_mul(k, b, N);
    return tp;
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    (void)t;
    const rk_transpose_spec *s = &in->u.transpose;
    const uint32_t TM = s->tile_m, TN = s->tile_n, vec = s->vec, iters = TM * TN / vec / s->block_size;
    rk_value X = p[0], Y = p[1], M = p[3], N = p[4];
    if (s->split) {
        kn_tile_at at = locate(k, s, M, N);
        kn_transpose_tile_split(k, s, &at, X, Y, M, N);
        return;
    }
    uint32_t ldims[2] = {TM, TN + s->lds_pad};
    rk_value lds = rk_build_smem_alloc(k, (rk_type){s->dtype}, ldims, 2);
    rk_value tid = rk_build_thread_id(k, 0);
    kn_tile_at tp = locate(k, s, M, N);

    /* phase 1: every vector of the tile loaded (in flight together), then to LDS */
    const uint32_t cpr = TN / vec;
    rk_value lr[16], lc[16], v[16];
    for (uint32_t it = 0; it < iters; it++) {
        rk_value f = rk_build_add(k, tid, kn_i32(k, (int32_t)(it * s->block_size)));
        lr[it] = rk_build_lshr(k, f, kn_i32(k, (int32_t)shift_of(cpr)));
        rk_value within = rk_build_and(k, f, kn_i32(k, (int32_t)cpr - 1));
        lc[it] = rk_build_mul(k, within, kn_i32(k, (int32_t)vec));
        rk_value r = rk_build_add(k, tp.row0, lr[it]);
        rk_value act = rk_build_cmp(k, "lt", r, M);
        rk_value xrow = rk_build_add(k, tp.xbase, r);
        rk_tile_row xr = rk_tile_row_view(k, X, s->dtype, xrow, N, N, act, vec, RK_TAIL_MASKED);
        rk_value col = rk_build_add(k, tp.col0, lc[it]);
        rk_tile_row_load(k, &xr, &col, 1, 0.0, &v[it]);
    }
    for (uint32_t it = 0; it < iters; it++) kn_transpose_lds_put(k, s, lds, lr[it], lc[it], v[it]);
    rk_build_sync_lds_only(k);

    /* phase 2: thread g gathers vec rows of LDS column g % TN into one Y vector */
    for (uint32_t it = 0; it < iters; it++) {
        rk_value g = rk_build_add(k, tid, kn_i32(k, (int32_t)(it * s->block_size)));
        rk_value c = rk_build_and(k, g, kn_i32(k, (int32_t)TN - 1));
        rk_value rv = rk_build_lshr(k, g, kn_i32(k, (int32_t)shift_of(TN)));
        rk_value r0 = rk_build_mul(k, rv, kn_i32(k, (int32_t)vec));
        rk_value el[16];
        for (uint32_t i = 0; i < vec; i++) {
            rk_value rr = i ? rk_build_add(k, r0, kn_i32(k, (int32_t)i)) : r0;
            rk_value idx[2] = {rr, c};
            el[i] = rk_load_smem(k, lds, idx, 1);
        }
        rk_value val = vec > 1 ? rk_build_vpack(k, el, vec) : el[0];
        rk_value ycol = rk_build_add(k, tp.col0, c);      /* row of Y within matrix b */
        rk_value act = rk_build_cmp(k, "lt", ycol, N);
        rk_value yrow = rk_build_add(k, tp.ybase, ycol);
        rk_tile_row yr = rk_tile_row_view(k, Y, s->dtype, yrow, M, M, act, vec, RK_TAIL_MASKED);
        rk_value yoff = rk_build_add(k, tp.row0, r0);
        rk_tile_row_store(k, &yr, &yoff, 1, &val);
    }
}

const kn_family kn_permute = {
    .name = "permute", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = dims, .ndims = RK_COUNTOF(dims),
    .scalars = scalars, .nscalars = RK_COUNTOF(scalars), .defaults = defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build,
    .cost = cost, .reference = kn_permute_reference, .param_align = kn_transpose_param_align,
};
