/* rocke — device self-checks (rocke gpu-check): a case builds one kernel with
 * the builder, says which buffers it reads and writes, and computes the
 * expected outputs on the host in double; the runner in selftest.c does the
 * rest (compile or load, poison, launch, compare, time). To add a case, write
 * its four functions in a selftest_*.c file and list it in rt_st_cases[].
 * Layer: runtime. */
#ifndef ROCKE_SELFTEST_H
#define ROCKE_SELFTEST_H

#include "runtime_int.h"

enum { ST_MAX_BUFS = 6, ST_MAX_SCALARS = 6, ST_MAX_TMAPS = 2 };

/* One device buffer, bound to the kernel parameter of the same name. */
typedef struct st_buf {
    const char *name;
    rk_scalar elem;            /* RK_S_I32, RK_S_F32 or RK_S_F16 */
    size_t count;              /* elements */
    bool output;               /* poisoned before the launch, compared after */
    void *host;                /* inputs: filled by setup; outputs: the result read back */
    double *ref;               /* outputs: filled by reference() */
} st_buf;

/* A tensor map over one buffer, passed to the tensormap parameter `param`
 * (encoded by the runner on the device once the buffer exists; the buffer
 * itself is then not bound to a parameter). */
typedef struct st_tmap {
    const char *param, *buf;
    uint64_t rows, cols, row_stride;   /* elements, elements, bytes */
    uint32_t box_rows, box_cols;
    rk_tensormap_swizzle swizzle;
} st_tmap;

typedef struct st_problem {
    const rk_target *target;
    bool small;                /* emulator-sized problem */
    uint64_t rng;              /* state for rt_st_rand() */
    st_buf bufs[ST_MAX_BUFS];
    uint32_t nbufs;
    rk_arg scalars[ST_MAX_SCALARS];   /* named (rk_arg_named) */
    uint32_t nscalars;
    st_tmap tmaps[ST_MAX_TMAPS];
    uint32_t ntmaps;
    uint32_t grid[3], block[3], dyn_smem;
    /* pass when ||out - ref|| / ||ref|| <= tol; 0 = every element exactly
     * equal to its reference rounded to the element type */
    double tol;
    const rk_mma_atom *atom;   /* matrix cases: the atom in use */
    char size[64];             /* for the table: "16777219 f32" */
} st_problem;

typedef struct st_case {
    const char *name;
    const char *desc;
    /* Why the case cannot run on t (static text), or NULL. */
    const char *(*unsupported)(const rk_target *t);
    /* Sizes, geometry and inputs (rt_st_add_buf, rt_st_add_scalar). */
    rk_status (*setup)(st_problem *p);
    /* The kernel (finished), or NULL with the message set. */
    rk_kernel *(*build)(const st_problem *p);
    /* Expected outputs into each output buffer's ref. */
    void (*reference)(st_problem *p);
} st_case;

/* NULL-terminated, in table order (selftest_cases.c). */
extern const st_case *const rt_st_cases[];
extern const st_case rt_st_tma_wgmma;   /* selftest_hopper.c */

/* ---- the runner (selftest.c) -------------------------------------------------------- */
/* rk_check_run for any case, listed or not (tests run broken cases through it). */
rk_status rt_check_run_case(rk_device *dev, const st_case *c, const rk_check_opts *o, rk_check_result *out);

/* ---- helpers for cases (selftest.c) --------------------------------------------- */
/* Add a buffer; inputs are filled by the caller through the returned host
 * pointer. NULL on OOM (message set). */
st_buf *rt_st_add_buf(st_problem *p, const char *name, rk_scalar elem, size_t count, bool output);
void rt_st_add_scalar(st_problem *p, rk_arg named);
st_buf *rt_st_find(st_problem *p, const char *name);
uint64_t rt_st_rand(st_problem *p);                     /* xorshift64* */
int32_t rt_st_rand_int(st_problem *p, int32_t lo, int32_t hi);   /* [lo, hi] */
double rt_st_rand_unit(st_problem *p);                   /* [-1, 1) */
/* Element i of a host buffer as a double (f16 decoded). */
double rt_st_get(const st_buf *b, size_t i);
void rt_st_set(st_buf *b, size_t i, double v);           /* rounds to the element type */

#endif
