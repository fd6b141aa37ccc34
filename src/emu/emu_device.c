/* rocke — the emulator's public face: the device object, device memory as
 * host buffers behind fake addresses, and launches (verify, compile, run the
 * workgroups on a pool of host threads, report the first fault by
 * workgroup order). Layer: emu. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "emu_int.h"

/* Device addresses start high and leave a 64 KiB hole between buffers, so an
 * address computed from garbage rarely lands in a buffer, and a small overrun
 * never reaches the next one. */
#define EMU_ADDR_BASE 0x100000000000ull
#define EMU_ADDR_GAP 0x10000ull

rk_emu_options rk_emu_options_default(void) {
    return (rk_emu_options){.threads = 0, .check_races = true, .check_barriers = true, .check_async = true,
                            .max_steps = RK_EMU_DEFAULT_MAX_STEPS};
}

rk_status rk_emu_options_from_env(rk_emu_options *o) {
    if (!o) return rk_fail(RK_ERR_INVALID, "rk_emu_options_from_env: o is NULL");
    const char *ms = getenv("ROCKE_EMU_MAX_STEPS"), *to = getenv("ROCKE_EMU_TIMEOUT");
    char *end = NULL;
    if (ms && *ms) {
        errno = 0;
        unsigned long long v = strtoull(ms, &end, 10);
        if (*end || errno || ms[0] == '-')
            return rk_fail(RK_ERR_INVALID, "ROCKE_EMU_MAX_STEPS='%s' is not a step count (a non-negative integer; 0 = "
                           "no limit)", ms);
        o->max_steps = v;
    }
    if (to && *to) {
        errno = 0;
        double v = strtod(to, &end);
        if (*end || errno || !(v >= 0) || v > 1e9)
            return rk_fail(RK_ERR_INVALID, "ROCKE_EMU_TIMEOUT='%s' is not a timeout (seconds, 0 to 1e9; 0 = none)", to);
        o->timeout_s = v;
    }
    return RK_OK;
}

rk_emu *rk_emu_new(const rk_target *t, const rk_emu_options *opt) {
    if (!t) { rk_fail(RK_ERR_INVALID, "rk_emu_new: target is NULL (legal: %s)", rk_target_names()); return NULL; }
    if (t->wave_size != 32 && t->wave_size != 64) {
        rk_fail(RK_ERR_UNSUPPORTED, "rk_emu_new: %s has a %u-lane wave; the emulator runs 32 or 64", t->name, t->wave_size);
        return NULL;
    }
    rk_emu *e = rk_calloc(1, sizeof *e);
    if (!e) { rk_fail(RK_ERR_NOMEM, "out of memory creating the emulator"); return NULL; }
    e->t = t;
    e->opt = opt ? *opt : rk_emu_options_default();
    if (!(opt ? opt->timeout_s >= 0 && opt->timeout_s <= 1e9 : rk_emu_options_from_env(&e->opt) == RK_OK)) {
        if (opt) rk_fail(RK_ERR_INVALID, "rk_emu_new: timeout_s = %g is not 0 (none) to 1e9 seconds", opt->timeout_s);
        rk_free(e, sizeof *e);
        return NULL;
    }
    if (e->opt.test_fault && (emu_fault_check(e->opt.test_fault) || !(e->fault = rk_strdup(e->opt.test_fault)))) {
        if (!e->fault && !rk_error_message()[0]) rk_fail(RK_ERR_NOMEM, "out of memory creating the emulator");
        rk_free(e, sizeof *e);
        return NULL;
    }
    e->opt.test_fault = e->fault;
    e->next_addr = EMU_ADDR_BASE;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t cpus = n > 0 ? (uint32_t)n : 1;
    e->nthreads = e->opt.threads ? e->opt.threads : cpus;
    if (e->nthreads > 256) e->nthreads = 256;
    return e;
}

void rk_emu_free(rk_emu *emu) {
    if (!emu) return;
    for (uint32_t i = 0; i < emu->nbufs; i++) {
        emu_buf *b = &emu->bufs[i];
        if (b->owned) rk_free(b->host, b->bytes);
        rk_free(b->name, 0);
    }
    rk_free(emu->bufs, emu->cap * sizeof *emu->bufs);
    rk_free(emu->fault, 0);
    rk_free(emu, sizeof *emu);
}

const rk_target *rk_emu_target(const rk_emu *emu) { return emu ? emu->t : NULL; }

/* ---- device memory ------------------------------------------------------------------------- */
static emu_buf *buf_at(rk_emu *e, uint64_t addr) {
    for (uint32_t lo = 0, hi = e->nbufs; lo < hi;) {
        uint32_t mid = (lo + hi) / 2;
        emu_buf *b = &e->bufs[mid];
        if (addr < b->addr) hi = mid;
        else if (addr - b->addr >= b->bytes && !(b->bytes == 0 && addr == b->addr)) lo = mid + 1;
        else return b;
    }
    return NULL;
}

static rk_status add_buf(rk_emu *e, void *host, size_t bytes, const char *name, bool owned, uint64_t *addr) {
    if (e->nbufs == e->cap) {
        uint32_t nc = e->cap ? e->cap * 2 : 16;
        emu_buf *nb = rk_realloc(e->bufs, e->cap * sizeof *nb, nc * sizeof *nb);
        if (!nb) return rk_fail(RK_ERR_NOMEM, "out of memory registering a buffer");
        e->bufs = nb;
        e->cap = nc;
    }
    char *nm = name ? rk_strdup(name) : NULL;
    if (name && !nm) return rk_fail(RK_ERR_NOMEM, "out of memory registering a buffer");
    /* addresses only grow, so appending keeps the table sorted */
    uint64_t a = e->next_addr;
    e->next_addr = (a + bytes + EMU_ADDR_GAP + EMU_ADDR_GAP - 1) & ~(EMU_ADDR_GAP - 1);
    e->bufs[e->nbufs++] = (emu_buf){a, bytes, host, nm, owned};
    *addr = a;
    return RK_OK;
}

rk_status rk_emu_alloc(rk_emu *emu, size_t bytes, uint64_t *addr) {
    if (!emu || !addr) return rk_fail(RK_ERR_INVALID, "rk_emu_alloc: emu and addr must not be NULL");
    if (bytes > ((size_t)1 << 40)) return rk_fail(RK_ERR_INVALID, "rk_emu_alloc: %zu bytes is more than 1 TiB", bytes);
    void *h = rk_calloc(bytes ? bytes : 1, 1);
    if (!h) return rk_fail(RK_ERR_NOMEM, "out of memory allocating %zu bytes of emulated device memory", bytes);
    rk_status st = add_buf(emu, h, bytes, NULL, true, addr);
    if (st) rk_free(h, bytes ? bytes : 1);
    return st;
}

rk_status rk_emu_register(rk_emu *emu, void *host, size_t bytes, const char *name, uint64_t *addr) {
    if (!emu || !addr || (!host && bytes))
        return rk_fail(RK_ERR_INVALID, "rk_emu_register: emu, addr and host (for %zu bytes) must not be NULL", bytes);
    return add_buf(emu, host, bytes, name, false, addr);
}

rk_status rk_emu_set_name(rk_emu *emu, uint64_t addr, const char *name) {
    emu_buf *b = emu ? buf_at(emu, addr) : NULL;
    if (!b) return rk_fail(RK_ERR_NOT_FOUND, "rk_emu_set_name: no buffer holds address 0x%llx", (unsigned long long)addr);
    char *nm = name ? rk_strdup(name) : NULL;
    if (name && !nm) return rk_fail(RK_ERR_NOMEM, "out of memory");
    rk_free(b->name, 0);
    b->name = nm;
    return RK_OK;
}

rk_status rk_emu_release(rk_emu *emu, uint64_t addr) {
    emu_buf *b = emu ? buf_at(emu, addr) : NULL;
    if (!b || b->addr != addr)
        return rk_fail(RK_ERR_NOT_FOUND, "rk_emu_release: 0x%llx is not the base of a buffer", (unsigned long long)addr);
    if (b->owned) rk_free(b->host, b->bytes ? b->bytes : 1);
    rk_free(b->name, 0);
    uint32_t i = (uint32_t)(b - emu->bufs);
    memmove(b, b + 1, (emu->nbufs - i - 1) * sizeof *b);
    emu->nbufs--;
    return RK_OK;
}

void *rk_emu_host(rk_emu *emu, uint64_t addr, size_t *bytes) {
    emu_buf *b = emu ? buf_at(emu, addr) : NULL;
    if (bytes) *bytes = b ? b->bytes - (addr - b->addr) : 0;
    return b ? b->host + (addr - b->addr) : NULL;
}

void rk_emu_stats_get(const rk_emu *emu, rk_emu_stats *out) {
    if (emu && out) *out = emu->stats;
}
void rk_emu_stats_reset(rk_emu *emu) {
    if (emu) memset(&emu->stats, 0, sizeof emu->stats);
}

/* ---- workers -------------------------------------------------------------------------------- */
static void worker_free(emu_worker *wk) {
    rk_free(wk->waves, 0);
    rk_free(wk->regs, 0);
    rk_free(wk->mstack, 0);
    rk_free(wk->lds, 0);
    rk_free(wk->shadow, 0);
    rk_free(wk->pmark, 0);
    rk_free(wk->pend, 0);
    rk_free(wk->pdata, 0);
    rk_free(wk->mbar, 0);
    rk_free(wk->wgrec, 0);
}

static bool worker_init(emu_worker *wk, emu_launch *L, const rk_emu_options *o) {
    const emu_prog *P = L->P;
    memset(wk, 0, sizeof *wk);
    wk->L = L;
    wk->P = P;
    wk->check_races = o->check_races;
    wk->check_barriers = o->check_barriers;
    wk->check_async = o->check_async;
    wk->max_steps = o->max_steps;
    wk->waves = rk_calloc(L->nwaves, sizeof *wk->waves);
    wk->regs = rk_malloc((size_t)L->nwaves * P->regs_bytes);
    wk->mstack = rk_calloc((size_t)L->nwaves * (P->depth + 1), sizeof *wk->mstack);
    wk->lds = rk_malloc(P->lds_total ? P->lds_total : 1);
    bool ok = wk->waves && wk->regs && wk->mstack && wk->lds;
    if (ok && P->lds_total && o->check_races) ok = (wk->shadow = rk_calloc(P->lds_total, sizeof *wk->shadow)) != NULL;
    if (ok && P->lds_total && o->check_async) ok = (wk->pmark = rk_calloc(P->lds_total, sizeof *wk->pmark)) != NULL;
    if (ok && P->has_mbar) ok = (wk->mbar = rk_calloc(P->lds_total / 8u + 1u, sizeof *wk->mbar)) != NULL;
    return ok;
}

static void *worker_main(void *arg) {
    emu_worker_run(arg);
    return NULL;
}

double emu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static rk_status check_launch(const rk_emu *emu, const rk_kernel *k, const uint32_t grid[3], const uint32_t block[3]) {
    if (!emu || !k || !grid || !block) return rk_fail(RK_ERR_INVALID, "rk_emu_launch: emu, kernel, grid and block must not be NULL");
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    for (int i = 0; i < 3; i++) {
        if (!grid[i]) return rk_fail(RK_ERR_INVALID, "rk_emu_launch: grid.%c is 0 (every dimension must be at least 1)", "xyz"[i]);
        if (!block[i]) return rk_fail(RK_ERR_INVALID, "rk_emu_launch: block.%c is 0 (every dimension must be at least 1)", "xyz"[i]);
    }
    if (threads > emu->t->max_workgroup)
        return rk_fail(RK_ERR_INVALID, "rk_emu_launch: a workgroup of %llu threads exceeds %s's limit of %u",
                       (unsigned long long)threads, emu->t->name, emu->t->max_workgroup);
    uint32_t cd[3];
    rk_kernel_cluster_dims(k, cd);
    for (int i = 0; i < 3; i++)
        if (grid[i] % cd[i])
            return rk_fail(RK_ERR_INVALID, "rk_emu_launch: grid.%c = %u is not a multiple of kernel '%s's cluster_dims "
                           "%c = %u (the grid is made of whole clusters)", "xyz"[i], grid[i], rk_kernel_name(k), "xyz"[i],
                           cd[i]);
    uint64_t nwg = (uint64_t)grid[0] * grid[1] * grid[2];
    if (rk_kernel_cooperative(k) && nwg > RK_EMU_COOP_MAX_BLOCKS)
        return rk_fail(RK_ERR_INVALID, "rk_emu_launch: kernel '%s' is cooperative and its grid of %llu blocks "
                       "(%ux%ux%u) is more than the %u the emulator runs together (every block of a cooperative "
                       "launch is resident at once; launch at most %u, e.g. a persistent grid)", rk_kernel_name(k),
                       (unsigned long long)nwg, grid[0], grid[1], grid[2], RK_EMU_COOP_MAX_BLOCKS,
                       RK_EMU_COOP_MAX_BLOCKS);
    int64_t maxwg = rk_kernel_max_workgroup_size(k);
    if (maxwg > 0 && threads > (uint64_t)maxwg)
        return rk_fail(RK_ERR_INVALID, "rk_emu_launch: a workgroup of %llu threads exceeds kernel '%s's "
                       "max_workgroup_size of %lld", (unsigned long long)threads, rk_kernel_name(k), (long long)maxwg);
    return RK_OK;
}

static rk_status verify(const rk_emu *emu, const rk_kernel *k) {
    rk_diags d;
    rk_diags_init(&d);
    rk_status st = rk_target_verify(k, emu->t, &d);
    if (st == RK_OK && d.nerrors == 0) {
        rk_diags_free(&d);
        return RK_OK;
    }
    char *text = rk_diags_text(&d);
    rk_diags_free(&d);
    st = rk_fail(RK_ERR_VERIFY, "kernel '%s' does not verify for %s: %s", rk_kernel_name(k), emu->t->name,
                 text ? text : "(no diagnostics)");
    rk_string_free(text);
    return st;
}

rk_status rk_emu_launch(rk_emu *emu, const rk_kernel *k, const uint32_t grid[3], const uint32_t block[3],
                        uint32_t dynamic_lds_bytes, void *const *args) {
    rk_status st = check_launch(emu, k, grid, block);
    if (st) return st;
    if ((st = verify(emu, k))) return st;
    double t0 = emu_now();
    emu_prog *P = NULL;
    if ((st = emu_compile(emu, k, dynamic_lds_bytes, args, &P))) return st;
    if (P->lds_total > emu->t->lds_bytes) {
        st = rk_fail(RK_ERR_INVALID, "kernel '%s' needs %u bytes of LDS (%u static + %u dynamic), more than %s's %u",
                     rk_kernel_name(k), P->lds_total, P->lds_static, dynamic_lds_bytes, emu->t->name, emu->t->lds_bytes);
        emu_prog_free(P);   /* after the message, which reads it */
        return st;
    }
    emu_launch L = {.emu = emu, .P = P, .stop_wg = UINT64_MAX,
                    .deadline = emu->opt.timeout_s > 0 ? t0 + emu->opt.timeout_s : 0, .timeout_s = emu->opt.timeout_s};
    memcpy(L.grid, grid, sizeof L.grid);
    memcpy(L.block, block, sizeof L.block);
    L.nwg = (uint64_t)grid[0] * grid[1] * grid[2];
    rk_kernel_cluster_dims(k, L.cluster);
    L.csize = L.cluster[0] * L.cluster[1] * L.cluster[2];
    L.coop = rk_kernel_cooperative(k);
    L.usize = L.coop ? (uint32_t)L.nwg : L.csize;
    L.nunits = L.nwg / L.usize;
    uint32_t threads = block[0] * block[1] * block[2];
    L.nwaves = (threads + P->W - 1) / P->W;
    pthread_mutex_init(&L.lock, NULL);
    uint32_t nt = emu->nthreads, cs = L.csize, us = L.usize;
    if (nt > L.nunits) nt = (uint32_t)L.nunits;
    /* each host thread runs one unit at a time: us blocks (a cluster's in
     * rank order, or a cooperative grid's), clusters whole inside it */
    emu_worker *wk = rk_calloc((size_t)nt * us, sizeof *wk);
    pthread_t *th = rk_calloc(nt, sizeof *th);
    bool ok = wk && th;
    uint32_t ninit = 0;
    for (; ok && ninit < nt * us; ninit++) {
        if (!worker_init(&wk[ninit], &L, &emu->opt)) {
            worker_free(&wk[ninit]);
            ok = false;
            break;
        }
        if (cs > 1) wk[ninit].peers = &wk[ninit - ninit % cs];
    }
    uint32_t started = 0;
    if (ok) {
        for (uint32_t i = 1; i < nt; i++, started++)
            if (pthread_create(&th[i], NULL, worker_main, &wk[(size_t)i * us])) break;
        emu_worker_run(&wk[0]);
        for (uint32_t i = 1; i <= started; i++) pthread_join(th[i], NULL);
    }
    for (uint32_t i = 0; i < ninit; i++) {
        emu->stats.instructions += wk[i].instructions;
        emu->stats.lane_ops += wk[i].lane_ops;
        emu->stats.workgroups += wk[i].workgroups;
        emu->stats.waves += wk[i].nwaves_run;
        worker_free(&wk[i]);
    }
    rk_free(wk, 0);
    rk_free(th, 0);
    emu->stats.launches++;
    emu->stats.seconds += emu_now() - t0;
    pthread_mutex_destroy(&L.lock);
    if (!ok) st = rk_fail(RK_ERR_NOMEM, "out of memory setting up %u emulator threads", nt);
    else if (L.err) st = rk_fail(L.err_status, "%s", L.err);
    else if (emu->fault) st = emu_fault_apply(emu, k, args);
    rk_free(L.err, 0);
    emu_prog_free(P);
    return st;
}
