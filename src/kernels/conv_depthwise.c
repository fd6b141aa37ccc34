/* rocke — the direct depthwise forward convolution (C/g = K/g = 1; algo
 * direct with dw_pix set). A block of 256 threads owns cvecs channel
 * vectors of vec channels (the fastest thread index, so reads of X and
 * writes of Y are 16-byte vectors that coalesce) by 256 / cvecs groups of
 * pix consecutive output pixels along Q. The block's weights are staged in
 * LDS transposed to [tap][channel] (a cooperative copy between barriers,
 * at most KN_CONV_DW_TAPS taps at a time: whole filter rows per chunk), so
 * a tap is one vector read that serves the thread's pix outputs. At stride
 * and dilation 1 along W a filter row is a sliding window: pix + S - 1
 * input vectors per row and pix outputs instead of pix * S loads (the
 * window moves in registers; on NVIDIA a 3-tap row is unrolled instead,
 * docs/conv.md says why not on AMD); other geometries load each tap's
 * input. f32 accumulation, the fwd epilogue chain, Q and channel tails
 * masked.
 *
 * dgrad (direction dgrad) is the same kernel reading dY: dX is the
 * correlation of dY with the filter flipped in every axis, so the stage
 * holds the taps reversed and a row of dX pixels reads dY row
 * (x + pad - (F - 1) dil + t dil) / stride, where that division is exact
 * (rows that are not exact or fall outside dY are skipped). A thread's
 * pixels along W are `stride` apart (one residue class mod stride: the
 * pixels that take the same taps), so tap s feeds them from consecutive dY
 * columns, and a warp's pixel groups share the classes of h and w (dg_map); at stride and dilation 1 along W the forward's sliding window
 * and 3-tap row run unchanged, elsewhere row_gather visits only the taps
 * whose division is exact. Every dX pixel gathers its taps: no atomics.
 * Layer: kernels. */
#include "conv_int.h"

typedef struct dwk {
    rk_kernel *k;
    const kn_conv_args *a;
    bool d3;
    uint32_t vec, pix, cb;         /* channels per vector, outputs per thread, channels per block */
    rk_value X, W, smem;
    rk_value c64, k0_64;           /* C, the thread's first channel (i64) */
    rk_value wq0;                  /* q0 * stride_w - pad_w (i32) */
    rk_value in_w;                 /* W, the input width (i32) */
    rk_value sw, dw;               /* stride and dilation along W (i32) */
    rk_ix n, o, p, ok, cb0, lane;  /* lane: the thread's channel offset in the block (ct * vec) */
    bool fixed3;                   /* S = 3 rows unrolled (row_fixed3) */
    bool dg;                       /* dgrad: dY read, flipped taps gathered where the stride divides */
    rk_value jstep;                /* read columns between a thread's outputs at one tap: fwd stride_w, dgrad 1 */
    const rk_ix *src;              /* extents of the tensor read: fwd X (in), dgrad dY (out) */
} dwk;

static rk_value c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

/* X at input column w of the row at `base` (i64 element of (row pixel, k0)),
 * vec channels as stored; zero outside the row or where !rowok (selected
 * before the conversion: half the selects of an f32 vector). */
static rk_value xraw(dwk *d, rk_value base, rk_value rowok, rk_value w) {
    rk_kernel *k = d->k;
    rk_value inw = rk_build_cmp(k, "ult", w, d->in_w);
    rk_value ok = rk_build_and(k, rowok, inw);
    rk_value w64 = rk_build_sext(k, w, RK_T_I64);
    rk_value off = rk_build_mul(k, w64, d->c64);
    rk_value at = rk_build_add(k, base, off);
    rk_value zero = rk_const_i64(k, 0);
    rk_value idx = rk_build_select(k, ok, at, zero);
    rk_value xv = rk_load_global(k, d->X, idx, d->vec);
    rk_type xt = rk_value_type(k, xv);
    rk_value xz = d->vec > 1 ? rk_build_constant_vec(k, xt, 0.0) : rk_build_constant(k, xt, 0.0);
    return rk_build_select(k, ok, xv, xz);
}

static rk_value xload(dwk *d, rk_value base, rk_value rowok, rk_value w) {
    rk_value x = xraw(d, base, rowok, w);
    return rk_tile_to_f32(d->k, x);
}

/* The weights of tap `s` of the row whose first tap sits at LDS row `wt0`. */
static rk_value wload(dwk *d, rk_value wt0, rk_value s) {
    rk_kernel *k = d->k;
    rk_value cbv = c32(k, (int32_t)d->cb);
    rk_value sr = rk_build_add(k, wt0, s);
    rk_value e = rk_build_mul(k, sr, cbv);
    rk_value lane = rk_ix_value(k, d->lane);
    rk_value at = rk_build_add(k, e, lane);
    rk_value wv = rk_load_smem(k, d->smem, &at, d->vec);
    return rk_tile_to_f32(k, wv);
}

/* One filter row, sliding: win[j] holds input column wq0 + s + j (f32);
 * the column that enters next (wq0 + s + pix - 1) was loaded one step
 * ahead, so its latency hides behind a step's FMAs. */
static void row_window(dwk *d, rk_value base, rk_value rowok, rk_value wt0, rk_value *acc) {
    rk_kernel *k = d->k;
    uint32_t pix = d->pix, nw = pix - 1, nc = pix + nw + 1;
    RK_ASSERT(pix >= 1 && pix <= 8, "conv depthwise: dw_pix is 1..8");
    rk_value carry[16], inner[16], out[16];
    for (uint32_t j = 0; j < pix; j++) carry[j] = acc[j];
    for (uint32_t j = 0; j < nw; j++) {
        rk_value jv = c32(k, (int32_t)j);
        rk_value w = rk_build_add(k, d->wq0, jv);
        carry[pix + j] = xload(d, base, rowok, w);
    }
    rk_value last = c32(k, (int32_t)nw);
    rk_value w0 = rk_build_add(k, d->wq0, last);
    carry[pix + nw] = xraw(d, base, rowok, w0);
    rk_value lo = c32(k, 0), one = c32(k, 1);
    rk_value hi = rk_ix_value(k, d->a->filt[2]);
    rk_value s = rk_for_begin(k, lo, hi, one, "s_win", nc, carry, NULL, inner);
    rk_value ahead = c32(k, (int32_t)pix);
    rk_value ws = rk_build_add(k, d->wq0, s);
    rk_value w = rk_build_add(k, ws, ahead);
    rk_value nxt = xraw(d, base, rowok, w);
    rk_value cur[8];
    for (uint32_t j = 0; j < nw; j++) cur[j] = inner[pix + j];
    cur[nw] = rk_tile_to_f32(k, inner[pix + nw]);
    rk_value wf = wload(d, wt0, s);
    rk_value next[16];
    for (uint32_t j = 0; j < pix; j++) next[j] = rk_tile_fma(k, cur[j], wf, inner[j]);
    for (uint32_t j = 0; j < nw; j++) next[pix + j] = cur[j + 1];
    next[pix + nw] = nxt;
    rk_for_end(k, next, nc, out);
    for (uint32_t j = 0; j < pix; j++) acc[j] = out[j];
}

/* One filter row, any stride and dilation: output j's tap s reads column
 * wq0 + j * stride + s * dilation. */
static void row_taps(dwk *d, rk_value base, rk_value rowok, rk_value wt0, rk_value *acc) {
    rk_kernel *k = d->k;
    uint32_t pix = d->pix;
    rk_value inner[8], next[8];
    rk_value lo = c32(k, 0), one = c32(k, 1);
    rk_value hi = rk_ix_value(k, d->a->filt[2]);
    rk_value s = rk_for_begin(k, lo, hi, one, "s_tap", pix, acc, NULL, inner);
    rk_value wf = wload(d, wt0, s);
    rk_value sd = rk_build_mul(k, s, d->dw);
    rk_value w0 = rk_build_add(k, d->wq0, sd);
    for (uint32_t j = 0; j < pix; j++) {
        rk_value jv = c32(k, (int32_t)j);
        rk_value js = rk_build_mul(k, jv, d->jstep);
        rk_value w = rk_build_add(k, w0, js);
        rk_value x = xload(d, base, rowok, w);
        next[j] = rk_tile_fma(k, x, wf, inner[j]);
    }
    rk_for_end(k, next, pix, acc);
}

/* dgrad, one row of the flipped filter at any stride and dilation along W:
 * flipped tap s serves the thread's pixels where num = wq0 + s * dil is a
 * multiple of the stride, from dY columns num / stride + j. num is lifted
 * by (S - 1) dil strides so the unsigned division is exact for negatives;
 * at dilation 1 the loop starts at the first exact tap and steps by the
 * stride (no tap visited in vain). */
static void row_gather(dwk *d, rk_value base, rk_value rowok, rk_value wt0, rk_value *acc) {
    rk_kernel *k = d->k;
    uint32_t pix = d->pix;
    rk_value zero = c32(k, 0), one = c32(k, 1);
    rk_value hi = rk_ix_value(k, d->a->filt[2]);
    rk_value sm1 = rk_build_sub(k, hi, one);
    rk_value lift = rk_build_mul(k, sm1, d->dw);
    rk_value lifted = rk_build_mul(k, lift, d->sw);
    rk_value bp = rk_build_add(k, d->wq0, lifted);   /* >= 0 */
    rk_value r = rk_build_umod(k, bp, d->sw);
    rk_value sr = rk_build_sub(k, d->sw, r);
    rk_value s0 = rk_build_umod(k, sr, d->sw);
    rk_value d1 = rk_build_cmp(k, "eq", d->dw, one);
    rk_value lo = rk_build_select(k, d1, s0, zero);
    rk_value st = rk_build_select(k, d1, d->sw, one);
    rk_value inner[8], next[8], res[8];
    rk_type types[8];
    rk_value s = rk_for_begin(k, lo, hi, st, "s_gather", pix, acc, NULL, inner);
    rk_value sd = rk_build_mul(k, s, d->dw);
    rk_value num = rk_build_add(k, bp, sd);
    rk_value rem = rk_build_umod(k, num, d->sw);
    rk_value exact = rk_build_cmp(k, "eq", rem, zero);
    rk_value qd = rk_build_udiv(k, num, d->sw);
    rk_value col0 = rk_build_sub(k, qd, lift);
    for (uint32_t j = 0; j < pix; j++) types[j] = rk_value_type(k, inner[j]);
    rk_if_else_begin(k, exact, pix, types, res);
    rk_value wf = wload(d, wt0, s);
    for (uint32_t j = 0; j < pix; j++) {
        rk_value jv = c32(k, (int32_t)j);
        rk_value w = rk_build_add(k, col0, jv);
        rk_value x = xload(d, base, rowok, w);
        next[j] = rk_tile_fma(k, x, wf, inner[j]);
    }
    rk_else(k, next, pix);
    rk_if_end(k, inner, pix);
    rk_for_end(k, res, pix, acc);
}

/* One filter row of width 3 at stride and dilation 1 along W: its pix + 2
 * input columns loaded at once (all in flight together, no window to move),
 * then each column, converted once, feeds the outputs whose taps cover it. */
static void row_fixed3(dwk *d, rk_value base, rk_value rowok, rk_value wt0, rk_value *acc) {
    rk_kernel *k = d->k;
    uint32_t pix = d->pix, ncol = pix + 2;
    rk_value raw[10], wf[3];
    for (uint32_t i = 0; i < ncol; i++) {
        rk_value iv = c32(k, (int32_t)i);
        rk_value w = rk_build_add(k, d->wq0, iv);
        raw[i] = xraw(d, base, rowok, w);
    }
    for (uint32_t s = 0; s < 3; s++) {
        rk_value sv = c32(k, (int32_t)s);
        wf[s] = wload(d, wt0, sv);
    }
    for (uint32_t i = 0; i < ncol; i++) {
        rk_value x = rk_tile_to_f32(k, raw[i]);
        for (uint32_t j = 0; j < pix; j++)
            if (i >= j && i - j < 3) acc[j] = rk_tile_fma(k, x, wf[i - j], acc[j]);
    }
}

typedef struct row_args { rk_value base, rowok, wt0; } row_args;
typedef enum row_kind { ROW_FIXED3, ROW_WINDOW, ROW_TAPS, ROW_WINDOW_OR_TAPS } row_kind;

static void branch(dwk *d, rk_value cond, row_kind then_k, row_kind else_k, rk_value slide, const row_args *ra,
                   rk_value *acc);

/* One row of kind `kind` on the accumulators (ROW_WINDOW_OR_TAPS: a branch on `slide`). */
static void row_of(dwk *d, row_kind kind, rk_value slide, const row_args *ra, rk_value *acc) {
    switch (kind) {
    case ROW_FIXED3: row_fixed3(d, ra->base, ra->rowok, ra->wt0, acc); return;
    case ROW_WINDOW: row_window(d, ra->base, ra->rowok, ra->wt0, acc); return;
    case ROW_TAPS:
        if (d->dg) row_gather(d, ra->base, ra->rowok, ra->wt0, acc);
        else row_taps(d, ra->base, ra->rowok, ra->wt0, acc);
        return;
    case ROW_WINDOW_OR_TAPS: branch(d, slide, ROW_WINDOW, ROW_TAPS, slide, ra, acc); return;
    }
}

/* if (cond) row then_k else row else_k, the accumulators carried through. */
static void branch(dwk *d, rk_value cond, row_kind then_k, row_kind else_k, rk_value slide, const row_args *ra,
                   rk_value *acc) {
    rk_kernel *k = d->k;
    uint32_t pix = d->pix;
    rk_type types[8];
    rk_value res[8], a1[8], a2[8];
    RK_ASSERT(pix >= 1 && pix <= 8, "conv depthwise: dw_pix is 1..8");
    for (uint32_t j = 0; j < pix; j++) {
        types[j] = rk_value_type(k, acc[j]);
        a1[j] = a2[j] = acc[j];
    }
    rk_if_else_begin(k, cond, pix, types, res);
    row_of(d, then_k, slide, ra, a1);
    rk_else(k, a1, pix);
    row_of(d, else_k, slide, ra, a2);
    rk_if_end(k, a2, pix);
    for (uint32_t j = 0; j < pix; j++) acc[j] = res[j];
}

/* Rows row0 .. row0 + nrows - 1 of the filter (row = t * R + r), their
 * weights in LDS from row 0. */
static void rows_loop(dwk *d, rk_value row0, rk_value nrows, rk_value *acc) {
    rk_kernel *k = d->k;
    const kn_conv_args *a = d->a;
    uint32_t pix = d->pix;
    rk_value inner[8], next[8];
    rk_value lo = c32(k, 0), one = c32(k, 1);
    rk_value rr = rk_for_begin(k, lo, nrows, one, "rr", pix, acc, NULL, inner);
    rk_ix row = rk_ix_add(k, rk_ix_v(row0), rk_ix_v(rr));
    rk_ix tap[2];   /* t, r */
    if (d->d3) {
        tap[0] = rk_ix_udiv(k, row, a->filt[1]);
        tap[1] = rk_ix_umod(k, row, a->filt[1]);
    } else {
        tap[0] = rk_ix_c(0);
        tap[1] = row;
    }
    /* the row read (n, d, h): in range or masked (dgrad: skipped) */
    rk_ix org[2] = {d->o, d->p}, okx = d->ok, pos = d->n;
    for (int i = 0; i < 2; i++) {
        rk_ix x;
        if (d->dg) {
            /* dY row (x + pad - (F - 1) dil + t dil) / stride of flipped row t, where exact;
             * lifted by (F - 1) dil strides for the unsigned division */
            rk_ix f1 = rk_ix_sub(k, a->filt[i], rk_ix_c(1));
            rk_ix lift = rk_ix_mul(k, f1, a->dil[i]);
            rk_ix num = rk_ix_add(k, org[i], a->pad[i]);
            rk_ix td = rk_ix_mul(k, tap[i], a->dil[i]);
            num = rk_ix_add(k, num, td);
            rk_ix up = rk_ix_mul(k, lift, a->stride[i]);
            num = rk_ix_sub(k, num, lift);
            num = rk_ix_add(k, num, up);
            rk_ix rem = rk_ix_umod(k, num, a->stride[i]);
            rk_ix qt = rk_ix_udiv(k, num, a->stride[i]);
            x = rk_ix_sub(k, qt, lift);
            okx = rk_ix_and(k, okx, rk_ix_lt(k, rem, rk_ix_c(1)));
        } else {
            rk_ix sp = rk_ix_mul(k, org[i], a->stride[i]);
            x = rk_ix_sub(k, sp, a->pad[i]);
            rk_ix td = rk_ix_mul(k, tap[i], a->dil[i]);
            x = rk_ix_add(k, x, td);
        }
        okx = rk_ix_and(k, okx, rk_ix_ge(k, x, rk_ix_c(0)));
        okx = rk_ix_and(k, okx, rk_ix_lt(k, x, d->src[i]));
        pos = rk_ix_mul(k, pos, d->src[i]);
        pos = rk_ix_add(k, pos, x);
    }
    pos = rk_ix_mul(k, pos, d->src[2]);
    rk_value rowok = rk_ix_bool_value(k, okx);
    rk_value pv = rk_ix_value(k, pos);
    rk_value p64 = rk_build_sext(k, pv, RK_T_I64);
    rk_value prow = rk_build_mul(k, p64, d->c64);
    rk_value base = rk_build_add(k, prow, d->k0_64);
    rk_value sv = rk_ix_value(k, a->filt[2]);
    rk_value wt0 = rk_build_mul(k, rr, sv);
    for (uint32_t j = 0; j < pix; j++) next[j] = inner[j];
    /* stride and dilation 1 along W: a sliding window (S = 3: unrolled where fixed3) */
    rk_value one_s = rk_build_cmp(k, "eq", d->sw, one);
    rk_value one_d = rk_build_cmp(k, "eq", d->dw, one);
    rk_value slide = rk_build_and(k, one_s, one_d);
    row_args ra = {base, rowok, wt0};
    row_kind other = pix > 1 ? ROW_WINDOW_OR_TAPS : ROW_TAPS;
    rk_value res[8];
    if (d->dg) {   /* dgrad: a dY row that is not there costs nothing */
        rk_type types[8];
        for (uint32_t j = 0; j < pix; j++) types[j] = rk_value_type(k, next[j]);
        rk_if_else_begin(k, rowok, pix, types, res);
    }
    if (d->fixed3) {
        rk_value three = c32(k, 3);
        rk_value s3 = rk_build_cmp(k, "eq", sv, three);
        rk_value fixed = rk_build_and(k, slide, s3);
        branch(d, fixed, ROW_FIXED3, other, slide, &ra, next);
    } else {
        row_of(d, other, slide, &ra, next);
    }
    if (d->dg) {
        rk_else(k, next, pix);
        rk_if_end(k, inner, pix);
        for (uint32_t j = 0; j < pix; j++) next[j] = res[j];
    }
    rk_for_end(k, next, pix, acc);
}

/* Copy W's taps [tap0, tap0 + ntaps) of the block's channels into LDS as
 * [tap][channel]; element i of the stage is tap i / cb, channel i % cb,
 * zero past K. */
static void stage(dwk *d, rk_value tap0, rk_value ntaps, rk_value taps) {
    rk_kernel *k = d->k;
    const kn_conv_args *a = d->a;
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value cbv = c32(k, (int32_t)d->cb);
    rk_value total = rk_build_mul(k, ntaps, cbv);
    rk_value step = c32(k, KN_CONV_DIRECT_THREADS);
    rk_value i = rk_for_begin(k, tid, total, step, "wi", 0, NULL, NULL, NULL);
    rk_ix c = rk_ix_umod(k, rk_ix_v(i), rk_ix_c(d->cb));
    rk_ix j = rk_ix_udiv(k, rk_ix_v(i), rk_ix_c(d->cb));
    rk_ix kc = rk_ix_add(k, d->cb0, c);
    rk_value ok = rk_ix_bool_value(k, rk_ix_lt(k, kc, a->k));
    rk_value kcv = rk_ix_value(k, kc);
    rk_value kc64 = rk_build_sext(k, kcv, RK_T_I64);
    rk_value t64 = rk_build_sext(k, taps, RK_T_I64);
    rk_value row = rk_build_mul(k, kc64, t64);
    rk_value tj = rk_build_add(k, tap0, rk_ix_value(k, j));
    if (d->dg) {   /* the filter flipped in every axis: tap taps - 1 - tj */
        rk_value one = c32(k, 1);
        rk_value last = rk_build_sub(k, taps, one);
        tj = rk_build_sub(k, last, tj);
    }
    rk_value tj64 = rk_build_sext(k, tj, RK_T_I64);
    rk_value at = rk_build_add(k, row, tj64);
    rk_value zero = rk_const_i64(k, 0);
    rk_value idx = rk_build_select(k, ok, at, zero);
    rk_value wv = rk_load_global(k, d->W, idx, 1);
    rk_value wz = rk_build_constant(k, rk_value_type(k, wv), 0.0);
    rk_value w = rk_build_select(k, ok, wv, wz);
    rk_store_smem(k, d->smem, &i, w);
    rk_for_end(k, NULL, 0, NULL);
}

/* dgrad: pixel group pg -> the dX pixels it writes, in the order ((((n * D + d) * stride_h + hc)
 * * stride_w + wc) * Hc + h') * Gc + ig: row h = hc + stride_h h' (Hc = ceil(H / stride_h)),
 * pixels wc + stride_w (ig pix + j) (Gc = ceil(ceil(W / stride_w) / pix)). Consecutive groups —
 * a warp's — then share the residues of h and w, so they take the same filter rows and taps
 * (divergence only where a warp crosses a class). Sets n, o (d), p (h); *orow = (n * D + d) * H
 * + h, *c0 the first column; returns "inside dX". */
static rk_ix dg_map(dwk *d, rk_ix pg, rk_ix *orow, rk_ix *c0) {
    rk_kernel *k = d->k;
    const kn_conv_args *a = d->a;
    rk_ix sh = a->stride[1], sw = a->stride[2];
    rk_ix sh1 = rk_ix_sub(k, sh, rk_ix_c(1)), sw1 = rk_ix_sub(k, sw, rk_ix_c(1));
    rk_ix hn = rk_ix_add(k, a->in[1], sh1);
    rk_ix hcs = rk_ix_udiv(k, hn, sh);
    rk_ix wn = rk_ix_add(k, a->in[2], sw1);
    rk_ix wcs = rk_ix_udiv(k, wn, sw);
    rk_ix gn = rk_ix_add(k, wcs, rk_ix_c(d->pix - 1));
    rk_ix gc = rk_ix_udiv(k, gn, rk_ix_c(d->pix));
    rk_ix total = rk_ix_mul(k, a->n, a->in[0]);
    total = rk_ix_mul(k, total, sh);
    total = rk_ix_mul(k, total, hcs);
    total = rk_ix_mul(k, total, sw);
    total = rk_ix_mul(k, total, gc);
    rk_ix pok = rk_ix_lt(k, pg, total);
    rk_value gcv = rk_ix_value(k, gc);
    rk_fastdiv fg = rk_fastdiv_compute(k, gcv);
    rk_ix ig;
    rk_ix r1 = rk_fastdiv_divmod(k, pg, &fg, &ig);
    rk_ix hp = rk_ix_umod(k, r1, hcs);
    rk_ix r2 = rk_ix_udiv(k, r1, hcs);
    rk_ix wc = rk_ix_umod(k, r2, sw);
    rk_ix r3 = rk_ix_udiv(k, r2, sw);
    rk_ix hc = rk_ix_umod(k, r3, sh);
    rk_ix nd = rk_ix_udiv(k, r3, sh);
    rk_ix hs = rk_ix_mul(k, sh, hp);
    rk_ix h = rk_ix_add(k, hc, hs);
    if (d->d3) {
        d->n = rk_ix_udiv(k, nd, a->in[0]);
        d->o = rk_ix_umod(k, nd, a->in[0]);
    } else {
        d->n = nd;
        d->o = rk_ix_c(0);
    }
    d->p = h;
    rk_ix ndh = rk_ix_mul(k, nd, a->in[1]);
    *orow = rk_ix_add(k, ndh, h);
    rk_ix i0 = rk_ix_mul(k, ig, rk_ix_c(d->pix));
    rk_ix off = rk_ix_mul(k, i0, sw);
    *c0 = rk_ix_add(k, wc, off);
    rk_ix hok = rk_ix_lt(k, h, a->in[1]);
    return rk_ix_and(k, pok, hok);
}

void kn_conv_dw_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_conv_spec *cs = &in->u.conv;
    const rk_gemm_spec *s = &cs->g;
    if (cs->direction == RK_CONV_WGRAD) {
        kn_conv_dw_wgrad_build(in, t, k, p);
        return;
    }
    rk_epi_args ea;
    kn_conv_args a = kn_conv_direct_args(in, p, &ea);
    uint32_t vec = s->vec_a, pix = kn_conv_dw_pix(cs), cvecs = kn_conv_dw_cvecs(cs);
    uint32_t pt = KN_CONV_DIRECT_THREADS / cvecs;
    bool dg = cs->direction == RK_CONV_DGRAD;
    dwk d = {.k = k, .a = &a, .d3 = kn_conv_is_3d(in), .vec = vec, .pix = pix, .cb = cvecs * vec,
             .X = p[0], .W = p[1], .dg = dg, .src = dg ? a.out : a.in};
    const rk_ix *dst = dg ? a.in : a.out;   /* extents of the tensor written */
    /* NVIDIA: the unrolled 3-tap row, two blocks per SM (128 registers) where
     * the accumulators leave room. Not on AMD: LLVM keeps every column live
     * there (gfx942, N32 C512 28x28: 162 VGPRs, 3 waves per SIMD; under
     * waves_per_eu 4, 27 VGPRs spilled), where the window alone takes 126. */
    d.fixed3 = t->vendor == RK_VENDOR_NVIDIA;
    if (d.fixed3 && pix * vec <= 32) rk_kernel_set_attr_int(k, "min_blocks_per_sm", 2);
    uint32_t lds = KN_CONV_DW_TAPS * d.cb;
    rk_smem_alloc_opts al = {.align = RK_SOME(16)};
    d.smem = rk_build_smem_alloc_ex(k, (rk_type){s->dtype}, &lds, 1, &al);

    /* thread -> (channel vector ct, pixel group pt); block -> (pixels x, channels y) */
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value bx = rk_build_block_id(k, 0);
    rk_value by = rk_build_block_id(k, 1);
    rk_ix ct = rk_ix_umod(k, rk_ix_v(tid), rk_ix_c(cvecs));
    rk_ix ptid = rk_ix_udiv(k, rk_ix_v(tid), rk_ix_c(cvecs));
    d.cb0 = rk_ix_mul(k, rk_ix_v(by), rk_ix_c(d.cb));
    d.lane = rk_ix_mul(k, ct, rk_ix_c(vec));
    rk_ix k0 = rk_ix_add(k, d.cb0, d.lane);
    rk_ix kok = rk_ix_lt(k, k0, a.k);
    rk_ix pg = rk_ix_mul(k, rk_ix_v(bx), rk_ix_c(pt));
    pg = rk_ix_add(k, pg, ptid);
    rk_ix orow, c0, cstep, wq;   /* the written row (n * D' + d) * H' + h, its first column, the column step */
    if (dg) {
        rk_ix in_dx = dg_map(&d, pg, &orow, &c0);
        d.ok = rk_ix_and(k, in_dx, kok);
        cstep = a.stride[2];
        /* the dY column of flipped tap 0 for the first pixel */
        rk_ix s1 = rk_ix_sub(k, a.filt[2], rk_ix_c(1));
        rk_ix span = rk_ix_mul(k, s1, a.dil[2]);
        wq = rk_ix_add(k, c0, a.pad[2]);
        wq = rk_ix_sub(k, wq, span);
        d.jstep = c32(k, 1);
    } else {
        /* pixel group pg = orow * ceil(Q / pix) + qg, orow = (n * O + o) * P + p: pixels qg pix + j */
        rk_ix qg_n = rk_ix_add(k, a.out[2], rk_ix_c(pix - 1));
        rk_ix qgs = rk_ix_udiv(k, qg_n, rk_ix_c(pix));
        rk_ix rows = rk_ix_mul(k, a.n, a.out[0]);
        rows = rk_ix_mul(k, rows, a.out[1]);
        rk_ix groups = rk_ix_mul(k, rows, qgs);
        rk_ix pok = rk_ix_lt(k, pg, groups);
        rk_value qgsv = rk_ix_value(k, qgs);
        rk_fastdiv fq = rk_fastdiv_compute(k, qgsv);
        rk_ix qg;
        orow = rk_fastdiv_divmod(k, pg, &fq, &qg);
        rk_ix np = rk_ix_udiv(k, orow, a.out[1]);
        rk_ix pp = rk_ix_umod(k, orow, a.out[1]);
        if (d.d3) {
            d.n = rk_ix_udiv(k, np, a.out[0]);
            d.o = rk_ix_umod(k, np, a.out[0]);
        } else {
            d.n = np;
            d.o = rk_ix_c(0);
        }
        d.p = pp;
        d.ok = rk_ix_and(k, pok, kok);
        c0 = rk_ix_mul(k, qg, rk_ix_c(pix));
        cstep = rk_ix_c(1);
        wq = rk_ix_mul(k, c0, a.stride[2]);
        wq = rk_ix_sub(k, wq, a.pad[2]);
    }
    d.wq0 = rk_ix_value(k, wq);
    d.in_w = rk_ix_value(k, d.src[2]);
    d.sw = rk_ix_value(k, a.stride[2]);
    d.dw = rk_ix_value(k, a.dil[2]);
    if (!dg) d.jstep = d.sw;
    rk_ix cin = dg ? a.k : a.c, cout = dg ? a.c : a.k;   /* channels of the read and the written tensor */
    d.c64 = rk_build_sext(k, rk_ix_value(k, cin), RK_T_I64);
    rk_value k0v = rk_ix_value(k, k0);
    d.k0_64 = rk_build_sext(k, k0v, RK_T_I64);

    /* chunks of whole filter rows, at most KN_CONV_DW_TAPS taps each */
    rk_ix trs = rk_ix_mul(k, a.filt[0], a.filt[1]);
    rk_value tr = rk_ix_value(k, trs);
    rk_value sv = rk_ix_value(k, a.filt[2]);
    rk_value taps = rk_build_mul(k, tr, sv);
    rk_value cap = c32(k, KN_CONV_DW_TAPS);
    rk_value rpc = rk_build_udiv(k, cap, sv);
    rk_value acc[8], inner[8];
    for (uint32_t j = 0; j < pix; j++) acc[j] = rk_tile_f32s(k, 0.0f, vec);
    rk_value zero = c32(k, 0);
    rk_value row0 = rk_for_begin(k, zero, tr, rpc, "row0", pix, acc, NULL, inner);
    rk_value left = rk_build_sub(k, tr, row0);
    rk_value fewer = rk_build_cmp(k, "lt", left, rpc);
    rk_value nrows = rk_build_select(k, fewer, left, rpc);
    rk_value tap0 = rk_build_mul(k, row0, sv);
    rk_value ntaps = rk_build_mul(k, nrows, sv);
    rk_build_sync_lds_only(k);   /* the previous chunk's reads are done */
    stage(&d, tap0, ntaps, taps);
    rk_build_sync_lds_only(k);
    rows_loop(&d, row0, nrows, inner);
    rk_for_end(k, inner, pix, acc);

    /* the chain (fwd) and one vector store per written pixel inside the row */
    rk_ix m0 = rk_ix_mul(k, orow, dst[2]);
    m0 = rk_ix_add(k, m0, c0);
    rk_value K64 = rk_build_sext(k, rk_ix_value(k, cout), RK_T_I64);
    for (uint32_t j = 0; j < pix; j++) {
        rk_ix jo = rk_ix_mul(k, rk_ix_c(j), cstep);
        rk_ix qj = rk_ix_add(k, c0, jo);
        rk_ix okj = rk_ix_and(k, d.ok, rk_ix_lt(k, qj, dst[2]));
        rk_value okv = rk_ix_bool_value(k, okj);
        rk_ix mj = rk_ix_add(k, m0, jo);
        rk_value mv = rk_ix_value(k, mj);
        rk_value y = dg ? acc[j] : rk_tile_epi_apply(k, &ea, acc[j], mv, k0v, okv);
        rk_value out = rk_tile_from_f32(k, y, s->out_dtype);
        rk_if_begin(k, okv);
        rk_value m64 = rk_build_sext(k, mv, RK_T_I64);
        rk_value row = rk_build_mul(k, m64, K64);
        rk_value at = rk_build_add(k, row, d.k0_64);
        rk_store_global(k, p[2], at, out);
        rk_if_end(k, NULL, 0);
    }
}
