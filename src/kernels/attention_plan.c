/* rocke — the attention plan: the atom (the knob's or the target's
 * default), the block and warp tiles of both products, the accumulator row
 * geometry, the LDS operands (layouts chosen by the GEMM's bank-conflict
 * scoring) and their copies, checked against the register and LDS budgets
 * with messages that name the knob, the limit and the legal values.
 * Layer: kernels. */
#include <stdio.h>

#include "attention_int.h"

const rk_mma_atom *kn_attn_default_atom(const rk_target *t, rk_scalar dtype) {
    /* gfx950's K-packed 16x16x32 first, then gfx942's 16x16x16, then mma.sync */
    static const rk_atom_id f16[] = {RK_ATOM_MFMA_F32_16X16X32_F16, RK_ATOM_MFMA_F32_16X16X16_F16,
                                     RK_ATOM_MMA_M16N8K16_F32_F16};
    static const rk_atom_id bf16[] = {RK_ATOM_MFMA_F32_16X16X32_BF16, RK_ATOM_MFMA_F32_16X16X16_BF16,
                                      RK_ATOM_MMA_M16N8K16_F32_BF16};
    return kn_first_atom(t, dtype == RK_S_BF16 ? bf16 : f16, 3);
}

/* Prefix the current message (copied first: rk_fail writes the same buffer). */
static rk_status again(rk_status st, const char *what) {
    char why[512];
    snprintf(why, sizeof why, "%s", rk_error_message());
    return rk_fail(st, "attention: %s: %s", what, why);
}

static uint32_t round64(uint32_t elems) { return (elems + 63) / 64 * 64; }

static rk_status check_atom(const rk_attention_spec *s, const rk_target *t, const rk_mma_atom **out) {
    const rk_mma_atom *a = s->atom ? rk_mma_atom_get((rk_atom_id)s->atom) : kn_attn_default_atom(t, s->dtype);
    if (!a) return rk_fail(RK_ERR_INVALID, "attention: %s has no %s matrix atom", t->name, kn_dtype_name(s->dtype));
    if (!rk_target_has_atom(t, a))
        return rk_fail(RK_ERR_INVALID, "attention: knob 'atom' = %s is not available on %s (try 'auto')", a->op_id,
                       t->name);
    if (a->unit == RK_ATOM_UNIT_WGMMA)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'atom' = %s is a warpgroup atom; this slice runs mma.sync and "
                       "MFMA atoms (the TMA + wgmma schedule is a later slice)", a->op_id);
    if (a->a_elem != s->dtype || a->b_elem != s->dtype || a->c_elem != RK_S_F32 || a->batch != 1 || a->scaled)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'atom' = %s does not multiply %s inputs into f32 one block at "
                       "a time", a->op_id, kn_dtype_name(s->dtype));
    if (a->lanes != t->wave_size)
        return rk_fail(RK_ERR_INVALID, "attention: atom %s runs on %u lanes, %s waves have %u", a->op_id, a->lanes,
                       t->name, t->wave_size);
    *out = a;
    return RK_OK;
}

static rk_status check_tiles(const rk_attention_spec *s, const rk_target *t, kn_attn_plan *p) {
    const rk_mma_atom *a = p->atom;
    p->bm = s->block_m, p->bn = s->block_n, p->d = s->head_dim, p->warps = s->warps, p->wave = a->lanes;
    if (!p->warps) return rk_fail(RK_ERR_INVALID, "attention: knob 'warps' must be at least 1");
    p->threads = p->warps * p->wave;
    if (p->threads > t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'warps' = %u is %u threads, more than %s's %u", p->warps,
                       p->threads, t->name, t->max_workgroup);
    if (p->bm % (p->warps * a->m))
        return rk_fail(RK_ERR_INVALID, "attention: knob 'block_m' = %u must split into %u warps of %u-row atoms (%s): "
                       "a multiple of %u", p->bm, p->warps, a->m, a->op_id, p->warps * a->m);
    uint32_t kn = a->n > a->k ? a->n : a->k;
    if (p->bn % a->n || p->bn % a->k)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'block_n' = %u must be a multiple of the atom's N = %u and "
                       "K = %u (%s)", p->bn, a->n, a->k, a->op_id);
    if (p->d % a->n || p->d % a->k)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'head_dim' = %u is not a multiple of %u (%s)", p->d, kn,
                       a->op_id);
    p->wtm = p->bm / p->warps;
    p->mi = p->wtm / a->m;
    p->sn = p->bn / a->n, p->dk = p->d / a->k, p->on = p->d / a->n, p->pk = p->bn / a->k;
    rk_status st = rk_tile_acc_to_a_check(a, a, p->wtm, p->bn);
    if (st) return again(st, "P as the A operand of P V");
    if ((st = rk_tile_acc_rows_make(a, &p->rows))) return again(st, "softmax rows");
    p->p_in_regs = rk_tile_acc_to_a_in_regs(a, a);
    /* f32 registers per thread: O and S accumulators, P and Q fragments (16-bit pairs) */
    uint32_t o = p->mi * p->on * a->c_len, sreg = p->mi * p->sn * a->c_len, pf = p->mi * p->pk * a->a_len / 2;
    uint32_t q = p->mi * p->dk * a->a_len / 2, regs = o + sreg + pf + q;
    /* Q fragments stay in registers when they fit beside O, else they are read from LDS at every step */
    p->q_in_regs = o + q <= 160;
    if (!p->q_in_regs) regs -= q;
    if (o > 160)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'head_dim' = %u keeps %u registers of O accumulators per "
                       "thread for %u-row atoms (%s), more than this slice holds (160 of the 255): head_dim 64 or "
                       "128 on %s", p->d, o, a->m, a->op_id, t->name);
    if (regs > 192)
        return rk_fail(RK_ERR_INVALID, "attention: %u query rows per warp with block_n = %u and D = %u keep %u "
                       "registers of accumulators and fragments per thread (at most 192 of the 255): use more "
                       "warps, a smaller block_m or block_n", p->wtm, p->bn, p->d, regs);
    return RK_OK;
}

static rk_status check_lds(const rk_attention_spec *s, const rk_target *t, kn_attn_plan *p) {
    const rk_mma_atom *a = p->atom;
    p->stages = s->stages;
    if (p->stages < 1 || p->stages > 3)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'stages' must be 1..3, got %u", p->stages);
    bool async = p->stages > 1;
    uint32_t eb = rk_tile_elem_bytes(s->dtype), vec = 16 / eb;
    rk_status st = kn_gemm_choose_layout(a, RK_FRAG_A, true, p->bm, p->d, vec, p->threads, s->dtype, async, p->wave,
                                         &p->opq, &p->cpq);
    if (st) return again(st, "the Q tile");
    if ((st = kn_gemm_choose_layout(a, RK_FRAG_B, true, p->bn, p->d, vec, p->threads, s->dtype, async, p->wave,
                                    &p->opk, &p->cpk)))
        return again(st, "the K tile");
    if ((st = kn_gemm_choose_layout(a, RK_FRAG_B, false, p->bn, p->d, vec, p->threads, s->dtype, async, p->wave,
                                    &p->opv, &p->cpv)))
        return again(st, "the V tile");
    uint32_t kel = round64(rk_lds_layout_bytes(&p->opk.lds) / eb), vel = round64(rk_lds_layout_bytes(&p->opv.lds) / eb);
    p->q_elems = round64(rk_lds_layout_bytes(&p->opq.lds) / eb);
    p->kv_stage = kel + vel;
    p->v_base = kel;
    /* Q read into registers before the loop shares the K/V stages; else it follows them */
    uint32_t stages = p->stages * p->kv_stage, body = stages > p->q_elems ? stages : p->q_elems;
    p->q_base = 0;
    if (!p->q_in_regs) {
        p->q_base = stages;
        body = stages + p->q_elems;
    }
    p->p_base = body;
    p->p_warp = 0;
    if (!p->p_in_regs) {
        /* the P scratch: plain rows, or 8 elements of padding when that reads with fewer conflicts */
        rk_lds_layout plain, pad;
        rk_lds_layout_make(p->wtm, p->bn, eb, 0, 0, 0, 0, &plain);
        rk_lds_layout_make(p->wtm, p->bn, eb, 8, 0, 0, 0, &pad);
        rk_tile_operand op0 = {RK_FRAG_A, true, plain}, op1 = {RK_FRAG_A, true, pad};
        p->lp = rk_tile_frag_conflicts(a, &op1) < rk_tile_frag_conflicts(a, &op0) ? pad : plain;
        p->p_warp = round64(rk_lds_layout_bytes(&p->lp) / eb);
    }
    p->lds_elems = body + p->warps * p->p_warp;
    uint64_t bytes = (uint64_t)p->lds_elems * eb;
    if (bytes > t->lds_bytes)
        return rk_fail(RK_ERR_INVALID, "attention: %u stages of %ux%u K and V tiles (block_m %u, D %u) need %llu bytes "
                       "of LDS, %s has %u: use fewer stages or smaller blocks", p->stages, p->bn, p->d, p->bm, p->d,
                       (unsigned long long)bytes, t->name, t->lds_bytes);
    p->lds_bytes = (uint32_t)bytes;
    return RK_OK;
}

rk_status kn_attn_plan_make(const rk_attention_spec *s, const rk_target *t, kn_attn_plan *out) {
    memset(out, 0, sizeof *out);
    kn_attn_plan p = {0};
    if (s->dtype != RK_S_F16 && s->dtype != RK_S_BF16) {
        uint32_t n;
        const rk_knob *kb = rk_family_knobs(RK_FAMILY_ATTENTION, &n);
        char legal[64];
        return rk_fail(RK_ERR_INVALID, "attention: knob 'dtype' must be one of %s, got %s",
                       kn_knob_legal(kb, n, "dtype", legal, sizeof legal), kn_dtype_name(s->dtype));
    }
    if (s->head_dim != 64 && s->head_dim != 128 && s->head_dim != 256)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'head_dim' must be 64, 128 or 256, got %u", s->head_dim);
    if ((unsigned)s->mask >= RK_ATTN_MASK__COUNT) return rk_fail(RK_ERR_INVALID, "attention: knob 'mask' out of range");
    if ((unsigned)s->layout >= RK_ATTN_LAYOUT__COUNT)
        return rk_fail(RK_ERR_INVALID, "attention: knob 'layout' out of range");
    rk_status st = check_atom(s, t, &p.atom);
    if (!st) st = check_tiles(s, t, &p);
    if (!st) st = check_lds(s, t, &p);
    if (st) return st;
    *out = p;
    return RK_OK;
}
