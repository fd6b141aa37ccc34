/* rocke aot — writing NAME.h and NAME.c: the code objects and IR as byte
 * arrays, the geometry programs, and the typed launcher, into the runtime
 * template (tools/aot_runtime.c.in, which also holds the driver code). Output
 * depends only on the unit: the same bytes every time. Layer: tools. */
#include <ctype.h>
#include <string.h>

#include "cmd_aot.h"
#include "kernels/geom_eval.h"   /* the op numbers the names below stand for */
#include "aot_texts.h"   /* generated at configure time: the template and geom_eval.h as text */

/* The C type of a launcher parameter. */
static const char *c_type(const aot_unit *u, rk_arg_type t) {
    static char ptr[80];
    switch (t) {
    case RK_ARG_PTR: snprintf(ptr, sizeof ptr, "%s_devptr", u->name); return ptr;
    case RK_ARG_I64: return "int64_t";
    case RK_ARG_I32: return "int32_t";
    case RK_ARG_I16: return "int16_t";
    case RK_ARG_I8: return "int8_t";
    case RK_ARG_I1: return "uint8_t";
    case RK_ARG_F64: return "double";
    case RK_ARG_F32: return "float";
    case RK_ARG_F16: return "uint16_t /* f16 bits */";
    case RK_ARG_BF16: return "uint16_t /* bf16 bits */";
    case RK_ARG_TENSORMAP: return "const void * /* 128-byte tensor map */";
    case RK_ARG__COUNT: break;
    }
    return "void";
}

/* The launcher's parameter list after the stream: the kernel's, then the
 * problem's dimensions (family) or grid and block. */
static void params(const aot_unit *u, rk_buf *b) {
    for (uint32_t i = 0; i < rk_argsig_count(u->sig); i++)
        rk_buf_printf(b, ", %s %s", c_type(u, rk_argsig_type(u->sig, i)), rk_argsig_name(u->sig, i));
    if (!u->family) {
        rk_buf_puts(b, ", const uint32_t grid[3], const uint32_t block[3]");
        return;
    }
    for (uint32_t i = 0; i < u->ndims; i++) rk_buf_printf(b, ", uint64_t shape_%s", u->dims[i]);
}

static void upper(const char *s, char *out, size_t n) {
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++) out[i] = (char)toupper((unsigned char)s[i]);
    out[i] = 0;
}

static void targets_list(const aot_unit *u, rk_buf *b) {
    for (uint32_t i = 0; i < u->nobj; i++) rk_buf_printf(b, "%s%s", i ? ", " : "", u->obj[i].t->name);
}

bool aot_emit_header(const aot_unit *u, rk_buf *b) {
    char up[64];
    upper(u->name, up, sizeof up);
    rk_buf_printf(b, "/* %s.h — written by `rocke aot` (do not edit): %s.\n", u->name, u->what);
    rk_buf_puts(b, " * Code objects for ");
    targets_list(u, b);
    rk_buf_puts(b, "; needs only libcuda or libamdhip64 at run time (docs/aot.md). */\n");
    rk_buf_printf(b, "#ifndef %s_H\n#define %s_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n", up, up);
    rk_buf_puts(b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    rk_buf_printf(b, "enum {\n    %s_OK = 0,\n    %s_ERR_NO_DEVICE = 1,   /* no GPU (and no emulator built in) */\n"
                     "    %s_ERR_NO_OBJECT = 2,   /* a GPU this file holds no code object for */\n"
                     "    %s_ERR_DRIVER = 3,      /* a driver call failed */\n"
                     "    %s_ERR_INVALID = 4,     /* a bad argument */\n    %s_ERR_NOMEM = 5\n};\n\n",
                  up, up, up, up, up, up);
    rk_buf_printf(b, "/* The kernel loaded on one device, launching on one native stream. */\n"
                     "typedef struct %s_stream %s_stream;\ntypedef uint64_t %s_devptr;   /* a device address */\n\n",
                  u->name, u->name, u->name);
    rk_buf_printf(b, "/* Open the first GPU (CUDA, then HIP) and load the object that suits it;\n"
                     " * native_stream: a CUstream or hipStream_t to launch on (NULL: the default\n"
                     " * stream). Returns %s_OK or an error code (the message: %s_error()). */\n"
                     "int %s_load(%s_stream **out, void *native_stream);\n"
                     "void %s_unload(%s_stream *s);\n"
                     "/* The last failure's message on this thread. */\nconst char *%s_error(void);\n"
                     "/* What runs: \"cuda sm_90 (sm_90a cubin)\", \"emu gfx942 (ir)\". */\n"
                     "const char *%s_device(const %s_stream *s);\n"
                     "/* The object for a device named arch (\"sm_90\", \"gfx942:sramecc+:xnack-\"):\n"
                     " * its index, or -1 with the reason in %s_error(). */\n"
                     "int %s_object_for(const char *arch);\n\n",
                  up, u->name, u->name, u->name, u->name, u->name, u->name, u->name, u->name, u->name, u->name);
    rk_buf_printf(b, "int %s_alloc(%s_stream *s, size_t bytes, %s_devptr *out);\n"
                     "int %s_free(%s_stream *s, %s_devptr p);\n"
                     "int %s_copy_in(%s_stream *s, %s_devptr dst, const void *src, size_t bytes);\n"
                     "int %s_copy_out(%s_stream *s, void *dst, %s_devptr src, size_t bytes);\n"
                     "int %s_sync(%s_stream *s);   /* wait for the stream */\n\n",
                  u->name, u->name, u->name, u->name, u->name, u->name, u->name, u->name, u->name, u->name,
                  u->name, u->name, u->name, u->name);
    if (u->family)
        rk_buf_puts(b, "/* Queue one launch; the grid follows from the shape (as rocke run sizes it). */\n");
    else
        rk_buf_puts(b, "/* Queue one launch with the given grid and block. */\n");
    rk_buf_printf(b, "int %s_launch(%s_stream *s", u->name, u->name);
    params(u, b);
    rk_buf_puts(b, ");\n\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
    return !b->oom;
}

static void put_bytes(rk_buf *b, const char *name, const void *data, size_t n, bool nul) {
    const unsigned char *p = data;
    size_t total = n + (nul ? 1 : 0);
    rk_buf_printf(b, "static const unsigned char %s[%zu] = {", name, total);
    for (size_t i = 0; i < total; i++) {
        if (i % 16 == 0) rk_buf_puts(b, "\n   ");
        rk_buf_printf(b, " %u,", i < n ? p[i] : 0u);
    }
    rk_buf_puts(b, "\n};\n");
}

/* One program word, spelled with geom_eval.h's names. */
static void geom_word(rk_buf *b, uint64_t w, uint32_t k) {
    static const char *const ops[] = {NULL, "DIM", "CONST", "ADD", "MUL", "DIV", "CDIV", "AXIS"};
    _Static_assert(RK_GEOM_DIM == 1 && RK_GEOM_CDIV == 6 && RK_GEOM_AXIS == 7, "ops[] follows geom_eval.h's numbers");
    uint64_t op = w & 0xffu;
    rk_buf_puts(b, k ? "," : "");
    rk_buf_puts(b, k % 4 ? " " : "\n    ");
    if (op >= 1 && op < RK_COUNTOF(ops))
        rk_buf_printf(b, "RK_GEOM_WORD(RK_GEOM_%s, %lluu)", ops[op], (unsigned long long)(w >> 8));
    else
        rk_buf_printf(b, "%lluu", (unsigned long long)w);
}

static void objects(const aot_unit *u, rk_buf *b) {
    for (uint32_t i = 0; i < u->nobj; i++) {
        const aot_object *o = &u->obj[i];
        const rk_artifact *a = o->a;
        char nm[48];
        rk_buf_printf(b, "/* %s: %s */\n", o->t->name, a->kernel_name);
        bool nv = a->kind == RK_BINARY_PTX;
        if (!nv || a->cubin) {
            snprintf(nm, sizeof nm, "obj%u_code", i);
            put_bytes(b, nm, nv ? a->cubin : a->binary, nv ? a->cubin_size : a->binary_size, false);
        }
        if (nv) {
            snprintf(nm, sizeof nm, "obj%u_ptx", i);
            put_bytes(b, nm, a->binary, a->binary_size, true);
        }
        snprintf(nm, sizeof nm, "obj%u_ir", i);
        put_bytes(b, nm, a->ir_text, strlen(a->ir_text), true);
        if (u->family) {
            rk_buf_printf(b, "static const uint64_t obj%u_geom[%u] = {", i, o->geom.n);
            for (uint32_t k = 0; k < o->geom.n; k++) geom_word(b, o->geom.code[k], k);
            rk_buf_puts(b, "\n};\n");
        }
        rk_buf_putc(b, '\n');
    }
    rk_buf_printf(b, "enum { NOBJECTS = %u };\nstatic const aot_object objects[NOBJECTS] = {\n", u->nobj);
    for (uint32_t i = 0; i < u->nobj; i++) {
        const aot_object *o = &u->obj[i];
        const rk_artifact *a = o->a;
        bool nv = a->kind == RK_BINARY_PTX, code = !nv || a->cubin;
        rk_buf_printf(b, "    {\"%s\", ", o->t->name);
        if (code) rk_buf_printf(b, "obj%u_code, sizeof obj%u_code, ", i, i);
        else rk_buf_puts(b, "NULL, 0, ");
        if (nv) rk_buf_printf(b, "obj%u_ptx, ", i);
        else rk_buf_puts(b, "NULL, ");
        rk_buf_printf(b, "\"%s\", obj%u_ir, sizeof obj%u_ir - 1, %uu, ", a->kernel_name, i, i, a->dyn_smem_min);
        if (u->family) rk_buf_printf(b, "obj%u_geom, %uu, ", i, o->geom.n);
        else rk_buf_puts(b, "NULL, 0u, ");
        const uint32_t *bl = u->family ? o->geom.block : (const uint32_t[3]){1, 1, 1};
        rk_buf_printf(b, "{%uu, %uu, %uu}},\n", bl[0], bl[1], bl[2]);
    }
    rk_buf_puts(b, "};\nstatic const char targets_text[] = \"");
    targets_list(u, b);
    rk_buf_puts(b, "\";\n");
}

static void launcher(const aot_unit *u, rk_buf *b) {
    char up[64];
    upper(u->name, up, sizeof up);
    rk_buf_printf(b, "int %s_launch(%s_stream *s", u->name, u->name);
    params(u, b);
    rk_buf_printf(b, ") {\n    if (!s) return fail(%s_ERR_INVALID, \"%s_launch: no stream (%s_load gives one)\");\n",
                  up, u->name, u->name);
    uint32_t n = rk_argsig_count(u->sig);
    rk_buf_puts(b, "    void *params[] = {");
    for (uint32_t i = 0; i < n; i++) {
        /* a tensor map is passed by value: kernelParams points at its bytes */
        bool map = rk_argsig_type(u->sig, i) == RK_ARG_TENSORMAP;
        rk_buf_printf(b, "%s%s%s", i ? ", " : "", map ? "(void *)" : "&", rk_argsig_name(u->sig, i));
    }
    rk_buf_printf(b, "%s};\n", n ? "" : "NULL");
    if (!u->family) {
        rk_buf_puts(b, "    return launch(s, grid, block, params);\n}\n");
        return;
    }
    rk_buf_puts(b, "    const uint64_t dims[] = {");
    for (uint32_t i = 0; i < u->ndims; i++) rk_buf_printf(b, "%sshape_%s", i ? ", " : "", u->dims[i]);
    rk_buf_puts(b, "};\n");
    for (uint32_t i = 0; i < u->ndims; i++)
        rk_buf_printf(b, "    if (shape_%s < 1)\n"
                         "        return fail(%s_ERR_INVALID, \"%s_launch: shape_%s is 0 (legal: 1 and up)\");\n",
                      u->dims[i], up, u->name, u->dims[i]);
    rk_buf_printf(b, "    uint32_t grid[3];\n"
                     "    if (rk_geom_run(s->obj->geom, s->obj->ngeom, dims, %uu, grid))\n"
                     "        return fail(%s_ERR_INVALID, \"%s_launch: malformed launch geometry\");\n"
                     "    return launch(s, grid, s->obj->block, params);\n}\n",
                  u->ndims, up, u->name);
}

/* The template with @NAME@, @UNAME@ and the three generated parts put in. */
bool aot_emit_source(const aot_unit *u, rk_buf *b) {
    char up[64];
    upper(u->name, up, sizeof up);
    rk_buf parts[3];
    for (int i = 0; i < 3; i++) rk_buf_init(&parts[i]);
    if (u->family) rk_buf_puts(&parts[0], aot_geom_eval_text);
    objects(u, &parts[1]);
    launcher(u, &parts[2]);
    static const char *const keys[] = {"@NAME@", "@UNAME@", "@GEOM@", "@OBJECTS@", "@LAUNCH@"};
    bool ok = !parts[0].oom && !parts[1].oom && !parts[2].oom;
    for (const char *p = aot_runtime_text; ok && *p;) {
        const char *at = strchr(p, '@');
        if (!at) { rk_buf_puts(b, p); break; }
        rk_buf_putn(b, p, (size_t)(at - p));
        size_t k = 0;
        while (k < RK_COUNTOF(keys) && strncmp(at, keys[k], strlen(keys[k]))) k++;
        if (k == RK_COUNTOF(keys)) { rk_buf_putc(b, '@'); p = at + 1; continue; }
        if (k == 0) rk_buf_puts(b, u->name);
        else if (k == 1) rk_buf_puts(b, up);
        else if (parts[k - 2].len) rk_buf_putn(b, parts[k - 2].data, parts[k - 2].len);
        p = at + strlen(keys[k]);
    }
    for (int i = 0; i < 3; i++) rk_buf_free(&parts[i]);
    return ok && !b->oom;
}
