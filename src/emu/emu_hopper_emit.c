/* rocke — code emission for the Hopper ops (wgmma, mbarriers, TMA, the
 * async-proxy fence), and the static check that no op reads a wgmma result
 * before a tile.wgmma_wait_group hands it on. Layer: emu. */
#include <stdio.h>

#include "emu_int.h"

static uint32_t R(const emu_cc *c, rk_value v) { return c->ref[v.id]; }

static const emu_smem *smem_of(emu_cc *c, const rk_op *op, uint32_t i) {
    int32_t si = c->smem[op->in[i].id];
    if (si < 0) {
        emu_cc_fail(c, RK_ERR_UNSUPPORTED, "emulator: op #%u '%s': operand %u is not a tile.smem_alloc result", c->cur,
                    rk_opcode_name(op->code), i);
        return NULL;
    }
    return &c->P->smem[si];
}

/* ---- in-flight wgmma results ------------------------------------------------------------ */
/* A value fed by several wgmmas (a loop argument whose init and yield are
 * different ones) keeps the first found, so the fixpoint ends; the wait's
 * pending check then looks at that source. */
static bool mark(uint32_t *src, rk_value v, uint32_t s) {
    if (!s || src[v.id]) return false;
    src[v.id] = s;
    return true;
}

/* One pass: wgmma results are in flight; yields and loop inits carry the
 * property to the results and loop arguments they feed. True if it grew. */
static bool propagate(emu_cc *c, uint32_t *src) {
    bool grew = false;
    for (uint32_t i = 0; i < c->nops; i++) {
        const rk_op *op = c->ops[i];
        if (op->code == RK_OP_WGMMA || op->code == RK_OP_WGMMA_RS) grew |= mark(src, op->out[0], i + 1);
        if (op->code == RK_OP_FOR)
            for (uint32_t j = 3; j < op->nin && j - 3 < op->nout; j++) {
                grew |= mark(src, op->out[j - 3], src[op->in[j].id]);
                grew |= mark(src, op->regions[0].args[j - 2], src[op->in[j].id]);
            }
        if (op->code == RK_OP_YIELD && op->parent && op->parent->owner) {
            const rk_op *own = op->parent->owner;
            for (uint32_t j = 0; j < op->nin && j < own->nout; j++) {
                grew |= mark(src, own->out[j], src[op->in[j].id]);
                if (own->code == RK_OP_FOR) grew |= mark(src, op->parent->args[1 + j], src[op->in[j].id]);
            }
        }
    }
    return grew;
}

/* Only a chained wgmma (accumulator operand), the wait, and the control flow
 * that carries a value may see an in-flight result. */
static bool check_uses(emu_cc *c, const uint32_t *src) {
    for (uint32_t i = 0; i < c->nops; i++) {
        const rk_op *op = c->ops[i];
        for (uint32_t j = 0; j < op->nin; j++) {
            uint32_t s = src[op->in[j].id];
            if (!s || op->code == RK_OP_WGMMA_WAIT_GROUP || op->code == RK_OP_YIELD) continue;
            if (((op->code == RK_OP_WGMMA || op->code == RK_OP_WGMMA_RS) && j == 0) || (op->code == RK_OP_FOR && j >= 3)) continue;
            char nb[RK_NAME_MAX];
            return emu_cc_fail(c, RK_ERR_DEVICE, "emulator: op #%u '%s' reads %%%s, the in-flight result of op #%u "
                               "'tile.wgmma', before a tile.wgmma_wait_group hands it on (the registers are undefined "
                               "until then)", i, rk_opcode_name(op->code), rk_value_name(c->k, op->in[j], nb), s - 1);
        }
    }
    return true;
}

static bool analyse(emu_cc *c) {
    if (c->wg_src) return true;
    c->wg_src = rk_arena_alloc(&c->P->arena, sizeof(uint32_t) * c->nvals);
    if (!c->wg_src) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator");
    memset(c->wg_src, 0, sizeof(uint32_t) * c->nvals);
    while (propagate(c, c->wg_src)) {}
    return check_uses(c, c->wg_src);
}

/* ---- the ops ------------------------------------------------------------------------------- */
static bool wgmma_desc(emu_cc *c, const rk_op *op) {
    const emu_smem *s = smem_of(c, op, 0);
    emu_ins *I = s ? emu_cc_add(c, op, emu_h_wgmma_desc) : NULL;
    if (!I) return false;
    int64_t lbo = 0, sbo = 0, sw = 0;
    rk_attrs_int(&op->attrs, "lbo", &lbo);
    rk_attrs_int(&op->attrs, "sbo", &sbo);
    rk_attrs_int(&op->attrs, "swizzle", &sw);
    int64_t mode = sw == 128 ? 1 : sw == 64 ? 2 : sw == 32 ? 3 : 0;
    I->aux = s;
    I->a = R(c, op->in[1]);
    I->d = R(c, op->out[0]);
    I->es = s->es;
    I->imm = (int64_t)(((uint64_t)(lbo >> 4) & 0x3FFFu) << 16 | ((uint64_t)(sbo >> 4) & 0x3FFFu) << 32 |
                       (uint64_t)mode << 62);
    return true;
}

/* tile.wgmma and tile.wgmma_rs (A from registers: no A allocation, no
 * trans_a, and always a fence since the registers were written). */
static bool wgmma(emu_cc *c, const rk_op *op) {
    bool rs = op->code == RK_OP_WGMMA_RS;
    const emu_smem **from = rk_arena_alloc(&c->P->arena, 2 * sizeof *from);
    emu_ins *I = from ? emu_cc_add(c, op, rs ? emu_h_wgmma_rs : emu_h_wgmma) : NULL;
    if (!I) return from || emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator");
    from[0] = rs ? NULL : emu_cc_lds_origin(c, op->in[1]);   /* the allocations the descriptors were made for */
    from[1] = emu_cc_lds_origin(c, op->in[2]);
    I->aux = from;
    int64_t n = 8;
    rk_attrs_int(&op->attrs, "n", &n);
    const char *dt = rk_attrs_str(&op->attrs, "dtype");
    I->d = R(c, op->out[0]);
    I->a = R(c, op->in[0]);
    I->b = R(c, op->in[1]);
    I->c = R(c, op->in[2]);
    I->m = (uint32_t)n;
    I->sa = !dt ? RK_S_F16 : !strcmp(dt, "bf16") ? RK_S_BF16 : !strcmp(dt, "e4m3") ? RK_S_FP8E4M3
          : !strcmp(dt, "e5m2") ? RK_S_BF8E5M2 : RK_S_F16;
    I->imm = (!rs && rk_attrs_bool(&op->attrs, "trans_a", false) ? 1 : 0) |
             (rk_attrs_bool(&op->attrs, "trans_b", false) ? 2 : 0) | (rk_attrs_bool(&op->attrs, "scale_d", true) ? 4 : 0) |
             (!rs && c->wg_src[op->in[0].id] ? 8 : 0);
    return true;
}

static bool wgmma_wait(emu_cc *c, const rk_op *op) {
    uint32_t *a = emu_cc_refs(c, 4u * op->nin);
    emu_ins *I = a ? emu_cc_add(c, op, emu_h_wgmma_wait) : NULL;
    if (!I) return false;
    rk_attrs_int(&op->attrs, "n", &I->imm);
    for (uint32_t j = 0; j < op->nin; j++) {
        uint32_t s = c->wg_src[op->in[j].id];
        a[4 * j] = R(c, op->in[j]);
        a[4 * j + 1] = R(c, op->out[j]);
        a[4 * j + 2] = emu_cc_lane_bytes(c, emu_cc_vt(c, op->in[j]));
        a[4 * j + 3] = s ? s - 1 : UINT32_MAX;
    }
    I->args = a;
    I->nargs = 4u * op->nin;
    return true;
}

static bool mbarrier(emu_cc *c, const rk_op *op, emu_fn fn, int64_t imm) {
    const emu_smem *s = smem_of(c, op, 0);
    emu_ins *I = s ? emu_cc_add(c, op, fn) : NULL;
    if (!I) return false;
    I->aux = s;
    I->a = R(c, op->in[1]);
    if (op->nin > 2) I->b = R(c, op->in[2]);
    I->imm = imm;
    c->P->has_mbar = true;
    return true;
}

/* The decoded tensor map of operand 0 (its value is the launch's argument). */
static emu_tma_op *tma_map(emu_cc *c, const rk_op *op) {
    const char *nm = rk_opcode_name(op->code);
    uint32_t pi = UINT32_MAX;
    for (uint32_t i = 0; i < rk_kernel_nparams(c->k); i++)
        if (rk_value_eq(rk_kernel_param(c->k, i)->value, op->in[0])) pi = i;
    if (pi == UINT32_MAX || !c->args || !c->args[pi])
        return emu_cc_fail(c, RK_ERR_INVALID, "emulator: op #%u '%s': operand 0 must be a tensormap parameter with a "
                           "value", c->cur, nm), NULL;
    emu_tma_op *t = rk_arena_alloc(&c->P->arena, sizeof *t);
    if (!t) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator"), NULL;
    memset(t, 0, sizeof *t);
    char why[300];
    if (!emu_tmap_decode(c->args[pi], &t->map, why, sizeof why))
        return emu_cc_fail(c, RK_ERR_INVALID, "emulator: op #%u '%s': parameter %%%s: %s", c->cur, nm,
                           rk_kernel_param(c->k, pi)->name, why), NULL;
    t->prov = emu_prov_of(c->emu, t->map.base, pi);
    return t;
}

/* aux = map and source; a = src_idx, b = x, c = y. */
static bool tma_store(emu_cc *c, const rk_op *op) {
    emu_tma_op *t = tma_map(c, op);
    if (!t) return false;
    if (t->map.rank != 2)
        return emu_cc_fail(c, RK_ERR_INVALID, "emulator: op #%u '%s': the tensor map has rank %u, the op writes rank 2",
                           c->cur, rk_opcode_name(op->code), t->map.rank);
    t->dst = smem_of(c, op, 1);   /* the source, here */
    emu_ins *I = t->dst ? emu_cc_add(c, op, emu_h_tma_store) : NULL;
    if (!I) return false;
    I->aux = t;
    I->a = R(c, op->in[2]);
    I->b = R(c, op->in[3]);
    I->c = R(c, op->in[4]);
    return true;
}

/* multicast: args[1] = the CTA mask; 4-D: args[0..2] = x1, x2, x3 (imm 4) */
static bool tma_load(emu_cc *c, const rk_op *op) {
    bool mc = op->code == RK_OP_TMA_LOAD_2D_MULTICAST, d4 = op->code == RK_OP_TMA_LOAD_4D;
    emu_tma_op *t = tma_map(c, op);
    if (t && t->map.rank != (d4 ? 4u : 2u))
        return emu_cc_fail(c, RK_ERR_INVALID, "emulator: op #%u '%s': the tensor map has rank %u, the op reads rank %u",
                           c->cur, rk_opcode_name(op->code), t->map.rank, d4 ? 4u : 2u);
    uint32_t *a = t ? emu_cc_refs(c, mc ? 2 : d4 ? 3 : 1) : NULL;
    if (!a) return t ? emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator") : false;
    t->dst = smem_of(c, op, 1);
    t->bars = t->dst ? smem_of(c, op, 3) : NULL;
    emu_ins *I = t->bars ? emu_cc_add(c, op, emu_h_tma_load) : NULL;
    if (!I) return false;
    I->aux = t;
    I->a = R(c, op->in[2]);
    I->b = R(c, op->in[4]);
    I->c = R(c, op->in[5]);
    a[0] = R(c, op->in[6]);
    if (mc || d4) a[1] = R(c, op->in[7]);
    if (d4) a[2] = R(c, op->in[8]);
    I->args = a;
    I->nargs = mc ? 2 : d4 ? 3 : 1;
    I->imm = d4 ? 4 : 2;
    c->P->has_mbar = true;
    return true;
}

/* imm = regs, m = 1 for inc (0 dec). */
static bool setmaxnreg(emu_cc *c, const rk_op *op) {
    emu_ins *I = emu_cc_add(c, op, emu_h_setmaxnreg);
    if (!I) return false;
    rk_attrs_int(&op->attrs, "regs", &I->imm);
    const char *act = rk_attrs_str(&op->attrs, "action");
    I->m = act && !strcmp(act, "inc");
    return true;
}

/* The emu_emit.c switch sends exactly these ops here. */
bool emu_cc_hopper(emu_cc *c, const rk_op *op) {
    rk_opcode k = op->code;
    if (k == RK_OP_WGMMA_DESC) return wgmma_desc(c, op);
    if (k == RK_OP_WGMMA || k == RK_OP_WGMMA_RS) return analyse(c) && wgmma(c, op);
    if (k == RK_OP_WGMMA_FENCE) return emu_cc_add(c, op, emu_h_wgmma_fence) != NULL;
    if (k == RK_OP_WGMMA_COMMIT_GROUP) return emu_cc_add(c, op, emu_h_wgmma_commit) != NULL;
    if (k == RK_OP_WGMMA_WAIT_GROUP) return analyse(c) && wgmma_wait(c, op);
    /* one memory view in the emulator: the generic and async proxies agree */
    if (k == RK_OP_FENCE_PROXY_ASYNC) return emu_cc_add(c, op, emu_h_fence) != NULL;
    if (k == RK_OP_MBARRIER_INIT) return mbarrier(c, op, emu_h_mbar_init, 0);
    if (k == RK_OP_MBARRIER_ARRIVE) return mbarrier(c, op, emu_h_mbar_arrive, 0);
    if (k == RK_OP_MBARRIER_ARRIVE_EXPECT_TX) return mbarrier(c, op, emu_h_mbar_arrive, 1);
    if (k == RK_OP_MBARRIER_WAIT) return mbarrier(c, op, emu_h_mbar_wait, 0);
    if (k == RK_OP_SETMAXNREG) return setmaxnreg(c, op);
    if (k == RK_OP_TMA_STORE_2D) return tma_store(c, op);
    /* a TMA store is done at issue (emu_tma.c): nothing is pending, so groups need no bookkeeping */
    if (k == RK_OP_BULK_COMMIT_GROUP || k == RK_OP_BULK_WAIT_GROUP) return emu_cc_add(c, op, emu_h_fence) != NULL;
    /* mbarrier inits are visible to the whole cluster at once in the emulator */
    if (k == RK_OP_FENCE_MBARRIER_INIT) return emu_cc_add(c, op, emu_h_fence) != NULL;
    if (k == RK_OP_MBARRIER_ARRIVE_CLUSTER) return mbarrier(c, op, emu_h_mbar_arrive_cluster, 0);
    if (k == RK_OP_CLUSTER_ARRIVE || k == RK_OP_CLUSTER_WAIT) {
        emu_ins *I = emu_cc_add(c, op, k == RK_OP_CLUSTER_WAIT ? emu_h_cluster_wait : emu_h_cluster_arrive);
        return I != NULL;
    }
    RK_ASSERT(k == RK_OP_TMA_LOAD_2D || k == RK_OP_TMA_LOAD_2D_MULTICAST || k == RK_OP_TMA_LOAD_4D,
              "emu_cc_hopper called for an op outside the Hopper family");
    return tma_load(c, op);
}
