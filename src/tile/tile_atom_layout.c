/* rocke — fragment indices of matrix atoms as IR: the lane maps of the atom
 * catalog (include/rocke/atoms.def) emitted as i32 shift/and/add arithmetic,
 * folded to constants when the lane is a constant. Layer: tile. */
#include "rocke/tile.h"
#include "../base/base_int.h"
#include "../ir/ir_int.h"

static const char *const frag_names[] = {"A", "B", "C"};

/* lane's value when it is an integer constant */
static bool const_lane(const rk_kernel *k, rk_value lane, int64_t *out) {
    const rk_op *d = rk_value_def(k, lane);
    return d && d->code == RK_OP_CONSTANT && rk_attrs_int(&d->attrs, "value", out);
}

/* ((lane >> shift) & mask) * stride, the stride as a shift when it is a power of two */
static rk_value lane_term(rk_kernel *k, const rk_lane_term *t, rk_value lane) {
    rk_value x = lane;
    if (t->shift) {
        rk_value sh = rk_const_i32(k, t->shift);
        x = rk_build_lshr(k, x, sh);
    }
    rk_value mask = rk_const_i32(k, t->mask);
    x = rk_build_and(k, x, mask);
    if (t->stride == 1) return x;
    if ((t->stride & (t->stride - 1)) == 0) {
        rk_value sh = rk_const_i32(k, __builtin_ctz(t->stride));
        return rk_build_shl(k, x, sh);
    }
    rk_value stride = rk_const_i32(k, t->stride);
    return rk_build_mul(k, x, stride);
}

/* One coordinate: the lane terms in IR, the slot terms summed on the host. */
static rk_value coord(rk_kernel *k, const rk_lane_term *terms, rk_value lane, uint32_t slot) {
    uint32_t fixed = 0;
    rk_value sum = {0};
    bool have = false;
    for (int i = 0; i < RK_LANE_MAX_TERMS; i++) {
        const rk_lane_term *t = &terms[i];
        if (!t->mask || !t->stride) continue;
        if (t->src == RK_LANE_SRC_SLOT) {
            fixed += ((slot >> t->shift) & t->mask) * t->stride;
            continue;
        }
        rk_value x = lane_term(k, t, lane);
        sum = have ? rk_build_add(k, sum, x) : x;
        have = true;
    }
    if (!have) return rk_const_i32(k, (int32_t)fixed);
    if (!fixed) return sum;
    rk_value f = rk_const_i32(k, (int32_t)fixed);
    return rk_build_add(k, sum, f);
}

rk_tile_frag_coord rk_tile_atom_coord(rk_kernel *k, rk_atom_id atom, rk_frag f, rk_value lane, uint32_t slot) {
    rk_tile_frag_coord out = {{0}, {0}, {0}};
    if (rk_builder_status(k) != RK_OK) return out;
    const rk_mma_atom *a = rk_mma_atom_get(atom);
    if (!a) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_tile_atom_coord: unknown matrix atom id %d (legal: 1..%d, the rows of "
                "include/rocke/atoms.def)", (int)atom, RK_ATOM__COUNT - 1);
        return out;
    }
    if ((unsigned)f > RK_FRAG_C) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_tile_atom_coord: unknown fragment %d of atom '%s' (legal: RK_FRAG_A, "
                "RK_FRAG_B, RK_FRAG_C)", (int)f, a->op_id);
        return out;
    }
    uint32_t len = rk_mma_atom_len(a, f);
    if (slot >= len) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_tile_atom_coord: slot %u of fragment %s of atom '%s' is out of range "
                "(0..%u)", slot, frag_names[f], a->op_id, len - 1);
        return out;
    }
    rk_type lt = rk_value_type(k, lane);
    if (!rk_type_eq(lt, RK_T_I32)) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_tile_atom_coord: the lane of atom '%s' must be i32, got %s", a->op_id,
                rk_type_name(k, lt));
        return out;
    }
    const rk_lane_map *m = rk_mma_atom_map(a, f);
    int64_t cl;
    if (const_lane(k, lane, &cl)) {
        if (cl < 0 || cl >= a->lanes) {
            ir_fail(k, RK_ERR_INVALID, NULL, "rk_tile_atom_coord: lane %lld is outside atom '%s' (0..%u)",
                    (long long)cl, a->op_id, a->lanes - 1u);
            return out;
        }
        rk_lane_coord p = rk_lane_map_eval(m, (uint32_t)cl, slot);
        out.row = rk_const_i32(k, (int32_t)p.row);
        out.col = rk_const_i32(k, (int32_t)p.col);
        out.batch = rk_const_i32(k, (int32_t)p.batch);
        return out;
    }
    out.row = coord(k, m->coord[RK_LANE_ROW], lane, slot);
    out.col = coord(k, m->coord[RK_LANE_COL], lane, slot);
    out.batch = coord(k, m->coord[RK_LANE_BATCH], lane, slot);
    return out;
}
