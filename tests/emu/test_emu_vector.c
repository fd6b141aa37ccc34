/* rocke tests — vector ops on the emulator against host loops: reductions
 * in the lowering's order, element moves (extract, insert, splat, pack,
 * concat, shuffle), bitcasts including packed vec<i1xN>, vector compares,
 * selects and the ordered max/min, elementwise math on f16 and int vectors,
 * conversions, the packed fp8 and i8 conversions and gfx950's scaled fp8.
 * Layer: tests. */
#include "emu_test.h"

enum { N = 77 };

static rk_status run(const char *t, rk_opcode code, rk_kernel *k, const rk_type *in_t, uint32_t nin, rk_type out_t,
                     et_attr_fn attrs, void *ud, void **ins, const size_t *ib, void *out, size_t ob) {
    et_op_kernel(code, in_t, nin, out_t, attrs, ud, k);
    rk_emu *e = et_emu(t, 2);
    rk_status st = et_run_op(e, k, ins, ib, nin, out, ob, N);
    if (st) printf("%s: %s\n", rk_opcode_name(code), rk_error_message());
    rk_emu_free(e);
    rk_kernel_free(k);
    return st;
}

static void set_index(rk_kernel *k, rk_op *op, void *ud) { rk_op_set_int(k, op, "index", *(int *)ud); }
static void set_vec(rk_kernel *k, rk_op *op, void *ud) { rk_op_set_int(k, op, "vec", *(int *)ud); }
static void set_pred(rk_kernel *k, rk_op *op, void *ud) { rk_op_set_str(k, op, "pred", ud); }
static void set_mask(rk_kernel *k, rk_op *op, void *ud) { rk_op_set_int_list(k, op, "mask", ud, 6); }

static void t_reductions(void **state) {
    (void)state;
    float a[N * 4], o[N];
    for (int i = 0; i < N * 4; i++) a[i] = et_unit() * 100.0f;
    a[5] = NAN;                     /* lane 1: NaN element 1 */
    a[8] = -0.0f;
    for (int r = 0; r < 3; r++) {
        rk_kernel *k = rk_kernel_new("red");
        rk_type v = rk_type_vec(k, RK_T_F32, 4);
        rk_opcode c = r == 0 ? RK_OP_VSUM : r == 1 ? RK_OP_VREDUCE_MAX : RK_OP_VREDUCE_MIN;
        void *ins[] = {a};
        size_t ib[] = {sizeof a};
        assert_int_equal(run("gfx950", c, k, &v, 1, RK_T_F32, NULL, NULL, ins, ib, o, sizeof o), RK_OK);
        for (int i = 0; i < N; i++) {
            const float *e = a + 4 * i;
            float w;
            if (r == 0) w = (((0.0f + e[0]) + e[1]) + e[2]) + e[3];
            else {
                w = e[0];
                for (int j = 1; j < 4; j++) w = (r == 1 ? w > e[j] : w < e[j]) ? w : e[j];
            }
            assert_true(et_same_f32(o[i], w));
        }
    }
    /* f16 sums round at every step */
    uint16_t h[N * 8], ho[N];
    for (int i = 0; i < N * 8; i++) h[i] = rk_f32_to_f16(et_unit() * 1000.0f);
    rk_kernel *k = rk_kernel_new("red16");
    rk_type v8 = rk_type_vec(k, RK_T_F16, 8);
    void *ins[] = {h};
    size_t ib[] = {sizeof h};
    assert_int_equal(run("sm_90", RK_OP_VSUM, k, &v8, 1, RK_T_F16, NULL, NULL, ins, ib, ho, sizeof ho), RK_OK);
    for (int i = 0; i < N; i++) {
        uint16_t acc = rk_f32_to_f16(0.0f);
        for (int j = 0; j < 8; j++) acc = rk_f64_to_f16((double)rk_f16_to_f32(acc) + rk_f16_to_f32(h[i * 8 + j]));
        assert_int_equal(ho[i], acc);
    }
}

static void t_moves(void **state) {
    (void)state;
    int32_t a[N * 4], b[N * 4], s[N], o[N * 8];
    for (int i = 0; i < N * 4; i++) { a[i] = (int32_t)et_rand(); b[i] = (int32_t)et_rand(); }
    for (int i = 0; i < N; i++) s[i] = (int32_t)et_rand();
    size_t ib4[] = {sizeof a, sizeof b}, ib1[] = {sizeof s};
    for (int idx = 0; idx < 4; idx++) {
        rk_kernel *k = rk_kernel_new("ext");
        rk_type v = rk_type_vec(k, RK_T_I32, 4);
        void *ins[] = {a};
        assert_int_equal(run("gfx942", RK_OP_VEXTRACT, k, &v, 1, RK_T_I32, set_index, &idx, ins, ib4, o, sizeof o), RK_OK);
        for (int i = 0; i < N; i++) assert_int_equal(o[i], a[i * 4 + idx]);
        k = rk_kernel_new("ins");
        v = rk_type_vec(k, RK_T_I32, 4);
        rk_type ts[] = {v, RK_T_I32};
        void *ins2[] = {a, s};
        size_t ib2[] = {sizeof a, sizeof s};
        assert_int_equal(run("gfx942", RK_OP_VINSERT, k, ts, 2, v, set_index, &idx, ins2, ib2, o, sizeof o), RK_OK);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < 4; j++) assert_int_equal(o[i * 4 + j], j == idx ? s[i] : a[i * 4 + j]);
    }
    int four = 4;
    rk_kernel *k = rk_kernel_new("splat");
    rk_type v4 = rk_type_vec(k, RK_T_I32, 4);
    void *ins1[] = {s};
    assert_int_equal(run("sm_80", RK_OP_VSPLAT, k, (rk_type[]){RK_T_I32}, 1, v4, set_vec, &four, ins1, ib1, o, sizeof o), RK_OK);
    for (int i = 0; i < N * 4; i++) assert_int_equal(o[i], s[i / 4]);
    /* concat and shuffle (mask with undef -1 -> 0 bits) */
    k = rk_kernel_new("cat");
    v4 = rk_type_vec(k, RK_T_I32, 4);
    rk_type v8 = rk_type_vec(k, RK_T_I32, 8);
    rk_type tv[] = {v4, v4};
    void *ins2[] = {a, b};
    assert_int_equal(run("gfx950", RK_OP_VCONCAT, k, tv, 2, v8, NULL, NULL, ins2, ib4, o, sizeof o), RK_OK);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 8; j++) assert_int_equal(o[i * 8 + j], j < 4 ? a[i * 4 + j] : b[i * 4 + j - 4]);
    int64_t mask[6] = {7, 0, -1, 3, 4, 5};
    k = rk_kernel_new("shuf");
    v4 = rk_type_vec(k, RK_T_I32, 4);
    rk_type v6 = rk_type_vec(k, RK_T_I32, 6);
    rk_type tv2[] = {v4, v4};
    assert_int_equal(run("gfx950", RK_OP_VSHUFFLE, k, tv2, 2, v6, set_mask, mask, ins2, ib4, o, sizeof o), RK_OK);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 6; j++) {
            int64_t m = mask[j];
            int32_t want = m < 0 ? 0 : m < 4 ? a[i * 4 + m] : b[i * 4 + m - 4];
            assert_int_equal(o[i * 6 + j], want);
        }
}

static void t_bitcasts_and_selects(void **state) {
    (void)state;
    /* vec<i1x8> packs into an i8 bit by bit, element 0 in bit 0 */
    uint8_t bits[N * 8], packed[N];
    for (int i = 0; i < N * 8; i++) bits[i] = (uint8_t)(et_rand() & 1);
    rk_kernel *k = rk_kernel_new("bc1");
    rk_type vb = rk_type_vec(k, RK_T_I1, 8);
    void *ins[] = {bits};
    size_t ib[] = {sizeof bits};
    assert_int_equal(run("gfx950", RK_OP_BITCAST, k, &vb, 1, RK_T_I8, NULL, NULL, ins, ib, packed, sizeof packed), RK_OK);
    for (int i = 0; i < N; i++) {
        uint8_t w = 0;
        for (int j = 0; j < 8; j++) w |= (uint8_t)(bits[i * 8 + j] << j);
        assert_int_equal(packed[i], w);
    }
    uint8_t back[N * 8];
    k = rk_kernel_new("bc2");
    vb = rk_type_vec(k, RK_T_I1, 8);
    void *ins2[] = {packed};
    size_t ib2[] = {sizeof packed};
    assert_int_equal(run("gfx950", RK_OP_BITCAST, k, (rk_type[]){RK_T_I8}, 1, vb, NULL, NULL, ins2, ib2, back, sizeof back),
                     RK_OK);
    assert_memory_equal(back, bits, sizeof bits);
    /* vec<f16x2> -> i32: element 0 is the low half */
    uint16_t h[N * 2];
    uint32_t w32[N];
    for (int i = 0; i < N * 2; i++) h[i] = (uint16_t)et_rand();
    k = rk_kernel_new("bc3");
    rk_type vh = rk_type_vec(k, RK_T_F16, 2);
    void *ins3[] = {h};
    size_t ib3[] = {sizeof h};
    assert_int_equal(run("sm_90", RK_OP_BITCAST, k, &vh, 1, RK_T_I32, NULL, NULL, ins3, ib3, w32, sizeof w32), RK_OK);
    for (int i = 0; i < N; i++) assert_int_equal(w32[i], (uint32_t)h[2 * i] | ((uint32_t)h[2 * i + 1] << 16));
    /* vector.fcmp then vector.select by the element mask; vector.max/min order */
    float a[N * 4], b[N * 4], o[N * 4];
    uint8_t m[N * 4];
    for (int i = 0; i < N * 4; i++) { a[i] = et_unit(); b[i] = et_unit(); }
    a[3] = NAN; b[6] = NAN;
    k = rk_kernel_new("vfcmp");
    rk_type vf = rk_type_vec(k, RK_T_F32, 4), vm = rk_type_vec(k, RK_T_I1, 4);
    rk_type tf[] = {vf, vf};
    void *ab[] = {a, b};
    size_t iab[] = {sizeof a, sizeof b};
    assert_int_equal(run("gfx942", RK_OP_VFCMP, k, tf, 2, vm, set_pred, "ult", ab, iab, m, sizeof m), RK_OK);
    for (int i = 0; i < N * 4; i++) assert_int_equal(m[i], isnan(a[i]) || isnan(b[i]) || a[i] < b[i]);
    k = rk_kernel_new("vsel");
    vf = rk_type_vec(k, RK_T_F32, 4);
    vm = rk_type_vec(k, RK_T_I1, 4);
    rk_type ts[] = {vm, vf, vf};
    void *mab[] = {m, a, b};
    size_t imab[] = {sizeof m, sizeof a, sizeof b};
    assert_int_equal(run("gfx942", RK_OP_VSELECT, k, ts, 3, vf, NULL, NULL, mab, imab, o, sizeof o), RK_OK);
    for (int i = 0; i < N * 4; i++) assert_true(et_same_f32(o[i], m[i] ? a[i] : b[i]));
    for (int mx = 0; mx < 2; mx++) {
        k = rk_kernel_new("vmax");
        vf = rk_type_vec(k, RK_T_F32, 4);
        rk_type t2[] = {vf, vf};
        assert_int_equal(run("sm_90", mx ? RK_OP_VMAX : RK_OP_VMIN, k, t2, 2, vf, NULL, NULL, ab, iab, o, sizeof o), RK_OK);
        for (int i = 0; i < N * 4; i++) assert_true(et_same_f32(o[i], (mx ? a[i] > b[i] : a[i] < b[i]) ? a[i] : b[i]));
    }
}

/* Elementwise vector math reuses the scalar kernels over W*m elements. */
static void t_elementwise(void **state) {
    (void)state;
    uint16_t a[N * 8], b[N * 8], c[N * 8], o[N * 8];
    for (int i = 0; i < N * 8; i++) {
        a[i] = rk_f32_to_f16(et_unit() * 4);
        b[i] = rk_f32_to_f16(et_unit() * 4);
        c[i] = rk_f32_to_f16(et_unit() * 4);
    }
    rk_kernel *k = rk_kernel_new("vfma");
    rk_type v = rk_type_vec(k, RK_T_F16, 8);
    rk_type t3[] = {v, v, v};
    void *abc[] = {a, b, c};
    size_t ib[] = {sizeof a, sizeof b, sizeof c};
    assert_int_equal(run("gfx950", RK_OP_VFMA, k, t3, 3, v, NULL, NULL, abc, ib, o, sizeof o), RK_OK);
    for (int i = 0; i < N * 8; i++)   /* exact in double: f16 products have 22 bits, small exponents */
        assert_int_equal(o[i], rk_f64_to_f16((double)rk_f16_to_f32(a[i]) * rk_f16_to_f32(b[i]) + rk_f16_to_f32(c[i])));
    int16_t x[N * 4], y[N * 4], r[N * 4];
    for (int i = 0; i < N * 4; i++) { x[i] = (int16_t)et_rand(); y[i] = (int16_t)(et_rand() % 16); }
    k = rk_kernel_new("vshl");
    rk_type vi = rk_type_vec(k, RK_T_I16, 4);
    rk_type t2[] = {vi, vi};
    void *xy[] = {x, y};
    size_t ixy[] = {sizeof x, sizeof y};
    assert_int_equal(run("sm_80", RK_OP_VSHL, k, t2, 2, vi, NULL, NULL, xy, ixy, r, sizeof r), RK_OK);
    for (int i = 0; i < N * 4; i++) assert_int_equal((uint16_t)r[i], (uint16_t)((uint16_t)x[i] << y[i]));
    y[9] = 16;   /* lane 2's element 1 shifts by the width: a fault naming the lane */
    k = rk_kernel_new("vshl2");
    vi = rk_type_vec(k, RK_T_I16, 4);
    rk_type t22[] = {vi, vi};
    et_expect_error(run("sm_80", RK_OP_VSHL, k, t22, 2, vi, NULL, NULL, xy, ixy, r, sizeof r), RK_ERR_DEVICE,
                    "shift amount 16 is not below the width 16", "lane 2 ", NULL);
    /* vector.sext / trunc / cast_to_f32 / trunc_f32_to */
    int32_t w[N * 4];
    k = rk_kernel_new("vsext");
    rk_type vi16 = rk_type_vec(k, RK_T_I16, 4), vi32 = rk_type_vec(k, RK_T_I32, 4);
    void *xs[] = {x};
    size_t ixs[] = {sizeof x};
    assert_int_equal(run("gfx950", RK_OP_VSEXT, k, &vi16, 1, vi32, NULL, NULL, xs, ixs, w, sizeof w), RK_OK);
    for (int i = 0; i < N * 4; i++) assert_int_equal(w[i], x[i]);
    float f[N * 8];
    k = rk_kernel_new("vcast");
    rk_type vh = rk_type_vec(k, RK_T_F16, 8), vf = rk_type_vec(k, RK_T_F32, 8);
    void *as[] = {a};
    size_t ias[] = {sizeof a};
    assert_int_equal(run("gfx950", RK_OP_VCAST_TO_F32, k, &vh, 1, vf, NULL, NULL, as, ias, f, sizeof f), RK_OK);
    for (int i = 0; i < N * 8; i++) assert_true(f[i] == rk_f16_to_f32(a[i]));
}

/* Packed fp8 and i8 conversions, and gfx950's scaled fp8 (E8M0 exponent of
 * the f32 scale: decode multiplies, encode divides). */
static void t_packed_conversions(void **state) {
    (void)state;
    float f[N * 4], o[N * 4];
    uint8_t q[N * 4];
    for (int i = 0; i < N * 4; i++) f[i] = et_unit() * 300.0f;
    f[1] = 127.5f; f[2] = -128.6f; f[3] = NAN;
    rk_kernel *k = rk_kernel_new("pk");
    rk_type vf = rk_type_vec(k, RK_T_F32, 4), v8 = rk_type_vec(k, RK_T_FP8E4M3FNUZ, 4);
    void *fs[] = {f};
    size_t ifs[] = {sizeof f};
    assert_int_equal(run("gfx942", RK_OP_CVT_PK_FP8_F32X4, k, &vf, 1, v8, NULL, NULL, fs, ifs, q, sizeof q), RK_OK);
    for (int i = 0; i < N * 4; i++) assert_int_equal(q[i], rk_f32_to_fp8(f[i], RK_FP8_E4M3_FNUZ));
    k = rk_kernel_new("pkd");
    v8 = rk_type_vec(k, RK_T_FP8E4M3FNUZ, 4);
    vf = rk_type_vec(k, RK_T_F32, 4);
    void *qs[] = {q};
    size_t iqs[] = {sizeof q};
    assert_int_equal(run("gfx942", RK_OP_CVT_PK_F32_FP8X4, k, &v8, 1, vf, NULL, NULL, qs, iqs, o, sizeof o), RK_OK);
    for (int i = 0; i < N * 4; i++) assert_true(et_same_f32(o[i], rk_fp8_to_f32(q[i], RK_FP8_E4M3_FNUZ)));
    int8_t i8[N * 4];
    k = rk_kernel_new("pki8");
    vf = rk_type_vec(k, RK_T_F32, 4);
    rk_type vi8 = rk_type_vec(k, RK_T_I8, 4);
    assert_int_equal(run("gfx950", RK_OP_CVT_PK_I8_F32X4, k, &vf, 1, vi8, NULL, NULL, fs, ifs, i8, sizeof i8), RK_OK);
    for (int i = 0; i < N * 4; i++) {
        float r = nearbyintf(f[i]);
        assert_int_equal(i8[i], isnan(f[i]) ? 0 : r > 127 ? 127 : r < -128 ? -128 : (int)r);
    }
    /* scaled: per lane scale 2^(lane % 7 - 3) */
    float sc[N];
    for (int i = 0; i < N; i++) sc[i] = ldexpf(1.5f, i % 7 - 3);     /* the 1.5 mantissa is ignored */
    for (int i = 0; i < N * 4; i++) f[i] = et_unit() * 8.0f;
    k = rk_kernel_new("scenc");
    vf = rk_type_vec(k, RK_T_F32, 4);
    rk_type vo = rk_type_vec(k, RK_T_FP8E4M3, 4);
    rk_type ts[] = {vf, RK_T_F32};
    void *fsc[] = {f, sc};
    size_t ifsc[] = {sizeof f, sizeof sc};
    assert_int_equal(run("gfx950", RK_OP_CVT_SCALEF32_PK_FP8_F32, k, ts, 2, vo, NULL, NULL, fsc, ifsc, q, sizeof q), RK_OK);
    for (int i = 0; i < N * 4; i++) assert_int_equal(q[i], rk_f64_to_fp8(ldexp(f[i], -(i / 4 % 7 - 3)), RK_FP8_E4M3));
    k = rk_kernel_new("scdec");
    vo = rk_type_vec(k, RK_T_FP8E4M3, 4);
    vf = rk_type_vec(k, RK_T_F32, 4);
    rk_type ts2[] = {vo, RK_T_F32};
    void *qsc[] = {q, sc};
    size_t iqsc[] = {sizeof q, sizeof sc};
    assert_int_equal(run("gfx950", RK_OP_CVT_SCALEF32_PK_F32_FP8, k, ts2, 2, vf, NULL, NULL, qsc, iqsc, o, sizeof o), RK_OK);
    for (int i = 0; i < N * 4; i++)
        assert_true(et_same_f32(o[i], ldexpf(rk_fp8_to_f32(q[i], RK_FP8_E4M3), i / 4 % 7 - 3)));
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_reductions),
        cmocka_unit_test(t_moves),
        cmocka_unit_test(t_bitcasts_and_selects),
        cmocka_unit_test(t_elementwise),
        cmocka_unit_test(t_packed_conversions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
