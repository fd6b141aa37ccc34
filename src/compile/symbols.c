/* rocke — output checks: the HSACO, PTX or cubin defines exactly the kernel
 * that was asked for (a renamed or missing kernel otherwise surfaces only
 * at launch as "named symbol not found"). Layer: compile. */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>

#include "compile_int.h"

/* Global function symbols of an ELF image, comma-separated into names;
 * sets *has_kd when "<kernel>.kd" is defined. */
static rk_status elf_functions(const cc_blob *b, const char *what, const char *kernel, rk_buf *names, int *nfunc,
                               bool *found, bool *has_kd) {
    *nfunc = 0;
    *found = *has_kd = false;
    elf_version(EV_CURRENT);
    Elf *e = elf_memory((char *)b->data, b->size);
    if (!e || elf_kind(e) != ELF_K_ELF) {
        if (e) elf_end(e);
        return rk_fail(RK_ERR_TOOLCHAIN, "the %s is not an ELF file (%zu bytes)", what, b->size);
    }
    size_t kdlen = strlen(kernel);
    Elf_Scn *scn = NULL;
    bool dyn = false;
    while ((scn = elf_nextscn(e, scn))) { /* prefer .dynsym: what the loader sees */
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM) dyn = true;
    }
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != (dyn ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        /* the data's size, not the header's claim: bounded by the file */
        size_t n = d ? d->d_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF) continue;
            int bind = GELF_ST_BIND(sym.st_info), type = GELF_ST_TYPE(sym.st_info);
            if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
            const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
            if (!nm) continue;
            /* ptxas adds device helpers it names "$__internal_..." (e.g. the IEEE
             * reciprocal slow path): not kernels, not callable from the host */
            if (type == STT_FUNC && nm[0] == '$') continue;
            if (type == STT_FUNC) {
                rk_buf_printf(names, "%s'%s'", names->len ? ", " : "", nm);
                (*nfunc)++;
                if (!strcmp(nm, kernel)) *found = true;
            } else if (type == STT_OBJECT && !strncmp(nm, kernel, kdlen) && !strcmp(nm + kdlen, ".kd")) {
                *has_kd = true;
            }
        }
    }
    elf_end(e);
    return RK_OK;
}

static rk_status check_elf(const cc_blob *b, const char *what, const char *kernel, bool need_kd) {
    rk_buf names;
    rk_buf_init(&names);
    int n;
    bool found, kd;
    rk_status s = elf_functions(b, what, kernel, &names, &n, &found, &kd);
    if (s == RK_OK && (!found || n != 1))
        s = rk_fail(RK_ERR_TOOLCHAIN, "the %s should define exactly the kernel '%s' but defines %s", what, kernel,
                    n ? rk_buf_cstr(&names) : "no function");
    else if (s == RK_OK && need_kd && !kd)
        s = rk_fail(RK_ERR_TOOLCHAIN, "the %s lacks the kernel descriptor '%s.kd'", what, kernel);
    rk_buf_free(&names);
    return s;
}

rk_status cc_check_hsaco(const cc_blob *hsaco, const char *kernel) { return check_elf(hsaco, "HSACO", kernel, true); }

rk_status cc_check_cubin(const cc_blob *cubin, const char *kernel) { return check_elf(cubin, "cubin", kernel, false); }

/* PTX: count ".entry NAME(" directives. */
rk_status cc_check_ptx(const cc_blob *ptx, const char *kernel) {
    const char *p = (const char *)ptx->data;
    int n = 0;
    bool found = false;
    rk_buf names;
    rk_buf_init(&names);
    while (p && (p = strstr(p, ".entry "))) {
        p += 7;
        while (*p == ' ' || *p == '\t') p++;
        size_t len = strcspn(p, "( \t\n");
        rk_buf_printf(&names, "%s'%.*s'", n ? ", " : "", (int)len, p);
        if (len == strlen(kernel) && !strncmp(p, kernel, len)) found = true;
        n++;
    }
    rk_status s = RK_OK;
    if (!found || n != 1)
        s = rk_fail(RK_ERR_TOOLCHAIN, "the PTX should define exactly the kernel '%s' but defines %s", kernel,
                    n ? rk_buf_cstr(&names) : "no .entry");
    rk_buf_free(&names);
    return s;
}

/* Every check a fresh compile makes of its output, in one place, so a cache
 * hit is held to exactly the same rules as a miss: the binary (and the
 * cubin, when there is one) defines exactly `kernel`. */
rk_status cc_check_output(const cc_output *out, const rk_target *t, const char *kernel) {
    if (t->vendor == RK_VENDOR_AMD) {
        if (out->cubin.size) return rk_fail(RK_ERR_TOOLCHAIN, "an AMD code object came with a cubin");
        return cc_check_hsaco(&out->binary, kernel);
    }
    rk_status s = cc_check_ptx(&out->binary, kernel);
    if (s == RK_OK && out->cubin.size) s = cc_check_cubin(&out->cubin, kernel);
    return s;
}
