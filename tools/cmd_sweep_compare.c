/* rocke sweep — the device check's kernel: a config's output compared on
 * the device with the shape's reference, which the worker uploads once per
 * shape as the wanted values rounded to the output type (what the host
 * check compares with, exact in that type) and a float tolerance rounded
 * down. One kernel per output type (f32, f16, bf16); each thread walks a
 * grid-stride range, a wave folds its count of bad elements, first bad index
 * and largest difference with shuffles, and its first lane adds them to 12
 * bytes the host reads back. It passes an element only where the host check
 * (src/kernels/problem_check.c) passes it, so a config it passes needs no
 * host check; one it fails goes to the host check, whose message names the
 * element. Layer: tools. */
#include <math.h>
#include <stdio.h>

#include "sweep_int.h"

bool sw_compare_supported(rk_scalar t) {
    return t == RK_S_F32 || t == RK_S_F16 || t == RK_S_BF16;
}

void sw_compare_name(rk_scalar t, char *buf, size_t n) {
    snprintf(buf, n, "rk_sweep_compare_%s", rk_scalar_name(t));
}

float sw_compare_tol(double tol) {
    /* down to a float, then by 2^-22: a float difference (rounded by at most
     * 2^-24) at or under it is under the double tolerance */
    double t = tol * (1.0 - ldexp(1.0, -22));
    float f = (float)t;
    if ((double)f > t) f = nextafterf(f, 0.0f);
    return isnan(tol) ? 0.0f : f;
}

static rk_value c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

rk_kernel *sw_compare_kernel(rk_scalar elem, const rk_target *t) {
    char name[64];
    sw_compare_name(elem, name, sizeof name);
    rk_kernel *k = rk_kernel_new(name);
    if (!k) return NULL;
    rk_type te = {elem};
    rk_param_abi ro = {.readonly = true, .noalias = true};
    rk_value got = rk_add_param(k, "got", rk_type_ptr(k, te, RK_AS_GLOBAL), &ro);
    rk_value want = rk_add_param(k, "want", rk_type_ptr(k, te, RK_AS_GLOBAL), &ro);
    rk_value tol = rk_add_param(k, "tol", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), &ro);
    rk_value res = rk_add_param(k, "res", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0), bid = rk_build_block_id(k, 0), bdim = rk_build_block_dim(k, 0);
    rk_value base = rk_build_mul(k, bid, bdim);
    rk_value gid = rk_build_add(k, base, tid);
    rk_value gdim = rk_build_grid_dim(k, 0);
    rk_value stride = rk_build_mul(k, gdim, bdim);
    rk_value zero_f = rk_const_f32(k, 0.0f), inf = rk_const_f32(k, INFINITY);
    rk_value none = c32(k, INT32_MAX), zero = c32(k, 0);
    rk_value inits[3] = {zero_f, none, zero}, it[3], out[3];
    rk_value i = rk_for_begin(k, gid, n, stride, "i", 3, inits, NULL, it);
    rk_value g = rk_load_global(k, got, i, 1), w = rk_load_global(k, want, i, 1);
    if (elem != RK_S_F32) {
        g = rk_build_cast_to_f32(k, g);
        w = rk_build_cast_to_f32(k, w);
    }
    rk_value tl = rk_load_global(k, tol, i, 1);
    /* the host's rule: equal (or both NaN) is 0, a NaN difference infinite */
    rk_value d = rk_build_fabs(k, rk_build_fsub(k, g, w));
    rk_value dnan = rk_build_fcmp(k, "uno", d, d);
    d = rk_build_select(k, dnan, inf, d);
    rk_value eq = rk_build_fcmp(k, "oeq", g, w);
    rk_value gn = rk_build_fcmp(k, "uno", g, g), wn = rk_build_fcmp(k, "uno", w, w);
    rk_value same = rk_build_or(k, eq, rk_build_and(k, gn, wn));
    d = rk_build_select(k, same, zero_f, d);
    rk_value bad = rk_build_fcmp(k, "ogt", d, tl);
    rk_value mx = rk_build_fmax(k, it[0], d);
    rk_value none_yet = rk_build_cmp(k, "eq", it[1], none);
    rk_value first = rk_build_select(k, rk_build_and(k, bad, none_yet), i, it[1]);
    rk_value cnt = rk_build_add(k, it[2], rk_build_zext(k, bad, RK_T_I32));
    rk_value next[3] = {mx, first, cnt};
    rk_for_end(k, next, 3, out);
    /* one wave's three values into its first lane */
    rk_value m = out[0], f = out[1], c = out[2];
    for (uint32_t off = t->wave_size / 2; off; off /= 2) {
        rk_value o = c32(k, (int32_t)off);
        m = rk_build_fmax(k, m, rk_build_shuffle(k, "xor", m, o));
        rk_value of = rk_build_shuffle(k, "xor", f, o);
        f = rk_build_select(k, rk_build_cmp(k, "lt", of, f), of, f);
        c = rk_build_add(k, c, rk_build_shuffle(k, "xor", c, o));
    }
    rk_value one = c32(k, 1), two = c32(k, 2);
    rk_value lane = rk_build_lane_id(k);
    rk_value lane0 = rk_build_cmp(k, "eq", lane, zero);
    rk_value any = rk_build_cmp(k, "gt", c, zero);
    rk_if_begin(k, rk_build_and(k, lane0, any));
    rk_build_global_atomic(k, "add", res, zero, c);
    rk_build_global_atomic(k, "umin", res, one, f);
    rk_if_end(k, NULL, 0);
    /* differences are >= 0, so their bits order as unsigned integers */
    rk_value pos = rk_build_fcmp(k, "ogt", m, zero_f);
    rk_if_begin(k, rk_build_and(k, lane0, pos));
    rk_value bits = rk_build_bitcast(k, m, RK_T_I32);
    rk_build_global_atomic(k, "umax", res, two, bits);
    rk_if_end(k, NULL, 0);
    rk_kernel_set_attr_int(k, "max_workgroup_size", SW_COMPARE_BLOCK);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) {
        rk_fail(RK_ERR_INVALID, "%s: %s", name, rk_builder_error(k));
        rk_kernel_free(k);
        return NULL;
    }
    return k;
}

void sw_compare_grid(uint64_t n, uint32_t grid[3], uint32_t block[3]) {
    uint64_t blocks = (n + SW_COMPARE_BLOCK - 1) / SW_COMPARE_BLOCK;
    grid[0] = (uint32_t)(blocks < 1 ? 1 : blocks > 2048 ? 2048 : blocks);
    grid[1] = grid[2] = 1;
    block[0] = SW_COMPARE_BLOCK;
    block[1] = block[2] = 1;
}
