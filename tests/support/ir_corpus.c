/* rocke tests — hand-built kernels covering the IR text forms: control flow,
 * carries, LDS, matrix atoms, every attribute kind and float repr edge cases.
 * Used by tests/ir (round trips, goldens) and bench/. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir_int.h"
#include "support/ir_corpus.h"

static rk_kernel *done(rk_kernel *k) {
    if (!k) return NULL;
    if (rk_kernel_finish(k) != RK_OK) {
        fprintf(stderr, "corpus: %s\n", rk_error_message());
        rk_kernel_free(k);
        return NULL;
    }
    return k;
}

rk_kernel *corpus_rowsum(void) {
    rk_kernel *k = rk_kernel_new("rowsum");
    rk_value X = rk_add_param(k, "X", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value c1 = rk_const_i32(k, 0);
    rk_value c2 = rk_const_i32(k, 1);
    rk_value c3 = rk_const_f32(k, 0.0f);
    const char *names[] = {"acc"};
    rk_value acc, res;
    rk_value kv = rk_for_begin(k, c1, N, c2, "k0", 1, &c3, names, &acc);
    rk_value gl = rk_load_global(k, X, kv, 1);
    rk_value s = rk_build_fadd(k, acc, gl);
    rk_for_end(k, &s, 1, &res);
    /* the reference stores with align 1 */
    const rk_global_store_typed_opts o = {.elem_type = RK_T_F32, .align = RK_SOME(1)};
    rk_build_global_store_typed_ex(k, X, c1, res, &o);
    return done(k);
}

rk_kernel *corpus_vector_add(void) {
    rk_kernel *k = rk_kernel_new("vector_add");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    const rk_param_abi in_abi = {.noalias = true, .readonly = true, .nonnull = true, .align = 16};
    const rk_param_abi out_abi = {.noalias = true, .writeonly = true, .align = 16, .dereferenceable = 4096};
    rk_value A = rk_add_param(k, "A", pf, &in_abi);
    rk_value B = rk_add_param(k, "B", pf, &in_abi);
    rk_value C = rk_add_param(k, "C", pf, &out_abi);
    rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_kernel_set_attr_int(k, "max_workgroup_size", 256);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value bid = rk_build_block_id(k, 0);
    rk_value bdim = rk_build_block_dim(k, 0);
    rk_value base = rk_build_mul(k, bid, bdim);
    rk_value i = rk_build_add(k, base, tid);
    rk_value in_range = rk_build_cmp(k, "lt", i, N);
    rk_if_begin(k, in_range);
    rk_value a = rk_load_global(k, A, i, 1);
    rk_value b = rk_load_global(k, B, i, 1);
    rk_value c = rk_build_fadd(k, a, b);
    rk_store_global(k, C, i, c);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    return done(k);
}

rk_kernel *corpus_row_reduce(void) {
    rk_kernel *k = rk_kernel_new("row_reduce");
    const rk_param_abi ro = {.noalias = true, .readonly = true};
    rk_value X = rk_add_param(k, "X", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), &ro);
    rk_value Y = rk_add_param(k, "Y", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value row = rk_build_block_id(k, 0);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c64 = rk_const_i32(k, 64);
    rk_value zero = rk_const_f32(k, 0.0f);
    rk_value base = rk_build_mul(k, row, N);
    const char *names[] = {"acc"};
    rk_value acc, sum;
    rk_value kv = rk_for_begin(k, tid, N, c64, "k0", 1, &zero, names, &acc);
    rk_value idx = rk_build_add(k, base, kv);
    rk_value x = rk_load_global(k, X, idx, 1);
    rk_value xf = rk_build_cast_to_f32(k, x);
    rk_value s = rk_build_fadd(k, acc, xf);
    rk_for_end(k, &s, 1, &sum);
    for (int off = 32; off >= 1; off /= 2) {
        rk_value m = rk_const_i32(k, off);
        rk_value other = rk_build_shuffle(k, "xor", sum, m);
        sum = rk_build_fadd(k, sum, other);
    }
    rk_value c0 = rk_const_i32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", tid, c0);
    rk_if_begin(k, first);
    rk_store_global(k, Y, row, sum);
    rk_if_end(k, NULL, 0);
    return done(k);
}

rk_kernel *corpus_if_else(void) {
    rk_kernel *k = rk_kernel_new("if_else");
    rk_value P = rk_add_param(k, "P", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value Q = rk_add_param(k, "Q", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value cond = rk_build_cmp(k, "lt", tid, N);
    const rk_type types[] = {RK_T_F32, RK_T_I32};
    rk_value res[2];
    rk_if_else_begin(k, cond, 2, types, res);
    rk_value v = rk_load_global(k, P, tid, 1);
    rk_value two = rk_const_f32(k, 2.0f);
    rk_value m = rk_build_fmul(k, v, two);
    rk_value one = rk_const_i32(k, 1);
    const rk_value ythen[] = {m, one};
    rk_else(k, ythen, 2);
    rk_value h = rk_const_f32(k, -0.5f);
    rk_value mone = rk_const_i32(k, -1);
    const rk_value yelse[] = {h, mone};
    rk_if_end(k, yelse, 2);
    rk_store_global(k, P, tid, res[0]);
    rk_store_global(k, Q, tid, res[1]);
    /* an if turned into if/else without results */
    rk_value big = rk_build_cmp(k, "ge", res[1], tid);
    rk_if_begin(k, big);
    rk_build_sync(k);
    rk_else(k, NULL, 0);
    rk_build_s_barrier_bare(k);
    rk_if_end(k, NULL, 0);
    return done(k);
}

rk_kernel *corpus_lds_barrier(void) {
    rk_kernel *k = rk_kernel_new("lds_barrier");
    rk_value In = rk_add_param(k, "In", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value Out = rk_add_param(k, "Out", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value H = rk_add_param(k, "H", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    const uint32_t dims[] = {64, 65}, hdims[] = {128, 32};
    rk_value tile = rk_build_smem_alloc(k, RK_T_F32, dims, 2);
    rk_value htile = rk_build_smem_alloc(k, RK_T_F16, hdims, 2);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c64 = rk_const_i32(k, 64);
    rk_value r = rk_build_div(k, tid, c64);
    rk_value c = rk_build_mod(k, tid, c64);
    rk_value v = rk_load_global(k, In, tid, 1);
    const rk_value at[] = {r, c}, tat[] = {c, r};
    rk_store_smem(k, tile, at, v);
    rk_build_sync(k);
    rk_value w = rk_load_smem(k, tile, tat, 1);
    rk_store_global(k, Out, tid, w);
    rk_value hv = rk_load_global(k, H, tid, 8);
    rk_value c0 = rk_const_i32(k, 0);
    const rk_value hat[] = {r, c0};
    rk_store_smem(k, htile, hat, hv);
    rk_build_sync_lds_only(k);
    rk_build_s_waitcnt(k, 0, 0, -1);
    rk_value hw = rk_load_smem(k, htile, hat, 8);
    rk_store_global(k, H, tid, hw);
    return done(k);
}

rk_kernel *corpus_mma(void) {
    rk_kernel *k = rk_kernel_new("mma");
    rk_value A = rk_add_param(k, "A", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    rk_value B = rk_add_param(k, "B", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    rk_value C = rk_add_param(k, "C", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value K = rk_add_param(k, "K", RK_T_I32, NULL);
    rk_value lane = rk_build_lane_id(k);
    rk_value acc0 = rk_build_constant_vec(k, rk_type_vec(k, RK_T_F32, 4), 0.0);
    rk_value c0 = rk_const_i32(k, 0);
    rk_value c16 = rk_const_i32(k, 16);
    const char *names[] = {"acc"};
    rk_value acc, res;
    rk_value kk = rk_for_begin(k, c0, K, c16, "kk", 1, &acc0, names, &acc);
    rk_value ia = rk_build_add(k, kk, lane);
    rk_value a = rk_load_global(k, A, ia, 4);
    rk_value b = rk_load_global(k, B, ia, 4);
    rk_value d = rk_build_mma(k, "mfma_f32_16x16x16_f16", a, b, acc);
    rk_for_end(k, &d, 1, &res);
    rk_store_global(k, C, lane, res);
    return done(k);
}

/* Attributes of every kind on one op, set through the internal API (the
 * public setters cover scalars and int lists only). */
static void odd_attrs(rk_kernel *k, rk_op *op) {
    rk_attr_val *v = ir_attrs_put(k, &op->attrs, "note");
    *v = (rk_attr_val){.kind = RK_AK_STR, .u.s = "ctl\x01 del\x7f utf8 \xc3\xa9 cr\r end"};
    v = ir_attrs_put(k, &op->attrs, "my key");
    *v = (rk_attr_val){.kind = RK_AK_INT, .u.i = -7};
    v = ir_attrs_put(k, &op->attrs, "empty");
    *v = (rk_attr_val){.kind = RK_AK_LIST, .n = 0, .u.list = NULL};
    rk_attr *inner = rk_arena_alloc(&k->arena, 3 * sizeof *inner);
    inner[0] = (rk_attr){"zeta", {.kind = RK_AK_BOOL, .u.b = true}};
    inner[1] = (rk_attr){"alpha", {.kind = RK_AK_FLOAT, .u.f = 1.5}};
    inner[2] = (rk_attr){"Beta", {.kind = RK_AK_STR, .u.s = "it's"}};
    v = ir_attrs_put(k, &op->attrs, "m");
    *v = (rk_attr_val){.kind = RK_AK_MAP, .n = 3, .u.map = inner};
    rk_attr_val *deep = rk_arena_alloc(&k->arena, 4 * sizeof *deep);
    deep[0] = (rk_attr_val){.kind = RK_AK_INT, .u.i = 1};
    deep[1] = (rk_attr_val){.kind = RK_AK_LIST, .n = 1, .u.list = &deep[0]};
    deep[2] = (rk_attr_val){.kind = RK_AK_MAP, .n = 3, .u.map = inner};
    deep[3] = (rk_attr_val){.kind = RK_AK_STR, .u.s = "q\"uote"};
    v = ir_attrs_put(k, &op->attrs, "nested");
    *v = (rk_attr_val){.kind = RK_AK_LIST, .n = 3, .u.list = &deep[1]};
    v = ir_attrs_put(k, &op->attrs, "emptymap");
    *v = (rk_attr_val){.kind = RK_AK_MAP, .n = 0, .u.map = NULL};
}

rk_kernel *corpus_every_attr(void) {
    rk_kernel *k = rk_kernel_new("every_attr");
    rk_kernel_set_attr_int(k, "max_workgroup_size", 512);
    rk_kernel_set_attr_pair(k, "waves_per_eu", 2, 4);
    rk_kernel_set_attr_str(k, "scheduler_strategy", "max-ilp");
    rk_kernel_set_attr_str(k, "agpr_alloc", "0,64");
    const rk_param_abi abi = {.noalias = true, .readonly = true, .no_nocapture = true, .nonnull = true,
                              .align = 4, .dereferenceable = (uint64_t)1 << 40};
    rk_value P = rk_add_param(k, "P", rk_type_ptr(k, RK_T_F64, RK_AS_GLOBAL), &abi);
    rk_add_param(k, "n", RK_T_I64, NULL);
    rk_add_param(k, "flag", RK_T_I1, NULL);
    static const double edges[] = {0.1, 1e-05, 1e16, 1e17, -0.0, 5e-324, DBL_MAX, NAN, INFINITY, -INFINITY,
                                   123456789.125, 0.0001, 1.5e-7, 2.5e+22, 9007199254740993.0, -1e-300};
    rk_value last = {0};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) last = rk_const_float(k, RK_T_F64, edges[i]);
    rk_const_f32(k, 0.1f);
    rk_const_float(k, RK_T_F16, 65504.0);
    rk_const_float(k, RK_T_BF16, 3.140625);
    rk_const_i64(k, INT64_MIN);
    rk_const_i64(k, INT64_MAX);
    rk_const_bool(k, true);
    rk_const_int(k, RK_T_I8, -128);
    rk_set_loc(k, "kern.c:42 \"q\" \\ \t tab");
    rk_value tid = rk_build_thread_id(k, 1);
    rk_set_loc(k, NULL);
    rk_store_global(k, P, tid, last);
    const rk_type outs[] = {RK_T_I32, RK_T_I32};
    const rk_value ins[] = {tid};
    rk_build_inline_asm(k, "v_mov_b32 $0, $2\n\tv_mov_b32 $1, $2 ; \"quoted\" \\ back", "=v,=v,v", ins, 1, outs, 2,
                        true);
    rk_value va = rk_build_constant_vec(k, rk_type_vec(k, RK_T_I32, 4), 1);
    rk_value vb = rk_build_constant_vec(k, rk_type_vec(k, RK_T_I32, 4), -3);
    const int32_t mask[] = {7, 0, 5, 2, 1, 6};
    rk_build_vshuffle(k, va, vb, mask, 6);
    rk_op *sync = rk_emit(k, RK_OP_SYNC, NULL, 0, NULL, 0);
    odd_attrs(k, sync);
    rk_value swapped[2];
    rk_build_permlane32_swap(k, tid, tid, swapped);
    return done(k);
}

rk_kernel *corpus_nested(void) {
    rk_kernel *k = rk_kernel_new("nested");
    rk_value X = rk_add_param(k, "X", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
    rk_value c0 = rk_const_i32(k, 0);
    rk_value c1 = rk_const_i32(k, 1);
    rk_value zero = rk_const_f32(k, 0.0f);
    rk_value one = rk_const_f32(k, 1.0f);
    const char *s_name[] = {"s"}, *t_name[] = {"t"};
    rk_value s, t, r_in, r_out;
    rk_for_begin(k, c0, N, c1, "k0", 1, &zero, s_name, &s);
    rk_for_begin(k, c0, N, c1, "k1", 1, &s, t_name, &t);
    rk_value t2 = rk_build_fadd(k, t, one);
    rk_for_end(k, &t2, 1, &r_in);
    rk_for_end(k, &r_in, 1, &r_out);
    /* a sibling loop reusing the name %k0, without carries */
    rk_value kv = rk_for_begin(k, c0, N, c1, "k0", 0, NULL, NULL, NULL);
    rk_store_global(k, X, kv, r_out);
    rk_for_end(k, NULL, 0, NULL);
    /* builder-numbered loop variable and carries */
    rk_value inits[] = {r_out, c0}, carries[2], outs[2];
    rk_value iv = rk_for_begin(k, c0, N, c1, NULL, 2, inits, NULL, carries);
    rk_value a = rk_build_fadd(k, carries[0], one);
    rk_value b = rk_build_add(k, carries[1], iv);
    const rk_value ys[] = {a, b};
    rk_for_set_unroll(k, true);
    rk_for_end(k, ys, 2, outs);
    rk_store_global(k, X, outs[1], outs[0]);
    return done(k);
}

const corpus_entry corpus_kernels[] = {
    {"rowsum", corpus_rowsum, false},
    {"vector_add", corpus_vector_add, true},
    {"row_reduce", corpus_row_reduce, true},
    {"if_else", corpus_if_else, true},
    {"lds_barrier", corpus_lds_barrier, true},
    {"mma", corpus_mma, true},
    {"every_attr", corpus_every_attr, false},
    {"nested", corpus_nested, false},
};
const unsigned corpus_count = sizeof corpus_kernels / sizeof corpus_kernels[0];
