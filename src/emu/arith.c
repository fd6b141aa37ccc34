/* rocke — emulator handlers for integer arithmetic (two's complement wrap;
 * division by zero, signed overflow of division and over-wide shifts are
 * reported for active lanes instead of being C undefined behaviour),
 * compares, select and umul_hi. Elementwise handlers run over all W*m
 * elements: inactive lanes compute values nobody reads. Layer: emu. */
#include "emu_int.h"

#define RESTRICT restrict

/* ---- wrapping binary and unary ops, one function per element width ------------- */
#define BIN(name, T, expr)                                                              \
    static int name(emu_wave *w, const emu_ins *in) {                                   \
        T *RESTRICT d = REF(in->d);                                                     \
        const T *RESTRICT a = REF(in->a), *RESTRICT b = REF(in->b);                     \
        for (uint32_t i = 0, n = in->n; i < n; i++) { T x = a[i], y = b[i]; d[i] = (T)(expr); } \
        return EMU_NEXT;                                                                \
    }
#define UN(name, T, expr)                                                               \
    static int name(emu_wave *w, const emu_ins *in) {                                   \
        T *RESTRICT d = REF(in->d);                                                     \
        const T *RESTRICT a = REF(in->a);                                               \
        for (uint32_t i = 0, n = in->n; i < n; i++) { T x = a[i]; d[i] = (T)(expr); }   \
        return EMU_NEXT;                                                                \
    }

/* 8-bit ops also hold i1 and i4 (zero-extended in a byte): imm masks the result. */
#define MASK8(e) (uint8_t)((uint32_t)(e) & (uint32_t)in->imm)
BIN(add_1, uint8_t, MASK8(x + y))
BIN(sub_1, uint8_t, MASK8(x - y))
BIN(mul_1, uint8_t, MASK8((uint32_t)x * (uint32_t)y))
BIN(and_1, uint8_t, x & y)
BIN(or_1, uint8_t, x | y)
BIN(xor_1, uint8_t, x ^ y)
UN(not_1, uint8_t, MASK8(~(uint32_t)x))
BIN(smax_1, uint8_t, (int8_t)x > (int8_t)y ? x : y)
BIN(smin_1, uint8_t, (int8_t)x < (int8_t)y ? x : y)
BIN(umax_1, uint8_t, x > y ? x : y)
BIN(umin_1, uint8_t, x < y ? x : y)

#define INT_OPS(N, U, S, MULT)                                \
    BIN(add_##N, U, (U)(x + y))                               \
    BIN(sub_##N, U, (U)(x - y))                               \
    BIN(mul_##N, U, (U)((MULT)x * (MULT)y))                   \
    BIN(and_##N, U, x & y)                                    \
    BIN(or_##N, U, x | y)                                     \
    BIN(xor_##N, U, x ^ y)                                    \
    UN(not_##N, U, ~x)                                        \
    BIN(smax_##N, U, (S)x > (S)y ? x : y)                     \
    BIN(smin_##N, U, (S)x < (S)y ? x : y)                     \
    BIN(umax_##N, U, x > y ? x : y)                           \
    BIN(umin_##N, U, x < y ? x : y)
INT_OPS(2, uint16_t, int16_t, uint32_t)
INT_OPS(4, uint32_t, int32_t, uint32_t)
INT_OPS(8, uint64_t, int64_t, uint64_t)

/* ---- checked ops: division and shifts --------------------------------------------- */
/* Only active lanes are checked (and computed): an inactive lane's operands are
 * stale values the kernel never asked for. */
#define CHECKED(name, U, S, BITS, body)                                                  \
    static int name(emu_wave *w, const emu_ins *in) {                                    \
        U *RESTRICT d = REF(in->d);                                                      \
        const U *RESTRICT a = REF(in->a), *RESTRICT b = REF(in->b);                      \
        for (uint32_t i = 0, n = in->n; i < n; i++) {                                    \
            U x = a[i], y = b[i], r = 0;                                                 \
            if (!emu_active(w, i / in->m)) { d[i] = 0; continue; }                       \
            body                                                                         \
            d[i] = r;                                                                    \
        }                                                                                \
        return EMU_NEXT;                                                                 \
    }
#define DIV0(what, S)                                                                    \
    if (y == 0) return emu_fail(w, in, (int)(i / in->m), "%s by zero (%s %lld by 0)", what, \
                                what, (long long)(S)x);
#define SOVF(U, S, BITS)                                                                 \
    if ((S)y == -1 && x == ((U)1 << (BITS - 1)))                                         \
        return emu_fail(w, in, (int)(i / in->m), "signed division overflow (%lld / -1)", (long long)(S)x);
#define SHIFT_CHECK(BITS)                                                                \
    if (y >= BITS)                                                                       \
        return emu_fail(w, in, (int)(i / in->m), "shift amount %llu is not below the width %d (poison)", \
                        (unsigned long long)y, BITS);

#define CHECKED_OPS(N, U, S, BITS)                                                       \
    CHECKED(sdiv_##N, U, S, BITS, DIV0("division", S) SOVF(U, S, BITS) r = (U)((S)x / (S)y);)        \
    CHECKED(srem_##N, U, S, BITS, DIV0("remainder", S) SOVF(U, S, BITS) r = (U)((S)x % (S)y);)       \
    CHECKED(udiv_##N, U, S, BITS, DIV0("unsigned division", S) r = (U)(x / y);)                      \
    CHECKED(urem_##N, U, S, BITS, DIV0("unsigned remainder", S) r = (U)(x % y);)                     \
    CHECKED(shl_##N, U, S, BITS, SHIFT_CHECK(BITS) r = (U)(x << y);)                                 \
    CHECKED(lshr_##N, U, S, BITS, SHIFT_CHECK(BITS) r = (U)(x >> y);)                                \
    CHECKED(ashr_##N, U, S, BITS, SHIFT_CHECK(BITS) { S s = (S)x; r = (U)(s < 0 ? ~(~s >> y) : s >> y); })
CHECKED_OPS(1, uint8_t, int8_t, 8)
CHECKED_OPS(2, uint16_t, int16_t, 16)
CHECKED_OPS(4, uint32_t, int32_t, 32)
CHECKED_OPS(8, uint64_t, int64_t, 64)

/* ---- nsw ops with the overflow check on (rk_emu_options.check_overflow) ------------- */
/* ops.def defines arith.add/sub/mul as nsw: a signed overflow is poison in
 * LLVM. Asked for, the emulator reports it for an active lane. */
#define NSW(name, U, S, BITS, OVF, SYM)                                                   \
    static int name(emu_wave *w, const emu_ins *in) {                                     \
        U *RESTRICT d = REF(in->d);                                                       \
        const U *RESTRICT a = REF(in->a), *RESTRICT b = REF(in->b);                       \
        for (uint32_t i = 0, n = in->n; i < n; i++) {                                     \
            S x = (S)a[i], y = (S)b[i], r;                                                \
            if (OVF(x, y, &r) && emu_active(w, i / in->m))                                \
                return emu_fail(w, in, (int)(i / in->m), "signed overflow of an nsw op: %lld " SYM " %lld does not " \
                                "fit i%d (element %u; the overflow check is on)", (long long)x, (long long)y, BITS, \
                                i % in->m);                                               \
            d[i] = (U)r;                                                                  \
        }                                                                                 \
        return EMU_NEXT;                                                                  \
    }
#define NSW_OPS(N, U, S, BITS)                                  \
    NSW(add_nsw_##N, U, S, BITS, __builtin_add_overflow, "+")   \
    NSW(sub_nsw_##N, U, S, BITS, __builtin_sub_overflow, "-")   \
    NSW(mul_nsw_##N, U, S, BITS, __builtin_mul_overflow, "*")
NSW_OPS(1, uint8_t, int8_t, 8)
NSW_OPS(2, uint16_t, int16_t, 16)
NSW_OPS(4, uint32_t, int32_t, 32)
NSW_OPS(8, uint64_t, int64_t, 64)

emu_fn emu_int_nsw_fn(rk_opcode code, uint32_t bytes) {
    static const emu_fn add[4] = {add_nsw_1, add_nsw_2, add_nsw_4, add_nsw_8};
    static const emu_fn sub[4] = {sub_nsw_1, sub_nsw_2, sub_nsw_4, sub_nsw_8};
    static const emu_fn mul[4] = {mul_nsw_1, mul_nsw_2, mul_nsw_4, mul_nsw_8};
    int col = bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : bytes == 8 ? 3 : -1;
    if (col < 0) return NULL;
    return code == RK_OP_ADD ? add[col] : code == RK_OP_SUB ? sub[col] : code == RK_OP_MUL ? mul[col] : NULL;
}

#define ROW(E, f) [RK_OP_##E] = {f##_1, f##_2, f##_4, f##_8}
static const emu_fn int_table[RK_OP__COUNT][4] = {
    ROW(ADD, add), ROW(SUB, sub), ROW(MUL, mul), ROW(AND, and), ROW(OR, or), ROW(XOR, xor),
    ROW(NOT, not), ROW(SMAX, smax), ROW(SMIN, smin), ROW(UMAX, umax), ROW(UMIN, umin),
    ROW(DIV, sdiv), ROW(MOD, srem), ROW(UDIV, udiv), ROW(UMOD, urem), ROW(SHL, shl),
    ROW(LSHR, lshr), ROW(ASHR, ashr),
    ROW(VADD, add), ROW(VSUB, sub), ROW(VMUL, mul), ROW(VDIV, sdiv), ROW(VAND, and),
    ROW(VOR, or), ROW(VXOR, xor), ROW(VSHL, shl), ROW(VLSHR, lshr), ROW(VSMAX, smax),
    ROW(VSMIN, smin),
};
#undef ROW

emu_fn emu_int_fn(rk_opcode code, uint32_t bytes) {
    int col = bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : bytes == 8 ? 3 : -1;
    return col < 0 ? NULL : int_table[code][col];
}

/* ---- compares -------------------------------------------------------------------- */
#define CMP(name, U, S, expr)                                                           \
    static int name(emu_wave *w, const emu_ins *in) {                                   \
        uint8_t *RESTRICT d = REF(in->d);                                               \
        const U *RESTRICT a = REF(in->a), *RESTRICT b = REF(in->b);                     \
        for (uint32_t i = 0, n = in->n; i < n; i++) { U x = a[i], y = b[i]; d[i] = (uint8_t)(expr); } \
        return EMU_NEXT;                                                                \
    }
#define CMPS(N, U, S)                                                                   \
    CMP(lt_##N, U, S, (S)x < (S)y) CMP(le_##N, U, S, (S)x <= (S)y)                       \
    CMP(gt_##N, U, S, (S)x > (S)y) CMP(ge_##N, U, S, (S)x >= (S)y)                       \
    CMP(eq_##N, U, S, x == y) CMP(ne_##N, U, S, x != y)                                 \
    CMP(ult_##N, U, S, x < y) CMP(ule_##N, U, S, x <= y)                                \
    CMP(ugt_##N, U, S, x > y) CMP(uge_##N, U, S, x >= y)
CMPS(1, uint8_t, int8_t)
CMPS(2, uint16_t, int16_t)
CMPS(4, uint32_t, int32_t)
CMPS(8, uint64_t, int64_t)

/* Signed compares of i1 (true is -1): sign-extend from imm2 bits. */
static int cmp_small(emu_wave *w, const emu_ins *in) {
    uint8_t *d = REF(in->d);
    const uint8_t *a = REF(in->a), *b = REF(in->b);
    int sh = 8 - (int)in->imm2;
    for (uint32_t i = 0; i < in->n; i++) {
        int x = (int8_t)(uint8_t)(a[i] << sh) >> sh, y = (int8_t)(uint8_t)(b[i] << sh) >> sh;
        bool r = false;
        switch (in->imm) {
        case 0: r = x < y; break;
        case 1: r = x <= y; break;
        case 2: r = x > y; break;
        default: r = x >= y; break;
        }
        d[i] = r;
    }
    return EMU_NEXT;
}

static const char *const preds[] = {"lt", "le", "gt", "ge", "eq", "ne", "ult", "ule", "ugt", "uge"};
#define PRED_ROW(N) {lt_##N, le_##N, gt_##N, ge_##N, eq_##N, ne_##N, ult_##N, ule_##N, ugt_##N, uge_##N}
static const emu_fn cmp_table[4][10] = {PRED_ROW(1), PRED_ROW(2), PRED_ROW(4), PRED_ROW(8)};

emu_fn emu_cmp_fn(const char *pred, uint32_t bytes, bool small_signed) {
    int col = bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : bytes == 8 ? 3 : -1;
    for (int p = 0; pred && col >= 0 && p < 10; p++)
        if (strcmp(pred, preds[p]) == 0) return small_signed && p < 4 ? cmp_small : cmp_table[col][p];
    return NULL;
}

/* ---- select ------------------------------------------------------------------------ */
/* select: a = i1 condition per lane, b/c = choices of es bytes per lane. */
int emu_h_select(emu_wave *w, const emu_ins *in) {
    const uint8_t *cond = REF(in->a);
    const uint8_t *t = REF(in->b), *f = REF(in->c);
    uint8_t *d = REF(in->d);
    uint32_t es = in->es, W = w->W;
    switch (es) {
    case 4:
        for (uint32_t l = 0; l < W; l++) ((uint32_t *)d)[l] = cond[l] ? ((const uint32_t *)t)[l] : ((const uint32_t *)f)[l];
        break;
    case 8:
        for (uint32_t l = 0; l < W; l++) ((uint64_t *)d)[l] = cond[l] ? ((const uint64_t *)t)[l] : ((const uint64_t *)f)[l];
        break;
    case 2:
        for (uint32_t l = 0; l < W; l++) ((uint16_t *)d)[l] = cond[l] ? ((const uint16_t *)t)[l] : ((const uint16_t *)f)[l];
        break;
    default:
        for (uint32_t l = 0; l < W; l++) memcpy(d + (size_t)l * es, (cond[l] ? t : f) + (size_t)l * es, es);
        break;
    }
    return EMU_NEXT;
}

/* vector.select: a = vec<i1> mask, one condition per element of es bytes. */
int emu_h_vselect(emu_wave *w, const emu_ins *in) {
    const uint8_t *cond = REF(in->a);
    const uint8_t *t = REF(in->b), *f = REF(in->c);
    uint8_t *d = REF(in->d);
    for (uint32_t i = 0; i < in->n; i++) memcpy(d + (size_t)i * in->es, (cond[i] ? t : f) + (size_t)i * in->es, in->es);
    return EMU_NEXT;
}

int emu_h_umulhi(emu_wave *w, const emu_ins *in) {
    uint32_t *d = REF(in->d);
    const uint32_t *a = REF(in->a), *b = REF(in->b);
    for (uint32_t i = 0; i < in->n; i++) d[i] = (uint32_t)(((uint64_t)a[i] * b[i]) >> 32);
    return EMU_NEXT;
}
