/* rocke — emulator memory: global loads/stores through the buffer registry
 * (every access must lie inside its pointer's own buffer, the one the kernel
 * parameter it came from points into, else the run stops naming both), LDS accesses with their checks (bounds,
 * pending async destinations, races between waves), buffer resources with
 * the hardware's range check, and atomics that stay atomic across the host
 * threads running workgroups. Layer: emu. */
#include <math.h>
#include <stdio.h>

#include "emu_int.h"

/* ---- the registry ---------------------------------------------------------------------- */
/* The buffer with the greatest base <= addr, or NULL. */
static const emu_buf *buf_below(const rk_emu *E, uint64_t addr) {
    uint32_t lo = 0, hi = E->nbufs;
    while (lo < hi) {                        /* first buffer with base > addr */
        uint32_t mid = (lo + hi) / 2;
        if (E->bufs[mid].addr <= addr) lo = mid + 1;
        else hi = mid;
    }
    return lo ? &E->bufs[lo - 1] : NULL;
}

static const emu_buf *find_buf(const rk_emu *E, uint64_t addr) {
    const emu_buf *b = buf_below(E, addr);
    return b && addr - b->addr < b->bytes ? b : NULL;
}

uint64_t emu_prov_of(const rk_emu *E, uint64_t addr, uint32_t param) {
    const emu_buf *b = buf_below(E, addr);
    if (!b || (addr - b->addr >= b->bytes && !(b->bytes == 0 && addr == b->addr))) return 0;
    return EMU_PROV(b->addr, param + 1u);
}

size_t emu_prov_room(const rk_emu *E, uint64_t prov, uint64_t addr) {
    const emu_buf *b = buf_below(E, EMU_PROV_BASE(prov));
    if (!b || b->addr != EMU_PROV_BASE(prov) || addr < b->addr || addr - b->addr > b->bytes) return 0;
    return b->bytes - (size_t)(addr - b->addr);
}

/* The source buffer of provenance prov (never 0). */
static const emu_buf *prov_buf(emu_worker *wk, uint64_t prov) {
    const emu_buf *b = wk->bcache;
    uint64_t base = EMU_PROV_BASE(prov);
    if (b && b->addr == base) return b;
    b = buf_below(wk->L->emu, base);
    return b && b->addr == base ? b : NULL;
}

/* "buffer 'A' [0x.., 0x..) (4096 bytes)" */
static int buf_desc(const emu_buf *b, char *out, size_t cap) {
    return snprintf(out, cap, "buffer '%s' [0x%llx, 0x%llx) (%zu bytes)", b->name ? b->name : "(unnamed)",
                    (unsigned long long)b->addr, (unsigned long long)(b->addr + b->bytes), b->bytes);
}

/* "12 bytes past the end of buffer 'A' [0x.., 0x..) (4096 bytes)" */
static void describe_near(const rk_emu *E, uint64_t addr, uint32_t n, char *out, size_t cap) {
    if (!E->nbufs) { snprintf(out, cap, "no device buffers are registered"); return; }
    if (addr == 0) { snprintf(out, cap, "null pointer"); return; }
    const emu_buf *best = NULL;
    uint64_t dist = UINT64_MAX;
    for (uint32_t i = 0; i < E->nbufs; i++) {
        const emu_buf *b = &E->bufs[i];
        uint64_t d = addr >= b->addr + b->bytes ? addr - (b->addr + b->bytes)
                   : addr + n <= b->addr ? b->addr - (addr + n) : 0;
        if (d < dist) { dist = d; best = b; }
    }
    char bd[200];
    buf_desc(best, bd, sizeof bd);
    if (addr < best->addr)
        snprintf(out, cap, "%llu bytes before %s", (unsigned long long)(best->addr - addr), bd);
    else
        snprintf(out, cap, "%llu bytes past the end of %s", (unsigned long long)(addr + n - (best->addr + best->bytes)), bd);
}

/* An access outside its pointer's own buffer src: "4 bytes past the end of
 * buffer 'C' [..) (..), the buffer of parameter %C the pointer comes from;
 * the access lands inside buffer 'D' [..) (..)". */
static void describe_prov(const emu_wave *w, uint64_t prov, const emu_buf *src, uint64_t addr, uint32_t n,
                          char *out, size_t cap) {
    uint32_t pi = EMU_PROV_PARAM(prov);
    char sd[200], from[160] = "the buffer the pointer comes from", hd[220] = "lies in no buffer";
    buf_desc(src, sd, sizeof sd);
    if (pi && pi <= rk_kernel_nparams(w->P->k))
        snprintf(from, sizeof from, "the buffer of parameter %%%s, which the pointer comes from",
                 rk_kernel_param(w->P->k, pi - 1)->name);
    const emu_buf *hit = find_buf(w->wk->L->emu, addr);
    if (hit == src) {
        snprintf(hd, sizeof hd, "starts inside it");
    } else if (hit) {
        int k = snprintf(hd, sizeof hd, "lands inside ");
        buf_desc(hit, hd + k, sizeof hd - (size_t)k);
    }
    if (addr < src->addr)
        snprintf(out, cap, "%llu bytes before %s, %s; the access %s", (unsigned long long)(src->addr - addr), sd, from, hd);
    else
        snprintf(out, cap, "%llu bytes past the end of %s, %s; the access %s",
                 (unsigned long long)(addr + n - (src->addr + src->bytes)), sd, from, hd);
}

void *emu_gmem(emu_wave *w, const emu_ins *in, uint32_t lane, uint64_t addr, uint32_t n, uint64_t prov, bool write) {
    emu_worker *wk = w->wk;
    const emu_buf *b;
    char near[700];
    if (prov && (b = prov_buf(wk, prov)) != NULL) {
        if (addr >= b->addr && addr - b->addr < b->bytes && n <= b->bytes - (addr - b->addr)) {
            wk->bcache = b;
            return b->host + (addr - b->addr);
        }
        describe_prov(w, prov, b, addr, n, near, sizeof near);
    } else {
        b = wk->bcache;
        if (b && addr - b->addr < b->bytes && n <= b->bytes - (addr - b->addr)) return b->host + (addr - b->addr);
        b = find_buf(wk->L->emu, addr);
        if (b && n <= b->bytes - (addr - b->addr)) {
            wk->bcache = b;
            return b->host + (addr - b->addr);
        }
        describe_near(wk->L->emu, addr, n, near, sizeof near);
    }
    emu_fail(w, in, (int)lane, "out-of-bounds global %s of %u bytes at 0x%llx: %s", write ? "write" : "read", n,
             (unsigned long long)addr, near);
    return NULL;
}

/* ---- LDS checks --------------------------------------------------------------------------- */
/* "%smem2 + 12" for an LDS offset. */
static void lds_where(const emu_prog *P, uint64_t off, char *out, size_t cap) {
    for (uint32_t i = 0; i < P->nsmem; i++) {
        const emu_smem *s = &P->smem[i];
        if (off >= s->offset && off < (uint64_t)s->offset + s->bytes) {
            snprintf(out, cap, "LDS 0x%llx (%s %s + %llu)", (unsigned long long)off, s->name, s->type,
                     (unsigned long long)(off - s->offset));
            return;
        }
    }
    snprintf(out, cap, "LDS 0x%llx%s", (unsigned long long)off, off >= P->lds_static ? " (dynamic LDS)" : "");
}

bool emu_lds_within(emu_wave *w, const emu_ins *in, uint32_t lane, const emu_smem *s, uint64_t off, uint32_t n,
                    const char *what) {
    if (!s || (off >= s->offset && off + n <= (uint64_t)s->offset + s->bytes && off + n >= off)) return true;
    uint64_t end = (uint64_t)s->offset + s->bytes;
    char where[300];
    lds_where(w->P, off < s->offset || off >= end ? off : end, where, sizeof where);
    emu_fail(w, in, (int)lane, "%s [0x%llx, 0x%llx) leaves %s %s [0x%x, 0x%llx), the allocation its address comes "
             "from (%llu bytes %s it; %s)", what, (unsigned long long)off, (unsigned long long)(off + n), s->name, s->type,
             s->offset, (unsigned long long)end,
             (unsigned long long)(off < s->offset ? s->offset - off : off + n - end), off < s->offset ? "before" : "past",
             where);
    return false;
}

static bool race(emu_wave *w, const emu_ins *in, uint32_t lane, uint64_t off, int kind, uint32_t other,
                 bool other_wrote) {
    const emu_prog *P = w->P;
    uint32_t op = EMU_TAG_OP(other);
    emu_ins fake = {.op = op < P->nops ? P->ops[op] : NULL, .opidx = op};
    char where[300], od[256];
    lds_where(P, off, where, sizeof where);
    emu_op_desc(&fake, od, sizeof od);
    emu_fail(w, in, (int)lane, "LDS data race on %s: this %s and the %s by wave %u lane %u at %s happen between "
             "the same two barriers, so their order is undefined", where,
             kind == 0 ? "read" : kind == 1 ? "write" : "atomic update",
             !other_wrote ? "read" : EMU_TAG_ATOMIC(other) ? "atomic update" : "write", EMU_TAG_WAVE(other),
             EMU_TAG_LANE(other), od);
    return false;
}

bool emu_lds_touch(emu_wave *w, const emu_ins *in, uint32_t lane, uint64_t off, uint32_t n, int kind) {
    emu_worker *wk = w->wk;
    const emu_prog *P = w->P;
    if (off + n > P->lds_total || off + n < off) {
        emu_fail(w, in, (int)lane, "LDS access of %u bytes at 0x%llx is outside the workgroup's %u bytes of LDS", n,
                 (unsigned long long)off, P->lds_total);
        return false;
    }
    if (wk->pmark && wk->pend_live) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t p = wk->pmark[off + i];
            if (!p) continue;
            const emu_pend *pe = &wk->pend[p - 1];
            char where[300], by[256];
            lds_where(P, off + i, where, sizeof where);
            emu_op_desc(pe->in, by, sizeof by);
            emu_fail(w, in, (int)lane, "%s %s before the asynchronous copy into it completed: %s (wave %u lane %u) "
                     "lands only at its wait (%s)", kind == 0 ? "reads" : "writes", where, by, pe->wave, pe->lane,
                     pe->kind == EMU_PEND_DMA    ? "s_waitcnt vmcnt or tile.sync"
                     : pe->kind == EMU_PEND_COPY ? "tile.async_wait_group"
                                                 : "a tile.mbarrier_wait that sees its mbarrier's phase complete");
            return false;
        }
    }
    if (!wk->shadow) return true;
    uint32_t E = wk->epoch, me = w->id, tag = EMU_TAG(in->opidx, kind == 2, lane, me);
    for (uint32_t i = 0; i < n; i++) {
        emu_shadow *s = &wk->shadow[off + i];
        bool w_other = s->we == E && EMU_TAG_WAVE(s->wtag) != me;
        if (kind == 0) {
            if (w_other) return race(w, in, lane, off + i, kind, s->wtag, true);
            if (s->re != E) { s->re = E; s->rtag = tag; }
            else if (EMU_TAG_WAVE(s->rtag) != me && s->re2 != E) { s->re2 = E; s->rtag2 = tag; }
            continue;
        }
        if (w_other && !(kind == 2 && EMU_TAG_ATOMIC(s->wtag))) return race(w, in, lane, off + i, kind, s->wtag, true);
        if (s->re == E && EMU_TAG_WAVE(s->rtag) != me) return race(w, in, lane, off + i, kind, s->rtag, false);
        if (s->re2 == E && EMU_TAG_WAVE(s->rtag2) != me) return race(w, in, lane, off + i, kind, s->rtag2, false);
        s->we = E;
        s->wtag = tag;
    }
    return true;
}

/* ---- global memory -------------------------------------------------------------------------- */
/* gload: d (es bytes per lane) <- *(a + b * imm2); imm: index is i64. */
static int64_t index_of(const void *ix, uint32_t l, int64_t is64) {
    return is64 ? ((const int64_t *)ix)[l] : ((const int32_t *)ix)[l];
}

/* Addresses of the active lanes; true when all of [lo, hi) lies in one
 * buffer, the pointers' own (every active lane's pointer of one provenance),
 * whose host base for address 0 is then *base (so the hot path moves data
 * without a lookup per lane). */
static bool lane_addrs(emu_wave *w, const emu_ins *in, uint64_t *addr, uint32_t nb, uint8_t **base) {
    const emu_fatptr *p = REF(in->a);
    const void *ix = REF(in->b);
    uint64_t lo = UINT64_MAX, hi = 0, sz = (uint64_t)in->imm2, prov = p[emu_first_active(w)].prov, mixed = 0;
    FOR_ACTIVE(w, l) {
        uint64_t a = p[l].addr + (uint64_t)index_of(ix, (uint32_t)l, in->imm) * sz;
        addr[l] = a;
        mixed |= p[l].prov ^ prov;
        if (a < lo) lo = a;
        if (a > hi) hi = a;
    }
    if (mixed || lo > hi || hi + nb < hi) return false;
    emu_worker *wk = w->wk;
    const emu_buf *b = wk->bcache;
    if (prov) {
        if (!(b && b->addr == EMU_PROV_BASE(prov)) && !(b = prov_buf(wk, prov))) return false;
        if (lo < b->addr || hi + nb - b->addr > b->bytes) return false;
        wk->bcache = b;
    } else if (!(b && lo - b->addr < b->bytes && hi + nb - b->addr <= b->bytes)) {
        b = find_buf(wk->L->emu, lo);
        if (!b || hi + nb - b->addr > b->bytes) return false;
        wk->bcache = b;
    }
    *base = b->host - b->addr;
    return true;
}

/* A global access at an address its alignment (m2, as the lowering
 * promises it to LLVM) does not divide: a fault or wrong data on a GPU. */
static bool misaligned(emu_wave *w, const emu_ins *in, const uint64_t *addr) {
    uint64_t mask = in->m2 > 1 ? in->m2 - 1u : 0, any = 0;
    if (!mask) return false;
    FOR_ACTIVE(w, l) any |= addr[l];
    if (!(any & mask)) return false;
    FOR_ACTIVE(w, l) {
        if (addr[l] & mask) {
            emu_fail(w, in, (int)l, "misaligned global access of %u bytes at 0x%llx (it promises %u-byte alignment)",
                     in->es, (unsigned long long)addr[l], in->m2);
            break;
        }
    }
    return true;
}

#define MOVE_LANES(T, dst, src)                                  \
    FOR_ACTIVE(w, l) { T v_; memcpy(&v_, (src), sizeof v_); memcpy((dst), &v_, sizeof v_); }

/* gload: d (es bytes per lane) <- *(a + b * imm2); imm: the index is i64. */
int emu_h_gload(emu_wave *w, const emu_ins *in) {
    uint8_t *d = REF(in->d), *base;
    uint32_t nb = in->es;
    uint64_t addr[EMU_MAXW];
    if (w->exec != emu_full(w)) memset(d, 0, (size_t)w->W * nb);
    bool whole = lane_addrs(w, in, addr, nb, &base);
    if (misaligned(w, in, addr)) return EMU_STOP;
    if (whole) {
        switch (nb) {
        case 2: MOVE_LANES(uint16_t, d + l * 2, base + addr[l]) break;
        case 4: MOVE_LANES(uint32_t, d + l * 4, base + addr[l]) break;
        case 8: MOVE_LANES(uint64_t, d + l * 8, base + addr[l]) break;
        default: FOR_ACTIVE(w, l) memcpy(d + l * nb, base + addr[l], nb); break;
        }
    } else {
        const emu_fatptr *p = REF(in->a);
        FOR_ACTIVE(w, l) {
            const void *h = emu_gmem(w, in, (uint32_t)l, addr[l], nb, p[l].prov, false);
            if (!h) return EMU_STOP;
            memcpy(d + l * nb, h, nb);
        }
    }
    w->vm_seq++;
    return EMU_NEXT;
}

int emu_h_gstore(emu_wave *w, const emu_ins *in) {
    const uint8_t *v = REF(in->c);
    uint8_t *base;
    uint32_t nb = in->es;
    uint64_t addr[EMU_MAXW];
    bool whole = lane_addrs(w, in, addr, nb, &base);
    if (misaligned(w, in, addr)) return EMU_STOP;
    if (whole) {
        switch (nb) {
        case 2: MOVE_LANES(uint16_t, base + addr[l], v + l * 2) break;
        case 4: MOVE_LANES(uint32_t, base + addr[l], v + l * 4) break;
        case 8: MOVE_LANES(uint64_t, base + addr[l], v + l * 8) break;
        default: FOR_ACTIVE(w, l) memcpy(base + addr[l], v + l * nb, nb); break;
        }
    } else {
        const emu_fatptr *p = REF(in->a);
        FOR_ACTIVE(w, l) {
            void *h = emu_gmem(w, in, (uint32_t)l, addr[l], nb, p[l].prov, true);
            if (!h) return EMU_STOP;
            memcpy(h, v + l * nb, nb);
        }
    }
    w->vm_seq++;
    return EMU_NEXT;
}

/* cooperative_global_store: element j of each lane to a[b[j]] (b = vec of
 * element indices, es = element bytes, m = elements). */
int emu_h_coop_store(emu_wave *w, const emu_ins *in) {
    const uint8_t *v = REF(in->c);
    const emu_fatptr *p = REF(in->a);
    const void *ix = REF(in->b);
    FOR_ACTIVE(w, l) {
        for (uint32_t j = 0; j < in->m; j++) {
            uint64_t addr = p[l].addr + (uint64_t)index_of(ix, (uint32_t)l * in->m + j, in->imm) * (uint64_t)in->imm2;
            void *h = emu_gmem(w, in, (uint32_t)l, addr, in->es, p[l].prov, true);
            if (!h) return EMU_STOP;
            memcpy(h, v + ((size_t)l * in->m + j) * in->es, in->es);
        }
    }
    w->vm_seq++;
    return EMU_NEXT;
}

/* global_ptr_add: a + b bytes; an i32 offset is zero-extended (as lowered).
 * The result keeps the pointer's provenance, wherever it points. */
int emu_h_ptr_add(emu_wave *w, const emu_ins *in) {
    emu_fatptr *d = REF(in->d);
    const emu_fatptr *p = REF(in->a);
    const void *o = REF(in->b);
    for (uint32_t l = 0; l < w->W; l++)
        d[l] = (emu_fatptr){p[l].addr + (in->imm ? ((const uint64_t *)o)[l] : (uint64_t)((const uint32_t *)o)[l]),
                            p[l].prov};
    return EMU_NEXT;
}

/* arith.ptrtoint: the address (the device address a GPU would see). */
int emu_h_ptr_to_int(emu_wave *w, const emu_ins *in) {
    uint64_t *d = REF(in->d);
    const emu_fatptr *p = REF(in->a);
    for (uint32_t l = 0; l < w->W; l++) d[l] = p[l].addr;
    return EMU_NEXT;
}

/* arith.cmp of two pointers: their addresses; imm = the predicate's index
 * in lt le gt ge eq ne ult ule ugt uge. */
int emu_h_cmp_ptr(emu_wave *w, const emu_ins *in) {
    uint8_t *d = REF(in->d);
    const emu_fatptr *a = REF(in->a), *b = REF(in->b);
    for (uint32_t l = 0; l < w->W; l++) {
        uint64_t x = a[l].addr, y = b[l].addr;
        int64_t sx = (int64_t)x, sy = (int64_t)y;
        bool r = false;
        switch (in->imm) {
        case 0: r = sx < sy; break;
        case 1: r = sx <= sy; break;
        case 2: r = sx > sy; break;
        case 3: r = sx >= sy; break;
        case 4: r = x == y; break;
        case 5: r = x != y; break;
        case 6: r = x < y; break;
        case 7: r = x <= y; break;
        case 8: r = x > y; break;
        default: r = x >= y; break;
        }
        d[l] = r;
    }
    return EMU_NEXT;
}

/* ---- LDS through smem allocations ------------------------------------------------------------ */
/* The byte offset of lane l's access of cnt elements, or false after failing. */
static bool smem_at(emu_wave *w, const emu_ins *in, uint32_t l, uint32_t cnt, uint32_t nidx, uint64_t *off) {
    const emu_smem *s = in->aux;
    int64_t flat = 0;
    for (uint32_t r = 0; r < nidx; r++) flat += (int64_t)((const int32_t *)REF(in->args[r]))[l] * s->stride[r];
    if (flat < 0 || (uint64_t)flat + cnt > s->elems) {
        emu_fail(w, in, (int)l, "LDS access out of bounds: elements [%lld, %lld) of %s %s, which has %u", (long long)flat,
                 (long long)flat + cnt, s->name, s->type, s->elems);
        return false;
    }
    *off = s->offset + (uint64_t)flat * s->es;
    return true;
}

/* sload: d (es bytes = m elements per lane) from smem aux at indices args. */
int emu_h_sload(emu_wave *w, const emu_ins *in) {
    uint8_t *d = REF(in->d);
    if (w->exec != emu_full(w)) memset(d, 0, (size_t)w->W * in->es);
    FOR_ACTIVE(w, l) {
        uint64_t off;
        if (!smem_at(w, in, (uint32_t)l, in->m, in->nargs, &off)) return EMU_STOP;
        if (!emu_lds_touch(w, in, (uint32_t)l, off, in->es, 0)) return EMU_STOP;
        memcpy(d + l * in->es, w->lds + off, in->es);
    }
    return EMU_NEXT;
}

int emu_h_sstore(emu_wave *w, const emu_ins *in) {
    const uint8_t *v = REF(in->c);
    FOR_ACTIVE(w, l) {
        uint64_t off;
        if (!smem_at(w, in, (uint32_t)l, in->m, in->nargs, &off)) return EMU_STOP;
        if (!emu_lds_touch(w, in, (uint32_t)l, off, in->es, 1)) return EMU_STOP;
        memcpy(w->lds + off, v + l * in->es, in->es);
    }
    return EMU_NEXT;
}

/* smem_store_distributed: every active lane stores its element i at flat
 * index i (lanes in order, so the highest active lane's value stays). */
int emu_h_sstore_dist(emu_wave *w, const emu_ins *in) {
    const emu_smem *s = in->aux;
    const uint8_t *v = REF(in->a);
    if (in->m > s->elems)
        return emu_fail(w, in, -1, "smem_store_distributed of %u elements into %s %s, which has %u", in->m, s->name,
                        s->type, s->elems);
    FOR_ACTIVE(w, l) {
        if (!emu_lds_touch(w, in, (uint32_t)l, s->offset, in->m * in->es, 1)) return EMU_STOP;
        memcpy(w->lds + s->offset, v + (size_t)l * in->m * in->es, (size_t)in->m * in->es);
    }
    return EMU_NEXT;
}

/* lds_atomic_add: old value back; sd = i32 or f32; c = addend. */
int emu_h_lds_atomic(emu_wave *w, const emu_ins *in) {
    uint32_t *d = REF(in->d);
    const uint32_t *v = REF(in->c);
    FOR_ACTIVE(w, l) {
        uint64_t off;
        if (!smem_at(w, in, (uint32_t)l, 1, in->nargs, &off)) return EMU_STOP;
        if (!emu_lds_touch(w, in, (uint32_t)l, off, 4, 2)) return EMU_STOP;
        uint32_t old;
        memcpy(&old, w->lds + off, 4);
        uint32_t nv = in->sd == RK_S_F32 ? rk_f32_bits(rk_bits_f32(old) + rk_bits_f32(v[l])) : old + v[l];
        memcpy(w->lds + off, &nv, 4);
        d[l] = old;
    }
    return EMU_NEXT;
}

/* ---- buffer resources ------------------------------------------------------------------------ */
/* rsrc: base a, num_records = low 32 bits of b (i64 when imm), word3 imm2.
 * An active lane's descriptor must not reach past the base pointer's own
 * buffer: out-of-range granules read 0 by design, but in-range ones would
 * touch memory the kernel was not given. */
int emu_h_rsrc(emu_wave *w, const emu_ins *in) {
    emu_vsharp *d = REF(in->d);
    const emu_fatptr *p = REF(in->a);
    const void *n = REF(in->b);
    for (uint32_t l = 0; l < w->W; l++)
        d[l] = (emu_vsharp){p[l].addr, in->imm ? (uint32_t)((const uint64_t *)n)[l] : ((const uint32_t *)n)[l],
                            (uint32_t)in->imm2, p[l].prov};
    FOR_ACTIVE(w, l) {
        const emu_buf *b = d[l].prov && d[l].nrec ? prov_buf(w->wk, d[l].prov) : NULL;
        if (!b || (d[l].base >= b->addr && d[l].base - b->addr <= b->bytes && d[l].nrec <= b->bytes - (d[l].base - b->addr)))
            continue;
        char sd[200];
        buf_desc(b, sd, sizeof sd);
        return emu_fail(w, in, (int)l, "buffer resource over [0x%llx, 0x%llx) (num_records %u) exceeds its source %s",
                        (unsigned long long)d[l].base, (unsigned long long)(d[l].base + d[l].nrec), d[l].nrec, sd);
    }
    return EMU_NEXT;
}

/* Range check per granule (imm2 bytes: 1 or 2 for byte and short accesses, 4
 * for dword accesses): granule at offset o is in range iff o + g <= num_records
 * (offsets as unsigned 64-bit sums of voffset and soffset, no wrap). */
int emu_h_bload(emu_wave *w, const emu_ins *in) {
    uint8_t *d = REF(in->d);
    const emu_vsharp *r = REF(in->a);
    const uint32_t *vo = REF(in->b), *so = REF(in->c);
    uint32_t nb = in->es, g = (uint32_t)in->imm2;
    memset(d, 0, (size_t)w->W * nb);
    FOR_ACTIVE(w, l) {
        uint64_t off = (uint64_t)vo[l] + so[l];
        if (off + nb <= r[l].nrec) {
            const void *h = emu_gmem(w, in, (uint32_t)l, r[l].base + off, nb, r[l].prov, false);
            if (!h) return EMU_STOP;
            memcpy(d + l * nb, h, nb);
            continue;
        }
        for (uint32_t k = 0; k < nb; k += g) {
            if (off + k + g > r[l].nrec) continue;          /* out of range: reads 0 */
            const void *h = emu_gmem(w, in, (uint32_t)l, r[l].base + off + k, g, r[l].prov, false);
            if (!h) return EMU_STOP;
            memcpy(d + l * nb + k, h, g);
        }
    }
    w->vm_seq++;
    return EMU_NEXT;
}

int emu_h_bstore(emu_wave *w, const emu_ins *in) {
    const uint8_t *v = REF(in->args[0]);
    const emu_vsharp *r = REF(in->a);
    const uint32_t *vo = REF(in->b), *so = REF(in->c);
    uint32_t nb = in->es, g = (uint32_t)in->imm2;
    FOR_ACTIVE(w, l) {
        uint64_t off = (uint64_t)vo[l] + so[l];
        for (uint32_t k = 0; k < nb; k += g) {
            if (off + k + g > r[l].nrec) continue;          /* out of range: dropped */
            void *h = emu_gmem(w, in, (uint32_t)l, r[l].base + off + k, g, r[l].prov, true);
            if (!h) return EMU_STOP;
            memcpy(h, v + l * nb + k, g);
        }
    }
    w->vm_seq++;
    return EMU_NEXT;
}

/* ---- global atomics ----------------------------------------------------------------------------- */
/* imm: EMU_AT_*; es: 4 or 8 bytes; a ptr, b index (imm2: bit 0 set for an i64
 * index, the rest the element bytes), c value, args[0] = swap value for cas.
 * Lanes go in lane order; each update is one atomic read-modify-write of the
 * host memory, so workgroups on other host threads see it whole. */

static uint64_t apply(int kind, uint64_t old, uint64_t v, uint32_t es) {
    switch (kind) {
    case EMU_AT_ADD: return old + v;
    case EMU_AT_FADD:
        if (es == 4) return rk_f32_bits(rk_bits_f32((uint32_t)old) + rk_bits_f32((uint32_t)v));
        return rk_f64_bits(rk_bits_f64(old) + rk_bits_f64(v));
    case EMU_AT_SMAX: return es == 4 ? ((int32_t)old > (int32_t)v ? old : v) : ((int64_t)old > (int64_t)v ? old : v);
    case EMU_AT_SMIN: return es == 4 ? ((int32_t)old < (int32_t)v ? old : v) : ((int64_t)old < (int64_t)v ? old : v);
    case EMU_AT_UMAX: return old > v ? old : v;
    case EMU_AT_UMIN: return old < v ? old : v;
    case EMU_AT_AND: return old & v;
    case EMU_AT_OR: return old | v;
    case EMU_AT_XOR: return old ^ v;
    case EMU_AT_XCHG: return v;
    case EMU_AT_PK_F16:
    case EMU_AT_PK_BF16: {
        uint32_t r = 0;
        for (int h = 0; h < 2; h++) {
            uint16_t x = (uint16_t)(old >> (16 * h)), y = (uint16_t)(v >> (16 * h));
            uint16_t s = kind == EMU_AT_PK_F16 ? emu_f2h(emu_h2f(x) + emu_h2f(y)) : emu_f2b(emu_b2f(x) + emu_b2f(y));
            r |= (uint32_t)s << (16 * h);
        }
        return r;
    }
    default: return v;
    }
}

int emu_h_gatomic(emu_wave *w, const emu_ins *in) {
    uint8_t *d = REF(in->d);
    const emu_fatptr *p = REF(in->a);
    const void *ix = REF(in->b);
    const uint8_t *v = REF(in->c);
    const uint8_t *nv = in->nargs ? REF(in->args[0]) : NULL;
    uint32_t es = in->es;
    int kind = (int)in->imm;
    memset(d, 0, (size_t)w->W * es);
    FOR_ACTIVE(w, l) {
        uint64_t addr = p[l].addr + (uint64_t)index_of(ix, (uint32_t)l, in->imm2 & 1) * (uint64_t)(in->imm2 >> 1);
        void *h = emu_gmem(w, in, (uint32_t)l, addr, es, p[l].prov, true);
        if (!h) return EMU_STOP;
        if (addr % es)
            return emu_fail(w, in, (int)l, "atomic access of %u bytes at 0x%llx is not %u-byte aligned", es,
                            (unsigned long long)addr, es);
        uint64_t val = 0, swap = 0, old;
        memcpy(&val, v + l * es, es);
        if (nv) memcpy(&swap, nv + l * es, es);
        if (es == 4) {
            uint32_t *q = h, o32 = __atomic_load_n(q, __ATOMIC_RELAXED);
            if (kind == EMU_AT_CAS) {
                o32 = (uint32_t)val;
                __atomic_compare_exchange_n(q, &o32, (uint32_t)swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            } else {
                while (!__atomic_compare_exchange_n(q, &o32, (uint32_t)apply(kind, o32, val, 4), false,
                                                    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
                }
            }
            old = o32;
        } else {
            uint64_t *q = h, o64 = __atomic_load_n(q, __ATOMIC_RELAXED);
            if (kind == EMU_AT_CAS) {
                o64 = val;
                __atomic_compare_exchange_n(q, &o64, swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            } else {
                while (!__atomic_compare_exchange_n(q, &o64, apply(kind, o64, val, 8), false, __ATOMIC_SEQ_CST,
                                                    __ATOMIC_RELAXED)) {
                }
            }
            old = o64;
        }
        memcpy(d + l * es, &old, es);
    }
    w->vm_seq++;
    return EMU_NEXT;
}

int emu_atomic_kind(const char *kind) {
    static const char *const names[] = {"add", "fadd", "smax", "smin", "umax", "umin", "and", "or", "xor", "xchg"};
    for (int i = 0; kind && i < (int)RK_COUNTOF(names); i++)
        if (strcmp(kind, names[i]) == 0) return i;
    return -1;
}
