/* rocke — the op table instance (from ops.def), name lookup, and the parsed
 * attribute specs. Layer: ir. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "ir_int.h"

const rk_op_info ir_op_table[RK_OP__COUNT] = {
    [RK_OP_INVALID] = {"<invalid>", "invalid", 0, 0, 0, RK_R_SIG, "->", 0, 0, "", ""},
#define RK_OP(E, name_, fn_, nin_, nout_, nreg_, rule_, sig_, flags_, feat_, hint_, attrs_) \
    [RK_OP_##E] = {name_, #fn_, nin_, nout_, nreg_, RK_##rule_, sig_, flags_, feat_, hint_, attrs_},
#include "rocke/ops.def"
};

/* Row order is the enum order by construction; this catches a row whose name
 * collides with another (two rows, one wire name). */
/* open addressing, at most a quarter full: the smallest power of two >= 4 rows */
#define NAME_HASH_CAP (4 * RK_OP__COUNT <= 1024 ? 1024u : 4 * RK_OP__COUNT <= 2048 ? 2048u : 4096u)
_Static_assert(4 * RK_OP__COUNT <= 4096, "grow NAME_HASH_CAP");
static const uint32_t name_hash_cap = NAME_HASH_CAP;
static uint16_t name_hash[NAME_HASH_CAP];   /* opcode, 0 = empty */
ir_op_spec ir_op_specs[RK_OP__COUNT];
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Set once the tables are built: the builder asks for a spec on every op, and
 * an acquire load is cheaper than pthread_once each time. */
atomic_bool ir_op_specs_ready;

#define IR_KEY_DEF(name) const char ir_key_##name[] = #name;
IR_KEYS(IR_KEY_DEF)
#undef IR_KEY_DEF

/* Every distinct spec key once (start-up only): the named ones first. */
#define IR_KEY_REF(name) ir_key_##name,
#define IR_KEY_ONE(name) +1
static const char *keys[128] = {IR_KEYS(IR_KEY_REF)};
static uint32_t nkeys = 0 IR_KEYS(IR_KEY_ONE);
#undef IR_KEY_REF
#undef IR_KEY_ONE

/* Key and enumeration strings cut out of the attribute specs, for the life of
 * the process: static storage, so the table needs no allocation (and none
 * outside the allocation hook); filled once under pthread_once. */
static char spec_text[16384];
static size_t spec_used;

static char *spec_strndup(const char *s, size_t n) {
    RK_ASSERT(n < sizeof spec_text - spec_used, "the op specs' strings outgrew spec_text: enlarge it");
    char *d = spec_text + spec_used;
    memcpy(d, s, n);
    d[n] = '\0';
    spec_used += n + 1;
    return d;
}

static const char *shared_key(const char *s, size_t n) {
    for (uint32_t i = 0; i < nkeys; i++)
        if (strlen(keys[i]) == n && memcmp(keys[i], s, n) == 0) return keys[i];
    char *key = spec_strndup(s, n);
    RK_ASSERT(nkeys < RK_COUNTOF(keys), "more distinct attribute keys than the key table holds");
    keys[nkeys++] = key;
    return key;
}

static void parse_spec(rk_opcode code) {
    const char *s = ir_op_table[code].attrs;
    ir_op_spec *sp = &ir_op_specs[code];
    while (*s) {
        while (*s == ' ' || *s == ',') s++;
        if (!*s) break;
        RK_ASSERT(sp->nattrs < RK_COUNTOF(sp->attrs), "too many attrs in an op spec");
        ir_attr_spec *a = &sp->attrs[sp->nattrs++];
        if (*s == '?') { a->optional = true; s++; }
        const char *k0 = s;
        while (*s && *s != ':') s++;
        RK_ASSERT(*s == ':', "attr spec without ':'");
        a->key = shared_key(k0, (size_t)(s - k0));
        s++;
        switch (*s++) {
        case 'i': a->type = IR_AT_INT; break;
        case 'f': a->type = IR_AT_NUM; break;
        case 's': a->type = IR_AT_STR; break;
        case 'b': a->type = IR_AT_BOOL; break;
        case 'l': a->type = IR_AT_LIST; break;
        case 't': a->type = IR_AT_TYPE; break;
        default: rk_bug("bad attr kind in op spec");
        }
        if (*s == '[') {
            char *end;
            a->has_range = true;
            a->lo = strtoll(s + 1, &end, 10);
            RK_ASSERT(*end == ',', "bad range in op spec");
            a->hi = strtoll(end + 1, &end, 10);
            RK_ASSERT(*end == ']', "bad range in op spec");
            s = end + 1;
        } else if (*s == '{') {
            s++;
            while (*s && *s != '}') {
                const char *e0 = s;
                while (*s && *s != '|' && *s != '}') s++;
                RK_ASSERT(a->nenum < RK_COUNTOF(a->enums), "too many enum values");
                a->enums[a->nenum++] = spec_strndup(e0, (size_t)(s - e0));
                if (*s == '|') s++;
            }
            RK_ASSERT(*s == '}', "unterminated enum in op spec");
            s++;
        }
    }
}

static void init_tables(void) {
    for (int c = 1; c < RK_OP__COUNT; c++) {
        uint32_t h = (uint32_t)rk_hash_str(ir_op_table[c].name) & (name_hash_cap - 1);
        while (name_hash[h]) {
            RK_ASSERT(strcmp(ir_op_table[name_hash[h]].name, ir_op_table[c].name) != 0,
                      "two op table rows share a name");
            h = (h + 1) & (name_hash_cap - 1);
        }
        name_hash[h] = (uint16_t)c;
        parse_spec((rk_opcode)c);
        const char *sig = ir_op_table[c].sig;
        if (!strstr(sig, "->"))
            for (int sc = 1; sc < RK_S__COUNT; sc++)   /* scalar names need no kernel */
                if (ir_type_matches(NULL, (rk_type){(uint32_t)sc}, sig, strlen(sig))) ir_op_specs[c].sig_scalars |= 1u << sc;
        ir_op_specs[c].sig_vec = strcmp(sig, "vec") == 0;
    }
    atomic_store_explicit(&ir_op_specs_ready, true, memory_order_release);
}

static void ensure_init(void) {
    if (!atomic_load_explicit(&ir_op_specs_ready, memory_order_acquire)) pthread_once(&once, init_tables);
}

const rk_op_info *rk_op_info_of(rk_opcode code) {
    if ((unsigned)code >= RK_OP__COUNT) code = RK_OP_INVALID;
    return &ir_op_table[code];
}

const char *rk_opcode_name(rk_opcode code) { return rk_op_info_of(code)->name; }

rk_opcode rk_opcode_from_name(const char *name) {
    ensure_init();
    if (!name) return RK_OP_INVALID;
    /* upstream's loop-with-carries builder name, kept as a synonym */
    if (strcmp(name, "scf.for_iter") == 0) return RK_OP_FOR;
    uint32_t h = (uint32_t)rk_hash_str(name) & (name_hash_cap - 1);
    while (name_hash[h]) {
        if (strcmp(ir_op_table[name_hash[h]].name, name) == 0) return (rk_opcode)name_hash[h];
        h = (h + 1) & (name_hash_cap - 1);
    }
    return RK_OP_INVALID;
}

const ir_op_spec *ir_op_spec_init(rk_opcode code) {
    ensure_init();
    return &ir_op_specs[(unsigned)code < RK_OP__COUNT ? code : 0];
}

const char *ir_op_spec_key(rk_opcode code, const char *key) {
    const ir_op_spec *sp = ir_op_spec_of(code);
    for (uint32_t i = 0; i < sp->nattrs; i++)
        if (ir_key_eq(sp->attrs[i].key, key)) return sp->attrs[i].key;
    return NULL;
}

const char *rk_feature_name(uint32_t feat) {
    static const struct { uint32_t bit; const char *name; } names[] = {
        {RK_FEAT_AMD, "AMDGPU"},      {RK_FEAT_NV, "NVPTX"},
        {RK_FEAT_GFX9, "gfx9 (CDNA)"}, {RK_FEAT_GFX940, "gfx942+"},
        {RK_FEAT_GFX950, "gfx950"},    {RK_FEAT_GFX10P, "gfx10+ (RDNA)"},
        {RK_FEAT_GFX11P, "gfx11+"},    {RK_FEAT_SM80, "sm_80+"},
        {RK_FEAT_SM90, "sm_90+"},      {RK_FEAT_SM90A, "sm_90a"},
        {RK_FEAT_XF32, "gfx942 (xf32)"},
    };
    for (size_t i = 0; i < RK_COUNTOF(names); i++)
        if (feat & names[i].bit) return names[i].name;
    return "none";
}
