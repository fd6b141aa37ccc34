/* rocke — kernel families, private: the per-family table the generic
 * rk_instance API dispatches through (knobs, dimensions, scalars, hooks), the
 * registry, and helpers shared by the row families. Layer: kernels. */
#ifndef ROCKE_KERN_INT_H
#define ROCKE_KERN_INT_H

#include "rocke/kernels.h"
#include "../base/base_int.h"
#include "geom_eval.h"

/* One family: every generic path (CLI, manifests, problems, checks) reads
 * this table, so a family with a new problem shape is one table and its
 * hooks, no shared switch. Hooks get shapes already checked against `dims`
 * (rank, every extent >= 1); s->dim[i] is dims[i]. */
typedef struct kn_family {
    const char *name;
    const rk_knob *knobs;
    uint32_t nknobs;
    const rk_dim_decl *dims;           /* the problem's named dimensions, 1..RK_SHAPE_MAX_DIMS */
    uint32_t ndims;
    const rk_scalar_decl *scalars;     /* every scalar the signature may hold */
    uint32_t nscalars;
    void (*defaults)(rk_instance *in);
    /* the default shape for this instance's knobs as given (attention: D = head_dim, decode Sq = 1);
     * NULL: every dimension at its declared default */
    void (*default_shape)(const rk_instance *in, rk_shape *s);
    /* choose perf knobs not locked (bit i = knob i); NULL: none to choose */
    void (*tune)(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked);
    /* cross-field checks after the per-knob legal-value checks */
    rk_status (*validate)(const rk_instance *in, const rk_target *t);
    /* family limits (row capacity, index widths); NULL: none */
    rk_status (*check_shape)(const rk_instance *in, const rk_shape *s);
    void (*signature)(const rk_instance *in, rk_ksig *out);
    /* the launch geometry as a program over the shape (geometry.c helpers) */
    void (*geometry)(const rk_instance *in, rk_launch_geom *g);
    /* emit the body; params[i] is signature entry i */
    void (*build)(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);
    void (*cost)(const rk_instance *in, const rk_shape *s, double *bytes, double *flops);
    /* host reference: want/tol per output entry of the signature (NULL for others) */
    void (*reference)(const rk_problem *p, double **want, double **tol);
    /* random input range [lo, hi) of an input; away > 0 keeps |v| >= away
     * (divisors). NULL: [-4, 4) */
    void (*input_range)(const rk_instance *in, const rk_kparam *kp, double *lo, double *hi, double *away);
    /* the box (rows x cols elements) and swizzle (bytes) of a RK_KP_TENSORMAP
     * entry; NULL for families without tensor maps */
    void (*tensormap_box)(const rk_instance *in, const rk_kparam *kp, uint32_t *box_rows, uint32_t *box_cols,
                          uint32_t *swizzle_bytes);
    /* the 2-D view a tensormap entry's map takes of its buffer (rows, cols,
     * row_stride_bytes in out, filled for a packed buffer before the call),
     * from the problem's strides; a view TMA cannot address fails naming
     * the stride and the rule. NULL: the packed view */
    rk_status (*tensormap_view)(const rk_problem *p, const rk_kparam *kp, rk_problem_tmap *out);
    /* an entry whose map has rank > 2 (out filled, true); false: the 2-D map of tensormap_box. NULL: none */
    bool (*tensormap_nd)(const rk_problem *p, const rk_kparam *kp, rk_problem_tmap_nd *out);
    /* after the random fill: bring inputs whose legal range depends on the
     * shape into it (index arrays: positions < max_pos). NULL: none */
    void (*fix_inputs)(rk_problem *p);
    /* families whose problem is a group list (grouped_gemm): the list's
     * shape, every group checked; then, on a problem of that shape, the
     * inputs that describe the list (its table). NULL: none (both) */
    rk_status (*group_shape)(const rk_instance *in, const rk_gemm_group *g, uint32_t n, rk_shape *out);
    void (*group_fill)(rk_problem *p, const rk_gemm_group *g);
    /* extents a layout may name beyond the dimensions, derived from the
     * instance and the shape (conv: the output's P, Q); 0 when `name` (len
     * bytes) is none. NULL: layouts name dimensions only */
    uint64_t (*extent)(const rk_instance *in, const rk_shape *s, const char *name, size_t len);
    /* a note for the manifest and the build line (the code path a target
     * gets); NULL or "" when there is none */
    const char *(*note)(const rk_instance *in, const rk_target *t);
    /* the byte alignment a pointer parameter promises (its LLVM `align`).
     * NULL: 16, what every allocation has; families whose kernels take
     * tensors starting at any element (split row views) promise less */
    uint32_t (*param_align)(const rk_instance *in, const rk_kparam *kp);
    /* the inputs' contents against the family's rules (index arrays inside
     * their targets), before a launch; NULL: none */
    rk_status (*check_inputs)(const rk_problem *p);
    /* bytes and flops of a filled problem (per-sequence lengths); NULL: cost of the shape */
    void (*problem_cost)(const rk_problem *p, double *bytes, double *flops);
    /* the inputs (range, fix-ups) and the reference read no performance
     * knob, so the configs of one shape may share one filled problem and its
     * reference (rk_problem_retarget); false: every instance fills its own */
    bool shared_problem;
} kn_family;

/* instance.c: the registry. Register a family table (kept by pointer, must
 * outlive its use); checks the table (unique name, dimensions and scalars
 * well formed, hooks present) and gives it the next id. Thread-safe;
 * register before another thread uses the id. */
rk_status kn_family_register(const kn_family *f, rk_family_id *out);

/* reference.c: double-precision host references, one per family */
void kn_elementwise_reference(const rk_problem *p, double **want, double **tol);
void kn_reduce_reference(const rk_problem *p, double **want, double **tol);
void kn_softmax_reference(const rk_problem *p, double **want, double **tol);
void kn_norm_reference(const rk_problem *p, double **want, double **tol);
void kn_transpose_reference(const rk_problem *p, double **want, double **tol);

extern const kn_family kn_elementwise, kn_reduce, kn_softmax, kn_layernorm, kn_rmsnorm, kn_transpose, kn_gemm,
    kn_batched_gemm;
/* the fused serving ops: one file each, references in fused_reference.c */
extern const kn_family kn_grouped_gemm;
extern const kn_family kn_conv, kn_conv3d;
extern const kn_family kn_attention;   /* attention.c */
extern const kn_family kn_kv_append;   /* kv_append.c, reference in kv_append_reference.c */
void kn_kv_append_reference(const rk_problem *p, double **want, double **tol);
rk_status kn_kv_append_check_inputs(const rk_problem *p);
void kn_kv_append_fix_inputs(rk_problem *p);
extern const kn_family kn_add_rmsnorm_quant, kn_rope, kn_topk_softmax, kn_permute;
void kn_add_rmsnorm_quant_reference(const rk_problem *p, double **want, double **tol);
void kn_rope_reference(const rk_problem *p, double **want, double **tol);
void kn_topk_softmax_reference(const rk_problem *p, double **want, double **tol);
void kn_permute_reference(const rk_problem *p, double **want, double **tol);
/* The table of a valid id (rk_bug otherwise); kn_family_find: NULL if none. */
const kn_family *kn_family_of(rk_family_id f);

/* geometry.c: writing a geometry program (rk_launch_geom; ops in geom_eval.h).
 * Each call appends words; kn_geom_axis closes the next grid axis. */
void kn_geom_dim(rk_launch_geom *g, uint32_t dim);            /* push dimension `dim` */
void kn_geom_const(rk_launch_geom *g, uint64_t c);            /* push c */
void kn_geom_op(rk_launch_geom *g, int op);                   /* RK_GEOM_ADD/SUB/MIN/MUL/DIV/CDIV */
void kn_geom_cdiv_dim(rk_launch_geom *g, uint32_t dim, uint64_t c); /* push ceil(dim / c) */
void kn_geom_axis(rk_launch_geom *g);
const kn_family *kn_family_find(rk_family_id f);
/* instance.c: the family's tune hook alone (rk_instance_tune adds the tuning database, tuning.c). */
rk_status kn_instance_heuristic(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked);

/* shape.c: the row families' [M, N] problem: dims and scalars (M, N i32). */
extern const rk_dim_decl kn_row_dims[2];
extern const rk_scalar_decl kn_row_scalars[2];
/* Extent of dimension `name` in s (rk_bug when the family has none: a
 * family's hooks ask only for their own dimensions). */
uint64_t kn_dim(const kn_family *f, const rk_shape *s, const char *name);
/* Rank equals the family's, every extent >= 1. */
rk_status kn_shape_check(const kn_family *fam, const rk_shape *s);

/* ---- knob tables ------------------------------------------------------------ */
extern const uint32_t kn_legal_wave[], kn_legal_block[], kn_legal_vec[], kn_legal_rpb[], kn_legal_chunks[],
    kn_legal_unroll[], kn_legal_tile[], kn_legal_pad[], kn_legal_minb[], kn_legal_slices[];
extern const char *const kn_tail_names[];
/* dtype knobs' legal types (rk_scalar values, 0-terminated; the knob's `legal`): f16, bf16, f32
 * (KN_DTYPE); f16, bf16 (KN_DTYPE_HALF); f16, bf16 and the 8-bit floats (KN_DTYPE_F8: matrix inputs) */
extern const uint32_t kn_dtypes_float[], kn_dtypes_half[], kn_dtypes_mma[];
/* Is s in the 0-terminated type list? Its names joined by '|' ("f16|bf16"; returns buf). */
bool kn_dtype_in(const uint32_t *list, rk_scalar s);
const char *kn_dtype_list_text(const uint32_t *list, char *buf, size_t len);
/* The legal values of knob `name` of table kb[0..n) as rk_knob_legal_text writes them ("?" when
 * no such knob): for a plan's refusal that names the knob's own list. Returns buf. */
const char *kn_knob_legal(const rk_knob *kb, uint32_t n, const char *name, char *buf, size_t len);

#define KN_U32(nm, tg, field, legal, perf, help) \
    {nm, tg, RK_KNOB_U32, offsetof(rk_instance, field), NULL, legal, perf, help}
#define KN_BOOL(nm, tg, field, help) {nm, tg, RK_KNOB_BOOL, offsetof(rk_instance, field), NULL, NULL, false, help}
#define KN_PBOOL(nm, tg, field, help) {nm, tg, RK_KNOB_BOOL, offsetof(rk_instance, field), NULL, NULL, true, help}
#define KN_DTYPE(nm, tg, field, help) \
    {nm, tg, RK_KNOB_DTYPE, offsetof(rk_instance, field), NULL, kn_dtypes_float, false, help}
#define KN_DTYPE_HALF(nm, tg, field, help) \
    {nm, tg, RK_KNOB_DTYPE, offsetof(rk_instance, field), NULL, kn_dtypes_half, false, help}
/* f16, bf16 and the 8-bit floats (each target takes its own encoding: rk_knob_fp8_note) */
#define KN_DTYPE_F8(nm, tg, field, help) \
    {nm, tg, RK_KNOB_DTYPE, offsetof(rk_instance, field), NULL, kn_dtypes_mma, false, help}
#define KN_ENUM(nm, tg, field, names, perf, help) \
    {nm, tg, RK_KNOB_ENUM, offsetof(rk_instance, field), names, NULL, perf, help, 0}
/* a u32 knob kernel names leave out at 0 (added after names were published) */
#define KN_U32_QUIET(nm, tg, field, legal, perf, help) \
    {nm, tg, RK_KNOB_U32, offsetof(rk_instance, field), NULL, legal, perf, help, 1}
/* an enum knob kernel names leave out at its first value (added after names were published) */
#define KN_ENUM_QUIET(nm, tg, field, names, perf, help) \
    {nm, tg, RK_KNOB_ENUM, offsetof(rk_instance, field), names, NULL, perf, help, 1}
#define KN_TUPLE(nm, tg, field, count, legal, perf, help) \
    {nm, tg, RK_KNOB_TUPLE, offsetof(rk_instance, field), NULL, legal, perf, help, count}
#define KN_EPI(nm, field, help) {nm, "f", RK_KNOB_EPILOGUE, offsetof(rk_instance, field), NULL, NULL, false, help, 0}
/* the nine row knobs of rk_row_knobs at `base` (e.g. u.softmax.k) */
#define KN_ROW_KNOBS(base)                                                                                 \
    KN_U32("wave", "w", base.wave, kn_legal_wave, true, "target wave/warp size (64 CDNA, 32 NVIDIA)"),    \
    KN_U32("block_size", "b", base.block_size, kn_legal_block, true, "threads per block"),                \
    KN_U32("vec", "v", base.vec, kn_legal_vec, true, "elements per vector access (<= 16 bytes)"),         \
    KN_U32("rows_per_block", "r", base.rows_per_block, kn_legal_rpb, true, "rows handled by one block"),  \
    KN_U32("chunks", "k", base.chunks, kn_legal_chunks, true,                                              \
           "vectors per thread held in registers (0: looped row, any N)"),                                 \
    KN_U32("unroll", "u", base.unroll, kn_legal_unroll, true, "looped path: vector loads in flight"),     \
    KN_ENUM("tail", "t", base.tail, kn_tail_names, true, "tail handling: masked or buffer views"),      \
    KN_U32("min_blocks_per_sm", "mb", base.min_blocks, kn_legal_minb, true,                                \
           "occupancy hint: resident blocks per SM the registers must allow (0: none)"),                 \
    KN_PBOOL("split", "sp", base.split,                                                                     \
             "peel each row's head so vector accesses stay aligned at any row length")

bool kn_dtype_ok(rk_scalar s);
const char *kn_dtype_name(rk_scalar s);

/* ---- row families ------------------------------------------------------------- */
/* Knob index of the first row knob in a family table (for `locked`). */
void kn_row_defaults(rk_row_knobs *k);
/* max_chunks: vectors per thread before more threads share a row; max_elems
 * (0: none) caps the elements per thread the same way (16-bit rows: 16);
 * split_elems (above max_elems: the norms on NVIDIA) lets direct rows that
 * start unaligned take up to that many elements a thread where max_elems
 * would leave them two full chunks (rowcommon.c, split_wide). */
void kn_row_tune(rk_row_knobs *k, const rk_target *t, rk_scalar widest, const rk_shape *s, uint64_t locked,
                 uint32_t first_knob, uint32_t max_chunks, uint32_t max_elems, uint32_t split_elems);
/* NVIDIA, cached rows: min_blocks from the register estimate (packed row +
 * base_regs), at most the threads an SM holds. No-op when locked or looped. */
void kn_row_tune_occupancy(rk_row_knobs *k, const rk_target *t, rk_scalar elem, uint64_t locked, uint32_t first_knob,
                           uint32_t base_regs);
/* Launch-bound attributes from the knobs (min_blocks_per_sm / waves_per_eu). */
void kn_row_attrs(rk_kernel *kern, const rk_row_knobs *k, const rk_target *t);
rk_status kn_row_validate(const rk_row_knobs *k, const rk_target *t, rk_scalar a, rk_scalar b);
/* The same, also taking slices > 1 with chunks > 0 (a cached slice a block:
 * rows_per_block 1, masked tails): the families whose cached path splits. */
rk_status kn_row_validate_cached_slices(const rk_row_knobs *k, const rk_target *t, rk_scalar a, rk_scalar b);
rk_status kn_row_check_shape(const rk_row_knobs *k, const rk_shape *s);
void kn_row_geometry(const rk_row_knobs *k, rk_launch_geom *g);
static inline uint32_t kn_row_tpr(const rk_row_knobs *k) { return k->block_size / k->rows_per_block; }
/* Elements a cached row holds (0: looped, any length): over its slices
 * when a cached row is split over blocks; a span (stage=span) holds
 * `chunks` elements a thread, not vectors. */
static inline uint32_t kn_row_cap(const rk_row_knobs *k) {
    if (k->stage == RK_STAGE_SPAN) return kn_row_tpr(k) * k->chunks;
    return kn_row_tpr(k) * k->vec * k->chunks * (k->slices > 1 ? k->slices : 1);
}
/* The view of row `row` of tensor ptr (stride and length N) for the row
 * families: a split view (lead when like is NULL) when the knob says so. */
rk_tile_row kn_row_view(rk_kernel *k, const rk_row_knobs *kn, rk_value ptr, rk_scalar elem, rk_value row,
                        rk_value N, rk_value active, const rk_tile_row *like);
/* The alignment a row family's pointer promises: split views read the
 * address, so any element-aligned tensor is fine; otherwise 16 bytes. */
uint32_t kn_row_param_align(const rk_row_knobs *k, const rk_kparam *kp);

/* The `slices` knob of the row family whose spec (with rk_row_knobs k) is
 * at `spec` (after its other knobs). */
#define KN_SLICES_KNOB(spec)                                                                              \
    KN_U32("slices", "sl", spec.k.slices, kn_legal_slices, true,                                         \
           "blocks per row (grid y): >1 splits long rows, partial statistics merged through Work")
/* slices > 1 (chosen when rows are fewer than compute units and long, or
 * locked): looped rows, one per block, a block size for the slice. */
void kn_row_tune_slices(rk_row_knobs *k, const rk_target *t, const rk_shape *s, uint64_t locked, uint32_t first_knob,
                        uint32_t slices_knob);

/* row_slices.c: the split-row path. Block (x, y), launch index x + y*M,
 * takes slice (index mod S) of row (index / S), so a row's slices start
 * together (kn_slices_rows sets g->row; call it after rk_tile_rows_begin):
 * pass 1 over [lo, hi) reduces nstat f32 statistics, which the block
 * publishes into Work; the last block of the row to arrive (an f32 counter
 * per row) merges the slices in slice order (deterministic); reduce writes
 * the row's result there, softmax and the norms spread their output pass
 * over the row's blocks (below). */
typedef struct kn_slices {
    uint32_t n, nstat;
    rk_value work, sync, row, M, tid;
    rk_value sid;         /* i32: this block's slice */
    rk_value lo, hi;      /* this block's loop range of the row view */
    rk_value per, len;    /* elements per slice (whole loop steps), the view's length */
} kn_slices;
/* Work ("R,M": R = slices*nstat + 1 f32 per row, + nstat with spread) and,
 * spread (an output pass: softmax, the norms), Sync ("S+2,M" i32), when
 * k->slices > 1. */
void kn_slices_signature(rk_ksig *s, const rk_row_knobs *k, uint32_t nstat, bool spread);
/* The slice of a row view [0, len) for block y: `stride` (elements one
 * loop step covers) divides every slice but the last. sync: the Sync
 * parameter (spread families; else unused). */
void kn_slices_rows(rk_kernel *k, const rk_row_knobs *kn, rk_tile_rows *g, rk_value M);
kn_slices kn_slices_begin(rk_kernel *k, const rk_row_knobs *kn, uint32_t nstat, rk_value work, rk_value sync,
                          const rk_tile_rows *g, rk_value M, rk_value len, uint32_t stride);
/* Store this block's stats (identical in every thread), count its arrival;
 * i1 (block-uniform): this block arrived last. */
rk_value kn_slices_publish(rk_kernel *k, const kn_slices *sl, const rk_value *stats);
/* In the last block: stats = the slices merged in slice order with fn (or,
 * fn NULL, each component folded with op); resets the row's counter. */
void kn_slices_gather(rk_kernel *k, const kn_slices *sl, rk_tile_combine_fn fn, rk_tile_red op, rk_value *stats);

/* The output pass over every block of the row (row_slices.c). After
 * kn_slices_publish: the last block merges (kn_slices_gather), publishes
 * the merge and raises the row's flag; every other block waits for the
 * flag (a bounded spin: it never waits on a block that has not started)
 * and claims its own slice by CAS, or leaves it to the last block when the
 * flag does not come (a GPU running its blocks one after another, the
 * emulator). Each slice is written once, with the same merged statistics
 * whoever writes it: the output does not depend on timing.
 *   sp = kn_slices_merge(...)              stats := the merge where needed
 *   kn_slices_pass_begin(k, &sp, sl, &from, &to)   the slices this block writes
 *     ... the output pass over [from, to) of the row view ...
 *   kn_slices_pass_end(k)
 *   if (sp.last) kn_slices_finish(k, sl)   Sync reset for the next launch */
typedef struct kn_spread {
    rk_value last, mine;  /* i1, block-uniform: arrived last / writes its own slice */
    rk_value lds;         /* i32[slices + 1] broadcast slots */
} kn_spread;
kn_spread kn_slices_merge(rk_kernel *k, const kn_slices *sl, rk_value last, rk_tile_combine_fn fn, rk_tile_red op,
                          rk_value *stats);
void kn_slices_pass_begin(rk_kernel *k, kn_spread *sp, const kn_slices *sl, rk_value *from, rk_value *to);
void kn_slices_pass_end(rk_kernel *k);
void kn_slices_finish(rk_kernel *k, const kn_slices *sl);

/* row_span.c: the span stage (stage=span; docs/kernels.md, "Span stage").
 * Block b's rows [b*R, b*R + R) (R = rows_per_block, fewer in the last
 * block) of a packed [M, N] tensor are one span; LDS holds it from the
 * aligned address at or below its first element (index mis). */
extern const char *const kn_stage_names[];
#define KN_STAGE_KNOB(spec)                                                                              \
    KN_ENUM_QUIET("stage", "sg", spec.k.stage, kn_stage_names, true,                                     \
                  "direct: rows read and written in place; span: the block's rows staged through LDS "     \
                  "with aligned 16-byte accesses (cached rows, slices=1); auto: both, direct when N % vec "  \
                  "== 0 and every tensor starts on 16 bytes, else the span (chosen at run time)")
#define KN_SPAN_MAX_CHUNKS 32   /* elements a span thread holds (chunks, its largest legal value) */
typedef struct kn_span {
    rk_scalar elem;
    uint32_t V, iters, block;   /* elements a 16-byte vector; vectors a thread copies; threads */
    rk_value lds;               /* elem[]: LDS element i is global element base + i */
    rk_value base;              /* global ptr: the aligned address at or below the span's start */
    rk_value mis, end, nv;      /* i32: LDS index of the span's first element, of its end; vectors */
    rk_value N;
} kn_span;
/* A thread's view of its row in one span: element lt + j*tpr at LDS index
 * first + j*tpr. */
typedef struct kn_span_row {
    uint32_t tpr;
    rk_value first, lt, N, active;
} kn_span_row;
/* LDS bytes of the spans of tensors elems[0..n) for these knobs. */
uint64_t kn_span_bytes(const rk_row_knobs *k, const rk_scalar *elems, uint32_t n);
/* The most LDS the spans of a block may take on t (static shared memory,
 * less the reductions' slots), and the heuristic's budget (a quarter of an
 * SM's or CU's LDS at most, so several blocks stay resident). */
uint32_t kn_span_limit(const rk_target *t);
uint32_t kn_span_budget(const rk_target *t);
/* The span of this block in tensor ptr (allocates its LDS). */
kn_span kn_span_open(rk_kernel *k, const rk_row_knobs *kn, rk_value ptr, rk_scalar elem, rk_value M, rk_value N);
/* Global -> LDS (no barrier: the caller syncs once after its loads), and
 * LDS -> global (after the caller's barrier). */
void kn_span_load(rk_kernel *k, const kn_span *sp, rk_value tid);
void kn_span_store(rk_kernel *k, const kn_span *sp, rk_value tid);
kn_span_row kn_span_row_of(rk_kernel *k, const kn_span *sp, const rk_tile_rows *g);
/* Element j of the thread's row (i32) and whether it is inside the row. */
rk_value kn_span_elem(rk_kernel *k, const kn_span_row *r, uint32_t j, rk_value *valid);
/* The thread's n elements as f32 (fill outside the row); n results into
 * the span (elements outside the row are not written). */
void kn_span_read_f32(rk_kernel *k, const kn_span *sp, const kn_span_row *r, uint32_t n, double fill,
                      rk_value *out);
void kn_span_write_f32(rk_kernel *k, const kn_span *sp, const kn_span_row *r, uint32_t n, const rk_value *vals);
/* kn_row_tune and kn_row_tune_slices with the stage chosen (unless
 * locked; elems[0..n): the tensors a kernel stages): span when N % vec != 0,
 * N <= span_max_n (0: any; the family's measured limit), the row is cached
 * in one block and the spans fit the budget, its geometry sized without a
 * split view's head; else direct, tuned as before. */
void kn_row_tune_stage(rk_row_knobs *k, const rk_target *t, rk_scalar widest, const rk_shape *s, uint64_t locked,
                       uint32_t first_knob, uint32_t max_chunks, uint32_t max_elems, uint32_t split_elems,
                       uint32_t slices_knob, uint32_t stage_knob, const rk_scalar *elems, uint32_t n,
                       uint64_t span_max_n);
/* The longest odd row each family stages through LDS (H200, bench/RESULTS.md session 15 call 7:
 * bf16 65536 rows, span against direct in one call; span / direct GB/s): softmax wins to 511 (2547 /
 * 2162), loses at 767 (2552 / 3028) and 1001 (2503 / 3307); RMSNorm wins to 511, ties at 767 (2737 /
 * 2761), loses at 1001 (2555 / 3241); LayerNorm wins to 767 (2240 / 1783), ties at 1001, loses at
 * 4097 (1619 / 1988); sum wins at 127 (1570 / 1269), ties at 31..191, loses from 255 (1869 / 3449).
 * The norms on NVIDIA (_NV) against direct rows of four chunks (rowcommon.c, split_wide; session 18
 * call 1): RMSNorm's span loses at 767 (2719 / 3080), LayerNorm's at 1001 (2211 / 2410) and still wins
 * at 767 (2232 / 2027); the cuts sit between measured lengths (RMSNorm's span won at 511). */
/* Split rows up to this many rows take the few-rows rule (kn_row_tune_slices), and a shape-less
 * build's split variants follow that cut. */
#define KN_SLICE_FEW_ROWS 8u
#define KN_SPAN_MAX_N_SOFTMAX 639
#define KN_SPAN_MAX_N_RMSNORM 767
#define KN_SPAN_MAX_N_LAYERNORM 1023
#define KN_SPAN_MAX_N_RMSNORM_NV 639
#define KN_SPAN_MAX_N_LAYERNORM_NV 895
#define KN_SPAN_MAX_N_REDUCE 191
/* The row checks of kn_row_validate_cached_slices (elems[0], elems[n-1]:
 * the input and output types), and for stage=span: a cached row (chunks
 * > 0 elements a thread) in one block (slices = 1) whose spans fit
 * kn_span_limit. */
rk_status kn_row_validate_stage(const rk_row_knobs *k, const rk_target *t, const rk_scalar *elems, uint32_t n);

/* row_auto.c: stage=auto, direct rows and the span in one kernel, chosen at
 * run time (docs/kernels.md, "Span stage"). chunks counts vectors (the
 * direct path's meaning); the span path holds chunks x vec elements a
 * thread at the same threads a row. */
/* Elements a thread the shape variants give an auto kernel's span (the
 * heuristic's span limit: 16 f32 registers). */
#define KN_AUTO_MAX_ELEMS 16u
/* The knobs of each path: direct with plain views (taken only on aligned
 * rows), and the span. */
rk_row_knobs kn_auto_direct_knobs(const rk_row_knobs *k);
rk_row_knobs kn_auto_span_knobs(const rk_row_knobs *k);
/* i1, uniform: N % vec == 0 and every pointer in ptrs[0..n) 16-byte aligned. */
rk_value kn_auto_direct_cond(rk_kernel *k, const rk_row_knobs *kn, rk_value N, const rk_value *ptrs, uint32_t n);
/* Both paths' checks (elems as kn_row_validate_stage's). */
rk_status kn_row_validate_auto(const rk_row_knobs *k, const rk_target *t, const rk_scalar *elems, uint32_t n);
/* Whether an auto kernel of these knobs keeps to KN_AUTO_MAX_ELEMS and the
 * span budget (kn_span_budget), and its LDS leaves the direct rows their
 * resident blocks (by threads and the occupancy hint): what the shape
 * variants take. */
bool kn_row_auto_fits(const rk_row_knobs *k, const rk_target *t, const rk_scalar *elems, uint32_t n);

/* transpose_split.c: the split tile of transpose and permute. A block's
 * tile: its first row and column inside the matrix, and the first row of
 * the matrix in X ([.., N]) and in Y ([.., M]) (0 for a plain transpose). */
typedef struct kn_tile_at { rk_value row0, col0, xbase, ybase; } kn_tile_at;
/* Columns of the LDS tile (the tile, a vector for a split view's head, the pad). */
uint32_t kn_transpose_lds_cols(const rk_transpose_spec *s);
/* Vector v to LDS row r from column c, in the widest aligned pieces. */
void kn_transpose_lds_put(rk_kernel *k, const rk_transpose_spec *s, rk_value lds, rk_value r, rk_value c, rk_value v);
/* Move the tile at `at` of X [.., N] to Y [.., M] with split sub-row views. */
void kn_transpose_tile_split(rk_kernel *k, const rk_transpose_spec *s, const kn_tile_at *at, rk_value X, rk_value Y,
                             rk_value M, rk_value N);
/* Transpose and permute: split when a row of X or of Y is not a multiple
 * of vec (unless locked); pointers promise element alignment when split. */
uint32_t kn_transpose_param_align(const rk_instance *in, const rk_kparam *kp);

/* Signature building. */
/* dims: a pointer's layout ("M,N"), NULL for scalars. */
void kn_sig_add(rk_ksig *s, const char *name, bool ptr, rk_scalar type, rk_kparam_role role, const char *dims);

/* problem.c: host buffers in device format. */
double kn_get(const rk_host_buf *b, uint64_t i);
void kn_set(rk_host_buf *b, uint64_t i, double v);       /* rounds RNE to the buffer's type */
double kn_round(rk_scalar t, double v);                  /* v as type t would hold it */
double kn_ulp(rk_scalar t, double v);                    /* spacing of type t at |v| */
const rk_host_buf *kn_buf(const rk_problem *p, const char *name);   /* NULL if absent */
int kn_buf_index(const rk_problem *p, const char *name);
double kn_scalar(const rk_problem *p, const char *name);   /* scalar parameter by name (0 if absent) */
uint64_t kn_splitmix(uint64_t *state);                   /* splitmix64: the next pseudo-random word */
/* A buffer's contents before the run: an in-out buffer's saved copy, an
 * input itself (rk_bug when absent). */
rk_host_buf kn_input(const rk_problem *p, const char *name);

/* Small IR helpers. */
static inline rk_value kn_i32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

#endif
