/* rocke — structured control flow to basic blocks. Layer: lower.
 *
 *   scf.for     pred -> for.header (phis: IV, one per carry; icmp slt) ->
 *               for.body (the region) -> for.latch (iv.next) -> header;
 *               for.exit binds each result with a self-bitcast of its phi.
 *               The phis name the yielded values directly: every value's
 *               text is known before its definition is emitted.
 *   scf.for with unroll = true and constant bounds: one straight copy of
 *               the body per iteration; values defined in copy i are named
 *               <name>.u<i>, the IV is the literal, carries alias the
 *               previous copy's yields. A trailing tile.sync is dropped from
 *               all but the last copy only when the body also starts with
 *               tile.sync (two barriers back to back are one barrier).
 *   scf.if      cond -> if.then (region) -> if.end
 *   scf.if_else cond -> if.then / if.else -> if.end with one phi per result
 *   cf.return   ret void; code after it lands in an unreachable block. */
#include <stdio.h>

#include "lower_int.h"

enum { MAX_UNROLL = 4096 };

static const rk_op *yield_of(const rk_region *r) {
    return r->nops && r->ops[r->nops - 1]->code == RK_OP_YIELD ? r->ops[r->nops - 1] : NULL;
}

void lw_lower_region(lw_ctx *cx, const rk_region *r) {
    for (uint32_t i = 0; i < r->nops && lw_ok(cx); i++)
        if (r->ops[i]->code != RK_OP_YIELD) lw_lower_op(cx, r->ops[i]);
}

/* ---- loops ------------------------------------------------------------------------------ */
static void lower_loop(lw_ctx *cx, const rk_op *op) {
    const rk_region *body = &op->regions[0];
    const rk_op *y = yield_of(body);
    rk_value iv = body->args[0];
    const char *H = lw_label(cx, "for.header"), *B = lw_label(cx, "for.body");
    const char *L = lw_label(cx, "for.latch"), *X = lw_label(cx, "for.exit");
    const char *pred = lw_cur_block(cx), *next = lw_tmp(cx, "iv.next"), *cond = lw_tmp(cx, "for.cond");
    lw_br(cx, H);
    lw_block(cx, H);
    lw_ins(cx, "%v = phi %t [ %v, %%%s ], [ %s, %%%s ]", iv, iv, op->in[0], pred, next, L);
    for (uint32_t i = 0; i < op->nout; i++) {
        rk_value c = body->args[1 + i];
        lw_ins(cx, "%v = phi %t [ %v, %%%s ], [ %v, %%%s ]", c, c, op->in[3 + i], pred, y->in[i], L);
    }
    lw_ins(cx, "%s = icmp slt %V, %v", cond, iv, op->in[1]);
    lw_condbr(cx, cond, B, X);
    lw_block(cx, B);
    lw_lower_region(cx, body);
    lw_br(cx, L);
    lw_block(cx, L);
    lw_ins(cx, "%s = add nsw %V, %v", next, iv, op->in[2]);
    lw_br(cx, H);
    lw_block(cx, X);
    for (uint32_t i = 0; i < op->nout; i++)
        lw_ins(cx, "%v = bitcast %V to %t", op->out[i], body->args[1 + i], op->out[i]);
}

/* Every value defined inside r (results and region arguments, recursively). */
static bool collect(lw_ctx *cx, const rk_region *r, rk_value **vs, uint32_t *n, uint32_t *cap) {
    for (uint32_t i = 0; i < r->nops; i++) {
        const rk_op *op = r->ops[i];
        uint32_t add = op->nout;
        for (uint32_t j = 0; j < op->nreg; j++) add += op->regions[j].nargs;
        if (add) {
            rk_value *g = rk_arena_grow(&cx->arena, *vs, sizeof **vs, cap, *n + add);
            if (!g) return false;
            *vs = g;
        }
        for (uint32_t j = 0; j < op->nout; j++) (*vs)[(*n)++] = op->out[j];
        for (uint32_t j = 0; j < op->nreg; j++) {
            for (uint32_t a = 0; a < op->regions[j].nargs; a++) (*vs)[(*n)++] = op->regions[j].args[a];
            if (!collect(cx, &op->regions[j], vs, n, cap)) return false;
        }
    }
    return true;
}

static bool starts_with_sync(const rk_region *r) {
    for (uint32_t i = 0; i < r->nops; i++) {
        rk_opcode c = r->ops[i]->code;
        if (c == RK_OP_CONSTANT || c == RK_OP_CONSTANT_VEC) continue;
        return c == RK_OP_SYNC;
    }
    return false;
}

/* The trailing tile.sync of a body (the op before the yield), or NULL. */
static const rk_op *trailing_sync(const rk_region *r) {
    uint32_t n = r->nops;
    if (n && r->ops[n - 1]->code == RK_OP_YIELD) n--;
    return n && r->ops[n - 1]->code == RK_OP_SYNC ? r->ops[n - 1] : NULL;
}

static void lower_unrolled(lw_ctx *cx, const rk_op *op) {
    int64_t lo, hi, step;
    if (!lw_const_int(cx, op->in[0], &lo) || !lw_const_int(cx, op->in[1], &hi) || !lw_const_int(cx, op->in[2], &step)) {
        lw_error(cx, op, RK_ERR_INVALID, "unroll = true needs constant lower bound, upper bound and step");
        return;
    }
    if (step <= 0) {
        lw_error(cx, op, RK_ERR_INVALID, "unroll = true needs a positive step, got %lld", (long long)step);
        return;
    }
    uint64_t trips = lo < hi ? ((uint64_t)hi - (uint64_t)lo + (uint64_t)step - 1) / (uint64_t)step : 0;
    if (trips > MAX_UNROLL) {
        lw_error(cx, op, RK_ERR_INVALID, "unroll = true over %llu iterations; at most %d are unrolled",
                 (unsigned long long)trips, MAX_UNROLL);
        return;
    }
    const rk_region *body = &op->regions[0];
    const rk_op *y = yield_of(body), *tail = trailing_sync(body);
    bool elide = tail && lw_attr_bool(op, "elide_trailing_barrier", true) && starts_with_sync(body);
    rk_value *defs = NULL;
    uint32_t ndefs = 0, cap = 0;
    const char **cur = rk_arena_alloc(&cx->arena, (op->nout + 1u) * sizeof *cur);
    if (!cur || !collect(cx, body, &defs, &ndefs, &cap)) {
        lw_error(cx, op, RK_ERR_NOMEM, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < op->nout; i++) cur[i] = lw_val(cx, op->in[3 + i]);
    rk_type ivt = rk_value_type(cx->k, body->args[0]);
    const char *outer = cx->suffix;
    for (uint64_t it = 0; it < trips && lw_ok(cx); it++) {
        for (uint32_t d = 0; d < ndefs; d++) lw_forget_val(cx, defs[d]);
        cx->suffix = lw_printf(cx, "%s.u%llu", outer, (unsigned long long)it);
        lw_set_val(cx, body->args[0], lw_int_lit(cx, ivt, lo + (int64_t)it * step));
        for (uint32_t i = 0; i < op->nout; i++) lw_set_val(cx, body->args[1 + i], cur[i]);
        for (uint32_t i = 0; i < body->nops && lw_ok(cx); i++) {
            const rk_op *o = body->ops[i];
            if (o->code == RK_OP_YIELD || (o == tail && elide && it + 1 < trips)) continue;
            lw_lower_op(cx, o);
        }
        for (uint32_t i = 0; i < op->nout; i++) cur[i] = lw_val(cx, y->in[i]);
    }
    cx->suffix = outer;
    for (uint32_t i = 0; i < op->nout; i++)
        lw_ins(cx, "%v = bitcast %t %s to %t", op->out[i], op->out[i], cur[i], op->out[i]);
}

/* ---- conditionals ------------------------------------------------------------------------------- */
static void lower_if(lw_ctx *cx, const rk_op *op) {
    const char *T = lw_label(cx, "if.then"), *E = lw_label(cx, "if.end");
    lw_condbr(cx, lw_val(cx, op->in[0]), T, E);
    lw_block(cx, T);
    lw_lower_region(cx, &op->regions[0]);
    lw_br(cx, E);
    lw_block(cx, E);
}

static void lower_if_else(lw_ctx *cx, const rk_op *op) {
    const char *T = lw_label(cx, "if.then"), *F = lw_label(cx, "if.else"), *E = lw_label(cx, "if.end");
    const char *ends[2];
    const char **vals[2];
    lw_condbr(cx, lw_val(cx, op->in[0]), T, F);
    for (int side = 0; side < 2; side++) {
        const rk_region *r = &op->regions[side];
        lw_block(cx, side ? F : T);
        lw_lower_region(cx, r);
        const rk_op *y = yield_of(r);
        vals[side] = rk_arena_alloc(&cx->arena, (op->nout + 1u) * sizeof *vals[side]);
        if (!vals[side]) { lw_error(cx, op, RK_ERR_NOMEM, "out of memory"); return; }
        for (uint32_t i = 0; i < op->nout; i++) vals[side][i] = lw_val(cx, y->in[i]);
        ends[side] = lw_cur_block(cx);
        lw_br(cx, E);
    }
    lw_block(cx, E);
    for (uint32_t i = 0; i < op->nout; i++)
        lw_ins(cx, "%v = phi %t [ %s, %%%s ], [ %s, %%%s ]", op->out[i], op->out[i], vals[0][i], ends[0], vals[1][i],
               ends[1]);
}

void lw_lower_flow(lw_ctx *cx, const rk_op *op) {
    switch (op->code) {
    case RK_OP_FOR:
        if (lw_attr_bool(op, "unroll", false)) lower_unrolled(cx, op);
        else lower_loop(cx, op);
        break;
    case RK_OP_IF: lower_if(cx, op); break;
    case RK_OP_IF_ELSE: lower_if_else(cx, op); break;
    case RK_OP_YIELD: break;   /* read by the op that owns the region */
    case RK_OP_RETURN:
        lw_ins(cx, "ret void");
        cx->terminated = true;
        break;
    LW_GENERIC_OPS(LW_CASE)
    LW_VENDOR_OPS(LW_CASE)
    case RK_OP_INVALID: case RK_OP__COUNT:
        rk_bug("lw_lower_flow called for a non-flow op");
    }
}
