/* rocke tests — unified attention through the built `rocke`: build with
 * --mode unified, verified emulator runs of a given and a random mixed
 * batch (--shape Hq,Hkv,D --lengths ...), the path line (2-D, split-KV
 * chosen or given), the row variant a batch picks, a window, and the refusals (a query longer than its
 * keys, a bad --lengths, the short shape without a batch, a window with a
 * right side). */
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
    expect(cli_sh(ROCKE " build attention --mode unified --head-dim 64 --page-size 16 --kv-splits 4 --target sm_90a "
              "--shape 1,8,2,1,1,64 --ir-only -o uni"), 0, "manifest.json");
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 8,2,64 --lengths 1:1,2:40,17:17,3:90 --page-size 16 "
              "--verify"), 0, "bad=0/");
    expect(0, 0, "unified: 2-D path, 1 split per (query block, KV head)");
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 8,2,64 --lengths 1:600,1:700 --verify"), 0, "bad=0/");
    expect(0, 0, "unified: split-KV path, 2 splits");   /* 2 x 2 blocks, 600 keys: 2 splits of 300 */
    /* the row variants: a batch of decodes ties (a key step costs a 64-row block) and keeps 64 rows */
    expect(0, 0, "unified: rows 64 per block (manifest.json) for G = 4");
    expect(0, 0, "4 query blocks x KV heads, 8 blocks read keys");
    expect(0, 0, "for G = 4, key split, full blocks on wgmma: row units");
    /* a prefill alone takes the 64 rows without the key-split body (it slows full blocks) */
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 8,2,64 --lengths 130:130 --verify"), 0, "bad=0/");
    expect(0, 0, "unified: rows 64 per block (manifest.whole.json) for G = 4, full blocks on wgmma: row units");
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 8,2,64 --lengths 5:20,1:30 --arg num_splits=3 --verify"), 0,
           "split-KV path, 3 splits");
    expect(0, 0, "bad=0/");
    expect(cli_sh(ROCKE " run uni/manifest.json --lengths random:4 --seed 7 --verify"), 0, "shape B=4,Hq=8,Hkv=2");
    expect(0, 0, "bad=0/");
    expect(cli_sh(ROCKE " build attention --mode unified --mask window --sinks --alibi --softcap --lse --head-dim 64 "
              "--page-size 32 --target gfx942 --shape 1,4,4,1,1,64 --ir-only -o win"), 0, "manifest.json");
    expect(cli_sh(ROCKE " run win/manifest.json --shape 4,4,64 --lengths 1:50,33:70 --window 16 --arg softcap=0.5 "
              "--verify"), 0, "bad=0/");
}

static void test_refusals(void **state) {
    (void)state;
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 8,2,64 --lengths 1:4,5:3"), 2,
           "sequence 1 has 5 new queries over 3 keys");
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 1,8,2,9,4,64"), 2, "cannot fit B = 1 sequences");
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 8,2,64 --lengths 1:2,x"), 2, "sequence 1: expected Q:K");
    expect(cli_sh(ROCKE " run uni/manifest.json --lengths random:0"), 2, "random:N");
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 8,2,64"), 2, "needs --lengths");
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 8,2,64 --lengths 1:9 --page-size 32"), 2,
           "serves page_size = 16 only");
    expect(cli_sh(ROCKE " run uni/manifest.json --shape 8,2,64 --lengths 1:9 --arg num_splits=9"), 2,
           "num_splits = 9, legal 1..4");
    expect(cli_sh(ROCKE " run win/manifest.json --shape 4,4,64 --lengths 1:9 --window 4,2"), 2,
           "the window is causal");
    expect(cli_sh(ROCKE " build attention --mode unified --mask none --target sm_90a --ir-only -o bad"), 2,
           "causal inside each sequence");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_run),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
