/* rocke CLI — helpers shared by the sub-commands. Layer: tools. */
#ifndef ROCKE_CLI_H
#define ROCKE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "rocke/kernels.h"

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

/* cli_shape.c: --shape TEXT for family f, "4096,4096" or "M=4096,N=4096"
 * (named: only those dimensions change), applied to *s (which holds the
 * default or the manifest's shape). Prints the error; false on failure. */
bool cli_shape_parse(const char *cmd, rk_family_id f, const char *text, rk_shape *s);
/* --arg NAME=NUMBER: a given scalar (eps). */
typedef struct cli_arg { char name[32]; double value; } cli_arg;
bool cli_arg_parse(const char *cmd, const char *text, cli_arg *out);

#endif
