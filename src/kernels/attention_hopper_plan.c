/* rocke — the attention family's Hopper path (path = wgmma), its rules: the
 * spec a TMA + wgmma block can serve (messages name the knob, the limit and
 * path=mma, which takes the rest), the heuristic's tiles, the tensor maps of
 * the signature and their boxes. Layer: kernels. */
#include <string.h>

#include "attention_hopper.h"

bool kn_attn_hopper(const rk_attention_spec *s) { return s->mode == RK_ATTN_PREFILL && s->path == RK_ATTN_PF_WGMMA; }

static rk_status refuse(const char *why) {
    return rk_fail(RK_ERR_INVALID, "attention: path=wgmma %s (path=mma serves it)", why);
}

rk_status kn_attn_hopper_plan(const rk_attention_spec *s, const rk_target *t, kn_attn_hplan *out) {
    memset(out, 0, sizeof *out);
    char why[256];
    if (!(t->features & RK_FEAT_SM90A))
        return snprintf(why, sizeof why, "needs sm_90a (wgmma, TMA), not %s", t->name), refuse(why);
    if (s->layout != RK_ATTN_BHSD)
        return refuse("reads Q, K and V through 2-D TMA maps of [B*H*S, D] rows: layout bhsd only, not bshd or varlen");
    if (s->dtype != RK_S_F16 && s->dtype != RK_S_BF16) return refuse("multiplies f16 or bf16");
    if (s->atom) return refuse("takes no 'atom' knob (it runs wgmma m64nNk16)");
    kn_attn_hplan h = {0};
    kn_attn_plan *p = &h.pl;
    p->bm = s->block_m, p->bn = s->block_n, p->d = s->head_dim, p->stages = s->stages, p->wave = 32;
    if (p->bm != 64 && p->bm != 128 && p->bm != 192)
        return snprintf(why, sizeof why, "runs one consumer warpgroup per 64 query rows: knob 'block_m' = %u, legal "
                        "64, 128, 192", p->bm), refuse(why);
    h.wgs = p->bm / 64;
    if (s->warps != p->bm / 16)
        return snprintf(why, sizeof why, "runs 4 warps per 64 rows: knob 'warps' = %u, with block_m %u it is %u",
                        s->warps, p->bm, p->bm / 16), refuse(why);
    if (p->bn % 16 || p->bn > 176)
        return snprintf(why, sizeof why, "steps keys in k16 slices of P V: knob 'block_n' = %u, legal 16, 32, 64, 128, "
                        "176", p->bn), refuse(why);
    if (p->stages < 2 || p->stages > 3)
        return snprintf(why, sizeof why, "keeps 2 or 3 K/V stages on mbarriers: knob 'stages' = %u", p->stages),
               refuse(why);
    h.ws = s->schedule != RK_ATTN_SCHED_PLAIN;
    h.overlap = s->schedule == RK_ATTN_SCHED_OVERLAP || s->schedule == RK_ATTN_SCHED_PINGPONG;
    h.pingpong = s->schedule == RK_ATTN_SCHED_PINGPONG;
    if (h.pingpong && h.wgs < 2)
        return snprintf(why, sizeof why, "schedule=pingpong takes turns between consumer warpgroups: knob 'block_m' = "
                        "%u runs one, legal 128, 192", p->bm), refuse(why);
    uint32_t threads = 128 * h.wgs + (h.ws ? 128 : 0);
    /* the consumers' registers: ws hands them what the producer gives back (setmaxnreg, multiples of 8, the
     * register file is 64 K); plain leaves every thread its share (at most 255) */
    if (h.ws) h.regs = ((65536 - 128 * KN_AH_PRODUCER_REGS) / (128 * h.wgs)) / 8 * 8;
    else h.regs = 65536 / threads;
    if (h.regs > 240) h.regs = 240;
    /* f32 registers per thread: O and S accumulators, P as 16-bit pairs; the rest (addresses, m, l, the
     * loop) measured at up to KN_AH_REG_REST under ptxas with no spill (docs/attention.md) */
    uint32_t regs = p->d / 2 + p->bn / 2 + p->bn / 4;
    if (regs + KN_AH_REG_REST > h.regs)
        return snprintf(why, sizeof why, "keeps %u registers of O, S and P per thread with head_dim %u and block_n %u, "
                        "at most %u with block_m %u and schedule %s (%u registers a consumer thread): a smaller "
                        "block_n or block_m", regs, p->d, p->bn, h.regs - KN_AH_REG_REST, p->bm,
                        kn_attn_sched_name(s->schedule), h.regs), refuse(why);
    const rk_mma_atom *a = rk_mma_atom_get(s->dtype == RK_S_BF16 ? RK_ATOM_WGMMA_M64N8K16_F32_BF16
                                                                 : RK_ATOM_WGMMA_M64N8K16_F32_F16);
    rk_status st = rk_tile_acc_rows_make(a, &p->rows);
    if (st) return st;
    p->atom = a;
    p->warps = s->warps, p->threads = threads, p->wtm = 64, p->mi = 1;
    p->sn = p->bn / 8, p->on = p->d / 8, p->dk = p->d / 16, p->pk = p->bn / 16;
    p->p_in_regs = true, p->q_in_regs = false;
    h.chunks = p->d / KN_AH_BOX;
    h.q_elems = p->bm * p->d;
    h.kv_elems = p->bn * p->d;
    uint64_t bytes = 2ull * (h.q_elems + 2ull * p->stages * h.kv_elems) + 8ull * (2 * p->stages + 1) + 1024;
    if (bytes > t->lds_bytes)
        return snprintf(why, sizeof why, "needs %llu bytes of shared memory for Q and %u K/V stages (block_m %u, "
                        "block_n %u, D %u), %s has %u: fewer stages or a smaller block_n",
                        (unsigned long long)bytes, p->stages, p->bm, p->bn, p->d, t->name, t->lds_bytes), refuse(why);
    h.lds_bytes = p->lds_bytes = (uint32_t)bytes;
    *out = h;
    return RK_OK;
}

void kn_attn_hopper_tune(rk_attention_spec *a, uint64_t locked) {
    /* two consumer warpgroups of 64 rows; 128 keys a step, 64 at D = 256 (registers) */
    if (!(locked >> KN_AK_BM & 1)) a->block_m = 128;
    if (!(locked >> KN_AK_BN & 1)) a->block_n = a->head_dim == 256 ? 64 : 128;
    if (!(locked >> KN_AK_WARPS & 1)) a->warps = a->block_m / 16;
    if (!(locked >> KN_AK_STAGES & 1)) a->stages = 2;
    /* measured on the H200 (bench/RESULTS.md, session 5): ws ahead at D 128 (502 against 488 TFLOP/s,
     * causal 478 / 450, GQA 505 / 477), plain at D 64 (404 against 304) */
    if (!(locked >> KN_AK_SCHED & 1)) a->schedule = a->head_dim <= 64 ? RK_ATTN_SCHED_PLAIN : RK_ATTN_SCHED_WS;
}

void kn_attn_hopper_signature(const rk_attention_spec *s, rk_ksig *sg) {
    kn_sig_add(sg, "Q_map", false, s->dtype, RK_KP_TENSORMAP, "Q");
    kn_sig_add(sg, "K_map", false, s->dtype, RK_KP_TENSORMAP, "K");
    kn_sig_add(sg, "V_map", false, s->dtype, RK_KP_TENSORMAP, "V");
}

void kn_attn_hopper_tensormap_box(const rk_instance *in, const rk_kparam *kp, uint32_t *box_rows, uint32_t *box_cols,
                                  uint32_t *swizzle_bytes) {
    const rk_attention_spec *s = &in->u.attn;
    /* Q: the block's rows; K and V: one key block; 64 columns of D per box under the 128-byte swizzle */
    *box_rows = strcmp(kp->name, "Q_map") == 0 ? s->block_m : s->block_n;
    *box_cols = KN_AH_BOX;
    *swizzle_bytes = 128;
}
