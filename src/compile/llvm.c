/* rocke — loading libLLVM at run time: dlopen (never linked), every entry
 * point through dlsym, AMDGPU and NVPTX initialized once per library under
 * a lock, and the "llvm" toolchain (codegen + the AMD link / ptxas). Layer: compile. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "llvm_int.h"

#define MAX_LIBS 4

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static cc_llvm *loaded[MAX_LIBS];   /* process lifetime: LLVM cannot be unloaded safely */

static rk_status resolve(cc_llvm *L) {
    const char *missing = NULL;
#define CC_SYM(name)                                                   \
    if (!missing) {                                                    \
        *(void **)(&L->name) = dlsym(L->handle, #name);                \
        if (!L->name) missing = #name;                                 \
    }
    CC_LLVM_FNS(CC_SYM)
#undef CC_SYM
    if (missing)
        return rk_fail(RK_ERR_TOOLCHAIN, "'%s' is not a usable libLLVM: it lacks %s (LLVM >= 20 needed)", L->path,
                       missing);
    void (*init[16])(void);
    const char *names[16];
    int n = 0;
#define CC_INIT(name) names[n] = #name; *(void **)(&init[n]) = dlsym(L->handle, #name); n++;
    CC_LLVM_INITS(CC_INIT)
#undef CC_INIT
    for (int i = 0; i < n; i++)
        if (!init[i])
            return rk_fail(RK_ERR_TOOLCHAIN, "libLLVM '%s' was built without the %s target (%s missing)", L->path,
                           strstr(names[i], "AMDGPU") ? "AMDGPU" : "NVPTX", names[i]);
    for (int i = 0; i < n; i++) init[i]();
    L->LLVMGetVersion(&L->major, &L->minor, &L->patch);
    if (L->major < 20)
        return rk_fail(RK_ERR_TOOLCHAIN, "libLLVM '%s' is LLVM %u.%u.%u; rocke needs LLVM >= 20", L->path, L->major,
                       L->minor, L->patch);
    return RK_OK;
}

rk_status cc_llvm_load(const char *path, const cc_llvm **out) {
    *out = NULL;
    pthread_mutex_lock(&load_lock);
    for (int i = 0; i < MAX_LIBS && loaded[i]; i++)
        if (!strcmp(loaded[i]->path, path)) {
            *out = loaded[i];
            pthread_mutex_unlock(&load_lock);
            return RK_OK;
        }
    rk_status s = RK_OK;
    int slot = 0;
    while (slot < MAX_LIBS && loaded[slot]) slot++;
    cc_llvm *L = slot < MAX_LIBS ? rk_calloc(1, sizeof *L) : NULL;
    if (!L) {
        s = rk_fail(slot < MAX_LIBS ? RK_ERR_NOMEM : RK_ERR_TOOLCHAIN, "cannot load another libLLVM ('%s')", path);
        goto done;
    }
    snprintf(L->path, sizeof L->path, "%s", path);
    L->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!L->handle) {
        const char *e = dlerror();
        s = rk_fail(RK_ERR_TOOLCHAIN, "cannot load libLLVM '%s': %s", path, e ? e : "unknown error");
        rk_free(L, sizeof *L);
        goto done;
    }
    s = resolve(L);
    if (s != RK_OK) {
        /* keep the handle open: a library's initializers may have run */
        rk_free(L, sizeof *L);
        goto done;
    }
    loaded[slot] = L;
    *out = L;
    cc_debug("loaded %s (LLVM %u.%u.%u)", path, L->major, L->minor, L->patch);
done:
    pthread_mutex_unlock(&load_lock);
    return s;
}

void cc_llvm_version(const cc_llvm *L, unsigned *maj, unsigned *min, unsigned *patch) {
    *maj = L->major;
    *min = L->minor;
    *patch = L->patch;
}

/* The "llvm" toolchain: codegen in a worker process (or in process), then
 * the AMD link (cc_link_hsaco) or ptxas when present (NVIDIA). */
rk_status cc_llvm_compile(cc_toolchain *tc, const cc_job *job, cc_output *out) {
    const cc_llvm *L;
    rk_status s = cc_llvm_load(tc->lib, &L);
    if (s != RK_OK) return s;
    tc->major = L->major;
    tc->minor = L->minor;
    tc->patch = L->patch;
    bool amd = job->t->vendor == RK_VENDOR_AMD;
    double t0 = cc_now_ms();
    cc_blob obj = {0};
    s = cc_llvm_codegen(L, job, &obj, amd && job->want_isa ? &out->isa : NULL, &out->fork_ms, &out->opt_ms);
    out->compile_ms = cc_now_ms() - t0;
    if (s != RK_OK) return s;
    const char *last = amd ? "" : tc->ptxas[0] ? "ptxas" : "";
    t0 = cc_now_ms();
    if (amd) {
        s = cc_link_hsaco(tc, &obj, job->kernel, &out->binary, &last);
        cc_blob_free(&obj);
    } else {
        out->binary = obj;
        s = cc_check_ptx(&out->binary, job->kernel);
        if (s == RK_OK && tc->ptxas[0]) s = cc_ptxas(tc->ptxas, &out->binary, job->t, job->kernel, &out->cubin);
    }
    out->link_ms = cc_now_ms() - t0;
    snprintf(out->toolchain_id, sizeof out->toolchain_id, "llvm-%u.%u.%u %s%s%.40s", L->major, L->minor, L->patch,
             job->inprocess ? "in-process" : "worker process", *last ? " + " : "", last);
    return s;
}
