/* rocke — instruction counts from the disassembly: `llvm-objdump -d` on the
 * HSACO (run through the compile layer's tool runner), then one pass over
 * the listing classifying each mnemonic. Layer: analysis. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rocke/analysis.h"
#include "../compile/compile_int.h"

static bool starts(const char *s, size_t n, const char *p) {
    size_t k = strlen(p);
    return n >= k && !memcmp(s, p, k);
}

static void count_one(const char *m, size_t n, const char *line, rk_isa_stats *st) {
    st->instructions++;
    if (starts(m, n, "v_mfma") || starts(m, n, "v_smfmac")) st->mfma++;
    else if (starts(m, n, "buffer_load")) {
        st->buffer_load++;
        if (strstr(line, " lds")) st->buffer_load_lds++;
    } else if (starts(m, n, "buffer_store")) st->buffer_store++;
    else if (starts(m, n, "global_load")) st->global_load++;
    else if (starts(m, n, "global_store")) st->global_store++;
    else if (starts(m, n, "scratch_load")) st->scratch_load++;
    else if (starts(m, n, "scratch_store")) st->scratch_store++;
    else if (starts(m, n, "ds_read") || starts(m, n, "ds_load")) st->ds_read++;
    else if (starts(m, n, "ds_write") || starts(m, n, "ds_store")) st->ds_write++;
    else if (starts(m, n, "s_waitcnt")) st->s_waitcnt++;
    else if (starts(m, n, "s_barrier")) st->s_barrier++;
    else if (starts(m, n, "v_")) st->valu++;
    else if (starts(m, n, "s_")) st->salu++;
}

void rk_isa_count(const char *listing, rk_isa_stats *out) {
    memset(out, 0, sizeof *out);
    bool in_code = false;
    for (const char *p = listing; p && *p;) {
        size_t len = strcspn(p, "\n");
        char line[512];
        size_t n = len < sizeof line - 1 ? len : sizeof line - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        p += len + (p[len] == '\n');
        if (n && line[n - 1] == ':' && strchr(line, '<')) { /* "0000000000001a00 <vadd>:" */
            in_code = true;
            continue;
        }
        if (!in_code || (line[0] != '\t' && line[0] != ' ')) continue;
        const char *m = line + strspn(line, " \t");
        size_t mn = strcspn(m, " \t");
        if (!mn || m[0] < 'a' || m[0] > 'z' || !memchr(m, '_', mn)) continue;
        count_one(m, mn, line, out);
        if (mn == 8 && starts(m, mn, "s_endpgm")) in_code = false; /* the rest is padding */
    }
}

static const char *const objdump_names[] = {"llvm-objdump-22", "llvm-objdump-23", "llvm-objdump-21",
                                            "llvm-objdump-20", "llvm-objdump", NULL};
static const char *const objdump_dirs[] = {"/usr/lib/llvm-22/bin", NULL};

rk_status rk_analyze_isa(const void *hsaco, size_t n, rk_isa_stats *out, char **listing_or_NULL) {
    memset(out, 0, sizeof *out);
    if (listing_or_NULL) *listing_or_NULL = NULL;
    char tool[RK_PATH_MAX];
    rk_buf tried;
    rk_buf_init(&tried);
    const char *env = getenv("ROCKE_OBJDUMP") ? "ROCKE_OBJDUMP" : "LLVM_OBJDUMP";
    cc_found f = cc_find_tool(env, objdump_names, objdump_dirs, tool, &tried);
    if (f != CC_FOUND) {
        rk_status s = rk_fail(RK_ERR_TOOLCHAIN, "no llvm-objdump for the ISA listing (tried %s)", rk_buf_cstr(&tried));
        rk_buf_free(&tried);
        return s;
    }
    rk_buf_free(&tried);
    char dir[RK_PATH_MAX], path[RK_PATH_MAX + 16];
    rk_status s = cc_tmpdir(dir);
    if (s != RK_OK) return s;
    snprintf(path, sizeof path, "%s/kernel.hsaco", dir);
    s = cc_write_file(path, hsaco, n);
    cc_proc p;
    memset(&p, 0, sizeof p);
    if (s == RK_OK) {
        const char *argv[] = {tool, "-d", path, NULL};
        s = cc_run(argv, &p);
        if (s == RK_OK && (p.exit_code || p.signal)) s = cc_tool_failed("llvm-objdump", argv, &p);
    }
    cc_tmpdir_remove(dir);
    if (s == RK_OK) {
        rk_isa_count(rk_buf_cstr(&p.out), out);
        if (listing_or_NULL && !(*listing_or_NULL = rk_buf_take(&p.out)))
            s = rk_fail(RK_ERR_NOMEM, "out of memory keeping the ISA listing");
    }
    cc_proc_free(&p);
    return s;
}
