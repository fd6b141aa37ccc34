/* rocke — the CUDA driver backend. libcuda.so.1 is loaded with dlopen (never
 * linked) and every entry point is looked up under the versioned name cuda.h
 * maps it to (cuMemAlloc -> cuMemAlloc_v2 ...). Primary context, memory,
 * PTX/cubin modules with the JIT log, kernelParams launches, streams, events,
 * graph capture. Every failure names the call and the driver's error name
 * and text. Layer: runtime. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_int.h"

const char *rt_cuda_lib_name(void) {
    const char *env = getenv("ROCKE_CUDA_LIB");
    return env && *env ? env : "libcuda.so.1";
}

#if __has_include(<cuda.h>)
#include <cuda.h>

/* Entry points. The argument of X is macro-expanded first, so a field, its
 * type and the dlsym name all use the versioned spelling from cuda.h. */
#define CU_REQUIRED(X)                                                                          \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)       \
    X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                     \
    X(cuDevicePrimaryCtxRelease) X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxSynchronize)      \
    X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoDAsync)             \
    X(cuMemsetD8Async) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction)           \
    X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuStreamCreate)             \
    X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventDestroy)                \
    X(cuEventRecord) X(cuEventSynchronize) X(cuEventQuery) X(cuGetErrorName) X(cuGetErrorString)
#define CU_GRAPH(X) \
    X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch) \
    X(cuGraphExecDestroy) X(cuGraphDestroy)

typedef struct cu_api {
#define CU_FIELD(f) __typeof__(f) *f;
    CU_REQUIRED(CU_FIELD)
    CU_GRAPH(CU_FIELD)
    CU_FIELD(cuEventElapsedTime)
    CU_FIELD(cuTensorMapEncodeTiled)   /* CUDA 12.0+; NULL when absent */
    CU_FIELD(cuLaunchKernelEx)         /* CUDA 12.0+, for cluster and cooperative launches; NULL when absent */
    CU_FIELD(cuOccupancyMaxActiveBlocksPerMultiprocessor)   /* the co-residency check of a cooperative launch */
#undef CU_FIELD
} cu_api;

#define CU_STR_(x) #x
#define CU_STR(x) CU_STR_(x)
typedef struct cu_sym { const char *name; size_t off; } cu_sym;
#define CU_SYM(f) {CU_STR(f), offsetof(cu_api, f)},
static const cu_sym required_syms[] = {CU_REQUIRED(CU_SYM)};
static const cu_sym graph_syms[] = {CU_GRAPH(CU_SYM)};
#undef CU_SYM

typedef struct cu_dev {
    void *lib;
    cu_api api;
    bool graphs;               /* the capture entry points resolved */
    CUdevice dev;
    CUcontext ctx;
} cu_dev;

static cu_dev *impl(const rk_device *d) { return d->impl; }

/* ---- errors ----------------------------------------------------------------------- */
static rk_status status_of(CUresult r) {
    switch (r) {
    case CUDA_ERROR_NOT_FOUND: return RK_ERR_NOT_FOUND;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return RK_ERR_INVALID;
    default: return RK_ERR_DEVICE;
    }
}

/* "<call> failed: CUDA_ERROR_X (text)"; errors of a failed kernel are sticky. */
static rk_status cu_fail(const cu_dev *c, CUresult r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static rk_status cu_fail(const cu_dev *c, CUresult r, const char *fmt, ...) {
    char call[1024], num[32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call, sizeof call, fmt, ap);
    va_end(ap);
    const char *name = NULL, *text = NULL;
    if (c->api.cuGetErrorName && c->api.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
    if (c->api.cuGetErrorString && c->api.cuGetErrorString(r, &text) != CUDA_SUCCESS) text = NULL;
    if (!name) {
        snprintf(num, sizeof num, "CUDA error %d", (int)r);
        name = num;
    }
    bool sticky = r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED ||
                  r == CUDA_ERROR_MISALIGNED_ADDRESS || r == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
                  r == CUDA_ERROR_HARDWARE_STACK_ERROR || r == CUDA_ERROR_INVALID_PC ||
                  r == CUDA_ERROR_LAUNCH_TIMEOUT || r == CUDA_ERROR_ASSERT;
    return rk_fail(status_of(r), "%s failed: %s (%s)%s", call, name, text ? text : "no description",
                   sticky ? "; a kernel failed, so this CUDA context cannot be used any more" : "");
}

#define CU_CALL(c, expr, ...) \
    do { CUresult r_ = (expr); if (r_ != CUDA_SUCCESS) return cu_fail((c), r_, __VA_ARGS__); } while (0)

/* Make the device's context current on this thread (cheap when it is). */
static rk_status bind(cu_dev *c) {
    CUcontext cur = NULL;
    if (c->api.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == c->ctx) return RK_OK;
    CU_CALL(c, c->api.cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
    return RK_OK;
}
#define BIND(c) do { rk_status b_ = bind(c); if (b_ != RK_OK) return b_; } while (0)

static CUstream cs(const rk_stream *s) { return s ? (CUstream)s->handle : NULL; }

/* ---- device ---------------------------------------------------------------------------- */
static void cu_close(rk_device *d) {
    cu_dev *c = impl(d);
    if (!c) return;
    if (c->ctx) c->api.cuDevicePrimaryCtxRelease(c->dev);
    /* libcuda stays mapped: unloading a driver that has started threads is
     * unsafe, and dlopen counts references so reopening costs nothing */
    rk_free(c, sizeof *c);
    d->impl = NULL;
}

static rk_status cu_synchronize(rk_device *d) {
    cu_dev *c = impl(d);
    BIND(c);
    CU_CALL(c, c->api.cuCtxSynchronize(), "cuCtxSynchronize");
    return RK_OK;
}

/* ---- memory ------------------------------------------------------------------------------- */
static rk_status cu_alloc(rk_device *d, size_t n, rk_devptr *out) {
    cu_dev *c = impl(d);
    BIND(c);
    CUdeviceptr p = 0;
    CU_CALL(c, c->api.cuMemAlloc(&p, n), "cuMemAlloc(%zu bytes)", n);
    *out = (rk_devptr)p;
    return RK_OK;
}
static rk_status cu_free(rk_device *d, rk_devptr p) {
    cu_dev *c = impl(d);
    BIND(c);
    CU_CALL(c, c->api.cuMemFree((CUdeviceptr)p), "cuMemFree(0x%llx)", (unsigned long long)p);
    return RK_OK;
}
static rk_status cu_htod(rk_device *d, rk_devptr dst, const void *src, size_t n) {
    cu_dev *c = impl(d);
    BIND(c);
    CU_CALL(c, c->api.cuMemcpyHtoD((CUdeviceptr)dst, src, n), "cuMemcpyHtoD(%zu bytes)", n);
    return RK_OK;
}
static rk_status cu_dtoh(rk_device *d, void *dst, rk_devptr src, size_t n) {
    cu_dev *c = impl(d);
    BIND(c);
    CU_CALL(c, c->api.cuMemcpyDtoH(dst, (CUdeviceptr)src, n), "cuMemcpyDtoH(%zu bytes)", n);
    return RK_OK;
}
static rk_status cu_dtod(rk_device *d, rk_devptr dst, rk_devptr src, size_t n, rk_stream *s) {
    cu_dev *c = impl(d);
    BIND(c);
    CU_CALL(c, c->api.cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, n, cs(s)), "cuMemcpyDtoDAsync(%zu bytes)", n);
    return RK_OK;
}
static rk_status cu_memset(rk_device *d, rk_devptr dst, uint8_t b, size_t n, rk_stream *s) {
    cu_dev *c = impl(d);
    BIND(c);
    CU_CALL(c, c->api.cuMemsetD8Async((CUdeviceptr)dst, b, n, cs(s)), "cuMemsetD8Async(%zu bytes)", n);
    return RK_OK;
}

/* ---- modules ---------------------------------------------------------------------------------- */
static void trim(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = '\0';
}

static rk_status cu_module_load(rk_module *m, const rk_module_image *img) {
    cu_dev *c = impl(m->dev);
    BIND(c);
    const void *image = img->data;
    char *ptx = NULL;
    if (img->kind == RK_IMAGE_PTX) {
        /* the driver reads PTX up to its NUL */
        if (!(ptx = rk_malloc(img->size + 1))) return rk_fail(RK_ERR_NOMEM, "out of memory loading PTX");
        memcpy(ptx, img->data, img->size);
        ptx[img->size] = '\0';
        image = ptx;
    } else if (img->size < 4 || memcmp(img->data, "\177ELF", 4) != 0) {
        return rk_fail(RK_ERR_INVALID, "the cubin (%zu bytes) is not an ELF file", img->size);
    }
    char elog[16384] = "", ilog[4096] = "";
    CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                          CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *val[] = {elog, (void *)(uintptr_t)sizeof elog, ilog, (void *)(uintptr_t)sizeof ilog};
    CUmodule mod = NULL;
    CUresult r = c->api.cuModuleLoadDataEx(&mod, image, 4, opt, val);
    if (ptx) rk_free(ptx, img->size + 1);
    if (r != CUDA_SUCCESS) {
        elog[sizeof elog - 1] = '\0';
        trim(elog);
        rk_status st = cu_fail(c, r, "cuModuleLoadDataEx(%s, %zu bytes%s%s) on %s", rk_image_kind_name(img->kind),
                               img->size, img->target ? ", built for " : "", img->target ? img->target : "",
                               m->dev->name);
        if (elog[0]) {
            char msg[4096];
            snprintf(msg, sizeof msg, "%s", rk_error_message());
            rk_fail(st, "%s; JIT log: %s", msg, elog);
        }
        return st;
    }
    m->handle = mod;
    return RK_OK;
}

static void cu_module_unload(rk_module *m) {
    cu_dev *c = impl(m->dev);
    if (bind(c) == RK_OK) c->api.cuModuleUnload((CUmodule)m->handle);
    m->handle = NULL;
}

static rk_status cu_function(rk_function *f) {
    cu_dev *c = impl(f->mod->dev);
    BIND(c);
    CUfunction fn = NULL;
    CUresult r = c->api.cuModuleGetFunction(&fn, (CUmodule)f->mod->handle, f->name);
    if (r == CUDA_ERROR_NOT_FOUND)
        return rk_fail(RK_ERR_NOT_FOUND, "the module has no kernel named '%s' (cuModuleGetFunction: "
                       "CUDA_ERROR_NOT_FOUND)", f->name);
    if (r != CUDA_SUCCESS) return cu_fail(c, r, "cuModuleGetFunction('%s')", f->name);
    int v = 0;
    CU_CALL(c, c->api.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn),
            "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK, '%s')", f->name);
    f->max_threads = (uint32_t)v;
    CU_CALL(c, c->api.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn),
            "cuFuncGetAttribute(SHARED_SIZE_BYTES, '%s')", f->name);
    f->static_smem = (uint32_t)v;
    CU_CALL(c, c->api.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fn),
            "cuFuncGetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, '%s')", f->name);
    f->dyn_smem_set = (uint32_t)v;
    f->handle = fn;
    return RK_OK;
}

/* A cooperative grid must fit on the device at once: blocks per SM (the
 * driver's occupancy for this block and shared memory) times the SMs. The
 * driver refuses a grid over it as well; this names the numbers. */
static rk_status check_coresident(cu_dev *c, rk_function *f, const uint32_t g[3], const uint32_t b[3], uint32_t dyn) {
    if (!c->api.cuOccupancyMaxActiveBlocksPerMultiprocessor) return RK_OK;   /* the launch itself checks */
    int per_sm = 0;
    int threads = (int)(b[0] * b[1] * b[2]);
    CU_CALL(c, c->api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (CUfunction)f->handle, threads, dyn),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor('%s', %d threads, %u bytes dynamic shared memory)", f->name,
            threads, dyn);
    uint64_t cap = (uint64_t)per_sm * f->mod->dev->info.sm_count, grid = (uint64_t)g[0] * g[1] * g[2];
    if (grid > cap)
        return rk_fail(RK_ERR_INVALID, "rk_launch '%s': a cooperative grid of %llu blocks (%ux%ux%u) cannot be resident "
                       "at once on %s: %d block%s of %d threads with %u bytes of dynamic shared memory fit per SM, "
                       "%u SMs, so at most %llu blocks (launch fewer, e.g. the persistent schedule's SM count)", f->name,
                       (unsigned long long)grid, g[0], g[1], g[2], f->mod->dev->name, per_sm, per_sm == 1 ? "" : "s",
                       threads, dyn, f->mod->dev->info.sm_count, (unsigned long long)cap);
    return RK_OK;
}

/* A kernel with cluster dims or the cooperative attribute launches through
 * cuLaunchKernelEx with CLUSTER_DIMENSION and / or COOPERATIVE (rk_launch
 * checked the grid is whole clusters). */
static rk_status launch_ex(cu_dev *c, rk_function *f, const uint32_t g[3], const uint32_t b[3], uint32_t dyn,
                           rk_stream *s, void **args) {
    bool clustered = f->cluster[0] * f->cluster[1] * f->cluster[2] > 1;
    if (!c->api.cuLaunchKernelEx) {
        if (clustered)
            return rk_fail(RK_ERR_UNSUPPORTED, "kernel '%s' has cluster_dims [%u, %u, %u], launched through "
                           "cuLaunchKernelEx, which %s lacks (CUDA 12.0 or newer has it)", f->name, f->cluster[0],
                           f->cluster[1], f->cluster[2], rt_cuda_lib_name());
        return rk_fail(RK_ERR_UNSUPPORTED, "kernel '%s' is cooperative, launched through cuLaunchKernelEx, which %s "
                       "lacks (CUDA 12.0 or newer has it)", f->name, rt_cuda_lib_name());
    }
    CUlaunchAttribute at[2];
    memset(at, 0, sizeof at);
    unsigned n = 0;
    if (clustered) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        at[n].value.clusterDim.x = f->cluster[0];
        at[n].value.clusterDim.y = f->cluster[1];
        at[n].value.clusterDim.z = f->cluster[2];
        n++;
    }
    if (f->cooperative) {
        rk_status st = check_coresident(c, f, g, b, dyn);
        if (st) return st;
        at[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        at[n].value.cooperative = 1;
        n++;
    }
    CUlaunchConfig cfg = {.gridDimX = g[0], .gridDimY = g[1], .gridDimZ = g[2], .blockDimX = b[0], .blockDimY = b[1],
                          .blockDimZ = b[2], .sharedMemBytes = dyn, .hStream = cs(s), .attrs = at, .numAttrs = n};
    CU_CALL(c, c->api.cuLaunchKernelEx(&cfg, (CUfunction)f->handle, args, NULL),
            "cuLaunchKernelEx('%s', grid %ux%ux%u, block %ux%ux%u, cluster %ux%ux%u%s, %u bytes dynamic shared memory)",
            f->name, g[0], g[1], g[2], b[0], b[1], b[2], f->cluster[0], f->cluster[1], f->cluster[2],
            f->cooperative ? ", cooperative" : "", dyn);
    return RK_OK;
}

static rk_status cu_launch(rk_function *f, const uint32_t g[3], const uint32_t b[3], uint32_t dyn, rk_stream *s,
                           void **args) {
    cu_dev *c = impl(f->mod->dev);
    BIND(c);
    CUfunction fn = (CUfunction)f->handle;
    if (dyn > f->dyn_smem_set) {
        /* above the default 48 KiB a kernel has to opt in to more dynamic shared memory */
        CU_CALL(c, c->api.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)dyn),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = %u) for '%s'", dyn, f->name);
        f->dyn_smem_set = dyn;
    }
    if (f->cooperative || f->cluster[0] * f->cluster[1] * f->cluster[2] > 1) return launch_ex(c, f, g, b, dyn, s, args);
    CU_CALL(c, c->api.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], dyn, cs(s), args, NULL),
            "cuLaunchKernel('%s', grid %ux%ux%u, block %ux%ux%u, %u bytes dynamic shared memory)", f->name, g[0],
            g[1], g[2], b[0], b[1], b[2], dyn);
    return RK_OK;
}

/* ---- tensor maps -------------------------------------------------------------------------------- */
static CUtensorMapDataType tmap_type(rk_scalar s) {
    switch (s) {
    case RK_S_I16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case RK_S_I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case RK_S_I64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case RK_S_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case RK_S_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case RK_S_F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case RK_S_F64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    /* bytes are bytes to the copy engine: i8 and every 8-bit float */
    case RK_S_I8:
    case RK_S_FP8E4M3:
    case RK_S_BF8E5M2:
    case RK_S_FP8E4M3FNUZ:
    case RK_S_BF8E5M2FNUZ:
    case RK_S_NONE:
    case RK_S_I1:
    case RK_S_I4:
    case RK_S__COUNT: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    }
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

_Static_assert(sizeof(CUtensorMap) == RK_TENSORMAP_BYTES, "a CUtensorMap is 128 bytes");

static rk_status cu_tensormap_encode(rk_device *d, const rt_tmap2d *t, void *out) {
    cu_dev *c = impl(d);
    if (!c->api.cuTensorMapEncodeTiled)
        return rk_fail(RK_ERR_UNSUPPORTED, "this CUDA driver has no cuTensorMapEncodeTiled (CUDA 12.0+ needed for "
                       "tensor maps)");
    BIND(c);
    if (t->rank) {   /* N-D: the arrays as given, innermost first */
        cuuint64_t dn[5], sn[4];
        cuuint32_t bn[5], en[5];
        for (uint32_t i = 0; i < t->rank; i++) {
            dn[i] = t->dim[i], bn[i] = t->box[i], en[i] = t->estr[i];
            if (i) sn[i - 1] = t->stride[i];
        }
        CUtensorMap nm;
        CU_CALL(c, c->api.cuTensorMapEncodeTiled(&nm, tmap_type(t->elem), t->rank, (void *)(uintptr_t)t->base, dn, sn,
                                                 bn, en, CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)t->swizzle,
                                                 CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                "cuTensorMapEncodeTiled(%s, rank %u at 0x%llx, box %u x %u x ..., swizzle %d)", rk_scalar_name(t->elem),
                t->rank, (unsigned long long)t->base, bn[0], t->rank > 1 ? bn[1] : 1, (int)t->swizzle);
        memcpy(out, &nm, sizeof nm);
        return RK_OK;
    }
    /* dimension 0 is the innermost (contiguous) one */
    cuuint64_t dims[2] = {t->cols, t->rows}, strides[1] = {t->row_stride};
    cuuint32_t box[2] = {t->box_cols, t->box_rows}, elem_strides[2] = {1, 1};
    CUtensorMap map;   /* aligned as the driver wants; out may not be */
    CU_CALL(c, c->api.cuTensorMapEncodeTiled(&map, tmap_type(t->elem), 2, (void *)(uintptr_t)t->base, dims, strides,
                                             box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                             (CUtensorMapSwizzle)t->swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            "cuTensorMapEncodeTiled(%s, %llu x %llu at 0x%llx, row stride %llu bytes, box %u x %u, swizzle %d)",
            rk_scalar_name(t->elem), (unsigned long long)t->rows, (unsigned long long)t->cols,
            (unsigned long long)t->base, (unsigned long long)t->row_stride, t->box_rows, t->box_cols, (int)t->swizzle);
    memcpy(out, &map, sizeof map);
    return RK_OK;
}

/* ---- streams and events ------------------------------------------------------------------------ */
static rk_status cu_stream_create(rk_stream *s) {
    cu_dev *c = impl(s->dev);
    BIND(c);
    CUstream st = NULL;
    /* a blocking stream: host copies on the default stream stay ordered after it */
    CU_CALL(c, c->api.cuStreamCreate(&st, CU_STREAM_DEFAULT), "cuStreamCreate");
    s->handle = st;
    return RK_OK;
}
static void cu_stream_destroy(rk_stream *s) {
    cu_dev *c = impl(s->dev);
    if (bind(c) == RK_OK) c->api.cuStreamDestroy(cs(s));
}
static rk_status cu_stream_sync(rk_device *d, rk_stream *s) {
    cu_dev *c = impl(d);
    BIND(c);
    CU_CALL(c, c->api.cuStreamSynchronize(cs(s)), "cuStreamSynchronize(%s)", s ? "stream" : "default stream");
    return RK_OK;
}

static rk_status cu_event_create(rk_event *e) {
    cu_dev *c = impl(e->dev);
    BIND(c);
    CUevent ev = NULL;
    CU_CALL(c, c->api.cuEventCreate(&ev, CU_EVENT_DEFAULT), "cuEventCreate");
    e->handle = ev;
    return RK_OK;
}
static void cu_event_destroy(rk_event *e) {
    cu_dev *c = impl(e->dev);
    if (bind(c) == RK_OK) c->api.cuEventDestroy((CUevent)e->handle);
}
static rk_status cu_event_record(rk_event *e, rk_stream *s) {
    cu_dev *c = impl(e->dev);
    BIND(c);
    CU_CALL(c, c->api.cuEventRecord((CUevent)e->handle, cs(s)), "cuEventRecord");
    return RK_OK;
}
static rk_status cu_event_sync(rk_event *e) {
    cu_dev *c = impl(e->dev);
    BIND(c);
    CU_CALL(c, c->api.cuEventSynchronize((CUevent)e->handle), "cuEventSynchronize");
    return RK_OK;
}
static rk_status cu_event_query(rk_event *e, bool *done) {
    cu_dev *c = impl(e->dev);
    BIND(c);
    CUresult r = c->api.cuEventQuery((CUevent)e->handle);
    *done = r == CUDA_SUCCESS;
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) return cu_fail(c, r, "cuEventQuery");
    return RK_OK;
}
static rk_status cu_event_elapsed(rk_event *a, rk_event *b, double *ms) {
    cu_dev *c = impl(a->dev);
    BIND(c);
    float f = 0;
    CU_CALL(c, c->api.cuEventElapsedTime(&f, (CUevent)a->handle, (CUevent)b->handle), "cuEventElapsedTime");
    *ms = f;
    return RK_OK;
}

/* ---- graphs --------------------------------------------------------------------------------------- */
static rk_status need_graphs(const cu_dev *c) {
    return c->graphs ? RK_OK
                     : rk_fail(RK_ERR_UNSUPPORTED, "this CUDA driver lacks the graph-capture entry points "
                               "(cuStreamBeginCapture_v2, cuGraphInstantiateWithFlags ...; CUDA 11.4+ needed)");
}
static rk_status cu_capture_begin(rk_stream *s) {
    cu_dev *c = impl(s->dev);
    rk_status st = need_graphs(c);
    if (st != RK_OK) return st;
    BIND(c);
    CU_CALL(c, c->api.cuStreamBeginCapture(cs(s), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
    return RK_OK;
}
static rk_status cu_capture_end(rk_stream *s, rk_graph *g) {
    cu_dev *c = impl(s->dev);
    BIND(c);
    CUgraph graph = NULL;
    CU_CALL(c, c->api.cuStreamEndCapture(cs(s), &graph), "cuStreamEndCapture");
    CUgraphExec exec = NULL;
    CUresult r = c->api.cuGraphInstantiate(&exec, graph, 0);
    if (r != CUDA_SUCCESS) {
        c->api.cuGraphDestroy(graph);
        return cu_fail(c, r, "cuGraphInstantiateWithFlags");
    }
    g->graph = graph;
    g->exec = exec;
    return RK_OK;
}
static rk_status cu_graph_launch(rk_graph *g, rk_stream *s) {
    cu_dev *c = impl(g->dev);
    BIND(c);
    CU_CALL(c, c->api.cuGraphLaunch((CUgraphExec)g->exec, cs(s)), "cuGraphLaunch");
    return RK_OK;
}
static void cu_graph_destroy(rk_graph *g) {
    cu_dev *c = impl(g->dev);
    if (bind(c) != RK_OK) return;
    if (g->exec) c->api.cuGraphExecDestroy((CUgraphExec)g->exec);
    if (g->graph) c->api.cuGraphDestroy((CUgraph)g->graph);
}

static const rt_backend cuda_backend = {
    .kind = RK_DEVICE_CUDA, .close = cu_close, .synchronize = cu_synchronize,
    .mem_alloc = cu_alloc, .mem_free = cu_free, .htod = cu_htod, .dtoh = cu_dtoh, .dtod = cu_dtod,
    .memset = cu_memset, .module_load = cu_module_load, .module_unload = cu_module_unload,
    .function = cu_function, .launch = cu_launch, .stream_create = cu_stream_create,
    .stream_destroy = cu_stream_destroy, .stream_sync = cu_stream_sync, .event_create = cu_event_create,
    .event_destroy = cu_event_destroy, .event_record = cu_event_record, .event_sync = cu_event_sync,
    .event_query = cu_event_query, .event_elapsed = cu_event_elapsed, .capture_begin = cu_capture_begin,
    .capture_end = cu_capture_end, .graph_launch = cu_graph_launch, .graph_destroy = cu_graph_destroy,
    .tensormap_encode = cu_tensormap_encode,
};

/* ---- open ----------------------------------------------------------------------------------------- */
static void *sym(void *lib, const char *name) {
    dlerror();
    return dlsym(lib, name);
}

static bool resolve(cu_dev *c, const cu_sym *syms, size_t n, const char **missing) {
    for (size_t i = 0; i < n; i++) {
        void *p = sym(c->lib, syms[i].name);
        if (!p) {
            *missing = syms[i].name;
            return false;
        }
        memcpy((char *)&c->api + syms[i].off, &p, sizeof p);
    }
    return true;
}

static int attr(cu_dev *c, CUdevice_attribute a) {
    int v = 0;
    if (c->api.cuDeviceGetAttribute(&v, a, c->dev) != CUDA_SUCCESS) v = 0;
    return v;
}

/* The rocke target for compute capability maj.min: Hopper 9.0 gets the
 * wgmma-capable sm_90a; later chips run sm_90 PTX through the JIT. */
static const char *target_for(int maj, int min) {
    if (maj == 9 && min == 0) return "sm_90a";
    if (maj >= 9) return "sm_90";
    if (maj == 8) return "sm_80";
    return "";
}

static rk_status fill_device(rk_device *d, cu_dev *c, int index) {
    int count = 0;
    CU_CALL(c, c->api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) return rk_fail(RK_ERR_DEVICE, "the CUDA driver sees no device (cuDeviceGetCount = 0)");
    if (index >= count)
        return rk_fail(RK_ERR_INVALID, "CUDA device %d asked for, but there %s only %d (0..%d)", index,
                       count == 1 ? "is" : "are", count, count - 1);
    CU_CALL(c, c->api.cuDeviceGet(&c->dev, index), "cuDeviceGet(%d)", index);
    CU_CALL(c, c->api.cuDeviceGetName(d->name, (int)sizeof d->name, c->dev), "cuDeviceGetName");
    int version = 0;
    CU_CALL(c, c->api.cuDriverGetVersion(&version), "cuDriverGetVersion");
    size_t total = 0;
    CU_CALL(c, c->api.cuDeviceTotalMem(&total, c->dev), "cuDeviceTotalMem");
    rk_device_info *in = &d->info;
    in->kind = RK_DEVICE_CUDA;
    in->driver_version = version;
    in->cc_major = attr(c, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    in->cc_minor = attr(c, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    in->sm_count = (uint32_t)attr(c, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    in->warp_size = (uint32_t)attr(c, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    in->max_threads_per_block = (uint32_t)attr(c, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    in->smem_per_block = (uint64_t)attr(c, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    in->smem_per_block_optin = (uint64_t)attr(c, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    in->smem_per_sm = (uint64_t)attr(c, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    in->l2_bytes = (uint64_t)attr(c, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    in->clock_khz = (uint32_t)attr(c, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    in->total_mem = total;
    snprintf(d->arch, sizeof d->arch, "sm_%d%d", in->cc_major, in->cc_minor);
    snprintf(d->target, sizeof d->target, "%s", target_for(in->cc_major, in->cc_minor));
    snprintf(d->driver, sizeof d->driver, "CUDA driver %d.%d (%s)", version / 1000, version % 1000 / 10,
             rt_cuda_lib_name());
    CU_CALL(c, c->api.cuDevicePrimaryCtxRetain(&c->ctx, c->dev), "cuDevicePrimaryCtxRetain(device %d)", index);
    CU_CALL(c, c->api.cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
    return RK_OK;
}

rk_status rt_cuda_open(rk_device *d, int index) {
    d->info = (rk_device_info){0};
    const char *lib = rt_cuda_lib_name();
    cu_dev *c = rk_calloc(1, sizeof *c);
    if (!c) return rk_fail(RK_ERR_NOMEM, "out of memory opening the CUDA driver");
    c->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        rk_free(c, sizeof *c);
        return rk_fail(RK_ERR_DEVICE, "%s", rt_dlerror_reason(lib, dlerror()));
    }
    const char *missing = NULL;
    rk_status s = RK_OK;
    if (!resolve(c, required_syms, RK_COUNTOF(required_syms), &missing)) {
        s = rk_fail(RK_ERR_DEVICE, "%s has no %s: not a CUDA driver, or one older than CUDA 12", lib, missing);
    } else {
        /* cuEventElapsedTime_v2 is CUDA 12.8+; the unversioned call is the same */
        void *p = sym(c->lib, CU_STR(cuEventElapsedTime));
        if (!p) p = sym(c->lib, "cuEventElapsedTime");
        if (!p) s = rk_fail(RK_ERR_DEVICE, "%s has no cuEventElapsedTime", lib);
        memcpy(&c->api.cuEventElapsedTime, &p, sizeof p);
        c->graphs = resolve(c, graph_syms, RK_COUNTOF(graph_syms), &missing);
        p = sym(c->lib, CU_STR(cuTensorMapEncodeTiled));
        memcpy(&c->api.cuTensorMapEncodeTiled, &p, sizeof p);
        p = sym(c->lib, CU_STR(cuLaunchKernelEx));
        memcpy(&c->api.cuLaunchKernelEx, &p, sizeof p);
        p = sym(c->lib, CU_STR(cuOccupancyMaxActiveBlocksPerMultiprocessor));
        memcpy(&c->api.cuOccupancyMaxActiveBlocksPerMultiprocessor, &p, sizeof p);
    }
    if (s == RK_OK) {
        CUresult r = c->api.cuInit(0);
        if (r == CUDA_ERROR_STUB_LIBRARY)
            s = rk_fail(RK_ERR_DEVICE, "%s is the CUDA toolkit's link stub, not a driver (cuInit: "
                        "CUDA_ERROR_STUB_LIBRARY)", lib);
        else if (r != CUDA_SUCCESS)
            s = cu_fail(c, r, "cuInit");
    }
    if (s == RK_OK) s = fill_device(d, c, index);
    if (s != RK_OK) {
        if (c->ctx) c->api.cuDevicePrimaryCtxRelease(c->dev);
        rk_free(c, sizeof *c);
        return s;
    }
    d->impl = c;
    d->be = &cuda_backend;
    return RK_OK;
}

#else /* no cuda.h at build time */

rk_status rt_cuda_open(rk_device *d, int index) {
    (void)d;
    (void)index;
    return rk_fail(RK_ERR_UNSUPPORTED, "this rocke was built without the CUDA headers (cuda.h), so it has no "
                   "CUDA backend; rebuild where /usr/local/cuda/include exists");
}

#endif
