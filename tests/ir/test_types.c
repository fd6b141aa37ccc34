/* rocke tests — the type system: fixed scalar ids, interning of composite
 * types by canonical name, queries, parsing of every canonical form (and of
 * malformed ones), and the op table's class patterns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ir/ir_int.h"

static void test_scalars(void **state) {
    (void)state;
    static const struct { rk_scalar s; const char *name; uint32_t bits; bool i, f, f8; } rows[] = {
        {RK_S_I1, "i1", 1, true, false, false},           {RK_S_I4, "i4", 4, true, false, false},
        {RK_S_I8, "i8", 8, true, false, false},           {RK_S_I16, "i16", 16, true, false, false},
        {RK_S_I32, "i32", 32, true, false, false},        {RK_S_I64, "i64", 64, true, false, false},
        {RK_S_F16, "f16", 16, false, true, false},        {RK_S_BF16, "bf16", 16, false, true, false},
        {RK_S_F32, "f32", 32, false, true, false},        {RK_S_F64, "f64", 64, false, true, false},
        {RK_S_FP8E4M3, "fp8e4m3", 8, false, false, true}, {RK_S_BF8E5M2, "bf8e5m2", 8, false, false, true},
        {RK_S_FP8E4M3FNUZ, "fp8e4m3fnuz", 8, false, false, true},
        {RK_S_BF8E5M2FNUZ, "bf8e5m2fnuz", 8, false, false, true},
    };
    assert_int_equal(RK_COUNTOF(rows), RK_S__COUNT - 1);
    for (size_t i = 0; i < RK_COUNTOF(rows); i++) {
        rk_type t = {rows[i].s};
        assert_string_equal(rk_scalar_name(rows[i].s), rows[i].name);
        assert_string_equal(rk_type_name(NULL, t), rows[i].name);
        assert_int_equal(rk_scalar_bits(rows[i].s), rows[i].bits);
        assert_int_equal(rk_type_bits(NULL, t), rows[i].bits);
        assert_int_equal(rk_scalar_is_int(rows[i].s), rows[i].i);
        assert_int_equal(rk_scalar_is_float(rows[i].s), rows[i].f);
        assert_int_equal(rk_scalar_is_f8(rows[i].s), rows[i].f8);
        assert_true(rk_type_eq(rk_scalar_from_name(rows[i].name), t));
        assert_int_equal(rk_type_scalar(t), rows[i].s);
        assert_int_equal(rk_type_kind_of(NULL, t), RK_TK_SCALAR);
        assert_int_equal(rk_type_count(NULL, t), 1);
    }
    assert_false(rk_type_ok(rk_scalar_from_name("i33")));
    assert_false(rk_type_ok(rk_scalar_from_name("vec<f32x4>")));
    assert_string_equal(rk_type_name(NULL, RK_T_RSRC), "rsrc");
    assert_int_equal(rk_type_kind_of(NULL, RK_T_RSRC), RK_TK_RSRC);
    assert_int_equal(rk_type_bits(NULL, RK_T_RSRC), 128);
    assert_string_equal(rk_type_name(NULL, RK_T_NONE), "<none>");
    assert_int_equal(rk_type_kind_of(NULL, RK_T_NONE), RK_TK_NONE);
    assert_int_equal(rk_type_scalar(RK_T_RSRC), RK_S_NONE);
    static const char *const spaces[] = {"global", "constant", "lds", "private", "flat"};
    for (int a = 0; a < RK_AS__COUNT; a++) assert_string_equal(rk_addrspace_name((rk_addrspace)a), spaces[a]);
}

static void test_interning(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("types");
    rk_type v = rk_type_vec(k, RK_T_F16, 8);
    assert_true(v.id >= RK_TYPE_FIRST_COMPOSITE);
    assert_true(rk_type_eq(v, rk_type_vec(k, RK_T_F16, 8)));
    assert_false(rk_type_eq(v, rk_type_vec(k, RK_T_F16, 4)));
    assert_false(rk_type_eq(v, rk_type_vec(k, RK_T_BF16, 8)));
    assert_string_equal(rk_type_name(k, v), "vec<f16x8>");
    assert_int_equal(rk_type_kind_of(k, v), RK_TK_VEC);
    assert_true(rk_type_eq(rk_type_elem(k, v), RK_T_F16));
    assert_int_equal(rk_type_count(k, v), 8);
    assert_int_equal(rk_type_bits(k, v), 128);
    rk_type p = rk_type_ptr(k, RK_T_F32, RK_AS_LDS);
    assert_string_equal(rk_type_name(k, p), "ptr<f32,lds>");
    assert_true(rk_type_eq(p, rk_type_ptr(k, RK_T_F32, RK_AS_LDS)));
    assert_false(rk_type_eq(p, rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL)));
    assert_int_equal(rk_type_space(k, p), RK_AS_LDS);
    assert_int_equal(rk_type_bits(k, p), 64);
    rk_type pv = rk_type_ptr(k, v, RK_AS_GLOBAL);
    assert_string_equal(rk_type_name(k, pv), "ptr<vec<f16x8>,global>");
    assert_true(rk_type_eq(rk_type_elem(k, pv), v));
    uint32_t dims[] = {128, 32};
    rk_type s = rk_type_smem(k, RK_T_BF16, dims, 2);
    assert_string_equal(rk_type_name(k, s), "smem<bf16, [128x32]>");
    assert_int_equal(rk_type_rank(k, s), 2);
    assert_int_equal(rk_type_dims(k, s)[0], 128);
    assert_int_equal(rk_type_dims(k, s)[1], 32);
    assert_int_equal(rk_type_bits(k, s), 128 * 32 * 16);
    assert_int_equal(rk_type_space(k, s), RK_AS_LDS);
    dims[0] = 7;                                         /* the type keeps its own copy */
    assert_int_equal(rk_type_dims(k, s)[0], 128);
    /* many types: the table grows and keeps identities */
    rk_type many[300];
    for (uint32_t i = 0; i < 300; i++) many[i] = rk_type_vec(k, RK_T_I32, i + 1);
    for (uint32_t i = 0; i < 300; i++) {
        assert_true(rk_type_eq(many[i], rk_type_vec(k, RK_T_I32, i + 1)));
        assert_int_equal(rk_type_count(k, many[i]), i + 1);
    }
    assert_true(rk_type_eq(v, rk_type_vec(k, RK_T_F16, 8)));
    /* types are per kernel: the same name in another kernel is its own id */
    rk_kernel *k2 = rk_kernel_new("other");
    rk_type v2 = rk_type_vec(k2, RK_T_F16, 8);
    assert_string_equal(rk_type_name(k2, v2), "vec<f16x8>");
    rk_kernel_free(k2);
    /* refusals */
    assert_false(rk_type_ok(rk_type_vec(k, RK_T_F16, 0)));
    assert_false(rk_type_ok(rk_type_vec(k, RK_T_F16, 4097)));
    assert_false(rk_type_ok(rk_type_vec(k, v, 2)));                 /* no nested vectors */
    assert_false(rk_type_ok(rk_type_vec(k, RK_T_RSRC, 2)));
    assert_false(rk_type_ok(rk_type_ptr(k, s, RK_AS_GLOBAL)));
    assert_false(rk_type_ok(rk_type_ptr(k, RK_T_F32, RK_AS__COUNT)));
    uint32_t zero[] = {4, 0};
    assert_false(rk_type_ok(rk_type_smem(k, RK_T_F32, zero, 2)));
    assert_false(rk_type_ok(rk_type_smem(k, RK_T_F32, dims, 0)));
    uint32_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_false(rk_type_ok(rk_type_smem(k, RK_T_F32, nine, 9)));
    uint32_t huge[] = {65536, 65536};
    assert_false(rk_type_ok(rk_type_smem(k, RK_T_F32, huge, 2)));
    rk_kernel_free(k);
}

static void test_parse(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("parse");
    /* canonical forms round-trip */
    static const char *const canon[] = {
        "i1", "i4", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "fp8e4m3", "bf8e5m2", "fp8e4m3fnuz",
        "bf8e5m2fnuz", "rsrc", "vec<f32x1>", "vec<f16x8>", "vec<i1x64>", "vec<bf8e5m2fnuzx16>", "vec<i8x4096>",
        "ptr<f16,global>", "ptr<i32,constant>", "ptr<f32,lds>", "ptr<i8,private>", "ptr<f32,flat>",
        "ptr<vec<f16x8>,global>", "smem<f16, [64]>", "smem<f32, [128x32]>", "smem<i8, [2x3x4]>",
        "smem<fp8e4m3, [1x1x1x1x1x1x1x1]>",
    };
    for (size_t i = 0; i < RK_COUNTOF(canon); i++) {
        rk_type t = rk_type_parse(k, canon[i]);
        if (!rk_type_ok(t)) fail_msg("'%s' did not parse: %s", canon[i], rk_error_message());
        assert_string_equal(rk_type_name(k, t), canon[i]);
    }
    /* accepted spellings that normalise */
    static const struct { const char *in, *out; } alt[] = {
        {"vec< f32 x 4 >", "vec<f32x4>"},
        {"ptr<f32, shared>", "ptr<f32,lds>"},
        {"ptr< f16 , global >", "ptr<f16,global>"},
        {"smem<f16,[64x32]>", "smem<f16, [64x32]>"},
        {"smem< f16 , [ 64 x 32 ] >", "smem<f16, [64x32]>"},
    };
    for (size_t i = 0; i < RK_COUNTOF(alt); i++) {
        rk_type t = rk_type_parse(k, alt[i].in);
        if (!rk_type_ok(t)) fail_msg("'%s' did not parse: %s", alt[i].in, rk_error_message());
        assert_string_equal(rk_type_name(k, t), alt[i].out);
    }
    /* malformed */
    static const char *const bad[] = {
        "", "i33", "f8", "I32", "vec<f32>", "vec<f32x0>", "vec<x4>", "vec<f32x4", "vec<f32x4>x", "vec<f32xa>",
        "vec<vec<f32x2>x2>", "vec<f32x4097>", "ptr<f32>", "ptr<f32,heap>", "ptr<f32,global", "ptr<,global>",
        "smem<f16, []>", "smem<f16, [0]>", "smem<f16, [4x]>", "smem<f16 [4]>", "smem<f16, [1x1x1x1x1x1x1x1x1]>",
        "smem<q16, [4]>", "rsrc2", "i32 ", " i32", "vec<rsrcx2>", "ptr<smem<f16, [4]>,global>", "tensor<f32>",
    };
    for (size_t i = 0; i < RK_COUNTOF(bad); i++) {
        rk_type t = rk_type_parse(k, bad[i]);
        if (rk_type_ok(t)) fail_msg("'%s' parsed as %s", bad[i], rk_type_name(k, t));
        assert_true(strlen(rk_error_message()) > 0);
    }
    rk_type_parse(k, "vec<f32>");
    assert_non_null(strstr(rk_error_message(), "malformed type 'vec<f32>'"));
    /* the prefix parser reports how much it used */
    size_t used;
    rk_type t = ir_type_parse_n(k, "vec<f32x4>, i32", 15, &used);
    assert_string_equal(rk_type_name(k, t), "vec<f32x4>");
    assert_int_equal(used, 10);
    rk_kernel_free(k);
}

static bool m(const rk_kernel *k, rk_type t, const char *pat) { return ir_type_matches(k, t, pat, strlen(pat)); }

static void test_classes(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("classes");
    rk_type v4f = rk_type_vec(k, RK_T_F32, 4), v8h = rk_type_vec(k, RK_T_F16, 8), v4i = rk_type_vec(k, RK_T_I32, 4);
    rk_type pg = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), pc = rk_type_ptr(k, RK_T_F32, RK_AS_CONSTANT);
    rk_type pl = rk_type_ptr(k, RK_T_F32, RK_AS_LDS);
    uint32_t d[] = {4};
    rk_type sm = rk_type_smem(k, RK_T_F32, d, 1);
    assert_true(m(k, RK_T_I1, "int"));
    assert_false(m(k, RK_T_I4, "int"));
    assert_false(m(k, RK_T_I1, "sint"));
    assert_true(m(k, RK_T_I8, "sint"));
    assert_true(m(k, RK_T_BF16, "float"));
    assert_false(m(k, RK_T_FP8E4M3, "float"));
    assert_true(m(k, RK_T_F64, "num"));
    assert_true(m(k, RK_T_I64, "num"));
    assert_false(m(k, v4f, "num"));
    assert_true(m(k, RK_T_FP8E4M3FNUZ, "fp8"));
    assert_false(m(k, RK_T_BF8E5M2, "fp8"));
    assert_true(m(k, RK_T_BF8E5M2FNUZ, "bf8"));
    assert_true(m(k, RK_T_BF8E5M2, "f8"));
    assert_true(m(k, RK_T_RSRC, "any"));
    assert_true(m(k, sm, "smem"));
    assert_true(m(k, RK_T_RSRC, "rsrc"));
    assert_true(m(k, pg, "gptr") && m(k, pc, "gptr"));
    assert_false(m(k, pl, "gptr"));
    assert_true(m(k, pl, "ptr"));
    assert_true(m(k, RK_T_F16, "f16|bf16"));
    assert_false(m(k, RK_T_F32, "f16|bf16"));
    assert_true(m(k, RK_T_I32, "i32"));
    assert_false(m(k, RK_T_I64, "i32"));
    assert_true(m(k, v4f, "vec"));
    assert_true(m(k, v4f, "vec<f32x4>"));
    assert_false(m(k, v4f, "vec<f32x8>"));
    assert_true(m(k, v4f, "vec<float x*>"));
    assert_true(m(k, v8h, "vec<f16|bf16 x*>"));
    assert_true(m(k, v8h, "vec<f16|bf16 x8>"));
    assert_false(m(k, v8h, "vec<f16|bf16 x4>"));
    assert_false(m(k, v4i, "vec<float x*>"));
    assert_true(m(k, v4i, "vec<int x*>"));
    assert_true(m(k, v4i, "i32|vec<int x*>"));
    assert_false(m(k, RK_T_F32, "vec<num x*>"));
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_interning),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
