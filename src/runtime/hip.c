/* rocke — the HIP backend: libamdhip64 is found and loaded with dlopen
 * (ROCKE_HIP_LIB, ROCm roots newest first, then the dynamic linker), no HIP
 * headers needed: the few types and enum values used are spelled here from
 * the ROCm 6 API. Device properties are read into a zeroed 4096-byte buffer
 * (the struct layout differs between ROCm releases) and scanned for the
 * gfx name. HSACO modules, kernelParams launches, memory, streams, events,
 * graph capture. Layer: runtime. */
#include <dlfcn.h>
#include <glob.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime_int.h"

typedef int hipError_t;
typedef void *hipModule_t, *hipFunction_t, *hipStream_t, *hipEvent_t, *hipGraph_t, *hipGraphExec_t;
typedef void *hipDeviceptr_t;
enum { hipSuccess = 0, hipErrorNotFound = 500, hipErrorNotReady = 600, hipErrorNoBinaryForGpu = 209,
       hipErrorInvalidImage = 200, hipErrorLaunchFailure = 719, hipErrorIllegalAddress = 700 };
/* hipDeviceAttribute_t positions stable since ROCm 5 (upstream rocke reads 63 and 10012 too) */
enum { hipAttrClockRate = 5, hipAttrL2CacheSize = 19, hipAttrMaxThreadsPerBlock = 56,
       hipAttrMultiprocessorCount = 63, hipAttrAsicRevision = 10012 };
enum { hipFuncAttrMaxThreadsPerBlock = 0, hipFuncAttrSharedSizeBytes = 1 };
enum { hipStreamCaptureModeThreadLocal = 1 };

#define HIP_REQUIRED(X)                                                                              \
    X(hipInit, hipError_t, (unsigned)) X(hipDriverGetVersion, hipError_t, (int *))                   \
    X(hipGetDeviceCount, hipError_t, (int *)) X(hipGetDevice, hipError_t, (int *))                   \
    X(hipSetDevice, hipError_t, (int)) X(hipDeviceGetAttribute, hipError_t, (int *, int, int))       \
    X(hipGetErrorName, const char *, (hipError_t)) X(hipGetErrorString, const char *, (hipError_t))  \
    X(hipDeviceSynchronize, hipError_t, (void)) X(hipMalloc, hipError_t, (void **, size_t))          \
    X(hipFree, hipError_t, (void *)) X(hipMemcpyHtoD, hipError_t, (hipDeviceptr_t, void *, size_t))  \
    X(hipMemcpyDtoH, hipError_t, (void *, hipDeviceptr_t, size_t))                                   \
    X(hipMemcpyDtoDAsync, hipError_t, (hipDeviceptr_t, hipDeviceptr_t, size_t, hipStream_t))         \
    X(hipMemsetD8Async, hipError_t, (hipDeviceptr_t, unsigned char, size_t, hipStream_t))            \
    X(hipModuleLoadData, hipError_t, (hipModule_t *, const void *))                                  \
    X(hipModuleUnload, hipError_t, (hipModule_t))                                                    \
    X(hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *))               \
    X(hipModuleLaunchKernel, hipError_t, (hipFunction_t, unsigned, unsigned, unsigned, unsigned,     \
                                          unsigned, unsigned, unsigned, hipStream_t, void **, void **)) \
    X(hipStreamCreate, hipError_t, (hipStream_t *)) X(hipStreamDestroy, hipError_t, (hipStream_t))   \
    X(hipStreamSynchronize, hipError_t, (hipStream_t)) X(hipEventCreate, hipError_t, (hipEvent_t *)) \
    X(hipEventDestroy, hipError_t, (hipEvent_t)) X(hipEventRecord, hipError_t, (hipEvent_t, hipStream_t)) \
    X(hipEventSynchronize, hipError_t, (hipEvent_t)) X(hipEventQuery, hipError_t, (hipEvent_t))      \
    X(hipEventElapsedTime, hipError_t, (float *, hipEvent_t, hipEvent_t))
#define HIP_OPTIONAL(X)                                                                              \
    X(hipGetDevicePropertiesR0600, hipError_t, (void *, int))                                        \
    X(hipGetDeviceProperties, hipError_t, (void *, int))                                             \
    X(hipDeviceTotalMem, hipError_t, (size_t *, int))                                                \
    X(hipFuncGetAttribute, hipError_t, (int *, int, hipFunction_t))                                  \
    X(hipStreamBeginCapture, hipError_t, (hipStream_t, int))                                         \
    X(hipStreamEndCapture, hipError_t, (hipStream_t, hipGraph_t *))                                  \
    X(hipGraphInstantiate, hipError_t, (hipGraphExec_t *, hipGraph_t, void *, char *, size_t))       \
    X(hipGraphLaunch, hipError_t, (hipGraphExec_t, hipStream_t))                                     \
    X(hipGraphExecDestroy, hipError_t, (hipGraphExec_t)) X(hipGraphDestroy, hipError_t, (hipGraph_t))

typedef struct hip_api {
#define HIP_FIELD(name, ret, args) ret(*name) args;
    HIP_REQUIRED(HIP_FIELD)
    HIP_OPTIONAL(HIP_FIELD)
#undef HIP_FIELD
} hip_api;

typedef struct hip_sym { const char *name; size_t off; } hip_sym;
#define HIP_SYM(name, ret, args) {#name, offsetof(hip_api, name)},
static const hip_sym required_syms[] = {HIP_REQUIRED(HIP_SYM)};
static const hip_sym optional_syms[] = {HIP_OPTIONAL(HIP_SYM)};
#undef HIP_SYM

typedef struct hip_dev {
    void *lib;
    char lib_path[512];
    hip_api api;
    int index;
} hip_dev;

/* A module keeps its code object alive: the runtime may read it after load. */
typedef struct hip_mod { hipModule_t mod; void *bytes; size_t n; } hip_mod;

static hip_dev *impl(const rk_device *d) { return d->impl; }
static hipStream_t hs(const rk_stream *s) { return s ? (hipStream_t)s->handle : NULL; }
static hipDeviceptr_t dp(rk_devptr p) { return (hipDeviceptr_t)(uintptr_t)p; }

const char *rt_hip_lib_name(void) {
    const char *env = getenv("ROCKE_HIP_LIB");
    return env && *env ? env : "libamdhip64.so";
}

/* ---- errors ---------------------------------------------------------------------- */
static rk_status hip_fail(const hip_dev *h, hipError_t r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static rk_status hip_fail(const hip_dev *h, hipError_t r, const char *fmt, ...) {
    char call[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call, sizeof call, fmt, ap);
    va_end(ap);
    const char *name = h->api.hipGetErrorName ? h->api.hipGetErrorName(r) : NULL;
    const char *text = h->api.hipGetErrorString ? h->api.hipGetErrorString(r) : NULL;
    const char *hint = r == hipErrorNoBinaryForGpu || r == hipErrorInvalidImage
                           ? "; the code object was probably built for another gfx target"
                       : r == hipErrorNotFound ? "; wrong kernel name, or two HIP runtimes loaded in one process"
                       : "";
    rk_status s = r == hipErrorNotFound ? RK_ERR_NOT_FOUND : RK_ERR_DEVICE;
    return rk_fail(s, "%s failed: hipError %d %s (%s)%s", call, r, name ? name : "", text ? text : "no description",
                   hint);
}

#define HIP_CALL(h, expr, ...) \
    do { hipError_t r_ = (expr); if (r_ != hipSuccess) return hip_fail((h), r_, __VA_ARGS__); } while (0)

/* Make the device current on this thread. */
static rk_status bind(hip_dev *h) {
    int cur = -1;
    if (h->api.hipGetDevice(&cur) == hipSuccess && cur == h->index) return RK_OK;
    HIP_CALL(h, h->api.hipSetDevice(h->index), "hipSetDevice(%d)", h->index);
    return RK_OK;
}
#define BIND(h) do { rk_status b_ = bind(h); if (b_ != RK_OK) return b_; } while (0)

/* ---- device and memory -------------------------------------------------------------- */
static void hp_close(rk_device *d) {
    hip_dev *h = impl(d);
    if (!h) return;
    /* the runtime stays loaded: unloading it while its threads run is unsafe */
    rk_free(h, sizeof *h);
    d->impl = NULL;
}

static rk_status hp_synchronize(rk_device *d) {
    hip_dev *h = impl(d);
    BIND(h);
    HIP_CALL(h, h->api.hipDeviceSynchronize(), "hipDeviceSynchronize");
    return RK_OK;
}

static rk_status hp_alloc(rk_device *d, size_t n, rk_devptr *out) {
    hip_dev *h = impl(d);
    BIND(h);
    void *p = NULL;
    HIP_CALL(h, h->api.hipMalloc(&p, n), "hipMalloc(%zu bytes)", n);
    *out = (rk_devptr)(uintptr_t)p;
    return RK_OK;
}
static rk_status hp_free(rk_device *d, rk_devptr p) {
    hip_dev *h = impl(d);
    BIND(h);
    HIP_CALL(h, h->api.hipFree(dp(p)), "hipFree(0x%llx)", (unsigned long long)p);
    return RK_OK;
}
static rk_status hp_htod(rk_device *d, rk_devptr dst, const void *src, size_t n) {
    hip_dev *h = impl(d);
    BIND(h);
    HIP_CALL(h, h->api.hipMemcpyHtoD(dp(dst), (void *)src, n), "hipMemcpyHtoD(%zu bytes)", n);
    return RK_OK;
}
static rk_status hp_dtoh(rk_device *d, void *dst, rk_devptr src, size_t n) {
    hip_dev *h = impl(d);
    BIND(h);
    HIP_CALL(h, h->api.hipMemcpyDtoH(dst, dp(src), n), "hipMemcpyDtoH(%zu bytes)", n);
    return RK_OK;
}
static rk_status hp_dtod(rk_device *d, rk_devptr dst, rk_devptr src, size_t n, rk_stream *s) {
    hip_dev *h = impl(d);
    BIND(h);
    HIP_CALL(h, h->api.hipMemcpyDtoDAsync(dp(dst), dp(src), n, hs(s)), "hipMemcpyDtoDAsync(%zu bytes)", n);
    return RK_OK;
}
static rk_status hp_memset(rk_device *d, rk_devptr dst, uint8_t b, size_t n, rk_stream *s) {
    hip_dev *h = impl(d);
    BIND(h);
    HIP_CALL(h, h->api.hipMemsetD8Async(dp(dst), b, n, hs(s)), "hipMemsetD8Async(%zu bytes)", n);
    return RK_OK;
}

/* ---- modules and launches ------------------------------------------------------------------ */
static rk_status hp_module_load(rk_module *m, const rk_module_image *img) {
    hip_dev *h = impl(m->dev);
    BIND(h);
    if (img->size < 4 || memcmp(img->data, "\177ELF", 4) != 0)
        return rk_fail(RK_ERR_INVALID, "the HSACO (%zu bytes) is not an ELF code object", img->size);
    hip_mod *hm = rk_calloc(1, sizeof *hm);
    if (!hm || !(hm->bytes = rk_malloc(img->size))) {
        rk_free(hm, sizeof *hm);
        return rk_fail(RK_ERR_NOMEM, "out of memory loading a code object");
    }
    memcpy(hm->bytes, img->data, img->size);
    hm->n = img->size;
    hipError_t r = h->api.hipModuleLoadData(&hm->mod, hm->bytes);
    if (r != hipSuccess) {
        rk_free(hm->bytes, hm->n);
        rk_free(hm, sizeof *hm);
        return hip_fail(h, r, "hipModuleLoadData(%zu bytes%s%s) on %s (%s)", img->size,
                        img->target ? ", built for " : "", img->target ? img->target : "", m->dev->name,
                        m->dev->arch);
    }
    m->handle = hm;
    return RK_OK;
}

static void hp_module_unload(rk_module *m) {
    hip_dev *h = impl(m->dev);
    hip_mod *hm = m->handle;
    if (bind(h) == RK_OK) h->api.hipModuleUnload(hm->mod);
    rk_free(hm->bytes, hm->n);
    rk_free(hm, sizeof *hm);
    m->handle = NULL;
}

static rk_status hp_function(rk_function *f) {
    hip_dev *h = impl(f->mod->dev);
    BIND(h);
    hipFunction_t fn = NULL;
    hipError_t r = h->api.hipModuleGetFunction(&fn, ((hip_mod *)f->mod->handle)->mod, f->name);
    if (r != hipSuccess) return hip_fail(h, r, "hipModuleGetFunction('%s')", f->name);
    int v = 0;
    if (h->api.hipFuncGetAttribute && h->api.hipFuncGetAttribute(&v, hipFuncAttrMaxThreadsPerBlock, fn) == hipSuccess)
        f->max_threads = (uint32_t)v;
    if (h->api.hipFuncGetAttribute && h->api.hipFuncGetAttribute(&v, hipFuncAttrSharedSizeBytes, fn) == hipSuccess)
        f->static_smem = (uint32_t)v;
    f->handle = fn;
    return RK_OK;
}

static rk_status hp_launch(rk_function *f, const uint32_t g[3], const uint32_t b[3], uint32_t dyn, rk_stream *s,
                           void **args) {
    hip_dev *h = impl(f->mod->dev);
    BIND(h);
    HIP_CALL(h, h->api.hipModuleLaunchKernel((hipFunction_t)f->handle, g[0], g[1], g[2], b[0], b[1], b[2], dyn,
                                             hs(s), args, NULL),
             "hipModuleLaunchKernel('%s', grid %ux%ux%u, block %ux%ux%u, %u bytes dynamic LDS)", f->name, g[0], g[1],
             g[2], b[0], b[1], b[2], dyn);
    return RK_OK;
}

/* ---- streams, events, graphs ------------------------------------------------------------------ */
static rk_status hp_stream_create(rk_stream *s) {
    hip_dev *h = impl(s->dev);
    BIND(h);
    hipStream_t st = NULL;
    HIP_CALL(h, h->api.hipStreamCreate(&st), "hipStreamCreate");
    s->handle = st;
    return RK_OK;
}
static void hp_stream_destroy(rk_stream *s) {
    hip_dev *h = impl(s->dev);
    if (bind(h) == RK_OK) h->api.hipStreamDestroy(hs(s));
}
static rk_status hp_stream_sync(rk_device *d, rk_stream *s) {
    hip_dev *h = impl(d);
    BIND(h);
    HIP_CALL(h, h->api.hipStreamSynchronize(hs(s)), "hipStreamSynchronize(%s)", s ? "stream" : "default stream");
    return RK_OK;
}
static rk_status hp_event_create(rk_event *e) {
    hip_dev *h = impl(e->dev);
    BIND(h);
    hipEvent_t ev = NULL;
    HIP_CALL(h, h->api.hipEventCreate(&ev), "hipEventCreate");
    e->handle = ev;
    return RK_OK;
}
static void hp_event_destroy(rk_event *e) {
    hip_dev *h = impl(e->dev);
    if (bind(h) == RK_OK) h->api.hipEventDestroy((hipEvent_t)e->handle);
}
static rk_status hp_event_record(rk_event *e, rk_stream *s) {
    hip_dev *h = impl(e->dev);
    BIND(h);
    HIP_CALL(h, h->api.hipEventRecord((hipEvent_t)e->handle, hs(s)), "hipEventRecord");
    return RK_OK;
}
static rk_status hp_event_sync(rk_event *e) {
    hip_dev *h = impl(e->dev);
    BIND(h);
    HIP_CALL(h, h->api.hipEventSynchronize((hipEvent_t)e->handle), "hipEventSynchronize");
    return RK_OK;
}
static rk_status hp_event_query(rk_event *e, bool *done) {
    hip_dev *h = impl(e->dev);
    BIND(h);
    hipError_t r = h->api.hipEventQuery((hipEvent_t)e->handle);
    *done = r == hipSuccess;
    if (r != hipSuccess && r != hipErrorNotReady) return hip_fail(h, r, "hipEventQuery");
    return RK_OK;
}
static rk_status hp_event_elapsed(rk_event *a, rk_event *b, double *ms) {
    hip_dev *h = impl(a->dev);
    BIND(h);
    float f = 0;
    HIP_CALL(h, h->api.hipEventElapsedTime(&f, (hipEvent_t)a->handle, (hipEvent_t)b->handle), "hipEventElapsedTime");
    *ms = f;
    return RK_OK;
}

static rk_status hp_capture_begin(rk_stream *s) {
    hip_dev *h = impl(s->dev);
    if (!h->api.hipStreamBeginCapture || !h->api.hipStreamEndCapture || !h->api.hipGraphInstantiate ||
        !h->api.hipGraphLaunch || !h->api.hipGraphExecDestroy || !h->api.hipGraphDestroy)
        return rk_fail(RK_ERR_UNSUPPORTED, "%s lacks the graph-capture entry points (hipStreamBeginCapture ...)",
                       h->lib_path);
    BIND(h);
    HIP_CALL(h, h->api.hipStreamBeginCapture(hs(s), hipStreamCaptureModeThreadLocal), "hipStreamBeginCapture");
    return RK_OK;
}
static rk_status hp_capture_end(rk_stream *s, rk_graph *g) {
    hip_dev *h = impl(s->dev);
    BIND(h);
    hipGraph_t graph = NULL;
    HIP_CALL(h, h->api.hipStreamEndCapture(hs(s), &graph), "hipStreamEndCapture");
    hipGraphExec_t exec = NULL;
    hipError_t r = h->api.hipGraphInstantiate(&exec, graph, NULL, NULL, 0);
    if (r != hipSuccess) {
        h->api.hipGraphDestroy(graph);
        return hip_fail(h, r, "hipGraphInstantiate");
    }
    g->graph = graph;
    g->exec = exec;
    return RK_OK;
}
static rk_status hp_graph_launch(rk_graph *g, rk_stream *s) {
    hip_dev *h = impl(g->dev);
    BIND(h);
    HIP_CALL(h, h->api.hipGraphLaunch((hipGraphExec_t)g->exec, hs(s)), "hipGraphLaunch");
    return RK_OK;
}
static void hp_graph_destroy(rk_graph *g) {
    hip_dev *h = impl(g->dev);
    if (bind(h) != RK_OK) return;
    if (g->exec) h->api.hipGraphExecDestroy((hipGraphExec_t)g->exec);
    if (g->graph) h->api.hipGraphDestroy((hipGraph_t)g->graph);
}

static const rt_backend hip_backend = {
    .kind = RK_DEVICE_HIP, .close = hp_close, .synchronize = hp_synchronize,
    .mem_alloc = hp_alloc, .mem_free = hp_free, .htod = hp_htod, .dtoh = hp_dtoh, .dtod = hp_dtod,
    .memset = hp_memset, .module_load = hp_module_load, .module_unload = hp_module_unload,
    .function = hp_function, .launch = hp_launch, .stream_create = hp_stream_create,
    .stream_destroy = hp_stream_destroy, .stream_sync = hp_stream_sync, .event_create = hp_event_create,
    .event_destroy = hp_event_destroy, .event_record = hp_event_record, .event_sync = hp_event_sync,
    .event_query = hp_event_query, .event_elapsed = hp_event_elapsed, .capture_begin = hp_capture_begin,
    .capture_end = hp_capture_end, .graph_launch = hp_graph_launch, .graph_destroy = hp_graph_destroy,
};

/* ---- finding the library ------------------------------------------------------------------------ */
typedef struct finder {
    rk_buf tried;              /* "a, b, c" */
    char first_error[512];     /* the first failure that was not "file not found" */
    bool explicit_lib;         /* ROCKE_HIP_LIB named the library */
} finder;

static void *try_open(finder *f, const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
    const char *err = dlerror();
    rk_buf_printf(&f->tried, "%s%s", f->tried.len ? ", " : "", path);
    if (err && !strstr(err, "No such file") && !f->first_error[0])
        snprintf(f->first_error, sizeof f->first_error, "%s", err);
    return NULL;
}

static void *try_root(finder *f, const char *root, char *path, size_t n) {
    static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"};
    for (size_t i = 0; root && *root && i < RK_COUNTOF(names); i++) {
        snprintf(path, n, "%s/lib/%s", root, names[i]);
        void *lib = try_open(f, path);
        if (lib) return lib;
    }
    return NULL;
}

/* /opt/rocm-7.1.0 before /opt/rocm-6.4.2 (version order, not text order) */
static int newest_first(const void *a, const void *b) {
    return strverscmp(*(char *const *)b, *(char *const *)a);
}

static void *find_lib(finder *f, char *path, size_t n) {
    const char *env = getenv("ROCKE_HIP_LIB");
    if (env && *env) {
        /* an explicit library is the only candidate: its own error is the reason */
        snprintf(path, n, "%s", env);
        void *lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!lib) snprintf(f->first_error, sizeof f->first_error, "%s", rt_dlerror_reason(env, dlerror()));
        f->explicit_lib = true;
        return lib;
    }
    void *lib = NULL;
    const char *roots[] = {getenv("ROCM_PATH"), getenv("ROCM_HOME"), getenv("HIP_PATH"), "/opt/rocm"};
    for (size_t i = 0; !lib && i < RK_COUNTOF(roots); i++) lib = try_root(f, roots[i], path, n);
    glob_t g;
    if (!lib && glob("/opt/rocm-*", 0, NULL, &g) == 0) {
        qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, newest_first);
        for (size_t i = 0; !lib && i < g.gl_pathc; i++) lib = try_root(f, g.gl_pathv[i], path, n);
        globfree(&g);
    }
    static const char *const bare[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"};
    for (size_t i = 0; !lib && i < RK_COUNTOF(bare); i++) {
        snprintf(path, n, "%s", bare[i]);
        lib = try_open(f, bare[i]);
    }
    return lib;
}

/* ---- open ---------------------------------------------------------------------------------------- */
static bool resolve(hip_dev *h, const hip_sym *syms, size_t n, bool required, const char **missing) {
    for (size_t i = 0; i < n; i++) {
        dlerror();
        void *p = dlsym(h->lib, syms[i].name);
        if (!p && required) {
            *missing = syms[i].name;
            return false;
        }
        memcpy((char *)&h->api + syms[i].off, &p, sizeof p);
    }
    return true;
}

/* The first NUL-terminated string in the properties that starts with "gfx". */
static void arch_from_props(const unsigned char *props, size_t n, char *out, size_t cap) {
    for (size_t i = 1; i + 3 < n; i++)
        if (props[i - 1] == '\0' && !memcmp(props + i, "gfx", 3)) {
            snprintf(out, cap, "%.*s", (int)strnlen((const char *)props + i, n - i), props + i);
            return;
        }
}

static rk_status fill_device(rk_device *d, hip_dev *h, int index) {
    int count = 0;
    HIP_CALL(h, h->api.hipGetDeviceCount(&count), "hipGetDeviceCount");
    if (count == 0) return rk_fail(RK_ERR_DEVICE, "the HIP runtime sees no device (hipGetDeviceCount = 0)");
    if (index >= count)
        return rk_fail(RK_ERR_INVALID, "HIP device %d asked for, but there %s only %d (0..%d)", index,
                       count == 1 ? "is" : "are", count, count - 1);
    h->index = index;
    HIP_CALL(h, h->api.hipSetDevice(index), "hipSetDevice(%d)", index);
    /* zeroed and larger than any hipDeviceProp_t so far */
    unsigned char *props = rk_calloc(1, 4096);
    if (!props) return rk_fail(RK_ERR_NOMEM, "out of memory reading device properties");
    hipError_t r = h->api.hipGetDevicePropertiesR0600 ? h->api.hipGetDevicePropertiesR0600(props, index)
                   : h->api.hipGetDeviceProperties   ? h->api.hipGetDeviceProperties(props, index)
                                                     : hipErrorNotFound;
    if (r == hipSuccess) {
        snprintf(d->name, sizeof d->name, "%.*s", (int)strnlen((const char *)props, 256), (const char *)props);
        arch_from_props(props, 4096, d->arch, sizeof d->arch);
    }
    rk_free(props, 4096);
    if (r != hipSuccess) return hip_fail(h, r, "hipGetDevicePropertiesR0600(%d)", index);
    if (!d->arch[0]) return rk_fail(RK_ERR_DEVICE, "device %d reports no gfx architecture name", index);
    size_t base = strcspn(d->arch, ":");
    snprintf(d->target, sizeof d->target, "%.*s", (int)base, d->arch);
    const rk_target *t = NULL;
    for (const rk_target *const *tp = rk_targets(); *tp; tp++)
        if (!strcmp((*tp)->name, d->target)) t = *tp;
    int version = 0, v = 0;
    h->api.hipDriverGetVersion(&version);
    rk_device_info *in = &d->info;
    in->kind = RK_DEVICE_HIP;
    in->driver_version = version;
    if (h->api.hipDeviceGetAttribute(&v, hipAttrMultiprocessorCount, index) == hipSuccess) in->sm_count = (uint32_t)v;
    if (h->api.hipDeviceGetAttribute(&v, hipAttrL2CacheSize, index) == hipSuccess) in->l2_bytes = (uint64_t)v;
    if (h->api.hipDeviceGetAttribute(&v, hipAttrMaxThreadsPerBlock, index) == hipSuccess)
        in->max_threads_per_block = (uint32_t)v;
    if (h->api.hipDeviceGetAttribute(&v, hipAttrClockRate, index) == hipSuccess) in->clock_khz = (uint32_t)v;
    size_t total = 0;
    if (h->api.hipDeviceTotalMem && h->api.hipDeviceTotalMem(&total, index) == hipSuccess) in->total_mem = total;
    /* wave size and LDS from the target catalog: later attribute numbers move between releases */
    bool gfx9 = !strncmp(d->target, "gfx9", 4);
    in->warp_size = t ? t->wave_size : gfx9 ? 64 : 32;
    in->smem_per_block = t ? t->lds_bytes : 65536;
    in->smem_per_sm = t ? t->lds_per_cu : 65536;
    if (!in->max_threads_per_block || in->max_threads_per_block > 4096) in->max_threads_per_block = 1024;
    if (!t) d->target[0] = '\0';
    snprintf(d->driver, sizeof d->driver, "HIP %d.%d (%.120s)", version / 10000000, version / 100000 % 100,
             h->lib_path);
    return RK_OK;
}

rk_status rt_hip_open(rk_device *d, int index) {
    d->info = (rk_device_info){0};
    hip_dev *h = rk_calloc(1, sizeof *h);
    if (!h) return rk_fail(RK_ERR_NOMEM, "out of memory opening the HIP runtime");
    finder f = {0};
    rk_buf_init(&f.tried);
    h->lib = find_lib(&f, h->lib_path, sizeof h->lib_path);
    rk_status s = RK_OK;
    if (!h->lib) {
        s = f.explicit_lib ? rk_fail(RK_ERR_DEVICE, "%s", f.first_error)
            : f.first_error[0] ? rk_fail(RK_ERR_DEVICE, "%s (tried %s)", f.first_error, rk_buf_cstr(&f.tried))
                               : rk_fail(RK_ERR_DEVICE, "not found (tried %s)", rk_buf_cstr(&f.tried));
    } else {
        const char *missing = NULL;
        if (!resolve(h, required_syms, RK_COUNTOF(required_syms), true, &missing))
            s = rk_fail(RK_ERR_DEVICE, "%s has no %s: not a HIP runtime", h->lib_path, missing);
        else
            resolve(h, optional_syms, RK_COUNTOF(optional_syms), false, &missing);
    }
    rk_buf_free(&f.tried);
    if (s == RK_OK) {
        hipError_t r = h->api.hipInit(0);
        if (r != hipSuccess) s = hip_fail(h, r, "hipInit (%s)", h->lib_path);
    }
    if (s == RK_OK) s = fill_device(d, h, index);
    if (s != RK_OK) {
        rk_free(h, sizeof *h);
        return s;
    }
    d->impl = h;
    d->be = &hip_backend;
    return RK_OK;
}
