/* rocke — matrix-atom operand fragments from LDS and accumulators (see
 * tile_mma.h). NVIDIA's 16-bit m16n8k16 atoms read each operand with one
 * ldmatrix: the x4 (A) or x2 (B) form hands lane l of each 8x8 matrix the
 * element pair (row l/4, cols 2(l%4), +1), which is the mma.sync fragment
 * order; the .trans form serves operands stored with K outer. The 8-bit
 * m16n8k32 atoms read K-inner operands with the same non-transposed forms:
 * a 16-byte matrix row is 16 K values, and lane l's word (row l/4, bytes
 * 4(l%4)..+3) is its 4 consecutive K of the fragment. .trans would move
 * 16-bit halves, so 8-bit operands stored K outer read the lane map's runs.
 * Every other atom reads the lane map's runs of LDS-consecutive elements as
 * vectors.
 * Layer: tile. */
#include "rocke/tile_mma.h"
#include "../base/base_int.h"

static bool is16(rk_scalar s) { return s == RK_S_F16 || s == RK_S_BF16; }
static bool is8(rk_scalar s) { return rk_scalar_bits(s) == 8; }

bool rk_tile_frag_uses_ldmatrix(const rk_mma_atom *a, const rk_tile_operand *op) {
    if (a->unit != RK_ATOM_UNIT_MMA_SYNC || a->m != 16 || a->n != 8) return false;
    if (a->k == 32 && is8(a->a_elem) && is8(a->b_elem) && a->a_len == 16 && a->b_len == 8)
        return op->k_inner && op->lds.elem_bytes == 1;
    return a->k == 16 && is16(a->a_elem) && is16(a->b_elem) && a->a_len == 8 && a->b_len == 4;
}

/* Elements in one 16-byte ldmatrix row of the atom's operand: the K step between matrices. */
static uint32_t row_elems(const rk_mma_atom *a, const rk_tile_operand *op) {
    rk_scalar e = op->frag == RK_FRAG_A ? a->a_elem : a->b_elem;
    return 128 / rk_scalar_bits(e);
}

/* The LDS (row, col) of fragment coordinate (mn, kk) of an operand. */
static void lds_rc(const rk_tile_operand *op, uint32_t mn, uint32_t kk, uint32_t *r, uint32_t *c) {
    *r = op->k_inner ? mn : kk;
    *c = op->k_inner ? kk : mn;
}

/* Flat LDS element of operand coordinate (mn0 + mn, k0 + kk) in the stage at
 * element `stage`: through the layout (row, col), swizzle included. */
static rk_value lds_index(rk_kernel *k, const rk_tile_operand *op, rk_value stage, rk_value mn0, rk_value mn,
                          rk_value k0, rk_value kk) {
    rk_value amn = rk_build_add(k, mn0, mn);
    rk_value ak = rk_build_add(k, k0, kk);
    rk_ix row = rk_ix_v(op->k_inner ? amn : ak), col = rk_ix_v(op->k_inner ? ak : amn);
    rk_ix byte = rk_tile_lds_offset(k, &op->lds, row, col);
    rk_ix el = rk_ix_udiv(k, byte, rk_ix_c(op->lds.elem_bytes));
    rk_value elv = rk_ix_value(k, el);
    return rk_build_add(k, stage, elv);
}

/* ---- ldmatrix -------------------------------------------------------------------------- */
/* Which 8x8 matrix lane group j (lane / 8) of an ldmatrix reads: its MN half
 * (0, 1: +8 along M or N) and its K half (+1 row of 16 bytes when K inner,
 * +8 rows when K outer). x4 A: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7,
 * k 8-15), (m 8-15, k 8-15); x2 B: (n 0-7, k 0-7), (n 0-7, k 8-15); x4 B
 * pair: those of atom n0, then of atom n0 + 8. */
static void ldm_halves(rk_frag f, bool pair, uint32_t j, uint32_t *mn_half, uint32_t *k_half) {
    if (f == RK_FRAG_A) { *mn_half = j & 1; *k_half = j >> 1 & 1; }
    else { *k_half = j & 1; *mn_half = pair ? j >> 1 & 1 : 0; }
}

/* Lane i's row address, as (mn, kk) offsets from (mn0, k0). */
static void ldm_lane(const rk_mma_atom *a, const rk_tile_operand *op, bool pair, uint32_t i, uint32_t *mn,
                     uint32_t *kk) {
    uint32_t r = i % 8, re = row_elems(a, op), mh, kh;
    ldm_halves(op->frag, pair, i / 8 % 4, &mh, &kh);
    if (op->k_inner) { *mn = r + 8 * mh; *kk = re * kh; }
    else { *mn = 8 * mh; *kk = r + 8 * kh; }
}

/* One ldmatrix of `num` matrices (x4 A, x2 B, x4 B pair) as raw i32 words. */
static rk_value ldmatrix_words(rk_kernel *k, const rk_mma_atom *a, const rk_tile_operand *op, bool pair,
                               rk_value smem, rk_value stage, rk_value lane, rk_value mn0, rk_value k0) {
    uint32_t num = op->frag == RK_FRAG_A || pair ? 4 : 2;
    /* lane -> (j, r): the matrix's halves from j's bits, as IR (ldm_halves) */
    rk_value c8 = rk_const_i32(k, 8), c7 = rk_const_i32(k, 7), c3 = rk_const_i32(k, 3);
    /* the K step between matrices (k_inner): 8 16-bit or 16 8-bit elements */
    rk_value cre = row_elems(a, op) == 8 ? c8 : rk_const_i32(k, (int32_t)row_elems(a, op));
    rk_value r = rk_build_and(k, lane, c7);
    rk_value j = rk_build_lshr(k, lane, c3);
    rk_value one = rk_const_i32(k, 1);
    rk_value jlo = rk_build_and(k, j, one);
    rk_value jhi0 = rk_build_lshr(k, j, one);
    rk_value jhi = rk_build_and(k, jhi0, one);
    bool is_a = op->frag == RK_FRAG_A;
    rk_value mh = is_a ? jlo : pair ? jhi : (rk_value){0}, kh = is_a ? jhi : jlo;
    rk_value kstep = rk_build_mul(k, kh, op->k_inner ? cre : c8);
    rk_value mn, kk;
    if (op->k_inner) {
        mn = r;
        if (mh.id) {
            rk_value m8 = rk_build_mul(k, mh, c8);
            mn = rk_build_add(k, r, m8);
        }
        kk = kstep;
    } else {
        mn = mh.id ? rk_build_mul(k, mh, c8) : rk_const_i32(k, 0);
        kk = rk_build_add(k, r, kstep);
    }
    rk_value at = lds_index(k, op, stage, mn0, mn, k0, kk);
    rk_type ti = rk_type_vec(k, RK_T_I32, num);
    rk_ldmatrix_opts o = {.trans = RK_SOME(!op->k_inner)};
    return rk_build_ldmatrix_ex(k, smem, &at, ti, num, &o);
}

/* Words [w0, w0 + n) of an ldmatrix result as the operand's element vector. */
static rk_value words_as_frag(rk_kernel *k, const rk_mma_atom *a, const rk_tile_operand *op, rk_value raw,
                              uint32_t w0, uint32_t n, uint32_t of) {
    rk_value w = raw;
    if (n != of) {
        int32_t mask[4];
        for (uint32_t i = 0; i < n; i++) mask[i] = (int32_t)(w0 + i);
        w = rk_build_vshuffle(k, raw, raw, mask, n);
    }
    rk_scalar e = op->frag == RK_FRAG_A ? a->a_elem : a->b_elem;
    rk_type tv = rk_type_vec(k, (rk_type){e}, n * 32 / rk_scalar_bits(e));
    return rk_build_vbitcast(k, w, tv);
}

static rk_value frag_ldmatrix(rk_kernel *k, const rk_mma_atom *a, const rk_tile_operand *op, rk_value smem,
                              rk_value stage, rk_value lane, rk_value mn0, rk_value k0) {
    uint32_t num = op->frag == RK_FRAG_A ? 4 : 2;
    rk_value raw = ldmatrix_words(k, a, op, false, smem, stage, lane, mn0, k0);
    return words_as_frag(k, a, op, raw, 0, num, num);
}

/* ---- lane-map driven reads ------------------------------------------------------------------ */
/* Length of the run of slots starting at s that are LDS-consecutive for every
 * lane (and aligned to the run's bytes), capped by 16 bytes. */
static uint32_t run_at(const rk_mma_atom *a, const rk_tile_operand *op, uint32_t s, uint32_t len) {
    const rk_lane_map *m = rk_mma_atom_map(a, op->frag);
    uint32_t eb = op->lds.elem_bytes, best = 1;
    for (uint32_t n = 2; s + n <= len && n * eb <= 16; n *= 2) {
        bool ok = (op->lds.sw_bits == 0 || (1u << op->lds.sw_base) >= n * eb);
        for (uint32_t l = 0; l < a->lanes && ok; l++) {
            rk_lane_coord p0 = rk_lane_map_eval(m, l, s);
            uint32_t mn0 = op->frag == RK_FRAG_A ? p0.row : p0.col, k0 = op->frag == RK_FRAG_A ? p0.col : p0.row;
            uint32_t r0, c0;
            lds_rc(op, mn0, k0, &r0, &c0);
            if (c0 % n) ok = false;
            for (uint32_t i = 1; i < n && ok; i++) {
                rk_lane_coord p = rk_lane_map_eval(m, l, s + i);
                uint32_t mn = op->frag == RK_FRAG_A ? p.row : p.col, kk = op->frag == RK_FRAG_A ? p.col : p.row;
                uint32_t r, c;
                lds_rc(op, mn, kk, &r, &c);
                ok = r == r0 && c == c0 + i;
            }
        }
        if (ok) best = n;
        else break;
    }
    return best;
}

static rk_value frag_runs(rk_kernel *k, const rk_mma_atom *a, const rk_tile_operand *op, rk_value smem,
                          rk_value stage, rk_value lane, rk_value mn0, rk_value k0) {
    uint32_t len = rk_mma_atom_len(a, op->frag);
    rk_value e[64];
    RK_ASSERT(len <= RK_COUNTOF(e), "fragment longer than 64 elements");
    for (uint32_t s = 0; s < len;) {
        uint32_t n = run_at(a, op, s, len);
        rk_tile_frag_coord fc = rk_tile_atom_coord(k, a->id, op->frag, lane, s);
        rk_value fmn = op->frag == RK_FRAG_A ? fc.row : fc.col, fk = op->frag == RK_FRAG_A ? fc.col : fc.row;
        rk_value at = lds_index(k, op, stage, mn0, fmn, k0, fk);
        rk_value v = rk_load_smem(k, smem, &at, n);
        if (n == 1) e[s] = v;
        else
            for (uint32_t i = 0; i < n; i++) e[s + i] = rk_build_vextract(k, v, i);
        s += n;
    }
    return len == 1 ? e[0] : rk_build_vpack(k, e, len);
}

rk_value rk_tile_frag_load(rk_kernel *k, const rk_mma_atom *a, const rk_tile_operand *op, rk_value smem,
                           rk_value stage, rk_value lane, rk_value mn0, rk_value k0) {
    if (rk_tile_frag_uses_ldmatrix(a, op)) return frag_ldmatrix(k, a, op, smem, stage, lane, mn0, k0);
    return frag_runs(k, a, op, smem, stage, lane, mn0, k0);
}

bool rk_tile_frag_load_b_pair(rk_kernel *k, const rk_mma_atom *a, const rk_tile_operand *op, rk_value smem,
                              rk_value stage, rk_value lane, rk_value n0, rk_value k0, rk_value out[2]) {
    if (op->frag != RK_FRAG_B || !rk_tile_frag_uses_ldmatrix(a, op)) return false;
    rk_value raw = ldmatrix_words(k, a, op, true, smem, stage, lane, n0, k0);
    out[0] = words_as_frag(k, a, op, raw, 0, 2, 4);
    out[1] = words_as_frag(k, a, op, raw, 2, 2, 4);
    return true;
}

rk_value rk_tile_acc_zero(rk_kernel *k, const rk_mma_atom *a) {
    rk_type t = rk_type_vec(k, (rk_type){a->c_elem}, a->c_len);
    return rk_build_constant_vec(k, t, 0.0);
}

uint32_t rk_tile_acc_col_run(const rk_mma_atom *a) {
    if (a->c_len % 2) return 1;
    for (uint32_t l = 0; l < a->lanes; l++)
        for (uint32_t s = 0; s + 1 < a->c_len; s += 2) {
            rk_lane_coord p = rk_lane_map_eval(a->c_map, l, s), q = rk_lane_map_eval(a->c_map, l, s + 1);
            if (p.row != q.row || q.col != p.col + 1 || p.col % 2 || p.batch != q.batch) return 1;
        }
    return 2;
}

/* Ways of one ldmatrix (single or B pair) over its address-giving lanes. */
static uint32_t ldm_conflicts(const rk_mma_atom *a, const rk_tile_operand *op, bool pair) {
    uint32_t off[32], lanes = op->frag == RK_FRAG_A || pair ? 32 : 16;
    for (uint32_t i = 0; i < lanes; i++) {
        uint32_t mn, kk, r, c;
        ldm_lane(a, op, pair, i, &mn, &kk);
        lds_rc(op, mn, kk, &r, &c);
        off[i] = rk_lds_offset(&op->lds, r, c);
    }
    return rk_lds_conflict_ways(off, lanes, 16, 32, NULL);
}

uint32_t rk_tile_frag_pair_conflicts(const rk_mma_atom *a, const rk_tile_operand *op) {
    if (op->frag == RK_FRAG_B && rk_tile_frag_uses_ldmatrix(a, op)) return ldm_conflicts(a, op, true);
    return rk_tile_frag_conflicts(a, op);
}

uint32_t rk_tile_frag_conflicts(const rk_mma_atom *a, const rk_tile_operand *op) {
    uint32_t off[128], eb = op->lds.elem_bytes, n = a->lanes > 128 ? 128 : a->lanes;
    if (rk_tile_frag_uses_ldmatrix(a, op)) return ldm_conflicts(a, op, false);
    /* the first run of the fragment, every lane */
    uint32_t len = rk_mma_atom_len(a, op->frag), run = run_at(a, op, 0, len);
    const rk_lane_map *m = rk_mma_atom_map(a, op->frag);
    for (uint32_t l = 0; l < n; l++) {
        rk_lane_coord p = rk_lane_map_eval(m, l, 0);
        uint32_t mn = op->frag == RK_FRAG_A ? p.row : p.col, kk = op->frag == RK_FRAG_A ? p.col : p.row, r, c;
        lds_rc(op, mn, kk, &r, &c);
        off[l] = rk_lds_offset(&op->lds, r % op->lds.rows, c % op->lds.cols);
    }
    uint32_t bytes = run * eb < 4 ? 4 : run * eb;
    return rk_lds_conflict_ways(off, n, bytes, 32, NULL);
}
