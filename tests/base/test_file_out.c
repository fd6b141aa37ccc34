/* rocke tests — the output writer (src/base/file_out.c), issue 20 item 3:
 * a FIFO with a reader and /dev/null are written through and stay what they
 * were; a FIFO without a reader, /dev/full, a folder, a socket and a dangling
 * link are refused with a message naming the problem; a regular file is
 * replaced whole (no temporary left), through a link at the link's target. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/base_int.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rocke-out-test-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* Random bytes of a random odd length, fresh each run. */
static unsigned char *random_bytes(size_t *n) {
    *n = 1000 + 2 * (size_t)(rand() % 40000) + 1;
    unsigned char *p = malloc(*n);
    for (size_t i = 0; i < *n; i++) p[i] = (unsigned char)rand();
    return p;
}

/* Entries of dir whose name contains ".tmp." */
static int temporaries(void) {
    char cmd[160];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '\\.tmp\\.'", dir);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (p && fscanf(p, "%d", &n) != 1) n = -1;
    if (p) pclose(p);
    return n;
}

static void read_back(const char *path, unsigned char **data, size_t *n) {
    char *d;
    assert_int_equal(rk_read_file(path, &d, n), RK_OK);
    *data = (unsigned char *)d;
}

static void test_regular_replaced_whole(void **state) {
    (void)state;
    char p[128];
    path_in(p, sizeof p, "plain.bin");
    size_t n1, n2;
    unsigned char *a = random_bytes(&n1), *b = random_bytes(&n2);
    assert_int_equal(rk_write_file_atomic(p, a, n1), RK_OK);
    struct stat st1, st2;
    assert_int_equal(stat(p, &st1), 0);
    assert_int_equal(rk_write_file_atomic(p, b, n2), RK_OK);
    assert_int_equal(stat(p, &st2), 0);
    assert_true(S_ISREG(st2.st_mode));
    assert_int_not_equal(st1.st_ino, st2.st_ino); /* replaced by rename, not rewritten in place */
    unsigned char *got;
    size_t n;
    read_back(p, &got, &n);
    assert_int_equal(n, n2);
    assert_memory_equal(got, b, n2);
    rk_free(got, n + 1);
    assert_int_equal(temporaries(), 0);
    free(a);
    free(b);
}

static void test_link_kept(void **state) {
    (void)state;
    char target[128], link[128];
    path_in(target, sizeof target, "target.txt");
    path_in(link, sizeof link, "link.txt");
    assert_int_equal(rk_write_file_atomic(target, "old", 3), RK_OK);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(rk_write_file_atomic(link, "new text", 8), RK_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    unsigned char *got;
    size_t n;
    read_back(target, &got, &n);
    assert_int_equal(n, 8);
    assert_memory_equal(got, "new text", 8);
    rk_free(got, n + 1);
    /* a link to nothing is refused, not replaced */
    char dangling[128], nowhere[128];
    path_in(dangling, sizeof dangling, "dangling");
    path_in(nowhere, sizeof nowhere, "nowhere/x");
    assert_int_equal(symlink(nowhere, dangling), 0);
    assert_int_equal(rk_write_file_atomic(dangling, "x", 1), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "symbolic link to a missing file"));
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(temporaries(), 0);
}

static void test_fifo_written_through(void **state) {
    (void)state;
    char p[128], copy[128];
    path_in(p, sizeof p, "pipe");
    path_in(copy, sizeof copy, "pipe.copy");
    assert_int_equal(mkfifo(p, 0600), 0);
    size_t n;
    unsigned char *data = random_bytes(&n);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* the reader: copy the FIFO into a file */
        char cmd[300];
        snprintf(cmd, sizeof cmd, "cat '%s' > '%s'", p, copy);
        _exit(system(cmd) == 0 ? 0 : 1);
    }
    /* wait for the reader to open its end (the writer never waits) */
    rk_status s = RK_ERR_IO;
    for (int i = 0; i < 500 && s != RK_OK; i++) {
        s = rk_write_file_atomic(p, data, n);
        if (s != RK_OK) {
            assert_non_null(strstr(rk_error_message(), "no reader"));
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        }
    }
    assert_int_equal(s, RK_OK);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    unsigned char *got;
    size_t m;
    read_back(copy, &got, &m);
    assert_int_equal(m, n);
    assert_memory_equal(got, data, n);
    rk_free(got, m + 1);
    free(data);
    assert_int_equal(temporaries(), 0);
}

static void test_fifo_without_reader_refused(void **state) {
    (void)state;
    char p[128];
    path_in(p, sizeof p, "lonely");
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(rk_write_file_atomic(p, "abc", 3), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "FIFO"));
    assert_non_null(strstr(rk_error_message(), "no reader"));
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(temporaries(), 0);
}

static void test_devices(void **state) {
    (void)state;
    struct stat before, after;
    assert_int_equal(stat("/dev/null", &before), 0);
    assert_int_equal(rk_write_file_atomic("/dev/null", "discarded", 9), RK_OK);
    assert_int_equal(stat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_int_equal(before.st_rdev, after.st_rdev);
    assert_int_equal(before.st_ino, after.st_ino);
    if (stat("/dev/full", &before) == 0 && S_ISCHR(before.st_mode)) {
        assert_int_equal(rk_write_file_atomic("/dev/full", "x", 1), RK_ERR_IO);
        assert_non_null(strstr(rk_error_message(), "/dev/full"));
        assert_non_null(strstr(rk_error_message(), "No space"));
        assert_int_equal(stat("/dev/full", &after), 0);
        assert_true(S_ISCHR(after.st_mode));
    }
}

static void test_folder_and_socket_refused(void **state) {
    (void)state;
    assert_int_equal(rk_write_file_atomic(dir, "x", 1), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "is a folder"));
    char p[128];
    path_in(p, sizeof p, "sock");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    assert_true(strlen(p) < sizeof a.sun_path);
    memcpy(a.sun_path, p, strlen(p) + 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(rk_write_file_atomic(p, "x", 1), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "a socket"));
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    close(fd);
    /* an empty name and a file inside a missing folder */
    assert_int_equal(rk_write_file_atomic("", "x", 1), RK_ERR_INVALID);
    path_in(p, sizeof p, "missing/x");
    assert_int_equal(rk_write_file_atomic(p, "x", 1), RK_ERR_IO);
    assert_non_null(strstr(rk_error_message(), "missing/x"));
}

/* Two files under way at once, one abandoned: the abandoned one leaves nothing. */
static void test_discard(void **state) {
    (void)state;
    char p[128], q[128];
    path_in(p, sizeof p, "kept");
    path_in(q, sizeof q, "dropped");
    rk_outfile a, b;
    assert_int_equal(rk_outfile_open(&a, p), RK_OK);
    assert_int_equal(rk_outfile_open(&b, q), RK_OK);
    assert_int_equal(rk_outfile_write(&a, "1234", 4), RK_OK);
    assert_int_equal(rk_outfile_write(&b, "5678", 4), RK_OK);
    assert_int_equal(access(p, F_OK), -1); /* nothing visible before the commit */
    rk_outfile_discard(&b);
    assert_int_equal(rk_outfile_commit(&a), RK_OK);
    assert_int_equal(access(p, F_OK), 0);
    assert_int_equal(access(q, F_OK), -1);
    assert_int_equal(temporaries(), 0);
}

int main(void) {
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular_replaced_whole),
        cmocka_unit_test(test_link_kept),
        cmocka_unit_test(test_fifo_written_through),
        cmocka_unit_test(test_fifo_without_reader_refused),
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_folder_and_socket_refused),
        cmocka_unit_test(test_discard),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
