/* rocke — the GEMM family's Hopper path (sm_90a), private: TMA boxes into a
 * ring of 128-byte-swizzled stages on mbarriers, wgmma from shared-memory
 * descriptors, one or two consumer warpgroups. Layer: kernels. */
#ifndef ROCKE_GEMM_HOPPER_H
#define ROCKE_GEMM_HOPPER_H

#include "gemm_int.h"
#include "rocke/tile_hopper.h"

/* K elements of one stage of 16-bit operands: a 128-byte row (fp8: 128,
 * kn_gemm_hopper_bk). MN-major boxes are 64 x 64 of 16-bit elements. */
enum { KN_WG_BK = 64 };
/* Whether the inputs are OCP fp8 (e4m3, e5m2: wgmma m64nNk32, K-major only). */
bool kn_gemm_hopper_f8(const rk_gemm_spec *s);
/* K elements of one stage: one 128-byte swizzled row (64 16-bit, 128 fp8). */
uint32_t kn_gemm_hopper_bk(const rk_gemm_spec *s);
/* vec_a / vec_b of an operand TMA reads: 8 16-bit elements, its 16-byte row
 * stride rule; a smaller vec (the heuristic's, for rows that break the rule)
 * makes the block's threads fill that operand's stages instead. */
enum { KN_WG_TMA_VEC = 8 };

/* Whether operand 0 (A) or 1 (B) is K-major (A row-major, B column-major):
 * wgmma reads it without the transpose bit; otherwise it is MN-major. */
bool kn_gemm_hopper_k_major(const rk_gemm_spec *s, int operand);
/* Check a path = wgmma spec (any layout; an N-major B needs tile N a
 * multiple of 64; f16/bf16, tile 64|128 x 8..256 x 64,
 * warps (tile M / 16) x 1, 2..6 stages in the shared-memory budget) and fill
 * the plan's block fields (atom NULL). Messages name the knob and the legal
 * values, and say that path=mma takes the rest. */
rk_status kn_gemm_hopper_plan(const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *out);
/* gemm_plan.c: the rules both paths share (group_m, the epilogue chain). */
rk_status kn_gemm_check_order_and_chain(const rk_gemm_spec *s, bool batched);
/* The heuristic: path = wgmma where it applies to target t and the problem
 * (sm_90a, single problems, the default atom; an operand whose rows break
 * TMA's 16-byte rule, vec below 8, is copied and takes schedule=plain),
 * with its tile, warps, stages and schedule unless locked (bits KN_GK_* of
 * `locked`); otherwise path = mma,
 * with those knobs left tuned when only the plan refused them (the caller
 * restores its spec or keeps them for an explicit path=wgmma). */
void kn_gemm_hopper_tune(rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K, bool batched,
                         uint64_t locked);
/* The schedule (unless knob bit KN_GK_SCHED of `locked` is set): persistent
 * where the tiles outnumber the SMs, else ws; blocks = the SM count for
 * persistent (0 otherwise) unless KN_GK_BLOCKS is locked. */
void kn_gemm_hopper_tune_schedule(rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t locked);
/* pad: whether operand 0 (A) / 1 (B) is staged into a padded copy (Apad,
 * Bpad) that TMA reads; the layouts' extent "K8" (M8, N8): the dimension
 * rounded up to 8 (0 for other names); the tensor-map view over a copy. */
bool kn_gemm_hopper_padded(const rk_gemm_spec *s, int operand);
/* 1 when the spec takes split-K's Work (split_k > 1, workspace), else 0. */
uint32_t kn_gemm_hopper_split_work(const rk_gemm_spec *s);
uint64_t kn_gemm_pad_extent(const rk_instance *in, const rk_shape *sh, const char *name, size_t len);
rk_status kn_gemm_hopper_tensormap_view(const rk_problem *p, const rk_kparam *kp, rk_problem_tmap *out);
/* Whether the schedule walks tiles over a grid of `blocks` (persistent, pingpong). */
bool kn_gemm_hopper_walks(const rk_gemm_spec *s);
/* Threads a wgmma block has beyond its consumer warps: the producer
 * warpgroup of ws / persistent (128), and pingpong's second consumer (256 in
 * all); a persistent grid is min(blocks, tiles) (the geometry's MIN). */
uint32_t kn_gemm_hopper_extra_threads(const rk_gemm_spec *s);
/* Shape limits of the path: the row extent of A and B (K or M / N by the
 * layout) a multiple of vec_a / vec_b (8: TMA's 16-byte row stride). */
rk_status kn_gemm_hopper_check_shape(const rk_gemm_spec *s, uint64_t M, uint64_t N, uint64_t K);
/* Consumer warpgroups of a block (pingpong: 2, else tile M / 64), and the
 * shared memory epilogue=tma stages C in (each consumer's 64 x tile N in
 * out_dtype; 0 for the other epilogues). */
uint32_t kn_gemm_hopper_consumers(const rk_gemm_spec *s);
uint32_t kn_gemm_hopper_cstage_bytes(const rk_gemm_spec *s);
/* epilogue=tma with tile N a whole number of 128-byte rows: C staged in the 128-byte swizzle */
bool kn_gemm_hopper_cstage_swizzled(const rk_gemm_spec *s);
/* schedule=plain, both operands by TMA, out_dtype = dtype: C is staged in the B stages after the loop (no
 * load is in flight then), so the ring keeps all of shared memory; the bytes C adds beside the ring */
bool kn_gemm_hopper_cstage_aliased(const rk_gemm_spec *s);
uint32_t kn_gemm_hopper_cstage_extra(const rk_gemm_spec *s);
/* The tensormap entries (A_map over A, B_map over B, each only where TMA
 * reads that operand) after the others, then scale=tensor|block's Sa and Sb
 * (f32), then epilogue=tma's C_map over C. */
void kn_gemm_hopper_signature(const rk_gemm_spec *s, rk_ksig *sg);
void kn_gemm_hopper_tensormap_box(const rk_instance *in, const rk_kparam *kp, uint32_t *box_rows, uint32_t *box_cols,
                                  uint32_t *swizzle_bytes);
/* The kernel body; params[i] is signature entry i. */
void kn_gemm_hopper_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);

/* ---- the kernel's pieces (gemm_hopper.c), shared by the schedules ---- */
typedef struct kn_hk {
    rk_kernel *k;
    const rk_gemm_spec *s;
    const rk_value *p;         /* the signature's values */
    kn_gemm_plan pl;
    rk_epi_args ea;
    rk_tile_tma_ring ring;
    rk_value amap, bmap, sA, sB;
    rk_value ktiles;           /* K tiles of 64 (i32) */
    rk_value kt0;              /* a caller's split-K: its first K tile, added to the TMA boxes' K
                                * coordinate (i32; invalid: 0) */
    rk_value m0, n0;           /* the current C tile's origin */
    rk_value rank, share_b;    /* cluster=2: the block's rank in its pair (i32), and whether the pair's tiles share
                                * B (i1, the same in both blocks): then each loads half of B for both */
    bool ka, kb;               /* A / B K-major (else MN-major: wgmma's transpose bit) */
    const char *dt;            /* "f16", "bf16", "e4m3" or "e5m2" (wgmma's dtype) */
    uint32_t eb;               /* bytes of an input element */
    rk_value sa, sb;           /* scale=tensor|block: the f32 scales Sa, Sb */
    rk_value tscale;           /* scale=tensor: Sa[0] * Sb[0] (f32), applied before the chain */
    rk_value cmap, cstage;     /* epilogue=tma: C's tensor map and the staging tiles (out_dtype) */
    rk_value work;             /* split_k > 1: the f32 slices and counters (kn_gemm_hopper_split_finish) */
    uint32_t copies;           /* copy loops emitted so far (their unique IV names) */
    struct kn_hk_fill {        /* an operand the caller's threads fill (conv's im2col), whatever its vec */
        void (*fn)(struct kn_hk *h, void *ud, int operand, rk_value tid, rk_value base, rk_value kx, rk_value mn0);
        void *ud;
    } fill[2];
    struct kn_hk_hooks {       /* a caller's own TMA boxes and C rows (conv's pixel boxes); NULL: the GEMM's */
        /* one thread: operand op's boxes of K tile kt (kt0 added) at MN origin mn0 into stage st from element
         * base, exactly the bytes of the operand's stage, on the ring's barrier of st */
        void (*box)(struct kn_hk *h, void *ud, int operand, rk_value base, rk_value st, rk_value kt, rk_value mn0);
        /* C row `row` of the tile walk as the row of C it stores (i32), *ok whether it exists (replaces
         * row < M) */
        rk_value (*row_of)(struct kn_hk *h, void *ud, rk_value row, rk_value *ok);
        void *ud;
    } hooks;
} kn_hk;
/* Plan, epilogue operands, tensor maps, the stages in shared memory and
 * the ring's barriers (with `releases` arrivals on each "empty" barrier,
 * or none when 0); ends with a block barrier. */
void kn_gemm_hopper_begin(kn_hk *h, const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p,
                          uint32_t releases);
/* kn_gemm_hopper_begin for a caller that is not the GEMM family (conv):
 * spec s, p laid out as the GEMM's signature (A, B, C, M, N, K, lda, ldb,
 * ldc, the chain's operands, the tensor maps), and fill[op].fn set for each
 * operand its threads fill in place of kn_gemm_hopper_copy (no tensor map;
 * called by kn_gemm_hopper_fill_copies with the same arguments). */
void kn_gemm_hopper_begin_ex(kn_hk *h, const rk_gemm_spec *s, const rk_target *t, rk_kernel *k, const rk_value *p,
                             const struct kn_hk_fill fill[2], uint32_t releases);
/* Split-K on schedule=plain (gemm_hopper_split.c), after kn_gemm_hopper_run_plain over this
 * split's K tiles (grid y: h->kt0, h->ktiles from kn_gemm_split_range): d into the split's
 * slice of work (f32: `splits` slices of groups x M x N, then one counter per (group, tile),
 * group = block z); the last split of the tile to arrive sums the slices in split order, resets
 * the counter and runs kn_gemm_hopper_epilogue. A tile inside C sums in one loop over the
 * slices; an edge tile element by element (slower, few registers). */
void kn_gemm_hopper_split_finish(kn_hk *h, uint32_t splits, rk_value work, rk_value groups, rk_value rbase,
                                 rk_value twg, rk_value d);
/* schedule=plain after begin: the prologue and the loop over h->ktiles K
 * tiles; returns the warpgroup's accumulators (all groups retired), with
 * *rbase its first row in C and *twg the thread inside it, for
 * kn_gemm_hopper_epilogue (or a caller's own reduction first). */
rk_value kn_gemm_hopper_run_plain(kn_hk *h, rk_value *rbase, rk_value *twg);
/* cluster=2, after the ring's set-up: thread tid 0 makes the initialised barriers visible to the cluster
 * (fence.mbarrier_init), then the pair meets at a cluster barrier, so that neither block arrives on or
 * multicasts into barriers the other has not initialised. */
void kn_gemm_hopper_pair_meet(rk_kernel *k, rk_value tid);
/* m0, n0 of C tile number `tile` (i32) in grouped-M order. */
void kn_gemm_hopper_origin(kn_hk *h, rk_value tile);
/* One thread: arm stage fill % stages and issue the TMA boxes of K tile kt
 * of the current C tile into it (the operands TMA reads; the copied ones
 * are kn_gemm_hopper_fill_copies'). */
void kn_gemm_hopper_issue(kn_hk *h, rk_value kt, rk_value fill);
/* Every thread: the copied operands of K tile kt into stage fill % stages
 * when kt < ktiles, then one cp.async group committed (empty or not, so
 * every fill counts one group). */
void kn_gemm_hopper_fill_copies(kn_hk *h, rk_value tid, rk_value kt, rk_value fill);
/* Every thread, before wgmma reads fill `ahead` fills behind the newest
 * committed one: its cp.async groups but `ahead` retired, a proxy fence
 * (the threads' writes become visible to wgmma), a block barrier. */
void kn_gemm_hopper_copies_land(kn_hk *h, uint32_t ahead);
/* First element of warpgroup wg's A rows inside a stage. */
rk_value kn_gemm_hopper_arow(kn_hk *h, rk_value wg);
/* Fence, the four wgmma k16 steps (fp8: k32) of stage st (i32) and a commit. */
rk_value kn_gemm_hopper_mma(kn_hk *h, rk_value st, rk_value arow, rk_value acc);
/* The same from fresh accumulators (the first step does not read acc's
 * values: scale-d off), for scale=block's per-128-K accumulators. */
rk_value kn_gemm_hopper_mma_fresh(kn_hk *h, rk_value st, rk_value arow, rk_value acc);
/* scale=block (gemm_hopper_scale.c): the scales of K block kb for the m64nN
 * fragment of warpgroup rows from rbase, thread twg (0..127), as one f32
 * vector: Sa of the thread's two rows, then Sb of its columns' 128-blocks
 * (one value where tile N divides 128, else one per 8 columns); rows and
 * columns past C read the last row / column's scales (their results are
 * masked at the store). */
rk_value kn_gemm_hopper_block_scales(kn_hk *h, rk_value rbase, rk_value twg, rk_value kb);
/* acc + blk * Sa * Sb per element, with the scales of kn_gemm_hopper_block_scales. */
rk_value kn_gemm_hopper_promote(kn_hk *h, rk_value scales, rk_value acc, rk_value blk);
/* scale=block's main loop over the current C tile's K blocks
 * (gemm_hopper_blocks.c; promote=overlap or serial), for a consumer
 * warpgroup whose A rows start at element arow of a stage and C rows at
 * rbase, thread twg inside it. Hooks: `full` waits until K tile kt's stage
 * is filled and returns its index (i32); `retired` runs once the wgmmas
 * that read K tile kt have retired (its stage may be refilled). Returns
 * the sum, every group retired. */
typedef struct kn_hk_blocks {
    rk_value (*full)(kn_hk *h, void *ud, rk_value kt);
    void (*retired)(kn_hk *h, void *ud, rk_value kt);
    void *ud;
    rk_value arow, rbase, twg;
} kn_hk_blocks;
rk_value kn_gemm_hopper_run_blocks(kn_hk *h, const kn_hk_blocks *b);
/* The fused chain and the masked stores of the m64nN accumulators d of the
 * warpgroup whose rows start at rbase, for its thread twg (0..127). */
void kn_gemm_hopper_epilogue(kn_hk *h, rk_value rbase, rk_value twg, rk_value d);
/* epilogue=tma (gemm_hopper_store.c): the same chain into consumer cw's
 * staging tile, then one TMA store of its 64 rows by thread twg 0; before
 * the tile is rewritten, the consumer's previous store must have read it.
 * kn_gemm_hopper_store_drain: thread twg 0 waits for its stores (the
 * block's end). */
void kn_gemm_hopper_epilogue_tma(kn_hk *h, rk_value rbase, rk_value twg, rk_value cw, rk_value d);
void kn_gemm_hopper_store_drain(kn_hk *h, rk_value twg);
/* The element (f32 or a pair) x of C[row, col] through the per-tensor scale
 * (scale=tensor) and the fused chain, rounded to out_dtype. */
rk_value kn_gemm_hopper_finish_value(kn_hk *h, rk_value x, rk_value row, rk_value col, rk_value ok);
/* gemm_hopper_copy.c: whether operand 0 (A) / 1 (B) is filled by the
 * threads (vec below KN_WG_TMA_VEC) rather than TMA. */
bool kn_gemm_hopper_copied(const rk_gemm_spec *s, int operand);
/* Every thread of the block (tile_m * 2, thread `tid`): the operand's tile at
 * K column kx and MN origin mn0 into its stage from element `base`, laid out
 * as the 128-byte-swizzled TMA boxes would (zeros past M, N and K): cp.async
 * for vec 2 and 4 (the caller commits the group), loads and stores for vec
 * 1. Before wgmma reads it: kn_gemm_hopper_copies_land. */
void kn_gemm_hopper_copy(kn_hk *h, int operand, rk_value tid, rk_value base, rk_value kx, rk_value mn0);
/* schedule = ws or persistent (gemm_hopper_ws.c). */
void kn_gemm_hopper_build_ws(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p);
/* The same for a caller that is not the GEMM family: spec s (pad none, TMA operands), p as for
 * kn_gemm_hopper_begin_ex, the caller's box and row hooks (NULL members: the GEMM's). */
void kn_gemm_hopper_build_ws_ex(const rk_gemm_spec *s, const rk_target *t, rk_kernel *k, const rk_value *p,
                                const struct kn_hk_hooks *hooks);

#endif
