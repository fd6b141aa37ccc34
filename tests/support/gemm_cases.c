/* rocke tests — GEMM cases on the emulator and in PTX (gemm_cases.h).
 * Layer: tests. */
#include "gemm_cases.h"

#include "problem_emu.h"

rk_status gemm_ptx(const char *target, const uint64_t ext[3], const char *knobs, rk_instance *in, rk_artifact **a) {
    const rk_target *t = rk_target_find(target);
    rk_shape sh;
    *a = NULL;
    if (!t) return rk_fail(RK_ERR_INVALID, "no target %s", target);
    rk_status st = problem_tuned("gemm", t, ext, 3, knobs, in, &sh);
    rk_kernel *k = NULL;
    if (!st) st = rk_instance_build(in, t, &k);
    if (st) return st;
    rk_compile_options o;
    st = rk_compile_options_default(t, &o);
    o.cache = false;
    if (!st && rk_compile(k, t, &o, a)) st = RK_ERR_UNSUPPORTED;
    rk_kernel_free(k);
    return st;
}

rk_status gemm_emu_case(uint64_t M, uint64_t N, uint64_t K, const char *knobs, uint64_t seed, rk_instance *in,
                        rk_problem *p, rk_problem_diff *c, char *name, size_t n) {
    const rk_target *t = rk_target_find("sm_90a");
    const uint64_t ext[3] = {M, N, K};
    rk_shape sh;
    rk_kernel *k = NULL;
    rk_status st = problem_emu_build(RK_FAMILY_GEMM, t, ext, 3, knobs, in, &sh, &k, name, n);
    if (st) return st;
    st = rk_problem_init(p, in, &sh, seed);
    if (!st && (st = problem_emu_verify(t, k, p, &sh, c))) rk_problem_free(p);
    rk_kernel_free(k);
    return st;
}
