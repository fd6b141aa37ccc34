/* rocke — the LLVM worker process itself: a fresh exec of the host program
 * (llvm_worker.c spawns it) whose constructor finds CC_WORKER_ENV, loads
 * libLLVM and serves codegen requests on fd 3 instead of running main().
 * Layer: compile. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llvm_int.h"

/* llvm_worker.c builds the worker's environment from this name; that
 * reference is what links this file (and its constructor) into any static
 * program able to spawn a worker. */
const char cc_worker_env[] = "ROCKE_LLVM_WORKER";

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

bool cc_send_full(int fd, const void *buf, size_t n) {
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

_Noreturn static void serve(const cc_llvm *L, int sock) {
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
        char target[64];
        snprintf(target, sizeof target, "%.*s", (int)tn, tname);
        char *kernel = rk_malloc(kn + 1);   /* any length: names are not cut */
        if (!kernel) _exit(3);
        memcpy(kernel, kname, kn);
        kernel[kn] = '\0';
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
        if (!cc_send_full(sock, b.data, b.len)) _exit(0);
        rk_buf_free(&b);
        cc_result_free(&r);
        rk_free(kernel, kn + 1);
        rk_free(req, (size_t)size + 1);
    }
}

/* Runs before main() in every program that links the compile layer; only a
 * process spawned as a worker (the variable set, a socket on fd 3) stays
 * here. Startup failures go to stderr, which the parent reports. */
__attribute__((constructor)) static void serve_if_worker(void) {
    const char *v = getenv(cc_worker_env);
    struct stat st;
    if (!v || fstat(3, &st) != 0 || !S_ISSOCK(st.st_mode)) return;
    char lib[RK_PATH_MAX];
    snprintf(lib, sizeof lib, "%s", v);
    unsetenv(cc_worker_env);
    signal(SIGPIPE, SIG_IGN);
    const cc_llvm *L;
    if (cc_llvm_load(lib, &L) != RK_OK) {
        fprintf(stderr, "%s\n", rk_error_message());
        _exit(8);
    }
    serve(L, 3);
}
