/* rocke tests — running the built `rocke` (or any shell command) with its
 * standard output and error captured apart, for the CLI tests. */
#ifndef ROCKE_TEST_CLI_RUN_H
#define ROCKE_TEST_CLI_RUN_H

#include <stdarg.h>
#include <stddef.h>

/* What one command did: its exit status (-1 when killed) and both streams,
 * NUL-terminated (at most 1 MiB each). */
typedef struct rk_test_run {
    int rc;
    char *out, *err;
} rk_test_run;

/* Run `cmd` with /bin/sh in folder dir (NULL: the current one). */
rk_test_run rk_test_sh(const char *dir, const char *cmd);
void rk_test_run_free(rk_test_run *r);
/* How often `needle` occurs in `s`. */
unsigned rk_test_count(const char *s, const char *needle);
/* rk_test_sh with the command made printf-style (at most 4 KiB). */
rk_test_run rk_test_vshf(const char *dir, const char *fmt, va_list ap);
rk_test_run rk_test_shf(const char *dir, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Fail the running cmocka test unless r exited with rc and its stdout and
 * stderr hold in_out and in_err (NULL: anything); frees r. */
void rk_test_expect(rk_test_run r, int rc, const char *in_out, const char *in_err);
/* A fresh folder $TMPDIR/<tag>-XXXXXX (else /tmp) into dir, then `cmd` run
 * in it (NULL: none; its output is shown when it fails): a cmocka group
 * setup's 0, or not. rk_test_remove_dir deletes the folder (teardown). */
int rk_test_make_dir(char *dir, size_t cap, const char *tag, const char *cmd);
int rk_test_remove_dir(const char *dir);

#endif
