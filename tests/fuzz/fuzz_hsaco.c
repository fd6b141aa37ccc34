/* rocke fuzz — the code-object reader (src/analysis/hsaco.c). Any bytes must
 * be read or refused with a message, never crash, leak or allocate beyond a
 * small multiple of the input; what is read has at most the kernel limit and
 * NUL-terminated names. libFuzzer entry; tests/fuzz_replay replays the corpus. */
#include "fuzz_check.h"

#include "rocke/analysis.h"
#include "rocke/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HSACO_CHECK(cond) RK_FUZZ_CHECK("fuzz_hsaco", cond)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* a private copy of the exact size: any over-read is caught */
    uint8_t *copy = rk_fuzz_copy(data, size);
    if (!copy) return 0;
    rk_hsaco_info info;
    const rk_target *const fallback[] = {NULL, rk_target_find("gfx942")};
    for (int i = 0; i < 2; i++) {
        rk_status s = rk_analyze_hsaco(copy, size, fallback[i], &info);
        if (s != RK_OK) {
            HSACO_CHECK(rk_error_message()[0] != '\0');
            continue;
        }
        HSACO_CHECK(info.nkernels <= RK_HSACO_MAX_KERNELS);
        HSACO_CHECK(memchr(info.target, 0, sizeof info.target) != NULL);
        for (uint32_t k = 0; k < info.nkernels; k++)
            HSACO_CHECK(memchr(info.kernels[k].name, 0, sizeof info.kernels[k].name) != NULL);
    }
    free(copy);
    return 0;
}
