/* rocke tests — a stand-in libamd_comgr for machines without ROCm. It keeps
 * comgr's object model (reference-counted data objects, data sets, action
 * infos) and the action numbering of the interface version it claims
 * (FAKE_COMGR_VERSION=2.8 or 3.0, read when asked), and performs the actions
 * rocke uses with LLVM's own tools: preprocessing by substitution, "bitcode"
 * as the IR text, codegen with llc, linking with ld.lld. It refuses what real
 * comgr refuses (wrong language, unknown action, isa not set) and counts live
 * handles so a test can prove every handle was released.
 * FAKE_COMGR_FAIL_ACTION=N makes action N fail with a log. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* every function here is an export whose prototype lives in amd_comgr.h */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

typedef int status;
enum { OK = 0, ERROR = 1, INVALID = 2 };
enum { K_SOURCE = 1, K_LOG = 5, K_BC = 6, K_RELOC = 7, K_EXE = 8 };
typedef struct { uint64_t handle; } data_h;
typedef struct { uint64_t handle; } set_h;
typedef struct { uint64_t handle; } info_h;

#define MAXOBJ 256
typedef struct { int kind, refs; char *bytes; size_t n; char name[64]; } data;
typedef struct { bool live; uint64_t items[32]; int n; } set;
typedef struct { bool live; char isa[96]; int lang; char opts[8][32]; int nopts; } info;
static data datas[MAXOBJ];
static set sets[MAXOBJ];
static info infos[MAXOBJ];

static int major_version(void) {
    const char *v = getenv("FAKE_COMGR_VERSION");
    return v && v[0] == '2' ? 2 : 3;
}

/* Live handles (data objects, sets, action infos): 0 after a clean run. */
int fake_comgr_live(void) {
    int n = 0;
    for (int i = 1; i < MAXOBJ; i++) n += (datas[i].refs > 0) + sets[i].live + infos[i].live;
    return n;
}

void amd_comgr_get_version(size_t *major, size_t *minor) {
    *major = (size_t)major_version();
    *minor = *major == 2 ? 8 : 0;
}

status amd_comgr_status_string(status s, const char **out) {
    static const char *const names[] = {"SUCCESS", "ERROR", "ERROR_INVALID_ARGUMENT"};
    if (s < 0 || s > 2 || !out) return INVALID;
    *out = names[s];
    return OK;
}

static data *D(data_h h) { return h.handle && h.handle < MAXOBJ && datas[h.handle].refs > 0 ? &datas[h.handle] : NULL; }
static set *S(set_h h) { return h.handle && h.handle < MAXOBJ && sets[h.handle].live ? &sets[h.handle] : NULL; }
static info *I(info_h h) { return h.handle && h.handle < MAXOBJ && infos[h.handle].live ? &infos[h.handle] : NULL; }

status amd_comgr_create_data(int kind, data_h *out) {
    for (uint64_t i = 1; i < MAXOBJ; i++)
        if (datas[i].refs == 0) {
            datas[i] = (data){.kind = kind, .refs = 1};
            out->handle = i;
            return OK;
        }
    return 3;
}

status amd_comgr_release_data(data_h h) {
    data *d = D(h);
    if (!d) return INVALID;
    if (--d->refs == 0) free(d->bytes);
    return OK;
}

status amd_comgr_set_data(data_h h, size_t n, const char *bytes) {
    data *d = D(h);
    if (!d || !bytes) return INVALID;
    free(d->bytes);
    d->bytes = malloc(n + 1);
    memcpy(d->bytes, bytes, n);
    d->bytes[n] = 0;
    d->n = n;
    return OK;
}

status amd_comgr_set_data_name(data_h h, const char *name) {
    data *d = D(h);
    if (!d) return INVALID;
    snprintf(d->name, sizeof d->name, "%s", name ? name : "");
    return OK;
}

status amd_comgr_get_data(data_h h, size_t *n, char *bytes) {
    data *d = D(h);
    if (!d || !n) return INVALID;
    if (bytes) {
        if (*n < d->n) return INVALID;
        memcpy(bytes, d->bytes, d->n);
    }
    *n = d->n;
    return OK;
}

status amd_comgr_create_data_set(set_h *out) {
    for (uint64_t i = 1; i < MAXOBJ; i++)
        if (!sets[i].live) {
            sets[i] = (set){.live = true};
            out->handle = i;
            return OK;
        }
    return 3;
}

status amd_comgr_destroy_data_set(set_h h) {
    set *s = S(h);
    if (!s) return INVALID;
    for (int i = 0; i < s->n; i++) amd_comgr_release_data((data_h){s->items[i]});
    s->live = false;
    return OK;
}

status amd_comgr_data_set_add(set_h h, data_h d) {
    set *s = S(h);
    if (!s || !D(d) || s->n == 32) return INVALID;
    s->items[s->n++] = d.handle;
    datas[d.handle].refs++;
    return OK;
}

status amd_comgr_action_data_count(set_h h, int kind, size_t *n) {
    set *s = S(h);
    if (!s || !n) return INVALID;
    *n = 0;
    for (int i = 0; i < s->n; i++) *n += datas[s->items[i]].kind == kind;
    return OK;
}

/* The returned handle is a new reference the caller releases. */
status amd_comgr_action_data_get_data(set_h h, int kind, size_t index, data_h *out) {
    set *s = S(h);
    if (!s || !out) return INVALID;
    for (int i = 0; i < s->n; i++)
        if (datas[s->items[i]].kind == kind && index-- == 0) {
            datas[s->items[i]].refs++;
            out->handle = s->items[i];
            return OK;
        }
    return INVALID;
}

status amd_comgr_create_action_info(info_h *out) {
    for (uint64_t i = 1; i < MAXOBJ; i++)
        if (!infos[i].live) {
            infos[i] = (info){.live = true};
            out->handle = i;
            return OK;
        }
    return 3;
}

status amd_comgr_destroy_action_info(info_h h) {
    info *f = I(h);
    if (!f) return INVALID;
    f->live = false;
    return OK;
}

status amd_comgr_action_info_set_isa_name(info_h h, const char *isa) {
    info *f = I(h);
    if (!f || !isa || strncmp(isa, "amdgcn-amd-amdhsa--gfx", 22)) return INVALID;
    snprintf(f->isa, sizeof f->isa, "%s", isa);
    return OK;
}

status amd_comgr_action_info_set_language(info_h h, int lang) {
    info *f = I(h);
    if (!f || lang < 0 || lang > (major_version() == 2 ? 5 : 4)) return INVALID;
    f->lang = lang;
    return OK;
}

status amd_comgr_action_info_set_option_list(info_h h, const char **opts, size_t n) {
    info *f = I(h);
    if (!f || n > 8) return INVALID;
    for (size_t i = 0; i < n; i++) snprintf(f->opts[i], sizeof f->opts[i], "%s", opts[i]);
    f->nopts = (int)n;
    return OK;
}

status amd_comgr_action_info_set_logging(info_h h, bool on) {
    (void)on;
    return I(h) ? OK : INVALID;
}

status amd_comgr_get_isa_name(size_t index, const char **name) {
    if (index != 0 || !name) return INVALID;
    *name = "amdgcn-amd-amdhsa--gfx942";
    return OK;
}

/* ---- actions ---------------------------------------------------------------- */
static void add_blob(set *out, int kind, const char *bytes, size_t n) {
    data_h d;
    amd_comgr_create_data(kind, &d);
    amd_comgr_set_data(d, n, bytes);
    amd_comgr_data_set_add((set_h){(uint64_t)(out - sets)}, d);
    amd_comgr_release_data(d);
}

static void log_to(set *out, const char *text) { add_blob(out, K_LOG, text, strlen(text)); }

/* Runs `cmd` (with IN and OUT temp files) over the first input of `kind`. */
static status tool(const char *fmt, const char *cpu, set *in, int kind, set *out, int out_kind) {
    char dir[] = "/tmp/fake-comgr-XXXXXX", inp[64], outp[64], cmd[512];
    if (!mkdtemp(dir)) return ERROR;
    snprintf(inp, sizeof inp, "%s/in", dir);
    snprintf(outp, sizeof outp, "%s/out", dir);
    status st = ERROR;
    for (int i = 0; i < in->n; i++) {
        data *d = &datas[in->items[i]];
        if (d->kind != kind) continue;
        FILE *f = fopen(inp, "wb");
        if (!f) break;
        fwrite(d->bytes, 1, d->n, f);
        fclose(f);
        snprintf(cmd, sizeof cmd, fmt, cpu, inp, outp);
        if (system(cmd) != 0) { log_to(out, "error: tool failed"); break; }
        f = fopen(outp, "rb");
        if (!f) break;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *buf = malloc((size_t)n + 1);
        if (fread(buf, 1, (size_t)n, f) == (size_t)n) {
            add_blob(out, out_kind, buf, (size_t)n);
            st = OK;
        }
        free(buf);
        fclose(f);
        break;
    }
    unlink(inp);
    unlink(outp);
    rmdir(dir);
    return st;
}

status amd_comgr_do_action(int kind, info_h ih, set_h inh, set_h outh) {
    info *f = I(ih);
    set *in = S(inh), *out = S(outh);
    if (!f || !in || !out || !f->isa[0]) return INVALID;
    const char *fail = getenv("FAKE_COMGR_FAIL_ACTION");
    if (fail && atoi(fail) == kind) {
        log_to(out, "error: injected failure in the fake comgr");
        return ERROR;
    }
    bool v2 = major_version() == 2;
    const char *cpu = f->isa + strlen("amdgcn-amd-amdhsa--");
    if (kind == 0) {                 /* SOURCE_TO_PREPROCESSOR: OpenCL only */
        if (f->lang != 1) return INVALID;
        for (int i = 0; i < in->n; i++) {
            data *d = &datas[in->items[i]];
            if (d->kind != K_SOURCE || !strstr(d->bytes, "__clang_major__")) continue;
            char text[256];
            const char *m = strstr(d->bytes, "__clang_major__");
            snprintf(text, sizeof text, "# 1 \"x.cl\"\n%.*s22 1 8\n", (int)(m - d->bytes), d->bytes);
            add_blob(out, K_SOURCE, text, strlen(text));
        }
        return OK;
    }
    if (kind == 2) {                 /* COMPILE_SOURCE_TO_BC: LLVM IR in, the same text as "bitcode" */
        if (f->lang != (v2 ? 5 : 4)) {
            log_to(out, "error: language is not LLVM IR");
            return INVALID;
        }
        for (int i = 0; i < in->n; i++)
            if (datas[in->items[i]].kind == K_SOURCE)
                add_blob(out, K_BC, datas[in->items[i]].bytes, datas[in->items[i]].n);
        return OK;
    }
    int codegen = v2 ? 6 : 4, assembly = v2 ? 7 : 5, link = v2 ? 9 : 7;
    if (kind == codegen)
        return tool("llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=%s -O3 -filetype=obj %s -o %s", cpu, in, K_BC, out, K_RELOC);
    if (kind == assembly)
        return tool("llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=%s -O3 -filetype=asm %s -o %s", cpu, in, K_BC, out,
                    K_SOURCE);
    if (kind == link) return tool("ld.lld-22 -shared %.0s%s -o %s", cpu, in, K_RELOC, out, K_EXE);
    log_to(out, "error: action not supported by this comgr version");
    return INVALID;
}
