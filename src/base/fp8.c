/* rocke — 8-bit float decode/encode (see fp8.h for the exact rules).
 * Layer: base. */
#include <math.h>

#include "fp.h"
#include "fp8.h"

typedef struct fmt {
    int mbits, bias;
    uint8_t maxmag;      /* code of the largest finite magnitude (sign clear) */
    int fnuz;            /* no -0, NaN only at 0x80 */
    int has_inf;         /* OCP e5m2 decodes S.11111.00 as inf */
} fmt;

static const fmt fmts[] = {
    [RK_FP8_E4M3] = {3, 7, 0x7e, 0, 0},
    [RK_FP8_E5M2] = {2, 15, 0x7b, 0, 1},
    [RK_FP8_E4M3_FNUZ] = {3, 8, 0x7f, 1, 0},
    [RK_FP8_E5M2_FNUZ] = {2, 16, 0x7f, 1, 0},
};

static float qnan(uint32_t sign) { return rk_bits_f32((sign << 31) | 0x7fc00000u); }

float rk_fp8_to_f32(uint8_t v, rk_fp8_format f) {
    const fmt *F = &fmts[f];
    uint32_t sign = v >> 7, mag = v & 0x7fu;
    if (F->fnuz && v == 0x80) return qnan(0);
    uint32_t e = mag >> F->mbits, m = mag & ((1u << F->mbits) - 1u);
    uint32_t emax = (1u << (7 - F->mbits)) - 1u;
    if (!F->fnuz) {
        if (f == RK_FP8_E4M3 && mag == 0x7f) return qnan(sign);
        if (F->has_inf && e == emax) return m ? qnan(sign) : (sign ? -INFINITY : INFINITY);
    }
    /* every fp8 value is exact in float: m * 2^(e - bias - mbits) (subnormal: e = 1, no hidden bit) */
    float val = e ? ldexpf((float)(m | (1u << F->mbits)), (int)e - F->bias - F->mbits)
                  : ldexpf((float)m, 1 - F->bias - F->mbits);
    return sign ? -val : val;
}

/* Round |x| (finite, non-zero) to nearest-even on the grid of the format;
 * returns the magnitude code, or 0xff when it is beyond max finite. */
static uint32_t round_mag(double a, const fmt *F) {
    int e2;
    frexp(a, &e2);                          /* a = [0.5, 1) * 2^e2 */
    int exp = e2 - 1, emin = 1 - F->bias;
    int q = (exp < emin ? emin : exp) - F->mbits;   /* quantum 2^q */
    double s = ldexp(a, -q);                /* exact: scaling by a power of two */
    double fl = floor(s), frac = s - fl;    /* frac exact: s has at most 53 bits */
    if (frac > 0.5 || (frac == 0.5 && fmod(fl, 2.0) != 0.0)) fl += 1.0;
    if (fl > 64.0) return 0xff;             /* far beyond any fp8 grid (avoid overflow of m) */
    uint32_t m = (uint32_t)fl;
    if (m >= (2u << F->mbits)) { m >>= 1; q++; }   /* rounded up into the next binade */
    if (m == 0) return 0;
    uint32_t biased = m < (1u << F->mbits) ? 0u : (uint32_t)(q + F->mbits + F->bias);
    if (biased > (0x7fu >> F->mbits)) return 0xff;
    uint32_t code = (biased << F->mbits) | (m & ((1u << F->mbits) - 1u));
    return code > F->maxmag ? 0xff : code;
}

uint8_t rk_f64_to_fp8_nan(double x, rk_fp8_format f, rk_fp8_nan style) {
    const fmt *F = &fmts[f];
    uint32_t sign = signbit(x) ? 0x80u : 0u;
    if (isnan(x)) {
        if (F->fnuz) return 0x80;
        if (style == RK_FP8_NAN_CANONICAL) return 0x7f;
        return (uint8_t)(sign | (f == RK_FP8_E4M3 ? 0x7fu : 0x7eu));
    }
    uint32_t mag;
    if (isinf(x)) mag = 0xff;
    else if (x == 0.0) mag = 0;
    else mag = round_mag(fabs(x), F);
    if (mag == 0xff) mag = F->maxmag;       /* saturate */
    if (mag == 0 && F->fnuz) return 0;       /* FNUZ: 0x80 is NaN, so zero is unsigned */
    return (uint8_t)(sign | mag);
}

uint8_t rk_f64_to_fp8(double x, rk_fp8_format f) { return rk_f64_to_fp8_nan(x, f, RK_FP8_NAN_SIGNED); }
uint8_t rk_f32_to_fp8(float x, rk_fp8_format f) { return rk_f64_to_fp8_nan((double)x, f, RK_FP8_NAN_SIGNED); }

float rk_fp8_max(rk_fp8_format f) { return rk_fp8_to_f32(fmts[f].maxmag, f); }
