/* rocke tests — attention through the built `rocke`: build + verified
 * emulator runs with --window and --lengths (and the Perf line), the note
 * sm_90a builds carry, and a bad-input table (window on a causal instance,
 * lengths on a padded one, malformed values, lengths past the shape, a
 * shape whose D is not the instance's), each with its exit code and message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/cli_run.h"

#define ROCKE ROCKE_BINARY_DIR "/rocke"

static char tmp[64];

static rk_test_run run(const char *fmt, ...) {
    char cmd[2048], full[2200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "ROCKE_QUIET=1 ROCKE_DEVICE=emu %s", cmd);
    return rk_test_sh(tmp, full);
}

static void expect_ok(const char *cmd, const char *needle) {
    rk_test_run r = run("%s", cmd);
    if (r.rc || (needle && !strstr(r.out, needle)))
        fail_msg("%s: rc %d, wanted '%s'\n%s%s", cmd, r.rc, needle ? needle : "", r.out, r.err);
    rk_test_run_free(&r);
}

static int setup(void **state) {
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/rk_attn_XXXXXX");
    if (!mkdtemp(tmp) || access(ROCKE, X_OK)) return -1;
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
    expect_ok(ROCKE " build attention --mask window --layout varlen --lse --shape 3,4,2,37,45,64 "
              "--target gfx942 --ir-only -o win", NULL);
    expect_ok("grep -c '\"lse\": \"true\"' win/manifest.json", "1");   /* a bare boolean knob is true */
    expect_ok(ROCKE " run win/manifest.json --window 7,2 --lengths 37:45,1,20:0 --verify --seed 5", "bad=0/");
    expect_ok(ROCKE " run win/manifest.json --window -1,3 --verify --seed 6", "Perf: ");
    /* sm_90a: every layout takes the TMA + wgmma kernel; path=mma keeps mma.sync and says so */
    expect_ok(ROCKE " build attention --mask causal --shape 1,4,2,20,33,128 --target sm_90a --ir-only -o c", "_ptwgmma");
    expect_ok(ROCKE " run c/manifest.json --verify --seed 7", "bad=0/");
    expect_ok(ROCKE " build attention --layout bshd --shape 1,4,2,20,33,128 --target sm_90a --ir-only -o b", "_ptwgmma");
    expect_ok(ROCKE " run b/manifest.json --verify --seed 9", "bad=0/");
    rk_test_run r = run(ROCKE " build attention --layout bshd --path mma --shape 1,4,2,20,33,128 --target sm_90a "
                        "--ir-only -o d");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "runs the mma.sync kernel here (path=mma"));
    rk_test_run_free(&r);
    expect_ok("grep -c 'knobs the TMA + wgmma kernel does not take' d/manifest.json", "1");
    expect_ok(ROCKE " run d/manifest.json --verify --seed 8", "bad=0/");
}

/* Without --shape the default shape follows the knobs: D = head_dim (prefill and unified), and
 * decode's Sq = 1 (the declared 4096 query rows are prefill's); both builds used to be refused. */
static void test_default_shape_follows_knobs(void **state) {
    (void)state;
    expect_ok(ROCKE " build attention --head-dim 64 --target gfx942 --ir-only -o hd64 && tr -d ' \\n' < hd64/manifest.json",
              "\"default_shape\":[4,32,32,4096,4096,64]");
    expect_ok(ROCKE " run hd64/manifest.json --shape 1,2,1,5,9,64 --verify", "bad=0/");
    expect_ok(ROCKE " build attention --mode unified --head-dim 64 --target sm_80 --ir-only -o u64", NULL);
    expect_ok(ROCKE " build attention --mode decode --head-dim 64 --target sm_80 --ir-only -o dec "
              "&& tr -d ' \\n' < dec/manifest.json", "\"default_shape\":[4,32,32,1,4096,64]");
    expect_ok(ROCKE " run dec/manifest.json --shape 2,2,2,1,19,64 --page-size 16 --verify", "bad=0/");
}

static void test_bad_input(void **state) {
    (void)state;
    expect_ok(ROCKE " build attention --mask causal --shape 1,2,2,16,16,64 --target sm_90a --ir-only -o bad", NULL);
    expect_ok(ROCKE " build attention --layout varlen --shape 2,2,2,16,16,64 --target sm_90a --ir-only -o vl", NULL);
    const struct { const char *cmd; int rc; const char *msg; } rows[] = {
        {" run bad/manifest.json --window 3,3", 2, "built with --mask window"},
        {" run vl/manifest.json --window 3", 2, "expected two integers L,R"},
        {" run bad/manifest.json --lengths 3,4", 2, "--layout varlen"},
        {" run vl/manifest.json --lengths 3:x,4", 2, "expected LQ[:LK]"},
        {" run vl/manifest.json --lengths 17,4", 2, "at most Sq = 16"},
        {" run vl/manifest.json --lengths 1,2,3", 2, "for B = 2"},
        {" run bad/manifest.json --shape 1,2,2,16,16,128", 2, "serves head_dim = 64"},
        {" build attention --shape 1,6,4,16,16,64 --target sm_90a --ir-only -o x", 2, "not a multiple of Hkv = 4"},
        {" build attention --head-dim 256 --shape D=64 --target gfx942 --ir-only -o y", 2,
         "--shape B,Hq,Hkv,Sq,Skv,256"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        rk_test_run r = run(ROCKE "%s", rows[i].cmd);
        if (r.rc != rows[i].rc || !strstr(r.err, rows[i].msg))
            fail_msg("%s: rc %d (want %d), stderr lacks '%s':\n%s", rows[i].cmd, r.rc, rows[i].rc, rows[i].msg,
                     r.err);
        rk_test_run_free(&r);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_run),
        cmocka_unit_test(test_default_shape_follows_knobs),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
