/* rocke — row reduce: sum, max or mean over the last dim of [M, N] -> [M].
 * f32 accumulation; the output is out_dtype (default: the input type, like
 * torch; f32 keeps full precision). chunks > 0 loads the thread's whole share
 * at once (all loads in flight); chunks == 0 loops with `unroll` loads in
 * flight and a vector accumulator. Layer: kernels. */
#include <math.h>

#include "kern_int.h"

static const char *const op_names[] = {"sum", "max", "mean", NULL};
const char *rk_reduce_op_name(rk_reduce_op op) { return (unsigned)op < RK_REDUCE__COUNT ? op_names[op] : "?"; }

static const rk_knob knobs[] = {
    KN_ENUM("op", "", u.reduce.op, op_names, false, "reduction"),
    KN_DTYPE("dtype", "", u.reduce.dtype, "input element type"),
    KN_DTYPE("out_dtype", "o", u.reduce.out_dtype, "output element type"),
    KN_ROW_KNOBS(u.reduce.k),
    KN_SLICES_KNOB(u.reduce),
    KN_STAGE_KNOB(u.reduce),
};
#define FIRST_ROW_KNOB 3
#define SLICES_KNOB (FIRST_ROW_KNOB + 9)
#define STAGE_KNOB (SLICES_KNOB + 1)

static void defaults(rk_instance *in) {
    in->u.reduce.op = RK_REDUCE_SUM;
    in->u.reduce.dtype = in->u.reduce.out_dtype = RK_S_F16;
    kn_row_defaults(&in->u.reduce.k);
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked) {
    /* vec follows the input: the output is one value per row */
    const rk_scalar spans[1] = {in->u.reduce.dtype};
    kn_row_tune_stage(&in->u.reduce.k, t, in->u.reduce.dtype, s, locked, FIRST_ROW_KNOB, 8, 0, 0, SLICES_KNOB, STAGE_KNOB,
                      spans, 1, KN_SPAN_MAX_N_REDUCE);
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_scalar spans[1] = {in->u.reduce.dtype};
    /* direct rows: no cached slices here (a split row is looped) */
    if (in->u.reduce.k.stage == RK_STAGE_DIRECT)
        return kn_row_validate(&in->u.reduce.k, t, in->u.reduce.dtype, in->u.reduce.dtype);
    return kn_row_validate_stage(&in->u.reduce.k, t, spans, 1);
}

static rk_status check_shape(const rk_instance *in, const rk_shape *s) {
    return kn_row_check_shape(&in->u.reduce.k, s);
}

static void signature(const rk_instance *in, rk_ksig *s) {
    kn_sig_add(s, "X", true, in->u.reduce.dtype, RK_KP_IN, "M,N");
    kn_sig_add(s, "Y", true, in->u.reduce.out_dtype, RK_KP_OUT, "M");
    kn_sig_add(s, "M", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(s, "N", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_slices_signature(s, &in->u.reduce.k, 1, false);
}

static void geometry(const rk_instance *in, rk_launch_geom *g) { kn_row_geometry(&in->u.reduce.k, g); }

static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    const rk_reduce_spec *s = &in->u.reduce;
    const double M = (double)sh->dim[0], N = (double)sh->dim[1];
    *bytes = M * N * rk_tile_elem_bytes(s->dtype) + M * rk_tile_elem_bytes(s->out_dtype);
    *flops = M * N;
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    (void)in; (void)kp; (void)away;
    *lo = -1; *hi = 1;
}

static rk_tile_red red_of(rk_reduce_op op) { return op == RK_REDUCE_MAX ? RK_RED_MAX : RK_RED_SUM; }

static rk_value fold(rk_kernel *k, rk_tile_red op, rk_value acc, rk_value v) {
    return op == RK_RED_MAX ? rk_tile_max(k, acc, v) : rk_tile_add(k, acc, v);
}

/* stage=span: the block's rows through LDS (row_span.c), the thread's
 * elements folded. */
static rk_value span_acc(const rk_reduce_spec *s, const rk_row_knobs *kn, rk_kernel *k, const rk_tile_rows *g,
                         const rk_value *p, rk_tile_red op, double id) {
    kn_span xs = kn_span_open(k, kn, p[0], s->dtype, p[2], p[3]);
    kn_span_load(k, &xs, g->tid);
    rk_build_sync_lds_only(k);
    kn_span_row row = kn_span_row_of(k, &xs, g);
    rk_value v[KN_SPAN_MAX_CHUNKS];
    RK_ASSERT(kn->chunks <= KN_SPAN_MAX_CHUNKS, "reduce span: elements a thread");
    kn_span_read_f32(k, &xs, &row, kn->chunks, id, v);
    rk_value acc = v[0];
    for (uint32_t j = 1; j < kn->chunks; j++) acc = fold(k, op, acc, v[j]);
    return acc;
}

/* A cached direct row: the thread's chunks, all loads at once. */
static rk_value cached_acc(const rk_reduce_spec *s, const rk_row_knobs *kn, rk_kernel *k, const rk_tile_rows *g,
                           const rk_value *p, rk_tile_red op, double id) {
    rk_tile_row xr = kn_row_view(k, kn, p[0], s->dtype, g->row, p[3], g->active, NULL);
    rk_tile_regs x;
    rk_tile_regs_load(k, &xr, g->lt, g->tpr, kn->chunks, id, &x);
    rk_value acc = x.v[0];
    for (uint32_t c = 1; c < x.n; c++) acc = fold(k, op, acc, x.v[c]);
    return acc;
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_reduce_spec *s = &in->u.reduce;
    const rk_row_knobs *kn = &s->k;
    rk_tile_red op = red_of(s->op);
    double id = rk_tile_red_identity(op);
    rk_tile_rows g = rk_tile_rows_begin(k, kn->block_size, kn->rows_per_block, kn->wave, p[2]);
    kn_slices_rows(k, kn, &g, p[2]);
    kn_row_attrs(k, kn, t);
    rk_value acc;
    kn_slices sl = {0};
    rk_tile_row xr = {0};
    if (kn->stage == RK_STAGE_AUTO) {
        /* aligned rows: the direct chunks; else the span (one f32 a thread either way) */
        rk_row_knobs d = kn_auto_direct_knobs(kn), sp = kn_auto_span_knobs(kn);
        rk_type f32 = RK_T_F32;
        rk_value y;
        rk_if_else_begin(k, kn_auto_direct_cond(k, kn, p[3], p, 1), 1, &f32, &acc);
        y = rk_tile_vec_reduce(k, op, cached_acc(s, &d, k, &g, p, op, id));
        rk_else(k, &y, 1);
        y = span_acc(s, &sp, k, &g, p, op, id);
        rk_if_end(k, &y, 1);
    } else if (kn->stage == RK_STAGE_SPAN) {
        acc = span_acc(s, kn, k, &g, p, op, id);
    } else if (kn->chunks) {
        acc = cached_acc(s, kn, k, &g, p, op, id);
    } else {
        xr = kn_row_view(k, kn, p[0], s->dtype, g.row, p[3], g.active, NULL);
        uint32_t u = kn->unroll, step = g.tpr * kn->vec;
        rk_value start = rk_build_mul(k, g.lt, kn_i32(k, (int32_t)kn->vec));
        rk_value init = rk_tile_f32s(k, (float)id, kn->vec), cur, res;
        rk_value from = start, to = xr.len;
        if (kn->slices > 1) {
            sl = kn_slices_begin(k, kn, 1, p[4], p[4], &g, p[2], xr.len, step * u);
            from = rk_build_add(k, sl.lo, start);
            to = sl.hi;
        }
        rk_value base = rk_for_begin(k, from, to, kn_i32(k, (int32_t)(step * u)), NULL, 1, &init, NULL, &cur);
        rk_value offs[8], v[8];
        for (uint32_t i = 0; i < u; i++) offs[i] = i ? rk_build_add(k, base, kn_i32(k, (int32_t)(i * step))) : base;
        rk_tile_row_load_f32(k, &xr, offs, u, id, v);
        for (uint32_t i = 0; i < u; i++) cur = fold(k, op, cur, v[i]);
        rk_for_end(k, &cur, 1, &res);
        acc = res;
    }
    rk_value r = rk_tile_vec_reduce(k, op, acc);
    rk_tile_block_cfg cfg = {.wave = kn->wave, .group = g.tpr, .groups = g.rpb};
    r = rk_tile_block_reduce(k, op, &cfg, g.tid, r);
    if (kn->slices > 1) {
        /* the last slice to arrive folds the partials and writes the row */
        rk_value last = kn_slices_publish(k, &sl, &r);
        rk_if_begin(k, last);
        kn_slices_gather(k, &sl, NULL, op, &r);
    }
    if (s->op == RK_REDUCE_MEAN) {
        rk_value n = rk_build_sitofp(k, p[3], RK_T_F32);
        r = rk_build_fdiv(k, r, n);
    }
    rk_value first = rk_build_cmp(k, "eq", g.lt, kn_i32(k, 0));
    rk_if_begin(k, rk_build_and(k, first, g.active));
    rk_store_global(k, p[1], g.row, rk_tile_from_f32(k, r, s->out_dtype));
    rk_if_end(k, NULL, 0);
    if (kn->slices > 1) rk_if_end(k, NULL, 0);
}

static uint32_t param_align(const rk_instance *in, const rk_kparam *kp) {
    return kn_row_param_align(&in->u.reduce.k, kp);
}

const kn_family kn_reduce = {
    .name = "reduce", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = kn_row_dims, .ndims = 2,
    .scalars = kn_row_scalars, .nscalars = 2, .defaults = defaults, .tune = tune, .validate = validate,
    .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build, .cost = cost,
    .reference = kn_reduce_reference, .input_range = input_range, .param_align = param_align,
    .shared_problem = true,
};
