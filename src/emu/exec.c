/* rocke — the emulator's scheduler and control flow: a worker takes
 * workgroups in order, runs each wave's bytecode until it reaches a barrier
 * or the end (the wave keeps its pc, exec mask and mask stack, so it resumes
 * there), releases barriers when every wave arrived, retries waves blocked on
 * an mbarrier once a phase completed, and diagnoses deadlocks.
 * Structured control flow works on the exec mask: lanes leave a loop when
 * their own iv >= hi, an if runs each side for its lanes, and a side with no
 * lanes is skipped (as s_cbranch_execz does). Layer: emu. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "emu_int.h"

/* ---- messages ------------------------------------------------------------------------ */
void emu_op_desc(const emu_ins *in, char *buf, size_t n) {
    const rk_op *op = in->op;
    if (!op) { snprintf(buf, n, "the kernel's end"); return; }
    int k = snprintf(buf, n, "op #%u '%s'", in->opidx, rk_opcode_name(op->code));
    if (op->loc && k >= 0 && (size_t)k < n) k += snprintf(buf + k, n - (size_t)k, " @\"%s\"", op->loc);
    if (op->line && k >= 0 && (size_t)k < n) snprintf(buf + k, n - (size_t)k, " (line %u)", op->line);
}

int emu_fail(emu_wave *w, const emu_ins *in, int lane, const char *fmt, ...) {
    emu_worker *wk = w->wk;
    if (!wk->failed) {
        char what[900], where[300];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        emu_op_desc(in, where, sizeof where);
        if (lane >= 0)
            snprintf(wk->msg, sizeof wk->msg,
                     "emulator: %s; at %s; workgroup (%u,%u,%u) wave %u lane %d (thread (%u,%u,%u))", what, where,
                     wk->wg[0], wk->wg[1], wk->wg[2], w->id, lane, w->tid[0][lane], w->tid[1][lane], w->tid[2][lane]);
        else
            snprintf(wk->msg, sizeof wk->msg, "emulator: %s; at %s; workgroup (%u,%u,%u) wave %u", what, where,
                     wk->wg[0], wk->wg[1], wk->wg[2], w->id);
        wk->failed = true;
        wk->fail_status = RK_ERR_DEVICE;
    }
    w->state = EMU_DONE;
    return EMU_STOP;
}

/* ---- structural handlers ----------------------------------------------------------------- */
static void finish(emu_wave *w, const emu_ins *in) {
    emu_async_complete_dma(w, UINT64_MAX);
    emu_async_complete_groups(w, UINT32_MAX, true);
    w->state = EMU_DONE;
    w->bar_in = in;
}

int emu_h_end(emu_wave *w, const emu_ins *in) {
    finish(w, in);
    return EMU_STOP;
}

int emu_h_nop(emu_wave *w, const emu_ins *in) {
    (void)w; (void)in;
    return EMU_NEXT;
}

/* A seq_cst read-modify-write of one shared word rather than a bare
 * atomic_thread_fence: as strong a barrier on the host (a locked
 * instruction on x86), and one that ThreadSanitizer understands (it
 * refuses fences), so a gpu.fence between workgroups on different host
 * threads is seen as the synchronisation it is. */
static _Atomic uint32_t fence_word;

int emu_h_fence(emu_wave *w, const emu_ins *in) {
    (void)w; (void)in;
    atomic_fetch_add_explicit(&fence_word, 0u, memory_order_seq_cst);
    return EMU_NEXT;
}

int emu_h_unsupported(emu_wave *w, const emu_ins *in) {
    return emu_fail(w, in, -1, "%s", (const char *)in->aux);
}

int emu_h_copy(emu_wave *w, const emu_ins *in) {
    memcpy(REF(in->d), REF(in->a), (size_t)w->W * in->es);
    return EMU_NEXT;
}

/* Lanes whose i1 (a) is set, among all W. */
static uint64_t cond_mask(const emu_wave *w, uint32_t ref) {
    const uint8_t *c = emu_ref(w, ref);
    uint64_t m = 0;
    for (uint32_t l = 0; l < w->W; l++) m |= (uint64_t)(c[l] & 1u) << l;
    return m;
}

/* scf.if: push exec, run the region for the lanes with cond; none: skip. */
int emu_h_if(emu_wave *w, const emu_ins *in) {
    w->ms[w->sp++] = w->exec;
    w->exec &= cond_mask(w, in->a);
    if (!w->exec) w->pc = in->jump;
    return EMU_NEXT;
}
int emu_h_if_end(emu_wave *w, const emu_ins *in) {
    (void)in;
    w->exec = w->ms[--w->sp] & w->alive;
    return EMU_NEXT;
}

/* scf.if_else: stack holds [exec at entry, then-lanes]; jump -> else / end. */
int emu_h_ife(emu_wave *w, const emu_ins *in) {
    uint64_t then = w->exec & cond_mask(w, in->a);
    w->ms[w->sp++] = w->exec;
    w->ms[w->sp++] = then;
    w->exec = then;
    if (!then) w->pc = in->jump;
    return EMU_NEXT;
}
int emu_h_else(emu_wave *w, const emu_ins *in) {
    w->exec = w->ms[w->sp - 2] & ~w->ms[w->sp - 1] & w->alive;
    if (!w->exec) w->pc = in->jump;
    return EMU_NEXT;
}
int emu_h_ife_end(emu_wave *w, const emu_ins *in) {
    (void)in;
    w->sp -= 2;
    w->exec = w->ms[w->sp] & w->alive;
    return EMU_NEXT;
}

/* Masked parallel copy: args = (dst, src) pairs, aux = bytes per lane of each.
 * Sources are read before any destination is written when imm says they may
 * alias (a loop yielding its carries in another order). */
static void masked_copy(emu_wave *w, const emu_ins *in, bool all_lanes) {
    const uint32_t *sz = in->aux;
    uint32_t np = in->nargs / 2;
    uint64_t m = all_lanes ? ~0ull : w->exec;
    bool full = all_lanes || m == (w->W == 64 ? ~0ull : (1ull << w->W) - 1u);
    if (in->imm) {
        /* stage every source first */
        size_t total = 0;
        for (uint32_t p = 0; p < np; p++) total += (size_t)w->W * sz[p];
        uint8_t stack[8192], *tmp = total <= sizeof stack ? stack : rk_malloc(total);
        RK_ASSERT(tmp != NULL, "out of memory staging loop-carried values");
        size_t off = 0;
        for (uint32_t p = 0; p < np; p++) {
            memcpy(tmp + off, emu_ref(w, in->args[2 * p + 1]), (size_t)w->W * sz[p]);
            off += (size_t)w->W * sz[p];
        }
        off = 0;
        for (uint32_t p = 0; p < np; p++) {
            uint8_t *d = emu_ref(w, in->args[2 * p]);
            for (uint32_t l = 0; l < w->W; l++)
                if ((m >> l) & 1u) memcpy(d + (size_t)l * sz[p], tmp + off + (size_t)l * sz[p], sz[p]);
            off += (size_t)w->W * sz[p];
        }
        if (tmp != stack) rk_free(tmp, total);
        return;
    }
    for (uint32_t p = 0; p < np; p++) {
        uint8_t *d = emu_ref(w, in->args[2 * p]);
        const uint8_t *s = emu_ref(w, in->args[2 * p + 1]);
        if (full) {
            memcpy(d, s, (size_t)w->W * sz[p]);
            continue;
        }
        for (uint64_t mm = m; mm; mm &= mm - 1) {
            uint32_t l = (uint32_t)__builtin_ctzll(mm);
            memcpy(d + (size_t)l * sz[p], s + (size_t)l * sz[p], sz[p]);
        }
    }
}

int emu_h_yield(emu_wave *w, const emu_ins *in) {
    masked_copy(w, in, false);
    return EMU_NEXT;
}

/* ---- scf.for --------------------------------------------------------------------------------- */
/* for_init: d = iv <- a (lo); args: carries <- inits; b = hi, c = step;
 * es = 4 or 8 (iv type). A lane that would enter with step <= 0 never leaves. */
static int64_t ld_iv(const void *p, uint32_t l, uint32_t es) {
    return es == 8 ? ((const int64_t *)p)[l] : ((const int32_t *)p)[l];
}

int emu_h_for_init(emu_wave *w, const emu_ins *in) {
    const void *lo = REF(in->a), *hi = REF(in->b), *st = REF(in->c);
    FOR_ACTIVE(w, l) {
        if (ld_iv(lo, (uint32_t)l, in->es) < ld_iv(hi, (uint32_t)l, in->es) && ld_iv(st, (uint32_t)l, in->es) <= 0)
            return emu_fail(w, in, (int)l, "scf.for with step %lld <= 0 would never end (lo %lld < hi %lld)",
                            (long long)ld_iv(st, (uint32_t)l, in->es), (long long)ld_iv(lo, (uint32_t)l, in->es),
                            (long long)ld_iv(hi, (uint32_t)l, in->es));
    }
    memcpy(REF(in->d), lo, (size_t)w->W * in->es);
    masked_copy(w, in, true);
    w->ms[w->sp++] = w->exec;
    return EMU_NEXT;
}

int emu_h_for_head(emu_wave *w, const emu_ins *in) {
    uint64_t stay = 0;
    if (in->es == 8) {
        const int64_t *iv = REF(in->a), *hi = REF(in->b);
        for (uint32_t l = 0; l < w->W; l++) stay |= (uint64_t)(iv[l] < hi[l]) << l;
    } else {
        const int32_t *iv = REF(in->a), *hi = REF(in->b);
        for (uint32_t l = 0; l < w->W; l++) stay |= (uint64_t)(iv[l] < hi[l]) << l;
    }
    w->exec &= stay;
    if (!w->exec) w->pc = in->jump;
    return EMU_NEXT;
}

/* iv += step for the lanes still in the loop; back to the head. */
int emu_h_for_latch(emu_wave *w, const emu_ins *in) {
    if (in->es == 8) {
        int64_t *iv = REF(in->d);
        const int64_t *st = REF(in->c);
        FOR_ACTIVE(w, l) {
            if (__builtin_add_overflow(iv[l], st[l], &iv[l]))
                return emu_fail(w, in, (int)l, "scf.for induction variable overflows i64 (step %lld)", (long long)st[l]);
        }
    } else {
        int32_t *iv = REF(in->d);
        const int32_t *st = REF(in->c);
        FOR_ACTIVE(w, l) {
            if (__builtin_add_overflow(iv[l], st[l], &iv[l]))
                return emu_fail(w, in, (int)l, "scf.for induction variable overflows i32 (step %d)", st[l]);
        }
    }
    w->pc = in->jump;
    return EMU_NEXT;
}

/* Leave: restore exec, copy each lane's carries (their values at the lane's
 * exit) to the loop results. */
int emu_h_for_exit(emu_wave *w, const emu_ins *in) {
    w->exec = w->ms[--w->sp] & w->alive;
    masked_copy(w, in, true);
    return EMU_NEXT;
}

/* cf.return: the active lanes are done; the wave ends when none is left,
 * else it skips to the end of the region it is in. */
int emu_h_return(emu_wave *w, const emu_ins *in) {
    w->alive &= ~w->exec;
    w->exec = 0;
    if (!w->alive) {
        finish(w, in);
        return EMU_STOP;
    }
    w->pc = in->jump;
    return EMU_NEXT;
}

/* ---- identity ---------------------------------------------------------------------------------- */
/* imm: 0 thread_id, 1 block_id, 2 block_dim, 3 grid_dim, 4 lane_id,
 * 5 cluster_id, 6 cluster_dim, 7 cluster_rank; imm2 = axis. */
int emu_h_ids(emu_wave *w, const emu_ins *in) {
    uint32_t *d = REF(in->d), v = 0;
    const emu_launch *L = w->wk->L;
    switch (in->imm) {
    case 0: memcpy(d, w->tid[in->imm2], sizeof(uint32_t) * w->W); return EMU_NEXT;
    case 4: for (uint32_t l = 0; l < w->W; l++) d[l] = l; return EMU_NEXT;
    case 1: v = w->wk->wg[in->imm2]; break;
    case 2: v = L->block[in->imm2]; break;
    case 5: v = w->wk->cl_id[in->imm2]; break;
    case 6: v = L->cluster[in->imm2]; break;
    case 7: v = w->wk->cl_rank; break;
    default: v = L->grid[in->imm2]; break;
    }
    for (uint32_t l = 0; l < w->W; l++) d[l] = v;
    return EMU_NEXT;
}

/* ---- barriers -------------------------------------------------------------------------------------- */
/* imm: 0 tile.sync (drain VMEM first), 1 sync_lds_only, 2 s_barrier_bare,
 * 3 sync_half_block (a = selector; lanes with selector 0 skip it),
 * 4 named barrier (imm2 = id, m = waves that must arrive), 5 named
 * arrive: counts toward barrier imm2 like 4 but the wave runs on (the
 * waves waiting there are released when it completes the count). */
int emu_h_barrier(emu_wave *w, const emu_ins *in) {
    emu_worker *wk = w->wk;
    if (in->imm == 3) {
        const int32_t *sel = REF(in->a);
        uint64_t t = 0;
        FOR_ACTIVE(w, l) t |= (uint64_t)(sel[l] != 0) << l;
        if (!t) return EMU_NEXT;
        if (t != w->exec && wk->check_barriers)
            return emu_fail(w, in, -1, "divergent sync_half_block selector: lanes 0x%llx take the barrier, "
                            "lanes 0x%llx do not", (unsigned long long)t, (unsigned long long)(w->exec & ~t));
    }
    if (wk->check_barriers && w->exec != w->alive)
        return emu_fail(w, in, -1, "barrier reached under a partial exec mask (active lanes 0x%llx of 0x%llx): "
                        "a barrier inside divergent control flow", (unsigned long long)w->exec,
                        (unsigned long long)w->alive);
    if (in->imm == 0) emu_async_complete_dma(w, UINT64_MAX);
    bool named = in->imm >= 4, arrive = in->imm == 5;
    uint32_t id = named ? (uint32_t)in->imm2 : 0;
    uint32_t need = named ? in->m : wk->L->nwaves;
    if (wk->bar_arrived[id] && wk->bar_needed[id] != need)
        return emu_fail(w, in, -1, "barrier %u expects %u waves here but %u at the wave that arrived first", id,
                        need, wk->bar_needed[id]);
    wk->bar_needed[id] = need;
    if (!arrive) {
        w->state = EMU_BAR;
        w->bar_in = in;
        w->bar_id = id;
    }
    if (++wk->bar_arrived[id] >= need) {
        for (uint32_t i = 0; i < wk->L->nwaves; i++) {
            emu_wave *o = &wk->waves[i];
            if (o->state == EMU_BAR && o->bar_id == id) o->state = EMU_RUN;
        }
        wk->bar_arrived[id] = 0;
        wk->epoch++;
    }
    return arrive ? EMU_NEXT : EMU_STOP;
}

/* ---- running -------------------------------------------------------------------------------------- */
/* SWAR popcount: __builtin_popcountll is a libgcc call without -mpopcnt. */
static inline uint64_t popcount(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (x * 0x0101010101010101ull) >> 56;
}

/* ---- the watchdog ---------------------------------------------------------------------------- */
/* Instructions between two looks at the clock and at other workers' faults. */
enum { EMU_WATCH_EVERY = 1u << 16 };

/* " inside scf.for op #3 (line 9)": the innermost loop around op, if any. */
static void loop_of(const emu_prog *P, const rk_op *op, char *buf, size_t n) {
    buf[0] = 0;
    for (const rk_op *o = op; o && o->parent; o = o->parent->owner) {
        const rk_op *own = o->parent->owner;
        if (!own || own->code != RK_OP_FOR) continue;
        for (uint32_t i = 0; i < P->nops; i++)
            if (P->ops[i] == own) {
                emu_ins fake = {.op = own, .opidx = i};
                char d[256];
                emu_op_desc(&fake, d, sizeof d);
                snprintf(buf, n, " inside the loop %s", d);
                return;
            }
    }
}

/* Called every EMU_WATCH_EVERY instructions and at the step limit, before
 * instruction `in` runs, with `steps` executed so far: false when the wave
 * must stop (it failed, or its workgroup's result can no longer matter). */
static bool watchdog(emu_wave *w, const emu_ins *in, uint64_t steps) {
    emu_worker *wk = w->wk;
    const emu_launch *L = wk->L;
    char lp[300];
    if (wk->max_steps && steps >= wk->max_steps) {
        loop_of(w->P, in->op, lp, sizeof lp);
        emu_fail(w, in, -1, "the wave executed %llu instructions, the step limit (max_steps; --max-steps N, 0 = no "
                 "limit): a loop that never ends?%s", (unsigned long long)steps, lp);
        return false;
    }
    if (L->deadline > 0 && emu_now() > L->deadline) {
        loop_of(w->P, in->op, lp, sizeof lp);
        emu_fail(w, in, -1, "the launch ran past its timeout of %g s (timeout_s; --timeout S, 0 = none) after %llu "
                 "instructions of this wave%s", L->timeout_s, (unsigned long long)steps, lp);
        return false;
    }
    if (__atomic_load_n(&L->stop_wg, __ATOMIC_RELAXED) < wk->wg_lin) {
        /* a lower workgroup failed: its message wins, this one is dropped */
        emu_fail(w, in, -1, "abandoned after an earlier workgroup's fault");
        return false;
    }
    return true;
}

/* How many instructions the wave may run before the watchdog looks again. */
static uint64_t watch_budget(const emu_wave *w, uint64_t steps) {
    uint64_t lim = w->wk->max_steps, b = EMU_WATCH_EVERY;
    if (lim && lim - steps < b) b = steps < lim ? lim - steps : 0;
    return b;
}

static void run_wave(emu_wave *w) {
    const emu_ins *code = w->P->code;
    uint64_t ni = 0, lo = 0, next = watch_budget(w, w->steps);
    for (;;) {
        if (__builtin_expect(ni == next, 0)) {
            if (!watchdog(w, &code[w->pc], w->steps + ni)) break;
            next = ni + watch_budget(w, w->steps + ni);
        }
        const emu_ins *in = &code[w->pc++];
        ni++;
        lo += popcount(w->exec);
        if (in->fn(w, in) != EMU_NEXT) break;
    }
    w->steps += ni;
    w->wk->instructions += ni;
    w->wk->lane_ops += lo;
}

static void deadlock(emu_worker *wk) {
    bool mbar = false;
    for (uint32_t i = 0; i < wk->L->nwaves; i++) mbar |= wk->waves[i].state == EMU_MBAR;
    size_t k = (size_t)snprintf(wk->msg, sizeof wk->msg, mbar
                                ? "emulator: mbarrier deadlock in workgroup (%u,%u,%u): a tile.mbarrier_wait can never complete"
                                : "emulator: barrier deadlock in workgroup (%u,%u,%u): not every wave reaches the barrier",
                                wk->wg[0], wk->wg[1], wk->wg[2]);
    if (wk->L->csize > 1 && k < sizeof wk->msg)
        k += (size_t)snprintf(wk->msg + k, sizeof wk->msg - k, " (cluster rank %u of %u)", wk->cl_rank, wk->L->csize);
    for (uint32_t i = 0; i < wk->L->nwaves && k < sizeof wk->msg; i++) {
        const emu_wave *w = &wk->waves[i];
        char where[300], what[300] = "";
        emu_op_desc(w->bar_in, where, sizeof where);
        if (w->state == EMU_MBAR) {
            what[0] = ' ';
            emu_mbar_describe(wk, w, what + 1, sizeof what - 1);
        } else if (w->state == EMU_CLUSTER) {
            what[0] = ' ';
            emu_cluster_describe(wk, what + 1, sizeof what - 1);
        }
        k += (size_t)snprintf(wk->msg + k, sizeof wk->msg - k, "; wave %u %s %s%s", i,
                              w->state == EMU_DONE ? "finished at" : "waits at", where, what);
    }
    wk->failed = true;
    wk->fail_status = RK_ERR_DEVICE;
}

static void init_waves(emu_worker *wk) {
    const emu_launch *L = wk->L;
    const emu_prog *P = wk->P;
    uint32_t bx = L->block[0], by = L->block[1];
    uint32_t nthreads = L->block[0] * L->block[1] * L->block[2];
    memset(wk->regs, 0, (size_t)L->nwaves * P->regs_bytes);
    for (uint32_t i = 0; i < L->nwaves; i++) {
        emu_wave *w = &wk->waves[i];
        w->R = wk->regs + (size_t)i * P->regs_bytes;
        w->C = P->cpool;
        w->lds = wk->lds;
        w->ms = wk->mstack + (size_t)i * (P->depth + 1);
        w->sp = 0;
        w->pc = 0;
        w->wk = wk;
        w->P = P;
        w->id = i;
        w->W = P->W;
        w->state = EMU_RUN;
        w->bar_in = NULL;
        w->vm_seq = 0;
        w->groups = 0;
        w->wg_groups = 0;
        w->wg_fenced = false;
        w->maxnreg = w->maxnreg_n = w->maxnreg_op = 0;
        w->steps = 0;
        w->cl_arrivals = 0;
        uint64_t m = 0;
        for (uint32_t l = 0; l < P->W; l++) {
            uint32_t t = i * P->W + l;
            if (t < nthreads) m |= 1ull << l;
            w->tid[0][l] = t % bx;
            w->tid[1][l] = (t / bx) % by;
            w->tid[2][l] = t / (bx * by);
        }
        w->exec = w->alive = m;
    }
}

/* Block rank of work unit (cluster) u: its coordinates, and a fresh start. */
static void start_block(emu_worker *wk, uint64_t u, uint32_t rank) {
    const emu_launch *L = wk->L;
    const uint32_t *cd = L->cluster;
    uint32_t gc[3] = {L->grid[0] / cd[0], L->grid[1] / cd[1], L->grid[2] / cd[2]};
    wk->cl_id[0] = (uint32_t)(u % gc[0]);
    wk->cl_id[1] = (uint32_t)((u / gc[0]) % gc[1]);
    wk->cl_id[2] = (uint32_t)(u / ((uint64_t)gc[0] * gc[1]));
    wk->cl_rank = rank;
    wk->wg[0] = wk->cl_id[0] * cd[0] + rank % cd[0];
    wk->wg[1] = wk->cl_id[1] * cd[1] + (rank / cd[0]) % cd[1];
    wk->wg[2] = wk->cl_id[2] * cd[2] + rank / (cd[0] * cd[1]);
    wk->wg_lin = u;
    wk->cl_arrived = 0;
    wk->cl_phase = 0;
    /* LDS is not zeroed on hardware: fill it with 0xff bytes (NaN as f16/f32,
     * -1 as ints) so a kernel reading LDS it never wrote shows it */
    if (wk->P->lds_total) memset(wk->lds, 0xff, wk->P->lds_total);
    if (++wk->epoch >= 0xfffffff0u) {
        if (wk->shadow) memset(wk->shadow, 0, (size_t)wk->P->lds_total * sizeof *wk->shadow);
        wk->epoch = 1;
    }
    memset(wk->bar_arrived, 0, sizeof wk->bar_arrived);
    memset(wk->bar_needed, 0, sizeof wk->bar_needed);
    wk->npend = wk->pend_live = 0;
    wk->pdata_len = 0;
    wk->nwgrec = 0;
    if (wk->mbar) memset(wk->mbar, 0, (wk->P->lds_total / 8u + 1u) * sizeof *wk->mbar);
    init_waves(wk);
    wk->workgroups++;
    wk->nwaves_run += L->nwaves;
}

/* The first failed block of the unit (NULL: none). */
static emu_worker *failed_block(emu_worker *b, uint32_t n) {
    for (uint32_t r = 0; r < n; r++)
        if (b[r].failed) return &b[r];
    return NULL;
}

/* A wave parked in memref.global_wait when nothing else can run: no block
 * of the unit will ever change the word. Reported at the first such wave,
 * with how many of the unit's blocks wait there. */
static void spin_deadlock(emu_worker *b, uint32_t n, emu_worker *wk, uint32_t wave) {
    const emu_launch *L = wk->L;
    uint32_t waiting = 0;
    for (uint32_t r = 0; r < n; r++) {
        bool any = false;
        for (uint32_t i = 0; i < L->nwaves; i++) any |= b[r].waves[i].state == EMU_SPIN;
        waiting += any;
    }
    const emu_wave *w = &wk->waves[wave];
    char where[300], what[300];
    emu_op_desc(w->bar_in, where, sizeof where);
    emu_gwait_describe(w, what, sizeof what);
    snprintf(wk->msg, sizeof wk->msg,
             "emulator: grid barrier deadlock: a memref.global_wait can never complete; workgroup (%u,%u,%u) wave %u "
             "waits at %s %s, and %u of the %u block%s run together wait there%s", wk->wg[0], wk->wg[1], wk->wg[2],
             wave, where, what, waiting, n, n == 1 ? "" : "s",
             L->coop ? " while the others finished or block (a grid barrier that not every block reaches, or a "
                       "counter the last launch left inconsistent)"
                     : ": the kernel is not cooperative, so its blocks are not all resident at once and the block "
                       "that would release the wait may never run (give it the cooperative attribute, "
                       "rk_kernel_set_cooperative)");
    wk->failed = true;
    wk->fail_status = RK_ERR_DEVICE;
}

/* Run the unit's n blocks (b[0..n): a cluster, one workgroup, or the whole
 * grid of a cooperative kernel) as one pool of waves, in block then wave
 * order, until all are done or none can run. A wave parked in a
 * memref.global_wait is probed again every round; a round in which every
 * probe failed and nothing else ran makes no progress. */
static void run_unit(emu_worker *b, uint32_t n, uint64_t u) {
    const emu_launch *L = b[0].L;
    const uint32_t cs = L->csize;
    for (uint32_t r = 0; r < n; r++) start_block(&b[r], u * (n / cs) + r / cs, r % cs);
    for (;;) {
        bool ran = false, all_done = true;
        for (uint32_t r = 0; r < n; r++) {
            emu_worker *wk = &b[r];
            for (uint32_t i = 0; i < L->nwaves; i++) {
                emu_wave *w = &wk->waves[i];
                /* a wave blocked on an mbarrier retries once some phase completed */
                if (w->state == EMU_MBAR && w->mbar_seen != wk->mbar_events) w->state = EMU_RUN;
                if (w->state == EMU_SPIN) w->state = EMU_RUN;
                if (w->state == EMU_RUN) {
                    uint64_t s0 = w->steps;
                    run_wave(w);
                    if (w->state != EMU_SPIN || w->steps - s0 > 1) ran = true;
                    if (failed_block(b, n)) return;
                }
                if (w->state != EMU_DONE) all_done = false;
            }
        }
        if (all_done) return;
        if (ran) continue;
        /* nothing can run: TMA bytes still in flight land now, then retry */
        bool landed = false;
        for (uint32_t r = 0; r < n; r++)
            if (b[r].mbar) landed |= emu_tma_land(&b[r].waves[0], UINT32_MAX);
        if (failed_block(b, n)) return;
        if (landed) continue;
        for (uint32_t r = 0; r < n; r++)
            for (uint32_t i = 0; i < L->nwaves; i++)
                if (b[r].waves[i].state == EMU_SPIN) {
                    spin_deadlock(b, n, &b[r], i);
                    return;
                }
        for (uint32_t r = 0; r < n; r++) {
            bool stuck = false;
            for (uint32_t i = 0; i < L->nwaves; i++) stuck |= b[r].waves[i].state != EMU_DONE;
            if (stuck) {
                deadlock(&b[r]);
                return;
            }
        }
        return;
    }
}

/* wk: the first of the thread's L->usize blocks (a cluster's, in rank
 * order, or a cooperative grid's); it takes work units in order. */
void emu_worker_run(emu_worker *wk) {
    emu_launch *L = wk->L;
    for (;;) {
        uint64_t g = __atomic_fetch_add(&L->next_wg, 1, __ATOMIC_RELAXED);
        if (g >= L->nunits || g >= __atomic_load_n(&L->stop_wg, __ATOMIC_RELAXED)) return;
        run_unit(wk, L->usize, g);
        emu_worker *bad = failed_block(wk, L->usize);
        if (!bad) continue;
        if (bad != wk) {
            memcpy(wk->msg, bad->msg, sizeof wk->msg);
            wk->fail_status = bad->fail_status;
            wk->failed = true;
        }
        /* keep the error of the lowest failing workgroup: every lower one was
         * taken before this one and still runs to completion */
        pthread_mutex_lock(&L->lock);
        if (!L->err || g < L->err_wg) {
            rk_free(L->err, 0);
            L->err = rk_strdup(wk->msg);
            L->err_wg = g;
            L->err_status = wk->fail_status;
        }
        uint64_t cur = __atomic_load_n(&L->stop_wg, __ATOMIC_RELAXED);
        if (g < cur) __atomic_store_n(&L->stop_wg, g, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&L->lock);
        return;
    }
}
