/* rocke tests — builders shared by the Hopper emulator tests (wgmma, TMA,
 * mbarriers): the ops through their typed builders, an aligned LDS
 * allocation, "thread 0 only" sections. Header-only. Layer: tests. */
#ifndef ROCKE_TESTS_HOPPER_TEST_H
#define ROCKE_TESTS_HOPPER_TEST_H

#include "emu_test.h"

static inline rk_value ht_c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

/* smem<elem, [n]> aligned to align bytes */
static inline rk_value ht_alloc(rk_kernel *k, rk_type elem, uint32_t n, int64_t align) {
    const rk_smem_alloc_opts none = {0}, aligned = {.align = RK_SOME(align)};
    return rk_build_smem_alloc_ex(k, elem, &n, 1, align > 16 ? &aligned : &none);
}

static inline void ht_mbar_init(rk_kernel *k, rk_value bars, int32_t i, rk_value count) {
    rk_value idx = ht_c32(k, i);
    rk_build_mbarrier_init(k, bars, idx, count);
}
static inline void ht_mbar_arrive(rk_kernel *k, rk_value bars, int32_t i) {
    rk_value idx = ht_c32(k, i);
    rk_build_mbarrier_arrive(k, bars, idx);
}
static inline void ht_mbar_expect(rk_kernel *k, rk_value bars, int32_t i, int32_t tx) {
    rk_value idx = ht_c32(k, i), t = ht_c32(k, tx);
    rk_build_mbarrier_arrive_expect_tx(k, bars, idx, t);
}
static inline void ht_mbar_wait(rk_kernel *k, rk_value bars, int32_t i, rk_value parity) {
    rk_value idx = ht_c32(k, i);
    rk_build_mbarrier_wait(k, bars, idx, parity);
}
/* TMA of the box at (x = column, y = row) into dst from element 0 */
static inline void ht_tma(rk_kernel *k, rk_value map, rk_value dst, rk_value bars, int32_t bar, rk_value x, rk_value y) {
    rk_value zero = ht_c32(k, 0), b = ht_c32(k, bar);
    rk_build_tma_load_2d(k, map, dst, zero, bars, b, x, y);
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
    rk_value ix = ht_c32(k, idx);
    const rk_wgmma_desc_opts o = {.swizzle = {sw != 0, sw}};
    return rk_build_wgmma_desc_ex(k, smem, ix, lbo, sbo, &o);
}

static inline rk_value ht_wgmma(rk_kernel *k, rk_value acc, rk_value da, rk_value db, uint32_t n, bool bf16, bool ta,
                                bool tb, bool scale_d) {
    const rk_wgmma_opts o = {.trans_a = {ta, true}, .trans_b = {tb, true}, .scale_d = {!scale_d, false}};
    return rk_build_wgmma_ex(k, bf16 ? "bf16" : "f16", acc, da, db, n, &o);
}

static inline rk_value ht_wgmma_wait(rk_kernel *k, rk_value acc, int64_t n) {
    rk_value out;
    rk_build_wgmma_wait_group(k, n, &acc, 1, &out);
    return out;
}

#endif
