/* rocke tests — shell commands in a scratch folder (see cli_shell.h).
 * Layer: tests. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_shell.h"

char cli_out[1 << 16];
static char scratch[64];

int cli_scratch_make(const char *rocke) {
    snprintf(scratch, sizeof scratch, "/tmp/rk_cli_XXXXXX");
    if (!mkdtemp(scratch)) return -1;
    if (access(rocke, X_OK)) {
        fprintf(stderr, "cli tests: %s is not built\n", rocke);
        return -1;
    }
    return 0;
}

int cli_scratch_remove(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", scratch);
    return system(cmd);
}

int cli_sh(const char *fmt, ...) {
    char cmd[2048], full[2400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd %s && ROCKE_QUIET=1 ROCKE_DEVICE=emu %s 2>&1", scratch, cmd);
    FILE *p = popen(full, "r");
    if (!p) {
        snprintf(cli_out, sizeof cli_out, "popen failed: %s", full);
        return -1;
    }
    size_t n = fread(cli_out, 1, sizeof cli_out - 1, p);
    cli_out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
