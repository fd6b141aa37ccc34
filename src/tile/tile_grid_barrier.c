/* rocke — the grid barrier of a cooperative kernel. Thread 0 of each block
 * reads the generation, counts the block's arrival (acq_rel) and, unless it
 * was the last, spins with acquire loads until the generation moves; the
 * last arrival puts the count back to 0 and then bumps the generation
 * (release), so the next barrier — in this launch or the next, with any grid
 * size — starts from a zero count. The block's other threads wait at block
 * barriers around it. Why not a single counter compared with (old / G + 1)·G:
 * that leaves the counter at a multiple of this launch's G, and the next
 * launch with another grid size would wait for a value it never reaches.
 * Layer: tile. */
#include "rocke/tile.h"

void rk_tile_grid_barrier(rk_kernel *k, rk_value tid, rk_value sync, rk_value at, rk_value blocks) {
    /* every thread's writes precede thread 0's release through the block barrier */
    rk_build_sync(k);
    rk_value zero = rk_const_i32(k, 0);
    rk_value first = rk_build_cmp(k, "eq", tid, zero);
    rk_if_begin(k, first);
    rk_build_fence(k, "device");
    rk_value one = rk_const_i32(k, 1);
    rk_value gen_at = rk_build_add(k, at, one);
    rk_value z64 = rk_const_i64(k, 0), one64 = rk_const_i64(k, 1);
    const rk_global_atomic_opts relaxed = {.ordering = "monotonic", .scope = "device"};
    const rk_global_atomic_opts acq_rel = {.ordering = "acq_rel", .scope = "device"};
    const rk_global_atomic_opts release = {.ordering = "release", .scope = "device"};
    /* the generation this barrier belongs to: read before arriving (the
     * acq_rel add keeps it there), so the last arrival cannot have moved it */
    rk_value gen = rk_build_global_atomic_ex(k, "or", sync, gen_at, z64, &relaxed);
    rk_value old = rk_build_global_atomic_ex(k, "add", sync, at, one64, &acq_rel);
    rk_value b64 = rk_build_sext(k, blocks, RK_T_I64);
    rk_value before = rk_build_sub(k, b64, one64);
    rk_value last = rk_build_cmp(k, "eq", old, before);
    rk_if_else_begin(k, last, 0, NULL, NULL);
    /* acquire every arrival, release them on with the bump: a fence rather
     * than the atomics' orderings alone, which LLVM 22's NVPTX drops (it
     * prints a relaxed atom for an acq_rel atomicrmw) */
    rk_build_fence(k, "device");
    rk_build_global_atomic_ex(k, "xchg", sync, at, z64, &relaxed);
    rk_build_global_atomic_ex(k, "add", sync, gen_at, one64, &release);
    rk_else(k, NULL, 0);
    rk_build_global_wait(k, "ne", sync, gen_at, gen);
    rk_if_end(k, NULL, 0);
    /* acquire for the block: what every other block released before arriving */
    rk_build_fence(k, "device");
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
}
