/* rocke tests — warp grids and block-id remaps on the emulator: each
 * thread's lane, warp and (m, n, k) warp position; the grouped-M order and
 * the XCD remap over odd grids with run-time and constant sizes, against
 * their formulas, checked to be bijections, and with the locality each one
 * promises (a group walks group_m tile rows column by column; C consecutive
 * new ids run on one die). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/tile_grid.h"

/* Run a kernel over `threads` threads (blocks of `block`) writing `per`
 * i32 per thread to Out; P holds run-time parameters. */
static int32_t *run(const char *target, rk_kernel *k, uint32_t threads, uint32_t block, uint32_t per,
                    const int32_t *P, uint32_t np) {
    rk_build_return(k);
    if (rk_kernel_finish(k)) fail_msg("%s", rk_builder_error(k));
    /* room for every launched thread; only the first `threads` are checked */
    size_t launched = (size_t)(threads + block - 1) / block * block;
    int32_t *out = calloc(launched * per, 4);
    int32_t pb[8] = {0};
    if (np) memcpy(pb, P, np * 4);
    rk_emu *e = rk_emu_new(rk_target_find(target), NULL);
    uint64_t ao, ap;
    assert_int_equal(rk_emu_register(e, out, launched * per * 4, "Out", &ao), RK_OK);
    assert_int_equal(rk_emu_register(e, pb, sizeof pb, "P", &ap), RK_OK);
    void *args[] = {&ao, &ap};
    uint32_t g[3] = {(threads + block - 1) / block, 1, 1}, b[3] = {block, 1, 1};
    if (rk_emu_launch(e, k, g, b, 0, args)) fail_msg("%s: %s", target, rk_error_message());
    rk_emu_free(e);
    rk_kernel_free(k);
    return out;
}

static rk_kernel *start(rk_value *out, rk_value *P) {
    rk_kernel *k = rk_kernel_new("grid");
    rk_type pi = rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL);
    *out = rk_add_param(k, "Out", pi, NULL);
    *P = rk_add_param(k, "P", pi, NULL);
    return k;
}

static void put(rk_kernel *k, rk_value out, rk_value gid, uint32_t per, uint32_t slot, rk_ix v) {
    rk_value pv = rk_const_i32(k, (int32_t)per);
    rk_value row = rk_build_mul(k, gid, pv);
    rk_value s = rk_const_i32(k, (int32_t)slot);
    rk_value at = rk_build_add(k, row, s);
    rk_value vv = rk_ix_value(k, v);
    rk_store_global(k, out, at, vv);
}

static rk_value global_id(rk_kernel *k) {
    rk_value bid = rk_build_block_id(k, 0);
    rk_value bdim = rk_build_block_dim(k, 0);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value b = rk_build_mul(k, bid, bdim);
    return rk_build_add(k, b, tid);
}

static void test_warps(void **state) {
    (void)state;
    const uint32_t grids[][4] = {{64, 2, 2, 1}, {64, 4, 1, 1}, {32, 2, 4, 1}, {32, 2, 2, 2}, {64, 1, 1, 1}};
    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; i++) {
        const uint32_t *gr = grids[i];
        rk_value out, P;
        rk_kernel *k = start(&out, &P);
        rk_tile_warps w;
        assert_int_equal(rk_tile_warps_begin(k, gr[0], gr[1], gr[2], gr[3], &w), RK_OK);
        rk_ix vals[5] = {rk_ix_v(w.lane), rk_ix_v(w.warp), rk_ix_v(w.wm), rk_ix_v(w.wn), rk_ix_v(w.wk)};
        for (uint32_t s = 0; s < 5; s++) put(k, out, w.tid, 5, s, vals[s]);
        int32_t *o = run(gr[0] == 64 ? "gfx942" : "sm_90", k, w.threads * gr[0], w.threads * gr[0], 5, NULL, 0);
        for (uint32_t t = 0; t < w.threads * gr[0]; t++) {
            uint32_t warp = t / gr[0];
            uint32_t want[5] = {t % gr[0], warp, (warp / gr[2]) % gr[1], warp % gr[2], warp / (gr[2] * gr[1])};
            for (int s = 0; s < 5; s++)
                if ((uint32_t)o[5 * t + s] != want[s]) fail_msg("grid %zu thread %u field %d: %d want %u", i, t, s, o[5 * t + s], want[s]);
        }
        free(o);
    }
    rk_kernel *k = rk_kernel_new("bad");
    rk_tile_warps w;
    assert_int_equal(rk_tile_warps_begin(k, 48, 1, 1, 1, &w), RK_ERR_INVALID);
    assert_int_equal(rk_tile_warps_begin(k, 64, 4, 4, 2, &w), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "1024"));
    rk_kernel_free(k);
}

static void test_group_m(void **state) {
    (void)state;
    const uint32_t cases[][3] = {{7, 5, 3}, {8, 8, 4}, {1, 9, 8}, {13, 1, 4}, {11, 6, 1}, {5, 7, 16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t tm = cases[i][0], tn = cases[i][1], gm = cases[i][2], total = tm * tn;
        for (int dynamic = 0; dynamic < 2; dynamic++) {
            rk_value out, P;
            rk_kernel *k = start(&out, &P);
            rk_value gid = global_id(k);
            rk_value i0 = rk_const_i32(k, 0), i1 = rk_const_i32(k, 1);
            rk_value ptm = rk_load_global(k, P, i0, 1);
            rk_value ptn = rk_load_global(k, P, i1, 1);
            rk_ix TM = dynamic ? rk_ix_v(ptm) : rk_ix_c(tm), TN = dynamic ? rk_ix_v(ptn) : rk_ix_c(tn);
            rk_ix pm, pn;
            rk_tile_group_m(k, rk_ix_v(gid), TM, TN, gm, &pm, &pn);
            put(k, out, gid, 2, 0, pm);
            put(k, out, gid, 2, 1, pn);
            int32_t prm[2] = {(int32_t)tm, (int32_t)tn};
            int32_t *o = run(dynamic ? "sm_90" : "gfx942", k, total, 64, 2, prm, 2);
            char *seen = calloc(total, 1);
            for (uint32_t p = 0; p < total; p++) {
                /* the definition: groups of gm tile rows, walked column by column */
                uint32_t per = gm * tn, g = p / per, first = g * gm;
                uint32_t size = tm - first < gm ? tm - first : gm;
                uint32_t wm = first + (p % per) % size, wn = (p % per) / size;
                if ((uint32_t)o[2 * p] != wm || (uint32_t)o[2 * p + 1] != wn)
                    fail_msg("case %zu pid %u: (%d, %d) want (%u, %u)", i, p, o[2 * p], o[2 * p + 1], wm, wn);
                assert_true(wm < tm && wn < tn);
                assert_false(seen[wm * tn + wn]);
                seen[wm * tn + wn] = 1;
            }
            free(seen);
            free(o);
        }
    }
}

static void test_xcd_remap(void **state) {
    (void)state;
    const uint32_t cases[][3] = {{1000, 8, 4}, {64, 8, 8}, {63, 8, 8}, {517, 8, 64}, {96, 3, 5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t W = cases[i][0], X = cases[i][1], C = cases[i][2];
        rk_value out, P;
        rk_kernel *k = start(&out, &P);
        rk_value gid = global_id(k);
        rk_value i0 = rk_const_i32(k, 0);
        rk_value pw = rk_load_global(k, P, i0, 1);
        rk_ix r = rk_tile_xcd_remap(k, rk_ix_v(gid), rk_ix_v(pw), X, C);
        put(k, out, gid, 1, 0, r);
        int32_t prm[1] = {(int32_t)W};
        int32_t *o = run("gfx942", k, W, 64, 1, prm, 1);
        char *seen = calloc(W, 1);
        int32_t *die_of_new = malloc(W * sizeof *die_of_new);
        uint32_t limit = W / (X * C) * X * C;
        for (uint32_t w = 0; w < W; w++) {
            uint32_t want = w;
            if (w < limit) want = (w / X) / C * X * C + (w % X) * C + (w / X) % C;
            if ((uint32_t)o[w] != want) fail_msg("case %zu w %u: %d want %u", i, w, o[w], want);
            assert_true(want < W);
            assert_false(seen[want]);
            seen[want] = 1;
            die_of_new[want] = (int32_t)(w % X);   /* hardware places block w on die w % X */
        }
        /* locality: every aligned run of C new ids below the limit is on one die */
        for (uint32_t n = 0; n < limit; n++) assert_int_equal(die_of_new[n], die_of_new[n / C * C]);
        free(seen);
        free(die_of_new);
        free(o);
    }
    /* one die or chunk 0: identity without IR */
    rk_kernel *k = rk_kernel_new("id");
    rk_ix w = rk_tile_xcd_remap(k, rk_ix_c(5), rk_ix_c(100), 1, 8);
    assert_false(w.dyn);
    assert_int_equal(w.c, 5);
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warps),
        cmocka_unit_test(test_group_m),
        cmocka_unit_test(test_xcd_remap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
