/* rocke — the unified attention kernel, private to its builder files: what
 * one block knows while it runs (attention_unified_build.c, the mma.sync /
 * MFMA bodies and the epilogue) and the Hopper body of its full query
 * blocks (attention_unified_wgmma.c). Layer: kernels. */
#ifndef ROCKE_ATTENTION_UNIFIED_KERNEL_H
#define ROCKE_ATTENTION_UNIFIED_KERNEL_H

#include "attention_decode_int.h"
#include "attention_unified_int.h"

#define MAXV 256   /* accumulators / fragments of one kind per thread */
#define MAXMI 8    /* atoms along a warp's rows */

typedef struct kn_attn_ublock {
    rk_kernel *k;
    const rk_attention_spec *s;
    const kn_attn_plan *pl;
    const kn_attn_usig *ix;
    const rk_value *p;
    rk_tile_warps w;
    rk_value smem;
    rk_value b, hk, split, nsplit, G, bq;
    rk_value nb;                           /* this query block's splits: 1..nsplit by its keys */
    rk_value q0, qlen, kvlen, off, tok0;   /* the block's first token (in the sequence, in the packed rows) */
    rk_value nrows;                        /* rows inside the sequence: tokens x G */
    bool ksplit;                           /* the kernel holds the key-split body (key_split_plan) */
    kn_attn_plan pks;                      /* ksplit: one warp's share of a key block, bn / warps keys */
    rk_value dec;                          /* ksplit, i1, block uniform: every row lies in warp 0's */
    rk_value rw;                           /* the warp whose rows this warp computes: its own, warp 0 if dec */
    rk_value nrows_st;                     /* rows this warp stores: nrows; 0 for warps 1.. of a dec block */
    rk_value maxp, kstride, wl;            /* block table row length; i32 elements between keys */
    rk_value scale_l2;                     /* what S is multiplied by: scale * log2(e), or scale with softcap */
    rk_value rcap, cap_l2;                 /* softcap: 1 / cap, cap * log2(e) */
    rk_value vscale;                       /* e4m3 caches: V's scale of head hk, on 1 / l; else 1 */
    rk_value klo, khi;                     /* this split's key blocks [klo, khi) */
    rk_value d0, dlast;                    /* the first and the last row's diagonal (key position) */
    rk_tile_copy_lanes lk, lv;
    rk_value rok[MAXMI][RK_TILE_ACC_MAX_SLOTS], rdiag[MAXMI][RK_TILE_ACC_MAX_SLOTS];
    rk_value rslope[MAXMI][RK_TILE_ACC_MAX_SLOTS];   /* ALiBi: the row's slope times log2(e) */
    rk_value ccol[RK_TILE_ACC_MAX_SLOTS];
    rk_value c0, c1, fz;                   /* i32 0 and 1 of the block's entry, f32 0 of the body that runs */
    bool wg;                               /* the wgmma body's view (its loops' names differ) */
} kn_attn_ublock;

/* attention_unified_build.c, for the wgmma body: the per-slot row values
 * (diagonal, inside the sequence, ALiBi slope, column) on g->pl's lane map;
 * the scores of key block j into the exp2 domain with the mask; an e4m3
 * chunk into the dtype stage; the i64 element of block row r in a [total_q,
 * Hq, per] tensor; the epilogue from the loop's (m, l, O) pieces (one split:
 * O and LSE; several: the partials and the merge of the last to arrive). */
/* The paged cache's addressing for one key-block fill, made once per fill (the block table's row of
 * sequence b, the i32 stride between keys, the KV head's first column, the page size), and the element
 * offset of column col of a key's row: *ok = key < kvlen && valid; a key not ok reads key 0's page entry
 * (the caller masks its load). Both bodies' fills share them. */
typedef struct kn_attn_upages { rk_value trow, ks64, P64, head, Pv; } kn_attn_upages;
kn_attn_upages kn_attn_unified_pages(kn_attn_ublock *g);
rk_value kn_attn_unified_page_at(kn_attn_ublock *g, const kn_attn_upages *pg, rk_value key, rk_value col,
                                 rk_value valid, rk_value *ok);
void kn_attn_unified_row_values(kn_attn_ublock *g);
void kn_attn_unified_scores(kn_attn_ublock *g, const kn_attn_plan *pl, rk_value j, const rk_value *koff, rk_value *s);
void kn_attn_unified_fp8_chunk(kn_attn_ublock *g, uint32_t n, rk_value ptr, rk_value ok, rk_value idx, rk_value dst);
rk_value kn_attn_unified_row_at(kn_attn_ublock *g, rk_value r, uint32_t per);
void kn_attn_unified_epilogue(kn_attn_ublock *g, rk_value *res);

/* attention_unified_wgmma.c: the loop and the epilogue of a full query
 * block (more rows than one warp's) on wgmma (path = wgmma): Q and the K/V
 * stages in 128-byte-swizzled boxes filled by cp.async through the block
 * table, S = Q K^T (SS), the softmax on the accumulators, O += P V with P
 * from registers (RS). */
void kn_attn_unified_wgmma_body(kn_attn_ublock *g, const rk_target *t);

#endif
