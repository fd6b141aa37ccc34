/* rocke CLI — helpers shared by the sub-commands. Layer: tools. */
#ifndef ROCKE_CLI_H
#define ROCKE_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Every sub-command's entry point. */
#define CMD(name, help) int cmd_##name(int argc, char **argv);
#include "commands.def"

/* True when argv[i] is -h or --help. */
bool cli_is_help(const char *arg);
/* Report a failed library call: "rocke <cmd>: <rk_error_message()>". Returns 1. */
int cli_fail(const char *cmd);
/* Parse a non-negative integer option value; prints an error and returns
 * false when malformed. */
bool cli_parse_u64(const char *cmd, const char *flag, const char *s, unsigned long long *out);

#endif
