/* rocke fuzz — the ckdsl.ir v1 parser. Any input must parse or fail cleanly;
 * what parses must serialize, re-parse to the same text and print the same,
 * survive the verifier, and canonicalize to a fixed point. libFuzzer entry;
 * tests/fuzz_replay compiles this file into a ctest that replays the corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef ROCKE_FUZZ_REPLAY
static const char *fuzz_input = "?";     /* the replay test names the file being run */
#else
static const char *fuzz_input = "input";
#endif

/* A broken property is a bug: stop loudly so libFuzzer saves the input. */
#define FUZZ_CHECK(cond)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "fuzz_ir_parse: %s: %s:%d: check failed: %s\n", fuzz_input, __FILE__, \
                    __LINE__, #cond);                                                         \
            abort();                                                                          \
        }                                                                                     \
    } while (0)

static char *canonical(const char *text) {
    char *c = NULL;
    rk_status s = rk_canonicalize(text, strlen(text), &c);
    if (s != RK_OK) fprintf(stderr, "fuzz_ir_parse: canonicalize: %s\n", rk_error_message());
    FUZZ_CHECK(s == RK_OK && c != NULL);
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rk_kernel *k = (rk_kernel *)data;
    if (rk_parse((const char *)data, size, &k) != RK_OK) {
        FUZZ_CHECK(k == NULL);
        FUZZ_CHECK(rk_error_message()[0] != '\0');
        return 0;
    }
    char *s1 = rk_serialize(k), *p1 = rk_print(k);
    FUZZ_CHECK(s1 && p1);
    rk_diags d;
    rk_diags_init(&d);
    rk_verify(k, NULL, &d);
    rk_diags_free(&d);

    rk_kernel *k2 = NULL;
    rk_status st = rk_parse(s1, strlen(s1), &k2);
    if (st != RK_OK) fprintf(stderr, "fuzz_ir_parse: re-parse: %s\n%s\n", rk_error_message(), s1);
    FUZZ_CHECK(st == RK_OK);
    char *s2 = rk_serialize(k2), *p2 = rk_print(k2);
    FUZZ_CHECK(s2 && p2);
    FUZZ_CHECK(strcmp(s1, s2) == 0);
    FUZZ_CHECK(strcmp(p1, p2) == 0);

    char *c1 = canonical(s1), *c2 = canonical(c1);
    FUZZ_CHECK(strcmp(c1, c2) == 0);

    rk_string_free(c1);
    rk_string_free(c2);
    rk_string_free(s1);
    rk_string_free(s2);
    rk_string_free(p1);
    rk_string_free(p2);
    rk_kernel_free(k);
    rk_kernel_free(k2);
    return 0;
}
