/* rocke tests — the verifier: a table of broken kernels (built through the
 * unchecked constructors, the way a parser or a buggy pass would produce
 * them), each with the message it must produce; several errors at once;
 * warnings; target legality on fake targets; diagnostics output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ir/ir_int.h"

/* ---- unchecked construction --------------------------------------------------------- */
/* Append an op to region r with the given operands and fresh results, with
 * no visibility or type checks at all. */
static rk_op *raw(rk_kernel *k, rk_region *r, rk_opcode code, const rk_value *in, uint32_t nin, const rk_type *out,
                  uint32_t nout) {
    const rk_op_info *info = rk_op_info_of(code);
    rk_op *op = ir_op_alloc(k, code, nin, nout, info->nreg);
    assert_non_null(op);
    for (uint32_t i = 0; i < nin; i++) op->in[i] = in[i];
    for (uint32_t i = 0; i < nout; i++) {
        op->out[i] = ir_new_value(k, out[i], RK_VK_RESULT, info->hint, true);
        k->vals[op->out[i].id].def = op;
        k->vals[op->out[i].id].index = i;
    }
    assert_true(ir_region_append(k, r, op));
    return op;
}

static rk_kernel *kernel_with_params(rk_value *x, rk_value *y, rk_value *out) {
    rk_kernel *k = rk_kernel_new("broken");
    assert_non_null(k);
    *x = rk_add_param(k, "x", RK_T_I32, NULL);
    *y = rk_add_param(k, "y", RK_T_I32, NULL);
    *out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    return k;
}

static void store(rk_kernel *k, rk_value out, rk_value v) {
    rk_value zero = rk_const_i32(k, 0);
    rk_store_global(k, out, zero, v);
}

/* A loop carrying one i32 (x) whose body adds y; returns the for op. */
static rk_op *loop1(rk_kernel *k, rk_value x, rk_value y, rk_value *res) {
    rk_value lo = rk_const_i32(k, 0), hi = rk_const_i32(k, 4), st = rk_const_i32(k, 1), acc;
    const char *names[] = {"acc"};
    rk_for_begin(k, lo, hi, st, "k0", 1, &x, names, &acc);
    rk_value n = rk_build_add(k, acc, y);
    rk_op *f = k->frames[k->depth - 1].op;
    rk_for_end(k, &n, 1, res);
    return f;
}

/* ---- the broken kernels -------------------------------------------------------------- */
typedef rk_kernel *(*make_fn)(void);

static rk_kernel *bad_operand_type(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value f = rk_const_f32(k, 1.0f);
    const rk_value in[] = {x, f};
    rk_type t = RK_T_I32;
    rk_emit(k, RK_OP_ADD, in, 2, &t, 1);
    return k;
}

static rk_kernel *missing_attr(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    const rk_value in[] = {x, y};
    rk_type t = RK_T_I1;
    rk_emit(k, RK_OP_CMP, in, 2, &t, 1);
    return k;
}

static rk_kernel *attr_out_of_range(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_type t = RK_T_I32;
    rk_op *op = rk_emit(k, RK_OP_DS_SWIZZLE_XOR, &x, 1, &t, 1);
    rk_op_set_int(k, op, "xor_mask", 40);
    return k;
}

static rk_kernel *attr_bad_enum(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    const rk_value in[] = {x, y};
    rk_type t = RK_T_I1;
    rk_op *op = rk_emit(k, RK_OP_CMP, in, 2, &t, 1);
    rk_op_set_str(k, op, "pred", "less");
    return k;
}

static rk_kernel *wrong_arity(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_type t = RK_T_I32;
    rk_emit(k, RK_OP_ADD, &x, 1, &t, 1);
    return k;
}

static rk_kernel *use_before_def(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value a = rk_build_add(k, x, y);
    rk_value b = rk_build_mul(k, a, y);
    store(k, out, b);
    /* swap the add and the mul */
    rk_op *t = k->body.ops[0];
    k->body.ops[0] = k->body.ops[1];
    k->body.ops[1] = t;
    return k;
}

static rk_kernel *escape_region(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_if_begin(k, c);
    rk_value inner = rk_build_add(k, x, y);
    rk_if_end(k, NULL, 0);
    rk_value zero = rk_const_i32(k, 0);
    const rk_value in[] = {out, zero, inner};
    rk_op *st = raw(k, &k->body, RK_OP_GLOBAL_STORE_TYPED, in, 3, NULL, 0);
    (void)st;
    return k;
}

static rk_kernel *iv_outside_loop(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    rk_value iv = f->regions[0].args[0];
    rk_type t = RK_T_I32;
    const rk_value in[] = {iv, y};
    raw(k, &k->body, RK_OP_ADD, in, 2, &t, 1);
    return k;
}

static rk_kernel *result_in_own_body(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    rk_region *body = &f->regions[0];
    /* the add inside the body now uses the loop's own result */
    body->ops[0]->in[1] = f->out[0];
    return k;
}

static rk_kernel *defined_twice(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value a = rk_build_add(k, x, y);
    rk_build_mul(k, x, y);
    k->body.ops[1]->out[0] = a;
    return k;
}

static rk_kernel *name_collision(void) {
    /* a parameter called add2 collides with the builder's %add2 */
    rk_kernel *k = rk_kernel_new("names");
    rk_value p = rk_add_param(k, "add2", RK_T_I32, NULL);
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value c = rk_const_i32(k, 1);              /* %c1 */
    rk_value a = rk_build_add(k, p, c);           /* %add2 */
    rk_value zero = rk_const_i32(k, 0);
    rk_store_global(k, out, zero, a);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static rk_kernel *yield_not_last(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    rk_type t = RK_T_I32;
    const rk_value in[] = {y, y};
    raw(k, &f->regions[0], RK_OP_ADD, in, 2, &t, 1);
    return k;
}

static rk_kernel *missing_yield(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    f->regions[0].nops--;                          /* drop the yield */
    return k;
}

static rk_kernel *yield_without_carries(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value lo = rk_const_i32(k, 0), hi = rk_const_i32(k, 4), st = rk_const_i32(k, 1);
    rk_for_begin(k, lo, hi, st, NULL, 0, NULL, NULL, NULL);
    rk_op *f = k->frames[k->depth - 1].op;
    rk_for_end(k, NULL, 0, NULL);
    rk_op *y0 = raw(k, &f->regions[0], RK_OP_YIELD, NULL, 0, NULL, 0);
    rk_op_set_int(k, y0, "num", 0);
    return k;
}

static rk_kernel *if_else_missing_yield(void) {
    rk_value x, y, out, r;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_type t = RK_T_I32;
    rk_if_else_begin(k, c, 1, &t, &r);
    rk_op *ie = k->frames[k->depth - 1].op;
    rk_else(k, &x, 1);
    rk_if_end(k, &y, 1);
    ie->regions[1].nops--;                         /* else: drop its yield */
    store(k, out, r);
    return k;
}

static rk_kernel *return_not_last(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_build_return(k);
    store(k, out, x);
    return k;
}

static rk_kernel *return_in_region(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_if_begin(k, c);
    rk_op *ifop = k->frames[k->depth - 1].op;
    rk_if_end(k, NULL, 0);
    raw(k, &ifop->regions[0], RK_OP_RETURN, NULL, 0, NULL, 0);
    return k;
}

static rk_kernel *if_with_result(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_type t = RK_T_I32;
    rk_op *op = raw(k, &k->body, RK_OP_IF, &c, 1, &t, 1);
    op->regions[0].label = "then";
    return k;
}

static rk_kernel *carry_pointer(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value lo = rk_const_i32(k, 0), hi = rk_const_i32(k, 4), st = rk_const_i32(k, 1);
    const rk_value in[] = {lo, hi, st, out};
    rk_type pt = rk_value_type(k, out);
    rk_op *f = raw(k, &k->body, RK_OP_FOR, in, 4, &pt, 1);
    rk_op_set_str(k, f, "iv", "%i");
    rk_region *b = &f->regions[0];
    b->label = "body";
    b->nargs = 2;
    b->args = rk_arena_alloc(&k->arena, 2 * sizeof *b->args);
    b->args[0] = ir_new_value(k, RK_T_I32, RK_VK_REGION_ARG, "i", false);
    b->args[1] = ir_new_value(k, pt, RK_VK_REGION_ARG, "p", false);
    for (uint32_t i = 0; i < 2; i++) {
        k->vals[b->args[i].id].def = f;
        k->vals[b->args[i].id].index = i;
    }
    rk_op *y0 = raw(k, b, RK_OP_YIELD, &b->args[1], 1, NULL, 0);
    rk_op_set_int(k, y0, "num", 1);
    return k;
}

static rk_kernel *iv_attr_mismatch(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    rk_op_set_str(k, f, "iv", "%j9");
    return k;
}

static rk_attrs *iter_map(rk_op *f) {
    static rk_attrs m;
    const rk_attr_val *it = rk_attrs_get(&f->attrs, "iter_args");
    m = (rk_attrs){it->u.list[0].u.map, it->u.list[0].n, it->u.list[0].n};
    return &m;
}

static rk_kernel *iter_name_mismatch(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    rk_attrs *m = iter_map(f);
    for (uint32_t i = 0; i < m->n; i++)
        if (!strcmp(m->items[i].key, "name")) m->items[i].val.u.s = "%other";
    return k;
}

static rk_kernel *iter_type_mismatch(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    rk_attrs *m = iter_map(f);
    for (uint32_t i = 0; i < m->n; i++)
        if (!strcmp(m->items[i].key, "type")) m->items[i].val.u.s = "f32";
    return k;
}

static rk_kernel *iter_args_missing(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    rk_attr *items = f->attrs.items;
    uint32_t w = 0;
    for (uint32_t i = 0; i < f->attrs.n; i++)
        if (strcmp(items[i].key, "iter_args")) items[w++] = items[i];
    f->attrs.n = w;
    return k;
}

static rk_kernel *region_arg_count(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    f->regions[0].nargs = 1;
    return k;
}

static rk_kernel *iv_type_mismatch(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    k->vals[f->regions[0].args[0].id].type = RK_T_I64;
    return k;
}

static rk_kernel *yield_count(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    rk_region *b = &f->regions[0];
    b->nops--;
    const rk_value ys[] = {b->args[1], b->args[1]};
    rk_op *y2 = raw(k, b, RK_OP_YIELD, ys, 2, NULL, 0);
    rk_op_set_int(k, y2, "num", 2);
    return k;
}

static rk_kernel *yield_type(void) {
    rk_value x, y, out, res;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *f = loop1(k, x, y, &res);
    rk_region *b = &f->regions[0];
    b->nops--;
    rk_type t = RK_T_I64;
    rk_op *z = raw(k, b, RK_OP_SEXT, &b->args[1], 1, &t, 1);
    rk_op *y1 = raw(k, b, RK_OP_YIELD, z->out, 1, NULL, 0);
    rk_op_set_int(k, y1, "num", 1);
    return k;
}

static rk_kernel *poison_operand(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_type t = RK_T_I32;
    const rk_value in[] = {x, {0}};
    raw(k, &k->body, RK_OP_ADD, in, 2, &t, 1);
    return k;
}

static rk_kernel *value_not_in_kernel(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value a = rk_build_add(k, x, y);
    k->body.nops--;                                /* the add is gone, its value is not */
    store(k, out, a);
    return k;
}

static rk_kernel *yield_top_level(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *y0 = raw(k, &k->body, RK_OP_YIELD, &x, 1, NULL, 0);
    rk_op_set_int(k, y0, "num", 1);
    return k;
}

static rk_kernel *unknown_opcode(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_op *op = raw(k, &k->body, RK_OP_SYNC, NULL, 0, NULL, 0);
    op->code = (rk_opcode)(RK_OP__COUNT + 5);
    return k;
}

static rk_kernel *extract_range(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value v = rk_build_vsplat(k, x, 4);
    rk_type t = RK_T_I32;
    rk_op *op = rk_emit(k, RK_OP_VEXTRACT, &v, 1, &t, 1);
    rk_op_set_int(k, op, "index", 4);
    return k;
}

static rk_kernel *select_cond(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    const rk_value in[] = {x, x, y};
    rk_type t = RK_T_I32;
    rk_emit(k, RK_OP_SELECT, in, 3, &t, 1);
    return k;
}

static rk_kernel *broken_parent(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_if_begin(k, c);
    rk_op *ifop = k->frames[k->depth - 1].op;
    rk_if_end(k, NULL, 0);
    rk_value a = rk_build_add(k, x, y);
    rk_op *add = rk_value_def(k, a);
    k->body.nops--;
    assert_true(ir_region_append(k, &ifop->regions[0], add));
    add->parent = &k->body;                        /* lies about where it lives */
    return k;
}

static rk_kernel *builder_failed(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value f = rk_const_f32(k, 2.0f);
    rk_build_add(k, x, f);
    return k;
}

static rk_kernel *open_region(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_if_begin(k, c);
    return k;
}

static rk_kernel *param_value_type(void) {
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    k->vals[y.id].type = RK_T_F32;
    store(k, out, x);
    return k;
}

static rk_kernel *value_in_else_from_then(void) {
    rk_value x, y, out, r;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_type t = RK_T_I32;
    rk_if_else_begin(k, c, 1, &t, &r);
    rk_op *ie = k->frames[k->depth - 1].op;
    rk_value a = rk_build_add(k, x, y);
    rk_else(k, &a, 1);
    rk_if_end(k, &y, 1);
    /* the else yield now returns the then-region's value */
    rk_region *els = &ie->regions[1];
    els->ops[els->nops - 1]->in[0] = a;
    return k;
}

typedef struct bad_case {
    const char *name;
    make_fn make;
    const char *frag;
} bad_case;

static const bad_case bad_cases[] = {
    {"operand type", bad_operand_type, "operand 1 has type f32 but the op works on i32"},
    {"missing attribute", missing_attr, "missing required attribute 'pred'"},
    {"attribute range", attr_out_of_range, "attribute 'xor_mask' = 40 is out of range [1, 31]"},
    {"attribute enum", attr_bad_enum, "attribute 'pred' = less is not one of"},
    {"arity", wrong_arity, "takes 2 operands, got 1"},
    {"use before definition", use_before_def, "is used before its definition by op 1 'arith.add'"},
    {"escape from region", escape_region, "inside a region that has ended"},
    {"loop variable outside the loop", iv_outside_loop, "is a region argument of op"},
    {"loop result inside its body", result_in_own_body, "not visible inside that op's own regions"},
    {"defined twice", defined_twice, "is defined twice"},
    {"SSA name collision", name_collision, "is named %add2, a name already used by parameter 'add2'"},
    {"yield not last", yield_not_last, "scf.yield must be the last op of its region"},
    {"missing loop yield", missing_yield, "the loop carries 1 values but its body does not end with scf.yield"},
    {"yield without carries", yield_without_carries, "carries no values, so its body takes no scf.yield"},
    {"if_else missing yield", if_else_missing_yield, "its 'else' region does not end with scf.yield"},
    {"return not last", return_not_last, "cf.return must be the last op of the kernel body"},
    {"return in a region", return_in_region, "cf.return must be the last op of the kernel body"},
    {"scf.if with a result", if_with_result, "scf.if cannot produce values"},
    {"pointer carried by a loop", carry_pointer, "carries are scalars or vectors"},
    {"iv attribute", iv_attr_mismatch, "attribute iv = \"%j9\" but the body's induction variable is %k0"},
    {"iter_args name", iter_name_mismatch, "iter_args[0].name = \"%other\" but region argument 1 is %acc"},
    {"iter_args type", iter_type_mismatch, "iter_args[0].type = \"f32\" but region argument 1 has type i32"},
    {"iter_args missing", iter_args_missing, "has no iter_args attribute"},
    {"region argument count", region_arg_count, "the loop body has 1 region arguments, expected 2"},
    {"induction variable type", iv_type_mismatch, "the induction variable %k0 has type i64 but the bounds are i32"},
    {"yield count", yield_count, "yields 2 values but the enclosing scf.for has 1 results"},
    {"yield type", yield_type, "yielded value 0 has type i64"},
    {"poison operand", poison_operand, "operand 1 is not a value"},
    {"value of a removed op", value_not_in_kernel, "is not defined anywhere in this kernel"},
    {"yield at top level", yield_top_level, "scf.yield belongs directly inside"},
    {"unknown opcode", unknown_opcode, "unknown opcode"},
    {"extract index", extract_range, "index 4 out of range for vec<i32x4>"},
    {"select condition", select_cond, "condition must be i1, got i32"},
    {"parent link", broken_parent, "does not record its region as its parent"},
    {"builder error", builder_failed, "the builder failed"},
    {"open region", open_region, "regions are still open"},
    {"parameter value type", param_value_type, "parameter 'y' is declared i32 but its value has type f32"},
    {"then-value used in else", value_in_else_from_then, "inside a region that has ended"},
};

static bool has_diag(const rk_diags *d, rk_severity sev, const char *frag) {
    for (uint32_t i = 0; i < d->n; i++)
        if (d->items[i].severity == sev && strstr(d->items[i].msg, frag)) return true;
    return false;
}

static void dump(const rk_diags *d) {
    char *t = rk_diags_text(d);
    fprintf(stderr, "%s", t ? t : "(no memory)\n");
    rk_string_free(t);
}

static void test_broken_kernels(void **state) {
    (void)state;
    assert_true(RK_COUNTOF(bad_cases) >= 25);
    for (size_t i = 0; i < RK_COUNTOF(bad_cases); i++) {
        rk_kernel *k = bad_cases[i].make();
        rk_diags d;
        rk_diags_init(&d);
        rk_status st = rk_verify(k, NULL, &d);
        bool ok = st == RK_ERR_VERIFY && d.nerrors > 0 && has_diag(&d, RK_SEV_ERROR, bad_cases[i].frag);
        if (!ok) {
            fprintf(stderr, "case '%s': status %s, expected an error containing \"%s\"; got:\n", bad_cases[i].name,
                    rk_status_name(st), bad_cases[i].frag);
            dump(&d);
        }
        assert_true(ok);
        /* the last-error message names the first error */
        assert_non_null(strstr(rk_error_message(), "failed verification"));
        rk_diags_free(&d);
        rk_kernel_free(k);
    }
}

/* ---- good kernels ------------------------------------------------------------------------ */
static rk_kernel *good_kernel(void) {
    rk_value x, y, out, res, r;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    loop1(k, x, y, &res);
    rk_value c = rk_build_cmp(k, "lt", res, y);
    rk_type t = RK_T_I32;
    rk_if_else_begin(k, c, 1, &t, &r);
    rk_value a = rk_build_add(k, res, x);
    rk_else(k, &a, 1);
    rk_value b = rk_build_sub(k, res, x);
    rk_if_end(k, &b, 1);
    store(k, out, r);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static void test_good_kernel(void **state) {
    (void)state;
    rk_kernel *k = good_kernel();
    rk_diags d;
    rk_diags_init(&d);
    assert_int_equal(rk_verify(k, NULL, &d), RK_OK);
    assert_int_equal(d.n, 0);
    assert_int_equal(rk_verify(k, NULL, NULL), RK_OK);
    rk_diags_free(&d);
    rk_kernel_free(k);
}

/* ---- several errors together ---------------------------------------------------------------- */
static void test_multiple_errors(void **state) {
    (void)state;
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value f = rk_const_f32(k, 1.0f);
    const rk_value in1[] = {x, f};
    rk_type i32 = RK_T_I32, i1 = RK_T_I1;
    rk_emit(k, RK_OP_ADD, in1, 2, &i32, 1);                    /* type error */
    const rk_value in2[] = {x, y};
    rk_emit(k, RK_OP_CMP, in2, 2, &i1, 1);                     /* missing pred */
    rk_build_return(k);
    store(k, out, x);                                          /* return not last */
    rk_diags d;
    rk_diags_init(&d);
    assert_int_equal(rk_verify(k, NULL, &d), RK_ERR_VERIFY);
    if (d.nerrors != 3) dump(&d);
    assert_int_equal(d.nerrors, 3);
    assert_true(has_diag(&d, RK_SEV_ERROR, "operand 1 has type f32"));
    assert_true(has_diag(&d, RK_SEV_ERROR, "missing required attribute 'pred'"));
    assert_true(has_diag(&d, RK_SEV_ERROR, "cf.return must be the last op"));
    /* each diagnostic points at its op */
    for (uint32_t i = 0; i < d.n; i++) {
        assert_non_null(d.items[i].op);
        assert_non_null(strstr(d.items[i].where, rk_opcode_name(d.items[i].op->code)));
    }
    /* a second run appends to the same list */
    assert_int_equal(rk_verify(k, NULL, &d), RK_ERR_VERIFY);
    assert_int_equal(d.nerrors, 6);
    rk_diags_free(&d);
    rk_kernel_free(k);
}

/* ---- warnings ------------------------------------------------------------------------------- */
static void test_warnings(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("empty");
    rk_diags d;
    rk_diags_init(&d);
    assert_int_equal(rk_verify(k, NULL, &d), RK_OK);
    assert_int_equal(d.nerrors, 0);
    assert_true(has_diag(&d, RK_SEV_WARNING, "kernel body is empty"));
    rk_diags_free(&d);
    rk_kernel_free(k);

    rk_value x, y, out;
    k = kernel_with_params(&x, &y, &out);
    rk_build_sync(k);                                          /* uniform: fine */
    rk_value c = rk_build_cmp(k, "lt", x, y);
    rk_if_begin(k, c);
    rk_build_sync(k);                                          /* divergent */
    rk_build_s_barrier_bare(k);
    rk_build_s_waitcnt(k, 0, 0, -1);                           /* a wait, not a barrier */
    rk_if_end(k, NULL, 0);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_diags_init(&d);
    assert_int_equal(rk_verify(k, NULL, &d), RK_OK);
    assert_int_equal(d.nerrors, 0);
    assert_int_equal(d.n, 2);
    assert_true(has_diag(&d, RK_SEV_WARNING, "barrier inside divergent control flow (op 2 'scf.if')"));
    assert_string_equal(rk_opcode_name(d.items[0].op->code), "tile.sync");
    assert_string_equal(rk_opcode_name(d.items[1].op->code), "tile.s_barrier_bare");
    rk_diags_free(&d);
    rk_kernel_free(k);
}

/* ---- output ---------------------------------------------------------------------------------- */
static char *print_to_string(const rk_diags *d, const char *file) {
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    rk_diags_print(d, f, file);
    fclose(f);
    return buf;
}

static void test_output(void **state) {
    (void)state;
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    rk_value f = rk_const_f32(k, 1.0f);
    const rk_value in1[] = {x, f};
    rk_type i32 = RK_T_I32, i1 = RK_T_I1;
    rk_op *a = rk_emit(k, RK_OP_ADD, in1, 2, &i32, 1);
    a->line = 7;
    const rk_value in2[] = {x, y};
    rk_emit(k, RK_OP_CMP, in2, 2, &i1, 1);
    rk_diags d;
    rk_diags_init(&d);
    assert_int_equal(rk_verify(k, NULL, &d), RK_ERR_VERIFY);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.items[0].line, 7);
    assert_string_equal(d.items[0].where, "op 1 'arith.add' in kernel body (line 7)");
    assert_string_equal(d.items[1].where, "op 2 'arith.cmp' in kernel body");
    char *p = print_to_string(&d, "k.ir");
    assert_string_equal(p,
        "k.ir:7: error: operand 1 has type f32 but the op works on i32 (operands and result share one type)\n"
        "k.ir: error: op 2 'arith.cmp' in kernel body: missing required attribute 'pred' (a string)\n");
    free(p);
    char *t = rk_diags_text(&d);
    assert_string_equal(t,
        "line 7: error: operand 1 has type f32 but the op works on i32 (operands and result share one type)\n"
        "error: op 2 'arith.cmp' in kernel body: missing required attribute 'pred' (a string)\n");
    rk_string_free(t);
    rk_diags_free(&d);
    t = rk_diags_text(&d);
    assert_string_equal(t, "");
    rk_string_free(t);
    rk_kernel_free(k);

    /* nested regions name their owner */
    rk_value res;
    k = kernel_with_params(&x, &y, &out);
    rk_op *fo = loop1(k, x, y, &res);
    fo->regions[0].ops[0]->in[1] = rk_const_f32(k, 3.0f);
    rk_diags_init(&d);
    assert_int_equal(rk_verify(k, NULL, &d), RK_ERR_VERIFY);
    assert_true(d.n >= 1);
    assert_non_null(strstr(d.items[0].where, "'arith.add' in scf.for body"));
    rk_diags_free(&d);
    rk_kernel_free(k);
}

/* ---- targets ----------------------------------------------------------------------------------- */
static bool fake_mma(void *ud, const rk_kernel *k, const rk_op *op, char *msg, size_t n) {
    (void)k;
    const char *id = rk_attrs_str(&op->attrs, "op_id");
    if (id && !strcmp(id, (const char *)ud)) return true;
    snprintf(msg, n, "unknown matrix atom '%s'", id ? id : "");
    return false;
}

static const rk_verify_target gfx942 = {"gfx942", RK_FEAT_AMD | RK_FEAT_GFX9 | RK_FEAT_GFX940, 64,
                                        RK_S_FP8E4M3FNUZ, RK_S_BF8E5M2FNUZ, fake_mma, "mfma_f32_16x16x16_f16"};
static const rk_verify_target gfx950 = {"gfx950", RK_FEAT_AMD | RK_FEAT_GFX9 | RK_FEAT_GFX940 | RK_FEAT_GFX950,
                                        64, RK_S_FP8E4M3, RK_S_BF8E5M2, fake_mma, "mfma_f32_16x16x16_f16"};
static const rk_verify_target sm90 = {"sm_90", RK_FEAT_NV | RK_FEAT_SM80 | RK_FEAT_SM90, 32, RK_S_FP8E4M3,
                                      RK_S_BF8E5M2, NULL, NULL};

static rk_status verify_on(rk_kernel *k, const rk_verify_target *t, rk_diags *d) {
    rk_diags_init(d);
    return rk_verify(k, t, d);
}

static void test_target_features(void **state) {
    (void)state;
    rk_value x, y, out;
    rk_kernel *k = kernel_with_params(&x, &y, &out);
    store(k, out, rk_build_permlane64(k, x));                   /* gfx11+ */
    rk_emit_barrier(k, RK_OP_S_SETPRIO);                        /* attr missing: local check */
    assert_int_not_equal(rk_kernel_finish(k), RK_OK);
    rk_kernel_free(k);

    k = kernel_with_params(&x, &y, &out);
    store(k, out, rk_build_permlane64(k, x));
    rk_build_named_barrier(k, 1, 64);
    assert_int_equal(rk_kernel_finish(k), RK_OK);

    rk_diags d;
    assert_int_equal(verify_on(k, NULL, &d), RK_OK);            /* structure is fine */
    rk_diags_free(&d);
    assert_int_equal(verify_on(k, &gfx942, &d), RK_ERR_VERIFY);
    assert_int_equal(d.nerrors, 2);
    assert_true(has_diag(&d, RK_SEV_ERROR,
                         "tile.permlane64 needs gfx11+, which target 'gfx942' lacks (offered by RDNA3+ targets"));
    assert_true(has_diag(&d, RK_SEV_ERROR, "tile.named_barrier needs NVPTX, which target 'gfx942' lacks "
                                           "(offered by NVIDIA targets"));
    rk_diags_free(&d);
    assert_int_equal(verify_on(k, &sm90, &d), RK_ERR_VERIFY);
    assert_int_equal(d.nerrors, 1);
    assert_true(has_diag(&d, RK_SEV_ERROR, "tile.permlane64 needs gfx11+, which target 'sm_90' lacks"));
    rk_diags_free(&d);
    rk_kernel_free(k);

    /* gfx950-only transposed read: gfx942 no, gfx950 yes */
    k = kernel_with_params(&x, &y, &out);
    uint32_t dims[] = {256};
    rk_value a = rk_build_smem_alloc(k, RK_T_F16, dims, 1);
    rk_value tr = rk_build_ds_read_tr16_b64(k, a, &x);
    assert_string_equal(rk_type_name(k, rk_value_type(k, tr)), "vec<f16x4>");
    rk_value outh = rk_add_param(k, "outh", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    rk_store_global(k, outh, x, tr);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(verify_on(k, &gfx942, &d), RK_ERR_VERIFY);
    assert_true(has_diag(&d, RK_SEV_ERROR, "needs gfx950, which target 'gfx942' lacks (offered by gfx950)"));
    rk_diags_free(&d);
    assert_int_equal(verify_on(k, &gfx950, &d), RK_OK);
    rk_diags_free(&d);
    assert_int_equal(verify_on(k, &sm90, &d), RK_ERR_VERIFY);
    assert_true(has_diag(&d, RK_SEV_ERROR, "needs gfx950, which target 'sm_90' lacks"));
    rk_diags_free(&d);
    rk_kernel_free(k);
}

static rk_kernel *cvt_kernel(rk_type f8) {
    rk_kernel *k = rk_kernel_new("cvt");
    rk_value x = rk_add_param(k, "x", RK_T_F32, NULL);
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, f8, RK_AS_GLOBAL), NULL);
    rk_value i = rk_const_i32(k, 0);
    rk_value v = rk_emit_convert(k, rk_type_eq(f8, RK_T_FP8E4M3) || rk_type_eq(f8, RK_T_FP8E4M3FNUZ)
                                         ? RK_OP_CVT_F32_TO_FP8 : RK_OP_CVT_F32_TO_BF8, x, f8);
    rk_store_global(k, out, i, v);
    /* a plain store of the 8-bit value is storage, not conversion: never checked */
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static void test_target_fp8_dialect(void **state) {
    (void)state;
    rk_diags d;
    rk_kernel *k = cvt_kernel(RK_T_FP8E4M3);
    assert_int_equal(verify_on(k, &gfx950, &d), RK_OK);
    rk_diags_free(&d);
    assert_int_equal(verify_on(k, &sm90, &d), RK_OK);
    rk_diags_free(&d);
    assert_int_equal(verify_on(k, &gfx942, &d), RK_ERR_VERIFY);
    assert_int_equal(d.nerrors, 1);
    assert_true(has_diag(&d, RK_SEV_ERROR, "result 0 has type fp8e4m3 but target 'gfx942' converts FNUZ 8-bit "
                                           "floats: use fp8e4m3fnuz"));
    rk_diags_free(&d);
    rk_kernel_free(k);

    k = cvt_kernel(RK_T_BF8E5M2FNUZ);
    assert_int_equal(verify_on(k, &gfx942, &d), RK_OK);
    rk_diags_free(&d);
    assert_int_equal(verify_on(k, &gfx950, &d), RK_ERR_VERIFY);
    assert_true(has_diag(&d, RK_SEV_ERROR, "has type bf8e5m2fnuz but target 'gfx950' converts OCP 8-bit floats: "
                                           "use bf8e5m2"));
    rk_diags_free(&d);
    rk_kernel_free(k);

    /* vector operands too */
    k = rk_kernel_new("cvt_pk");
    rk_type v4 = rk_type_vec(k, RK_T_FP8E4M3, 4), f4 = rk_type_vec(k, RK_T_F32, 4);
    rk_value p = rk_add_param(k, "p", rk_type_ptr(k, RK_T_FP8E4M3, RK_AS_GLOBAL), NULL);
    rk_value q = rk_add_param(k, "q", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value i = rk_const_i32(k, 0);
    rk_value v = rk_load_global(k, p, i, 4);
    assert_true(rk_type_eq(rk_value_type(k, v), v4));
    rk_value w = rk_build_cvt_pk_f32_fp8x4(k, v);
    assert_true(rk_type_eq(rk_value_type(k, w), f4));
    rk_store_global(k, q, i, w);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(verify_on(k, &gfx942, &d), RK_ERR_VERIFY);
    assert_true(has_diag(&d, RK_SEV_ERROR, "operand 0 has type vec<fp8e4m3x4> but target 'gfx942'"));
    rk_diags_free(&d);
    rk_kernel_free(k);
}

static void test_target_mma_and_asm(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("mma");
    rk_type h4 = rk_type_vec(k, RK_T_F16, 4), f4 = rk_type_vec(k, RK_T_F32, 4);
    rk_value ph = rk_add_param(k, "ph", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    rk_value pf = rk_add_param(k, "pf", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value i = rk_const_i32(k, 0);
    rk_value a = rk_load_global(k, ph, i, 4), c = rk_load_global(k, pf, i, 4);
    assert_true(rk_type_eq(rk_value_type(k, a), h4) && rk_type_eq(rk_value_type(k, c), f4));
    rk_value d1 = rk_build_mma(k, "mfma_f32_16x16x16_f16", a, a, c);
    rk_value d2 = rk_build_mma(k, "mfma_f32_99x99x99_f16", a, a, d1);
    rk_store_global(k, pf, i, d2);
    rk_value x = rk_build_vextract(k, d2, 0);
    rk_type f32 = RK_T_F32;
    rk_op *as = rk_build_inline_asm(k, "v_mov_b32 $0, $1", "=v,v", &x, 1, &f32, 1, true);
    rk_op_set_str(k, as, "required_arch", "gfx950");
    assert_true(rk_op_check(k, as));
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_diags d;
    assert_int_equal(verify_on(k, &gfx942, &d), RK_ERR_VERIFY);
    assert_int_equal(d.nerrors, 2);
    assert_true(has_diag(&d, RK_SEV_ERROR, "unknown matrix atom 'mfma_f32_99x99x99_f16'"));
    assert_true(has_diag(&d, RK_SEV_ERROR, "inline assembly requires arch 'gfx950' but the target is 'gfx942'"));
    rk_diags_free(&d);
    assert_int_equal(verify_on(k, &gfx950, &d), RK_ERR_VERIFY);
    assert_int_equal(d.nerrors, 1);
    rk_diags_free(&d);
    /* no check_mma hook: atoms are not checked */
    assert_int_equal(verify_on(k, &sm90, &d), RK_ERR_VERIFY);
    assert_int_equal(d.nerrors, 2);
    assert_true(has_diag(&d, RK_SEV_ERROR, "requires arch 'gfx950' but the target is 'sm_90'"));
    assert_true(has_diag(&d, RK_SEV_ERROR, "constraint 0 '=v' (of \"=v,v\"): not an NVPTX constraint"));
    rk_diags_free(&d);
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broken_kernels),
        cmocka_unit_test(test_good_kernel),
        cmocka_unit_test(test_multiple_errors),
        cmocka_unit_test(test_warnings),
        cmocka_unit_test(test_output),
        cmocka_unit_test(test_target_features),
        cmocka_unit_test(test_target_fp8_dialect),
        cmocka_unit_test(test_target_mma_and_asm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
