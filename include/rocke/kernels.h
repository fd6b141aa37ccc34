/* rocke — kernel families: elementwise, row reduce, softmax, layernorm,
 * rmsnorm and 2-D transpose. Each family declares in its table its knobs, its
 * named problem dimensions and its typed scalar parameters; the generic
 * rk_instance API validates (naming the field and its legal values), names,
 * tunes, sizes the grid and builds any family from those tables (CLI,
 * manifests) for an N-dimensional rk_shape.
 * Host references (double) and random problems for verification live here too.
 * Layer: kernels (uses tile, ir, target). See docs/kernels.md. */
#ifndef ROCKE_KERNELS_H
#define ROCKE_KERNELS_H

#include "rocke/ir.h"
#include "rocke/target.h"
#include "rocke/tile.h"
#include "rocke/tile_epilogue.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The built-in families; families registered at run time (kn_family_register)
 * take ids from RK_FAMILY__COUNT up, below RK_FAMILY_MAX. */
typedef enum rk_family_id {
    RK_FAMILY_ELEMENTWISE = 0, RK_FAMILY_REDUCE, RK_FAMILY_SOFTMAX, RK_FAMILY_LAYERNORM,
    RK_FAMILY_RMSNORM, RK_FAMILY_TRANSPOSE, RK_FAMILY_GEMM, RK_FAMILY_BATCHED_GEMM,
    RK_FAMILY_ADD_RMSNORM_QUANT, RK_FAMILY_ROPE, RK_FAMILY_TOPK_SOFTMAX, RK_FAMILY_PERMUTE,
    RK_FAMILY_GROUPED_GEMM, RK_FAMILY_CONV, RK_FAMILY_CONV3D, RK_FAMILY_ATTENTION, RK_FAMILY_KV_APPEND,
    RK_FAMILY__COUNT
} rk_family_id;
#define RK_FAMILY_MAX 32

/* ---- per-family specs ------------------------------------------------------ */
/* Row kernels ([M, N] row-major, one row per `block_size / rows_per_block`
 * threads). chunks > 0: the row is held in registers, chunks vectors of vec
 * elements per thread, valid for N <= block_size/rows_per_block * vec * chunks
 * (one read of every input byte); chunks == 0: a runtime loop over the row
 * (any N) with `unroll` vector loads in flight per thread. */
/* direct: each thread reads and writes its row's chunks in global memory
 * (split views at odd rows); span: the block's consecutive rows, one
 * contiguous span of the packed [M, N] tensor, go through LDS with aligned
 * 16-byte accesses (only the span's first and last vector partial). */
typedef enum rk_row_stage { RK_STAGE_DIRECT = 0, RK_STAGE_SPAN = 1, RK_STAGE_AUTO = 2 } rk_row_stage;

typedef struct rk_row_knobs {
    uint32_t wave;            /* target wave/warp size: 64 (CDNA) or 32 (NVIDIA) */
    uint32_t block_size;      /* threads: 32..1024, power of two */
    uint32_t vec;             /* elements per vector access: 1, 2, 4, 8 (<= 16 bytes) */
    uint32_t rows_per_block;  /* power of two dividing block_size */
    uint32_t chunks;          /* 0 (looped) or 1..32 vectors per thread */
    uint32_t unroll;          /* looped path: 1, 2, 4, 8 */
    rk_tail_mode tail;        /* masked (NVIDIA default) or buffer (AMD default) */
    uint32_t min_blocks;      /* occupancy hint: resident blocks per SM the registers must allow
                               * (NVIDIA .minnctapersm; AMD waves_per_eu); 0: no hint */
    bool split;               /* split views: rows start at any element (odd N) with aligned
                               * vector bodies, a scalar head and tail (rk_tile_row_view_split) */
    uint32_t slices;          /* blocks per row (grid y), 1..16: >1 spreads a long row over several
                               * blocks merging their statistics through a Work buffer
                               * (looped rows, one row per block; docs/kernels.md) */
    rk_row_stage stage;       /* how a block's rows reach the threads: direct (row views) or span
                               * (the block's rows staged through LDS as one aligned span) */
} rk_row_knobs;

typedef enum rk_ew_op {
    RK_EW_ADD = 0, RK_EW_SUB, RK_EW_MUL, RK_EW_DIV, RK_EW_MAX, RK_EW_MIN,       /* binary */
    RK_EW_COPY, RK_EW_NEG, RK_EW_ABS, RK_EW_RELU, RK_EW_SILU, RK_EW_GELU_TANH, RK_EW_EXP2,
    RK_EW__COUNT
} rk_ew_op;
const char *rk_ew_op_name(rk_ew_op op);
bool rk_ew_op_is_binary(rk_ew_op op);

typedef struct rk_elementwise_spec {
    rk_ew_op op;
    rk_scalar dtype, out_dtype;    /* f16, bf16, f32 */
    uint32_t block_size;           /* 64..1024 */
    uint32_t vec;                  /* 1, 2, 4, 8 (<= 16 bytes of dtype and out_dtype) */
    uint32_t unroll;               /* vectors per thread per block tile: 1, 2, 4, 8 */
    rk_tail_mode tail;
} rk_elementwise_spec;

typedef enum rk_reduce_op { RK_REDUCE_SUM = 0, RK_REDUCE_MAX, RK_REDUCE_MEAN, RK_REDUCE__COUNT } rk_reduce_op;
const char *rk_reduce_op_name(rk_reduce_op op);

typedef struct rk_reduce_spec {
    rk_reduce_op op;
    rk_scalar dtype;
    rk_scalar out_dtype;           /* default: dtype (torch parity); f32 keeps full precision */
    rk_row_knobs k;
} rk_reduce_spec;

/* keep_exps (cached rows): each exp is computed once and kept in f32
 * registers until the output is scaled; otherwise the row stays packed and
 * the output phase computes the exps again (fewer registers, more SFU work). */
typedef struct rk_softmax_spec {
    rk_scalar dtype, out_dtype;
    rk_row_knobs k;
    bool keep_exps;
} rk_softmax_spec;

/* LayerNorm: y = (h - mean) * rstd * gamma + beta; RMSNorm: y = h * rstd * gamma,
 * rstd = 1/sqrt(var + eps) (rms: mean(h^2) + eps), h = x, or with `residual`
 * h = round(x + r), which is also written out (H). save_stats writes f32 per-row
 * mean and rstd (rms: rstd). */
typedef struct rk_norm_spec {
    bool rms;
    rk_scalar dtype, out_dtype;
    bool residual, save_stats;
    rk_row_knobs k;
} rk_norm_spec;

typedef struct rk_transpose_spec {
    rk_scalar dtype;
    uint32_t tile_m, tile_n;       /* 16..128, powers of two */
    uint32_t vec;                  /* 1, 2, 4, 8 (<= 16 bytes) */
    uint32_t block_size;           /* 64..1024 */
    uint32_t lds_pad;              /* elements of padding per LDS row (0..16) */
    bool split;                    /* split sub-row views: aligned vectors at any M, N and base
                                    * (docs/kernels.md, Transpose) */
    bool m_fast;                   /* transpose: consecutive blocks walk down M (the tiles of one
                                    * Y row), not along N; permute ignores it */
} rk_transpose_spec;

/* Fused serving ops (docs/kernels.md, "Fused ops").
 * add_rmsnorm_quant: h = round(x + r) written back to R, y = rmsnorm(h) * gamma
 * in f32, then per-row dynamic quantization: scale = amax(|y|) / qmax (f32,
 * written out), q = saturate(round_nearest_even(y * (qmax / amax))) in qtype
 * (0 for an all-zero row). Looped rows: the row knobs except chunks. */
typedef enum rk_quant_type { RK_QUANT_FP8E4M3 = 0, RK_QUANT_FP8E4M3FNUZ, RK_QUANT_INT8, RK_QUANT__COUNT } rk_quant_type;
typedef struct rk_add_rmsnorm_quant_spec {
    rk_scalar dtype;               /* x, r, gamma, h: f16, bf16, f32 */
    rk_quant_type qtype;           /* OCP e4m3 (gfx950, NVIDIA), FNUZ e4m3 (gfx942), int8 (any) */
    rk_row_knobs k;                /* chunks is always 0 */
} rk_add_rmsnorm_quant_spec;

/* rope: rotary embedding in place on Q [tokens, q_heads, head_dim] and K
 * [tokens, kv_heads, head_dim] over the first 2*rot_half elements of each
 * head; cos/sin from [max_pos, rot_half] caches at the token's position. */
typedef enum rk_rope_style { RK_ROPE_NEOX = 0, RK_ROPE_GPTJ, RK_ROPE__COUNT } rk_rope_style;
typedef struct rk_rope_spec {
    rk_scalar dtype, cache_dtype;
    rk_rope_style style;           /* neox: pairs (i, i + rot_half); gptj: pairs (2i, 2i + 1) */
    uint32_t block_size;           /* 64..1024 */
    uint32_t pairs;                /* rotation pairs per thread: 1, 2, 4, 8 */
} rk_rope_spec;

/* topk_softmax: MoE routing over [tokens, experts] logits: softmax per row,
 * the k largest (ties: lower expert id first) as f32 weights (renormalised to
 * sum 1 when `renormalize`) and i32 expert ids, [tokens, k]. */
typedef struct rk_topk_softmax_spec {
    rk_scalar dtype;
    bool renormalize;
    uint32_t wave;                 /* the target's wave size */
    uint32_t block_size;           /* 32..1024 */
    uint32_t threads_per_row;      /* 1..wave, power of two */
    uint32_t chunks;               /* logits a lane holds in registers (0: every pass reads the row) */
} rk_topk_softmax_spec;

/* GEMM: C = epilogue(A * B) with A [M, K] and B [K, N], f32 accumulation.
 * layout: A row-major ([M, K] in memory) or column-major ([K, M]), then B
 * row-major ([K, N]) or column-major ([N, K]): rr, rc, cr, cc. The block
 * computes a tile_m x tile_n tile with warp_m x warp_n warps, atom by atom,
 * K in steps of tile_k through `stages` LDS buffers (async copies from 2 on);
 * vec_a / vec_b elements per global access of A / B along their contiguous
 * dimension, whose extent and leading dimension must be multiples of it. */
typedef enum rk_gemm_layout { RK_GEMM_RR = 0, RK_GEMM_RC, RK_GEMM_CR, RK_GEMM_CC, RK_GEMM__COUNT } rk_gemm_layout;
/* Split-K: how the split_k partial products meet. WORKSPACE: each split
 * stores an f32 slice into the Work parameter, the last split of a tile to
 * arrive sums the slices in split order (deterministic) and applies the
 * epilogue; ATOMIC: f32 atomic adds into a zeroed f32 C (no epilogue chain). */
typedef enum rk_gemm_split_reduce { RK_GEMM_SPLIT_WORKSPACE = 0, RK_GEMM_SPLIT_ATOMIC } rk_gemm_split_reduce;
/* The main loop: mma.sync / MFMA warp atoms with cp.async copies, (sm_90a)
 * TMA boxes on mbarriers feeding wgmma (docs/gemm.md, "The Hopper path"), or
 * (NVIDIA, layout rc, decode) mma.sync fragments loaded straight from global
 * memory in 16-byte pieces, no LDS ("The weight-streaming path"). */
typedef enum rk_gemm_path {
    RK_GEMM_PATH_MMA = 0, RK_GEMM_PATH_WGMMA, RK_GEMM_PATH_STREAM, RK_GEMM_PATH__COUNT
} rk_gemm_path;
/* How C leaves the block: DIRECT stores each accumulator where the atom's
 * lane map holds it; CSHUFFLE stages the block tile in LDS (f32) and stores
 * whole 16-byte row chunks (docs/gemm.md, "The C-shuffle epilogue"); TMA
 * (path=wgmma) stages each warpgroup's 64 rows in out_dtype in shared
 * memory and stores them with one TMA box (C_map). */
typedef enum rk_gemm_epilogue {
    RK_GEMM_EPI_DIRECT = 0, RK_GEMM_EPI_CSHUFFLE, RK_GEMM_EPI_TMA, RK_GEMM_EPI__COUNT
} rk_gemm_epilogue;
/* Who does what on path=wgmma: PLAIN, every warpgroup consumes and thread 0
 * refills a stage after a block barrier; WS, a producer warpgroup issues
 * TMA and the consumer warpgroups release stages on "empty" mbarriers, with
 * setmaxnreg moving registers to the consumers; PERSISTENT, WS over a fixed
 * grid of `blocks` blocks that walk the tiles in grouped-M order; PINGPONG,
 * PERSISTENT with two consumer warpgroups on alternate tiles (tile M 64),
 * taking turns at the main loop so one's epilogue overlaps the other's MMA. */
typedef enum rk_gemm_schedule {
    RK_GEMM_SCHED_PLAIN = 0, RK_GEMM_SCHED_WS, RK_GEMM_SCHED_PERSISTENT, RK_GEMM_SCHED_PINGPONG, RK_GEMM_SCHED__COUNT
} rk_gemm_schedule;
/* fp8 inputs (path=wgmma): NONE, C = A·B; TENSOR, one f32 per operand (Sa,
 * Sb [1]) multiplied in the epilogue; BLOCK, DeepSeek-style per-128 scales
 * (Sa [M, K/128], Sb [N/128, K/128], rounded up): each 128-deep K block is
 * accumulated alone and added as acc += block * Sa[m, kb] * Sb[n/128, kb]. */
typedef enum rk_gemm_scale { RK_GEMM_SCALE_NONE = 0, RK_GEMM_SCALE_TENSOR, RK_GEMM_SCALE_BLOCK, RK_GEMM_SCALE__COUNT } rk_gemm_scale;
/* scale=block on path=wgmma, how a block's accumulators reach the sum:
 * OVERLAP, two sets of block accumulators, so block b+1's wgmmas run while
 * block b (retired by wgmma.wait_group 1) is promoted with scales loaded
 * when it was issued; SERIAL, one set, each block retired by wait_group 0
 * and promoted before the next is issued (session 5's schedule). */
typedef enum rk_gemm_promote { RK_GEMM_PROMOTE_OVERLAP = 0, RK_GEMM_PROMOTE_SERIAL, RK_GEMM_PROMOTE__COUNT } rk_gemm_promote;
/* path=wgmma, schedule=persistent: operands staged by the kernel itself into
 * a padded copy in a workspace (row stride rounded up to 8 elements, so TMA's
 * 16-byte rule holds) before the main loop reads them through tensor maps:
 * none, A, B or both (docs/gemm.md, "Odd leading dimensions on the wgmma path"). */
typedef enum rk_gemm_pad { RK_GEMM_PAD_NONE = 0, RK_GEMM_PAD_A, RK_GEMM_PAD_B, RK_GEMM_PAD_AB, RK_GEMM_PAD__COUNT } rk_gemm_pad;
typedef struct rk_gemm_spec {
    rk_gemm_layout layout;
    rk_scalar dtype, out_dtype;    /* f16, bf16, e4m3 or e5m2 (wgmma) in; f16, bf16 or f32 out */
    uint32_t tile[3];              /* M, N, K */
    uint32_t warps[2];             /* M, N */
    int atom;                      /* rk_atom_id; RK_ATOM_NONE: the target's default for dtype */
    uint32_t stages;               /* 1..6 */
    uint32_t vec_a, vec_b;         /* 1, 2, 4, 8 */
    uint32_t group_m;              /* grouped-M block order (1: row by row) */
    uint32_t wave;                 /* the target's wave / warp size (32 NVIDIA, 64 CDNA) */
    /* split-K, grouped, C-shuffle (docs/gemm.md) */
    uint32_t split_k;              /* 1..16: K ranges over grid y */
    rk_gemm_split_reduce split_reduce;
    int epilogue;                  /* rk_gemm_epilogue */
    uint32_t xcd;                  /* AMD dies for the block-id remap (0: off) */
    rk_epi_chain fuse;             /* per-element epilogue; operands in out_dtype */
    int path;                      /* rk_gemm_path; the heuristic picks wgmma where it applies */
    int schedule;                  /* rk_gemm_schedule (path=wgmma) */
    uint32_t blocks;               /* persistent, pingpong: the grid (0: the heuristic sets the SM count) */
    int scale;                     /* rk_gemm_scale (fp8 inputs) */
    int promote;                   /* rk_gemm_promote (scale=block, path=wgmma) */
    int pad;                       /* rk_gemm_pad (path=wgmma, schedule=persistent) */
    uint32_t cluster;              /* 0: none; 2: pairs of blocks whose tiles share B read it once, multicast by
                                    * TMA (path=wgmma, schedule=plain) */
} rk_gemm_spec;

/* Convolution (conv: 2-D, conv3d: 3-D), channels-last: X [N, (D,) H, W, C],
 * weights [K, (T,) R, S, C / groups], output [N, (O,) P, Q, K], f32
 * accumulation (docs/conv.md). fwd: Y = conv(X, W); dgrad: dX from dY and W;
 * wgrad: dW from dY and X. The geometry (stride, leading and trailing pad,
 * dilation, groups) is passed to the kernel at run time: those knobs are
 * not part of the kernel name, so one binary serves every geometry. Arrays
 * are (d, h, w); pad is (d0, d1, h0, h1, w0, w1); 2-D uses h and w. */
typedef enum rk_conv_dir { RK_CONV_FWD = 0, RK_CONV_DGRAD, RK_CONV_WGRAD, RK_CONV__COUNT } rk_conv_dir;
/* igemm: implicit GEMM (im2col gathered into LDS, never materialised);
 * gemm1x1: a 1x1 filter at stride 1 without padding read as a plain GEMM;
 * direct: forward with 1..16 channels per group (depthwise), no matrix unit */
typedef enum rk_conv_algo { RK_CONV_IGEMM = 0, RK_CONV_GEMM1X1, RK_CONV_DIRECT, RK_CONV_ALGO__COUNT } rk_conv_algo;
/* How path=wgmma's operands reach shared memory: copy (the block's threads,
 * cp.async; every algo) or tma (gemm1x1 fwd and dgrad: the GEMM family's
 * Hopper kernel itself, TMA boxes on tensor maps of X, W and Y; algo igemm
 * fwd: the pixel-box kernel, 4-D TMA boxes of X per tap, conv_box.c) */
typedef enum rk_conv_load { RK_CONV_LOAD_COPY = 0, RK_CONV_LOAD_TMA, RK_CONV_LOAD__COUNT } rk_conv_load;
typedef struct rk_conv_spec {
    rk_gemm_spec g;                /* the GEMM knobs (layout follows from the direction) */
    int direction;                 /* rk_conv_dir */
    int algo;                      /* rk_conv_algo; the heuristic picks per problem */
    int load;                      /* rk_conv_load (path=wgmma) */
    uint32_t stride[3], pad[6], dilation[3], groups;
    int dw_pix, dw_cvecs;          /* algo direct, depthwise: log2 of outputs per thread + 1, of channel
                                    * vectors per block + 1 (0: off, the small-group kernel) */
    uint32_t box_p, box_q;         /* load=tma, algo igemm (fwd): the M tile as a box of tile_m / (box_p *
                                    * box_q) images x box_p output rows x box_q output columns (0: unset) */
} rk_conv_spec;

/* Attention, forward: O = softmax(scale * Q K^T + mask) V per (batch, query
 * head), KV head = query head / (Hq / Hkv), online softmax in f32, optional
 * LSE (natural log, f32). Layouts: bhsd / bshd are padded [B, H, S, D] /
 * [B, S, H, D] problems (the kernel takes batch, head and sequence strides,
 * so any such view runs); varlen packs [total, H, D] with cu_seqlens_q/k
 * (docs/attention.md). Masks are bottom-right aligned: key j is visible to
 * query i iff j <= i + Skv - Sq (causal) or i + Skv - Sq - left <= j <=
 * i + Skv - Sq + right (window; a negative bound is unbounded). */
typedef enum rk_attn_mask { RK_ATTN_MASK_NONE = 0, RK_ATTN_MASK_CAUSAL, RK_ATTN_MASK_WINDOW, RK_ATTN_MASK__COUNT } rk_attn_mask;
typedef enum rk_attn_layout { RK_ATTN_BHSD = 0, RK_ATTN_BSHD, RK_ATTN_VARLEN, RK_ATTN_LAYOUT__COUNT } rk_attn_layout;
typedef struct rk_attention_spec {
    rk_scalar dtype;               /* f16, bf16 (Q, K, V, O) */
    uint32_t head_dim;             /* 64, 128, 256 */
    int mask;                      /* rk_attn_mask */
    bool lse;                      /* write LSE */
    int layout;                    /* rk_attn_layout */
    uint32_t block_m, block_n;     /* query rows per block, keys per KV step */
    uint32_t warps;                /* warps (waves) per block, each block_m / warps query rows */
    uint32_t stages;               /* K/V LDS buffers in flight (2+: async copies) */
    int atom;                      /* rk_atom_id; RK_ATOM_NONE: the target's default */
    uint32_t wave;                 /* the target's wave / warp size */
    /* decode (mode = decode, docs/attention.md "Decode"): Sq new tokens per
     * sequence over a KV cache, one block per (split, KV head, sequence) */
    int mode;                      /* rk_attn_mode */
    uint32_t page_size;            /* tokens per KV page: 16, 32, 64, 128; 0: contiguous [B, Hkv, S, D] */
    uint32_t kv_rows;              /* query rows one block serves: (Hq / Hkv) * Sq <= kv_rows (1..64) */
    uint32_t kv_splits;            /* blocks per (sequence, KV head) over the context (1..64) */
    int kv_dtype;                  /* rk_attn_kv: the caches' element type */
    int kv_path;                   /* rk_attn_kv_path: the scores on lanes or on matrix atoms */
    int path;                      /* rk_attn_prefill_path: prefill's kernel (wgmma: sm_90a, TMA + wgmma) */
    int schedule;                  /* rk_attn_schedule (path = wgmma): who loads K and V */
    /* unified (mode = unified, docs/attention.md "Unified attention"): a
     * mixed batch of prefill chunks and decodes over one paged cache */
    bool sinks;                    /* a per-query-head f32 logit joins each row's softmax denominator */
    bool softcap;                  /* scores s -> softcap * tanh(s / softcap) (the scalar softcap) */
    bool alibi;                    /* + slope[h] * (j - i) per (query head, key j, query position i) */
    bool whole_keys;               /* no key split: a decode's block leaves warps 1.. idle (the prefill variant) */
    bool exact_softmax;            /* path = wgmma: the shared softmax (scale, mask, exp2) instead of the folded one */
    bool reverse_order;            /* blocks run last query block first, KV heads innermost */
} rk_attention_spec;
typedef enum rk_attn_mode { RK_ATTN_PREFILL = 0, RK_ATTN_DECODE, RK_ATTN_UNIFIED, RK_ATTN_MODE__COUNT } rk_attn_mode;
/* Decode caches: dtype's, or e4m3 with a per-KV-head f32 scale each for K and
 * V (OCP e4m3fn on NVIDIA and gfx950, FNUZ on gfx942: the target's own). */
typedef enum rk_attn_kv { RK_ATTN_KV_SAME = 0, RK_ATTN_KV_FP8, RK_ATTN_KV_FP8FNUZ, RK_ATTN_KV__COUNT } rk_attn_kv;
/* Decode's scores: auto (atoms from 16 rows on), lanes (VALU / CUDA cores,
 * up to 16 rows) or matrix atoms (16..64 rows, padded to the atom's M). */
/* Prefill's kernel: auto (the heuristic: wgmma on sm_90a where it applies),
 * mma (mma.sync / MFMA, every target) or wgmma (sm_90a: Q, K, V by TMA, both
 * products on warpgroup MMA; docs/attention.md "The Hopper path"). */
typedef enum rk_attn_prefill_path { RK_ATTN_PF_AUTO = 0, RK_ATTN_PF_MMA, RK_ATTN_PF_WGMMA, RK_ATTN_PF__COUNT } rk_attn_prefill_path;
/* path = wgmma: PLAIN, thread 0 of the consumers refills a stage after a
 * block barrier; WS, a producer warpgroup (setmaxnreg.dec) streams the K/V
 * fills on full/empty mbarriers while the consumers (setmaxnreg.inc) compute;
 * OVERLAP, ws with the softmax of key block j run while P V of block j - 1
 * is in flight (S of j is issued first); PINGPONG, overlap with the
 * consumer warpgroups taking turns on named barriers to issue their
 * products, so one's softmax runs under the other's (FlashAttention-3). */
typedef enum rk_attn_schedule { RK_ATTN_SCHED_PLAIN = 0, RK_ATTN_SCHED_WS, RK_ATTN_SCHED_OVERLAP,
                                RK_ATTN_SCHED_PINGPONG, RK_ATTN_SCHED__COUNT } rk_attn_schedule;
typedef enum rk_attn_kv_path { RK_ATTN_PATH_AUTO = 0, RK_ATTN_PATH_VALU, RK_ATTN_PATH_ATOM, RK_ATTN_PATH__COUNT } rk_attn_kv_path;

/* kv_append: each new token's K and V [T, Hkv, D] written into paged caches
 * [pages, page_size, Hkv, D] at slot slot_mapping[t] (i64, page * page_size
 * + offset; negative: the token is skipped); optionally rotary embedding of
 * K on the way and of Q [T, Hq, D] in place (over the whole head), and e4m3
 * caches holding x / scale with a per-KV-head f32 scale each for K and V. */
typedef enum rk_kv_rope { RK_KV_ROPE_NONE = 0, RK_KV_ROPE_NEOX, RK_KV_ROPE_GPTJ, RK_KV_ROPE__COUNT } rk_kv_rope;
typedef struct rk_kv_append_spec {
    rk_scalar dtype;               /* Q, K, V: f16, bf16, f32 */
    rk_kv_rope rope;
    int kv_dtype;                  /* rk_attn_kv: same, fp8 (OCP e4m3fn), fp8fnuz (gfx942) */
    uint32_t block_size;           /* 32..1024 */
    uint32_t vec;                  /* elements per access (rope: pairs per thread) */
} rk_kv_append_spec;

/* ---- one instance of any family --------------------------------------------- */
typedef struct rk_instance {
    rk_family_id family;
    union {
        rk_elementwise_spec ew;
        rk_reduce_spec reduce;
        rk_softmax_spec softmax;
        rk_norm_spec norm;         /* layernorm and rmsnorm */
        rk_transpose_spec transpose;  /* transpose and permute (batched) */
        rk_add_rmsnorm_quant_spec arq;
        rk_rope_spec rope;
        rk_topk_softmax_spec topk;
        rk_gemm_spec gemm;         /* gemm, batched_gemm and grouped_gemm */
        rk_conv_spec conv;         /* conv and conv3d */
        rk_attention_spec attn;
        rk_kv_append_spec kva;
        uint32_t words[32];        /* spec storage for registered families */
    } u;
} rk_instance;

const char *rk_family_name(rk_family_id f);
rk_status rk_family_parse(const char *name, rk_family_id *out);   /* message lists the families */
uint32_t rk_family_count(void);    /* built-in + registered; ids 0 .. count-1 */

/* ---- problem shapes: named dimensions, typed scalars ------------------------ */
/* A problem's extents, in the order of the family's dimension table. */
#define RK_SHAPE_MAX_DIMS 12
typedef struct rk_shape {
    uint32_t rank;
    uint64_t dim[RK_SHAPE_MAX_DIMS];
} rk_shape;

typedef struct rk_dim_decl {
    const char *name;          /* "M", "N", "K", "batch", "heads", "seq_q", "C", "H", ... */
    uint64_t def;              /* default extent (rocke build without --shape) */
    const char *help;
} rk_dim_decl;

/* Where a scalar kernel parameter's value comes from. */
typedef enum rk_scalar_src {
    RK_SC_DIM = 0,             /* equals dimension `dim` of the shape */
    RK_SC_DERIVED,             /* derive(instance, shape): strides, output sizes, products */
    RK_SC_GIVEN,               /* given by the caller (rk_problem_set_scalar, --arg), default `def` */
} rk_scalar_src;
typedef struct rk_scalar_decl {
    const char *name;          /* the signature parameter it fills: "M", "eps" */
    rk_scalar type;            /* RK_S_I32, RK_S_I64 or RK_S_F32 */
    rk_scalar_src src;
    const char *dim;           /* RK_SC_DIM */
    double (*derive)(const rk_instance *in, const rk_shape *s);   /* RK_SC_DERIVED */
    double def;                /* RK_SC_GIVEN */
    const char *help;
} rk_scalar_decl;

const rk_dim_decl *rk_family_dims(rk_family_id f, uint32_t *n);
const rk_scalar_decl *rk_family_scalars(rk_family_id f, uint32_t *n);
/* Index of dimension `name` of family f, or -1. */
int rk_family_dim_index(rk_family_id f, const char *name);
/* The family's default shape (every dimension at its `def`). */
rk_status rk_shape_default(rk_family_id f, rk_shape *out);
/* The default shape that suits instance `in` as its knobs stand (before tuning): the family's
 * default with the dimensions a knob fixes set from it (attention: D = head_dim; mode decode:
 * Sq = 1), so a build without --shape passes the instance's own shape check. */
rk_status rk_instance_default_shape(const rk_instance *in, rk_shape *out);
/* Update *s (a shape of family f) from n extents. Named (names[i] non-NULL,
 * each a dimension of f, at most once): those dimensions change; with `all`,
 * every dimension must be named. Positional (names NULL): n must equal the
 * rank, except that a rank-1 family takes the product of any number of
 * extents (elementwise: 4096,4096 = 16 Mi elements). Extents must be >= 1.
 * Errors name the dimension and list the family's. */
rk_status rk_shape_update(rk_family_id f, rk_shape *s, const char *const *names, const uint64_t *vals, uint32_t n,
                          bool all);
/* "M=4096,N=4096" (named) or "4096,4096" (named == false). */
void rk_shape_format(rk_family_id f, const rk_shape *s, bool named, char *buf, size_t n);

/* Knobs: every spec field, by name (CLI --KNOB, manifest "spec" object). */
/* U32: a uint32_t; BOOL: a bool; DTYPE: an rk_scalar; ENUM: an int indexing
 * `names`; TUPLE: `count` uint32_t written "128x128x32"; EPILOGUE: an
 * rk_epi_chain written as rk_epi_parse reads it ("bias,gelu"). */
typedef enum rk_knob_kind {
    RK_KNOB_U32, RK_KNOB_BOOL, RK_KNOB_DTYPE, RK_KNOB_ENUM, RK_KNOB_TUPLE, RK_KNOB_EPILOGUE
} rk_knob_kind;
typedef struct rk_knob {
    const char *name;           /* "block_size" (CLI: --block-size or --block_size) */
    const char *tag;            /* kernel-name prefix, "b" */
    rk_knob_kind kind;
    size_t offset;              /* into rk_instance */
    const char *const *names;   /* ENUM value names, NULL-terminated */
    const uint32_t *legal;      /* U32 legal values, 0-terminated (NULL: any); DTYPE: the legal rk_scalar
                                 * values, 0-terminated (NULL: f16, bf16, f32) */
    bool perf;                  /* a performance knob the heuristic chooses */
    const char *help;
    uint32_t count;             /* TUPLE: elements (each checked against `legal`); DTYPE: unused (`legal`
                                 * lists the types, 8-bit floats included where taken); ENUM: 1
                                 * when kernel names leave the knob out at value 0 (a knob added later:
                                 * the names of older instances stay as they were); U32: the same */
} rk_knob;
const rk_knob *rk_family_knobs(rk_family_id f, uint32_t *n);
/* "64|128|256" / "f16|bf16|f32" / "true|false" / "add|sub|..." */
void rk_knob_legal_text(const rk_knob *kb, char *buf, size_t n);
/* The same for target t (NULL: any): a dtype knob lists only the 8-bit floats t has
 * (gfx942 the FNUZ encodings e4m3fnuz/e5m2fnuz, gfx950 and NVIDIA the OCP e4m3/e5m2). */
void rk_knob_legal_text_for(const rk_knob *kb, const rk_target *t, char *buf, size_t n);
/* Does dtype knob kb take 8-bit floats? Then rk_knob_fp8_note says which target takes which:
 * "gfx942: e4m3fnuz, e5m2fnuz; gfx950, sm_80, sm_90, sm_90a: e4m3, e5m2" (from the catalog). */
bool rk_knob_has_fp8(const rk_knob *kb);
void rk_knob_fp8_note(char *buf, size_t n);

rk_status rk_instance_default(rk_family_id f, rk_instance *out);
/* Set/get a knob from/to text; unknown knobs and values fail naming the legal
 * choices. *index (may be NULL) receives the knob's index for `locked`. */
rk_status rk_instance_set(rk_instance *in, const char *knob, const char *value, uint32_t *index);
rk_status rk_instance_get(const rk_instance *in, const char *knob, char *buf, size_t n);
/* Choose the performance knobs for target t and shape s: the family's
 * heuristic, then the tuning database $ROCKE_TUNING when set (below). Knobs
 * whose index bit is set in `locked` keep their value. */
rk_status rk_instance_tune(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked);
/* ---- tuning database (docs/sweep.md): the best knobs `rocke tune` measured --------
 * tuning.json: {"format": RK_TUNING_FORMAT, "device", "driver", "rocke_version",
 * "date", "entries": [{"family", "target", "shape": {DIM: extent}, "knobs":
 * {KNOB: "value"} (every knob of the measured kernel), "kernel", "ms"}]}. */
#define RK_TUNING_FORMAT "rocke.tuning/v1"
typedef struct rk_tuning rk_tuning;
/* Read and check a database; errors name the file, the entry and the field. */
rk_status rk_tuning_load(const char *path, rk_tuning **out);
void rk_tuning_free(rk_tuning *db);
const char *rk_tuning_device(const rk_tuning *db);   /* the device it was tuned on */
uint32_t rk_tuning_count(const rk_tuning *db);       /* entries */
/* Distance between two shapes of one family: sqrt(sum over dimensions of
 * (ln a_i - ln b_i)^2), so 2x larger counts the same at any size. */
double rk_tuning_distance(const rk_shape *a, const rk_shape *b);
/* Take the performance knobs (those not in `locked`) of the entry nearest to
 * shape s among the entries of in's family and target t whose other knobs
 * (dtype, op, ...) equal in's. A database tuned on another device than
 * `device` (NULL or "": not checked) is ignored. Knobs that fail validation
 * or the shape check are not taken. *note (may be NULL) says what happened;
 * *applied (may be NULL) whether knobs were taken. */
rk_status rk_tuning_apply(const rk_tuning *db, const char *device, rk_instance *in, const rk_target *t,
                          const rk_shape *s, uint64_t locked, char *note, size_t n, bool *applied);
/* The heuristic (rk_instance_tune's first step), then database db (NULL: the
 * file $ROCKE_TUNING names, read once, for device $ROCKE_TUNING_DEVICE). */
rk_status rk_instance_tune_db(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked,
                              const rk_tuning *db, const char *device, char *note, size_t n);

/* RK_OK or RK_ERR_INVALID naming the field and its legal values. */
rk_status rk_instance_validate(const rk_instance *in, const rk_target *t);
/* Can this instance run shape s? (rank and names, every extent >= 1, row
 * capacity, 32-bit index limits). */
rk_status rk_instance_check_shape(const rk_instance *in, const rk_shape *s);

/* Shape variants of a kernel built without a shape (row families: reduce,
 * softmax, layernorm, rmsnorm; docs/kernels.md): instances tuned for a
 * shape class, each serving the shapes whose named dimensions lie in
 * [lo, hi], in the order to try them; *general (may be NULL) gets the
 * instance for every other shape (looped rows). Knobs in `locked` keep
 * in's values. Returns the count (0: the family has no variants). */
typedef struct rk_variant {
    char tag[24];                 /* "split", or "t<threads per row>c<chunks>" of a cached row: manifest.<tag>.json */
    rk_instance inst;
    uint32_t ndims;
    const char *dim[4];
    uint64_t lo[4], hi[4];
} rk_variant;
uint32_t rk_instance_variants(const rk_instance *in, const rk_target *t, uint64_t locked, rk_instance *general,
                              rk_variant *out, uint32_t max);
/* Deterministic name encoding every code-affecting field. */
rk_status rk_instance_name(const rk_instance *in, char *buf, size_t n);
/* A family's note on what instance `in` runs on target t (e.g. which code
 * path this slice gives sm_90a), "" when it has none. */
const char *rk_instance_note(const rk_instance *in, const rk_target *t);
/* Manifest "kind": "<family>_<dtype>" e.g. "softmax_bf16". */
void rk_instance_kind(const rk_instance *in, char *buf, size_t n);

/* ---- ABI ----------------------------------------------------------------------- */
/* ACCUM: an output the kernel adds into (atomics): the caller zeroes it, the
 * check compares it like OUT. WORK: device scratch the caller allocates and
 * zeroes before the first launch and never reads back; the kernel leaves it
 * ready for the next launch. TENSORMAP: a CUtensorMap by value (NVIDIA TMA)
 * over the pointer parameter named by `dims`; its box and swizzle come from
 * rk_problem_tensormap, and the launcher encodes it once the buffer has a
 * device address (rk_tensormap_encode_2d, rk_emu_tensormap_encode_2d).
 * INOUT: read and written in place (rope's Q and K); problems keep its
 * initial contents for the reference. */
typedef enum rk_kparam_role {
    RK_KP_IN = 0, RK_KP_OUT, RK_KP_SCALAR, RK_KP_ACCUM, RK_KP_WORK, RK_KP_TENSORMAP, RK_KP_INOUT
} rk_kparam_role;
typedef struct rk_kparam {
    const char *name;          /* "X", "Gamma", "M", "eps" */
    bool ptr;                  /* pointer to global `type`, else a scalar of `type` */
    rk_scalar type;            /* element type (ptr) or i32/i64/f32 */
    rk_kparam_role role;
    const char *dims;          /* pointers: the tensor's layout as family dimension names, outermost
                                * first ("M,N"; transpose's Y "N,M"), or decimal counts ("5,M,N"),
                                * or a dimension plus one ("B+1": offset arrays), or a
                                * dimension over a count, rounded up ("Skv/16": pages);
                                * its element count is their product. NULL for scalars; a
                                * tensormap: the buffer it maps */
} rk_kparam;
#define RK_KSIG_MAX 32
typedef struct rk_ksig { uint32_t n; rk_kparam p[RK_KSIG_MAX]; } rk_ksig;
rk_status rk_instance_signature(const rk_instance *in, rk_ksig *out);
/* Launch geometry for shape s (rk_instance_geometry run over s). */
void rk_instance_grid(const rk_instance *in, const rk_shape *s, uint32_t grid[3], uint32_t block[3]);
/* The launch geometry as data: the block, and the grid as a small program over
 * the shape's dimensions (ceil-divisions, products, sums), so the one rule
 * also runs where librocke does not (the launchers `rocke aot` writes carry the
 * program and the evaluator, src/kernels/geom_eval.h; docs/aot.md). */
#define RK_GEOM_MAX 96
typedef struct rk_launch_geom {
    uint64_t code[RK_GEOM_MAX];   /* op in bits 0..7, argument above */
    uint32_t n;
    uint32_t block[3];
} rk_launch_geom;
void rk_instance_geometry(const rk_instance *in, rk_launch_geom *out);
/* grid for dims[0..ndims) by g's program (block = g->block); RK_ERR_INVALID
 * when the program is malformed or reads a dimension past ndims. */
rk_status rk_launch_geom_eval(const rk_launch_geom *g, const uint64_t *dims, uint32_t ndims, uint32_t grid[3],
                              uint32_t block[3]);
/* Build the kernel for target t (validates first). */
rk_status rk_instance_build(const rk_instance *in, const rk_target *t, rk_kernel **out);
/* Bytes moved and flops for shape s (for GB/s, TFLOP/s). */
void rk_instance_cost(const rk_instance *in, const rk_shape *s, double *bytes, double *flops);

/* ---- host problems: random inputs, double references, checks -------------------- */
typedef struct rk_host_buf {
    const rk_kparam *param;
    uint64_t count;            /* elements */
    size_t bytes;
    void *data;                /* device-format bytes (f16/bf16 bits, f32) */
} rk_host_buf;

/* A scalar launch argument in its parameter's type; &value is what the
 * launcher takes. */
typedef union rk_scalar_value { int32_t i32; int64_t i64; float f32; } rk_scalar_value;

typedef struct rk_problem {
    rk_instance inst;
    rk_shape shape;
    uint64_t seed;
    rk_ksig sig;
    rk_host_buf buf[RK_KSIG_MAX];   /* one per signature entry (scalars: count 0) */
    double scalar[RK_KSIG_MAX];     /* scalar entries: the value, as the family declares it */
} rk_problem;

/* Check shape s (rk_instance_check_shape), size the host buffers from the
 * signature's layouts, compute every scalar parameter from the family's
 * declarations (a scalar the family does not declare is an error naming it)
 * and fill the inputs from `seed` (outputs are zeroed). */
rk_status rk_problem_init(rk_problem *p, const rk_instance *in, const rk_shape *s, uint64_t seed);
void rk_problem_free(rk_problem *p);
/* grouped_gemm: one problem of the group list (extents may be 0: an empty
 * group). The shape of a list is (groups, M = sum of the M_g, N = max N_g,
 * K = max K_g): group g's A rows (or columns, A column-major) and C rows
 * follow group g-1's in one [M, K] / [M, N] buffer, its B is slice g of
 * [groups, K, N] (or [groups, N, K]); docs/gemm.md, "Grouped GEMM". */
typedef struct rk_gemm_group { uint64_t m, n, k; } rk_gemm_group;
#define RK_GEMM_GROUPS_MAX 1024
/* Parse "M,N,K;M,N,K;..." into out (at most `max`); the message names the
 * bad group and what is legal. */
rk_status rk_gemm_groups_parse(const char *text, rk_gemm_group *out, uint32_t max, uint32_t *n);
/* The shape of a group list for instance `in` (checks every group against
 * the instance: vector widths, index ranges; naming the group). */
rk_status rk_problem_groups_shape(const rk_instance *in, const rk_gemm_group *g, uint32_t n, rk_shape *out);
/* rk_problem_init for a group list: the shape from rk_problem_groups_shape,
 * the problem table filled from the list. Families without a group list
 * fail naming the one that has it. */
rk_status rk_problem_init_groups(rk_problem *p, const rk_instance *in, const rk_gemm_group *g, uint32_t n,
                                 uint64_t seed);
/* Set a RK_SC_GIVEN scalar (eps); others and unknown names fail naming the
 * legal ones. */
rk_status rk_problem_set_scalar(rk_problem *p, const char *name, double value);
/* Scalar signature entry i as a launch argument in its type. */
rk_status rk_problem_scalar(const rk_problem *p, uint32_t i, rk_scalar_value *out);
/* A tensormap entry of the signature as the 2-D map to encode: the buffer
 * (signature index `buf`, element type `elem`) seen as rows x cols
 * row-major, rows row_stride_bytes apart (packed: its layout's innermost
 * dimension is cols, the product of the others rows; a family with strides
 * views it through them: attention's maps have a token per row, and a view
 * TMA cannot follow is refused naming the stride), read in box_rows x
 * box_cols boxes with a swizzle of swizzle_bytes (0, 32, 64, 128). Fails
 * naming the entry when i is not a tensormap. */
typedef struct rk_problem_tmap {
    uint32_t buf;
    rk_scalar elem;
    uint64_t rows, cols, row_stride_bytes;
    uint32_t box_rows, box_cols, swizzle_bytes;
} rk_problem_tmap;
rk_status rk_problem_tensormap(const rk_problem *p, uint32_t i, rk_problem_tmap *out);
/* Any tensormap entry as the N-D map to encode (rk_tensormap_encode_nd,
 * rk_emu_tensormap_encode_nd), every array innermost first: a 2-D entry as
 * rank 2 (dims cols, rows; its row stride), conv's pixel-box kernel's maps as
 * rank 4 with traversal strides. rk_problem_tensormap refuses the rank-4
 * entries, naming this function. */
typedef struct rk_problem_tmap_nd {
    uint32_t buf;
    rk_scalar elem;
    uint32_t rank;
    uint64_t dims[5], strides_bytes[4];
    uint32_t box[5], elem_strides[5], swizzle_bytes;
} rk_problem_tmap_nd;
rk_status rk_problem_tensormap_nd(const rk_problem *p, uint32_t i, rk_problem_tmap_nd *out);
/* attention: the window bounds (keys before / after the diagonal; negative:
 * unbounded) of a mask=window instance, and the n = B (query, key) lengths
 * of a varlen instance, each at most the shape's Sq / Skv (0 allowed: an
 * empty sequence). Other instances fail naming what the call needs. */
rk_status rk_problem_set_window(rk_problem *p, int64_t left, int64_t right);
rk_status rk_problem_set_lengths(rk_problem *p, const uint64_t *lq, const uint64_t *lk, uint32_t n);
/* attention prefill: Q, K, V and O as strided views whose token rows are
 * `pad` elements (0..4096) longer than the layout's packed rows, e.g. the
 * q.transpose(1, 2) view of a [B, S, H * D + pad] projection (bhsd: rows of
 * D + pad): the stride scalars grow, the buffers are re-laid with the same
 * elements, the inputs' padding is NaN (a kernel that read it would show it
 * in O) and the outputs' zero (a kernel must not write it). */
rk_status rk_problem_set_row_padding(rk_problem *p, uint32_t pad);
/* Extent of dimension `name` (0 when the family has none). */
uint64_t rk_problem_dim(const rk_problem *p, const char *name);

typedef struct rk_problem_diff {
    double max_abs_diff;       /* over all outputs, against the reference rounded to the output type */
    uint64_t bad, total;
    char first_bad[160];       /* "Y[3,17]: got 1.5 want 1.25 (tol 0.0039)" or "" */
} rk_problem_diff;
/* Compare the output buffers (filled by a run) with a double reference. The
 * tolerance per element is atol + rtol*|ref| + 1 ulp of the output type at ref
 * (see docs/kernels.md for atol/rtol per op). */
rk_status rk_problem_check(const rk_problem *p, rk_problem_diff *out);
/* The same in two steps, for many runs over one problem's inputs (a sweep's
 * configs of one shape): the reference once, each run's outputs against it. */
typedef struct rk_problem_ref {
    double *want[RK_KSIG_MAX], *tol[RK_KSIG_MAX];   /* per output entry of the signature; NULL for the others */
    uint64_t count[RK_KSIG_MAX];                    /* elements of each */
} rk_problem_ref;
rk_status rk_problem_reference(const rk_problem *p, rk_problem_ref *out);
void rk_problem_ref_free(rk_problem_ref *r);
/* Fails naming the entry when r does not have p's outputs (another signature or shape). */
rk_status rk_problem_check_ref(const rk_problem *p, const rk_problem_ref *r, rk_problem_diff *out);
/* Aim a filled problem at another instance `in` of its family at the same
 * shape, keeping its inputs (and so a reference computed from them): the
 * outputs and workspaces are zeroed again, in-out buffers get their initial
 * contents back. Allowed when the family's inputs and reference read no
 * performance knob (softmax, layernorm, rmsnorm, reduce, elementwise,
 * transpose) and `in` has the problem's non-performance knobs, signature,
 * derived scalars and input ranges; otherwise RK_ERR_INVALID naming the
 * first difference, p unchanged (fill a fresh one with rk_problem_init). */
rk_status rk_problem_retarget(rk_problem *p, const rk_instance *in);
/* rk_problem_retarget leaving the buffers as they are: for a caller that
 * stages the outputs itself (a sweep keeps them on the device and zeroes
 * them there); the host outputs then hold whatever the last run left. */
rk_status rk_problem_reaim(rk_problem *p, const rk_instance *in);
/* The inputs' contents against the family's rules before a launch (attention
 * decode: every page id a sequence uses inside the cache, every context
 * length inside its pages); the message names the sequence. RK_OK for
 * families without such rules. */
rk_status rk_problem_check_inputs(const rk_problem *p);
/* Per-sequence lengths of a problem that has them (attention decode:
 * context_lens): "random" (the default fill: the first at the shape's
 * maximum, the others in [1, max]), "equal" (all at the maximum) or a file
 * of B whitespace- or comma-separated integers. */
rk_status rk_problem_set_context_lengths(rk_problem *p, const char *how);
/* attention --mode unified: the path for the batch the problem holds (its
 * query and KV lengths) on target t: 1 split (the 2-D path, one block per
 * query block x KV head) or 2..kv_splits (split-KV, partials merged by the
 * last block to arrive); sets the scalar num_splits and returns the count.
 * attention --mode decode: the splits of the batch's context lengths, at most
 * the instance's kv_splits (fill the compute units, and keep a lone long
 * sequence's split small against its share). Other instances fail naming
 * the mode that has it. */
rk_status rk_problem_attention_splits(rk_problem *p, const rk_target *t, uint32_t *splits);
/* The same with what the run launches: `work_limit` bounds the split-KV
 * workspace in bytes (0: RK_ATTN_UNIFIED_WORK_LIMIT); a batch whose
 * workspace would pass it gets fewer splits, never a failure. */
#define RK_ATTN_UNIFIED_WORK_LIMIT ((uint64_t)1 << 30)
typedef struct rk_attention_unified_launch {
    uint32_t splits;          /* num_splits (1: the 2-D path) */
    uint64_t query_blocks;    /* non-empty (query block, KV head) pairs of the batch */
    uint64_t blocks;          /* blocks that read keys: each query block's splits (short ones split less) */
    uint64_t work_bytes;      /* the workspace these splits touch: Work_o, Work_ml over total_q x Hq x splits, and
                               * Arrivals; 0 on the 2-D path */
} rk_attention_unified_launch;
rk_status rk_problem_attention_unified_launch(rk_problem *p, const rk_target *t, uint64_t work_limit,
                                              rk_attention_unified_launch *out);
/* The same from the lengths alone (n sequences of lq new tokens over lk
 * keys; window_left for mask = window, negative: unbounded). */
rk_status rk_attention_unified_launch_for(const rk_instance *in, const rk_target *t, const uint64_t *lq,
                                          const uint64_t *lk, uint32_t n, uint64_t Hq, uint64_t Hkv,
                                          int64_t window_left, uint64_t work_limit, rk_attention_unified_launch *out);
/* A kernel a unified build wrote (manifest.json or one of its variants): its rows, warps, whether it
 * splits a decode's keys across the warps (not with whole_keys; rk_attention_unified_key_splits), and
 * whether its full query blocks run on wgmma (path = wgmma, sm_90a). */
typedef struct rk_attention_unified_candidate {
    uint32_t block_m, warps;
    bool key_split;
    bool wgmma_full;
} rk_attention_unified_candidate;
bool rk_attention_unified_key_splits(const rk_instance *in, const rk_target *t);
/* attention --mode unified built with variants (docs/attention.md, "Row
 * variants"): the index into c[0..nc) of the kernel that serves the batch
 * (n sequences of lq new tokens over lk keys, G = Hq / Hkv query heads per KV
 * head) cheapest, where a block's key step costs max(block_m, 64) row units
 * (the products grow with the rows, the K/V copy of a key does not), scaled
 * by the key split's measured price: its body slows full blocks, its absence
 * idles warps 1.. of a decode's block; a wgmma candidate's full blocks cost
 * what the tensor cores' rate saves (a model until measured). Ties go to the earlier candidate,
 * candidates with block_m < G are skipped (0 when none fits). cost (may be
 * NULL) receives each candidate's units (0: skipped). */
uint32_t rk_attention_unified_pick(const uint64_t *lq, const uint64_t *lk, uint32_t n, uint32_t G,
                                   const rk_attention_unified_candidate *c, uint32_t nc, double *cost);
/* Bytes moved and flops of the problem as filled: rk_instance_cost of its
 * shape, or what its inputs say (attention decode: the keys of every
 * sequence's context length, not the shape's CTX). */
void rk_problem_cost(const rk_problem *p, double *bytes, double *flops);

/* sizeof a public struct of this layer by name ("rk_instance", "rk_problem",
 * "rk_ksig", "rk_kparam", "rk_knob", "rk_shape", "rk_dim_decl", "rk_host_buf",
 * "rk_problem_diff"), 0 when unknown: for bindings that mirror the structs
 * (python/) to check their layout instead of corrupting memory. */
size_t rk_kernels_struct_size(const char *name);

/* ---- manifests -------------------------------------------------------------------- */
struct rk_manifest;   /* rocke/manifest.h */
/* Check a manifest against itself before anything runs from it: rebuild the
 * instance from `family` + `spec`, derive every field the manifest states
 * (kernel_name, kind, op, dtype, target, args_signature names/types/sizes in
 * order, sig_has_bytes, threads_per_block and grid_explicit from the grid of
 * the default shape, default_shape and default_shape_dims, the family's own
 * fields elems_per_block, is_binary, block_m, block_n, eps), validate the
 * instance for the target, then check the binary in `dir`
 * (rk_manifest_check_binary). The first contradiction fails with
 * RK_ERR_INVALID naming the field, what the manifest says and what the spec
 * implies. `in` and `shape` (each may be NULL) receive the instance and the
 * manifest's default shape. */
rk_status rk_manifest_check(const struct rk_manifest *m, const char *dir, rk_instance *in, rk_shape *shape);
/* A signature entry as args_signature spells it: writes the type text
 * ("ptr<bf16, global>", "i32", "tensormap") and returns the size in bytes. */
uint32_t rk_kparam_manifest_type(const rk_kparam *p, char *type, size_t n);

#ifdef __cplusplus
}
#endif
#endif
