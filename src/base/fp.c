/* rocke — 16-bit float conversions (see fp.h). Layer: base. */
#include <math.h>

#include "fp.h"

/* Round a finite or special double to a binary format with `mbits` stored
 * mantissa bits and exponent bias `bias` (IEEE layout: inf = all-ones
 * exponent), returning sign|exp|mantissa bits. Exact RNE, subnormals kept. */
static uint32_t round_ieee(double d, int ebits, int mbits) {
    uint64_t u = rk_f64_bits(d);
    uint32_t sign = (uint32_t)(u >> 63) << (ebits + mbits);
    uint32_t emax = (1u << ebits) - 1u;
    int bias = (int)(emax >> 1);
    if (isnan(d)) {
        uint32_t payload = (uint32_t)((u >> (52 - mbits)) & ((1u << mbits) - 1u));
        return sign | (emax << mbits) | (1u << (mbits - 1)) | payload;
    }
    double a = fabs(d);
    if (a == 0.0) return sign;
    if (isinf(d)) return sign | (emax << mbits);
    int e;
    frexp(a, &e);                 /* a = m * 2^e, m in [0.5, 1) */
    int exp = e - 1;              /* a = 1.x * 2^exp */
    int emin = 1 - bias;
    /* quantum: 2^(exp - mbits) for normals, 2^(emin - mbits) for subnormals */
    int q = (exp < emin ? emin : exp) - mbits;
    double scaled = ldexp(a, -q); /* exact: a has 53 bits, scaling by a power of 2 */
    double r = nearbyint(scaled); /* current rounding mode is nearest-even */
    uint64_t m = (uint64_t)r;     /* integer mantissa including the hidden bit */
    /* renormalise after rounding up to the next binade */
    if (m >= (2ull << mbits)) { m >>= 1; q++; }
    int biased;
    if (m < (1ull << mbits)) biased = 0;           /* subnormal (or rounded to 0) */
    else biased = q + mbits + bias;
    if (biased >= (int)emax) return sign | (emax << mbits);   /* overflow -> inf */
    return sign | ((uint32_t)biased << mbits) | (uint32_t)(m & ((1ull << mbits) - 1u));
}

uint16_t rk_f64_to_f16(double d) { return (uint16_t)round_ieee(d, 5, 10); }
uint16_t rk_f32_to_f16(float f) { return (uint16_t)round_ieee((double)f, 5, 10); }
uint16_t rk_f64_to_bf16(double d) { return (uint16_t)round_ieee(d, 8, 7); }
uint16_t rk_f32_to_bf16(float f) { return (uint16_t)round_ieee((double)f, 8, 7); }

float rk_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f) return rk_bits_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    return rk_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

float rk_bf16_to_f32(uint16_t h) { return rk_bits_f32((uint32_t)h << 16); }
