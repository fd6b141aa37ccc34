/* rocke tests — the arena's chunk policy: blocks stay 16-aligned, disjoint
 * and intact across small chunks, huge-page sized chunks (which start at a
 * 2 MiB boundary inside a padded block) and single allocations larger than
 * any chunk; sizes that overflow fail cleanly; a failed chunk leaves the
 * arena usable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/base_int.h"

static long fail_after = -1;          /* allocations allowed before failing; -1 = never */
static size_t live_bytes;
static void *hook(void *ud, void *p, size_t osize, size_t nsize) {
    (void)ud;
    if (nsize == 0) {
        live_bytes -= osize;
        free(p);
        return NULL;
    }
    if (fail_after == 0) return NULL;
    if (fail_after > 0) fail_after--;
    void *q = realloc(p, nsize);
    if (q) live_bytes += nsize - osize;
    return q;
}

typedef struct block { unsigned char *p; size_t n; } block;

/* Fill each block with a pattern from its index, then check them all: an
 * overlap or a block handed out twice breaks some pattern. */
static void fill(const block *b, uint32_t i) { memset(b->p, (int)(i * 37u + 11u) & 0xff, b->n); }
static void check(const block *b, uint32_t i) {
    for (size_t j = 0; j < b->n; j++) assert_int_equal(b->p[j], (i * 37u + 11u) & 0xff);
}

static void test_chunks(void **state) {
    (void)state;
    rk_set_allocator(hook, NULL);
    rk_arena a;
    rk_arena_init(&a);
    enum { NB = 4000 };
    static block bs[NB];
    size_t total = 0;
    for (uint32_t i = 0; i < NB; i++) {
        /* mostly small, now and then a block bigger than the chunk in use */
        size_t n = i % 500 == 499 ? (size_t)3 << 20 : (size_t)(i * 7919u) % 9000u;
        bs[i].p = rk_arena_alloc(&a, n);
        bs[i].n = n;
        assert_non_null(bs[i].p);
        assert_int_equal((uintptr_t)bs[i].p % 16, 0);
        fill(&bs[i], i);
        total += n;
    }
    assert_true(total > ((size_t)40 << 20));        /* reached the huge-page sized chunks */
    assert_true(a.total >= total);
    for (uint32_t i = 0; i < NB; i++) check(&bs[i], i);

    /* zero bytes: a distinct, aligned, usable block; sizes that overflow: NULL */
    void *z1 = rk_arena_alloc(&a, 0), *z2 = rk_arena_alloc(&a, 0);
    assert_non_null(z1);
    assert_true(z1 != z2);
    assert_null(rk_arena_alloc(&a, SIZE_MAX));
    assert_null(rk_arena_alloc(&a, SIZE_MAX - 8));
    assert_null(rk_arena_alloc(&a, SIZE_MAX / 2 + 1));
    assert_non_null(rk_arena_alloc(&a, 32));

    /* a chunk that cannot be had: NULL, and the arena goes on afterwards */
    fail_after = 0;
    assert_null(rk_arena_alloc(&a, (size_t)80 << 20));
    fail_after = -1;
    unsigned char *after = rk_arena_alloc(&a, 100);
    assert_non_null(after);
    memset(after, 1, 100);
    for (uint32_t i = 0; i < NB; i++) check(&bs[i], i);

    rk_arena_free(&a);
    assert_int_equal(live_bytes, 0);               /* every chunk freed with its own size */
    assert_null(a.head);
    assert_int_equal(a.total, 0);
    rk_set_allocator(NULL, NULL);
}

/* The huge-page advice is advice: any pointer and size, including NULL,
 * small and unaligned ranges, leaves the memory as it was. */
static void test_advise_huge(void **state) {
    (void)state;
    rk_advise_huge(NULL, (size_t)8 << 20);
    size_t n = ((size_t)5 << 20) + 123;
    unsigned char *p = malloc(n);
    assert_non_null(p);
    memset(p, 0x5a, n);
    rk_advise_huge(p + 3, n - 3);
    rk_advise_huge(p, 100);
    for (size_t i = 0; i < n; i += 4093) assert_int_equal(p[i], 0x5a);
    free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_advise_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
