/* rocke tests — a fake libamdhip64 for the HIP backend's tests: device
 * properties in an opaque buffer (name first, the gfx name further in),
 * attributes by their ROCm numbers, host memory as device memory, "HSACO"
 * whose .entry lines name kernels (fill(out, value, n) runs at launch and
 * checks that the code object it was loaded from is still alive), streams,
 * events on the host clock, and no graph entry points. Loaded through
 * ROCKE_HIP_LIB; counters are exported as fake_hip_stat. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int hipError_t;
enum { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorNoDevice = 100, hipErrorInvalidImage = 200,
       hipErrorNotFound = 500, hipErrorIllegalAddress = 700 };

typedef struct fake_fn { char name[256]; const unsigned char *image; } fake_fn;
typedef struct fake_mod { fake_fn fns[8]; int n; } fake_mod;

static int current = -1;
static struct { int launches, syncs, loads; } stats;

#define API __attribute__((visibility("default")))
#define DECL(ret, name, args) API ret name args; API ret name args

int fake_hip_stat(const char *what);
int fake_hip_stat(const char *what) {
    if (!strcmp(what, "launches")) return stats.launches;
    if (!strcmp(what, "syncs")) return stats.syncs;
    if (!strcmp(what, "loads")) return stats.loads;
    return -1;
}

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

DECL(const char *, hipGetErrorName, (hipError_t e)) {
    switch (e) {
    case hipErrorNoDevice: return "hipErrorNoDevice";
    case hipErrorInvalidImage: return "hipErrorInvalidImage";
    case hipErrorNotFound: return "hipErrorNotFound";
    case hipErrorIllegalAddress: return "hipErrorIllegalAddress";
    default: return "hipErrorUnknown";
    }
}
DECL(const char *, hipGetErrorString, (hipError_t e)) {
    switch (e) {
    case hipErrorNoDevice: return "no ROCm-capable device is detected";
    case hipErrorNotFound: return "named symbol not found";
    default: return "fake error";
    }
}

DECL(hipError_t, hipInit, (unsigned flags)) { (void)flags; return env_int("FAKE_HIP_INIT", 0); }
DECL(hipError_t, hipDriverGetVersion, (int *v)) { *v = 60443483; return hipSuccess; }   /* 6.4 */
DECL(hipError_t, hipGetDeviceCount, (int *n)) { *n = 1; return hipSuccess; }
DECL(hipError_t, hipGetDevice, (int *d)) { *d = current; return current < 0 ? hipErrorInvalidValue : hipSuccess; }
DECL(hipError_t, hipSetDevice, (int d)) {
    if (d != 0) return hipErrorInvalidValue;
    current = d;
    return hipSuccess;
}
DECL(hipError_t, hipDeviceGetAttribute, (int *v, int attr, int dev)) {
    (void)dev;
    switch (attr) {
    case 5: *v = 2100000; return hipSuccess;        /* clock rate */
    case 19: *v = 4 << 20; return hipSuccess;       /* L2 */
    case 56: *v = 1024; return hipSuccess;          /* max threads per block */
    case 63: *v = 304; return hipSuccess;           /* CUs */
    default: *v = 0; return hipErrorInvalidValue;
    }
}
/* The properties struct is opaque to rocke: name at 0, the gfx name later. */
DECL(hipError_t, hipGetDevicePropertiesR0600, (void *props, int dev)) {
    (void)dev;
    char *p = props;
    snprintf(p, 256, "AMD Instinct MI300X (fake)");
    const char *arch = getenv("FAKE_HIP_ARCH");
    snprintf(p + 1160, 256, "%s", arch && *arch ? arch : "gfx942:sramecc+:xnack-");
    return hipSuccess;
}
DECL(hipError_t, hipDeviceTotalMem, (size_t *b, int dev)) { (void)dev; *b = (size_t)192 << 30; return hipSuccess; }
DECL(hipError_t, hipDeviceSynchronize, (void)) { return hipSuccess; }

DECL(hipError_t, hipMalloc, (void **p, size_t n)) {
    if (current < 0) return hipErrorInvalidValue;
    *p = calloc(1, n);
    return *p ? hipSuccess : hipErrorInvalidValue;
}
DECL(hipError_t, hipFree, (void *p)) { free(p); return hipSuccess; }
DECL(hipError_t, hipMemcpyHtoD, (void *d, void *s, size_t n)) { memcpy(d, s, n); return hipSuccess; }
DECL(hipError_t, hipMemcpyDtoH, (void *d, void *s, size_t n)) { memcpy(d, s, n); return hipSuccess; }
DECL(hipError_t, hipMemcpyDtoDAsync, (void *d, void *s, size_t n, void *st)) {
    (void)st;
    memmove(d, s, n);
    return hipSuccess;
}
DECL(hipError_t, hipMemsetD8Async, (void *d, unsigned char b, size_t n, void *st)) {
    (void)st;
    memset(d, b, n);
    return hipSuccess;
}

DECL(hipError_t, hipModuleLoadData, (void **m, const void *image)) {
    const unsigned char *img = image;
    if (memcmp(img, "\177ELF", 4) != 0) return hipErrorInvalidImage;
    fake_mod *fm = calloc(1, sizeof *fm);
    for (const char *p = (const char *)img + 4; (p = strstr(p, ".entry ")) && fm->n < 8; p += 7) {
        sscanf(p + 7, "%63[A-Za-z0-9_]", fm->fns[fm->n].name);
        fm->fns[fm->n++].image = img;   /* kept: the runtime may read the code object later */
    }
    stats.loads++;
    *m = fm;
    return hipSuccess;
}
DECL(hipError_t, hipModuleUnload, (void *m)) { free(m); return hipSuccess; }
DECL(hipError_t, hipModuleGetFunction, (void **f, void *m, const char *name)) {
    fake_mod *fm = m;
    for (int i = 0; i < fm->n; i++)
        if (!strcmp(fm->fns[i].name, name)) {
            *f = &fm->fns[i];
            return hipSuccess;
        }
    return hipErrorNotFound;
}
DECL(hipError_t, hipFuncGetAttribute, (int *v, int attr, void *f)) {
    (void)f;
    *v = attr == 0 ? 256 : 0;   /* max threads per block, static LDS */
    return hipSuccess;
}
DECL(hipError_t, hipModuleLaunchKernel, (void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                         unsigned bz, unsigned lds, void *st, void **params, void **extra)) {
    (void)gy; (void)gz; (void)by; (void)bz; (void)lds; (void)st;
    fake_fn *ff = f;
    if (extra || !params) return hipErrorInvalidValue;
    if (memcmp(ff->image, "\177ELF", 4) != 0) return hipErrorInvalidImage;   /* freed code object */
    uint64_t out;
    uint32_t v, n;
    memcpy(&out, params[0], 8);
    memcpy(&v, params[1], 4);
    memcpy(&n, params[2], 4);
    if (!out) return hipErrorIllegalAddress;
    for (size_t i = 0; i < (size_t)gx * bx && i < n; i++) ((uint32_t *)(uintptr_t)out)[i] = v + 2 * (uint32_t)i;
    stats.launches++;
    return hipSuccess;
}

DECL(hipError_t, hipStreamCreate, (void **s)) { *s = calloc(1, 16); return hipSuccess; }
DECL(hipError_t, hipStreamDestroy, (void *s)) { free(s); return hipSuccess; }
DECL(hipError_t, hipStreamSynchronize, (void *s)) { (void)s; stats.syncs++; return hipSuccess; }

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
DECL(hipError_t, hipEventCreate, (void **e)) { *e = calloc(1, sizeof(double)); return hipSuccess; }
DECL(hipError_t, hipEventDestroy, (void *e)) { free(e); return hipSuccess; }
DECL(hipError_t, hipEventRecord, (void *e, void *s)) { (void)s; *(double *)e = now_ms(); return hipSuccess; }
DECL(hipError_t, hipEventSynchronize, (void *e)) { (void)e; return hipSuccess; }
DECL(hipError_t, hipEventQuery, (void *e)) { (void)e; return hipSuccess; }
DECL(hipError_t, hipEventElapsedTime, (float *ms, void *a, void *b)) {
    *ms = (float)(*(double *)b - *(double *)a);
    return hipSuccess;
}
