/* rocke tests — run a shell command with stdout and stderr captured apart
 * (two temporary files, read back whole). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/cli_run.h"

enum { CAP = 1 << 20 };

static char *slurp(const char *path) {
    char *buf = calloc(1, CAP + 1);
    FILE *f = fopen(path, "rb");
    if (buf && f) buf[fread(buf, 1, CAP, f)] = '\0';
    if (f) fclose(f);
    unlink(path);
    return buf;
}

rk_test_run rk_test_sh(const char *dir, const char *cmd) {
    char out[] = "/tmp/rk_test_out_XXXXXX", err[] = "/tmp/rk_test_err_XXXXXX";
    int fo = mkstemp(out), fe = mkstemp(err);
    if (fo >= 0) close(fo);
    if (fe >= 0) close(fe);
    size_t n = strlen(cmd) + (dir ? strlen(dir) : 0) + 128;
    char *full = malloc(n);
    rk_test_run r = {.rc = -1};
    if (!full || fo < 0 || fe < 0) {
        free(full);
        return r;
    }
    snprintf(full, n, "%s%s%s{ %s\n} >%s 2>%s", dir ? "cd " : "", dir ? dir : "", dir ? " && " : "", cmd, out, err);
    int st = system(full);
    free(full);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

void rk_test_run_free(rk_test_run *r) {
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

unsigned rk_test_count(const char *s, const char *needle) {
    unsigned n = 0;
    size_t k = strlen(needle);
    for (const char *p = s; k && (p = strstr(p, needle)); p += k) n++;
    return n;
}

rk_test_run rk_test_vshf(const char *dir, const char *fmt, va_list ap) {
    char cmd[4096];
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    return rk_test_sh(dir, cmd);
}

rk_test_run rk_test_shf(const char *dir, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rk_test_run r = rk_test_vshf(dir, fmt, ap);
    va_end(ap);
    return r;
}

void rk_test_expect(rk_test_run r, int rc, const char *in_out, const char *in_err) {
    bool bad = r.rc != rc || (in_out && !strstr(r.out, in_out)) || (in_err && !strstr(r.err, in_err));
    if (bad) print_error("exit %d (want %d)\nstdout: %s\nstderr: %s\n", r.rc, rc, r.out, r.err);
    rk_test_run_free(&r);   /* before fail(), which does not return */
    if (bad) fail();
}

int rk_test_make_dir(char *dir, size_t cap, const char *tag, const char *cmd) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    if (!mkdtemp(dir)) return -1;
    if (!cmd) return 0;
    rk_test_run r = rk_test_sh(dir, cmd);
    int rc = r.rc;
    if (rc) fprintf(stderr, "%s: exit %d\n%s%s", cmd, rc, r.out, r.err);
    rk_test_run_free(&r);
    return rc;
}

int rk_test_remove_dir(const char *dir) {
    rk_test_run r = rk_test_shf(NULL, "rm -rf '%s'", dir);
    rk_test_run_free(&r);
    return 0;
}
