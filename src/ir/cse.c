/* rocke — common-subexpression elimination. Does: drops a pure op that
 * repeats an earlier one (same opcode, operands — commutative pairs in either
 * order —, attributes and result types) and redirects its uses. Needs: a
 * verified kernel. Guarantees: the surviving op dominates every use it takes
 * over — an op may stand in for a later one in its own region or in a region
 * nested inside it, never the reverse (a scoped table forgets a region's ops
 * when the region ends); convergent ops (cross-lane reads) merge only within
 * one region and with no barrier, wait, exec-mask change or inline asm in
 * between, since the set of active lanes may differ. Ops that are not pure
 * (memory, barriers, mma, asm, control flow) are never merged. Layer: ir. */
#include "ir_int.h"

typedef struct centry {
    uint64_t hash;
    rk_op *op;
    const rk_region *region;
    uint32_t epoch;            /* lane-set epoch at the op (convergent ops) */
    uint32_t next;             /* next entry in the bucket + 1, 0 = end */
} centry;

typedef struct cctx {
    rk_kernel *k;
    ir_rewrite rw;
    uint32_t *heads;           /* bucket -> entry index + 1 */
    uint32_t mask;
    centry *e;
    uint32_t n, cap;
    uint32_t epoch;
    uint32_t merged;
} cctx;

static bool commutes(const rk_op *op) {
    return (rk_op_info_of(op->code)->flags & RK_F_COMMUT) && op->nin == 2;
}

static uint64_t op_hash(const rk_kernel *k, const rk_op *op) {
    uint64_t h = rk_hash_u64((uint64_t)op->code, 0);
    h = rk_hash_u64(((uint64_t)op->nin << 16) | op->nout, h);
    if (commutes(op)) {
        uint32_t a = op->in[0].id, b = op->in[1].id;
        h = rk_hash_u64(a < b ? a : b, h);
        h = rk_hash_u64(a < b ? b : a, h);
    } else {
        for (uint32_t i = 0; i < op->nin; i++) h = rk_hash_u64(op->in[i].id, h);
    }
    for (uint32_t i = 0; i < op->nout; i++) h = rk_hash_u64(rk_value_type(k, op->out[i]).id, h);
    return rk_hash_u64(ir_attrs_hash(&op->attrs), h);
}

static bool same_op(const rk_kernel *k, const rk_op *a, const rk_op *b) {
    if (a->code != b->code || a->nin != b->nin || a->nout != b->nout) return false;
    if (commutes(a)) {
        bool straight = rk_value_eq(a->in[0], b->in[0]) && rk_value_eq(a->in[1], b->in[1]);
        bool crossed = rk_value_eq(a->in[0], b->in[1]) && rk_value_eq(a->in[1], b->in[0]);
        if (!straight && !crossed) return false;
    } else {
        for (uint32_t i = 0; i < a->nin; i++)
            if (!rk_value_eq(a->in[i], b->in[i])) return false;
    }
    for (uint32_t i = 0; i < a->nout; i++)
        if (!rk_type_eq(rk_value_type(k, a->out[i]), rk_value_type(k, b->out[i]))) return false;
    return ir_attrs_eq(&a->attrs, &b->attrs);
}

static bool candidate(const rk_op *op) { return op->nreg == 0 && op->nout > 0 && ir_op_is_pure(op); }

/* Ops after which convergent ops see a possibly different set of lanes. */
static bool changes_lanes(const rk_op *op) {
    uint32_t f = rk_op_info_of(op->code)->flags;
    return (f & RK_F_BARRIER) || op->code == RK_OP_INLINE_ASM;
}

static const rk_op *lookup(const cctx *c, const rk_op *op, uint64_t h, const rk_region *r) {
    bool conv = (rk_op_info_of(op->code)->flags & RK_F_CONVERGENT) != 0;
    for (uint32_t i = c->heads[h & c->mask]; i; i = c->e[i - 1].next) {
        const centry *e = &c->e[i - 1];
        if (e->hash != h || !same_op(c->k, e->op, op)) continue;
        if (conv && (e->region != r || e->epoch != c->epoch)) continue;
        return e->op;
    }
    return NULL;
}

static void cse_region(cctx *c, rk_region *r) {
    uint32_t mark = c->n, w = 0;
    for (uint32_t i = 0; i < r->nops; i++) {
        rk_op *op = r->ops[i];
        ir_rewrite_operands(&c->rw, op);
        for (uint32_t j = 0; j < op->nreg; j++) cse_region(c, &op->regions[j]);
        if (changes_lanes(op)) c->epoch++;
        if (candidate(op)) {
            uint64_t h = op_hash(c->k, op);
            const rk_op *prev = lookup(c, op, h, r);
            if (prev) {
                for (uint32_t j = 0; j < op->nout; j++)
                    if (op->out[j].id < c->rw.n) c->rw.to[op->out[j].id] = prev->out[j];
                c->merged++;
                continue;
            }
            RK_ASSERT(c->n < c->cap, "CSE table sized from the op count");
            c->e[c->n] = (centry){h, op, r, c->epoch, c->heads[h & c->mask]};
            c->heads[h & c->mask] = ++c->n;
        }
        r->ops[w++] = op;
    }
    r->nops = w;
    /* forget this region's ops: the most recent entry of each bucket goes first */
    while (c->n > mark) {
        centry *e = &c->e[--c->n];
        c->heads[e->hash & c->mask] = e->next;
    }
}

rk_status ir_cse(rk_kernel *k, uint32_t *merged) {
    cctx c = {.k = k};
    *merged = 0;
    uint64_t nops = rk_kernel_op_count(k);
    if (nops > UINT32_MAX / 4) return RK_ERR_NOMEM;
    uint32_t nb = 16;
    while (nb < 2 * nops) nb *= 2;
    c.mask = nb - 1;
    c.cap = (uint32_t)nops;
    c.rw.n = k->nvals;
    c.heads = rk_calloc(nb, sizeof *c.heads);
    c.e = rk_malloc((c.cap ? c.cap : 1) * sizeof *c.e);
    c.rw.to = rk_calloc(c.rw.n, sizeof *c.rw.to);
    rk_status st = RK_ERR_NOMEM;
    if (c.heads && c.e && c.rw.to) {
        cse_region(&c, &k->body);
        *merged = c.merged;
        st = RK_OK;
    }
    rk_free(c.heads, nb * sizeof *c.heads);
    rk_free(c.e, (c.cap ? c.cap : 1) * sizeof *c.e);
    rk_free(c.rw.to, c.rw.n * sizeof *c.rw.to);
    return st;
}
