/* rocke — bit-exact 8-bit float formats: OCP e4m3fn / e5m2 (gfx950, NVIDIA)
 * and the FNUZ variants of gfx942. Decode is exact; encode rounds to nearest
 * even and saturates. Shared by the emulator, constant folding and host
 * references. Layer: base. */
#ifndef ROCKE_FP8_H
#define ROCKE_FP8_H

#include <stdint.h>

typedef enum rk_fp8_format {
    RK_FP8_E4M3,        /* OCP e4m3fn: bias 7, max 448, NaN S.1111.111, no inf, -0 */
    RK_FP8_E5M2,        /* OCP e5m2: bias 15, max 57344, inf S.11111.00, NaN S.11111.{01,10,11} */
    RK_FP8_E4M3_FNUZ,   /* bias 8, max 240, NaN = 0x80 only, no inf, no -0 */
    RK_FP8_E5M2_FNUZ    /* bias 16, max 57344, NaN = 0x80 only, no inf, no -0 */
} rk_fp8_format;

/* Exact value of an 8-bit code (NaN codes give a quiet NaN with the code's
 * sign; FNUZ 0x80 gives a positive quiet NaN). */
float rk_fp8_to_f32(uint8_t code, rk_fp8_format f);

/* Round x to the format, exactly (one rounding from the double's value):
 *   finite x: round to nearest, ties to even, subnormals kept; a result whose
 *             magnitude exceeds the largest finite value becomes +-max finite
 *             (saturation, also for e5m2, which could hold inf);
 *   +-inf:    +-max finite (as PTX cvt.rn.satfinite);
 *   NaN:      OCP e4m3 S.1111.111, OCP e5m2 S.11111.10 (sign kept, as AMD's
 *             HIP host model of gfx950 does), FNUZ 0x80; rk_f64_to_fp8_nan
 *             with RK_FP8_NAN_CANONICAL gives 0x7f for any NaN in both OCP
 *             formats instead (PTX cvt.rn.satfinite, checked on an H200);
 *   zero and results that round to zero: OCP keeps the sign (0x80 = -0), FNUZ
 *             has no -0 and gives 0x00. */
uint8_t rk_f64_to_fp8(double x, rk_fp8_format f);
uint8_t rk_f32_to_fp8(float x, rk_fp8_format f);

typedef enum rk_fp8_nan { RK_FP8_NAN_SIGNED, RK_FP8_NAN_CANONICAL } rk_fp8_nan;
uint8_t rk_f64_to_fp8_nan(double x, rk_fp8_format f, rk_fp8_nan style);

/* Largest finite magnitude (448, 57344, 240, 57344). */
float rk_fp8_max(rk_fp8_format f);

#endif
