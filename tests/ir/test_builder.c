/* rocke tests — the checked builder: every op family built the valid way
 * (types, SSA names, attributes), then a table of invalid uses, each with
 * the message it must leave; the sticky error; regions left open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ir/ir_int.h"

typedef struct fx {
    rk_kernel *k;
    rk_value x, y, f, pi, pf, ph;
} fx;

static fx fixture(void) {
    fx s;
    s.k = rk_kernel_new("b");
    assert_non_null(s.k);
    s.x = rk_add_param(s.k, "x", RK_T_I32, NULL);
    s.y = rk_add_param(s.k, "y", RK_T_I32, NULL);
    s.f = rk_add_param(s.k, "f", RK_T_F32, NULL);
    rk_param_abi abi = {.noalias = true, .align = 16};
    s.pi = rk_add_param(s.k, "pi", rk_type_ptr(s.k, RK_T_I32, RK_AS_GLOBAL), &abi);
    s.pf = rk_add_param(s.k, "pf", rk_type_ptr(s.k, RK_T_F32, RK_AS_GLOBAL), NULL);
    s.ph = rk_add_param(s.k, "ph", rk_type_ptr(s.k, RK_T_F16, RK_AS_GLOBAL), NULL);
    return s;
}

static const char *nm(const rk_kernel *k, rk_value v) {
    static char buf[4][RK_NAME_MAX];
    static int i;
    i = (i + 1) % 4;
    return rk_value_name(k, v, buf[i]);
}

static void assert_type(const rk_kernel *k, rk_value v, const char *t) {
    assert_true(rk_value_ok(v));
    assert_string_equal(rk_type_name(k, rk_value_type(k, v)), t);
}

static void finish_and_verify(rk_kernel *k) {
    if (rk_kernel_finish(k) != RK_OK) fail_msg("builder: %s", rk_builder_error(k));
    rk_diags d;
    rk_diags_init(&d);
    rk_status st = rk_verify(k, NULL, &d);
    if (st != RK_OK || d.n) {
        char *t = rk_diags_text(&d);
        fprintf(stderr, "%s", t);
        rk_string_free(t);
    }
    assert_int_equal(st, RK_OK);
    rk_diags_free(&d);
}

/* ---- valid uses, family by family ------------------------------------------------------- */
static void test_scalar_families(void **state) {
    (void)state;
    fx s = fixture();
    rk_kernel *k = s.k;
    rk_value c = rk_const_i32(k, 5);
    assert_string_equal(nm(k, c), "c1");
    rk_value a = rk_build_add(k, s.x, c);
    assert_string_equal(nm(k, a), "add2");
    assert_type(k, a, "i32");
    assert_string_equal(nm(k, s.x), "x");
    assert_int_equal(rk_value_kind_of(k, s.x), RK_VK_PARAM);
    assert_int_equal(rk_value_kind_of(k, a), RK_VK_RESULT);
    assert_int_equal(rk_value_def(k, a)->code, RK_OP_ADD);
    assert_null(rk_value_def(k, s.x));
    rk_value all[] = {
        rk_build_sub(k, a, s.y), rk_build_mul(k, a, s.y), rk_build_div(k, a, s.y), rk_build_mod(k, a, s.y),
        rk_build_udiv(k, a, s.y), rk_build_umod(k, a, s.y), rk_build_and(k, a, s.y), rk_build_or(k, a, s.y),
        rk_build_xor(k, a, s.y), rk_build_not(k, a), rk_build_shl(k, a, s.y), rk_build_lshr(k, a, s.y),
        rk_build_ashr(k, a, s.y), rk_build_smax(k, a, s.y), rk_build_smin(k, a, s.y), rk_build_umax(k, a, s.y),
        rk_build_umin(k, a, s.y), rk_build_umul_hi_i32(k, a, s.y),
    };
    for (size_t i = 0; i < RK_COUNTOF(all); i++) assert_type(k, all[i], "i32");
    rk_value cmp = rk_build_cmp(k, "ult", a, s.y);
    assert_type(k, cmp, "i1");
    assert_string_equal(rk_attrs_str(&rk_value_def(k, cmp)->attrs, "pred"), "ult");
    rk_value sel = rk_build_select(k, cmp, a, s.y);
    assert_type(k, sel, "i32");
    assert_string_equal(nm(k, sel), "sel22");
    assert_type(k, rk_build_sext(k, sel, RK_T_I64), "i64");
    assert_type(k, rk_build_zext(k, cmp, RK_T_I32), "i32");
    assert_type(k, rk_build_trunc(k, sel, RK_T_I8), "i8");
    assert_type(k, rk_build_bitcast(k, s.f, RK_T_I32), "i32");

    /* floats and math */
    rk_value h = rk_const_float(k, RK_T_F32, 0.1);
    double hv;
    assert_true(rk_attrs_num(&rk_value_def(k, h)->attrs, "value", &hv));
    assert_true(hv == (double)0.1f);                         /* rounded to the type */
    rk_value g = rk_build_fadd(k, s.f, h);
    rk_value fl[] = {rk_build_fsub(k, g, h), rk_build_fmul(k, g, h), rk_build_fdiv(k, g, h), rk_build_fneg(k, g),
                     rk_build_fabs(k, g), rk_build_fma(k, g, h, s.f), rk_build_fmax(k, g, h), rk_build_fmin3(k, g, h, s.f),
                     rk_build_exp2(k, g), rk_build_log2(k, g), rk_build_sqrt(k, g), rk_build_rsqrt(k, g),
                     rk_build_rcp(k, g), rk_build_tanh(k, g), rk_build_sin(k, g)};
    for (size_t i = 0; i < RK_COUNTOF(fl); i++) assert_type(k, fl[i], "f32");
    assert_type(k, rk_build_fcmp(k, "uno", g, h), "i1");
    assert_type(k, rk_build_fptosi(k, g, RK_T_I32), "i32");
    assert_type(k, rk_build_sitofp(k, s.x, RK_T_F64), "f64");
    assert_type(k, rk_build_fpext(k, g, RK_T_F64), "f64");
    rk_value hf = rk_build_cast_f32_to(k, g, RK_T_BF16);
    assert_type(k, hf, "bf16");
    assert_string_equal(rk_attrs_str(&rk_value_def(k, hf)->attrs, "target"), "bf16");
    assert_type(k, rk_build_cast_to_f32(k, hf), "f32");
    assert_type(k, rk_build_cvt_f32_to_fp8(k, g, RK_T_FP8E4M3FNUZ), "fp8e4m3fnuz");
    assert_type(k, rk_const_bool(k, true), "i1");
    assert_type(k, rk_const_i64(k, -1), "i64");
    assert_type(k, rk_const_int(k, RK_T_I8, 255), "i8");                 /* unsigned spelling fits */
    rk_set_loc(k, "here.c:12");
    rk_value located = rk_build_add(k, s.x, s.y);
    assert_string_equal(rk_value_def(k, located)->loc, "here.c:12");
    rk_set_loc(k, NULL);
    rk_value_set_hint(k, located, "sum");
    assert_true(strncmp(nm(k, located), "sum", 3) == 0);
    finish_and_verify(k);
    rk_kernel_free(k);
}

static void test_vector_and_identity_families(void **state) {
    (void)state;
    fx s = fixture();
    rk_kernel *k = s.k;
    rk_value v = rk_build_vsplat(k, s.f, 4);
    assert_type(k, v, "vec<f32x4>");
    assert_type(k, rk_build_constant_vec(k, rk_type_vec(k, RK_T_I32, 8), 0), "vec<i32x8>");
    rk_value w = rk_build_vadd(k, v, v);
    assert_type(k, w, "vec<f32x4>");
    assert_type(k, rk_build_vfma(k, w, v, w), "vec<f32x4>");
    assert_type(k, rk_build_vsum(k, w), "f32");
    assert_type(k, rk_build_vreduce_max(k, w), "f32");
    rk_value m = rk_build_vfcmp(k, "olt", v, w);
    assert_type(k, m, "vec<i1x4>");
    assert_int_equal(rk_value_def(k, m)->code, RK_OP_VFCMP);
    assert_type(k, rk_build_vselect(k, m, v, w), "vec<f32x4>");
    assert_type(k, rk_build_vextract(k, w, 3), "f32");
    assert_type(k, rk_build_vinsert(k, w, s.f, 0), "vec<f32x4>");
    const rk_value es[] = {s.x, s.y, s.x};
    rk_value p3 = rk_build_vpack(k, es, 3);
    assert_type(k, p3, "vec<i32x3>");
    assert_type(k, rk_build_vconcat(k, p3, p3), "vec<i32x6>");
    const int32_t mask[] = {0, 7, -1, 2};
    assert_type(k, rk_build_vshuffle(k, w, v, mask, 4), "vec<f32x4>");
    assert_type(k, rk_build_vtrunc_f32_to(k, w, rk_type_vec(k, RK_T_F16, 4)), "vec<f16x4>");
    assert_type(k, rk_build_vbitcast(k, w, rk_type_vec(k, RK_T_I64, 2)), "vec<i64x2>");
    rk_value t = rk_build_thread_id(k, 1);
    assert_string_equal(nm(k, t), "tid16");
    assert_string_equal(rk_attrs_str(&rk_value_def(k, t)->attrs, "axis"), "y");
    assert_type(k, rk_build_block_id(k, 2), "i32");
    assert_type(k, rk_build_block_dim(k, 0), "i32");
    assert_type(k, rk_build_grid_dim(k, 0), "i32");
    assert_type(k, rk_build_lane_id(k), "i32");
    assert_type(k, rk_build_shuffle(k, "down", s.f, s.x), "f32");
    assert_type(k, rk_build_wave_ballot(k, s.x), "i64");
    assert_type(k, rk_build_readfirstlane(k, s.x), "i32");
    finish_and_verify(k);
    rk_kernel_free(k);
}

static void test_memory_families(void **state) {
    (void)state;
    fx s = fixture();
    rk_kernel *k = s.k;
    rk_value i = rk_build_thread_id(k, 0);
    rk_value l = rk_load_global(k, s.pf, i, 1);
    assert_type(k, l, "f32");
    assert_string_equal(nm(k, l), "gl2");
    rk_value l4 = rk_load_global(k, s.pf, i, 4);
    assert_type(k, l4, "vec<f32x4>");
    int64_t al;
    assert_true(rk_attrs_int(&rk_value_def(k, l4)->attrs, "align", &al));
    assert_int_equal(al, 16);
    rk_store_global(k, s.pf, i, l);
    rk_store_global(k, s.pf, i, l4);
    rk_value off = rk_const_i64(k, 64);
    assert_type(k, rk_build_global_ptr_add(k, s.pf, off), "ptr<f32,global>");
    uint32_t dims[] = {16, 16};
    rk_value sm = rk_build_smem_alloc(k, RK_T_F16, dims, 2);
    assert_type(k, sm, "smem<f16, [16x16]>");
    const rk_value ix[] = {i, i};
    rk_value h = rk_load_global(k, s.ph, i, 1);
    rk_store_smem(k, sm, ix, h);
    rk_build_sync(k);
    assert_type(k, rk_load_smem(k, sm, ix, 1), "f16");
    assert_type(k, rk_load_smem(k, sm, ix, 8), "vec<f16x8>");
    rk_value n = rk_const_i32(k, 1024);
    rk_value r = rk_build_buffer_rsrc(k, s.pf, n);
    assert_type(k, r, "rsrc");
    rk_value z = rk_const_i32(k, 0);
    assert_type(k, rk_load_buffer(k, r, i, z, RK_T_F32, 1), "f32");
    rk_value b4 = rk_load_buffer(k, r, i, z, RK_T_F32, 4);
    assert_type(k, b4, "vec<f32x4>");
    assert_true(rk_attrs_int(&rk_value_def(k, b4)->attrs, "dwords", &al));
    assert_int_equal(al, 4);
    rk_store_buffer(k, r, i, z, b4);
    uint32_t d1[] = {256};
    rk_value lds = rk_build_smem_alloc(k, RK_T_F32, d1, 1);
    rk_value ok = rk_const_bool(k, true);
    rk_build_async_copy(k, s.pf, i, lds, i, ok, 16);
    rk_build_async_commit_group(k);
    rk_build_async_wait_group(k, 1);
    rk_build_s_waitcnt(k, 0, -1, -1);
    rk_build_sync_lds_only(k);
    assert_type(k, rk_build_global_atomic(k, "add", s.pi, i, s.x), "i32");
    assert_type(k, rk_build_global_atomic(k, "fadd", s.pf, i, l), "f32");
    assert_type(k, rk_build_global_atomic_cas(k, s.pi, i, s.x, s.y), "i32");
    rk_value ha = rk_load_global(k, s.ph, i, 4);
    rk_value cc = rk_build_constant_vec(k, rk_type_vec(k, RK_T_F32, 4), 0);
    rk_value acc = rk_build_mma(k, "mfma_f32_16x16x16_f16", ha, ha, cc);
    assert_type(k, acc, "vec<f32x4>");
    assert_true(strncmp(nm(k, acc), "acc", 3) == 0);
    rk_type two[] = {RK_T_I32, RK_T_I32};
    rk_op *as = rk_build_inline_asm(k, "s_nop 0", "=v,=v,v", &s.x, 1, two, 2, true);
    assert_non_null(as);
    assert_int_equal(as->nout, 2);
    finish_and_verify(k);
    rk_kernel_free(k);
}

static void test_control_flow(void **state) {
    (void)state;
    fx s = fixture();
    rk_kernel *k = s.k;
    rk_value lo = rk_const_i32(k, 0), hi = rk_const_i32(k, 10), st = rk_const_i32(k, 2);
    rk_value inits[] = {s.x, s.f}, iter[2], res[2];
    const char *names[] = {"ai", "af"};
    rk_value iv = rk_for_begin(k, lo, hi, st, "kk", 2, inits, names, iter);
    assert_string_equal(nm(k, iv), "kk");
    assert_string_equal(nm(k, iter[0]), "ai");
    assert_int_equal(rk_value_kind_of(k, iv), RK_VK_REGION_ARG);
    rk_value a2 = rk_build_add(k, iter[0], iv);
    rk_value c = rk_build_cmp(k, "gt", a2, s.y);
    rk_if_begin(k, c);
    rk_store_global(k, s.pi, iv, a2);
    rk_if_end(k, NULL, 0);
    rk_value r;
    rk_type ft = RK_T_F32;
    rk_if_else_begin(k, c, 1, &ft, &r);
    rk_value t = rk_build_fadd(k, iter[1], s.f);
    rk_else(k, &t, 1);
    rk_if_end(k, &iter[1], 1);
    rk_for_set_unroll(k, true);
    const rk_value ys[] = {a2, r};
    rk_for_end(k, ys, 2, res);
    assert_type(k, res[0], "i32");
    assert_type(k, res[1], "f32");
    assert_true(strncmp(nm(k, res[0]), "for", 3) == 0);
    /* an if that gains an else without results becomes scf.if_else */
    rk_value c2 = rk_build_cmp(k, "gt", res[0], s.y);
    rk_if_begin(k, c2);
    rk_else(k, NULL, 0);
    rk_build_sync(k);
    rk_if_end(k, NULL, 0);
    rk_store_global(k, s.pi, lo, res[0]);
    rk_build_return(k);

    const rk_region *b = rk_kernel_body(k);
    const rk_op *f = b->ops[3];
    assert_int_equal(f->code, RK_OP_FOR);
    assert_string_equal(rk_attrs_str(&f->attrs, "iv"), "%kk");
    assert_string_equal(rk_attrs_str(&f->attrs, "iv_type"), "i32");
    int64_t n;
    assert_true(rk_attrs_int(&f->attrs, "num_iter_args", &n));
    assert_int_equal(n, 2);
    assert_true(rk_attrs_bool(&f->attrs, "unroll", false));
    assert_string_equal(f->regions[0].label, "body");
    assert_int_equal(f->regions[0].ops[f->regions[0].nops - 1]->code, RK_OP_YIELD);
    assert_int_equal(rk_builder_status(k), RK_OK);
    assert_int_equal(b->nops, 8);
    assert_int_equal(b->ops[5]->code, RK_OP_IF_ELSE);
    assert_int_equal(b->ops[5]->nreg, 2);
    assert_string_equal(b->ops[5]->regions[1].label, "else");
    assert_int_equal(b->ops[b->nops - 1]->code, RK_OP_RETURN);
    assert_int_equal(rk_kernel_op_count(k), 18);
    finish_and_verify(k);
    rk_kernel_free(k);
}

/* ---- invalid uses ---------------------------------------------------------------------------- */
typedef void (*bad_fn)(fx *s);

static void b_wrong_type(fx *s) { rk_build_add(s->k, s->x, s->f); }
static void b_missing_attr(fx *s) {
    const rk_value in[] = {s->x, s->y};
    rk_type t = RK_T_I1;
    rk_op_check(s->k, rk_emit(s->k, RK_OP_CMP, in, 2, &t, 1));
}
static void b_attr_range(fx *s) { rk_build_s_waitcnt(s->k, 64, 0, 0); }
static void b_attr_enum(fx *s) { rk_build_cmp(s->k, "less", s->x, s->y); }
static void b_attr_kind(fx *s) {
    rk_type t = RK_T_I32;
    rk_op *op = rk_emit(s->k, RK_OP_VEXTRACT, &s->x, 1, &t, 1);
    rk_op_set_str(s->k, op, "index", "one");
    rk_op_check(s->k, op);
}
static void b_fcmp_int_pred(fx *s) { rk_build_fcmp(s->k, "lt", s->f, s->f); }
static void b_outside_region(fx *s) {
    rk_value c = rk_build_cmp(s->k, "lt", s->x, s->y);
    rk_if_begin(s->k, c);
    rk_value in = rk_build_add(s->k, s->x, s->y);
    rk_if_end(s->k, NULL, 0);
    rk_build_add(s->k, in, s->y);
}
static void b_iv_after_loop(fx *s) {
    rk_value lo = rk_const_i32(s->k, 0), hi = rk_const_i32(s->k, 4), st = rk_const_i32(s->k, 1);
    rk_value iv = rk_for_begin(s->k, lo, hi, st, NULL, 0, NULL, NULL, NULL);
    rk_for_end(s->k, NULL, 0, NULL);
    rk_build_add(s->k, iv, s->y);
}
static void b_poison(fx *s) { rk_build_add(s->k, s->x, (rk_value){0}); }
static void b_yield_count(fx *s) {
    rk_value lo = rk_const_i32(s->k, 0), hi = rk_const_i32(s->k, 4), st = rk_const_i32(s->k, 1), it;
    rk_for_begin(s->k, lo, hi, st, NULL, 1, &s->x, NULL, &it);
    rk_for_end(s->k, NULL, 0, NULL);
}
static void b_yield_type(fx *s) {
    rk_value lo = rk_const_i32(s->k, 0), hi = rk_const_i32(s->k, 4), st = rk_const_i32(s->k, 1), it, r;
    rk_for_begin(s->k, lo, hi, st, NULL, 1, &s->x, NULL, &it);
    rk_for_end(s->k, &s->f, 1, &r);
}
static void b_else_count(fx *s) {
    rk_value c = rk_build_cmp(s->k, "lt", s->x, s->y), r;
    rk_type t = RK_T_I32;
    rk_if_else_begin(s->k, c, 1, &t, &r);
    rk_else(s->k, NULL, 0);
}
static void b_if_end_without_else(fx *s) {
    rk_value c = rk_build_cmp(s->k, "lt", s->x, s->y), r;
    rk_type t = RK_T_I32;
    rk_if_else_begin(s->k, c, 1, &t, &r);
    rk_if_end(s->k, &s->x, 1);
}
static void b_wrong_close(fx *s) {
    rk_value c = rk_build_cmp(s->k, "lt", s->x, s->y);
    rk_if_begin(s->k, c);
    rk_for_end(s->k, NULL, 0, NULL);
}
static void b_close_nothing(fx *s) { rk_if_end(s->k, NULL, 0); }
static void b_else_without_if(fx *s) {
    rk_value lo = rk_const_i32(s->k, 0), hi = rk_const_i32(s->k, 4), st = rk_const_i32(s->k, 1);
    rk_for_begin(s->k, lo, hi, st, NULL, 0, NULL, NULL, NULL);
    rk_else(s->k, NULL, 0);
}
static void b_unclosed(fx *s) {
    rk_value c = rk_build_cmp(s->k, "lt", s->x, s->y);
    rk_if_begin(s->k, c);
}
static void b_if_cond_type(fx *s) { rk_if_begin(s->k, s->x); }
static void b_loop_bounds(fx *s) {
    rk_value lo = rk_const_i64(s->k, 0), hi = rk_const_i32(s->k, 4), st = rk_const_i32(s->k, 1);
    rk_for_begin(s->k, lo, hi, st, NULL, 0, NULL, NULL, NULL);
}
static void b_loop_carry_ptr(fx *s) {
    rk_value lo = rk_const_i32(s->k, 0), hi = rk_const_i32(s->k, 4), st = rk_const_i32(s->k, 1), it;
    rk_for_begin(s->k, lo, hi, st, NULL, 1, &s->pf, NULL, &it);
}
static void b_too_deep(fx *s) {
    rk_value c = rk_build_cmp(s->k, "lt", s->x, s->y);
    for (int i = 0; i < 70; i++) rk_if_begin(s->k, c);
}
static void b_axis(fx *s) { rk_build_thread_id(s->k, 3); }
static void b_shuffle_mode(fx *s) { rk_build_shuffle(s->k, "rotate", s->x, s->y); }
static void b_load_non_ptr(fx *s) { rk_load_global(s->k, s->x, s->y, 1); }
static void b_store_type(fx *s) { rk_store_global(s->k, s->pi, s->x, s->f); }
static void b_lds_ptr_for_global(fx *s) {
    rk_value p = rk_add_param(s->k, "lp", rk_type_ptr(s->k, RK_T_F32, RK_AS_LDS), NULL);
    rk_load_global(s->k, p, s->x, 1);
}
static void b_smem_index(fx *s) {
    uint32_t d[] = {64};
    rk_value a = rk_build_smem_alloc(s->k, RK_T_F32, d, 1);
    rk_value i = rk_const_i64(s->k, 0);
    rk_load_smem(s->k, a, &i, 1);
}
static void b_buffer_dwords(fx *s) {
    rk_value n = rk_const_i32(s->k, 64);
    rk_value r = rk_build_buffer_rsrc(s->k, s->ph, n);
    rk_load_buffer(s->k, r, s->x, s->y, RK_T_F16, 3);
}
static void b_async_bytes(fx *s) {
    uint32_t d[] = {64};
    rk_value a = rk_build_smem_alloc(s->k, RK_T_F32, d, 1);
    rk_value ok = rk_const_bool(s->k, true);
    rk_build_async_copy(s->k, s->pf, s->x, a, s->x, ok, 12);
}
static void b_atomic_kind(fx *s) { rk_build_global_atomic(s->k, "fadd", s->pi, s->x, s->y); }
static void b_mma_operand(fx *s) { rk_build_mma(s->k, "mfma_f32_16x16x16_f16", s->pf, s->pf, s->x); }
static void b_const_fits(fx *s) { rk_const_int(s->k, RK_T_I8, 300); }
static void b_const_float_int(fx *s) { rk_const_float(s->k, RK_T_I32, 1.0); }
static void b_extract_range(fx *s) {
    rk_value v = rk_build_vsplat(s->k, s->f, 4);
    rk_build_vextract(s->k, v, 4);
}
static void b_pack_empty(fx *s) { rk_build_vpack(s->k, NULL, 0); }
static void b_convert_not_unary(fx *s) { rk_emit_convert(s->k, RK_OP_ADD, s->x, RK_T_I32); }
static void b_trunc_widen(fx *s) { rk_build_trunc(s->k, s->x, RK_T_I64); }
static void b_bitcast_size(fx *s) { rk_build_bitcast(s->k, s->x, RK_T_I64); }
static void b_dpp_both(fx *s) {
    const rk_mov_dpp_opts o = {.row_shr = RK_SOME(1), .row_shl = RK_SOME(1)};
    rk_build_mov_dpp_ex(s->k, s->x, &o);
}
static void b_barrier_with_operands(fx *s) { rk_emit_barrier(s->k, RK_OP_SYNC_HALF_BLOCK); }
static void b_dup_param(fx *s) { rk_add_param(s->k, "x", RK_T_I32, NULL); }
static void b_param_vec(fx *s) { rk_add_param(s->k, "v", rk_type_vec(s->k, RK_T_F32, 4), NULL); }
static void b_param_abi_scalar(fx *s) {
    rk_param_abi abi = {.noalias = true};
    rk_add_param(s->k, "q", RK_T_I32, &abi);
}
static void b_hint_digit(fx *s) { rk_value_set_hint(s->k, rk_build_add(s->k, s->x, s->y), "sum2"); }
static void b_unroll_outside(fx *s) { rk_for_set_unroll(s->k, true); }
static void b_unknown_opcode(fx *s) { rk_op_check(s->k, rk_emit(s->k, (rk_opcode)(RK_OP__COUNT + 40), NULL, 0, NULL, 0)); }

typedef struct bad { const char *name; bad_fn fn; const char *frag; } bad;
static const bad bads[] = {
    {"wrong operand type", b_wrong_type, "arith.add: operand 1 has type f32 but the op works on i32"},
    {"missing attribute", b_missing_attr, "arith.cmp: missing required attribute 'pred'"},
    {"attribute out of range", b_attr_range, "attribute 'vmcnt' = 64 is out of range [-1, 63]"},
    {"attribute not in enum", b_attr_enum, "attribute 'pred' = less is not one of: lt, le"},
    {"attribute kind", b_attr_kind, "attribute 'index' must be an integer"},
    {"float compare with an int predicate", b_fcmp_int_pred, "attribute 'pred' = lt is not one of: olt"},
    {"value outside its region", b_outside_region, "is not visible here: it was defined inside a region"},
    {"loop variable after the loop", b_iv_after_loop, "(%iv4) is not visible here"},
    {"poison operand", b_poison, "operand 1 is not a value"},
    {"loop yield count", b_yield_count, "the loop carries 1 values but rk_for_end yields 0"},
    {"loop yield type", b_yield_type, "yielded value 0 has type f32, the scf.for result is i32"},
    {"if_else then-yield count", b_else_count, "the then-region yields 0 values but the if has 1 results"},
    {"if_else without else", b_if_end_without_else, "an if with results needs rk_else before rk_if_end"},
    {"closing the wrong region", b_wrong_close, "rk_for_end closes an scf.if region"},
    {"closing nothing", b_close_nothing, "rk_if_end without an open region"},
    {"else in a loop", b_else_without_if, "rk_else must follow rk_if_begin"},
    {"unclosed region", b_unclosed, "region 'then' is still open at rk_kernel_finish"},
    {"if condition type", b_if_cond_type, "condition must be i1, got i32"},
    {"loop bound types", b_loop_bounds, "lower bound, upper bound and step must share one type"},
    {"loop carries a pointer", b_loop_carry_ptr, "carries are scalars or vectors"},
    {"regions too deep", b_too_deep, "regions nest deeper than 64"},
    {"thread id axis", b_axis, "axis must be 0, 1 or 2"},
    {"shuffle mode", b_shuffle_mode, "attribute 'mode' = rotate is not one of"},
    {"load from a non-pointer", b_load_non_ptr, "operand 0 must be a pointer, got i32"},
    {"store type", b_store_type, "stored value type f32 does not match the element type i32"},
    {"LDS pointer to a global op", b_lds_ptr_for_global, "is an lds pointer; this op accesses global memory"},
    {"LDS index type", b_smem_index, "index 0 must be i32, got i64"},
    {"buffer dwords", b_buffer_dwords, "3 x f16 is not a whole number of dwords"},
    {"async copy size", b_async_bytes, "attribute 'bytes' = 12 is not one of: 4, 8, 16"},
    {"atomic kind", b_atomic_kind, "atomic kind 'fadd' does not apply to i32"},
    {"mma operand", b_mma_operand, "operand 0 must be a scalar or vector fragment"},
    {"constant range", b_const_fits, "value 300 does not fit in i8"},
    {"float constant of int type", b_const_float_int, "needs f16, bf16, f32 or f64, got i32"},
    {"extract index", b_extract_range, "index 4 out of range for vec<f32x4>"},
    {"empty pack", b_pack_empty, "vector.pack needs at least one element"},
    {"convert a binary op", b_convert_not_unary, "arith.add is not a one-operand, one-result op"},
    {"trunc that widens", b_trunc_widen, "i32 -> i64 must narrow"},
    {"bitcast size", b_bitcast_size, "bitcast changes size: i32 is 32 bits, i64 is 64 bits"},
    {"dpp both directions", b_dpp_both, "needs exactly one of row_shr or row_shl"},
    {"barrier with operands", b_barrier_with_operands, "tile.sync_half_block takes operands or has results"},
    {"duplicate parameter", b_dup_param, "duplicate parameter name 'x'"},
    {"vector parameter", b_param_vec, "parameters are scalars or pointers"},
    {"ABI attributes on a scalar", b_param_abi_scalar, "ABI attributes apply to pointers only"},
    {"hint ending in a digit", b_hint_digit, "must be an identifier not ending in a digit"},
    {"unroll outside a loop", b_unroll_outside, "rk_for_set_unroll outside a loop"},
    {"unknown opcode", b_unknown_opcode, "unknown op"},
};

static void test_invalid_uses(void **state) {
    (void)state;
    for (size_t i = 0; i < RK_COUNTOF(bads); i++) {
        fx s = fixture();
        uint64_t ops_before = rk_kernel_op_count(s.k);
        (void)ops_before;
        bads[i].fn(&s);
        rk_status st = rk_kernel_finish(s.k);
        const char *msg = rk_builder_error(s.k);
        if (st == RK_OK || !strstr(msg, bads[i].frag))
            fail_msg("case '%s': status %s, message \"%s\", expected \"%s\"", bads[i].name, rk_status_name(st), msg,
                     bads[i].frag);
        /* the same text reaches rk_error_message() */
        assert_non_null(strstr(rk_error_message(), bads[i].frag));
        rk_kernel_free(s.k);
    }
}

/* ---- sticky errors ----------------------------------------------------------------------------- */
static void test_sticky_error(void **state) {
    (void)state;
    fx s = fixture();
    rk_kernel *k = s.k;
    rk_value ok = rk_build_add(k, s.x, s.y);
    assert_true(rk_value_ok(ok));
    rk_value broken = rk_build_add(k, s.x, s.f);
    assert_false(rk_value_ok(broken));
    assert_int_equal(rk_builder_status(k), RK_ERR_INVALID);
    char first[256];
    snprintf(first, sizeof first, "%s", rk_builder_error(k));
    uint64_t n = rk_kernel_op_count(k);
    uint32_t nv = rk_kernel_nvalues(k);
    /* every later call is a no-op returning poison */
    assert_false(rk_value_ok(rk_build_add(k, s.x, s.y)));
    assert_false(rk_value_ok(rk_const_i32(k, 1)));
    assert_false(rk_value_ok(rk_build_thread_id(k, 0)));
    assert_false(rk_value_ok(rk_load_global(k, s.pf, s.x, 4)));
    assert_false(rk_value_ok(rk_add_param(k, "late", RK_T_I32, NULL)));
    assert_null(rk_emit(k, RK_OP_SYNC, NULL, 0, NULL, 0));
    rk_build_sync(k);
    rk_store_global(k, s.pf, s.x, s.f);
    rk_value c = rk_build_cmp(k, "lt", s.x, s.y);
    rk_if_begin(k, c);
    rk_if_end(k, NULL, 0);
    rk_value lo = rk_const_i32(k, 0);
    rk_for_begin(k, lo, lo, lo, NULL, 0, NULL, NULL, NULL);
    rk_for_end(k, NULL, 0, NULL);
    rk_build_return(k);
    assert_int_equal(rk_kernel_op_count(k), n);
    assert_int_equal(rk_kernel_nvalues(k), nv);
    assert_int_equal(rk_kernel_nparams(k), 6);
    assert_string_equal(rk_builder_error(k), first);           /* the first failure is kept */
    assert_int_equal(rk_kernel_finish(k), RK_ERR_INVALID);
    assert_int_equal(rk_kernel_finish(k), RK_ERR_INVALID);
    rk_kernel_free(k);
}

static void test_kernel_basics(void **state) {
    (void)state;
    assert_null(rk_kernel_new("9lives"));
    assert_non_null(strstr(rk_error_message(), "is not an identifier"));
    assert_null(rk_kernel_new(""));
    assert_null(rk_kernel_new(NULL));
    rk_kernel *k = rk_kernel_new("gemm.v2_k");
    assert_string_equal(rk_kernel_name(k), "gemm.v2_k");
    assert_int_equal(rk_kernel_max_workgroup_size(k), 256);
    rk_kernel_set_attr_int(k, "max_workgroup_size", 512);
    rk_kernel_set_attr_pair(k, "waves_per_eu", 1, 2);
    rk_kernel_set_attr_str(k, "target", "gfx942");
    assert_int_equal(rk_kernel_max_workgroup_size(k), 512);
    assert_string_equal(rk_attrs_str(rk_kernel_attrs(k), "target"), "gfx942");
    rk_param_abi abi = {.readonly = true, .nonnull = true, .align = 16, .dereferenceable = 4096, .no_nocapture = true};
    rk_value p = rk_add_param(k, "p", rk_type_ptr(k, RK_T_F16, RK_AS_CONSTANT), &abi);
    assert_true(rk_value_ok(p));
    const rk_param *pp = rk_kernel_param(k, 0);
    assert_string_equal(pp->name, "p");
    assert_true(rk_attrs_bool(&pp->attrs, "readonly", false));
    assert_false(rk_attrs_bool(&pp->attrs, "nocapture", true));
    int64_t al;
    assert_true(rk_attrs_int(&pp->attrs, "dereferenceable", &al));
    assert_int_equal(al, 4096);
    assert_null(rk_kernel_param(k, 1));
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_families),
        cmocka_unit_test(test_vector_and_identity_families),
        cmocka_unit_test(test_memory_families),
        cmocka_unit_test(test_control_flow),
        cmocka_unit_test(test_invalid_uses),
        cmocka_unit_test(test_sticky_error),
        cmocka_unit_test(test_kernel_basics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
