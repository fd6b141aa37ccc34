/* rocke — the compile cache: miss then hit with identical bytes, keys that
 * follow the options, corrupt / truncated entries detected by size and
 * checksum, removed and rebuilt (reported at debug level), ROCKE_CACHE=0,
 * several processes writing and reading one key at once; issue 20: a hit is
 * checked like a miss (another kernel name fails the same way), and an entry
 * that is a FIFO, a link or a folder is never waited on or served; the ship
 * index serves a machine without a compiler (toolchain none): the same
 * bytes for a warmed kernel, a clear error naming how to warm an unwarmed
 * one, a damaged index file removed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"
#include "compile/compile_int.h"

static char cache_dir[64];
static char *vadd_ll;

static int setup(void **state) {
    (void)state;
    snprintf(cache_dir, sizeof cache_dir, "/tmp/rocke-cache-test-XXXXXX");
    if (!mkdtemp(cache_dir)) return -1;
    size_t n;
    char path[512];
    snprintf(path, sizeof path, "%s/tests/compile/fixtures/amd_vadd.ll", ROCKE_SOURCE_DIR);
    return rk_read_file(path, &vadd_ll, &n) == RK_OK ? 0 : -1;
}

/* Remove the cache tree (our own, three levels deep). */
static void rm_tree(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1024];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_tree(p);
        else unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
}

static int teardown(void **state) {
    (void)state;
    rm_tree(cache_dir);
    rk_free(vadd_ll, strlen(vadd_ll) + 1);
    return 0;
}

/* Files under dir whose name contains `part` (recursively). */
static int count_files(const char *dir, const char *part) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1024];
    int n = 0;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) n += count_files(p, part);
        else if (strstr(e->d_name, part)) n++;
    }
    if (d) closedir(d);
    return n;
}

static rk_compile_options opts(void) {
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(rk_target_find("gfx942"), &o), RK_OK);
    o.toolchain = RK_TOOLCHAIN_LLVM;
    o.inprocess = true;
    o.cache = true;
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s", cache_dir);
    return o;
}

static rk_artifact *compile(const rk_compile_options *o) {
    rk_artifact *a = NULL;
    rk_status s = rk_compile_llvm_ir(vadd_ll, "vadd", rk_target_find("gfx942"), o, &a);
    if (s != RK_OK) fprintf(stderr, "%s\n", rk_error_message());
    assert_int_equal(s, RK_OK);
    return a;
}

static void entry_path(const rk_artifact *a, char out[RK_PATH_MAX]) {
    snprintf(out, RK_PATH_MAX, "%s/v1/%.2s/%s.rkc", cache_dir, a->cache_key, a->cache_key);
}

/* Run f with the library's debug-level reports (the log callback) captured
 * into buf, one per line. */
typedef struct captured { char *buf; size_t n, len; } captured;
static void capture_line(void *ud, rk_log_level level, const char *msg) {
    captured *c = ud;
    if (c->len + 1 < c->n)
        c->len += (size_t)snprintf(c->buf + c->len, c->n - c->len, "%s: %s\n", rk_log_level_name(level), msg);
    if (c->len >= c->n) c->len = c->n - 1;
}

static void capture_log(void (*f)(void *), void *arg, char *buf, size_t n) {
    captured c = {buf, n, 0};
    buf[0] = '\0';
    rk_set_log_callback(capture_line, &c);
    f(arg);
    rk_set_log_callback(NULL, NULL);
}

static void test_miss_then_hit(void **state) {
    (void)state;
    rk_compile_options o = opts();
    rk_artifact *a = compile(&o), *b = compile(&o);
    assert_false(a->cache_hit);
    assert_true(b->cache_hit);
    assert_string_equal(a->cache_key, b->cache_key);
    assert_int_equal(strlen(a->cache_key), 32);
    assert_int_equal(a->binary_size, b->binary_size);
    assert_memory_equal(a->binary, b->binary, a->binary_size);
    assert_string_equal(a->toolchain, b->toolchain);
    assert_true(b->ms.compile == 0 && b->ms.link == 0);
    char p[RK_PATH_MAX];
    entry_path(a, p);
    assert_int_equal(access(p, R_OK), 0);
    /* options that change the output change the key */
    o.opt_level = 2;
    rk_artifact *c = compile(&o);
    assert_false(c->cache_hit);
    assert_string_not_equal(c->cache_key, a->cache_key);
    /* so does the target */
    rk_artifact *d = NULL;
    o.opt_level = 3;
    assert_int_equal(rk_compile_llvm_ir(vadd_ll, "vadd", rk_target_find("gfx950"), &o, &d), RK_OK);
    assert_string_not_equal(d->cache_key, a->cache_key);
    /* and the IR (one more space in a comment is another text) */
    rk_buf t;
    rk_buf_init(&t);
    rk_buf_printf(&t, "; rocke cache test\n%s", vadd_ll);
    rk_artifact *e = NULL;
    assert_int_equal(rk_compile_llvm_ir(rk_buf_cstr(&t), "vadd", rk_target_find("gfx942"), &o, &e), RK_OK);
    assert_false(e->cache_hit);
    assert_string_not_equal(e->cache_key, a->cache_key);
    rk_buf_free(&t);
    assert_int_equal(count_files(cache_dir, ".tmp."), 0);
    rk_artifact_free(a);
    rk_artifact_free(b);
    rk_artifact_free(c);
    rk_artifact_free(d);
    rk_artifact_free(e);
}

typedef struct damage_case { const char *what; long keep; int flip_at; const char *report; } damage_case;

static rk_artifact *victim_result;
static void compile_into_victim(void *arg) {
    victim_result = compile((const rk_compile_options *)arg);
}

static void test_corrupt_and_truncated(void **state) {
    (void)state;
    rk_compile_options o = opts();
    rk_artifact *good = compile(&o);
    char p[RK_PATH_MAX];
    entry_path(good, p);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    damage_case cases[] = {
        {"payload byte flipped", -1, 64 + 100, "checksum mismatch"},
        {"header size field flipped", -1, 33, "sizes corrupt"},
        {"truncated to half", st.st_size / 2, -1, "truncated"},
        {"truncated inside the header", 10, -1, "truncated"},
        {"empty", 0, -1, "truncated"},
    };
    setenv("ROCKE_DEBUG", "1", 1);
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rk_artifact *warm = compile(&o);
        assert_true(warm->cache_hit);
        rk_artifact_free(warm);
        if (cases[i].flip_at >= 0) {
            int fd = open(p, O_RDWR);
            unsigned char c;
            assert_int_equal(pread(fd, &c, 1, cases[i].flip_at), 1);
            c ^= 0x5a;
            assert_int_equal(pwrite(fd, &c, 1, cases[i].flip_at), 1);
            close(fd);
        } else {
            assert_int_equal(truncate(p, cases[i].keep), 0);
        }
        char err[4096];
        capture_log(compile_into_victim, &o, err, sizeof err);
        rk_artifact *rebuilt = victim_result;
        if (!strstr(err, cases[i].report)) fprintf(stderr, "case '%s': the debug reports were: %s\n", cases[i].what, err);
        assert_non_null(strstr(err, cases[i].report));
        assert_false(rebuilt->cache_hit);
        assert_int_equal(rebuilt->binary_size, good->binary_size);
        assert_memory_equal(rebuilt->binary, good->binary, good->binary_size);
        rk_artifact_free(rebuilt);
        rk_artifact *again = compile(&o); /* the rebuilt entry is whole */
        assert_true(again->cache_hit);
        rk_artifact_free(again);
    }
    unsetenv("ROCKE_DEBUG");
    rk_artifact_free(good);
}

static void test_cache_off(void **state) {
    (void)state;
    char dir[] = "/tmp/rocke-cache-off-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("ROCKE_CACHE", "0", 1);
    setenv("ROCKE_CACHE_DIR", dir, 1);
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(rk_target_find("gfx942"), &o), RK_OK);
    unsetenv("ROCKE_CACHE");
    unsetenv("ROCKE_CACHE_DIR");
    o.inprocess = true;
    o.toolchain = RK_TOOLCHAIN_LLVM;
    rk_artifact *a = compile(&o), *b = compile(&o);
    assert_false(a->cache_hit || b->cache_hit);
    assert_string_equal(a->cache_key, "");
    assert_int_equal(count_files(dir, ""), 0);
    rk_artifact_free(a);
    rk_artifact_free(b);
    rm_tree(dir);
    /* an unwritable cache folder only costs the caching */
    o.cache = true;
    snprintf(o.cache_dir, sizeof o.cache_dir, "/proc/rocke-cache");
    a = compile(&o);
    assert_false(a->cache_hit);
    rk_artifact_free(a);
}

/* Writers and readers of one key in several processes: every read sees a
 * whole entry (one writer's payload, uniform, of its own size) or a miss;
 * no temporary files remain. */
static void test_concurrent_writers(void **state) {
    (void)state;
    enum { PROCS = 4, ROUNDS = 60 };
    char dir[] = "/tmp/rocke-cache-conc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    cc_key key;
    for (int i = 0; i < 16; i++) key.b[i] = (uint8_t)(i * 37 + 1);
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t pids[PROCS];
    for (int w = 0; w < PROCS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            char c;
            close(go[1]);
            if (read(go[0], &c, 1) < 0) _exit(10); /* all start together when the pipe closes */
            for (int r = 0; r < ROUNDS; r++) {
                cc_output out;
                memset(&out, 0, sizeof out);
                size_t n = 1000 + (size_t)w * 7919 + (size_t)r * 13;
                out.binary.data = malloc(n + 1);
                memset(out.binary.data, 'A' + w, n);
                out.binary.size = n;
                snprintf(out.toolchain_id, sizeof out.toolchain_id, "writer %d", w);
                cc_cache_put(dir, &key, &out);
                free(out.binary.data);
                cc_output got;
                memset(&got, 0, sizeof got);
                if (cc_cache_get(dir, &key, &got)) {
                    int who = got.binary.data[0] - 'A';
                    for (size_t i = 0; i < got.binary.size; i++)
                        if (got.binary.data[i] != got.binary.data[0]) _exit(2);
                    if (who < 0 || who >= PROCS || (got.binary.size - 1000 - (size_t)who * 7919) % 13) _exit(3);
                    char want[32];
                    snprintf(want, sizeof want, "writer %d", who);
                    if (strcmp(got.toolchain_id, want)) _exit(4);
                    cc_output_free(&got);
                }
            }
            _exit(0);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int w = 0; w < PROCS; w++) {
        int st;
        assert_int_equal(waitpid(pids[w], &st, 0), pids[w]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    cc_output last;
    memset(&last, 0, sizeof last);
    assert_true(cc_cache_get(dir, &key, &last)); /* the last rename won, whole */
    cc_output_free(&last);
    assert_int_equal(count_files(dir, ".tmp."), 0);
    assert_int_equal(count_files(dir, ".rkc"), 1);
    rm_tree(dir);
}

/* One compile of `ll` as `kernel` for target `tn`; returns the status and
 * copies the message (so hit and miss failures can be compared). */
static rk_status compile_as(const char *ll, const char *kernel, const char *tn, const rk_compile_options *o,
                            char *msg, size_t n, bool *hit) {
    rk_artifact *a = NULL;
    rk_status s = rk_compile_llvm_ir(ll, kernel, rk_target_find(tn), o, &a);
    snprintf(msg, n, "%s", s == RK_OK ? "" : rk_error_message());
    if (hit) *hit = a && a->cache_hit;
    if (s == RK_OK) assert_non_null(a);
    else assert_null(a);
    rk_artifact_free(a);
    return s;
}

static cc_key key_from_hex(const char *hex) {
    cc_key k;
    for (int i = 0; i < 16; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        k.b[i] = (uint8_t)v;
    }
    return k;
}

/* Rename the kernel inside a blob (same length: last letter changed). */
static void rename_in(cc_blob *b, const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; b->size >= n && i <= b->size - n; i++)
        if (!memcmp(b->data + i, name, n)) b->data[i + n - 1] ^= 1;
}

static const rk_compile_options *planted_opts;
static unsigned planted_case;
static char *planted_ll[2];
static const char *const planted_name[2] = {"vadd", "vadd_nv"}, *const planted_target[2] = {"gfx942", "sm_90"};
static void compile_planted(void *arg) {
    (void)arg;
    victim_result = NULL;
    rk_status s = rk_compile_llvm_ir(planted_ll[planted_case], planted_name[planted_case],
                                     rk_target_find(planted_target[planted_case]), planted_opts, &victim_result);
    if (s != RK_OK) fprintf(stderr, "%s\n", rk_error_message());
}

/* Issue 20 item 1: a compile that a miss refuses is refused on a hit too.
 * The key holds the kernel name, so another name is its own look-up and
 * fails as a miss does; an entry planted under the right key that defines
 * another kernel (valid checksum) is refused by the same output check.
 * AMD (HSACO symbols) and NVIDIA (PTX .entry, cubin when ptxas is found). */
static void test_hit_checks_like_miss(void **state) {
    (void)state;
    char nv_path[512];
    snprintf(nv_path, sizeof nv_path, "%s/tests/compile/fixtures/nv_vadd.ll", ROCKE_SOURCE_DIR);
    char *nv_ll;
    size_t nn;
    assert_int_equal(rk_read_file(nv_path, &nv_ll, &nn), RK_OK);
    struct { const char *ll, *good, *target; } cases[] = {{vadd_ll, "vadd", "gfx942"}, {nv_ll, "vadd_nv", "sm_90"}};
    planted_ll[0] = vadd_ll;
    planted_ll[1] = nv_ll;
    for (unsigned c = 0; c < 2; c++) {
        rk_compile_options o;
        assert_int_equal(rk_compile_options_default(rk_target_find(cases[c].target), &o), RK_OK);
        o.toolchain = RK_TOOLCHAIN_LLVM;
        o.inprocess = true;
        o.cache = false;
        char miss_msg[2048], hit_msg[2048], m[2048];
        bool hit;
        /* the reference: what a miss says */
        assert_int_not_equal(compile_as(cases[c].ll, "nope", cases[c].target, &o, miss_msg, sizeof miss_msg, &hit),
                             RK_OK);
        assert_non_null(strstr(miss_msg, "'nope'"));
        o.cache = true;
        snprintf(o.cache_dir, sizeof o.cache_dir, "%s", cache_dir);
        assert_int_equal(compile_as(cases[c].ll, cases[c].good, cases[c].target, &o, m, sizeof m, &hit), RK_OK);
        assert_int_equal(compile_as(cases[c].ll, cases[c].good, cases[c].target, &o, m, sizeof m, &hit), RK_OK);
        assert_true(hit);
        /* an entry exists for this text: the wrong name fails exactly as on a miss */
        assert_int_not_equal(compile_as(cases[c].ll, "nope", cases[c].target, &o, hit_msg, sizeof hit_msg, &hit),
                             RK_OK);
        assert_string_equal(hit_msg, miss_msg);
        /* and the entry is still good for the right name */
        rk_artifact *a = NULL;
        assert_int_equal(rk_compile_llvm_ir(cases[c].ll, cases[c].good, rk_target_find(cases[c].target), &o, &a),
                         RK_OK);
        assert_true(a->cache_hit);
        /* plant a whole entry that defines another kernel under the good key:
         * the hit check refuses it, it is rebuilt, the result is the miss's */
        cc_key k = key_from_hex(a->cache_key);
        cc_output out;
        memset(&out, 0, sizeof out);
        assert_true(cc_cache_get(cache_dir, &k, &out));
        rename_in(&out.binary, cases[c].good);
        rename_in(&out.cubin, cases[c].good);
        cc_cache_put(cache_dir, &k, &out);
        cc_output_free(&out);
        setenv("ROCKE_DEBUG", "1", 1);
        planted_opts = &o;
        planted_case = c;
        char err[4096];
        capture_log(compile_planted, NULL, err, sizeof err);
        unsetenv("ROCKE_DEBUG");
        assert_non_null(strstr(err, "should define exactly the kernel"));
        assert_non_null(strstr(err, "removing it and compiling again"));
        rk_artifact *b = victim_result;
        assert_false(b->cache_hit);
        assert_int_equal(b->binary_size, a->binary_size);
        assert_memory_equal(b->binary, a->binary, a->binary_size);
        rk_artifact_free(b);
        assert_int_equal(compile_as(cases[c].ll, cases[c].good, cases[c].target, &o, m, sizeof m, &hit), RK_OK);
        assert_true(hit); /* the rebuilt entry */
        rk_artifact_free(a);
    }
    rk_free(nv_ll, nn + 1);
}

/* A compile with toolchain none (a machine without LLVM) into msg. */
static rk_status compile_none(const char *ll, const char *name, const char *target, const char *dir,
                              rk_artifact **a, char *msg, size_t n) {
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(rk_target_find(target), &o), RK_OK);
    o.toolchain = RK_TOOLCHAIN_NONE;
    o.cache = dir != NULL;
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s", dir ? dir : "");
    *a = NULL;
    rk_status s = rk_compile_llvm_ir(ll, name, rk_target_find(target), &o, a);
    snprintf(msg, n, "%s", s == RK_OK ? "" : rk_error_message());
    return s;
}

static void test_ship_index(void **state) {
    (void)state;
    char nv_path[512], dir[128], msg[4096];
    snprintf(nv_path, sizeof nv_path, "%s/tests/compile/fixtures/nv_vadd.ll", ROCKE_SOURCE_DIR);
    snprintf(dir, sizeof dir, "%s/ship", cache_dir);
    char *nv_ll;
    size_t nn;
    assert_int_equal(rk_read_file(nv_path, &nv_ll, &nn), RK_OK);
    struct { const char *ll, *name, *target; } cases[] = {{vadd_ll, "vadd", "gfx942"}, {nv_ll, "vadd_nv", "sm_90a"}};
    for (unsigned c = 0; c < 2; c++) {
        rk_artifact *a = NULL, *b = NULL;
        /* not warmed yet: the error names the kernel, the target, the cache and the way to warm it */
        assert_int_equal(compile_none(cases[c].ll, cases[c].name, cases[c].target, dir, &b, msg, sizeof msg),
                         RK_ERR_TOOLCHAIN);
        assert_null(b);
        assert_non_null(strstr(msg, "is not in the cache"));
        assert_non_null(strstr(msg, cases[c].name));
        assert_non_null(strstr(msg, cases[c].target));
        assert_non_null(strstr(msg, dir));
        assert_non_null(strstr(msg, "python -m rocke warm"));
        assert_non_null(strstr(msg, "toolchain none"));
        /* warm it with LLVM: the entry plus its ship index file */
        rk_compile_options o;
        assert_int_equal(rk_compile_options_default(rk_target_find(cases[c].target), &o), RK_OK);
        o.toolchain = RK_TOOLCHAIN_LLVM;
        o.inprocess = true;
        snprintf(o.cache_dir, sizeof o.cache_dir, "%s", dir);
        assert_int_equal(rk_compile_llvm_ir(cases[c].ll, cases[c].name, rk_target_find(cases[c].target), &o, &a),
                         RK_OK);
        assert_false(a->cache_hit);
        assert_int_equal(count_files(dir, ".tmp."), 0);
        /* no compiler: the same bytes, from the cache, with the producing toolchain's name */
        assert_int_equal(compile_none(cases[c].ll, cases[c].name, cases[c].target, dir, &b, msg, sizeof msg), RK_OK);
        assert_true(b->cache_hit);
        assert_string_equal(b->cache_key, a->cache_key);
        assert_string_equal(b->toolchain, a->toolchain);
        assert_int_equal(b->binary_size, a->binary_size);
        assert_memory_equal(b->binary, a->binary, a->binary_size);
        assert_int_equal(b->cubin_size, a->cubin_size);
        if (a->cubin_size) assert_memory_equal(b->cubin, a->cubin, a->cubin_size);
        rk_artifact_free(b);
        /* another kernel text (one more comment line) was never warmed */
        size_t len = strlen(cases[c].ll);
        char *other = malloc(len + 32);
        snprintf(other, len + 32, "%s\n; another kernel\n", cases[c].ll);
        assert_int_equal(compile_none(other, cases[c].name, cases[c].target, dir, &b, msg, sizeof msg),
                         RK_ERR_TOOLCHAIN);
        free(other);
        /* with the cache off there is nothing to serve, and the message says so */
        assert_int_equal(compile_none(cases[c].ll, cases[c].name, cases[c].target, NULL, &b, msg, sizeof msg),
                         RK_ERR_TOOLCHAIN);
        assert_non_null(strstr(msg, "cache is off"));
        rk_artifact_free(a);
    }
    /* a damaged ship index file is removed and is a miss; a compile with LLVM writes it again */
    char ship_dir[256];
    snprintf(ship_dir, sizeof ship_dir, "%s/v1/ship", dir);
    int before = count_files(ship_dir, "");
    assert_int_equal(before, 2);
    DIR *d = opendir(ship_dir);
    struct dirent *e;
    char sub[512] = "", file[1024] = "";
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') snprintf(sub, sizeof sub, "%s/%s", ship_dir, e->d_name);
    closedir(d);
    d = opendir(sub);
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') snprintf(file, sizeof file, "%s/%s", sub, e->d_name);
    closedir(d);
    FILE *f = fopen(file, "w");
    fputs("rocke-ship 1 not a key\n", f);
    fclose(f);
    unsigned served = 0;
    for (unsigned c = 0; c < 2; c++) {
        rk_artifact *b = NULL;
        if (compile_none(cases[c].ll, cases[c].name, cases[c].target, dir, &b, msg, sizeof msg) == RK_OK) served++;
        rk_artifact_free(b);
    }
    assert_int_equal(served, 1);
    assert_int_equal(count_files(ship_dir, ""), 1);
    /* an override that is set but unusable is an error to fix, never answered from the cache */
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(rk_target_find("sm_90a"), &o), RK_OK);
    o.toolchain = RK_TOOLCHAIN_LLVM;
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s", dir);
    setenv("ROCKE_LLVM_LIB", "/nonexistent/libLLVM.so.22.1", 1);
    rk_artifact *c = NULL;
    assert_int_equal(rk_compile_llvm_ir(nv_ll, "vadd_nv", rk_target_find("sm_90a"), &o, &c), RK_ERR_TOOLCHAIN);
    assert_non_null(strstr(rk_error_message(), "an override is set but unusable"));
    assert_null(strstr(rk_error_message(), "is not in the cache"));
    unsetenv("ROCKE_LLVM_LIB");
    rk_free(nv_ll, nn + 1);
}

/* Replace the entry of the vadd compile by something else, compile again in
 * a child with a watchdog: it must not hang, must compile (a miss) and leave
 * a regular entry behind (except for a folder, which stays a miss). */
static void test_entry_not_a_file(void **state) {
    (void)state;
    rk_compile_options o = opts();
    rk_artifact *good = compile(&o);
    char p[RK_PATH_MAX], target[RK_PATH_MAX + 8];
    entry_path(good, p);
    snprintf(target, sizeof target, "%s.real", p);
    enum { FIFO, LINK, FOLDER, KINDS };
    for (int kind = 0; kind < KINDS; kind++) {
        assert_int_equal(unlink(p), 0);
        if (kind == FIFO) assert_int_equal(mkfifo(p, 0600), 0);
        if (kind == LINK) {
            FILE *f = fopen(target, "wb");
            fputs("not an entry", f);
            fclose(f);
            assert_int_equal(symlink(target, p), 0);
        }
        if (kind == FOLDER) assert_int_equal(mkdir(p, 0700), 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            alarm(60); /* a wait on the FIFO would end here, as a failure */
            rk_artifact *a = NULL;
            rk_status s = rk_compile_llvm_ir(vadd_ll, "vadd", rk_target_find("gfx942"), &o, &a);
            bool same = s == RK_OK && !a->cache_hit && a->binary_size == good->binary_size &&
                        !memcmp(a->binary, good->binary, good->binary_size);
            _exit(same ? 0 : 1);
        }
        int st;
        assert_int_equal(waitpid(child, &st, 0), child);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        struct stat after;
        assert_int_equal(lstat(p, &after), 0);
        if (kind == FOLDER) {
            assert_true(S_ISDIR(after.st_mode));
            assert_int_equal(rmdir(p), 0);
            rk_artifact *again = compile(&o); /* the name is free again: stored */
            assert_false(again->cache_hit);
            rk_artifact_free(again);
        } else {
            assert_true(S_ISREG(after.st_mode));
        }
        rk_artifact *hit = compile(&o);
        assert_true(hit->cache_hit);
        rk_artifact_free(hit);
    }
    /* the link's target was never touched */
    char buf[32] = {0};
    FILE *f = fopen(target, "rb");
    assert_non_null(f);
    assert_true(fread(buf, 1, sizeof buf - 1, f) > 0);
    fclose(f);
    assert_string_equal(buf, "not an entry");
    unlink(target);
    rk_artifact_free(good);
}

int main(void) {
    unsetenv("ROCKE_CACHE");
    unsetenv("ROCKE_TOOLCHAIN");
    unsetenv("ROCKE_LLVM_FLAVOR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_miss_then_hit),
        cmocka_unit_test(test_corrupt_and_truncated),
        cmocka_unit_test(test_cache_off),
        cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test(test_hit_checks_like_miss),
        cmocka_unit_test(test_entry_not_a_file),
        cmocka_unit_test(test_ship_index),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
