/* rocke tests — builders shared by the Hopper emulator tests (wgmma, TMA,
 * mbarriers): ops emitted generically with their attributes, an aligned LDS
 * allocation, "thread 0 only" sections. Header-only. Layer: tests. */
#ifndef ROCKE_TESTS_HOPPER_TEST_H
#define ROCKE_TESTS_HOPPER_TEST_H

#include "emu_test.h"

static inline rk_value ht_c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

/* smem<elem, [n]> aligned to align bytes */
static inline rk_value ht_alloc(rk_kernel *k, rk_type elem, uint32_t n, int64_t align) {
    rk_value a = rk_build_smem_alloc(k, elem, &n, 1);
    rk_op *op = rk_value_def(k, a);
    if (op && align > 16) rk_op_set_int(k, op, "align", align);
    return a;
}

/* An op without results, checked. */
static inline rk_op *ht_emit0(rk_kernel *k, rk_opcode code, const rk_value *in, uint32_t nin) {
    rk_op *op = rk_emit(k, code, in, nin, NULL, 0);
    if (op) rk_op_check(k, op);
    return op;
}

static inline void ht_mbar_init(rk_kernel *k, rk_value bars, int32_t i, rk_value count) {
    rk_value in[3] = {bars, ht_c32(k, i), count};
    ht_emit0(k, RK_OP_MBARRIER_INIT, in, 3);
}
static inline void ht_mbar_arrive(rk_kernel *k, rk_value bars, int32_t i) {
    rk_value in[2] = {bars, ht_c32(k, i)};
    ht_emit0(k, RK_OP_MBARRIER_ARRIVE, in, 2);
}
static inline void ht_mbar_expect(rk_kernel *k, rk_value bars, int32_t i, int32_t tx) {
    rk_value idx = ht_c32(k, i), t = ht_c32(k, tx);
    rk_value in[3] = {bars, idx, t};
    ht_emit0(k, RK_OP_MBARRIER_ARRIVE_EXPECT_TX, in, 3);
}
static inline void ht_mbar_wait(rk_kernel *k, rk_value bars, int32_t i, rk_value parity) {
    rk_value in[3] = {bars, ht_c32(k, i), parity};
    ht_emit0(k, RK_OP_MBARRIER_WAIT, in, 3);
}
/* TMA of the box at (x = column, y = row) into dst from element 0 */
static inline void ht_tma(rk_kernel *k, rk_value map, rk_value dst, rk_value bars, int32_t bar, rk_value x, rk_value y) {
    rk_value zero = ht_c32(k, 0), b = ht_c32(k, bar);
    rk_value in[7] = {map, dst, zero, bars, b, x, y};
    ht_emit0(k, RK_OP_TMA_LOAD_2D, in, 7);
}
static inline rk_value ht_tensormap_param(rk_kernel *k, const char *name) {
    rk_param_abi tm = {.tensormap = true};
    return rk_add_param(k, name, rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), &tm);
}

/* if (thread_id.x == 0) { ... } */
static inline void ht_thread0_begin(rk_kernel *k) {
    rk_value t = rk_build_thread_id(k, 0), zero = ht_c32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", t, zero);
    rk_if_begin(k, first);
}

static inline rk_value ht_wgmma_desc(rk_kernel *k, rk_value smem, int32_t idx, int64_t lbo, int64_t sbo, int64_t sw) {
    rk_type i64 = RK_T_I64;
    rk_value in[2] = {smem, ht_c32(k, idx)};
    rk_op *op = rk_emit(k, RK_OP_WGMMA_DESC, in, 2, &i64, 1);
    rk_op_set_int(k, op, "lbo", lbo);
    rk_op_set_int(k, op, "sbo", sbo);
    if (sw) rk_op_set_int(k, op, "swizzle", sw);
    rk_op_check(k, op);
    return rk_op_result(op);
}

static inline rk_value ht_wgmma(rk_kernel *k, rk_value acc, rk_value da, rk_value db, uint32_t n, bool bf16, bool ta,
                                bool tb, bool scale_d) {
    rk_type t = rk_value_type(k, acc);
    rk_value in[3] = {acc, da, db};
    rk_op *op = rk_emit(k, RK_OP_WGMMA, in, 3, &t, 1);
    rk_op_set_int(k, op, "n", n);
    rk_op_set_str(k, op, "dtype", bf16 ? "bf16" : "f16");
    if (ta) rk_op_set_bool(k, op, "trans_a", true);
    if (tb) rk_op_set_bool(k, op, "trans_b", true);
    if (!scale_d) rk_op_set_bool(k, op, "scale_d", false);
    rk_op_check(k, op);
    return rk_op_result(op);
}

static inline rk_value ht_wgmma_wait(rk_kernel *k, rk_value acc, int64_t n) {
    rk_type t = rk_value_type(k, acc);
    rk_op *op = rk_emit(k, RK_OP_WGMMA_WAIT_GROUP, &acc, 1, &t, 1);
    rk_op_set_int(k, op, "n", n);
    rk_op_check(k, op);
    return rk_op_result(op);
}

#endif
