/* rocke tests — a host problem's launch arguments on the emulator (see
 * problem_emu.h). Layer: tests. */
#include <stdio.h>
#include <string.h>

#include "problem_emu.h"

rk_status problem_emu_args_make(rk_emu *emu, rk_problem *p, problem_emu_args *out) {
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < p->sig.n; i++) {
        const rk_kparam *kp = &p->sig.p[i];
        rk_status st = RK_OK;
        if (kp->ptr) {
            st = rk_emu_register(emu, p->buf[i].data, p->buf[i].bytes, kp->name, &out->addr[i]);
            out->args[i] = &out->addr[i];
        } else if (kp->role != RK_KP_TENSORMAP) {
            st = rk_problem_scalar(p, i, &out->sv[i]);
            out->args[i] = &out->sv[i];
        }
        if (st) return st;
    }
    /* maps last: they need the device address of the buffer they describe */
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (p->sig.p[i].role != RK_KP_TENSORMAP) continue;
        rk_problem_tmap t;
        rk_status st = rk_problem_tensormap(p, i, &t);
        if (!st)
            st = rk_emu_tensormap_encode_2d(out->addr[t.buf], rk_tile_elem_bytes(t.elem), t.rows, t.cols,
                                            t.row_stride_bytes, t.box_rows, t.box_cols, t.swizzle_bytes, out->maps[i]);
        if (st) return st;
        out->args[i] = out->maps[i];
    }
    return RK_OK;
}

rk_status problem_emu_launch(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh) {
    rk_emu *emu = rk_emu_new(t, NULL);
    if (!emu) return RK_ERR_NOMEM;
    static _Thread_local problem_emu_args pa;   /* static: 4 KiB of tensor-map room */
    rk_status st = problem_emu_args_make(emu, p, &pa);
    uint32_t grid[3], block[3];
    rk_instance_grid(&p->inst, sh, grid, block);
    if (!st) st = rk_emu_launch(emu, k, grid, block, 0, pa.args);
    rk_emu_free(emu);
    return st;
}

rk_status problem_knobs_set(rk_instance *in, const char *knobs, uint64_t *locked) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", knobs);
    *locked = 0;
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        if (!eq) return rk_fail(RK_ERR_INVALID, "knob '%s' has no '=value'", tok);
        *eq = 0;
        uint32_t ix;
        rk_status st = rk_instance_set(in, tok, eq + 1, &ix);
        if (st) return st;
        *locked |= 1ull << ix;
    }
    return RK_OK;
}

rk_status problem_emu_verify(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh,
                             rk_problem_diff *c) {
    rk_status st = problem_emu_launch(t, k, p, sh);
    return st ? st : rk_problem_check(p, c);
}

rk_status problem_emu_prepare(const rk_target *t, const rk_instance *in, const rk_shape *sh, uint64_t seed,
                              rk_kernel **k, rk_problem *p) {
    *k = NULL;
    rk_status st = rk_instance_check_shape(in, sh);
    if (!st) st = rk_instance_build(in, t, k);
    if (!st) st = rk_problem_init(p, in, sh, seed);
    if (st && *k) {
        rk_kernel_free(*k);
        *k = NULL;
    }
    return st;
}
