/* rocke — whole-file reads with a size limit: a regular file is measured
 * before anything is allocated, a stream (stdin, a FIFO, a character device)
 * is read until the limit and refused past it, so no input can make rocke
 * read or allocate without end. Layer: base. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_int.h"

#define DEFAULT_LIMIT_MIB 256u
#define MAX_LIMIT_MIB (1u << 20) /* 1 TiB: the largest ROCKE_INPUT_LIMIT_MIB */

rk_status rk_input_limit(size_t *out) {
    *out = (size_t)DEFAULT_LIMIT_MIB << 20;
    const char *v = getenv("ROCKE_INPUT_LIMIT_MIB");
    if (!v || !*v) return RK_OK;
    char *end;
    errno = 0;
    unsigned long long mib = strtoull(v, &end, 10);
    if (errno || *end || v[0] == '-' || mib < 1 || mib > MAX_LIMIT_MIB || mib > SIZE_MAX >> 20)
        return rk_fail(RK_ERR_INVALID, "ROCKE_INPUT_LIMIT_MIB='%s' is not a size in MiB (legal: 1 to %u; default %u)",
                       v, MAX_LIMIT_MIB, DEFAULT_LIMIT_MIB);
    *out = (size_t)mib << 20;
    return RK_OK;
}

static rk_status too_big(const char *path, size_t limit, bool stream) {
    return rk_fail(RK_ERR_IO, "'%s' %s the input limit of %zu MiB (ROCKE_INPUT_LIMIT_MIB raises it)", path,
                   stream ? "gives more bytes than" : "is larger than", limit >> 20);
}

/* Why a file of this type cannot be read whole, or NULL when it can. */
static const char *unreadable_kind(mode_t m, bool regular_only) {
    if (S_ISDIR(m)) return "a folder, not a file";
    if (S_ISREG(m)) return NULL;
    if (regular_only) {
        if (S_ISFIFO(m)) return "a FIFO (named pipe), which has no size; a regular file is needed here";
        if (S_ISCHR(m)) return "a character device, which has no size; a regular file is needed here";
        return "not a regular file; a regular file is needed here";
    }
    if (S_ISFIFO(m) || S_ISCHR(m)) return NULL;
    if (S_ISBLK(m)) return "a block device; rocke reads files, FIFOs and character devices";
    if (S_ISSOCK(m)) return "a socket; rocke reads files, FIFOs and character devices";
    return "not a file rocke can read";
}

/* Read fd to EOF into a block sized for `hint` bytes, refusing more than
 * `limit` bytes. A full block is grown only when a read past its end still
 * finds data, so a regular file costs one block of its own size. */
static rk_status read_fd(int fd, const char *path, size_t hint, size_t limit, bool stream, char **out, size_t *n) {
    size_t cap = (hint < 4096 ? 4096 : hint) + 1, len = 0;
    if (cap > limit + 1) cap = limit + 1;
    char *data = rk_malloc(cap);
    if (!data) return rk_fail(RK_ERR_NOMEM, "out of memory reading '%s'", path);
    rk_status s = RK_OK;
    for (;;) {
        char more[4096];
        bool full = len + 1 >= cap;
        ssize_t r = full ? read(fd, more, sizeof more) : read(fd, data + len, cap - len - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            s = rk_fail(RK_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
            break;
        }
        if (r == 0) break;
        if (full) {
            if ((size_t)r > limit - len) {
                s = too_big(path, limit, stream);
                break;
            }
            size_t ncap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
            if (ncap < len + (size_t)r + 1) ncap = len + (size_t)r + 1;
            char *d = rk_realloc(data, cap, ncap);
            if (!d) {
                s = rk_fail(RK_ERR_NOMEM, "out of memory reading '%s'", path);
                break;
            }
            data = d;
            cap = ncap;
            memcpy(data + len, more, (size_t)r);
        }
        len += (size_t)r;
    }
    if (s != RK_OK) {
        rk_free(data, cap);
        return s;
    }
    char *exact = rk_realloc(data, cap, len + 1);
    if (exact) data = exact;
    else { /* keep the larger block; callers free len+1, which the hook accepts */ }
    data[len] = '\0';
    *out = data;
    *n = len;
    return RK_OK;
}

static rk_status read_whole(const char *path, bool regular_only, char **out, size_t *n) {
    *out = NULL;
    *n = 0;
    size_t limit;
    if (rk_input_limit(&limit) != RK_OK) return RK_ERR_INVALID;
    if (strcmp(path, "-") == 0) {
        if (regular_only) return rk_fail(RK_ERR_INVALID, "standard input has no size; pass a regular file instead of '-'");
        return read_fd(STDIN_FILENO, "standard input", 0, limit, true, out, n);
    }
    /* a FIFO is opened as `cat` would: waiting for its writer is what the
     * user asked for (the compile cache, which must never wait, opens its own) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return rk_fail(RK_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rk_status s = rk_fail(RK_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
        close(fd);
        return s;
    }
    const char *why = unreadable_kind(st.st_mode, regular_only);
    rk_status s;
    if (why) s = rk_fail(RK_ERR_IO, "cannot read '%s': it is %s", path, why);
    else if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > limit) s = too_big(path, limit, false);
    else s = read_fd(fd, path, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0, limit, !S_ISREG(st.st_mode), out, n);
    close(fd);
    return s;
}

rk_status rk_read_file(const char *path, char **out, size_t *n) { return read_whole(path, false, out, n); }

rk_status rk_read_regular_file(const char *path, char **out, size_t *n) { return read_whole(path, true, out, n); }
