/* rocke tests — run a family problem on the emulator: register its
 * buffers, pass its scalars, launch the instance's grid. Shared by the
 * family tests. */
#ifndef ROCKE_TESTS_PROBLEM_EMU_H
#define ROCKE_TESTS_PROBLEM_EMU_H

#include "rocke/emu.h"
#include "rocke/kernels.h"

/* Launch k (built from p's instance) over shape sh on a new emulator for t;
 * RK_OK or the launch's status with its message. */
rk_status problem_emu_launch(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh);

#endif
