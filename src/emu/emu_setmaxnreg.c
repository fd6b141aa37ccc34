/* rocke — tile.setmaxnreg: a register-allocation hint with no effect on
 * values, so the emulator only checks the PTX ISA's rules for it: all lanes,
 * a whole warpgroup, every warp of the warpgroup executing the same one,
 * dec never raising and inc never lowering the warp's limit, and the block's
 * limits fitting the register file once every warp has set one. Layer: emu. */
#include <stdio.h>

#include "emu_int.h"

/* The warps of w's warpgroup that have executed as many setmaxnreg ops as w
 * must have executed this very one with the same count. */
static bool same_in_warpgroup(emu_wave *w, const emu_ins *in) {
    emu_worker *wk = w->wk;
    for (uint32_t v = w->id & ~3u; v < (w->id | 3u) + 1u && v < wk->L->nwaves; v++) {
        const emu_wave *o = &wk->waves[v];
        if (v == w->id || o->maxnreg_n != w->maxnreg_n) continue;
        if (o->maxnreg_op != in->opidx || o->maxnreg != (uint32_t)in->imm)
            return emu_fail(w, in, -1, "warps %u and %u of warpgroup %u ran different tile.setmaxnreg ops as their "
                            "setmaxnreg number %u (op #%u to %u registers, op #%u to %lld): every warp of a warpgroup "
                            "must execute the same one", v, w->id, w->id / 4u, w->maxnreg_n, o->maxnreg_op, o->maxnreg,
                            in->opidx, (long long)in->imm), false;
    }
    return true;
}

/* Once every warp has a limit, the limits must fit the register file: an
 * inc beyond it would wait for the pool forever. */
static bool fits(emu_wave *w, const emu_ins *in) {
    emu_worker *wk = w->wk;
    uint64_t sum = 0;
    for (uint32_t v = 0; v < wk->L->nwaves; v++) {
        if (!wk->waves[v].maxnreg_n) return true;
        sum += (uint64_t)wk->waves[v].maxnreg * w->W;
    }
    uint32_t file = w->P->t->regs_per_sm;
    if (file && sum > file)
        return emu_fail(w, in, -1, "the block's tile.setmaxnreg limits add up to %llu registers (limit x %u lanes over "
                        "%u warps), more than the %u of %s's register file: a setmaxnreg.inc would wait forever",
                        (unsigned long long)sum, w->W, wk->L->nwaves, file, w->P->t->name), false;
    return true;
}

int emu_h_setmaxnreg(emu_wave *w, const emu_ins *in) {
    const emu_launch *L = w->wk->L;
    uint32_t nthreads = L->block[0] * L->block[1] * L->block[2], last = (w->id | 3u) + 1u;
    const char *act = in->m ? "inc" : "dec";
    if (w->exec != emu_full(w))
        return emu_fail(w, in, -1, "tile.setmaxnreg needs every lane of the warp (.sync.aligned): active lanes 0x%llx",
                        (unsigned long long)w->exec);
    if (last * w->W > nthreads)
        return emu_fail(w, in, -1, "tile.setmaxnreg acts on a warpgroup of 4 warps: warp %u's warpgroup (threads "
                        "%u..%u) is not complete in a block of %u threads", w->id, (w->id & ~3u) * w->W,
                        last * w->W - 1u, nthreads);
    uint32_t regs = (uint32_t)in->imm;
    if (w->maxnreg && (in->m ? regs < w->maxnreg : regs > w->maxnreg))
        return emu_fail(w, in, -1, "setmaxnreg.%s to %u registers, but warp %u's limit is already %u: dec may only "
                        "lower the limit and inc only raise it", act, regs, w->id, w->maxnreg);
    w->maxnreg_n++;
    if (!same_in_warpgroup(w, in)) return EMU_STOP;
    w->maxnreg = regs;
    w->maxnreg_op = in->opidx;
    return fits(w, in) ? EMU_NEXT : EMU_STOP;
}
