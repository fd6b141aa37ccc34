/* rocke — the local checks of one op: arity, attributes against the table's
 * spec, and the op's type rule. Used by the builder (as each op is made) and
 * by the verifier (for parsed or hand-edited IR), so both say the same thing.
 * Needs: operands already defined. Context rules (dominance, scopes) live in
 * verify.c. Layer: ir. */
#include <stdio.h>
#include <stdlib.h>

#include "ir_int.h"

typedef struct ck {
    const rk_kernel *k;
    const rk_op *op;
    const rk_op_info *info;
    const ir_op_spec *spec;
    char *msg;
    size_t n;
} ck;

#define FAIL(c, ...) (snprintf((c)->msg, (c)->n, __VA_ARGS__), false)

static const char *tn(const ck *c, rk_type t) { return ir_tname(c->k, t); }
static rk_type in_t(const ck *c, uint32_t i) { return ir_vtype(c->k, c->op->in[i]); }
static rk_type out_t(const ck *c, uint32_t i) { return ir_vtype(c->k, c->op->out[i]); }
static rk_type_kind kind(const ck *c, rk_type t) { return ir_tkind(c->k, t); }
static bool matches(const ck *c, rk_type t, const char *pat) {
    if (pat == c->info->sig && t.id > 0 && t.id < RK_S__COUNT) return (c->spec->sig_scalars >> t.id) & 1u;
    return ir_type_matches(c->k, t, pat, strlen(pat));
}
static bool is_vec(const ck *c, rk_type t) { return kind(c, t) == RK_TK_VEC; }
static rk_type elem(const ck *c, rk_type t) { return ir_telem(c->k, t); }
static uint32_t count(const ck *c, rk_type t) { return ir_tcount(c->k, t); }
static bool is_index(rk_type t) { return t.id == RK_S_I32 || t.id == RK_S_I64; }

/* ---- arity ------------------------------------------------------------------------ */
static bool check_count(ck *c, const char *what, uint32_t have, uint16_t want) {
    uint32_t n = RK_COUNT_N(want);
    if (RK_COUNT_IS_MIN(want) ? have >= n : have == n) return true;
    return FAIL(c, "takes %s%u %s, got %u", RK_COUNT_IS_MIN(want) ? "at least " : "", n, what, have);
}

/* ---- attributes --------------------------------------------------------------------- */
static const char *attr_kind_name(ir_attr_type t) {
    switch (t) {
    case IR_AT_INT: return "an integer";
    case IR_AT_NUM: return "a number";
    case IR_AT_STR: return "a string";
    case IR_AT_BOOL: return "a bool";
    case IR_AT_LIST: return "a list";
    case IR_AT_TYPE: return "a type name";
    }
    return "?";
}

static bool check_attr(ck *c, const ir_attr_spec *s, const rk_attr_val *v) {
    bool kind_ok = false;
    switch (s->type) {
    case IR_AT_INT: kind_ok = v->kind == RK_AK_INT; break;
    case IR_AT_NUM: kind_ok = v->kind == RK_AK_INT || v->kind == RK_AK_FLOAT; break;
    case IR_AT_STR: kind_ok = v->kind == RK_AK_STR; break;
    case IR_AT_BOOL: kind_ok = v->kind == RK_AK_BOOL; break;
    case IR_AT_LIST: kind_ok = v->kind == RK_AK_LIST; break;
    case IR_AT_TYPE: kind_ok = v->kind == RK_AK_STR; break;
    }
    if (!kind_ok) return FAIL(c, "attribute '%s' must be %s", s->key, attr_kind_name(s->type));
    if (s->type == IR_AT_TYPE) {
        /* a type name: parse it with a scratch kernel-free check (scalars or
         * composite syntax); composites are validated by the rule */
        const char *p = v->u.s;
        if (!*p) return FAIL(c, "attribute '%s' must name a type, got \"\"", s->key);
    }
    if (s->has_range && (v->u.i < s->lo || v->u.i > s->hi))
        return FAIL(c, "attribute '%s' = %lld is out of range [%lld, %lld]", s->key,
                    (long long)v->u.i, (long long)s->lo, (long long)s->hi);
    if (s->nenum) {
        /* the builder stores the spec's own enum strings: pointer hits first */
        if (v->kind == RK_AK_STR)
            for (uint32_t i = 0; i < s->nenum; i++)
                if (s->enums[i] == v->u.s) return true;
        char have[32];
        const char *hv = v->kind == RK_AK_STR ? v->u.s : have;
        if (v->kind == RK_AK_INT) snprintf(have, sizeof have, "%lld", (long long)v->u.i);
        for (uint32_t i = 0; i < s->nenum; i++)
            if (strcmp(s->enums[i], hv) == 0) return true;
        char legal[256];
        size_t off = 0;
        for (uint32_t i = 0; i < s->nenum && off < sizeof legal; i++)
            off += (size_t)snprintf(legal + off, sizeof legal - off, "%s%s", i ? ", " : "", s->enums[i]);
        return FAIL(c, "attribute '%s' = %s is not one of: %s", s->key, hv, legal);
    }
    return true;
}

static bool check_attrs(ck *c) {
    const ir_op_spec *sp = c->spec;
    if (!sp->nattrs) return true;
    /* one pass over the op's attributes finds each spec key's first value;
     * then the spec is checked in its own order, as the messages expect */
    const rk_attr_val *found[RK_COUNTOF(sp->attrs)] = {0};
    const rk_attrs *a = &c->op->attrs;
    for (uint32_t j = 0; j < a->n; j++) {
        const char *key = a->items[j].key;
        uint32_t i = 0;
        while (i < sp->nattrs && sp->attrs[i].key != key) i++;      /* shared keys */
        if (i == sp->nattrs)                                           /* any other copy */
            for (i = 0; i < sp->nattrs && strcmp(sp->attrs[i].key, key) != 0; i++) {}
        if (i < sp->nattrs && !found[i]) found[i] = &a->items[j].val;
    }
    for (uint32_t i = 0; i < sp->nattrs; i++) {
        const ir_attr_spec *s = &sp->attrs[i];
        const rk_attr_val *v = found[i];
        if (!v) {
            if (s->optional) continue;
            return FAIL(c, "missing required attribute '%s' (%s)", s->key, attr_kind_name(s->type));
        }
        if (!check_attr(c, s, v)) return false;
    }
    return true;
}

/* as rk_attrs_int / rk_attrs_str */
static bool attr_int(const ck *c, const char *key, int64_t *out) {
    const rk_attr_val *v = ir_attr_find(&c->op->attrs, key);
    if (!v) return false;
    if (v->kind == RK_AK_INT) { *out = v->u.i; return true; }
    if (v->kind == RK_AK_BOOL) { *out = v->u.b; return true; }
    return false;
}
static const char *attr_str(const ck *c, const char *key) {
    const rk_attr_val *v = ir_attr_find(&c->op->attrs, key);
    return v && v->kind == RK_AK_STR ? v->u.s : NULL;
}

/* An attribute naming a type (elem_type, ity, target...) must name `t`. */
static bool attr_names_type(ck *c, const char *key, rk_type t) {
    const char *s = attr_str(c, key);
    if (!s) return true;
    const char *name = tn(c, t);
    if (s == name || strcmp(s, name) == 0) return true;   /* the builder stores the canonical name itself */
    return FAIL(c, "attribute %s = \"%s\" does not match type %s", key, s, tn(c, t));
}

/* ---- sig helpers ------------------------------------------------------------------------ */
/* Split [s, e) at top-level commas; calls fn for each part. */
static uint32_t split_top(const char *s, const char *e, const char **parts, size_t *lens, uint32_t max) {
    uint32_t n = 0;
    int depth = 0;
    const char *p0 = s;
    if (s == e) return 0;
    for (const char *p = s; p <= e; p++) {
        if (p < e && *p == '<') depth++;
        else if (p < e && *p == '>') depth--;
        else if (p == e || (*p == ',' && depth == 0)) {
            if (n < max) { parts[n] = p0; lens[n] = (size_t)(p - p0); }
            n++;
            p0 = p + 1;
        }
    }
    return n;
}

static bool sig_is_one_of_several(const char *p, size_t n) { return memchr(p, '|', n) != NULL; }

static bool rule_sig(ck *c) {
    const char *sig = c->info->sig, *arrow = strstr(sig, "->");
    RK_ASSERT(arrow != NULL, "R_SIG op without '->' in its sig");
    const char *ip[12], *op[12];
    size_t il[12], ol[12];
    uint32_t ni = split_top(sig, arrow, ip, il, 12), no = split_top(arrow + 2, sig + strlen(sig), op, ol, 12);
    RK_ASSERT(ni == RK_COUNT_N(c->info->nin) && no == RK_COUNT_N(c->info->nout), "sig arity differs from table");
    for (uint32_t i = 0; i < ni; i++)
        if (!ir_type_matches(c->k, in_t(c, i), ip[i], il[i]))
            return FAIL(c, "operand %u has type %s, expected %.*s", i, tn(c, in_t(c, i)), (int)il[i], ip[i]);
    for (uint32_t i = 0; i < no; i++)
        if (!ir_type_matches(c->k, out_t(c, i), op[i], ol[i]))
            return FAIL(c, "result %u has type %s, expected %.*s", i, tn(c, out_t(c, i)), (int)ol[i], op[i]);
    /* the same alternation on operand 0 and result 0 binds one type */
    if (ni && no && il[0] == ol[0] && memcmp(ip[0], op[0], il[0]) == 0 && sig_is_one_of_several(ip[0], il[0]) &&
        !rk_type_eq(in_t(c, 0), out_t(c, 0)))
        return FAIL(c, "result type %s must equal operand 0 type %s", tn(c, out_t(c, 0)), tn(c, in_t(c, 0)));
    /* "x*" on both sides: every vector at an "x*" position has the same lane count (a position with a fixed
     * count, such as tile.wgmma_rs's A fragment, has its own) */
    if (strstr(sig, "x*")) {
        uint32_t lanes = 0;
        for (uint32_t i = 0; i < c->op->nin + c->op->nout; i++) {
            rk_type t = i < c->op->nin ? in_t(c, i) : out_t(c, i - c->op->nin);
            const char *piece = i < c->op->nin ? ip[i] : op[i - c->op->nin];
            size_t plen = i < c->op->nin ? il[i] : ol[i - c->op->nin];
            bool star = false;
            for (size_t j = 0; j + 1 < plen && !star; j++) star = piece[j] == 'x' && piece[j + 1] == '*';
            if (!is_vec(c, t) || !star) continue;
            if (lanes && count(c, t) != lanes)
                return FAIL(c, "vector lane counts differ (%u vs %u)", lanes, count(c, t));
            lanes = count(c, t);
        }
    }
    return true;
}

/* ---- the rules --------------------------------------------------------------------------- */
static bool rule_same(ck *c) {
    rk_type t = c->op->nout ? out_t(c, 0) : in_t(c, 0);
    if (!matches(c, t, c->info->sig))
        return FAIL(c, "type %s is not %s", tn(c, t), c->info->sig);
    for (uint32_t i = 0; i < c->op->nin; i++)
        if (!rk_type_eq(in_t(c, i), t))
            return FAIL(c, "operand %u has type %s but the op works on %s (operands and result share one type)",
                        i, tn(c, in_t(c, i)), tn(c, t));
    return true;
}

static bool rule_cmp(ck *c) {
    rk_type t = in_t(c, 0);
    if (!matches(c, t, c->info->sig)) return FAIL(c, "operands must be %s, got %s", c->info->sig, tn(c, t));
    if (!rk_type_eq(in_t(c, 1), t))
        return FAIL(c, "operands have different types (%s, %s)", tn(c, t), tn(c, in_t(c, 1)));
    if (!rk_type_eq(out_t(c, 0), RK_T_I1)) return FAIL(c, "result must be i1, got %s", tn(c, out_t(c, 0)));
    return true;
}

static bool rule_select(ck *c) {
    if (!rk_type_eq(in_t(c, 0), RK_T_I1)) return FAIL(c, "condition must be i1, got %s", tn(c, in_t(c, 0)));
    rk_type t = in_t(c, 1);
    if (!rk_type_eq(in_t(c, 2), t) || !rk_type_eq(out_t(c, 0), t))
        return FAIL(c, "both choices and the result must share one type (%s, %s -> %s)", tn(c, t),
                    tn(c, in_t(c, 2)), tn(c, out_t(c, 0)));
    if (kind(c, t) == RK_TK_SMEM || kind(c, t) == RK_TK_RSRC)
        return FAIL(c, "cannot select between %s values", tn(c, t));
    return true;
}

static bool int_fits(int64_t v, uint32_t bits) {
    if (bits >= 64) return true;
    if (bits == 1) return v == 0 || v == 1 || v == -1;
    int64_t lo = -((int64_t)1 << (bits - 1)), hi = ((int64_t)1 << bits) - 1; /* signed or unsigned */
    return v >= lo && v <= hi;
}

static bool rule_const(ck *c) {
    rk_type t = out_t(c, 0);
    if (!matches(c, t, c->info->sig)) return FAIL(c, "constant type must be an int or float scalar, got %s", tn(c, t));
    if (!attr_names_type(c, ir_key_ity, t)) return false;
    const rk_attr_val *v = ir_attr_find(&c->op->attrs, ir_key_value);
    if (rk_scalar_is_int(rk_type_scalar(t))) {
        if (v->kind != RK_AK_INT) return FAIL(c, "an integer constant of type %s needs an integer value", tn(c, t));
        if (!int_fits(v->u.i, ir_tbits(c->k, t)))
            return FAIL(c, "value %lld does not fit in %s", (long long)v->u.i, tn(c, t));
    }
    return true;
}

static bool rule_const_vec(ck *c) {
    rk_type t = out_t(c, 0);
    if (!matches(c, t, c->info->sig)) return FAIL(c, "result must be a vector of numbers, got %s", tn(c, t));
    if (!attr_names_type(c, ir_key_elem, elem(c, t))) return false;
    int64_t n;
    if (attr_int(c, ir_key_vec, &n) && (uint64_t)n != count(c, t))
        return FAIL(c, "attribute vec = %lld but the result has %u lanes", (long long)n, count(c, t));
    return true;
}

static bool rule_resize(ck *c, bool widen) {
    rk_type a = in_t(c, 0), r = out_t(c, 0);
    const char *sig = c->info->sig;
    if (!matches(c, a, sig) || !matches(c, r, sig))
        return FAIL(c, "operand and result must be %s (got %s -> %s)", sig, tn(c, a), tn(c, r));
    if (count(c, a) != count(c, r)) return FAIL(c, "lane counts differ (%s -> %s)", tn(c, a), tn(c, r));
    rk_type ea = is_vec(c, a) ? elem(c, a) : a, er = is_vec(c, r) ? elem(c, r) : r;
    uint32_t ba = ir_tbits(c->k, ea), br = ir_tbits(c->k, er);
    if (widen ? br <= ba : br >= ba)
        return FAIL(c, "%s -> %s must %s", tn(c, a), tn(c, r), widen ? "widen" : "narrow");
    if (rk_scalar_is_float(rk_type_scalar(ea)) && rk_scalar_is_float(rk_type_scalar(er)) && ba == br)
        return FAIL(c, "%s -> %s changes format but not width: use a bitcast or a cast op", tn(c, a), tn(c, r));
    return attr_names_type(c, ir_key_target, r);
}

static bool rule_bitcast(ck *c) {
    rk_type a = in_t(c, 0), r = out_t(c, 0);
    const char *sig = c->info->sig;
    if (!matches(c, a, sig) || !matches(c, r, sig))
        return FAIL(c, "operand and result must be %s (got %s -> %s)", sig, tn(c, a), tn(c, r));
    rk_type_kind ka = kind(c, a), kr = kind(c, r);
    if ((ka != RK_TK_SCALAR && ka != RK_TK_VEC) || (kr != RK_TK_SCALAR && kr != RK_TK_VEC))
        return FAIL(c, "only scalars and vectors can be bitcast (%s -> %s)", tn(c, a), tn(c, r));
    if (ir_tbits(c->k, a) != ir_tbits(c->k, r))
        return FAIL(c, "bitcast changes size: %s is %u bits, %s is %u bits", tn(c, a), ir_tbits(c->k, a),
                    tn(c, r), ir_tbits(c->k, r));
    return attr_names_type(c, ir_key_target, r);
}

static bool rule_vreduce(ck *c) {
    rk_type v = in_t(c, 0);
    if (!is_vec(c, v) || !matches(c, elem(c, v), c->info->sig))
        return FAIL(c, "operand must be a vector of %s, got %s", c->info->sig, tn(c, v));
    if (!rk_type_eq(out_t(c, 0), elem(c, v)))
        return FAIL(c, "result must be %s, got %s", tn(c, elem(c, v)), tn(c, out_t(c, 0)));
    return true;
}

static bool rule_vcmp(ck *c) {
    rk_type a = in_t(c, 0), r = out_t(c, 0);
    if (!is_vec(c, a) || !matches(c, elem(c, a), c->info->sig))
        return FAIL(c, "operands must be vectors of %s, got %s", c->info->sig, tn(c, a));
    if (!rk_type_eq(in_t(c, 1), a)) return FAIL(c, "operands differ (%s, %s)", tn(c, a), tn(c, in_t(c, 1)));
    if (!is_vec(c, r) || !rk_type_eq(elem(c, r), RK_T_I1) || count(c, r) != count(c, a))
        return FAIL(c, "result must be vec<i1x%u>, got %s", count(c, a), tn(c, r));
    return true;
}

static bool rule_vselect(ck *c) {
    rk_type m = in_t(c, 0), a = in_t(c, 1);
    if (!is_vec(c, a)) return FAIL(c, "choices must be vectors, got %s", tn(c, a));
    if (!is_vec(c, m) || !rk_type_eq(elem(c, m), RK_T_I1) || count(c, m) != count(c, a))
        return FAIL(c, "mask must be vec<i1x%u>, got %s", count(c, a), tn(c, m));
    if (!rk_type_eq(in_t(c, 2), a) || !rk_type_eq(out_t(c, 0), a))
        return FAIL(c, "choices and result must share one type");
    return true;
}

static bool rule_vextract(ck *c) {
    rk_type v = in_t(c, 0);
    int64_t idx = 0;
    if (!is_vec(c, v)) return FAIL(c, "operand must be a vector, got %s", tn(c, v));
    attr_int(c, ir_key_index, &idx);
    if ((uint64_t)idx >= count(c, v)) return FAIL(c, "index %lld out of range for %s", (long long)idx, tn(c, v));
    if (!rk_type_eq(out_t(c, 0), elem(c, v))) return FAIL(c, "result must be %s", tn(c, elem(c, v)));
    return true;
}

static bool rule_vinsert(ck *c) {
    rk_type v = in_t(c, 0);
    int64_t idx = 0;
    if (!is_vec(c, v)) return FAIL(c, "operand 0 must be a vector, got %s", tn(c, v));
    attr_int(c, ir_key_index, &idx);
    if ((uint64_t)idx >= count(c, v)) return FAIL(c, "index %lld out of range for %s", (long long)idx, tn(c, v));
    if (!rk_type_eq(in_t(c, 1), elem(c, v))) return FAIL(c, "inserted value must be %s", tn(c, elem(c, v)));
    if (!rk_type_eq(out_t(c, 0), v)) return FAIL(c, "result must be %s", tn(c, v));
    return true;
}

static bool rule_vsplat(ck *c) {
    rk_type s = in_t(c, 0), r = out_t(c, 0);
    int64_t n;
    if (kind(c, s) != RK_TK_SCALAR) return FAIL(c, "operand must be a scalar, got %s", tn(c, s));
    if (!is_vec(c, r) || !rk_type_eq(elem(c, r), s)) return FAIL(c, "result must be a vector of %s", tn(c, s));
    if (attr_int(c, ir_key_vec, &n) && (uint64_t)n != count(c, r))
        return FAIL(c, "attribute vec = %lld but the result has %u lanes", (long long)n, count(c, r));
    return true;
}

static bool rule_vpack(ck *c) {
    rk_type s = in_t(c, 0), r = out_t(c, 0);
    if (kind(c, s) != RK_TK_SCALAR) return FAIL(c, "operands must be scalars, got %s", tn(c, s));
    for (uint32_t i = 1; i < c->op->nin; i++)
        if (!rk_type_eq(in_t(c, i), s)) return FAIL(c, "operand %u has type %s, expected %s", i, tn(c, in_t(c, i)), tn(c, s));
    if (!is_vec(c, r) || !rk_type_eq(elem(c, r), s) || count(c, r) != c->op->nin)
        return FAIL(c, "result must be vec<%sx%u>, got %s", tn(c, s), c->op->nin, tn(c, r));
    return attr_names_type(c, ir_key_elem, s);
}

static bool rule_vconcat(ck *c) {
    rk_type a = in_t(c, 0), b = in_t(c, 1), r = out_t(c, 0);
    if (!is_vec(c, a) || !is_vec(c, b) || !rk_type_eq(elem(c, a), elem(c, b)))
        return FAIL(c, "operands must be vectors of one element type (%s, %s)", tn(c, a), tn(c, b));
    if (!is_vec(c, r) || !rk_type_eq(elem(c, r), elem(c, a)) || count(c, r) != count(c, a) + count(c, b))
        return FAIL(c, "result must be vec<%sx%u>", tn(c, elem(c, a)), count(c, a) + count(c, b));
    return true;
}

static bool rule_vshuffle(ck *c) {
    rk_type a = in_t(c, 0), r = out_t(c, 0);
    const rk_attr_val *m = ir_attr_find(&c->op->attrs, ir_key_mask);
    if (!is_vec(c, a) || !rk_type_eq(in_t(c, 1), a)) return FAIL(c, "operands must be two vectors of one type");
    if (!is_vec(c, r) || !rk_type_eq(elem(c, r), elem(c, a)) || count(c, r) != m->n)
        return FAIL(c, "result must be vec<%sx%u> (one lane per mask entry)", tn(c, elem(c, a)), m->n);
    for (uint32_t i = 0; i < m->n; i++)
        if (m->u.list[i].kind != RK_AK_INT || m->u.list[i].u.i < -1 || m->u.list[i].u.i >= 2 * (int64_t)count(c, a))
            return FAIL(c, "mask entry %u must be an integer in [-1, %u)", i, 2 * count(c, a));
    return true;
}

/* Pointer operand: pointee, and legal spaces for global memory ops. */
static bool global_ptr(ck *c, uint32_t i, rk_type *pointee) {
    rk_type p = in_t(c, i);
    if (kind(c, p) != RK_TK_PTR) return FAIL(c, "operand %u must be a pointer, got %s", i, tn(c, p));
    rk_addrspace as = rk_type_space(c->k, p);
    if (as == RK_AS_LDS || as == RK_AS_PRIVATE)
        return FAIL(c, "operand %u is an %s pointer; this op accesses global memory", i, rk_addrspace_name(as));
    *pointee = elem(c, p);
    return true;
}

/* The accessed value type `v` against the pointee/element type `e` and sig:
 * "vec" = vec<e x vec-attr>, otherwise v == e and v matches sig. */
static bool access_type(ck *c, rk_type v, rk_type e, const char *what) {
    const char *sig = c->info->sig;
    if (c->spec->sig_vec) {
        int64_t n;
        if (!is_vec(c, v) || !rk_type_eq(elem(c, v), e))
            return FAIL(c, "%s must be a vector of %s, got %s", what, tn(c, e), tn(c, v));
        if (attr_int(c, ir_key_vec, &n) && (uint64_t)n != count(c, v))
            return FAIL(c, "attribute vec = %lld but %s has %u lanes", (long long)n, what, count(c, v));
        return attr_names_type(c, ir_key_elem_type, e);
    }
    if (!matches(c, v, sig)) return FAIL(c, "%s must be %s, got %s", what, sig, tn(c, v));
    rk_type ve = is_vec(c, v) && !is_vec(c, e) ? elem(c, v) : v;
    if (!rk_type_eq(ve, e)) return FAIL(c, "%s type %s does not match the element type %s", what, tn(c, v), tn(c, e));
    return attr_names_type(c, ir_key_elem_type, e);
}

static bool rule_gload(ck *c) {
    rk_type e;
    if (!global_ptr(c, 0, &e)) return false;
    if (!is_index(in_t(c, 1))) return FAIL(c, "index must be i32 or i64, got %s", tn(c, in_t(c, 1)));
    return access_type(c, out_t(c, 0), e, "result");
}

static bool rule_gstore(ck *c) {
    rk_type e;
    if (!global_ptr(c, 0, &e)) return false;
    if (!is_index(in_t(c, 1))) return FAIL(c, "index must be i32 or i64, got %s", tn(c, in_t(c, 1)));
    return access_type(c, in_t(c, 2), e, "stored value");
}

static bool rule_ptr_add(ck *c) {
    rk_type p = in_t(c, 0);
    if (kind(c, p) != RK_TK_PTR) return FAIL(c, "operand 0 must be a pointer, got %s", tn(c, p));
    if (!is_index(in_t(c, 1))) return FAIL(c, "byte offset must be i32 or i64, got %s", tn(c, in_t(c, 1)));
    if (!rk_type_eq(out_t(c, 0), p)) return FAIL(c, "result must be %s", tn(c, p));
    return true;
}

static bool rule_coop_store(ck *c) {
    rk_type e, a = in_t(c, 1), v = in_t(c, 2);
    if (!global_ptr(c, 0, &e)) return false;
    if (!is_vec(c, a) || !is_index(elem(c, a))) return FAIL(c, "addresses must be a vector of i32 or i64");
    if (!is_vec(c, v) || !rk_type_eq(elem(c, v), e) || count(c, v) != count(c, a))
        return FAIL(c, "values must be vec<%sx%u>", tn(c, e), count(c, a));
    return true;
}

/* smem operand 0 plus `rank` i32 indices starting at operand 1. */
static bool smem_indexed(ck *c, uint32_t nidx, rk_type *e) {
    rk_type s = in_t(c, 0);
    int64_t r;
    if (kind(c, s) != RK_TK_SMEM) return FAIL(c, "operand 0 must be an LDS allocation, got %s", tn(c, s));
    uint32_t rank = rk_type_rank(c->k, s);
    if (nidx != rank) return FAIL(c, "%s needs %u indices, got %u", tn(c, s), rank, nidx);
    if (attr_int(c, ir_key_rank, &r) && r != rank) return FAIL(c, "attribute rank = %lld but %s has rank %u", (long long)r, tn(c, s), rank);
    for (uint32_t i = 0; i < nidx; i++)
        if (!rk_type_eq(in_t(c, 1 + i), RK_T_I32)) return FAIL(c, "index %u must be i32, got %s", i, tn(c, in_t(c, 1 + i)));
    *e = elem(c, s);
    return true;
}

static bool rule_smem_load(ck *c) {
    rk_type e, r = out_t(c, 0);
    if (!smem_indexed(c, c->op->nin - 1u, &e)) return false;
    if (c->op->code == RK_OP_LDMATRIX) {
        int64_t num = 0;
        attr_int(c, ir_key_num, &num);
        int64_t trans = 0;
        attr_int(c, "trans", &trans);
        /* rows of 16 bytes: 8 16-bit or (without .trans, which moves 16-bit halves) 16 8-bit elements */
        uint32_t bits = ir_tbits(c->k, e);
        if (bits != 16 && (bits != 8 || trans))
            return FAIL(c, "ldmatrix reads 16-bit elements (8-bit ones without .trans), not %s%s", tn(c, e),
                        trans ? " with .trans" : "");
        if (!is_vec(c, r) || !rk_type_eq(elem(c, r), RK_T_I32) || count(c, r) != (uint64_t)num)
            return FAIL(c, "result must be vec<i32x%lld>", (long long)num);
        return true;
    }
    if (c->op->code == RK_OP_DS_READ_TR_B8) {
        if (!matches(c, r, c->info->sig) || !rk_type_eq(elem(c, r), e))
            return FAIL(c, "result must be vec<%sx8>", tn(c, e));
        return attr_names_type(c, ir_key_dtype, e);
    }
    return access_type(c, r, e, "result");
}

static bool rule_smem_store(ck *c) {
    rk_type e;
    if (!smem_indexed(c, c->op->nin - 2u, &e)) return false;
    return access_type(c, in_t(c, c->op->nin - 1u), e, "stored value");
}

static bool rule_smem_store_dist(ck *c) {
    rk_type s = in_t(c, 0), v = in_t(c, 1);
    if (kind(c, s) != RK_TK_SMEM) return FAIL(c, "operand 0 must be an LDS allocation");
    if (!is_vec(c, v) || !rk_type_eq(elem(c, v), elem(c, s))) return FAIL(c, "value must be a vector of %s", tn(c, elem(c, s)));
    return true;
}

static bool rule_lds_atomic(ck *c) {
    rk_type e, v = in_t(c, c->op->nin - 1u);
    if (!smem_indexed(c, c->op->nin - 2u, &e)) return false;
    if (!matches(c, v, c->info->sig) || !rk_type_eq(v, e) || !rk_type_eq(out_t(c, 0), v))
        return FAIL(c, "value and result must be the element type %s (i32 or f32)", tn(c, e));
    return attr_names_type(c, ir_key_elem_type, e);
}

static bool rule_bload(ck *c) {
    if (kind(c, in_t(c, 0)) != RK_TK_RSRC) return FAIL(c, "operand 0 must be a buffer resource, got %s", tn(c, in_t(c, 0)));
    if (!rk_type_eq(in_t(c, 1), RK_T_I32) || !rk_type_eq(in_t(c, 2), RK_T_I32))
        return FAIL(c, "byte offsets (voffset, soffset) must be i32");
    rk_type r = out_t(c, 0);
    if (!matches(c, r, c->spec->sig_vec ? "vec<num|f8 x*>" : c->info->sig))
        return FAIL(c, "result must be %s, got %s", c->info->sig, tn(c, r));
    int64_t dw;
    if (attr_int(c, ir_key_dwords, &dw) && (int64_t)ir_tbits(c->k, r) != 32 * dw)
        return FAIL(c, "dwords = %lld loads %lld bits but %s has %u", (long long)dw, (long long)(32 * dw),
                    tn(c, r), ir_tbits(c->k, r));
    uint32_t b = ir_tbits(c->k, r);
    if (b != 8 && b != 16 && b != 32 && b != 64 && b != 96 && b != 128)
        return FAIL(c, "buffer accesses move 1, 2, 4, 8, 12 or 16 bytes; %s is %u bits", tn(c, r), b);
    return attr_names_type(c, ir_key_elem_type, is_vec(c, r) ? elem(c, r) : r);
}

static bool rule_bstore(ck *c) {
    if (kind(c, in_t(c, 0)) != RK_TK_RSRC) return FAIL(c, "operand 0 must be a buffer resource, got %s", tn(c, in_t(c, 0)));
    if (!rk_type_eq(in_t(c, 1), RK_T_I32) || !rk_type_eq(in_t(c, 2), RK_T_I32))
        return FAIL(c, "byte offsets (voffset, soffset) must be i32");
    rk_type v = in_t(c, 3);
    if (!matches(c, v, c->spec->sig_vec ? "vec<num|f8 x*>" : c->info->sig))
        return FAIL(c, "stored value must be %s, got %s", c->info->sig, tn(c, v));
    int64_t dw;
    if (attr_int(c, ir_key_dwords, &dw) && (int64_t)ir_tbits(c->k, v) != 32 * dw)
        return FAIL(c, "dwords = %lld stores %lld bits but %s has %u", (long long)dw, (long long)(32 * dw),
                    tn(c, v), ir_tbits(c->k, v));
    uint32_t b = ir_tbits(c->k, v);
    if (b != 8 && b != 16 && b != 32 && b != 64 && b != 96 && b != 128)
        return FAIL(c, "buffer accesses move 1, 2, 4, 8, 12 or 16 bytes; %s is %u bits", tn(c, v), b);
    return attr_names_type(c, ir_key_elem_type, is_vec(c, v) ? elem(c, v) : v);
}

static bool rule_async_lds(ck *c) {
    if (kind(c, in_t(c, 0)) != RK_TK_RSRC) return FAIL(c, "operand 0 must be a buffer resource");
    rk_type l = in_t(c, 1);
    if (c->op->code == RK_OP_ASYNC_BUFFER_LOAD_LDS_ADDR ? !rk_type_eq(l, RK_T_I64)
                                                       : !(kind(c, l) == RK_TK_SMEM || rk_type_eq(l, RK_T_I64)))
        return FAIL(c, "operand 1 (LDS destination) must be %s, got %s",
                    c->op->code == RK_OP_ASYNC_BUFFER_LOAD_LDS_ADDR ? "an i64 LDS address" : "an LDS allocation or i64 address",
                    tn(c, l));
    if (!rk_type_eq(in_t(c, 2), RK_T_I32) || !rk_type_eq(in_t(c, 3), RK_T_I32))
        return FAIL(c, "byte offsets (voffset, soffset) must be i32");
    return true;
}

static bool rule_async_copy(ck *c) {
    rk_type e;
    if (!global_ptr(c, 0, &e)) return false;
    if (!is_index(in_t(c, 1))) return FAIL(c, "source index must be i32 or i64");
    rk_type s = in_t(c, 2);
    if (kind(c, s) != RK_TK_SMEM) return FAIL(c, "operand 2 must be an LDS allocation, got %s", tn(c, s));
    if (!rk_type_eq(elem(c, s), e)) return FAIL(c, "source %s and destination %s element types differ", tn(c, e), tn(c, elem(c, s)));
    if (!rk_type_eq(in_t(c, 3), RK_T_I32)) return FAIL(c, "destination index must be i32");
    if (!rk_type_eq(in_t(c, 4), RK_T_I1)) return FAIL(c, "valid flag must be i1");
    int64_t bytes = 0;
    attr_int(c, ir_key_bytes, &bytes);
    uint32_t eb = ir_tbits(c->k, e) / 8;
    if (!eb || bytes % eb) return FAIL(c, "bytes = %lld is not a whole number of %s elements", (long long)bytes, tn(c, e));
    return true;
}

static bool rule_gatomic(ck *c) {
    rk_type e;
    if (!global_ptr(c, 0, &e)) return false;
    if (!is_index(in_t(c, 1))) return FAIL(c, "index must be i32 or i64, got %s", tn(c, in_t(c, 1)));
    rk_type v = in_t(c, 2);
    if (!matches(c, v, c->info->sig)) return FAIL(c, "value must be %s, got %s", c->info->sig, tn(c, v));
    for (uint32_t i = 3; i < c->op->nin; i++)
        if (!rk_type_eq(in_t(c, i), v)) return FAIL(c, "operand %u must be %s", i, tn(c, v));
    bool packed = is_vec(c, v) && count(c, v) == 2 && rk_type_eq(elem(c, v), e);
    if (!rk_type_eq(v, e) && !packed) return FAIL(c, "value type %s does not match the pointee %s", tn(c, v), tn(c, e));
    /* memref.global_wait has no result */
    if (c->op->nout && !rk_type_eq(out_t(c, 0), v)) return FAIL(c, "result (the old value) must be %s", tn(c, v));
    const char *kind_s = attr_str(c, ir_key_kind);
    if (kind_s) {
        bool is_f = rk_scalar_is_float(rk_type_scalar(v));
        bool float_kind = strcmp(kind_s, "fadd") == 0;
        bool any_kind = strcmp(kind_s, "xchg") == 0;
        if (!any_kind && float_kind != is_f)
            return FAIL(c, "atomic kind '%s' does not apply to %s", kind_s, tn(c, v));
    }
    return attr_names_type(c, ir_key_elem_type, v);
}

static bool rule_mma(ck *c) {
    if (!rk_type_eq(out_t(c, 0), in_t(c, 2)))
        return FAIL(c, "result type %s must equal the accumulator (operand 2) type %s", tn(c, out_t(c, 0)), tn(c, in_t(c, 2)));
    for (uint32_t i = 0; i < 3; i++)
        if (!is_vec(c, in_t(c, i)) && kind(c, in_t(c, i)) != RK_TK_SCALAR)
            return FAIL(c, "operand %u must be a scalar or vector fragment", i);
    return true;
}

static bool rule_for(ck *c) {
    rk_type t = in_t(c, 0);
    if (!is_index(t)) return FAIL(c, "bounds must be i32 or i64, got %s", tn(c, t));
    if (!rk_type_eq(in_t(c, 1), t) || !rk_type_eq(in_t(c, 2), t))
        return FAIL(c, "lower bound, upper bound and step must share one type");
    uint32_t n = c->op->nin - 3u;
    if (c->op->nout != n) return FAIL(c, "%u loop-carried values but %u results", n, c->op->nout);
    for (uint32_t i = 0; i < n; i++) {
        rk_type it = in_t(c, 3 + i);
        rk_type_kind ik = kind(c, it);
        if (ik != RK_TK_SCALAR && !(ik == RK_TK_VEC))
            return FAIL(c, "loop-carried value %u has type %s; carries are scalars or vectors", i, tn(c, it));
        if (!rk_type_eq(out_t(c, i), it)) return FAIL(c, "result %u type %s differs from its initial value %s", i, tn(c, out_t(c, i)), tn(c, it));
    }
    int64_t na;
    if (attr_int(c, ir_key_num_iter_args, &na) && na != n)
        return FAIL(c, "num_iter_args = %lld but the loop carries %u values", (long long)na, n);
    return attr_names_type(c, ir_key_iv_type, t);
}

static bool rule_if(ck *c) {
    if (!rk_type_eq(in_t(c, 0), RK_T_I1)) return FAIL(c, "condition must be i1, got %s", tn(c, in_t(c, 0)));
    return true;
}

static bool rule_yield(ck *c) {
    int64_t num = -1;
    attr_int(c, ir_key_num, &num);
    if (num != c->op->nin) return FAIL(c, "attribute num = %lld but %u values are yielded", (long long)num, c->op->nin);
    const rk_op *owner = c->op->parent ? c->op->parent->owner : NULL;
    if (!owner || (owner->code != RK_OP_FOR && owner->code != RK_OP_IF_ELSE))
        return FAIL(c, "scf.yield belongs directly inside an scf.for body or an scf.if_else region");
    if (owner->nout != c->op->nin)
        return FAIL(c, "yields %u values but the enclosing %s has %u results", c->op->nin,
                    rk_opcode_name(owner->code), owner->nout);
    for (uint32_t i = 0; i < c->op->nin; i++)
        if (!rk_type_eq(in_t(c, i), ir_vtype(c->k, owner->out[i])))
            return FAIL(c, "yielded value %u has type %s, the %s result is %s", i, tn(c, in_t(c, i)),
                        rk_opcode_name(owner->code), tn(c, ir_vtype(c->k, owner->out[i])));
    return true;
}

/* ---- extra per-op checks (beyond the rule and the attribute spec) ----------------------- */
static bool check_mov_dpp(ck *c) {
    bool shr = ir_attr_find(&c->op->attrs, ir_key_row_shr) != NULL, shl = ir_attr_find(&c->op->attrs, ir_key_row_shl) != NULL;
    if (shr == shl) return FAIL(c, "needs exactly one of row_shr or row_shl (1, 2, 4, 8 or 15)");
    return true;
}

static bool check_buffer_dwords3(ck *c) {
    int64_t dw = 0;
    attr_int(c, ir_key_dwords, &dw);
    rk_type v = c->op->nout ? out_t(c, 0) : in_t(c, 3);
    if (dw == 3 && ir_tbits(c->k, is_vec(c, v) ? elem(c, v) : v) != 32)
        return FAIL(c, "dwords = 3 needs 32-bit elements, got %s", tn(c, v));
    return true;
}

/* Hopper ops (the sig says smem/i64/vec; these say which) */
static bool mbarrier_operand(ck *c, uint32_t i) {
    rk_type s = in_t(c, i);
    if (!rk_type_eq(elem(c, s), RK_T_I64) || rk_type_rank(c->k, s) != 1)
        return FAIL(c, "operand %u must be an smem<i64, [n]> of mbarriers, got %s", i, tn(c, s));
    return true;
}
static bool check_mbarrier(ck *c) { return mbarrier_operand(c, 0); }

static bool check_wgmma(ck *c) {
    int64_t n = 0;
    attr_int(c, ir_key_n, &n);
    if (n % 8) return FAIL(c, "n = %lld is not a multiple of 8 (wgmma shapes are m64nNk16, N = 8..256)", (long long)n);
    if (count(c, in_t(c, 0)) != (uint32_t)n / 2)
        return FAIL(c, "n = %lld needs vec<f32x%lld> accumulators (n/2 per thread), got %s", (long long)n,
                    (long long)n / 2, tn(c, in_t(c, 0)));
    /* fp8 wgmma (m64nNk32) has no transpose immediates: both operands are read K-major */
    const char *dt = attr_str(c, ir_key_dtype);
    bool f8 = dt && (!strcmp(dt, "e4m3") || !strcmp(dt, "e5m2"));
    int64_t ta = 0, tb = 0;
    attr_int(c, "trans_a", &ta);
    attr_int(c, "trans_b", &tb);
    if (f8 && (ta || tb))
        return FAIL(c, "dtype = %s reads A and B K-major only (wgmma has no transpose for 8-bit types): trans_a and "
                    "trans_b must be false (legal with transposes: f16, bf16)", dt);
    return true;
}

/* tile.wgmma_rs: the A fragment holds 8 values of dtype (4 x b32) */
static bool check_wgmma_rs(ck *c) {
    if (!check_wgmma(c)) return false;
    const char *dt = attr_str(c, ir_key_dtype);
    rk_type want = dt && !strcmp(dt, "bf16") ? RK_T_BF16 : RK_T_F16;
    if (!rk_type_eq(elem(c, in_t(c, 1)), want))
        return FAIL(c, "dtype = %s needs a vec<%s x 8> A fragment, got %s", dt ? dt : "f16", dt ? dt : "f16",
                    tn(c, in_t(c, 1)));
    if (!rk_type_eq(out_t(c, 0), in_t(c, 0)))
        return FAIL(c, "result has type %s but the accumulators are %s", tn(c, out_t(c, 0)), tn(c, in_t(c, 0)));
    return true;
}

static bool check_wgmma_desc(ck *c) {
    int64_t lbo = 0, sbo = 0;
    attr_int(c, ir_key_lbo, &lbo);
    attr_int(c, ir_key_sbo, &sbo);
    if (lbo % 16 || sbo % 16) return FAIL(c, "lbo = %lld and sbo = %lld must be multiples of 16 bytes", (long long)lbo, (long long)sbo);
    return true;
}

static bool check_wgmma_wait(ck *c) {
    if (c->op->nin != c->op->nout)
        return FAIL(c, "passes accumulators through: %u operands but %u results", c->op->nin, c->op->nout);
    for (uint32_t i = 0; i < c->op->nin; i++) {
        rk_type t = in_t(c, i);
        if (!rk_type_eq(out_t(c, i), t)) return FAIL(c, "result %u has type %s but operand %u is %s", i, tn(c, out_t(c, i)), i, tn(c, t));
        if (!matches(c, t, "f32|vec<f32 x*>")) return FAIL(c, "operand %u must be f32 accumulators, got %s", i, tn(c, t));
    }
    return true;
}

static bool check_setmaxnreg(ck *c) {
    int64_t regs = 0;
    attr_int(c, ir_key_regs, &regs);
    if (regs % 8) return FAIL(c, "regs = %lld is not a multiple of 8 (setmaxnreg takes 24, 32, ..., 256)", (long long)regs);
    return true;
}

static bool tensormap_operand(ck *c) {
    rk_value m = c->op->in[0];
    bool ok = false;
    if (rk_value_kind_of(c->k, m) == RK_VK_PARAM)
        for (uint32_t i = 0; i < rk_kernel_nparams(c->k); i++) {
            const rk_param *p = rk_kernel_param(c->k, i);
            if (rk_value_eq(p->value, m)) ok = rk_attrs_bool(&p->attrs, "tensormap", false);
        }
    if (!ok) return FAIL(c, "operand 0 must be a kernel parameter marked tensormap (a CUtensorMap passed by value)");
    return true;
}
static bool check_tma_load(ck *c) { return tensormap_operand(c) && mbarrier_operand(c, 3); }

typedef bool (*extra_fn)(ck *c);
static const extra_fn extra_checks[RK_OP__COUNT] = {
    [RK_OP_MOV_DPP] = check_mov_dpp,
    [RK_OP_BUFFER_LOAD_VN] = check_buffer_dwords3,
    [RK_OP_BUFFER_STORE_VN] = check_buffer_dwords3,
    [RK_OP_WGMMA] = check_wgmma,
    [RK_OP_WGMMA_RS] = check_wgmma_rs,
    [RK_OP_WGMMA_DESC] = check_wgmma_desc,
    [RK_OP_WGMMA_WAIT_GROUP] = check_wgmma_wait,
    [RK_OP_MBARRIER_INIT] = check_mbarrier,
    [RK_OP_MBARRIER_ARRIVE] = check_mbarrier,
    [RK_OP_MBARRIER_ARRIVE_EXPECT_TX] = check_mbarrier,
    [RK_OP_MBARRIER_WAIT] = check_mbarrier,
    [RK_OP_TMA_LOAD_2D] = check_tma_load,
    [RK_OP_SETMAXNREG] = check_setmaxnreg,
    [RK_OP_TMA_STORE_2D] = tensormap_operand,
    [RK_OP_TMA_LOAD_2D_MULTICAST] = check_tma_load,
    [RK_OP_TMA_LOAD_4D] = check_tma_load,
    [RK_OP_MBARRIER_ARRIVE_CLUSTER] = check_mbarrier,
};

/* ---- entry ------------------------------------------------------------------------------- */
bool ir_check_op(const rk_kernel *k, const rk_op *op, char *msg, size_t n) {
    ck c = {k, op, &ir_op_table[(unsigned)op->code < RK_OP__COUNT ? op->code : RK_OP_INVALID], ir_op_spec_of(op->code),
            msg, n};
    msg[0] = '\0';
    if (op->code == RK_OP_INVALID || (unsigned)op->code >= RK_OP__COUNT) return FAIL(&c, "unknown op");
    if (!check_count(&c, "operands", op->nin, c.info->nin)) return false;
    if (!check_count(&c, "results", op->nout, c.info->nout)) return false;
    if (op->nreg != c.info->nreg) return FAIL(&c, "has %u regions, expected %u", op->nreg, c.info->nreg);
    for (uint32_t i = 0; i < op->nin; i++)
        if (!rk_type_ok(ir_vtype(k, op->in[i]))) return FAIL(&c, "operand %u is not a defined value", i);
    for (uint32_t i = 0; i < op->nout; i++)
        if (!rk_type_ok(ir_vtype(k, op->out[i]))) return FAIL(&c, "result %u has no type", i);
    if (!check_attrs(&c)) return false;
    bool ok = false;
    switch (c.info->rule) {
    case RK_R_SAME: ok = rule_same(&c); break;
    case RK_R_SIG: ok = rule_sig(&c); break;
    case RK_R_CMP: ok = rule_cmp(&c); break;
    case RK_R_SELECT: ok = rule_select(&c); break;
    case RK_R_CONST: ok = rule_const(&c); break;
    case RK_R_CONST_VEC: ok = rule_const_vec(&c); break;
    case RK_R_WIDEN: ok = rule_resize(&c, true); break;
    case RK_R_NARROW: ok = rule_resize(&c, false); break;
    case RK_R_BITCAST: ok = rule_bitcast(&c); break;
    case RK_R_VREDUCE: ok = rule_vreduce(&c); break;
    case RK_R_VCMP: ok = rule_vcmp(&c); break;
    case RK_R_VSELECT: ok = rule_vselect(&c); break;
    case RK_R_VEXTRACT: ok = rule_vextract(&c); break;
    case RK_R_VINSERT: ok = rule_vinsert(&c); break;
    case RK_R_VSPLAT: ok = rule_vsplat(&c); break;
    case RK_R_VPACK: ok = rule_vpack(&c); break;
    case RK_R_VCONCAT: ok = rule_vconcat(&c); break;
    case RK_R_VSHUFFLE: ok = rule_vshuffle(&c); break;
    case RK_R_GLOAD: ok = rule_gload(&c); break;
    case RK_R_GSTORE: ok = rule_gstore(&c); break;
    case RK_R_PTR_ADD: ok = rule_ptr_add(&c); break;
    case RK_R_COOP_STORE: ok = rule_coop_store(&c); break;
    case RK_R_SMEM_ALLOC:
        ok = kind(&c, out_t(&c, 0)) == RK_TK_SMEM || FAIL(&c, "result must be an smem<...> type");
        break;
    case RK_R_SMEM_LOAD: ok = rule_smem_load(&c); break;
    case RK_R_SMEM_STORE: ok = rule_smem_store(&c); break;
    case RK_R_SMEM_STORE_DIST: ok = rule_smem_store_dist(&c); break;
    case RK_R_LDS_ATOMIC: ok = rule_lds_atomic(&c); break;
    case RK_R_BLOAD: ok = rule_bload(&c); break;
    case RK_R_BSTORE: ok = rule_bstore(&c); break;
    case RK_R_ASYNC_LDS: ok = rule_async_lds(&c); break;
    case RK_R_ASYNC_COPY: ok = rule_async_copy(&c); break;
    case RK_R_GATOMIC: ok = rule_gatomic(&c); break;
    case RK_R_MMA: ok = rule_mma(&c); break;
    case RK_R_ASM: ok = true; break;
    case RK_R_FOR: ok = rule_for(&c); break;
    case RK_R_IF: ok = rule_if(&c); break;
    case RK_R_YIELD: ok = rule_yield(&c); break;
    case RK_RULE__COUNT: rk_bug("rule count used as a rule");
    }
    if (ok && extra_checks[op->code]) ok = extra_checks[op->code](&c);
    return ok;
}
