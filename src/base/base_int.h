/* rocke — private utilities shared by every layer: allocation through the
 * hook, arenas, growable buffers, string building, hashing, invariant checks.
 * Layer: base. */
#ifndef ROCKE_BASE_INT_H
#define ROCKE_BASE_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include "rocke/base.h"

/* ---- invariants (broken invariant = bug in rocke, not bad input) -------- */
_Noreturn void rk_bug_at(const char *file, int line, const char *why);
#define rk_bug(why) rk_bug_at(__FILE__, __LINE__, (why))
#define RK_ASSERT(cond, why) \
    do { if (!(cond)) rk_bug_at(__FILE__, __LINE__, (why)); } while (0)
#define RK_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- allocation (through rk_set_allocator's hook) ------------------------ */
void *rk_malloc(size_t n);               /* NULL on failure */
void *rk_calloc(size_t n, size_t sz);    /* zeroed; NULL on failure */
void *rk_realloc(void *p, size_t osize, size_t nsize);
void rk_free(void *p, size_t size);      /* size may be 0 when unknown */
char *rk_strdup(const char *s);          /* freed with rk_free(p, strlen+1) */

/* ---- parallel loop over [0, n) in chunks of grain (par.c) ---------------
 * fn(ctx, chunk, lo, hi) runs once per chunk, on ROCKE_HOST_THREADS threads
 * (default: the online CPUs); chunk boundaries do not depend on the thread
 * count, so per-chunk results combined in chunk order are deterministic. */
typedef void (*rk_par_fn)(void *ctx, uint64_t chunk, uint64_t lo, uint64_t hi);
uint64_t rk_par_chunks(uint64_t n, uint64_t grain);
void rk_par_for(uint64_t n, uint64_t grain, rk_par_fn fn, void *ctx);

/* ---- arena: bump allocation, freed all at once (QBE's pool) ------------- */
typedef struct rk_arena_chunk rk_arena_chunk;
typedef struct rk_arena {
    rk_arena_chunk *head;
    unsigned char *cur, *end;  /* free space in head; both NULL before the first chunk */
    size_t total;              /* bytes held, for statistics */
} rk_arena;

void rk_arena_init(rk_arena *a);
void rk_arena_free(rk_arena *a);
void *rk_arena_alloc_slow(rk_arena *a, size_t n);    /* new chunk; n as given */
/* 16-aligned, NULL on OOM. The common case is a pointer bump, inline: the IR
 * builder and parser allocate several times per op. */
static inline void *rk_arena_alloc(rk_arena *a, size_t n) {
    size_t r = (n + 15) & ~(size_t)15;   /* 0 for n == 0 or on overflow: slow path */
    if (r - 1 < (size_t)((uintptr_t)a->end - (uintptr_t)a->cur)) {
        void *p = a->cur;
        a->cur += r;
        return p;
    }
    return rk_arena_alloc_slow(a, n);
}
void *rk_arena_zalloc(rk_arena *a, size_t n);
char *rk_arena_strdup(rk_arena *a, const char *s);
char *rk_arena_strndup(rk_arena *a, const char *s, size_t n);
char *rk_arena_printf(rk_arena *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Ask the kernel to back the whole 2 MiB pages inside [p, p+n) with
 * transparent huge pages: for big tables that are about to be filled, one
 * fault per 2 MiB instead of one per 4 KiB. Advice only; no-op off Linux. */
void rk_advise_huge(void *p, size_t n);
/* Grow an arena array: copies into a new block (the old one stays in the
 * arena until it dies). Returns NULL on OOM, leaving *arr untouched. */
void *rk_arena_grow(rk_arena *a, void *arr, size_t elem, uint32_t *cap, uint32_t need);

/* ---- string builder (heap, through the hook) ----------------------------- */
typedef struct rk_buf {
    char *data;
    size_t len, cap;
    bool oom;                  /* sticky: an append failed */
} rk_buf;

void rk_buf_init(rk_buf *b);
void rk_buf_free(rk_buf *b);
void rk_buf_reset(rk_buf *b);
bool rk_buf_reserve(rk_buf *b, size_t extra);
void rk_buf_putc(rk_buf *b, char c);
void rk_buf_puts(rk_buf *b, const char *s);
void rk_buf_putn(rk_buf *b, const char *s, size_t n);
void rk_buf_printf(rk_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void rk_buf_vprintf(rk_buf *b, const char *fmt, va_list ap);
void rk_buf_put_u64(rk_buf *b, uint64_t v);
void rk_buf_put_i64(rk_buf *b, int64_t v);
/* Take ownership of the text (NUL-terminated, freed with free-like rk_free
 * of cap bytes via rk_buf_release_free). Returns NULL on OOM. */
char *rk_buf_take(rk_buf *b);
const char *rk_buf_cstr(rk_buf *b);     /* NUL-terminated view, "" on OOM */

/* ---- hashing -------------------------------------------------------------- */
static inline uint64_t rk_hash_bytes(const void *p, size_t n, uint64_t h) {
    const unsigned char *s = (const unsigned char *)p;
    if (!h) h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 1099511628211ull; }
    return h;
}
static inline uint64_t rk_hash_str(const char *s) { return rk_hash_bytes(s, strlen(s), 0); }
static inline uint64_t rk_hash_u64(uint64_t x, uint64_t h) {
    x ^= h + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    return x;
}

/* ---- formatting helpers ---------------------------------------------------- */
/* Shortest decimal that round-trips a double, in Python repr style
 * ("0.0", "1e-05", "1.5", "inf", "nan"). Returns length written into out[32]. */
int rk_fmt_double_repr(char out[32], double v);

/* ---- log.c: diagnostics through the rk_set_log_callback callback ---------- */
bool rk_log_enabled(void);   /* a callback is set: worth formatting a message */
void rk_log(rk_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Deliver a text as is (a dump); false when no callback took it. */
bool rk_log_text(rk_log_level level, const char *text);

/* ---- error message helpers ------------------------------------------------ */
rk_status rk_vfail(rk_status s, const char *fmt, va_list ap);
/* ---- file_out.c: the one writer of output files ---------------------------
 * A regular or new file is written under a temporary name beside it (beside
 * a symbolic link's target) and renamed into place on commit; a FIFO or a
 * character device is written through (a FIFO must have a reader: no wait);
 * a folder, socket or block device is refused with a message naming it. */
typedef struct rk_outfile {
    char *path;     /* the file the data lands in (a link's target) */
    char *tmp;      /* temporary name; NULL when writing through */
    int fd;
    bool through;   /* FIFO / character device / an open descriptor's name */
} rk_outfile;
rk_status rk_outfile_open(rk_outfile *f, const char *path);
rk_status rk_outfile_write(rk_outfile *f, const void *data, size_t n);
/* Close and rename into place; releases f whatever the outcome. */
rk_status rk_outfile_commit(rk_outfile *f);
/* Close and remove the temporary; releases f. */
void rk_outfile_discard(rk_outfile *f);
/* open + write + commit. */
rk_status rk_write_file_atomic(const char *path, const void *data, size_t n);

/* ---- file.c: bounded whole-file reads ---------------------------------------
 * The limit is 256 MiB unless ROCKE_INPUT_LIMIT_MIB says otherwise (1 to
 * 1048576); a malformed value is an error of every read. */
rk_status rk_input_limit(size_t *out);
/* Read a whole file ("-" = stdin): a regular file, FIFO or character device,
 * refused past the limit; folders, sockets and block devices are refused.
 * *out is NUL-terminated, freed with rk_free(*out, *n + 1). */
rk_status rk_read_file(const char *path, char **out, size_t *n);
/* The same for inputs whose size must be known: regular files only (no
 * stdin, FIFO or device). */
rk_status rk_read_regular_file(const char *path, char **out, size_t *n);

#endif
