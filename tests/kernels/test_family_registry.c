/* rocke tests — N-dimensional problems through the family table alone: a
 * 4-D (batch, heads, seq, head_dim) and a 7-D (N, C, H, W, K, R, S) toy
 * family are registered at run time, then shapes (named, positional, bad
 * names), buffers sized from layouts, scalars (from a dimension, derived,
 * given), grids, costs and a verified emulator run go through the generic
 * API; a signature scalar the table does not declare is an error naming it.
 * The toy kernel: Y = X * alpha over every element (one thread each). */
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
#include "kernels/kern_int.h"

#define BLOCK 64

typedef struct toy_spec { bool undeclared_scalar; } toy_spec;
static toy_spec *spec_of(rk_instance *in) { return (toy_spec *)in->u.words; }
static const toy_spec *cspec_of(const rk_instance *in) { return (const toy_spec *)in->u.words; }

static double product(const rk_shape *s) {
    double n = 1;
    for (uint32_t i = 0; i < s->rank; i++) n *= (double)s->dim[i];
    return n;
}
static double count_of(const rk_instance *in, const rk_shape *s) { (void)in; return product(s); }

static const rk_knob no_knobs[1];
static void defaults(rk_instance *in) { spec_of(in)->undeclared_scalar = false; }
static rk_status validate(const rk_instance *in, const rk_target *t) { (void)in; (void)t; return RK_OK; }

/* the layouts name the family's own dimensions: the 4-D one row-major, the
 * 7-D one's Y reversed (only the coordinates printed for a bad element move) */
static const char *layout_x, *layout_y;
static void signature(const rk_instance *in, rk_ksig *s) {
    kn_sig_add(s, "X", true, RK_S_F32, RK_KP_IN, layout_x);
    kn_sig_add(s, "Y", true, RK_S_F32, RK_KP_OUT, layout_y);
    kn_sig_add(s, "count", false, RK_S_I32, RK_KP_SCALAR, NULL);
    kn_sig_add(s, "alpha", false, RK_S_F32, RK_KP_SCALAR, NULL);
    if (cspec_of(in)->undeclared_scalar) kn_sig_add(s, "stride", false, RK_S_I32, RK_KP_SCALAR, NULL);
}

/* ceil(product of every dimension / BLOCK) */
static void geometry(const rk_instance *in, rk_launch_geom *g) {
    uint32_t nd = kn_family_of(in->family)->ndims;
    kn_geom_dim(g, 0);
    for (uint32_t i = 1; i < nd; i++) {
        kn_geom_dim(g, i);
        kn_geom_op(g, RK_GEOM_MUL);
    }
    kn_geom_const(g, BLOCK);
    kn_geom_op(g, RK_GEOM_CDIV);
    kn_geom_axis(g);
    g->block[0] = BLOCK;
}

static void cost(const rk_instance *in, const rk_shape *s, double *bytes, double *flops) {
    (void)in;
    *bytes = 8 * product(s);
    *flops = product(s);
}

static void build(const rk_instance *in, const rk_target *t, rk_kernel *k, const rk_value *p) {
    (void)in; (void)t;
    rk_value bid = rk_build_block_id(k, 0);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value base = rk_build_mul(k, bid, rk_const_i32(k, BLOCK));
    rk_value i = rk_build_add(k, base, tid);
    rk_if_begin(k, rk_build_cmp(k, "lt", i, p[2]));
    rk_value x = rk_load_global(k, p[0], i, 1);
    rk_store_global(k, p[1], i, rk_build_fmul(k, x, p[3]));
    rk_if_end(k, NULL, 0);
}

static void reference(const rk_problem *p, double **want, double **tol) {
    const rk_host_buf *X = kn_buf(p, "X");
    int y = kn_buf_index(p, "Y");
    float alpha = (float)kn_scalar(p, "alpha");
    for (uint64_t j = 0; j < X->count; j++) {
        want[y][j] = (double)((float)kn_get(X, j) * alpha);
        tol[y][j] = 0;
    }
}

static const rk_dim_decl dims4[] = {
    {"batch", 2, "sequences"}, {"heads", 3, "attention heads"}, {"seq", 5, "tokens"}, {"head_dim", 7, "channels"},
};
static const rk_dim_decl dims7[] = {
    {"N", 2, "images"}, {"C", 3, "input channels"}, {"H", 4, "rows"}, {"W", 5, "columns"},
    {"K", 2, "filters"}, {"R", 3, "filter rows"}, {"S", 1, "filter columns"},
};
static const rk_scalar_decl scalars[] = {
    {"count", RK_S_I32, RK_SC_DERIVED, NULL, count_of, 0, "elements"},
    {"alpha", RK_S_F32, RK_SC_GIVEN, NULL, NULL, 1.5, "scale"},
};
#define TOY(nm, d)                                                                                               \
    {.name = nm, .knobs = no_knobs, .nknobs = 0, .dims = d, .ndims = RK_COUNTOF(d), .scalars = scalars,        \
     .nscalars = RK_COUNTOF(scalars), .defaults = defaults, .validate = validate, .signature = signature,        \
     .geometry = geometry, .build = build, .cost = cost, .reference = reference}
static const kn_family toy4 = TOY("toy4d", dims4), toy7 = TOY("toy7d", dims7);
static rk_family_id id4, id7;

static int setup(void **state) {
    (void)state;
    if (kn_family_register(&toy4, &id4) || kn_family_register(&toy7, &id7)) {
        fprintf(stderr, "registering: %s\n", rk_error_message());
        return -1;
    }
    return 0;
}

/* Build, run on the emulator for target sm_90 and check against the reference. */
static void run_verified(rk_family_id f, const rk_shape *s, double alpha, uint64_t seed) {
    const rk_target *t = rk_target_find("sm_90");
    rk_instance in;
    assert_int_equal(rk_instance_default(f, &in), RK_OK);
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s", rk_error_message());
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, s, seed), RK_OK);
    assert_int_equal(rk_problem_set_scalar(&p, "alpha", alpha), RK_OK);
    assert_int_equal(p.buf[0].count, (uint64_t)product(s));
    rk_emu *emu = rk_emu_new(t, NULL);
    uint64_t addr[RK_KSIG_MAX];
    rk_scalar_value sv[RK_KSIG_MAX];
    void *args[RK_KSIG_MAX];
    for (uint32_t i = 0; i < p.sig.n; i++) {
        if (p.sig.p[i].ptr) {
            assert_int_equal(rk_emu_register(emu, p.buf[i].data, p.buf[i].bytes, p.sig.p[i].name, &addr[i]), RK_OK);
            args[i] = &addr[i];
        } else {
            assert_int_equal(rk_problem_scalar(&p, i, &sv[i]), RK_OK);
            args[i] = &sv[i];
        }
    }
    assert_int_equal(sv[2].i32, (int32_t)product(s));
    assert_true(sv[3].f32 == (float)alpha);
    uint32_t g[3], b[3];
    rk_instance_grid(&in, s, g, b);
    if (rk_emu_launch(emu, k, g, b, 0, args)) fail_msg("launch: %s", rk_error_message());
    rk_problem_diff d;
    assert_int_equal(rk_problem_check(&p, &d), RK_OK);
    if (d.bad) fail_msg("seed %llu: %s", (unsigned long long)seed, d.first_bad);
    assert_int_equal(d.total, (uint64_t)product(s));
    /* a wrong output is caught and located by the layout's coordinates */
    ((float *)p.buf[1].data)[p.buf[1].count - 1] += 1.0f;
    assert_int_equal(rk_problem_check(&p, &d), RK_OK);
    assert_int_equal(d.bad, 1);
    char last[96];
    snprintf(last, sizeof last, "Y[%llu,", (unsigned long long)(s->dim[layout_y == layout_x ? 0 : s->rank - 1] - 1));
    if (!strstr(d.first_bad, last)) fail_msg("first bad '%s' does not start with '%s'", d.first_bad, last);
    rk_emu_free(emu);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static void test_four_dims(void **state) {
    (void)state;
    layout_x = layout_y = "batch,heads,seq,head_dim";
    uint64_t seed = (uint64_t)time(NULL);
    printf("seed %llu\n", (unsigned long long)seed);
    rk_family_id f;
    assert_int_equal(rk_family_parse("toy4d", &f), RK_OK);
    assert_int_equal(f, id4);
    rk_shape s;
    assert_int_equal(rk_shape_default(f, &s), RK_OK);
    assert_int_equal(s.rank, 4);
    /* named: only those change */
    const char *names[] = {"seq", "head_dim"};
    const uint64_t v[] = {13, 9};
    assert_int_equal(rk_shape_update(f, &s, names, v, 2, false), RK_OK);
    char txt[128];
    rk_shape_format(f, &s, true, txt, sizeof txt);
    assert_string_equal(txt, "batch=2,heads=3,seq=13,head_dim=9");
    /* all: a missing dimension is named */
    assert_int_not_equal(rk_shape_update(f, &s, names, v, 2, true), RK_OK);
    assert_non_null(strstr(rk_error_message(), "dimension batch missing (dimensions: batch, heads, seq, head_dim)"));
    const char *bad[] = {"K"};
    assert_int_not_equal(rk_shape_update(f, &s, bad, v, 1, false), RK_OK);
    assert_non_null(strstr(rk_error_message(), "unknown dimension 'K' (dimensions: batch, heads, seq, head_dim)"));
    const uint64_t three[] = {1, 2, 3};
    assert_int_not_equal(rk_shape_update(f, &s, NULL, three, 3, false), RK_OK);
    assert_non_null(strstr(rk_error_message(), "4 dimensions"));
    double bytes, flops;
    rk_instance in;
    rk_instance_default(f, &in);
    rk_instance_cost(&in, &s, &bytes, &flops);
    assert_true(flops == 2.0 * 3 * 13 * 9);
    run_verified(f, &s, 0.75, seed);
    const uint64_t odd[] = {3, 1, 17, 5};     /* 255 elements: a partial last block */
    assert_int_equal(rk_shape_update(f, &s, NULL, odd, 4, false), RK_OK);
    run_verified(f, &s, -2.0, seed + 1);
}

static void test_seven_dims(void **state) {
    (void)state;
    layout_x = "N,C,H,W,K,R,S";
    layout_y = "S,R,K,W,H,C,N";
    rk_shape s;
    assert_int_equal(rk_shape_default(id7, &s), RK_OK);
    assert_int_equal(s.rank, 7);
    const char *names[] = {"S", "R", "K", "W", "H", "C", "N"};
    const uint64_t v[] = {3, 3, 4, 6, 5, 2, 1};
    assert_int_equal(rk_shape_update(id7, &s, names, v, 7, true), RK_OK);
    assert_int_equal(rk_family_dim_index(id7, "K"), 4);
    assert_int_equal(s.dim[4], 4);
    rk_instance in;
    rk_instance_default(id7, &in);
    assert_int_equal(rk_instance_check_shape(&in, &s), RK_OK);
    s.dim[2] = 0;
    assert_int_not_equal(rk_instance_check_shape(&in, &s), RK_OK);
    assert_non_null(strstr(rk_error_message(), "toy7d: dimension H must be at least 1"));
    s.dim[2] = 5;
    run_verified(id7, &s, 3.0, (uint64_t)time(NULL));
    /* given scalars only; unknown names list the legal ones */
    rk_problem p;
    assert_int_equal(rk_problem_init(&p, &in, &s, 1), RK_OK);
    assert_int_not_equal(rk_problem_set_scalar(&p, "count", 3), RK_OK);
    assert_non_null(strstr(rk_error_message(), "follows from the shape (given scalars: alpha (f32, given))"));
    assert_int_not_equal(rk_problem_set_scalar(&p, "beta", 3), RK_OK);
    assert_non_null(strstr(rk_error_message(), "'beta' is not a scalar to give"));
    rk_problem_free(&p);
}

/* A kernel parameter the table does not declare is refused, never zero. */
static void test_undeclared_scalar(void **state) {
    (void)state;
    layout_x = layout_y = "batch,heads,seq,head_dim";
    rk_instance in;
    rk_instance_default(id4, &in);
    spec_of(&in)->undeclared_scalar = true;
    rk_shape s;
    rk_shape_default(id4, &s);
    rk_problem p;
    assert_int_not_equal(rk_problem_init(&p, &in, &s, 1), RK_OK);
    assert_non_null(strstr(rk_error_message(), "kernel parameter 'stride' is not a scalar the family declares "
                                               "(declared: count (i32, derived), alpha (f32, given))"));
    /* a layout naming a dimension the family lacks */
    spec_of(&in)->undeclared_scalar = false;
    layout_y = "batch,heads,seq,K";
    assert_int_not_equal(rk_problem_init(&p, &in, &s, 1), RK_OK);
    assert_non_null(strstr(rk_error_message(), "no dimension 'K'"));
}

/* The registry checks a table before it gives it an id. */
static void test_register_checks(void **state) {
    (void)state;
    rk_family_id id;
    kn_family dup = toy4;
    assert_int_not_equal(kn_family_register(&dup, &id), RK_OK);
    assert_non_null(strstr(rk_error_message(), "family toy4d exists"));
    static const rk_dim_decl twice[] = {{"M", 1, ""}, {"M", 2, ""}};
    kn_family t = toy4;
    t.name = "twice";
    t.dims = twice;
    t.ndims = 2;
    assert_int_not_equal(kn_family_register(&t, &id), RK_OK);
    assert_non_null(strstr(rk_error_message(), "dimension M declared twice"));
    static const rk_scalar_decl nodim[] = {{"K", RK_S_I32, RK_SC_DIM, "K", NULL, 0, ""}};
    t = toy4;
    t.name = "nodim";
    t.scalars = nodim;
    t.nscalars = 1;
    assert_int_not_equal(kn_family_register(&t, &id), RK_OK);
    assert_non_null(strstr(rk_error_message(), "scalar K needs a type"));
    assert_int_equal(rk_family_count(), RK_FAMILY__COUNT + 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_dims), cmocka_unit_test(test_seven_dims),
        cmocka_unit_test(test_undeclared_scalar), cmocka_unit_test(test_register_checks),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
