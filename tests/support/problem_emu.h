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

/* problem_emu_launch with every tensor starting `off` elements past an
 * aligned address (a sub-tensor view): each buffer lies `off` elements into
 * a larger one whose other bytes are 0xff (NaN for floats); every buffer is
 * copied back into p after the launch. */
rk_status problem_emu_launch_offset(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh,
                                    uint32_t off);

/* The same with offs[i] elements before parameter i's tensor and `pad`
 * bytes after it (0: a read past the tensor's end is an out-of-bounds
 * access the emulator fails). */
rk_status problem_emu_launch_offsets(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh,
                                     const uint32_t *offs, size_t pad);

/* A 2-D case of family fam (extents M x N, knobs locked, the rest tuned for
 * t) built, filled from seed and launched with offs_of(p, offs, ud)
 * elements before each parameter's tensor and pad bytes after it
 * (problem_emu_launch_offsets), then checked into *c; name gets the
 * instance's name. RK_OK, or the failing step's status with its message. */
rk_status problem_emu_offsets_case(const char *fam, const rk_target *t, uint64_t M, uint64_t N, const char *knobs,
                                   uint64_t seed, void (*offs_of)(const rk_problem *p, uint32_t *offs, void *ud),
                                   void *ud, size_t pad, rk_problem_diff *c, char *name, size_t n);

/* problem_emu_launch on an emulator made with opts (NULL: defaults). */
rk_status problem_emu_launch_with(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh,
                                  const rk_emu_options *opts);
/* Check shape sh against in, build in for t into *k and fill *p from seed:
 * RK_OK, or the failing call's status with its message (*k freed). */
rk_status problem_emu_prepare(const rk_target *t, const rk_instance *in, const rk_shape *sh, uint64_t seed,
                              rk_kernel **k, rk_problem *p);

/* problem_emu_launch, then rk_problem_check into *c. */
rk_status problem_emu_verify(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh,
                             rk_problem_diff *c);

/* The instance of family `fam` tuned on t for the extents ext (rank of
 * them) with the knobs of "name=value ..." locked, and its shape. */
rk_status problem_tuned(const char *fam, const rk_target *t, const uint64_t *ext, uint32_t rank, const char *knobs,
                        rk_instance *in, rk_shape *sh);

/* Set the knobs of "name=value name=value ..." on in; *locked gets bit i
 * of every knob set (the first failing knob's status otherwise). */
rk_status problem_knobs_set(rk_instance *in, const char *knobs, uint64_t *locked);

/* Instance of family f with knobs "name=value ...", tuned for target t at
 * the shape of `rank` positional extents, shape-checked and built into *k;
 * name receives the instance's name (the family's before it is known).
 * RK_OK, or the first failing call's status and message. */
rk_status problem_emu_build(rk_family_id f, const rk_target *t, const uint64_t *ext, uint32_t rank, const char *knobs,
                            rk_instance *in, rk_shape *sh, rk_kernel **k, char *name, size_t n);

#endif
