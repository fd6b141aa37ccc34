/* rocke tests — a host problem's launch arguments on the emulator (see
 * problem_emu.h). Layer: tests. */
#include <stdio.h>
#include <stdlib.h>
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
        rk_problem_tmap_nd t;
        rk_status st = rk_problem_tensormap_nd(p, i, &t);
        if (!st && t.rank == 2)
            st = rk_emu_tensormap_encode_2d(out->addr[t.buf], rk_tile_elem_bytes(t.elem), t.dims[1], t.dims[0],
                                            t.strides_bytes[0], t.box[1], t.box[0], t.swizzle_bytes, out->maps[i]);
        else if (!st)
            st = rk_emu_tensormap_encode_nd(out->addr[t.buf], rk_tile_elem_bytes(t.elem), t.rank, t.dims,
                                            t.strides_bytes, t.box, t.elem_strides, t.swizzle_bytes, out->maps[i]);
        if (st) return st;
        out->args[i] = out->maps[i];
    }
    return RK_OK;
}

rk_status problem_emu_launch(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh) {
    return problem_emu_launch_with(t, k, p, sh, NULL);
}

rk_status problem_emu_launch_with(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh,
                                  const rk_emu_options *opts) {
    rk_emu *emu = rk_emu_new(t, opts);
    if (!emu) return RK_ERR_NOMEM;
    static _Thread_local problem_emu_args pa;   /* static: 4 KiB of tensor-map room */
    rk_status st = problem_emu_args_make(emu, p, &pa);
    uint32_t grid[3], block[3];
    rk_instance_grid(&p->inst, sh, grid, block);
    if (!st) st = rk_emu_launch(emu, k, grid, block, 0, pa.args);
    rk_emu_free(emu);
    return st;
}

rk_status problem_emu_launch_offset(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh,
                                    uint32_t off) {
    uint32_t offs[RK_KSIG_MAX];
    for (uint32_t i = 0; i < RK_KSIG_MAX; i++) offs[i] = off;
    return problem_emu_launch_offsets(t, k, p, sh, offs, 16);
}

rk_status problem_emu_launch_offsets(const rk_target *t, rk_kernel *k, rk_problem *p, const rk_shape *sh,
                                     const uint32_t *offs, size_t pad) {
    rk_emu *emu = rk_emu_new(t, NULL);
    if (!emu) return RK_ERR_NOMEM;
    static _Thread_local problem_emu_args pa;
    rk_status st = problem_emu_args_make(emu, p, &pa);
    unsigned char *room[RK_KSIG_MAX] = {0};
    size_t lead[RK_KSIG_MAX] = {0};
    for (uint32_t i = 0; !st && i < p->sig.n; i++) {
        const rk_kparam *kp = &p->sig.p[i];
        if (!kp->ptr || kp->role == RK_KP_TENSORMAP) continue;
        lead[i] = (size_t)offs[i] * rk_tile_elem_bytes(kp->type);
        size_t total = lead[i] + p->buf[i].bytes + pad;
        room[i] = malloc(total);
        if (!room[i]) {
            st = RK_ERR_NOMEM;
            break;
        }
        memset(room[i], 0xff, total);
        memcpy(room[i] + lead[i], p->buf[i].data, p->buf[i].bytes);
        uint64_t a;
        st = rk_emu_register(emu, room[i], total, kp->name, &a);
        pa.addr[i] = a + lead[i];
    }
    uint32_t grid[3], block[3];
    rk_instance_grid(&p->inst, sh, grid, block);
    if (!st) st = rk_emu_launch(emu, k, grid, block, 0, pa.args);
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (!room[i]) continue;
        if (!st) memcpy(p->buf[i].data, room[i] + lead[i], p->buf[i].bytes);
        free(room[i]);
    }
    rk_emu_free(emu);
    return st;
}

rk_status problem_emu_offsets_case(const char *fam, const rk_target *t, uint64_t M, uint64_t N, const char *knobs,
                                   uint64_t seed, void (*offs_of)(const rk_problem *p, uint32_t *offs, void *ud),
                                   void *ud, size_t pad, rk_problem_diff *c, char *name, size_t n) {
    rk_instance in;
    rk_shape sh;
    const uint64_t ext[2] = {M, N};
    snprintf(name, n, "%s", fam);
    rk_status st = problem_tuned(fam, t, ext, 2, knobs, &in, &sh);
    if (!st) st = rk_instance_name(&in, name, n);
    rk_kernel *k = NULL;
    if (!st) st = rk_instance_build(&in, t, &k);
    if (st) return st;
    rk_problem p;
    if ((st = rk_problem_init(&p, &in, &sh, seed))) {
        rk_kernel_free(k);
        return st;
    }
    uint32_t offs[RK_KSIG_MAX] = {0};
    offs_of(&p, offs, ud);
    st = problem_emu_launch_offsets(t, k, &p, &sh, offs, pad);
    if (!st) st = rk_problem_check(&p, c);
    rk_problem_free(&p);
    rk_kernel_free(k);
    return st;
}

rk_status problem_tuned(const char *fam, const rk_target *t, const uint64_t *ext, uint32_t rank, const char *knobs,
                        rk_instance *in, rk_shape *sh) {
    rk_family_id f;
    uint64_t locked;
    rk_status st = rk_family_parse(fam, &f);
    if (st) return st;
    rk_instance_default(f, in);
    if ((st = problem_knobs_set(in, knobs, &locked))) return st;
    if ((st = rk_shape_default(f, sh)) || (st = rk_shape_update(f, sh, NULL, ext, rank, false))) return st;
    return rk_instance_tune(in, t, sh, locked);
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

rk_status problem_emu_build(rk_family_id f, const rk_target *t, const uint64_t *ext, uint32_t rank, const char *knobs,
                            rk_instance *in, rk_shape *sh, rk_kernel **k, char *name, size_t n) {
    *k = NULL;
    snprintf(name, n, "%s", rk_family_name(f));
    uint64_t locked = 0;
    rk_status st = rk_instance_default(f, in);
    if (!st) st = problem_knobs_set(in, knobs, &locked);
    if (!st) st = rk_shape_default(f, sh);
    if (!st) st = rk_shape_update(f, sh, NULL, ext, rank, false);
    if (!st) st = rk_instance_tune(in, t, sh, locked);
    if (!st) st = rk_instance_name(in, name, n);
    if (!st) st = rk_instance_check_shape(in, sh);
    if (!st) st = rk_instance_build(in, t, k);
    return st;
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
