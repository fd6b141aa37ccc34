/* rocke — the cache's ship index: a machine without a compiler (a GPU box
 * with no LLVM) cannot form the full cache key, which names the toolchain's
 * files. Every stored entry is therefore also indexed under a "ship key", the
 * key without the toolchain identity, by a small text file
 * DIR/v1/ship/<2 hex>/<32 hex>:
 *   rocke-ship 1 <ship key hex> <entry key hex>\n<toolchain identity>\n
 * naming the entry and the toolchain that produced it. It is read only when
 * no toolchain is usable; the entry it names is read and checked like any
 * hit. Written atomically (rk_write_file_atomic). Layer: compile. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile_int.h"

#define SHIP_MAGIC "rocke-ship 1 "
#define SHIP_MAX_BYTES 8192 /* a header line plus one toolchain identity */

/* The full key's inputs less the toolchain identity and the flavor (the LLVM
 * IR already carries the flavor's datalayout). */
cc_key cc_ship_key(const char *ll, size_t ll_len, const char *kernel, const rk_target *t,
                   const rk_compile_options *o) {
    char head[96];
    snprintf(head, sizeof head, "rocke-ship-1;rocke %s;O%u", RK_VERSION_STRING, o->opt_level);
    return cc_key_hash(head, kernel, t, NULL, ll, ll_len);
}

static bool ship_path(const char *dir, const cc_key *ship, char out[RK_PATH_MAX]) {
    char hex[33];
    cc_key_hex(ship, hex);
    int n = snprintf(out, RK_PATH_MAX, "%s/v1/ship/%.2s/%s", dir, hex, hex);
    return n > 0 && n < RK_PATH_MAX;
}

bool cc_ship_present(const char *dir, const cc_key *ship) {
    char path[RK_PATH_MAX];
    struct stat st;
    return ship_path(dir, ship, path) && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void cc_ship_put(const char *dir, const cc_key *ship, const cc_key *entry, const char *identity) {
    char path[RK_PATH_MAX], sh[33], eh[33];
    if (!ship_path(dir, ship, path)) return;   /* cc_cache_put has warned about the folder */
    char *slash = strrchr(path, '/');
    *slash = '\0';
    bool ok = cc_mkdirs(path);
    *slash = '/';
    if (!ok) {
        cc_debug("cache: cannot create the folder for %s (no ship index entry)", path);
        return;
    }
    cc_key_hex(ship, sh);
    cc_key_hex(entry, eh);
    rk_buf b;
    rk_buf_init(&b);
    rk_buf_printf(&b, "%s%s %s\n%s\n", SHIP_MAGIC, sh, eh, identity);
    if (!b.oom && rk_write_file_atomic(path, b.data, b.len) != RK_OK) {
        cc_debug("cache: cannot write %s: %s", path, rk_error_message());
        rk_clear_error();
    }
    rk_buf_free(&b);
}

static bool parse_hex(const char *s, cc_key *k) {
    for (int i = 0; i < 16; i++) {
        unsigned v = 0;
        for (int j = 0; j < 2; j++) {
            char c = s[2 * i + j];
            unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 99;
            if (d > 15) return false;
            v = v << 4 | d;
        }
        k->b[i] = (uint8_t)v;
    }
    return true;
}

/* The ship file of `ship`, then the entry it names (a damaged ship file is
 * removed; a missing or damaged entry is a miss). */
bool cc_ship_get(const char *dir, const cc_key *ship, cc_key *entry_out, cc_output *out) {
    char path[RK_PATH_MAX], sh[33];
    struct stat st;
    if (!ship_path(dir, ship, path) || lstat(path, &st) != 0) return false;
    if (!S_ISREG(st.st_mode) || st.st_size > SHIP_MAX_BYTES) {
        cc_debug("cache: %s is not a ship index file; removing it", path);
        unlink(path);
        return false;
    }
    char *text = NULL;
    size_t n = 0;
    if (rk_read_regular_file(path, &text, &n) != RK_OK) {
        rk_clear_error();
        return false;
    }
    cc_key_hex(ship, sh);
    size_t m = strlen(SHIP_MAGIC);
    cc_key entry;
    bool ok = n >= m + 66 && !memcmp(text, SHIP_MAGIC, m) && !memcmp(text + m, sh, 32) && text[m + 32] == ' ' &&
              parse_hex(text + m + 33, &entry) && text[m + 65] == '\n';
    rk_free(text, n + 1);
    if (!ok) {
        cc_debug("cache: %s is damaged; removing it", path);
        unlink(path);
        return false;
    }
    *entry_out = entry;
    return cc_cache_get(dir, &entry, out);
}
