/* rocke tests — replaying a checked-in fuzz corpus (see corpus_replay.h). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/corpus_replay.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

size_t rk_test_replay_corpus(const char *dir, size_t min_files, int (*one)(const uint8_t *, size_t),
                             const char **current) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0, cap = 64;
    char **names = malloc(cap * sizeof *names);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) names = realloc(names, (cap *= 2) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    assert_true(n >= min_files);
    for (size_t i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
        assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        if (current) *current = names[i];
        one(buf, (size_t)len);
        free(buf);
    }
    if (current) *current = "?";
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return n;
}
