/* rocke tests — shell commands in a scratch folder for the end-to-end CLI
 * tests: stdout and stderr captured, the emulator as the device. Layer: tests. */
#ifndef ROCKE_TESTS_CLI_SHELL_H
#define ROCKE_TESTS_CLI_SHELL_H

#include <stddef.h>

/* The last command's stdout and stderr, NUL-terminated. */
extern char cli_out[1 << 16];

/* Make the scratch folder (/tmp/rk_cli_XXXXXX); -1 when that fails or the
 * `rocke` binary at path is not executable (named on stderr). */
int cli_scratch_make(const char *rocke);
/* Remove it; the exit code of rm. */
int cli_scratch_remove(void);
/* Run the printf-formatted command in the scratch folder with
 * ROCKE_QUIET=1 ROCKE_DEVICE=emu; its exit code (-1: killed). */
int cli_sh(const char *fmt, ...);

#endif
