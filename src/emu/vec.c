/* rocke — emulator handlers that move vector elements: extract, insert,
 * splat, pack, concat, shuffle, bitcast (with bit packing for i1/i4
 * elements, as LLVM's bitcast of vec<i1xN> packs bits), reductions and
 * the ordered max/min of vector.max/min. Layer: emu. */
#include <math.h>

#include "emu_int.h"

/* vector.extract: d (es bytes per lane) = a[lane*m + imm]. */
int emu_h_vextract(emu_wave *w, const emu_ins *in) {
    const uint8_t *a = REF(in->a);
    uint8_t *d = REF(in->d);
    uint32_t es = in->es, m = in->m;
    for (uint32_t l = 0; l < w->W; l++) memcpy(d + (size_t)l * es, a + ((size_t)l * m + (size_t)in->imm) * es, es);
    return EMU_NEXT;
}

/* vector.insert: d = a with element imm replaced by b. */
int emu_h_vinsert(emu_wave *w, const emu_ins *in) {
    const uint8_t *a = REF(in->a), *b = REF(in->b);
    uint8_t *d = REF(in->d);
    uint32_t es = in->es, m = in->m;
    memcpy(d, a, (size_t)w->W * m * es);
    for (uint32_t l = 0; l < w->W; l++) memcpy(d + ((size_t)l * m + (size_t)in->imm) * es, b + (size_t)l * es, es);
    return EMU_NEXT;
}

int emu_h_vsplat(emu_wave *w, const emu_ins *in) {
    const uint8_t *a = REF(in->a);
    uint8_t *d = REF(in->d);
    uint32_t es = in->es, m = in->m;
    for (uint32_t l = 0; l < w->W; l++)
        for (uint32_t j = 0; j < m; j++) memcpy(d + ((size_t)l * m + j) * es, a + (size_t)l * es, es);
    return EMU_NEXT;
}

/* vector.pack: element j of each lane from operand args[j]. */
int emu_h_vpack(emu_wave *w, const emu_ins *in) {
    uint8_t *d = REF(in->d);
    uint32_t es = in->es, m = in->nargs;
    for (uint32_t j = 0; j < m; j++) {
        const uint8_t *s = REF(in->args[j]);
        for (uint32_t l = 0; l < w->W; l++) memcpy(d + ((size_t)l * m + j) * es, s + (size_t)l * es, es);
    }
    return EMU_NEXT;
}

/* vector.concat: imm elements of a then imm2 of b. */
int emu_h_vconcat(emu_wave *w, const emu_ins *in) {
    const uint8_t *a = REF(in->a), *b = REF(in->b);
    uint8_t *d = REF(in->d);
    size_t na = (size_t)in->imm * in->es, nb = (size_t)in->imm2 * in->es;
    for (uint32_t l = 0; l < w->W; l++) {
        memcpy(d + l * (na + nb), a + l * na, na);
        memcpy(d + l * (na + nb) + na, b + l * nb, nb);
    }
    return EMU_NEXT;
}

/* vector.shuffle: result j = mask[j] < imm ? a[mask[j]] : b[mask[j]-imm];
 * -1 (undef) gives zero bits. */
int emu_h_vshuffle(emu_wave *w, const emu_ins *in) {
    const uint8_t *a = REF(in->a), *b = REF(in->b);
    uint8_t *d = REF(in->d);
    const int32_t *mask = in->aux;
    uint32_t es = in->es, m = in->m, ns = (uint32_t)in->imm;
    for (uint32_t l = 0; l < w->W; l++)
        for (uint32_t j = 0; j < m; j++) {
            uint8_t *dst = d + ((size_t)l * m + j) * es;
            int32_t s = mask[j];
            if (s < 0) memset(dst, 0, es);
            else if ((uint32_t)s < ns) memcpy(dst, a + ((size_t)l * ns + (uint32_t)s) * es, es);
            else memcpy(dst, b + ((size_t)l * ns + (uint32_t)s - ns) * es, es);
        }
    return EMU_NEXT;
}

/* ---- bitcast ----------------------------------------------------------------------- */
/* es / es2 = register bytes per lane of result / operand; imm / imm2 = element
 * bits of result / operand; m / m2 = element counts. Elements narrower than a
 * byte (i1, i4) sit one per register byte but pack densely in the bit image,
 * element 0 in the low bits, as LLVM's bitcast does. */
int emu_h_bitcast(emu_wave *w, const emu_ins *in) {
    const uint8_t *a = REF(in->a);
    uint8_t *d = REF(in->d);
    uint32_t dbits = (uint32_t)in->imm, sbits = (uint32_t)in->imm2;
    if (dbits >= 8 && sbits >= 8) {
        memcpy(d, a, (size_t)w->W * in->es);
        return EMU_NEXT;
    }
    uint32_t ns = in->m2, nd = in->m;
    for (uint32_t l = 0; l < w->W; l++) {
        uint8_t img[512];
        memset(img, 0, sizeof img);
        const uint8_t *s = a + (size_t)l * in->es2;
        for (uint32_t j = 0; j < ns; j++)
            for (uint32_t bit = 0; bit < sbits; bit++) {
                uint32_t sb = sbits >= 8 ? (s[j * (sbits / 8) + bit / 8] >> (bit % 8)) & 1u : (s[j] >> bit) & 1u;
                uint32_t pos = j * sbits + bit;
                img[pos / 8] |= (uint8_t)(sb << (pos % 8));
            }
        uint8_t *o = d + (size_t)l * in->es;
        memset(o, 0, in->es);
        for (uint32_t j = 0; j < nd; j++)
            for (uint32_t bit = 0; bit < dbits; bit++) {
                uint32_t pos = j * dbits + bit, v = (img[pos / 8] >> (pos % 8)) & 1u;
                if (dbits >= 8) o[j * (dbits / 8) + bit / 8] |= (uint8_t)(v << (bit % 8));
                else o[j] |= (uint8_t)(v << bit);
            }
    }
    return EMU_NEXT;
}

/* ---- float element access for reductions ------------------------------------------------ */
static double ld(rk_scalar s, const uint8_t *p, size_t i) {
    switch (s) {
    case RK_S_F16: return emu_h2f(((const uint16_t *)(const void *)p)[i]);
    case RK_S_BF16: return emu_b2f(((const uint16_t *)(const void *)p)[i]);
    case RK_S_F32: return ((const float *)(const void *)p)[i];
    default: return ((const double *)(const void *)p)[i];
    }
}
static void st(rk_scalar s, uint8_t *p, size_t i, double v) {
    switch (s) {
    case RK_S_F16: ((uint16_t *)(void *)p)[i] = emu_f2h((float)v); break;
    case RK_S_BF16: ((uint16_t *)(void *)p)[i] = emu_f2b((float)v); break;
    case RK_S_F32: ((float *)(void *)p)[i] = (float)v; break;
    default: ((double *)(void *)p)[i] = v; break;
    }
}

/* One step of a sum in the element type: an f16/bf16 sum computed in f32 and
 * rounded again is the correctly rounded sum (see float.c). */
static double add_in(rk_scalar s, double acc, double x) {
    switch (s) {
    case RK_S_F16: return emu_h2f(emu_f2h((float)acc + (float)x));
    case RK_S_BF16: return emu_b2f(emu_f2b((float)acc + (float)x));
    case RK_S_F32: return (double)((float)acc + (float)x);
    default: return acc + x;
    }
}

/* vector.sum / reduce_max / reduce_min over m elements per lane, serially
 * from element 0 as the lowering does: sum = ((0 + e0) + e1) + ...; max folds
 * a > b ? a : b starting from e0 (min: a < b ? a : b). imm: 0 sum, 1 max, 2 min. */
int emu_h_vreduce(emu_wave *w, const emu_ins *in) {
    const uint8_t *a = REF(in->a);
    uint8_t *d = REF(in->d);
    rk_scalar s = in->sa;
    uint32_t m = in->m;
    for (uint32_t l = 0; l < w->W; l++) {
        double acc;
        if (in->imm == 0) {
            acc = 0.0;
            for (uint32_t j = 0; j < m; j++) acc = add_in(s, acc, ld(s, a, (size_t)l * m + j));
        } else {
            acc = ld(s, a, (size_t)l * m);
            for (uint32_t j = 1; j < m; j++) {
                double x = ld(s, a, (size_t)l * m + j);
                bool take = in->imm == 1 ? acc > x : acc < x;
                acc = take ? acc : x;
            }
        }
        st(s, d, l, acc);
    }
    return EMU_NEXT;
}

/* vector.max / vector.min: a > b ? a : b (a < b ? a : b) per element; a NaN
 * operand makes the compare false and yields b. */
int emu_h_vmaxmin(emu_wave *w, const emu_ins *in) {
    const uint8_t *a = REF(in->a), *b = REF(in->b);
    uint8_t *d = REF(in->d);
    rk_scalar s = in->sa;
    for (uint32_t i = 0; i < in->n; i++) {
        double x = ld(s, a, i), y = ld(s, b, i);
        bool take = in->imm == 1 ? x > y : x < y;
        st(s, d, i, take ? x : y);
    }
    return EMU_NEXT;
}

/* tile.register_p_from_qk_c: the first 8 of 16 f32 cells, rounded (RNE) to
 * f16 or bf16 (sd). */
int emu_h_p_from_qk(emu_wave *w, const emu_ins *in) {
    const float *a = REF(in->a);
    uint16_t *d = REF(in->d);
    for (uint32_t l = 0; l < w->W; l++)
        for (uint32_t j = 0; j < 8; j++) {
            float v = a[l * 16 + j];
            d[l * 8 + j] = in->sd == RK_S_BF16 ? emu_f2b(v) : emu_f2h(v);
        }
    return EMU_NEXT;
}
