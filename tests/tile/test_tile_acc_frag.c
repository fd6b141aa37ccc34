/* rocke tests — accumulators as rows and as A operands (tile_acc_frag.c):
 * for every atom of the catalog, a kernel fills a 2x2-atom accumulator tile
 * with a value of each element's (row, col), turns it into A fragments and
 * stores them; on the emulator every lane's fragment must hold the values
 * the A lane map names. The same kernels reduce each row (sum and max)
 * across the lanes the rows helper derives; the results must equal sums
 * computed here from the lane map. Batched atoms are refused by name.
 * Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/tile_mma.h"
#include "../src/base/fp.h"

static uint32_t seed_mul, seed_add;   /* fresh per run: the element values */

static uint32_t value_of(uint32_t row, uint32_t col) { return (row * seed_mul + col * 11u + seed_add) % 199u; }

static const rk_target *target_for(const rk_mma_atom *a) {
    if (a->lanes == 128) return rk_target_find("sm_90a");
    if (a->lanes == 32) return rk_target_find("sm_80");
    return rk_target_find(a->id == RK_ATOM_MFMA_F32_16X16X128_FP8 || a->id == RK_ATOM_MFMA_SCALE_F32_16X16X128_F8F6F4 ||
                          a->m * a->n * a->k == 16 * 16 * 32 || a->m * a->n * a->k == 32 * 32 * 16 ? "gfx950"
                                                                                                   : "gfx942");
}

/* The 16-bit or f32 type the fragments carry in this test. */
static rk_scalar elem_for(const rk_mma_atom *a) {
    return a->a_elem == RK_S_BF16 ? RK_S_BF16 : a->a_elem == RK_S_F32 ? RK_S_F32 : RK_S_F16;
}

static uint32_t gcd(uint32_t x, uint32_t y) { return y ? gcd(y, x % y) : x; }

typedef struct geo { uint32_t rows, cols, nacc, nfrag; } geo;
static geo geo_of(const rk_mma_atom *a) {
    uint32_t bm = a->m, bk = a->n / gcd(a->n, a->k) * a->k;
    geo g = {2 * bm, 2 * bk, 0, 0};
    g.nacc = g.rows / a->m * (g.cols / a->n);
    g.nfrag = g.rows / a->m * (g.cols / a->k);
    return g;
}

/* Out: nfrag * a_len * lanes fragment elements (elem), then Sum and Max:
 * (rows / m) * (cols / n) * c_len * lanes f32 row results. */
static rk_kernel *acc_kernel(const rk_mma_atom *a, const geo *g) {
    rk_scalar e = elem_for(a);
    rk_kernel *k = rk_kernel_new("acc_frag");
    rk_value out = rk_add_param(k, "Out", rk_type_ptr(k, (rk_type){e}, RK_AS_GLOBAL), NULL);
    rk_value red = rk_add_param(k, "Red", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value lane = rk_build_thread_id(k, 0);
    rk_value c199 = rk_const_i32(k, 199), cmul = rk_const_i32(k, (int32_t)seed_mul), c11 = rk_const_i32(k, 11);
    rk_value cadd = rk_const_i32(k, (int32_t)seed_add);
    rk_value acc[64];
    uint32_t nj = g->cols / a->n;
    for (uint32_t x = 0; x < g->nacc; x++) {
        rk_value el[64];
        for (uint32_t t = 0; t < a->c_len; t++) {
            rk_tile_frag_coord fc = rk_tile_atom_coord(k, a->id, RK_FRAG_C, lane, t);
            rk_value ro = rk_const_i32(k, (int32_t)(x / nj * a->m)), co = rk_const_i32(k, (int32_t)(x % nj * a->n));
            rk_value row = rk_build_add(k, fc.row, ro);
            rk_value col = rk_build_add(k, fc.col, co);
            rk_value r1 = rk_build_mul(k, row, cmul);
            rk_value c1 = rk_build_mul(k, col, c11);
            rk_value s = rk_build_add(k, r1, c1);
            rk_value s2 = rk_build_add(k, s, cadd);
            rk_value v = rk_build_umod(k, s2, c199);
            el[t] = rk_build_sitofp_f32(k, v);
        }
        acc[x] = a->c_len == 1 ? el[0] : rk_build_vpack(k, el, a->c_len);
    }
    rk_value frag[64];
    rk_tile_acc_scratch sc = {0};
    if (!rk_tile_acc_to_a_in_regs(a, a)) {
        uint32_t n = g->rows * g->cols;
        sc.smem = rk_build_smem_alloc(k, (rk_type){e}, &n, 1);
        sc.base = rk_const_i32(k, 0);
        assert_int_equal(rk_lds_layout_make(g->rows, g->cols, rk_tile_elem_bytes(e), 0, 0, 0, 0, &sc.lds), RK_OK);
    }
    rk_tile_acc_to_a(k, a, a, g->rows, g->cols, acc, e, lane, rk_tile_acc_to_a_in_regs(a, a) ? NULL : &sc, frag);
    for (uint32_t f = 0; f < g->nfrag; f++)
        for (uint32_t s = 0; s < a->a_len; s++) {
            rk_value base = rk_const_i32(k, (int32_t)((f * a->a_len + s) * a->lanes));
            rk_value at = rk_build_add(k, base, lane);
            rk_value x = a->a_len == 1 ? frag[f] : rk_build_vextract(k, frag[f], s);
            rk_store_global(k, out, at, x);
        }
    rk_tile_acc_rows rows;
    assert_int_equal(rk_tile_acc_rows_make(a, &rows), RK_OK);
    uint32_t per = g->nacc * a->c_len * a->lanes;
    for (uint32_t x = 0; x < g->nacc; x++)
        for (uint32_t r = 0; r < rows.nrows; r++) {
            rk_value sum = rk_const_f32(k, 0.0f), mx = rk_const_f32(k, -1.0f);
            for (uint32_t t = 0; t < a->c_len; t++) {
                if (rows.row_of_slot[t] != r) continue;
                rk_value v = a->c_len == 1 ? acc[x] : rk_build_vextract(k, acc[x], t);
                sum = rk_build_fadd(k, sum, v);
                mx = rk_build_fmax(k, mx, v);
            }
            sum = rk_tile_acc_row_reduce(k, &rows, RK_RED_SUM, sum);
            mx = rk_tile_acc_row_reduce(k, &rows, RK_RED_MAX, mx);
            rk_value base = rk_const_i32(k, (int32_t)((x * a->c_len + rows.row_slot0[r]) * a->lanes));
            rk_value at = rk_build_add(k, base, lane);
            rk_store_global(k, red, at, sum);
            rk_value off = rk_const_i32(k, (int32_t)per);
            rk_value at2 = rk_build_add(k, at, off);
            rk_store_global(k, red, at2, mx);
        }
    rk_kernel_set_attr_int(k, "max_workgroup_size", a->lanes);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) fail_msg("%s: %s", a->op_id, rk_builder_error(k));
    return k;
}

static double half_of(rk_scalar e, const void *buf, size_t i) {
    if (e == RK_S_F32) return ((const float *)buf)[i];
    uint16_t h = ((const uint16_t *)buf)[i];
    return e == RK_S_BF16 ? rk_bf16_to_f32(h) : rk_f16_to_f32(h);
}

static void check_atom(const rk_mma_atom *a) {
    geo g = geo_of(a);
    const rk_target *t = target_for(a);
    rk_scalar e = elem_for(a);
    rk_kernel *k = acc_kernel(a, &g);
    size_t nout = (size_t)g.nfrag * a->a_len * a->lanes, nred = 2 * (size_t)g.nacc * a->c_len * a->lanes;
    void *out = calloc(nout, 4);
    float *red = calloc(nred, sizeof *red);
    rk_emu *emu = rk_emu_new(t, NULL);
    uint64_t ao, ar;
    assert_int_equal(rk_emu_register(emu, out, nout * 4, "Out", &ao), RK_OK);
    assert_int_equal(rk_emu_register(emu, red, nred * sizeof *red, "Red", &ar), RK_OK);
    void *args[] = {&ao, &ar};
    uint32_t grid[3] = {1, 1, 1}, block[3] = {a->lanes, 1, 1};
    if (rk_emu_launch(emu, k, grid, block, 0, args)) fail_msg("%s on %s: %s", a->op_id, t->name, rk_error_message());
    uint32_t nq = g.cols / a->k;
    for (uint32_t f = 0; f < g.nfrag; f++)
        for (uint32_t s = 0; s < a->a_len; s++)
            for (uint32_t l = 0; l < a->lanes; l++) {
                rk_lane_coord c = rk_lane_map_eval(a->a_map, l, s);
                uint32_t row = f / nq * a->m + c.row, col = f % nq * a->k + c.col;
                double got = half_of(e, out, (f * a->a_len + s) * a->lanes + l);
                if (got != value_of(row, col))
                    fail_msg("%s (%s): fragment %u lane %u slot %u holds %g, A(%u, %u) is %u", a->op_id,
                             rk_tile_acc_to_a_in_regs(a, a) ? "registers" : "LDS", f, l, s, got, row, col,
                             value_of(row, col));
            }
    uint32_t nj = g.cols / a->n, per = g.nacc * a->c_len * a->lanes;
    rk_tile_acc_rows rows;
    assert_int_equal(rk_tile_acc_rows_make(a, &rows), RK_OK);
    for (uint32_t x = 0; x < g.nacc; x++)
        for (uint32_t r = 0; r < rows.nrows; r++)
            for (uint32_t l = 0; l < a->lanes; l++) {
                uint32_t row = x / nj * a->m + rk_lane_map_eval(a->c_map, l, rows.row_slot0[r]).row;
                double sum = 0, mx = -1;
                for (uint32_t c = 0; c < a->n; c++) {
                    double v = value_of(row, x % nj * a->n + c);
                    sum += v;
                    mx = v > mx ? v : mx;
                }
                size_t at = (x * a->c_len + rows.row_slot0[r]) * a->lanes + l;
                if (red[at] != sum || red[per + at] != mx)
                    fail_msg("%s lane %u row %u: sum %g max %g, want %g %g", a->op_id, l, row, red[at], red[per + at],
                             sum, mx);
            }
    rk_emu_free(emu);
    rk_kernel_free(k);
    free(out);
    free(red);
}

static void test_every_atom(void **state) {
    (void)state;
    uint32_t regs = 0, lds = 0;
    for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++) {
        const rk_mma_atom *a = *ap;
        if (a->batch != 1) {
            rk_tile_acc_rows rows;
            assert_int_equal(rk_tile_acc_rows_make(a, &rows), RK_ERR_INVALID);
            assert_non_null(strstr(rk_error_message(), a->op_id));
            assert_int_equal(rk_tile_acc_to_a_check(a, a, 64, 64), RK_ERR_INVALID);
            assert_non_null(strstr(rk_error_message(), "batched"));
            continue;
        }
        check_atom(a);
        if (rk_tile_acc_to_a_in_regs(a, a)) regs++;
        else lds++;
    }
    assert_true(regs > 0 && lds > 0);
}

/* The decisions the attention kernels rely on, and the derived row lanes. */
static void test_known_layouts(void **state) {
    (void)state;
    const rk_mma_atom *nv = rk_mma_atom_get(RK_ATOM_MMA_M16N8K16_F32_BF16);
    const rk_mma_atom *cd = rk_mma_atom_get(RK_ATOM_MFMA_F32_16X16X16_F16);
    const rk_mma_atom *c32 = rk_mma_atom_get(RK_ATOM_MFMA_F32_32X32X8_F16);
    assert_true(rk_tile_acc_to_a_in_regs(nv, nv));
    assert_false(rk_tile_acc_to_a_in_regs(cd, cd));
    rk_tile_acc_rows r;
    assert_int_equal(rk_tile_acc_rows_make(nv, &r), RK_OK);
    assert_int_equal(r.nmasks, 2);   /* the four threads of a group */
    assert_int_equal(r.xor_mask[0] | r.xor_mask[1], 3);
    assert_int_equal(r.nrows, 2);
    assert_int_equal(rk_tile_acc_rows_make(cd, &r), RK_OK);
    assert_int_equal(r.nmasks, 4);   /* 16 lanes per row */
    assert_int_equal(r.nrows, 4);
    assert_int_equal(rk_tile_acc_rows_make(c32, &r), RK_OK);
    assert_int_equal(r.nmasks, 5);
    assert_int_equal(r.nrows, 16);
    assert_int_equal(rk_tile_acc_to_a_check(nv, nv, 16, 24), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "16x24"));
    assert_int_equal(rk_tile_acc_to_a_check(nv, cd, 16, 16), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "lanes"));
}

int main(void) {
    uint64_t s = (uint64_t)time(NULL);
    const char *env = getenv("ROCKE_SEED");
    if (env) s = strtoull(env, NULL, 10);
    printf("seed %llu\n", (unsigned long long)s);
    seed_mul = 3 + (uint32_t)(s % 97) * 2;   /* odd: rows stay apart */
    seed_add = (uint32_t)(s / 97 % 199);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_atom),
        cmocka_unit_test(test_known_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
