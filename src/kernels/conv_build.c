/* rocke — the convolution kernel: one group per grid z, the group's
 * implicit GEMM on the GEMM plan, main loop and epilogue. The operand that
 * is an im2col view (fwd: A = X; dgrad: A = dY, transposed; wgrad: B = X)
 * is gathered straight into LDS by rk_tile_im2col_issue through the main
 * loop's gather hook; the others are plain strided views moved to the
 * group's slice. gemm1x1 reads every operand as a plain matrix. wgrad's
 * split-K reduces through the GEMM's workspace path. Layer: kernels. */
#include "conv_int.h"

/* The pointer moved by `elems` (i32, >= 0) elements. */
static rk_value moved(rk_kernel *k, rk_value ptr, rk_value elems, rk_scalar elem) {
    rk_value e64 = rk_build_sext(k, elems, RK_T_I64);
    rk_value eb = rk_const_i64(k, rk_tile_elem_bytes(elem));
    rk_value off = rk_build_mul(k, e64, eb);
    return rk_build_global_ptr_add(k, ptr, off);
}

kn_conv_args kn_conv_direct_args(const rk_instance *in, const rk_value *p, rk_epi_args *ea) {
    const rk_gemm_spec *s = &in->u.conv.g;
    uint32_t next;
    kn_conv_args a = kn_conv_args_of(in, p, &next);
    *ea = (rk_epi_args){.chain = &s->fuse};
    rk_epi_param eps[RK_EPI_MAX_PARAMS];
    uint32_t ne = rk_epi_params(&s->fuse, s->out_dtype, eps);
    for (uint32_t i = 0; i < ne; i++) ea->p[i] = p[next + i];
    return a;
}

kn_conv_args kn_conv_args_of(const rk_instance *in, const rk_value *p, uint32_t *next) {
    kn_conv_args a;
    uint32_t i = 3;
    bool d3 = kn_conv_is_3d(in);
    a.n = rk_ix_v(p[i++]);
    a.c = rk_ix_v(p[i++]);
    a.in[0] = d3 ? rk_ix_v(p[i++]) : rk_ix_c(1);
    a.in[1] = rk_ix_v(p[i++]);
    a.in[2] = rk_ix_v(p[i++]);
    a.k = rk_ix_v(p[i++]);
    a.filt[0] = d3 ? rk_ix_v(p[i++]) : rk_ix_c(1);
    a.filt[1] = rk_ix_v(p[i++]);
    a.filt[2] = rk_ix_v(p[i++]);
    a.out[0] = d3 ? rk_ix_v(p[i++]) : rk_ix_c(1);
    a.out[1] = rk_ix_v(p[i++]);
    a.out[2] = rk_ix_v(p[i++]);
    rk_ix *per[3] = {a.stride, a.pad, a.dil};
    for (int j = 0; j < 3; j++) {
        per[j][0] = d3 ? rk_ix_v(p[i++]) : rk_ix_c(j == 1 ? 0 : 1);
        per[j][1] = rk_ix_v(p[i++]);
        per[j][2] = rk_ix_v(p[i++]);
    }
    a.groups = rk_ix_v(p[i++]);
    *next = i;
    return a;
}

static rk_fastdiv divisor(rk_kernel *k, rk_ix d) {
    return d.dyn ? rk_fastdiv_compute(k, d.v) : rk_fastdiv_const((uint32_t)d.c);
}

/* The gather hook's state: the view, the plan's copy, and (fwd) the rows
 * of the block's fixed M origin, made at the first call. */
typedef struct conv_gather {
    rk_tile_im2col v;
    const rk_tile_copy *cp;
    bool fixed_rows, have_rows;
    rk_tile_im2col_rows rows;
} conv_gather;

static void gather(rk_kernel *k, void *ud, const rk_tile_copy_lanes *l, rk_value r0, rk_value c0, rk_value smem,
                   rk_value stage) {
    conv_gather *g = ud;
    if (!g->fixed_rows || !g->have_rows) rk_tile_im2col_rows_init(k, g->cp, l, &g->v, r0, &g->rows);
    g->have_rows = true;
    rk_tile_im2col_issue(k, g->cp, l, &g->v, &g->rows, c0, smem, stage);
}

void kn_conv_wrows_issue(rk_kernel *k, const kn_conv_wrows *w, const rk_tile_copy *cp, const rk_tile_copy_lanes *l,
                         rk_value r0, rk_value c0, rk_value smem, rk_value stage) {
    for (uint32_t p = 0; p < cp->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, cp, p);
        rk_ix row = rk_ix_add(k, rk_ix_v(r0), rk_ix_v(l->row[p]));
        rk_ix col = rk_ix_add(k, rk_ix_v(c0), rk_ix_v(l->col[p]));
        rk_ix rin = rk_ix_lt(k, row, w->rows);
        rk_ix cin = rk_ix_lt(k, col, w->cols);
        rk_ix ok = rk_ix_and(k, rin, cin);
        rk_ix kk;
        rk_ix tap = rk_fastdiv_divmod(k, row, &w->kg, &kk);
        rk_ix kabs = rk_ix_add(k, w->kg0, kk);
        rk_ix wrow = rk_ix_mul(k, kabs, w->taps);
        wrow = rk_ix_add(k, wrow, tap);
        rk_value r64 = rk_build_sext(k, rk_ix_value(k, wrow), RK_T_I64);
        rk_value cg64 = rk_build_sext(k, rk_ix_value(k, w->cg), RK_T_I64);
        rk_value c64 = rk_build_sext(k, rk_ix_value(k, col), RK_T_I64);
        rk_value ro = rk_build_mul(k, r64, cg64);
        rk_value at = rk_build_add(k, ro, c64);
        rk_value okv = rk_ix_bool_value(k, ok);
        rk_value zero = rk_const_i64(k, 0);
        rk_value idx = rk_build_select(k, okv, at, zero);
        rk_value dst = rk_build_add(k, stage, l->dst[p]);
        rk_tile_copy_chunk(k, cp, w->W, okv, idx, smem, dst);
        if (partial) rk_if_end(k, NULL, 0);
    }
}

/* The mma path's gather hook over dgrad's B: the plan's copy of B. */
typedef struct w_rows {
    kn_conv_wrows w;
    const rk_tile_copy *cp;
} w_rows;

static void gather_w(rk_kernel *k, void *ud, const rk_tile_copy_lanes *l, rk_value r0, rk_value c0, rk_value smem,
                     rk_value stage) {
    const w_rows *w = ud;
    kn_conv_wrows_issue(k, &w->w, w->cp, l, r0, c0, smem, stage);
}

/* The im2col view over X (fwd A, wgrad B): rows = output pixels, columns =
 * taps x the group's channels. */
static void x_view(rk_kernel *k, const kn_conv_args *a, rk_value X, rk_ix rows, rk_ix cols, rk_ix cg, rk_ix c0,
                   rk_tile_im2col *v) {
    memset(v, 0, sizeof *v);
    v->ptr = X;
    v->rows = rows;
    v->cols = cols;
    for (int i = 0; i < 3; i++) {
        v->pix[i] = divisor(k, a->out[i]);
        v->tap[i] = divisor(k, a->filt[i]);
        v->in[i] = a->in[i];
        v->stride[i] = a->stride[i];
        v->pad[i] = a->pad[i];
        v->dil[i] = a->dil[i];
    }
    v->cg = divisor(k, cg);
    v->cstride = a->c;
    v->c0 = c0;
}

void kn_conv_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_conv_spec *cs = &in->u.conv;
    rk_gemm_spec s = kn_conv_gemm_spec(in);
    if (cs->algo == RK_CONV_DIRECT) {
        kn_conv_direct_build(in, t, k, p);
        return;
    }
    if (kn_conv_box(in)) {   /* the forward's pixel boxes by TMA */
        kn_conv_box_build(in, t, k, p);
        return;
    }
    if (kn_conv_tma(in) && cs->direction != RK_CONV_WGRAD) {   /* 1x1 fwd / dgrad: the GEMM's TMA kernel */
        kn_conv_tma_build(in, t, k, p);
        return;
    }
    uint32_t next;
    kn_conv_args a = kn_conv_args_of(in, p, &next);
    rk_epi_args ea = {.chain = &s.fuse};
    rk_epi_param eps[RK_EPI_MAX_PARAMS];
    uint32_t ne = rk_epi_params(&s.fuse, s.out_dtype, eps);
    for (uint32_t i = 0; i < ne; i++) ea.p[i] = p[next + i];
    rk_value work = s.split_k > 1 ? p[next + ne] : (rk_value){0};

    kn_gemm_plan pl;
    kn_gemm_io io = {0};
    bool wgmma = s.path == RK_GEMM_PATH_WGMMA;
    if (!wgmma) {
        kn_gemm_begin(k, &s, t, false, &pl, &io.w);
        rk_status plain = kn_gemm_plan_plain(&pl);   /* the im2col gathers address every chunk */
        RK_ASSERT(plain == RK_OK, "conv: building an instance that does not validate");
    }
    rk_value grp = rk_build_block_id(k, 2);
    rk_ix gi = rk_ix_v(grp);
    rk_ix cg = rk_ix_udiv(k, a.c, a.groups), kg = rk_ix_udiv(k, a.k, a.groups);
    rk_ix taps = rk_ix_mul(k, a.filt[0], a.filt[1]);
    taps = rk_ix_mul(k, taps, a.filt[2]);
    rk_ix opix = rk_ix_mul(k, a.n, a.out[0]);
    opix = rk_ix_mul(k, opix, a.out[1]);
    opix = rk_ix_mul(k, opix, a.out[2]);
    rk_ix ipix = rk_ix_mul(k, a.n, a.in[0]);
    ipix = rk_ix_mul(k, ipix, a.in[1]);
    ipix = rk_ix_mul(k, ipix, a.in[2]);
    rk_ix tcg = rk_ix_mul(k, taps, cg);          /* a filter's elements per output channel */
    rk_ix ktaps = rk_ix_mul(k, kg, taps);
    rk_ix cg0 = rk_ix_mul(k, gi, cg), kg0 = rk_ix_mul(k, gi, kg);
    rk_ix wg0 = rk_ix_mul(k, kg0, tcg);          /* the group's first weight */
    bool one = cs->algo == RK_CONV_GEMM1X1;
    conv_gather gt = {.cp = NULL};
    w_rows wr;
    rk_value shift;
    switch ((rk_conv_dir)cs->direction) {
    case RK_CONV_FWD: {
        /* A = im2col(X) [pixels, taps*Cg]; B = W rows [Kg, taps*Cg]; C = Y columns of the group */
        io.M = rk_ix_value(k, opix);
        io.N = rk_ix_value(k, kg);
        io.K = rk_ix_value(k, tcg);
        io.lda = rk_ix_value(k, a.c);
        io.A = moved(k, p[0], rk_ix_value(k, cg0), s.dtype);
        io.B = moved(k, p[1], rk_ix_value(k, wg0), s.dtype);
        io.ldb = io.K;
        shift = rk_ix_value(k, kg0);
        io.C = moved(k, p[2], shift, s.out_dtype);
        io.ldc = rk_ix_value(k, a.k);
        if (!one) {
            x_view(k, &a, p[0], opix, tcg, cg, cg0, &gt.v);
            gt.cp = &pl.cpa;
            gt.fixed_rows = true;
            io.gather_a = (kn_gemm_gather){gather, &gt};
        }
        /* the chain's tensors are [.., K]: move them to the group's columns */
        for (uint32_t i = 0; i < ne; i++)
            if (eps[i].ptr) ea.p[i] = moved(k, ea.p[i], shift, s.out_dtype);
        break;
    }
    case RK_CONV_DGRAD: {
        /* A = transposed im2col(dY) [input pixels, taps*Kg]; B = W [taps*Kg, Cg] (rows gathered, or
         * plain [Kg, Cg] for 1x1); C = dX columns */
        io.M = rk_ix_value(k, ipix);
        io.N = rk_ix_value(k, cg);
        io.K = rk_ix_value(k, ktaps);
        io.A = moved(k, p[0], rk_ix_value(k, kg0), s.dtype);
        io.lda = rk_ix_value(k, a.k);
        io.B = moved(k, p[1], rk_ix_value(k, wg0), s.dtype);
        io.ldb = io.N;
        shift = rk_ix_value(k, cg0);
        io.C = moved(k, p[2], shift, s.out_dtype);
        io.ldc = rk_ix_value(k, a.c);
        if (!one) {
            rk_tile_im2col *v = &gt.v;
            memset(v, 0, sizeof *v);
            v->ptr = p[0];
            v->rows = ipix;
            v->cols = ktaps;
            for (int i = 0; i < 3; i++) {
                v->pix[i] = divisor(k, a.in[i]);
                v->tap[i] = divisor(k, a.filt[i]);
                v->in[i] = a.out[i];
                v->stride[i] = a.stride[i];
                v->sdiv[i] = divisor(k, a.stride[i]);
                v->pad[i] = a.pad[i];
                v->dil[i] = a.dil[i];
            }
            v->cg = divisor(k, kg);
            v->cstride = a.k;
            v->c0 = kg0;
            v->transposed = true;
            gt.cp = &pl.cpa;
            gt.fixed_rows = true;
            io.gather_a = (kn_gemm_gather){gather, &gt};
            /* B's rows follow A's columns: (tap, k) */
            wr = (w_rows){.w = {.W = p[1], .rows = ktaps, .cols = cg, .taps = taps, .cg = cg, .kg = divisor(k, kg),
                                .kg0 = kg0},
                          .cp = &pl.cpb};
            io.gather_b = (kn_gemm_gather){gather_w, &wr};
        }
        break;
    }
    case RK_CONV_WGRAD:
    case RK_CONV__COUNT: {
        /* A = dY^T (dY [pixels, K] read column-major); B = im2col(X) [pixels, taps*Cg]; C = dW rows */
        io.M = rk_ix_value(k, kg);
        io.N = rk_ix_value(k, tcg);
        io.K = rk_ix_value(k, opix);
        io.A = moved(k, p[0], rk_ix_value(k, kg0), s.dtype);
        io.lda = rk_ix_value(k, a.k);
        io.B = moved(k, p[1], rk_ix_value(k, cg0), s.dtype);
        io.ldb = rk_ix_value(k, a.c);
        shift = rk_ix_value(k, wg0);
        io.C = moved(k, p[2], shift, s.out_dtype);
        io.ldc = io.N;
        if (!one) {
            x_view(k, &a, p[1], opix, tcg, cg, cg0, &gt.v);
            gt.cp = &pl.cpb;
            io.gather_b = (kn_gemm_gather){gather, &gt};
        }
        break;
    }
    }
    if (wgmma) {
        kn_conv_hopper_io hio = {.io = &io, .view = one ? NULL : &gt.v, .epi = ea.p, .nepi = ne, .work = work,
                                 .groups = rk_ix_value(k, a.groups),
                                 .wrows = one || cs->direction != RK_CONV_DGRAD ? NULL : &wr.w,
                                 .maps = kn_conv_tma(in) ? &p[next + ne + (s.split_k > 1)] : NULL};
        kn_conv_hopper_build(k, in, t, &hio);
        return;
    }
    io.c_shift.v = shift;
    io.c_shift.set = true;
    rk_value pid = kn_gemm_block_id(k, &s);
    rk_ix tm, tn;
    kn_gemm_tile_origin(k, pl.bm, pl.bn, s.group_m, pid, io.M, io.N, &tm, &tn, &io.m0, &io.n0);
    rk_value res[192];
    kn_gemm_mainloop(k, &pl, &s, &io, res);
    kn_gemm_finish(k, &pl, &s, &io, &ea, res, pid, tm, tn, true, work);
}
