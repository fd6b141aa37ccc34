/* rocke tests — a fake libcuda for the CUDA backend's tests on machines with
 * no GPU: the driver entry points under the names cuda.h maps them to, host
 * memory as device memory, "PTX" whose .entry lines (or a real cubin whose
 * .text.<name> sections) name kernels that are small C functions run at
 * launch, a JIT error log, dynamic shared memory
 * limits, streams, events on the host clock, graph capture and tensor maps
 * (the fake's own 128-byte encoding, which its TMA kernel reads back from
 * the by-value parameter). Counters and knobs for the tests are exported as
 * fake_cuda_*. Built as a shared library (tests/CMakeLists.txt) and loaded
 * through ROCKE_CUDA_LIB. */
#if __has_include(<cuda.h>)
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda.h>

#define FAKE_OPTIN (227u * 1024u)
#define FAKE_DEFAULT_SMEM (48u * 1024u)

typedef struct fake_fn {
    char name[256];   /* kernel names run past 64 characters (knob tags) */
    unsigned static_smem, max_dyn, max_threads;
} fake_fn;
typedef struct fake_mod { fake_fn fns[8]; int n; } fake_mod;
typedef struct rec {
    _Alignas(64) unsigned char args[8][128];   /* parameter values, each 64-byte aligned */
    fake_fn *f;
    unsigned g[3], b[3], smem;
    void *params[8];
    int nparams;
    int memset;                /* or a memset */
    CUdeviceptr dst;
    unsigned char byte;
    size_t n;
} rec;
typedef struct fake_stream { int capturing; rec *recs; int nrec, cap; } fake_stream;
typedef struct fake_graph { rec *recs; int nrec; } fake_graph;

static int primary_ctx;
static _Thread_local CUcontext current;
static struct {
    int launches, set_attr, ctx_set, graph_launches, loads, allocs, frees, syncs, ex_launches, last_coop;
    unsigned last_smem, last_cluster[3];
} stats;

/* A tensor map as the fake encodes it (the real layout is opaque). */
typedef struct fake_tmap {
    char magic[8];             /* "FAKETMAP" */
    uint64_t base, dims[2], stride;
    uint32_t box[2], dtype, swizzle, elem_bytes, interleave, l2, oob, rank, estride[2];
} fake_tmap;
_Static_assert(sizeof(fake_tmap) <= sizeof(CUtensorMap), "the fake map fits a CUtensorMap");
static struct { int encodes, misaligned_params; fake_tmap last; } tmaps;

long long fake_cuda_tmap(const char *what);
long long fake_cuda_tmap(const char *what) {
    const fake_tmap *t = &tmaps.last;
    if (!strcmp(what, "encodes")) return tmaps.encodes;
    if (!strcmp(what, "misaligned_params")) return tmaps.misaligned_params;
    if (!strcmp(what, "base")) return (long long)t->base;
    if (!strcmp(what, "dim0")) return (long long)t->dims[0];
    if (!strcmp(what, "dim1")) return (long long)t->dims[1];
    if (!strcmp(what, "stride")) return (long long)t->stride;
    if (!strcmp(what, "box0")) return t->box[0];
    if (!strcmp(what, "box1")) return t->box[1];
    if (!strcmp(what, "dtype")) return t->dtype;
    if (!strcmp(what, "swizzle")) return t->swizzle;
    if (!strcmp(what, "interleave")) return t->interleave;
    if (!strcmp(what, "l2")) return t->l2;
    if (!strcmp(what, "oob")) return t->oob;
    if (!strcmp(what, "rank")) return t->rank;
    if (!strcmp(what, "estride")) return t->estride[0] * 10 + t->estride[1];
    return -1;
}

int fake_cuda_stat(const char *what);
int fake_cuda_stat(const char *what) {
    if (!strcmp(what, "launches")) return stats.launches;
    if (!strcmp(what, "set_attr")) return stats.set_attr;
    if (!strcmp(what, "ctx_set")) return stats.ctx_set;
    if (!strcmp(what, "graph_launches")) return stats.graph_launches;
    if (!strcmp(what, "loads")) return stats.loads;
    if (!strcmp(what, "live_allocs")) return stats.allocs - stats.frees;
    if (!strcmp(what, "last_smem")) return (int)stats.last_smem;
    if (!strcmp(what, "syncs")) return stats.syncs;
    if (!strcmp(what, "ex_launches")) return stats.ex_launches;
    if (!strcmp(what, "last_coop")) return stats.last_coop;
    if (!strcmp(what, "last_cluster")) return (int)(stats.last_cluster[0] * 100 + stats.last_cluster[1] * 10 + stats.last_cluster[2]);
    return -1;
}

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

/* ---- errors ------------------------------------------------------------------------ */
CUresult CUDAAPI cuGetErrorName(CUresult e, const char **s) {
    switch (e) {
    case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return CUDA_SUCCESS;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; return CUDA_SUCCESS;
    case CUDA_ERROR_MISALIGNED_ADDRESS: *s = "CUDA_ERROR_MISALIGNED_ADDRESS"; return CUDA_SUCCESS;
    default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
}
CUresult CUDAAPI cuGetErrorString(CUresult e, const char **s) {
    switch (e) {
    case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE: *s = "no CUDA-capable device is detected"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX: *s = "a PTX JIT compilation failed"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND: *s = "named symbol not found"; return CUDA_SUCCESS;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_SUPPORTED: *s = "the fake driver does not know this kernel's name"; return CUDA_SUCCESS;
    case CUDA_ERROR_MISALIGNED_ADDRESS: *s = "misaligned address"; return CUDA_SUCCESS;
    default: *s = "fake error"; return CUDA_SUCCESS;
    }
}

/* ---- device ---------------------------------------------------------------------------- */
CUresult CUDAAPI cuInit(unsigned int flags) {
    (void)flags;
    return (CUresult)env_int("FAKE_CUDA_INIT", 0);
}
CUresult CUDAAPI cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGetCount(int *n) { *n = env_int("FAKE_CUDA_DEVICES", 1); return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGet(CUdevice *d, int i) { *d = i; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice d) {
    snprintf(name, (size_t)len, "Fake H200 #%d", d);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
    (void)d;
    int cc = env_int("FAKE_CUDA_CC", 90);
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = cc / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = cc % 10; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = (int)FAKE_DEFAULT_SMEM; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = (int)FAKE_OPTIN; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 228 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 1 << 20; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    default: *v = 0; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem(size_t *b, CUdevice d) { (void)d; *b = (size_t)141 << 30; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    (void)d;
    *c = (CUcontext)&primary_ctx;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *c) { *c = current; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) { current = c; stats.ctx_set++; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxSynchronize(void) { return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }

#define NEED_CTX() do { if (!current) return CUDA_ERROR_INVALID_CONTEXT; } while (0)

/* ---- memory ---------------------------------------------------------------------------------- */
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t n) {
    NEED_CTX();
    void *h = calloc(1, n);
    if (!h) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)h;
    stats.allocs++;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
    NEED_CTX();
    free((void *)(uintptr_t)p);
    stats.frees++;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) {
    NEED_CTX();
    memcpy((void *)(uintptr_t)d, s, n);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) {
    NEED_CTX();
    memcpy(d, (void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
    (void)st;
    NEED_CTX();
    memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
/* The next record of a capturing stream (records keep 64-byte aligned
 * parameter copies, which realloc would not promise). */
static rec *next_rec(fake_stream *fs) {
    if (fs->nrec == fs->cap) {
        int cap = fs->cap ? 2 * fs->cap : 8;
        rec *r = aligned_alloc(_Alignof(rec), (size_t)cap * sizeof *r);
        if (!r) return NULL;
        if (fs->nrec) memcpy(r, fs->recs, (size_t)fs->nrec * sizeof *r);
        free(fs->recs);
        fs->recs = r;
        fs->cap = cap;
    }
    return &fs->recs[fs->nrec++];
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char b, size_t n, CUstream st) {
    NEED_CTX();
    fake_stream *fs = (fake_stream *)st;
    if (fs && fs->capturing) {
        rec *r = next_rec(fs);
        if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
        *r = (rec){.memset = 1, .dst = d, .byte = b, .n = n};
        return CUDA_SUCCESS;
    }
    memset((void *)(uintptr_t)d, b, n);
    return CUDA_SUCCESS;
}

/* ---- modules ------------------------------------------------------------------------------------ */
static void set_log(unsigned n, CUjit_option *o, void **v, const char *msg) {
    for (unsigned i = 0; i < n; i++)
        if (o[i] == CU_JIT_ERROR_LOG_BUFFER)
            for (unsigned j = 0; j < n; j++)
                if (o[j] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) snprintf(v[i], (size_t)(uintptr_t)v[j], "%s", msg);
}

static void add_fn(fake_mod *fm, const char *name, size_t len) {
    if (fm->n == 8) return;
    fake_fn *f = &fm->fns[fm->n++];
    snprintf(f->name, sizeof f->name, "%.*s", (int)len, name);
    f->static_smem = strcmp(f->name, "smem_user") ? 0 : 1024;
    f->max_dyn = FAKE_DEFAULT_SMEM - f->static_smem;
    f->max_threads = strcmp(f->name, "tiny") ? 1024 : 64;
}

/* A real cubin (ptxas output, little-endian ELF64): each kernel has a
 * .text.<name> section. The tests' fake cubins ("\177ELF .entry f(") fail
 * the class/data check, so nothing past their few bytes is read. */
static int real_cubin(const unsigned char *img, fake_mod *fm) {
    if (img[EI_CLASS] != ELFCLASS64 || img[EI_DATA] != ELFDATA2LSB) return 0;
    Elf64_Ehdr eh;
    memcpy(&eh, img, sizeof eh);
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) return 0;
    Elf64_Shdr names;
    memcpy(&names, img + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof names, sizeof names);
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, img + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        const char *nm = (const char *)img + names.sh_offset + sh.sh_name;
        if (!strncmp(nm, ".text.", 6)) add_fn(fm, nm + 6, strlen(nm + 6));
    }
    return 1;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v) {
    NEED_CTX();
    const char *text = image;
    if (memcmp(text, "\177ELF", 4) != 0 && strstr(text, "BAD_PTX")) {
        set_log(n, o, v, "ptxas application ptx input, line 3; error   : fake syntax error near 'BAD_PTX'\n");
        return CUDA_ERROR_INVALID_PTX;
    }
    fake_mod *fm = calloc(1, sizeof *fm);
    if (!fm) return CUDA_ERROR_OUT_OF_MEMORY;
    /* a fake cubin: the entry names follow the magic */
    if (!memcmp(text, "\177ELF", 4)) text = real_cubin(image, fm) ? NULL : text + 4;
    for (const char *p = text; p && (p = strstr(p, ".entry ")); p += 7)
        add_fn(fm, p + 7, strspn(p + 7, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"));
    stats.loads++;
    *m = (CUmodule)fm;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleUnload(CUmodule m) {
    NEED_CTX();
    free(m);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    NEED_CTX();
    fake_mod *fm = (fake_mod *)m;
    for (int i = 0; i < fm->n; i++)
        if (!strcmp(fm->fns[i].name, name)) {
            *f = (CUfunction)&fm->fns[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
CUresult CUDAAPI cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
    fake_fn *ff = (fake_fn *)f;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = (int)ff->max_threads; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = (int)ff->static_smem; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = (int)ff->max_dyn; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
    fake_fn *ff = (fake_fn *)f;
    stats.set_attr++;
    if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || v < 0 || (unsigned)v + ff->static_smem > FAKE_OPTIN)
        return CUDA_ERROR_INVALID_VALUE;
    ff->max_dyn = (unsigned)v;
    return CUDA_SUCCESS;
}

/* ---- tensor maps ---------------------------------------------------------------------------------------- */
CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *base,
                                        const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                        const cuuint32_t *estrides, CUtensorMapInterleave interleave,
                                        CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                        CUtensorMapFloatOOBfill oob) {
    static const uint32_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    /* the documented rules the tests can break */
    if ((uintptr_t)map % 64 || rank != 2 || (unsigned)type >= sizeof bytes / sizeof *bytes || (uintptr_t)base % 16 ||
        strides[0] % 16 || box[0] * bytes[type] % 16)
        return CUDA_ERROR_INVALID_VALUE;
    fake_tmap t = {.magic = "FAKETMAP", .base = (uint64_t)(uintptr_t)base, .dims = {dims[0], dims[1]},
                   .stride = strides[0], .box = {box[0], box[1]}, .dtype = (uint32_t)type,
                   .swizzle = (uint32_t)swizzle, .elem_bytes = bytes[type], .interleave = (uint32_t)interleave,
                   .l2 = (uint32_t)l2, .oob = (uint32_t)oob, .rank = rank, .estride = {estrides[0], estrides[1]}};
    memset(map, 0, sizeof *map);
    memcpy(map, &t, sizeof t);
    tmaps.last = t;
    tmaps.encodes++;
    return CUDA_SUCCESS;
}

/* ---- kernels: vadd(A, B, C, n) (also as gpu-check's check_vector_add) and
 * fill(out, value, n) over a 1-D grid (big_lds too, which needs 64 KiB of
 * dynamic shared memory: its LDS pool); tma_box(map, out, x, y) copies the
 * box at (x, y) of its tensor map into out, zeros outside the tensor;
 * bench_* kernels do nothing. A name the fake does not know fails the launch:
 * reading its arguments with another kernel's layout would write wherever
 * they happen to point -------------------------------------------------------------------------------------- */
typedef enum fake_kind { K_UNKNOWN, K_VADD, K_FILL, K_BENCH, K_TMA } fake_kind;

static fake_kind kind_of(const char *name) {
    if (!strcmp(name, "vadd") || !strcmp(name, "check_vector_add")) return K_VADD;
    if (!strcmp(name, "fill") || !strcmp(name, "smem_user") || !strcmp(name, "tiny") || !strcmp(name, "big_lds"))
        return K_FILL;
    if (!strncmp(name, "bench_", 6)) return K_BENCH;
    if (!strcmp(name, "tma_box")) return K_TMA;
    return K_UNKNOWN;
}

/* Dynamic shared memory a kernel's code touches: a launch with less would
 * address shared memory past the block's (an illegal address on a GPU). */
static unsigned smem_needed(const char *name) { return strcmp(name, "big_lds") ? 0 : 64u * 1024u; }

static CUresult run_tma(void **params) {
    if ((uintptr_t)params[0] % 64) {
        tmaps.misaligned_params++;
        return CUDA_ERROR_MISALIGNED_ADDRESS;
    }
    fake_tmap t;
    memcpy(&t, params[0], sizeof t);
    if (memcmp(t.magic, "FAKETMAP", 8)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    CUdeviceptr outp;
    int x, y;
    memcpy(&outp, params[1], 8);
    memcpy(&x, params[2], 4);
    memcpy(&y, params[3], 4);
    unsigned char *out = (unsigned char *)(uintptr_t)outp;
    const unsigned char *base = (const unsigned char *)(uintptr_t)t.base;
    if (!out) return CUDA_ERROR_ILLEGAL_ADDRESS;
    for (uint32_t r = 0; r < t.box[1]; r++)
        for (uint32_t c = 0; c < t.box[0]; c++) {
            long long gy = (long long)y + r, gx = (long long)x + c;
            unsigned char *dst = out + ((size_t)r * t.box[0] + c) * t.elem_bytes;
            if (gy >= 0 && gx >= 0 && (uint64_t)gy < t.dims[1] && (uint64_t)gx < t.dims[0])
                memcpy(dst, base + (uint64_t)gy * t.stride + (uint64_t)gx * t.elem_bytes, t.elem_bytes);
            else
                memset(dst, 0, t.elem_bytes);
        }
    return CUDA_SUCCESS;
}

static unsigned arg_u32(void *p) { unsigned v; memcpy(&v, p, 4); return v; }
static float *arg_fptr(void *p) { CUdeviceptr v; memcpy(&v, p, 8); return (float *)(uintptr_t)v; }

static int param_bytes(fake_kind k, int i) {
    switch (k) {
    case K_VADD: return i < 3 ? 8 : i == 3 ? 4 : 0;    /* (ptr, ptr, ptr, i32) */
    case K_FILL: return i == 0 ? 8 : i < 3 ? 4 : 0;    /* (ptr, i32, i32) */
    case K_BENCH: return i == 0 ? 8 : i == 1 ? 4 : 0;  /* (ptr, i32) */
    case K_TMA: return i == 0 ? 128 : i == 1 ? 8 : i < 4 ? 4 : 0;   /* (tensormap, ptr, i32, i32) */
    case K_UNKNOWN: return 0;
    }
    return 0;
}

static CUresult run(fake_fn *f, const unsigned g[3], const unsigned b[3], void **params) {
    size_t threads = (size_t)g[0] * b[0];
    switch (kind_of(f->name)) {
    case K_VADD: {
        float *A = arg_fptr(params[0]), *B = arg_fptr(params[1]), *C = arg_fptr(params[2]);
        unsigned n = arg_u32(params[3]);
        if (!A || !B || !C) return CUDA_ERROR_ILLEGAL_ADDRESS;
        for (size_t i = 0; i < threads && i < n; i++) C[i] = A[i] + B[i];
        break;
    }
    case K_FILL: {
        unsigned *out = (unsigned *)arg_fptr(params[0]), value = arg_u32(params[1]), n = arg_u32(params[2]);
        if (!out) return CUDA_ERROR_ILLEGAL_ADDRESS;
        for (size_t i = 0; i < threads && i < n; i++) out[i] = value + (unsigned)i;
        break;
    }
    case K_BENCH: break;
    case K_TMA: {
        CUresult r = run_tma(params);
        if (r != CUDA_SUCCESS) return r;
        break;
    }
    case K_UNKNOWN: return CUDA_ERROR_NOT_SUPPORTED;
    }
    stats.launches++;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned smem, CUstream st, void **params, void **extra) {
    NEED_CTX();
    fake_fn *ff = (fake_fn *)f;
    if (extra || !params || bx * by * bz > ff->max_threads || smem > ff->max_dyn) return CUDA_ERROR_INVALID_VALUE;
    if (kind_of(ff->name) == K_UNKNOWN) return CUDA_ERROR_NOT_SUPPORTED;
    if (smem < smem_needed(ff->name)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    stats.last_smem = smem;
    fake_stream *fs = (fake_stream *)st;
    if (fs && fs->capturing) {
        /* the driver copies kernelParams when it records the node */
        rec *r = next_rec(fs);
        if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
        *r = (rec){.f = ff, .smem = smem};
        memcpy(r->g, g, sizeof g);
        memcpy(r->b, b, sizeof b);
        for (int i = 0; param_bytes(kind_of(ff->name), i); i++) {
            memcpy(r->args[i], params[i], (size_t)param_bytes(kind_of(ff->name), i));
            r->nparams++;
        }
        return CUDA_SUCCESS;
    }
    return run(ff, g, b, params);
}

/* Two blocks of any kernel fit per SM. */
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int threads, size_t smem) {
    (void)f; (void)threads; (void)smem;
    NEED_CTX();
    *n = 2;
    return CUDA_SUCCESS;
}

/* The cluster launch: the CLUSTER_DIMENSION attribute is recorded and must
 * divide the grid (the driver's own rule), then it runs as cuLaunchKernel;
 * COOPERATIVE is recorded and the grid must fit (2 blocks on each of 132 SMs). */
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra) {
    NEED_CTX();
    if (!cfg || (cfg->numAttrs && !cfg->attrs)) return CUDA_ERROR_INVALID_VALUE;
    unsigned cl[3] = {1, 1, 1};
    stats.last_coop = 0;
    for (unsigned i = 0; i < cfg->numAttrs; i++) {
        if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
            stats.last_coop = cfg->attrs[i].value.cooperative;
            if ((unsigned long long)cfg->gridDimX * cfg->gridDimY * cfg->gridDimZ > 2 * 132)
                return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
            continue;
        }
        if (cfg->attrs[i].id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) return CUDA_ERROR_NOT_SUPPORTED;
        cl[0] = cfg->attrs[i].value.clusterDim.x;
        cl[1] = cfg->attrs[i].value.clusterDim.y;
        cl[2] = cfg->attrs[i].value.clusterDim.z;
    }
    if (!cl[0] || !cl[1] || !cl[2] || cfg->gridDimX % cl[0] || cfg->gridDimY % cl[1] || cfg->gridDimZ % cl[2] ||
        cl[0] * cl[1] * cl[2] > 8)
        return CUDA_ERROR_INVALID_VALUE;   /* the real driver: CUDA_ERROR_INVALID_CLUSTER_SIZE */
    memcpy(stats.last_cluster, cl, sizeof cl);
    stats.ex_launches++;
    return cuLaunchKernel(f, cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ, cfg->blockDimX, cfg->blockDimY,
                          cfg->blockDimZ, cfg->sharedMemBytes, cfg->hStream, params, extra);
}

/* ---- streams, events, graphs ------------------------------------------------------------------------ */
CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned flags) {
    (void)flags;
    NEED_CTX();
    *s = (CUstream)calloc(1, sizeof(fake_stream));
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamDestroy(CUstream s) {
    fake_stream *fs = (fake_stream *)s;
    free(fs->recs);
    free(fs);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamSynchronize(CUstream s) {
    fake_stream *fs = (fake_stream *)s;
    stats.syncs++;
    return fs && fs->capturing ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned flags) {
    (void)flags;
    *e = (CUevent)calloc(1, sizeof(double));
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventDestroy(CUevent e) { free(e); return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
    (void)s;
    *(double *)e = now_ms();
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventSynchronize(CUevent e) { (void)e; return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventQuery(CUevent e) { (void)e; return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
    *ms = (float)(*(double *)b - *(double *)a);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
    fake_stream *fs = (fake_stream *)s;
    if (!fs || fs->capturing || mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) return CUDA_ERROR_INVALID_VALUE;
    fs->capturing = 1;
    fs->nrec = 0;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamEndCapture(CUstream s, CUgraph *g) {
    fake_stream *fs = (fake_stream *)s;
    if (!fs->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    fake_graph *fg = calloc(1, sizeof *fg);
    fg->recs = fs->recs;
    fg->nrec = fs->nrec;
    fs->recs = NULL;
    fs->nrec = fs->cap = 0;
    fs->capturing = 0;
    *g = (CUgraph)fg;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *e, CUgraph g, unsigned long long flags) {
    (void)flags;
    *e = (CUgraphExec)g;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphLaunch(CUgraphExec e, CUstream s) {
    (void)s;
    fake_graph *fg = (fake_graph *)e;
    stats.graph_launches++;
    for (int i = 0; i < fg->nrec; i++) {
        rec *r = &fg->recs[i];
        if (r->memset) {
            memset((void *)(uintptr_t)r->dst, r->byte, r->n);
            continue;
        }
        for (int j = 0; j < r->nparams; j++) r->params[j] = r->args[j];
        CUresult res = run(r->f, r->g, r->b, r->params);
        if (res != CUDA_SUCCESS) return res;
    }
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec e) { (void)e; return CUDA_SUCCESS; }
CUresult CUDAAPI cuGraphDestroy(CUgraph g) {
    fake_graph *fg = (fake_graph *)g;
    free(fg->recs);
    free(fg);
    return CUDA_SUCCESS;
}

#else
/* no cuda.h: the CUDA tests skip */
int fake_cuda_absent;
#endif
