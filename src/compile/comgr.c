/* rocke — the comgr toolchain: libamd_comgr (ROCm 6/7) found at run time in
 * the documented order and driven through its C API (declared here from the
 * public amd_comgr.h documentation; the header is not needed to build):
 * SOURCE (LLVM IR) -> BC -> RELOCATABLE -> EXECUTABLE with one action info,
 * every handle released in reverse order on every path. Layer: compile. */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "compile_int.h"

/* ---- the slice of the comgr API rocke uses (values from amd_comgr.h) ---------- */
typedef int cg_status;                          /* AMD_COMGR_STATUS_SUCCESS = 0 */
typedef struct { uint64_t handle; } cg_data;
typedef struct { uint64_t handle; } cg_set;
typedef struct { uint64_t handle; } cg_info;
enum { CG_KIND_SOURCE = 0x1, CG_KIND_LOG = 0x5, CG_KIND_BC = 0x6, CG_KIND_RELOCATABLE = 0x7,
       CG_KIND_EXECUTABLE = 0x8 };
/* Action numbers moved in comgr 3.0 (ROCm 7), which dropped
 * ADD_DEVICE_LIBRARIES (3) and OPTIMIZE_BC_TO_BC (5) from the enum: 2.x has
 * LINK_BC_TO_BC 4, CODEGEN_BC_TO_RELOCATABLE 6, CODEGEN_BC_TO_ASSEMBLY 7,
 * LINK_RELOCATABLE_TO_EXECUTABLE 9; 3.x has 3, 4, 5 and 7. The first three
 * kept their numbers. */
enum { CG_ACT_SOURCE_TO_PREPROCESSOR = 0x0, CG_ACT_COMPILE_SOURCE_TO_BC = 0x2 };
typedef struct cg_actions { int codegen_reloc, codegen_asm, link_exe; } cg_actions;
static const cg_actions actions_v2 = {0x6, 0x7, 0x9}, actions_v3 = {0x4, 0x5, 0x7};
/* AMD_COMGR_LANGUAGE_LLVM_IR is 5 in comgr 2.x (ROCm 6: OpenCL 1.2, 2.0, HC,
 * HIP come first) and 4 in comgr 3.x (ROCm 7 dropped HC). */
enum { CG_LANG_OPENCL_1_2 = 0x1, CG_LANG_LLVM_IR_V2 = 0x5, CG_LANG_LLVM_IR_V3 = 0x4 };

#define CG_FNS(X)                                                                                      \
    X(amd_comgr_get_version, void, (size_t *, size_t *))                                              \
    X(amd_comgr_status_string, cg_status, (cg_status, const char **))                                 \
    X(amd_comgr_create_data, cg_status, (int, cg_data *))                                             \
    X(amd_comgr_release_data, cg_status, (cg_data))                                                   \
    X(amd_comgr_set_data, cg_status, (cg_data, size_t, const char *))                                 \
    X(amd_comgr_set_data_name, cg_status, (cg_data, const char *))                                    \
    X(amd_comgr_get_data, cg_status, (cg_data, size_t *, char *))                                     \
    X(amd_comgr_create_data_set, cg_status, (cg_set *))                                               \
    X(amd_comgr_destroy_data_set, cg_status, (cg_set))                                                \
    X(amd_comgr_data_set_add, cg_status, (cg_set, cg_data))                                           \
    X(amd_comgr_action_data_count, cg_status, (cg_set, int, size_t *))                                \
    X(amd_comgr_action_data_get_data, cg_status, (cg_set, int, size_t, cg_data *))                    \
    X(amd_comgr_create_action_info, cg_status, (cg_info *))                                           \
    X(amd_comgr_destroy_action_info, cg_status, (cg_info))                                            \
    X(amd_comgr_action_info_set_isa_name, cg_status, (cg_info, const char *))                         \
    X(amd_comgr_action_info_set_language, cg_status, (cg_info, int))                                  \
    X(amd_comgr_action_info_set_option_list, cg_status, (cg_info, const char **, size_t))             \
    X(amd_comgr_do_action, cg_status, (int, cg_info, cg_set, cg_set))                                 \
    X(amd_comgr_get_isa_name, cg_status, (size_t, const char **))

typedef struct comgr {
    char path[RK_PATH_MAX];
    void *handle;
    size_t major, minor;                 /* comgr API version */
    unsigned llvm_major, llvm_minor, llvm_patch; /* 0 until probed */
    char rocm[32];                       /* from <root>/.info/version, "" if unknown */
    cg_status (*set_logging)(cg_info, bool);     /* optional */
    void (*llvm_version)(unsigned *, unsigned *, unsigned *); /* LLVMGetVersion if exported */
#define CG_FIELD(name, ret, args) ret(*name) args;
    CG_FNS(CG_FIELD)
#undef CG_FIELD
} comgr;

#define MAX_LIBS 4
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static comgr *libs[MAX_LIBS];

/* ---- discovery ---------------------------------------------------------------- */
static void read_rocm_version(comgr *c) {
    char p[RK_PATH_MAX + 32];
    const char *slash = strrchr(c->path, '/');
    if (!slash) return;
    snprintf(p, sizeof p, "%.*s/../.info/version", (int)(slash - c->path), c->path);
    FILE *f = fopen(p, "r");
    if (!f) return;
    if (fgets(c->rocm, sizeof c->rocm, f)) c->rocm[strcspn(c->rocm, "-\r\n")] = '\0';
    fclose(f);
}

/* dlopen + resolve + version gate; the loaded library is kept for the
 * process. `why` gets the reason when it is refused. */
static comgr *open_lib(const char *path, char *why, size_t nwhy) {
    for (int i = 0; i < MAX_LIBS && libs[i]; i++)
        if (!strcmp(libs[i]->path, path)) return libs[i];
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, nwhy, "%s", e ? e : "cannot be loaded");
        return NULL;
    }
    comgr tmp;
    memset(&tmp, 0, sizeof tmp);
    const char *missing = NULL;
#define CG_SYM(name, ret, args) \
    if (!missing && !(*(void **)(&tmp.name) = dlsym(h, #name))) missing = #name;
    CG_FNS(CG_SYM)
#undef CG_SYM
    if (missing) {
        snprintf(why, nwhy, "not a usable libamd_comgr (lacks %s)", missing);
        dlclose(h);
        return NULL;
    }
    tmp.amd_comgr_get_version(&tmp.major, &tmp.minor);
    if (tmp.major < 2 || (tmp.major == 2 && tmp.minor < 6)) {
        snprintf(why, nwhy, "comgr %zu.%zu is too old (ROCm 6 or newer needed: comgr >= 2.6)", tmp.major, tmp.minor);
        dlclose(h);
        return NULL;
    }
    if (tmp.major > 3) { /* 3.0 renumbered the actions; a later major may again */
        snprintf(why, nwhy, "comgr %zu.%zu is newer than this rocke knows (2.6 to 3.x): its action numbers are "
                 "unknown", tmp.major, tmp.minor);
        dlclose(h);
        return NULL;
    }
    int slot = 0;
    while (slot < MAX_LIBS && libs[slot]) slot++;
    comgr *c = slot < MAX_LIBS ? rk_calloc(1, sizeof *c) : NULL;
    if (!c) {
        snprintf(why, nwhy, "too many comgr libraries loaded");
        return NULL; /* keep h: its initializers ran */
    }
    *c = tmp;
    c->handle = h;
    snprintf(c->path, sizeof c->path, "%s", path);
    *(void **)(&c->set_logging) = dlsym(h, "amd_comgr_action_info_set_logging");
    *(void **)(&c->llvm_version) = dlsym(h, "LLVMGetVersion");
    read_rocm_version(c);
    libs[slot] = c;
    return c;
}

static bool try_path(const char *path, bool must_exist, rk_buf *tried, comgr **out) {
    struct stat st;
    if (must_exist && stat(path, &st) != 0) return false; /* absent files are not worth listing one by one */
    char why[512] = "";
    pthread_mutex_lock(&lock);
    *out = open_lib(path, why, sizeof why);
    pthread_mutex_unlock(&lock);
    if (!*out && tried) rk_buf_printf(tried, "%s%s (%s)", tried->len ? ", " : "", path, why);
    return *out != NULL;
}

/* "/opt/rocm-7.10.0" sorts after "/opt/rocm-7.2.0": compare number runs numerically. */
static int vercmp(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    while (*x && *y) {
        if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
            unsigned long u = strtoul(x, (char **)&x, 10), v = strtoul(y, (char **)&y, 10);
            if (u != v) return u < v ? 1 : -1; /* newest first */
        } else {
            if (*x != *y) return *x < *y ? 1 : -1;
            x++, y++;
        }
    }
    return *x ? -1 : *y ? 1 : 0;
}

/* ROCm roots under /opt, newest first. */
static int rocm_roots(char *names[], int max) {
    DIR *d = opendir("/opt");
    int n = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max)
        if (!strncmp(e->d_name, "rocm", 4)) {
            char *s = rk_malloc(strlen(e->d_name) + 6);
            if (!s) break;
            sprintf(s, "/opt/%s", e->d_name);
            names[n++] = s;
        }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, vercmp);
    return n;
}

static bool try_dir(const char *dir, rk_buf *tried, comgr **out) {
    static const char *const files[] = {"libamd_comgr.so", "libamd_comgr.so.3", "libamd_comgr.so.2"};
    char p[RK_PATH_MAX];
    for (unsigned i = 0; i < RK_COUNTOF(files); i++)
        if (snprintf(p, sizeof p, "%s/%s", dir, files[i]) < (int)sizeof p && try_path(p, true, tried, out))
            return true;
    return false;
}

static cc_found find(rk_buf *tried, comgr **c) {
    *c = NULL;
    const char *env = getenv("ROCKE_COMGR_LIB");
    if (env && *env) return try_path(env, false, tried, c) ? CC_FOUND : CC_BAD_OVERRIDE;
    rk_buf_printf(tried, "%s$ROCKE_COMGR_LIB (unset)", tried->len ? ", " : "");
    char p[RK_PATH_MAX];
    static const char *const roots_env[] = {"ROCM_PATH", "ROCM_HOME"};
    for (unsigned i = 0; i < RK_COUNTOF(roots_env); i++) {
        const char *r = getenv(roots_env[i]);
        if (r && *r && snprintf(p, sizeof p, "%s/lib", r) < (int)sizeof p && try_dir(p, tried, c)) return CC_FOUND;
    }
    char *roots[32];
    int n = rocm_roots(roots, 32);
    bool found = false;
    for (int pass = 0; pass < 2 && !found; pass++) /* core-N/lib (TheRock layout) first, then lib */
        for (int i = 0; i < n && !found; i++) {
            if (pass == 0) {
                DIR *d = opendir(roots[i]);
                struct dirent *e;
                while (d && !found && (e = readdir(d)))
                    if (!strncmp(e->d_name, "core-", 5) &&
                        snprintf(p, sizeof p, "%s/%s/lib", roots[i], e->d_name) < (int)sizeof p)
                        found = try_dir(p, tried, c);
                if (d) closedir(d);
            } else if (snprintf(p, sizeof p, "%s/lib", roots[i]) < (int)sizeof p) {
                found = try_dir(p, tried, c);
            }
        }
    for (int i = 0; i < n; i++) rk_free(roots[i], strlen(roots[i]) + 1);
    if (found) return CC_FOUND;
    rk_buf_printf(tried, "%s/opt/rocm*/lib (%s)", tried->len ? ", " : "", n ? "no usable libamd_comgr" : "no ROCm");
    /* each failing dlopen walks the loader's folders (~1 ms): keep the list short */
    static const char *const sonames[] = {"libamd_comgr.so.3", "libamd_comgr.so.2"};
    for (unsigned i = 0; i < RK_COUNTOF(sonames); i++)
        if (try_path(sonames[i], false, tried, c)) return CC_FOUND;
    return CC_ABSENT;
}

static comgr *lib_of(const char *path) {
    comgr *c = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_LIBS && libs[i]; i++)
        if (!strcmp(libs[i]->path, path)) c = libs[i];
    pthread_mutex_unlock(&lock);
    return c;
}

/* ---- the compiler's LLVM version (§3.4): LLVMGetVersion, else ask the
 * preprocessor for __clang_major__ and friends. ---------------------------- */
static const char *cg_err(const comgr *c, cg_status st) {
    const char *s = NULL;
    if (c->amd_comgr_status_string(st, &s) != 0 || !s) s = "unknown status";
    return s;
}

static void probe_llvm(comgr *c) {
    if (c->llvm_major) return;
    if (c->llvm_version) {
        c->llvm_version(&c->llvm_major, &c->llvm_minor, &c->llvm_patch);
        return;
    }
    static const char src[] = "ROCKE_VERSION_MARKER __clang_major__ __clang_minor__ __clang_patchlevel__\n";
    cg_set in = {0}, out = {0};
    cg_data d = {0}, o = {0};
    cg_info info = {0};
    bool in_ok = false, d_ok = false, info_ok = false, out_ok = false, o_ok = false;
    const char *isa = NULL;
    char text[512] = "";
    size_t n = 0;
    if (c->amd_comgr_create_data_set(&in) || !(in_ok = true)) goto done;
    if (c->amd_comgr_create_data(CG_KIND_SOURCE, &d) || !(d_ok = true)) goto done;
    if (c->amd_comgr_set_data(d, sizeof src - 1, src) || c->amd_comgr_set_data_name(d, "rocke_compiler_version.cl") ||
        c->amd_comgr_data_set_add(in, d))
        goto done;
    if (c->amd_comgr_create_action_info(&info) || !(info_ok = true)) goto done;
    if (c->amd_comgr_get_isa_name(0, &isa) || !isa || c->amd_comgr_action_info_set_isa_name(info, isa) ||
        c->amd_comgr_action_info_set_language(info, CG_LANG_OPENCL_1_2))
        goto done;
    if (c->amd_comgr_create_data_set(&out) || !(out_ok = true)) goto done;
    if (c->amd_comgr_do_action(CG_ACT_SOURCE_TO_PREPROCESSOR, info, in, out)) goto done;
    if (c->amd_comgr_action_data_get_data(out, CG_KIND_SOURCE, 0, &o) || !(o_ok = true)) goto done;
    if (c->amd_comgr_get_data(o, &n, NULL) || n >= sizeof text || c->amd_comgr_get_data(o, &n, text)) goto done;
    text[n] = '\0';
    const char *m = strstr(text, "ROCKE_VERSION_MARKER");
    if (m) sscanf(m + 20, "%u %u %u", &c->llvm_major, &c->llvm_minor, &c->llvm_patch);
done:
    if (o_ok) c->amd_comgr_release_data(o);
    if (out_ok) c->amd_comgr_destroy_data_set(out);
    if (info_ok) c->amd_comgr_destroy_action_info(info);
    if (d_ok) c->amd_comgr_release_data(d);
    if (in_ok) c->amd_comgr_destroy_data_set(in);
}

cc_found cc_comgr_find(cc_toolchain *tc, rk_buf *tried) {
    comgr *c;
    cc_found f = find(tried, &c);
    if (f != CC_FOUND) return f;
    snprintf(tc->lib, sizeof tc->lib, "%s", c->path);
    pthread_mutex_lock(&lock);
    probe_llvm(c);
    pthread_mutex_unlock(&lock);
    tc->major = c->llvm_major;
    tc->minor = c->llvm_minor;
    tc->patch = c->llvm_patch;
    return CC_FOUND;
}

/* ---- compile ------------------------------------------------------------------ */
typedef struct cg_run {
    const comgr *c;
    cg_info info;
    bool info_ok;
    rk_buf log;
} cg_run;

/* Append the LOG entries of a result set (comgr's diagnostics) to run->log. */
static void collect_log(cg_run *r, cg_set set) {
    size_t n = 0;
    if (r->c->amd_comgr_action_data_count(set, CG_KIND_LOG, &n)) return;
    for (size_t i = 0; i < n; i++) {
        cg_data d;
        size_t len = 0;
        if (r->c->amd_comgr_action_data_get_data(set, CG_KIND_LOG, i, &d)) continue;
        if (!r->c->amd_comgr_get_data(d, &len, NULL) && len && rk_buf_reserve(&r->log, len) &&
            !r->c->amd_comgr_get_data(d, &len, r->log.data + r->log.len)) {
            r->log.len += len;
            r->log.data[r->log.len] = '\0';
        }
        r->c->amd_comgr_release_data(d);
    }
}

static rk_status fail_step(cg_run *r, const char *step, cg_status st) {
    size_t n = r->log.len;
    while (n && r->log.data[n - 1] == '\n') n--;
    return rk_fail(RK_ERR_TOOLCHAIN, "comgr %s: status=%d (%s)%s%.*s", step, st, cg_err(r->c, st), n ? "\n" : "",
                   (int)(n > 4000 ? 4000 : n), n ? r->log.data + (n > 4000 ? n - 4000 : 0) : "");
}

/* Copy the first data of `kind` out of a result set into a blob. */
static rk_status extract(cg_run *r, cg_set set, int kind, const char *step, cc_blob *out) {
    const comgr *c = r->c;
    size_t n = 0, size = 0;
    cg_status st = c->amd_comgr_action_data_count(set, kind, &n);
    if (st) return fail_step(r, step, st);
    if (n == 0) return rk_fail(RK_ERR_TOOLCHAIN, "comgr %s produced no output", step);
    cg_data d;
    if ((st = c->amd_comgr_action_data_get_data(set, kind, 0, &d))) return fail_step(r, step, st);
    rk_status s = RK_OK;
    if ((st = c->amd_comgr_get_data(d, &size, NULL))) s = fail_step(r, step, st);
    else if (!(out->data = rk_malloc(size + 1))) s = rk_fail(RK_ERR_NOMEM, "out of memory reading comgr output");
    else {
        out->size = size; /* the block's size from here on, so every path frees it exactly */
        if ((st = c->amd_comgr_get_data(d, &size, (char *)out->data))) s = fail_step(r, step, st);
        else out->data[size] = 0;
    }
    c->amd_comgr_release_data(d);
    if (s != RK_OK) cc_blob_free(out);
    return s;
}

/* One action into a fresh set; the set is returned even on failure so the
 * caller releases it in order. */
static rk_status action(cg_run *r, int kind, cg_set in, cg_set *out, bool *out_ok, const char *step) {
    cg_status st = r->c->amd_comgr_create_data_set(out);
    if (st) return fail_step(r, step, st);
    *out_ok = true;
    st = r->c->amd_comgr_do_action(kind, r->info, in, *out);
    collect_log(r, *out);
    return st ? fail_step(r, step, st) : RK_OK;
}

rk_status cc_comgr_compile(cc_toolchain *tc, const cc_job *job, cc_output *out) {
    const comgr *c = lib_of(tc->lib);
    if (!c) return rk_fail(RK_ERR_TOOLCHAIN, "libamd_comgr '%s' is not loaded", tc->lib);
    cg_run r = {.c = c};
    rk_buf_init(&r.log);
    cg_set in = {0}, bc = {0}, reloc = {0}, exe = {0}, asmset = {0};
    cg_data src = {0};
    bool in_ok = false, src_ok = false, bc_ok = false, reloc_ok = false, exe_ok = false, asm_ok = false;
    char isa[96], olevel[8];
    snprintf(isa, sizeof isa, "amdgcn-amd-amdhsa--%s", job->t->cpu);
    snprintf(olevel, sizeof olevel, "-O%u", job->opt_level);
    const char *opts[] = {olevel};
    rk_status s;
    cg_status st;
    if ((st = c->amd_comgr_create_data_set(&in))) { s = fail_step(&r, "create_data_set", st); goto done; }
    in_ok = true;
    if ((st = c->amd_comgr_create_data(CG_KIND_SOURCE, &src))) { s = fail_step(&r, "create_data", st); goto done; }
    src_ok = true;
    if ((st = c->amd_comgr_set_data(src, job->ll_len, job->ll)) ||
        (st = c->amd_comgr_set_data_name(src, "kernel.ll")) || (st = c->amd_comgr_data_set_add(in, src))) {
        s = fail_step(&r, "set_data", st);
        goto done;
    }
    if ((st = c->amd_comgr_create_action_info(&r.info))) { s = fail_step(&r, "create_action_info", st); goto done; }
    r.info_ok = true;
    if ((st = c->amd_comgr_action_info_set_isa_name(r.info, isa))) {
        s = rk_fail(RK_ERR_TOOLCHAIN, "comgr %zu.%zu does not know the ISA '%s' (status=%d, %s): ROCm too old "
                    "for %s?", c->major, c->minor, isa, st, cg_err(c, st), job->t->name);
        goto done;
    }
    int lang = c->major >= 3 ? CG_LANG_LLVM_IR_V3 : CG_LANG_LLVM_IR_V2;
    const cg_actions *act = c->major >= 3 ? &actions_v3 : &actions_v2;
    if ((st = c->amd_comgr_action_info_set_language(r.info, lang)) ||
        (st = c->amd_comgr_action_info_set_option_list(r.info, opts, 1))) {
        s = fail_step(&r, "action_info", st);
        goto done;
    }
    if (c->set_logging) c->set_logging(r.info, true);
    double t0 = cc_now_ms();
    if ((s = action(&r, CG_ACT_COMPILE_SOURCE_TO_BC, in, &bc, &bc_ok, "COMPILE_SOURCE_TO_BC")) != RK_OK) goto done;
    s = action(&r, act->codegen_reloc, bc, &reloc, &reloc_ok, "CODEGEN_BC_TO_RELOCATABLE");
    if (s != RK_OK) goto done;
    if (job->want_isa) {
        cc_blob text = {0};
        s = action(&r, act->codegen_asm, bc, &asmset, &asm_ok, "CODEGEN_BC_TO_ASSEMBLY");
        if (s == RK_OK) s = extract(&r, asmset, CG_KIND_SOURCE, "CODEGEN_BC_TO_ASSEMBLY", &text);
        if (s != RK_OK) goto done;
        out->isa = (char *)text.data;
    }
    out->compile_ms = cc_now_ms() - t0;
    t0 = cc_now_ms();
    s = action(&r, act->link_exe, reloc, &exe, &exe_ok, "LINK_RELOCATABLE_TO_EXECUTABLE");
    if (s != RK_OK) goto done;
    if ((s = extract(&r, exe, CG_KIND_EXECUTABLE, "LINK_RELOCATABLE_TO_EXECUTABLE", &out->binary)) != RK_OK) goto done;
    out->link_ms = cc_now_ms() - t0;
    s = cc_check_hsaco(&out->binary, job->kernel);
    char *id = out->toolchain_id;
    size_t idn = sizeof out->toolchain_id;
    pthread_mutex_lock(&lock); /* another thread's cc_comgr_find may be probing */
    unsigned lmaj = c->llvm_major, lmin = c->llvm_minor, lpat = c->llvm_patch;
    pthread_mutex_unlock(&lock);
    if (c->rocm[0] && lmaj)
        snprintf(id, idn, "comgr %zu.%zu (ROCm %s, LLVM %u.%u.%u)", c->major, c->minor, c->rocm, lmaj, lmin, lpat);
    else if (c->rocm[0])
        snprintf(id, idn, "comgr %zu.%zu (ROCm %s)", c->major, c->minor, c->rocm);
    else if (lmaj)
        snprintf(id, idn, "comgr %zu.%zu (LLVM %u.%u.%u)", c->major, c->minor, lmaj, lmin, lpat);
    else
        snprintf(id, idn, "comgr %zu.%zu", c->major, c->minor);
done:
    /* reverse order of creation, each only if it was created */
    if (asm_ok) c->amd_comgr_destroy_data_set(asmset);
    if (exe_ok) c->amd_comgr_destroy_data_set(exe);
    if (reloc_ok) c->amd_comgr_destroy_data_set(reloc);
    if (bc_ok) c->amd_comgr_destroy_data_set(bc);
    if (r.info_ok) c->amd_comgr_destroy_action_info(r.info);
    if (src_ok) c->amd_comgr_release_data(src);
    if (in_ok) c->amd_comgr_destroy_data_set(in);
    rk_buf_free(&r.log);
    if (s != RK_OK) cc_output_free(out);
    return s;
}
