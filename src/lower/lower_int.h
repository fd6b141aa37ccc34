/* rocke — lowering internals: the context every handler writes through, the
 * shared core's helpers, and the seam between the vendor-neutral core and
 * one file (set) per vendor. Layer: lower.
 *
 * THE SEAM
 *   The core (core.c, lower_emit.c, flow.c, generic.c, lds.c) owns everything that
 *   reads the same on every GPU: module assembly, value/temp/block naming,
 *   the declaration table, constants, the kernel signature with its ABI
 *   attributes, structured control flow (blocks, phis, unrolling), integer /
 *   float / vector arithmetic, casts, global memory, the LDS pool and its
 *   accesses, atomics (atomicrmw / cmpxchg), register_p_from_qk_c and inline
 *   assembly. It never tests a chip name.
 *   A vendor is one `lw_vendor` (data + hooks) plus a per-op switch over the
 *   ops the core does not lower (LW_VENDOR_OPS): ids, math, fp8 conversions,
 *   buffers, async copies, transposed loads, cross-lane, barriers, waits,
 *   hints, fences and matrix atoms. The hooks cover what differs inside the
 *   generic families: address-space numbers, the LLVM type of a buffer
 *   resource, syncscope names, metadata on FP atomics, the datalayout per
 *   flavor, the kernel calling convention, the function attribute group and
 *   an optional module tail (e.g. NVVM annotations).
 *   Adding NVPTX = src/lower/nvptx*.c defining `const lw_vendor lw_nvptx`
 *   plus one line in vendors.c; no generic code changes.
 *
 * EXHAUSTIVENESS
 *   Every op is in exactly one of LW_FLOW_OPS, LW_GENERIC_OPS, LW_VENDOR_OPS.
 *   The core's switch names every generic and flow op and expands
 *   LW_VENDOR_OPS to hand the rest to the vendor; a vendor's switch names
 *   every vendor op and expands LW_CORE_OPS to rk_bug(). Neither has a
 *   default, so a new op row is a compile error until it is classified and
 *   lowered. Ops a vendor cannot have (NVIDIA-only on AMD) are rejected by
 *   the verifier first and reach an explicit rk_bug() case.
 *
 * NAMING (docs/lowering.md)
 *   IR values keep their names: %add7, %X, %k0 (see lw_val). Lowering
 *   temporaries are %<word>.<n> (one counter), blocks <word>.<n> (another
 *   counter); IR names that could collide with either get a '$' appended. */
#ifndef ROCKE_LOWER_INT_H
#define ROCKE_LOWER_INT_H

#include "rocke/lower.h"
#include "../ir/ir_int.h"

typedef struct lw_ctx lw_ctx;

/* ---- op classes ---------------------------------------------------------------- */
#define LW_FLOW_OPS(X) X(FOR) X(IF) X(IF_ELSE) X(YIELD) X(RETURN)

#define LW_GENERIC_OPS(X)                                                                          \
    X(CONSTANT) X(CONSTANT_VEC) X(ADD) X(SUB) X(MUL) X(DIV) X(MOD) X(UDIV) X(UMOD) X(AND) X(OR)    \
    X(XOR) X(NOT) X(SHL) X(LSHR) X(ASHR) X(SMAX) X(SMIN) X(UMAX) X(UMIN) X(UMUL_HI_I32) X(CMP)     \
    X(SELECT) X(ZEXT) X(SEXT) X(TRUNC) X(BITCAST) X(FADD) X(FSUB) X(FMUL) X(FDIV) X(FNEG) X(FABS)  \
    X(FMA) X(FMAX) X(FMIN) X(FMAX3) X(FMIN3) X(FCMP) X(SITOFP) X(UITOFP) X(FPTOSI) X(FPTOUI)       \
    X(FPEXT) X(FPTRUNC) X(CAST_TO_F32) X(CAST_F32_TO) X(TRUNC_F32_TO_F16) X(TRUNC_F32_TO_BF16)     \
    X(SITOFP_F32) X(RINT_F32) X(CVT_PK_I8_F32X4) X(CVT_F32_TO_I8_SAT) X(VADD) X(VSUB) X(VMUL)      \
    X(VDIV) X(VAND) X(VOR) X(VXOR) X(VSHL) X(VLSHR) X(VSMAX) X(VSMIN) X(VMAX) X(VMIN) X(VFMA)      \
    X(VFNEG) X(VSUM) X(VREDUCE_MAX) X(VREDUCE_MIN) X(VCMP) X(VFCMP) X(VSELECT) X(VTRUNC) X(VSEXT)  \
    X(VZEXT) X(VCAST_TO_F32) X(VTRUNC_F32_TO) X(VTRUNC_F32_TO_F16) X(VBITCAST) X(VEXTRACT)         \
    X(VINSERT) X(VSPLAT) X(VPACK) X(VCONCAT) X(VSHUFFLE) X(GLOBAL_LOAD) X(GLOBAL_LOAD_TYPED)       \
    X(GLOBAL_LOAD_VN) X(GLOBAL_STORE) X(GLOBAL_STORE_TYPED) X(GLOBAL_STORE_VN) X(GLOBAL_PTR_ADD)   \
    X(PTR_TO_INT)                                                                                  \
    X(COOP_GLOBAL_STORE) X(SMEM_ALLOC) X(SMEM_LOAD) X(SMEM_LOAD_VN) X(SMEM_LOAD_V4)                \
    X(SMEM_LOAD_VN_F32) X(SMEM_STORE) X(SMEM_STORE_VN) X(SMEM_STORE_VN_F32)                        \
    X(SMEM_STORE_DISTRIBUTED) X(SMEM_ADDR_OF) X(SMEM_PTR_ADD) X(LDS_ATOMIC_ADD)                    \
    X(GLOBAL_ATOMIC_ADD) X(GLOBAL_ATOMIC_ADD_F32) X(GLOBAL_ATOMIC_ADD_PK_BF16)                     \
    X(GLOBAL_ATOMIC_ADD_PK_F16) X(GLOBAL_ATOMIC) X(GLOBAL_ATOMIC_CAS) X(REGISTER_P_FROM_QK_C)      \
    X(INLINE_ASM)

#define LW_VENDOR_OPS(X)                                                                           \
    X(EXP2) X(EXP2_FAST) X(EXP) X(LOG2) X(LOG) X(SQRT) X(RSQRT) X(RCP) X(RCP_FAST) X(TANH) X(SIN)  \
    X(COS) X(CVT_FP8_TO_F32) X(CVT_BF8_TO_F32) X(CVT_F32_TO_FP8) X(CVT_F32_TO_BF8)                 \
    X(CVT_PK_F32_FP8X4) X(CVT_PK_F32_BF8X4) X(CVT_PK_FP8_F32X4) X(CVT_PK_BF8_F32X4)                \
    X(CVT_SCALEF32_PK_F32_FP8) X(CVT_SCALEF32_PK_F32_BF8) X(CVT_SCALEF32_PK_FP8_F32)               \
    X(CVT_SCALEF32_PK_BF8_F32) X(THREAD_ID) X(BLOCK_ID) X(BLOCK_DIM) X(GRID_DIM) X(LANE_ID)        \
    X(BUFFER_RSRC) X(BUFFER_LOAD) X(BUFFER_LOAD_F16) X(BUFFER_LOAD_BF16) X(BUFFER_LOAD_VN)         \
    X(BUFFER_LOAD_VN_F16) X(BUFFER_LOAD_VN_BF16) X(BUFFER_STORE) X(BUFFER_STORE_F16)               \
    X(BUFFER_STORE_BF16) X(BUFFER_STORE_F32) X(BUFFER_STORE_VN) X(BUFFER_STORE_VN_F16)             \
    X(BUFFER_STORE_VN_BF16) X(BUFFER_STORE_VN_F32) X(ASYNC_BUFFER_LOAD_LDS)                        \
    X(ASYNC_BUFFER_LOAD_LDS_ADDR) X(GLOBAL_LOAD_LDS) X(ASYNC_COPY) X(ASYNC_COMMIT_GROUP)           \
    X(ASYNC_WAIT_GROUP) X(DS_READ_TR16_B64) X(DS_READ_TR16_B128) X(DS_READ_TR_B8) X(LDMATRIX)      \
    X(READFIRSTLANE) X(READLANE) X(WRITELANE) X(PIN_SGPR) X(WAVE_BALLOT) X(WAVE_ALL) X(WAVE_ANY)   \
    X(SHUFFLE) X(DS_BPERMUTE) X(DS_BPERMUTE_B64) X(DS_SWIZZLE_XOR) X(DS_SWIZZLE) X(MOV_DPP)        \
    X(DPP_XOR) X(QUAD_PERM) X(MOV_DPP8) X(WAVE_REDUCE) X(PERMLANE16) X(PERMLANEX16) X(PERMLANE64)  \
    X(PERMLANE32_SWAP) X(PERM_B32) X(BYTE_PERM) X(ALIGNBYTE) X(S_WQM) X(EXEC_AND_SAVEEXEC)         \
    X(EXEC_OR_SAVEEXEC) X(EXEC_XOR) X(EXEC_OR) X(SYNC) X(SYNC_LDS_ONLY) X(S_BARRIER_BARE)          \
    X(SYNC_HALF_BLOCK) X(NAMED_BARRIER) X(NAMED_BARRIER_ARRIVE) X(FENCE) X(S_WAITCNT) X(S_WAIT_ASYNCCNT) X(SCHED_BARRIER)  \
    X(SCHED_GROUP_BARRIER) X(IGLP_OPT) X(S_SETPRIO) X(MMA) X(WGMMA_DESC) X(WGMMA) X(WGMMA_FENCE)              \
    X(WGMMA_COMMIT_GROUP) X(WGMMA_WAIT_GROUP) X(FENCE_PROXY_ASYNC) X(MBARRIER_INIT) X(MBARRIER_ARRIVE)      \
    X(MBARRIER_ARRIVE_EXPECT_TX) X(MBARRIER_WAIT) X(TMA_LOAD_2D) X(SETMAXNREG) X(TMA_STORE_2D)    \
    X(BULK_COMMIT_GROUP) X(BULK_WAIT_GROUP) X(WGMMA_RS) X(CLUSTER_ID) X(CLUSTER_DIM) X(CLUSTER_RANK)    \
    X(CLUSTER_ARRIVE) X(CLUSTER_WAIT) X(FENCE_MBARRIER_INIT) X(MBARRIER_ARRIVE_CLUSTER)             \
    X(TMA_LOAD_2D_MULTICAST) X(GLOBAL_WAIT) X(TMA_LOAD_4D)

#define LW_CASE(E) case RK_OP_##E:
/* In a vendor switch: every op the core lowers. */
#define LW_CORE_OPS_CASES LW_FLOW_OPS(LW_CASE) LW_GENERIC_OPS(LW_CASE)

/* memref.global_wait as a loop of LLVM acquire atomic loads (generic.c;
 * NVPTX emits inline PTX instead: LLVM 22 crashes selecting an atomic load
 * from a readonly noalias kernel parameter, which it turns into ld.global.nc). */
void lw_global_wait_llvm(lw_ctx *cx, const rk_op *op);

/* ---- the vendor seam ------------------------------------------------------------- */
typedef enum lw_scope { LW_SCOPE_BLOCK, LW_SCOPE_DEVICE, LW_SCOPE_SYSTEM, LW_SCOPE__COUNT } lw_scope;

typedef struct lw_vendor {
    const char *name;                        /* "amdgpu" */
    const char *kernel_cc;                   /* "amdgpu_kernel", "ptx_kernel" */
    const char *(*datalayout)(rk_llvm_flavor f);
    uint8_t as_num[RK_AS__COUNT];            /* LLVM address space of each rk_addrspace */
    const char *rsrc_type;                   /* LLVM type of an rsrc value */
    const char *scope[LW_SCOPE__COUNT];      /* syncscope names; "" = system (none printed) */
    /* Validate kernel attributes the vendor reads (false after lw_error). */
    bool (*check_kernel)(lw_ctx *cx);
    /* The inside of `attributes #0 = { ... }` for the kernel. */
    void (*fn_attrs)(lw_ctx *cx, rk_buf *out);
    /* Extra module-level lines after the metadata (may be NULL). */
    void (*module_tail)(lw_ctx *cx, rk_buf *out);
    /* Append metadata to an FP atomicrmw line (", !foo !1"); may be NULL. */
    void (*fp_atomic_md)(lw_ctx *cx, rk_buf *line);
    /* Lower one op of LW_VENDOR_OPS. */
    void (*lower_op)(lw_ctx *cx, const rk_op *op);
    /* The LLVM type and ABI attributes of a parameter the vendor passes its
     * own way (NVIDIA tensor maps: byval grid constants), or NULL for the
     * core's text. May be NULL. */
    const char *(*param_type)(lw_ctx *cx, const rk_param *p);
    /* LDS pools above this many bytes are declared external (dynamic shared
     * memory, sized at launch); 0 = always a sized global. */
    uint32_t static_lds_max;
} lw_vendor;

/* vendors.c: the vendor lowering for t, or NULL when none exists yet. */
const lw_vendor *lw_vendor_for(const rk_target *t);

/* ---- module metadata nodes with fixed ids ----------------------------------------- */
typedef enum lw_md_node {
    LW_MD_NONTEMPORAL,   /* !0 = !{i32 1} */
    LW_MD_EMPTY,         /* !1 = !{} (amdgpu.no.* atomic markers, invariant.load) */
    LW_MD__COUNT
} lw_md_node;

/* ---- the context ----------------------------------------------------------------- */
typedef struct lw_decl { uint32_t order; const char *line; uint64_t hash; } lw_decl;

struct lw_ctx {
    const rk_kernel *k;
    const rk_target *t;
    const lw_vendor *vd;
    rk_llvm_flavor flavor;
    rk_arena arena;               /* names and texts of this lowering */
    rk_buf body;                  /* the function body */
    rk_buf scratch;               /* one line being assembled (reset by each user) */
    const char **vtext;           /* operand text per value id (NULL = not yet) */
    const char **ttext;           /* LLVM type per type id */
    uint32_t ntext, nttext;
    uint32_t ntmp, nlabel;        /* temp and block counters */
    const char *block;            /* label of the open block */
    bool terminated;              /* the open block has its terminator */
    const char *suffix;           /* unroll suffix of values defined now ("" or ".u2...") */
    /* declarations, deduplicated; printed sorted by (order, line) */
    lw_decl *decls;
    uint32_t ndecls, decls_cap;
    uint32_t *dhash, dhash_cap;
    bool md_used[LW_MD__COUNT];
    uint64_t *seen;               /* lw_seen's set */
    uint32_t nseen, seen_cap;
    /* the LDS pool (lds.c) */
    uint32_t *smem_off;           /* byte offset per smem_alloc value id */
    uint32_t pool_bytes;
    uint32_t pool_align;          /* the largest allocation alignment (>= 16) */
    const char *pool_sym;         /* "@smem_pool.<kernel>" */
    const char **smem_agg;        /* "[d0 x [d1 x T]]" per smem type id */
    /* first error */
    rk_status err;
    char msg[1024];
};

/* ---- errors (first one wins) ----------------------------------------------------- */
bool lw_error(lw_ctx *cx, const rk_op *op, rk_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline bool lw_ok(const lw_ctx *cx) { return cx->err == RK_OK; }

/* ---- text (lower_emit.c) ----------------------------------------------------------------- */
/* One instruction line in the open block: two spaces, fmt, newline. Opens an
 * (unreachable) block first when the previous one was terminated.
 *   %v value operand        %V "type value"       %t type of a value
 *   %T type (rk_type)       %s string             %d int   %u unsigned
 *   %l int64_t              %% percent */
void lw_ins(lw_ctx *cx, const char *fmt, ...);
/* The same into an arbitrary buffer, no indent or newline. */
void lw_fmt(lw_ctx *cx, rk_buf *b, const char *fmt, ...);
const char *lw_val(lw_ctx *cx, rk_value v);      /* operand text */
const char *lw_vty(lw_ctx *cx, rk_value v);      /* LLVM type of a value */
const char *lw_ty(lw_ctx *cx, rk_type t);        /* LLVM type */
const char *lw_tmp(lw_ctx *cx, const char *word);          /* fresh "%word.N" */
const char *lw_printf(lw_ctx *cx, const char *fmt, ...)    /* arena string */
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Set a value's operand text (loop unrolling aliases IVs and carries). */
void lw_set_val(lw_ctx *cx, rk_value v, const char *text);
void lw_forget_val(lw_ctx *cx, rk_value v);
/* Literal text of a scalar of type t holding v (ints wrap to the width). */
const char *lw_int_lit(lw_ctx *cx, rk_type t, int64_t v);
const char *lw_float_lit(lw_ctx *cx, rk_type t, double v);
/* Is v an arith.constant integer? */
bool lw_const_int(const lw_ctx *cx, rk_value v, int64_t *out);

/* Blocks. lw_br/lw_condbr end the open block. */
const char *lw_label(lw_ctx *cx, const char *word);        /* fresh "word.N" */
void lw_block(lw_ctx *cx, const char *label);
void lw_br(lw_ctx *cx, const char *label);
void lw_condbr(lw_ctx *cx, const char *cond, const char *if_true, const char *if_false);
/* Label of the block instructions go to now (opens a dead block if needed). */
const char *lw_cur_block(lw_ctx *cx);

/* Declaration order numbers: the core's table first (families in this
 * order), then a vendor's fixed table numbered from LW_DECL_VENDOR. */
enum {
    LW_D_SMAX, LW_D_SMIN, LW_D_UMAX, LW_D_UMIN, LW_D_FABS, LW_D_FMULADD, LW_D_MAXNUM, LW_D_MINNUM, LW_D_RINT,
    LW_D_FPTOSI_SAT, LW_DECL_VENDOR = 100
};
/* Declarations: `line` is a complete "declare ..." line that outlives the
 * lowering (a literal or from lw_printf). Order = place in the vendor's or
 * core's fixed declaration table; equal orders sort by text. */
void lw_declare(lw_ctx *cx, uint32_t order, const char *line);
/* Has (order, variant, key) been seen before? Marks it. Lets handlers skip
 * building a declaration line they already declared (variant < 4096, e.g.
 * an opcode; key usually a type id). */
bool lw_seen(lw_ctx *cx, uint32_t order, uint32_t variant, uint32_t key);
/* Reference to a module metadata node ("!1"), marking it used. */
const char *lw_md(lw_ctx *cx, lw_md_node m);

/* Attribute helpers. */
int64_t lw_attr_int(const rk_op *op, const char *key, int64_t dflt);
bool lw_attr_bool(const rk_op *op, const char *key, bool dflt);
const char *lw_attr_str(const rk_op *op, const char *key, const char *dflt);

/* ---- lowering walk (core.c, flow.c, generic.c) --------------------------------------- */
void lw_lower_region(lw_ctx *cx, const rk_region *r);
void lw_lower_op(lw_ctx *cx, const rk_op *op);
void lw_lower_generic(lw_ctx *cx, const rk_op *op);
void lw_lower_flow(lw_ctx *cx, const rk_op *op);
/* Is the element type a float (f16 bf16 f32 f64)? */
bool lw_is_float(const lw_ctx *cx, rk_type t);
/* LLVM overload suffix of a type: f32, f16, bf16, i32, v4f32, v2i16 ... */
const char *lw_mangle(lw_ctx *cx, rk_type t);
/* Size in bytes of a scalar/vector type. */
uint32_t lw_bytes(const lw_ctx *cx, rk_type t);
/* The syncscope clause (` syncscope("agent")` or "") for a scope name
 * "block"/"device"/"system" (NULL = dflt). */
const char *lw_syncscope(lw_ctx *cx, const char *scope, lw_scope dflt);

/* ---- 8-bit floats in software (lower_fp8.c) ------------------------------------------------- */
/* For targets without conversion hardware: exact decode of one byte (i8
 * text) of format fmt (RK_S_FP8E4M3, _BF8E5M2, _FP8E4M3FNUZ, _BF8E5M2FNUZ)
 * into a float defined as `into`; and encode of a float with round to
 * nearest even, saturating to the largest finite value (NaN stays NaN; FNUZ
 * has no negative zero) into an i8 defined as `into`. */
void lw_f8_decode(lw_ctx *cx, rk_scalar fmt, const char *into, const char *byte);
void lw_f8_encode(lw_ctx *cx, rk_scalar fmt, const char *into, const char *f);
/* The packed x4 forms through those sequences, lane by lane (decode: 4
 * bytes -> <4 x float>; else <4 x float> -> 4 bytes), into op's result. */
void lw_f8_pk_sw(lw_ctx *cx, const rk_op *op, bool decode);

/* ---- the LDS pool (lds.c) ------------------------------------------------------------ */
/* Lay out every live tile.smem_alloc in one pool (false after lw_error when it
 * does not fit the target). */
bool lw_pool_layout(lw_ctx *cx);
/* The pool global line, or nothing when the pool is empty. */
void lw_pool_global(lw_ctx *cx, rk_buf *out);
/* Is the laid-out pool external (dynamic shared memory the launch sizes)? */
bool lw_pool_dynamic(const lw_ctx *cx);
/* `ptr addrspace(3)` operand text of an allocation's first byte. */
const char *lw_smem_base(lw_ctx *cx, rk_value smem);
/* Address of element [idx0][idx1]... of an allocation (a fresh temp). */
const char *lw_smem_addr(lw_ctx *cx, rk_value smem, const rk_value *idx, uint32_t n);
/* Address of flat element `idx_text` (i32 operand) of an allocation. */
const char *lw_smem_flat(lw_ctx *cx, rk_value smem, const char *idx_text);
/* Address + `add` elements along the last dimension (a fresh temp). */
const char *lw_smem_step(lw_ctx *cx, rk_value smem, const char *addr, uint32_t add);

#endif
