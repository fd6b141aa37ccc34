/* rocke — the device runtime: one API over the CUDA driver, HIP and the CPU
 * emulator (devices, memory, modules, launches, streams, events, graphs),
 * kernel-argument packing, launchers, the workspace pool and launch timing.
 * Layer: runtime (uses compile and emu). */
#ifndef ROCKE_RUNTIME_H
#define ROCKE_RUNTIME_H

#include "rocke/ir.h"
#include "rocke/emu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================= */
/* Handles. A device address is a plain integer: what the kernel sees. */
typedef uint64_t rk_devptr;
typedef struct rk_device rk_device;
typedef struct rk_module rk_module;
typedef struct rk_function rk_function;
typedef struct rk_stream rk_stream;      /* NULL = the device's default stream */
typedef struct rk_event rk_event;
typedef struct rk_graph rk_graph;
typedef struct rk_artifact rk_artifact;  /* compile layer (rocke/compile.h) */

/* ---- devices ------------------------------------------------------------ */
typedef enum rk_device_kind { RK_DEVICE_EMU = 0, RK_DEVICE_CUDA, RK_DEVICE_HIP } rk_device_kind;
const char *rk_device_kind_name(rk_device_kind k);       /* "emu" "cuda" "hip" */

typedef struct rk_device_info {
    rk_device_kind kind;
    const char *name;          /* "NVIDIA H200", "AMD Instinct MI300X", "rocke CPU emulator" */
    const char *arch;          /* the chip as its driver names it: "sm_90", "gfx942:sramecc+:xnack-" */
    const char *target;        /* the rocke target to compile for ("sm_90a", "gfx942"); "" if none fits */
    const char *driver;        /* "CUDA driver 13.0 (libcuda.so.1)", "HIP 6.4 (libamdhip64.so)", ... */
    int driver_version;        /* CUDA 13000 = 13.0; HIP as hipDriverGetVersion; 0 on the emulator */
    int cc_major, cc_minor;    /* NVIDIA compute capability; 0 elsewhere */
    uint32_t sm_count;         /* SMs / CUs (emulator: 1) */
    uint32_t warp_size;
    uint32_t max_threads_per_block;
    uint64_t smem_per_block;       /* shared memory a block gets without opting in (bytes) */
    uint64_t smem_per_block_optin; /* with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (>= the above) */
    uint64_t smem_per_sm;
    uint64_t l2_bytes;         /* 0 when unknown */
    uint64_t total_mem;        /* bytes; 0 when unknown */
    uint32_t clock_khz;        /* 0 when unknown */
} rk_device_info;

typedef struct rk_device_opts {
    /* "auto" (first GPU: CUDA, then HIP; else the emulator), "cuda", "cuda:<index>",
     * "hip", "hip:<index>", "emu", "emu:<target>". NULL or "" = $ROCKE_DEVICE, else "auto". */
    const char *which;
    /* No stderr notice when "auto" falls back to the emulator ($ROCKE_QUIET=1 does the same). */
    bool quiet;
    /* Target the emulator runs when "emu" names none (NULL = the default target, gfx950). */
    const char *emu_target;
    /* Options of the emulator when the device is one (copied at open; NULL =
     * rk_emu_new's defaults, which read $ROCKE_EMU_MAX_STEPS and $ROCKE_EMU_TIMEOUT). */
    const rk_emu_options *emu_options;
} rk_device_opts;

/* Open a device. An explicit "cuda" or "hip" that cannot be opened is an error
 * whose message lists every library and step tried. */
rk_status rk_device_open(const char *which, rk_device **out);
rk_status rk_device_open_opts(const rk_device_opts *opts, rk_device **out);
/* Frees every module, stream, event and graph still open on it. */
void rk_device_close(rk_device *dev);
const rk_device_info *rk_device_info_of(const rk_device *dev);
rk_device_kind rk_device_kind_of(const rk_device *dev);
const char *rk_device_name(const rk_device *dev);
const char *rk_device_target(const rk_device *dev);
/* What "auto" tried before settling on this device ("" when it tried nothing). */
const char *rk_device_probe_log(const rk_device *dev);
rk_status rk_device_synchronize(rk_device *dev);

/* ---- memory (sizes in bytes) ------------------------------------------------ */
rk_status rk_mem_alloc(rk_device *dev, size_t bytes, rk_devptr *out);   /* 0 bytes gives 0 */
rk_status rk_mem_free(rk_device *dev, rk_devptr p);                      /* 0 is a no-op */
/* Host <-> device copies return when the copy is done (ordered after earlier
 * work on the default stream and on streams made by rk_stream_create). */
rk_status rk_mem_copy_htod(rk_device *dev, rk_devptr dst, const void *src, size_t n);
rk_status rk_mem_copy_dtoh(rk_device *dev, void *dst, rk_devptr src, size_t n);
/* Device-side copy and fill, queued on stream s (NULL = default stream). */
rk_status rk_mem_copy_dtod(rk_device *dev, rk_devptr dst, rk_devptr src, size_t n, rk_stream *s);
rk_status rk_mem_memset(rk_device *dev, rk_devptr dst, uint8_t byte, size_t n, rk_stream *s);
/* Name the buffer at p for error messages (the emulator reports faults by
 * buffer name); a no-op on GPUs. */
rk_status rk_mem_name(rk_device *dev, rk_devptr p, const char *name);

/* ---- modules and functions ------------------------------------------------------ */
typedef enum rk_image_kind {
    RK_IMAGE_NONE = 0,
    RK_IMAGE_HSACO,   /* AMD code object (ELF) — HIP */
    RK_IMAGE_PTX,     /* PTX text — CUDA (driver JIT) */
    RK_IMAGE_CUBIN,   /* NVIDIA ELF — CUDA */
    RK_IMAGE_IR       /* ckdsl.ir v1 text or a built rk_kernel — the emulator */
} rk_image_kind;
const char *rk_image_kind_name(rk_image_kind k);   /* "hsaco" "ptx" "cubin" "ir" */

/* What a module is loaded from when there is no artifact. */
typedef struct rk_module_image {
    rk_image_kind kind;
    const void *data;          /* code object, PTX or IR text (copied at load) */
    size_t size;               /* bytes of data (PTX/IR need no NUL) */
    const rk_kernel *kernel;   /* RK_IMAGE_IR alternative to text: used in place, must outlive the module */
    const char *target;        /* target it was built for; NULL = unchecked */
    /* Dynamic shared memory bytes the kernel's own code needs (an NVIDIA LDS
     * pool over 48 KiB is declared as dynamic shared memory): every launch
     * adds it (CUDA only: HIP and the emulator allocate the pool with the
     * kernel). 0 = none, or unknown; when the module knows the kernel's rocke
     * IR (`kernel`, or IR text from an artifact) a CUDA module computes it. */
    uint32_t dyn_smem_min;
    /* Blocks per thread-block cluster (the manifest's cluster_dims); 0, 0, 0
     * = take them from the kernel's IR when the module has it, else none. */
    uint32_t cluster_dims[3];
} rk_module_image;

/* Load an artifact: the cubin over PTX on CUDA, the HSACO on HIP, the IR on
 * the emulator. A binary for another device kind is an error naming both. */
rk_status rk_module_load(rk_device *dev, const rk_artifact *a, rk_module **out);
rk_status rk_module_load_image(rk_device *dev, const rk_module_image *img, rk_module **out);
void rk_module_unload(rk_module *m);
/* Look a kernel up (the function belongs to the module). */
rk_status rk_module_function(rk_module *m, const char *name, rk_function **out);
const char *rk_function_name(const rk_function *f);
rk_device *rk_function_device(const rk_function *f);
/* Dynamic shared memory every launch of f passes before the caller's bytes:
 * its LDS pool when that is dynamic shared memory (CUDA, pools over 48 KiB). */
uint32_t rk_function_dyn_smem_min(const rk_function *f);
/* Blocks per cluster every launch of f uses (1, 1, 1: no clusters); a grid
 * must be a whole number of them. */
void rk_function_cluster_dims(const rk_function *f, uint32_t out[3]);
/* Whether every launch of f is cooperative: all blocks resident at once
 * (the kernel's IR attribute `cooperative` when the module holds its IR, or
 * what rk_function_set_cooperative said: the manifest's `cooperative` for a
 * code object loaded without IR). A cooperative launch refuses a grid the
 * device cannot hold at once (CUDA: cuLaunchKernelEx with the COOPERATIVE
 * attribute; the emulator runs the grid as one pool of waves; HIP refuses
 * it for now). */
bool rk_function_cooperative(const rk_function *f);
rk_status rk_function_set_cooperative(rk_function *f, bool on);

/* ---- kernel arguments --------------------------------------------------------- */
/* The kernel-argument ABI: every argument at the next offset aligned to its
 * alignment (its own size; a tensor map: 128 bytes at a multiple of 64), zero
 * padding, the block ends at the last argument (no trailing round-up):
 * (ptr, i32, ptr) = 24 bytes, GEMM (A, B, C, M, N, K) = 36 bytes,
 * (i32, tensormap) = 192 bytes with the map at 64. */
typedef enum rk_arg_type {
    RK_ARG_PTR = 0, RK_ARG_I64, RK_ARG_I32, RK_ARG_I16, RK_ARG_I8, RK_ARG_I1,
    RK_ARG_F64, RK_ARG_F32, RK_ARG_F16, RK_ARG_BF16,
    RK_ARG_TENSORMAP,   /* a CUtensorMap by value: a `tensormap` kernel parameter (NVIDIA TMA) */
    RK_ARG__COUNT
} rk_arg_type;
#define RK_TENSORMAP_BYTES 128u
#define RK_TENSORMAP_ALIGN 64u
const char *rk_arg_type_name(rk_arg_type t);          /* "ptr" "i32" ... "tensormap" */
uint32_t rk_arg_type_size(rk_arg_type t);             /* bytes */
uint32_t rk_arg_type_align(rk_arg_type t);            /* = the size, but 64 for a tensor map */
/* An IR or manifest type name: "ptr<f16, global>", "ptr<f32,global>", "i32", "f16", "tensormap" ... */
rk_status rk_arg_type_parse(const char *text, rk_arg_type *out);

typedef struct rk_argsig rk_argsig;
/* A signature from names and type names (a manifest's args_signature). */
rk_status rk_argsig_new(const char *const *names, const char *const *types, uint32_t n, rk_argsig **out);
/* A signature from a kernel's parameters. */
rk_status rk_argsig_from_kernel(const rk_kernel *k, rk_argsig **out);
void rk_argsig_free(rk_argsig *s);
uint32_t rk_argsig_count(const rk_argsig *s);
const char *rk_argsig_name(const rk_argsig *s, uint32_t i);
rk_arg_type rk_argsig_type(const rk_argsig *s, uint32_t i);
uint32_t rk_argsig_offset(const rk_argsig *s, uint32_t i);
uint32_t rk_argsig_size(const rk_argsig *s);           /* bytes of the packed block */
int rk_argsig_find(const rk_argsig *s, const char *name); /* index or -1 */

/* One argument value: by name, or by position when name is NULL. */
typedef struct rk_arg {
    const char *name;
    rk_arg_type type;
    union { uint64_t p; int64_t i; double f; const void *tmap; } v;
} rk_arg;
static inline rk_arg rk_arg_ptr(rk_devptr p) { rk_arg a = {0}; a.type = RK_ARG_PTR; a.v.p = p; return a; }
static inline rk_arg rk_arg_i64(int64_t x) { rk_arg a = {0}; a.type = RK_ARG_I64; a.v.i = x; return a; }
static inline rk_arg rk_arg_i32(int32_t x) { rk_arg a = {0}; a.type = RK_ARG_I32; a.v.i = x; return a; }
static inline rk_arg rk_arg_i16(int16_t x) { rk_arg a = {0}; a.type = RK_ARG_I16; a.v.i = x; return a; }
static inline rk_arg rk_arg_i8(int8_t x) { rk_arg a = {0}; a.type = RK_ARG_I8; a.v.i = x; return a; }
static inline rk_arg rk_arg_i1(bool x) { rk_arg a = {0}; a.type = RK_ARG_I1; a.v.i = x; return a; }
static inline rk_arg rk_arg_f64(double x) { rk_arg a = {0}; a.type = RK_ARG_F64; a.v.f = x; return a; }
static inline rk_arg rk_arg_f32(float x) { rk_arg a = {0}; a.type = RK_ARG_F32; a.v.f = x; return a; }
/* f16/bf16 values are rounded to nearest even when packed. */
static inline rk_arg rk_arg_f16(float x) { rk_arg a = {0}; a.type = RK_ARG_F16; a.v.f = x; return a; }
static inline rk_arg rk_arg_bf16(float x) { rk_arg a = {0}; a.type = RK_ARG_BF16; a.v.f = x; return a; }
/* A tensor map: the 128-byte descriptor (rk_tensormap_encode_2d's output) is
 * copied when packed, so it must stay valid until rk_args_pack returns. */
static inline rk_arg rk_arg_tensormap(const void *desc128) { rk_arg a = {0}; a.type = RK_ARG_TENSORMAP; a.v.tmap = desc128; return a; }
static inline rk_arg rk_arg_named(const char *name, rk_arg a) { a.name = name; return a; }

/* Packed arguments in both forms: `bytes` is the packed block (little-endian,
 * `size` bytes, 64-byte aligned so a tensor map inside it is too); params[i]
 * points at argument i inside it (kernelParams). */
typedef struct rk_argpack {
    uint8_t *bytes;
    uint32_t size, cap;
    void **params;
    uint32_t n, params_cap;
    void *block;               /* the allocation `bytes` lies in (cap + 64 bytes) */
} rk_argpack;
void rk_argpack_init(rk_argpack *p);
void rk_argpack_free(rk_argpack *p);
/* Pack values for a signature (reusing p's buffers). Positional values fill
 * parameters in order, named ones by name; a missing, unknown, repeated or
 * mistyped argument is an error naming it. */
rk_status rk_args_pack(const rk_argsig *s, const rk_arg *args, uint32_t n, rk_argpack *p);

/* ---- tensor maps (NVIDIA TMA) --------------------------------------------------- */
typedef enum rk_tensormap_swizzle {
    RK_TENSORMAP_SWIZZLE_NONE = 0, RK_TENSORMAP_SWIZZLE_32B, RK_TENSORMAP_SWIZZLE_64B, RK_TENSORMAP_SWIZZLE_128B
} rk_tensormap_swizzle;
/* Encode a 2-D tiled tensor map (cuTensorMapEncodeTiled) into out[128] (any
 * alignment; pass it with rk_arg_tensormap): a rows x cols row-major tensor
 * of `elem` at base (16-byte aligned), rows row_stride_bytes apart (a
 * multiple of 16, at least cols * element size), loaded in boxes of
 * box_rows x box_cols elements (1..256 each; box_cols * element size a
 * multiple of 16 and, when swizzled, at most the swizzle span). Elements
 * outside the tensor read as zero; no L2 promotion. Element types: i8/fp8
 * kinds, i16, i32, i64, f16, bf16, f32, f64. Needs a CUDA device of compute
 * capability 9.0 or later; elsewhere RK_ERR_UNSUPPORTED. */
rk_status rk_tensormap_encode_2d(rk_device *dev, rk_devptr base, rk_scalar elem, uint64_t rows, uint64_t cols,
                                 uint64_t row_stride_bytes, uint32_t box_rows, uint32_t box_cols,
                                 rk_tensormap_swizzle swizzle, void *out);

/* An N-D tiled map (rank 1..5), every array innermost first: dims[rank],
 * strides_bytes[rank - 1] (dimensions 1..: multiples of 16), box[rank]
 * (1..256), elem_strides[rank] (traversal strides 1..8: a box loads
 * ceil(box[i] / elem_strides[i]) elements of dimension i, that far apart).
 * The other rules and the zero fill as rk_tensormap_encode_2d's. */
rk_status rk_tensormap_encode_nd(rk_device *dev, rk_devptr base, rk_scalar elem, uint32_t rank, const uint64_t *dims,
                                 const uint64_t *strides_bytes, const uint32_t *box, const uint32_t *elem_strides,
                                 rk_tensormap_swizzle swizzle, void *out);

/* ---- launch ------------------------------------------------------------------- */
/* Queue fn on stream s. args[i] points at parameter i's value (kernelParams
 * form; the values are copied before the call returns). dyn_smem is the
 * dynamic shared memory / LDS in bytes the caller asks for; the launch passes
 * rk_function_dyn_smem_min(fn) + dyn_smem (the kernel's dynamic LDS pool
 * first, the caller's bytes after it). Above the default limit it is opted into. */
rk_status rk_launch(rk_function *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t dyn_smem,
                    rk_stream *s, void **args);

/* ---- streams, events, graphs ------------------------------------------------------ */
rk_status rk_stream_create(rk_device *dev, rk_stream **out);
void rk_stream_destroy(rk_stream *s);
rk_status rk_stream_synchronize(rk_device *dev, rk_stream *s);

rk_status rk_event_create(rk_device *dev, rk_event **out);
void rk_event_destroy(rk_event *e);
rk_status rk_event_record(rk_event *e, rk_stream *s);
rk_status rk_event_synchronize(rk_event *e);
rk_status rk_event_query(rk_event *e, bool *done);
/* Milliseconds from start to end (both recorded and complete). */
rk_status rk_event_elapsed_ms(rk_event *start, rk_event *end, double *ms);

/* Capture the work queued on s (a stream from rk_stream_create) into a graph
 * instead of running it; replay it with rk_graph_launch. */
rk_status rk_graph_capture_begin(rk_stream *s);
rk_status rk_graph_capture_end(rk_stream *s, rk_graph **out);
rk_status rk_graph_launch(rk_graph *g, rk_stream *s);
void rk_graph_destroy(rk_graph *g);

/* ---- launchers --------------------------------------------------------------------- */
typedef struct rk_launch_config {
    uint32_t grid[3], block[3];   /* zeros read as 1 */
    uint32_t dyn_smem;            /* bytes, on top of the kernel's own dynamic pool (rk_launch) */
    rk_stream *stream;            /* NULL = default stream */
    bool fence;                   /* wait for the kernel before returning */
} rk_launch_config;

/* Load once, launch many. The signature comes from the module's IR (or the
 * kernel) and may be replaced with rk_launcher_set_signature. */
typedef struct rk_launcher rk_launcher;
rk_status rk_launcher_new(rk_device *dev, const rk_artifact *a, rk_launcher **out);
rk_status rk_launcher_new_image(rk_device *dev, const rk_module_image *img, const char *kernel_name,
                                rk_launcher **out);
void rk_launcher_free(rk_launcher *l);
rk_status rk_launcher_set_signature(rk_launcher *l, const rk_argsig *s);   /* copied */
const rk_argsig *rk_launcher_signature(const rk_launcher *l);
rk_function *rk_launcher_function(rk_launcher *l);
/* Pack args (by name or position), launch with cfg; cfg->fence waits unless a
 * no-fence scope is open on this thread. */
rk_status rk_launcher_call(rk_launcher *l, const rk_launch_config *cfg, const rk_arg *args, uint32_t n);
/* Scope (per thread, nestable) in which launcher calls never fence. */
void rk_no_fence_begin(void);
void rk_no_fence_end(void);
bool rk_no_fence_active(void);

/* Stages chained on one stream; only the last may fence. */
typedef struct rk_pipeline rk_pipeline;
rk_status rk_pipeline_new(rk_launcher *const *stages, uint32_t n, rk_pipeline **out);
void rk_pipeline_free(rk_pipeline *p);
/* cfgs[i], args[i] (nargs[i] values) for stage i; every stage runs on stream s
 * whatever its cfg says. *launches (may be NULL) = launches queued. */
rk_status rk_pipeline_call(rk_pipeline *p, const rk_launch_config *cfgs, const rk_arg *const *args,
                           const uint32_t *nargs, uint32_t nstages, rk_stream *s, uint32_t *launches);

/* ---- workspaces ---------------------------------------------------------------------- */
/* Long-lived scratch buffers keyed by name: asking again for the same or a
 * smaller size returns the same buffer; a larger one replaces it. */
typedef struct rk_workspace_pool rk_workspace_pool;
typedef struct rk_workspace_spec { const char *name; size_t bytes; } rk_workspace_spec;
rk_status rk_workspace_pool_new(rk_device *dev, rk_workspace_pool **out);
void rk_workspace_pool_free(rk_workspace_pool *p);
rk_status rk_workspace_get(rk_workspace_pool *p, const char *name, size_t bytes, rk_devptr *out);
/* Get every spec in one go (out[i] for specs[i]). */
rk_status rk_workspace_prepare(rk_workspace_pool *p, const rk_workspace_spec *specs, uint32_t n, rk_devptr *out);
/* Bytes `specs` need as separate 256-byte-aligned buffers. */
size_t rk_workspace_required_bytes(const rk_workspace_spec *specs, uint32_t n);
/* Size last asked for and bytes held under name; false when there is none. */
bool rk_workspace_lookup(const rk_workspace_pool *p, const char *name, size_t *bytes, size_t *capacity);
size_t rk_workspace_capacity_bytes(const rk_workspace_pool *p);   /* all buffers held */
uint32_t rk_workspace_count(const rk_workspace_pool *p);
rk_status rk_workspace_drop(rk_workspace_pool *p, const char *name);  /* NOT_FOUND if absent */
void rk_workspace_clear(rk_workspace_pool *p);

/* ---- timing ---------------------------------------------------------------------------- */
/* The work to time: queue one launch (or any work) on stream s. */
typedef rk_status (*rk_work_fn)(void *ud, rk_stream *s);

typedef struct rk_time_opts {
    uint32_t warmup;          /* untimed runs first (0 = 5) */
    uint32_t iters;           /* timed runs (0 = 100) */
    bool flush_l2;            /* fill a 2x-L2 scratch buffer before every timed run, outside the timing */
    bool graph;               /* capture `iters` runs once as a graph and time its replays */
    uint32_t replays;         /* graph replays timed (0 = 10) */
    rk_stream *stream;        /* NULL = a stream made for the measurement */
} rk_time_opts;

typedef enum rk_clock { RK_CLOCK_GPU_EVENTS = 0, RK_CLOCK_HOST_EMULATOR } rk_clock;
const char *rk_clock_name(rk_clock c);   /* "gpu events", "host clock (emulator)" */

typedef struct rk_time_result {
    rk_clock clock;
    uint32_t samples;           /* timed samples: runs, or graph replays */
    uint32_t runs_per_sample;   /* 1, or iters for graph replays */
    double median_ms, min_ms, max_ms, mean_ms;   /* per run */
    double spread;              /* (max - min) / median */
    double burst_ms;            /* first to last event over all timed runs, per run (amortised) */
    bool flushed, graph;
} rk_time_result;

rk_status rk_time_launches(rk_device *dev, rk_work_fn fn, void *ud, const rk_time_opts *opts, rk_time_result *out);
/* The same for a launcher call (cfg->stream and cfg->fence are ignored). */
rk_status rk_time_launcher(rk_launcher *l, const rk_launch_config *cfg, const rk_arg *args, uint32_t n,
                           const rk_time_opts *opts, rk_time_result *out);

/* ---- device self-checks (rocke gpu-check) ---------------------------------------------- */
/* Each check builds a kernel, runs it on the device on fresh random inputs
 * (outputs poisoned first) and compares with a host reference: integers
 * exactly, floats by ||out - ref|| / ||ref||. */
typedef enum rk_check_status { RK_CHECK_PASS = 0, RK_CHECK_FAIL, RK_CHECK_SKIP, RK_CHECK_ERROR } rk_check_status;
const char *rk_check_status_name(rk_check_status s);   /* "PASS" "FAIL" "SKIP" "ERROR" */

typedef struct rk_check_opts {
    uint64_t seed;             /* 0 = from the clock (printed in the result) */
    bool time;                 /* also time the kernel */
    uint32_t warmup, iters;    /* timing (0 = 10 and 50 on a GPU, 1 and 3 on the emulator) */
    /* GPU: load DIR/<kernel>.cubin (else .ptx; HIP: .hsaco) written by
     * rk_check_emit instead of compiling here (NULL = compile) */
    const char *artifacts;
    bool small;                /* the emulator's problem sizes on a GPU too (a quick smoke test) */
} rk_check_opts;

typedef struct rk_check_result {
    rk_check_status status;
    uint64_t seed;
    double max_abs_err;        /* max |out - ref| over the outputs */
    double rel_err;            /* ||out - ref|| / ||ref|| */
    double tol;                /* 0 = exact */
    uint64_t bad, total;       /* elements off (or NaN), elements compared */
    double median_ms, spread;  /* when timed (0 otherwise) */
    rk_clock clock;
    char size[64];             /* problem size, e.g. "16777219 f32" */
    char note[1024];           /* why it skipped, failed or errored; the atom used */
} rk_check_result;

uint32_t rk_check_count(void);
const char *rk_check_name(uint32_t i);
const char *rk_check_desc(uint32_t i);
int rk_check_find(const char *name);   /* index or -1 */
/* Run check i. Returns RK_OK whenever a result was produced, whatever its status. */
rk_status rk_check_run(rk_device *dev, uint32_t i, const rk_check_opts *opts, rk_check_result *out);
/* Build check i's kernel for `target`, compile it and write DIR/<kernel>.ll and
 * the binary (rk_artifact_write), for a GPU machine without a compiler. PASS
 * with the kernel name in note, SKIP when the target cannot run the check, or
 * ERROR with the reason. */
rk_status rk_check_emit(const char *target, uint32_t i, const char *dir, rk_check_result *out);

#ifdef __cplusplus
}
#endif
#endif
