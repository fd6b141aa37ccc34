/* rocke — the depthwise weight gradient (algo direct, direction wgrad, C/g
 * = K/g = 1): dW[c, tap] = the sum over the output pixels m of dY[m, c] *
 * X[the input pixel of (m, tap), c], a reduction over N*O*P*Q per channel
 * and tap. Grid (x) the splits of the pixel range, (y) blocks of dw_cvecs
 * channel vectors of vec_a channels, (z) chunks of dw_pix taps. A thread
 * (channel vector tid % dw_cvecs, pixel lane tid / dw_cvecs) walks its
 * split's pixels lane by lane with dw_pix x vec_a f32 accumulators: one dY
 * vector per pixel serves the thread's taps, and the X vectors that
 * neighbouring lanes and taps share meet in L1. The block sums its lanes
 * through LDS in lane order, a tap at a time; with one split it stores dW, otherwise its
 * partials go to slice `split` of Work and the last block of its (channel
 * block, tap chunk) to arrive (rk_tile_arrive_last) sums the slices in split
 * order and stores dW. No float atomics: dW's bits do not depend on which
 * block finishes last. Layer: kernels. */
#include <stdio.h>

#include "conv_int.h"

static rk_value c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

static rk_value i64(rk_kernel *k, rk_ix v) {
    rk_value x = rk_ix_value(k, v);
    return rk_build_sext(k, x, RK_T_I64);
}

/* dW's element (channel ch, tap) of a [C, taps] filter, and whether both lie inside it. */
static rk_value dw_at(rk_kernel *k, rk_ix tap, rk_ix ch, rk_ix taps, rk_ix C, rk_value taps64, rk_value *ok) {
    rk_ix tapok = rk_ix_lt(k, tap, taps), chok = rk_ix_lt(k, ch, C);
    rk_ix okx = rk_ix_and(k, tapok, chok);
    *ok = rk_ix_bool_value(k, okx);
    rk_value ch64 = i64(k, ch), tap64 = i64(k, tap);
    rk_value row = rk_build_mul(k, ch64, taps64);
    return rk_build_add(k, row, tap64);
}

typedef struct wgk {
    rk_kernel *k;
    const kn_conv_args *a;
    uint32_t vec, pix, cb, lanes;   /* lanes: pixel lanes per block (256 / dw_cvecs) */
    rk_value dY, X;
    rk_ix k0, kok;                  /* the thread's first channel, k0 < K */
    rk_value valid[8];              /* tap z * pix + j exists (block-uniform) */
    rk_ix off[8][3];                /* its input offset per axis: tap * dilation - pad */
    rk_fastdiv fq, fp, fo;
    bool d3;
} wgk;

/* acc[j] += dY[m] * X[input pixel of (m, tap j)] for the thread's taps. */
static void pixel_step(wgk *w, rk_value m, rk_value *acc) {
    rk_kernel *k = w->k;
    const kn_conv_args *a = w->a;
    rk_ix q, p, o = rk_ix_c(0), n;
    rk_ix r1 = rk_fastdiv_divmod(k, rk_ix_v(m), &w->fq, &q);
    rk_ix r2 = rk_fastdiv_divmod(k, r1, &w->fp, &p);
    if (w->d3) n = rk_fastdiv_divmod(k, r2, &w->fo, &o);
    else n = r2;
    /* dY[m, k0 .. k0 + vec) */
    rk_value okv = rk_ix_bool_value(k, w->kok);
    rk_value m64 = rk_build_sext(k, m, RK_T_I64);
    rk_value K64 = i64(k, a->k), k064 = i64(k, w->k0);
    rk_value row = rk_build_mul(k, m64, K64);
    rk_value at = rk_build_add(k, row, k064);
    rk_value zero = rk_const_i64(k, 0);
    rk_value idx = rk_build_select(k, okv, at, zero);
    rk_value gv = rk_load_global(k, w->dY, idx, w->vec);
    rk_value g = rk_tile_to_f32(k, gv);
    rk_ix org[3] = {o, p, q};
    rk_ix base[3];
    for (int i = 0; i < 3; i++) base[i] = rk_ix_mul(k, org[i], a->stride[i]);
    rk_value C64 = i64(k, a->c);
    for (uint32_t j = 0; j < w->pix; j++) {
        rk_type ft = rk_value_type(k, acc[j]);
        rk_value res;
        rk_if_else_begin(k, w->valid[j], 1, &ft, &res);
        rk_value xok = okv;
        rk_ix pos = n;
        for (int i = 0; i < 3; i++) {
            rk_ix x = rk_ix_add(k, base[i], w->off[j][i]);
            /* 0 <= x < extent as one unsigned compare */
            rk_value xv = rk_ix_value(k, x), ext = rk_ix_value(k, a->in[i]);
            rk_value in_ = rk_build_cmp(k, "ult", xv, ext);
            xok = rk_build_and(k, xok, in_);
            pos = rk_ix_mul(k, pos, a->in[i]);
            pos = rk_ix_add(k, pos, x);
        }
        rk_value p64 = i64(k, pos);
        rk_value xrow = rk_build_mul(k, p64, C64);
        rk_value xat = rk_build_add(k, xrow, k064);
        rk_value xidx = rk_build_select(k, xok, xat, zero);
        rk_value xv = rk_load_global(k, w->X, xidx, w->vec);
        rk_type xt = rk_value_type(k, xv);
        rk_value xz = w->vec > 1 ? rk_build_constant_vec(k, xt, 0.0) : rk_build_constant(k, xt, 0.0);
        rk_value xs = rk_build_select(k, xok, xv, xz);
        rk_value xf = rk_tile_to_f32(k, xs);
        rk_value nx = rk_tile_fma(k, g, xf, acc[j]);
        rk_else(k, &nx, 1);
        rk_if_end(k, &acc[j], 1);
        acc[j] = res;
    }
}

/* The sum of `n` f32 at smem[e + l * step], l = 0 .. n - 1, in order. */
static rk_value lane_sum(rk_kernel *k, rk_value smem, rk_value e, uint32_t n, uint32_t step, const char *name) {
    rk_value s0 = rk_const_f32(k, 0.0f), s, out;
    rk_value zero = c32(k, 0), one = c32(k, 1), hi = c32(k, (int32_t)n);
    rk_value l = rk_for_begin(k, zero, hi, one, name, 1, &s0, NULL, &s);
    rk_value stv = c32(k, (int32_t)step);
    rk_value ls = rk_build_mul(k, l, stv);
    rk_value at = rk_build_add(k, e, ls);
    rk_value v = rk_load_smem(k, smem, &at, 1);
    rk_value ns = rk_build_fadd(k, s, v);
    rk_for_end(k, &ns, 1, &out);
    return out;
}

void kn_conv_dw_wgrad_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    (void)t;
    const rk_conv_spec *cs = &in->u.conv;
    const rk_gemm_spec *s = &cs->g;
    uint32_t next;
    kn_conv_args a = kn_conv_args_of(in, p, &next);
    uint32_t cvecs = kn_conv_dw_cvecs(cs), splits = s->split_k ? s->split_k : 1;
    wgk w = {.k = k, .a = &a, .vec = s->vec_a, .pix = kn_conv_dw_pix(cs), .dY = p[0], .X = p[1],
             .d3 = kn_conv_is_3d(in)};
    w.cb = cvecs * w.vec;
    w.lanes = KN_CONV_DIRECT_THREADS / cvecs;
    RK_ASSERT(w.pix >= 1 && w.pix <= 8, "conv depthwise wgrad: dw_pix is 1..8");
    rk_value work = splits > 1 ? p[next] : (rk_value){0};

    rk_value tid = rk_build_thread_id(k, 0);
    rk_value sid = rk_build_block_id(k, 0);
    rk_value by = rk_build_block_id(k, 1);
    rk_value bz = rk_build_block_id(k, 2);
    rk_ix ct = rk_ix_umod(k, rk_ix_v(tid), rk_ix_c(cvecs));
    rk_ix pl = rk_ix_udiv(k, rk_ix_v(tid), rk_ix_c(cvecs));
    rk_ix cb0 = rk_ix_mul(k, rk_ix_v(by), rk_ix_c(w.cb));
    rk_ix lane = rk_ix_mul(k, ct, rk_ix_c(w.vec));
    w.k0 = rk_ix_add(k, cb0, lane);
    w.kok = rk_ix_lt(k, w.k0, a.k);

    /* the thread's taps z * pix + j -> (t, r, s) and their input offsets */
    rk_ix taps = rk_ix_mul(k, a.filt[0], a.filt[1]);
    taps = rk_ix_mul(k, taps, a.filt[2]);
    rk_ix tz = rk_ix_mul(k, rk_ix_v(bz), rk_ix_c(w.pix));
    for (uint32_t j = 0; j < w.pix; j++) {
        rk_ix tj = rk_ix_add(k, tz, rk_ix_c(j));
        rk_ix ok = rk_ix_lt(k, tj, taps);
        w.valid[j] = rk_ix_bool_value(k, ok);
        rk_ix tap[3];
        tap[2] = rk_ix_umod(k, tj, a.filt[2]);
        rk_ix rest = rk_ix_udiv(k, tj, a.filt[2]);
        tap[1] = rk_ix_umod(k, rest, a.filt[1]);
        tap[0] = rk_ix_udiv(k, rest, a.filt[1]);
        for (int i = 0; i < 3; i++) {
            rk_ix td = rk_ix_mul(k, tap[i], a.dil[i]);
            w.off[j][i] = rk_ix_sub(k, td, a.pad[i]);
        }
    }

    /* the split's pixels [lo, hi): per = ceil(ceil(M / splits) / lanes) * lanes */
    rk_ix M = rk_ix_mul(k, a.n, a.out[0]);
    M = rk_ix_mul(k, M, a.out[1]);
    M = rk_ix_mul(k, M, a.out[2]);
    rk_ix each = rk_ix_add(k, M, rk_ix_c(splits - 1));
    each = rk_ix_udiv(k, each, rk_ix_c(splits));
    rk_ix steps = rk_ix_add(k, each, rk_ix_c(w.lanes - 1));
    steps = rk_ix_udiv(k, steps, rk_ix_c(w.lanes));
    rk_ix per = rk_ix_mul(k, steps, rk_ix_c(w.lanes));
    rk_ix lo = rk_ix_mul(k, rk_ix_v(sid), per);
    rk_ix end = rk_ix_add(k, lo, per);
    rk_value endv = rk_ix_value(k, end), Mv = rk_ix_value(k, M);
    rk_value hi = rk_build_smin(k, endv, Mv);
    rk_ix start = rk_ix_add(k, lo, pl);
    w.fq = rk_fastdiv_compute(k, rk_ix_value(k, a.out[2]));
    w.fp = rk_fastdiv_compute(k, rk_ix_value(k, a.out[1]));
    if (w.d3) w.fo = rk_fastdiv_compute(k, rk_ix_value(k, a.out[0]));

    rk_value acc[8], inner[8], out[8];
    for (uint32_t j = 0; j < w.pix; j++) acc[j] = rk_tile_f32s(k, 0.0f, w.vec);
    rk_value startv = rk_ix_value(k, start), stepv = c32(k, (int32_t)w.lanes);
    rk_value m = rk_for_begin(k, startv, hi, stepv, "m", w.pix, acc, NULL, inner);
    pixel_step(&w, m, inner);
    rk_for_end(k, inner, w.pix, out);

    /* the block's sum over its lanes, one tap at a time (8 KiB of LDS at vec 8, not the
     * 32 of every tap at once: gfx942 kept 2 blocks per CU that way): LDS [lane][channel],
     * lanes added in order; dW (and each Work slice) is [K][taps] */
    uint32_t lds = w.lanes * w.cb;
    rk_smem_alloc_opts al = {.align = RK_SOME(16)};
    rk_value red = rk_build_smem_alloc_ex(k, RK_T_F32, &lds, 1, &al);
    rk_ix C = a.k;
    rk_ix ctaps = rk_ix_mul(k, C, taps);
    rk_value welems = i64(k, ctaps);
    rk_value taps64 = i64(k, taps);
    rk_value cbv = c32(k, (int32_t)w.cb), step = c32(k, KN_CONV_DIRECT_THREADS);
    rk_ix e0 = rk_ix_mul(k, pl, rk_ix_c(w.cb));
    e0 = rk_ix_add(k, e0, lane);
    rk_value e0v = rk_ix_value(k, e0);
    for (uint32_t j = 0; j < w.pix; j++) {
        if (j) rk_build_sync(k);   /* the previous tap's sums have read the stage */
        rk_store_smem(k, red, &e0v, out[j]);
        rk_build_sync(k);
        char en[16], ln[16];   /* loop names are SSA names: one per tap */
        snprintf(en, sizeof en, "e%u", j);
        snprintf(ln, sizeof ln, "lane%u", j);
        rk_value e = rk_for_begin(k, tid, cbv, step, en, 0, NULL, NULL, NULL);
        rk_value sum = lane_sum(k, red, e, w.lanes, w.cb, ln);
        rk_ix tap = rk_ix_add(k, tz, rk_ix_c(j));
        rk_ix ch = rk_ix_add(k, cb0, rk_ix_v(e));
        rk_value ok;
        rk_value wat = dw_at(k, tap, ch, taps, C, taps64, &ok);
        rk_if_begin(k, ok);
        if (splits == 1) {
            rk_value o = rk_tile_from_f32(k, sum, s->out_dtype);
            rk_store_global(k, p[2], wat, o);
        } else {
            rk_value sid64 = rk_build_sext(k, sid, RK_T_I64);
            rk_value soff = rk_build_mul(k, sid64, welems);
            rk_value sat = rk_build_add(k, soff, wat);
            rk_store_global(k, work, sat, sum);
        }
        rk_if_end(k, NULL, 0);
        rk_for_end(k, NULL, 0, NULL);
    }
    if (splits == 1) return;

    /* the last split of (channel block, tap chunk) to arrive sums the slices in split order */
    rk_value nz = rk_build_grid_dim(k, 2);
    rk_value yz = rk_build_mul(k, by, nz);
    rk_value slot = rk_build_add(k, yz, bz);
    rk_value slot64 = rk_build_sext(k, slot, RK_T_I64);
    rk_value sp64 = rk_const_i64(k, splits);
    rk_value cbase = rk_build_mul(k, sp64, welems);
    rk_value cat = rk_build_add(k, cbase, slot64);
    rk_value last = rk_tile_arrive_last(k, tid, work, cat, splits);
    rk_if_begin(k, last);
    {
        rk_value slabv = c32(k, (int32_t)(w.pix * w.cb));
        rk_value e2 = rk_for_begin(k, tid, slabv, step, "e_sum", 0, NULL, NULL, NULL);
        rk_ix j2 = rk_ix_udiv(k, rk_ix_v(e2), rk_ix_c(w.cb));
        rk_ix c2 = rk_ix_umod(k, rk_ix_v(e2), rk_ix_c(w.cb));
        rk_ix tap2 = rk_ix_add(k, tz, j2);
        rk_ix ch2 = rk_ix_add(k, cb0, c2);
        rk_value ok2;
        rk_value at2 = dw_at(k, tap2, ch2, taps, C, taps64, &ok2);
        rk_if_begin(k, ok2);
        rk_value t0 = rk_const_f32(k, 0.0f), tacc, total;
        rk_value zero = c32(k, 0), one = c32(k, 1), sv = c32(k, (int32_t)splits);
        rk_value sl = rk_for_begin(k, zero, sv, one, "slice", 1, &t0, NULL, &tacc);
        rk_value sl64 = rk_build_sext(k, sl, RK_T_I64);
        rk_value off = rk_build_mul(k, sl64, welems);
        rk_value at = rk_build_add(k, off, at2);
        rk_value v = rk_load_global(k, work, at, 1);
        rk_value nt = rk_build_fadd(k, tacc, v);
        rk_for_end(k, &nt, 1, &total);
        rk_value o = rk_tile_from_f32(k, total, s->out_dtype);
        rk_store_global(k, p[2], at2, o);
        rk_if_end(k, NULL, 0);
        rk_for_end(k, NULL, 0, NULL);
        rk_value zero32 = c32(k, 0);
        rk_value first = rk_build_cmp(k, "eq", tid, zero32);
        rk_if_begin(k, first);
        rk_value zf = rk_const_f32(k, 0.0f);
        rk_store_global(k, work, cat, zf);   /* every split has arrived: ready for the next launch */
        rk_if_end(k, NULL, 0);
    }
    rk_if_end(k, NULL, 0);
}
