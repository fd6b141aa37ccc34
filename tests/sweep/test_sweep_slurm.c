/* rocke tests — `rocke sweep --slurm` end to end on a real single-node
 * Slurm (slurmctld + slurmd + munge configured in a temporary folder by
 * slurm_single_node.sh): the job array's shards run on the emulator, --wait
 * merges them, and the merged records equal those of the same sweep run
 * locally. Skipped, saying why, where Slurm is missing or does not start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/sweep_fixture.h"

#define CLUSTER ROCKE_SOURCE_DIR "/tests/sweep/slurm_single_node.sh"

static char dir[64], conf[256];
static bool up;

static int setup(void **state) {
    (void)state;
    if (access(SWEEP_ROCKE, X_OK) || !sweep_tmpdir(dir, "slurm")) return -1;
    rk_test_run r = sweep_sh(dir, "mkdir -p cluster && " CLUSTER " start %s/cluster", dir);
    if (r.rc == 0 && sscanf(r.out, "SLURM_CONF=%255s", conf) == 1) up = true;
    else fprintf(stderr, "test_sweep_slurm: no Slurm cluster (exit %d): %s", r.rc, r.err);
    rk_test_run_free(&r);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    if (up) {
        rk_test_run r = sweep_sh(dir, CLUSTER " stop %s/cluster", dir);
        rk_test_run_free(&r);
    }
    sweep_rmdir(dir);
    return 0;
}

static const char *const space = "softmax --target sm_90 --dtype f16 --knob block_size=32,64 --knob vec=2,4 "
                                 "--devices emu -j 1 -q";

static void test_job_array_end_to_end(void **state) {
    (void)state;
    if (!up) {
        fprintf(stderr, "test_sweep_slurm: Slurm could not be started here (apt-get install slurm-wlm munge): "
                "skipped\n");
        skip();
    }
    uint32_t n1 = 65 + 2 * sweep_rand(40), n2 = 151 + 2 * sweep_rand(40);
    rk_test_run r = sweep_sh(dir, "SLURM_CONF=%s " SWEEP_ROCKE " sweep %s --shapes '3,%u;2,%u' --slurm --shards 3 "
                             "--gpus-per-task 0 --wait -o sl", conf, space, n1, n2);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "finished"));
    assert_non_null(strstr(r.out, "from 3 shards"));
    rk_test_run_free(&r);
    size_t len = 0;
    char path[128], text[4096];
    snprintf(path, sizeof path, "%s/sl/sweep.sbatch", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    assert_non_null(strstr(text, "#SBATCH --array=0-2"));
    assert_non_null(strstr(text, "--shard \"$SLURM_ARRAY_TASK_ID/3\""));
    assert_null(strstr(text, "--slurm"));
    /* the same sweep, here */
    r = sweep_sh(dir, SWEEP_ROCKE " sweep %s --shapes '3,%u;2,%u' -o local", space, n1, n2);
    assert_int_equal(r.rc, 0);
    rk_test_run_free(&r);
    uint32_t ns, nl;
    rk_json **slurm = sweep_records(dir, "sl", &ns), **local = sweep_records(dir, "local", &nl);
    assert_int_equal(ns, nl);
    assert_true(ns >= 4);
    for (uint32_t i = 0; i < ns; i++) {
        assert_string_equal(sweep_str(slurm[i], "status"), "ok");
        uint32_t j = 0;
        while (j < nl && strcmp(sweep_str(local[j], "key"), sweep_str(slurm[i], "key"))) j++;
        assert_true(j < nl);
        assert_string_equal(sweep_str(local[j], "kernel"), sweep_str(slurm[i], "kernel"));
        for (uint32_t k = 0; k < i; k++) assert_string_not_equal(sweep_str(slurm[i], "key"), sweep_str(slurm[k], "key"));
    }
    sweep_records_free(slurm);
    sweep_records_free(local);
    /* the merged manifest counts every shard's items */
    snprintf(path, sizeof path, "%s/sl/sweep.json", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    static char man[1 << 16];
    len = fread(man, 1, sizeof man - 1, f);
    fclose(f);
    rk_json *m = rk_json_parse(man, len);
    assert_non_null(m);
    assert_int_equal((int)sweep_num(m, "items"), (int)ns);
    assert_int_equal((int)sweep_num(m, "shards"), 3);
    assert_int_equal((int)sweep_num(rk_json_get(m, "results"), "ok"), (int)ns);
    rk_json_free(m);
    /* merging again gives the same records */
    r = sweep_sh(dir, SWEEP_ROCKE " sweep merge sl");
    assert_int_equal(r.rc, 0);
    char want[64];
    snprintf(want, sizeof want, "%u records from 3 shards", ns);
    assert_non_null(strstr(r.out, want));
    rk_test_run_free(&r);
}

static void test_merge_without_shards(void **state) {
    (void)state;
    rk_test_run r = sweep_sh(dir, "mkdir -p empty && " SWEEP_ROCKE " sweep merge empty");
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, "empty/shards"));
    rk_test_run_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_array_end_to_end),
        cmocka_unit_test(test_merge_without_shards),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
