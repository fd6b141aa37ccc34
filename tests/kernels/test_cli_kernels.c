/* rocke tests — `rocke build` and `rocke run` end to end through the built
 * binary: a build + verified emulator run, and a bad-input table (unknown
 * family, knob, dtype, op, target; bad shapes; a tampered binary; a manifest
 * whose spec and name disagree or whose target is unknown), each with the
 * expected exit code and message fragment. */
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

#define ROCKE ROCKE_BINARY_DIR "/rocke"

static char tmp[64];
static char out_text[1 << 16];

/* Run a shell command (stdout+stderr captured); returns the exit code. */
static int sh(const char *fmt, ...) {
    char cmd[2048], full[2400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd %s && ROCKE_QUIET=1 ROCKE_DEVICE=emu %s 2>&1", tmp, cmd);
    FILE *p = popen(full, "r");
    assert_non_null(p);
    size_t n = fread(out_text, 1, sizeof out_text - 1, p);
    out_text[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state) {
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/rk_cli_XXXXXX");
    if (!mkdtemp(tmp)) return -1;
    if (access(ROCKE, X_OK)) {
        fprintf(stderr, "test_cli_kernels: %s is not built\n", ROCKE);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    return system(cmd);
}

static void test_build_and_run(void **state) {
    (void)state;
    int rc = sh(ROCKE " build layernorm --dtype bf16 --residual true --target sm_90 --shape 5,1001 --ir-only -o ln");
    if (rc) fail_msg("build: %s", out_text);
    rc = sh(ROCKE " run ln/manifest.json --verify --seed 7");
    if (rc) fail_msg("run: %s", out_text);
    assert_non_null(strstr(out_text, "verify max_abs_diff="));
    assert_non_null(strstr(out_text, "bad=0/10010"));
    assert_non_null(strstr(out_text, "Perf: "));
    assert_non_null(strstr(out_text, "PerfJSON: {\"ms\": "));
    rc = sh(ROCKE " run ln/manifest.json --verify --shape 3,77 --seed 8");
    if (rc) fail_msg("run --shape: %s", out_text);
    assert_non_null(strstr(out_text, "bad=0/462"));
    /* named: N changes, M stays the manifest's 5; a given eps reaches kernel and reference */
    rc = sh(ROCKE " run ln/manifest.json --verify --shape N=33 --arg eps=0.25 --seed 9");
    if (rc) fail_msg("run --shape N=33: %s", out_text);
    assert_non_null(strstr(out_text, "shape M=5,N=33"));
    assert_non_null(strstr(out_text, "bad=0/330"));
    assert_non_null(strstr(out_text, "\"shape\": [5,33]"));
    rc = sh(ROCKE " build elementwise --op silu --dtype f16 --target gfx942 --shape 999 --ir-only -o ew");
    if (rc) fail_msg("build: %s", out_text);
    rc = sh(ROCKE " run ew/manifest.json --verify");
    if (rc) fail_msg("run: %s", out_text);
    assert_non_null(strstr(out_text, "bad=0/999"));
    assert_int_equal(sh(ROCKE " build --list"), 0);
    assert_non_null(strstr(out_text, "gelu_tanh"));
    assert_non_null(strstr(out_text, "--rows_per_block"));
}

static void test_bad_inputs(void **state) {
    (void)state;
    assert_int_equal(sh(ROCKE " build softmax --shape 4,300 --ir-only -o good"), 0);
    assert_int_equal(sh(ROCKE " build rmsnorm --shape 4,300 --ir-only -o norm"), 0);
    static const struct { const char *cmd; int rc; const char *frag; } rows[] = {
        {"build gemmx -o x", 2, "unknown kernel family 'gemmx' (legal: elementwise, reduce, softmax"},
        {"build softmax --bogus 1 -o x", 2, "unknown option '--bogus'; the options are: -o/--out, --target"},
        {"build softmax --dtype f64 -o x", 1, "f16|bf16|f32"},
        {"build elementwise --op tanh -o x", 1, "add|sub|mul|div|max|min|copy"},
        {"build softmax --target gfx1 -o x", 2, "unknown target 'gfx1'"},
        {"build softmax --shape 0,5 -o x", 2, "softmax: dimension M must be at least 1"},
        {"build softmax --shape M=4,K=5 -o x", 2, "unknown dimension 'K' (dimensions: M, N)"},
        {"build softmax --shape 4,5,6 -o x", 2, "2 dimensions (M, N), got 3 extents"},
        {"build softmax --shape M=4,5 -o x", 2, "mixes named and positional"},
        {"build softmax --shape M=4,M=5 -o x", 2, "dimension M given twice"},
        {"build softmax --shape -4,5 -o x", 2, "--shape expects positive integers"},
        {"build softmax --shape 4,100000 --chunks 1 --block-size 64 --rows-per-block 1 -o x", 1, "row capacity"},
        {"build softmax --vec 8 --dtype f32 --target sm_90 -o x", 1, "'vec' must be at most 4"},
        {"build softmax --wave 64 --target sm_90 -o x", 1, "'wave' must be 32"},
        {"build softmax", 2, "missing -o DIR"},
        {"build", 2, "expected a kernel family"},
        {"run nothere/manifest.json", 1, "nothere/manifest.json"},
        {"run good/manifest.json --shape 4,100000", 1, "row capacity"},
        {"run good/manifest.json --shape 4,x", 2, "--shape expects"},
        {"run good/manifest.json --iters 0", 2, "--iters"},
        {"run good/manifest.json --arg eps=1e-6", 1, "'eps' is not a scalar to give (given scalars: none)"},
        {"run norm/manifest.json --arg M=3", 1, "'M' is not a scalar to give: it follows from the shape "
                                              "(given scalars: eps (f32, given))"},
        {"run good/manifest.json --arg eps", 2, "--arg expects NAME=NUMBER"},
        {"run good/manifest.json --frobnicate 1", 2, "unknown option"},
        {"run", 2, "usage"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        int rc = sh(ROCKE " %s", rows[i].cmd);
        if (rc != rows[i].rc || !strstr(out_text, rows[i].frag))
            fail_msg("row %zu 'rocke %s': exit %d (want %d), output:\n%s\n(wanted '%s')", i, rows[i].cmd, rc,
                     rows[i].rc, out_text, rows[i].frag);
    }
    /* a manifest edited out of step with its files */
    assert_int_equal(sh("cp -r good bin && for f in bin/*.ir; do echo '# x' >> $f; done"), 0);
    assert_int_equal(sh(ROCKE " run bin/manifest.json"), 1);
    assert_non_null(strstr(out_text, "does not match its manifest"));
    assert_int_equal(sh("cp -r good tgt && sed -i 's/\"target\": \"gfx950\"/\"target\": \"gfx1\"/' tgt/manifest.json"), 0);
    assert_int_equal(sh(ROCKE " run tgt/manifest.json"), 1);
    assert_non_null(strstr(out_text, "unknown target 'gfx1'"));
    assert_int_equal(sh("cp -r good spec && sed -i 's/\"block_size\": \"[0-9]*\"/\"block_size\": \"1024\"/' "
                        "spec/manifest.json"), 0);
    assert_int_equal(sh(ROCKE " run spec/manifest.json"), 1);
    assert_non_null(strstr(out_text, "'spec' describes kernel"));
    /* default_shape with names the family does not have, or a wrong rank without names */
    assert_int_equal(sh("cp -r good dims && sed -i 's/^    \"M\",$/    \"Q\",/' dims/manifest.json"), 0);
    assert_int_equal(sh(ROCKE " run dims/manifest.json"), 1);
    assert_non_null(strstr(out_text, "'default_shape': softmax: unknown dimension 'Q' (dimensions: M, N)"));
    assert_int_equal(sh("cp -r good rank && sed -i -e '/default_shape_dims/,/],/d' -e 's/^    300$/    300, 2/' "
                        "rank/manifest.json"), 0);
    assert_int_equal(sh(ROCKE " run rank/manifest.json"), 1);
    assert_non_null(strstr(out_text, "'default_shape' has 3 extents but family softmax has 2 dimensions"));
    assert_int_equal(sh("cp -r good sch && sed -i 's/manifest\\/v1/manifest\\/v9/' sch/manifest.json"), 0);
    assert_int_equal(sh(ROCKE " run sch/manifest.json"), 1);
    assert_non_null(strstr(out_text, "'schema'"));
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_build_and_run), cmocka_unit_test(test_bad_inputs)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
