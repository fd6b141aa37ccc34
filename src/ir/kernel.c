/* rocke — kernels: the arena that owns everything, the value table, SSA
 * names, parameters, kernel attributes and the sticky builder error.
 * Layer: ir. */
#include <stdio.h>

#include "ir_int.h"

bool ir_valid_ident(const char *s) {
    if (!s || !*s) return false;
    for (const char *p = s; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
                  (c >= '0' && c <= '9' && p != s);
        if (!ok) return false;
    }
    return true;
}

rk_kernel *rk_kernel_new(const char *name) {
    if (!ir_valid_ident(name)) {
        rk_fail(RK_ERR_INVALID, "kernel name '%s' is not an identifier ([A-Za-z_.][A-Za-z0-9_.]*)",
                name ? name : "(null)");
        return NULL;
    }
    rk_kernel *k = rk_calloc(1, sizeof *k);
    if (!k) { rk_fail(RK_ERR_NOMEM, "out of memory creating kernel"); return NULL; }
    rk_arena_init(&k->arena);
    k->name = rk_arena_strdup(&k->arena, name);
    k->vals = rk_calloc(64, sizeof *k->vals);
    if (!k->name || !k->vals) {
        rk_kernel_free(k);
        rk_fail(RK_ERR_NOMEM, "out of memory creating kernel");
        return NULL;
    }
    k->vals_cap = 64;
    k->nvals = 1;                       /* id 0 is "none" */
    k->body.label = "entry";
    return k;
}

void rk_kernel_free(rk_kernel *k) {
    if (!k) return;
    rk_free(k->vals, k->vals_cap * sizeof *k->vals);
    rk_free(k->types, k->types_cap * sizeof *k->types);
    rk_free(k->type_hash, k->type_hash_cap * sizeof *k->type_hash);
    rk_arena_free(&k->arena);
    rk_free(k, sizeof *k);
}

const char *rk_kernel_name(const rk_kernel *k) { return k->name; }
rk_region *rk_kernel_body(const rk_kernel *k) { return (rk_region *)&k->body; }
uint32_t rk_kernel_nparams(const rk_kernel *k) { return k->nparams; }
const rk_param *rk_kernel_param(const rk_kernel *k, uint32_t i) {
    return i < k->nparams ? &k->params[i] : NULL;
}
const rk_attrs *rk_kernel_attrs(const rk_kernel *k) { return &k->attrs; }
uint32_t rk_kernel_nvalues(const rk_kernel *k) { return k->nvals - 1; }

const char *ir_intern(rk_kernel *k, const char *s) { return rk_arena_strdup(&k->arena, s); }

/* ---- errors ------------------------------------------------------------------------ */
bool ir_fail(rk_kernel *k, rk_status s, const rk_op *op, const char *fmt, ...) {
    if (k->err != RK_OK) return false;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    k->err = s;
    if (op)
        k->err_msg = rk_arena_printf(&k->arena, "%s%s%s: %s", rk_opcode_name(op->code),
                                     op->loc ? " at " : "", op->loc ? op->loc : "", msg);
    else
        k->err_msg = rk_arena_strdup(&k->arena, msg);
    rk_fail(s, "kernel '%s': %s", k->name, k->err_msg ? k->err_msg : msg);
    return false;
}

rk_status rk_builder_status(const rk_kernel *k) { return k->err; }
const char *rk_builder_error(const rk_kernel *k) {
    return k->err == RK_OK ? "" : (k->err_msg ? k->err_msg : "out of memory");
}

rk_status rk_kernel_finish(rk_kernel *k) {
    if (k->err == RK_OK && k->depth != 0) {
        const rk_op *op = k->frames[k->depth - 1].op;
        ir_fail(k, RK_ERR_INVALID, op, "region '%s' is still open at rk_kernel_finish (missing rk_for_end/rk_if_end)",
                op->regions[k->frames[k->depth - 1].region].label);
    }
    if (k->err != RK_OK)
        return rk_fail(k->err, "kernel '%s': %s", k->name, rk_builder_error(k));
    return RK_OK;
}

/* ---- values ------------------------------------------------------------------------- */
rk_value ir_new_value(rk_kernel *k, rk_type t, rk_value_kind kind, const char *hint, bool numbered) {
    if (k->nvals == k->vals_cap && !ir_vals_reserve(k, (uint64_t)k->nvals + 1)) {
        ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory adding a value");
        return (rk_value){0};
    }
    uint32_t id = k->nvals++;
    ir_valinfo *vi = &k->vals[id];
    memset(vi, 0, sizeof *vi);
    vi->type = t;
    vi->kind = kind;
    vi->hint = hint ? hint : "";
    vi->num = numbered ? ++k->counter : IR_NO_NUM;
    return (rk_value){id};
}

rk_type rk_value_type(const rk_kernel *k, rk_value v) {
    const ir_valinfo *vi = ir_val(k, v);
    return vi ? vi->type : RK_T_NONE;
}
rk_value_kind rk_value_kind_of(const rk_kernel *k, rk_value v) {
    const ir_valinfo *vi = ir_val(k, v);
    return vi ? vi->kind : RK_VK_NONE;
}
rk_op *rk_value_def(const rk_kernel *k, rk_value v) {
    const ir_valinfo *vi = ir_val(k, v);
    return vi && vi->kind == RK_VK_RESULT ? vi->def : NULL;
}
uint32_t rk_value_result_index(const rk_kernel *k, rk_value v) {
    const ir_valinfo *vi = ir_val(k, v);
    return vi ? vi->index : 0;
}

const char *rk_value_name(const rk_kernel *k, rk_value v, char buf[RK_NAME_MAX]) {
    const ir_valinfo *vi = ir_val(k, v);
    if (!vi) return "<none>";
    if (vi->num == IR_NO_NUM) return vi->hint;
    snprintf(buf, RK_NAME_MAX, "%s%u", vi->hint, vi->num);
    return buf;
}

void rk_value_set_hint(rk_kernel *k, rk_value v, const char *hint) {
    ir_valinfo *vi = ir_val(k, v);
    if (!vi || !ir_live(k)) return;
    if (!ir_valid_ident(hint) || (hint[strlen(hint) - 1] >= '0' && hint[strlen(hint) - 1] <= '9')) {
        ir_fail(k, RK_ERR_INVALID, NULL, "value hint '%s' must be an identifier not ending in a digit", hint);
        return;
    }
    const char *h = ir_intern(k, hint);
    if (!h) { ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory"); return; }
    vi->hint = h;
}

/* ---- parameters --------------------------------------------------------------------- */
rk_value rk_add_param(rk_kernel *k, const char *name, rk_type t, const rk_param_abi *abi) {
    if (!ir_live(k)) return (rk_value){0};
    if (!ir_valid_ident(name))
        return ir_fail(k, RK_ERR_INVALID, NULL, "parameter name '%s' is not an identifier", name ? name : "(null)"),
               (rk_value){0};
    for (uint32_t i = 0; i < k->nparams; i++)
        if (strcmp(k->params[i].name, name) == 0)
            return ir_fail(k, RK_ERR_INVALID, NULL, "duplicate parameter name '%s'", name), (rk_value){0};
    rk_type_kind tk = rk_type_kind_of(k, t);
    if (tk != RK_TK_SCALAR && tk != RK_TK_PTR)
        return ir_fail(k, RK_ERR_INVALID, NULL, "parameter '%s' has type %s; parameters are scalars or pointers",
                       name, rk_type_name(k, t)),
               (rk_value){0};
    if (abi && tk != RK_TK_PTR &&
        (abi->noalias || abi->readonly || abi->writeonly || abi->nonnull || abi->align || abi->dereferenceable))
        return ir_fail(k, RK_ERR_INVALID, NULL, "parameter '%s': ABI attributes apply to pointers only", name),
               (rk_value){0};
    rk_param *ps = rk_arena_grow(&k->arena, k->params, sizeof *ps, &k->params_cap, k->nparams + 1);
    if (!ps) return ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory"), (rk_value){0};
    k->params = ps;
    rk_param *p = &k->params[k->nparams];
    memset(p, 0, sizeof *p);
    p->name = ir_intern(k, name);
    p->type = t;
    if (!p->name) return ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory"), (rk_value){0};
    p->value = ir_new_value(k, t, RK_VK_PARAM, p->name, false);
    if (!rk_value_ok(p->value)) return p->value;
    k->vals[p->value.id].index = k->nparams;
    k->nparams++;
    if (abi) {
        rk_attr_val *v;
#define PUT_BOOL(key, cond) \
        if (cond) { if (!(v = ir_attrs_put(k, &p->attrs, key))) goto oom; v->kind = RK_AK_BOOL; v->u.b = true; }
        PUT_BOOL("noalias", abi->noalias)
        PUT_BOOL("readonly", abi->readonly)
        PUT_BOOL("writeonly", abi->writeonly)
        PUT_BOOL("nonnull", abi->nonnull)
        PUT_BOOL("tensormap", abi->tensormap)
#undef PUT_BOOL
        if (abi->no_nocapture) {
            if (!(v = ir_attrs_put(k, &p->attrs, "nocapture"))) goto oom;
            v->kind = RK_AK_BOOL;
            v->u.b = false;
        }
        if (abi->align) {
            if (!(v = ir_attrs_put(k, &p->attrs, "align"))) goto oom;
            v->kind = RK_AK_INT;
            v->u.i = abi->align;
        }
        if (abi->dereferenceable) {
            if (!(v = ir_attrs_put(k, &p->attrs, "dereferenceable"))) goto oom;
            v->kind = RK_AK_INT;
            v->u.i = (int64_t)abi->dereferenceable;
        }
    }
    return p->value;
oom:
    ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory");
    return (rk_value){0};
}

/* ---- kernel attributes ---------------------------------------------------------------- */
void rk_kernel_set_attr_int(rk_kernel *k, const char *key, int64_t v) {
    rk_attr_val *a = ir_attrs_put(k, &k->attrs, key);
    if (!a) { ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory"); return; }
    a->kind = RK_AK_INT;
    a->u.i = v;
}

void rk_kernel_set_attr_str(rk_kernel *k, const char *key, const char *v) {
    rk_attr_val *a = ir_attrs_put(k, &k->attrs, key);
    const char *s = ir_intern(k, v);
    if (!a || !s) { ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory"); return; }
    a->kind = RK_AK_STR;
    a->u.s = s;
}

void rk_kernel_set_attr_pair(rk_kernel *k, const char *key, int64_t lo, int64_t hi) {
    rk_attr_val *a = ir_attrs_put(k, &k->attrs, key);
    rk_attr_val *items = rk_arena_alloc(&k->arena, 2 * sizeof *items);
    if (!a || !items) { ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory"); return; }
    items[0] = (rk_attr_val){.kind = RK_AK_INT, .u.i = lo};
    items[1] = (rk_attr_val){.kind = RK_AK_INT, .u.i = hi};
    a->kind = RK_AK_LIST;
    a->n = 2;
    a->u.list = items;
}

void rk_kernel_set_cluster_dims(rk_kernel *k, uint32_t x, uint32_t y, uint32_t z) {
    rk_attr_val *a = ir_attrs_put(k, &k->attrs, "cluster_dims");
    rk_attr_val *items = rk_arena_alloc(&k->arena, 3 * sizeof *items);
    if (!a || !items) { ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory"); return; }
    const uint32_t d[3] = {x, y, z};
    for (int i = 0; i < 3; i++) items[i] = (rk_attr_val){.kind = RK_AK_INT, .u.i = d[i]};
    a->kind = RK_AK_LIST;
    a->n = 3;
    a->u.list = items;
}

bool rk_kernel_cluster_dims(const rk_kernel *k, uint32_t out[3]) {
    out[0] = out[1] = out[2] = 1;
    const rk_attr_val *a = rk_attrs_get(&k->attrs, "cluster_dims");
    if (!a || a->kind != RK_AK_LIST || a->n != 3) return false;
    for (uint32_t i = 0; i < 3; i++)
        if (a->u.list[i].kind != RK_AK_INT || a->u.list[i].u.i < 1 || a->u.list[i].u.i > 8) return false;
    for (uint32_t i = 0; i < 3; i++) out[i] = (uint32_t)a->u.list[i].u.i;
    return true;
}

void rk_kernel_set_cooperative(rk_kernel *k, bool on) {
    rk_attr_val *a = ir_attrs_put(k, &k->attrs, "cooperative");
    if (!a) { ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory"); return; }
    a->kind = RK_AK_BOOL;
    a->u.b = on;
}

bool rk_kernel_cooperative(const rk_kernel *k) { return k && rk_attrs_bool(&k->attrs, "cooperative", false); }

int64_t rk_kernel_max_workgroup_size(const rk_kernel *k) {
    int64_t v;
    return rk_attrs_int(&k->attrs, "max_workgroup_size", &v) ? v : 256;
}

/* ---- ops and regions --------------------------------------------------------------------- */
rk_op *ir_op_alloc(rk_kernel *k, rk_opcode code, uint32_t nin, uint32_t nout, uint32_t nreg) {
    if (nin > UINT16_MAX || nout > UINT16_MAX || nreg > UINT16_MAX) {
        ir_fail(k, RK_ERR_INVALID, NULL, "%s: too many operands or results", rk_opcode_name(code));
        return NULL;
    }
    size_t sz = sizeof(rk_op) + (nin + nout) * sizeof(rk_value) + nreg * sizeof(rk_region);
    rk_op *op = rk_arena_alloc(&k->arena, sz);
    if (!op) { ir_fail(k, RK_ERR_NOMEM, NULL, "out of memory"); return NULL; }
    memset(op, 0, sizeof *op);
    op->code = code;
    op->nin = (uint16_t)nin;
    op->nout = (uint16_t)nout;
    op->nreg = (uint16_t)nreg;
    /* regions first: they hold pointers and need the stronger alignment */
    op->regions = nreg ? (rk_region *)(op + 1) : NULL;
    rk_value *vals = (rk_value *)((char *)(op + 1) + nreg * sizeof(rk_region));
    op->in = vals;
    op->out = vals + nin;
    if (nreg) memset(op->regions, 0, nreg * sizeof(rk_region));
    for (uint32_t i = 0; i < nreg; i++) op->regions[i].owner = op;
    return op;
}

bool ir_region_append(rk_kernel *k, rk_region *r, rk_op *op) {
    if (r->nops == r->cap) {
        rk_op **ops = rk_arena_grow(&k->arena, r->ops, sizeof *ops, &r->cap, r->nops + 1);
        if (!ops) return ir_fail(k, RK_ERR_NOMEM, op, "out of memory");
        r->ops = ops;
    }
    r->ops[r->nops++] = op;
    op->parent = r;
    return true;
}

bool ir_walk(rk_region *r, ir_walk_fn fn, void *ud, uint32_t depth) {
    for (uint32_t i = 0; i < r->nops; i++) {
        rk_op *op = r->ops[i];
        if (!fn(ud, op, depth)) return false;
        for (uint32_t j = 0; j < op->nreg; j++)
            if (!ir_walk(&op->regions[j], fn, ud, depth + 1)) return false;
    }
    return true;
}

static bool count_op(void *ud, rk_op *op, uint32_t depth) {
    (void)op; (void)depth;
    ++*(uint64_t *)ud;
    return true;
}

uint64_t rk_kernel_op_count(const rk_kernel *k) {
    uint64_t n = 0;
    ir_walk((rk_region *)&k->body, count_op, &n, 0);
    return n;
}
