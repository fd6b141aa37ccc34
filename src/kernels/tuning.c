/* rocke — the tuning database: tuning.json (written by `rocke tune`) read
 * into entries of measured best knobs per family, target and shape; the
 * instance heuristic takes the entry of the nearest tuned shape (log-space
 * distance). Layer: kernels (uses manifest's JSON reader). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/kernels.h"
#include "rocke/manifest.h"
#include "base/base_int.h"
#include "kern_int.h"

typedef struct tn_entry {
    rk_family_id family;
    char target[32];
    rk_shape shape;
    uint32_t nknobs;
    char **names, **values;   /* the measured kernel's every knob, as text */
} tn_entry;

struct rk_tuning {
    char device[128], driver[128], version[32], date[40];
    uint32_t n;
    tn_entry *e;
};

static char *dup_or_null(const char *s) { return s ? rk_strdup(s) : NULL; }

void rk_tuning_free(rk_tuning *db) {
    if (!db) return;
    for (uint32_t i = 0; i < db->n; i++) {
        for (uint32_t k = 0; k < db->e[i].nknobs; k++) {
            rk_free(db->e[i].names[k], 0);
            rk_free(db->e[i].values[k], 0);
        }
        rk_free(db->e[i].names, 0);
        rk_free(db->e[i].values, 0);
    }
    rk_free(db->e, 0);
    rk_free(db, sizeof *db);
}

static const char *str_member(const rk_json *j, const char *key) {
    const rk_json *v = rk_json_get(j, key);
    return v && v->kind == RK_JSON_STRING ? v->str : NULL;
}

static rk_status bad(const char *path, uint32_t i, const char *what) {
    return rk_fail(RK_ERR_INVALID, "%s: entries[%u]: %s", path, i, what);
}

static rk_status read_entry(const char *path, uint32_t i, const rk_json *j, tn_entry *e) {
    const char *fam = str_member(j, "family"), *tgt = str_member(j, "target");
    if (!fam) return bad(path, i, "no 'family' string");
    if (rk_family_parse(fam, &e->family)) return bad(path, i, rk_error_message());
    if (!tgt || !rk_target_find(tgt)) return bad(path, i, "'target' missing or not a known target");
    snprintf(e->target, sizeof e->target, "%s", tgt);
    const rk_json *sh = rk_json_get(j, "shape");
    uint32_t nd;
    const rk_dim_decl *dims = rk_family_dims(e->family, &nd);
    if (!sh || sh->kind != RK_JSON_OBJECT) return bad(path, i, "no 'shape' object (dimension: extent)");
    e->shape.rank = nd;
    for (uint32_t d = 0; d < nd; d++) {
        const rk_json *v = rk_json_get(sh, dims[d].name);
        if (!v || !v->is_int || v->i < 1) {
            char msg[160];
            snprintf(msg, sizeof msg, "shape: dimension %s missing or not a positive integer", dims[d].name);
            return bad(path, i, msg);
        }
        e->shape.dim[d] = (uint64_t)v->i;
    }
    const rk_json *kn = rk_json_get(j, "knobs");
    if (!kn || kn->kind != RK_JSON_OBJECT) return bad(path, i, "no 'knobs' object (knob: value text)");
    e->names = rk_calloc(kn->n + 1, sizeof *e->names);
    e->values = rk_calloc(kn->n + 1, sizeof *e->values);
    if (!e->names || !e->values) return rk_fail(RK_ERR_NOMEM, "out of memory reading %s", path);
    rk_instance probe;
    rk_instance_default(e->family, &probe);
    for (uint32_t k = 0; k < kn->n; k++) {
        if (kn->items[k]->kind != RK_JSON_STRING) return bad(path, i, "knobs: every value is a string");
        /* a knob or value this rocke does not know makes the entry useless: say so now */
        if (rk_instance_set(&probe, kn->keys[k], kn->items[k]->str, NULL)) return bad(path, i, rk_error_message());
        e->names[k] = dup_or_null(kn->keys[k]);
        e->values[k] = dup_or_null(kn->items[k]->str);
        e->nknobs = k + 1;
        if (!e->names[k] || !e->values[k]) return rk_fail(RK_ERR_NOMEM, "out of memory reading %s", path);
    }
    return RK_OK;
}

static void copy_str(char *dst, size_t n, const rk_json *j, const char *key) {
    const char *s = str_member(j, key);
    snprintf(dst, n, "%s", s ? s : "");
}

rk_status rk_tuning_load(const char *path, rk_tuning **out) {
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    if (rk_read_file(path, &text, &len)) return rk_fail(RK_ERR_IO, "tuning database: %s", rk_error_message());
    rk_json *j = rk_json_parse(text, len);
    rk_free(text, len + 1);
    if (!j) return rk_fail(RK_ERR_INVALID, "%s: %s", path, rk_error_message());
    rk_status st = RK_OK;
    const char *fmt = str_member(j, "format");
    const rk_json *ents = rk_json_get(j, "entries");
    rk_tuning *db = rk_calloc(1, sizeof *db);
    if (!db) st = rk_fail(RK_ERR_NOMEM, "out of memory reading %s", path);
    else if (!fmt || strcmp(fmt, RK_TUNING_FORMAT))
        st = rk_fail(RK_ERR_INVALID, "%s: 'format' must be \"%s\", got %s", path, RK_TUNING_FORMAT,
                     fmt ? fmt : "none");
    else if (!ents || ents->kind != RK_JSON_ARRAY)
        st = rk_fail(RK_ERR_INVALID, "%s: no 'entries' array", path);
    if (!st) {
        copy_str(db->device, sizeof db->device, j, "device");
        copy_str(db->driver, sizeof db->driver, j, "driver");
        copy_str(db->version, sizeof db->version, j, "rocke_version");
        copy_str(db->date, sizeof db->date, j, "date");
        if (!db->device[0]) st = rk_fail(RK_ERR_INVALID, "%s: no 'device' string (the device it was tuned on)", path);
    }
    if (!st && ents->n && !(db->e = rk_calloc(ents->n, sizeof *db->e)))
        st = rk_fail(RK_ERR_NOMEM, "out of memory reading %s", path);
    for (uint32_t i = 0; !st && i < ents->n; i++) {
        st = read_entry(path, i, ents->items[i], &db->e[i]);
        db->n = i + 1;
    }
    rk_json_free(j);
    if (st) { rk_tuning_free(db); return st; }
    *out = db;
    return RK_OK;
}

const char *rk_tuning_device(const rk_tuning *db) { return db ? db->device : ""; }
uint32_t rk_tuning_count(const rk_tuning *db) { return db ? db->n : 0; }

static const char *entry_knob(const tn_entry *e, const char *name) {
    for (uint32_t k = 0; k < e->nknobs; k++)
        if (!strcmp(e->names[k], name)) return e->values[k];
    return NULL;
}

/* Does entry e describe the same problem as `in` (every knob that is not a
 * performance knob: dtype, op, residual ...)? */
static bool same_problem(const tn_entry *e, const rk_instance *in) {
    uint32_t n;
    const rk_knob *kb = rk_family_knobs(in->family, &n);
    for (uint32_t k = 0; k < n; k++) {
        if (kb[k].perf) continue;
        char v[256];
        const char *ev = entry_knob(e, kb[k].name);
        if (rk_instance_get(in, kb[k].name, v, sizeof v) || !ev || strcmp(v, ev)) return false;
    }
    return true;
}

double rk_tuning_distance(const rk_shape *a, const rk_shape *b) {
    if (a->rank != b->rank) return INFINITY;
    double d = 0;
    for (uint32_t i = 0; i < a->rank; i++) {
        double x = log((double)a->dim[i]) - log((double)b->dim[i]);
        d += x * x;
    }
    return sqrt(d);
}

rk_status rk_tuning_apply(const rk_tuning *db, const char *device, rk_instance *in, const rk_target *t,
                          const rk_shape *s, uint64_t locked, char *note, size_t n, bool *applied) {
    if (applied) *applied = false;
    if (note && n) note[0] = 0;
    if (!db || !t || !s) return rk_fail(RK_ERR_INVALID, "rk_tuning_apply: no database, target or shape");
    if (device && *device && strcmp(device, db->device)) {
        if (note) snprintf(note, n, "tuning database is for device '%s', not '%s': its %u entries ignored", db->device,
                           device, db->n);
        return RK_OK;
    }
    const tn_entry *best = NULL;
    double bd = INFINITY;
    for (uint32_t i = 0; i < db->n; i++) {
        const tn_entry *e = &db->e[i];
        if (e->family != in->family || strcmp(e->target, t->name) || !same_problem(e, in)) continue;
        double d = rk_tuning_distance(&e->shape, s);
        if (d < bd) { bd = d; best = e; }
    }
    char shape[128];
    if (!best) {
        if (note) snprintf(note, n, "no tuned %s entry for %s with these knobs: the heuristic's choice",
                           rk_family_name(in->family), t->name);
        return RK_OK;
    }
    rk_shape_format(in->family, &best->shape, false, shape, sizeof shape);
    rk_instance tuned = *in;
    uint32_t nk;
    const rk_knob *kb = rk_family_knobs(in->family, &nk);
    for (uint32_t k = 0; k < nk; k++) {
        const char *v = entry_knob(best, kb[k].name);
        /* a knob added after the entry was written (kernel names leave it
         * out at its first value): the entry's kernel ran that value */
        if (!v && kb[k].kind == RK_KNOB_ENUM && kb[k].count == 1) v = kb[k].names[0];
        if (!kb[k].perf || !v || (locked >> k & 1u)) continue;
        if (rk_instance_set(&tuned, kb[k].name, v, NULL)) return RK_OK;   /* checked at load */
    }
    /* the tuned knobs may not fit this shape (a cached row shorter than N) */
    if (rk_instance_validate(&tuned, t) || rk_instance_check_shape(&tuned, s)) {
        if (note) snprintf(note, n, "tuned knobs of shape %s do not fit this shape (%s): the heuristic's choice", shape,
                           rk_error_message());
        return RK_OK;
    }
    *in = tuned;
    if (applied) *applied = true;
    if (note) snprintf(note, n, "knobs of the nearest tuned shape %s (distance %.3g) from the database of '%s'", shape,
                       bd, db->device);
    return RK_OK;
}

/* $ROCKE_TUNING, read once per process; a file that cannot be read is
 * ignored here (rocke build reports it). */
static rk_tuning *env_db;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static void load_env_db(void) {
    const char *p = getenv("ROCKE_TUNING");
    if (p && *p && rk_tuning_load(p, &env_db)) env_db = NULL;
}

rk_status rk_instance_tune_db(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked,
                              const rk_tuning *db, const char *device, char *note, size_t n) {
    if (note && n) note[0] = 0;
    rk_status st = kn_instance_heuristic(in, t, s, locked);
    if (st) return st;
    if (!db) {
        pthread_once(&env_once, load_env_db);
        db = env_db;
        if (!device) device = getenv("ROCKE_TUNING_DEVICE");
    }
    return db ? rk_tuning_apply(db, device, in, t, s, locked, note, n, NULL) : RK_OK;
}
