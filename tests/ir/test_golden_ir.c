/* rocke tests — the golden runner for tests/golden/NAME.ir: every file parses
 * and re-serializes to its own IR part (the lines outside '#' comments and
 * "# >>> name" ... "# <<<" sections, which other layers append), and the
 * corpus kernels pinned there still build to the same text. With
 * ROCKE_UPDATE_GOLDEN=1 the pinned files are rewritten, keeping their
 * comments and sections. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/ir.h"
#include "support/ir_corpus.h"

#define GOLDEN_DIR ROCKE_SOURCE_DIR "/tests/golden"

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *d = malloc(cap);
    for (size_t got; d && (got = fread(d + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (len + 1 == cap) d = realloc(d, cap *= 2);
    }
    fclose(f);
    if (d) d[len] = '\0';
    *n = len;
    return d;
}

/* The IR lines of a golden file, each ending in '\n' ('\r' dropped). */
static char *ir_part(const char *text, size_t n) {
    char *out = malloc(n + 2), *o = out;
    bool section = false;
    for (const char *s = text, *end = text + n; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s)), *e = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        if (e > s && e[-1] == '\r') e--;
        const char *p = s;
        while (p < e && (*p == ' ' || *p == '\t')) p++;
        if (p < e && *p == '#') {
            if ((size_t)(e - p) >= 5 && !memcmp(p, "# >>>", 5)) section = true;
            else if ((size_t)(e - p) >= 5 && !memcmp(p, "# <<<", 5)) section = false;
        } else if (!section && p < e) {
            memcpy(o, s, (size_t)(e - s));
            o += e - s;
            *o++ = '\n';
        }
        s = next;
    }
    *o = '\0';
    return out;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void test_golden_files(void **state) {
    (void)state;
    DIR *d = opendir(GOLDEN_DIR);
    assert_non_null(d);
    char *names[256];
    size_t nn = 0;
    for (struct dirent *e; (e = readdir(d)) && nn < 256;) {
        size_t l = strlen(e->d_name);
        if (l > 3 && !strcmp(e->d_name + l - 3, ".ir")) names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, nn, sizeof *names, cmp_str);
    assert_true(nn >= 5);
    for (size_t i = 0; i < nn; i++) {
        char path[4096];
        size_t n;
        snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, names[i]);
        char *text = slurp(path, &n);
        assert_non_null(text);
        rk_kernel *k = NULL;
        if (rk_parse(text, n, &k) != RK_OK) fail_msg("%s: %s", names[i], rk_error_message());
        char *s = rk_serialize(k), *want = ir_part(text, n);
        if (strcmp(s, want)) fail_msg("%s: re-serialized IR differs from the file:\n%s", names[i], s);
        rk_string_free(s);
        rk_kernel_free(k);
        free(want);
        free(text);
        free(names[i]);
    }
}

/* New file text: the old file's lines before the header, the new IR, and
 * everything after the kernel's closing "}" line. */
static char *updated(const char *old, size_t n, const char *ir) {
    const char *head_end = old, *tail = old + n;
    if (old) {
        const char *h = strstr(old, "ckdsl.ir");
        head_end = h ? h : old;
        const char *c = strstr(head_end, "\n}\n");
        if (!c) c = strstr(head_end, "\n}\r\n");
        tail = c ? strchr(c + 1, '\n') + 1 : old + n;
    }
    size_t hl = (size_t)(head_end - (old ? old : head_end)), tl = old ? (size_t)(old + n - tail) : 0;
    char *out = malloc(hl + strlen(ir) + tl + 1);
    memcpy(out, old ? old : "", hl);
    strcpy(out + hl, ir);
    memcpy(out + hl + strlen(ir), tail, tl);
    out[hl + strlen(ir) + tl] = '\0';
    return out;
}

static void test_golden_corpus(void **state) {
    (void)state;
    bool update = getenv("ROCKE_UPDATE_GOLDEN") != NULL;
    unsigned pinned = 0;
    for (unsigned i = 0; i < corpus_count; i++) {
        if (!corpus_kernels[i].golden) continue;
        pinned++;
        rk_kernel *k = corpus_kernels[i].build();
        assert_non_null(k);
        char *s = rk_serialize(k);
        char path[4096];
        size_t n = 0;
        snprintf(path, sizeof path, "%s/%s.ir", GOLDEN_DIR, corpus_kernels[i].name);
        char *text = slurp(path, &n), *want = text ? ir_part(text, n) : NULL;
        if (!want || strcmp(want, s)) {
            if (!update) fail_msg("%s differs from the builder's output (ROCKE_UPDATE_GOLDEN=1 rewrites it):\n%s",
                                  path, s);
            char *nt = updated(text, n, s);
            FILE *f = fopen(path, "wb");
            assert_non_null(f);
            fputs(nt, f);
            fclose(f);
            fprintf(stderr, "updated %s\n", path);
            free(nt);
        }
        free(want);
        free(text);
        rk_string_free(s);
        rk_kernel_free(k);
    }
    assert_true(pinned >= 5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_corpus),
        cmocka_unit_test(test_golden_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
