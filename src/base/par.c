/* rocke — a parallel loop for host-side work that grows with the problem
 * (random inputs, checks of outputs): [0, n) cut into fixed chunks that
 * threads take in turn, so what each chunk computes never depends on the
 * thread count. Layer: base. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "base_int.h"

typedef struct par_job {
    rk_par_fn fn;
    void *ctx;
    uint64_t n, grain, nchunks;
    atomic_uint_fast64_t next;
} par_job;

static void *par_worker(void *arg) {
    par_job *j = arg;
    for (;;) {
        uint64_t c = atomic_fetch_add(&j->next, 1);
        if (c >= j->nchunks) return NULL;
        uint64_t lo = c * j->grain, hi = lo + j->grain < j->n ? lo + j->grain : j->n;
        j->fn(j->ctx, c, lo, hi);
    }
}

/* ROCKE_HOST_THREADS, else the online CPUs, at most 64. */
static uint32_t host_threads(void) {
    const char *e = getenv("ROCKE_HOST_THREADS");
    long n = e && *e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (uint32_t)n;
}

uint64_t rk_par_chunks(uint64_t n, uint64_t grain) { return grain ? (n + grain - 1) / grain : 0; }

void rk_par_for(uint64_t n, uint64_t grain, rk_par_fn fn, void *ctx) {
    RK_ASSERT(grain > 0, "rk_par_for: grain is 0");
    par_job j = {.fn = fn, .ctx = ctx, .n = n, .grain = grain, .nchunks = rk_par_chunks(n, grain)};
    atomic_init(&j.next, 0);
    uint32_t nt = host_threads();
    if (nt > j.nchunks) nt = (uint32_t)j.nchunks;
    pthread_t th[64];
    uint32_t started = 0;
    for (uint32_t i = 1; i < nt; i++, started++)
        if (pthread_create(&th[i], NULL, par_worker, &j)) break;   /* fewer threads: the rest runs here */
    par_worker(&j);
    for (uint32_t i = 1; i <= started; i++) pthread_join(th[i], NULL);
}
