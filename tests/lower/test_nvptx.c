/* rocke tests — the NVPTX lowering: every op the table allows on sm_80, sm_90
 * and sm_90a lowers, llc-22 compiles each target's merged module to PTX and
 * ptxas assembles it (one llc and one ptxas run per target; the tool steps
 * are skipped with a note when a tool is absent); ops a target lacks are
 * refused by the verifier; every NVIDIA matrix atom; PTX checks through the
 * production pipeline (opt -O3, llc) for a vector add, a shuffle reduction,
 * cp.async, an mma.sync tile and a wgmma tile; the runtime's gpu-check
 * kernels; buffer-view bounds; refusals; determinism. Layer: tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rocke/rocke.h"
#include "rocke/kernels.h"
#include "lower/llc_util.h"
#include "runtime/selftest.h"
#include "support/ir_corpus.h"
#include "support/op_samples.h"

static const char *const nv_targets[] = {"sm_80", "sm_90", "sm_90a"};

static const rk_target *tgt(const char *name) {
    const rk_target *t = rk_target_find(name);
    assert_non_null(t);
    return t;
}

static char *lower_ok(const rk_kernel *k, const char *target) {
    char *ll = NULL;
    if (rk_lower_llvm(k, tgt(target), RK_LLVM22, &ll) != RK_OK)
        fail_msg("lowering %s for %s: %s", rk_kernel_name(k), target, rk_error_message());
    return ll;
}

static void expect_has(const char *text, const char *needle) {
    if (!strstr(text, needle)) fail_msg("expected \"%s\" in:\n%s", needle, text);
}
static void expect_lacks(const char *text, const char *needle) {
    if (strstr(text, needle)) fail_msg("did not expect \"%s\" in:\n%s", needle, text);
}
static unsigned count_of(const char *text, const char *needle) {
    unsigned n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* ---- tools ------------------------------------------------------------------------------------ */
/* $env, else the first candidate that is executable (names are looked up on PATH). */
static const char *tool(const char *env, const char *const *cands, char *buf, size_t n) {
    const char *e = getenv(env);
    if (e && *e) return access(e, X_OK) == 0 ? e : NULL;
    for (; *cands; cands++) {
        if (strchr(*cands, '/')) {
            if (access(*cands, X_OK) == 0) return *cands;
            continue;
        }
        for (const char *p = getenv("PATH"); p && *p;) {
            const char *c = strchr(p, ':');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            snprintf(buf, n, "%.*s/%s", (int)len, p, *cands);
            if (len && access(buf, X_OK) == 0) return buf;
            p = c ? c + 1 : NULL;
        }
    }
    return NULL;
}

static const char *opt_path(void) {
    static char buf[512];
    static const char *const c[] = {"opt-22", NULL};
    return tool("ROCKE_OPT", c, buf, sizeof buf);
}
static const char *ptxas_path(void) {
    static char buf[512];
    static const char *const c[] = {"/usr/local/cuda/bin/ptxas", "ptxas", NULL};
    return tool("ROCKE_PTXAS", c, buf, sizeof buf);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *d = malloc(cap);
    while (d && (got = fread(d + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) d = realloc(d, cap *= 2);
    }
    fclose(f);
    if (d) d[len] = '\0';
    return d;
}

/* Run a shell command; exit status, with its output in *log (malloc'd). */
static int run(const char *cmd, char **log) {
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t cap = 4096, len = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 2) buf = realloc(buf, cap *= 2);
    }
    if (buf) buf[len] = '\0';
    int st = pclose(p);
    if (log) *log = buf;
    else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* PTX for `ll` on t: llc alone, or opt -O3 then llc as rk_compile does.
 * NULL (with the tools' output in *log) when a step fails. */
static char *to_ptx(const char *ll, const rk_target *t, bool optimize, char **log) {
    char in[600], bc[700], out[700], cmd[4096];
    llc_tmp(in, sizeof in, t->name);
    snprintf(bc, sizeof bc, "%s.bc", in);
    snprintf(out, sizeof out, "%s.ptx", in);
    strncat(in, ".ll", sizeof in - strlen(in) - 1);
    FILE *f = fopen(in, "w");
    if (!f) return NULL;
    fputs(ll, f);
    fclose(f);
    const char *tm = "-mtriple=nvptx64-nvidia-cuda";
    if (optimize)
        snprintf(cmd, sizeof cmd, "'%s' %s -mcpu=%s -mattr=%s -passes='default<O3>' '%s' -o '%s' 2>&1 && "
                 "'%s' -O3 %s -mcpu=%s -mattr=%s -asm-verbose=false '%s' -o '%s' 2>&1", opt_path(), tm, t->cpu,
                 t->llvm_features, in, bc, llc_path(), tm, t->cpu, t->llvm_features, bc, out);
    else
        snprintf(cmd, sizeof cmd, "'%s' -O3 %s -mcpu=%s -mattr=%s '%s' -o '%s' 2>&1", llc_path(), tm, t->cpu,
                 t->llvm_features, in, out);
    char *ptx = run(cmd, log) == 0 ? slurp(out) : NULL;
    remove(in);
    remove(bc);
    remove(out);
    return ptx;
}

static int ptxas(const char *ptx, const rk_target *t, char **log) {
    char in[600], cmd[2048];
    llc_tmp(in, sizeof in, "ptxas");
    strncat(in, ".ptx", sizeof in - strlen(in) - 1);
    FILE *f = fopen(in, "w");
    if (!f) return -1;
    fputs(ptx, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s '%s' -o /dev/null 2>&1", ptxas_path(), t->name, in);
    int st = run(cmd, log);
    remove(in);
    return st;
}

/* llc + ptxas on one merged module; on failure, isolate the kernels. */
static int compile_all(const rk_target *t, char **lls, const char **names, size_t n) {
    if (!llc_path() || !n) return 0;
    llc_merge m = {0};
    for (size_t i = 0; i < n; i++) llc_merge_add(&m, lls[i]);
    char *text = llc_merge_text(&m), *log = NULL;
    llc_merge_free(&m);
    char *ptx = to_ptx(text, t, false, &log);
    int bad = 0;
    if (ptx && ptxas_path()) {
        free(log);
        log = NULL;
        if (ptxas(ptx, t, &log) != 0) {
            fprintf(stderr, "ptxas rejected the merged %s module:\n%.3000s\n", t->name, log ? log : "");
            bad = 1;
        }
    } else if (!ptx) {
        fprintf(stderr, "llc rejected the merged %s module (%zu kernels):\n%.2000s\n", t->name, n, log ? log : "");
        bad = 1;
    }
    free(log);
    free(ptx);
    free(text);
    for (size_t i = 0; bad && i < n; i++) {
        char *one = NULL, *p = to_ptx(lls[i], t, false, &one);
        if (!p || (ptxas_path() && ptxas(p, t, &one) != 0))
            fprintf(stderr, "  %s on %s:\n%.1500s\n---\n%.3000s\n", names[i], t->name, one ? one : "", lls[i]);
        free(one);
        free(p);
    }
    return bad;
}

static void note_tools(void) {
    static bool said;
    if (said) return;
    said = true;
    if (!llc_path()) fprintf(stderr, "SKIP llc/ptxas steps: llc-22 not found (set ROCKE_LLC); lowering still checked\n");
    else if (!ptxas_path()) fprintf(stderr, "SKIP ptxas steps: no ptxas (set ROCKE_PTXAS); llc still runs\n");
    if (!opt_path()) fprintf(stderr, "SKIP pipeline PTX checks: opt-22 not found (set ROCKE_OPT)\n");
}

/* ---- every op ------------------------------------------------------------------------------------ */
static void test_every_op_every_nv_target(void **state) {
    (void)state;
    note_tools();
    int failures = 0;
    for (size_t ti = 0; ti < RK_COUNTOF(nv_targets); ti++) {
        const rk_target *t = tgt(nv_targets[ti]);
        char *lls[RK_OP__COUNT];
        const char *names[RK_OP__COUNT];
        size_t n = 0;
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
                if (s != RK_ERR_VERIFY || ll || !strstr(rk_error_message(), t->name)) {
                    fprintf(stderr, "%s on %s: expected a verifier refusal naming the target, got %s: %s\n",
                            rk_opcode_name((rk_opcode)c), t->name, rk_status_name(s), rk_error_message());
                    failures++;
                }
            } else if (s != RK_OK) {
                fprintf(stderr, "%s on %s: %s\n", rk_opcode_name((rk_opcode)c), t->name, rk_error_message());
                failures++;
            } else {
                lls[n] = ll;
                names[n++] = rk_opcode_name((rk_opcode)c);
                ll = NULL;
            }
            rk_string_free(ll);
            rk_kernel_free(k);
        }
        printf("%s: %zu ops lower\n", t->name, n);
        failures += compile_all(t, lls, names, n);
        for (size_t i = 0; i < n; i++) rk_string_free(lls[i]);
    }
    assert_int_equal(failures, 0);
}

/* ---- every NVIDIA atom ------------------------------------------------------------------------------- */
static rk_kernel *atom_kernel(const rk_mma_atom *a) {
    char name[96];
    snprintf(name, sizeof name, "atom_%s", a->op_id);
    rk_kernel *k = rk_kernel_new(name);
    rk_value pa = rk_add_param(k, "A", rk_type_ptr(k, (rk_type){a->a_elem}, RK_AS_GLOBAL), NULL);
    rk_value pb = rk_add_param(k, "B", rk_type_ptr(k, (rk_type){a->b_elem}, RK_AS_GLOBAL), NULL);
    rk_value pc = rk_add_param(k, "C", rk_type_ptr(k, (rk_type){a->c_elem}, RK_AS_GLOBAL), NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value va = rk_load_global(k, pa, rk_build_mul(k, tid, rk_const_i32(k, (int32_t)a->a_len)), a->a_len);
    rk_value vb = rk_load_global(k, pb, rk_build_mul(k, tid, rk_const_i32(k, (int32_t)a->b_len)), a->b_len);
    rk_value ic = rk_build_mul(k, tid, rk_const_i32(k, (int32_t)a->c_len));
    rk_value vc = rk_load_global(k, pc, ic, a->c_len);
    rk_store_global(k, pc, ic, rk_build_mma(k, a->op_id, va, vb, vc));
    rk_kernel_set_attr_int(k, "max_workgroup_size", a->lanes);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    return k;
}

/* Every lane map of the atom covers its matrix exactly once. */
static void check_maps(const rk_mma_atom *a) {
    const uint32_t rows[3] = {a->m, a->k, a->m}, cols[3] = {a->k, a->n, a->n};
    const uint32_t lens[3] = {a->a_len, a->b_len, a->c_len};
    const rk_lane_map *maps[3] = {a->a_map, a->b_map, a->c_map};
    for (int w = 0; w < 3; w++) {
        uint32_t cells = rows[w] * cols[w] * a->batch;
        assert_int_equal(cells, (uint32_t)a->lanes * lens[w]);
        unsigned char *seen = calloc(cells, 1);
        for (uint32_t l = 0; l < a->lanes; l++)
            for (uint32_t s = 0; s < lens[w]; s++) {
                rk_lane_coord p = rk_lane_map_eval(maps[w], l, s);
                uint32_t r = p.row, c = p.col, b = p.batch;
                assert_true(r < rows[w] && c < cols[w] && b < a->batch);
                uint32_t at = (b * rows[w] + r) * cols[w] + c;
                if (seen[at]++) fail_msg("%s: operand %d element (%u, %u) held twice", a->op_id, w, r, c);
            }
        free(seen);
    }
}

static void test_every_nv_atom(void **state) {
    (void)state;
    int failures = 0;
    for (size_t ti = 0; ti < RK_COUNTOF(nv_targets); ti++) {
        const rk_target *t = tgt(nv_targets[ti]);
        char *lls[64];
        const char *names[64];
        size_t n = 0;
        for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++) {
            const rk_mma_atom *a = *ap;
            if (!(a->feat & RK_FEAT_NV)) continue;
            check_maps(a);
            rk_kernel *k = atom_kernel(a);
            char *ll = NULL;
            rk_status s = rk_lower_llvm(k, t, RK_LLVM22, &ll);
            if (rk_target_has_atom(t, a)) {
                if (s != RK_OK) {
                    fprintf(stderr, "%s on %s: %s\n", a->op_id, t->name, rk_error_message());
                    failures++;
                } else {
                    names[n] = a->op_id;
                    lls[n++] = ll;
                    ll = NULL;
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
        failures += compile_all(t, lls, names, n);
        for (size_t i = 0; i < n; i++) rk_string_free(lls[i]);
    }
    assert_int_equal(failures, 0);
}

/* ---- PTX through the production pipeline ------------------------------------------------------------- */
/* PTX of k on target (opt -O3, llc), ptxas-checked; NULL when the tools are absent. */
static char *pipeline_ptx(const rk_kernel *k, const char *target) {
    note_tools();
    char *ll = lower_ok(k, target);
    if (!llc_path() || !opt_path()) {
        rk_string_free(ll);
        return NULL;
    }
    const rk_target *t = tgt(target);
    char *log = NULL, *ptx = to_ptx(ll, t, true, &log);
    if (!ptx) fail_msg("opt/llc rejected %s for %s:\n%s\n%s", rk_kernel_name(k), target, log ? log : "", ll);
    free(log);
    log = NULL;
    if (ptxas_path() && ptxas(ptx, t, &log) != 0)
        fail_msg("ptxas rejected %s for %s:\n%s\n%s", rk_kernel_name(k), target, log ? log : "", ptx);
    free(log);
    rk_string_free(ll);
    return ptx;
}

static rk_kernel *family_kernel(rk_family_id f, const char *target, const char *const *knobs) {
    rk_instance in;
    assert_int_equal(rk_instance_default(f, &in), RK_OK);
    uint64_t locked = 0;
    for (; knobs && *knobs; knobs += 2) {
        uint32_t idx = 0;
        if (rk_instance_set(&in, knobs[0], knobs[1], &idx) != RK_OK) fail_msg("%s", rk_error_message());
        locked |= 1ull << idx;
    }
    const rk_target *t = tgt(target);
    /* 1 x 2^26 (elementwise: 2^26 elements) */
    const uint64_t ext[2] = {1, 1u << 26};
    rk_shape s;
    assert_int_equal(rk_shape_default(f, &s), RK_OK);
    assert_int_equal(rk_shape_update(f, &s, NULL, ext, 2, false), RK_OK);
    assert_int_equal(rk_instance_tune(&in, t, &s, locked), RK_OK);
    rk_kernel *k = NULL;
    if (rk_instance_build(&in, t, &k) != RK_OK) fail_msg("building: %s", rk_error_message());
    return k;
}

/* The elementwise add the H200 times: 16-byte loads through the read-only
 * path, 16-byte stores, 32-bit index arithmetic, no spill. */
static void test_ptx_vector_add(void **state) {
    (void)state;
    static const char *const knobs[] = {"op", "add", "dtype", "f32", "out_dtype", "f32", NULL};
    rk_kernel *k = family_kernel(RK_FAMILY_ELEMENTWISE, "sm_90", knobs);
    char *ptx = pipeline_ptx(k, "sm_90");
    if (ptx) {
        expect_has(ptx, ".maxntid 256");
        /* unroll 4: four 16-byte loads of each input and four stores in the fast path */
        assert_true(count_of(ptx, "ld.global.nc.v4.b32") >= 8);
        assert_true(count_of(ptx, "st.global.v4.b32") >= 4);
        expect_lacks(ptx, "local");   /* no stack */
        free(ptx);
    }
    rk_kernel_free(k);
    /* a plain vec-4 copy: C[i] = A[i] + B[i] for float4 */
    k = rk_kernel_new("vadd4");
    rk_param_abi ro = {.noalias = true, .readonly = true, .align = 16}, wo = {.noalias = true, .writeonly = true, .align = 16};
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value A = rk_add_param(k, "A", pf, &ro), B = rk_add_param(k, "B", pf, &ro), C = rk_add_param(k, "C", pf, &wo);
    rk_value tid = rk_build_thread_id(k, 0), bid = rk_build_block_id(k, 0), bdim = rk_build_block_dim(k, 0);
    rk_value i = rk_build_mul(k, rk_build_add(k, rk_build_mul(k, bid, bdim), tid), rk_const_i32(k, 4));
    rk_value s = rk_build_vadd(k, rk_load_global(k, A, i, 4), rk_load_global(k, B, i, 4));
    rk_store_global(k, C, i, s);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    for (size_t ti = 0; ti < RK_COUNTOF(nv_targets); ti++) {
        ptx = pipeline_ptx(k, nv_targets[ti]);
        if (!ptx) continue;
        assert_int_equal(count_of(ptx, "ld.global.nc.v4.b32"), 2);
        assert_int_equal(count_of(ptx, "st.global.v4.b32"), 1);
        expect_has(ptx, "add.rn.f32");
        expect_lacks(ptx, "ld.global.nc.b32");
        free(ptx);
    }
    rk_kernel_free(k);
}

/* A block row sum: the reduce family's warp stage is a shfl.sync.bfly chain
 * with immediate masks; the corpus row_reduce too. */
static void test_ptx_shuffle_reduction(void **state) {
    (void)state;
    static const char *const knobs[] = {"dtype", "f32", NULL};
    rk_kernel *k = family_kernel(RK_FAMILY_REDUCE, "sm_90", knobs);
    char *ptx = pipeline_ptx(k, "sm_90");
    if (ptx) {
        for (int m = 16; m >= 1; m /= 2) {
            char want[64];
            snprintf(want, sizeof want, ", %d, 31, -1;", m);   /* shfl.sync.bfly.b32 d, v, m, 31, -1 */
            expect_has(ptx, want);
        }
        assert_int_equal(count_of(ptx, "shfl.sync.bfly.b32"), 5);
        expect_has(ptx, "bar.sync \t0;");
        free(ptx);
    }
    rk_kernel_free(k);
    for (unsigned i = 0; i < corpus_count; i++) {
        if (strcmp(corpus_kernels[i].name, "row_reduce")) continue;
        k = corpus_kernels[i].build();
        ptx = pipeline_ptx(k, "sm_80");
        if (ptx) {
            assert_int_equal(count_of(ptx, "shfl.sync.bfly.b32"), 6);
            free(ptx);
        }
        rk_kernel_free(k);
    }
}

/* A double-buffered cp.async loop (the gpu-check case) and a zero-fill copy. */
static void test_ptx_cp_async(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("cp");
    rk_type pf = rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL);
    rk_value in = rk_add_param(k, "in", pf, NULL), out = rk_add_param(k, "out", pf, NULL);
    rk_value n = rk_add_param(k, "n", RK_T_I32, NULL);
    uint32_t d = 1024;
    rk_value s = rk_build_smem_alloc(k, RK_T_F32, &d, 1);
    rk_value t4 = rk_build_mul(k, rk_build_thread_id(k, 0), rk_const_i32(k, 4));
    rk_value valid = rk_build_cmp(k, "lt", t4, n);
    rk_build_async_copy(k, in, t4, s, t4, valid, 16);
    rk_build_async_copy(k, in, t4, s, rk_build_add(k, t4, rk_const_i32(k, 512)), rk_const_bool(k, true), 8);
    rk_build_async_commit_group(k);
    rk_build_async_wait_group(k, 0);
    rk_build_sync(k);
    rk_store_global(k, out, t4, rk_load_smem(k, s, &t4, 4));
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "sm_80");
    expect_has(ll, "call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) ");
    expect_has(ll, "select i1 %cmp");
    expect_has(ll, ", i32 16, i32 0");
    expect_has(ll, "@llvm.nvvm.cp.async.ca.shared.global.8.s(ptr addrspace(3) %lds.");
    rk_string_free(ll);
    for (size_t ti = 0; ti < RK_COUNTOF(nv_targets); ti++) {
        char *ptx = pipeline_ptx(k, nv_targets[ti]);
        if (!ptx) continue;
        expect_has(ptx, "cp.async.cg.shared.global [");
        expect_has(ptx, "cp.async.ca.shared.global [");
        expect_has(ptx, "], 8, 8;");           /* always valid: the constant source size */
        expect_has(ptx, "cp.async.commit_group;");
        expect_has(ptx, "cp.async.wait_group \t0;");
        free(ptx);
    }
    rk_kernel_free(k);
}

/* The runtime's gpu-check kernels: every case that runs on a target lowers,
 * compiles and assembles for it (sm_90a brings the wgmma tile). */
static void test_gpu_check_kernels(void **state) {
    (void)state;
    for (size_t ti = 0; ti < RK_COUNTOF(nv_targets); ti++) {
        const rk_target *t = tgt(nv_targets[ti]);
        unsigned built = 0;
        for (const st_case *const *c = rt_st_cases; *c; c++) {
            if ((*c)->unsupported && (*c)->unsupported(t)) continue;
            st_problem p = {.target = t, .small = true, .rng = 7};
            assert_int_equal((*c)->setup(&p), RK_OK);
            rk_kernel *k = (*c)->build(&p);
            if (!k) fail_msg("%s: %s", (*c)->name, rk_error_message());
            char *ptx = pipeline_ptx(k, t->name);
            if (ptx && !strcmp((*c)->name, "mma_tile")) expect_has(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
            if (ptx && !strcmp((*c)->name, "wgmma_tile")) {
                expect_has(ptx, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16");
                expect_has(ptx, "fence.proxy.async.shared::cta;");
                expect_has(ptx, "bar.sync \t%r");      /* the warpgroup's named barrier */
            }
            if (ptx && !strcmp((*c)->name, "cp_async_pipeline")) expect_has(ptx, "cp.async.wait_group \t1;");
            free(ptx);
            rk_kernel_free(k);
            for (uint32_t b = 0; b < p.nbufs; b++) {
                rk_free(p.bufs[b].host, 0);
                rk_free(p.bufs[b].ref, 0);
            }
            built++;
        }
        printf("%s: %u gpu-check kernels\n", t->name, built);
        assert_true(built >= (strcmp(t->name, "sm_90a") ? 5u : 6u));
    }
}

/* tile.wgmma on descriptors: the asm form, the tied accumulators, the
 * descriptor's constant fields and the accumulators passed through the wait. */
static void test_wgmma_op(void **state) {
    (void)state;
    rk_kernel *k = op_sample_kernel(RK_OP_WGMMA, "sm_90a");
    assert_non_null(k);
    char *ll = lower_ok(k, "sm_90a");
    /* lbo 128 (8 << 16) and sbo 256 (16 << 32) */
    expect_has(ll, "or i64 %dlo.");
    expect_has(ll, ", 68720001024");
    expect_has(ll, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, $4, $5, p, 1, 1, 0, 0;");
    expect_has(ll, "\"=f,=f,=f,=f,l,l,r,0,1,2,3\"");
    expect_has(ll, "call void @llvm.nvvm.wgmma.fence.sync.aligned()");
    expect_has(ll, "call void @llvm.nvvm.wgmma.commit_group.sync.aligned()");
    expect_has(ll, "asm sideeffect \"wgmma.wait_group.sync.aligned 0;\", \"=f,=f,=f,=f,0,1,2,3,~{memory}\"");
    rk_string_free(ll);
    char *ptx = pipeline_ptx(k, "sm_90a");
    if (ptx) {
        expect_has(ptx, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16");
        expect_has(ptx, "wgmma.wait_group.sync.aligned 0;");
        free(ptx);
    }
    rk_kernel_free(k);
    /* wgmma needs sm_90a: sm_90 refuses it by name */
    k = op_sample_kernel(RK_OP_WGMMA, "sm_90");
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_VERIFY);
    expect_has(rk_error_message(), "sm_90a");
    rk_kernel_free(k);
}

/* tile.setmaxnreg: the NVVM intrinsic with the immediate count, the PTX
 * instruction; sm_90 (no "a") refuses it by name. */
static void test_setmaxnreg(void **state) {
    (void)state;
    rk_kernel *k = op_sample_kernel(RK_OP_SETMAXNREG, "sm_90a");
    assert_non_null(k);
    char *ll = lower_ok(k, "sm_90a");
    expect_has(ll, "call void @llvm.nvvm.setmaxnreg.dec.sync.aligned.u32(i32 240)");
    rk_string_free(ll);
    char *ptx = pipeline_ptx(k, "sm_90a");
    if (ptx) {
        expect_has(ptx, "setmaxnreg.dec.sync.aligned.u32 \t240;");
        free(ptx);
    }
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_VERIFY);
    expect_has(rk_error_message(), "sm_90a");
    rk_kernel_free(k);
}

/* The TMA store sample: the 2-D bulk tensor store from shared memory in a
 * bulk group, the commit and the read-side wait. */
static void test_tma_store(void **state) {
    (void)state;
    rk_kernel *k = op_sample_kernel(RK_OP_TMA_STORE_2D, "sm_90");
    assert_non_null(k);
    char *ll = lower_ok(k, "sm_90");
    expect_has(ll, "call void @llvm.nvvm.cp.async.bulk.commit.group()");
    expect_has(ll, "call void @llvm.nvvm.cp.async.bulk.wait.group.read(i32 0)");
    rk_string_free(ll);
    char *ptx = pipeline_ptx(k, "sm_90");
    if (ptx) {
        expect_has(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [");
        expect_has(ptx, "cp.async.bulk.commit_group;");
        expect_has(ptx, "cp.async.bulk.wait_group.read \t0;");
        free(ptx);
    }
    rk_kernel_free(k);
}

/* The grid barrier: thread 0's read of the generation and its arrival after
 * a gpu fence, the last arrival's fence before the bump, the spin of inline
 * acquire loads at gpu scope and the fence after it; ptxas takes it. (The
 * fences carry the ordering: LLVM 22 prints acq_rel atomics as relaxed
 * atom.) */
static void test_grid_barrier(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("gridbar");
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value sync = rk_add_param(k, "sync", rk_type_ptr(k, RK_T_I64, RK_AS_GLOBAL), NULL);
    rk_kernel_set_cooperative(k, true);
    rk_value t = rk_build_thread_id(k, 0), g = rk_build_grid_dim(k, 0), zero = rk_const_i32(k, 0);
    /* a staged copy's stores become visible to TMA (the async proxy) of any block */
    const rk_fence_proxy_async_opts glob = {.space = "global"};
    rk_build_fence_proxy_async_ex(k, &glob);
    rk_tile_grid_barrier(k, t, sync, zero, g);
    rk_store_global(k, out, t, g);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "sm_90a");
    expect_has(ll, "asm sideeffect \"ld.acquire.gpu.global.b64 $0, [$1];\"");
    expect_has(ll, "asm sideeffect \"fence.proxy.async.global;\"");
    expect_has(ll, "atomicrmw add ptr addrspace(1)");
    expect_has(ll, "acq_rel");
    rk_string_free(ll);
    char *ptx = pipeline_ptx(k, "sm_90a");
    if (ptx) {
        expect_has(ptx, "ld.acquire.gpu.global.b64");
        expect_has(ptx, "fence.proxy.async.global;");
        const char *f = ptx;
        int fences = 0;
        while ((f = strstr(f, "fence.sc.gpu;"))) fences++, f++;
        assert_int_equal(fences, 3);
        expect_has(ptx, "atom.global.add.u64");
        free(ptx);
    }
    rk_kernel_free(k);
}

/* The TMA sample: the tensor map is a byval grid constant, the copy is the
 * 2-D bulk tensor form completing on the mbarrier; an unaligned destination
 * is refused. */
static void test_tma_and_mbarrier(void **state) {
    (void)state;
    rk_kernel *k = op_sample_kernel(RK_OP_TMA_LOAD_2D, "sm_90");
    assert_non_null(k);
    char *ll = lower_ok(k, "sm_90");
    expect_has(ll, "ptr byval([128 x i8]) align 64 \"nvvm.grid_constant\" %tmap");
    expect_has(ll, "align 128");
    rk_string_free(ll);
    char *ptx = pipeline_ptx(k, "sm_90");
    if (ptx) {
        expect_has(ptx, ".param .align 64 .b8 sample_tile_tma_load_2d_param_0[128]");
        expect_has(ptx, "cvta.param.u64");
        expect_has(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [");
        expect_has(ptx, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [");
        expect_has(ptx, "mbarrier.try_wait.parity.shared::cta.b64 p, [");
        expect_has(ptx, "mbarrier.init.shared.b64");
        free(ptx);
    }
    rk_kernel_free(k);
    /* a destination 16 bytes into an allocation */
    k = rk_kernel_new("tma_unaligned");
    rk_param_abi tm = {.tensormap = true};
    rk_value map = rk_add_param(k, "tmap", rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), &tm);
    uint32_t nd = 1024, nb = 1;
    rk_value dst = rk_build_smem_alloc(k, RK_T_F32, &nd, 1), bars = rk_build_smem_alloc(k, RK_T_I64, &nb, 1);
    rk_value four = rk_const_i32(k, 4), zero = rk_const_i32(k, 0);
    rk_build_tma_load_2d(k, map, dst, four, bars, zero, zero, zero);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_INVALID);
    expect_has(rk_error_message(), "128-byte aligned");
    rk_kernel_free(k);
    /* operand 0 must be a tensormap parameter */
    k = rk_kernel_new("tma_plain");
    map = rk_add_param(k, "p", rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), NULL);
    zero = rk_const_i32(k, 0);
    dst = rk_build_smem_alloc(k, RK_T_F32, &nd, 1);
    bars = rk_build_smem_alloc(k, RK_T_I64, &nb, 1);
    /* deliberately ill-formed (operand 0 is not a tensormap parameter): emitted raw so the
     * check itself is what is tested */
    rk_value in2[7] = {map, dst, zero, bars, zero, zero, zero};
    rk_op *op = rk_emit(k, RK_OP_TMA_LOAD_2D, in2, 7, NULL, 0);
    assert_false(rk_op_check(k, op));
    expect_has(rk_builder_error(k), "tensormap");
    rk_kernel_free(k);
    /* a tensor map is opaque: a load through it is refused */
    k = rk_kernel_new("tma_peek");
    map = rk_add_param(k, "tmap", rk_type_ptr(k, RK_T_I8, RK_AS_CONSTANT), &tm);
    rk_value o = rk_add_param(k, "o", rk_type_ptr(k, RK_T_I8, RK_AS_GLOBAL), NULL);
    zero = rk_const_i32(k, 0);
    rk_store_global(k, o, zero, rk_load_global(k, map, zero, 1));
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_INVALID);
    expect_has(rk_error_message(), "only tile.tma_load_2d, tile.tma_load_2d_multicast, tile.tma_load_4d and tile.tma_store_2d");
    rk_kernel_free(k);
}

/* Buffer views: one compare and one 16-byte access in range, a dword at a
 * time beyond it; a 2-byte scalar alone; loads and stores. */
static void test_buffer_views(void **state) {
    (void)state;
    rk_kernel *k = op_sample_kernel(RK_OP_BUFFER_LOAD_VN, "sm_90");
    char *ll = lower_ok(k, "sm_90");
    expect_has(ll, "insertvalue { ptr addrspace(1), i32 } poison, ptr addrspace(1) %in0, 0");
    expect_has(ll, "= icmp ule i64 %end.");
    expect_has(ll, "load <4 x float>, ptr addrspace(1) %addr.");
    expect_has(ll, ", align 16");
    assert_int_equal(count_of(ll, "load i32, ptr addrspace(1)"), 4);
    rk_string_free(ll);
    rk_kernel_free(k);
    /* a view of n bytes (unknown here): the tail path survives optimization */
    k = rk_kernel_new("bufview");
    rk_param_abi ro = {.noalias = true, .readonly = true};
    rk_value in = rk_add_param(k, "in", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), &ro);
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    rk_value nbytes = rk_add_param(k, "nbytes", RK_T_I32, NULL);
    rk_value tid = rk_build_thread_id(k, 0), zero = rk_const_i32(k, 0);
    rk_value r = rk_build_buffer_rsrc(k, in, nbytes);
    rk_value v = rk_load_buffer(k, r, rk_build_mul(k, tid, rk_const_i32(k, 16)), zero, RK_T_F32, 4);
    rk_store_global(k, out, rk_build_mul(k, tid, rk_const_i32(k, 4)), v);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ptx = pipeline_ptx(k, "sm_90");
    if (ptx) {
        assert_int_equal(count_of(ptx, "ld.global.nc.v4.b32"), 1);
        /* the tail path: LLVM proves the last dword can only be in range on the fast path */
        assert_int_equal(count_of(ptx, "ld.global.nc.b32"), 3);
        free(ptx);
    }
    rk_kernel_free(k);
    k = op_sample_kernel(RK_OP_BUFFER_STORE_F16, "sm_80");
    ll = lower_ok(k, "sm_80");
    expect_has(ll, "store half");
    expect_lacks(ll, "buf.slow");                    /* one granule: in range or dropped */
    rk_string_free(ll);
    rk_kernel_free(k);
    k = op_sample_kernel(RK_OP_BUFFER_STORE_VN, "sm_80");
    ll = lower_ok(k, "sm_80");
    expect_has(ll, "store <4 x float>");
    assert_int_equal(count_of(ll, "store i32 "), 4);
    rk_string_free(ll);
    rk_kernel_free(k);
}

/* Cross-lane: the width lands in c, votes use the active mask, ballot is i64. */
static void test_cross_lane(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("lanes");
    rk_value out = rk_add_param(k, "out", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value o64 = rk_add_param(k, "o64", rk_type_ptr(k, RK_T_I64, RK_AS_GLOBAL), NULL);
    rk_value tid = rk_build_thread_id(k, 0), one = rk_const_i32(k, 1);
    const rk_shuffle_opts w8 = {.width = RK_SOME(8)};
    rk_value x = rk_build_shuffle_ex(k, "xor", tid, one, &w8);
    rk_value up = rk_build_shuffle(k, "up", x, one);
    rk_value b = rk_build_wave_ballot(k, rk_build_cmp(k, "lt", up, rk_const_i32(k, 5)));
    rk_store_global(k, out, tid, up);
    rk_store_global(k, o64, tid, b);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "sm_80");
    expect_has(ll, "@llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %tid1, i32 1, i32 6175)");   /* (32-8)<<8 | 31 */
    expect_has(ll, "@llvm.nvvm.shfl.sync.up.i32(i32 -1, ");
    expect_has(ll, ", i32 1, i32 0)");                                                      /* up: clamp 0 */
    expect_has(ll, "call i32 @llvm.nvvm.activemask()");
    expect_has(ll, "@llvm.nvvm.vote.ballot.sync(i32 %active.");
    expect_has(ll, "zext i32 %vote.");
    rk_string_free(ll);
    rk_kernel_free(k);
}

/* Kernel attributes, refusals, flavors. */
static void test_kernel_attrs_and_refusals(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("attrs");
    rk_kernel_set_attr_int(k, "max_workgroup_size", 128);
    rk_kernel_set_attr_int(k, "min_blocks_per_sm", 4);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "sm_90a");
    expect_has(ll, "define ptx_kernel void @attrs() #0 {");
    expect_has(ll, "attributes #0 = { \"nvvm.maxntid\"=\"128\" \"nvvm.minctasm\"=\"4\" norecurse nounwind }");
    expect_has(ll, "target triple = \"nvptx64-nvidia-cuda\"");
    expect_has(ll, "target datalayout = \"e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64\"");
    rk_string_free(ll);
    assert_int_equal(rk_lower_llvm(k, tgt("sm_80"), RK_LLVM20, &ll), RK_OK);
    expect_has(ll, "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"");
    rk_string_free(ll);
    rk_kernel_set_attr_int(k, "min_blocks_per_sm", 99);
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_INVALID);
    expect_has(rk_error_message(), "min_blocks_per_sm");
    rk_kernel_free(k);
    k = rk_kernel_new("amd_attr");
    rk_kernel_set_attr_pair(k, "waves_per_eu", 1, 2);
    rk_build_return(k);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_INVALID);
    expect_has(rk_error_message(), "waves_per_eu is an AMDGPU attribute");
    rk_kernel_free(k);
    /* a shuffle wider than the warp */
    k = rk_kernel_new("wide");
    rk_value o = rk_add_param(k, "o", rk_type_ptr(k, RK_T_I32, RK_AS_GLOBAL), NULL);
    rk_value tid = rk_build_thread_id(k, 0);
    const rk_shuffle_opts w64 = {.width = RK_SOME(64)};
    rk_value x = rk_build_shuffle_ex(k, "idx", tid, tid, &w64);
    rk_store_global(k, o, tid, x);
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_UNSUPPORTED);
    expect_has(rk_error_message(), "warp size 32");
    rk_kernel_free(k);
    /* AMD-only ops never reach the vendor */
    k = op_sample_kernel(RK_OP_DS_SWIZZLE, "sm_90");
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_VERIFY);
    rk_kernel_free(k);
}

/* A pool above 48 KiB is dynamic shared memory; alignment is kept. */
static void test_smem_pool(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("big");
    rk_value o = rk_add_param(k, "o", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    uint32_t d = 16384;
    const rk_smem_alloc_opts a1024 = {.align = RK_SOME(1024)};
    rk_value s = rk_build_smem_alloc_ex(k, RK_T_F32, &d, 1, &a1024);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_store_smem(k, s, &tid, rk_const_f32(k, 1.0f));
    rk_build_sync(k);
    rk_store_global(k, o, tid, rk_load_smem(k, s, &tid, 1));
    assert_int_equal(rk_kernel_finish(k), RK_OK);
    char *ll = lower_ok(k, "sm_90");
    expect_has(ll, "@smem_dyn_big = external addrspace(3) global [0 x i8], align 1024");
    rk_string_free(ll);
    char *ptx = pipeline_ptx(k, "sm_90");
    if (ptx) {
        expect_has(ptx, ".extern .shared .align 1024 .b8 smem_dyn_big[]");
        free(ptx);
    }
    rk_kernel_free(k);
}

/* Twice the same text, and the parsed kernel lowers like the built one. */
static void test_deterministic(void **state) {
    (void)state;
    for (unsigned i = 0; i < corpus_count; i++) {
        rk_kernel *k = corpus_kernels[i].build();
        char *a = NULL, *b = NULL;
        rk_status s = rk_lower_llvm(k, tgt("sm_90a"), RK_LLVM22, &a);
        if (s == RK_OK) {
            assert_int_equal(rk_lower_llvm(k, tgt("sm_90a"), RK_LLVM22, &b), RK_OK);
            assert_string_equal(a, b);
            char *text = rk_serialize(k);
            rk_kernel *p = NULL;
            assert_int_equal(rk_parse(text, strlen(text), &p), RK_OK);
            rk_string_free(b);
            b = lower_ok(p, "sm_90a");
            assert_string_equal(a, b);
            rk_kernel_free(p);
            rk_string_free(text);
        } else {
            assert_int_equal(s, RK_ERR_VERIFY);   /* an AMD-only corpus kernel */
        }
        rk_string_free(a);
        rk_string_free(b);
        rk_kernel_free(k);
    }
    rk_kernel *k = op_sample_kernel(RK_OP_WGMMA, "sm_90a");
    char *a = lower_ok(k, "sm_90a"), *b = lower_ok(k, "sm_90a");
    assert_string_equal(a, b);
    rk_string_free(a);
    rk_string_free(b);
    rk_kernel_free(k);
}

/* tile.wgmma_rs: register A as four b32 operands (the f16 fragment bitcast),
 * B's descriptor, no trans-a immediate; ptxas takes it; sm_90 refuses it. */
static void test_wgmma_rs_op(void **state) {
    (void)state;
    rk_kernel *k = op_sample_kernel(RK_OP_WGMMA_RS, "sm_90a");
    assert_non_null(k);
    char *ll = lower_ok(k, "sm_90a");
    expect_has(ll, "to <4 x i32>");
    expect_has(ll, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $8, p, 1, 1, 0;");
    expect_has(ll, "\"=f,=f,=f,=f,r,r,r,r,l,r,0,1,2,3\"");
    rk_string_free(ll);
    char *ptx = pipeline_ptx(k, "sm_90a");
    if (ptx) {
        expect_has(ptx, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16");
        free(ptx);
    }
    rk_kernel_free(k);
    k = op_sample_kernel(RK_OP_WGMMA_RS, "sm_90");
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_VERIFY);
    expect_has(rk_error_message(), "sm_90a");
    rk_kernel_free(k);
}

/* Clusters: cluster_dims becomes .reqnctapercluster; the multicast TMA takes
 * the 16-bit CTA mask, the remote arrive maps the barrier with mapa; a
 * target without clusters refuses cluster_dims, an oversize cluster too. */
static void test_cluster_ops(void **state) {
    (void)state;
    rk_kernel *k = op_sample_kernel(RK_OP_TMA_LOAD_2D_MULTICAST, "sm_90a");
    assert_non_null(k);
    rk_kernel_set_cluster_dims(k, 2, 1, 1);
    /* text round trip: the attribute and the op survive it byte for byte */
    char *txt = rk_serialize(k);
    rk_kernel *back = NULL;
    assert_int_equal(rk_parse(txt, strlen(txt), &back), RK_OK);
    char *txt2 = rk_serialize(back);
    assert_string_equal(txt, txt2);
    expect_has(txt, "cluster_dims");
    expect_has(txt, "tile.tma_load_2d_multicast");
    uint32_t cd[3];
    assert_true(rk_kernel_cluster_dims(back, cd) && cd[0] == 2 && cd[1] == 1 && cd[2] == 1);
    rk_string_free(txt);
    rk_string_free(txt2);
    rk_kernel_free(back);
    char *ll = lower_ok(k, "sm_90a");
    expect_has(ll, "\"nvvm.cluster_dim\"=\"2,1,1\"");
    expect_has(ll, ".multicast::cluster [$0], [$1, {$2, $3}], [$4], $5;");
    expect_has(ll, "trunc i32");
    rk_string_free(ll);
    char *ptx = pipeline_ptx(k, "sm_90a");
    if (ptx) {
        expect_has(ptx, ".reqnctapercluster 2, 1, 1");
        free(ptx);
    }
    rk_kernel_free(k);
    k = op_sample_kernel(RK_OP_MBARRIER_ARRIVE_CLUSTER, "sm_90");
    ll = lower_ok(k, "sm_90");
    expect_has(ll, "mapa.shared::cluster.u64 ra, $0, $1;");
    expect_has(ll, "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];");
    expect_has(ll, "@llvm.nvvm.barrier.cluster.arrive()");
    expect_has(ll, "@llvm.nvvm.barrier.cluster.wait()");
    expect_has(ll, "@llvm.nvvm.fence.mbarrier_init.release.cluster()");
    expect_has(ll, "@llvm.nvvm.read.ptx.sreg.cluster.ctarank()");
    rk_string_free(ll);
    rk_kernel_free(k);
    k = op_sample_kernel(RK_OP_CLUSTER_RANK, "sm_80");
    rk_kernel_set_cluster_dims(k, 1, 2, 1);
    assert_int_equal(rk_lower_llvm(k, tgt("sm_80"), RK_LLVM22, &ll), RK_ERR_VERIFY);
    expect_has(rk_error_message(), "sm_90");
    rk_kernel_free(k);
    k = op_sample_kernel(RK_OP_CLUSTER_RANK, "sm_90");
    rk_kernel_set_cluster_dims(k, 4, 4, 1);
    assert_int_equal(rk_lower_llvm(k, tgt("sm_90"), RK_LLVM22, &ll), RK_ERR_VERIFY);
    expect_has(rk_error_message(), "cluster_dims must be [x, y, z]");
    rk_kernel_free(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_every_nv_target),
        cmocka_unit_test(test_every_nv_atom),
        cmocka_unit_test(test_ptx_vector_add),
        cmocka_unit_test(test_ptx_shuffle_reduction),
        cmocka_unit_test(test_ptx_cp_async),
        cmocka_unit_test(test_gpu_check_kernels),
        cmocka_unit_test(test_wgmma_op),
        cmocka_unit_test(test_cluster_ops),
        cmocka_unit_test(test_wgmma_rs_op),
        cmocka_unit_test(test_tma_and_mbarrier),
        cmocka_unit_test(test_buffer_views),
        cmocka_unit_test(test_cross_lane),
        cmocka_unit_test(test_kernel_attrs_and_refusals),
        cmocka_unit_test(test_smem_pool),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_setmaxnreg),
        cmocka_unit_test(test_tma_store),
        cmocka_unit_test(test_grid_barrier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
