/* rocke — bump arena: a kernel's IR lives in one and dies with it.
 * Layer: base. */
#include <stdio.h>

#include "base_int.h"

struct rk_arena_chunk {
    rk_arena_chunk *next;
    size_t size;               /* usable bytes after the header */
    _Alignas(16) unsigned char data[];
};

enum { CHUNK_MIN = 64 * 1024 };

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

void *rk_arena_alloc(rk_arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!n) n = 16;
    if (!a->head || a->used + n > a->cap) {
        size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;
        /* grow chunk size with the arena so big kernels need few chunks */
        if (a->total / 4 > size) size = a->total / 4;
        rk_arena_chunk *c = rk_malloc(sizeof *c + size);
        if (!c) return NULL;
        c->size = size;
        c->next = a->head;
        a->head = c;
        a->used = 0;
        a->cap = size;
        a->total += size;
    }
    void *p = a->head->data + a->used;
    a->used += n;
    return p;
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
