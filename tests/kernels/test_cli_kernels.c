/* rocke tests — `rocke build` and `rocke run` end to end through the built
 * binary: a build + verified emulator run, and a bad-input table (unknown
 * family, knob, dtype, op, target; bad shapes; a tampered binary; a manifest
 * whose spec and name disagree or whose target is unknown), each with the
 * expected exit code and message fragment; and a table of manifests edited
 * to contradict themselves (one field each), every one refused. */
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

static void test_build_and_run(void **state) {
    (void)state;
    int rc = cli_sh(ROCKE " build layernorm --dtype bf16 --residual true --target sm_90 --shape 5,1001 --ir-only -o ln");
    if (rc) fail_msg("build: %s", cli_out);
    rc = cli_sh(ROCKE " run ln/manifest.json --verify --seed 7");
    if (rc) fail_msg("run: %s", cli_out);
    assert_non_null(strstr(cli_out, "verify max_abs_diff="));
    assert_non_null(strstr(cli_out, "bad=0/10010"));
    assert_non_null(strstr(cli_out, "Perf: "));
    assert_non_null(strstr(cli_out, "PerfJSON: {\"ms\": "));
    rc = cli_sh(ROCKE " run ln/manifest.json --verify --shape 3,77 --seed 8");
    if (rc) fail_msg("run --shape: %s", cli_out);
    assert_non_null(strstr(cli_out, "bad=0/462"));
    /* named: N changes, M stays the manifest's 5; a given eps reaches kernel and reference */
    rc = cli_sh(ROCKE " run ln/manifest.json --verify --shape N=33 --arg eps=0.25 --seed 9");
    if (rc) fail_msg("run --shape N=33: %s", cli_out);
    assert_non_null(strstr(cli_out, "shape M=5,N=33"));
    assert_non_null(strstr(cli_out, "bad=0/330"));
    assert_non_null(strstr(cli_out, "\"shape\": [5,33]"));
    rc = cli_sh(ROCKE " build elementwise --op silu --dtype f16 --target gfx942 --shape 999 --ir-only -o ew");
    if (rc) fail_msg("build: %s", cli_out);
    rc = cli_sh(ROCKE " run ew/manifest.json --verify");
    if (rc) fail_msg("run: %s", cli_out);
    assert_non_null(strstr(cli_out, "bad=0/999"));
    assert_int_equal(cli_sh(ROCKE " build --list"), 0);
    assert_non_null(strstr(cli_out, "gelu_tanh"));
    assert_non_null(strstr(cli_out, "--rows_per_block"));
}

/* Built without --shape, a row family writes its shape variants behind one
 * manifest; `rocke run` takes the variant serving each shape (its kernel
 * name in the output) and verifies it. */
static void test_shape_variants(void **state) {
    (void)state;
    int rc = cli_sh(ROCKE " build rmsnorm --dtype f16 --target gfx942 --ir-only -o var");
    if (rc) fail_msg("build: %s", cli_out);
    /* a cached variant per row-length class: t<threads per row>c<chunks>, sp<...> for the span's */
    static const char *const files[] = {"manifest.json", "manifest.split.json", "manifest.t1c1.json",
                                        "manifest.t64c4.json", "manifest.t256c4.json", "manifest.sp16c8.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (cli_sh("test -r var/%s", files[i])) fail_msg("no %s", files[i]);
    /* shape -> a fragment of the kernel that must run: the knob tags say which variant */
    static const struct { const char *shape, *want, *avoid, *bad; } runs[] = {
        {"6,16", "_k1_", "_k0_", "bad=0/96"},            /* short: one vector per lane */
        {"6,17", "_sgspan", "_k0_", "bad=0/102"},        /* short, odd: a span class (N%8) */
        {"3,704", "_sl1 on", "_sgspan", "bad=0/2112"},   /* medium, a multiple of vec: cached rows */
        {"5,701", "_sgspan", "_k0_", "bad=0/3505"},      /* medium, odd: RMSNorm's span to 767 */
        {"3,1001", "_sl1 on", "_sgspan", "bad=0/3003"},  /* odd past 767: direct rows */
        {"1,20000", "_k0_", "_sl1 on", "bad=0/20000"},   /* few long rows: split over blocks */
        {"40,13000", "_k4_", "_k0_", "bad=0/520000"},    /* cached, as a build for the shape would */
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        rc = cli_sh(ROCKE " run var/manifest.json --verify --shape %s --seed 3", runs[i].shape);
        if (rc) fail_msg("run %s: %s", runs[i].shape, cli_out);
        if (!strstr(cli_out, runs[i].want) || strstr(cli_out, runs[i].avoid) || !strstr(cli_out, runs[i].bad))
            fail_msg("run %s: wanted kernel *%s* (not *%s*) and %s: %s", runs[i].shape, runs[i].want,
                     runs[i].avoid, runs[i].bad, cli_out);
    }
}

/* A kernel built without a shape takes any run-time row length: odd and
 * prime rows, and rows past every cached class's capacity (f32 on sm_90a:
 * 1024 threads x 8 chunks x 4 = 32 768 elements; the reduction caches more
 * chunks) which the looped top-level kernel (chunks=0) serves. --verify
 * compares with the family's host reference in double. */
static void test_shapeless_any_length(void **state) {
    (void)state;
    static const struct { const char *spec, *dir, *longest; } fams[] = {
        {"softmax", "sxa", "_k0_"}, {"layernorm", "lxa", "_k0_"}, {"rmsnorm", "rxa", "_k0_"},
        {"reduce --op sum", "uxa", "_r1_"},
    };
    /* rows, expected bad=0/<outputs>: shapes 1, 7, 2047, 5003 and > capacity
     * (133 rows: more than sm_90a's 132 units, so not the split variant) */
    static const struct { const char *shape; unsigned long outs; } rows[] = {
        {"3,1", 3}, {"3,7", 21}, {"2,2047", 4094}, {"2,5003", 10006}, {"133,33001", 133ul * 33001},
    };
    for (size_t f = 0; f < sizeof fams / sizeof *fams; f++) {
        int rc = cli_sh(ROCKE " build %s --dtype f32 --target sm_90a --ir-only -o %s", fams[f].spec, fams[f].dir);
        if (rc) fail_msg("build %s: %s", fams[f].spec, cli_out);
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
            rc = cli_sh(ROCKE " run %s/manifest.json --verify --shape %s --seed 11", fams[f].dir, rows[i].shape);
            char want[64];
            /* a reduction writes one value a row */
            unsigned long outs = strncmp(fams[f].spec, "reduce", 6) ? rows[i].outs
                                                                  : strtoul(rows[i].shape, NULL, 10);
            snprintf(want, sizeof want, "bad=0/%lu\n", outs);
            if (rc || !strstr(cli_out, want)) fail_msg("%s at %s: wanted %s: %s", fams[f].spec, rows[i].shape, want, cli_out);
            if (i + 1 == sizeof rows / sizeof *rows && !strstr(cli_out, fams[f].longest))
                fail_msg("%s at %s: wanted kernel *%s*: %s", fams[f].spec, rows[i].shape, fams[f].longest, cli_out);
        }
    }
}

static void test_bad_inputs(void **state) {
    (void)state;
    assert_int_equal(cli_sh(ROCKE " build softmax --shape 4,300 --ir-only -o good"), 0);
    assert_int_equal(cli_sh(ROCKE " build rmsnorm --shape 4,300 --ir-only -o norm"), 0);
    static const struct { const char *cmd; int rc; const char *frag; } rows[] = {
        {"build gemmx -o x", 2, "unknown kernel family 'gemmx' (legal: elementwise, reduce, softmax"},
        {"build softmax --bogus 1 -o x", 2, "unknown option '--bogus'; the options are: -o/--out, --target"},
        {"build softmax --dtype f64 -o x", 2, "f16|bf16|f32"},
        {"build elementwise --op tanh -o x", 2, "add|sub|mul|div|max|min|copy"},
        {"build softmax --target gfx1 -o x", 2, "unknown target 'gfx1'"},
        {"build softmax --shape 0,5 -o x", 2, "softmax: dimension M must be at least 1"},
        {"build softmax --shape M=4,K=5 -o x", 2, "unknown dimension 'K' (dimensions: M, N)"},
        {"build softmax --shape 4,5,6 -o x", 2, "2 dimensions (M, N), got 3 extents"},
        {"build softmax --shape M=4,5 -o x", 2, "mixes named and positional"},
        {"build softmax --shape M=4,M=5 -o x", 2, "dimension M given twice"},
        {"build softmax --shape -4,5 -o x", 2, "--shape expects positive integers"},
        {"build softmax --shape 4,100000 --chunks 1 --block-size 64 --rows-per-block 1 -o x", 2, "row capacity"},
        /* without --shape the refused shape is the default one, and the message says so */
        {"build softmax --chunks 3 --block-size 1024 --vec 1 --target sm_90 -o x", 2,
         "no --shape given: that is the default shape M=4096,N=4096"},
        {"build softmax --vec 8 --dtype f32 --target sm_90 -o x", 2, "'vec' must be at most 4"},
        /* more vectors a thread than the transpose tile holds: refused before any folder is made */
        {"build transpose --dtype f16 --target gfx942 --tile-m 64 --tile-n 128 --vec 1 --split true -o tx", 2,
         "33 vectors per thread, at most 32 with split=true"},
        {"build transpose --dtype f16 --target gfx942 --tile-m 64 --tile-n 128 --vec 1 --split false -o tx", 2,
         "choose block_size >= 512"},
        {"build softmax --wave 64 --target sm_90 -o x", 2, "'wave' must be 32"},
        {"build softmax", 2, "missing -o DIR"},
        {"build", 2, "expected a kernel family"},
        {"run nothere/manifest.json", 2, "nothere/manifest.json"},
        {"run good/manifest.json --shape 4,100000", 2, "row capacity"},
        {"run good/manifest.json --shape 4,x", 2, "--shape expects"},
        {"run good/manifest.json --iters 0", 2, "--iters"},
        {"run good/manifest.json --arg eps=1e-6", 2, "'eps' is not a scalar to give (given scalars: none)"},
        {"run norm/manifest.json --arg M=3", 2, "'M' is not a scalar to give: it follows from the shape "
                                              "(given scalars: eps (f32, given))"},
        {"run good/manifest.json --arg eps", 2, "--arg expects NAME=NUMBER"},
        {"run good/manifest.json --frobnicate 1", 2, "unknown option"},
        {"run", 2, "usage"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        int rc = cli_sh(ROCKE " %s", rows[i].cmd);
        if (rc != rows[i].rc || !strstr(cli_out, rows[i].frag))
            fail_msg("row %zu 'rocke %s': exit %d (want %d), output:\n%s\n(wanted '%s')", i, rows[i].cmd, rc,
                     rows[i].rc, cli_out, rows[i].frag);
    }
    if (!cli_sh("test -e tx")) fail_msg("a refused transpose build left its -o folder");
    /* variants with chunks locked end at the capacity (8192 here); longer rows are refused */
    assert_int_equal(cli_sh(ROCKE " build softmax --dtype f16 --target sm_90a --chunks 1 --ir-only -o c1"), 0);
    if (!cli_sh("grep -l 8193 c1/manifest.json")) fail_msg("a variant serves N = 8193 past the capacity");
    if (cli_sh(ROCKE " run c1/manifest.json --shape 1,4099 --verify --seed 3") || !strstr(cli_out, "bad=0/4099"))
        fail_msg("run 1,4099: %s", cli_out);
    assert_int_equal(cli_sh(ROCKE " run c1/manifest.json --shape 1,8193"), 2);
    assert_non_null(strstr(cli_out, "row capacity 8192"));
    assert_non_null(strstr(cli_out, "chunks=0"));
    /* a manifest edited out of step with its files */
    assert_int_equal(cli_sh("cp -r good bin && for f in bin/*.ir; do echo '# x' >> $f; done"), 0);
    assert_int_equal(cli_sh(ROCKE " run bin/manifest.json"), 2);
    assert_non_null(strstr(cli_out, "does not match its manifest"));
    assert_int_equal(cli_sh("cp -r good tgt && sed -i 's/\"target\": \"gfx950\"/\"target\": \"gfx1\"/' tgt/manifest.json"), 0);
    assert_int_equal(cli_sh(ROCKE " run tgt/manifest.json"), 2);
    assert_non_null(strstr(cli_out, "unknown target 'gfx1'"));
    assert_int_equal(cli_sh("cp -r good spec && sed -i 's/\"block_size\": \"[0-9]*\"/\"block_size\": \"1024\"/' "
                        "spec/manifest.json"), 0);
    assert_int_equal(cli_sh(ROCKE " run spec/manifest.json"), 2);
    assert_non_null(strstr(cli_out, "'spec' describes kernel"));
    /* default_shape with names the family does not have, or a wrong rank without names */
    assert_int_equal(cli_sh("cp -r good dims && sed -i 's/^    \"M\",$/    \"Q\",/' dims/manifest.json"), 0);
    assert_int_equal(cli_sh(ROCKE " run dims/manifest.json"), 2);
    assert_non_null(strstr(cli_out, "'default_shape': softmax: unknown dimension 'Q' (dimensions: M, N)"));
    assert_int_equal(cli_sh("cp -r good rank && sed -i -e '/default_shape_dims/,/],/d' -e 's/^    300$/    300, 2/' "
                        "rank/manifest.json"), 0);
    assert_int_equal(cli_sh(ROCKE " run rank/manifest.json"), 2);
    assert_non_null(strstr(cli_out, "'default_shape' has 3 extents but family softmax has 2 dimensions"));
    assert_int_equal(cli_sh("cp -r good sch && sed -i 's/manifest\\/v1/manifest\\/v9/' sch/manifest.json"), 0);
    assert_int_equal(cli_sh(ROCKE " run sch/manifest.json"), 2);
    assert_non_null(strstr(cli_out, "'schema'"));
}

/* Manifests `rocke build` wrote for several families and binary kinds, each
 * edited (sed) to contradict itself in one field: `rocke run` refuses each,
 * naming the field; the untouched ones (and a cubin manifest turned into a
 * PTX one) still run. */
static void test_self_contradicting_manifests(void **state) {
    (void)state;
    static const char *const builds[] = {
        "softmax --shape 4,300 --ir-only -o c_sm",
        "gemm --target sm_90 --shape 40,72,48 --ir-only -o c_gm",
        "add_rmsnorm_quant --shape 3,200 --ir-only -o c_arq",
        "elementwise --op add --target gfx942 --shape 999 -o c_ew",
        "elementwise --op mul --target sm_90 --shape 777 -o c_nv",
    };
    for (size_t i = 0; i < sizeof builds / sizeof *builds; i++)
        if (cli_sh(ROCKE " build %s", builds[i])) fail_msg("build %s: %s", builds[i], cli_out);
    /* the NVIDIA build as a PTX manifest (whichever of cubin/ptx the toolchain gave) */
    assert_int_equal(cli_sh("cp -r c_nv c_ptx && sed -i -e 's/\\.cubin\"/.ptx\"/' -e 's/\"binary_kind\": \"[a-z]*\"/"
                        "\"binary_kind\": \"ptx\"/' -e '/\"binary_hash\"/d' -e '/\"binary_bytes\"/d' "
                        "c_ptx/manifest.json"), 0);
    static const char *const good[] = {"c_sm", "c_gm", "c_arq", "c_ew", "c_nv", "c_ptx"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        if (cli_sh(ROCKE " run %s/manifest.json --verify --seed 5", good[i]) || !strstr(cli_out, " bad=0/"))
            fail_msg("untouched %s: %s", good[i], cli_out);
    static const char no_hash[] = "-e '/\"binary_hash\"/d' -e '/\"binary_bytes\"/d' -e '/\"hsaco_bytes\"/d'";
    static const struct { const char *from, *sed, *frag, *file; } rows[] = {   /* file: manifest.json if NULL */
        {"c_sm", "-e 's/^  \"kind\": \"softmax_f16\"/  \"kind\": \"softmax_bf16\"/'",
         "field 'kind' is 'softmax_bf16' but its spec implies 'softmax_f16'"},
        {"c_sm", "-e 's/^  \"op\": \"softmax\"/  \"op\": \"reduce\"/'", "field 'op' is 'reduce' but its spec implies 'softmax'"},
        {"c_sm", "-e 's/^  \"dtype\": \"f16\"/  \"dtype\": \"f32\"/'", "field 'dtype' is 'f32' but its spec implies 'f16'"},
        {"c_sm", "-e 's/\"threads_per_block\": [0-9]*/\"threads_per_block\": 7/'",
         "field 'threads_per_block' is 7 but its spec implies 64"},
        {"c_sm", "-e 's/\"name\": \"X\"/\"name\": \"Z\"/'", "field 'args_signature[0].name' is 'Z' but its spec implies 'X'"},
        {"c_sm", "-e '/\"name\": \"N\"/{n;n;n;s/}$/}, {\"name\": \"E\", \"type\": \"i32\", \"size_bytes\": 4}/}'",
         "field 'args_signature' is 5 parameters but its spec implies 4 (first extra: E)"},
        {"c_sm", "-e 's/\"binary_kind\": \"ir\"/\"binary_kind\": \"hsaco\"/'", "is not an AMDGPU code object"},
        {"c_sm", "-e 's/\"sig_has_bytes\": 0/\"sig_has_bytes\": 1/'", "field 'sig_has_bytes' is 1 but its spec implies 0"},
        {"c_sm", "-e 's/\"threads_per_block\": 64,/&\\n  \"grid_explicit\": [9, 9, 9],/'",
         "field 'grid_explicit' is [9, 9, 9] but its spec implies"},
        {"c_gm", "-e 's/\"kernel_name\": \"rk_gemm_lrc_f16/\"kernel_name\": \"rk_gemm_lrc_f32/'",
         "manifest 'spec' describes kernel rk_gemm_lrc_f16_"},
        {"c_gm", "-e 's/\"name\": \"A\"/\"name\": \"@\"/' -e 's/\"name\": \"B\"/\"name\": \"A\"/' "
                 "-e 's/\"name\": \"@\"/\"name\": \"B\"/'",
         "field 'args_signature[0].name' is 'B' but its spec implies 'A'"},
        {"c_gm", "-e '0,/ptr<f16, global>/s//ptr<f32, global>/'",
         "field 'args_signature[0].type' is 'ptr<f32, global>' but its spec implies 'ptr<f16, global>'"},
        {"c_gm", "-e '/\"name\": \"M\"/{n;s/\"i32\"/\"i64\"/;n;s/: 4/: 8/}'",
         "field 'args_signature[3].type' is 'i64' but its spec implies 'i32'"},
        {"c_gm", "-e '/default_shape_dims/,/],/d' -e '/^    48$/d' -e 's/^    72,$/    72/'",
         "'default_shape' has 2 extents but family gemm has 3 dimensions"},
        {"c_gm", "-e 's/^  \"op\": \"gemm\"/  \"op\": \"batched_gemm\"/'",
         "field 'op' is 'batched_gemm' but its spec implies 'gemm'"},
        {"c_gm", "-e 's/\"target\": \"sm_90\"/\"target\": \"gfx942\"/'", "is not valid for its target gfx942"},
        {"c_arq", "-e 's/^  \"dtype\": \"bf16\"/  \"dtype\": \"f16\"/'", "field 'dtype' is 'f16' but its spec implies 'bf16'"},
        {"c_arq", "-e 's/ptr<fp8e4m3, global>/ptr<i8, global>/'",
         "field 'args_signature[3].type' is 'ptr<i8, global>' but its spec implies 'ptr<fp8e4m3, global>'"},
        {"c_arq", "-e 's/\"kind\": \"add_rmsnorm_quant_bf16\"/\"kind\": \"add_rmsnorm_quant_f16\"/'",
         "field 'kind' is 'add_rmsnorm_quant_f16'"},
        {"c_arq", "-e 's/\"threads_per_block\": 64,/&\\n  \"block_m\": 16,/'",
         "field 'block_m' is for transpose kernels but the spec is family add_rmsnorm_quant"},
        {"c_ew", "-e 's/\"target\": \"gfx942\"/\"target\": \"gfx950\"/'",
         "is code for processor 0x4c (EF_AMDGPU_MACH) but the manifest's target gfx950 is 0x4f"},
        {"c_ew", "-e 's/\"target\": \"gfx942\"/\"target\": \"sm_90\"/'",
         "field 'binary_kind' is 'hsaco' but target sm_90 (NVIDIA) runs ptx, cubin or ir"},
        {"c_ew", "-e 's/\"elems_per_block\": [0-9]*/\"elems_per_block\": 1/'",
         "field 'elems_per_block' is 1 but its spec implies 2048"},
        {"c_ew", "-e 's/\"is_binary\": 1/\"is_binary\": 0/'", "field 'is_binary' is 0 but its spec implies 1"},
        {"c_ew", "-e 's/\\.hsaco\"/.ir\"/' %s", "is not an AMDGPU code object"},
        {"c_nv", "-e 's/\"binary_kind\": \"[a-z]*\"/\"binary_kind\": \"hsaco\"/'",
         "field 'binary_kind' is 'hsaco' but target sm_90 (NVIDIA) runs ptx, cubin or ir"},
        {"c_ptx", "-e 's/\"target\": \"sm_90\"/\"target\": \"sm_80\"/'",
         "is PTX for .target sm_90 but the manifest's target is sm_80"},
        {"c_ptx", "-e 's/\"binary_kind\": \"ptx\"/\"binary_kind\": \"cubin\"/'", "is not a cubin"},
        /* the PTX itself edited: it no longer defines the manifest's kernel */
        {"c_ptx", "-e 's/rk_elementwise_mul/rk_elementwise_nul/g'", "does not define kernel 'rk_elementwise_mul",
         "*.ptx"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char sed[512];
        snprintf(sed, sizeof sed, rows[i].sed, no_hash);
        char dir[16];
        snprintf(dir, sizeof dir, "x%zu", i);
        /* the edit must change the file, or the row would prove nothing */
        const char *file = rows[i].file ? rows[i].file : "manifest.json";
        if (cli_sh("rm -rf %s && cp -r %s %s && sed -i %s %s/%s", dir, rows[i].from, dir, sed, dir, file) ||
            !cli_sh("cmp -s %s/%s %s/%s", rows[i].from, file, dir, file))
            fail_msg("row %zu: the edit '%s' did not apply: %s", i, sed, cli_out);
        int rc = cli_sh(ROCKE " run %s/manifest.json --seed 5", dir);
        if (rc != 2 || !strstr(cli_out, rows[i].frag))   /* a manifest refused is bad input */
            fail_msg("row %zu (%s, %s): exit %d (want 2), output:\n%s\n(wanted '%s')", i, rows[i].from, sed, rc,
                     cli_out, rows[i].frag);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_build_and_run), cmocka_unit_test(test_shape_variants),
                                       cmocka_unit_test(test_shapeless_any_length),
                                       cmocka_unit_test(test_bad_inputs),
                                       cmocka_unit_test(test_self_contradicting_manifests)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
