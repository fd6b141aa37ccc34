/* rocke — number formatting that must be byte-stable across platforms:
 * the shortest round-trip repr of a double in Python's style. Layer: base. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base_int.h"

int rk_fmt_double_repr(char out[32], double v) {
    if (isnan(v)) return snprintf(out, 32, "nan");
    if (isinf(v)) return snprintf(out, 32, v < 0 ? "-inf" : "inf");
    char sci[40];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
        if (strtod(sci, NULL) == v) break;
    }
    /* sci = [-]d[.ddd]e[+-]xx: split into digits and exponent */
    const char *p = sci;
    bool neg = *p == '-';
    if (neg) p++;
    char digits[20];
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.') digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    int exp10 = atoi(p + 1);
    int decpt = exp10 + 1;
    char *o = out;
    if (neg) *o++ = '-';
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            *o++ = '0'; *o++ = '.';
            for (int i = 0; i < -decpt; i++) *o++ = '0';
            for (int i = 0; i < nd; i++) *o++ = digits[i];
        } else if (decpt >= nd) {
            for (int i = 0; i < nd; i++) *o++ = digits[i];
            for (int i = nd; i < decpt; i++) *o++ = '0';
            *o++ = '.'; *o++ = '0';
        } else {
            for (int i = 0; i < decpt; i++) *o++ = digits[i];
            *o++ = '.';
            for (int i = decpt; i < nd; i++) *o++ = digits[i];
        }
        *o = '\0';
    } else {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            for (int i = 1; i < nd; i++) *o++ = digits[i];
        }
        int e = decpt - 1;
        o += snprintf(o, 12, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    return (int)(o - out);
}
