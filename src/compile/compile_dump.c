/* rocke — what the compiler did: the stage log of an artifact and the
 * --dump-after files (the IR after verify and after each pass, the LLVM IR,
 * the ISA or PTX, and SASS where cuobjdump or nvdisasm is found), each named
 * by its place in the pipeline. Layer: compile. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "compile_int.h"

static const cc_name_bit after_names[] = {
    {"parse", RK_AFTER_PARSE}, {"verify", RK_AFTER_VERIFY}, {"fold", RK_AFTER_FOLD}, {"cse", RK_AFTER_CSE},
    {"dce", RK_AFTER_DCE},     {"lower", RK_AFTER_LOWER},   {"codegen", RK_AFTER_CODEGEN}, {"all", RK_AFTER_ALL},
};

rk_status rk_dump_after_parse(const char *s, uint32_t *out) {
    if (!s || !*s) {
        *out = 0;
        return rk_fail(RK_ERR_INVALID, "no stage to dump after (legal: parse, verify, fold, cse, dce, lower, "
                                       "codegen, all)");
    }
    return cc_names_parse(s, after_names, RK_COUNTOF(after_names), "stage", out);
}

rk_status rk_dump_write(const char *dir, uint32_t order, const char *stage, const char *ext, const char *text,
                        size_t n) {
    if (!dir || !*dir) return rk_fail(RK_ERR_INVALID, "rk_dump_write: no dump folder");
    struct stat st;
    if (stat(dir, &st) != 0 && mkdir(dir, 0755) != 0)
        return rk_fail(RK_ERR_IO, "cannot create the dump folder '%s': %s", dir, strerror(errno));
    char path[RK_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%02u-%s.%s", dir, order, stage, ext);
    return rk_write_file_atomic(path, text, n);
}

void cc_stage(rk_artifact *a, const char *name, double ms) {
    if (a->nstages == RK_STAGES_MAX) return;   /* more rounds than rows: the rest are in `ms` */
    rk_stage_entry *e = &a->stages[a->nstages++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->ms = ms;
}

rk_status cc_dump_kernel(const rk_compile_options *o, uint32_t order, const char *stage, const rk_kernel *k) {
    char *text = rk_serialize(k);
    if (!text) return rk_fail(RK_ERR_NOMEM, "out of memory serializing '%s' for the dump", rk_kernel_name(k));
    rk_status s = rk_dump_write(o->dump_dir, order, stage, "ir", text, strlen(text));
    rk_string_free(text);
    return s;
}

/* SASS of the cubin with cuobjdump -sass, else nvdisasm; nothing when neither is found. */
static rk_status dump_sass(const rk_compile_options *o, const rk_artifact *a) {
    static const char *const cuobjdump[] = {"cuobjdump", NULL}, *const nvdisasm[] = {"nvdisasm", NULL};
    static const char *const dirs[] = {"/usr/local/cuda/bin", NULL};
    char tool[RK_PATH_MAX], dir[RK_PATH_MAX], file[RK_PATH_MAX + 16];
    bool objdump = cc_find_tool("ROCKE_CUOBJDUMP", cuobjdump, dirs, tool, NULL) == CC_FOUND;
    if (!objdump && cc_find_tool(NULL, nvdisasm, dirs, tool, NULL) != CC_FOUND) return RK_OK;
    rk_status s = cc_tmpdir(dir);
    if (s != RK_OK) return s;
    snprintf(file, sizeof file, "%s/kernel.cubin", dir);
    s = cc_write_file(file, a->cubin, a->cubin_size);
    cc_proc p;
    memset(&p, 0, sizeof p);
    const char *argv[] = {tool, objdump ? "-sass" : file, objdump ? file : NULL, NULL};
    if (s == RK_OK) s = cc_run(argv, &p);
    if (s == RK_OK && p.exit_code != 0) s = cc_tool_failed("disassembling the cubin", argv, &p);
    if (s == RK_OK)
        s = rk_dump_write(o->dump_dir, RK_DUMP_ORDER_SASS, "sass", "sass", p.out.data ? p.out.data : "", p.out.len);
    cc_proc_free(&p);
    cc_tmpdir_remove(dir);
    return s;
}

rk_status cc_dump_codegen(const rk_compile_options *o, const rk_artifact *a) {
    if (a->kind == RK_BINARY_HSACO)
        return a->isa ? rk_dump_write(o->dump_dir, RK_DUMP_ORDER_CODEGEN, "isa", "s", a->isa, strlen(a->isa)) : RK_OK;
    rk_status s = rk_dump_write(o->dump_dir, RK_DUMP_ORDER_CODEGEN, "ptx", "ptx", (const char *)a->binary,
                                a->binary_size);
    if (s == RK_OK && a->cubin) s = dump_sass(o, a);
    return s;
}
