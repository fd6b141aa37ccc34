/* rocke — grouped GEMM: G independent problems in one launch on the mma
 * path. A device table gives each group its extents, leading dimensions,
 * element offsets into the shared buffers (A, B, C and the epilogue's
 * operands) and its first tile; grid x covers every group's tiles, and each
 * block finds its group by a binary search over the first-tile column, then
 * runs the GEMM body. Layer: kernels. */
#include <math.h>
#include <stdlib.h>

#include "gemm_hopper.h"

/* One i64 row of the table per group. The epilogue's operands are placed
 * like the group's output: a bias (per column) at element VOFF of its
 * vector buffer, a bias_row at element ROW0 of its [M] vector, an add/mul
 * tensor at COFF with C's leading dimension. */
enum { GT_M, GT_N, GT_K, GT_LDA, GT_LDB, GT_LDC, GT_AOFF, GT_BOFF, GT_COFF, GT_TILE0, GT_ROW0, GT_VOFF, GT_COLS };
#define GT_COLS_TEXT "12"
_Static_assert(GT_COLS == 12, "GT_COLS_TEXT spells GT_COLS");
/* halvings of the search: enough for RK_GEMM_GROUPS_MAX groups */
enum { GT_SEARCH_STEPS = 11 };
_Static_assert(1u << (GT_SEARCH_STEPS - 1) >= RK_GEMM_GROUPS_MAX, "the search covers every group");

static const rk_dim_decl dims[] = {
    {"groups", 8, "problems in the table"},
    {"M", 1024, "rows of every group together (A's and C's rows)"},
    {"N", 1024, "columns of the widest group"},
    {"K", 1024, "the reduction of the deepest group"},
};
enum { D_G, D_M, D_N, D_K };

static const rk_scalar_decl scalars[] = {
    {"G", RK_S_I32, RK_SC_DIM, "groups", NULL, 0, "groups in the table"},
    {"alpha", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 1.0, "--fuse scale factor"},
    {"alpha1", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 1.0, "second scale factor"},
};

static bool a_row(const rk_gemm_spec *s) { return s->layout == RK_GEMM_RR || s->layout == RK_GEMM_RC; }
static bool b_row(const rk_gemm_spec *s) { return s->layout == RK_GEMM_RR || s->layout == RK_GEMM_CR; }
static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Blocks that cover every list of `groups` groups of M rows in all and at
 * most N columns: the sum of ceil(M_g / bm) is at most (M + G (bm - 1)) / bm. */
static uint64_t grid_blocks(const rk_gemm_spec *s, const rk_shape *sh) {
    uint64_t G = sh->dim[D_G], M = sh->dim[D_M], N = sh->dim[D_N];
    return (M + G * (s->tile[0] - 1)) / s->tile[0] * cdiv(N, s->tile[1]);
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    rk_gemm_spec *s = &in->u.gemm;
    uint64_t M = sh->dim[D_M], N = sh->dim[D_N], K = sh->dim[D_K];
    if (!(locked >> KN_GK_WAVE & 1)) s->wave = t->wave_size;
    if (!(locked >> KN_GK_VA & 1)) s->vec_a = kn_gemm_vec_for(a_row(s) ? K : M);
    if (!(locked >> KN_GK_VB & 1)) s->vec_b = kn_gemm_vec_for(b_row(s) ? N : K);
    /* ragged groups (MoE) are often short: the largest tile that still gives
     * every unit a block */
    static const uint32_t cand[][5] = {{128, 128, 32, 2, 2}, {64, 128, 32, 2, 2}, {64, 64, 32, 2, 2}};
    size_t pick = RK_COUNTOF(cand) - 1;
    for (size_t i = 0; i < RK_COUNTOF(cand); i++) {
        rk_gemm_spec c = *s;
        c.tile[0] = cand[i][0];
        c.tile[1] = cand[i][1];
        if (grid_blocks(&c, sh) >= t->compute_units) { pick = i; break; }
    }
    if (!(locked >> KN_GK_TILE & 1))
        for (int i = 0; i < 3; i++) s->tile[i] = cand[pick][i];
    if (!(locked >> KN_GK_WARPS & 1)) {
        s->warps[0] = cand[pick][3];
        s->warps[1] = cand[pick][4];
    }
    if (!(locked >> KN_GK_STAGES & 1)) s->stages = t->vendor == RK_VENDOR_AMD ? 2 : (K > 2 * s->tile[2] ? 4 : 2);
    if (!(locked >> KN_GK_SPLIT & 1)) s->split_k = 1;
    if (!(locked >> KN_GK_PATH & 1)) s->path = RK_GEMM_PATH_MMA;
    kn_gemm_tune_epilogue(s, t, locked);
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_gemm_spec *s = &in->u.gemm;
    if (s->wave != t->wave_size)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: knob 'wave' = %u, but %s runs %u-lane waves", s->wave, t->name,
                       t->wave_size);
    if (s->split_k != 1)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: knob 'split_k' = %u, but groups are not split (legal: 1)",
                       s->split_k);
    if (s->cluster)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: knob 'cluster' = %u is offered by the gemm family's wgmma "
                       "path only (legal here: 0)", s->cluster);
    if (s->path != RK_GEMM_PATH_MMA)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: knob 'path' = %s is not supported (legal: mma)",
                       s->path == RK_GEMM_PATH_STREAM ? "stream" : "wgmma");
    if (kn_gemm_hopper_f8(s))
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: dtype %s is offered by the gemm family only (legal here: f16, "
                       "bf16)", kn_dtype_name(s->dtype));
    if (s->schedule != RK_GEMM_SCHED_PLAIN || s->blocks)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: knobs 'schedule' and 'blocks' are for path=wgmma (legal: "
                       "schedule=plain blocks=0)");
    if (s->pad != RK_GEMM_PAD_NONE)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: knob 'pad' is for gemm on path=wgmma (legal here: pad=none)");
    kn_gemm_plan p;
    return kn_gemm_plan_make(s, t, false, &p);
}

static rk_status check_shape(const rk_instance *in, const rk_shape *sh) {
    const rk_gemm_spec *s = &in->u.gemm;
    uint64_t G = sh->dim[D_G], M = sh->dim[D_M], N = sh->dim[D_N], K = sh->dim[D_K];
    if (G > RK_GEMM_GROUPS_MAX)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: %llu groups, at most %u", (unsigned long long)G,
                       RK_GEMM_GROUPS_MAX);
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: M (all groups' rows), N and K must each be < 2^31");
    if (grid_blocks(s, sh) > INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: the groups need more blocks than a grid holds");
    uint64_t ea = a_row(s) ? K : M, eb = b_row(s) ? N : K;
    if (ea % s->vec_a)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: A's leading dimension %s = %llu is not a multiple of vec_a = %u: "
                       "build with --vec-a %u", a_row(s) ? "K" : "M", (unsigned long long)ea, s->vec_a,
                       kn_gemm_vec_for(ea));
    if (eb % s->vec_b)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: B's leading dimension %s = %llu is not a multiple of vec_b = %u: "
                       "build with --vec-b %u", b_row(s) ? "N" : "K", (unsigned long long)eb, s->vec_b,
                       kn_gemm_vec_for(eb));
    return RK_OK;
}

static rk_status group_shape(const rk_instance *in, const rk_gemm_group *g, uint32_t n, rk_shape *out) {
    const rk_gemm_spec *s = &in->u.gemm;
    if (n == 0 || n > RK_GEMM_GROUPS_MAX)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: %u groups (legal: 1..%u)", n, RK_GEMM_GROUPS_MAX);
    uint64_t M = 0, N = 0, K = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (g[i].m > INT32_MAX || g[i].n > INT32_MAX || g[i].k > INT32_MAX)
            return rk_fail(RK_ERR_INVALID, "grouped_gemm: group %u: M, N and K must each be < 2^31", i);
        const char *an = a_row(s) ? "K" : "M", *bn = b_row(s) ? "N" : "K";
        uint64_t ea = a_row(s) ? g[i].k : g[i].m, eb = b_row(s) ? g[i].n : g[i].k;
        if (ea % s->vec_a)
            return rk_fail(RK_ERR_INVALID, "grouped_gemm: group %u (%llu,%llu,%llu): %s = %llu is not a multiple of "
                           "vec_a = %u (A is read in vectors along it): build with --vec-a %u", i,
                           (unsigned long long)g[i].m, (unsigned long long)g[i].n, (unsigned long long)g[i].k, an,
                           (unsigned long long)ea, s->vec_a, kn_gemm_vec_for(ea));
        if (eb % s->vec_b)
            return rk_fail(RK_ERR_INVALID, "grouped_gemm: group %u (%llu,%llu,%llu): %s = %llu is not a multiple of "
                           "vec_b = %u (B is read in vectors along it): build with --vec-b %u", i,
                           (unsigned long long)g[i].m, (unsigned long long)g[i].n, (unsigned long long)g[i].k, bn,
                           (unsigned long long)eb, s->vec_b, kn_gemm_vec_for(eb));
        M += g[i].m;
        N = g[i].n > N ? g[i].n : N;
        K = g[i].k > K ? g[i].k : K;
    }
    if (!M || !N || !K)
        return rk_fail(RK_ERR_INVALID, "grouped_gemm: every group is empty (the rows, the widest N and the deepest K "
                       "must each be >= 1)");
    *out = (rk_shape){.rank = 4, .dim = {n, M, N, K}};
    return RK_OK;
}

/* Group i of the default list of the problem's shape: every group N x K,
 * the rows cut into equal runs (whole vectors when A is column-major), the
 * rest in the last group. */
static rk_gemm_group default_group(const rk_problem *p, uint32_t i) {
    const rk_gemm_spec *s = &p->inst.u.gemm;
    uint64_t G = p->shape.dim[D_G], M = p->shape.dim[D_M];
    uint64_t unit = a_row(s) ? 1 : s->vec_a, base = M / G / unit * unit;
    uint64_t m = i + 1 < G ? base : M - (G - 1) * base;
    return (rk_gemm_group){m, p->shape.dim[D_N], p->shape.dim[D_K]};
}

/* The table of list g (NULL: the default list of the shape). */
static void fill_table(rk_problem *p, const rk_gemm_group *list) {
    const rk_gemm_spec *s = &p->inst.u.gemm;
    int ti = kn_buf_index(p, "Groups");
    RK_ASSERT(ti >= 0, "grouped_gemm: the signature holds the table");
    int64_t *t = p->buf[ti].data;
    uint64_t G = p->shape.dim[D_G], M = p->shape.dim[D_M], N = p->shape.dim[D_N], K = p->shape.dim[D_K];
    uint64_t row0 = 0, tile0 = 0;
    for (uint32_t i = 0; i < G; i++) {
        rk_gemm_group g = list ? list[i] : default_group(p, i);
        int64_t *r = t + (uint64_t)i * GT_COLS;
        r[GT_M] = (int64_t)g.m;
        r[GT_N] = (int64_t)g.n;
        r[GT_K] = (int64_t)g.k;
        r[GT_LDA] = (int64_t)(a_row(s) ? K : M);
        r[GT_LDB] = (int64_t)(b_row(s) ? N : K);
        r[GT_LDC] = (int64_t)N;
        r[GT_AOFF] = (int64_t)(a_row(s) ? row0 * K : row0);
        r[GT_BOFF] = (int64_t)(i * K * N);
        r[GT_COFF] = (int64_t)(row0 * N);
        r[GT_TILE0] = (int64_t)tile0;
        r[GT_ROW0] = (int64_t)row0;
        r[GT_VOFF] = (int64_t)(i * N);
        tile0 += cdiv(g.m, s->tile[0]) * cdiv(g.n, s->tile[1]);
        row0 += g.m;
    }
}

static void fix_inputs(rk_problem *p) { fill_table(p, NULL); }

static void signature(const rk_instance *in, rk_ksig *sg) {
    const rk_gemm_spec *s = &in->u.gemm;
    kn_sig_add(sg, "A", true, s->dtype, RK_KP_IN, a_row(s) ? "M,K" : "K,M");
    kn_sig_add(sg, "B", true, s->dtype, RK_KP_IN, b_row(s) ? "groups,K,N" : "groups,N,K");
    kn_sig_add(sg, "C", true, s->out_dtype, RK_KP_OUT, "M,N");
    kn_sig_add(sg, "Groups", true, RK_S_I64, RK_KP_IN, "groups," GT_COLS_TEXT);
    kn_sig_add(sg, "G", false, RK_S_I32, RK_KP_SCALAR, NULL);
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t n = rk_epi_params(&s->fuse, s->out_dtype, ps);
    for (uint32_t i = 0; i < n; i++) {
        if (!ps[i].ptr) {
            /* an add/mul tensor shares C's layout: the group's ldc serves as its leading dimension */
            if (ps[i].type == RK_S_F32) kn_sig_add(sg, kn_gemm_epi_name(ps[i].name), false, ps[i].type, RK_KP_SCALAR, NULL);
            continue;
        }
        rk_epi_kind kind = s->fuse.s[ps[i].step].kind;
        const char *shape = kind == RK_EPI_BIAS ? "groups,N" : kind == RK_EPI_BIAS_ROW ? "M" : "M,N";
        kn_sig_add(sg, kn_gemm_epi_name(ps[i].name), true, ps[i].type, RK_KP_IN, shape);
    }
}

/* grid_blocks as a program: (M + G (bm - 1)) / bm * ceil(N / bn) */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_gemm_spec *s = &in->u.gemm;
    g->block[0] = s->warps[0] * s->warps[1] * s->wave;
    kn_geom_dim(g, D_M);
    kn_geom_dim(g, D_G);
    kn_geom_const(g, s->tile[0] - 1);
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_op(g, RK_GEOM_ADD);
    kn_geom_const(g, s->tile[0]);
    kn_geom_op(g, RK_GEOM_DIV);
    kn_geom_cdiv_dim(g, D_N, s->tile[1]);
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_axis(g);
}

static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    const rk_gemm_spec *s = &in->u.gemm;
    double G = (double)sh->dim[D_G], M = (double)sh->dim[D_M], N = (double)sh->dim[D_N], K = (double)sh->dim[D_K];
    *flops = 2.0 * M * N * K;   /* exact when every group is N x K (MoE) */
    *bytes = (M * K + G * K * N) * rk_tile_elem_bytes(s->dtype) + M * N * rk_tile_elem_bytes(s->out_dtype);
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    (void)in;
    (void)kp;
    *lo = -1.0;
    *hi = 1.0;
    *away = 0;
}

/* Entry `col` of table row `row` (i32 row): i64. */
static rk_value table_at(rk_kernel *k, rk_value T, rk_value row, uint32_t col) {
    rk_value cols = rk_const_i32(k, GT_COLS);
    rk_value base = rk_build_mul(k, row, cols);
    rk_value c = rk_const_i32(k, (int32_t)col);
    rk_value at = rk_build_add(k, base, c);
    rk_value at64 = rk_build_sext(k, at, RK_T_I64);
    return rk_load_global(k, T, at64, 1);
}

static rk_value table_i32(rk_kernel *k, rk_value T, rk_value row, uint32_t col) {
    rk_value v = table_at(k, T, row, col);
    return rk_build_trunc(k, v, RK_T_I32);
}

/* The pointer moved by an i64 count of elements. */
static rk_value moved(rk_kernel *k, rk_value ptr, rk_value elems, rk_scalar elem) {
    rk_value eb = rk_const_i64(k, rk_tile_elem_bytes(elem));
    rk_value off = rk_build_mul(k, elems, eb);
    return rk_build_global_ptr_add(k, ptr, off);
}

/* A table offset for a block with a tile, else 0. Masked-off loads still
 * read their view's first element, and a block past the last group's tiles
 * takes the last group, whose offsets lie one past the end of its buffers
 * when that group is empty; element 0 always exists (some group is
 * nonempty). */
static rk_value tile_offset(rk_kernel *k, rk_value valid, rk_value off) {
    rk_value zero = rk_const_i64(k, 0);
    return rk_build_select(k, valid, off, zero);
}

/* The chain's arguments for the block's group (table row `row`): tensor
 * operands moved to the group's part, an add/mul tensor's leading dimension
 * the group's ldc; `params` are the kernel's epilogue parameters in
 * signature order. */
static void group_operands(rk_kernel *k, const rk_gemm_spec *s, rk_value T, rk_value row, rk_value valid,
                           rk_value coff, rk_value ldc, const rk_value *params, rk_epi_args *ea) {
    ea->chain = &s->fuse;
    rk_epi_param ps[RK_EPI_MAX_PARAMS];
    uint32_t n = rk_epi_params(&s->fuse, s->out_dtype, ps), next = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!ps[i].ptr) {
            ea->p[i] = ps[i].type == RK_S_F32 ? params[next++] : ldc;
            continue;
        }
        rk_epi_kind kind = s->fuse.s[ps[i].step].kind;
        rk_value off = coff;
        if (kind == RK_EPI_BIAS || kind == RK_EPI_BIAS_ROW)
            off = tile_offset(k, valid, table_at(k, T, row, kind == RK_EPI_BIAS ? GT_VOFF : GT_ROW0));
        ea->p[i] = moved(k, params[next++], off, ps[i].type);
    }
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_gemm_spec *s = &in->u.gemm;
    rk_value T = p[3], G = p[4];
    kn_gemm_plan pl;
    kn_gemm_io io = {0};
    kn_gemm_begin(k, s, t, false, &pl, &io.w);

    /* the block's group: the last whose first tile is <= the block id;
     * start[lo] <= pid < start[hi] holds throughout (start[G]: infinity), and
     * once hi = lo + 1 the step keeps lo */
    rk_value pid = kn_gemm_block_id(k, s);
    rk_value pid64 = rk_build_sext(k, pid, RK_T_I64);
    rk_value lo = rk_const_i32(k, 0), hi = G, one = rk_const_i32(k, 1);
    for (uint32_t i = 0; i < GT_SEARCH_STEPS; i++) {
        rk_value sum = rk_build_add(k, lo, hi);
        rk_value mid = rk_build_lshr(k, sum, one);
        rk_value start = table_at(k, T, mid, GT_TILE0);
        rk_value in_mid = rk_build_cmp(k, "le", start, pid64);
        rk_value nlo = rk_build_select(k, in_mid, mid, lo);
        hi = rk_build_select(k, in_mid, hi, mid);
        lo = nlo;
    }
    rk_value M = table_i32(k, T, lo, GT_M), N = table_i32(k, T, lo, GT_N), K = table_i32(k, T, lo, GT_K);
    io.lda = table_i32(k, T, lo, GT_LDA);
    io.ldb = table_i32(k, T, lo, GT_LDB);
    io.ldc = table_i32(k, T, lo, GT_LDC);
    rk_value tile0 = table_at(k, T, lo, GT_TILE0);

    /* the tile inside the group, in grouped-M order; blocks past the last
     * group's tiles (the grid is a bound) run an empty problem at offset 0 */
    rk_value local64 = rk_build_sub(k, pid64, tile0);
    rk_value local = rk_build_trunc(k, local64, RK_T_I32);
    rk_ix tm, tn;
    kn_gemm_tile_origin(k, pl.bm, pl.bn, s->group_m, local, M, N, &tm, &tn, &io.m0, &io.n0);
    rk_ix tiles = rk_ix_mul(k, tm, tn);
    rk_value ntiles = rk_ix_value(k, tiles);
    rk_value valid = rk_build_cmp(k, "lt", local, ntiles);
    rk_value aoff = tile_offset(k, valid, table_at(k, T, lo, GT_AOFF));
    rk_value boff = tile_offset(k, valid, table_at(k, T, lo, GT_BOFF));
    rk_value coff = tile_offset(k, valid, table_at(k, T, lo, GT_COFF));
    io.A = moved(k, p[0], aoff, s->dtype);
    io.B = moved(k, p[1], boff, s->dtype);
    io.C = moved(k, p[2], coff, s->out_dtype);
    rk_epi_args ea;
    group_operands(k, s, T, lo, valid, coff, io.ldc, p + 5, &ea);
    rk_value zero = rk_const_i32(k, 0);
    io.M = rk_build_select(k, valid, M, zero);
    io.N = N;
    io.K = rk_build_select(k, valid, K, zero);
    rk_value res[192];
    kn_gemm_mainloop(k, &pl, s, &io, res);
    kn_gemm_epilogue(k, &pl, s, &io, &ea, res);
}

/* Each group from its table row; rows no group covers stay 0. Past 2^30
 * multiply-adds in all, each group checks sampled rows (first, last, evenly
 * spaced; every column). */
static void reference(const rk_problem *p, double **want, double **tol) {
    const rk_gemm_spec *s = &p->inst.u.gemm;
    const rk_host_buf *A = kn_buf(p, "A"), *B = kn_buf(p, "B"), *T = kn_buf(p, "Groups");
    int c = kn_buf_index(p, "C");
    kn_gemm_ref_chain ch;
    kn_gemm_ref_chain_of(p, &ch);
    uint64_t G = p->shape.dim[D_G], budget = (1ull << 30) / G;
    for (uint64_t i = 0; i < p->buf[c].count; i++) want[c][i] = tol[c][i] = 0;
    for (uint64_t g = 0; g < G; g++) {
        double e[GT_COLS];
        for (uint32_t j = 0; j < GT_COLS; j++) e[j] = kn_get(T, g * GT_COLS + j);
        uint64_t M = (uint64_t)e[GT_M], N = (uint64_t)e[GT_N], K = (uint64_t)e[GT_K], ldc = (uint64_t)e[GT_LDC];
        uint64_t coff = (uint64_t)e[GT_COFF], work = N * K > 0 ? N * K : 1, rows = M;
        if (M * work > budget) rows = budget / work < 16 ? 16 : budget / work;
        if (rows > M) rows = M;
        kn_gemm_refmat am = {A, (uint64_t)e[GT_AOFF], (uint64_t)e[GT_LDA], a_row(s)};
        kn_gemm_refmat bm = {B, (uint64_t)e[GT_BOFF], (uint64_t)e[GT_LDB], b_row(s)};
        if (rows < M)
            for (uint64_t m = 0; m < M; m++)
                for (uint64_t n = 0; n < N; n++) tol[c][coff + m * ldc + n] = INFINITY;
        for (uint64_t r = 0; r < rows; r++) {
            uint64_t m = rows == M ? r : (rows == 1 ? 0 : r * (M - 1) / (rows - 1));
            for (uint64_t n = 0; n < N; n++) {
                uint64_t at = coff + m * ldc + n, d_at[RK_EPI_MAX_STEPS];
                for (uint32_t i = 0; i < RK_EPI_MAX_STEPS; i++) d_at[i] = at;
                double ops[RK_EPI_MAX_STEPS];
                kn_gemm_ref_operands(s, &ch, (uint64_t)e[GT_VOFF] + n, (uint64_t)e[GT_ROW0] + m, d_at, ops);
                kn_gemm_ref_one(s, &am, &bm, m, n, K, ops, &want[c][at], &tol[c][at]);
            }
        }
    }
}

rk_status rk_gemm_groups_parse(const char *text, rk_gemm_group *out, uint32_t max, uint32_t *n) {
    *n = 0;
    const char *at = text ? text : "";
    do {
        size_t len = strcspn(at, ";");
        if (*n == max)
            return rk_fail(RK_ERR_INVALID, "groups: more than %u groups (legal: 1..%u)", max, max);
        uint64_t v[3];
        const char *q = at;
        int got = 0;
        while (got < 3 && q < at + len && *q >= '0' && *q <= '9') {
            char *end;
            v[got++] = strtoull(q, &end, 10);
            q = end;
            if (got < 3 && q < at + len && *q == ',') q++;
            else break;
        }
        if (got != 3 || q != at + len || v[0] > INT32_MAX || v[1] > INT32_MAX || v[2] > INT32_MAX)
            return rk_fail(RK_ERR_INVALID, "groups: group %u '%.*s' is not M,N,K (three integers 0..2^31-1; groups "
                           "are separated by ';', e.g. 64,4096,4096;17,4096,4096)", *n, (int)len, at);
        out[(*n)++] = (rk_gemm_group){v[0], v[1], v[2]};
        at += len;
    } while (*at++ == ';');
    return RK_OK;
}

const kn_family kn_grouped_gemm = {
    .name = "grouped_gemm", .knobs = kn_gemm_knobs, .nknobs = KN_GEMM_NKNOBS, .dims = dims,
    .ndims = RK_COUNTOF(dims), .scalars = scalars, .nscalars = RK_COUNTOF(scalars), .defaults = kn_gemm_defaults,
    .tune = tune, .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry,
    .build = build, .cost = cost, .reference = reference, .input_range = input_range, .fix_inputs = fix_inputs,
    .group_shape = group_shape, .group_fill = fill_table,
};
