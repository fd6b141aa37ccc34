/* rocke tests — the 8-bit float model of f8_ref.h. */
#include <math.h>

#include "support/f8_ref.h"

const tf8 TF8[4] = {
    {RK_S_FP8E4M3, "e4m3", 3, 7, false, false, 0x7e},
    {RK_S_BF8E5M2, "e5m2", 2, 15, false, true, 0x7b},
    {RK_S_FP8E4M3FNUZ, "e4m3fnuz", 3, 8, true, false, 0x7f},
    {RK_S_BF8E5M2FNUZ, "e5m2fnuz", 2, 16, true, false, 0x7f},
};

double tf8_val(const tf8 *f, unsigned c) {
    unsigned e = c >> f->m, mm = c & ((1u << f->m) - 1u);
    return e ? ldexp(1.0 + ldexp(mm, -f->m), (int)e - f->bias) : ldexp(mm, 1 - f->bias - f->m);
}

uint8_t tf8_encode(const tf8 *f, double x) {
    unsigned sign = signbit(x) ? 0x80u : 0u;
    if (isnan(x)) return f->fnuz ? 0x80 : (uint8_t)(sign | (f->e5ocp ? 0x7eu : 0x7fu));
    double a = fabs(x), bd = INFINITY;
    unsigned best = f->maxcode;
    if (a < tf8_val(f, f->maxcode))
        for (unsigned c = 0; c <= f->maxcode; c++) {
            double d = fabs(tf8_val(f, c) - a);
            if (d < bd || (d == bd && !(c & 1))) { bd = d; best = c; }
        }
    if (f->fnuz && best == 0) return 0;
    return (uint8_t)(sign | best);
}
