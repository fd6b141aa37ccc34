/* rocke fuzz — the in-process AMDGPU linker's input (src/compile/
 * amdgpu_link.c). Any bytes must link or be refused (RK_ERR_INVALID or
 * RK_ERR_UNSUPPORTED) with a message; a linked HSACO is at most a small
 * multiple of the object and starts with an ELF header. libFuzzer entry;
 * tests/fuzz_replay replays the corpus. */
#include "fuzz_check.h"

#include "compile/compile_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LINK_CHECK(cond) RK_FUZZ_CHECK("fuzz_amdgpu_link", cond)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *copy = rk_fuzz_copy(data, size);
    if (!copy) return 0;
    cc_blob in = {copy, size}, out = {0};
    rk_status s = cc_amdgpu_link(&in, &out);
    if (s == RK_OK) {
        LINK_CHECK(out.data && out.size >= 64 && !memcmp(out.data, "\177ELF", 4));
        LINK_CHECK(out.size <= 8 * (uint64_t)size + 16 * 4096);
        cc_blob_free(&out);
    } else {
        LINK_CHECK(s == RK_ERR_INVALID || s == RK_ERR_UNSUPPORTED || s == RK_ERR_NOMEM);
        LINK_CHECK(rk_error_message()[0] != '\0' && !out.data);
    }
    free(copy);
    return 0;
}
