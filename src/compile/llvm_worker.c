/* rocke — libLLVM codegen in worker processes. An LLVM fatal error abort()s
 * the process that hosts it, so codegen runs in a child: a long-lived
 * worker (one per concurrent caller, up to the CPU count, 8 at most) that
 * serves requests over a socket until it dies or the parent exits. A worker
 * is a fresh exec of our own program (llvm_serve.c), never a bare fork: the
 * fork of a multi-threaded host copies the locks its other threads hold (the
 * allocator's, libLLVM's, the loader's, stdio's) and a child that then runs
 * malloc or LLVM can block on one forever. A crash is reported with the
 * worker's stderr ("LLVM ERROR: ..."), a worker that outlives the request
 * time limit is killed, and the next request starts a new one. Layer: compile. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llvm_int.h"

#define MAX_WORKERS 8
#define ERR_KEEP 16384          /* stderr bytes kept per request (the tail) */
#define TIMEOUT_ENV "ROCKE_LLVM_WORKER_TIMEOUT"
#define TIMEOUT_DEFAULT_S 300.0 /* far above any real codegen; ends a wedged worker */

extern char **environ;

typedef struct worker {
    pthread_mutex_t mu;      /* held for a whole request */
    const cc_llvm *L;        /* the library the worker was started with */
    pid_t pid;               /* 0: none running */
    int sock;                /* our end of the request/reply socket */
    int err;                 /* read end of the worker's stderr (non-blocking) */
} worker;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static worker pool[MAX_WORKERS];
static int npool, max_workers = 1;
/* Held while worker descriptors are made, registered or closed, and by a
 * fork of the host (atfork), so the child's forget_pool closes exactly our
 * descriptors: none half-made (kept open there, a worker would never see
 * EOF), none already closed (its number may belong to the host again). */
static pthread_mutex_t fd_mu = PTHREAD_MUTEX_INITIALIZER;
/* librocke.so's path when the compile layer is not part of the main program
 * (a host that dlopen()ed us): the worker then preloads it. */
static char self_so[PATH_MAX];

static void fork_prepare(void) { pthread_mutex_lock(&fd_mu); }
static void fork_parent(void) { pthread_mutex_unlock(&fd_mu); }

/* A child the host forks must not talk to our workers: forget them there.
 * Only close() and mutex resets: the child may be in the fork's narrow window. */
static void forget_pool(void) {
    for (int i = 0; i < npool; i++) {
        if (pool[i].pid) {
            close(pool[i].sock);
            close(pool[i].err);
        }
        pool[i].pid = 0;
        pthread_mutex_init(&pool[i].mu, NULL);
    }
    pthread_mutex_init(&pool_mu, NULL);
    pthread_mutex_init(&fd_mu, NULL);
}

static void find_self(void) {
    Dl_info info;
    struct link_map *lm = NULL;
    /* the main program heads the link map list */
    if (!dladdr1((const void *)&cc_worker_codegen, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || !lm->l_prev ||
        !info.dli_fname)
        return;
    if (!realpath(info.dli_fname, self_so)) snprintf(self_so, sizeof self_so, "%s", info.dli_fname);
}

static void pool_init(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    max_workers = n < 1 ? 1 : n > MAX_WORKERS ? MAX_WORKERS : (int)n;
    for (int i = 0; i < MAX_WORKERS; i++) pthread_mutex_init(&pool[i].mu, NULL);
    find_self();
    pthread_atfork(fork_prepare, fork_parent, forget_pool);
}

static void drain_err(worker *w, rk_buf *keep) {
    char buf[4096];
    ssize_t r;
    while ((r = read(w->err, buf, sizeof buf)) > 0)
        if (keep) {
            if (keep->len > ERR_KEEP) rk_buf_reset(keep); /* keep roughly the tail */
            rk_buf_putn(keep, buf, (size_t)r);
        }
}

/* Close our ends (keeping the worker's last stderr in err when given) and
 * forget the worker; its pid, to reap. */
static pid_t detach(worker *w, rk_buf *err) {
    pthread_mutex_lock(&fd_mu);
    pid_t pid = w->pid;
    close(w->sock);
    drain_err(w, err);
    close(w->err);
    w->pid = 0;
    pthread_mutex_unlock(&fd_mu);
    return pid;
}

static void stop(worker *w) {
    if (!w->pid) return;
    pid_t pid = detach(w, NULL);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
}

/* The worker's environment: ours, plus the variable that makes the program
 * serve (naming the library), plus LD_PRELOAD of librocke.so when the host
 * program does not contain the compile layer. NULL when out of memory. */
static char **worker_env(const cc_llvm *L, rk_buf *var, rk_buf *pre, size_t *bytes) {
    size_t n = 0, k = 0, vn = strlen(cc_worker_env);
    while (environ[n]) n++;
    *bytes = (n + 3) * sizeof(char *);
    char **env = rk_malloc(*bytes);
    if (!env) return NULL;
    const char *old_pre = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(environ[i], cc_worker_env, vn) && environ[i][vn] == '=') continue;
        if (self_so[0] && !strncmp(environ[i], "LD_PRELOAD=", 11)) {
            old_pre = environ[i] + 11;
            continue;
        }
        env[k++] = environ[i];
    }
    rk_buf_printf(var, "%s=%s", cc_worker_env, L->path);
    env[k++] = (char *)rk_buf_cstr(var);
    if (self_so[0]) {
        rk_buf_printf(pre, "LD_PRELOAD=%s%s%s", self_so, old_pre && *old_pre ? ":" : "", old_pre ? old_pre : "");
        env[k++] = (char *)rk_buf_cstr(pre);
    }
    env[k] = NULL;
    if (var->oom || pre->oom) {
        rk_free(env, *bytes);
        return NULL;
    }
    return env;
}

/* posix_spawn: the child only execs (nothing of ours runs between the fork
 * and the exec); it gets the socket on fd 3, the stderr pipe on 1 and 2,
 * /dev/null on 0 and no other descriptor of the host. */
static int start_process(int sock, int errfd, char **env, pid_t *pid) {
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none;
    sigemptyset(&none);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, errfd, 1);
    posix_spawn_file_actions_adddup2(&fa, errfd, 2);
    posix_spawn_file_actions_adddup2(&fa, sock, 3);
    posix_spawn_file_actions_addclosefrom_np(&fa, 4);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
    char *argv[] = {(char *)"rocke-llvm-worker", NULL};
    int rc = posix_spawn(pid, "/proc/self/exe", &fa, &at, argv, env);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

static rk_status spawn_locked(worker *w, const cc_llvm *L, cc_result *r) {
    int sv[2], pe[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        rk_buf_printf(&r->msg, "socketpair failed: %s", strerror(errno));
        return r->status = RK_ERR_TOOLCHAIN;
    }
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(sv[0]);
        close(sv[1]);
        rk_buf_printf(&r->msg, "pipe failed: %s", strerror(errno));
        return r->status = RK_ERR_TOOLCHAIN;
    }
    /* the child's ends above the slots they are moved to (0..3), so no
     * dup2 of the spawn overwrites one before it is used */
    int s = fcntl(sv[1], F_DUPFD_CLOEXEC, 10), e = fcntl(pe[1], F_DUPFD_CLOEXEC, 10);
    int rc = s < 0 || e < 0 ? errno : 0;
    close(sv[1]);
    close(pe[1]);
    pid_t pid = 0;
    rk_buf var, pre;
    rk_buf_init(&var);
    rk_buf_init(&pre);
    if (!rc) {
        size_t bytes;
        char **env = worker_env(L, &var, &pre, &bytes);
        rc = env ? start_process(s, e, env, &pid) : ENOMEM;
        if (env) rk_free(env, bytes);
    }
    rk_buf_free(&var);
    rk_buf_free(&pre);
    if (s >= 0) close(s);
    if (e >= 0) close(e);
    if (rc != 0) {
        close(sv[0]);
        close(pe[0]);
        rk_buf_printf(&r->msg, "cannot start an LLVM worker process (/proc/self/exe): %s", strerror(rc));
        return r->status = RK_ERR_TOOLCHAIN;
    }
    fcntl(pe[0], F_SETFL, fcntl(pe[0], F_GETFL) | O_NONBLOCK);
    w->pid = pid;
    w->sock = sv[0];
    w->err = pe[0];
    w->L = L;
    return RK_OK;
}

static rk_status spawn(worker *w, const cc_llvm *L, cc_result *r) {
    pthread_mutex_lock(&fd_mu);
    rk_status s = spawn_locked(w, L, r);
    pthread_mutex_unlock(&fd_mu);
    if (s == RK_OK) cc_debug("started LLVM worker %ld%s%s", (long)w->pid, self_so[0] ? " preloading " : "", self_so);
    return s;
}

/* The worker died (late_s == 0) or ran past the time limit (late_s, it is
 * killed) mid-request: reap it and say why, with its last words. */
static void report_failure(worker *w, const cc_job *job, rk_buf *err, double late_s, cc_result *r) {
    if (late_s > 0) kill(w->pid, SIGKILL);
    pid_t pid = detach(w, err);
    int st = 0;
    bool reaped = true;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) { reaped = false; break; }
    rk_buf_reset(&r->msg);
    if (late_s > 0)
        rk_buf_printf(&r->msg, "the LLVM worker process did not finish compiling '%s' for %s within %g s (%s); "
                      "it was stopped", job->kernel, job->t->name, late_s, TIMEOUT_ENV);
    else if (reaped && WIFSIGNALED(st))
        rk_buf_printf(&r->msg, "LLVM crashed (signal %d, %s) compiling '%s' for %s", WTERMSIG(st),
                      strsignal(WTERMSIG(st)), job->kernel, job->t->name);
    else
        rk_buf_printf(&r->msg, "the LLVM worker process ended (exit %d) compiling '%s' for %s",
                      reaped && WIFEXITED(st) ? WEXITSTATUS(st) : -1, job->kernel, job->t->name);
    if (err->len) {
        rk_buf_puts(&r->msg, ":\n");
        cc_error_excerpt(&r->msg, err->data, err->len);
    }
    r->status = RK_ERR_TOOLCHAIN;
}

static bool send_request(worker *w, const cc_job *job) {
    size_t tn = strlen(job->t->name), kn = strlen(job->kernel);
    uint64_t size = 8 + 4 + tn + 4 + kn + 8 + job->ll_len;
    uint32_t head[2] = {job->opt_level, job->want_isa ? 1u : 0u}, t32 = (uint32_t)tn, k32 = (uint32_t)kn;
    uint64_t l64 = job->ll_len;
    int fd = w->sock;
    return cc_send_full(fd, &size, 8) && cc_send_full(fd, head, 8) && cc_send_full(fd, &t32, 4) &&
           cc_send_full(fd, job->t->name, tn) && cc_send_full(fd, &k32, 4) && cc_send_full(fd, job->kernel, kn) &&
           cc_send_full(fd, &l64, 8) && cc_send_full(fd, job->ll, job->ll_len);
}

typedef enum reply_end { REPLY_OK, REPLY_DEAD, REPLY_LATE } reply_end;

/* Read the framed reply while draining stderr, until deadline_ms (0: none). */
static reply_end read_reply(worker *w, rk_buf *reply, rk_buf *err, double deadline_ms) {
    uint64_t want = UINT64_MAX;
    char buf[65536];
    for (;;) {
        if (want == UINT64_MAX && reply->len >= 8) memcpy(&want, reply->data, 8);
        if (want != UINT64_MAX && reply->len >= 8 + want) return REPLY_OK;
        int wait = -1;
        if (deadline_ms > 0) {
            double left = deadline_ms - cc_now_ms();
            if (left <= 0) return REPLY_LATE;
            wait = left > 1e9 ? 1000000000 : (int)left + 1;
        }
        struct pollfd pf[2] = {{w->sock, POLLIN, 0}, {w->err, POLLIN, 0}};
        if (poll(pf, 2, wait) < 0) {
            if (errno == EINTR) continue;
            return REPLY_DEAD;
        }
        if (pf[1].revents) drain_err(w, err);
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(w->sock, buf, sizeof buf);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return REPLY_DEAD;
            rk_buf_putn(reply, buf, (size_t)r);
            if (reply->oom) return REPLY_DEAD;
        }
    }
}

/* The request time limit in seconds (0: none); false on a bad setting. */
static bool time_limit(double *sec, cc_result *r) {
    const char *v = getenv(TIMEOUT_ENV);
    *sec = TIMEOUT_DEFAULT_S;
    if (!v || !*v) return true;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (*end || errno || !isfinite(d) || d < 0) {
        rk_buf_printf(&r->msg, "%s='%s' is not a time limit: give seconds (a number >= 0; 0 waits forever)",
                      TIMEOUT_ENV, v);
        r->status = RK_ERR_INVALID;
        return false;
    }
    *sec = d;
    return true;
}

static worker *acquire(const cc_llvm *L) {
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool_mu);
    worker *w = NULL;
    for (int i = 0; i < npool && !w; i++)
        if (pool[i].L == L && pthread_mutex_trylock(&pool[i].mu) == 0) w = &pool[i];
    if (!w && npool < max_workers) {
        w = &pool[npool++];
        w->L = L;
        w->pid = 0;
        pthread_mutex_lock(&w->mu);
    }
    if (!w) { /* all busy: wait for one (of this library if any) */
        worker *pick = &pool[0];
        for (int i = 0; i < npool; i++)
            if (pool[i].L == L) { pick = &pool[i]; break; }
        pthread_mutex_unlock(&pool_mu);
        pthread_mutex_lock(&pick->mu);
        return pick;
    }
    pthread_mutex_unlock(&pool_mu);
    return w;
}

void cc_worker_codegen(const cc_llvm *L, const cc_job *job, cc_result *r, double *overhead_ms) {
    double t0 = cc_now_ms(), limit_s;
    *overhead_ms = 0;
    if (!time_limit(&limit_s, r)) return;
    worker *w = acquire(L);
    if (w->pid && w->L != L) stop(w); /* a worker of another libLLVM */
    rk_buf err, reply;
    rk_buf_init(&err);
    rk_buf_init(&reply);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!w->pid && spawn(w, L, r) != RK_OK) break;
        drain_err(w, NULL); /* output of earlier requests */
        double deadline = limit_s > 0 ? cc_now_ms() + limit_s * 1e3 : 0;
        if (!send_request(w, job)) { /* it died between requests (killed?): start over once */
            rk_buf_reset(&err);
            report_failure(w, job, &err, 0, r);
            continue;
        }
        reply_end end = read_reply(w, &reply, &err, deadline);
        if (end != REPLY_OK) {
            report_failure(w, job, &err, end == REPLY_LATE ? limit_s : 0, r);
            break;
        }
        if (!cc_reply_decode(reply.data + 8, reply.len - 8, r)) {
            rk_buf_printf(&r->msg, "malformed reply from the LLVM worker");
            r->status = RK_ERR_TOOLCHAIN;
            stop(w);
        } else if (err.len) {
            cc_debug("LLVM said: %.*s", (int)err.len, err.data);
        }
        break;
    }
    pthread_mutex_unlock(&w->mu);
    rk_buf_free(&err);
    rk_buf_free(&reply);
    double wall = cc_now_ms() - t0;
    *overhead_ms = wall > r->work_ms ? wall - r->work_ms : 0;
}
