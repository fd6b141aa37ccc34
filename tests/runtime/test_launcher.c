/* rocke tests — modules, launches and launchers end to end on the emulator:
 * kernels from a built rk_kernel, from IR text and from an artifact; raw
 * kernelParams launches; launcher calls by name and by position with f32
 * scalars; a two-stage pipeline; graph capture (values copied at capture,
 * run only on replay); timing through a launcher; and the errors: a binary
 * for another device, IR for another target, a missing kernel, too few or
 * mistyped arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"

static void has(const char *what) {
    if (!strstr(rk_error_message(), what)) fail_msg("message '%s' lacks '%s'", rk_error_message(), what);
}

/* out[i] = a * x[i] + b for i < n */
static rk_kernel *axpb(const char *target) {
    rk_kernel *k = rk_kernel_new("axpb");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value x = rk_add_param(k, "x", pf, NULL);
    rk_value out = rk_add_param(k, "out", pf, NULL);
    rk_value a = rk_add_param(k, "a", RK_T_F32, NULL);
    rk_value b = rk_add_param(k, "b", RK_T_F32, NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value bid = rk_build_block_id(k, 0);
    rk_value bdim = rk_build_block_dim(k, 0);
    rk_value base = rk_build_mul(k, bid, bdim);
    rk_value i = rk_build_add(k, base, tid);
    rk_value inb = rk_build_cmp(k, "lt", i, n);
    rk_if_begin(k, inb);
    rk_value v = rk_load_global(k, x, i, 1);
    rk_value y = rk_build_fma(k, a, v, b);
    rk_store_global(k, out, i, y);
    rk_if_end(k, NULL, 0);
    if (target) rk_kernel_set_attr_str(k, "target", target);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

enum { N = 517 };
typedef struct fixture {
    rk_device *d;
    rk_kernel *k;
    rk_devptr x, y, z;
    float hx[N];
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    assert_int_equal(rk_device_open("emu:sm_90a", &f->d), RK_OK);
    f->k = axpb(NULL);
    unsigned seed = (unsigned)time(NULL);
    printf("seed %u\n", seed);
    srand(seed);
    for (int i = 0; i < N; i++) f->hx[i] = (float)((double)rand() / RAND_MAX * 4 - 2);
    assert_int_equal(rk_mem_alloc(f->d, sizeof f->hx, &f->x), RK_OK);
    assert_int_equal(rk_mem_alloc(f->d, sizeof f->hx, &f->y), RK_OK);
    assert_int_equal(rk_mem_alloc(f->d, sizeof f->hx, &f->z), RK_OK);
    assert_int_equal(rk_mem_copy_htod(f->d, f->x, f->hx, sizeof f->hx), RK_OK);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    rk_device_close(f->d);
    rk_kernel_free(f->k);
    free(f);
    return 0;
}

/* out must be a * x + b in f32: arith.fma may be fused or not, so allow
 * the rounding of the product too */
static void expect_axpb(fixture *f, rk_devptr out, const float *x, float a, float b) {
    float got[N];
    assert_int_equal(rk_mem_copy_dtoh(f->d, got, out, sizeof got), RK_OK);
    for (int i = 0; i < N; i++) {
        double want = (double)a * x[i] + b;
        double tol = 2.5e-7 * (fabs((double)a * x[i]) + fabs(b) + fabs(want));
        if (!(fabs(got[i] - want) <= tol)) fail_msg("element %d: %.9g, want %.9g", i, got[i], want);
    }
}

static const rk_launch_config cfg_n = {.grid = {(N + 127) / 128}, .block = {128}, .fence = true};

static void test_raw_launch(void **state) {
    fixture *f = *state;
    rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = f->k, .target = "sm_90a"};
    rk_module *m = NULL;
    rk_function *fn = NULL;
    assert_int_equal(rk_module_load_image(f->d, &img, &m), RK_OK);
    assert_int_equal(rk_module_function(m, "axpb", &fn), RK_OK);
    assert_string_equal(rk_function_name(fn), "axpb");
    rk_function *again = NULL;
    assert_int_equal(rk_module_function(m, "axpb", &again), RK_OK);
    assert_ptr_equal(again, fn);
    float a = 1.5f, b = -0.25f;
    int32_t n = N;
    void *params[] = {&f->x, &f->y, &a, &b, &n};
    const uint32_t g[3] = {(N + 63) / 64, 1, 1}, blk[3] = {64, 1, 1};
    assert_int_equal(rk_launch(fn, g, blk, 0, NULL, params), RK_OK);
    expect_axpb(f, f->y, f->hx, a, b);
    assert_int_equal(rk_launch(fn, g, blk, 0, NULL, NULL), RK_ERR_INVALID);
    has("takes 5 arguments but args is NULL");
    const uint32_t zero[3] = {0, 1, 1};
    assert_int_equal(rk_launch(fn, zero, blk, 0, NULL, params), RK_ERR_INVALID);
    has("empty launch");
    assert_int_equal(rk_module_function(m, "nope", &fn), RK_ERR_NOT_FOUND);
    has("the module holds 'axpb': the module has no kernel named 'nope'");
    rk_module_unload(m);
}

static void test_launcher_calls(void **state) {
    fixture *f = *state;
    rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = f->k};
    rk_launcher *l = NULL;
    assert_int_equal(rk_launcher_new_image(f->d, &img, NULL, &l), RK_OK);
    const rk_argsig *s = rk_launcher_signature(l);
    assert_non_null(s);
    assert_int_equal(rk_argsig_size(s), 28);   /* x@0 out@8 a@16 b@20 n@24 */
    /* by position */
    const rk_arg pos[] = {rk_arg_ptr(f->x), rk_arg_ptr(f->y), rk_arg_f32(2.0f), rk_arg_f32(0.5f), rk_arg_i32(N)};
    assert_int_equal(rk_launcher_call(l, &cfg_n, pos, 5), RK_OK);
    expect_axpb(f, f->y, f->hx, 2.0f, 0.5f);
    /* by name, in any order, mixed with positions */
    const rk_arg named[] = {rk_arg_ptr(f->x), rk_arg_named("n", rk_arg_i32(N)), rk_arg_named("b", rk_arg_f32(-3.0f)),
                            rk_arg_named("out", rk_arg_ptr(f->z)), rk_arg_named("a", rk_arg_f32(-1.25f))};
    assert_int_equal(rk_launcher_call(l, &cfg_n, named, 5), RK_OK);
    expect_axpb(f, f->z, f->hx, -1.25f, -3.0f);
    /* too few and mistyped arguments never reach the device */
    assert_int_equal(rk_launcher_call(l, &cfg_n, pos, 4), RK_ERR_INVALID);
    has("kernel 'axpb': missing kernel argument 'n' (#5 of 5, i32)");
    rk_arg bad[5];
    memcpy(bad, pos, sizeof pos);
    bad[2] = rk_arg_f64(2.0);
    assert_int_equal(rk_launcher_call(l, &cfg_n, bad, 5), RK_ERR_INVALID);
    has("argument 'a' (#3 of 5) is f32 in the kernel signature, but the value given is f64");
    /* timing through the launcher: emulator time, labelled */
    rk_time_opts o = {.warmup = 1, .iters = 3};
    rk_time_result r;
    assert_int_equal(rk_time_launcher(l, &cfg_n, pos, 5, &o, &r), RK_OK);
    assert_int_equal(r.samples, 3);
    assert_int_equal(r.clock, RK_CLOCK_HOST_EMULATOR);
    assert_true(r.median_ms > 0);
    rk_launcher_free(l);
    /* a kernel name the module does not hold */
    assert_int_equal(rk_launcher_new_image(f->d, &img, "nope", &l), RK_ERR_NOT_FOUND);
    has("no kernel named 'nope'");
    assert_null(l);
}

static void test_pipeline_and_graph(void **state) {
    fixture *f = *state;
    rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = f->k};
    rk_launcher *l1 = NULL, *l2 = NULL;
    assert_int_equal(rk_launcher_new_image(f->d, &img, NULL, &l1), RK_OK);
    assert_int_equal(rk_launcher_new_image(f->d, &img, NULL, &l2), RK_OK);
    rk_launcher *stages[] = {l1, l2};
    rk_pipeline *p = NULL;
    assert_int_equal(rk_pipeline_new(stages, 2, &p), RK_OK);
    rk_stream *s = NULL;
    assert_int_equal(rk_stream_create(f->d, &s), RK_OK);
    /* y = 2x + 1, then z = 3y - 1 */
    const rk_arg a1[] = {rk_arg_ptr(f->x), rk_arg_ptr(f->y), rk_arg_f32(2.0f), rk_arg_f32(1.0f), rk_arg_i32(N)};
    const rk_arg a2[] = {rk_arg_ptr(f->y), rk_arg_ptr(f->z), rk_arg_f32(3.0f), rk_arg_f32(-1.0f), rk_arg_i32(N)};
    const rk_arg *args[] = {a1, a2};
    const uint32_t nargs[] = {5, 5};
    const rk_launch_config cfgs[] = {cfg_n, cfg_n};
    uint32_t launches = 0;
    assert_int_equal(rk_pipeline_call(p, cfgs, args, nargs, 2, s, &launches), RK_OK);
    assert_int_equal(launches, 2);
    float y[N];
    for (int i = 0; i < N; i++) y[i] = (float)(2.0 * f->hx[i] + 1.0);
    expect_axpb(f, f->y, f->hx, 2.0f, 1.0f);
    expect_axpb(f, f->z, y, 3.0f, -1.0f);

    /* capture: nothing runs until replay, and the values are the captured ones */
    assert_int_equal(rk_mem_memset(f->d, f->z, 0, N * sizeof(float), NULL), RK_OK);
    assert_int_equal(rk_graph_capture_begin(s), RK_OK);
    rk_launch_config c = cfg_n;
    c.stream = s;
    c.fence = false;
    rk_arg a3[5];
    memcpy(a3, a2, sizeof a3);
    a3[2] = rk_arg_f32(0.5f);
    assert_int_equal(rk_launcher_call(l1, &c, a3, 5), RK_OK);
    a3[2] = rk_arg_f32(7.0f);   /* changed after capture: must not matter */
    rk_graph *g = NULL;
    assert_int_equal(rk_graph_capture_end(s, &g), RK_OK);
    float z[N];
    assert_int_equal(rk_mem_copy_dtoh(f->d, z, f->z, sizeof z), RK_OK);
    for (int i = 0; i < N; i++) assert_true(z[i] == 0);
    assert_int_equal(rk_graph_launch(g, s), RK_OK);
    assert_int_equal(rk_stream_synchronize(f->d, s), RK_OK);
    expect_axpb(f, f->z, y, 0.5f, -1.0f);
    rk_graph_destroy(g);
    rk_stream_destroy(s);
    rk_pipeline_free(p);
    rk_launcher_free(l1);
    rk_launcher_free(l2);
}

static void test_text_and_artifacts(void **state) {
    fixture *f = *state;
    char *ir = rk_serialize(f->k);
    assert_non_null(ir);
    /* IR text is parsed at load */
    rk_module_image img = {.kind = RK_IMAGE_IR, .data = ir, .size = strlen(ir), .target = "sm_90a"};
    rk_launcher *l = NULL;
    assert_int_equal(rk_launcher_new_image(f->d, &img, "axpb", &l), RK_OK);
    const rk_arg pos[] = {rk_arg_ptr(f->x), rk_arg_ptr(f->y), rk_arg_f32(-0.5f), rk_arg_f32(4.0f), rk_arg_i32(N)};
    assert_int_equal(rk_launcher_call(l, &cfg_n, pos, 5), RK_OK);
    expect_axpb(f, f->y, f->hx, -0.5f, 4.0f);
    rk_launcher_free(l);
    img.size = 10;   /* cut short: the parser's message comes through */
    assert_int_equal(rk_launcher_new_image(f->d, &img, "axpb", &l), RK_ERR_PARSE);
    has("parsing the module's IR");

    /* an artifact: the emulator runs its IR text */
    rk_artifact a = {.kernel_name = "axpb", .ir_text = ir, .kind = RK_BINARY_PTX, .target = "sm_90a"};
    assert_int_equal(rk_launcher_new(f->d, &a, &l), RK_OK);
    assert_int_equal(rk_launcher_call(l, &cfg_n, pos, 5), RK_OK);
    rk_launcher_free(l);
    a.target = "gfx942";
    assert_int_equal(rk_launcher_new(f->d, &a, &l), RK_ERR_INVALID);
    has("the IR was built for gfx942 but this emulator runs sm_90a (open the device as 'emu:gfx942')");
    a.ir_text = NULL;
    assert_int_equal(rk_launcher_new(f->d, &a, &l), RK_ERR_INVALID);
    has("has no rocke IR text");
    rk_string_free(ir);

    /* binaries for a GPU are refused by name */
    static const char ptx[] = ".version 8.0\n";
    rk_module_image bin = {.kind = RK_IMAGE_PTX, .data = ptx, .size = sizeof ptx - 1};
    rk_module *m = NULL;
    assert_int_equal(rk_module_load_image(f->d, &bin, &m), RK_ERR_INVALID);
    has("cannot load the ptx image on the emulator (rocke CPU emulator (sm_90a)): ptx needs a CUDA device");
    bin.kind = RK_IMAGE_HSACO;
    assert_int_equal(rk_module_load_image(f->d, &bin, &m), RK_ERR_INVALID);
    has("hsaco needs a HIP device");
    /* a kernel that names another target */
    rk_kernel *k = axpb("gfx950");
    rk_module_image other = {.kind = RK_IMAGE_IR, .kernel = k};
    assert_int_equal(rk_module_load_image(f->d, &other, &m), RK_ERR_INVALID);
    has("kernel 'axpb' was built for gfx950 but this emulator runs sm_90a");
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_raw_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launcher_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_and_graph, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_and_artifacts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
