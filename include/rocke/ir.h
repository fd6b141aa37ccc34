/* rocke — kernel IR: types, the op table, values, ops, regions, kernels, the
 * builder, verifier, printer, serializer/parser and passes.
 * Layer: ir (uses base only). */
#ifndef ROCKE_IR_H
#define ROCKE_IR_H

#include <stdio.h>

#include "rocke/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================= */
/* Handles passed by value: `if (v)` does not compile, so a device value can
 * never steer host control flow by accident. id 0 is "none"/poison.        */
typedef struct rk_type { uint32_t id; } rk_type;
typedef struct rk_value { uint32_t id; } rk_value;

static inline bool rk_type_eq(rk_type a, rk_type b) { return a.id == b.id; }
static inline bool rk_value_eq(rk_value a, rk_value b) { return a.id == b.id; }
static inline bool rk_type_ok(rk_type t) { return t.id != 0; }
static inline bool rk_value_ok(rk_value v) { return v.id != 0; }

typedef struct rk_kernel rk_kernel;
typedef struct rk_op rk_op;
typedef struct rk_region rk_region;

/* ---- types --------------------------------------------------------------- */
/* Scalars have fixed ids (no kernel needed); composite types are interned per
 * kernel. Canonical names are the wire form: i32, vec<f16x8>, ptr<f32,global>,
 * smem<f16, [64x32]>, rsrc. */
typedef enum rk_scalar {
    RK_S_NONE = 0,
    RK_S_I1, RK_S_I4, RK_S_I8, RK_S_I16, RK_S_I32, RK_S_I64,
    RK_S_F16, RK_S_BF16, RK_S_F32, RK_S_F64,
    RK_S_FP8E4M3,      /* OCP e4m3fn: bias 7, max 448, NaN S.1111.111, no inf (gfx950, NVIDIA) */
    RK_S_BF8E5M2,      /* OCP e5m2: bias 15, IEEE-like inf/NaN (gfx950, NVIDIA) */
    RK_S_FP8E4M3FNUZ,  /* FNUZ e4m3: bias 8, max 240, NaN = 0x80 only (gfx942) */
    RK_S_BF8E5M2FNUZ,  /* FNUZ e5m2: bias 16, max 57344, NaN = 0x80 only (gfx942) */
    RK_S__COUNT
} rk_scalar;

#define RK_TYPE_RSRC_ID 16u   /* the buffer-resource type (128-bit descriptor) */
#define RK_TYPE_FIRST_COMPOSITE 32u

#define RK_T_NONE ((rk_type){0})
#define RK_T_I1   ((rk_type){RK_S_I1})
#define RK_T_I4   ((rk_type){RK_S_I4})
#define RK_T_I8   ((rk_type){RK_S_I8})
#define RK_T_I16  ((rk_type){RK_S_I16})
#define RK_T_I32  ((rk_type){RK_S_I32})
#define RK_T_I64  ((rk_type){RK_S_I64})
#define RK_T_F16  ((rk_type){RK_S_F16})
#define RK_T_BF16 ((rk_type){RK_S_BF16})
#define RK_T_F32  ((rk_type){RK_S_F32})
#define RK_T_F64  ((rk_type){RK_S_F64})
#define RK_T_FP8E4M3 ((rk_type){RK_S_FP8E4M3})
#define RK_T_BF8E5M2 ((rk_type){RK_S_BF8E5M2})
#define RK_T_FP8E4M3FNUZ ((rk_type){RK_S_FP8E4M3FNUZ})
#define RK_T_BF8E5M2FNUZ ((rk_type){RK_S_BF8E5M2FNUZ})
#define RK_T_RSRC ((rk_type){RK_TYPE_RSRC_ID})

typedef enum rk_type_kind {
    RK_TK_NONE = 0, RK_TK_SCALAR, RK_TK_VEC, RK_TK_PTR, RK_TK_SMEM, RK_TK_RSRC
} rk_type_kind;

typedef enum rk_addrspace {
    RK_AS_GLOBAL = 0, RK_AS_CONSTANT, RK_AS_LDS, RK_AS_PRIVATE, RK_AS_FLAT, RK_AS__COUNT
} rk_addrspace;

rk_type rk_type_vec(rk_kernel *k, rk_type elem, uint32_t n);
rk_type rk_type_ptr(rk_kernel *k, rk_type pointee, rk_addrspace as);
rk_type rk_type_smem(rk_kernel *k, rk_type elem, const uint32_t *dims, uint32_t rank);
/* Parse a canonical type name ("vec<f32x4>", "ptr<f16,global>", ...). Returns
 * RK_T_NONE and sets rk_error_message() when malformed. */
rk_type rk_type_parse(rk_kernel *k, const char *text);
rk_type rk_scalar_from_name(const char *name);     /* scalars only */

const char *rk_type_name(const rk_kernel *k, rk_type t);   /* canonical name */
rk_type_kind rk_type_kind_of(const rk_kernel *k, rk_type t);
rk_type rk_type_elem(const rk_kernel *k, rk_type t);       /* vec elem, ptr pointee, smem elem */
uint32_t rk_type_count(const rk_kernel *k, rk_type t);     /* vec lanes, else 1 */
rk_addrspace rk_type_space(const rk_kernel *k, rk_type t); /* ptr, smem (LDS) */
uint32_t rk_type_rank(const rk_kernel *k, rk_type t);      /* smem */
const uint32_t *rk_type_dims(const rk_kernel *k, rk_type t);
uint32_t rk_type_bits(const rk_kernel *k, rk_type t);      /* storage bits; ptr 64; smem total */
static inline rk_scalar rk_type_scalar(rk_type t) {
    return t.id < RK_S__COUNT ? (rk_scalar)t.id : RK_S_NONE;
}
bool rk_scalar_is_int(rk_scalar s);     /* i1..i64 */
bool rk_scalar_is_float(rk_scalar s);   /* f16 bf16 f32 f64 (not fp8: storage-only) */
bool rk_scalar_is_f8(rk_scalar s);
uint32_t rk_scalar_bits(rk_scalar s);
const char *rk_scalar_name(rk_scalar s);
const char *rk_addrspace_name(rk_addrspace as);

/* ---- attributes ----------------------------------------------------------- */
typedef enum rk_attr_kind {
    RK_AK_INT, RK_AK_FLOAT, RK_AK_STR, RK_AK_BOOL, RK_AK_LIST, RK_AK_MAP
} rk_attr_kind;

typedef struct rk_attr rk_attr;
typedef struct rk_attr_val {
    rk_attr_kind kind;
    uint32_t n;                          /* LIST/MAP length */
    union {
        int64_t i;
        double f;
        const char *s;
        bool b;
        struct rk_attr_val *list;
        rk_attr *map;
    } u;
} rk_attr_val;
struct rk_attr { const char *key; rk_attr_val val; };

/* An attribute map: insertion order kept; printers sort keys by code point. */
typedef struct rk_attrs { rk_attr *items; uint32_t n, cap; } rk_attrs;

const rk_attr_val *rk_attrs_get(const rk_attrs *a, const char *key);
bool rk_attrs_int(const rk_attrs *a, const char *key, int64_t *out);
bool rk_attrs_num(const rk_attrs *a, const char *key, double *out);   /* int or float */
const char *rk_attrs_str(const rk_attrs *a, const char *key);
bool rk_attrs_bool(const rk_attrs *a, const char *key, bool dflt);

/* ---- the op table ---------------------------------------------------------- */
/* Target features an op or atom may require (a target has a set of these). */
enum {
    RK_FEAT_AMD    = 1u << 0,  /* any AMDGPU target */
    RK_FEAT_NV     = 1u << 1,  /* any NVPTX target */
    RK_FEAT_GFX9   = 1u << 2,  /* CDNA (gfx90a, gfx942, gfx950): legacy s_waitcnt, MFMA */
    RK_FEAT_GFX940 = 1u << 3,  /* gfx942+: fp8 conversions and MFMA, global_load_lds */
    RK_FEAT_GFX950 = 1u << 4,  /* gfx950: transposed LDS reads, permlane32_swap, K-packed MFMA */
    RK_FEAT_GFX10P = 1u << 5,  /* RDNA+: row_xmask DPP, permlane16/x16, dpp8 */
    RK_FEAT_GFX11P = 1u << 6,  /* gfx11+: permlane64, WMMA */
    RK_FEAT_SM80   = 1u << 7,  /* Ampere+: cp.async, mma.sync, ldmatrix */
    RK_FEAT_SM90   = 1u << 8,  /* Hopper: TMA, clusters */
    RK_FEAT_SM90A  = 1u << 9,  /* Hopper "a": wgmma, setmaxnreg */
    RK_FEAT_XF32   = 1u << 10  /* gfx942 only: xf32 (tf32) MFMA, removed in gfx950 */
};

/* Op flags: drive folding, CSE and DCE. An op that is not PURE is never
 * removed or merged (ALLOC ops are removed only when their result is unused). */
enum {
    RK_F_PURE       = 1u << 0,  /* result depends only on operands+attrs */
    RK_F_COMMUT     = 1u << 1,  /* binary and commutative */
    RK_F_CONVERGENT = 1u << 2,  /* reads other lanes: never merged across regions */
    RK_F_READS      = 1u << 3,  /* reads memory */
    RK_F_WRITES     = 1u << 4,  /* writes memory */
    RK_F_BARRIER    = 1u << 5,  /* orders execution or memory (barriers, waits, hints) */
    RK_F_ALLOC      = 1u << 6,  /* allocation: removable when unused */
    RK_F_REGION     = 1u << 7,  /* structured control flow */
    RK_F_TERM       = 1u << 8   /* ends a region */
};

/* Type rules (see ops.def and check.c). */
#define RK_RULES(X)                                                              \
    X(R_SAME) X(R_SIG) X(R_CMP) X(R_SELECT) X(R_CONST) X(R_CONST_VEC) X(R_WIDEN)   \
    X(R_NARROW) X(R_BITCAST) X(R_VREDUCE) X(R_VCMP) X(R_VSELECT) X(R_VEXTRACT)     \
    X(R_VINSERT) X(R_VSPLAT) X(R_VPACK) X(R_VCONCAT) X(R_VSHUFFLE) X(R_GLOAD)      \
    X(R_GSTORE) X(R_PTR_ADD) X(R_COOP_STORE) X(R_SMEM_ALLOC) X(R_SMEM_LOAD)        \
    X(R_SMEM_STORE) X(R_SMEM_STORE_DIST) X(R_LDS_ATOMIC) X(R_BLOAD) X(R_BSTORE)    \
    X(R_ASYNC_LDS) X(R_ASYNC_COPY) X(R_GATOMIC) X(R_MMA) X(R_ASM) X(R_FOR) X(R_IF) \
    X(R_YIELD)

typedef enum rk_rule {
#define X(r) RK_##r,
    RK_RULES(X)
#undef X
    RK_RULE__COUNT
} rk_rule;

#define RK_MIN(n) (0x100 | (n))        /* "n or more" in the table's count columns */
#define RK_COUNT_IS_MIN(c) (((c) & 0x100) != 0)
#define RK_COUNT_N(c) ((c) & 0xff)

typedef enum rk_opcode {
    RK_OP_INVALID = 0,
#define RK_OP(E, ...) RK_OP_##E,
#include "rocke/ops.def"
    RK_OP__COUNT
} rk_opcode;

typedef struct rk_op_info {
    const char *name;        /* "arith.add" */
    const char *fn;          /* "add" (rk_build_add) */
    uint16_t nin, nout;      /* RK_MIN-encoded */
    uint8_t nreg;
    rk_rule rule;
    const char *sig;
    uint32_t flags;
    uint32_t feat;
    const char *hint;
    const char *attrs;       /* attribute spec */
} rk_op_info;

const rk_op_info *rk_op_info_of(rk_opcode code);
rk_opcode rk_opcode_from_name(const char *name);     /* RK_OP_INVALID if unknown */
const char *rk_opcode_name(rk_opcode code);
/* Name of the first feature bit in `feat` ("gfx950", "sm_90a", ...). */
const char *rk_feature_name(uint32_t feat);

/* ---- values, ops, regions (read-only views for passes and tools) ---------- */
typedef enum rk_value_kind {
    RK_VK_NONE = 0, RK_VK_PARAM, RK_VK_RESULT, RK_VK_REGION_ARG
} rk_value_kind;

struct rk_region {
    const char *label;       /* "entry", "body", "then", "else" */
    rk_op **ops;
    uint32_t nops, cap;
    rk_value *args;          /* block arguments: scf.for body = [iv, iter_args...] */
    uint32_t nargs;
    rk_op *owner;            /* NULL for the kernel body */
};

struct rk_op {
    rk_opcode code;
    uint16_t nin, nout, nreg;
    rk_value *in;
    rk_value *out;
    rk_attrs attrs;
    rk_region *regions;      /* nreg regions, inline array */
    rk_region *parent;       /* region holding this op */
    const char *loc;         /* "@loc" text or NULL */
    uint32_t line;           /* source line when parsed, else 0 */
};

typedef struct rk_param {
    const char *name;        /* without '%' */
    rk_type type;
    rk_value value;
    rk_attrs attrs;          /* ABI: noalias readonly writeonly nocapture nonnull align dereferenceable */
} rk_param;

rk_type rk_value_type(const rk_kernel *k, rk_value v);
rk_value_kind rk_value_kind_of(const rk_kernel *k, rk_value v);
rk_op *rk_value_def(const rk_kernel *k, rk_value v);      /* producer op or NULL */
uint32_t rk_value_result_index(const rk_kernel *k, rk_value v);
/* The value's name without '%' (e.g. "add7", "X", "k0"). Writes into buf when
 * it has to be formatted; returns buf or a stable string. */
#define RK_NAME_MAX 96
const char *rk_value_name(const rk_kernel *k, rk_value v, char buf[RK_NAME_MAX]);
uint32_t rk_kernel_nvalues(const rk_kernel *k);           /* ids are 1..n */

/* ---- kernels ---------------------------------------------------------------- */
rk_kernel *rk_kernel_new(const char *name);   /* NULL on OOM or a bad name (message set) */
void rk_kernel_free(rk_kernel *k);
const char *rk_kernel_name(const rk_kernel *k);
rk_region *rk_kernel_body(const rk_kernel *k);
uint32_t rk_kernel_nparams(const rk_kernel *k);
const rk_param *rk_kernel_param(const rk_kernel *k, uint32_t i);
const rk_attrs *rk_kernel_attrs(const rk_kernel *k);
/* Kernel attributes: max_workgroup_size (int, default 256), waves_per_eu
 * (int or [lo,hi]), target (string), agpr_alloc, scheduler_strategy. */
void rk_kernel_set_attr_int(rk_kernel *k, const char *key, int64_t v);
void rk_kernel_set_attr_str(rk_kernel *k, const char *key, const char *v);
void rk_kernel_set_attr_pair(rk_kernel *k, const char *key, int64_t lo, int64_t hi);
int64_t rk_kernel_max_workgroup_size(const rk_kernel *k);
/* cluster_dims (a list of three ints, NVIDIA sm_90+): blocks per thread-block
 * cluster along x, y, z; the grid must be a multiple of it. Without the
 * attribute every block is a cluster of one (1, 1, 1). */
void rk_kernel_set_cluster_dims(rk_kernel *k, uint32_t x, uint32_t y, uint32_t z);
/* The kernel's cluster dims into out; false (out = 1, 1, 1) when the
 * attribute is absent or not a list of three ints in [1, 8]. */
bool rk_kernel_cluster_dims(const rk_kernel *k, uint32_t out[3]);
/* cooperative (bool): every block of a launch must be resident at once (the
 * grid at most the device's co-resident capacity), so blocks may wait for
 * each other (rk_tile_grid_barrier). Launched cooperatively on CUDA; the
 * emulator runs the whole grid as one pool of waves. Absent: false. */
void rk_kernel_set_cooperative(rk_kernel *k, bool on);
bool rk_kernel_cooperative(const rk_kernel *k);

/* Number of ops (recursively) — for statistics and benchmarks. */
uint64_t rk_kernel_op_count(const rk_kernel *k);

/* ---- parameters --------------------------------------------------------------- */
typedef struct rk_param_abi {
    bool noalias, readonly, writeonly;
    bool no_nocapture;        /* pointers are nocapture unless this is set */
    bool nonnull;
    uint32_t align;           /* 0 = none */
    uint64_t dereferenceable; /* 0 = none */
    bool tensormap;           /* NVIDIA: a CUtensorMap passed by value (a ptr<i8,constant> parameter) */
} rk_param_abi;

/* Append a parameter (ABI order = call order). abi may be NULL. */
rk_value rk_add_param(rk_kernel *k, const char *name, rk_type t, const rk_param_abi *abi);

/* ---- the builder ---------------------------------------------------------------- */
/* Errors are sticky: the first failure is recorded with the op and reason;
 * later builder calls do nothing and return poison (id 0). Check once with
 * rk_kernel_finish(). */
rk_status rk_kernel_finish(rk_kernel *k);
rk_status rk_builder_status(const rk_kernel *k);
const char *rk_builder_error(const rk_kernel *k);

/* Location attached to ops emitted from now on ("file.c:42"); NULL clears. */
void rk_set_loc(rk_kernel *k, const char *loc);
/* Rename a result's hint, keeping its number: %<hint><n>. */
void rk_value_set_hint(rk_kernel *k, rk_value v, const char *hint);

/* Generic emission: appends `code` to the current region with the given
 * operands and result types, checks nothing yet. The typed builders below call
 * it and then rk_op_check(); call it directly only for what no builder makes
 * (text parsers, tests of ill-formed ops). Returns NULL once the builder has
 * failed. */
rk_op *rk_emit(rk_kernel *k, rk_opcode code, const rk_value *in, uint32_t nin,
               const rk_type *out, uint32_t nout);
void rk_op_set_int(rk_kernel *k, rk_op *op, const char *key, int64_t v);
void rk_op_set_float(rk_kernel *k, rk_op *op, const char *key, double v);
void rk_op_set_str(rk_kernel *k, rk_op *op, const char *key, const char *v);
void rk_op_set_bool(rk_kernel *k, rk_op *op, const char *key, bool v);
void rk_op_set_type(rk_kernel *k, rk_op *op, const char *key, rk_type t); /* string attr */
void rk_op_set_int_list(rk_kernel *k, rk_op *op, const char *key, const int64_t *v, uint32_t n);
/* Verify one op against its rule and attribute spec; on failure records the
 * sticky error and returns false. */
bool rk_op_check(rk_kernel *k, rk_op *op);
/* Convenience: the first result of an op, or poison. */
rk_value rk_op_result(const rk_op *op);

/* ---- typed builders, one per op ------------------------------------------------------ */
/* Every row of ops.def has a builder named after its fn column,
 * rk_build_<fn>; docs/builders.md says how they are made and how to add an op.
 * Most are generated from the row (rocke/ir_builders.h, below):
 *   rk_build_<fn>(k, <required string attributes>, <operands a, b, ...>,
 *                 [rk_type to], <other required attributes>, [rk_value out[n]])
 * string attributes (predicate, mode, kind) first, as in rk_build_cmp(k,
 * "lt", a, b); `to` where the row does not fix the result type; LDS ops take
 * (smem, const rk_value *idx) with one index per dimension of smem's type and
 * set `rank` themselves. Rows with optional attributes also get
 * rk_build_<fn>_ex(..., const rk_<fn>_opts *opts) (opts may be NULL); an
 * option is set when its field is: RK_SOME(x) for numbers and booleans, a
 * non-NULL string, a type other than RK_T_NONE. A builder checks the op it
 * makes against the table; on failure it records the sticky error (op and
 * reason) and returns poison, and once failed every builder does nothing. */
typedef struct rk_opt_int { bool set; int64_t v; } rk_opt_int;
typedef struct rk_opt_num { bool set; double v; } rk_opt_num;
typedef struct rk_opt_bool { bool set; bool v; } rk_opt_bool;
#define RK_SOME(x) {true, (x)}

#include "rocke/ir_builders.h"

/* Hand-written builders: rows whose rule the table cannot describe to the
 * generator (regions, variadic lists, types built from several arguments),
 * and two whose C form predates it. */

/* arith.constant: an int type takes v exactly when it is an integer in
 * +-2^53 (use rk_const_int beyond), a float type rounds v to the type. */
rk_value rk_build_constant(rk_kernel *k, rk_type t, double v);
/* Literal shorthands for arith.constant. */
rk_value rk_const_int(rk_kernel *k, rk_type t, int64_t v);     /* any int scalar */
rk_value rk_const_i32(rk_kernel *k, int32_t v);
rk_value rk_const_i64(rk_kernel *k, int64_t v);
rk_value rk_const_bool(rk_kernel *k, bool v);
rk_value rk_const_float(rk_kernel *k, rk_type t, double v);    /* f16 bf16 f32 f64 (rounded to t) */
rk_value rk_const_f32(rk_kernel *k, float v);
/* arith.constant_vec: every lane = fill. */
rk_value rk_build_constant_vec(rk_kernel *k, rk_type vec_type, double fill);

/* Vector shapes: splat s to n lanes; pack n scalars; concatenate; shuffle
 * lanes of a ++ b by mask (n lanes). */
rk_value rk_build_vsplat(rk_kernel *k, rk_value s, uint32_t n);
rk_value rk_build_vpack(rk_kernel *k, const rk_value *elems, uint32_t n);
rk_value rk_build_vconcat(rk_kernel *k, rk_value a, rk_value b);
rk_value rk_build_vshuffle(rk_kernel *k, rk_value a, rk_value b, const int32_t *mask, uint32_t n);

/* Work-item identity: axis 0, 1, 2 = x, y, z (the `axis` attribute). */
rk_value rk_build_thread_id(rk_kernel *k, int axis);
rk_value rk_build_block_id(rk_kernel *k, int axis);
rk_value rk_build_block_dim(rk_kernel *k, int axis);
rk_value rk_build_grid_dim(rk_kernel *k, int axis);

/* tile.smem_alloc: an LDS allocation of elem with rank dimensions. */
typedef struct rk_smem_alloc_opts {
    rk_opt_bool exclusive;
    rk_opt_int align;        /* byte alignment in the pool: 16 .. 1024, a power of two */
} rk_smem_alloc_opts;
rk_value rk_build_smem_alloc(rk_kernel *k, rk_type elem, const uint32_t *dims, uint32_t rank);
rk_value rk_build_smem_alloc_ex(rk_kernel *k, rk_type elem, const uint32_t *dims, uint32_t rank,
                                const rk_smem_alloc_opts *opts);

/* tile.s_waitcnt with all three counters (-1 = no wait on that counter). */
void rk_build_s_waitcnt(rk_kernel *k, int vmcnt, int lgkmcnt, int expcnt);

/* tile.mma: d = a*b + c through the atom named op_id; d has c's type. The
 * _arr form takes all operands (scaled atoms: a, b, c, a_scale, b_scale). */
typedef struct rk_mma_opts {
    rk_opt_int opsel_a, opsel_b;   /* [0, 3]: the E8M0 byte of each scale word */
} rk_mma_opts;
rk_value rk_build_mma(rk_kernel *k, const char *op_id, rk_value a, rk_value b, rk_value c);
rk_value rk_build_mma_arr(rk_kernel *k, const char *op_id, const rk_value *in, uint32_t n,
                          const rk_mma_opts *opts);

/* tile.wgmma_wait_group: at most n wgmma groups stay pending; the n_acc
 * accumulators pass through and out[i] is acc[i], safe to read. */
void rk_build_wgmma_wait_group(rk_kernel *k, int64_t n, const rk_value *acc, uint32_t n_acc, rk_value *out);

/* tile.inline_asm: outputs $0.., then inputs. */
rk_op *rk_build_inline_asm(rk_kernel *k, const char *templ, const char *constraints,
                           const rk_value *in, uint32_t nin, const rk_type *out, uint32_t nout,
                           bool sideeffect);

/* ---- access helpers: pick the op from the value types --------------------------------- */
/* Global memory: ptr<T,global>, element index (i32 or i64). vec = 1 loads a
 * scalar (memref.global_load_typed), vec > 1 a vec<Txvec>
 * (memref.global_load_vN); a store picks _typed or _vN by the value's type.
 * elem_type and the natural alignment are set. */
rk_value rk_load_global(rk_kernel *k, rk_value ptr, rk_value idx, uint32_t vec);
void rk_store_global(rk_kernel *k, rk_value ptr, rk_value idx, rk_value val);
/* LDS: tile.smem_load / _vN and tile.smem_store / _vN, per-dimension i32
 * indices (the allocation's rank of them). */
rk_value rk_load_smem(rk_kernel *k, rk_value smem, const rk_value *idx, uint32_t vec);
void rk_store_smem(rk_kernel *k, rk_value smem, const rk_value *idx, rk_value val);
/* Buffer views: rsrc over [ptr, ptr + num_bytes) (rk_build_buffer_rsrc);
 * byte offsets voff + soff; out of range reads give 0 and stores are
 * dropped. vec > 1 loads vec elements through tile.buffer_load_vN (vec*bytes
 * must be 4, 8, 12 or 16). */
rk_value rk_load_buffer(rk_kernel *k, rk_value rsrc, rk_value voff, rk_value soff, rk_type elem, uint32_t vec);
void rk_store_buffer(rk_kernel *k, rk_value rsrc, rk_value voff, rk_value soff, rk_value val);

/* By opcode, for table-driven callers: any one-operand, one-result op whose
 * result type is given (the conversions), and any op without operands,
 * results or attributes (the barriers). */
rk_value rk_emit_convert(rk_kernel *k, rk_opcode code, rk_value a, rk_type to);
void rk_emit_barrier(rk_kernel *k, rk_opcode code);

/* ---- structured control flow ------------------------------------------------ */
/* The builders of scf.for, scf.if and scf.if_else (the rows' fn column); the
 * closing calls emit scf.yield. */
/* for (iv = lo; iv < hi; iv += step) with loop-carried values. Returns the IV;
 * iter[i] receives the in-body value of carry i. Close with rk_for_end, which
 * takes the next-iteration values and returns the loop results in results[]
 * (may be NULL when n_iter is 0). iv_name may be NULL ("k0"); names may be NULL. */
rk_value rk_for_begin(rk_kernel *k, rk_value lo, rk_value hi, rk_value step,
                      const char *iv_name, uint32_t n_iter, const rk_value *inits,
                      const char *const *iter_names, rk_value *iter);
void rk_for_end(rk_kernel *k, const rk_value *yields, uint32_t n, rk_value *results);
/* Mark the loop being built for full unrolling (constant bounds required). */
void rk_for_set_unroll(rk_kernel *k, bool unroll);

/* if (cond) { ... } — no results. */
void rk_if_begin(rk_kernel *k, rk_value cond);
/* if (cond) { ...; yield } else { ...; yield } with nres results of the given
 * types; results[] are defined after rk_if_end. */
void rk_if_else_begin(rk_kernel *k, rk_value cond, uint32_t nres, const rk_type *types,
                      rk_value *results);
/* Close the then-region (yielding n values for an if_else with results) and
 * open the else-region. On a plain rk_if_begin it turns the op into an
 * scf.if_else without results. */
void rk_else(rk_kernel *k, const rk_value *yields, uint32_t n);
void rk_if_end(rk_kernel *k, const rk_value *yields, uint32_t n);

/* ---- verifier ----------------------------------------------------------------- */
typedef enum rk_severity { RK_SEV_ERROR, RK_SEV_WARNING } rk_severity;
typedef struct rk_diag {
    rk_severity severity;
    const rk_op *op;          /* may be NULL (kernel-level) */
    uint32_t line;            /* source line when known */
    char *where;              /* "op 12 'arith.add' in scf.for body" */
    char *msg;
} rk_diag;
typedef struct rk_diags { rk_diag *items; uint32_t n, cap, nerrors; } rk_diags;

/* What the target can do, for legality checks. NULL = structure and types only. */
typedef struct rk_verify_target {
    const char *name;         /* "gfx942" */
    uint32_t features;        /* RK_FEAT_* */
    uint32_t wave_size;
    /* The target's native 8-bit float encodings: conversion ops must use these
     * (RK_S_NONE = not checked). gfx942: FNUZ; gfx950 and NVIDIA: OCP. */
    rk_scalar fp8, bf8;
    /* Check a tile.mma atom: return true if legal; else write why into msg. */
    bool (*check_mma)(void *ud, const rk_kernel *k, const rk_op *op, char *msg, size_t n);
    void *ud;
} rk_verify_target;

rk_status rk_verify(const rk_kernel *k, const rk_verify_target *target, rk_diags *out);
void rk_diags_init(rk_diags *d);
void rk_diags_free(rk_diags *d);
void rk_diags_print(const rk_diags *d, FILE *f, const char *file);
/* The diagnostics as one text (caller frees with rk_string_free). */
char *rk_diags_text(const rk_diags *d);

/* ---- text forms ------------------------------------------------------------------- */
void rk_string_free(char *s);
/* MLIR-style human dump (never parsed back). */
char *rk_print(const rk_kernel *k);
/* Canonical ckdsl.ir v1 text (sorted attribute keys, explicit ids). */
char *rk_serialize(const rk_kernel *k);
/* Parse ckdsl.ir v1. On failure *out is NULL and the message has line:column
 * and what was expected. The result is not verified; call rk_verify. */
rk_status rk_parse(const char *text, size_t len, rk_kernel **out);
/* Renumber ids %0,%1,... in definition pre-order, drop @loc, re-sort attrs. */
rk_status rk_canonicalize(const char *text, size_t len, char **out);

/* ---- passes -------------------------------------------------------------------------- */
typedef struct rk_pass_stats {
    uint32_t constants_folded;
    uint32_t common_subexpressions;
    uint32_t dead_ops_removed;
    uint32_t iterations;
} rk_pass_stats;
/* Fold constants, CSE, DCE to a fixed point (at most max_iter rounds; 0 = 8).
 * Side-effecting ops are never removed, merged or reordered. */
rk_status rk_optimize(rk_kernel *k, uint32_t max_iter, rk_pass_stats *stats);
/* The same, calling fn after every pass of every round: pass "fold", "cse" or
 * "dce", round from 1, the kernel as that pass left it (--dump-after). */
typedef void (*rk_pass_observer)(void *ud, const char *pass, uint32_t round, const rk_kernel *k);
rk_status rk_optimize_observe(rk_kernel *k, uint32_t max_iter, rk_pass_stats *stats, rk_pass_observer fn, void *ud);

#ifdef __cplusplus
}
#endif
/* ==== op-table queries by field name (src/ir/optable_query.c) ============ */
/* For bindings that cannot read rk_op_info's layout. Codes run 1..size-1. */
#ifdef __cplusplus
extern "C" {
#endif
uint32_t rk_op_table_size(void);   /* RK_OP__COUNT */
/* "name" "fn" "sig" "hint" "attrs" (the spec text) "rule" ("R_SAME" ...);
 * NULL with a message for a bad code or field. */
const char *rk_op_query_str(uint32_t code, const char *field);
/* "nin" "nout" (counts; "nin_min"/"nout_min" 1 when "or more"), "nreg",
 * "flags" (RK_F_*), "feat" (RK_FEAT_*); false with a message when bad. */
bool rk_op_query_int(uint32_t code, const char *field, int64_t *out);
#ifdef __cplusplus
}
#endif
/* ==== end of op-table queries ============================================== */
#endif
