/* rocke tests — the convolution families through the built `rocke`: one
 * build, then verified emulator runs of that manifest at other geometries
 * (--stride, --pad, --dilation, --groups: the same binary) and shapes,
 * the geometry line, TFLOP/s in the Perf line, sm_90a's 1x1 TMA kernel
 * (tensor maps from the manifest), and misuse of the geometry flags with its
 * exit code and message. */
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
    snprintf(tmp, sizeof tmp, "/tmp/rk_conv_XXXXXX");
    if (!mkdtemp(tmp)) return -1;
    return access(ROCKE, X_OK) ? -1 : 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    return system(cmd);
}

static void test_geometry_flags(void **state) {
    (void)state;
    int rc = sh(ROCKE " build conv --direction fwd --target sm_90a --shape 2,6,9,7,6,3,3 --vec-a 1 --vec-b 1 "
                "--ir-only -o c");
    if (rc) fail_msg("build: %s", out_text);
    rc = sh(ROCKE " run c/manifest.json --verify --seed 3");
    if (rc) fail_msg("run: %s", out_text);
    assert_non_null(strstr(out_text, "geometry stride=1x1 pad=1x1x1x1 dilation=1x1 groups=1"));
    assert_non_null(strstr(out_text, "bad=0/756"));      /* 2 * 9 * 7 * 6 */
    assert_non_null(strstr(out_text, " TFlops, "));
    /* stride 2, pad 1 before and 2 after along H, 0 along W, dilation 2 (a 5-wide filter), groups 2:
     * P = (9 + 3 - 5) / 2 + 1 = 4, Q = (7 - 5) / 2 + 1 = 2 */
    rc = sh(ROCKE " run c/manifest.json --verify --stride 2 --pad 1,2,0,0 --dilation 2 --groups 2 --seed 4");
    if (rc) fail_msg("run with a geometry: %s", out_text);
    assert_non_null(strstr(out_text, "geometry stride=2x2 pad=1x2x0x0 dilation=2x2 groups=2"));
    assert_non_null(strstr(out_text, "bad=0/96"));       /* 2 * 4 * 2 * 6 */
    rc = sh(ROCKE " run c/manifest.json --verify --shape 1,9,5,11,3,1,4 --stride 1,3 --pad 0,2 --groups 3");
    if (rc) fail_msg("run with a shape: %s", out_text);
    assert_non_null(strstr(out_text, "bad=0/60"));       /* P = 5, Q = (11 + 4 - 4) / 3 + 1 = 4, K = 3 */
}

/* sm_90a's 1x1 TMA kernel through the CLI: `rocke run` encodes its tensor
 * maps (X_map, Wt_map, Y_map) from the manifest's signature, at the built
 * shape and at another (N*H*W = 3*5*7 = 105, a tile's tail); a geometry it
 * cannot take (padding) is refused naming the rule. */
static void test_tma_1x1(void **state) {
    (void)state;
    int rc = sh(ROCKE " build conv --direction fwd --target sm_90a --shape 2,24,9,7,40,1,1 --pad 0 --epilogue tma "
                "--tile 128x128x64 --warps 8x1 --fuse bias,relu --ir-only -o t");
    if (rc) fail_msg("build: %s", out_text);
    assert_non_null(strstr(out_text, "_ldtma"));
    rc = sh(ROCKE " run t/manifest.json --verify --seed 5");
    if (rc || !strstr(out_text, "bad=0/5040")) fail_msg("run: %s", out_text);   /* 2 * 9 * 7 * 40 */
    rc = sh(ROCKE " run t/manifest.json --verify --seed 6 --shape 3,24,5,7,40,1,1");
    if (rc || !strstr(out_text, "bad=0/4200")) fail_msg("run at another shape: %s", out_text);
    rc = sh(ROCKE " run t/manifest.json --verify --pad 1");
    if (rc == 0 || !strstr(out_text, "needs algo igemm")) fail_msg("padded run: rc %d, %s", rc, out_text);
}

static void test_misuse(void **state) {
    (void)state;
    assert_int_equal(sh(ROCKE " build conv --target gfx942 --shape 1,8,5,5,8,3,3 --ir-only -o g"), 0);
    assert_int_equal(sh(ROCKE " build softmax --shape 4,300 --ir-only -o s"), 0);
    static const struct { const char *cmd; int rc; const char *frag; } rows[] = {
        {"run g/manifest.json --stride 1,2,3", 2, "--stride '1,2,3': expects 1 or 2 values"},
        {"run g/manifest.json --pad 1,2,3", 2, "--pad '1,2,3': expects 1, one per axis or 4 values"},
        {"run g/manifest.json --stride two", 2, "--stride 'two'"},
        {"run g/manifest.json --groups 3", 2, "C = 8 and K = 8 must both be multiples of groups = 3"},
        {"run g/manifest.json --pad 0 --dilation 3", 2, "the output is empty along h"},
        {"run g/manifest.json --stride 0", 2, "'stride' and 'dilation' must be >= 1"},
        {"run s/manifest.json --dilation 2", 2, "family softmax has no run-time knob 'dilation'"},
        /* each value is judged in the spelling given, not in the expanded 'x' form */
        {"run g/manifest.json --pad -1", 2, "--pad '-1': value 1 ('-1') is not a non-negative integer"},
        {"run g/manifest.json --stride 1,", 2, "--stride '1,': value 2 ('') is not a non-negative integer"},
        {"run g/manifest.json --pad 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", 2, "4 values separated by ',' (got 18)"},
        {"run g/manifest.json --groups 99999999999", 2, "knob 'groups' must be an integer in 0..4294967295 (got"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int rc = sh(ROCKE " %s", rows[i].cmd);
        if (rc != rows[i].rc || !strstr(out_text, rows[i].frag))
            fail_msg("'%s': exit %d (want %d), output lacks '%s':\n%s", rows[i].cmd, rc, rows[i].rc, rows[i].frag,
                     out_text);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry_flags), cmocka_unit_test(test_tma_1x1),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
