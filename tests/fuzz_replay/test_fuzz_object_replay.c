/* rocke tests — replay the checked-in code-object and linker-input fuzz
 * corpora (tests/fuzz/corpus/hsaco, amdgpu_link: seeds plus every past
 * finding, such as the msgpack counts that once asked for 128 GiB) through
 * the libFuzzer entry points of tests/fuzz/fuzz_hsaco.c and
 * fuzz_amdgpu_link.c, compiled in here with gcc, in ctest and the ASan run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/corpus_replay.h"

/* both files define the libFuzzer entry: give each its own name here */
#define LLVMFuzzerTestOneInput fuzz_hsaco_one
#include "fuzz/fuzz_hsaco.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_amdgpu_link_one
#include "fuzz/fuzz_amdgpu_link.c"
#undef LLVMFuzzerTestOneInput

static void test_replay_hsaco(void **state) {
    (void)state;
    rk_test_replay_corpus(ROCKE_SOURCE_DIR "/tests/fuzz/corpus/hsaco", 7, fuzz_hsaco_one, NULL);
    /* the findings are refused with the bound's message, not by luck */
    char *data;
    size_t n;
    assert_int_equal(rk_read_file(ROCKE_SOURCE_DIR "/tests/fuzz/corpus/hsaco/crash_msgpack_array32_count.hsaco",
                                  &data, &n), RK_OK);
    rk_hsaco_info info;
    assert_int_equal(rk_analyze_hsaco(data, n, NULL, &info), RK_ERR_PARSE);
    assert_non_null(strstr(rk_error_message(), "declares 4294967295 msgpack elements"));
    rk_free(data, n + 1);
}

static void test_replay_amdgpu_link(void **state) {
    (void)state;
    rk_test_replay_corpus(ROCKE_SOURCE_DIR "/tests/fuzz/corpus/amdgpu_link", 4, fuzz_amdgpu_link_one, NULL);
    /* the seeds are real objects: the linker takes each */
    char *data;
    size_t n;
    assert_int_equal(rk_read_file(ROCKE_SOURCE_DIR "/tests/fuzz/corpus/amdgpu_link/seed_amd_vadd_gfx942.elf", &data,
                                  &n), RK_OK);
    cc_blob in = {(uint8_t *)data, n}, out = {0};
    assert_int_equal(cc_amdgpu_link(&in, &out), RK_OK);
    assert_int_equal(cc_check_hsaco(&out, "vadd"), RK_OK);
    cc_blob_free(&out);
    rk_free(data, n + 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_hsaco),
        cmocka_unit_test(test_replay_amdgpu_link),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
