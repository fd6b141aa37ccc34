/* rocke tests — every matrix atom of the catalog on the emulator: A, B and C
 * are distributed to the lanes by layout formulas written here again from
 * the AMD matrix-instruction layouts and the PTX ISA fragment tables (not by
 * the catalog's map functions), D is computed on the host in double and read
 * back through the same formulas. Values are small multiples of 1/8 so every
 * sum is exact and any lane-map slip shows. Scaled (MX) atoms also get
 * random E8M0 scale words (byte chosen by opsel), every pair of per-operand
 * formats, the extreme bytes 0/254 and NaN (255). Also ldmatrix (x1/x2/x4,
 * .trans) and gfx950's ds_read_tr16_b64. Layer: tests. */
#include "emu_test.h"

typedef struct rc { uint32_t r, c, b; } rc;

/* Independent layouts: slot s of lane l of operand which (0 A, 1 B, 2 C). */
static rc layout(const rk_mma_atom *a, int which, uint32_t l, uint32_t s) {
    if (a->lanes == 32) {
        uint32_t g = l / 4, t = l % 4;
        bool tf32 = a->a_elem == RK_S_F32;
        if (which == 2) return (rc){g + 8 * (s / 2), 2 * t + s % 2, 0};
        if (a->k == 32) {   /* 8-bit m16n8k32: four K per register */
            if (which == 0) return (rc){g + 8 * ((s / 4) % 2), 4 * t + s % 4 + 16 * (s / 8), 0};
            return (rc){4 * t + s % 4 + 16 * (s / 4), g, 0};
        }
        if (which == 0) {
            if (tf32) return (rc){g + 8 * (s % 2), t + 4 * (s / 2), 0};
            return (rc){g + 8 * ((s / 2) % 2), 2 * t + s % 2 + 8 * (s / 4), 0};
        }
        if (tf32) return (rc){t + 4 * s, g, 0};
        return (rc){2 * t + s % 2 + 8 * (s / 2), g, 0};
    }
    if (a->batch > 1) {                             /* 4x4x4, 16 blocks: block l/4 */
        uint32_t b = l / 4;
        if (which == 0) return (rc){l % 4, s, b};
        if (which == 1) return (rc){s, l % 4, b};
        return (rc){s, l % 4, b};
    }
    uint32_t n = a->m;                              /* 16 or 32: lanes per row group */
    uint32_t grp = l / n, per = which == 0 ? a->a_len : a->b_len;
    if (which == 0) return (rc){l % n, per * grp + s, 0};
    if (which == 1) return (rc){per * grp + s, l % n, 0};
    if (n == 16) return (rc){4 * grp + s, l % 16, 0};
    return (rc){8 * (s / 4) + 4 * grp + s % 4, l % 32, 0};
}

static rk_scalar elem_on(const rk_target *t, rk_scalar e) {
    if (e == RK_S_FP8E4M3) return t->fp8;
    if (e == RK_S_BF8E5M2) return t->bf8;
    return e;
}

static void put_elem(void *buf, size_t i, rk_scalar s, double v) {
    switch (s) {
    case RK_S_F16: ((uint16_t *)buf)[i] = rk_f64_to_f16(v); break;
    case RK_S_BF16: ((uint16_t *)buf)[i] = rk_f64_to_bf16(v); break;
    case RK_S_F32: ((float *)buf)[i] = (float)v; break;
    case RK_S_FP8E4M3: ((uint8_t *)buf)[i] = rk_f64_to_fp8(v, RK_FP8_E4M3); break;
    case RK_S_BF8E5M2: ((uint8_t *)buf)[i] = rk_f64_to_fp8(v, RK_FP8_E5M2); break;
    case RK_S_FP8E4M3FNUZ: ((uint8_t *)buf)[i] = rk_f64_to_fp8(v, RK_FP8_E4M3_FNUZ); break;
    default: ((uint8_t *)buf)[i] = rk_f64_to_fp8(v, RK_FP8_E5M2_FNUZ); break;
    }
}
static double get_elem(const void *buf, size_t i, rk_scalar s) {
    switch (s) {
    case RK_S_F16: return rk_f16_to_f32(((const uint16_t *)buf)[i]);
    case RK_S_BF16: return rk_bf16_to_f32(((const uint16_t *)buf)[i]);
    case RK_S_F32: return ((const float *)buf)[i];
    case RK_S_FP8E4M3: return rk_fp8_to_f32(((const uint8_t *)buf)[i], RK_FP8_E4M3);
    case RK_S_BF8E5M2: return rk_fp8_to_f32(((const uint8_t *)buf)[i], RK_FP8_E5M2);
    case RK_S_FP8E4M3FNUZ: return rk_fp8_to_f32(((const uint8_t *)buf)[i], RK_FP8_E4M3_FNUZ);
    default: return rk_fp8_to_f32(((const uint8_t *)buf)[i], RK_FP8_E5M2_FNUZ);
    }
}
static size_t ebytes(rk_scalar s) { return s == RK_S_F32 ? 4 : s == RK_S_F16 || s == RK_S_BF16 ? 2 : 1; }

/* Fragments wider than one vector load (16 elements: the 32 x 8-bit ones of
 * the gfx950 16x16x128 atoms) travel as i32 words, bitcast after the load. */
static bool wide_frag(uint32_t n) { return n > 16; }
static rk_value frag_param(rk_kernel *k, const char *name, rk_scalar e, uint32_t n) {
    return et_ptr_param(k, name, wide_frag(n) ? RK_T_I32 : (rk_type){e});
}
static rk_value load_frag(rk_kernel *k, rk_value p, rk_value lane, rk_scalar e, uint32_t n) {
    uint32_t words = n / 4;
    if (!wide_frag(n)) return rk_load_global(k, p, rk_build_mul(k, lane, rk_const_i32(k, (int32_t)n)), n);
    rk_value w = rk_load_global(k, p, rk_build_mul(k, lane, rk_const_i32(k, (int32_t)words)), words);
    return rk_build_bitcast(k, w, rk_type_vec(k, (rk_type){e}, n));
}

static void run_atom(const rk_mma_atom *a, const rk_target *t, bool exact) {
    rk_scalar ae = elem_on(t, a->a_elem), be = elem_on(t, a->b_elem);
    rk_kernel *k = rk_kernel_new("atom");
    rk_value A = frag_param(k, "A", ae, a->a_len), B = frag_param(k, "B", be, a->b_len);
    rk_value C = et_ptr_param(k, "C", RK_T_F32), D = et_ptr_param(k, "D", RK_T_F32);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value cc = rk_const_i32(k, a->c_len);
    rk_value ic = rk_build_mul(k, l, cc);
    rk_value fa = load_frag(k, A, l, ae, a->a_len), fb = load_frag(k, B, l, be, a->b_len);
    rk_value fc = rk_load_global(k, C, ic, a->c_len);
    rk_value d = rk_build_mma(k, a->op_id, fa, fb, fc);
    rk_store_global(k, D, ic, d);
    rk_build_return(k);
    et_finish(k);

    uint32_t M = a->m, N = a->n, K = a->k, nb = a->batch, L = a->lanes;
    double *ma = calloc((size_t)nb * M * K, sizeof(double)), *mb = calloc((size_t)nb * K * N, sizeof(double));
    double *mc = calloc((size_t)nb * M * N, sizeof(double));
    for (size_t i = 0; i < (size_t)nb * M * K; i++) ma[i] = exact ? (double)((int)(et_rand() % 9) - 4) / 8 : et_unit();
    for (size_t i = 0; i < (size_t)nb * K * N; i++) mb[i] = exact ? (double)((int)(et_rand() % 9) - 4) / 8 : et_unit();
    for (size_t i = 0; i < (size_t)nb * M * N; i++) mc[i] = exact ? (double)((int)(et_rand() % 17) - 8) / 4 : et_unit();
    /* inputs as the target's type holds them (fp8 rounds the random ones) */
    void *ha = calloc((size_t)L * a->a_len, 4), *hb = calloc((size_t)L * a->b_len, 4);
    float *hc = calloc((size_t)L * a->c_len, 4), *hd = calloc((size_t)L * a->c_len, 4);
    for (uint32_t ln = 0; ln < L; ln++) {
        for (uint32_t s = 0; s < a->a_len; s++) {
            rc p = layout(a, 0, ln, s);
            put_elem(ha, (size_t)ln * a->a_len + s, ae, ma[((size_t)p.b * M + p.r) * K + p.c]);
        }
        for (uint32_t s = 0; s < a->b_len; s++) {
            rc p = layout(a, 1, ln, s);
            put_elem(hb, (size_t)ln * a->b_len + s, be, mb[((size_t)p.b * K + p.r) * N + p.c]);
        }
        for (uint32_t s = 0; s < a->c_len; s++) {
            rc p = layout(a, 2, ln, s);
            hc[(size_t)ln * a->c_len + s] = (float)mc[((size_t)p.b * M + p.r) * N + p.c];
        }
    }
    /* the reference uses what the inputs became in their types */
    for (uint32_t ln = 0; ln < L; ln++) {
        for (uint32_t s = 0; s < a->a_len; s++) {
            rc p = layout(a, 0, ln, s);
            ma[((size_t)p.b * M + p.r) * K + p.c] = get_elem(ha, (size_t)ln * a->a_len + s, ae);
        }
        for (uint32_t s = 0; s < a->b_len; s++) {
            rc p = layout(a, 1, ln, s);
            mb[((size_t)p.b * K + p.r) * N + p.c] = get_elem(hb, (size_t)ln * a->b_len + s, be);
        }
    }
    rk_emu *e = et_emu(t->name, 1);
    uint64_t da = et_buf(e, ha, (size_t)L * a->a_len * ebytes(ae), "A"), db = et_buf(e, hb, (size_t)L * a->b_len * ebytes(be), "B");
    uint64_t dc = et_buf(e, hc, (size_t)L * a->c_len * 4, "C"), dd = et_buf(e, hd, (size_t)L * a->c_len * 4, "D");
    void *args[] = {&da, &db, &dc, &dd};
    rk_status st = et_launch(e, k, 1, 1, 1, L, 1, 1, args);
    if (st) printf("%s on %s: %s\n", a->op_id, t->name, rk_error_message());
    assert_int_equal(st, RK_OK);
    for (uint32_t ln = 0; ln < L; ln++)
        for (uint32_t s = 0; s < a->c_len; s++) {
            rc p = layout(a, 2, ln, s);
            double want = mc[((size_t)p.b * M + p.r) * N + p.c];
            for (uint32_t kk = 0; kk < K; kk++)
                want += ma[((size_t)p.b * M + p.r) * K + kk] * mb[((size_t)p.b * K + kk) * N + p.c];
            double got = hd[(size_t)ln * a->c_len + s];
            double tol = exact ? 0.0 : 1e-5 * (1.0 + fabs(want)) + (a->a_elem == RK_S_F32 && a->a_len > 1 ? 1e-2 : 0.0);
            if (fabs(got - want) > tol)
                printf("%s on %s lane %u slot %u (row %u col %u): %.9g, want %.9g\n", a->op_id, t->name, ln, s, p.r, p.c, got,
                       want);
            assert_true(fabs(got - want) <= tol);
        }
    rk_emu_free(e);
    rk_kernel_free(k);
    free(ma); free(mb); free(mc); free(ha); free(hb); free(hc); free(hd);
}

/* ---- scaled (MX) atoms -------------------------------------------------------------------------- */
/* Written again from the OCP MX spec and the gfx950 16x16x128 layout: A(m, k)
 * is scaled by the chosen E8M0 byte of the a_scale word of lane m + 16*(k/32)
 * (the lane holding that row's K block), B(k, n) by that of lane n + 16*(k/32);
 * a byte e means 2^(e-127), 255 is NaN. */
static uint32_t scale_lane(uint32_t row_or_col, uint32_t k) { return row_or_col + 16 * (k / 32); }
static double e8m0(uint32_t e) { return e == 255 ? NAN : ldexp(1.0, (int)e - 127); }

enum scale_mode {
    SC_EXACT,     /* bytes 124..130, values multiples of 1/8: every sum exact in f32 */
    SC_WIDE,      /* bytes 87..167, random values: compared with a rounding bound */
    SC_EXTREME,   /* per K block, a byte anywhere in 0..254 and its complement (0 and 254 forced): exact */
    SC_NAN_A,     /* SC_EXACT, one A lane's byte 255: that lane's row is NaN */
    SC_NAN_B      /* SC_EXACT, one B lane's byte 255: that lane's column is NaN */
};

/* Each lane's scale word: random bytes around the one opsel picks (-1 = no attribute: byte 0). */
static uint32_t scale_word(int opsel, uint32_t byte) {
    uint32_t sh = 8u * (uint32_t)(opsel < 0 ? 0 : opsel);
    return ((uint32_t)et_rand() & ~(0xffu << sh)) | (byte << sh);
}

static rk_kernel *scaled_kernel(const rk_mma_atom *a, rk_scalar ae, rk_scalar be, int opsel_a, int opsel_b) {
    rk_kernel *k = rk_kernel_new("scaled_atom");
    rk_value A = frag_param(k, "A", ae, a->a_len), B = frag_param(k, "B", be, a->b_len);
    rk_value C = et_ptr_param(k, "C", RK_T_F32), D = et_ptr_param(k, "D", RK_T_F32);
    rk_value SA = et_ptr_param(k, "SA", RK_T_I32), SB = et_ptr_param(k, "SB", RK_T_I32);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value cc = rk_const_i32(k, a->c_len);
    rk_value ic = rk_build_mul(k, l, cc);
    rk_value in[5];
    in[0] = load_frag(k, A, l, ae, a->a_len);
    in[1] = load_frag(k, B, l, be, a->b_len);
    in[2] = rk_load_global(k, C, ic, a->c_len);
    in[3] = rk_load_global(k, SA, l, 1);
    in[4] = rk_load_global(k, SB, l, 1);
    const rk_mma_opts mo = {.opsel_a = {opsel_a >= 0, opsel_a}, .opsel_b = {opsel_b >= 0, opsel_b}};
    rk_value d = rk_build_mma_arr(k, a->op_id, in, 5, &mo);
    rk_store_global(k, D, ic, d);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void run_scaled(const rk_mma_atom *a, const rk_target *t, rk_scalar ae, rk_scalar be, enum scale_mode mode) {
    enum { M = 16, N = 16, K = 128, L = 64 };
    assert_true(a->m == M && a->n == N && a->k == K && a->lanes == L && a->a_len == 32 && a->b_len == 32);
    bool exact = mode != SC_WIDE;
    int opsel_a = (int)(et_rand() % 5) - 1, opsel_b = (int)(et_rand() % 5) - 1;
    rk_kernel *k = scaled_kernel(a, ae, be, opsel_a, opsel_b);
    /* scale bytes: per lane, or per K block (extreme) */
    uint32_t ea[L], eb[L], blk_a[4], blk_b[4];
    for (uint32_t b = 0; b < 4; b++) {
        blk_a[b] = b == 0 ? 0 : b == 1 ? 254 : (uint32_t)(et_rand() % 255);
        int d = (int)(et_rand() % 7) - 3, c = 254 - (int)blk_a[b] + d;
        blk_b[b] = (uint32_t)(c < 0 ? 0 : c > 254 ? 254 : c);
    }
    for (uint32_t l = 0; l < L; l++) {
        if (mode == SC_EXTREME) {
            ea[l] = blk_a[l / 16];
            eb[l] = blk_b[l / 16];
        } else if (mode == SC_WIDE) {
            ea[l] = 87 + (uint32_t)(et_rand() % 81);
            eb[l] = 87 + (uint32_t)(et_rand() % 81);
        } else {
            ea[l] = 124 + (uint32_t)(et_rand() % 7);
            eb[l] = 124 + (uint32_t)(et_rand() % 7);
        }
    }
    uint32_t nan_lane = (uint32_t)(et_rand() % L);
    if (mode == SC_NAN_A) ea[nan_lane] = 255;
    if (mode == SC_NAN_B) eb[nan_lane] = 255;
    uint32_t wa[L], wb[L];
    for (uint32_t l = 0; l < L; l++) {
        wa[l] = scale_word(opsel_a, ea[l]);
        wb[l] = scale_word(opsel_b, eb[l]);
    }
    /* matrices, as their types hold them */
    double ma[M * K], mb[K * N], mc[M * N];
    uint8_t ha[L * 32], hb[L * 32];
    float hc[L * 4], hd[L * 4];
    for (size_t i = 0; i < M * K; i++) ma[i] = exact ? (double)((int)(et_rand() % 9) - 4) / 8 : et_unit();
    for (size_t i = 0; i < K * N; i++) mb[i] = exact ? (double)((int)(et_rand() % 9) - 4) / 8 : et_unit();
    for (size_t i = 0; i < M * N; i++) mc[i] = exact ? (double)((int)(et_rand() % 17) - 8) / 4 : et_unit();
    for (uint32_t ln = 0; ln < L; ln++) {
        for (uint32_t s = 0; s < 32; s++) {
            rc p = layout(a, 0, ln, s), q = layout(a, 1, ln, s);
            put_elem(ha, ln * 32 + s, ae, ma[p.r * K + p.c]);
            ma[p.r * K + p.c] = get_elem(ha, ln * 32 + s, ae);
            put_elem(hb, ln * 32 + s, be, mb[q.r * N + q.c]);
            mb[q.r * N + q.c] = get_elem(hb, ln * 32 + s, be);
        }
        for (uint32_t s = 0; s < 4; s++) {
            rc p = layout(a, 2, ln, s);
            hc[ln * 4 + s] = (float)mc[p.r * N + p.c];
        }
    }
    rk_emu *e = et_emu(t->name, 1);
    uint64_t da = et_buf(e, ha, sizeof ha, "A"), db = et_buf(e, hb, sizeof hb, "B"), dc = et_buf(e, hc, sizeof hc, "C");
    uint64_t dd = et_buf(e, hd, sizeof hd, "D"), dsa = et_buf(e, wa, sizeof wa, "SA"), dsb = et_buf(e, wb, sizeof wb, "SB");
    void *args[] = {&da, &db, &dc, &dd, &dsa, &dsb};
    rk_status st = et_launch(e, k, 1, 1, 1, L, 1, 1, args);
    if (st) printf("%s on %s: %s\n", a->op_id, t->name, rk_error_message());
    assert_int_equal(st, RK_OK);
    /* the catalog's host reference, from the lane fragments */
    double fa[L * 32], fb[L * 32], fc[L * 4], ref[L * 4];
    for (uint32_t i = 0; i < L * 32; i++) {
        fa[i] = get_elem(ha, i, ae);
        fb[i] = get_elem(hb, i, be);
    }
    for (uint32_t i = 0; i < L * 4; i++) fc[i] = hc[i];
    assert_int_equal(rk_mma_atom_reference_scaled(a, fa, fb, fc, wa, opsel_a < 0 ? 0 : (unsigned)opsel_a, wb,
                                                  opsel_b < 0 ? 0 : (unsigned)opsel_b, ref), RK_OK);
    for (uint32_t ln = 0; ln < L; ln++)
        for (uint32_t s = 0; s < 4; s++) {
            rc p = layout(a, 2, ln, s);
            double want = mc[p.r * N + p.c], mag = fabs(want);
            for (uint32_t kk = 0; kk < K; kk++) {
                double term = ma[p.r * K + kk] * e8m0(ea[scale_lane(p.r, kk)]) * mb[kk * N + p.c] *
                              e8m0(eb[scale_lane(p.c, kk)]);
                want += term;
                mag += fabs(term);
            }
            double got = hd[ln * 4 + s], tol = exact ? 0.0 : 2e-5 * mag;
            bool ok = isnan(want) ? isnan(got) && isnan(ref[ln * 4 + s])
                                  : fabs(got - want) <= tol && fabs(ref[ln * 4 + s] - want) <= tol;
            if (!ok)
                printf("%s on %s (A %s, B %s, opsel %d/%d, mode %d) lane %u slot %u (row %u col %u): %.9g, reference "
                       "%.9g, want %.9g\n", a->op_id, t->name, rk_scalar_name(ae), rk_scalar_name(be), opsel_a, opsel_b,
                       (int)mode, ln, s, p.r, p.c, got, ref[ln * 4 + s], want);
            assert_true(ok);
            if (mode == SC_NAN_A) assert_true(isnan(want) == (p.r == nan_lane % 16));
            if (mode == SC_NAN_B) assert_true(isnan(want) == (p.c == nan_lane % 16));
        }
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* Every pair of per-operand formats the scaled atom takes. */
static void run_scaled_formats(const rk_mma_atom *a, const rk_target *t, enum scale_mode mode) {
    static const rk_scalar fmts[] = {RK_S_FP8E4M3, RK_S_BF8E5M2};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            assert_true((a->ab_formats >> fmts[i]) & (a->ab_formats >> fmts[j]) & 1u);
            run_scaled(a, t, elem_on(t, fmts[i]), elem_on(t, fmts[j]), mode);
        }
}

/* Scale bytes at both ends of the range (byte 0 is 2^-127, not zero: paired
 * with 254 it scales by exactly 1) and the NaN byte 255. */
static void t_scaled_extremes(void **state) {
    (void)state;
    uint32_t n = 0;
    for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++)
        for (const rk_target *const *tp = rk_targets(); (*ap)->scaled && *tp; tp++) {
            if (!rk_target_has_atom(*tp, *ap)) continue;
            for (int rep = 0; rep < 4; rep++) run_scaled_formats(*ap, *tp, SC_EXTREME);
            run_scaled_formats(*ap, *tp, SC_NAN_A);
            run_scaled_formats(*ap, *tp, SC_NAN_B);
            n++;
        }
    assert_true(n > 0);
}

static void t_every_atom(void **state) {
    (void)state;
    uint32_t n = 0;
    for (const rk_mma_atom *const *ap = rk_mma_atoms(); *ap; ap++) {
        bool any = false;
        for (const rk_target *const *tp = rk_targets(); *tp; tp++) {
            if (!rk_target_has_atom(*tp, *ap)) continue;
            any = true;
            if ((*ap)->lanes == 128) continue;   /* warpgroup atoms span four warps: not emulated (test_nvptx) */
            if ((*ap)->scaled) {
                run_scaled_formats(*ap, *tp, SC_EXACT);
                run_scaled_formats(*ap, *tp, SC_WIDE);
                continue;
            }
            run_atom(*ap, *tp, true);
            run_atom(*ap, *tp, false);
        }
        assert_true(any);
        n++;
    }
    printf("%u atoms checked\n", n);
}

/* Matrix atoms need the whole wave. */
static void t_atom_partial_mask(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("partial");
    rk_type v4 = rk_type_vec(k, RK_T_F16, 4), c4 = rk_type_vec(k, RK_T_F32, 4);
    rk_value A = et_ptr_param(k, "A", RK_T_F16), D = et_ptr_param(k, "D", RK_T_F32);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value c = rk_build_cmp(k, "lt", l, rk_const_i32(k, 48));
    rk_if_begin(k, c);
    rk_value fa = rk_load_global(k, A, rk_const_i32(k, 0), 4);
    rk_value z = rk_build_constant_vec(k, c4, 0.0);
    (void)v4;
    rk_value d = rk_build_mma(k, "mfma_f32_16x16x16_f16", fa, fa, z);
    rk_store_global(k, D, rk_const_i32(k, 0), d);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    rk_emu *e = et_emu("gfx942", 1);
    uint16_t ha[4] = {0};
    float hd[4];
    uint64_t da = et_buf(e, ha, sizeof ha, "A"), dd = et_buf(e, hd, sizeof hd, "D");
    void *args[] = {&da, &dd};
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, "partial exec mask", "0xffffffffffff", NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* ldmatrix from a 16x16 f16 tile: matrix j covers rows 8(j%2).., cols 8(j/2)..;
 * lane 8j+r gives the address of row r of matrix j. */
static void t_ldmatrix(void **state) {
    (void)state;
    for (int num = 1; num <= 4; num *= 2)
        for (int tr = 0; tr < 2; tr++) {
            rk_kernel *k = rk_kernel_new("ldm");
            rk_value T = et_ptr_param(k, "T", RK_T_F16), O = et_ptr_param(k, "O", RK_T_I32);
            uint32_t dims[2] = {16, 16};
            rk_value sm = rk_build_smem_alloc(k, RK_T_F16, dims, 2);
            rk_value l = rk_build_thread_id(k, 0);
            /* fill: lane l writes row l/2, 8 elements from column 8(l%2) */
            rk_value c8 = rk_const_i32(k, 8), one = rk_const_i32(k, 1), c3 = rk_const_i32(k, 3), c7 = rk_const_i32(k, 7);
            rk_value frow = rk_build_lshr(k, l, one), fcol = rk_build_mul(k, rk_build_and(k, l, one), c8);
            rk_value gi = rk_build_add(k, rk_build_mul(k, frow, rk_const_i32(k, 16)), fcol);
            rk_value v = rk_load_global(k, T, gi, 8);
            rk_value fix[2] = {frow, fcol};
            rk_store_smem(k, sm, fix, v);
            rk_build_sync(k);
            /* address of lane l: matrix j = (l/8) % num, row r = l % 8 */
            rk_value j = rk_build_and(k, rk_build_lshr(k, l, c3), rk_const_i32(k, num - 1));
            rk_value r = rk_build_and(k, l, c7);
            rk_value row = rk_build_add(k, rk_build_mul(k, rk_build_and(k, j, one), c8), r);
            rk_value col = rk_build_mul(k, rk_build_lshr(k, j, one), c8);
            rk_value ix[2] = {row, col};
            rk_type rt = rk_type_vec(k, RK_T_I32, (uint32_t)num);
            const rk_ldmatrix_opts lo = {.trans = RK_SOME(tr)};
            rk_value frag = rk_build_ldmatrix_ex(k, sm, ix, rt, num, &lo);
            rk_value oi = rk_build_mul(k, l, rk_const_i32(k, num));
            rk_store_global(k, O, oi, frag);
            rk_build_return(k);
            et_finish(k);
            uint16_t tile[256];
            uint32_t o[32 * 4];
            for (int q = 0; q < 256; q++) tile[q] = (uint16_t)(q + 1);
            rk_emu *e = et_emu("sm_80", 1);
            uint64_t dt = et_buf(e, tile, sizeof tile, "T"), dout = et_buf(e, o, sizeof o, "O");
            void *args[] = {&dt, &dout};
            assert_int_equal(et_launch(e, k, 1, 1, 1, 32, 1, 1, args), RK_OK);
            for (int ln = 0; ln < 32; ln++)
                for (int m = 0; m < num; m++) {
                    int r0 = 8 * (m % 2), c0 = 8 * (m / 2);
                    /* PTX: without .trans lane l holds row l/4, columns 2(l%4), +1 of matrix m;
                     * with .trans rows 2(l%4), +1 of column l/4 */
                    int ra = tr ? 2 * (ln % 4) : ln / 4, ca_ = tr ? ln / 4 : 2 * (ln % 4);
                    int rb = tr ? ra + 1 : ra, cb = tr ? ca_ : ca_ + 1;
                    uint32_t want = tile[(r0 + ra) * 16 + c0 + ca_] | ((uint32_t)tile[(r0 + rb) * 16 + c0 + cb] << 16);
                    assert_int_equal(o[ln * num + m], want);
                }
            rk_emu_free(e);
            rk_kernel_free(k);
        }
}

/* ds_read_tr16_b64 over a 16x16 row-major f16 tile: lane 16*kc + p reads 4
 * elements at row 4kc + p/4, column 4(p%4); lane 16*kc + n receives
 * tile[4kc + 0..3][n] (the 16x16x16 B fragment). */
static void t_ds_read_tr16(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("tr");
    rk_value T = et_ptr_param(k, "T", RK_T_F16), O = et_ptr_param(k, "O", RK_T_F16);
    uint32_t dims[2] = {16, 16};
    rk_value sm = rk_build_smem_alloc(k, RK_T_F16, dims, 2);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value c4 = rk_const_i32(k, 4), c2 = rk_const_i32(k, 2), c3 = rk_const_i32(k, 3), c15 = rk_const_i32(k, 15);
    rk_value frow = rk_build_lshr(k, l, c2), fcol = rk_build_mul(k, rk_build_and(k, l, c3), c4);
    rk_value gi = rk_build_add(k, rk_build_mul(k, frow, rk_const_i32(k, 16)), fcol);
    rk_value v = rk_load_global(k, T, gi, 4);
    rk_value fix[2] = {frow, fcol};
    rk_store_smem(k, sm, fix, v);
    rk_build_sync(k);
    rk_value kc = rk_build_lshr(k, l, c4), p = rk_build_and(k, l, c15);
    rk_value row = rk_build_add(k, rk_build_mul(k, kc, c4), rk_build_lshr(k, p, c2));
    rk_value col = rk_build_mul(k, rk_build_and(k, p, c3), c4);
    rk_value ix[2] = {row, col};
    rk_value tr = rk_build_ds_read_tr16_b64(k, sm, ix);
    rk_value oi = rk_build_mul(k, l, c4);
    rk_store_global(k, O, oi, tr);
    rk_build_return(k);
    et_finish(k);
    uint16_t tile[256], o[256];
    for (int q = 0; q < 256; q++) tile[q] = (uint16_t)(0x3c00 + q);
    rk_emu *e = et_emu("gfx950", 1);
    uint64_t dt = et_buf(e, tile, sizeof tile, "T"), dout = et_buf(e, o, sizeof o, "O");
    void *args[] = {&dt, &dout};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    for (int ln = 0; ln < 64; ln++)
        for (int el = 0; el < 4; el++) assert_int_equal(o[ln * 4 + el], tile[(4 * (ln / 16) + el) * 16 + ln % 16]);
    rk_emu_free(e);
    rk_kernel_free(k);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_every_atom),
        cmocka_unit_test(t_scaled_extremes),
        cmocka_unit_test(t_atom_partial_mask),
        cmocka_unit_test(t_ldmatrix),
        cmocka_unit_test(t_ds_read_tr16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
