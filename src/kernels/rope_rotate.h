/* rocke — the rotation step rope and kv_append share: load `pairs` pairs of
 * one head, rotate them in f32 by a token's cos/sin, store them back packed.
 * Layer: kernels. */
#ifndef ROCKE_ROPE_ROTATE_H
#define ROCKE_ROPE_ROTATE_H

#include "kern_int.h"

/* One thread's rotated pairs: neox two stores of `width` = pairs elements
 * (at[0] = head + i0, at[1] = at[0] + rot_half), gptj one store of 2*pairs
 * elements at head + 2*i0; y holds the f32 results in store order. */
typedef struct kn_rope_rot {
    uint32_t nstores, width;
    rk_value at[2];
    rk_value y[16];
} kn_rope_rot;

/* Element e of v (v itself when n == 1) as f32. */
rk_value kn_rope_elem_f32(rk_kernel *k, rk_value v, uint32_t n, uint32_t e);
/* The element indices of pairs [i0, i0 + pairs) of the head at `head`. */
void kn_rope_at(rk_kernel *k, rk_rope_style style, rk_value head, rk_value i0, rk_value rh, rk_value at[2]);
/* Load pairs [i0, i0 + pairs) of the head at `head` of X, rotate them by the
 * cache vectors cv, sv (pairs elements each). */
void kn_rope_rotate(rk_kernel *k, rk_rope_style style, uint32_t pairs, rk_value X, rk_value head, rk_value i0,
                    rk_value rh, rk_value cv, rk_value sv, kn_rope_rot *r);
/* n f32 values packed to one access of type `to` (RNE). */
rk_value kn_rope_pack(rk_kernel *k, const rk_value *e, uint32_t n, rk_scalar to);
/* Store r's values into X as dtype at r's indices. */
void kn_rope_store(rk_kernel *k, rk_value X, const kn_rope_rot *r, rk_scalar dtype);

#endif
