/* rocke — the attention family, private: the plan that validation and the
 * builder share (atom, block and warp tiles, LDS operands and copies, the
 * accumulator row geometry), the signature's order and the reference.
 * Layer: kernels. */
#ifndef ROCKE_ATTENTION_INT_H
#define ROCKE_ATTENTION_INT_H

#include "gemm_int.h"

/* attention.c: knob indices (bits of `locked`) */
enum { KN_AK_DT, KN_AK_HD, KN_AK_MASK, KN_AK_LSE, KN_AK_LAYOUT, KN_AK_BM, KN_AK_BN, KN_AK_WARPS, KN_AK_STAGES,
       KN_AK_ATOM, KN_AK_WAVE, KN_AK_MODE, KN_AK_PAGE, KN_AK_ROWS, KN_AK_SPLITS, KN_AK_KV, KN_AK_PATH, KN_AK_PFPATH,
       KN_AK_SCHED, KN_AK_SINKS, KN_AK_SOFTCAP,
       KN_AK_ALIBI, KN_AK_WHOLE, KN_AK_XSOFT, KN_AK_ORDER, KN_AK__COUNT };

/* What one block does: block_m query rows of one (batch, query head), the
 * warps stacked along the rows (each wtm rows, mi atoms), the keys in
 * block_n steps through `stages` LDS buffers of K and V. */
typedef struct kn_attn_plan {
    const rk_mma_atom *atom;         /* both products: S = Q K^T and O += P V */
    uint32_t bm, bn, d, warps, wave, threads, stages;
    uint32_t wtm, mi;                /* rows per warp, atoms per warp along the rows */
    uint32_t sn, dk;                 /* S atoms along the keys; K steps of Q K^T over D */
    uint32_t on, pk;                 /* O atoms along D; K steps of P V over the keys */
    bool p_in_regs;                  /* P reaches the A operand without LDS (rk_tile_acc_to_a_in_regs) */
    bool q_in_regs;                  /* Q fragments held across the loop, else read from LDS each step */
    rk_tile_acc_rows rows;           /* which lanes and slots share a query row */
    rk_tile_operand opq, opk, opv;   /* Q [bm, D] (A), K [bn, D] (B, K inner), V [bn, D] (B, K outer) */
    rk_tile_copy cpq, cpk, cpv;
    rk_lds_layout lp;                /* a warp's P scratch: wtm x bn (LDS path) */
    uint32_t q_elems, q_base, kv_stage, v_base, p_base, p_warp;   /* LDS elements: Q and where it starts; one
                                                                   * K+V stage; V in a stage; the P scratch
                                                                   * after the stages and Q; per warp */
    uint32_t lds_elems, lds_bytes;   /* Q held in registers aliases the K/V stages (read before the loop) */
} kn_attn_plan;

/* attention_plan.c: resolve the atom, check every rule and budget (RK_ERR_INVALID names the knob, the limit
 * and the legal values), choose the LDS layouts. */
rk_status kn_attn_plan_make(const rk_attention_spec *s, const rk_target *t, kn_attn_plan *out);
/* The default atom for a dtype on a target (NULL: none). */
const rk_mma_atom *kn_attn_default_atom(const rk_target *t, rk_scalar dtype);

/* attention.c: the signature, in order; the builder and the reference read
 * parameters through these indices (-1: absent). */
typedef struct kn_attn_sig {
    int q, k, v, o, lse, cuq, cuk;
    int B, Hq, Hkv, Sq, Skv;
    int stride[4][3];                /* Q, K, V, O x (batch i64, head i64, seq i32) */
    int scale, wl, wr;
    int qmap, kmap, vmap;            /* path = wgmma: the tensor maps of Q, K, V */
} kn_attn_sig;
void kn_attn_sig_of(const rk_attention_spec *s, kn_attn_sig *out);

/* attention_build.c: what one block knows while it runs (the mma.sync /
 * MFMA kernel's and, for the fields the shared pieces read, the wgmma
 * kernel's: k, pl, s, w.lane, smem-free geometry, lengths, window, scale). */
typedef struct kn_attn_ctx {
    rk_kernel *k;
    const kn_attn_plan *pl;
    const rk_attention_spec *s;
    rk_tile_warps w;            /* w.lane: the lane the accumulator map is evaluated at */
    rk_value smem;
    rk_tile_gview gk, gv;
    rk_tile_copy_lanes lk, lv;
    rk_value m0;                /* the block's first query row */
    rk_value qlen, klen, off;   /* this sequence's lengths; off = klen - qlen */
    rk_value wl, wr;            /* window bounds (window mask) */
    rk_value row0;              /* this warp's (warpgroup's) first query row */
    rk_value wrow;              /* its first row within the block */
    rk_value scale_l2;          /* scale * log2(e), f32 */
} kn_attn_ctx;
/* The block's (batch, query head, KV head), sequence starts and the four
 * tensors' bases. */
typedef struct kn_attn_block {
    rk_value b, h, hk, qstart, kstart;
    rk_value Q, K, V, O;
} kn_attn_block;
/* Lengths, window, scale, m0 into g and the bases into blk; opens the
 * block-uniform "rows left in this sequence" branch that kn_attn_finish
 * closes. g->k, g->pl, g->s must be set. */
void kn_attn_begin(kn_attn_ctx *g, const rk_value *p, const kn_attn_sig *ix, kn_attn_block *blk);
/* The key blocks [lo, hi) (i32, block uniform) the block's rows can see. */
void kn_attn_kv_range(kn_attn_ctx *g, rk_value *lo, rk_value *hi);
/* The scores s[i * sn + jn] of key block j scaled by scale * log2(e) in
 * place, then masked (-inf) where the block needs it, into masked. */
void kn_attn_scale_mask(kn_attn_ctx *g, rk_value j, rk_value *s, rk_value *masked);
/* The mask without the scale (path=wgmma's folded softmax). */
void kn_attn_mask_scores(kn_attn_ctx *g, rk_value j, const rk_value *s, rk_value *masked);
/* O = o / l and LSE from the final m, l, o (the row geometry of g->pl);
 * the caller then closes kn_attn_begin's branch (rk_if_end). */
void kn_attn_finish(kn_attn_ctx *g, const rk_value *p, const kn_attn_sig *ix, const kn_attn_block *blk,
                    const rk_value *m, const rk_value *l, const rk_value *o);
void kn_attn_softmax_step(rk_kernel *k, const kn_attn_plan *pl, const rk_value *masked, rk_value *m, rk_value *l,
                          rk_value *o, rk_value *pv);
/* The same without O: m, l and P updated, the rescale of each row (i * nrows
 * + r) into alpha, for a caller that multiplies O later (kn_attn_rescale),
 * once its accumulators are back from an asynchronous product. */
void kn_attn_softmax_rows(rk_kernel *k, const kn_attn_plan *pl, const rk_value *masked, rk_value *m, rk_value *l,
                          rk_value *pv, rk_value *alpha);
void kn_attn_rescale(rk_kernel *k, const kn_attn_plan *pl, const rk_value *alpha, rk_value *o);
void kn_attn_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);
/* S = Q K^T of one K stage into s, and O += P V of one V stage (P from the
 * softmax's pv through rk_tile_acc_to_a): prefill's products, shared with
 * the unified mode (attention_unified_build.c). */
void kn_attn_qk(rk_kernel *k, const kn_attn_plan *pl, rk_value smem, rk_value lane, rk_value wrow, rk_value kbase,
                const rk_value *qf, rk_value *s);
void kn_attn_pv(rk_kernel *k, const kn_attn_plan *pl, rk_value smem, rk_value lane, rk_value wm, rk_value vbase,
                rk_scalar dtype, const rk_value *pv, rk_value *o);
/* The same over the keys [*key_off, *key_off + pl->bn) of a stage (key_off: i32, a multiple of the atom's
 * K; NULL: from key 0): the unified mode's key split, where each warp takes its share of a wider stage. */
void kn_attn_qk_keys(rk_kernel *k, const kn_attn_plan *pl, rk_value smem, rk_value lane, rk_value wrow,
                     rk_value kbase, const rk_value *key_off, const rk_value *qf, rk_value *s);
void kn_attn_pv_keys(rk_kernel *k, const kn_attn_plan *pl, rk_value smem, rk_value lane, rk_value wm, rk_value vbase,
                     const rk_value *key_off, rk_scalar dtype, const rk_value *pv, rk_value *o);

/* attention_reference.c */
void kn_attn_reference(const rk_problem *p, double **want, double **tol);
/* The scale's 0 default becomes 1/sqrt(D); varlen problems draw their lengths. */
void kn_attn_fix_inputs(rk_problem *p);
/* Key range [lo, hi) query i sees (bottom-right aligned masks, off = Skv - Sq); empty when lo >= hi. */
void kn_attn_visible(int mask, int64_t i, int64_t Sq, int64_t Skv, int64_t wl, int64_t wr, int64_t *lo,
                     int64_t *hi);

/* attention_decode.c: mode = decode, the family's hooks for it */
void kn_attn_decode_tune(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked);
rk_status kn_attn_decode_validate(const rk_attention_spec *s, const rk_target *t);
rk_status kn_attn_decode_check_shape(const rk_attention_spec *a, const rk_shape *s);
void kn_attn_decode_signature(const rk_attention_spec *s, rk_ksig *sg);
void kn_attn_decode_geometry(const rk_attention_spec *a, rk_launch_geom *g);
void kn_attn_decode_cost(const rk_attention_spec *a, const rk_shape *s, double *bytes, double *flops);
/* The thread geometry of a decode block: `vec` elements of D per lane (one
 * 16-byte load), `lanes` = D / vec lanes per key, `slots` = threads / lanes
 * keys in flight; the LDS bytes of the slot merge. */
#define KN_DECODE_THREADS 128u
typedef struct kn_decode_geom { uint32_t vec, lanes, slots, warps, lds_bytes; } kn_decode_geom;
kn_decode_geom kn_attn_decode_geom(const rk_attention_spec *s, const rk_target *t);

/* The decode signature, in order (-1: absent). Split-KV work buffers:
 * partial O [B, Hq, Sq, splits, D], (m, l) [B, Hq, Sq, splits, 2], one
 * arrival counter per (sequence, KV head). */
typedef struct kn_attn_dsig {
    int q, kc, vc, bt, lens, kscale, vscale, o, work_o, work_ml, arrivals;
    int B, Hq, Hkv, Sq, Skv;
    int scale, wl, wr;
    int nsplit;                    /* num_splits (kv_splits > 1): the splits this batch uses */
} kn_attn_dsig;
void kn_attn_decode_sig_of(const rk_attention_spec *s, kn_attn_dsig *out);
/* The caches' element type (dtype, or the fp8 kind). */
rk_scalar kn_attn_decode_kv_type(const rk_attention_spec *s);

/* The atom path (kv_path, kn_attn_decode_atoms): the block's warps split
 * into nrg row groups of wtm rows (kv_rows padded to the atom's M) and nkg
 * key groups, each key group taking every nkg-th bn-key piece; `pl` is one
 * warp's prefill plan (block_m = wtm, block_n = bn) for the operands, the
 * softmax rows and the P scratch. LDS: `stages` rings of the key groups' K
 * and V stages, the warps' P scratch and the row groups' Q tiles (dtype
 * elements; Q read into registers before the loop shares the stages), then
 * the key groups' merge (f32). */
typedef struct kn_decode_atom {
    kn_attn_plan pl;
    uint32_t nrg, nkg, wtm, bn;
    uint32_t kv_elems, p_base, lds_elems, merge_bytes;
    uint32_t stages, q_base;         /* stages >= 2: cp.async ring (16-bit caches); Q tiles at q_base */
} kn_decode_atom;
bool kn_attn_decode_atoms(const rk_attention_spec *s);
/* The knob spelling of schedule s (attention.c). */
const char *kn_attn_sched_name(int s);
rk_status kn_attn_decode_atom_plan(const rk_attention_spec *s, const rk_target *t, kn_decode_atom *out);
rk_status kn_attn_decode_atom_validate(const rk_attention_spec *s, const rk_target *t);

/* attention_decode_build.c */
void kn_attn_decode_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);

/* attention_decode_reference.c: the reference over the gathered cache, the
 * lengths and block table fill, the input checks. */
void kn_attn_decode_reference(const rk_problem *p, double **want, double **tol);
void kn_attn_decode_fix_inputs(rk_problem *p);
rk_status kn_attn_decode_check_inputs(const rk_problem *p);
/* The batch's split count from its lengths and t's compute units (rk_problem_attention_splits). */
rk_status kn_attn_decode_splits(rk_problem *p, const rk_target *t, uint32_t *splits);
/* The first `used` block-table entries of sequence b (rows of maxp) point inside a cache of `pages` pages;
 * else a message naming who, the sequence and the entry. */
rk_status kn_attn_check_pages(const char *who, const rk_host_buf *bt, uint64_t b, uint64_t maxp, uint64_t used,
                              uint64_t pages);
/* Cost at the problem's context lengths: the keys each (sequence, KV head) reads. */
void kn_attn_decode_problem_cost(const rk_problem *p, double *bytes, double *flops);

/* Layout strings of the paged caches and block tables (page size p), the split counts the signature
 * tables list, and log2 of a power of two (their index): shared by decode and unified. */
#define KN_ATTN_PAGED(p) "B,Skv/" #p "," #p ",Hkv,D"
#define KN_ATTN_TABLE(p) "B,Skv/" #p
#define KN_ATTN_SPLITS(X) X(2) X(4) X(8) X(16) X(32) X(64)
/* unified split-KV: a (query block, KV head) takes one split per this many keys it reads (1..num_splits) */
#define KN_ATTN_SPLIT_KEYS 256u
static inline int kn_attn_log2(uint32_t x) {
    int l = 0;
    while (x > 1) x >>= 1, l++;
    return l;
}

#endif
