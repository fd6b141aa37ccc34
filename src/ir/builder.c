/* rocke — the builder: emission into the open region with a sticky error,
 * generated builders for same-type ops, typed helpers for every family and
 * structured control flow (for with carries, if, if/else with results).
 * Every op is checked against the op table as it is made. Layer: ir. */
#include <stdio.h>

#include "ir_int.h"
#include "../base/fp.h"

static rk_region *cur_region(rk_kernel *k) {
    if (!k->depth) return &k->body;
    ir_frame *f = &k->frames[k->depth - 1];
    return &f->op->regions[f->region];
}

/* Is region r open (the kernel body or one on the frame stack)? */
static bool region_open(const rk_kernel *k, const rk_region *r) {
    if (r == &k->body) return true;
    for (uint32_t i = 0; i < k->depth; i++)
        if (&k->frames[i].op->regions[k->frames[i].region] == r) return true;
    return false;
}

/* A value may be used where it is visible: params everywhere; results and
 * region arguments only while the region that defines them is open. `cur`
 * is the region being built. */
static bool visible(const rk_kernel *k, const rk_region *cur, rk_value v) {
    const ir_valinfo *vi = ir_val(k, v);
    if (!vi) return false;
    switch (vi->kind) {
    case RK_VK_PARAM: return true;
    case RK_VK_RESULT: {
        /* results of a region op are defined after it, not inside it */
        const rk_op *d = vi->def;
        if (!d || !d->parent) return false;
        /* common case: defined in the region being built, and not a region op */
        if (d->parent == cur && !d->nreg) return true;
        if (!region_open(k, d->parent)) return false;
        for (uint32_t i = 0; i < k->depth; i++)
            if (k->frames[i].op == d) return false;
        return true;
    }
    case RK_VK_REGION_ARG:
        return vi->def && region_open(k, &vi->def->regions[0]);
    case RK_VK_NONE: return false;
    }
    return false;
}

bool ir_vals_reserve(rk_kernel *k, uint64_t need) {
    if (need <= k->vals_cap) return true;
    uint64_t ncap = k->vals_cap ? k->vals_cap : 64;
    while (ncap < need) ncap *= 2;
    const uint64_t per_huge = ((uint64_t)2 << 20) / sizeof(ir_valinfo);
    if (ncap >= per_huge) {                                   /* m * 2 MiB - 32 bytes */
        ncap = (ncap + per_huge - 1) / per_huge * per_huge - 1;
        if (ncap < need) ncap += per_huge;
    }
    if (ncap > UINT32_MAX) return false;
    ir_valinfo *v;
    if (ncap < per_huge) {
        v = rk_realloc(k->vals, k->vals_cap * sizeof *v, ncap * sizeof *v);
        if (!v) return false;
    } else {
        v = rk_malloc(ncap * sizeof *v);
        if (!v) return false;
        rk_advise_huge(v, ncap * sizeof *v);
        memcpy(v, k->vals, k->nvals * sizeof *v);
        rk_free(k->vals, k->vals_cap * sizeof *v);
    }
    k->vals = v;
    k->vals_cap = (uint32_t)ncap;
    return true;
}

rk_op *rk_emit(rk_kernel *k, rk_opcode code, const rk_value *in, uint32_t nin, const rk_type *out, uint32_t nout) {
    if (!ir_live(k)) return NULL;
    if ((unsigned)code >= RK_OP__COUNT) code = RK_OP_INVALID;
    const rk_op_info *info = &ir_op_table[code];
    rk_op *op = ir_op_alloc(k, code, nin, nout, info->nreg);
    if (!op) return NULL;
    /* room for every attribute the spec names, so setting them never grows
     * (and never leaves an outgrown array behind in the arena) */
    uint32_t nattrs = ir_op_spec_of(code)->nattrs;
    if (nattrs) {
        op->attrs.items = rk_arena_alloc(&k->arena, nattrs * sizeof *op->attrs.items);
        if (!op->attrs.items) { ir_fail(k, RK_ERR_NOMEM, op, "out of memory"); return NULL; }
        op->attrs.cap = nattrs;
    }
    rk_region *cur = cur_region(k);
    for (uint32_t i = 0; i < nin; i++) {
        if (!visible(k, cur, in[i])) {
            char nb[RK_NAME_MAX];
            if (!rk_value_ok(in[i]) || !ir_val(k, in[i]))
                ir_fail(k, RK_ERR_INVALID, op, "operand %u is not a value (poison or uninitialised)", i);
            else
                ir_fail(k, RK_ERR_INVALID, op, "operand %u (%%%s) is not visible here: it was defined inside a "
                        "region that is closed (carry it out with loop results or select)", i,
                        rk_value_name(k, in[i], nb));
            return NULL;
        }
        op->in[i] = in[i];
    }
    if (nout && !ir_vals_reserve(k, (uint64_t)k->nvals + nout)) {
        ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory adding a value");
        return NULL;
    }
    for (uint32_t i = 0; i < nout; i++) {
        op->out[i] = ir_new_value(k, out[i], RK_VK_RESULT, info->hint, true);
        if (!rk_value_ok(op->out[i])) return NULL;
        ir_valinfo *vi = &k->vals[op->out[i].id];
        vi->def = op;
        vi->index = i;
    }
    op->loc = k->cur_loc;
    if (!ir_region_append(k, cur, op)) return NULL;
    return op;
}

bool rk_op_check(rk_kernel *k, rk_op *op) {
    if (!op || !ir_live(k)) return false;
    char msg[512];
    if (ir_check_op(k, op, msg, sizeof msg)) return true;
    return ir_fail(k, RK_ERR_INVALID, op, "%s", msg);
}

rk_value rk_op_result(const rk_op *op) { return op && op->nout ? op->out[0] : (rk_value){0}; }

void rk_set_loc(rk_kernel *k, const char *loc) {
    if (!loc) { k->cur_loc = NULL; return; }
    k->cur_loc = ir_intern(k, loc);
    if (!k->cur_loc) ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory");
}

/* ---- attribute setters ------------------------------------------------------------ */
/* Find or add attribute `key` on op. Keys are not copied when they outlive
 * the kernel anyway: the string literals of this file (key_static) and keys
 * the op's spec names (the spec keeps its own copy for the process); other
 * keys are copied into the arena. */
static rk_attr_val *put_key(rk_kernel *k, rk_op *op, const char *key, bool key_static) {
    if (!op || !ir_live(k)) return NULL;
    rk_attrs *a = &op->attrs;
    for (uint32_t i = 0; i < a->n; i++)
        if (ir_key_eq(a->items[i].key, key)) return &a->items[i].val;
    const char *kc = key_static ? key : ir_op_spec_key(op->code, key);
    if (!kc) kc = ir_intern(k, key);
    if (kc && a->n == a->cap) {
        rk_attr *items = rk_arena_grow(&k->arena, a->items, sizeof *items, &a->cap, a->n + 1);
        if (items) a->items = items;
        else kc = NULL;
    }
    if (!kc) { ir_fail(k, RK_ERR_NOMEM, op, "out of memory"); return NULL; }
    rk_attr *at = &a->items[a->n++];
    at->key = kc;
    memset(&at->val, 0, sizeof at->val);
    return &at->val;
}
static rk_attr_val *put(rk_kernel *k, rk_op *op, const char *key) { return put_key(k, op, key, false); }

/* A string value: the spec's own copy when the key is an enumeration and s
 * one of its values (no copy per op), else an arena copy. */
static const char *attr_string(rk_kernel *k, const rk_op *op, const char *key, const char *s) {
    const ir_op_spec *sp = ir_op_spec_of(op->code);
    for (uint32_t i = 0; i < sp->nattrs; i++) {
        if (!ir_key_eq(sp->attrs[i].key, key)) continue;
        for (uint32_t j = 0; j < sp->attrs[i].nenum; j++)
            if (ir_key_eq(sp->attrs[i].enums[j], s)) return sp->attrs[i].enums[j];
        break;
    }
    return ir_intern(k, s);
}

static void set_int(rk_attr_val *v, int64_t x) {
    if (v) { v->kind = RK_AK_INT; v->u.i = x; }
}
static void set_float(rk_attr_val *v, double x) {
    if (v) { v->kind = RK_AK_FLOAT; v->u.f = x; }
}
static void set_bool(rk_attr_val *v, bool x) {
    if (v) { v->kind = RK_AK_BOOL; v->u.b = x; }
}
static void set_str(rk_kernel *k, rk_op *op, const char *key, rk_attr_val *v, const char *s) {
    if (!v) return;
    const char *c = attr_string(k, op, key, s);
    if (!c) { ir_fail(k, RK_ERR_NOMEM, op, "out of memory"); return; }
    v->kind = RK_AK_STR;
    v->u.s = c;
}
static void set_type(rk_kernel *k, rk_attr_val *v, rk_type t) {
    if (!v) return;
    v->kind = RK_AK_STR;
    v->u.s = ir_tname(k, t);   /* canonical names live as long as the kernel */
}

void rk_op_set_int(rk_kernel *k, rk_op *op, const char *key, int64_t x) { set_int(put(k, op, key), x); }
void rk_op_set_float(rk_kernel *k, rk_op *op, const char *key, double x) { set_float(put(k, op, key), x); }
void rk_op_set_bool(rk_kernel *k, rk_op *op, const char *key, bool x) { set_bool(put(k, op, key), x); }
void rk_op_set_str(rk_kernel *k, rk_op *op, const char *key, const char *s) { set_str(k, op, key, put(k, op, key), s); }
void rk_op_set_type(rk_kernel *k, rk_op *op, const char *key, rk_type t) { set_type(k, put(k, op, key), t); }
void rk_op_set_int_list(rk_kernel *k, rk_op *op, const char *key, const int64_t *xs, uint32_t n) {
    rk_attr_val *v = put(k, op, key);
    if (!v) return;
    rk_attr_val *items = rk_arena_alloc(&k->arena, (n ? n : 1) * sizeof *items);
    if (!items) { ir_fail(k, RK_ERR_NOMEM, op, "out of memory"); return; }
    for (uint32_t i = 0; i < n; i++) items[i] = (rk_attr_val){.kind = RK_AK_INT, .u.i = xs[i]};
    v->kind = RK_AK_LIST;
    v->n = n;
    v->u.list = items;
}

/* The builders below set attributes by the shared ir_key_* strings, stored
 * as they are (the checks then match them by pointer). */
static void lit_int(rk_kernel *k, rk_op *op, const char *key, int64_t x) { set_int(put_key(k, op, key, true), x); }
static void lit_float(rk_kernel *k, rk_op *op, const char *key, double x) { set_float(put_key(k, op, key, true), x); }
static void lit_bool(rk_kernel *k, rk_op *op, const char *key, bool x) { set_bool(put_key(k, op, key, true), x); }
static void lit_str(rk_kernel *k, rk_op *op, const char *key, const char *s) { set_str(k, op, key, put_key(k, op, key, true), s); }
static void lit_type(rk_kernel *k, rk_op *op, const char *key, rk_type t) { set_type(k, put_key(k, op, key, true), t); }

static rk_value checked(rk_kernel *k, rk_op *op) {
    return rk_op_check(k, op) ? rk_op_result(op) : (rk_value){0};
}

static rk_type vtype(rk_kernel *k, rk_value v) { return ir_vtype(k, v); }

/* ---- generated builders (R_SAME / R_VREDUCE rows of the op table) ----------------------- */
static rk_value build_same(rk_kernel *k, rk_opcode code, const rk_value *in, uint32_t nin) {
    if (!ir_live(k)) return (rk_value){0};
    rk_type t = vtype(k, in[0]);
    if (ir_op_table[code].rule == RK_R_VREDUCE) t = ir_telem(k, t);
    return checked(k, rk_emit(k, code, in, nin, &t, 1));
}

#undef RK_BUILD_DECL_1
#undef RK_BUILD_DECL_2
#undef RK_BUILD_DECL_3
#undef RK_BUILD_DECL_4
#define RK_BUILD_DECL_1(E, fn) \
    rk_value rk_build_##fn(rk_kernel *k, rk_value a) { const rk_value in[] = {a}; return build_same(k, RK_OP_##E, in, 1); }
#define RK_BUILD_DECL_2(E, fn) \
    rk_value rk_build_##fn(rk_kernel *k, rk_value a, rk_value b) { const rk_value in[] = {a, b}; return build_same(k, RK_OP_##E, in, 2); }
#define RK_BUILD_DECL_3(E, fn) \
    rk_value rk_build_##fn(rk_kernel *k, rk_value a, rk_value b, rk_value c) { const rk_value in[] = {a, b, c}; return build_same(k, RK_OP_##E, in, 3); }
#define RK_BUILD_DECL_4(E, fn) \
    rk_value rk_build_##fn(rk_kernel *k, rk_value a, rk_value b, rk_value c, rk_value d) { const rk_value in[] = {a, b, c, d}; return build_same(k, RK_OP_##E, in, 4); }
#define RK_OP(E, name, fn, nin, nout, nreg, rule, ...) RK_BUILD_SHAPE_IF_##rule(E, fn, nin)
#include "rocke/ops.def"

/* ---- constants -------------------------------------------------------------------------- */
rk_value rk_const_int(rk_kernel *k, rk_type t, int64_t v) {
    rk_op *op = rk_emit(k, RK_OP_CONSTANT, NULL, 0, &t, 1);
    lit_int(k, op, ir_key_value, v);
    lit_type(k, op, ir_key_ity, t);
    return checked(k, op);
}
rk_value rk_const_i32(rk_kernel *k, int32_t v) { return rk_const_int(k, RK_T_I32, v); }
rk_value rk_const_i64(rk_kernel *k, int64_t v) { return rk_const_int(k, RK_T_I64, v); }
rk_value rk_const_bool(rk_kernel *k, bool v) { return rk_const_int(k, RK_T_I1, v ? 1 : 0); }

/* The literal as the type will hold it, so every consumer sees one value. */
static double round_to(rk_type t, double v) {
    switch (rk_type_scalar(t)) {
    case RK_S_F32: return (double)(float)v;
    case RK_S_F16: return (double)rk_f16_to_f32(rk_f64_to_f16(v));
    case RK_S_BF16: return (double)rk_bf16_to_f32(rk_f64_to_bf16(v));
    default: return v;
    }
}

rk_value rk_const_float(rk_kernel *k, rk_type t, double v) {
    if (!rk_scalar_is_float(rk_type_scalar(t))) {
        ir_fail(k, RK_ERR_INVALID, NULL, "arith.constant: rk_const_float needs f16, bf16, f32 or f64, got %s",
                rk_type_name(k, t));
        return (rk_value){0};
    }
    rk_op *op = rk_emit(k, RK_OP_CONSTANT, NULL, 0, &t, 1);
    lit_float(k, op, ir_key_value, round_to(t, v));
    lit_type(k, op, ir_key_ity, t);
    return checked(k, op);
}
rk_value rk_const_f32(rk_kernel *k, float v) { return rk_const_float(k, RK_T_F32, v); }

rk_value rk_const_vec(rk_kernel *k, rk_type vt, double fill) {
    rk_op *op = rk_emit(k, RK_OP_CONSTANT_VEC, NULL, 0, &vt, 1);
    rk_type et = ir_telem(k, vt);
    if (rk_scalar_is_int(rk_type_scalar(et))) lit_int(k, op, ir_key_fill, (int64_t)fill);
    else lit_float(k, op, ir_key_fill, round_to(et, fill));
    lit_type(k, op, ir_key_elem, et);
    lit_int(k, op, ir_key_vec, ir_tcount(k, vt));
    return checked(k, op);
}

/* ---- compares, select, conversions ------------------------------------------------------- */
static rk_value build_pred(rk_kernel *k, rk_opcode code, const char *pred, rk_value a, rk_value b, rk_type rt) {
    const rk_value in[] = {a, b};
    rk_op *op = rk_emit(k, code, in, 2, &rt, 1);
    lit_str(k, op, ir_key_pred, pred);
    return checked(k, op);
}
rk_value rk_build_cmp(rk_kernel *k, const char *pred, rk_value a, rk_value b) {
    return build_pred(k, RK_OP_CMP, pred, a, b, RK_T_I1);
}
rk_value rk_build_fcmp(rk_kernel *k, const char *pred, rk_value a, rk_value b) {
    return build_pred(k, RK_OP_FCMP, pred, a, b, RK_T_I1);
}
static rk_type mask_type(rk_kernel *k, rk_value a) {
    return ir_live(k) ? rk_type_vec(k, RK_T_I1, ir_tcount(k, vtype(k, a))) : RK_T_NONE;
}
rk_value rk_build_vcmp(rk_kernel *k, const char *pred, rk_value a, rk_value b) {
    bool f = rk_scalar_is_float(rk_type_scalar(ir_telem(k, vtype(k, a))));
    return build_pred(k, f ? RK_OP_VFCMP : RK_OP_VCMP, pred, a, b, mask_type(k, a));
}

rk_value rk_build_select(rk_kernel *k, rk_value c, rk_value a, rk_value b) {
    const rk_value in[] = {c, a, b};
    rk_type t = vtype(k, a);
    return checked(k, rk_emit(k, RK_OP_SELECT, in, 3, &t, 1));
}
rk_value rk_build_vselect(rk_kernel *k, rk_value m, rk_value a, rk_value b) {
    const rk_value in[] = {m, a, b};
    rk_type t = vtype(k, a);
    return checked(k, rk_emit(k, RK_OP_VSELECT, in, 3, &t, 1));
}

rk_value rk_build_convert(rk_kernel *k, rk_opcode code, rk_value a, rk_type to) {
    if (!ir_live(k)) return (rk_value){0};
    const rk_op_info *info = rk_op_info_of(code);
    if (code == RK_OP_INVALID || RK_COUNT_N(info->nin) != 1 || info->nout != 1) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_build_convert: %s is not a one-operand, one-result op",
                rk_opcode_name(code));
        return (rk_value){0};
    }
    rk_op *op = rk_emit(k, code, &a, 1, &to, 1);
    if (ir_op_spec_key(code, ir_key_target)) lit_type(k, op, ir_key_target, to);
    return checked(k, op);
}
rk_value rk_build_unary_sig(rk_kernel *k, rk_opcode code, rk_value a, rk_type to) {
    return rk_build_convert(k, code, a, to);
}

/* ---- vectors ---------------------------------------------------------------------------------- */
rk_value rk_build_extract(rk_kernel *k, rk_value v, uint32_t index) {
    rk_type t = ir_telem(k, vtype(k, v));
    rk_op *op = rk_emit(k, RK_OP_VEXTRACT, &v, 1, &t, 1);
    lit_int(k, op, ir_key_index, index);
    return checked(k, op);
}
rk_value rk_build_insert(rk_kernel *k, rk_value v, rk_value e, uint32_t index) {
    const rk_value in[] = {v, e};
    rk_type t = vtype(k, v);
    rk_op *op = rk_emit(k, RK_OP_VINSERT, in, 2, &t, 1);
    lit_int(k, op, ir_key_index, index);
    return checked(k, op);
}
rk_value rk_build_splat(rk_kernel *k, rk_value s, uint32_t n) {
    if (!ir_live(k)) return (rk_value){0};
    rk_type t = rk_type_vec(k, vtype(k, s), n);
    if (!rk_type_ok(t)) { ir_fail(k, RK_ERR_INVALID, NULL, "vector.splat: %s", rk_error_message()); return (rk_value){0}; }
    rk_op *op = rk_emit(k, RK_OP_VSPLAT, &s, 1, &t, 1);
    lit_int(k, op, ir_key_vec, n);
    return checked(k, op);
}
rk_value rk_build_pack(rk_kernel *k, const rk_value *elems, uint32_t n) {
    if (!ir_live(k)) return (rk_value){0};
    if (n == 0) { ir_fail(k, RK_ERR_INVALID, NULL, "vector.pack needs at least one element"); return (rk_value){0}; }
    rk_type et = vtype(k, elems[0]);
    rk_type t = rk_type_vec(k, et, n);
    if (!rk_type_ok(t)) { ir_fail(k, RK_ERR_INVALID, NULL, "vector.pack: %s", rk_error_message()); return (rk_value){0}; }
    rk_op *op = rk_emit(k, RK_OP_VPACK, elems, n, &t, 1);
    lit_type(k, op, ir_key_elem, et);
    lit_int(k, op, ir_key_vec, n);
    return checked(k, op);
}
rk_value rk_build_concat(rk_kernel *k, rk_value a, rk_value b) {
    if (!ir_live(k)) return (rk_value){0};
    const rk_value in[] = {a, b};
    rk_type t = rk_type_vec(k, ir_telem(k, vtype(k, a)), ir_tcount(k, vtype(k, a)) + ir_tcount(k, vtype(k, b)));
    return checked(k, rk_emit(k, RK_OP_VCONCAT, in, 2, &t, 1));
}
rk_value rk_build_shuffle_vec(rk_kernel *k, rk_value a, rk_value b, const int32_t *mask, uint32_t n) {
    if (!ir_live(k)) return (rk_value){0};
    const rk_value in[] = {a, b};
    rk_type t = rk_type_vec(k, ir_telem(k, vtype(k, a)), n);
    rk_op *op = rk_emit(k, RK_OP_VSHUFFLE, in, 2, &t, 1);
    int64_t m[4096];
    for (uint32_t i = 0; i < n && i < 4096; i++) m[i] = mask[i];
    rk_op_set_int_list(k, op, ir_key_mask, m, n < 4096 ? n : 4096);
    return checked(k, op);
}

/* ---- work-item identity ---------------------------------------------------------------------- */
static rk_value build_id(rk_kernel *k, rk_opcode code, int axis) {
    static const char *const axes[] = {"x", "y", "z"};
    if (axis < 0 || axis > 2) {
        ir_fail(k, RK_ERR_INVALID, NULL, "%s: axis must be 0, 1 or 2 (x, y, z), got %d", rk_opcode_name(code), axis);
        return (rk_value){0};
    }
    rk_type t = RK_T_I32;
    rk_op *op = rk_emit(k, code, NULL, 0, &t, 1);
    lit_str(k, op, ir_key_axis, axes[axis]);
    return checked(k, op);
}
rk_value rk_build_thread_id(rk_kernel *k, int axis) { return build_id(k, RK_OP_THREAD_ID, axis); }
rk_value rk_build_block_id(rk_kernel *k, int axis) { return build_id(k, RK_OP_BLOCK_ID, axis); }
rk_value rk_build_block_dim(rk_kernel *k, int axis) { return build_id(k, RK_OP_BLOCK_DIM, axis); }
rk_value rk_build_grid_dim(rk_kernel *k, int axis) { return build_id(k, RK_OP_GRID_DIM, axis); }
rk_value rk_build_lane_id(rk_kernel *k) {
    rk_type t = RK_T_I32;
    return checked(k, rk_emit(k, RK_OP_LANE_ID, NULL, 0, &t, 1));
}

/* ---- global memory ----------------------------------------------------------------------------- */
static uint32_t bytes_of(rk_kernel *k, rk_type t) { return (ir_tbits(k, t) + 7) / 8; }

rk_value rk_build_load(rk_kernel *k, rk_value ptr, rk_value idx, uint32_t vec) {
    if (!ir_live(k)) return (rk_value){0};
    rk_type pt = vtype(k, ptr);
    if (ir_tkind(k, pt) != RK_TK_PTR) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_build_load: operand 0 must be a pointer, got %s", rk_type_name(k, pt));
        return (rk_value){0};
    }
    rk_type et = ir_telem(k, pt);
    const rk_value in[] = {ptr, idx};
    if (vec <= 1) {
        rk_op *op = rk_emit(k, RK_OP_GLOBAL_LOAD_TYPED, in, 2, &et, 1);
        lit_type(k, op, ir_key_elem_type, et);
        lit_int(k, op, ir_key_align, bytes_of(k, et));
        return checked(k, op);
    }
    rk_type vt = rk_type_vec(k, et, vec);
    if (!rk_type_ok(vt)) { ir_fail(k, RK_ERR_INVALID, NULL, "memref.global_load_vN: %s", rk_error_message()); return (rk_value){0}; }
    rk_op *op = rk_emit(k, RK_OP_GLOBAL_LOAD_VN, in, 2, &vt, 1);
    lit_type(k, op, ir_key_elem_type, et);
    lit_int(k, op, ir_key_vec, vec);
    lit_int(k, op, ir_key_align, bytes_of(k, vt));
    return checked(k, op);
}

void rk_build_store(rk_kernel *k, rk_value ptr, rk_value idx, rk_value val) {
    if (!ir_live(k)) return;
    const rk_value in[] = {ptr, idx, val};
    rk_type vt = vtype(k, val);
    bool vec = ir_tkind(k, vt) == RK_TK_VEC;
    rk_op *op = rk_emit(k, vec ? RK_OP_GLOBAL_STORE_VN : RK_OP_GLOBAL_STORE_TYPED, in, 3, NULL, 0);
    rk_type et = vec ? ir_telem(k, vt) : vt;
    lit_type(k, op, ir_key_elem_type, et);
    if (vec) lit_int(k, op, ir_key_vec, ir_tcount(k, vt));
    lit_int(k, op, ir_key_align, bytes_of(k, vt));
    rk_op_check(k, op);
}

rk_value rk_build_ptr_add(rk_kernel *k, rk_value ptr, rk_value off) {
    const rk_value in[] = {ptr, off};
    rk_type t = vtype(k, ptr);
    return checked(k, rk_emit(k, RK_OP_GLOBAL_PTR_ADD, in, 2, &t, 1));
}

/* ---- LDS ------------------------------------------------------------------------------------------- */
rk_value rk_build_smem_alloc(rk_kernel *k, rk_type elem, const uint32_t *dims, uint32_t rank) {
    if (!ir_live(k)) return (rk_value){0};
    rk_type t = rk_type_smem(k, elem, dims, rank);
    if (!rk_type_ok(t)) { ir_fail(k, RK_ERR_INVALID, NULL, "tile.smem_alloc: %s", rk_error_message()); return (rk_value){0}; }
    return checked(k, rk_emit(k, RK_OP_SMEM_ALLOC, NULL, 0, &t, 1));
}

rk_value rk_build_smem_load(rk_kernel *k, rk_value smem, const rk_value *idx, uint32_t vec) {
    if (!ir_live(k)) return (rk_value){0};
    rk_type st = vtype(k, smem);
    uint32_t rank = rk_type_rank(k, st);
    if (ir_tkind(k, st) != RK_TK_SMEM) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_build_smem_load: operand 0 must be an LDS allocation, got %s", rk_type_name(k, st));
        return (rk_value){0};
    }
    rk_value in[9];
    in[0] = smem;
    for (uint32_t i = 0; i < rank; i++) in[1 + i] = idx[i];
    rk_type et = ir_telem(k, st);
    rk_type rt = vec > 1 ? rk_type_vec(k, et, vec) : et;
    rk_op *op = rk_emit(k, vec > 1 ? RK_OP_SMEM_LOAD_VN : RK_OP_SMEM_LOAD, in, 1 + rank, &rt, 1);
    if (vec > 1) {
        lit_type(k, op, ir_key_elem_type, et);
        lit_int(k, op, ir_key_vec, vec);
    }
    lit_int(k, op, ir_key_rank, rank);
    return checked(k, op);
}

void rk_build_smem_store(rk_kernel *k, rk_value smem, const rk_value *idx, rk_value val) {
    if (!ir_live(k)) return;
    rk_type st = vtype(k, smem);
    if (ir_tkind(k, st) != RK_TK_SMEM) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_build_smem_store: operand 0 must be an LDS allocation, got %s", rk_type_name(k, st));
        return;
    }
    uint32_t rank = rk_type_rank(k, st);
    rk_value in[10];
    in[0] = smem;
    for (uint32_t i = 0; i < rank; i++) in[1 + i] = idx[i];
    in[1 + rank] = val;
    rk_type vt = vtype(k, val);
    bool vec = ir_tkind(k, vt) == RK_TK_VEC;
    rk_op *op = rk_emit(k, vec ? RK_OP_SMEM_STORE_VN : RK_OP_SMEM_STORE, in, 2 + rank, NULL, 0);
    lit_int(k, op, ir_key_rank, rank);
    lit_type(k, op, ir_key_elem_type, ir_telem(k, st));
    if (vec) {
        lit_int(k, op, ir_key_vec, ir_tcount(k, vt));
        lit_int(k, op, ir_key_align, bytes_of(k, vt));
    }
    rk_op_check(k, op);
}

/* ---- buffer views -------------------------------------------------------------------------------------- */
rk_value rk_build_buffer_rsrc(rk_kernel *k, rk_value ptr, rk_value num_bytes) {
    const rk_value in[] = {ptr, num_bytes};
    rk_type t = RK_T_RSRC;
    return checked(k, rk_emit(k, RK_OP_BUFFER_RSRC, in, 2, &t, 1));
}

rk_value rk_build_buffer_load(rk_kernel *k, rk_value rsrc, rk_value voff, rk_value soff, rk_type elem, uint32_t vec) {
    if (!ir_live(k)) return (rk_value){0};
    const rk_value in[] = {rsrc, voff, soff};
    if (vec <= 1) {
        rk_op *op = rk_emit(k, RK_OP_BUFFER_LOAD, in, 3, &elem, 1);
        lit_type(k, op, ir_key_elem_type, elem);
        return checked(k, op);
    }
    rk_type vt = rk_type_vec(k, elem, vec);
    uint32_t bits = ir_tbits(k, vt);
    if (!rk_type_ok(vt) || bits % 32) {
        ir_fail(k, RK_ERR_INVALID, NULL, "tile.buffer_load_vN: %u x %s is not a whole number of dwords",
                vec, rk_type_name(k, elem));
        return (rk_value){0};
    }
    rk_op *op = rk_emit(k, RK_OP_BUFFER_LOAD_VN, in, 3, &vt, 1);
    lit_int(k, op, ir_key_dwords, bits / 32);
    lit_type(k, op, ir_key_elem_type, elem);
    return checked(k, op);
}

void rk_build_buffer_store(rk_kernel *k, rk_value rsrc, rk_value voff, rk_value soff, rk_value val) {
    if (!ir_live(k)) return;
    const rk_value in[] = {rsrc, voff, soff, val};
    rk_type vt = vtype(k, val);
    bool vec = ir_tkind(k, vt) == RK_TK_VEC;
    rk_op *op = rk_emit(k, vec ? RK_OP_BUFFER_STORE_VN : RK_OP_BUFFER_STORE, in, 4, NULL, 0);
    lit_type(k, op, ir_key_elem_type, vec ? ir_telem(k, vt) : vt);
    if (vec) lit_int(k, op, ir_key_dwords, ir_tbits(k, vt) / 32);
    rk_op_check(k, op);
}

/* ---- async copies, cross-lane, barriers ------------------------------------------------------------------ */
void rk_build_async_copy(rk_kernel *k, rk_value src, rk_value src_idx, rk_value dst, rk_value dst_idx,
                         rk_value valid, uint32_t bytes) {
    const rk_value in[] = {src, src_idx, dst, dst_idx, valid};
    rk_op *op = rk_emit(k, RK_OP_ASYNC_COPY, in, 5, NULL, 0);
    lit_int(k, op, ir_key_bytes, bytes);
    rk_op_check(k, op);
}
void rk_build_async_commit(rk_kernel *k) { rk_op_check(k, rk_emit(k, RK_OP_ASYNC_COMMIT_GROUP, NULL, 0, NULL, 0)); }
void rk_build_async_wait(rk_kernel *k, uint32_t n) {
    rk_op *op = rk_emit(k, RK_OP_ASYNC_WAIT_GROUP, NULL, 0, NULL, 0);
    lit_int(k, op, ir_key_n, n);
    rk_op_check(k, op);
}

rk_value rk_build_shuffle(rk_kernel *k, const char *mode, rk_value v, rk_value lane) {
    const rk_value in[] = {v, lane};
    rk_type t = vtype(k, v);
    rk_op *op = rk_emit(k, RK_OP_SHUFFLE, in, 2, &t, 1);
    lit_str(k, op, ir_key_mode, mode);
    return checked(k, op);
}

rk_value rk_build_ballot(rk_kernel *k, rk_value pred) {
    rk_type t = RK_T_I64;
    return checked(k, rk_emit(k, RK_OP_WAVE_BALLOT, &pred, 1, &t, 1));
}

void rk_build_barrier_op(rk_kernel *k, rk_opcode code) {
    const rk_op_info *info = rk_op_info_of(code);
    if (code == RK_OP_INVALID || info->nin != 0 || info->nout != 0 || info->nreg != 0) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_build_barrier_op: %s takes operands or has results", rk_opcode_name(code));
        return;
    }
    rk_op_check(k, rk_emit(k, code, NULL, 0, NULL, 0));
}
void rk_build_sync(rk_kernel *k) { rk_build_barrier_op(k, RK_OP_SYNC); }

void rk_build_s_waitcnt(rk_kernel *k, int vmcnt, int lgkmcnt, int expcnt) {
    rk_op *op = rk_emit(k, RK_OP_S_WAITCNT, NULL, 0, NULL, 0);
    lit_int(k, op, ir_key_vmcnt, vmcnt);
    lit_int(k, op, ir_key_lgkmcnt, lgkmcnt);
    lit_int(k, op, ir_key_expcnt, expcnt);
    rk_op_check(k, op);
}

/* ---- atomics, matrix atoms, inline asm ---------------------------------------------------------------------- */
rk_value rk_build_atomic(rk_kernel *k, const char *kind, rk_value ptr, rk_value idx, rk_value v) {
    const rk_value in[] = {ptr, idx, v};
    rk_type t = vtype(k, v);
    rk_op *op = rk_emit(k, RK_OP_GLOBAL_ATOMIC, in, 3, &t, 1);
    lit_str(k, op, ir_key_kind, kind);
    return checked(k, op);
}

rk_value rk_build_atomic_cas(rk_kernel *k, rk_value ptr, rk_value idx, rk_value cmp, rk_value nv) {
    const rk_value in[] = {ptr, idx, cmp, nv};
    rk_type t = vtype(k, cmp);
    return checked(k, rk_emit(k, RK_OP_GLOBAL_ATOMIC_CAS, in, 4, &t, 1));
}

rk_value rk_build_mma(rk_kernel *k, const char *op_id, rk_value a, rk_value b, rk_value c) {
    const rk_value in[] = {a, b, c};
    rk_type t = vtype(k, c);
    rk_op *op = rk_emit(k, RK_OP_MMA, in, 3, &t, 1);
    lit_str(k, op, ir_key_op_id, op_id);
    return checked(k, op);
}

rk_op *rk_build_inline_asm(rk_kernel *k, const char *templ, const char *constraints, const rk_value *in,
                           uint32_t nin, const rk_type *out, uint32_t nout, bool sideeffect) {
    rk_op *op = rk_emit(k, RK_OP_INLINE_ASM, in, nin, out, nout);
    lit_str(k, op, ir_key_template, templ);
    lit_str(k, op, ir_key_constraints, constraints);
    lit_bool(k, op, ir_key_sideeffect, sideeffect);
    return rk_op_check(k, op) ? op : NULL;
}

/* ---- structured control flow ---------------------------------------------------------------------------------- */
static bool push(rk_kernel *k, rk_op *op, uint32_t region, uint32_t nres) {
    if (k->depth == IR_MAX_DEPTH)
        return ir_fail(k, RK_ERR_INVALID, op, "regions nest deeper than %d", IR_MAX_DEPTH);
    k->frames[k->depth++] = (ir_frame){op, region, nres};
    return true;
}

static rk_value region_arg(rk_kernel *k, rk_op *op, uint32_t i, rk_type t, const char *name, const char *hint) {
    bool numbered = name == NULL;
    if (name && !ir_valid_ident(name)) {
        ir_fail(k, RK_ERR_INVALID, op, "region argument name '%s' is not an identifier ([A-Za-z_.][A-Za-z0-9_.]*)", name);
        return (rk_value){0};
    }
    rk_value v = ir_new_value(k, t, RK_VK_REGION_ARG, numbered ? hint : ir_intern(k, name), numbered);
    if (!rk_value_ok(v)) return v;
    k->vals[v.id].def = op;
    k->vals[v.id].index = i;
    return v;
}

/* "%" + rk_value_name(v), in the arena; formatted by hand (one per loop
 * value, and printf is most of the cost of a small string). */
static const char *value_ref(rk_kernel *k, rk_value v) {
    const ir_valinfo *vi = ir_val(k, v);
    const char *hint = vi ? vi->hint : "<none>";
    char num[10];
    size_t nn = 0, hn = strlen(hint);
    if (vi && vi->num != IR_NO_NUM) {
        char rev[10];
        uint32_t x = vi->num;
        do { rev[nn++] = (char)('0' + x % 10); x /= 10; } while (x);
        for (size_t i = 0; i < nn; i++) num[i] = rev[nn - 1 - i];
        /* as rk_value_name's buffer: at most RK_NAME_MAX - 1 characters */
        if (hn + nn > RK_NAME_MAX - 1) {
            if (hn > RK_NAME_MAX - 1) hn = RK_NAME_MAX - 1;
            nn = RK_NAME_MAX - 1 - hn;
        }
    }
    char *s = rk_arena_alloc(&k->arena, hn + nn + 2);
    if (!s) return NULL;
    s[0] = '%';
    memcpy(s + 1, hint, hn);
    memcpy(s + 1 + hn, num, nn);
    s[1 + hn + nn] = '\0';
    return s;
}

rk_value rk_for_begin(rk_kernel *k, rk_value lo, rk_value hi, rk_value step, const char *iv_name, uint32_t n_iter,
                      const rk_value *inits, const char *const *iter_names, rk_value *iter) {
    if (!ir_live(k)) return (rk_value){0};
    if (n_iter > 1024) { ir_fail(k, RK_ERR_INVALID, NULL, "scf.for: at most 1024 loop-carried values"); return (rk_value){0}; }
    rk_value in[3 + 1024];
    rk_type outs[1024];
    in[0] = lo; in[1] = hi; in[2] = step;
    for (uint32_t i = 0; i < n_iter; i++) {
        in[3 + i] = inits[i];
        outs[i] = vtype(k, inits[i]);
    }
    rk_op *op = rk_emit(k, RK_OP_FOR, in, 3 + n_iter, outs, n_iter);
    if (!op) return (rk_value){0};
    rk_region *body = &op->regions[0];
    body->label = "body";
    body->nargs = 1 + n_iter;
    body->args = rk_arena_alloc(&k->arena, body->nargs * sizeof *body->args);
    if (!body->args) { ir_fail(k, RK_ERR_NOMEM, op, "out of memory"); return (rk_value){0}; }
    body->args[0] = region_arg(k, op, 0, vtype(k, lo), iv_name, "iv");
    for (uint32_t i = 0; i < n_iter; i++)
        body->args[1 + i] = region_arg(k, op, 1 + i, outs[i], iter_names ? iter_names[i] : NULL, "carry");
    if (!ir_live(k)) return (rk_value){0};
    const char *iv_ref = value_ref(k, body->args[0]);
    if (!iv_ref) { ir_fail(k, RK_ERR_NOMEM, op, "out of memory"); return (rk_value){0}; }
    rk_attr_val *ivv = put_key(k, op, ir_key_iv, true);   /* iv_ref is already the kernel's */
    if (ivv) { ivv->kind = RK_AK_STR; ivv->u.s = iv_ref; }
    lit_type(k, op, ir_key_iv_type, vtype(k, lo));
    if (n_iter) {
        rk_attr_val *v = put_key(k, op, ir_key_iter_args, true);
        rk_attr_val *items = rk_arena_alloc(&k->arena, n_iter * sizeof *items);
        if (!v || !items) { ir_fail(k, RK_ERR_NOMEM, op, "out of memory"); return (rk_value){0}; }
        for (uint32_t i = 0; i < n_iter; i++) {
            rk_attr *m = rk_arena_alloc(&k->arena, 2 * sizeof *m);
            if (!m) { ir_fail(k, RK_ERR_NOMEM, op, "out of memory"); return (rk_value){0}; }
            const char *ref = value_ref(k, body->args[1 + i]);
            if (!ref) { ir_fail(k, RK_ERR_NOMEM, op, "out of memory"); return (rk_value){0}; }
            m[0] = (rk_attr){"name", {.kind = RK_AK_STR, .u.s = ref}};
            m[1] = (rk_attr){"type", {.kind = RK_AK_STR, .u.s = rk_type_name(k, outs[i])}};
            items[i] = (rk_attr_val){.kind = RK_AK_MAP, .n = 2, .u.map = m};
            iter[i] = body->args[1 + i];
        }
        v->kind = RK_AK_LIST;
        v->n = n_iter;
        v->u.list = items;
        lit_int(k, op, ir_key_num_iter_args, n_iter);
        lit_bool(k, op, ir_key_unroll, false);
        lit_bool(k, op, ir_key_elide_trailing_barrier, true);
    }
    if (!rk_op_check(k, op) || !push(k, op, 0, n_iter)) return (rk_value){0};
    return body->args[0];
}

void rk_for_set_unroll(rk_kernel *k, bool unroll) {
    if (!ir_live(k)) return;
    for (uint32_t i = k->depth; i-- > 0;)
        if (k->frames[i].op->code == RK_OP_FOR) { lit_bool(k, k->frames[i].op, ir_key_unroll, unroll); return; }
    ir_fail(k, RK_ERR_INVALID, NULL, "rk_for_set_unroll outside a loop");
}

static rk_op *emit_yield(rk_kernel *k, const rk_value *ys, uint32_t n) {
    rk_op *y = rk_emit(k, RK_OP_YIELD, ys, n, NULL, 0);
    lit_int(k, y, ir_key_num, n);
    return rk_op_check(k, y) ? y : NULL;
}

static ir_frame *top(rk_kernel *k, const char *who) {
    if (!ir_live(k)) return NULL;
    if (!k->depth) { ir_fail(k, RK_ERR_INVALID, NULL, "%s without an open region", who); return NULL; }
    return &k->frames[k->depth - 1];
}

void rk_for_end(rk_kernel *k, const rk_value *yields, uint32_t n, rk_value *results) {
    ir_frame *f = top(k, "rk_for_end");
    if (!f) return;
    if (f->op->code != RK_OP_FOR) {
        ir_fail(k, RK_ERR_INVALID, f->op, "rk_for_end closes an %s region (missing rk_if_end?)", rk_opcode_name(f->op->code));
        return;
    }
    if (n != f->op->nout) {
        ir_fail(k, RK_ERR_INVALID, f->op, "the loop carries %u values but rk_for_end yields %u", f->op->nout, n);
        return;
    }
    if (n && !emit_yield(k, yields, n)) return;
    rk_op *op = f->op;
    k->depth--;
    for (uint32_t i = 0; i < n && results; i++) results[i] = op->out[i];
}

void rk_if_begin(rk_kernel *k, rk_value cond) {
    if (!ir_live(k)) return;
    /* two regions reserved so a later rk_else can turn it into scf.if_else */
    rk_op *op = ir_op_alloc(k, RK_OP_IF, 1, 0, 2);
    if (!op) return;
    if (!visible(k, cur_region(k), cond)) { ir_fail(k, RK_ERR_INVALID, op, "condition is not a visible value"); return; }
    op->in[0] = cond;
    op->nreg = 1;
    op->loc = k->cur_loc;
    op->regions[0].label = "then";
    op->regions[1].label = "else";
    if (!ir_region_append(k, cur_region(k), op) || !rk_op_check(k, op)) return;
    push(k, op, 0, 0);
}

void rk_if_else_begin(rk_kernel *k, rk_value cond, uint32_t nres, const rk_type *types, rk_value *results) {
    rk_op *op = rk_emit(k, RK_OP_IF_ELSE, &cond, 1, types, nres);
    if (!op || !rk_op_check(k, op)) return;
    op->regions[0].label = "then";
    op->regions[1].label = "else";
    for (uint32_t i = 0; i < nres; i++) results[i] = op->out[i];
    push(k, op, 0, nres);
}

void rk_else(rk_kernel *k, const rk_value *yields, uint32_t n) {
    ir_frame *f = top(k, "rk_else");
    if (!f) return;
    rk_op *op = f->op;
    if ((op->code != RK_OP_IF && op->code != RK_OP_IF_ELSE) || f->region != 0) {
        ir_fail(k, RK_ERR_INVALID, op, "rk_else must follow rk_if_begin or rk_if_else_begin");
        return;
    }
    if (n != f->nres) {
        ir_fail(k, RK_ERR_INVALID, op, "the then-region yields %u values but the if has %u results", n, f->nres);
        return;
    }
    if (n && !emit_yield(k, yields, n)) return;
    if (op->code == RK_OP_IF) {
        op->code = RK_OP_IF_ELSE;
        op->nreg = 2;
    }
    f->region = 1;
}

void rk_if_end(rk_kernel *k, const rk_value *yields, uint32_t n) {
    ir_frame *f = top(k, "rk_if_end");
    if (!f) return;
    rk_op *op = f->op;
    if (op->code != RK_OP_IF && op->code != RK_OP_IF_ELSE) {
        ir_fail(k, RK_ERR_INVALID, op, "rk_if_end closes an %s region (missing rk_for_end?)", rk_opcode_name(op->code));
        return;
    }
    if (op->code == RK_OP_IF_ELSE && f->region == 0 && f->nres) {
        ir_fail(k, RK_ERR_INVALID, op, "an if with results needs rk_else before rk_if_end");
        return;
    }
    if (n != f->nres) {
        ir_fail(k, RK_ERR_INVALID, op, "the region yields %u values but the if has %u results", n, f->nres);
        return;
    }
    if (n && !emit_yield(k, yields, n)) return;
    k->depth--;
}

void rk_return(rk_kernel *k) { rk_op_check(k, rk_emit(k, RK_OP_RETURN, NULL, 0, NULL, 0)); }
