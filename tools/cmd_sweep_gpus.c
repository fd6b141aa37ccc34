/* rocke sweep — how many GPUs `--devices all` has: the driver's own count
 * (cuInit + cuDeviceGetCount, else hipInit + hipGetDeviceCount) through the
 * library the runtime loads, without opening a device: no context is made,
 * which on a GPU host costs as much as the driver start itself. Called in
 * a child process (a driver started before fork() is unusable in the
 * workers); a device that is counted but does not open fails in its worker
 * ("could not start"). Layer: tools. */
#include <dlfcn.h>
#include <string.h>

#include "runtime/runtime_int.h"
#include "sweep_int.h"

static uint32_t driver_count(const char *lib, const char *init_name, const char *count_name) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
    int (*init)(unsigned) = NULL;
    int (*count)(int *) = NULL;
    void *pi = dlsym(h, init_name), *pc = dlsym(h, count_name);
    memcpy(&init, &pi, sizeof pi);
    memcpy(&count, &pc, sizeof pc);
    int n = 0;
    /* both drivers return 0 for success */
    if (!init || !count || init(0) != 0 || count(&n) != 0 || n < 0) n = 0;
    dlclose(h);
    return (uint32_t)(n > SW_MAX_WORKERS ? SW_MAX_WORKERS : n);
}

uint32_t sw_gpu_count(const char *kind) {
    if (!strcmp(kind, "cuda")) return driver_count(rt_cuda_lib_name(), "cuInit", "cuDeviceGetCount");
    return driver_count(rt_hip_lib_name(), "hipInit", "hipGetDeviceCount");
}
