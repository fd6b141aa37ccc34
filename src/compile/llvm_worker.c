/* rocke — libLLVM codegen in forked worker processes. An LLVM fatal error
 * abort()s the process that hosts it, so codegen runs in a child; forking a
 * fresh child per compile made codegen several times slower (the child
 * re-faults libLLVM's pages), so a worker is forked once (lazily, from the
 * process that already loaded and initialized libLLVM) and serves requests
 * over a socket until it dies or the parent exits. A crash is reported
 * with the worker's stderr ("LLVM ERROR: ...") and the next request forks a
 * new worker. One worker per concurrent caller, up to the CPU count (8 at
 * most). Layer: compile. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llvm_int.h"

#define MAX_WORKERS 8
#define ERR_KEEP 16384   /* stderr bytes kept per request (the tail) */

typedef struct worker {
    pthread_mutex_t mu;      /* held for a whole request */
    const cc_llvm *L;        /* the library the worker was forked with */
    pid_t pid;               /* 0: none running */
    int sock;                /* our end of the request/reply socket */
    int err;                 /* read end of the worker's stderr (non-blocking) */
} worker;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static worker pool[MAX_WORKERS];
static int npool, max_workers = 1;

/* In-process compiles hold it shared; fork() holds it exclusively, so no
 * thread of ours is inside libLLVM (holding its locks) when we fork. */
static pthread_rwlock_t fork_lock = PTHREAD_RWLOCK_INITIALIZER;

void cc_inprocess_enter(void) { pthread_rwlock_rdlock(&fork_lock); }
void cc_inprocess_leave(void) { pthread_rwlock_unlock(&fork_lock); }

/* A child of ours (any fork, not only workers) must not talk to our
 * workers: forget them there. */
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
}

static void pool_init(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    max_workers = n < 1 ? 1 : n > MAX_WORKERS ? MAX_WORKERS : (int)n;
    for (int i = 0; i < MAX_WORKERS; i++) pthread_mutex_init(&pool[i].mu, NULL);
    pthread_atfork(NULL, NULL, forget_pool);
}

/* ---- the worker side ------------------------------------------------------------ */
static bool read_full(int fd, void *buf, size_t n) {
    char *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

static bool send_full(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Request: u64 size, then u32 opt level, u32 want_isa, u32 + target name,
 * u32 + kernel name, u64 + LLVM IR text. */
static bool take_str(const char **p, const char *end, const char **s, size_t *n, bool wide) {
    uint64_t len = 0;
    size_t w = wide ? 8 : 4;
    if ((size_t)(end - *p) < w) return false;
    memcpy(&len, *p, w); /* little-endian host */
    *p += w;
    if (len > (uint64_t)(end - *p)) return false;
    *s = *p;
    *n = (size_t)len;
    *p += len;
    return true;
}

_Noreturn static void worker_main(const cc_llvm *L, int sock) {
    for (;;) {
        uint64_t size;
        if (!read_full(sock, &size, sizeof size)) _exit(0); /* the parent is gone */
        char *req = rk_malloc((size_t)size + 1);
        if (!req || !read_full(sock, req, (size_t)size)) _exit(3);
        const char *p = req, *end = req + size, *tname, *kname, *ll;
        size_t tn, kn, lln;
        uint32_t opt, want_isa;
        if (size < 8) _exit(4);
        memcpy(&opt, p, 4);
        memcpy(&want_isa, p + 4, 4);
        p += 8;
        if (!take_str(&p, end, &tname, &tn, false) || !take_str(&p, end, &kname, &kn, false) ||
            !take_str(&p, end, &ll, &lln, true))
            _exit(4);
        char target[64], kernel[RK_PATH_MAX];
        snprintf(target, sizeof target, "%.*s", (int)tn, tname);
        snprintf(kernel, sizeof kernel, "%.*s", (int)kn, kname);
        cc_job job = {.ll = ll, .ll_len = lln, .kernel = kernel, .t = rk_target_find(target), .opt_level = opt,
                      .want_isa = want_isa != 0, .inprocess = true};
        if (!job.t) _exit(5);
        cc_result r;
        cc_result_init(&r, job.want_isa);
        double t0 = cc_now_ms();
        cc_codegen(L, &job, &r);
        r.work_ms = cc_now_ms() - t0;
        rk_buf b;
        rk_buf_init(&b);
        uint64_t zero = 0;
        rk_buf_putn(&b, (const char *)&zero, sizeof zero);
        if (!cc_reply_encode(&r, &b)) _exit(6);
        uint64_t n = b.len - sizeof zero;
        memcpy(b.data, &n, sizeof n);
        if (!send_full(sock, b.data, b.len)) _exit(0);
        rk_buf_free(&b);
        cc_result_free(&r);
        rk_free(req, (size_t)size + 1);
    }
}

/* ---- the parent side ------------------------------------------------------------ */
static void drain_err(worker *w, rk_buf *keep) {
    char buf[4096];
    ssize_t r;
    while ((r = read(w->err, buf, sizeof buf)) > 0)
        if (keep) {
            if (keep->len > ERR_KEEP) rk_buf_reset(keep); /* keep roughly the tail */
            rk_buf_putn(keep, buf, (size_t)r);
        }
}

static void stop(worker *w) {
    if (!w->pid) return;
    close(w->sock);
    close(w->err);
    int st;
    while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {}
    w->pid = 0;
}

static rk_status spawn(worker *w, const cc_llvm *L, cc_result *r) {
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
    pthread_rwlock_wrlock(&fork_lock);
    pid_t pid = fork();
    if (pid == 0) {
        /* keep only the socket (fd 3) and stderr/stdout (the pipe): the host's
         * other descriptors must not stay open in a long-lived process */
        int s = fcntl(sv[1], F_DUPFD, 10), e = fcntl(pe[1], F_DUPFD, 10);
        int devnull = open("/dev/null", O_RDONLY);
        if (s < 0 || e < 0 || devnull < 0) _exit(7);
        dup2(devnull, 0);
        dup2(e, 1);
        dup2(e, 2);
        dup2(s, 3);
        closefrom(4);
        signal(SIGPIPE, SIG_IGN);
        worker_main(L, 3);
    }
    pthread_rwlock_unlock(&fork_lock);
    close(sv[1]);
    close(pe[1]);
    if (pid < 0) {
        close(sv[0]);
        close(pe[0]);
        rk_buf_printf(&r->msg, "fork failed: %s", strerror(errno));
        return r->status = RK_ERR_TOOLCHAIN;
    }
    fcntl(pe[0], F_SETFL, fcntl(pe[0], F_GETFL) | O_NONBLOCK);
    w->pid = pid;
    w->sock = sv[0];
    w->err = pe[0];
    w->L = L;
    cc_debug("started LLVM worker %ld", (long)pid);
    return RK_OK;
}

/* The worker died mid-request: reap it and say why, with its last words. */
static void report_death(worker *w, const cc_job *job, const rk_buf *err, cc_result *r) {
    close(w->sock);
    drain_err(w, (rk_buf *)err);
    close(w->err);
    int st = 0;
    bool reaped = true;
    while (waitpid(w->pid, &st, 0) < 0)
        if (errno != EINTR) { reaped = false; break; }
    w->pid = 0;
    rk_buf_reset(&r->msg);
    if (reaped && WIFSIGNALED(st))
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
    return send_full(w->sock, &size, 8) && send_full(w->sock, head, 8) && send_full(w->sock, &t32, 4) &&
           send_full(w->sock, job->t->name, tn) && send_full(w->sock, &k32, 4) &&
           send_full(w->sock, job->kernel, kn) && send_full(w->sock, &l64, 8) &&
           send_full(w->sock, job->ll, job->ll_len);
}

/* Read the framed reply while draining stderr; false when the worker died. */
static bool read_reply(worker *w, rk_buf *reply, rk_buf *err) {
    uint64_t want = UINT64_MAX;
    char buf[65536];
    for (;;) {
        if (want == UINT64_MAX && reply->len >= 8) memcpy(&want, reply->data, 8);
        if (want != UINT64_MAX && reply->len >= 8 + want) return true;
        struct pollfd pf[2] = {{w->sock, POLLIN, 0}, {w->err, POLLIN, 0}};
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (pf[1].revents) drain_err(w, err);
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(w->sock, buf, sizeof buf);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return false;
            rk_buf_putn(reply, buf, (size_t)r);
            if (reply->oom) return false;
        }
    }
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
    double t0 = cc_now_ms();
    worker *w = acquire(L);
    if (w->pid && w->L != L) stop(w); /* a worker of another libLLVM */
    rk_buf err, reply;
    rk_buf_init(&err);
    rk_buf_init(&reply);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!w->pid && spawn(w, L, r) != RK_OK) break;
        drain_err(w, NULL); /* output of earlier requests */
        if (!send_request(w, job)) { /* it died between requests (killed?): start over once */
            rk_buf_reset(&err);
            report_death(w, job, &err, r);
            continue;
        }
        if (!read_reply(w, &reply, &err)) {
            report_death(w, job, &err, r);
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
