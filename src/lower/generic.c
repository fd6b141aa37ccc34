/* rocke — the ops that lower the same for every GPU: integer, float and
 * vector arithmetic, compares, select, casts, global memory (with
 * nontemporal metadata), LDS accesses, atomics through atomicrmw/cmpxchg,
 * register_p_from_qk_c and inline assembly. Every result is defined under
 * its IR name (%add7); temporaries are %word.N. Layer: lower. */
#include <stdio.h>

#include "lower_int.h"

/* ---- small helpers -------------------------------------------------------------------------- */
static rk_type vt(const lw_ctx *cx, rk_value v) { return rk_value_type(cx->k, v); }

/* Declare and call an overloaded intrinsic on one type: `%r = call T @llvm.<name>.<m>(args)`. */
static void call_ovl(lw_ctx *cx, uint32_t order, const char *name, rk_type t, int nargs, rk_value r,
                     const rk_value *a) {
    const char *ty = lw_ty(cx, t), *m = lw_mangle(cx, t);
    if (!lw_seen(cx, order, 0, t.id)) {
        const char *params = nargs == 1 ? ty : nargs == 2 ? lw_printf(cx, "%s, %s", ty, ty)
                                                         : lw_printf(cx, "%s, %s, %s", ty, ty, ty);
        lw_declare(cx, order, lw_printf(cx, "declare %s @llvm.%s.%s(%s)", ty, name, m, params));
    }
    if (nargs == 1) lw_ins(cx, "%v = call %s @llvm.%s.%s(%V)", r, ty, name, m, a[0]);
    else if (nargs == 2) lw_ins(cx, "%v = call %s @llvm.%s.%s(%V, %V)", r, ty, name, m, a[0], a[1]);
    else lw_ins(cx, "%v = call %s @llvm.%s.%s(%V, %V, %V)", r, ty, name, m, a[0], a[1], a[2]);
}

/* The same with a temp result and texts instead of values. */
static const char *call_ovl2(lw_ctx *cx, uint32_t order, const char *name, rk_type t, const char *a, const char *b) {
    const char *ty = lw_ty(cx, t), *m = lw_mangle(cx, t), *r = lw_tmp(cx, name);
    if (!lw_seen(cx, order, 0, t.id))
        lw_declare(cx, order, lw_printf(cx, "declare %s @llvm.%s.%s(%s, %s)", ty, name, m, ty, ty));
    lw_ins(cx, "%s = call %s @llvm.%s.%s(%s %s, %s %s)", r, ty, name, m, ty, a, ty, b);
    return r;
}

static void binop(lw_ctx *cx, const rk_op *op, const char *inst) {
    lw_ins(cx, "%v = %s %V, %v", op->out[0], inst, op->in[0], op->in[1]);
}

static void cast(lw_ctx *cx, const rk_op *op, const char *inst) {
    lw_ins(cx, "%v = %s %V to %t", op->out[0], inst, op->in[0], op->out[0]);
}

static const char *icmp_pred(const char *p) {
    static const char *const map[][2] = {{"lt", "slt"}, {"le", "sle"}, {"gt", "sgt"}, {"ge", "sge"},
                                         {"eq", "eq"},  {"ne", "ne"},  {"ult", "ult"}, {"ule", "ule"},
                                         {"ugt", "ugt"}, {"uge", "uge"}};
    for (size_t i = 0; p && i < RK_COUNTOF(map); i++)
        if (strcmp(map[i][0], p) == 0) return map[i][1];
    rk_bug("integer compare predicate outside the table's enumeration (verified)");
}

/* Power-of-two alignment: the attribute's (its largest power-of-two divisor,
 * so "12" claims 4), else the natural one of `bytes`, at most 16. */
static uint32_t align_of(const rk_op *op, uint32_t bytes) {
    int64_t a = lw_attr_int(op, "align", 0);
    uint64_t v = a > 0 ? (uint64_t)a : bytes ? bytes : 1;
    v &= ~v + 1;
    if (a <= 0 && v > 16) v = 16;
    return (uint32_t)v;
}

static const char *nontemporal(lw_ctx *cx, const rk_op *op) {
    return lw_attr_bool(op, "nontemporal", false) ? lw_printf(cx, ", !nontemporal %s", lw_md(cx, LW_MD_NONTEMPORAL)) : "";
}

/* gep <elem>, ptr, idx — idx keeps its own type (i32 or i64). */
static const char *gep(lw_ctx *cx, rk_value ptr, rk_value idx) {
    const char *t = lw_tmp(cx, "gep");
    lw_ins(cx, "%s = getelementptr inbounds %T, %V, %V", t, rk_type_elem(cx->k, vt(cx, ptr)), ptr, idx);
    return t;
}

/* ---- arithmetic --------------------------------------------------------------------------------- */
/* name(a, name(b, c)) */
static void minmax3(lw_ctx *cx, const rk_op *op, uint32_t order, const char *name) {
    rk_type t = vt(cx, op->out[0]);
    const char *inner = call_ovl2(cx, order, name, t, lw_val(cx, op->in[1]), lw_val(cx, op->in[2]));
    const char *ty = lw_ty(cx, t);
    lw_ins(cx, "%v = call %s @llvm.%s.%s(%V, %s %s)", op->out[0], ty, name, lw_mangle(cx, t), op->in[0], ty, inner);
}

static void umul_hi(lw_ctx *cx, const rk_op *op) {
    const char *a = lw_tmp(cx, "zext"), *b = lw_tmp(cx, "zext"), *m = lw_tmp(cx, "mul"), *s = lw_tmp(cx, "shr");
    lw_ins(cx, "%s = zext %V to i64", a, op->in[0]);
    lw_ins(cx, "%s = zext %V to i64", b, op->in[1]);
    lw_ins(cx, "%s = mul i64 %s, %s", m, a, b);
    lw_ins(cx, "%s = lshr i64 %s, 32", s, m);
    lw_ins(cx, "%v = trunc i64 %s to i32", op->out[0], s);
}

/* round half to even, then saturate to i8 (NaN -> 0); scalar or vector */
static void to_i8_sat(lw_ctx *cx, const rk_op *op) {
    rk_type ft = vt(cx, op->in[0]), it = vt(cx, op->out[0]);
    const char *fty = lw_ty(cx, ft), *ity = lw_ty(cx, it), *fm = lw_mangle(cx, ft), *im = lw_mangle(cx, it);
    const char *r = lw_tmp(cx, "rint");
    lw_declare(cx, LW_D_RINT, lw_printf(cx, "declare %s @llvm.rint.%s(%s)", fty, fm, fty));
    lw_declare(cx, LW_D_FPTOSI_SAT, lw_printf(cx, "declare %s @llvm.fptosi.sat.%s.%s(%s)", ity, im, fm, fty));
    lw_ins(cx, "%s = call %s @llvm.rint.%s(%V)", r, fty, fm, op->in[0]);
    lw_ins(cx, "%v = call %s @llvm.fptosi.sat.%s.%s(%s %s)", op->out[0], ity, im, fm, fty, r);
}

static void vec_arith(lw_ctx *cx, const rk_op *op, const char *fop, const char *iop) {
    binop(cx, op, lw_is_float(cx, vt(cx, op->out[0])) ? fop : iop);
}

/* a > b ? a : b (or <), element-wise */
static void vec_pick(lw_ctx *cx, const rk_op *op, const char *pred) {
    const char *c = lw_tmp(cx, "cmp");
    lw_ins(cx, "%s = fcmp %s %V, %v", c, pred, op->in[0], op->in[1]);
    rk_type t = vt(cx, op->out[0]);
    lw_ins(cx, "%v = select <%u x i1> %s, %V, %V", op->out[0], rk_type_count(cx->k, t), c, op->in[0], op->in[1]);
}

static const char *extract(lw_ctx *cx, rk_value v, uint32_t i) {
    const char *t = lw_tmp(cx, "elt");
    lw_ins(cx, "%s = extractelement %V, i32 %u", t, v, i);
    return t;
}

/* ((0 + e0) + e1) + ... */
static void vsum(lw_ctx *cx, const rk_op *op) {
    rk_type e = vt(cx, op->out[0]);
    uint32_t n = rk_type_count(cx->k, vt(cx, op->in[0]));
    const char *acc = lw_float_lit(cx, e, 0.0), *ty = lw_ty(cx, e);
    for (uint32_t i = 0; i < n; i++) {
        const char *x = extract(cx, op->in[0], i);
        if (i + 1 == n) lw_ins(cx, "%v = fadd %s %s, %s", op->out[0], ty, acc, x);
        else {
            const char *s = lw_tmp(cx, "sum");
            lw_ins(cx, "%s = fadd %s %s, %s", s, ty, acc, x);
            acc = s;
        }
    }
}

/* fold acc = acc <pred> e ? acc : e from e0 */
static void vreduce(lw_ctx *cx, const rk_op *op, const char *pred) {
    rk_type e = vt(cx, op->out[0]);
    uint32_t n = rk_type_count(cx->k, vt(cx, op->in[0]));
    const char *ty = lw_ty(cx, e);
    if (n == 1) { lw_ins(cx, "%v = extractelement %V, i32 0", op->out[0], op->in[0]); return; }
    const char *acc = extract(cx, op->in[0], 0);
    for (uint32_t i = 1; i < n; i++) {
        const char *x = extract(cx, op->in[0], i), *c = lw_tmp(cx, "cmp");
        lw_ins(cx, "%s = fcmp %s %s %s, %s", c, pred, ty, acc, x);
        if (i + 1 == n) lw_ins(cx, "%v = select i1 %s, %s %s, %s %s", op->out[0], c, ty, acc, ty, x);
        else {
            const char *s = lw_tmp(cx, "red");
            lw_ins(cx, "%s = select i1 %s, %s %s, %s %s", s, c, ty, acc, ty, x);
            acc = s;
        }
    }
}

static void vsplat(lw_ctx *cx, const rk_op *op) {
    const char *t = lw_tmp(cx, "ins");
    rk_type r = vt(cx, op->out[0]);
    lw_ins(cx, "%s = insertelement %T poison, %V, i32 0", t, r, op->in[0]);
    lw_ins(cx, "%v = shufflevector %T %s, %T poison, <%u x i32> zeroinitializer", op->out[0], r, t, r,
           rk_type_count(cx->k, r));
}

/* insertelement chain from poison; the last insert defines the result */
static void insert_chain(lw_ctx *cx, rk_value res, const char *const *elems, uint32_t n) {
    rk_type r = vt(cx, res), e = rk_type_elem(cx->k, r);
    const char *acc = "poison";
    for (uint32_t i = 0; i < n; i++) {
        if (i + 1 == n) lw_ins(cx, "%v = insertelement %T %s, %T %s, i32 %u", res, r, acc, e, elems[i], i);
        else {
            const char *t = lw_tmp(cx, "ins");
            lw_ins(cx, "%s = insertelement %T %s, %T %s, i32 %u", t, r, acc, e, elems[i], i);
            acc = t;
        }
    }
}

static void vpack(lw_ctx *cx, const rk_op *op) {
    const char **el = rk_arena_alloc(&cx->arena, op->nin * sizeof *el);
    if (!el) { lw_error(cx, op, RK_ERR_NOMEM, "out of memory"); return; }
    for (uint32_t i = 0; i < op->nin; i++) el[i] = lw_val(cx, op->in[i]);
    insert_chain(cx, op->out[0], el, op->nin);
}

static void index_list(lw_ctx *cx, rk_buf *b, uint32_t from, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) lw_fmt(cx, b, "%si32 %u", i ? ", " : "", from + i);
}

static void vconcat(lw_ctx *cx, const rk_op *op) {
    uint32_t na = rk_type_count(cx->k, vt(cx, op->in[0])), nb = rk_type_count(cx->k, vt(cx, op->in[1]));
    if (na == nb) {
        rk_buf *b = &cx->scratch;
        rk_buf_reset(b);
        index_list(cx, b, 0, na + nb);
        lw_ins(cx, "%v = shufflevector %V, %V, <%u x i32> <%s>", op->out[0], op->in[0], op->in[1], na + nb,
               rk_buf_cstr(b));
        return;
    }
    const char **el = rk_arena_alloc(&cx->arena, (na + nb) * sizeof *el);
    if (!el) { lw_error(cx, op, RK_ERR_NOMEM, "out of memory"); return; }
    for (uint32_t i = 0; i < na + nb; i++) el[i] = extract(cx, op->in[i < na ? 0 : 1], i < na ? i : i - na);
    insert_chain(cx, op->out[0], el, na + nb);
}

static void vshuffle(lw_ctx *cx, const rk_op *op) {
    const rk_attr_val *m = rk_attrs_get(&op->attrs, "mask");
    rk_buf *b = &cx->scratch;
    rk_buf_reset(b);
    for (uint32_t i = 0; i < m->n; i++) {
        int64_t x = m->u.list[i].u.i;
        if (x < 0) lw_fmt(cx, b, "%si32 poison", i ? ", " : "");
        else lw_fmt(cx, b, "%si32 %l", i ? ", " : "", x);
    }
    lw_ins(cx, "%v = shufflevector %V, %V, <%u x i32> <%s>", op->out[0], op->in[0], op->in[1], m->n, rk_buf_cstr(b));
}

static void p_from_qk_c(lw_ctx *cx, const rk_op *op) {
    const char *t = lw_tmp(cx, "lo8");
    rk_buf *b = &cx->scratch;
    rk_buf_reset(b);
    index_list(cx, b, 0, 8);
    lw_ins(cx, "%s = shufflevector %V, %t poison, <8 x i32> <%s>", t, op->in[0], op->in[0], rk_buf_cstr(b));
    lw_ins(cx, "%v = fptrunc <8 x float> %s to %t", op->out[0], t, op->out[0]);
}

/* ---- global memory ------------------------------------------------------------------------------ */
static void gload(lw_ctx *cx, const rk_op *op) {
    const char *p = gep(cx, op->in[0], op->in[1]);
    rk_value r = op->out[0];
    lw_ins(cx, "%v = load %t, %T %s, align %u%s", r, r, vt(cx, op->in[0]), p, align_of(op, lw_bytes(cx, vt(cx, r))),
           nontemporal(cx, op));
}

static void gstore(lw_ctx *cx, const rk_op *op) {
    const char *p = gep(cx, op->in[0], op->in[1]);
    rk_value v = op->in[2];
    lw_ins(cx, "store %V, %T %s, align %u%s", v, vt(cx, op->in[0]), p, align_of(op, lw_bytes(cx, vt(cx, v))),
           nontemporal(cx, op));
}

static void ptr_add(lw_ctx *cx, const rk_op *op) {
    const char *off = lw_val(cx, op->in[1]);
    if (rk_type_eq(vt(cx, op->in[1]), RK_T_I32)) {
        /* zero-extended: byte offsets in [2 GiB, 4 GiB) stay positive */
        const char *z = lw_tmp(cx, "off");
        lw_ins(cx, "%s = zext %V to i64", z, op->in[1]);
        off = z;
    }
    lw_ins(cx, "%v = getelementptr inbounds i8, %V, i64 %s", op->out[0], op->in[0], off);
}

static void coop_store(lw_ctx *cx, const rk_op *op) {
    uint32_t n = rk_type_count(cx->k, vt(cx, op->in[1]));
    rk_type e = rk_type_elem(cx->k, vt(cx, op->in[2]));
    rk_type it = rk_type_elem(cx->k, vt(cx, op->in[1]));
    for (uint32_t i = 0; i < n; i++) {
        const char *a = extract(cx, op->in[1], i), *v = extract(cx, op->in[2], i), *p = lw_tmp(cx, "gep");
        lw_ins(cx, "%s = getelementptr inbounds %T, %V, %T %s", p, e, op->in[0], it, a);
        lw_ins(cx, "store %T %s, %t %s, align %u", e, v, op->in[0], p, lw_bytes(cx, e));
    }
}

/* ---- LDS ------------------------------------------------------------------------------------------ */
/* Vector LDS accesses are aligned to their size (the emulator checks) —
 * except smem_load_v4, whose column may be any element: element alignment. */
static void smem_load(lw_ctx *cx, const rk_op *op) {
    const char *p = lw_smem_addr(cx, op->in[0], op->in + 1, op->nin - 1u);
    rk_value r = op->out[0];
    rk_type t = vt(cx, r);
    uint32_t bytes = lw_bytes(cx, op->code == RK_OP_SMEM_LOAD_V4 ? rk_type_elem(cx->k, t) : t);
    lw_ins(cx, "%v = load %t, %t %s, align %u", r, r, op->in[0], p, align_of(op, bytes));
}

static void smem_store(lw_ctx *cx, const rk_op *op) {
    const char *p = lw_smem_addr(cx, op->in[0], op->in + 1, op->nin - 2u);
    rk_value v = op->in[op->nin - 1u];
    lw_ins(cx, "store %V, %t %s, align %u", v, op->in[0], p, align_of(op, lw_bytes(cx, vt(cx, v))));
}

static void smem_store_dist(lw_ctx *cx, const rk_op *op) {
    rk_type e = rk_type_elem(cx->k, vt(cx, op->in[1]));
    uint32_t n = rk_type_count(cx->k, vt(cx, op->in[1]));
    for (uint32_t i = 0; i < n; i++) {
        const char *x = extract(cx, op->in[1], i);
        const char *p = lw_smem_flat(cx, op->in[0], lw_printf(cx, "%u", i));
        lw_ins(cx, "store %T %s, %t %s, align %u", e, x, op->in[0], p, lw_bytes(cx, e));
    }
}

/* ---- atomics ------------------------------------------------------------------------------------- */
static const char *failure_order(const char *o) {
    if (strcmp(o, "acquire") == 0 || strcmp(o, "acq_rel") == 0) return "acquire";
    if (strcmp(o, "seq_cst") == 0) return "seq_cst";
    return "monotonic";
}

/* atomicrmw <kind> at ptr[idx]; FP adds get the vendor's metadata */
static void rmw(lw_ctx *cx, const rk_op *op, const char *kind, const char *scope, lw_scope dflt) {
    const char *p = gep(cx, op->in[0], op->in[1]);
    rk_value v = op->in[2];
    const char *ord = lw_attr_str(op, "ordering", "monotonic");
    rk_buf *b = &cx->scratch;
    rk_buf_reset(b);
    lw_fmt(cx, b, "%v = atomicrmw %s %t %s, %V%s %s, align %u", op->out[0], kind, op->in[0], p, v,
           lw_syncscope(cx, scope, dflt), ord, lw_bytes(cx, vt(cx, v)));
    if (strcmp(kind, "fadd") == 0 && cx->vd->fp_atomic_md) cx->vd->fp_atomic_md(cx, b);
    lw_ins(cx, "%s", rk_buf_cstr(b));
}

static const char *rmw_kind(const char *k) {
    static const char *const map[][2] = {{"add", "add"}, {"fadd", "fadd"}, {"smax", "max"}, {"smin", "min"},
                                         {"umax", "umax"}, {"umin", "umin"}, {"and", "and"}, {"or", "or"},
                                         {"xor", "xor"}, {"xchg", "xchg"}};
    for (size_t i = 0; k && i < RK_COUNTOF(map); i++)
        if (strcmp(map[i][0], k) == 0) return map[i][1];
    rk_bug("atomic kind outside the table's enumeration (verified)");
}

static void cas(lw_ctx *cx, const rk_op *op) {
    const char *p = gep(cx, op->in[0], op->in[1]), *pair = lw_tmp(cx, "cas");
    const char *ord = lw_attr_str(op, "ordering", "monotonic");
    rk_value c = op->in[2];
    lw_ins(cx, "%s = cmpxchg %t %s, %V, %V%s %s %s, align %u", pair, op->in[0], p, c, op->in[3],
           lw_syncscope(cx, lw_attr_str(op, "scope", NULL), LW_SCOPE_DEVICE), ord, failure_order(ord),
           lw_bytes(cx, vt(cx, c)));
    lw_ins(cx, "%v = extractvalue { %t, i1 } %s, 0", op->out[0], c, pair);
}

/* memref.global_wait: a loop of acquire loads of ptr[idx] until the test
 * holds. Each lane spins on its own word; the loop exits per lane (the
 * divergent exit reconverges after it). */
void lw_global_wait_llvm(lw_ctx *cx, const rk_op *op) {
    const char *p = gep(cx, op->in[0], op->in[1]);
    const char *L = lw_label(cx, "gwait.loop"), *D = lw_label(cx, "gwait.done");
    const char *cur = lw_tmp(cx, "gwait"), *ok = lw_tmp(cx, "gwait.ok");
    bool uge = strcmp(lw_attr_str(op, "until", "ne"), "uge") == 0;
    rk_value v = op->in[2];
    lw_br(cx, L);
    lw_block(cx, L);
    lw_ins(cx, "%s = load atomic %t, %t %s%s acquire, align %u", cur, v, op->in[0], p,
           lw_syncscope(cx, lw_attr_str(op, "scope", NULL), LW_SCOPE_DEVICE), lw_bytes(cx, vt(cx, v)));
    lw_ins(cx, "%s = icmp %s %t %s, %v", ok, uge ? "uge" : "ne", v, cur, v);
    lw_condbr(cx, ok, D, L);
    lw_block(cx, D);
}

static void lds_atomic(lw_ctx *cx, const rk_op *op) {
    const char *p = lw_smem_addr(cx, op->in[0], op->in + 1, op->nin - 2u);
    rk_value v = op->in[op->nin - 1u];
    lw_ins(cx, "%v = atomicrmw %s %t %s, %V%s %s, align %u", op->out[0], lw_is_float(cx, vt(cx, v)) ? "fadd" : "add",
           op->in[0], p, v, lw_syncscope(cx, "block", LW_SCOPE_BLOCK), lw_attr_str(op, "ordering", "monotonic"),
           lw_bytes(cx, vt(cx, v)));
}

/* ---- inline assembly ------------------------------------------------------------------------------ */
/* printable ASCII kept; '\' and '"' and every other byte as \XX */
static void asm_escape(rk_buf *b, const char *s) {
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\' && *p != '"') rk_buf_putc(b, (char)*p);
        else {
            rk_buf_putc(b, '\\');
            rk_buf_putc(b, hex[*p >> 4]);
            rk_buf_putc(b, hex[*p & 15]);
        }
    }
}

static void inline_asm(lw_ctx *cx, const rk_op *op) {
    const char *arch = lw_attr_str(op, "required_arch", NULL);
    if (arch && strcmp(arch, cx->t->name) != 0) {
        lw_error(cx, op, RK_ERR_UNSUPPORTED, "the assembly is written for %s, not %s", arch, cx->t->name);
        return;
    }
    rk_buf *b = &cx->scratch;
    rk_buf_reset(b);
    const char *ret = "void";
    if (op->nout == 1) ret = lw_vty(cx, op->out[0]);
    else if (op->nout > 1) {
        rk_buf_puts(b, "{ ");
        for (uint32_t i = 0; i < op->nout; i++) lw_fmt(cx, b, "%s%t", i ? ", " : "", op->out[i]);
        rk_buf_puts(b, " }");
        ret = lw_printf(cx, "%s", rk_buf_cstr(b));
        rk_buf_reset(b);
    }
    const char *res = op->nout == 1 ? lw_val(cx, op->out[0]) : op->nout ? lw_tmp(cx, "asm") : NULL;
    if (res) lw_fmt(cx, b, "%s = ", res);
    /* `convergent` is accepted on the op but an asm call cannot carry it */
    lw_fmt(cx, b, "call %s asm %s\"", ret, lw_attr_bool(op, "sideeffect", true) ? "sideeffect " : "");
    asm_escape(b, lw_attr_str(op, "template", ""));
    rk_buf_puts(b, "\", \"");
    asm_escape(b, lw_attr_str(op, "constraints", ""));
    rk_buf_puts(b, "\"(");
    for (uint32_t i = 0; i < op->nin; i++) lw_fmt(cx, b, "%s%V", i ? ", " : "", op->in[i]);
    rk_buf_putc(b, ')');
    lw_ins(cx, "%s", rk_buf_cstr(b));
    for (uint32_t i = 0; op->nout > 1 && i < op->nout; i++)
        lw_ins(cx, "%v = extractvalue %s %s, %u", op->out[i], ret, res, i);
}

/* ---- the switch ------------------------------------------------------------------------------------- */
void lw_lower_generic(lw_ctx *cx, const rk_op *op) {
    rk_value r = op->nout ? op->out[0] : (rk_value){0};
    switch (op->code) {
    case RK_OP_CONSTANT: case RK_OP_CONSTANT_VEC: case RK_OP_SMEM_ALLOC: break;   /* inlined at each use */
    case RK_OP_ADD: binop(cx, op, "add nsw"); break;
    case RK_OP_SUB: binop(cx, op, "sub nsw"); break;
    case RK_OP_MUL: binop(cx, op, "mul nsw"); break;
    case RK_OP_DIV: binop(cx, op, "sdiv"); break;
    case RK_OP_MOD: binop(cx, op, "srem"); break;
    case RK_OP_UDIV: binop(cx, op, "udiv"); break;
    case RK_OP_UMOD: binop(cx, op, "urem"); break;
    case RK_OP_AND: binop(cx, op, "and"); break;
    case RK_OP_OR: binop(cx, op, "or"); break;
    case RK_OP_XOR: binop(cx, op, "xor"); break;
    case RK_OP_SHL: binop(cx, op, "shl"); break;
    case RK_OP_LSHR: binop(cx, op, "lshr"); break;
    case RK_OP_ASHR: binop(cx, op, "ashr"); break;
    case RK_OP_NOT:
        lw_ins(cx, "%v = xor %V, %s", r, op->in[0], rk_type_eq(vt(cx, r), RK_T_I1) ? "true" : "-1");
        break;
    case RK_OP_SMAX: call_ovl(cx, LW_D_SMAX, "smax", vt(cx, r), 2, r, op->in); break;
    case RK_OP_SMIN: call_ovl(cx, LW_D_SMIN, "smin", vt(cx, r), 2, r, op->in); break;
    case RK_OP_UMAX: call_ovl(cx, LW_D_UMAX, "umax", vt(cx, r), 2, r, op->in); break;
    case RK_OP_UMIN: call_ovl(cx, LW_D_UMIN, "umin", vt(cx, r), 2, r, op->in); break;
    case RK_OP_UMUL_HI_I32: umul_hi(cx, op); break;
    case RK_OP_CMP:
        lw_ins(cx, "%v = icmp %s %V, %v", r, icmp_pred(lw_attr_str(op, "pred", NULL)), op->in[0], op->in[1]);
        break;
    case RK_OP_SELECT: lw_ins(cx, "%v = select %V, %V, %V", r, op->in[0], op->in[1], op->in[2]); break;
    case RK_OP_ZEXT: case RK_OP_VZEXT: cast(cx, op, "zext"); break;
    case RK_OP_SEXT: case RK_OP_VSEXT: cast(cx, op, "sext"); break;
    case RK_OP_TRUNC: case RK_OP_VTRUNC: cast(cx, op, "trunc"); break;
    case RK_OP_BITCAST: case RK_OP_VBITCAST: cast(cx, op, "bitcast"); break;
    case RK_OP_FADD: binop(cx, op, "fadd"); break;
    case RK_OP_FSUB: binop(cx, op, "fsub"); break;
    case RK_OP_FMUL: binop(cx, op, "fmul"); break;
    case RK_OP_FDIV: binop(cx, op, "fdiv"); break;
    case RK_OP_FNEG: case RK_OP_VFNEG: lw_ins(cx, "%v = fneg %V", r, op->in[0]); break;
    case RK_OP_FABS: call_ovl(cx, LW_D_FABS, "fabs", vt(cx, r), 1, r, op->in); break;
    case RK_OP_FMA: case RK_OP_VFMA: call_ovl(cx, LW_D_FMULADD, "fmuladd", vt(cx, r), 3, r, op->in); break;
    case RK_OP_FMAX: call_ovl(cx, LW_D_MAXNUM, "maxnum", vt(cx, r), 2, r, op->in); break;
    case RK_OP_FMIN: call_ovl(cx, LW_D_MINNUM, "minnum", vt(cx, r), 2, r, op->in); break;
    case RK_OP_FMAX3: minmax3(cx, op, LW_D_MAXNUM, "maxnum"); break;
    case RK_OP_FMIN3: minmax3(cx, op, LW_D_MINNUM, "minnum"); break;
    case RK_OP_FCMP: case RK_OP_VFCMP:
        lw_ins(cx, "%v = fcmp %s %V, %v", r, lw_attr_str(op, "pred", NULL), op->in[0], op->in[1]);
        break;
    case RK_OP_SITOFP: case RK_OP_SITOFP_F32: cast(cx, op, "sitofp"); break;
    case RK_OP_UITOFP: cast(cx, op, "uitofp"); break;
    case RK_OP_FPTOSI: cast(cx, op, "fptosi"); break;
    case RK_OP_FPTOUI: cast(cx, op, "fptoui"); break;
    case RK_OP_FPEXT: case RK_OP_CAST_TO_F32: case RK_OP_VCAST_TO_F32: cast(cx, op, "fpext"); break;
    case RK_OP_FPTRUNC: case RK_OP_CAST_F32_TO: case RK_OP_TRUNC_F32_TO_F16: case RK_OP_TRUNC_F32_TO_BF16:
    case RK_OP_VTRUNC_F32_TO: case RK_OP_VTRUNC_F32_TO_F16:
        cast(cx, op, "fptrunc");
        break;
    case RK_OP_RINT_F32: call_ovl(cx, LW_D_RINT, "rint", vt(cx, r), 1, r, op->in); break;
    case RK_OP_CVT_PK_I8_F32X4: case RK_OP_CVT_F32_TO_I8_SAT: to_i8_sat(cx, op); break;
    case RK_OP_VADD: vec_arith(cx, op, "fadd", "add"); break;
    case RK_OP_VSUB: vec_arith(cx, op, "fsub", "sub"); break;
    case RK_OP_VMUL: vec_arith(cx, op, "fmul", "mul"); break;
    case RK_OP_VDIV: vec_arith(cx, op, "fdiv", "sdiv"); break;
    case RK_OP_VAND: binop(cx, op, "and"); break;
    case RK_OP_VOR: binop(cx, op, "or"); break;
    case RK_OP_VXOR: binop(cx, op, "xor"); break;
    case RK_OP_VSHL: binop(cx, op, "shl"); break;
    case RK_OP_VLSHR: binop(cx, op, "lshr"); break;
    case RK_OP_VSMAX: call_ovl(cx, LW_D_SMAX, "smax", vt(cx, r), 2, r, op->in); break;
    case RK_OP_VSMIN: call_ovl(cx, LW_D_SMIN, "smin", vt(cx, r), 2, r, op->in); break;
    case RK_OP_VMAX: vec_pick(cx, op, "ogt"); break;
    case RK_OP_VMIN: vec_pick(cx, op, "olt"); break;
    case RK_OP_VSUM: vsum(cx, op); break;
    case RK_OP_VREDUCE_MAX: vreduce(cx, op, "ogt"); break;
    case RK_OP_VREDUCE_MIN: vreduce(cx, op, "olt"); break;
    case RK_OP_VCMP:
        lw_ins(cx, "%v = icmp %s %V, %v", r, icmp_pred(lw_attr_str(op, "pred", NULL)), op->in[0], op->in[1]);
        break;
    case RK_OP_VSELECT: lw_ins(cx, "%v = select %V, %V, %V", r, op->in[0], op->in[1], op->in[2]); break;
    case RK_OP_VEXTRACT:
        lw_ins(cx, "%v = extractelement %V, i32 %l", r, op->in[0], lw_attr_int(op, "index", 0));
        break;
    case RK_OP_VINSERT:
        lw_ins(cx, "%v = insertelement %V, %V, i32 %l", r, op->in[0], op->in[1], lw_attr_int(op, "index", 0));
        break;
    case RK_OP_VSPLAT: vsplat(cx, op); break;
    case RK_OP_VPACK: vpack(cx, op); break;
    case RK_OP_VCONCAT: vconcat(cx, op); break;
    case RK_OP_VSHUFFLE: vshuffle(cx, op); break;
    case RK_OP_GLOBAL_LOAD: case RK_OP_GLOBAL_LOAD_TYPED: case RK_OP_GLOBAL_LOAD_VN: gload(cx, op); break;
    case RK_OP_GLOBAL_STORE: case RK_OP_GLOBAL_STORE_TYPED: case RK_OP_GLOBAL_STORE_VN: gstore(cx, op); break;
    case RK_OP_GLOBAL_PTR_ADD: ptr_add(cx, op); break;
    case RK_OP_PTR_TO_INT: lw_ins(cx, "%v = ptrtoint %t %v to i64", r, op->in[0], op->in[0]); break;
    case RK_OP_COOP_GLOBAL_STORE: coop_store(cx, op); break;
    case RK_OP_SMEM_LOAD: case RK_OP_SMEM_LOAD_VN: case RK_OP_SMEM_LOAD_V4: case RK_OP_SMEM_LOAD_VN_F32:
        smem_load(cx, op);
        break;
    case RK_OP_SMEM_STORE: case RK_OP_SMEM_STORE_VN: case RK_OP_SMEM_STORE_VN_F32: smem_store(cx, op); break;
    case RK_OP_SMEM_STORE_DISTRIBUTED: smem_store_dist(cx, op); break;
    case RK_OP_SMEM_ADDR_OF: lw_ins(cx, "%v = ptrtoint %t %v to i64", r, op->in[0], op->in[0]); break;
    case RK_OP_SMEM_PTR_ADD: lw_ins(cx, "%v = add i64 %v, %v", r, op->in[0], op->in[1]); break;
    case RK_OP_LDS_ATOMIC_ADD: lds_atomic(cx, op); break;
    case RK_OP_GLOBAL_ATOMIC_ADD:
        rmw(cx, op, lw_is_float(cx, vt(cx, op->in[2])) ? "fadd" : "add", NULL, LW_SCOPE_DEVICE);
        break;
    case RK_OP_GLOBAL_ATOMIC_ADD_F32: case RK_OP_GLOBAL_ATOMIC_ADD_PK_BF16: case RK_OP_GLOBAL_ATOMIC_ADD_PK_F16:
        rmw(cx, op, "fadd", NULL, LW_SCOPE_DEVICE);
        break;
    case RK_OP_GLOBAL_ATOMIC:
        rmw(cx, op, rmw_kind(lw_attr_str(op, "kind", NULL)), lw_attr_str(op, "scope", NULL), LW_SCOPE_DEVICE);
        break;
    case RK_OP_GLOBAL_ATOMIC_CAS: cas(cx, op); break;
    case RK_OP_REGISTER_P_FROM_QK_C: p_from_qk_c(cx, op); break;
    case RK_OP_INLINE_ASM: inline_asm(cx, op); break;
    LW_FLOW_OPS(LW_CASE)
    LW_VENDOR_OPS(LW_CASE)
    case RK_OP_INVALID: case RK_OP__COUNT:
        rk_bug("lw_lower_generic called for a flow or vendor op");
    }
}
