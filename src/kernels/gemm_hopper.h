/* rocke — the GEMM family's Hopper path (sm_90a), private: TMA boxes into a
 * ring of 128-byte-swizzled stages on mbarriers, wgmma from shared-memory
 * descriptors, one or two consumer warpgroups. Layer: kernels. */
#ifndef ROCKE_GEMM_HOPPER_H
#define ROCKE_GEMM_HOPPER_H

#include "gemm_int.h"

/* K elements of one stage: a 128-byte row of 16-bit elements. */
enum { KN_WG_BK = 64 };

/* Whether operand 0 (A) or 1 (B) is K-major (A row-major, B column-major):
 * wgmma reads it without the transpose bit; otherwise it is MN-major. */
bool kn_gemm_hopper_k_major(const rk_gemm_spec *s, int operand);
/* Check a path = wgmma spec (any layout; an N-major B needs tile N a
 * multiple of 64; f16/bf16, tile 64|128 x 8..256 x 64,
 * warps (tile M / 16) x 1, 2..6 stages in the shared-memory budget) and fill
 * the plan's block fields (atom NULL). Messages name the knob and the legal
 * values, and say that path=mma takes the rest. */
rk_status kn_gemm_hopper_plan(const rk_gemm_spec *s, const rk_target *t, bool batched, kn_gemm_plan *out);
/* gemm_plan.c: the rules both paths share (group_m, the epilogue chain). */
rk_status kn_gemm_check_order_and_chain(const rk_gemm_spec *s, bool batched);
/* The heuristic: path = wgmma where it applies to target t and the problem
 * (sm_90a, single problems, the default atom, rows of A and B a multiple
 * of 16 bytes for TMA's row stride), with its tile, warps and stages unless
 * locked; otherwise path = mma and nothing else changes. */
void kn_gemm_hopper_tune(rk_gemm_spec *s, const rk_target *t, uint64_t M, uint64_t N, uint64_t K, bool batched,
                         bool tile_locked, bool warps_locked, bool stages_locked);
/* Shape limits of the path (TMA's 16-byte row stride of A and B, whose
 * rows run along K or M / N by the layout). */
rk_status kn_gemm_hopper_check_shape(const rk_gemm_spec *s, uint64_t M, uint64_t N, uint64_t K);
/* The two tensormap entries (A_map over A, B_map over B) after the others. */
void kn_gemm_hopper_signature(const rk_gemm_spec *s, rk_ksig *sg);
void kn_gemm_hopper_tensormap_box(const rk_instance *in, const rk_kparam *kp, uint32_t *box_rows, uint32_t *box_cols,
                                  uint32_t *swizzle_bytes);
/* The kernel body; params[i] is signature entry i. */
void kn_gemm_hopper_build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *params);

#endif
