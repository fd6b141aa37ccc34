/* rocke — access helpers over the typed builders: a global, LDS or buffer
 * load or store that picks the scalar or vector op from the types and sets
 * elem_type, lanes and natural alignment. Layer: ir. */
#include "ir_int.h"

static int64_t bytes_of(rk_kernel *k, rk_type t) { return (ir_tbits(k, t) + 7) / 8; }

/* ---- global memory ------------------------------------------------------------------------- */
rk_value rk_load_global(rk_kernel *k, rk_value ptr, rk_value idx, uint32_t vec) {
    if (!ir_live(k)) return (rk_value){0};
    rk_type pt = ir_vtype(k, ptr);
    if (ir_tkind(k, pt) != RK_TK_PTR) {
        ir_fail(k, RK_ERR_INVALID, NULL, "rk_load_global: operand 0 must be a pointer, got %s", rk_type_name(k, pt));
        return (rk_value){0};
    }
    rk_type et = ir_telem(k, pt);
    if (vec <= 1) {
        const rk_global_load_typed_opts o = {.elem_type = et, .align = RK_SOME(bytes_of(k, et))};
        return rk_build_global_load_typed_ex(k, ptr, idx, &o);
    }
    rk_type vt = rk_type_vec(k, et, vec);
    if (!rk_type_ok(vt)) {
        ir_fail(k, RK_ERR_INVALID, NULL, "memref.global_load_vN: %s", rk_error_message());
        return (rk_value){0};
    }
    const rk_global_load_vn_opts o = {.elem_type = et, .align = RK_SOME(bytes_of(k, vt))};
    return rk_build_global_load_vn_ex(k, ptr, idx, vec, &o);
}

void rk_store_global(rk_kernel *k, rk_value ptr, rk_value idx, rk_value val) {
    if (!ir_live(k)) return;
    rk_type vt = ir_vtype(k, val);
    if (ir_tkind(k, vt) == RK_TK_VEC) {
        const rk_global_store_vn_opts o = {.elem_type = ir_telem(k, vt), .vec = RK_SOME(ir_tcount(k, vt)),
                                           .align = RK_SOME(bytes_of(k, vt))};
        rk_build_global_store_vn_ex(k, ptr, idx, val, &o);
        return;
    }
    const rk_global_store_typed_opts o = {.elem_type = vt, .align = RK_SOME(bytes_of(k, vt))};
    rk_build_global_store_typed_ex(k, ptr, idx, val, &o);
}

/* ---- LDS ------------------------------------------------------------------------------------- */
rk_value rk_load_smem(rk_kernel *k, rk_value smem, const rk_value *idx, uint32_t vec) {
    if (!ir_live(k)) return (rk_value){0};
    if (vec <= 1) return rk_build_smem_load(k, smem, idx);
    const rk_smem_load_vn_opts o = {.elem_type = ir_telem(k, ir_vtype(k, smem))};
    return rk_build_smem_load_vn_ex(k, smem, idx, vec, &o);
}

void rk_store_smem(rk_kernel *k, rk_value smem, const rk_value *idx, rk_value val) {
    if (!ir_live(k)) return;
    rk_type et = ir_telem(k, ir_vtype(k, smem)), vt = ir_vtype(k, val);
    if (ir_tkind(k, vt) == RK_TK_VEC) {
        const rk_smem_store_vn_opts o = {.elem_type = et, .vec = RK_SOME(ir_tcount(k, vt)),
                                         .align = RK_SOME(bytes_of(k, vt))};
        rk_build_smem_store_vn_ex(k, smem, idx, val, &o);
        return;
    }
    const rk_smem_store_opts o = {.elem_type = et};
    rk_build_smem_store_ex(k, smem, idx, val, &o);
}

/* ---- buffer views ------------------------------------------------------------------------------ */
rk_value rk_load_buffer(rk_kernel *k, rk_value rsrc, rk_value voff, rk_value soff, rk_type elem, uint32_t vec) {
    if (!ir_live(k)) return (rk_value){0};
    if (vec <= 1) return rk_build_buffer_load(k, rsrc, voff, soff, elem);
    rk_type vt = rk_type_vec(k, elem, vec);
    uint32_t bits = ir_tbits(k, vt);
    if (!rk_type_ok(vt) || bits % 32) {
        ir_fail(k, RK_ERR_INVALID, NULL, "tile.buffer_load_vN: %u x %s is not a whole number of dwords", vec,
                rk_type_name(k, elem));
        return (rk_value){0};
    }
    return rk_build_buffer_load_vn(k, rsrc, voff, soff, bits / 32, elem);
}

void rk_store_buffer(rk_kernel *k, rk_value rsrc, rk_value voff, rk_value soff, rk_value val) {
    if (!ir_live(k)) return;
    rk_type vt = ir_vtype(k, val);
    if (ir_tkind(k, vt) == RK_TK_VEC) rk_build_buffer_store_vn(k, rsrc, voff, soff, val, ir_tbits(k, vt) / 32, ir_telem(k, vt));
    else rk_build_buffer_store(k, rsrc, voff, soff, val, vt);
}
