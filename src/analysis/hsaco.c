/* rocke — HSACO metadata: the ELF note "AMDGPU" of type NT_AMDGPU_METADATA
 * (32) holds a msgpack map (amdhsa.target, amdhsa.kernels: one map per
 * kernel with .vgpr_count, .sgpr_count, ...), read with libelf and
 * msgpack-c; arch VGPRs come from the <kernel>.num_vgpr symbol the
 * assembler leaves in .symtab. Every count and length read from the file is
 * bounded by the bytes that hold it before anything is allocated for it
 * (msgpack-c sizes its zone from container counts). Layer: analysis. */
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

/* Big-endian field of w bytes at *at, advancing; false past the end. */
static bool take_be(const uint8_t *p, size_t n, size_t *at, unsigned w, uint64_t *v) {
    if (w > n - *at) return false;
    *v = 0;
    for (unsigned i = 0; i < w; i++) *v = *v << 8 | p[(*at)++];
    return true;
}

/* Walk one msgpack object without building it: every string, binary and
 * extension length must lie inside the n bytes, and every container count
 * must fit in what is left (each element takes at least one byte), so the
 * unpacker allocates at most a small multiple of n. */
static rk_status check_msgpack_bounds(const uint8_t *p, size_t n) {
    size_t at = 0;
    uint64_t pending = 1; /* objects still to read */
    while (pending) {
        if (at >= n) return rk_fail(RK_ERR_PARSE, "the AMDGPU metadata note ends inside its msgpack data (%zu bytes)", n);
        uint8_t b = p[at++];
        pending--;
        uint64_t len = 0, items = 0;
        unsigned w = 0;     /* width of a length field that follows */
        unsigned fixed = 0; /* payload bytes of fixed size */
        bool ok = true, is_map = false, counted = false;
        if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
        } else if ((b & 0xf0) == 0x80) {
            items = 2u * (b & 15u);
        } else if ((b & 0xf0) == 0x90) {
            items = b & 15u;
        } else if ((b & 0xe0) == 0xa0) {
            len = b & 31u;
        } else {
            switch (b) {
            case 0xc4: case 0xd9: w = 1; break;                 /* bin8, str8 */
            case 0xc5: case 0xda: w = 2; break;                 /* bin16, str16 */
            case 0xc6: case 0xdb: w = 4; break;                 /* bin32, str32 */
            case 0xc7: w = 1; fixed = 1; break;                 /* ext8: length, type */
            case 0xc8: w = 2; fixed = 1; break;
            case 0xc9: w = 4; fixed = 1; break;
            case 0xca: fixed = 4; break;                        /* float32 */
            case 0xcb: fixed = 8; break;                        /* float64 */
            case 0xcc: case 0xd0: fixed = 1; break;             /* (u)int8 */
            case 0xcd: case 0xd1: fixed = 2; break;
            case 0xce: case 0xd2: fixed = 4; break;
            case 0xcf: case 0xd3: fixed = 8; break;
            case 0xd4: fixed = 2; break;                        /* fixext 1, 2, 4, 8, 16 (+ type) */
            case 0xd5: fixed = 3; break;
            case 0xd6: fixed = 5; break;
            case 0xd7: fixed = 9; break;
            case 0xd8: fixed = 17; break;
            case 0xdc: w = 2; counted = true; break;            /* array16 */
            case 0xdd: w = 4; counted = true; break;            /* array32 */
            case 0xde: w = 2; counted = true; is_map = true; break;
            case 0xdf: w = 4; counted = true; is_map = true; break;
            default: ok = false; break;                         /* 0xc1: never used */
            }
        }
        if (!ok) return rk_fail(RK_ERR_PARSE, "the AMDGPU metadata note holds the unused msgpack byte 0x%02x at %zu",
                                b, at - 1);
        if (w && !take_be(p, n, &at, w, counted ? &items : &len))
            return rk_fail(RK_ERR_PARSE, "the AMDGPU metadata note ends inside a msgpack length (%zu bytes)", n);
        if (is_map) items *= 2;
        len += fixed;
        if (len > n - at)
            return rk_fail(RK_ERR_PARSE, "the AMDGPU metadata note declares a %llu-byte msgpack item at offset %zu, "
                           "past its end (%zu bytes)", (unsigned long long)len, at, n);
        at += (size_t)len;
        if (items > n - at || pending + items > n - at)
            return rk_fail(RK_ERR_PARSE, "the AMDGPU metadata note declares %llu msgpack elements at offset %zu but "
                           "only %zu bytes follow", (unsigned long long)items, at, n - at);
        pending += items;
    }
    return RK_OK;
}

static rk_status read_metadata(const char *desc, size_t n, rk_hsaco_info *out) {
    rk_status bounds = check_msgpack_bounds((const uint8_t *)desc, n);
    if (bounds != RK_OK) return bounds;
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
            if (name_off > d->d_size || nh.n_namesz > d->d_size - name_off || desc_off > d->d_size ||
                nh.n_descsz > d->d_size - desc_off)
                return rk_fail(RK_ERR_PARSE, "a note overruns its %zu-byte section", d->d_size);
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
        /* the data's size, not the header's claim: bounded by the file */
        size_t n = d ? d->d_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
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
