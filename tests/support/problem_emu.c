/* rocke tests — run a family problem on the emulator (problem_emu.h). */
#include "problem_emu.h"

rk_status problem_emu_launch(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh) {
    rk_emu *emu = rk_emu_new(t, NULL);
    if (!emu) return RK_ERR_NOMEM;
    uint64_t addr[RK_KSIG_MAX];
    rk_scalar_value sv[RK_KSIG_MAX];
    void *args[RK_KSIG_MAX];
    rk_status st = RK_OK;
    for (uint32_t i = 0; i < p->sig.n && !st; i++) {
        const rk_kparam *kp = &p->sig.p[i];
        if (kp->ptr) {
            st = rk_emu_register(emu, p->buf[i].data, p->buf[i].bytes, kp->name, &addr[i]);
            args[i] = &addr[i];
        } else {
            st = rk_problem_scalar(p, i, &sv[i]);
            args[i] = &sv[i];
        }
    }
    uint32_t grid[3], block[3];
    rk_instance_grid(&p->inst, sh, grid, block);
    if (!st) st = rk_emu_launch(emu, k, grid, block, 0, args);
    rk_emu_free(emu);
    return st;
}
