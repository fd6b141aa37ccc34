/* rocke tests — tile.inline_asm constraints checked by the verifier (issue
 * 20 item 7, src/ir/verify_asm.c): one row per constraint string with the
 * operand and result types, the target, and the message fragment expected
 * (none = accepted). Every accepted row on a real target is also compiled
 * by LLVM 22, and mismatches the verifier refuses are shown to be refused
 * by LLVM too when handed to it directly, so the table is checked against
 * the compiler rather than against itself. The width rules are stricter
 * than LLVM where it silently splits a value (an i64 in NVPTX "r"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rocke/rocke.h"

/* Types by letter: i i32, l i64, s i16, c i8, b i1, h f16, f f32, d f64,
 * p global f32 pointer, 4 vec<f32x4>, 2 vec<f16x2>, 8 vec<f32x8> (256 bits),
 * X vec<f32x64> (2048 bits). Operands are constants except 'T' (the
 * thread id, i32, computed). */
static rk_type type_of(rk_kernel *k, char c) {
    switch (c) {
    case 'i': case 'T': return RK_T_I32;
    case 'l': return RK_T_I64;
    case 's': return RK_T_I16;
    case 'c': return (rk_type){RK_S_I8};
    case 'b': return RK_T_I1;
    case 'h': return RK_T_F16;
    case 'f': return RK_T_F32;
    case 'd': return (rk_type){RK_S_F64};
    case 'p': return rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    case '4': return rk_type_vec(k, RK_T_F32, 4);
    case '2': return rk_type_vec(k, RK_T_F16, 2);
    case '8': return rk_type_vec(k, RK_T_F32, 8);
    case 'X': return rk_type_vec(k, RK_T_F32, 64);
    default: fail_msg("bad type letter %c", c); return RK_T_I32;
    }
}

static rk_value operand(rk_kernel *k, char c, rk_value ptr) {
    rk_type t = type_of(k, c);
    switch (c) {
    case 'T': return rk_build_thread_id(k, 0);
    case 'p': return ptr;
    case 'b': return rk_const_bool(k, true);
    case 'h': case 'f': case 'd': return rk_const_float(k, t, 1.5);
    case '4': case '2': case '8': case 'X': return rk_build_constant_vec(k, t, 2.0);
    default: return rk_const_int(k, t, 7);
    }
}

static rk_kernel *asm_kernel(const char *cons, const char *ins, const char *outs) {
    rk_kernel *k = rk_kernel_new("asm_case");
    rk_value ptr = rk_add_param(k, "p", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value in[8];
    rk_type out[8];
    uint32_t nin = (uint32_t)strlen(ins), nout = (uint32_t)strlen(outs);
    for (uint32_t i = 0; i < nin; i++) in[i] = operand(k, ins[i], ptr);
    for (uint32_t i = 0; i < nout; i++) out[i] = type_of(k, outs[i]);
    rk_build_inline_asm(k, "", cons, in, nin, out, nout, true);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

typedef struct asm_case {
    const char *target; /* NULL: no target (both back ends' letters) */
    const char *cons, *ins, *outs;
    const char *frag;   /* expected error fragment; NULL = accepted */
} asm_case;

static const asm_case cases[] = {
    /* accepted */
    {"gfx942", "=v,v", "i", "i", NULL},
    {"gfx942", "=v,=v,v,s", "ii", "fi", NULL},
    {"gfx942", "=v,0", "l", "l", NULL},
    {"gfx942", "=&v,v,~{memory}", "i", "i", NULL},
    {"gfx942", "=a,v", "4", "4", NULL},
    {"gfx942", "=v,v", "h", "h", NULL},
    {"gfx942", "=s,s", "p", "l", NULL},
    {"gfx942", "=v,i", "i", "i", NULL},
    {"gfx942", "={v1},{s2}", "i", "i", NULL},
    {"gfx942", "v,~{vcc}", "2", "", NULL},
    {"gfx942", "", "", "", NULL},
    {"gfx950", "=v,v", "8", "8", NULL},
    {"sm_90", "=r,r", "i", "i", NULL},
    {"sm_90", "=l,l,h,f,d", "lhfd", "l", NULL},
    {"sm_90", "=r,r", "2", "i", NULL},
    {"sm_90", "=l,l", "p", "l", NULL},
    {"sm_90", "=r,0", "i", "i", NULL},
    {"sm_90", "=f,n", "i", "f", NULL},
    {"sm_90", "r,~{memory}", "i", "", NULL},
    {NULL, "=v,r", "i", "i", NULL},
    /* counts */
    {"gfx942", "=v,v", "ii", "i", "1 output and 1 input declared, but the op has 1 result and 2 operands"},
    {"gfx942", "=v,=v,v", "i", "i", "2 outputs and 1 input declared, but the op has 1 result and 1 operand"},
    {"gfx942", "", "i", "", "0 outputs and 0 inputs declared, but the op has 0 results and 1 operand"},
    {"sm_90", "r", "", "i", "0 outputs and 1 input declared, but the op has 1 result and 0 operands"},
    /* order and grammar */
    {"gfx942", "v,=v", "i", "i", "constraint 1 '=v' (of \"v,=v\"): an output constraint after an input"},
    {"gfx942", "~{memory},v", "i", "", "constraint 1 'v' (of \"~{memory},v\"): an input constraint after a clobber"},
    {"gfx942", "=v,~v", "", "i", "a clobber names a register or memory in braces"},
    {"gfx942", "=v,", "", "i", "constraint 1 '' (of \"=v,\"): no constraint code"},
    {"gfx942", "=v,{v1", "i", "i", "a register name must be written {name}"},
    {"gfx942", "=v,v|s", "i", "i", "alternatives ('|') are not supported"},
    /* kinds per back end */
    {"gfx942", "=r,h", "s", "i", "constraint 1 'h' (of \"=r,h\"): not an AMDGPU constraint (legal: v, s, a"},
    {"sm_90", "=v,v", "i", "i", "constraint 0 '=v' (of \"=v,v\"): not an NVPTX constraint (legal: r, l, h"},
    {"sm_90", "=r,{r1}", "i", "i", "NVPTX has no named registers"},
    {NULL, "=x,v", "i", "i", "not an AMDGPU or NVPTX constraint"},
    {"gfx942", "=v,m", "i", "i", "'m' (of \"=v,m\"): not an AMDGPU constraint"},
    /* widths */
    {"sm_90", "=r,r", "l", "i", "constraint 1 'r' (of \"=r,r\"): a register holds 32 bits, but operand 0 is i64 (64 bits)"},
    {"sm_90", "=l,l", "i", "l", "a 64-bit register holds 64 bits, but operand 0 is i32 (32 bits)"},
    {"sm_90", "=h,h", "f", "h", "a 16-bit register holds 16 bits, but operand 0 is f32"},
    {"sm_90", "=r,b", "c", "i", "a 1-bit predicate holds 1 bit, but operand 0 is i8"},
    {"sm_90", "=d", "", "f", "a 64-bit float register holds 64 bits, but result 0 is f32"},
    {"gfx942", "=v,v", "c", "i", "a VGPR (tuple) holds 16 bits or 32 to 1024 bits in whole registers, but operand 0 is i8"},
    {"gfx942", "=v,v", "X", "i", "operand 0 is vec<f32x64> (2048 bits)"},
    {"gfx942", "=v,v", "b", "i", "operand 0 is i1"},
    /* immediates */
    {"gfx942", "=v,i", "T", "i", "an immediate needs a constant scalar (arith.constant), but operand 0 is a computed i32"},
    {"gfx942", "=i", "", "i", "an immediate cannot be an output"},
    {"gfx942", "=v,n", "4", "i", "an immediate needs a constant scalar"},
    {"sm_90", "=r,I", "i", "i", "constraint 1 'I' (of \"=r,I\"): not an NVPTX constraint"},
    /* tied */
    {"gfx942", "=v,0", "i", "l", "operand 0 has type i32 but the output it is tied to (result 0) has type i64"},
    {"gfx942", "=v,1", "i", "i", "ties to constraint 1, which is not an output"},
    {"gfx942", "=v,0,0", "ii", "i", "output 0 is already tied to constraint 1"},
    {"gfx942", "=0", "", "i", "only a plain input can be tied"},
    /* indirect operands: LLVM needs an elementtype the lowering does not write */
    {"gfx942", "=v,=*v,0", "pi", "i", "constraint 1 '=*v' (of \"=v,=*v,0\"): indirect ('*') operands are not supported"},
    {"gfx942", "=v,*v", "p", "i", "indirect ('*') operands are not supported"},
};

static void test_table(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const asm_case *c = &cases[i];
        rk_kernel *k = asm_kernel(c->cons, c->ins, c->outs);
        rk_diags d;
        rk_diags_init(&d);
        rk_status s = c->target ? rk_target_verify(k, rk_target_find(c->target), &d) : rk_verify(k, NULL, &d);
        char *text = rk_diags_text(&d);
        bool ok = c->frag ? s == RK_ERR_VERIFY && d.nerrors == 1 && strstr(text, c->frag) && strstr(text, "tile.inline_asm")
                          : s == RK_OK && d.nerrors == 0;
        if (!ok)
            fprintf(stderr, "row %zu (\"%s\" on %s): status %s, expected %s \"%s\"; diagnostics:\n%s\n", i, c->cons,
                    c->target ? c->target : "no target", rk_status_name(s), c->frag ? "an error with" : "no error",
                    c->frag ? c->frag : "", text ? text : "");
        rk_string_free(text);
        rk_diags_free(&d);
        rk_kernel_free(k);
        assert_true(ok);
    }
}

static rk_compile_options llvm_options(const rk_target *t) {
    rk_compile_options o;
    assert_int_equal(rk_compile_options_default(t, &o), RK_OK);
    o.toolchain = RK_TOOLCHAIN_LLVM;
    o.cache = false;
    o.inprocess = false; /* an LLVM fatal error ends the worker, not the test */
    return o;
}

/* Every accepted row with a target compiles with LLVM. */
static void test_accepted_rows_compile(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const asm_case *c = &cases[i];
        if (c->frag || !c->target) continue;
        const rk_target *t = rk_target_find(c->target);
        rk_kernel *k = asm_kernel(c->cons, c->ins, c->outs);
        rk_compile_options o = llvm_options(t);
        rk_artifact *a = NULL;
        rk_status s = rk_compile(k, t, &o, &a);
        if (s != RK_OK) fprintf(stderr, "row %zu (\"%s\" on %s): %s\n", i, c->cons, c->target, rk_error_message());
        assert_int_equal(s, RK_OK);
        rk_artifact_free(a);
        rk_kernel_free(k);
    }
}

/* Rows the verifier refuses, written as LLVM IR by hand: LLVM refuses them
 * too (its IR verifier or its instruction selector). */
static void test_llvm_agrees_on_refusals(void **state) {
    (void)state;
    static const struct { const char *target, *body; } bad[] = {
        /* one output, one input declared, two operands passed */
        {"gfx942", "%r = call i32 asm sideeffect \"\", \"=v,v\"(i32 1, i32 2)"},
        /* an indirect operand without the elementtype attribute */
        {"gfx942", "%r = call i32 asm sideeffect \"\", \"=v,*v\"(ptr addrspace(1) null)"},
        /* an AMDGPU letter on NVPTX */
        {"sm_90", "%r = call i32 asm sideeffect \"\", \"=v,v\"(i32 1)"},
        /* an output after an input */
        {"gfx942", "%r = call i32 asm sideeffect \"\", \"v,=v\"(i32 1)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const rk_target *t = rk_target_find(bad[i].target);
        char ll[1024];
        bool amd = t->vendor == RK_VENDOR_AMD;
        snprintf(ll, sizeof ll,
                 "target triple = \"%s\"\n"
                 "define %s void @k() {\n  %s\n  ret void\n}\n",
                 t->triple, amd ? "amdgpu_kernel" : "ptx_kernel", bad[i].body);
        rk_compile_options o = llvm_options(t);
        rk_artifact *a = NULL;
        rk_status s = rk_compile_llvm_ir(ll, "k", t, &o, &a);
        if (s == RK_OK) fprintf(stderr, "LLVM accepted refusal %zu: %s\n", i, bad[i].body);
        assert_int_not_equal(s, RK_OK);
        assert_null(a);
    }
}

int main(void) {
    unsetenv("ROCKE_TOOLCHAIN");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_accepted_rows_compile),
        cmocka_unit_test(test_llvm_agrees_on_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
