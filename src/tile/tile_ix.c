/* rocke — index terms (a host constant or an i32 value) with folding, and
 * fast division by run-time divisors through magic numbers. The transforms
 * of tile_xform.c are written in these terms, so constant coordinates and
 * strides cost no IR. Layer: tile. */
#include "rocke/tile_xform.h"

static bool is_c(rk_ix a, int64_t c) { return !a.dyn && a.c == c; }

rk_value rk_ix_value(rk_kernel *k, rk_ix x) {
    /* Out-of-range constants become an i64 constant: the op that uses it
     * then fails the builder's type check (a sticky error naming the op),
     * rather than a silently truncated index. */
    if (x.dyn) return x.v;
    if (x.c < INT32_MIN || x.c > INT32_MAX) return rk_const_i64(k, x.c);
    return rk_const_i32(k, (int32_t)x.c);
}

rk_value rk_ix_bool_value(rk_kernel *k, rk_ix x) { return x.dyn ? x.v : rk_const_bool(k, x.c != 0); }

/* Both operands as values, materialised in a fixed order (a, then b). */
static void both(rk_kernel *k, rk_ix a, rk_ix b, rk_value *va, rk_value *vb) {
    *va = rk_ix_value(k, a);
    *vb = rk_ix_value(k, b);
}

rk_ix rk_ix_add(rk_kernel *k, rk_ix a, rk_ix b) {
    if (!a.dyn && !b.dyn) return rk_ix_c(a.c + b.c);
    if (is_c(a, 0)) return b;
    if (is_c(b, 0)) return a;
    rk_value va, vb;
    both(k, a, b, &va, &vb);
    return rk_ix_v(rk_build_add(k, va, vb));
}

rk_ix rk_ix_sub(rk_kernel *k, rk_ix a, rk_ix b) {
    if (!a.dyn && !b.dyn) return rk_ix_c(a.c - b.c);
    if (is_c(b, 0)) return a;
    rk_value va, vb;
    both(k, a, b, &va, &vb);
    return rk_ix_v(rk_build_sub(k, va, vb));
}

rk_ix rk_ix_mul(rk_kernel *k, rk_ix a, rk_ix b) {
    if (!a.dyn && !b.dyn) return rk_ix_c(a.c * b.c);
    if (is_c(a, 0) || is_c(b, 0)) return rk_ix_c(0);
    if (is_c(a, 1)) return b;
    if (is_c(b, 1)) return a;
    rk_value va, vb;
    both(k, a, b, &va, &vb);
    return rk_ix_v(rk_build_mul(k, va, vb));
}

rk_ix rk_ix_udiv(rk_kernel *k, rk_ix a, rk_ix b) {
    if (!a.dyn && !b.dyn && b.c > 0) return rk_ix_c(a.c / b.c);
    if (is_c(b, 1) || is_c(a, 0)) return a;
    rk_value va, vb;
    both(k, a, b, &va, &vb);
    return rk_ix_v(rk_build_udiv(k, va, vb));
}

rk_ix rk_ix_umod(rk_kernel *k, rk_ix a, rk_ix b) {
    if (!a.dyn && !b.dyn && b.c > 0) return rk_ix_c(a.c % b.c);
    if (is_c(b, 1) || is_c(a, 0)) return rk_ix_c(0);
    rk_value va, vb;
    both(k, a, b, &va, &vb);
    return rk_ix_v(rk_build_umod(k, va, vb));
}

rk_ix rk_ix_xor(rk_kernel *k, rk_ix a, rk_ix b) {
    if (!a.dyn && !b.dyn) return rk_ix_c(a.c ^ b.c);
    if (is_c(a, 0)) return b;
    if (is_c(b, 0)) return a;
    rk_value va, vb;
    both(k, a, b, &va, &vb);
    return rk_ix_v(rk_build_xor(k, va, vb));
}

static rk_ix cmp(rk_kernel *k, const char *pred, rk_ix a, rk_ix b) {
    rk_value va, vb;
    both(k, a, b, &va, &vb);
    return rk_ix_v(rk_build_cmp(k, pred, va, vb));
}

rk_ix rk_ix_lt(rk_kernel *k, rk_ix a, rk_ix b) {
    if (!a.dyn && !b.dyn) return rk_ix_c(a.c < b.c);
    return cmp(k, "lt", a, b);
}

rk_ix rk_ix_ge(rk_kernel *k, rk_ix a, rk_ix b) {
    if (!a.dyn && !b.dyn) return rk_ix_c(a.c >= b.c);
    return cmp(k, "ge", a, b);
}

rk_ix rk_ix_and(rk_kernel *k, rk_ix p, rk_ix q) {
    if (!p.dyn && !q.dyn) return rk_ix_c(p.c && q.c);
    if (is_c(p, 0) || is_c(q, 0)) return rk_ix_c(0);
    if (!p.dyn) return q;   /* constant true */
    if (!q.dyn) return p;
    return rk_ix_v(rk_build_and(k, p.v, q.v));
}

/* ---- magic division ------------------------------------------------------------ */
rk_status rk_magic_u32(uint32_t d, uint32_t *mult, uint32_t *shift) {
    if (d == 0 || d > (uint32_t)INT32_MAX)
        return rk_fail(RK_ERR_INVALID, "fast division: divisor %u is outside [1, 2^31)", d);
    uint32_t s = 0;
    while ((1ull << s) < d) s++;
    *shift = s;
    *mult = (uint32_t)((((1ull << s) - d) << 32) / d + 1);
    return RK_OK;
}

rk_fastdiv rk_fastdiv_const(uint32_t d) {
    rk_fastdiv f = {rk_ix_c(d), {0}, {0}, false};
    return f;
}

rk_fastdiv rk_fastdiv_magic(rk_value d, rk_value mult, rk_value shift) {
    rk_fastdiv f = {rk_ix_v(d), mult, shift, true};
    return f;
}

rk_fastdiv rk_fastdiv_compute(rk_kernel *k, rk_value d) {
    /* shift = bit length of d - 1 (ceil(log2 d)), by five halving steps */
    rk_value one = rk_const_i32(k, 1);
    rk_value t = rk_build_sub(k, d, one);
    rk_value zero = rk_const_i32(k, 0);
    rk_value s = zero;
    for (int b = 16; b >= 1; b /= 2) {
        rk_value bv = rk_const_i32(k, b);
        rk_value hi = rk_build_lshr(k, t, bv);
        rk_value has = rk_build_cmp(k, "ne", hi, zero);
        rk_value add = rk_build_select(k, has, bv, zero);
        s = rk_build_add(k, s, add);
        t = rk_build_select(k, has, hi, t);
    }
    rk_value last = rk_build_cmp(k, "ne", t, zero);
    rk_value lastv = rk_build_select(k, last, one, zero);
    s = rk_build_add(k, s, lastv);
    /* mult = ((2^s - d) << 32) / d + 1, in i64 */
    rk_type i64 = RK_T_I64;
    rk_value s64 = rk_build_zext(k, s, i64);
    rk_value d64 = rk_build_zext(k, d, i64);
    rk_value one64 = rk_const_i64(k, 1);
    rk_value p2 = rk_build_shl(k, one64, s64);
    rk_value diff = rk_build_sub(k, p2, d64);
    rk_value c32 = rk_const_i64(k, 32);
    rk_value num = rk_build_shl(k, diff, c32);
    rk_value q = rk_build_udiv(k, num, d64);
    rk_value q1 = rk_build_add(k, q, one64);
    rk_value mult = rk_build_trunc(k, q1, RK_T_I32);
    return rk_fastdiv_magic(d, mult, s);
}

rk_ix rk_fastdiv_divmod(rk_kernel *k, rk_ix n, const rk_fastdiv *d, rk_ix *r) {
    rk_ix q;
    if (!d->magic || !n.dyn) {
        q = rk_ix_udiv(k, n, d->d);
    } else {
        rk_value hi = rk_build_umul_hi_i32(k, n.v, d->mult);
        rk_value sum = rk_build_add(k, hi, n.v);
        q = rk_ix_v(rk_build_lshr(k, sum, d->shift));
    }
    if (r) {
        rk_ix qd = rk_ix_mul(k, q, d->d);
        *r = rk_ix_sub(k, n, qd);
    }
    return q;
}
