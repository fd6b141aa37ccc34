/* rocke — artifacts: freeing them and writing DIR/NAME.ll plus the binary
 * (NAME.hsaco, or NAME.ptx and NAME.cubin): every file is written whole under
 * a temporary name first and only then renamed into place, so a failure
 * leaves no partial file in DIR. Layer: compile. */
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
    char paths[3][RK_PATH_MAX], tmps[3][RK_PATH_MAX + 32];
    for (int i = 0; i < nfiles; i++) {
        int n = snprintf(paths[i], RK_PATH_MAX, "%s/%s.%s", dir, a->kernel_name, files[i].ext);
        if (n < 0 || n >= RK_PATH_MAX) return rk_fail(RK_ERR_IO, "output path in '%s' is too long", dir);
        if (snprintf(tmps[i], sizeof tmps[i], "%s.tmp.%ld", paths[i], (long)getpid()) >= (int)sizeof tmps[i])
            return rk_fail(RK_ERR_IO, "output path in '%s' is too long", dir);
    }
    /* all files complete under temporary names first, then the renames */
    rk_status s = RK_OK;
    for (int i = 0; i < nfiles && s == RK_OK; i++)
        s = cc_write_file(tmps[i], files[i].data ? files[i].data : "", files[i].n);
    for (int i = 0; i < nfiles && s == RK_OK; i++)
        if (rename(tmps[i], paths[i]) != 0)
            s = rk_fail(RK_ERR_IO, "cannot write '%s': %s", paths[i], strerror(errno));
    if (s != RK_OK)
        for (int i = 0; i < nfiles; i++) unlink(tmps[i]);
    return s;
}

size_t rk_compile_struct_size(const char *name) {
    return name && strcmp(name, "rk_artifact") == 0 ? sizeof(rk_artifact) : 0;
}
