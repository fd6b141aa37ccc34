/* rocke — the typed builders written by hand: rows whose rule the generator
 * cannot read from the table (constants, vector shapes, LDS allocations,
 * matrix atoms, inline assembly, wgmma_wait_group) or whose C form predates
 * it (axis numbers, waitcnt counters), and the by-opcode forms. Layer: ir. */
#include "ir_int.h"
#include "../base/fp.h"

/* ---- constants ---------------------------------------------------------------------------- */
rk_value rk_const_int(rk_kernel *k, rk_type t, int64_t v) {
    rk_op *op = rk_emit(k, RK_OP_CONSTANT, NULL, 0, &t, 1);
    ir_arg_int(k, op, ir_key_value, v);
    ir_arg_type(k, op, ir_key_ity, t);
    return ir_built(k, op);
}
rk_value rk_const_i32(rk_kernel *k, int32_t v) { return rk_const_int(k, RK_T_I32, v); }
rk_value rk_const_i64(rk_kernel *k, int64_t v) { return rk_const_int(k, RK_T_I64, v); }
rk_value rk_const_bool(rk_kernel *k, bool v) { return rk_const_int(k, RK_T_I1, v ? 1 : 0); }

/* The literal as the type will hold it, so every consumer sees one value. */
static double round_to(rk_type t, double v) {
    switch (rk_type_scalar(t)) {
    case RK_S_F32: return (double)(float)v;
    case RK_S_F16: return (double)rk_f16_to_f32(rk_f64_to_f16(v));
    case RK_S_BF16: return (double)rk_bf16_to_f32(rk_f64_to_bf16(v));
    default: return v;
    }
}

rk_value rk_const_float(rk_kernel *k, rk_type t, double v) {
    if (!ir_live(k)) return (rk_value){0};
    if (!rk_scalar_is_float(rk_type_scalar(t))) {
        ir_fail(k, RK_ERR_INVALID, NULL, "arith.constant: rk_const_float needs f16, bf16, f32 or f64, got %s",
                rk_type_name(k, t));
        return (rk_value){0};
    }
    rk_op *op = rk_emit(k, RK_OP_CONSTANT, NULL, 0, &t, 1);
    ir_arg_num(k, op, ir_key_value, round_to(t, v));
    ir_arg_type(k, op, ir_key_ity, t);
    return ir_built(k, op);
}
rk_value rk_const_f32(rk_kernel *k, float v) { return rk_const_float(k, RK_T_F32, v); }

rk_value rk_build_constant(rk_kernel *k, rk_type t, double v) {
    if (!ir_live(k)) return (rk_value){0};
    if (rk_scalar_is_float(rk_type_scalar(t))) return rk_const_float(k, t, v);
    if (!rk_scalar_is_int(rk_type_scalar(t))) {
        ir_fail(k, RK_ERR_INVALID, NULL, "arith.constant: the type must be an int (i1..i64) or float (f16 bf16 f32 f64) "
                "scalar, got %s", rk_type_name(k, t));
        return (rk_value){0};
    }
    /* 2^53: every integer up to it is a double exactly */
    if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0) || v != (double)(int64_t)v) {
        ir_fail(k, RK_ERR_INVALID, NULL, "arith.constant: %g is not an integer within +-2^53 (rk_const_int takes "
                "any 64-bit value)", v);
        return (rk_value){0};
    }
    return rk_const_int(k, t, (int64_t)v);
}

rk_value rk_build_constant_vec(rk_kernel *k, rk_type vt, double fill) {
    rk_op *op = rk_emit(k, RK_OP_CONSTANT_VEC, NULL, 0, &vt, 1);
    rk_type et = ir_telem(k, vt);
    if (rk_scalar_is_int(rk_type_scalar(et))) ir_arg_int(k, op, ir_key_fill, (int64_t)fill);
    else ir_arg_num(k, op, ir_key_fill, round_to(et, fill));
    ir_arg_type(k, op, ir_key_elem, et);
    ir_arg_int(k, op, ir_key_vec, ir_tcount(k, vt));
    return ir_built(k, op);
}

/* ---- vector shapes ------------------------------------------------------------------------- */
rk_value rk_build_vsplat(rk_kernel *k, rk_value s, uint32_t n) {
    if (!ir_live(k)) return (rk_value){0};
    rk_type t = rk_type_vec(k, ir_vtype(k, s), n);
    if (!rk_type_ok(t)) { ir_fail(k, RK_ERR_INVALID, NULL, "vector.splat: %s", rk_error_message()); return (rk_value){0}; }
    rk_op *op = rk_emit(k, RK_OP_VSPLAT, &s, 1, &t, 1);
    ir_arg_int(k, op, ir_key_vec, n);
    return ir_built(k, op);
}

rk_value rk_build_vpack(rk_kernel *k, const rk_value *elems, uint32_t n) {
    if (!ir_live(k)) return (rk_value){0};
    if (n == 0 || !elems) { ir_fail(k, RK_ERR_INVALID, NULL, "vector.pack needs at least one element"); return (rk_value){0}; }
    rk_type et = ir_vtype(k, elems[0]);
    rk_type t = rk_type_vec(k, et, n);
    if (!rk_type_ok(t)) { ir_fail(k, RK_ERR_INVALID, NULL, "vector.pack: %s", rk_error_message()); return (rk_value){0}; }
    rk_op *op = rk_emit(k, RK_OP_VPACK, elems, n, &t, 1);
    ir_arg_type(k, op, ir_key_elem, et);
    ir_arg_int(k, op, ir_key_vec, n);
    return ir_built(k, op);
}

rk_value rk_build_vconcat(rk_kernel *k, rk_value a, rk_value b) {
    if (!ir_live(k)) return (rk_value){0};
    const rk_value in[] = {a, b};
    rk_type ta = ir_vtype(k, a);
    rk_type t = ir_vec_of(k, RK_OP_VCONCAT, ir_telem(k, ta), (int64_t)ir_tcount(k, ta) + ir_tcount(k, ir_vtype(k, b)));
    return ir_built(k, rk_emit(k, RK_OP_VCONCAT, in, 2, &t, 1));
}

rk_value rk_build_vshuffle(rk_kernel *k, rk_value a, rk_value b, const int32_t *mask, uint32_t n) {
    if (!ir_live(k)) return (rk_value){0};
    if (n > 4096 || (n && !mask)) {
        ir_fail(k, RK_ERR_INVALID, NULL, "vector.shuffle: the mask needs 1..4096 lanes%s", mask ? "" : ", got NULL");
        return (rk_value){0};
    }
    const rk_value in[] = {a, b};
    rk_type t = ir_vec_of(k, RK_OP_VSHUFFLE, ir_telem(k, ir_vtype(k, a)), n);
    rk_op *op = rk_emit(k, RK_OP_VSHUFFLE, in, 2, &t, 1);
    int64_t m[4096];
    for (uint32_t i = 0; i < n; i++) m[i] = mask[i];
    rk_op_set_int_list(k, op, ir_key_mask, m, n);
    return ir_built(k, op);
}

/* ---- work-item identity ------------------------------------------------------------------- */
static rk_value build_id(rk_kernel *k, rk_opcode code, int axis) {
    static const char *const axes[] = {"x", "y", "z"};
    if (!ir_live(k)) return (rk_value){0};
    if (axis < 0 || axis > 2) {
        ir_fail(k, RK_ERR_INVALID, NULL, "%s: axis must be 0, 1 or 2 (x, y, z), got %d", rk_opcode_name(code), axis);
        return (rk_value){0};
    }
    rk_type t = RK_T_I32;
    rk_op *op = rk_emit(k, code, NULL, 0, &t, 1);
    ir_arg_str(k, op, ir_key_axis, axes[axis]);
    return ir_built(k, op);
}
rk_value rk_build_thread_id(rk_kernel *k, int axis) { return build_id(k, RK_OP_THREAD_ID, axis); }
rk_value rk_build_block_id(rk_kernel *k, int axis) { return build_id(k, RK_OP_BLOCK_ID, axis); }
rk_value rk_build_block_dim(rk_kernel *k, int axis) { return build_id(k, RK_OP_BLOCK_DIM, axis); }
rk_value rk_build_grid_dim(rk_kernel *k, int axis) { return build_id(k, RK_OP_GRID_DIM, axis); }

/* ---- LDS allocations, waits ------------------------------------------------------------------ */
rk_value rk_build_smem_alloc_ex(rk_kernel *k, rk_type elem, const uint32_t *dims, uint32_t rank,
                                const rk_smem_alloc_opts *opts) {
    if (!ir_live(k)) return (rk_value){0};
    rk_type t = rk_type_smem(k, elem, dims, rank);
    if (!rk_type_ok(t)) { ir_fail(k, RK_ERR_INVALID, NULL, "tile.smem_alloc: %s", rk_error_message()); return (rk_value){0}; }
    rk_op *op = rk_emit(k, RK_OP_SMEM_ALLOC, NULL, 0, &t, 1);
    if (opts) {
        ir_opt_bool(k, op, "exclusive", opts->exclusive);
        ir_opt_int(k, op, ir_key_align, opts->align);
    }
    return ir_built(k, op);
}
rk_value rk_build_smem_alloc(rk_kernel *k, rk_type elem, const uint32_t *dims, uint32_t rank) {
    return rk_build_smem_alloc_ex(k, elem, dims, rank, NULL);
}

void rk_build_s_waitcnt(rk_kernel *k, int vmcnt, int lgkmcnt, int expcnt) {
    rk_op *op = rk_emit(k, RK_OP_S_WAITCNT, NULL, 0, NULL, 0);
    ir_arg_int(k, op, ir_key_vmcnt, vmcnt);
    ir_arg_int(k, op, ir_key_lgkmcnt, lgkmcnt);
    ir_arg_int(k, op, ir_key_expcnt, expcnt);
    ir_built_void(k, op);
}

/* ---- matrix atoms, wgmma groups, inline asm ------------------------------------------------------- */
rk_value rk_build_mma_arr(rk_kernel *k, const char *op_id, const rk_value *in, uint32_t n, const rk_mma_opts *opts) {
    if (!ir_live(k)) return (rk_value){0};
    if (n < 3 || !in) {
        ir_fail(k, RK_ERR_INVALID, NULL, "tile.mma needs a, b, c (and a_scale, b_scale for scaled atoms), got %u operands", n);
        return (rk_value){0};
    }
    rk_type t = ir_vtype(k, in[2]);
    rk_op *op = rk_emit(k, RK_OP_MMA, in, n, &t, 1);
    ir_arg_str(k, op, ir_key_op_id, op_id);
    if (opts) {
        ir_opt_int(k, op, "opsel_a", opts->opsel_a);
        ir_opt_int(k, op, "opsel_b", opts->opsel_b);
    }
    return ir_built(k, op);
}
rk_value rk_build_mma(rk_kernel *k, const char *op_id, rk_value a, rk_value b, rk_value c) {
    const rk_value in[] = {a, b, c};
    return rk_build_mma_arr(k, op_id, in, 3, NULL);
}

void rk_build_wgmma_wait_group(rk_kernel *k, int64_t n, const rk_value *acc, uint32_t n_acc, rk_value *out) {
    if (!ir_live(k)) return;
    if (n_acc > 64 || (n_acc && (!acc || !out))) {
        ir_fail(k, RK_ERR_INVALID, NULL, "tile.wgmma_wait_group: at most 64 accumulators, with acc and out arrays");
        return;
    }
    rk_type t[64];
    for (uint32_t i = 0; i < n_acc; i++) t[i] = ir_vtype(k, acc[i]);
    rk_op *op = rk_emit(k, RK_OP_WGMMA_WAIT_GROUP, acc, n_acc, t, n_acc);
    ir_arg_int(k, op, ir_key_n, n);
    ir_built_out(k, op, out, n_acc);
}

rk_op *rk_build_inline_asm(rk_kernel *k, const char *templ, const char *constraints, const rk_value *in,
                           uint32_t nin, const rk_type *out, uint32_t nout, bool sideeffect) {
    rk_op *op = rk_emit(k, RK_OP_INLINE_ASM, in, nin, out, nout);
    ir_arg_str(k, op, ir_key_template, templ);
    ir_arg_str(k, op, ir_key_constraints, constraints);
    ir_arg_bool(k, op, ir_key_sideeffect, sideeffect);
    return rk_op_check(k, op) ? op : NULL;
}

/* ---- by opcode ------------------------------------------------------------------------------------ */
rk_value rk_emit_convert(rk_kernel *k, rk_opcode code, rk_value a, rk_type to) {
    if (!ir_live(k)) return (rk_value){0};
    const rk_op_info *info = rk_op_info_of(code);
    if (code == RK_OP_INVALID || info->nin != 1 || info->nout != 1 || info->nreg) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_emit_convert: %s is not a one-operand, one-result op",
                rk_opcode_name(code));
        return (rk_value){0};
    }
    rk_op *op = rk_emit(k, code, &a, 1, &to, 1);
    if (ir_op_spec_key(code, ir_key_target)) ir_arg_type(k, op, ir_key_target, to);
    return ir_built(k, op);
}

void rk_emit_barrier(rk_kernel *k, rk_opcode code) {
    if (!ir_live(k)) return;
    const rk_op_info *info = rk_op_info_of(code);
    if (code == RK_OP_INVALID || info->nin != 0 || info->nout != 0 || info->nreg != 0) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_emit_barrier: %s takes operands or has results", rk_opcode_name(code));
        return;
    }
    ir_built_void(k, rk_emit(k, code, NULL, 0, NULL, 0));
}
