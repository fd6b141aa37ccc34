/* rocke — the LDS pool: every tile.smem_alloc of a kernel lives in one
 * addrspace(3) byte array, packed by liveness so allocations whose lifetimes
 * do not overlap share bytes; and the address arithmetic of LDS accesses.
 * Layer: lower.
 *
 * Liveness: ops are numbered in pre-order (an op before its regions). An
 * allocation lives from its definition to its last use as an operand; a use
 * inside an scf.for extends to the end of the outermost loop around it (the
 * data may be read again next iteration); an allocation whose address escapes
 * (tile.smem_addr_of) or that is marked `exclusive` lives to the end of the
 * kernel and is never shared. Other threads may lag behind, so a lifetime
 * runs on to the next block barrier (tile.sync, tile.sync_lds_only).
 * Unused allocations take no space. Placement is first fit in order of
 * definition: the lowest aligned offset that overlaps no allocation alive
 * at the same time. Every allocation is 16-byte aligned
 * so vector accesses of up to 16 bytes keep their natural alignment; an
 * `align` attribute asks for more (TMA destinations and swizzled wgmma
 * operands need 128 or 1024). A vendor may declare a pool above its static
 * limit as external (dynamic shared memory on NVIDIA, sized at launch). */
#include <stdio.h>

#include "lower_int.h"

enum { POOL_ALIGN = 16 };
#define LIVE_FOREVER UINT32_MAX

typedef struct alloc {
    rk_value v;
    uint32_t start, end;      /* pre-order interval */
    uint32_t size;            /* bytes */
    uint32_t align;           /* power of two >= POOL_ALIGN */
    uint32_t off;
    bool used, pinned;        /* pinned: exclusive or address taken */
} alloc;

typedef struct pool {
    lw_ctx *cx;
    alloc *a;
    uint32_t n, cap;
    uint32_t *of;             /* value id -> index + 1 into a, 0 = not an allocation */
    uint32_t idx;             /* pre-order counter */
    uint32_t *loop_users;     /* allocations used inside the current outermost loop */
    uint32_t nusers, users_cap;
    uint32_t *bars;           /* pre-order numbers of block barriers, ascending */
    uint32_t nbars, bars_cap;
} pool;

static void use(pool *p, rk_value v, uint32_t at, bool in_loop, bool escapes) {
    uint32_t i = v.id < p->cx->k->nvals ? p->of[v.id] : 0;
    if (!i) return;
    alloc *a = &p->a[i - 1];
    a->used = true;
    if (escapes) a->pinned = true;
    if (at > a->end) a->end = at;
    if (in_loop) {
        uint32_t *u = rk_arena_grow(&p->cx->arena, p->loop_users, sizeof *u, &p->users_cap, p->nusers + 1);
        if (!u) { lw_error(p->cx, NULL, RK_ERR_NOMEM, "out of memory laying out LDS"); return; }
        p->loop_users = u;
        p->loop_users[p->nusers++] = i - 1;
    }
}

static void walk(pool *p, const rk_region *r, bool in_loop) {
    for (uint32_t i = 0; i < r->nops && lw_ok(p->cx); i++) {
        const rk_op *op = r->ops[i];
        uint32_t at = p->idx++;
        if (op->code == RK_OP_SYNC || op->code == RK_OP_SYNC_LDS_ONLY) {
            uint32_t *b = rk_arena_grow(&p->cx->arena, p->bars, sizeof *b, &p->bars_cap, p->nbars + 1);
            if (!b) { lw_error(p->cx, op, RK_ERR_NOMEM, "out of memory laying out LDS"); return; }
            p->bars = b;
            p->bars[p->nbars++] = at;
        }
        if (op->code == RK_OP_SMEM_ALLOC) {
            alloc *as = rk_arena_grow(&p->cx->arena, p->a, sizeof *as, &p->cap, p->n + 1);
            if (!as) { lw_error(p->cx, op, RK_ERR_NOMEM, "out of memory laying out LDS"); return; }
            p->a = as;
            rk_type t = rk_value_type(p->cx->k, op->out[0]);
            p->a[p->n] = (alloc){.v = op->out[0], .start = at, .end = at,
                                 .size = (rk_type_bits(p->cx->k, t) + 7) / 8,
                                 .align = (uint32_t)lw_attr_int(op, "align", POOL_ALIGN),
                                 .pinned = lw_attr_bool(op, "exclusive", false)};
            p->of[op->out[0].id] = ++p->n;
        }
        for (uint32_t j = 0; j < op->nin; j++) use(p, op->in[j], at, in_loop, op->code == RK_OP_SMEM_ADDR_OF);
        bool outermost = op->code == RK_OP_FOR && !in_loop;
        uint32_t first_user = p->nusers;
        for (uint32_t j = 0; j < op->nreg; j++) walk(p, &op->regions[j], in_loop || op->code == RK_OP_FOR);
        if (outermost) {
            uint32_t end = p->idx - 1;      /* last op of the loop's subtree */
            for (uint32_t u = first_user; u < p->nusers; u++)
                if (p->a[p->loop_users[u]].end < end) p->a[p->loop_users[u]].end = end;
            p->nusers = first_user;
        }
    }
}

static bool overlap_time(const alloc *a, const alloc *b) { return !(a->end < b->start || b->end < a->start); }
static bool overlap_bytes(uint32_t o1, uint32_t s1, uint32_t o2, uint32_t s2) { return o1 < o2 + s2 && o2 < o1 + s1; }
static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

/* Lowest aligned offset for a[i] clear of every placed allocation alive
 * with it; candidates are 0 and the aligned end of each of those. */
static uint32_t place(const alloc *a, uint32_t i) {
    uint32_t best = UINT32_MAX;
    for (uint32_t c = 0; c <= i; c++) {
        if (c < i && (!a[c].used || !overlap_time(&a[c], &a[i]))) continue;
        uint32_t cand = c == i ? 0 : align_up(a[c].off + a[c].size, a[i].align);
        if (cand >= best) continue;
        bool ok = true;
        for (uint32_t j = 0; j < i && ok; j++)
            if (a[j].used && overlap_time(&a[j], &a[i]) && overlap_bytes(cand, a[i].size, a[j].off, a[j].size))
                ok = false;
        if (ok) best = cand;
    }
    return best;
}

bool lw_pool_layout(lw_ctx *cx) {
    pool p = {.cx = cx};
    p.of = rk_arena_zalloc(&cx->arena, cx->k->nvals * sizeof *p.of);
    cx->smem_off = rk_arena_zalloc(&cx->arena, cx->k->nvals * sizeof *cx->smem_off);
    if (!p.of || !cx->smem_off) return lw_error(cx, NULL, RK_ERR_NOMEM, "out of memory laying out LDS");
    walk(&p, rk_kernel_body(cx->k), false);
    if (!lw_ok(cx)) return false;
    /* Program order is one thread's: another thread may still be at the
     * last use when this one reaches the next allocation's first. Bytes are
     * shared only across a block barrier, so a lifetime runs on to the
     * first barrier at or after its last use (the end if none). */
    for (uint32_t i = 0; i < p.n; i++) {
        uint32_t b = 0;
        while (b < p.nbars && p.bars[b] < p.a[i].end) b++;
        p.a[i].end = b < p.nbars ? p.bars[b] : p.idx;
    }
    uint64_t top = 0;
    cx->pool_align = POOL_ALIGN;
    for (uint32_t i = 0; i < p.n; i++) {
        alloc *a = &p.a[i];
        if (!a->used) continue;
        if (a->align < POOL_ALIGN || (a->align & (a->align - 1))) a->align = POOL_ALIGN;   /* verified */
        if (a->align > cx->pool_align) cx->pool_align = a->align;
        if (a->pinned) { a->start = 0; a->end = LIVE_FOREVER; }
        a->off = place(p.a, i);
        cx->smem_off[a->v.id] = a->off;
        if ((uint64_t)a->off + a->size > top) top = (uint64_t)a->off + a->size;
    }
    top = (top + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN;
    if (top > cx->t->lds_bytes)
        return lw_error(cx, NULL, RK_ERR_UNSUPPORTED,
                        "the kernel's LDS allocations need %llu bytes at their peak; %s has %u bytes per workgroup",
                        (unsigned long long)top, cx->t->name, cx->t->lds_bytes);
    cx->pool_bytes = (uint32_t)top;
    /* an external symbol keeps its name in the output: no '.' (PTX rejects it) */
    cx->pool_sym = lw_printf(cx, lw_pool_dynamic(cx) ? "@smem_dyn_%s" : "@smem_pool.%s", rk_kernel_name(cx->k));
    return lw_ok(cx);
}

bool lw_pool_dynamic(const lw_ctx *cx) { return cx->vd->static_lds_max && cx->pool_bytes > cx->vd->static_lds_max; }

void lw_pool_global(lw_ctx *cx, rk_buf *out) {
    if (!cx->pool_bytes) return;
    if (lw_pool_dynamic(cx)) {
        rk_buf_printf(out, "%s = external addrspace(%u) global [0 x i8], align %u\n", cx->pool_sym,
                      cx->vd->as_num[RK_AS_LDS], cx->pool_align);
        return;
    }
    rk_buf_printf(out, "%s = internal unnamed_addr addrspace(%u) global [%u x i8] poison, align %u\n", cx->pool_sym,
                  cx->vd->as_num[RK_AS_LDS], cx->pool_bytes, cx->pool_align);
}

/* ---- addresses ---------------------------------------------------------------------------- */
const char *lw_smem_base(lw_ctx *cx, rk_value smem) {
    uint32_t off = cx->smem_off[smem.id];
    if (!off) return cx->pool_sym;
    return lw_printf(cx, "getelementptr inbounds (i8, ptr addrspace(%u) %s, i32 %u)", cx->vd->as_num[RK_AS_LDS],
                     cx->pool_sym, off);
}

/* [d0 x [d1 x ... T]], built once per smem type */
static const char *aggregate(lw_ctx *cx, rk_type st) {
    if (st.id < cx->nttext && cx->smem_agg[st.id]) return cx->smem_agg[st.id];
    const uint32_t *dims = rk_type_dims(cx->k, st);
    uint32_t rank = rk_type_rank(cx->k, st);
    const char *s = lw_ty(cx, rk_type_elem(cx->k, st));
    for (uint32_t i = rank; i-- > 0;) s = lw_printf(cx, "[%u x %s]", dims[i], s);
    if (st.id < cx->nttext) cx->smem_agg[st.id] = s;
    return s;
}

const char *lw_smem_addr(lw_ctx *cx, rk_value smem, const rk_value *idx, uint32_t n) {
    const char *t = lw_tmp(cx, "lds");
    rk_buf *line = &cx->scratch;
    rk_buf_reset(line);
    rk_buf_printf(line, "%s = getelementptr inbounds %s, ptr addrspace(%u) %s, i32 0", t,
                  aggregate(cx, rk_value_type(cx->k, smem)), cx->vd->as_num[RK_AS_LDS], lw_val(cx, smem));
    for (uint32_t i = 0; i < n; i++) lw_fmt(cx, line, ", %V", idx[i]);
    lw_ins(cx, "%s", rk_buf_cstr(line));
    return t;
}

const char *lw_smem_flat(lw_ctx *cx, rk_value smem, const char *idx_text) {
    const char *t = lw_tmp(cx, "lds");
    rk_type e = rk_type_elem(cx->k, rk_value_type(cx->k, smem));
    lw_ins(cx, "%s = getelementptr inbounds %T, ptr addrspace(%u) %v, i32 %s", t, e, cx->vd->as_num[RK_AS_LDS], smem,
           idx_text);
    return t;
}

const char *lw_smem_step(lw_ctx *cx, rk_value smem, const char *addr, uint32_t add) {
    const char *t = lw_tmp(cx, "lds");
    rk_type e = rk_type_elem(cx->k, rk_value_type(cx->k, smem));
    lw_ins(cx, "%s = getelementptr inbounds %T, ptr addrspace(%u) %s, i32 %u", t, e, cx->vd->as_num[RK_AS_LDS], addr,
           add);
    return t;
}
