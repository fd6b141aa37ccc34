/* rocke tests — `rocke aot`: the generated NAME.h/NAME.c compile with
 * -Wall -Wextra -Werror as C17 with and without the emulator path; the
 * example app runs the embedded IR on the emulator and checks a softmax
 * against double host math; without a GPU or an emulator, and on a (fake)
 * GPU the file holds no object for, the launcher fails with its code and a
 * message naming the device and the targets it has; the output is the same
 * bytes every time; a .ir kernel gets a grid/block launcher (run on the
 * emulator, checked element by element); bad flags name the legal choices. */
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
#define FAKES ROCKE_BINARY_DIR "/fakes"
/* the sanitizer build's librocke needs the sanitizer runtime in the app too */
#if defined(__SANITIZE_ADDRESS__)
#define APP_SAN " -fsanitize=address,undefined"
#else
#define APP_SAN ""
#endif
#define APP_CC "cc -std=c17 -O1 -Wall -Wextra -Werror" APP_SAN
#define WITH_ROCKE " -I" ROCKE_SOURCE_DIR "/include -L" ROCKE_BINARY_DIR " -lrocke -Wl,-rpath," ROCKE_BINARY_DIR
/* no real driver is found, whatever the machine has */
#define NO_GPU "ROCKE_CUDA_LIB=/nonexistent/libcuda.so ROCKE_HIP_LIB=/nonexistent/libamdhip64.so "

static char dir[256];

static int setup(void **state) {
    (void)state;
    /* the family kernel for two vendors, the compile cache inside the test folder */
    return rk_test_make_dir(dir, sizeof dir, "rocke-aot",
                            "ROCKE_CACHE_DIR=cache " ROCKE " aot softmax --dtype f32 --targets sm_90a,gfx942 "
                            "-o gen --name aot_softmax");
}

static int teardown(void **state) {
    (void)state;
    return rk_test_remove_dir(dir);
}

static void test_emulator_path(void **state) {
    (void)state;
    rk_test_expect(rk_test_shf(dir, APP_CC " -DAOT_SOFTMAX_WITH_EMULATOR -Igen -o app_emu " ROCKE_SOURCE_DIR
                                           "/examples/aot_softmax.c "
                                           "gen/aot_softmax.c" WITH_ROCKE " -ldl -lm"),
                   0, NULL, NULL);
    rk_test_run r = rk_test_shf(dir, NO_GPU "./app_emu");
    if (r.rc || !strstr(r.out, "running on emu sm_90a (ir)") || !strstr(r.out, "37 x 1000") || !strstr(r.out, ": ok\n"))
        fail_msg("exit %d\nstdout: %s\nstderr: %s", r.rc, r.out, r.err);
    rk_test_run_free(&r);
    /* ROCKE_DEVICE=emu picks the emulator even where a driver loads */
    rk_test_expect(rk_test_shf(dir, "ROCKE_DEVICE=emu ROCKE_CUDA_LIB=" FAKES "/libfake_cuda.so ./app_emu --load-only"),
                   0, "running on emu sm_90a", NULL);
}

static void test_no_device_and_no_object(void **state) {
    (void)state;
    /* no librocke: the file needs only libc and libdl */
    rk_test_expect(
        rk_test_shf(dir, APP_CC " -Igen -o app " ROCKE_SOURCE_DIR "/examples/aot_softmax.c gen/aot_softmax.c -ldl -lm"),
        0, NULL, NULL);
    rk_test_expect(rk_test_shf(dir, NO_GPU "./app"), 1, NULL, "no GPU: cannot open /nonexistent/libcuda.so");
    rk_test_expect(rk_test_shf(dir, NO_GPU "./app"), 1, NULL, "build with -DAOT_SOFTMAX_WITH_EMULATOR");
    rk_test_expect(rk_test_shf(dir, NO_GPU "ROCKE_DEVICE=emu ./app"), 1, NULL, "ROCKE_DEVICE=emu");
    /* a CUDA device of compute capability 8.0: nothing in the file runs there */
    rk_test_expect(rk_test_shf(dir, "ROCKE_CUDA_LIB=" FAKES "/libfake_cuda.so FAKE_CUDA_CC=80 ./app"), 2, NULL,
                   "no code object for device 'sm_80': this file holds sm_90a, gfx942");
    /* 9.0 takes the sm_90a cubin, 10.0 JITs no sm_90a PTX (arch-specific) */
    rk_test_expect(rk_test_shf(dir, "ROCKE_CUDA_LIB=" FAKES "/libfake_cuda.so FAKE_CUDA_CC=90 ./app --load-only"), 0,
                   "running on cuda sm_90 (sm_90a cubin)", NULL);
    rk_test_expect(rk_test_shf(dir, "ROCKE_CUDA_LIB=" FAKES "/libfake_cuda.so FAKE_CUDA_CC=100 ./app"), 2, NULL,
                   "device 'sm_100'");
    /* HIP: the gfx name before the feature suffix picks the HSACO */
    rk_test_expect(rk_test_shf(dir, NO_GPU "ROCKE_HIP_LIB=" FAKES "/libfake_hip.so FAKE_HIP_ARCH=gfx90a:xnack- ./app"),
                   2, NULL, "no code object for device 'gfx90a:xnack-'");
}

static void test_deterministic(void **state) {
    (void)state;
    rk_test_expect(rk_test_shf(dir, "ROCKE_CACHE=0 " ROCKE
                                    " aot softmax --dtype f32 --targets sm_90a,gfx942 -o again --name aot_softmax"),
                   0, "sm_90a cubin+ptx, gfx942 hsaco", NULL);
    rk_test_expect(
        rk_test_shf(dir, "cmp gen/aot_softmax.c again/aot_softmax.c && cmp gen/aot_softmax.h again/aot_softmax.h"), 0,
        NULL, NULL);
}

/* A .ir kernel: elementwise add built --ir-only, launched with a given grid and block. */
static const char ir_driver[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include \"ew_add.h\"\n"
    "int main(void) {\n"
    "    enum { N = 1999 };\n    static float a[N], b[N], c[N];\n    srand(7);\n"
    "    for (int i = 0; i < N; i++) { a[i] = (float)rand() / RAND_MAX; b[i] = (float)rand() / RAND_MAX - 2; }\n"
    "    ew_add_stream *s;\n    ew_add_devptr da, db, dc;\n"
    "    const uint32_t grid[3] = {3, 1, 1}, block[3] = {128, 1, 1};\n"
    "    if (ew_add_load(&s, NULL) || ew_add_alloc(s, sizeof a, &da) || ew_add_alloc(s, sizeof b, &db) ||\n"
    "        ew_add_alloc(s, sizeof c, &dc) || ew_add_copy_in(s, da, a, sizeof a) ||\n"
    "        ew_add_copy_in(s, db, b, sizeof b) || ew_add_launch(s, da, db, dc, N, grid, block) ||\n"
    "        ew_add_sync(s) || ew_add_copy_out(s, c, dc, sizeof c)) {\n"
    "        fprintf(stderr, \"%s\\n\", ew_add_error());\n        return 3;\n    }\n"
    "    int bad = 0;\n"
    "    for (int i = 0; i < N; i++) bad += c[i] != a[i] + b[i];\n"
    "    ew_add_free(s, da); ew_add_free(s, db); ew_add_free(s, dc); ew_add_unload(s);\n"
    "    printf(\"bad %d of %d\\n\", bad, N);\n    return bad != 0;\n}\n";

static void test_ir_file(void **state) {
    (void)state;
    rk_test_expect(rk_test_shf(dir, ROCKE " build elementwise --op add --dtype f32 --block-size 128 --ir-only -o ew"),
                   0, NULL, NULL);
    FILE *f = NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/driver.c", dir);
    assert_non_null(f = fopen(path, "w"));
    fputs(ir_driver, f);
    fclose(f);
    rk_test_expect(
        rk_test_shf(dir, "ROCKE_CACHE_DIR=cache " ROCKE " aot ew/*.ir --targets gfx950 -o gen --name ew_add"), 0,
        "gfx950 hsaco", NULL);
    rk_test_expect(rk_test_shf(dir, "grep -c 'const uint32_t grid\\[3\\], const uint32_t block\\[3\\]' gen/ew_add.h"),
                   0, "1", NULL);
    rk_test_expect(
        rk_test_shf(dir, APP_CC " -DEW_ADD_WITH_EMULATOR -Igen -o ew_app driver.c gen/ew_add.c" WITH_ROCKE " -ldl"), 0,
        NULL, NULL);
    rk_test_expect(rk_test_shf(dir, NO_GPU "./ew_app"), 0, "bad 0 of 1999", NULL);
}

/* Without --shape the default shape follows the knobs, as in rocke build: --head-dim 64 alone used
 * to be refused against the declared D = 128. */
static void test_default_shape_follows_knobs(void **state) {
    (void)state;
    rk_test_expect(rk_test_shf(dir, ROCKE " aot attention --head-dim 64 --targets gfx942 -o hd64"), 0, "gfx942 hsaco",
                   NULL);
    rk_test_expect(rk_test_shf(dir, "grep -c rk_attention_bf16_d64_ hd64/attention.c"), 0, NULL, NULL);
}

static void test_bad_input(void **state) {
    (void)state;
    rk_test_expect(rk_test_shf(dir, ROCKE " aot softmax --targets gfx1 -o x"), 2, NULL,
                   "--targets: unknown target 'gfx1' (legal: ");
    rk_test_expect(rk_test_shf(dir, ROCKE " aot softmax --targets gfx942,gfx942 -o x"), 2, NULL,
                   "'gfx942' given twice");
    rk_test_expect(rk_test_shf(dir, ROCKE " aot softmax --targets gfx942 -o x --name 9lives"), 2, NULL,
                   "must be a C identifier");
    rk_test_expect(rk_test_shf(dir, ROCKE " aot softmax -o x"), 2, NULL, "missing --targets");
    rk_test_expect(rk_test_shf(dir, ROCKE " aot frobnicate --targets gfx942 -o x"), 2, NULL, "frobnicate");
    rk_test_expect(rk_test_shf(dir, ROCKE " aot ew/none.ir --targets gfx942 -o x"), 1, NULL, "ew/none.ir");
    rk_test_expect(rk_test_shf(dir, ROCKE " aot ew/none.ir --targets gfx942 --shape 4 -o x"), 2, NULL,
                   "--shape is for a family");
    /* a toolchain that cannot be used: the message names the tool and what to do */
    rk_test_expect(rk_test_shf(dir, "ROCKE_CACHE=0 ROCKE_TOOLCHAIN=tools ROCKE_LLC=/nonexistent/llc " ROCKE
                                    " aot softmax --targets gfx942 -o x"),
                   1, NULL, "cannot compile");
    rk_test_expect(rk_test_shf(dir, "ROCKE_CACHE=0 ROCKE_TOOLCHAIN=tools ROCKE_LLC=/nonexistent/llc " ROCKE
                                    " aot softmax --targets gfx942 -o x"),
                   1, NULL, "ROCKE_LLC=/nonexistent/llc (not an executable file)");
    /* GEMM for sm_90a takes the wgmma path (TMA descriptors), which a launcher cannot encode */
    rk_test_expect(rk_test_shf(dir, ROCKE " aot gemm --targets sm_90a -o x"), 1, NULL,
                   "takes a tensor map (TMA) parameter 'A_map'");
    /* a parameter named like the launcher's stream */
    rk_test_expect(
        rk_test_shf(dir, "sed 's/%%N\\b/%%s/g' ew/*.ir > clash.ir && " ROCKE " aot clash.ir --targets gfx942 -o x"), 1,
        NULL, "parameter 's' of");
    rk_test_expect(rk_test_shf(dir, ROCKE " aot --help"), 0, "usage: rocke aot", NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_emulator_path), cmocka_unit_test(test_no_device_and_no_object),
        cmocka_unit_test(test_deterministic), cmocka_unit_test(test_ir_file),
        cmocka_unit_test(test_default_shape_follows_knobs),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
