/* rocke — builder-made kernels through the whole pipeline (verify, passes,
 * lower, compile, link) for gfx90a, gfx942, gfx950 and sm_90: artifacts with
 * IR text, LLVM IR, a code object whose metadata matches the kernel, stage
 * timings; ops illegal on a target refused before LLVM; the golden kernels
 * on every AMD target (cached under the build folder, so reruns are quick). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"
#include "rocke/analysis.h"
#include "support/op_samples.h"
#include "base/base_int.h"

/* out[i] = sum over a 256-wide LDS tile of in[], in a loop over N tiles. */
static rk_kernel *build_tile_sum(void) {
    rk_kernel *k = rk_kernel_new("tile_sum");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    const rk_param_abi ro = {.noalias = true, .readonly = true};
    rk_value in = rk_add_param(k, "in", pf, &ro);
    rk_value out = rk_add_param(k, "out", pf, NULL);
    rk_value n = rk_add_param(k, "N", RK_T_I32, NULL);
    uint32_t dims[1] = {256};
    rk_value tile = rk_build_smem_alloc(k, RK_T_F32, dims, 1);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value c0 = rk_const_i32(k, 0), c1 = rk_const_i32(k, 1), c256 = rk_const_i32(k, 256);
    rk_value acc0 = rk_const_f32(k, 0.0f), acc, res;
    rk_value iv = rk_for_begin(k, c0, n, c1, NULL, 1, &acc0, NULL, &acc);
    rk_value base = rk_build_mul(k, iv, c256);
    rk_value idx = rk_build_add(k, base, tid);
    rk_value x = rk_load_global(k, in, idx, 1);
    rk_store_smem(k, tile, &tid, x);
    rk_build_sync(k);
    rk_value other = rk_build_xor(k, tid, c1);
    rk_value y = rk_load_smem(k, tile, &other, 1);
    rk_value s = rk_build_fadd(k, x, y);
    rk_value next = rk_build_fadd(k, acc, s);
    rk_build_sync(k);
    rk_for_end(k, &next, 1, &res);
    rk_store_global(k, out, tid, res);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static rk_compile_options opts(const rk_target *t) {
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(t, &o), RK_OK);
    o.toolchain = RK_TOOLCHAIN_AUTO;
    o.cache = false;
    return o;
}

static void test_builder_kernel_all_targets(void **state) {
    (void)state;
    rk_kernel *k = build_tile_sum();
    static const char *const targets[] = {"gfx90a", "gfx942", "gfx950", "sm_90"};
    for (unsigned i = 0; i < 4; i++) {
        const rk_target *t = rk_target_find(targets[i]);
        rk_compile_options o = opts(t);
        rk_artifact *a = NULL;
        rk_status s = rk_compile(k, t, &o, &a);
        if (s == RK_ERR_UNSUPPORTED && t->vendor == RK_VENDOR_NVIDIA) {
            fprintf(stderr, "SKIP %s: %s\n", t->name, rk_error_message());
            continue;
        }
        if (s != RK_OK) fprintf(stderr, "%s: %s\n", t->name, rk_error_message());
        assert_int_equal(s, RK_OK);
        assert_string_equal(a->kernel_name, "tile_sum");
        assert_true(!strncmp(a->ir_text, "ckdsl.ir v1", 11));
        assert_non_null(strstr(a->llvm_ir, "@tile_sum"));
        assert_true(a->ms.lower > 0 && a->ms.compile > 0 && a->ms.total >= a->ms.lower + a->ms.compile);
        if (t->vendor == RK_VENDOR_AMD) {
            rk_hsaco_info info;
            assert_int_equal(rk_analyze_hsaco(a->binary, a->binary_size, NULL, &info), RK_OK);
            assert_int_equal(info.nkernels, 1);
            assert_string_equal(info.kernels[0].name, "tile_sum");
            assert_string_equal(info.arch, t->name);
            assert_true(info.kernels[0].lds_bytes >= 256 * 4);
            assert_int_equal(info.kernels[0].max_flat_workgroup_size, rk_kernel_max_workgroup_size(k));
        } else {
            assert_non_null(strstr((const char *)a->binary, ".entry tile_sum"));
        }
        rk_artifact_free(a);
    }
    rk_kernel_free(k);
}

/* run_passes works on a copy: the caller's kernel is unchanged, the
 * artifact's IR text is the optimized one. */
static void test_passes_on_a_copy(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("folded");
    rk_type pf = rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL);
    rk_value out = rk_add_param(k, "out", pf, NULL);
    rk_value a = rk_const_i32(k, 20), b = rk_const_i32(k, 22);
    rk_value c = rk_build_add(k, a, b);
    rk_value d = rk_build_mul(k, c, rk_const_i32(k, 1));
    rk_value tid = rk_build_thread_id(k, 0);
    rk_store_global(k, out, tid, d);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *before = rk_serialize(k);
    const rk_target *t = rk_target_find("gfx942");
    rk_compile_options o = opts(t);
    o.run_passes = true;
    rk_artifact *art = NULL;
    assert_int_equal(rk_compile(k, t, &o, &art), RK_OK);
    char *after = rk_serialize(k);
    assert_string_equal(before, after);
    assert_true(strlen(art->ir_text) < strlen(before));
    assert_non_null(strstr(art->ir_text, "42"));
    assert_true(art->ms.passes > 0);
    rk_artifact_free(art);
    rk_string_free(before);
    rk_string_free(after);
    rk_kernel_free(k);
}

/* d = mfma_f32_16x16x32_f16(a, b, c): a gfx950-only atom. */
static rk_kernel *build_gfx950_mma(void) {
    rk_kernel *k = rk_kernel_new("mma950");
    rk_value A = rk_add_param(k, "A", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    rk_value C = rk_add_param(k, "C", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value i8 = rk_build_mul(k, tid, rk_const_i32(k, 8));
    rk_value i4 = rk_build_mul(k, tid, rk_const_i32(k, 4));
    rk_value a = rk_load_global(k, A, i8, 8);
    rk_value c = rk_load_global(k, C, i4, 4);
    rk_value d = rk_build_mma(k, "mfma_f32_16x16x32_f16", a, a, c);
    rk_store_global(k, C, i4, d);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

/* Illegal op/target pairs are stopped by the verifier: LLVM never sees them
 * (a gfx950 MFMA on gfx942 would abort inside libLLVM). */
static void test_illegal_ops_refused(void **state) {
    (void)state;
    rk_kernel *ks[2] = {op_sample_kernel(RK_OP_S_WAITCNT, "gfx942"), build_gfx950_mma()};
    const char *targets[2] = {"sm_90", "gfx942"};
    for (unsigned i = 0; i < 2; i++) {
        assert_non_null(ks[i]);
        const rk_target *t = rk_target_find(targets[i]);
        rk_compile_options o = opts(t);
        o.inprocess = true; /* were the pair to reach LLVM, this test would die */
        rk_artifact *a = NULL;
        rk_status s = rk_compile(ks[i], t, &o, &a);
        if (s != RK_ERR_VERIFY)
            fprintf(stderr, "%s on %s: %d %s\n", rk_kernel_name(ks[i]), targets[i], s, rk_error_message());
        assert_int_equal(s, RK_ERR_VERIFY);
        assert_null(a);
        assert_non_null(strstr(rk_error_message(), targets[i]));
        rk_kernel_free(ks[i]);
    }
    /* the same MFMA kernel is fine on gfx950 */
    rk_kernel *k = build_gfx950_mma();
    const rk_target *t = rk_target_find("gfx950");
    rk_compile_options o = opts(t);
    rk_artifact *a = NULL;
    assert_int_equal(rk_compile(k, t, &o, &a), RK_OK);
    rk_artifact_free(a);
    rk_kernel_free(k);
}

/* The golden kernels (loops, if/else, LDS + barriers, MFMA, reductions)
 * through the whole pipeline on every AMD target, cached under the build
 * folder so reruns cost a cache hit each. */
static void test_golden_kernels(void **state) {
    (void)state;
    static const char *const files[] = {"vector_add", "if_else", "lds_barrier", "mma", "row_reduce"};
    static const char *const targets[] = {"gfx90a", "gfx942", "gfx950"};
    for (unsigned f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[512], *text;
        size_t n;
        snprintf(path, sizeof path, "%s/tests/golden/%s.ir", ROCKE_SOURCE_DIR, files[f]);
        if (rk_read_file(path, &text, &n) != RK_OK) {
            fprintf(stderr, "SKIP %s: %s\n", files[f], rk_error_message());
            continue;
        }
        rk_kernel *k = NULL;
        assert_int_equal(rk_parse(text, n, &k), RK_OK);
        for (unsigned i = 0; i < 3; i++) {
            const rk_target *t = rk_target_find(targets[i]);
            rk_compile_options o = opts(t);
            o.cache = true;
            snprintf(o.cache_dir, sizeof o.cache_dir, "%s/test-compile-cache", ROCKE_BINARY_DIR);
            rk_artifact *a = NULL;
            rk_status s = rk_compile(k, t, &o, &a);
            if (s == RK_ERR_VERIFY) { /* e.g. an atom this chip lacks: refused, not crashed */
                fprintf(stderr, "%s refused on %s (verifier)\n", files[f], t->name);
                continue;
            }
            if (s != RK_OK) fprintf(stderr, "%s on %s: %s\n", files[f], t->name, rk_error_message());
            assert_int_equal(s, RK_OK);
            rk_hsaco_info info;
            assert_int_equal(rk_analyze_hsaco(a->binary, a->binary_size, NULL, &info), RK_OK);
            assert_string_equal(info.kernels[0].name, rk_kernel_name(k));
            rk_artifact_free(a);
        }
        rk_kernel_free(k);
        rk_free(text, n + 1);
    }
}

int main(void) {
    unsetenv("ROCKE_TOOLCHAIN");
    unsetenv("ROCKE_LLVM_FLAVOR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder_kernel_all_targets),
        cmocka_unit_test(test_passes_on_a_copy),
        cmocka_unit_test(test_illegal_ops_refused),
        cmocka_unit_test(test_golden_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
