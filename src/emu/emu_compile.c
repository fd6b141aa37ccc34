/* rocke — the emulator's compiler: kernel IR -> flat bytecode for one launch.
 *   1. number ops in pre-order (op #N in messages) and note each op's subtree;
 *   2. live ranges: a value lives from its definition to its last use, and a
 *      use inside a loop that the definition is outside of lasts to the end of
 *      that loop; loop carries live across their loop, if/for results from
 *      the op on;
 *   3. constants, parameters and LDS addresses go to the constant pool (one
 *      splatted copy shared by all waves); LDS allocations get segments;
 *      everything else gets a register slot by linear scan (slots reused by
 *      size class);
 *   4. emit (emu_emit.c): the body, then the end of the kernel.
 * Needs: a kernel that passed rk_target_verify. Layer: emu. */
#include <stdarg.h>
#include <stdio.h>

#include "emu_int.h"

typedef emu_cc cc;
typedef struct loopst { uint32_t idx, last; } loopst;

bool emu_cc_fail(emu_cc *c, rk_status st, const char *fmt, ...) {
    if (!c->failed) {
        va_list ap;
        va_start(ap, fmt);
        rk_vfail(st, fmt, ap);
        va_end(ap);
        c->st = st;
        c->failed = true;
    }
    return false;
}

/* ---- pass 1: numbering ----------------------------------------------------------------- */
static void number(emu_cc *c, const rk_region *r, uint32_t cap) {
    for (uint32_t i = 0; i < r->nops; i++) {
        const rk_op *op = r->ops[i];
        RK_ASSERT(c->nops < cap, "rk_kernel_op_count disagrees with the emulator's op walk");
        uint32_t idx = c->nops++;
        c->ops[idx] = op;
        for (uint32_t j = 0; j < op->nout; j++) c->start[op->out[j].id] = idx;
        for (uint32_t g = 0; g < op->nreg; g++) {
            for (uint32_t a = 0; a < op->regions[g].nargs; a++) c->start[op->regions[g].args[a].id] = idx;
            number(c, &op->regions[g], cap);
        }
        c->last[idx] = c->nops - 1;
    }
}

/* ---- pass 2: live ranges ------------------------------------------------------------------ */
static void use(emu_cc *c, rk_value v, uint32_t u, const loopst *ls, uint32_t nls) {
    uint32_t e = u;
    for (uint32_t i = 0; i < nls; i++)
        if (c->start[v.id] < ls[i].idx) {
            if (ls[i].last > e) e = ls[i].last;
            break;
        }
    if (e > c->end[v.id]) c->end[v.id] = e;
}

static void live(emu_cc *c, const rk_region *r, loopst *ls, uint32_t nls) {
    for (uint32_t i = 0; i < r->nops; i++) {
        const rk_op *op = r->ops[i];
        uint32_t idx = c->cur++;
        uint32_t at = op->code == RK_OP_FOR ? c->last[idx] : idx;   /* bounds are read every trip */
        for (uint32_t j = 0; j < op->nin; j++) use(c, op->in[j], at, ls, nls);
        if (!op->nreg) continue;
        for (uint32_t g = 0; g < op->nreg; g++)
            for (uint32_t a = 0; a < op->regions[g].nargs; a++) {
                uint32_t id = op->regions[g].args[a].id;
                if (c->last[idx] > c->end[id]) c->end[id] = c->last[idx];
            }
        if (op->code == RK_OP_FOR) {
            ls[nls] = (loopst){idx, c->last[idx]};
            live(c, &op->regions[0], ls, nls + 1);
        } else {
            for (uint32_t g = 0; g < op->nreg; g++) live(c, &op->regions[g], ls, nls);
        }
    }
}

/* ---- pass 3: pool, LDS and registers ---------------------------------------------------------- */
uint32_t emu_cc_pool(emu_cc *c, const void *lane0, uint32_t lb) {
    uint32_t bytes = (c->W * lb + 63u) & ~63u;
    if (c->npool + bytes > c->cappool) {
        uint32_t nc = c->cappool ? c->cappool : 4096;
        while (nc < c->npool + bytes) nc *= 2;
        uint8_t *np = rk_realloc(c->pool, c->cappool, nc);
        if (!np) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator"), 0;
        c->pool = np;
        c->cappool = nc;
    }
    uint32_t off = c->npool;
    for (uint32_t l = 0; l < c->W; l++) memcpy(c->pool + off + (size_t)l * lb, lane0, lb);
    memset(c->pool + off + (size_t)c->W * lb, 0, bytes - c->W * lb);
    c->npool += bytes;
    return EMU_CONST | off;
}

static bool place_lds(emu_cc *c) {
    uint32_t n = 0, off = 0;
    for (uint32_t i = 0; i < c->nops; i++) n += c->ops[i]->code == RK_OP_SMEM_ALLOC;
    emu_prog *P = c->P;
    P->smem = rk_arena_zalloc(&P->arena, (n ? n : 1) * sizeof *P->smem);
    if (!P->smem) return emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator");
    for (uint32_t i = 0; i < c->nops; i++) {
        const rk_op *op = c->ops[i];
        if (op->code != RK_OP_SMEM_ALLOC) continue;
        rk_type t = emu_cc_vt(c, op->out[0]);
        emu_smem *s = &P->smem[P->nsmem];
        s->rank = rk_type_rank(c->k, t);
        const uint32_t *dims = rk_type_dims(c->k, t);
        s->es = emu_sbytes(rk_type_scalar(rk_type_elem(c->k, t)));
        uint64_t elems = 1;
        for (uint32_t d = s->rank; d-- > 0;) {
            s->stride[d] = (uint32_t)elems;
            elems *= dims[d];
        }
        if (elems * s->es > UINT32_MAX / 2) return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "LDS allocation too large");
        s->elems = (uint32_t)elems;
        s->bytes = (uint32_t)elems * s->es;
        /* 16-aligned, or the allocation's `align` (TMA destinations: 128, swizzled tiles: up to 1024) */
        int64_t al = 16;
        rk_attrs_int(&op->attrs, "align", &al);
        uint32_t a = al > 16 && al <= 4096 && !(al & (al - 1)) ? (uint32_t)al : 16u;
        off = (off + a - 1u) & ~(a - 1u);
        s->offset = off;
        off += s->bytes;
        char nb[RK_NAME_MAX];
        s->name = rk_arena_printf(&P->arena, "%%%s", rk_value_name(c->k, op->out[0], nb));
        s->type = rk_type_name(c->k, t);
        c->smem[op->out[0].id] = (int32_t)P->nsmem++;
    }
    P->lds_static = (off + 15u) & ~15u;
    return true;
}

static uint32_t size_class(uint32_t bytes) {
    uint32_t k = 6;                  /* 64-byte minimum */
    while ((1u << k) < bytes) k++;
    return k;
}

/* ids sorted by key (a value in [0, nkeys)): counting sort, stable. */
static bool sort_by(const uint32_t *ids, uint32_t n, const uint32_t *key, uint32_t nkeys, uint32_t *out) {
    uint32_t *cnt = rk_calloc((size_t)nkeys + 1, sizeof *cnt);
    if (!cnt) return false;
    for (uint32_t i = 0; i < n; i++) cnt[key[ids[i]] + 1]++;
    for (uint32_t k = 0; k < nkeys; k++) cnt[k + 1] += cnt[k];
    for (uint32_t i = 0; i < n; i++) out[cnt[key[ids[i]]]++] = ids[i];
    rk_free(cnt, ((size_t)nkeys + 1) * sizeof *cnt);
    return true;
}

static bool alloc_regs(emu_cc *c) {
    uint32_t nv = c->nvals, n = 0;
    uint32_t *ids = rk_malloc(sizeof(uint32_t) * nv), *order = rk_malloc(sizeof(uint32_t) * nv);
    uint32_t *byend = rk_malloc(sizeof(uint32_t) * nv), *next = rk_malloc(sizeof(uint32_t) * nv);
    bool ok = ids && order && byend && next;
    if (ok) {
        for (uint32_t id = 1; id < nv; id++)
            if (c->start[id] != UINT32_MAX && !c->pooled[id] && c->lbytes[id]) ids[n++] = id;
        ok = sort_by(ids, n, c->start, c->nops + 1, order) && sort_by(ids, n, c->end, c->nops + 1, byend);
    }
    if (ok) {
        /* linear scan: before a value is defined, free the slots of every
         * value whose range ended earlier; reuse a free slot of its class */
        uint32_t free_head[32], fi = 0;
        for (int k = 0; k < 32; k++) free_head[k] = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t id = order[i];
            for (; fi < n && c->end[byend[fi]] < c->start[id]; fi++) {
                uint32_t f = byend[fi], k = size_class(c->W * c->lbytes[f]);
                next[f] = free_head[k];
                free_head[k] = f;
            }
            uint32_t k = size_class(c->W * c->lbytes[id]);
            if (free_head[k] != UINT32_MAX) {
                uint32_t f = free_head[k];
                free_head[k] = next[f];
                c->ref[id] = c->ref[f];
            } else {
                c->ref[id] = c->regs;
                c->regs += 1u << k;
            }
        }
    }
    rk_free(ids, 0);
    rk_free(order, 0);
    rk_free(byend, 0);
    rk_free(next, 0);
    return ok || emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator");
}

/* ---- driver ---------------------------------------------------------------------------------- */
/* A V# argument must not cover bytes past its base's own buffer. */
static bool rsrc_fits(emu_cc *c, const rk_param *p, const emu_vsharp *v) {
    size_t left = emu_prov_room(c->emu, v->prov, v->base);
    if (!v->prov || !v->nrec || v->nrec <= left) return true;
    return emu_cc_fail(c, RK_ERR_INVALID, "parameter %%%s: the buffer resource covers [0x%llx, 0x%llx) (num_records "
                       "%u) but its buffer has only %zu bytes from the base", p->name, (unsigned long long)v->base,
                       (unsigned long long)(v->base + v->nrec), v->nrec, left);
}

static bool params(emu_cc *c) {
    uint32_t np = rk_kernel_nparams(c->k);
    if (np && !c->args) return emu_cc_fail(c, RK_ERR_INVALID, "kernel '%s' takes %u arguments but args is NULL",
                                     rk_kernel_name(c->k), np);
    for (uint32_t i = 0; i < np; i++) {
        const rk_param *p = rk_kernel_param(c->k, i);
        if (!c->args[i])
            return emu_cc_fail(c, RK_ERR_INVALID, "argument %u (%%%s) of kernel '%s' is NULL", i, p->name, rk_kernel_name(c->k));
        rk_type_kind kd = rk_type_kind_of(c->k, p->type);
        if (kd == RK_TK_SMEM || kd == RK_TK_NONE)
            return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "parameter %%%s has type %s, which cannot be passed", p->name,
                         rk_type_name(c->k, p->type));
        uint32_t lb = c->lbytes[p->value.id];
        uint8_t lane[512] = {0};
        if (kd == RK_TK_RSRC) {
            /* a V#: base in dwords 0-1 (48 bits), num_records in dword 2 */
            uint32_t dw[4];
            memcpy(dw, c->args[i], 16);
            emu_vsharp v = {dw[0] | ((uint64_t)(dw[1] & 0xffffu) << 32), dw[2], dw[3], 0};
            v.prov = emu_prov_of(c->emu, v.base, i);
            if (!rsrc_fits(c, p, &v)) return false;
            memcpy(lane, &v, sizeof v);
        } else if (kd == RK_TK_PTR) {
            /* the address and the provenance of the buffer it lies in (a
             * tensor map is read whole by the ops that take it) */
            emu_fatptr fp = {0, 0};
            memcpy(&fp.addr, c->args[i], 8);
            if (!rk_attrs_bool(&p->attrs, "tensormap", false)) fp.prov = emu_prov_of(c->emu, fp.addr, i);
            memcpy(lane, &fp, sizeof fp);
        } else if (rk_scalar_bits(emu_cc_esc(c, p->type)) < 8) {
            /* i1 / i4 by a byte each, masked */
            uint32_t n = emu_cc_cnt(c, p->type), bits = rk_scalar_bits(emu_cc_esc(c, p->type));
            const uint8_t *src = c->args[i];
            for (uint32_t j = 0; j < n && j < sizeof lane; j++)
                lane[j] = (uint8_t)((src[j * bits / 8] >> (j * bits % 8)) & ((1u << bits) - 1u));
        } else {
            if (lb > sizeof lane) return emu_cc_fail(c, RK_ERR_UNSUPPORTED, "parameter %%%s is too large", p->name);
            memcpy(lane, c->args[i], lb);
        }
        c->ref[p->value.id] = emu_cc_pool(c, lane, lb);
        if (c->failed) return false;
    }
    return true;
}

static void cc_free(emu_cc *c) {
    uint32_t nv = c->nvals;
    rk_free(c->ref, nv * sizeof(uint32_t));
    rk_free(c->start, nv * sizeof(uint32_t));
    rk_free(c->end, nv * sizeof(uint32_t));
    rk_free(c->lbytes, nv * sizeof(uint32_t));
    rk_free(c->pooled, nv * sizeof(bool));
    rk_free(c->smem, nv * sizeof(int32_t));
    rk_free(c->last, 0);
    rk_free(c->rets, c->caprets * sizeof(uint32_t));
    rk_free(c->code, c->capc * sizeof(emu_ins));
    rk_free(c->pool, c->cappool);
}

void emu_prog_free(emu_prog *p) {
    if (!p) return;
    rk_free(p->code, 0);
    rk_free(p->cpool, 0);
    rk_free((void *)p->ops, 0);
    rk_arena_free(&p->arena);
    rk_free(p, sizeof *p);
}

rk_status emu_compile(const rk_emu *emu, const rk_kernel *k, uint32_t dynamic_lds, void *const *args, emu_prog **out) {
    const rk_target *t = emu->t;
    cc C = {.emu = emu, .k = k, .t = t, .W = t->wave_size, .args = args, .st = RK_OK};
    emu_cc *c = &C;
    *out = NULL;
    emu_prog *P = rk_calloc(1, sizeof *P);
    if (!P) return rk_fail(RK_ERR_NOMEM, "out of memory compiling for the emulator");
    rk_arena_init(&P->arena);
    c->P = P;
    P->k = k;
    P->t = t;
    P->W = c->W;
    uint64_t nops64 = rk_kernel_op_count(k);
    c->nvals = rk_kernel_nvalues(k) + 1;
    uint32_t nv = c->nvals, nops = (uint32_t)nops64;
    c->ref = rk_malloc(nv * sizeof(uint32_t));
    c->start = rk_malloc(nv * sizeof(uint32_t));
    c->end = rk_malloc(nv * sizeof(uint32_t));
    c->lbytes = rk_calloc(nv, sizeof(uint32_t));
    c->pooled = rk_calloc(nv, sizeof(bool));
    c->smem = rk_malloc(nv * sizeof(int32_t));
    c->ops = rk_malloc((nops ? nops : 1) * sizeof *c->ops);
    P->ops = c->ops;            /* the program owns it: messages name ops by index */
    c->last = rk_malloc((nops ? nops : 1) * sizeof(uint32_t));
    if (!c->ref || !c->start || !c->end || !c->lbytes || !c->pooled || !c->smem || !c->ops || !c->last) {
        emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator");
        goto fail;
    }
    for (uint32_t i = 0; i < nv; i++) {
        c->ref[i] = UINT32_MAX;
        c->start[i] = UINT32_MAX;
        c->end[i] = 0;
        c->smem[i] = -1;
        c->lbytes[i] = emu_cc_lane_bytes(c, rk_value_type(k, (rk_value){i}));
    }
    number(c, rk_kernel_body(k), nops);
    P->nops = c->nops;
    for (uint32_t i = 0; i < rk_kernel_nparams(k); i++) {
        uint32_t id = rk_kernel_param(k, i)->value.id;
        c->start[id] = 0;
        c->pooled[id] = true;
    }
    for (uint32_t i = 0; i < c->nops; i++) {
        const rk_op *op = c->ops[i];
        if (op->code == RK_OP_CONSTANT || op->code == RK_OP_CONSTANT_VEC || op->code == RK_OP_SMEM_ADDR_OF ||
            op->code == RK_OP_SMEM_ALLOC)
            c->pooled[op->out[0].id] = true;
    }
    for (uint32_t i = 0; i < nv; i++)
        if (c->start[i] != UINT32_MAX) c->end[i] = c->start[i];
    loopst *ls = rk_malloc(sizeof(loopst) * (c->nops + 1));
    if (!ls) { emu_cc_fail(c, RK_ERR_NOMEM, "out of memory compiling for the emulator"); goto fail; }
    c->cur = 0;
    live(c, rk_kernel_body(k), ls, 0);
    rk_free(ls, 0);
    if (!place_lds(c) || !params(c) || !alloc_regs(c)) goto fail;
    P->lds_total = P->lds_static + ((dynamic_lds + 15u) & ~15u);
    if (!emu_cc_kernel(c)) goto fail;
    P->code = c->code;
    P->ncode = c->ncode;
    P->cpool = c->pool;
    P->cpool_bytes = c->npool;
    P->regs_bytes = c->regs ? c->regs : 64;
    c->code = NULL;
    c->capc = 0;
    c->pool = NULL;
    c->cappool = 0;
    cc_free(c);
    *out = P;
    return RK_OK;
fail:
    cc_free(c);
    emu_prog_free(P);
    return c->st ? c->st : RK_ERR_INVALID;
}
