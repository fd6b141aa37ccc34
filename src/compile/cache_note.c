/* rocke — why a kernel was compiled again: the cache keeps, per kernel name,
 * the hashes of the four parts of the last key it stored
 * (DIR/v1/last/<XXH64 of the name>: IR, target, options, compiler);
 * a miss compares its parts with them and names those that changed. A
 * missing or damaged record only means no note. Layer: compile. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "compile_int.h"

enum { PARTS = 4 };
static const char *const part_names[PARTS] = {"IR hash", "target", "options", "compiler version"};

static uint64_t hash_strs(const char *const *s, int n) {
    XXH64_state_t *st = XXH64_createState();
    if (!st) return 0;
    XXH64_reset(st, 0);
    for (int i = 0; i < n; i++) XXH64_update(st, s[i] ? s[i] : "", (s[i] ? strlen(s[i]) : 0) + 1);
    uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h;
}

void cc_recompile_note(const char *cache_dir, const char *ll, size_t ll_len, const char *kernel,
                       const rk_target *t, const cc_toolchain *tc, const rk_compile_options *o,
                       rk_llvm_flavor flavor, char *note, size_t cap) {
    note[0] = '\0';
    char opts[64];
    snprintf(opts, sizeof opts, "O%u;%s", o->opt_level, rk_llvm_flavor_name(flavor));
    const char *tgt[] = {t->name, t->triple, t->cpu, t->llvm_features};
    const char *cc[] = {RK_VERSION_STRING, tc->identity};
    const char *opt[] = {opts};
    uint64_t now[PARTS] = {XXH64(ll, ll_len, XXH64(kernel, strlen(kernel), 0)), hash_strs(tgt, 4),
                           hash_strs(opt, 1), hash_strs(cc, 2)};
    const char *id[] = {kernel};
    char path[RK_PATH_MAX + 64], text[PARTS * 20 + 1];
    int n = snprintf(path, sizeof path, "%s/v1/last", cache_dir);
    if (n < 0 || (size_t)n >= sizeof path - 20) return;
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return;
    snprintf(path + n, sizeof path - (size_t)n, "/%016llx", (unsigned long long)hash_strs(id, 1));
    char *old = NULL;
    size_t oldn = 0;
    struct stat st;
    /* a regular file only: a planted FIFO must not block the compile */
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && rk_read_regular_file(path, &old, &oldn) == RK_OK) {
        unsigned long long was[PARTS];
        size_t off = 0;
        if (sscanf(old, "%llx %llx %llx %llx", &was[0], &was[1], &was[2], &was[3]) == PARTS)
            for (int i = 0; i < PARTS; i++)
                if (was[i] != now[i] && off < cap)
                    off += (size_t)snprintf(note + off, cap - off, "%s%s", off ? ", " : "", part_names[i]);
        rk_free(old, oldn + 1);
    }
    rk_clear_error();
    n = snprintf(text, sizeof text, "%016llx %016llx %016llx %016llx\n", (unsigned long long)now[0],
                 (unsigned long long)now[1], (unsigned long long)now[2], (unsigned long long)now[3]);
    if (rk_write_file_atomic(path, text, (size_t)n) != RK_OK) rk_clear_error();   /* only the note is lost */
}
