/* rocke — activations and the fused epilogue chain: what any family (GEMM,
 * convolution, attention) applies per output element in f32 before the
 * store — bias per column or row, a scale, a clamp, an activation, and
 * element-wise add/multiply with extra tensors — with its parser, its
 * kernel parameters and a host model for verification. Layer: tile. */
#ifndef ROCKE_TILE_EPILOGUE_H
#define ROCKE_TILE_EPILOGUE_H

#include "rocke/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- activations (f32 scalars or vectors) -------------------------------------- */
typedef enum rk_act {
    RK_ACT_RELU = 0,     /* max(x, 0) */
    RK_ACT_GELU_TANH,    /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    RK_ACT_SILU,         /* x * sigmoid(x) */
    RK_ACT_SIGMOID,      /* 1 / (1 + e^-x) */
    RK_ACT_TANH,
    RK_ACT__COUNT
} rk_act;
const char *rk_act_name(rk_act a);              /* "relu", "gelu", "silu", "sigmoid", "tanh" */
rk_value rk_tile_act(rk_kernel *k, rk_act a, rk_value x);
double rk_act_ref(rk_act a, double x);          /* the same in double (host references) */

/* ---- the chain --------------------------------------------------------------------- */
typedef enum rk_epi_kind {
    RK_EPI_BIAS = 0,     /* x + Bias[col]            (a vector of N) */
    RK_EPI_BIAS_ROW,     /* x + BiasRow[row]         (a vector of M) */
    RK_EPI_SCALE,        /* x * alpha                (an f32 parameter) */
    RK_EPI_CLAMP,        /* min(max(x, lo), hi)      (constants) */
    RK_EPI_ACT,          /* an activation */
    RK_EPI_ADD,          /* x + D[row, col]          (an [M, N] tensor with its row stride) */
    RK_EPI_MUL,          /* x * D[row, col] */
    RK_EPI__COUNT
} rk_epi_kind;

typedef struct rk_epi_step {
    rk_epi_kind kind;
    rk_act act;          /* RK_EPI_ACT */
    float lo, hi;        /* RK_EPI_CLAMP */
} rk_epi_step;

#define RK_EPI_MAX_STEPS 8
typedef struct rk_epi_chain {
    uint32_t n;
    rk_epi_step s[RK_EPI_MAX_STEPS];
} rk_epi_chain;

/* "bias,gelu", "scale,add,relu", "clamp(-1:1)": steps in order, spelled
 * bias | bias_row | scale | clamp(LO:HI) | relu | gelu | silu | sigmoid | tanh
 * | add | mul. "" or "none" is the empty chain. RK_ERR_INVALID names the
 * step and lists the legal ones. */
rk_status rk_epi_parse(const char *text, rk_epi_chain *out);
/* The chain as parse reads it ("" when empty). */
void rk_epi_format(const rk_epi_chain *c, char *buf, size_t n);
/* A kernel-name tag ("" when empty, else e.g. "_fbias_gelu_clampm1p5_2"):
 * letters, digits and '_' only, distinct for distinct chains. */
void rk_epi_tag(const rk_epi_chain *c, char *buf, size_t n);

/* ---- kernel parameters --------------------------------------------------------------- */
/* The chain's run-time operands, in order: Bias / BiasRow (ptr<operand
 * type>), alpha (f32), and for add/mul D<i> (ptr<operand type>) then ldd<i>
 * (i32 elements between rows); several steps of one kind are numbered
 * (Bias, Bias1, ...). */
#define RK_EPI_MAX_PARAMS (2 * RK_EPI_MAX_STEPS)
typedef struct rk_epi_param {
    char name[24];
    bool ptr;            /* ptr<operand type, global>, else a scalar of `type` */
    rk_scalar type;      /* pointee or scalar type */
    uint32_t step;       /* which step reads it */
} rk_epi_param;
uint32_t rk_epi_params(const rk_epi_chain *c, rk_scalar operand_type, rk_epi_param *out);

/* Values for the chain's parameters, in rk_epi_params order. */
typedef struct rk_epi_args {
    const rk_epi_chain *chain;
    rk_value p[RK_EPI_MAX_PARAMS];
} rk_epi_args;
/* Add the chain's parameters to k (ABI order = the order of the calls).
 * Pointers are readonly and noalias. */
void rk_tile_epi_add_params(rk_kernel *k, const rk_epi_chain *c, rk_scalar operand_type, rk_epi_args *out);

/* Apply the chain to x: f32 scalar, or vec<f32 x n> holding columns
 * col..col+n-1 of row `row` (i32 each). `valid` (i1) false keeps every
 * operand load at element 0 (the result is then meaningless and must not be
 * stored). Tensor operands are addressed in i64 (past 2 GiB). */
rk_value rk_tile_epi_apply(rk_kernel *k, const rk_epi_args *a, rk_value x, rk_value row, rk_value col,
                           rk_value valid);

/* Host model: x through the chain with the operand each step reads
 * (bias, alpha or D value as the device sees it; ignored for the others). */
double rk_epi_ref(const rk_epi_chain *c, double x, const double *operand);

#ifdef __cplusplus
}
#endif
#endif
