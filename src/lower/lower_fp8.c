/* rocke — 8-bit float conversions in plain integer/float LLVM IR, for
 * targets whose hardware has none (gfx90a; sm_80 for the NVPTX lowering).
 * One parameterized sequence covers the four encodings: OCP e4m3fn (bias 7,
 * max 448, NaN S.1111.111, no inf), OCP e5m2 (bias 15, IEEE-like inf/NaN),
 * FNUZ e4m3 (bias 8, max 240) and FNUZ e5m2 (bias 16, max 57344); the FNUZ
 * forms have one NaN (0x80), no inf and no negative zero. Encoding follows
 * src/base/fp8.h (the emulator's reference): NaN becomes S.1111.111 (e4m3),
 * S.11111.10 (e5m2) or 0x80 (FNUZ); +-inf saturates like any overflow.
 * Layer: lower. */
#include <math.h>
#include <stdio.h>

#include "lower_int.h"

typedef struct f8fmt {
    int m, bias;           /* mantissa bits, exponent bias */
    unsigned maxcode;      /* largest finite magnitude code */
    unsigned nan;          /* the NaN an encode gives (sign added on OCP) */
    bool fnuz;             /* NaN = 0x80 only, no -0, no inf */
    bool ieee;             /* e5m2 OCP: exponent all-ones is inf/NaN */
} f8fmt;

static f8fmt fmt_of(rk_scalar s) {
    switch (s) {
    case RK_S_FP8E4M3: return (f8fmt){3, 7, 0x7E, 0x7F, false, false};
    case RK_S_BF8E5M2: return (f8fmt){2, 15, 0x7B, 0x7E, false, true};
    case RK_S_FP8E4M3FNUZ: return (f8fmt){3, 8, 0x7F, 0x80, true, false};
    case RK_S_BF8E5M2FNUZ: return (f8fmt){2, 16, 0x7F, 0x80, true, false};
    default: rk_bug("software fp8 conversion of a non-8-bit-float type");
    }
}

static const char *f32(lw_ctx *cx, double v) { return lw_float_lit(cx, RK_T_F32, v); }

/* bits: normal codes shift the magnitude under the f32 exponent and rebias;
 * subnormal codes are m * 2^(1-bias-M), exact in f32. */
void lw_f8_decode(lw_ctx *cx, rk_scalar fs, const char *into, const char *byte) {
    f8fmt f = fmt_of(fs);
    const char *z = lw_tmp(cx, "f8.z"), *x = lw_tmp(cx, "f8.x"), *s = lw_tmp(cx, "f8.s"), *s32 = lw_tmp(cx, "f8.s32"),
               *e = lw_tmp(cx, "f8.e"), *nb = lw_tmp(cx, "f8.nb"), *nr = lw_tmp(cx, "f8.nr"), *m = lw_tmp(cx, "f8.m"),
               *mf = lw_tmp(cx, "f8.mf"), *sub = lw_tmp(cx, "f8.sub"), *sb = lw_tmp(cx, "f8.sb"),
               *is = lw_tmp(cx, "f8.issub"), *mag = lw_tmp(cx, "f8.mag"), *bits = lw_tmp(cx, "f8.bits");
    lw_ins(cx, "%s = zext i8 %s to i32", z, byte);
    lw_ins(cx, "%s = and i32 %s, 127", x, z);
    lw_ins(cx, "%s = and i32 %s, 128", s, z);
    lw_ins(cx, "%s = shl i32 %s, 24", s32, s);
    lw_ins(cx, "%s = lshr i32 %s, %d", e, x, f.m);
    lw_ins(cx, "%s = shl i32 %s, %d", nb, x, 23 - f.m);
    lw_ins(cx, "%s = add i32 %s, %d", nr, nb, (127 - f.bias) << 23);
    lw_ins(cx, "%s = and i32 %s, %d", m, x, (1 << f.m) - 1);
    lw_ins(cx, "%s = uitofp i32 %s to float", mf, m);
    lw_ins(cx, "%s = fmul float %s, %s", sub, mf, f32(cx, ldexp(1.0, 1 - f.bias - f.m)));
    lw_ins(cx, "%s = bitcast float %s to i32", sb, sub);
    lw_ins(cx, "%s = icmp eq i32 %s, 0", is, e);
    lw_ins(cx, "%s = select i1 %s, i32 %s, i32 %s", mag, is, sb, nr);
    if (f.ieee) {
        const char *inf = lw_tmp(cx, "f8.isinf"), *nan = lw_tmp(cx, "f8.isnan"), *m1 = lw_tmp(cx, "f8.mag"),
                   *m2 = lw_tmp(cx, "f8.mag");
        lw_ins(cx, "%s = icmp eq i32 %s, %d", inf, x, 0x7F >> f.m << f.m);
        lw_ins(cx, "%s = icmp ugt i32 %s, %d", nan, x, 0x7F >> f.m << f.m);
        lw_ins(cx, "%s = select i1 %s, i32 2139095040, i32 %s", m1, inf, mag);
        lw_ins(cx, "%s = select i1 %s, i32 2143289344, i32 %s", m2, nan, m1);
        mag = m2;
    } else if (!f.fnuz) {
        const char *nan = lw_tmp(cx, "f8.isnan"), *m1 = lw_tmp(cx, "f8.mag");
        lw_ins(cx, "%s = icmp eq i32 %s, 127", nan, x);
        lw_ins(cx, "%s = select i1 %s, i32 2143289344, i32 %s", m1, nan, mag);
        mag = m1;
    }
    lw_ins(cx, "%s = or i32 %s, %s", bits, mag, s32);
    if (f.fnuz) {
        const char *nan = lw_tmp(cx, "f8.isnan"), *b2 = lw_tmp(cx, "f8.bits");
        lw_ins(cx, "%s = icmp eq i32 %s, 128", nan, z);
        lw_ins(cx, "%s = select i1 %s, i32 2143289344, i32 %s", b2, nan, bits);
        bits = b2;
    }
    lw_ins(cx, "%s = bitcast i32 %s to float", into, bits);
}

/* |x| below the smallest normal: rint(|x| * 2^(bias+M-1)) is the code (2^M
 * rounds up into the first normal). Otherwise round the f32 bits to M
 * mantissa bits (add half-1 plus the kept lsb, shift) and rebias. Then
 * clamp to the largest finite code and put the sign (or NaN) back. */
void lw_f8_encode(lw_ctx *cx, rk_scalar fs, const char *into, const char *fv) {
    f8fmt f = fmt_of(fs);
    int sh = 23 - f.m;
    lw_declare(cx, LW_D_RINT, "declare float @llvm.rint.f32(float)");
    lw_declare(cx, LW_D_UMIN, "declare i32 @llvm.umin.i32(i32, i32)");
    const char *fb = lw_tmp(cx, "f8.fb"), *a = lw_tmp(cx, "f8.a"), *hs = lw_tmp(cx, "f8.hs"), *s8 = lw_tmp(cx, "f8.s8"),
               *af = lw_tmp(cx, "f8.af"), *sc = lw_tmp(cx, "f8.sc"), *sr = lw_tmp(cx, "f8.sr"), *si = lw_tmp(cx, "f8.si"),
               *ls = lw_tmp(cx, "f8.ls"), *lsb = lw_tmp(cx, "f8.lsb"), *r1 = lw_tmp(cx, "f8.r"), *r2 = lw_tmp(cx, "f8.r"),
               *nc = lw_tmp(cx, "f8.nc"), *nc2 = lw_tmp(cx, "f8.nc"), *is = lw_tmp(cx, "f8.issub"),
               *code = lw_tmp(cx, "f8.code"), *sat = lw_tmp(cx, "f8.sat"), *nan = lw_tmp(cx, "f8.isnan"),
               *res = lw_tmp(cx, "f8.res");
    lw_ins(cx, "%s = bitcast float %s to i32", fb, fv);
    lw_ins(cx, "%s = and i32 %s, 2147483647", a, fb);
    lw_ins(cx, "%s = lshr i32 %s, 24", hs, fb);
    lw_ins(cx, "%s = and i32 %s, 128", s8, hs);
    lw_ins(cx, "%s = bitcast i32 %s to float", af, a);
    lw_ins(cx, "%s = fmul float %s, %s", sc, af, f32(cx, ldexp(1.0, f.bias + f.m - 1)));
    lw_ins(cx, "%s = call float @llvm.rint.f32(float %s)", sr, sc);
    /* poison for large |x|, but only selected below the smallest normal */
    lw_ins(cx, "%s = fptoui float %s to i32", si, sr);
    lw_ins(cx, "%s = lshr i32 %s, %d", ls, a, sh);
    lw_ins(cx, "%s = and i32 %s, 1", lsb, ls);
    lw_ins(cx, "%s = add i32 %s, %d", r1, a, (1 << (sh - 1)) - 1);
    lw_ins(cx, "%s = add i32 %s, %s", r2, r1, lsb);
    lw_ins(cx, "%s = lshr i32 %s, %d", nc, r2, sh);
    lw_ins(cx, "%s = sub i32 %s, %d", nc2, nc, (127 - f.bias) << f.m);
    lw_ins(cx, "%s = icmp ult i32 %s, %d", is, a, (128 - f.bias) << 23);
    lw_ins(cx, "%s = select i1 %s, i32 %s, i32 %s", code, is, si, nc2);
    lw_ins(cx, "%s = call i32 @llvm.umin.i32(i32 %s, i32 %u)", sat, code, f.maxcode);
    lw_ins(cx, "%s = icmp ugt i32 %s, 2139095040", nan, a);
    if (f.fnuz) {
        const char *zero = lw_tmp(cx, "f8.zero"), *sg = lw_tmp(cx, "f8.sg"), *r = lw_tmp(cx, "f8.res");
        lw_ins(cx, "%s = icmp eq i32 %s, 0", zero, sat);
        lw_ins(cx, "%s = select i1 %s, i32 0, i32 %s", sg, zero, s8);
        lw_ins(cx, "%s = or i32 %s, %s", r, sat, sg);
        lw_ins(cx, "%s = select i1 %s, i32 %u, i32 %s", res, nan, f.nan, r);
    } else {
        const char *c2 = lw_tmp(cx, "f8.code");
        lw_ins(cx, "%s = select i1 %s, i32 %u, i32 %s", c2, nan, f.nan, sat);
        lw_ins(cx, "%s = or i32 %s, %s", res, c2, s8);
    }
    lw_ins(cx, "%s = trunc i32 %s to i8", into, res);
}

static rk_scalar elem_of(const lw_ctx *cx, rk_value v) {
    rk_type t = rk_value_type(cx->k, v);
    if (rk_type_kind_of(cx->k, t) == RK_TK_VEC) t = rk_type_elem(cx->k, t);
    return rk_type_scalar(t);
}

void lw_f8_pk_sw(lw_ctx *cx, const rk_op *op, bool decode) {
    rk_scalar fs = elem_of(cx, decode ? op->in[0] : op->out[0]);
    const char *acc = "poison", *ety = decode ? "float" : "i8";
    for (unsigned i = 0; i < 4; i++) {
        const char *x = lw_tmp(cx, "elt"), *y = lw_tmp(cx, decode ? "f8.f" : "f8.b");
        lw_ins(cx, "%s = extractelement %V, i32 %u", x, op->in[0], i);
        if (decode) lw_f8_decode(cx, fs, y, x);
        else lw_f8_encode(cx, fs, y, x);
        if (i == 3) {
            lw_ins(cx, "%v = insertelement %t %s, %s %s, i32 3", op->out[0], op->out[0], acc, ety, y);
        } else {
            const char *n = lw_tmp(cx, "ins");
            lw_ins(cx, "%s = insertelement %t %s, %s %s, i32 %u", n, op->out[0], acc, ety, y, i);
            acc = n;
        }
    }
}
