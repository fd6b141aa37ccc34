/* rocke — the attention family's Hopper path (path = wgmma, sm_90a),
 * private: the plan (warpgroups, TMA boxes, shared-memory stages, the
 * accumulator geometry the shared softmax and epilogue read), the tensor
 * maps of the signature, the kernel. Layer: kernels. */
#ifndef ROCKE_ATTENTION_HOPPER_H
#define ROCKE_ATTENTION_HOPPER_H

#include "attention_int.h"
#include "rocke/tile_hopper.h"

/* Columns of one TMA box: a 128-byte swizzled row of 16-bit elements. */
enum { KN_AH_BOX = 64 };
/* The largest block_n (the plan's limit) and the P fragments it makes
 * (one per k16 slice of P V): the size of every P array. */
enum { KN_AH_BN_MAX = 176, KN_AH_PF_MAX = KN_AH_BN_MAX / 16 };

/* pl is the view of the block that attention_build.c's shared pieces read:
 * the m64n8k16 warpgroup atom (its accumulator map is the m64nNk16 one
 * every 8 columns), mi = 1 (64 rows per warpgroup), sn = bn / 8 S pieces,
 * on = D / 8 O pieces, the row geometry. */
typedef struct kn_attn_hplan {
    kn_attn_plan pl;
    uint32_t wgs;                  /* consumer warpgroups: block_m / 64 */
    uint32_t chunks;               /* D / 64 boxes across a row */
    uint32_t q_elems, kv_elems;    /* elements of the Q tile, of one K (or V) stage */
    uint32_t lds_bytes;            /* Q, the K and V stages, the barriers */
    bool ws;                       /* a producer warpgroup 0 in front of the consumers (ws, overlap, pingpong) */
    bool overlap;                  /* softmax of block j under P V of block j - 1 (overlap, pingpong) */
    bool pingpong;                 /* the consumers take turns to issue their products (named barriers) */
    uint32_t regs;                 /* ws: the consumers' setmaxnreg.inc; plain: the launch's share per thread */
} kn_attn_hplan;

/* ws: the producer warpgroup's setmaxnreg.dec. */
enum { KN_AH_PRODUCER_REGS = 24 };
/* Registers a consumer thread keeps beside O, S and P (the plan's check). */
enum { KN_AH_REG_REST = 32 };

/* Whether the spec builds the wgmma kernel (path = wgmma; the heuristic
 * resolves auto). */
bool kn_attn_hopper(const rk_attention_spec *s);
/* Check a path = wgmma spec against target t (sm_90a, prefill,
 * f16/bf16, block_m 64, 128 or 192 with warps = block_m / 16, block_n a
 * multiple of 16 up to 176, 2..3 stages, registers and shared memory) and fill the
 * plan; RK_ERR_INVALID names the knob, the limit and path=mma. */
rk_status kn_attn_hopper_plan(const rk_attention_spec *s, const rk_target *t, kn_attn_hplan *out);
/* The heuristic's tiles for path = wgmma (unless locked: KN_AK_* bits). */
void kn_attn_hopper_tune(rk_attention_spec *a, uint64_t locked);
/* Q_map, K_map, V_map after the other entries. */
void kn_attn_hopper_signature(const rk_attention_spec *s, rk_ksig *sg);
void kn_attn_hopper_tensormap_box(const rk_instance *in, const rk_kparam *kp, uint32_t *box_rows, uint32_t *box_cols,
                                  uint32_t *swizzle_bytes);
/* The 2-D view of Q, K or V that entry kp's map takes, from the problem's
 * strides (the family's tensormap_view hook); refuses strides TMA or the
 * kernel's coordinates cannot follow, naming the stride. */
rk_status kn_attn_hopper_tensormap_view(const rk_problem *p, const rk_kparam *kp, rk_problem_tmap *out);
/* attention_hopper.c */
/* S = Q K^T of one key block for a warpgroup of 64 rows: D / 16 chained
 * wgmma m64n{bn}k16, both operands K-major in 128-byte-swizzled boxes of
 * 64 columns (Q's box c at qbase + c * bm * 64 elements of sq, K's at kbase
 * + c * bn * 64 of sk), committed, not waited for. */
rk_value kn_attn_hopper_qk(rk_kernel *k, const kn_attn_plan *pl, const char *dt, rk_value sq, rk_value qbase,
                           rk_value sk, rk_value kbase);
/* O += P V: bn / 16 wgmma_rs with the P fragments pf as register A and V
 * [bn keys, D] from vbase of sv an N-major B (boxes bn * 128 bytes apart),
 * committed, not waited for. */
rk_value kn_attn_hopper_pv(rk_kernel *k, const kn_attn_plan *pl, const char *dt, rk_value sv, rk_value vbase,
                           const rk_value *pf, rk_value o);
void kn_attn_hopper_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);
/* The m64nNk16 accumulator v as n / 8 pieces of the m64n8k16 atom (4 f32 each), and back. */
void kn_attn_hopper_split(rk_kernel *k, rk_value v, uint32_t pieces, rk_value *out);
rk_value kn_attn_hopper_join(rk_kernel *k, const rk_value *pieces, uint32_t n);
/* attention_hopper_softmax.c */
/* Key block j's scores sacc (the m64n{bn} accumulator of g->pl) through the
 * mask and the online softmax without O: m, l (per row group) updated, P as
 * bn / 16 register-A fragments into pf, the rows' rescale of O into alpha.
 * The folded softmax (a block-uniform branch on scale > 0) unless the spec's
 * exact_softmax; either way g's mask and key tail. */
void kn_attn_hopper_probs(kn_attn_ctx *g, rk_value j, rk_value sacc, rk_value *m, rk_value *l, rk_value *pf,
                          rk_value *alpha);

#endif
