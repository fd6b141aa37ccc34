/* rocke — mbarriers (tile.mbarrier_*): each 64-bit barrier object in LDS has
 * its state beside the LDS (expected and pending arrivals, transaction count,
 * phase). A phase completes when its last arrival is made and its
 * transaction count is zero; a wave waiting on an incomplete phase yields to
 * the other waves. Misuse (arrivals past the count, more bytes than
 * expect_tx announced, a barrier never initialized) is a fault. Layer: emu. */
#include <stdio.h>

#include "emu_int.h"

enum { MBAR_MAX = (1 << 20) - 1 };   /* PTX: counts and tx-count lie in [-(2^20-1), 2^20-1] */

/* aux = the barriers' allocation, a = index (i32), b = count / tx / parity. */
static bool locate(emu_wave *w, const emu_ins *in, uint32_t lane, uint32_t *off) {
    const emu_smem *s = in->aux;
    int32_t i = ((const int32_t *)REF(in->a))[lane];
    if (i < 0 || (uint32_t)i >= s->elems) {
        emu_fail(w, in, (int)lane, "mbarrier index %d is outside %s %s (%u barriers)", i, s->name, s->type, s->elems);
        return false;
    }
    *off = s->offset + (uint32_t)i * 8u;
    return true;
}

static emu_mbar *state(emu_worker *wk, uint32_t off) { return &wk->mbar[off / 8u]; }

static void name_of(const emu_wave *w, const emu_ins *in, uint32_t off, char *buf, size_t n) {
    /* a TMA load's aux is its emu_tma_op (the barriers' allocation inside), the mbarrier ops' the allocation */
    const emu_smem *s = in->fn == emu_h_tma_load ? ((const emu_tma_op *)in->aux)->bars : in->aux;
    if (s && off >= s->offset && off < s->offset + s->bytes)
        snprintf(buf, n, "%s[%u] (LDS 0x%x)", s->name, (off - s->offset) / 8u, off);
    else
        snprintf(buf, n, "the mbarrier at LDS 0x%x", off);
    (void)w;
}

/* tgt: the block whose barrier it is (w's own, or a cluster peer's) */
static bool initialized(emu_wave *w, const emu_ins *in, uint32_t lane, emu_worker *tgt, uint32_t off) {
    if (state(tgt, off)->init_op) return true;
    char nm[160];
    name_of(w, in, off, nm, sizeof nm);
    if (tgt == w->wk)
        emu_fail(w, in, (int)lane, "%s is used before any tile.mbarrier_init in this workgroup", nm);
    else
        emu_fail(w, in, (int)lane, "%s of the cluster's block of rank %u is used before any tile.mbarrier_init there "
                 "(initialize, tile.fence_mbarrier_init, then a cluster barrier before remote use)", nm, tgt->cl_rank);
    return false;
}

/* A completed phase orders its arrivals before the waits that see it; the
 * race checker cannot tell which waves those are, so like a named barrier it
 * starts a new epoch for the whole workgroup. */
static void complete_phase(emu_worker *wk, emu_mbar *m) {
    m->phase++;
    m->pending = m->expected;
    m->tx = 0;
    wk->mbar_events++;
    wk->epoch++;
}

/* After an arrival or a completed transfer: the phase completes at zero
 * pending arrivals and zero bytes; more bytes than announced is misuse. */
static bool settle(emu_wave *w, const emu_ins *in, int lane, emu_worker *tgt, uint32_t off) {
    emu_mbar *m = state(tgt, off);
    if (m->pending || m->tx > 0) return true;
    if (m->tx < 0) {
        char nm[160];
        name_of(w, in, off, nm, sizeof nm);
        emu_fail(w, in, lane, "expect_tx underflow on %s: phase %u received %d bytes more than its "
                 "mbarrier_arrive_expect_tx announced", nm, m->phase, -m->tx);
        return false;
    }
    complete_phase(tgt, m);
    return true;
}

int emu_h_mbar_init(emu_wave *w, const emu_ins *in) {
    const int32_t *cnt = REF(in->b);
    FOR_ACTIVE(w, l) {
        uint32_t off;
        if (!locate(w, in, (uint32_t)l, &off)) return EMU_STOP;
        if (cnt[l] < 1 || cnt[l] > MBAR_MAX)
            return emu_fail(w, in, (int)l, "mbarrier_init count %d is outside 1..%d", cnt[l], MBAR_MAX);
        if (!emu_lds_touch(w, in, (uint32_t)l, off, 8, 1)) return EMU_STOP;
        *state(w->wk, off) = (emu_mbar){.expected = (uint32_t)cnt[l], .pending = (uint32_t)cnt[l], .init_op = in->opidx + 1};
    }
    return EMU_NEXT;
}

/* imm 0: mbarrier_arrive; 1: mbarrier_arrive_expect_tx (b = bytes). Lanes
 * arrive in lane order, each once. */
/* One arrival of lane l on the barrier at off of block tgt, announcing tx
 * bytes first when has_tx; false after emu_fail. */
static bool arrive_on(emu_wave *w, const emu_ins *in, uint32_t l, emu_worker *tgt, uint32_t off, bool has_tx,
                      int32_t tx) {
    emu_mbar *m = state(tgt, off);
    char nm[160];
    name_of(w, in, off, nm, sizeof nm);
    if (has_tx) {
        int64_t t = (int64_t)m->tx + tx;
        if (tx < 0 || t > MBAR_MAX) {
            emu_fail(w, in, (int)l, "expect_tx of %d bytes on %s takes phase %u's transaction count to %lld, outside "
                     "0..%d", tx, nm, m->phase, (long long)t, MBAR_MAX);
            return false;
        }
        m->tx = (int32_t)t;
    }
    if (!m->pending) {
        emu_fail(w, in, (int)l, "arrive count overflow on %s%s: phase %u already has all %u arrivals and waits only "
                 "for %d bytes", nm, tgt == w->wk ? "" : " of a cluster peer", m->phase, m->expected, m->tx);
        return false;
    }
    m->pending--;
    return settle(w, in, (int)l, tgt, off);
}

int emu_h_mbar_arrive(emu_wave *w, const emu_ins *in) {
    const int32_t *tx = in->imm ? REF(in->b) : NULL;
    FOR_ACTIVE(w, l) {
        uint32_t off;
        if (!locate(w, in, (uint32_t)l, &off) || !initialized(w, in, (uint32_t)l, w->wk, off)) return EMU_STOP;
        if (!emu_lds_touch(w, in, (uint32_t)l, off, 8, 2)) return EMU_STOP;
        if (!arrive_on(w, in, (uint32_t)l, w->wk, off, tx != NULL, tx ? tx[l] : 0)) return EMU_STOP;
    }
    return EMU_NEXT;
}

/* The same barrier offset in the block of rank b[l]; the peer's race shadow
 * is not touched (the arrival is a release at cluster scope). */
int emu_h_mbar_arrive_cluster(emu_wave *w, const emu_ins *in) {
    const int32_t *rank = REF(in->b);
    FOR_ACTIVE(w, l) {
        uint32_t off;
        if (!locate(w, in, (uint32_t)l, &off)) return EMU_STOP;
        emu_worker *tgt = emu_cluster_peer(w, in, (int)l, rank[l], "tile.mbarrier_arrive_cluster");
        if (!tgt || !initialized(w, in, (uint32_t)l, tgt, off)) return EMU_STOP;
        if (tgt == w->wk && !emu_lds_touch(w, in, (uint32_t)l, off, 8, 2)) return EMU_STOP;
        if (!arrive_on(w, in, (uint32_t)l, tgt, off, false, 0)) return EMU_STOP;
    }
    return EMU_NEXT;
}

bool emu_mbar_complete_tx(emu_wave *w, const emu_ins *in, uint32_t off, uint32_t bytes) {
    emu_mbar *m = state(w->wk, off);
    if (!m->init_op) return true;   /* the issuing op checked it; a re-init in between dropped the phase */
    if ((int64_t)m->tx - bytes < -(int64_t)MBAR_MAX) {
        char nm[160];
        name_of(w, in, off, nm, sizeof nm);
        emu_fail(w, in, -1, "%u bytes completing on %s take its transaction count below -%d", bytes, nm, MBAR_MAX);
        return false;
    }
    m->tx -= (int32_t)bytes;
    return settle(w, in, -1, w->wk, off);
}

/* Has the phase of parity p completed? The current phase is incomplete, so
 * parity p names it when p equals its parity and the one before otherwise
 * (try_wait.parity). */
static bool done(const emu_mbar *m, int32_t p) { return (m->phase & 1u) != ((uint32_t)p & 1u); }

int emu_h_mbar_wait(emu_wave *w, const emu_ins *in) {
    const int32_t *par = REF(in->b);
    /* TMA bytes land as late as possible: when a wait needs them */
    FOR_ACTIVE(w, l) {
        uint32_t off;
        if (!locate(w, in, (uint32_t)l, &off) || !initialized(w, in, (uint32_t)l, w->wk, off)) return EMU_STOP;
        if (!emu_lds_touch(w, in, (uint32_t)l, off, 8, 2)) return EMU_STOP;
        if (!done(state(w->wk, off), par[l])) emu_tma_land(w, off);
        if (w->wk->failed) return EMU_STOP;
    }
    FOR_ACTIVE(w, l) {
        uint32_t off;
        if (!locate(w, in, (uint32_t)l, &off)) return EMU_STOP;
        if (done(state(w->wk, off), par[l])) continue;
        w->state = EMU_MBAR;
        w->pc = (uint32_t)(in - w->P->code);
        w->bar_in = in;
        w->mbar_seen = w->wk->mbar_events;
        w->mbar_wait = off | ((uint32_t)(par[l] & 1) << 31);
        return EMU_STOP;
    }
    return EMU_NEXT;
}

void emu_mbar_describe(const emu_worker *wk, const emu_wave *w, char *buf, size_t n) {
    uint32_t off = w->mbar_wait & 0x7fffffffu, p = w->mbar_wait >> 31;
    const emu_mbar *m = &wk->mbar[off / 8u];
    char nm[160];
    name_of(w, w->bar_in, off, nm, sizeof nm);
    snprintf(buf, n, "for the phase of parity %u of %s, which can never complete: phase %u has %u of %u arrivals "
             "pending and a transaction count of %d bytes", p, nm, m->phase, m->pending, m->expected, m->tx);
}
