/* rocke tests — grouped GEMM on the CPU emulator: every target and layout
 * over ragged group lists (a group of M = 1, empty groups, odd extents, K
 * not a multiple of any vector), aligned lists on the async-copy path, the
 * default list of a shape, each checked by the family's reference and by a
 * matmul written here from the documented buffer layout; and bad inputs
 * (malformed lists, too many groups, vectors that do not fit, knobs the
 * family refuses), each with its message, from the C API and through
 * `rocke run --groups`. Seed printed; ROCKE_SEED=N replays. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#include "rocke/emu.h"
#include "rocke/kernels.h"
#include "../src/base/fp.h"
#include "../support/cli_run.h"
#include "../support/problem_emu.h"

static uint64_t seed;
static unsigned runs;

static void make_instance(rk_instance *in, const char *knobs, uint64_t *locked) {
    rk_instance_default(RK_FAMILY_GROUPED_GEMM, in);
    uint64_t more;
    if (problem_knobs_set(in, knobs, &more)) fail_msg("%s: %s", knobs, rk_error_message());
    *locked |= more;
}

static double elem(const rk_host_buf *b, uint64_t i) {
    if (b->param->type == RK_S_F32) return ((const float *)b->data)[i];
    uint16_t h = ((const uint16_t *)b->data)[i];
    return b->param->type == RK_S_BF16 ? rk_bf16_to_f32(h) : rk_f16_to_f32(h);
}

static const rk_host_buf *buf_named(const rk_problem *p, const char *name) {
    for (uint32_t i = 0; i < RK_KSIG_MAX; i++)
        if (p->buf[i].param && !strcmp(p->buf[i].param->name, name)) return &p->buf[i];
    fail_msg("no buffer %s", name);
    return NULL;
}

/* C of every group from the layout docs/gemm.md gives (rows of A and C
 * concatenated, B slice g of [G, K, N]), against the kernel's output;
 * alpha != 0: the chain scale,relu with that factor; ops: the chain
 * bias,bias_row,add,mul with each group's operands where the docs place
 * them (Bias [groups, N] slice g, BiasRow [M] and D0, D1 [M, N] like C). */
static void check_by_hand(const rk_problem *p, const rk_gemm_group *g, uint32_t n, double alpha, bool ops,
                          const char *what) {
    const rk_gemm_spec *s = &p->inst.u.gemm;
    bool ar = s->layout == RK_GEMM_RR || s->layout == RK_GEMM_RC;
    bool br = s->layout == RK_GEMM_RR || s->layout == RK_GEMM_CR;
    uint64_t M = p->shape.dim[1], N = p->shape.dim[2], K = p->shape.dim[3];
    const rk_host_buf *A = &p->buf[0], *B = &p->buf[1], *C = &p->buf[2];
    uint64_t row0 = 0;
    double ulp = s->out_dtype == RK_S_F32 ? 0x1p-23 : s->out_dtype == RK_S_BF16 ? 0x1p-7 : 0x1p-10;
    for (uint32_t i = 0; i < n; i++) {
        for (uint64_t m = 0; m < M; m++)
            for (uint64_t c = 0; c < N; c++) {
                bool inside = m >= row0 && m < row0 + g[i].m && c < g[i].n;
                if (!inside) continue;
                double acc = 0, mag = 0;
                for (uint64_t k = 0; k < g[i].k; k++) {
                    double a = elem(A, ar ? m * K + k : k * M + m);
                    double b = elem(B, i * K * N + (br ? k * N + c : c * K + k));
                    acc += a * b;
                    mag += fabs(a * b);
                }
                if (alpha != 0) {
                    acc = fmax(0.0, alpha * acc);
                    mag *= fabs(alpha);
                }
                if (ops) {
                    double bias = elem(buf_named(p, "Bias"), i * N + c), brow = elem(buf_named(p, "BiasRow"), m);
                    double d0 = elem(buf_named(p, "D0"), m * N + c), d1 = elem(buf_named(p, "D1"), m * N + c);
                    acc = (acc + bias + brow + d0) * d1;
                    mag = (mag + fabs(bias) + fabs(brow) + fabs(d0)) * fabs(d1);
                }
                double got = elem(C, m * N + c);
                if (fabs(got - acc) > ulp * fabs(acc) + 1e-5 * mag + 1e-6)
                    fail_msg("%s: group %u C[%llu,%llu] = %.9g, by hand %.9g", what, i, (unsigned long long)m,
                             (unsigned long long)c, got, acc);
            }
        row0 += g[i].m;
    }
    /* columns past a narrower group's N stay as zeroed */
    row0 = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (uint64_t m = row0; m < row0 + g[i].m; m++)
            for (uint64_t c = g[i].n; c < N; c++)
                if (elem(C, m * N + c) != 0) fail_msg("%s: group %u wrote C[%llu,%llu] past its N", what, i,
                                                      (unsigned long long)m, (unsigned long long)c);
        row0 += g[i].m;
    }
}

/* Build for `target`, run the list (or, n = 0, the default list of `sh`). */
static void run_groups(const char *target, const char *knobs, const rk_gemm_group *g, uint32_t n, const rk_shape *sh) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance in;
    uint64_t locked = 0;
    make_instance(&in, knobs, &locked);
    rk_shape shape;
    if (n) assert_int_equal(rk_problem_groups_shape(&in, g, n, &shape), RK_OK);
    else shape = *sh;
    assert_int_equal(rk_instance_tune(&in, t, &shape, locked), RK_OK);
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    rk_status st = n ? rk_problem_init_groups(&p, &in, g, n, s) : rk_problem_init(&p, &in, &shape, s);
    if (st) fail_msg("%s %s: %s", target, name, rk_error_message());
    double alpha = strstr(knobs, "scale,relu") ? -0.75 : 0;
    if (alpha != 0) assert_int_equal(rk_problem_set_scalar(&p, "alpha", alpha), RK_OK);
    if (problem_emu_launch(t, k, &p, &shape)) fail_msg("%s %s: launch: %s", target, name, rk_error_message());
    rk_problem_diff c;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad) fail_msg("%s %s seed %llu: %llu/%llu bad, %s", target, name, (unsigned long long)s,
                        (unsigned long long)c.bad, (unsigned long long)c.total, c.first_bad);
    char what[320];
    snprintf(what, sizeof what, "%s %s seed %llu", target, name, (unsigned long long)s);
    bool ops = strstr(knobs, "fuse=bias,bias_row,add,mul") != NULL;
    /* by hand: no chain, or one of the two it models (others: the family's reference only) */
    if (n && (!strstr(knobs, "fuse=") || alpha != 0 || ops)) check_by_hand(&p, g, n, alpha, ops, what);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static const char *const targets[] = {"gfx942", "gfx950", "sm_80", "sm_90a"};
static const char *const layouts[] = {"rr", "rc", "cr", "cc"};

static void test_ragged(void **state) {
    (void)state;
    /* M = 1, an empty group, odd extents, a group with K = 0 (C = 0), one wider than a tile */
    static const rk_gemm_group g[] = {{1, 17, 33}, {0, 20, 7}, {19, 33, 31}, {5, 9, 0}, {40, 3, 65}};
    for (size_t t = 0; t < COUNT(targets); t++) {
        bool amd = targets[t][0] == 'g';
        char knobs[160];
        snprintf(knobs, sizeof knobs, "layout=%s tile=32x32x%s warps=1x1 vec_a=1 vec_b=1 stages=2%s",
                 layouts[t], amd ? "16" : "32", t == 3 ? " out_dtype=f32 dtype=bf16 fuse=scale,relu" : "");
        run_groups(targets[t], knobs, g, COUNT(g), NULL);
    }
}

static void test_aligned(void **state) {
    (void)state;
    /* MoE style: shared N and K, ragged M, vectors of 8, async copies */
    static const rk_gemm_group moe[] = {{48, 64, 64}, {8, 64, 64}, {0, 64, 64}, {72, 64, 64}};
    run_groups("sm_80", "tile=32x32x32 warps=2x2 stages=3", moe, COUNT(moe), NULL);
    run_groups("gfx950", "tile=32x32x32 warps=1x1", moe, COUNT(moe), NULL);
    /* the default list of a shape: 5 groups over 3 rows (four empty) */
    rk_shape sh = {.rank = 4, .dim = {5, 3, 16, 24}};
    run_groups("sm_90a", "tile=32x32x32 warps=1x1 vec_a=8 vec_b=8", NULL, 0, &sh);
}

/* Per-group epilogue operands (MoE expert biases, a residual): every
 * operand kind over a ragged list with an empty group, three targets. */
static void test_group_operands(void **state) {
    (void)state;
    static const rk_gemm_group g[] = {{7, 24, 40}, {0, 24, 40}, {33, 17, 40}, {1, 24, 16}};
    run_groups("sm_90a", "layout=rc tile=32x32x32 warps=1x1 vec_a=8 vec_b=1 out_dtype=f32 fuse=bias,bias_row,add,mul",
               g, COUNT(g), NULL);
    run_groups("gfx942", "layout=cr tile=32x32x16 warps=1x1 vec_a=1 vec_b=1 dtype=bf16 out_dtype=f32 "
               "fuse=bias,bias_row,add,mul", g, COUNT(g), NULL);
    run_groups("sm_80", "layout=rr tile=32x32x32 warps=1x1 vec_a=8 vec_b=1 fuse=bias,gelu", g, COUNT(g), NULL);
}

/* Empty groups first, in the middle and last: the grid's spare blocks land
 * on the last group, whose offsets then lie one past the end of A, C and the
 * epilogue's operands; a block with no tile must read none of that (the
 * emulator stops at any read outside a buffer). Vectors of 1 (synchronous
 * gathered loads, which read a masked-off element's first address) and of 8,
 * three targets, and the chain with every per-group operand. */
static void test_empty_groups(void **state) {
    (void)state;
    static const rk_gemm_group g[] = {{0, 16, 24}, {5, 16, 24}, {0, 16, 24}, {3, 16, 24}, {0, 16, 24}};
    static const char *const tg[] = {"sm_90a", "sm_80", "gfx942"};
    for (size_t t = 0; t < COUNT(tg); t++)
        for (uint32_t v = 1; v <= 8; v += 7) {
            char knobs[160];
            /* vectors of 8 along K (A) and N (B): the ragged rows allow no other layout */
            snprintf(knobs, sizeof knobs, "layout=%s tile=32x32x%s warps=1x1 vec_a=%u vec_b=%u stages=2",
                     v == 8 ? "rr" : layouts[t + 1], tg[t][0] == 'g' ? "16" : "32", v, v);
            run_groups(tg[t], knobs, g, COUNT(g), NULL);
        }
    static const rk_gemm_group two[] = {{2, 16, 32}, {0, 16, 16}};
    run_groups("sm_90a", "layout=rc tile=32x32x32 warps=1x1 vec_a=1 vec_b=1 out_dtype=f32 fuse=bias,bias_row,add,mul",
               two, COUNT(two), NULL);
}

static void expect_fail(rk_status st, const char *want) {
    if (st == RK_OK) fail_msg("succeeded, but should fail with '%s'", want);
    if (!strstr(rk_error_message(), want)) fail_msg("message '%s' lacks '%s'", rk_error_message(), want);
}

static void test_bad_inputs(void **state) {
    (void)state;
    rk_gemm_group g[RK_GEMM_GROUPS_MAX];
    uint32_t n;
    static const char *const bad[] = {"", "1,2", "1,2,3,4", "1,2,3;", "a,b,c", "1,-2,3", "1,2,99999999999"};
    for (size_t i = 0; i < COUNT(bad); i++) expect_fail(rk_gemm_groups_parse(bad[i], g, 8, &n), "is not M,N,K");
    assert_int_equal(rk_gemm_groups_parse("3,4,5;0,1,2", g, 8, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_true(g[0].m == 3 && g[0].n == 4 && g[0].k == 5 && g[1].m == 0 && g[1].k == 2);
    expect_fail(rk_gemm_groups_parse("1,1,1;1,1,1;1,1,1", g, 2, &n), "more than 2 groups");

    rk_instance in;
    uint64_t locked = 0;
    make_instance(&in, "tile=32x32x32 warps=1x1", &locked);
    rk_shape sh;
    for (uint32_t i = 0; i < RK_GEMM_GROUPS_MAX; i++) g[i] = (rk_gemm_group){8, 8, 8};
    expect_fail(rk_problem_groups_shape(&in, g, RK_GEMM_GROUPS_MAX + 1, &sh), "legal: 1..1024");
    expect_fail(rk_problem_groups_shape(&in, g, 0, &sh), "legal: 1..1024");
    rk_gemm_group odd[] = {{8, 8, 8}, {4, 16, 31}};
    expect_fail(rk_problem_groups_shape(&in, odd, 2, &sh), "group 1 (4,16,31): K = 31 is not a multiple of vec_a = 8");
    rk_instance rr;
    make_instance(&rr, "layout=rr tile=32x32x32 warps=1x1", &locked);
    rk_gemm_group oddn[] = {{4, 12, 16}};
    expect_fail(rk_problem_groups_shape(&rr, oddn, 1, &sh), "N = 12 is not a multiple of vec_b = 8");
    expect_fail(rk_problem_groups_shape(&rr, oddn, 1, &sh), "--vec-b 4");
    rk_gemm_group empty[] = {{0, 8, 8}, {0, 16, 8}};
    expect_fail(rk_problem_groups_shape(&in, empty, 2, &sh), "every group is empty");
    rk_problem p;
    expect_fail(rk_problem_init_groups(&p, &in, odd, 2, 1), "vec_a");
    sh = (rk_shape){.rank = 4, .dim = {RK_GEMM_GROUPS_MAX + 1, 64, 64, 64}};
    expect_fail(rk_instance_check_shape(&in, &sh), "at most 1024");

    rk_instance gm;
    rk_instance_default(RK_FAMILY_GEMM, &gm);
    expect_fail(rk_problem_groups_shape(&gm, g, 1, &sh), "not a group list");

    const rk_target *t = rk_target_find("sm_90a");
    rk_instance bad_k = in;
    bad_k.u.gemm.split_k = 2;
    expect_fail(rk_instance_validate(&bad_k, t), "split_k");
    rk_instance bad_p = in;
    bad_p.u.gemm.path = RK_GEMM_PATH_WGMMA;
    expect_fail(rk_instance_validate(&bad_p, t), "legal: mma");
    rk_instance bad_s = in;
    bad_s.u.gemm.schedule = RK_GEMM_SCHED_WS;
    expect_fail(rk_instance_validate(&bad_s, t), "schedule=plain");
    rk_instance scales;
    locked = 0;
    make_instance(&scales, "tile=32x32x32 warps=1x1 fuse=scale,scale,scale", &locked);
    expect_fail(rk_instance_validate(&scales, t), "2 scale");
}

/* rocke run --groups: a ragged list verifies; bad lists fail with their message. */
static void test_cli_groups(void **state) {
    (void)state;
    char dir[] = "/tmp/rk_gg_XXXXXX", cmd[8192];
    assert_non_null(mkdtemp(dir));
    const char *rocke = ROCKE_BINARY_DIR "/rocke";
    snprintf(cmd, sizeof cmd, "%s build grouped_gemm --target sm_80 --tile 32x32x32 --warps 1x1 --vec-a 1 "
             "--vec-b 1 --ir-only -o g && %s build grouped_gemm --target gfx942 --ir-only -o g8", rocke, rocke);
    rk_test_run r = rk_test_sh(dir, cmd);
    if (r.rc) fail_msg("build: %s", r.err);
    rk_test_run_free(&r);
    static const struct { const char *args; int rc; const char *msg; } rows[] = {
        {"g/manifest.json --groups '1,17,33;0,5,5;9,3,7' --verify", 0, "bad=0/"},
        {"g/manifest.json --groups '1,2' --verify", 2, "group 0 '1,2' is not M,N,K"},
        {"g/manifest.json --groups '1,2,3;;4,5,6'", 2, "group 1 '' is not M,N,K"},
        {"g/manifest.json --groups '0,4,4;0,8,8'", 2, "every group is empty"},
        {"g/manifest.json --groups 1,2,3 --shape 1,2,3,4", 2, "--groups and --shape"},
        {"g8/manifest.json --groups '4,16,31'", 2, "K = 31 is not a multiple of vec_a = 8"},
    };
    for (size_t i = 0; i < COUNT(rows); i++) {
        snprintf(cmd, sizeof cmd, "ROCKE_DEVICE=emu %s run %s", rocke, rows[i].args);
        r = rk_test_sh(dir, cmd);
        if (r.rc != rows[i].rc || (!strstr(r.out, rows[i].msg) && !strstr(r.err, rows[i].msg)))
            fail_msg("run %s: exit %d (want %d), lacks '%s': %s%s", rows[i].args, r.rc, rows[i].rc, rows[i].msg,
                     r.out, r.err);
        rk_test_run_free(&r);
    }
    /* one group more than the table holds */
    size_t off = (size_t)snprintf(cmd, sizeof cmd, "ROCKE_DEVICE=emu %s run g/manifest.json --groups '", rocke);
    for (uint32_t i = 0; i <= RK_GEMM_GROUPS_MAX; i++)
        off += (size_t)snprintf(cmd + off, sizeof cmd - off, "%s1,1,1", i ? ";" : "");
    snprintf(cmd + off, sizeof cmd - off, "'");
    r = rk_test_sh(dir, cmd);
    if (r.rc != 2 || !strstr(r.err, "more than 1024 groups")) fail_msg("1025 groups: exit %d: %s", r.rc, r.err);
    rk_test_run_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_gemm_grouped: seed %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ragged),
        cmocka_unit_test(test_aligned),
        cmocka_unit_test(test_group_operands),
        cmocka_unit_test(test_empty_groups),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_cli_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
