/* rocke aot — ahead-of-time kernels: build a family instance (or read a .ir
 * file) for every target of --targets, compile each, and write DIR/NAME.h and
 * DIR/NAME.c: the code objects and the IR embedded as bytes and one typed
 * launcher that picks the object for the device at run time (docs/aot.md).
 * Exit 0 ok, 1 on errors, 2 on misuse (a refused knob, shape or target too: nothing
 * is written then). Layer: tools. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_aot.h"

static const char about[] =
    "Build FAMILY (knobs as for rocke build; those not given are tuned for --shape on each\n"
    "target) or read FILE.ir, compile it for every target of --targets, and write DIR/NAME.h\n"
    "and DIR/NAME.c: the code objects (cubin and PTX, or HSACO) and the IR embedded as bytes,\n"
    "NAME_load/NAME_unload and one typed launcher, NAME_launch(stream, <kernel parameters>,\n"
    "<shape dimensions>) for a family (a .ir kernel: grid and block instead). At run time the\n"
    "files need only libcuda or libamdhip64 (dlopen); with -DNAME_WITH_EMULATOR (upper case)\n"
    "and librocke they run the IR on the emulator when no GPU is present. docs/aot.md.\n"
    "Exit 0 ok, 1 on errors (a failed compile, a write error), 2 on misuse and bad input\n"
    "(an unknown option, a refused knob value, shape or combination: nothing is written).";

static void free_unit(aot_unit *u) {
    for (uint32_t i = 0; i < u->nobj; i++) rk_artifact_free(u->obj[i].a);
    rk_argsig_free(u->sig);
}

static bool is_ident(const char *s) {
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return false;
    return true;
}

/* Names a kernel parameter cannot have in the launcher: C keywords and the
 * launcher's own names. */
static bool reserved(const char *name) {
    static const char *const words[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
        "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
        "volatile", "while", "bool", "true", "false", "s", "params", "dims", "grid", "block"};
    for (size_t i = 0; i < RK_COUNTOF(words); i++)
        if (!strcmp(name, words[i])) return true;
    return !strncmp(name, "shape_", 6) || name[0] == '_';
}

/* The same parameter names and types on every target, or the launcher could not be one. */
static int same_signature(const aot_unit *u, const rk_argsig *s, const char *target) {
    bool same = rk_argsig_count(s) == rk_argsig_count(u->sig);
    for (uint32_t i = 0; same && i < rk_argsig_count(s); i++)
        same = !strcmp(rk_argsig_name(s, i), rk_argsig_name(u->sig, i)) &&
               rk_argsig_type(s, i) == rk_argsig_type(u->sig, i);
    if (same) return 0;
    fprintf(stderr, "rocke aot: the kernel's parameters on %s differ from those on %s: one launcher cannot serve "
                    "both; run rocke aot once per target group\n", target, u->obj[0].t->name);
    return 1;
}

/* The kernel's parameters as the launcher's: the same on every target, no
 * tensor map, C identifiers. The first kernel's become u->sig. */
static int check_signature(aot_unit *u, const rk_kernel *k, const rk_target *t) {
    rk_argsig *sig = NULL;
    if (rk_argsig_from_kernel(k, &sig)) return cli_fail("aot");
    int rc = 0;
    if (!u->sig) u->sig = sig;
    else {
        rc = same_signature(u, sig, t->name);
        rk_argsig_free(sig);
    }
    for (uint32_t i = 0; !rc && i < rk_argsig_count(u->sig); i++)
        if (rk_argsig_type(u->sig, i) == RK_ARG_TENSORMAP) {
            /* the map holds a device address and is encoded by the driver at run time */
            fprintf(stderr, "rocke aot: %s takes a tensor map (TMA) parameter '%s', which the launcher cannot "
                            "encode; build a variant without TMA for %s\n", rk_kernel_name(k),
                    rk_argsig_name(u->sig, i), t->name);
            rc = 1;
        } else if (!is_ident(rk_argsig_name(u->sig, i)) || reserved(rk_argsig_name(u->sig, i))) {
            fprintf(stderr, "rocke aot: parameter '%s' of %s cannot name a C parameter of the launcher (a C "
                            "keyword, a launcher name: s, params, dims, grid, block, shape_*, or not an "
                            "identifier); rename it in the IR\n", rk_argsig_name(u->sig, i), rk_kernel_name(k));
            rc = 1;
        }
    return rc;
}

/* Compile k for t into the next object of u. */
static int add_object(aot_unit *u, const rk_kernel *k, const rk_target *t, const rk_compile_options *base) {
    int rc = check_signature(u, k, t);
    if (rc) return rc;
    rk_compile_options o;
    if (rk_compile_options_default(t, &o)) return cli_fail("aot");
    o.opt_level = base->opt_level;
    o.cache = base->cache && o.cache;
    aot_object *ob = &u->obj[u->nobj];
    ob->t = t;
    if (rk_compile(k, t, &o, &ob->a)) {
        fprintf(stderr, "rocke aot: cannot compile %s for %s: %s\n", rk_kernel_name(k), t->name, rk_error_message());
        return 1;
    }
    u->nobj++;
    if (ob->a->kind == RK_BINARY_PTX && !ob->a->cubin)
        fprintf(stderr, "rocke aot: note: %s: no ptxas found, so the file holds PTX only (the driver compiles it "
                        "at load); install the CUDA toolkit's ptxas or set ROCKE_PTXAS for a cubin\n", t->name);
    return 0;
}

/* --targets: known names, each once, at most AOT_MAX_TARGETS. */
static int parse_targets(const cli_cmd *c, const char *text, const rk_target **out, uint32_t *n) {
    *n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    size_t len = strlen(text);
    if (len && (strstr(text, ",,") || text[0] == ',' || text[len - 1] == ','))
        return cli_misuse(c, "--targets '%s': an empty target name (legal: %s)", text, rk_target_names());
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const rk_target *t = rk_target_find(tok);
        if (!t) return cli_misuse(c, "--targets: unknown target '%s' (legal: %s)", tok, rk_target_names());
        for (uint32_t i = 0; i < *n; i++)
            if (out[i] == t) return cli_misuse(c, "--targets: '%s' given twice", tok);
        if (*n == AOT_MAX_TARGETS) return cli_misuse(c, "--targets: at most %d targets", AOT_MAX_TARGETS);
        out[(*n)++] = t;
    }
    if (!*n) return cli_misuse(c, "--targets needs at least one target (legal: %s)", rk_target_names());
    return -1;
}

/* The family's instance for every target, tuned and checked: -1 to go on, else the exit
 * code (2: a knob, shape or combination refused, before anything is written). */
static int family_instances(rk_family_id fam, const cli_knobs *ko, const char *shape_text, const rk_target *const *ts,
                            uint32_t nt, rk_instance *ins) {
    rk_shape shape;
    rk_instance first;   /* the knobs given shape the default, as in rocke build (attention's D) */
    uint64_t given;
    rk_instance_default(fam, &first);
    int rc = cli_apply_knobs("aot", ko, &first, &given);
    if (rc) return rc;
    rk_instance_default_shape(&first, &shape);
    if (shape_text && !cli_shape_parse("aot", fam, shape_text, &shape)) return 2;
    for (uint32_t i = 0; i < nt; i++) {
        uint64_t locked;
        rk_instance_default(fam, &ins[i]);
        if ((rc = cli_apply_knobs("aot", ko, &ins[i], &locked))) return rc;
        if (rk_instance_tune(&ins[i], ts[i], &shape, locked) || rk_instance_validate(&ins[i], ts[i]) ||
            rk_instance_check_shape(&ins[i], &shape)) {
            fprintf(stderr, "rocke aot: %s: %s\n", ts[i]->name, rk_error_message());
            return 2;
        }
        cli_note_retyped("aot", ko, &ins[i], ts[i]);
    }
    return -1;
}

static int family_objects(aot_unit *u, rk_family_id fam, const rk_instance *ins, const rk_target *const *ts,
                          uint32_t nt, const rk_compile_options *o) {
    const rk_dim_decl *dims = rk_family_dims(fam, &u->ndims);
    for (uint32_t i = 0; i < u->ndims; i++) u->dims[i] = dims[i].name;
    u->family = true;
    for (uint32_t i = 0; i < nt; i++) {
        rk_kernel *k = NULL;
        if (rk_instance_build(&ins[i], ts[i], &k)) return cli_fail("aot");
        rk_instance_geometry(&ins[i], &u->obj[u->nobj].geom);
        int rc = add_object(u, k, ts[i], o);
        rk_kernel_free(k);
        if (rc) return rc;
    }
    return 0;
}

static int file_objects(aot_unit *u, const char *file, const rk_target *const *ts, uint32_t nt,
                        const rk_compile_options *o) {
    char *text;
    size_t n;
    if (rk_read_file(file, &text, &n)) return cli_fail("aot");
    rk_kernel *k = NULL;
    rk_status s = rk_parse(text, n, &k);
    rk_free(text, n + 1);
    if (s) {
        fprintf(stderr, "rocke aot: %s:%s\n", file, rk_error_message());
        return 1;
    }
    int rc = 0;
    for (uint32_t i = 0; i < nt && !rc; i++) rc = add_object(u, k, ts[i], o);
    rk_kernel_free(k);
    return rc;
}

static int write_unit(const aot_unit *u, const char *dir) {
    rk_buf h, c;
    rk_buf_init(&h);
    rk_buf_init(&c);
    int rc = 0;
    char path[4096];
    if (!aot_emit_header(u, &h) || !aot_emit_source(u, &c)) {
        fprintf(stderr, "rocke aot: out of memory writing %s\n", u->name);
        rc = 1;
    }
    snprintf(path, sizeof path, "%s/%s.h", dir, u->name);
    if (!rc && rk_write_file_atomic(path, h.data, h.len)) rc = cli_fail("aot");
    snprintf(path, sizeof path, "%s/%s.c", dir, u->name);
    if (!rc && rk_write_file_atomic(path, c.data, c.len)) rc = cli_fail("aot");
    if (!rc) {
        printf("rocke aot: %s/%s.h, %s/%s.c (%zu bytes):", dir, u->name, dir, u->name, c.len);
        for (uint32_t i = 0; i < u->nobj; i++) {
            const rk_artifact *a = u->obj[i].a;
            printf(" %s %s%s", u->obj[i].t->name, a->kind == RK_BINARY_HSACO ? "hsaco" : a->cubin ? "cubin+ptx" : "ptx",
                   i + 1 < u->nobj ? "," : "\n");
        }
    }
    rk_buf_free(&h);
    rk_buf_free(&c);
    return rc;
}

enum { AOT_COMMON_OPTS = 6 };

int cmd_aot(int argc, char **argv) {
    const char *what = NULL, *out = NULL, *name = NULL, *targets = NULL, *shape_text = NULL;
    bool no_cache = false;
    uint32_t lvl = 3;
    cli_knobs ko = {.n = 0};
    cli_opt opts[AOT_COMMON_OPTS + CLI_MAX_KNOBS + 1] = {
        {.name = "--targets", .kind = CLI_STRING, .dst = &targets, .meta = "T,T,...", .required = true,
         .help = "the targets to embed code objects for (sm_90a,gfx942,gfx950)"},
        {.name = "--out", .alias = 'o', .kind = CLI_PATH, .dst = &out, .meta = "DIR", .required = true,
         .help = "the output folder (created with its parents)"},
        {.name = "--name", .kind = CLI_STRING, .dst = &name, .meta = "NAME",
         .help = "the C prefix and file names (default: the family, or FILE's base name)"},
        {.name = "--shape", .kind = CLI_STRING, .dst = &shape_text, .meta = "SHAPE",
         .help = "a family: the shape the knobs not given are tuned for (as rocke build)"},
        {.name = "--opt-level", .alias = 'O', .kind = CLI_U32, .dst = &lvl, .meta = "N", .ranged = true, .lo = 0,
         .hi = 3, .def = "3", .help = "optimization level"},
        {.name = "--no-cache", .kind = CLI_FLAG, .dst = &no_cache, .help = "do not read or write the compile cache"},
        {0},
    };
    _Static_assert(AOT_COMMON_OPTS == 6, "the common options come first in opts[]");
    cli_cmd c = {.name = "aot", .args = "FAMILY|FILE.ir", .about = about, .opts = opts, .pos = &what,
                 .min_pos = 1, .max_pos = 1};
    rk_family_id fam = 0;
    bool family = false;
    int first = 1;
    size_t alen = argc >= 2 ? strlen(argv[1]) : 0;
    /* a family's knobs are options, so FAMILY comes first; anything else first is a file */
    if (argc >= 2 && argv[1][0] != '-' && !(alen > 3 && !strcmp(argv[1] + alen - 3, ".ir"))) {
        if (rk_family_parse(argv[1], &fam)) {
            fprintf(stderr, "rocke aot: %s (or give a FILE.ir)\n", rk_error_message());
            return 2;
        }
        cli_add_knobs(fam, &ko, opts + AOT_COMMON_OPTS);
        family = true;
        what = argv[1];
        c.pos = NULL;
        c.min_pos = c.max_pos = 0;
        first = 2;
    }
    int prc = cli_parse(&c, argc, argv, first);
    if (prc >= 0) return prc;
    const rk_target *ts[AOT_MAX_TARGETS];
    uint32_t nt;
    if ((prc = parse_targets(&c, targets, ts, &nt)) >= 0) return prc;
    if (!family && shape_text)
        return cli_misuse(&c, "--shape is for a family; a .ir kernel takes grid and block at launch");
    aot_unit u = {.family = false};
    char base[64];
    if (!name) {
        const char *slash = strrchr(what, '/');
        snprintf(base, sizeof base, "%.*s", (int)strcspn(slash ? slash + 1 : what, "."), slash ? slash + 1 : what);
        for (char *p = base; *p; p++)
            if (!isalnum((unsigned char)*p)) *p = '_';
        name = base;
    }
    if (!is_ident(name) || strlen(name) >= sizeof u.name)
        return cli_misuse(&c, "--name '%s' must be a C identifier of at most %zu characters (letters, digits, _)",
                          name, sizeof u.name - 1);
    snprintf(u.name, sizeof u.name, "%s", name);
    snprintf(u.what, sizeof u.what, "%s %s", family ? "family" : "kernel file", what);
    rk_instance ins[AOT_MAX_TARGETS];   /* every refusal before the folder is made */
    if (family && (prc = family_instances(fam, &ko, shape_text, ts, nt, ins)) >= 0) return prc;
    if ((prc = cli_out_dir_make("aot", out))) return prc;
    rk_compile_options o = {.opt_level = lvl, .cache = !no_cache};
    int rc = family ? family_objects(&u, fam, ins, ts, nt, &o) : file_objects(&u, what, ts, nt, &o);
    if (!rc) rc = write_unit(&u, out);
    free_unit(&u);
    return rc;
}
