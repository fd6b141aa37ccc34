/* rocke tests — kv_append through the built `rocke`: build with --rope and
 * --kv-dtype, verified emulator runs at odd token counts with the Perf line
 * in GB/s, and the refusals (a cache dialect the target lacks, a D the
 * vector does not divide). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../support/cli_shell.h"

#define ROCKE ROCKE_BINARY_DIR "/rocke"

static int setup(void **state) {
    (void)state;
    return cli_scratch_make(ROCKE);
}

static int teardown(void **state) {
    (void)state;
    return cli_scratch_remove();
}

static void expect(int rc, int want, const char *fragment) {
    if (rc != want || !strstr(cli_out, fragment))
        fail_msg("exit %d (want %d), output lacks '%s':\n%s", rc, want, fragment, cli_out);
}

static void test_build_and_run(void **state) {
    (void)state;
    expect(cli_sh(ROCKE " build kv_append --rope gptj --kv-dtype fp8 --target sm_90 --ir-only -o kva"), 0,
           "manifest.json");
    expect(cli_sh(ROCKE " run kva/manifest.json --shape 13,4,1,64,2,16 --verify"), 0, "bad=0/");
    expect(0, 0, "GB/s");
    expect(cli_sh(ROCKE " build kv_append --rope neox --kv-dtype fp8fnuz --target gfx942 --ir-only -o kvb"), 0,
           "manifest.json");
    expect(cli_sh(ROCKE " run kvb/manifest.json --shape 7,1,4,128,1,128 --verify"), 0, "bad=0/");
}

static void test_refusals(void **state) {
    (void)state;
    expect(cli_sh(ROCKE " build kv_append --kv-dtype fp8 --target gfx942 --ir-only -o bad"), 2,
           "legal on gfx942: same, fp8fnuz");
    expect(cli_sh(ROCKE " build kv_append --rope yarn --target sm_90 --ir-only -o bad"), 2, "none|neox|gptj");
    expect(cli_sh(ROCKE " build kv_append --target sm_90 --ir-only -o kvc"), 0, "manifest.json");
    expect(cli_sh(ROCKE " run kvc/manifest.json --shape 3,2,2,100,2,16"), 2, "D (100) must be a multiple of 8");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_run),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
