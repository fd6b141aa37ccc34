/* rocke — every allocation goes through one replaceable hook so tests can
 * fail allocation N on purpose (SQLite's OOM runs). Layer: base. */
#include <stdlib.h>

#include "base_int.h"

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud; (void)osize;
    if (nsize == 0) { free(ptr); return NULL; }
    return realloc(ptr, nsize);
}

/* The hook is process-wide configuration set before use (tests, embedders);
 * it is not changed while other threads allocate. */
static rk_alloc_fn alloc_fn = default_alloc;
static void *alloc_ud;

void rk_set_allocator(rk_alloc_fn fn, void *ud) {
    alloc_fn = fn ? fn : default_alloc;
    alloc_ud = fn ? ud : NULL;
}

void *rk_malloc(size_t n) { return alloc_fn(alloc_ud, NULL, 0, n ? n : 1); }

void *rk_calloc(size_t n, size_t sz) {
    if (sz && n > SIZE_MAX / sz) return NULL;
    size_t total = n * sz;
    void *p = rk_malloc(total);
    if (p) memset(p, 0, total ? total : 1);
    return p;
}

void *rk_realloc(void *p, size_t osize, size_t nsize) {
    return alloc_fn(alloc_ud, p, osize, nsize ? nsize : 1);
}

void rk_free(void *p, size_t size) {
    if (p) alloc_fn(alloc_ud, p, size, 0);
}

char *rk_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = rk_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
