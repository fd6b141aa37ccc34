/* rocke tests — running the built `rocke` (or any shell command) with its
 * standard output and error captured apart, for the CLI tests. */
#ifndef ROCKE_TEST_CLI_RUN_H
#define ROCKE_TEST_CLI_RUN_H

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

#endif
