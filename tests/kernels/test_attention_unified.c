/* rocke tests — unified attention (mode = unified) on the emulator against
 * the double reference over each sequence's gathered keys: mixed batches of
 * query lengths 1, 2, page_size - 1, page_size + 1 and 200 over KV
 * lengths 1 to 997, random page permutations, the 2-D path and the
 * split-KV path (all and some of the splits), every option on and off
 * (sliding window, softcap, sinks, ALiBi, LSE, e4m3 caches with per-head
 * scales), page sizes 16 to 128, D 64,
 * 128 and 256, GQA 1, 4 and 16, f16 and bf16, sm_90a and gfx942 (one case
 * each on sm_80 and gfx950); the split heuristic; the input checks and the
 * out-of-range page caught by the emulator; bad specs and shapes. Fresh
 * random data; ROCKE_SEED=N replays. */
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

#include "rocke/emu.h"
#include "rocke/kernels.h"
#include "../support/problem_emu.h"

static uint64_t seed;
static unsigned runs;

/* A batch: n sequences of q[i] new tokens over k[i] keys. */
typedef struct batch { uint32_t n; uint64_t q[16], k[16]; } batch;

/* The unified instance for (Hq, Hkv, D) and batch b on target, knobs locked. */
static void unified_instance(const char *target, uint64_t Hq, uint64_t Hkv, uint64_t D, const batch *b,
                             const char *knobs, rk_instance *in, rk_shape *sh) {
    rk_family_id f;
    assert_int_equal(rk_family_parse("attention", &f), RK_OK);
    rk_instance_default(f, in);
    char all[256];
    snprintf(all, sizeof all, "mode=unified %s", knobs);
    uint64_t locked;
    if (problem_knobs_set(in, all, &locked)) fail_msg("%s: %s", all, rk_error_message());
    uint64_t total = 0, longest = 1;
    for (uint32_t i = 0; i < b->n; i++) {
        total += b->q[i];
        longest = b->k[i] > longest ? b->k[i] : longest;
    }
    const uint64_t ext[6] = {b->n, Hq, Hkv, total, longest, D};
    assert_int_equal(rk_shape_default(f, sh), RK_OK);
    assert_int_equal(rk_shape_update(f, sh, NULL, ext, 6, false), RK_OK);
    if (rk_instance_tune(in, rk_target_find(target), sh, locked)) fail_msg("%s: %s", all, rk_error_message());
}

static void *buf_of(rk_problem *p, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++)
        if (!strcmp(p->sig.p[i].name, name)) return p->buf[i].data;
    return NULL;
}

/* Scalars: "name=value ..." (num_splits, softcap, window_left). */
static void set_scalars(rk_problem *p, const char *text) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        *eq = 0;
        if (rk_problem_set_scalar(p, tok, strtod(eq + 1, NULL))) fail_msg("%s: %s", tok, rk_error_message());
    }
}

/* A second launch over a cleared O gives the same bytes (the merge order
 * does not depend on which block arrived last; Arrivals were reset). */
static void relaunch_same(rk_problem *p, const rk_target *t, rk_kernel *k, const rk_shape *sh, const char *name) {
    for (uint32_t i = 0; i < p->sig.n; i++) {
        if (strcmp(p->sig.p[i].name, "O")) continue;
        void *first = malloc(p->buf[i].bytes);
        assert_non_null(first);
        memcpy(first, p->buf[i].data, p->buf[i].bytes);
        memset(p->buf[i].data, 0, p->buf[i].bytes);
        if (problem_emu_launch(t, k, p, sh)) fail_msg("%s: relaunch: %s", name, rk_error_message());
        if (memcmp(first, p->buf[i].data, p->buf[i].bytes)) fail_msg("%s: O differs on the second launch", name);
        free(first);
    }
}

/* Build, fill, set the batch and scalars, run, verify; the check must also
 * catch O with one element changed. */
static void run_case(const char *target, uint64_t Hq, uint64_t Hkv, uint64_t D, const batch *b, const char *knobs,
                     const char *scalars) {
    const rk_target *t = rk_target_find(target);
    assert_non_null(t);
    rk_instance in;
    rk_shape sh;
    unified_instance(target, Hq, Hkv, D, b, knobs, &in, &sh);
    char name[256];
    assert_int_equal(rk_instance_name(&in, name, sizeof name), RK_OK);
    rk_kernel *k;
    rk_problem p;
    uint64_t s = seed ^ (runs++ * 0x9e3779b97f4a7c15ull);
    if (problem_emu_prepare(t, &in, &sh, s, &k, &p)) fail_msg("%s %s: %s", target, name, rk_error_message());
    if (rk_problem_set_lengths(&p, b->q, b->k, b->n)) fail_msg("%s %s: %s", target, name, rk_error_message());
    set_scalars(&p, scalars);
    if (rk_problem_check_inputs(&p)) fail_msg("%s %s: %s", target, name, rk_error_message());
    rk_problem_diff c;
    if (problem_emu_verify(t, k, &p, &sh, &c)) fail_msg("%s %s: launch: %s", target, name, rk_error_message());
    if (c.bad)
        fail_msg("%s %s [%s] seed %llu: bad=%llu/%llu max_abs_diff=%g, first %s", target, name, scalars,
                 (unsigned long long)s, (unsigned long long)c.bad, (unsigned long long)c.total, c.max_abs_diff,
                 c.first_bad);
    if (strstr(scalars, "num_splits") && !strstr(scalars, "num_splits=1")) relaunch_same(&p, t, k, &sh, name);
    uint16_t *o = buf_of(&p, "O");
    uint64_t count = sh.dim[3] * Hq * D, big = 0;
    for (uint64_t x = 1; x < count; x++)
        if ((o[x] & 0x7fff) > (o[big] & 0x7fff)) big = x;   /* 16-bit magnitudes order as their bits */
    o[big] ^= 0x0100;
    assert_int_equal(rk_problem_check(&p, &c), RK_OK);
    if (c.bad != 1) fail_msg("%s %s: a corrupted O gave bad=%llu", target, name, (unsigned long long)c.bad);
    rk_problem_free(&p);
    rk_kernel_free(k);
}

static const char *const targets[] = {"sm_90a", "gfx942"};

/* Decodes of 1 and 2 tokens (one over a single key), chunks of P - 1, P + 1
 * and 200 tokens over contexts, a query as long as its keys. */
static const batch mixed = {6, {1, 2, 15, 17, 200, 1}, {1, 37, 15, 60, 200, 997}};

/* The 2-D path and split-KV with every split and with some of them. */
static void test_mixed_paths(void **state) {
    (void)state;
    for (int t = 0; t < 2; t++) {
        run_case(targets[t], 4, 1, 64, &mixed, "page_size=16 kv_splits=1", "");
        run_case(targets[t], 4, 1, 64, &mixed, "page_size=16 kv_splits=4", t ? "num_splits=3" : "num_splits=4");
    }
    const batch b = {3, {1, 17, 2}, {70, 17, 99}};
    run_case("sm_90a", 4, 1, 64, &b, "page_size=16 kv_splits=4", "num_splits=1");
}

/* reverse_order: the grid's blocks remapped (query blocks last to first, KV heads innermost) give the
 * same rows; prefills listed before decodes, sequences shorter than a page, 2-D and split paths. */
static void test_reverse_order(void **state) {
    (void)state;
    const batch b = {6, {70, 33, 1, 1, 2, 5}, {300, 40, 1000, 7, 2, 9}};
    run_case("sm_90a", 4, 1, 64, &b, "page_size=16 kv_splits=1 reverse_order=true", "");
    run_case("sm_90a", 8, 2, 64, &b, "page_size=32 kv_splits=4 reverse_order=true", "num_splits=3");
    run_case("gfx942", 8, 2, 64, &b, "page_size=16 kv_splits=4 reverse_order=true", "num_splits=4");
    run_case("sm_90a", 4, 1, 64, &b, "page_size=16 kv_splits=2 block_m=16 warps=1 reverse_order=true",
             "num_splits=2");
}

/* Each option alone, then all together, on the 2-D and the split path. */
static void test_options(void **state) {
    (void)state;
    const batch b = {4, {1, 17, 20, 2}, {60, 17, 90, 99}};
    static const char *const opts[][2] = {
        {"sinks=true", ""},
        {"softcap=true", "softcap=0.2"},
        {"alibi=true", ""},
        {"mask=window", "window_left=20"},
        {"lse=true", ""},
    };
    for (int i = 0; i < 5; i++) {
        char knobs[96], sc[64];
        snprintf(knobs, sizeof knobs, "page_size=16 kv_splits=2 %s", opts[i][0]);
        snprintf(sc, sizeof sc, "num_splits=1 %s", opts[i][1]);
        run_case(targets[i % 2], 8, 2, 64, &b, knobs, sc);
        snprintf(sc, sizeof sc, "num_splits=2 %s", opts[i][1]);
        run_case(targets[(i + 1) % 2], 8, 2, 64, &b, knobs, sc);
    }
    const char *all = "page_size=16 kv_splits=2 sinks=true softcap=true alibi=true mask=window lse=true";
    const batch c = {5, {1, 2, 15, 17, 70}, {1, 37, 15, 60, 90}};
    run_case("sm_90a", 4, 1, 64, &c, all, "num_splits=1 softcap=0.5 window_left=33");
    run_case("gfx942", 4, 1, 64, &c, all, "num_splits=2 softcap=0.5 window_left=33");
    /* a window that reaches back past the start and an unbounded one */
    run_case("sm_90a", 8, 2, 64, &b, "mask=window page_size=16 kv_splits=1", "window_left=1000");
    run_case("gfx942", 8, 2, 64, &b, "mask=window page_size=16 kv_splits=1", "window_left=-1");
}

/* Page sizes 32, 64, 128; D 128 and 256; GQA 1 and 16; f16; a 16-row block
 * of one warp; sm_80 and gfx950. */
static void test_shapes(void **state) {
    (void)state;
    const batch b = {3, {1, 33, 2}, {70, 65, 129}};
    run_case("sm_90a", 4, 4, 64, &b, "page_size=32 kv_splits=1 dtype=f16", "");
    run_case("gfx942", 16, 1, 64, &b, "page_size=64 kv_splits=2", "num_splits=2");
    run_case("sm_80", 16, 1, 128, &b, "page_size=128 kv_splits=1", "");
    run_case("gfx950", 4, 2, 128, &b, "page_size=32 kv_splits=2 dtype=f16", "num_splits=2");
    run_case("sm_90a", 8, 2, 64, &b, "page_size=16 kv_splits=2 block_m=16 warps=1", "num_splits=2");
    const batch small = {2, {1, 17}, {40, 17}};
    run_case("sm_90a", 2, 1, 256, &small, "page_size=16 kv_splits=2", "num_splits=2");
    run_case("gfx942", 2, 1, 256, &small, "page_size=16 kv_splits=1", "");
}

/* e4m3 caches with per-KV-head scales: OCP on NVIDIA, FNUZ on gfx942. */
static void test_fp8(void **state) {
    (void)state;
    run_case("sm_90a", 4, 1, 64, &mixed, "kv_dtype=fp8 page_size=16 kv_splits=1", "");
    const batch b = {3, {1, 33, 2}, {70, 65, 129}};
    run_case("gfx942", 8, 2, 128, &b, "kv_dtype=fp8fnuz page_size=32 kv_splits=2 sinks=true", "num_splits=2");
}

/* The full query blocks' wgmma body (path = wgmma, sm_90a's default)
 * against the mma.sync body on the same batches: decodes of 1 and 2 tokens,
 * P - 1, P + 1, 70 and 33 tokens, GQA 4 (a block of 16 tokens; 70 leaves a
 * 6-token block of 24 rows, a full one) and GQA 1 (64 tokens a block; the
 * 6-token tail of 70 runs on mma.sync), D 64 and 128, pages 16 and 32 (31
 * and 33 tokens there), both
 * paths of the split; full blocks split 2 and 4 ways by their keys and
 * merged; then every option with an e4m3 cache at D 128. The
 * heuristic's path per variant: wgmma for 64 rows, mma for 16. */
static void test_wgmma_body(void **state) {
    (void)state;
    const batch b = {6, {1, 2, 15, 17, 70, 33}, {1, 40, 15, 60, 200, 120}};
    static const char *const paths[] = {"path=wgmma", "path=mma"};
    for (int i = 0; i < 2; i++) {
        char knobs[128];
        snprintf(knobs, sizeof knobs, "page_size=16 kv_splits=2 %s", paths[i]);
        run_case("sm_90a", 8, 2, 64, &b, knobs, "num_splits=1");
        run_case("sm_90a", 4, 4, 128, &b, knobs, "num_splits=2");
    }
    const batch p32 = {4, {1, 31, 33, 2}, {33, 31, 95, 64}};   /* P - 1 and P + 1 of 32-token pages */
    run_case("sm_90a", 4, 1, 128, &p32, "page_size=32 kv_splits=1 path=wgmma dtype=f16", "");
    run_case("sm_90a", 8, 2, 128, &b,
             "page_size=16 kv_splits=2 path=wgmma kv_dtype=fp8 sinks=true softcap=true alibi=true mask=window lse=true",
             "num_splits=2 softcap=0.7 window_left=45");
    /* full blocks that split their keys (700 and 1100 keys: 2 and 4 of the 4 splits) and merge, with the sink and LSE */
    const batch sp = {3, {20, 1, 40}, {700, 600, 1100}};
    run_case("sm_90a", 8, 2, 64, &sp, "page_size=16 kv_splits=4 path=wgmma sinks=true lse=true", "num_splits=4");
    rk_instance in;
    rk_shape sh;
    unified_instance("sm_90a", 8, 2, 128, &b, "page_size=16", &in, &sh);
    assert_int_equal(in.u.attn.path, RK_ATTN_PF_WGMMA);
    rk_instance base = in, general;
    rk_variant v[4];
    uint32_t n = rk_instance_variants(&base, rk_target_find("sm_90a"), 0, &general, v, 4);
    assert_true(n >= 1 && v[0].inst.u.attn.block_m == 16 && v[0].inst.u.attn.path == RK_ATTN_PF_MMA);
    unified_instance("sm_80", 8, 2, 128, &b, "page_size=16", &in, &sh);
    assert_int_not_equal(in.u.attn.path, RK_ATTN_PF_WGMMA);
}

/* A problem (no kernel) for the heuristic and the input checks. */
static void problem_of(const char *target, uint64_t Hq, uint64_t Hkv, const batch *b, const char *knobs,
                       rk_problem *p) {
    rk_instance in;
    rk_shape sh;
    unified_instance(target, Hq, Hkv, 64, b, knobs, &in, &sh);
    assert_int_equal(rk_instance_check_shape(&in, &sh), RK_OK);
    assert_int_equal(rk_problem_init(p, &in, &sh, seed), RK_OK);
    assert_int_equal(rk_problem_set_lengths(p, b->q, b->k, b->n), RK_OK);
}

/* Few decodes over long contexts split; a long prefill and many sequences
 * stay 2-D; a kv_splits = 1 instance is always 2-D. */
static void test_heuristic(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    rk_problem p;
    uint32_t n;
    const batch few = {2, {1, 1}, {8000, 3000}};
    problem_of("sm_90a", 32, 8, &few, "page_size=16 kv_splits=8", &p);
    assert_int_equal(rk_problem_attention_splits(&p, t, &n), RK_OK);
    assert_int_equal(n, 8);
    rk_problem_free(&p);
    const batch shortkv = {2, {1, 1}, {300, 20}};
    problem_of("sm_90a", 32, 8, &shortkv, "page_size=16 kv_splits=8", &p);
    assert_int_equal(rk_problem_attention_splits(&p, t, &n), RK_OK);
    assert_int_equal(n, 1);   /* 256 keys a split at least */
    rk_problem_free(&p);
    const batch prefill = {1, {4096}, {4096}};
    problem_of("sm_90a", 8, 8, &prefill, "page_size=16 kv_splits=2", &p);
    assert_int_equal(rk_problem_attention_splits(&p, t, &n), RK_OK);
    assert_int_equal(n, 1);   /* 64 query blocks x 8 KV heads fill the 132 SMs */
    rk_problem_free(&p);
    problem_of("sm_90a", 32, 8, &few, "page_size=16 kv_splits=1", &p);
    assert_int_equal(rk_problem_attention_splits(&p, t, &n), RK_OK);
    assert_int_equal(n, 1);
    rk_problem_free(&p);
}

/* The row variants on odd lengths: the 16-row block of one warp (G 8, two
 * tokens a block) and the 64-row block, each with query blocks that split by
 * their keys (700 keys: 2 of the 4 splits; 3 and 130: none). */
static void test_rows(void **state) {
    (void)state;
    const batch b = {4, {1, 3, 17, 130}, {700, 3, 400, 130}};
    run_case("sm_90a", 8, 1, 64, &b, "page_size=64 kv_splits=4 block_m=16 warps=1", "num_splits=4");
    run_case("gfx942", 4, 1, 128, &b, "page_size=16 kv_splits=4", "num_splits=4");
    run_case("sm_90a", 4, 4, 64, &b, "page_size=16 kv_splits=1 block_m=16 warps=1", "");
}

/* The pick: a key step costs a 64-row block whatever its rows (measured,
 * COPY_ROWS), so a decode batch ties and keeps 64 rows, a prefill takes 64
 * (four times the blocks), G above 16 only the 64-row block. The key split
 * costs its kernel's full blocks 7.5% and saves its decode blocks 8%
 * (measured): a prefill takes the whole-keys twin, decodes the split. */
static void test_rows_pick(void **state) {
    (void)state;
    const rk_attention_unified_candidate c[2] = {{64, 4, false}, {16, 1, false}};
    double cost[3];
    const uint64_t dq[3] = {1, 1, 2}, dk[3] = {700, 300, 50};
    assert_int_equal(rk_attention_unified_pick(dq, dk, 3, 4, c, 2, cost), 0);
    assert_true(cost[0] == 1050.0 * 64 && cost[1] == 1050.0 * 64);
    const uint64_t pq[1] = {130}, pk[1] = {130};
    assert_int_equal(rk_attention_unified_pick(pq, pk, 1, 4, c, 2, cost), 0);
    assert_true(cost[0] == 706.0 * 64 && cost[1] == 2242.0 * 64);   /* 9 blocks of 16 tokens, 33 of 4 */
    assert_int_equal(rk_attention_unified_pick(dq, dk, 3, 32, c, 2, cost), 0);
    assert_true(cost[1] == 0);
    /* the build's three kernels: the key-split 64 rows, 16 rows, the whole-keys 64 rows */
    const rk_attention_unified_candidate v[3] = {{64, 4, true}, {16, 1, false}, {64, 4, false}};
    assert_int_equal(rk_attention_unified_pick(pq, pk, 1, 4, v, 3, cost), 2);
    /* the last of 9 blocks holds 2 tokens = 8 rows, within a warp's 16: a decode's block */
    assert_true(fabs(cost[0] - (576.0 * 1.075 + 130.0 * 0.92) * 64) < 1e-6 && cost[2] == 706.0 * 64);
    /* one 512-token chunk over 4096 keys (123k keys in full blocks) beside 24 decodes of 9000 keys: the
     * split saves 17.3k units on the decodes and costs 9.2k on the chunk; the chunk alone takes whole keys */
    uint64_t mq[25], mk[25];
    for (uint32_t i = 0; i < 25; i++) mq[i] = i ? 1 : 512, mk[i] = i ? 9000 : 4096;
    assert_int_equal(rk_attention_unified_pick(mq, mk, 25, 4, v, 3, cost), 0);
    assert_int_equal(rk_attention_unified_pick(mq, mk, 1, 4, v, 3, cost), 2);
    /* full blocks on wgmma cost 0.6 of mma.sync's (a model): a prefill now weighs 576 x 0.6 keys */
    const rk_attention_unified_candidate w[2] = {{64, 4, false, true}, {16, 1, false, false}};
    assert_int_equal(rk_attention_unified_pick(pq, pk, 1, 4, w, 2, cost), 0);
    assert_true(fabs(cost[0] - (576.0 * 0.6 + 130.0) * 64) < 1e-6 && cost[1] == 2242.0 * 64);
}

/* What a 132-SM GPU gets (Hq 32, Hkv 8, D 128, 64 rows): one 8192-token
 * prefill, 256 decodes over 2k..8k and their mix fill it on the 2-D path;
 * 8 decodes over 32k take 8 splits (512 blocks), fewer under a workspace
 * limit; a short sequence beside long ones does not split. */
static void test_launch(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    rk_instance in;
    rk_shape sh;
    const batch one = {1, {1}, {1}};
    unified_instance("sm_90a", 32, 8, 128, &one, "page_size=16 kv_splits=8", &in, &sh);
    static uint64_t lq[257], lk[257];
    rk_attention_unified_launch l;
    lq[0] = lk[0] = 8192;
    assert_int_equal(rk_attention_unified_launch_for(&in, t, lq, lk, 1, 32, 8, -1, 0, &l), RK_OK);
    assert_true(l.splits == 1 && l.query_blocks == 512 * 8 && l.blocks == 4096 && l.work_bytes == 0);
    uint64_t rng = seed | 1;
    for (int i = 1; i < 257; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        lq[i] = 1, lk[i] = 2048 + (rng >> 33) % 6145;
    }
    assert_int_equal(rk_attention_unified_launch_for(&in, t, lq + 1, lk + 1, 256, 32, 8, -1, 0, &l), RK_OK);
    assert_true(l.splits == 1 && l.query_blocks == 2048 && l.blocks == 2048);
    assert_int_equal(rk_attention_unified_launch_for(&in, t, lq, lk, 257, 32, 8, -1, 0, &l), RK_OK);
    assert_true(l.splits == 1 && l.blocks == 4096 + 2048);
    for (int i = 0; i < 8; i++) lq[i] = 1, lk[i] = 32768;
    assert_int_equal(rk_attention_unified_launch_for(&in, t, lq, lk, 8, 32, 8, -1, 0, &l), RK_OK);
    assert_true(l.splits == 8 && l.query_blocks == 64 && l.blocks == 512);
    assert_true(l.work_bytes == 4 * (8ull * 32 * 8 * 130 + 8 * 8));
    assert_int_equal(rk_attention_unified_launch_for(&in, t, lq, lk, 8, 32, 8, -1, 600000, &l), RK_OK);
    assert_true(l.splits == 4 && l.blocks == 256 && l.work_bytes <= 600000);
    lk[2] = lk[3] = 100;
    assert_int_equal(rk_attention_unified_launch_for(&in, t, lq, lk, 4, 32, 8, -1, 0, &l), RK_OK);
    assert_true(l.splits == 8 && l.blocks == 2 * 8 * 8 + 2 * 8);
    assert_int_not_equal(rk_attention_unified_launch_for(&in, t, lq, lk, 4, 32, 6, -1, 0, &l), RK_OK);
    assert_non_null(strstr(rk_error_message(), "Hkv = 6"));
}

/* Offsets, lengths and page ids are checked before a launch, naming the
 * sequence; a page id outside the cache that reaches the emulator stops at
 * the read. */
static void test_bad_batch(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    rk_instance in;
    rk_shape sh;
    const batch b = {3, {2, 17, 1}, {40, 40, 40}};
    unified_instance("sm_90a", 4, 2, 64, &b, "page_size=16 kv_splits=2", &in, &sh);
    rk_kernel *k;
    rk_problem p;
    assert_int_equal(problem_emu_prepare(t, &in, &sh, seed, &k, &p), RK_OK);
    assert_int_equal(rk_problem_set_lengths(&p, b.q, b.k, b.n), RK_OK);
    assert_int_equal(rk_problem_check_inputs(&p), RK_OK);
    int32_t *qs = buf_of(&p, "query_start"), *lens = buf_of(&p, "kv_lens"), *bt = buf_of(&p, "block_table");
    qs[2] = 1;   /* below query_start[1] = 2 */
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    assert_non_null(strstr(rk_error_message(), "sequence 1"));
    qs[2] = 19;
    qs[3] = 21;   /* total_q is 20 */
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    assert_non_null(strstr(rk_error_message(), "total_q"));
    qs[3] = 20;
    lens[1] = 16;   /* 17 new queries */
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    assert_non_null(strstr(rk_error_message(), "sequence 1 has 17 new queries"));
    lens[1] = 49;   /* 3 pages hold 48 keys */
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    assert_non_null(strstr(rk_error_message(), "sequence 1: kv_len = 49"));
    lens[1] = 40;
    assert_int_equal(rk_problem_set_scalar(&p, "num_splits", 3), RK_OK);
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    assert_non_null(strstr(rk_error_message(), "num_splits = 3, legal 1..2"));
    assert_int_equal(rk_problem_set_scalar(&p, "num_splits", 1), RK_OK);
    bt[2 * 3 + 1] = 9 + 4096;   /* 3 pages per sequence, 9 in the cache */
    assert_int_not_equal(rk_problem_check_inputs(&p), RK_OK);
    assert_non_null(strstr(rk_error_message(), "sequence 2: block_table[2][1]"));
    assert_int_not_equal(problem_emu_launch(t, k, &p, &sh), RK_OK);
    assert_non_null(strstr(rk_error_message(), "out-of-bounds global read"));
    const uint64_t q2[3] = {2, 17, 2}, k2[3] = {40, 40, 40}, q3[3] = {2, 17, 1}, k3[3] = {40, 10, 40};
    assert_int_not_equal(rk_problem_set_lengths(&p, q2, k2, 3), RK_OK);
    assert_non_null(strstr(rk_error_message(), "21 query tokens"));
    assert_int_not_equal(rk_problem_set_lengths(&p, q3, k3, 3), RK_OK);
    assert_non_null(strstr(rk_error_message(), "sequence 1 has 17 new queries over 10 keys"));
    rk_problem_free(&p);
    rk_kernel_free(k);
}

/* Specs and shapes the unified mode does not serve, each named. */
static void test_bad_spec(void **state) {
    (void)state;
    const rk_target *t = rk_target_find("sm_90a");
    rk_instance in;
    rk_shape sh;
    const batch b = {2, {1, 3}, {20, 30}};
    unified_instance("sm_90a", 4, 2, 64, &b, "page_size=16", &in, &sh);
    assert_int_equal(in.u.attn.mask, RK_ATTN_MASK_CAUSAL);   /* the default for unified */
    assert_int_equal(rk_instance_validate(&in, t), RK_OK);
    rk_instance bad = in;
    bad.u.attn.mask = RK_ATTN_MASK_NONE;
    assert_int_not_equal(rk_instance_validate(&bad, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "causal inside each sequence"));
    bad = in;
    bad.u.attn.kv_dtype = RK_ATTN_KV_FP8FNUZ;
    assert_int_not_equal(rk_instance_validate(&bad, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "use kv_dtype = fp8"));
    bad = in;
    bad.u.attn.page_size = 0;
    assert_int_not_equal(rk_instance_validate(&bad, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "paged cache"));
    bad = in;
    bad.u.attn.dtype = RK_S_F32;
    assert_int_not_equal(rk_instance_validate(&bad, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "knob 'dtype' must be one of f16|bf16"));
    bad = in;
    bad.u.attn.layout = RK_ATTN_VARLEN;
    assert_int_not_equal(rk_instance_validate(&bad, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "[total_q, Hq, D]"));
    bad = in;
    bad.u.attn.mode = RK_ATTN_PREFILL;
    bad.u.attn.sinks = true;
    assert_int_not_equal(rk_instance_validate(&bad, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "unified only"));
    /* the wgmma body: sm_90a, one warpgroup of 64 rows, 2..3 stages */
    bad = in;
    bad.u.attn.path = RK_ATTN_PF_WGMMA;
    assert_int_not_equal(rk_instance_validate(&bad, rk_target_find("sm_80")), RK_OK);
    assert_non_null(strstr(rk_error_message(), "needs sm_90a"));
    bad.u.attn.block_m = 16, bad.u.attn.warps = 1;
    assert_int_not_equal(rk_instance_validate(&bad, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "'block_m' = 16, 'warps' = 1, legal 64 and 4"));
    bad = in;
    bad.u.attn.path = RK_ATTN_PF_WGMMA, bad.u.attn.stages = 1;
    assert_int_not_equal(rk_instance_validate(&bad, t), RK_OK);
    assert_non_null(strstr(rk_error_message(), "'stages' = 1 (path=mma serves 1)"));
    rk_shape s2 = sh;
    s2.dim[1] = 128, s2.dim[2] = 1;   /* 128 heads per KV head, block_m 64 */
    assert_int_not_equal(rk_instance_check_shape(&in, &s2), RK_OK);
    assert_non_null(strstr(rk_error_message(), "block_m = 64"));
    s2 = sh;
    s2.dim[1] = 6, s2.dim[2] = 4;
    assert_int_not_equal(rk_instance_check_shape(&in, &s2), RK_OK);
    assert_non_null(strstr(rk_error_message(), "not a multiple"));
    s2 = sh;
    s2.dim[3] = 61;   /* 2 sequences of at most 30 keys */
    assert_int_not_equal(rk_instance_check_shape(&in, &s2), RK_OK);
    assert_non_null(strstr(rk_error_message(), "cannot fit"));
    s2 = sh;
    s2.dim[5] = 128;
    assert_int_not_equal(rk_instance_check_shape(&in, &s2), RK_OK);
    assert_non_null(strstr(rk_error_message(), "head_dim = 64"));
    rk_problem p;
    rk_instance pre;
    rk_family_id f;
    assert_int_equal(rk_family_parse("attention", &f), RK_OK);
    rk_instance_default(f, &pre);
    pre.u.attn.head_dim = 64;
    assert_int_equal(rk_problem_init(&p, &pre, &sh, seed), RK_OK);
    uint32_t n;
    assert_int_not_equal(rk_problem_attention_splits(&p, t, &n), RK_OK);
    assert_non_null(strstr(rk_error_message(), "--mode unified"));
    rk_problem_free(&p);
}

int main(void) {
    const char *env = getenv("ROCKE_SEED");
    seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("test_attention_unified: seed = %llu (ROCKE_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_paths), cmocka_unit_test(test_options),  cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_fp8),         cmocka_unit_test(test_heuristic), cmocka_unit_test(test_bad_batch),
        cmocka_unit_test(test_bad_spec),    cmocka_unit_test(test_rows),      cmocka_unit_test(test_rows_pick),
        cmocka_unit_test(test_launch),      cmocka_unit_test(test_wgmma_body),
        cmocka_unit_test(test_reverse_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
