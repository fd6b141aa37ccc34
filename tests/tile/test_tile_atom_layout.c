/* rocke tests — rk_tile_atom_coord: for every atom of the catalog a kernel
 * computes the (row, col, batch) of every slot of every fragment from the
 * thread id with the emitted IR, runs on the emulator (one wave, warp or
 * warpgroup), and each lane's result is compared with rk_lane_map_eval;
 * constant lanes fold to constants with the same values; bad arguments fail
 * the builder with a message naming them. Layer: tests. */
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

static const rk_frag frags[] = {RK_FRAG_A, RK_FRAG_B, RK_FRAG_C};
static const char *const frag_names[] = {"A", "B", "C"};

/* A target that runs the atom's lanes as one block. */
static const rk_target *target_for(const rk_mma_atom *a) {
    return rk_target_find(a->lanes == 64 ? "gfx950" : a->lanes == 32 ? "sm_90" : "sm_90a");
}

/* Slots of all three fragments before fragment f (the output's layout). */
static uint32_t slots_before(const rk_mma_atom *a, int f) {
    uint32_t n = 0;
    for (int i = 0; i < f; i++) n += rk_mma_atom_len(a, frags[i]);
    return n;
}

/* out[((slot_base + s) * lanes + lane) * 3 + {0, 1, 2}] = row, col, batch */
static rk_kernel *coord_kernel(const rk_mma_atom *a) {
    rk_kernel *k = rk_kernel_new("atom_coords");
    rk_value out = rk_add_param(k, "Out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value lane = rk_build_thread_id(k, 0);
    rk_value three = rk_const_i32(k, 3);
    rk_value l3 = rk_build_mul(k, lane, three);
    for (int f = 0; f < 3; f++)
        for (uint32_t s = 0; s < rk_mma_atom_len(a, frags[f]); s++) {
            rk_tile_frag_coord c = rk_tile_atom_coord(k, a->id, frags[f], lane, s);
            int32_t base = (int32_t)((slots_before(a, f) + s) * a->lanes * 3u);
            rk_value b = rk_const_i32(k, base);
            rk_value at = rk_build_add(k, l3, b);
            rk_store_global(k, out, at, c.row);
            rk_value one = rk_const_i32(k, 1);
            rk_value at1 = rk_build_add(k, at, one);
            rk_store_global(k, out, at1, c.col);
            rk_value two = rk_const_i32(k, 2);
            rk_value at2 = rk_build_add(k, at, two);
            rk_store_global(k, out, at2, c.batch);
        }
    rk_kernel_set_attr_int(k, "max_workgroup_size", a->lanes);
    rk_build_return(k);
    if (rk_kernel_finish(k) != RK_OK) fail_msg("%s: %s", a->op_id, rk_builder_error(k));
    return k;
}

static void test_emitted_ir_matches_the_evaluator(void **state) {
    (void)state;
    for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++) {
        const rk_mma_atom *a = *ap;
        const rk_target *t = target_for(a);
        rk_kernel *k = coord_kernel(a);
        size_t n = (size_t)slots_before(a, 3) * a->lanes * 3;
        int32_t *got = malloc(n * sizeof *got);
        assert_non_null(got);
        memset(got, 0xff, n * sizeof *got);   /* -1: never written */
        rk_emu *e = rk_emu_new(t, NULL);
        assert_non_null(e);
        uint64_t addr;
        assert_int_equal(rk_emu_register(e, got, n * sizeof *got, "Out", &addr), RK_OK);
        void *args[] = {&addr};
        uint32_t grid[3] = {1, 1, 1}, block[3] = {a->lanes, 1, 1};
        if (rk_emu_launch(e, k, grid, block, 0, args)) fail_msg("%s on %s: %s", a->op_id, t->name, rk_error_message());
        for (int f = 0; f < 3; f++)
            for (uint32_t s = 0; s < rk_mma_atom_len(a, frags[f]); s++)
                for (uint32_t l = 0; l < a->lanes; l++) {
                    rk_lane_coord want = rk_lane_map_eval(rk_mma_atom_map(a, frags[f]), l, s);
                    const int32_t *g = &got[((slots_before(a, f) + s) * a->lanes + l) * 3];
                    if (g[0] != (int32_t)want.row || g[1] != (int32_t)want.col || g[2] != (int32_t)want.batch)
                        fail_msg("%s %s lane %u slot %u: IR gives (%d, %d, %d), the map (%u, %u, %u)", a->op_id,
                                 frag_names[f], l, s, g[0], g[1], g[2], want.row, want.col, want.batch);
                }
        rk_emu_free(e);
        rk_kernel_free(k);
        free(got);
    }
}

static int64_t const_value(const rk_kernel *k, rk_value v) {
    const rk_op *d = rk_value_def(k, v);
    int64_t x = -1;
    if (!d || d->code != RK_OP_CONSTANT || !rk_attrs_int(&d->attrs, "value", &x)) fail_msg("not an integer constant");
    return x;
}

static void test_constant_lane_folds(void **state) {
    (void)state;
    for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++) {
        const rk_mma_atom *a = *ap;
        rk_kernel *k = rk_kernel_new("folded");
        uint32_t before = rk_kernel_nvalues(k);
        uint32_t made = 0;
        for (int f = 0; f < 3; f++)
            for (uint32_t l = 0; l < a->lanes; l += 1 + l % 3)   /* lanes 0, 1, 3, 4, 5, 7 ...: odd steps */
                for (uint32_t s = 0; s < rk_mma_atom_len(a, frags[f]); s++) {
                    rk_value lane = rk_const_i32(k, (int32_t)l);
                    rk_tile_frag_coord c = rk_tile_atom_coord(k, a->id, frags[f], lane, s);
                    rk_lane_coord want = rk_lane_map_eval(rk_mma_atom_map(a, frags[f]), l, s);
                    assert_int_equal(const_value(k, c.row), want.row);
                    assert_int_equal(const_value(k, c.col), want.col);
                    assert_int_equal(const_value(k, c.batch), want.batch);
                    made += 4;   /* the lane and three results */
                }
        assert_int_equal(rk_builder_status(k), RK_OK);
        assert_int_equal(rk_kernel_nvalues(k) - before, made);   /* no arithmetic was emitted */
        rk_kernel_free(k);
    }
}

/* The builder fails with a message holding every fragment (NULL-ended). */
static void expect_failure(rk_kernel *k, ...) {
    assert_int_not_equal(rk_builder_status(k), RK_OK);
    va_list ap;
    va_start(ap, k);
    for (const char *f = va_arg(ap, const char *); f; f = va_arg(ap, const char *))
        if (!strstr(rk_builder_error(k), f)) fail_msg("message lacks '%s': %s", f, rk_builder_error(k));
    va_end(ap);
}

static void test_bad_arguments(void **state) {
    (void)state;
    const rk_mma_atom *a = rk_mma_atom_get(RK_ATOM_MMA_M16N8K16_F32_F16);
    assert_non_null(a);
    rk_kernel *k = rk_kernel_new("bad_slot");
    rk_value tid = rk_build_thread_id(k, 0);
    rk_tile_frag_coord c = rk_tile_atom_coord(k, a->id, RK_FRAG_B, tid, 4);
    assert_int_equal(c.row.id, 0);
    expect_failure(k, "slot 4", "fragment B", "mma_m16n8k16_f32_f16", "0..3", NULL);
    rk_kernel_free(k);

    k = rk_kernel_new("bad_atom");
    tid = rk_build_thread_id(k, 0);
    rk_tile_atom_coord(k, RK_ATOM__COUNT, RK_FRAG_A, tid, 0);
    expect_failure(k, "unknown matrix atom id", "atoms.def", NULL);
    rk_kernel_free(k);

    k = rk_kernel_new("bad_frag");
    tid = rk_build_thread_id(k, 0);
    rk_tile_atom_coord(k, a->id, (rk_frag)3, tid, 0);
    expect_failure(k, "unknown fragment 3", "RK_FRAG_A, RK_FRAG_B, RK_FRAG_C", NULL);
    rk_kernel_free(k);

    k = rk_kernel_new("bad_lane_type");
    rk_value wide = rk_const_i64(k, 3);
    rk_tile_atom_coord(k, a->id, RK_FRAG_A, wide, 0);
    expect_failure(k, "must be i32", "i64", NULL);
    rk_kernel_free(k);

    k = rk_kernel_new("bad_lane");
    rk_value lane = rk_const_i32(k, 32);
    rk_tile_atom_coord(k, a->id, RK_FRAG_A, lane, 0);
    expect_failure(k, "lane 32", "0..31", NULL);
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_emitted_ir_matches_the_evaluator),
        cmocka_unit_test(test_constant_lane_folds),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
