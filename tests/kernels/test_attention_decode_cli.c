/* rocke tests — attention decode through the built `rocke`: build with
 * --mode decode, a verified emulator run with --page-size and --lengths
 * (random, equal, a file), the split-KV line, and the refusals (a page size
 * the instance does not serve, a length file that is short or too long for
 * the pages, --lengths on a kernel without lengths). */
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
    expect(cli_sh(ROCKE " build attention --mode decode --mask causal --page-size 16 --kv-splits 2 --target sm_90 "
              "--shape 3,8,2,2,50,64 --ir-only -o dec"), 0, "manifest.json");
    expect(cli_sh(ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 --page-size 16 --lengths random --verify"), 0,
           "bad=0/");
    /* the same run's output: 50 keys are too few to split (256 a split at least) */
    expect(0, 0, "split-KV: 1 of 2 splits");
    expect(cli_sh(ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 --page-size 16 --lengths random --arg "
              "num_splits=2 --verify"), 0, "bad=0/");
    expect(0, 0, "split-KV: 2 of 2 splits");
    expect(cli_sh(ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 --lengths equal --verify"), 0, "bad=0/");
    expect(cli_sh("printf '1, 17\\n49\\n' > lens.txt && " ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 "
              "--lengths lens.txt --verify"), 0, "bad=0/");
    /* a paged sequence may run past CTX up to its pages' end (50 -> 4 pages of 16 = 64 keys): the
     * reference's score row was sized for CTX, and keys 51..64 overwrote its other rows */
    expect(cli_sh("printf '64 51 3' > past.txt && " ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 "
              "--lengths past.txt --verify"), 0, "bad=0/");
}

static void test_refusals(void **state) {
    (void)state;
    expect(cli_sh(ROCKE " run dec/manifest.json --page-size 32"), 2, "serves page_size = 16 only");
    expect(cli_sh("printf '3 4' > short.txt && " ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 "
              "--lengths short.txt"), 2, "2 lengths for B = 3");
    expect(cli_sh("printf '3 4 65' > long.txt && " ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 "
              "--lengths long.txt"), 2, "sequence 2 has context length 65");
    expect(cli_sh(ROCKE " run dec/manifest.json --shape 3,8,2,9,50,64"), 2, "Sq = 1..8");
    expect(cli_sh(ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 --arg num_splits=3"), 2,
           "num_splits = 3, legal 1..2");
    expect(cli_sh(ROCKE " build softmax --target sm_90 --ir-only -o sm"), 0, "manifest.json");
    expect(cli_sh(ROCKE " run sm/manifest.json --lengths equal"), 2, "no per-sequence lengths");
    expect(cli_sh(ROCKE " run sm/manifest.json --page-size 16"), 2, "no paged cache");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_run),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
