/* rocke tests — the typed-builder generator: reads every row of the op table
 * (through the X-macro and the library's own parse of the sig and attrs
 * columns) and writes include/rocke/ir_builders.h and src/ir/build_gen.c.
 * As a test it fails when the checked-in files differ from what the table
 * gives; run it with --update to rewrite them (docs/builders.md). Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ir/ir_int.h"
#include "support/op_samples.h"

/* Rows whose builder is written by hand in src/ir/builder.c (ir.h says why
 * for each): their rule needs something a row cannot say (regions, a
 * variadic list, a type built from several arguments), or their C form
 * predates the table (axis numbers, the three waitcnt counters). */
static bool hand_written(rk_opcode c) {
    switch (ir_op_table[c].rule) {
    case RK_R_CONST: case RK_R_CONST_VEC: case RK_R_VSPLAT: case RK_R_VPACK: case RK_R_VCONCAT:
    case RK_R_VSHUFFLE: case RK_R_SMEM_ALLOC: case RK_R_MMA: case RK_R_ASM: case RK_R_FOR: case RK_R_IF:
    case RK_R_YIELD:
        return true;
    default:
        break;
    }
    return c == RK_OP_THREAD_ID || c == RK_OP_BLOCK_ID || c == RK_OP_BLOCK_DIM || c == RK_OP_GRID_DIM ||
           c == RK_OP_S_WAITCNT;
}

/* ---- what a row says ------------------------------------------------------------------- */
typedef enum { RES_NONE, RES_EXPR, RES_TO } res_kind;
typedef struct shape {
    rk_opcode code;
    const rk_op_info *info;
    const ir_op_spec *spec;
    bool smem;                /* operands: smem, idx[rank], then ntail values */
    uint32_t nfixed;          /* plain operands a, b, c, ... (or the tail values) */
    uint32_t nres;
    res_kind res[4];
    char expr[4][96];         /* RES_EXPR: the C expression of each result type */
    bool auto_rank, auto_target;
} shape;

static const char *const letters[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};

/* The operand names of a shape, in order ("smem", then tail "v" for smem
 * layouts). */
static const char *operand_name(const shape *s, uint32_t i) { return s->smem ? "v" : letters[i]; }

static void type_expr(char *out, size_t n, rk_kernel *k, rk_type t) {
    if (rk_type_kind_of(k, t) == RK_TK_VEC) {
        char e[48];
        type_expr(e, sizeof e, k, rk_type_elem(k, t));
        snprintf(out, n, "ir_vec_of(k, @OP, %s, %u)", e, rk_type_count(k, t));
        return;
    }
    const char *name = rk_type_name(k, t);
    size_t j = (size_t)snprintf(out, n, "RK_T_");
    for (const char *p = name; *p && j + 1 < n; p++) out[j++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    out[j] = '\0';
}

/* A type named exactly by the class text, or none. */
static rk_type exact_type(rk_kernel *k, const char *p, size_t n) {
    char buf[64];
    if (n >= sizeof buf || memchr(p, '|', n) || memchr(p, '*', n)) return RK_T_NONE;
    memcpy(buf, p, n);
    buf[n] = '\0';
    rk_type t = rk_type_parse(k, buf);
    rk_clear_error();
    return t;
}

/* "vec<CLASS x N>": the class text and the literal lane count (0 for *). */
static bool vec_class(const char *sig, const char **cls, size_t *cn, uint32_t *lanes) {
    if (strncmp(sig, "vec<", 4) != 0) return false;
    const char *x = strrchr(sig, 'x');
    if (!x) return false;
    *cls = sig + 4;
    *cn = (size_t)(x - *cls);
    while (*cn && (*cls)[*cn - 1] == ' ') (*cn)--;
    *lanes = x[1] == '*' ? 0 : (uint32_t)strtoul(x + 1, NULL, 10);
    return true;
}

static bool has_required(const shape *s, const char *key, ir_attr_type type) {
    for (uint32_t i = 0; i < s->spec->nattrs; i++)
        if (!strcmp(s->spec->attrs[i].key, key)) return !s->spec->attrs[i].optional && s->spec->attrs[i].type == type;
    return false;
}

/* Result types of the access rules from their sig class: "any" is the
 * element at the address, "vec" a vector of it with the `vec` attribute's
 * lanes; buffers take the element from elem_type and the lanes from dwords. */
static void access_result(shape *s, rk_kernel *k, const char *elem_of_operand0) {
    const char *sig = s->info->sig, *cls;
    size_t cn;
    uint32_t lanes;
    rk_type t = exact_type(k, sig, strlen(sig));
    char *x = s->expr[0];
    s->res[0] = RES_EXPR;
    bool buffer = s->info->rule == RK_R_BLOAD;
    if (rk_type_ok(t)) { type_expr(x, 96, k, t); return; }
    if (buffer && has_required(s, "elem_type", IR_AT_TYPE) && !strcmp(sig, "vec")) {
        snprintf(x, 96, "ir_buffer_vec(k, @OP, elem_type, dwords)");
        return;
    }
    if (buffer && has_required(s, "elem_type", IR_AT_TYPE)) { snprintf(x, 96, "elem_type"); return; }
    if (!strcmp(sig, "any")) { snprintf(x, 96, "%s", elem_of_operand0); return; }
    if (!strcmp(sig, "vec") && has_required(s, "vec", IR_AT_INT)) {
        snprintf(x, 96, "ir_vec_of(k, @OP, %s, vec)", elem_of_operand0);
        return;
    }
    if (vec_class(sig, &cls, &cn, &lanes)) {
        rk_type e = exact_type(k, cls, cn);
        char es[48];
        if (rk_type_ok(e)) type_expr(es, sizeof es, k, e);
        if (rk_type_ok(e) && buffer) { snprintf(x, 96, "ir_buffer_vec(k, @OP, %s, dwords)", es); return; }
        if (rk_type_ok(e) && !lanes && has_required(s, "vec", IR_AT_INT)) {
            snprintf(x, 96, "ir_vec_of(k, @OP, %s, vec)", es);
            return;
        }
        if (!rk_type_ok(e) && lanes) { snprintf(x, 96, "ir_vec_of(k, @OP, %s, %u)", elem_of_operand0, lanes); return; }
    }
    s->res[0] = RES_TO;
}

static void sig_results(shape *s, rk_kernel *k) {
    const char *sg = s->info->sig, *arrow = strstr(sg, "->");
    const char *ip[12], *op[4];
    size_t il[12], ol[4];
    uint32_t ni = op_sig_split(sg, arrow, ip, il, 12), no = op_sig_split(arrow + 2, sg + strlen(sg), op, ol, 4);
    RK_ASSERT(ni <= 12 && no == s->nres, "sig and result count disagree");
    for (uint32_t i = 0; i < no; i++) {
        rk_type t = exact_type(k, op[i], ol[i]);
        s->res[i] = RES_EXPR;
        if (rk_type_ok(t)) type_expr(s->expr[i], 96, k, t);
        else if (ni && il[0] == ol[i] && !memcmp(ip[0], op[i], il[0])) snprintf(s->expr[i], 96, "ir_vtype(k, a)");
        else s->res[i] = RES_TO;
    }
}

static shape shape_of(rk_opcode c, rk_kernel *k) {
    shape s = {.code = c, .info = &ir_op_table[c], .spec = ir_op_spec_of(c)};
    const rk_op_info *info = s.info;
    s.nres = RK_COUNT_N(info->nout);
    RK_ASSERT(!RK_COUNT_IS_MIN(info->nout) && s.nres <= 4, "generated builders have a fixed result count");
    s.nfixed = RK_COUNT_N(info->nin);
    if (RK_COUNT_IS_MIN(info->nin)) {
        RK_ASSERT(info->rule == RK_R_SMEM_LOAD || info->rule == RK_R_SMEM_STORE || info->rule == RK_R_LDS_ATOMIC,
                  "a variadic row the generator does not know");
        s.smem = true;
        s.nfixed -= 2;            /* smem and at least one index */
        s.auto_rank = ir_op_spec_key(c, ir_key_rank) != NULL;
    }
    RK_ASSERT(s.nfixed <= RK_COUNTOF(letters), "too many operands");
    if (!s.nres) return s;
    const char *elem0 = s.smem ? "ir_telem(k, ir_vtype(k, smem))" : "ir_telem(k, ir_vtype(k, a))";
    s.res[0] = RES_EXPR;
    char *x = s.expr[0];
    switch (info->rule) {
    case RK_R_SAME: case RK_R_VINSERT: case RK_R_PTR_ADD: snprintf(x, 96, "ir_vtype(k, a)"); break;
    case RK_R_VREDUCE: case RK_R_VEXTRACT: snprintf(x, 96, "%s", elem0); break;
    case RK_R_SELECT: case RK_R_VSELECT: snprintf(x, 96, "ir_vtype(k, b)"); break;
    case RK_R_GATOMIC: snprintf(x, 96, "ir_vtype(k, c)"); break;
    case RK_R_LDS_ATOMIC: snprintf(x, 96, "ir_vtype(k, v)"); break;
    case RK_R_CMP: snprintf(x, 96, "RK_T_I1"); break;
    case RK_R_VCMP: snprintf(x, 96, "ir_vec_of(k, @OP, RK_T_I1, ir_tcount(k, ir_vtype(k, a)))"); break;
    case RK_R_WIDEN: case RK_R_NARROW: case RK_R_BITCAST: s.res[0] = RES_TO; break;
    case RK_R_GLOAD: case RK_R_SMEM_LOAD: case RK_R_BLOAD: access_result(&s, k, elem0); break;
    case RK_R_SIG: sig_results(&s, k); break;
    default: rk_bug("a rule with results the generator does not know");
    }
    for (uint32_t i = 0; i < s.nres; i++)
        if (s.res[i] == RES_TO) {
            RK_ASSERT(s.nres == 1, "only a single result may take its type from the caller");
            s.auto_target = ir_op_spec_key(c, ir_key_target) != NULL;
        }
    return s;
}

/* Attributes the builder sets itself (not parameters). */
static bool automatic(const shape *s, const ir_attr_spec *a) {
    return (s->auto_rank && a->key == ir_key_rank) || (s->auto_target && a->key == ir_key_target);
}
static bool has_opts(const shape *s) {
    for (uint32_t i = 0; i < s->spec->nattrs; i++)
        if (s->spec->attrs[i].optional && !automatic(s, &s->spec->attrs[i])) return true;
    return false;
}

static const char *c_type(ir_attr_type t) {
    switch (t) {
    case IR_AT_INT: return "int64_t";
    case IR_AT_NUM: return "double";
    case IR_AT_STR: return "const char *";
    case IR_AT_BOOL: return "bool";
    case IR_AT_TYPE: return "rk_type";
    case IR_AT_LIST: break;
    }
    rk_bug("list attributes have hand-written builders");
}
static const char *opt_type(ir_attr_type t) {
    switch (t) {
    case IR_AT_INT: return "rk_opt_int";
    case IR_AT_NUM: return "rk_opt_num";
    case IR_AT_STR: return "const char *";
    case IR_AT_BOOL: return "rk_opt_bool";
    case IR_AT_TYPE: return "rk_type";
    case IR_AT_LIST: break;
    }
    rk_bug("list attributes have hand-written builders");
}
static const char *setter(ir_attr_type t, bool opt) {
    switch (t) {
    case IR_AT_INT: return opt ? "ir_opt_int" : "ir_arg_int";
    case IR_AT_NUM: return opt ? "ir_opt_num" : "ir_arg_num";
    case IR_AT_STR: return opt ? "ir_opt_str" : "ir_arg_str";
    case IR_AT_BOOL: return opt ? "ir_opt_bool" : "ir_arg_bool";
    case IR_AT_TYPE: return opt ? "ir_opt_type" : "ir_arg_type";
    case IR_AT_LIST: break;
    }
    rk_bug("list attributes have hand-written builders");
}

static void spaced(FILE *f, const char *ct, const char *name) {
    fprintf(f, "%s%s%s", ct, ct[strlen(ct) - 1] == '*' ? "" : " ", name);
}

/* Parameters after k: required strings, operands, the result type, other
 * required attributes, the results of a multi-result op; `names` prints the
 * call's argument list instead. */
static void params(FILE *f, const shape *s, bool names) {
    const ir_op_spec *sp = s->spec;
    fprintf(f, names ? "k" : "rk_kernel *k");
    for (uint32_t i = 0; i < sp->nattrs; i++)
        if (!sp->attrs[i].optional && sp->attrs[i].type == IR_AT_STR) {
            fprintf(f, ", ");
            if (names) fprintf(f, "%s", sp->attrs[i].key);
            else spaced(f, c_type(IR_AT_STR), sp->attrs[i].key);
        }
    if (s->smem) fprintf(f, names ? ", smem, idx" : ", rk_value smem, const rk_value *idx");
    for (uint32_t i = 0; i < s->nfixed; i++) fprintf(f, names ? ", %s" : ", rk_value %s", operand_name(s, i));
    if (s->nres == 1 && s->res[0] == RES_TO) fprintf(f, names ? ", to" : ", rk_type to");
    for (uint32_t i = 0; i < sp->nattrs; i++)
        if (!sp->attrs[i].optional && sp->attrs[i].type != IR_AT_STR) {
            RK_ASSERT(strlen(sp->attrs[i].key) > 1 || !strchr("abcdefghkv", sp->attrs[i].key[0]),
                      "an attribute named like an operand");
            fprintf(f, ", ");
            if (names) fprintf(f, "%s", sp->attrs[i].key);
            else spaced(f, c_type(sp->attrs[i].type), sp->attrs[i].key);
        }
    if (s->nres > 1) fprintf(f, names ? ", out" : ", rk_value out[%u]", s->nres);
}

static const char *ret_type(const shape *s) { return s->nres == 1 ? "rk_value" : "void"; }

static void prototype(FILE *f, const shape *s, bool ex) {
    fprintf(f, "%s rk_build_%s%s(", ret_type(s), s->info->fn, ex ? "_ex" : "");
    params(f, s, false);
    if (ex) fprintf(f, ", const rk_%s_opts *opts", s->info->fn);
    fprintf(f, ")");
}

/* ---- the header ------------------------------------------------------------------------ */
static void attr_doc(FILE *f, const ir_attr_spec *a) {
    if (a->has_range) fprintf(f, " [%lld, %lld]", (long long)a->lo, (long long)a->hi);
    for (uint32_t j = 0; j < a->nenum; j++) fprintf(f, "%s%s", j ? "|" : " {", a->enums[j]);
    if (a->nenum) fprintf(f, "}");
}

static void gen_header(FILE *f, rk_kernel *k) {
    fprintf(f, "/* rocke — typed builders generated from the op table (include/rocke/ops.def):\n"
               " * one rk_build_<fn> per row, an rk_<fn>_opts struct and rk_build_<fn>_ex for\n"
               " * rows with optional attributes. Generated by tests/ir/test_build_gen.c\n"
               " * (run it with --update after changing the table); do not edit.\n"
               " * Included by rocke/ir.h. Layer: ir. */\n"
               "#ifndef ROCKE_IR_BUILDERS_H\n#define ROCKE_IR_BUILDERS_H\n");
    for (int c = 1; c < RK_OP__COUNT; c++) {
        if (hand_written((rk_opcode)c)) continue;
        shape s = shape_of((rk_opcode)c, k);
        fprintf(f, "\n/* %s  %s", s.info->name, s.info->sig);
        if (s.info->feat) fprintf(f, "  (%s)", rk_feature_name(s.info->feat));
        for (uint32_t i = 0; i < s.spec->nattrs; i++) {
            const ir_attr_spec *a = &s.spec->attrs[i];
            if (a->optional || automatic(&s, a)) continue;
            fprintf(f, "\n *   %s", a->key);
            attr_doc(f, a);
        }
        fprintf(f, " */\n");
        if (has_opts(&s)) {
            fprintf(f, "typedef struct rk_%s_opts {\n", s.info->fn);
            for (uint32_t i = 0; i < s.spec->nattrs; i++) {
                const ir_attr_spec *a = &s.spec->attrs[i];
                if (!a->optional || automatic(&s, a)) continue;
                fprintf(f, "    ");
                spaced(f, opt_type(a->type), a->key);
                fprintf(f, ";");
                if (a->has_range || a->nenum) {
                    fprintf(f, "  /*");
                    attr_doc(f, a);
                    fprintf(f, " */");
                }
                fprintf(f, "\n");
            }
            fprintf(f, "} rk_%s_opts;\n", s.info->fn);
        }
        prototype(f, &s, false);
        fprintf(f, ";\n");
        if (has_opts(&s)) {
            prototype(f, &s, true);
            fprintf(f, ";\n");
        }
    }
    fprintf(f, "\n#endif\n");
}

/* ---- the definitions ----------------------------------------------------------------------- */
/* The enum tail of each row (not among the row's strings). */
static const char *const enum_names[RK_OP__COUNT] = {
#define RK_OP(E, ...) [RK_OP_##E] = #E,
#include "rocke/ops.def"
};

/* Keys the library names (ir_int.h) are passed as its shared strings, which
 * the checks match by pointer. */
static void key_arg(char *out, size_t n, const char *key) {
#define IR_KEY_NAME(name) #name,
    static const char *const named[] = {IR_KEYS(IR_KEY_NAME)};
#undef IR_KEY_NAME
    for (size_t i = 0; i < RK_COUNTOF(named); i++)
        if (!strcmp(named[i], key)) { snprintf(out, n, "ir_key_%s", key); return; }
    snprintf(out, n, "\"%s\"", key);
}

static void body(FILE *f, const shape *s) {
    char key[64];
    const char *E = enum_names[s->code];
    fprintf(f, " {\n");
    const char *in = "NULL", *nin = "0";
    char nbuf[16];
    if (s->smem) {
        fprintf(f, "    rk_value in[IR_SMEM_OPERANDS];\n");
        if (s->nfixed) fprintf(f, "    const rk_value tail[] = {v};\n");
        fprintf(f, "    const uint32_t nin = ir_smem_operands(k, RK_OP_%s, smem, idx, %s, %u, in);\n", E,
                s->nfixed ? "tail" : "NULL", s->nfixed);
        in = "in";
        nin = "nin";
    } else if (s->nfixed) {
        fprintf(f, "    const rk_value in[] = {");
        for (uint32_t i = 0; i < s->nfixed; i++) fprintf(f, "%s%s", i ? ", " : "", operand_name(s, i));
        fprintf(f, "};\n");
        in = "in";
        snprintf(nbuf, sizeof nbuf, "%u", s->nfixed);
        nin = nbuf;
    }
    if (s->nres) {
        fprintf(f, "    const rk_type rt[] = {");
        for (uint32_t i = 0; i < s->nres; i++) {
            fprintf(f, "%s", i ? ", " : "");
            if (s->res[i] == RES_TO) fprintf(f, "to");
            for (const char *p = s->expr[i]; s->res[i] == RES_EXPR && *p; p++)
                if (!strncmp(p, "@OP", 3)) { fprintf(f, "RK_OP_%s", E); p += 2; }
                else fputc(*p, f);
        }
        fprintf(f, "};\n");
    }
    fprintf(f, "    rk_op *op = %srk_emit(k, RK_OP_%s, %s, %s, %s, %u);\n", s->smem ? "!nin ? NULL : " : "",
            E, in, nin, s->nres ? "rt" : "NULL", s->nres);
    if (s->auto_rank) fprintf(f, "    ir_arg_int(k, op, ir_key_rank, (int64_t)nin - %u);\n", 1 + s->nfixed);
    if (s->auto_target) fprintf(f, "    ir_arg_type(k, op, ir_key_target, to);\n");
    for (uint32_t i = 0; i < s->spec->nattrs; i++) {
        const ir_attr_spec *a = &s->spec->attrs[i];
        if (a->optional || automatic(s, a)) continue;
        key_arg(key, sizeof key, a->key);
        fprintf(f, "    %s(k, op, %s, %s);\n", setter(a->type, false), key, a->key);
    }
    if (has_opts(s)) {
        fprintf(f, "    if (opts) {\n");
        for (uint32_t i = 0; i < s->spec->nattrs; i++) {
            const ir_attr_spec *a = &s->spec->attrs[i];
            if (!a->optional || automatic(s, a)) continue;
            key_arg(key, sizeof key, a->key);
            fprintf(f, "        %s(k, op, %s, opts->%s);\n", setter(a->type, true), key, a->key);
        }
        fprintf(f, "    }\n");
    }
    if (s->nres == 1) fprintf(f, "    return ir_built(k, op);\n");
    else if (s->nres) fprintf(f, "    ir_built_out(k, op, out, %u);\n", s->nres);
    else fprintf(f, "    ir_built_void(k, op);\n");
    fprintf(f, "}\n");
}

static void gen_source(FILE *f, rk_kernel *k) {
    fprintf(f, "/* rocke — definitions of the typed builders generated from the op table\n"
               " * (declared in rocke/ir_builders.h). Generated by tests/ir/test_build_gen.c\n"
               " * (run it with --update after changing the table); do not edit.\n"
               " * Layer: ir. */\n"
               "#include \"ir_int.h\"\n");
    for (int c = 1; c < RK_OP__COUNT; c++) {
        if (hand_written((rk_opcode)c)) continue;
        shape s = shape_of((rk_opcode)c, k);
        fprintf(f, "\n/* %s */\n", s.info->name);
        if (has_opts(&s)) {
            prototype(f, &s, true);
            body(f, &s);
            prototype(f, &s, false);
            fprintf(f, " {\n    %srk_build_%s_ex(", s.nres == 1 ? "return " : "", s.info->fn);
            params(f, &s, true);
            fprintf(f, ", NULL);\n}\n");
        } else {
            prototype(f, &s, false);
            body(f, &s);
        }
    }
}

/* ---- the test ----------------------------------------------------------------------------------- */
static char *generate(void (*fn)(FILE *, rk_kernel *)) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    RK_ASSERT(f != NULL, "open_memstream");
    rk_kernel *k = rk_kernel_new("gen");
    fn(f, k);
    rk_kernel_free(k);
    fclose(f);
    return buf;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

static const struct { const char *path; void (*fn)(FILE *, rk_kernel *); } outputs[] = {
    {ROCKE_SOURCE_DIR "/include/rocke/ir_builders.h", gen_header},
    {ROCKE_SOURCE_DIR "/src/ir/build_gen.c", gen_source},
};

static void test_generated_files_are_current(void **state) {
    (void)state;
    for (size_t i = 0; i < RK_COUNTOF(outputs); i++) {
        char *want = generate(outputs[i].fn), *have = slurp(outputs[i].path);
        if (!have || strcmp(want, have) != 0)
            fail_msg("%s is not what the op table gives: run build/ir_test_build_gen --update", outputs[i].path);
        free(want);
        free(have);
    }
}

/* Generation is a pure function of the table. */
static void test_generation_is_deterministic(void **state) {
    (void)state;
    char *a = generate(gen_source), *b = generate(gen_source);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--update")) {
        for (size_t i = 0; i < RK_COUNTOF(outputs); i++) {
            char *text = generate(outputs[i].fn);
            FILE *f = fopen(outputs[i].path, "wb");
            if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
                fprintf(stderr, "cannot write %s\n", outputs[i].path);
                return 1;
            }
            printf("wrote %s\n", outputs[i].path);
            free(text);
        }
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_files_are_current),
        cmocka_unit_test(test_generation_is_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
