/* rocke CLI — shared helpers: library errors, output folders, the checked
 * close of standard output and error. Layer: tools. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rocke/rocke.h"
#include "cli.h"

bool cli_is_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

int cli_fail(const char *cmd) {
    fprintf(stderr, "rocke %s: %s\n", cmd, rk_error_message());
    return 1;
}

int cli_refuse(const char *cmd) {
    cli_fail(cmd);
    return 2;
}

int cli_mkdirs(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(path, 0777) && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(path, 0777) && errno != EEXIST ? -1 : 0;
}

int cli_out_dir_make(const char *cmd, const char *dir) {
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "rocke %s: the output path '%s' exists and is not a folder\n", cmd, dir);
        return 2;
    }
    errno = 0;
    if (cli_mkdirs(dir)) {
        int e = errno;
        bool in_the_way = e == ENOTDIR || e == EEXIST;
        fprintf(stderr, "rocke %s: cannot create the output folder '%s': %s\n", cmd, dir,
                in_the_way ? "a part of its path is a file, not a folder" : strerror(e));
        return in_the_way ? 2 : 1;
    }
    return cli_out_dir_usable(cmd, dir) ? 0 : 1;
}

bool cli_out_dir_usable(const char *cmd, const char *dir) {
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "rocke %s: the output path '%s' exists and is not a folder\n", cmd, dir);
            return false;
        }
        if (access(dir, W_OK | X_OK) != 0) {
            fprintf(stderr, "rocke %s: the output folder '%s' is not writable: %s\n", cmd, dir, strerror(errno));
            return false;
        }
        return true;
    }
    size_t n = strlen(dir);
    char *parent = malloc(n + 2);
    if (!parent) return false;
    memcpy(parent, dir, n + 1);
    while (n > 1 && parent[n - 1] == '/') parent[--n] = '\0';   /* "out/" names "out" */
    char *slash = strrchr(parent, '/');
    if (slash == parent) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else memcpy(parent, ".", 2);
    errno = 0;
    bool ok = stat(parent, &st) == 0 && S_ISDIR(st.st_mode) && access(parent, W_OK | X_OK) == 0;
    if (!ok)
        fprintf(stderr, "rocke %s: cannot create the output folder '%s': %s\n", cmd, dir,
                errno ? strerror(errno) : "its parent is not a writable folder");
    free(parent);
    return ok;
}

int cli_close_streams(const char *cmd, int rc) {
    /* stdio keeps a failed write in the stream's error flag, so this one check
     * covers every printf of the command (a full disk, /dev/full, a closed pipe) */
    errno = 0;
    bool bad = fflush(stdout) != 0;
    int err = errno;
    bad |= ferror(stdout) != 0;
    if (fclose(stdout) != 0 && !bad) {
        bad = true;
        err = errno;
    }
    if (bad) {
        fprintf(stderr, "rocke%s%s: cannot write standard output%s%s\n", cmd ? " " : "", cmd ? cmd : "",
                err ? ": " : "", err ? strerror(err) : "");
        if (rc == 0) rc = 1;
    }
    if ((fflush(stderr) != 0 || ferror(stderr) || fclose(stderr) != 0) && rc == 0) rc = 1;
    return rc;
}

bool cli_names_unique(const char *cmd, const char *opt, const cli_list *list) {
    for (uint32_t i = 0; i < list->n; i++) {
        size_t n = strcspn(list->v[i], "=");
        for (uint32_t j = 0; j < i; j++)
            if (strcspn(list->v[j], "=") == n && !strncmp(list->v[i], list->v[j], n)) {
                fprintf(stderr, "rocke %s: %s %.*s given twice ('%s' and '%s'); give each name once\n", cmd, opt,
                        (int)n, list->v[i], list->v[j], list->v[i]);
                return false;
            }
    }
    return true;
}
