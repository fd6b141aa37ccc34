/* rocke — content-addressed compile cache. Key: XXH3-128 over the LLVM IR,
 * the kernel name the output is checked against, the target, the toolchain
 * identity (paths, sizes, mtimes of the compiler files) and the options that
 * change the output. One file per entry,
 * DIR/v1/<2 hex>/<32 hex>.rkc:
 *   header (64 bytes, little-endian): magic "RKCACHE1", u32 version, u32
 *   header size, key[16], u64 binary size, u64 cubin size, u64 id size,
 *   u64 XXH3-64 of (header bytes 0..55 + payload)
 *   payload: binary, cubin, toolchain id text.
 * Written to a temporary file and renamed (two writers of one key: the last
 * rename wins, both are whole); a bad checksum or size is reported at debug
 * level, the entry removed and rebuilt. An entry that is not a regular file
 * (a FIFO, a link, a device) is detected without blocking and removed. A hit
 * is then checked exactly like a fresh output (cc_check_output). Layer: compile. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "compile_int.h"

#define CACHE_MAGIC "RKCACHE1"
#define CACHE_VERSION 1u
#define HEADER_SIZE 64u

void cc_key_hex(const cc_key *k, char hex[33]) {
    static const char dig[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        hex[2 * i] = dig[k->b[i] >> 4];
        hex[2 * i + 1] = dig[k->b[i] & 15];
    }
    hex[32] = '\0';
}

static void feed_str(XXH3_state_t *st, const char *s) {
    size_t n = s ? strlen(s) + 1 : 1; /* the NUL separates fields */
    XXH3_128bits_update(st, s ? s : "", n);
}

/* Every input a compile's checks read is in the key (the kernel name too),
 * so a hit stands for a miss that passed them; the pipeline still re-checks
 * the output of a hit (cc_check_output) against a planted or stale entry. */
cc_key cc_cache_key(const char *ll, size_t ll_len, const char *kernel, const rk_target *t, const cc_toolchain *tc,
                    const rk_compile_options *o, rk_llvm_flavor flavor) {
    char opts[96];
    snprintf(opts, sizeof opts, "rocke-cache-%u;rocke %s;O%u;%s", CACHE_VERSION, RK_VERSION_STRING, o->opt_level,
             rk_llvm_flavor_name(flavor));
    return cc_key_hash(opts, kernel, t, tc->identity, ll, ll_len);
}

cc_key cc_key_hash(const char *head, const char *kernel, const rk_target *t, const char *identity, const char *ll,
                   size_t ll_len) {
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    feed_str(&st, head);
    feed_str(&st, kernel);
    feed_str(&st, t->name);
    feed_str(&st, t->triple);
    feed_str(&st, t->cpu);
    feed_str(&st, t->llvm_features);
    if (identity) feed_str(&st, identity);
    XXH3_128bits_update(&st, ll, ll_len);
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    cc_key k;
    memcpy(k.b, c.digest, 16);
    return k;
}

bool cc_cache_path(const char *dir, const cc_key *k, char out[RK_PATH_MAX]) {
    char hex[33];
    cc_key_hex(k, hex);
    int n = snprintf(out, RK_PATH_MAX, "%s/v1/%.2s/%s.rkc", dir, hex, hex);
    return n > 0 && n < RK_PATH_MAX;
}

static void put_le32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put_le64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint32_t get_le32(const uint8_t *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint64_t get_le64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

static uint64_t checksum(const uint8_t *hdr, const uint8_t *payload, size_t n) {
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, hdr, 56);
    XXH3_64bits_update(&st, payload, n);
    return XXH3_64bits_digest(&st);
}

static void drop(const char *path, const char *why) {
    cc_debug("cache: %s: %s; removing it and compiling again", path, why);
    unlink(path); /* fails harmlessly on a folder: that name then stays a miss */
}

void cc_cache_drop(const char *dir, const cc_key *k, const char *why) {
    char path[RK_PATH_MAX];
    if (cc_cache_path(dir, k, path)) drop(path, why);
}

/* An entry holds one small code object; anything this large is not ours. */
#define MAX_ENTRY_BYTES ((off_t)1 << 30)

/* Open the entry without ever waiting: O_NONBLOCK so a FIFO planted at the
 * name opens at once (and is then seen by fstat), O_NOFOLLOW so a link is
 * not followed. Non-regular entries are removed (a folder cannot be; it
 * stays a miss). Returns -1 on a miss. */
static int open_entry(const char *path, struct stat *st) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0) {
        if (errno == ELOOP) drop(path, "a symbolic link, not a cache entry");
        else if (errno != ENOENT) cc_debug("cache: cannot open %s: %s (compiling)", path, strerror(errno));
        return -1;
    }
    const char *why = NULL;
    if (fstat(fd, st) != 0) why = "cannot be examined";
    else if (!S_ISREG(st->st_mode)) why = S_ISFIFO(st->st_mode) ? "a FIFO, not a cache entry"
                                        : S_ISDIR(st->st_mode) ? "a folder, not a cache entry"
                                                               : "not a regular file";
    else if (st->st_size > MAX_ENTRY_BYTES) why = "larger than any cache entry (over 1 GiB)";
    if (!why) return fd;
    close(fd);
    drop(path, why);
    return -1;
}

/* Read the whole entry with one read (small files), then check it. */
bool cc_cache_get(const char *dir, const cc_key *k, cc_output *out) {
    char path[RK_PATH_MAX];
    if (!cc_cache_path(dir, k, path)) return false;   /* cc_cache_put warns */
    struct stat st;
    int fd = open_entry(path, &st);
    if (fd < 0) return false;
    uint8_t *data = NULL;
    size_t size = 0;
    bool ok = st.st_size >= (off_t)HEADER_SIZE;
    if (ok) {
        size = (size_t)st.st_size;
        data = rk_malloc(size);
        size_t got = 0;
        while (data && got < size) {
            ssize_t r = read(fd, data + got, size - got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        ok = data && got == size;
    }
    close(fd);
    if (!ok) {
        if (data) rk_free(data, size);
        if (!data && size) return false; /* out of memory: a miss, the entry is fine */
        drop(path, "truncated (shorter than its header)");
        return false;
    }
    const char *why = NULL;
    uint64_t nb = get_le64(data + 32), nc = get_le64(data + 40), ni = get_le64(data + 48);
    if (memcmp(data, CACHE_MAGIC, 8)) why = "bad magic";
    else if (get_le32(data + 8) != CACHE_VERSION || get_le32(data + 12) != HEADER_SIZE) why = "other format version";
    else if (memcmp(data + 16, k->b, 16)) why = "key mismatch";
    else if (nb > size || nc > size || ni > size || HEADER_SIZE + nb + nc + ni != size)
        why = "truncated or sizes corrupt";
    else if (checksum(data, data + HEADER_SIZE, size - HEADER_SIZE) != get_le64(data + 56)) why = "checksum mismatch";
    else if (ni >= sizeof out->toolchain_id) why = "toolchain id too long";
    if (why) {
        rk_free(data, size);
        drop(path, why);
        return false;
    }
    const uint8_t *p = data + HEADER_SIZE;
    out->binary.data = rk_malloc(nb + 1);
    out->cubin.data = nc ? rk_malloc(nc + 1) : NULL;
    if (!out->binary.data || (nc && !out->cubin.data)) {
        cc_output_free(out);
        rk_free(data, size);
        return false;
    }
    memcpy(out->binary.data, p, nb);
    out->binary.data[nb] = 0;
    out->binary.size = nb;
    if (nc) {
        memcpy(out->cubin.data, p + nb, nc);
        out->cubin.data[nc] = 0;
        out->cubin.size = nc;
    }
    memcpy(out->toolchain_id, p + nb + nc, ni);
    out->toolchain_id[ni] = '\0';
    rk_free(data, size);
    return true;
}

bool cc_mkdirs(char *path) {
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            bool ok = mkdir(path, 0755) == 0 || errno == EEXIST;
            *p = '/';
            if (!ok) return false;
        }
    return mkdir(path, 0755) == 0 || errno == EEXIST;
}

void cc_cache_put(const char *dir, const cc_key *k, const cc_output *in) {
    char path[RK_PATH_MAX], tmp[RK_PATH_MAX + 64];
    if (!cc_cache_path(dir, k, path)) {
        rk_log(RK_LOG_WARNING, "the cache folder '%.40s...' (%zu characters) leaves no room for an entry's name "
               "within %d characters: not caching", dir, strlen(dir), RK_PATH_MAX - 1);
        return;
    }
    char *slash = strrchr(path, '/');
    *slash = '\0';
    bool dir_ok = cc_mkdirs(path);
    *slash = '/';
    if (!dir_ok) {
        cc_debug("cache: cannot create the folder for %s: %s (not caching)", path, strerror(errno));
        return;
    }
    size_t ni = strlen(in->toolchain_id);
    size_t total = HEADER_SIZE + in->binary.size + in->cubin.size + ni;
    uint8_t *buf = rk_malloc(total);
    if (!buf) return;
    memset(buf, 0, HEADER_SIZE);
    memcpy(buf, CACHE_MAGIC, 8);
    put_le32(buf + 8, CACHE_VERSION);
    put_le32(buf + 12, HEADER_SIZE);
    memcpy(buf + 16, k->b, 16);
    put_le64(buf + 32, in->binary.size);
    put_le64(buf + 40, in->cubin.size);
    put_le64(buf + 48, ni);
    uint8_t *p = buf + HEADER_SIZE;
    if (in->binary.size) memcpy(p, in->binary.data, in->binary.size);
    if (in->cubin.size) memcpy(p + in->binary.size, in->cubin.data, in->cubin.size);
    memcpy(p + in->binary.size + in->cubin.size, in->toolchain_id, ni);
    put_le64(buf + 56, checksum(buf, p, total - HEADER_SIZE));
    static atomic_uint seq;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1u));
    if (cc_write_file(tmp, buf, total) != RK_OK || rename(tmp, path) != 0) {
        cc_debug("cache: cannot store %s: %s (not caching)", path, rk_error_message());
        unlink(tmp);
        rk_clear_error();
    }
    rk_free(buf, total);
}
