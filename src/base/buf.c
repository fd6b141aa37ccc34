/* rocke — growable text buffer with a sticky out-of-memory flag, so emitters
 * append freely and check once at the end. Layer: base. */
#include <inttypes.h>
#include <stdio.h>

#include "base_int.h"

void rk_buf_init(rk_buf *b) { memset(b, 0, sizeof *b); }

void rk_buf_free(rk_buf *b) {
    rk_free(b->data, b->cap);
    rk_buf_init(b);
}

void rk_buf_reset(rk_buf *b) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

bool rk_buf_reserve(rk_buf *b, size_t extra) {
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < b->len + extra + 1) ncap *= 2;
    char *n = rk_realloc(b->data, b->cap, ncap);
    if (!n) { b->oom = true; return false; }
    b->data = n;
    b->cap = ncap;
    /* big text (a serialized kernel is megabytes): huge pages for the part
     * not written yet, so first touches fault once per 2 MiB, not per 4 KiB */
    rk_advise_huge(n + b->len, ncap - b->len);
    return true;
}

void rk_buf_putn(rk_buf *b, const char *s, size_t n) {
    if (!rk_buf_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void rk_buf_putc(rk_buf *b, char c) {
    if (!rk_buf_reserve(b, 1)) return;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void rk_buf_puts(rk_buf *b, const char *s) { rk_buf_putn(b, s, strlen(s)); }

void rk_buf_vprintf(rk_buf *b, const char *fmt, va_list ap) {
    va_list aq;
    va_copy(aq, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) { va_end(aq); return; }
    if ((size_t)n < sizeof small) {
        rk_buf_putn(b, small, (size_t)n);
    } else if (rk_buf_reserve(b, (size_t)n)) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, aq);
        b->len += (size_t)n;
    }
    va_end(aq);
}

void rk_buf_printf(rk_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void rk_buf_put_u64(rk_buf *b, uint64_t v) {
    char t[24];
    int i = 24;
    do { t[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    rk_buf_putn(b, t + i, (size_t)(24 - i));
}

void rk_buf_put_i64(rk_buf *b, int64_t v) {
    if (v < 0) { rk_buf_putc(b, '-'); rk_buf_put_u64(b, (uint64_t)0 - (uint64_t)v); }
    else rk_buf_put_u64(b, (uint64_t)v);
}

char *rk_buf_take(rk_buf *b) {
    if (b->oom) { rk_buf_free(b); return NULL; }
    if (!rk_buf_reserve(b, 0)) { rk_buf_free(b); return NULL; }
    b->data[b->len] = '\0';     /* an empty buffer has never been terminated */
    char *d = b->data;
    /* shrink to exact size so callers free with strlen+1 */
    char *t = rk_realloc(d, b->cap, b->len + 1);
    if (t) d = t;
    else {
        t = rk_malloc(b->len + 1);
        if (t) { memcpy(t, d, b->len + 1); }
        rk_free(d, b->cap);
        d = t;
    }
    rk_buf_init(b);
    return d;
}

const char *rk_buf_cstr(rk_buf *b) {
    if (b->oom || !b->data) return "";
    return b->data;
}
