/* rocke — small output helpers shared by the printer and the serializer:
 * value names, quoted strings, attribute maps sorted by key. Layer: ir. */
#include <stdlib.h>

#include "text_int.h"

void ir_put_i64(rk_buf *b, int64_t v) {
    char t[24];
    int i = 24;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { t[--i] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) t[--i] = '-';
    ir_put(b, t + i, (size_t)(24 - i));
}

char *ir_buf_finish(rk_buf *b) {
    if (ir_room(b, 0)) b->data[b->len] = '\0';
    return rk_buf_take(b);
}

void ir_put_value(rk_buf *b, const rk_kernel *k, rk_value v) {
    const ir_valinfo *vi = ir_val(k, v);
    if (!vi) { IR_PUT_LIT(b, "%<none>"); return; }
    size_t n = strlen(vi->hint);
    if (!ir_room(b, n + 12)) return;
    char *o = b->data + b->len;
    *o++ = '%';
    memcpy(o, vi->hint, n);
    o += n;
    if (vi->num != IR_NO_NUM) {
        char t[10];
        int i = 10;
        uint32_t x = vi->num;
        do { t[--i] = (char)('0' + x % 10); x /= 10; } while (x);
        memcpy(o, t + i, (size_t)(10 - i));
        o += 10 - i;
    }
    b->len = (size_t)(o - b->data);
}

void ir_put_quoted(rk_buf *b, const char *s) {
    ir_putc(b, '"');
    const char *run = s;
    for (; *s; s++) {
        const char *esc = NULL;
        switch (*s) {
        case '\\': esc = "\\\\"; break;
        case '"': esc = "\\\""; break;
        case '\n': esc = "\\n"; break;
        case '\t': esc = "\\t"; break;
        default: continue;
        }
        ir_put(b, run, (size_t)(s - run));
        ir_put(b, esc, 2);
        run = s + 1;
    }
    ir_put(b, run, (size_t)(s - run));
    ir_putc(b, '"');
}

#define W2(c) [c] = true, [c + 1] = true
#define W10(c) W2(c), W2(c + 2), W2(c + 4), W2(c + 6), W2(c + 8)
const bool ir_word_chars[256] = {
    W10('0'), W10('A'), W10('K'), W2('U'), W2('W'), W2('Y'),
    W10('a'), W10('k'), W2('u'), W2('w'), W2('y'), ['_'] = true, ['.'] = true,
};
#undef W10
#undef W2

bool ir_is_word(const char *s, size_t n) {
    if (!n) return false;
    for (size_t i = 0; i < n; i++)
        if (!ir_word_char((unsigned char)s[i])) return false;
    return true;
}

/* strcmp compares as unsigned char, which for UTF-8 is code point order */
static int cmp_attr(const void *a, const void *b) {
    return strcmp((*(const rk_attr *const *)a)->key, (*(const rk_attr *const *)b)->key);
}

const rk_attr **ir_sorted_attrs(const rk_attr *items, uint32_t n, const rk_attr **local, uint32_t nlocal) {
    const rk_attr **o = n <= nlocal ? local : rk_malloc(n * sizeof *o);
    if (!o) return NULL;
    for (uint32_t i = 0; i < n; i++) o[i] = &items[i];
    if (n <= 16) {
        /* insertion sort: attribute maps are almost always tiny */
        for (uint32_t i = 1; i < n; i++) {
            const rk_attr *v = o[i];
            uint32_t j = i;
            for (; j > 0 && strcmp(o[j - 1]->key, v->key) > 0; j--) o[j] = o[j - 1];
            o[j] = v;
        }
    } else {
        qsort(o, n, sizeof *o, cmp_attr);
    }
    return o;
}

void ir_sorted_free(const rk_attr **order, const rk_attr **local, uint32_t n) {
    if (order && order != local) rk_free((void *)order, n * sizeof *order);
}
