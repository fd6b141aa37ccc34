/* rocke — memref.global_wait: a wave spins on a global word until it
 * compares (ne, or uge unsigned) with a value. Each probe reads every active
 * lane's word (an atomic load of the host memory, so a writer on another
 * host thread is seen); while any lane's test is false the wave parks in
 * EMU_SPIN with its pc on the wait and the scheduler runs the others
 * (exec.c), which is how a grid barrier of a cooperative launch completes.
 * Layer: emu. */
#include <stdio.h>

#include "emu_int.h"

static int64_t index_at(const void *ix, uint64_t l, bool is64) {
    return is64 ? ((const int64_t *)ix)[l] : ((const int32_t *)ix)[l];
}

int emu_h_gwait(emu_wave *w, const emu_ins *in) {
    const emu_fatptr *p = REF(in->a);
    const void *ix = REF(in->b);
    const uint8_t *v = REF(in->c);
    uint32_t es = in->es;
    FOR_ACTIVE(w, l) {
        uint64_t addr = p[l].addr + (uint64_t)index_at(ix, l, in->imm2 & 1) * (uint64_t)(in->imm2 >> 1);
        void *h = emu_gmem(w, in, (uint32_t)l, addr, es, p[l].prov, false);
        if (!h) return EMU_STOP;
        if (addr % es)
            return emu_fail(w, in, (int)l, "memref.global_wait of %u bytes at 0x%llx is not %u-byte aligned", es,
                            (unsigned long long)addr, es);
        uint64_t have = 0, want = 0;
        memcpy(&want, v + l * es, es);
        if (es == 4) have = __atomic_load_n((uint32_t *)h, __ATOMIC_ACQUIRE);
        else have = __atomic_load_n((uint64_t *)h, __ATOMIC_ACQUIRE);
        bool ok = in->imm ? have >= want : have != want;
        if (ok) continue;
        w->state = EMU_SPIN;
        w->pc = (uint32_t)(in - w->P->code);
        w->bar_in = in;
        w->spin_addr = addr;
        w->spin_have = have;
        w->spin_want = want;
        return EMU_STOP;
    }
    w->vm_seq++;
    return EMU_NEXT;
}

void emu_gwait_describe(const emu_wave *w, char *buf, size_t n) {
    bool uge = w->bar_in && w->bar_in->imm;
    snprintf(buf, n, "until the word at 0x%llx (holding %llu) is %s %llu", (unsigned long long)w->spin_addr,
             (unsigned long long)w->spin_have, uge ? ">=" : "not", (unsigned long long)w->spin_want);
}
