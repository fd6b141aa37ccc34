/* rocke tests — bounded reads (src/base/file.c), issue 20 item 8: the limit
 * (ROCKE_INPUT_LIMIT_MIB) holds for regular files (checked before reading),
 * /dev/zero and FIFOs (checked while reading); a file of exactly the limit
 * is read; regular-only reads refuse FIFOs, devices and stdin; folders and
 * malformed limits get a message naming them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/base_int.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rocke-read-test-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    unsetenv("ROCKE_INPUT_LIMIT_MIB");
    return system(cmd) == 0 ? 0 : -1;
}

/* A file of n random bytes; returns its bytes (malloc). */
static unsigned char *make_file(const char *path, size_t n) {
    unsigned char *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)rand();
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
    return p;
}

static void test_limit_on_regular_files(void **state) {
    (void)state;
    setenv("ROCKE_INPUT_LIMIT_MIB", "1", 1);
    char p[128];
    snprintf(p, sizeof p, "%s/exact", dir);
    unsigned char *want = make_file(p, 1u << 20);
    char *got;
    size_t n;
    assert_int_equal(rk_read_file(p, &got, &n), RK_OK);
    assert_int_equal(n, 1u << 20);
    assert_memory_equal(got, want, n);
    assert_int_equal(got[n], '\0');
    rk_free(got, n + 1);
    assert_int_equal(rk_read_regular_file(p, &got, &n), RK_OK);
    rk_free(got, n + 1);
    free(want);
    snprintf(p, sizeof p, "%s/over", dir);
    free(make_file(p, (1u << 20) + 1));
    assert_int_equal(rk_read_file(p, &got, &n), RK_ERR_IO);
    assert_null(got);
    assert_non_null(strstr(rk_error_message(), "larger than the input limit of 1 MiB"));
    assert_non_null(strstr(rk_error_message(), "ROCKE_INPUT_LIMIT_MIB"));
    /* odd sizes below the limit come back exactly */
    size_t odd = 1 + 2 * (size_t)(rand() % 200000);
    snprintf(p, sizeof p, "%s/odd", dir);
    want = make_file(p, odd);
    assert_int_equal(rk_read_file(p, &got, &n), RK_OK);
    assert_int_equal(n, odd);
    assert_memory_equal(got, want, odd);
    rk_free(got, n + 1);
    free(want);
    snprintf(p, sizeof p, "%s/empty", dir);
    free(make_file(p, 0));
    assert_int_equal(rk_read_file(p, &got, &n), RK_OK);
    assert_int_equal(n, 0);
    rk_free(got, 1);
    unsetenv("ROCKE_INPUT_LIMIT_MIB");
}

static void test_endless_stream(void **state) {
    (void)state;
    setenv("ROCKE_INPUT_LIMIT_MIB", "2", 1);
    char *got;
    size_t n;
    assert_int_equal(rk_read_file("/dev/zero", &got, &n), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "'/dev/zero' gives more bytes than the input limit of 2 MiB"));
    assert_int_equal(rk_read_regular_file("/dev/zero", &got, &n), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "character device"));
    /* /dev/null is an empty stream */
    assert_int_equal(rk_read_file("/dev/null", &got, &n), RK_OK);
    assert_int_equal(n, 0);
    rk_free(got, 1);
    assert_int_equal(rk_read_regular_file("-", &got, &n), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "standard input has no size"));
    unsetenv("ROCKE_INPUT_LIMIT_MIB");
}

/* A FIFO fed by a child: read in full under the limit, refused past it,
 * refused outright where a size is needed. */
static void feed_fifo(const char *p, size_t n, pid_t *child) {
    *child = fork();
    assert_true(*child >= 0);
    if (*child == 0) {
        int fd = open(p, O_WRONLY);
        char buf[4096];
        memset(buf, 'x', sizeof buf);
        while (fd >= 0 && n) {
            size_t k = n < sizeof buf ? n : sizeof buf;
            ssize_t w = write(fd, buf, k);
            if (w <= 0) break;
            n -= (size_t)w;
        }
        _exit(0);
    }
}

static void test_fifo(void **state) {
    (void)state;
    setenv("ROCKE_INPUT_LIMIT_MIB", "1", 1);
    char p[128];
    snprintf(p, sizeof p, "%s/fifo", dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    pid_t child;
    size_t want = 300001;
    feed_fifo(p, want, &child);
    char *got;
    size_t n;
    assert_int_equal(rk_read_file(p, &got, &n), RK_OK);
    assert_int_equal(n, want);
    assert_int_equal(got[0], 'x');
    assert_int_equal(got[n - 1], 'x');
    rk_free(got, n + 1);
    waitpid(child, NULL, 0);
    feed_fifo(p, (3u << 20), &child);
    assert_int_equal(rk_read_file(p, &got, &n), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "gives more bytes than the input limit of 1 MiB"));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    /* where a size is needed the FIFO is refused before anything is read
     * (opening for reading still waits for a writer, as cat does) */
    feed_fifo(p, 10, &child);
    assert_int_equal(rk_read_regular_file(p, &got, &n), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "FIFO"));
    assert_non_null(strstr(rk_error_message(), "a regular file is needed"));
    waitpid(child, NULL, 0);
    unsetenv("ROCKE_INPUT_LIMIT_MIB");
}

static void test_bad_paths_and_limits(void **state) {
    (void)state;
    char *got;
    size_t n;
    assert_int_equal(rk_read_file(dir, &got, &n), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "a folder, not a file"));
    char p[128];
    snprintf(p, sizeof p, "%s/absent", dir);
    assert_int_equal(rk_read_file(p, &got, &n), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "cannot open"));
    static const char *const bad[] = {"0", "-1", "abc", "12x", "1048577", "99999999999999999999999"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("ROCKE_INPUT_LIMIT_MIB", bad[i], 1);
        assert_int_equal(rk_read_file("/dev/null", &got, &n), RK_ERR_INVALID);
        assert_non_null(strstr(rk_error_message(), "ROCKE_INPUT_LIMIT_MIB"));
        assert_non_null(strstr(rk_error_message(), "legal: 1 to 1048576"));
    }
    size_t lim;
    setenv("ROCKE_INPUT_LIMIT_MIB", "1048576", 1);
    assert_int_equal(rk_input_limit(&lim), RK_OK);
    assert_int_equal(lim, (size_t)1 << 40);
    unsetenv("ROCKE_INPUT_LIMIT_MIB");
    assert_int_equal(rk_input_limit(&lim), RK_OK);
    assert_int_equal(lim, (size_t)256 << 20);
}

int main(void) {
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_on_regular_files),
        cmocka_unit_test(test_endless_stream),
        cmocka_unit_test(test_fifo),
        cmocka_unit_test(test_bad_paths_and_limits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
