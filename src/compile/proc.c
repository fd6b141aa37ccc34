/* rocke — external tools: lookup (env variable, PATH, known folders) and
 * running them with posix_spawn, capturing stdout and stderr, so a failure
 * can report the exit code, the tool's messages and the command to rerun.
 * Layer: compile. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile_int.h"

extern char **environ;

void cc_proc_free(cc_proc *p) {
    rk_buf_free(&p->out);
    rk_buf_free(&p->err);
}

/* Drain both pipes until EOF; a tool writing lots of stderr never blocks. */
void cc_drain(int fo, int fe, rk_buf *out, rk_buf *err) {
    struct pollfd pf[2] = {{fo, POLLIN, 0}, {fe, POLLIN, 0}};
    rk_buf *dst[2] = {out, err};
    int open_n = 2;
    char buf[16384];
    while (open_n > 0) {
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t r = read(pf[i].fd, buf, sizeof buf);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                pf[i].fd = -1;
                open_n--;
                continue;
            }
            rk_buf_putn(dst[i], buf, (size_t)r);
        }
    }
}

rk_status cc_run(const char *const argv[], cc_proc *p) {
    memset(p, 0, sizeof *p);
    rk_buf_init(&p->out);
    rk_buf_init(&p->err);
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0) return rk_fail(RK_ERR_TOOLCHAIN, "pipe: %s", strerror(errno));
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]);
        close(po[1]);
        return rk_fail(RK_ERR_TOOLCHAIN, "pipe: %s", strerror(errno));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    if (rc != 0) {
        close(po[0]);
        close(pe[0]);
        return rk_fail(RK_ERR_TOOLCHAIN, "cannot run '%s': %s", argv[0], strerror(rc));
    }
    cc_drain(po[0], pe[0], &p->out, &p->err);
    close(po[0]);
    close(pe[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            /* SIGCHLD ignored by the host: the status is gone; judge by output */
            st = 0;
            break;
        }
    }
    if (WIFSIGNALED(st)) {
        p->signal = WTERMSIG(st);
        p->exit_code = -1;
    } else {
        p->exit_code = WEXITSTATUS(st);
    }
    return RK_OK;
}

void cc_cmdline(rk_buf *b, const char *const argv[]) {
    for (int i = 0; argv[i]; i++) {
        if (i) rk_buf_putc(b, ' ');
        const char *a = argv[i];
        if (*a && !a[strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./=:,+")]) {
            rk_buf_puts(b, a);
            continue;
        }
        rk_buf_putc(b, '\'');
        for (; *a; a++) {
            if (*a == '\'') rk_buf_puts(b, "'\\''");
            else rk_buf_putc(b, *a);
        }
        rk_buf_putc(b, '\'');
    }
}

rk_status cc_tool_failed(const char *what, const char *const argv[], const cc_proc *p) {
    rk_buf cmd;
    rk_buf_init(&cmd);
    cc_cmdline(&cmd, argv);
    rk_buf err;
    rk_buf_init(&err);
    cc_error_excerpt(&err, p->err.data, p->err.len);
    rk_status s;
    if (p->signal)
        s = rk_fail(RK_ERR_TOOLCHAIN, "%s was killed by signal %d (%s)%s%s\nrerun: %s", what, p->signal,
                    strsignal(p->signal), err.len ? ":\n" : "", rk_buf_cstr(&err), rk_buf_cstr(&cmd));
    else
        s = rk_fail(RK_ERR_TOOLCHAIN, "%s failed with exit code %d%s%s\nrerun: %s", what, p->exit_code,
                    err.len ? ":\n" : "", rk_buf_cstr(&err), rk_buf_cstr(&cmd));
    rk_buf_free(&err);
    rk_buf_free(&cmd);
    return s;
}

static bool executable(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

cc_found cc_find_tool(const char *env, const char *const names[], const char *const dirs[],
                      char out[RK_PATH_MAX], rk_buf *tried) {
    const char *e = env ? getenv(env) : NULL;
    if (e && *e) {
        if (executable(e) && snprintf(out, RK_PATH_MAX, "%s", e) < RK_PATH_MAX) return CC_FOUND;
        if (tried) rk_buf_printf(tried, "%s%s=%s (not an executable file)", tried->len ? ", " : "", env, e);
        out[0] = '\0';
        return CC_BAD_OVERRIDE;
    }
    if (env && tried) rk_buf_printf(tried, "%s$%s (unset)", tried->len ? ", " : "", env);
    const char *path = getenv("PATH");
    for (int i = 0; names[i]; i++) {
        for (const char *p = path ? path : ""; *p;) {
            size_t n = strcspn(p, ":");
            if (n && snprintf(out, RK_PATH_MAX, "%.*s/%s", (int)n, p, names[i]) < RK_PATH_MAX && executable(out))
                return CC_FOUND;
            p += n;
            if (*p == ':') p++;
        }
    }
    if (tried) {
        rk_buf_printf(tried, "%s", tried->len ? ", " : "");
        for (int i = 0; names[i]; i++) rk_buf_printf(tried, "%s%s", i ? "/" : "", names[i]);
        rk_buf_puts(tried, " on PATH");
    }
    for (int d = 0; dirs && dirs[d]; d++) {
        for (int i = 0; names[i]; i++)
            if (snprintf(out, RK_PATH_MAX, "%s/%s", dirs[d], names[i]) < RK_PATH_MAX && executable(out))
                return CC_FOUND;
        if (tried) rk_buf_printf(tried, ", %s", dirs[d]);
    }
    out[0] = '\0';
    return CC_ABSENT;
}

void cc_error_excerpt(rk_buf *dst, const char *err, size_t n) {
    static const char *const trailers[] = {"PLEASE submit a bug report", "Stack dump:"};
    size_t end = n;
    for (unsigned i = 0; i < RK_COUNTOF(trailers); i++) {
        const char *t = err ? strstr(err, trailers[i]) : NULL;
        if (t && (size_t)(t - err) < end) end = (size_t)(t - err);
    }
    while (end && (err[end - 1] == '\n' || err[end - 1] == ' ')) end--;
    if (end > 2000) {
        rk_buf_putn(dst, err, 2000);
        rk_buf_puts(dst, "\n[...]");
    } else if (end) {
        rk_buf_putn(dst, err, end);
    }
}
