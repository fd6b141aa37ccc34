/* rocke tune — a sweep that keeps the best verified config per shape and
 * writes it as a tuning database (tuning.json) for `rocke build --tuning`
 * and the library's heuristic ($ROCKE_TUNING). docs/sweep.md. Layer: tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep_int.h"

static const char about[] =
    "Sweep FAMILY's knobs over the shapes (as `rocke sweep` does, into --sweep-dir) and write the\n"
    "best verified config of each shape to FILE, a tuning database: `rocke build --tuning FILE`\n"
    "(or ROCKE_TUNING=FILE) then takes the knobs of the nearest tuned shape. The file records the\n"
    "device, driver, rocke version and date. Exit 0 ok, 1 when no shape has a verified config or\n"
    "on errors, 2 on misuse.";

static rk_json *entry_of(const rk_json *best) {
    rk_json *e = rk_json_object();
    static const char *const copy[] = {"family", "target", "shape", "knobs", "kernel"};
    for (uint32_t i = 0; i < RK_COUNTOF(copy); i++) {
        char *t = rk_json_write(rk_json_get(best, copy[i]), false);
        rk_json *v = t ? rk_json_parse(t, strlen(t)) : NULL;
        rk_string_free(t);
        rk_json_set(e, copy[i], v ? v : rk_json_null());
    }
    rk_json_set(e, "ms", rk_json_num(sw_num(best, "ms", 0)));
    rk_json_set(e, "gbps", rk_json_num(sw_num(best, "gbps", 0)));
    return e;
}

int cmd_tune(int argc, char **argv) {
    sw_opts o = {0};
    const char *dir = NULL;
    bool swept_only = false;
    cli_opt extra[] = {
        {.name = "--sweep-dir", .kind = CLI_PATH, .dst = &dir, .meta = "DIR",
         .help = "where the sweep keeps its records (default FILE.sweep; resumes there)"},
        {.name = "--swept-only", .kind = CLI_FLAG, .dst = &swept_only,
         .help = "choose among the swept configs alone (default: the heuristic's own\n"
                 "pick at each shape is a candidate too, so tuned is never the slower)"},
        {0},
    };
    cli_opt opts[40];
    int prc = sw_parse("tune", about, argc, argv, &o, opts, RK_COUNTOF(opts),
                       "the tuning database to write (tuning.json)", extra);
    if (prc >= 0) return prc;
    if (o.slurm || o.shard_text) {
        fprintf(stderr, "rocke tune: --slurm and --shard are for rocke sweep; tune a merged sweep with "
                "rocke sweep + rocke tune --sweep-dir on the same folder\n");
        return 2;
    }
    if (!swept_only) o.heuristic = true;
    const char *file = o.out;
    char sweep_dir[4096];
    snprintf(sweep_dir, sizeof sweep_dir, "%s", dir ? dir : file);
    if (!dir) strncat(sweep_dir, ".sweep", sizeof sweep_dir - strlen(sweep_dir) - 1);
    o.out = sweep_dir;
    int rc = sw_sweep(&o);
    if (rc == 2 || o.build_only) return rc;   /* built only: the same command measures and writes FILE */
    char path[4200];
    snprintf(path, sizeof path, "%s/results.jsonl", sweep_dir);
    sw_records r = {0};
    if (!sw_records_load("tune", path, &r)) return 1;
    const rk_json **best = calloc(r.n + 1, sizeof *best);
    char (*shapes)[128] = calloc(r.n + 1, sizeof *shapes);
    uint32_t ns = best && shapes ? sw_best_per_shape(&r, best, shapes, r.n) : 0, kept = 0;
    rk_json *db = rk_json_object(), *ents = rk_json_array();
    const rk_json *first = NULL;
    for (uint32_t i = 0; i < ns; i++) {
        if (!best[i]) {
            printf("rocke tune: shape %s: no verified config, not tuned\n", shapes[i]);
            continue;
        }
        if (!first) first = best[i];
        if (strcmp(sw_str(best[i], "device"), sw_str(first, "device"))) {
            printf("rocke tune: shape %s: best on '%s', not '%s': left out\n", shapes[i], sw_str(best[i], "device"),
                   sw_str(first, "device"));
            continue;
        }
        printf("rocke tune: shape %-16s %-60s %.4g ms\n", shapes[i], sw_str(best[i], "kernel"),
               sw_num(best[i], "ms", 0));
        rk_json_push(ents, entry_of(best[i]));
        kept++;
    }
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    rk_json_set(db, "format", rk_json_str(RK_TUNING_FORMAT));
    rk_json_set(db, "device", rk_json_str(first ? sw_str(first, "device") : ""));
    rk_json_set(db, "driver", rk_json_str(first ? sw_str(first, "driver") : ""));
    rk_json_set(db, "rocke_version", rk_json_str(RK_VERSION_STRING));
    rk_json_set(db, "date", rk_json_str(date));
    rk_json_set(db, "sweep", rk_json_str(sweep_dir));
    rk_json_set(db, "entries", ents);
    char *text = rk_json_write(db, true);
    rc = 1;
    if (!kept) fprintf(stderr, "rocke tune: no shape has a verified config: %s not written\n", file);
    else if (!text || rk_write_file_atomic(file, text, strlen(text)))
        fprintf(stderr, "rocke tune: %s\n", rk_error_message());
    else {
        printf("rocke tune: %u of %u shapes tuned -> %s\n", kept, ns, file);
        rc = 0;
    }
    rk_string_free(text);
    rk_json_free(db);
    free(best);
    free(shapes);
    sw_records_free(&r);
    return rc;
}
