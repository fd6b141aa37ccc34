/* rocke — tile helpers: row views. A view is (row pointer, length, aligned
 * flag, optional buffer view); loads/stores take 16-byte vector accesses when
 * every chunk is in range and otherwise go chunk by chunk, whole chunks still
 * one vector access, the rest per element, never touching memory past the
 * row (guarded accesses, or a buffer view whose out-of-range reads are 0 and
 * writes are dropped). Layer: tile. */
#include "rocke/tile.h"
#include "../base/base_int.h"

static rk_value ci(rk_kernel *k, int32_t v) { return rk_const_i32(k, v); }

rk_tail_mode rk_tile_default_tail(const rk_target *t) {
    return t && t->vendor == RK_VENDOR_AMD ? RK_TAIL_BUFFER : RK_TAIL_MASKED;
}

const char *rk_tail_mode_name(rk_tail_mode m) { return m == RK_TAIL_BUFFER ? "buffer" : "masked"; }

/* Elements between the vector-aligned address at or below element `elems`
 * of ptr and that element (i32, < vec): from the address itself, so a
 * tensor that starts inside a vector still gets aligned vector bodies. */
rk_value rk_tile_misalign(rk_kernel *k, rk_value ptr, rk_value elems, uint32_t esize, uint32_t vec) {
    uint32_t shift = 0;
    while ((1u << shift) < esize) shift++;
    rk_value addr = rk_build_ptrtoint(k, ptr);
    rk_value lowmask = rk_const_i64(k, (int64_t)vec * esize - 1);
    rk_value low = rk_build_and(k, addr, lowmask);
    rk_value sh = rk_const_i64(k, shift);
    rk_value lead = rk_build_lshr(k, low, sh);
    rk_value at = rk_build_add(k, elems, lead);
    rk_value vmask = rk_const_i64(k, (int64_t)vec - 1);
    rk_value mis = rk_build_and(k, at, vmask);
    return rk_build_trunc(k, mis, RK_T_I32);
}

/* The view of rows [row*stride, +len). `like` (split views) NULL: no
 * shift (element i is physical element i); otherwise see rk_tile_row_view_split. */
static rk_tile_row make_view(rk_kernel *k, rk_value ptr, rk_scalar elem, rk_value row, rk_value stride, rk_value len,
                             rk_value active, uint32_t vec, rk_tail_mode tail, bool split, const rk_tile_row *like,
                             uint32_t cap) {
    rk_tile_row r = {.elem = elem, .vec = vec, .tail = tail, .shifted = split && vec > 1};
    uint32_t esize = rk_tile_elem_bytes(elem);
    rk_value zero = ci(k, 0);
    rk_value row_eff = rk_build_select(k, active, row, zero);
    rk_value row64 = rk_build_zext(k, row_eff, RK_T_I64);
    rk_value stride64 = rk_build_zext(k, stride, RK_T_I64);
    rk_value elems = rk_build_mul(k, row64, stride64);
    if (!r.shifted) {
        /* the unsplit view, built in the order it always was (same IR) */
        rk_value bytes = rk_build_mul(k, elems, rk_const_i64(k, esize));
        r.base = rk_build_global_ptr_add(k, ptr, bytes);
        r.len = rk_build_select(k, active, len, zero);
        r.lo = zero;
        if (vec > 1) {
            rk_value low = rk_build_and(k, stride, ci(k, (int32_t)vec - 1));
            r.vec_ok = rk_build_cmp(k, "eq", low, zero);
        } else {
            r.vec_ok = rk_const_bool(k, true);
        }
    } else {
        /* the row's first element sits `mis` elements past a vector-aligned
         * address (from the actual address: a tensor may start anywhere an
         * element can): shift the view back by the split's shift, so chunk
         * boundaries fall on vector-aligned addresses */
        rk_value n = rk_build_select(k, active, len, zero);
        rk_value mis = rk_tile_misalign(k, ptr, elems, esize, vec);
        rk_value shift = mis;
        if (like) {
            shift = like->lo;
        } else if (cap) {
            /* a cached row holds `cap` elements: a row that would not fit
             * shifted stays unshifted (and takes the per-chunk scalar path) */
            rk_value need = rk_build_add(k, n, mis);
            rk_value fits = rk_build_cmp(k, "le", need, ci(k, (int32_t)cap));
            shift = rk_build_select(k, fits, mis, zero);
        }
        r.vec_ok = rk_build_cmp(k, "eq", mis, shift);
        r.lo = shift;
        rk_value shift64 = rk_build_zext(k, shift, RK_T_I64);
        rk_value first = rk_build_sub(k, elems, shift64);
        rk_value bytes = rk_build_mul(k, first, rk_const_i64(k, esize));
        r.base = rk_build_global_ptr_add(k, ptr, bytes);
        r.len = rk_build_add(k, n, shift);
    }
    if (tail == RK_TAIL_BUFFER) {
        /* the buffer view covers exactly the row's own elements (a shifted
         * view's base may lie before the tensor): its offsets count from the
         * row's first element, lo elements past base (rsrc_off) */
        rk_value first = r.base;
        if (r.shifted) {
            rk_value lo64 = rk_build_zext(k, r.lo, RK_T_I64);
            rk_value lob = rk_build_mul(k, lo64, rk_const_i64(k, esize));
            first = rk_build_global_ptr_add(k, r.base, lob);
        }
        rk_value cnt = r.shifted ? rk_build_sub(k, r.len, r.lo) : r.len;
        rk_value nbytes = rk_build_mul(k, cnt, ci(k, (int32_t)esize));
        r.rsrc = rk_build_buffer_rsrc(k, first, nbytes);
    }
    return r;
}

rk_tile_row rk_tile_row_view(rk_kernel *k, rk_value ptr, rk_scalar elem, rk_value row, rk_value stride,
                             rk_value len, rk_value active, uint32_t vec, rk_tail_mode tail) {
    return make_view(k, ptr, elem, row, stride, len, active, vec, tail, false, NULL, 0);
}

rk_tile_row rk_tile_row_view_split(rk_kernel *k, rk_value ptr, rk_scalar elem, rk_value row, rk_value stride,
                                   rk_value len, rk_value active, uint32_t vec, rk_tail_mode tail,
                                   const rk_tile_row *like, uint32_t cap) {
    return make_view(k, ptr, elem, row, stride, len, active, vec, tail, true, like, cap);
}

static rk_type chunk_type(rk_kernel *k, const rk_tile_row *r) {
    rk_type et = (rk_type){r->elem};
    return r->vec > 1 ? rk_type_vec(k, et, r->vec) : et;
}

static rk_value byte_off(rk_kernel *k, const rk_tile_row *r, rk_value idx) {
    return rk_build_mul(k, idx, ci(k, (int32_t)rk_tile_elem_bytes(r->elem)));
}

/* idx inside the row: idx < len, and idx >= lo for a split view (the
 * elements before lo belong to the row before, or to no tensor). */
static rk_value elem_valid(rk_kernel *k, const rk_tile_row *r, rk_value idx) {
    rk_value below_end = rk_build_cmp(k, "lt", idx, r->len);
    if (!r->shifted) return below_end;
    rk_value past_lo = rk_build_cmp(k, "ge", idx, r->lo);
    return rk_build_and(k, below_end, past_lo);
}

/* Byte offset of element idx in a buffer view; elements before lo of a
 * split view go past the end instead (read 0, writes dropped). */
/* The byte offset of element idx in the row's buffer view, which starts at
 * the row's first element (lo in a shifted view). */
static rk_value rsrc_off(rk_kernel *k, const rk_tile_row *r, rk_value idx) {
    if (!r->shifted) return byte_off(k, r, idx);
    rk_value rel = rk_build_sub(k, idx, r->lo);
    return byte_off(k, r, rel);
}

static rk_value buffer_off(rk_kernel *k, const rk_tile_row *r, rk_value idx) {
    rk_value voff = rsrc_off(k, r, idx);
    if (!r->shifted) return voff;
    /* the head's padding elements read 0 and drop stores: past the view's end */
    rk_value head = rk_build_cmp(k, "lt", idx, r->lo);
    rk_value end = rsrc_off(k, r, r->len);
    return rk_build_select(k, head, end, voff);
}

/* One element at idx, never reading outside the row. */
static rk_value load_elem(rk_kernel *k, const rk_tile_row *r, rk_value idx, double fill) {
    rk_value valid = elem_valid(k, r, idx);
    rk_value x;
    if (r->tail == RK_TAIL_BUFFER) {
        rk_value soff = ci(k, 0), voff = buffer_off(k, r, idx);
        x = rk_load_buffer(k, r->rsrc, voff, soff, (rk_type){r->elem}, 1);
        if (fill == 0.0) return x;          /* past the end the view already reads 0 */
    } else {
        rk_value safe = rk_build_select(k, valid, idx, r->shifted ? r->lo : ci(k, 0));
        x = rk_load_global(k, r->base, safe, 1);
    }
    rk_value f = rk_const_float(k, (rk_type){r->elem}, fill);
    return rk_build_select(k, valid, x, f);
}

/* The masked scalar path of one chunk addresses its elements from a pointer
 * to the chunk (constant element offsets) and tests i < rem, the elements
 * left in the row from the chunk. The per-element values then differ from
 * view to view, so the compiler cannot share `off + i` between the load of
 * x, of gamma and the store of y, which kept them all live across the
 * kernel's barriers. */
typedef struct tail_chunk {
    rk_value p;      /* ptr to the chunk's first element */
    rk_value rem;    /* i32: len - off */
    rk_value skip;   /* i32: lo - off (split views; elements i < skip are before the row) */
    bool shifted;
} tail_chunk;

static tail_chunk tail_chunk_of(rk_kernel *k, const rk_tile_row *r, rk_value off) {
    rk_value off64 = rk_build_zext(k, byte_off(k, r, off), RK_T_I64);
    rk_value p = rk_build_global_ptr_add(k, r->base, off64);
    rk_value rem = rk_build_sub(k, r->len, off);
    tail_chunk tc = {p, rem, {0}, r->shifted};
    if (r->shifted) tc.skip = rk_build_sub(k, r->lo, off);
    return tc;
}

static rk_value chunk_elem_valid(rk_kernel *k, const tail_chunk *tc, uint32_t i) {
    rk_value in_end = rk_build_cmp(k, "gt", tc->rem, ci(k, (int32_t)i));
    if (!tc->shifted) return in_end;
    rk_value past_lo = rk_build_cmp(k, "le", tc->skip, ci(k, (int32_t)i));
    return rk_build_and(k, in_end, past_lo);
}

/* Element i of a masked chunk, or fill past the row: a guarded load (a
 * predicated load once compiled), no clamped address to keep. */
static rk_value load_chunk_elem(rk_kernel *k, const rk_tile_row *r, const tail_chunk *tc, uint32_t i, double fill) {
    rk_type et = (rk_type){r->elem};
    rk_value x, y;
    rk_if_else_begin(k, chunk_elem_valid(k, tc, i), 1, &et, &x);
    y = rk_load_global(k, tc->p, ci(k, (int32_t)i), 1);
    rk_else(k, &y, 1);
    y = rk_const_float(k, et, fill);
    rk_if_end(k, &y, 1);
    return x;
}

static void store_elem(rk_kernel *k, const rk_tile_row *r, rk_value idx, rk_value x) {
    if (r->tail == RK_TAIL_BUFFER) {
        rk_value soff = ci(k, 0), voff = buffer_off(k, r, idx);
        rk_store_buffer(k, r->rsrc, voff, soff, x);
        return;
    }
    rk_value valid = elem_valid(k, r, idx);
    rk_if_begin(k, valid);
    rk_store_global(k, r->base, idx, x);
    rk_if_end(k, NULL, 0);
}

static rk_value load_vec(rk_kernel *k, const rk_tile_row *r, rk_value off) {
    if (r->tail == RK_TAIL_BUFFER) {
        rk_value soff = ci(k, 0), voff = rsrc_off(k, r, off);
        return rk_load_buffer(k, r->rsrc, voff, soff, (rk_type){r->elem}, r->vec);
    }
    return rk_load_global(k, r->base, off, r->vec);
}

static void store_vec(rk_kernel *k, const rk_tile_row *r, rk_value off, rk_value v) {
    if (r->tail == RK_TAIL_BUFFER) {
        rk_value soff = ci(k, 0), voff = rsrc_off(k, r, off);
        rk_store_buffer(k, r->rsrc, voff, soff, v);
    } else {
        rk_store_global(k, r->base, off, v);
    }
}

/* True when chunks from offset `first` to `last` are all whole and
 * vector-aligned (a split view's first chunk may hold its head). */
static rk_value all_full(rk_kernel *k, const rk_tile_row *r, rk_value first, rk_value last) {
    rk_value end = rk_build_add(k, last, ci(k, (int32_t)r->vec));
    rk_value fits = rk_build_cmp(k, "le", end, r->len);
    rk_value both = rk_build_and(k, fits, r->vec_ok);
    if (!r->shifted) return both;
    rk_value past_lo = rk_build_cmp(k, "ge", first, r->lo);
    return rk_build_and(k, both, past_lo);
}

/* A masked chunk's elements one by one (the chunk starts before the row's end). */
static rk_value load_masked_elems(rk_kernel *k, const rk_tile_row *r, const tail_chunk *tc, double fill) {
    rk_value e[16];
    for (uint32_t i = 0; i < r->vec; i++) e[i] = load_chunk_elem(k, r, tc, i, fill);
    return r->vec > 1 ? rk_build_vpack(k, e, r->vec) : e[0];
}

static rk_value fill_chunk(rk_kernel *k, const rk_tile_row *r, double fill) {
    rk_value e[16];
    for (uint32_t i = 0; i < r->vec; i++) e[i] = rk_const_float(k, (rk_type){r->elem}, fill);
    return r->vec > 1 ? rk_build_vpack(k, e, r->vec) : e[0];
}

/* One chunk element by element (the slow path). A masked chunk wholly past
 * the row's end is the fill without a load: when a row's vectors are a few
 * more than a power of two of threads, most threads' last chunk is such a
 * chunk, and each of its elements would otherwise cost a test and a branch
 * in every warp (the load and again the store). */
static rk_value load_chunk_scalar(rk_kernel *k, const rk_tile_row *r, rk_value off, double fill) {
    if (r->tail == RK_TAIL_MASKED) {
        tail_chunk tc = tail_chunk_of(k, r, off);
        rk_type ct = chunk_type(k, r);
        rk_value out, y;
        rk_if_else_begin(k, rk_build_cmp(k, "gt", tc.rem, ci(k, 0)), 1, &ct, &out);
        y = load_masked_elems(k, r, &tc, fill);
        rk_else(k, &y, 1);
        y = fill_chunk(k, r, fill);
        rk_if_end(k, &y, 1);
        return out;
    }
    rk_value e[16];
    for (uint32_t i = 0; i < r->vec; i++) {
        rk_value idx = i ? rk_build_add(k, off, ci(k, (int32_t)i)) : off;
        e[i] = load_elem(k, r, idx, fill);
    }
    return r->vec > 1 ? rk_build_vpack(k, e, r->vec) : e[0];
}

void rk_tile_row_load(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, double fill,
                      rk_value *out) {
    RK_ASSERT(n >= 1 && n <= RK_TILE_MAX_CHUNKS, "rk_tile_row_load: 1..RK_TILE_MAX_CHUNKS chunks");
    rk_type types[RK_TILE_MAX_CHUNKS];
    rk_value y[RK_TILE_MAX_CHUNKS];
    for (uint32_t c = 0; c < n; c++) types[c] = chunk_type(k, r);
    rk_if_else_begin(k, all_full(k, r, offs[0], offs[n - 1]), n, types, out);
    for (uint32_t c = 0; c < n; c++) y[c] = load_vec(k, r, offs[c]);
    rk_else(k, y, n);
    /* chunk by chunk, each whole one still one vector load: a chunk's scalar
     * elements are packed before the next chunk starts (few registers) */
    for (uint32_t c = 0; c < n; c++) {
        if (n == 1) {
            y[c] = load_chunk_scalar(k, r, offs[c], fill);
            continue;
        }
        rk_value e;
        rk_if_else_begin(k, all_full(k, r, offs[c], offs[c]), 1, &types[c], &y[c]);
        e = load_vec(k, r, offs[c]);
        rk_else(k, &e, 1);
        e = load_chunk_scalar(k, r, offs[c], fill);
        rk_if_end(k, &e, 1);
    }
    rk_if_end(k, y, n);
}

void rk_tile_row_load_f32(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, double fill,
                          rk_value *out) {
    rk_tile_row_load(k, r, offs, n, fill, out);
    for (uint32_t c = 0; c < n; c++) out[c] = rk_tile_to_f32(k, out[c]);
}

/* One chunk element by element (the slow path); a masked chunk wholly past
 * the row's end stores nothing (one test, as for its load). */
static void store_chunk_scalar(rk_kernel *k, const rk_tile_row *r, rk_value off, rk_value val) {
    if (r->tail == RK_TAIL_MASKED) {
        tail_chunk tc = tail_chunk_of(k, r, off);
        rk_if_begin(k, rk_build_cmp(k, "gt", tc.rem, ci(k, 0)));
        for (uint32_t i = 0; i < r->vec; i++) {
            rk_value x = r->vec > 1 ? rk_build_vextract(k, val, i) : val;
            rk_if_begin(k, chunk_elem_valid(k, &tc, i));
            rk_store_global(k, tc.p, ci(k, (int32_t)i), x);
            rk_if_end(k, NULL, 0);
        }
        rk_if_end(k, NULL, 0);
        return;
    }
    for (uint32_t i = 0; i < r->vec; i++) {
        rk_value x = r->vec > 1 ? rk_build_vextract(k, val, i) : val;
        rk_value idx = i ? rk_build_add(k, off, ci(k, (int32_t)i)) : off;
        store_elem(k, r, idx, x);
    }
}

void rk_tile_row_store(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, const rk_value *vals) {
    RK_ASSERT(n >= 1 && n <= RK_TILE_MAX_CHUNKS, "rk_tile_row_store: 1..RK_TILE_MAX_CHUNKS chunks");
    rk_if_begin(k, all_full(k, r, offs[0], offs[n - 1]));
    for (uint32_t c = 0; c < n; c++) store_vec(k, r, offs[c], vals[c]);
    rk_else(k, NULL, 0);
    for (uint32_t c = 0; c < n; c++) {
        if (n == 1) {
            store_chunk_scalar(k, r, offs[c], vals[c]);
            continue;
        }
        rk_if_begin(k, all_full(k, r, offs[c], offs[c]));
        store_vec(k, r, offs[c], vals[c]);
        rk_else(k, NULL, 0);
        store_chunk_scalar(k, r, offs[c], vals[c]);
        rk_if_end(k, NULL, 0);
    }
    rk_if_end(k, NULL, 0);
}

void rk_tile_row_store_f32(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n,
                           const rk_value *vals) {
    rk_value v[RK_TILE_MAX_CHUNKS];
    for (uint32_t c = 0; c < n; c++) v[c] = rk_tile_from_f32(k, vals[c], r->elem);
    rk_tile_row_store(k, r, offs, n, v);
}

rk_value rk_tile_row_whole(rk_kernel *k, const rk_tile_row *r, rk_value first, rk_value last) {
    return all_full(k, r, first, last);
}

void rk_tile_row_load_whole(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n, rk_value *out) {
    for (uint32_t c = 0; c < n; c++) out[c] = load_vec(k, r, offs[c]);
}

void rk_tile_row_store_whole(rk_kernel *k, const rk_tile_row *r, const rk_value *offs, uint32_t n,
                             const rk_value *vals) {
    for (uint32_t c = 0; c < n; c++) store_vec(k, r, offs[c], vals[c]);
}

rk_value rk_tile_row_load1(rk_kernel *k, const rk_tile_row *r, rk_value idx, double fill) {
    return load_elem(k, r, idx, fill);
}

rk_value rk_tile_row_load1_f32(rk_kernel *k, const rk_tile_row *r, rk_value idx, double fill) {
    return rk_tile_to_f32(k, load_elem(k, r, idx, fill));
}

void rk_tile_row_store1_f32(rk_kernel *k, const rk_tile_row *r, rk_value idx, rk_value v) {
    store_elem(k, r, idx, rk_tile_from_f32(k, v, r->elem));
}

rk_value rk_tile_chunk_valid(rk_kernel *k, const rk_tile_row *r, rk_value off) {
    rk_value m[16];
    tail_chunk tc = {{0}, rk_build_sub(k, r->len, off), {0}, r->shifted};   /* as the tail path */
    if (r->shifted) tc.skip = rk_build_sub(k, r->lo, off);
    for (uint32_t i = 0; i < r->vec; i++) m[i] = chunk_elem_valid(k, &tc, i);
    return r->vec > 1 ? rk_build_vpack(k, m, r->vec) : m[0];
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

void rk_tile_regs_load_packed(rk_kernel *k, const rk_tile_row *r, rk_value lt, uint32_t tpr, uint32_t n,
                              double fill, rk_tile_regs *regs) {
    rk_tile_regs_offsets(k, r, lt, tpr, n, regs);
    rk_tile_row_load(k, r, regs->off, n, fill, regs->v);
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
