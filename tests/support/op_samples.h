/* rocke tests — one small, valid, meaningful kernel per op of the table, for
 * tests that walk every op (verify, lower, emulate). Layer: tests. */
#ifndef ROCKE_TESTS_OP_SAMPLES_H
#define ROCKE_TESTS_OP_SAMPLES_H

#include "rocke/ir.h"

/* A finished kernel that uses `code` exactly once with correct operand types
 * and required attributes. Inputs come from pointer parameters in0, in1, ...
 * read at the thread's index (gpu.thread_id x, scaled for vectors); results
 * are stored through out0, out1, ... so nothing is dead. Samples assume a
 * workgroup of 256 threads (LDS tiles hold 256 elements, one per thread).
 * target_name picks target-shaped details: the 8-bit float dialect (FNUZ on
 * gfx940/941/942, OCP elsewhere), the matrix atom (mma.sync on sm_*, MFMA
 * otherwise) and the inline-asm text. NULL means gfx950. Ops a target lacks
 * are still built — legality is the verifier's job. Returns NULL (message in
 * rk_error_message()) when building fails; free with rk_kernel_free. */
rk_kernel *op_sample_kernel(rk_opcode code, const char *target_name);

/* Is the sample for `code` legal on a target with these RK_FEAT_* bits? */
bool op_sample_legal(rk_opcode code, uint32_t target_features);

/* Split one side of an op table sig ("a,b" of "a,b->r", [b, e)) at
 * top-level commas into up to max (start, length) pairs; returns the
 * count, which may exceed max. */
uint32_t op_sig_split(const char *b, const char *e, const char **p, size_t *l, uint32_t max);

/* How many ops with this opcode a kernel holds (recursively). */
uint32_t op_sample_count(const rk_kernel *k, rk_opcode code);

#endif
