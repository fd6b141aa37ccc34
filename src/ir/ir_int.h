/* rocke — IR internals shared by src/ir and the layers above it (target,
 * lower, emu) that walk kernels directly. Layer: ir. */
#ifndef ROCKE_IR_INT_H
#define ROCKE_IR_INT_H

#include <stdatomic.h>

#include "rocke/ir.h"
#include "../base/base_int.h"

/* ---- types ---------------------------------------------------------------- */
typedef struct ir_typeinfo {
    rk_type_kind kind;
    rk_type elem;            /* vec elem, ptr pointee, smem elem */
    uint32_t count;          /* vec lanes */
    rk_addrspace space;      /* ptr */
    uint32_t rank;           /* smem */
    uint32_t *dims;          /* smem (arena) */
    uint32_t bits;           /* storage size */
    const char *name;        /* canonical (arena) */
    uint64_t hash;
} ir_typeinfo;

/* ---- values -------------------------------------------------------------------- */
enum { IR_NO_NUM = UINT32_MAX };
/* 32 bytes, no padding: one per value, and a big kernel's table is megabytes. */
typedef struct ir_valinfo {
    rk_type type;
    rk_value_kind kind;
    uint32_t num;            /* counter number, or IR_NO_NUM when name is complete */
    uint32_t index;          /* result index / param index / region-arg index */
    const char *hint;        /* name hint (or the complete name) */
    rk_op *def;              /* RESULT: producer; REGION_ARG: region owner op */
} ir_valinfo;

/* ---- builder frames (open regions) ---------------------------------------------- */
enum { IR_MAX_DEPTH = 64 };
typedef struct ir_frame {
    rk_op *op;               /* op whose region is open */
    uint32_t region;         /* which of its regions */
    uint32_t nres;           /* if_else: number of results expected from yields */
} ir_frame;

struct rk_kernel {
    rk_arena arena;
    const char *name;
    rk_attrs attrs;
    rk_param *params;
    uint32_t nparams, params_cap;
    rk_region body;

    /* composite types, interned by canonical name */
    ir_typeinfo *types;              /* index id - RK_TYPE_FIRST_COMPOSITE */
    uint32_t ntypes, types_cap;
    uint32_t *type_hash;             /* open addressing: 0 = empty, else id */
    uint32_t type_hash_cap;
    /* direct-mapped memo in front of the name table for vec and ptr types,
     * keyed by structure, so a repeat rk_type_vec/rk_type_ptr formats no
     * name: key 0 = empty (types.c) */
    uint64_t type_memo_key[64];
    uint32_t type_memo_id[64];

    /* values: index = id (slot 0 unused) */
    ir_valinfo *vals;
    uint32_t nvals, vals_cap;
    uint32_t counter;                /* SSA name counter (pre-incremented) */

    /* builder state */
    ir_frame frames[IR_MAX_DEPTH];
    uint32_t depth;
    const char *cur_loc;
    rk_status err;
    char *err_msg;                   /* arena */
};

static inline ir_valinfo *ir_val(const rk_kernel *k, rk_value v) {
    return (v.id && v.id < k->nvals) ? &k->vals[v.id] : NULL;
}
static inline const ir_typeinfo *ir_type(const rk_kernel *k, rk_type t) {
    if (t.id < RK_TYPE_FIRST_COMPOSITE) return NULL;
    uint32_t i = t.id - RK_TYPE_FIRST_COMPOSITE;
    return i < k->ntypes ? &k->types[i] : NULL;
}
static inline bool ir_live(const rk_kernel *k) { return k->err == RK_OK; }

/* types.c: name and storage bits of each scalar */
typedef struct ir_scalar_info { const char *name; uint32_t bits; } ir_scalar_info;
extern const ir_scalar_info ir_scalars[RK_S__COUNT];

/* Inline twins of rk_value_type and the rk_type_* queries (same answers) for
 * the builder and the checks, which run on every op. */
static inline rk_type ir_vtype(const rk_kernel *k, rk_value v) {
    return (v.id && v.id < k->nvals) ? k->vals[v.id].type : RK_T_NONE;
}
static inline rk_type_kind ir_tkind(const rk_kernel *k, rk_type t) {
    if (t.id - 1u < RK_S__COUNT - 1u) return RK_TK_SCALAR;
    if (t.id == RK_TYPE_RSRC_ID) return RK_TK_RSRC;
    const ir_typeinfo *ti = ir_type(k, t);
    return ti ? ti->kind : RK_TK_NONE;
}
static inline rk_type ir_telem(const rk_kernel *k, rk_type t) {
    const ir_typeinfo *ti = ir_type(k, t);
    return ti ? ti->elem : RK_T_NONE;
}
static inline uint32_t ir_tcount(const rk_kernel *k, rk_type t) {
    const ir_typeinfo *ti = ir_type(k, t);
    return ti && ti->kind == RK_TK_VEC ? ti->count : 1;
}
static inline uint32_t ir_tbits(const rk_kernel *k, rk_type t) {
    if (t.id - 1u < RK_S__COUNT - 1u) return ir_scalars[t.id].bits;
    if (t.id == RK_TYPE_RSRC_ID) return 128;
    const ir_typeinfo *ti = ir_type(k, t);
    return ti ? ti->bits : 0;
}
static inline const char *ir_tname(const rk_kernel *k, rk_type t) {
    if (t.id - 1u < RK_S__COUNT - 1u) return ir_scalars[t.id].name;
    return rk_type_name(k, t);
}
/* Attribute keys: equal pointers (keys shared with the op table's spec) or
 * equal text; most unequal keys differ in their first byte. */
static inline bool ir_key_eq(const char *a, const char *b) {
    return a == b || (a[0] == b[0] && strcmp(a, b) == 0);
}
static inline const rk_attr_val *ir_attr_find(const rk_attrs *a, const char *key) {
    for (uint32_t i = 0; i < a->n; i++)
        if (ir_key_eq(a->items[i].key, key)) return &a->items[i].val;
    return NULL;
}

/* ---- op table -------------------------------------------------------------------- */
extern const rk_op_info ir_op_table[RK_OP__COUNT];

/* Attribute keys that code names (builder, checks), one shared string each:
 * the parsed specs below use these very pointers, as do ops the builder
 * makes, so matching a key is mostly a pointer compare (ir_key_eq). */
#define IR_KEYS(X)                                                                       \
    X(value) X(ity) X(fill) X(elem) X(vec) X(pred) X(target) X(index) X(mask) X(axis)    \
    X(align) X(elem_type) X(rank) X(dwords) X(bytes) X(n) X(num) X(mode) X(kind) X(op_id) \
    X(template) X(constraints) X(sideeffect) X(iv) X(iv_type) X(iter_args)               \
    X(num_iter_args) X(unroll) X(elide_trailing_barrier) X(vmcnt) X(lgkmcnt) X(expcnt)   \
    X(dtype) X(row_shr) X(row_shl) X(lbo) X(sbo) X(regs)
#define IR_KEY_DECL(name) extern const char ir_key_##name[];
IR_KEYS(IR_KEY_DECL)
#undef IR_KEY_DECL

/* Parsed attribute spec of an op (from the table's attrs column). */
typedef enum ir_attr_type { IR_AT_INT, IR_AT_NUM, IR_AT_STR, IR_AT_BOOL, IR_AT_LIST, IR_AT_TYPE } ir_attr_type;
typedef struct ir_attr_spec {
    const char *key;
    ir_attr_type type;
    bool optional;
    bool has_range;
    int64_t lo, hi;
    uint32_t nenum;
    const char *enums[16];    /* strings, or decimal ints */
} ir_attr_spec;
typedef struct ir_op_spec {
    uint32_t nattrs;
    ir_attr_spec attrs[8];
    /* bit s set when scalar type s matches the op's whole sig as one class
     * (meaningful for sigs without "->"): saves re-parsing the class text
     * for every op the builder makes */
    uint32_t sig_scalars;
    bool sig_vec;             /* sig is exactly "vec" (access rules read it per op) */
} ir_op_spec;
/* Spec keys are shared process-wide: one pointer per key text (the
 * ir_key_* strings for those), so equal keys of two ops compare equal. */
extern ir_op_spec ir_op_specs[RK_OP__COUNT];
extern atomic_bool ir_op_specs_ready;
const ir_op_spec *ir_op_spec_init(rk_opcode code);   /* builds the specs once */
/* The spec of an op (row 0, no attributes, for an opcode out of range); inline
 * because the builder asks for it on every op. */
static inline const ir_op_spec *ir_op_spec_of(rk_opcode code) {
    if ((unsigned)code < RK_OP__COUNT && atomic_load_explicit(&ir_op_specs_ready, memory_order_acquire))
        return &ir_op_specs[code];
    return ir_op_spec_init(code);
}
/* The spec's own copy of `key` (lives as long as the process), or NULL when
 * the op's spec has no such attribute. */
const char *ir_op_spec_key(rk_opcode code, const char *key);

/* ---- kernel.c --------------------------------------------------------------------- */
rk_value ir_new_value(rk_kernel *k, rk_type t, rk_value_kind kind, const char *hint, bool numbered);
bool ir_fail(rk_kernel *k, rk_status s, const rk_op *op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
bool ir_region_append(rk_kernel *k, rk_region *r, rk_op *op);
rk_op *ir_op_alloc(rk_kernel *k, rk_opcode code, uint32_t nin, uint32_t nout, uint32_t nreg);
const char *ir_intern(rk_kernel *k, const char *s);  /* arena copy */
/* [A-Za-z_.][A-Za-z0-9_.]* — names that survive the text forms and LLVM. */
bool ir_valid_ident(const char *s);

/* ---- builder.c -------------------------------------------------------------------- */
/* Room for `need` values in k's table (false on OOM; nothing changes then).
 * Grows by doubling, and from 2 MiB on to whole huge pages in a fresh block
 * advised for them (glibc serves such a block by mmap, which Linux aligns
 * to 2 MiB): on a VM the page faults of first touch cost more than the copy,
 * and more than anything else the builder or parser does per value. */
bool ir_vals_reserve(rk_kernel *k, uint64_t need);
/* What the typed builders share (build_gen.c is generated; build_hand.c).
 * Setters do nothing on a NULL op or a failed kernel; a required string
 * that is NULL or a type that is RK_T_NONE records the error naming the
 * attribute (and its legal values). */
void ir_arg_int(rk_kernel *k, rk_op *op, const char *key, int64_t v);
void ir_arg_num(rk_kernel *k, rk_op *op, const char *key, double v);
void ir_arg_bool(rk_kernel *k, rk_op *op, const char *key, bool v);
void ir_arg_str(rk_kernel *k, rk_op *op, const char *key, const char *s);
void ir_arg_type(rk_kernel *k, rk_op *op, const char *key, rk_type t);
static inline void ir_opt_int(rk_kernel *k, rk_op *op, const char *key, rk_opt_int o) {
    if (o.set) ir_arg_int(k, op, key, o.v);
}
static inline void ir_opt_num(rk_kernel *k, rk_op *op, const char *key, rk_opt_num o) {
    if (o.set) ir_arg_num(k, op, key, o.v);
}
static inline void ir_opt_bool(rk_kernel *k, rk_op *op, const char *key, rk_opt_bool o) {
    if (o.set) ir_arg_bool(k, op, key, o.v);
}
static inline void ir_opt_str(rk_kernel *k, rk_op *op, const char *key, const char *s) {
    if (s) ir_arg_str(k, op, key, s);
}
static inline void ir_opt_type(rk_kernel *k, rk_op *op, const char *key, rk_type t) {
    if (rk_type_ok(t)) ir_arg_type(k, op, key, t);
}
/* Check the op; its first result (ir_built), nothing (ir_built_void) or its
 * n results into out (ir_built_out); poison when the check fails. */
rk_value ir_built(rk_kernel *k, rk_op *op);
void ir_built_void(rk_kernel *k, rk_op *op);
void ir_built_out(rk_kernel *k, rk_op *op, rk_value *out, uint32_t n);
/* The result type vec<elem x n> of a `code` op; RK_T_NONE when elem is none
 * (an operand's error) or, error recorded, n is outside 1..4096.
 * ir_buffer_vec: the vector of elem filling dwords (1..4). */
rk_type ir_vec_of(rk_kernel *k, rk_opcode code, rk_type elem, int64_t n);
rk_type ir_buffer_vec(rk_kernel *k, rk_opcode code, rk_type elem, int64_t dwords);
/* Operands of an LDS op: smem, one index per dimension of its type, then
 * ntail values, into in[IR_SMEM_OPERANDS]; 0 (error recorded) when smem is
 * not an allocation or idx is missing. */
enum { IR_SMEM_OPERANDS = 1 + 8 + 2 };
uint32_t ir_smem_operands(rk_kernel *k, rk_opcode code, rk_value smem, const rk_value *idx, const rk_value *tail,
                          uint32_t ntail, rk_value *in);

/* ---- attrs.c ----------------------------------------------------------------------- */
rk_attr_val *ir_attrs_put(rk_kernel *k, rk_attrs *a, const char *key);  /* NULL on OOM */
/* Keys sorted by code point (indices into a->items); caller-provided array of n. */
void ir_attrs_sorted(const rk_attrs *a, uint32_t *order);
bool ir_attr_val_eq(const rk_attr_val *x, const rk_attr_val *y);
bool ir_attrs_eq(const rk_attrs *x, const rk_attrs *y);
uint64_t ir_attrs_hash(const rk_attrs *a);
rk_attr_val *ir_attr_val_copy(rk_kernel *k, const rk_attr_val *v); /* deep, into k's arena */
bool ir_attrs_copy(rk_kernel *k, rk_attrs *dst, const rk_attrs *src);

/* ---- types.c ------------------------------------------------------------------------ */
/* Does type t match a class pattern from the op table ("int", "vec<f16 x*>",
 * "f16|bf16", ...)? pat is [pat, pat+n). */
bool ir_type_matches(const rk_kernel *k, rk_type t, const char *pat, size_t n);
rk_type ir_type_parse_n(rk_kernel *k, const char *text, size_t n, size_t *used);
bool ir_type_is_int(const rk_kernel *k, rk_type t);
bool ir_type_is_float(const rk_kernel *k, rk_type t);

/* ---- check.c (shared by the builder and the verifier) ---------------------------------- */
/* Check one op's operand/result arity and types (its rule) and attributes
 * against the table. Returns false and writes a message into msg. */
bool ir_check_op(const rk_kernel *k, const rk_op *op, char *msg, size_t n);

/* ---- walk helpers ------------------------------------------------------------------------ */
typedef bool (*ir_walk_fn)(void *ud, rk_op *op, uint32_t depth);
/* Pre-order walk; stop when fn returns false. */
bool ir_walk(rk_region *r, ir_walk_fn fn, void *ud, uint32_t depth);

/* ---- verify_asm.c -------------------------------------------------------------------- */
/* Which back ends' constraint letters apply (a target's vendor, or both). */
enum { IR_ASM_AMD = 1u, IR_ASM_NV = 2u, IR_ASM_ANY = 3u };
/* tile.inline_asm: the constraint string against operand and result counts
 * and types (LLVM's grammar); false with msg naming the constraint. */
bool ir_check_asm_constraints(const rk_kernel *k, const rk_op *op, unsigned vendor, char *msg, size_t n);

/* ---- diag.c ------------------------------------------------------------------------------ */
/* Append one diagnostic (copies where and msg); false on OOM. */
bool ir_diag_add(rk_diags *d, rk_severity sev, const rk_op *op, const char *where, const char *msg);

/* ---- passes: fold.c, cse.c, dce.c, driven by optimize.c -------------------------------------- */
/* PURE in the table and not overridden by an attribute pure = false. */
bool ir_op_is_pure(const rk_op *op);
/* Values replaced during one pass: to[id] (id < n) is the replacement, {0}
 * when kept. Passes rewrite each op's operands as their walk reaches it. */
typedef struct ir_rewrite { rk_value *to; uint32_t n; } ir_rewrite;
void ir_rewrite_operands(const ir_rewrite *rw, rk_op *op);
/* Each returns RK_OK or RK_ERR_NOMEM; on NOMEM the kernel is still valid. */
rk_status ir_fold(rk_kernel *k, uint32_t *folded);
rk_status ir_cse(rk_kernel *k, uint32_t *merged);
rk_status ir_dce(rk_kernel *k, uint32_t *removed);

#endif
