/* rocke tests — `rocke sweep` on the emulator through the built binary:
 * the records of a small softmax space at random odd shapes against the
 * space computed here with the public API (which configs survive pruning,
 * their kernel names, the per-rule counts), the derived rates, the CSV; a
 * bad-input table; resume after the sweep is killed, with a torn line. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
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
    if (access(SWEEP_ROCKE, X_OK) || !sweep_tmpdir(dir, "sweep")) return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    sweep_rmdir(dir);
    return 0;
}

static const char *const blocks[] = {"32", "64"}, *const vecs[] = {"2", "4", "8"};

/* The expected items: each config x shape set, tuned, validated, shape-checked. */
typedef struct expect { char key[128], kernel[256]; bool found; } expect;
static uint32_t expected(const rk_shape *sh, uint32_t ns, expect *e, uint32_t *pruned_vec, uint32_t *pruned) {
    const rk_target *t = rk_target_find("sm_90");
    rk_family_id f;
    assert_int_equal(rk_family_parse("softmax", &f), RK_OK);
    uint32_t n = 0;
    *pruned_vec = *pruned = 0;
    for (uint32_t v = 0; v < 3; v++)
        for (uint32_t b = 0; b < 2; b++)
            for (uint32_t s = 0; s < ns; s++) {
                rk_instance in;
                uint32_t i1, i2, i3;
                rk_instance_default(f, &in);
                assert_int_equal(rk_instance_set(&in, "dtype", "f32", &i1), RK_OK);
                assert_int_equal(rk_instance_set(&in, "block_size", blocks[b], &i2), RK_OK);
                assert_int_equal(rk_instance_set(&in, "vec", vecs[v], &i3), RK_OK);
                uint64_t locked = 1ull << i1 | 1ull << i2 | 1ull << i3;
                if (rk_instance_tune(&in, t, &sh[s], locked) || rk_instance_validate(&in, t)) {
                    *pruned_vec += strstr(rk_error_message(), "knob 'vec'") != NULL;
                    ++*pruned;
                    continue;
                }
                if (rk_instance_check_shape(&in, &sh[s])) { ++*pruned; continue; }
                snprintf(e[n].key, sizeof e[n].key, "block_size=%s,vec=%s@%llu,%llu", blocks[b], vecs[v],
                         (unsigned long long)sh[s].dim[0], (unsigned long long)sh[s].dim[1]);
                rk_instance_name(&in, e[n].kernel, sizeof e[n].kernel);
                e[n++].found = false;
            }
    return n;
}

static void test_records_match_the_space(void **state) {
    (void)state;
    /* fresh odd shapes: one row count and row length each */
    rk_shape sh[2] = {{.rank = 2, .dim = {1 + sweep_rand(4), 33 + 2 * sweep_rand(60)}},
                      {.rank = 2, .dim = {1 + sweep_rand(3), 161 + 2 * sweep_rand(80)}}};
    expect e[12];
    uint32_t pv, pruned, n = expected(sh, 2, e, &pv, &pruned);
    assert_int_equal(pv, 4);   /* vec 8 x f32 is 32 bytes: every block size at both shapes */
    rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " sweep softmax --target sm_90 --dtype f32 --shapes '%llu,%llu;%llu,%llu' "
                             "--knob block_size=32,64 --knob vec=2,4,8 --devices emu -j 2 --seed %llu -o rec",
                             (unsigned long long)sh[0].dim[0], (unsigned long long)sh[0].dim[1],
                             (unsigned long long)sh[1].dim[0], (unsigned long long)sh[1].dim[1],
                             (unsigned long long)sweep_seed());
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "pruned    4 by knob vec"));
    rk_test_run_free(&r);
    uint32_t nr;
    rk_json **rec = sweep_records(dir, "rec", &nr);
    assert_int_equal(nr, n);
    bool ptxas = !access("/usr/local/cuda/bin/ptxas", X_OK);
    for (uint32_t i = 0; i < nr; i++) {
        const rk_json *x = rec[i];
        uint32_t j = 0;
        while (j < n && strcmp(e[j].key, sweep_str(x, "key"))) j++;
        assert_true(j < n);
        assert_false(e[j].found);   /* each item once */
        e[j].found = true;
        assert_string_equal(sweep_str(x, "kernel"), e[j].kernel);
        assert_string_equal(sweep_str(x, "status"), "ok");
        assert_true(rk_json_get(x, "verified")->b);
        double ms = sweep_num(x, "ms"), bytes = sweep_num(x, "bytes"), flops = sweep_num(x, "flops");
        assert_true(ms > 0 && bytes > 0 && flops > 0);
        assert_true(fabs(sweep_num(x, "gbps") - bytes / 1e6 / ms) <= 1e-9 * sweep_num(x, "gbps"));
        assert_true(fabs(sweep_num(x, "tflops") - flops / 1e9 / ms) <= 1e-9 * sweep_num(x, "tflops"));
        double copy = sweep_num(x, "copy_gbps");
        assert_true(copy > 0);
        assert_true(fabs(sweep_num(x, "of_copy") - sweep_num(x, "gbps") / copy) <= 1e-9 * sweep_num(x, "of_copy"));
        if (ptxas) assert_true(sweep_num(x, "registers") > 0 && sweep_num(x, "spills") >= 0);
    }
    sweep_records_free(rec);
    /* the manifest: configs, items, pruned per rule */
    char path[128];
    snprintf(path, sizeof path, "%s/rec/sweep.json", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[1 << 15];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    rk_json *m = rk_json_parse(text, len);
    assert_non_null(m);
    assert_int_equal((int)sweep_num(m, "configs"), 6);
    assert_int_equal((int)sweep_num(m, "items"), (int)n);
    const rk_json *p = rk_json_get(m, "pruned");
    assert_int_equal((int)sweep_num(p, "total"), (int)pruned);
    const rk_json *rules = rk_json_get(p, "rules");
    uint32_t sum = 0;
    for (uint32_t i = 0; i < rules->n; i++) sum += (uint32_t)sweep_num(rules->items[i], "count");
    assert_int_equal(sum, pruned);
    rk_json_free(m);
    /* CSV: a header and a row per record */
    snprintf(path, sizeof path, "%s/rec/results.csv", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    uint32_t lines = 0;
    while (fgets(text, sizeof text, f)) lines++;
    fclose(f);
    assert_int_equal(lines, n + 1);
}

/* --build-only leaves every code object and its build record (the device
 * check's too), no records; the same command then runs them without
 * compiling again. */
static void test_build_only_then_run(void **state) {
    (void)state;
    const char *sweep = SWEEP_ROCKE " sweep softmax --target sm_90 --dtype f16 --shapes '3,%u' --knob vec=2,4 "
                        "--knob chunks=0 --with-heuristic --devices emu";
    char cmd[512];
    snprintf(cmd, sizeof cmd, sweep, 101 + 2 * sweep_rand(50));
    rk_test_run r = sweep_sh(dir, "%s --build-only -o bo", cmd);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "3 kernels in bo/kernels (0 failed)"));
    rk_test_run_free(&r);
    /* and the device check's kernel for the f16 outputs */
    r = sweep_sh(dir, "ls bo/kernels | grep -c '\\.build\\.json$'; ls bo/kernels | grep -c '\\.cubin$'; "
                 "ls bo/kernels | grep -c '^rk_sweep_compare_f16\\.'; test -e bo/results.jsonl && echo records");
    assert_string_equal(r.out, "4\n4\n2\n");
    rk_test_run_free(&r);
    /* with no usable compiler (and no cache) a fresh sweep fails to build; this one runs */
    r = sweep_sh(dir, "ROCKE_LLVM_LIB=/nonexistent ROCKE_CACHE=0 %s -o nobo", cmd);
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.out, "3 records (3 not ok)"));
    rk_test_run_free(&r);
    r = sweep_sh(dir, "ROCKE_LLVM_LIB=/nonexistent ROCKE_CACHE=0 %s -o bo", cmd);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "3 records (0 not ok)"));
    rk_test_run_free(&r);
    uint32_t n, heur = 0;
    rk_json **rec = sweep_records(dir, "bo", &n);
    for (uint32_t i = 0; i < n; i++) heur += !strncmp(sweep_str(rec[i], "key"), "heuristic@", 10);
    sweep_records_free(rec);
    assert_int_equal(n, 3);
    assert_int_equal(heur, 1);
}

typedef struct bad_case { const char *args; int rc; const char *msg; } bad_case;
static void test_bad_input(void **state) {
    (void)state;
    static const bad_case cases[] = {
        {"--shapes 4,100 --knob blok=1", 2, "unknown knob 'blok' for softmax (legal: dtype, out_dtype, wave, block_size"},
        {"--shapes 4,100 --knob vec=3", 2, "knob 'vec' must be one of 1|2|4|8 (got '3')"},
        {"--shapes 4,100 --knob vec=2 --knob vec=4", 2, "--knob vec given twice"},
        {"--shapes 4,100 --knob vec=2,2", 2, "value '2' given twice"},
        {"--shapes 4,100 --knob wave=64 --knob vec=2,4", 1, "knob wave                2 (e.g. knob 'wave' must be 32"},
        {"--shapes 4,100 --devices emu:0", 2, "legal: auto, all, emu, emu:N"},
        {"--shapes 4,100 --devices all", 2, "--devices all: no GPU found"},
        {"--shapes 4,100 --devices 0,1", 2, "--devices: GPU 0: no GPU found"},
        {"--shapes 4,100 --devices 0,x", 2, "--devices '0,x' (legal:"},
        {"--shapes 4,100 --shard 2/2", 2, "--shard '2/2' must be I/N"},
        {"--knob vec=2", 2, "give the shapes once"},
        {"--shapes '4,100;4,0'", 2, "must be at least 1"},
        {"--shapes 4,100 --shapes-file none.txt", 2, "give the shapes once"},
        {"--shapes-file none.txt", 2, "--shapes-file"},
        {"--shapes 4,100 --wait", 2, "go with --slurm"},
        {"--shapes 4,100 --knob fuse", 2, "unknown knob 'fuse'"},
        {"--shapes 4,100 --stable 2", 2, "--stable '2' is out of range (legal: 0..1)"},
        {"--shapes 4,100 --min-iters 0", 2, "--min-iters"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rk_test_run r = sweep_sh(dir, SWEEP_ROCKE " sweep softmax --target sm_90 %s -o bad", cases[i].args);
        if (r.rc != cases[i].rc || !strstr(r.err, cases[i].msg))
            fprintf(stderr, "case '%s': rc %d, stderr: %s\n", cases[i].args, r.rc, r.err);
        assert_int_equal(r.rc, cases[i].rc);
        assert_non_null(strstr(r.err, cases[i].msg));
        rk_test_run_free(&r);
    }
}

static uint32_t count_lines(const char *path) {
    FILE *f = fopen(path, "r");
    uint32_t n = 0;
    for (int c; f && (c = fgetc(f)) != EOF;) n += c == '\n';
    if (f) fclose(f);
    return n;
}

/* Kill the sweep after a few records, tear its last line, run it again. */
static void test_resume_after_kill(void **state) {
    (void)state;
    const char *sweep = SWEEP_ROCKE " sweep softmax --target sm_90 --dtype f32 --shapes 24,3001 --knob chunks=0 "
                        "--knob block_size=64,128,256 --knob unroll=1,2,4,8 --devices emu -j 2 -o res";
    rk_test_run r = sweep_sh(dir, "(exec %s -q) >/dev/null 2>&1 & echo $!", sweep);
    assert_int_equal(r.rc, 0);
    pid_t pid = (pid_t)atoi(r.out);
    rk_test_run_free(&r);
    char path[128];
    snprintf(path, sizeof path, "%s/res/results.jsonl", dir);
    for (int i = 0; i < 6000 && count_lines(path) < 3; i++) usleep(2000);
    assert_int_equal(kill(pid, SIGKILL), 0);
    usleep(100000);
    uint32_t before = count_lines(path);
    assert_true(before >= 3 && before < 12);
    /* a line torn by the kill, as a write cut short would leave it */
    FILE *f = fopen(path, "a");
    fputs("{\"key\": \"block_size=64,unroll=1@24,3", f);
    fclose(f);
    r = sweep_sh(dir, "%s", sweep);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    char warn[64];
    snprintf(warn, sizeof warn, "results.jsonl:%u: not a sweep record", before + 1);
    assert_non_null(strstr(r.err, warn));
    assert_non_null(strstr(r.out, "records already in"));
    rk_test_run_free(&r);
    uint32_t n;
    rk_json **rec = sweep_records(dir, "res", &n);
    assert_int_equal(n, 12);
    for (uint32_t i = 0; i < n; i++) {
        assert_string_equal(sweep_str(rec[i], "status"), "ok");
        for (uint32_t j = 0; j < i; j++) assert_string_not_equal(sweep_str(rec[i], "key"), sweep_str(rec[j], "key"));
    }
    sweep_records_free(rec);
    assert_int_equal(count_lines(path), 12);   /* the torn line is gone */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_match_the_space),
        cmocka_unit_test(test_build_only_then_run),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_resume_after_kill),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
