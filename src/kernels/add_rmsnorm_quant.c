/* rocke — add + RMSNorm + dynamic per-row quantization over [M, N]:
 * h = round(x + r) written back to R, y = h * rstd * gamma (f32), then
 * scale = amax|y| / qmax per row (written out) and q = sat(rne(y * qmax / amax))
 * in fp8 e4m3 (OCP or FNUZ, the target's native one) or int8. chunks > 0:
 * the row's h stays in registers in its storage type (x and r read once, h
 * and q written once, gamma read per phase from L1/L2), two block
 * reductions (sum of squares, amax). chunks == 0: three looped passes per
 * row (sum of squares, amax, quantize); the second and third read h back
 * from R. Layer: kernels. */
#include <math.h>

#include "kern_int.h"

static const char *const qtype_names[] = {"fp8e4m3", "fp8e4m3fnuz", "int8", NULL};

static const rk_knob knobs[] = {
    KN_DTYPE("dtype", "", u.arq.dtype, "element type of x, r (h) and gamma"),
    KN_ENUM("qtype", "q", u.arq.qtype, qtype_names, false,
            "quantized output: fp8e4m3 (OCP: gfx950, NVIDIA), fp8e4m3fnuz (gfx942) or int8"),
    KN_U32("wave", "w", u.arq.k.wave, kn_legal_wave, true, "target wave/warp size (64 CDNA, 32 NVIDIA)"),
    KN_U32("block_size", "b", u.arq.k.block_size, kn_legal_block, true, "threads per block"),
    KN_U32("vec", "v", u.arq.k.vec, kn_legal_vec, true, "elements per vector access (<= 16 bytes)"),
    KN_U32("rows_per_block", "r", u.arq.k.rows_per_block, kn_legal_rpb, true, "rows handled by one block"),
    KN_U32("unroll", "u", u.arq.k.unroll, kn_legal_unroll, true, "vector loads in flight per thread"),
    KN_ENUM("tail", "t", u.arq.k.tail, kn_tail_names, true, "tail handling: masked or buffer views"),
    KN_U32_QUIET("chunks", "k", u.arq.k.chunks, kn_legal_chunks, true,
                 "vectors of h per thread held in registers (0: three looped passes, any N)"),
};
enum { K_DT, K_Q, K_W, K_B, K_V, K_R, K_U, K_T, K_C };

static const rk_scalar_decl scalars[] = {
    {"M", RK_S_I32, RK_SC_DIM, "M", NULL, 0, "rows"},
    {"N", RK_S_I32, RK_SC_DIM, "N", NULL, 0, "row length"},
    {"eps", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 1e-6, "added to mean(h^2) before the square root"},
};

static rk_scalar qscalar(rk_quant_type q) {
    return q == RK_QUANT_INT8 ? RK_S_I8 : q == RK_QUANT_FP8E4M3FNUZ ? RK_S_FP8E4M3FNUZ : RK_S_FP8E4M3;
}

/* Largest finite magnitude of the quantized type. */
static float qmax_of(rk_quant_type q) {
    return q == RK_QUANT_INT8 ? 127.0f : q == RK_QUANT_FP8E4M3FNUZ ? 240.0f : 448.0f;
}

#define KN_ARQ_MAX_CHUNKS_1024 4u

static void defaults(rk_instance *in) {
    rk_add_rmsnorm_quant_spec *s = &in->u.arq;
    s->dtype = RK_S_BF16;
    s->qtype = RK_QUANT_FP8E4M3;
    kn_row_defaults(&s->k);
    s->k.split = false;   /* plain row views (no such knob here) */
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    rk_add_rmsnorm_quant_spec *s = &in->u.arq;
    /* the target's native e4m3 unless the caller chose the type */
    if (!(locked >> K_Q & 1) && s->qtype != RK_QUANT_INT8)
        s->qtype = t->fp8 == RK_S_FP8E4M3FNUZ ? RK_QUANT_FP8E4M3FNUZ : RK_QUANT_FP8E4M3;
    /* this family's knobs as kn_row_tune's (wave, block, vec, rows, chunks,
     * unroll, tail, min_blocks): min_blocks stays 0, chunks as the norms'
     * cached rows (h packed: at most 16 elements a thread on NVIDIA, filled
     * rows up to 5 chunks), 0 (looped) past them; plain views (no split) */
    static const int row_bit[] = {[K_W] = 0, [K_B] = 1, [K_V] = 2, [K_R] = 3, [K_U] = 5, [K_T] = 6, [K_C] = 4};
    uint64_t rl = 1u << 7 | 1u << 8;
    for (int i = K_W; i <= K_C; i++)
        if (locked >> i & 1) rl |= 1ull << row_bit[i];
    s->k.min_blocks = 0;
    bool nv = t->vendor == RK_VENDOR_NVIDIA;
    kn_row_tune(&s->k, t, s->dtype, sh, rl, 0, 4, nv ? 16 : 0, 0);
    /* NVIDIA, 1024 threads a row (64 registers at most): 4 chunks spill 32
     * bytes (bf16, ptxas -v, 4096 x 32768), 5 spill 112 and 8 858: loop
     * past 4 */
    if (nv && !(rl >> 4 & 1) && kn_row_tpr(&s->k) >= 1024 && s->k.chunks > KN_ARQ_MAX_CHUNKS_1024) {
        s->k.chunks = 0;
        kn_row_tune(&s->k, t, s->dtype, sh, rl | 1u << 4, 0, 4, 16, 0);
    }
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_add_rmsnorm_quant_spec *s = &in->u.arq;
    if (s->qtype != RK_QUANT_INT8 && t->fp8 != qscalar(s->qtype)) {
        const char *native = t->fp8 == RK_S_FP8E4M3FNUZ ? "fp8e4m3fnuz, int8"
                             : t->fp8 == RK_S_FP8E4M3   ? "fp8e4m3, int8"
                                                        : "int8 (no native fp8)";
        return rk_fail(RK_ERR_INVALID, "knob 'qtype' %s is not a native fp8 of %s (legal on %s: %s)",
                       qtype_names[s->qtype], t->name, t->name, native);
    }
    if (s->k.min_blocks)
        return rk_fail(RK_ERR_INVALID, "add_rmsnorm_quant: min_blocks_per_sm must be 0");
    return kn_row_validate(&s->k, t, s->dtype, s->dtype);
}

static rk_status check_shape(const rk_instance *in, const rk_shape *s) {
    return kn_row_check_shape(&in->u.arq.k, s);
}

/* X, R (in place: h), Gamma, Q, Scale, M, N, eps */
static void signature(const rk_instance *in, rk_ksig *s) {
    const rk_add_rmsnorm_quant_spec *a = &in->u.arq;
    kn_sig_add(s, "X", true, a->dtype, RK_KP_IN, "M,N");
    kn_sig_add(s, "R", true, a->dtype, RK_KP_INOUT, "M,N");
    kn_sig_add(s, "Gamma", true, a->dtype, RK_KP_IN, "N");
    kn_sig_add(s, "Q", true, qscalar(a->qtype), RK_KP_OUT, "M,N");
    kn_sig_add(s, "Scale", true, RK_S_F32, RK_KP_OUT, "M");
    kn_sig_add(s, "M", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(s, "N", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(s, "eps", false, RK_S_F32, RK_KP_SCALAR, NULL);
}

static void geometry(const rk_instance *in, rk_launch_geom *g) { kn_row_geometry(&in->u.arq.k, g); }

/* Compulsory traffic: x, r read, h written, q written, gamma, scales. */
static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    const rk_add_rmsnorm_quant_spec *s = &in->u.arq;
    double e = rk_tile_elem_bytes(s->dtype), M = (double)sh->dim[0], N = (double)sh->dim[1];
    *bytes = M * N * (3 * e + 1) + N * e + 4 * M;
    *flops = 8.0 * M * N;
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    (void)in; (void)away;
    if (!strcmp(kp->name, "Gamma")) { *lo = 0.5; *hi = 1.5; }
    else if (!strcmp(kp->name, "R")) { *lo = -1; *hi = 1; }
    else { *lo = -1.5; *hi = 2.5; }
}

typedef struct arq_ctx {
    const rk_add_rmsnorm_quant_spec *s;
    rk_tile_rows g;
    rk_tile_row xr, rr, gr, qr;
    rk_value start, stride;    /* the thread's first offset, the loop step */
    uint32_t step;             /* elements between the unrolled chunks */
} arq_ctx;

static void offsets(rk_kernel *k, const arq_ctx *c, rk_value base, rk_value *offs) {
    for (uint32_t i = 0; i < c->s->k.unroll; i++)
        offs[i] = i ? rk_build_add(k, base, kn_i32(k, (int32_t)(i * c->step))) : base;
}

static rk_value vabs(rk_kernel *k, rk_value v, uint32_t vec) {
    rk_value n = vec > 1 ? rk_build_vfneg(k, v) : rk_build_fneg(k, v);
    return rk_tile_max(k, v, n);
}

/* y = h * rstd * gamma for the unrolled chunks at base (padding: h = 0). */
static void y_chunks(rk_kernel *k, const arq_ctx *c, rk_value base, rk_value rstd, rk_value *offs, rk_value *y) {
    rk_value h[8], gam[8];
    offsets(k, c, base, offs);
    rk_tile_row_load_f32(k, &c->rr, offs, c->s->k.unroll, 0.0, h);
    rk_tile_row_load_f32(k, &c->gr, offs, c->s->k.unroll, 0.0, gam);
    for (uint32_t i = 0; i < c->s->k.unroll; i++) {
        rk_value t = rk_tile_mul(k, h[i], rk_tile_bcast(k, rstd, h[i]));
        y[i] = rk_tile_mul(k, t, gam[i]);
    }
}

/* The row's scale amax / qmax to S (its first lane), and qmax / amax (0 for
 * an all-zero row: q = 0, scale = 0). */
static rk_value store_scale(rk_kernel *k, const arq_ctx *c, rk_value S, rk_value amax) {
    rk_value qmax = rk_const_f32(k, qmax_of(c->s->qtype));
    rk_value scale = rk_build_fdiv(k, amax, qmax);
    rk_value inv_raw = rk_build_fdiv(k, qmax, amax);
    rk_value f0 = rk_const_f32(k, 0.0f);
    rk_value nonzero = rk_build_fcmp(k, "ogt", amax, f0);
    rk_value inv = rk_build_select(k, nonzero, inv_raw, f0);
    rk_value first = rk_build_cmp(k, "eq", c->g.lt, kn_i32(k, 0));
    rk_if_begin(k, rk_build_and(k, first, c->g.active));
    rk_store_global(k, S, c->g.row, scale);
    rk_if_end(k, NULL, 0);
    return inv;
}

/* One element to the quantized type: saturating RNE. */
static rk_value quantize1(rk_kernel *k, rk_quant_type q, rk_value x) {
    if (q == RK_QUANT_INT8) return rk_build_cvt_f32_to_i8_sat(k, x);
    return rk_build_cvt_f32_to_fp8(k, x, (rk_type){qscalar(q)});
}

static rk_value quantize(rk_kernel *k, rk_quant_type q, rk_value v, uint32_t vec) {
    if (vec == 1) return quantize1(k, q, v);
    rk_value e[8];
    for (uint32_t i = 0; i < vec; i++) {
        rk_value x = rk_build_vextract(k, v, i);
        e[i] = quantize1(k, q, x);
    }
    return rk_build_vpack(k, e, vec);
}

/* chunks > 0: h = round(x + r) held packed (one read of x and r, one write
 * of h), the sum of squares reduced, then the amax of |y| from -h (an
 * integer sign flip: |(-h)·rstd·γ| = |h·rstd·γ| exactly, and a different
 * expression than the output's, so no compiler keeps the f32 y of the whole
 * row live across the second reduction), then q from h. γ is loaded in
 * each phase (L1/L2), never held across a reduction. */
static void build_cached(rk_kernel *k, const arq_ctx *c, const rk_tile_block_cfg *cfg, rk_value S, rk_value N,
                         rk_value eps) {
    const rk_row_knobs *kn = &c->s->k;
    rk_scalar dt = c->s->dtype;
    rk_tile_regs x;
    rk_value r[RK_TILE_MAX_CHUNKS], gam, acc = {0};
    rk_tile_regs_load_packed(k, &c->xr, c->g.lt, c->g.tpr, kn->chunks, 0.0, &x);
    rk_tile_row_load(k, &c->rr, x.off, x.n, 0.0, r);
    for (uint32_t i = 0; i < x.n; i++) {
        rk_value xf = rk_tile_to_f32(k, x.v[i]), rf = rk_tile_to_f32(k, r[i]);
        x.v[i] = rk_tile_from_f32(k, rk_tile_add(k, xf, rf), dt);
    }
    rk_tile_row_store(k, &c->rr, x.off, x.n, x.v);
    for (uint32_t i = 0; i < x.n; i++) {
        rk_value hf = rk_tile_to_f32(k, x.v[i]);
        acc = i ? rk_tile_fma(k, hf, hf, acc) : rk_tile_mul(k, hf, hf);
    }
    rk_value ss = rk_tile_block_reduce(k, RK_RED_SUM, cfg, c->g.tid, rk_tile_vec_reduce(k, RK_RED_SUM, acc));
    rk_value nf = rk_build_sitofp(k, N, RK_T_F32);
    rk_value ms = rk_build_fdiv(k, ss, nf);
    rk_value rstd = rk_build_rsqrt(k, rk_build_fadd(k, ms, eps));
    for (uint32_t i = 0; i < x.n; i++) {
        rk_value nh = rk_tile_to_f32_neg(k, x.v[i]);
        rk_tile_row_load_f32(k, &c->gr, &x.off[i], 1, 0.0, &gam);
        rk_value ny = rk_tile_mul(k, rk_tile_mul(k, nh, rk_tile_bcast(k, rstd, nh)), gam);
        rk_value a = vabs(k, ny, kn->vec);
        acc = i ? rk_tile_max(k, acc, a) : a;
    }
    rk_value amax = rk_tile_block_reduce(k, RK_RED_MAX, cfg, c->g.tid, rk_tile_vec_reduce(k, RK_RED_MAX, acc));
    rk_value inv = store_scale(k, c, S, amax);
    for (uint32_t i = 0; i < x.n; i++) {
        /* always true (rstd > 0 or NaN, never -(i + 1)), which no compiler
         * can tell: a branch per chunk keeps ptxas from hoisting every
         * chunk's gamma loads above the first store (as in the norms) */
        rk_if_begin(k, rk_build_fcmp(k, "une", rstd, rk_const_f32(k, -(float)(i + 1))));
        rk_value hf = rk_tile_to_f32(k, x.v[i]);
        rk_tile_row_load_f32(k, &c->gr, &x.off[i], 1, 0.0, &gam);
        rk_value y = rk_tile_mul(k, rk_tile_mul(k, hf, rk_tile_bcast(k, rstd, hf)), gam);
        rk_value sv = rk_tile_mul(k, y, rk_tile_bcast(k, inv, y));
        rk_value q = quantize(k, c->s->qtype, sv, kn->vec);
        rk_tile_row_store(k, &c->qr, &x.off[i], 1, &q);
        rk_if_end(k, NULL, 0);
    }
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    (void)t;
    arq_ctx c = {.s = &in->u.arq};
    const rk_row_knobs *kn = &c.s->k;
    rk_value X = p[0], R = p[1], G = p[2], Q = p[3], S = p[4], M = p[5], N = p[6], eps = p[7];
    c.g = rk_tile_rows_begin(k, kn->block_size, kn->rows_per_block, kn->wave, M);
    rk_tile_block_cfg cfg = {.wave = kn->wave, .group = c.g.tpr, .groups = c.g.rpb, .shuffle_fold = true};
    rk_scalar dt = c.s->dtype;
    c.xr = rk_tile_row_view(k, X, dt, c.g.row, N, N, c.g.active, kn->vec, kn->tail);
    c.rr = rk_tile_row_view(k, R, dt, c.g.row, N, N, c.g.active, kn->vec, kn->tail);
    c.qr = rk_tile_row_view(k, Q, qscalar(c.s->qtype), c.g.row, N, N, c.g.active, kn->vec, kn->tail);
    rk_value zero = kn_i32(k, 0), yes = rk_const_bool(k, true);
    c.gr = rk_tile_row_view(k, G, dt, zero, zero, N, yes, kn->vec, kn->tail);
    c.step = c.g.tpr * kn->vec;
    c.start = rk_build_mul(k, c.g.lt, kn_i32(k, (int32_t)kn->vec));
    c.stride = kn_i32(k, (int32_t)(c.step * kn->unroll));
    if (kn->chunks) {
        build_cached(k, &c, &cfg, S, N, eps);
        return;
    }
    uint32_t u = kn->unroll;
    rk_value offs[8], v[8], r[8], acc, res;

    /* pass 1: h = round(x + r) to R, sum of h^2 (padding lanes add 0) */
    rk_value z = rk_tile_f32s(k, 0.0f, kn->vec);
    rk_value b1 = rk_for_begin(k, c.start, c.xr.len, c.stride, NULL, 1, &z, NULL, &acc);
    offsets(k, &c, b1, offs);
    rk_tile_row_load_f32(k, &c.xr, offs, u, 0.0, v);
    rk_tile_row_load_f32(k, &c.rr, offs, u, 0.0, r);
    for (uint32_t i = 0; i < u; i++) {
        rk_value h = rk_tile_from_f32(k, rk_tile_add(k, v[i], r[i]), dt);
        v[i] = h;
        rk_value hf = rk_tile_to_f32(k, h);
        acc = rk_tile_fma(k, hf, hf, acc);
    }
    rk_tile_row_store(k, &c.rr, offs, u, v);
    rk_for_end(k, &acc, 1, &res);
    rk_value ss = rk_tile_block_reduce(k, RK_RED_SUM, &cfg, c.g.tid, rk_tile_vec_reduce(k, RK_RED_SUM, res));
    rk_value nf = rk_build_sitofp(k, N, RK_T_F32);
    rk_value ms = rk_build_fdiv(k, ss, nf);
    rk_value rstd = rk_build_rsqrt(k, rk_build_fadd(k, ms, eps));

    /* pass 2: amax of |y| */
    rk_value b2 = rk_for_begin(k, c.start, c.xr.len, c.stride, NULL, 1, &z, NULL, &acc);
    y_chunks(k, &c, b2, rstd, offs, v);
    for (uint32_t i = 0; i < u; i++) acc = rk_tile_max(k, acc, vabs(k, v[i], kn->vec));
    rk_for_end(k, &acc, 1, &res);
    rk_value amax = rk_tile_block_reduce(k, RK_RED_MAX, &cfg, c.g.tid, rk_tile_vec_reduce(k, RK_RED_MAX, res));
    rk_value inv = store_scale(k, &c, S, amax);

    /* pass 3: q = quantize(y * qmax / amax) */
    rk_value b3 = rk_for_begin(k, c.start, c.xr.len, c.stride, NULL, 0, NULL, NULL, NULL);
    y_chunks(k, &c, b3, rstd, offs, v);
    for (uint32_t i = 0; i < u; i++) {
        rk_value sv = rk_tile_mul(k, v[i], rk_tile_bcast(k, inv, v[i]));
        v[i] = quantize(k, c.s->qtype, sv, kn->vec);
    }
    rk_tile_row_store(k, &c.qr, offs, u, v);
    rk_for_end(k, NULL, 0, NULL);
}

const kn_family kn_add_rmsnorm_quant = {
    .name = "add_rmsnorm_quant", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = kn_row_dims, .ndims = 2,
    .scalars = scalars, .nscalars = RK_COUNTOF(scalars), .defaults = defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build,
    .cost = cost, .reference = kn_add_rmsnorm_quant_reference, .input_range = input_range,
};
