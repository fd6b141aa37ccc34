/* rocke tests — the sweep tests' temporary folders, commands and records. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/sweep_fixture.h"

bool sweep_tmpdir(char dir[64], const char *tag) {
    snprintf(dir, 64, "/tmp/rk_%s_XXXXXX", tag);
    return mkdtemp(dir) != NULL;
}

void sweep_rmdir(const char *dir) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
}

rk_test_run sweep_sh(const char *dir, const char *fmt, ...) {
    char cmd[4096], full[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "export ROCKE_QUIET=1 ROCKE_DEVICE=emu; %s", cmd);
    return rk_test_sh(dir, full);
}

rk_json **sweep_records(const char *dir, const char *sub, uint32_t *n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s/results.jsonl", dir, sub);
    *n = 0;
    FILE *f = fopen(path, "r");
    uint32_t cap = 16;
    rk_json **r = calloc(cap + 1, sizeof *r);
    char line[1 << 16];
    while (f && r && fgets(line, sizeof line, f)) {
        rk_json *j = rk_json_parse(line, strlen(line));
        if (!j) continue;
        if (*n == cap) {
            cap *= 2;
            r = realloc(r, (cap + 1) * sizeof *r);
        }
        r[(*n)++] = j;
        r[*n] = NULL;
    }
    if (f) fclose(f);
    return r;
}

void sweep_records_free(rk_json **r) {
    for (uint32_t i = 0; r && r[i]; i++) rk_json_free(r[i]);
    free(r);
}

const char *sweep_str(const rk_json *j, const char *key) {
    const rk_json *v = rk_json_get(j, key);
    return v && v->kind == RK_JSON_STRING ? v->str : "";
}

double sweep_num(const rk_json *j, const char *key) {
    const rk_json *v = rk_json_get(j, key);
    return v && v->kind == RK_JSON_NUMBER ? v->num : NAN;
}

static uint64_t state;
uint64_t sweep_seed(void) {
    if (state) return state;
    const char *s = getenv("ROCKE_TEST_SEED");
    state = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    if (!state) state = 1;
    fprintf(stderr, "sweep tests: seed %llu (ROCKE_TEST_SEED replays it)\n", (unsigned long long)state);
    return state;
}

uint32_t sweep_rand(uint32_t below) {
    sweep_seed();
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t)(state % below);
}
