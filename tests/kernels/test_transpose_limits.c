/* rocke tests — the transpose and permute tiles' per-thread limit: every
 * knob combination validation accepts builds (the builds assert at most 16
 * vectors per thread, 32 with split, edge vectors included), and one it
 * refuses names the rule and the smallest block_size that fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/ir.h"
#include "rocke/kernels.h"
#include "rocke/target.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static rk_status make(rk_family_id fam, const char *tm, const char *tn, const char *vec, const char *block,
                      const char *split, rk_instance *in) {
    assert_int_equal(rk_instance_default(fam, in), RK_OK);
    assert_int_equal(rk_instance_set(in, "dtype", "f16", NULL), RK_OK);
    assert_int_equal(rk_instance_set(in, "tile_m", tm, NULL), RK_OK);
    assert_int_equal(rk_instance_set(in, "tile_n", tn, NULL), RK_OK);
    assert_int_equal(rk_instance_set(in, "vec", vec, NULL), RK_OK);
    assert_int_equal(rk_instance_set(in, "block_size", block, NULL), RK_OK);
    assert_int_equal(rk_instance_set(in, "split", split, NULL), RK_OK);
    return rk_instance_validate(in, rk_target_find("gfx942"));
}

static void test_accepted_combinations_build(void **state) {
    (void)state;
    static const rk_family_id fams[] = {RK_FAMILY_TRANSPOSE, RK_FAMILY_PERMUTE};
    static const char *const tiles[] = {"16", "64", "128"};
    static const char *const vecs[] = {"1", "2", "8"};
    static const char *const blocks[] = {"32", "64", "256", "1024"};
    static const char *const splits[] = {"false", "true"};
    const rk_target *t = rk_target_find("gfx942");
    assert_non_null(t);
    uint32_t built = 0, refused = 0;
    for (size_t f = 0; f < COUNT(fams); f++)
        for (size_t a = 0; a < COUNT(tiles); a++)
            for (size_t b = 0; b < COUNT(tiles); b++)
                for (size_t v = 0; v < COUNT(vecs); v++)
                    for (size_t k = 0; k < COUNT(blocks); k++)
                        for (size_t s = 0; s < COUNT(splits); s++) {
                            rk_instance in;
                            if (make(fams[f], tiles[a], tiles[b], vecs[v], blocks[k], splits[s], &in)) {
                                refused++;
                                continue;
                            }
                            rk_kernel *kern = NULL;
                            assert_int_equal(rk_instance_build(&in, t, &kern), RK_OK);
                            rk_kernel_free(kern);
                            built++;
                        }
    /* both sides of the rule are exercised */
    assert_true(built > 100 && refused > 20);
}

static void test_refusal_names_rule(void **state) {
    (void)state;
    rk_instance in;
    /* 64 x 128 / vec 1 / 256 threads: 32 vectors, 33 with the split edge */
    assert_int_equal(make(RK_FAMILY_TRANSPOSE, "64", "128", "1", "256", "true", &in), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "33 vectors per thread, at most 32 with split=true"));
    assert_non_null(strstr(rk_error_message(), "block_size >= 512"));
    assert_int_equal(make(RK_FAMILY_TRANSPOSE, "64", "128", "1", "256", "false", &in), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "32 vectors per thread, at most 16 with split=false"));
    assert_non_null(strstr(rk_error_message(), "block_size >= 512"));
    /* the smallest that fits is accepted */
    assert_int_equal(make(RK_FAMILY_TRANSPOSE, "64", "128", "1", "512", "true", &in), RK_OK);
    assert_int_equal(make(RK_FAMILY_TRANSPOSE, "64", "128", "1", "512", "false", &in), RK_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_accepted_combinations_build),
                                       cmocka_unit_test(test_refusal_names_rule)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
