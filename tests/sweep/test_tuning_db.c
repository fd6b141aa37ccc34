/* rocke tests — the tuning database: rk_tuning_load on good and bad files,
 * the log-space distance against a double computation, rk_tuning_apply
 * taking the nearest tuned shape (found here independently), keeping locked
 * knobs, ignoring another device, refusing knobs that do not fit; then
 * `rocke tune` on the emulator changing what `rocke build` picks
 * (--tuning and ROCKE_TUNING). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocke/kernels.h"
#include "rocke/target.h"
#include "support/sweep_fixture.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    if (access(SWEEP_ROCKE, X_OK) || !sweep_tmpdir(dir, "tuning")) return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    sweep_rmdir(dir);
    return 0;
}

static void write_file(const char *name, const char *text) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#define ENTRY(M, N, B, V, R, K) \
    "{\"family\": \"softmax\", \"target\": \"sm_90\", \"shape\": {\"M\": " #M ", \"N\": " #N "}, \"knobs\": " \
    "{\"dtype\": \"f16\", \"out_dtype\": \"f16\", \"block_size\": \"" #B "\", \"vec\": \"" #V "\", " \
    "\"rows_per_block\": \"" #R "\", \"chunks\": \"" #K "\", \"split\": \"false\", \"wave\": \"32\", " \
    "\"unroll\": \"1\", \"tail\": \"masked\", \"min_blocks_per_sm\": \"0\", \"keep_exps\": \"false\", \"slices\": \"1\"}}"
static const char db_text[] =
    "{\"format\": \"rocke.tuning/v1\", \"device\": \"test device\", \"driver\": \"none\", \"rocke_version\": \"0.1.0\", "
    "\"date\": \"2026-12-01T00:00:00Z\", \"entries\": [" ENTRY(64, 512, 64, 4, 1, 2) ", " ENTRY(4096, 8192, 512, 8, 1, 2)
    "]}";

static uint32_t knob_u(const rk_instance *in, const char *k) {
    char v[64];
    assert_int_equal(rk_instance_get(in, k, v, sizeof v), RK_OK);
    return (uint32_t)atoi(v);
}

static void test_distance_and_nearest(void **state) {
    (void)state;
    write_file("db.json", db_text);
    char path[128];
    snprintf(path, sizeof path, "%s/db.json", dir);
    rk_tuning *db = NULL;
    assert_int_equal(rk_tuning_load(path, &db), RK_OK);
    assert_int_equal(rk_tuning_count(db), 2);
    assert_string_equal(rk_tuning_device(db), "test device");
    const rk_target *t = rk_target_find("sm_90");
    rk_family_id f;
    assert_int_equal(rk_family_parse("softmax", &f), RK_OK);
    const double tuned[2][2] = {{64, 512}, {4096, 8192}};
    for (int trial = 0; trial < 20; trial++) {
        /* a random shape; the nearest entry's cached row may be too short for it */
        rk_shape s = {.rank = 2, .dim = {1 + sweep_rand(8192), 1 + sweep_rand(8192)}};
        double d[2];
        for (int e = 0; e < 2; e++) {
            double a = log((double)s.dim[0] / tuned[e][0]), b = log((double)s.dim[1] / tuned[e][1]);
            d[e] = sqrt(a * a + b * b);
            rk_shape es = {.rank = 2, .dim = {(uint64_t)tuned[e][0], (uint64_t)tuned[e][1]}};
            assert_true(fabs(rk_tuning_distance(&s, &es) - d[e]) < 1e-12);
        }
        int near = d[1] < d[0];
        rk_instance in;
        rk_instance_default(f, &in);
        assert_int_equal(rk_instance_set(&in, "dtype", "f16", NULL), RK_OK);
        char note[512];
        bool applied;
        assert_int_equal(rk_instance_tune(&in, t, &s, 0), RK_OK);
        assert_int_equal(rk_tuning_apply(db, "test device", &in, t, &s, 0, note, sizeof note, &applied), RK_OK);
        uint32_t cap = near ? 512 * 8 * 2 : 64 * 4 * 2;
        if (s.dim[1] > cap) {   /* a cached row shorter than N: not taken */
            assert_false(applied);
            assert_non_null(strstr(note, "do not fit"));
            continue;
        }
        assert_true(applied);
        assert_int_equal(knob_u(&in, "block_size"), near ? 512 : 64);
        assert_int_equal(knob_u(&in, "vec"), near ? 8 : 4);
        assert_non_null(strstr(note, near ? "4096,8192" : "64,512"));
    }
    /* a locked knob keeps its value; another device or dtype takes nothing */
    rk_shape s = {.rank = 2, .dim = {60, 500}};
    rk_instance in;
    rk_instance_default(f, &in);
    uint32_t ix;
    bool applied;
    char note[512];
    assert_int_equal(rk_instance_set(&in, "dtype", "f16", NULL), RK_OK);
    assert_int_equal(rk_instance_set(&in, "block_size", "128", &ix), RK_OK);
    assert_int_equal(rk_tuning_apply(db, NULL, &in, t, &s, 1ull << ix, note, sizeof note, &applied), RK_OK);
    assert_true(applied);
    assert_int_equal(knob_u(&in, "block_size"), 128);
    assert_int_equal(knob_u(&in, "vec"), 4);
    assert_int_equal(rk_tuning_apply(db, "NVIDIA H200", &in, t, &s, 0, note, sizeof note, &applied), RK_OK);
    assert_false(applied);
    assert_non_null(strstr(note, "is for device 'test device', not 'NVIDIA H200'"));
    assert_int_equal(rk_instance_set(&in, "dtype", "bf16", NULL), RK_OK);
    assert_int_equal(rk_tuning_apply(db, NULL, &in, t, &s, 0, note, sizeof note, &applied), RK_OK);
    assert_false(applied);
    assert_non_null(strstr(note, "no tuned softmax entry"));
    rk_tuning_free(db);
}

typedef struct bad_db { const char *text, *msg; } bad_db;
static void test_bad_files(void **state) {
    (void)state;
    static const bad_db cases[] = {
        {"{\"format\": \"x\", \"device\": \"d\", \"entries\": []}", "'format' must be \"rocke.tuning/v1\""},
        {"{\"format\": \"rocke.tuning/v1\", \"entries\": []}", "no 'device' string"},
        {"{\"format\": \"rocke.tuning/v1\", \"device\": \"d\"}", "no 'entries' array"},
        {"{\"format\": \"rocke.tuning/v1\", \"device\": \"d\", \"entries\": [{\"family\": \"softmx\"}]}",
         "entries[0]: unknown kernel family 'softmx'"},
        {"{\"format\": \"rocke.tuning/v1\", \"device\": \"d\", \"entries\": [{\"family\": \"softmax\", \"target\": "
         "\"sm_90\", \"shape\": {\"M\": 4}, \"knobs\": {}}]}", "dimension N missing"},
        {"{\"format\": \"rocke.tuning/v1\", \"device\": \"d\", \"entries\": [{\"family\": \"softmax\", \"target\": "
         "\"sm_90\", \"shape\": {\"M\": 4, \"N\": 8}, \"knobs\": {\"vec\": \"3\"}}]}", "knob 'vec' must be one of"},
        {"{\"format\": \"rocke.tuning/v1\", \"device\": \"d\", \"entries\": [{\"family\": \"softmax\", \"target\": "
         "\"gfx1\", \"shape\": {\"M\": 4, \"N\": 8}, \"knobs\": {}}]}", "not a known target"},
        {"{\"format\": ", "json: line 1"},
    };
    char path[128];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file("bad.json", cases[i].text);
        rk_tuning *db = (rk_tuning *)1;
        assert_int_not_equal(rk_tuning_load(path, &db), RK_OK);
        assert_null(db);
        if (!strstr(rk_error_message(), cases[i].msg)) fprintf(stderr, "case %zu: %s\n", i, rk_error_message());
        assert_non_null(strstr(rk_error_message(), cases[i].msg));
    }
}

/* The kernel `rocke build` names on stdout ("rocke build: NAME for sm_90 -> ..."). */
static void built_name(const char *out, char *name, size_t n) {
    const char *p = strstr(out, "rocke build: rk_");
    assert_non_null(p);
    p += strlen("rocke build: ");
    size_t len = strcspn(p, " ");
    snprintf(name, n, "%.*s", (int)len, p);
}

static void test_tune_changes_what_build_picks(void **state) {
    (void)state;
    uint64_t M = 2 + sweep_rand(5), N = 101 + 2 * sweep_rand(100);
    /* the heuristic's choice at this shape, which the swept space leaves out */
    rk_family_id f;
    rk_instance in;
    assert_int_equal(rk_family_parse("softmax", &f), RK_OK);
    rk_instance_default(f, &in);
    assert_int_equal(rk_instance_set(&in, "dtype", "f16", NULL), RK_OK);
    rk_shape s = {.rank = 2, .dim = {M, N}};
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &s, 0), RK_OK);
    char heuristic[256];
    rk_instance_name(&in, heuristic, sizeof heuristic);
    const char *vecs = knob_u(&in, "vec") >= 4 ? "1,2" : "4,8";
    rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " tune softmax --target sm_90 --dtype f16 --shapes '%llu,%llu' "
                             "--knob vec=%s --knob chunks=0 --swept-only --devices emu -q -o t.json",
                             (unsigned long long)M, (unsigned long long)N, vecs);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "1 of 1 shapes tuned -> t.json"));
    rk_test_run_free(&r);
    char path[128], name[256], text[8192];
    snprintf(path, sizeof path, "%s/t.json", dir);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    size_t len = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    text[len] = 0;
    rk_json *db = rk_json_parse(text, len);
    assert_non_null(db);
    assert_string_equal(sweep_str(db, "device"), "rocke CPU emulator (sm_90)");
    assert_true(*sweep_str(db, "driver") && *sweep_str(db, "date") && *sweep_str(db, "rocke_version"));
    const rk_json *e = rk_json_get(db, "entries")->items[0];
    char tuned[256];
    snprintf(tuned, sizeof tuned, "%s", sweep_str(e, "kernel"));
    rk_json_free(db);
    assert_string_not_equal(tuned, heuristic);
    /* without a database, with --tuning, with ROCKE_TUNING, with one tuned elsewhere */
    static const struct { const char *env, *flag, *want_note; bool tuned; } runs[] = {
        {"", "", NULL, false},
        {"", "--tuning t.json", "knobs of the nearest tuned shape", true},
        {"ROCKE_TUNING=t.json", "", "knobs of the nearest tuned shape", true},
        {"ROCKE_TUNING_DEVICE='NVIDIA H200'", "--tuning t.json", "not 'NVIDIA H200': its 1 entries ignored", false},
    };
    const char *build = SWEEP_ROCKE " build softmax --target sm_90 --dtype f16 --ir-only";
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        r = sweep_sh(dir, "%s %s --shape %llu,%llu %s -o b%zu", runs[i].env, build, (unsigned long long)M,
                     (unsigned long long)N, runs[i].flag, i);
        assert_int_equal(r.rc, 0);
        if (runs[i].want_note) assert_non_null(strstr(r.out, runs[i].want_note));
        built_name(r.out, name, sizeof name);
        assert_string_equal(name, runs[i].tuned ? tuned : heuristic);
        rk_test_run_free(&r);
    }
    /* by default the heuristic's own pick is a candidate: the tuned one is never slower */
    r = sweep_sh(dir, SWEEP_ROCKE " tune softmax --target sm_90 --dtype f16 --shapes '%llu,%llu' --knob vec=%s "
                 "--knob chunks=0 --devices emu -q --sweep-dir th -o th.json", (unsigned long long)M,
                 (unsigned long long)N, vecs);
    assert_int_equal(r.rc, 0);
    rk_test_run_free(&r);
    /* the heuristic's pick with the one-value knob (chunks=0) fixed */
    uint32_t ci;
    rk_instance_default(f, &in);
    assert_int_equal(rk_instance_set(&in, "dtype", "f16", NULL), RK_OK);
    assert_int_equal(rk_instance_set(&in, "chunks", "0", &ci), RK_OK);
    assert_int_equal(rk_instance_tune(&in, rk_target_find("sm_90"), &s, 1ull << ci), RK_OK);
    rk_instance_name(&in, heuristic, sizeof heuristic);
    uint32_t nrec;
    rk_json **rec = sweep_records(dir, "th", &nrec);
    double heur_ms = 0, best_ms = 1e30;
    for (uint32_t i = 0; i < nrec; i++) {
        double ms = sweep_num(rec[i], "ms");
        if (rk_json_get(rec[i], "heuristic")->b) {
            assert_string_equal(sweep_str(rec[i], "kernel"), heuristic);
            heur_ms = ms;
        }
        if (ms < best_ms) best_ms = ms;
    }
    sweep_records_free(rec);
    assert_int_equal(nrec, 3);
    assert_true(heur_ms > 0 && best_ms <= heur_ms);
    r = sweep_sh(dir, "%s --shape %llu,%llu --tuning missing.json -o b4", build, (unsigned long long)M,
                 (unsigned long long)N);
    assert_int_equal(r.rc, 2);   /* a tuning file that cannot be read is bad input */
    assert_non_null(strstr(r.err, "missing.json"));
    rk_test_run_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance_and_nearest),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_tune_changes_what_build_picks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
