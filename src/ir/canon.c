/* rocke — canonical ckdsl.ir v1: ids renumbered %0, %1, ... in definition
 * pre-order, @loc dropped; equal canonical texts mean the same kernel. Layer: ir. */
#include "text_int.h"

typedef struct renum {
    rk_kernel *k;
    uint32_t next;
    bool oom;
} renum;

static const char *ref_of(renum *R, rk_value v) {
    const char *s = rk_arena_printf(&R->k->arena, "%%%u", R->k->vals[v.id].num);
    if (!s) R->oom = true;
    return s;
}

static void rename_value(renum *R, rk_value v) {
    ir_valinfo *vi = ir_val(R->k, v);
    if (!vi) return;
    vi->hint = "";
    vi->num = R->next++;
}

/* scf.for names its loop variables in attributes too: keep them in step. */
static void rename_for_attrs(renum *R, rk_op *op) {
    const rk_region *body = &op->regions[0];
    for (uint32_t i = 0; i < op->attrs.n; i++) {
        rk_attr *a = &op->attrs.items[i];
        if (!strcmp(a->key, "iv") && a->val.kind == RK_AK_STR && body->nargs) {
            a->val.u.s = ref_of(R, body->args[0]);
        } else if (!strcmp(a->key, "iter_args") && a->val.kind == RK_AK_LIST) {
            for (uint32_t j = 0; j < a->val.n && 1 + j < body->nargs; j++) {
                rk_attr_val *m = &a->val.u.list[j];
                for (uint32_t e = 0; m->kind == RK_AK_MAP && e < m->n; e++)
                    if (!strcmp(m->u.map[e].key, "name") && m->u.map[e].val.kind == RK_AK_STR)
                        m->u.map[e].val.u.s = ref_of(R, body->args[1 + j]);
            }
        }
    }
}

static bool visit(void *ud, rk_op *op, uint32_t depth) {
    renum *R = ud;
    (void)depth;
    op->loc = NULL;
    for (uint32_t i = 0; i < op->nout; i++) rename_value(R, op->out[i]);
    for (uint32_t r = 0; r < op->nreg; r++)
        for (uint32_t i = 0; i < op->regions[r].nargs; i++) rename_value(R, op->regions[r].args[i]);
    if (op->code == RK_OP_FOR && op->nreg) rename_for_attrs(R, op);
    return !R->oom;
}

rk_status rk_canonicalize(const char *text, size_t len, char **out) {
    if (!out) return rk_fail(RK_ERR_INVALID, "rk_canonicalize: out is NULL");
    *out = NULL;
    rk_kernel *k;
    rk_status st = rk_parse(text, len, &k);
    if (st != RK_OK) return st;
    renum R = {k, 0, false};
    for (uint32_t i = 0; i < k->nparams && !R.oom; i++) {
        rename_value(&R, k->params[i].value);
        k->params[i].name = ref_of(&R, k->params[i].value);
        if (k->params[i].name) k->params[i].name++;     /* without '%' */
    }
    if (!R.oom) ir_walk(&k->body, visit, &R, 0);
    /* keep later builder names clear of the new numbers */
    k->counter = R.next;
    *out = R.oom ? NULL : rk_serialize(k);
    rk_kernel_free(k);
    if (!*out) return rk_fail(RK_ERR_NOMEM, "out of memory canonicalizing IR");
    return RK_OK;
}
