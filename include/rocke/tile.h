/* rocke — tile helpers shared by the kernel families: f16/bf16/f32 conversion,
 * row views with 16-byte vector loads and exact tails, grid-stride loops,
 * wave/warp butterfly reductions and block reductions through LDS.
 * Layer: tile (uses ir, target). */
#ifndef ROCKE_TILE_H
#define ROCKE_TILE_H

#include "rocke/ir.h"
#include "rocke/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- conversions and small constants ------------------------------------ */
/* f16/bf16/f32 scalar or vector -> f32 of the same shape (f32 passes through). */
rk_value rk_tile_to_f32(rk_kernel *k, rk_value v);
/* f32 scalar or vector -> `to` (f16, bf16 or f32) of the same shape, RNE. */
rk_value rk_tile_from_f32(rk_kernel *k, rk_value v, rk_scalar to);
/* f32 of -v, for a second use of a packed (f16/bf16) value after a
 * barrier: compilers merge identical conversions and would keep the f32 copy
 * of a whole cached row live across the barrier; this one is a different
 * expression (one packed negation), so only the packed registers stay live.
 * Callers negate the other operand, which keeps every result bit-identical
 * (IEEE negation is exact and rounding is symmetric). */
rk_value rk_tile_to_f32_neg(rk_kernel *k, rk_value v);
/* vec<f32 x n> filled with x (n == 1: a scalar). */
rk_value rk_tile_f32s(rk_kernel *k, float x, uint32_t n);
/* Apply a scalar f32 -> f32 function to every element of a vector (or to a
 * scalar). fn builds IR for one element; ud is passed through. */
typedef rk_value (*rk_tile_map_fn)(rk_kernel *k, rk_value x, void *ud);
rk_value rk_tile_map(rk_kernel *k, rk_value v, rk_tile_map_fn fn, void *ud);
/* Same for two operands of one shape. */
typedef rk_value (*rk_tile_map2_fn)(rk_kernel *k, rk_value a, rk_value b, void *ud);
rk_value rk_tile_map2(rk_kernel *k, rk_value a, rk_value b, rk_tile_map2_fn fn, void *ud);
/* f32 arithmetic on scalars or vectors of one shape (vector ops when the
 * operands are vectors): a+b, a-b, a*b, a*b+c, maxnum(a,b), and a scalar
 * broadcast to the shape of `like`. */
rk_value rk_tile_add(rk_kernel *k, rk_value a, rk_value b);
rk_value rk_tile_sub(rk_kernel *k, rk_value a, rk_value b);
rk_value rk_tile_mul(rk_kernel *k, rk_value a, rk_value b);
rk_value rk_tile_fma(rk_kernel *k, rk_value a, rk_value b, rk_value c);
rk_value rk_tile_max(rk_kernel *k, rk_value a, rk_value b);
rk_value rk_tile_bcast(rk_kernel *k, rk_value scalar, rk_value like);
/* Bytes of one element of a storage type (2 for f16/bf16, 4 for f32). */
uint32_t rk_tile_elem_bytes(rk_scalar s);

/* ---- row views --------------------------------------------------------------- */
/* How a view handles elements past its length:
 *   RK_TAIL_MASKED  guard each scalar load (fill past the end) and store with
 *                   an if: portable, what NVIDIA uses;
 *   RK_TAIL_BUFFER  a buffer view (tile.buffer_*) over exactly the row: past
 *                   the end loads read 0 and stores are dropped with no
 *                   branch: what AMD uses (native buffer instructions).
 * Both take the 16-byte vector path when every chunk of the access is in range
 * and the row is vector-aligned; otherwise each whole chunk is still one
 * vector access and only chunks touching the tail (or rows whose start is
 * not vec-aligned) run the scalar path. */
typedef enum rk_tail_mode { RK_TAIL_MASKED = 0, RK_TAIL_BUFFER = 1 } rk_tail_mode;
rk_tail_mode rk_tile_default_tail(const rk_target *t);
const char *rk_tail_mode_name(rk_tail_mode m);

typedef struct rk_tile_row {
    rk_value base;      /* ptr<T,global> to the view's element 0 */
    rk_value len;       /* i32 end of the valid elements (lo + the row's length; lo when inactive) */
    rk_value lo;        /* i32 first valid element: 0, or the split's shift (split views) */
    rk_value vec_ok;    /* i1: element 0 of the view is aligned to vec elements */
    rk_value rsrc;      /* buffer view over [base, base+len) (BUFFER mode) */
    rk_scalar elem;     /* storage type */
    uint32_t vec;       /* elements per vector access */
    rk_tail_mode tail;
    bool shifted;       /* a split view (lo may be > 0) */
} rk_tile_row;

/* View row `row` (i32) of a row-major tensor at `ptr` (ptr<elem,global>) with
 * `stride` (i32, elements) between rows and `len` (i32) elements. `active`
 * (i1) false makes the view empty and points it at row 0, so no lane ever
 * forms an address outside the tensor. The byte offset is computed in i64
 * (tensors over 2 GiB). For a 1-D tensor pass row = stride = 0. */
rk_tile_row rk_tile_row_view(rk_kernel *k, rk_value ptr, rk_scalar elem, rk_value row, rk_value stride,
                             rk_value len, rk_value active, uint32_t vec, rk_tail_mode tail);

/* Elements between the vec-aligned address (vec * esize bytes) at or below
 * element `elems` (i64) of ptr and that element, as i32 (< vec): from the
 * address itself, so a tensor that starts inside a vector still gets
 * aligned vector bodies (split row views, span stages). */
rk_value rk_tile_misalign(rk_kernel *k, rk_value ptr, rk_value elems, uint32_t esize, uint32_t vec);

/* A split view: the same row, indexed from `shift` elements before its first
 * element, where shift (0..vec-1, chosen at run time) puts element 0 of the
 * view on a vector-aligned address: every chunk but the first (the row's
 * head, elements [lo, vec)) and the last (its tail) is then one aligned
 * vector access at any row length and any (element-aligned) base. Valid
 * elements are [lo, len); kernels loop over [0, len) as before and index a
 * row's first element as lo. like == NULL: the shift is this row's
 * misalignment (its start address, ptr + row*stride elements, in elements
 * past a vec*elem-byte boundary, read with arith.ptrtoint), or 0 when cap
 * > 0 and the shifted row would not fit in cap elements (a cached row: its
 * chunks cover [0, cap)).
 * like != NULL: share like's shift (views read or written with the same
 * offsets: output, residual, gamma); vec_ok then says whether this tensor
 * is aligned under it, else its chunks take the scalar path. */
rk_tile_row rk_tile_row_view_split(rk_kernel *k, rk_value ptr, rk_scalar elem, rk_value row, rk_value stride,
                                   rk_value len, rk_value active, uint32_t vec, rk_tail_mode tail,
                                   const rk_tile_row *like, uint32_t cap);

/* Load n chunks of vec elements at ascending element offsets offs[] (i32)
 * into out[] as vec<elem x vec>; elements outside [lo, len) read `fill`.
 * When every chunk is in range and vec_ok holds (one branch for all n),
 * the loads are n independent vector loads issued before any use. */
void rk_tile_row_load(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, double fill,
                      rk_value *out);
/* The same, converted to vec<f32 x vec>. */
void rk_tile_row_load_f32(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, double fill,
                          rk_value *out);
/* Store n chunks (vec<elem x vec>) at ascending offsets; elements outside [lo, len)
 * are not written. */
void rk_tile_row_store(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, const rk_value *vals);
/* The same from vec<f32 x vec>, rounded to the row's type (RNE). */
void rk_tile_row_store_f32(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n,
                           const rk_value *vals);
/* i1: chunks at offsets first..last (ascending) are all inside the row and
 * vector-aligned: the condition of the vector fast path. */
rk_value rk_tile_row_whole(rk_kernel *k, const rk_tile_row *r, rk_value first, rk_value last);
/* The fast path alone: n vector loads / stores with no tail check, for
 * code already inside a branch on rk_tile_row_whole (of this view, or of one
 * no longer than it), so one test covers every access of a phase. */
void rk_tile_row_load_whole(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, rk_value *out);
void rk_tile_row_store_whole(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n,
                             const rk_value *vals);
/* The storage-type form of rk_tile_row_load1_f32. */
rk_value rk_tile_row_load1(rk_kernel *k, const rk_tile_row *r, rk_value idx, double fill);
/* One scalar element (f32) at offset idx, fill past len; and one guarded
 * scalar store. For tails and scalar outputs. */
rk_value rk_tile_row_load1_f32(rk_kernel *k, const rk_tile_row *r, rk_value idx, double fill);
void rk_tile_row_store1_f32(rk_kernel *k, const rk_tile_row *r, rk_value idx, rk_value v);

/* ---- a row held in registers (one-pass kernels) ------------------------------ */
#define RK_TILE_MAX_CHUNKS 32
typedef struct rk_tile_regs {
    uint32_t n;                               /* chunks per thread */
    rk_value off[RK_TILE_MAX_CHUNKS];         /* i32 element offset of chunk c */
    rk_value v[RK_TILE_MAX_CHUNKS];           /* vec<f32 x vec>, or vec<elem x vec> when packed */
} rk_tile_regs;
/* Chunk c of lane `lt` (i32) among `tpr` threads sharing the row covers
 * elements [(c*tpr + lt)*vec, +vec): consecutive lanes read consecutive 16
 * bytes (coalesced). Fills regs->off and loads all n chunks as f32. */
void rk_tile_regs_load(rk_kernel *k, const rk_tile_row *r, rk_value lt, uint32_t tpr, uint32_t n, double fill,
                       rk_tile_regs *regs);
/* The same geometry, but the chunks stay in the storage type (packed: a
 * vec<bf16 x 8> is four 32-bit registers, half of its f32 form), so a
 * cached row costs fewer registers; convert where used (rk_tile_to_f32). */
void rk_tile_regs_load_packed(rk_kernel *k, const rk_tile_row *r, rk_value lt, uint32_t tpr, uint32_t n,
                              double fill, rk_tile_regs *regs);
/* Offsets only (for a second row over the same columns: gamma, residual). */
void rk_tile_regs_offsets(rk_kernel *k, const rk_tile_row *r, rk_value lt, uint32_t tpr, uint32_t n,
                          rk_tile_regs *regs);
/* i1 vector mask per chunk: element is inside the row (lo <= off + e < len). */
rk_value rk_tile_chunk_valid(rk_kernel *k, const rk_tile_row *r, rk_value off);

/* ---- loops and thread geometry ------------------------------------------------- */
/* for (i = block_id.x; i < count; i += grid_dim.x): returns i; close with
 * rk_tile_loop_end. */
rk_value rk_tile_grid_loop_begin(rk_kernel *k, rk_value count);
void rk_tile_loop_end(rk_kernel *k);

/* Rows handled by groups of `tpr` consecutive threads, `rpb` rows per block
 * (block = tpr * rpb threads). When a row spans whole waves the row index is
 * made wave-uniform (tile.readfirstlane), so per-row pointers and buffer views
 * stay scalar; narrower rows differ within a wave, and a buffer view over such
 * a row is divergent (AMD then loops over the distinct views): use the masked
 * tail there. */
typedef struct rk_tile_rows {
    uint32_t block, tpr, rpb, wave;
    rk_value tid;      /* thread id x */
    rk_value rg;       /* row group within the block: tid / tpr */
    rk_value lt;       /* thread within the row: tid % tpr */
    rk_value row;      /* global row: block_id.x * rpb + rg */
    rk_value active;   /* i1: row < M */
} rk_tile_rows;
rk_tile_rows rk_tile_rows_begin(rk_kernel *k, uint32_t block, uint32_t rpb, uint32_t wave, rk_value M);

/* ---- reductions (f32) ------------------------------------------------------------ */
typedef enum rk_tile_red { RK_RED_SUM = 0, RK_RED_MAX, RK_RED_MIN } rk_tile_red;
double rk_tile_red_identity(rk_tile_red op);                 /* 0, -inf, +inf */
rk_value rk_tile_combine(rk_kernel *k, rk_tile_red op, rk_value a, rk_value b);
/* Balanced pairwise fold of n scalars (n >= 1), left to right pairs. */
rk_value rk_tile_tree_reduce(rk_kernel *k, rk_tile_red op, const rk_value *vals, uint32_t n);
/* Fold the elements of a vec<f32 x n> (or pass a scalar through). */
rk_value rk_tile_vec_reduce(rk_kernel *k, rk_tile_red op, rk_value v);

/* Tuple reductions: combine(a[0..n), b[0..n)) -> out[0..n). The combine must
 * be commutative bit for bit (so every lane of a butterfly ends with the same
 * bits) and is called with a and b in a fixed order. */
typedef void (*rk_tile_combine_fn)(rk_kernel *k, const rk_value *a, const rk_value *b, rk_value *out, void *ud);
/* A value scaled to a key (online softmax: a sum of exp(x - key)), expressed
 * at the reduced key `all` instead of the lane's own key `own`. */
typedef rk_value (*rk_tile_rescale_fn)(rk_kernel *k, rk_value v, rk_value own, rk_value all, void *ud);
#define RK_TILE_MAX_TUPLE 4
typedef struct rk_tile_reducer {
    uint32_t n;                  /* components (1..RK_TILE_MAX_TUPLE) */
    rk_tile_combine_fn fn;       /* NULL: every component folds with `op` */
    rk_tile_red op;
    void *ud;
    /* n == 2 (key, value) pairs, fn NULL: each butterfly (a wave's, then
     * the fold of the wave partials) reduces the keys with `op` first,
     * rescales every lane's value to the result once and sums the values:
     * one rescale per thread per butterfly instead of a combine per step */
    rk_tile_rescale_fn rescale;
} rk_tile_reducer;

/* Butterfly over tile.shuffle xor with masks width/2 .. 1: every lane of each
 * aligned group of `width` lanes ends with the group's result. width is a
 * power of two <= the target's wave size (never assumed to be 64). */
void rk_tile_wave_reduce_n(rk_kernel *k, const rk_tile_reducer *r, rk_value *vals, uint32_t width);
rk_value rk_tile_wave_reduce(rk_kernel *k, rk_tile_red op, rk_value v, uint32_t width);

/* Block reduction for groups of `group` consecutive threads (a power of two;
 * `groups` of them in the block). group <= wave: a butterfly only, no LDS, no
 * barrier. group > wave: butterfly per wave, lane 0 of each wave writes its
 * partial to LDS, one barrier, then every thread of the group reads the
 * group's partials (vector LDS loads) and folds them in a fixed order, so all
 * threads hold identical bits (no second barrier for a broadcast); with
 * `shuffle_fold` each lane reads one partial (lane mod waves-per-group) and
 * a butterfly over waves-per-group lanes folds them: one value in registers
 * instead of one per wave (register-tight kernels). Each call allocates its
 * own LDS slots; `trailing_barrier` adds a barrier after the reads for
 * callers that reuse the buffer (ours never do). Must be reached by every
 * thread of the block (not under divergent control flow). */
typedef struct rk_tile_block_cfg {
    uint32_t wave, group, groups;
    bool trailing_barrier;
    bool shuffle_fold;
} rk_tile_block_cfg;
void rk_tile_block_reduce_n(rk_kernel *k, const rk_tile_reducer *r, const rk_tile_block_cfg *cfg, rk_value tid,
                            rk_value *vals);
rk_value rk_tile_block_reduce(rk_kernel *k, rk_tile_red op, const rk_tile_block_cfg *cfg, rk_value tid, rk_value v);

/* ---- matrix-atom fragment indices (tile_atom_layout.c) ------------------------------ */
/* The i32 matrix coordinate of one fragment element. */
typedef struct rk_tile_frag_coord {
    rk_value row;      /* A: row, B: k, C/D: row */
    rk_value col;      /* A: k, B: col, C/D: col */
    rk_value batch;    /* block of a batched atom (4x4x4), else the constant 0 */
} rk_tile_frag_coord;
/* Which element slot `slot` of lane `lane` (i32, 0 <= lane < the atom's
 * lanes: a warpgroup atom takes the thread's index in its warpgroup) holds
 * in fragment f of atom `atom`: the catalog's lane map emitted as shifts,
 * ands and adds (a shl per power-of-two stride); the slot terms fold into
 * one constant, and a constant lane gives three constants. An unknown atom
 * or fragment, a slot past the fragment, a lane that is not i32 or a
 * constant lane outside the atom fails the builder (sticky error). */
rk_tile_frag_coord rk_tile_atom_coord(rk_kernel *k, rk_atom_id atom, rk_frag f, rk_value lane, uint32_t slot);

/* ---- cross-block handshake (tile_arrive.c) ------------------------------------------ */
/* After every thread has stored its block's partials: release them, count
 * the block's arrival on counters[at] (f32, an atomic add by thread `tid` 0)
 * and return i1 "this block arrived last of `arrivals`" (every thread gets
 * it; the partials of all blocks are visible to it, acquire). Resetting the
 * counter for the next launch is the caller's. */
rk_value rk_tile_arrive_last(rk_kernel *k, rk_value tid, rk_value counters, rk_value at, uint32_t arrivals);
/* The same with a block-uniform i32 count of arrivals. */
rk_value rk_tile_arrive_last_n(rk_kernel *k, rk_value tid, rk_value counters, rk_value at, rk_value arrivals);

/* ---- grid barrier (tile_grid_barrier.c) --------------------------------------------- */
/* Every block of the grid waits here until all `blocks` (i32, block-uniform:
 * the grid's size) have arrived; every write before it, by any thread of
 * any block, is visible to every thread after it (release on arrival,
 * acquire on the way out, device scope). sync is a ptr<i64, global> whose
 * words at, at + 1 (i32 index) hold the arrival count and the generation:
 * zero before the first launch, left consistent for the next one (the count
 * back at 0, the generation counting barriers) whatever the grid size of
 * the next launch. Only a cooperative kernel may use it (rk_kernel_set_cooperative):
 * the blocks must be resident at once. tid: the thread's linear id in the block. */
void rk_tile_grid_barrier(rk_kernel *k, rk_value tid, rk_value sync, rk_value at, rk_value blocks);

#ifdef __cplusplus
}
#endif
#endif
