/* rocke — bit-exact conversions between f32/f64 and the 16-bit float
 * formats (round to nearest even), shared by constant folding, the emulator,
 * the lowerings and host references. Layer: base. */
#ifndef ROCKE_FP_H
#define ROCKE_FP_H

#include <stdint.h>
#include <string.h>

static inline uint32_t rk_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float rk_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t rk_f64_bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline double rk_bits_f64(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

uint16_t rk_f32_to_f16(float f);      /* RNE; overflow -> inf; NaN stays NaN (quiet) */
float rk_f16_to_f32(uint16_t h);
uint16_t rk_f64_to_f16(double d);     /* RNE from double, no double rounding */
uint16_t rk_f32_to_bf16(float f);     /* RNE; NaN stays NaN (quiet) */
float rk_bf16_to_f32(uint16_t h);
uint16_t rk_f64_to_bf16(double d);

#endif
