/* rocke tests — the tile helpers, each in a small kernel run on the
 * emulator for a wave64 (gfx942) and a warp32 (sm_90) target: butterfly
 * reductions at every width up to the target's wave size (all lanes end with
 * identical bits), block reductions through LDS (groups larger than a wave,
 * with and without the trailing barrier), row views with tails and
 * unaligned rows in both tail modes, split views (a peeled head per row),
 * and the grid-stride loop. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/tile.h"
#include "../src/base/fp.h"

static const char *const targets[] = {"gfx942", "sm_90"};

static rk_kernel *start(const char *name, rk_value *p, int nptr, int nscalar) {
    rk_kernel *k = rk_kernel_new(name);
    const char *pn[] = {"In", "Out", "Aux"};
    for (int i = 0; i < nptr; i++) p[i] = rk_add_param(k, pn[i], rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    for (int i = 0; i < nscalar; i++) p[nptr + i] = rk_add_param(k, i ? "M" : "N", RK_T_I32, NULL);
    return k;
}

static void launch(const rk_target *t, rk_kernel *k, uint32_t grid, uint32_t block, void **bufs, size_t *bytes,
                   int nptr, const int32_t *scalars, int nscalar) {
    rk_build_return(k);
    if (rk_kernel_finish(k)) fail_msg("%s", rk_builder_error(k));
    rk_emu *e = rk_emu_new(t, NULL);
    uint64_t addr[4];
    void *args[8];
    for (int i = 0; i < nptr; i++) {
        assert_int_equal(rk_emu_register(e, bufs[i], bytes[i], NULL, &addr[i]), RK_OK);
        args[i] = &addr[i];
    }
    for (int i = 0; i < nscalar; i++) args[nptr + i] = (void *)&scalars[i];
    uint32_t g[3] = {grid, 1, 1}, b[3] = {block, 1, 1};
    if (rk_emu_launch(e, k, g, b, 0, args)) fail_msg("%s: %s", t->name, rk_error_message());
    rk_emu_free(e);
    rk_kernel_free(k);
}

static void test_wave_reduce(void **state) {
    (void)state;
    for (int ti = 0; ti < 2; ti++) {
        const rk_target *t = rk_target_find(targets[ti]);
        for (uint32_t w = 1; w <= t->wave_size; w *= 2)
            for (int op = 0; op < 3; op++) {
                rk_value p[2];
                rk_kernel *k = start("wave_reduce", p, 2, 0);
                rk_value tid = rk_build_thread_id(k, 0);
                rk_value v = rk_load_global(k, p[0], tid, 1);
                rk_value r = rk_tile_wave_reduce(k, (rk_tile_red)op, v, w);
                rk_store_global(k, p[1], tid, r);
                enum { B = 128 };
                float in[B], out[B];
                for (int i = 0; i < B; i++) in[i] = (float)((i * 37 % 101) - 50) / 7.0f;
                void *bufs[] = {in, out};
                size_t bytes[] = {sizeof in, sizeof out};
                launch(t, k, 1, B, bufs, bytes, 2, NULL, 0);
                for (int g = 0; g < B; g += (int)w) {
                    double want = rk_tile_red_identity((rk_tile_red)op);
                    for (uint32_t i = 0; i < w; i++) {
                        double x = in[g + (int)i];
                        want = op == RK_RED_SUM ? want + x : op == RK_RED_MAX ? fmax(want, x) : fmin(want, x);
                    }
                    for (uint32_t i = 0; i < w; i++) {
                        if (fabs(out[g + (int)i] - want) > 1e-4)
                            fail_msg("%s width %u op %d lane %d: %g want %g", t->name, w, op, g + (int)i,
                                     out[g + (int)i], want);
                        assert_memory_equal(&out[g], &out[g + (int)i], sizeof(float));   /* same bits */
                    }
                }
            }
    }
}

static void test_block_reduce(void **state) {
    (void)state;
    for (int ti = 0; ti < 2; ti++) {
        const rk_target *t = rk_target_find(targets[ti]);
        const uint32_t groups_list[] = {1, 2, 4};
        for (int gi = 0; gi < 3; gi++)
            for (int trailing = 0; trailing < 2; trailing++) {
                enum { B = 512 };
                uint32_t groups = groups_list[gi], group = B / groups;
                rk_value p[2];
                rk_kernel *k = start("block_reduce", p, 2, 0);
                rk_kernel_set_attr_int(k, "max_workgroup_size", B);
                rk_value tid = rk_build_thread_id(k, 0);
                rk_value v = rk_load_global(k, p[0], tid, 1);
                rk_tile_block_cfg cfg = {.wave = t->wave_size, .group = group, .groups = groups,
                                         .trailing_barrier = trailing};
                rk_value s = rk_tile_block_reduce(k, RK_RED_SUM, &cfg, tid, v);
                rk_value m = rk_tile_block_reduce(k, RK_RED_MAX, &cfg, tid, v);
                rk_store_global(k, p[1], tid, rk_build_fadd(k, s, rk_build_fmul(k, m, rk_const_f32(k, 1000.0f))));
                float in[B], out[B];
                for (int i = 0; i < B; i++) in[i] = (float)((i * 53 % 211) - 100) / 16.0f;
                void *bufs[] = {in, out};
                size_t bytes[] = {sizeof in, sizeof out};
                launch(t, k, 1, B, bufs, bytes, 2, NULL, 0);
                for (uint32_t g = 0; g < groups; g++) {
                    double sum = 0, mx = -INFINITY;
                    for (uint32_t i = 0; i < group; i++) {
                        sum += in[g * group + i];
                        mx = fmax(mx, in[g * group + i]);
                    }
                    for (uint32_t i = 0; i < group; i++) {
                        float o = out[g * group + i];
                        if (fabs(o - (sum + 1000 * mx)) > 1e-2)
                            fail_msg("%s groups %u: thread %u got %g want %g", t->name, groups, g * group + i, o,
                                     sum + 1000 * mx);
                        assert_memory_equal(&out[g * group], &out[g * group + i], sizeof(float));
                    }
                }
            }
    }
}

/* Copy rows of a [M, stride] f16 matrix through row views: 3 chunks of 8 per
 * thread, lengths not a multiple of 8, odd strides (unaligned rows). */
static void test_row_view(void **state) {
    (void)state;
    for (int ti = 0; ti < 2; ti++)
        for (int mode = 0; mode < 2; mode++) {
            const rk_target *t = rk_target_find(targets[ti]);
            const int32_t shapes[][2] = {{53, 53}, {64, 64}, {77, 80}, {8, 9}, {1, 1}};
            for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
                int32_t len = shapes[si][0], stride = shapes[si][1], M = 3;
                rk_kernel *k = rk_kernel_new("row_copy");
                rk_value X = rk_add_param(k, "X", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
                rk_value Y = rk_add_param(k, "Y", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
                rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
                rk_value S = rk_add_param(k, "S", RK_T_I32, NULL);
                rk_value Mv = rk_add_param(k, "M", RK_T_I32, NULL);
                rk_tile_rows g = rk_tile_rows_begin(k, 8, 1, t->wave_size, Mv);
                rk_tile_row xr = rk_tile_row_view(k, X, RK_S_F16, g.row, S, N, g.active, 8, (rk_tail_mode)mode);
                rk_tile_row yr = rk_tile_row_view(k, Y, RK_S_F16, g.row, S, N, g.active, 8, (rk_tail_mode)mode);
                rk_tile_regs r;
                rk_tile_regs_load(k, &xr, g.lt, 8, 3, -7.0, &r);
                /* y = x + 1 where in range; past len the fill (-7) must never be stored */
                for (uint32_t c = 0; c < r.n; c++) r.v[c] = rk_tile_add(k, r.v[c], rk_tile_f32s(k, 1.0f, 8));
                rk_tile_row_store_f32(k, &yr, r.off, r.n, r.v);
                rk_build_return(k);
                if (rk_kernel_finish(k)) fail_msg("%s", rk_builder_error(k));
                size_t n = (size_t)(M * stride);
                uint16_t *x = calloc(n, 2), *y = calloc(n, 2);
                for (size_t i = 0; i < n; i++) { x[i] = rk_f32_to_f16((float)(i % 97)); y[i] = 0x7e00; }
                rk_emu *e = rk_emu_new(t, NULL);
                uint64_t ax, ay;
                rk_emu_register(e, x, n * 2, "X", &ax);
                rk_emu_register(e, y, n * 2, "Y", &ay);
                void *args[] = {&ax, &ay, &len, &stride, &M};
                uint32_t gr[3] = {(uint32_t)M + 1, 1, 1}, bl[3] = {8, 1, 1};   /* one block past M: inactive */
                if (rk_emu_launch(e, k, gr, bl, 0, args)) fail_msg("%s: %s", t->name, rk_error_message());
                for (int32_t row = 0; row < M; row++)
                    for (int32_t j = 0; j < stride; j++) {
                        size_t i = (size_t)(row * stride + j);
                        uint16_t want = j < len ? rk_f32_to_f16(rk_f16_to_f32(x[i]) + 1.0f) : 0x7e00;
                        if (y[i] != want)
                            fail_msg("%s %s len %d stride %d: Y[%d,%d] = %04x want %04x", t->name,
                                     rk_tail_mode_name((rk_tail_mode)mode), len, stride, row, j, y[i], want);
                    }
                rk_emu_free(e);
                rk_kernel_free(k);
                free(x);
                free(y);
            }
        }
}

/* Split views: rows at any start element (odd strides, X and Y strided
 * differently), 3 chunks of 8 per thread (a cached row of cap 192). Per row
 * thread 0 writes x's shift and whether x and y take the aligned vector
 * path; the host checks that the shifted element 0 sits on a vec boundary,
 * that a row falls back unshifted exactly when it would not fit, and that
 * every element is copied once, none outside the row. */
static void test_row_split(void **state) {
    (void)state;
    const uint32_t vec = 8, cap = 8 * 8 * 3;
    for (int ti = 0; ti < 2; ti++)
        for (int mode = 0; mode < 2; mode++) {
            const rk_target *t = rk_target_find(targets[ti]);
            const int32_t shapes[][3] = {{53, 53, 53}, {77, 77, 80}, {185, 190, 185}, {190, 190, 190},
                                         {1, 1, 1},    {9, 9, 16},   {3, 3, 5}};
            for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
                int32_t len = shapes[si][0], sx = shapes[si][1], sy = shapes[si][2], M = 5;
                rk_kernel *k = rk_kernel_new("row_split_copy");
                rk_value X = rk_add_param(k, "X", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
                rk_value Y = rk_add_param(k, "Y", rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL), NULL);
                rk_value I = rk_add_param(k, "Info", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
                rk_value N = rk_add_param(k, "N", RK_T_I32, NULL);
                rk_value SX = rk_add_param(k, "SX", RK_T_I32, NULL);
                rk_value SY = rk_add_param(k, "SY", RK_T_I32, NULL);
                rk_value Mv = rk_add_param(k, "M", RK_T_I32, NULL);
                rk_tile_rows g = rk_tile_rows_begin(k, 8, 1, t->wave_size, Mv);
                rk_tail_mode tm = (rk_tail_mode)mode;
                rk_tile_row xr = rk_tile_row_view_split(k, X, RK_S_F16, g.row, SX, N, g.active, vec, tm, NULL, cap);
                rk_tile_row yr = rk_tile_row_view_split(k, Y, RK_S_F16, g.row, SY, N, g.active, vec, tm, &xr, 0);
                rk_tile_regs r;
                rk_tile_regs_load(k, &xr, g.lt, 8, 3, -7.0, &r);
                for (uint32_t c = 0; c < r.n; c++) r.v[c] = rk_tile_add(k, r.v[c], rk_tile_f32s(k, 1.0f, vec));
                rk_tile_row_store_f32(k, &yr, r.off, r.n, r.v);
                rk_value first = rk_build_cmp(k, "eq", g.lt, rk_const_i32(k, 0));
                rk_if_begin(k, rk_build_and(k, first, g.active));
                rk_value three = rk_const_i32(k, 3);
                rk_value at = rk_build_mul(k, g.row, three);
                rk_value at1 = rk_build_add(k, at, rk_const_i32(k, 1));
                rk_value at2 = rk_build_add(k, at, rk_const_i32(k, 2));
                rk_store_global(k, I, at, xr.lo);
                rk_store_global(k, I, at1, rk_build_zext(k, xr.vec_ok, RK_T_I32));
                rk_store_global(k, I, at2, rk_build_zext(k, yr.vec_ok, RK_T_I32));
                rk_if_end(k, NULL, 0);
                rk_build_return(k);
                if (rk_kernel_finish(k)) fail_msg("%s", rk_builder_error(k));
                size_t nx = (size_t)(M * sx), ny = (size_t)(M * sy);
                uint16_t *x = calloc(nx, 2), *y = calloc(ny, 2);
                int32_t info[15];
                for (size_t i = 0; i < nx; i++) x[i] = rk_f32_to_f16((float)(i % 97));
                for (size_t i = 0; i < ny; i++) y[i] = 0x7e00;
                rk_emu *e = rk_emu_new(t, NULL);
                uint64_t ax, ay, ai;
                rk_emu_register(e, x, nx * 2, "X", &ax);
                rk_emu_register(e, y, ny * 2, "Y", &ay);
                rk_emu_register(e, info, sizeof info, "Info", &ai);
                void *args[] = {&ax, &ay, &ai, &len, &sx, &sy, &M};
                uint32_t gr[3] = {(uint32_t)M + 1, 1, 1}, bl[3] = {8, 1, 1};
                if (rk_emu_launch(e, k, gr, bl, 0, args)) fail_msg("%s: %s", t->name, rk_error_message());
                for (int32_t row = 0; row < M; row++) {
                    int32_t mis = (row * sx) % (int32_t)vec, lo = info[3 * row];
                    int32_t want_lo = len + mis <= (int32_t)cap ? mis : 0;
                    if (lo != want_lo || info[3 * row + 1] != (lo == mis) ||
                        info[3 * row + 2] != ((row * sy) % (int32_t)vec == lo))
                        fail_msg("%s len %d strides %d/%d row %d: shift %d (want %d), vec_ok x %d y %d", t->name,
                                 len, sx, sy, row, lo, want_lo, info[3 * row + 1], info[3 * row + 2]);
                    if (info[3 * row + 1]) assert_int_equal((row * sx - lo) % (int32_t)vec, 0);
                    for (int32_t j = 0; j < sy; j++) {
                        uint16_t want = j < len ? rk_f32_to_f16(rk_f16_to_f32(x[row * sx + j]) + 1.0f) : 0x7e00;
                        if (y[row * sy + j] != want)
                            fail_msg("%s %s len %d strides %d/%d: Y[%d,%d] = %04x want %04x", t->name,
                                     rk_tail_mode_name(tm), len, sx, sy, row, j, y[row * sy + j], want);
                    }
                }
                rk_emu_free(e);
                rk_kernel_free(k);
                free(x);
                free(y);
            }
        }
}

/* Every tile index of the grid-stride loop runs exactly once. */
static void test_grid_loop(void **state) {
    (void)state;
    for (int ti = 0; ti < 2; ti++) {
        const rk_target *t = rk_target_find(targets[ti]);
        rk_value p[3];
        rk_kernel *k = start("grid_loop", p, 1, 1);
        rk_value tid = rk_build_thread_id(k, 0);
        rk_value i = rk_tile_grid_loop_begin(k, p[1]);
        rk_if_begin(k, rk_build_cmp(k, "eq", tid, rk_const_i32(k, 0)));
        rk_value old = rk_load_global(k, p[0], i, 1);
        rk_store_global(k, p[0], i, rk_build_fadd(k, old, rk_const_f32(k, 1.0f)));
        rk_if_end(k, NULL, 0);
        rk_tile_loop_end(k);
        float hits[101] = {0};
        int32_t count = 101;
        void *bufs[] = {hits};
        size_t bytes[] = {sizeof hits};
        launch(t, k, 7, 32, bufs, bytes, 1, &count, 1);
        for (int j = 0; j < 101; j++) assert_true(hits[j] == 1.0f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wave_reduce), cmocka_unit_test(test_block_reduce), cmocka_unit_test(test_row_view),
        cmocka_unit_test(test_row_split), cmocka_unit_test(test_grid_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
