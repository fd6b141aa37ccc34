/* rocke — the conservative pass pipeline: fold, CSE, DCE in rounds until a
 * round changes nothing or the round cap is reached. Needs: a finished
 * kernel (no builder error, no open region). Guarantees: a kernel that
 * verified still verifies, with the same observable behaviour; side-effecting
 * ops are never removed, merged or reordered; out of memory leaves a valid
 * kernel (partly optimised) and RK_ERR_NOMEM. Layer: ir. */
#include "ir_int.h"

bool ir_op_is_pure(const rk_op *op) {
    if (!(rk_op_info_of(op->code)->flags & RK_F_PURE)) return false;
    /* upstream's per-op override: pure = false keeps an op (the reverse is
     * not trusted: a table entry with effects stays effectful) */
    const rk_attr_val *p = rk_attrs_get(&op->attrs, "pure");
    return !(p && p->kind == RK_AK_BOOL && !p->u.b);
}

void ir_rewrite_operands(const ir_rewrite *rw, rk_op *op) {
    for (uint32_t i = 0; i < op->nin; i++) {
        uint32_t id = op->in[i].id;
        if (id < rw->n && rw->to[id].id) op->in[i] = rw->to[id];
    }
}

rk_status rk_optimize(rk_kernel *k, uint32_t max_iter, rk_pass_stats *stats) {
    return rk_optimize_observe(k, max_iter, stats, NULL, NULL);
}

rk_status rk_optimize_observe(rk_kernel *k, uint32_t max_iter, rk_pass_stats *stats, rk_pass_observer fn, void *ud) {
    rk_pass_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (!k) return rk_fail(RK_ERR_INVALID, "rk_optimize: kernel is NULL");
    if (k->err != RK_OK)
        return rk_fail(k->err, "kernel '%s' cannot be optimised: the builder failed: %s", k->name,
                       rk_builder_error(k));
    if (k->depth)
        return rk_fail(RK_ERR_INVALID, "kernel '%s' cannot be optimised: %u regions are still open", k->name,
                       k->depth);
    if (max_iter == 0) max_iter = 8;
    rk_status st = RK_OK;
    for (uint32_t it = 0; it < max_iter && st == RK_OK; it++) {
        uint32_t folded = 0, merged = 0, removed = 0;
        st = ir_fold(k, &folded);
        if (st == RK_OK && fn) fn(ud, "fold", it + 1, k);
        if (st == RK_OK) st = ir_cse(k, &merged);
        if (st == RK_OK && fn) fn(ud, "cse", it + 1, k);
        if (st == RK_OK) st = ir_dce(k, &removed);
        if (st == RK_OK && fn) fn(ud, "dce", it + 1, k);
        stats->constants_folded += folded;
        stats->common_subexpressions += merged;
        stats->dead_ops_removed += removed;
        stats->iterations = it + 1;
        if (folded + merged + removed == 0) break;
    }
    if (st != RK_OK) {
        /* the allocators behind new constants record a sticky builder error;
         * the kernel itself is intact, so it stays usable */
        k->err = RK_OK;
        k->err_msg = NULL;
        return rk_fail(st, "out of memory optimising kernel '%s'", k->name);
    }
    return RK_OK;
}
