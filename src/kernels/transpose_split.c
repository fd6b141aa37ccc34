/* rocke — the split tile of transpose and permute (knob split): any M, N
 * and any element-aligned base keep aligned 16-byte vectors. Each tile row
 * of X and each tile row of Y is a split sub-row view (rk_tile_row_view_split
 * over the tile's part of the row), so a row that starts inside a vector
 * takes one partial vector at each end and whole aligned vectors between;
 * the LDS tile holds a vector more per row for the head. Layer: kernels. */
#include "kern_int.h"

static uint32_t log2u(uint32_t x) {
    uint32_t n = 0;
    while ((1u << n) < x) n++;
    return n;
}

uint32_t kn_transpose_param_align(const rk_instance *in, const rk_kparam *kp) {
    return in->u.transpose.split && in->u.transpose.vec > 1 ? rk_tile_elem_bytes(kp->type) : 16;
}

uint32_t kn_transpose_lds_cols(const rk_transpose_spec *s) {
    return s->tile_n + (s->split ? s->vec : 0) + s->lds_pad;
}

/* Store vector v (vec elements) to LDS row r from column c on, in the
 * widest power-of-two pieces the padded pitch keeps aligned. */
void kn_transpose_lds_put(rk_kernel *k, const rk_transpose_spec *s, rk_value lds, rk_value r, rk_value c, rk_value v) {
    uint32_t e = rk_tile_elem_bytes(s->dtype), vec = s->vec;
    uint32_t pitch = kn_transpose_lds_cols(s) * e, piece = vec;
    while (piece > 1 && pitch % (piece * e)) piece /= 2;
    for (uint32_t j = 0; j < vec; j += piece) {
        rk_value part = v;
        if (piece == 1 && vec > 1) {
            part = rk_build_vextract(k, v, j);
        } else if (piece < vec) {
            int32_t mask[16];
            for (uint32_t q = 0; q < piece; q++) mask[q] = (int32_t)(j + q);
            part = rk_build_vshuffle(k, v, v, mask, piece);
        }
        rk_value col = j ? rk_build_add(k, c, kn_i32(k, (int32_t)j)) : c;
        rk_value idx[2] = {r, col};
        rk_store_smem(k, lds, idx, part);
    }
}

/* p + n elements of elem (n i32 >= 0). */
static rk_value elem_ptr(rk_kernel *k, rk_value p, rk_value n, uint32_t e) {
    rk_value n64 = rk_build_zext(k, n, RK_T_I64);
    rk_value eb = rk_const_i64(k, e);
    rk_value bytes = rk_build_mul(k, n64, eb);
    return rk_build_global_ptr_add(k, p, bytes);
}

/* One work item of a phase: f < count (count a multiple of the block, or
 * the extra pass's `limit`). */
typedef struct item { rk_value r, q, ok; } item;

void kn_transpose_tile_split(rk_kernel *k, const rk_transpose_spec *s, const kn_tile_at *at, rk_value X, rk_value Y,
                             rk_value M, rk_value N) {
    const uint32_t TM = s->tile_m, TN = s->tile_n, vec = s->vec, B = s->block_size;
    const uint32_t e = rk_tile_elem_bytes(s->dtype), cpr = TN / vec, rpc = TM / vec;
    const uint32_t iters = TM * TN / vec / B, extra1 = (TM + B - 1) / B, extra2 = (TN + B - 1) / B;
    RK_ASSERT(iters + extra1 <= 32 && iters + extra2 <= 32, "transpose: at most 32 vectors per thread");
    uint32_t ldims[2] = {TM, kn_transpose_lds_cols(s)};
    rk_value lds = rk_build_smem_alloc(k, (rk_type){s->dtype}, ldims, 2);
    rk_value tid = rk_build_thread_id(k, 0), yes = rk_const_bool(k, true);
    rk_value tmc = kn_i32(k, (int32_t)TM), tnc = kn_i32(k, (int32_t)TN), vc = kn_i32(k, (int32_t)vec);

    /* phase 1: tile row r of X is the sub-row [col0, col0 + nx); chunk q of
     * its split view (q = 0 .. cpr, the last one for the head's overflow) */
    rk_value Xc = elem_ptr(k, X, at->col0, e);
    rk_value left_n = rk_build_sub(k, N, at->col0);
    rk_value nx = rk_build_smin(k, left_n, tnc);
    item it1[32];
    uint32_t n1 = 0;
    for (uint32_t i = 0; i < iters; i++, n1++) {
        rk_value f = i ? rk_build_add(k, tid, kn_i32(k, (int32_t)(i * B))) : tid;
        it1[n1].r = rk_build_lshr(k, f, kn_i32(k, (int32_t)log2u(cpr)));
        it1[n1].q = rk_build_and(k, f, kn_i32(k, (int32_t)cpr - 1));
        it1[n1].ok = yes;
    }
    for (uint32_t i = 0; i < extra1; i++, n1++) {
        rk_value f = i ? rk_build_add(k, tid, kn_i32(k, (int32_t)(i * B))) : tid;
        it1[n1].ok = rk_build_cmp(k, "lt", f, tmc);
        it1[n1].r = rk_build_smin(k, f, kn_i32(k, (int32_t)TM - 1));
        it1[n1].q = kn_i32(k, (int32_t)cpr);
    }
    rk_value v[32], lc[32];
    for (uint32_t i = 0; i < n1; i++) {
        rk_value gr = rk_build_add(k, at->row0, it1[i].r);
        rk_value in_m = rk_build_cmp(k, "lt", gr, M);
        rk_value act = rk_build_and(k, in_m, it1[i].ok);
        rk_value xrow = rk_build_add(k, at->xbase, gr);
        rk_tile_row xr = rk_tile_row_view_split(k, Xc, s->dtype, xrow, N, nx, act, vec, RK_TAIL_MASKED, NULL, 0);
        lc[i] = rk_build_mul(k, it1[i].q, vc);
        rk_tile_row_load(k, &xr, &lc[i], 1, 0.0, &v[i]);
    }
    for (uint32_t i = 0; i < n1; i++) {
        if (i < iters) {
            kn_transpose_lds_put(k, s, lds, it1[i].r, lc[i], v[i]);
            continue;
        }
        rk_if_begin(k, it1[i].ok);
        kn_transpose_lds_put(k, s, lds, it1[i].r, lc[i], v[i]);
        rk_if_end(k, NULL, 0);
    }
    rk_build_sync_lds_only(k);

    /* X element (row0 + rr, col0 + c) sits in LDS at (rr, c + shift(rr)),
     * shift(rr) = (lead + (xbase + row0 + rr) * N) mod vec, lead = the
     * base's elements past a vector boundary (the view's own formula; low
     * bits only, so no product overflows) */
    rk_value mask = kn_i32(k, (int32_t)vec - 1);
    rk_value xaddr = rk_build_ptrtoint(k, X);
    rk_value lowmask = rk_const_i64(k, (int64_t)vec * e - 1);
    rk_value xlow = rk_build_and(k, xaddr, lowmask);
    rk_value esh = rk_const_i64(k, log2u(e));
    rk_value xlead64 = rk_build_lshr(k, xlow, esh);
    rk_value lead = rk_build_trunc(k, xlead64, RK_T_I32);
    rk_value R0 = rk_build_add(k, at->xbase, at->row0);
    rk_value nlow = rk_build_and(k, N, mask);

    /* phase 2: tile row c of Y (Y row col0 + c) is the sub-row [row0,
     * row0 + ny); chunk q (0 .. rpc) of its split view holds tile rows
     * q*vec + i - t, t the view's shift */
    rk_value Yr = elem_ptr(k, Y, at->row0, e);
    rk_value left_m = rk_build_sub(k, M, at->row0);
    rk_value ny = rk_build_smin(k, left_m, tmc);
    item it2[32];
    uint32_t n2 = 0;
    for (uint32_t i = 0; i < iters; i++, n2++) {
        rk_value g = i ? rk_build_add(k, tid, kn_i32(k, (int32_t)(i * B))) : tid;
        it2[n2].r = rk_build_and(k, g, kn_i32(k, (int32_t)TN - 1));
        it2[n2].q = rk_build_lshr(k, g, kn_i32(k, (int32_t)log2u(TN)));
        it2[n2].ok = yes;
    }
    for (uint32_t i = 0; i < extra2; i++, n2++) {
        rk_value g = i ? rk_build_add(k, tid, kn_i32(k, (int32_t)(i * B))) : tid;
        it2[n2].ok = rk_build_cmp(k, "lt", g, tnc);
        it2[n2].r = rk_build_smin(k, g, kn_i32(k, (int32_t)TN - 1));
        it2[n2].q = kn_i32(k, (int32_t)rpc);
    }
    rk_value zero = kn_i32(k, 0), last = kn_i32(k, (int32_t)TM - 1);
    for (uint32_t i = 0; i < n2; i++) {
        rk_value c = it2[i].r;
        rk_value ycol = rk_build_add(k, at->col0, c);
        rk_value in_n = rk_build_cmp(k, "lt", ycol, N);
        rk_value act = rk_build_and(k, in_n, it2[i].ok);
        rk_value yrow = rk_build_add(k, at->ybase, ycol);
        rk_tile_row yr = rk_tile_row_view_split(k, Yr, s->dtype, yrow, M, ny, act, vec, RK_TAIL_MASKED, NULL, 0);
        rk_value off = rk_build_mul(k, it2[i].q, vc);
        rk_value first = rk_build_sub(k, off, yr.lo);
        rk_value el[16];
        for (uint32_t j = 0; j < vec; j++) {
            rk_value rr = j ? rk_build_add(k, first, kn_i32(k, (int32_t)j)) : first;
            rk_value rlo = rk_build_smax(k, rr, zero);
            rk_value rc = rk_build_smin(k, rlo, last);      /* rows outside the tile are masked stores */
            rk_value gr = rk_build_add(k, R0, rc);
            rk_value grl = rk_build_and(k, gr, mask);
            rk_value prod = rk_build_mul(k, grl, nlow);
            rk_value sum = rk_build_add(k, prod, lead);
            rk_value sh = rk_build_and(k, sum, mask);
            rk_value col = rk_build_add(k, c, sh);
            rk_value idx[2] = {rc, col};
            el[j] = rk_load_smem(k, lds, idx, 1);
        }
        rk_value val = vec > 1 ? rk_build_vpack(k, el, vec) : el[0];
        rk_tile_row_store(k, &yr, &off, 1, &val);
    }
}
