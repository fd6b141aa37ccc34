/* rocke — compile options: defaults per target, environment overrides
 * (ROCKE_TOOLCHAIN, ROCKE_LLVM_FLAVOR, ROCKE_CACHE, ROCKE_CACHE_DIR,
 * ROCKE_COMPILE_INPROCESS) and the one validation. Layer: compile. */
#include <stdio.h>
#include <stdlib.h>

#include "compile_int.h"

static const char *const tc_names[] = {"auto", "comgr", "llvm", "tools", "none"};
static const cc_name_bit dump_names[] = {{"llir", RK_DUMP_LLIR}, {"isa", RK_DUMP_ISA}, {"ptx", RK_DUMP_PTX}};

const char *rk_toolchain_name(rk_toolchain tc) {
    return (unsigned)tc < RK_COUNTOF(tc_names) ? tc_names[tc] : "?";
}

rk_status rk_toolchain_parse(const char *s, rk_toolchain *out) {
    for (unsigned i = 0; s && i < RK_COUNTOF(tc_names); i++)
        if (!strcmp(s, tc_names[i])) { *out = (rk_toolchain)i; return RK_OK; }
    return rk_fail(RK_ERR_INVALID, "unknown toolchain '%s' (legal: auto (default), comgr, llvm, tools, none)",
                   s ? s : "");
}

rk_status cc_names_parse(const char *s, const cc_name_bit *names, unsigned n, const char *what, uint32_t *out) {
    *out = 0;
    const char *p = s ? s : "";
    while (*p) {
        size_t len = strcspn(p, ",");
        bool found = false;
        for (unsigned i = 0; i < n; i++)
            if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len)) {
                *out |= names[i].bit;
                found = true;
            }
        if (!found) {
            char legal[256];
            size_t off = 0;
            for (unsigned i = 0; i < n && off < sizeof legal; i++)
                off += (size_t)snprintf(legal + off, sizeof legal - off, "%s%s", i ? ", " : "", names[i].name);
            return rk_fail(RK_ERR_INVALID, "unknown %s '%.*s' (legal: %s)", what, (int)len, p, legal);
        }
        p += len;
        if (*p == ',') p++;
    }
    return RK_OK;
}

rk_status rk_dump_parse(const char *s, uint32_t *out) {
    return cc_names_parse(s, dump_names, RK_COUNTOF(dump_names), "dump stage", out);
}

static rk_status default_cache_dir(char out[RK_PATH_MAX]) {
    const char *env = getenv("ROCKE_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (env && *env) n = snprintf(out, RK_PATH_MAX, "%s", env);
    else if (xdg && *xdg) n = snprintf(out, RK_PATH_MAX, "%s/rocke", xdg);
    else if (home && *home) n = snprintf(out, RK_PATH_MAX, "%s/.cache/rocke", home);
    else n = snprintf(out, RK_PATH_MAX, "%s", "");
    if (n < 0 || n >= RK_PATH_MAX) {
        /* a cache problem only costs the caching (docs/compile.md §6) */
        rk_log(RK_LOG_WARNING, "the cache folder '%.40s...' is longer than %d characters: compiling without the cache",
               out, RK_PATH_MAX - 1);
        out[0] = '\0';
    }
    return RK_OK;
}

rk_status rk_compile_options_default(const rk_target *t, rk_compile_options *o) {
    if (!t || !o) return rk_fail(RK_ERR_INVALID, "rk_compile_options_default: NULL target or options");
    memset(o, 0, sizeof *o);
    o->opt_level = 3;
    o->toolchain = RK_TOOLCHAIN_AUTO;
    o->cache = true;
    const char *tc = getenv("ROCKE_TOOLCHAIN");
    if (tc && *tc && rk_toolchain_parse(tc, &o->toolchain) != RK_OK)
        return rk_fail(RK_ERR_INVALID, "ROCKE_TOOLCHAIN: %s", rk_error_message());
    const char *fl = getenv("ROCKE_LLVM_FLAVOR");
    if (fl && *fl) {
        if (rk_llvm_flavor_parse(fl, &o->flavor) != RK_OK)
            return rk_fail(RK_ERR_INVALID, "ROCKE_LLVM_FLAVOR: %s", rk_error_message());
        o->flavor_set = true;
    }
    const char *c = getenv("ROCKE_CACHE");
    if (c && *c) {
        if (!strcmp(c, "0")) o->cache = false;
        else if (strcmp(c, "1"))
            return rk_fail(RK_ERR_INVALID, "ROCKE_CACHE='%s' (legal: 0 = off, 1 = on (default))", c);
    }
    const char *ip = getenv("ROCKE_COMPILE_INPROCESS");
    if (ip && *ip) {
        if (!strcmp(ip, "1")) o->inprocess = true;
        else if (strcmp(ip, "0"))
            return rk_fail(RK_ERR_INVALID, "ROCKE_COMPILE_INPROCESS='%s' (legal: 0 (default), 1)", ip);
    }
    return default_cache_dir(o->cache_dir);
}

rk_status cc_options_validate(const rk_compile_options *o, const rk_target *t) {
    if (o->opt_level > 3) return rk_fail(RK_ERR_INVALID, "opt level %u (legal: 0..3)", o->opt_level);
    if ((unsigned)o->toolchain >= RK_COUNTOF(tc_names))
        return rk_fail(RK_ERR_INVALID, "toolchain %d (legal: auto, comgr, llvm, tools, none)", (int)o->toolchain);
    if (o->flavor_set && o->flavor != RK_LLVM20 && o->flavor != RK_LLVM22 && o->flavor != RK_LLVM23)
        return rk_fail(RK_ERR_INVALID, "LLVM flavor %d (legal: %s)", (int)o->flavor, rk_llvm_flavor_names());
    if (o->dump & ~(uint32_t)(RK_DUMP_LLIR | RK_DUMP_ISA | RK_DUMP_PTX))
        return rk_fail(RK_ERR_INVALID, "dump mask 0x%x (legal: llir, isa, ptx)", o->dump);
    if (!memchr(o->cache_dir, '\0', sizeof o->cache_dir))
        return rk_fail(RK_ERR_INVALID, "cache directory is not NUL-terminated");
    if (o->dump_after & ~(uint32_t)RK_AFTER_ALL)
        return rk_fail(RK_ERR_INVALID, "dump-after mask 0x%x (legal: RK_AFTER_* bits)", o->dump_after);
    if (!memchr(o->dump_dir, '\0', sizeof o->dump_dir) || (o->dump_after && !o->dump_dir[0]))
        return rk_fail(RK_ERR_INVALID, "dump-after needs a dump folder (dump_dir, --dump-dir DIR)");
    if (t->vendor == RK_VENDOR_NVIDIA && o->toolchain == RK_TOOLCHAIN_COMGR)
        return rk_fail(RK_ERR_INVALID, "toolchain comgr compiles AMD targets only, not %s (legal: auto, llvm, tools)",
                       t->name);
    if (t->vendor == RK_VENDOR_AMD && (o->dump & RK_DUMP_PTX))
        return rk_fail(RK_ERR_INVALID, "--dump=ptx needs an NVIDIA target, not %s (legal for AMD: llir, isa)",
                       t->name);
    if (t->vendor == RK_VENDOR_NVIDIA && (o->dump & RK_DUMP_ISA))
        return rk_fail(RK_ERR_INVALID, "--dump=isa needs an AMD target, not %s (legal for NVIDIA: llir, ptx)",
                       t->name);
    return RK_OK;
}
