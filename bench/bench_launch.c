/* rocke bench — launch overhead and copy bandwidth through the runtime.
 * Launch: host time per rk_launch, per launcher call (with argument packing)
 * and per plain cuLaunchKernel on the same function, then device time per
 * launch with events and with graph replay. Bandwidth: a vector-add and a
 * copy kernel built with the builder next to the driver's device-to-device
 * copy, in the same run. With no GPU it says so and measures the emulator's
 * launch overhead only (host clock). Usage: bench_launch [LAUNCHES] [MiB];
 * ROCKE_BENCH_EMIT / ROCKE_BENCH_ARTIFACTS: see load_prebuilt. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"
#include "runtime/runtime_int.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void die(const char *what) {
    fprintf(stderr, "bench_launch: %s: %s\n", what, rk_error_message());
    exit(1);
}

/* ---- kernels ------------------------------------------------------------------------- */
/* empty(p, n): touches nothing; the launch is all there is */
static rk_kernel *empty_kernel(void) {
    rk_kernel *k = rk_kernel_new("bench_empty");
    rk_add_param(k, "p", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_add_param(k, "n", RK_T_I32, NULL);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) die("building the empty kernel");
    return k;
}

/* out[i] = a[i] (+ b[i]) over n f32, 4 elements per thread as one vector */
static rk_kernel *stream_kernel(bool add) {
    rk_kernel *k = rk_kernel_new(add ? "bench_vadd" : "bench_copy");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value a = rk_add_param(k, "a", pf, NULL);
    rk_value b = rk_add_param(k, "b", pf, NULL);
    rk_value out = rk_add_param(k, "out", pf, NULL);
    rk_value n4 = rk_add_param(k, "n4", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value bid = rk_build_block_id(k, 0);
    rk_value bdim = rk_build_block_dim(k, 0);
    rk_value base = rk_build_mul(k, bid, bdim);
    rk_value i = rk_build_add(k, base, tid);
    rk_value inb = rk_build_cmp(k, "lt", i, n4);
    rk_if_begin(k, inb);
    rk_value i64 = rk_build_sext(k, i, RK_T_I64);
    rk_value four = rk_const_i64(k, 4);
    rk_value e = rk_build_mul(k, i64, four);
    rk_value va = rk_load_global(k, a, e, 4);
    if (add) {
        rk_value vb = rk_load_global(k, b, e, 4);
        va = rk_build_vadd(k, va, vb);
    }
    rk_store_global(k, out, e, va);
    rk_if_end(k, NULL, 0);
    rk_kernel_set_attr_int(k, "max_workgroup_size", 256);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) die("building a streaming kernel");
    return k;
}

/* Kernels compiled on another machine: ROCKE_BENCH_EMIT=DIR (with
 * ROCKE_BENCH_TARGET) writes every kernel's artifact and exits; on the GPU
 * machine, which has no LLVM, ROCKE_BENCH_ARTIFACTS=DIR loads NAME.cubin (or
 * NAME.ptx) from there instead of compiling. */
static rk_launcher *load_prebuilt(rk_device *d, rk_kernel *k, const char *dir) {
    static const struct { const char *ext; rk_image_kind kind; } kinds[] = {{"cubin", RK_IMAGE_CUBIN},
                                                                            {"ptx", RK_IMAGE_PTX}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.%s", dir, rk_kernel_name(k), kinds[i].ext);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        static char data[1 << 22];
        size_t n = fread(data, 1, sizeof data - 1, f);
        fclose(f);
        data[n] = '\0';
        rk_module_image img = {.kind = kinds[i].kind, .data = data, .size = kinds[i].kind == RK_IMAGE_PTX ? n + 1 : n};
        rk_launcher *l = NULL;
        rk_argsig *sig = NULL;
        if (rk_launcher_new_image(d, &img, rk_kernel_name(k), &l) != RK_OK ||
            rk_argsig_from_kernel(k, &sig) != RK_OK || rk_launcher_set_signature(l, sig) != RK_OK)
            die(path);
        rk_argsig_free(sig);
        return l;
    }
    printf("  (%s: no %s/%s.cubin or .ptx)\n", rk_kernel_name(k), dir, rk_kernel_name(k));
    return NULL;
}

/* A launcher for k on d: the emulator takes the IR, a GPU the compiled code.
 * NULL (reason printed) when the kernel cannot be compiled for d yet. */
static rk_launcher *load(rk_device *d, rk_kernel *k, rk_artifact **art) {
    rk_launcher *l = NULL;
    *art = NULL;
    if (rk_device_kind_of(d) == RK_DEVICE_EMU) {
        rk_module_image img = {.kind = RK_IMAGE_IR, .kernel = k};
        if (rk_launcher_new_image(d, &img, NULL, &l) != RK_OK) die("loading on the emulator");
        return l;
    }
    const char *pre = getenv("ROCKE_BENCH_ARTIFACTS");
    if (pre && *pre) return load_prebuilt(d, k, pre);
    const rk_target *t = rk_target_find(rk_device_target(d));
    if (!t || rk_compile(k, t, NULL, art) != RK_OK || rk_launcher_new(d, *art, &l) != RK_OK) {
        printf("  (%s: %s)\n", rk_kernel_name(k), rk_error_message());
        return NULL;
    }
    return l;
}

/* The same empty kernel as hand-written PTX, for CUDA while the NVPTX
 * lowering is not there. */
static const char empty_ptx[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
                                ".visible .entry bench_empty(.param .u64 p, .param .u32 n)\n{\n\tret;\n}\n";

/* ---- launch overhead ----------------------------------------------------------------------- */
typedef int (*cu_launch_fn)(void *f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                            void **, void **);

typedef struct launch_work { rk_function *fn; void **params; } launch_work;
static rk_status one_launch(void *ud, rk_stream *s) {
    launch_work *w = ud;
    static const uint32_t g[3] = {1, 1, 1}, b[3] = {32, 1, 1};
    return rk_launch(w->fn, g, b, 0, s, w->params);
}

/* Host time per call of one submit loop: ROUNDS rounds of `iters` calls,
 * each followed by a drain; the median and the best round are reported (the
 * machine may be shared, so single rounds are noisy). */
enum { ROUNDS = 7 };
typedef enum { VIA_LAUNCH, VIA_LAUNCHER, VIA_RAW } via;
typedef struct loop {
    rk_device *d;
    rk_stream *s;
    rk_launcher *l;
    rk_function *fn;
    void **params;
    cu_launch_fn raw;
} loop;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void submit_loop(const loop *lp, via how, uint32_t iters, const char *label, const char *unit) {
    static const uint32_t g[3] = {1, 1, 1}, b[3] = {32, 1, 1};
    const rk_arg args[] = {rk_arg_ptr(0), rk_arg_i32(0)};
    rk_launch_config cfg = {.grid = {1}, .block = {32}, .stream = lp->s};
    double submit[ROUNDS], drained[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_us();
        for (uint32_t i = 0; i < iters; i++) {
            bool ok = how == VIA_LAUNCH     ? rk_launch(lp->fn, g, b, 0, lp->s, lp->params) == RK_OK
                      : how == VIA_LAUNCHER ? rk_launcher_call(lp->l, &cfg, args, 2) == RK_OK
                                            : lp->raw(lp->fn->handle, 1, 1, 1, 32, 1, 1, 0, lp->s->handle, lp->params,
                                                      NULL) == 0;
            if (!ok) die(label);
        }
        double t1 = now_us();
        if (rk_stream_synchronize(lp->d, lp->s) != RK_OK) die("drain");
        double t2 = now_us();
        submit[r] = (t1 - t0) / iters;
        drained[r] = (t2 - t0) / iters;
    }
    qsort(submit, ROUNDS, sizeof *submit, cmp_double);
    qsort(drained, ROUNDS, sizeof *drained, cmp_double);
    printf("  %-30s %8.3f us/launch to submit (best %.3f), %8.3f us until drained (%s)\n", label,
           submit[ROUNDS / 2], submit[0], drained[ROUNDS / 2], unit);
}

static void launch_overhead(rk_device *d, rk_launcher *l, uint32_t iters) {
    rk_function *fn = rk_launcher_function(l);
    rk_devptr p = 0;
    int32_t n = 0;
    void *params[] = {&p, &n};
    rk_stream *s = NULL;
    if (rk_stream_create(d, &s) != RK_OK) die("stream");
    const char *unit = rk_device_kind_of(d) == RK_DEVICE_EMU ? "host clock, emulator" : "host clock";
    printf("launch overhead, %d rounds of %u launches of an empty kernel (1 block of 32), median round:\n", ROUNDS,
           iters);
    loop lp = {d, s, l, fn, params, NULL};
    for (int warm = 0; warm < 100; warm++) one_launch(&(launch_work){fn, params}, s);
    rk_stream_synchronize(d, s);
    submit_loop(&lp, VIA_LAUNCH, iters, "rk_launch", unit);
    submit_loop(&lp, VIA_LAUNCHER, iters, "rk_launcher_call (packs args)", unit);
    if (rk_device_kind_of(d) == RK_DEVICE_CUDA) {
        /* the plain driver call on the same function and stream */
        void *lib = dlopen(rt_cuda_lib_name(), RTLD_NOW | RTLD_LOCAL);
        void *sym = lib ? dlsym(lib, "cuLaunchKernel") : NULL;
        memcpy(&lp.raw, &sym, sizeof lp.raw);
        if (lp.raw) submit_loop(&lp, VIA_RAW, iters, "cuLaunchKernel (plain)", unit);
    }

    /* device time per launch: events around each launch, then graph replay */
    launch_work w = {fn, params};
    rk_time_opts o = {.warmup = 100, .iters = iters < 2000 ? iters : 2000, .stream = s};
    rk_time_result r;
    if (rk_time_launches(d, one_launch, &w, &o, &r) != RK_OK) die("timing launches");
    printf("  %-30s %8.3f us median, %8.3f us amortised over a burst (%s, spread %.0f%%)\n", "launch, events per launch",
           r.median_ms * 1e3, r.burst_ms * 1e3, rk_clock_name(r.clock), 100 * r.spread);
    o.graph = true;
    o.replays = 20;
    if (rk_time_launches(d, one_launch, &w, &o, &r) != RK_OK) die("timing graph replays");
    printf("  %-30s %8.3f us median per launch (%u launches per replay, %s, spread %.0f%%)\n", "graph replay",
           r.median_ms * 1e3, r.runs_per_sample, rk_clock_name(r.clock), 100 * r.spread);
    rk_stream_destroy(s);
}

/* ---- bandwidth -------------------------------------------------------------------------------- */
typedef struct copy_work { rk_device *d; rk_devptr dst, src; size_t n; } copy_work;
static rk_status dtod(void *ud, rk_stream *s) {
    copy_work *w = ud;
    return rk_mem_copy_dtod(w->d, w->dst, w->src, w->n, s);
}

static void report_bw(const char *what, double bytes, const rk_time_result *r) {
    printf("  %-30s %8.3f ms median  %8.1f GB/s  (min %.3f, max %.3f ms, spread %.1f%%)\n", what, r->median_ms,
           bytes / r->median_ms / 1e6, r->min_ms, r->max_ms, 100 * r->spread);
}

static void bandwidth(rk_device *d, size_t mib) {
    size_t bytes = mib << 20, n = bytes / 4;
    rk_devptr a = 0, b = 0, c = 0;
    if (rk_mem_alloc(d, bytes, &a) != RK_OK || rk_mem_alloc(d, bytes, &b) != RK_OK || rk_mem_alloc(d, bytes, &c) != RK_OK)
        die("allocating the bandwidth buffers");
    /* never time on zeros */
    rk_mem_memset(d, a, 0x3c, bytes, NULL);
    rk_mem_memset(d, b, 0x3d, bytes, NULL);
    rk_device_synchronize(d);
    printf("bandwidth, %zu MiB per array (bytes counted: each input read once, the output written once):\n", mib);
    rk_time_opts o = {.warmup = 5, .iters = 30};
    rk_time_result r;
    copy_work cw = {d, c, a, bytes};
    if (rk_time_launches(d, dtod, &cw, &o, &r) != RK_OK) die("timing the device copy");
    report_bw("device-to-device copy (driver)", 2.0 * bytes, &r);
    for (int add = 0; add < 2; add++) {
        rk_kernel *k = stream_kernel(add);
        rk_artifact *art = NULL;
        rk_launcher *l = load(d, k, &art);
        if (l) {
            const rk_arg args[] = {rk_arg_ptr(a), rk_arg_ptr(b), rk_arg_ptr(c), rk_arg_i32((int32_t)(n / 4))};
            rk_launch_config cfg = {.grid = {(uint32_t)((n / 4 + 255) / 256)}, .block = {256}};
            if (rk_time_launcher(l, &cfg, args, 4, &o, &r) != RK_OK) die("timing a streaming kernel");
            report_bw(add ? "vector add kernel (a + b)" : "copy kernel", (add ? 3.0 : 2.0) * bytes, &r);
        } else {
            printf("  %-30s skipped: cannot compile for %s yet\n", add ? "vector add kernel" : "copy kernel",
                   rk_device_target(d));
        }
        rk_launcher_free(l);
        rk_artifact_free(art);
        rk_kernel_free(k);
    }
    rk_mem_free(d, a);
    rk_mem_free(d, b);
    rk_mem_free(d, c);
}

int main(int argc, char **argv) {
    uint32_t iters = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 20000;
    size_t mib = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 1024;
    if (!iters) iters = 20000;
    const char *emit = getenv("ROCKE_BENCH_EMIT");
    if (emit && *emit) {
        const char *tn = getenv("ROCKE_BENCH_TARGET");
        const rk_target *t = rk_target_find(tn ? tn : "sm_90a");
        if (!t) die("ROCKE_BENCH_TARGET");
        rk_kernel *ks[] = {empty_kernel(), stream_kernel(false), stream_kernel(true)};
        for (int i = 0; i < 3; i++) {
            rk_artifact *a = NULL;
            if (rk_compile(ks[i], t, NULL, &a) != RK_OK || rk_artifact_write(a, emit) != RK_OK) die("emitting");
            printf("wrote %s/%s for %s\n", emit, rk_kernel_name(ks[i]), t->name);
            rk_artifact_free(a);
            rk_kernel_free(ks[i]);
        }
        return 0;
    }
    rk_device_opts o = {.quiet = true};
    rk_device *d = NULL;
    if (rk_device_open_opts(&o, &d) != RK_OK) die("opening a device");
    const rk_device_info *in = rk_device_info_of(d);
    printf("device: %s (%s, target %s), %s\n", in->name, rk_device_kind_name(in->kind), in->target, in->driver);
    rk_kernel *k = empty_kernel();
    rk_artifact *art = NULL;
    rk_launcher *l = NULL;
    if (in->kind == RK_DEVICE_EMU) {
        printf("no GPU found (tried %s): GPU numbers skipped; emulator launch overhead only\n", rk_device_probe_log(d));
        if (iters > 2000) iters = 2000;
        l = load(d, k, &art);
        launch_overhead(d, l, iters);
    } else {
        l = load(d, k, &art);
        if (!l && in->kind == RK_DEVICE_CUDA) {
            rk_module_image img = {.kind = RK_IMAGE_PTX, .data = empty_ptx, .size = sizeof empty_ptx - 1};
            if (rk_launcher_new_image(d, &img, "bench_empty", &l) != RK_OK) die("loading the PTX empty kernel");
            const char *names[] = {"p", "n"}, *types[] = {"ptr<f32,global>", "i32"};
            rk_argsig *s = NULL;
            if (rk_argsig_new(names, types, 2, &s) != RK_OK || rk_launcher_set_signature(l, s) != RK_OK)
                die("signature");
            rk_argsig_free(s);
            printf("  (using hand-written PTX for the empty kernel)\n");
        }
        if (l) launch_overhead(d, l, iters);
        bandwidth(d, mib);
    }
    rk_launcher_free(l);
    rk_artifact_free(art);
    rk_kernel_free(k);
    rk_device_close(d);
    return 0;
}
