/* rocke tests — stage=auto (row_auto.c): one row kernel holding direct rows
 * and the span, the path chosen at run time. A kernel built without a
 * shape takes it for the row-length classes whose odd lengths the
 * heuristic stages through LDS (the choices are locked below). Each auto
 * kernel is run at odd and aligned lengths of its class, one row, a
 * partial last block, tensors 0, 1 and 3 elements into their buffers:
 * against the double reference, and bit for bit against the kernel of the
 * path it must take (direct rows with plain views when N % vec == 0 and
 * every tensor starts on 16 bytes, else the span of chunks x vec elements
 * a thread), for softmax, LayerNorm and RMSNorm (residual + statistics)
 * and reduce (sum, max, mean), bf16, f16 and f32, on sm_90, gfx950 and gfx942.
 * ROCKE_SEED=N replays. */
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
#include "rocke/kernels.h"
#include "rocke/manifest.h"
#include "../support/problem_emu.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static uint64_t seed;
static unsigned runs;
static rk_variant var[RK_MANIFEST_MAX_VARIANTS];
/* outputs where the two paths' kernels differed in some bit: the twin
 * comparison tells the paths apart */
static unsigned paths_differ;

static void knobs_set(rk_instance *in, const char *knobs, uint64_t *locked) {
    if (problem_knobs_set(in, knobs, locked)) fail_msg("knobs '%s': %s", knobs, rk_error_message());
}

/* The shape variants of fam (split views on, as `rocke build` without a
 * shape) and the one serving row length N. */
static const rk_instance *variant_for(const char *fam, const rk_target *t, const char *knobs, uint64_t N,
                                      uint32_t *nv) {
    rk_family_id f;
    rk_instance base, general;
    uint64_t locked = 0;
    assert_int_equal(rk_family_parse(fam, &f), RK_OK);
    assert_int_equal(rk_instance_default(f, &base), RK_OK);
    /* auto classes are built where stage=auto is asked for (a locked stage otherwise stays as it is) */
    char all[192];
    snprintf(all, sizeof all, "%s%s", knobs, strstr(knobs, "stage=") ? "" : " stage=auto");
    knobs_set(&base, all, &locked);
    *nv = rk_instance_variants(&base, t, locked, &general, var, RK_MANIFEST_MAX_VARIANTS);
    for (uint32_t i = 0; i < *nv; i++)
        if (var[i].ndims == 1 && var[i].lo[0] <= N && N <= var[i].hi[0]) return &var[i].inst;
    fail_msg("%s %s %s: no cached variant serves N=%llu", t->name, fam, knobs, (unsigned long long)N);
    return NULL;
}

static bool is_auto(const rk_instance *in) {
    char v[16];
    return rk_instance_get(in, "stage", v, sizeof v) == RK_OK && !strcmp(v, "auto");
}

static uint32_t knob_u32(const rk_instance *in, const char *name) {
    char v[32];
    assert_int_equal(rk_instance_get(in, name, v, sizeof v), RK_OK);
    return (uint32_t)strtoul(v, NULL, 10);
}

/* The path's own kernel: direct rows with plain views, or the span. */
static void twin_of(const rk_instance *in, bool direct, rk_instance *out) {
    char chunks[16];
    *out = *in;
    if (direct) {
        assert_int_equal(rk_instance_set(out, "stage", "direct", NULL), RK_OK);
        assert_int_equal(rk_instance_set(out, "split", "false", NULL), RK_OK);
        return;
    }
    snprintf(chunks, sizeof chunks, "%u", knob_u32(in, "chunks") * knob_u32(in, "vec"));
    assert_int_equal(rk_instance_set(out, "stage", "span", NULL), RK_OK);
    assert_int_equal(rk_instance_set(out, "chunks", chunks, NULL), RK_OK);
    /* kept exps are a direct row's */
    if (out->family == RK_FAMILY_SOFTMAX) assert_int_equal(rk_instance_set(out, "keep_exps", "false", NULL), RK_OK);
}

static rk_kernel *build(const rk_target *t, const rk_instance *in, char *name) {
    rk_kernel *k = NULL;
    assert_int_equal(rk_instance_name(in, name, 256), RK_OK);
    if (rk_instance_validate(in, t) || rk_instance_build(in, t, &k))
        fail_msg("%s %s: %s", t->name, name, rk_error_message());
    return k;
}

/* The outputs of p (every RK_KP_OUT buffer), concatenated into a new block. */
static unsigned char *outputs(const rk_problem *p, size_t *bytes) {
    size_t n = 0;
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (p->sig.p[i].role == RK_KP_OUT) n += p->buf[i].bytes;
    unsigned char *o = malloc(n ? n : 1), *at = o;
    assert_non_null(o);
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (p->sig.p[i].role == RK_KP_OUT) {
            memcpy(at, p->buf[i].data, p->buf[i].bytes);
            at += p->buf[i].bytes;
        }
    *bytes = n;
    return o;
}

/* Run the auto kernel k at M x N with every tensor `off` elements in: the
 * double reference, then the same bits as the kernel of the path it must
 * take (both launched on the same inputs). */
static void run_both(const rk_target *t, const rk_instance *in, rk_kernel *k, const char *name, uint64_t M,
                     uint64_t N, uint32_t off) {
    rk_shape sh;
    const uint64_t ext[2] = {M, N};
    assert_int_equal(rk_shape_default(in->family, &sh), RK_OK);
    assert_int_equal(rk_shape_update(in->family, &sh, NULL, ext, 2, false), RK_OK);
    if (rk_instance_check_shape(in, &sh))
        fail_msg("%s %s at %llux%llu: %s", t->name, name, (unsigned long long)M, (unsigned long long)N,
                 rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    if (rk_problem_init(&p, in, &sh, s)) fail_msg("%s: %s", name, rk_error_message());
    if (problem_emu_launch_offset(t, k, &p, &sh, off))
        fail_msg("%s %s %llux%llu offset %u: %s", t->name, name, (unsigned long long)M, (unsigned long long)N, off,
                 rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad)
        fail_msg("%s %s %llux%llu offset %u seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", t->name, name,
                 (unsigned long long)M, (unsigned long long)N, off, (unsigned long long)s,
                 (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff, c.first_bad);
    size_t nb, nt;
    unsigned char *got = outputs(&p, &nb);
    /* the path: whole vectors only when every row (and tensor) starts aligned */
    bool direct = N % knob_u32(in, "vec") == 0 && off == 0;
    rk_instance tw, other;
    char tname[256], oname[256];
    twin_of(in, direct, &tw);
    twin_of(in, !direct, &other);
    rk_kernel *tk = build(t, &tw, tname);
    assert_int_equal(rk_problem_retarget(&p, &tw), RK_OK);
    if (problem_emu_launch_offset(t, tk, &p, &sh, off))
        fail_msg("%s %s %llux%llu offset %u: %s", t->name, tname, (unsigned long long)M, (unsigned long long)N, off,
                 rk_error_message());
    unsigned char *want = outputs(&p, &nt);
    assert_int_equal(nb, nt);
    if (memcmp(got, want, nb))
        fail_msg("%s %s %llux%llu offset %u seed %llu: not the bits of the %s path's kernel %s", t->name, name,
                 (unsigned long long)M, (unsigned long long)N, off, (unsigned long long)s,
                 direct ? "direct" : "span", tname);
    /* the other path where it may run (aligned tensors): does it give other bits? */
    if (off == 0 && N % knob_u32(in, "vec") == 0) {
        rk_kernel *ok = build(t, &other, oname);
        assert_int_equal(rk_problem_retarget(&p, &other), RK_OK);
        if (problem_emu_launch_offset(t, ok, &p, &sh, 0)) fail_msg("%s: %s", oname, rk_error_message());
        size_t no;
        unsigned char *o = outputs(&p, &no);
        paths_differ += memcmp(o, want, no) != 0;
        free(o);
        rk_kernel_free(ok);
    }
    free(got);
    free(want);
    rk_kernel_free(tk);
    rk_problem_free(&p);
}

/* The auto class of fam serving N (it must be auto) at several shapes:
 * odd and aligned lengths up to the class's end, 1 row, a partial block. */
static void check_class(const char *target, const char *fam, const char *knobs, uint64_t N) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    uint32_t nv;
    char full[160], name[256];
    snprintf(full, sizeof full, "split=true %s", knobs);
    const rk_instance *v = variant_for(fam, t, full, N, &nv);
    rk_instance in = *v;
    if (!is_auto(&in)) fail_msg("%s %s %s: the variant serving N=%llu is not stage=auto", target, fam, knobs,
                                (unsigned long long)N);
    uint64_t lo = 0, hi = 0;
    for (uint32_t i = 0; i < nv; i++)
        if (var[i].ndims == 1 && var[i].lo[0] <= N && N <= var[i].hi[0]) lo = var[i].lo[0], hi = var[i].hi[0];
    uint32_t vec = knob_u32(&in, "vec"), R = knob_u32(&in, "rows_per_block");
    uint64_t al = hi / vec * vec >= lo ? hi / vec * vec : 0;   /* an aligned length of the class, if any */
    rk_kernel *k = build(t, &in, name);
    /* a partial last block, one row, an odd M */
    uint64_t Mpart = R > 1 ? R + R / 2 + 1 : 3;
    run_both(t, &in, k, name, Mpart, N, 0);
    run_both(t, &in, k, name, 1, hi, (unsigned)(runs % 2) * 2 + 1);
    if (lo != hi) run_both(t, &in, k, name, 5, lo, 0);
    if (al) {
        run_both(t, &in, k, name, Mpart, al, 0);
        run_both(t, &in, k, name, 3, al, 1);
        run_both(t, &in, k, name, 2, al, 3);
    }
    rk_kernel_free(k);
}

static void test_auto_classes_emu(void **state) {
    (void)state;
    static const struct { const char *target, *fam, *knobs; uint64_t N; } cases[] = {
        {"sm_90", "softmax", "dtype=bf16", 127},
        {"sm_90", "softmax", "dtype=bf16", 1000},
        {"sm_90", "softmax", "dtype=f32", 3},
        {"sm_90", "softmax", "dtype=f16 out_dtype=f32", 300},
        {"gfx950", "softmax", "dtype=f16", 63},
        {"sm_90", "layernorm", "dtype=bf16 residual=true save_stats=true", 127},
        {"sm_90", "layernorm", "dtype=f32 residual=true save_stats=true", 1},
        {"gfx950", "layernorm", "dtype=bf16 residual=true", 400},
        {"sm_90", "layernorm", "dtype=f16 residual=true", 200},
        {"sm_90", "rmsnorm", "dtype=bf16 residual=true save_stats=true", 200},
        {"sm_90", "rmsnorm", "dtype=bf16 save_stats=true", 1000},
        {"gfx950", "rmsnorm", "dtype=f32 residual=true save_stats=true", 17},
        {"sm_90", "reduce", "op=sum dtype=bf16", 127},
        {"sm_90", "reduce", "op=max dtype=f16", 200},
        {"gfx942", "reduce", "op=mean dtype=f32 out_dtype=f32", 9},
    };
    for (size_t i = 0; i < COUNT(cases); i++) check_class(cases[i].target, cases[i].fam, cases[i].knobs, cases[i].N);
    /* the twin comparison can fail: the two paths round differently somewhere */
    assert_true(paths_differ > 0);
}

/* Which classes of a shape-less build are auto (bf16, sm_90a unless
 * named): the lengths where the heuristic stages odd rows through LDS, the
 * span keeps to 16 elements a thread and the aligned rows keep their
 * occupancy hint and their resident blocks beside the span's LDS. */
static void test_auto_choices(void **state) {
    (void)state;
    static const struct { const char *fam, *knobs; uint64_t N; bool want; const char *target; } cases[] = {
        {"softmax", "", 1, true},
        {"softmax", "", 127, true},
        {"softmax", "", 1000, true},
        {"softmax", "", 1017, true},
        /* 1018 .. 1529: 64 threads x 3 chunks = 24 elements a thread */
        {"softmax", "", 1023, false},
        {"softmax", "", 2047, false},
        {"softmax", "", 4097, false},
        {"rmsnorm", "", 127, true},
        /* the span fits the direct rows' 8 blocks of 256 (the hint kept) */
        {"rmsnorm", "", 1000, true},
        {"rmsnorm", "", 3001, false},
        /* LayerNorm's 16-element spans need more registers than its direct
         * rows' hint allows: only the one-chunk classes (up to 249) */
        {"layernorm", "", 127, true},
        {"layernorm", "", 249, true},
        {"layernorm", "", 250, false},
        {"layernorm", "", 2041, false},
        {"layernorm", "", 8000, false},
        {"reduce", "op=sum", 127, true},
        {"reduce", "op=sum", 1000, false},
        /* a locked stage is kept */
        {"softmax", "stage=direct", 127, false},
        /* RMSNorm with a residual: four spans; at 250 .. 1017 (32 832 B a
         * block) 7 blocks fit an SM where the direct rows run 8 */
        {"rmsnorm", "residual=true", 127, true},
        {"rmsnorm", "residual=true", 1000, false},
        /* gfx942: 64 KiB a CU holds 7 spans of 8 KiB, its direct rows run 8
         * blocks of 256; the reduce's one span fits; gfx950 (160 KiB) takes them */
        {"softmax", "", 127, false, "gfx942"},
        {"reduce", "op=sum", 127, true, "gfx942"},
        {"softmax", "", 127, true, "gfx950"},
        {"layernorm", "residual=true", 500, true, "gfx950"},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        const rk_target *t = rk_target_find(cases[i].target ? cases[i].target : "sm_90a");
        uint32_t nv;
        char kn[96];
        snprintf(kn, sizeof kn, "split=true dtype=bf16 %s", cases[i].knobs);
        const rk_instance *v = variant_for(cases[i].fam, t, kn, cases[i].N, &nv);
        if (is_auto(v) != cases[i].want)
            fail_msg("%s %s N=%llu: stage=auto is %d, want %d", cases[i].fam, cases[i].knobs,
                     (unsigned long long)cases[i].N, is_auto(v), cases[i].want);
        if (!is_auto(v)) continue;
        /* aligned rows keep the direct pick's occupancy hint */
        rk_instance d;
        rk_shape sh;
        char dk[128];
        snprintf(dk, sizeof dk, "%s stage=direct", kn);
        if (problem_tuned(cases[i].fam, t, (const uint64_t[]){65536, cases[i].N}, 2, dk, &d, &sh))
            fail_msg("%s: %s", dk, rk_error_message());
        if (knob_u32(v, "min_blocks_per_sm") != knob_u32(&d, "min_blocks_per_sm"))
            fail_msg("%s N=%llu: auto hint %u, direct %u", cases[i].fam, (unsigned long long)cases[i].N,
                     knob_u32(v, "min_blocks_per_sm"), knob_u32(&d, "min_blocks_per_sm"));
    }
}

/* stage=auto asked for a shape it cannot hold: the message names the knobs. */
static void test_auto_bad_knobs(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    static const struct { const char *fam, *knobs, *says; } cases[] = {
        {"softmax", "dtype=bf16 stage=auto chunks=0", "chunks > 0"},
        {"rmsnorm", "dtype=bf16 stage=auto chunks=5 vec=8", "at most 32"},
        {"reduce", "dtype=f32 stage=auto chunks=4 slices=2", "slices=1"},
        {"layernorm", "dtype=bf16 residual=true stage=auto block_size=1024 rows_per_block=1 chunks=2",
         "bytes of LDS"},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        rk_family_id f;
        rk_instance in;
        uint64_t locked = 0;
        assert_int_equal(rk_family_parse(cases[i].fam, &f), RK_OK);
        assert_int_equal(rk_instance_default(f, &in), RK_OK);
        knobs_set(&in, cases[i].knobs, &locked);
        assert_int_equal(rk_instance_validate(&in, t), RK_ERR_INVALID);
        if (!strstr(rk_error_message(), cases[i].says))
            fail_msg("%s %s: '%s' does not say '%s'", cases[i].fam, cases[i].knobs, rk_error_message(),
                     cases[i].says);
    }
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_rows_auto: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_choices),
        cmocka_unit_test(test_auto_bad_knobs),
        cmocka_unit_test(test_auto_classes_emu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
