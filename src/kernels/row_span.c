/* rocke — the span stage of the row families (stage=span). The rows
 * [row0, row0 + R) of a block are one contiguous span of a packed [M, N]
 * tensor: it is copied into LDS with 16-byte vector loads at aligned
 * addresses (only the span's first and last vector are partial, per
 * element), each row is read from LDS element by element (lane l of a row
 * takes elements l, l + tpr, ...: consecutive lanes, consecutive banks),
 * results go to the output's own LDS span and leave with aligned 16-byte
 * stores. Layer: kernels. */
#include "kern_int.h"

const char *const kn_stage_names[] = {"direct", "span", "auto", NULL};

/* NVIDIA's static shared memory limit per block; a little of it is kept
 * for the reductions' slots. */
#define KN_SPAN_STATIC_MAX 49152u
#define KN_SPAN_RESERVE 1024u

static uint32_t span_v(rk_scalar e) { return 16 / rk_tile_elem_bytes(e); }

/* LDS vectors a span may touch: R rows of at most cap elements after a
 * head of up to V - 1 (rows longer than cap are refused by check_shape). */
static uint64_t span_nvmax(const rk_row_knobs *k, rk_scalar e) {
    uint64_t V = span_v(e);
    uint64_t elems = (uint64_t)k->rows_per_block * kn_row_cap(k);
    return (elems + 2 * (V - 1)) / V;
}

uint64_t kn_span_bytes(const rk_row_knobs *k, const rk_scalar *elems, uint32_t n) {
    uint64_t b = 0;
    for (uint32_t i = 0; i < n; i++) b += span_nvmax(k, elems[i]) * 16;
    return b;
}

uint32_t kn_span_limit(const rk_target *t) {
    uint32_t cap = t->lds_bytes < KN_SPAN_STATIC_MAX ? t->lds_bytes : KN_SPAN_STATIC_MAX;
    return cap > KN_SPAN_RESERVE ? cap - KN_SPAN_RESERVE : 0;
}

/* The heuristic's budget: at most a quarter of an SM's / CU's LDS, so four
 * or more blocks stay resident. */
uint32_t kn_span_budget(const rk_target *t) {
    uint32_t lim = kn_span_limit(t), cu = t->lds_per_cu ? t->lds_per_cu : t->lds_bytes;
    return cu / 4 < lim ? cu / 4 : lim;
}

kn_span kn_span_open(rk_kernel *k, const rk_row_knobs *kn, rk_value ptr, rk_scalar elem, rk_value M, rk_value N) {
    kn_span sp = {.elem = elem, .V = span_v(elem), .block = kn->block_size, .N = N};
    uint64_t nvmax = span_nvmax(kn, elem);
    sp.iters = (uint32_t)((nvmax + kn->block_size - 1) / kn->block_size);
    RK_ASSERT(sp.iters <= RK_TILE_MAX_CHUNKS, "kn_span_open: at most RK_TILE_MAX_CHUNKS vectors a thread");
    uint32_t esize = rk_tile_elem_bytes(elem);
    rk_value R = kn_i32(k, (int32_t)kn->rows_per_block);
    rk_value bid = rk_build_block_id(k, 0);
    rk_value row0 = rk_build_mul(k, bid, R);
    rk_value left = rk_build_sub(k, M, row0);
    rk_value few = rk_build_cmp(k, "lt", left, R);
    rk_value rows = rk_build_select(k, few, left, R);
    rk_value n = rk_build_mul(k, rows, N);
    rk_value row64 = rk_build_zext(k, row0, RK_T_I64);
    rk_value n64 = rk_build_zext(k, N, RK_T_I64);
    rk_value s0 = rk_build_mul(k, row64, n64);
    sp.mis = rk_tile_misalign(k, ptr, s0, esize, sp.V);
    rk_value mis64 = rk_build_zext(k, sp.mis, RK_T_I64);
    rk_value first = rk_build_sub(k, s0, mis64);
    rk_value bytes = rk_build_mul(k, first, rk_const_i64(k, esize));
    sp.base = rk_build_global_ptr_add(k, ptr, bytes);
    sp.end = rk_build_add(k, sp.mis, n);
    rk_value up = rk_build_add(k, sp.end, kn_i32(k, (int32_t)sp.V - 1));
    uint32_t lv = 0;
    while ((1u << lv) < sp.V) lv++;
    sp.nv = rk_build_lshr(k, up, kn_i32(k, (int32_t)lv));
    uint32_t dims[1] = {(uint32_t)nvmax * sp.V};
    sp.lds = rk_build_smem_alloc(k, (rk_type){elem}, dims, 1);
    return sp;
}

/* Vector c of this thread: index i = tid + c*block, first LDS element o. */
static rk_value vec_first(rk_kernel *k, const kn_span *sp, rk_value tid, uint32_t c, rk_value *i) {
    *i = c ? rk_build_add(k, tid, kn_i32(k, (int32_t)(c * sp->block))) : tid;
    return rk_build_mul(k, *i, kn_i32(k, (int32_t)sp->V));
}

/* Whole vector inside the span: o >= mis and o + V <= end. */
static rk_value vec_whole(rk_kernel *k, const kn_span *sp, rk_value o) {
    rk_value past = rk_build_cmp(k, "ge", o, sp->mis);
    rk_value ov = rk_build_add(k, o, kn_i32(k, (int32_t)sp->V));
    rk_value fits = rk_build_cmp(k, "le", ov, sp->end);
    return rk_build_and(k, past, fits);
}

static rk_value elem_in(rk_kernel *k, const kn_span *sp, rk_value idx) {
    rk_value past = rk_build_cmp(k, "ge", idx, sp->mis);
    rk_value below = rk_build_cmp(k, "lt", idx, sp->end);
    return rk_build_and(k, past, below);
}

/* The span's first or last vector, element by element (0 outside the span). */
static rk_value load_partial(rk_kernel *k, const kn_span *sp, rk_value o) {
    rk_type et = (rk_type){sp->elem};
    rk_value e[16];
    for (uint32_t j = 0; j < sp->V; j++) {
        rk_value idx = j ? rk_build_add(k, o, kn_i32(k, (int32_t)j)) : o;
        rk_value x, y;
        rk_if_else_begin(k, elem_in(k, sp, idx), 1, &et, &x);
        y = rk_load_global(k, sp->base, idx, 1);
        rk_else(k, &y, 1);
        y = rk_const_float(k, et, 0.0);
        rk_if_end(k, &y, 1);
        e[j] = x;
    }
    return rk_build_vpack(k, e, sp->V);
}

void kn_span_load(rk_kernel *k, const kn_span *sp, rk_value tid) {
    rk_type vt = rk_type_vec(k, (rk_type){sp->elem}, sp->V);
    rk_value v[RK_TILE_MAX_CHUNKS], idx[RK_TILE_MAX_CHUNKS], off[RK_TILE_MAX_CHUNKS];
    /* every load first (in flight together), then the LDS stores */
    for (uint32_t c = 0; c < sp->iters; c++) {
        off[c] = vec_first(k, sp, tid, c, &idx[c]);
        rk_value y;
        rk_if_else_begin(k, vec_whole(k, sp, off[c]), 1, &vt, &v[c]);
        y = rk_load_global(k, sp->base, off[c], sp->V);
        rk_else(k, &y, 1);
        y = load_partial(k, sp, off[c]);
        rk_if_end(k, &y, 1);
    }
    for (uint32_t c = 0; c < sp->iters; c++) {
        rk_if_begin(k, rk_build_cmp(k, "lt", idx[c], sp->nv));
        rk_value at[1] = {off[c]};
        rk_store_smem(k, sp->lds, at, v[c]);
        rk_if_end(k, NULL, 0);
    }
}

void kn_span_store(rk_kernel *k, const kn_span *sp, rk_value tid) {
    for (uint32_t c = 0; c < sp->iters; c++) {
        rk_value i, o = vec_first(k, sp, tid, c, &i);
        rk_if_begin(k, rk_build_cmp(k, "lt", i, sp->nv));
        rk_value at[1] = {o};
        rk_value v = rk_load_smem(k, sp->lds, at, sp->V);
        rk_if_begin(k, vec_whole(k, sp, o));
        rk_store_global(k, sp->base, o, v);
        rk_else(k, NULL, 0);
        for (uint32_t j = 0; j < sp->V; j++) {
            rk_value ix = j ? rk_build_add(k, o, kn_i32(k, (int32_t)j)) : o;
            rk_value x = rk_build_vextract(k, v, j);
            rk_if_begin(k, elem_in(k, sp, ix));
            rk_store_global(k, sp->base, ix, x);
            rk_if_end(k, NULL, 0);
        }
        rk_if_end(k, NULL, 0);
        rk_if_end(k, NULL, 0);
    }
}

kn_span_row kn_span_row_of(rk_kernel *k, const kn_span *sp, const rk_tile_rows *g) {
    kn_span_row r = {.tpr = g->tpr};
    rk_value rs = g->rpb > 1 ? rk_build_mul(k, g->rg, sp->N) : kn_i32(k, 0);
    rk_value start = rk_build_add(k, sp->mis, rs);
    r.first = rk_build_add(k, start, g->lt);
    r.lt = g->lt;
    r.N = sp->N;
    r.active = g->active;
    return r;
}

/* Element j of the thread in its row (lt + j*tpr) and whether it is
 * inside the row (and the row inside the matrix). */
static rk_value elem_of(rk_kernel *k, const kn_span_row *r, uint32_t j, rk_value *valid) {
    rk_value el = j ? rk_build_add(k, r->lt, kn_i32(k, (int32_t)(j * r->tpr))) : r->lt;
    rk_value in = rk_build_cmp(k, "lt", el, r->N);
    *valid = rk_build_and(k, in, r->active);
    return el;
}

/* Its LDS index in the span r was made for. */
static rk_value row_elem(rk_kernel *k, const kn_span_row *r, uint32_t j, rk_value *valid) {
    elem_of(k, r, j, valid);
    return j ? rk_build_add(k, r->first, kn_i32(k, (int32_t)(j * r->tpr))) : r->first;
}

rk_value kn_span_elem(rk_kernel *k, const kn_span_row *r, uint32_t j, rk_value *valid) {
    return elem_of(k, r, j, valid);
}

void kn_span_read_f32(rk_kernel *k, const kn_span *sp, const kn_span_row *r, uint32_t n, double fill,
                      rk_value *out) {
    rk_value fillv = rk_const_f32(k, (float)fill);
    for (uint32_t j = 0; j < n; j++) {
        rk_value valid, idx = row_elem(k, r, j, &valid);
        /* outside the row: read the span's first element (always loaded) */
        rk_value safe = rk_build_select(k, valid, idx, sp->mis);
        rk_value at[1] = {safe};
        rk_value x = rk_tile_to_f32(k, rk_load_smem(k, sp->lds, at, 1));
        out[j] = rk_build_select(k, valid, x, fillv);
    }
}

void kn_span_write_f32(rk_kernel *k, const kn_span *sp, const kn_span_row *r, uint32_t n, const rk_value *vals) {
    for (uint32_t j = 0; j < n; j++) {
        rk_value valid, idx = row_elem(k, r, j, &valid);
        rk_value y = rk_tile_from_f32(k, vals[j], sp->elem);
        rk_if_begin(k, valid);
        rk_value at[1] = {idx};
        rk_store_smem(k, sp->lds, at, y);
        rk_if_end(k, NULL, 0);
    }
}
