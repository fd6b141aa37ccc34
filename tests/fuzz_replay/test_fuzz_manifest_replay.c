/* rocke tests — replay every checked-in manifest fuzz input through the
 * libFuzzer entry point of tests/fuzz/fuzz_manifest.c (compiled in here with
 * gcc), so past findings stay fixed in ordinary ctest and ASan runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/corpus_replay.h"

#define ROCKE_FUZZ_REPLAY 1
#include "fuzz/fuzz_manifest.c"

#define CORPUS ROCKE_SOURCE_DIR "/tests/fuzz/corpus/manifest"

static void test_replay_manifest(void **state) {
    (void)state;
    rk_test_replay_corpus(CORPUS, 20, LLVMFuzzerTestOneInput, &fuzz_input);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_replay_manifest)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
