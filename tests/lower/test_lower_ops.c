/* rocke tests — every op the op table allows on an AMD target lowers for
 * gfx90a, gfx942 and gfx950 and LLVM 22's llc accepts the result (one merged
 * module per target, so three llc runs); every op a target lacks is refused
 * before LLVM; every AMD matrix atom lowers and compiles on the targets that
 * have it, in every LLVM flavor the local llc reads. Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "lower/llc_util.h"
#include "support/op_samples.h"

static const char *const amd_targets[] = {"gfx90a", "gfx942", "gfx950"};

/* llc the merged module; on failure, find the kernels llc rejects one by one. */
static int compile_all(const rk_target *t, char **lls, const char **names, size_t n) {
    llc_merge m = {0};
    for (size_t i = 0; i < n; i++) llc_merge_add(&m, lls[i]);
    char *text = llc_merge_text(&m), *log = NULL;
    llc_merge_free(&m);
    int st = llc_compile(text, t->triple, t->cpu, &log);
    free(text);
    if (st == 0) { free(log); return 0; }
    fprintf(stderr, "llc rejected the merged %s module (%zu kernels); isolating:\n%.2000s\n", t->name, n,
            log ? log : "");
    free(log);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char *one = NULL;
        if (llc_compile(lls[i], t->triple, t->cpu, &one) != 0) {
            fprintf(stderr, "  %s on %s:\n%.1500s\n---\n%.3000s\n", names[i], t->name, one ? one : "", lls[i]);
            bad++;
        }
        free(one);
    }
    return bad ? bad : 1;
}

static void test_every_op_every_amd_target(void **state) {
    (void)state;
    const char *llc = llc_path();
    if (!llc) fprintf(stderr, "SKIP llc part: llc-22 not found on PATH (set ROCKE_LLC); lowering still checked\n");
    int failures = 0;
    for (size_t ti = 0; ti < sizeof amd_targets / sizeof amd_targets[0]; ti++) {
        const rk_target *t = rk_target_find(amd_targets[ti]);
        assert_non_null(t);
        char *lls[RK_OP__COUNT];
        const char *names[RK_OP__COUNT];
        size_t n = 0, legal_n = 0;
        for (int c = 1; c < RK_OP__COUNT; c++) {
            bool legal = op_sample_legal((rk_opcode)c, t->features);
            rk_kernel *k = op_sample_kernel((rk_opcode)c, t->name);
            if (!k) {
                fprintf(stderr, "no sample for %s: %s\n", rk_opcode_name((rk_opcode)c), rk_error_message());
                failures++;
                continue;
            }
            char *ll = NULL;
            rk_status s = rk_lower_llvm(k, t, RK_LLVM22, &ll);
            if (!legal) {
                /* refused by the verifier, before any LLVM text exists */
                if (s != RK_ERR_VERIFY || ll) {
                    fprintf(stderr, "%s on %s: expected a verifier refusal, got %s\n", rk_opcode_name((rk_opcode)c),
                            t->name, rk_status_name(s));
                    failures++;
                }
            } else if (s != RK_OK) {
                fprintf(stderr, "%s on %s: %s\n", rk_opcode_name((rk_opcode)c), t->name, rk_error_message());
                failures++;
            } else {
                lls[n] = ll;
                names[n++] = rk_opcode_name((rk_opcode)c);
                legal_n++;
                ll = NULL;
            }
            rk_string_free(ll);
            rk_kernel_free(k);
        }
        printf("%s: %zu ops lower\n", t->name, legal_n);
        if (llc) failures += compile_all(t, lls, names, n);
        for (size_t i = 0; i < n; i++) rk_string_free(lls[i]);
    }
    assert_int_equal(failures, 0);
}

/* tile.mma with every atom of the catalog on every AMD target: legal pairs
 * lower (and compile), the rest are refused by name. A fragment wider than
 * one vector load (32 x 8-bit) is loaded as i32 words and bitcast; a scaled
 * atom gets its two i32 scale operands and opsel attributes. */
static rk_kernel *atom_kernel(const rk_mma_atom *a, const rk_target *t) {
    char name[96];
    snprintf(name, sizeof name, "atom_%s", a->op_id);
    rk_kernel *k = rk_kernel_new(name);
    rk_scalar ae = a->a_elem == RK_S_FP8E4M3 ? t->fp8 : a->a_elem == RK_S_BF8E5M2 ? t->bf8 : a->a_elem;
    if (ae == RK_S_NONE) ae = a->a_elem;
    bool wide = a->a_len > 16;
    rk_value pa = rk_add_param(k, "A", rk_type_ptr(k, wide ? RK_T_I32 : (rk_type){ae}, RK_AS_GLOBAL), NULL);
    rk_value pc = rk_add_param(k, "C", rk_type_ptr(k, (rk_type){a->c_elem}, RK_AS_GLOBAL), NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    uint32_t alen = wide ? a->a_len / 4u : a->a_len;
    rk_value ia = rk_build_mul(k, tid, rk_const_i32(k, (int32_t)alen));
    rk_value va = rk_load_global(k, pa, ia, alen);
    if (wide) va = rk_build_bitcast(k, va, rk_type_vec(k, (rk_type){ae}, a->a_len));
    rk_value ic = rk_build_mul(k, tid, rk_const_i32(k, (int32_t)a->c_len));
    rk_value vc = rk_load_global(k, pc, ic, a->c_len);
    rk_value d;
    if (a->scaled) {
        rk_value one = rk_const_i32(k, 127);   /* E8M0 127 = 1.0 */
        rk_value in[5] = {va, va, vc, tid, one};
        const rk_mma_opts mo = {.opsel_a = RK_SOME(2)};
        d = rk_build_mma_arr(k, a->op_id, in, 5, &mo);
    } else {
        d = rk_build_mma(k, a->op_id, va, va, vc);
    }
    rk_store_global(k, pc, ic, d);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

static void test_every_atom(void **state) {
    (void)state;
    const char *llc = llc_path();
    int failures = 0;
    for (size_t ti = 0; ti < sizeof amd_targets / sizeof amd_targets[0]; ti++) {
        const rk_target *t = rk_target_find(amd_targets[ti]);
        for (rk_llvm_flavor f = RK_LLVM20; f <= RK_LLVM23; f++) {
            llc_merge m = {0};
            size_t n = 0;
            for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++) {
                const rk_mma_atom *a = *ap;
                if (!(a->feat & RK_FEAT_AMD)) continue;
                rk_kernel *k = atom_kernel(a, t);
                char *ll = NULL;
                rk_status s = rk_lower_llvm(k, t, f, &ll);
                if (rk_target_has_atom(t, a)) {
                    if (s != RK_OK) {
                        fprintf(stderr, "%s on %s/%s: %s\n", a->op_id, t->name, rk_llvm_flavor_name(f), rk_error_message());
                        failures++;
                    } else {
                        llc_merge_add(&m, ll);
                        n++;
                    }
                } else if (s != RK_ERR_VERIFY || !strstr(rk_error_message(), a->op_id) ||
                           !strstr(rk_error_message(), t->name)) {
                    fprintf(stderr, "%s on %s: expected a refusal naming both, got %s: %s\n", a->op_id, t->name,
                            rk_status_name(s), rk_error_message());
                    failures++;
                }
                rk_string_free(ll);
                rk_kernel_free(k);
            }
            /* llc-22 reads the llvm22 text; llvm20/23 differ in declarations it would reject */
            if (llc && f == RK_LLVM22 && n) {
                char *text = llc_merge_text(&m), *log = NULL;
                if (llc_compile(text, t->triple, t->cpu, &log) != 0) {
                    fprintf(stderr, "llc rejected the %s atoms:\n%.3000s\n%s\n", t->name, log ? log : "", text);
                    failures++;
                }
                free(log);
                free(text);
            }
            llc_merge_free(&m);
        }
    }
    assert_int_equal(failures, 0);
}

/* Ops of RDNA features no catalog target has yet (row_xmask DPP, dpp8,
 * permlane16/x16/64): lowered for a synthetic wave32 gfx1100 built from
 * gfx950's data, compiled for gfx1100. */
static void test_rdna_only_ops(void **state) {
    (void)state;
    rk_target rdna = *rk_target_find("gfx950");
    rdna.name = "gfx1100";
    rdna.cpu = "gfx1100";
    rdna.wave_size = 32;
    rdna.features = RK_FEAT_AMD | RK_FEAT_GFX10P | RK_FEAT_GFX11P;
    rdna.buffer_word3 = 0x31014000u;
    static const rk_opcode ops[] = {RK_OP_DPP_XOR, RK_OP_MOV_DPP8, RK_OP_PERMLANE16, RK_OP_PERMLANEX16,
                                    RK_OP_PERMLANE64, RK_OP_WAVE_BALLOT, RK_OP_WAVE_ALL, RK_OP_SHUFFLE,
                                    RK_OP_LANE_ID};
    llc_merge m = {0};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        rk_kernel *k = op_sample_kernel(ops[i], "gfx950");
        assert_non_null(k);
        char *ll = NULL;
        if (rk_lower_llvm(k, &rdna, RK_LLVM22, &ll) != RK_OK) fail_msg("%s: %s", rk_opcode_name(ops[i]), rk_error_message());
        if (ops[i] == RK_OP_WAVE_BALLOT) assert_non_null(strstr(ll, "@llvm.amdgcn.ballot.i32("));
        if (ops[i] == RK_OP_LANE_ID) assert_null(strstr(ll, "mbcnt.hi"));
        llc_merge_add(&m, ll);
        rk_string_free(ll);
        rk_kernel_free(k);
    }
    if (llc_path()) {
        char *text = llc_merge_text(&m), *log = NULL;
        if (llc_compile(text, rdna.triple, rdna.cpu, &log) != 0) fail_msg("llc rejects the RDNA ops:\n%s\n%s", log, text);
        free(log);
        free(text);
    }
    llc_merge_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rdna_only_ops),
        cmocka_unit_test(test_every_op_every_amd_target),
        cmocka_unit_test(test_every_atom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
