/* rocke tests — shape variants of the row families: for a grid of shapes the
 * kernel a build without --shape runs (rk_manifest_pick over the variants'
 * ranges, as `rocke run` picks) is the kernel the heuristic picks for that
 * shape (split views on: a variant takes any base), for every row family,
 * dtype and a warp32 and a wave64 target. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/kernels.h"
#include "rocke/manifest.h"
#include "rocke/target.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static rk_variant var[RK_MANIFEST_MAX_VARIANTS];
static rk_manifest top;
static uint32_t split_knob;   /* the index of knob split */

/* The instance of fam for dtype, as a build without --shape gets it (the
 * variants lock split views on themselves: a variant takes any base). */
static void base_of(rk_family_id fam, const char *dtype, rk_instance *in, uint64_t *locked) {
    uint32_t ix;
    assert_int_equal(rk_instance_default(fam, in), RK_OK);
    assert_int_equal(rk_instance_set(in, "dtype", dtype, NULL), RK_OK);
    if (fam != RK_FAMILY_REDUCE) assert_int_equal(rk_instance_set(in, "out_dtype", dtype, NULL), RK_OK);
    assert_int_equal(rk_instance_set(in, "split", "true", &ix), RK_OK);
    *locked = 0;
    split_knob = ix;
    /* variants keep to direct rows (row_variants.c): the heuristic's pick
     * at a shape with the stage locked so */
    if (rk_instance_set(in, "stage", "direct", &ix) == RK_OK) *locked |= 1ull << ix;
}

static void name_of(const rk_instance *in, char *buf) { assert_int_equal(rk_instance_name(in, buf, 256), RK_OK); }

/* Remove the first "_<tag><digits>" (tag "mb": the occupancy hint) or
 * "_<tag>" from name. */
static void drop_part(char *name, const char *part, bool digits) {
    char *at = strstr(name, part);
    if (!at) return;
    char *end = at + strlen(part);
    while (digits && *end >= '0' && *end <= '9') end++;
    memmove(at, end, strlen(end) + 1);
}

/* A stage=auto class is the direct pick with the span beside it: its name
 * is the direct kernel's with _sgauto, its occupancy hint counts the
 * span's f32 elements. Compare the rest. */
static void same_geometry(char *got, char *want) {
    if (!strstr(got, "_sgauto")) return;
    drop_part(got, "_sgauto", false);
    drop_part(got, "_mb", true);
    drop_part(want, "_mb", true);
}

/* The heuristic's kernel for M x N: a build for that shape, whose split
 * follows from an odd N (some picks look at that: rowcommon.c,
 * split_wide), with split views locked on at other lengths (a variant's
 * promise: any base). */
static void heuristic(const rk_instance *base, uint64_t locked, const rk_target *t, uint64_t M, uint64_t N,
                      char *name) {
    rk_instance in = *base;
    rk_shape s;
    const uint64_t ext[2] = {M, N};
    char split[16];
    assert_int_equal(rk_shape_default(in.family, &s), RK_OK);
    assert_int_equal(rk_shape_update(in.family, &s, NULL, ext, 2, false), RK_OK);
    assert_int_equal(rk_instance_tune(&in, t, &s, locked), RK_OK);
    assert_int_equal(rk_instance_get(&in, "split", split, sizeof split), RK_OK);
    if (strcmp(split, "true")) {
        in = *base;
        assert_int_equal(rk_instance_tune(&in, t, &s, locked | 1ull << split_knob), RK_OK);
    }
    assert_int_equal(rk_instance_validate(&in, t), RK_OK);
    name_of(&in, name);
}

/* The n variants' ranges into `top` as the build writes them into the
 * manifest (file i: "i"); their tags name distinct files. */
static void fill_top(uint32_t n) {
    rk_manifest_init(&top);
    for (uint32_t i = 0; i < n; i++) {
        rk_manifest_variant *mv = &top.variants[top.nvariants++];
        snprintf(mv->manifest, sizeof mv->manifest, "%u", i);
        mv->ndims = var[i].ndims;
        for (uint32_t j = 0; j < var[i].ndims; j++) {
            snprintf(mv->dim[j], sizeof mv->dim[j], "%s", var[i].dim[j]);
            mv->lo[j] = var[i].lo[j];
            mv->hi[j] = var[i].hi[j];
        }
        for (uint32_t j = 0; j < i; j++) assert_string_not_equal(var[i].tag, var[j].tag);
    }
}

static void check_family(rk_family_id fam, const char *dtype, const char *target) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance base, general;
    uint64_t locked;
    base_of(fam, dtype, &base, &locked);
    uint32_t n = rk_instance_variants(&base, t, locked, &general, var, RK_MANIFEST_MAX_VARIANTS);
    assert_true(n >= 3 && n < RK_MANIFEST_MAX_VARIANTS);
    fill_top(n);
    /* rows enough that the heuristic keeps its full block (M >= 4097 for
     * rows of at least 1000, 65 536 for shorter ones), lengths from 1
     * to past every cached variant, odd and powers of two */
    static const uint64_t Ns[] = {1,    3,    8,    17,    63,    64,    100,   127,   128,    255,   1000,
                                  1001, 1024, 1537, 1999, 2047, 2048, 4095,  4096,  4097,  5000,  8191,  8192,
                                  16384, 32000, 32768, 50257, 65536, 65537, 100000, 151936};
    static const uint64_t Ms[] = {4097, 65536};
    char want[256], got[256];
    const char *const dims[2] = {"M", "N"};
    for (size_t mi = 0; mi < COUNT(Ms); mi++)
        for (size_t ni = 0; ni < COUNT(Ns); ni++) {
            uint64_t M = Ms[mi], N = Ns[ni];
            if (M < 65536 && N < 1000) continue;
            const uint64_t ext[2] = {M, N};
            const rk_manifest_variant *mv = rk_manifest_pick(&top, dims, ext, 2);
            name_of(mv ? &var[atoi(mv->manifest)].inst : &general, got);
            heuristic(&base, locked, t, M, N, want);
            same_geometry(got, want);
            if (strcmp(got, want))
                fail_msg("%s %s %llux%llu: the variants run %s, the heuristic picks %s", target, dtype,
                         (unsigned long long)M, (unsigned long long)N, got, want);
        }
    /* few long rows take the split variant, whose row is over several blocks */
    const uint64_t few[2] = {1, 262144};
    const rk_manifest_variant *mv = rk_manifest_pick(&top, dims, few, 2);
    assert_non_null(mv);
    assert_string_equal(var[atoi(mv->manifest)].tag, "split");
}

static void test_picker_is_heuristic(void **state) {
    (void)state;
    static const rk_family_id fams[] = {RK_FAMILY_SOFTMAX, RK_FAMILY_LAYERNORM, RK_FAMILY_RMSNORM, RK_FAMILY_REDUCE};
    static const char *const dtypes[] = {"bf16", "f16", "f32"};
    static const char *const targets[] = {"sm_90a", "gfx942"};
    for (size_t f = 0; f < COUNT(fams); f++)
        for (size_t d = 0; d < COUNT(dtypes); d++)
            for (size_t i = 0; i < COUNT(targets); i++) check_family(fams[f], dtypes[d], targets[i]);
}

/* knob's value, or one where the family has no such knob */
static uint64_t knob_u(const rk_instance *in, const char *knob) {
    char buf[64];
    return rk_instance_get(in, knob, buf, sizeof buf) == RK_OK ? strtoull(buf, NULL, 10) : 1;
}

/* Elements of a row the cached kernel in holds: threads per row x vec x
 * chunks x slices (docs/kernels.md). */
static uint64_t row_capacity(const rk_instance *in) {
    return knob_u(in, "block_size") / knob_u(in, "rows_per_block") * knob_u(in, "vec") * knob_u(in, "chunks") *
           knob_u(in, "slices");
}

static bool shape_ok(const rk_instance *in, uint64_t M, uint64_t N) {
    rk_shape s;
    const uint64_t ext[2] = {M, N};
    assert_int_equal(rk_shape_default(in->family, &s), RK_OK);
    assert_int_equal(rk_shape_update(in->family, &s, NULL, ext, 2, false), RK_OK);
    return rk_instance_check_shape(in, &s) == RK_OK;
}

/* With chunks (and vec) locked, every pick is capped: the cached variants'
 * lengths run from 1 to the largest capacity without a gap and each ends
 * at its kernel's capacity (not a run of one-length ranges up to the
 * manifest's limit), and a longer row is refused naming chunks. */
static void check_locked(rk_family_id fam, const char *dtype, const char *target, const char *const *knobs,
                         uint32_t nknobs) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance base, general;
    uint64_t locked;
    uint32_t ix;
    base_of(fam, dtype, &base, &locked);
    for (uint32_t i = 0; i < nknobs; i += 2) {
        assert_int_equal(rk_instance_set(&base, knobs[i], knobs[i + 1], &ix), RK_OK);
        locked |= 1ull << ix;
    }
    uint32_t n = rk_instance_variants(&base, t, locked, &general, var, RK_MANIFEST_MAX_VARIANTS);
    assert_true(n >= 3 && n < 20);
    uint64_t next = 1, largest = 0;
    fill_top(n);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t cap = row_capacity(&var[i].inst);
        uint32_t nd = var[i].ndims - 1;   /* N is the last range */
        if (var[i].hi[nd] > cap)
            fail_msg("%s %s %s: variant %s serves N up to %llu, its capacity is %llu", target, dtype,
                     rk_family_name(fam), var[i].tag, (unsigned long long)var[i].hi[nd], (unsigned long long)cap);
        assert_true(shape_ok(&var[i].inst, var[i].lo[0], var[i].hi[nd]));
        if (var[i].ndims == 1) {
            assert_int_equal(var[i].lo[0], next);
            next = var[i].hi[0] + 1;
            if (var[i].hi[0] > largest) largest = var[i].hi[0];
        }
    }
    /* the last cached class ends exactly at its capacity */
    assert_int_equal(largest, row_capacity(&var[n - 1].inst));
    const char *const dims[2] = {"M", "N"};
    const uint64_t past[2] = {4097, largest + 1};
    assert_null(rk_manifest_pick(&top, dims, past, 2));
    assert_false(shape_ok(&general, past[0], past[1]));
    assert_non_null(strstr(rk_error_message(), "chunks=0"));
}

static void test_locked_chunks_end_at_capacity(void **state) {
    (void)state;
    static const char *const c1[] = {"chunks", "1"};
    static const char *const c8[] = {"chunks", "8"};
    static const char *const c17[] = {"chunks", "17", "vec", "4"};
    check_locked(RK_FAMILY_SOFTMAX, "f16", "sm_90a", c1, 2);
    check_locked(RK_FAMILY_LAYERNORM, "f16", "gfx942", c8, 2);
    check_locked(RK_FAMILY_LAYERNORM, "f16", "gfx942", c17, 4);
    check_locked(RK_FAMILY_RMSNORM, "bf16", "gfx942", c17, 4);
}

/* With the stage left to the heuristic, a shape-less build's odd row
 * lengths (N % vec != 0) up to the family's span limit run a span class
 * (N%vec in the variant's ranges): the heuristic's span geometry at that
 * shape (threads, rows per block) with chunks enough for the row; every
 * other length runs what the direct classes run. */
static void check_spans(rk_family_id fam, const char *dtype, const char *target) {
    const rk_target *t = rk_target_find(target);
    rk_instance base, general, want;
    uint32_t ix;
    assert_int_equal(rk_instance_default(fam, &base), RK_OK);
    assert_int_equal(rk_instance_set(&base, "dtype", dtype, NULL), RK_OK);
    if (fam != RK_FAMILY_REDUCE) assert_int_equal(rk_instance_set(&base, "out_dtype", dtype, NULL), RK_OK);
    assert_int_equal(rk_instance_set(&base, "split", "true", &ix), RK_OK);
    uint64_t locked = 0;   /* as a build without --shape: the variants lock split views */
    split_knob = ix;
    uint32_t n = rk_instance_variants(&base, t, locked, &general, var, RK_MANIFEST_MAX_VARIANTS);
    assert_true(n >= 3 && n <= RK_MANIFEST_MAX_VARIANTS);
    fill_top(n);
    uint32_t spans = 0;
    for (uint32_t i = 0; i < n; i++) spans += strncmp(var[i].tag, "sp", 2) == 0;
    assert_true(spans >= 4);
    static const uint64_t Ns[] = {1,  2,  3,   7,   8,   9,   15,  31,  63,  64,  65,  100, 127, 128,  129,
                                  191, 192, 193, 255, 257, 383, 511, 513, 639, 641, 767, 769, 1001, 1023, 2047};
    const char *const dims[2] = {"M", "N"};
    char got[256], wname[256];
    for (size_t i = 0; i < COUNT(Ns); i++) {
        const uint64_t ext[2] = {65536, Ns[i]};
        const rk_manifest_variant *mv = rk_manifest_pick(&top, dims, ext, 2);
        const rk_instance *in = mv ? &var[atoi(mv->manifest)].inst : &general;
        heuristic(&base, locked, t, 65536, Ns[i], wname);
        want = base;
        rk_shape sh;
        assert_int_equal(rk_shape_default(fam, &sh), RK_OK);
        assert_int_equal(rk_shape_update(fam, &sh, NULL, ext, 2, false), RK_OK);
        assert_int_equal(rk_instance_tune(&want, t, &sh, locked), RK_OK);
        name_of(in, got);
        bool span_want = strstr(wname, "_sgspan") != NULL, span_got = strstr(got, "_sgspan") != NULL;
        if (span_want != span_got)
            fail_msg("%s %s %s N=%llu: the variants run %s, the heuristic picks %s", rk_family_name(fam), dtype,
                     target, (unsigned long long)Ns[i], got, wname);
        if (span_got) {
            if (knob_u(in, "block_size") != knob_u(&want, "block_size") ||
                knob_u(in, "rows_per_block") != knob_u(&want, "rows_per_block") || !shape_ok(in, 65536, Ns[i]))
                fail_msg("%s %s %s N=%llu: span class %s for the heuristic's %s", rk_family_name(fam), dtype,
                         target, (unsigned long long)Ns[i], got, wname);
            /* at most 1.5 times the chunks the shape's own build holds (idle chunk slots cost) */
            if (2 * knob_u(in, "chunks") > 3 * knob_u(&want, "chunks") || knob_u(in, "chunks") < knob_u(&want, "chunks"))
                fail_msg("%s %s %s N=%llu: span class %s holds %llu chunks, the heuristic's %s %llu",
                         rk_family_name(fam), dtype, target, (unsigned long long)Ns[i], got,
                         (unsigned long long)knob_u(in, "chunks"), wname, (unsigned long long)knob_u(&want, "chunks"));
        }
    }
}

static void test_span_classes(void **state) {
    (void)state;
    static const rk_family_id fams[] = {RK_FAMILY_SOFTMAX, RK_FAMILY_LAYERNORM, RK_FAMILY_RMSNORM, RK_FAMILY_REDUCE};
    static const char *const dtypes[] = {"bf16", "f32"};
    static const char *const targets[] = {"sm_90a", "gfx942"};
    for (size_t f = 0; f < COUNT(fams); f++)
        for (size_t d = 0; d < COUNT(dtypes); d++)
            for (size_t i = 0; i < COUNT(targets); i++) check_spans(fams[f], dtypes[d], targets[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_picker_is_heuristic),
                                       cmocka_unit_test(test_locked_chunks_end_at_capacity),
                                       cmocka_unit_test(test_span_classes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
