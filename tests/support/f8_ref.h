/* rocke tests — an independent model of the four 8-bit float encodings
 * (OCP e4m3fn/e5m2, FNUZ e4m3/e5m2), written from the format definitions
 * rather than from src/base/fp8.c, for tests that check rocke's conversions
 * (emulator, lowering) against it. */
#ifndef ROCKE_TESTS_F8_REF_H
#define ROCKE_TESTS_F8_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "rocke/ir.h"

typedef struct tf8 {
    rk_scalar s;
    const char *tag;        /* "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz" */
    int m, bias;            /* mantissa bits, exponent bias */
    bool fnuz, e5ocp;       /* e5ocp: OCP e5m2, whose NaN is S.11111.10 */
    unsigned maxcode;       /* largest finite magnitude code */
} tf8;

/* OCP e4m3, OCP e5m2, FNUZ e4m3, FNUZ e5m2, in that order */
extern const tf8 TF8[4];

/* Value of a positive code; maxcode + 1 gives the next binade's first value. */
double tf8_val(const tf8 *f, unsigned c);
/* Nearest-even encode by search over the codes, saturating to the largest
 * finite value; NaN keeps its sign on OCP, FNUZ has one NaN and no -0. */
uint8_t tf8_encode(const tf8 *f, double x);

#endif
