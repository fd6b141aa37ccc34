/* rocke tests — the op meanings the AMD lowering and the emulator agreed on
 * (ops.def comments, docs/emulator.md), pinned on the emulator against
 * references written here from the definitions:
 *   - fp8/bf8 encodes round to nearest even and saturate (+-max finite for
 *     overflow and +-inf, NaN stays NaN) in both dialects: scalar, packed x4
 *     and gfx950's power-of-two scaled forms;
 *   - cvt_pk_i8_f32x4 / cvt_f32_to_i8_sat: rint half-even, clamp to
 *     [-128, 127], NaN -> 0, element i -> byte i;
 *   - buffer range checks per granule: the byte for 1-byte scalars, the
 *     element for 2-byte scalars, the dword for 4/8-byte scalars and for
 *     vectors of any element type (a straddling dword reads 0 whole);
 *   - ds_read_tr16_b128 is two ds_read_tr16_b64 reads, at the lane's address
 *     and 8 bytes after it;
 *   - a tile.async_copy whose source or destination is not aligned to its
 *     size is an error naming the op, the lane and both addresses.
 * Layer: tests. */
#include "emu_test.h"
#include "support/f8_ref.h"

/* ---- 8-bit floats ------------------------------------------------------------------------- */
enum { NF = 1024 };

/* Boundary values around max finite (the tie with the next binade, its
 * neighbours, beyond), specials, then random values over the whole range. */
static void f8_inputs(const tf8 *f, float *x) {
    double max = tf8_val(f, f->maxcode), next = ldexp(1.0, (int)(f->maxcode >> f->m) + 1 - f->bias);
    double tie = (max + next) / 2, below = tf8_val(f, f->maxcode - 1u);
    const double fixed[] = {max, -max, tie, -tie, next, -next, (max + below) / 2, 2 * max, -3 * max, 1e30, -1e30,
                            3.4028234663852886e38, INFINITY, -INFINITY, NAN, -NAN, 0.0, -0.0, 1e-30, -1e-30};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) x[n++] = (float)fixed[i];
    for (int i = 0; i < 6; i++) {
        x[n++] = nextafterf((float)fixed[i], INFINITY);
        x[n++] = nextafterf((float)fixed[i], -INFINITY);
    }
    while (n < NF) x[n++] = ldexpf(et_unit(), (int)(et_rand() % 40) - 24 + (f->m == 2 ? 8 : 0));
}

static const char *dialect_target(const tf8 *f) { return f->fnuz ? "gfx942" : "gfx950"; }

static void t_fp8_saturates(void **state) {
    (void)state;
    static float x[NF];
    static uint8_t q[NF];
    rk_scalar f32 = RK_S_F32;
    for (size_t fi = 0; fi < sizeof TF8 / sizeof *TF8; fi++) {
        const tf8 *f = &TF8[fi];
        bool bf = f->m == 2;
        f8_inputs(f, x);
        /* scalar */
        rk_kernel *k = rk_kernel_new("enc");
        et_op_kernel(bf ? RK_OP_CVT_F32_TO_BF8 : RK_OP_CVT_F32_TO_FP8, (rk_type[]){{f32}}, 1, (rk_type){f->s}, NULL, NULL,
                     k);
        rk_emu *e = et_emu(dialect_target(f), 2);
        void *ins[] = {x};
        size_t ib[] = {sizeof x};
        assert_int_equal(et_run_op(e, k, ins, ib, 1, q, sizeof q, NF), RK_OK);
        for (int i = 0; i < NF; i++) {
            if (q[i] != tf8_encode(f, x[i])) printf("%s: %a -> 0x%02x, want 0x%02x\n", rk_scalar_name(f->s), (double)x[i], q[i],
                                                tf8_encode(f, x[i]));
            assert_int_equal(q[i], tf8_encode(f, x[i]));
        }
        rk_kernel_free(k);
        /* packed x4: element i -> byte i */
        k = rk_kernel_new("enc4");
        rk_type v4 = rk_type_vec(k, RK_T_F32, 4), q4 = rk_type_vec(k, (rk_type){f->s}, 4);
        et_op_kernel(bf ? RK_OP_CVT_PK_BF8_F32X4 : RK_OP_CVT_PK_FP8_F32X4, &v4, 1, q4, NULL, NULL, k);
        memset(q, 0, sizeof q);
        assert_int_equal(et_run_op(e, k, ins, ib, 1, q, sizeof q, NF / 4), RK_OK);
        for (int i = 0; i < NF; i++) assert_int_equal(q[i], tf8_encode(f, x[i]));
        rk_kernel_free(k);
        rk_emu_free(e);
        if (f->fnuz) continue;
        /* gfx950 scaled: byte i = encode(x_i / 2^(e-127)), e = the scale's
         * exponent field; e = 255 gives NaN with x's sign */
        static float sc[NF / 4];
        const int exps[] = {127, 0, 1, 100, 130, 160, 247, 254, 255};
        for (int i = 0; i < NF / 4; i++) sc[i] = rk_bits_f32((uint32_t)exps[i % 9] << 23 | (uint32_t)(et_rand() & 0x7fffff));
        k = rk_kernel_new("senc");
        v4 = rk_type_vec(k, RK_T_F32, 4);
        q4 = rk_type_vec(k, (rk_type){f->s}, 4);
        et_op_kernel(bf ? RK_OP_CVT_SCALEF32_PK_BF8_F32 : RK_OP_CVT_SCALEF32_PK_FP8_F32, (rk_type[]){v4, {f32}}, 2, q4,
                     NULL, NULL, k);
        e = et_emu("gfx950", 2);
        void *sins[] = {x, sc};
        size_t sib[] = {sizeof x, sizeof sc};
        assert_int_equal(et_run_op(e, k, sins, sib, 2, q, sizeof q, NF / 4), RK_OK);
        for (int i = 0; i < NF; i++) {
            int ex = (int)(rk_f32_bits(sc[i / 4]) >> 23);
            uint8_t want = ex == 255 ? tf8_encode(f, copysign(NAN, x[i])) : tf8_encode(f, ldexp((double)x[i], 127 - ex));
            if (q[i] != want) printf("%s scaled 2^%d: %a -> 0x%02x, want 0x%02x\n", rk_scalar_name(f->s), ex - 127,
                                     (double)x[i], q[i], want);
            assert_int_equal(q[i], want);
        }
        rk_kernel_free(k);
        rk_emu_free(e);
    }
}

/* ---- f32 -> i8 ------------------------------------------------------------------------------ */
static int8_t i8_ref(float x) {
    if (isnan(x)) return 0;
    double r = nearbyint((double)x);      /* default rounding: half to even */
    return (int8_t)(r > 127 ? 127 : r < -128 ? -128 : r);
}

static void t_pk_i8_byte_order(void **state) {
    (void)state;
    enum { N8 = 512 };
    static float x[N8];
    static int8_t q[N8];
    const float fixed[] = {1, 2, 3, 4, 0.5f, 1.5f, 2.5f, -2.5f, 127.5f, 126.5f, -128.5f, -127.5f, NAN, INFINITY, -INFINITY,
                           1e10f, -0.0f, -0.5f, 200, -200};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) x[n++] = fixed[i];
    while (n < N8) x[n++] = et_unit() * 300.0f;
    for (int t = 0; t < 2; t++) {
        const char *target = t ? "sm_90" : "gfx942";
        rk_kernel *k = rk_kernel_new("pki8");
        rk_type v4 = rk_type_vec(k, RK_T_F32, 4), b4 = rk_type_vec(k, RK_T_I8, 4);
        et_op_kernel(RK_OP_CVT_PK_I8_F32X4, &v4, 1, b4, NULL, NULL, k);
        rk_emu *e = et_emu(target, 1);
        void *ins[] = {x};
        size_t ib[] = {sizeof x};
        assert_int_equal(et_run_op(e, k, ins, ib, 1, q, sizeof q, N8 / 4), RK_OK);
        for (int i = 0; i < N8; i++) {
            if (q[i] != i8_ref(x[i])) printf("%s: byte %d from %a = %d, want %d\n", target, i, (double)x[i], q[i], i8_ref(x[i]));
            assert_int_equal(q[i], i8_ref(x[i]));
        }
        assert_int_equal(q[0], 1);       /* (1, 2, 3, 4) -> bytes 01 02 03 04 */
        assert_int_equal(q[3], 4);
        rk_kernel_free(k);
        rk_emu_free(e);
    }
}

/* ---- buffer range checks -------------------------------------------------------------------- */
/* Lane t accesses `bytes` at voffset base + t * step through a view of nrec
 * bytes: loads copy into out[t], stores write the lane's pattern. */
typedef struct bcase {
    const char *what;
    rk_opcode code;          /* BUFFER_LOAD[_F16|_VN|_VN_F16] or the stores */
    rk_scalar elem;
    uint32_t count;          /* vector elements (1: scalar) */
    uint32_t granule;        /* what ops.def promises */
} bcase;

static const bcase BCASES[] = {
    {"i8 scalar", RK_OP_BUFFER_LOAD, RK_S_I8, 1, 1},
    {"fp8 scalar", RK_OP_BUFFER_LOAD, RK_S_FP8E4M3, 1, 1},
    {"i16 scalar", RK_OP_BUFFER_LOAD, RK_S_I16, 1, 2},
    {"buffer_load_f16", RK_OP_BUFFER_LOAD_F16, RK_S_F16, 1, 2},
    {"i32 scalar", RK_OP_BUFFER_LOAD, RK_S_I32, 1, 4},
    {"f64 scalar", RK_OP_BUFFER_LOAD, RK_S_F64, 1, 4},
    {"vec<i8x4>", RK_OP_BUFFER_LOAD_VN, RK_S_I8, 4, 4},
    {"vec<i8x8>", RK_OP_BUFFER_LOAD_VN, RK_S_I8, 8, 4},
    {"vec<i8x16>", RK_OP_BUFFER_LOAD_VN, RK_S_I8, 16, 4},
    {"vec<f16x4> (vN_f16)", RK_OP_BUFFER_LOAD_VN_F16, RK_S_F16, 4, 4},
    {"vec<i16x2>", RK_OP_BUFFER_LOAD_VN, RK_S_I16, 2, 4},
    {"vec<f32x3>", RK_OP_BUFFER_LOAD_VN, RK_S_F32, 3, 4},
};

static rk_opcode store_of(rk_opcode load) {
    switch (load) {
    case RK_OP_BUFFER_LOAD_F16: return RK_OP_BUFFER_STORE_F16;
    case RK_OP_BUFFER_LOAD_VN: return RK_OP_BUFFER_STORE_VN;
    case RK_OP_BUFFER_LOAD_VN_F16: return RK_OP_BUFFER_STORE_VN_F16;
    default: return RK_OP_BUFFER_STORE;
    }
}

/* params: B, O (pointers to the element), nrec, base, step. A load reads
 * the view over B into O[t]; a store writes B[t] through the view over O. */
static rk_kernel *buffer_kernel(const bcase *c, bool store) {
    rk_kernel *k = rk_kernel_new(store ? "bstore" : "bload");
    rk_type e = (rk_type){c->elem};
    rk_type vt = c->count > 1 ? rk_type_vec(k, e, c->count) : e;
    rk_value B = et_ptr_param(k, "B", e), O = et_ptr_param(k, "O", e);
    rk_value nrec = rk_add_param(k, "nrec", RK_T_I32, NULL), base = rk_add_param(k, "base", RK_T_I32, NULL),
             step = rk_add_param(k, "step", RK_T_I32, NULL);
    rk_value t = rk_build_thread_id(k, 0);
    rk_value voff = rk_build_add(k, base, rk_build_mul(k, t, step)), zero = rk_const_i32(k, 0);
    uint32_t bytes = rk_type_bits(k, vt) / 8;
    rk_value ti = rk_build_mul(k, t, rk_const_i32(k, (int32_t)c->count));
    rk_value r = rk_build_buffer_rsrc(k, store ? O : B, nrec);
    rk_op *op;
    if (store) {
        rk_value in[4] = {r, voff, zero, rk_load_global(k, B, ti, c->count)};
        op = rk_emit(k, store_of(c->code), in, 4, NULL, 0);
    } else {
        rk_value in[3] = {r, voff, zero};
        op = rk_emit(k, c->code, in, 3, &vt, 1);
    }
    if (c->code == RK_OP_BUFFER_LOAD || c->code == RK_OP_BUFFER_LOAD_VN) rk_op_set_type(k, op, "elem_type", e);
    if (c->count > 1) rk_op_set_int(k, op, "dwords", bytes / 4);
    rk_op_check(k, op);
    if (!store) rk_store_global(k, O, ti, rk_op_result(op));
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_buffer_granules(void **state) {
    (void)state;
    enum { LANES = 16, AREA = 512 };
    static uint8_t B[AREA], O[AREA], want[AREA];
    for (int i = 0; i < AREA; i++) B[i] = (uint8_t)(i * 7 + 1) | 1;   /* never 0 */
    for (size_t ci = 0; ci < sizeof BCASES / sizeof *BCASES; ci++) {
        const bcase *c = &BCASES[ci];
        uint32_t bytes = c->count * (c->elem == RK_S_I8 || c->elem == RK_S_FP8E4M3 ? 1 : c->elem == RK_S_F64 ? 8
                                     : c->elem == RK_S_I16 || c->elem == RK_S_F16 ? 2 : 4);
        for (int store = 0; store < 2; store++) {
            rk_kernel *k = buffer_kernel(c, store);
            rk_emu *e = et_emu("gfx950", 1);
            uint64_t db = et_buf(e, B, AREA, "B"), dob = et_buf(e, O, AREA, "O");
            /* every lane at its own slot, the view's end swept across them */
            for (int32_t nrec = 0; nrec <= (int32_t)(LANES * bytes); nrec += 1) {
                int32_t base = 0, step = (int32_t)bytes;
                memset(O, 0xee, AREA);
                memcpy(want, O, AREA);
                for (uint32_t t = 0; t < LANES; t++) {
                    uint32_t off = (uint32_t)base + t * (uint32_t)step;
                    for (uint32_t g = 0; g < bytes; g += c->granule) {
                        bool in = off + g + c->granule <= (uint32_t)nrec;
                        for (uint32_t b = g; b < g + c->granule; b++) {
                            if (store) { if (in) want[off + b] = B[t * bytes + b]; }
                            else want[t * bytes + b] = in ? B[off + b] : 0;
                        }
                    }
                }
                void *args[] = {&db, &dob, &nrec, &base, &step};
                rk_status st = et_launch(e, k, 1, 1, 1, LANES, 1, 1, args);
                if (st) printf("%s: %s\n", c->what, rk_error_message());
                assert_int_equal(st, RK_OK);
                if (memcmp(O, want, AREA)) {
                    for (int i = 0; i < AREA; i++)
                        if (O[i] != want[i]) {
                            printf("%s %s, num_records %d: byte %d is 0x%02x, want 0x%02x\n", c->what,
                                   store ? "store" : "load", nrec, i, O[i], want[i]);
                            break;
                        }
                    fail();
                }
            }
            rk_emu_free(e);
            rk_kernel_free(k);
        }
    }
}

/* ---- ds_read_tr16_b128 --------------------------------------------------------------------------- */
/* Each lane points at its own 8-half row of a 64 x 8 f16 tile (a permuted
 * row, so the result depends on addresses, not lane numbers). The b128
 * result must equal tr16_b64 at the row and tr16_b64 at the row + 4 halves,
 * concatenated, and both must follow the b64 formula. */
static void t_tr16_b128(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("tr128");
    rk_value T = et_ptr_param(k, "T", RK_T_F16), O = et_ptr_param(k, "O", RK_T_F16);
    uint32_t d = 512;
    rk_value sm = rk_build_smem_alloc(k, RK_T_F16, &d, 1);
    rk_value l = rk_build_thread_id(k, 0), c8 = rk_const_i32(k, 8), c4 = rk_const_i32(k, 4);
    rk_value li = rk_build_mul(k, l, c8);
    rk_store_smem(k, sm, &li, rk_load_global(k, T, li, 8));
    rk_build_sync(k);
    /* row(l) = (l * 37 + 11) mod 64 */
    rk_value row = rk_build_and(k, rk_build_add(k, rk_build_mul(k, l, rk_const_i32(k, 37)), rk_const_i32(k, 11)),
                                rk_const_i32(k, 63));
    rk_value a = rk_build_mul(k, row, c8), a4 = rk_build_add(k, a, c4);
    rk_value w = rk_build_ds_read_tr16_b128(k, sm, &a);
    rk_value lo = rk_build_ds_read_tr16_b64(k, sm, &a);
    rk_value hi = rk_build_ds_read_tr16_b64(k, sm, &a4);
    rk_value o16 = rk_build_mul(k, l, rk_const_i32(k, 16));
    rk_store_global(k, O, o16, w);
    rk_value o8 = rk_build_add(k, o16, c8);
    rk_store_global(k, O, o8, lo);
    rk_value c12 = rk_const_i32(k, 12);
    rk_value o12 = rk_build_add(k, o16, c12);
    rk_store_global(k, O, o12, hi);
    rk_build_return(k);
    et_finish(k);
    uint16_t tile[512], o[64 * 16];
    for (int i = 0; i < 512; i++) tile[i] = (uint16_t)(0x3c00 + i);
    rk_emu *e = et_emu("gfx950", 1);
    uint64_t dt = et_buf(e, tile, sizeof tile, "T"), dout = et_buf(e, o, sizeof o, "O");
    void *args[] = {&dt, &dout};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    for (int ln = 0; ln < 64; ln++) {
        int g = ln & ~15, j = ln & 15;
        for (int part = 0; part < 2; part++)
            for (int el = 0; el < 4; el++) {
                /* b64 rule: element el of lane j comes from lane 4*el + j/4 of
                 * the group, its element j%4 (at its address + part*8 bytes) */
                int from = g + 4 * el + j / 4, frow = (from * 37 + 11) & 63;
                uint16_t want = tile[frow * 8 + part * 4 + j % 4];
                assert_int_equal(o[ln * 16 + part * 4 + el], want);          /* b128 */
                assert_int_equal(o[ln * 16 + 8 + part * 4 + el], want);      /* the two b64 reads */
            }
    }
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* ---- async_copy alignment -------------------------------------------------------------------------- */
/* 16-byte copies of f32: lane t copies from element t*4 + soff to LDS
 * element t*4 + doff, valid only for lanes below `nvalid`. */
static rk_kernel *copy_kernel(int32_t soff, int32_t doff) {
    rk_kernel *k = rk_kernel_new("cpal");
    rk_value S = et_ptr_param(k, "S", RK_T_F32), O = et_ptr_param(k, "O", RK_T_F32);
    rk_value nvalid = rk_add_param(k, "nvalid", RK_T_I32, NULL);
    uint32_t d = 1024;
    rk_value sm = rk_build_smem_alloc(k, RK_T_F32, &d, 1);
    rk_value t = rk_build_thread_id(k, 0), t4 = rk_build_mul(k, t, rk_const_i32(k, 4));
    rk_value si = rk_build_add(k, t4, rk_const_i32(k, soff)), di = rk_build_add(k, t4, rk_const_i32(k, doff));
    rk_value valid = rk_build_cmp(k, "lt", t, nvalid);
    rk_set_loc(k, "copy.c:7");
    rk_build_async_copy(k, S, si, sm, di, valid, 16);
    rk_set_loc(k, NULL);
    rk_build_async_commit_group(k);
    rk_build_async_wait_group(k, 0);
    rk_build_sync(k);
    rk_store_global(k, O, t4, rk_load_smem(k, sm, &t4, 4));
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_async_copy_alignment(void **state) {
    (void)state;
    static float S[2048], O[1024];
    for (int i = 0; i < 2048; i++) S[i] = (float)i;
    const char *targets[] = {"sm_80", "gfx942"};
    for (int ti = 0; ti < 2; ti++) {
        rk_emu *e = et_emu(targets[ti], 1);
        uint64_t ds = et_buf(e, S, sizeof S, "S"), dout = et_buf(e, O, sizeof O, "O");
        int32_t nvalid = 256;
        void *args[] = {&ds, &dout, &nvalid};
        /* aligned: runs and copies */
        rk_kernel *k = copy_kernel(0, 0);
        assert_int_equal(et_launch(e, k, 1, 1, 1, 256, 1, 1, args), RK_OK);
        for (int i = 0; i < 1024; i++) assert_true(O[i] == S[i]);
        rk_kernel_free(k);
        /* source one element off: lane 0 is named with both addresses */
        k = copy_kernel(1, 0);
        et_expect_error(et_launch(e, k, 1, 1, 1, 256, 1, 1, args), RK_ERR_DEVICE, "misaligned async copy of 16 bytes",
                        "source 0x", "(element 1)", "LDS destination 0x0", "'tile.async_copy'", "@\"copy.c:7\"", "lane 0",
                        NULL);
        rk_kernel_free(k);
        /* destination two elements off */
        k = copy_kernel(0, 2);
        et_expect_error(et_launch(e, k, 1, 1, 1, 256, 1, 1, args), RK_ERR_DEVICE, "misaligned async copy",
                        "LDS destination 0x8", "element 2)", "16-byte aligned", "lane 0", NULL);
        rk_kernel_free(k);
        /* an invalid lane's source must be aligned too (cp.async takes it) */
        nvalid = 0;
        k = copy_kernel(2, 0);
        et_expect_error(et_launch(e, k, 1, 1, 1, 256, 1, 1, args), RK_ERR_DEVICE, "misaligned async copy", "lane 0", NULL);
        rk_kernel_free(k);
        rk_emu_free(e);
    }
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_fp8_saturates),
        cmocka_unit_test(t_pk_i8_byte_order),
        cmocka_unit_test(t_buffer_granules),
        cmocka_unit_test(t_tr16_b128),
        cmocka_unit_test(t_async_copy_alignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
