/* rocke — a ring of TMA stages on mbarriers: one "full" barrier per stage,
 * armed by the issuing thread with expect-tx, completed by the boxes'
 * bytes, waited on by phase parity; optionally one "empty" barrier per
 * stage that the consumers arrive on to hand the stage back. Layer: tile. */
#include "rocke/tile_hopper.h"

void rk_tile_tma_ring_init(rk_kernel *k, rk_tile_tma_ring *r, uint32_t stages, uint32_t tx_bytes) {
    rk_tile_tma_ring_init_pair(k, r, stages, tx_bytes, 0);
}

void rk_tile_tma_ring_init_pair(rk_kernel *k, rk_tile_tma_ring *r, uint32_t stages, uint32_t tx_bytes,
                                uint32_t releases) {
    r->stages = stages;
    r->tx_bytes = tx_bytes;
    r->releases = releases;
    rk_smem_alloc_opts al = {.align = RK_SOME(16)};
    uint32_t n = stages;
    r->bars = rk_build_smem_alloc_ex(k, RK_T_I64, &n, 1, &al);
    if (releases) r->empty = rk_build_smem_alloc_ex(k, RK_T_I64, &n, 1, &al);
    rk_value tid = rk_build_thread_id(k, 0);
    rk_value zero = rk_const_i32(k, 0), one = rk_const_i32(k, 1);
    rk_value first = rk_build_cmp(k, "eq", tid, zero);
    rk_value rel = releases ? rk_const_i32(k, (int32_t)releases) : one;
    rk_if_begin(k, first);
    for (uint32_t s = 0; s < stages; s++) {
        rk_value si = rk_const_i32(k, (int32_t)s);
        rk_build_mbarrier_init(k, r->bars, si, one);
        if (releases) rk_build_mbarrier_init(k, r->empty, si, rel);
    }
    /* the initialised barriers must be seen by the async proxy (TMA's complete_tx) */
    rk_build_fence_proxy_async(k);
    rk_if_end(k, NULL, 0);
    rk_build_sync(k);
}

void rk_tile_tma_ring_expect(rk_kernel *k, const rk_tile_tma_ring *r, rk_value stage) {
    rk_value tx = rk_const_i32(k, (int32_t)r->tx_bytes);
    rk_build_mbarrier_arrive_expect_tx(k, r->bars, stage, tx);
}

void rk_tile_tma_box(rk_kernel *k, const rk_tile_tma_ring *r, rk_value map, rk_value dst, rk_value dst_elem,
                     rk_value stage, rk_value x, rk_value y) {
    rk_build_tma_load_2d(k, map, dst, dst_elem, r->bars, stage, x, y);
}

void rk_tile_tma_ring_wait(rk_kernel *k, const rk_tile_tma_ring *r, rk_value fill) {
    rk_value S = rk_const_i32(k, (int32_t)r->stages);
    rk_value stage = rk_build_umod(k, fill, S);
    rk_value round = rk_build_udiv(k, fill, S);
    rk_value one = rk_const_i32(k, 1);
    rk_value parity = rk_build_and(k, round, one);
    rk_build_mbarrier_wait(k, r->bars, stage, parity);
}

void rk_tile_tma_ring_release(rk_kernel *k, const rk_tile_tma_ring *r, rk_value fill) {
    rk_value S = rk_const_i32(k, (int32_t)r->stages);
    rk_value stage = rk_build_umod(k, fill, S);
    rk_build_mbarrier_arrive(k, r->empty, stage);
}

void rk_tile_tma_ring_release_peer(rk_kernel *k, const rk_tile_tma_ring *r, rk_value fill, rk_value rank) {
    rk_value S = rk_const_i32(k, (int32_t)r->stages);
    rk_value stage = rk_build_umod(k, fill, S);
    rk_build_mbarrier_arrive_cluster(k, r->empty, stage, rank);
}

void rk_tile_tma_ring_wait_free(rk_kernel *k, const rk_tile_tma_ring *r, rk_value fill) {
    rk_value S = rk_const_i32(k, (int32_t)r->stages);
    rk_value stage = rk_build_umod(k, fill, S);
    rk_value round = rk_build_udiv(k, fill, S);
    rk_value one = rk_const_i32(k, 1);
    rk_value prev = rk_build_xor(k, round, one);   /* the parity of round - 1 */
    rk_value parity = rk_build_and(k, prev, one);
    rk_build_mbarrier_wait(k, r->empty, stage, parity);
}
