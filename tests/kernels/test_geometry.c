/* rocke tests — launch geometry as data (src/kernels/geometry.c, geom_eval.h):
 * rk_instance_grid against the grid each family's rule gives, computed here
 * in double on fresh random odd shapes; the evaluator's clamps, saturation
 * and its refusal of malformed programs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rocke/rocke.h"
#include "kernels/geom_eval.h"

static uint64_t rnd(uint64_t lo, uint64_t hi) { return lo + (uint64_t)rand() % (hi - lo + 1); }
static double cdiv(double a, double b) { return ceil(a / b); }

/* a family's default instance, tuned for shape s on gfx942 */
static rk_instance tuned(rk_family_id f, rk_shape *s) {
    rk_instance in;
    rk_instance_default(f, &in);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("gfx942"), s, 0), RK_OK);
    return in;
}

static void random_shape(rk_family_id f, rk_shape *s, uint64_t hi) {
    rk_shape_default(f, s);
    for (uint32_t i = 0; i < s->rank; i++) s->dim[i] = rnd(1, hi) | 1;   /* odd extents */
}

static void test_families(void **state) {
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    srand(seed);
    printf("seed %u\n", seed);
    for (int it = 0; it < 20; it++) {
        uint32_t g[3], b[3];
        rk_shape s;
        random_shape(RK_FAMILY_ELEMENTWISE, &s, 1u << 22);
        rk_instance in = tuned(RK_FAMILY_ELEMENTWISE, &s);
        rk_instance_grid(&in, &s, g, b);
        assert_int_equal(g[0], cdiv((double)s.dim[0], (double)in.u.ew.block_size * in.u.ew.vec * in.u.ew.unroll));
        assert_int_equal(b[0], in.u.ew.block_size);
        assert_int_equal(g[1] * g[2] * b[1] * b[2], 1);

        random_shape(RK_FAMILY_TRANSPOSE, &s, 5000);
        in = tuned(RK_FAMILY_TRANSPOSE, &s);
        rk_instance_grid(&in, &s, g, b);
        assert_int_equal(g[0], cdiv((double)s.dim[0], in.u.transpose.tile_m) *
                                   cdiv((double)s.dim[1], in.u.transpose.tile_n));

        random_shape(RK_FAMILY_BATCHED_GEMM, &s, 700);
        in = tuned(RK_FAMILY_BATCHED_GEMM, &s);
        rk_instance_grid(&in, &s, g, b);
        const rk_gemm_spec *gs = &in.u.gemm;
        assert_int_equal(g[0], cdiv((double)s.dim[1], gs->tile[0]) * cdiv((double)s.dim[2], gs->tile[1]));
        assert_int_equal(g[1], gs->split_k);
        assert_int_equal(g[2], s.dim[0]);
        assert_int_equal(b[0], gs->warps[0] * gs->warps[1] * gs->wave);

        random_shape(RK_FAMILY_SOFTMAX, &s, 3000);
        in = tuned(RK_FAMILY_SOFTMAX, &s);
        rk_instance_grid(&in, &s, g, b);
        assert_int_equal(g[0], cdiv((double)s.dim[0], in.u.softmax.k.rows_per_block));
        assert_int_equal(g[1], in.u.softmax.k.slices > 1 ? in.u.softmax.k.slices : 1);
    }
}

static void test_evaluator(void **state) {
    (void)state;
    uint32_t g[3], b[3];
    const uint64_t dims[2] = {UINT64_MAX / 2, 3};
    /* MUL saturates, AXIS clamps to 2^31-1; CDIV rounds up; 0 clamps to 1 */
    rk_launch_geom p = {.n = 9, .block = {256, 0, 0},
                        .code = {RK_GEOM_WORD(RK_GEOM_DIM, 0), RK_GEOM_WORD(RK_GEOM_DIM, 0),
                                 RK_GEOM_WORD(RK_GEOM_MUL, 0), RK_GEOM_WORD(RK_GEOM_AXIS, 0),
                                 RK_GEOM_WORD(RK_GEOM_CONST, 7), RK_GEOM_WORD(RK_GEOM_DIM, 1),
                                 RK_GEOM_WORD(RK_GEOM_CDIV, 0), RK_GEOM_WORD(RK_GEOM_AXIS, 0),
                                 RK_GEOM_WORD(RK_GEOM_CONST, 0)}};
    p.code[9] = RK_GEOM_WORD(RK_GEOM_AXIS, 0);
    p.n = 10;
    assert_int_equal(rk_launch_geom_eval(&p, dims, 2, g, b), RK_OK);
    assert_int_equal(g[0], INT32_MAX);
    assert_int_equal(g[1], 3);
    assert_int_equal(g[2], 1);
    assert_int_equal(b[0], 256);
    assert_int_equal(b[1], 1);
    /* malformed: a dimension past the shape, an empty stack, a fourth axis, a left-over value, an unknown op */
    const uint64_t bad[][5] = {
        {RK_GEOM_WORD(RK_GEOM_DIM, 2), RK_GEOM_WORD(RK_GEOM_AXIS, 0)},
        {RK_GEOM_WORD(RK_GEOM_ADD, 0)},
        {RK_GEOM_WORD(RK_GEOM_CONST, 1), RK_GEOM_WORD(RK_GEOM_AXIS, 0), RK_GEOM_WORD(RK_GEOM_CONST, 1),
         RK_GEOM_WORD(RK_GEOM_AXIS, 0), RK_GEOM_WORD(RK_GEOM_CONST, 1)},
        {RK_GEOM_WORD(RK_GEOM_CONST, 1)},
        {RK_GEOM_WORD(99, 0)},
    };
    const uint32_t nbad[] = {2, 1, 5, 1, 1};
    for (size_t i = 0; i < sizeof nbad / sizeof *nbad; i++) {
        rk_launch_geom q = {.n = nbad[i]};
        memcpy(q.code, bad[i], sizeof bad[i]);
        if (i == 2) {   /* three axes, then a fourth */
            q.code[5] = RK_GEOM_WORD(RK_GEOM_AXIS, 0), q.code[6] = RK_GEOM_WORD(RK_GEOM_CONST, 1);
            q.code[7] = RK_GEOM_WORD(RK_GEOM_AXIS, 0), q.n = 8;
        }
        assert_int_equal(rk_launch_geom_eval(&q, dims, 2, g, b), RK_ERR_INVALID);
        assert_non_null(strstr(rk_error_message(), "malformed launch geometry"));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_families), cmocka_unit_test(test_evaluator)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
