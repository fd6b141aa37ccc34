/* rocke tests — the op table walked op by op: row i describes code i (MIR's
 * self-check, against the file's text), names round-trip, attribute specs parse, flags are coherent,
 * name hints never end in a digit, and every op has a sample kernel that builds, verifies, and is legal
 * exactly on the targets that have its features. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ir/ir_int.h"
#include "support/op_samples.h"

/* ---- the table as text ----------------------------------------------------------------- */
/* ops.def is read here as text, apart from the preprocessor: row i of the
 * file must be code i in the enum, and every column the library's table
 * (optable.c's expansion of the X-macro) holds must be what the row says.
 * A row hidden behind a conditional, or a consumer macro that takes its
 * columns in another order, fails here. */
static const struct { const char *name; uint32_t bit; } flag_names[] = {
    {"RK_F_PURE", RK_F_PURE},     {"RK_F_COMMUT", RK_F_COMMUT}, {"RK_F_CONVERGENT", RK_F_CONVERGENT},
    {"RK_F_READS", RK_F_READS},   {"RK_F_WRITES", RK_F_WRITES}, {"RK_F_BARRIER", RK_F_BARRIER},
    {"RK_F_ALLOC", RK_F_ALLOC},   {"RK_F_REGION", RK_F_REGION}, {"RK_F_TERM", RK_F_TERM},
    {"RK_FEAT_AMD", RK_FEAT_AMD}, {"RK_FEAT_NV", RK_FEAT_NV},   {"RK_FEAT_GFX9", RK_FEAT_GFX9},
    {"RK_FEAT_GFX940", RK_FEAT_GFX940}, {"RK_FEAT_GFX950", RK_FEAT_GFX950}, {"RK_FEAT_GFX10P", RK_FEAT_GFX10P},
    {"RK_FEAT_GFX11P", RK_FEAT_GFX11P}, {"RK_FEAT_SM80", RK_FEAT_SM80}, {"RK_FEAT_SM90", RK_FEAT_SM90},
    {"RK_FEAT_SM90A", RK_FEAT_SM90A}, {"RK_FEAT_XF32", RK_FEAT_XF32},
};
static const char *const rule_names[] = {
#define R(r) #r,
    RK_RULES(R)
#undef R
};

/* "A|B" or "0" as bits. */
static uint32_t bits_of(const char *s) {
    uint32_t v = 0;
    while (*s) {
        size_t n = strcspn(s, "|");
        bool found = n == 1 && *s == '0';
        for (size_t i = 0; i < RK_COUNTOF(flag_names) && !found; i++)
            if (strlen(flag_names[i].name) == n && !strncmp(flag_names[i].name, s, n)) {
                v |= flag_names[i].bit;
                found = true;
            }
        if (!found) fail_msg("unknown flag '%.*s' in ops.def", (int)n, s);
        s += n + (s[n] == '|');
    }
    return v;
}

/* "3" or "RK_MIN(3)" as the table encodes it. */
static uint16_t count_of(const char *s) {
    if (!strncmp(s, "RK_MIN(", 7)) return (uint16_t)RK_MIN(atoi(s + 7));
    return (uint16_t)atoi(s);
}

/* Split a row's argument list at top-level commas; quoted fields lose their
 * quotes. Returns the field count. */
static int fields_of(const char *row, char f[12][160]) {
    int n = 0, depth = 0;
    size_t j = 0;
    bool quoted = false;
    for (const char *p = row; *p && n < 12; p++) {
        char ch = *p;
        if (ch == '"') { quoted = !quoted; continue; }
        if (!quoted && ch == '(') depth++;
        if (!quoted && ch == ')' && depth-- == 0) { f[n][j] = '\0'; return n + 1; }
        if (!quoted && depth == 0 && ch == ',') { f[n++][j] = '\0'; j = 0; continue; }
        if (!quoted && ch == ' ') continue;          /* quoted text keeps its spaces */
        if (j + 1 < 160) f[n][j++] = ch;
    }
    return -1;
}

static void test_rows(void **state) {
    (void)state;
    FILE *fp = fopen(ROCKE_SOURCE_DIR "/include/rocke/ops.def", "r");
    assert_non_null(fp);
    char line[1024];
    int code = 0;
    while (fgets(line, sizeof line, fp)) {
        if (strncmp(line, "RK_OP(", 6) != 0) continue;
        code++;
        char f[12][160];
        if (fields_of(line + 6, f) != 12) fail_msg("ops.def row %d does not have 12 columns: %s", code, line);
        assert_true(code < RK_OP__COUNT);
        const rk_op_info *info = rk_op_info_of((rk_opcode)code);
        if (strcmp(info->name, f[1]) != 0) fail_msg("row %d of ops.def is %s but code %d is %s", code, f[1], code, info->name);
        assert_int_equal(rk_opcode_from_name(f[1]), code);
        assert_string_equal(info->fn, f[2]);
        assert_int_equal(info->nin, count_of(f[3]));
        assert_int_equal(info->nout, count_of(f[4]));
        assert_int_equal(info->nreg, atoi(f[5]));
        assert_string_equal(rule_names[info->rule], f[6]);
        assert_string_equal(info->sig, f[7]);
        assert_int_equal(info->flags, bits_of(f[8]));
        assert_int_equal(info->feat, bits_of(f[9]));
        assert_string_equal(info->hint, f[10]);
        assert_string_equal(info->attrs, f[11]);
    }
    fclose(fp);
    assert_int_equal(code, RK_OP__COUNT - 1);                         /* no row the preprocessor hides */
}

static void test_names(void **state) {
    (void)state;
    for (int c = 1; c < RK_OP__COUNT; c++) {
        const rk_op_info *info = rk_op_info_of((rk_opcode)c);
        assert_int_equal(rk_opcode_from_name(info->name), c);
        /* "family.op" */
        const char *dot = strchr(info->name, '.');
        assert_non_null(dot);
        assert_true(dot > info->name && dot[1] != '\0');
        for (int d = c + 1; d < RK_OP__COUNT; d++) {
            assert_string_not_equal(info->name, rk_opcode_name((rk_opcode)d));
            assert_string_not_equal(info->fn, rk_op_info_of((rk_opcode)d)->fn);
        }
    }
    assert_int_equal(rk_opcode_from_name("scf.for_iter"), RK_OP_FOR);
    assert_int_equal(rk_opcode_from_name("arith.nope"), RK_OP_INVALID);
    assert_int_equal(rk_opcode_from_name(""), RK_OP_INVALID);
    assert_int_equal(rk_opcode_from_name(NULL), RK_OP_INVALID);
    assert_string_equal(rk_opcode_name((rk_opcode)(RK_OP__COUNT + 3)), "<invalid>");
    assert_ptr_equal(rk_op_info_of((rk_opcode)-1), rk_op_info_of(RK_OP_INVALID));
}

/* The spec string, split by hand, matches the parsed spec. */
static void test_attr_specs(void **state) {
    (void)state;
    for (int c = 1; c < RK_OP__COUNT; c++) {
        const char *s = rk_op_info_of((rk_opcode)c)->attrs;
        const ir_op_spec *sp = ir_op_spec_of((rk_opcode)c);
        uint32_t n = 0;
        const char *p = s;
        while (*p) {
            while (*p == ' ' || *p == ',') p++;
            if (!*p) break;
            bool opt = *p == '?';
            if (opt) p++;
            const char *colon = strchr(p, ':');
            assert_non_null(colon);
            assert_true(n < sp->nattrs);
            const ir_attr_spec *a = &sp->attrs[n];
            assert_int_equal(strlen(a->key), (size_t)(colon - p));
            assert_memory_equal(a->key, p, (size_t)(colon - p));
            assert_int_equal(a->optional, opt);
            char kind = colon[1];
            assert_non_null(strchr("ifsblt", kind));
            static const ir_attr_type kinds[] = {['i'] = IR_AT_INT, ['f'] = IR_AT_NUM, ['s'] = IR_AT_STR,
                                                 ['b'] = IR_AT_BOOL, ['l'] = IR_AT_LIST, ['t'] = IR_AT_TYPE};
            assert_int_equal(a->type, kinds[(unsigned char)kind]);
            p = colon + 2;
            if (*p == '[') {
                assert_true(a->has_range);
                assert_true(a->lo <= a->hi);
                p = strchr(p, ']') + 1;
            } else if (*p == '{') {
                const char *e = strchr(p, '}');
                uint32_t bars = 0;
                for (const char *q = p; q < e; q++) bars += *q == '|';
                assert_int_equal(a->nenum, bars + 1);
                for (uint32_t j = 0; j < a->nenum; j++) assert_true(a->enums[j][0] != '\0');
                p = e + 1;
            }
            n++;
        }
        assert_int_equal(n, sp->nattrs);
        /* keys are unique */
        for (uint32_t i = 0; i < sp->nattrs; i++)
            for (uint32_t j = i + 1; j < sp->nattrs; j++) assert_string_not_equal(sp->attrs[i].key, sp->attrs[j].key);
    }
}

static void test_flags(void **state) {
    (void)state;
    for (int c = 1; c < RK_OP__COUNT; c++) {
        const rk_op_info *info = rk_op_info_of((rk_opcode)c);
        uint32_t f = info->flags;
        if (f & RK_F_PURE) assert_int_equal(f & (RK_F_WRITES | RK_F_READS | RK_F_BARRIER | RK_F_ALLOC), 0);
        if (f & RK_F_COMMUT) {
            assert_true(f & RK_F_PURE);
            assert_int_equal(info->nin, 2);
        }
        assert_int_equal((f & RK_F_REGION) != 0, info->nreg > 0);
        if (f & RK_F_TERM) assert_int_equal(info->nout, 0);
        /* every op with results names them */
        if (RK_COUNT_N(info->nout) || RK_COUNT_IS_MIN(info->nout)) assert_true(info->hint[0] != '\0');
        if (info->feat) assert_string_not_equal(rk_feature_name(info->feat), "none");
    }
    /* landmine: barrier-like ops are never pure (a DCE would delete them) */
    static const rk_opcode barriers[] = {RK_OP_SYNC, RK_OP_SYNC_LDS_ONLY, RK_OP_S_BARRIER_BARE, RK_OP_SYNC_HALF_BLOCK,
                                         RK_OP_NAMED_BARRIER, RK_OP_NAMED_BARRIER_ARRIVE, RK_OP_S_WAITCNT, RK_OP_SCHED_BARRIER, RK_OP_MMA,
                                         RK_OP_INLINE_ASM};
    for (size_t i = 0; i < RK_COUNTOF(barriers); i++)
        assert_int_equal(rk_op_info_of(barriers[i])->flags & RK_F_PURE, 0);
}

/* Value names are hint + counter (ir_int.h), so a hint must never end in a
 * digit: "%tr16" + 3 would print "%tr163", which splits back as "tr" + 163
 * or "tr1" + 63 alike. Every hint is empty or an identifier without a
 * trailing digit, and a generated name splits back into exactly it. */
static void test_hints(void **state) {
    (void)state;
    for (int c = 1; c < RK_OP__COUNT; c++) {
        const rk_op_info *info = rk_op_info_of((rk_opcode)c);
        const char *h = info->hint;
        size_t n = strlen(h);
        if (!n) continue;
        if (!ir_valid_ident(h) || (h[n - 1] >= '0' && h[n - 1] <= '9'))
            fail_msg("%s: hint '%s' is not an identifier ending in a non-digit", info->name, h);
        for (unsigned num = 0; num < 1000; num += 7) {
            char name[64];
            snprintf(name, sizeof name, "%s%u", h, num);
            size_t len = strlen(name);
            while (len && name[len - 1] >= '0' && name[len - 1] <= '9') len--;
            assert_int_equal(len, n);
            assert_memory_equal(name, h, n);
            assert_int_equal(strtoul(name + len, NULL, 10), num);
        }
    }
}

/* ---- samples ------------------------------------------------------------------------------- */
typedef struct fake_target { rk_verify_target vt; const char *sample_for; } fake_target;

static const fake_target targets[] = {
    {{"gfx90a", RK_FEAT_AMD | RK_FEAT_GFX9, 64, RK_S_NONE, RK_S_NONE, NULL, NULL}, "gfx90a"},
    {{"gfx942", RK_FEAT_AMD | RK_FEAT_GFX9 | RK_FEAT_GFX940, 64, RK_S_FP8E4M3FNUZ, RK_S_BF8E5M2FNUZ, NULL, NULL},
     "gfx942"},
    {{"gfx950", RK_FEAT_AMD | RK_FEAT_GFX9 | RK_FEAT_GFX940 | RK_FEAT_GFX950, 64, RK_S_FP8E4M3, RK_S_BF8E5M2, NULL,
      NULL}, NULL},
    {{"gfx1201", RK_FEAT_AMD | RK_FEAT_GFX10P | RK_FEAT_GFX11P, 32, RK_S_FP8E4M3, RK_S_BF8E5M2, NULL, NULL},
     "gfx1201"},
    {{"sm_80", RK_FEAT_NV | RK_FEAT_SM80, 32, RK_S_FP8E4M3, RK_S_BF8E5M2, NULL, NULL}, "sm_80"},
    {{"sm_90a", RK_FEAT_NV | RK_FEAT_SM80 | RK_FEAT_SM90 | RK_FEAT_SM90A, 32, RK_S_FP8E4M3, RK_S_BF8E5M2, NULL, NULL},
     "sm_90a"},
};

static void show(const rk_diags *d) {
    char *t = rk_diags_text(d);
    fprintf(stderr, "%s", t);
    rk_string_free(t);
}

static void test_every_op_has_a_sample(void **state) {
    (void)state;
    for (int c = 1; c < RK_OP__COUNT; c++) {
        rk_kernel *k = op_sample_kernel((rk_opcode)c, NULL);
        if (!k) fail_msg("no sample for %s: %s", rk_opcode_name((rk_opcode)c), rk_error_message());
        assert_int_equal(op_sample_count(k, (rk_opcode)c), 1);
        rk_diags d;
        rk_diags_init(&d);
        rk_status st = rk_verify(k, NULL, &d);
        if (st != RK_OK || d.n) {
            fprintf(stderr, "sample %s:\n", rk_opcode_name((rk_opcode)c));
            show(&d);
        }
        assert_int_equal(st, RK_OK);
        assert_int_equal(d.n, 0);                                  /* not even a warning */
        rk_diags_free(&d);
        rk_kernel_free(k);
    }
    assert_null(op_sample_kernel(RK_OP_INVALID, NULL));
    assert_null(op_sample_kernel(RK_OP__COUNT, NULL));
}

/* Legal samples verify on the target; illegal ones fail naming the op. */
static void test_samples_on_targets(void **state) {
    (void)state;
    uint32_t legal = 0, illegal = 0;
    for (size_t t = 0; t < RK_COUNTOF(targets); t++) {
        const rk_verify_target *vt = &targets[t].vt;
        for (int c = 1; c < RK_OP__COUNT; c++) {
            rk_kernel *k = op_sample_kernel((rk_opcode)c, targets[t].sample_for);
            assert_non_null(k);
            rk_diags d;
            rk_diags_init(&d);
            rk_status st = rk_verify(k, vt, &d);
            bool want = op_sample_legal((rk_opcode)c, vt->features);
            /* the MMA sample's atom is the target family's; its feature
             * row is 0, so only the check_mma hook could refuse it */
            if (c == RK_OP_MMA) want = true;
            if ((st == RK_OK) != want) {
                fprintf(stderr, "%s on %s: expected %s\n", rk_opcode_name((rk_opcode)c), vt->name,
                        want ? "legal" : "illegal");
                show(&d);
            }
            assert_int_equal(st == RK_OK, want);
            if (!want) {
                bool named = false;
                for (uint32_t i = 0; i < d.n; i++)
                    named = named || (strstr(d.items[i].msg, rk_opcode_name((rk_opcode)c)) &&
                                      strstr(d.items[i].msg, vt->name) && strstr(d.items[i].msg, "offered by"));
                assert_true(named);
                illegal++;
            } else {
                legal++;
            }
            rk_diags_free(&d);
            rk_kernel_free(k);
        }
    }
    assert_true(legal > 600);
    assert_true(illegal > 100);
}

static void test_sample_details(void **state) {
    (void)state;
    /* the MMA sample uses a real atom with its fragment types */
    rk_kernel *k = op_sample_kernel(RK_OP_MMA, "gfx942");
    const rk_op *mma = NULL;
    const rk_region *b = rk_kernel_body(k);
    for (uint32_t i = 0; i < b->nops; i++)
        if (b->ops[i]->code == RK_OP_MMA) mma = b->ops[i];
    assert_non_null(mma);
    assert_string_equal(rk_attrs_str(&mma->attrs, "op_id"), "mfma_f32_16x16x16_f16");
    assert_string_equal(rk_type_name(k, rk_value_type(k, mma->in[0])), "vec<f16x4>");
    assert_string_equal(rk_type_name(k, rk_value_type(k, mma->in[1])), "vec<f16x4>");
    assert_string_equal(rk_type_name(k, rk_value_type(k, mma->in[2])), "vec<f32x4>");
    rk_kernel_free(k);
    k = op_sample_kernel(RK_OP_MMA, "sm_90");
    b = rk_kernel_body(k);
    for (uint32_t i = 0; i < b->nops; i++)
        if (b->ops[i]->code == RK_OP_MMA) mma = b->ops[i];
    assert_string_equal(rk_attrs_str(&mma->attrs, "op_id"), "mma_m16n8k16_f32_f16");
    assert_string_equal(rk_type_name(k, rk_value_type(k, mma->in[0])), "vec<f16x8>");
    rk_kernel_free(k);

    /* fp8 samples follow the target's dialect */
    k = op_sample_kernel(RK_OP_CVT_F32_TO_FP8, "gfx942");
    assert_non_null(strstr(rk_type_name(k, rk_kernel_param(k, rk_kernel_nparams(k) - 1)->type), "fp8e4m3fnuz"));
    rk_kernel_free(k);
    k = op_sample_kernel(RK_OP_CVT_F32_TO_FP8, "gfx950");
    assert_string_equal(rk_type_name(k, rk_kernel_param(k, rk_kernel_nparams(k) - 1)->type), "ptr<fp8e4m3,global>");
    rk_kernel_free(k);

    /* the loop sample is a real loop with a carried value */
    k = op_sample_kernel(RK_OP_FOR, NULL);
    assert_int_equal(op_sample_count(k, RK_OP_YIELD), 1);
    b = rk_kernel_body(k);
    const rk_op *f = NULL;
    for (uint32_t i = 0; i < b->nops; i++)
        if (b->ops[i]->code == RK_OP_FOR) f = b->ops[i];
    assert_int_equal(f->nout, 1);
    assert_int_equal(f->regions[0].nargs, 2);
    rk_kernel_free(k);

    /* legality helper */
    assert_true(op_sample_legal(RK_OP_ADD, 0));
    assert_false(op_sample_legal(RK_OP_PERMLANE64, RK_FEAT_AMD | RK_FEAT_GFX9));
    assert_true(op_sample_legal(RK_OP_PERMLANE64, RK_FEAT_AMD | RK_FEAT_GFX11P));
    assert_false(op_sample_legal(RK_OP_MMA, RK_FEAT_AMD | RK_FEAT_GFX10P));
    assert_true(op_sample_legal(RK_OP_MMA, RK_FEAT_NV | RK_FEAT_SM80));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_attr_specs),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_hints),
        cmocka_unit_test(test_every_op_has_a_sample),
        cmocka_unit_test(test_samples_on_targets),
        cmocka_unit_test(test_sample_details),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
