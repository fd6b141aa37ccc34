/* rocke — tile helpers: f16/bf16/f32 conversions, f32 splats and per-element
 * maps over vectors. Every family computes in f32 and rounds once (RNE) on
 * the way out. Layer: tile. */
#include "rocke/tile.h"
#include "../base/base_int.h"

uint32_t rk_tile_elem_bytes(rk_scalar s) { return (rk_scalar_bits(s) + 7) / 8; }

static bool is_vec(rk_kernel *k, rk_value v) {
    return rk_type_kind_of(k, rk_value_type(k, v)) == RK_TK_VEC;
}

rk_value rk_tile_to_f32(rk_kernel *k, rk_value v) {
    rk_type t = rk_value_type(k, v);
    if (!is_vec(k, v)) {
        if (rk_type_scalar(t) == RK_S_F32) return v;
        return rk_build_cast_to_f32(k, v);
    }
    if (rk_type_scalar(rk_type_elem(k, t)) == RK_S_F32) return v;
    rk_type to = rk_type_vec(k, RK_T_F32, rk_type_count(k, t));
    return rk_build_vcast_to_f32(k, v, to);
}

rk_value rk_tile_to_f32_neg(rk_kernel *k, rk_value v) {
    if (!is_vec(k, v)) return rk_tile_to_f32(k, rk_build_fneg(k, v));
    rk_type t = rk_value_type(k, v);
    uint32_t n = rk_type_count(k, t);
    if (rk_type_scalar(rk_type_elem(k, t)) == RK_S_F32 || n % 2) return rk_tile_to_f32(k, rk_build_vfneg(k, v));
    /* the sign flip as an integer xor on the packed 32-bit words: an fneg
     * would be folded into the consumer (fma(-a, -c, d) = fma(a, c, d)) and
     * the conversion merged with the first one again */
    rk_type wt = rk_type_vec(k, RK_T_I32, n / 2);
    rk_value w = rk_build_vbitcast(k, v, wt);
    w = rk_build_vxor(k, w, rk_build_constant_vec(k, wt, (double)INT32_MIN + 0x8000));
    return rk_tile_to_f32(k, rk_build_vbitcast(k, w, t));
}

rk_value rk_tile_from_f32(rk_kernel *k, rk_value v, rk_scalar to) {
    if (to == RK_S_F32) return v;
    rk_type st = (rk_type){to};
    if (!is_vec(k, v)) return rk_build_cast_f32_to(k, v, st);
    rk_type vt = rk_type_vec(k, st, rk_type_count(k, rk_value_type(k, v)));
    return rk_build_vtrunc_f32_to(k, v, vt);
}

rk_value rk_tile_f32s(rk_kernel *k, float x, uint32_t n) {
    if (n <= 1) return rk_const_f32(k, x);
    return rk_build_constant_vec(k, rk_type_vec(k, RK_T_F32, n), x);
}

rk_value rk_tile_map(rk_kernel *k, rk_value v, rk_tile_map_fn fn, void *ud) {
    if (!is_vec(k, v)) return fn(k, v, ud);
    uint32_t n = rk_type_count(k, rk_value_type(k, v));
    rk_value e[RK_TILE_MAX_CHUNKS * 2];
    RK_ASSERT(n <= RK_COUNTOF(e), "rk_tile_map: vector wider than 64 lanes");
    for (uint32_t i = 0; i < n; i++) {
        rk_value x = rk_build_vextract(k, v, i);
        e[i] = fn(k, x, ud);
    }
    return rk_build_vpack(k, e, n);
}

rk_value rk_tile_map2(rk_kernel *k, rk_value a, rk_value b, rk_tile_map2_fn fn, void *ud) {
    if (!is_vec(k, a)) return fn(k, a, b, ud);
    uint32_t n = rk_type_count(k, rk_value_type(k, a));
    rk_value e[RK_TILE_MAX_CHUNKS * 2];
    RK_ASSERT(n <= RK_COUNTOF(e), "rk_tile_map2: vector wider than 64 lanes");
    for (uint32_t i = 0; i < n; i++) {
        rk_value x = rk_build_vextract(k, a, i);
        rk_value y = rk_build_vextract(k, b, i);
        e[i] = fn(k, x, y, ud);
    }
    return rk_build_vpack(k, e, n);
}

/* ---- shape-generic f32 arithmetic ---------------------------------------------------- */
rk_value rk_tile_add(rk_kernel *k, rk_value a, rk_value b) {
    return is_vec(k, a) ? rk_build_vadd(k, a, b) : rk_build_fadd(k, a, b);
}
rk_value rk_tile_sub(rk_kernel *k, rk_value a, rk_value b) {
    return is_vec(k, a) ? rk_build_vsub(k, a, b) : rk_build_fsub(k, a, b);
}
rk_value rk_tile_mul(rk_kernel *k, rk_value a, rk_value b) {
    return is_vec(k, a) ? rk_build_vmul(k, a, b) : rk_build_fmul(k, a, b);
}
rk_value rk_tile_fma(rk_kernel *k, rk_value a, rk_value b, rk_value c) {
    return is_vec(k, a) ? rk_build_vfma(k, a, b, c) : rk_build_fma(k, a, b, c);
}

static rk_value fmax_fn(rk_kernel *k, rk_value a, rk_value b, void *ud) {
    (void)ud;
    return rk_build_fmax(k, a, b);
}
rk_value rk_tile_max(rk_kernel *k, rk_value a, rk_value b) { return rk_tile_map2(k, a, b, fmax_fn, NULL); }

rk_value rk_tile_bcast(rk_kernel *k, rk_value scalar, rk_value like) {
    if (!is_vec(k, like)) return scalar;
    return rk_build_vsplat(k, scalar, rk_type_count(k, rk_value_type(k, like)));
}
