/* rocke tests — every op of the table that any target allows runs on the
 * emulator: the sample kernel of tests/support/op_samples.h for that op, on
 * every target where it is legal, with random in-range inputs and every
 * checker on (the samples are race-free and their barriers uniform); it
 * must finish without a fault (inline assembly must fail cleanly; the
 * Hopper ops' results are checked in test_emu_hopper_*.c). Ops no
 * target allows must be rejected by verification, not crash. Layer: tests. */
#include "emu_test.h"
#include "support/op_samples.h"

enum { BUF_BYTES = 1 << 16 };

/* Floats in [0, 4) (fptoui of a negative value is poison), ints in [0, 16). */
static float val(void) { return 2.0f + 2.0f * et_unit(); }

static void fill(void *buf, rk_scalar s) {
    uint8_t *b = buf;
    for (size_t i = 0; i < BUF_BYTES;) {
        switch (s) {
        case RK_S_F32: { float v = val(); memcpy(b + i, &v, 4); i += 4; break; }
        case RK_S_F64: { double v = (double)val(); memcpy(b + i, &v, 8); i += 8; break; }
        case RK_S_F16: { uint16_t v = rk_f32_to_f16(val()); memcpy(b + i, &v, 2); i += 2; break; }
        case RK_S_BF16: { uint16_t v = rk_f32_to_bf16(val()); memcpy(b + i, &v, 2); i += 2; break; }
        case RK_S_FP8E4M3: b[i++] = rk_f32_to_fp8(val(), RK_FP8_E4M3); break;
        case RK_S_BF8E5M2: b[i++] = rk_f32_to_fp8(val(), RK_FP8_E5M2); break;
        case RK_S_FP8E4M3FNUZ: b[i++] = rk_f32_to_fp8(val(), RK_FP8_E4M3_FNUZ); break;
        case RK_S_BF8E5M2FNUZ: b[i++] = rk_f32_to_fp8(val(), RK_FP8_E5M2_FNUZ); break;
        case RK_S_I16: { uint16_t v = (uint16_t)(et_rand() % 16); memcpy(b + i, &v, 2); i += 2; break; }
        case RK_S_I32: { uint32_t v = (uint32_t)(et_rand() % 16); memcpy(b + i, &v, 4); i += 4; break; }
        case RK_S_I64: { uint64_t v = et_rand() % 16; memcpy(b + i, &v, 8); i += 8; break; }
        default: b[i++] = (uint8_t)(et_rand() % 16); break;
        }
    }
}

/* Run the sample of `code` on target t; returns the launch status. */
static rk_status run_sample(rk_opcode code, const rk_target *t, uint32_t *executed) {
    rk_kernel *k = op_sample_kernel(code, t->name);
    if (!k) {
        printf("%s: no sample: %s\n", rk_opcode_name(code), rk_error_message());
        fail();
    }
    assert_true(op_sample_count(k, code) >= 1);
    rk_emu_options o = rk_emu_options_default();   /* race, barrier and async checks on */
    o.threads = 1;
    rk_emu *e = rk_emu_new(t, &o);
    assert_non_null(e);
    uint32_t np = rk_kernel_nparams(k);
    void **bufs = calloc(np, sizeof *bufs);
    uint64_t *addr = calloc(np, sizeof *addr);
    uint8_t (*scal)[16] = calloc(np, 16);
    void **args = calloc(np, sizeof *args);
    uint8_t (*maps)[128] = calloc(np, 128);
    for (uint32_t i = 0; i < np; i++) {
        const rk_param *p = rk_kernel_param(k, i);
        if (rk_attrs_bool(&p->attrs, "tensormap", false)) {
            /* a 64 x 64 f32 tensor over a buffer of its own (the TMA sample loads a 32 x 64 box) */
            bufs[i] = malloc(BUF_BYTES);
            fill(bufs[i], RK_S_F32);
            addr[i] = et_buf(e, bufs[i], BUF_BYTES, p->name);
            if (!strcmp(p->name, "tmap4")) {
                /* the same tensor as 64 f32 x 8 x 4 x 2, the box 64 x 8 x 4 x 2 at traversal stride 2
                 * along the outermost dimension: 32 rows, as the 2-D box */
                const uint64_t dims[4] = {64, 8, 4, 2}, str[3] = {256, 2048, 8192};
                const uint32_t box[4] = {64, 8, 4, 2}, es[4] = {1, 1, 1, 2};
                assert_int_equal(rk_emu_tensormap_encode_nd(addr[i], 4, 4, dims, str, box, es, 0, maps[i]), RK_OK);
            } else {
                assert_int_equal(rk_emu_tensormap_encode_2d(addr[i], 4, 64, 64, 256, 32, 64, 0, maps[i]), RK_OK);
            }
            args[i] = maps[i];
        } else if (rk_type_kind_of(k, p->type) == RK_TK_PTR) {
            bufs[i] = malloc(BUF_BYTES);
            fill(bufs[i], rk_type_scalar(rk_type_elem(k, p->type)));
            addr[i] = et_buf(e, bufs[i], BUF_BYTES, p->name);
            args[i] = &addr[i];
        } else {
            args[i] = scal[i];
        }
    }
    rk_status st = et_launch(e, k, 1, 1, 1, 256, 1, 1, args);
    rk_emu_stats s;
    rk_emu_stats_get(e, &s);
    *executed = (uint32_t)s.instructions;
    for (uint32_t i = 0; i < np; i++) free(bufs[i]);
    free(bufs);
    free(addr);
    free(scal);
    free(maps);
    free(args);
    rk_emu_free(e);
    rk_kernel_free(k);
    return st;
}

static void t_every_op(void **state) {
    (void)state;
    uint32_t ran = 0, never = 0;
    for (int c = 1; c < RK_OP__COUNT; c++) {
        rk_opcode code = (rk_opcode)c;
        bool any = false;
        for (const rk_target *const *tp = rk_targets(); *tp; tp++) {
            const rk_target *t = *tp;
            if (!op_sample_legal(code, t->features)) continue;
            any = true;
            uint32_t executed = 0;
            rk_status st = run_sample(code, t, &executed);   /* every checker on */
            /* inline asm is refused by name */
            if (code == RK_OP_INLINE_ASM) {
                et_expect_error(st, RK_ERR_DEVICE, "not supported by the emulator", NULL);
                continue;
            }
            if (st != RK_OK) printf("%s on %s: %s\n", rk_opcode_name(code), t->name, rk_error_message());
            assert_int_equal(st, RK_OK);
            assert_true(executed > 0);
            ran++;
        }
        if (!any) {
            /* no target offers it: verification must refuse it */
            rk_kernel *k = op_sample_kernel(code, "gfx950");
            assert_non_null(k);
            rk_emu *e = et_emu("gfx950", 1);
            const uint32_t g[3] = {1, 1, 1}, b[3] = {256, 1, 1};
            rk_status st = rk_emu_launch(e, k, g, b, 0, NULL);
            assert_int_not_equal(st, RK_OK);
            rk_emu_free(e);
            rk_kernel_free(k);
            never++;
        }
    }
    printf("%u op/target runs, %u ops no target allows\n", ran, never);
}

int main(void) {
    et_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_every_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
