/* rocke — softmax over the last dim of [M, N]: y = exp(x - max) / sum.
 * chunks > 0: one pass, the row held in registers in its storage type (every
 * input byte read once, one paired (max, sum) block reduction; the
 * exponentials are computed again in the output phase rather than held in
 * f32). chunks == 0: online two-pass for rows of any length (pass 1 keeps a
 * running (max, sum) per thread, merged by the same tuple reduction; pass 2
 * re-reads x and writes y). Layer: kernels. */
#include <math.h>

#include "kern_int.h"

#define LOG2E 1.4426950408889634

static const rk_knob knobs[] = {
    KN_DTYPE("dtype", "", u.softmax.dtype, "input element type"),
    KN_DTYPE("out_dtype", "o", u.softmax.out_dtype, "output element type"),
    KN_ROW_KNOBS(u.softmax.k),
    KN_PBOOL("keep_exps", "ke", u.softmax.keep_exps,
             "cached rows: keep each exp in f32 registers (one exp per element) instead of the packed row"),
    KN_SLICES_KNOB(u.softmax),
    KN_STAGE_KNOB(u.softmax),
};
#define FIRST_ROW_KNOB 2
#define KEEP_KNOB (FIRST_ROW_KNOB + 9)
#define SLICES_KNOB (KEEP_KNOB + 1)
#define STAGE_KNOB (SLICES_KNOB + 1)
/* registers besides the cached row (ptxas -v, sm_90a; docs/kernels.md) */
#define SOFTMAX_BASE_REGS 16
/* a span: + the span's addresses and the LDS copies (ptxas -v, sm_90a) */
#define SPAN_BASE_REGS 20
/* a cached slice: + the merge across blocks and the loop over the slices
 * taken from waiters */
#define SLICED_BASE_REGS 40

static void defaults(rk_instance *in) {
    in->u.softmax.dtype = in->u.softmax.out_dtype = RK_S_F16;
    kn_row_defaults(&in->u.softmax.k);
    in->u.softmax.k.chunks = 4;
}

static rk_scalar widest(rk_scalar a, rk_scalar b) { return rk_tile_elem_bytes(a) >= rk_tile_elem_bytes(b) ? a : b; }

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    rk_softmax_spec *s = &in->u.softmax;
    rk_scalar w = widest(s->dtype, s->out_dtype);
    bool nv = t->vendor == RK_VENDOR_NVIDIA;
    /* kept exps need a cached row: a locked keep_exps=true rules the split out */
    uint64_t lk = locked;
    if (((locked >> KEEP_KNOB) & 1u) && s->keep_exps && !((locked >> SLICES_KNOB) & 1u)) {
        s->k.slices = 1;
        lk |= 1ull << SLICES_KNOB;
    }
    /* and kept exps are a direct row's */
    if (((locked >> KEEP_KNOB) & 1u) && s->keep_exps && !((locked >> STAGE_KNOB) & 1u)) {
        s->k.stage = RK_STAGE_DIRECT;
        lk |= 1ull << STAGE_KNOB;
    }
    const rk_scalar spans[2] = {s->dtype, s->out_dtype};
    kn_row_tune_stage(&s->k, t, w, sh, lk, FIRST_ROW_KNOB, 4, nv ? 16 : 0, 0, SLICES_KNOB, STAGE_KNOB, spans, 2,
                      KN_SPAN_MAX_N_SOFTMAX);
    bool span = s->k.stage == RK_STAGE_SPAN, both = s->k.stage == RK_STAGE_AUTO;
    /* NVIDIA: at most 16 elements a thread are 16 f32 registers, which still
     * leave a full SM (docs/kernels.md); longer rows stay packed. A span
     * holds its elements in f32 whatever keep_exps says (it does not apply;
     * auto: to its direct rows) */
    if (!((locked >> KEEP_KNOB) & 1u)) s->keep_exps = !span && nv && s->k.chunks && s->k.chunks * s->k.vec <= 16;
    rk_scalar held = s->keep_exps || span || both ? RK_S_F32 : s->dtype;
    kn_row_tune_occupancy(&s->k, t, held, locked, FIRST_ROW_KNOB, span || both ? SPAN_BASE_REGS : SOFTMAX_BASE_REGS);
    /* cached slices (slices > 1 with chunks: the exps formed twice) only when the knobs ask: the norms'
     * measured slower than their looped / one-block picks on the H200 (norm.c) */
    if (((locked >> KEEP_KNOB) & 1u) && s->keep_exps) return;
    if (s->k.slices > 1 && s->k.chunks) {
        s->keep_exps = false;
        kn_row_tune_occupancy(&s->k, t, s->dtype, locked, FIRST_ROW_KNOB, SLICED_BASE_REGS);
    }
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    if (in->u.softmax.keep_exps && !in->u.softmax.k.chunks)
        return rk_fail(RK_ERR_INVALID, "knob 'keep_exps' needs a cached row (chunks > 0); the looped path (chunks=0) "
                                       "reads the row twice and keeps nothing");
    if (in->u.softmax.keep_exps && in->u.softmax.k.slices > 1)
        return rk_fail(RK_ERR_INVALID, "knob 'keep_exps' needs a row in one block (slices=1); a cached slice "
                                       "(slices > 1) forms its exps again after the merge");
    if (in->u.softmax.keep_exps && in->u.softmax.k.stage == RK_STAGE_SPAN)
        return rk_fail(RK_ERR_INVALID, "knob 'keep_exps' applies to stage=direct; a span (stage=span) holds its "
                                       "elements in f32 and forms each exp once");
    const rk_scalar spans[2] = {in->u.softmax.dtype, in->u.softmax.out_dtype};
    return kn_row_validate_stage(&in->u.softmax.k, t, spans, 2);
}

static rk_status check_shape(const rk_instance *in, const rk_shape *s) {
    return kn_row_check_shape(&in->u.softmax.k, s);
}

static void signature(const rk_instance *in, rk_ksig *s) {
    kn_sig_add(s, "X", true, in->u.softmax.dtype, RK_KP_IN, "M,N");
    kn_sig_add(s, "Y", true, in->u.softmax.out_dtype, RK_KP_OUT, "M,N");
    kn_sig_add(s, "M", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(s, "N", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_slices_signature(s, &in->u.softmax.k, 2, true);
}

static void geometry(const rk_instance *in, rk_launch_geom *g) { kn_row_geometry(&in->u.softmax.k, g); }

static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    const rk_softmax_spec *s = &in->u.softmax;
    const double MN = (double)sh->dim[0] * (double)sh->dim[1];
    *bytes = MN * (rk_tile_elem_bytes(s->dtype) + rk_tile_elem_bytes(s->out_dtype));
    *flops = 5.0 * MN;
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    (void)in; (void)kp; (void)away;
    *lo = -8; *hi = 8;
}

static rk_value exp2_fn(rk_kernel *k, rk_value x, void *ud) {
    (void)ud;
    return rk_build_exp2(k, x);
}

/* exp2(x*log2e - m*log2e) for every element; m is a safe (finite) max. */
static rk_value exp_shifted(rk_kernel *k, rk_value x, rk_value neg_ml) {
    rk_value l = rk_tile_bcast(k, rk_const_f32(k, (float)LOG2E), x);
    rk_value t = rk_tile_fma(k, x, l, rk_tile_bcast(k, neg_ml, x));
    return rk_tile_map(k, t, exp2_fn, NULL);
}

/* -max*log2e, with an all-padding max (-inf) mapped to 0 so no NaN appears. */
static rk_value neg_max_log2e(rk_kernel *k, rk_value m) {
    rk_value ninf = rk_const_f32(k, -INFINITY);
    rk_value is_ninf = rk_build_fcmp(k, "oeq", m, ninf);
    rk_value safe = rk_build_select(k, is_ninf, rk_const_f32(k, 0.0f), m);
    return rk_build_fmul(k, safe, rk_const_f32(k, (float)-LOG2E));
}

static rk_value row_max(rk_kernel *k, const rk_value *v, uint32_t n) {
    rk_value m = v[0];
    for (uint32_t c = 1; c < n; c++) m = rk_tile_max(k, m, v[c]);
    return rk_tile_vec_reduce(k, RK_RED_MAX, m);
}

static rk_value row_sum(rk_kernel *k, const rk_value *v, uint32_t n) {
    rk_value s = v[0];
    for (uint32_t c = 1; c < n; c++) s = rk_tile_add(k, s, v[c]);
    return rk_tile_vec_reduce(k, RK_RED_SUM, s);
}

/* (m, s) pairs: M = max(ma, mb); s = sa*2^((ma-M)L) + sb*2^((mb-M)L). Symmetric
 * in a and b, so every lane of the butterfly ends with the same bits. */
static void online_combine(rk_kernel *k, const rk_value *a, const rk_value *b, rk_value *out, void *ud) {
    (void)ud;
    rk_value m = rk_build_fmax(k, a[0], b[0]);
    rk_value nml = neg_max_log2e(k, m);
    rk_value l = rk_const_f32(k, (float)LOG2E);
    rk_value fa = rk_build_exp2(k, rk_build_fma(k, a[0], l, nml));
    rk_value fb = rk_build_exp2(k, rk_build_fma(k, b[0], l, nml));
    rk_value sa = rk_build_fmul(k, a[1], fa);
    rk_value sb = rk_build_fmul(k, b[1], fb);
    out[0] = m;
    out[1] = rk_build_fadd(k, sa, sb);
}

/* Fold the chunks v[0..n) (f32) into a running (max, sum): the sum is
 * rescaled to the new max once per call (looped path, one unrolled group). */
static void online_step(rk_kernel *k, rk_value *cur, const rk_value *v, uint32_t n) {
    rk_value mnew = rk_build_fmax(k, cur[0], row_max(k, v, n));
    rk_value nml = neg_max_log2e(k, mnew);
    rk_value l = rk_const_f32(k, (float)LOG2E);
    rk_value scale = rk_build_exp2(k, rk_build_fma(k, cur[0], l, nml));
    rk_value e[RK_TILE_MAX_CHUNKS] = {{0}};
    for (uint32_t i = 0; i < n; i++) e[i] = exp_shifted(k, v[i], nml);
    cur[1] = rk_build_fma(k, cur[1], scale, row_sum(k, e, n));
    cur[0] = mnew;
}

/* Offsets of the `u` chunks at loop position `base`. */
static void group_offsets(rk_kernel *k, rk_value base, uint32_t u, uint32_t step, rk_value *offs) {
    for (uint32_t i = 0; i < u; i++) offs[i] = i ? rk_build_add(k, base, kn_i32(k, (int32_t)(i * step))) : base;
}

/* Pass 2 of the looped path over [from, to) (from invalid: 0; to invalid:
 * the end of x's view): exp(x - max) / sum, x read again. */
static void output_looped(const rk_softmax_spec *s, rk_kernel *k, const rk_tile_rows *g, const rk_tile_row *xr,
                          const rk_tile_row *yr, rk_value from, rk_value to, rk_value gnml, rk_value inv) {
    const rk_row_knobs *kn = &s->k;
    uint32_t u = kn->unroll, step = g->tpr * kn->vec;
    rk_value start = rk_build_mul(k, g->lt, kn_i32(k, (int32_t)kn->vec));
    rk_value stride = kn_i32(k, (int32_t)(step * u));
    rk_value from2 = rk_value_ok(from) ? rk_build_add(k, from, start) : start;
    rk_value end = rk_value_ok(to) ? to : xr->len;
    rk_value b2 = rk_for_begin(k, from2, end, stride, NULL, 0, NULL, NULL, NULL);
    rk_value offs[8], v[8], e[8];
    group_offsets(k, b2, u, step, offs);
    rk_tile_row_load_f32(k, xr, offs, u, -INFINITY, v);
    for (uint32_t i = 0; i < u; i++) {
        rk_value ex = exp_shifted(k, v[i], gnml);
        e[i] = rk_tile_mul(k, ex, rk_tile_bcast(k, inv, ex));
    }
    rk_tile_row_store_f32(k, yr, offs, u, e);
    rk_for_end(k, NULL, 0, NULL);
}

/* The row stays in registers in its storage type. Phase 1 forms the
 * thread's (max, sum): the max on the storage type (exact, no conversion),
 * then one running sum of exp(x - max) element by element (one f32 value
 * live at a time); one block reduction merges the pairs (one barrier).
 * Phase 2 forms exp(x - max) / sum again, from f32(-x) with the constant
 * negated (bit-identical), so no f32 copy of the row lives across the
 * barrier. */
static void build_cached(const rk_softmax_spec *s, rk_kernel *k, const rk_tile_rows *g, const rk_tile_row *xr,
                         const rk_tile_row *yr, rk_value work, rk_value sync, rk_value M) {
    const rk_row_knobs *kn = &s->k;
    rk_tile_block_cfg cfg = {.wave = kn->wave, .group = g->tpr, .groups = g->rpb, .shuffle_fold = true};
    rk_tile_regs x;
    bool sliced = kn->slices > 1;
    rk_tile_row xs = *xr, ys = *yr;
    rk_value lt = g->lt;
    kn_slices sl = {0};
    if (sliced) {
        /* this block's slice (whole cached slices), the views ending at its
         * end: chunks past it read -inf and write nothing (masked tails) */
        sl = kn_slices_begin(k, kn, 2, work, sync, g, M, xr->len, g->tpr * kn->vec * kn->chunks);
        xs.len = ys.len = sl.hi;
        rk_value vc = kn_i32(k, (int32_t)kn->vec);
        rk_value lo_vecs = rk_build_udiv(k, sl.lo, vc);
        lt = rk_build_add(k, lt, lo_vecs);
    }
    rk_tile_regs_load_packed(k, &xs, lt, g->tpr, kn->chunks, -INFINITY, &x);
    rk_value cur[2] = {rk_tile_to_f32(k, row_max(k, x.v, x.n)), {0}};
    rk_value nml0 = neg_max_log2e(k, cur[0]);
    for (uint32_t c = 0; c < x.n; c++) {
        rk_value e = exp_shifted(k, rk_tile_to_f32(k, x.v[c]), nml0);
        for (uint32_t i = 0; i < kn->vec; i++) {
            rk_value ei = kn->vec > 1 ? rk_build_vextract(k, e, i) : e;
            cur[1] = c == 0 && i == 0 ? ei : rk_build_fadd(k, cur[1], ei);
        }
    }
    rk_tile_reducer red = {.n = 2, .fn = online_combine};
    rk_tile_block_reduce_n(k, &red, &cfg, g->tid, cur);
    kn_spread sp = {0};
    if (sliced) {
        rk_value last = kn_slices_publish(k, &sl, cur);
        sp = kn_slices_merge(k, &sl, last, online_combine, RK_RED_MAX, cur);
    }
    rk_value nml = neg_max_log2e(k, cur[0]);
    rk_value inv = rk_build_fdiv(k, rk_const_f32(k, 1.0f), cur[1]);
    /* split: its own slice (the last block, or a waiter that claimed it)
     * from the registers, outside the loop over slices below (inside it,
     * LICM would hoist every chunk's conversion out of the loop) */
    if (sliced) rk_if_begin(k, rk_build_or(k, sp.last, sp.mine));
    /* chunk by chunk: each stored as soon as it is formed */
    for (uint32_t c = 0; c < x.n; c++) {
        rk_value nx = rk_tile_to_f32_neg(k, x.v[c]);
        rk_value l = rk_tile_bcast(k, rk_const_f32(k, (float)-LOG2E), nx);
        rk_value ex = rk_tile_map(k, rk_tile_fma(k, nx, l, rk_tile_bcast(k, nml, nx)), exp2_fn, NULL);
        rk_value y = rk_tile_mul(k, ex, rk_tile_bcast(k, inv, ex));
        rk_tile_row_store_f32(k, &ys, &x.off[c], 1, &y);
    }
    if (!sliced) return;
    rk_if_end(k, NULL, 0);
    /* the slices the last block takes from waiters that gave up: the looped
     * output (x read again) */
    rk_value from, to;
    kn_slices_pass_begin(k, &sp, &sl, &from, &to);
    rk_if_begin(k, rk_build_cmp(k, "ne", from, sl.lo));
    rk_tile_row xf = *xr, yf = *yr;
    xf.len = yf.len = to;
    output_looped(s, k, g, &xf, &yf, from, to, nml, inv);
    rk_if_end(k, NULL, 0);
    kn_slices_pass_end(k);
    rk_if_begin(k, sp.last);
    kn_slices_finish(k, &sl);
    rk_if_end(k, NULL, 0);
}

/* v * 2^((own - all)·log2e): a sum of exps at the lane's max expressed at
 * the reduced max (an all-padding max maps to 0, as neg_max_log2e). */
static rk_value rescale_sum(rk_kernel *k, rk_value v, rk_value own, rk_value all, void *ud) {
    (void)ud;
    rk_value nml = neg_max_log2e(k, all);
    rk_value f = rk_build_exp2(k, rk_build_fma(k, own, rk_const_f32(k, (float)LOG2E), nml));
    return rk_build_fmul(k, v, f);
}

/* keep_exps: every exp(x - max_thread) is formed once, into f32 registers
 * (the packed row dies as it is converted), and summed; the (max, sum)
 * reduction takes the maxima first and rescales each thread's sum once (two
 * exp2 per thread, not two per butterfly step); the output is the kept exps
 * times one per-thread factor 2^((max_thread - max)·log2e) / sum. */
static void build_cached_keep(const rk_softmax_spec *s, rk_kernel *k, const rk_tile_rows *g, const rk_tile_row *xr,
                              const rk_tile_row *yr) {
    const rk_row_knobs *kn = &s->k;
    rk_tile_block_cfg cfg = {.wave = kn->wave, .group = g->tpr, .groups = g->rpb, .shuffle_fold = true};
    rk_tile_regs x;
    rk_tile_regs_load_packed(k, xr, g->lt, g->tpr, kn->chunks, -INFINITY, &x);
    rk_value own = rk_tile_to_f32(k, row_max(k, x.v, x.n));
    rk_value nml = neg_max_log2e(k, own);
    rk_value e[RK_TILE_MAX_CHUNKS], cur[2] = {own, {0}};
    for (uint32_t c = 0; c < x.n; c++) {
        e[c] = exp_shifted(k, rk_tile_to_f32(k, x.v[c]), nml);
        for (uint32_t i = 0; i < kn->vec; i++) {
            rk_value ei = kn->vec > 1 ? rk_build_vextract(k, e[c], i) : e[c];
            cur[1] = c == 0 && i == 0 ? ei : rk_build_fadd(k, cur[1], ei);
        }
    }
    rk_tile_reducer red = {.n = 2, .op = RK_RED_MAX, .rescale = rescale_sum};
    rk_tile_block_reduce_n(k, &red, &cfg, g->tid, cur);
    rk_value f = rk_build_fdiv(k, rescale_sum(k, rk_const_f32(k, 1.0f), own, cur[0], NULL), cur[1]);
    for (uint32_t c = 0; c < x.n; c++) {
        rk_value y = rk_tile_mul(k, e[c], rk_tile_bcast(k, f, e[c]));
        rk_tile_row_store_f32(k, yr, &x.off[c], 1, &y);
    }
}

/* stage=span: the block's rows go through LDS (row_span.c); each thread
 * holds its elements of the row in f32, forms every exp once (as
 * keep_exps), reduces (max, sum) with one rescale per thread, and writes
 * exp * 2^((max_thread - max)·log2e) / sum into the output's span. */
static void build_span(const rk_softmax_spec *s, rk_kernel *k, const rk_tile_rows *g, rk_value X, rk_value Y,
                       rk_value M, rk_value N) {
    const rk_row_knobs *kn = &s->k;
    uint32_t n = kn->chunks;
    RK_ASSERT(n <= KN_SPAN_MAX_CHUNKS, "softmax span: elements a thread");
    kn_span xs = kn_span_open(k, kn, X, s->dtype, M, N);
    kn_span ys = kn_span_open(k, kn, Y, s->out_dtype, M, N);
    kn_span_load(k, &xs, g->tid);
    rk_build_sync_lds_only(k);
    kn_span_row xr = kn_span_row_of(k, &xs, g), yr = kn_span_row_of(k, &ys, g);
    rk_value e[KN_SPAN_MAX_CHUNKS];
    kn_span_read_f32(k, &xs, &xr, n, -INFINITY, e);
    rk_value own = e[0];
    for (uint32_t j = 1; j < n; j++) own = rk_build_fmax(k, own, e[j]);
    rk_value nml = neg_max_log2e(k, own);
    rk_value l = rk_const_f32(k, (float)LOG2E);
    rk_value cur[2] = {own, {0}};
    for (uint32_t j = 0; j < n; j++) {
        e[j] = rk_build_exp2(k, rk_build_fma(k, e[j], l, nml));
        cur[1] = j ? rk_build_fadd(k, cur[1], e[j]) : e[j];
    }
    rk_tile_block_cfg cfg = {.wave = kn->wave, .group = g->tpr, .groups = g->rpb, .shuffle_fold = true};
    rk_tile_reducer red = {.n = 2, .op = RK_RED_MAX, .rescale = rescale_sum};
    rk_tile_block_reduce_n(k, &red, &cfg, g->tid, cur);
    rk_value f = rk_build_fdiv(k, rescale_sum(k, rk_const_f32(k, 1.0f), own, cur[0], NULL), cur[1]);
    for (uint32_t j = 0; j < n; j++) e[j] = rk_build_fmul(k, e[j], f);
    kn_span_write_f32(k, &ys, &yr, n, e);
    rk_build_sync_lds_only(k);
    kn_span_store(k, &ys, g->tid);
}

/* work, sync: the Work and Sync parameters of the split path (slices > 1):
 * pass 1 covers the block's slice, the last block to arrive merges the
 * (max, sum) pairs in slice order, and pass 2 is spread over the row's
 * blocks (kn_slices_merge). */
static void build_looped(const rk_softmax_spec *s, rk_kernel *k, const rk_tile_rows *g, const rk_tile_row *xr,
                         const rk_tile_row *yr, rk_value work, rk_value sync, rk_value M) {
    const rk_row_knobs *kn = &s->k;
    uint32_t u = kn->unroll, step = g->tpr * kn->vec;
    rk_value start = rk_build_mul(k, g->lt, kn_i32(k, (int32_t)kn->vec));
    rk_value stride = kn_i32(k, (int32_t)(step * u));
    rk_value from = start, to = xr->len;
    kn_slices sl = {0};
    if (kn->slices > 1) {
        sl = kn_slices_begin(k, kn, 2, work, sync, g, M, xr->len, step * u);
        from = rk_build_add(k, sl.lo, start);
        to = sl.hi;
    }
    /* pass 1: running (max, sum) */
    rk_value init[2], cur[2], res[2];
    init[0] = rk_const_f32(k, -INFINITY);
    init[1] = rk_const_f32(k, 0.0f);
    rk_value base = rk_for_begin(k, from, to, stride, NULL, 2, init, NULL, cur);
    rk_value offs[8], v[8];
    group_offsets(k, base, u, step, offs);
    rk_tile_row_load_f32(k, xr, offs, u, -INFINITY, v);
    online_step(k, cur, v, u);
    rk_for_end(k, cur, 2, res);
    rk_tile_reducer red = {.n = 2, .fn = online_combine};
    rk_tile_block_cfg cfg = {.wave = kn->wave, .group = g->tpr, .groups = g->rpb, .shuffle_fold = true};
    rk_tile_block_reduce_n(k, &red, &cfg, g->tid, res);
    kn_spread sp = {0};
    if (kn->slices > 1) {
        rk_value last = kn_slices_publish(k, &sl, res);
        sp = kn_slices_merge(k, &sl, last, online_combine, RK_RED_MAX, res);
    }
    rk_value gnml = neg_max_log2e(k, res[0]);
    rk_value inv = rk_build_fdiv(k, rk_const_f32(k, 1.0f), res[1]);
    /* pass 2: the whole row, or the slices this block writes */
    rk_value from2 = {0}, to2 = {0};
    if (kn->slices > 1) kn_slices_pass_begin(k, &sp, &sl, &from2, &to2);
    output_looped(s, k, g, xr, yr, from2, to2, gnml, inv);
    if (kn->slices > 1) {
        kn_slices_pass_end(k);
        rk_if_begin(k, sp.last);
        kn_slices_finish(k, &sl);
        rk_if_end(k, NULL, 0);
    }
}

static uint32_t param_align(const rk_instance *in, const rk_kparam *kp) {
    return kn_row_param_align(&in->u.softmax.k, kp);
}

/* stage=direct: the rows read and written in place (cached, kept exps,
 * looped, split over blocks). */
static void build_direct(const rk_softmax_spec *s, rk_kernel *k, const rk_tile_rows *gp, const rk_value *p) {
    const rk_row_knobs *kn = &s->k;
    rk_tile_rows g = *gp;
    rk_tile_row xr = kn_row_view(k, kn, p[0], s->dtype, g.row, p[3], g.active, NULL);
    rk_tile_row yr = kn_row_view(k, kn, p[1], s->out_dtype, g.row, p[3], g.active, &xr);
    /* Work and Sync follow M and N when the row is split */
    rk_value work = kn->slices > 1 ? p[4] : p[2], sync = kn->slices > 1 ? p[5] : p[2];
    if (kn->chunks && s->keep_exps) build_cached_keep(s, k, &g, &xr, &yr);
    else if (kn->chunks) build_cached(s, k, &g, &xr, &yr, work, sync, p[2]);
    else build_looped(s, k, &g, &xr, &yr, work, sync, p[2]);
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_softmax_spec *s = &in->u.softmax;
    const rk_row_knobs *kn = &s->k;
    rk_tile_rows g = rk_tile_rows_begin(k, kn->block_size, kn->rows_per_block, kn->wave, p[2]);
    kn_slices_rows(k, kn, &g, p[2]);
    kn_row_attrs(k, kn, t);
    if (kn->stage == RK_STAGE_SPAN) {
        build_span(s, k, &g, p[0], p[1], p[2], p[3]);
        return;
    }
    if (kn->stage == RK_STAGE_AUTO) {
        /* aligned rows: direct (kept exps as the knob says); else the span */
        rk_softmax_spec d = *s, sp = *s;
        d.k = kn_auto_direct_knobs(kn);
        sp.k = kn_auto_span_knobs(kn);
        sp.keep_exps = false;
        const rk_value ptrs[2] = {p[0], p[1]};
        rk_if_begin(k, kn_auto_direct_cond(k, kn, p[3], ptrs, 2));
        build_direct(&d, k, &g, p);
        rk_else(k, NULL, 0);
        build_span(&sp, k, &g, p[0], p[1], p[2], p[3]);
        rk_if_end(k, NULL, 0);
        return;
    }
    build_direct(s, k, &g, p);
}

const kn_family kn_softmax = {
    .name = "softmax", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = kn_row_dims, .ndims = 2,
    .scalars = kn_row_scalars, .nscalars = 2, .defaults = defaults, .tune = tune, .validate = validate,
    .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build, .cost = cost,
    .reference = kn_softmax_reference, .input_range = input_range, .param_align = param_align,
    .shared_problem = true,
};
