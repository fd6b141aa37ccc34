/* rocke tests — the option parser of every sub-command through the built
 * binary: a bad-input table (one row per bad flag or value, with the exit
 * code and the message fragment expected on stderr), the spellings that must
 * keep working, help printed from each command's table, and standard output
 * on /dev/full for every printing command (issues 10 and 20). */
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

#include "support/cli_run.h"

#define ROCKE ROCKE_BINARY_DIR "/rocke"
#define VADD ROCKE_SOURCE_DIR "/tests/golden/vector_add.ir"
/* exec's arguments for vector_add (A, B, C: f32 buffers; N: i32) */
#define VADD_ARGS "--arg A=rand:f32:256 --arg B=rand:f32:256 --arg C=zeros:f32:256 --arg N=256"

static char dir[64];
static bool have_amd;   /* an AMD code object could be compiled (a toolchain is present) */
static bool have_ptx;   /* likewise for sm_90 */

static rk_test_run sh(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk_test_run r = rk_test_vshf(dir, fmt, ap);
    va_end(ap);
    return r;
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rk_cli_opts_XXXXXX");
    if (!mkdtemp(dir) || access(ROCKE, X_OK)) return -1;
    rk_test_run r = sh(ROCKE " build softmax --shape 4,300 --ir-only -o sm && " ROCKE
                       " build rmsnorm --shape 4,300 --ir-only -o norm && touch afile && mkfifo fifo");
    int rc = r.rc;
    rk_test_run_free(&r);
    r = sh("ROCKE_CACHE=0 " ROCKE " compile " VADD " --target gfx942 -o amd");
    have_amd = r.rc == 0;
    rk_test_run_free(&r);
    r = sh("ROCKE_CACHE=0 " ROCKE " compile " VADD " --target sm_90 -o nv");
    have_ptx = r.rc == 0 && strstr(r.out, ".cubin");
    rk_test_run_free(&r);
    return rc;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

typedef struct bad_row {
    const char *args;   /* after "rocke " */
    int rc;
    const char *frag;   /* expected on stderr */
} bad_row;

static const bad_row bad_rows[] = {
    /* unknown options name themselves and list the command's options, for every command */
    {"targets --frob", 2, "unknown option '--frob'; the options are: -h/--help"},
    {"targets x", 2, "unexpected argument 'x'"},
    {"ir check --frob " VADD, 2, "unknown option '--frob'; the options are: --target, -h/--help"},
    {"ir print --frob=1 " VADD, 2, "unknown option '--frob'; the options are: -h/--help"},
    {"lower " VADD " --frob", 2, "unknown option '--frob'; the options are: --target, --flavor, -o/--out, --dump-after, "
                                 "--dump-dir, --time-stages, -h/--help"},
    {"lower " VADD " --dump-after lower", 2, "--dump-after needs --dump-dir DIR"},
    {"compile " VADD " -o d --dump-dir dd --dump-after lowr", 2, "--dump-after: unknown stage 'lowr' (legal: parse, "},
    {"aot softmax --targets sm_90a,gfx2 -o d", 2, "--targets: unknown target 'gfx2' (legal: "},
    {"compile " VADD " -o d --frob", 2, "unknown option '--frob'; the options are: -o/--out, --target, --toolchain"},
    {"analyze x.hsaco --frob", 2, "unknown option '--frob'; the options are: --target, --wg, --json, --isa"},
    {"gpu-check --frob", 2, "unknown option '--frob'; the options are: --device, --only, --seed"},
    {"build softmax -o d --frob 1", 2, "unknown option '--frob'; the options are: -o/--out, --target, --shape"},
    {"build softmax -o d --frob 1", 2, "--block-size, --vec"},
    {"run sm/manifest.json --frob", 2, "unknown option '--frob'; the options are: --shape, --arg, --verify"},
    {"exec " VADD " --frob", 2, "unknown option '--frob'; the options are: --grid, --block, --target, --arg"},
    /* a missing value names the option */
    {"ir check " VADD " --target", 2, "--target needs a value (--target T)"},
    {"lower " VADD " -o", 2, "-o needs a value (-o OUT.ll)"},
    {"lower " VADD " --out=", 2, "--out needs a value (--out OUT.ll), got an empty one"},
    {"run sm/manifest.json --iters", 2, "--iters needs a value (--iters N)"},
    {"run sm/manifest.json --seed --verify", 2, "--seed needs a value (--seed S)"},
    {"build softmax -o d --block_size", 2, "--block_size needs a value"},
    {"exec " VADD " --grid 1 --block 64 --print", 2, "--print needs a value (--print NAME[:N])"},
    {"gpu-check --emit", 2, "--emit needs a value (--emit DIR)"},
    /* numbers are checked in their full width */
    {"run sm/manifest.json --iters 4294967296", 2, "--iters '4294967296' is out of range (legal: 1..4294967295)"},
    {"run sm/manifest.json --iters 0", 2, "--iters '0' is out of range (legal: 1..4294967295)"},
    {"run sm/manifest.json --warmup -1", 2, "--warmup '-1' is out of range (legal: 0..4294967295)"},
    {"run sm/manifest.json --seed 18446744073709551616", 2, "--seed '18446744073709551616' is out of range"},
    {"run sm/manifest.json --seed 1e3", 2, "--seed '1e3' is not a decimal integer (legal: 0..18446744073709551615)"},
    {"gpu-check --iters 4294967296", 2, "--iters '4294967296' is out of range (legal: 0..4294967295)"},
    {"gpu-check --warmup 12x", 2, "--warmup '12x' is not a decimal integer"},
    {"compile " VADD " -o d -O 4", 2, "-O '4' is out of range (legal: 0..3)"},
    {"compile " VADD " -o d -O3x", 2, "-O '3x' is not a decimal integer (legal: 0..3)"},
    {"analyze x.hsaco --wg 0", 2, "--wg '0' is out of range (legal: 1..1024)"},
    {"analyze x.hsaco --wg 4294967297", 2, "--wg '4294967297' is out of range (legal: 1..1024)"},
    {"exec " VADD " --grid 1 --block 64 --threads 4294967296", 2, "--threads '4294967296' is out of range"},
    {"exec " VADD " --grid 1 --block 64 --dynamic-lds -1", 2, "--dynamic-lds '-1' is out of range"},
    /* an option that may not repeat */
    {"run sm/manifest.json --iters 5 --iters 6", 2, "--iters given twice"},
    {"run sm/manifest.json --verify --verify", 2, "--verify given twice"},
    {"lower " VADD " -o a.ll --out b.ll", 2, "--out given twice"},
    {"build softmax -o d --dtype f16 --dtype bf16", 2, "--dtype given twice"},
    {"build softmax -o d --block-size 64 --block_size 128", 2, "--block_size given twice"},
    {"ir check " VADD " --target gfx942 --target=gfx950", 2, "--target given twice"},
    /* flags take no value */
    {"run sm/manifest.json --verify=yes", 2, "--verify takes no value, got '--verify=yes'"},
    {"compile " VADD " -o d --no-cache=1", 2, "--no-cache takes no value"},
    /* --target: the legal targets, the command's default marked */
    {"lower " VADD " --target gfx1", 2, "unknown target 'gfx1' (legal: gfx90a, gfx942, gfx950 (default), sm_80, sm_90, sm_90a)"},
    {"gpu-check --emit x --target nope", 2, "unknown target 'nope' (legal: gfx90a, gfx942, gfx950, sm_80, sm_90, sm_90a (default))"},
    {"build softmax -o d --target nope", 2, "gfx950 (default), sm_80, sm_90, sm_90a, device)"},
    {"analyze x.hsaco --target sm_90", 2, "sm_90 is not an AMD target"},
    {"gpu-check --target sm_90", 2, "--target goes with --emit DIR"},
    /* values and positionals */
    {"exec " VADD " --grid 1,1,1,1 --block 64", 2, "got '1,1,1,1'"},
    {"exec " VADD " --grid 2,0 --block 64", 2, "--grid expects X[,Y[,Z]]: 1 to 3 integers from 1 to 2147483647, got '2,0'"},
    {"exec " VADD " --block 64", 2, "missing --grid X[,Y[,Z]]: --grid and --block are required"},
    {"exec " VADD " --grid 4 --block 64 " VADD_ARGS " --arg N=1", 2, "--arg N given twice ('N=256' and 'N=1')"},
    {"exec " VADD " --grid 4 --block 64 --arg A=rand:f32:1099511627776 --arg B=rand:f32:256 --arg C=zeros:f32:256 "
     "--arg N=256", 2, "1099511627776 f32 elements exceed the buffer size limit of 16 GiB (4294967296 elements)"},
    {"exec " VADD " --grid 4 --block 64 --device hip", 2, "exec runs kernels on the emulator only"},
    {"exec", 2, "missing FILE.ir"},
    {"lower a.ir b.ir", 2, "unexpected argument 'b.ir' (one FILE.ir only; got 'a.ir' first)"},
    {"build softmax -o d --shape -1,256", 2, "--shape '-1,256': -1 is not a positive integer"},
    {"run sm/manifest.json --shape -1,256", 2, "--shape '-1,256': -1 is not a positive integer"},
    {"run sm/manifest.json --shape 4,18446744073709551616", 2, "18446744073709551616 is too large"},
    {"run sm/manifest.json --shape =4", 2, "an extent without its dimension name"},
    {"run norm/manifest.json --arg eps=0.5 --arg eps=0.25", 2, "--arg eps given twice ('eps=0.5' and 'eps=0.25')"},
    {"run", 2, "missing DIR/manifest.json"},
    {"build", 2, "expected a kernel family first (legal: elementwise, reduce, softmax"},
    {"build --target gfx942 softmax -o d", 2, "the family 'softmax' must come first"},
    {"build softmax", 2, "missing -o DIR: -o is required"},
    {"compile " VADD, 2, "missing -o DIR: -o is required"},
    {"compile " VADD " -o d --toolchain=x", 2, "unknown toolchain 'x'"},
    {"compile " VADD " -o d --dump=foo", 2, "unknown dump stage 'foo' (legal: llir, isa, ptx)"},
    {"compile " VADD " -o afile", 1, "the output path 'afile' exists and is not a folder"},
    {"gpu-check --emit afile", 1, "the output path 'afile' exists and is not a folder"},
    {"gpu-check --emit fifo", 1, "the output path 'fifo' exists and is not a folder"},
    /* --only '' and --only ,,, both fail, naming the problem */
    {"gpu-check --only ''", 2, "--only needs a value (--only NAME,...), got an empty one"},
    {"gpu-check --only ,,,", 2, "--only ',,,' has an empty check name"},
    {"gpu-check --only vector_add,,mma_tile", 2, "has an empty check name"},
    {"gpu-check --only vector_add,nope", 2, "--only: unknown check 'nope' (the checks: vector_add,"},
    {"ir frob x", 2, "unknown command 'frob' (legal: check, print, canon"},
};

static void test_bad_inputs(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof bad_rows / sizeof *bad_rows; i++) {
        const bad_row *b = &bad_rows[i];
        rk_test_run r = sh(ROCKE " %s", b->args);
        /* one message, on stderr, never the old "missing value after" */
        bool ok = r.rc == b->rc && strstr(r.err, b->frag) && !r.out[0] && !strstr(r.err, "missing value after");
        if (!ok)
            fail_msg("row %zu 'rocke %s': exit %d (want %d)\nstdout: %s\nstderr: %s\n(wanted '%s' on stderr)", i,
                     b->args, r.rc, b->rc, r.out, r.err, b->frag);
        rk_test_run_free(&r);
    }
}

/* Spellings that must keep working give what the canonical spelling gives. */
static void test_spellings(void **state) {
    (void)state;
    static const char *const same[][2] = {
        {"lower " VADD " --target gfx942", "lower " VADD " --target=gfx942"},
        {"lower " VADD " --target gfx942 -o a.ll && cat a.ll", "lower " VADD " --target gfx942 --out=b.ll && cat b.ll"},
        {"lower " VADD " --target gfx942 -oc.ll && cat c.ll", "lower --target gfx942 -- " VADD},
        {"build softmax --block-size 128 --ir-only -o k1 && cat k1/manifest.json | grep -v '\"build\"\\|\"total\"'",
         "build softmax --block_size=128 --ir-only --out k1 && cat k1/manifest.json | grep -v '\"build\"\\|\"total\"'"},
        {"exec " VADD " --grid 4 --block 64 " VADD_ARGS " --print C:3",
         "exec " VADD " --grid=4 --block=64 " VADD_ARGS " --print=C:3"},
        {"ir check --target gfx942 " VADD " && echo ok", "ir check " VADD " --target=gfx942 && echo ok"},
        {"run sm/manifest.json --seed 016 --verify --device emu | head -2",
         "run sm/manifest.json --seed 16 --verify --device emu | head -2"},
    };
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        rk_test_run a = sh(ROCKE " %s", same[i][0]), b = sh(ROCKE " %s", same[i][1]);
        if (a.rc != 0 || b.rc != 0 || !a.out[0] || strcmp(a.out, b.out))
            fail_msg("'%s' (exit %d) and '%s' (exit %d) differ:\n%s%s---\n%s%s", same[i][0], a.rc, same[i][1], b.rc,
                     a.out, a.err, b.out, b.err);
        rk_test_run_free(&a);
        rk_test_run_free(&b);
    }
    /* the values took effect */
    rk_test_run r = sh(ROCKE " exec " VADD " --grid 4 --block 64 --arg A=iota:f32:256 --arg B=iota:f32:256 "
                       "--arg C=zeros:f32:256 --arg N=256 --print=C:4");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "0\n2\n4\n6\n");
    rk_test_run_free(&r);
    r = sh("grep -c '\"block_size\": \"128\"' k1/manifest.json");
    assert_string_equal(r.out, "1\n");
    rk_test_run_free(&r);
}

/* Each command's help: stdout, exit 0, and every option that the
 * unknown-option message lists is described. */
static void test_help(void **state) {
    (void)state;
    static const struct { const char *cmd, *args, *must; } cmds[] = {
        {"targets", "", "usage: rocke targets\n"},
        {"ir check", VADD, "usage: rocke ir check FILE [--target T]\n"},
        {"ir print", VADD, "usage: rocke ir print FILE\n"},
        {"lower", VADD, "usage: rocke lower FILE.ir [--target T] [--flavor F] [-o OUT.ll] [--dump-after STAGES]\n"},
        {"aot", "x.ir --targets gfx942 -o d", "usage: rocke aot FAMILY|FILE.ir --targets T,T,... -o DIR"},
        {"compile", VADD " -o d", "  -O, --opt-level N       optimization level\n"},
        {"analyze", "x.hsaco", "  --wg N                  workgroup size"},
        {"gpu-check", "", "(legal: gfx90a, gfx942, gfx950, sm_80, sm_90, sm_90a (default))"},
        {"build", "", "usage: rocke build FAMILY -o DIR [--target T]"},
        {"build softmax", "-o d", "  --block-size VALUE      threads per block (heuristic)\n"},
        {"run", "sm/manifest.json", "  --iters N               timed launches"},
        {"exec", VADD, "usage: rocke exec FILE.ir --grid X[,Y[,Z]] --block X[,Y[,Z]]"},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        rk_test_run h = sh(ROCKE " %s --help", cmds[i].cmd), s = sh(ROCKE " %s -h", cmds[i].cmd);
        if (h.rc != 0 || h.err[0] || strncmp(h.out, "usage: rocke ", 13) || !strstr(h.out, cmds[i].must) ||
            strcmp(h.out, s.out))
            fail_msg("rocke %s --help: exit %d\n%s%s(wanted '%s')", cmds[i].cmd, h.rc, h.out, h.err, cmds[i].must);
        assert_non_null(strstr(h.out, "  -h, --help"));
        rk_test_run u = sh(ROCKE " %s %s --frob", cmds[i].cmd, cmds[i].args);
        const char *list = strstr(u.err, "the options are: ");
        if (u.rc != 2 || !list) fail_msg("rocke %s --frob: %d %s", cmds[i].cmd, u.rc, u.err);
        char names[2048];
        const char *end = strstr(list, " (see ");
        snprintf(names, sizeof names, "%.*s", end ? (int)(end - list - 17) : 0, list + 17);
        for (char *tok = strtok(names, ", "); tok; tok = strtok(NULL, ", ")) {
            char *slash = strchr(tok, '/');   /* "-o/--out": the help row reads "-o, --out" */
            if (slash) *slash = '\0';
            char row[80];
            snprintf(row, sizeof row, "  %s", tok);
            if (!strstr(h.out, row)) fail_msg("rocke %s --help does not describe %s:\n%s", cmds[i].cmd, tok, h.out);
        }
        rk_test_run_free(&h);
        rk_test_run_free(&s);
        rk_test_run_free(&u);
    }
}

/* Standard output on /dev/full: exit 1 and one message on stderr, whatever
 * the command printed. */
static void test_stdout_full(void **state) {
    (void)state;
    const char *cmds[64];
    unsigned n = 0;
    static const char *const always[] = {
        "--help", "--version", "targets", "targets --help", "ir canon " VADD, "ir print " VADD, "ir check --help",
        "lower " VADD, "lower --help", "compile --help", "analyze --help", "gpu-check --list", "gpu-check --help",
        "build --list", "build --help", "build softmax --shape 4,300 --ir-only -o full", "run --help",
        "run sm/manifest.json --device emu --verify", "exec --help",
        "exec " VADD " --grid 4 --block 64 " VADD_ARGS " --print C",
    };
    for (unsigned i = 0; i < sizeof always / sizeof *always; i++) cmds[n++] = always[i];
    if (have_amd) {
        cmds[n++] = "analyze amd/vector_add.hsaco";
        cmds[n++] = "analyze amd/vector_add.hsaco --json";
        cmds[n++] = "analyze amd/vector_add.hsaco --listing --isa";
        cmds[n++] = "compile " VADD " --target gfx942 -o amd2";
    }
    if (have_ptx) cmds[n++] = "gpu-check --emit em --only vector_add";
    for (unsigned i = 0; i < n; i++) {
        rk_test_run ok = sh(ROCKE " %s", cmds[i]);
        rk_test_run r = sh(ROCKE " %s >/dev/full", cmds[i]);
        bool good = ok.rc == 0 && ok.out[0] && r.rc == 1 &&
                    rk_test_count(r.err, "cannot write standard output") == 1;
        if (!good)
            fail_msg("rocke %s: exit %d (stdout fine: %d, %zu bytes) on /dev/full, stderr:\n%s", cmds[i], r.rc, ok.rc,
                     strlen(ok.out), r.err);
        rk_test_run_free(&ok);
        rk_test_run_free(&r);
    }
    if (!have_amd) fprintf(stderr, "note: no AMD toolchain here: analyze/compile on /dev/full not run\n");
}

/* Output files: a FIFO is written through (never replaced), a device error
 * names the file, and gpu-check --emit keeps its errors on stderr. */
static void test_output_files(void **state) {
    (void)state;
    /* fd 3 holds the FIFO open for reading, so the writer finds a reader; head
     * reads exactly what standard output got */
    rk_test_run r = sh(ROCKE " lower " VADD " --target gfx942 > ref && exec 3<>fifo && " ROCKE " lower " VADD
                       " --target gfx942 -o fifo && head -c $(wc -c < ref) <&3 > got && exec 3>&- && test -p fifo && "
                       "cmp got ref && grep -c 'define amdgpu_kernel' got");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "1\n");
    rk_test_run_free(&r);
    r = sh(ROCKE " lower " VADD " -o /dev/full");
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, "/dev/full"));
    rk_test_run_free(&r);
    if (!have_ptx) return;
    /* a ptxas that exits 0 without writing a cubin is named as such */
    r = sh("ROCKE_PTXAS=/bin/true " ROCKE " compile " VADD " --target sm_90 --no-cache -o p");
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, "ptxas ('/bin/true') exited 0 but produced no cubin"));
    rk_test_run_free(&r);
    r = sh("ROCKE_PTXAS=/bin/true ROCKE_CACHE=0 " ROCKE " gpu-check --emit em2 --only vector_add,mma_tile");
    assert_int_equal(r.rc, 1);
    assert_null(strstr(r.out, "produced no cubin"));
    assert_int_equal(rk_test_count(r.err, "produced no cubin"), 2);
    assert_non_null(strstr(r.err, "rocke gpu-check: vector_add: compiling: "));
    rk_test_run_free(&r);
    /* a cache folder longer than a path may be only costs the caching */
    char cmd[6000] = "ROCKE_CACHE_DIR=/tmp/";
    size_t off = strlen(cmd);
    memset(cmd + off, 'c', 5000);
    snprintf(cmd + off + 5000, sizeof cmd - off - 5000, " %s compile %s --target sm_90 -o long", ROCKE, VADD);
    r = rk_test_sh(dir, cmd);
    if (r.rc != 0 || !strstr(r.err, "warning: the cache folder") || !strstr(r.err, "compiling without the cache"))
        fail_msg("long ROCKE_CACHE_DIR: exit %d\n%s", r.rc, r.err);
    rk_test_run_free(&r);
    r = sh("test -s long/vector_add.cubin && echo ok");
    assert_string_equal(r.out, "ok\n");
    rk_test_run_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_stdout_full),
        cmocka_unit_test(test_output_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
