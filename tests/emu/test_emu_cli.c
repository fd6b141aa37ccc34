/* rocke tests — `rocke exec` end to end: a kernel from IR text with buffers
 * from flags, --print output, and the errors for bad input (missing or
 * unknown arguments, wrong dtype, buffer too small, other devices). Skipped
 * when the rocke binary was not built. Layer: tests. */
#include <sys/stat.h>
#include <sys/wait.h>

#include "emu_test.h"

static char exe[1024], ir[1024];

static const char kernel_text[] =
    "ckdsl.ir v1\n"
    "kernel @saxpy {\n"
    "  params {\n"
    "    %X : ptr<f32,global>\n"
    "    %Y : ptr<f32,global>\n"
    "    %H : ptr<f16,global>\n"
    "    %a : f32\n"
    "    %n : i32\n"
    "  }\n"
    "  region @entry {\n"
    "    %1 : i32 = gpu.thread_id (  ) { axis = s:\"x\" }\n"
    "    %2 : i32 = gpu.block_id (  ) { axis = s:\"x\" }\n"
    "    %3 : i32 = gpu.block_dim (  ) { axis = s:\"x\" }\n"
    "    %4 : i32 = arith.mul ( %2, %3 )\n"
    "    %5 : i32 = arith.add ( %4, %1 )\n"
    "    %6 : i1 = arith.cmp ( %5, %n ) { pred = s:\"lt\" }\n"
    "    scf.if ( %6 )\n"
    "      region @then {\n"
    "        %7 : f32 = memref.global_load_typed ( %X, %5 ) { elem_type = s:\"f32\" }\n"
    "        %8 : f32 = memref.global_load_typed ( %Y, %5 ) { elem_type = s:\"f32\" }\n"
    "        %9 : f32 = arith.fma ( %a, %7, %8 )\n"
    "        memref.global_store_typed ( %Y, %5, %9 ) { elem_type = s:\"f32\" }\n"
    "        %10 : f16 = arith.cast_f32_to ( %9 ) { target = s:\"f16\" }\n"
    "        memref.global_store ( %H, %5, %10 )\n"
    "      }\n"
    "    cf.return (  )\n"
    "  }\n"
    "}\n";

/* Run `rocke exec ir ARGS`; returns the exit code, output in out. */
static int rocke(char *out, size_t cap, const char *args) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' exec '%s' %s 2>&1", exe, ir, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state) {
    (void)state;
    snprintf(exe, sizeof exe, "%s/rocke", ROCKE_BINARY_DIR);
    snprintf(ir, sizeof ir, "%s/emu_cli_saxpy.ir", ROCKE_BINARY_DIR);
    FILE *f = fopen(ir, "w");
    if (!f) return -1;
    fputs(kernel_text, f);
    fclose(f);
    return 0;
}

static bool have_exe(void) {
    struct stat sb;
    if (stat(exe, &sb) == 0) return true;
    printf("skipped: %s was not built\n", exe);
    return false;
}

static void t_run_and_print(void **state) {
    (void)state;
    if (!have_exe()) { skip(); return; }
    char out[8192];
    int rc = rocke(out, sizeof out, "--grid 2 --block 64 --arg X=iota:f32:100 --arg Y=iota:f32:100 --arg H=zeros:f16:100 "
                                    "--arg a=2.5 --arg n=100 --print Y:4 --print H:3");
    if (rc) printf("%s", out);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "0\n3.5\n7\n10.5\n0\n3.5\n7\n");
    /* sm_90, odd sizes, random inputs with a seed are reproducible */
    char out2[8192];
    const char *args = "--target sm_90 --grid 3 --block 33 --arg X=rand:f32:99:5 --arg Y=zeros:f32:99 --arg H=zeros:f16:99 "
                       "--arg a=1 --arg n=99 --print Y";
    assert_int_equal(rocke(out, sizeof out, args), 0);
    assert_int_equal(rocke(out2, sizeof out2, args), 0);
    assert_string_equal(out, out2);
    int lines = 0;
    for (char *c = out; *c; c++) lines += *c == '\n';
    assert_int_equal(lines, 99);
}

static void t_errors(void **state) {
    (void)state;
    if (!have_exe()) { skip(); return; }
    char out[8192];
    static const struct { const char *args; int rc; const char *frag; } cases[] = {
        {"--grid 1 --block 64 --arg X=iota:f32:64 --arg Y=zeros:f32:64 --arg a=1 --arg n=64", 2, "missing --arg H=..."},
        {"--grid 1 --block 64 --arg X=iota:f32:64 --arg Y=zeros:f32:64 --arg H=zeros:f16:64 --arg a=1 --arg n=64 --arg Z=3",
         2, "no such parameter (parameters: X, Y, H, a, n)"},
        {"--grid 1 --block 64 --arg X=iota:f16:64 --arg Y=zeros:f32:64 --arg H=zeros:f16:64 --arg a=1 --arg n=64", 2,
         "dtype f16 does not match the parameter's type ptr<f32,global>"},
        {"--grid 1 --block 64 --arg X=iota:q8:64 --arg Y=zeros:f32:64 --arg H=zeros:f16:64 --arg a=1 --arg n=64", 2,
         "unknown dtype 'q8' (legal: i8"},
        {"--grid 1 --block 64 --arg X=5 --arg Y=zeros:f32:64 --arg H=zeros:f16:64 --arg a=1 --arg n=64", 2,
         "give zeros:DTYPE:N"},
        {"--grid 1 --block 64 --arg X=iota:f32:64 --arg Y=zeros:f32:64 --arg H=zeros:f16:64 --arg a=x --arg n=64", 2,
         "parameter %a is f32; give a number"},
        {"--grid 1 --block 64 --arg X=iota:f32:64 --arg Y=zeros:f32:60 --arg H=zeros:f16:64 --arg a=1 --arg n=64", 1,
         "out-of-bounds global read of 4 bytes"},
        {"--grid 1 --block 64 --arg X=iota:f32:64 --arg Y=zeros:f32:64 --arg H=zeros:f16:64 --arg a=1 --arg n=64 "
         "--device hip", 2, "exec runs kernels on the emulator only"},
        {"--grid 1 --arg X=iota:f32:64", 2, "--grid and --block are required"},
        {"--grid 1 --block 64 --target gfx1234", 2, "unknown target 'gfx1234'"},
        {"--grid 1 --block 64 --arg X=iota:f32:64 --arg Y=zeros:f32:64 --arg H=zeros:f16:64 --arg a=1 --arg n=64 "
         "--print Q", 2, "--print Q: no pointer parameter"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = rocke(out, sizeof out, cases[i].args);
        if (rc != cases[i].rc || !strstr(out, cases[i].frag)) printf("case %zu: rc %d: %s", i, rc, out);
        assert_int_equal(rc, cases[i].rc);
        assert_non_null(strstr(out, cases[i].frag));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_run_and_print),
        cmocka_unit_test(t_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
