/* rocke — the builder core: emission into the open region with a sticky
 * error, attribute setters, what the typed builders share, and structured
 * control flow (for with carries, if, if/else with results). Every op is
 * checked against the op table as it is made. Layer: ir. */
#include <stdio.h>

#include "ir_int.h"

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

/* The builders set attributes by the shared ir_key_* strings, stored as
 * they are (the checks then match them by pointer). */
static void lit_int(rk_kernel *k, rk_op *op, const char *key, int64_t x) { set_int(put_key(k, op, key, true), x); }
static void lit_bool(rk_kernel *k, rk_op *op, const char *key, bool x) { set_bool(put_key(k, op, key, true), x); }
static void lit_type(rk_kernel *k, rk_op *op, const char *key, rk_type t) { set_type(k, put_key(k, op, key, true), t); }

static rk_type vtype(rk_kernel *k, rk_value v) { return ir_vtype(k, v); }

/* ---- what the typed builders share (build_gen.c, build_hand.c) ------------------------ */
void ir_arg_int(rk_kernel *k, rk_op *op, const char *key, int64_t x) { set_int(put(k, op, key), x); }
void ir_arg_num(rk_kernel *k, rk_op *op, const char *key, double x) { set_float(put(k, op, key), x); }
void ir_arg_bool(rk_kernel *k, rk_op *op, const char *key, bool x) { set_bool(put(k, op, key), x); }

/* " (one of: lt, le, ...)" for an enumerated attribute (the checks' wording). */
static void legal_values(const rk_op *op, const char *key, char *out, size_t n) {
    const ir_op_spec *sp = ir_op_spec_of(op->code);
    size_t j = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < sp->nattrs; i++) {
        if (!ir_key_eq(sp->attrs[i].key, key)) continue;
        for (uint32_t e = 0; e < sp->attrs[i].nenum && j + 1 < n; e++)
            j += (size_t)snprintf(out + j, n - j, "%s%s", e ? ", " : " (one of: ", sp->attrs[i].enums[e]);
        if (sp->attrs[i].nenum && j + 1 < n) snprintf(out + j, n - j, ")");
        break;
    }
}

void ir_arg_str(rk_kernel *k, rk_op *op, const char *key, const char *s) {
    if (!op || !ir_live(k)) return;
    if (!s) {
        char legal[256];
        legal_values(op, key, legal, sizeof legal);
        ir_fail(k, RK_ERR_INVALID, op, "attribute '%s' needs a string, got NULL%s", key, legal);
        return;
    }
    set_str(k, op, key, put(k, op, key), s);
}

void ir_arg_type(rk_kernel *k, rk_op *op, const char *key, rk_type t) {
    if (!op || !ir_live(k)) return;
    if (!rk_type_ok(t)) {
        ir_fail(k, RK_ERR_INVALID, op, "attribute '%s' needs a type, got none", key);
        return;
    }
    set_type(k, put(k, op, key), t);
}

rk_value ir_built(rk_kernel *k, rk_op *op) { return rk_op_check(k, op) ? rk_op_result(op) : (rk_value){0}; }
void ir_built_void(rk_kernel *k, rk_op *op) { rk_op_check(k, op); }
void ir_built_out(rk_kernel *k, rk_op *op, rk_value *out, uint32_t n) {
    bool ok = rk_op_check(k, op);
    for (uint32_t i = 0; i < n && out; i++) out[i] = ok ? op->out[i] : (rk_value){0};
}

rk_type ir_vec_of(rk_kernel *k, rk_opcode code, rk_type elem, int64_t n) {
    if (!ir_live(k) || !rk_type_ok(elem)) return RK_T_NONE;   /* the operand's own error comes first */
    if (n < 1 || n > 4096) {
        ir_fail(k, RK_ERR_INVALID, NULL, "%s: a vector of %lld lanes (legal: 1 to 4096)", rk_opcode_name(code), (long long)n);
        return RK_T_NONE;
    }
    return rk_type_vec(k, elem, (uint32_t)n);
}

rk_type ir_buffer_vec(rk_kernel *k, rk_opcode code, rk_type elem, int64_t dwords) {
    uint32_t bits = ir_tbits(k, elem);
    if (!ir_live(k) || !bits) return RK_T_NONE;
    if (dwords < 1 || dwords > 4 || (32 * dwords) % bits) {
        ir_fail(k, RK_ERR_INVALID, NULL, "%s: %lld dwords do not hold whole %s elements (dwords: 1 to 4)",
                rk_opcode_name(code), (long long)dwords, rk_type_name(k, elem));
        return RK_T_NONE;
    }
    return ir_vec_of(k, code, elem, 32 * dwords / bits);
}

uint32_t ir_smem_operands(rk_kernel *k, rk_opcode code, rk_value smem, const rk_value *idx, const rk_value *tail,
                          uint32_t ntail, rk_value *in) {
    if (!ir_live(k)) return 0;
    rk_type st = vtype(k, smem);
    if (ir_tkind(k, st) != RK_TK_SMEM) {
        ir_fail(k, RK_ERR_INVALID, NULL, "%s: operand 0 must be an LDS allocation (smem<...>), got %s",
                rk_opcode_name(code), rk_type_ok(st) ? rk_type_name(k, st) : "no value");
        return 0;
    }
    uint32_t rank = rk_type_rank(k, st);
    if (rank + 1 + ntail > IR_SMEM_OPERANDS || (rank && !idx)) {
        ir_fail(k, RK_ERR_INVALID, NULL, "%s: %u indices needed for %s%s", rk_opcode_name(code), rank,
                rk_type_name(k, st), idx ? " (at most 8 dimensions)" : ", got NULL");
        return 0;
    }
    in[0] = smem;
    for (uint32_t i = 0; i < rank; i++) in[1 + i] = idx[i];
    for (uint32_t i = 0; i < ntail; i++) in[1 + rank + i] = tail[i];
    return 1 + rank + ntail;
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

