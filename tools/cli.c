/* rocke CLI — shared helpers. Layer: tools. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/rocke.h"
#include "cli.h"

bool cli_is_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

int cli_fail(const char *cmd) {
    fprintf(stderr, "rocke %s: %s\n", cmd, rk_error_message());
    return 1;
}

bool cli_parse_u64(const char *cmd, const char *flag, const char *s, unsigned long long *out) {
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-') goto bad;
    *out = strtoull(s, &end, 0);
    if (errno || *end) goto bad;
    return true;
bad:
    fprintf(stderr, "rocke %s: %s expects a non-negative integer, got '%s'\n", cmd, flag, s ? s : "");
    return false;
}
