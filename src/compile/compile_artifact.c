/* rocke — artifacts: freeing them and writing DIR/NAME.ll plus the binary
 * (NAME.hsaco, or NAME.ptx and NAME.cubin) through the base writer: every
 * regular file is written whole under a temporary name first and only then
 * renamed into place, so a failure leaves no partial file in DIR; a FIFO or
 * device already standing at a name is written through, never replaced.
 * Layer: compile. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile_int.h"

static void free_str(char *s) {
    if (s) rk_free(s, strlen(s) + 1);
}

void rk_artifact_free(rk_artifact *a) {
    if (!a) return;
    free_str(a->kernel_name);
    free_str(a->ir_text);
    free_str(a->llvm_ir);
    free_str(a->isa);
    if (a->binary) rk_free(a->binary, a->binary_size + 1);
    if (a->cubin) rk_free(a->cubin, a->cubin_size + 1);
    rk_free(a, sizeof *a);
}

rk_status rk_artifact_write(const rk_artifact *a, const char *dir) {
    if (!a || !dir || !*dir) return rk_fail(RK_ERR_INVALID, "rk_artifact_write: NULL artifact or empty folder");
    struct stat st;
    if (stat(dir, &st) != 0 && mkdir(dir, 0755) != 0)
        return rk_fail(RK_ERR_IO, "cannot create the output folder '%s': %s", dir, strerror(errno));
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return rk_fail(RK_ERR_IO, "the output path '%s' is not a folder", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return rk_fail(RK_ERR_IO, "the output folder '%s' is not writable: %s", dir, strerror(errno));
    bool amd = a->kind == RK_BINARY_HSACO;
    struct { const char *ext; const void *data; size_t n; } files[3] = {
        {"ll", a->llvm_ir, a->llvm_ir ? strlen(a->llvm_ir) : 0},
        {amd ? "hsaco" : "ptx", a->binary, a->binary_size},
        {"cubin", a->cubin, a->cubin_size},
    };
    int nfiles = a->cubin ? 3 : 2;
    char path[RK_PATH_MAX];
    rk_outfile out[3];
    int opened = 0;
    rk_status s = RK_OK;
    /* all files complete (under temporary names) first, then the renames */
    for (int i = 0; i < nfiles && s == RK_OK; i++) {
        int n = snprintf(path, RK_PATH_MAX, "%s/%s.%s", dir, a->kernel_name, files[i].ext);
        if (n < 0 || n >= RK_PATH_MAX) s = rk_fail(RK_ERR_IO, "output path in '%s' is too long", dir);
        if (s == RK_OK) s = rk_outfile_open(&out[i], path);
        if (s == RK_OK) opened++;
        if (s == RK_OK) s = rk_outfile_write(&out[i], files[i].data ? files[i].data : "", files[i].n);
    }
    if (s != RK_OK) {
        for (int i = 0; i < opened; i++) rk_outfile_discard(&out[i]);
        return s;
    }
    for (int i = 0; i < nfiles; i++) {
        rk_status c = rk_outfile_commit(&out[i]);
        if (s == RK_OK) s = c;
    }
    return s;
}

size_t rk_compile_struct_size(const char *name) {
    return name && strcmp(name, "rk_artifact") == 0 ? sizeof(rk_artifact) : 0;
}
