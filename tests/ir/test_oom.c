/* rocke tests — out of memory, SQLite style: fail allocation N (once, then
 * from N on) for N = 1, 2, ... until a build + verify + optimise of a small
 * kernel completes without a failure; every run must end in success or
 * RK_ERR_NOMEM, never crash, and leak nothing (checked here by counting and
 * under ASan). A kernel that was optimised when memory ran out must still
 * verify. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rocke/ir.h"

static long counter, fail_at;
static bool persistent, failed;
static long live;

static void *hook(void *ud, void *p, size_t osize, size_t nsize) {
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        if (p) live--;
        free(p);
        return NULL;
    }
    counter++;
    if (counter == fail_at || (persistent && counter > fail_at)) {
        failed = true;
        return NULL;
    }
    void *q = realloc(p, nsize);
    if (q && !p) live++;
    return q;
}

/* The kernel: params, a loop with a carry, an if_else, constants to fold,
 * duplicates to merge, dead code, an mma, LDS. */
static rk_kernel *build(rk_status *st) {
    rk_kernel *k = rk_kernel_new("oom");
    if (!k) {
        *st = RK_ERR_NOMEM;
        return NULL;
    }
    rk_value x = rk_add_param(k, "x", RK_T_I32, NULL);
    rk_value p = rk_add_param(k, "p", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value h = rk_add_param(k, "h", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value two = rk_const_i32(k, 2), three = rk_const_i32(k, 3);
    rk_value six = rk_build_mul(k, two, three);
    rk_value six2 = rk_build_mul(k, three, two);
    rk_value lo = rk_const_i32(k, 0), st1 = rk_const_i32(k, 1), acc, res;
    rk_value f0 = rk_load_global(k, p, tid, 1);
    const char *names[] = {"acc"};
    rk_value iv = rk_for_begin(k, lo, six, st1, "k0", 1, &f0, names, &acc);
    rk_value fi = rk_build_sitofp(k, iv, RK_T_F32);
    rk_value nx = rk_build_fadd(k, acc, fi);
    rk_build_add(k, iv, six2);                                    /* dead */
    rk_for_end(k, &nx, 1, &res);
    rk_value c = rk_build_cmp(k, "lt", tid, x);
    rk_value r;
    rk_type f32 = RK_T_F32;
    rk_if_else_begin(k, c, 1, &f32, &r);
    rk_value n1 = rk_build_fneg(k, res);
    rk_else(k, &n1, 1);
    rk_if_end(k, &res, 1);
    uint32_t dims[] = {256};
    rk_value lds = rk_build_smem_alloc(k, RK_T_F32, dims, 1);
    rk_store_smem(k, lds, &tid, r);
    rk_build_sync(k);
    rk_value v = rk_load_smem(k, lds, &tid, 1);
    rk_value a = rk_load_global(k, h, tid, 4);
    rk_value cz = rk_build_constant_vec(k, rk_type_vec(k, RK_T_F32, 4), 0.0);
    rk_value d = rk_build_mma(k, "mfma_f32_16x16x16_f16", a, a, cz);
    rk_value e = rk_build_vextract(k, d, 0);
    rk_value s = rk_build_fadd(k, v, e);
    /* bulk: enough ops to grow the value table and span several arena chunks */
    rk_value sum = x;
    for (int i = 0; i < 150; i++) {
        rk_value ci = rk_const_i32(k, i % 7);
        rk_value m = rk_build_mul(k, ci, two);            /* folds, and repeats: CSE */
        rk_value t = rk_build_add(k, sum, m);
        rk_build_xor(k, t, ci);                           /* dead */
        sum = t;
    }
    rk_value xs = rk_build_sitofp(k, sum, RK_T_F32);
    s = rk_build_fadd(k, s, xs);
    rk_store_global(k, p, tid, s);
    rk_build_return(k);
    *st = rk_kernel_finish(k);
    return k;
}

typedef struct outcome { bool complete; long allocations; } outcome;

static outcome run_once(long n, bool persist) {
    counter = 0;
    fail_at = n;
    persistent = persist;
    failed = false;
    live = 0;
    rk_set_allocator(hook, NULL);
    rk_status st;
    rk_kernel *k = build(&st);
    bool built = k && st == RK_OK;
    if (!built) assert_int_equal(st, RK_ERR_NOMEM);
    rk_status ost = RK_OK;
    if (built) {
        rk_diags d;
        rk_diags_init(&d);
        rk_status vst = rk_verify(k, NULL, &d);
        if (vst != RK_OK) assert_int_equal(vst, RK_ERR_NOMEM);
        char *t = rk_diags_text(&d);
        rk_string_free(t);
        rk_diags_free(&d);
        rk_pass_stats ps;
        ost = rk_optimize(k, 0, &ps);
        if (ost != RK_OK) assert_int_equal(ost, RK_ERR_NOMEM);
        /* the builder is still usable after a pass ran out */
        assert_int_equal(rk_builder_status(k), RK_OK);
    }
    bool was_failed = failed;
    rk_set_allocator(NULL, NULL);
    if (built) {
        /* with memory back, the (maybe partly optimised) kernel verifies */
        rk_diags d;
        rk_diags_init(&d);
        rk_status vst = rk_verify(k, NULL, &d);
        if (vst != RK_OK) {
            char *t = rk_diags_text(&d);
            fail_msg("N=%ld%s: kernel no longer verifies after %s:\n%s", n, persist ? " (persistent)" : "",
                     rk_status_name(ost), t);
        }
        rk_diags_free(&d);
    }
    /* free through the counting hook (its failure point is long past) */
    fail_at = 0;
    rk_set_allocator(hook, NULL);
    rk_kernel_free(k);
    rk_set_allocator(NULL, NULL);
    assert_int_equal(live, 0);
    return (outcome){!was_failed, counter};
}

static void oom_mode(bool persist) {
    long n;
    for (n = 1; n < 100000; n++) {
        outcome o = run_once(n, persist);
        if (o.complete) break;
    }
    print_message("%s: first complete run at N = %ld\n", persist ? "persistent" : "transient", n);
    assert_true(n > 10);                 /* the run does allocate */
    assert_true(n < 100000);
}

static void test_oom_transient(void **state) {
    (void)state;
    oom_mode(false);
}

static void test_oom_persistent(void **state) {
    (void)state;
    oom_mode(true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oom_transient),
        cmocka_unit_test(test_oom_persistent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
