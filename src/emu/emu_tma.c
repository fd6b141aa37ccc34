/* rocke — TMA (tile.tma_load_2d): a box of a 2-D tensor map copied into LDS
 * with the map's shared-memory swizzle, elements outside the tensor filled
 * with zeros; tile.tma_store_2d, the reverse, done when issued (elements
 * outside the tensor are dropped). The source is read when the copy is issued; the bytes land as
 * late as the program allows — when a tile.mbarrier_wait needs the phase
 * they complete, or when no wave could run otherwise — and then count the
 * whole box against the mbarrier's transaction count. Until they land the
 * destination is pending (check_async reports any access). Layer: emu. */
#include <stdio.h>

#include "emu_int.h"

/* One box of lane l into block tgt's LDS (w's own, or a cluster peer's for
 * multicast), completing on the barrier at the same offset there; the
 * messages name the issuing wave. false after emu_fail. */
static bool issue_box(emu_wave *w, const emu_ins *in, uint32_t l, emu_worker *tgt) {
    const emu_tma_op *t = in->aux;
    const emu_tmap *m = &t->map;
    const emu_smem *d = t->dst, *bs = t->bars;
    const int32_t *di = REF(in->a), *bi = REF(in->b), *xs = REF(in->c), *ys = REF(in->args[0]);
    /* rank 4: the box loads ceil(box / estr) elements per dimension, rows of the innermost one */
    bool nd = in->imm == 4;
    uint32_t take[5] = {1, 1, 1, 1, 1};
    for (uint32_t i = 0; nd && i < 4; i++) take[i] = (m->box[i] + m->estr[i] - 1) / m->estr[i];
    uint32_t row_bytes = nd ? take[0] * m->eb : m->box_cols * m->eb;
    uint32_t nrows = nd ? take[1] * take[2] * take[3] : m->box_rows;
    uint32_t bytes = row_bytes * nrows;
    const char *peer = tgt == w->wk ? "" : " (multicast to a cluster peer)";
    int64_t de = di[l];
    if (de < 0 || (uint64_t)de * d->es + bytes > d->bytes) {
        emu_fail(w, in, (int)l, "the %u x %u box (%u bytes) at element %lld does not fit in %s %s (%u bytes)",
                 m->box_rows, m->box_cols, bytes, (long long)de, d->name, d->type, d->bytes);
        return false;
    }
    uint32_t dst = d->offset + (uint32_t)de * d->es;
    if (dst % 128) {
        emu_fail(w, in, (int)l, "the TMA destination LDS 0x%x (%s element %lld) is not 128-byte aligned", dst, d->name,
                 (long long)de);
        return false;
    }
    if (bi[l] < 0 || (uint32_t)bi[l] >= bs->elems) {
        emu_fail(w, in, (int)l, "mbarrier index %d is outside %s %s (%u barriers)", bi[l], bs->name, bs->type, bs->elems);
        return false;
    }
    uint32_t bar = bs->offset + (uint32_t)bi[l] * 8u;
    if (!tgt->mbar[bar / 8u].init_op) {
        emu_fail(w, in, (int)l, "the TMA completes on %s[%d]%s, which no tile.mbarrier_init initialized", bs->name,
                 bi[l], peer);
        return false;
    }
    for (uint32_t i = 0; tgt->pmark && i < bytes; i++)
        if (tgt->pmark[dst + i]) {
            char by[256];
            emu_op_desc(tgt->pend[tgt->pmark[dst + i] - 1].in, by, sizeof by);
            emu_fail(w, in, (int)l, "the TMA into LDS 0x%x%s overwrites bytes that %s still has in flight", dst + i,
                     peer, by);
            return false;
        }
    uint8_t *data;
    /* the record lives with the destination block, which lands it */
    emu_pend *p = emu_pend_new(tgt == w->wk ? w : &tgt->waves[0], in, l, dst, bytes, &data);
    if (!p) {
        if (tgt != w->wk) emu_fail(w, in, (int)l, "%s", tgt->msg);
        return false;
    }
    p->kind = EMU_PEND_TMA;
    p->bar = bar;
    memset(data, 0, bytes);
    if (nd) {
        const int32_t *x1 = REF(in->args[0]), *x2 = REF(in->args[1]), *x3 = REF(in->args[2]);
        int64_t org[4] = {xs[l], x1[l], x2[l], x3[l]};
        for (uint32_t r = 0; r < nrows; r++) {
            uint32_t j[4] = {0, r % take[1], r / take[1] % take[2], r / take[1] / take[2]};
            bool in_t = true;
            uint64_t src = m->base;
            for (uint32_t i = 1; i < 4; i++) {
                int64_t g = org[i] + (int64_t)j[i] * m->estr[i];
                in_t = in_t && g >= 0 && (uint64_t)g < m->dim[i];
                src += (uint64_t)g * m->stride[i];
            }
            for (uint32_t c = 0; c < take[0]; c++) {
                uint32_t at = (uint32_t)emu_swizzle(dst + r * row_bytes + c * m->eb, m->swizzle) - dst;
                if (at + m->eb > bytes) {
                    emu_fail(w, in, (int)l, "the %u-byte swizzle moves box element (%u, %u) to LDS 0x%x, past the box's "
                             "%u bytes (make the box a whole number of %u-byte rows)", m->swizzle, r, c, dst + at, bytes,
                             m->swizzle);
                    return false;
                }
                int64_t gx = org[0] + c;
                if (!in_t || gx < 0 || (uint64_t)gx >= m->dim[0]) continue;   /* zeros */
                const void *h = emu_gmem(w, in, l, src + (uint64_t)gx * m->eb, m->eb, t->prov, false);
                if (!h) return false;
                memcpy(data + at, h, m->eb);
            }
        }
        return true;
    }
    for (uint32_t r = 0; r < m->box_rows; r++) {
        int64_t gy = (int64_t)ys[l] + r;
        for (uint32_t c = 0; c < m->box_cols; c++) {
            int64_t gx = (int64_t)xs[l] + c;
            uint32_t at = (uint32_t)emu_swizzle(dst + r * row_bytes + c * m->eb, m->swizzle) - dst;
            if (at + m->eb > bytes) {
                emu_fail(w, in, (int)l, "the %u-byte swizzle moves box element (%u, %u) to LDS 0x%x, past the box's %u "
                         "bytes (make the box a whole number of %u-byte rows)", m->swizzle, r, c, dst + at, bytes,
                         m->swizzle);
                return false;
            }
            if (gy < 0 || gx < 0 || (uint64_t)gy >= m->rows || (uint64_t)gx >= m->cols) continue;   /* zeros */
            uint64_t src = m->base + (uint64_t)gy * m->row_stride + (uint64_t)gx * m->eb;
            const void *h = emu_gmem(w, in, l, src, m->eb, t->prov, false);
            if (!h) return false;
            memcpy(data + at, h, m->eb);
        }
    }
    return true;
}

/* aux = the decoded map and both allocations; a = dst_idx, b = bar_idx,
 * c = x (column), args[0] = y (row), all i32; multicast (nargs 2):
 * args[1] = the CTA mask, one box per rank whose bit is set, in rank order;
 * rank 4 (imm 4): c = x0, args[0..2] = x1, x2, x3. */
int emu_h_tma_load(emu_wave *w, const emu_ins *in) {
    const int32_t *mask = in->imm != 4 && in->nargs > 1 ? REF(in->args[1]) : NULL;
    uint32_t cs = w->wk->L->csize;
    FOR_ACTIVE(w, l) {
        if (!mask) {
            if (!issue_box(w, in, (uint32_t)l, w->wk)) return EMU_STOP;
            continue;
        }
        uint32_t mk = (uint32_t)mask[l] & 0xffffu;
        if (!mk || mk >> cs)
            return emu_fail(w, in, (int)l, "multicast CTA mask 0x%x %s the cluster's %u block%s (legal: a nonzero mask "
                            "within 0x%x)", mk, mk ? "names ranks outside" : "names none of", cs, cs == 1 ? "" : "s",
                            (1u << cs) - 1u);
        for (uint32_t r = 0; r < cs; r++)
            if ((mk >> r) & 1u) {
                emu_worker *tgt = emu_cluster_peer(w, in, (int)l, r, "the multicast CTA mask");
                if (!tgt || !issue_box(w, in, (uint32_t)l, tgt)) return EMU_STOP;
            }
    }
    return EMU_NEXT;
}

bool emu_tma_land(emu_wave *w, uint32_t bar) {
    emu_worker *wk = w->wk;
    bool any = false;
    for (uint32_t i = 0; i < wk->npend && !wk->failed; i++) {
        emu_pend *p = &wk->pend[i];
        if (p->done || p->kind != EMU_PEND_TMA || (bar != UINT32_MAX && p->bar != bar)) continue;
        any = true;
        if (emu_pend_land(w, i, true)) emu_mbar_complete_tx(w, p->in, p->bar, p->bytes);
    }
    emu_pend_reset_if_idle(wk);
    return any;
}

/* aux = the decoded map and the source allocation; a = src_idx, b = x
 * (column), c = y (row), all i32. The box goes out when the op issues, so a
 * bulk wait has nothing left to wait for; an LDS write to the source before
 * that wait is not caught. */
int emu_h_tma_store(emu_wave *w, const emu_ins *in) {
    const emu_tma_op *t = in->aux;
    const emu_tmap *m = &t->map;
    const emu_smem *s = t->dst;
    const int32_t *si = REF(in->a), *xs = REF(in->b), *ys = REF(in->c);
    uint32_t row_bytes = m->box_cols * m->eb, bytes = row_bytes * m->box_rows;
    FOR_ACTIVE(w, l) {
        int64_t se = si[l];
        if (se < 0 || (uint64_t)se * s->es + bytes > s->bytes)
            return emu_fail(w, in, (int)l, "the %u x %u box (%u bytes) at element %lld does not fit in %s %s (%u bytes)",
                            m->box_rows, m->box_cols, bytes, (long long)se, s->name, s->type, s->bytes);
        uint32_t src = s->offset + (uint32_t)se * s->es;
        if (src % 128)
            return emu_fail(w, in, (int)l, "the TMA store source LDS 0x%x (%s element %lld) is not 128-byte aligned",
                            src, s->name, (long long)se);
        for (uint32_t r = 0; r < m->box_rows; r++) {
            int64_t gy = (int64_t)ys[l] + r;
            for (uint32_t c = 0; c < m->box_cols; c++) {
                int64_t gx = (int64_t)xs[l] + c;
                if (gy < 0 || gx < 0 || (uint64_t)gy >= m->rows || (uint64_t)gx >= m->cols) continue;   /* dropped */
                uint32_t at = (uint32_t)emu_swizzle(src + r * row_bytes + c * m->eb, m->swizzle);
                if (!emu_lds_touch(w, in, (uint32_t)l, at, m->eb, 0)) return EMU_STOP;
                uint64_t dst = m->base + (uint64_t)gy * m->row_stride + (uint64_t)gx * m->eb;
                void *h = emu_gmem(w, in, (uint32_t)l, dst, m->eb, t->prov, true);
                if (!h) return EMU_STOP;
                memcpy(h, w->lds + at, m->eb);
            }
        }
    }
    return EMU_NEXT;
}
