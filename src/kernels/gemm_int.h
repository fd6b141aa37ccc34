/* rocke — the GEMM families, private: the plan that validation and the
 * builder share (atom, warp tiles, LDS operands and copies), and the
 * reference. Layer: kernels. */
#ifndef ROCKE_GEMM_INT_H
#define ROCKE_GEMM_INT_H

#include "kern_int.h"
#include "rocke/tile_grid.h"
#include "rocke/tile_mma.h"

/* gemm.c: the knob table every GEMM family shares, its indices (bits of
 * `locked`), the defaults and the widest vector (<= 8) dividing an extent. */
#define KN_GEMM_NKNOBS 23
extern const rk_knob kn_gemm_knobs[KN_GEMM_NKNOBS];
enum { KN_GK_LAYOUT, KN_GK_DT, KN_GK_ODT, KN_GK_TILE, KN_GK_WARPS, KN_GK_ATOM, KN_GK_STAGES, KN_GK_VA, KN_GK_VB,
       KN_GK_GROUP, KN_GK_WAVE, KN_GK_SPLIT, KN_GK_SRED, KN_GK_EPI, KN_GK_XCD, KN_GK_FUSE, KN_GK_PATH,
       KN_GK_SCHED, KN_GK_BLOCKS, KN_GK_SCALE, KN_GK_PROMOTE, KN_GK_PAD, KN_GK_CLUSTER };
void kn_gemm_defaults(rk_instance *in);
/* The static spelling of an epilogue parameter's name (the signature keeps
 * the pointer; rk_epi_params writes names into the caller's array). */
const char *kn_gemm_epi_name(const char *name);
uint32_t kn_gemm_vec_for(uint64_t extent);

/* What one block does, derived from the spec and the target. */
typedef struct kn_gemm_plan {
    const rk_mma_atom *atom;
    uint32_t bm, bn, bk;             /* block tile */
    uint32_t wm, wn;                 /* warps */
    uint32_t wtm, wtn;               /* warp tile: bm / wm, bn / wn */
    uint32_t mi, ni, ki;             /* atoms per warp tile in M and N, per block tile in K */
    uint32_t wave, threads, stages;
    bool a_row, b_row;               /* A [M, K] / B [K, N] row-major */
    rk_tile_operand opa, opb;        /* one stage of each in LDS */
    rk_tile_copy cpa, cpb;
    uint32_t stage_a, stage_b;       /* elements per stage */
    uint32_t lds_bytes;
    bool batched;
} kn_gemm_plan;

/* Resolve the atom, check every rule (tile divisibility, warps, LDS and
 * register budgets, copies) and choose the LDS layouts. RK_ERR_INVALID
 * names the knob, the limit and the legal values. */
rk_status kn_gemm_plan_make(const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *out);
/* Turn the plan's gathered copies (narrow global reads packed into wide LDS
 * chunks) back into plain ones of the access width, same LDS layouts: for
 * callers whose own gathers address every chunk (convolution's im2col). */
rk_status kn_gemm_plan_plain(kn_gemm_plan *p);
/* The cheapest LDS layout (fragment-read + copy-store bank conflicts) for
 * a rows x cols operand tile read as fragment f of atom a, and its copy. */
rk_status kn_gemm_choose_layout(const rk_mma_atom *a, rk_frag f, bool k_inner, uint32_t rows, uint32_t cols,
                                uint32_t vec, uint32_t threads, rk_scalar e, bool async, uint32_t wave,
                                rk_tile_operand *op, rk_tile_copy *cp);
/* The first of n atoms the target has (NULL: none). */
const rk_mma_atom *kn_first_atom(const rk_target *t, const rk_atom_id *ids, size_t n);
/* The default atom of a target for an input type (NULL: none). */
const rk_mma_atom *kn_gemm_default_atom(const rk_target *t, rk_scalar dtype);

/* gemm_build.c: the kernel body; params[i] is signature entry i. */
void kn_gemm_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params, bool batched);
/* The pieces of the body, for kernels that find their own problem (grouped):
 * kn_gemm_begin makes the plan and the warp grid; the caller then fills a
 * kn_gemm_io (this block's pointers, extents and tile origin) and runs the
 * main loop (mi * ni accumulators into res) and the epilogue. */
/* An operand copy the caller supplies in place of the plain tile copy
 * (convolution's im2col gather): fn copies the tile at (r0, c0), in the
 * operand's stored rows and columns like rk_tile_copy_issue, into the stage
 * at element `stage` of smem with the plan's copy (cpa or cpb) and the
 * lanes the main loop computed for it. The first call comes before the K
 * loop when stages > 1 (values it keeps then dominate the loop). */
typedef struct kn_gemm_gather {
    void (*fn)(rk_kernel *k, void *ud, const rk_tile_copy_lanes *l, rk_value r0, rk_value c0, rk_value smem,
               rk_value stage);
    void *ud;
} kn_gemm_gather;
typedef struct kn_gemm_io {
    rk_value A, B, C;                /* this problem's matrices */
    rk_value M, N, K, lda, ldb, ldc; /* i32 */
    rk_value m0, n0;                 /* the block's tile origin in C */
    rk_tile_warps w;
    rk_value lds;                    /* set by the main loop: its (first) operand buffer */
    kn_gemm_gather gather_a, gather_b;   /* fn NULL: the plain copy of A / B */
    /* set when C's pointer was moved by v elements (i32) from a 16-byte
     * aligned base: the direct epilogue then pairs stores only when
     * ldc and v are both even */
    struct { rk_value v; bool set; } c_shift;
    rk_value sa, sb;                 /* fp8 scale=tensor|block: the f32 scales Sa, Sb */
} kn_gemm_io;
/* Tile `id` (i32) of an M x N problem in grouped-M order: the tile grid
 * (tm x tn) and the tile's origin in C (i32). */
void kn_gemm_tile_origin(rk_kernel *k, uint32_t bm, uint32_t bn, uint32_t group_m, rk_value id, rk_value M,
                         rk_value N, rk_ix *tm, rk_ix *tn, rk_value *m0, rk_value *n0);
/* blockIdx.x after the XCD remap of knob 'xcd' (itself when 0 or 1). */
rk_value kn_gemm_block_id(rk_kernel *k, const rk_gemm_spec *s);
void kn_gemm_begin(rk_kernel *k, const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *pl,
                   rk_tile_warps *w);
void kn_gemm_mainloop(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, kn_gemm_io *io,
                      rk_value *res);
void kn_gemm_epilogue(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, const kn_gemm_io *io,
                      const rk_epi_args *ea, const rk_value *acc);
/* After the main loop: the epilogue, or split-K's partials (atomic adds, or
 * the workspace `work` reduction and then the epilogue). pid is the block's
 * tile id among tm x tn tiles; batched: grid z indexes the batch. */
void kn_gemm_finish(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, const kn_gemm_io *io,
                    const rk_epi_args *ea, const rk_value *res, rk_value pid, rk_ix tm, rk_ix tn, bool batched,
                    rk_value work);
/* C[row, col] as an i64 element index; one element x (f32) through the
 * chain and stored when (row, col) is inside io's M x N. */
rk_value kn_gemm_c_index(rk_kernel *k, rk_value row, rk_value col, rk_value ldc);
void kn_gemm_store_one(rk_kernel *k, const rk_gemm_spec *s, const rk_epi_args *ea, const kn_gemm_io *io, rk_value x,
                       rk_value row, rk_value col);
/* Row and column of accumulator slot `sl` of atom (i, j) of this lane's warp
 * tile, whose origin in C is (r0, c0). */
void kn_gemm_acc_coord(rk_kernel *k, const kn_gemm_plan *pl, rk_value lane, rk_value r0, rk_value c0, uint32_t i,
                       uint32_t j, uint32_t sl, rk_value *row, rk_value *col);

/* gemm_cshuffle.c: the C-shuffle epilogue (accumulators -> LDS tile ->
 * 16-byte row chunks through the chain), its LDS layout and bytes, the
 * knob's heuristic and the xcd default. */
void kn_gemm_cshuffle(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, const kn_gemm_io *io,
                      const rk_epi_args *ea, const rk_value *acc);
rk_lds_layout kn_gemm_cshuffle_layout(const kn_gemm_plan *pl, rk_scalar out_dtype);
/* The epilogue and xcd rules; raises p->lds_bytes to the staging tile's. */
rk_status kn_gemm_check_epilogue(const rk_gemm_spec *s, const rk_target *t, kn_gemm_plan *p);
void kn_gemm_tune_epilogue(rk_gemm_spec *s, const rk_target *t, uint64_t locked);

/* gemm_splitk.c: split-K. The split's first K tile and K-tile count (i32). */
void kn_gemm_split_range(rk_kernel *k, const rk_gemm_spec *s, rk_value ktiles, rk_value *kbase, rk_value *count);
/* Split-K rules (split_k range, atomic needs f32 C and no chain). */
rk_status kn_gemm_split_validate(const rk_gemm_spec *s);
/* The Work parameter of the workspace variant (appended last). */
void kn_gemm_split_signature(const rk_gemm_spec *s, rk_ksig *sg, bool batched);
/* Where this block's partials go: C (atomic) or Work (workspace). */
typedef struct kn_gemm_split_io {
    rk_value dst;                    /* C or Work */
    rk_value M, N, ldc;
    rk_value z, batch;               /* batch index and count (i32; 0 and 1 unbatched) */
    rk_value tile, tiles;            /* this block's tile id and the tile count per problem */
    rk_value r0, c0, lane, tid;      /* warp tile origin, lane, thread */
} kn_gemm_split_io;
/* Atomic variant: add every accumulator into C (f32). */
void kn_gemm_split_atomic(rk_kernel *k, const kn_gemm_plan *pl, const kn_gemm_split_io *io, const rk_value *acc);
/* Workspace variant: store this split's partials, count the arrival; the
 * result is true (block uniform) in the last split of the tile to arrive,
 * which then calls kn_gemm_split_gather. */
rk_value kn_gemm_split_publish(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s,
                               const kn_gemm_split_io *io, const rk_value *acc);
/* The sums over every split in split order, as accumulator fragments. */
void kn_gemm_split_gather(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, const kn_gemm_split_io *io,
                          const rk_value *acc, rk_value *sum);
/* The split count for a problem: enough blocks for every unit, each split
 * at least four K tiles. */
uint32_t kn_gemm_tune_split(const rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K,
                            uint64_t batch);

/* gemm_skinny.c: the M <= 64 (decode) configuration; locks say which knobs
 * the caller fixed. */
typedef struct kn_gemm_locks { bool tile, warps, atom, stages; } kn_gemm_locks;
void kn_gemm_tune_skinny(rk_gemm_spec *s, const rk_target *t, uint64_t M, kn_gemm_locks locks);

/* gemm_stream.c: path=stream (NVIDIA, layout rc, decode): the rules and
 * the plan (no LDS; mi x ni m16n8k16 atoms per warp, ki per K tile); the
 * heuristic's choice (tile M = M rounded up to 16, 1x4 warps, 128 x 128
 * (M <= 32) or 64 x 64 columns x K chunks, the split count), which keeps *s and
 * returns false where the path does not apply; and the main loop (mi * ni
 * accumulators into res, the layout kn_gemm_finish reads). */
rk_status kn_gemm_stream_plan(const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *out);
bool kn_gemm_tune_stream(rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K, uint64_t batch,
                         uint64_t locked);
void kn_gemm_stream_mainloop(rk_kernel *k, const kn_gemm_plan *pl, const rk_gemm_spec *s, kn_gemm_io *io,
                             rk_value *res);

/* gemm_fp8.c: fp8 on path=mma. The target's own encoding of an fp8 dtype
 * (FNUZ on gfx942), its default atom (NULL: none), the rules (scale knob,
 * targets, scale=block's tile), the heuristic's vectors (16 one-byte
 * elements), tile K and warps. */
rk_scalar kn_gemm_fp8_native(const rk_target *t, rk_scalar dtype);
const rk_mma_atom *kn_gemm_fp8_atom(const rk_target *t, rk_scalar dtype);
rk_status kn_gemm_fp8_check(const rk_gemm_spec *s, const rk_target *t, bool batched);
/* The scales' parameters (appended last; both paths): Sa, Sb of "1" (tensor)
 * or "M,K/128" and "N/128,K/128" (block). */
void kn_gemm_fp8_signature(const rk_gemm_spec *s, rk_ksig *sg);
void kn_gemm_fp8_tune(rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K, uint64_t locked);
/* scale=tensor: out[i] = acc[i] * Sa[0] * Sb[0] for the mi * ni accumulators. */
void kn_gemm_fp8_tensor(rk_kernel *k, const kn_gemm_plan *pl, const kn_gemm_io *io, const rk_value *acc,
                        rk_value *out);
/* scale=block: acc += blk * Sa[row, kb] * Sb[n0 / 128, kb] (f32 fma) for the
 * 128-K block kb (i32) of the kblocks = ceil(K / 128). */
void kn_gemm_fp8_promote(rk_kernel *k, const kn_gemm_plan *pl, const kn_gemm_io *io, rk_value kb, rk_value kblocks,
                         const rk_value *blk, rk_value *acc);

/* gemm_reference.c */
void kn_gemm_reference(const rk_problem *p, double **want, double **tol);
/* A matrix of the reference: buffer, first element, leading dimension,
 * row-major ([rows, K] / [K, cols]) or not. */
typedef struct kn_gemm_refmat { const rk_host_buf *buf; uint64_t off, ld; bool row; } kn_gemm_refmat;
/* C(m, n) = chain(sum_k A(m, k) B(k, n)) in double with its tolerance; ops[i]
 * is step i's operand at (m, n). */
void kn_gemm_ref_one(const rk_gemm_spec *s, const kn_gemm_refmat *a, const kn_gemm_refmat *b, uint64_t m,
                     uint64_t n, uint64_t K, const double *ops, double *want, double *tol);

/* The chain's operands of a problem, per step: its buffer (bias, bias_row,
 * add/mul), its scalar (scale) and its leading dimension (add/mul, where the
 * signature has one). */
typedef struct kn_gemm_ref_chain {
    const rk_host_buf *buf[RK_EPI_MAX_STEPS];
    double val[RK_EPI_MAX_STEPS], ldd[RK_EPI_MAX_STEPS];
} kn_gemm_ref_chain;
void kn_gemm_ref_chain_of(const rk_problem *p, kn_gemm_ref_chain *out);
/* ops[i] for element (m, n): bias reads element col_at of its vector,
 * bias_row element row_at, an add/mul step element d_at[i] of its tensor. */
void kn_gemm_ref_operands(const rk_gemm_spec *s, const kn_gemm_ref_chain *ch, uint64_t col_at, uint64_t row_at,
                          const uint64_t *d_at, double *ops);

#endif
