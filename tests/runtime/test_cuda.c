/* rocke tests — the CUDA backend against a fake libcuda (tests/runtime/
 * fake_cuda.c, loaded through ROCKE_CUDA_LIB): device queries and the target
 * choice, memory, PTX and cubin modules with the JIT log, kernelParams
 * launches through launchers, dynamic shared memory opt-in, block limits,
 * events, timing and graph replay, tensor maps (encoding through the driver,
 * the 128-byte by-value parameter of a TMA kernel, direct and replayed from
 * a graph), and the messages of every failure (missing library, stub
 * library, cuInit, wrong image, missing kernel, bad tensor maps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dlfcn.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"

#define FAKE ROCKE_BINARY_DIR "/fakes/libfake_cuda.so"

static int (*fake_stat)(const char *);
static long long (*fake_tmap)(const char *);
static void *fake_lib;

static int setup(void **state) {
    (void)state;
    fake_lib = dlopen(FAKE, RTLD_NOW | RTLD_LOCAL);
    if (!fake_lib || !(fake_stat = (int (*)(const char *))dlsym(fake_lib, "fake_cuda_stat"))) {
        printf("skipping: %s is not a fake driver (built without cuda.h?)\n", FAKE);
        fake_stat = NULL;
        return 0;
    }
    fake_tmap = (long long (*)(const char *))dlsym(fake_lib, "fake_cuda_tmap");
    setenv("ROCKE_CUDA_LIB", FAKE, 1);
    unsetenv("FAKE_CUDA_CC");
    unsetenv("FAKE_CUDA_INIT");
    unsetenv("FAKE_CUDA_DEVICES");
    return 0;
}

#define NEED_FAKE() do { if (!fake_stat) skip(); } while (0)

static void has(const char *what) {
    if (!strstr(rk_error_message(), what)) fail_msg("message '%s' lacks '%s'", rk_error_message(), what);
}

static rk_device *open_fake(void) {
    rk_device *d = NULL;
    if (rk_device_open("cuda", &d) != RK_OK) fail_msg("open: %s", rk_error_message());
    return d;
}

/* ---- opening -------------------------------------------------------------------------- */
static void test_open_and_query(void **state) {
    (void)state;
    NEED_FAKE();
    rk_device *d = open_fake();
    const rk_device_info *in = rk_device_info_of(d);
    assert_int_equal(in->kind, RK_DEVICE_CUDA);
    assert_string_equal(rk_device_name(d), "Fake H200 #0");
    assert_string_equal(in->arch, "sm_90");
    assert_string_equal(rk_device_target(d), "sm_90a");   /* Hopper 9.0 gets the wgmma target */
    assert_int_equal(in->driver_version, 13000);
    assert_non_null(strstr(in->driver, "CUDA driver 13.0"));
    assert_int_equal(in->sm_count, 132);
    assert_int_equal(in->warp_size, 32);
    assert_int_equal(in->smem_per_block, 48 * 1024);
    assert_int_equal(in->smem_per_block_optin, 227 * 1024);
    assert_int_equal(in->l2_bytes, 1 << 20);
    assert_string_equal(rk_device_probe_log(d), "");
    rk_device_close(d);

    static const struct { const char *cc, *target; } cc[] = {{"80", "sm_80"}, {"86", "sm_80"}, {"100", "sm_90"},
                                                            {"75", ""}};
    for (size_t i = 0; i < sizeof cc / sizeof cc[0]; i++) {
        setenv("FAKE_CUDA_CC", cc[i].cc, 1);
        d = open_fake();
        assert_string_equal(rk_device_target(d), cc[i].target);
        rk_device_close(d);
    }
    unsetenv("FAKE_CUDA_CC");

    /* auto picks the GPU first */
    rk_device_opts o = {.which = "auto", .quiet = true};
    assert_int_equal(rk_device_open_opts(&o, &d), RK_OK);
    assert_int_equal(rk_device_kind_of(d), RK_DEVICE_CUDA);
    rk_device_close(d);
}

static void test_open_failures(void **state) {
    (void)state;
    NEED_FAKE();
    rk_device *d = NULL;
    setenv("FAKE_CUDA_INIT", "100", 1);
    assert_int_equal(rk_device_open("cuda", &d), RK_ERR_DEVICE);
    has("device 'cuda' asked for, but no CUDA device could be opened");
    has("cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
    unsetenv("FAKE_CUDA_INIT");
    setenv("FAKE_CUDA_DEVICES", "0", 1);
    assert_int_equal(rk_device_open("cuda", &d), RK_ERR_DEVICE);
    has("sees no device");
    unsetenv("FAKE_CUDA_DEVICES");
    assert_int_equal(rk_device_open("cuda:3", &d), RK_ERR_DEVICE);
    has("CUDA device 3 asked for, but there is only 1");
    assert_int_equal(rk_device_open("cuda:x", &d), RK_ERR_INVALID);
    has("'x' is not a device index");
    assert_null(d);

    setenv("ROCKE_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
    assert_int_equal(rk_device_open("cuda", &d), RK_ERR_DEVICE);
    has("tried /nonexistent/libcuda.so.1");
    has("No such file");
    /* the toolkit's link stub is not mistaken for a driver */
    const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    void *h = dlopen(stub, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        dlclose(h);
        setenv("ROCKE_CUDA_LIB", stub, 1);
        assert_int_equal(rk_device_open("cuda", &d), RK_ERR_DEVICE);
        has("stub");
    }
    setenv("ROCKE_CUDA_LIB", FAKE, 1);
}

/* ---- memory ------------------------------------------------------------------------------ */
static void test_memory(void **state) {
    (void)state;
    NEED_FAKE();
    int live = fake_stat("live_allocs");
    rk_device *d = open_fake();
    enum { N = 1000 };
    uint32_t src[N], back[N];
    for (int i = 0; i < N; i++) src[i] = 0x9e3779b9u * (uint32_t)i;
    rk_devptr a, b, z;
    assert_int_equal(rk_mem_alloc(d, sizeof src, &a), RK_OK);
    assert_int_equal(rk_mem_alloc(d, sizeof src, &b), RK_OK);
    assert_int_equal(rk_mem_alloc(d, 0, &z), RK_OK);
    assert_true(z == 0);
    assert_int_equal(rk_mem_copy_htod(d, a, src, sizeof src), RK_OK);
    assert_int_equal(rk_mem_copy_dtod(d, b, a, sizeof src, NULL), RK_OK);
    assert_int_equal(rk_mem_memset(d, b, 0xab, 8, NULL), RK_OK);
    assert_int_equal(rk_mem_copy_dtoh(d, back, b, sizeof back), RK_OK);
    assert_int_equal(back[0], 0xababababu);
    assert_int_equal(back[1], 0xababababu);
    assert_memory_equal(back + 2, src + 2, sizeof src - 8);
    assert_int_equal(rk_mem_free(d, a), RK_OK);
    /* b is left for close to ignore: the caller owns device memory */
    assert_int_equal(rk_mem_free(d, b), RK_OK);
    assert_int_equal(rk_mem_free(d, 0), RK_OK);
    rk_device_close(d);
    assert_int_equal(fake_stat("live_allocs"), live);
}

/* ---- modules and launches -------------------------------------------------------------------- */
static const char ptx[] =
    "//\n.version 8.0\n.target sm_90a\n.address_size 64\n"
    ".visible .entry vadd(.param .u64 A, .param .u64 B, .param .u64 C, .param .u32 n)\n{ ret; }\n"
    ".visible .entry fill(.param .u64 out, .param .u32 v, .param .u32 n)\n{ ret; }\n"
    ".visible .entry smem_user(.param .u64 out, .param .u32 v, .param .u32 n)\n{ ret; }\n"
    ".visible .entry tiny(.param .u64 out, .param .u32 v, .param .u32 n)\n{ ret; }\n";

static rk_argsig *fill_sig(void) {
    const char *names[] = {"out", "v", "n"}, *types[] = {"ptr<i32,global>", "i32", "i32"};
    rk_argsig *s = NULL;
    assert_int_equal(rk_argsig_new(names, types, 3, &s), RK_OK);
    return s;
}

static void test_launch(void **state) {
    (void)state;
    NEED_FAKE();
    rk_device *d = open_fake();
    rk_module_image img = {.kind = RK_IMAGE_PTX, .data = ptx, .size = sizeof ptx - 1, .target = "sm_90a"};
    rk_launcher *l = NULL;
    assert_int_equal(rk_launcher_new_image(d, &img, "vadd", &l), RK_OK);
    /* PTX alone carries no signature */
    rk_launch_config cfg = {.grid = {4}, .block = {256}, .fence = true};
    assert_int_equal(rk_launcher_call(l, &cfg, NULL, 0), RK_ERR_INVALID);
    has("signature is unknown");
    const char *names[] = {"A", "B", "C", "n"};
    const char *types[] = {"ptr<f32,global>", "ptr<f32,global>", "ptr<f32,global>", "i32"};
    rk_argsig *sig = NULL;
    assert_int_equal(rk_argsig_new(names, types, 4, &sig), RK_OK);
    assert_int_equal(rk_launcher_set_signature(l, sig), RK_OK);
    rk_argsig_free(sig);

    enum { N = 1001 };
    float A[N], B[N], C[N];
    unsigned seed = (unsigned)time(NULL);
    printf("test_launch seed %u\n", seed);
    srand(seed);
    for (int i = 0; i < N; i++) {
        A[i] = (float)((double)rand() / RAND_MAX - 0.5);
        B[i] = (float)((double)rand() / RAND_MAX - 0.5);
    }
    rk_devptr dA, dB, dC;
    assert_int_equal(rk_mem_alloc(d, sizeof A, &dA), RK_OK);
    assert_int_equal(rk_mem_alloc(d, sizeof B, &dB), RK_OK);
    assert_int_equal(rk_mem_alloc(d, sizeof C, &dC), RK_OK);
    rk_mem_copy_htod(d, dA, A, sizeof A);
    rk_mem_copy_htod(d, dB, B, sizeof B);
    rk_mem_memset(d, dC, 0xff, sizeof C, NULL);
    const rk_arg args[] = {rk_arg_named("n", rk_arg_i32(N)), rk_arg_named("C", rk_arg_ptr(dC)),
                           rk_arg_named("A", rk_arg_ptr(dA)), rk_arg_named("B", rk_arg_ptr(dB))};
    assert_int_equal(rk_launcher_call(l, &cfg, args, 4), RK_OK);
    assert_int_equal(rk_mem_copy_dtoh(d, C, dC, sizeof C), RK_OK);
    for (int i = 0; i < N; i++) assert_true(C[i] == A[i] + B[i]);
    /* too few arguments: named, before anything reaches the driver */
    int launches = fake_stat("launches");
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_ERR_INVALID);
    has("kernel 'vadd': missing kernel argument 'B'");
    assert_int_equal(fake_stat("launches"), launches);

    /* timing: per-launch samples, the summary, then graph replay */
    rk_time_opts o = {.warmup = 2, .iters = 7};
    rk_time_result r;
    assert_int_equal(rk_time_launcher(l, &cfg, args, 4, &o, &r), RK_OK);
    assert_int_equal(r.samples, 7);
    assert_int_equal(r.clock, RK_CLOCK_GPU_EVENTS);
    assert_true(r.min_ms <= r.median_ms && r.median_ms <= r.max_ms && r.min_ms >= 0);
    assert_int_equal(fake_stat("launches"), launches + 9);
    o.graph = true;
    o.replays = 3;
    o.flush_l2 = true;
    rk_mem_memset(d, dC, 0, sizeof C, NULL);
    int graphs = fake_stat("graph_launches");
    assert_int_equal(rk_time_launcher(l, &cfg, args, 4, &o, &r), RK_OK);
    assert_true(r.graph && r.flushed);
    assert_int_equal(r.samples, 3);
    assert_int_equal(r.runs_per_sample, 7);
    assert_int_equal(fake_stat("graph_launches"), graphs + 4);   /* one untimed upload + 3 timed */
    assert_int_equal(fake_stat("launches"), launches + 9 + 2 + 4 * 7);
    assert_int_equal(rk_mem_copy_dtoh(d, C, dC, sizeof C), RK_OK);
    for (int i = 0; i < N; i++) assert_true(C[i] == A[i] + B[i]);
    rk_launcher_free(l);

    /* dynamic shared memory above 48 KiB is opted into once */
    rk_module *m = NULL;
    rk_function *f = NULL;
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_OK);
    assert_int_equal(rk_module_function(m, "smem_user", &f), RK_OK);
    assert_ptr_equal(rk_function_device(f), d);
    rk_argsig *fs = fill_sig();
    rk_argpack p;
    rk_argpack_init(&p);
    const rk_arg fa[] = {rk_arg_ptr(dC), rk_arg_i32(5), rk_arg_i32(10)};
    assert_int_equal(rk_args_pack(fs, fa, 3, &p), RK_OK);
    const uint32_t g[3] = {1, 1, 1}, b[3] = {32, 1, 1}, big[3] = {128, 1, 1};
    int set = fake_stat("set_attr");
    assert_int_equal(rk_launch(f, g, b, 100 * 1024, NULL, p.params), RK_OK);
    assert_int_equal(rk_launch(f, g, b, 100 * 1024, NULL, p.params), RK_OK);
    assert_int_equal(fake_stat("set_attr"), set + 1);
    assert_int_equal(fake_stat("last_smem"), 100 * 1024);
    assert_int_equal(rk_launch(f, g, b, 227 * 1024, NULL, p.params), RK_ERR_INVALID);
    has("exceed the 232448 bytes a block may use");
    /* a block over the kernel's own limit */
    assert_int_equal(rk_module_function(m, "tiny", &f), RK_OK);
    assert_int_equal(rk_launch(f, g, big, 0, NULL, p.params), RK_ERR_INVALID);
    has("a block of 128 threads (128x1x1) exceeds the limit of 64");
    /* a missing kernel */
    assert_int_equal(rk_module_function(m, "nope", &f), RK_ERR_NOT_FOUND);
    has("no kernel named 'nope'");
    /* cluster dims from the image: cuLaunchKernelEx with CLUSTER_DIMENSION; a
     * grid that is not whole clusters is refused before the driver */
    rk_module *mc = NULL;
    rk_module_image cimg = img;
    cimg.cluster_dims[0] = 2;
    cimg.cluster_dims[1] = cimg.cluster_dims[2] = 1;
    assert_int_equal(rk_module_load_image(d, &cimg, &mc), RK_OK);
    assert_int_equal(rk_module_function(mc, "fill", &f), RK_OK);
    uint32_t cd[3];
    rk_function_cluster_dims(f, cd);
    assert_true(cd[0] == 2 && cd[1] == 1 && cd[2] == 1);
    const rk_arg ok[] = {rk_arg_ptr(dC), rk_arg_i32(5), rk_arg_i32(10)};
    assert_int_equal(rk_args_pack(fs, ok, 3, &p), RK_OK);
    const uint32_t g4[3] = {4, 1, 1}, g3[3] = {3, 1, 1};
    int ex = fake_stat("ex_launches");
    assert_int_equal(rk_launch(f, g4, b, 0, NULL, p.params), RK_OK);
    assert_int_equal(fake_stat("ex_launches"), ex + 1);
    assert_int_equal(fake_stat("last_cluster"), 211);
    assert_int_equal(rk_launch(f, g3, b, 0, NULL, p.params), RK_ERR_INVALID);
    has("grid.x = 3 is not a multiple of the kernel's cluster_dims x = 2");
    assert_int_equal(fake_stat("ex_launches"), ex + 1);
    rk_module_unload(mc);
    /* a cooperative function: cuLaunchKernelEx with COOPERATIVE, the grid
     * checked against the occupancy (2 per SM here) times the 132 SMs */
    assert_int_equal(rk_module_function(m, "fill", &f), RK_OK);
    assert_false(rk_function_cooperative(f));
    assert_int_equal(rk_function_set_cooperative(f, true), RK_OK);
    const uint32_t g264[3] = {264, 1, 1}, g265[3] = {265, 1, 1};
    ex = fake_stat("ex_launches");
    assert_int_equal(rk_launch(f, g4, b, 0, NULL, p.params), RK_OK);
    assert_int_equal(fake_stat("ex_launches"), ex + 1);
    assert_int_equal(fake_stat("last_coop"), 1);
    assert_int_equal(rk_launch(f, g264, b, 0, NULL, p.params), RK_OK);
    assert_int_equal(rk_launch(f, g265, b, 0, NULL, p.params), RK_ERR_INVALID);
    has("a cooperative grid of 265 blocks (265x1x1) cannot be resident at once");
    has("2 blocks of 32 threads with 0 bytes of dynamic shared memory fit per SM, 132 SMs, so at most 264 blocks");
    assert_int_equal(fake_stat("ex_launches"), ex + 2);
    assert_int_equal(rk_function_set_cooperative(f, false), RK_OK);
    /* a failure inside the driver names the call and the error */
    assert_int_equal(rk_module_function(m, "fill", &f), RK_OK);
    const rk_arg bad[] = {rk_arg_ptr(0), rk_arg_i32(5), rk_arg_i32(10)};
    assert_int_equal(rk_args_pack(fs, bad, 3, &p), RK_OK);
    assert_int_equal(rk_launch(f, g, b, 0, NULL, p.params), RK_ERR_DEVICE);
    has("cuLaunchKernel('fill', grid 1x1x1, block 32x1x1");
    has("CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
    has("cannot be used any more");
    rk_argpack_free(&p);
    rk_argsig_free(fs);
    rk_mem_free(d, dA);
    rk_mem_free(d, dB);
    rk_mem_free(d, dC);
    rk_device_close(d);   /* unloads m */
}

/* ---- fences: blocking calls wait, pipelines wait once, no-fence scopes never ---------------- */
static void test_fences(void **state) {
    (void)state;
    NEED_FAKE();
    rk_device *d = open_fake();
    rk_module_image img = {.kind = RK_IMAGE_PTX, .data = ptx, .size = sizeof ptx - 1};
    rk_launcher *fill = NULL, *fill2 = NULL;
    assert_int_equal(rk_launcher_new_image(d, &img, "fill", &fill), RK_OK);
    assert_int_equal(rk_launcher_new_image(d, &img, "fill", &fill2), RK_OK);
    rk_argsig *sig = fill_sig();
    rk_launcher_set_signature(fill, sig);
    rk_launcher_set_signature(fill2, sig);
    rk_argsig_free(sig);
    rk_devptr out;
    uint32_t host[64];
    assert_int_equal(rk_mem_alloc(d, sizeof host, &out), RK_OK);
    rk_stream *s = NULL;
    assert_int_equal(rk_stream_create(d, &s), RK_OK);
    const rk_arg a1[] = {rk_arg_ptr(out), rk_arg_i32(10), rk_arg_i32(64)};
    const rk_arg a2[] = {rk_arg_ptr(out), rk_arg_i32(20), rk_arg_i32(32)};
    rk_launch_config cfg = {.grid = {1}, .block = {64}, .stream = s, .fence = true};
    int syncs = fake_stat("syncs");
    assert_int_equal(rk_launcher_call(fill, &cfg, a1, 3), RK_OK);
    assert_int_equal(fake_stat("syncs"), syncs + 1);
    cfg.fence = false;
    assert_int_equal(rk_launcher_call(fill, &cfg, a1, 3), RK_OK);
    assert_int_equal(fake_stat("syncs"), syncs + 1);
    cfg.fence = true;
    rk_no_fence_begin();
    assert_true(rk_no_fence_active());
    assert_int_equal(rk_launcher_call(fill, &cfg, a1, 3), RK_OK);
    rk_no_fence_end();
    assert_false(rk_no_fence_active());
    assert_int_equal(fake_stat("syncs"), syncs + 1);
    /* a pipeline: both stages ask for a fence, only the last one waits */
    rk_launcher *stages[] = {fill, fill2};
    rk_pipeline *p = NULL;
    assert_int_equal(rk_pipeline_new(stages, 2, &p), RK_OK);
    const rk_launch_config cfgs[] = {cfg, cfg};
    const rk_arg *args[] = {a1, a2};
    const uint32_t nargs[] = {3, 3};
    uint32_t launches = 0;
    assert_int_equal(rk_pipeline_call(p, cfgs, args, nargs, 2, s, &launches), RK_OK);
    assert_int_equal(launches, 2);
    assert_int_equal(fake_stat("syncs"), syncs + 2);
    assert_int_equal(rk_mem_copy_dtoh(d, host, out, sizeof host), RK_OK);
    for (uint32_t i = 0; i < 64; i++) assert_int_equal(host[i], i < 32 ? 20 + i : 10 + i);   /* stage order */
    assert_int_equal(rk_pipeline_call(p, cfgs, args, nargs, 1, s, &launches), RK_ERR_INVALID);
    has("the pipeline has 2 stages but 1 configs");
    const uint32_t short_args[] = {3, 2};
    assert_int_equal(rk_pipeline_call(p, cfgs, args, short_args, 2, s, &launches), RK_ERR_INVALID);
    has("pipeline stage 2 of 2: kernel 'fill': missing kernel argument 'n'");
    assert_int_equal(launches, 1);
    rk_pipeline_free(p);
    rk_launcher_free(fill);
    rk_launcher_free(fill2);
    rk_mem_free(d, out);
    rk_device_close(d);
}

/* ---- images that do not fit -------------------------------------------------------------------------- */
static void test_bad_images(void **state) {
    (void)state;
    NEED_FAKE();
    rk_device *d = open_fake();
    rk_module *m = NULL;
    static const char bad_ptx[] = ".version 8.0\n.target sm_90a\nBAD_PTX\n";
    rk_module_image img = {.kind = RK_IMAGE_PTX, .data = bad_ptx, .size = sizeof bad_ptx - 1};
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_ERR_INVALID);
    has("cuModuleLoadDataEx(ptx, ");
    has("CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)");
    has("JIT log: ptxas application ptx input, line 3; error   : fake syntax error near 'BAD_PTX'");

    img = (rk_module_image){.kind = RK_IMAGE_HSACO, .data = "\177ELF", .size = 4, .target = "gfx942"};
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_ERR_INVALID);
    has("cannot load the hsaco image on a CUDA device (Fake H200 #0): hsaco needs a HIP device");
    img = (rk_module_image){.kind = RK_IMAGE_PTX, .data = ptx, .size = sizeof ptx - 1, .target = "gfx942"};
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_ERR_INVALID);
    has("built for gfx942, which a CUDA device (Fake H200 #0) cannot run; compile for sm_90a");
    img = (rk_module_image){.kind = RK_IMAGE_CUBIN, .data = ptx, .size = sizeof ptx - 1};
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_ERR_INVALID);
    has("not an ELF file");
    img = (rk_module_image){.kind = RK_IMAGE_IR, .data = "x", .size = 1};
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_ERR_INVALID);
    has("cannot load the ir image on a CUDA device");
    rk_device_close(d);
    /* sm_90a code needs exactly compute capability 9.0 */
    setenv("FAKE_CUDA_CC", "80", 1);
    d = open_fake();
    img = (rk_module_image){.kind = RK_IMAGE_PTX, .data = ptx, .size = sizeof ptx - 1, .target = "sm_90a"};
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_ERR_INVALID);
    has("built for sm_90a but the device (Fake H200 #0) has compute capability 8.0");
    img.target = "sm_80";
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_OK);
    rk_device_close(d);
    unsetenv("FAKE_CUDA_CC");
}

/* ---- artifacts: the cubin wins over PTX, the IR gives the signature --------------------------------------- */
static void test_artifact(void **state) {
    (void)state;
    NEED_FAKE();
    rk_kernel *k = rk_kernel_new("fill");
    rk_type pi = rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL);
    rk_add_param(k, "out", pi, NULL);
    rk_add_param(k, "v", RK_T_I32, NULL);
    rk_add_param(k, "n", RK_T_I32, NULL);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ir = rk_serialize(k);
    assert_non_null(ir);
    rk_kernel_free(k);
    static const char bad_ptx[] = "BAD_PTX";
    static const uint8_t cubin[] = "\177ELF.entry fill(";
    rk_artifact a = {.kernel_name = "fill", .ir_text = ir, .kind = RK_BINARY_PTX, .binary = (uint8_t *)bad_ptx,
                     .binary_size = sizeof bad_ptx - 1, .cubin = (uint8_t *)cubin, .cubin_size = sizeof cubin - 1,
                     .target = "sm_90a"};
    rk_device *d = open_fake();
    rk_launcher *l = NULL;
    assert_int_equal(rk_launcher_new(d, &a, &l), RK_OK);
    assert_non_null(rk_launcher_signature(l));
    assert_int_equal(rk_argsig_size(rk_launcher_signature(l)), 16);
    rk_devptr out;
    uint32_t host[40];
    assert_int_equal(rk_mem_alloc(d, sizeof host, &out), RK_OK);
    const rk_arg args[] = {rk_arg_ptr(out), rk_arg_i32(100), rk_arg_i32(40)};
    rk_launch_config cfg = {.grid = {1}, .block = {64}, .fence = true};
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_OK);
    assert_int_equal(rk_mem_copy_dtoh(d, host, out, sizeof host), RK_OK);
    for (uint32_t i = 0; i < 40; i++) assert_int_equal(host[i], 100 + i);
    rk_launcher_free(l);
    /* without the cubin the (bad) PTX is what loads */
    a.cubin = NULL;
    a.cubin_size = 0;
    assert_int_equal(rk_launcher_new(d, &a, &l), RK_ERR_INVALID);
    has("JIT log");
    /* an AMD artifact on a CUDA device */
    a.kind = RK_BINARY_HSACO;
    a.target = "gfx942";
    assert_int_equal(rk_launcher_new(d, &a, &l), RK_ERR_INVALID);
    has("holds an AMD code object (hsaco) for gfx942; a CUDA device needs PTX or a cubin");
    rk_mem_free(d, out);
    rk_device_close(d);
    rk_string_free(ir);
}

/* ---- tensor maps ---------------------------------------------------------------------------------------------- */
enum { TH = 37, TW = 70, TSTRIDE = 288, BOX_R = 16, BOX_C = 32 };   /* odd sizes; rows padded to 288 bytes */
/* cuda.h's CUtensorMapDataType / CUtensorMapSwizzle values (the tests do not include cuda.h) */
enum { DT_UINT8 = 0, DT_UINT16 = 1, DT_INT32 = 3, DT_INT64 = 5, DT_FLOAT16 = 6, DT_FLOAT32 = 7, DT_FLOAT64 = 8,
       DT_BFLOAT16 = 9, SWIZZLE_128B = 3 };

static const char tma_ptx[] =
    ".version 8.0\n.target sm_90a\n.address_size 64\n"
    ".visible .entry tma_box(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u32 x, .param .u32 y)\n"
    "{ ret; }\n";

/* The IR of the TMA kernel: its signature is what matters here. */
static char *tma_ir(void) {
    rk_kernel *k = rk_kernel_new("tma_box");
    rk_param_abi tm = {.tensormap = true};
    rk_add_param(k, "tmap", rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), &tm);
    rk_add_param(k, "out", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_add_param(k, "x", RK_T_I32, NULL);
    rk_add_param(k, "y", RK_T_I32, NULL);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ir = rk_serialize(k);
    rk_kernel_free(k);
    assert_non_null(ir);
    return ir;
}

/* out (BOX_R x BOX_C) against the box at (x, y) of the host tensor, zeros outside. */
static void expect_box(const float *t, const float *out, int x, int y) {
    for (int r = 0; r < BOX_R; r++)
        for (int c = 0; c < BOX_C; c++) {
            int gy = y + r, gx = x + c;
            float want = gy < TH && gx < TW ? t[gy * (TSTRIDE / 4) + gx] : 0.0f;
            if (out[r * BOX_C + c] != want)
                fail_msg("box (%d,%d) [%d][%d] = %g, want %g", x, y, r, c, out[r * BOX_C + c], want);
        }
}

static void test_tensormap(void **state) {
    (void)state;
    NEED_FAKE();
    unsigned seed = (unsigned)time(NULL);
    printf("test_tensormap seed %u\n", seed);
    srand(seed);
    rk_device *d = open_fake();
    static float T[TH * (TSTRIDE / 4)], out[BOX_R * BOX_C];
    for (size_t i = 0; i < sizeof T / sizeof *T; i++) T[i] = (float)(rand() % 2000000) - 1e6f;
    rk_devptr dT, dO;
    assert_int_equal(rk_mem_alloc(d, sizeof T, &dT), RK_OK);
    assert_int_equal(rk_mem_alloc(d, sizeof out, &dO), RK_OK);
    assert_int_equal(rk_mem_copy_htod(d, dT, T, sizeof T), RK_OK);

    /* the encode: CUDA's dimension 0 is the contiguous one */
    uint8_t store[RK_TENSORMAP_BYTES + 1], *desc = store + 1;   /* any alignment will do */
    long long encodes = fake_tmap("encodes");
    assert_int_equal(rk_tensormap_encode_2d(d, dT, RK_S_F32, TH, TW, TSTRIDE, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_NONE,
                                            desc), RK_OK);
    assert_int_equal(fake_tmap("encodes"), encodes + 1);
    assert_true(fake_tmap("base") == (long long)dT);
    assert_int_equal(fake_tmap("dim0"), TW);
    assert_int_equal(fake_tmap("dim1"), TH);
    assert_int_equal(fake_tmap("stride"), TSTRIDE);
    assert_int_equal(fake_tmap("box0"), BOX_C);
    assert_int_equal(fake_tmap("box1"), BOX_R);
    assert_int_equal(fake_tmap("dtype"), DT_FLOAT32);
    assert_int_equal(fake_tmap("rank"), 2);
    assert_int_equal(fake_tmap("estride"), 11);
    assert_int_equal(fake_tmap("swizzle"), 0);
    assert_int_equal(fake_tmap("interleave"), 0);
    assert_int_equal(fake_tmap("oob"), 0);
    assert_int_equal(fake_tmap("l2"), 0);
    assert_memory_equal(desc, "FAKETMAP", 8);

    /* a launcher: the signature from the IR has the map; rk_arg_tensormap passes it by value */
    char *ir = tma_ir();
    rk_artifact a = {.kernel_name = "tma_box", .ir_text = ir, .kind = RK_BINARY_PTX, .binary = (uint8_t *)tma_ptx,
                     .binary_size = sizeof tma_ptx - 1, .target = "sm_90a"};
    rk_launcher *l = NULL;
    assert_int_equal(rk_launcher_new(d, &a, &l), RK_OK);
    assert_int_equal(rk_argsig_type(rk_launcher_signature(l), 0), RK_ARG_TENSORMAP);
    assert_int_equal(rk_argsig_size(rk_launcher_signature(l)), 144);
    rk_launch_config cfg = {.grid = {1}, .block = {128}, .fence = true};
    static const int xy[][2] = {{0, 0}, {32, 16}, {64, 32}, {48, 30}, {69, 36}};   /* the last three run off the edge */
    for (size_t i = 0; i < sizeof xy / sizeof *xy; i++) {
        rk_mem_memset(d, dO, 0xff, sizeof out, NULL);
        const rk_arg args[] = {rk_arg_tensormap(desc), rk_arg_ptr(dO), rk_arg_i32(xy[i][0]), rk_arg_i32(xy[i][1])};
        assert_int_equal(rk_launcher_call(l, &cfg, args, 4), RK_OK);
        assert_int_equal(rk_mem_copy_dtoh(d, out, dO, sizeof out), RK_OK);
        expect_box(T, out, xy[i][0], xy[i][1]);
    }
    /* captured into a graph: the driver's copy of the 128 bytes replays */
    rk_stream *s = NULL;
    rk_graph *g = NULL;
    assert_int_equal(rk_stream_create(d, &s), RK_OK);
    const rk_arg named[] = {rk_arg_named("y", rk_arg_i32(8)), rk_arg_named("x", rk_arg_i32(40)),
                            rk_arg_named("out", rk_arg_ptr(dO)), rk_arg_named("tmap", rk_arg_tensormap(desc))};
    rk_launch_config cs = {.grid = {1}, .block = {128}, .stream = s};
    assert_int_equal(rk_graph_capture_begin(s), RK_OK);
    assert_int_equal(rk_launcher_call(l, &cs, named, 4), RK_OK);
    assert_int_equal(rk_graph_capture_end(s, &g), RK_OK);
    memset(desc, 0, RK_TENSORMAP_BYTES);   /* the graph holds its own copy */
    rk_mem_memset(d, dO, 0xff, sizeof out, s);
    assert_int_equal(rk_graph_launch(g, s), RK_OK);
    assert_int_equal(rk_stream_synchronize(d, s), RK_OK);
    assert_int_equal(rk_mem_copy_dtoh(d, out, dO, sizeof out), RK_OK);
    expect_box(T, out, 40, 8);
    rk_graph_destroy(g);
    rk_stream_destroy(s);
    /* a zeroed descriptor is no tensor map: the fake faults like a GPU would */
    const rk_arg zero[] = {rk_arg_tensormap(desc), rk_arg_ptr(dO), rk_arg_i32(0), rk_arg_i32(0)};
    assert_int_equal(rk_launcher_call(l, &cfg, zero, 4), RK_ERR_DEVICE);
    has("cuLaunchKernel('tma_box'");
    /* a device pointer for the map never reaches the driver */
    int launches = fake_stat("launches");
    const rk_arg wrong[] = {rk_arg_ptr(dT), rk_arg_ptr(dO), rk_arg_i32(0), rk_arg_i32(0)};
    assert_int_equal(rk_launcher_call(l, &cfg, wrong, 4), RK_ERR_INVALID);
    has("kernel 'tma_box': argument 'tmap' (#1 of 4) is tensormap in the kernel signature, but the value given is ptr");
    assert_int_equal(fake_stat("launches"), launches);
    assert_int_equal(fake_tmap("misaligned_params"), 0);
    rk_launcher_free(l);
    rk_string_free(ir);

    /* every rule is checked before the driver, and the message names it */
    static const struct {
        rk_devptr off;
        rk_scalar elem;
        uint64_t rows, cols, stride;
        uint32_t br, bc;
        rk_tensormap_swizzle sw;
        const char *msg;
    } bad[] = {
        {4, RK_S_F32, TH, TW, TSTRIDE, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_NONE, "must be a non-zero multiple of 16"},
        {0, RK_S_F32, TH, TW, 280, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_NONE, "row stride of 280 bytes must be a multiple of 16"},
        {0, RK_S_F32, TH, 80, TSTRIDE, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_NONE, "at least a row (80 x 4 bytes = 320)"},
        {0, RK_S_F32, 0, TW, TSTRIDE, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_NONE, "each dimension must be in 1..2^32"},
        {0, RK_S_F32, TH, TW, TSTRIDE, 0, BOX_C, RK_TENSORMAP_SWIZZLE_NONE, "each side must be in 1..256"},
        {0, RK_S_F32, TH, TW, TSTRIDE, BOX_R, 257, RK_TENSORMAP_SWIZZLE_NONE, "a 16 x 257 box"},
        {0, RK_S_F32, TH, TW, TSTRIDE, BOX_R, 6, RK_TENSORMAP_SWIZZLE_NONE, "a box row of 6 x 4 bytes = 24 bytes"},
        {0, RK_S_F32, TH, TW, TSTRIDE, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_64B, "128 bytes is wider than the 64-byte swizzle"},
        {0, RK_S_F32, TH, TW, TSTRIDE, BOX_R, BOX_C, (rk_tensormap_swizzle)7, "swizzle 7 is not one of"},
        {0, RK_S_I1, TH, TW, TSTRIDE, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_NONE, "element type i1 has no tensor-map form"},
    };
    encodes = fake_tmap("encodes");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rk_status st = rk_tensormap_encode_2d(d, dT + bad[i].off, bad[i].elem, bad[i].rows, bad[i].cols, bad[i].stride,
                                              bad[i].br, bad[i].bc, bad[i].sw, desc);
        if (st != RK_ERR_INVALID || !strstr(rk_error_message(), bad[i].msg))
            fail_msg("row %zu: want '%s', got %d '%s'", i, bad[i].msg, st, rk_error_message());
    }
    assert_int_equal(fake_tmap("encodes"), encodes);
    /* the other element types map onto the driver's */
    static const struct { rk_scalar s; int dt; uint32_t bc; } types[] = {
        {RK_S_F16, DT_FLOAT16, 8},   {RK_S_BF16, DT_BFLOAT16, 64},
        {RK_S_I8, DT_UINT8, 16},     {RK_S_FP8E4M3, DT_UINT8, 128},
        {RK_S_I32, DT_INT32, 4},     {RK_S_F64, DT_FLOAT64, 2},
        {RK_S_I64, DT_INT64, 2},     {RK_S_I16, DT_UINT16, 8},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        assert_int_equal(rk_tensormap_encode_2d(d, dT, types[i].s, 8, 16, TSTRIDE, 8, types[i].bc,
                                                RK_TENSORMAP_SWIZZLE_128B, desc), RK_OK);
        assert_int_equal(fake_tmap("dtype"), types[i].dt);
        assert_int_equal(fake_tmap("swizzle"), SWIZZLE_128B);
    }
    assert_int_equal(rk_tensormap_encode_2d(d, dT, RK_S_F32, TH, TW, TSTRIDE, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_NONE,
                                            NULL), RK_ERR_INVALID);
    rk_mem_free(d, dT);
    rk_mem_free(d, dO);
    rk_device_close(d);

    /* before Hopper there are no tensor maps */
    setenv("FAKE_CUDA_CC", "80", 1);
    d = open_fake();
    assert_int_equal(rk_tensormap_encode_2d(d, 256, RK_S_F32, TH, TW, TSTRIDE, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_NONE,
                                            store), RK_ERR_UNSUPPORTED);
    has("tensor maps (TMA) are not supported on this device (Fake H200 #0, cuda sm_80)");
    rk_device_close(d);
    unsetenv("FAKE_CUDA_CC");
}

/* The emulator encodes its own tensor maps (rk_emu_tensormap_encode_2d's
 * layout, which its TMA reads); the driver's rules still apply first. */
static void test_tensormap_emulator(void **state) {
    (void)state;
    rk_device_opts o = {.which = "emu:sm_90a", .quiet = true};
    rk_device *d = NULL;
    assert_int_equal(rk_device_open_opts(&o, &d), RK_OK);
    uint8_t desc[RK_TENSORMAP_BYTES], want[RK_TENSORMAP_BYTES];
    assert_int_equal(rk_tensormap_encode_2d(d, 256, RK_S_F32, TH, TW, TSTRIDE, BOX_R, BOX_C, RK_TENSORMAP_SWIZZLE_NONE,
                                            desc), RK_OK);
    assert_int_equal(rk_emu_tensormap_encode_2d(256, 4, TH, TW, TSTRIDE, BOX_R, BOX_C, 0, want), RK_OK);
    assert_memory_equal(desc, want, sizeof desc);
    assert_int_equal(rk_tensormap_encode_2d(d, 256, RK_S_F32, TH, TW, TSTRIDE, BOX_R, 64, RK_TENSORMAP_SWIZZLE_32B,
                                            desc), RK_ERR_INVALID);
    has("swizzle span");
    rk_device_close(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_and_query), cmocka_unit_test(test_open_failures), cmocka_unit_test(test_memory),
        cmocka_unit_test(test_launch),         cmocka_unit_test(test_fences),        cmocka_unit_test(test_bad_images),
        cmocka_unit_test(test_artifact),       cmocka_unit_test(test_tensormap),     cmocka_unit_test(test_tensormap_emulator),
    };
    int rc = cmocka_run_group_tests(tests, setup, NULL);
    if (fake_lib) dlclose(fake_lib);
    return rc;
}
