/* rocke — constant folding. Does: replaces a pure op whose operands are all
 * arith.constant by a fresh constant (%c<N>), and an arith.select with a
 * constant condition (or equal arms) by the chosen operand. Needs: a verified
 * kernel. Guarantees: a fold happens only where the result is exactly what the
 * lowered LLVM would compute on every target — integer ops fold only when
 * defined (no division by zero, no INT_MIN / -1, no shift >= width, no signed
 * overflow on the nsw ops add/sub/mul); float ops only in f32/f64, computed
 * in that precision, never producing NaN, never touching subnormals (GPUs may
 * flush them) and never choosing between +0 and -0 where LLVM leaves it open.
 * Ops with side effects, regions or vectors are left alone. Layer: ir. */
#include <float.h>
#include <math.h>

#include "ir_int.h"

typedef struct cval {
    rk_scalar s;
    uint64_t u;        /* integers: the bits, masked to the width */
    double f;          /* floats: the value, exact in its type */
} cval;

static uint64_t mask_of(uint32_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1u; }

static int64_t sext(uint64_t u, uint32_t bits) {
    if (bits >= 64) return (int64_t)u;
    uint64_t m = 1ull << (bits - 1);
    u &= mask_of(bits);
    return (int64_t)((u ^ m) - m);
}

static bool fits_signed(int64_t v, uint32_t bits) { return bits >= 64 || sext((uint64_t)v, bits) == v; }

static bool is_fold_float(rk_scalar s) { return s == RK_S_F32 || s == RK_S_F64; }

/* A normal number or zero (neither subnormal, inf nor NaN) in format s. */
static bool plain(double f, rk_scalar s) {
    if (!isfinite(f)) return false;
    double a = fabs(f);
    return a == 0.0 || a >= (s == RK_S_F32 ? (double)FLT_MIN : DBL_MIN);
}

static bool const_of(const rk_kernel *k, rk_value v, cval *out) {
    const rk_op *d = rk_value_def(k, v);
    if (!d || d->code != RK_OP_CONSTANT || d->nout != 1) return false;
    rk_scalar s = rk_type_scalar(rk_value_type(k, v));
    const rk_attr_val *a = rk_attrs_get(&d->attrs, "value");
    if (!a) return false;
    out->s = s;
    if (rk_scalar_is_int(s)) {
        if (a->kind != RK_AK_INT) return false;
        out->u = (uint64_t)a->u.i & mask_of(rk_scalar_bits(s));
        return true;
    }
    if (!is_fold_float(s) || (a->kind != RK_AK_FLOAT && a->kind != RK_AK_INT)) return false;
    double f = a->kind == RK_AK_FLOAT ? a->u.f : (double)a->u.i;
    out->f = s == RK_S_F32 ? (double)(float)f : f;
    return true;
}

/* ---- integers ----------------------------------------------------------------------- */
static bool fold_int(rk_opcode code, const rk_op *op, const cval *a, const cval *b, uint32_t bits, cval *r) {
    uint64_t m = mask_of(bits), ua = a->u, ub = b ? b->u : 0;
    int64_t sa = sext(ua, bits), sb = sext(ub, bits), sr;
    int64_t smin = bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
    switch (code) {
    case RK_OP_ADD:
        if (__builtin_add_overflow(sa, sb, &sr) || !fits_signed(sr, bits)) return false;
        r->u = (uint64_t)sr & m;
        return true;
    case RK_OP_SUB:
        if (__builtin_sub_overflow(sa, sb, &sr) || !fits_signed(sr, bits)) return false;
        r->u = (uint64_t)sr & m;
        return true;
    case RK_OP_MUL:
        if (__builtin_mul_overflow(sa, sb, &sr) || !fits_signed(sr, bits)) return false;
        r->u = (uint64_t)sr & m;
        return true;
    case RK_OP_DIV:
    case RK_OP_MOD:
        if (sb == 0 || (sa == smin && sb == -1)) return false;
        r->u = (uint64_t)(code == RK_OP_DIV ? sa / sb : sa % sb) & m;
        return true;
    case RK_OP_UDIV:
    case RK_OP_UMOD:
        if (ub == 0) return false;
        r->u = code == RK_OP_UDIV ? ua / ub : ua % ub;
        return true;
    case RK_OP_AND: r->u = ua & ub; return true;
    case RK_OP_OR: r->u = ua | ub; return true;
    case RK_OP_XOR: r->u = ua ^ ub; return true;
    case RK_OP_NOT: r->u = ~ua & m; return true;
    case RK_OP_SHL:
    case RK_OP_LSHR:
    case RK_OP_ASHR:
        if (ub >= bits) return false;            /* poison in LLVM */
        if (code == RK_OP_SHL) r->u = (ua << ub) & m;
        else if (code == RK_OP_LSHR) r->u = ua >> ub;
        else r->u = (uint64_t)(sa < 0 ? ~(~sa >> ub) : sa >> ub) & m;
        return true;
    case RK_OP_SMAX: r->u = (uint64_t)(sa > sb ? sa : sb) & m; return true;
    case RK_OP_SMIN: r->u = (uint64_t)(sa < sb ? sa : sb) & m; return true;
    case RK_OP_UMAX: r->u = ua > ub ? ua : ub; return true;
    case RK_OP_UMIN: r->u = ua < ub ? ua : ub; return true;
    case RK_OP_UMUL_HI_I32: r->u = ((ua & 0xffffffffu) * (ub & 0xffffffffu)) >> 32; return true;
    case RK_OP_CMP: {
        const char *p = rk_attrs_str(&op->attrs, "pred");
        bool v;
        if (!p) return false;
        if (!strcmp(p, "lt")) v = sa < sb;
        else if (!strcmp(p, "le")) v = sa <= sb;
        else if (!strcmp(p, "gt")) v = sa > sb;
        else if (!strcmp(p, "ge")) v = sa >= sb;
        else if (!strcmp(p, "eq")) v = ua == ub;
        else if (!strcmp(p, "ne")) v = ua != ub;
        else if (!strcmp(p, "ult")) v = ua < ub;
        else if (!strcmp(p, "ule")) v = ua <= ub;
        else if (!strcmp(p, "ugt")) v = ua > ub;
        else if (!strcmp(p, "uge")) v = ua >= ub;
        else return false;
        r->u = v;
        return true;
    }
    default:
        return false;
    }
}

/* ---- floats (f32 / f64) ---------------------------------------------------------------- */
/* Round a double to the result format; + - * / of two floats computed in
 * double and rounded once are exact-then-rounded (53 >= 2*24 + 2). */
static double in_fmt(double v, rk_scalar s) { return s == RK_S_F32 ? (double)(float)v : v; }

/* maxnum/minnum: a NaN operand loses; equal zeros of opposite sign are left
 * to the target, so they do not fold. */
static bool fmaxmin(double a, double b, bool max, double *r) {
    if (isnan(a) && isnan(b)) return false;
    if (isnan(a)) { *r = b; return true; }
    if (isnan(b)) { *r = a; return true; }
    if (a == b && signbit(a) != signbit(b)) return false;
    *r = max ? (a > b ? a : b) : (a < b ? a : b);
    return true;
}

static bool fcmp(const char *p, double a, double b, bool *v) {
    bool uno = isnan(a) || isnan(b);
    if (!p) return false;
    if (!strcmp(p, "ord")) *v = !uno;
    else if (!strcmp(p, "uno")) *v = uno;
    else if (!strcmp(p, "oeq")) *v = !uno && a == b;
    else if (!strcmp(p, "one")) *v = !uno && a != b;
    else if (!strcmp(p, "olt")) *v = !uno && a < b;
    else if (!strcmp(p, "ole")) *v = !uno && a <= b;
    else if (!strcmp(p, "ogt")) *v = !uno && a > b;
    else if (!strcmp(p, "oge")) *v = !uno && a >= b;
    else if (!strcmp(p, "ueq")) *v = uno || a == b;
    else if (!strcmp(p, "une")) *v = uno || a != b;
    else if (!strcmp(p, "ult")) *v = uno || a < b;
    else if (!strcmp(p, "ule")) *v = uno || a <= b;
    else if (!strcmp(p, "ugt")) *v = uno || a > b;
    else if (!strcmp(p, "uge")) *v = uno || a >= b;
    else return false;
    return true;
}

static bool fold_float(rk_opcode code, const rk_op *op, const cval *x, uint32_t n, rk_scalar rs, cval *r) {
    rk_scalar s = x[0].s;
    double a = x[0].f, b = n > 1 ? x[1].f : 0.0, c = n > 2 ? x[2].f : 0.0, v;
    for (uint32_t i = 0; i < n; i++)
        if (!isnan(x[i].f) && !plain(x[i].f, s) && !isinf(x[i].f)) return false;   /* subnormal input */
    switch (code) {
    case RK_OP_FADD: v = in_fmt(a + b, s); break;
    case RK_OP_FSUB: v = in_fmt(a - b, s); break;
    case RK_OP_FMUL: v = in_fmt(a * b, s); break;
    case RK_OP_FDIV: v = in_fmt(a / b, s); break;
    case RK_OP_FNEG: v = -a; break;
    case RK_OP_FABS: v = fabs(a); break;
    case RK_OP_FMAX: case RK_OP_FMIN:
        if (!fmaxmin(a, b, code == RK_OP_FMAX, &v)) return false;
        break;
    case RK_OP_FMAX3: case RK_OP_FMIN3: {
        double in;
        if (!fmaxmin(b, c, code == RK_OP_FMAX3, &in) || !fmaxmin(a, in, code == RK_OP_FMAX3, &v)) return false;
        break;
    }
    case RK_OP_FCMP: {
        bool t;
        if (!fcmp(rk_attrs_str(&op->attrs, "pred"), a, b, &t)) return false;
        r->u = t;
        return true;
    }
    case RK_OP_FPEXT:
        if (s != RK_S_F32 || rs != RK_S_F64) return false;
        v = a;
        break;
    case RK_OP_FPTRUNC:
        if (s != RK_S_F64 || rs != RK_S_F32) return false;
        v = (double)(float)a;
        break;
    default:
        return false;
    }
    if (isnan(v) || (!plain(v, rs) && !isinf(v))) return false;
    r->f = v;
    return true;
}

/* int -> float and float -> int conversions. */
static bool fold_cast(rk_opcode code, const cval *a, uint32_t abits, rk_scalar rs, cval *r) {
    uint32_t rbits = rk_scalar_bits(rs);
    switch (code) {
    case RK_OP_SITOFP: case RK_OP_UITOFP: case RK_OP_SITOFP_F32: {
        if (!is_fold_float(rs)) return false;
        /* C's integer to float conversion rounds to nearest even */
        if (code == RK_OP_UITOFP) r->f = rs == RK_S_F32 ? (double)(float)a->u : (double)a->u;
        else r->f = rs == RK_S_F32 ? (double)(float)sext(a->u, abits) : (double)sext(a->u, abits);
        return true;
    }
    case RK_OP_FPTOSI: case RK_OP_FPTOUI: {
        if (!is_fold_float(a->s) || isnan(a->f) || !plain(a->f, a->s)) return false;
        double t = trunc(a->f);
        if (code == RK_OP_FPTOSI) {
            double lo = -ldexp(1.0, (int)rbits - 1), hi = ldexp(1.0, (int)rbits - 1);
            if (!(t >= lo && t < hi)) return false;   /* poison */
            r->u = (uint64_t)(int64_t)t & mask_of(rbits);
        } else {
            if (!(t > -1.0 && t < ldexp(1.0, (int)rbits))) return false;
            r->u = (uint64_t)t;
        }
        return true;
    }
    default:
        return false;
    }
}

/* The low bits of an address that its definition fixes: a pointer parameter
 * declared `align A` plus constant byte offsets (tile.global_ptr_add) is
 * known modulo A. *align = A (0: nothing known), *low = the address mod A. */
static void known_low_bits(const rk_kernel *k, rk_value p, uint64_t *align, uint64_t *low) {
    uint64_t off = 0;
    *align = 0;
    *low = 0;
    for (const rk_op *d = rk_value_def(k, p); d; d = rk_value_def(k, p)) {
        cval c;
        if (d->code != RK_OP_GLOBAL_PTR_ADD || !const_of(k, d->in[1], &c)) return;
        off += c.u;
        p = d->in[0];
    }
    for (uint32_t i = 0; i < k->nparams; i++) {
        int64_t a = 0;
        if (!rk_value_eq(k->params[i].value, p)) continue;
        if (!rk_attrs_int(&k->params[i].attrs, "align", &a) || a <= 0) return;
        *align = (uint64_t)a;
        *low = off & (*align - 1);
        return;
    }
}

/* arith.and of arith.ptrtoint and a constant below the pointer's known
 * alignment: the low bits of the address are known. */
static bool fold_addr_low(const rk_kernel *k, const rk_op *op, cval *r) {
    if (op->code != RK_OP_AND) return false;
    for (uint32_t i = 0; i < 2; i++) {
        const rk_op *d = rk_value_def(k, op->in[i]);
        cval c;
        if (!d || d->code != RK_OP_PTR_TO_INT || !const_of(k, op->in[1 - i], &c)) continue;
        uint64_t align, low;
        known_low_bits(k, d->in[0], &align, &low);
        if (!align || c.u >= align) return false;
        r->s = c.s;
        r->u = low & c.u;
        return true;
    }
    return false;
}

/* Fold op to a constant of its result type; false when it does not fold. */
static bool fold_value(const rk_kernel *k, const rk_op *op, cval *r) {
    if (fold_addr_low(k, op, r)) return true;
    if (op->nout != 1 || op->nin == 0 || op->nin > 3) return false;
    cval x[3];
    for (uint32_t i = 0; i < op->nin; i++)
        if (!const_of(k, op->in[i], &x[i])) return false;
    rk_scalar rs = rk_type_scalar(rk_value_type(k, op->out[0]));
    uint32_t abits = rk_scalar_bits(x[0].s);
    r->s = rs;
    switch (op->code) {
    case RK_OP_ZEXT:
        if (!rk_scalar_is_int(x[0].s) || !rk_scalar_is_int(rs)) return false;
        r->u = x[0].u;
        return true;
    case RK_OP_SEXT:
        if (!rk_scalar_is_int(x[0].s) || !rk_scalar_is_int(rs)) return false;
        r->u = (uint64_t)sext(x[0].u, abits) & mask_of(rk_scalar_bits(rs));
        return true;
    case RK_OP_TRUNC:
        if (!rk_scalar_is_int(x[0].s) || !rk_scalar_is_int(rs)) return false;
        r->u = x[0].u & mask_of(rk_scalar_bits(rs));
        return true;
    case RK_OP_SITOFP: case RK_OP_UITOFP: case RK_OP_SITOFP_F32:
    case RK_OP_FPTOSI: case RK_OP_FPTOUI:
        return fold_cast(op->code, &x[0], abits, rs, r);
    default:
        break;
    }
    if (rk_scalar_is_int(x[0].s)) {
        for (uint32_t i = 1; i < op->nin; i++)
            if (x[i].s != x[0].s) return false;
        return fold_int(op->code, op, &x[0], op->nin > 1 ? &x[1] : NULL, abits, r);
    }
    if (is_fold_float(x[0].s)) {
        for (uint32_t i = 1; i < op->nin; i++)
            if (x[i].s != x[0].s) return false;
        return fold_float(op->code, op, x, op->nin, rs, r);
    }
    return false;
}

/* ---- rewriting ------------------------------------------------------------------------------ */
typedef struct fctx {
    rk_kernel *k;
    ir_rewrite rw;
    uint32_t folded;
    bool oom;
} fctx;

static bool name_taken_by_param(const rk_kernel *k, rk_value v) {
    char nb[RK_NAME_MAX];
    const char *n = rk_value_name(k, v, nb);
    for (uint32_t i = 0; i < k->nparams; i++)
        if (strcmp(k->params[i].name, n) == 0) return true;
    return false;
}

/* A new arith.constant standing where `like` stood. NULL on OOM. */
static rk_op *make_const(rk_kernel *k, const rk_op *like, rk_type t, const cval *c) {
    rk_op *op = ir_op_alloc(k, RK_OP_CONSTANT, 0, 1, 0);
    if (!op) return NULL;
    rk_value v = ir_new_value(k, t, RK_VK_RESULT, rk_op_info_of(RK_OP_CONSTANT)->hint, true);
    if (!rk_value_ok(v)) return NULL;
    /* a parameter may already be called c<N>: skip to a free number */
    while (name_taken_by_param(k, v)) k->vals[v.id].num = ++k->counter;
    k->vals[v.id].def = op;
    k->vals[v.id].index = 0;
    rk_attr_val *val = ir_attrs_put(k, &op->attrs, "value");
    if (!val) return NULL;
    if (rk_scalar_is_int(c->s)) {
        val->kind = RK_AK_INT;
        /* canonical literal: 0/1 for i1, the signed value otherwise */
        val->u.i = c->s == RK_S_I1 ? (int64_t)(c->u & 1u) : sext(c->u, rk_scalar_bits(c->s));
    } else {
        val->kind = RK_AK_FLOAT;
        val->u.f = c->f;
    }
    rk_attr_val *ity = ir_attrs_put(k, &op->attrs, "ity");
    if (!ity) return NULL;
    ity->kind = RK_AK_STR;
    ity->u.s = rk_type_name(k, t);
    op->out[0] = v;
    op->parent = like->parent;
    op->loc = like->loc;
    op->line = like->line;
    return op;
}

static void set_repl(fctx *f, rk_value from, rk_value to) {
    if (from.id < f->rw.n) f->rw.to[from.id] = to;
}

static void fold_region(fctx *f, rk_region *r) {
    uint32_t w = 0;
    for (uint32_t i = 0; i < r->nops; i++) {
        rk_op *op = r->ops[i];
        ir_rewrite_operands(&f->rw, op);
        for (uint32_t j = 0; j < op->nreg; j++) fold_region(f, &op->regions[j]);
        if (!f->oom && op->nreg == 0 && ir_op_is_pure(op)) {
            if (op->code == RK_OP_SELECT && op->nin == 3) {
                cval c = {RK_S_NONE, 0, 0.0};
                bool known = const_of(f->k, op->in[0], &c);
                if (known || rk_value_eq(op->in[1], op->in[2])) {
                    set_repl(f, op->out[0], known && !(c.u & 1u) ? op->in[2] : op->in[1]);
                    f->folded++;
                    continue;               /* the select is gone */
                }
            } else {
                cval c = {RK_S_NONE, 0, 0.0};
                if (fold_value(f->k, op, &c)) {
                    rk_op *nc = make_const(f->k, op, rk_value_type(f->k, op->out[0]), &c);
                    if (!nc) {
                        f->oom = true;
                    } else {
                        set_repl(f, op->out[0], nc->out[0]);
                        r->ops[w++] = nc;
                        f->folded++;
                        continue;
                    }
                }
            }
        }
        r->ops[w++] = op;
    }
    r->nops = w;
}

rk_status ir_fold(rk_kernel *k, uint32_t *folded) {
    fctx f = {.k = k};
    f.rw.n = k->nvals;
    f.rw.to = rk_calloc(f.rw.n, sizeof *f.rw.to);
    *folded = 0;
    if (!f.rw.to) return RK_ERR_NOMEM;
    fold_region(&f, &k->body);
    rk_free(f.rw.to, f.rw.n * sizeof *f.rw.to);
    *folded = f.folded;
    return f.oom ? RK_ERR_NOMEM : RK_OK;
}
