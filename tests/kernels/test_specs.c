/* rocke tests — kernel specs without running them: every family x dtype x
 * target builds and passes the target verifier; the validator's bad-spec
 * table (each row's message names the field and the legal values); kernel
 * names are deterministic and distinct for distinct specs; knob text round
 * trips; shape checks; signatures and grids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/kernels.h"

static const char *const target_names[] = {"gfx942", "gfx950", "sm_90", "sm_80"};

/* Shape M x N of family f, positionally (elementwise: M*N elements); a
 * family of more dimensions gets M and N by name (its first two dimensions
 * when it has no M and N) and 16 for the others. */
static rk_shape mn(rk_family_id f, uint64_t M, uint64_t N) {
    const uint64_t ext[2] = {M, N};
    rk_shape s;
    assert_int_equal(rk_shape_default(f, &s), RK_OK);
    if (s.rank <= 2) {
        assert_int_equal(rk_shape_update(f, &s, NULL, ext, 2, false), RK_OK);
        return s;
    }
    for (uint32_t i = 0; i < s.rank; i++) s.dim[i] = 16;
    const char *names[2] = {"M", "N"};
    if (rk_family_dim_index(f, "M") < 0 || rk_family_dim_index(f, "N") < 0) {
        const rk_dim_decl *d = rk_family_dims(f, NULL);
        names[0] = d[0].name;
        names[1] = d[1].name;
    }
    assert_int_equal(rk_shape_update(f, &s, names, ext, 2, false), RK_OK);
    return s;
}

/* The row and transpose families (the GEMM families have test_gemm_emu.c). */
#define SMALL_OP_FAMILIES RK_FAMILY_GEMM

static rk_instance fresh(rk_family_id f) {
    rk_instance in;
    assert_int_equal(rk_instance_default(f, &in), RK_OK);
    return in;
}

static void tune_mn(rk_instance *in, const rk_target *t, uint64_t M, uint64_t N) {
    rk_shape s = mn(in->family, M, N);
    assert_int_equal(rk_instance_tune(in, t, &s, 0), RK_OK);
}

static void test_build_and_verify_all(void **state) {
    (void)state;
    const uint64_t shapes[][2] = {{1, 1}, {7, 1001}, {4096, 4096}, {4096, 32768}, {2, 300000}};
    for (int f = 0; f < SMALL_OP_FAMILIES; f++)
        for (size_t ti = 0; ti < 4; ti++)
            for (int d = 0; d < 3; d++)
                for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
                    const rk_target *t = rk_target_find(target_names[ti]);
                    rk_instance in;
                    assert_int_equal(rk_instance_default((rk_family_id)f, &in), RK_OK);
                    const char *dt[] = {"f16", "bf16", "f32"};
                    assert_int_equal(rk_instance_set(&in, "dtype", dt[d], NULL), RK_OK);
                    rk_shape sh = mn((rk_family_id)f, shapes[s][0], shapes[s][1]);
                    assert_int_equal(rk_instance_tune(&in, t, &sh, 0), RK_OK);
                    rk_kernel *k = NULL;
                    if (rk_instance_build(&in, t, &k)) fail_msg("%s: %s", t->name, rk_error_message());
                    rk_diags dg;
                    rk_diags_init(&dg);
                    rk_status st = rk_target_verify(k, t, &dg);
                    if (st || dg.nerrors) {
                        char *txt = rk_diags_text(&dg);
                        fail_msg("%s %s: %s", t->name, rk_kernel_name(k), txt);
                    }
                    rk_diags_free(&dg);
                    /* the tuned spec fits the shape it was tuned for */
                    if (rk_instance_check_shape(&in, &sh))
                        fail_msg("%s: %s", rk_kernel_name(k), rk_error_message());
                    rk_kernel_free(k);
                }
}

/* one row per bad spec: family, knob changes, target, expected fragment */
static void test_bad_specs(void **state) {
    (void)state;
    static const struct { const char *fam, *set, *target, *frag; } rows[] = {
        {"softmax", "wave=32", "gfx942", "'wave' must be 64"},
        {"softmax", "wave=64", "sm_90", "'wave' must be 32"},
        {"softmax", "dtype=f32 vec=8", "gfx950", "'vec' must be at most 4"},
        {"reduce", "rows_per_block=512 block_size=256", "gfx950", "'rows_per_block' must be at most block_size"},
        {"layernorm", "chunks=32 vec=8", "gfx950", "'chunks' x 'vec'"},
        {"rmsnorm", "out_dtype=f32 vec=8", "gfx950", "'vec' must be at most 4"},
        {"elementwise", "dtype=f32 vec=8", "sm_90", "'vec' must be at most 4"},
        {"transpose", "tile_m=16 vec=8 block_size=1024", "gfx950", "'block_size' must divide"},
        {"transpose", "dtype=f32 tile_m=128 tile_n=128 vec=4 block_size=256", "sm_90", "bytes of LDS"},
        {"transpose", "tile_n=16 vec=8 dtype=bf16 tile_m=16 block_size=32", "gfx950", NULL},
        {"softmax", "block_size=1024 rows_per_block=1 min_blocks_per_sm=4", "sm_90", "'min_blocks_per_sm'"},
        {"rmsnorm", "block_size=1024 rows_per_block=1 min_blocks_per_sm=3", "gfx942", "'min_blocks_per_sm'"},
        {"layernorm", "block_size=1024 rows_per_block=1 min_blocks_per_sm=2", "sm_90", NULL},
        {"softmax", "chunks=0 keep_exps=true", "sm_90", "'keep_exps' needs a cached row"},
        {"softmax", "chunks=2 keep_exps=true", "gfx942", NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        rk_family_id f;
        assert_int_equal(rk_family_parse(rows[i].fam, &f), RK_OK);
        const rk_target *t = rk_target_find(rows[i].target);
        rk_instance in;
        rk_instance_default(f, &in);
        tune_mn(&in, t, 64, 1024);
        char buf[128];
        snprintf(buf, sizeof buf, "%s", rows[i].set);
        for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
            char *eq = strchr(tok, '=');
            *eq = 0;
            if (rk_instance_set(&in, tok, eq + 1, NULL)) fail_msg("row %zu: %s", i, rk_error_message());
        }
        rk_status st = rk_instance_validate(&in, t);
        if (!rows[i].frag) {
            if (st) fail_msg("row %zu: expected valid, got %s", i, rk_error_message());
            continue;
        }
        if (st == RK_OK || !strstr(rk_error_message(), rows[i].frag))
            fail_msg("row %zu (%s %s): expected '%s', got %s", i, rows[i].fam, rows[i].set, rows[i].frag,
                     st ? rk_error_message() : "valid");
        rk_kernel *k = (rk_kernel *)&in;
        assert_int_not_equal(rk_instance_build(&in, t, &k), RK_OK);
        assert_null(k);
    }
}

/* knob values that are not legal at all: the message lists the legal ones */
static void test_bad_knob_values(void **state) {
    (void)state;
    static const struct { const char *fam, *knob, *value, *frag; } rows[] = {
        {"softmax", "block_size", "100", "32|64|128|256|512|1024"},
        {"softmax", "vec", "3", "1|2|4|8"},
        {"softmax", "dtype", "f64", "f16|bf16|f32"},
        {"softmax", "tail", "clamp", "masked|buffer"},
        {"softmax", "chunks", "-1", "knob 'chunks'"},
        {"softmax", "bogus", "1", "unknown knob 'bogus' for family softmax"},
        {"elementwise", "op", "tanh", "add|sub|mul|div|max|min|copy|neg|abs|relu|silu|gelu_tanh|exp2"},
        {"reduce", "op", "prod", "sum|max|mean"},
        {"layernorm", "residual", "maybe", "true|false"},
        {"transpose", "tile_m", "48", "16|32|64|128"},
        {"transpose", "lds_pad", "17", "knob 'lds_pad'"},
        {"elementwise", "block_size", "", "knob 'block_size'"},
        {"rmsnorm", "min_blocks_per_sm", "9", "0|1|2|3|4|5|6|7|8|10|12|16|32"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        rk_family_id f;
        assert_int_equal(rk_family_parse(rows[i].fam, &f), RK_OK);
        rk_instance in;
        rk_instance_default(f, &in);
        rk_status st = rk_instance_set(&in, rows[i].knob, rows[i].value, NULL);
        if (st == RK_OK || !strstr(rk_error_message(), rows[i].frag))
            fail_msg("row %zu: expected '%s', got %s", i, rows[i].frag, st ? rk_error_message() : "accepted");
    }
    rk_family_id f;
    assert_int_not_equal(rk_family_parse("conv2d", &f), RK_OK);
    assert_non_null(strstr(rk_error_message(), "elementwise, reduce, softmax, layernorm, rmsnorm, transpose, gemm"));
}

/* Different specs get different names; the same spec always the same one. */
static void test_names(void **state) {
    (void)state;
    enum { MAXN = 4096 };
    static char names[MAXN][256];
    size_t n = 0;
    for (int f = 0; f < RK_FAMILY__COUNT; f++) {
        uint32_t nk;
        const rk_knob *knobs = rk_family_knobs((rk_family_id)f, &nk);
        rk_instance base;
        rk_instance_default((rk_family_id)f, &base);
        assert_int_equal(rk_instance_name(&base, names[n++], 256), RK_OK);
        /* change one knob at a time to each of its legal values */
        for (uint32_t i = 0; i < nk; i++) {
            /* tuples and epilogue chains are not value lists (test_gemm_emu.c covers them) */
            if (knobs[i].kind == RK_KNOB_TUPLE || knobs[i].kind == RK_KNOB_EPILOGUE) continue;
            if (!knobs[i].tag) continue;   /* run-time knobs (conv geometry): the same code, the same name */
            char legal[2048];
            rk_knob_legal_text(&knobs[i], legal, sizeof legal);
            char cur[32];
            rk_instance_get(&base, knobs[i].name, cur, sizeof cur);
            for (char *v = strtok(legal, "|"); v; v = strtok(NULL, "|")) {
                if (!strcmp(v, cur)) continue;
                rk_instance in = base;
                assert_int_equal(rk_instance_set(&in, knobs[i].name, v, NULL), RK_OK);
                assert_true(n < MAXN);
                assert_int_equal(rk_instance_name(&in, names[n], 256), RK_OK);
                char again[256];
                rk_instance_name(&in, again, sizeof again);
                assert_string_equal(again, names[n]);
                n++;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (!strcmp(names[i], names[j])) fail_msg("two specs share the name %s", names[i]);
    /* the name is the kernel symbol */
    rk_instance in;
    rk_instance_default(RK_FAMILY_SOFTMAX, &in);
    const rk_target *t = rk_target_find("gfx950");
    rk_kernel *k;
    assert_int_equal(rk_instance_build(&in, t, &k), RK_OK);
    char nm[256];
    rk_instance_name(&in, nm, sizeof nm);
    assert_string_equal(rk_kernel_name(k), nm);
    /* building twice gives byte-identical IR */
    rk_kernel *k2;
    assert_int_equal(rk_instance_build(&in, t, &k2), RK_OK);
    char *a = rk_serialize(k), *b = rk_serialize(k2);
    assert_non_null(a);
    assert_string_equal(a, b);
    rk_string_free(a);
    rk_string_free(b);
    rk_kernel_free(k);
    rk_kernel_free(k2);
}

static void test_knob_text_round_trip(void **state) {
    (void)state;
    for (int f = 0; f < RK_FAMILY__COUNT; f++) {
        uint32_t nk;
        const rk_knob *knobs = rk_family_knobs((rk_family_id)f, &nk);
        rk_instance a, b;
        rk_instance_default((rk_family_id)f, &a);
        tune_mn(&a, rk_target_find("sm_90"), 100, 5000);
        rk_instance_default((rk_family_id)f, &b);
        for (uint32_t i = 0; i < nk; i++) {
            char v[32];
            assert_int_equal(rk_instance_get(&a, knobs[i].name, v, sizeof v), RK_OK);
            assert_int_equal(rk_instance_set(&b, knobs[i].name, v, NULL), RK_OK);
        }
        char na[256], nb[256];
        rk_instance_name(&a, na, sizeof na);
        rk_instance_name(&b, nb, sizeof nb);
        assert_string_equal(na, nb);
    }
    /* CLI spelling with dashes */
    rk_instance in;
    rk_instance_default(RK_FAMILY_SOFTMAX, &in);
    assert_int_equal(rk_instance_set(&in, "block-size", "512", NULL), RK_OK);
    assert_int_equal(in.u.softmax.k.block_size, 512);
}

static void test_shapes_signatures_grids(void **state) {
    (void)state;
    rk_instance in = fresh(RK_FAMILY_SOFTMAX);
    rk_softmax_spec *s = &in.u.softmax;
    s->k.block_size = 256;
    s->k.rows_per_block = 2;
    s->k.vec = 8;
    s->k.chunks = 4;                     /* capacity 128 * 8 * 4 = 4096 */
    rk_shape sh = mn(RK_FAMILY_SOFTMAX, 10, 4096);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    sh.dim[1] = 4097;
    assert_int_not_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "row capacity 4096"));
    sh.dim[0] = 0;
    assert_int_not_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "dimension M must be at least 1"));
    sh.rank = 1;
    assert_int_not_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "2 dimensions (M, N)"));
    uint32_t g[3], b[3];
    sh = mn(RK_FAMILY_SOFTMAX, 5, 100);
    rk_instance_grid(&in, &sh, g, b);
    assert_int_equal(g[0], 3);
    assert_int_equal(b[0], 256);
    rk_ksig sig;
    rk_instance_signature(&in, &sig);
    assert_int_equal(sig.n, 4);
    assert_string_equal(sig.p[0].name, "X");
    assert_int_equal(sig.p[1].role, RK_KP_OUT);

    rk_instance ln = fresh(RK_FAMILY_LAYERNORM);
    ln.u.norm.residual = ln.u.norm.save_stats = true;
    rk_instance_signature(&ln, &sig);
    const char *want[] = {"X", "R", "Gamma", "Beta", "Y", "H", "Mean", "Rstd", "M", "N", "eps"};
    assert_int_equal(sig.n, 11);
    for (int i = 0; i < 11; i++) assert_string_equal(sig.p[i].name, want[i]);
    rk_instance rms = fresh(RK_FAMILY_RMSNORM);
    assert_true(rms.u.norm.rms);
    rms.family = RK_FAMILY_LAYERNORM;
    assert_int_not_equal(rk_instance_validate(&rms, rk_target_find("gfx950")), RK_OK);
    assert_non_null(strstr(rk_error_message(), "'rms'"));

    rk_instance ew = fresh(RK_FAMILY_ELEMENTWISE);
    ew.u.ew.op = RK_EW_ADD;
    rk_instance_signature(&ew, &sig);
    assert_int_equal(sig.n, 4);
    assert_string_equal(sig.p[0].dims, "N");
    ew.u.ew.op = RK_EW_RELU;
    rk_instance_signature(&ew, &sig);
    assert_int_equal(sig.n, 3);
    sh = mn(RK_FAMILY_ELEMENTWISE, 1, 8192 * 3 + 1);
    rk_instance_grid(&ew, &sh, g, b);
    assert_int_equal(g[0], (8192 * 3 + 1 + 256 * 8 * 4 - 1) / (256 * 8 * 4));

    rk_instance ti = fresh(RK_FAMILY_TRANSPOSE);
    sh = mn(RK_FAMILY_TRANSPOSE, 65, 130);
    rk_instance_grid(&ti, &sh, g, b);
    assert_int_equal(g[0], 2 * 3);
    rk_instance_signature(&ti, &sig);
    assert_string_equal(sig.p[1].dims, "N,M");
    double bytes, flops;
    sh = mn(RK_FAMILY_TRANSPOSE, 10, 20);
    rk_instance_cost(&ti, &sh, &bytes, &flops);
    assert_true(bytes == 2.0 * 10 * 20 * 2);
}

/* The heuristic: wide bf16 rows on sm_90 are held in registers by 1024
 * threads; narrow rows share a block; very long rows loop. */
static void test_heuristic(void **state) {
    (void)state;
    const rk_target *h = rk_target_find("sm_90");
    rk_instance in = fresh(RK_FAMILY_SOFTMAX);
    rk_softmax_spec *s = &in.u.softmax;
    s->dtype = s->out_dtype = RK_S_BF16;
    tune_mn(&in, h, 4096, 32768);
    assert_int_equal(s->k.wave, 32);
    assert_int_equal(s->k.vec, 8);
    assert_int_equal(s->k.block_size / s->k.rows_per_block * s->k.vec * s->k.chunks >= 32768, 1);
    assert_int_equal(s->k.chunks, 4);
    tune_mn(&in, h, 32768, 4096);
    assert_true(s->k.chunks > 0 && s->k.rows_per_block >= 1);
    tune_mn(&in, h, 4, 1 << 20);
    assert_int_equal(s->k.chunks, 0);
    assert_int_equal(s->k.tail, RK_TAIL_MASKED);
    tune_mn(&in, rk_target_find("gfx942"), 4096, 4096);
    assert_int_equal(s->k.wave, 64);
    assert_int_equal(s->k.tail, RK_TAIL_BUFFER);
    tune_mn(&in, rk_target_find("gfx942"), 4096, 1000);   /* 32 threads a row: narrower than a wave */
    assert_true(s->k.block_size / s->k.rows_per_block < 64);
    assert_int_equal(s->k.tail, RK_TAIL_MASKED);
    assert_int_equal(s->k.min_blocks, 0);                          /* no occupancy hint on AMD */
    assert_false(s->keep_exps);                                    /* an NVIDIA choice */
}

/* NVIDIA occupancy: at most 16 elements a thread for 16-bit rows when the
 * row allows, the packed row plus the family's other registers decide the
 * blocks per SM, given to ptxas as .minnctapersm (docs/kernels.md). */
static void test_heuristic_occupancy(void **state) {
    (void)state;
    const rk_target *h = rk_target_find("sm_90a");
    rk_instance in = fresh(RK_FAMILY_SOFTMAX);
    rk_softmax_spec *s = &in.u.softmax;
    s->dtype = s->out_dtype = RK_S_BF16;
    tune_mn(&in, h, 32768, 4096);
    assert_int_equal(s->k.block_size, 256);
    assert_int_equal(s->k.rows_per_block, 1);
    assert_int_equal(s->k.chunks, 2);
    assert_int_equal(s->k.min_blocks, 8);
    assert_true(s->keep_exps);                                     /* 16 elements: exps kept in f32 */
    tune_mn(&in, h, 4096, 32768);
    assert_int_equal(s->k.block_size, 1024);
    assert_int_equal(s->k.chunks, 4);
    assert_int_equal(s->k.min_blocks, 2);
    assert_false(s->keep_exps);                                    /* 32 elements: the row stays packed */
    rk_instance n = fresh(RK_FAMILY_LAYERNORM);
    n.u.norm.dtype = n.u.norm.out_dtype = RK_S_BF16;
    tune_mn(&n, h, 4096, 32768);
    assert_int_equal(n.u.norm.k.chunks, 4);
    assert_int_equal(n.u.norm.k.min_blocks, 2);                          /* 32 registers, as RMSNorm */
    tune_mn(&n, h, 32768, 4096);
    assert_int_equal(n.u.norm.k.min_blocks, 8);
    n = fresh(RK_FAMILY_RMSNORM);
    n.u.norm.dtype = n.u.norm.out_dtype = RK_S_F32;
    tune_mn(&n, h, 64, 65536);                            /* 64 f32 registers a thread: looped */
    assert_int_equal(n.u.norm.k.chunks, 0);
    assert_int_equal(n.u.norm.k.min_blocks, 0);
    /* the knob reaches the kernel as launch bounds: NVIDIA directly, AMD as waves per SIMD */
    rk_kernel *k = NULL;
    assert_int_equal(rk_instance_build(&in, h, &k), RK_OK);
    int64_t v = 0;
    assert_true(rk_attrs_int(rk_kernel_attrs(k), "min_blocks_per_sm", &v));
    assert_int_equal(v, 2);
    rk_kernel_free(k);
    const rk_target *a = rk_target_find("gfx942");
    tune_mn(&in, a, 4096, 32768);
    s->k.min_blocks = 2;                                           /* 2 x 16 waves over 4 SIMDs */
    assert_int_equal(rk_instance_build(&in, a, &k), RK_OK);
    assert_false(rk_attrs_int(rk_kernel_attrs(k), "min_blocks_per_sm", &v));
    assert_true(rk_attrs_int(rk_kernel_attrs(k), "waves_per_eu", &v));
    assert_int_equal(v, 2 * (s->k.block_size / 64) / 4);
    rk_kernel_free(k);
    /* the reduce family keeps no hint (its kernels are not register-bound) */
    rk_instance r = fresh(RK_FAMILY_REDUCE);
    tune_mn(&r, h, 4096, 32768);
    assert_int_equal(r.u.reduce.k.min_blocks, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_verify_all), cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_bad_knob_values),      cmocka_unit_test(test_names),
        cmocka_unit_test(test_knob_text_round_trip), cmocka_unit_test(test_shapes_signatures_grids),
        cmocka_unit_test(test_heuristic),
        cmocka_unit_test(test_heuristic_occupancy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
