/* rocke — the coordinate-transform DAG: a tensor descriptor is a naive
 * strided tensor plus a chain of transforms (pad, embed, merge, unmerge,
 * xor, indirect, ...) that map user coordinates (m, k; n, ho, wo, ...) to the
 * tensor's own, with validity carried along. Evaluating it emits the index
 * arithmetic as IR; host constants fold before anything is emitted. Also
 * fast division by run-time divisors (magic numbers). Layer: tile. */
#ifndef ROCKE_TILE_XFORM_H
#define ROCKE_TILE_XFORM_H

#include "rocke/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- index terms ------------------------------------------------------------ */
/* A host constant or an i32 SSA value (i1 for validity). Constants fold: an
 * expression over constants emits nothing, x*1, x+0 and x/1 emit nothing. */
typedef struct rk_ix {
    rk_value v;        /* the value when dyn */
    int64_t c;         /* the constant when !dyn */
    bool dyn;
} rk_ix;
static inline rk_ix rk_ix_c(int64_t c) { rk_ix r = {{0}, c, false}; return r; }
static inline rk_ix rk_ix_v(rk_value v) { rk_ix r = {v, 0, true}; return r; }
/* The term as an i32 (i1 when is_bool) value; constants are materialised. */
rk_value rk_ix_value(rk_kernel *k, rk_ix x);
rk_value rk_ix_bool_value(rk_kernel *k, rk_ix x);

/* Arithmetic on terms with folding (i32, signed compares). udiv/umod need
 * a >= 0; a constant divisor becomes arith.udiv by that constant, which every
 * backend turns into a multiply-high and shift. */
rk_ix rk_ix_add(rk_kernel *k, rk_ix a, rk_ix b);
rk_ix rk_ix_sub(rk_kernel *k, rk_ix a, rk_ix b);
rk_ix rk_ix_mul(rk_kernel *k, rk_ix a, rk_ix b);
rk_ix rk_ix_udiv(rk_kernel *k, rk_ix a, rk_ix b);
rk_ix rk_ix_umod(rk_kernel *k, rk_ix a, rk_ix b);
rk_ix rk_ix_xor(rk_kernel *k, rk_ix a, rk_ix b);
rk_ix rk_ix_lt(rk_kernel *k, rk_ix a, rk_ix b);       /* i1 */
rk_ix rk_ix_ge(rk_kernel *k, rk_ix a, rk_ix b);       /* i1 */
rk_ix rk_ix_and(rk_kernel *k, rk_ix p, rk_ix q);      /* i1; constant true drops out */

/* ---- fast division by a run-time divisor ---------------------------------------- */
/* For 1 <= d < 2^31 and 0 <= n < 2^31: q = (umulhi(n, mult) + n) >> shift
 * with shift = ceil(log2 d), mult = ((2^shift - d) << 32) / d + 1 (mod 2^32).
 * rk_magic_u32 computes the pair on the host (pass them as kernel
 * parameters); rk_fastdiv_* wrap a divisor for the transforms. */
rk_status rk_magic_u32(uint32_t d, uint32_t *mult, uint32_t *shift);
typedef struct rk_fastdiv {
    rk_ix d;           /* the divisor */
    rk_value mult, shift;   /* i32 magic pair when magic */
    bool magic;
} rk_fastdiv;
/* A constant divisor (division by a constant is cheap already). */
rk_fastdiv rk_fastdiv_const(uint32_t d);
/* A run-time divisor with its magic pair given (kernel parameters). */
rk_fastdiv rk_fastdiv_magic(rk_value d, rk_value mult, rk_value shift);
/* A run-time divisor whose magic pair the kernel computes once here (an i64
 * division; do it outside loops). */
rk_fastdiv rk_fastdiv_compute(rk_kernel *k, rk_value d);
/* q = n / d and r = n % d for 0 <= n < 2^31 (r may be NULL). */
rk_ix rk_fastdiv_divmod(rk_kernel *k, rk_ix n, const rk_fastdiv *d, rk_ix *r);

/* ---- transforms --------------------------------------------------------------- */
/* Each transform consumes `upper` coordinates (by name) and produces `lower`
 * ones. Names are caller-owned strings that outlive the descriptor (string
 * literals). In the formulas u is the upper value, x the lower. */
#define RK_XF_MAX_IO 8
typedef enum rk_xf_kind {
    RK_XF_PASS_THROUGH = 0, /* x = u (a rename) */
    RK_XF_PAD,              /* x = u; valid &= lo <= u < hi (either side optional) */
    RK_XF_LEFT_PAD,         /* x = u - a; valid &= u >= a */
    RK_XF_RIGHT_PAD,        /* x = u; valid &= u < a */
    RK_XF_EMBED,            /* x = sum s_i*u_i + offset; optionally valid &= lo <= x < hi */
    RK_XF_MERGE,            /* x = sum u_i * prod(dims[i+1..]) (row-major; dims[0] unused) */
    RK_XF_UNMERGE,          /* u -> x_0..x_n-1 with x_i = (u / prod(dims[i+1..])) % dims[i], x_0 unbounded */
    RK_XF_XOR,              /* (a, b) -> (a, b ^ (a % len)) (or b ^ a without the modulo) */
    RK_XF_SLICE,            /* x = u + begin (a window [begin, end) of the lower dim; no check) */
    RK_XF_FREEZE,           /* nothing -> x = a constant or value */
    RK_XF_REPLICATE,        /* u_0..u_n-1 -> nothing (broadcast dims, ignored) */
    RK_XF_MODULO,           /* x = u % m */
    RK_XF_OFFSET,           /* x = u + a */
    RK_XF_INDIRECT,         /* x = table[base + u] (i32 global load); with max: default where base + u >= max */
    RK_XF__COUNT
} rk_xf_kind;

typedef struct rk_xform {
    rk_xf_kind kind;
    uint32_t nup, nlo;
    const char *up[RK_XF_MAX_IO], *lo[RK_XF_MAX_IO];
    rk_ix s[RK_XF_MAX_IO];          /* embed strides; merge dims */
    rk_fastdiv dv[RK_XF_MAX_IO];    /* unmerge dims */
    rk_ix a, b;                     /* pad lo/hi, embed offset, slice begin/end, modulo m, offset, freeze, xor len,
                                     * indirect base/max */
    rk_ix lo_bound, hi_bound;       /* embed bounds */
    bool has_a, has_b, bounded;     /* pad sides, indirect max, embed bounds present */
    bool xor_modulo;                /* xor: reduce a modulo len first */
    rk_value table;                 /* indirect: ptr<i32, global> */
    int32_t dflt;                   /* indirect: value past max */
} rk_xform;

rk_xform rk_xf_pass_through(const char *up, const char *into);
/* has_lo/has_hi false leave that side unchecked (the dynamic pad). */
rk_xform rk_xf_pad(const char *c, bool has_lo, rk_ix lo, bool has_hi, rk_ix hi);
rk_xform rk_xf_left_pad(const char *up, const char *into, rk_ix left);
rk_xform rk_xf_right_pad(const char *c, rk_ix length);
rk_xform rk_xf_embed(uint32_t n, const char *const *ups, const char *into, const rk_ix *strides, rk_ix offset);
rk_xform rk_xf_embed_bounded(uint32_t n, const char *const *ups, const char *into, const rk_ix *strides,
                             rk_ix offset, rk_ix lo, rk_ix hi);
rk_xform rk_xf_merge(uint32_t n, const char *const *ups, const char *into, const rk_ix *dims);
rk_xform rk_xf_unmerge(const char *up, uint32_t n, const char *const *intos, const rk_fastdiv *dims);
rk_xform rk_xf_xor(const char *a, const char *b, const char *a_out, const char *b_out, rk_ix len, bool modulo);
rk_xform rk_xf_slice(const char *up, const char *into, rk_ix begin, rk_ix end);
rk_xform rk_xf_freeze(const char *into, rk_ix value);
rk_xform rk_xf_replicate(uint32_t n, const char *const *ups);
rk_xform rk_xf_modulo(const char *up, const char *into, rk_ix m);
rk_xform rk_xf_offset(const char *up, const char *into, rk_ix off);
/* table: ptr<i32, global>; has_max false: no bounds on the table index. */
rk_xform rk_xf_indirect(const char *up, const char *into, rk_value table, rk_ix base, bool has_max, rk_ix max,
                        int32_t dflt);
/* Whether a transform is linear: moving its uppers by a delta moves its
 * lowers by a fixed function of that delta (offsets of a tile window then
 * move by one add). Validity is still re-evaluated at the new position. */
bool rk_xf_is_linear(const rk_xform *x);

/* ---- descriptors --------------------------------------------------------------- */
#define RK_DESC_MAX_DIMS 16
#define RK_DESC_MAX_XFORMS 24
typedef struct rk_tile_desc {
    uint32_t rank;                           /* base (storage) dims */
    const char *base[RK_DESC_MAX_DIMS];
    rk_ix length[RK_DESC_MAX_DIMS];          /* informational: not checked (add pads) */
    rk_ix stride[RK_DESC_MAX_DIMS];          /* elements (or bytes, by the caller's choice) */
    uint32_t nx;
    rk_xform x[RK_DESC_MAX_XFORMS];
    uint32_t nupper;                         /* user-facing coordinates, derived */
    const char *upper[RK_DESC_MAX_DIMS];
} rk_tile_desc;

/* A strided tensor: names (NULL: "d0".."dN"), lengths, strides (NULL:
 * row-major from the lengths). RK_ERR_INVALID for rank 0 or > max, or a
 * name used twice. */
rk_status rk_tile_desc_naive(rk_tile_desc *d, uint32_t rank, const char *const *names, const rk_ix *lengths,
                             const rk_ix *strides);
/* Append transforms (in any order: evaluation follows the dependencies).
 * Recomputes the upper coordinates: base names and every transform's uppers,
 * less every transform's lowers, base names first, then in chain order.
 * RK_ERR_INVALID when a lower is produced twice or the table is full. */
rk_status rk_tile_desc_add(rk_tile_desc *d, const rk_xform *xs, uint32_t n);
/* Index of an upper coordinate by name, or -1. */
int rk_tile_desc_upper_index(const rk_tile_desc *d, const char *name);

/* Evaluate at `uppers` (one term per upper coordinate, in d->upper order):
 * *offset = sum base_i * stride_i (i32), *valid = AND of the validity of the
 * base coordinates (i1 term; constant 1 when nothing can be invalid).
 * RK_ERR_INVALID naming the dependency that cannot be resolved. */
rk_status rk_tile_desc_offset(rk_kernel *k, const rk_tile_desc *d, const rk_ix *uppers, rk_ix *offset, rk_ix *valid);
/* The same offset summed in i64 (tensors past 2 GiB): an i64 value. */
rk_status rk_tile_desc_offset64(rk_kernel *k, const rk_tile_desc *d, const rk_ix *uppers, rk_value *offset,
                                rk_ix *valid);
/* Every base coordinate's value (in d->base order) without the strides. */
rk_status rk_tile_desc_lower(rk_kernel *k, const rk_tile_desc *d, const rk_ix *uppers, rk_ix *base, rk_ix *valid);
/* The offset change when the uppers move by `delta` (host constants), for a
 * descriptor whose transforms on the moved coordinates are all linear
 * (RK_ERR_UNSUPPORTED naming the first one that is not): adding it to the
 * old offset gives the new one without re-evaluating the chain. Strides and
 * dims on the path must be constants. */
rk_status rk_tile_desc_delta(const rk_tile_desc *d, const int64_t *delta, int64_t *offset_delta);

#ifdef __cplusplus
}
#endif
#endif
