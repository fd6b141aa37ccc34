"""A stand-in libcuda for machines without a GPU: the entry points
rocke/_cuda.py binds, compiled from C at first use (needs a C compiler), each
returning success at once. What a launch costs on the host through ctypes is
thus timed as it is on a GPU machine, less the driver's own work. The last
launch and the memsets are recorded in C globals that tests read back; a
memset writes host memory (the stand-in torch's "device" buffers are host
memory). Used by bench_overhead.py and test_fast_path.py."""
import ctypes
import os
import shutil
import subprocess
import tempfile

SOURCE = r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>
typedef struct {
  uint64_t fn, grid[3], block[3], smem, stream, params, extra, launches;
} rk_stub_launch_t;
typedef struct { uint64_t dst, value, count, stream, calls; } rk_stub_memset_t;
rk_stub_launch_t rk_stub_last;
rk_stub_memset_t rk_stub_memset;
int rk_stub_memset_writes;   /* set by a test whose buffers are host memory: the memset then fills them */
int cuInit(unsigned flags) { (void)flags; return 0; }
int cuDeviceGet(int *dev, int index) { *dev = index; return 0; }
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = (void *)0xC7; return 0; }
int cuCtxGetCurrent(void **ctx) { *ctx = (void *)0xC7; return 0; }
int cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
int cuModuleLoadData(void **mod, const void *image) { (void)image; *mod = (void *)0x40D; return 0; }
int cuModuleGetFunction(void **fn, void *mod, const char *name) { (void)mod; (void)name; *fn = (void *)0xF00; return 0; }
int cuFuncSetAttribute(void *fn, int attr, int value) { (void)fn; (void)attr; (void)value; return 0; }
int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned smem, void *stream, void **params, void **extra) {
  rk_stub_last.fn = (uint64_t)(uintptr_t)fn;
  rk_stub_last.grid[0] = gx; rk_stub_last.grid[1] = gy; rk_stub_last.grid[2] = gz;
  rk_stub_last.block[0] = bx; rk_stub_last.block[1] = by; rk_stub_last.block[2] = bz;
  rk_stub_last.smem = smem;
  rk_stub_last.stream = (uint64_t)(uintptr_t)stream;
  rk_stub_last.params = (uint64_t)(uintptr_t)params;
  rk_stub_last.extra = (uint64_t)(uintptr_t)extra;
  rk_stub_last.launches++;
  return 0;
}
typedef struct {
  unsigned grid[3], block[3], smem;
  void *stream;
  void *attrs;
  unsigned num_attrs;
} rk_stub_config_t;                 /* CUlaunchConfig */
unsigned rk_stub_last_num_attrs;
int cuLaunchKernelEx(const void *config, void *fn, void **params, void **extra) {
  const rk_stub_config_t *c = config;
  rk_stub_last_num_attrs = c->num_attrs;
  return cuLaunchKernel(fn, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2], c->smem,
                        c->stream, params, extra);
}
int cuMemsetD32Async(uint64_t dst, unsigned value, size_t count, void *stream) {
  if (rk_stub_memset_writes) {
    uint32_t *p = (uint32_t *)(uintptr_t)dst;
    for (size_t i = 0; i < count; i++) p[i] = value;
  }
  rk_stub_memset.dst = dst; rk_stub_memset.value = value; rk_stub_memset.count = count;
  rk_stub_memset.stream = (uint64_t)(uintptr_t)stream;
  rk_stub_memset.calls++;
  return 0;
}
int cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *base, const uint64_t *dims,
                           const uint64_t *strides, const uint32_t *box, const uint32_t *elem, int inter,
                           int swizzle, int l2, int fill) {
  (void)dtype; (void)rank; (void)dims; (void)strides; (void)box; (void)elem; (void)inter; (void)swizzle;
  (void)l2; (void)fill;
  memcpy(map, &base, sizeof base);
  return 0;
}
int cuGetErrorString(int rc, const char **s) { (void)rc; *s = "stub driver"; return 0; }
"""

_U64 = ctypes.c_uint64


class Launch(ctypes.Structure):
    _fields_ = [("fn", _U64), ("grid", _U64 * 3), ("block", _U64 * 3), ("smem", _U64), ("stream", _U64),
                ("params", _U64), ("extra", _U64), ("launches", _U64)]


class Memset(ctypes.Structure):
    _fields_ = [("dst", _U64), ("value", _U64), ("count", _U64), ("stream", _U64), ("calls", _U64)]


_lib = None


def compiler():
    """The C compiler to build the stub with, or None."""
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")


def load():
    """The stub driver as a ctypes.CDLL (built once per process), or None
    when there is no C compiler."""
    global _lib
    if _lib is None:
        cc = compiler()
        if cc is None:
            return None
        d = tempfile.mkdtemp(prefix="rocke-stub-driver-")
        src, so = os.path.join(d, "stub_cuda.c"), os.path.join(d, "libstub_cuda.so")
        with open(src, "w") as f:
            f.write(SOURCE)
        try:
            subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", so, src], check=True)
            _lib = ctypes.CDLL(so)
        finally:                   # the loaded library stays mapped
            shutil.rmtree(d, ignore_errors=True)
    return _lib


def last_launch(lib):
    return Launch.in_dll(lib, "rk_stub_last")


def last_num_attrs(lib):
    """numAttrs of the last cuLaunchKernelEx (0 on a plain launch through it)."""
    return ctypes.c_uint.in_dll(lib, "rk_stub_last_num_attrs").value


def last_memset(lib):
    return Memset.in_dll(lib, "rk_stub_memset")


def memset_writes(lib, on):
    ctypes.c_int.in_dll(lib, "rk_stub_memset_writes").value = 1 if on else 0
