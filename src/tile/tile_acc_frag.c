/* rocke — accumulator fragments seen as rows (which lanes and slots share a
 * row, for softmax-style row reductions) and turned into A operands of a
 * second product (register re-layout or an LDS round trip), both decided on
 * the host from the catalog's lane maps (see tile_mma.h). Layer: tile. */
#include "rocke/tile_mma.h"
#include "../base/base_int.h"

/* ---- rows of an accumulator ------------------------------------------------------------------ */
static bool same_row(rk_lane_coord p, rk_lane_coord q) { return p.row == q.row && p.batch == q.batch; }

/* Every (lane, slot) coordinate of the accumulator, evaluated once: the
 * checks below compare all pairs. */
#define MAX_LANES 128
typedef struct ctab { rk_lane_coord at[MAX_LANES][RK_TILE_ACC_MAX_SLOTS]; } ctab;
static void ctab_fill(const rk_mma_atom *c, ctab *t) {
    RK_ASSERT(c->lanes <= MAX_LANES && c->c_len <= RK_TILE_ACC_MAX_SLOTS, "accumulator table: atom too large");
    for (uint32_t l = 0; l < c->lanes; l++)
        for (uint32_t s = 0; s < c->c_len; s++) t->at[l][s] = rk_lane_map_eval(c->c_map, l, s);
}

rk_status rk_tile_acc_rows_make(const rk_mma_atom *c, rk_tile_acc_rows *out) {
    memset(out, 0, sizeof *out);
    if (c->batch != 1)
        return rk_fail(RK_ERR_INVALID, "accumulator rows: %s holds %u independent blocks; row reductions take "
                       "atoms with one block", c->op_id, c->batch);
    if (c->c_len > RK_TILE_ACC_MAX_SLOTS)
        return rk_fail(RK_ERR_INVALID, "accumulator rows: %s has %u slots per lane (at most %d)", c->op_id, c->c_len,
                       RK_TILE_ACC_MAX_SLOTS);
    ctab *tab = rk_calloc(1, sizeof *tab);
    if (!tab) return rk_fail(RK_ERR_NOMEM, "accumulator rows: out of memory");
    ctab_fill(c, tab);
    rk_status st = RK_OK;
    /* a lane bit is a butterfly partner when flipping it never moves a slot to another row */
    for (uint32_t b = 0; (1u << b) < c->lanes; b++) {
        bool keeps = true;
        for (uint32_t l = 0; l < c->lanes && keeps; l++)
            for (uint32_t s = 0; s < c->c_len && keeps; s++)
                keeps = same_row(tab->at[l][s], tab->at[l ^ (1u << b)][s]);
        if (keeps) out->xor_mask[out->nmasks++] = 1u << b;
    }
    /* row groups: slots of one row in every lane */
    for (uint32_t s = 0; s < c->c_len; s++) {
        uint32_t g = out->nrows;
        for (uint32_t r = 0; r < out->nrows && g == out->nrows; r++) {
            bool all = true;
            for (uint32_t l = 0; l < c->lanes && all; l++)
                all = same_row(tab->at[l][s], tab->at[l][out->row_slot0[r]]);
            if (all) g = r;
        }
        if (g == out->nrows) out->row_slot0[out->nrows++] = s;
        out->row_of_slot[s] = g;
    }
    /* the partners and a group's slots must hold the whole row, and nothing else may */
    uint32_t inside = 0;
    for (uint32_t i = 0; i < out->nmasks; i++) inside |= out->xor_mask[i];
    for (uint32_t l = 0; l < c->lanes && !st; l++)
        for (uint32_t s = 0; s < c->c_len && !st; s++) {
            rk_lane_coord p = tab->at[l][s];
            uint32_t holders = 0;
            for (uint32_t l2 = 0; l2 < c->lanes && !st; l2++)
                for (uint32_t s2 = 0; s2 < c->c_len && !st; s2++)
                    if (same_row(p, tab->at[l2][s2])) {
                        if (((l ^ l2) & ~inside) || out->row_of_slot[s2] != out->row_of_slot[s])
                            st = rk_fail(RK_ERR_INVALID, "accumulator rows: in %s row %u is held by lanes %u and %u "
                                         "in slots the lane bits do not pair up", c->op_id, p.row, l, l2);
                        holders++;
                    }
            if (!st && holders != c->n)
                st = rk_fail(RK_ERR_INVALID, "accumulator rows: in %s row %u is held %u times, not once per column "
                             "(%u)", c->op_id, p.row, holders, c->n);
        }
    rk_free(tab, sizeof *tab);
    return st;
}

rk_value rk_tile_acc_row_reduce(rk_kernel *k, const rk_tile_acc_rows *r, rk_tile_red op, rk_value x) {
    for (uint32_t i = 0; i < r->nmasks; i++) {
        rk_value m = rk_const_i32(k, (int32_t)r->xor_mask[i]);
        rk_value other = rk_build_shuffle(k, "xor", x, m);
        x = rk_tile_combine(k, op, x, other);
    }
    return x;
}

/* ---- accumulators -> A fragments --------------------------------------------------------------- */
/* Where A slot s of fragment (p, q) comes from for lane l: accumulator atom
 * (i, j), slot t, held by lane *from. */
static void source_of(const rk_mma_atom *c, const ctab *tab, const rk_mma_atom *a, uint32_t p, uint32_t q, uint32_t l,
                      uint32_t s, uint32_t *i, uint32_t *j, uint32_t *t, uint32_t *from) {
    rk_lane_coord ac = rk_lane_map_eval(a->a_map, l, s);
    uint32_t row = p * a->m + ac.row, col = q * a->k + ac.col;
    *i = row / c->m;
    *j = col / c->n;
    uint32_t r0 = row % c->m, c0 = col % c->n;
    *t = UINT32_MAX;
    *from = UINT32_MAX;
    for (uint32_t l2 = 0; l2 < c->lanes; l2++)
        for (uint32_t s2 = 0; s2 < c->c_len; s2++) {
            rk_lane_coord cc = tab->at[l2][s2];
            if (cc.row == r0 && cc.col == c0 && (*from == UINT32_MAX || l2 == l)) {
                *t = s2;
                *from = l2;
            }
        }
}

/* The fragments of a (rows, cols) tile where p, q range over lcm-sized
 * blocks: checking one block of lcm(c->m, a->m) x lcm(c->n, a->k) suffices
 * (the maps repeat per atom). */
static uint32_t lcm(uint32_t x, uint32_t y) {
    uint32_t g = x, h = y;
    while (h) { uint32_t t = g % h; g = h; h = t; }
    return x / g * y;
}

bool rk_tile_acc_to_a_in_regs(const rk_mma_atom *c, const rk_mma_atom *a) {
    if (c->lanes != a->lanes || c->batch != 1 || a->batch != 1 || c->lanes > MAX_LANES ||
        c->c_len > RK_TILE_ACC_MAX_SLOTS)
        return false;
    ctab *tab = rk_calloc(1, sizeof *tab);
    if (!tab) return false;   /* the LDS path is always correct */
    ctab_fill(c, tab);
    uint32_t bm = lcm(c->m, a->m), bk = lcm(c->n, a->k);
    bool same = true;
    for (uint32_t p = 0; p < bm / a->m && same; p++)
        for (uint32_t q = 0; q < bk / a->k && same; q++)
            for (uint32_t s = 0; s < a->a_len && same; s++) {
                uint32_t i0, j0, t0, f0;
                source_of(c, tab, a, p, q, 0, s, &i0, &j0, &t0, &f0);
                for (uint32_t l = 0; l < a->lanes && same; l++) {
                    uint32_t i, j, t, from;
                    source_of(c, tab, a, p, q, l, s, &i, &j, &t, &from);
                    same = from == l && i == i0 && j == j0 && t == t0;
                }
            }
    rk_free(tab, sizeof *tab);
    return same;
}

rk_status rk_tile_acc_to_a_check(const rk_mma_atom *c, const rk_mma_atom *a, uint32_t rows, uint32_t cols) {
    if (c->lanes != a->lanes)
        return rk_fail(RK_ERR_INVALID, "accumulator to A: %s runs on %u lanes, %s on %u", c->op_id, c->lanes, a->op_id,
                       a->lanes);
    if (c->batch != 1 || a->batch != 1)
        return rk_fail(RK_ERR_INVALID, "accumulator to A: batched atoms (%s) are not supported; use an atom with one "
                       "block", c->batch != 1 ? c->op_id : a->op_id);
    if (a->a_len > RK_TILE_ACC_MAX_SLOTS || c->c_len > RK_TILE_ACC_MAX_SLOTS)
        return rk_fail(RK_ERR_INVALID, "accumulator to A: at most %d slots per lane", RK_TILE_ACC_MAX_SLOTS);
    uint32_t bm = lcm(c->m, a->m), bk = lcm(c->n, a->k);
    if (!rows || !cols || rows % bm || cols % bk)
        return rk_fail(RK_ERR_INVALID, "accumulator to A: a %ux%u tile must be a multiple of %ux%u (%s accumulators, "
                       "%s A fragments)", rows, cols, bm, bk, c->op_id, a->op_id);
    return RK_OK;
}

static void in_regs(rk_kernel *k, const rk_mma_atom *c, const rk_mma_atom *a, uint32_t rows, uint32_t cols,
                    const rk_value *acc, rk_scalar elem, rk_value *out) {
    uint32_t nj = cols / c->n, nq = cols / a->k, ni = rows / c->m;
    rk_value packed[256];
    RK_ASSERT(ni * nj <= RK_COUNTOF(packed), "accumulator to A: at most 256 accumulator atoms");
    for (uint32_t x = 0; x < ni * nj; x++) packed[x] = rk_tile_from_f32(k, acc[x], elem);
    ctab *tab = rk_calloc(1, sizeof *tab);
    RK_ASSERT(tab, "accumulator to A: out of memory");
    ctab_fill(c, tab);
    for (uint32_t p = 0; p < rows / a->m; p++)
        for (uint32_t q = 0; q < nq; q++) {
            rk_value e[RK_TILE_ACC_MAX_SLOTS];
            for (uint32_t s = 0; s < a->a_len; s++) {
                uint32_t i, j, t, from;
                source_of(c, tab, a, p, q, 0, s, &i, &j, &t, &from);
                e[s] = c->c_len == 1 ? packed[i * nj + j] : rk_build_vextract(k, packed[i * nj + j], t);
            }
            out[p * nq + q] = a->a_len == 1 ? e[0] : rk_build_vpack(k, e, a->a_len);
        }
    rk_free(tab, sizeof *tab);
}

static void through_lds(rk_kernel *k, const rk_mma_atom *c, const rk_mma_atom *a, uint32_t rows, uint32_t cols,
                        const rk_value *acc, rk_scalar elem, rk_value lane, const rk_tile_acc_scratch *sc,
                        rk_value *out) {
    uint32_t nj = cols / c->n, nq = cols / a->k, eb = sc->lds.elem_bytes;
    for (uint32_t i = 0; i < rows / c->m; i++)
        for (uint32_t j = 0; j < nj; j++) {
            rk_value v = rk_tile_from_f32(k, acc[i * nj + j], elem);
            for (uint32_t t = 0; t < c->c_len; t++) {
                rk_tile_frag_coord fc = rk_tile_atom_coord(k, c->id, RK_FRAG_C, lane, t);
                rk_ix row = rk_ix_add(k, rk_ix_v(fc.row), rk_ix_c(i * c->m));
                rk_ix col = rk_ix_add(k, rk_ix_v(fc.col), rk_ix_c(j * c->n));
                rk_ix byte = rk_tile_lds_offset(k, &sc->lds, row, col);
                rk_ix el = rk_ix_udiv(k, byte, rk_ix_c(eb));
                rk_value elv = rk_ix_value(k, el);
                rk_value at = rk_build_add(k, sc->base, elv);
                rk_value x = c->c_len == 1 ? v : rk_build_vextract(k, v, t);
                rk_store_smem(k, sc->smem, &at, x);
            }
        }
    rk_build_sync(k);
    rk_tile_operand op = {.frag = RK_FRAG_A, .k_inner = true, .lds = sc->lds};
    for (uint32_t p = 0; p < rows / a->m; p++)
        for (uint32_t q = 0; q < nq; q++) {
            rk_value mn0 = rk_const_i32(k, (int32_t)(p * a->m));
            rk_value k0 = rk_const_i32(k, (int32_t)(q * a->k));
            out[p * nq + q] = rk_tile_frag_load(k, a, &op, sc->smem, sc->base, lane, mn0, k0);
        }
}

void rk_tile_acc_to_a(rk_kernel *k, const rk_mma_atom *c, const rk_mma_atom *a, uint32_t rows, uint32_t cols,
                      const rk_value *acc, rk_scalar elem, rk_value lane, const rk_tile_acc_scratch *scratch,
                      rk_value *out) {
    RK_ASSERT(rk_tile_acc_to_a_check(c, a, rows, cols) == RK_OK, "rk_tile_acc_to_a: a tile that does not check");
    if (rk_tile_acc_to_a_in_regs(c, a)) {
        in_regs(k, c, a, rows, cols, acc, elem, out);
        return;
    }
    RK_ASSERT(scratch, "rk_tile_acc_to_a: the LDS path needs a scratch tile");
    RK_ASSERT(scratch->lds.rows == rows && scratch->lds.cols == cols && scratch->lds.elem_bytes == rk_tile_elem_bytes(elem),
              "rk_tile_acc_to_a: the scratch layout is not the tile's");
    through_lds(k, c, a, rows, cols, acc, elem, lane, scratch, out);
}
