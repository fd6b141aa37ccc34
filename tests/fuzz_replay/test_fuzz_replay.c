/* rocke tests — replay every checked-in fuzz input through the same entry
 * points the libFuzzer targets use (compiled in here with gcc, no libFuzzer
 * main), so past findings stay fixed in ordinary ctest and ASan runs. */
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
#include "fuzz/fuzz_ir_parse.c"

#define CORPUS ROCKE_SOURCE_DIR "/tests/fuzz/corpus/ir_parse"

static void test_replay_ir_parse(void **state) {
    (void)state;
    rk_test_replay_corpus(CORPUS, 50, LLVMFuzzerTestOneInput, &fuzz_input);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_ir_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
