/* rocke build — build one kernel family instance for a target: choose the
 * knobs for a shape (heuristic) unless given, then write DIR/NAME.ir
 * (ckdsl.ir v1, what the emulator runs), DIR/NAME.ll, the code object
 * (DIR/NAME.hsaco, or DIR/NAME.ptx [+ .cubin]) and DIR/manifest.json.
 * `rocke build --list` prints families, ops and knobs. Exit 0 ok, 1 on
 * errors (a failed compile or write), 2 on misuse and bad input (a refused
 * knob, shape or combination: nothing is written then). Layer: tools. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocke/rocke.h"
#include "rocke/compile.h"
#include "rocke/kernels.h"
#include "rocke/manifest.h"
#include "rocke/runtime.h"
#include "base/base_int.h"
#include "cli.h"

static int list(void) {
    for (uint32_t f = 0; f < rk_family_count(); f++) {
        uint32_t n;
        const rk_knob *kb = rk_family_knobs((rk_family_id)f, &n);
        rk_shape def;
        char shape[256];
        rk_shape_default((rk_family_id)f, &def);
        rk_shape_format((rk_family_id)f, &def, true, shape, sizeof shape);
        printf("%s  (--shape %s)\n", rk_family_name((rk_family_id)f), shape);
        for (uint32_t i = 0; i < n; i++) {
            char legal[1024];
            rk_knob_legal_text(&kb[i], legal, sizeof legal);
            printf("  --%-15s %-40s %s%s\n", kb[i].name, legal, kb[i].help, kb[i].perf ? " (heuristic)" : "");
        }
    }
    return 0;
}

static rk_status write_text(const char *dir, const char *name, const char *ext, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
    return rk_write_file_atomic(path, text, strlen(text));
}

/* The manifest for instance `in` built as kernel `name`; the binary fields are filled by the caller. */
static void fill_manifest(rk_manifest *m, const rk_instance *in, const rk_target *t, const char *name,
                          const rk_shape *shape) {
    rk_manifest_init(m);
    rk_instance_kind(in, m->kind, sizeof m->kind);
    snprintf(m->kernel_name, sizeof m->kernel_name, "%s", name);
    snprintf(m->target, sizeof m->target, "%s", t->name);
    snprintf(m->ir, sizeof m->ir, "%s.ir", name);
    uint32_t grid[3], block[3];
    rk_instance_grid(in, shape, grid, block);
    m->threads_per_block = block[0];
    rk_ksig sig;
    rk_instance_signature(in, &sig);
    for (uint32_t i = 0; i < sig.n; i++) {
        char type[48];
        uint32_t size = rk_kparam_manifest_type(&sig.p[i], type, sizeof type);
        rk_manifest_add_arg(m, sig.p[i].name, type, size);
    }
    snprintf(m->family, sizeof m->family, "%s", rk_family_name(in->family));
    char v[128];   /* a knob value: a fused chain can be long */
    rk_instance_get(in, "dtype", m->dtype, sizeof m->dtype);
    if (rk_instance_get(in, "op", v, sizeof v) == RK_OK) snprintf(m->op, sizeof m->op, "%.31s", v);
    else snprintf(m->op, sizeof m->op, "%s", rk_family_name(in->family));
    uint32_t nd;
    const rk_dim_decl *dims = rk_family_dims(in->family, &nd);
    m->ndefault_shape = shape->rank;
    for (uint32_t i = 0; i < shape->rank && i < RK_MANIFEST_MAX_DIMS; i++) {
        m->default_shape[i] = shape->dim[i];
        snprintf(m->default_shape_dims[i], sizeof m->default_shape_dims[i], "%s", i < nd ? dims[i].name : "?");
    }
    /* upstream manifest fields of the simple ops */
    if (in->family == RK_FAMILY_ELEMENTWISE) {
        m->elems_per_block = (uint64_t)in->u.ew.block_size * in->u.ew.vec * in->u.ew.unroll;
        m->is_binary = rk_ew_op_is_binary(in->u.ew.op);
    }
    if (in->family == RK_FAMILY_TRANSPOSE) {
        m->block_m = in->u.transpose.tile_m;
        m->block_n = in->u.transpose.tile_n;
    }
    uint32_t nsc;
    const rk_scalar_decl *sc = rk_family_scalars(in->family, &nsc);
    for (uint32_t i = 0; i < nsc; i++)
        if (sc[i].src == RK_SC_GIVEN && !strcmp(sc[i].name, "eps")) {
            m->has_eps = true;
            m->eps = sc[i].def;
        }
    uint32_t nk;
    const rk_knob *kb = rk_family_knobs(in->family, &nk);
    for (uint32_t i = 0; i < nk; i++) {
        rk_instance_get(in, kb[i].name, v, sizeof v);
        rk_manifest_add_spec(m, kb[i].name, v);
    }
    const char *note = rk_instance_note(in, t);
    snprintf(m->notes, sizeof m->notes, "rocke build %s for %s%s%s", rk_family_name(in->family), t->name,
             *note ? ": " : "", note);
}

/* Compile and write NAME.ll and the code object; record the binary in m. */
static int compile_into(rk_manifest *m, const rk_kernel *k, const rk_target *t, const char *dir, double build_ms,
                        const cli_cmd *c, const cli_stages *dmp) {
    rk_compile_options o;
    if (rk_compile_options_default(t, &o)) return cli_fail("build");
    o.build_ms = build_ms;
    int prc = cli_stage_apply(c, dmp, &o);
    if (prc >= 0) return prc;
    rk_artifact *a = NULL;
    if (rk_compile(k, t, &o, &a)) {
        fprintf(stderr, "rocke build: compiling %s for %s failed: %s\n(use --ir-only for an emulator-only build)\n",
                rk_kernel_name(k), t->name, rk_error_message());
        return 1;
    }
    if (rk_artifact_write(a, dir)) { rk_artifact_free(a); return cli_fail("build"); }
    const char *name = rk_kernel_name(k);
    snprintf(m->llvm, sizeof m->llvm, "%s.ll", name);
    const uint8_t *bin = a->binary;
    size_t size = a->binary_size;
    const char *kind = a->kind == RK_BINARY_HSACO ? "hsaco" : "ptx";
    if (a->kind == RK_BINARY_PTX && a->cubin) { bin = a->cubin; size = a->cubin_size; kind = "cubin"; }
    snprintf(m->binary, sizeof m->binary, "%s.%s", name, kind);
    snprintf(m->binary_kind, sizeof m->binary_kind, "%s", kind);
    m->binary_bytes = size;
    m->dyn_smem_min = a->dyn_smem_min;
    if (rk_kernel_cluster_dims(k, m->cluster_dims) && m->cluster_dims[0] * m->cluster_dims[1] * m->cluster_dims[2] == 1)
        memset(m->cluster_dims, 0, sizeof m->cluster_dims);   /* a cluster of one is no cluster: not written */
    m->cooperative = rk_kernel_cooperative(k);
    rk_manifest_hash(bin, size, m->binary_hash);
    m->timing_ms.build = a->ms.build;
    m->timing_ms.passes = a->ms.passes;
    m->timing_ms.lower = a->ms.lower;
    m->timing_ms.compile = a->ms.compile;
    m->timing_ms.link = a->ms.link;
    m->timing_ms.total = a->ms.total;
    printf("rocke build: %s/%s (%zu bytes, %s%s, %.1f ms)\n", dir, m->binary, size, a->toolchain,
           a->cache_hit ? ", cached" : "", a->ms.total);
    if (dmp->time) cli_stage_table(a, "build", build_ms);
    cli_recompile_note("build", a);
    rk_artifact_free(a);
    return 0;
}

/* --target device: the target of the best device present (emulator: the default). */
static const rk_target *device_target(void) {
    rk_device_opts o = {.which = "auto", .quiet = true};
    rk_device *d = NULL;
    if (rk_device_open_opts(&o, &d)) return rk_target_default();
    const char *name = rk_device_target(d);
    const rk_target *t = name && *name ? rk_target_find(name) : NULL;
    rk_device_close(d);
    return t ? t : rk_target_default();
}

/* The heuristic, then the tuning database (--tuning, else $ROCKE_TUNING) for
 * the device it is meant for; prints what the database did. */
static rk_status tune_instance(rk_instance *in, const rk_target *t, const rk_shape *s, uint64_t locked,
                               const char *file) {
    if (!file) file = getenv("ROCKE_TUNING");
    if (!file || !*file) return rk_instance_tune_db(in, t, s, locked, NULL, NULL, NULL, 0);
    rk_tuning *db = NULL;
    if (rk_tuning_load(file, &db)) return RK_ERR_INVALID;
    char device[160], note[512];
    const char *dn = getenv("ROCKE_TUNING_DEVICE");
    if (dn && *dn) snprintf(device, sizeof device, "%s", dn);
    else {
        rk_device_opts o = {.which = "auto", .quiet = true, .emu_target = t->name};
        rk_device *d = NULL;
        snprintf(device, sizeof device, "%s", rk_device_open_opts(&o, &d) ? "" : rk_device_name(d));
        rk_device_close(d);
    }
    rk_status st = rk_instance_tune_db(in, t, s, locked, db, device, note, sizeof note);
    if (!st) printf("rocke build: tuning %s: %s\n", file, note);
    rk_tuning_free(db);
    return st;
}

static const char about[] =
    "Build one instance of a kernel family for target T and write DIR/NAME.ir, DIR/NAME.ll,\n"
    "the code object (NAME.hsaco on AMD, NAME.ptx and NAME.cubin on NVIDIA) and\n"
    "DIR/manifest.json for `rocke run`. Knobs not given are chosen for --shape by the\n"
    "heuristic; the shape becomes the manifest's default_shape. Without --shape, reduce,\n"
    "softmax, layernorm and rmsnorm write shape variants (manifest.TAG.json) behind\n"
    "DIR/manifest.json, and `rocke run` takes the one serving its shape. FAMILY: one of those\n"
    "`rocke build --list` prints; `rocke build FAMILY --help` lists its knobs\n"
    "(--KNOB VALUE; --block-size or --block_size), --dtype also sets out_dtype unless that\n"
    "is given. Exit 0 ok, 1 on errors (a failed compile or write), 2 on misuse and bad input\n"
    "(an unknown option, a refused knob value, shape or combination: nothing is written).";

enum { COMMON_OPTS = 9 };

/* Build instance `in` (tuned and checked) for shape into out: NAME.ir, the
 * code object (unless ir_only) and the manifest `file`; `variants` (may be
 * NULL): the shape variants the manifest lists. */
static int emit(const rk_instance *in, const rk_target *t, const rk_shape *shape, const char *out, bool ir_only,
                const char *file, const rk_manifest *variants, const cli_cmd *c, const cli_stages *dmp) {
    double t0 = cli_now_ms();
    rk_kernel *k = NULL;
    if (rk_instance_build(in, t, &k)) return cli_fail("build");
    double build_ms = cli_now_ms() - t0;
    const char *name = rk_kernel_name(k);
    rk_manifest m;
    fill_manifest(&m, in, t, name, shape);
    if (variants) {
        memcpy(m.variants, variants->variants, sizeof m.variants);
        m.nvariants = variants->nvariants;
    }
    char *ir = rk_serialize(k);
    int rc = 0;
    if (!ir || write_text(out, name, ".ir", ir)) rc = cli_fail("build");
    if (!rc && ir_only) {
        snprintf(m.binary, sizeof m.binary, "%s.ir", name);
        snprintf(m.binary_kind, sizeof m.binary_kind, "ir");
        m.binary_bytes = strlen(ir);
        rk_manifest_hash(ir, strlen(ir), m.binary_hash);
        m.timing_ms.build = m.timing_ms.total = build_ms;
    } else if (!rc) {
        rc = compile_into(&m, k, t, out, build_ms, c, dmp);
    }
    if (!rc && rk_manifest_write_as(&m, out, file)) rc = cli_fail("build");
    if (!rc) printf("rocke build: %s for %s -> %s/%s\n", name, t->name, out, file);
    if (!rc && *rk_instance_note(in, t)) printf("rocke build: note: %s\n", rk_instance_note(in, t));
    rk_string_free(ir);
    rk_kernel_free(k);
    return rc;
}

/* The shape a variant is tuned for: its ranges' low ends raised to the
 * family default where the default lies inside. */
static rk_status variant_shape(const rk_variant *v, rk_shape *s) {
    rk_status st = rk_shape_default(v->inst.family, s);
    if (st) return st;
    uint32_t nd;
    const rk_dim_decl *dims = rk_family_dims(v->inst.family, &nd);
    for (uint32_t j = 0; j < v->ndims; j++)
        for (uint32_t i = 0; i < nd && i < s->rank; i++)
            if (!strcmp(dims[i].name, v->dim[j]) && (s->dim[i] < v->lo[j] || s->dim[i] > v->hi[j]))
                s->dim[i] = v->hi[j] < (uint64_t)1 << 20 ? v->hi[j] : v->lo[j];
    return RK_OK;
}

int cmd_build(int argc, char **argv) {
    const char *family = NULL, *out = NULL, *shape_text = NULL, *tuning = NULL;
    const rk_target *t = rk_target_default();
    bool ir_only = false, want_list = false;
    cli_knobs ko = {.n = 0};
    cli_opt opts[COMMON_OPTS + CLI_MAX_KNOBS + 1] = {
        {.name = "--out", .alias = 'o', .kind = CLI_PATH, .dst = &out, .meta = "DIR", .required = true,
         .help = "the output folder (created with its parents)"},
        {.name = "--target", .kind = CLI_TARGET, .dst = &t, .meta = "T", .legal = "device",
         .help = "the target; 'device': the target of the best device present"},
        {.name = "--shape", .kind = CLI_STRING, .dst = &shape_text, .meta = "SHAPE",
         .help = "the family's dimensions (--list shows them), positional 4096,4096\n"
                 "or named M=4096,N=4096 (named: the others keep their default);\n"
                 "elementwise has one, N, and takes 4096,4096 as their product"},
        {.name = "--ir-only", .kind = CLI_FLAG, .dst = &ir_only,
         .help = "skip compiling: the manifest's binary is NAME.ir (emulator only)"},
        {.name = "--list", .kind = CLI_FLAG, .dst = &want_list, .alone = true,
         .help = "families, ops, knobs and their legal values"},
        {.name = "--tuning", .kind = CLI_PATH, .dst = &tuning, .meta = "FILE",
         .help = "a tuning database (rocke tune): the knobs of the nearest tuned shape\n"
                 "replace the heuristic's (default: $ROCKE_TUNING); entries tuned on\n"
                 "another device than $ROCKE_TUNING_DEVICE, else the one present, are ignored"},
    };
    cli_stages dmp = {0};
    cli_stage_opts(&dmp, opts + 6);
    _Static_assert(COMMON_OPTS == 9, "the common options (6 + the stage options) come first in opts[]");
    cli_cmd c = {.name = "build", .args = "FAMILY", .about = about, .opts = opts, .pos = &family, .max_pos = 1};
    rk_family_id fam = 0;
    int first = 1;
    if (argc < 2) return cli_family_missing(&c);
    /* the knobs depend on the family, so FAMILY comes first */
    if (argc >= 2 && argv[1][0] != '-') {
        if (rk_family_parse(argv[1], &fam)) {
            fprintf(stderr, "rocke build: %s\n", rk_error_message());
            return 2;
        }
        cli_add_knobs(fam, &ko, opts + COMMON_OPTS);
        family = argv[1];
        c.pos = NULL;
        c.max_pos = 0;
        first = 2;
    }
    int prc = cli_parse(&c, argc, argv, first);
    if (prc >= 0) return prc;
    if (want_list) return list();
    if ((prc = cli_stage_apply(&c, &dmp, NULL)) >= 0) return prc;   /* misuse before any work */
    if (first == 1 && family)
        return cli_misuse(&c, "the family '%s' must come first (rocke build %s [options])", family, family);
    if (first == 1) return cli_family_missing(&c);
    if (!t) t = device_target();
    rk_instance in;
    rk_instance_default(fam, &in);
    uint64_t locked;
    if ((prc = cli_apply_knobs("build", &ko, &in, &locked))) return prc;
    rk_shape shape;
    rk_instance_default_shape(&in, &shape);   /* the knobs given shape the default (attention's D) */
    if (shape_text && !cli_shape_parse("build", fam, shape_text, &shape)) return 2;
    /* a refusal before anything is written is bad input: exit 2, as a misuse */
    if (tune_instance(&in, t, &shape, locked, tuning) || rk_instance_validate(&in, t)) {
        cli_fail("build");
        return 2;
    }
    cli_note_retyped("build", &ko, &in, t);
    if (rk_instance_check_shape(&in, &shape)) {
        cli_fail("build");
        if (!shape_text) {   /* the shape named above is one the user never wrote: say whose it is */
            char def[256];
            rk_shape_format(fam, &shape, true, def, sizeof def);
            fprintf(stderr, "rocke build: (no --shape given: that is the default shape %s; pass --shape for the "
                    "problem the kernel is for)\n", def);
        }
        return 2;
    }
    if ((prc = cli_out_dir_make("build", out))) return prc;
    /* without --shape, a row family builds its shape variants behind one manifest; unified attention
     * builds its row variants with or without it (rocke run picks one per batch) */
    rk_variant var[RK_MANIFEST_MAX_VARIANTS];
    rk_instance general;
    bool per_batch = in.family == RK_FAMILY_ATTENTION && in.u.attn.mode == RK_ATTN_UNIFIED;
    uint32_t nv = shape_text && !per_batch ? 0
                                           : rk_instance_variants(&in, t, locked, &general, var, RK_MANIFEST_MAX_VARIANTS);
    rk_manifest top;
    if (!nv) return emit(&in, t, &shape, out, ir_only, "manifest.json", NULL, &c, &dmp);
    rk_manifest_init(&top);
    for (uint32_t i = 0; i < nv; i++) {
        char file[64];
        snprintf(file, sizeof file, "manifest.%.23s.json", var[i].tag);
        rk_shape vs;
        if (variant_shape(&var[i], &vs)) return cli_fail("build");
        if (per_batch) vs = shape;   /* a row variant serves the build's shape too */
        /* each variant's stage files in a folder of its own: DIR/TAG */
        char vdir[4096];
        cli_stages vd = dmp;
        if (dmp.dir) {
            snprintf(vdir, sizeof vdir, "%s/%.23s", dmp.dir, var[i].tag);
            vd.dir = vdir;
        }
        int rc = emit(&var[i].inst, t, &vs, out, ir_only, file, NULL, &c, &vd);
        if (rc) return rc;
        rk_manifest_variant *mv = &top.variants[top.nvariants++];
        snprintf(mv->manifest, sizeof mv->manifest, "%s", file);
        mv->ndims = var[i].ndims;
        for (uint32_t j = 0; j < var[i].ndims; j++) {
            snprintf(mv->dim[j], sizeof mv->dim[j], "%s", var[i].dim[j]);
            mv->lo[j] = var[i].lo[j];
            mv->hi[j] = var[i].hi[j];
        }
    }
    return emit(&general, t, &shape, out, ir_only, "manifest.json", &top, &c, &dmp);
}
