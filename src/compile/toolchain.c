/* rocke — choosing a toolchain: comgr, libLLVM in process or the external
 * tools, in the documented lookup order, cheaply (files are found and
 * stat'ed, not loaded, so a cache hit in a fresh process stays fast), with
 * one message listing everything tried when nothing fits. Layer: compile. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "compile_int.h"

/* LLVM majors rocke accepts, most preferred first (22 is the one measured). */
static const unsigned majors[] = {22, 23, 21, 20};

static const char *const llvm_bin_dirs[] = {"/usr/lib/llvm-22/bin", "/usr/lib/llvm-23/bin", "/usr/lib/llvm-21/bin",
                                            "/usr/lib/llvm-20/bin", NULL};
static const char *const lld_names[] = {"ld.lld-22", "ld.lld-23", "ld.lld-21", "ld.lld-20", "ld.lld", NULL};
static const char *const llc_names[] = {"llc-22", "llc-23", "llc-21", "llc-20", "llc", NULL};
static const char *const opt_names[] = {"opt-22", "opt-23", "opt-21", "opt-20", "opt", NULL};
static const char *const ptxas_names[] = {"ptxas", NULL};
static const char *const ptxas_dirs[] = {"/usr/local/cuda/bin", NULL};

rk_llvm_flavor cc_flavor_for_major(unsigned major) {
    return major <= 20 ? RK_LLVM20 : major <= 22 ? RK_LLVM22 : RK_LLVM23;
}

/* "libLLVM.so.22.1", "libLLVM-22.so", "llc-22" -> 22; 0 when the name says nothing. */
static unsigned major_from_name(const char *path) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *p = strstr(b, ".so.");
    if (p && p[4] >= '0' && p[4] <= '9') return (unsigned)strtoul(p + 4, NULL, 10);
    p = strrchr(b, '-');
    if (p && p[1] >= '0' && p[1] <= '9') return (unsigned)strtoul(p + 1, NULL, 10);
    return 0;
}

static bool is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* libLLVM: ROCKE_LLVM_LIB when set, else /usr/lib/llvm-N/lib, then the
 * loader's folders (LD_LIBRARY_PATH and the system library folders). */
static cc_found find_libllvm(char out[RK_PATH_MAX], rk_buf *tried) {
    const char *env = getenv("ROCKE_LLVM_LIB");
    if (env && *env) {
        if (cc_is_elf_file(env) && snprintf(out, RK_PATH_MAX, "%s", env) < RK_PATH_MAX) return CC_FOUND;
        rk_buf_printf(tried, "ROCKE_LLVM_LIB=%s (not an ELF shared library)", env);
        out[0] = '\0';
        return CC_BAD_OVERRIDE;
    }
    rk_buf_puts(tried, "$ROCKE_LLVM_LIB (unset)");
    static const char *const sys_dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                                           "/usr/lib", "/usr/local/lib"};
    for (unsigned m = 0; m < RK_COUNTOF(majors); m++) {
        char names[2][48], dir[48];
        snprintf(names[0], sizeof names[0], "libLLVM.so.%u.1", majors[m]);
        snprintf(names[1], sizeof names[1], "libLLVM-%u.so", majors[m]);
        snprintf(dir, sizeof dir, "/usr/lib/llvm-%u/lib", majors[m]);
        for (int i = 0; i < 2; i++)
            if (snprintf(out, RK_PATH_MAX, "%s/%s", dir, names[i]) < RK_PATH_MAX && is_file(out)) return CC_FOUND;
        const char *ld = getenv("LD_LIBRARY_PATH");
        for (const char *p = ld ? ld : ""; *p;) {
            size_t n = strcspn(p, ":");
            for (int i = 0; n && i < 2; i++)
                if (snprintf(out, RK_PATH_MAX, "%.*s/%s", (int)n, p, names[i]) < RK_PATH_MAX && is_file(out))
                    return CC_FOUND;
            p += n;
            if (*p == ':') p++;
        }
        for (unsigned d = 0; d < RK_COUNTOF(sys_dirs); d++)
            for (int i = 0; i < 2; i++)
                if (snprintf(out, RK_PATH_MAX, "%s/%s", sys_dirs[d], names[i]) < RK_PATH_MAX && is_file(out))
                    return CC_FOUND;
    }
    rk_buf_puts(tried, ", libLLVM.so.{22,23,21,20}.1 / libLLVM-{22,23,21,20}.so in /usr/lib/llvm-N/lib, "
                       "$LD_LIBRARY_PATH and the system library folders");
    out[0] = '\0';
    return CC_ABSENT;
}

/* Both of two lookups; a bad override wins over absence. */
static cc_found both(cc_found a, cc_found b) {
    return a == CC_BAD_OVERRIDE || b == CC_BAD_OVERRIDE ? CC_BAD_OVERRIDE
                                                         : a == CC_FOUND && b == CC_FOUND ? CC_FOUND : CC_ABSENT;
}

/* ROCKE_LINKER: auto (default), internal or lld (see cc_linker). */
static rk_status linker_from_env(cc_linker *out) {
    const char *v = getenv("ROCKE_LINKER");
    *out = CC_LINK_AUTO;
    if (!v || !*v || !strcmp(v, "auto")) return RK_OK;
    if (!strcmp(v, "internal")) *out = CC_LINK_INTERNAL;
    else if (!strcmp(v, "lld")) *out = CC_LINK_LLD;
    else return rk_fail(RK_ERR_INVALID, "ROCKE_LINKER='%s' is not a linker (legal: auto (default), internal, lld)", v);
    return RK_OK;
}

/* ld.lld for the AMD link step: required by ROCKE_LINKER=lld; for auto only
 * the fallback, so its absence is no failure (the in-process linker handles
 * rocke's objects); not looked up for internal. `what` prefixes the report. */
static cc_found find_lld(cc_toolchain *tc, const char *what, rk_buf *tried) {
    if (tc->linker == CC_LINK_INTERNAL) return CC_FOUND;
    rk_buf lt;
    rk_buf_init(&lt);
    cc_found f = cc_find_tool("ROCKE_LLD", lld_names, llvm_bin_dirs, tc->lld, &lt);
    if (f == CC_ABSENT && tc->linker == CC_LINK_AUTO) {
        cc_debug("no ld.lld (tried %s): linking with the internal linker only", rk_buf_cstr(&lt));
        f = CC_FOUND;
    } else if (f != CC_FOUND) {
        rk_buf_printf(tried, "%s no ld.lld to link the HSACO%s: tried %s", what,
                      tc->linker == CC_LINK_LLD ? " (ROCKE_LINKER=lld)" : "", rk_buf_cstr(&lt));
    }
    rk_buf_free(&lt);
    return f;
}

static cc_found probe_llvm(cc_toolchain *tc, const rk_target *t, rk_buf *tried) {
    cc_found f = find_libllvm(tc->lib, tried);
    if (f != CC_FOUND) return f;
    if (t->vendor == RK_VENDOR_AMD) {
        char what[RK_PATH_MAX + 32];
        snprintf(what, sizeof what, " -> found %.*s, but", RK_PATH_MAX, tc->lib);
        f = find_lld(tc, what, tried);
        if (f != CC_FOUND) return f;
    }
    tc->major = major_from_name(tc->lib);
    return CC_FOUND;
}

static cc_found probe_tools(cc_toolchain *tc, const rk_target *t, rk_buf *tried) {
    cc_found f = cc_find_tool("ROCKE_LLC", llc_names, llvm_bin_dirs, tc->llc, tried);
    f = both(f, cc_find_tool("ROCKE_OPT", opt_names, llvm_bin_dirs, tc->opt, tried));
    if (t->vendor == RK_VENDOR_AMD) f = both(f, find_lld(tc, ",", tried));
    if (f == CC_FOUND) tc->major = major_from_name(tc->llc);
    return f;
}

/* Paths plus size, mtime and inode of each file the toolchain uses: a
 * rebuilt or upgraded compiler changes the cache key without being loaded. */
static void add_identity(rk_buf *b, const char *role, const char *path) {
    struct stat st;
    if (!path[0]) return;
    if (stat(path, &st) != 0) memset(&st, 0, sizeof st);
    rk_buf_printf(b, "%s=%s:%lld:%lld.%09ld:%llu;", role, path, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                  st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
}

/* The AMD link step is part of it: "link=lld", "link=internal-vN" or
 * "link=auto+internal-vN" (the internal linker's version, then ld.lld's file
 * when it may be used). */
static void fill_identity(cc_toolchain *tc, bool amd) {
    rk_buf b;
    rk_buf_init(&b);
    rk_buf_printf(&b, "%s;", rk_toolchain_name(tc->kind));
    add_identity(&b, "lib", tc->lib);
    add_identity(&b, "opt", tc->opt);
    add_identity(&b, "llc", tc->llc);
    if (amd && tc->kind != RK_TOOLCHAIN_COMGR)
        rk_buf_printf(&b, "link=%s%s;", tc->linker == CC_LINK_LLD ? "lld" : tc->linker == CC_LINK_AUTO ? "auto+" : "",
                      tc->linker == CC_LINK_LLD ? "" : cc_amdgpu_link_id);
    add_identity(&b, "lld", tc->lld);
    add_identity(&b, "ptxas", tc->ptxas);
    snprintf(tc->identity, sizeof tc->identity, "%s", rk_buf_cstr(&b));
    rk_buf_free(&b);
}

/* ---- per-process memo: a lookup costs stats and, for comgr, failed
 * dlopen()s (milliseconds); its result only changes with the environment
 * variables that steer it, so it is reused while they are unchanged. ----- */
static const char *const steering_env[] = {"ROCKE_COMGR_LIB", "ROCM_PATH", "ROCM_HOME", "ROCKE_LLVM_LIB",
                                           "ROCKE_LLC", "ROCKE_OPT", "ROCKE_LLD", "ROCKE_LINKER", "ROCKE_PTXAS",
                                           "PATH", "LD_LIBRARY_PATH"};
typedef struct memo { bool valid; rk_toolchain want; rk_vendor vendor; uint64_t env; cc_toolchain tc; } memo;
static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;
static memo memos[8];

static uint64_t env_fingerprint(void) {
    uint64_t h = 0;
    for (unsigned i = 0; i < RK_COUNTOF(steering_env); i++) {
        const char *v = getenv(steering_env[i]);
        h = rk_hash_u64(v ? rk_hash_str(v) : 0x5eed, h + i);
    }
    return h;
}

static memo *memo_slot(rk_toolchain want, rk_vendor vendor) {
    return &memos[((unsigned)want * 2 + (vendor == RK_VENDOR_NVIDIA)) % RK_COUNTOF(memos)];
}

static rk_status resolve(rk_toolchain want, const rk_target *t, cc_toolchain *tc);

rk_status cc_toolchain_resolve(rk_toolchain want, const rk_target *t, cc_toolchain *tc) {
    uint64_t env = env_fingerprint();
    pthread_mutex_lock(&memo_mu);
    memo *m = memo_slot(want, t->vendor);
    bool hit = m->valid && m->want == want && m->vendor == t->vendor && m->env == env;
    if (hit) *tc = m->tc;
    pthread_mutex_unlock(&memo_mu);
    if (hit) return RK_OK;
    rk_status s = resolve(want, t, tc);
    if (s == RK_OK) {
        pthread_mutex_lock(&memo_mu);
        *m = (memo){.valid = true, .want = want, .vendor = t->vendor, .env = env, .tc = *tc};
        pthread_mutex_unlock(&memo_mu);
    }
    return s;
}

/* The lookup itself (see the table in docs/compile.md). */
static rk_status resolve(rk_toolchain want, const rk_target *t, cc_toolchain *tc) {
    memset(tc, 0, sizeof *tc);
    bool amd = t->vendor == RK_VENDOR_AMD;
    cc_linker linker;
    if (linker_from_env(&linker) != RK_OK) return RK_ERR_INVALID;
    if (want == RK_TOOLCHAIN_NONE)
        return rk_fail(RK_ERR_TOOLCHAIN, "toolchain none (ROCKE_TOOLCHAIN=none): compiling is off, kernels for %s "
                       "come from the cache only", t->name);
    rk_toolchain order[3];
    int n = 0;
    if (want == RK_TOOLCHAIN_AUTO) {
        if (amd) order[n++] = RK_TOOLCHAIN_COMGR;
        order[n++] = RK_TOOLCHAIN_LLVM;
        order[n++] = RK_TOOLCHAIN_TOOLS;
    } else {
        order[n++] = want;
    }
    rk_buf all;
    rk_buf_init(&all);
    cc_found f = CC_ABSENT;
    for (int i = 0; i < n && f != CC_BAD_OVERRIDE; i++) {
        rk_buf tried;
        rk_buf_init(&tried);
        memset(tc, 0, sizeof *tc);
        tc->kind = order[i];
        tc->linker = linker;
        switch (order[i]) {
        case RK_TOOLCHAIN_COMGR: f = cc_comgr_find(tc, &tried); break;
        case RK_TOOLCHAIN_LLVM: f = probe_llvm(tc, t, &tried); break;
        case RK_TOOLCHAIN_TOOLS: f = probe_tools(tc, t, &tried); break;
        case RK_TOOLCHAIN_AUTO:
        case RK_TOOLCHAIN_NONE: rk_bug("AUTO / NONE is not a toolchain");
        }
        if (f == CC_FOUND && !amd &&
            cc_find_tool("ROCKE_PTXAS", ptxas_names, ptxas_dirs, tc->ptxas, &tried) == CC_BAD_OVERRIDE)
            f = CC_BAD_OVERRIDE;
        if (f == CC_FOUND) {
            fill_identity(tc, amd);
            if (all.len) cc_debug("toolchain %s chosen after: %s", rk_toolchain_name(tc->kind), rk_buf_cstr(&all));
            rk_buf_free(&tried);
            rk_buf_free(&all);
            return RK_OK;
        }
        rk_buf_printf(&all, "%s%s: %s", all.len ? "; " : "", rk_toolchain_name(order[i]), rk_buf_cstr(&tried));
        rk_buf_free(&tried);
    }
    if (f == CC_BAD_OVERRIDE) {
        rk_status s = rk_fail(RK_ERR_TOOLCHAIN, "toolchain for %s: an override is set but unusable (%s); "
                              "fix or unset it", t->name, rk_buf_cstr(&all));
        rk_buf_free(&all);
        memset(tc, 0, sizeof *tc);
        tc->bad_override = true;
        return s;
    }
    static const char *const hint[] = {
        [RK_TOOLCHAIN_AUTO] = "install llvm-22 and lld-22 (scripts/install-deps.sh) or ROCm 6/7",
        [RK_TOOLCHAIN_COMGR] = "install ROCm 6/7 or set ROCKE_COMGR_LIB to libamd_comgr.so",
        [RK_TOOLCHAIN_LLVM] = "install llvm-22 and lld-22 or set ROCKE_LLVM_LIB and ROCKE_LLD "
                              "(ld.lld is needed only with ROCKE_LINKER=lld)",
        [RK_TOOLCHAIN_TOOLS] = "install llvm-22 and lld-22 or set ROCKE_LLC, ROCKE_OPT and ROCKE_LLD "
                               "(ld.lld is needed only with ROCKE_LINKER=lld)",
        [RK_TOOLCHAIN_NONE] = ""};
    rk_status s = rk_fail(RK_ERR_TOOLCHAIN, "no %s toolchain for %s found (tried %s); %s%s",
                          want == RK_TOOLCHAIN_AUTO ? "usable" : rk_toolchain_name(want), t->name, rk_buf_cstr(&all),
                          hint[want],
                          amd && linker == CC_LINK_LLD ? ", or unset ROCKE_LINKER (the internal linker needs no ld.lld)"
                                                       : "");
    rk_buf_free(&all);
    memset(tc, 0, sizeof *tc);
    return s;
}

rk_status cc_toolchain_version(cc_toolchain *tc) {
    rk_status s = RK_OK;
    if (tc->major) return s;
    if (tc->kind == RK_TOOLCHAIN_LLVM) {
        const cc_llvm *L;
        s = cc_llvm_load(tc->lib, &L);
        if (s == RK_OK) cc_llvm_version(L, &tc->major, &tc->minor, &tc->patch);
    } else if (tc->kind == RK_TOOLCHAIN_TOOLS) {
        s = cc_tool_llvm_version(tc->llc, &tc->major, &tc->minor, &tc->patch);
        if (s == RK_OK && tc->major < 20)
            s = rk_fail(RK_ERR_TOOLCHAIN, "'%s' is LLVM %u.%u.%u; rocke needs LLVM >= 20 (set ROCKE_LLC)", tc->llc,
                        tc->major, tc->minor, tc->patch);
    } else {
        s = rk_fail(RK_ERR_TOOLCHAIN, "cannot tell the LLVM version inside '%s'; pass an explicit flavor "
                    "(--flavor or ROCKE_LLVM_FLAVOR)", tc->lib);
    }
    if (s != RK_OK) return s;
    pthread_mutex_lock(&memo_mu); /* remember it with the lookup */
    for (unsigned i = 0; i < RK_COUNTOF(memos); i++)
        if (memos[i].valid && memos[i].tc.kind == tc->kind && !strcmp(memos[i].tc.lib, tc->lib) &&
            !strcmp(memos[i].tc.llc, tc->llc)) {
            memos[i].tc.major = tc->major;
            memos[i].tc.minor = tc->minor;
            memos[i].tc.patch = tc->patch;
        }
    pthread_mutex_unlock(&memo_mu);
    return s;
}
