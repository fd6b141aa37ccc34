/* rocke — the CPU emulator: the embedded default device. Runs any target's
 * kernel IR on the host with exact wave64/warp32 semantics (exec masks, LDS,
 * barriers, buffer out-of-range rules, matrix-atom lane maps) and checks
 * bounds, LDS races, barrier divergence and async-copy waits.
 * Layer: emu (uses ir, target). See docs/emulator.md. */
#ifndef ROCKE_EMU_H
#define ROCKE_EMU_H

#include "rocke/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_emu rk_emu;

typedef struct rk_emu_options {
    uint32_t threads;      /* host threads running workgroups: 0 = one per online CPU */
    bool check_races;      /* two waves touch one LDS byte between barriers, one writes */
    bool check_barriers;   /* a barrier reached under a partial exec mask */
    bool check_async;      /* LDS access to the destination of a pending async copy */
    bool check_overflow;   /* signed overflow of arith.add/sub/mul (nsw in ops.def) on an active lane is an
                              error naming the op, lane and operands (default off: they wrap) */
    uint64_t max_steps;    /* watchdog: instructions one wave may execute in a launch before it is stopped
                              as a runaway, naming the op it was at (0 = no limit) */
    double timeout_s;      /* watchdog: wall-clock seconds a launch may run (0 = no limit) */
    /* TEST ONLY (default NULL = off): a planted miscompile for the device-vs-
     * emulator check (rocke run --check-emu) to catch. "PARAM:INDEX" makes
     * every launch end by corrupting element INDEX of the buffer that pointer
     * parameter PARAM points at: the top mantissa bit of a float is flipped
     * (the low bit of an integer). A parameter the kernel lacks or an index
     * past its buffer fails the launch naming it. Never set it outside tests. */
    const char *test_fault;
} rk_emu_options;

/* The default step limit: far above any kernel the emulator is meant for (a
 * 256^3 GEMM wave runs a few thousand), a few seconds of one host thread. */
#define RK_EMU_DEFAULT_MAX_STEPS 100000000ull
/* The most blocks of a cooperative launch (all run together as one pool of
 * waves on one host thread). */
#define RK_EMU_COOP_MAX_BLOCKS 1024u

/* threads 0 (auto), the race, barrier and async checks on, overflow check
 * off, max_steps RK_EMU_DEFAULT_MAX_STEPS, no timeout. Out-of-bounds
 * global/LDS accesses are always errors: they would touch host memory. */
rk_emu_options rk_emu_options_default(void);
/* Apply $ROCKE_EMU_MAX_STEPS (0 = no limit) and $ROCKE_EMU_TIMEOUT (seconds)
 * to o where set; RK_ERR_INVALID naming the variable when one is not a number. */
rk_status rk_emu_options_from_env(rk_emu_options *o);

/* An emulated device for target t. opt NULL = the defaults with the
 * environment applied (rk_emu_options_from_env); the runtime passes
 * rk_device_opts.emu_options here. NULL on failure (message set). One
 * launch at a time per rk_emu. */
rk_emu *rk_emu_new(const rk_target *t, const rk_emu_options *opt);
void rk_emu_free(rk_emu *emu);
const rk_target *rk_emu_target(const rk_emu *emu);

/* ---- device memory: host buffers behind fake device addresses ------------- */
/* A zeroed buffer owned by the emulator. Addresses are never reused, so a
 * stale pointer is reported, not silently aliased. */
rk_status rk_emu_alloc(rk_emu *emu, size_t bytes, uint64_t *addr);
/* Make caller memory visible to kernels (the caller keeps ownership and must
 * keep it alive until rk_emu_release). name (may be NULL) appears in errors. */
rk_status rk_emu_register(rk_emu *emu, void *host, size_t bytes, const char *name, uint64_t *addr);
/* Name (or rename) the buffer holding addr, for error messages. */
rk_status rk_emu_set_name(rk_emu *emu, uint64_t addr, const char *name);
/* Forget a buffer (addr = its base); frees it when rk_emu_alloc made it. */
rk_status rk_emu_release(rk_emu *emu, uint64_t addr);
/* Host pointer for a device address (any address inside a buffer) and the
 * bytes from there to the buffer's end; NULL when no buffer holds addr. */
void *rk_emu_host(rk_emu *emu, uint64_t addr, size_t *bytes);

/* ---- launch ------------------------------------------------------------------ */
/* Run k over grid x block (workgroups run on several host threads). args[i]
 * points to the value of parameter i, CUDA kernelParams style: an 8-byte
 * device address for pointers, scalars and vectors by their size, a 16-byte
 * V# for rsrc parameters, the 128-byte map for tensormap parameters
 * (rk_emu_tensormap_encode_2d). The kernel is verified for the emulator's target
 * first. Errors (RK_ERR_VERIFY, RK_ERR_INVALID for a bad launch,
 * RK_ERR_DEVICE for a fault found while running) name the op, workgroup,
 * wave, lane and address; global memory written before the fault stays. */
rk_status rk_emu_launch(rk_emu *emu, const rk_kernel *k, const uint32_t grid[3], const uint32_t block[3],
                        uint32_t dynamic_lds_bytes, void *const *args);

/* ---- tensor maps (NVIDIA TMA) ------------------------------------------------ */
/* The 128-byte value of a `tensormap` parameter for tile.tma_load_2d on the
 * emulator (args[i] of rk_emu_launch points to it): a rows x cols row-major
 * tensor of elem_bytes-byte elements (1, 2, 4, 8) at device address base,
 * row_stride_bytes apart, loaded in box_rows x box_cols boxes into shared
 * memory under a swizzle of swizzle_bytes (0 none, 32, 64, 128), out-of-
 * bounds elements filled with zeros. The rules are cuTensorMapEncodeTiled's
 * (base and stride multiples of 16, box sides 1..256, a box row a multiple
 * of 16 bytes and at most the swizzle span); a bad map is refused with the
 * rule it breaks. The bytes are the emulator's own layout (docs/emulator.md):
 * NVIDIA documents CUtensorMap as opaque, so a map from the CUDA driver is
 * refused by the emulator and this one by a GPU. */
rk_status rk_emu_tensormap_encode_2d(uint64_t base, uint32_t elem_bytes, uint64_t rows, uint64_t cols,
                                     uint64_t row_stride_bytes, uint32_t box_rows, uint32_t box_cols,
                                     uint32_t swizzle_bytes, void *out);

/* An N-D tiled map (rank 1..5; tile.tma_load_4d reads rank 4), every array
 * innermost first: dims[rank] extents, strides_bytes[rank - 1] the byte
 * strides of dimensions 1.., box[rank] sides, elem_strides[rank] traversal
 * strides (1..8; the innermost 1): a box loads ceil(box[i] / elem_strides[i])
 * elements along dimension i, elem_strides[i] apart, and lands in shared
 * memory as rows of the innermost dimension, the next ones outer (the
 * swizzle as for 2-D). Rules as cuTensorMapEncodeTiled's. */
rk_status rk_emu_tensormap_encode_nd(uint64_t base, uint32_t elem_bytes, uint32_t rank, const uint64_t *dims,
                                     const uint64_t *strides_bytes, const uint32_t *box, const uint32_t *elem_strides,
                                     uint32_t swizzle_bytes, void *out);

/* ---- a device's results against the emulator's (rocke run --check-emu) ------- */
/* How closely a GPU running kernel k must agree with the emulator running
 * the same IR on the same inputs, derived from the ops k holds (table in
 * docs/runtime.md, "Checking a GPU against the emulator"): */
typedef struct rk_emu_tolerance {
    bool exact;            /* every op is integer, a move or IEEE-rounded: results must be bit-identical */
    uint32_t approx_ulps;  /* hardware approximations and GPU math routines on the path (about 2 ulp
                              each where documented, then passed through a sum, a division or an add:
                              8 per op kind, allowed at the tensor's largest magnitude since a later
                              add may cancel) */
    uint32_t order_ulps;   /* sums the device may add in another order (matrix units, float atomics):
                              one ulp of the tensor's largest magnitude per term summed */
    char why[256];         /* the ops that made it inexact, or why it is exact */
} rk_emu_tolerance;
/* reduce_len: terms a reordered sum may hold (GEMM: K; 0 = 64). */
rk_status rk_emu_tolerance_of(const rk_kernel *k, uint64_t reduce_len, rk_emu_tolerance *out);

typedef struct rk_emu_diff {
    uint64_t count, total;   /* elements outside the bound, elements compared */
    uint64_t first;          /* flat index of the first of them (count > 0) */
    double got, want;        /* its device and emulator values */
    double bound;            /* the difference allowed there (0 = bit-exact) */
    double max_abs_diff;     /* over all elements */
} rk_emu_diff;
/* Compare n elements of type elem: dev (the device's) against emu (the
 * emulator's). Exact: the bits must match (two NaNs match). Otherwise
 * |dev - emu| may reach (approx_ulps + order_ulps) ulps of f32 (f64 for f64
 * data) at the largest |emu| of the tensor, plus one ulp of elem at the
 * element when elem is narrower than f32 (the rounding may go either way),
 * plus the smallest normal f32 (GPUs flush subnormals in approximations);
 * integers may then differ by 1. */
rk_status rk_emu_compare(const rk_emu_tolerance *tol, rk_scalar elem, const void *dev, const void *emu, uint64_t n,
                         rk_emu_diff *out);

/* ---- statistics (cumulative since rk_emu_new or the last reset) -------------- */
typedef struct rk_emu_stats {
    uint64_t launches, workgroups, waves;
    uint64_t instructions;   /* wave instructions executed */
    uint64_t lane_ops;       /* sum over instructions of the active lanes */
    double seconds;          /* wall time inside rk_emu_launch */
} rk_emu_stats;
void rk_emu_stats_get(const rk_emu *emu, rk_emu_stats *out);
void rk_emu_stats_reset(rk_emu *emu);

#ifdef __cplusplus
}
#endif
#endif
