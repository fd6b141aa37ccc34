/* rocke — the in-process AMDGPU linker: the relocatable object LLVM's AMDGPU
 * codegen writes for one kernel becomes the shared object (HSACO) that
 * `ld.lld -shared kernel.o` writes for it, byte for byte (the .comment text
 * aside, which names the linker), without starting a process. It handles
 * exactly the shape of those objects and answers RK_ERR_UNSUPPORTED, naming
 * what it met, for anything else, so the caller can fall back to ld.lld;
 * a damaged object is RK_ERR_INVALID. Layout facts: docs/compile.md §8.
 * Layer: compile. */
#include <elf.h>
#include <stdarg.h>
#include <stdio.h>

#include "compile_int.h"

/* Not in every <elf.h>. */
#define OSABI_AMDGPU_HSA 64
#define R_AMDGPU_REL64 5

/* ld.lld's page sizes for AMDGPU (max = common = 4 KiB). */
#define PAGE 0x1000u
#define EHDR_SIZE 64u
#define PHDR_SIZE 56u
#define SHDR_SIZE 64u
#define SYM_SIZE 24u
#define RELA_SIZE 24u
#define DYN_SIZE 16u
#define N_PHDR 8u
#define N_DYN 7u          /* SYMTAB SYMENT STRTAB STRSZ GNU_HASH HASH NULL */
#define GNU_SHIFT2 26u    /* .gnu.hash bloom filter's second hash shift (ELF64) */
#define MAX_SECTIONS 32u  /* ours have 9; more is surely not ours */
#define MAX_SYMBOLS 4096u /* ours have about 11; the name check is pairwise */

/* Bump when the file written for the same object changes: the version is
 * part of the toolchain identity, hence of the compile cache key. */
#define LINK_VERSION "1"
const char cc_amdgpu_link_id[] = "internal-v" LINK_VERSION;
const char cc_amdgpu_link_comment[] = "Linker: rocke amdgpu_link " LINK_VERSION;

/* ---- little-endian access (the file is ELFDATA2LSB, checked first) ------- */
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr16(uint8_t *p, uint64_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint64_t v) { wr16(p, v); wr16(p + 2, v >> 16); }
static void wr64(uint8_t *p, uint64_t v) { wr32(p, v); wr32(p + 4, v >> 32); }

static uint64_t align_up(uint64_t v, uint64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }
/* The smallest value >= v that is congruent to `to` modulo the page. */
static uint64_t congruent(uint64_t v, uint64_t to) { return v + ((to - v) & (PAGE - 1)); }

#if defined(__GNUC__)
#define CC_PRINTF __attribute__((format(printf, 1, 2)))
#else
#define CC_PRINTF
#endif

static rk_status invalid(const char *fmt, ...) CC_PRINTF;
static rk_status unsupported(const char *fmt, ...) CC_PRINTF;

static rk_status invalid(const char *fmt, ...) {
    char m[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return rk_fail(RK_ERR_INVALID, "not a valid AMDGPU relocatable object: %s", m);
}

static rk_status unsupported(const char *fmt, ...) {
    char m[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return rk_fail(RK_ERR_UNSUPPORTED, "the internal AMDGPU linker does not handle this object: %s", m);
}

/* ---- reading the object ------------------------------------------------------ */
typedef struct sec {
    const char *name;
    uint32_t type, link, info;
    uint64_t flags, addr, off, size, align, entsize;
} sec;

/* Input section roles; the object must have each of the first six once. */
enum { S_TEXT, S_RODATA, S_RELA, S_NOTE, S_SYMTAB, S_STRTAB, S_GPRMAX, S_STACK, S__COUNT };
static const struct role {
    const char *name;
    uint32_t type;
    uint64_t flags;
    bool required, empty;
} roles[S__COUNT] = {
    [S_TEXT] = {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, true, false},
    [S_RODATA] = {".rodata", SHT_PROGBITS, SHF_ALLOC, true, false},
    [S_RELA] = {".rela.rodata", SHT_RELA, SHF_INFO_LINK, true, false},
    [S_NOTE] = {".note", SHT_NOTE, SHF_ALLOC, true, false},
    [S_SYMTAB] = {".symtab", SHT_SYMTAB, 0, true, false},
    [S_STRTAB] = {".strtab", SHT_STRTAB, 0, true, false},
    /* kept by ld.lld as an empty non-alloc section; absent in older LLVMs */
    [S_GPRMAX] = {".AMDGPU.gpr_maximums", SHT_PROGBITS, 0, false, true},
    /* consumed by ld.lld (the stack is never executable) */
    [S_STACK] = {".note.GNU-stack", SHT_PROGBITS, 0, false, true},
};

typedef struct obj {
    const uint8_t *p;
    size_t n;
    uint32_t nsec;
    sec s[MAX_SECTIONS];
    int at[S__COUNT];         /* section index per role, 0 = absent */
    uint32_t nsym, nlocal;    /* symbol table entries; locals (incl. the null one) */
    uint32_t func, kd;        /* symbol indices of the kernel and its descriptor */
    size_t local_names;       /* bytes of the local names (with NULs) */
} obj;

static const uint8_t *sym_at(const obj *o, uint32_t i) {
    return o->p + o->s[o->at[S_SYMTAB]].off + (size_t)i * SYM_SIZE;
}

/* A NUL-terminated string at offset `at` of string section si, or NULL. */
static const char *str_at(const obj *o, uint32_t si, uint64_t at) {
    const sec *s = &o->s[si];
    if (at >= s->size) return NULL;
    const char *b = (const char *)o->p + s->off + at;
    return memchr(b, 0, s->size - at) ? b : NULL;
}

static const char *sym_name(const obj *o, uint32_t i) { return str_at(o, o->at[S_STRTAB], rd32(sym_at(o, i))); }

static rk_status read_header(obj *o) {
    const uint8_t *p = o->p;
    if (o->n < EHDR_SIZE) return invalid("%zu bytes, shorter than an ELF header", o->n);
    if (memcmp(p, ELFMAG, SELFMAG)) return invalid("no ELF magic");
    if (p[EI_CLASS] != ELFCLASS64 || p[EI_DATA] != ELFDATA2LSB || p[EI_VERSION] != EV_CURRENT)
        return invalid("not a little-endian ELF64 file (class %u, data %u, version %u)", p[EI_CLASS], p[EI_DATA],
                       p[EI_VERSION]);
    if (rd16(p + 18) != EM_AMDGPU) return invalid("e_machine is %u, not EM_AMDGPU (224)", rd16(p + 18));
    if (rd16(p + 16) != ET_REL) return invalid("e_type is %u, not ET_REL (a relocatable object)", rd16(p + 16));
    if (p[EI_OSABI] != OSABI_AMDGPU_HSA) return unsupported("OS/ABI %u (only AMDGPU HSA, 64)", p[EI_OSABI]);
    /* HSA code object v2..v6 are ABI versions 0..4, the ones ld.lld knows */
    if (p[EI_ABIVERSION] > 4) return unsupported("ELF ABI version %u (HSA code objects use 0..4)", p[EI_ABIVERSION]);
    if (rd16(p + 56) || rd64(p + 24)) return unsupported("program headers or an entry point in an object");
    uint64_t shoff = rd64(p + 40);
    uint32_t shnum = rd16(p + 60), shstrndx = rd16(p + 62);
    if (rd16(p + 58) != SHDR_SIZE) return invalid("section header size %u, not 64", rd16(p + 58));
    if (shnum == 0 || shnum > MAX_SECTIONS) return unsupported("%u sections", shnum);
    if (shoff > o->n || (o->n - shoff) / SHDR_SIZE < shnum)
        return invalid("the section header table (offset %llu, %u entries) lies past the end of the %zu-byte file",
                       (unsigned long long)shoff, shnum, o->n);
    if (shstrndx == 0 || shstrndx >= shnum) return invalid("section name table index %u out of range", shstrndx);
    o->nsec = shnum;
    for (uint32_t i = 0; i < shnum; i++) {
        const uint8_t *h = p + shoff + (size_t)i * SHDR_SIZE;
        sec *s = &o->s[i];
        *s = (sec){.type = rd32(h + 4), .flags = rd64(h + 8), .addr = rd64(h + 16), .off = rd64(h + 24),
                   .size = rd64(h + 32), .link = rd32(h + 40), .info = rd32(h + 44), .align = rd64(h + 48),
                   .entsize = rd64(h + 56)};
        if (s->type != SHT_NOBITS && (s->off > o->n || s->size > o->n - s->off))
            return invalid("section %u (offset %llu, %llu bytes) lies past the end of the %zu-byte file", i,
                           (unsigned long long)s->off, (unsigned long long)s->size, o->n);
        if (s->align & (s->align - 1)) return invalid("section %u has alignment %llu, not a power of two", i,
                                                      (unsigned long long)s->align);
    }
    if (o->s[shstrndx].type != SHT_STRTAB) return invalid("the section name table is not a string table");
    for (uint32_t i = 0; i < shnum; i++) {
        o->s[i].name = str_at(o, shstrndx, rd32(p + shoff + (size_t)i * SHDR_SIZE));
        if (!o->s[i].name) return invalid("section %u has no name in the section name table", i);
    }
    const sec *z = &o->s[0];
    if (z->type || z->flags || z->size || z->link || z->info || z->name[0])
        return unsupported("a non-null section 0 (extended numbering)");
    return RK_OK;
}

/* Give every section a role; anything else is refused by name. */
static rk_status classify(obj *o) {
    for (uint32_t i = 1; i < o->nsec; i++) {
        const sec *s = &o->s[i];
        int r = 0;
        while (r < S__COUNT && strcmp(s->name, roles[r].name)) r++;
        if (r == S__COUNT || s->type != roles[r].type || s->flags != roles[r].flags)
            return unsupported("section '%s' (type 0x%x, flags 0x%llx)", s->name, s->type,
                               (unsigned long long)s->flags);
        if (o->at[r]) return unsupported("two '%s' sections", s->name);
        if (roles[r].empty && s->size) return unsupported("a non-empty '%s' section (%llu bytes)", s->name,
                                                          (unsigned long long)s->size);
        if (s->addr) return invalid("section '%s' has an address in a relocatable object", s->name);
        o->at[r] = (int)i;
    }
    for (int r = 0; r < S__COUNT; r++)
        if (roles[r].required && !o->at[r]) return unsupported("no '%s' section", roles[r].name);
    const sec *text = &o->s[o->at[S_TEXT]], *ro = &o->s[o->at[S_RODATA]], *st = &o->s[o->at[S_SYMTAB]];
    const sec *rela = &o->s[o->at[S_RELA]];
    if (text->entsize || ro->entsize || o->s[o->at[S_NOTE]].entsize ||
        (o->at[S_GPRMAX] && o->s[o->at[S_GPRMAX]].entsize))
        return unsupported("a section with an entry size");
    if (o->at[S_GPRMAX] && o->s[o->at[S_GPRMAX]].align > PAGE)
        return unsupported("section '.AMDGPU.gpr_maximums' aligned to %llu bytes",
                           (unsigned long long)o->s[o->at[S_GPRMAX]].align);
    for (int r = S_TEXT; r <= S_NOTE; r++)
        if (r != S_RELA && (o->s[o->at[r]].align < 1 || o->s[o->at[r]].align > PAGE))
            return unsupported("section '%s' aligned to %llu bytes", roles[r].name,
                               (unsigned long long)o->s[o->at[r]].align);
    if (st->entsize != SYM_SIZE || st->size % SYM_SIZE || st->link != (uint32_t)o->at[S_STRTAB])
        return invalid("malformed .symtab header (entry size %llu, %llu bytes, link %u)",
                       (unsigned long long)st->entsize, (unsigned long long)st->size, st->link);
    if (rela->entsize != RELA_SIZE || rela->size % RELA_SIZE || rela->link != (uint32_t)o->at[S_SYMTAB] ||
        rela->info != (uint32_t)o->at[S_RODATA])
        return invalid("malformed .rela.rodata header (entry size %llu, link %u, info %u)",
                       (unsigned long long)rela->entsize, rela->link, rela->info);
    return RK_OK;
}

/* Locals: the null symbol, then absolute NOTYPE ones (the assembler's
 * register counts). Globals: the kernel (a protected function in .text) and
 * "<kernel>.kd" (its descriptor, an object in .rodata), nothing else. */
static rk_status read_symbols(obj *o) {
    const sec *st = &o->s[o->at[S_SYMTAB]];
    o->nsym = (uint32_t)(st->size / SYM_SIZE);
    o->nlocal = st->info;
    if (o->nsym < 1 || o->nlocal < 1 || o->nlocal > o->nsym)
        return invalid(".symtab has %u symbols, %u of them local", o->nsym, o->nlocal);
    static const uint8_t zero[SYM_SIZE];
    if (memcmp(sym_at(o, 0), zero, SYM_SIZE)) return invalid("symbol 0 is not null");
    o->local_names = 0;
    o->func = o->kd = 0;
    for (uint32_t i = 1; i < o->nsym; i++) {
        const uint8_t *y = sym_at(o, i);
        const char *nm = sym_name(o, i);
        if (!nm) return invalid("symbol %u has no name in .strtab", i);
        unsigned bind = y[4] >> 4, type = y[4] & 15, other = y[5], shndx = rd16(y + 6);
        uint64_t value = rd64(y + 8), size = rd64(y + 16);
        if (i < o->nlocal) {
            if (bind != STB_LOCAL) return invalid("symbol '%s' is not local but precedes the globals", nm);
            /* ld.lld drops ".L" names and section symbols, relocates section-relative ones */
            if (type != STT_NOTYPE || shndx != SHN_ABS || other || !nm[0] || !strncmp(nm, ".L", 2))
                return unsupported("local symbol '%s' (type %u, section %u)", nm, type, shndx);
            o->local_names += strlen(nm) + 1;
            continue;
        }
        if (bind != STB_GLOBAL) return unsupported("symbol '%s' with binding %u", nm, bind);
        if (shndx == SHN_UNDEF) return unsupported("undefined symbol '%s'", nm);
        bool is_func = type == STT_FUNC && shndx == (unsigned)o->at[S_TEXT] && other == STV_PROTECTED;
        bool is_kd = type == STT_OBJECT && shndx == (unsigned)o->at[S_RODATA] &&
                     (other == STV_DEFAULT || other == STV_PROTECTED);
        if ((!is_func && !is_kd) || (is_func && o->func) || (is_kd && o->kd))
            return unsupported("global symbol '%s' (type %u, visibility %u, section %u)", nm, type, other, shndx);
        const sec *in = &o->s[shndx];
        if (value > in->size || size > in->size - value)
            return invalid("symbol '%s' (%llu + %llu bytes) overruns section '%s'", nm, (unsigned long long)value,
                           (unsigned long long)size, in->name);
        *(is_func ? &o->func : &o->kd) = i;
    }
    if (!o->func || !o->kd) return unsupported("not one kernel function plus its '.kd' descriptor");
    const char *fn = sym_name(o, o->func), *kd = sym_name(o, o->kd);
    size_t fl = strlen(fn);
    if (strncmp(kd, fn, fl) || strcmp(kd + fl, ".kd"))
        return unsupported("descriptor '%s' does not belong to kernel '%s'", kd, fn);
    /* distinct names (string tables are then the same with or without
     * merging); the pairwise check is bounded by the symbol limit */
    if (o->nsym > MAX_SYMBOLS) return unsupported("%u symbols (at most %u)", o->nsym, MAX_SYMBOLS);
    for (uint32_t i = 1; i < o->nsym; i++) {
        if (!strcmp(sym_name(o, i), "_DYNAMIC")) return unsupported("a symbol named _DYNAMIC");
        for (uint32_t j = 1; j < i; j++)
            if (!strcmp(sym_name(o, i), sym_name(o, j)))
                return unsupported("two symbols named '%s'", sym_name(o, i));
    }
    return RK_OK;
}

/* ---- the output layout (what ld.lld -shared makes of such an object) ------- */
enum { O_NULL, O_NOTE, O_DYNSYM, O_GNUHASH, O_HASH, O_DYNSTR, O_RODATA, O_TEXT, O_DYNAMIC, O_RELRO_PAD,
       O_GPRMAX, O_COMMENT, O_SYMTAB, O_SHSTRTAB, O_STRTAB, O__COUNT };
typedef struct osec {
    const char *name;
    uint32_t type, link, info;
    uint64_t flags, addr, off, size, align, entsize;
} osec;

typedef struct layout {
    osec s[O__COUNT];
    int idx[O__COUNT];      /* section header index, -1 = not emitted */
    uint32_t nsh;
    uint64_t shoff, total;
    const char *comment;
} layout;

static uint64_t place(osec *s, uint64_t at) {
    s->off = s->addr = align_up(at, s->align);
    return s->addr + s->size;
}

static void plan(const obj *o, const char *comment, layout *l) {
    const sec *note = &o->s[o->at[S_NOTE]], *ro = &o->s[o->at[S_RODATA]], *text = &o->s[o->at[S_TEXT]];
    const char *fn = sym_name(o, o->func), *kd = sym_name(o, o->kd);
    osec *s = l->s;
    memset(l, 0, sizeof *l);
    l->comment = comment;
    s[O_NOTE] = (osec){".note", SHT_NOTE, 0, 0, SHF_ALLOC, 0, 0, note->size, note->align, 0};
    s[O_DYNSYM] = (osec){".dynsym", SHT_DYNSYM, 0, 1, SHF_ALLOC, 0, 0, 3 * SYM_SIZE, 8, SYM_SIZE};
    /* header, one bloom word, one bucket, a chain entry per exported symbol */
    s[O_GNUHASH] = (osec){".gnu.hash", SHT_GNU_HASH, 0, 0, SHF_ALLOC, 0, 0, 16 + 8 + 4 + 2 * 4, 8, 0};
    /* nbucket = nchain = 3 (the dynamic symbols with the null one) */
    s[O_HASH] = (osec){".hash", SHT_HASH, 0, 0, SHF_ALLOC, 0, 0, 4 * (2 + 3 + 3), 4, 4};
    s[O_DYNSTR] = (osec){".dynstr", SHT_STRTAB, 0, 0, SHF_ALLOC, 0, 0, 1 + strlen(fn) + 1 + strlen(kd) + 1, 1, 0};
    s[O_RODATA] = (osec){".rodata", SHT_PROGBITS, 0, 0, SHF_ALLOC, 0, 0, ro->size, ro->align, 0};
    s[O_TEXT] = (osec){".text", SHT_PROGBITS, 0, 0, SHF_ALLOC | SHF_EXECINSTR, 0, 0, text->size, text->align, 0};
    s[O_DYNAMIC] = (osec){".dynamic", SHT_DYNAMIC, 0, 0, SHF_ALLOC | SHF_WRITE, 0, 0, N_DYN * DYN_SIZE, 8,
                          DYN_SIZE};
    s[O_RELRO_PAD] = (osec){".relro_padding", SHT_NOBITS, 0, 0, SHF_ALLOC | SHF_WRITE, 0, 0, 0, 1, 0};
    if (o->at[S_GPRMAX]) {
        const sec *g = &o->s[o->at[S_GPRMAX]];
        s[O_GPRMAX] = (osec){".AMDGPU.gpr_maximums", SHT_PROGBITS, 0, 0, 0, 0, 0, 0, g->align ? g->align : 1, 0};
    }
    s[O_COMMENT] = (osec){".comment", SHT_PROGBITS, 0, 0, SHF_MERGE | SHF_STRINGS, 0, 0, strlen(comment) + 1, 1, 1};
    s[O_SYMTAB] = (osec){".symtab", SHT_SYMTAB, 0, o->nlocal + 1, 0, 0, 0, ((uint64_t)o->nsym + 1) * SYM_SIZE, 8,
                         SYM_SIZE};
    s[O_SHSTRTAB] = (osec){".shstrtab", SHT_STRTAB, 0, 0, 0, 0, 0, 0, 1, 0};
    /* locals, kernel, descriptor, then _DYNAMIC: ld.lld's order */
    s[O_STRTAB] = (osec){".strtab", SHT_STRTAB, 0, 0, 0, 0, 0,
                         1 + o->local_names + strlen(fn) + 1 + strlen(kd) + 1 + sizeof "_DYNAMIC", 1, 0};

    uint32_t n = 0;
    for (int i = 0; i < O__COUNT; i++) l->idx[i] = i == O_NULL || s[i].name ? (int)n++ : -1;
    l->nsh = n;
    s[O_GNUHASH].link = s[O_HASH].link = (uint32_t)l->idx[O_DYNSYM];
    s[O_DYNSYM].link = s[O_DYNAMIC].link = (uint32_t)l->idx[O_DYNSTR];
    s[O_SYMTAB].link = (uint32_t)l->idx[O_STRTAB];
    uint64_t shstr = 1;
    for (int i = 1; i < O__COUNT; i++)
        if (s[i].name) shstr += strlen(s[i].name) + 1;
    s[O_SHSTRTAB].size = shstr;

    /* read-only segment from file offset 0: headers, then sections at
     * addresses equal to their offsets */
    uint64_t at = EHDR_SIZE + N_PHDR * PHDR_SIZE;
    for (int i = O_NOTE; i <= O_RODATA; i++) at = place(&s[i], at);
    /* each further PT_LOAD starts at align(dot, page) + dot % page (no page
     * shared across permissions, no file padding), its file offset congruent
     * to its address modulo the page */
    uint64_t end_off = at;
    s[O_TEXT].addr = align_up(align_up(at, PAGE) + at % PAGE, s[O_TEXT].align);
    s[O_TEXT].off = congruent(end_off, s[O_TEXT].addr);
    at = s[O_TEXT].addr + s[O_TEXT].size;
    end_off = s[O_TEXT].off + s[O_TEXT].size;
    s[O_DYNAMIC].addr = align_up(align_up(at, PAGE) + at % PAGE, s[O_DYNAMIC].align);
    s[O_DYNAMIC].off = congruent(end_off, s[O_DYNAMIC].addr);
    /* RELRO ends on a page boundary: .relro_padding (no file bytes) fills up */
    s[O_RELRO_PAD].addr = s[O_DYNAMIC].addr + s[O_DYNAMIC].size;
    s[O_RELRO_PAD].off = s[O_DYNAMIC].off + s[O_DYNAMIC].size;
    s[O_RELRO_PAD].size = align_up(s[O_RELRO_PAD].addr, PAGE) - s[O_RELRO_PAD].addr;
    /* non-allocated sections follow in the file, no addresses */
    at = s[O_RELRO_PAD].off;
    for (int i = O_GPRMAX; i <= O_STRTAB; i++) {
        if (!s[i].name) continue;
        s[i].off = align_up(at, s[i].align);
        at = s[i].off + s[i].size;
    }
    l->shoff = align_up(at, 8);
    l->total = l->shoff + (uint64_t)l->nsh * SHDR_SIZE;
}

/* ---- writing ------------------------------------------------------------------ */
static uint32_t gnu_hash(const char *s) {
    uint32_t h = 5381;
    for (; *s; s++) h = h * 33 + (uint8_t)*s;
    return h;
}

static uint32_t sysv_hash(const char *s) {
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (uint8_t)*s;
        uint32_t g = h & 0xf0000000u;
        if (g) h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

static void put_phdr(uint8_t *p, uint32_t type, uint32_t flags, uint64_t off, uint64_t addr, uint64_t filesz,
                     uint64_t memsz, uint64_t align) {
    wr32(p, type);
    wr32(p + 4, flags);
    wr64(p + 8, off);
    wr64(p + 16, addr);
    wr64(p + 24, addr);
    wr64(p + 32, filesz);
    wr64(p + 40, memsz);
    wr64(p + 48, align);
}

static void put_sym(uint8_t *p, uint32_t name, uint8_t info, uint8_t other, uint16_t shndx, uint64_t value,
                    uint64_t size) {
    wr32(p, name);
    p[4] = info;
    p[5] = other;
    wr16(p + 6, shndx);
    wr64(p + 8, value);
    wr64(p + 16, size);
}

static size_t put_str(uint8_t *base, size_t at, const char *s) {
    size_t n = strlen(s) + 1;
    memcpy(base + at, s, n);
    return at + n;
}

static void write_headers(const obj *o, const layout *l, uint8_t *out) {
    const osec *s = l->s;
    memcpy(out, o->p, EI_PAD); /* magic, class, data, version, OS/ABI and ABI version as the input */
    wr16(out + 16, ET_DYN);
    wr16(out + 18, EM_AMDGPU);
    wr32(out + 20, EV_CURRENT);
    wr64(out + 24, 0);
    wr64(out + 32, EHDR_SIZE);
    wr64(out + 40, l->shoff);
    wr32(out + 48, rd32(o->p + 48)); /* e_flags: the processor and its features */
    wr16(out + 52, EHDR_SIZE);
    wr16(out + 54, PHDR_SIZE);
    wr16(out + 56, N_PHDR);
    wr16(out + 58, SHDR_SIZE);
    wr16(out + 60, l->nsh);
    wr16(out + 62, l->idx[O_SHSTRTAB]);

    uint8_t *ph = out + EHDR_SIZE;
    uint64_t ro_end = s[O_RODATA].addr + s[O_RODATA].size, relro = s[O_DYNAMIC].size + s[O_RELRO_PAD].size;
    put_phdr(ph, PT_PHDR, PF_R, EHDR_SIZE, EHDR_SIZE, N_PHDR * PHDR_SIZE, N_PHDR * PHDR_SIZE, 8);
    put_phdr(ph += PHDR_SIZE, PT_LOAD, PF_R, 0, 0, ro_end, ro_end, PAGE);
    put_phdr(ph += PHDR_SIZE, PT_LOAD, PF_R | PF_X, s[O_TEXT].off, s[O_TEXT].addr, s[O_TEXT].size, s[O_TEXT].size,
             PAGE);
    put_phdr(ph += PHDR_SIZE, PT_LOAD, PF_R | PF_W, s[O_DYNAMIC].off, s[O_DYNAMIC].addr, s[O_DYNAMIC].size, relro,
             PAGE);
    put_phdr(ph += PHDR_SIZE, PT_DYNAMIC, PF_R | PF_W, s[O_DYNAMIC].off, s[O_DYNAMIC].addr, s[O_DYNAMIC].size,
             s[O_DYNAMIC].size, 8);
    put_phdr(ph += PHDR_SIZE, PT_GNU_RELRO, PF_R, s[O_DYNAMIC].off, s[O_DYNAMIC].addr, s[O_DYNAMIC].size, relro, 1);
    put_phdr(ph += PHDR_SIZE, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0, 0);
    put_phdr(ph += PHDR_SIZE, PT_NOTE, PF_R, s[O_NOTE].off, s[O_NOTE].addr, s[O_NOTE].size, s[O_NOTE].size,
             s[O_NOTE].align);

    uint8_t *names = out + s[O_SHSTRTAB].off;
    size_t at = 1;
    for (int i = 1; i < O__COUNT; i++) {
        if (l->idx[i] < 0) continue;
        uint8_t *h = out + l->shoff + (size_t)l->idx[i] * SHDR_SIZE;
        wr32(h, at);
        wr32(h + 4, s[i].type);
        wr64(h + 8, s[i].flags);
        wr64(h + 16, s[i].flags & SHF_ALLOC ? s[i].addr : 0);
        wr64(h + 24, s[i].off);
        wr64(h + 32, s[i].size);
        wr32(h + 40, s[i].link);
        wr32(h + 44, s[i].info);
        wr64(h + 48, s[i].align);
        wr64(h + 56, s[i].entsize);
        at = put_str(names, at, s[i].name);
    }
}

/* .dynsym, .gnu.hash, .hash, .dynstr, .dynamic, .symtab and .strtab. */
static void write_symbols(const obj *o, const layout *l, uint8_t *out) {
    const osec *s = l->s;
    const char *fn = sym_name(o, o->func), *kd = sym_name(o, o->kd);
    uint32_t first = o->func < o->kd ? o->func : o->kd, second = o->func ^ o->kd ^ first;
    uint32_t ro = (uint32_t)l->idx[O_RODATA], tx = (uint32_t)l->idx[O_TEXT];
    const uint8_t *g[2] = {sym_at(o, first), sym_at(o, second)};
    uint64_t value[2];
    uint16_t shndx[2];
    for (int i = 0; i < 2; i++) {
        bool text = rd16(g[i] + 6) == o->at[S_TEXT];
        shndx[i] = (uint16_t)(text ? tx : ro);
        value[i] = s[text ? O_TEXT : O_RODATA].addr + rd64(g[i] + 8);
    }
    const char *gname[2] = {first == o->func ? fn : kd, first == o->func ? kd : fn};

    /* .dynsym / .dynstr: the two exported symbols in symbol-table order (one
     * .gnu.hash bucket, so ld.lld's sort by bucket keeps that order) */
    uint8_t *dstr = out + s[O_DYNSTR].off;
    size_t at = 1;
    for (int i = 0; i < 2; i++) {
        put_sym(out + s[O_DYNSYM].off + (i + 1) * SYM_SIZE, (uint32_t)at, g[i][4], g[i][5], shndx[i], value[i],
                rd64(g[i] + 16));
        at = put_str(dstr, at, gname[i]);
    }

    /* .gnu.hash: nbuckets 1, symoffset 1, bloom words 1, shift2 26 */
    uint8_t *gh = out + s[O_GNUHASH].off;
    wr32(gh, 1);
    wr32(gh + 4, 1);
    wr32(gh + 8, 1);
    wr32(gh + 12, GNU_SHIFT2);
    uint64_t bloom = 0;
    for (int i = 0; i < 2; i++) {
        uint32_t h = gnu_hash(gname[i]);
        bloom |= 1ull << (h % 64) | 1ull << ((h >> GNU_SHIFT2) % 64);
        wr32(gh + 28 + 4 * i, i == 1 ? h | 1 : h & ~1u); /* the bucket's last chain entry has bit 0 set */
    }
    wr64(gh + 16, bloom);
    wr32(gh + 24, 1); /* bucket 0 starts at dynamic symbol 1 */

    /* .hash: nbucket = nchain = 3 */
    uint8_t *hs = out + s[O_HASH].off, *bucket = hs + 8, *chain = hs + 8 + 3 * 4;
    wr32(hs, 3);
    wr32(hs + 4, 3);
    for (uint32_t i = 1; i <= 2; i++) {
        uint32_t b = sysv_hash(gname[i - 1]) % 3;
        wr32(chain + 4 * i, rd32(bucket + 4 * b));
        wr32(bucket + 4 * b, i);
    }

    /* .dynamic */
    uint8_t *d = out + s[O_DYNAMIC].off;
    const uint64_t dyn[N_DYN][2] = {{DT_SYMTAB, s[O_DYNSYM].addr}, {DT_SYMENT, SYM_SIZE},
                                    {DT_STRTAB, s[O_DYNSTR].addr}, {DT_STRSZ, s[O_DYNSTR].size},
                                    {DT_GNU_HASH, s[O_GNUHASH].addr}, {DT_HASH, s[O_HASH].addr},
                                    {DT_NULL, 0}};
    for (unsigned i = 0; i < N_DYN; i++) {
        wr64(d + i * DYN_SIZE, dyn[i][0]);
        wr64(d + i * DYN_SIZE + 8, dyn[i][1]);
    }

    /* .symtab: null, the object's locals, _DYNAMIC (hidden, so local), the
     * two globals; .strtab names them in that order but _DYNAMIC last */
    uint8_t *sym = out + s[O_SYMTAB].off, *str = out + s[O_STRTAB].off;
    at = 1;
    for (uint32_t i = 1; i < o->nlocal; i++) {
        const uint8_t *y = sym_at(o, i);
        put_sym(sym + i * SYM_SIZE, (uint32_t)at, y[4], y[5], SHN_ABS, rd64(y + 8), rd64(y + 16));
        at = put_str(str, at, sym_name(o, i));
    }
    for (int i = 0; i < 2; i++) {
        put_sym(sym + (o->nlocal + 1 + i) * SYM_SIZE, (uint32_t)at, g[i][4], g[i][5], shndx[i], value[i],
                rd64(g[i] + 16));
        at = put_str(str, at, gname[i]);
    }
    put_sym(sym + o->nlocal * SYM_SIZE, (uint32_t)at, ELF64_ST_INFO(STB_LOCAL, STT_NOTYPE), STV_HIDDEN,
            (uint16_t)l->idx[O_DYNAMIC], s[O_DYNAMIC].addr, 0);
    put_str(str, at, "_DYNAMIC");
}

/* Copy .rodata and apply its relocations: R_AMDGPU_REL64 (S + A - P, the
 * descriptor's offset to the kernel entry) against the kernel, which is
 * protected, so the link binds it locally (ld.lld refuses a PC-relative
 * relocation against a preemptible symbol such as a default-visibility one). */
static rk_status write_rodata(const obj *o, const layout *l, uint8_t *out) {
    const sec *ro = &o->s[o->at[S_RODATA]], *rela = &o->s[o->at[S_RELA]];
    uint8_t *dst = out + l->s[O_RODATA].off;
    memcpy(dst, o->p + ro->off, ro->size);
    for (uint64_t k = 0; k < rela->size / RELA_SIZE; k++) {
        const uint8_t *r = o->p + rela->off + k * RELA_SIZE;
        uint64_t off = rd64(r), info = rd64(r + 8);
        int64_t addend = (int64_t)rd64(r + 16);
        uint32_t type = (uint32_t)info, symi = (uint32_t)(info >> 32);
        if (type != R_AMDGPU_REL64)
            return unsupported("relocation type %u in .rela.rodata (only R_AMDGPU_REL64)", type);
        if (symi != o->func) return unsupported("a relocation against symbol %u (not the kernel)", symi);
        if (off > ro->size || ro->size - off < 8)
            return invalid("relocation at offset %llu overruns .rodata (%llu bytes)", (unsigned long long)off,
                           (unsigned long long)ro->size);
        uint64_t S = l->s[O_TEXT].addr + rd64(sym_at(o, symi) + 8), P = l->s[O_RODATA].addr + off;
        wr64(dst + off, S + (uint64_t)addend - P);
    }
    return RK_OK;
}

rk_status cc_amdgpu_link_as(const cc_blob *objb, const char *comment, cc_blob *hsaco) {
    hsaco->data = NULL;
    hsaco->size = 0;
    if (!objb->data) return invalid("empty input");
    obj *o = rk_calloc(1, sizeof *o);
    if (!o) return rk_fail(RK_ERR_NOMEM, "out of memory");
    o->p = objb->data;
    o->n = objb->size;
    rk_status s = read_header(o);
    if (s == RK_OK) s = classify(o);
    if (s == RK_OK) s = read_symbols(o);
    layout l;
    if (s == RK_OK) {
        plan(o, comment, &l);
        /* never seen: RELRO already ending on a page (ld.lld's handling of an
         * empty padding section was not observed) */
        if (!l.s[O_RELRO_PAD].size) s = unsupported(".dynamic ending on a page boundary");
    }
    /* every section size was checked against the file, so the output is a
     * small multiple of the input plus page padding; anything else is a bug
     * in that reasoning, refused rather than allocated */
    if (s == RK_OK && l.total > 8 * (uint64_t)o->n + 16 * PAGE)
        s = invalid("the output would take %llu bytes for a %zu-byte object", (unsigned long long)l.total, o->n);
    uint8_t *out = NULL;
    if (s == RK_OK && !(out = rk_calloc(1, l.total + 1))) s = rk_fail(RK_ERR_NOMEM, "out of memory");
    if (s == RK_OK) s = write_rodata(o, &l, out);
    if (s == RK_OK) {
        write_headers(o, &l, out);
        write_symbols(o, &l, out);
        memcpy(out + l.s[O_NOTE].off, o->p + o->s[o->at[S_NOTE]].off, l.s[O_NOTE].size);
        memcpy(out + l.s[O_TEXT].off, o->p + o->s[o->at[S_TEXT]].off, l.s[O_TEXT].size);
        memcpy(out + l.s[O_COMMENT].off, comment, l.s[O_COMMENT].size);
        hsaco->data = out;
        hsaco->size = l.total;
    } else if (out) {
        rk_free(out, l.total + 1);
    }
    rk_free(o, sizeof *o);
    return s;
}

rk_status cc_amdgpu_link(const cc_blob *object, cc_blob *hsaco) {
    return cc_amdgpu_link_as(object, cc_amdgpu_link_comment, hsaco);
}
