/* rocke tests — attention decode through the built `rocke`: build with
 * --mode decode, a verified emulator run with --page-size and --lengths
 * (random, equal, a file), the split-KV line, and the refusals (a page size
 * the instance does not serve, a length file that is short or too long for
 * the pages, --lengths on a kernel without lengths). */
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

#define ROCKE ROCKE_BINARY_DIR "/rocke"

static char tmp[64];
static char out_text[1 << 16];

/* Run a shell command in tmp (stdout+stderr captured); the exit code. */
static int sh(const char *fmt, ...) {
    char cmd[2048], full[2400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd %s && ROCKE_QUIET=1 ROCKE_DEVICE=emu %s 2>&1", tmp, cmd);
    FILE *p = popen(full, "r");
    assert_non_null(p);
    size_t n = fread(out_text, 1, sizeof out_text - 1, p);
    out_text[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state) {
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/rk_dec_XXXXXX");
    if (!mkdtemp(tmp)) return -1;
    if (access(ROCKE, X_OK)) {
        fprintf(stderr, "test_attention_decode_cli: %s is not built\n", ROCKE);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    return system(cmd);
}

static void expect(int rc, int want, const char *fragment) {
    if (rc != want || !strstr(out_text, fragment))
        fail_msg("exit %d (want %d), output lacks '%s':\n%s", rc, want, fragment, out_text);
}

static void test_build_and_run(void **state) {
    (void)state;
    expect(sh(ROCKE " build attention --mode decode --mask causal --page-size 16 --kv-splits 2 --target sm_90 "
              "--shape 3,8,2,2,50,64 --ir-only -o dec"), 0, "manifest.json");
    expect(sh(ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 --page-size 16 --lengths random --verify"), 0,
           "bad=0/");
    expect(0, 0, "split-KV: 2 splits");   /* the same run's output */
    expect(sh(ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 --lengths equal --verify"), 0, "bad=0/");
    expect(sh("printf '1, 17\\n49\\n' > lens.txt && " ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 "
              "--lengths lens.txt --verify"), 0, "bad=0/");
}

static void test_refusals(void **state) {
    (void)state;
    expect(sh(ROCKE " run dec/manifest.json --page-size 32"), 1, "serves page_size = 16 only");
    expect(sh("printf '3 4' > short.txt && " ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 "
              "--lengths short.txt"), 1, "2 lengths for B = 3");
    expect(sh("printf '3 4 65' > long.txt && " ROCKE " run dec/manifest.json --shape 3,8,2,2,50,64 "
              "--lengths long.txt"), 1, "sequence 2 has context length 65");
    expect(sh(ROCKE " run dec/manifest.json --shape 3,8,2,9,50,64"), 1, "Sq = 1..8");
    expect(sh(ROCKE " build softmax --target sm_90 --ir-only -o sm"), 0, "manifest.json");
    expect(sh(ROCKE " run sm/manifest.json --lengths equal"), 1, "no per-sequence lengths");
    expect(sh(ROCKE " run sm/manifest.json --page-size 16"), 1, "no paged cache");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_run),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
