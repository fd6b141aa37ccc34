/* rocke tests — bad input to the family commands (build, aot, run) and the
 * knob API behind them: every dtype list shown is the knob's own (a spelling
 * is accepted exactly when the list names it), 8-bit float names per target,
 * conv refusals told as conv's, integers spelled one way only (knobs and
 * flags), exit 2 with nothing left on disk for a refused knob, combination,
 * shape or output path, and run's --lengths / --window parsers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/kernels.h"
#include "support/cli_run.h"

#define ROCKE ROCKE_BINARY_DIR "/rocke"

static char dir[256];

static rk_test_run sh(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk_test_run r = rk_test_vshf(dir, fmt, ap);
    va_end(ap);
    return r;
}

/* The command exits rc and its stderr holds every fragment given (NULL ends them). */
static void expect_err(int rc, const char *cmd, ...) {
    rk_test_run r = sh("%s", cmd);
    if (r.rc != rc) fail_msg("'%s': exit %d (want %d)\nstdout: %s\nstderr: %s", cmd, r.rc, rc, r.out, r.err);
    va_list ap;
    va_start(ap, cmd);
    for (const char *f = va_arg(ap, const char *); f; f = va_arg(ap, const char *))
        if (!strstr(r.err, f)) fail_msg("'%s': stderr lacks '%s':\n%s", cmd, f, r.err);
    va_end(ap);
    rk_test_run_free(&r);
}

static bool exists(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static int setup(void **state) {
    (void)state;
    return rk_test_make_dir(dir, sizeof dir, "rk_cli_bad",
                            ROCKE " build softmax --shape 4,300 --ir-only -o sm >/dev/null && touch afile");
}

static int teardown(void **state) {
    (void)state;
    return rk_test_remove_dir(dir);
}

/* Does the '|' list hold word? */
static bool listed(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, word, n)) return true;
        p = bar ? bar + 1 : NULL;
    }
    return false;
}

/* Every dtype knob of every family: rk_instance_set takes a type name exactly
 * when the knob's legal text lists it, and a refusal quotes that same text. */
static void test_dtype_lists_are_each_knobs_own(void **state) {
    (void)state;
    static const char *const names[] = {"f16", "bf16", "f32", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "f64", "i8",
                                        "fp8", "F16", " f16", ""};
    uint32_t seen = 0;
    for (uint32_t f = 0; f < rk_family_count(); f++) {
        uint32_t n;
        const rk_knob *kb = rk_family_knobs((rk_family_id)f, &n);
        for (uint32_t i = 0; i < n; i++) {
            if (kb[i].kind != RK_KNOB_DTYPE) continue;
            seen++;
            char legal[256], want[512];
            rk_knob_legal_text(&kb[i], legal, sizeof legal);
            snprintf(want, sizeof want, "%s: knob '%s' must be one of %s (got '", rk_family_name((rk_family_id)f),
                     kb[i].name, legal);
            for (size_t j = 0; j < sizeof names / sizeof *names; j++) {
                rk_instance in;
                assert_int_equal(rk_instance_default((rk_family_id)f, &in), RK_OK);
                rk_status st = rk_instance_set(&in, kb[i].name, names[j], NULL);
                if ((st == RK_OK) != listed(legal, names[j]))
                    fail_msg("%s.%s = '%s': %s, but the legal list is %s", rk_family_name((rk_family_id)f), kb[i].name,
                             names[j], st ? "refused" : "taken", legal);
                if (st && !strstr(rk_error_message(), want))
                    fail_msg("%s.%s = '%s': '%s' lacks '%s'", rk_family_name((rk_family_id)f), kb[i].name, names[j],
                             rk_error_message(), want);
                if (st) continue;
                char back[32];   /* the value reads back in the list's spelling */
                assert_int_equal(rk_instance_get(&in, kb[i].name, back, sizeof back), RK_OK);
                assert_string_equal(back, names[j]);
            }
        }
    }
    assert_true(seen >= 20);
    /* the lists differ per knob: attention takes 16-bit inputs, gemm the 8-bit floats too, conv f32
     * as well (its depthwise dgrad and wgrad kernels; the matrix paths say which they take) */
    expect_err(2, ROCKE " build conv --dtype e4m3 -o x", "conv: knob 'dtype' must be one of f16|bf16|f32 (got 'e4m3')",
               NULL);
    expect_err(2, ROCKE " build conv3d --dtype f32 --shape 1,8,5,5,5,8,3,3,3 -o x",
               "conv3d: knob 'dtype' = f32: direction fwd with algo igemm takes f16|bf16", NULL);
    expect_err(2, ROCKE " build attention --dtype f32 -o x", "attention: knob 'dtype' must be one of f16|bf16", NULL);
    expect_err(2, ROCKE " build gemm --dtype f32 -o x",
               "gemm: knob 'dtype' must be one of f16|bf16|e4m3|e5m2|e4m3fnuz|e5m2fnuz (got 'f32')", NULL);
    expect_err(2, ROCKE " build gemm --out-dtype e4m3 -o x", "knob 'out_dtype' must be one of f16|bf16|f32", NULL);
    /* help shows the same list */
    rk_test_run r = sh(ROCKE " build attention --help");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "Q, K, V and O element type\n"));
    assert_non_null(strstr(r.out, "(legal: f16,bf16)\n"));
    rk_test_run_free(&r);
    /* and a long list is shown whole (gemm's atoms: over 600 characters) */
    r = sh(ROCKE " build gemm --help");
    uint32_t n;
    const rk_knob *gk = rk_family_knobs(RK_FAMILY_GEMM, &n);
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(gk[i].name, "atom")) continue;
        char legal[2048];
        rk_knob_legal_text(&gk[i], legal, sizeof legal);
        for (char *c = legal; *c; c++)
            if (*c == '|') *c = ',';
        assert_true(strlen(legal) > 400);
        if (!strstr(r.out, legal)) fail_msg("gemm --help does not show the whole atom list %s:\n%s", legal, r.out);
    }
    rk_test_run_free(&r);
}

static void legal_on(const rk_knob *kb, const char *target, const char *want) {
    char buf[256];
    rk_knob_legal_text_for(kb, rk_target_find(target), buf, sizeof buf);
    if (strcmp(buf, want)) fail_msg("%s on %s: '%s', want '%s'", kb->name, target, buf, want);
}

/* gfx942 multiplies the FNUZ encodings, gfx950 and NVIDIA the OCP ones: the
 * lists per target, the refusal naming the target's own, the CLI's note when
 * the heuristic maps one to the other. */
static void test_fp8_names_per_target(void **state) {
    (void)state;
    uint32_t n;
    const rk_knob *kb = rk_family_knobs(RK_FAMILY_GEMM, &n), *dt = NULL, *odt = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!strcmp(kb[i].name, "dtype")) dt = &kb[i];
        if (!strcmp(kb[i].name, "out_dtype")) odt = &kb[i];
    }
    assert_non_null(dt);
    assert_non_null(odt);
    legal_on(dt, "gfx942", "f16|bf16|e4m3fnuz|e5m2fnuz");
    legal_on(dt, "gfx950", "f16|bf16|e4m3|e5m2");
    legal_on(dt, "sm_90", "f16|bf16|e4m3|e5m2");
    legal_on(dt, "sm_90a", "f16|bf16|e4m3|e5m2");
    legal_on(dt, "gfx90a", "f16|bf16");
    legal_on(odt, "gfx942", "f16|bf16|f32");
    assert_true(rk_knob_has_fp8(dt));
    assert_false(rk_knob_has_fp8(odt));
    char note[256];
    rk_knob_fp8_note(note, sizeof note);
    assert_non_null(strstr(note, "gfx942: e4m3fnuz, e5m2fnuz"));
    assert_non_null(strstr(note, "gfx950"));
    assert_non_null(strstr(note, "sm_90a"));
    /* set by hand (no heuristic), the other encoding is refused naming the target's */
    static const struct { const char *target, *value, *msg; } rows[] = {
        {"gfx942", "e4m3", "gemm: knob 'dtype' = e4m3 is not an 8-bit float of gfx942: use dtype e4m3fnuz (gfx942's "
                           "FNUZ encoding; legal on gfx942: f16|bf16|e4m3fnuz|e5m2fnuz)"},
        {"gfx942", "e5m2", "use dtype e5m2fnuz"},
        {"gfx950", "e4m3fnuz", "use dtype e4m3 (gfx950's OCP encoding; legal on gfx950: f16|bf16|e4m3|e5m2)"},
        {"sm_90", "e5m2fnuz", "is not an 8-bit float of sm_90: use dtype e5m2"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        rk_instance in;
        assert_int_equal(rk_instance_default(RK_FAMILY_GEMM, &in), RK_OK);
        assert_int_equal(rk_instance_set(&in, "layout", "rc", NULL), RK_OK);
        assert_int_equal(rk_instance_set(&in, "dtype", rows[i].value, NULL), RK_OK);
        assert_int_equal(rk_instance_validate(&in, rk_target_find(rows[i].target)), RK_ERR_INVALID);
        if (!strstr(rk_error_message(), rows[i].msg))
            fail_msg("%s on %s: '%s' lacks '%s'", rows[i].value, rows[i].target, rk_error_message(), rows[i].msg);
    }
    /* the CLI: the heuristic maps a given encoding to the target's, and says so */
    expect_err(0, ROCKE " build gemm --dtype e4m3 --layout rc --target gfx942 --shape 64,64,64 --ir-only -o g8",
               "rocke build: note: dtype e4m3 is e4m3fnuz on gfx942", NULL);
    rk_test_run r = sh("grep '\"dtype\"' g8/manifest.json");
    assert_non_null(strstr(r.out, "\"dtype\": \"e4m3fnuz\""));
    rk_test_run_free(&r);
    r = sh(ROCKE " build gemm --dtype e4m3 --layout rc --target gfx950 --shape 64,64,64 --ir-only -o g9");
    assert_int_equal(r.rc, 0);
    assert_null(strstr(r.err, "note: dtype"));   /* its own encoding: nothing to say */
    rk_test_run_free(&r);
    r = sh(ROCKE " build gemm --help");
    assert_non_null(strstr(r.out, "(legal: f16,bf16,e4m3,e5m2,e4m3fnuz,e5m2fnuz)\n"));
    assert_non_null(strstr(r.out, "(8-bit float encodings by target: gfx942: e4m3fnuz, e5m2fnuz; gfx950"));
    rk_test_run_free(&r);
}

/* conv and conv3d run through the GEMM plan: its refusals carry their name. */
static void test_conv_refusals_name_conv(void **state) {
    (void)state;
    static const char *const fams[] = {"conv", "conv3d"};
    for (size_t i = 0; i < 2; i++) {
        char cmd[256], want[128];
        snprintf(cmd, sizeof cmd, ROCKE " build %s --target gfx942 --tile 16x16x16 --warps 4x4 --ir-only -o cv",
                 fams[i]);
        snprintf(want, sizeof want, "rocke build: %s: knob 'tile' = 16x16x16 must split into warps 4x4", fams[i]);
        rk_test_run r = sh("%s", cmd);
        if (r.rc != 2 || !strstr(r.err, want) || strstr(r.err, "gemm:"))
            fail_msg("'%s': exit %d, stderr:\n%s(want 2 and '%s', no 'gemm:')", cmd, r.rc, r.err, want);
        rk_test_run_free(&r);
        snprintf(cmd, sizeof cmd, ROCKE " aot %s --targets gfx942 --tile 256x256x64 --warps 1x1 -o cva", fams[i]);
        snprintf(want, sizeof want, "%s: a warp tile of 256x256", fams[i]);
        r = sh("%s", cmd);
        if (r.rc != 2 || !strstr(r.err, want) || strstr(r.err, "gemm:"))
            fail_msg("'%s': exit %d, stderr:\n%s(want 2 and '%s', no 'gemm:')", cmd, r.rc, r.err, want);
        rk_test_run_free(&r);
    }
    assert_false(exists("cv"));
    assert_false(exists("cva"));
}

/* Integers have one spelling, decimal digits: knob values and integer flags
 * alike refuse a sign, blanks, hex, an exponent, an empty value and overflow,
 * naming the knob or flag and its legal values. */
static void test_integers_one_spelling(void **state) {
    (void)state;
    static const char *const bad[] = {"+64", " 64", "64 ", "-64", "0x40", "1e3", "6 4", "4294967360",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char cmd[256], want[160];
        snprintf(cmd, sizeof cmd, ROCKE " build softmax --block-size '%s' --ir-only -o k", bad[i]);
        snprintf(want, sizeof want, "softmax: knob 'block_size' must be one of 32|64|128|256|512|1024 (got '%s')",
                 bad[i]);
        expect_err(2, cmd, want, NULL);
        snprintf(cmd, sizeof cmd, ROCKE " build gemm --tile '%sx64x32' --ir-only -o k", bad[i]);
        snprintf(want, sizeof want, "gemm: knob 'tile' must be 3 values joined by 'x', each one of");
        expect_err(2, cmd, want, NULL);
        snprintf(cmd, sizeof cmd, ROCKE " aot softmax --targets gfx942 --vec '%s' -o k", bad[i]);
        expect_err(2, cmd, "softmax: knob 'vec' must be one of 1|2|4|8", NULL);
    }
    expect_err(2, ROCKE " build softmax --block-size '' -o k", "--block-size needs a value", NULL);
    expect_err(2, ROCKE " build gemm --tile 64x64x -o k", "knob 'tile' must be 3 values joined by 'x'", NULL);
    expect_err(2, ROCKE " build gemm --tile 64x64x32x -o k", "knob 'tile' must be 3 values joined by 'x'", NULL);
    /* a knob with a range rather than a list */
    expect_err(2, ROCKE " build conv --groups +2 -o k", "--groups '+2'", "not a non-negative integer", NULL);
    /* integer flags */
    static const struct { const char *v, *msg; } flags[] = {
        {"+5", "--iters '+5' is not a decimal integer (legal: 1..4294967295)"},
        {"' 5'", "--iters ' 5' is not a decimal integer"},
        {"'5 '", "--iters '5 ' is not a decimal integer"},
        {"0x10", "--iters '0x10' is not a decimal integer"},
        {"1e3", "--iters '1e3' is not a decimal integer"},
        {"-1", "--iters '-1' is out of range (legal: 1..4294967295)"},
        {"0", "--iters '0' is out of range (legal: 1..4294967295)"},
        {"4294967296", "--iters '4294967296' is out of range"},
        {"''", "--iters needs a value (--iters N), got an empty one"},
    };
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, ROCKE " run sm/manifest.json --iters %s", flags[i].v);
        expect_err(2, cmd, flags[i].msg, NULL);
    }
    expect_err(2, ROCKE " run sm/manifest.json --seed 0x10", "--seed '0x10' is not a decimal integer", NULL);
    expect_err(2, ROCKE " aot softmax --targets gfx942 -O +3 -o k", "-O '+3' is not a decimal integer (legal: 0..3)",
               NULL);
    assert_false(exists("k"));
}

/* A refusal before any work exits 2 and leaves nothing behind: no -o folder,
 * no --dump-dir folder, for build and for aot (which checks every target's
 * instance before it makes its folder). */
static void test_refusals_leave_nothing(void **state) {
    (void)state;
    static const struct { const char *cmd, *msg, *left; } rows[] = {
        {"build softmax --block-size 7 -o o1 --dump-dir d1", "knob 'block_size'", "o1"},
        {"build softmax --vec 8 --dtype f32 --target sm_90 -o o2", "'vec' must be at most 4", "o2"},
        {"build softmax --shape 4,100000 --chunks 1 --block-size 64 --rows-per-block 1 -o o3", "row capacity", "o3"},
        /* a product of extents past 2^62 wrapped to 0 in the split-K heuristic (a division by zero) */
        {"build gemm --shape 18446744073709551615,2,2 -o o4",
         "gemm: shape M=18446744073709551615,N=2,K=2: the product of the extents (M, N, K) is past 2^62", "o4"},
        {"build attention --shape 4611686018427387904,1,1,1,1,64 -o o4a", "is past 2^62", "o4a"},
        {"aot softmax --targets gfx942,sm_90 --wave 64 -o o5", "sm_90", "o5"},
        {"aot softmax --targets gfx942 --block-size 7 -o o6", "knob 'block_size'", "o6"},
        {"aot gemm --targets gfx942 --shape 18446744073709551615,2,2 -o o7", "is past 2^62", "o7"},
        {"build softmax --ir-only -o o8 --dump-dir afile", "the output path 'afile' exists and is not a folder", "o8"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, ROCKE " %s", rows[i].cmd);
        expect_err(2, cmd, rows[i].msg, NULL);
        if (exists(rows[i].left)) fail_msg("'%s' left %s behind", rows[i].cmd, rows[i].left);
    }
    assert_false(exists("d1"));
    /* -o naming a file, or a path through one: one message, exit 2 */
    static const struct { const char *cmd, *msg; } outs[] = {
        {"build softmax --ir-only -o afile", "rocke build: the output path 'afile' exists and is not a folder"},
        {"build softmax --ir-only -o afile/sub",
         "rocke build: cannot create the output folder 'afile/sub': a part of its path is a file, not a folder"},
        {"aot softmax --targets gfx942 -o afile", "rocke aot: the output path 'afile' exists and is not a folder"},
        {"build softmax --shape 4,64 -o o9 --dump-dir afile/d",
         "rocke build: cannot create the output folder 'afile/d': a part of its path is a file"},
    };
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        rk_test_run r = sh(ROCKE " %s", outs[i].cmd);
        if (r.rc != 2 || rk_test_count(r.err, "rocke ") != 1 || !strstr(r.err, outs[i].msg))
            fail_msg("'%s': exit %d, stderr:\n%s(want 2 and the one message '%s')", outs[i].cmd, r.rc, r.err,
                     outs[i].msg);
        rk_test_run_free(&r);
    }
}

/* rocke run: a refused shape or manifest is bad input (2), and --lengths and
 * --window take decimal counts only. */
static void test_run_input(void **state) {
    (void)state;
    expect_err(2, ROCKE " run sm/manifest.json --shape 4,100000", "row capacity", NULL);
    expect_err(2, ROCKE " run nothere/manifest.json", "nothere/manifest.json", NULL);
    expect_err(2, ROCKE " run sm/manifest.json --shape 18446744073709551615,2", NULL);
    expect_err(2, "head -c 100 sm/manifest.json > cut.json && " ROCKE " run cut.json", "cut.json: json: line", NULL);
    rk_test_run r = sh(ROCKE " build attention --layout varlen --shape 2,2,2,16,16,64 --target sm_90a --ir-only -o vl "
                       "&& " ROCKE " build attention --mask window --shape 1,2,2,16,16,64 --target sm_90a --ir-only "
                       "-o win");
    assert_int_equal(r.rc, 0);
    rk_test_run_free(&r);
    static const char *const lengths[] = {"+3,4", "' 3,4'", "3,4,", "3:+4,4", "0x3,4", "3,,4", "3:", "''",
                                          "99999999999999999999999,4"};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, ROCKE " run vl/manifest.json --lengths %s", lengths[i]);
        expect_err(2, cmd, i + 1 == 8 ? "--lengths needs a value" : "expected LQ[:LK] per sequence", NULL);
    }
    static const char *const windows[] = {"+3,3", "' 3,3'", "3,+3", "3,3x", "3,", "0x3,3", "3"};
    for (size_t i = 0; i < sizeof windows / sizeof *windows; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, ROCKE " run win/manifest.json --window %s", windows[i]);
        expect_err(2, cmd, "expected two integers L,R", NULL);
    }
    expect_err(0, ROCKE " run win/manifest.json --window -1,2 --verify --seed 7", NULL);
    /* decode's lengths file: counts only, each below 2^31 */
    r = sh(ROCKE " build attention --mode decode --target sm_90 --shape 3,8,2,1,50,64 --ir-only -o dec");
    assert_int_equal(r.rc, 0);
    rk_test_run_free(&r);
    static const struct { const char *text, *msg; } files[] = {
        {"1 +2 3", "entry 1 is not a count"}, {"1 -2 3", "entry 1 is not a count"},
        {"0x10 1 1", "entry 0 is not a count"}, {"1e1 1 1", "entry 0 is not a count"},
        {"1 2 99999999999999999999999", "entry 2 is past 2^31-1"}, {"1 2 3 4", "4 lengths for B = 3 sequences"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "printf '%s' > lens.txt && " ROCKE " run dec/manifest.json --lengths lens.txt",
                 files[i].text);
        expect_err(2, cmd, files[i].msg, NULL);
    }
    expect_err(0, "printf '1,\t2\r\n3 ' > lens.txt && " ROCKE " run dec/manifest.json --lengths lens.txt --verify",
               NULL);
    /* the other run-side values */
    expect_err(2, ROCKE " run sm/manifest.json --device 99", "unknown device '99' (legal: auto, cuda", NULL);
    expect_err(2, ROCKE " build rmsnorm --shape 4,64 --ir-only -o nm && " ROCKE " run nm/manifest.json --arg eps=inf",
               "--arg expects NAME=NUMBER, a finite number", NULL);
    expect_err(2, ROCKE " run nm/manifest.json --arg 'eps= 1e-6'", "--arg expects NAME=NUMBER", NULL);
    expect_err(2, ROCKE " aot softmax --targets gfx942,,sm_90 -o ax", "--targets 'gfx942,,sm_90': an empty target name",
               NULL);
    assert_false(exists("ax"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_lists_are_each_knobs_own), cmocka_unit_test(test_fp8_names_per_target),
        cmocka_unit_test(test_conv_refusals_name_conv),        cmocka_unit_test(test_integers_one_spelling),
        cmocka_unit_test(test_refusals_leave_nothing),         cmocka_unit_test(test_run_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
