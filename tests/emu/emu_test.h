/* rocke tests — helpers shared by the emulator tests: a seeded generator
 * (seed printed, ROCKE_SEED to replay), emulators per target, registered
 * host buffers, one-op kernels over element arrays, and launches.
 * Header-only: each tests/emu/test_*.c is its own executable. Layer: tests. */
#ifndef ROCKE_TESTS_EMU_TEST_H
#define ROCKE_TESTS_EMU_TEST_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "base/fp.h"
#include "base/fp8.h"

/* ---- random numbers ------------------------------------------------------------------- */
static uint64_t et_state __attribute__((unused));
static inline void et_seed(void) {
    const char *s = getenv("ROCKE_SEED");
    et_state = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    if (!et_state) et_state = 1;
    printf("seed %llu (ROCKE_SEED=%llu to replay)\n", (unsigned long long)et_state, (unsigned long long)et_state);
}
static inline uint64_t et_rand(void) {
    et_state ^= et_state << 13;
    et_state ^= et_state >> 7;
    et_state ^= et_state << 17;
    return et_state;
}
static inline float et_unit(void) { return (float)((double)(et_rand() >> 11) * 0x1p-53 * 2.0 - 1.0); }   /* [-1, 1) */

/* ---- emulators and buffers ------------------------------------------------------------------ */
static inline rk_emu *et_emu(const char *target, uint32_t threads) {
    rk_emu_options o = rk_emu_options_default();
    o.threads = threads;
    rk_emu *e = rk_emu_new(rk_target_find(target), &o);
    assert_non_null(e);
    return e;
}

static inline uint64_t et_buf(rk_emu *e, void *host, size_t bytes, const char *name) {
    uint64_t a = 0;
    assert_int_equal(rk_emu_register(e, host, bytes, name, &a), RK_OK);
    return a;
}

static inline rk_status et_launch(rk_emu *e, const rk_kernel *k, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx,
                           uint32_t by, uint32_t bz, void **args) {
    const uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return rk_emu_launch(e, k, grid, block, 0, (void *const *)args);
}

static inline void et_finish(rk_kernel *k) {
    rk_status st = rk_kernel_finish(k);
    if (st) printf("build failed: %s\n", rk_error_message());
    assert_int_equal(st, RK_OK);
}

/* Expect a failed launch whose message contains every fragment (NULL-ended). */
static inline void et_expect_error(rk_status st, rk_status want, ...) {
    if (st != want) printf("status %s, wanted %s: %s\n", rk_status_name(st), rk_status_name(want), rk_error_message());
    assert_int_equal(st, want);
    va_list ap;
    va_start(ap, want);
    for (const char *f = va_arg(ap, const char *); f; f = va_arg(ap, const char *)) {
        if (!strstr(rk_error_message(), f)) printf("message lacks '%s': %s\n", f, rk_error_message());
        assert_non_null(strstr(rk_error_message(), f));
    }
    va_end(ap);
}

/* ---- kernels ----------------------------------------------------------------------------- */
/* The global index bid.x * bdim.x + tid.x and the guard i < n. */
static inline rk_value et_gid(rk_kernel *k) {
    rk_value t = rk_build_thread_id(k, 0), b = rk_build_block_id(k, 0), d = rk_build_block_dim(k, 0);
    rk_value m = rk_build_mul(k, b, d);
    return rk_build_add(k, m, t);
}

static inline rk_value et_ptr_param(rk_kernel *k, const char *name, rk_type elem) {
    return rk_add_param(k, name, rk_type_ptr(k, elem, RK_AS_GLOBAL), NULL);
}

/* One-op kernel over arrays: out[i] = op(in0[i], in1[i], ...) for i < n, each
 * operand and the result a scalar or vector type (vectors move as whole
 * elements: index i * count); i1 operands travel as i8 (truncated after the
 * load) and i1 results as i8 (zero-extended). attrs(k, op, ud) may set
 * attributes. Parameters in0 .. in<nin-1>, out, n. k is a fresh kernel the
 * caller made (types are interned in it). */
typedef void (*et_attr_fn)(rk_kernel *k, rk_op *op, void *ud);
static inline rk_type et_mem_type(rk_kernel *k, rk_type t) {
    bool v = rk_type_kind_of(k, t) == RK_TK_VEC;
    rk_type e = v ? rk_type_elem(k, t) : t;
    if (!rk_type_eq(e, RK_T_I1)) return t;
    return v ? rk_type_vec(k, RK_T_I8, rk_type_count(k, t)) : RK_T_I8;
}
static inline rk_kernel *et_op_kernel(rk_opcode code, const rk_type *in_t, uint32_t nin, rk_type out_t,
                                      et_attr_fn attrs, void *ud, rk_kernel *k) {
    rk_value p[8], in[8];
    char name[16];
    for (uint32_t j = 0; j < nin; j++) {
        rk_type t = et_mem_type(k, in_t[j]);
        snprintf(name, sizeof name, "in%u", j);
        p[j] = et_ptr_param(k, name, rk_type_kind_of(k, t) == RK_TK_VEC ? rk_type_elem(k, t) : t);
    }
    rk_type omt = et_mem_type(k, out_t);
    rk_value out = et_ptr_param(k, "out", rk_type_kind_of(k, omt) == RK_TK_VEC ? rk_type_elem(k, omt) : omt);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value i = et_gid(k);
    rk_value ok = rk_build_cmp(k, "lt", i, n);
    rk_if_begin(k, ok);
    for (uint32_t j = 0; j < nin; j++) {
        uint32_t c = rk_type_kind_of(k, in_t[j]) == RK_TK_VEC ? rk_type_count(k, in_t[j]) : 1;
        rk_value cv = rk_const_i32(k, (int32_t)c);
        rk_value ij = c > 1 ? rk_build_mul(k, i, cv) : i;
        in[j] = rk_load_global(k, p[j], ij, c);
        if (!rk_type_eq(et_mem_type(k, in_t[j]), in_t[j]))
            in[j] = rk_emit_convert(k, c > 1 ? RK_OP_VTRUNC : RK_OP_TRUNC, in[j], in_t[j]);
    }
    /* generic over the opcode the table row names (one harness for many ops): raw emission, then the
     * table's own check; typed builders take no opcode */
    rk_op *op = rk_emit(k, code, in, nin, &out_t, 1);
    if (attrs) attrs(k, op, ud);
    rk_op_check(k, op);
    rk_value r = rk_op_result(op);
    uint32_t oc = rk_type_kind_of(k, out_t) == RK_TK_VEC ? rk_type_count(k, out_t) : 1;
    if (!rk_type_eq(omt, out_t)) r = rk_emit_convert(k, oc > 1 ? RK_OP_VZEXT : RK_OP_ZEXT, r, omt);
    rk_value ocv = rk_const_i32(k, (int32_t)oc);
    rk_value oi = oc > 1 ? rk_build_mul(k, i, ocv) : i;
    rk_store_global(k, out, oi, r);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    return k;
}

/* Run an et_op_kernel over n elements: ins[j] host arrays, out host array. */
static inline rk_status et_run_op(rk_emu *e, rk_kernel *k, void **ins, const size_t *in_bytes, uint32_t nin, void *out,
                           size_t out_bytes, int32_t n) {
    uint64_t a[9];
    void *args[10];
    for (uint32_t j = 0; j < nin; j++) {
        a[j] = et_buf(e, ins[j], in_bytes[j], NULL);
        args[j] = &a[j];
    }
    a[nin] = et_buf(e, out, out_bytes, "out");
    args[nin] = &a[nin];
    args[nin + 1] = &n;
    rk_status st = et_launch(e, k, (uint32_t)(n + 127) / 128, 1, 1, 128, 1, 1, args);
    for (uint32_t j = 0; j <= nin; j++) rk_emu_release(e, a[j]);
    return st;
}

/* Bit-identical floats (any NaN equals any NaN). */
static inline bool et_same_f32(float a, float b) {
    if (isnan(a) && isnan(b)) return true;
    return rk_f32_bits(a) == rk_f32_bits(b);
}

#endif
