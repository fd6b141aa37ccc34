/* rocke tests — the `rocke ir` command: exit codes (0 clean, 1 bad IR or
 * I/O, 2 misuse), help on stdout, FILE:LINE[:COL]: error: diagnostics on
 * stderr, stdin as '-', and print/canon output. Runs the built binary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/cli_run.h"

#define ROCKE ROCKE_BINARY_DIR "/rocke"
#define GOLDEN ROCKE_SOURCE_DIR "/tests/golden"

static void expect(const char *cmd, int rc, const char *in_out, const char *in_err) {
    rk_test_run r = rk_test_sh(NULL, cmd);
    if (r.rc != rc || (in_out && !strstr(r.out, in_out)) || (in_err && !strstr(r.err, in_err)))
        fail_msg("%s: exit %d (want %d)\nstdout: %s\nstderr: %s", cmd, r.rc, rc, r.out, r.err);
    rk_test_run_free(&r);
}

static void test_help_and_misuse(void **state) {
    (void)state;
    expect(ROCKE " ir --help", 0, "usage: rocke ir <command> FILE", NULL);
    expect(ROCKE " ir check --help", 0, "usage: rocke ir check FILE [--target T]", NULL);
    expect(ROCKE " ir canon -h", 0, "usage: rocke ir canon FILE", NULL);
    expect(ROCKE " ir", 2, NULL, "usage: rocke ir");
    expect(ROCKE " ir frob x.ir", 2, NULL, "unknown command 'frob'");
    expect(ROCKE " ir check", 2, NULL, "rocke ir check: missing FILE");
    expect(ROCKE " ir print a.ir b.ir", 2, NULL, "unexpected argument 'b.ir'");
    expect(ROCKE " ir print --bogus a.ir", 2, NULL, "unknown option '--bogus'");
    expect(ROCKE " ir check --target", 2, NULL, "--target needs a value (--target T)");
    expect(ROCKE " ir check --target gfx1 " GOLDEN "/mma.ir", 2, NULL, "unknown target 'gfx1' (legal: ");
}

static void test_check(void **state) {
    (void)state;
    expect(ROCKE " ir check " GOLDEN "/mma.ir", 0, NULL, NULL);
    expect(ROCKE " ir check --target gfx942 " GOLDEN "/mma.ir", 0, NULL, NULL);
    expect(ROCKE " ir check --target=sm_90 " GOLDEN "/mma.ir", 1, NULL,
           GOLDEN "/mma.ir:19: error: matrix atom 'mfma_f32_16x16x16_f16'");
    expect(ROCKE " ir check /nonexistent/x.ir", 1, NULL, "cannot open '/nonexistent/x.ir'");
    expect("printf 'ckdsl.ir v1\\nkernel @k {\\n  params {\\n  }\\n  region @entry {\\n"
           "    %%a : i32 = arith.addd (  )\\n' | " ROCKE " ir check -",
           1, NULL, "<stdin>:6:16: error: unknown op 'arith.addd' (did you mean 'arith.add'?)");
    /* parses, but the verifier objects: FILE:LINE from the op's line */
    expect("printf 'ckdsl.ir v1\\nkernel @k {\\n  params {\\n    %%N : i32\\n  }\\n  region @entry {\\n"
           "    %%a : f32 = arith.add ( %%N, %%N )\\n  }\\n}\\n' | " ROCKE " ir check -",
           1, NULL, "<stdin>:7: error:");
}

static void test_print_and_canon(void **state) {
    (void)state;
    expect(ROCKE " ir print " GOLDEN "/vector_add.ir", 0,
           "kernel @vector_add(%A: ptr<f32,global>, %B: ptr<f32,global>, %C: ptr<f32,global>, %N: i32) {\n"
           "  %tid1 = gpu.thread_id {axis = \"x\"} : i32\n", NULL);
    expect(ROCKE " ir canon - < " GOLDEN "/vector_add.ir", 0,
           "  params {\n    %0 : ptr<f32,global> { align = i:16, noalias = b:true, nonnull = b:true, readonly = b:true }\n",
           NULL);
    expect(ROCKE " ir canon - < " GOLDEN "/vector_add.ir", 0, "    %4 : i32 = gpu.thread_id (  ) { axis = s:\"x\" }\n",
           NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_misuse),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_print_and_canon),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
