/* rocke tests — GEMM cases shared by the Hopper-path tests: a tuned
 * instance (knobs locked, the rest from the heuristic) run on the emulator
 * and checked, or compiled to PTX without the cache. Layer: tests. */
#ifndef ROCKE_TESTS_GEMM_CASES_H
#define ROCKE_TESTS_GEMM_CASES_H

#include <stdint.h>

#include "rocke/compile.h"
#include "rocke/kernels.h"

/* Tune gemm for target at ext (M, N, K) with "name=value ..." knobs, build
 * and compile it: RK_OK with *a (rk_artifact_free) and the tuned *in, or
 * the failing call's status. A compile failure is RK_ERR_UNSUPPORTED when
 * the kernel built (no LLVM here: the caller skips the PTX checks). */
rk_status gemm_ptx(const char *target, const uint64_t ext[3], const char *knobs, rk_instance *in, rk_artifact **a);

/* Tune gemm for sm_90a at M x N x K with the knobs, build it, fill *p
 * from seed, run it on the emulator and check C into *c: RK_OK (then *p is
 * the caller's to free and *in the instance, name its name) or the failing
 * call's status with its message. */
rk_status gemm_emu_case(uint64_t M, uint64_t N, uint64_t K, const char *knobs, uint64_t seed, rk_instance *in,
                        rk_problem *p, rk_problem_diff *c, char *name, size_t n);

#endif
