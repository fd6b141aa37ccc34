/* rocke tests — the HIP backend against a fake libamdhip64 (tests/runtime/
 * fake_hip.c, loaded through ROCKE_HIP_LIB): the gfx name found in the opaque
 * properties buffer, CU count and L2 by attribute number, wave size and LDS
 * from the target catalog, memory, HSACO modules kept alive while loaded,
 * kernelParams launches through a launcher, events and timing, and the
 * messages for a missing kernel, a code object for another chip, another
 * device's binary, a runtime without graph capture and a failing hipInit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <cmocka.h>

#include "rocke/rocke.h"

#define FAKE ROCKE_BINARY_DIR "/fakes/libfake_hip.so"

static int (*fake_stat)(const char *);
static void *fake_lib;

static int setup(void **state) {
    (void)state;
    fake_lib = dlopen(FAKE, RTLD_NOW | RTLD_LOCAL);
    void *sym = fake_lib ? dlsym(fake_lib, "fake_hip_stat") : NULL;
    memcpy(&fake_stat, &sym, sizeof sym);
    setenv("ROCKE_HIP_LIB", FAKE, 1);
    unsetenv("FAKE_HIP_INIT");
    unsetenv("FAKE_HIP_ARCH");
    return 0;
}

static void has(const char *what) {
    if (!strstr(rk_error_message(), what)) fail_msg("message '%s' lacks '%s'", rk_error_message(), what);
}

static rk_device *open_fake(void) {
    rk_device *d = NULL;
    if (rk_device_open("hip", &d) != RK_OK) fail_msg("open: %s", rk_error_message());
    return d;
}

static void test_open(void **state) {
    (void)state;
    assert_non_null(fake_stat);
    rk_device *d = open_fake();
    const rk_device_info *in = rk_device_info_of(d);
    assert_int_equal(in->kind, RK_DEVICE_HIP);
    assert_string_equal(in->name, "AMD Instinct MI300X (fake)");
    assert_string_equal(in->arch, "gfx942:sramecc+:xnack-");
    assert_string_equal(in->target, "gfx942");
    assert_int_equal(in->sm_count, 304);
    assert_int_equal(in->l2_bytes, 4 << 20);
    assert_int_equal(in->warp_size, 64);
    assert_int_equal(in->smem_per_block, 65536);
    assert_int_equal(in->max_threads_per_block, 1024);
    assert_true(in->total_mem == (uint64_t)192 << 30);
    assert_non_null(strstr(in->driver, "HIP 6.4"));
    rk_device_close(d);
    /* a chip outside the catalog still opens, with no target */
    setenv("FAKE_HIP_ARCH", "gfx1201", 1);
    d = open_fake();
    assert_string_equal(rk_device_target(d), "");
    assert_int_equal(rk_device_info_of(d)->warp_size, 32);
    rk_device_close(d);
    unsetenv("FAKE_HIP_ARCH");
    setenv("FAKE_HIP_INIT", "100", 1);
    assert_int_equal(rk_device_open("hip", &d), RK_ERR_DEVICE);
    has("hipInit (" FAKE ") failed: hipError 100 hipErrorNoDevice (no ROCm-capable device is detected)");
    unsetenv("FAKE_HIP_INIT");
    assert_int_equal(rk_device_open("hip:1", &d), RK_ERR_DEVICE);
    has("HIP device 1 asked for, but there is only 1");
}

static const char hsaco[] = "\177ELF fake code object .entry fill( .entry other(";

static void test_modules_and_launch(void **state) {
    (void)state;
    assert_non_null(fake_stat);
    rk_device *d = open_fake();
    /* the image is copied: the caller's bytes may go away right after load */
    char *bytes = malloc(sizeof hsaco);
    memcpy(bytes, hsaco, sizeof hsaco);
    rk_module_image img = {.kind = RK_IMAGE_HSACO, .data = bytes, .size = sizeof hsaco, .target = "gfx942"};
    rk_launcher *l = NULL;
    assert_int_equal(rk_launcher_new_image(d, &img, "fill", &l), RK_OK);
    memset(bytes, 0, sizeof hsaco);
    free(bytes);
    const char *names[] = {"out", "v", "n"}, *types[] = {"ptr<i32,global>", "i32", "i32"};
    rk_argsig *sig = NULL;
    assert_int_equal(rk_argsig_new(names, types, 3, &sig), RK_OK);
    assert_int_equal(rk_launcher_set_signature(l, sig), RK_OK);
    rk_argsig_free(sig);
    uint32_t host[300];
    rk_devptr out;
    assert_int_equal(rk_mem_alloc(d, sizeof host, &out), RK_OK);
    assert_int_equal(rk_mem_memset(d, out, 0, sizeof host, NULL), RK_OK);
    const rk_arg args[] = {rk_arg_named("n", rk_arg_i32(290)), rk_arg_named("v", rk_arg_i32(7)),
                           rk_arg_named("out", rk_arg_ptr(out))};
    rk_launch_config cfg = {.grid = {2}, .block = {256}, .fence = true};
    int syncs = fake_stat("syncs");
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_OK);
    assert_int_equal(fake_stat("syncs"), syncs + 1);
    assert_int_equal(rk_mem_copy_dtoh(d, host, out, sizeof host), RK_OK);
    for (uint32_t i = 0; i < 300; i++) assert_int_equal(host[i], i < 290 ? 7 + 2 * i : 0);
    /* the kernel's own block limit (256 from hipFuncGetAttribute) */
    cfg.block[0] = 512;
    assert_int_equal(rk_launcher_call(l, &cfg, args, 3), RK_ERR_INVALID);
    has("exceeds the limit of 256");
    cfg.block[0] = 256;
    /* events and timing */
    rk_time_opts o = {.warmup = 1, .iters = 4};
    rk_time_result r;
    assert_int_equal(rk_time_launcher(l, &cfg, args, 3, &o, &r), RK_OK);
    assert_int_equal(r.samples, 4);
    assert_int_equal(r.clock, RK_CLOCK_GPU_EVENTS);
    /* this runtime has no graph capture: said plainly */
    o.graph = true;
    assert_int_equal(rk_time_launcher(l, &cfg, args, 3, &o, &r), RK_ERR_UNSUPPORTED);
    has("lacks the graph-capture entry points");
    /* a failing launch names the call and the error */
    const rk_arg bad[] = {rk_arg_ptr(0), rk_arg_i32(7), rk_arg_i32(10)};
    assert_int_equal(rk_launcher_call(l, &cfg, bad, 3), RK_ERR_DEVICE);
    has("hipModuleLaunchKernel('fill', grid 2x1x1, block 256x1x1, 0 bytes dynamic LDS) failed: hipError 700");
    rk_launcher_free(l);

    /* lookups and images that do not fit */
    img.data = hsaco;
    rk_module *m = NULL;
    rk_function *f = NULL;
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_OK);
    assert_int_equal(rk_module_function(m, "other", &f), RK_OK);
    assert_int_equal(rk_module_function(m, "nope", &f), RK_ERR_NOT_FOUND);
    has("hipModuleGetFunction('nope') failed: hipError 500 hipErrorNotFound");
    has("wrong kernel name, or two HIP runtimes loaded in one process");
    rk_module_unload(m);
    img.target = "gfx950";
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_ERR_INVALID);
    has("built for gfx950 but the device (AMD Instinct MI300X (fake)) is gfx942");
    img.target = "sm_90a";
    assert_int_equal(rk_module_load_image(d, &img, &m), RK_ERR_INVALID);
    has("built for sm_90a, which a HIP device");
    static const char ptx[] = ".version 8.0";
    rk_module_image p = {.kind = RK_IMAGE_PTX, .data = ptx, .size = sizeof ptx - 1};
    assert_int_equal(rk_module_load_image(d, &p, &m), RK_ERR_INVALID);
    has("cannot load the ptx image on a HIP device");
    rk_module_image notelf = {.kind = RK_IMAGE_HSACO, .data = ptx, .size = sizeof ptx - 1};
    assert_int_equal(rk_module_load_image(d, &notelf, &m), RK_ERR_INVALID);
    has("is not an ELF code object");
    rk_mem_free(d, out);
    rk_device_close(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_open), cmocka_unit_test(test_modules_and_launch)};
    int rc = cmocka_run_group_tests(tests, setup, NULL);
    if (fake_lib) dlclose(fake_lib);
    return rc;
}
