/* rocke — thread-block clusters: the blocks of a cluster run together on one
 * host thread (exec.c schedules their waves as one pool), each with its own
 * LDS; an op reaches another block's shared memory through its rank. The
 * cluster barrier counts waves: tile.cluster_arrive is a wave's arrival in
 * the current phase, tile.cluster_wait blocks until the phase of the wave's
 * last arrival completed, i.e. every wave of every block arrived. Layer: emu. */
#include <stdio.h>

#include "emu_int.h"

emu_worker *emu_cluster_peer(emu_wave *w, const emu_ins *in, int lane, int64_t rank, const char *what) {
    const emu_launch *L = w->wk->L;
    if (rank < 0 || rank >= (int64_t)L->csize) {
        emu_fail(w, in, lane, "%s names cluster rank %lld, outside the cluster's %u block%s (ranks 0..%u of "
                 "cluster_dims [%u, %u, %u])", what, (long long)rank, L->csize, L->csize == 1 ? "" : "s",
                 L->csize - 1u, L->cluster[0], L->cluster[1], L->cluster[2]);
        return NULL;
    }
    return w->wk->peers ? &w->wk->peers[rank] : w->wk;
}

/* Waves of the whole cluster (every one must arrive). */
static uint32_t cluster_waves(const emu_worker *wk) { return wk->L->csize * wk->L->nwaves; }

int emu_h_cluster_arrive(emu_wave *w, const emu_ins *in) {
    emu_worker *wk = w->wk, *lead = wk->peers ? &wk->peers[0] : wk;
    if (wk->check_barriers && w->exec != w->alive)
        return emu_fail(w, in, -1, "tile.cluster_arrive under a partial exec mask (active lanes 0x%llx of 0x%llx): "
                        "every thread of the cluster arrives", (unsigned long long)w->exec,
                        (unsigned long long)w->alive);
    if (w->cl_arrivals > lead->cl_phase)
        return emu_fail(w, in, -1, "tile.cluster_arrive twice in cluster barrier phase %llu: a thread arrives once, "
                        "then waits (tile.cluster_wait) before it arrives again", (unsigned long long)lead->cl_phase);
    w->cl_arrivals++;
    if (++lead->cl_arrived < cluster_waves(wk)) return EMU_NEXT;
    /* the phase completes: release the waiting waves of every block, and
     * order everything before it (a new race-checker epoch in each block) */
    lead->cl_arrived = 0;
    lead->cl_phase++;
    for (uint32_t r = 0; r < wk->L->csize; r++) {
        emu_worker *b = wk->peers ? &wk->peers[r] : wk;
        b->epoch++;
        for (uint32_t i = 0; i < wk->L->nwaves; i++)
            if (b->waves[i].state == EMU_CLUSTER) b->waves[i].state = EMU_RUN;
    }
    return EMU_NEXT;
}

int emu_h_cluster_wait(emu_wave *w, const emu_ins *in) {
    emu_worker *wk = w->wk, *lead = wk->peers ? &wk->peers[0] : wk;
    if (w->cl_arrivals == 0)
        return emu_fail(w, in, -1, "tile.cluster_wait before any tile.cluster_arrive of this thread: a wait "
                        "completes the phase the thread arrived in");
    if (w->cl_arrivals <= lead->cl_phase) return EMU_NEXT;
    w->state = EMU_CLUSTER;
    w->bar_in = in;
    return EMU_STOP;   /* resumes after the wait: the releasing arrive sets EMU_RUN */
}

void emu_cluster_describe(const emu_worker *wk, char *buf, size_t n) {
    const emu_worker *lead = wk->peers ? &wk->peers[0] : wk;
    snprintf(buf, n, "for cluster barrier phase %llu, which %u of the cluster's %u waves have arrived at",
             (unsigned long long)lead->cl_phase, lead->cl_arrived, cluster_waves(wk));
}
