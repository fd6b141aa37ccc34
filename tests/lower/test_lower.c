/* rocke tests — the lowering core and the AMDGPU vendor through the public
 * API: flavors and their resolution, s_waitcnt encodings and buffer word 3
 * per target, refusals (illegal atoms, fp8 dialect, gfx950-only widths, bad
 * attributes, NVIDIA for now), constants, names, the LDS pool, loops (plain
 * and unrolled) and conditionals, determinism, parse-then-lower identity, and
 * a sweep of op variants (shuffle modes and widths, buffer widths, atomics,
 * LDS shapes) that llc must accept. Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "lower/llc_util.h"
#include "support/ir_corpus.h"

static const rk_target *tgt(const char *name) {
    const rk_target *t = rk_target_find(name);
    assert_non_null(t);
    return t;
}

static char *lower_ok(const rk_kernel *k, const char *target, rk_llvm_flavor f) {
    char *ll = NULL;
    if (rk_lower_llvm(k, tgt(target), f, &ll) != RK_OK) fail_msg("lowering for %s: %s", target, rk_error_message());
    return ll;
}

static void expect_has(const char *text, const char *needle) {
    if (!strstr(text, needle)) fail_msg("expected \"%s\" in:\n%s", needle, text);
}
static void expect_lacks(const char *text, const char *needle) {
    if (strstr(text, needle)) fail_msg("did not expect \"%s\" in:\n%s", needle, text);
}

static rk_value param_ptr(rk_kernel *k, const char *name, rk_type elem) {
    return rk_add_param(k, name, rk_type_ptr(k, elem, RK_AS_GLOBAL), NULL);
}

/* ---- flavors ------------------------------------------------------------------------------ */
static void test_flavors(void **state) {
    (void)state;
    rk_llvm_flavor f;
    assert_string_equal(rk_llvm_flavor_name(RK_LLVM20), "llvm20");
    assert_string_equal(rk_llvm_flavor_name(RK_LLVM23), "llvm23");
    assert_string_equal(rk_llvm_flavor_names(), "llvm20, llvm22 (default), llvm23");
    assert_int_equal(rk_llvm_flavor_parse("llvm23", &f), RK_OK);
    assert_int_equal(f, RK_LLVM23);
    assert_int_equal(rk_llvm_flavor_parse("llvm21", &f), RK_ERR_INVALID);
    expect_has(rk_error_message(), "llvm21");
    expect_has(rk_error_message(), "llvm20, llvm22 (default), llvm23");
    unsetenv("ROCKE_LLVM_FLAVOR");
    assert_int_equal(rk_llvm_flavor_resolve(NULL, &f), RK_OK);
    assert_int_equal(f, RK_LLVM22);
    setenv("ROCKE_LLVM_FLAVOR", "llvm20", 1);
    assert_int_equal(rk_llvm_flavor_resolve(NULL, &f), RK_OK);
    assert_int_equal(f, RK_LLVM20);
    assert_int_equal(rk_llvm_flavor_resolve("llvm23", &f), RK_OK);   /* explicit wins */
    assert_int_equal(f, RK_LLVM23);
    setenv("ROCKE_LLVM_FLAVOR", "llvm99", 1);
    assert_int_equal(rk_llvm_flavor_resolve(NULL, &f), RK_ERR_INVALID);
    expect_has(rk_error_message(), "ROCKE_LLVM_FLAVOR");
    expect_has(rk_error_message(), "llvm22 (default)");
    setenv("ROCKE_LLVM_FLAVOR", "", 1);
    assert_int_equal(rk_llvm_flavor_resolve(NULL, &f), RK_OK);
    assert_int_equal(f, RK_LLVM22);
    unsetenv("ROCKE_LLVM_FLAVOR");
}

/* ---- waits and buffer descriptors ------------------------------------------------------------ */
static void test_waitcnt_encodings(void **state) {
    (void)state;
    static const char *const names[] = {"gfx90a", "gfx942", "gfx950"};
    for (size_t i = 0; i < 3; i++) {
        const rk_target *t = tgt(names[i]);
        assert_int_equal(rk_waitcnt_encode(t, 0, 0, -1), 112);
        assert_int_equal(rk_waitcnt_encode(t, -1, 0, -1), 49279);
        assert_int_equal(rk_waitcnt_encode(t, 0, -1, -1), 3952);
        assert_int_equal(rk_waitcnt_encode(t, 16, 16, -1), 20336);   /* vm 16 stays 16, lgkm clamps to 15 */
        assert_int_equal(rk_waitcnt_encode(t, -1, -1, -1), 53119);
        assert_int_equal(rk_waitcnt_encode(t, 1000, 1000, 1000), 53119);   /* clamp, never wrap */
        assert_int_equal(rk_waitcnt_encode(t, 63, 15, 7), 53119);
        /* and what the lowering emits for them */
        rk_kernel *k = rk_kernel_new("waits");
        rk_build_s_waitcnt(k, 16, 16, -1);
        rk_build_sync(k);
        rk_build_sync_lds_only(k);
        assert_int_equal(rk_kernel_finish(k), RK_OK);
        char *ll = lower_ok(k, names[i], RK_LLVM22);
        expect_has(ll, "call void @llvm.amdgcn.s.waitcnt(i32 20336)");
        expect_has(ll, "call void @llvm.amdgcn.s.waitcnt(i32 112)\n  call void @llvm.amdgcn.s.barrier()");
        expect_has(ll, "call void @llvm.amdgcn.s.waitcnt(i32 49279)\n  call void @llvm.amdgcn.s.barrier()");
        rk_string_free(ll);
        rk_kernel_free(k);
    }
}

static rk_kernel *rsrc_kernel(rk_type nbytes_t) {
    rk_kernel *k = rk_kernel_new("rsrc");
    rk_value p = param_ptr(k, "P", RK_T_F32);
    rk_value n = rk_add_param(k, "n", nbytes_t, NULL);
    rk_value r = rk_build_buffer_rsrc(k, p, n);
    rk_value z = rk_const_i32(k, 0);
    rk_value v = rk_load_buffer(k, r, z, z, RK_T_F16, 1);
    rk_store_buffer(k, r, z, z, v);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static void test_buffer_word3_and_flavors(void **state) {
    (void)state;
    static const char *const names[] = {"gfx90a", "gfx942", "gfx950"};
    for (size_t i = 0; i < 3; i++) {
        const rk_target *t = tgt(names[i]);
        assert_int_equal(t->buffer_word3, 0x00027000u);
        rk_kernel *k = rsrc_kernel(RK_T_I32);
        char *ll = lower_ok(k, names[i], RK_LLVM22);
        expect_has(ll, "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)");
        expect_has(ll, "= zext i32 %n to i64");
        expect_has(ll, ", i16 0, i64 %nrec.1, i32 159744)");
        expect_has(ll, "p8:128:128:128:48-");
        /* 16-bit scalars load 2 bytes so a tail clamps per element */
        expect_has(ll, "call i16 @llvm.amdgcn.raw.ptr.buffer.load.i16(ptr addrspace(8) %rsrc1, i32 0, i32 0, i32 0)");
        expect_has(ll, "call void @llvm.amdgcn.raw.ptr.buffer.store.i16(i16 %bits.");
        rk_string_free(ll);
        ll = lower_ok(k, names[i], RK_LLVM20);
        expect_has(ll, "@llvm.amdgcn.make.buffer.rsrc.p1(ptr addrspace(1) %P, i16 0, i32 %n, i32 159744)");
        expect_has(ll, "p8:128:128-p9");
        expect_lacks(ll, "e-m:e-");
        rk_string_free(ll);
        ll = lower_ok(k, names[i], RK_LLVM23);
        expect_has(ll, "target datalayout = \"e-m:e-p:64:64");
        rk_string_free(ll);
        rk_kernel_free(k);
        k = rsrc_kernel(RK_T_I64);
        ll = lower_ok(k, names[i], RK_LLVM22);
        expect_has(ll, ", i16 0, i64 %n, i32 159744)");
        rk_string_free(ll);
        ll = lower_ok(k, names[i], RK_LLVM20);
        expect_has(ll, "= trunc i64 %n to i32");
        rk_string_free(ll);
        rk_kernel_free(k);
    }
}

/* ---- refusals ------------------------------------------------------------------------------------ */
static rk_kernel *mma_kernel(const char *op_id, rk_type ab, uint32_t ablen, uint32_t clen) {
    rk_kernel *k = rk_kernel_new("mmak");
    rk_value pa = param_ptr(k, "A", ab), pc = param_ptr(k, "C", RK_T_F32);
    rk_value z = rk_const_i32(k, 0);
    rk_value a = rk_load_global(k, pa, z, ablen), c = rk_load_global(k, pc, z, clen);
    rk_value d = rk_build_mma(k, op_id, a, a, c);
    rk_store_global(k, pc, z, d);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static void test_refusals(void **state) {
    (void)state;
    char *ll = (char *)1;
    /* a gfx950-only atom on gfx942: named with the target, nothing emitted */
    rk_kernel *k = mma_kernel("mfma_f32_16x16x32_f16", RK_T_F16, 8, 4);
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll), RK_ERR_VERIFY);
    assert_null(ll);
    expect_has(rk_error_message(), "mfma_f32_16x16x32_f16");
    expect_has(rk_error_message(), "gfx942");
    rk_string_free(lower_ok(k, "gfx950", RK_LLVM22));
    rk_kernel_free(k);

    /* an OCP fp8 conversion on gfx942 (whose fp8 is FNUZ) */
    k = rk_kernel_new("dialect");
    rk_value p = param_ptr(k, "P", RK_T_FP8E4M3), q = param_ptr(k, "Q", RK_T_F32);
    rk_value z = rk_const_i32(k, 0);
    rk_value b = rk_load_global(k, p, z, 1);
    rk_value f = rk_build_cvt_fp8_to_f32(k, b);
    rk_store_global(k, q, z, f);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll), RK_ERR_VERIFY);
    expect_has(rk_error_message(), "gfx942");
    rk_string_free(lower_ok(k, "gfx950", RK_LLVM22));
    rk_kernel_free(k);

    /* 16-byte async lanes need gfx950 */
    k = rk_kernel_new("async16");
    p = param_ptr(k, "P", RK_T_F32);
    rk_value n = rk_const_i32(k, 4096);
    rk_value r = rk_build_buffer_rsrc(k, p, n);
    uint32_t dims[] = {1024};
    rk_value s = rk_build_smem_alloc(k, RK_T_F32, dims, 1);
    z = rk_const_i32(k, 0);
    rk_build_async_buffer_load_lds(k, r, s, z, z, 4);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll), RK_ERR_UNSUPPORTED);
    expect_has(rk_error_message(), "16 bytes per lane needs gfx950");
    char *ok = lower_ok(k, "gfx950", RK_LLVM22);
    expect_has(ok, "@llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rsrc");
    expect_has(ok, ", i32 16, i32 0, i32 0, i32 0, i32 0)");
    rk_string_free(ok);
    rk_kernel_free(k);

    /* more LDS than the target has */
    k = rk_kernel_new("bigLDS");
    uint32_t big[] = {70000};
    s = rk_build_smem_alloc(k, RK_T_I8, big, 1);
    z = rk_const_i32(k, 0);
    rk_value c8 = rk_const_int(k, RK_T_I8, 1);
    const rk_value idx[] = {z};
    rk_store_smem(k, s, idx, c8);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll), RK_ERR_UNSUPPORTED);
    expect_has(rk_error_message(), "70000 bytes");
    expect_has(rk_error_message(), "65536");
    rk_string_free(lower_ok(k, "gfx950", RK_LLVM22));   /* 160 KiB there */
    rk_kernel_free(k);

    /* bad kernel attributes, named with the legal range */
    k = rk_kernel_new("attrs");
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_kernel_set_attr_int(k, "max_workgroup_size", 4096);
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll), RK_ERR_INVALID);
    expect_has(rk_error_message(), "max_workgroup_size");
    rk_kernel_set_attr_int(k, "max_workgroup_size", 512);
    rk_kernel_set_attr_pair(k, "waves_per_eu", 3, 2);
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll), RK_ERR_INVALID);
    expect_has(rk_error_message(), "waves_per_eu");
    rk_kernel_set_attr_pair(k, "waves_per_eu", 2, 4);
    rk_kernel_set_attr_str(k, "scheduler_strategy", "fastest");
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll), RK_ERR_INVALID);
    expect_has(rk_error_message(), "max-ilp");
    rk_kernel_set_attr_str(k, "scheduler_strategy", "max-ilp");
    rk_kernel_set_attr_pair(k, "agpr_alloc", 0, 64);
    ok = lower_ok(k, "gfx942", RK_LLVM22);
    expect_has(ok, "attributes #0 = { \"amdgpu-flat-work-group-size\"=\"1,512\" \"amdgpu-waves-per-eu\"=\"2,4\" "
                   "\"amdgpu-agpr-alloc\"=\"0,64\" \"amdgpu-sched-strategy\"=\"max-ilp\" "
                   "\"uniform-work-group-size\"=\"true\" norecurse nounwind }");
    rk_string_free(ok);
    rk_kernel_free(k);

    /* readonly + writeonly on one pointer */
    k = rk_kernel_new("rw");
    rk_param_abi abi = {.readonly = true, .writeonly = true};
    rk_add_param(k, "P", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), &abi);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_not_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll), RK_OK);
    expect_has(rk_error_message(), "readonly and writeonly");
    rk_kernel_free(k);
    /* NVIDIA lowers in nvptx.c, which is not written yet */
    k = rk_kernel_new("nv");
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    rk_status st = rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll);
    assert_true(st == RK_ERR_UNSUPPORTED || st == RK_OK);
    if (st == RK_OK) rk_string_free(ll);
    /* bad arguments */
    assert_int_equal(rk_lower_llvm(k, NULL, RK_LLVM22, &ll), RK_ERR_INVALID);
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), (rk_llvm_flavor)7, &ll), RK_ERR_INVALID);
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, NULL), RK_ERR_INVALID);
    rk_kernel_free(k);
    k = rk_kernel_new("llvm.foo");
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll), RK_ERR_INVALID);
    expect_has(rk_error_message(), "reserved");
    rk_kernel_free(k);
}

/* ---- constants, names, declarations ---------------------------------------------------------------- */
static void test_constants_and_names(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("consts");
    rk_value pf = param_ptr(k, "F", RK_T_F32), ph = param_ptr(k, "H", RK_T_F16), pb = param_ptr(k, "B", RK_T_BF16);
    rk_value pi = param_ptr(k, "I", RK_T_I32), pv = param_ptr(k, "V", RK_T_F32);
    rk_value z = rk_const_i32(k, 0);
    rk_value f = rk_const_f32(k, 0.1f);
    rk_store_global(k, pf, z, f);
    rk_store_global(k, ph, z, rk_const_float(k, RK_T_F16, 1.5));
    rk_store_global(k, pb, z, rk_const_float(k, RK_T_BF16, -2.0));
    rk_value m1 = rk_const_int(k, RK_T_I32, 4294967295ll);   /* wraps to -1 */
    rk_store_global(k, pi, z, m1);
    rk_type v4 = rk_type_vec(k, RK_T_F32, 4);
    rk_store_global(k, pv, z, rk_build_constant_vec(k, v4, 0.0));
    rk_store_global(k, pv, z, rk_build_constant_vec(k, v4, 1.0));
    rk_value t = rk_const_bool(k, true);
    rk_value sel = rk_build_select(k, t, f, f);
    rk_store_global(k, pf, z, sel);
    /* a name that looks like a lowering temporary, and a loop IV named entry */
    rk_value lim = rk_const_i32(k, 4), one = rk_const_i32(k, 1);
    rk_value iv = rk_for_begin(k, z, lim, one, "entry", 0, NULL, NULL, NULL);
    rk_value a = rk_build_add(k, iv, one);
    rk_value_set_hint(k, a, "gep.");
    rk_store_global(k, pi, iv, a);
    rk_for_end(k, NULL, 0, NULL);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "gfx942", RK_LLVM22);
    expect_has(ll, "store float 0x3FB99999A0000000, ptr addrspace(1)");   /* 0.1f widened exactly */
    expect_has(ll, "store half 0xH3E00,");
    expect_has(ll, "store bfloat 0xRC000,");
    expect_has(ll, "store i32 -1,");
    expect_has(ll, "store <4 x float> zeroinitializer,");
    expect_has(ll, "store <4 x float> splat (float 0x3FF0000000000000),");
    expect_has(ll, "select i1 true, float 0x3FB99999A0000000, float 0x3FB99999A0000000");
    expect_lacks(ll, "arith.constant");
    expect_has(ll, "%entry$ = phi i32 [ 0, %entry ]");
    expect_has(ll, "= add nsw i32 %entry$, 1");
    expect_has(ll, "%gep.");   /* the value named gep.<n> is escaped with '$' */
    expect_has(ll, "$ = add nsw");
    char *log = NULL;
    if (llc_path() && llc_compile(ll, "amdgcn-amd-amdhsa", "gfx942", &log) != 0) fail_msg("llc: %s\n%s", log, ll);
    free(log);
    rk_string_free(ll);
    rk_kernel_free(k);
}

/* Declarations print in the table's order, whatever the use order. */
static void test_declaration_order(void **state) {
    (void)state;
    char *lls[2];
    for (int order = 0; order < 2; order++) {
        rk_kernel *k = rk_kernel_new("decls");
        rk_value p = param_ptr(k, "P", RK_T_I32);
        rk_value z = rk_const_i32(k, 0);
        rk_value a, b, c;
        if (order == 0) {
            a = rk_build_thread_id(k, 0);
            b = rk_build_block_id(k, 0);
            c = rk_build_smax(k, a, b);
        } else {
            b = rk_build_block_id(k, 0);
            a = rk_build_thread_id(k, 0);
            c = rk_build_smax(k, b, a);
            rk_value_set_hint(k, c, "smax");
        }
        rk_build_sync(k);
        rk_store_global(k, p, z, c);
        assert_int_equal(rk_kernel_finish(k), RK_OK);
        lls[order] = lower_ok(k, "gfx942", RK_LLVM22);
        rk_kernel_free(k);
    }
    for (int i = 0; i < 2; i++) {
        const char *d = strstr(lls[i], "declare i32 @llvm.smax.i32(i32, i32)\n"
                                       "declare i32 @llvm.amdgcn.workitem.id.x()\n"
                                       "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
                                       "declare void @llvm.amdgcn.s.waitcnt(i32)\n"
                                       "declare void @llvm.amdgcn.s.barrier()\n\n");
        if (!d) fail_msg("declarations out of table order:\n%s", lls[i]);
        rk_string_free(lls[i]);
    }
}

/* ---- LDS pool ------------------------------------------------------------------------------------------ */
static void store_to(rk_kernel *k, rk_value s, rk_value v) {
    rk_value z = rk_const_i32(k, 0);
    const rk_value idx[] = {z};
    rk_store_smem(k, s, idx, v);
}

static void test_lds_pool(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("pool");
    uint32_t d1[] = {100}, d2[] = {256}, d3[] = {8};
    rk_value f = rk_const_f32(k, 1.0f);
    rk_value a = rk_build_smem_alloc(k, RK_T_F32, d1, 1);   /* 400 bytes, dies early */
    store_to(k, a, f);
    rk_build_sync_lds_only(k);   /* every thread is past a's last use */
    rk_value b = rk_build_smem_alloc(k, RK_T_F32, d2, 1);   /* 1024 bytes: reuses a's bytes */
    store_to(k, b, f);
    rk_value c = rk_build_smem_alloc(k, RK_T_F32, d3, 1);   /* alive with b: after it */
    store_to(k, c, f);
    store_to(k, b, f);
    rk_value dead = rk_build_smem_alloc(k, RK_T_F32, d2, 1);   /* never used: no space */
    (void)dead;
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "gfx942", RK_LLVM22);
    expect_has(ll, "@smem_pool.pool = internal unnamed_addr addrspace(3) global [1056 x i8] poison, align 16");
    expect_has(ll, "[100 x float], ptr addrspace(3) @smem_pool.pool, i32 0, i32 0");
    expect_has(ll, "[256 x float], ptr addrspace(3) @smem_pool.pool, i32 0, i32 0");
    expect_has(ll, "[8 x float], ptr addrspace(3) getelementptr inbounds (i8, ptr addrspace(3) @smem_pool.pool, i32 1024)");
    rk_string_free(ll);
    rk_kernel_free(k);

    /* without a barrier another thread may still use a's bytes when this
     * one writes b: no sharing (the race of a span reused for a
     * reduction's slots, rmsnorm stage=auto at N=1001 on sm_90a) */
    k = rk_kernel_new("pool_nobar");
    f = rk_const_f32(k, 1.0f);
    a = rk_build_smem_alloc(k, RK_T_F32, d1, 1);
    store_to(k, a, f);
    b = rk_build_smem_alloc(k, RK_T_F32, d2, 1);
    store_to(k, b, f);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    ll = lower_ok(k, "gfx942", RK_LLVM22);
    expect_has(ll, "[1424 x i8]");
    expect_has(ll, "[256 x float], ptr addrspace(3) getelementptr inbounds (i8, ptr addrspace(3) @smem_pool.pool_nobar, i32 400)");
    rk_string_free(ll);
    rk_kernel_free(k);

    /* a use inside a loop keeps the allocation alive through the loop */
    k = rk_kernel_new("pool_loop");
    f = rk_const_f32(k, 1.0f);
    a = rk_build_smem_alloc(k, RK_T_F32, d1, 1);
    b = rk_build_smem_alloc(k, RK_T_F32, d1, 1);
    rk_value z = rk_const_i32(k, 0), four = rk_const_i32(k, 4), one = rk_const_i32(k, 1);
    rk_for_begin(k, z, four, one, NULL, 0, NULL, NULL, NULL);
    store_to(k, a, f);
    store_to(k, b, f);   /* b starts after a's last use in the body, but a is read again next iteration */
    rk_for_end(k, NULL, 0, NULL);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    ll = lower_ok(k, "gfx942", RK_LLVM22);
    expect_has(ll, "[800 x i8]");
    rk_string_free(ll);
    rk_kernel_free(k);

    /* no allocation used: no pool at all */
    k = rk_kernel_new("nopool");
    rk_build_smem_alloc(k, RK_T_F32, d1, 1);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    ll = lower_ok(k, "gfx942", RK_LLVM22);
    expect_lacks(ll, "smem_pool");
    rk_string_free(ll);
    rk_kernel_free(k);
}

/* ---- control flow -------------------------------------------------------------------------------------- */
static rk_kernel *unrolled(bool leading_sync) {
    rk_kernel *k = rk_kernel_new("unrolled");
    rk_value p = param_ptr(k, "P", RK_T_F32);
    rk_value lo = rk_const_i32(k, 0), hi = rk_const_i32(k, 3), st = rk_const_i32(k, 1);
    rk_value init = rk_const_f32(k, 0.0f), acc, res;
    const char *nm[] = {"acc"};
    rk_value iv = rk_for_begin(k, lo, hi, st, "i", 1, &init, nm, &acc);
    rk_for_set_unroll(k, true);
    if (leading_sync) rk_build_sync(k);
    rk_value x = rk_load_global(k, p, iv, 1);
    rk_value s = rk_build_fadd(k, acc, x);
    rk_build_sync(k);
    rk_for_end(k, &s, 1, &res);
    rk_value z = rk_const_i32(k, 0);
    rk_store_global(k, p, z, res);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static size_t count(const char *s, const char *needle) {
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++) n++;
    return n;
}

static void test_unroll(void **state) {
    (void)state;
    rk_kernel *k = unrolled(false);
    char *ll = lower_ok(k, "gfx942", RK_LLVM22);
    expect_lacks(ll, "phi");
    expect_has(ll, "getelementptr inbounds float, ptr addrspace(1) %P, i32 2");
    expect_has(ll, "%fadd");
    expect_has(ll, ".u0 = fadd float 0x0000000000000000, %gl");
    expect_has(ll, ".u2 = fadd float %fadd");
    assert_int_equal(count(ll, "s.barrier()\n"), 3 + 1);   /* + the declaration; nothing elided */
    rk_string_free(ll);
    rk_kernel_free(k);
    /* a body that starts with tile.sync: the trailing one of copies 0 and 1 is redundant */
    k = unrolled(true);
    ll = lower_ok(k, "gfx942", RK_LLVM22);
    assert_int_equal(count(ll, "call void @llvm.amdgcn.s.barrier()"), 4);
    char *log = NULL;
    if (llc_path() && llc_compile(ll, "amdgcn-amd-amdhsa", "gfx942", &log) != 0) fail_msg("llc: %s\n%s", log, ll);
    free(log);
    rk_string_free(ll);
    rk_kernel_free(k);
}

static void test_nested_flow_and_return(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("flow");
    rk_value p = param_ptr(k, "P", RK_T_I32);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    rk_value z = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
    rk_value init = z, acc, outer;
    rk_value i = rk_for_begin(k, z, n, one, "i", 1, &init, NULL, &acc);
    rk_value inner_init = acc, acc2, inner;
    rk_value j = rk_for_begin(k, z, n, one, "j", 1, &inner_init, NULL, &acc2);
    rk_value s = rk_build_add(k, acc2, j);
    rk_for_end(k, &s, 1, &inner);
    rk_value c = rk_build_cmp(k, "lt", i, one);
    rk_type it = RK_T_I32;
    rk_value r;
    rk_if_else_begin(k, c, 1, &it, &r);
    rk_value t1 = rk_build_add(k, inner, one);
    rk_else(k, &t1, 1);
    rk_if_begin(k, c);
    rk_build_sync(k);
    rk_if_end(k, NULL, 0);
    rk_if_end(k, &inner, 1);
    rk_for_end(k, &r, 1, &outer);
    rk_store_global(k, p, z, outer);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "gfx942", RK_LLVM22);
    expect_has(ll, "= phi i32 [ %add");
    expect_has(ll, "for.header.5:");
    char *log = NULL;
    if (llc_path() && llc_compile(ll, "amdgcn-amd-amdhsa", "gfx942", &log) != 0) fail_msg("llc: %s\n%s", log, ll);
    free(log);
    rk_string_free(ll);
    rk_kernel_free(k);
}

/* ---- determinism and parse identity -------------------------------------------------------------------- */
static void test_deterministic_and_parse_identity(void **state) {
    (void)state;
    for (unsigned i = 0; i < corpus_count; i++) {
        rk_kernel *k = corpus_kernels[i].build();
        assert_non_null(k);
        for (int t = 0; t < 3; t++) {
            static const char *const names[] = {"gfx90a", "gfx942", "gfx950"};
            char *a = NULL, *b = NULL;
            if (rk_lower_llvm(k, tgt(names[t]), RK_LLVM22, &a) != RK_OK) continue;   /* atom not on this target */
            assert_int_equal(rk_lower_llvm(k, tgt(names[t]), RK_LLVM22, &b), RK_OK);
            assert_string_equal(a, b);
            char *text = rk_serialize(k);
            rk_kernel *pk = NULL;
            if (rk_parse(text, strlen(text), &pk) != RK_OK) fail_msg("%s: %s", corpus_kernels[i].name, rk_error_message());
            char *c = lower_ok(pk, names[t], RK_LLVM22);
            if (strcmp(a, c)) fail_msg("%s/%s: parsed lowering differs:\n%s\n---\n%s", corpus_kernels[i].name, names[t], a, c);
            rk_string_free(a);
            rk_string_free(b);
            rk_string_free(c);
            rk_string_free(text);
            rk_kernel_free(pk);
        }
        rk_kernel_free(k);
    }
}

/* ---- op variants through llc ------------------------------------------------------------------------------- */
typedef struct variants { const char *target; llc_merge m; unsigned n; } variants;

static void add(variants *v, rk_kernel *k) {
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, v->target, RK_LLVM22);
    llc_merge_add(&v->m, ll);
    v->n++;
    rk_string_free(ll);
    rk_kernel_free(k);
}

static rk_kernel *vk(variants *v, const char *what) {
    char name[96];
    snprintf(name, sizeof name, "v%u_%s", v->n, what);
    return rk_kernel_new(name);
}

static void shuffles(variants *v) {
    static const char *const modes[] = {"idx", "xor", "up", "down"};
    static const int widths[] = {0, 4, 16, 32, 64};
    for (int m = 0; m < 4; m++)
        for (int w = 0; w < 5; w++)
            for (int dyn = 0; dyn < 2; dyn++)
                for (int fl = 0; fl < 2; fl++) {
                    rk_kernel *k = vk(v, "shfl");
                    rk_type t = fl ? RK_T_F32 : RK_T_I32;
                    rk_value p = param_ptr(k, "P", t), q = param_ptr(k, "Q", RK_T_I32);
                    rk_value tid = rk_build_thread_id(k, 0);
                    rk_value x = rk_load_global(k, p, tid, 1);
                    rk_value b = dyn ? rk_load_global(k, q, tid, 1) : rk_const_i32(k, m == 1 ? 3 : 2);
                    const rk_shuffle_opts so = {.width = {widths[w] != 0, widths[w]}};
                    rk_value sh = rk_build_shuffle_ex(k, modes[m], x, b, &so);
                    assert_true(rk_type_eq(rk_value_type(k, sh), t));
                    rk_store_global(k, p, tid, sh);
                    add(v, k);
                }
}

static void buffers(variants *v) {
    const rk_type elems[] = {RK_T_I8, RK_T_F16, RK_T_BF16, RK_T_I16, RK_T_F32, RK_T_I32, RK_T_I64, RK_T_F64};
    for (size_t e = 0; e < sizeof elems / sizeof elems[0]; e++)
        for (uint32_t n = 1; n <= 16; n++) {
            rk_kernel *k = vk(v, "buf");
            uint32_t bits = rk_type_bits(k, elems[e]) * n;
            if (bits != 8 && bits != 16 && bits != 32 && bits != 64 && bits != 96 && bits != 128) {
                rk_kernel_free(k);
                continue;
            }
            if (bits == 96 && rk_type_bits(k, elems[e]) != 32) { rk_kernel_free(k); continue; }
            if (n > 1 && bits < 32) { rk_kernel_free(k); continue; }
            rk_value p = param_ptr(k, "P", elems[e]);
            rk_value nb = rk_add_param(k, "nb", RK_T_I32, NULL);
            rk_value r = rk_build_buffer_rsrc(k, p, nb);
            rk_value tid = rk_build_thread_id(k, 0);
            rk_value z = rk_const_i32(k, 0);
            rk_value x = rk_load_buffer(k, r, tid, z, elems[e], n);
            rk_store_buffer(k, r, tid, z, x);
            add(v, k);
        }
}

static void atomics(variants *v) {
    static const char *const kinds[] = {"add", "smax", "smin", "umax", "umin", "and", "or", "xor", "xchg"};
    const rk_type ts[] = {RK_T_I32, RK_T_I64};
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            rk_kernel *k = vk(v, "atom");
            rk_value p = param_ptr(k, "P", ts[t]);
            rk_value tid = rk_build_thread_id(k, 0);
            rk_value x = rk_const_int(k, ts[t], 3);
            rk_value o = rk_build_global_atomic(k, kinds[i], p, tid, x);
            rk_value o2 = rk_build_global_atomic_cas(k, p, tid, o, x);
            rk_store_global(k, p, tid, o2);
            add(v, k);
        }
    rk_kernel *k = vk(v, "fatom");
    rk_value p = param_ptr(k, "P", RK_T_F32);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value o = rk_build_global_atomic(k, "fadd", p, tid, rk_const_f32(k, 1.0f));
    rk_store_global(k, p, tid, o);
    add(v, k);
}

static void lds_shapes(variants *v) {
    const rk_type elems[] = {RK_T_I8, RK_T_F16, RK_T_F32, RK_T_I64};
    for (size_t e = 0; e < 4; e++)
        for (uint32_t rank = 1; rank <= 3; rank++)
            for (uint32_t vec = 1; vec <= 8; vec *= 2) {
                rk_kernel *k = vk(v, "lds");
                uint32_t dims[] = {16, 16, 16};
                rk_value s = rk_build_smem_alloc(k, elems[e], dims, rank);
                rk_value p = param_ptr(k, "P", elems[e]);
                rk_value tid = rk_build_thread_id(k, 0);
                rk_value c15 = rk_const_i32(k, 15);
                rk_value i = rk_build_and(k, tid, c15);
                rk_value c0 = rk_const_i32(k, 0);
                rk_value idx[3] = {i, i, c0};
                rk_value x = rk_load_global(k, p, tid, vec);
                rk_store_smem(k, s, idx, x);
                rk_build_sync(k);
                rk_value y = rk_load_smem(k, s, idx, vec);
                rk_store_global(k, p, tid, y);
                add(v, k);
            }
}

/* one-operand i32 cross-lane ops with their attribute variants */
static void lane_attrs(variants *v) {
    static const char *const kinds[] = {"umin", "umax", "min", "max", "add", "sub", "and", "or", "xor"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] + 4; i++) {
        rk_kernel *k = vk(v, "lane");
        rk_value p = param_ptr(k, "P", RK_T_I32);
        rk_value tid = rk_build_thread_id(k, 0);
        rk_value x = rk_load_global(k, p, tid, 1);
        rk_value r;
        if (i < sizeof kinds / sizeof kinds[0]) {
            const rk_wave_reduce_opts wo = {.strategy = RK_SOME((int64_t)(i % 3))};
            r = rk_build_wave_reduce_ex(k, kinds[i], x, &wo);
        } else {
            int64_t sh = i % 4 == 2 ? 15 : 1;
            const rk_mov_dpp_opts shl = {.row_shl = RK_SOME(sh), .bound_ctrl = RK_SOME(i >= sizeof kinds / sizeof kinds[0] + 2)};
            const rk_mov_dpp_opts shr = {.row_shr = RK_SOME(sh), .bound_ctrl = RK_SOME(i >= sizeof kinds / sizeof kinds[0] + 2)};
            r = rk_build_mov_dpp_ex(k, x, i % 2 ? &shl : &shr);
        }
        rk_store_global(k, p, tid, r);
        add(v, k);
    }
}

static void test_variants_compile(void **state) {
    (void)state;
    static const char *const names[] = {"gfx942"};   /* the variants lower alike on gfx950 */
    for (int t = 0; t < 1; t++) {
        variants v = {.target = names[t]};
        shuffles(&v);
        buffers(&v);
        atomics(&v);
        lds_shapes(&v);
        lane_attrs(&v);
        printf("%s: %u variant kernels\n", names[t], v.n);
        if (llc_path()) {
            char *text = llc_merge_text(&v.m), *log = NULL;
            if (llc_compile(text, "amdgcn-amd-amdhsa", names[t], &log) != 0)
                fail_msg("llc rejects the %s variants:\n%.4000s", names[t], log ? log : "");
            free(log);
            free(text);
        }
        llc_merge_free(&v.m);
    }
}

/* wave_all compares with the active lanes (ballot of true), never with -1 */
static void test_wave_all_active_mask(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("vote");
    rk_value p = param_ptr(k, "P", RK_T_I32);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value x = rk_load_global(k, p, tid, 1);
    rk_value all = rk_build_wave_all(k, x);
    rk_store_global(k, p, tid, all);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "gfx942", RK_LLVM22);
    expect_has(ll, "call i64 @llvm.amdgcn.ballot.i64(i1 true)");
    expect_lacks(ll, "i64 -1");
    rk_string_free(ll);
    rk_kernel_free(k);
}

static void test_inline_asm_escaping(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("asm");
    rk_value p = param_ptr(k, "P", RK_T_I32);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_type outs[] = {RK_T_I32, RK_T_I32};
    rk_op *op = rk_build_inline_asm(k, "v_mov_b32 $0, $2\n\"q\\\" v_mov_b32 $1, $2", "=v,=v,v", &tid, 1, outs, 2, true);
    rk_op_set_bool(k, op, "convergent", true);
    rk_store_global(k, p, tid, op->out[1]);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "gfx942", RK_LLVM22);
    expect_has(ll, "call { i32, i32 } asm sideeffect \"v_mov_b32 $0, $2\\0A\\22q\\5C\\22 v_mov_b32 $1, $2\", \"=v,=v,v\"(i32 %tid1)");
    expect_has(ll, "= extractvalue { i32, i32 } %asm.");
    expect_lacks(ll, "convergent");
    rk_string_free(ll);
    rk_kernel_free(k);
}

/* ---- out of memory ---------------------------------------------------------------------------------------- */
static long alloc_budget;   /* allocations left before failing; < 0 = unlimited */
static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud;
    (void)osize;
    if (nsize == 0) { free(ptr); return NULL; }
    if (alloc_budget == 0) return NULL;
    if (alloc_budget > 0) alloc_budget--;
    return realloc(ptr, nsize);
}

/* Fail allocation N for N = 0, 1, ... until lowering succeeds: every run
 * ends in RK_OK or RK_ERR_NOMEM, never a crash or a leak (ASan build). */
static void test_out_of_memory(void **state) {
    (void)state;
    rk_kernel *k = corpus_lds_barrier();
    assert_non_null(k);
    char *want = lower_ok(k, "gfx942", RK_LLVM22);
    rk_set_allocator(failing_alloc, NULL);
    long n = 0;
    for (;; n++) {
        alloc_budget = n;
        char *ll = NULL;
        rk_status s = rk_lower_llvm(k, tgt("gfx942"), RK_LLVM22, &ll);
        alloc_budget = -1;
        if (s == RK_OK) {
            assert_string_equal(ll, want);
            rk_string_free(ll);
            break;
        }
        if (s != RK_ERR_NOMEM) fail_msg("allocation %ld failing gave %s: %s", n, rk_status_name(s), rk_error_message());
        assert_null(ll);
    }
    rk_set_allocator(NULL, NULL);
    printf("succeeded once %ld allocations were allowed\n", n);
    rk_string_free(want);
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_flavors),
        cmocka_unit_test(test_waitcnt_encodings),
        cmocka_unit_test(test_buffer_word3_and_flavors),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_constants_and_names),
        cmocka_unit_test(test_declaration_order),
        cmocka_unit_test(test_lds_pool),
        cmocka_unit_test(test_unroll),
        cmocka_unit_test(test_nested_flow_and_return),
        cmocka_unit_test(test_deterministic_and_parse_identity),
        cmocka_unit_test(test_variants_compile),
        cmocka_unit_test(test_wave_all_active_mask),
        cmocka_unit_test(test_inline_asm_escaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
