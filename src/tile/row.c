/* rocke — tile helpers: row views. A view is (row pointer, length, aligned
 * flag, optional buffer view); loads/stores take 16-byte vector accesses when
 * every chunk is in range and fall back to per-element accesses that never
 * touch memory past the row (clamped index + select, or a buffer view whose
 * out-of-range reads are 0 and writes are dropped). Layer: tile. */
#include "rocke/tile.h"
#include "../base/base_int.h"

static rk_value ci(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

rk_tail_mode rk_tile_default_tail(const rk_target *t) {
    return t && t->vendor == RK_VENDOR_AMD ? RK_TAIL_BUFFER : RK_TAIL_MASKED;
}

const char *rk_tail_mode_name(rk_tail_mode m) { return m == RK_TAIL_BUFFER ? "buffer" : "masked"; }

rk_tile_row rk_tile_row_view(rk_kernel *k, rk_value ptr, rk_scalar elem, rk_value row, rk_value stride,
                             rk_value len, rk_value active, uint32_t vec, rk_tail_mode tail) {
    rk_tile_row r = {.elem = elem, .vec = vec, .tail = tail};
    uint32_t esize = rk_tile_elem_bytes(elem);
    rk_value zero = ci(k, 0);
    rk_value row_eff = rk_build_select(k, active, row, zero);
    rk_value row64 = rk_build_convert(k, RK_OP_ZEXT, row_eff, RK_T_I64);
    rk_value stride64 = rk_build_convert(k, RK_OP_ZEXT, stride, RK_T_I64);
    rk_value elems = rk_build_mul(k, row64, stride64);
    rk_value bytes = rk_build_mul(k, elems, rk_const_i64(k, esize));
    r.base = rk_build_ptr_add(k, ptr, bytes);
    r.len = rk_build_select(k, active, len, zero);
    if (vec > 1) {
        rk_value low = rk_build_and(k, stride, ci(k, (int32_t)vec - 1));
        r.vec_ok = rk_build_cmp(k, "eq", low, zero);
    } else {
        r.vec_ok = rk_const_bool(k, true);
    }
    if (tail == RK_TAIL_BUFFER) {
        rk_value nbytes = rk_build_mul(k, r.len, ci(k, (int32_t)esize));
        r.rsrc = rk_build_buffer_rsrc(k, r.base, nbytes);
    }
    return r;
}

static rk_type chunk_type(rk_kernel *k, const rk_tile_row *r) {
    rk_type et = (rk_type){r->elem};
    return r->vec > 1 ? rk_type_vec(k, et, r->vec) : et;
}

static rk_value byte_off(rk_kernel *k, const rk_tile_row *r, rk_value idx) {
    return rk_build_mul(k, idx, ci(k, (int32_t)rk_tile_elem_bytes(r->elem)));
}

/* One element at idx, never reading outside the row. */
static rk_value load_elem(rk_kernel *k, const rk_tile_row *r, rk_value idx, double fill) {
    rk_value valid = rk_build_cmp(k, "lt", idx, r->len);
    rk_value x;
    if (r->tail == RK_TAIL_BUFFER) {
        x = rk_build_buffer_load(k, r->rsrc, byte_off(k, r, idx), ci(k, 0), (rk_type){r->elem}, 1);
        if (fill == 0.0) return x;          /* past the end the view already reads 0 */
    } else {
        rk_value safe = rk_build_select(k, valid, idx, ci(k, 0));
        x = rk_build_load(k, r->base, safe, 1);
    }
    rk_value f = rk_const_float(k, (rk_type){r->elem}, fill);
    return rk_build_select(k, valid, x, f);
}

static void store_elem(rk_kernel *k, const rk_tile_row *r, rk_value idx, rk_value x) {
    if (r->tail == RK_TAIL_BUFFER) {
        rk_build_buffer_store(k, r->rsrc, byte_off(k, r, idx), ci(k, 0), x);
        return;
    }
    rk_value valid = rk_build_cmp(k, "lt", idx, r->len);
    rk_if_begin(k, valid);
    rk_build_store(k, r->base, idx, x);
    rk_if_end(k, NULL, 0);
}

static rk_value load_vec(rk_kernel *k, const rk_tile_row *r, rk_value off) {
    if (r->tail == RK_TAIL_BUFFER)
        return rk_build_buffer_load(k, r->rsrc, byte_off(k, r, off), ci(k, 0), (rk_type){r->elem}, r->vec);
    return rk_build_load(k, r->base, off, r->vec);
}

static void store_vec(rk_kernel *k, const rk_tile_row *r, rk_value off, rk_value v) {
    if (r->tail == RK_TAIL_BUFFER) rk_build_buffer_store(k, r->rsrc, byte_off(k, r, off), ci(k, 0), v);
    else rk_build_store(k, r->base, off, v);
}

/* True when chunks up to offset `last` are all whole and vector-aligned. */
static rk_value all_full(rk_kernel *k, const rk_tile_row *r, rk_value last) {
    rk_value end = rk_build_add(k, last, ci(k, (int32_t)r->vec));
    rk_value fits = rk_build_cmp(k, "le", end, r->len);
    rk_value both = rk_build_and(k, fits, r->vec_ok);
    return both;
}

void rk_tile_row_load(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, double fill,
                      rk_value *out) {
    RK_ASSERT(n >= 1 && n <= RK_TILE_MAX_CHUNKS, "rk_tile_row_load: 1..RK_TILE_MAX_CHUNKS chunks");
    rk_type types[RK_TILE_MAX_CHUNKS];
    rk_value y[RK_TILE_MAX_CHUNKS];
    for (uint32_t c = 0; c < n; c++) types[c] = chunk_type(k, r);
    rk_if_else_begin(k, all_full(k, r, offs[n - 1]), n, types, out);
    for (uint32_t c = 0; c < n; c++) y[c] = load_vec(k, r, offs[c]);
    rk_else(k, y, n);
    for (uint32_t c = 0; c < n; c++) {
        rk_value e[16];
        for (uint32_t i = 0; i < r->vec; i++) {
            rk_value idx = i ? rk_build_add(k, offs[c], ci(k, (int32_t)i)) : offs[c];
            e[i] = load_elem(k, r, idx, fill);
        }
        y[c] = r->vec > 1 ? rk_build_pack(k, e, r->vec) : e[0];
    }
    rk_if_end(k, y, n);
}

void rk_tile_row_load_f32(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, double fill,
                          rk_value *out) {
    rk_tile_row_load(k, r, offs, n, fill, out);
    for (uint32_t c = 0; c < n; c++) out[c] = rk_tile_to_f32(k, out[c]);
}

void rk_tile_row_store(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, const rk_value *vals) {
    RK_ASSERT(n >= 1 && n <= RK_TILE_MAX_CHUNKS, "rk_tile_row_store: 1..RK_TILE_MAX_CHUNKS chunks");
    rk_if_begin(k, all_full(k, r, offs[n - 1]));
    for (uint32_t c = 0; c < n; c++) store_vec(k, r, offs[c], vals[c]);
    rk_else(k, NULL, 0);
    for (uint32_t c = 0; c < n; c++) {
        for (uint32_t i = 0; i < r->vec; i++) {
            rk_value idx = i ? rk_build_add(k, offs[c], ci(k, (int32_t)i)) : offs[c];
            rk_value x = r->vec > 1 ? rk_build_extract(k, vals[c], i) : vals[c];
            store_elem(k, r, idx, x);
        }
    }
    rk_if_end(k, NULL, 0);
}

void rk_tile_row_store_f32(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n,
                           const rk_value *vals) {
    rk_value v[RK_TILE_MAX_CHUNKS];
    for (uint32_t c = 0; c < n; c++) v[c] = rk_tile_from_f32(k, vals[c], r->elem);
    rk_tile_row_store(k, r, offs, n, v);
}

rk_value rk_tile_row_load1_f32(rk_kernel *k, const rk_tile_row *r, rk_value idx, double fill) {
    return rk_tile_to_f32(k, load_elem(k, r, idx, fill));
}

void rk_tile_row_store1_f32(rk_kernel *k, const rk_tile_row *r, rk_value idx, rk_value v) {
    store_elem(k, r, idx, rk_tile_from_f32(k, v, r->elem));
}

rk_value rk_tile_chunk_valid(rk_kernel *k, const rk_tile_row *r, rk_value off) {
    rk_value m[16];
    for (uint32_t i = 0; i < r->vec; i++) {
        rk_value idx = i ? rk_build_add(k, off, ci(k, (int32_t)i)) : off;
        m[i] = rk_build_cmp(k, "lt", idx, r->len);
    }
    return r->vec > 1 ? rk_build_pack(k, m, r->vec) : m[0];
}

void rk_tile_regs_offsets(rk_kernel *k, const rk_tile_row *r, rk_value lt, uint32_t tpr, uint32_t n,
                          rk_tile_regs *regs) {
    RK_ASSERT(n >= 1 && n <= RK_TILE_MAX_CHUNKS, "rk_tile_regs: 1..RK_TILE_MAX_CHUNKS chunks");
    regs->n = n;
    rk_value base = rk_build_mul(k, lt, ci(k, (int32_t)r->vec));
    for (uint32_t c = 0; c < n; c++)
        regs->off[c] = c ? rk_build_add(k, base, ci(k, (int32_t)(c * tpr * r->vec))) : base;
}

void rk_tile_regs_load(rk_kernel *k, const rk_tile_row *r, rk_value lt, uint32_t tpr, uint32_t n, double fill,
                       rk_tile_regs *regs) {
    rk_tile_regs_offsets(k, r, lt, tpr, n, regs);
    rk_tile_row_load_f32(k, r, regs->off, n, fill, regs->v);
}

/* ---- loops and thread geometry ---------------------------------------------------- */
rk_value rk_tile_grid_loop_begin(rk_kernel *k, rk_value count) {
    rk_value lo = rk_build_block_id(k, 0);
    rk_value step = rk_build_grid_dim(k, 0);
    return rk_for_begin(k, lo, count, step, NULL, 0, NULL, NULL, NULL);
}

void rk_tile_loop_end(rk_kernel *k) { rk_for_end(k, NULL, 0, NULL); }

static uint32_t log2u(uint32_t x) {
    uint32_t n = 0;
    while ((1u << n) < x) n++;
    return n;
}

rk_tile_rows rk_tile_rows_begin(rk_kernel *k, uint32_t block, uint32_t rpb, uint32_t wave, rk_value M) {
    rk_tile_rows g = {.block = block, .rpb = rpb, .tpr = block / rpb, .wave = wave};
    RK_ASSERT(rpb && block % rpb == 0, "rk_tile_rows_begin: rows per block must divide the block");
    g.tid = rk_build_thread_id(k, 0);
    if (rpb == 1) {
        g.rg = ci(k, 0);
        g.lt = g.tid;
    } else {
        g.rg = rk_build_lshr(k, g.tid, ci(k, (int32_t)log2u(g.tpr)));
        g.lt = rk_build_and(k, g.tid, ci(k, (int32_t)g.tpr - 1));
    }
    rk_value bid = rk_build_block_id(k, 0);
    if (rpb == 1) {
        g.row = bid;
    } else {
        rk_value first = rk_build_mul(k, bid, ci(k, (int32_t)rpb));
        g.row = rk_build_add(k, first, g.rg);
        /* every lane of a wave shares the row when a row spans whole waves: say
         * so, so row pointers and buffer views stay scalar (no waterfall loops) */
        if (g.tpr >= wave) g.row = rk_build_readfirstlane(k, g.row);
    }
    g.active = rk_build_cmp(k, "lt", g.row, M);
    return g;
}
