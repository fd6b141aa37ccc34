/* rocke tests — cross-lane ops against formulas written here from the
 * instruction definitions (AMD ISA: ds_bpermute, ds_swizzle, DPP, v_perm_b32,
 * permlane32_swap; PTX: shfl.sync), each under random partial exec masks:
 * the op runs inside an if whose lanes come from an activity array, and only
 * active lanes store. Layer: tests. */
#include "emu_test.h"

typedef void (*attrs_fn)(rk_kernel *k, rk_op *op, void *ud);

/* out[l] = op(a[l], b[l], c[l]) for lanes with act[l] != 0, one wave. The
 * operand count and result types come from the op; i64 operands take b64. */
static void run(const char *target, rk_opcode code, uint32_t nin, rk_type t0, rk_type t1, rk_type rt, attrs_fn f,
                void *ud, const void *a, const void *b, const void *c, const int32_t *act, void *out, uint32_t nout) {
    const rk_target *tg = rk_target_find(target);
    uint32_t W = tg->wave_size;
    rk_kernel *k = rk_kernel_new("lanes");
    rk_value pa = et_ptr_param(k, "a", t0), pb = et_ptr_param(k, "b", t1), pc = et_ptr_param(k, "c", t0);
    rk_value pact = et_ptr_param(k, "act", RK_T_I32), po = et_ptr_param(k, "out", rt);
    rk_value po2 = et_ptr_param(k, "out2", rt);
    rk_value l = rk_build_thread_id(k, 0);
    rk_value av = rk_load_global(k, pact, l, 1);
    rk_value on = rk_build_cmp(k, "ne", av, rk_const_i32(k, 0));
    rk_value va = rk_load_global(k, pa, l, 1), vb = rk_load_global(k, pb, l, 1), vc = rk_load_global(k, pc, l, 1);
    rk_if_begin(k, on);
    rk_value in[3] = {va, vb, vc};
    rk_type rts[2] = {rt, rt};
    /* generic over the opcode the table row names (one harness for many ops): raw emission, then the
     * table's own check; typed builders take no opcode */
    rk_op *op = rk_emit(k, code, in, nin, rts, nout);
    if (f) f(k, op, ud);
    if (!rk_op_check(k, op)) printf("%s\n", rk_error_message());
    rk_store_global(k, po, l, op->out[0]);
    if (nout > 1) rk_store_global(k, po2, l, op->out[1]);
    rk_if_end(k, NULL, 0);
    rk_build_return(k);
    et_finish(k);
    size_t e0 = rk_type_bits(k, t0) / 8, e1 = rk_type_bits(k, t1) / 8, er = rk_type_bits(k, rt) / 8;
    memset(out, 0x5a, W * er * 2);                 /* SENT in lanes that do not store */
    rk_emu *e = et_emu(target, 1);
    uint64_t da = et_buf(e, (void *)a, W * e0, "a"), db = et_buf(e, (void *)b, W * e1, "b");
    uint64_t dc = et_buf(e, (void *)c, W * e0, "c"), dact = et_buf(e, (void *)act, W * 4, "act");
    uint64_t dout = et_buf(e, out, W * er * 2, "out"), dout2 = dout + W * er;
    void *args[] = {&da, &db, &dc, &dact, &dout, &dout2};
    rk_status st = et_launch(e, k, 1, 1, 1, W, 1, 1, args);
    if (st) printf("%s: %s\n", rk_opcode_name(code), rk_error_message());
    assert_int_equal(st, RK_OK);
    rk_emu_free(e);
    rk_kernel_free(k);
}

static int32_t A[64], B[64], C[64], ACT[64];
static uint32_t O[256];   /* room for two results of 8 bytes per lane */
enum { SENT = 0x5a5a5a5a };

static void inputs(uint32_t W, int density) {
    for (uint32_t l = 0; l < 64; l++) {
        A[l] = (int32_t)et_rand();
        B[l] = (int32_t)et_rand();
        C[l] = (int32_t)et_rand();
        ACT[l] = l < W && (int)(et_rand() % 8) < density;
    }
    ACT[et_rand() % W] = 1;
    for (int l = 0; l < 256; l++) O[l] = SENT;
}
static uint64_t mask_of(uint32_t W) {
    uint64_t m = 0;
    for (uint32_t l = 0; l < W; l++) m |= (uint64_t)(ACT[l] != 0) << l;
    return m;
}
static void expect(uint32_t W, uint32_t l, uint32_t want) {
    uint32_t got = O[l];
    if (!ACT[l]) want = SENT;
    if (got != want) printf("lane %u: 0x%08x, want 0x%08x (mask 0x%llx)\n", l, got, want, (unsigned long long)mask_of(W));
    assert_int_equal(got, want);
}

static void set_str(rk_kernel *k, rk_op *op, void *ud) {
    const char **kv = ud;
    for (; kv[0]; kv += 2) rk_op_set_str(k, op, kv[0], kv[1]);
}
static void set_int(rk_kernel *k, rk_op *op, void *ud) {
    const int64_t *kv = ud;
    static const char *const keys[] = {"xor_mask", "offset", "row_shr", "row_shl", "ctrl", "sel", "width"};
    for (; kv[0] >= 0; kv += 2) rk_op_set_int(k, op, keys[kv[0]], kv[1]);
}

static void t_broadcasts_and_votes(void **state) {
    (void)state;
    const char *targets[] = {"gfx950", "sm_90"};
    for (int t = 0; t < 2; t++) {
        uint32_t W = rk_target_find(targets[t])->wave_size;
        for (int rep = 0; rep < 8; rep++) {
            inputs(W, rep % 8 + 1);
            uint64_t m = mask_of(W);
            uint32_t first = (uint32_t)__builtin_ctzll(m);
            run(targets[t], RK_OP_READFIRSTLANE, 1, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, A, B, C, ACT, O, 1);
            for (uint32_t l = 0; l < W; l++) expect(W, l, (uint32_t)A[first]);
            /* readlane with a uniform lane; the source lane need not be active */
            for (uint32_t l = 0; l < 64; l++) B[l] = 5;
            run(targets[t], RK_OP_READLANE, 2, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, A, B, C, ACT, O, 1);
            for (uint32_t l = 0; l < W; l++) expect(W, l, (uint32_t)A[5]);
            /* ballot / all / any over the active lanes */
            for (uint32_t l = 0; l < 64; l++) B[l] = (int32_t)(et_rand() % 3 != 0);
            uint64_t bal = 0;
            for (uint32_t l = 0; l < W; l++) bal |= (uint64_t)(ACT[l] && B[l]) << l;
            run(targets[t], RK_OP_WAVE_BALLOT, 1, RK_T_I32, RK_T_I32, RK_T_I64, NULL, NULL, B, B, B, ACT, O, 1);
            for (uint32_t l = 0; l < W; l++)
                if (ACT[l] && ((uint64_t *)O)[l] != bal) { printf("%s lane %u: 0x%llx want 0x%llx\n", targets[t], l, (unsigned long long)((uint64_t *)O)[l], (unsigned long long)bal); fail(); }
            run(targets[t], RK_OP_WAVE_ALL, 1, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, B, B, B, ACT, O, 1);
            for (uint32_t l = 0; l < W; l++) expect(W, l, bal == m);
            run(targets[t], RK_OP_WAVE_ANY, 1, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, B, B, B, ACT, O, 1);
            for (uint32_t l = 0; l < W; l++) expect(W, l, bal != 0);
        }
    }
    /* writelane (AMD): lane 9 gets the first active lane's value; EXEC ignored */
    inputs(64, 4);
    for (uint32_t l = 0; l < 64; l++) B[l] = 9;
    uint32_t first = (uint32_t)__builtin_ctzll(mask_of(64));
    run("gfx942", RK_OP_WRITELANE, 3, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, A, B, C, ACT, O, 1);
    for (uint32_t l = 0; l < 64; l++) expect(64, l, l == 9 ? (uint32_t)A[first] : (uint32_t)C[l]);
}

/* PTX shfl.sync semantics from the CUDA guide: idx reads lane b%width of the
 * lane's segment; up/down/xor read l-d, l+d, l^m when that lane is in the
 * segment (xor may also reach a lower segment), else the own value. */
static void t_shuffle(void **state) {
    (void)state;
    static const char *const modes[] = {"idx", "xor", "up", "down"};
    const char *targets[] = {"sm_80", "gfx950"};
    for (int t = 0; t < 2; t++) {
        uint32_t W = rk_target_find(targets[t])->wave_size;
        for (int md = 0; md < 4; md++) {
            inputs(W, 7);
            for (uint32_t l = 0; l < 64; l++) B[l] = (int32_t)(et_rand() % (2 * W));
            const char *sv[] = {"mode", modes[md], NULL};
            run(targets[t], RK_OP_SHUFFLE, 2, RK_T_I32, RK_T_I32, RK_T_I32, set_str, (void *)sv, A, B, C, ACT, O, 1);
            for (uint32_t l = 0; l < W; l++) {          /* no width: one segment of W lanes */
                uint32_t bv = (uint32_t)B[l] % W;
                int64_t s = md == 0 ? bv : md == 1 ? (int64_t)(l ^ bv) : md == 2 ? (int64_t)l - bv : (int64_t)l + bv;
                if (s < 0 || s >= (int64_t)W) s = l;
                expect(W, l, (uint32_t)A[s]);
            }
        }
    }
}

static void set_shuffle(rk_kernel *k, rk_op *op, void *ud) {
    const int64_t *p = ud;
    static const char *const modes[] = {"idx", "xor", "up", "down"};
    rk_op_set_str(k, op, "mode", modes[p[0]]);
    rk_op_set_int(k, op, "width", p[1]);
}

static void t_shuffle_width(void **state) {
    (void)state;
    const char *targets[] = {"sm_90a", "gfx942"};
    for (int t = 0; t < 2; t++) {
        uint32_t W = rk_target_find(targets[t])->wave_size;
        for (int64_t md = 0; md < 4; md++)
            for (uint32_t w = 2; w <= W; w *= 2) {
                inputs(W, 7);
                for (uint32_t l = 0; l < 64; l++) B[l] = (int32_t)(et_rand() % (2 * w + 1));
                int64_t p[2] = {md, w};
                run(targets[t], RK_OP_SHUFFLE, 2, RK_T_I32, RK_T_I32, RK_T_I32, set_shuffle, p, A, B, C, ACT, O, 1);
                for (uint32_t l = 0; l < W; l++) {
                    uint32_t seg = l / w * w, bv = (uint32_t)B[l] & (W - 1);
                    int64_t s;
                    switch (md) {
                    case 0: s = seg + bv % w; break;
                    case 1: s = l ^ bv; if (s >= (int64_t)(seg + w)) s = l; break;
                    case 2: s = (int64_t)l - bv; if (s < (int64_t)seg) s = l; break;
                    default: s = l + bv; if (s >= (int64_t)(seg + w)) s = l; break;
                    }
                    expect(W, l, (uint32_t)A[s]);
                }
            }
    }
}

/* ds_bpermute: lane l reads lane (addr >> 2) & 63, 0 when that lane is off. */
static void t_bpermute(void **state) {
    (void)state;
    for (int rep = 0; rep < 10; rep++) {
        inputs(64, rep % 7 + 1);
        for (uint32_t l = 0; l < 64; l++) B[l] = (int32_t)(et_rand() % 1024);
        run("gfx950", RK_OP_DS_BPERMUTE, 2, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, B, A, C, ACT, O, 1);
        for (uint32_t l = 0; l < 64; l++) {
            uint32_t s = ((uint32_t)B[l] >> 2) & 63;
            expect(64, l, ACT[s] ? (uint32_t)A[s] : 0);
        }
    }
    /* the b64 form moves both halves from the same lane */
    inputs(64, 5);
    int64_t wide[64];
    for (uint32_t l = 0; l < 64; l++) { wide[l] = (int64_t)et_rand(); B[l] = (int32_t)(et_rand() % 256); }
    run("gfx90a", RK_OP_DS_BPERMUTE_B64, 2, RK_T_I32, RK_T_I64, RK_T_I64, NULL, NULL, B, wide, C, ACT, O, 1);
    for (uint32_t l = 0; l < 64; l++)
        if (ACT[l]) {
            uint32_t s = ((uint32_t)B[l] >> 2) & 63;
            assert_true(((int64_t *)O)[l] == (ACT[s] ? wide[s] : 0));
        }
}

/* ds_swizzle: bit-mask mode src = (((l & 31) & and) | or) ^ xor within the
 * lane's 32-lane half; quad mode src = quad base + off[2i+1:2i]; rotate and
 * FFT modes; inactive sources read 0. */
static void t_swizzle(void **state) {
    (void)state;
    for (int64_t x = 1; x < 32; x++) {
        inputs(64, (int)(x % 8) + 1);
        int64_t kv[] = {0, x, -1, 0};
        run("gfx942", RK_OP_DS_SWIZZLE_XOR, 1, RK_T_I32, RK_T_I32, RK_T_I32, set_int, kv, A, B, C, ACT, O, 1);
        for (uint32_t l = 0; l < 64; l++) {
            uint32_t s = (l & 32u) | ((l & 31u) ^ (uint32_t)x);
            expect(64, l, ACT[s] ? (uint32_t)A[s] : 0);
        }
    }
    for (int rep = 0; rep < 30; rep++) {
        inputs(64, 6);
        uint32_t off = (uint32_t)(et_rand() % 0xc000);
        int64_t kv[] = {1, off, -1, 0};
        run("gfx950", RK_OP_DS_SWIZZLE, 1, RK_T_I32, RK_T_I32, RK_T_I32, set_int, kv, A, B, C, ACT, O, 1);
        for (uint32_t l = 0; l < 64; l++) {
            uint32_t s;
            if (off & 0x8000) s = (l & ~3u) | ((off >> (2 * (l % 4))) & 3);
            else s = (l & 32u) | ((((l & 31u) & (off & 31)) | ((off >> 5) & 31)) ^ ((off >> 10) & 31));
            expect(64, l, ACT[s] ? (uint32_t)A[s] : 0);
        }
    }
    /* rotate (0xc000 | dir << 10 | amount << 5 | mask): the lanes outside
     * `mask` rotate by `amount` inside each 32-lane group (dir 0: lane i
     * reads i + amount, dir 1: i - amount), the mask bits stay the lane's */
    for (int rep = 0; rep < 24; rep++) {
        inputs(64, rep % 3 ? 6 : 1);
        uint32_t dir = (uint32_t)rep & 1u, amount = et_rand() % 32, mask = rep < 12 ? 0 : et_rand() % 32;
        uint32_t off = 0xc000u | dir << 10 | amount << 5 | mask;
        int64_t kv[] = {1, off, -1, 0};
        run("gfx942", RK_OP_DS_SWIZZLE, 1, RK_T_I32, RK_T_I32, RK_T_I32, set_int, kv, A, B, C, ACT, O, 1);
        for (uint32_t l = 0; l < 64; l++) {
            uint32_t i = l % 32, moved = dir ? (i + 32 - amount) % 32 : (i + amount) % 32;
            uint32_t s = (l / 32) * 32 + ((i & mask) | (moved & (31u - mask)));
            expect(64, l, ACT[s] ? (uint32_t)A[s] : 0);
        }
    }
    /* FFT (0xe000 | mask): lane i reads bitreverse5(i) >> popcount(mask) | (i & mask);
     * mask 0 is the plain bit reversal, mask 31 the identity */
    for (uint32_t mask = 0; mask < 32; mask += (mask < 4 ? 1 : 9)) {
        inputs(64, mask % 2 ? 1 : 6);
        int64_t kv[] = {1, 0xe000 | mask, -1, 0};
        run("gfx950", RK_OP_DS_SWIZZLE, 1, RK_T_I32, RK_T_I32, RK_T_I32, set_int, kv, A, B, C, ACT, O, 1);
        uint32_t ones = (uint32_t)__builtin_popcount(mask);
        for (uint32_t l = 0; l < 64; l++) {
            uint32_t i = l % 32, rev = 16 * (i & 1) + 8 * (i >> 1 & 1) + 4 * (i >> 2 & 1) + 2 * (i >> 3 & 1) + (i >> 4);
            uint32_t s = (l / 32) * 32 + ((rev >> ones) | (i & mask));
            expect(64, l, ACT[s] ? (uint32_t)A[s] : 0);
        }
        if (mask == 31)
            for (uint32_t l = 0; l < 64; l++) expect(64, l, ACT[l] ? (uint32_t)A[l] : 0);
    }
}

/* DPP row_shl/row_shr n inside 16-lane rows; quad_perm. A missing or
 * inactive source gives 0 with bound_ctrl, else the lane's own (old) value. */
static void set_dpp(rk_kernel *k, rk_op *op, void *ud) {
    const int64_t *p = ud;
    if (p[0] == 2) rk_op_set_int(k, op, "ctrl", p[1]);
    else rk_op_set_int(k, op, p[0] ? "row_shl" : "row_shr", p[1]);
    if (p[2]) rk_op_set_bool(k, op, "bound_ctrl", true);
}
static void t_dpp(void **state) {
    (void)state;
    static const int64_t shifts[] = {1, 2, 4, 8, 15};
    for (int dir = 0; dir < 2; dir++)
        for (int si = 0; si < 5; si++)
            for (int bc = 0; bc < 2; bc++) {
                inputs(64, 6);
                int64_t p[3] = {dir, shifts[si], bc};
                run("gfx950", RK_OP_MOV_DPP, 1, RK_T_I32, RK_T_I32, RK_T_I32, set_dpp, p, A, B, C, ACT, O, 1);
                for (uint32_t l = 0; l < 64; l++) {
                    int64_t r = l % 16, s = dir ? (r + shifts[si] < 16 ? (int64_t)l + shifts[si] : -1)
                                                : (r >= shifts[si] ? (int64_t)l - shifts[si] : -1);
                    bool ok = s >= 0 && ACT[s];
                    expect(64, l, ok ? (uint32_t)A[s] : bc ? 0u : (uint32_t)A[l]);
                }
            }
    for (int rep = 0; rep < 8; rep++) {
        inputs(64, 5);
        int64_t ctrl = (int64_t)(et_rand() % 256), p[3] = {2, ctrl, 0};
        run("gfx942", RK_OP_QUAD_PERM, 1, RK_T_I32, RK_T_I32, RK_T_I32, set_dpp, p, A, B, C, ACT, O, 1);
        for (uint32_t l = 0; l < 64; l++) {
            uint32_t s = (l & ~3u) | (((uint32_t)ctrl >> (2 * (l % 4))) & 3);
            expect(64, l, ACT[s] ? (uint32_t)A[s] : (uint32_t)A[l]);
        }
    }
}

static void t_reduce_and_permlane(void **state) {
    (void)state;
    static const char *const ops[] = {"umin", "umax", "min", "max", "add", "sub", "and", "or", "xor"};
    for (int o = 0; o < 9; o++) {
        inputs(64, o % 8 + 1);
        const char *sv[] = {"reduce_op", ops[o], NULL};
        run("gfx950", RK_OP_WAVE_REDUCE, 1, RK_T_I32, RK_T_I32, RK_T_I32, set_str, (void *)sv, A, B, C, ACT, O, 1);
        uint32_t acc = o == 0 || o == 6 ? UINT32_MAX : o == 2 ? INT32_MAX : o == 3 ? (uint32_t)INT32_MIN : 0;
        for (uint32_t l = 0; l < 64; l++) {
            if (!ACT[l]) continue;
            uint32_t x = (uint32_t)A[l];
            switch (o) {
            case 0: acc = x < acc ? x : acc; break;
            case 1: acc = x > acc ? x : acc; break;
            case 2: acc = (int32_t)x < (int32_t)acc ? x : acc; break;
            case 3: acc = (int32_t)x > (int32_t)acc ? x : acc; break;
            case 4: acc += x; break;
            case 5: acc -= x; break;
            case 6: acc &= x; break;
            case 7: acc |= x; break;
            default: acc ^= x; break;
            }
        }
        for (uint32_t l = 0; l < 64; l++) expect(64, l, acc);
    }
    /* permlane32_swap(lo, hi) -> (lo with lanes 32.. from hi 0..31, hi with 0..31 from lo 32..) */
    inputs(64, 8);
    for (uint32_t l = 0; l < 64; l++) ACT[l] = 1;
    run("gfx950", RK_OP_PERMLANE32_SWAP, 2, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, A, B, C, ACT, O, 2);
    for (uint32_t l = 0; l < 64; l++) {
        assert_int_equal(O[l], l < 32 ? (uint32_t)A[l] : (uint32_t)B[l - 32]);
        assert_int_equal(O[64 + l], l < 32 ? (uint32_t)A[l + 32] : (uint32_t)B[l]);
    }
}

/* v_perm_b32: bytes 0-3 of {S0,S1} from S1, 4-7 from S0; selector 8..11 the
 * sign of byte 1/3/5/7 as 0x00/0xff, 12 gives 0x00, 13+ gives 0xff. */
static uint32_t perm_ref(uint32_t s0, uint32_t s1, uint32_t sel) {
    uint8_t bytes[8];
    for (int i = 0; i < 4; i++) { bytes[i] = (uint8_t)(s1 >> (8 * i)); bytes[4 + i] = (uint8_t)(s0 >> (8 * i)); }
    uint32_t r = 0;
    for (int k = 0; k < 4; k++) {
        uint32_t s = (sel >> (8 * k)) & 0xff, b;
        if (s <= 7) b = bytes[s];
        else if (s <= 11) b = (bytes[(s - 8) * 2 + 1] & 0x80) ? 0xff : 0x00;
        else if (s == 12) b = 0;
        else b = 0xff;
        r |= b << (8 * k);
    }
    return r;
}
static void t_byte_ops(void **state) {
    (void)state;
    inputs(64, 8);
    for (uint32_t l = 0; l < 64; l++) {
        uint32_t sel = 0;
        for (int q = 0; q < 4; q++) sel |= (uint32_t)(et_rand() % 16) << (8 * q);
        C[l] = (int32_t)(l < 8 ? 0x0c0d0e0fu + l : sel);
    }
    run("gfx950", RK_OP_PERM_B32, 3, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, A, B, C, ACT, O, 1);
    for (uint32_t l = 0; l < 64; l++) expect(64, l, perm_ref((uint32_t)A[l], (uint32_t)B[l], (uint32_t)C[l]));
    int64_t kv[] = {5, 0x0c090805, -1, 0};
    run("gfx942", RK_OP_BYTE_PERM, 2, RK_T_I32, RK_T_I32, RK_T_I32, set_int, kv, A, B, C, ACT, O, 1);
    for (uint32_t l = 0; l < 64; l++) expect(64, l, perm_ref((uint32_t)A[l], (uint32_t)B[l], 0x0c090805));
    /* v_alignbyte: ({a, b} >> 8*(c & 3)) low dword */
    run("gfx90a", RK_OP_ALIGNBYTE, 3, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, A, B, C, ACT, O, 1);
    for (uint32_t l = 0; l < 64; l++)
        expect(64, l, (uint32_t)((((uint64_t)(uint32_t)A[l] << 32) | (uint32_t)B[l]) >> (8 * ((uint32_t)C[l] & 3))));
    /* s_wqm: each nibble with a set bit becomes 0xf */
    run("gfx90a", RK_OP_S_WQM, 1, RK_T_I32, RK_T_I32, RK_T_I32, NULL, NULL, A, B, C, ACT, O, 1);
    for (uint32_t l = 0; l < 64; l++) {
        uint32_t v = (uint32_t)A[l], r = 0;
        for (int q = 0; q < 8; q++)
            if ((v >> (4 * q)) & 0xf) r |= 0xfu << (4 * q);
        expect(64, l, r);
    }
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_broadcasts_and_votes),
        cmocka_unit_test(t_shuffle),
        cmocka_unit_test(t_shuffle_width),
        cmocka_unit_test(t_bpermute),
        cmocka_unit_test(t_swizzle),
        cmocka_unit_test(t_dpp),
        cmocka_unit_test(t_reduce_and_permlane),
        cmocka_unit_test(t_byte_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
