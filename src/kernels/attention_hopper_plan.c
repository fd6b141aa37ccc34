/* rocke — the attention family's Hopper path (path = wgmma), its rules: the
 * spec a TMA + wgmma block can serve (messages name the knob, the limit and
 * path=mma, which takes the rest), the heuristic's tiles, the tensor maps of
 * the signature and their boxes. Layer: kernels. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
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
    if (p->bn % 16 || p->bn > KN_AH_BN_MAX)
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
    /* two consumer warpgroups of 64 rows; 128 keys a step, 64 at D = 256 (registers). Causal D 64: one
     * warpgroup a block, measured on the H200 (bench/RESULTS.md, session 16, TFLOP/s against 128 rows):
     * B1 H8 S8191 305.7 / 262.1, B4 H8 S8191 384.9 / 370.7, B8 H16 S2048 325.1 / 313.4, B2 H16 S4096
     * 329.1 / 308.0 (the shorter blocks even out the causal triangle); not causal it gains 1% at
     * B8 H16 S2048 and loses 6% at B1 H32 S1000, and D 128 loses 40% (stays at 128 rows) */
    bool pingpong = locked >> KN_AK_SCHED & 1 && a->schedule == RK_ATTN_SCHED_PINGPONG;   /* two consumers */
    bool d64_causal = a->head_dim == 64 && a->mask == RK_ATTN_MASK_CAUSAL && !pingpong;
    if (!(locked >> KN_AK_BM & 1)) a->block_m = d64_causal ? 64 : 128;
    if (!(locked >> KN_AK_BN & 1)) a->block_n = a->head_dim == 256 ? 64 : 128;
    if (!(locked >> KN_AK_WARPS & 1)) a->warps = a->block_m / 16;
    /* measured on the H200 (bench/RESULTS.md, session 6): at D 128 pingpong with 3 stages ahead of ws
     * (573 against 513 TFLOP/s, causal 525 / 476; pingpong on 2 stages 431: the turns need the deeper
     * ring), plain at D 64 (401; pingpong 260, 383 with block_m 192 and 3 stages), ws at D 256
     * (session 5; pingpong not measured there) */
    bool d128 = a->head_dim == 128 && a->block_m == 128 && a->block_n <= 128;
    if (!(locked >> KN_AK_STAGES & 1)) a->stages = d128 ? 3 : 2;
    if (!(locked >> KN_AK_SCHED & 1))
        a->schedule = a->head_dim <= 64 ? RK_ATTN_SCHED_PLAIN : d128 ? RK_ATTN_SCHED_PINGPONG : RK_ATTN_SCHED_WS;
    /* the folded softmax (ptxas, CUDA 13) except where registers are tight: plain at D 64 gets 128 registers
     * with the shared softmax (two blocks of 256 threads per SM), 133 with the folded one (its scale > 0
     * branch) and 80 bytes of spill when held to 128; block_m 192 (three consumers at 160) spills 28 bytes */
    if (!(locked >> KN_AK_XSOFT & 1))
        a->exact_softmax = a->block_m == 192 || (a->schedule == RK_ATTN_SCHED_PLAIN && a->head_dim <= 64);
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

/* The map of Q, K or V over its buffer (docs/attention.md, "The Hopper
 * path"): rows are tokens `ss` elements apart, columns one token row's
 * elements. bhsd: cols = D, the heads' and batches' rows abutting, so token
 * s of head h of batch b is row (b * H + h) * S + s; bshd: cols = (H - 1) *
 * sh + D, row b * S + s (batches abutting), head h's D at column h * sh;
 * varlen: as bshd with the buffer's rows (cu_seqlens[b] + s). TMA's rules
 * (cuTensorMapEncodeTiled; the encoders check them again): the base
 * 16-byte aligned (allocations are), the row stride a multiple of 16 bytes
 * below 2^40 and at least a row, a box row of 64 elements = the 128-byte
 * swizzle span. The kernel's own: a head starts on a 16-byte boundary, so a
 * box never straddles two heads. Each refusal names the stride. */
rk_status kn_attn_hopper_tensormap_view(const rk_problem *p, const rk_kparam *kp, rk_problem_tmap *out) {
    const rk_attention_spec *s = &p->inst.u.attn;
    const char *tn = kp->dims;   /* "Q", "K" or "V" */
    char t = (char)tolower((unsigned char)tn[0]), n[8];
    double B = (double)rk_problem_dim(p, "B"), D = (double)rk_problem_dim(p, "D");
    double H = (double)rk_problem_dim(p, t == 'q' ? "Hq" : "Hkv"), S = (double)rk_problem_dim(p, t == 'q' ? "Sq" : "Skv");
    snprintf(n, sizeof n, "%c_sb", t);
    double sb = kn_scalar(p, n);
    snprintf(n, sizeof n, "%c_sh", t);
    double sh = kn_scalar(p, n);
    snprintf(n, sizeof n, "%c_ss", t);
    double ss = kn_scalar(p, n);
    double eb = rk_tile_elem_bytes(out->elem), count = (double)p->buf[out->buf].count;
#define VIEW_FAIL(...) rk_fail(RK_ERR_INVALID, "attention path=wgmma: " __VA_ARGS__)
    if (ss <= 0 || fmod(ss * eb, 16) != 0 || ss * eb >= 0x1p40)
        return VIEW_FAIL("%s's sequence stride %c_ss = %.0f elements (%.0f bytes) is the row stride of its TMA map, "
                         "which must be a positive multiple of 16 bytes (%.0f elements) below 2^40: pad the rows to "
                         "a multiple of %.0f elements", tn, t, ss, ss * eb, 16 / eb, 16 / eb);
    double rows, cols;
    if (s->layout == RK_ATTN_BHSD) {
        cols = D;
        rows = B * H * S;
        if (ss < D)
            return VIEW_FAIL("%s's rows overlap: %c_ss = %.0f elements is less than D = %.0f", tn, t, ss, D);
        if ((H > 1 && sh != S * ss) || (B > 1 && sb != H * S * ss))
            return VIEW_FAIL("layout bhsd reads %s as one TMA map of B * H * S token rows, so its heads' and batches' "
                             "rows must abut: %c_sh = %.0f must be S * %c_ss = %.0f and %c_sb = %.0f must be H * S * "
                             "%c_ss = %.0f (path=mma takes any strides)", tn, t, sh, t, S * ss, t, sb, t,
                             H * S * ss);
    } else {
        cols = (H - 1) * sh + D;
        if (sh < 0 || fmod(sh * eb, 16) != 0)
            return VIEW_FAIL("%s's head stride %c_sh = %.0f elements must be a multiple of 16 bytes (%.0f elements): "
                             "each head's D starts a TMA box column (path=mma takes other head strides)", tn, t, sh,
                             16 / eb);
        if (cols > ss)
            return VIEW_FAIL("%s's heads do not fit one token row: (H - 1) * %c_sh + D = %.0f elements, but %c_ss = "
                             "%.0f", tn, t, cols, t, ss);
        if (s->layout == RK_ATTN_BSHD) {
            rows = B * S;
            if (B > 1 && sb != S * ss)
                return VIEW_FAIL("layout bshd reads %s as one TMA map of B * S token rows, so its batches' rows must "
                                 "abut: %c_sb = %.0f must be S * %c_ss = %.0f (path=mma takes any batch stride)", tn,
                                 t, sb, t, S * ss);
        } else {
            rows = count >= cols ? floor((count - cols) / ss) + 1 : 0;
        }
    }
    if (rows < 1 || (rows - 1) * ss + cols > count)
        return VIEW_FAIL("%s's buffer holds %.0f elements, but its map of %.0f rows %.0f apart needs %.0f", tn, count,
                         rows, ss, (rows - 1) * ss + cols);
#undef VIEW_FAIL
    out->rows = (uint64_t)rows;
    out->cols = (uint64_t)cols;
    out->row_stride_bytes = (uint64_t)(ss * eb);
    return RK_OK;
}
