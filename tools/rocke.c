/* rocke — the command-line tool: a table of sub-commands (commands.def),
 * each in tools/cmd_<name>.c. Layer: tools. */
#include <stdio.h>
#include <string.h>

#include "rocke/rocke.h"
#include "cli.h"

static const struct { const char *name; int (*fn)(int, char **); const char *help; } commands[] = {
#define CMD(name, help) {#name, cmd_##name, help},
#include "commands.def"
};

/* Command names are C identifiers; on the command line '_' is spelled '-'
 * (gpu-check runs cmd_gpu_check); both spellings are accepted. */
static bool same_name(const char *arg, const char *name) {
    for (; *arg && *name; arg++, name++)
        if (*arg != *name && !(*arg == '-' && *name == '_')) return false;
    return *arg == *name;
}

static void usage(FILE *f) {
    fprintf(f, "rocke %s — author GPU kernels as typed SSA IR, compile and run them\n\n"
               "usage: rocke <command> [options]   (rocke <command> --help for details)\n\ncommands:\n",
            RK_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s", commands[i].name);
        for (char *c = name; *c; c++)
            if (*c == '_') *c = '-';
        fprintf(f, "  %-10s %s\n", name, commands[i].help);
    }
}

static int dispatch(int argc, char **argv, const char **cmd) {
    if (argc < 2) { usage(stderr); return 2; }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) { printf("rocke %s\n", RK_VERSION_STRING); return 0; }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (same_name(argv[1], commands[i].name)) {
            *cmd = argv[1];
            return commands[i].fn(argc - 1, argv + 1);
        }
    fprintf(stderr, "rocke: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}

/* The library prints nothing itself: its warnings, notes, debug lines and
 * dumps arrive here and go to stderr as before. */
static void log_to_stderr(void *ud, rk_log_level level, const char *msg) {
    (void)ud;
    switch (level) {
    case RK_LOG_DUMP: fputs(msg, stderr); return;
    case RK_LOG_NOTE: fprintf(stderr, "rocke: %s\n", msg); return;
    case RK_LOG_DEBUG: case RK_LOG_WARNING: case RK_LOG_BUG: break;
    }
    fprintf(stderr, "rocke: %s: %s\n", rk_log_level_name(level), msg);
}

int main(int argc, char **argv) {
    rk_set_log_callback(log_to_stderr, NULL);
    const char *cmd = NULL;
    int rc = dispatch(argc, argv, &cmd);
    return cli_close_streams(cmd, rc);
}
