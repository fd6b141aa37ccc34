/* rocke tests — run LLVM's llc on lowered text, and merge several one-kernel
 * modules into one so a whole op sweep costs one llc process per target.
 * Header-only (static) so each lowering test includes it. Layer: tests. */
#ifndef ROCKE_TESTS_LLC_UTIL_H
#define ROCKE_TESTS_LLC_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rocke/rocke.h"

/* The llc to use: $ROCKE_LLC, else llc-22 on PATH; NULL when absent. */
static inline const char *llc_path(void) {
    static char path[512];
    const char *env = getenv("ROCKE_LLC");
    if (env && *env) return access(env, X_OK) == 0 ? env : NULL;
    const char *p = getenv("PATH");
    while (p && *p) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(path, sizeof path, "%.*s/llc-22", (int)n, p);
        if (n && access(path, X_OK) == 0) return path;
        p = e ? e + 1 : NULL;
    }
    return NULL;
}

/* A scratch file path under the build tree. */
static inline void llc_tmp(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/lower_tmp", ROCKE_BINARY_DIR);
    mkdir(buf, 0777);
    snprintf(buf, n, "%s/lower_tmp/%s.%ld", ROCKE_BINARY_DIR, name, (long)getpid());
}

/* Compile `text` for cpu; returns the exit status (0 = accepted) and the
 * tool's output in *log (malloc'd, may be NULL). */
static inline int llc_compile(const char *text, const char *triple, const char *cpu, char **log) {
    char in[600], out[700], cmd[2048];
    llc_tmp(in, sizeof in, cpu);
    snprintf(out, sizeof out, "%s.o", in);
    strncat(in, ".ll", sizeof in - strlen(in) - 1);
    FILE *f = fopen(in, "w");
    if (!f) return -1;
    fputs(text, f);
    fclose(f);
    /* NVPTX emits PTX text only */
    snprintf(cmd, sizeof cmd, "'%s' -O3 -mtriple=%s -mcpu=%s -filetype=%s '%s' -o '%s' 2>&1", llc_path(), triple, cpu,
             strncmp(triple, "nvptx", 5) ? "obj" : "asm", in, out);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb;
            cap *= 2;
        }
    }
    if (buf) buf[len] = '\0';
    int st = pclose(p);
    remove(in);
    remove(out);
    if (log) *log = buf;
    else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* ---- merging one-kernel modules ---------------------------------------------------------- */
typedef struct llc_merge {
    char *head;                 /* datalayout + triple */
    char **decls, **globals, **bodies, **attrs, **mds;
    size_t ndecls, nglobals, nbodies, nattrs, nmds;
} llc_merge;

static inline void merge_push(char ***v, size_t *n, const char *s, size_t len, bool dedup) {
    for (size_t i = 0; dedup && i < *n; i++)
        if (strlen((*v)[i]) == len && memcmp((*v)[i], s, len) == 0) return;
    *v = realloc(*v, (*n + 1) * sizeof **v);
    (*v)[*n] = strndup(s, len);
    (*n)++;
}

/* Add one module produced by rk_lower_llvm (its layout is fixed). */
static inline void llc_merge_add(llc_merge *m, const char *ll) {
    size_t id = m->nbodies + 1;
    const char *p = ll;
    if (!m->head) {
        const char *t = strstr(ll, "target triple");
        m->head = strndup(ll, (size_t)(strchr(t, '\n') - ll + 1));
    }
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!strncmp(p, "target ", 7)) {
            /* the header is the same for every module of one target */
        } else if (!strncmp(p, "declare ", 8)) {
            merge_push(&m->decls, &m->ndecls, p, len, true);
        } else if (*p == '@') {
            merge_push(&m->globals, &m->nglobals, p, len, false);
        } else if (!strncmp(p, "define ", 7)) {
            const char *end = strstr(p, "\n}\n");
            size_t blen = (size_t)(end - p) + 2;
            char *b = strndup(p, blen);
            char *hash = strstr(b, ") #0 {");
            char num[32];
            snprintf(num, sizeof num, ") #%zu {", id);
            size_t nb = strlen(b) - 6 + strlen(num) + 1;
            char *fixed = malloc(nb);
            snprintf(fixed, nb, "%.*s%s%s", (int)(hash - b), b, num, hash + 6);
            free(b);
            merge_push(&m->bodies, &m->nbodies, fixed, strlen(fixed), false);
            free(fixed);
            e = end + 2;
        } else if (!strncmp(p, "attributes #0", 13)) {
            char line[4096];
            snprintf(line, sizeof line, "attributes #%zu%.*s", id, (int)len - 13, p + 13);
            merge_push(&m->attrs, &m->nattrs, line, strlen(line), false);
        } else if (*p == '!') {
            merge_push(&m->mds, &m->nmds, p, len, true);
        }
        p = e ? e + 1 : p + len;
    }
}

static inline char *llc_merge_text(const llc_merge *m) {
    size_t n = strlen(m->head) + 16;
    char **lists[] = {m->globals, m->decls, m->bodies, m->attrs, m->mds};
    size_t counts[] = {m->nglobals, m->ndecls, m->nbodies, m->nattrs, m->nmds};
    for (int l = 0; l < 5; l++)
        for (size_t i = 0; i < counts[l]; i++) n += strlen(lists[l][i]) + 2;
    char *t = malloc(n), *q = t;
    q += sprintf(q, "%s", m->head);
    for (int l = 0; l < 5; l++)
        for (size_t i = 0; i < counts[l]; i++) q += sprintf(q, "%s\n", lists[l][i]);
    return t;
}

static inline void llc_merge_free(llc_merge *m) {
    char **lists[] = {m->globals, m->decls, m->bodies, m->attrs, m->mds};
    size_t counts[] = {m->nglobals, m->ndecls, m->nbodies, m->nattrs, m->nmds};
    for (int l = 0; l < 5; l++) {
        for (size_t i = 0; i < counts[l]; i++) free(lists[l][i]);
        free(lists[l]);
    }
    free(m->head);
    memset(m, 0, sizeof *m);
}

#endif
