/* rocke — KV append: each new token's K and V [T, Hkv, D] into paged caches
 * [pages, page_size, Hkv, D] at slot slot_mapping[t] (i64; negative: skip),
 * optionally with rotary embedding of K on the way and of Q [T, Hq, D] in
 * place (rope_rotate.c, the whole head rotates), and e4m3 caches holding
 * x / scale (per-KV-head f32 scales). One thread moves one vector of K and
 * the same vector of V (rope: `vec` pairs of one head). Layer: kernels. */
#include <stdio.h>

#include "rope_rotate.h"

static const char *const rope_names[] = {"none", "neox", "gptj", NULL};
static const char *const kv_names[] = {"same", "fp8", "fp8fnuz", NULL};
static const uint32_t legal_vec[] = {1, 2, 4, 8, 0};

static const rk_knob knobs[] = {
    KN_DTYPE("dtype", "", u.kva.dtype, "element type of Q, K and V (and of the caches with kv_dtype same)"),
    KN_ENUM("rope", "r", u.kva.rope, rope_names, false,
            "rotary embedding of K and Q: none, neox (pairs (i, i + D/2)), gptj (pairs (2i, 2i + 1))"),
    KN_ENUM("kv_dtype", "kv", u.kva.kv_dtype, kv_names, false,
            "the caches' type: dtype's (same) or e4m3 with per-KV-head K and V scales (fp8: OCP, NVIDIA and "
            "gfx950; fp8fnuz: gfx942)"),
    KN_U32("block_size", "b", u.kva.block_size, kn_legal_block, true, "threads per block"),
    KN_U32("vec", "v", u.kva.vec, legal_vec, true, "elements per access (rope: rotation pairs per thread)"),
};
enum { K_DT, K_ROPE, K_KV, K_BLOCK, K_VEC };

static const rk_dim_decl dims[] = {
    {"T", 4096, "new tokens"},
    {"Hq", 32, "heads of Q (rotated in place with rope)"},
    {"Hkv", 8, "heads of K and V"},
    {"D", 128, "elements per head"},
    {"pages", 2048, "pages of each cache"},
    {"page_size", 16, "tokens per page"},
};
enum { D_T, D_HQ, D_HK, D_D, D_PG, D_PS };

static const rk_scalar_decl scalars[] = {
    {"T", RK_S_I32, RK_SC_DIM, "T", NULL, 0, "new tokens"},
    {"Hq", RK_S_I32, RK_SC_DIM, "Hq", NULL, 0, "heads of Q"},
    {"Hkv", RK_S_I32, RK_SC_DIM, "Hkv", NULL, 0, "heads of K and V"},
    {"D", RK_S_I32, RK_SC_DIM, "D", NULL, 0, "elements per head"},
};

static void defaults(rk_instance *in) {
    in->u.kva = (rk_kv_append_spec){.dtype = RK_S_BF16, .rope = RK_KV_ROPE_NONE, .kv_dtype = RK_ATTN_KV_SAME,
                                    .block_size = 256, .vec = 8};
}

static bool roped(const rk_kv_append_spec *s) { return s->rope != RK_KV_ROPE_NONE; }
static rk_rope_style style_of(const rk_kv_append_spec *s) {
    return s->rope == RK_KV_ROPE_GPTJ ? RK_ROPE_GPTJ : RK_ROPE_NEOX;
}
static rk_scalar cache_type(const rk_kv_append_spec *s) {
    return s->kv_dtype == RK_ATTN_KV_FP8 ? RK_S_FP8E4M3 : s->kv_dtype == RK_ATTN_KV_FP8FNUZ ? RK_S_FP8E4M3FNUZ
                                                                                          : s->dtype;
}
/* Elements of a head one thread covers: vec, or 2 * vec pairs' elements with rope. */
static uint32_t span(const rk_kv_append_spec *s) { return roped(s) ? 2 * s->vec : s->vec; }
/* Elements of one access of Q/K/V: rope neox reads the two halves apart. */
static uint32_t access(const rk_kv_append_spec *s) { return s->rope == RK_KV_ROPE_NEOX ? s->vec : span(s); }

static bool vec_fits(const rk_kv_append_spec *s, uint32_t v) {
    rk_kv_append_spec t = *s;
    t.vec = v;
    /* rope reads `vec` f32 of cos and of sin per thread */
    return access(&t) * rk_tile_elem_bytes(s->dtype) <= 16 && (!roped(s) || v * 4 <= 16);
}

static uint64_t work_items(const rk_kv_append_spec *s, const rk_shape *sh) {
    uint64_t heads = sh->dim[D_HK] + (roped(s) ? sh->dim[D_HQ] : 0);
    return sh->dim[D_T] * heads * (sh->dim[D_D] / span(s));
}

static void tune(rk_instance *in, const rk_target *t, const rk_shape *sh, uint64_t locked) {
    (void)t;
    rk_kv_append_spec *s = &in->u.kva;
    if (!(locked >> K_VEC & 1)) {
        uint32_t v = 8;
        while (v > 1 && (!vec_fits(s, v) || sh->dim[D_D] % (roped(s) ? 2 * v : v))) v /= 2;
        s->vec = v;
    }
    if (!(locked >> K_BLOCK & 1)) {
        uint32_t b = 256;
        while (b > 64 && (work_items(s, sh) + b - 1) / b < 264) b /= 2;   /* about 2 blocks per SM */
        s->block_size = b;
    }
}

static rk_status validate(const rk_instance *in, const rk_target *t) {
    const rk_kv_append_spec *s = &in->u.kva;
    if (!vec_fits(s, s->vec))
        return rk_fail(RK_ERR_INVALID, "knob 'vec' = %u makes accesses wider than 16 bytes (%s, rope %s); legal "
                       "here: at most %u", s->vec, kn_dtype_name(s->dtype), rope_names[s->rope],
                       vec_fits(s, 4) ? 4 : vec_fits(s, 2) ? 2 : 1);
    if (s->block_size > t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "knob 'block_size' must be at most %u on %s, got %u", t->max_workgroup,
                       t->name, s->block_size);
    if (s->kv_dtype != RK_ATTN_KV_SAME && t->fp8 != cache_type(s)) {
        const char *legal = t->fp8 == RK_S_FP8E4M3FNUZ ? "same, fp8fnuz" : t->fp8 == RK_S_FP8E4M3 ? "same, fp8"
                                                                                                   : "same";
        return rk_fail(RK_ERR_INVALID, "kv_append: kv_dtype = %s is not %s's native e4m3 (legal on %s: %s)",
                       kv_names[s->kv_dtype], t->name, t->name, legal);
    }
    return RK_OK;
}

static rk_status check_shape(const rk_instance *in, const rk_shape *sh) {
    const rk_kv_append_spec *s = &in->u.kva;
    const uint64_t D = sh->dim[D_D];
    if (D % span(s))
        return rk_fail(RK_ERR_INVALID, "kv_append: D (%llu) must be a multiple of %u (knob 'vec' %u%s); build for "
                       "this shape or with a smaller vec", (unsigned long long)D, span(s), s->vec,
                       roped(s) ? ", two halves with rope" : "");
    uint64_t heads = sh->dim[D_HQ] + sh->dim[D_HK];
    if (sh->dim[D_T] * heads * D > INT32_MAX || sh->dim[D_PG] * sh->dim[D_PS] > INT32_MAX ||
        work_items(s, sh) > (uint64_t)INT32_MAX - 1024)
        return rk_fail(RK_ERR_INVALID, "kv_append: T x (Hq + Hkv) x D and pages x page_size must be < 2^31");
    return RK_OK;
}

/* slots = pages * page_size (the cos/sin caches' rows too), rot_half = D / 2 */
static uint64_t extent(const rk_instance *in, const rk_shape *sh, const char *name, size_t len) {
    (void)in;
    if (len == 5 && !strncmp(name, "slots", 5)) return sh->dim[D_PG] * sh->dim[D_PS];
    if (len == 8 && !strncmp(name, "rot_half", 8)) return sh->dim[D_D] / 2;
    return 0;
}

/* [Q (rope)], K, V, Kc, Vc, slot_mapping, [Pos, Cos, Sin (rope)], [k_scale, v_scale (fp8)], T, Hq, Hkv, D */
static void signature(const rk_instance *in, rk_ksig *sg) {
    const rk_kv_append_spec *s = &in->u.kva;
    if (roped(s)) kn_sig_add(sg, "Q", true, s->dtype, RK_KP_INOUT, "T,Hq,D");
    kn_sig_add(sg, "K", true, s->dtype, RK_KP_IN, "T,Hkv,D");
    kn_sig_add(sg, "V", true, s->dtype, RK_KP_IN, "T,Hkv,D");
    kn_sig_add(sg, "Kc", true, cache_type(s), RK_KP_INOUT, "pages,page_size,Hkv,D");
    kn_sig_add(sg, "Vc", true, cache_type(s), RK_KP_INOUT, "pages,page_size,Hkv,D");
    kn_sig_add(sg, "slot_mapping", true, RK_S_I64, RK_KP_IN, "T");
    if (roped(s)) {
        kn_sig_add(sg, "Pos", true, RK_S_I32, RK_KP_IN, "T");
        kn_sig_add(sg, "Cos", true, RK_S_F32, RK_KP_IN, "slots,rot_half");
        kn_sig_add(sg, "Sin", true, RK_S_F32, RK_KP_IN, "slots,rot_half");
    }
    if (s->kv_dtype != RK_ATTN_KV_SAME) {
        kn_sig_add(sg, "k_scale", true, RK_S_F32, RK_KP_IN, "Hkv");
        kn_sig_add(sg, "v_scale", true, RK_S_F32, RK_KP_IN, "Hkv");
    }
    for (uint32_t i = 0; i < RK_COUNTOF(scalars); i++)
        kn_sig_add(sg, scalars[i].name, false, RK_S_I32, RK_KP_SCALAR, NULL);
}

/* ceil(T * heads * (D / span) / block_size), heads = Hkv (+ Hq with rope) */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    const rk_kv_append_spec *s = &in->u.kva;
    kn_geom_dim(g, D_T);
    kn_geom_dim(g, D_HK);
    if (roped(s)) {
        kn_geom_dim(g, D_HQ);
        kn_geom_op(g, RK_GEOM_ADD);
    }
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_dim(g, D_D);
    kn_geom_const(g, span(s));
    kn_geom_op(g, RK_GEOM_DIV);
    kn_geom_op(g, RK_GEOM_MUL);
    kn_geom_const(g, s->block_size);
    kn_geom_op(g, RK_GEOM_CDIV);
    kn_geom_axis(g);
    g->block[0] = s->block_size;
}

/* Bytes moved when `written` tokens have a slot: their K and V read and
 * cache rows written, every token's slot; with rope all of Q read and
 * written, positions and each token's cos/sin rows; fp8 the scales. */
static void bytes_of(const rk_kv_append_spec *s, const rk_shape *sh, double written, double *bytes, double *flops) {
    double T = (double)sh->dim[D_T], HK = (double)sh->dim[D_HK], HQ = (double)sh->dim[D_HQ],
           D = (double)sh->dim[D_D], eb = rk_tile_elem_bytes(s->dtype), cb = rk_tile_elem_bytes(cache_type(s));
    *bytes = written * HK * D * 2 * (eb + cb) + T * 8;
    *flops = 0;
    if (roped(s)) {
        *bytes += T * HQ * D * 2 * eb + T * 4 + T * D * 4;
        *flops = (T * HQ + written * HK) * D * 3;
    }
    if (s->kv_dtype != RK_ATTN_KV_SAME) *bytes += 2 * HK * 4;
}

static void cost(const rk_instance *in, const rk_shape *sh, double *bytes, double *flops) {
    bytes_of(&in->u.kva, sh, (double)sh->dim[D_T], bytes, flops);
}

/* The Perf line's bytes: only tokens with a slot move K and V. */
static void problem_cost(const rk_problem *p, double *bytes, double *flops) {
    const rk_host_buf *slot = kn_buf(p, "slot_mapping");
    double written = 0;
    for (uint64_t t = 0; t < slot->count; t++) written += ((const int64_t *)slot->data)[t] >= 0;
    bytes_of(&p->inst.u.kva, &p->shape, written, bytes, flops);
}

static void input_range(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away) {
    (void)in; (void)away;
    if (!strcmp(kp->name, "Pos") || !strcmp(kp->name, "slot_mapping")) { *lo = 0; *hi = 1 << 30; }   /* fix_inputs */
    else if (!strcmp(kp->name, "Cos") || !strcmp(kp->name, "Sin")) { *lo = -1; *hi = 1; }
    /* |rotated K| < 8: x / scale stays inside e4m3 FNUZ's 240 */
    else if (!strcmp(kp->name, "k_scale") || !strcmp(kp->name, "v_scale")) { *lo = 0.05; *hi = 0.1; }
    else { *lo = -4; *hi = 4; }
}

/* ---- the kernel -------------------------------------------------------------------------- */
typedef struct kv {
    const rk_kv_append_spec *s;
    rk_kernel *k;
    rk_value K, V, Kc, Vc, kscale, vscale;
} kv;

/* n f32 values to the cache type: RNE to dtype, or x * (1 / scale) to e4m3 (saturating). */
static rk_value to_cache(kv *g, rk_value *f, uint32_t n, rk_value inv) {
    rk_kernel *k = g->k;
    if (g->s->kv_dtype == RK_ATTN_KV_SAME) return kn_rope_pack(k, f, n, g->s->dtype);
    rk_value q[16];
    for (uint32_t i = 0; i < n; i++) {
        rk_value x = rk_build_fmul(k, f[i], inv);
        q[i] = rk_build_cvt_f32_to_fp8(k, x, (rk_type){cache_type(g->s)});
    }
    return n > 1 ? rk_build_vpack(k, q, n) : q[0];
}

/* One access of n elements of X at src into C at dst (converted when fp8). */
static void move(kv *g, rk_value X, rk_value src, rk_value C, rk_value dst, uint32_t n, rk_value inv) {
    rk_kernel *k = g->k;
    rk_value v = rk_load_global(k, X, src, n);
    if (g->s->kv_dtype != RK_ATTN_KV_SAME) {
        rk_value f[16];
        for (uint32_t i = 0; i < n; i++) f[i] = kn_rope_elem_f32(k, v, n, i);
        v = to_cache(g, f, n, inv);
    }
    rk_store_global(k, C, dst, v);
}

static rk_value inverse_scale(kv *g, rk_value scales, rk_value h) {
    if (g->s->kv_dtype == RK_ATTN_KV_SAME) return (rk_value){0};
    rk_value sc = rk_load_global(g->k, scales, h, 1);
    rk_value one = rk_const_f32(g->k, 1.0f);
    return rk_build_fdiv(g->k, one, sc);
}

/* Token tok's chunk i0 of KV head h into the caches at its slot (skipped
 * when the slot is negative); rope: K rotated by (cv, sv). */
static void append(kv *g, rk_value slot_map, rk_value tok, rk_value h, rk_value i0, rk_value Hkv, rk_value D,
                   rk_value rh, rk_value cv, rk_value sv) {
    rk_kernel *k = g->k;
    const rk_kv_append_spec *s = g->s;
    rk_value slot = rk_load_global(k, slot_map, tok, 1);
    rk_value zero = rk_const_i64(k, 0);
    rk_if_begin(k, rk_build_cmp(k, "ge", slot, zero));
    rk_value row = rk_build_add(k, rk_build_mul(k, tok, Hkv), h);
    rk_value src = rk_build_mul(k, row, D);
    /* the cache index in i64: a slot past the cache stays past it */
    rk_value h64 = rk_build_sext(k, h, RK_T_I64), hk64 = rk_build_sext(k, Hkv, RK_T_I64);
    rk_value D64 = rk_build_sext(k, D, RK_T_I64);
    rk_value crow = rk_build_add(k, rk_build_mul(k, slot, hk64), h64);
    rk_value dst = rk_build_mul(k, crow, D64);
    rk_value i064 = rk_build_sext(k, i0, RK_T_I64);
    rk_value kinv = inverse_scale(g, g->kscale, h), vinv = inverse_scale(g, g->vscale, h);
    if (!roped(s)) {
        rk_value ks = rk_build_add(k, src, i0), kd = rk_build_add(k, dst, i064);
        move(g, g->K, ks, g->Kc, kd, s->vec, kinv);
        move(g, g->V, ks, g->Vc, kd, s->vec, vinv);
    } else {
        kn_rope_rot r;
        kn_rope_rotate(k, style_of(s), s->vec, g->K, src, i0, rh, cv, sv, &r);
        rk_value rh64 = rk_build_sext(k, rh, RK_T_I64), at[2];
        kn_rope_at(k, style_of(s), dst, i064, rh64, at);
        for (uint32_t x = 0; x < r.nstores; x++) {
            rk_value o = to_cache(g, r.y + x * r.width, r.width, kinv);
            rk_store_global(k, g->Kc, at[x], o);
        }
        for (uint32_t x = 0; x < r.nstores; x++) move(g, g->V, r.at[x], g->Vc, at[x], r.width, vinv);
    }
    rk_if_end(k, NULL, 0);
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    (void)t;
    const rk_kv_append_spec *s = &in->u.kva;
    const bool rope = roped(s), fp8 = s->kv_dtype != RK_ATTN_KV_SAME;
    int n = 0;
    rk_value Q = rope ? p[n++] : (rk_value){0};
    kv g = {.s = s, .k = k};
    g.K = p[n++], g.V = p[n++], g.Kc = p[n++], g.Vc = p[n++];
    rk_value slot_map = p[n++];
    rk_value Pos = rope ? p[n++] : (rk_value){0}, Cos = rope ? p[n++] : (rk_value){0};
    rk_value Sin = rope ? p[n++] : (rk_value){0};
    g.kscale = fp8 ? p[n++] : (rk_value){0};
    g.vscale = fp8 ? p[n++] : (rk_value){0};
    rk_value T = p[n], HQ = p[n + 1], HK = p[n + 2], D = p[n + 3];
    rk_value bid = rk_build_block_id(k, 0), tid = rk_build_thread_id(k, 0);
    rk_value bs = kn_i32(k, (int32_t)s->block_size);
    rk_value item = rk_build_add(k, rk_build_mul(k, bid, bs), tid);
    rk_value sp = kn_i32(k, (int32_t)span(s));
    rk_value per_head = rk_build_udiv(k, D, sp);
    rk_value heads = rope ? rk_build_add(k, HQ, HK) : HK;
    rk_value items = rk_build_mul(k, rk_build_mul(k, T, heads), per_head);
    rk_if_begin(k, rk_build_cmp(k, "lt", item, items));
    rk_value hv = rk_build_udiv(k, item, per_head);
    rk_value ci = rk_build_sub(k, item, rk_build_mul(k, hv, per_head));
    rk_value tok = rk_build_udiv(k, hv, heads);
    rk_value h = rk_build_sub(k, hv, rk_build_mul(k, tok, heads));
    rk_value vc = kn_i32(k, (int32_t)s->vec);
    if (!rope) {
        rk_value i0 = rk_build_mul(k, ci, sp);
        append(&g, slot_map, tok, h, i0, HK, D, (rk_value){0}, (rk_value){0}, (rk_value){0});
    } else {
        rk_value i0 = rk_build_mul(k, ci, vc);   /* the first pair */
        rk_value two = kn_i32(k, 2);
        rk_value rh = rk_build_udiv(k, D, two);
        rk_value pos = rk_load_global(k, Pos, tok, 1);
        rk_value crow = rk_build_add(k, rk_build_mul(k, pos, rh), i0);
        rk_value cv = rk_load_global(k, Cos, crow, s->vec);
        rk_value sv = rk_load_global(k, Sin, crow, s->vec);
        /* heads [0, Hq) are Q's (rotated in place), the rest K's and V's */
        rk_if_begin(k, rk_build_cmp(k, "lt", h, HQ));
        rk_value qrow = rk_build_add(k, rk_build_mul(k, tok, HQ), h);
        rk_value qhead = rk_build_mul(k, qrow, D);
        kn_rope_rot r;
        kn_rope_rotate(k, style_of(s), s->vec, Q, qhead, i0, rh, cv, sv, &r);
        kn_rope_store(k, Q, &r, s->dtype);
        rk_else(k, NULL, 0);
        rk_value kh = rk_build_sub(k, h, HQ);
        append(&g, slot_map, tok, kh, i0, HK, D, rh, cv, sv);
        rk_if_end(k, NULL, 0);
    }
    rk_if_end(k, NULL, 0);
}

const kn_family kn_kv_append = {
    .name = "kv_append", .knobs = knobs, .nknobs = RK_COUNTOF(knobs), .dims = dims, .ndims = RK_COUNTOF(dims),
    .scalars = scalars, .nscalars = RK_COUNTOF(scalars), .defaults = defaults, .tune = tune,
    .validate = validate, .check_shape = check_shape, .signature = signature, .geometry = geometry, .build = build,
    .cost = cost, .reference = kn_kv_append_reference, .input_range = input_range, .extent = extent,
    .fix_inputs = kn_kv_append_fix_inputs, .check_inputs = kn_kv_append_check_inputs,
    .problem_cost = problem_cost,
};
