/* rocke — the verifier. Does: runs every op through the table's local checks
 * (ir_check_op), then the context rules the builder enforces as it goes —
 * dominance and region scopes, one definition per value, unique SSA names,
 * scf.for region arguments against the loop's attributes, terminator
 * placement — warns about barriers under divergent control flow, and with a
 * target checks op features, matrix atoms and the fp8 dialect. Needs: nothing
 * (parsed or hand-made IR may be arbitrarily broken). Guarantees: every
 * problem found is reported, not just the first; RK_OK means the kernel is
 * well formed (and, with a target, legal on it). Layer: ir. */
#include <stdio.h>

#include "ir_int.h"

enum { ST_UNSEEN, ST_PENDING, ST_VISIBLE, ST_CLOSED };
enum { NO_IDX = UINT32_MAX };

typedef struct vctx {
    const rk_kernel *k;
    const rk_verify_target *tgt;
    rk_diags *out;
    bool oom;
    uint32_t nvals;            /* value ids are 1..nvals-1 */
    uint8_t *state;            /* ST_* per value id */
    uint32_t *def_at;          /* pre-order index of the first defining op (params: NO_IDX) */
    uint32_t *scope;           /* values defined in open regions, innermost last */
    uint32_t nscope;
    uint32_t *names;           /* open addressing by name: value ids, 0 = empty */
    uint32_t names_cap;
    uint32_t next_idx;         /* pre-order op counter of the main walk */
    /* where we are, for messages */
    const rk_op *owner;        /* op owning the current region, NULL = kernel body */
    const char *label;
    const rk_op *div_op;       /* innermost enclosing scf.if / scf.if_else */
    uint32_t div_idx;
} vctx;

/* ---- reporting ------------------------------------------------------------------- */
static void where_of(const vctx *c, const rk_op *op, uint32_t idx, char *buf, size_t n) {
    int off;
    if (!op) {
        snprintf(buf, n, "kernel '%s'", c->k->name);
        return;
    }
    if (c->owner)
        off = snprintf(buf, n, "op %u '%s' in %s %s", idx, rk_opcode_name(op->code), rk_opcode_name(c->owner->code),
                       c->label ? c->label : "region");
    else
        off = snprintf(buf, n, "op %u '%s' in kernel body", idx, rk_opcode_name(op->code));
    if (off < 0 || (size_t)off >= n) return;
    if (op->line) snprintf(buf + off, n - (size_t)off, " (line %u)", op->line);
    else if (op->loc) snprintf(buf + off, n - (size_t)off, " (at %s)", op->loc);
}

static void report(vctx *c, rk_severity sev, const rk_op *op, uint32_t idx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static void report(vctx *c, rk_severity sev, const rk_op *op, uint32_t idx, const char *fmt, ...) {
    if (c->oom) return;
    char where[256], msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    where_of(c, op, idx, where, sizeof where);
    if (!ir_diag_add(c->out, sev, op, where, msg)) c->oom = true;
}
#define ERR(c, op, idx, ...) report((c), RK_SEV_ERROR, (op), (idx), __VA_ARGS__)
#define WARN(c, op, idx, ...) report((c), RK_SEV_WARNING, (op), (idx), __VA_ARGS__)

static const char *vname(const vctx *c, rk_value v, char buf[RK_NAME_MAX]) { return rk_value_name(c->k, v, buf); }

/* "op 7 'arith.add'" for the producer of v, or "parameter 'x'". */
static void describe_def(const vctx *c, rk_value v, char *buf, size_t n) {
    const ir_valinfo *vi = ir_val(c->k, v);
    uint32_t at = vi ? c->def_at[v.id] : NO_IDX;
    if (vi && vi->kind == RK_VK_PARAM) snprintf(buf, n, "parameter '%s'", vi->hint);
    else if (vi && vi->def && at != NO_IDX && vi->kind == RK_VK_REGION_ARG)
        snprintf(buf, n, "a region argument of op %u '%s'", at, rk_opcode_name(vi->def->code));
    else if (vi && vi->def && at != NO_IDX) snprintf(buf, n, "op %u '%s'", at, rk_opcode_name(vi->def->code));
    else snprintf(buf, n, "a value outside the kernel");
}

/* ---- pre-pass: where each value is first defined (for "used before" messages) ---- */
static void note_def(vctx *c, rk_value v, uint32_t idx) {
    if (v.id && v.id < c->nvals && c->def_at[v.id] == NO_IDX) c->def_at[v.id] = idx;
}

static void prepass(vctx *c, const rk_region *r, uint32_t *idx) {
    for (uint32_t i = 0; i < r->nops; i++) {
        const rk_op *op = r->ops[i];
        uint32_t me = (*idx)++;
        if (!op || (unsigned)op->code >= RK_OP__COUNT) continue;
        for (uint32_t j = 0; j < op->nout; j++) note_def(c, op->out[j], me);
        for (uint32_t j = 0; j < op->nreg && op->regions; j++) {
            const rk_region *sub = &op->regions[j];
            for (uint32_t a = 0; a < sub->nargs && sub->args; a++) note_def(c, sub->args[a], me);
            prepass(c, sub, idx);
        }
    }
}

/* ---- names ------------------------------------------------------------------------ */
/* Add v's name; returns the id of an earlier value with the same name, or 0. */
static uint32_t name_insert(vctx *c, rk_value v) {
    char a[RK_NAME_MAX], b[RK_NAME_MAX];
    const char *na = vname(c, v, a);
    uint32_t h = (uint32_t)rk_hash_str(na) & (c->names_cap - 1);
    while (c->names[h]) {
        if (c->names[h] == v.id) return 0;
        if (strcmp(vname(c, (rk_value){c->names[h]}, b), na) == 0) return c->names[h];
        h = (h + 1) & (c->names_cap - 1);
    }
    c->names[h] = v.id;
    return 0;
}

/* Define v (a result, region argument or parameter) in the current scope.
 * `what` names it in messages ("result 0", "region argument 1"). */
static bool define(vctx *c, const rk_op *op, uint32_t idx, rk_value v, const char *what, uint8_t st) {
    const ir_valinfo *vi = ir_val(c->k, v);
    if (!vi) {
        ERR(c, op, idx, "%s is not a value (id %u)", what, v.id);
        return false;
    }
    char nb[RK_NAME_MAX], db[128];
    if (c->state[v.id] != ST_UNSEEN) {
        describe_def(c, v, db, sizeof db);
        ERR(c, op, idx, "%s %%%s is defined twice (first by %s); SSA values are defined once", what,
            vname(c, v, nb), db);
        return false;
    }
    c->state[v.id] = st;
    if (st == ST_VISIBLE) c->scope[c->nscope++] = v.id;
    uint32_t other = name_insert(c, v);
    if (other) {
        describe_def(c, (rk_value){other}, db, sizeof db);
        ERR(c, op, idx, "%s is named %%%s, a name already used by %s; SSA names become LLVM names and must be "
            "unique (rename the parameter or set another hint)", what, vname(c, v, nb), db);
    }
    return true;
}

/* ---- uses ----------------------------------------------------------------------------- */
static bool check_use(vctx *c, const rk_op *op, uint32_t idx, uint32_t j) {
    rk_value v = op->in[j];
    const ir_valinfo *vi = ir_val(c->k, v);
    if (!vi) {
        ERR(c, op, idx, "operand %u is not a value (id %u)", j, v.id);
        return false;
    }
    uint8_t st = c->state[v.id];
    if (st == ST_VISIBLE) return true;
    char nb[RK_NAME_MAX], db[128];
    const char *n = vname(c, v, nb);
    describe_def(c, v, db, sizeof db);
    if (vi->kind == RK_VK_REGION_ARG)
        ERR(c, op, idx, "operand %u (%%%s) is %s and is visible only inside that region", j, n, db);
    else if (vi->kind == RK_VK_PARAM)
        ERR(c, op, idx, "operand %u (%%%s) claims to be a parameter but is not one of this kernel's", j, n);
    else if (st == ST_PENDING)
        ERR(c, op, idx, "operand %u (%%%s) is a result of %s, which is not visible inside that op's own regions",
            j, n, db);
    else if (st == ST_CLOSED)
        ERR(c, op, idx, "operand %u (%%%s) was defined by %s inside a region that has ended; values do not "
            "escape regions (carry them out as scf.for results or scf.if_else yields)", j, n, db);
    else if (c->def_at[v.id] != NO_IDX)
        ERR(c, op, idx, "operand %u (%%%s) is used before its definition by %s", j, n, db);
    else
        ERR(c, op, idx, "operand %u (%%%s) is not defined anywhere in this kernel", j, n);
    return false;
}

/* ---- scf.for region arguments against the loop's operands and attributes ------------ */
static void check_for_args(vctx *c, const rk_op *op, uint32_t idx) {
    const rk_region *body = &op->regions[0];
    uint32_t n = op->nin >= 3 ? op->nin - 3u : 0;
    char nb[RK_NAME_MAX];
    if (body->nargs != 1 + n || (body->nargs && !body->args)) {
        ERR(c, op, idx, "the loop body has %u region arguments, expected %u (the induction variable and %u "
            "loop-carried values)", body->args ? body->nargs : 0, 1 + n, n);
        return;
    }
    for (uint32_t i = 0; i < body->nargs; i++) {
        const ir_valinfo *vi = ir_val(c->k, body->args[i]);
        if (vi && (vi->kind != RK_VK_REGION_ARG || vi->def != op || vi->index != i))
            ERR(c, op, idx, "region argument %u (%%%s) does not record this loop as its owner", i,
                vname(c, body->args[i], nb));
    }
    rk_type lo = op->nin ? rk_value_type(c->k, op->in[0]) : RK_T_NONE;
    rk_type ivt = rk_value_type(c->k, body->args[0]);
    if (rk_type_ok(lo) && !rk_type_eq(ivt, lo))
        ERR(c, op, idx, "the induction variable %%%s has type %s but the bounds are %s",
            vname(c, body->args[0], nb), rk_type_name(c->k, ivt), rk_type_name(c->k, lo));
    const char *iv = rk_attrs_str(&op->attrs, "iv");
    if (iv) {
        const char *name = vname(c, body->args[0], nb);
        if (iv[0] != '%' || strcmp(iv + 1, name) != 0)
            ERR(c, op, idx, "attribute iv = \"%s\" but the body's induction variable is %%%s", iv, name);
    }
    const rk_attr_val *it = rk_attrs_get(&op->attrs, "iter_args");
    if (!it) {
        if (n) ERR(c, op, idx, "the loop carries %u values but has no iter_args attribute naming them", n);
    } else if (it->kind == RK_AK_LIST && it->n != n) {
        ERR(c, op, idx, "iter_args lists %u entries but the loop carries %u values", it->n, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        rk_value a = body->args[1 + i];
        rk_type at = rk_value_type(c->k, a), init = rk_value_type(c->k, op->in[3 + i]);
        const char *name = vname(c, a, nb);
        if (rk_type_ok(init) && !rk_type_eq(at, init))
            ERR(c, op, idx, "loop-carried argument %u (%%%s) has type %s but its initial value is %s", i, name,
                rk_type_name(c->k, at), rk_type_name(c->k, init));
        rk_type_kind kd = rk_type_kind_of(c->k, at);
        if (kd != RK_TK_SCALAR && kd != RK_TK_VEC)
            ERR(c, op, idx, "loop-carried argument %u (%%%s) has type %s; carries are scalars or vectors", i, name,
                rk_type_name(c->k, at));
        if (!it || it->kind != RK_AK_LIST || i >= it->n) continue;
        const rk_attr_val *e = &it->u.list[i];
        if (e->kind != RK_AK_MAP) {
            ERR(c, op, idx, "iter_args[%u] must be a map {name, type}", i);
            continue;
        }
        rk_attrs m = {e->u.map, e->n, e->n};
        const char *en = rk_attrs_str(&m, "name"), *et = rk_attrs_str(&m, "type");
        if (!en || en[0] != '%' || strcmp(en + 1, name) != 0)
            ERR(c, op, idx, "iter_args[%u].name = \"%s\" but region argument %u is %%%s", i, en ? en : "", 1 + i,
                name);
        if (!et || strcmp(et, rk_type_name(c->k, at)) != 0)
            ERR(c, op, idx, "iter_args[%u].type = \"%s\" but region argument %u has type %s", i, et ? et : "",
                1 + i, rk_type_name(c->k, at));
    }
}

/* ---- target legality ------------------------------------------------------------------ */
/* Most specific first: naming the narrowest missing feature helps most. */
static const struct { uint32_t bit; const char *offered; } feature_offers[] = {
    {RK_FEAT_SM90A, "sm_90a"},
    {RK_FEAT_SM90, "sm_90 and sm_90a"},
    {RK_FEAT_SM80, "sm_80, sm_90 and sm_90a"},
    {RK_FEAT_GFX950, "gfx950"},
    {RK_FEAT_GFX940, "gfx942 and gfx950"},
    {RK_FEAT_GFX11P, "RDNA3+ targets (gfx11, gfx12)"},
    {RK_FEAT_GFX10P, "RDNA targets (gfx10, gfx11, gfx12)"},
    {RK_FEAT_GFX9, "CDNA targets (gfx90a, gfx942, gfx950)"},
    {RK_FEAT_AMD, "AMDGPU targets (gfx90a, gfx942, gfx950, RDNA)"},
    {RK_FEAT_NV, "NVIDIA targets (sm_80, sm_90, sm_90a)"},
};

static uint32_t most_specific(uint32_t bits) {
    for (size_t i = 0; i < RK_COUNTOF(feature_offers); i++)
        if (bits & feature_offers[i].bit) return feature_offers[i].bit;
    return bits & (~bits + 1u);        /* an unlisted bit: the lowest */
}

static const char *offered_by(uint32_t bit) {
    for (size_t i = 0; i < RK_COUNTOF(feature_offers); i++)
        if (feature_offers[i].bit == bit) return feature_offers[i].offered;
    return "targets with that feature (see `rocke targets`)";
}

static bool is_fp8(rk_scalar s) { return s == RK_S_FP8E4M3 || s == RK_S_FP8E4M3FNUZ; }
static bool is_bf8(rk_scalar s) { return s == RK_S_BF8E5M2 || s == RK_S_BF8E5M2FNUZ; }

static void check_f8_dialect(vctx *c, const rk_op *op, uint32_t idx, rk_type t, const char *what, uint32_t i) {
    rk_type e = rk_type_kind_of(c->k, t) == RK_TK_VEC ? rk_type_elem(c->k, t) : t;
    rk_scalar s = rk_type_scalar(e), want = RK_S_NONE;
    if (is_fp8(s)) want = c->tgt->fp8;
    else if (is_bf8(s)) want = c->tgt->bf8;
    if (want == RK_S_NONE || want == s) return;
    bool fnuz = want == RK_S_FP8E4M3FNUZ || want == RK_S_BF8E5M2FNUZ;
    ERR(c, op, idx, "%s %u has type %s but target '%s' converts %s 8-bit floats: use %s", what, i,
        rk_type_name(c->k, t), c->tgt->name ? c->tgt->name : "?", fnuz ? "FNUZ" : "OCP", rk_scalar_name(want));
}

static void check_target(vctx *c, const rk_op *op, uint32_t idx) {
    const rk_verify_target *t = c->tgt;
    const rk_op_info *info = rk_op_info_of(op->code);
    const char *tname = t->name ? t->name : "?";
    uint32_t missing = info->feat & ~t->features;
    if (missing) {
        uint32_t bit = most_specific(missing);
        ERR(c, op, idx, "%s needs %s, which target '%s' lacks (offered by %s)", info->name, rk_feature_name(bit),
            tname, offered_by(most_specific(info->feat)));
        return;
    }
    if (op->code == RK_OP_MMA && t->check_mma) {
        char msg[512] = "";
        if (!t->check_mma(t->ud, c->k, op, msg, sizeof msg))
            ERR(c, op, idx, "%s", msg[0] ? msg : "matrix atom not available on this target");
    }
    if (op->code == RK_OP_INLINE_ASM && t->name) {
        const char *arch = rk_attrs_str(&op->attrs, "required_arch");
        if (arch && strcmp(arch, t->name) != 0)
            ERR(c, op, idx, "inline assembly requires arch '%s' but the target is '%s'", arch, t->name);
    }
    if ((t->fp8 != RK_S_NONE || t->bf8 != RK_S_NONE) && strncmp(info->name, "arith.cvt_", 10) == 0) {
        for (uint32_t i = 0; i < op->nin; i++) check_f8_dialect(c, op, idx, rk_value_type(c->k, op->in[i]), "operand", i);
        for (uint32_t i = 0; i < op->nout; i++) check_f8_dialect(c, op, idx, rk_value_type(c->k, op->out[i]), "result", i);
    }
}

/* ---- the walk ----------------------------------------------------------------------------- */
static bool is_block_barrier(rk_opcode code) {
    return code == RK_OP_SYNC || code == RK_OP_SYNC_LDS_ONLY || code == RK_OP_S_BARRIER_BARE ||
           code == RK_OP_NAMED_BARRIER;
}

static void walk_region(vctx *c, const rk_region *r, const rk_op *owner, uint32_t owner_idx);

static void check_terminators(vctx *c, const rk_op *op, uint32_t idx, const rk_region *r, uint32_t pos) {
    bool last = pos + 1 == r->nops;
    const rk_op *owner = r->owner;
    if (op->code == RK_OP_YIELD && owner && (owner->code == RK_OP_FOR || owner->code == RK_OP_IF_ELSE)) {
        if (!last) ERR(c, op, idx, "scf.yield must be the last op of its region");
        if (owner->code == RK_OP_FOR && owner->nout == 0)
            ERR(c, op, idx, "this scf.for carries no values, so its body takes no scf.yield");
    }
    if (op->code == RK_OP_RETURN && (r != &c->k->body || !last))
        ERR(c, op, idx, "cf.return must be the last op of the kernel body");
}

/* A region op whose regions must end in scf.yield (for with carries,
 * if_else with results). */
static void check_region_end(vctx *c, const rk_op *op, uint32_t idx, const rk_region *r) {
    if (op->nout == 0 || (op->code != RK_OP_FOR && op->code != RK_OP_IF_ELSE)) return;
    const rk_op *lastop = r->nops ? r->ops[r->nops - 1] : NULL;
    if (lastop && lastop->code == RK_OP_YIELD) return;
    if (op->code == RK_OP_FOR)
        ERR(c, op, idx, "the loop carries %u values but its body does not end with scf.yield", op->nout);
    else
        ERR(c, op, idx, "scf.if_else has %u results but its '%s' region does not end with scf.yield", op->nout,
            r->label ? r->label : "?");
}

/* The back end whose inline-asm constraint letters apply (both without a target). */
static unsigned asm_vendor(const rk_verify_target *t) {
    if (t && (t->features & RK_FEAT_AMD)) return IR_ASM_AMD;
    if (t && (t->features & RK_FEAT_NV)) return IR_ASM_NV;
    return IR_ASM_ANY;
}

static void check_op(vctx *c, const rk_op *op, const rk_region *r, uint32_t pos) {
    uint32_t idx = c->next_idx++;
    if (!op) {
        ERR(c, NULL, NO_IDX, "region holds a NULL op at position %u", pos);
        return;
    }
    if ((unsigned)op->code >= RK_OP__COUNT || op->code == RK_OP_INVALID) {
        ERR(c, NULL, NO_IDX, "op %u has an unknown opcode (%d)", idx, (int)op->code);
        return;
    }
    if (op->parent != r) ERR(c, op, idx, "the op does not record its region as its parent (broken links)");

    bool operands_ok = true;
    for (uint32_t j = 0; j < op->nin; j++)
        if (!check_use(c, op, idx, j)) operands_ok = operands_ok && ir_val(c->k, op->in[j]) != NULL;
    bool results_ok = true;
    for (uint32_t j = 0; j < op->nout; j++) {
        char what[32];
        snprintf(what, sizeof what, "result %u", j);
        if (!define(c, op, idx, op->out[j], what, ST_PENDING)) results_ok = false;
        else {
            const ir_valinfo *vi = ir_val(c->k, op->out[j]);
            if (vi->kind != RK_VK_RESULT || vi->def != op || vi->index != j)
                ERR(c, op, idx, "result %u does not record this op as its producer (broken links)", j);
        }
    }

    if (op->code == RK_OP_IF && op->nout) {
        ERR(c, op, idx, "scf.if cannot produce values; use scf.if_else with scf.yield in both regions");
    } else if (operands_ok && results_ok) {
        char msg[512];
        if (!ir_check_op(c->k, op, msg, sizeof msg)) ERR(c, op, idx, "%s", msg);
        else if (op->code == RK_OP_INLINE_ASM && !ir_check_asm_constraints(c->k, op, asm_vendor(c->tgt), msg, sizeof msg))
            ERR(c, op, idx, "%s", msg);
    }
    check_terminators(c, op, idx, r, pos);
    if (c->tgt) check_target(c, op, idx);
    if (is_block_barrier(op->code) && c->div_op)
        WARN(c, op, idx, "barrier inside divergent control flow (op %u '%s'): it deadlocks unless every thread "
             "of the workgroup takes the same branch", c->div_idx, rk_opcode_name(c->div_op->code));

    if (op->nreg && !op->regions) ERR(c, op, idx, "has %u regions but no region storage (broken links)", op->nreg);
    if (op->nreg && op->regions) {
        const rk_op *save_div = c->div_op;
        uint32_t save_div_idx = c->div_idx;
        if (op->code == RK_OP_IF || op->code == RK_OP_IF_ELSE) {
            c->div_op = op;
            c->div_idx = idx;
        }
        if (op->code == RK_OP_FOR) check_for_args(c, op, idx);
        for (uint32_t j = 0; j < op->nreg; j++) {
            const rk_region *sub = &op->regions[j];
            if (sub->owner != op) ERR(c, op, idx, "region %u does not record this op as its owner (broken links)", j);
            if (sub->nargs && op->code != RK_OP_FOR)
                ERR(c, op, idx, "region %u has %u arguments; only scf.for bodies have region arguments", j, sub->nargs);
            walk_region(c, sub, op, idx);
            check_region_end(c, op, idx, sub);
        }
        c->div_op = save_div;
        c->div_idx = save_div_idx;
    }
    /* results become visible after the op, never inside its own regions */
    for (uint32_t j = 0; j < op->nout; j++) {
        rk_value v = op->out[j];
        if (v.id && v.id < c->nvals && c->state[v.id] == ST_PENDING) {
            c->state[v.id] = ST_VISIBLE;
            c->scope[c->nscope++] = v.id;
        }
    }
}

static void walk_region(vctx *c, const rk_region *r, const rk_op *owner, uint32_t owner_idx) {
    uint32_t mark = c->nscope;
    const rk_op *save_owner = c->owner;
    const char *save_label = c->label;
    if (owner && owner->code == RK_OP_FOR && r->args) {
        for (uint32_t a = 0; a < r->nargs; a++) {
            char what[40];
            snprintf(what, sizeof what, "region argument %u", a);
            define(c, owner, owner_idx, r->args[a], what, ST_VISIBLE);
        }
    }
    c->owner = owner;
    c->label = r->label;
    for (uint32_t i = 0; i < r->nops && r->ops; i++) check_op(c, r->ops[i], r, i);
    while (c->nscope > mark) c->state[c->scope[--c->nscope]] = ST_CLOSED;
    c->owner = save_owner;
    c->label = save_label;
}

/* ---- entry ------------------------------------------------------------------------------ */
static void check_params(vctx *c) {
    const rk_kernel *k = c->k;
    for (uint32_t i = 0; i < k->nparams; i++) {
        const rk_param *p = &k->params[i];
        const ir_valinfo *vi = ir_val(k, p->value);
        if (!vi || vi->kind != RK_VK_PARAM || vi->index != i) {
            ERR(c, NULL, NO_IDX, "parameter %u ('%s') does not have a matching parameter value (broken links)", i,
                p->name ? p->name : "?");
            continue;
        }
        if (!rk_type_eq(vi->type, p->type))
            ERR(c, NULL, NO_IDX, "parameter '%s' is declared %s but its value has type %s", p->name,
                rk_type_name(k, p->type), rk_type_name(k, vi->type));
        rk_type_kind tk = rk_type_kind_of(k, p->type);
        if (tk != RK_TK_SCALAR && tk != RK_TK_PTR)
            ERR(c, NULL, NO_IDX, "parameter '%s' has type %s; parameters are scalars or pointers", p->name,
                rk_type_name(k, p->type));
        char what[64];
        snprintf(what, sizeof what, "parameter %u", i);
        define(c, NULL, NO_IDX, p->value, what, ST_VISIBLE);
    }
}

/* cluster_dims: three ints in [1, 8] whose product is at most 8 (the portable
 * cluster size), on a target with clusters */
static void check_cluster_dims(vctx *c) {
    const rk_attr_val *a = rk_attrs_get(&c->k->attrs, "cluster_dims");
    uint32_t d[3];
    if (!a) return;
    if (!rk_kernel_cluster_dims(c->k, d) || d[0] * d[1] * d[2] > 8) {
        ERR(c, NULL, NO_IDX, "kernel attribute cluster_dims must be [x, y, z], each 1..8, at most 8 blocks in all "
            "(e.g. [2, 1, 1])");
        return;
    }
    if (c->tgt && !(c->tgt->features & RK_FEAT_SM90) && d[0] * d[1] * d[2] > 1)
        ERR(c, NULL, NO_IDX, "kernel attribute cluster_dims [%u, %u, %u] needs thread-block clusters, which target "
            "'%s' lacks (offered by %s)", d[0], d[1], d[2], c->tgt->name, offered_by(RK_FEAT_SM90));
}

/* cooperative: a bool (every block resident at once) */
static void check_cooperative(vctx *c) {
    const rk_attr_val *a = rk_attrs_get(&c->k->attrs, "cooperative");
    if (a && a->kind != RK_AK_BOOL)
        ERR(c, NULL, NO_IDX, "kernel attribute cooperative must be true or false (true: every block of a launch is "
            "resident at once)");
}

rk_status rk_verify(const rk_kernel *k, const rk_verify_target *target, rk_diags *out) {
    if (!k) return rk_fail(RK_ERR_INVALID, "rk_verify: kernel is NULL");
    rk_diags local;
    rk_diags *d = out ? out : &local;
    if (!out) rk_diags_init(&local);
    uint32_t errors_before = d->nerrors, first = d->n;

    vctx c = {.k = k, .tgt = target, .out = d, .nvals = k->nvals};
    c.names_cap = 16;
    while (c.names_cap < 2 * k->nvals) c.names_cap *= 2;
    c.state = rk_calloc(k->nvals, 1);
    c.def_at = rk_malloc(k->nvals * sizeof *c.def_at);
    c.scope = rk_malloc(k->nvals * sizeof *c.scope);
    c.names = rk_calloc(c.names_cap, sizeof *c.names);
    if (!c.state || !c.def_at || !c.scope || !c.names) {
        c.oom = true;
    } else {
        for (uint32_t i = 0; i < k->nvals; i++) c.def_at[i] = NO_IDX;
        uint32_t n = 0;
        prepass(&c, &k->body, &n);
        if (k->err != RK_OK)
            ERR(&c, NULL, NO_IDX, "the builder failed: %s", rk_builder_error(k));
        if (k->depth)
            ERR(&c, NULL, NO_IDX, "%u regions are still open (missing rk_for_end/rk_if_end)", k->depth);
        check_params(&c);
        check_cluster_dims(&c);
        check_cooperative(&c);
        if (k->body.nops == 0) WARN(&c, NULL, NO_IDX, "the kernel body is empty");
        walk_region(&c, &k->body, NULL, NO_IDX);
    }
    rk_free(c.state, k->nvals);
    rk_free(c.def_at, k->nvals * sizeof *c.def_at);
    rk_free(c.scope, k->nvals * sizeof *c.scope);
    rk_free(c.names, c.names_cap * sizeof *c.names);

    rk_status st = RK_OK;
    if (c.oom) {
        st = rk_fail(RK_ERR_NOMEM, "out of memory verifying kernel '%s'", k->name);
    } else if (d->nerrors > errors_before) {
        const rk_diag *f = NULL;
        for (uint32_t i = first; i < d->n && !f; i++)
            if (d->items[i].severity == RK_SEV_ERROR) f = &d->items[i];
        st = rk_fail(RK_ERR_VERIFY, "kernel '%s' failed verification (%u error%s); first: %s: %s", k->name,
                     d->nerrors - errors_before, d->nerrors - errors_before == 1 ? "" : "s", f->where, f->msg);
    }
    if (!out) rk_diags_free(&local);
    return st;
}
