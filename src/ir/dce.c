/* rocke — dead-code elimination. Does: removes pure ops and allocations
 * (tile.smem_alloc) none of whose results is used, inside regions too; one
 * sweep in reverse pre-order sees every use before its definition, so whole
 * dead chains go at once. Needs: a verified kernel. Guarantees: never removes
 * an op with effects or without results — stores, atomics, barriers, waits,
 * async copies, tile.mma (convergent, not pure), inline asm, scheduling hints,
 * control flow, yields and returns all stay, in their order. Layer: ir. */
#include "ir_int.h"

typedef struct dctx {
    uint32_t *uses;            /* per value id */
    uint32_t n;
    uint32_t removed;
} dctx;

static bool count_uses(void *ud, rk_op *op, uint32_t depth) {
    (void)depth;
    dctx *d = ud;
    for (uint32_t i = 0; i < op->nin; i++)
        if (op->in[i].id < d->n) d->uses[op->in[i].id]++;
    return true;
}

static bool removable(const rk_op *op) {
    uint32_t f = rk_op_info_of(op->code)->flags;
    if (op->nreg || op->nout == 0) return false;
    if (f & (RK_F_WRITES | RK_F_BARRIER | RK_F_REGION | RK_F_TERM)) return false;
    if (f & RK_F_ALLOC) {
        const rk_attr_val *p = rk_attrs_get(&op->attrs, "pure");
        return !(p && p->kind == RK_AK_BOOL && !p->u.b);
    }
    return ir_op_is_pure(op);
}

static bool dead(const dctx *d, const rk_op *op) {
    for (uint32_t i = 0; i < op->nout; i++)
        if (op->out[i].id >= d->n || d->uses[op->out[i].id]) return false;
    return true;
}

static void dce_region(dctx *d, rk_region *r) {
    bool any = false;
    for (uint32_t i = r->nops; i-- > 0;) {
        rk_op *op = r->ops[i];
        for (uint32_t j = op->nreg; j-- > 0;) dce_region(d, &op->regions[j]);
        if (removable(op) && dead(d, op)) {
            for (uint32_t j = 0; j < op->nin; j++)
                if (op->in[j].id < d->n) d->uses[op->in[j].id]--;
            r->ops[i] = NULL;
            d->removed++;
            any = true;
        }
    }
    if (!any) return;
    uint32_t w = 0;
    for (uint32_t i = 0; i < r->nops; i++)
        if (r->ops[i]) r->ops[w++] = r->ops[i];
    r->nops = w;
}

rk_status ir_dce(rk_kernel *k, uint32_t *removed) {
    dctx d = {.n = k->nvals};
    *removed = 0;
    d.uses = rk_calloc(d.n, sizeof *d.uses);
    if (!d.uses) return RK_ERR_NOMEM;
    ir_walk(&k->body, count_uses, &d, 0);
    dce_region(&d, &k->body);
    rk_free(d.uses, d.n * sizeof *d.uses);
    *removed = d.removed;
    return RK_OK;
}
