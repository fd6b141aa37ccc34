/* rocke — compile-layer helpers: byte blobs, the clock, debug messages,
 * temporary folders and small file reads/writes. Layer: compile. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compile_int.h"

void cc_blob_free(cc_blob *b) {
    if (b->data) rk_free(b->data, b->size + 1);
    b->data = NULL;
    b->size = 0;
}

void cc_output_free(cc_output *o) {
    cc_blob_free(&o->binary);
    cc_blob_free(&o->cubin);
    if (o->isa) rk_free(o->isa, strlen(o->isa) + 1);
    o->isa = NULL;
}

double cc_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool cc_debug_on(void) {
    const char *d = getenv("ROCKE_DEBUG");
    return d && *d && strcmp(d, "0") != 0;
}

void cc_debug(const char *fmt, ...) {
    if (!cc_debug_on() || !rk_log_enabled()) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rk_log(RK_LOG_DEBUG, "%s", msg);
}

rk_status cc_tmpdir(char out[RK_PATH_MAX]) {
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    int n = snprintf(out, RK_PATH_MAX, "%s/rocke-cc-XXXXXX", base);
    if (n < 0 || n >= RK_PATH_MAX) return rk_fail(RK_ERR_IO, "TMPDIR path is too long");
    if (!mkdtemp(out)) return rk_fail(RK_ERR_IO, "cannot create a temporary folder in '%s': %s", base, strerror(errno));
    return RK_OK;
}

/* Only our own flat temporary folders are removed: files, then the folder. */
void cc_tmpdir_remove(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[RK_PATH_MAX];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p) unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Temporaries only: the file must not exist yet (O_EXCL), so a FIFO or link
 * planted at the name is never written through. */
rk_status cc_write_file(const char *path, const void *data, size_t n) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return rk_fail(RK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    const uint8_t *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            rk_status s = rk_fail(RK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
            close(fd);
            return s;
        }
        p += w;
        n -= (size_t)w;
    }
    if (close(fd) != 0) return rk_fail(RK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    return RK_OK;
}

rk_status cc_read_blob(const char *path, cc_blob *out) {
    char *data;
    size_t n;
    out->data = NULL;
    out->size = 0;
    if (rk_read_regular_file(path, &data, &n) != RK_OK) return RK_ERR_IO;
    out->data = (uint8_t *)data;
    out->size = n;
    return RK_OK;
}

bool cc_is_elf_file(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    unsigned char m[4] = {0};
    ssize_t r = read(fd, m, 4);
    close(fd);
    return r == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
}
