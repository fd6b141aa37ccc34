/* rocke — the matrix-multiply tile layer: global -> LDS tile copies
 * (tile.async_copy stages or plain load/store, zero fill past the tensor),
 * operand fragments of a matrix atom read from LDS (ldmatrix on NVIDIA
 * 16-bit mma.sync, lane-map driven vector reads elsewhere), accumulators, and
 * where each accumulator slot lands. Shared by GEMM, attention and
 * convolution. Layer: tile. */
#ifndef ROCKE_TILE_MMA_H
#define ROCKE_TILE_MMA_H

#include "rocke/target.h"
#include "rocke/tile.h"
#include "rocke/tile_lds.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- global -> LDS tile copies ------------------------------------------------------ */
/* A 2-D global view: element (r, c) at ptr[r * ld + c] (ld in elements, i64
 * addressing), in range iff r < rows and c < cols (i32). The copy requires
 * cols and ld to be multiples of the copy's global access (gvec; the family
 * checks the shape), so an access is wholly in range or wholly out. */
typedef struct rk_tile_gview {
    rk_value ptr;          /* ptr<elem, global> */
    rk_value ld;           /* i32 elements between rows */
    rk_value rows, cols;   /* i32 extents */
} rk_tile_gview;

#define RK_TILE_COPY_MAX_PASSES 32
/* How a block copies a rows x cols tile (cols contiguous in global memory
 * and in the LDS layout): chunk i = pass * threads + thread covers row
 * i / (cols / vec), columns (i % (cols / vec)) * vec + [0, vec). */
typedef struct rk_tile_copy {
    uint32_t rows, cols, vec, threads, passes;
    rk_scalar elem;
    bool async;            /* tile.async_copy (vec * bytes in 4, 8, 16), else load + store */
    rk_lds_layout lds;     /* one stage; its rows x cols must match */
    uint32_t gvec;         /* elements per global access: vec, or a divisor of it (gathered copies) */
} rk_tile_copy;
/* Checks: cols % vec == 0, at most RK_TILE_COPY_MAX_PASSES passes (the last
 * may be partial: its idle threads skip it), vec * bytes in 4, 8, 16 for
 * async, the layout's shape and element size. RK_ERR_INVALID names the rule
 * and the values. */
rk_status rk_tile_copy_make(uint32_t rows, uint32_t cols, uint32_t vec, uint32_t threads, rk_scalar elem,
                            const rk_lds_layout *lds, bool async, rk_tile_copy *out);

/* A synchronous copy whose chunks are read from global memory in gvec-element
 * pieces (gvec divides vec; each piece in range or zero on its own), packed
 * and stored to LDS as one vec-element vector. For views whose leading
 * dimension or extent allows only narrow accesses (an odd K of a 16-bit
 * matrix): the LDS side keeps full-width stores and the chunk's address is
 * computed once, not per element. The view needs cols and ld multiples of
 * gvec (not vec). */
rk_status rk_tile_copy_make_gathered(uint32_t rows, uint32_t cols, uint32_t vec, uint32_t gvec, uint32_t threads,
                                     rk_scalar elem, const rk_lds_layout *lds, rk_tile_copy *out);
/* Eight 2-byte elements (f16, bf16) from element idx (i64) of ptr at any
 * element alignment: two aligned 16-byte loads of the granules around them
 * and a shift in registers (tile_shift.c), in place of eight 2-byte loads.
 * Both loads must lie in the buffer: rk_tile_shifted_window_ok(ptr, idx,
 * total) is true (i1) when they do for a buffer of `total` elements (i64)
 * from ptr. Gathered copies of 8 x 2-byte chunks take this path. */
rk_value rk_tile_load_unit_shifted(rk_kernel *k, rk_value ptr, rk_value idx);
rk_value rk_tile_shifted_window_ok(rk_kernel *k, rk_value ptr, rk_value idx, rk_value total);
/* The two halves of rk_tile_load_unit_shifted, for a pipeline that holds the
 * loads in registers and uses them later (the shift reads the loaded words):
 * the aligned pair and the element shift (i32, 0..7), then the unit. A
 * shift of 0 returns v0 (a unit loaded some other way passes through). */
void rk_tile_load_unit_pair(rk_kernel *k, rk_value ptr, rk_value idx, rk_value *v0, rk_value *v1, rk_value *shift);
rk_value rk_tile_unit_shift(rk_kernel *k, rk_value v0, rk_value v1, rk_value shift);
/* Stage a 16-bit matrix into a padded, 16-byte-aligned copy (tile_pad_copy.c):
 * src holds `rows` rows of `cols` elements at row stride `ld` (any; the
 * buffer ends at element (rows - 1)·ld + cols), dst the same rows at stride
 * `ldp` (a multiple of 8, at least cols), the pad columns [cols, ldp) zero.
 * Work comes in units of 8 elements (one 16-byte store into dst); thread
 * `gtid` of `nthreads` (i32, e.g. over the whole grid) takes units gtid,
 * gtid + nthreads, ... Units whose 8 source elements lie inside their row
 * and whose aligned window lies in the buffer read as a shifted unit (two
 * aligned 16-byte loads); the others (row tails, the buffer's ends) element
 * by element, zeros past cols. rows, cols, ld, ldp: i32. */
void rk_tile_pad_copy(rk_kernel *k, rk_value src, rk_value dst, rk_value rows, rk_value cols, rk_value ld, rk_value ldp,
                      rk_value gtid, rk_value nthreads);

/* Per-thread chunk coordinates, computed once (outside the K loop). */
typedef struct rk_tile_copy_lanes {
    rk_value row[RK_TILE_COPY_MAX_PASSES], col[RK_TILE_COPY_MAX_PASSES];   /* i32 in the tile */
    rk_value dst[RK_TILE_COPY_MAX_PASSES];                                  /* i32 LDS element offset in a stage */
} rk_tile_copy_lanes;
void rk_tile_copy_lanes_init(rk_kernel *k, const rk_tile_copy *c, rk_value tid, rk_tile_copy_lanes *out);

/* Copy the tile whose first element is (r0, c0) of g into the stage that
 * starts at element `stage` (i32) of `smem` (a 1-D allocation of elem).
 * Elements outside the view are zeros. Async copies complete at the
 * tile.async_wait_group that retires their group (the caller commits). */
void rk_tile_copy_issue(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_gview *g,
                        rk_value r0, rk_value c0, rk_value smem, rk_value stage);
/* A synchronous copy in two halves, so a pipeline can start the global loads
 * of a later tile, compute on the current one and only then store (the loads'
 * latency hidden behind the math): fetch holds one vector per pass in
 * registers, put stores them into the stage. put is rk_tile_copy_issue's
 * store half; chunks of idle threads are fetched from element 0 and never
 * put. Not for async copies. */
typedef struct rk_tile_copy_regs {
    rk_value v[RK_TILE_COPY_MAX_PASSES];
    /* gathered 8 x 2-byte chunks: v and v1 are a shifted unit's aligned pair and sh its
     * shift (i32), made into the chunk by put (rk_tile_unit_shift) */
    rk_value v1[RK_TILE_COPY_MAX_PASSES], sh[RK_TILE_COPY_MAX_PASSES];
} rk_tile_copy_regs;
void rk_tile_copy_fetch(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_gview *g,
                        rk_value r0, rk_value c0, rk_tile_copy_regs *out);
void rk_tile_copy_put(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_copy_regs *v,
                      rk_value smem, rk_value stage);

/* Pass p of a copy: when it is the partial last pass, opens an if over the
 * threads that have a chunk in it and returns true (close with rk_if_end). */
bool rk_tile_copy_pass_begin(rk_kernel *k, const rk_tile_copy *c, uint32_t p);
/* One chunk of a copy: vec elements from ptr[idx] (i64) to smem[dst] (i32),
 * zeros where ok (i1) is false (idx must then be a safe index, e.g. 0). For
 * callers that address chunks themselves (im2col): plain copies only — a
 * gathered copy's pieces need addresses of their own (kn_gemm_plan_plain). */
void rk_tile_copy_chunk(rk_kernel *k, const rk_tile_copy *c, rk_value ptr, rk_value ok, rk_value idx, rk_value smem,
                        rk_value dst);

/* ---- gathered (im2col) copies --------------------------------------------------- */
/* A convolution operand seen as a 2-D tile view and never materialised: the
 * tile's rows are pixels of a channels-last tensor's spatial grid (n, o, p,
 * q: row = ((n * O + o) * P + p) * Q + q) and its columns filter taps with a
 * channel (t, r, s, c: col = ((t * R + r) * S + s) * CG + c). The tensor read is X
 * [N, D, H, W, C] (channels-last; C elements between pixels, the group's
 * first channel c0). Forward (transposed false): the element of (pixel,
 * tap) is X at d = o * stride - pad + t * dil (same for h, w), zero outside
 * [0, D). Transposed (dgrad): the pixel is an input position and the tensor
 * the output gradient: its position is o = (d + pad - t * dil) / stride when
 * the division is exact, zero otherwise or outside [0, D). 2-D views give
 * D = O = T = 1 as constants, which fold away. The copy's vec runs along c;
 * the family checks CG % vec == 0. */
typedef struct rk_tile_im2col {
    rk_value ptr;                      /* ptr<elem, global> */
    rk_ix rows, cols;                  /* the view's extents: pixels N*O*P*Q, taps T*R*S*CG */
    rk_fastdiv pix[3];                 /* O, P, Q: the pixel grid of the rows */
    rk_fastdiv tap[3];                 /* T, R, S */
    rk_fastdiv cg;                     /* channels per group (col decomposition) */
    rk_ix in[3];                       /* D, H, W: the tensor's spatial extents */
    rk_ix stride[3], pad[3], dil[3];   /* pad: the leading padding */
    rk_fastdiv sdiv[3];                /* transposed: the strides as divisors */
    rk_ix cstride;                     /* C: elements between pixels */
    rk_ix c0;                          /* the group's first channel */
    bool transposed;
} rk_tile_im2col;

/* Per-thread row state of one tile origin r0 (i32): computed outside the K
 * loop where the rows do not move (the forward A operand). */
typedef struct rk_tile_im2col_rows {
    rk_value ok[RK_TILE_COPY_MAX_PASSES];          /* i1: the pixel exists */
    rk_value base[RK_TILE_COPY_MAX_PASSES];        /* i64: n * D * H * W * C + c0 */
    rk_value org[RK_TILE_COPY_MAX_PASSES][3];      /* i32: o * stride - pad (transposed: d + pad) */
} rk_tile_im2col_rows;
void rk_tile_im2col_rows_init(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l,
                              const rk_tile_im2col *v, rk_value r0, rk_tile_im2col_rows *out);
/* Copy the tile whose first column is c0 (rows as in `rows`) into the stage
 * at element `stage` of smem, like rk_tile_copy_issue. */
void rk_tile_im2col_issue(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_im2col *v,
                          const rk_tile_im2col_rows *rows, rk_value c0, rk_value smem, rk_value stage);

/* ---- operand fragments ------------------------------------------------------------- */
/* An atom operand held in LDS, one stage: A as M x K or B as N x K when
 * k_inner (K contiguous), else K x M / K x N. */
typedef struct rk_tile_operand {
    rk_frag frag;          /* RK_FRAG_A or RK_FRAG_B */
    bool k_inner;
    rk_lds_layout lds;     /* its rows x cols */
} rk_tile_operand;

/* Fragment of `atom` for the atom-sized block whose first M (A) or N (B)
 * index is mn0 and first K index k0 (i32, within the stage), from the stage
 * at element `stage` of smem: a vec<elem x len> in the atom's lane order.
 * NVIDIA 16-bit mma.sync atoms: one ldmatrix (.trans when !k_inner);
 * others: the lane map's runs of consecutive elements as vector LDS reads. */
rk_value rk_tile_frag_load(rk_kernel *k, const rk_mma_atom *atom, const rk_tile_operand *op, rk_value smem,
                           rk_value stage, rk_value lane, rk_value mn0, rk_value k0);
/* Two B fragments at once, of the n-adjacent atoms at n0 and n0 + atom N:
 * one ldmatrix.x4 (.trans when !k_inner) whose matrices 0, 1 are atom n0's
 * k halves and 2, 3 atom n0 + 8's, so a lane receives exactly both
 * fragments' registers (half the ldmatrix instructions of two single loads).
 * Only where rk_tile_frag_uses_ldmatrix holds for op (a B operand); returns
 * false and builds nothing otherwise. */
bool rk_tile_frag_load_b_pair(rk_kernel *k, const rk_mma_atom *atom, const rk_tile_operand *op, rk_value smem,
                              rk_value stage, rk_value lane, rk_value n0, rk_value k0, rk_value out[2]);
/* Whether rk_tile_frag_load uses ldmatrix for this atom and operand. */
bool rk_tile_frag_uses_ldmatrix(const rk_mma_atom *atom, const rk_tile_operand *op);
/* A zero accumulator: vec<c_elem x c_len>. */
rk_value rk_tile_acc_zero(rk_kernel *k, const rk_mma_atom *atom);

/* Accumulator slots that hold consecutive columns of one row, for every
 * lane: *pair (host) is 2 when slots (2i, 2i+1) are (r, c) and (r, c+1)
 * with c even (mma.sync), else 1. */
uint32_t rk_tile_acc_col_run(const rk_mma_atom *atom);

/* LDS bank conflicts (worst ways, rk_lds_conflict_ways) of one fragment
 * load of `op` for lanes 0..lanes-1 at mn0 = k0 = 0: what a layout choice
 * is scored on. */
uint32_t rk_tile_frag_conflicts(const rk_mma_atom *atom, const rk_tile_operand *op);
/* The same for the B pair load (rk_tile_frag_load_b_pair: 32 lanes, the
 * single load's 16 first); rk_tile_frag_conflicts where it does not apply. */
uint32_t rk_tile_frag_pair_conflicts(const rk_mma_atom *atom, const rk_tile_operand *op);
/* The same for one pass of a copy into its layout. */
uint32_t rk_tile_copy_conflicts(const rk_tile_copy *c, uint32_t wave);


/* ---- accumulators as rows and as A operands (tile_acc_frag.c) ------------------------------- */
/* How an accumulator fragment spreads the rows of its block (from the lane
 * map, not from knowledge of the instruction): every lane holds `nrows`
 * distinct rows (slot s belongs to row group row_of_slot[s], rows in
 * ascending order), and a row lives in the lanes that differ from each
 * other only in the lane bits of `xor_mask` (butterfly partners l ^ mask),
 * which together hold all of the block's columns. Used for the per-row
 * reductions of a softmax over an accumulator tile. */
#define RK_TILE_ACC_MAX_SLOTS 64
typedef struct rk_tile_acc_rows {
    uint32_t nmasks, xor_mask[7];                  /* ascending single-bit masks */
    uint32_t nrows;                                /* row groups per lane */
    uint32_t row_of_slot[RK_TILE_ACC_MAX_SLOTS];   /* slot -> row group */
    uint32_t row_slot0[RK_TILE_ACC_MAX_SLOTS];     /* row group -> its first slot */
} rk_tile_acc_rows;
/* RK_ERR_INVALID naming the atom when its accumulator rows are not spread
 * that way (batched atoms, maps whose row depends on lane and slot jointly). */
rk_status rk_tile_acc_rows_make(const rk_mma_atom *c, rk_tile_acc_rows *out);
/* Reduce x (f32, one value per lane) with op across the lanes that share
 * its row: every partner ends with the same bits. */
rk_value rk_tile_acc_row_reduce(rk_kernel *k, const rk_tile_acc_rows *r, rk_tile_red op, rk_value x);

/* Accumulators of atom c as A fragments of atom a (flash attention's
 * P = softmax(S) feeding P * V). The tile is rows x cols: accumulators
 * acc[i * (cols / c->n) + j] (vec<f32>), fragments out[p * (cols / a->k) + q]
 * (vec<elem x a_len>), rows a multiple of c->m and a->m, cols of c->n and
 * a->k. The choice is made on the host from the two lane maps: when every A
 * slot of every lane is an accumulator slot of the same lane, and the same
 * (atom, slot) for all lanes, the fragments are a register re-layout
 * (mma.sync m16n8k16: an accumulator pair of two n8 atoms is one A
 * fragment); otherwise each lane stores its accumulators (rounded to elem)
 * into an LDS scratch tile, the block synchronizes, and the fragments are
 * read back with rk_tile_frag_load (MFMA). */
bool rk_tile_acc_to_a_in_regs(const rk_mma_atom *c, const rk_mma_atom *a);
/* RK_ERR_INVALID naming the rule: lane counts, batched atoms, tile sizes. */
rk_status rk_tile_acc_to_a_check(const rk_mma_atom *c, const rk_mma_atom *a, uint32_t rows, uint32_t cols);
/* The LDS path's scratch: a rows x cols tile (layout `lds`, rk_lds_layout_bytes
 * of it) at element `base` (i32) of `smem` (1-D, elem). The LDS path is a
 * block barrier: every thread of the block must reach it, and the caller
 * keeps the previous readers of the scratch apart (a barrier) before the
 * next call overwrites it. NULL when rk_tile_acc_to_a_in_regs. */
typedef struct rk_tile_acc_scratch {
    rk_value smem, base;
    rk_lds_layout lds;
} rk_tile_acc_scratch;
void rk_tile_acc_to_a(rk_kernel *k, const rk_mma_atom *c, const rk_mma_atom *a, uint32_t rows, uint32_t cols,
                      const rk_value *acc, rk_scalar elem, rk_value lane, const rk_tile_acc_scratch *scratch,
                      rk_value *out);

#ifdef __cplusplus
}
#endif
#endif
