/* rocke — the one way rocke writes an output file. A regular file (or a new
 * one) is written whole under a temporary name beside it and renamed into
 * place, so no half-written file is ever seen; a FIFO or a character device
 * (/dev/null, a terminal, a pipe named as /dev/stdout) is written through,
 * never replaced; folders, sockets and block devices are refused by name.
 * Layer: base. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_int.h"

static char *dup_path(const char *p, size_t extra) {
    size_t n = strlen(p) + 1;
    char *d = rk_malloc(n + extra);
    if (d) memcpy(d, p, n);
    return d;
}

static void release(rk_outfile *f) {
    if (f->path) rk_free(f->path, 0);
    if (f->tmp) rk_free(f->tmp, 0);
    f->path = f->tmp = NULL;
    f->fd = -1;
}

/* Names of descriptors this process already holds (a shell redirection):
 * writing through them is what they are for. */
static bool names_open_descriptor(const char *p) {
    return !strcmp(p, "/dev/stdout") || !strcmp(p, "/dev/stderr") || !strncmp(p, "/dev/fd/", 8) ||
           !strncmp(p, "/proc/self/fd/", 14);
}

static rk_status open_through(rk_outfile *f, const char *path, bool fifo) {
    /* non-blocking open: a FIFO without a reader fails (ENXIO) instead of waiting */
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 && errno == ENXIO && fifo)
        return rk_fail(RK_ERR_IO, "cannot write '%s': it is a FIFO (named pipe) with no reader; start the reader "
                       "first or name a regular file", path);
    if (fd < 0) return rk_fail(RK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        rk_status s = rk_fail(RK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        close(fd);
        return s;
    }
    f->fd = fd;
    return RK_OK;
}

/* A regular file reached through a symbolic link is replaced at the link's
 * target, so the link stays a link. */
static rk_status rename_target(const char *path, char **out) {
    struct stat lst;
    *out = NULL;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char real[PATH_MAX];   /* a caller buffer: realpath(path, NULL) would allocate outside the hook */
        if (!realpath(path, real))
            return rk_fail(RK_ERR_IO, "cannot write '%s': cannot resolve the link: %s", path, strerror(errno));
        *out = dup_path(real, 32);
    } else {
        *out = dup_path(path, 32);
    }
    return *out ? RK_OK : rk_fail(RK_ERR_NOMEM, "out of memory writing '%s'", path);
}

static rk_status open_temp(rk_outfile *f, const char *path) {
    static atomic_uint seq;
    size_t room = strlen(f->path) + 32;
    f->tmp = rk_malloc(room);
    if (!f->tmp) return rk_fail(RK_ERR_NOMEM, "out of memory writing '%s'", path);
    for (int attempt = 0; attempt < 16; attempt++) {
        snprintf(f->tmp, room, "%s.tmp.%ld.%u", f->path, (long)getpid(), atomic_fetch_add(&seq, 1u));
        /* exclusive: a stale temporary (or anything planted there) is never written through */
        int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            f->fd = fd;
            return RK_OK;
        }
        if (errno != EEXIST) break;
    }
    return rk_fail(RK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
}

rk_status rk_outfile_open(rk_outfile *f, const char *path) {
    memset(f, 0, sizeof *f);
    f->fd = -1;
    if (!path || !*path) return rk_fail(RK_ERR_INVALID, "empty output file name");
    struct stat st;
    rk_status s = RK_OK;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return rk_fail(RK_ERR_IO, "cannot write '%s': it is a folder; a file name is needed here", path);
        bool fifo = S_ISFIFO(st.st_mode);
        if (fifo || S_ISCHR(st.st_mode) || (S_ISREG(st.st_mode) && names_open_descriptor(path))) {
            if (!(f->path = dup_path(path, 0))) return rk_fail(RK_ERR_NOMEM, "out of memory writing '%s'", path);
            f->through = true;
            s = open_through(f, path, fifo);
            if (s != RK_OK) release(f);
            return s;
        }
        if (!S_ISREG(st.st_mode))
            return rk_fail(RK_ERR_IO, "cannot write '%s': it is %s; rocke writes regular files, FIFOs and character "
                           "devices", path, S_ISSOCK(st.st_mode) ? "a socket" : S_ISBLK(st.st_mode) ? "a block device"
                                                                                           : "not a regular file");
    } else if (errno != ENOENT) {
        return rk_fail(RK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    } else {
        struct stat lst;
        if (lstat(path, &lst) == 0)
            return rk_fail(RK_ERR_IO, "cannot write '%s': it is a symbolic link to a missing file", path);
    }
    s = rename_target(path, &f->path);
    if (s == RK_OK) s = open_temp(f, path);
    if (s != RK_OK) release(f);
    return s;
}

rk_status rk_outfile_write(rk_outfile *f, const void *data, size_t n) {
    const unsigned char *p = data;
    while (n) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return rk_fail(RK_ERR_IO, "cannot write '%s': %s", f->path, w < 0 ? strerror(errno) : "no progress");
        p += w;
        n -= (size_t)w;
    }
    return RK_OK;
}

rk_status rk_outfile_commit(rk_outfile *f) {
    rk_status s = RK_OK;
    if (close(f->fd) != 0) s = rk_fail(RK_ERR_IO, "cannot write '%s': %s", f->path, strerror(errno));
    f->fd = -1;
    if (s == RK_OK && f->tmp && rename(f->tmp, f->path) != 0)
        s = rk_fail(RK_ERR_IO, "cannot write '%s': %s", f->path, strerror(errno));
    if (s != RK_OK && f->tmp) unlink(f->tmp);
    release(f);
    return s;
}

void rk_outfile_discard(rk_outfile *f) {
    if (f->fd >= 0) close(f->fd);
    if (f->tmp) unlink(f->tmp);
    release(f);
}

rk_status rk_write_file_atomic(const char *path, const void *data, size_t n) {
    rk_outfile f;
    rk_status s = rk_outfile_open(&f, path);
    if (s != RK_OK) return s;
    s = rk_outfile_write(&f, data, n);
    if (s != RK_OK) {
        rk_outfile_discard(&f);
        return s;
    }
    return rk_outfile_commit(&f);
}
