/* rocke tests — LDS layouts and bank conflicts: the analysis on patterns
 * whose cost is known (unit stride, strides, broadcast, wide accesses in
 * phases); the hardware swizzle modes are bijections and make a column of
 * 16-byte chunks conflict-free where the plain tile serializes; the
 * swizzle that serves ldmatrix on 64-byte rows; padding; IR offsets on the
 * emulator equal the host's; bad layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/tile_lds.h"

static void test_conflict_model(void **state) {
    (void)state;
    uint32_t off[64], cyc;
    for (uint32_t i = 0; i < 32; i++) off[i] = 4 * i;
    assert_int_equal(rk_lds_conflict_ways(off, 32, 4, 32, &cyc), 1);
    assert_int_equal(cyc, 1);
    for (uint32_t i = 0; i < 32; i++) off[i] = 8 * i;   /* stride 2 words: 2 ways */
    assert_int_equal(rk_lds_conflict_ways(off, 32, 4, 32, NULL), 2);
    for (uint32_t i = 0; i < 32; i++) off[i] = 128 * i; /* one bank: 32 ways */
    assert_int_equal(rk_lds_conflict_ways(off, 32, 4, 32, NULL), 32);
    for (uint32_t i = 0; i < 32; i++) off[i] = 64;      /* one word: broadcast */
    assert_int_equal(rk_lds_conflict_ways(off, 32, 4, 32, NULL), 1);
    for (uint32_t i = 0; i < 32; i++) off[i] = 16 * i;  /* 16-byte vectors: 4 phases of 8 lanes */
    assert_int_equal(rk_lds_conflict_ways(off, 32, 16, 32, &cyc), 1);
    assert_int_equal(cyc, 4);
    for (uint32_t i = 0; i < 64; i++) off[i] = 16 * i;  /* a wave64 */
    assert_int_equal(rk_lds_conflict_ways(off, 64, 16, 32, &cyc), 1);
    assert_int_equal(cyc, 8);
    for (uint32_t i = 0; i < 8; i++) off[i] = 128 * i;  /* 8 rows of 128 B, same column */
    assert_int_equal(rk_lds_conflict_ways(off, 8, 16, 32, NULL), 8);
    for (uint32_t i = 0; i < 32; i++) off[i] = 8 * i;   /* 8-byte vectors: 2 phases of 16 */
    assert_int_equal(rk_lds_conflict_ways(off, 32, 8, 32, &cyc), 1);
    assert_int_equal(cyc, 2);
}

static void test_hw_swizzles(void **state) {
    (void)state;
    /* mode M swizzles 16-byte chunks within M-byte spans; rows of M bytes */
    const uint32_t modes[] = {32, 64, 128};
    for (int mi = 0; mi < 3; mi++) {
        uint32_t mode = modes[mi], cols = mode / 2;   /* f16 */
        rk_lds_layout plain, sw;
        assert_int_equal(rk_lds_layout_make(64, cols, 2, 0, 0, 0, 0, &plain), RK_OK);
        assert_int_equal(rk_lds_layout_hw_swizzle(64, cols, 2, mode, &sw), RK_OK);
        assert_true(rk_lds_layout_is_bijective(&sw));
        assert_int_equal(rk_lds_layout_bytes(&sw), 64 * mode);
        /* the swizzle keeps each 16-byte chunk whole and within its 128-byte line group */
        for (uint32_t r = 0; r < 64; r++)
            for (uint32_t c = 0; c < cols; c++) {
                uint32_t o = rk_lds_offset(&sw, r, c), p = rk_lds_offset(&plain, r, c);
                assert_int_equal(o % 16, p % 16);
                assert_int_equal(o / 1024, p / 1024);
            }
        /* a column of chunks across 8 rows: the plain layout serializes when rows share banks */
        uint32_t off[8];
        uint32_t chunks = mode / 16;
        for (uint32_t c = 0; c < chunks; c++) {
            for (uint32_t r = 0; r < 8; r++) off[r] = rk_lds_offset(&sw, r, c * 8);
            uint32_t w = rk_lds_conflict_ways(off, 8, 16, 32, NULL);
            for (uint32_t r = 0; r < 8; r++) off[r] = rk_lds_offset(&plain, r, c * 8);
            uint32_t wp = rk_lds_conflict_ways(off, 8, 16, 32, NULL);
            /* rows of M bytes: 128/M rows share a 128-byte line, so the plain
             * column costs 8/(128/M) ways; every swizzle mode makes it free */
            assert_int_equal(wp, 8 / (128 / mode));
            assert_int_equal(w, 1);
        }
    }
    /* the 128-byte mode on 128-byte rows: fully conflict-free columns */
    rk_lds_layout sw;
    assert_int_equal(rk_lds_layout_hw_swizzle(8, 64, 2, 128, &sw), RK_OK);
    uint32_t off[8];
    for (uint32_t c = 0; c < 8; c++) {
        for (uint32_t r = 0; r < 8; r++) off[r] = rk_lds_offset(&sw, r, c * 8);
        assert_int_equal(rk_lds_conflict_ways(off, 8, 16, 32, NULL), 1);
    }
}

/* ldmatrix on an A tile of 32 halves per row (64 B): each phase of 8 lanes
 * reads one 16-byte row chunk of 8 consecutive rows */
static void test_ldmatrix_rows(void **state) {
    (void)state;
    rk_lds_layout plain, sw, padded;
    assert_int_equal(rk_lds_layout_make(64, 32, 2, 0, 0, 0, 0, &plain), RK_OK);
    assert_int_equal(rk_lds_layout_make(64, 32, 2, 0, 2, 4, 3, &sw), RK_OK);
    assert_int_equal(rk_lds_layout_make(64, 32, 2, 8, 0, 0, 0, &padded), RK_OK);
    assert_true(rk_lds_layout_is_bijective(&sw));
    assert_int_equal(rk_lds_layout_bytes(&padded), 64 * 40 * 2);
    for (uint32_t r0 = 0; r0 < 64; r0 += 8)
        for (uint32_t c = 0; c < 4; c++) {
            uint32_t op[8], os[8], od[8];
            for (uint32_t i = 0; i < 8; i++) {
                op[i] = rk_lds_offset(&plain, r0 + i, 8 * c);
                os[i] = rk_lds_offset(&sw, r0 + i, 8 * c);
                od[i] = rk_lds_offset(&padded, r0 + i, 8 * c);
            }
            assert_int_equal(rk_lds_conflict_ways(op, 8, 16, 32, NULL), 4);
            assert_int_equal(rk_lds_conflict_ways(os, 8, 16, 32, NULL), 1);
            assert_int_equal(rk_lds_conflict_ways(od, 8, 16, 32, NULL), 1);
        }
    /* and the cp.async stores of the same tile (lane t: row t/4, chunk t%4) stay conflict-free */
    uint32_t st[32];
    for (uint32_t t = 0; t < 32; t++) st[t] = rk_lds_offset(&sw, t / 4, 8 * (t % 4));
    assert_int_equal(rk_lds_conflict_ways(st, 32, 16, 32, NULL), 1);
}

static void test_ir_offsets(void **state) {
    (void)state;
    rk_lds_layout ls[4];
    assert_int_equal(rk_lds_layout_make(24, 40, 2, 8, 0, 0, 0, &ls[0]), RK_OK);
    assert_int_equal(rk_lds_layout_hw_swizzle(16, 64, 2, 128, &ls[1]), RK_OK);
    assert_int_equal(rk_lds_layout_make(13, 17, 4, 3, 2, 4, 3, &ls[2]), RK_OK);
    assert_int_equal(rk_lds_layout_make(9, 32, 1, 0, 3, 4, 4, &ls[3]), RK_OK);
    for (int li = 0; li < 4; li++) {
        const rk_lds_layout *l = &ls[li];
        rk_kernel *k = rk_kernel_new("lds_off");
        rk_value out = rk_add_param(k, "Out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
        rk_kernel_set_attr_int(k, "max_workgroup_size", 1024);
        rk_value tid = rk_build_thread_id(k, 0);
        rk_value cols = rk_const_i32(k, (int32_t)l->cols);
        rk_value row = rk_build_udiv(k, tid, cols);
        rk_value col = rk_build_umod(k, tid, cols);
        rk_ix o = rk_tile_lds_offset(k, l, rk_ix_v(row), rk_ix_v(col));
        rk_value ov = rk_ix_value(k, o);
        rk_store_global(k, out, tid, ov);
        rk_build_return(k);
        assert_int_equal(rk_kernel_finish(k), RK_OK);
        uint32_t n = l->rows * l->cols, blocks = (n + 63) / 64;
        int32_t *got = calloc((size_t)blocks * 64, 4);
        rk_emu *e = rk_emu_new(rk_target_find(li % 2 ? "sm_90" : "gfx942"), NULL);
        uint64_t ao;
        assert_int_equal(rk_emu_register(e, got, (size_t)blocks * 64 * 4, "Out", &ao), RK_OK);
        void *args[] = {&ao};
        uint32_t g[3] = {1, 1, 1}, b[3] = {blocks * 64, 1, 1};
        if (rk_emu_launch(e, k, g, b, 0, args)) fail_msg("%s", rk_error_message());
        for (uint32_t i = 0; i < n; i++) assert_int_equal((uint32_t)got[i], rk_lds_offset(l, i / l->cols, i % l->cols));
        rk_emu_free(e);
        rk_kernel_free(k);
        free(got);
        /* constants fold */
        rk_kernel *k2 = rk_kernel_new("fold");
        uint64_t before = rk_kernel_op_count(k2);
        rk_ix c = rk_tile_lds_offset(k2, l, rk_ix_c(l->rows - 1), rk_ix_c(l->cols - 1));
        assert_false(c.dyn);
        assert_int_equal(c.c, rk_lds_offset(l, l->rows - 1, l->cols - 1));
        assert_int_equal(rk_kernel_op_count(k2), before);
        rk_kernel_free(k2);
    }
}

static void test_bad_layouts(void **state) {
    (void)state;
    rk_lds_layout l;
    assert_int_equal(rk_lds_layout_make(0, 8, 2, 0, 0, 0, 0, &l), RK_ERR_INVALID);
    assert_int_equal(rk_lds_layout_make(8, 8, 3, 0, 0, 0, 0, &l), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "1, 2, 4, 8"));
    assert_int_equal(rk_lds_layout_make(8, 8, 2, 0, 3, 4, 2, &l), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "S >= B"));
    assert_int_equal(rk_lds_layout_hw_swizzle(8, 8, 2, 48, &l), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "0, 32, 64, 128"));
    assert_int_equal(rk_lds_layout_make(8192, 8192, 4, 0, 0, 0, 0, &l), RK_ERR_INVALID);
    /* the swizzle permutes 16-byte chunks inside 128-byte lines: a tile that
     * ends inside a line can send its last elements past its end */
    assert_int_equal(rk_lds_layout_hw_swizzle(3, 20, 2, 128, &l), RK_OK);
    assert_true(rk_lds_layout_is_bijective(&l));
    assert_int_equal(rk_lds_layout_hw_swizzle(25, 8, 2, 128, &l), RK_OK);   /* 400 bytes */
    assert_false(rk_lds_layout_is_bijective(&l));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conflict_model), cmocka_unit_test(test_hw_swizzles),
        cmocka_unit_test(test_ldmatrix_rows),  cmocka_unit_test(test_ir_offsets),
        cmocka_unit_test(test_bad_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
