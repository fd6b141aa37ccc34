/* rocke tests — the matrix-multiply tile layer on the emulator: tile copies
 * (async and plain, every vec, swizzled and padded layouts, partial last
 * passes, tiles hanging over the tensor's edges: zeros there) read back
 * element by element; one atom product per block with both operands loaded
 * from LDS by rk_tile_frag_load — ldmatrix and .trans on NVIDIA, lane-map
 * runs on AMD and for the other atoms — for K inner and K outer, against a
 * host matmul in double. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocke/emu.h"
#include "rocke/tile_mma.h"
#include "../src/base/fp.h"

static uint64_t rng = 0x853c49e6748fea9bull;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static uint16_t h16(rk_scalar s, double v) { return s == RK_S_F16 ? rk_f64_to_f16(v) : rk_f64_to_bf16(v); }
static double f16v(rk_scalar s, uint16_t h) { return s == RK_S_F16 ? rk_f16_to_f32(h) : rk_bf16_to_f32(h); }

static rk_value c32(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

static void launch(const char *target, rk_kernel *k, uint32_t threads, void **bufs, const size_t *bytes, int n) {
    if (rk_kernel_finish(k)) fail_msg("%s", rk_builder_error(k));
    rk_emu *e = rk_emu_new(rk_target_find(target), NULL);
    uint64_t addr[8];
    void *args[8];
    for (int i = 0; i < n; i++) {
        assert_int_equal(rk_emu_register(e, bufs[i], bytes[i], NULL, &addr[i]), RK_OK);
        args[i] = &addr[i];
    }
    uint32_t g[3] = {1, 1, 1}, b[3] = {threads, 1, 1};
    if (rk_emu_launch(e, k, g, b, 0, args)) fail_msg("%s: %s", target, rk_error_message());
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* ---- copies ------------------------------------------------------------------------------------ */
typedef struct copy_case {
    uint32_t rows, cols, vec, threads;
    bool async;
    uint32_t pad, sw_bits;     /* Swizzle<sw_bits, 4, 3> */
    int32_t R, C, r0, c0;      /* the tensor and the tile's origin */
    uint32_t gvec;             /* gathered from accesses of gvec elements (0: plain) */
    bool split;                /* through rk_tile_copy_fetch + rk_tile_copy_put */
} copy_case;

static void run_copy(const char *target, const copy_case *cc) {
    rk_scalar el = RK_S_F16;
    rk_lds_layout lds;
    assert_int_equal(rk_lds_layout_make(cc->rows, cc->cols, 2, cc->pad, cc->sw_bits, 4, 3, &lds), RK_OK);
    rk_tile_copy cp;
    rk_status made = cc->gvec ? rk_tile_copy_make_gathered(cc->rows, cc->cols, cc->vec, cc->gvec, cc->threads, el,
                                                           &lds, &cp)
                              : rk_tile_copy_make(cc->rows, cc->cols, cc->vec, cc->threads, el, &lds, cc->async, &cp);
    if (made) fail_msg("%s", rk_error_message());
    rk_kernel *k = rk_kernel_new("copy");
    rk_kernel_set_attr_int(k, "max_workgroup_size", 1024);
    rk_type ph = rk_type_ptr(k, RK_T_F16, RK_AS_GLOBAL);
    rk_value src = rk_add_param(k, "Src", ph, NULL);
    rk_value dst = rk_add_param(k, "Dst", ph, NULL);
    uint32_t elems = rk_lds_layout_bytes(&lds) / 2;
    rk_value smem = rk_build_smem_alloc(k, RK_T_F16, &elems, 1);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_tile_copy_lanes ln;
    rk_tile_copy_lanes_init(k, &cp, tid, &ln);
    rk_tile_gview g = {src, c32(k, cc->C), c32(k, cc->R), c32(k, cc->C)};
    rk_value r0 = c32(k, cc->r0), c0 = c32(k, cc->c0), zero = c32(k, 0);
    if (cc->split) {
        rk_tile_copy_regs held;
        rk_tile_copy_fetch(k, &cp, &ln, &g, r0, c0, &held);
        rk_tile_copy_put(k, &cp, &ln, &held, smem, zero);
    } else {
        rk_tile_copy_issue(k, &cp, &ln, &g, r0, c0, smem, zero);
    }
    if (cc->async) {
        rk_build_async_commit_group(k);
        rk_build_async_wait_group(k, 0);
    }
    rk_build_sync(k);
    /* read every tile element back through the layout: thread t, elements t, t + threads, ... */
    for (uint32_t e = 0; e < cc->rows * cc->cols; e += cc->threads) {
        rk_value base = c32(k, (int32_t)e);
        rk_value i = rk_build_add(k, tid, base);
        rk_value lim = c32(k, (int32_t)(cc->rows * cc->cols));
        rk_value live = rk_build_cmp(k, "lt", i, lim);
        rk_if_begin(k, live);
        rk_value colsv = c32(k, (int32_t)cc->cols);
        rk_value r = rk_build_udiv(k, i, colsv);
        rk_value c = rk_build_umod(k, i, colsv);
        rk_ix byte = rk_tile_lds_offset(k, &lds, rk_ix_v(r), rk_ix_v(c));
        rk_ix el2 = rk_ix_udiv(k, byte, rk_ix_c(2));
        rk_value at = rk_ix_value(k, el2);
        rk_value v = rk_load_smem(k, smem, &at, 1);
        rk_store_global(k, dst, i, v);
        rk_if_end(k, NULL, 0);
    }
    rk_build_return(k);
    size_t n = (size_t)cc->R * cc->C;
    uint16_t *S = malloc(n * 2), *D = malloc((size_t)cc->rows * cc->cols * 2);
    for (size_t i = 0; i < n; i++) S[i] = rk_f32_to_f16((float)(i % 2048) - 1000.0f);
    memset(D, 0xff, (size_t)cc->rows * cc->cols * 2);
    void *bufs[] = {S, D};
    size_t bytes[] = {n * 2, (size_t)cc->rows * cc->cols * 2};
    launch(target, k, cc->threads, bufs, bytes, 2);
    for (uint32_t r = 0; r < cc->rows; r++)
        for (uint32_t c = 0; c < cc->cols; c++) {
            int32_t gr = cc->r0 + (int32_t)r, gc = cc->c0 + (int32_t)c;
            uint16_t want = gr < cc->R && gc < cc->C ? S[(size_t)gr * cc->C + gc] : 0;
            if (D[r * cc->cols + c] != want)
                fail_msg("%s copy %ux%u vec %u %s: tile (%u, %u) = %04x want %04x", target, cc->rows, cc->cols,
                         cc->vec, cc->async ? "async" : "sync", r, c, D[r * cc->cols + c], want);
        }
    free(S);
    free(D);
}

static void test_copies(void **state) {
    (void)state;
    const copy_case cases[] = {
        {64, 32, 8, 128, true, 0, 2, 100, 72, 64, 48},    /* 64-byte rows, Swizzle<2,4,3>, both edges */
        {32, 64, 8, 128, true, 0, 3, 40, 64, 0, 0},       /* 128-byte rows, 128B swizzle, rows past the end */
        {16, 32, 4, 64, true, 8, 0, 16, 36, 0, 4},        /* 8-byte chunks, padding */
        {16, 32, 2, 64, true, 0, 0, 9, 34, 0, 2},         /* 4-byte chunks */
        {12, 8, 1, 64, false, 0, 0, 7, 9, 1, 3},          /* scalar, partial last pass */
        {24, 16, 8, 32, false, 8, 0, 30, 40, 16, 32},     /* vector load + store */
        {8, 64, 8, 128, true, 0, 3, 8, 64, 0, 0},         /* fewer chunks than threads */
        {24, 16, 8, 32, false, 8, 0, 30, 40, 16, 32, 0, true},        /* split halves of a plain copy */
        /* gathered 16-byte chunks from 2-byte reads of rows of odd length: a tile inside the columns, one
         * across their end (every piece checked), rows past the end, a swizzle, a partial last pass */
        {16, 32, 8, 64, false, 0, 0, 9, 37, 0, 0, 1, true},
        {16, 32, 8, 64, false, 0, 0, 9, 37, 4, 32, 1, true},
        {32, 64, 8, 128, false, 0, 3, 21, 101, 8, 40, 1, false},
        {12, 8, 8, 64, false, 0, 0, 7, 9, 1, 1, 1, true},
        {16, 32, 8, 64, false, 8, 0, 11, 34, 2, 16, 2, true},       /* 4-byte pieces joined pairwise */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_copy("sm_90", &cases[i]);
        run_copy("gfx942", &cases[i]);
    }
    rk_lds_layout l;
    rk_tile_copy cp;
    assert_int_equal(rk_lds_layout_make(8, 12, 2, 0, 0, 0, 0, &l), RK_OK);
    assert_int_equal(rk_tile_copy_make(8, 12, 8, 64, RK_S_F16, &l, true, &cp), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "multiple of vec"));
    assert_int_equal(rk_lds_layout_make(8, 16, 2, 0, 0, 0, 0, &l), RK_OK);
    assert_int_equal(rk_tile_copy_make(8, 16, 1, 64, RK_S_F16, &l, true, &cp), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "4, 8 or 16 bytes"));
    assert_int_equal(rk_tile_copy_make(8, 16, 8, 64, RK_S_F32, &l, false, &cp), RK_ERR_INVALID);
    assert_int_equal(rk_tile_copy_make_gathered(8, 16, 8, 3, 64, RK_S_F16, &l, &cp), RK_ERR_INVALID);
    assert_non_null(strstr(rk_error_message(), "must divide the chunk"));
    assert_int_equal(rk_tile_copy_make_gathered(8, 16, 4, 8, 64, RK_S_F16, &l, &cp), RK_ERR_INVALID);
}

/* The widest hardware swizzle (Swizzle<B,4,3>) a row of `bytes` holds. */
static uint32_t sw_for(uint32_t bytes) { return bytes >= 128 ? 3 : bytes >= 64 ? 2 : bytes >= 32 ? 1 : 0; }

/* ---- one atom product from LDS fragments ---------------------------------------------------------- */
/* pair: B for two n-adjacent atoms (N = 2 atom N) through rk_tile_frag_load_b_pair. */
static void run_atom(const char *target, rk_atom_id id, bool a_kin, bool b_kin, uint32_t sw_bits, bool pair) {
    const rk_mma_atom *a = rk_mma_atom_get(id);
    assert_non_null(a);
    uint32_t M = a->m, N = a->n * (pair ? 2 : 1), K = a->k;
    rk_scalar ea = a->a_elem, eb = a->b_elem;
    /* A as [M][K] (K inner) or [K][M]; B as [N][K] or [K][N]; row bytes >= 16 needed for the swizzle */
    uint32_t ar = a_kin ? M : K, ac = a_kin ? K : M, br = b_kin ? N : K, bc = b_kin ? K : N;
    rk_lds_layout la, lb;
    uint32_t sa = sw_bits ? sw_for(ac * 2) : 0, sb = sw_bits ? sw_for(bc * 2) : 0;
    assert_int_equal(rk_lds_layout_make(ar, ac, 2, 0, sa, 4, 3, &la), RK_OK);
    assert_int_equal(rk_lds_layout_make(br, bc, 2, 0, sb, 4, 3, &lb), RK_OK);
    rk_tile_copy ca, cb;
    uint32_t threads = a->lanes;
    assert_int_equal(rk_tile_copy_make(ar, ac, 8, threads, ea, &la, true, &ca), RK_OK);
    assert_int_equal(rk_tile_copy_make(br, bc, 8, threads, eb, &lb, true, &cb), RK_OK);
    rk_kernel *k = rk_kernel_new("atom");
    rk_type pa = rk_type_ptr(k, (rk_type){ea}, RK_AS_GLOBAL), pb = rk_type_ptr(k, (rk_type){eb}, RK_AS_GLOBAL);
    rk_value A = rk_add_param(k, "A", pa, NULL), B = rk_add_param(k, "B", pb, NULL);
    rk_value D = rk_add_param(k, "D", rk_type_ptr(k, RK_T_F32, RK_AS_GLOBAL), NULL);
    uint32_t na = rk_lds_layout_bytes(&la) / 2, nb = rk_lds_layout_bytes(&lb) / 2;
    rk_value sA = rk_build_smem_alloc(k, (rk_type){ea}, &na, 1);
    rk_value sB = rk_build_smem_alloc(k, (rk_type){eb}, &nb, 1);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_tile_copy_lanes la_l, lb_l;
    rk_tile_copy_lanes_init(k, &ca, tid, &la_l);
    rk_tile_copy_lanes_init(k, &cb, tid, &lb_l);
    rk_value zero = c32(k, 0);
    rk_tile_gview ga = {A, c32(k, (int32_t)ac), c32(k, (int32_t)ar), c32(k, (int32_t)ac)};
    rk_tile_gview gb = {B, c32(k, (int32_t)bc), c32(k, (int32_t)br), c32(k, (int32_t)bc)};
    rk_tile_copy_issue(k, &ca, &la_l, &ga, zero, zero, sA, zero);
    rk_tile_copy_issue(k, &cb, &lb_l, &gb, zero, zero, sB, zero);
    rk_build_async_commit_group(k);
    rk_build_async_wait_group(k, 0);
    rk_build_sync(k);
    rk_tile_operand oa = {RK_FRAG_A, a_kin, la}, ob = {RK_FRAG_B, b_kin, lb};
    rk_value fa = rk_tile_frag_load(k, a, &oa, sA, zero, tid, zero, zero);
    rk_value fb[2];
    if (pair) assert_true(rk_tile_frag_load_b_pair(k, a, &ob, sB, zero, tid, zero, zero, fb));
    else fb[0] = rk_tile_frag_load(k, a, &ob, sB, zero, tid, zero, zero);
    for (uint32_t j = 0; j < (pair ? 2u : 1u); j++) {
        rk_value acc = rk_tile_acc_zero(k, a);
        rk_value d = rk_build_mma(k, a->op_id, fa, fb[j], acc);
        for (uint32_t s = 0; s < a->c_len; s++) {
            rk_tile_frag_coord fc = rk_tile_atom_coord(k, a->id, RK_FRAG_C, tid, s);
            rk_value nv = c32(k, (int32_t)N);
            rk_value ro = rk_build_mul(k, fc.row, nv);
            rk_value cj = c32(k, (int32_t)(j * a->n));
            rk_value col = rk_build_add(k, fc.col, cj);
            rk_value at = rk_build_add(k, ro, col);
            rk_value v = rk_build_vextract(k, d, s);
            rk_store_global(k, D, at, v);
        }
    }
    rk_build_return(k);
    double *Am = malloc(sizeof(double) * M * K), *Bm = malloc(sizeof(double) * K * N);
    uint16_t *Ag = malloc(2 * M * K), *Bg = malloc(2 * K * N);
    float *Dg = calloc(M * N, 4);
    for (uint32_t m = 0; m < M; m++)
        for (uint32_t kk = 0; kk < K; kk++) {
            uint16_t h = h16(ea, ((int)(rnd() % 33) - 16) / 8.0);
            Am[m * K + kk] = f16v(ea, h);
            Ag[a_kin ? m * K + kk : kk * M + m] = h;
        }
    for (uint32_t kk = 0; kk < K; kk++)
        for (uint32_t n = 0; n < N; n++) {
            uint16_t h = h16(eb, ((int)(rnd() % 33) - 16) / 8.0);
            Bm[kk * N + n] = f16v(eb, h);
            Bg[b_kin ? n * K + kk : kk * N + n] = h;
        }
    void *bufs[] = {Ag, Bg, Dg};
    size_t bytes[] = {2 * M * K, 2 * K * N, 4 * M * N};
    launch(target, k, threads, bufs, bytes, 3);
    for (uint32_t m = 0; m < M; m++)
        for (uint32_t n = 0; n < N; n++) {
            double want = 0;
            for (uint32_t kk = 0; kk < K; kk++) want += Am[m * K + kk] * Bm[kk * N + n];
            if (Dg[m * N + n] != want)
                fail_msg("%s %s A %s B %s sw %u%s: D[%u,%u] = %g want %g", target, a->op_id, a_kin ? "MxK" : "KxM",
                         b_kin ? "NxK" : "KxN", sw_bits, pair ? " (B pair)" : "", m, n, Dg[m * N + n], want);
        }
    free(Am); free(Bm); free(Ag); free(Bg); free(Dg);
}

static void test_atoms_from_lds(void **state) {
    (void)state;
    const struct { const char *target; rk_atom_id id; } cases[] = {
        {"sm_90", RK_ATOM_MMA_M16N8K16_F32_F16},     {"sm_90", RK_ATOM_MMA_M16N8K16_F32_BF16},
        {"sm_80", RK_ATOM_MMA_M16N8K8_F32_F16},      {"gfx942", RK_ATOM_MFMA_F32_16X16X16_F16},
        {"gfx942", RK_ATOM_MFMA_F32_32X32X8_BF16},   {"gfx950", RK_ATOM_MFMA_F32_16X16X32_F16},
        {"gfx950", RK_ATOM_MFMA_F32_32X32X16_BF16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int a_kin = 0; a_kin < 2; a_kin++)
            for (int b_kin = 0; b_kin < 2; b_kin++)
                for (uint32_t sw = 0; sw <= 3; sw += 3) run_atom(cases[i].target, cases[i].id, a_kin, b_kin, sw, false);
    /* B two atoms per ldmatrix.x4 (.trans for K x N), plain and swizzled */
    static const rk_atom_id pairs[] = {RK_ATOM_MMA_M16N8K16_F32_F16, RK_ATOM_MMA_M16N8K16_F32_BF16};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        for (int b_kin = 0; b_kin < 2; b_kin++)
            for (uint32_t sw = 0; sw <= 3; sw += 3) run_atom("sm_90", pairs[i], i == 0, b_kin, sw, true);
    const rk_mma_atom *m = rk_mma_atom_get(RK_ATOM_MMA_M16N8K16_F32_F16);
    rk_tile_operand op = {RK_FRAG_A, true, {0}};
    assert_true(rk_tile_frag_uses_ldmatrix(m, &op));
    assert_false(rk_tile_frag_uses_ldmatrix(rk_mma_atom_get(RK_ATOM_MFMA_F32_16X16X16_F16), &op));
    assert_int_equal(rk_tile_acc_col_run(m), 2);
    assert_int_equal(rk_tile_acc_col_run(rk_mma_atom_get(RK_ATOM_MFMA_F32_16X16X16_F16)), 1);
}

/* The layout a GEMM should pick is the conflict-free one: check the scores. */
static void test_conflict_scores(void **state) {
    (void)state;
    const rk_mma_atom *m = rk_mma_atom_get(RK_ATOM_MMA_M16N8K16_F32_F16);
    rk_lds_layout plain, sw;
    assert_int_equal(rk_lds_layout_make(128, 32, 2, 0, 0, 0, 0, &plain), RK_OK);
    assert_int_equal(rk_lds_layout_make(128, 32, 2, 0, 2, 4, 3, &sw), RK_OK);
    rk_tile_operand p = {RK_FRAG_A, true, plain}, s = {RK_FRAG_A, true, sw};
    assert_int_equal(rk_tile_frag_conflicts(m, &p), 4);
    assert_int_equal(rk_tile_frag_conflicts(m, &s), 1);
    /* B's pair load (x4: n 0-15) on the same kind of layouts: rows of 64 bytes K inner, of 128 bytes K outer */
    rk_lds_layout bp, bs, tp, ts;
    assert_int_equal(rk_lds_layout_make(128, 32, 2, 0, 0, 0, 0, &bp), RK_OK);
    assert_int_equal(rk_lds_layout_make(128, 32, 2, 0, 2, 4, 3, &bs), RK_OK);
    assert_int_equal(rk_lds_layout_make(32, 64, 2, 0, 0, 0, 0, &tp), RK_OK);
    assert_int_equal(rk_lds_layout_make(32, 64, 2, 0, 3, 4, 3, &ts), RK_OK);
    rk_tile_operand obp = {RK_FRAG_B, true, bp}, obs = {RK_FRAG_B, true, bs};
    rk_tile_operand otp = {RK_FRAG_B, false, tp}, ots = {RK_FRAG_B, false, ts};
    assert_int_equal(rk_tile_frag_pair_conflicts(m, &obp), 4);
    assert_int_equal(rk_tile_frag_pair_conflicts(m, &obs), 1);
    assert_int_equal(rk_tile_frag_pair_conflicts(m, &otp), 8);
    assert_int_equal(rk_tile_frag_pair_conflicts(m, &ots), 1);
    rk_tile_copy cp;
    assert_int_equal(rk_tile_copy_make(128, 32, 8, 128, RK_S_F16, &sw, true, &cp), RK_OK);
    assert_int_equal(rk_tile_copy_conflicts(&cp, 32), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies),
        cmocka_unit_test(test_atoms_from_lds),
        cmocka_unit_test(test_conflict_scores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
