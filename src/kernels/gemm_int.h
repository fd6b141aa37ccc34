/* rocke — the GEMM families, private: the plan that validation and the
 * builder share (atom, warp tiles, LDS operands and copies), and the
 * reference. Layer: kernels. */
#ifndef ROCKE_GEMM_INT_H
#define ROCKE_GEMM_INT_H

#include "kern_int.h"
#include "rocke/tile_grid.h"
#include "rocke/tile_mma.h"

/* What one block does, derived from the spec and the target. */
typedef struct kn_gemm_plan {
    const rk_mma_atom *atom;
    uint32_t bm, bn, bk;             /* block tile */
    uint32_t wm, wn;                 /* warps */
    uint32_t wtm, wtn;               /* warp tile: bm / wm, bn / wn */
    uint32_t mi, ni, ki;             /* atoms per warp tile in M and N, per block tile in K */
    uint32_t wave, threads, stages;
    bool a_row, b_row;               /* A [M, K] / B [K, N] row-major */
    rk_tile_operand opa, opb;        /* one stage of each in LDS */
    rk_tile_copy cpa, cpb;
    uint32_t stage_a, stage_b;       /* elements per stage */
    uint32_t lds_bytes;
    bool batched;
} kn_gemm_plan;

/* Resolve the atom, check every rule (tile divisibility, warps, LDS and
 * register budgets, copies) and choose the LDS layouts. RK_ERR_INVALID
 * names the knob, the limit and the legal values. */
rk_status kn_gemm_plan_make(const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *out);
/* The default atom of a target for an input type (NULL: none). */
const rk_mma_atom *kn_gemm_default_atom(const rk_target *t, rk_scalar dtype);

/* gemm_build.c: the kernel body; params[i] is signature entry i. */
void kn_gemm_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params, bool batched);

/* gemm_reference.c */
void kn_gemm_reference(const rk_problem *p, double **want, double **tol);

#endif
