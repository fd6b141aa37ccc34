/* rocke — global -> LDS tile copies (see tile_mma.h): a block moves a
 * rows x cols tile in vec-element chunks, coalesced (consecutive threads
 * take consecutive chunks of a row), through tile.async_copy where the chunk
 * is 4, 8 or 16 bytes, else through vector loads (gathered from narrower
 * pieces where the view's leading dimension demands) and an LDS store.
 * Chunks outside the view are zeros (the source index is kept at 0 there).
 * Layer: tile. */
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
    rk_tile_copy c = {rows, cols, vec, threads, passes, elem, async, *lds, vec};
    *out = c;
    return RK_OK;
}

rk_status rk_tile_copy_make_gathered(uint32_t rows, uint32_t cols, uint32_t vec, uint32_t gvec, uint32_t threads,
                                     rk_scalar elem, const rk_lds_layout *lds, rk_tile_copy *out) {
    if (gvec == 0 || gvec > vec || vec % gvec)
        return rk_fail(RK_ERR_INVALID, "tile copy: a gathered copy reads %u-element pieces of %u-element chunks: the "
                       "piece must divide the chunk", gvec, vec);
    rk_status st = rk_tile_copy_make(rows, cols, vec, threads, elem, lds, false, out);
    if (st == RK_OK) out->gvec = gvec;
    return st;
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

/* One access at (r, c): i1 in range, source element index (i64, 0 when out
 * of range). */
/* Element (r, c) of the view as an i64 index. */
static rk_value view_index(rk_kernel *k, const rk_tile_gview *g, rk_value r, rk_value c) {
    rk_value r64 = rk_build_sext(k, r, RK_T_I64);
    rk_value ld64 = rk_build_sext(k, g->ld, RK_T_I64);
    rk_value c64 = rk_build_sext(k, c, RK_T_I64);
    rk_value ro = rk_build_mul(k, r64, ld64);
    return rk_build_add(k, ro, c64);
}

static void source(rk_kernel *k, const rk_tile_gview *g, rk_value r, rk_value c, rk_value *ok, rk_value *idx) {
    rk_value rin = rk_build_cmp(k, "lt", r, g->rows);
    rk_value cin = rk_build_cmp(k, "lt", c, g->cols);
    *ok = rk_build_and(k, rin, cin);
    rk_value at = view_index(k, g, r, c);
    rk_value zero = rk_const_i64(k, 0);
    *idx = rk_build_select(k, *ok, at, zero);
}

/* Zeros of type t (n > 1: a vector of n); 8-bit floats, which have no
 * constants, as the bits of i8 zeros (0x00 is +0 in every fp8 format). */
static rk_value zeros(rk_kernel *k, rk_type t, uint32_t n) {
    rk_scalar e = rk_type_scalar(n > 1 ? rk_type_elem(k, t) : t);
    bool f8 = e == RK_S_FP8E4M3 || e == RK_S_BF8E5M2 || e == RK_S_FP8E4M3FNUZ || e == RK_S_BF8E5M2FNUZ;
    if (!f8) return n > 1 ? rk_build_constant_vec(k, t, 0.0) : rk_const_float(k, t, 0.0);
    if (n == 1) {
        rk_value zi = rk_const_int(k, RK_T_I8, 0);
        return rk_build_bitcast(k, zi, t);
    }
    rk_type ti = rk_type_vec(k, RK_T_I8, n);
    rk_value zi = rk_build_constant_vec(k, ti, 0.0);
    return rk_build_vbitcast(k, zi, t);
}

/* n elements from idx, or zeros where !ok. */
static rk_value load_or_zero(rk_kernel *k, rk_value ptr, rk_value ok, rk_value idx, uint32_t n) {
    rk_value v = rk_load_global(k, ptr, idx, n);
    rk_type t = rk_value_type(k, v);
    rk_value z = zeros(k, t, n);
    return rk_build_select(k, ok, v, z);
}

/* A gathered chunk: vec / gvec pieces packed into one vector. `inside`: the
 * tile's columns are known to lie inside the view, so only the row is
 * checked (once) and the pieces are constant offsets from one address;
 * otherwise every piece is checked on its own. */
static rk_value gather_pieces(rk_kernel *k, const rk_tile_copy *c, const rk_tile_gview *g, rk_value r, rk_value col,
                              rk_value live, bool inside) {
    uint32_t n = c->vec / c->gvec;
    rk_value rin = rk_build_cmp(k, "lt", r, g->rows);
    if (rk_value_ok(live)) rin = rk_build_and(k, rin, live);
    rk_value at = view_index(k, g, r, col);
    rk_value zero = rk_const_i64(k, 0);
    /* inside: a row out of range reads the view's first row (cols >= vec there) */
    if (inside) at = rk_build_select(k, rin, at, zero);
    rk_value piece[16];
    for (uint32_t i = 0; i < n; i++) {
        rk_value off64 = rk_const_i64(k, (int64_t)(i * c->gvec));
        rk_value ai = rk_build_add(k, at, off64);
        if (inside) {
            piece[i] = rk_load_global(k, g->ptr, ai, c->gvec);
            continue;
        }
        rk_value off = rk_const_i32(k, (int32_t)(i * c->gvec));
        rk_value ci = rk_build_add(k, col, off);
        rk_value cin = rk_build_cmp(k, "lt", ci, g->cols);
        rk_value ok = rk_build_and(k, rin, cin);
        rk_value idx = rk_build_select(k, ok, ai, zero);
        piece[i] = load_or_zero(k, g->ptr, ok, idx, c->gvec);
    }
    rk_value v;
    if (c->gvec == 1) {
        v = rk_build_vpack(k, piece, n);
    } else {
        /* pieces are vectors: join them pairwise */
        for (uint32_t w = n; w > 1; w /= 2)
            for (uint32_t i = 0; i < w / 2; i++) piece[i] = rk_build_vconcat(k, piece[2 * i], piece[2 * i + 1]);
        v = piece[0];
    }
    if (!inside) return v;
    rk_type t = rk_value_type(k, v);
    rk_value z = zeros(k, t, c->vec);
    return rk_build_select(k, rin, v, z);
}

/* Whether a copy's chunks are shifted units (eight 2-byte pieces). */
static bool shifted(const rk_tile_copy *c) {
    return c->gvec == 1 && c->vec == 8 && rk_tile_elem_bytes(c->elem) == 2;
}

/* A held chunk: the vector, or for shifted units the aligned pair and the shift. */
typedef struct chunk_regs {
    rk_value v, v1, sh;
} chunk_regs;

/* What a fetch knows of its tile: nothing (each chunk checked), its columns inside the view, or (shifted
 * units) every chunk's aligned window inside the matrix. */
enum { FETCH_EDGE, FETCH_INSIDE, FETCH_INTERIOR };

/* A gathered chunk of eight 2-byte pieces as one shifted unit where its aligned
 * window lies inside the view's buffer (rows - 1 rows of ld elements and one of
 * cols), else piece by piece (the view's first and last elements, column
 * tails, rows outside) with shift 0. The shift itself waits for put, so the
 * loads stay in flight across the math. */
static chunk_regs shifted_chunk(rk_kernel *k, const rk_tile_copy *c, const rk_tile_gview *g, rk_value r, rk_value col,
                                rk_value live, int mode) {
    bool inside = mode != FETCH_EDGE;
    if (mode == FETCH_INTERIOR) {
        /* every window of the tile lies in the matrix: no checks; an idle thread of a partial pass
         * reads its first row's unit */
        rk_value at = view_index(k, g, r, col);
        if (rk_value_ok(live)) {
            rk_value z32 = rk_const_i32(k, 0);
            rk_value first = view_index(k, g, r, z32);
            at = rk_build_select(k, live, at, first);
        }
        chunk_regs h;
        rk_tile_load_unit_pair(k, g->ptr, at, &h.v, &h.v1, &h.sh);
        return h;
    }
    rk_value ok = rk_build_cmp(k, "lt", r, g->rows);
    if (rk_value_ok(live)) ok = rk_build_and(k, ok, live);
    if (!inside) {
        rk_value v8 = rk_const_i32(k, 8);
        rk_value end = rk_build_add(k, col, v8);
        rk_value cin = rk_build_cmp(k, "le", end, g->cols);
        ok = rk_build_and(k, ok, cin);
    }
    rk_value at = view_index(k, g, r, col);
    rk_value rows64 = rk_build_sext(k, g->rows, RK_T_I64);
    rk_value ld64 = rk_build_sext(k, g->ld, RK_T_I64);
    rk_value cols64 = rk_build_sext(k, g->cols, RK_T_I64);
    rk_value one = rk_const_i64(k, 1);
    rk_value last = rk_build_sub(k, rows64, one);
    rk_value body = rk_build_mul(k, last, ld64);
    rk_value total = rk_build_add(k, body, cols64);
    rk_value win = rk_tile_shifted_window_ok(k, g->ptr, at, total);
    rk_value fast = rk_build_and(k, ok, win);
    rk_type vt = rk_type_vec(k, (rk_type){c->elem}, 8);
    rk_type ty[3] = {vt, vt, RK_T_I32};
    rk_value res[3], y[3];
    rk_if_else_begin(k, fast, 3, ty, res);
    rk_tile_load_unit_pair(k, g->ptr, at, &y[0], &y[1], &y[2]);
    rk_else(k, y, 3);
    y[0] = gather_pieces(k, c, g, r, col, live, false);
    y[1] = y[0];
    y[2] = rk_const_i32(k, 0);
    rk_if_end(k, y, 3);
    return (chunk_regs){res[0], res[1], res[2]};
}

/* The chunk at (r, col) of a synchronous copy, zeros outside the view (and
 * where live, when given, is false). */
static chunk_regs fetch_chunk(rk_kernel *k, const rk_tile_copy *c, const rk_tile_gview *g, rk_value r, rk_value col,
                              rk_value live, int mode) {
    if (shifted(c)) return shifted_chunk(k, c, g, r, col, live, mode);
    if (c->gvec < c->vec) return (chunk_regs){gather_pieces(k, c, g, r, col, live, mode != FETCH_EDGE), {0}, {0}};
    rk_value ok, idx;
    source(k, g, r, col, &ok, &idx);
    if (rk_value_ok(live)) {
        ok = rk_build_and(k, ok, live);
        rk_value zero = rk_const_i64(k, 0);
        idx = rk_build_select(k, ok, idx, zero);
    }
    return (chunk_regs){load_or_zero(k, g->ptr, ok, idx, c->vec), {0}, {0}};
}

void rk_tile_copy_chunk(rk_kernel *k, const rk_tile_copy *c, rk_value ptr, rk_value ok, rk_value idx, rk_value smem,
                        rk_value dst) {
    if (c->gvec < c->vec) rk_bug("rk_tile_copy_chunk: a gathered copy's pieces have addresses of their own");
    if (c->async) {
        rk_build_async_copy(k, ptr, idx, smem, dst, ok, (int64_t)(c->vec * c->lds.elem_bytes));
        return;
    }
    rk_value v = load_or_zero(k, ptr, ok, idx, c->vec);
    rk_store_smem(k, smem, &dst, v);
}

static void one_chunk(rk_kernel *k, const rk_tile_copy *c, const rk_tile_gview *g, rk_value r, rk_value col,
                      rk_value smem, rk_value dst) {
    rk_value ok, idx;
    source(k, g, r, col, &ok, &idx);
    rk_tile_copy_chunk(k, c, g->ptr, ok, idx, smem, dst);
}

/* i1: this thread has a chunk in (partial) pass p. */
static rk_value pass_live(rk_kernel *k, const rk_tile_copy *c, uint32_t p) {
    uint32_t chunks = c->rows * c->cols / c->vec;
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value lim = rk_const_i32(k, (int32_t)(chunks - p * c->threads));
    return rk_build_cmp(k, "lt", tid, lim);
}

static bool pass_partial(const rk_tile_copy *c, uint32_t p) {
    return (uint64_t)(p + 1) * c->threads > (uint64_t)c->rows * c->cols / c->vec;
}

bool rk_tile_copy_pass_begin(rk_kernel *k, const rk_tile_copy *c, uint32_t p) {
    bool partial = pass_partial(c, p);
    if (partial) {
        rk_value live = pass_live(k, c, p);
        rk_if_begin(k, live);
    }
    return partial;
}

static void pass_end(rk_kernel *k, bool partial) {
    if (partial) rk_if_end(k, NULL, 0);
}

void rk_tile_copy_issue(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_gview *g,
                        rk_value r0, rk_value c0, rk_value smem, rk_value stage) {
    if (c->gvec < c->vec) {
        rk_tile_copy_regs v;
        rk_tile_copy_fetch(k, c, l, g, r0, c0, &v);
        rk_tile_copy_put(k, c, l, &v, smem, stage);
        return;
    }
    for (uint32_t p = 0; p < c->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, c, p);
        rk_value r = rk_build_add(k, r0, l->row[p]);
        rk_value cc = rk_build_add(k, c0, l->col[p]);
        rk_value dst = rk_build_add(k, stage, l->dst[p]);
        one_chunk(k, c, g, r, cc, smem, dst);
        pass_end(k, partial);
    }
}

/* The held values of every pass, in the order of an if's results: the vectors, then for shifted units
 * the second vectors and the shifts. */
static uint32_t fetch_passes(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_gview *g,
                             rk_value r0, rk_value c0, int mode, rk_value *v) {
    uint32_t n = c->passes;
    for (uint32_t p = 0; p < n; p++) {
        rk_value live = {0};
        if (pass_partial(c, p)) live = pass_live(k, c, p);
        rk_value r = rk_build_add(k, r0, l->row[p]);
        rk_value cc = rk_build_add(k, c0, l->col[p]);
        chunk_regs h = fetch_chunk(k, c, g, r, cc, live, mode);
        v[p] = h.v;
        if (shifted(c)) v[n + p] = h.v1, v[2 * n + p] = h.sh;
    }
    return shifted(c) ? 3 * n : n;
}

static void regs_from(const rk_tile_copy *c, const rk_value *v, rk_tile_copy_regs *out) {
    uint32_t n = c->passes;
    for (uint32_t p = 0; p < n; p++) {
        out->v[p] = v[p];
        out->v1[p] = shifted(c) ? v[n + p] : (rk_value){0};
        out->sh[p] = shifted(c) ? v[2 * n + p] : (rk_value){0};
    }
}

/* if (cond) fetch in `mode` else fetch checking every chunk (FETCH_EDGE): the held values as res. */
static void fetch_either(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_gview *g,
                         rk_value r0, rk_value c0, rk_value cond, int mode, const rk_type *ty, rk_value *res) {
    rk_value then_v[3 * RK_TILE_COPY_MAX_PASSES], else_v[3 * RK_TILE_COPY_MAX_PASSES];
    uint32_t nres = shifted(c) ? 3 * c->passes : c->passes;
    rk_if_else_begin(k, cond, nres, ty, res);
    fetch_passes(k, c, l, g, r0, c0, mode, then_v);
    rk_else(k, then_v, nres);
    fetch_passes(k, c, l, g, r0, c0, FETCH_EDGE, else_v);
    rk_if_end(k, else_v, nres);
}

void rk_tile_copy_fetch(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_gview *g,
                        rk_value r0, rk_value c0, rk_tile_copy_regs *out) {
    if (c->async) rk_bug("rk_tile_copy_fetch: an async copy has no register half");
    rk_value res[3 * RK_TILE_COPY_MAX_PASSES];
    if (c->gvec == c->vec) {
        fetch_passes(k, c, l, g, r0, c0, FETCH_EDGE, res);
        regs_from(c, res, out);
        return;
    }
    /* Gathered: every tile but the last along the columns lies inside the
     * view, and there the pieces need no checks of their own. */
    rk_value cols = rk_const_i32(k, (int32_t)c->cols);
    rk_value end = rk_build_add(k, c0, cols);
    rk_value inside = rk_build_cmp(k, "le", end, g->cols);
    rk_type ty[3 * RK_TILE_COPY_MAX_PASSES];
    rk_type vt = rk_type_vec(k, (rk_type){c->elem}, c->vec);
    uint32_t n = c->passes, nres = shifted(c) ? 3 * n : n;
    for (uint32_t i = 0; i < nres; i++) ty[i] = i < 2 * n || !shifted(c) ? vt : RK_T_I32;
    if (!shifted(c)) {
        fetch_either(k, c, l, g, r0, c0, inside, FETCH_INSIDE, ty, res);
        regs_from(c, res, out);
        return;
    }
    /* Shifted units: a tile whose columns lie inside the view and whose rows end before the view's last
     * row (and that is not the view's first tile, whose first unit may start before an aligned
     * granule of an unaligned base) has every aligned window inside the matrix: no per-chunk test. */
    rk_value rows = rk_const_i32(k, (int32_t)c->rows);
    rk_value rend = rk_build_add(k, r0, rows);
    rk_value below = rk_build_cmp(k, "lt", rend, g->rows);
    rk_value origin = rk_build_or(k, r0, c0);
    rk_value z32 = rk_const_i32(k, 0);
    rk_value not_first = rk_build_cmp(k, "ne", origin, z32);
    rk_value in_rows = rk_build_and(k, below, not_first);
    rk_value interior = rk_build_and(k, inside, in_rows);
    rk_value fast[3 * RK_TILE_COPY_MAX_PASSES], mid[3 * RK_TILE_COPY_MAX_PASSES];
    rk_if_else_begin(k, interior, nres, ty, res);
    fetch_passes(k, c, l, g, r0, c0, FETCH_INTERIOR, fast);
    rk_else(k, fast, nres);
    fetch_either(k, c, l, g, r0, c0, inside, FETCH_INSIDE, ty, mid);
    rk_if_end(k, mid, nres);
    regs_from(c, res, out);
}

void rk_tile_copy_put(rk_kernel *k, const rk_tile_copy *c, const rk_tile_copy_lanes *l, const rk_tile_copy_regs *v,
                      rk_value smem, rk_value stage) {
    for (uint32_t p = 0; p < c->passes; p++) {
        bool partial = rk_tile_copy_pass_begin(k, c, p);
        rk_value dst = rk_build_add(k, stage, l->dst[p]);
        rk_value u = shifted(c) ? rk_tile_unit_shift(k, v->v[p], v->v1[p], v->sh[p]) : v->v[p];
        rk_store_smem(k, smem, &dst, u);
        pass_end(k, partial);
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
