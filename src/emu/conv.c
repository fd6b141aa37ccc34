/* rocke — emulator handlers for conversions, all bit exact: integer
 * extend/truncate, int <-> float (one rounding, to nearest even; float -> int
 * truncates and reports out-of-range active lanes, which LLVM calls poison),
 * float <-> float, fp8/bf8 in both dialects (base/fp8.h), the saturating
 * f32 -> i8 conversions and gfx950's power-of-two scaled fp8 conversions.
 * Layer: emu. */
#include <math.h>

#include "emu_int.h"

#define RESTRICT restrict

/* ---- fast paths for the conversions hot loops use ------------------------------------ */
#define CONV(name, S, D, expr)                                                           \
    static int name(emu_wave *w, const emu_ins *in) {                                    \
        D *RESTRICT d = REF(in->d);                                                      \
        const S *RESTRICT a = REF(in->a);                                                \
        for (uint32_t i = 0, n = in->n; i < n; i++) { S x = a[i]; d[i] = (D)(expr); }    \
        return EMU_NEXT;                                                                 \
    }
CONV(h_to_f, uint16_t, float, emu_h2f(x))
CONV(b_to_f, uint16_t, float, emu_b2f(x))
CONV(f_to_h, float, uint16_t, emu_f2h(x))
CONV(f_to_b, float, uint16_t, emu_f2b(x))
CONV(f_to_d, float, double, (double)x)
CONV(d_to_f, double, float, (float)x)
CONV(i32_to_f, int32_t, float, (float)x)
CONV(u32_to_f, uint32_t, float, (float)x)
CONV(sext_32_64, int32_t, int64_t, x)
CONV(zext_32_64, uint32_t, uint64_t, x)
CONV(trunc_64_32, uint64_t, uint32_t, x)
CONV(rint_f, float, float, rintf(x))

/* ---- generic element access ----------------------------------------------------------- */
/* Integers read as int64 (sign- or zero-extended from their bits), floats as
 * double (exact for every float type here). */
static int64_t ld_int(rk_scalar s, const void *p, uint32_t i, bool sign) {
    switch (s) {
    case RK_S_I1: { uint8_t v = ((const uint8_t *)p)[i] & 1u; return sign && v ? -1 : v; }
    case RK_S_I4: { uint8_t v = ((const uint8_t *)p)[i] & 15u; return sign && v >= 8 ? (int64_t)v - 16 : v; }
    case RK_S_I8: return sign ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
    case RK_S_I16: return sign ? ((const int16_t *)p)[i] : ((const uint16_t *)p)[i];
    case RK_S_I32: return sign ? ((const int32_t *)p)[i] : (int64_t)((const uint32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}
static void st_int(rk_scalar s, void *p, uint32_t i, uint64_t v) {
    switch (s) {
    case RK_S_I1: ((uint8_t *)p)[i] = (uint8_t)(v & 1u); break;
    case RK_S_I4: ((uint8_t *)p)[i] = (uint8_t)(v & 15u); break;
    case RK_S_I8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case RK_S_I16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case RK_S_I32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    default: ((uint64_t *)p)[i] = v; break;
    }
}
static double ld_f(rk_scalar s, const void *p, uint32_t i) {
    switch (s) {
    case RK_S_F16: return emu_h2f(((const uint16_t *)p)[i]);
    case RK_S_BF16: return emu_b2f(((const uint16_t *)p)[i]);
    case RK_S_F32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}
/* Store the exact value v rounded once (RNE) to the float type s. */
static void st_f(rk_scalar s, void *p, uint32_t i, double v) {
    switch (s) {
    case RK_S_F16: ((uint16_t *)p)[i] = rk_f64_to_f16(v); break;
    case RK_S_BF16: ((uint16_t *)p)[i] = rk_f64_to_bf16(v); break;
    case RK_S_F32: ((float *)p)[i] = (float)v; break;
    default: ((double *)p)[i] = v; break;
    }
}

/* An integer as a double that rounds like the integer itself would: exact
 * below 2^53; above, the bits shifted out are folded into a sticky bit
 * (round to odd), so the one later rounding to <= 51 bits is still correct. */
static double int_as_double(uint64_t mag, bool neg) {
    int lz = mag ? __builtin_clzll(mag) : 64, sh = 64 - lz - 53;
    double d;
    if (sh > 0) {
        uint64_t t = (mag >> sh) | ((mag & ((1ull << sh) - 1u)) != 0);
        d = ldexp((double)t, sh);
    } else {
        d = (double)mag;
    }
    return neg ? -d : d;
}

/* ---- the generic converter --------------------------------------------------------------- */
static int conv_generic(emu_wave *w, const emu_ins *in) {
    void *d = REF(in->d);
    const void *a = REF(in->a);
    rk_scalar sa = in->sa, sd = in->sd;
    uint32_t dbits = rk_scalar_bits(sd);
    for (uint32_t i = 0; i < in->n; i++) {
        switch (in->imm) {
        case EMU_CV_SEXT: st_int(sd, d, i, (uint64_t)ld_int(sa, a, i, true)); break;
        case EMU_CV_ZEXT: st_int(sd, d, i, (uint64_t)ld_int(sa, a, i, false)); break;
        case EMU_CV_SITOFP: {
            int64_t v = ld_int(sa, a, i, true);
            uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
            if (sd == RK_S_F32) ((float *)d)[i] = (float)v;          /* C converts with one rounding */
            else if (sd == RK_S_F64) ((double *)d)[i] = (double)v;
            else st_f(sd, d, i, int_as_double(mag, v < 0));
            break;
        }
        case EMU_CV_UITOFP: {
            uint64_t v = (uint64_t)ld_int(sa, a, i, false);
            if (sd == RK_S_F32) ((float *)d)[i] = (float)v;
            else if (sd == RK_S_F64) ((double *)d)[i] = (double)v;
            else st_f(sd, d, i, int_as_double(v, false));
            break;
        }
        case EMU_CV_FPTOSI:
        case EMU_CV_FPTOUI: {
            double x = ld_f(sa, a, i), t = trunc(x);
            bool sgn = in->imm == EMU_CV_FPTOSI;
            double lo = sgn ? -ldexp(1.0, (int)dbits - 1) : 0.0;
            double hi = sgn ? ldexp(1.0, (int)dbits - 1) : ldexp(1.0, (int)dbits);   /* exclusive */
            uint32_t lane = i / in->m;
            if (!emu_active(w, lane)) { st_int(sd, d, i, 0); break; }
            if (isnan(x) || t < lo || t >= hi)
                return emu_fail(w, in, (int)lane, "%s of %.17g does not fit in %s (poison)",
                                sgn ? "fptosi" : "fptoui", x, rk_scalar_name(sd));
            st_int(sd, d, i, sgn ? (uint64_t)(int64_t)t : (uint64_t)t);
            break;
        }
        case EMU_CV_FTOF: st_f(sd, d, i, ld_f(sa, a, i)); break;
        case EMU_CV_F8DEC: ((float *)d)[i] = rk_fp8_to_f32(((const uint8_t *)a)[i], emu_fp8_format(sa)); break;
        case EMU_CV_F8ENC:
            ((uint8_t *)d)[i] = rk_f64_to_fp8_nan(((const float *)a)[i], emu_fp8_format(sd), (rk_fp8_nan)in->imm2);
            break;
        case EMU_CV_I8SAT: {
            /* rint (ties to even), clamp to [-128, 127]; NaN gives 0 as AMD's
             * v_cvt_i32_f32 and PTX cvt.rni.sat do */
            float x = ((const float *)a)[i], r = rintf(x);
            int v = isnan(x) ? 0 : r <= -128.0f ? -128 : r >= 127.0f ? 127 : (int)r;
            ((uint8_t *)d)[i] = (uint8_t)(int8_t)v;
            break;
        }
        default: rk_bug("conversion mode without a generic path");
        }
    }
    return EMU_NEXT;
}

/* The converter for mode (EMU_CV_*) from element sa to sd; the instruction's
 * imm must hold the mode (conv_generic reads it). */
emu_fn emu_conv_fn(int mode, rk_scalar sa, rk_scalar sd) {
    if (mode == EMU_CV_RINT) return rint_f;
    if (mode == EMU_CV_SEXT && sa == RK_S_I32 && sd == RK_S_I64) return sext_32_64;
    if (mode == EMU_CV_ZEXT && sa == RK_S_I32 && sd == RK_S_I64) return zext_32_64;
    if (mode == EMU_CV_ZEXT && sa == RK_S_I64 && sd == RK_S_I32) return trunc_64_32;
    if (mode == EMU_CV_SITOFP && sa == RK_S_I32 && sd == RK_S_F32) return i32_to_f;
    if (mode == EMU_CV_UITOFP && sa == RK_S_I32 && sd == RK_S_F32) return u32_to_f;
    if (mode == EMU_CV_FTOF) {
        if (sa == RK_S_F16 && sd == RK_S_F32) return h_to_f;
        if (sa == RK_S_BF16 && sd == RK_S_F32) return b_to_f;
        if (sa == RK_S_F32 && sd == RK_S_F16) return f_to_h;
        if (sa == RK_S_F32 && sd == RK_S_BF16) return f_to_b;
        if (sa == RK_S_F32 && sd == RK_S_F64) return f_to_d;
        if (sa == RK_S_F64 && sd == RK_S_F32) return d_to_f;
    }
    return conv_generic;
}

/* ---- gfx950 scaled fp8 conversions ------------------------------------------------------ */
/* The scale operand is an f32 of which only the exponent field counts (E8M0:
 * 2^(e - 127)); e = 255 gives NaN (with the input's sign, as AMD's host
 * model). Decode multiplies, encode divides, each exactly in double before
 * the one rounding, which saturates like every encode. a = vec<f8x4>/
 * vec<f32x4>, b = f32 scale per lane, m = 4; encoders take the NaN style in
 * imm2. */
static int scale_exp(float s) { return (int)((rk_f32_bits(s) >> 23) & 0xffu); }

int emu_h_scale_decode(emu_wave *w, const emu_ins *in) {
    const uint8_t *a = REF(in->a);
    const float *sc = REF(in->b);
    float *d = REF(in->d);
    rk_fp8_format f = emu_fp8_format(in->sa);
    for (uint32_t i = 0; i < in->n; i++) {
        int e = scale_exp(sc[i / in->m]);
        d[i] = e == 255 ? NAN : (float)ldexp((double)rk_fp8_to_f32(a[i], f), e - 127);
    }
    return EMU_NEXT;
}

int emu_h_scale_encode(emu_wave *w, const emu_ins *in) {
    const float *a = REF(in->a), *sc = REF(in->b);
    uint8_t *d = REF(in->d);
    rk_fp8_format f = emu_fp8_format(in->sd);
    for (uint32_t i = 0; i < in->n; i++) {
        int e = scale_exp(sc[i / in->m]);
        double x = a[i];
        d[i] = rk_f64_to_fp8_nan(e == 255 ? copysign(NAN, x) : ldexp(x, 127 - e), f, (rk_fp8_nan)in->imm2);
    }
    return EMU_NEXT;
}
