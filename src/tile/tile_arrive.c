/* rocke — "last block to arrive": the block-level handshake a one-kernel
 * cross-block reduction uses (GEMM split-K, split rows). Each block has
 * published its partials; it releases them, one thread adds 1 to a
 * counter in global memory, and every thread of the block learns whether
 * this block was the last of `arrivals`, which then (after an acquire) may
 * read everyone's partials. Nobody waits, so blocks need not be co-resident.
 * Layer: tile. */
#include "rocke/tile.h"

/* The arrivals before this block's (i32, every thread). */
static rk_value arrive(rk_kernel *k, rk_value tid, rk_value counters, rk_value at) {
    /* release the partials, then one thread counts the block's arrival */
    rk_build_fence(k, "device");
    rk_build_sync(k);
    uint32_t one_elem = 1;
    rk_value flag = rk_build_smem_alloc(k, RK_T_F32, &one_elem, 1);
    rk_value zero = rk_const_i32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", tid, zero);
    rk_if_begin(k, first);
    rk_value onef = rk_const_f32(k, 1.0f);
    rk_value old = rk_build_global_atomic(k, "fadd", counters, at, onef);
    rk_store_smem(k, flag, &zero, old);
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
    rk_value seen = rk_load_smem(k, flag, &zero, 1);
    /* acquire: the other blocks' partials are visible after this */
    rk_build_fence(k, "device");
    return rk_build_fptosi(k, seen, RK_T_I32);
}

rk_value rk_tile_arrive_last(rk_kernel *k, rk_value tid, rk_value counters, rk_value at, uint32_t arrivals) {
    rk_value seen_i = arrive(k, tid, counters, at);
    rk_value before = rk_const_i32(k, (int32_t)arrivals - 1);
    return rk_build_cmp(k, "eq", seen_i, before);
}

rk_value rk_tile_arrive_last_n(rk_kernel *k, rk_value tid, rk_value counters, rk_value at, rk_value arrivals) {
    rk_value seen_i = arrive(k, tid, counters, at);
    rk_value one = rk_const_i32(k, 1);
    rk_value before = rk_build_sub(k, arrivals, one);
    return rk_build_cmp(k, "eq", seen_i, before);
}
