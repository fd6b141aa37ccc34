/* rocke — the direct forward convolution for few channels per group
 * (depthwise and groups of up to 16 channels), where an implicit GEMM would
 * leave the matrix units nearly idle: a bandwidth-bound loop, one thread per
 * output pixel and vec consecutive output channels (consecutive threads
 * take consecutive channel vectors of a pixel, so the input reads
 * coalesce), f32 accumulation over the taps and the group's channels, the
 * fwd epilogue chain, one vector store. vec > 1 needs C/g = K/g = 1: the
 * input is then read as channel vectors. With dw_pix set, depthwise
 * problems go to conv_depthwise.c instead (weights in LDS, several pixels
 * per thread). Layer: kernels. */
#include "conv_int.h"

/* i64 of an index term. */
static rk_value i64(rk_kernel *k, rk_ix v) {
    rk_value x = rk_ix_value(k, v);
    return rk_build_sext(k, x, RK_T_I64);
}

typedef struct dctx {
    rk_kernel *k;
    const kn_conv_args *a;
    rk_value X, W;
    rk_scalar dt;
    uint32_t vec;
    rk_ix cg, k0, org[3], xbase;   /* xbase: n * D (i32 pixel row of the image) */
    rk_ix cin0;                    /* the group's first input channel */
} dctx;

/* acc += X(pixel at tap t, channel c) * W(k0 + j, t, c) for j < vec. */
static rk_value tap_step(dctx *d, const rk_ix *tap, rk_ix c, rk_value acc) {
    rk_kernel *k = d->k;
    const kn_conv_args *a = d->a;
    rk_ix ok = rk_ix_c(1), pos = d->xbase;
    for (int i = 0; i < 3; i++) {
        rk_ix td = rk_ix_mul(k, tap[i], a->dil[i]);
        rk_ix x = rk_ix_add(k, d->org[i], td);
        ok = rk_ix_and(k, ok, rk_ix_ge(k, x, rk_ix_c(0)));
        ok = rk_ix_and(k, ok, rk_ix_lt(k, x, a->in[i]));
        pos = rk_ix_mul(k, pos, a->in[i]);
        pos = rk_ix_add(k, pos, x);
    }
    /* X[pixel, cin0 + c] (vec channels from there when depthwise) */
    rk_value p64 = i64(k, pos);
    rk_value c64 = i64(k, a->c);
    rk_value row = rk_build_mul(k, p64, c64);
    rk_ix ch = rk_ix_add(k, d->cin0, c);
    rk_value ch64 = i64(k, ch);
    rk_value at = rk_build_add(k, row, ch64);
    rk_value okv = rk_ix_bool_value(k, ok);
    rk_value zero = rk_const_i64(k, 0);
    rk_value idx = rk_build_select(k, okv, at, zero);
    rk_value xv = rk_load_global(k, d->X, idx, d->vec);
    rk_value xf = rk_tile_to_f32(k, xv);
    rk_value zf = rk_tile_f32s(k, 0.0f, d->vec);
    xf = rk_build_select(k, okv, xf, zf);
    /* W[k0 + j, t, r, s, c]: j strides by taps * cg */
    rk_ix t0 = rk_ix_mul(k, tap[0], a->filt[1]);
    t0 = rk_ix_add(k, t0, tap[1]);
    t0 = rk_ix_mul(k, t0, a->filt[2]);
    t0 = rk_ix_add(k, t0, tap[2]);
    rk_ix taps = rk_ix_mul(k, a->filt[0], a->filt[1]);
    taps = rk_ix_mul(k, taps, a->filt[2]);
    rk_ix per_k = rk_ix_mul(k, taps, d->cg);
    rk_value ws[8];
    for (uint32_t j = 0; j < d->vec; j++) {
        rk_ix kj = rk_ix_add(k, d->k0, rk_ix_c(j));
        rk_ix wi = rk_ix_mul(k, kj, per_k);
        rk_ix tc = rk_ix_mul(k, t0, d->cg);
        wi = rk_ix_add(k, wi, tc);
        wi = rk_ix_add(k, wi, c);
        rk_value w64 = i64(k, wi);
        ws[j] = rk_load_global(k, d->W, w64, 1);
    }
    rk_value wv = d->vec > 1 ? rk_build_vpack(k, ws, d->vec) : ws[0];
    rk_value wf = rk_tile_to_f32(k, wv);
    return rk_tile_fma(k, xf, wf, acc);
}

/* for t, r, s (a 2-D problem's t loop has one trip), then c < cg */
static rk_value taps_loop(dctx *d, int axis, rk_ix *tap, rk_value acc) {
    rk_kernel *k = d->k;
    rk_value lo = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
    rk_value hi = axis < 3 ? rk_ix_value(k, d->a->filt[axis]) : rk_ix_value(k, d->cg);
    rk_value inner, out;
    static const char *const iv_names[] = {"t", "r", "s", "ch"};
    static const char *const acc_names[][1] = {{"acc_t"}, {"acc_r"}, {"acc_s"}, {"acc_ch"}};
    rk_value iv = rk_for_begin(k, lo, hi, one, iv_names[axis], 1, &acc, acc_names[axis], &inner);
    rk_value next;
    if (axis < 3) {
        tap[axis] = rk_ix_v(iv);
        next = taps_loop(d, axis + 1, tap, inner);
    } else {
        next = tap_step(d, tap, rk_ix_v(iv), inner);
    }
    rk_for_end(k, &next, 1, &out);
    return out;
}

void kn_conv_direct_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    const rk_conv_spec *cs = &in->u.conv;
    if (cs->dw_pix) {
        kn_conv_dw_build(in, t, k, p);
        return;
    }
    const rk_gemm_spec *s = &cs->g;
    rk_epi_args ea;
    kn_conv_args a = kn_conv_direct_args(in, p, &ea);
    uint32_t vec = s->vec_a;
    dctx d = {.k = k, .a = &a, .X = p[0], .W = p[1], .dt = s->dtype, .vec = vec};
    d.cg = rk_ix_udiv(k, a.c, a.groups);
    rk_ix kg = rk_ix_udiv(k, a.k, a.groups);

    /* item = pixel * (K / vec) + channel vector */
    rk_value bid = rk_build_block_id(k, 0);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_ix item = rk_ix_mul(k, rk_ix_v(bid), rk_ix_c(KN_CONV_DIRECT_THREADS));
    item = rk_ix_add(k, item, rk_ix_v(tid));
    rk_ix kvecs = rk_ix_udiv(k, a.k, rk_ix_c(vec));
    rk_ix pix = rk_ix_mul(k, a.n, a.out[0]);
    pix = rk_ix_mul(k, pix, a.out[1]);
    pix = rk_ix_mul(k, pix, a.out[2]);
    rk_ix items = rk_ix_mul(k, pix, kvecs);
    rk_ix live = rk_ix_lt(k, item, items);
    rk_value livev = rk_ix_bool_value(k, live);
    rk_if_begin(k, livev);
    rk_ix m = rk_ix_udiv(k, item, kvecs);
    rk_ix kv = rk_ix_umod(k, item, kvecs);
    d.k0 = rk_ix_mul(k, kv, rk_ix_c(vec));
    rk_ix grp = rk_ix_udiv(k, d.k0, kg);
    d.cin0 = rk_ix_mul(k, grp, d.cg);
    /* m = ((n * O + o) * P + p) * Q + q */
    rk_ix rest = m, pos[3];
    for (int i = 2; i >= 0; i--) {
        pos[i] = rk_ix_umod(k, rest, a.out[i]);
        rest = rk_ix_udiv(k, rest, a.out[i]);
    }
    for (int i = 0; i < 3; i++) {
        rk_ix sp = rk_ix_mul(k, pos[i], a.stride[i]);
        d.org[i] = rk_ix_sub(k, sp, a.pad[i]);
    }
    d.xbase = rest;
    rk_value acc0 = rk_tile_f32s(k, 0.0f, vec);
    rk_ix tap[3] = {rk_ix_c(0), rk_ix_c(0), rk_ix_c(0)};
    rk_value acc = taps_loop(&d, 0, tap, acc0);
    rk_value mv = rk_ix_value(k, m);
    rk_value k0v = rk_ix_value(k, d.k0);
    rk_value y = rk_tile_epi_apply(k, &ea, acc, mv, k0v, livev);
    rk_value out = rk_tile_from_f32(k, y, s->out_dtype);
    rk_value m64 = rk_build_sext(k, mv, RK_T_I64);
    rk_value K64 = i64(k, a.k);
    rk_value row = rk_build_mul(k, m64, K64);
    rk_value k064 = rk_build_sext(k, k0v, RK_T_I64);
    rk_value at = rk_build_add(k, row, k064);
    rk_store_global(k, p[2], at, out);
    rk_if_end(k, NULL, 0);
}
