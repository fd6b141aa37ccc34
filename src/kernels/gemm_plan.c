/* rocke — the GEMM plan: the atom (the knob's or the target's default), the
 * block and warp tiles, the LDS operands and their copies, checked against
 * the target's budgets with messages that name the knob, the limit and the
 * legal values. The LDS layout of each operand is chosen by the bank
 * conflict analysis: every candidate (plain, the swizzles its rows hold, 8
 * elements of padding) is scored on the fragment reads and the copy stores,
 * and the cheapest wins (swizzles before padding, which costs LDS).
 * Layer: kernels. */
#include <stdio.h>

#include "gemm_hopper.h"

const rk_mma_atom *kn_first_atom(const rk_target *t, const rk_atom_id *ids, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const rk_mma_atom *a = rk_mma_atom_get(ids[i]);
        if (a && rk_target_has_atom(t, a)) return a;
    }
    return NULL;
}

const rk_mma_atom *kn_gemm_default_atom(const rk_target *t, rk_scalar dtype) {
    static const rk_atom_id f16[] = {RK_ATOM_MMA_M16N8K16_F32_F16, RK_ATOM_MFMA_F32_32X32X16_F16,
                                     RK_ATOM_MFMA_F32_32X32X8_F16};
    static const rk_atom_id bf16[] = {RK_ATOM_MMA_M16N8K16_F32_BF16, RK_ATOM_MFMA_F32_32X32X16_BF16,
                                      RK_ATOM_MFMA_F32_32X32X8_BF16};
    if (dtype != RK_S_F16 && dtype != RK_S_BF16) return kn_gemm_fp8_atom(t, dtype);
    return kn_first_atom(t, dtype == RK_S_BF16 ? bf16 : f16, 3);
}

/* The copy of an operand: `vec` elements per LDS chunk read in `gvec`-element
 * global accesses (gathered when gvec < vec). */
static rk_status make_copy(const rk_lds_layout *l, uint32_t vec, uint32_t gvec, uint32_t threads, rk_scalar e,
                           bool async, rk_tile_copy *cp) {
    if (gvec < vec) return rk_tile_copy_make_gathered(l->rows, l->cols, vec, gvec, threads, e, l, cp);
    return rk_tile_copy_make(l->rows, l->cols, vec, threads, e, l, async, cp);
}

/* Elements per LDS chunk for global accesses of gvec elements: gvec itself
 * when an access is a whole async copy (4 bytes or more), else 16-byte chunks
 * (or the widest dividing the tile's contiguous extent) gathered from narrow
 * reads — an odd K keeps full-width LDS stores and one address per chunk. */
static uint32_t chunk_vec(uint32_t gvec, uint32_t eb, uint32_t cols) {
    if (gvec * eb >= 4) return gvec;
    uint32_t cv = 16 / eb;
    while (cv > gvec && cols % cv) cv /= 2;
    return cv;
}

/* Score a layout for an operand: fragment-read ways + copy-store ways (an
 * invalid copy scores out). */
static uint32_t score(const rk_mma_atom *a, rk_frag f, bool k_inner, const rk_lds_layout *l, uint32_t vec,
                      uint32_t gvec, uint32_t threads, rk_scalar e, bool async, uint32_t wave, rk_tile_copy *cp) {
    if (!rk_lds_layout_is_bijective(l)) return UINT32_MAX;
    if (make_copy(l, vec, gvec, threads, e, async, cp)) return UINT32_MAX;
    rk_tile_operand op = {f, k_inner, *l};
    /* B is read in pairs of atoms where it can be (one ldmatrix.x4): score that read */
    return rk_tile_frag_pair_conflicts(a, &op) + rk_tile_copy_conflicts(cp, wave);
}

rk_status kn_gemm_choose_layout(const rk_mma_atom *a, rk_frag f, bool k_inner, uint32_t rows, uint32_t cols,
                                uint32_t gvec, uint32_t threads, rk_scalar e, bool async, uint32_t wave,
                                rk_tile_operand *op, rk_tile_copy *cp) {
    uint32_t eb = rk_tile_elem_bytes(e), row_bytes = cols * eb, best = UINT32_MAX;
    uint32_t vec = chunk_vec(gvec, eb, cols);
    rk_lds_layout cand[6];
    uint32_t n = 0;
    if (rk_lds_layout_make(rows, cols, eb, 0, 0, 0, 0, &cand[n]) == RK_OK) n++;
    /* Swizzle<B, 4, 3> for the 16-byte chunks of rows of at least 2^(4+B) bytes; a chunk is at most
     * the copy's vector when smaller than 16 bytes, so the copy keeps whole vectors */
    for (uint32_t b = 1; b <= 3; b++)
        if (row_bytes >= (16u << b) && vec * eb <= 16 && rk_lds_layout_make(rows, cols, eb, 0, b, 4, 3, &cand[n]) == RK_OK)
            n++;
    /* 8 elements of padding (16 bytes for 8-bit elements, so rows stay 16-byte aligned) */
    if (rk_lds_layout_make(rows, cols, eb, eb == 1 ? 16 : 8, 0, 0, 0, &cand[n]) == RK_OK) n++;
    rk_tile_copy trial;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t sc = score(a, f, k_inner, &cand[i], vec, gvec, threads, e, async, wave, &trial);
        if (sc < best) {
            best = sc;
            op->frag = f;
            op->k_inner = k_inner;
            op->lds = cand[i];
            *cp = trial;
        }
    }
    if (best == UINT32_MAX) {
        /* say why the plain layout fails */
        rk_status st = make_copy(&cand[0], vec, gvec, threads, e, async, cp);
        return st ? st : rk_fail(RK_ERR_INVALID, "gemm: no LDS layout for a %ux%u operand tile", rows, cols);
    }
    return RK_OK;
}

/* Prefix the current message (copied first: rk_fail writes the same buffer). */
static rk_status again(rk_status st, const char *what, uint32_t v) {
    char why[512];
    snprintf(why, sizeof why, "%s", rk_error_message());
    return rk_fail(st, "%s = %u: %s", what, v, why);
}

rk_status kn_gemm_plan_make(const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *out) {
    if (s->path == RK_GEMM_PATH_WGMMA) {
        rk_status hs = kn_gemm_check_epilogue(s, t, out);
        return hs ? hs : kn_gemm_hopper_plan(s, t, batched, out);
    }
    if (s->path == RK_GEMM_PATH_STREAM) return kn_gemm_stream_plan(s, t, batched, out);
    memset(out, 0, sizeof *out);
    kn_gemm_plan p = {0};
    p.batched = batched;
    bool f8 = kn_gemm_hopper_f8(s), block = s->scale == RK_GEMM_SCALE_BLOCK;
    rk_status fs = kn_gemm_fp8_check(s, t, batched);
    if (fs) return fs;
    char legal[128];
    if (s->dtype != RK_S_F16 && s->dtype != RK_S_BF16 && !f8)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'dtype' must be one of %s, got %s",
                       kn_knob_legal(kn_gemm_knobs, KN_GEMM_NKNOBS, "dtype", legal, sizeof legal),
                       kn_dtype_name(s->dtype));
    if (!kn_dtype_ok(s->out_dtype))
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'out_dtype' must be one of %s, got %s",
                       kn_knob_legal(kn_gemm_knobs, KN_GEMM_NKNOBS, "out_dtype", legal, sizeof legal),
                       kn_dtype_name(s->out_dtype));
    if ((unsigned)s->layout >= RK_GEMM__COUNT) return rk_fail(RK_ERR_INVALID, "gemm: knob 'layout' out of range");
    const rk_mma_atom *a = s->atom ? rk_mma_atom_get((rk_atom_id)s->atom) : kn_gemm_default_atom(t, s->dtype);
    if (!a)
        return rk_fail(RK_ERR_INVALID, "gemm: %s has no %s matrix atom", t->name, kn_dtype_name(s->dtype));
    if (!rk_target_has_atom(t, a))
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'atom' = %s is not available on %s (try 'auto')", a->op_id, t->name);
    if (a->unit == RK_ATOM_UNIT_WGMMA)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'atom' = %s is a warpgroup atom; this GEMM runs mma.sync and MFMA "
                       "atoms (warp or wave wide)", a->op_id);
    rk_scalar ae = kn_gemm_fp8_native(t, a->a_elem), be = kn_gemm_fp8_native(t, a->b_elem);   /* FNUZ on gfx942 */
    if (ae != s->dtype || be != s->dtype || a->batch != 1 || a->scaled || a->c_elem != RK_S_F32)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'atom' = %s does not multiply %s inputs into f32 one block at a time",
                       a->op_id, kn_dtype_name(s->dtype));
    p.atom = a;
    p.wave = a->lanes;
    if (p.wave != t->wave_size)
        return rk_fail(RK_ERR_INVALID, "gemm: atom %s runs on %u lanes, %s waves have %u", a->op_id, p.wave, t->name,
                       t->wave_size);
    p.bm = s->tile[0], p.bn = s->tile[1], p.bk = s->tile[2];
    p.wm = s->warps[0], p.wn = s->warps[1];
    if (!p.wm || !p.wn) return rk_fail(RK_ERR_INVALID, "gemm: knob 'warps' must be at least 1x1");
    p.threads = p.wm * p.wn * p.wave;
    if (p.threads > t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'warps' = %ux%u is %u threads, more than %s's %u", p.wm, p.wn,
                       p.threads, t->name, t->max_workgroup);
    if (p.bm % (p.wm * a->m) || p.bn % (p.wn * a->n))
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'tile' = %ux%ux%u must split into warps %ux%u of %ux%u atoms (%s): "
                       "tile M a multiple of %u and tile N of %u", p.bm, p.bn, p.bk, p.wm, p.wn, a->m, a->n, a->op_id,
                       p.wm * a->m, p.wn * a->n);
    if (p.bk % a->k)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'tile' K = %u must be a multiple of the atom's K = %u (%s)", p.bk,
                       a->k, a->op_id);
    p.wtm = p.bm / p.wm, p.wtn = p.bn / p.wn;
    p.mi = p.wtm / a->m, p.ni = p.wtn / a->n, p.ki = p.bk / a->k;
    /* scale=block keeps the running sums and the 128-K block's accumulators */
    uint32_t acc_regs = p.mi * p.ni * a->c_len * (block ? 2 : 1);
    if (acc_regs > 192)
        return rk_fail(RK_ERR_INVALID, "gemm: a warp tile of %ux%u keeps %u f32 accumulators per thread (at most 192 of "
                       "the 255 registers%s): use more warps or a smaller tile", p.wtm, p.wtn, acc_regs,
                       block ? "; scale=block holds two sets" : "");
    p.stages = s->stages;
    if (p.stages < 1 || p.stages > 6) return rk_fail(RK_ERR_INVALID, "gemm: knob 'stages' must be 1..6, got %u", p.stages);
    p.a_row = s->layout == RK_GEMM_RR || s->layout == RK_GEMM_RC;
    p.b_row = s->layout == RK_GEMM_RR || s->layout == RK_GEMM_CR;
    uint32_t eb = rk_tile_elem_bytes(s->dtype);
    bool async_a = p.stages > 1 && (s->vec_a * eb == 4 || s->vec_a * eb == 8 || s->vec_a * eb == 16);
    bool async_b = p.stages > 1 && (s->vec_b * eb == 4 || s->vec_b * eb == 8 || s->vec_b * eb == 16);
    /* A: [bm][bk] when row-major (K inner), else [bk][bm]; B: [bn][bk] when column-major, else [bk][bn] */
    rk_status st = kn_gemm_choose_layout(a, RK_FRAG_A, p.a_row, p.a_row ? p.bm : p.bk, p.a_row ? p.bk : p.bm, s->vec_a,
                                 p.threads, s->dtype, async_a, p.wave, &p.opa, &p.cpa);
    if (st) return again(st, "gemm: the A tile with vec_a", s->vec_a);
    st = kn_gemm_choose_layout(a, RK_FRAG_B, !p.b_row, p.b_row ? p.bk : p.bn, p.b_row ? p.bn : p.bk, s->vec_b, p.threads,
                       s->dtype, async_b, p.wave, &p.opb, &p.cpb);
    if (st) return again(st, "gemm: the B tile with vec_b", s->vec_b);
    p.stage_a = rk_lds_layout_bytes(&p.opa.lds) / eb;
    p.stage_b = rk_lds_layout_bytes(&p.opb.lds) / eb;
    uint64_t lds = (uint64_t)p.stages * (p.stage_a + p.stage_b) * eb;
    if (lds > t->lds_bytes)
        return rk_fail(RK_ERR_INVALID, "gemm: %u stages of a %ux%ux%u tile need %llu bytes of LDS, %s has %u: use "
                       "fewer stages or a smaller tile", p.stages, p.bm, p.bn, p.bk, (unsigned long long)lds, t->name,
                       t->lds_bytes);
    p.lds_bytes = (uint32_t)lds;
    if ((st = kn_gemm_check_epilogue(s, t, &p))) return st;
    if ((st = kn_gemm_check_order_and_chain(s, batched))) return st;
    *out = p;
    return RK_OK;
}

rk_status kn_gemm_plan_plain(kn_gemm_plan *p) {
    rk_tile_copy *cp[2] = {&p->cpa, &p->cpb};
    for (int i = 0; i < 2; i++) {
        rk_tile_copy *c = cp[i];
        if (c->gvec == c->vec) continue;
        rk_status st = rk_tile_copy_make(c->rows, c->cols, c->gvec, c->threads, c->elem, &c->lds, false, c);
        if (st) return again(st, i ? "gemm: the B tile, read element by element; vec_b" : "gemm: the A tile, read "
                             "element by element; vec_a", c->gvec);
    }
    return RK_OK;
}

rk_status kn_gemm_check_order_and_chain(const rk_gemm_spec *s, bool batched) {
    if (s->group_m == 0 || s->group_m > 64 || (s->group_m & (s->group_m - 1)))
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'group_m' must be a power of two in 1..64, got %u", s->group_m);
    uint32_t per_kind[RK_EPI__COUNT] = {0};
    for (uint32_t i = 0; i < s->fuse.n; i++) per_kind[s->fuse.s[i].kind]++;
    if (per_kind[RK_EPI_BIAS] > 4 || per_kind[RK_EPI_BIAS_ROW] > 4 || per_kind[RK_EPI_SCALE] > 2 ||
        per_kind[RK_EPI_ADD] + per_kind[RK_EPI_MUL] > 4)
        return rk_fail(RK_ERR_INVALID, "gemm: knob 'fuse' takes at most 4 bias, 4 bias_row, 2 scale and 4 add/mul "
                       "steps");
    if (batched)
        for (uint32_t i = 0; i < s->fuse.n; i++)
            if (s->fuse.s[i].kind == RK_EPI_ADD || s->fuse.s[i].kind == RK_EPI_MUL)
                return rk_fail(RK_ERR_INVALID, "batched_gemm: --fuse add/mul (a second [M, N] tensor) is not offered "
                               "for batches; legal here: bias, bias_row, scale, clamp, activations");
    rk_status st = kn_gemm_split_validate(s);
    if (st) return st;
    return RK_OK;
}
