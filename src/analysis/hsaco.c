/* rocke — HSACO metadata: the ELF note "AMDGPU" of type NT_AMDGPU_METADATA
 * (32) holds a msgpack map (amdhsa.target, amdhsa.kernels: one map per
 * kernel with .vgpr_count, .sgpr_count, ...), read with libelf and
 * msgpack-c; arch VGPRs come from the <kernel>.num_vgpr symbol the
 * assembler leaves in .symtab. Layer: analysis. */
#include <gelf.h>
#include <libelf.h>
#include <msgpack.h>
#include <stdio.h>

#include "rocke/analysis.h"
#include "../base/base_int.h"

#define NT_AMDGPU_METADATA 32

static bool str_is(const msgpack_object *o, const char *s) {
    size_t n = strlen(s);
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n && !memcmp(o->via.str.ptr, s, n);
}

static uint32_t as_u32(const msgpack_object *o) {
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) return o->via.u64 > UINT32_MAX ? UINT32_MAX : (uint32_t)o->via.u64;
    return 0;
}

static void copy_str(char *dst, size_t n, const msgpack_object *o) {
    size_t len = o->type == MSGPACK_OBJECT_STR ? o->via.str.size : 0;
    if (len >= n) len = n - 1;
    if (len) memcpy(dst, o->via.str.ptr, len);
    dst[len] = '\0';
}

static void read_kernel(const msgpack_object *m, rk_kernel_resources *k) {
    static const struct { const char *key; size_t off; } fields[] = {
        {".vgpr_count", offsetof(rk_kernel_resources, vgpr_count)},
        {".agpr_count", offsetof(rk_kernel_resources, agpr_count)},
        {".sgpr_count", offsetof(rk_kernel_resources, sgpr_count)},
        {".group_segment_fixed_size", offsetof(rk_kernel_resources, lds_bytes)},
        {".private_segment_fixed_size", offsetof(rk_kernel_resources, scratch_bytes)},
        {".vgpr_spill_count", offsetof(rk_kernel_resources, vgpr_spill_count)},
        {".sgpr_spill_count", offsetof(rk_kernel_resources, sgpr_spill_count)},
        {".kernarg_segment_size", offsetof(rk_kernel_resources, kernarg_size)},
        {".wavefront_size", offsetof(rk_kernel_resources, wavefront_size)},
        {".max_flat_workgroup_size", offsetof(rk_kernel_resources, max_flat_workgroup_size)},
    };
    for (uint32_t i = 0; i < m->via.map.size; i++) {
        const msgpack_object *key = &m->via.map.ptr[i].key, *val = &m->via.map.ptr[i].val;
        if (str_is(key, ".name")) copy_str(k->name, sizeof k->name, val);
        else if (str_is(key, ".uses_dynamic_stack"))
            k->uses_dynamic_stack = val->type == MSGPACK_OBJECT_BOOLEAN && val->via.boolean;
        else
            for (unsigned f = 0; f < RK_COUNTOF(fields); f++)
                if (str_is(key, fields[f].key)) *(uint32_t *)((char *)k + fields[f].off) = as_u32(val);
    }
}

static rk_status read_metadata(const char *desc, size_t n, rk_hsaco_info *out) {
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    rk_status s = RK_OK;
    if (msgpack_unpack_next(&u, desc, n, &off) != MSGPACK_UNPACK_SUCCESS || u.data.type != MSGPACK_OBJECT_MAP) {
        msgpack_unpacked_destroy(&u);
        return rk_fail(RK_ERR_PARSE, "the AMDGPU metadata note is not a msgpack map");
    }
    const msgpack_object *root = &u.data;
    for (uint32_t i = 0; i < root->via.map.size && s == RK_OK; i++) {
        const msgpack_object *key = &root->via.map.ptr[i].key, *val = &root->via.map.ptr[i].val;
        if (str_is(key, "amdhsa.target")) {
            copy_str(out->target, sizeof out->target, val);
        } else if (str_is(key, "amdhsa.kernels") && val->type == MSGPACK_OBJECT_ARRAY) {
            if (val->via.array.size > RK_HSACO_MAX_KERNELS)
                s = rk_fail(RK_ERR_UNSUPPORTED, "the code object has %u kernels; rocke reads at most %d",
                            val->via.array.size, RK_HSACO_MAX_KERNELS);
            for (uint32_t k = 0; s == RK_OK && k < val->via.array.size; k++)
                if (val->via.array.ptr[k].type == MSGPACK_OBJECT_MAP)
                    read_kernel(&val->via.array.ptr[k], &out->kernels[out->nkernels++]);
        }
    }
    msgpack_unpacked_destroy(&u);
    return s;
}

/* Scan every note section for the AMDGPU metadata. */
static rk_status find_note(Elf *e, rk_hsaco_info *out, bool *found) {
    Elf_Scn *scn = NULL;
    *found = false;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            const char *name = (const char *)d->d_buf + name_off;
            if (nh.n_type == NT_AMDGPU_METADATA && nh.n_namesz == 7 && !memcmp(name, "AMDGPU", 7)) {
                *found = true;
                return read_metadata((const char *)d->d_buf + desc_off, nh.n_descsz, out);
            }
        }
    }
    return RK_OK;
}

/* <kernel>.num_vgpr: the arch VGPRs before AGPRs are added in. */
static void read_symbols(Elf *e, rk_hsaco_info *out) {
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx != SHN_ABS) continue;
            const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
            const char *dot = nm ? strrchr(nm, '.') : NULL;
            if (!dot || strcmp(dot, ".num_vgpr")) continue;
            for (uint32_t k = 0; k < out->nkernels; k++)
                if (strlen(out->kernels[k].name) == (size_t)(dot - nm) &&
                    !strncmp(nm, out->kernels[k].name, (size_t)(dot - nm)))
                    out->kernels[k].arch_vgpr_count = (uint32_t)sym.st_value;
        }
    }
}

rk_status rk_analyze_hsaco(const void *data, size_t n, const rk_target *t_or_NULL, rk_hsaco_info *out) {
    if (!data || !out) return rk_fail(RK_ERR_INVALID, "rk_analyze_hsaco: NULL data or output");
    memset(out, 0, sizeof *out);
    elf_version(EV_CURRENT);
    Elf *e = elf_memory((char *)data, n);
    if (!e || elf_kind(e) != ELF_K_ELF) {
        if (e) elf_end(e);
        return rk_fail(RK_ERR_PARSE, "not an ELF file (%zu bytes): an HSACO is an AMDGPU ELF code object", n);
    }
    GElf_Ehdr eh;
    rk_status s = RK_OK;
    bool found = false;
    if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_AMDGPU)
        s = rk_fail(RK_ERR_PARSE, "not an AMDGPU code object (ELF machine %u, expected %u)",
                    gelf_getehdr(e, &eh) ? eh.e_machine : 0u, (unsigned)EM_AMDGPU);
    if (s == RK_OK) s = find_note(e, out, &found);
    if (s == RK_OK && !found)
        s = rk_fail(RK_ERR_PARSE, "the code object has no AMDGPU metadata note (code object v3+ expected)");
    if (s == RK_OK) read_symbols(e, out);
    elf_end(e);
    if (s != RK_OK) return s;
    const char *gfx = strstr(out->target, "--");
    snprintf(out->arch, sizeof out->arch, "%.31s", gfx ? gfx + 2 : out->target);
    out->arch[strcspn(out->arch, ":")] = '\0'; /* drop :sramecc+:xnack- */
    const rk_target *own = NULL;
    for (const rk_target *const *tp = rk_targets(); *tp; tp++)
        if (!strcmp((*tp)->cpu, out->arch) && (*tp)->vendor == RK_VENDOR_AMD) own = *tp;
    out->t = own ? own : t_or_NULL;
    for (uint32_t k = 0; out->t && k < out->nkernels; k++)
        out->kernels[k].has_occupancy =
            rk_occupancy_compute(out->t, &out->kernels[k], 0, &out->kernels[k].occ) == RK_OK;
    rk_clear_error();
    return RK_OK;
}
