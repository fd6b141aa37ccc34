/* rocke — asynchronous global -> LDS copies, modelled as pending until the
 * wait that guards them: the source is read when the copy is issued, the
 * bytes land in LDS only at the completing wait (AMD DMA forms: s_waitcnt
 * with vmcnt satisfied, tile.sync, or the wave's end; cp.async: the
 * async_wait_group that leaves its group no longer pending). Touching a
 * pending destination before then is reported (check_async). Layer: emu. */
#include <stdio.h>

#include "emu_int.h"

emu_pend *emu_pend_new(emu_wave *w, const emu_ins *in, uint32_t lane, uint64_t lds_off, uint32_t bytes,
                       uint8_t **data) {
    emu_worker *wk = w->wk;
    if (wk->npend == wk->pend_cap) {
        uint32_t nc = wk->pend_cap ? wk->pend_cap * 2 : 256;
        emu_pend *np = rk_realloc(wk->pend, wk->pend_cap * sizeof *np, nc * sizeof *np);
        if (!np) { emu_fail(w, in, (int)lane, "out of memory tracking asynchronous copies"); return NULL; }
        wk->pend = np;
        wk->pend_cap = nc;
    }
    if (wk->pdata_len + bytes > wk->pdata_cap) {
        size_t nc = wk->pdata_cap ? wk->pdata_cap * 2 : 65536;
        while (nc < wk->pdata_len + bytes) nc *= 2;
        uint8_t *nd = rk_realloc(wk->pdata, wk->pdata_cap, nc);
        if (!nd) { emu_fail(w, in, (int)lane, "out of memory tracking asynchronous copies"); return NULL; }
        wk->pdata = nd;
        wk->pdata_cap = nc;
    }
    emu_pend *p = &wk->pend[wk->npend];
    *p = (emu_pend){.lds_off = (uint32_t)lds_off, .bytes = bytes, .data = wk->pdata_len, .wave = w->id,
                    .lane = lane, .in = in};
    *data = wk->pdata + wk->pdata_len;
    wk->pdata_len += bytes;
    if (wk->pmark)
        for (uint32_t i = 0; i < bytes; i++) wk->pmark[lds_off + i] = wk->npend + 1;
    wk->npend++;
    wk->pend_live++;
    return p;
}

/* Land one pending copy: clear its marks, record the LDS write (for the race
 * checker, as the issuing wave's write now; an async-proxy write (TMA) is
 * ordered by its mbarrier instead, so it clears the bytes' history), copy
 * the bytes. */
bool emu_pend_land(emu_wave *w, uint32_t idx, bool async_proxy) {
    emu_worker *wk = w->wk;
    emu_pend *p = &wk->pend[idx];
    if (wk->pmark)
        for (uint32_t i = 0; i < p->bytes; i++)
            if (wk->pmark[p->lds_off + i] == idx + 1) wk->pmark[p->lds_off + i] = 0;
    p->done = true;
    wk->pend_live--;
    if (async_proxy) {
        if (wk->shadow) memset(wk->shadow + p->lds_off, 0, (size_t)p->bytes * sizeof *wk->shadow);
    } else if (!emu_lds_touch(w, p->in, p->lane, p->lds_off, p->bytes, 1)) {
        return false;
    }
    memcpy(w->lds + p->lds_off, wk->pdata + p->data, p->bytes);
    return true;
}

void emu_pend_reset_if_idle(emu_worker *wk) {
    if (!wk->pend_live) {
        wk->npend = 0;
        wk->pdata_len = 0;
    }
}

void emu_async_complete_dma(emu_wave *w, uint64_t seq) {
    emu_worker *wk = w->wk;
    for (uint32_t i = 0; i < wk->npend && !wk->failed; i++) {
        emu_pend *p = &wk->pend[i];
        if (!p->done && p->wave == w->id && p->kind == EMU_PEND_DMA && p->seq <= seq) emu_pend_land(w, i, false);
    }
    emu_pend_reset_if_idle(wk);
}

void emu_async_complete_groups(emu_wave *w, uint32_t group, bool uncommitted_too) {
    emu_worker *wk = w->wk;
    for (uint32_t i = 0; i < wk->npend && !wk->failed; i++) {
        emu_pend *p = &wk->pend[i];
        if (p->done || p->wave != w->id || p->kind != EMU_PEND_COPY) continue;
        if ((p->group && p->group <= group) || (!p->group && uncommitted_too)) emu_pend_land(w, i, false);
    }
    emu_pend_reset_if_idle(wk);
}

/* ---- AMD DMA forms ------------------------------------------------------------------------ */
/* imm 0: tile.async_buffer_load_lds[_addr]: a rsrc, c voffset, args[0]
 * soffset; imm 1: tile.global_load_lds: a global pointer, c i32 byte offset.
 * The LDS base is b (an i64 register, read from the first active lane: it
 * lives in M0) or, when b is UINT32_MAX, the allocation aux. es = bytes per
 * lane; lane i's bytes go to base + i*es, inside allocation aux when the
 * compiler knows which one the address came from (emu_cc_lds_origin). */
int emu_h_dma(emu_wave *w, const emu_ins *in) {
    uint32_t fl = emu_first_active(w);
    uint64_t base = in->b == UINT32_MAX ? ((const emu_smem *)in->aux)->offset : ((const uint64_t *)REF(in->b))[fl];
    uint32_t es = in->es;
    uint64_t seq = w->vm_seq + 1;
    FOR_ACTIVE(w, l) {
        uint64_t dst = base + l * es;
        if (!emu_lds_within(w, in, (uint32_t)l, in->aux, dst, es, "asynchronous LDS destination")) return EMU_STOP;
        if (dst + es > w->P->lds_total)
            return emu_fail(w, in, (int)l, "asynchronous LDS destination [0x%llx, 0x%llx) is outside the workgroup's "
                            "%u bytes of LDS (base 0x%llx + lane * %u)", (unsigned long long)dst,
                            (unsigned long long)(dst + es), w->P->lds_total, (unsigned long long)base, es);
        uint8_t *data;
        emu_pend *p = emu_pend_new(w, in, (uint32_t)l, dst, es, &data);
        if (!p) return EMU_STOP;
        p->kind = EMU_PEND_DMA;
        p->seq = seq;
        if (in->imm == 1) {
            const emu_fatptr *gp = REF(in->a);
            const uint32_t *off = REF(in->c);
            const void *h = emu_gmem(w, in, (uint32_t)l, gp[l].addr + off[l], es, gp[l].prov, false);
            if (!h) return EMU_STOP;
            memcpy(data, h, es);
            continue;
        }
        const emu_vsharp *r = REF(in->a);
        const uint32_t *vo = REF(in->c), *so = REF(in->args[0]);
        uint64_t off = (uint64_t)vo[l] + so[l];
        for (uint32_t k = 0; k < es; k += 4) {           /* per dword: out of range reads 0 */
            if (off + k + 4 > r[l].nrec) { memset(data + k, 0, 4); continue; }
            const void *h = emu_gmem(w, in, (uint32_t)l, r[l].base + off + k, 4, r[l].prov, false);
            if (!h) return EMU_STOP;
            memcpy(data + k, h, 4);
        }
    }
    w->vm_seq = seq;
    return EMU_NEXT;
}

/* s_waitcnt: vmcnt(N) completes every VMEM access but the N most recent
 * (imm = N, -1 = no VMEM wait). LDS and scalar accesses complete at once in
 * the emulator, so lgkmcnt/expcnt have nothing left to wait for. */
int emu_h_waitcnt(emu_wave *w, const emu_ins *in) {
    if (in->imm >= 0 && w->vm_seq >= (uint64_t)in->imm) emu_async_complete_dma(w, w->vm_seq - (uint64_t)in->imm);
    return w->wk->failed ? EMU_STOP : EMU_NEXT;
}

/* ---- cp.async ----------------------------------------------------------------------------------- */
/* a src pointer, b src element index (imm: i64), aux = destination smem,
 * args[0] = destination element index (i32), args[1] = valid (i1);
 * es = bytes, imm2 = element bytes. Invalid lanes deposit zeros. Both
 * addresses must be aligned to es on every active lane, valid or not
 * (ops.def: cp.async's rule, which the AMD lowering's plain copy assumes). */
int emu_h_async_copy(emu_wave *w, const emu_ins *in) {
    const emu_smem *s = in->aux;
    const emu_fatptr *sp = REF(in->a);
    const void *si = REF(in->b);
    const int32_t *di = REF(in->args[0]);
    const uint8_t *valid = REF(in->args[1]);
    uint32_t es = in->es, eb = (uint32_t)in->imm2;
    FOR_ACTIVE(w, l) {
        int64_t de = di[l];
        if (de < 0 || (uint64_t)de * eb + es > s->bytes)
            return emu_fail(w, in, (int)l, "async_copy destination elements [%lld, %lld) are outside %s %s (%u elements)",
                            (long long)de, (long long)(de + es / eb), s->name, s->type, s->elems);
        int64_t ix = in->imm ? ((const int64_t *)si)[l] : ((const int32_t *)si)[l];
        uint64_t src = sp[l].addr + (uint64_t)ix * eb, dst = s->offset + (uint64_t)de * eb;
        if (src % es || dst % es)
            return emu_fail(w, in, (int)l, "misaligned async copy of %u bytes: source 0x%llx (element %lld) and LDS "
                            "destination 0x%llx (%s element %lld) must both be %u-byte aligned", es,
                            (unsigned long long)src, (long long)ix, (unsigned long long)dst, s->name, (long long)de, es);
        uint8_t *data;
        emu_pend *p = emu_pend_new(w, in, (uint32_t)l, dst, es, &data);
        if (!p) return EMU_STOP;
        p->kind = EMU_PEND_COPY;
        if (!valid[l]) { memset(data, 0, es); continue; }
        const void *h = emu_gmem(w, in, (uint32_t)l, src, es, sp[l].prov, false);
        if (!h) return EMU_STOP;
        memcpy(data, h, es);
    }
    w->vm_seq++;
    return EMU_NEXT;
}

/* Commit: the wave's uncommitted copies form the next group (possibly empty). */
int emu_h_async_commit(emu_wave *w, const emu_ins *in) {
    (void)in;
    emu_worker *wk = w->wk;
    w->groups++;
    for (uint32_t i = 0; i < wk->npend; i++) {
        emu_pend *p = &wk->pend[i];
        if (!p->done && p->wave == w->id && p->kind == EMU_PEND_COPY && !p->group) p->group = w->groups;
    }
    return EMU_NEXT;
}

/* Wait until at most imm groups are pending: complete every group but the imm
 * most recent ones. */
int emu_h_async_wait(emu_wave *w, const emu_ins *in) {
    if (w->groups >= (uint64_t)in->imm) emu_async_complete_groups(w, w->groups - (uint32_t)in->imm, false);
    return w->wk->failed ? EMU_STOP : EMU_NEXT;
}
