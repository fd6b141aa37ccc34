/* rocke tests — replay every checked-in fuzz input through the same entry
 * points the libFuzzer targets use (compiled in here with gcc, no libFuzzer
 * main), so past findings stay fixed in ordinary ctest and ASan runs. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ROCKE_FUZZ_REPLAY 1
#include "fuzz/fuzz_ir_parse.c"

#define CORPUS ROCKE_SOURCE_DIR "/tests/fuzz/corpus/ir_parse"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void test_replay_ir_parse(void **state) {
    (void)state;
    DIR *d = opendir(CORPUS);
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
    assert_true(n >= 50);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", CORPUS, names[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        /* an exact-size heap copy, so ASan sees any read past the end */
        uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
        assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        fuzz_input = names[i];
        LLVMFuzzerTestOneInput(buf, (size_t)len);
        free(buf);
        free(names[i]);
    }
    free(names);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_ir_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
