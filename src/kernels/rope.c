/* rocke — rotary position embedding in place on Q [tokens, q_heads,
 * head_dim] and K [tokens, kv_heads, head_dim]: the first 2*rot_half
 * elements of every head rotate by the angle of the token's position
 * (Pos, i32), cos/sin read from [max_pos, rot_half] caches; GPT-NeoX pairs
 * (i, i + rot_half) or GPT-J pairs (2i, 2i + 1). One thread rotates `pairs`
 * consecutive pairs of one head with vector accesses. Layer: kernels. */
#include <math.h>
#include <stdio.h>

#include "rope_rotate.h"

static const char *const style_names[] = {"neox", "gptj", NULL};
static const uint32_t legal_pairs[] = {1, 2, 4, 8, 0};

static const rk_knob knobs[] = {
    KN_DTYPE("dtype", "", u.rope.dtype, "element type of Q and K"),
    KN_DTYPE("cache_dtype", "c", u.rope.cache_dtype, "element type of the cos/sin caches"),
    KN_ENUM("style", "s", u.rope.style, style_names, false,
            "neox: pairs (i, i + rot_half); gptj: interleaved pairs (2i, 2i + 1)"),
    KN_U32("block_size", "b", u.rope.block_size, kn_legal_block, true, "threads per block"),
    KN_U32("pairs", "p", u.rope.pairs, legal_pairs, true, "rotation pairs per thread (vector width)"),
};
enum { K_DT, K_CDT, K_STYLE, K_BLOCK, K_PAIRS };

static const rk_dim_decl dims[] = {
    {"tokens", 4096, "tokens (rows of Q and K)"},
    {"q_heads", 32, "heads of Q"},
    {"kv_heads", 8, "heads of K"},
    {"head_dim", 128, "elements per head"},
    {"rot_half", 64, "rotated pairs per head (rot_dim / 2 <= head_dim / 2); cache row length"},
    {"max_pos", 8192, "rows of the cos/sin caches (positions must be below it)"},
};
enum { D_T, D_HQ, D_HK, D_D, D_RH, D_P };

static const rk_scalar_decl scalars[] = {
    {"tokens", RK_S_I32, RK_SC_DIM, "tokens", NULL, 0, "tokens"},
    {"q_heads", RK_S_I32, RK_SC_DIM, "q_heads", NULL, 0, "heads of Q"},
    {"kv_heads", RK_S_I32, RK_SC_DIM, "kv_heads", NULL, 0, "heads of K"},
    {"head_dim", RK_S_I32, RK_SC_DIM, "head_dim", NULL, 0, "elements per head"},
    {"rot_half", RK_S_I32, RK_SC_DIM, "rot_half", NULL, 0, "rotated pairs per head"},
};

static void defaults(rk_instance *in) {
    in->u.rope = (rk_rope_spec){.dtype = RK_S_BF16, .cache_dtype = RK_S_F32, .style = RK_ROPE_NEOX,
                                .block_size = 256, .pairs = 4};
}

/* Elements one thread moves per Q/K access. */
static uint32_t qk_vec(const rk_rope_spec *s) { return s->style == RK_ROPE_GPTJ ? 2 * s->pairs : s->pairs; }

static bool pairs_fit(const rk_rope_spec *s, uint32_t p) {
    rk_rope_spec t = *s;
    t.pairs = p;
    return qk_vec(&t) * rk_tile_elem_bytes(s->dtype) <= 16 && p * rk_tile_elem_bytes(s->cache_dtype) <= 16;
}

static uint64_t work_items(const rk_rope_spec *s, const rk_shape *sh) {
    return sh->dim[D_T] * (sh->dim[D_HQ] + sh->dim[D_HK]) * (sh->dim[D_RH] / s->pairs);
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    (void)t;
    rk_rope_spec *s = &in->u.rope;
    if (!(locked >> K_PAIRS & 1)) {
        /* the widest vector the shape keeps aligned (rot_half and head_dim multiples of it) */
        uint32_t p = 8;
        while (p > 1 && (!pairs_fit(s, p) || sh->dim[D_RH] % p || sh->dim[D_D] % (qk_vec(s) / s->pairs * p)))
            p /= 2;
        s->pairs = p;
    }
    if (!(locked >> K_BLOCK & 1)) {
        uint32_t b = 256;
        while (b > 64 && (work_items(s, sh) + b - 1) / b < 264) b /= 2;   /* 2 blocks per SM */
        s->block_size = b;
    }
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_rope_spec *s = &in->u.rope;
    if (!pairs_fit(s, s->pairs))
        return rk_fail(RK_ERR_INVALID, "knob 'pairs' = %u makes %s accesses wider than 16 bytes (%s Q/K, %s cache); "
                       "legal here: at most %u", s->pairs, style_names[s->style], kn_dtype_name(s->dtype),
                       kn_dtype_name(s->cache_dtype), pairs_fit(s, 4) ? 4 : pairs_fit(s, 2) ? 2 : 1);
    if (s->block_size > t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "knob 'block_size' must be at most %u on %s, got %u", t->max_workgroup,
                       t->name, s->block_size);
    return RK_OK;
}

static rk_status check_shape(const rk_instance *in, const rk_shape *sh) {
    const rk_rope_spec *s = &in->u.rope;
    const uint64_t D = sh->dim[D_D], RH = sh->dim[D_RH];
    if (2 * RH > D)
        return rk_fail(RK_ERR_INVALID, "rope: dimension rot_half (%llu) must be at most head_dim / 2 (%llu)",
                       (unsigned long long)RH, (unsigned long long)(D / 2));
    if (RH % s->pairs)
        return rk_fail(RK_ERR_INVALID, "rope: dimension rot_half (%llu) must be a multiple of knob 'pairs' (%u); "
                       "build for this shape or with a smaller pairs", (unsigned long long)RH, s->pairs);
    if (D % qk_vec(s))
        return rk_fail(RK_ERR_INVALID, "rope: dimension head_dim (%llu) must be a multiple of %u (knob 'pairs' %u, "
                       "style %s) so every head starts vector-aligned", (unsigned long long)D, qk_vec(s), s->pairs,
                       style_names[s->style]);
    uint64_t heads = sh->dim[D_HQ] + sh->dim[D_HK];
    if (sh->dim[D_T] * heads * D > INT32_MAX || sh->dim[D_P] * RH > INT32_MAX ||
        work_items(s, sh) > (uint64_t)INT32_MAX - 1024)
        return rk_fail(RK_ERR_INVALID, "rope: tokens x heads x head_dim and max_pos x rot_half must be < 2^31");
    return RK_OK;
}

/* Q, K (in place), Pos, Cos, Sin, tokens, q_heads, kv_heads, head_dim, rot_half */
static void signature(const rk_instance *in, rk_ksig *s) {
    const rk_rope_spec *r = &in->u.rope;
    kn_sig_add(s, "Q", true, r->dtype, RK_KP_INOUT, "tokens,q_heads,head_dim");
    kn_sig_add(s, "K", true, r->dtype, RK_KP_INOUT, "tokens,kv_heads,head_dim");
    kn_sig_add(s, "Pos", true, RK_S_I32, RK_KP_IN, "tokens");
    kn_sig_add(s, "Cos", true, r->cache_dtype, RK_KP_IN, "max_pos,rot_half");
    kn_sig_add(s, "Sin", true, r->cache_dtype, RK_KP_IN, "max_pos,rot_half");
    for (uint32_t i = 0; i < RK_COUNTOF(scalars); i++) kn_sig_add(s, scalars[i].name, false, RK_S_I32, RK_KP_SCALAR, NULL);
}

/* ceil(work_items / block_size), work_items = T * (HQ + HK) * (RH / pairs) */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_rope_spec *s = &in->u.rope;
    kn_geom_dim(g, D_T);
    kn_geom_dim(g, D_HQ);
    kn_geom_dim(g, D_HK);
    kn_geom_op(g, RK_GEOM_ADD);
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_dim(g, D_RH);
    kn_geom_const(g, s->pairs);
    kn_geom_op(g, RK_GEOM_DIV);
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_const(g, s->block_size);
    kn_geom_op(g, RK_GEOM_CDIV);
    kn_geom_axis(g);
    g->block[0] = s->block_size;
}

/* The rotated part of Q and K read and written, positions, the cache rows
 * of each token (read once per token). */
static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    const rk_rope_spec *s = &in->u.rope;
    double T = (double)sh->dim[D_T], heads = (double)(sh->dim[D_HQ] + sh->dim[D_HK]), RH = (double)sh->dim[D_RH];
    *bytes = T * heads * 2 * RH * 2 * rk_tile_elem_bytes(s->dtype) + T * 4 +
             T * 2 * RH * rk_tile_elem_bytes(s->cache_dtype);
    *flops = T * heads * RH * 6;
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    (void)in; (void)away;
    if (!strcmp(kp->name, "Pos")) { *lo = 0; *hi = 1 << 30; }   /* reduced below max_pos by fix_positions */
    else if (!strcmp(kp->name, "Cos") || !strcmp(kp->name, "Sin")) { *lo = -1; *hi = 1; }
    else { *lo = -4; *hi = 4; }
}

static void fix_positions(rk_problem *p) {
    const rk_host_buf *pos = kn_buf(p, "Pos");
    const uint64_t P = rk_problem_dim(p, "max_pos");
    for (uint64_t i = 0; i < pos->count; i++) ((int32_t *)pos->data)[i] %= (int32_t)P;
}

/* Rotate pairs [i0, i0 + pairs) of the head starting at element `head`, in place. */
static void rotate_head(rk_kernel *k, const rk_rope_spec *s, rk_value X, rk_value head, rk_value i0, rk_value rh,
                        rk_value cv, rk_value sv) {
    kn_rope_rot r;
    kn_rope_rotate(k, s->style, s->pairs, X, head, i0, rh, cv, sv, &r);
    kn_rope_store(k, X, &r, s->dtype);
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    (void)t;
    const rk_rope_spec *s = &in->u.rope;
    rk_value Q = p[0], K = p[1], Pos = p[2], Cos = p[3], Sin = p[4];
    rk_value T = p[5], HQ = p[6], HK = p[7], D = p[8], RH = p[9];
    rk_value bid = rk_build_block_id(k, 0), tid = rk_build_thread_id(k, 0);
    rk_value bs = kn_i32(k, (int32_t)s->block_size);
    rk_value item = rk_build_add(k, rk_build_mul(k, bid, bs), tid);
    rk_value pc = kn_i32(k, (int32_t)s->pairs);
    rk_value per_head = rk_build_udiv(k, RH, pc);
    rk_value heads = rk_build_add(k, HQ, HK);
    rk_value items = rk_build_mul(k, rk_build_mul(k, T, heads), per_head);
    rk_if_begin(k, rk_build_cmp(k, "lt", item, items));
    rk_value hv = rk_build_udiv(k, item, per_head);
    rk_value ci = rk_build_sub(k, item, rk_build_mul(k, hv, per_head));
    rk_value tok = rk_build_udiv(k, hv, heads);
    rk_value h = rk_build_sub(k, hv, rk_build_mul(k, tok, heads));
    rk_value i0 = rk_build_mul(k, ci, pc);
    rk_value pos = rk_load_global(k, Pos, tok, 1);
    rk_value crow = rk_build_add(k, rk_build_mul(k, pos, RH), i0);
    rk_value cv = rk_load_global(k, Cos, crow, s->pairs);
    rk_value sv = rk_load_global(k, Sin, crow, s->pairs);
    /* heads [0, q_heads) are Q's, the rest K's */
    rk_if_begin(k, rk_build_cmp(k, "lt", h, HQ));
    rk_value qrow = rk_build_add(k, rk_build_mul(k, tok, HQ), h);
    rk_value qhead = rk_build_mul(k, qrow, D);
    rotate_head(k, s, Q, qhead, i0, RH, cv, sv);
    rk_else(k, NULL, 0);
    rk_value kh = rk_build_sub(k, h, HQ);
    rk_value krow = rk_build_add(k, rk_build_mul(k, tok, HK), kh);
    rk_value khead = rk_build_mul(k, krow, D);
    rotate_head(k, s, K, khead, i0, RH, cv, sv);
    rk_if_end(k, NULL, 0);
    rk_if_end(k, NULL, 0);
}

const kn_family kn_rope = {
    .name = "rope", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = dims, .ndims = RK_COUNTOF(dims),
    .scalars = scalars, .nscalars = RK_COUNTOF(scalars), .defaults = defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build,
    .cost = cost, .reference = kn_rope_reference, .input_range = input_range,
    .fix_inputs = fix_positions,
};
