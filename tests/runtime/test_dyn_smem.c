/* rocke tests — LDS pools over 48 KiB on NVIDIA: the lowering declares them
 * as dynamic shared memory (rk_lower_query / rk_lower_llvm_ex report the
 * bytes), rk_compile records them in the artifact, and every launch passes
 * the pool plus what the caller asks for, opting in above 48 KiB — proven
 * against the fake libcuda (whose big_lds kernel fails with less than its
 * 64 KiB, as a GPU would) and run for real on the emulator, where the pool is
 * the kernel's own static LDS. */
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
#define POOL (64u * 1024u)
#define ELEMS (POOL / 4u)

static int (*fake_stat)(const char *);
static void *fake_lib;

static int setup(void **state) {
    (void)state;
    fake_lib = dlopen(FAKE, RTLD_NOW | RTLD_LOCAL);
    if (!fake_lib || !(fake_stat = (int (*)(const char *))dlsym(fake_lib, "fake_cuda_stat"))) {
        printf("the CUDA parts skip: %s is not a fake driver (built without cuda.h?)\n", FAKE);
        fake_stat = NULL;
        return 0;
    }
    setenv("ROCKE_CUDA_LIB", FAKE, 1);
    unsetenv("FAKE_CUDA_CC");
    return 0;
}

static void has(const char *what) {
    if (!strstr(rk_error_message(), what)) fail_msg("message '%s' lacks '%s'", rk_error_message(), what);
}

/* out[e] = v + (elems - 1 - e) for e < n, through an LDS array of `elems`
 * i32 that every thread writes before a barrier and reads after it. */
static rk_kernel *lds_kernel(const char *target, uint32_t elems) {
    rk_kernel *k = rk_kernel_new("big_lds");
    rk_kernel_set_attr_str(k, "target", target);
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value v = rk_add_param(k, "v", RK_T_I32, NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value lds = rk_build_smem_alloc(k, RK_T_I32, &elems, 1);
    rk_value t = rk_build_thread_id(k, 0), bd = rk_build_block_dim(k, 0);
    rk_value e = rk_for_begin(k, t, rk_const_i32(k, (int32_t)elems), bd, "e", 0, NULL, NULL, NULL);
    rk_store_smem(k, lds, &e, rk_build_add(k, v, e));
    rk_for_end(k, NULL, 0, NULL);
    rk_build_sync(k);
    e = rk_for_begin(k, t, n, bd, "r", 0, NULL, NULL, NULL);
    rk_value back = rk_build_sub(k, rk_const_i32(k, (int32_t)elems - 1), e);
    rk_store_global(k, out, e, rk_load_smem(k, lds, &back, 1));
    rk_for_end(k, NULL, 0, NULL);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) fail_msg("building big_lds: %s", rk_error_message());
    return k;
}

/* ---- the lowering's figure ----------------------------------------------------------------- */
static void test_lowering_reports_the_pool(void **state) {
    (void)state;
    static const struct { const char *target; uint32_t elems, dyn; } rows[] = {
        {"sm_90a", ELEMS, POOL},            /* 64 KiB: dynamic */
        {"sm_90", ELEMS + 3, POOL + 16},    /* rounded up to 16 bytes */
        {"sm_80", 12 * 1024, 0},            /* exactly 48 KiB stays static */
        {"sm_80", 12 * 1024 + 1, 48 * 1024 + 16},
        {"gfx942", ELEMS, 0},               /* AMD pools are always static */
        {"gfx950", 40000, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const rk_target *t = rk_target_find(rows[i].target);
        rk_kernel *k = lds_kernel(rows[i].target, rows[i].elems);
        rk_lower_info q, l;
        assert_int_equal(rk_lower_query(k, t, &q), RK_OK);
        uint32_t bytes = (rows[i].elems * 4 + 15) / 16 * 16;
        if (q.lds_pool_bytes != bytes || q.dyn_smem_min != rows[i].dyn)
            fail_msg("%s, %u elements: pool %u dyn %u, want %u and %u", rows[i].target, rows[i].elems,
                     q.lds_pool_bytes, q.dyn_smem_min, bytes, rows[i].dyn);
        assert_int_equal(q.lds_pool_align, 16);
        uint32_t dyn = 1;
        assert_int_equal(rk_lower_dyn_smem_bytes(k, t, &dyn), RK_OK);
        assert_int_equal(dyn, rows[i].dyn);
        /* the lowering itself reports the same, and the text agrees */
        char *ll = NULL;
        assert_int_equal(rk_lower_llvm_ex(k, t, RK_LLVM22, &ll, &l), RK_OK);
        assert_memory_equal(&q, &l, sizeof q);
        assert_int_equal(strstr(ll, "@smem_dyn_big_lds = external addrspace(3) global [0 x i8]") != NULL, dyn != 0);
        rk_string_free(ll);
        rk_kernel_free(k);
    }
    /* no LDS at all; refusals name the problem */
    rk_kernel *k = lds_kernel("sm_90a", ELEMS);
    rk_lower_info q;
    assert_int_equal(rk_lower_query(k, NULL, &q), RK_ERR_INVALID);
    has("the target is NULL");
    assert_int_equal(rk_lower_query(k, rk_target_find("sm_90a"), NULL), RK_ERR_INVALID);
    rk_kernel_free(k);
    k = lds_kernel("sm_90a", 60000);   /* 240000 bytes: more than the 232448 an sm_90a block has */
    assert_int_equal(rk_lower_query(k, rk_target_find("sm_90a"), &q), RK_ERR_UNSUPPORTED);
    has("need 240000 bytes");
    assert_int_equal(q.dyn_smem_min, 0);
    rk_kernel_free(k);
}

/* ---- the CUDA launch path (fake driver) -------------------------------------------------------------- */
static const char ptx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                          ".extern .shared .align 16 .b8 smem_dyn_big_lds[];\n"
                          ".visible .entry big_lds(.param .u64 out, .param .u32 v, .param .u32 n)\n{ ret; }\n";

static rk_device *open_fake(void) {
    rk_device *d = NULL;
    if (rk_device_open("cuda", &d) != RK_OK) fail_msg("open: %s", rk_error_message());
    return d;
}

static void test_cuda_launch_adds_the_pool(void **state) {
    (void)state;
    if (!fake_stat) skip();
    rk_kernel *k = lds_kernel("sm_90a", ELEMS);
    char *ir = rk_serialize(k);
    rk_kernel_free(k);
    assert_non_null(ir);
    rk_device *d = open_fake();
    rk_devptr out;
    assert_int_equal(rk_mem_alloc(d, 4096, &out), RK_OK);
    const rk_arg args[] = {rk_arg_ptr(out), rk_arg_i32(1), rk_arg_i32(64)};

    /* an artifact whose IR says nothing about the pool: the runtime lays it out */
    rk_artifact a = {.kernel_name = "big_lds", .ir_text = ir, .kind = RK_BINARY_PTX, .binary = (uint8_t *)ptx,
                     .binary_size = sizeof ptx - 1, .target = "sm_90a"};
    rk_launcher *l = NULL;
    assert_int_equal(rk_launcher_new(d, &a, &l), RK_OK);
    assert_int_equal(rk_function_dyn_smem_min(rk_launcher_function(l)), POOL);
    rk_launch_config cfg = {.grid = {1}, .block = {256}, .fence = true};
    int set = fake_stat("set_attr");
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_OK);
    assert_int_equal(fake_stat("last_smem"), POOL);
    assert_int_equal(fake_stat("set_attr"), set + 1);       /* 64 KiB is above the default 48 */
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_OK);
    assert_int_equal(fake_stat("set_attr"), set + 1);       /* once per size */
    /* the caller's bytes come after the pool */
    cfg.dyn_smem = 1000;
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_OK);
    assert_int_equal(fake_stat("last_smem"), POOL + 1000);
    assert_int_equal(fake_stat("set_attr"), set + 2);
    /* pool + request over the block's limit: refused before the driver, naming both */
    int launches = fake_stat("launches");
    cfg.dyn_smem = 227 * 1024 - POOL + 1;
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_ERR_INVALID);
    has("the kernel's 65536-byte LDS pool + 166913 asked for");
    has("exceed the 232448 bytes a block may use");
    assert_int_equal(fake_stat("launches"), launches);
    /* graph capture records the launch with the pool too */
    rk_stream *s = NULL;
    rk_graph *g = NULL;
    assert_int_equal(rk_stream_create(d, &s), RK_OK);
    cfg = (rk_launch_config){.grid = {1}, .block = {128}, .stream = s};
    assert_int_equal(rk_graph_capture_begin(s), RK_OK);
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_OK);
    assert_int_equal(rk_graph_capture_end(s, &g), RK_OK);
    assert_int_equal(rk_graph_launch(g, s), RK_OK);
    assert_int_equal(rk_stream_synchronize(d, s), RK_OK);
    rk_graph_destroy(g);
    rk_stream_destroy(s);
    rk_launcher_free(l);

    /* the artifact's own figure (no IR: compiled elsewhere) */
    a.ir_text = NULL;
    a.dyn_smem_min = POOL;
    assert_int_equal(rk_launcher_new(d, &a, &l), RK_OK);
    rk_function *f = rk_launcher_function(l);
    assert_int_equal(rk_function_dyn_smem_min(f), POOL);
    rk_launcher_free(l);

    /* a bare PTX image knows nothing: the kernel runs past its shared memory */
    rk_argsig *sig = NULL;
    const char *names[] = {"out", "v", "n"}, *types[] = {"ptr<i32,global>", "i32", "i32"};
    assert_int_equal(rk_argsig_new(names, types, 3, &sig), RK_OK);
    rk_argpack p;
    rk_argpack_init(&p);
    assert_int_equal(rk_args_pack(sig, args, 3, &p), RK_OK);
    rk_module_image img = {.kind = RK_IMAGE_PTX, .data = ptx, .size = sizeof ptx - 1, .target = "sm_90a"};
    rk_module *m = NULL;
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_OK);
    assert_int_equal(rk_module_function(m, "big_lds", &f), RK_OK);
    assert_int_equal(rk_function_dyn_smem_min(f), 0);
    const uint32_t g1[3] = {1, 1, 1}, b1[3] = {64, 1, 1};
    assert_int_equal(rk_launch(f, g1, b1, 0, NULL, p.params), RK_ERR_DEVICE);
    has("CUDA_ERROR_ILLEGAL_ADDRESS");
    rk_module_unload(m);
    /* ... which the image's figure (a manifest's dyn_smem_min) fixes */
    img.dyn_smem_min = POOL;
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_OK);
    assert_int_equal(rk_module_function(m, "big_lds", &f), RK_OK);
    assert_int_equal(rk_launch(f, g1, b1, 0, NULL, p.params), RK_OK);
    assert_int_equal(fake_stat("last_smem"), POOL);
    rk_module_unload(m);
    /* ... and so does the kernel IR beside it */
    rk_kernel *kk = lds_kernel("sm_90a", ELEMS);
    img = (rk_module_image){.kind = RK_IMAGE_PTX, .data = ptx, .size = sizeof ptx - 1, .kernel = kk};
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_OK);
    assert_int_equal(rk_module_function(m, "big_lds", &f), RK_OK);
    assert_int_equal(rk_function_dyn_smem_min(f), POOL);
    assert_int_equal(rk_launch(f, g1, b1, 8, NULL, p.params), RK_OK);
    assert_int_equal(fake_stat("last_smem"), POOL + 8);
    rk_module_unload(m);
    rk_kernel_free(kk);
    rk_argpack_free(&p);
    rk_argsig_free(sig);
    rk_mem_free(d, out);
    rk_device_close(d);
    rk_string_free(ir);
}

/* rk_compile for sm_90a records the pool, the PTX declares it extern, and the
 * compiled artifact launches on the fake with it. */
static void test_compiled_artifact(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    rk_kernel *k = lds_kernel("sm_90a", ELEMS);
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(t, &o), RK_OK);
    o.cache = false;
    rk_artifact *a = NULL;
    rk_status s = rk_compile(k, t, &o, &a);
    rk_kernel_free(k);
    if (s == RK_ERR_UNSUPPORTED || s == RK_ERR_NOT_FOUND) {
        printf("SKIP: no NVPTX toolchain: %s\n", rk_error_message());
        skip();
    }
    assert_int_equal(s, RK_OK);
    printf("compiled with %s (%s)\n", a->toolchain, a->cubin ? "a cubin" : "PTX only");
    assert_int_equal(a->dyn_smem_min, POOL);
    assert_non_null(strstr((const char *)a->binary, ".extern .shared"));
    if (fake_stat) {
        rk_device *d = open_fake();
        rk_launcher *l = NULL;
        assert_int_equal(rk_launcher_new(d, a, &l), RK_OK);   /* the cubin when ptxas made one */
        rk_devptr out;
        assert_int_equal(rk_mem_alloc(d, 256, &out), RK_OK);
        const rk_arg args[] = {rk_arg_ptr(out), rk_arg_i32(3), rk_arg_i32(64)};
        rk_launch_config cfg = {.grid = {1}, .block = {256}, .fence = true};
        assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_OK);
        assert_int_equal(fake_stat("last_smem"), POOL);
        rk_launcher_free(l);
        rk_mem_free(d, out);
        rk_device_close(d);
    }
    rk_artifact_free(a);
}

/* ---- the emulator: the pool is the kernel's own LDS, nothing is added ------------------------------- */
static void test_emulator_runs_it(void **state) {
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    printf("test_emulator_runs_it seed %u\n", seed);
    srand(seed);
    rk_device_opts opts = {.which = "emu:sm_90a", .quiet = true};
    rk_device *d = NULL;
    assert_int_equal(rk_device_open_opts(&opts, &d), RK_OK);
    rk_kernel *k = lds_kernel("sm_90a", ELEMS);
    rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = k, .target = "sm_90a", .dyn_smem_min = POOL};
    rk_launcher *l = NULL;
    assert_int_equal(rk_launcher_new_image(d, &img, NULL, &l), RK_OK);
    assert_int_equal(rk_function_dyn_smem_min(rk_launcher_function(l)), 0);
    enum { N = 3001 };
    int32_t host[N];
    rk_devptr out;
    assert_int_equal(rk_mem_alloc(d, sizeof host, &out), RK_OK);
    assert_int_equal(rk_mem_memset(d, out, 0xa5, sizeof host, NULL), RK_OK);
    int32_t v = rand() % 100000 - 50000;
    const rk_arg args[] = {rk_arg_ptr(out), rk_arg_i32(v), rk_arg_i32(N)};
    /* an odd block, and dynamic LDS on top of the 64 KiB pool */
    rk_launch_config cfg = {.grid = {1}, .block = {96}, .dyn_smem = 4096, .fence = true};
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_OK);
    assert_int_equal(rk_mem_copy_dtoh(d, host, out, sizeof host), RK_OK);
    for (int32_t e = 0; e < N; e++)
        if (host[e] != v + (int32_t)ELEMS - 1 - e) fail_msg("out[%d] = %d, want %d", e, host[e], v + (int32_t)ELEMS - 1 - e);
    /* the emulator's own limit still applies: pool + dynamic over 227 KiB */
    cfg.dyn_smem = 200 * 1024;
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_ERR_INVALID);
    has("LDS");
    rk_launcher_free(l);
    rk_mem_free(d, out);
    rk_device_close(d);
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lowering_reports_the_pool), cmocka_unit_test(test_cuda_launch_adds_the_pool),
        cmocka_unit_test(test_compiled_artifact),         cmocka_unit_test(test_emulator_runs_it),
    };
    int rc = cmocka_run_group_tests(tests, setup, NULL);
    if (fake_lib) dlclose(fake_lib);
    return rc;
}
