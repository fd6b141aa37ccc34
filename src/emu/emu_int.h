/* rocke — emulator internals: the compiled program (flat bytecode over
 * per-lane register slots with explicit jumps and a mask stack), waves,
 * workers (one per host thread) and the handler protocol shared by the
 * src/emu files. Layer: emu. */
#ifndef ROCKE_EMU_INT_H
#define ROCKE_EMU_INT_H

#include <pthread.h>

#include "rocke/emu.h"
#include "../ir/ir_int.h"
#include "../base/fp.h"
#include "../base/fp8.h"

enum { EMU_MAXW = 64, EMU_MAX_BARRIERS = 16 };

/* A register reference is a byte offset into the wave's register file, or
 * with EMU_CONST set, into the launch's read-only constant pool (constants,
 * parameters, LDS addresses: one copy splatted over the lanes, shared by all
 * waves). Lane l of a value with lane size s lives at ref + l*s: lane-major,
 * so a vector's elements are contiguous and an elementwise op over
 * vec<TxM> is the scalar loop over W*M elements. */
#define EMU_CONST 0x80000000u

typedef struct emu_wave emu_wave;
typedef struct emu_ins emu_ins;
typedef struct emu_worker emu_worker;
typedef struct emu_prog emu_prog;

/* A handler runs one instruction for one wave. EMU_NEXT: continue at w->pc
 * (handlers that branch set it); EMU_STOP: the wave suspended at a barrier,
 * finished, or failed (w->wk->failed). */
typedef int (*emu_fn)(emu_wave *w, const emu_ins *in);
enum { EMU_NEXT = 0, EMU_STOP = 1 };

struct emu_ins {
    emu_fn fn;
    uint32_t d, a, b, c;       /* register refs: result, operands */
    uint32_t n;                /* elementwise ops: elements per wave (W * m) */
    uint32_t m;                /* elements per lane (of the result) */
    uint32_t m2;               /* elements per lane of the operand, where it differs */
    uint32_t es, es2;          /* element bytes of the result / of the operand */
    uint32_t jump;             /* branch target pc */
    uint32_t nargs;
    const uint32_t *args;      /* further register refs (indices, packed elements ...) */
    int64_t imm, imm2;
    rk_scalar sa, sd;          /* element scalar of operand / result */
    const void *aux;           /* op-specific table (LDS allocation, atom, shuffle mask ...) */
    const rk_op *op;           /* for messages */
    uint32_t opidx;            /* pre-order index of op in the kernel */
};

/* One tile.smem_alloc: its segment in the workgroup's LDS. */
typedef struct emu_smem {
    uint32_t offset, bytes, elems, es, rank;
    uint32_t stride[8];        /* elements per step of each index */
    const char *name, *type;
} emu_smem;

struct emu_prog {
    const rk_kernel *k;
    const rk_target *t;
    uint32_t W;                /* lanes per wave */
    emu_ins *code;
    uint32_t ncode;
    uint8_t *cpool;            /* constant pool (EMU_CONST refs) */
    uint32_t cpool_bytes;
    uint32_t regs_bytes;       /* register file per wave */
    uint32_t depth;            /* mask-stack entries per wave */
    emu_smem *smem;
    uint32_t nsmem;
    uint32_t lds_static, lds_total;   /* bytes: allocations, + dynamic */
    bool has_mbar;             /* uses mbarriers: workers keep their state */
    const rk_op **ops;         /* pre-order: ops[opidx] */
    uint32_t nops;
    rk_arena arena;            /* code, args, tables */
};

/* ---- device memory ------------------------------------------------------------- */
typedef struct emu_buf {
    uint64_t addr;
    size_t bytes;
    uint8_t *host;
    char *name;
    bool owned;
} emu_buf;

struct rk_emu {
    const rk_target *t;
    rk_emu_options opt;
    emu_buf *bufs;             /* sorted by addr */
    uint32_t nbufs, cap;
    uint64_t next_addr;
    rk_emu_stats stats;
    uint32_t nthreads;
    char *fault;               /* the test-only fault (opt.test_fault points here) or NULL */
};

/* Provenance: which buffer a pointer came from. A pointer in a register is
 * 16 bytes per lane, the address and its provenance; ptr_add, select, yields
 * and loop carries move both, so every access can be checked against the
 * pointer's own buffer. A provenance packs the base address of the source
 * buffer (bits 0-47) and 1 + the index of the kernel parameter it came from
 * (bits 48-63, 0 = none); 0 as a whole = unknown (the parameter's value lay in
 * no buffer): such a pointer only has to hit some buffer. */
typedef struct emu_fatptr { uint64_t addr, prov; } emu_fatptr;
#define EMU_PROV(base, param) (((uint64_t)(param) << 48) | ((base) & 0xffffffffffffull))
#define EMU_PROV_BASE(p) ((p) & 0xffffffffffffull)
#define EMU_PROV_PARAM(p) ((uint32_t)((p) >> 48))

/* A buffer resource in a register (24 bytes per lane): the base address, the
 * num_records range-check limit in bytes, descriptor word 3 (kept, not
 * interpreted) and the provenance of the base. */
typedef struct emu_vsharp { uint64_t base; uint32_t nrec, w3; uint64_t prov; } emu_vsharp;

/* ---- asynchronous copies pending until their wait --------------------------------- */
enum { EMU_PEND_DMA, EMU_PEND_COPY, EMU_PEND_TMA };
typedef struct emu_pend {
    uint32_t lds_off, bytes;
    uint32_t bar;              /* TMA: LDS offset of the mbarrier its bytes complete on */
    size_t data;               /* offset in the worker's pending-data buffer */
    uint32_t wave, lane;
    const emu_ins *in;
    uint64_t seq;              /* DMA: the wave's VMEM issue number */
    uint32_t group;            /* cp.async: committed group (0 = not committed yet) */
    uint8_t kind;
    bool done;
} emu_pend;

/* LDS race shadow, per byte: the last write and up to two readers (of two
 * different waves) in the current barrier epoch. A tag packs op, lane, wave. */
typedef struct emu_shadow {
    uint32_t we, wtag, re, rtag, re2, rtag2;
} emu_shadow;
#define EMU_TAG(op, atomic, lane, wave) \
    (((uint32_t)((op) < 0x7ffffu ? (op) : 0x7ffffu) << 13) | ((uint32_t)(atomic) << 12) | \
     ((uint32_t)(lane) << 6) | (uint32_t)(wave))
#define EMU_TAG_OP(t) ((t) >> 13)
#define EMU_TAG_ATOMIC(t) (((t) >> 12) & 1u)
#define EMU_TAG_LANE(t) (((t) >> 6) & 63u)
#define EMU_TAG_WAVE(t) ((t) & 63u)

/* ---- Hopper state -------------------------------------------------------------------- */
/* One mbarrier (emu_mbarrier.c): the 64-bit object's state kept beside the
 * LDS, indexed by LDS offset / 8. init_op = op index + 1 of the init that made
 * it, 0 = never initialized in this workgroup. */
typedef struct emu_mbar {
    uint32_t expected, pending, phase;
    int32_t tx;                /* bytes still expected in the current phase (may dip below 0 transiently) */
    uint32_t init_op;
} emu_mbar;

/* One issued wgmma (emu_wgmma.c) of a wave, until a wait retires its group
 * (0 = not committed yet). */
typedef struct emu_wgrec { uint32_t wave, opidx, group; } emu_wgrec;

/* ---- waves and workers ------------------------------------------------------------ */
/* EMU_MBAR: blocked in tile.mbarrier_wait (pc on the wait), runnable again
 * once some mbarrier phase completed after it blocked. */
/* EMU_CLUSTER: blocked in tile.cluster_wait until the cluster barrier's
 * phase it arrived in completes. */
/* EMU_SPIN: in memref.global_wait (pc on the wait), its condition false when
 * last probed; runnable again on the scheduler's next round. */
typedef enum emu_state { EMU_RUN, EMU_BAR, EMU_MBAR, EMU_CLUSTER, EMU_SPIN, EMU_DONE } emu_state;

struct emu_wave {
    uint8_t *R;                /* register file */
    const uint8_t *C;          /* constant pool */
    uint8_t *lds;
    uint64_t exec;             /* active lanes */
    uint64_t alive;            /* lanes that exist and have not returned */
    uint32_t pc, sp;
    uint64_t *ms;              /* mask stack */
    emu_worker *wk;
    const emu_prog *P;
    uint32_t id, W;
    emu_state state;
    const emu_ins *bar_in;     /* the barrier it waits at */
    uint32_t bar_id;
    uint64_t vm_seq;           /* VMEM instructions issued (for s_waitcnt vmcnt) */
    uint32_t groups;           /* cp.async groups committed */
    uint32_t wg_groups;        /* wgmma groups committed */
    bool wg_fenced;            /* a wgmma_fence since the last wgmma_wait_group (or the start) */
    uint32_t maxnreg;          /* tile.setmaxnreg: the warp's register limit (0: the launch's) */
    uint32_t maxnreg_n;        /* tile.setmaxnreg ops executed */
    uint32_t maxnreg_op;       /* the op index of the last one */
    uint64_t mbar_seen;        /* EMU_MBAR: the worker's mbar_events when it blocked */
    uint32_t mbar_wait;        /* EMU_MBAR: LDS offset of the mbarrier, its parity in bit 31 */
    uint64_t steps;            /* instructions executed so far (the watchdog's count) */
    uint64_t cl_arrivals;      /* tile.cluster_arrive executed (phase k's arrival is the k-th) */
    uint64_t spin_addr, spin_have, spin_want;   /* EMU_SPIN: the word, what it held, what the wait wants */
    uint32_t tid[3][EMU_MAXW]; /* thread coordinates of each lane */
};

typedef struct emu_launch {
    rk_emu *emu;
    const emu_prog *P;
    uint32_t grid[3], block[3];
    uint64_t nwg;
    uint32_t cluster[3];       /* blocks per cluster (1, 1, 1 without clusters) */
    uint32_t csize;            /* their product: the blocks of one cluster */
    bool coop;                 /* cooperative kernel: the whole grid is one work unit */
    uint32_t usize;            /* blocks one work unit runs together: csize, or nwg when coop */
    uint64_t nunits;           /* nwg / usize: the units workers take in order */
    uint32_t nwaves;
    uint64_t next_wg;          /* atomic: next workgroup to take */
    uint64_t stop_wg;          /* atomic: workgroups at or past this one are skipped */
    double deadline;           /* watchdog: emu_now() past which waves stop (0 = none) */
    double timeout_s;
    pthread_mutex_t lock;
    char *err;                 /* first error by workgroup order (rk_malloc'd) */
    uint64_t err_wg;
    rk_status err_status;
} emu_launch;

struct emu_worker {
    emu_launch *L;
    const emu_prog *P;
    emu_wave *waves;
    uint8_t *regs;
    uint64_t *mstack;
    uint8_t *lds;
    emu_shadow *shadow;        /* check_races */
    uint32_t *pmark;           /* check_async: pending record + 1 per LDS byte */
    emu_pend *pend;
    uint32_t npend, pend_cap, pend_live;
    uint8_t *pdata;
    size_t pdata_len, pdata_cap;
    uint32_t epoch;
    uint32_t wg[3];
    uint64_t wg_lin;           /* the work unit (cluster; the workgroup without clusters) */
    /* clusters: the unit's blocks in rank order, this one at peers[cl_rank];
     * the cluster barrier's state lives in peers[0] */
    emu_worker *peers;
    uint32_t cl_rank, cl_id[3];
    uint32_t cl_arrived;       /* waves arrived in the barrier's current phase */
    uint64_t cl_phase;         /* cluster barrier phases completed */
    uint32_t bar_arrived[EMU_MAX_BARRIERS], bar_needed[EMU_MAX_BARRIERS];
    emu_mbar *mbar;            /* programs with mbarriers: one per 8 LDS bytes */
    uint64_t mbar_events;      /* mbarrier phases completed so far */
    emu_wgrec *wgrec;          /* wgmmas issued and not yet retired by a wait */
    uint32_t nwgrec, wgrec_cap;
    const emu_buf *bcache;     /* last buffer hit */
    bool check_races, check_barriers, check_async;
    uint64_t max_steps;        /* watchdog: instructions per wave (0 = no limit) */
    uint64_t instructions, lane_ops, workgroups, nwaves_run;
    bool failed;
    rk_status fail_status;
    char msg[1536];
};

/* ---- register access ----------------------------------------------------------------- */
static inline void *emu_ref(const emu_wave *w, uint32_t r) {
    return (r & EMU_CONST) ? (void *)(uintptr_t)(w->C + (r & ~EMU_CONST)) : (void *)(w->R + r);
}
#define REF(r) emu_ref(w, (r))
static inline bool emu_active(const emu_wave *w, uint32_t lane) { return (w->exec >> lane) & 1u; }
static inline uint64_t emu_full(const emu_wave *w) { return w->W == 64 ? ~0ull : (1ull << w->W) - 1u; }
#define FOR_ACTIVE(w, l) \
    for (uint64_t m_##l = (w)->exec, l; m_##l && ((l = (uint64_t)__builtin_ctzll(m_##l)), 1); m_##l &= m_##l - 1)
static inline uint32_t emu_first_active(const emu_wave *w) {
    return w->exec ? (uint32_t)__builtin_ctzll(w->exec) : 0;
}

/* ---- 16-bit floats (bit exact, round to nearest even; see fp.h) ------------------------ */
static inline float emu_h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return rk_bits_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    return rk_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}
static inline uint16_t emu_f2h(float f) {
    uint32_t x = rk_f32_bits(f), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    if (a >= 0x7f800000u)
        return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);        /* >= 65520 rounds to inf */
    if (a >= 0x38800000u) {                                         /* normal half */
        uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
        return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
    }
    if (a < 0x33000000u) return (uint16_t)sign;                     /* below 2^-25: zero */
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, sh = 126u - e;
    uint32_t q = m >> sh, rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);                                    /* q = 0x400 is the smallest normal */
}
static inline float emu_b2f(uint16_t h) { return rk_bits_f32((uint32_t)h << 16); }
static inline uint16_t emu_f2b(float f) {
    uint32_t x = rk_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* The fp8 dialect of an 8-bit float scalar. */
static inline rk_fp8_format emu_fp8_format(rk_scalar s) {
    return s == RK_S_FP8E4M3 ? RK_FP8_E4M3 : s == RK_S_BF8E5M2 ? RK_FP8_E5M2
         : s == RK_S_FP8E4M3FNUZ ? RK_FP8_E4M3_FNUZ : RK_FP8_E5M2_FNUZ;
}

/* Bytes one element of scalar s takes in a register (i1 and i4 take a byte,
 * zero-extended). */
static inline uint32_t emu_sbytes(rk_scalar s) {
    uint32_t b = rk_scalar_bits(s);
    return b <= 8 ? 1u : b / 8u;
}

/* ---- exec.c ------------------------------------------------------------------------------ */
/* Record a fault of wave w at instruction in (lane -1: no lane) and stop it. */
int emu_fail(emu_wave *w, const emu_ins *in, int lane, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* "op #12 'tile.sync' (@loc "x.c:3", line 7)" */
void emu_op_desc(const emu_ins *in, char *buf, size_t n);
void emu_worker_run(emu_worker *wk);       /* takes workgroups until none is left */
double emu_now(void);                      /* monotonic seconds (emu_device.c) */
/* emu_fault.c: the test-only planted miscompile (rk_emu_options.test_fault) */
rk_status emu_fault_check(const char *spec);
rk_status emu_fault_apply(rk_emu *e, const rk_kernel *k, void *const *args);
/* Control-flow and structural handlers, referenced by the compiler. */
int emu_h_end(emu_wave *w, const emu_ins *in);
int emu_h_if(emu_wave *w, const emu_ins *in);
int emu_h_if_end(emu_wave *w, const emu_ins *in);
int emu_h_ife(emu_wave *w, const emu_ins *in);
int emu_h_else(emu_wave *w, const emu_ins *in);
int emu_h_ife_end(emu_wave *w, const emu_ins *in);
int emu_h_for_init(emu_wave *w, const emu_ins *in);
int emu_h_for_head(emu_wave *w, const emu_ins *in);
int emu_h_for_latch(emu_wave *w, const emu_ins *in);
int emu_h_for_exit(emu_wave *w, const emu_ins *in);
int emu_h_yield(emu_wave *w, const emu_ins *in);
int emu_h_return(emu_wave *w, const emu_ins *in);
int emu_h_barrier(emu_wave *w, const emu_ins *in);
int emu_h_nop(emu_wave *w, const emu_ins *in);
int emu_h_fence(emu_wave *w, const emu_ins *in);
int emu_h_unsupported(emu_wave *w, const emu_ins *in);
int emu_h_ids(emu_wave *w, const emu_ins *in);
int emu_h_copy(emu_wave *w, const emu_ins *in);

/* ---- arith.c / float.c / conv.c / vec.c: elementwise handler tables -------------------- */
/* Integer op of `bytes` (1, 2, 4, 8) per element; NULL when not elementwise. */
emu_fn emu_int_fn(rk_opcode code, uint32_t bytes);
/* arith.add/sub/mul reporting signed overflow (8-bit and wider elements);
 * NULL for other ops and widths. */
emu_fn emu_int_nsw_fn(rk_opcode code, uint32_t bytes);
emu_fn emu_cmp_fn(const char *pred, uint32_t bytes, bool small_signed);
emu_fn emu_float_fn(rk_opcode code, rk_scalar s);
emu_fn emu_fcmp_fn(const char *pred);
/* Conversions: mode (imm of the instruction) from element sa to sd. */
enum {
    EMU_CV_SEXT, EMU_CV_ZEXT /* also truncation */, EMU_CV_SITOFP, EMU_CV_UITOFP, EMU_CV_FPTOSI,
    EMU_CV_FPTOUI, EMU_CV_FTOF, EMU_CV_F8DEC, EMU_CV_F8ENC, EMU_CV_I8SAT, EMU_CV_RINT
};
emu_fn emu_conv_fn(int mode, rk_scalar sa, rk_scalar sd);
int emu_h_select(emu_wave *w, const emu_ins *in);
int emu_h_vselect(emu_wave *w, const emu_ins *in);
int emu_h_bitcast(emu_wave *w, const emu_ins *in);
int emu_h_vextract(emu_wave *w, const emu_ins *in);
int emu_h_vinsert(emu_wave *w, const emu_ins *in);
int emu_h_vsplat(emu_wave *w, const emu_ins *in);
int emu_h_vpack(emu_wave *w, const emu_ins *in);
int emu_h_vconcat(emu_wave *w, const emu_ins *in);
int emu_h_vshuffle(emu_wave *w, const emu_ins *in);
int emu_h_vreduce(emu_wave *w, const emu_ins *in);
int emu_h_vmaxmin(emu_wave *w, const emu_ins *in);
int emu_h_scale_decode(emu_wave *w, const emu_ins *in);
int emu_h_scale_encode(emu_wave *w, const emu_ins *in);
int emu_h_p_from_qk(emu_wave *w, const emu_ins *in);
int emu_h_umulhi(emu_wave *w, const emu_ins *in);

/* ---- mem.c: global memory, LDS, buffers, atomics ------------------------------------- */
/* Host pointer of [addr, addr+n) inside the buffer of provenance prov (any
 * buffer when prov is 0), or NULL after emu_fail. */
void *emu_gmem(emu_wave *w, const emu_ins *in, uint32_t lane, uint64_t addr, uint32_t n, uint64_t prov, bool write);
/* The provenance of a pointer value addr passed as parameter param (0 when
 * no buffer holds it). */
uint64_t emu_prov_of(const rk_emu *E, uint64_t addr, uint32_t param);
/* Bytes of prov's buffer from addr to its end (0 when addr is outside it). */
size_t emu_prov_room(const rk_emu *E, uint64_t prov, uint64_t addr);
int emu_h_cmp_ptr(emu_wave *w, const emu_ins *in);
/* Check an LDS access of lane (bounds, pending async destination, races):
 * kind 0 read, 1 write, 2 atomic. false after emu_fail. */
bool emu_lds_touch(emu_wave *w, const emu_ins *in, uint32_t lane, uint64_t off, uint32_t n, int kind);
/* [off, off + n) must lie inside allocation s (NULL: anywhere in the
 * workgroup's LDS, which emu_lds_touch checks), what names the access; false
 * after emu_fail. */
bool emu_lds_within(emu_wave *w, const emu_ins *in, uint32_t lane, const emu_smem *s, uint64_t off, uint32_t n,
                    const char *what);
int emu_h_gload(emu_wave *w, const emu_ins *in);
int emu_h_gstore(emu_wave *w, const emu_ins *in);
int emu_h_coop_store(emu_wave *w, const emu_ins *in);
int emu_h_ptr_add(emu_wave *w, const emu_ins *in);
int emu_h_ptr_to_int(emu_wave *w, const emu_ins *in);
int emu_h_sload(emu_wave *w, const emu_ins *in);
int emu_h_sstore(emu_wave *w, const emu_ins *in);
int emu_h_sstore_dist(emu_wave *w, const emu_ins *in);
int emu_h_lds_atomic(emu_wave *w, const emu_ins *in);
int emu_h_rsrc(emu_wave *w, const emu_ins *in);
int emu_h_bload(emu_wave *w, const emu_ins *in);
int emu_h_bstore(emu_wave *w, const emu_ins *in);
int emu_h_gatomic(emu_wave *w, const emu_ins *in);
/* memref.global_wait (emu_gwait.c): imm 0 ne / 1 uge, es value bytes, imm2
 * as gatomic's; a false condition parks the wave in EMU_SPIN. */
int emu_h_gwait(emu_wave *w, const emu_ins *in);
/* The deadlock text for a wave parked in EMU_SPIN. */
void emu_gwait_describe(const emu_wave *w, char *buf, size_t n);
/* Global atomic kinds (imm of emu_h_gatomic); the first ten follow the kind
 * attribute of memref.global_atomic (emu_atomic_kind maps the name). */
enum {
    EMU_AT_ADD, EMU_AT_FADD, EMU_AT_SMAX, EMU_AT_SMIN, EMU_AT_UMAX, EMU_AT_UMIN, EMU_AT_AND, EMU_AT_OR,
    EMU_AT_XOR, EMU_AT_XCHG, EMU_AT_CAS, EMU_AT_PK_F16, EMU_AT_PK_BF16
};
int emu_atomic_kind(const char *kind);

/* ---- async.c --------------------------------------------------------------------------- */
int emu_h_dma(emu_wave *w, const emu_ins *in);          /* buffer/global -> LDS, lane-contiguous */
int emu_h_async_copy(emu_wave *w, const emu_ins *in);
int emu_h_async_commit(emu_wave *w, const emu_ins *in);
int emu_h_async_wait(emu_wave *w, const emu_ins *in);
int emu_h_waitcnt(emu_wave *w, const emu_ins *in);
/* Complete the wave's pending DMAs issued at or before VMEM number seq (all
 * when seq is UINT64_MAX) / its cp.async copies of groups <= group. */
void emu_async_complete_dma(emu_wave *w, uint64_t seq);
void emu_async_complete_groups(emu_wave *w, uint32_t group, bool uncommitted_too);

/* Pending-copy records shared by async.c and emu_tma.c: a new record over
 * [lds_off, lds_off + bytes) whose data the caller fills (NULL after
 * emu_fail), and landing record idx (race shadow updated as a write of the
 * issuing wave, or, with async_proxy, reset: the mbarrier orders it). */
emu_pend *emu_pend_new(emu_wave *w, const emu_ins *in, uint32_t lane, uint64_t lds_off, uint32_t bytes, uint8_t **data);
bool emu_pend_land(emu_wave *w, uint32_t idx, bool async_proxy);
/* Forget every record once none is live (their data space is reused). */
void emu_pend_reset_if_idle(emu_worker *wk);

/* ---- emu_tmap.c: tensor maps --------------------------------------------------------- */
/* A 2-D tiled tensor map as the emulator device encodes it (128 bytes, see
 * rk_emu_tensormap_encode_2d), decoded. */
typedef struct emu_tmap {
    uint64_t base;
    uint64_t cols, rows;       /* elements; cols is the contiguous dimension */
    uint64_t row_stride;       /* bytes */
    uint32_t box_cols, box_rows;
    uint32_t eb;               /* element bytes */
    uint32_t swizzle;          /* span in bytes: 0 (none), 32, 64, 128 */
    /* every rank (2: the fields above again), innermost first: extents, byte strides (stride[0] is the
     * element), box sides and traversal strides; a box loads ceil(box[i] / estr[i]) elements of
     * dimension i, estr[i] apart */
    uint32_t rank;
    uint64_t dim[5], stride[5];
    uint32_t box[5], estr[5];
} emu_tmap;
/* What tile.tma_load_2d needs from its static operands. */
typedef struct emu_tma_op {
    emu_tmap map;
    uint64_t prov;             /* of the map's base: the tensor's buffer */
    const emu_smem *dst, *bars;
} emu_tma_op;
/* Decode map (128 bytes); false with the reason in why. */
bool emu_tmap_decode(const void *map, emu_tmap *out, char *why, size_t n);
/* The shared-memory address that byte address a lands at under the
 * span-byte swizzle (0: none): 16-byte chunk bits [4, 4+b) XOR address bits
 * [7, 7+b), b = log2(span / 16) (CuTe's Swizzle<b,4,3>). Its own inverse. */
static inline uint64_t emu_swizzle(uint64_t a, uint32_t span) {
    uint64_t mask = span ? (uint64_t)(span / 16u - 1u) : 0u;
    return a ^ (((a >> 7) & mask) << 4);
}

/* ---- emu_mbarrier.c / emu_tma.c / emu_wgmma.c: Hopper ops --------------------------------- */
int emu_h_mbar_init(emu_wave *w, const emu_ins *in);
int emu_h_mbar_arrive(emu_wave *w, const emu_ins *in);       /* imm 1: arrive.expect_tx (c = tx bytes) */
int emu_h_mbar_wait(emu_wave *w, const emu_ins *in);
/* tile.mbarrier_arrive_cluster: a = index, b = the target block's rank */
int emu_h_mbar_arrive_cluster(emu_wave *w, const emu_ins *in);
/* emu_cluster.c: the cluster barrier, and the block of rank `rank` of w's
 * cluster (NULL after emu_fail naming what, when rank is not in it) */
int emu_h_cluster_arrive(emu_wave *w, const emu_ins *in);
int emu_h_cluster_wait(emu_wave *w, const emu_ins *in);
emu_worker *emu_cluster_peer(emu_wave *w, const emu_ins *in, int lane, int64_t rank, const char *what);
void emu_cluster_describe(const emu_worker *wk, char *buf, size_t n);
/* The mbarrier at LDS offset off after tx bytes completed on it (TMA
 * landing); false after emu_fail. */
bool emu_mbar_complete_tx(emu_wave *w, const emu_ins *in, uint32_t off, uint32_t bytes);
/* One line on what the wave blocked in mbarrier_wait waits for. */
void emu_mbar_describe(const emu_worker *wk, const emu_wave *w, char *buf, size_t n);
int emu_h_tma_load(emu_wave *w, const emu_ins *in);
/* Land every pending TMA copy whose bytes complete on the mbarrier at LDS
 * offset bar (UINT32_MAX: all); true when one landed. */
bool emu_tma_land(emu_wave *w, uint32_t bar);
int emu_h_wgmma_desc(emu_wave *w, const emu_ins *in);
int emu_h_wgmma(emu_wave *w, const emu_ins *in);
int emu_h_wgmma_rs(emu_wave *w, const emu_ins *in);
int emu_h_wgmma_fence(emu_wave *w, const emu_ins *in);
/* emu_tma.c: tile.tma_store_2d */
int emu_h_tma_store(emu_wave *w, const emu_ins *in);
/* emu_setmaxnreg.c */
int emu_h_setmaxnreg(emu_wave *w, const emu_ins *in);
int emu_h_wgmma_commit(emu_wave *w, const emu_ins *in);
int emu_h_wgmma_wait(emu_wave *w, const emu_ins *in);

/* ---- lanes.c: cross-lane ---------------------------------------------------------------- */
int emu_h_readfirstlane(emu_wave *w, const emu_ins *in);
int emu_h_readlane(emu_wave *w, const emu_ins *in);
int emu_h_writelane(emu_wave *w, const emu_ins *in);
int emu_h_ballot(emu_wave *w, const emu_ins *in);
int emu_h_vote(emu_wave *w, const emu_ins *in);
int emu_h_shuffle(emu_wave *w, const emu_ins *in);
int emu_h_bpermute(emu_wave *w, const emu_ins *in);
int emu_h_swizzle(emu_wave *w, const emu_ins *in);
int emu_h_dpp(emu_wave *w, const emu_ins *in);
int emu_h_wave_reduce(emu_wave *w, const emu_ins *in);
int emu_h_permlane32_swap(emu_wave *w, const emu_ins *in);
int emu_h_perm_b32(emu_wave *w, const emu_ins *in);
int emu_h_alignbyte(emu_wave *w, const emu_ins *in);
int emu_h_wqm(emu_wave *w, const emu_ins *in);
int emu_h_exec(emu_wave *w, const emu_ins *in);
/* The source lane each lane reads for ds_swizzle offset `off` on a wave of W
 * lanes (src[l] = -1: mode not modelled); false when the offset's mode is not
 * supported. Exposed for the tests' independent formulas to compare with. */
void emu_swizzle_map(uint32_t off, uint32_t W, int *src);

/* ---- mma.c: matrix atoms and transposing loads -------------------------------------------- */
/* Precomputed lane-map tables for an atom (arena-allocated). */
const void *emu_mma_prepare(rk_arena *a, const rk_mma_atom *atom, rk_scalar a_elem, rk_scalar b_elem);
int emu_h_mma(emu_wave *w, const emu_ins *in);
int emu_h_ldmatrix(emu_wave *w, const emu_ins *in);
int emu_h_ds_read_tr(emu_wave *w, const emu_ins *in);

/* ---- emu_compile.c / emu_emit.c: the compiler's state ------------------------------------------ */
typedef struct emu_cc {
    const rk_emu *emu;                      /* buffer registry (provenance of parameters), options */
    const rk_kernel *k;
    const rk_target *t;
    emu_prog *P;
    uint32_t W;
    void *const *args;
    uint32_t nvals;
    uint32_t *ref, *start, *end, *lbytes;   /* per value id: register ref, live range, lane bytes */
    bool *pooled;                           /* lives in the constant pool */
    int32_t *smem;                          /* allocation index of smem values, -1 */
    const rk_op **ops;                      /* pre-order */
    uint32_t *last;                         /* last pre-order index of each op's subtree */
    uint32_t nops, cur;                     /* cur: index of the op being emitted */
    emu_ins *code;
    uint32_t ncode, capc;
    uint8_t *pool;
    uint32_t npool, cappool;
    uint32_t depth;                         /* mask-stack entries open while emitting */
    uint32_t regs;                          /* register file bytes so far */
    uint32_t *wg_src;                       /* per value id: 1 + op index of the tile.wgmma whose in-flight
                                               result it carries, 0 (made by the first wgmma op emitted) */
    uint32_t *rets;                         /* cf.return jumps to patch at the region's end */
    uint32_t nrets, caprets;
    bool failed;
    rk_status st;
} emu_cc;

/* Record the first compile failure (rk_fail) and return false. */
bool emu_cc_fail(emu_cc *c, rk_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A splatted W-lane constant of lb bytes per lane; its EMU_CONST ref. */
uint32_t emu_cc_pool(emu_cc *c, const void *lane0, uint32_t lb);
/* Emit a region's ops (emu_emit.c), jumping its cf.returns to its end. */
bool emu_cc_region(emu_cc *c, const rk_region *r);
/* Emit the kernel body and the end instruction. */
bool emu_cc_kernel(emu_cc *c);
/* Append an instruction for op (emu_emit.c); NULL after a failure. */
emu_ins *emu_cc_add(emu_cc *c, const rk_op *op, emu_fn fn);
/* n register-ref slots in the program's arena; NULL after a failure. */
uint32_t *emu_cc_refs(emu_cc *c, uint32_t n);
/* The Hopper ops: wgmma, mbarriers, TMA, the proxy fence (emu_hopper_emit.c). */
bool emu_cc_hopper(emu_cc *c, const rk_op *op);

static inline rk_type emu_cc_vt(const emu_cc *c, rk_value v) { return rk_value_type(c->k, v); }
static inline bool emu_cc_is_vec(const emu_cc *c, rk_type t) { return rk_type_kind_of(c->k, t) == RK_TK_VEC; }
/* The element scalar of t (pointers count as i64). */
static inline rk_scalar emu_cc_esc(const emu_cc *c, rk_type t) {
    if (emu_cc_is_vec(c, t)) return rk_type_scalar(rk_type_elem(c->k, t));
    if (rk_type_kind_of(c->k, t) == RK_TK_PTR) return RK_S_I64;
    return rk_type_scalar(t);
}
static inline uint32_t emu_cc_cnt(const emu_cc *c, rk_type t) {
    return emu_cc_is_vec(c, t) ? rk_type_count(c->k, t) : 1;
}
/* Register bytes per lane of a value of type t (0: no register). */
static inline uint32_t emu_cc_lane_bytes(const emu_cc *c, rk_type t) {
    switch (rk_type_kind_of(c->k, t)) {
    case RK_TK_SCALAR: return emu_sbytes(rk_type_scalar(t));
    case RK_TK_VEC: return emu_sbytes(rk_type_scalar(rk_type_elem(c->k, t))) * rk_type_count(c->k, t);
    case RK_TK_PTR: return (uint32_t)sizeof(emu_fatptr);
    case RK_TK_RSRC: return (uint32_t)sizeof(emu_vsharp);
    case RK_TK_SMEM: return 0;
    case RK_TK_NONE: return 0;
    }
    return 0;
}

/* ---- emu_lds_origin.c -------------------------------------------------------------------- */
/* The allocation an LDS address (or wgmma descriptor) value v was computed
 * from, or NULL when its definitions do not say (one unknown source). */
const emu_smem *emu_cc_lds_origin(const emu_cc *c, rk_value v);

/* ---- emu_compile.c ----------------------------------------------------------------------- */
/* Build the program for kernel k on emu's target with these launch values
 * (args as in rk_emu_launch; pointer parameters get the provenance of the
 * buffer their value lies in); the message is set on failure. */
rk_status emu_compile(const rk_emu *emu, const rk_kernel *k, uint32_t dynamic_lds, void *const *args, emu_prog **out);
void emu_prog_free(emu_prog *p);

#endif
