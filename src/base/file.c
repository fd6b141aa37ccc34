/* rocke — whole-file reads and atomic writes (temp file + rename), so no
 * half-written artifact is ever left behind. Layer: base. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "base_int.h"

rk_status rk_read_file(const char *path, char **out, size_t *n) {
    *out = NULL;
    *n = 0;
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) return rk_fail(RK_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *data = rk_malloc(cap);
    if (!data) { if (!is_stdin) fclose(f); return rk_fail(RK_ERR_NOMEM, "out of memory reading '%s'", path); }
    for (;;) {
        if (len + 1 >= cap) {
            char *d = rk_realloc(data, cap, cap * 2);
            if (!d) {
                rk_free(data, cap);
                if (!is_stdin) fclose(f);
                return rk_fail(RK_ERR_NOMEM, "out of memory reading '%s'", path);
            }
            data = d;
            cap *= 2;
        }
        size_t got = fread(data + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
    }
    bool err = ferror(f);
    if (!is_stdin) fclose(f);
    if (err) { rk_free(data, cap); return rk_fail(RK_ERR_IO, "cannot read '%s'", path); }
    char *exact = rk_realloc(data, cap, len + 1);
    if (exact) data = exact; else { /* keep the larger block; callers free len+1 */ }
    data[len] = '\0';
    *out = data;
    *n = len;
    return RK_OK;
}

rk_status rk_write_file_atomic(const char *path, const void *data, size_t n) {
    size_t plen = strlen(path);
    char *tmp = rk_malloc(plen + 32);
    if (!tmp) return rk_fail(RK_ERR_NOMEM, "out of memory writing '%s'", path);
    static atomic_uint seq;
    snprintf(tmp, plen + 32, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1u));
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        rk_status s = rk_fail(RK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        rk_free(tmp, plen + 32);
        return s;
    }
    bool ok = fwrite(data, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        rk_status s = rk_fail(RK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        remove(tmp);
        rk_free(tmp, plen + 32);
        return s;
    }
    rk_free(tmp, plen + 32);
    return RK_OK;
}
