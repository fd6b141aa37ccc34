/* rocke — bump arena: a kernel's IR lives in one and dies with it.
 * Layer: base. */
#include <stdio.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "base_int.h"

struct rk_arena_chunk {
    rk_arena_chunk *next;
    size_t size;               /* usable bytes after the header */
    _Alignas(16) unsigned char data[];
};

/* Chunks grow eightfold (each new one is 7x all the earlier ones together):
 * a big kernel needs few chunks, and reaches the huge-page sized ones (below)
 * after 512 KiB; the unused tail of the newest chunk is address space only,
 * never touched. */
enum { CHUNK_MIN = 64 * 1024 };
#define CHUNK_MAX ((size_t)64 << 20)

/* On a VM, first touch of fresh memory (one page fault per 4 KiB) was the
 * largest cost of building a big kernel. Memory of 2 MiB or more asks for
 * transparent huge pages (one fault per 2 MiB); the advice is only advice:
 * without THP it changes nothing. */
#define HUGE_PAGE ((uintptr_t)2 << 20)

void rk_advise_huge(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (!p || n < HUGE_PAGE - 64) return;
    /* A malloc block of m * 2 MiB - 32 bytes is an aligned mmap of m huge
     * pages less malloc's 16-byte header before and 16 bytes after: within
     * 64 bytes of a boundary, round outwards so those pages count too.
     * Advice never changes memory, so covering a few bytes of malloc's is
     * harmless. */
    uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (lo - (uintptr_t)p > HUGE_PAGE - 64) lo -= HUGE_PAGE;
    uintptr_t hi = ((uintptr_t)p + n + 63) & ~(HUGE_PAGE - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p; (void)n;
#endif
}

void rk_arena_init(rk_arena *a) { memset(a, 0, sizeof *a); }

void rk_arena_free(rk_arena *a) {
    rk_arena_chunk *c = a->head;
    while (c) {
        rk_arena_chunk *n = c->next;
        rk_free(c, sizeof *c + c->size);
        c = n;
    }
    rk_arena_init(a);
}

void *rk_arena_alloc_slow(rk_arena *a, size_t n) {
    if (n > SIZE_MAX / 2) return NULL;
    n = n ? (n + 15) & ~(size_t)15 : 16;
    if (n <= (size_t)((uintptr_t)a->end - (uintptr_t)a->cur)) {   /* fits after all */
        void *p = a->cur;
        a->cur += n;
        return p;
    }
    size_t size = a->total < CHUNK_MAX / 7 ? 7 * a->total : CHUNK_MAX;
    if (size < CHUNK_MIN) size = CHUNK_MIN;
    if (size < n) size = n;
    /* a big chunk is allocated one huge page larger and used from its first
     * 2 MiB boundary, so huge pages can back all of it; the skipped head is
     * never touched (address space only) */
    size_t pad = 0;
    if (size >= HUGE_PAGE) {
        pad = HUGE_PAGE;
        size = (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);   /* whole huge pages */
    }
    rk_arena_chunk *c = rk_malloc(sizeof *c + size + pad);
    if (!c) return NULL;
    c->size = size + pad;
    c->next = a->head;
    unsigned char *start = c->data;
    if (pad) {
        start = (unsigned char *)(((uintptr_t)c->data + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
        rk_advise_huge(start, size);
    }
    a->head = c;
    a->cur = start + n;
    a->end = start + size;
    a->total += size;
    return start;
}

void *rk_arena_zalloc(rk_arena *a, size_t n) {
    void *p = rk_arena_alloc(a, n);
    if (p) memset(p, 0, n);
    return p;
}

char *rk_arena_strndup(rk_arena *a, const char *s, size_t n) {
    char *d = rk_arena_alloc(a, n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *rk_arena_strdup(rk_arena *a, const char *s) { return rk_arena_strndup(a, s, strlen(s)); }

char *rk_arena_printf(rk_arena *a, const char *fmt, ...) {
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *d = n < 0 ? NULL : rk_arena_alloc(a, (size_t)n + 1);
    if (d) vsnprintf(d, (size_t)n + 1, fmt, aq);
    va_end(aq);
    return d;
}

void *rk_arena_grow(rk_arena *a, void *arr, size_t elem, uint32_t *cap, uint32_t need) {
    if (need <= *cap) return arr;
    uint32_t ncap = *cap ? *cap : 4;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 2) return NULL;
        ncap *= 2;
    }
    void *n = rk_arena_alloc(a, elem * ncap);
    if (!n) return NULL;
    if (arr && *cap) memcpy(n, arr, elem * *cap);
    *cap = ncap;
    return n;
}
