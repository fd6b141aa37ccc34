/* rocke tests — a host problem on the CPU emulator: launch arguments
 * (buffers registered, scalars in their types, tensor maps encoded over the
 * registered buffers) and a one-call launch. Shared by the family tests.
 * Layer: tests. */
#ifndef ROCKE_TESTS_PROBLEM_EMU_H
#define ROCKE_TESTS_PROBLEM_EMU_H

#include "rocke/emu.h"
#include "rocke/kernels.h"

typedef struct problem_emu_args {
    uint64_t addr[RK_KSIG_MAX];
    rk_scalar_value sv[RK_KSIG_MAX];
    unsigned char maps[RK_KSIG_MAX][128];
    void *args[RK_KSIG_MAX];    /* rk_emu_launch's args */
} problem_emu_args;

/* Fill out for p's signature on emu (p's buffers stay owned by p). */
rk_status problem_emu_args_make(rk_emu *emu, rk_problem *p, problem_emu_args *out);

/* Launch k (built from p's instance) over shape sh on a new emulator for t;
 * RK_OK or the failing call's status with its message. */
rk_status problem_emu_launch(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh);

/* Check shape sh against in, build in for t into *k and fill *p from seed:
 * RK_OK, or the failing call's status with its message (*k freed). */
rk_status problem_emu_prepare(const rk_target *t, const rk_instance *in, const rk_shape *sh, uint64_t seed,
                              rk_kernel **k, rk_problem *p);

/* problem_emu_launch, then rk_problem_check into *c. */
rk_status problem_emu_verify(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh,
                             rk_problem_diff *c);

/* Set the knobs of "name=value name=value ..." on in; *locked gets bit i
 * of every knob set (the first failing knob's status otherwise). */
rk_status problem_knobs_set(rk_instance *in, const char *knobs, uint64_t *locked);

#endif
