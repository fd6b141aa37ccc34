/* rocke — MoE routing: for each row of [tokens, experts] logits, softmax,
 * the k largest probabilities (k <= 8; equal values: the lower expert id
 * first) as f32 weights, optionally renormalised to sum 1, and their i32
 * expert ids, [tokens, k]. A row is read by `threads_per_row` lanes of one
 * wave (butterflies, no LDS): max, sum of exps, then k selection rounds,
 * each the best (value, id) after the previous pick in (value desc, id asc)
 * order, so nothing is marked. Softmax is monotonic: selection runs on the
 * logits. chunks > 0: each lane loads its logits once into registers and
 * every pass works on them; chunks = 0: each pass reads the row again.
 * Layer: kernels. */
#include <math.h>

#include "kern_int.h"

static const uint32_t legal_tpr[] = {1, 2, 4, 8, 16, 32, 64, 0};

static const rk_knob knobs[] = {
    KN_DTYPE("dtype", "", u.topk.dtype, "element type of the logits"),
    KN_BOOL("renormalize", "rn", u.topk.renormalize, "divide the k weights by their sum"),
    KN_U32("wave", "w", u.topk.wave, kn_legal_wave, true, "target wave/warp size (64 CDNA, 32 NVIDIA)"),
    KN_U32("block_size", "b", u.topk.block_size, kn_legal_block, true, "threads per block"),
    KN_U32("threads_per_row", "tr", u.topk.threads_per_row, legal_tpr, true, "lanes sharing a token row"),
    KN_U32_QUIET("chunks", "k", u.topk.chunks, kn_legal_chunks, true,
                 "logits a lane holds in registers (0: every pass reads the row again, any experts)"),
};
enum { K_DT, K_RN, K_W, K_B, K_TPR, K_C };

static const rk_dim_decl dims[] = {
    {"tokens", 4096, "rows of logits"},
    {"experts", 64, "logits per row"},
    {"k", 2, "experts chosen per token (1..8)"},
};
enum { D_T, D_E, D_K };

static const rk_scalar_decl scalars[] = {
    {"tokens", RK_S_I32, RK_SC_DIM, "tokens", NULL, 0, "rows"},
    {"experts", RK_S_I32, RK_SC_DIM, "experts", NULL, 0, "logits per row"},
    {"k", RK_S_I32, RK_SC_DIM, "k", NULL, 0, "experts chosen per token"},
};

/* Logits a lane caches at most (the heuristic's limit; the knob takes 32). */
#define KN_TOPK_CACHED 16u

static void defaults(rk_instance *in) {
    in->u.topk = (rk_topk_softmax_spec){.dtype = RK_S_F32, .renormalize = true, .wave = 64, .block_size = 256,
                                        .threads_per_row = 16};
}

static uint32_t np2(uint64_t x) {
    uint32_t p = 1;
    while (p < x && p < (1u << 30)) p <<= 1;
    return p;
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    rk_topk_softmax_spec *s = &in->u.topk;
    if (!(locked >> K_W & 1)) s->wave = t->wave_size;
    if (!(locked >> K_TPR & 1)) {
        /* about 4 logits per lane, at most a wave */
        uint32_t tpr = np2((sh->dim[D_E] + 3) / 4);
        s->threads_per_row = tpr > s->wave ? s->wave : tpr;
    }
    /* the row in registers when a lane's share is at most KN_TOPK_CACHED
     * logits: loaded once instead of 2k + 2 times */
    if (!(locked >> K_C & 1)) {
        uint64_t c = (sh->dim[D_E] + s->threads_per_row - 1) / s->threads_per_row;
        s->chunks = c <= KN_TOPK_CACHED ? (uint32_t)c : 0;
    }
    if (!(locked >> K_B & 1)) {
        uint32_t b = 256, floor = s->threads_per_row > s->wave ? s->threads_per_row : s->wave;
        while (b > floor && (sh->dim[D_T] * s->threads_per_row + b - 1) / b < 264) b /= 2;
        s->block_size = b;
    }
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_topk_softmax_spec *s = &in->u.topk;
    if (s->wave != t->wave_size)
        return rk_fail(RK_ERR_INVALID, "knob 'wave' must be %u for target %s (its wave size), got %u", t->wave_size,
                       t->name, s->wave);
    if (s->threads_per_row > s->wave || s->threads_per_row > s->block_size)
        return rk_fail(RK_ERR_INVALID, "knob 'threads_per_row' must be at most the wave (%u) and block_size (%u), "
                       "got %u", s->wave, s->block_size, s->threads_per_row);
    if (s->block_size > t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "knob 'block_size' must be at most %u on %s, got %u", t->max_workgroup,
                       t->name, s->block_size);
    return RK_OK;
}

static rk_status check_shape(const rk_instance *in, const rk_shape *sh) {
    const uint64_t T = sh->dim[D_T], E = sh->dim[D_E], K = sh->dim[D_K];
    if (K > 8 || K > E)
        return rk_fail(RK_ERR_INVALID, "topk_softmax: dimension k must be 1..8 and at most experts (%llu), got %llu",
                       (unsigned long long)E, (unsigned long long)K);
    if (T * E > INT32_MAX || E > (1u << 24))
        return rk_fail(RK_ERR_INVALID, "topk_softmax: tokens x experts must be < 2^31 and experts <= 2^24");
    const rk_topk_softmax_spec *s = &in->u.topk;
    if (s->chunks && E > (uint64_t)s->chunks * s->threads_per_row)
        return rk_fail(RK_ERR_INVALID,
                       "shape experts=%llu exceeds this kernel's row capacity %u (threads_per_row x chunks = %u x "
                       "%u); build with chunks=0 or for this shape", (unsigned long long)E,
                       s->chunks * s->threads_per_row, s->threads_per_row, s->chunks);
    return RK_OK;
}

/* X, Weights, Ids, tokens, experts, k */
static void signature(const rk_instance *in, rk_ksig *s) {
    kn_sig_add(s, "X", true, in->u.topk.dtype, RK_KP_IN, "tokens,experts");
    kn_sig_add(s, "Weights", true, RK_S_F32, RK_KP_OUT, "tokens,k");
    kn_sig_add(s, "Ids", true, RK_S_I32, RK_KP_OUT, "tokens,k");
    for (uint32_t i = 0; i < RK_COUNTOF(scalars); i++) kn_sig_add(s, scalars[i].name, false, RK_S_I32, RK_KP_SCALAR, NULL);
}

/* ceil(T / rows per block), rows per block = block_size / threads_per_row */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_topk_softmax_spec *s = &in->u.topk;
    kn_geom_cdiv_dim(g, D_T, s->block_size / s->threads_per_row);
    kn_geom_axis(g);
    g->block[0] = s->block_size;
}

static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    double T = (double)sh->dim[D_T], E = (double)sh->dim[D_E], K = (double)sh->dim[D_K];
    *bytes = T * E * rk_tile_elem_bytes(in->u.topk.dtype) + T * K * 8;
    *flops = T * E * (3 + K);
}

/* (value, id) pairs: the larger value, on equal values the lower id; the
 * same bits whichever operand comes first. */
static void best_of(rk_kernel *k, const rk_value *a, const rk_value *b, rk_value *out, void *ud) {
    (void)ud;
    rk_value gt = rk_build_fcmp(k, "ogt", a[0], b[0]);
    rk_value eq = rk_build_fcmp(k, "oeq", a[0], b[0]);
    rk_value lower = rk_build_cmp(k, "lt", a[1], b[1]);
    rk_value tie = rk_build_and(k, eq, lower);
    rk_value take_a = rk_build_or(k, gt, tie);
    out[0] = rk_build_select(k, take_a, a[0], b[0]);
    out[1] = rk_build_select(k, take_a, a[1], b[1]);
}

typedef struct topk_ctx {
    rk_tile_rows g;
    rk_tile_row xr;
    rk_value E, tpr;
    uint32_t width;     /* lanes per row */
    /* chunks > 0: the lane's logits lt + j*tpr (x), their ids and whether
     * they are inside the row */
    uint32_t chunks;
    rk_value x[32], id[32], in[32];
} topk_ctx;

/* The lane's logits into registers (outside the row: -inf, never picked). */
static void load_cached(rk_kernel *k, topk_ctx *c) {
    for (uint32_t j = 0; j < c->chunks; j++) {
        c->id[j] = j ? rk_build_add(k, c->g.lt, kn_i32(k, (int32_t)(j * c->width))) : c->g.lt;
        c->in[j] = rk_build_cmp(k, "lt", c->id[j], c->E);
        c->x[j] = rk_tile_row_load1_f32(k, &c->xr, c->id[j], -INFINITY);
    }
}

/* max over the row (f32) */
static rk_value row_max(rk_kernel *k, const topk_ctx *c) {
    if (c->chunks) {
        rk_value m = c->x[0];
        for (uint32_t j = 1; j < c->chunks; j++) m = rk_build_fmax(k, m, c->x[j]);
        return rk_tile_wave_reduce(k, RK_RED_MAX, m, c->width);
    }
    rk_value init = rk_const_f32(k, -INFINITY), cur, res;
    rk_value j = rk_for_begin(k, c->g.lt, c->E, c->tpr, NULL, 1, &init, NULL, &cur);
    rk_value x = rk_tile_row_load1_f32(k, &c->xr, j, 0.0);
    cur = rk_build_fmax(k, cur, x);
    rk_for_end(k, &cur, 1, &res);
    return rk_tile_wave_reduce(k, RK_RED_MAX, res, c->width);
}

static rk_value row_sum_exp(rk_kernel *k, const topk_ctx *c, rk_value mx) {
    rk_value init = rk_const_f32(k, 0.0f), cur, res;
    if (c->chunks) {
        /* in the order of the looped pass: j ascending, then the butterfly */
        cur = init;
        for (uint32_t j = 0; j < c->chunks; j++) {
            rk_value e = rk_build_exp(k, rk_build_fsub(k, c->x[j], mx));
            cur = rk_build_fadd(k, cur, rk_build_select(k, c->in[j], e, init));
        }
        return rk_tile_wave_reduce(k, RK_RED_SUM, cur, c->width);
    }
    rk_value j = rk_for_begin(k, c->g.lt, c->E, c->tpr, NULL, 1, &init, NULL, &cur);
    rk_value x = rk_tile_row_load1_f32(k, &c->xr, j, 0.0);
    rk_value e = rk_build_exp(k, rk_build_fsub(k, x, mx));
    cur = rk_build_fadd(k, cur, e);
    rk_for_end(k, &cur, 1, &res);
    return rk_tile_wave_reduce(k, RK_RED_SUM, res, c->width);
}

/* The best (value, id) of the row after (pv, pi) in (value desc, id asc)
 * order: the next pick. */
/* The lane's best eligible logit after (pv, pi), from its registers. */
static void lane_pick_cached(rk_kernel *k, const topk_ctx *c, rk_value pv, rk_value pi, rk_value *res) {
    for (uint32_t j = 0; j < c->chunks; j++) {
        rk_value x = c->x[j];
        rk_value below = rk_build_fcmp(k, "olt", x, pv);
        rk_value same = rk_build_fcmp(k, "oeq", x, pv);
        rk_value later = rk_build_cmp(k, "gt", c->id[j], pi);
        rk_value eligible = rk_build_or(k, below, rk_build_and(k, same, later));
        rk_value better = rk_build_fcmp(k, "ogt", x, res[0]);
        rk_value take = rk_build_and(k, rk_build_and(k, eligible, better), c->in[j]);
        res[0] = rk_build_select(k, take, x, res[0]);
        res[1] = rk_build_select(k, take, c->id[j], res[1]);
    }
}

static void next_pick(rk_kernel *k, const topk_ctx *c, rk_value pv, rk_value pi, rk_value out[2]) {
    rk_value init[2], cur[2], res[2];
    init[0] = rk_const_f32(k, -INFINITY);
    init[1] = kn_i32(k, INT32_MAX);
    if (c->chunks) {
        res[0] = init[0];
        res[1] = init[1];
        lane_pick_cached(k, c, pv, pi, res);
        rk_tile_reducer red = {.n = 2, .fn = best_of};
        rk_tile_wave_reduce_n(k, &red, res, c->width);
        out[0] = res[0];
        out[1] = res[1];
        return;
    }
    rk_value j = rk_for_begin(k, c->g.lt, c->E, c->tpr, NULL, 2, init, NULL, cur);
    rk_value x = rk_tile_row_load1_f32(k, &c->xr, j, 0.0);
    rk_value below = rk_build_fcmp(k, "olt", x, pv);
    rk_value same = rk_build_fcmp(k, "oeq", x, pv);
    rk_value later = rk_build_cmp(k, "gt", j, pi);
    rk_value eligible = rk_build_or(k, below, rk_build_and(k, same, later));
    /* ids ascend along the thread's loop: on equal values keep the first */
    rk_value better = rk_build_fcmp(k, "ogt", x, cur[0]);
    rk_value take = rk_build_and(k, eligible, better);
    rk_value nv = rk_build_select(k, take, x, cur[0]);
    rk_value ni = rk_build_select(k, take, j, cur[1]);
    rk_value next[2] = {nv, ni};
    rk_for_end(k, next, 2, res);
    rk_tile_reducer red = {.n = 2, .fn = best_of};
    rk_tile_wave_reduce_n(k, &red, res, c->width);
    out[0] = res[0];
    out[1] = res[1];
}

/* k rounds carrying the previous pick and the sum of the weights; with
 * `norm` valid the lead lane stores each weight divided by it and each id.
 * Returns the sum. (Weights is write-only: a renormalising kernel runs the
 * rounds twice rather than read its stores back.) */
static rk_value rounds(rk_kernel *k, const topk_ctx *c, const rk_value *io, rk_value mx, rk_value sum,
                       rk_value norm) {
    rk_value W = io[1], Ids = io[2], K = io[5];
    rk_value zero = kn_i32(k, 0), one = kn_i32(k, 1);
    rk_value init[3], cur[3], res[3];
    init[0] = rk_const_f32(k, INFINITY);
    init[1] = kn_i32(k, -1);
    init[2] = rk_const_f32(k, 0.0f);
    rk_value r = rk_for_begin(k, zero, K, one, NULL, 3, init, NULL, cur);
    rk_value pick[2];
    next_pick(k, c, cur[0], cur[1], pick);
    rk_value e = rk_build_exp(k, rk_build_fsub(k, pick[0], mx));
    rk_value w = rk_build_fdiv(k, e, sum);
    if (rk_value_ok(norm)) {
        rk_value out0 = rk_build_mul(k, c->g.row, K);
        rk_value at = rk_build_add(k, out0, r);
        rk_value lead = rk_build_and(k, rk_build_cmp(k, "eq", c->g.lt, zero), c->g.active);
        rk_if_begin(k, lead);
        rk_store_global(k, W, at, rk_build_fdiv(k, w, norm));
        rk_store_global(k, Ids, at, pick[1]);
        rk_if_end(k, NULL, 0);
    }
    rk_value total = rk_build_fadd(k, cur[2], w);
    rk_value next[3] = {pick[0], pick[1], total};
    rk_for_end(k, next, 3, res);
    return res[2];
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    (void)t;
    const rk_topk_softmax_spec *s = &in->u.topk;
    rk_value X = p[0], T = p[3], E = p[4];
    topk_ctx c = {.E = E, .width = s->threads_per_row, .chunks = s->chunks};
    RK_ASSERT(s->chunks <= 32, "topk_softmax: at most 32 cached logits a lane");
    c.g = rk_tile_rows_begin(k, s->block_size, s->block_size / s->threads_per_row, s->wave, T);
    c.tpr = kn_i32(k, (int32_t)s->threads_per_row);
    c.xr = rk_tile_row_view(k, X, s->dtype, c.g.row, E, E, c.g.active, 1, RK_TAIL_MASKED);
    if (c.chunks) load_cached(k, &c);
    rk_value mx = row_max(k, &c);
    rk_value sum = row_sum_exp(k, &c, mx);
    rk_value norm = s->renormalize ? rounds(k, &c, p, mx, sum, (rk_value){0}) : rk_const_f32(k, 1.0f);
    rounds(k, &c, p, mx, sum, norm);
}

const kn_family kn_topk_softmax = {
    .name = "topk_softmax", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = dims, .ndims = RK_COUNTOF(dims),
    .scalars = scalars, .nscalars = RK_COUNTOF(scalars), .defaults = defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build,
    .cost = cost, .reference = kn_topk_softmax_reference,
};
