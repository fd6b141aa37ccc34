/* rocke — the verifier's check of tile.inline_asm constraint strings against
 * the op's operands and results, so a mismatch is reported on the IR instead
 * of by LLVM at compile time (or by a fatal error in its instruction
 * selector). Grammar: LLVM's inline-asm constraint strings as the AMDGPU and
 * NVPTX back ends read them. Layer: ir. */
#include <stdio.h>

#include "ir_int.h"

/* Register letters and what they hold. Widths in bits; 0 = any multiple of
 * 32 up to 1024 (AMDGPU register tuples) or 16. */
typedef struct asm_class {
    const char *code;
    unsigned vendor;        /* IR_ASM_AMD / IR_ASM_NV */
    uint32_t bits[2];       /* the legal widths (0 terminates); {0} = AMDGPU tuple widths */
    bool allows_i1;
    const char *holds;
} asm_class;

static const asm_class classes[] = {
    {"v", IR_ASM_AMD, {0}, false, "a VGPR (tuple)"},
    {"a", IR_ASM_AMD, {0}, false, "an AGPR (tuple)"},
    {"VA", IR_ASM_AMD, {0}, false, "a VGPR or AGPR (tuple)"},
    {"s", IR_ASM_AMD, {0}, true, "an SGPR (tuple)"},
    {"r", IR_ASM_AMD | IR_ASM_NV, {0}, true, "a register"}, /* AMDGPU: SGPR; NVPTX: 32 bits (below) */
    {"b", IR_ASM_NV, {1}, true, "a 1-bit predicate"},
    {"c", IR_ASM_NV, {8, 16}, false, "an 8- or 16-bit integer"},
    {"h", IR_ASM_NV, {16}, false, "a 16-bit register"},
    {"l", IR_ASM_NV, {64}, false, "a 64-bit register"},
    {"N", IR_ASM_NV, {64}, false, "a 64-bit register"},
    {"q", IR_ASM_NV, {128}, false, "a 128-bit register"},
    {"f", IR_ASM_NV, {32}, false, "a 32-bit float register"},
    {"d", IR_ASM_NV, {64}, false, "a 64-bit float register"},
};

/* Immediates: the operand must be a compile-time constant. */
static const struct { const char *code; unsigned vendor; } immediates[] = {
    {"i", IR_ASM_AMD | IR_ASM_NV}, {"n", IR_ASM_AMD | IR_ASM_NV}, {"I", IR_ASM_AMD}, {"J", IR_ASM_AMD},
    {"A", IR_ASM_AMD}, {"B", IR_ASM_AMD}, {"C", IR_ASM_AMD}, {"DA", IR_ASM_AMD}, {"DB", IR_ASM_AMD},
};

static const char *legal_codes(unsigned vendor) {
    if (vendor == IR_ASM_AMD) return "v, s, a, VA, r, i, n, I, J, A, B, C, DA, DB, {register}, a digit tying an output";
    if (vendor == IR_ASM_NV) return "r, l, h, c, b, f, d, q, N, i, n, a digit tying an output";
    return "AMDGPU v, s, a, VA, r, I, J, A, B, C, DA, DB, {register}; NVPTX r, l, h, c, b, f, d, q, N; i, n; a digit";
}

static const char *vendor_name(unsigned vendor) {
    return vendor == IR_ASM_AMD ? "AMDGPU" : vendor == IR_ASM_NV ? "NVPTX" : "AMDGPU or NVPTX";
}

/* One parsed constraint: "=&v" -> kind OUT, early clobber, code "v". */
typedef enum { C_OUT, C_IN, C_CLOBBER } ckind;
typedef struct cons {
    ckind kind;
    const char *code;       /* into the string; len bytes */
    size_t len;
    const char *entry;      /* the whole entry with its prefixes, entry_len bytes */
    size_t entry_len;
} cons;

/* Whether a value of `bits` bits fits the register class on `vendor`. */
static bool width_fits(const asm_class *cl, unsigned vendor, uint32_t bits, bool is_ptr) {
    if (!strcmp(cl->code, "r") && vendor == IR_ASM_NV) return bits == 32 || is_ptr;
    if (bits == 1) return cl->allows_i1;
    if (cl->bits[0] == 0) return bits == 16 || (bits % 32 == 0 && bits <= 1024); /* AMDGPU tuples */
    if (is_ptr) return cl->bits[0] == 64;
    return bits == cl->bits[0] || (cl->bits[1] && bits == cl->bits[1]);
}

static bool is_constant(const rk_kernel *k, rk_value v) {
    const ir_valinfo *vi = ir_val(k, v);
    return vi && vi->kind == RK_VK_RESULT && vi->def &&
           (vi->def->code == RK_OP_CONSTANT || vi->def->code == RK_OP_CONSTANT_VEC);
}

typedef struct actx {
    const rk_kernel *k;
    const rk_op *op;
    const char *text;
    unsigned vendor;
    char *msg;
    size_t n;
} actx;

static bool fail(actx *a, uint32_t i, const cons *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static bool fail(actx *a, uint32_t i, const cons *c, const char *fmt, ...) {
    char why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (c)
        snprintf(a->msg, a->n, "tile.inline_asm constraint %u '%.*s' (of \"%s\"): %s", i, (int)c->entry_len,
                 c->entry, a->text, why);
    else
        snprintf(a->msg, a->n, "tile.inline_asm constraints \"%s\": %s", a->text, why);
    return false;
}

/* Split one comma-separated entry into prefix flags and its code. */
static bool parse_one(actx *a, uint32_t i, const char *s, size_t len, cons *c) {
    cons whole = {C_IN, s, len, s, len};
    size_t at = 0;
    c->entry = s;
    c->entry_len = len;
    c->kind = C_IN;
    if (at < len && s[at] == '~') {
        c->kind = C_CLOBBER;
        at++;
    } else if (at < len && s[at] == '=') {
        c->kind = C_OUT;
        at++;
        if (at < len && s[at] == '&') at++; /* early clobber */
    }
    if (at < len && s[at] == '*') {
        /* LLVM needs an elementtype attribute on such an operand, which
         * the lowering (values in registers only) does not write */
        return fail(a, i, &whole, "indirect ('*') operands are not supported; pass the value, or its address "
                    "as a plain pointer operand");
    }
    c->code = s + at;
    c->len = len - at;
    if (!c->len) return fail(a, i, &whole, "no constraint code after its prefix (legal: %s)", legal_codes(a->vendor));
    if (memchr(c->code, '|', c->len))
        return fail(a, i, &whole, "alternatives ('|') are not supported; give one constraint per operand");
    if (c->code[0] == '{') {
        if (c->len < 3 || c->code[c->len - 1] != '}' || memchr(c->code + 1, '}', c->len - 2))
            return fail(a, i, &whole, "a register name must be written {name}");
    } else if (c->kind == C_CLOBBER) {
        return fail(a, i, &whole, "a clobber names a register or memory in braces: ~{name}");
    }
    return true;
}

static const asm_class *find_class(const cons *c) {
    for (size_t j = 0; j < RK_COUNTOF(classes); j++)
        if (strlen(classes[j].code) == c->len && !memcmp(classes[j].code, c->code, c->len)) return &classes[j];
    return NULL;
}

static int find_immediate(const cons *c) {
    for (size_t j = 0; j < RK_COUNTOF(immediates); j++)
        if (strlen(immediates[j].code) == c->len && !memcmp(immediates[j].code, c->code, c->len)) return (int)j;
    return -1;
}

/* The value bound to constraint c (operand or result) against its code. */
static bool check_value(actx *a, uint32_t i, const cons *c, rk_value v, const char *what, uint32_t idx) {
    const rk_kernel *k = a->k;
    rk_type t = rk_value_type(k, v);
    rk_type_kind tk = rk_type_kind_of(k, t);
    const char *tn = rk_type_name(k, t);
    if (c->code[0] == '{') {
        if (a->vendor == IR_ASM_NV)
            return fail(a, i, c, "NVPTX has no named registers (legal: %s)", legal_codes(IR_ASM_NV));
        return true;
    }
    int imm = find_immediate(c);
    if (imm >= 0) {
        if (!(immediates[imm].vendor & a->vendor))
            return fail(a, i, c, "not an %s constraint (legal: %s)", vendor_name(a->vendor), legal_codes(a->vendor));
        if (c->kind == C_OUT) return fail(a, i, c, "an immediate cannot be an output");
        if (tk != RK_TK_SCALAR || !is_constant(k, v))
            return fail(a, i, c, "an immediate needs a constant scalar (arith.constant), but %s %u is %s%s", what, idx,
                        tk == RK_TK_SCALAR ? "a computed " : "", tn);
        return true;
    }
    const asm_class *cl = find_class(c);
    if (!cl || !(cl->vendor & a->vendor))
        return fail(a, i, c, "not an %s constraint (legal: %s)", vendor_name(a->vendor), legal_codes(a->vendor));
    if (tk != RK_TK_SCALAR && tk != RK_TK_VEC && tk != RK_TK_PTR)
        return fail(a, i, c, "%s %u has type %s; asm operands are scalars, vectors or pointers", what, idx, tn);
    uint32_t bits = rk_type_bits(k, t);
    if (!width_fits(cl, a->vendor, bits, tk == RK_TK_PTR)) {
        bool nv_r = !strcmp(cl->code, "r") && a->vendor == IR_ASM_NV;
        const char *want = cl->bits[0] == 0 && !nv_r ? "16 bits or 32 to 1024 bits in whole registers"
                           : nv_r                    ? "32 bits"
                                                     : NULL;
        char w[48];
        if (!want) {
            if (cl->bits[1]) snprintf(w, sizeof w, "%u or %u bits", cl->bits[0], cl->bits[1]);
            else snprintf(w, sizeof w, "%u bit%s", cl->bits[0], cl->bits[0] == 1 ? "" : "s");
            want = w;
        }
        return fail(a, i, c, "%s holds %s, but %s %u is %s (%u bits)", cl->holds, want, what, idx, tn, bits);
    }
    return true;
}

bool ir_check_asm_constraints(const rk_kernel *k, const rk_op *op, unsigned vendor, char *msg, size_t n) {
    const char *text = rk_attrs_str(&op->attrs, "constraints");
    if (!text) text = "";
    actx a = {k, op, text, vendor ? vendor : IR_ASM_ANY, msg, n};
    enum { MAX_CONS = 256 };
    cons cs[MAX_CONS];
    uint32_t ncons = 0, nout = 0, nin = 0, nclob = 0;
    if (*text) {
        for (const char *p = text;; p++) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (ncons == MAX_CONS) return fail(&a, ncons, NULL, "more than %d constraints", MAX_CONS);
            cons *c = &cs[ncons];
            if (!parse_one(&a, ncons, p, len, c)) return false;
            /* LLVM's order: outputs, then inputs, then clobbers */
            if (c->kind == C_OUT && (nin || nclob))
                return fail(&a, ncons, c, "an output constraint after an input or clobber (outputs come first)");
            if (c->kind == C_IN && nclob)
                return fail(&a, ncons, c, "an input constraint after a clobber (clobbers come last)");
            if (c->kind == C_CLOBBER) nclob++;
            else if (c->kind == C_OUT) nout++;
            else nin++;
            ncons++;
            if (!e) break;
            p = e;
        }
    }
    if (nout != op->nout || nin != op->nin)
        return fail(&a, 0, NULL, "%u output%s and %u input%s declared, but the op has %u result%s and %u operand%s",
                    nout, nout == 1 ? "" : "s", nin, nin == 1 ? "" : "s", op->nout, op->nout == 1 ? "" : "s",
                    op->nin, op->nin == 1 ? "" : "s");
    int tied_by[MAX_CONS];   /* per constraint: the input tied to it, -1 = none */
    uint32_t result_of[MAX_CONS]; /* per direct output constraint: its result index */
    uint32_t out_i = 0, in_i = 0;
    for (uint32_t i = 0; i < ncons; i++) {
        const cons *c = &cs[i];
        tied_by[i] = -1;
        if (c->kind == C_CLOBBER) continue;
        bool is_result = c->kind == C_OUT;
        if (is_result) result_of[i] = out_i;
        rk_value v = is_result ? op->out[out_i] : op->in[in_i];
        const char *what = is_result ? "result" : "operand";
        uint32_t idx = is_result ? out_i++ : in_i++;
        if (c->code[0] >= '0' && c->code[0] <= '9') {
            if (c->kind != C_IN) return fail(&a, i, c, "only a plain input can be tied to an output");
            uint32_t to = 0;
            for (size_t j = 0; j < c->len; j++) {
                if (c->code[j] < '0' || c->code[j] > '9' || to > 1000)
                    return fail(&a, i, c, "a tied constraint is the number of an earlier output constraint");
                to = to * 10 + (uint32_t)(c->code[j] - '0');
            }
            /* the number counts constraints from the start: an output's place */
            if (to >= i || cs[to].kind != C_OUT)
                return fail(&a, i, c, "ties to constraint %u, which is not an output (%u output%s)", to, nout,
                            nout == 1 ? "" : "s");
            if (tied_by[to] >= 0) return fail(&a, i, c, "output %u is already tied to constraint %d", to, tied_by[to]);
            tied_by[to] = (int)i;
            rk_type ti = rk_value_type(k, v), to_t = rk_value_type(k, op->out[result_of[to]]);
            if (!rk_type_eq(ti, to_t))
                return fail(&a, i, c, "operand %u has type %s but the output it is tied to (result %u) has type %s",
                            idx, rk_type_name(k, ti), result_of[to], rk_type_name(k, to_t));
            continue;
        }
        if (!check_value(&a, i, c, v, what, idx)) return false;
    }
    return true;
}
