/* rocke tests — tile.setmaxnreg on the emulator: the warp-specialized
 * pattern (producer warpgroup dec, consumer warpgroups inc) runs and leaves
 * values alone; each PTX ISA rule the emulator checks has a planted breach
 * with the message it must give. Layer: tests. */
#include "hopper_test.h"

typedef enum plant {
    P_NONE,        /* warpgroup 0 dec 40, the others inc 232 */
    P_PARTIAL,     /* warpgroup 0 issues it from half of each warp's lanes */
    P_SPLIT,       /* warp 0 and warps 1..3 of warpgroup 0 run different ones */
    P_LOWER_INC,   /* warpgroup 0: dec 40, then inc 32 */
    P_POOL,        /* every warpgroup inc 240 */
} plant;

static void dec_or_inc(rk_kernel *k, rk_value cond, const char *then_act, int64_t then_regs, const char *else_act,
                       int64_t else_regs) {
    rk_if_begin(k, cond);
    rk_build_setmaxnreg(k, then_act, then_regs);
    rk_else(k, NULL, 0);
    rk_build_setmaxnreg(k, else_act, else_regs);
    rk_if_end(k, NULL, 0);
}

/* out[t] = 2 in[t] after the plant's setmaxnreg pattern, `block` threads. */
static rk_status run(plant p, uint32_t block, float *out, const float *in) {
    rk_kernel *k = rk_kernel_new("setmaxnreg");
    rk_kernel_set_attr_int(k, "max_workgroup_size", block);
    rk_value In = rk_add_param(k, "in", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value Out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value c7 = ht_c32(k, 7), c5 = ht_c32(k, 5), c31 = ht_c32(k, 31), c16 = ht_c32(k, 16), zero = ht_c32(k, 0);
    rk_value wg = rk_build_lshr(k, t, c7);
    rk_value producer = rk_build_cmp(k, "eq", wg, zero);
    if (p == P_POOL) {
        rk_build_setmaxnreg(k, "inc", 240);
    } else if (p == P_PARTIAL) {
        rk_value lane = rk_build_and(k, t, c31);
        rk_value lo = rk_build_cmp(k, "lt", lane, c16);
        rk_value both = rk_build_and(k, producer, lo);
        rk_if_begin(k, both);
        rk_build_setmaxnreg(k, "dec", 40);
        rk_if_end(k, NULL, 0);
    } else if (p == P_SPLIT) {
        rk_value warp = rk_build_lshr(k, t, c5);
        rk_value w0 = rk_build_cmp(k, "eq", warp, zero);
        rk_value c4 = ht_c32(k, 4);
        rk_value first_wg = rk_build_cmp(k, "lt", warp, c4);
        rk_if_begin(k, first_wg);
        dec_or_inc(k, w0, "dec", 40, "dec", 48);
        rk_if_end(k, NULL, 0);
    } else {
        dec_or_inc(k, producer, "dec", 40, "inc", 232);
        if (p == P_LOWER_INC) {
            rk_if_begin(k, producer);
            rk_build_setmaxnreg(k, "inc", 32);
            rk_if_end(k, NULL, 0);
        }
    }
    rk_value x = rk_load_global(k, In, t, 1);
    rk_value two = rk_const_float(k, RK_T_F32, 2.0);
    rk_value y = rk_build_fmul(k, x, two);
    rk_store_global(k, Out, t, y);
    rk_build_return(k);
    et_finish(k);
    rk_emu *e = et_emu("sm_90a", 1);
    uint64_t ai = et_buf(e, (void *)in, block * sizeof(float), "in");
    uint64_t ao = et_buf(e, out, block * sizeof(float), "out");
    void *args[] = {&ai, &ao};
    rk_status st = et_launch(e, k, 1, 1, 1, block, 1, 1, args);
    rk_emu_free(e);
    rk_kernel_free(k);
    return st;
}

static void t_specialized(void **state) {
    (void)state;
    float in[384], out[384];
    for (uint32_t i = 0; i < 384; i++) in[i] = et_unit(), out[i] = 0.0f;
    assert_int_equal(run(P_NONE, 384, out, in), RK_OK);
    for (uint32_t i = 0; i < 384; i++)
        if (out[i] != 2.0f * in[i]) fail_msg("out[%u] = %g, want %g", i, (double)out[i], 2.0 * in[i]);
}

static void t_rules(void **state) {
    (void)state;
    float in[384] = {0}, out[384];
    et_expect_error(run(P_PARTIAL, 384, out, in), RK_ERR_DEVICE, "every lane of the warp", NULL);
    et_expect_error(run(P_NONE, 320, out, in), RK_ERR_DEVICE, "warpgroup of 4 warps", "block of 320 threads", NULL);
    et_expect_error(run(P_SPLIT, 384, out, in), RK_ERR_DEVICE, "different tile.setmaxnreg ops", "same one", NULL);
    et_expect_error(run(P_LOWER_INC, 384, out, in), RK_ERR_DEVICE, "setmaxnreg.inc to 32", "already 40", NULL);
    et_expect_error(run(P_POOL, 384, out, in), RK_ERR_DEVICE, "92160 registers", "wait forever", NULL);
    /* 256 threads at 240: 61440 registers fit */
    assert_int_equal(run(P_POOL, 256, out, in), RK_OK);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_specialized),
        cmocka_unit_test(t_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
