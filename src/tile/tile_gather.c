/* rocke — gathered global -> LDS copies of convolution operands (the
 * im2col view of tile_mma.h): each chunk's row becomes a pixel and its
 * column a filter tap with a channel, by fast division; chunks whose input
 * position falls in the padding (or, transposed, between strides) are
 * zeros; the chunk itself moves like the plain tile copy's. Layer: tile. */
#include "rocke/tile_mma.h"
#include "rocke/tile_xform.h"
#include "../base/base_int.h"

void rk_tile_im2col_rows_init(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l,
                              const rk_tile_im2col *v, rk_value r0, rk_tile_im2col_rows *out) {
    /* elements of one image: D * H * W * C (the family keeps it below 2^31) */
    rk_ix img = rk_ix_mul(k, v->in[0], v->in[1]);
    img = rk_ix_mul(k, img, v->in[2]);
    img = rk_ix_mul(k, img, v->cstride);
    rk_value img64 = rk_build_sext(k, rk_ix_value(k, img), RK_T_I64);
    rk_value c064 = rk_build_sext(k, rk_ix_value(k, v->c0), RK_T_I64);
    for (uint32_t p = 0; p < c->passes; p++) {
        rk_ix row = rk_ix_add(k, rk_ix_v(r0), rk_ix_v(l->row[p]));
        out->ok[p] = rk_ix_bool_value(k, rk_ix_lt(k, row, v->rows));
        /* row = ((n * O + o) * P + p) * Q + q */
        rk_ix pos[3], rest = row;
        for (int i = 2; i >= 0; i--) rest = rk_fastdiv_divmod(k, rest, &v->pix[i], &pos[i]);
        for (int i = 0; i < 3; i++) {
            rk_ix o = v->transposed ? rk_ix_add(k, pos[i], v->pad[i])
                                    : rk_ix_sub(k, rk_ix_mul(k, pos[i], v->stride[i]), v->pad[i]);
            out->org[p][i] = rk_ix_value(k, o);
        }
        rk_value n64 = rk_build_sext(k, rk_ix_value(k, rest), RK_T_I64);
        rk_value nb = rk_build_mul(k, n64, img64);
        out->base[p] = rk_build_add(k, nb, c064);
    }
}

/* The tap (t, r, s) and channel of column col = ((t * R + r) * S + s) * CG + c. */
static void taps(rk_kernel *k, const rk_tile_im2col *v, rk_ix col, rk_ix tap[3], rk_ix *ch) {
    rk_ix rest = rk_fastdiv_divmod(k, col, &v->cg, ch);
    for (int i = 2; i >= 1; i--) rest = rk_fastdiv_divmod(k, rest, &v->tap[i], &tap[i]);
    tap[0] = rest;
}

/* Input position along one spatial axis and its validity (folded into ok). */
static rk_ix axis(rk_kernel *k, const rk_tile_im2col *v, int i, rk_value org, rk_ix tap, rk_ix *ok) {
    rk_ix td = rk_ix_mul(k, tap, v->dil[i]);
    rk_ix zero = rk_ix_c(0);
    if (!v->transposed) {
        rk_ix x = rk_ix_add(k, rk_ix_v(org), td);
        *ok = rk_ix_and(k, *ok, rk_ix_ge(k, x, zero));
        *ok = rk_ix_and(k, *ok, rk_ix_lt(k, x, v->in[i]));
        return x;
    }
    /* the output position whose window puts this tap on the input pixel */
    rk_ix num = rk_ix_sub(k, rk_ix_v(org), td);
    *ok = rk_ix_and(k, *ok, rk_ix_ge(k, num, zero));
    rk_ix safe = num;
    if (num.dyn) safe = rk_ix_v(rk_build_smax(k, num.v, rk_ix_value(k, zero)));
    rk_ix rem;
    rk_ix x = rk_fastdiv_divmod(k, safe, &v->sdiv[i], &rem);
    rk_ix exact = rem.dyn ? rk_ix_v(rk_build_cmp(k, "eq", rem.v, rk_ix_value(k, zero))) : rk_ix_c(rem.c == 0);
    *ok = rk_ix_and(k, *ok, exact);
    *ok = rk_ix_and(k, *ok, rk_ix_lt(k, x, v->in[i]));
    return x;
}

void rk_tile_im2col_issue(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_im2col *v,
                          const rk_tile_im2col_rows *rows, rk_value c0, rk_value smem, rk_value stage) {
    for (uint32_t p = 0; p < c->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, c, p);
        rk_ix col = rk_ix_add(k, rk_ix_v(c0), rk_ix_v(l->col[p]));
        rk_ix ok = rk_ix_and(k, rk_ix_v(rows->ok[p]), rk_ix_lt(k, col, v->cols));
        rk_ix tap[3], ch;
        taps(k, v, col, tap, &ch);
        rk_ix x[3];
        for (int i = 0; i < 3; i++) x[i] = axis(k, v, i, rows->org[p][i], tap[i], &ok);
        /* ((x0 * H + x1) * W + x2) * C + channel, inside the image */
        rk_ix at = rk_ix_mul(k, x[0], v->in[1]);
        at = rk_ix_add(k, at, x[1]);
        at = rk_ix_mul(k, at, v->in[2]);
        at = rk_ix_add(k, at, x[2]);
        at = rk_ix_mul(k, at, v->cstride);
        at = rk_ix_add(k, at, ch);
        rk_value at64 = rk_build_sext(k, rk_ix_value(k, at), RK_T_I64);
        rk_value full = rk_build_add(k, rows->base[p], at64);
        rk_value okv = rk_ix_bool_value(k, ok);
        rk_value zero = rk_const_i64(k, 0);
        rk_value idx = rk_build_select(k, okv, full, zero);
        rk_value dst = rk_build_add(k, stage, l->dst[p]);
        rk_tile_copy_chunk(k, c, v->ptr, okv, idx, smem, dst);
        if (partial) rk_if_end(k, NULL, 0);
    }
}
