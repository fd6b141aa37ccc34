/* rocke — the rotary step of rope and kv_append: loads of one head's pairs,
 * the f32 rotation (a·c − b·s, b·c + a·s), packed stores. Layer: kernels. */
#include "rope_rotate.h"

rk_value kn_rope_elem_f32(rk_kernel *k, rk_value v, uint32_t n, uint32_t e) {
    rk_value x = n > 1 ? rk_build_vextract(k, v, e) : v;
    return rk_tile_to_f32(k, x);
}

rk_value kn_rope_pack(rk_kernel *k, const rk_value *e, uint32_t n, rk_scalar to) {
    rk_value f = n > 1 ? rk_build_vpack(k, e, n) : e[0];
    return rk_tile_from_f32(k, f, to);
}

/* (a, b) -> (a·c − b·s, b·c + a·s) */
static void rotate(rk_kernel *k, rk_value a, rk_value b, rk_value c, rk_value s, rk_value *ya, rk_value *yb) {
    rk_value ac = rk_build_fmul(k, a, c), bs = rk_build_fmul(k, b, s);
    *ya = rk_build_fsub(k, ac, bs);
    rk_value bc = rk_build_fmul(k, b, c), as = rk_build_fmul(k, a, s);
    *yb = rk_build_fadd(k, bc, as);
}

void kn_rope_at(rk_kernel *k, rk_rope_style style, rk_value head, rk_value i0, rk_value rh, rk_value at[2]) {
    if (style == RK_ROPE_NEOX) {
        at[0] = rk_build_add(k, head, i0);
        at[1] = rk_build_add(k, at[0], rh);
        return;
    }
    rk_value i2 = rk_build_add(k, i0, i0);
    at[0] = rk_build_add(k, head, i2);
    at[1] = at[0];
}

void kn_rope_rotate(rk_kernel *k, rk_rope_style style, uint32_t pairs, rk_value X, rk_value head, rk_value i0,
                    rk_value rh, rk_value cv, rk_value sv, kn_rope_rot *r) {
    const uint32_t P = pairs;
    rk_value c[8], sn[8];
    for (uint32_t j = 0; j < P; j++) {
        c[j] = kn_rope_elem_f32(k, cv, P, j);
        sn[j] = kn_rope_elem_f32(k, sv, P, j);
    }
    kn_rope_at(k, style, head, i0, rh, r->at);
    if (style == RK_ROPE_NEOX) {
        r->nstores = 2, r->width = P;
        rk_value va = rk_load_global(k, X, r->at[0], P);
        rk_value vb = rk_load_global(k, X, r->at[1], P);
        for (uint32_t j = 0; j < P; j++) {
            rk_value a = kn_rope_elem_f32(k, va, P, j);
            rk_value b = kn_rope_elem_f32(k, vb, P, j);
            rotate(k, a, b, c[j], sn[j], &r->y[j], &r->y[P + j]);
        }
        return;
    }
    r->nstores = 1, r->width = 2 * P;
    rk_value v = rk_load_global(k, X, r->at[0], 2 * P);
    for (uint32_t j = 0; j < P; j++) {
        rk_value a = kn_rope_elem_f32(k, v, 2 * P, 2 * j);
        rk_value b = kn_rope_elem_f32(k, v, 2 * P, 2 * j + 1);
        rotate(k, a, b, c[j], sn[j], &r->y[2 * j], &r->y[2 * j + 1]);
    }
}

void kn_rope_store(rk_kernel *k, rk_value X, const kn_rope_rot *r, rk_scalar dtype) {
    for (uint32_t s = 0; s < r->nstores; s++) {
        rk_value o = kn_rope_pack(k, r->y + s * r->width, r->width, dtype);
        rk_store_global(k, X, r->at[s], o);
    }
}
