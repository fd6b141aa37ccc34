/* rocke — 2-D transpose X[M, N] -> Y[N, M] through an LDS tile.
 * Phase 1: 16-byte vector loads of X rows into LDS rows padded by lds_pad
 * elements (stored in the widest piece the padded pitch keeps aligned).
 * Phase 2: each thread gathers vec elements of one LDS column and writes them
 * as one vector of a Y row; lanes pair up along Y rows so every 32-byte
 * sector is written whole. With 4 elements of padding, column reads of the
 * lanes of a wave fall in distinct banks (docs/kernels.md). Layer: kernels. */
#include <stdio.h>

#include "kern_int.h"

static const rk_knob knobs[] = {
    KN_DTYPE("dtype", "", u.transpose.dtype, "element type"),
    KN_U32("tile_m", "tm", u.transpose.tile_m, kn_legal_tile, true, "tile rows (of X)"),
    KN_U32("tile_n", "tn", u.transpose.tile_n, kn_legal_tile, true, "tile columns (of X)"),
    KN_U32("vec", "v", u.transpose.vec, kn_legal_vec, true, "elements per vector access (<= 16 bytes)"),
    KN_U32("block_size", "b", u.transpose.block_size, kn_legal_block, true, "threads per block"),
    KN_U32("lds_pad", "p", u.transpose.lds_pad, kn_legal_pad, true, "LDS row padding in elements"),
    KN_PBOOL("split", "sp", u.transpose.split, "split sub-row views: aligned vectors at any M, N and base"),
    KN_PBOOL("m_fast", "mf", u.transpose.m_fast,
             "tile order: consecutive blocks take consecutive tiles down M (whole Y rows), not along N"),
};
enum { K_DT, K_TM, K_TN, K_VEC, K_BLOCK, K_PAD, K_SPLIT, K_MFAST };

static void defaults(rk_instance *in) {
    in->u.transpose = (rk_transpose_spec){.dtype = RK_S_F16, .tile_m = 64, .tile_n = 64, .vec = 8,
                                          .block_size = 256, .lds_pad = 4, .split = false, .m_fast = false};
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    (void)t;
    rk_transpose_spec *s = &in->u.transpose;
    if (!(locked >> K_VEC & 1)) s->vec = 16 / rk_tile_elem_bytes(s->dtype);
    if (!(locked >> K_TM & 1)) s->tile_m = 64;
    if (!(locked >> K_TN & 1)) s->tile_n = 64;
    if (!(locked >> K_BLOCK & 1)) s->block_size = 256;
    if (!(locked >> K_PAD & 1)) s->lds_pad = 4;
    /* rows of X (N) and of Y (M) of a multiple of vec start aligned: the
     * plain tile, whose code is what it always was */
    if (!(locked >> K_SPLIT & 1)) s->split = sh->dim[0] % s->vec || sh->dim[1] % s->vec;
    /* a Y row (M elements) that is not whole 32-byte sectors shares a sector
     * with the next row at each tile's edge: walk the tiles down M, so the
     * blocks writing a Y row's pieces run together and each shared sector
     * is completed in L2 while it is still there (along N, the tile that
     * completes it comes ceil(N / tile_n) blocks later) */
    uint32_t eb = rk_tile_elem_bytes(s->dtype);
    if (!(locked >> K_MFAST & 1)) s->m_fast = (sh->dim[0] * eb) % 32 != 0 && sh->dim[0] > s->tile_m;
}

static uint32_t lds_bytes(const rk_transpose_spec *s) {
    return s->tile_m * kn_transpose_lds_cols(s) * rk_tile_elem_bytes(s->dtype);
}

/* Vectors one thread moves with block b: the plain tile's share of the
 * tile, plus (split) the extra pass over the head vectors of the longer
 * tile side (kn_transpose_tile_split). */
static uint32_t vectors_per_thread(const rk_transpose_spec *s, uint32_t b) {
    uint32_t n = s->tile_m * s->tile_n / s->vec / b, side = s->tile_m > s->tile_n ? s->tile_m : s->tile_n;
    return s->split ? n + (side + b - 1) / b : n;
}

/* The most the builds hold in flight per thread (transpose_split.c: 32). */
static uint32_t max_vectors(const rk_transpose_spec *s) { return s->split ? 32 : 16; }

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_transpose_spec *s = &in->u.transpose;
    uint32_t e = rk_tile_elem_bytes(s->dtype);
    if (s->vec * e > 16)
        return rk_fail(RK_ERR_INVALID, "knob 'vec' must be at most %u for %s (16-byte accesses), got %u", 16 / e,
                       kn_dtype_name(s->dtype), s->vec);
    if (s->tile_m % s->vec || s->tile_n % s->vec)
        return rk_fail(RK_ERR_INVALID, "knobs 'tile_m' and 'tile_n' must be multiples of vec (%u), got %ux%u",
                       s->vec, s->tile_m, s->tile_n);
    if (s->block_size > t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "knob 'block_size' must be at most %u on %s, got %u", t->max_workgroup,
                       t->name, s->block_size);
    uint32_t items = s->tile_m * s->tile_n / s->vec;
    if (items % s->block_size)
        return rk_fail(RK_ERR_INVALID,
                       "knob 'block_size' must divide tile_m*tile_n/vec = %u (each thread moves whole vectors), got %u",
                       items, s->block_size);
    if (vectors_per_thread(s, s->block_size) > max_vectors(s)) {
        /* the build keeps every thread's vectors in flight at once */
        uint32_t least = 0;
        for (const uint32_t *b = kn_legal_block; *b && !least; b++)
            if (*b <= t->max_workgroup && !(items % *b) && vectors_per_thread(s, *b) <= max_vectors(s)) least = *b;
        char fix[96] = "a larger vec or smaller tiles";
        if (least) snprintf(fix, sizeof fix, "block_size >= %u, a larger vec or smaller tiles", least);
        return rk_fail(RK_ERR_INVALID,
                       "knobs 'tile_m' x 'tile_n' / 'vec' / 'block_size' = %u x %u / %u / %u give %u vectors per "
                       "thread, at most %u with split=%s (tile_m*tile_n/vec/block_size%s); choose %s",
                       s->tile_m, s->tile_n, s->vec, s->block_size, vectors_per_thread(s, s->block_size),
                       max_vectors(s), s->split ? "true" : "false",
                       s->split ? " + ceil(max(tile_m, tile_n)/block_size) edge vectors" : "", fix);
    }
    uint32_t cap = t->lds_bytes < 49152 ? t->lds_bytes : 49152;
    if (lds_bytes(s) > cap)
        return rk_fail(RK_ERR_INVALID,
                       "knobs 'tile_m' x ('tile_n' + 'lds_pad'%s) need %u bytes of LDS, at most %u",
                       s->split ? " + vec (split)" : "", lds_bytes(s), cap);
    return RK_OK;
}

static rk_status check_shape(const rk_instance *in, const rk_shape *s) {
    (void)in;
    const uint64_t M = s->dim[0], N = s->dim[1];     /* kn_row_dims */
    if (M > INT32_MAX || N > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "shape %llu,%llu: each dimension must be < 2^31", (unsigned long long)M,
                       (unsigned long long)N);
    return RK_OK;
}

static void signature(const rk_instance *in, rk_ksig *s) {
    kn_sig_add(s, "X", true, in->u.transpose.dtype, RK_KP_IN, "M,N");
    kn_sig_add(s, "Y", true, in->u.transpose.dtype, RK_KP_OUT, "N,M");
    kn_sig_add(s, "M", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(s, "N", false, RK_S_I32, RK_KP_SCALAR, NULL);
}

/* ceil(M / tile_m) * ceil(N / tile_n) */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_transpose_spec *s = &in->u.transpose;
    kn_geom_cdiv_dim(g, 0, s->tile_m);
    kn_geom_cdiv_dim(g, 1, s->tile_n);
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_axis(g);
    g->block[0] = s->block_size;
}

static void cost(const rk_instance *in, const rk_shape *s, double *bytes, double *flops) {
    *bytes = 2.0 * (double)s->dim[0] * (double)s->dim[1] * rk_tile_elem_bytes(in->u.transpose.dtype);
    *flops = 0;
}

static uint32_t log2u(uint32_t x) {
    uint32_t n = 0;
    while ((1u << n) < x) n++;
    return n;
}

/* The tile of block bid in a 1-D grid: tm = bid / tiles_n, tn = bid % tiles_n
 * (m_fast: tn = bid / tiles_m, tm = bid % tiles_m). */
static void tile_origin(rk_kernel *k, const rk_transpose_spec *s, rk_value bid, rk_value M, rk_value N,
                        rk_value *row0, rk_value *col0) {
    rk_value tm, tn;
    if (s->m_fast) {
        rk_value tm_c = kn_i32(k, (int32_t)s->tile_m);
        rk_value ntm = rk_build_udiv(k, rk_build_add(k, M, kn_i32(k, (int32_t)s->tile_m - 1)), tm_c);
        tn = rk_build_udiv(k, bid, ntm);
        tm = rk_build_sub(k, bid, rk_build_mul(k, tn, ntm));
    } else {
        rk_value tn_c = kn_i32(k, (int32_t)s->tile_n);
        rk_value ntn = rk_build_udiv(k, rk_build_add(k, N, kn_i32(k, (int32_t)s->tile_n - 1)), tn_c);
        tm = rk_build_udiv(k, bid, ntn);
        tn = rk_build_sub(k, bid, rk_build_mul(k, tm, ntn));
    }
    *row0 = rk_build_mul(k, tm, kn_i32(k, (int32_t)s->tile_m));
    *col0 = rk_build_mul(k, tn, kn_i32(k, (int32_t)s->tile_n));
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    (void)t;
    const rk_transpose_spec *s = &in->u.transpose;
    uint32_t TM = s->tile_m, TN = s->tile_n, vec = s->vec;
    rk_value X = p[0], Y = p[1], M = p[2], N = p[3];
    if (s->split) {
        rk_value bid = rk_build_block_id(k, 0), zero = kn_i32(k, 0);
        kn_tile_at at = {.xbase = zero, .ybase = zero};
        tile_origin(k, s, bid, M, N, &at.row0, &at.col0);
        kn_transpose_tile_split(k, s, &at, X, Y, M, N);
        return;
    }
    uint32_t dims[2] = {TM, TN + s->lds_pad};
    rk_value lds = rk_build_smem_alloc(k, (rk_type){s->dtype}, dims, 2);
    rk_value bid = rk_build_block_id(k, 0), tid = rk_build_thread_id(k, 0);
    rk_value row0, col0;
    tile_origin(k, s, bid, M, N, &row0, &col0);
    uint32_t iters = TM * TN / vec / s->block_size;

    /* phase 1: all loads first (in flight together), then the LDS stores */
    uint32_t cpr = TN / vec;                 /* chunks per tile row */
    rk_value lr[16], lc[16], v[16];
    RK_ASSERT(iters <= 16, "transpose: at most 16 vectors per thread");
    for (uint32_t it = 0; it < iters; it++) {
        rk_value f = rk_build_add(k, tid, kn_i32(k, (int32_t)(it * s->block_size)));
        lr[it] = rk_build_lshr(k, f, kn_i32(k, (int32_t)log2u(cpr)));
        rk_value vec_c = kn_i32(k, (int32_t)vec);
        lc[it] = rk_build_mul(k, rk_build_and(k, f, kn_i32(k, (int32_t)cpr - 1)), vec_c);
        rk_value gr = rk_build_add(k, row0, lr[it]);
        rk_value gc = rk_build_add(k, col0, lc[it]);
        rk_value act = rk_build_cmp(k, "lt", gr, M);
        rk_tile_row xr = rk_tile_row_view(k, X, s->dtype, gr, N, N, act, vec, RK_TAIL_MASKED);
        rk_tile_row_load(k, &xr, &gc, 1, 0.0, &v[it]);
    }
    for (uint32_t it = 0; it < iters; it++) kn_transpose_lds_put(k, s, lds, lr[it], lc[it], v[it]);
    rk_build_sync_lds_only(k);

    /* phase 2: g -> (rv, c) with pairs of row-chunks adjacent in the wave */
    uint32_t rvn = TM / vec, gp = rvn >= 2 ? 2 : 1;
    for (uint32_t it = 0; it < iters; it++) {
        rk_value g = rk_build_add(k, tid, kn_i32(k, (int32_t)(it * s->block_size)));
        rk_value lo = gp == 2 ? rk_build_and(k, g, kn_i32(k, 1)) : kn_i32(k, 0);
        rk_value rest = gp == 2 ? rk_build_lshr(k, g, kn_i32(k, 1)) : g;
        rk_value c = rk_build_and(k, rest, kn_i32(k, (int32_t)TN - 1));
        rk_value hi = rk_build_lshr(k, rest, kn_i32(k, (int32_t)log2u(TN)));
        rk_value rv = gp == 2 ? rk_build_add(k, rk_build_mul(k, hi, kn_i32(k, 2)), lo) : hi;
        rk_value r0 = rk_build_mul(k, rv, kn_i32(k, (int32_t)vec));
        rk_value el[16];
        for (uint32_t i = 0; i < vec; i++) {
            rk_value idx[2] = {i ? rk_build_add(k, r0, kn_i32(k, (int32_t)i)) : r0, c};
            el[i] = rk_load_smem(k, lds, idx, 1);
        }
        rk_value val = vec > 1 ? rk_build_vpack(k, el, vec) : el[0];
        rk_value yrow = rk_build_add(k, col0, c);
        rk_value ycol = rk_build_add(k, row0, r0);
        rk_value act = rk_build_cmp(k, "lt", yrow, N);
        rk_tile_row yr = rk_tile_row_view(k, Y, s->dtype, yrow, M, M, act, vec, RK_TAIL_MASKED);
        rk_tile_row_store(k, &yr, &ycol, 1, &val);
    }
}

const kn_family kn_transpose = {
    .name = "transpose", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = kn_row_dims, .ndims = 2,
    .scalars = kn_row_scalars, .nscalars = 2, .defaults = defaults, .tune = tune, .validate = validate,
    .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build, .cost = cost,
    .reference = kn_transpose_reference, .param_align = kn_transpose_param_align,
    .shared_problem = true,
};
