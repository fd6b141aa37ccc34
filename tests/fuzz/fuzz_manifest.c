/* rocke fuzz — the JSON reader and the manifest reader. Any input must parse
 * or fail cleanly with a message; accepted JSON must write and re-read to the
 * same text; an accepted manifest must write, re-read and write the same
 * text. libFuzzer entry; tests/fuzz_replay replays the corpus in ctest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/ir.h"
#include "rocke/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef ROCKE_FUZZ_REPLAY
static const char *fuzz_input = "?";
#else
static const char *fuzz_input = "input";
#endif

#define FUZZ_CHECK(cond)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "fuzz_manifest: %s: %s:%d: check failed: %s\n", fuzz_input, __FILE__, \
                    __LINE__, #cond);                                                             \
            abort();                                                                              \
        }                                                                                         \
    } while (0)

static void json_round_trip(const char *text, size_t size) {
    rk_json *j = rk_json_parse(text, size);
    if (!j) {
        FUZZ_CHECK(rk_error_message()[0] != '\0');
        return;
    }
    for (int pretty = 0; pretty < 2; pretty++) {
        char *w1 = rk_json_write(j, pretty);
        FUZZ_CHECK(w1 != NULL);
        rk_json *k = rk_json_parse(w1, strlen(w1));
        FUZZ_CHECK(k != NULL);
        char *w2 = rk_json_write(k, pretty);
        FUZZ_CHECK(w2 != NULL && strcmp(w1, w2) == 0);
        rk_string_free(w1);
        rk_string_free(w2);
        rk_json_free(k);
    }
    rk_json_free(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    json_round_trip(text, size);
    rk_manifest m;
    if (rk_manifest_parse(text, size, &m) != RK_OK) {
        FUZZ_CHECK(rk_error_message()[0] != '\0');
        return 0;
    }
    char *t1 = rk_manifest_text(&m);
    FUZZ_CHECK(t1 != NULL);
    rk_manifest back;
    rk_status st = rk_manifest_parse(t1, strlen(t1), &back);
    if (st != RK_OK) fprintf(stderr, "fuzz_manifest: re-parse: %s\n%s\n", rk_error_message(), t1);
    FUZZ_CHECK(st == RK_OK);
    char *t2 = rk_manifest_text(&back);
    FUZZ_CHECK(t2 != NULL && strcmp(t1, t2) == 0);
    rk_string_free(t1);
    rk_string_free(t2);
    return 0;
}
