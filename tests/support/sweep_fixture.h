/* rocke tests — what the sweep tests share: a temporary folder, the built
 * `rocke` run in it (emulator, quiet), and a sweep's records read back. */
#ifndef ROCKE_TEST_SWEEP_FIXTURE_H
#define ROCKE_TEST_SWEEP_FIXTURE_H

#include <stdint.h>

#include "rocke/manifest.h"
#include "support/cli_run.h"

#define SWEEP_ROCKE ROCKE_BINARY_DIR "/rocke"

/* mkdtemp under /tmp into dir (64 bytes); false when it fails. */
bool sweep_tmpdir(char dir[64], const char *tag);
void sweep_rmdir(const char *dir);
/* Run a printf-formatted shell command in dir with ROCKE_QUIET=1 and the
 * emulator as the device. */
rk_test_run sweep_sh(const char *dir, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The records of DIR/results.jsonl, one JSON object each (NULL-terminated
 * array; free with sweep_records_free). *n: how many. */
rk_json **sweep_records(const char *dir, const char *sub, uint32_t *n);
void sweep_records_free(rk_json **r);
/* A member's text or number ("" / NaN when absent). */
const char *sweep_str(const rk_json *j, const char *key);
double sweep_num(const rk_json *j, const char *key);
/* Seeded by the clock, printed once, so a failure can be replayed (ROCKE_TEST_SEED). */
uint64_t sweep_seed(void);
uint32_t sweep_rand(uint32_t below);

#endif
