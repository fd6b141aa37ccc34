/* rocke tests — golden LLVM IR: the corpus kernels pinned in
 * tests/golden/NAME.ir carry "# >>> llvm <target>" ... "# <<<" sections
 * (each line "# " + LLVM text) with the lowering for that target. The
 * builder's kernel and the kernel parsed from the file's IR part must both
 * lower to exactly that text, and llc must accept it. AMD sections are
 * required in every file; NVIDIA (sm_90) sections are checked where a file
 * has one. ROCKE_UPDATE_GOLDEN=1 rewrites only these sections. Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "lower/llc_util.h"
#include "support/ir_corpus.h"

#define GOLDEN_DIR ROCKE_SOURCE_DIR "/tests/golden"

/* The targets each pinned kernel is lowered for; an optional target is
 * checked (and updated) only in files that carry its section. */
static const struct { const char *name; bool optional; } golden_targets[] = {
    {"gfx942", false}, {"gfx950", false}, {"sm_90", true},
};

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0, got;
    char *d = malloc(cap);
    while (d && (got = fread(d + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) d = realloc(d, cap *= 2);
    }
    fclose(f);
    if (d) d[len] = '\0';
    return d;
}

/* "# >>> llvm gfx942\n" */
static void header_of(char *buf, size_t n, const char *target) { snprintf(buf, n, "# >>> llvm %s\n", target); }

/* The section's LLVM text (prefixes removed), or NULL when absent. */
static char *section(const char *file, const char *target) {
    char hdr[64];
    header_of(hdr, sizeof hdr, target);
    const char *s = file ? strstr(file, hdr) : NULL;
    if (!s) return NULL;
    s += strlen(hdr);
    const char *end = strstr(s, "# <<<");
    if (!end) return NULL;
    char *out = malloc((size_t)(end - s) + 1), *o = out;
    while (s < end) {
        const char *nl = strchr(s, '\n');
        if (!strncmp(s, "# ", 2)) s += 2;
        else if (*s == '#') s += 1;
        size_t len = (size_t)(nl - s) + 1;
        memcpy(o, s, len);
        o += len;
        s = nl + 1;
    }
    *o = '\0';
    return out;
}

/* The file with the section for target set to ll (replaced in place, or
 * appended at the end). */
static char *with_section(const char *file, const char *target, const char *ll) {
    char hdr[64];
    header_of(hdr, sizeof hdr, target);
    size_t cap = strlen(file) + strlen(ll) * 2 + 256;
    char *body = malloc(cap), *b = body;
    b += sprintf(b, "%s", hdr);
    for (const char *p = ll; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        b += len ? sprintf(b, "# %.*s\n", (int)len, p) : sprintf(b, "#\n");
        p += len + (nl ? 1 : 0);
    }
    b += sprintf(b, "# <<<\n");
    char *out = malloc(strlen(file) + strlen(body) + 2);
    const char *s = strstr(file, hdr);
    if (s) {
        const char *e = strstr(s, "# <<<\n");
        e = e ? e + 6 : s + strlen(s);
        sprintf(out, "%.*s%s%s", (int)(s - file), file, body, e);
    } else {
        size_t fl = strlen(file);
        sprintf(out, "%s%s%s", file, fl && file[fl - 1] != '\n' ? "\n" : "", body);
    }
    free(body);
    return out;
}

static char *lower(const rk_kernel *k, const char *target) {
    char *ll = NULL;
    if (rk_lower_llvm(k, rk_target_find(target), RK_LLVM22, &ll) != RK_OK)
        fail_msg("lowering %s for %s: %s", rk_kernel_name(k), target, rk_error_message());
    return ll;
}

static void test_golden_llvm(void **state) {
    (void)state;
    bool update = getenv("ROCKE_UPDATE_GOLDEN") != NULL;
    const char *llc = llc_path();
    unsigned checked = 0;
    for (unsigned i = 0; i < corpus_count; i++) {
        if (!corpus_kernels[i].golden) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.ir", GOLDEN_DIR, corpus_kernels[i].name);
        char *file = slurp(path);
        if (!file) fail_msg("%s is missing (the IR golden runner creates it)", path);
        rk_kernel *built = corpus_kernels[i].build(), *parsed = NULL;
        assert_non_null(built);
        if (rk_parse(file, strlen(file), &parsed) != RK_OK) fail_msg("%s: %s", path, rk_error_message());
        for (size_t t = 0; t < sizeof golden_targets / sizeof golden_targets[0]; t++) {
            const char *tn = golden_targets[t].name;
            char hdr[64];
            header_of(hdr, sizeof hdr, tn);
            if (golden_targets[t].optional && !strstr(file, hdr)) continue;
            char *ll = lower(built, tn), *from_text = lower(parsed, tn), *want = section(file, tn);
            if (strcmp(ll, from_text))
                fail_msg("%s for %s: lowering the parsed kernel differs from lowering the built one:\n%s\n---\n%s",
                         corpus_kernels[i].name, tn, ll, from_text);
            if (!want || strcmp(want, ll)) {
                if (!update)
                    fail_msg("%s: section 'llvm %s' %s (ROCKE_UPDATE_GOLDEN=1 rewrites it); lowering gives:\n%s", path, tn,
                             want ? "differs" : "is missing", ll);
                char *nf = with_section(file, tn, ll);
                FILE *f = fopen(path, "wb");
                assert_non_null(f);
                fputs(nf, f);
                fclose(f);
                fprintf(stderr, "updated %s (llvm %s)\n", path, tn);
                free(file);
                file = nf;
            }
            if (llc) {
                char *log = NULL;
                const rk_target *tt = rk_target_find(tn);
                if (llc_compile(ll, tt->triple, tt->cpu, &log) != 0)
                    fail_msg("llc rejects the %s golden for %s:\n%s", corpus_kernels[i].name, tn, log ? log : "");
                free(log);
            }
            checked++;
            free(want);
            rk_string_free(ll);
            rk_string_free(from_text);
        }
        rk_kernel_free(built);
        rk_kernel_free(parsed);
        free(file);
    }
    assert_true(checked >= 5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_llvm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
