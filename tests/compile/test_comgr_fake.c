/* rocke — the comgr toolchain driven end to end against tests/compile/
 * fake_comgr.c (no ROCm here): for comgr 2.x and 3.x numbering (their
 * action and language numbers differ) a kernel compiles to an HSACO with
 * the ISA listing, the toolchain id names the version and the compiler's
 * LLVM (found by the preprocessor probe), every comgr handle is released,
 * and a failing action reports comgr's log and still releases everything. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"
#include "base/base_int.h"

#define FAKE ROCKE_BINARY_DIR "/fakes/libfake_comgr.so"

static bool have_tools(void) {
    return system("command -v llc-22 >/dev/null 2>&1 && command -v ld.lld-22 >/dev/null 2>&1") == 0;
}

static char *fixture(const char *name) {
    char path[512], *text;
    size_t n;
    snprintf(path, sizeof path, "%s/tests/compile/fixtures/%s", ROCKE_SOURCE_DIR, name);
    assert_int_equal(rk_read_file(path, &text, &n), RK_OK);
    return text;
}

/* A private copy of the fake per version: rocke keeps each comgr it loads
 * for the process, and the loader would hand back the same instance for the
 * same file. */
static void copy_fake(const char *to) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp %s %s", FAKE, to);
    assert_int_equal(system(cmd), 0);
}

static void check_version(const char *version, const char *copy) {
    copy_fake(copy);
    setenv("FAKE_COMGR_VERSION", version, 1);
    setenv("ROCKE_COMGR_LIB", copy, 1);
    void *h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    int (*live)(void) = (int (*)(void))dlsym(h, "fake_comgr_live");
    assert_non_null(live);
    const rk_target *t = rk_target_find("gfx942");
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(t, &o), RK_OK);
    o.toolchain = RK_TOOLCHAIN_COMGR;
    o.cache = false;
    o.dump = RK_DUMP_ISA;
    FILE *sink = fopen("/dev/null", "w");
    o.dump_to = sink;
    char *ll = fixture("amd_vadd.ll");
    rk_artifact *a = NULL;
    rk_status s = rk_compile_llvm_ir(ll, "vadd", t, &o, &a);
    if (s != RK_OK) fprintf(stderr, "comgr %s: %s\n", version, rk_error_message());
    assert_int_equal(s, RK_OK);
    assert_int_equal(a->kind, RK_BINARY_HSACO);
    assert_true(a->binary_size > 4 && !memcmp(a->binary, "\x7f" "ELF", 4));
    char want[64];
    snprintf(want, sizeof want, "comgr %c.%c (LLVM 22.1.8)", version[0], version[0] == '2' ? '8' : '0');
    assert_string_equal(a->toolchain, want);
    assert_non_null(a->isa);
    assert_non_null(strstr(a->isa, "global_load_dword"));
    assert_true(a->ms.compile > 0 && a->ms.link > 0);
    rk_artifact_free(a);
    assert_int_equal(live(), 0);

    /* a failing link: comgr's log in the message, every handle released */
    setenv("FAKE_COMGR_FAIL_ACTION", version[0] == '2' ? "9" : "7", 1);
    assert_int_equal(rk_compile_llvm_ir(ll, "vadd", t, &o, &a), RK_ERR_TOOLCHAIN);
    const char *m = rk_error_message();
    assert_non_null(strstr(m, "LINK_RELOCATABLE_TO_EXECUTABLE"));
    assert_non_null(strstr(m, "injected failure"));
    assert_int_equal(live(), 0);
    unsetenv("FAKE_COMGR_FAIL_ACTION");
    fclose(sink);
    rk_free(ll, strlen(ll) + 1);
    dlclose(h);
    unlink(copy);
}

/* One comgr major through a private copy of the fake. */
static void run_major(const char *version) {
    if (!have_tools()) { fprintf(stderr, "SKIP: llc-22 / ld.lld-22 not found\n"); return; }
    char copy[] = "/tmp/rocke-comgr-XXXXXX";
    int fd = mkstemp(copy);
    assert_true(fd >= 0);
    close(fd);
    check_version(version, copy);
}

static void test_comgr_v3(void **state) { (void)state; run_major("3.0"); }
static void test_comgr_v2(void **state) { (void)state; run_major("2.8"); }

int main(void) {
    unsetenv("ROCKE_TOOLCHAIN");
    unsetenv("ROCKE_CACHE");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comgr_v3),
        cmocka_unit_test(test_comgr_v2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
