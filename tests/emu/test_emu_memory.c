/* rocke tests — emulator memory semantics: buffer resources with the AMD
 * range check (per dword for dword loads, per element for 16-bit loads,
 * stores dropped, the INT32_MAX masked-lane offset), global atomics that
 * stay exact across host threads, compare-and-swap and packed f16 adds,
 * cooperative stores, byte-offset pointers, vector LDS accesses and the
 * lane-contiguous global_load_lds. Layer: tests. */
#include "emu_test.h"

/* out[l] = buffer_load(rsrc(in, nbytes), voff[l]) of type rt (elements of et). */
static rk_kernel *bload_kernel(rk_opcode code, rk_type et, uint32_t vec) {
    rk_kernel *k = rk_kernel_new("bload");
    rk_value in = et_ptr_param(k, "in", et), out = et_ptr_param(k, "out", et), vo = et_ptr_param(k, "voff", RK_T_I32);
    rk_value nb = rk_add_param(k, "nbytes", RK_T_I32, NULL);
    rk_value rs = rk_build_buffer_rsrc(k, in, nb);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value off = rk_load_global(k, vo, l, 1);
    rk_value zero = rk_const_i32(k, 0);
    rk_type rt = vec > 1 ? rk_type_vec(k, et, vec) : et;
    int64_t dwords = (int64_t)(rk_type_bits(k, rt) / 32);
    rk_value v = code == RK_OP_BUFFER_LOAD_VN ? rk_build_buffer_load_vn(k, rs, off, zero, dwords, et)
               : code == RK_OP_BUFFER_LOAD_VN_F16 ? rk_build_buffer_load_vn_f16(k, rs, off, zero, dwords)
               : code == RK_OP_BUFFER_LOAD_VN_BF16 ? rk_build_buffer_load_vn_bf16(k, rs, off, zero, dwords)
               : code == RK_OP_BUFFER_LOAD_F16 ? rk_build_buffer_load_f16(k, rs, off, zero)
               : code == RK_OP_BUFFER_LOAD_BF16 ? rk_build_buffer_load_bf16(k, rs, off, zero)
                                                 : rk_build_buffer_load(k, rs, off, zero, et);
    rk_value cv = rk_const_i32(k, (int32_t)vec);
    rk_value oi = vec > 1 ? rk_build_mul(k, l, cv) : l;
    rk_store_global(k, out, oi, v);
    rk_build_return(k);
    et_finish(k);
    return k;
}

static void t_buffer_ranges(void **state) {
    (void)state;
    uint16_t data[64], o16[64 * 8];
    for (int i = 0; i < 64; i++) data[i] = (uint16_t)(0x1000 + i);
    int32_t voff[64];
    rk_emu *e = et_emu("gfx942", 1);
    uint64_t din = et_buf(e, data, sizeof data, "in"), dout = et_buf(e, o16, sizeof o16, "out");
    uint64_t dvo = et_buf(e, voff, sizeof voff, "voff");
    int32_t nbytes = 22;     /* 11 halves: element 10 is the last in range, dword 5 straddles */
    void *args[] = {&din, &dout, &dvo, &nbytes};
    /* 16-bit loads are checked per element */
    rk_kernel *k = bload_kernel(RK_OP_BUFFER_LOAD_F16, RK_T_F16, 1);
    for (int l = 0; l < 64; l++) voff[l] = l < 32 ? 2 * l : l == 40 ? INT32_MAX : l == 41 ? -2 : 2 * (l - 32);
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    for (int l = 0; l < 64; l++) {
        int el = voff[l] / 2;
        uint16_t want = (voff[l] >= 0 && (int64_t)voff[l] + 2 <= nbytes) ? data[el] : 0;
        assert_int_equal(o16[l], want);
    }
    rk_kernel_free(k);
    /* vec<f16x8> (4 dwords) loads are checked per dword: the dword holding
     * halves 10 and 11 straddles num_records = 22 and reads 0 whole */
    k = bload_kernel(RK_OP_BUFFER_LOAD_VN_F16, RK_T_F16, 8);
    for (int l = 0; l < 64; l++) voff[l] = l == 3 ? INT32_MAX : 4 * (l % 8);
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    for (int l = 0; l < 64; l++)
        for (int j = 0; j < 8; j++) {
            int64_t byte = (int64_t)voff[l] + 2 * j, dword = byte & ~3;
            bool in = l != 3 && dword + 4 <= nbytes;
            assert_int_equal(o16[l * 8 + j], in ? data[byte / 2] : 0);
        }
    rk_kernel_free(k);
    rk_emu_free(e);
}

/* Stores outside num_records are dropped; the rest land. */
static void t_buffer_store_dropped(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("bstore");
    rk_value out = et_ptr_param(k, "out", RK_T_F32);
    rk_value nb = rk_add_param(k, "nbytes", RK_T_I32, NULL);
    rk_value rs = rk_build_buffer_rsrc(k, out, nb);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value off = rk_build_mul(k, l, rk_const_i32(k, 4));
    rk_value odd = rk_build_cmp(k, "eq", rk_build_and(k, l, rk_const_i32(k, 1)), rk_const_i32(k, 1));
    rk_value masked = rk_build_select(k, odd, rk_const_i32(k, INT32_MAX), off);   /* odd lanes: dropped */
    rk_value v = rk_build_sitofp(k, l, RK_T_F32);
    rk_store_buffer(k, rs, masked, rk_const_i32(k, 0), v);
    rk_build_return(k);
    et_finish(k);
    float o[64];
    for (int i = 0; i < 64; i++) o[i] = -1.0f;
    rk_emu *e = et_emu("gfx950", 1);
    uint64_t dout = et_buf(e, o, 200, "out");      /* 50 floats of memory */
    int32_t nbytes = 100;
    void *args[] = {&dout, &nbytes};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    for (int i = 0; i < 64; i++) assert_true(o[i] == ((i & 1) || i >= 25 ? -1.0f : (float)i));
    /* a descriptor larger than its memory is a fault when it is built, not a silent write */
    nbytes = 1 << 20;
    et_expect_error(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_ERR_DEVICE, "buffer resource over",
                    "num_records 1048576", "exceeds its source buffer 'out'", "tile.buffer_rsrc", NULL);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* Many workgroups on two host threads add into a few counters. */
static void t_global_atomics(void **state) {
    (void)state;
    static const char *const kinds[] = {"add", "smax", "umin", "or", "xor"};
    for (int kd = 0; kd < 5; kd++) {
        rk_kernel *k = rk_kernel_new("atom");
        rk_value c = et_ptr_param(k, "c", RK_T_I32), old = et_ptr_param(k, "old", RK_T_I32);
        rk_value i = et_gid(k);
        rk_value slot = rk_build_and(k, i, rk_const_i32(k, 3));
        rk_value v = rk_build_sub(k, rk_build_mul(k, i, rk_const_i32(k, 7)), rk_const_i32(k, 3000));
        rk_value r = rk_build_global_atomic(k, kinds[kd], c, slot, v);
        rk_store_global(k, old, i, r);
        rk_build_return(k);
        et_finish(k);
        enum { T = 64 * 40 };
        int32_t cnt[4] = {0, 0, 0, 0}, o[T];
        if (kd == 2) for (int q = 0; q < 4; q++) cnt[q] = -1;
        rk_emu *e = et_emu("gfx950", 2);
        uint64_t dc = et_buf(e, cnt, sizeof cnt, "c"), dold = et_buf(e, o, sizeof o, "old");
        void *args[] = {&dc, &dold};
        assert_int_equal(et_launch(e, k, 40, 1, 1, 64, 1, 1, args), RK_OK);
        for (int q = 0; q < 4; q++) {
            int32_t want = kd == 2 ? -1 : 0;
            for (int t = q; t < T; t += 4) {
                int32_t x = t * 7 - 3000;
                switch (kd) {
                case 0: want += x; break;
                case 1: want = x > want ? x : want; break;
                case 2: want = (uint32_t)x < (uint32_t)want ? x : want; break;
                case 3: want |= x; break;
                default: want ^= x; break;
                }
            }
            assert_int_equal(cnt[q], want);
        }
        rk_emu_free(e);
        rk_kernel_free(k);
    }
}

/* f32 atomic add of exact values, cas as a lock-free increment, packed f16. */
static void t_float_and_cas_atomics(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("fatom");
    rk_value f = et_ptr_param(k, "f", RK_T_F32), ctr = et_ptr_param(k, "ctr", RK_T_I32);
    rk_value hp = et_ptr_param(k, "h", RK_T_F16);
    rk_value i = et_gid(k), zero = rk_const_i32(k, 0);
    rk_value fv = rk_const_f32(k, 0.25f);
    rk_value fold = rk_build_global_atomic_add_f32(k, f, zero, fv);
    (void)fold;
    /* cas loop as one shot: try old -> old + 1 where old was read first; count successes */
    rk_value cur = rk_load_global(k, ctr, zero, 1);
    rk_value nxt = rk_build_add(k, cur, rk_const_i32(k, 1));
    rk_value got = rk_build_global_atomic_cas(k, ctr, rk_const_i32(k, 1), cur, nxt);
    (void)got;
    rk_value one = rk_const_float(k, RK_T_F16, 1.0), half = rk_const_float(k, RK_T_F16, 0.5);
    rk_value pk[2] = {one, half};
    rk_value hv = rk_build_vpack(k, pk, 2);
    rk_value hold = rk_build_global_atomic_add_pk_f16(k, hp, zero, hv);
    (void)hold;
    (void)i;
    rk_build_return(k);
    et_finish(k);
    float fs = 0.0f;
    int32_t ctrs[2] = {5, 5};
    uint16_t hs[2] = {0, 0};
    rk_emu *e = et_emu("gfx942", 2);
    uint64_t df = et_buf(e, &fs, 4, "f"), dc = et_buf(e, ctrs, 8, "ctr"), dh = et_buf(e, hs, 4, "h");
    void *args[] = {&df, &dc, &dh};
    assert_int_equal(et_launch(e, k, 16, 1, 1, 64, 1, 1, args), RK_OK);
    assert_true(fs == 256.0f);                      /* 1024 * 0.25, exact */
    assert_true(ctrs[1] == 6);                      /* every lane saw ctr[0] = 5: one cas wins */
    assert_true(rk_f16_to_f32(hs[0]) == 1024.0f && rk_f16_to_f32(hs[1]) == 512.0f);
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* cooperative_global_store, global_ptr_add, i64 indices, vector LDS. */
static void t_misc_memory(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("misc");
    rk_value out = et_ptr_param(k, "out", RK_T_I32), out2 = et_ptr_param(k, "out2", RK_T_I32);
    rk_value l = rk_build_thread_id(k, 0);
    rk_type a4 = rk_type_vec(k, RK_T_I32, 4);
    /* element j of lane l goes to out[4*(63-l) + (3-j)] */
    rk_value base = rk_build_mul(k, rk_build_sub(k, rk_const_i32(k, 63), l), rk_const_i32(k, 4));
    rk_value idx[4], val[4];
    for (int j = 0; j < 4; j++) {
        idx[j] = rk_build_add(k, base, rk_const_i32(k, 3 - j));
        val[j] = rk_build_add(k, rk_build_mul(k, l, rk_const_i32(k, 10)), rk_const_i32(k, j));
    }
    rk_value iv = rk_build_vpack(k, idx, 4), vv = rk_build_vpack(k, val, 4);
    (void)a4;
    rk_build_cooperative_global_store(k, out, iv, vv);
    /* LDS vec4 round trip, then out2 through a pointer advanced by 16 bytes with i64 index */
    uint32_t d = 256;
    rk_value sm = rk_build_smem_alloc(k, RK_T_I32, &d, 1);
    rk_value si = rk_build_mul(k, l, rk_const_i32(k, 4));
    rk_store_smem(k, sm, &si, vv);
    rk_build_sync(k);
    rk_value rj = rk_build_mul(k, rk_build_xor(k, l, rk_const_i32(k, 7)), rk_const_i32(k, 4));
    rk_value back = rk_load_smem(k, sm, &rj, 4);
    rk_value p16 = rk_build_global_ptr_add(k, out2, rk_const_i32(k, 16));
    rk_value li = rk_build_sext(k, rk_build_mul(k, l, rk_const_i32(k, 4)), RK_T_I64);
    rk_store_global(k, p16, li, back);
    rk_build_return(k);
    et_finish(k);
    int32_t o[256], o2[260];
    rk_emu *e = et_emu("sm_90", 1);
    uint64_t d1 = et_buf(e, o, sizeof o, "out"), d2 = et_buf(e, o2, sizeof o2, "out2");
    void *args[] = {&d1, &d2};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    for (int ln = 0; ln < 64; ln++)
        for (int j = 0; j < 4; j++) {
            assert_int_equal(o[4 * (63 - ln) + 3 - j], ln * 10 + j);
            assert_int_equal(o2[4 + 4 * ln + j], (ln ^ 7) * 10 + j);
        }
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* global_load_lds (gfx942+): lane i's 4 bytes land at base + 4i, after the wait. */
static void t_global_load_lds(void **state) {
    (void)state;
    rk_kernel *k = rk_kernel_new("gll");
    rk_value in = et_ptr_param(k, "in", RK_T_I32), out = et_ptr_param(k, "out", RK_T_I32);
    uint32_t d = 128;
    rk_value sm = rk_build_smem_alloc(k, RK_T_I32, &d, 1);
    rk_value ad = rk_build_smem_addr_of(k, sm);
    rk_value c64 = rk_const_i64(k, 64);
    rk_value base = rk_build_add(k, ad, c64);      /* start at element 16 */
    rk_value l = rk_build_thread_id(k, 0);
    rk_value off = rk_build_mul(k, rk_build_xor(k, l, rk_const_i32(k, 1)), rk_const_i32(k, 4));
    rk_build_global_load_lds(k, in, off, base, 4);
    rk_build_s_waitcnt(k, 0, -1, -1);
    rk_build_sync(k);
    rk_value j = rk_build_add(k, l, rk_const_i32(k, 16));
    rk_value v = rk_load_smem(k, sm, &j, 1);
    rk_store_global(k, out, l, v);
    rk_build_return(k);
    et_finish(k);
    int32_t a[64], o[64];
    for (int i = 0; i < 64; i++) a[i] = 500 + i;
    rk_emu *e = et_emu("gfx942", 1);
    uint64_t da = et_buf(e, a, sizeof a, "in"), dout = et_buf(e, o, sizeof o, "out");
    void *args[] = {&da, &dout};
    assert_int_equal(et_launch(e, k, 1, 1, 1, 64, 1, 1, args), RK_OK);
    for (int i = 0; i < 64; i++) assert_int_equal(o[i], 500 + (i ^ 1));
    rk_emu_free(e);
    rk_kernel_free(k);
}

/* Registry bookkeeping: host views, names, releases, zeroed allocations. */
static void t_registry(void **state) {
    (void)state;
    rk_emu *e = et_emu("gfx950", 1);
    uint64_t a, b;
    assert_int_equal(rk_emu_alloc(e, 100, &a), RK_OK);
    assert_int_equal(rk_emu_alloc(e, 100, &b), RK_OK);
    assert_true(b > a + 100);
    size_t n = 0;
    uint8_t *h = rk_emu_host(e, a + 10, &n);
    assert_non_null(h);
    assert_int_equal(n, 90);
    for (int i = 0; i < 90; i++) assert_int_equal(h[i], 0);
    assert_null(rk_emu_host(e, a + 100, &n));
    assert_int_equal(n, 0);
    assert_int_equal(rk_emu_set_name(e, b + 5, "B"), RK_OK);
    assert_int_equal(rk_emu_release(e, a + 1), RK_ERR_NOT_FOUND);
    assert_int_equal(rk_emu_release(e, a), RK_OK);
    assert_null(rk_emu_host(e, a, NULL));
    assert_int_equal(rk_emu_release(e, a), RK_ERR_NOT_FOUND);
    assert_non_null(rk_emu_host(e, b, NULL));
    rk_emu_free(e);
    assert_null(rk_emu_new(NULL, NULL));
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_buffer_ranges),
        cmocka_unit_test(t_buffer_store_dropped),
        cmocka_unit_test(t_global_atomics),
        cmocka_unit_test(t_float_and_cas_atomics),
        cmocka_unit_test(t_misc_memory),
        cmocka_unit_test(t_global_load_lds),
        cmocka_unit_test(t_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
