/* rocke CLI — what the family commands (build, aot) share: a family's knobs
 * as options, the "family first" message, output folders and a clock.
 * Layer: tools. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

void cli_add_knobs(rk_family_id fam, cli_knobs *ko, cli_opt *opts) {
    uint32_t n;
    const rk_knob *kb = rk_family_knobs(fam, &n);
    ko->n = n < CLI_MAX_KNOBS ? n : CLI_MAX_KNOBS;
    for (uint32_t i = 0; i < ko->n; i++) {
        char legal[1024];   /* gemm's atom list is over 600 characters */
        rk_knob_legal_text(&kb[i], legal, sizeof legal);
        snprintf(ko->name[i], sizeof ko->name[i], "--%s", kb[i].name);
        for (char *c = ko->name[i] + 2; *c; c++)
            if (*c == '_') *c = '-';
        for (char *c = legal; *c; c++)
            if (*c == '|') *c = ',';
        char fp8[200] = "";
        if (rk_knob_has_fp8(&kb[i])) {   /* which target takes which 8-bit encoding, from the catalog */
            char note[128];
            rk_knob_fp8_note(note, sizeof note);
            snprintf(fp8, sizeof fp8, "\n(8-bit float encodings by target: %s)", note);
        }
        snprintf(ko->help[i], sizeof ko->help[i], "%s%s\n(legal: %s)%s", kb[i].help,
                 kb[i].perf ? " (heuristic)" : "", legal, fp8);
        /* a boolean knob alone (--lse) means true */
        opts[i] = (cli_opt){.name = ko->name[i], .kind = CLI_STRING, .dst = &ko->value[i], .meta = "VALUE",
                            .help = ko->help[i], .bare = kb[i].kind == RK_KNOB_BOOL ? "true" : NULL};
    }
    opts[ko->n] = (cli_opt){0};
}

int cli_apply_knobs(const char *cmd, const cli_knobs *ko, rk_instance *in, uint64_t *locked) {
    *locked = 0;
    for (uint32_t i = 0; i < ko->n; i++) {
        if (!ko->value[i]) continue;
        uint32_t ix = UINT32_MAX;
        if (rk_instance_set(in, ko->name[i] + 2, ko->value[i], &ix)) {
            /* a run-time knob (conv geometry) also takes rocke run's forms: 2 or 2,2 */
            bool runtime = ix != UINT32_MAX && !rk_family_knobs(in->family, NULL)[ix].tag;
            if (!runtime) {
                fprintf(stderr, "rocke %s: %s\n", cmd, rk_error_message());
                return 2;
            }
            if (!cli_geometry_set(cmd, in, ko->name[i] + 2, ko->value[i])) return 2;
        }
        *locked |= 1ull << ix;
    }
    return 0;
}

void cli_note_retyped(const char *cmd, const cli_knobs *ko, const rk_instance *in, const rk_target *t) {
    const rk_knob *kb = rk_family_knobs(in->family, NULL);
    for (uint32_t i = 0; i < ko->n; i++) {
        if (!ko->value[i] || kb[i].kind != RK_KNOB_DTYPE) continue;
        rk_instance given;
        char was[32], now[32];
        rk_instance_default(in->family, &given);
        if (rk_instance_set(&given, kb[i].name, ko->value[i], NULL) || rk_instance_get(&given, kb[i].name, was, sizeof was) ||
            rk_instance_get(in, kb[i].name, now, sizeof now) || !strcmp(was, now))
            continue;
        fprintf(stderr, "rocke %s: note: %s %s is %s on %s (the 8-bit float encoding its matrix unit multiplies)\n",
                cmd, kb[i].name, was, now, t->name);
    }
}

int cli_family_missing(const cli_cmd *c) {
    char names[256] = "";
    size_t off = 0;
    for (uint32_t f = 0; f < rk_family_count() && off < sizeof names; f++)
        off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", f ? ", " : "",
                                rk_family_name((rk_family_id)f));
    return cli_misuse(c, "expected a kernel family first (legal: %s)", names);
}

double cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
