/* rocke tests — the gfx950 16x16x128 f8f6f4 atoms: what the target verifier
 * refuses (other chips, operand counts, per-operand formats, scale types,
 * opsel, two constant-zero scales), the LLVM text per flavor (the 9-operand
 * mfma.scale intrinsic; literal zeros for the unscaled atom) and, with
 * llc-22, the instruction it selects: v_mfma_f32_16x16x128_f8f6f4 for the
 * unscaled atom, v_mfma_scale_f32_16x16x128_f8f6f4 with the cbsz/blgp/op_sel
 * fields for the scaled one. Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "lower/llc_util.h"

static const char *const UNSCALED = "mfma_f32_16x16x128_fp8";
static const char *const SCALED = "mfma_scale_f32_16x16x128_f8f6f4";

/* How the kernel's atom is made (fields left 0 give the legal default). */
typedef struct spec {
    const char *op_id;
    rk_scalar ae, be;          /* A/B element types (NONE: fp8e4m3) */
    uint32_t alen;             /* A/B fragment length (0: 32) */
    uint32_t nin;              /* operands (0: 3 unscaled, 5 scaled) */
    rk_type scale_t;           /* scale operand type (NONE: i32) */
    int opsel_a, opsel_b;      /* -1: no attribute */
    bool zero_scales;          /* both scales the constant 0 */
} spec;

/* A, B: 32 x 8-bit values per lane, loaded as 8 i32 words and bitcast (one
 * vector load carries at most 16 elements); scales from SA/SB per lane. */
static rk_value frag(rk_kernel *k, rk_value p, rk_value tid, rk_scalar e, uint32_t n) {
    rk_value idx = rk_build_mul(k, tid, rk_const_i32(k, (int32_t)(n / 4)));
    rk_value w = rk_load_global(k, p, idx, n / 4);
    return rk_build_bitcast(k, w, rk_type_vec(k, (rk_type){e}, n));
}

static rk_kernel *atom_kernel(const spec *sp) {
    bool scaled = strcmp(sp->op_id, SCALED) == 0;
    rk_scalar ae = sp->ae ? sp->ae : RK_S_FP8E4M3, be = sp->be ? sp->be : RK_S_FP8E4M3;
    uint32_t alen = sp->alen ? sp->alen : 32, nin = sp->nin ? sp->nin : scaled ? 5 : 3;
    rk_type st = sp->scale_t.id ? sp->scale_t : RK_T_I32;
    rk_kernel *k = rk_kernel_new("mfma_f8f6f4");
    rk_value pa = rk_add_param(k, "A", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value pb = rk_add_param(k, "B", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value pc = rk_add_param(k, "C", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value psa = rk_add_param(k, "SA", rk_type_ptr(k, st, RK_AS_GLOBAL), NULL);
    rk_value psb = rk_add_param(k, "SB", rk_type_ptr(k, st, RK_AS_GLOBAL), NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value in[5];
    in[0] = frag(k, pa, tid, ae, alen);
    in[1] = frag(k, pb, tid, be, alen);
    rk_value ic = rk_build_mul(k, tid, rk_const_i32(k, 4));
    in[2] = rk_load_global(k, pc, ic, 4);
    if (sp->zero_scales) {
        in[3] = rk_const_i32(k, 0);
        in[4] = rk_const_i32(k, 0);
    } else {
        in[3] = rk_load_global(k, psa, tid, 1);
        in[4] = rk_load_global(k, psb, tid, 1);
        rk_value_set_hint(k, in[3], "sa");
        rk_value_set_hint(k, in[4], "sb");
    }
    const rk_mma_opts mo = {.opsel_a = {sp->opsel_a >= 0, sp->opsel_a}, .opsel_b = {sp->opsel_b >= 0, sp->opsel_b}};
    rk_value d = rk_build_mma_arr(k, sp->op_id, in, nin, &mo);
    rk_store_global(k, pc, ic, d);
    rk_build_return(k);
    return k;
}

static spec legal(const char *op_id) { return (spec){.op_id = op_id, .opsel_a = -1, .opsel_b = -1}; }

/* Lowering on target must be refused by the verifier with every fragment. */
static void expect_refusal(const spec *sp, const char *target, ...) {
    rk_kernel *k = atom_kernel(sp);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = NULL;
    rk_status s = rk_lower_llvm(k, rk_target_find(target), RK_LLVM22, &ll);
    if (s != RK_ERR_VERIFY) fail_msg("%s on %s: expected a verifier refusal, got %s", sp->op_id, target, rk_status_name(s));
    assert_null(ll);
    va_list ap;
    va_start(ap, target);
    for (const char *f = va_arg(ap, const char *); f; f = va_arg(ap, const char *))
        if (!strstr(rk_error_message(), f)) fail_msg("message lacks '%s': %s", f, rk_error_message());
    va_end(ap);
    rk_kernel_free(k);
}

static char *lower_ok(const spec *sp, rk_llvm_flavor f) {
    rk_kernel *k = atom_kernel(sp);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = NULL;
    if (rk_lower_llvm(k, rk_target_find("gfx950"), f, &ll) != RK_OK) fail_msg("%s: %s", sp->op_id, rk_error_message());
    rk_kernel_free(k);
    return ll;
}

static void expect_has(const char *text, const char *needle, bool want) {
    if ((strstr(text, needle) != NULL) == want) return;
    fprintf(stderr, "%s\n", text);
    fail_msg("%s '%s' in the text above", want ? "missing" : "unexpected", needle);
}

/* gfx950 assembly of an .ll from llc-22 (malloc'd); NULL when llc is absent. */
static char *llc_asm(const char *ll) {
    if (!llc_path()) return NULL;
    char in[600], cmd[2048];
    llc_tmp(in, sizeof in, "mfma_scaled");
    strncat(in, ".ll", sizeof in - strlen(in) - 1);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs(ll, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx950 -filetype=asm '%s' -o - 2>&1", llc_path(),
             in);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 2) buf = realloc(buf, cap *= 2);
    }
    assert_non_null(buf);
    buf[len] = '\0';
    int st = pclose(p);
    remove(in);
    if (st != 0) fail_msg("llc-22 rejected:\n%s\n%s", buf, ll);
    return buf;
}

static void t_refused_elsewhere(void **state) {
    (void)state;
    static const char *const others[] = {"gfx942", "gfx90a", "sm_80", "sm_90", "sm_90a"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        spec u = legal(UNSCALED), s = legal(SCALED);
        /* AMD chips lack the gfx950 feature, NVIDIA ones AMDGPU itself */
        const char *needs = others[i][0] == 'g' ? "needs gfx950" : "needs AMDGPU";
        expect_refusal(&u, others[i], UNSCALED, others[i], needs, NULL);
        expect_refusal(&s, others[i], SCALED, others[i], needs, NULL);
    }
}

static void t_bad_operands(void **state) {
    (void)state;
    spec s = legal(SCALED);
    s.nin = 3;
    expect_refusal(&s, "gfx950", SCALED, "exactly 5 operands (a, b, c, a_scale, b_scale), got 3", NULL);
    s = legal(UNSCALED);
    s.nin = 5;
    expect_refusal(&s, "gfx950", UNSCALED, "exactly 3 operands (a, b, c), got 5", NULL);
    /* formats: the unscaled atom is fp8 only; the scaled one fp8 or bf8 per operand */
    s = legal(UNSCALED);
    s.be = RK_S_BF8E5M2;
    expect_refusal(&s, "gfx950", UNSCALED, "gfx950", "B fragments of type vec<fp8e4m3x32>", "vec<bf8e5m2x32>", NULL);
    s = legal(SCALED);
    s.ae = RK_S_FP8E4M3FNUZ;
    expect_refusal(&s, "gfx950", SCALED, "gfx950", "A fragments of type vec<fp8e4m3x32> or vec<bf8e5m2x32>",
                   "chosen per operand", "fp6/fp4", "vec<fp8e4m3fnuzx32>", NULL);
    s = legal(SCALED);
    s.alen = 16;
    expect_refusal(&s, "gfx950", SCALED, "A fragments of type vec<fp8e4m3x32> or", "got vec<fp8e4m3x16>", NULL);
    /* scales: i32 words */
    s = legal(SCALED);
    s.scale_t = RK_T_F32;
    expect_refusal(&s, "gfx950", SCALED, "takes a_scale as i32", "got f32", NULL);
    s = legal(SCALED);
    s.scale_t = RK_T_I64;
    expect_refusal(&s, "gfx950", SCALED, "takes a_scale as i32", "got i64", NULL);
    /* opsel belongs to scaled atoms */
    s = legal(UNSCALED);
    s.opsel_b = 1;
    expect_refusal(&s, "gfx950", UNSCALED, "'opsel_b'", "only to scaled atoms", NULL);
    s = legal("mfma_f32_16x16x32_fp8");
    s.alen = 8;
    s.opsel_a = 0;
    expect_refusal(&s, "gfx950", "mfma_f32_16x16x32_fp8", "'opsel_a'", "only to scaled atoms", NULL);
    /* two constant-zero scales would be compiled as the unscaled instruction */
    s = legal(SCALED);
    s.zero_scales = true;
    expect_refusal(&s, "gfx950", SCALED, "both the constant 0", "2^-127", UNSCALED, "127 (0x7F)", NULL);
}

/* opsel out of 0..3: the op table's attribute spec stops the builder. */
static void t_opsel_range(void **state) {
    (void)state;
    spec s = legal(SCALED);
    s.opsel_a = 4;
    rk_kernel *k = atom_kernel(&s);
    assert_int_not_equal(rk_kernel_finish(k), RK_OK);
    expect_has(rk_builder_error(k), "attribute 'opsel_a' = 4 is out of range [0, 3]", true);
    rk_kernel_free(k);
}

/* The unscaled atom: the scaled intrinsic with every selector and scale the
 * literal 0 (the same nine operands in every flavor); llc-22 selects the
 * plain instruction, which applies no scale. */
static void t_unscaled_lowering(void **state) {
    (void)state;
    spec s = legal(UNSCALED);
    for (rk_llvm_flavor f = RK_LLVM20; f <= RK_LLVM23; f++) {
        char *ll = lower_ok(&s, f);
        expect_has(ll, "declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32>, "
                       "<8 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)", true);
        expect_has(ll, ", <4 x float> %", true);
        expect_has(ll, "i32 0, i32 0, i32 0, i32 0, i32 0, i32 0)", true);
        if (f == RK_LLVM22) {
            char *as = llc_asm(ll);
            if (as) {
                expect_has(as, "v_mfma_f32_16x16x128_f8f6f4", true);
                expect_has(as, "v_mfma_scale", false);
                free(as);
            } else {
                fprintf(stderr, "SKIP ISA check: llc-22 not found (set ROCKE_LLC)\n");
            }
        }
        rk_string_free(ll);
    }
}

/* The scaled atom: cbsz/blgp from each operand's format, opsel as given,
 * the scale operands as values; llc-22 keeps v_mfma_scale with those fields
 * (op_sel bit 0 of each selector, op_sel_hi bit 1). */
static void t_scaled_lowering(void **state) {
    (void)state;
    static const struct {
        rk_scalar ae, be;
        int opsel_a, opsel_b;
        const char *call, *isa;
    } cases[] = {
        {RK_S_FP8E4M3, RK_S_FP8E4M3, -1, -1, "i32 0, i32 0, i32 0, i32 %sa", "op_sel_hi:[0,0,0]"},
        {RK_S_FP8E4M3, RK_S_BF8E5M2, 2, 3, "i32 0, i32 1, i32 2, i32 %sa", "op_sel:[0,1,0] op_sel_hi:[1,1,0] blgp:1"},
        {RK_S_BF8E5M2, RK_S_FP8E4M3, 1, 2, "i32 1, i32 0, i32 1, i32 %sa", "op_sel:[1,0,0] op_sel_hi:[0,1,0] cbsz:1"},
        {RK_S_BF8E5M2, RK_S_BF8E5M2, 3, 0, "i32 1, i32 1, i32 3, i32 %sa", "op_sel:[1,0,0] op_sel_hi:[1,0,0] cbsz:1 blgp:1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        spec s = legal(SCALED);
        s.ae = cases[i].ae;
        s.be = cases[i].be;
        s.opsel_a = cases[i].opsel_a;
        s.opsel_b = cases[i].opsel_b;
        char *ll = lower_ok(&s, RK_LLVM22);
        expect_has(ll, cases[i].call, true);
        char want[64];
        snprintf(want, sizeof want, "i32 %d, i32 %%sb", cases[i].opsel_b < 0 ? 0 : cases[i].opsel_b);
        expect_has(ll, want, true);
        char *as = llc_asm(ll);
        if (as) {
            expect_has(as, "v_mfma_scale_f32_16x16x128_f8f6f4", true);
            expect_has(as, cases[i].isa, true);
            free(as);
        }
        rk_string_free(ll);
    }
}

/* Print -> parse keeps the 5 operands and the opsel attributes: the parsed
 * kernel lowers to the same text. */
static void t_round_trip(void **state) {
    (void)state;
    spec s = legal(SCALED);
    s.ae = RK_S_BF8E5M2;
    s.opsel_a = 3;
    s.opsel_b = 1;
    rk_kernel *k = atom_kernel(&s);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *text = rk_serialize(k);
    expect_has(text, "opsel_a", true);
    rk_kernel *pk = NULL;
    if (rk_parse(text, strlen(text), &pk) != RK_OK) fail_msg("%s\n%s", rk_error_message(), text);
    char *a = NULL, *b = NULL;
    assert_int_equal(rk_lower_llvm(k, rk_target_find("gfx950"), RK_LLVM22, &a), RK_OK);
    assert_int_equal(rk_lower_llvm(pk, rk_target_find("gfx950"), RK_LLVM22, &b), RK_OK);
    assert_string_equal(a, b);
    rk_string_free(a);
    rk_string_free(b);
    rk_string_free(text);
    rk_kernel_free(pk);
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_refused_elsewhere), cmocka_unit_test(t_bad_operands),
        cmocka_unit_test(t_opsel_range),       cmocka_unit_test(t_unscaled_lowering),
        cmocka_unit_test(t_scaled_lowering),   cmocka_unit_test(t_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
