/* rocke — LayerNorm and RMSNorm over the last dim of [M, N] with gamma (and
 * beta), eps, an optional fused residual add (h = round(x + r), written to H)
 * and optional f32 per-row statistics. Both paths accumulate shifted sums
 * (shift = the row's first element, against cancellation) and merge them in
 * one paired reduction. chunks > 0: the row stays in registers in its
 * storage type (x read once). chunks == 0: pass 2 re-reads the row (and r:
 * H is write-only). Layer: kernels. */
#include <math.h>

#include "kern_int.h"

#define NORM_KNOBS(ln)                                                                     \
    KN_DTYPE("dtype", "", u.norm.dtype, "input element type (x, r, gamma, beta, h)"),      \
    KN_DTYPE("out_dtype", "o", u.norm.out_dtype, "output element type (y)"),              \
    KN_BOOL("residual", "res", u.norm.residual, "fused residual add: h = x + r, also written"), \
    KN_BOOL("save_stats", "st", u.norm.save_stats, ln ? "write f32 mean and rstd per row" : "write f32 rstd per row"), \
    KN_ROW_KNOBS(u.norm.k), \
    KN_SLICES_KNOB(u.norm), \
    KN_STAGE_KNOB(u.norm)
static const rk_knob ln_knobs[] = {NORM_KNOBS(1)};
static const rk_knob rms_knobs[] = {NORM_KNOBS(0)};
#define FIRST_ROW_KNOB 4
#define SLICES_KNOB (FIRST_ROW_KNOB + 9)
#define STAGE_KNOB (SLICES_KNOB + 1)
/* registers besides the packed row (ptxas -v, sm_90a; docs/kernels.md), the
 * same for both norms since LayerNorm's padding needs no masks */
#define NORM_BASE_REGS 16u
/* a cached slice: + the merge across blocks and the loop over slices taken
 * from waiters (ptxas -v, sm_90a, docs/kernels.md) */
#define SLICED_BASE_REGS 40u
/* a span: + its addresses and LDS copies (as softmax's); LayerNorm's in-row
 * flags of 12 or more elements a thread take about half a register each
 * (ptxas -v, sm_90a: 16384 x 2047, 16 elements, spilled at 40 registers;
 * 9 elements fit 32) */
#define SPAN_BASE_REGS 20u

static void defaults_common(rk_instance *in, bool rms) {
    rk_norm_spec *s = &in->u.norm;
    s->rms = rms;
    s->dtype = s->out_dtype = RK_S_F16;
    s->residual = s->save_stats = false;
    kn_row_defaults(&s->k);
    s->k.chunks = 4;
}
static void ln_defaults(rk_instance *in) { defaults_common(in, false); }
static void rms_defaults(rk_instance *in) { defaults_common(in, true); }

/* The tensors a span stages: x, [r, h], then y (the output type last). */
static uint32_t span_types(const rk_norm_spec *s, rk_scalar *out) {
    uint32_t n = 0;
    out[n++] = s->dtype;
    if (s->residual) {
        out[n++] = s->dtype;
        out[n++] = s->dtype;
    }
    out[n++] = s->out_dtype;
    return n;
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    rk_norm_spec *s = &in->u.norm;
    rk_scalar w = rk_tile_elem_bytes(s->dtype) >= rk_tile_elem_bytes(s->out_dtype) ? s->dtype : s->out_dtype;
    bool nv = t->vendor == RK_VENDOR_NVIDIA;
    rk_scalar spans[4];
    uint32_t ns = span_types(s, spans);
    /* NVIDIA: odd rows of two full chunks take four (split_wide), and the span's limits moved with it */
    uint64_t span_max = s->rms ? (nv ? KN_SPAN_MAX_N_RMSNORM_NV : KN_SPAN_MAX_N_RMSNORM)
                               : (nv ? KN_SPAN_MAX_N_LAYERNORM_NV : KN_SPAN_MAX_N_LAYERNORM);
    kn_row_tune_stage(&s->k, t, w, sh, locked, FIRST_ROW_KNOB, 4, nv ? 16 : 0, nv ? 32 : 0, SLICES_KNOB, STAGE_KNOB,
                      spans, ns, span_max);
    /* auto: its span holds chunks x vec f32 elements */
    uint32_t held = s->k.stage == RK_STAGE_AUTO ? s->k.chunks * s->k.vec : s->k.chunks;
    if (s->k.stage != RK_STAGE_DIRECT)
        kn_row_tune_occupancy(&s->k, t, RK_S_F32, locked, FIRST_ROW_KNOB,
                              SPAN_BASE_REGS + (!s->rms && held >= 12 ? held / 2 : 0));
    else
        kn_row_tune_occupancy(&s->k, t, s->dtype, locked, FIRST_ROW_KNOB, NORM_BASE_REGS);
    /* NVIDIA looped LayerNorm rows of 1024 threads (64 registers): x, gamma
     * and beta of 4 vectors of 8 16-bit elements spill (bf16, ptxas -v:
     * 96 bytes at 1000 x 151936, measured at half of f16's bandwidth), 2 do
     * not (55 registers); f32 (vec 4) fits at 4 (58) */
    /* cached slices (slices > 1 with chunks) stay a knob, not the heuristic's pick: measured on the H200
     * (bf16 LayerNorm 1000 x 151936: 1662 GB/s against 2445 looped with 2 vectors; 1024 x 50257: 1109
     * against 1742 for one block of 7 chunks; RMSNorm likewise, bench/RESULTS.md session 5) */
    if (s->k.slices > 1 && s->k.chunks) kn_row_tune_occupancy(&s->k, t, s->dtype, locked, FIRST_ROW_KNOB, SLICED_BASE_REGS);
    bool unroll_locked = (locked >> (FIRST_ROW_KNOB + 5)) & 1u;
    if (nv && !s->rms && !s->k.chunks && s->k.slices < 2 && !unroll_locked && s->k.vec * s->k.unroll > 16)
        s->k.unroll = 16 / s->k.vec;
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_norm_spec *s = &in->u.norm;
    if (s->rms != (in->family == RK_FAMILY_RMSNORM))
        return rk_fail(RK_ERR_INVALID, "spec field 'rms' must be %s for family %s",
                       in->family == RK_FAMILY_RMSNORM ? "true" : "false", rk_family_name(in->family));
    rk_scalar spans[4];
    uint32_t ns = span_types(s, spans);
    return kn_row_validate_stage(&s->k, t, spans, ns);
}

static rk_status check_shape(const rk_instance *in, const rk_shape *s) {
    return kn_row_check_shape(&in->u.norm.k, s);
}

/* M and N from the shape; eps given (rocke run --arg eps=...) */
static const rk_scalar_decl scalars[] = {
    {"M", RK_S_I32, RK_SC_DIM, "M", NULL, 0, "rows"},
    {"N", RK_S_I32, RK_SC_DIM, "N", NULL, 0, "row length"},
    {"eps", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 1e-5, "added to the variance before the square root"},
};

/* X, [R], Gamma, [Beta], Y, [H], [Mean], [Rstd], M, N, eps, [Work] */
static void signature(const rk_instance *in, rk_ksig *s) {
    const rk_norm_spec *n = &in->u.norm;
    kn_sig_add(s, "X", true, n->dtype, RK_KP_IN, "M,N");
    if (n->residual) kn_sig_add(s, "R", true, n->dtype, RK_KP_IN, "M,N");
    kn_sig_add(s, "Gamma", true, n->dtype, RK_KP_IN, "N");
    if (!n->rms) kn_sig_add(s, "Beta", true, n->dtype, RK_KP_IN, "N");
    kn_sig_add(s, "Y", true, n->out_dtype, RK_KP_OUT, "M,N");
    if (n->residual) kn_sig_add(s, "H", true, n->dtype, RK_KP_OUT, "M,N");
    if (n->save_stats && !n->rms) kn_sig_add(s, "Mean", true, RK_S_F32, RK_KP_OUT, "M");
    if (n->save_stats) kn_sig_add(s, "Rstd", true, RK_S_F32, RK_KP_OUT, "M");
    kn_sig_add(s, "M", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(s, "N", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(s, "eps", false, RK_S_F32, RK_KP_SCALAR, NULL);
    kn_slices_signature(s, &n->k, 2, true);
}

static void geometry(const rk_instance *in, rk_launch_geom *g) { kn_row_geometry(&in->u.norm.k, g); }

static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    const rk_norm_spec *s = &in->u.norm;
    const double N = (double)sh->dim[1];
    double e = rk_tile_elem_bytes(s->dtype), mn = (double)sh->dim[0] * N;
    *bytes = mn * (e * (s->residual ? 3 : 1) + rk_tile_elem_bytes(s->out_dtype)) + N * e * (s->rms ? 1 : 2);
    *flops = (s->rms ? 4.0 : 7.0) * mn;
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    (void)in; (void)away;
    if (!strcmp(kp->name, "Gamma")) { *lo = 0.5; *hi = 1.5; }
    else if (!strcmp(kp->name, "Beta")) { *lo = -0.5; *hi = 0.5; }
    else if (!strcmp(kp->name, "R")) { *lo = -1; *hi = 1; }
    else { *lo = -1.5; *hi = 2.5; }   /* x: mean ~0.5 exercises the centring */
}

typedef struct norm_io {
    const rk_value *p;
    int x, r, gamma, beta, y, h, mean, rstd, M, N, eps, work, sync;   /* parameter indices, -1 = absent */
} norm_io;

static norm_io io_of(const rk_norm_spec *n, const rk_value *p) {
    norm_io io = {.p = p, .r = -1, .beta = -1, .h = -1, .mean = -1, .rstd = -1};
    int i = 0;
    io.x = i++;
    if (n->residual) io.r = i++;
    io.gamma = i++;
    if (!n->rms) io.beta = i++;
    io.y = i++;
    if (n->residual) io.h = i++;
    if (n->save_stats && !n->rms) io.mean = i++;
    if (n->save_stats) io.rstd = i++;
    io.M = i++;
    io.N = i++;
    io.eps = i++;
    io.work = n->k.slices > 1 ? i++ : -1;
    io.sync = n->k.slices > 1 ? i : -1;
    return io;
}

/* Zero the padding lanes of a chunk. */
static rk_value masked(rk_kernel *k, const rk_tile_row *r, rk_value off, rk_value v) {
    rk_value m = rk_tile_chunk_valid(k, r, off);
    rk_value z = rk_tile_f32s(k, 0.0f, r->vec);
    return r->vec > 1 ? rk_build_vselect(k, m, v, z) : rk_build_select(k, m, v, z);
}

typedef struct norm_ctx {
    const rk_norm_spec *s;
    norm_io io;
    rk_tile_rows g;
    rk_tile_row xr, rr, gr, br, yr, hr;
    rk_tile_block_cfg cfg;
    rk_value nf;     /* N as f32 */
} norm_ctx;

/* h = round(x + r) as f32, written to H when `store`; x alone otherwise. */
static void fuse_residual(rk_kernel *k, norm_ctx *c, const rk_value *offs, uint32_t n, rk_value *v, bool store) {
    if (!c->s->residual) return;
    rk_value r[RK_TILE_MAX_CHUNKS], h[RK_TILE_MAX_CHUNKS];
    rk_tile_row_load_f32(k, &c->rr, offs, n, 0.0, r);
    for (uint32_t i = 0; i < n; i++) {
        h[i] = rk_tile_from_f32(k, rk_tile_add(k, v[i], r[i]), c->s->dtype);
        v[i] = rk_tile_to_f32(k, h[i]);
    }
    if (store) rk_tile_row_store(k, &c->hr, offs, n, h);
}

/* y = (v - mean) * rstd * gamma (+ beta); mean NULL for RMSNorm. */
static void normalize_store(rk_kernel *k, norm_ctx *c, const rk_value *offs, uint32_t n, const rk_value *v,
                            const rk_value *gam, const rk_value *bet, rk_value mean, rk_value rstd) {
    rk_value y[RK_TILE_MAX_CHUNKS];
    for (uint32_t i = 0; i < n; i++) {
        rk_value d = rk_value_ok(mean) ? rk_tile_sub(k, v[i], rk_tile_bcast(k, mean, v[i])) : v[i];
        rk_value t = rk_tile_mul(k, d, rk_tile_bcast(k, rstd, d));
        rk_value gf = rk_tile_to_f32(k, gam[i]);
        y[i] = bet ? rk_tile_fma(k, t, gf, rk_tile_to_f32(k, bet[i])) : rk_tile_mul(k, t, gf);
    }
    rk_tile_row_store_f32(k, &c->yr, offs, n, y);
}

static void store_stats(rk_kernel *k, norm_ctx *c, rk_value mean, rk_value rstd) {
    if (!c->s->save_stats) return;
    rk_value first = rk_build_cmp(k, "eq", c->g.lt, kn_i32(k, 0));
    rk_if_begin(k, rk_build_and(k, first, c->g.active));
    if (c->io.mean >= 0) rk_store_global(k, c->io.p[c->io.mean], c->g.row, mean);
    rk_store_global(k, c->io.p[c->io.rstd], c->g.row, rstd);
    rk_if_end(k, NULL, 0);
}

static rk_value rstd_of(rk_kernel *k, norm_ctx *c, rk_value var) {
    rk_value v = rk_build_fadd(k, var, c->io.p[c->io.eps]);
    return rk_build_rsqrt(k, v);
}

/* Per-thread sums of d = f32(x) - shift and of d^2 (shift invalid: d = x).
 * One running sum each, element by element: a single d is live at a time (a
 * tree per chunk would hold a chunk's worth of f32 values and partials).
 * Padding lanes hold h[0] (LayerNorm) or 0 (RMSNorm): d is 0 there. */
static void chunk_sums(rk_kernel *k, norm_ctx *c, const rk_tile_regs *x, rk_value shift, bool want1,
                       rk_value out[2]) {
    rk_value s1 = {0}, s2 = {0};
    for (uint32_t i = 0; i < x->n; i++) {
        rk_value d = rk_tile_to_f32(k, x->v[i]);
        if (rk_value_ok(shift)) d = rk_tile_sub(k, d, rk_tile_bcast(k, shift, d));
        for (uint32_t e = 0; e < c->xr.vec; e++) {
            rk_value de = c->xr.vec > 1 ? rk_build_vextract(k, d, e) : d;
            bool first = i == 0 && e == 0;
            if (want1) s1 = first ? de : rk_build_fadd(k, s1, de);
            s2 = first ? rk_build_fmul(k, de, de) : rk_build_fma(k, de, de, s2);
        }
    }
    out[0] = want1 ? s1 : (rk_value){0};
    out[1] = s2;
}

/* h[0] of the row in the storage type: x[0], or round(x[0] + r[0]) when
 * fused (the shift of the sums; 0 for an empty row). */
static rk_value first_h(rk_kernel *k, norm_ctx *c) {
    rk_value z = c->xr.shifted ? c->xr.lo : kn_i32(k, 0), h0 = rk_tile_row_load1(k, &c->xr, z, 0.0);
    if (!c->s->residual) return h0;
    rk_value r0 = rk_tile_row_load1_f32(k, &c->rr, z, 0.0);
    return rk_tile_from_f32(k, rk_build_fadd(k, rk_tile_to_f32(k, h0), r0), c->s->dtype);
}

/* Padding lanes (past the row's end) take the value h0, so d = h - h[0] is
 * exactly 0 there and one unmasked sum serves every thread; only threads
 * reaching past the end run the selects, on the packed registers. */
static void pad_with(rk_kernel *k, norm_ctx *c, rk_tile_regs *x, rk_value h0, rk_value whole) {
    rk_type ts[RK_TILE_MAX_CHUNKS];
    rk_value out[RK_TILE_MAX_CHUNKS], y[RK_TILE_MAX_CHUNKS];
    uint32_t vec = c->xr.vec;
    for (uint32_t i = 0; i < x->n; i++) ts[i] = rk_value_type(k, x->v[i]);
    rk_if_else_begin(k, whole, x->n, ts, out);
    rk_else(k, x->v, x->n);
    rk_value fill = vec > 1 ? rk_build_vsplat(k, h0, vec) : h0;
    for (uint32_t i = 0; i < x->n; i++) {
        rk_value m = rk_tile_chunk_valid(k, &c->xr, x->off[i]);
        y[i] = vec > 1 ? rk_build_vselect(k, m, x->v[i], fill) : rk_build_select(k, m, x->v[i], fill);
    }
    rk_if_end(k, y, x->n);
    memcpy(x->v, out, x->n * sizeof *out);
}

/* y of chunk i from f32(-h), every access a whole vector (the thread's
 * chunks are all inside the row): the packed row is converted again after
 * the barrier as another expression (bit-identical, (-h - -mean)·-rstd), so
 * no f32 copy of it lives across; gamma/beta of one chunk at a time, loaded
 * here (cache-resident, never held across the reduction). */
static void output_whole(rk_kernel *k, norm_ctx *c, const rk_tile_regs *x, uint32_t i, rk_value nmean,
                         rk_value nrstd) {
    bool rms = c->s->rms;
    rk_value gam, bet = {0}, nh = rk_tile_to_f32_neg(k, x->v[i]);
    rk_tile_row_load_whole(k, &c->gr, &x->off[i], 1, &gam);
    if (!rms) rk_tile_row_load_whole(k, &c->br, &x->off[i], 1, &bet);
    rk_value d = rms ? nh : rk_tile_sub(k, nh, rk_tile_bcast(k, nmean, nh));
    rk_value t = rk_tile_mul(k, d, rk_tile_bcast(k, nrstd, d));
    rk_value gf = rk_tile_to_f32(k, gam);
    rk_value y = rms ? rk_tile_mul(k, t, gf) : rk_tile_fma(k, t, gf, rk_tile_to_f32(k, bet));
    y = rk_tile_from_f32(k, y, c->yr.elem);
    rk_tile_row_store_whole(k, &c->yr, &x->off[i], 1, &y);
}

/* Threads whose chunks reach past the row's end (and rows that are not
 * vec-aligned or not there): a loop over the thread's chunks that reads x
 * (and r) again, a moment after the first read (L1/L2), with tail-safe
 * accesses. Compact, holds no row, and shares no leading code with the
 * vector path (compilers hoist common code out of both arms of a branch,
 * which would keep converted values live across it). It uses -mean and
 * -rstd as the vector path does (one pair live, not two): h - mean =
 * h + (-mean) and ((h - mean)·-rstd)·-gamma = (h - mean)·rstd·gamma exactly. */
static void output_tail(rk_kernel *k, norm_ctx *c, rk_value off, rk_value nmean, rk_value nrstd) {
    rk_if_begin(k, rk_build_cmp(k, "lt", off, c->xr.len));
    rk_value v, gam, bet;
    rk_tile_row_load_f32(k, &c->xr, &off, 1, 0.0, &v);
    fuse_residual(k, c, &off, 1, &v, false);
    rk_tile_row_load(k, &c->gr, &off, 1, 0.0, &gam);
    if (!c->s->rms) rk_tile_row_load(k, &c->br, &off, 1, 0.0, &bet);
    rk_value d = c->s->rms ? v : rk_tile_add(k, v, rk_tile_bcast(k, nmean, v));
    rk_value t = rk_tile_mul(k, d, rk_tile_bcast(k, nrstd, d));
    rk_value ng = rk_tile_to_f32_neg(k, gam);
    rk_value y = c->s->rms ? rk_tile_mul(k, t, ng) : rk_tile_fma(k, t, ng, rk_tile_to_f32(k, bet));
    rk_tile_row_store_f32(k, &c->yr, &off, 1, &y);
    rk_if_end(k, NULL, 0);
}

/* whole and every other view of the output phase aligned under x's split
 * (an unsplit view shares x's alignment: the same stride, aligned bases). */
static rk_value all_aligned(rk_kernel *k, norm_ctx *c, rk_value whole) {
    whole = rk_build_and(k, whole, c->gr.vec_ok);
    if (!c->s->rms) whole = rk_build_and(k, whole, c->br.vec_ok);
    whole = rk_build_and(k, whole, c->yr.vec_ok);
    if (c->s->residual) {
        whole = rk_build_and(k, whole, c->rr.vec_ok);
        whole = rk_build_and(k, whole, c->hr.vec_ok);
    }
    return whole;
}

/* The views x, r, y and h end at `end` (a slice's end): chunks past it read
 * the fill and write nothing (masked tails). */
static void clip_views(norm_ctx *c, rk_value end) {
    c->xr.len = c->yr.len = end;
    if (c->s->residual) c->rr.len = c->hr.len = end;
}

/* Publish the block's sums, merge the slices' (every slice sums about the
 * same shift: an ordered sum). */
static kn_spread merge_slices(rk_kernel *k, const kn_slices *sl, rk_value *sums) {
    rk_value last = kn_slices_publish(k, sl, sums);
    return kn_slices_merge(k, sl, last, NULL, RK_RED_SUM, sums);
}

static void group_offsets(rk_kernel *k, rk_value base, uint32_t u, uint32_t step, rk_value *offs) {
    for (uint32_t i = 0; i < u; i++) offs[i] = i ? rk_build_add(k, base, kn_i32(k, (int32_t)(i * step))) : base;
}

/* The looped output pass over [from, to) (from invalid: 0; to invalid: the
 * end of x's view): x (and r) read again, h rounded again (H is write-only
 * in the ABI). */
static void output_looped(rk_kernel *k, norm_ctx *c, rk_value from, rk_value to, rk_value mean, rk_value rstd) {
    const rk_row_knobs *kn = &c->s->k;
    uint32_t u = kn->unroll, step = c->g.tpr * kn->vec;
    bool rms = c->s->rms;
    rk_value start = rk_build_mul(k, c->g.lt, kn_i32(k, (int32_t)kn->vec));
    rk_value stride = kn_i32(k, (int32_t)(step * u));
    rk_value from2 = rk_value_ok(from) ? rk_build_add(k, from, start) : start;
    rk_value end = rk_value_ok(to) ? to : c->xr.len;
    rk_value b2 = rk_for_begin(k, from2, end, stride, NULL, 0, NULL, NULL, NULL);
    rk_value offs[8], v[8], gam[8], bet[8];
    group_offsets(k, b2, u, step, offs);
    rk_tile_row_load_f32(k, &c->xr, offs, u, 0.0, v);
    fuse_residual(k, c, offs, u, v, false);
    rk_tile_row_load(k, &c->gr, offs, u, 0.0, gam);
    if (!rms) rk_tile_row_load(k, &c->br, offs, u, 0.0, bet);
    normalize_store(k, c, offs, u, v, gam, rms ? NULL : bet, mean, rstd);
    rk_for_end(k, NULL, 0, NULL);
}

/* The row (h when fused: also the storage type) stays in registers in its
 * storage type, so a chunk of 8 16-bit elements costs 4 registers. Pass 1
 * converts it for the shifted sums (one paired reduction, as the looped
 * path: shift = h[0]); one test of the thread's last chunk then picks the
 * output code: whole vectors from the registers, or the tail loop. */
static void build_cached(rk_kernel *k, norm_ctx *c) {
    const rk_row_knobs *kn = &c->s->k;
    bool rms = c->s->rms, sliced = kn->slices > 1;
    rk_tile_regs x;
    norm_ctx full = *c;
    kn_slices sl = {0};
    rk_value lt = c->g.lt;
    if (sliced) {
        /* this block's slice: whole cached slices, the views ending at its end */
        uint32_t stride = c->g.tpr * kn->vec * kn->chunks;
        sl = kn_slices_begin(k, kn, 2, c->io.p[c->io.work], c->io.p[c->io.sync], &c->g, c->io.p[c->io.M], c->xr.len,
                             stride);
        clip_views(c, sl.hi);
        rk_value vc = kn_i32(k, (int32_t)kn->vec);
        rk_value lo_vecs = rk_build_udiv(k, sl.lo, vc);
        lt = rk_build_add(k, lt, lo_vecs);
    }
    rk_tile_regs_load_packed(k, &c->xr, lt, c->g.tpr, kn->chunks, 0.0, &x);
    rk_value h0 = rms ? (rk_value){0} : first_h(k, c);
    if (c->s->residual) {
        rk_value r[RK_TILE_MAX_CHUNKS];
        rk_tile_row_load(k, &c->rr, x.off, x.n, 0.0, r);
        for (uint32_t i = 0; i < x.n; i++) {
            rk_value rf = rk_tile_to_f32(k, r[i]);
            rk_value xf = rk_tile_to_f32(k, x.v[i]);
            x.v[i] = rk_tile_from_f32(k, rk_tile_add(k, xf, rf), c->s->dtype);
        }
        rk_tile_row_store(k, &c->hr, x.off, x.n, x.v);
    }
    rk_value whole = rk_tile_row_whole(k, &c->xr, x.off[0], x.off[x.n - 1]);
    if (kn->split) whole = all_aligned(k, c, whole);
    rk_value shift = {0}, sums[2];
    if (!rms) {
        pad_with(k, c, &x, h0, whole);
        shift = rk_tile_to_f32(k, h0);
    }
    chunk_sums(k, c, &x, shift, !rms || sliced, sums);
    rk_value mean = {0}, var;
    /* 1/N by the hardware reciprocal (exact for powers of two, 1 ulp
     * otherwise): an IEEE division is a subroutine call on NVIDIA, and the
     * call makes ptxas spill the live row around it */
    rk_value inv_n = rk_build_rcp_fast(k, rk_build_sitofp(k, c->io.p[c->io.N], RK_T_F32));
    kn_spread sp = {0};
    if (rms && !sliced) {
        var = rk_build_fmul(k, rk_tile_block_reduce(k, RK_RED_SUM, &c->cfg, c->g.tid, sums[1]), inv_n);
    } else if (rms) {
        rk_tile_reducer red = {.n = 2, .op = RK_RED_SUM};
        rk_tile_block_reduce_n(k, &red, &c->cfg, c->g.tid, sums);
        sp = merge_slices(k, &sl, sums);
        var = rk_build_fmul(k, sums[1], inv_n);
    } else {
        rk_tile_reducer red = {.n = 2, .op = RK_RED_SUM};
        rk_tile_block_reduce_n(k, &red, &c->cfg, c->g.tid, sums);
        if (sliced) sp = merge_slices(k, &sl, sums);
        rk_value m1 = rk_build_fmul(k, sums[0], inv_n);        /* mean of (h - shift) */
        rk_value m2 = rk_build_fmul(k, sums[1], inv_n);
        mean = rk_build_fadd(k, shift, m1);
        rk_value f0 = rk_const_f32(k, 0.0f);
        var = rk_build_fmax(k, rk_build_fsub(k, m2, rk_build_fmul(k, m1, m1)), f0);
    }
    rk_value rstd = rstd_of(k, c, var);
    /* (-h - -mean) * -rstd = (h - mean) * rstd exactly */
    rk_value nmean = rms ? (rk_value){0} : rk_build_fneg(k, mean), nrstd = rk_build_fneg(k, rstd);
    /* split: its own slice (the last block, or a waiter that claimed it)
     * from the registers, outside the loop over slices below (inside it,
     * LICM would hoist every chunk's conversion and gamma/beta loads) */
    if (sliced) rk_if_begin(k, rk_build_or(k, sp.last, sp.mine));
    rk_if_begin(k, whole);
    for (uint32_t i = 0; i < x.n; i++) {
        /* always true (-rstd is <= 0 or NaN, never i + 1), but no compiler
         * can tell: a branch per chunk keeps ptxas from hoisting the next
         * chunks' gamma/beta loads above this chunk's store, which in
         * straight-line code it does and then spills at 32 registers */
        rk_if_begin(k, rk_build_fcmp(k, "une", nrstd, rk_const_f32(k, (float)(i + 1))));
        output_whole(k, c, &x, i, nmean, nrstd);
        rk_if_end(k, NULL, 0);
    }
    rk_else(k, NULL, 0);
    for (uint32_t i = 0; i < x.n; i++) output_tail(k, c, x.off[i], nmean, nrstd);
    rk_if_end(k, NULL, 0);
    if (!sliced) {
        store_stats(k, c, mean, rstd);
        return;
    }
    rk_if_end(k, NULL, 0);
    /* the slices the last block takes from waiters that gave up: the looped
     * output over the row (x and r read again) */
    rk_value from, to;
    kn_slices_pass_begin(k, &sp, &sl, &from, &to);
    rk_if_begin(k, rk_build_cmp(k, "ne", from, sl.lo));
    clip_views(&full, to);
    output_looped(k, &full, from, to, mean, rstd);
    rk_if_end(k, NULL, 0);
    kn_slices_pass_end(k);
    rk_if_begin(k, sp.last);
    store_stats(k, c, mean, rstd);
    kn_slices_finish(k, &sl);
    rk_if_end(k, NULL, 0);
}

static void build_looped(rk_kernel *k, norm_ctx *c) {
    const rk_row_knobs *kn = &c->s->k;
    uint32_t u = kn->unroll, step = c->g.tpr * kn->vec;
    bool rms = c->s->rms;
    rk_value start = rk_build_mul(k, c->g.lt, kn_i32(k, (int32_t)kn->vec));
    rk_value stride = kn_i32(k, (int32_t)(step * u));
    /* shift: h[0] of the row (x[0] + r[0] rounded when fused); 0 for RMSNorm */
    rk_value shift = rk_const_f32(k, 0.0f);
    if (!rms) {
        rk_value z = c->xr.shifted ? c->xr.lo : kn_i32(k, 0);
        shift = rk_tile_row_load1_f32(k, &c->xr, z, 0.0);
        if (c->s->residual) {
            rk_value r0 = rk_tile_row_load1_f32(k, &c->rr, z, 0.0);
            shift = rk_tile_to_f32(k, rk_tile_from_f32(k, rk_build_fadd(k, shift, r0), c->s->dtype));
        }
    }
    rk_value zero = rk_tile_f32s(k, 0.0f, kn->vec);
    rk_value init[2] = {zero, zero}, cur[2], res[2];
    rk_value from = start, to = c->xr.len;
    kn_slices sl = {0};
    if (kn->slices > 1) {
        sl = kn_slices_begin(k, kn, 2, c->io.p[c->io.work], c->io.p[c->io.sync], &c->g, c->io.p[c->io.M], c->xr.len,
                             step * u);
        from = rk_build_add(k, sl.lo, start);
        to = sl.hi;
    }
    rk_value base = rk_for_begin(k, from, to, stride, NULL, 2, init, NULL, cur);
    rk_value offs[8], v[8];
    group_offsets(k, base, u, step, offs);
    rk_tile_row_load_f32(k, &c->xr, offs, u, 0.0, v);
    fuse_residual(k, c, offs, u, v, true);
    for (uint32_t i = 0; i < u; i++) {
        rk_value d = masked(k, &c->xr, offs[i], rk_tile_sub(k, v[i], rk_tile_bcast(k, shift, v[i])));
        cur[0] = rk_tile_add(k, cur[0], d);
        cur[1] = rk_tile_fma(k, d, d, cur[1]);
    }
    rk_for_end(k, cur, 2, res);
    rk_value sums[2];
    sums[0] = rk_tile_vec_reduce(k, RK_RED_SUM, res[0]);
    sums[1] = rk_tile_vec_reduce(k, RK_RED_SUM, res[1]);
    rk_tile_reducer red = {.n = 2, .op = RK_RED_SUM};
    rk_tile_block_reduce_n(k, &red, &c->cfg, c->g.tid, sums);
    kn_spread sp = {0};
    if (kn->slices > 1) sp = merge_slices(k, &sl, sums);
    rk_value m1 = rk_build_fdiv(k, sums[0], c->nf);        /* mean of (h - shift) */
    rk_value m2 = rk_build_fdiv(k, sums[1], c->nf);
    rk_value mean = {0}, var = m2;
    if (!rms) {
        mean = rk_build_fadd(k, shift, m1);
        rk_value f0 = rk_const_f32(k, 0.0f);
        var = rk_build_fmax(k, rk_build_fsub(k, m2, rk_build_fmul(k, m1, m1)), f0);
    }
    rk_value rstd = rstd_of(k, c, var);
    /* pass 2: re-read x (and r): H is write-only in the ABI; the whole row
     * or the slices this block writes */
    rk_value from2 = {0}, to2 = {0};   /* the row from its start to its end */
    if (kn->slices > 1) kn_slices_pass_begin(k, &sp, &sl, &from2, &to2);
    output_looped(k, c, from2, to2, mean, rstd);
    if (kn->slices < 2) {
        store_stats(k, c, mean, rstd);
        return;
    }
    kn_slices_pass_end(k);
    rk_if_begin(k, sp.last);
    store_stats(k, c, mean, rstd);
    kn_slices_finish(k, &sl);
    rk_if_end(k, NULL, 0);
}

/* stage=span: x (and r) through LDS (row_span.c); each thread holds its
 * elements of h in f32, sums d = h - h[0] and d^2 (LayerNorm) or h^2
 * (RMSNorm) with padding at 0, one reduction, then y (gamma, beta per
 * element from L1/L2) into y's span and h into its own, stored after one
 * barrier. */
static void build_span(rk_kernel *k, norm_ctx *c) {
    const rk_norm_spec *s = c->s;
    const rk_row_knobs *kn = &s->k;
    const rk_value *p = c->io.p;
    rk_value M = p[c->io.M], N = p[c->io.N];
    bool rms = s->rms, res = s->residual;
    uint32_t n = kn->chunks;
    RK_ASSERT(n <= KN_SPAN_MAX_CHUNKS, "norm span: elements a thread");
    kn_span xs = kn_span_open(k, kn, p[c->io.x], s->dtype, M, N), rs = {0}, hs = {0};
    if (res) rs = kn_span_open(k, kn, p[c->io.r], s->dtype, M, N);
    kn_span ys = kn_span_open(k, kn, p[c->io.y], s->out_dtype, M, N);
    if (res) hs = kn_span_open(k, kn, p[c->io.h], s->dtype, M, N);
    kn_span_load(k, &xs, c->g.tid);
    if (res) kn_span_load(k, &rs, c->g.tid);
    rk_build_sync_lds_only(k);
    kn_span_row xr = kn_span_row_of(k, &xs, &c->g), rr = {0}, hr = {0};
    if (res) {
        rr = kn_span_row_of(k, &rs, &c->g);
        hr = kn_span_row_of(k, &hs, &c->g);
    }
    rk_value h[KN_SPAN_MAX_CHUNKS], v[KN_SPAN_MAX_CHUNKS], ok[KN_SPAN_MAX_CHUNKS], e[KN_SPAN_MAX_CHUNKS];
    kn_span_read_f32(k, &xs, &xr, n, 0.0, h);
    for (uint32_t j = 0; j < n; j++) e[j] = kn_span_elem(k, &xr, j, &ok[j]);
    if (res) {
        kn_span_read_f32(k, &rs, &rr, n, 0.0, v);
        for (uint32_t j = 0; j < n; j++) {
            rk_value sum = rk_build_fadd(k, h[j], v[j]);
            h[j] = rk_tile_to_f32(k, rk_tile_from_f32(k, sum, s->dtype));
        }
        kn_span_write_f32(k, &hs, &hr, n, h);
    }
    /* LayerNorm's shift: h[0] of the row (every lane reads the same LDS word) */
    rk_value shift = {0}, f0 = rk_const_f32(k, 0.0f);
    if (!rms) {
        kn_span_row r0 = xr;
        r0.lt = kn_i32(k, 0);
        r0.first = rk_build_sub(k, xr.first, c->g.lt);
        rk_value x0;
        kn_span_read_f32(k, &xs, &r0, 1, 0.0, &x0);
        shift = x0;
        if (res) {
            kn_span_row q0 = rr;
            q0.lt = r0.lt;
            q0.first = rk_build_sub(k, rr.first, c->g.lt);
            rk_value y0;
            kn_span_read_f32(k, &rs, &q0, 1, 0.0, &y0);
            shift = rk_tile_to_f32(k, rk_tile_from_f32(k, rk_build_fadd(k, x0, y0), s->dtype));
        }
    }
    rk_value s1 = {0}, s2 = {0};
    for (uint32_t j = 0; j < n; j++) {
        rk_value d = rms ? h[j] : rk_build_select(k, ok[j], rk_build_fsub(k, h[j], shift), f0);
        if (!rms) s1 = j ? rk_build_fadd(k, s1, d) : d;
        s2 = j ? rk_build_fma(k, d, d, s2) : rk_build_fmul(k, d, d);
    }
    rk_value inv_n = rk_build_rcp_fast(k, rk_build_sitofp(k, N, RK_T_F32));
    rk_value mean = {0}, var;
    if (rms) {
        var = rk_build_fmul(k, rk_tile_block_reduce(k, RK_RED_SUM, &c->cfg, c->g.tid, s2), inv_n);
    } else {
        rk_value sums[2] = {s1, s2};
        rk_tile_reducer red = {.n = 2, .op = RK_RED_SUM};
        rk_tile_block_reduce_n(k, &red, &c->cfg, c->g.tid, sums);
        rk_value m1 = rk_build_fmul(k, sums[0], inv_n);        /* mean of (h - shift) */
        rk_value m2 = rk_build_fmul(k, sums[1], inv_n);
        mean = rk_build_fadd(k, shift, m1);
        var = rk_build_fmax(k, rk_build_fsub(k, m2, rk_build_fmul(k, m1, m1)), f0);
    }
    rk_value rstd = rstd_of(k, c, var);
    for (uint32_t j = 0; j < n; j++) {
        /* gamma (beta) of element e, outside the row element 0 */
        rk_value at = rk_build_select(k, ok[j], e[j], kn_i32(k, 0));
        rk_value gf = rk_tile_to_f32(k, rk_load_global(k, p[c->io.gamma], at, 1));
        rk_value d = rms ? h[j] : rk_build_fsub(k, h[j], mean);
        rk_value t = rk_build_fmul(k, d, rstd);
        if (rms) {
            v[j] = rk_build_fmul(k, t, gf);
        } else {
            rk_value bf = rk_tile_to_f32(k, rk_load_global(k, p[c->io.beta], at, 1));
            v[j] = rk_build_fma(k, t, gf, bf);
        }
    }
    kn_span_row yr = kn_span_row_of(k, &ys, &c->g);
    kn_span_write_f32(k, &ys, &yr, n, v);
    rk_build_sync_lds_only(k);
    kn_span_store(k, &ys, c->g.tid);
    if (res) kn_span_store(k, &hs, c->g.tid);
    store_stats(k, c, mean, rstd);
}

/* stage=direct: the rows read and written in place (cached or looped). */
static void build_direct(rk_kernel *k, norm_ctx *cp) {
    norm_ctx c = *cp;
    const rk_row_knobs *kn = &c.s->k;
    const rk_value *p = c.io.p;
    rk_value N = p[c.io.N];
    rk_scalar dt = c.s->dtype;
    c.xr = kn_row_view(k, kn, p[c.io.x], dt, c.g.row, N, c.g.active, NULL);
    c.yr = kn_row_view(k, kn, p[c.io.y], c.s->out_dtype, c.g.row, N, c.g.active, &c.xr);
    if (c.s->residual) {
        c.rr = kn_row_view(k, kn, p[c.io.r], dt, c.g.row, N, c.g.active, &c.xr);
        c.hr = kn_row_view(k, kn, p[c.io.h], dt, c.g.row, N, c.g.active, &c.xr);
    }
    rk_value zero = kn_i32(k, 0), yes = rk_const_bool(k, true);
    /* gamma and beta take x's split: aligned under it only when x's row is
     * (vec_ok), else their chunks load per element (cache-resident) */
    if (kn->split) {
        c.gr = rk_tile_row_view_split(k, p[c.io.gamma], dt, zero, zero, N, yes, kn->vec, kn->tail, &c.xr, 0);
        if (!c.s->rms)
            c.br = rk_tile_row_view_split(k, p[c.io.beta], dt, zero, zero, N, yes, kn->vec, kn->tail, &c.xr, 0);
    } else {
        c.gr = rk_tile_row_view(k, p[c.io.gamma], dt, zero, zero, N, yes, kn->vec, kn->tail);
        if (!c.s->rms) c.br = rk_tile_row_view(k, p[c.io.beta], dt, zero, zero, N, yes, kn->vec, kn->tail);
    }
    c.nf = rk_build_sitofp(k, N, RK_T_F32);
    if (kn->chunks) build_cached(k, &c);
    else build_looped(k, &c);
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    norm_ctx c = {.s = &in->u.norm};
    const rk_row_knobs *kn = &c.s->k;
    c.io = io_of(c.s, p);
    rk_value M = p[c.io.M];
    c.g = rk_tile_rows_begin(k, kn->block_size, kn->rows_per_block, kn->wave, M);
    kn_slices_rows(k, kn, &c.g, M);
    c.cfg = (rk_tile_block_cfg){.wave = kn->wave, .group = c.g.tpr, .groups = c.g.rpb, .shuffle_fold = true};
    kn_row_attrs(k, kn, t);
    if (kn->stage == RK_STAGE_SPAN) {
        build_span(k, &c);
        return;
    }
    if (kn->stage == RK_STAGE_AUTO) {
        /* aligned rows (x, r, gamma, beta, y, h all on 16 bytes): direct; else the span */
        rk_norm_spec d = *c.s, sp = *c.s;
        d.k = kn_auto_direct_knobs(kn);
        sp.k = kn_auto_span_knobs(kn);
        const int at[6] = {c.io.x, c.io.r, c.io.gamma, c.io.beta, c.io.y, c.io.h};
        rk_value ptrs[6];
        uint32_t n = 0;
        for (uint32_t i = 0; i < 6; i++)
            if (at[i] >= 0) ptrs[n++] = p[at[i]];
        norm_ctx cd = c, cs = c;
        cd.s = &d;
        cs.s = &sp;
        rk_if_begin(k, kn_auto_direct_cond(k, kn, p[c.io.N], ptrs, n));
        build_direct(k, &cd);
        rk_else(k, NULL, 0);
        build_span(k, &cs);
        rk_if_end(k, NULL, 0);
        return;
    }
    build_direct(k, &c);
}

static uint32_t param_align(const rk_instance *in, const rk_kparam *kp) {
    return kn_row_param_align(&in->u.norm.k, kp);
}

const kn_family kn_layernorm = {
    .name = "layernorm", .knobs = ln_knobs, .nknobs = RK_COUNTOF(ln_knobs), .dims = kn_row_dims, .ndims = 2,
    .scalars = scalars, .nscalars = RK_COUNTOF(scalars), .defaults = ln_defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build,
    .cost = cost, .reference = kn_norm_reference, .input_range = input_range, .param_align = param_align,
    .shared_problem = true,
};
const kn_family kn_rmsnorm = {
    .name = "rmsnorm", .knobs = rms_knobs, .nknobs = RK_COUNTOF(rms_knobs), .dims = kn_row_dims, .ndims = 2,
    .scalars = scalars, .nscalars = RK_COUNTOF(scalars), .defaults = rms_defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build,
    .cost = cost, .reference = kn_norm_reference, .input_range = input_range, .param_align = param_align,
    .shared_problem = true,
};
