/* rocke — attention's unified mode, private: the signature of the kernel
 * that serves a mixed batch of prefill chunks and decodes over one paged KV
 * cache, its block plan, and the host side (reference, inputs, checks, the
 * split choice). Layer: kernels. */
#ifndef ROCKE_ATTENTION_UNIFIED_INT_H
#define ROCKE_ATTENTION_UNIFIED_INT_H

#include "attention_int.h"

/* The unified signature, in order (-1: absent). */
typedef struct kn_attn_usig {
    int q, kc, vc, bt, qstart, kvlens, kscale, vscale, sinks, slopes, o, lse, work_o, work_ml, arrivals;
    int B, Hq, Hkv, Sq, Skv, scale, nsplit, cap, wl;
} kn_attn_usig;
void kn_attn_unified_sig_of(const rk_attention_spec *s, kn_attn_usig *out);

/* attention_unified.c: the family's hooks for mode = unified */
void kn_attn_unified_tune(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked);
rk_status kn_attn_unified_validate(const rk_attention_spec *s, const rk_target *t);
rk_status kn_attn_unified_check_shape(const rk_attention_spec *a, const rk_shape *s);
void kn_attn_unified_signature(const rk_attention_spec *s, rk_ksig *sg);
void kn_attn_unified_geometry(const rk_attention_spec *a, rk_launch_geom *g);
void kn_attn_unified_cost(const rk_attention_spec *a, const rk_shape *s, double *bytes, double *flops);
/* One block's plan: the prefill plan of block_m rows (query tokens x the
 * query heads of one KV head), block_n keys a step (a divisor of the page). */
rk_status kn_attn_unified_plan(const rk_attention_spec *s, const rk_target *t, kn_attn_plan *out);

/* attention_unified_wgmma.c: the check of path = wgmma's body for full
 * query blocks (sm_90a, block_m 64 on 4 warps, 2..3 stages, prefill's
 * Hopper rules on the tiles); *elems: the shared-memory elements it uses
 * (Q and the K/V stages, from a 1024-byte aligned base). */
rk_status kn_attn_unified_wgmma_check(const rk_attention_spec *s, const rk_target *t, uint32_t *elems);

/* attention_unified_choice.c: the row variants of a build without --block-m / --warps (block_m 16 on one
 * warp beside in's 64; *general = in), 0 when none applies. */
uint32_t kn_attn_unified_variants(const rk_instance *in, const rk_target *t, uint64_t locked, rk_instance *general,
                                  rk_variant *out, uint32_t max);

/* attention_unified_build.c */
/* The kernel of s splits a decode's key blocks across its warps (a body beside the rows' own; whole_keys: not). */
bool kn_attn_unified_key_splits(const rk_attention_spec *s, const rk_target *t);
void kn_attn_unified_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);

/* attention_unified_reference.c */
void kn_attn_unified_reference(const rk_problem *p, double **want, double **tol);
void kn_attn_unified_fix_inputs(rk_problem *p);
rk_status kn_attn_unified_check_inputs(const rk_problem *p);
void kn_attn_unified_problem_cost(const rk_problem *p, double *bytes, double *flops);
/* Set the batch: n = B sequences of lq[b] new query tokens over lk[b] keys
 * (the context including them); checks them against the shape. */
rk_status kn_attn_unified_set_lengths(rk_problem *p, const uint64_t *lq, const uint64_t *lk, uint32_t n);
/* Key j is visible to query token i (of q_len) of a sequence of kv_len keys:
 * bottom-right causal, and within `left` keys of the diagonal when left >= 0. */
bool kn_attn_unified_sees(int64_t i, int64_t q_len, int64_t kv_len, int64_t left, int64_t j);

#endif
