/* rocke — global -> LDS tile copies (see tile_mma.h): a block moves a
 * rows x cols tile in vec-element chunks, coalesced (consecutive threads
 * take consecutive chunks of a row), through tile.async_copy where the chunk
 * is 4, 8 or 16 bytes, else through a vector load and an LDS store. Chunks
 * outside the view are zeros (the source index is kept at 0 there). Layer:
 * tile. */
#include "rocke/tile_mma.h"
#include "../base/base_int.h"

rk_status rk_tile_copy_make(uint32_t rows, uint32_t cols, uint32_t vec, uint32_t threads, rk_scalar elem,
                            const rk_lds_layout *lds, bool async, rk_tile_copy *out) {
    uint32_t eb = rk_tile_elem_bytes(elem);
    if (!rows || !cols || !threads)
        return rk_fail(RK_ERR_INVALID, "tile copy: %ux%u tile over %u threads: every size must be >= 1", rows, cols,
                       threads);
    if (vec == 0 || (vec & (vec - 1)) || vec * eb > 16)
        return rk_fail(RK_ERR_INVALID, "tile copy: vec %u (legal: 1, 2, 4, 8 with at most 16 bytes of %s)", vec,
                       rk_scalar_name(elem));
    if (cols % vec)
        return rk_fail(RK_ERR_INVALID, "tile copy: %u columns are not a multiple of vec %u", cols, vec);
    uint32_t chunks = rows * cols / vec, passes = (chunks + threads - 1) / threads;
    if (passes > RK_TILE_COPY_MAX_PASSES)
        return rk_fail(RK_ERR_INVALID, "tile copy: %ux%u in chunks of %u needs %u passes of %u threads (at most %d): "
                       "use wider vectors, more threads or a smaller tile", rows, cols, vec, passes, threads,
                       RK_TILE_COPY_MAX_PASSES);
    uint32_t bytes = vec * eb;
    if (async && bytes != 4 && bytes != 8 && bytes != 16)
        return rk_fail(RK_ERR_INVALID, "tile copy: an async copy moves 4, 8 or 16 bytes, not %u (vec %u of %s)", bytes,
                       vec, rk_scalar_name(elem));
    if (lds->rows != rows || lds->cols != cols || lds->elem_bytes != eb)
        return rk_fail(RK_ERR_INVALID, "tile copy: the LDS layout is %ux%u of %u-byte elements, the tile %ux%u of %u",
                       lds->rows, lds->cols, lds->elem_bytes, rows, cols, eb);
    if (lds->sw_bits && (1u << lds->sw_base) < bytes)
        return rk_fail(RK_ERR_INVALID, "tile copy: the layout's swizzle moves %u-byte pieces, smaller than a %u-byte "
                       "chunk", 1u << lds->sw_base, bytes);
    rk_tile_copy c = {rows, cols, vec, threads, passes, elem, async, *lds};
    *out = c;
    return RK_OK;
}

void rk_tile_copy_lanes_init(rk_kernel *k, const rk_tile_copy *c, rk_value tid, rk_tile_copy_lanes *out) {
    uint32_t per_row = c->cols / c->vec;
    rk_ix eb = rk_ix_c(c->lds.elem_bytes);
    for (uint32_t p = 0; p < c->passes; p++) {
        rk_ix chunk = rk_ix_add(k, rk_ix_v(tid), rk_ix_c((int64_t)p * c->threads));
        rk_ix row = rk_ix_udiv(k, chunk, rk_ix_c(per_row));
        rk_ix cc = rk_ix_umod(k, chunk, rk_ix_c(per_row));
        rk_ix col = rk_ix_mul(k, cc, rk_ix_c(c->vec));
        rk_ix byte = rk_tile_lds_offset(k, &c->lds, row, col);
        rk_ix dst = rk_ix_udiv(k, byte, eb);
        out->row[p] = rk_ix_value(k, row);
        out->col[p] = rk_ix_value(k, col);
        out->dst[p] = rk_ix_value(k, dst);
    }
}

/* One chunk: i1 in range, source element index (i64, 0 when out of range). */
static void source(rk_kernel *k, const rk_tile_gview *g, rk_value r, rk_value c, rk_value *ok, rk_value *idx) {
    rk_value rin = rk_build_cmp(k, "lt", r, g->rows);
    rk_value cin = rk_build_cmp(k, "lt", c, g->cols);
    *ok = rk_build_and(k, rin, cin);
    rk_value r64 = rk_build_sext(k, r, RK_T_I64);
    rk_value ld64 = rk_build_sext(k, g->ld, RK_T_I64);
    rk_value c64 = rk_build_sext(k, c, RK_T_I64);
    rk_value ro = rk_build_mul(k, r64, ld64);
    rk_value at = rk_build_add(k, ro, c64);
    rk_value zero = rk_const_i64(k, 0);
    *idx = rk_build_select(k, *ok, at, zero);
}

void rk_tile_copy_chunk(rk_kernel *k, const rk_tile_copy *c, rk_value ptr, rk_value ok, rk_value idx, rk_value smem,
                        rk_value dst) {
    if (c->async) {
        rk_build_async_copy(k, ptr, idx, smem, dst, ok, (int64_t)(c->vec * c->lds.elem_bytes));
        return;
    }
    rk_value v = rk_load_global(k, ptr, idx, c->vec);
    rk_type t = rk_value_type(k, v);
    rk_value z = c->vec > 1 ? rk_build_constant_vec(k, t, 0.0) : rk_const_float(k, t, 0.0);
    rk_value sel = rk_build_select(k, ok, v, z);
    rk_store_smem(k, smem, &dst, sel);
}

static void one_chunk(rk_kernel *k, const rk_tile_copy *c, const rk_tile_gview *g, rk_value r, rk_value col,
                      rk_value smem, rk_value dst) {
    rk_value ok, idx;
    source(k, g, r, col, &ok, &idx);
    rk_tile_copy_chunk(k, c, g->ptr, ok, idx, smem, dst);
}

bool rk_tile_copy_pass_begin(rk_kernel *k, const rk_tile_copy *c, uint32_t p) {
    uint32_t chunks = c->rows * c->cols / c->vec;
    bool partial = (uint64_t)(p + 1) * c->threads > chunks;
    if (partial) {
        /* idle threads of the last pass: chunk >= chunks */
        rk_value tid = rk_build_thread_id(k, 0);
        rk_value lim = rk_const_i32(k, (int32_t)(chunks - p * c->threads));
        rk_value live = rk_build_cmp(k, "lt", tid, lim);
        rk_if_begin(k, live);
    }
    return partial;
}

void rk_tile_copy_issue(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_gview *g,
                        rk_value r0, rk_value c0, rk_value smem, rk_value stage) {
    for (uint32_t p = 0; p < c->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, c, p);
        rk_value r = rk_build_add(k, r0, l->row[p]);
        rk_value cc = rk_build_add(k, c0, l->col[p]);
        rk_value dst = rk_build_add(k, stage, l->dst[p]);
        one_chunk(k, c, g, r, cc, smem, dst);
        if (partial) rk_if_end(k, NULL, 0);
    }
}

uint32_t rk_tile_copy_conflicts(const rk_tile_copy *c, uint32_t wave) {
    uint32_t per_row = c->cols / c->vec, off[64], n = wave < 64 ? wave : 64;
    for (uint32_t t = 0; t < n; t++) {
        uint32_t chunk = t;
        off[t] = rk_lds_offset(&c->lds, chunk / per_row % c->rows, chunk % per_row * c->vec);
    }
    return rk_lds_conflict_ways(off, n, c->vec * c->lds.elem_bytes, 32, NULL);
}
